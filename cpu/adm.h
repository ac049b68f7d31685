/* gst-qmetric: ADM (Additive impairment and Detail loss Measure) stage
 * functions, as libvmaf's integer "adm" feature extractor (integer_adm.c,
 * libvmaf 3.2.0) computes them.  Shared by the CPU code and its CUDA twin,
 * which mirrors every stage so that a parity harness can compare them.
 *
 * Four scales.  At each scale both pictures go through one level of a 2-D
 * Daubechies-2 wavelet transform in fixed point, giving an approximation
 * band "a" (the next scale's input) and three detail bands h, v, d (the
 * orientations, index theta = 0, 1, 2 everywhere below).  Then:
 *
 *   1. DWT (QmAdmDwtFn), for both pictures;
 *   2. decouple (QmAdmDecoupleFn): the distorted detail bands are split
 *      into a "restored" part r = k * ref (k = dis / ref per sample,
 *      clipped to [0, 1], limited by the enhancement gain where the
 *      orientation of (h, v) is kept) and an "additive impairment" part
 *      a = dis - r; then, per sample, the CSF weighting of both parts and
 *      the contrast-masking terms derived from them;
 *   3. numerator sums (QmAdmNumFn, contrast masking): CSF-weighted samples
 *      of one part minus the masking threshold of the other, cubed and
 *      summed; the detail-loss measure (DLM) masks r by a, the additive
 *      impairment measure (AIM) masks a by r;
 *   4. denominator sums (QmAdmDenFn): cubes of the reference detail bands;
 *   5. host: the per-scale numerator and denominator in float
 *      (qm_adm_num_scale(), qm_adm_den_scale()) and the final scores
 *      (qm_adm_scores()).
 *
 * Scale 0 runs a 16-bit pipeline (the reference stores its bands in int16
 * and uses 16-bit CSF weights); scales 1-3 run a 32-bit pipeline with other
 * Q formats.  Every band is stored here in int32 planes; at scale 0 the
 * values are those of the reference's int16 arrays (the truncations to 16
 * bits are applied where the reference applies them).  All fixed-point
 * constants of a scale live in QmAdmScaleQ, computed once on the host.
 *
 * Each stage is also declared per band row (QmAdmDwtRowFn, ...; the plane
 * stages loop over them).  The CPU engine runs the row kernels in one pass
 * over a scale's rows so that intermediates stay in cache, with the
 * kernels of QmAdmDsp: the C ones, or their SIMD twins (cpu/x86/), chosen
 * once by qm_adm_dsp_init().  qm_adm_planes_sums() chains the plane stages
 * as the reference does: the specification the engine is tested against.
 *
 * Strides are in bytes.
 */
#ifndef QM_ADM_H
#define QM_ADM_H

#include <stddef.h>
#include <stdint.h>

#define QM_ADM_SCALES 4
/* Smallest picture: every scale's DWT needs an input of >= 5 rows/columns
 * (the reference's mirrored index tables break below that: at 32 rows the
 * last scale reads row -1), i.e. ceil(n / 8) >= 5. */
#define QM_ADM_MIN_SIZE 33

/* Daubechies-2 analysis filters in Q15 (libvmaf integer_adm.h:
 * dwt2_db2_coeffs_lo / _hi), low-pass and high-pass. */
static const int32_t QM_ADM_DB2_LO[4] = { 15826, 27411, 7345, -4240 };
static const int32_t QM_ADM_DB2_HI[4] = { -4240, -7345, 27411, -15826 };

/* Largest |sample| of a scale-0 detail or approximation band: the DWT's
 * gains bound them, whatever the bit depth (the vertical pass drops bpc
 * bits: 2^15 * 54822 / 2^16 = 27411 after it, 27411 * 54822 / 2^16 after
 * the horizontal pass; 54822 = sum of |taps|).  Scale 0's 16-bit
 * pipeline relies on it: the decoupled parts obey it too. */
#define QM_ADM_BAND0_MAX 22931

