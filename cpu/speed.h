/* gst-qmetric: SpEED-QA on the chroma planes ("speed_chroma"), as libvmaf
 * 3.2.0 computes it (src/feature/speed.c, with the filters and rescalers of
 * src/feature/vif_tools.c and picture_copy.c), split into stages.
 *
 * Per chroma plane (Cb, then Cr) of the reference and of the distorted
 * picture:
 *
 *   1. to float: sample - 128 in 8-bit units (10-bit / 4, 12-bit / 16,
 *      16-bit / 256), single precision
 *   2. optional rescale by speed_prescale (when it differs from 1 by 1e-3 or
 *      more) with speed_prescale_method: nearest, bilinear, bicubic
 *      (a = -0.75) or lanczos4 (a = 4)
 *   3. anti-alias Gaussian blur (the size of VIF's scale-1 filter, sigma
 *      multiplied by sqrt(4)), keep every 16th sample in both directions
 *   4. local mean removal: subtract a scale-4 VIF Gaussian blur
 *   5. cut to whole 5x5 blocks; the 25x25 covariance matrix K of the 5x5
 *      neighbourhoods (means in float, sums in double), its eigenvalues
 *      (Householder tridiagonalisation, then implicit symmetric QR: GSL's
 *      symmtd + symm algorithms in float), the solution X of K X = Y where
 *      Y holds each block's 25 samples (Householder QR, back substitution),
 *      per block the variance s = sum(X .* Y) / 25 and the entropy
 *      e = sum over eigenvalues L of log2(max(L, 0) s + sigma_nn) +
 *      log2(2 pi e)
 *   6. score = mean over blocks of |e_ref log2(1 + w_ref) -
 *      e_dis log2(1 + w_dis)| where the weights w depend on
 *      speed_weight_var_mode, and blocks whose two entropies are both below
 *      25 (log2((1 + nn_floor) sigma_nn) + log2(2 pi e)) count 0
 *
 * K is "singular" when an eigenvalue is below 1e-6 or a diagonal element of
 * R is: X is then 0.  When exactly one of ref/dis is singular the plane
 * scores 0; speed_chroma_uv is the mean of the two planes, or the plane
 * that is not singular when only one is (libvmaf's imputation).
 *
 * Precision: every stage is single precision in libvmaf's order of
 * operations (the covariance sums are double), which this file follows
 * exactly; the compiler must not contract a*b+c (meson: -ffp-contract=off).
 */
#ifndef QM_SPEED_H
#define QM_SPEED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libvmaf speed.c: DEFAULT_BLOCK_SIZE, NUM_SCALES, EIGENVALUE_EPS,
 * EIGENVALUE_MAX_ITERS */
#define QM_SPEED_BLOCK 5
#define QM_SPEED_N (QM_SPEED_BLOCK * QM_SPEED_BLOCK)  /* 25 */
#define QM_SPEED_SCALES 4
#define QM_SPEED_EIG_EPS 1e-6
#define QM_SPEED_EIG_MAX_ITERS 500

/* libvmaf vif_tools.h enum vif_scaling_method, in the order our option
 * lists the names (speed_prescale_method) */
typedef enum QmSpeedScaler {
    QM_SPEED_NEAREST = 0,
    QM_SPEED_BILINEAR,
    QM_SPEED_BICUBIC,
    QM_SPEED_LANCZOS4,
} QmSpeedScaler;

/* Sizes of one plane's computation (libvmaf speed_init_dimensions()). */
typedef struct QmSpeedDims {
    int w, h;            /* plane */
    int sw, sh;          /* after the prescale: (int)(w * prescale + 0.5) */
    int ow, oh;          /* after the decimation: sw >> 4, sh >> 4 */
    int tw, th;          /* cut to whole blocks */
    int nbh, nbv, nb;    /* blocks across, down, in all */
    int subw, subh;      /* positions of a 5x5 window: tw - 4, th - 4 */
    size_t stride;       /* floats per row of the work buffers */
    size_t rows;         /* rows of the work buffers: max(h, sh) */
} QmSpeedDims;

