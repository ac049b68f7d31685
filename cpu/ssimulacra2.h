/* gst-qmetric: SSIMULACRA2 stages, shared by the C reference
 * (cpu/ssimulacra2.c) and its CUDA twin (cuda/ssimulacra2.cu).
 *
 *   1. per pixel: YCbCr -> 16-bit R'G'B' (qm_ssimu2_rgb16()) -> linear light
 *      (qm_ssimu2_linear(), a 64 Ki-entry table on the CPU);
 *   2. six scales, the first at full size, each next one the 2x2 average of
 *      the previous one in linear light (qm_ssimu2_avg4()), while the
 *      previous one is at least 8x8;
 *   3. per scale: XYB (qm_ssimu2_xyb()), five blurred planes per channel
 *      (the two pictures, their squares and their product; recursive
 *      Gaussian, horizontal then vertical), then per pixel 1 - SSIM' and
 *      the edge ratio, pooled per channel as a mean and a 4-norm
 *      (QmSsimu2Sums, in double, in raster order);
 *   4. host side: qm_ssimu2_score(), the weighted sum of the 108 norms and
 *      the published final mapping.
 * The arithmetic of steps 1-3 is cpu/ssimulacra2_pixel.h.
 */
#ifndef QM_SSIMULACRA2_H
#define QM_SSIMULACRA2_H

#include <stddef.h>
#include <stdint.h>

#include "metric.h"
#include "ssimulacra2_pixel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QM_SSIMU2_SCALES 6

/* Options (indices into desc->options) and their choices. */
enum { QM_SSIMU2_OPT_MATRIX = 0, QM_SSIMU2_OPT_RANGE };
enum {
    QM_SSIMU2_MATRIX_AUTO = 0, QM_SSIMU2_MATRIX_BT709, QM_SSIMU2_MATRIX_BT601,
    QM_SSIMU2_MATRIX_BT2020, QM_SSIMU2_MATRIX_SMPTE240M, QM_SSIMU2_MATRIX_FCC,
};
enum { QM_SSIMU2_RANGE_AUTO = 0, QM_SSIMU2_RANGE_LIMITED, QM_SSIMU2_RANGE_FULL };

/* The conversion of a picture of bpc bits and colorimetry c: the options'
 * matrix and range where they name one, else c's, else BT.709 limited
 * range. */
void qm_ssimu2_setup_conv(const QmOptValues *opt, int bpc, QmColor c,
                          QmSsimu2Conv *conv);

/* The conversion of a bit depth for a matrix's Kr, Kb and a range
 * (full: H.273's (2^bpc - 1) scale, chroma centred on 2^(bpc - 1)). */
void qm_ssimu2_conv_init(QmSsimu2Conv *cv, int bpc, double kr, double kb,
                         int full_range);

/* Sizes of the scales computed for a w x h picture; returns their number
 * (1 .. QM_SSIMU2_SCALES): a scale is computed when the previous one is at
 * least 8x8 (the reference's test), each ceil(previous / 2). */
int qm_ssimu2_scales(int w, int h, int sw[QM_SSIMU2_SCALES],
                     int sh[QM_SSIMU2_SCALES]);

/* Stage 1 for one luma row of w pixels: rgb[3x + c] = channel c of pixel x.
 * y is the luma row, u and v the chroma rows belonging to it (uint8_t
 * samples at 8 bits, else uint16_t), chroma column of x: min(x >> ss_x,
 * cw - 1) (cw: the stored chroma width; the min() only matters for callers
 * that pass a smaller one).  tmp: 3 x w scratch. */
void qm_ssimu2_rgb16_row(const void *y, const void *u, const void *v, int w,
                         int bpc, int ss_x, int cw, const QmSsimu2Conv *cv,
                         int32_t *tmp, uint16_t *rgb);

/* Per scale and channel (X, Y, B): the sums over the pixels of d, d^4 (d =
 * max(1 - SSIM', 0)), a, a^4, l, l^4 (a = max(e, 0), l = max(-e, 0), e the
 * edge ratio less 1), in raster order. */
typedef struct QmSsimu2Sums {
    double v[QM_SSIMU2_SCALES][3][6];
} QmSsimu2Sums;

/* The score from the sums of n_scales scales of the given sizes. */
double qm_ssimu2_score(const QmSsimu2Sums *s, int n_scales,
                       const int sw[QM_SSIMU2_SCALES],
                       const int sh[QM_SSIMU2_SCALES]);

#ifdef __cplusplus
}
#endif
#endif /* QM_SSIMULACRA2_H */
