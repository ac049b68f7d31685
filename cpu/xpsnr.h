/* gst-qmetric: XPSNR (Fraunhofer HHI's extended perceptually weighted PSNR)
 * as FFmpeg n7.1's `xpsnr` filter computes it (libavfilter/vf_xpsnr.c):
 * the geometry, the stages and the per-frame and pooled values, shared by
 * the C reference (cpu/xpsnr.c) and its CUDA twin (cuda/xpsnr.cu).
 *
 * W x H luma, d bits, peak = 2^d - 1; all weights come from the reference.
 *
 *   b    = 4 floor(32 sqrt(W H / (3840 2160)) + 1/2)     luma block size
 *   per luma block (raster order, the last column/row what is left):
 *     SSE    exact integer sum of (ref - dist)^2
 *     sa     sum of |12 c - 2 (N + S + E + W) - (NE + NW + SE + SW)| over
 *            the block's samples, the picture's outermost row/column left
 *            out (above 2048x1152: a 32-sample high-pass of 2x2 groups,
 *            a 2-sample margin, 0 when the active width is 12 or less)
 *     ta     sum of 2 |c - p1| (below 32 fps, integer rate) or
 *            2 |c - 2 p1 + p2| (from 32 fps), p1, p2 the previous reference
 *            pictures, all zero before the first (2x2 group sums above
 *            2048x1152)
 *     a      = sa / active samples + ta / block samples, at least 2^(d-6)
 *     w      = 1 / sqrt(a * a)  (1 for a block with no active sample)
 *   weights smoothed in place in raster order when W H <= 640 x 480
 *   WSSE_Y = floor(A sum_blocks SSE w + 1/2),
 *            A = sqrt(16 2^(2d-9) / sqrt(max(1e-5, W H / (3840 2160))))
 *   chroma: blocks of (b Wc / W) x (b Hc / H) samples, the weight of the
 *           luma block with the same raster index, WSSE_C the same way
 *   XPSNR  = 10 log10(Wc Hc peak^2 / sqrt(WSSE)^2) per plane, inf for 0
 *   b < 4 (under 2025 luma samples): WSSE = plain SSE
 *
 * Chroma planes are ceil(W / 2) (x ceil(H / 2)) samples and used whole, as
 * FFmpeg sizes them (qm_plane_size_full()).  Samples enter the activity as
 * FFmpeg's int16_t buffers hold them (a 16-bit sample above 32767 is
 * negative there), the SSE as unsigned values.  Pooled (FFmpeg's closing
 * line): S = sum over frames of sqrt(WSSE), N frames; S >= N:
 * 10 log10(Wc Hc peak^2 / (S / N)^2), else the mean of the frames' values.
 */
#ifndef QM_XPSNR_H
#define QM_XPSNR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The integer frame rate from which the temporal term is second-order
 * (vf_xpsnr.c: `if (int_frame_rate < 32)` first-order). */
#define QM_XPSNR_SECOND_ORDER_FPS 32

/* Everything a frame's computation needs, fixed by the geometry, the bit
 * depth and the frame rate (plain values: passed to the CUDA kernels). */
typedef struct QmXpsnrGeom {
    int w, h, bpc, nplanes;
    int pw[3], ph[3];       /* plane sizes; chroma ceil-sized */
    int b;                  /* luma block size; 0: plain SSE (b < 4) */
    int ds;                 /* 1, or 2 above 2048x1152 (2x2 groups) */
    int wblk, hblk, nblk;   /* luma block grid */
    int bx, by;             /* chroma block size */
    int second_order;       /* temporal term: 0 first-order, 1 second */
    int smooth;             /* weight smoothing (W H <= 640 x 480) */
    double avg_act;         /* A */
    double floor;           /* 2^(d-6), the least activity */
    uint64_t num[3];        /* Wc Hc peak^2 per plane */
} QmXpsnrGeom;

/**
 * The geometry of an instance: 0, or QM_ENOTSUP for what FFmpeg's filter
 * cannot compute either (pictures above 2048x1152 with an odd side: its
 * 2x2 filters read outside the picture there), or for a bit depth outside
 * 8..16.  fps: the integer frame rate.
 */
int qm_xpsnr_setup(QmXpsnrGeom *g, int w, int h, int bpc, QmChroma chroma, int fps);

/** The integer frame rate an instance with options o uses. */
int qm_xpsnr_fps(const QmOptValues *o);

/* ---- stages of the C reference (cpu/xpsnr.c; the twin runs the same
 *      arithmetic of xpsnr_block.h per sample) ---- */

/**
 * Sum of |3x3 high-pass| over the n samples row[0 .. n-1] of an int16_t
 * plane with `stride` elements per row: row[-1], row[n] and the rows above
 * and below are read.  Exact (|each term| < 2^20).
 */
uint64_t qm_xpsnr_hp_row_c(const int16_t *row, ptrdiff_t stride, int n);

/**
 * Temporal activity of n samples, without the factor 2: sum of |c - m1|
 * (m2 NULL) or of |c - 2 m1 + m2|.
 */
uint64_t qm_xpsnr_temp_row_c(const int16_t *c, const int16_t *m1,
                             const int16_t *m2, int n);

/** Per-block values a frame's weighted SSE is made of. */
typedef struct QmXpsnrBlocks {
    uint64_t *sse[3];   /* per block and plane (chroma blocks by index) */
    uint64_t *sa, *ta;  /* luma activity sums (ta with its factor 2) */
    double *w;          /* weights, nblk */
} QmXpsnrBlocks;

/**
 * Weights (with smoothing), the weighted sums and the integer WSSE of each
 * plane, from the per-block sums: the one place both backends turn
 * integers into the doubles FFmpeg's filter forms (cuda/xpsnr.cu does the
 * same steps with the functions of xpsnr_block.h).
 */
void qm_xpsnr_finish(const QmXpsnrGeom *g, QmXpsnrBlocks *bk, uint64_t wsse[3]);

/** XPSNR of one plane from its WSSE (inf for 0). */
double qm_xpsnr_db(uint64_t wsse, uint64_t num);

#ifdef __cplusplus
}
#endif
#endif /* QM_XPSNR_H */
