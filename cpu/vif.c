/* gst-qmetric: VIF, reproducing libvmaf 3.2.0's integer "vif" feature
 * extractor (src/feature/integer_vif.c, integer_vif.h) bit for bit.
 *
 * VIF (Sheikh & Bovik) compares, at four scales, the information the
 * distorted picture keeps about the reference under a Gaussian-scale-mixture
 * model: with local variances sigma1^2 (ref), sigma2^2 (dis), covariance
 * sigma12, gain g = sigma12 / sigma1^2 and residual sv^2 = sigma2^2 -
 * g sigma12, a scale scores
 *
 *   sum log2(1 + g^2 sigma1^2 / (sv^2 + sigma_n^2))
 *   -----------------------------------------------,   sigma_n^2 = 2,
 *   sum log2(1 + sigma1^2 / sigma_n^2)
 *
 * where pixels with sigma1^2 < sigma_n^2 (flat ref) count 1 - 4 sigma2^2 /
 * 255^2 in the numerator and 1 in the denominator.  libvmaf evaluates this
 * in fixed point: integer filters, variances in Q16 of 8-bit-normalised
 * sample units, and log2 from a 16-bit lookup table.  Every rounding below
 * is the reference's; the comments say where each constant comes from.
 *
 * Stages (see vif.h): stat (one scale's integer sums), decimate (low-pass
 * + 2:1), and the host-side score.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "metric.h"
#include "vif.h"
#include "vif_pixel.h"
#if defined(QM_HAVE_VIF_AVX2) || defined(QM_HAVE_VIF_AVX512)
#include "x86/vif_x86.h"
#endif

/* Function multi-versioning of the two integer stages: GCC compiles the same
 * C again for AVX2 and AVX-512 and the loader picks the widest the CPU has
 * (ifunc), so the filter loops get wide vectors while the default build
 * stays baseline x86-64.  Only integer arithmetic is cloned: the floating-
 * point VIF terms (qm_vif_terms_cpu) are kept out of line in the baseline
 * build, so that no FMA contraction can change their rounding
 * (QM_VECTOR_CLONES, metric.h).  The hand-written twins in cpu/x86/ are
 * faster still; qm_vif_dsp_init() picks them. */
#define VIF_TARGET_CLONES QM_VECTOR_CLONES

/* libvmaf integer_vif.h: vif_filter1d_table / vif_filter1d_width.  Q16
 * integer approximations of Gaussians (each row sums to 65536), used at
 * scale s for the statistics and at scale s + 1 for the low-pass before
 * decimating from scale s. */
static const int vif_taps[QM_VIF_SCALES] = { 17, 9, 5, 3 };
static const uint16_t vif_filter[QM_VIF_SCALES][17] = {
    { 489, 935, 1640, 2640, 3896, 5274, 6547, 7455, 7784,
      7455, 6547, 5274, 3896, 2640, 1640, 935, 489 },
    { 1244, 3663, 7925, 12590, 14692, 12590, 7925, 3663, 1244 },
    { 3571, 16004, 26386, 16004, 3571 },
    { 10904, 43728, 10904 },
};

const uint16_t *qm_vif_filter(int scale, int *taps)
{
    *taps = vif_taps[scale];
    return vif_filter[scale];
}

/* ---- borders ----
 * qm_vif_mirror() (vif_pixel.h): with the minimum size (16 x 16, see below)
 * one reflection always suffices, but the general rule costs nothing. */

/* Extend a filtered row of n samples by `half` mirrored samples each side. */
#define DEFINE_PAD_ROW(NAME, T)                                            \
    static inline void NAME(T *row, int n, int half)                       \
    {                                                                      \
        for (int k = 1; k <= half; k++) {                                  \
            row[-k] = row[qm_vif_mirror(-k, n)];                           \
            row[n - 1 + k] = row[qm_vif_mirror(n - 1 + k, n)];             \
        }                                                                  \
    }
DEFINE_PAD_ROW(pad_row16, uint16_t)
DEFINE_PAD_ROW(pad_row32, uint32_t)

/* ---- scratch ----
 * One filtered row of each of the five moments (mean ref, mean dis, ref^2,
 * dis^2, ref*dis) with QM_VIF_MAX_HALF samples of border each side, and the
 * three second-order statistics of the row. */
