/* gst-qmetric: CAMBI (Contrast Aware Multiscale Banding Index), the stages.
 *
 * CAMBI as libvmaf 3.2.0 computes it (feature/cambi.c, its header cambi.h
 * and feature/luminance_tools.c), on the luma of one picture:
 *
 *   1. preprocess   luma -> 10-bit picture of the encoding size (nearest
 *                   neighbour when smaller than the input), then a 2x2
 *                   "anti-dithering" average when the encode had < 10 bits;
 *   2. spatial mask 1 where the 7x7 neighbourhood holds more than mask_index
 *                   "flat" pixels (equal to their right and lower neighbour);
 *   3. per scale s = 0..4 (each scale halves the previous one, rounding up):
 *        decimate     keep every other row and column (s > 0; also s = 0
 *                     with the high-resolution speed-up), picture and mask;
 *        mode filter  3-tap horizontal then vertical majority filter;
 *        c-values     for each masked pixel of value v, from the histogram
 *                     of the masked pixels of a window x window box around it:
 *                     max over d of w_d * p(v) * q / (p(v) + q) with
 *                     q = max(p(v + d), p(v - d)), d = 1..num_diffs, for the
 *                     d whose step is visible at v (luminance model);
 *        pooling      mean of the topk fraction of largest c-values;
 *   4. score        sum_s weight_s * pooled_s / window^2 (host side).
 *
 * Strides are in bytes.  Every stage is a natural GPU kernel boundary;
 * cambi.c runs them in that order.  Stage functions return nothing: their
 * inputs are checked once in init().
 */
#ifndef QM_CAMBI_H
#define QM_CAMBI_H

#include <stddef.h>
#include <stdint.h>

#include "metric.h"

#define QM_CAMBI_NUM_SCALES 5
#define QM_CAMBI_MAX_DIFFS 32  /* 1 << max_log_contrast, max_log_contrast <= 5 */

/* Constants of one CAMBI instance (options resolved, tables built). */
typedef struct QmCambiParams {
    int window;              /* odd box size of the c-value histograms */
    int num_diffs;           /* contrast steps 1 .. num_diffs (10-bit codes) */
    int weight[QM_CAMBI_MAX_DIFFS];   /* contrast weight of step d + 1 */
    /* Histogram band: only values in [band_lo, band_lo + band_n) are ever
     * looked up; pixels outside it are not counted. */
    int band_lo, band_n;
    /* active[v]: bit d set when step d + 1 is visible at 10-bit value v
     * (v <= tvi[d], and above the visibility luminance threshold);
     * entries 0 .. QM_CAMBI_MAX_VALUE. */
    const uint32_t *active;
    /* recip[n] = 1 / n as libvmaf's table holds it, n = 0 .. window^2 */
    const float *recip;
} QmCambiParams;

/* Largest 10-bit value the preprocessing can produce: 12- and 16-bit
 * samples are rounded, (4095 + 2) >> 2 = 1024. */
#define QM_CAMBI_MAX_VALUE 1024

/* ---- stage functions ---- */

/**
 * Stage 1: luma plane (uint8_t when bpc == 8, else uint16_t) -> 10-bit
 * picture dst (w x h).
 * xmap/ymap give the source column/row of each output column/row (nearest
 * neighbour), or are NULL when the sizes are equal.  anti_dither applies
 * the 2x2 average of encodes below 10 bits.  Returns the largest input
 * sample read, so that the caller can reject out-of-range input.
 */
typedef unsigned (*QmCambiPreprocessFn)(const void *src, ptrdiff_t src_stride,
                                        int bpc, const int *xmap,
                                        const int *ymap, uint16_t *dst,
                                        ptrdiff_t dst_stride, int w, int h,
                                        int anti_dither);

/**
 * Stage 2: spatial mask (1/0) of picture img (w x h).  scratch holds
 * qm_cambi_mask_scratch_size(w) bytes.
 */