/* Reciprocal table of the decoupling step: recip[m] = 2^30 / m, m in
 * 1 .. 32768 (libvmaf integer_adm.h: div_lookup, positive half). */
#define QM_ADM_RECIP_SIZE 32769

/* Sample rectangle [x0, x1) x [y0, y1) of a band. */
typedef struct QmAdmRect {
    int x0, y0, x1, y1;
} QmAdmRect;

/* Fixed-point recipe of one scale, filled by qm_adm_scale_setup(). */
typedef struct QmAdmScaleQ {
    int scale;      /* 0 .. 3 */
    int in_w, in_h; /* DWT input size */
    int w, h;       /* band size: ceil(in / 2) */
    QmAdmRect work; /* decouple and mask region (the sums' region plus the
                       masking filter's taps) */
    QmAdmRect roi;  /* region summed by numerator and denominator */

    /* DWT: vertical pass (acc + v_add) >> v_shift after subtracting
     * v_offset from the low-pass sum (scale 0 only: centres the unsigned
     * samples), horizontal pass (acc + h_add) >> h_shift. */
    int64_t v_offset, v_add, h_add;
    int v_shift, h_shift;

    /* Truncate CSF values and masking terms to int16 (scale 0). */
    int narrow16;
    /* CSF weighting: y = (csf_mul[t] * x + csf_add) >> csf_shift[t] */
    int64_t csf_mul[3], csf_add[3];
    int csf_shift[3];
    /* masking terms of a CSF value y: |y| / 30 and |y| / 15 */
    int64_t flt_mul, flt_add, ctr_mul, ctr_add;
    int flt_shift, ctr_shift;

    /* numerator: x = (csf_mul[t] * src + x_add) >> x_shift;
     * x = max(|x| - (thr << thr_shift[t]), 0);
     * x2 = (x * x + sq_add[t]) >> sq_shift[t] (int32);
     * sample term (x2 * x + cub_add[t]) >> cub_shift[t]; each row's sum
     * is rounded by (row_add, row_shift) before it is added. */
    int64_t x_add;
    int x_shift;
    int thr_shift[3];
    int64_t sq_add[3], cub_add[3], row_add;
    int sq_shift[3], cub_shift[3], row_shift;
    int num_exp[3];    /* the sum is a float scaled by 2^num_exp */
    int num_float_div; /* scales 1-3 divide in float, scale 0 in double */

    /* denominator: u = |ref|; ((((u * u + dsq_add) >> dsq_shift) * u
     * + dcub_add) >> dcub_shift), rows rounded by (drow_add, drow_shift). */
    uint64_t dsq_add, dcub_add, drow_add;
    int dsq_shift, dcub_shift, drow_shift;
    int den_exp;

    float rfactor[3]; /* the CSF weights (h, v, d) as floats */
} QmAdmScaleQ;

/* Indices of the descriptor's options (alphabetical, as it lists them),
 * for both backends. */
enum {
    QM_ADM_OPT_CSF_MODE, QM_ADM_OPT_DLM_WEIGHT, QM_ADM_OPT_EGL,
    QM_ADM_OPT_MIN_VAL, QM_ADM_OPT_NOISE_WEIGHT, QM_ADM_OPT_NVD,
    QM_ADM_OPT_RDH, QM_ADM_OPT_SKIP_SCALE0
};

/* Options that change the computation (libvmaf's adm options). */
typedef struct QmAdmParams {
    int csf_mode;            /* 0 Watson, 1 Barten, 2/3 Barten-Watson blend */
    double norm_view_dist;   /* viewing distance / display height */
    int ref_display_height;  /* pixels */
} QmAdmParams;

/* Fill the recipe of scale `scale` for a DWT input of in_w x in_h (bpc: the
 * picture's bit depth, used at scale 0).
 * Returns 0, or QM_EINVAL for a CSF that the reference cannot compute
 * (viewing distance x display height below 3 x 1080, or a blended CSF for a
 * display it has no table for). */
int qm_adm_scale_setup(QmAdmScaleQ *q, int scale, int in_w, int in_h,
                       int bpc, const QmAdmParams *p);