typedef struct VifRows {
    uint16_t *mu1, *mu2;      /* vertical means, 8-bit-normalised x 2^8 */
    uint32_t *xx, *yy, *xy;   /* vertical second moments, Q16 */
    int32_t *s11, *s22, *s12; /* sigma1^2, sigma2^2, sigma12, Q16 */
} VifRows;

static size_t row_cap(int w)
{
    /* whole multiples of 16 entries: every array starts 32-byte aligned */
    return ((size_t)w + 2 * QM_VIF_MAX_HALF + 15) & ~(size_t)15;
}

size_t qm_vif_scratch_size(int w)
{
    const size_t n = row_cap(w);
    size_t size = n * (2 * sizeof(uint16_t) + 3 * sizeof(uint32_t) +
                       3 * sizeof(int32_t)) + 64;
#if defined(QM_HAVE_VIF_AVX2) || defined(QM_HAVE_VIF_AVX512)
    /* the twins lay the same scratch out their own way */
    size = QM_MAX(size, vif_x86_scratch_size(w));
#endif
    return size;
}

static VifRows scratch_rows(void *scratch, int w)
{
    const size_t n = row_cap(w);
    uint8_t *p = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    VifRows r;
    r.xx = (uint32_t *)p + QM_VIF_MAX_HALF; p += n * sizeof(uint32_t);
    r.yy = (uint32_t *)p + QM_VIF_MAX_HALF; p += n * sizeof(uint32_t);
    r.xy = (uint32_t *)p + QM_VIF_MAX_HALF; p += n * sizeof(uint32_t);
    r.s11 = (int32_t *)p; p += n * sizeof(int32_t);
    r.s22 = (int32_t *)p; p += n * sizeof(int32_t);
    r.s12 = (int32_t *)p; p += n * sizeof(int32_t);
    r.mu1 = (uint16_t *)p + QM_VIF_MAX_HALF; p += n * sizeof(uint16_t);
    r.mu2 = (uint16_t *)p + QM_VIF_MAX_HALF;
    return r;
}

/* ---- log2 ----
 * libvmaf integer_vif.c log_generate(): table[i] = round(2048 log2f(i)) for
 * i in 32767 .. 65535 (log2 in Q11, computed in float); the other entries
 * are 0 (the AVX2 twin reads entry 0 for pixels it leaves out).  This is
 * not always round(2048 log2(i)): where 2048 log2(i) lies within a float
 * ulp (2^-20, times 2048) of a rounding tie, the float log2f(i) can land
 * on the other side.  With glibc 2.36, whose log2f is the correctly
 * rounded float at all these i, 38 entries differ (i = 33108: 2048 log2(i)
 * = 30750.4993, entry 30751), as they do in libvmaf's table. */
void qm_vif_log2_table(uint16_t tab[QM_VIF_LOG2_TABLE_SIZE])
{
    memset(tab, 0, QM_VIF_LOG2_TABLE_SIZE * sizeof(*tab));
    for (unsigned i = 32767; i < QM_VIF_LOG2_TABLE_SIZE; i++)
        tab[i] = (uint16_t)round(log2f((float)i) * 2048);
}

/* ---- stage 1: statistics of one scale ---- */

/* Sums of filter x 32-bit value, kept in 32-bit lanes.
 * The reference accumulates f * v for v up to 2^32 in 64 bits.  Since every
 * filter sums to 65536, the sums of f * (v mod 2^16) and of f * (v >> 16)
 * each stay below 2^32, so they are accumulated separately (16 x 16-bit
 * products, which vectorise on any SIMD) and joined once per sample:
 *   (sum f v + rnd) >> sh = (hi << (16 - sh)) + ((lo + rnd) >> sh)
 * exactly for 0 <= sh <= 16 and rnd < 2^15, modulo 2^32 like the
 * reference's final cast to uint32_t. */
static inline uint32_t join_q16(uint32_t lo, uint32_t hi, int sh, uint32_t rnd)
{
    return (hi << (16 - sh)) + ((lo + rnd) >> sh);
}

/* Vertical pass of the statistics for one output row: the five moments of
 * the `taps` rows around it, for every column.  Per sample type only the
 * types change: PIX the sample and PROD a product of two samples (16 bits
 * for 8-bit samples, whose squares' high halves then vanish at compile
 * time).  Shifts (libvmaf vif_statistic_8/16): means >> in_bits with
 * rounding, second moments >> 2 (in_bits - 8) with rounding (no shift at 8
 * bits), which puts every depth in the same 8-bit-normalised units. */
