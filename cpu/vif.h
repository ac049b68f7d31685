/* gst-qmetric: VIF (visual information fidelity), the integer implementation
 * of libvmaf 3.2.0 ("vif" feature extractor, integer_vif.c), split into the
 * stages a GPU twin implements one kernel each:
 *
 *   1. statistics of one scale (QmVifStatFn): Gaussian-like low-pass of
 *      ref, dis, ref^2, dis^2 and ref*dis, local variances and covariance,
 *      and the per-pixel VIF terms summed into four exact integers
 *      (QmVifAccum).  Integer sums do not depend on the order of summation,
 *      so the CPU and a GPU must agree on them exactly.
 *   2. low-pass and 2:1 decimation to the next scale (QmVifDecimateFn).
 *   3. on the host, qm_vif_scale_score(): the four integers of a scale to
 *      the scale's score, with the reference's float rounding.
 *
 * Fixed-point conventions (all from libvmaf integer_vif.c): the filters are
 * Q16 (each table sums to 65536); after the vertical pass a local mean is an
 * 8-bit-normalised sample value times 2^8 whatever the bit depth, and a
 * second moment an 8-bit-normalised squared value times 2^16.  Pictures of
 * scales 1..3 are uint16_t holding such mean values, i.e. they behave as
 * 16-bit samples ("in_bits" 16) for the next stage.
 */
#ifndef QM_VIF_H
#define QM_VIF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define QM_VIF_SCALES 4
/* Widest filter: 17 taps (scale 0); every stage reads at most 8 samples on
 * either side of a position. */
#define QM_VIF_MAX_HALF 8

/* The stage functions instantiate their file's inlined template once per
 * filter length, so that the tap loops are unrolled: CALL(S) with S the
 * constant for `scale` (the statistics use the scale's own filter) or for
 * scale + 1 (the low-pass before scale s + 1 is scale s + 1's filter). */
#define QM_VIF_FOR_SCALE(scale, CALL)                                       \
    do {                                                                    \
        switch (scale) {                                                    \
        case 0: CALL(0); break;                                             \
        case 1: CALL(1); break;                                             \
        case 2: CALL(2); break;                                             \
        default: CALL(3); break;                                            \
        }                                                                   \
    } while (0)
#define QM_VIF_FOR_NEXT_SCALE(scale, CALL)                                  \
    do {                                                                    \
        switch (scale) {                                                    \
        case 0: CALL(1); break;                                             \
        case 1: CALL(2); break;                                             \
        default: CALL(3); break;                                            \
        }                                                                   \
    } while (0)
/* log2 lookup table: indices 32768 .. 65535 are used (16 significant bits). */
#define QM_VIF_LOG2_TABLE_SIZE 65536

/* The exact per-scale sums of libvmaf's vif_statistic_*():
 *   num_log     sum of 2048 * log2(1 + g^2 sigma1^2 / (sv^2 + sigma_n^2))
 *               over pixels with sigma1^2 >= sigma_n^2 (table based),
 *   den_log     sum of 2048 * log2(1 + sigma1^2 / sigma_n^2) over them,
 *   num_non_log sum of sigma2^2 (Q16) over the other pixels,
 *   den_non_log number of the other pixels. */
typedef struct QmVifAccum {
    int64_t num_log;
    int64_t den_log;
    int64_t num_non_log;
    int64_t den_non_log;
} QmVifAccum;

/* Tunables of the statistics stage. */
typedef struct QmVifParams {
    double enhn_gain_limit;   /* cap on the gain g (libvmaf egl); >= 1 */
    const uint16_t *log2_tab; /* qm_vif_log2_table() (the x86 twins rely on
                                 its content, not only its size) */
} QmVifParams;

/**
 * Stage 1: statistics of one scale.
 * ref, dis: w x h pictures (strides in bytes); samples are
 * uint8_t when in_bits == 8, else uint16_t holding in_bits-bit values
 * (in_bits = bpc at scale 0, 16 at scales 1..3).  `scale` picks the filter
 * (17, 9, 5 or 3 taps).  Borders are mirrored without repeating the edge
 * sample.  `scratch` holds qm_vif_scratch_size(w) bytes.  The sums are
 * added to *acc.
 */
typedef void (*QmVifStatFn)(const void *ref, ptrdiff_t ref_stride,
                            const void *dis, ptrdiff_t dis_stride,
                            int w, int h, int in_bits,
                            int scale, const QmVifParams *p, void *scratch,
                            QmVifAccum *acc);

/**
 * Stage 2: the low-pass of scale+1 followed by keeping every other sample
 * of every other row: ref/dis (as for QmVifStatFn, w x h) to ref_out/dis_out
 * ((w / 2) x (h / 2) uint16_t, out_stride bytes between rows).
 */
typedef void (*QmVifDecimateFn)(const void *ref, ptrdiff_t ref_stride,
                                const void *dis, ptrdiff_t dis_stride,
                                int w, int h, int in_bits,
                                int scale, uint16_t *ref_out, uint16_t *dis_out,
                                ptrdiff_t out_stride, void *scratch);