/* 2^30 / m for m = 1 .. 32768 (entry 0 unused). */
void qm_adm_recip_table(int32_t *recip);

/**
 * Stage DWT: one level of the 2-D transform of one picture.  At scale 0 src
 * holds samples (uint8_t when bpc == 8, else uint16_t); at scales 1-3 it
 * holds the previous scale's int32 band a (bpc ignored).  Writes the four
 * bands band[0..3] = a, h, v, d of q->w x q->h samples: a low-pass in both
 * directions, h high-pass vertically and low-pass horizontally, v the
 * converse, d high-pass in both.  tmp holds 4 * q->in_w int32.
 */
typedef void (*QmAdmDwtFn)(const void *src, ptrdiff_t src_stride, int bpc,
                           const QmAdmScaleQ *q, int32_t *const band[4],
                           ptrdiff_t band_stride, int32_t *restrict tmp);

/**
 * Stage decouple, over q->work: ref[t], dis[t] are the detail bands of
 * orientation t (h, v, d) of both pictures; writes rst[t] (restored) and
 * add[t] (additive impairment), and the masking planes of both parts,
 * mask_r[0..1] and mask_a[0..1] (all pointwise, hence one stage): with
 * y_t the CSF-weighted samples of a part,
 *   mask[0][i][j] = sum_t |y_t| / 30    (summed over 3x3 neighbourhoods)
 *   mask[1][i][j] = sum_t |y_t| / 15 - mask[0][i][j]   (the centre's term)
 * so that the masking threshold at (i, j) is the 3x3 box sum of mask[0]
 * plus mask[1] (the reference adds, per orientation, the 8 neighbours'
 * |y| / 30 and the centre's |y| / 15; integer sums, so regrouping them is
 * exact).  egl is the enhancement gain limit (>= 1).
 */
typedef void (*QmAdmDecoupleFn)(const int32_t *const ref[3],
                                const int32_t *const dis[3],
                                ptrdiff_t stride, const QmAdmScaleQ *q,
                                double egl, const int32_t *recip,
                                int32_t *const rst[3], int32_t *const add[3],
                                int32_t *const mask_r[2],
                                int32_t *const mask_a[2]);

/**
 * Stage numerator sums, over q->roi: CSF-weighted src[t] minus the masking
 * threshold built from the other part's masking planes (sum = mask[0],
 * ctr = mask[1]), cubed, summed per row, rows rounded and added: acc[t]
 * for t = h, v, d.  The 3x3 box sum
 * mirrors its taps: row/column -1 reads 1, row h reads h - 1, column w
 * reads w - 1 (the reference's edge cases).
 */
typedef void (*QmAdmNumFn)(const int32_t *const src[3], const int32_t *sum,
                           const int32_t *ctr, ptrdiff_t stride,
                           const QmAdmScaleQ *q, int64_t acc[3]);

/**
 * Stage denominator sums, over q->roi: cubes of |ref[t]| (the reference's
 * detail bands), summed per row, rows rounded and added.
 */
typedef void (*QmAdmDenFn)(const int32_t *const ref[3], ptrdiff_t stride,
                           const QmAdmScaleQ *q, uint64_t acc[3]);

void qm_adm_dwt_c(const void *src, ptrdiff_t src_stride, int bpc,
                  const QmAdmScaleQ *q, int32_t *const band[4],
                  ptrdiff_t band_stride, int32_t *restrict tmp);
void qm_adm_decouple_c(const int32_t *const ref[3], const int32_t *const dis[3],
                       ptrdiff_t stride, const QmAdmScaleQ *q, double egl,
                       const int32_t *recip, int32_t *const rst[3],
                       int32_t *const add[3], int32_t *const mask_r[2],
                       int32_t *const mask_a[2]);
void qm_adm_num_c(const int32_t *const src[3], const int32_t *sum,
                  const int32_t *ctr, ptrdiff_t stride, const QmAdmScaleQ *q,
                  int64_t acc[3]);