/** Sizes for a w x h plane; QM_ENOTSUP when fewer than one 5x5 block
 *  remains after the 16x decimation. */
int qm_speed_dims(QmSpeedDims *d, int w, int h, double prescale);

/** Stage 1: plane samples to float (sample / scale - 128; scale 1, 4, 16,
 *  256 for 8, 10, 12, 16 bits, libvmaf picture_copy()).  src stride in
 *  bytes, dst stride in floats. */
typedef void (*QmSpeedToFloatFn)(float *dst, size_t dst_stride,
                                 const void *src, ptrdiff_t src_stride,
                                 int w, int h, int bpc);

/** Whether a plane is rescaled at all: speed_prescale differs from 1 by
 *  1e-3 or more (libvmaf's !ALMOST_EQUAL). */
int qm_speed_rescales(double prescale);

/** Stage 2: rescale src (sw x sh) to dst (dw x dh); strides in floats.
 *  Returns 0 or QM_ENOMEM. */
typedef int (*QmSpeedRescaleFn)(QmSpeedScaler method, const float *src,
                                 int sw, int sh, float *dst, int dw, int dh,
                                 size_t stride);

/** Stages 3 and 4: separable blur with a mirrored border (index -k reads
 *  k, n-1+k reads n-1-k), vertical pass then horizontal, float sums in tap
 *  order (libvmaf vif_filter1d_s); tmp holds w floats. */
typedef void (*QmSpeedFilterFn)(const float *f, int fw, const float *src,
                                float *dst, float *tmp, int w, int h,
                                size_t stride);

/** Stage 5: the 25x25 covariance matrix of the 5x5 windows of a tw x th
 *  plane (row-major, symmetric). */
typedef void (*QmSpeedCovFn)(const QmSpeedDims *d, const float *data,
                             float *cov);

/** Stage 5: eigenvalues of a symmetric n x n matrix (not sorted: the order
 *  of GSL's deflation, which the entropy sum keeps). */
typedef void (*QmSpeedEigenFn)(const float *a, float *eig, int n);

/** Stage 5: per-block entropies and variances; returns nonzero when K is
 *  singular (X is then taken as 0). */
typedef int (*QmSpeedEstimateFn)(const QmSpeedDims *d, const float *data,
                                 float sigma_nn, float *entropy,
                                 float *variance, float *work);

/** Stage 2, bilinear: the two source positions (mirrored into 0 .. n - 1)
 *  and the weight of the second for destination position i, ratio =
 *  source / destination size (libvmaf's precomputed table). */
void qm_speed_bilinear_pos(int i, float ratio, int n, int *i1, int *i2,
                           float *frac);

/* taps of the bicubic (4) and Lanczos-4 (9) interpolators */
#define QM_SPEED_INTERP_TAPS 9

/** Stage 2, bicubic or Lanczos-4: for destination position i, ratio =
 *  source / destination size, the weights of the taps around the source
 *  position p (w[0] is the tap at floor(p) - 1, or floor(p) - 4 for
 *  Lanczos); returns floor(p). */
int qm_speed_interp_taps(int lanczos4, int i, float ratio, float *w);

void qm_speed_to_float_c(float *dst, size_t dst_stride, const void *src,
                         ptrdiff_t src_stride, int w, int h, int bpc);
int qm_speed_rescale_c(QmSpeedScaler method, const float *src, int sw,
                        int sh, float *dst, int dw, int dh, size_t stride);
void qm_speed_filter_c(const float *f, int fw, const float *src, float *dst,
                       float *tmp, int w, int h, size_t stride);
void qm_speed_cov_c(const QmSpeedDims *d, const float *data, float *cov);
void qm_speed_eigen_c(const float *a, float *eig, int n);
int qm_speed_estimate_c(const QmSpeedDims *d, const float *data,
                        float sigma_nn, float *entropy, float *variance,
                        float *work);