typedef void (*QmCambiMaskFn)(const uint16_t *img, ptrdiff_t img_stride,
                              int w, int h, unsigned mask_index,
                              uint8_t *mask, ptrdiff_t mask_stride,
                              uint8_t *scratch);

/** Stage 3: dst (w x h) = every other row/column of src (2w x 2h or one
 *  less); one function per sample type. */
typedef void (*QmCambiDecimate16Fn)(const uint16_t *src, ptrdiff_t src_stride,
                                    uint16_t *dst, ptrdiff_t dst_stride,
                                    int w, int h);
typedef void (*QmCambiDecimate8Fn)(const uint8_t *src, ptrdiff_t src_stride,
                                   uint8_t *dst, ptrdiff_t dst_stride,
                                   int w, int h);

/** Stage 4: 3x3 separable mode filter src -> dst (w x h).  scratch holds
 *  3 * w samples. */
typedef void (*QmCambiModeFn)(const uint16_t *src, ptrdiff_t src_stride,
                              uint16_t *dst, ptrdiff_t dst_stride, int w,
                              int h, uint16_t *scratch);

/* Exact sums of c-values.  A c-value is 0 or the float w p0 q / (p0 + q)
 * with counts p0, q >= 1, weight w <= 9 and p0 + q <= window^2 <= 4225:
 * at least 0.5 (p0 = q = 1; every other pair gives at least 2/3) and below
 * 9 * 4225 / 4 < 2^14.  Floats in [0.5, 2^14) are multiples of 2^-24, so
 * c * 2^24 is an integer below 2^38 and the sum of any of the c-values of a
 * picture (at most 7680^2 of them: below 7680^2 * 9507 * 2^24 < 2^63.1) is
 * exact in a uint64 with 24 fractional bits.  Pooling sums that way: its result does not depend on
 * the order of the additions (libvmaf's own order, after its quickselect,
 * is arbitrary), which lets the CUDA twin reduce in parallel and still
 * agree to the bit.  A double sum of at most 2^12 c-values (below 2^26)
 * or of one row of up to 7680 (below 2^27) is exact too (53 bits hold
 * multiples of 2^-24 up to 2^29), so loops may add in double and convert
 * once per row or block. */
#define QM_CAMBI_FIX_ONE 16777216.0  /* 2^24 */
#define QM_CAMBI_EXACT_RUN 4096      /* c-values a double sum keeps exact */

/** An exact double sum of c-values in units of 2^-24. */
static inline uint64_t qm_cambi_fix(double exact_sum)
{
    return (uint64_t)(exact_sum * QM_CAMBI_FIX_ONE);
}

/** The mean of k c-values whose exact sum is `sum` (units of 2^-24). */
static inline double qm_cambi_fix_mean(uint64_t sum, uint64_t k)
{
    return (double)sum / QM_CAMBI_FIX_ONE / (double)k;
}

/** How many c-values of n the pooling averages: libvmaf spatial_pooling's
 *  (int)(topk * n), clipped to [1, n]. */
uint64_t qm_cambi_topk_count(uint64_t n, double topk);

/* What the c-value stage learns on the way: most c-values are 0, and when
 * no more than topk of them are not, pooling needs nothing else. */
typedef struct QmCambiCStats {
    uint64_t nonzero;  /* c-values > 0 */
    uint64_t sum;      /* of all c-values, exact, in units of 2^-24 */
} QmCambiCStats;

/**
 * Stage 5: c-value of every pixel (0 where the mask is 0) into c
 * (w x h, rows of w floats), and their statistics.  scratch holds
 * qm_cambi_c_scratch_size(p, w) bytes.
 */
typedef void (*QmCambiCValuesFn)(const uint16_t *img, ptrdiff_t img_stride,
                                 const uint8_t *mask, ptrdiff_t mask_stride,
                                 int w, int h, const QmCambiParams *p,
                                 float *c, QmCambiCStats *st, void *scratch);

