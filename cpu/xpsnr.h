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

/* ---- stages: the C reference (cpu/xpsnr.c) and its SIMD twins
 *      (cpu/x86/xpsnr_<isa>.c), chosen once by qm_xpsnr_dsp_init() ----
 *
 * Every stage returns an exact integer sum, so a twin gives the C stage's
 * value bit for bit (tests/checkasm/xpsnr.c); the twin of the CUDA backend
 * runs the same per-sample arithmetic of xpsnr_block.h.  Pictures' strides
 * are in bytes; the int16_t luma planes (the filter's view of the
 * reference, qm_xpsnr_s16()) have rows of `stride` elements.  bpc is the
 * input's bit depth: below 16 every sample lies in [0, 2^bpc), at 16 a luma
 * sample is any int16_t; the C stages hold for any values, the twins use
 * narrower lanes where bpc allows. */

/**
 * Sum of (a - b)^2 over a w x h rectangle: uint8_t samples when bpc == 8,
 * else uint16_t.
 */
typedef uint64_t (*QmXpsnrSseFn)(const void *a, ptrdiff_t a_stride, const void *b,
                                 ptrdiff_t b_stride, int w, int h, int bpc);

/**
 * Spatial activity of w x h samples (pictures up to 2048x1152): sum of
 * |3x3 high-pass| (qm_xpsnr_hp3()) over the samples c[y stride + x],
 * 0 <= x < w, 0 <= y < h; the row and column around them are read.
 */
typedef uint64_t (*QmXpsnrHpFn)(const int16_t *c, ptrdiff_t stride, int w, int h,
                                int bpc);

/**
 * Temporal activity of w x h samples, without the factor 2: sum of
 * |c - m1| (m2 NULL) or of |c - 2 m1 + m2|, the three planes sharing the
 * stride.
 */
typedef uint64_t (*QmXpsnrTempFn)(const int16_t *c, const int16_t *m1, const int16_t *m2,
                                  ptrdiff_t stride, int w, int h, int bpc);

/**
 * Spatial activity above 2048x1152: sum of |high-pass| (qm_xpsnr_hpds())
 * of n x rows 2x2 groups, the first at c; group (i, j) covers columns
 * 2i, 2i + 1 of rows 2j, 2j + 1, and rows 2j - 2 .. 2j + 3, columns
 * 2i - 2 .. 2i + 3 around it are read.  Any int16_t samples.
 */
typedef uint64_t (*QmXpsnrHpdsFn)(const int16_t *c, ptrdiff_t stride, int n, int rows);

/**
 * Temporal activity above 2048x1152, without the factor 2: over the same
 * n x rows groups, sum of |S(c) - S(m1)| (m2 NULL) or |S(c) - 2 S(m1) +
 * S(m2)|, S the sum of a group's 4 samples.  Any int16_t samples.
 */
typedef uint64_t (*QmXpsnrTempdsFn)(const int16_t *c, const int16_t *m1, const int16_t *m2,
                                    ptrdiff_t stride, int n, int rows);

uint64_t qm_xpsnr_sse_c(const void *a, ptrdiff_t a_stride, const void *b,
                        ptrdiff_t b_stride, int w, int h, int bpc);
uint64_t qm_xpsnr_hp_c(const int16_t *c, ptrdiff_t stride, int w, int h, int bpc);
uint64_t qm_xpsnr_temp_c(const int16_t *c, const int16_t *m1, const int16_t *m2,
                         ptrdiff_t stride, int w, int h, int bpc);
uint64_t qm_xpsnr_hpds_c(const int16_t *c, ptrdiff_t stride, int n, int rows);
uint64_t qm_xpsnr_tempds_c(const int16_t *c, const int16_t *m1, const int16_t *m2,
                           ptrdiff_t stride, int n, int rows);

/** The stages one CPU instance runs (dav1d's dsp-init pattern). */
typedef struct QmXpsnrDsp {
    QmXpsnrSseFn sse;
    QmXpsnrHpFn hp;
    QmXpsnrTempFn temp;
    QmXpsnrHpdsFn hpds;
    QmXpsnrTempdsFn tempds;
} QmXpsnrDsp;

/**
 * Fill *dsp with the C stages, then with the twins of every level in
 * `flags` (QM_CPU_* bits, cpu.h) that this build has.  The metric passes
 * qm_cpu_flags(); tests pass each level in turn (0: C only).
 */
void qm_xpsnr_dsp_init(QmXpsnrDsp *dsp, unsigned flags);
/* The twins' overrides (cpu/x86/xpsnr_<isa>.c), x86-64 builds only. */
void qm_xpsnr_dsp_init_avx2(QmXpsnrDsp *dsp);
void qm_xpsnr_dsp_init_avx512(QmXpsnrDsp *dsp);

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
