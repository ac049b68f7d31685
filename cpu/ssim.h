/* gst-qmetric: stages of float SSIM and float MS-SSIM (libvmaf 3.2.0's
 * "float_ssim" and "float_ms_ssim", built on Tom Distler's IQA library).
 *
 * Both metrics run the same single-scale SSIM on luma converted to float;
 * they differ in how the picture is brought to the scale(s) SSIM sees:
 *
 *   float_ssim     one scale; pictures whose smaller side is >= 384 are first
 *                  reduced by an integer factor (box filter + decimation);
 *   float_ms_ssim  five scales, each the previous one low-passed with a 9x9
 *                  filter and decimated by 2; the per-scale luminance,
 *                  contrast and structure means are combined with Wang's
 *                  exponents.
 *
 * The pipeline, in the stages a CUDA twin implements one kernel each:
 *
 *   1. to_float    luma samples -> float, 10/12/16-bit scaled to 0..255
 *   2. decimate    2-D filter evaluated every `factor` samples, mirrored
 *                  borders (box filter for SSIM, 9x9 low-pass for MS-SSIM)
 *   3. hfilter     horizontal 11-tap Gaussian of ref, dis, ref^2, dis^2,
 *                  ref*dis over the "valid" columns (w - 10 of them)
 *   4. vfilter     vertical 11-tap Gaussian of those five planes over the
 *                  valid rows (h - 10), the per-pixel l, c, s terms and
 *                  their per-row sums
 *   5. host        qm_ssim_pool(): per-row sums -> means (as float, like
 *                  libvmaf); qm_ms_ssim_combine() for MS-SSIM.
 *
 * Arithmetic follows the reference exactly: every filter tap is a float
 * product accumulated in double and each filter output is rounded to float;
 * the per-pixel terms mix float and double as the reference does (see
 * ssim_common.c).  Only the order of the final sums differs (per row, then
 * rows), which moves results by far less than a float ulp of the means.
 *
 * Strides are in bytes; planes are float.
 */
#ifndef QM_SSIM_H
#define QM_SSIM_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "qm_hd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The Gaussian window: 11 taps (libvmaf iqa/ssim_tools.h, GAUSSIAN_LEN);
 * the valid region of a w x h picture is (w - 10) x (h - 10). */
#define QM_SSIM_WIN 11
#define QM_SSIM_WIN_R 5

/* float_ms_ssim's number of scales (libvmaf iqa/ssim_tools.h, SCALES). */
#define QM_MS_SSIM_SCALES 5

/* The five filtered planes of stage 3/4, index order below. */
enum { QM_SSIM_MU_R, QM_SSIM_MU_D, QM_SSIM_RR, QM_SSIM_DD, QM_SSIM_RD,
       QM_SSIM_NPLANES };

/* Horizontally filtered planes.  Row r of the picture lives in slot
 * r % rows, so that a CPU can keep a ring of a few rows while a GPU uses
 * rows >= h (no wrap). */
typedef struct QmSsimPlanes {
    float *p[QM_SSIM_NPLANES];
    ptrdiff_t stride;  /* bytes, same for all five */
    int rows;
} QmSsimPlanes;

/* Sums over one row of the valid region of the per-pixel terms. */
typedef struct QmSsimRowSums {
    double ssim;  /* l * c * s */
    double l, c, s;
} QmSsimRowSums;

/* Means over the valid region, as float like libvmaf (_iqa_ssim returns
 * float and passes its l/c/s means as float). */
typedef struct QmSsimScore {
    float ssim, l, c, s;
} QmSsimScore;

/* A plane read by stages 2 and 3: float samples (bpc == 0), or the
 * picture's luma samples (uint8_t when bpc == 8, else uint16_t), which the
 * stage converts row by row exactly as stage 1 does.  Reading the samples
 * directly spares the CPU a full-size float copy of each picture; a GPU
 * may as well run stage 1 first and pass float planes. */
typedef struct QmSsimSrc {
    const void *data;
    ptrdiff_t stride;  /* bytes */
    int bpc;           /* 0: float */
} QmSsimSrc;

/* Stage 1: w x h luma samples (uint8_t when bpc == 8, else uint16_t)
 * -> float, scaled by 2^(8 - bpc). */
typedef void (*QmSsimToFloatFn)(float *dst, ptrdiff_t dst_stride,
                                const void *src, ptrdiff_t src_stride,
                                int w, int h, int bpc);