void qm_adm_den_c(const int32_t *const ref[3], ptrdiff_t stride,
                  const QmAdmScaleQ *q, uint64_t acc[3]);

/* ---- host side, shared by both backends ---- */

/* Numerator of a scale from its sums: sum_t cbrt(acc_t) + cbrt(area * nw),
 * in float as the reference. */
float qm_adm_num_scale(const QmAdmScaleQ *q, const int64_t acc[3],
                       double noise_weight);
/* Denominator of a scale from its sums (CSF weight applied after cubing). */
float qm_adm_den_scale(const QmAdmScaleQ *q, const uint64_t acc[3],
                       double noise_weight);

/* The features, in this order. */
enum {
    QM_ADM_ADM2 = 0,
    QM_ADM_SCALE0, /* .. QM_ADM_SCALE0 + 3 */
    QM_ADM_AIM = QM_ADM_SCALE0 + 4,
    QM_ADM_ADM3,
    QM_ADM_NFEATURES
};

/**
 * Final scores from the per-scale numerators (DLM and AIM) and denominators;
 * w, h: the picture size.  out[QM_ADM_NFEATURES].
 */
void qm_adm_scores(const float num[4], const float aim[4], const float den[4],
                   int w, int h, double dlm_weight, double min_val,
                   double *out);

/* ---- row kernels ----
 * The stages above, one band row at a time (the plane stages loop over
 * them; the CPU engine runs them in one pass over the rows, see adm.c).
 * Row pointers point at column 0 of their row.  Accelerated twins
 * (cpu/x86/adm_<isa>.c) replace them through QmAdmDsp and must give the
 * same outputs bit for bit for every input the engine can pass: any
 * samples and any int32 band a; scale-0 detail bands and decoupled parts
 * within +-QM_ADM_BAND0_MAX (the DWT's range, which the twins' 32-bit
 * arithmetic relies on); recipes from qm_adm_scale_setup() for pictures
 * of at least QM_ADM_MIN_SIZE; egl within its option's range [1, 100]. */

/**
 * DWT of band row i: src[k] is input row 2i - 1 + k mirrored at the
 * picture's edges (qm_adm_dwt_rows()); writes row i of the four bands
 * (band[0..3] = a, h, v, d, q->w samples each).  tmp: 4 * q->in_w int32.
 */
typedef void (*QmAdmDwtRowFn)(const void *const src[4], int bpc,
                              const QmAdmScaleQ *q, int32_t *const band[4],
                              int32_t *restrict tmp);

/** Input rows of band row i (mirrored), for QmAdmDwtRowFn. */
void qm_adm_dwt_rows(const void *src, ptrdiff_t src_stride, const QmAdmScaleQ *q,
                     int i, const void *rows[4]);

/**
 * Decouple of one band row over columns [x0, x1): QmAdmDecoupleFn's
 * outputs for that row.
 */
typedef void (*QmAdmDecoupleRowFn)(const int32_t *const ref[3],
                                   const int32_t *const dis[3], int x0, int x1,
                                   const QmAdmScaleQ *q, double egl,
                                   const int32_t *recip, int32_t *const rst[3],
                                   int32_t *const add[3],
                                   int32_t *const mask_r[2],
                                   int32_t *const mask_a[2]);

/**
 * Numerator sums of band row i over q->roi's columns: src[t] row i,
 * sum[0..2] the masking sum plane's rows i - 1, i, i + 1 (mirrored as in
 * QmAdmNumFn), ctr row i.  in[t]: the row's sums before the row rounding
 * (acc[t] += (in[t] + q->row_add) >> q->row_shift).
 */
typedef void (*QmAdmNumRowFn)(const int32_t *const src[3],
                              const int32_t *const sum[3], const int32_t *ctr,
                              const QmAdmScaleQ *q, int64_t in[3]);

/**
 * Denominator sums of one band row over q->roi's columns, before the row
 * rounding (acc[t] += (in[t] + q->drow_add) >> q->drow_shift).
 */
typedef void (*QmAdmDenRowFn)(const int32_t *const ref[3], const QmAdmScaleQ *q,
                              uint64_t in[3]);