#define DEFINE_STAT_VERTICAL(NAME, PIX, PROD)                                   \
    static inline __attribute__((always_inline)) void NAME(                     \
        const uint8_t *const *rrow, const uint8_t *const *drow,                 \
        const uint16_t *f, const int taps, int w, int in_bits, VifRows *o)      \
    {                                                                           \
        const int sh_mu = in_bits, sh_sq = 2 * (in_bits - 8);                   \
        const uint32_t rnd_mu = 1u << (sh_mu - 1);                              \
        const uint32_t rnd_sq = sh_sq ? 1u << (sh_sq - 1) : 0;                  \
        const PIX *r[17], *d[17];                                               \
        for (int k = 0; k < taps; k++) {                                        \
            r[k] = (const PIX *)rrow[k];                                        \
            d[k] = (const PIX *)drow[k];                                        \
        }                                                                       \
        uint16_t *restrict mu1 = o->mu1, *restrict mu2 = o->mu2;                \
        uint32_t *restrict xx = o->xx, *restrict yy = o->yy;                    \
        uint32_t *restrict xy = o->xy;                                          \
        _Pragma("GCC ivdep")                                                    \
        for (int j = 0; j < w; j++) {                                           \
            uint32_t a1 = 0, a2 = 0;                                            \
            uint32_t xxl = 0, xxh = 0, yyl = 0, yyh = 0, xyl = 0, xyh = 0;      \
            _Pragma("GCC unroll 17")                                            \
            for (int k = 0; k < taps; k++) {                                    \
                const uint32_t fk = f[k];                                       \
                const PROD x = r[k][j], y = d[k][j];                            \
                const PROD pxx = (PROD)(x * x), pyy = (PROD)(y * y);            \
                const PROD pxy = (PROD)(x * y);                                 \
                a1 += fk * x;                                                   \
                a2 += fk * y;                                                   \
                xxl += fk * (uint16_t)pxx;                                      \
                xxh += fk * (uint16_t)(pxx >> 16);                              \
                yyl += fk * (uint16_t)pyy;                                      \
                yyh += fk * (uint16_t)(pyy >> 16);                              \
                xyl += fk * (uint16_t)pxy;                                      \
                xyh += fk * (uint16_t)(pxy >> 16);                              \
            }                                                                   \
            mu1[j] = (uint16_t)((a1 + rnd_mu) >> sh_mu);                        \
            mu2[j] = (uint16_t)((a2 + rnd_mu) >> sh_mu);                        \
            xx[j] = join_q16(xxl, xxh, sh_sq, rnd_sq);                          \
            yy[j] = join_q16(yyl, yyh, sh_sq, rnd_sq);                          \
            xy[j] = join_q16(xyl, xyh, sh_sq, rnd_sq);                          \
        }                                                                       \
    }
DEFINE_STAT_VERTICAL(stat_vertical8, uint8_t, uint16_t)
DEFINE_STAT_VERTICAL(stat_vertical16, uint16_t, uint32_t)

/* Horizontal pass: filter the (mirror-padded) moment rows and form the
 * local statistics (qm_vif_sigmas()).  The horizontal mean stays unshifted
 * (Q24 of the normalised sample), the filtered second moments go to Q16 by
 * >> 16 with rounding (libvmaf vif_statistic_*: xx/yy/xy_filt_val). */
static inline __attribute__((always_inline)) void
stat_horizontal(const VifRows *in, const uint16_t *f, const int taps, int w)
{
    const int half = taps / 2;
    const uint16_t *restrict m1 = in->mu1 - half, *restrict m2 = in->mu2 - half;
    const uint32_t *restrict xx = in->xx - half, *restrict yy = in->yy - half;
    const uint32_t *restrict xy = in->xy - half;
    int32_t *restrict s11 = in->s11, *restrict s22 = in->s22;
    int32_t *restrict s12 = in->s12;
    _Pragma("GCC ivdep")
    for (int j = 0; j < w; j++) {
        uint32_t a1 = 0, a2 = 0;
        uint32_t xxl = 0, xxh = 0, yyl = 0, yyh = 0, xyl = 0, xyh = 0;
        _Pragma("GCC unroll 17")
        for (int k = 0; k < taps; k++) {
            const uint32_t fk = f[k];
            a1 += fk * m1[j + k];
            a2 += fk * m2[j + k];
            xxl += fk * (uint16_t)xx[j + k];
            xxh += fk * (uint16_t)(xx[j + k] >> 16);
            yyl += fk * (uint16_t)yy[j + k];
            yyh += fk * (uint16_t)(yy[j + k] >> 16);
            xyl += fk * (uint16_t)xy[j + k];
            xyh += fk * (uint16_t)(xy[j + k] >> 16);
        }
        qm_vif_sigmas(a1, a2, join_q16(xxl, xxh, 16, 0x8000),
                      join_q16(yyl, yyh, 16, 0x8000), join_q16(xyl, xyh, 16, 0x8000),
                      &s11[j], &s22[j], &s12[j]);
    }
}