/* Stage 2: dst(x, y) = sum over the taps of kernel(v, u) * src(f x + u,
 * f y + v), u, v in -(taps/2) .. taps - 1 - taps/2, src mirrored at the
 * borders with the edge sample repeated (index -1 reads 0, w reads w - 1).
 * kernel is taps x taps, row-major.  Output size qm_ssim_decimated_size().
 * scratch: qm_ssim_decimate_scratch() bytes. */
typedef void (*QmSsimDecimateFn)(float *dst, ptrdiff_t dst_stride,
                                 const QmSsimSrc *src, int w, int h,
                                 const float *kernel, int taps, int factor,
                                 void *scratch);

/* Stage 3: input rows [y0, y1) of the w-wide ref/dis planes -> slots
 * y % out->rows of the five planes, w - 10 columns each.  rowbuf: 2 w
 * floats, used when a source is not float. */
typedef void (*QmSsimHFilterFn)(const QmSsimPlanes *out,
                                const QmSsimSrc *ref, const QmSsimSrc *dis,
                                int w, int y0, int y1, float *rowbuf);

/* Stage 4: valid rows [y0, y1) (input rows y .. y + 10 of `in`), wo columns
 * -> sums[y - y0]. */
typedef void (*QmSsimVFilterFn)(QmSsimRowSums *sums, const QmSsimPlanes *in,
                                int wo, int y0, int y1);

struct QmMetricConfig;

/* The options of float_ssim and float_ms_ssim, libvmaf's names in
 * alphabetical order (float_ms_ssim has the first two). */
enum { QM_SSIM_OPT_CLIP_DB, QM_SSIM_OPT_ENABLE_DB, QM_SSIM_OPT_SCALE };

/* 0 for a picture float_ssim takes with its options (the window fits the
 * decimated picture, 8..16 bits), else QM_ENOTSUP: init() of both
 * backends. */
int qm_ssim_check(const struct QmMetricConfig *cfg);

/* float_ssim's decimation factor: its scale option, 0 meaning
 * qm_ssim_auto_scale() (libvmaf ssim.c, scale_override). */
int qm_ssim_factor(const struct QmMetricConfig *cfg);

/* The value written for a score (libvmaf float_ssim.c / float_ms_ssim.c):
 * the score itself, or with enable_db -10 log10(1 - score), capped with
 * clip_db at max_db = ceil(10 log10(peak^2 w h / 0.5)), peak 2^bpc - 1 and
 * w x h the picture's size (the cap of an error of half a sample step
 * squared over the picture; identical pictures score it). */
typedef struct QmSsimDb {
    int on;
    double max_db;  /* INFINITY without clip_db */
} QmSsimDb;

void qm_ssim_db_setup(QmSsimDb *db, const struct QmMetricConfig *cfg);
double qm_ssim_db(const QmSsimDb *db, double score);

/* The same for float_ms_ssim (libvmaf ms_ssim.c: every scale, halved with
 * floor, must hold the window). */
int qm_ms_ssim_check(const struct QmMetricConfig *cfg);

/* ---- the C implementations ---- */
void qm_ssim_to_float(float *dst, ptrdiff_t dst_stride, const void *src,
                      ptrdiff_t src_stride, int w, int h, int bpc);
void qm_ssim_decimate(float *dst, ptrdiff_t dst_stride, const QmSsimSrc *src,
                      int w, int h, const float *kernel, int taps, int factor,
                      void *scratch);
void qm_ssim_hfilter(const QmSsimPlanes *out, const QmSsimSrc *ref,
                     const QmSsimSrc *dis, int w, int y0, int y1,
                     float *rowbuf);
void qm_ssim_vfilter(QmSsimRowSums *sums, const QmSsimPlanes *in, int wo,
                     int y0, int y1);

/* ---- geometry and host-side formulas, shared by both backends ---- */

/* libvmaf iqa/decimate.c: w / factor, plus one when w is odd (whatever the
 * factor: the reference's rule, kept as is). */
static inline int qm_ssim_decimated_size(int n, int factor)
{
    return n / factor + (n & 1);
}

size_t qm_ssim_decimate_scratch(int w, int taps, int factor);

/* float_ssim's automatic factor for a w x h picture (libvmaf ssim.c):
 * max(1, round(min(w, h) / 256)), the quotient in float. */
int qm_ssim_auto_scale(int w, int h);

/* Box filter of a factor x factor decimation (libvmaf ssim.c: every tap
 * 1.0f / (factor * factor)); k holds factor * factor floats. */
void qm_ssim_box_kernel(float *k, int factor);