void qm_adm_dwt_row_c(const void *const src[4], int bpc, const QmAdmScaleQ *q,
                      int32_t *const band[4], int32_t *restrict tmp);
void qm_adm_decouple_row_c(const int32_t *const ref[3], const int32_t *const dis[3],
                           int x0, int x1, const QmAdmScaleQ *q, double egl,
                           const int32_t *recip, int32_t *const rst[3],
                           int32_t *const add[3], int32_t *const mask_r[2],
                           int32_t *const mask_a[2]);
void qm_adm_num_row_c(const int32_t *const src[3], const int32_t *const sum[3],
                      const int32_t *ctr, const QmAdmScaleQ *q, int64_t in[3]);
void qm_adm_den_row_c(const int32_t *const ref[3], const QmAdmScaleQ *q,
                      uint64_t in[3]);

/* The row kernels the engine runs: [0] for scale 0 (the 16-bit pipeline),
 * [1] for scales 1-3. */
typedef struct QmAdmDsp {
    QmAdmDwtRowFn dwt_row[2];
    QmAdmDecoupleRowFn decouple_row[2];
    QmAdmNumRowFn num_row[2];
    QmAdmDenRowFn den_row[2];
} QmAdmDsp;

/* Fill dsp with the C kernels, then the twins that cpu_flags (QM_CPU_*)
 * allow. */
void qm_adm_dsp_init(QmAdmDsp *dsp, unsigned cpu_flags);
/* Twins' overrides (cpu/x86/adm_<isa>.c), called by qm_adm_dsp_init(). */
void qm_adm_dsp_init_avx2(QmAdmDsp *dsp);
void qm_adm_dsp_init_avx512(QmAdmDsp *dsp);
/* The AVX2 decouple's int64 -> float conversion (to nearest, ties to even,
 * as C's conversion), emulated since AVX2 has none: exported for
 * tests/checkasm, which tests it on its own (its errors would show in the
 * angle test only near the threshold). */
void qm_adm_i64_to_float_avx2(const int64_t *x, float *out, int n);

/* ---- options and scales of a picture size (both backends' init) ---- */

typedef struct QmAdmSetup {
    int w, h, bpc;
    double egl, dlm_weight, min_val, noise_weight;
    int skip_scale0;
    QmAdmScaleQ q[QM_ADM_SCALES];
} QmAdmSetup;

/* Integer sums of one frame, per scale and orientation (h, v, d). */
typedef struct QmAdmSums {
    int64_t dlm[QM_ADM_SCALES][3];  /* numerator, DLM (qm_adm_num_c) */
    int64_t aim[QM_ADM_SCALES][3];  /* numerator, AIM */
    uint64_t den[QM_ADM_SCALES][3]; /* denominator (qm_adm_den_c) */
} QmAdmSums;

/* The features of a frame from its sums (scale 0's are ignored under
 * skip_scale0). */
void qm_adm_features(const QmAdmSetup *st, const QmAdmSums *acc,
                     double out[QM_ADM_NFEATURES]);

/* One frame through the plane stages (qm_adm_dwt_c, qm_adm_decouple_c,
 * qm_adm_den_c, qm_adm_num_c), in the reference's order: the plain
 * specification that the CPU engine's fused row pass must match.  scratch:
 * qm_adm_planes_scratch() int32. */
size_t qm_adm_planes_scratch(const QmAdmSetup *st);
void qm_adm_planes_sums(const QmAdmSetup *st, const void *ref, ptrdiff_t ref_stride,
                        const void *dis, ptrdiff_t dis_stride, int32_t *scratch,
                        QmAdmSums *acc);

struct QmMetricConfig;
/* From the metric's configuration (options indexed by QM_ADM_OPT_*):
 * 0, QM_ENOTSUP (bit depth outside 8..16, picture below QM_ADM_MIN_SIZE)
 * or qm_adm_scale_setup()'s error. */
int qm_adm_setup(QmAdmSetup *st, const struct QmMetricConfig *cfg);

#endif /* QM_ADM_H */