/* The per-pixel VIF terms of one row (qm_vif_pixel_terms()), summed. */
__attribute__((noinline)) void
qm_vif_terms_cpu(const int32_t *s11_row, const int32_t *s22_row,
                 const int32_t *s12_row, int n, const QmVifParams *p,
                 QmVifAccum *acc)
{
    QmVifAccum row = { 0, 0, 0, 0 };
    for (int j = 0; j < n; j++)
        qm_vif_pixel_terms(s11_row[j], s22_row[j], s12_row[j], p->log2_tab,
                           p->enhn_gain_limit, &row);
    acc->num_log += row.num_log;
    acc->den_log += row.den_log;
    acc->num_non_log += row.num_non_log;
    acc->den_non_log += row.den_non_log;
}

/* Pointers to the `taps` rows centred on row i, mirrored at the edges. */
static void window_rows(const uint8_t **rows, const void *base,
                        ptrdiff_t stride, int i, int h, int taps)
{
    const int half = taps / 2;
    for (int k = 0; k < taps; k++)
        rows[k] = (const uint8_t *)base + (ptrdiff_t)qm_vif_mirror(i - half + k, h) * stride;
}

static inline __attribute__((always_inline)) void
stat_scale(const void *ref, ptrdiff_t ref_stride, const void *dis,
           ptrdiff_t dis_stride, int w, int h, int in_bits, const int scale,
           const QmVifParams *p, void *scratch, QmVifAccum *acc)
{
    const int taps = vif_taps[scale], half = taps / 2;
    const uint16_t *f = vif_filter[scale];
    VifRows rows = scratch_rows(scratch, w);
    const uint8_t *rr[17], *dr[17];
    for (int i = 0; i < h; i++) {
        window_rows(rr, ref, ref_stride, i, h, taps);
        window_rows(dr, dis, dis_stride, i, h, taps);
        if (in_bits == 8)
            stat_vertical8(rr, dr, f, taps, w, in_bits, &rows);
        else
            stat_vertical16(rr, dr, f, taps, w, in_bits, &rows);
        pad_row16(rows.mu1, w, half);
        pad_row16(rows.mu2, w, half);
        pad_row32(rows.xx, w, half);
        pad_row32(rows.yy, w, half);
        pad_row32(rows.xy, w, half);
        stat_horizontal(&rows, f, taps, w);
        qm_vif_terms_cpu(rows.s11, rows.s22, rows.s12, w, p, acc);
    }
}

VIF_TARGET_CLONES
void qm_vif_stat_cpu(const void *ref, ptrdiff_t ref_stride, const void *dis,
                     ptrdiff_t dis_stride, int w, int h, int in_bits,
                     int scale, const QmVifParams *p, void *scratch,
                     QmVifAccum *acc)
{
#define STAT(S) stat_scale(ref, ref_stride, dis, dis_stride, w, h, in_bits, \
                           S, p, scratch, acc)
    QM_VIF_FOR_SCALE(scale, STAT);
#undef STAT
}

/* ---- stage 2: low-pass and decimation ----
 * libvmaf subsample_rd_8 / subsample_rd_16 filter the whole picture with the
 * next scale's filter (vertical: >> in_bits with rounding, i.e. >> bpc from
 * scale 0 and >> 16 from the 16-bit intermediate scales; horizontal: >> 16
 * with rounding) and keep samples (2i, 2j) (decimate_and_pad).  Only those
 * samples are computed here: the vertical pass on even rows, the
 * horizontal one at even columns. */