/* The 11 taps of the 1-D Gaussian window of stages 3 and 4 (the C code's
 * own table, so that a CUDA twin filters with the same floats). */
void qm_ssim_gauss_taps(float taps[QM_SSIM_WIN]);

/* MS-SSIM's 9x9 low-pass filter (libvmaf ms_ssim.c, g_lpf); k: 81 floats. */
#define QM_MS_SSIM_LPF_TAPS 9
void qm_ms_ssim_lpf_kernel(float *k);

/* Means of the per-row sums of a wo x ho valid region. */
void qm_ssim_pool(QmSsimScore *out, const QmSsimRowSums *rows, int wo, int ho);

/* MS-SSIM from the five scales' means (Wang's exponents). */
double qm_ms_ssim_combine(const QmSsimScore sc[QM_MS_SSIM_SCALES]);

/* ---- CPU driver of stages 3-5 for one scale ---- */

typedef struct QmSsimWork {
    QmSsimPlanes ring;
    QmSsimRowSums *sums;
    float *rowbuf;
    float *buf;
    int max_w, max_h;
} QmSsimWork;

/* Scratch for pictures up to max_w x max_h (both >= 11). */
int qm_ssim_work_init(QmSsimWork *wk, int max_w, int max_h);
void qm_ssim_work_free(QmSsimWork *wk);

/* SSIM of two w x h planes (w, h >= 11, <= the work's maximum). */
void qm_ssim_scale(QmSsimScore *out, QmSsimWork *wk, const QmSsimSrc *ref,
                   const QmSsimSrc *dis, int w, int h);

#ifdef __cplusplus
}
#endif

/* ---- per-pixel arithmetic, shared with the CUDA twin (see qm_hd.h) ---- */

/* Stage 2's border rule: mirror with the edge sample repeated (libvmaf
 * iqa/convolve.c, KBND_SYMMETRIC: -1 -> 0, n -> n - 1); the final clamp
 * only keeps samples that no output uses inside the plane. */
QM_HD int qm_ssim_mirror(int i, int n)
{
    if (i < 0)
        i = -1 - i;
    else if (i >= n)
        i = 2 * n - 1 - i;
    i = i < n - 1 ? i : n - 1;
    return i > 0 ? i : 0;
}

/* libvmaf iqa/ssim_tools.c, _iqa_ssim(): K1 = 0.01f, K2 = 0.03f, L = 255
 * (also for 10/12-bit input, which is scaled to 0..255), C1 = (K1 L)^2,
 * C2 = (K2 L)^2, C3 = C2 / 2, all in float. */
QM_HD void qm_ssim_consts(float *c1, float *c2, float *c3)
{
    const float k1l = 0.01f * 255.0f, k2l = 0.03f * 255.0f;
    *c1 = k1l * k1l;
    *c2 = k2l * k2l;
    *c3 = *c2 / 2.0f;
}

/* The per-pixel terms of stage 4 from the pixel's five filtered values
 * (mu_r, mu_d, E[r^2], E[d^2], E[r d]) and qm_ssim_consts(): ssim = l c s,
 * l, c, s, mixing float and double as the reference does (see
 * ssim_common.c for the reference behind each step). */
QM_HD QmSsimRowSums qm_ssim_pixel(float mr, float md, float rr, float dd, float rd,
                                  float C1, float C2, float C3)
{
    float vr = rr - mr * mr;
    float vd = dd - md * md;
    const float cov = rd - mr * md;
    /* cancellation can leave a tiny negative variance */
    vr = vr < 0.0f ? 0.0f : vr;
    vd = vd < 0.0f ? 0.0f : vd;
    const float sd = (float)sqrt((double)(vr * vd));
    const double l = (2.0 * (double)mr * (double)md + (double)C1) /
                     (double)(mr * mr + md * md + C1);
    const double c = (2.0 * (double)sd + (double)C2) / (double)(vr + vd + C2);
    /* libvmaf's fix for flat identical areas: a covariance rounded below 0
     * where sigma_r sigma_d is 0 counts as 0, so that s (and SSIM) is
     * exactly 1 there */
    const int flat = (cov < 0.0f) & (sd <= 0.0f);
    const float cb = flat ? 0.0f : cov;
    const float s = (cb + C3) / (sd + C3);
    QmSsimRowSums t;
    t.ssim = l * c * (double)s;
    t.l = l;
    t.c = c;
    t.s = (double)s;
    return t;
}

#endif /* QM_SSIM_H */
