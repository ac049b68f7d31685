/* qmetric-compare: finding a constant frame offset between two inputs.
 *
 * Plain C, no GStreamer: the search works on small luma pictures that
 * alignrun.c decodes, and tests/align_test.c feeds it synthetic ones.
 *
 * Offset convention: offset d means that distorted frame i shows reference
 * frame i + d.  d > 0: the distorted video lacks the reference's first d
 * frames (apply with --frame_skip_ref d); d < 0: it has -d extra frames in
 * front (--frame_skip_dist -d).
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#ifndef QMC_ALIGN_H
#define QMC_ALIGN_H

#include <stddef.h>
#include <stdint.h>

/* The smallest window the search accepts: fewer frames per candidate make
 * the comparison of offsets a matter of chance. */
#define QMC_ALIGN_MIN_WINDOW 8
/* --align auto applies an offset only at this confidence or above: the best
 * offset's window MSE at most half the runner-up's (3.01 dB apart). */
#define QMC_ALIGN_MIN_CONFIDENCE 0.5
/* Below this spread between the best offset and the median one (dB), the
 * content barely changes from frame to frame: no offset stands out. */
#define QMC_ALIGN_STATIC_DB 1.0
/* Window PSNR cap: identical windows have no finite PSNR; their MSE is
 * floored so that 1 - MSE ratios stay defined. */
#define QMC_ALIGN_PSNR_CAP 100.0

/* A sequence of 8-bit luma pictures of one size, rows packed. */
typedef struct {
    int width, height;
    int n;                       /* frames */
    const uint8_t *const *frame; /* n pointers to width * height bytes */
} QmcLumaSeq;

typedef struct {
    int offset;                  /* the best candidate (see the convention above) */
    double confidence;           /* 1 - MSE(best) / MSE(second best), in [0, 1] */
    int second_offset;           /* the runner-up */
    double psnr_best, psnr_second, psnr_median; /* window PSNR, dB (capped) */
    int is_static;               /* psnr_best - psnr_median < QMC_ALIGN_STATIC_DB */
    int max_offset;              /* candidates were -max_offset..max_offset */
    int narrowed;                /* max_offset is less than asked: the inputs are short */
    int window;                  /* frame pairs compared per candidate */
    double *psnr;                /* 2 * max_offset + 1 values, candidate d at [d + max_offset] */
} QmcAlignResult;

/**
 * Compare ref and dist at every offset d in [-max_offset, max_offset]:
 * candidate d pairs (ref[i + d], dist[i]) for d >= 0 and (ref[i], dist[i - d])
 * for d < 0, i = 0 .. window - 1, the same number of pairs for every
 * candidate.  The window PSNR of a candidate is 10 log10(255^2 / MSE) over
 * all its pairs' pixels, capped at QMC_ALIGN_PSNR_CAP.  The best candidate
 * has the highest PSNR (ties: the smallest |d|, then the negative one).
 *
 * Short inputs narrow the search: max_offset becomes at most
 * min(ref->n, dist->n) - QMC_ALIGN_MIN_WINDOW (res->narrowed says so), and
 * window at most min(ref->n, dist->n) - max_offset.
 *
 * Returns 0, or -1 with a sentence in err when the inputs are too short for
 * one offset and QMC_ALIGN_MIN_WINDOW pairs, or their sizes differ.
 * res->psnr is malloc'd: free it with qmc_align_result_clear().
 */
int qmc_align_detect(const QmcLumaSeq *ref, const QmcLumaSeq *dist, int max_offset, int window,
                     QmcAlignResult *res, char *err, size_t err_len);
void qmc_align_result_clear(QmcAlignResult *res);

/**
 * Area-average an 8-bit plane (sw x sh, stride in bytes) down to dw x dh
 * (dw <= sw, dh <= sh): each output pixel is the rounded mean of the source
 * pixels in its cell [x * sw / dw, (x + 1) * sw / dw) x [y * sh / dh, ...).
 * Inputs of two sizes land on one grid this way.
 */
void qmc_align_downscale(const uint8_t *src, ptrdiff_t stride, int sw, int sh, uint8_t *dst,
                         int dw, int dh);

/**
 * The grid both inputs are compared on: an eighth of the reference's width,
 * but at least 64 pixels, and never more than either input; the height
 * keeps the reference's aspect ratio.
 */
void qmc_align_grid(int rw, int rh, int dw, int dh, int *gw, int *gh);

#endif