#define DEFINE_DEC_VERTICAL(NAME, PIX)                                        \
    static inline __attribute__((always_inline)) void NAME(                   \
        const uint8_t *const *rrow, const uint8_t *const *drow,               \
        const uint16_t *f, const int taps, int w, int in_bits,                \
        uint16_t *restrict o1, uint16_t *restrict o2)                         \
    {                                                                         \
        const uint32_t rnd = 1u << (in_bits - 1);                             \
        const PIX *r[17], *d[17];                                             \
        for (int k = 0; k < taps; k++) {                                      \
            r[k] = (const PIX *)rrow[k];                                      \
            d[k] = (const PIX *)drow[k];                                      \
        }                                                                     \
        _Pragma("GCC ivdep")                                                  \
        for (int j = 0; j < w; j++) {                                         \
            uint32_t a1 = 0, a2 = 0;                                          \
            _Pragma("GCC unroll 17")                                          \
            for (int k = 0; k < taps; k++) {                                  \
                a1 += (uint32_t)f[k] * r[k][j];                               \
                a2 += (uint32_t)f[k] * d[k][j];                               \
            }                                                                 \
            o1[j] = (uint16_t)((a1 + rnd) >> in_bits);                        \
            o2[j] = (uint16_t)((a2 + rnd) >> in_bits);                        \
        }                                                                     \
    }
DEFINE_DEC_VERTICAL(dec_vertical8, uint8_t)
DEFINE_DEC_VERTICAL(dec_vertical16, uint16_t)

static inline __attribute__((always_inline)) void
dec_horizontal(const uint16_t *v, const uint16_t *f, const int taps, int wo,
               uint16_t *restrict out)
{
    const uint16_t *restrict src = v - taps / 2;
    for (int j = 0; j < wo; j++) {
        uint32_t a = 0;
        _Pragma("GCC unroll 17")
        for (int k = 0; k < taps; k++)
            a += (uint32_t)f[k] * src[2 * j + k];
        out[j] = (uint16_t)((a + 0x8000) >> 16);
    }
}

static inline __attribute__((always_inline)) void
decimate_scale(const void *ref, ptrdiff_t ref_stride, const void *dis,
               ptrdiff_t dis_stride, int w, int h, int in_bits,
               const int fscale, uint16_t *ref_out, uint16_t *dis_out,
               ptrdiff_t out_stride, void *scratch)
{
    const int taps = vif_taps[fscale], half = taps / 2;
    const uint16_t *f = vif_filter[fscale];
    VifRows rows = scratch_rows(scratch, w);
    const uint8_t *rr[17], *dr[17];
    for (int i = 0; i < h / 2; i++) {
        window_rows(rr, ref, ref_stride, 2 * i, h, taps);
        window_rows(dr, dis, dis_stride, 2 * i, h, taps);
        if (in_bits == 8)
            dec_vertical8(rr, dr, f, taps, w, in_bits, rows.mu1, rows.mu2);
        else
            dec_vertical16(rr, dr, f, taps, w, in_bits, rows.mu1, rows.mu2);
        pad_row16(rows.mu1, w, half);
        pad_row16(rows.mu2, w, half);
        dec_horizontal(rows.mu1, f, taps, w / 2,
                       (uint16_t *)((uint8_t *)ref_out + i * out_stride));
        dec_horizontal(rows.mu2, f, taps, w / 2,
                       (uint16_t *)((uint8_t *)dis_out + i * out_stride));
    }
}

VIF_TARGET_CLONES
void qm_vif_decimate_cpu(const void *ref, ptrdiff_t ref_stride,
                         const void *dis, ptrdiff_t dis_stride, int w, int h,
                         int in_bits, int scale, uint16_t *ref_out,
                         uint16_t *dis_out, ptrdiff_t out_stride, void *scratch)
{
#define DEC(S) decimate_scale(ref, ref_stride, dis, dis_stride, w, h, in_bits, \
                              S, ref_out, dis_out, out_stride, scratch)
    QM_VIF_FOR_NEXT_SCALE(scale, DEC);
#undef DEC
}

/* ---- stage 3: score of one scale (host) ----
 * libvmaf vif_statistic_*: the sums are combined in double and stored in
 * float; extract() then divides the floats (write_scores).  The flat-ref
 * pixels' numerator term 1 - 4 sigma2^2 / 255^2 (float VIF's sigma_max_inv
 * = 4 / 255^2) appears as sigma2^2 (Q16) / 16384 / 65025. */
void qm_vif_num_den(const QmVifAccum *a, float *num, float *den)
{
    *num = (float)(a->num_log / 2048.0 +
                   (a->den_non_log - (a->num_non_log / 16384.0) / 65025.0));
    *den = (float)(a->den_log / 2048.0 + a->den_non_log);
}