/**
 * Stage 6: mean of the k largest of the n c-values, k =
 * qm_cambi_topk_count(n, topk), summed exactly (see QM_CAMBI_FIX_ONE).
 * When more than k are not 0, a radix select on the bits of the
 * (non-negative) floats finds them, 11 + 10 + 10 bits; it reorders c.
 */
#define QM_CAMBI_POOL_BINS 2048  /* bits 30..20 of a non-negative float */
typedef struct QmCambiPoolScratch {
    uint32_t count[4 * QM_CAMBI_POOL_BINS];
} QmCambiPoolScratch;
typedef double (*QmCambiPoolFn)(float *c, size_t n, const QmCambiCStats *st,
                                double topk, QmCambiPoolScratch *scratch);

unsigned qm_cambi_preprocess(const void *src, ptrdiff_t src_stride, int bpc,
                             const int *xmap, const int *ymap, uint16_t *dst,
                             ptrdiff_t dst_stride, int w, int h,
                             int anti_dither);
size_t qm_cambi_mask_scratch_size(int w);
void qm_cambi_spatial_mask(const uint16_t *img, ptrdiff_t img_stride, int w,
                           int h, unsigned mask_index, uint8_t *mask,
                           ptrdiff_t mask_stride, uint8_t *scratch);
void qm_cambi_decimate16(const uint16_t *src, ptrdiff_t src_stride,
                         uint16_t *dst, ptrdiff_t dst_stride, int w, int h);
void qm_cambi_decimate8(const uint8_t *src, ptrdiff_t src_stride,
                        uint8_t *dst, ptrdiff_t dst_stride, int w, int h);
void qm_cambi_filter_mode(const uint16_t *src, ptrdiff_t src_stride,
                          uint16_t *dst, ptrdiff_t dst_stride, int w, int h,
                          uint16_t *scratch);
size_t qm_cambi_c_scratch_size(const QmCambiParams *p, int w);
void qm_cambi_c_values(const uint16_t *img, ptrdiff_t img_stride,
                       const uint8_t *mask, ptrdiff_t mask_stride, int w,
                       int h, const QmCambiParams *p, float *c,
                       QmCambiCStats *st, void *scratch);
double qm_cambi_pool_topk(float *c, size_t n, const QmCambiCStats *st,
                          double topk, QmCambiPoolScratch *scratch);

/* ---- host-side helpers shared by the backends ---- */

/* Everything an instance resolves from its options and the picture size
 * (cambi.c's init; the CUDA twin starts from the same).  par points into
 * active[] and recip: do not move the struct once configured. */
typedef struct QmCambiConfig {
    int in_w, in_h, bpc;   /* the input luma */
    int w, h;              /* encoding size: the picture analysed */
    int anti_dither;       /* the encode had fewer than 10 bits */
    int hrs;               /* decimate once more before scale 0 */
    double topk, max_val;
    unsigned mask_index;
    int *xmap, *ymap;      /* nearest-neighbour maps (source column/row of
                              each output one); NULL when the sizes agree */
    float *recip;          /* window^2 + 1 entries */
    QmCambiParams par;
    uint32_t active[QM_CAMBI_MAX_VALUE + 1];
} QmCambiConfig;

/** Resolve the options of cfg: 0, QM_EINVAL (an option out of range),
 *  QM_ENOTSUP (a size libvmaf does not define) or QM_ENOMEM.  On error
 *  nothing is left to free. */
int qm_cambi_configure(QmCambiConfig *c, const QmMetricConfig *cfg);
void qm_cambi_config_free(QmCambiConfig *c);

/** ceil(n / 2^k): a side after k decimations. */
int qm_cambi_halve(int n, int k);

/** Threshold of the spatial mask for an encode of w x h. */
unsigned qm_cambi_mask_index(int w, int h);

/** The final score from the pooled c-values of the 5 scales. */
double qm_cambi_score(const double pooled[QM_CAMBI_NUM_SCALES], int window,
                      double max_val);

#endif /* QM_CAMBI_H */