/**
 * A finer part of stage 1, on its own for the SIMD twins' tests: the
 * per-pixel VIF terms of n pixels from their local statistics (Q16,
 * s22[i] >= 0; s11 and s12 any int32), summed into *acc.  Stage 1 calls it
 * once per row.
 */
typedef void (*QmVifTermsFn)(const int32_t *s11, const int32_t *s22,
                             const int32_t *s12, int n,
                             const QmVifParams *p, QmVifAccum *acc);

/* The CPU implementations. */
void qm_vif_terms_cpu(const int32_t *s11, const int32_t *s22,
                      const int32_t *s12, int n, const QmVifParams *p,
                      QmVifAccum *acc);
void qm_vif_stat_cpu(const void *ref, ptrdiff_t ref_stride,
                     const void *dis, ptrdiff_t dis_stride, int w, int h,
                     int in_bits, int scale,
                     const QmVifParams *p, void *scratch, QmVifAccum *acc);
void qm_vif_decimate_cpu(const void *ref, ptrdiff_t ref_stride,
                         const void *dis, ptrdiff_t dis_stride, int w, int h,
                         int in_bits, int scale,
                         uint16_t *ref_out, uint16_t *dis_out,
                         ptrdiff_t out_stride, void *scratch);

/* SIMD twins (cpu/x86/vif_<isa>.c; bit-exact with the C stages above).
 * Only built on x86-64; reach them through qm_vif_dsp_init(). */
void qm_vif_terms_avx2(const int32_t *s11, const int32_t *s22,
                       const int32_t *s12, int n, const QmVifParams *p,
                       QmVifAccum *acc);
void qm_vif_stat_avx2(const void *ref, ptrdiff_t ref_stride,
                      const void *dis, ptrdiff_t dis_stride, int w, int h,
                      int in_bits, int scale,
                      const QmVifParams *p, void *scratch, QmVifAccum *acc);
void qm_vif_decimate_avx2(const void *ref, ptrdiff_t ref_stride,
                          const void *dis, ptrdiff_t dis_stride, int w, int h,
                          int in_bits, int scale,
                          uint16_t *ref_out, uint16_t *dis_out,
                          ptrdiff_t out_stride, void *scratch);
/** 1 when the AVX-512 twins can compute the log2 entries of tab (a
 *  qm_vif_log2_table()) exactly, reading only those near a rounding tie;
 *  also narrows that band for the twins to what tab needs (vif_avx512.c).
 *  qm_vif_dsp_init() runs it once per process. */
int qm_vif_log2_check_avx512(const uint16_t *tab);
void qm_vif_terms_avx512(const int32_t *s11, const int32_t *s22,
                         const int32_t *s12, int n, const QmVifParams *p,
                         QmVifAccum *acc);
void qm_vif_stat_avx512(const void *ref, ptrdiff_t ref_stride,
                        const void *dis, ptrdiff_t dis_stride, int w, int h,
                        int in_bits, int scale,
                        const QmVifParams *p, void *scratch, QmVifAccum *acc);
void qm_vif_decimate_avx512(const void *ref, ptrdiff_t ref_stride,
                            const void *dis, ptrdiff_t dis_stride, int w,
                            int h, int in_bits, int scale,
                            uint16_t *ref_out, uint16_t *dis_out,
                            ptrdiff_t out_stride, void *scratch);

/** The stages one CPU backend runs, chosen once (dav1d's dsp-init pattern). */
typedef struct QmVifDsp {
    QmVifStatFn stat;
    QmVifDecimateFn decimate;
    QmVifTermsFn terms;
} QmVifDsp;

/**
 * Fill *dsp with the C stages, then override them with the twins of every
 * level in `flags` (QM_CPU_* bits, cpu.h) that this build has.  The engine
 * passes qm_cpu_flags(); tests pass each level in turn (flags 0: C only).
 */
void qm_vif_dsp_init(QmVifDsp *dsp, unsigned flags);

/** The Q16 low-pass filter of a scale (libvmaf vif_filter1d_table), its
 *  tap count (17, 9, 5, 3) in *taps; for backends that cannot call the CPU
 *  stages (the CUDA twin). */
const uint16_t *qm_vif_filter(int scale, int *taps);

/* Indices of the options in the descriptor (vif.c vif_options[]). */
enum { QM_VIF_OPT_EGL = 0, QM_VIF_OPT_SKIP_SCALE0 = 1 };

/** Bytes of scratch the CPU stages (C and SIMD) need for pictures up to w
 *  samples wide. */
size_t qm_vif_scratch_size(int w);

/** Fill the log2 table: entry i = round(2048 * log2(i)) for the used i. */
void qm_vif_log2_table(uint16_t tab[QM_VIF_LOG2_TABLE_SIZE]);

/** Stage 3 (host, shared by all backends): a scale's numerator and
 *  denominator, rounded to float as the reference stores them. */
void qm_vif_num_den(const QmVifAccum *a, float *num, float *den);
/** The scale's score: num / den in float precision, widened to double. */
double qm_vif_scale_score(const QmVifAccum *a);

#ifdef __cplusplus
}
#endif

#endif /* QM_VIF_H */