double qm_vif_scale_score(const QmVifAccum *a)
{
    float num, den;
    qm_vif_num_den(a, &num, &den);
    return (double)(num / den);
}

/* ---- stage table ---- */

#ifdef QM_HAVE_VIF_AVX512
/* The AVX-512 twins compute most log2 table entries instead of reading
 * them; qm_vif_log2_check_avx512() checks that against the whole table
 * once per process (and sets how much of it they read, vif_avx512.c).
 * Concurrent first calls compute and store the same answer. */
static bool avx512_log2_ok(void)
{
    static int state;  /* 0 unknown, 1 usable, 2 not */
    int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (!st) {
        uint16_t *tab = malloc(QM_VIF_LOG2_TABLE_SIZE * sizeof(uint16_t));
        if (!tab)
            return false;  /* asked again next time */
        qm_vif_log2_table(tab);
        st = qm_vif_log2_check_avx512(tab) ? 1 : 2;
        free(tab);
        __atomic_store_n(&state, st, __ATOMIC_RELEASE);
    }
    return st == 1;
}
#endif

void qm_vif_dsp_init(QmVifDsp *dsp, unsigned flags)
{
    dsp->stat = qm_vif_stat_cpu;
    dsp->decimate = qm_vif_decimate_cpu;
    dsp->terms = qm_vif_terms_cpu;
#ifdef QM_HAVE_VIF_AVX2
    if (flags & QM_CPU_AVX2) {
        dsp->stat = qm_vif_stat_avx2;
        dsp->decimate = qm_vif_decimate_avx2;
        dsp->terms = qm_vif_terms_avx2;
    }
#endif
#ifdef QM_HAVE_VIF_AVX512
    if ((flags & QM_CPU_AVX512) && avx512_log2_ok()) {
        dsp->stat = qm_vif_stat_avx512;
        dsp->decimate = qm_vif_decimate_avx512;
        dsp->terms = qm_vif_terms_avx512;
    }
#endif
    (void)flags;
}

/* ---- the metric ---- */

/* Index of each option in vif_options[] (alphabetical, see metric.h). */
enum { OPT_EGL = QM_VIF_OPT_EGL, OPT_SKIP_SCALE0 = QM_VIF_OPT_SKIP_SCALE0 };

/* Smallest picture: 16 x 16, so that scale 3 (w / 8 x h / 8) is at least
 * 2 x 2.  On a 1-sample-wide scale libvmaf's mirrored padding reads a
 * sample it has not written for this picture, so its result is not
 * defined there. */
#define VIF_MIN_SIZE 16

typedef struct VifState {
    int w[QM_VIF_SCALES], h[QM_VIF_SCALES];
    int bpc;
    bool skip_scale0;
    QmVifParams params;
    QmVifDsp dsp;
    uint16_t *log2_tab;
    /* scales 1..3: decimated ref and dis, tightly packed uint16_t */
    uint16_t *ref[QM_VIF_SCALES], *dis[QM_VIF_SCALES];
    void *scratch;
} VifState;

static void vif_close(void *priv)
{
    VifState *s = priv;
    for (int i = 1; i < QM_VIF_SCALES; i++) {
        free(s->ref[i]);
        free(s->dis[i]);
        s->ref[i] = s->dis[i] = NULL;
    }
    free(s->log2_tab);
    free(s->scratch);
    s->log2_tab = NULL;
    s->scratch = NULL;
}