/** Stage 5: the Householder QR decomposition of the 25x25 matrix a that
 *  the solve of K X = Y uses: qr = Q (625 floats, row-major) then R (625);
 *  work holds 1250 floats.  24 reflections H_k = I - 2 v v' of the partly
 *  reduced matrix, each applied by a full 25x25 product (float sums in k
 *  order), as libvmaf. */
void qm_speed_qr_c(const float *a, float *qr, float *work);

/** Stage 5 from a covariance matrix already computed (qm_speed_cov_c() or
 *  its CUDA twin) and, unless NULL, its qm_speed_qr_c(): the rest of
 *  qm_speed_estimate_c().  cov may be `work` itself (its first 625
 *  floats). */
int qm_speed_estimate_cov_c(const QmSpeedDims *d, const float *data,
                            const float *cov, const float *qr, float sigma_nn,
                            float *entropy, float *variance, float *work);

/** Floats of `work` qm_speed_estimate_c() needs. */
size_t qm_speed_estimate_work(const QmSpeedDims *d);

/** Filter taps (libvmaf vif_get_filter_size / vif_get_filter /
 *  speed_get_antialias_filter): returns the length, at most 65 for the
 *  accepted kernel scales. */
int qm_speed_blur_taps(float *f, double kernelscale);
int qm_speed_antialias_taps(float *f, double kernelscale);

/** Whether libvmaf accepts this speed_kernelscale (its list of 21). */
int qm_speed_kernelscale_ok(double kernelscale);

/** Stage 6: the score of a plane from the block results of ref and dis. */
float qm_speed_score(const QmSpeedDims *d, const float *e_ref,
                     const float *v_ref, const float *e_dis,
                     const float *v_dis, float sigma_nn, float nn_floor,
                     int weight_var_mode);

/** Stage 6: a plane's score: 0 when exactly one of ref and dis had a
 *  singular covariance, else qm_speed_score(). */
float qm_speed_plane_score(const QmSpeedDims *d, int singular_ref,
                           int singular_dis, const float *e_ref,
                           const float *v_ref, const float *e_dis,
                           const float *v_dis, float sigma_nn, float nn_floor,
                           int weight_var_mode);

struct QmRows;

/** The three features of a frame from the planes' scores and whether a
 *  side of each was singular (libvmaf's imputation of speed_chroma_uv),
 *  clipped to max_val. */
void qm_speed_set_features(struct QmRows *out, float u, int singular_u,
                           float v, int singular_v, double max_val);

/* What init() derives from the configuration, shared by the C reference
 * and its CUDA twin. */
typedef struct QmSpeedParams {
    int bpc;
    int pw, ph;               /* chroma plane size */
    double prescale, max_val;
    QmSpeedScaler method;
    float sigma_nn, nn_floor;
    int mode;                 /* speed_weight_var_mode */
    float aa[128], blur[128]; /* qm_speed_antialias_taps(), _blur_taps() */
    int n_aa, n_blur;
    QmSpeedDims d;
} QmSpeedParams;

struct QmMetricConfig;

/** The parameters of an instance: QM_ENOTSUP for input without chroma, a
 *  bit depth libvmaf does not read or a plane too small for one block;
 *  QM_EINVAL for an option libvmaf refuses. */
int qm_speed_setup(QmSpeedParams *m, const struct QmMetricConfig *cfg);

/* ---- the metric's feature and option indices (qm_metric_speed_chroma) */

enum {
    QM_SPEED_FEAT_U,   /* speed_chroma_u */
    QM_SPEED_FEAT_V,   /* speed_chroma_v */
    QM_SPEED_FEAT_UV,  /* speed_chroma_uv */
};

/* alphabetical by libvmaf name (metric.h) */
enum {
    QM_SPEED_OPT_KERNELSCALE,
    QM_SPEED_OPT_MAX_VAL,
    QM_SPEED_OPT_NN_FLOOR,
    QM_SPEED_OPT_PRESCALE,
    QM_SPEED_OPT_PRESCALE_METHOD,
    QM_SPEED_OPT_SIGMA_NN,
    QM_SPEED_OPT_WEIGHT_VAR_MODE,
};

#ifdef __cplusplus
}
#endif

#endif /* QM_SPEED_H */
