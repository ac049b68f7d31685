/* gst-qmetric: SSIM as FFmpeg 5.1's `ssim` filter (libavfilter/vf_ssim.c,
 * the x264 approximation) computes it: the geometry and the stages shared
 * by the C reference (cpu/ssim_ffmpeg.c) and its CUDA twin
 * (cuda/ssim_ffmpeg.cu).
 *
 * Per plane of pw x ph samples (chroma ceil-sized, as FFmpeg sizes them),
 * bw = pw / 4 by bh = ph / 4 blocks of 4x4 samples (a remainder of fewer
 * than 4 columns or rows is not read):
 *   block sums      s1 = sum a, s2 = sum b, ss = sum a^2 + b^2, s12 =
 *                   sum a b, exact integers;
 *   windows         8x8 samples on a 4-sample grid: window (i, y),
 *                   0 <= i < bw - 1, 1 <= y < bh, adds the sums of blocks
 *                   i, i + 1 of block rows y - 1 and y; its value is the
 *                   float of qm_ssim_ffmpeg_window();
 *   a row's sum     qm_ssim_ffmpeg_row(): FFmpeg's x86 order at 8 bits
 *                   (four double lanes), a float sum at higher depths;
 *   the plane       the rows' sums added in double, in row order, divided
 *                   by (bw - 1) (bh - 1);
 *   All             sum of the planes' values weighted by their share of
 *                   the samples, in plane order.
 * Every plane needs bw, bh >= 2 (8x8 samples); the metric refuses smaller
 * input (FFmpeg prints nan there).
 */
#ifndef QM_SSIM_FFMPEG_H
#define QM_SSIM_FFMPEG_H

#include <stdint.h>

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { QM_SSIM_FFMPEG_Y, QM_SSIM_FFMPEG_U, QM_SSIM_FFMPEG_V, QM_SSIM_FFMPEG_ALL };

/* Everything a frame's computation needs (plain values: the CUDA kernels
 * take it by value). */
typedef struct QmSsimFfGeom {
    int bpc, nplanes;
    int pw[3], ph[3];   /* plane sizes */
    int bw[3], bh[3];   /* 4x4 blocks per row and column */
    int64_t c1, c2;     /* the constants of qm_ssim_ffmpeg_consts() */
    double coef[3];     /* weight of each plane in All */
} QmSsimFfGeom;

/**
 * The geometry of an instance: 0, or QM_ENOTSUP for a bit depth outside
 * 8..16 or a plane smaller than 8x8 samples.
 */
int qm_ssim_ffmpeg_setup(QmSsimFfGeom *g, int w, int h, int bpc, QmChroma chroma);

/**
 * The features of a frame from the sums of each plane's rows (sum[p], in
 * row order from 0.0): what compute() and the twin's collect() write.
 */
void qm_ssim_ffmpeg_rows(const QmSsimFfGeom *g, const double *sum, QmRows *out);

#ifdef __cplusplus
}
#endif
#endif /* QM_SSIM_FFMPEG_H */