static int vif_init(void *priv, const QmMetricConfig *cfg)
{
    VifState *s = priv;
    memset(s, 0, sizeof(*s));
    if (cfg->w < VIF_MIN_SIZE || cfg->h < VIF_MIN_SIZE)
        return QM_ENOTSUP;
    if (cfg->bpc < 8 || cfg->bpc > 16)
        return QM_ENOTSUP;
    s->bpc = cfg->bpc;
    qm_vif_dsp_init(&s->dsp, qm_cpu_flags());
    s->params.enhn_gain_limit = cfg->opt->v[OPT_EGL];
    s->skip_scale0 = cfg->opt->v[OPT_SKIP_SCALE0] != 0.0;
    s->w[0] = cfg->w;
    s->h[0] = cfg->h;
    for (int i = 1; i < QM_VIF_SCALES; i++) {
        s->w[i] = s->w[i - 1] / 2;
        s->h[i] = s->h[i - 1] / 2;
    }
    s->log2_tab = malloc(QM_VIF_LOG2_TABLE_SIZE * sizeof(uint16_t));
    s->scratch = malloc(qm_vif_scratch_size(cfg->w));
    int ok = s->log2_tab && s->scratch;
    for (int i = 1; ok && i < QM_VIF_SCALES; i++) {
        const size_t n = (size_t)s->w[i] * (size_t)s->h[i];
        s->ref[i] = malloc(n * sizeof(uint16_t));
        s->dis[i] = malloc(n * sizeof(uint16_t));
        ok = s->ref[i] && s->dis[i];
    }
    if (!ok) {
        vif_close(s);
        return QM_ENOMEM;
    }
    qm_vif_log2_table(s->log2_tab);
    s->params.log2_tab = s->log2_tab;
    return 0;
}

static int vif_compute(void *priv, const QmFrame *fr, QmRows *out)
{
    VifState *s = priv;
    const void *ref = fr->ref->data[0], *dis = fr->dist->data[0];
    ptrdiff_t ref_stride = fr->ref->stride[0], dis_stride = fr->dist->stride[0];
    int in_bits = s->bpc;
    for (int sc = 0; sc < QM_VIF_SCALES; sc++) {
        if (sc > 0) {
            const ptrdiff_t ostride = (ptrdiff_t)s->w[sc] * (ptrdiff_t)sizeof(uint16_t);
            s->dsp.decimate(ref, ref_stride, dis, dis_stride, s->w[sc - 1],
                            s->h[sc - 1], in_bits, sc - 1, s->ref[sc],
                            s->dis[sc], ostride, s->scratch);
            ref = s->ref[sc];
            dis = s->dis[sc];
            ref_stride = dis_stride = ostride;
            in_bits = 16;  /* decimated pictures: normalised sample x 2^8 */
        }
        if (sc == 0 && s->skip_scale0) {
            /* libvmaf vif_skip_scale0: scale 0 is not computed, 0 reported */
            qm_rows_set(out, 0, 0, 0.0);
            continue;
        }
        QmVifAccum acc = { 0 };
        s->dsp.stat(ref, ref_stride, dis, dis_stride, s->w[sc], s->h[sc],
                    in_bits, sc, &s->params, s->scratch, &acc);
        qm_rows_set(out, 0, (unsigned)sc, qm_vif_scale_score(&acc));
    }
    return 0;
}

extern const struct QmCudaFuncs qm_cuda_vif;  /* cuda/vif.cu */

static const char *const vif_features[] = {
    "integer_vif_scale0", "integer_vif_scale1", "integer_vif_scale2",
    "integer_vif_scale3", NULL,
};

static const QmOptionDesc vif_options[] = {
    /* libvmaf integer_vif.h DEFAULT_VIF_ENHN_GAIN_LIMIT = 100.0, also the
     * maximum; vmaf_v0.6.1neg sets 1.0 (no enhancement credited) */
    { "vif_enhn_gain_limit", "egl",
      "enhancement gain imposed on vif, >= 1.0 (1.0: no gain credited)",
      100.0, 1.0, 100.0, QM_OPT_IN_KEY },
    { "vif_skip_scale0", "ssclz", "skip scale 0 (reported as 0)",
      0.0, 0.0, 1.0, QM_OPT_BOOL | QM_OPT_IN_KEY },
    { NULL },
};

const QmMetricDesc qm_metric_vif = {
    .name = "vif",
    .display = "VIF",
    .description = "VIF at 4 scales (libvmaf integer_vif, bit-exact)",
    .scale = { "ratio", +1, 0, NAN },
    .features = vif_features,
    .options = vif_options,
    .flags = QM_METRIC_LUMA_ONLY | QM_METRIC_NO_CHROMA | QM_METRIC_MODEL_INPUT,
    .min_w = VIF_MIN_SIZE,
    .min_h = VIF_MIN_SIZE,
    .cpu = {
        .priv_size = sizeof(VifState),
        .init = vif_init,
        .compute = vif_compute,
        .close = vif_close,
    },
    .cuda = QM_CUDA_TWIN(qm_cuda_vif),
    /* the four sums of every scale are integers (exact in any order) and
     * the per-pixel terms repeat the C arithmetic: bit-identical */
    .cuda_tol = 0,
};
