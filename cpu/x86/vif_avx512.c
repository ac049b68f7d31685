/* gst-qmetric: AVX-512 (F, BW, VL, DQ) twins of the VIF stages.
 * cpu/vif.c is the specification; the method is vif_avx2.c's (read its
 * opening comment first), on 32 columns per block instead of 16, with
 * masked loads and stores for the last block of a row and __mmask lanes.
 * Two things differ: the row filter cuts its shifted vectors out of
 * aligned ones, and most log2 table entries are computed rather than read
 * (see "log2" below).  The only fused multiply-adds are in that log2
 * approximation (explicit intrinsics); the double arithmetic that must
 * match the C code is written with separate operations and the build has
 * -ffp-contract=off.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "vif.h"
#include "x86/vif_x86.h"

#define INLINE static inline __attribute__((always_inline))
#define BLOCK 32

static const int vif_taps[QM_VIF_SCALES] = { 17, 9, 5, 3 };

/* 32 samples of a row, those outside m read as 0 (masked loads never
 * touch memory outside the mask; plain loads are a little faster, so whole
 * blocks use those). */
INLINE __m512i load_u8(const uint8_t *p, __mmask32 m)
{
    return _mm512_cvtepu8_epi16(m == (__mmask32)~0u ? _mm256_loadu_si256((const __m256i *)p)
                                                    : _mm256_maskz_loadu_epi8(m, p));
}

INLINE __m512i load_u16(const uint8_t *p, __mmask32 m)
{
    return m == (__mmask32)~0u ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi16(m, p);
}

INLINE __mmask32 cols_mask(int left)
{
    return left >= BLOCK ? (__mmask32)~0u : (__mmask32)((1u << left) - 1);
}

INLINE __m512i bias16(__m512i v)
{
    return _mm512_xor_si512(v, _mm512_set1_epi16((short)0x8000));
}

/* acc += pmaddwd of the interleaved (a[i], b[i]) with weights w: acc[0]
 * holds columns 0-3, 8-11, 16-19, 24-27, acc[1] the others. */
INLINE void madd_rows(__m512i acc[2], __m512i a, __m512i b, __m512i w)
{
    acc[0] = _mm512_add_epi32(acc[0], _mm512_madd_epi16(_mm512_unpacklo_epi16(a, b), w));
    acc[1] = _mm512_add_epi32(acc[1], _mm512_madd_epi16(_mm512_unpackhi_epi16(a, b), w));
}

/* Low and high 16 bits of such an acc[2] pair, in column order. */
INLINE void split32(const __m512i v[2], __m512i *lo16, __m512i *hi16)
{
    const __m512i sh = _mm512_set4_epi32(0x0F0E0B0A, 0x07060302, 0x0D0C0908, 0x05040100);
    const __m512i a = _mm512_shuffle_epi8(v[0], sh), b = _mm512_shuffle_epi8(v[1], sh);
    *lo16 = _mm512_unpacklo_epi64(a, b);
    if (hi16)
        *hi16 = _mm512_unpackhi_epi64(a, b);
}

INLINE void store_lo16(uint16_t *dst, const __m512i v[2])
{
    __m512i lo;
    split32(v, &lo, NULL);
    _mm512_storeu_si512(dst, bias16(lo));
}

INLINE void store_split(uint16_t *dl, uint16_t *dh, const __m512i v[2])
{
    __m512i lo, hi;
    split32(v, &lo, &hi);
    _mm512_storeu_si512(dl, bias16(lo));
    _mm512_storeu_si512(dh, bias16(hi));
}

/* ---- stage 1: vertical pass (vif_avx2.c vert8 / vert16) ---- */

INLINE void vert8(const uint8_t *const *r, const uint8_t *const *d,
                  const int taps, const __m512i *wp, ptrdiff_t x, __mmask32 m,
                  uint16_t *const *st)
{
    const int half = taps / 2;
    const __m512i k128 = _mm512_set1_epi16(128);
    const __m512i bq = _mm512_set1_epi16(1 << 14), br = _mm512_set1_epi16(1 << 7);
    __m512i s1[2], s2[2], q1[2], q2[2], q12[2];
    s1[0] = s1[1] = s2[0] = s2[1] = _mm512_set1_epi32((1 << 23) + 128);
    q1[0] = q1[1] = q2[0] = q2[1] =
        _mm512_set1_epi32((int32_t)((1u << 29) - (1u << 30) - (1u << 15)));
    q12[0] = q12[1] = _mm512_set1_epi32((int32_t)((1u << 22) - (1u << 30) - (1u << 15)));
    for (int k = 0; k <= half; k += 2) {
        __m512i i1[2], i2[2], iq1[2], iq2[2], iq12[2];
        for (int n = 0; n < 2; n++) {
            const int i = k + n;
            if (i > half) {
                i1[n] = i2[n] = iq1[n] = iq2[n] = iq12[n] = _mm512_setzero_si512();
                continue;
            }
            const __m512i ct = _mm512_sub_epi16(load_u8(r[i] + x, m), k128);
            const __m512i et = _mm512_sub_epi16(load_u8(d[i] + x, m), k128);
            const __m512i cb = i == half ? ct : _mm512_sub_epi16(load_u8(r[taps - 1 - i] + x, m), k128);
            const __m512i eb = i == half ? et : _mm512_sub_epi16(load_u8(d[taps - 1 - i] + x, m), k128);
            i1[n] = _mm512_add_epi16(ct, cb);
            i2[n] = _mm512_add_epi16(et, eb);
            iq1[n] = _mm512_sub_epi16(_mm512_add_epi16(_mm512_mullo_epi16(ct, ct),
                                                       _mm512_mullo_epi16(cb, cb)), bq);
            iq2[n] = _mm512_sub_epi16(_mm512_add_epi16(_mm512_mullo_epi16(et, et),
                                                       _mm512_mullo_epi16(eb, eb)), bq);
            iq12[n] = _mm512_sub_epi16(_mm512_add_epi16(_mm512_mullo_epi16(ct, et),
                                                        _mm512_mullo_epi16(cb, eb)), br);
        }
        const __m512i w = wp[k / 2];
        madd_rows(s1, i1[0], i1[1], w);
        madd_rows(s2, i2[0], i2[1], w);
        madd_rows(q1, iq1[0], iq1[1], w);
        madd_rows(q2, iq2[0], iq2[1], w);
        madd_rows(q12, iq12[0], iq12[1], w);
    }
    __m512i v[2];
    for (int h = 0; h < 2; h++) {
        q1[h] = _mm512_add_epi32(q1[h], _mm512_slli_epi32(s1[h], 8));
        q2[h] = _mm512_add_epi32(q2[h], _mm512_slli_epi32(s2[h], 8));
        q12[h] = _mm512_add_epi32(q12[h], _mm512_slli_epi32(_mm512_add_epi32(s1[h], s2[h]), 7));
    }
    v[0] = _mm512_srli_epi32(s1[0], 8);
    v[1] = _mm512_srli_epi32(s1[1], 8);
    store_lo16(st[VIF_X86_MU1] + x, v);
    v[0] = _mm512_srli_epi32(s2[0], 8);
    v[1] = _mm512_srli_epi32(s2[1], 8);
    store_lo16(st[VIF_X86_MU2] + x, v);
    store_split(st[VIF_X86_XXL] + x, st[VIF_X86_XXH] + x, q1);
    store_split(st[VIF_X86_YYL] + x, st[VIF_X86_YYH] + x, q2);
    store_split(st[VIF_X86_XYL] + x, st[VIF_X86_XYH] + x, q12);
}

typedef struct Vert16Shifts {
    __m128i mu, sq, hi;         /* in_bits, 2 (in_bits - 8), 16 - that */
    __m512i mu_init, lo_init;   /* 2^31 bias plus the rounding */
    __m512i mu_init15, lo_init15;  /* vert15: the rounding, 2^30 plus it */
} Vert16Shifts;

INLINE void vert16(const uint8_t *const *r, const uint8_t *const *d,
                   const int taps, const __m512i *ww, ptrdiff_t x, __mmask32 m,
                   const Vert16Shifts *vs, uint16_t *const *st)
{
    const int half = taps / 2;
    const ptrdiff_t xb = 2 * x;
    __m512i a[VIF_X86_STREAMS][2];
    const __m512i hi_init = _mm512_set1_epi32(INT32_MIN);
    for (int h = 0; h < 2; h++) {
        a[VIF_X86_MU1][h] = a[VIF_X86_MU2][h] = vs->mu_init;
        a[VIF_X86_XXL][h] = a[VIF_X86_YYL][h] = a[VIF_X86_XYL][h] = vs->lo_init;
        a[VIF_X86_XXH][h] = a[VIF_X86_YYH][h] = a[VIF_X86_XYH][h] = hi_init;
    }
    for (int k = 0; k <= half; k++) {
        const __m512i xt = load_u16(r[k] + xb, m), yt = load_u16(d[k] + xb, m);
        const __m512i xbm = k == half ? xt : load_u16(r[taps - 1 - k] + xb, m);
        const __m512i ybm = k == half ? yt : load_u16(d[taps - 1 - k] + xb, m);
        const __m512i w = ww[k];
        madd_rows(a[VIF_X86_MU1], bias16(xt), bias16(xbm), w);
        madd_rows(a[VIF_X86_MU2], bias16(yt), bias16(ybm), w);
        madd_rows(a[VIF_X86_XXL], bias16(_mm512_mullo_epi16(xt, xt)),
                  bias16(_mm512_mullo_epi16(xbm, xbm)), w);
        madd_rows(a[VIF_X86_XXH], bias16(_mm512_mulhi_epu16(xt, xt)),
                  bias16(_mm512_mulhi_epu16(xbm, xbm)), w);
        madd_rows(a[VIF_X86_YYL], bias16(_mm512_mullo_epi16(yt, yt)),
                  bias16(_mm512_mullo_epi16(ybm, ybm)), w);
        madd_rows(a[VIF_X86_YYH], bias16(_mm512_mulhi_epu16(yt, yt)),
                  bias16(_mm512_mulhi_epu16(ybm, ybm)), w);
        madd_rows(a[VIF_X86_XYL], bias16(_mm512_mullo_epi16(xt, yt)),
                  bias16(_mm512_mullo_epi16(xbm, ybm)), w);
        madd_rows(a[VIF_X86_XYH], bias16(_mm512_mulhi_epu16(xt, yt)),
                  bias16(_mm512_mulhi_epu16(xbm, ybm)), w);
    }
    __m512i v[2];
    for (int s = VIF_X86_MU1; s <= VIF_X86_MU2; s++) {
        v[0] = _mm512_srl_epi32(a[s][0], vs->mu);
        v[1] = _mm512_srl_epi32(a[s][1], vs->mu);
        store_lo16(st[s] + x, v);
    }
    for (int s = VIF_X86_XXL; s < VIF_X86_STREAMS; s += 2) {
        for (int h = 0; h < 2; h++)
            v[h] = _mm512_add_epi32(_mm512_sll_epi32(a[s + 1][h], vs->hi),
                                    _mm512_srl_epi32(a[s][h], vs->sq));
        store_split(st[s] + x, st[s + 1] + x, v);
    }
}

/* Samples below 2^15 (9- to 15-bit pictures): a row pair (x_t, x_b)
 * interleaved then gives, through pmaddwd, both the weighted mean and,
 * multiplied by itself (or by its dis twin), the item x_t^2 + x_b^2 (x_t
 * y_t + x_b y_b), below 2^31: no bias, half the multiplies.  The items of
 * two row pairs are then cut into 16-bit halves side by side, pairs for
 * pmaddwd with the weights (g[k], g[k + 1]) as in vert8: low halves biased
 * (the weights sum to 2^15, so that is 2^30 in all), high halves below 2^15
 * as they are. */
INLINE void vert15(const uint8_t *const *r, const uint8_t *const *d,
                   const int taps, const __m512i *wp, const __m512i *ww,
                   ptrdiff_t x, __mmask32 m, const Vert16Shifts *vs,
                   uint16_t *const *st)
{
    const int half = taps / 2;
    const ptrdiff_t xb = 2 * x;
    const __m512i lo_bias = _mm512_set1_epi32((int32_t)0x80008000u);
    enum { XX, YY, XY };
    __m512i mu1[2], mu2[2], lo[3][2], hi[3][2];
    for (int h = 0; h < 2; h++) {
        mu1[h] = mu2[h] = vs->mu_init15;
        for (int q = XX; q <= XY; q++) {
            lo[q][h] = vs->lo_init15;
            hi[q][h] = _mm512_setzero_si512();
        }
    }
    for (int k = 0; k <= half; k += 2) {
        __m512i it[2][3][2];  /* [item][moment][half] */
        for (int n = 0; n < 2; n++) {
            const int i = k + n;
            if (i > half) {
                for (int q = XX; q <= XY; q++)
                    it[n][q][0] = it[n][q][1] = _mm512_setzero_si512();
                continue;
            }
            const __m512i xt = load_u16(r[i] + xb, m), yt = load_u16(d[i] + xb, m);
            const __m512i xbm = i == half ? xt : load_u16(r[taps - 1 - i] + xb, m);
            const __m512i ybm = i == half ? yt : load_u16(d[taps - 1 - i] + xb, m);
            const __m512i px[2] = { _mm512_unpacklo_epi16(xt, xbm), _mm512_unpackhi_epi16(xt, xbm) };
            const __m512i py[2] = { _mm512_unpacklo_epi16(yt, ybm), _mm512_unpackhi_epi16(yt, ybm) };
            for (int h = 0; h < 2; h++) {
                mu1[h] = _mm512_add_epi32(mu1[h], _mm512_madd_epi16(px[h], ww[i]));
                mu2[h] = _mm512_add_epi32(mu2[h], _mm512_madd_epi16(py[h], ww[i]));
                it[n][XX][h] = _mm512_madd_epi16(px[h], px[h]);
                it[n][YY][h] = _mm512_madd_epi16(py[h], py[h]);
                it[n][XY][h] = _mm512_madd_epi16(px[h], py[h]);
            }
        }
        const __m512i w = wp[k / 2];
        for (int q = XX; q <= XY; q++) {
            for (int h = 0; h < 2; h++) {
                const __m512i a = it[0][q][h], b = it[1][q][h];
                const __m512i l = _mm512_xor_si512(_mm512_mask_blend_epi16(
                    0xAAAAAAAA, a, _mm512_slli_epi32(b, 16)), lo_bias);
                const __m512i u = _mm512_mask_blend_epi16(0xAAAAAAAA, _mm512_srli_epi32(a, 16), b);
                lo[q][h] = _mm512_add_epi32(lo[q][h], _mm512_madd_epi16(l, w));
                hi[q][h] = _mm512_add_epi32(hi[q][h], _mm512_madd_epi16(u, w));
            }
        }
    }
    __m512i v[2];
    v[0] = _mm512_srl_epi32(mu1[0], vs->mu);
    v[1] = _mm512_srl_epi32(mu1[1], vs->mu);
    store_lo16(st[VIF_X86_MU1] + x, v);
    v[0] = _mm512_srl_epi32(mu2[0], vs->mu);
    v[1] = _mm512_srl_epi32(mu2[1], vs->mu);
    store_lo16(st[VIF_X86_MU2] + x, v);
    static const int out[3] = { VIF_X86_XXL, VIF_X86_YYL, VIF_X86_XYL };
    for (int q = XX; q <= XY; q++) {
        for (int h = 0; h < 2; h++)
            v[h] = _mm512_add_epi32(_mm512_sll_epi32(hi[q][h], vs->hi),
                                    _mm512_srl_epi32(lo[q][h], vs->sq));
        store_split(st[out[q]] + x, st[out[q] + 1] + x, v);
    }
}

/* ---- stage 1: horizontal pass and the per-pixel terms ---- */

/* vif_x86_col_words() as vectors */
static void col_weights(int scale, __m512i *wp, __m512i *ww)
{
    uint32_t pair[(QM_VIF_MAX_HALF + 2) / 2], dup[QM_VIF_MAX_HALF + 1];
    const int half = vif_x86_col_words(scale, pair, dup);
    for (int k = 0; k <= half; k += 2)
        wp[k / 2] = _mm512_set1_epi32((int32_t)pair[k / 2]);
    for (int k = 0; k <= half; k++)
        ww[k] = _mm512_set1_epi32((int32_t)dup[k]);
}

/* the weights of vif_x86_row_weights() as vectors */
typedef struct RowW {
    __m512i e[QM_VIF_MAX_HALF + 2][2], o[QM_VIF_MAX_HALF + 2][2];
} RowW;

static void row_weights(int scale, RowW *rw)
{
    VifX86RowWeights w;
    vif_x86_row_weights(scale, &w);
    for (int l = 0; l < QM_VIF_MAX_HALF + 2; l++) {
        for (int q = 0; q < 2; q++) {
            rw->e[l][q] = _mm512_set1_epi32((int32_t)w.e[l][q]);
            rw->o[l][q] = _mm512_set1_epi32((int32_t)w.o[l][q]);
        }
    }
}

/* ---- log2, computed where that is safe ----
 * The C code reads log2 from qm_vif_log2_table(): entry 2^15 + m (0 <= m <
 * 2^15) is round(2048 log2f(2^15 + m)), log2f in float as libvmaf computes
 * it.  Reading three entries per pixel costs more than computing them 16
 * lanes at a time in float: entry 2^15 + m = 2048 * 15 + U(m),
 *   U(m) = 2048 log2(y), y = 1 + m / 2^15, rounded,
 * and with c the centre 1 + (2 q + 1) / 32 of the sixteenth q of [1, 2)
 * holding y, 2048 log2(y) = 2048 log2(c) + 2048 log2(1 + r), r = (y - c)
 * / c, |r| <= 1/33.  y - c is exact in float; 2048 log2(c) is kept as an
 * integer plus a float remainder; the Taylor series of 2048 log2(1 + r) to
 * degree 5 is within 2955 |r|^6 / 6 < 4e-7 of it; the float roundings add
 * less than 5e-5.  log2f's own error (under one float ulp, 2048 * 2^-20 =
 * 0.002 after the scaling, in glibc) moves the table's rounding off the
 * exact one only where 2048 log2 lies that close to a tie (38 entries with
 * glibc 2.36).  So values within a band around a tie are read from the
 * table instead.  The band starts at 0.003 (1.5 float ulps); once per
 * process qm_vif_dsp_init() runs qm_vif_log2_check_avx512(), which
 * computes every entry and narrows the band to just cover the entries the
 * rounding alone gets wrong (about 0.001 with glibc: a fraction of a
 * percent of the values then come from the table), or, were that band
 * wider than 0.003, keeps the AVX2 stages.  tests/checkasm compares the
 * twin with the table at every index. */
static int log2_band_ppm = 3000;  /* the band in millionths */

typedef struct Log2Ctx {
    const uint16_t *tab;
    __m512 inv;     /* 1 / c_q, q = 0..15 */
    __m512i lg_hi;  /* round(2048 log2(c_q)) */
    __m512 lg_lo;   /* 2048 log2(c_q) - lg_hi */
    __m512 a[6];    /* a[n] = (-1)^(n+1) 2048 / (n ln 2) */
    __m512 tie;     /* 0.5 - band */
} Log2Ctx;

static void log2_init(Log2Ctx *l, const uint16_t *tab)
{
    float inv[16], lo[16];
    int32_t hi[16];
    for (int q = 0; q < 16; q++) {
        const double c = 1.0 + (2 * q + 1) / 32.0, v = 2048.0 * log2(c);
        inv[q] = (float)(1.0 / c);
        hi[q] = (int32_t)lround(v);
        lo[q] = (float)(v - hi[q]);
    }
    l->tab = tab;
    l->inv = _mm512_loadu_ps(inv);
    l->lg_hi = _mm512_loadu_si512(hi);
    l->lg_lo = _mm512_loadu_ps(lo);
    for (int n = 1; n <= 5; n++)
        l->a[n] = _mm512_set1_ps((float)((n & 1 ? 2048.0 : -2048.0) / (n * M_LN2)));
    l->tie = _mm512_set1_ps(0.5f - 1e-6f * __atomic_load_n(&log2_band_ppm, __ATOMIC_RELAXED));
}

/* The table entries 2^15 + m of the lanes in `tie`, out of line: about
 * one block of 16 pixels in ten needs it (natural video, glibc's band). */
static __attribute__((noinline)) __m512i
log2_from_table(__m512i u, __m512i m, __mmask16 tie, const uint16_t *tab)
{
    /* a 32-bit read ending at the entry, one entry early */
    const __m512i e = _mm512_srli_epi32(_mm512_mask_i32gather_epi32(
        _mm512_setzero_si512(), tie, _mm512_add_epi32(m, _mm512_set1_epi32(0x8000 - 1)),
        (const int *)tab, 2), 16);
    return _mm512_mask_sub_epi32(u, tie, e, _mm512_set1_epi32(2048 * 15));
}

/* Table entry 2^15 + m, minus 2048 * 15, for 0 <= m < 2^15, unless the
 * lane is in *tie (within the band around a rounding tie; lanes in `act`
 * only): log2_from_table() then has the last word. */
INLINE __m512i log2_u(__m512i m, __mmask16 act, const Log2Ctx *l, __mmask16 *tie)
{
    /* y = 1 + m / 2^15 and c, the centre of its sixteenth, as float bits */
    const __m512i yb = _mm512_or_si512(_mm512_slli_epi32(m, 8), _mm512_set1_epi32(0x3F800000));
    const __m512i cb = _mm512_ternarylogic_epi32(yb, _mm512_set1_epi32(~0x7FFFF),
                                                 _mm512_set1_epi32(0x40000), 0xEA);
    const __m512i q = _mm512_srli_epi32(m, 11);
    const __m512 r = _mm512_mul_ps(_mm512_sub_ps(_mm512_castsi512_ps(yb), _mm512_castsi512_ps(cb)),
                                   _mm512_permutexvar_ps(q, l->inv));
    __m512 p = l->a[5];
    for (int n = 4; n >= 1; n--)
        p = _mm512_fmadd_ps(p, r, l->a[n]);
    const __m512 v = _mm512_fmadd_ps(p, r, _mm512_permutexvar_ps(q, l->lg_lo));
    /* v minus v rounded to the nearest integer (vreduceps), in [-0.5, 0.5] */
    const __m512 f = _mm512_reduce_ps(v, _MM_FROUND_TO_NEAREST_INT);
    *tie = _mm512_mask_cmp_ps_mask(act, _mm512_abs_ps(f), l->tie, _CMP_GT_OQ);
    return _mm512_add_epi32(_mm512_permutexvar_epi32(q, l->lg_hi),
                            _mm512_cvttps_epi32(_mm512_sub_ps(v, f)));
}

typedef struct TermsCtx {
    __m512d egl;
    Log2Ctx log2;
} TermsCtx;

/* num and den gain at most 2 terms per lane per 32 columns, below 2^16
 * and 2^15 in magnitude; they and cnt are 32-bit lanes moved to 64 bits
 * after every row, so rows of fewer than 2^19 samples cannot overflow
 * them. */
typedef struct TermsAcc {
    __m512i num, den, cnt;            /* 16 x int32 */
    __m512i num64, den64, cnt64, nonlog;  /* 8 x int64 */
} TermsAcc;

INLINE __m512i add_wide(__m512i acc64, __m512i v32)
{
    return _mm512_add_epi64(acc64, _mm512_add_epi64(
        _mm512_cvtepu32_epi64(_mm512_castsi512_si256(v32)),
        _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(v32, 1))));
}

INLINE __m512i add_wide_signed(__m512i acc64, __m512i v32)
{
    return _mm512_add_epi64(acc64, _mm512_add_epi64(
        _mm512_cvtepi32_epi64(_mm512_castsi512_si256(v32)),
        _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(v32, 1))));
}

/* numer1 and numer2 of 8 pixels (vif.c qm_vif_terms_cpu), where the
 * numerator term is log2_q11_64(numer2) - log2_q11_64(numer1); both hold
 * integers below 2^53 exactly. */
INLINE void numers8(__m256i s11, __m256i s22, __m256i s12, const TermsCtx *c,
                    __m512d *numer1, __m512d *numer2)
{
    const __m512d eps = _mm512_set1_pd(65536 * 1.0e-10);
    const __m512d d11 = _mm512_cvtepi32_pd(s11), d22 = _mm512_cvtepi32_pd(s22);
    const __m512d d12 = _mm512_cvtepi32_pd(s12);
    __m512d g = _mm512_div_pd(d12, _mm512_add_pd(d11, eps));
    const __m512d sv = _mm512_sub_pd(d22, _mm512_mul_pd(g, d12));
    const __m512d sv_sq = _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(sv, _mm512_set1_pd(1.0), _CMP_GE_OQ),
                                              _mm512_roundscale_pd(sv, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
    *numer1 = _mm512_add_pd(sv_sq, _mm512_set1_pd(2 << 16));
    g = _mm512_min_pd(g, c->egl);
    *numer2 = _mm512_add_pd(_mm512_roundscale_pd(_mm512_mul_pd(_mm512_mul_pd(g, g), d11),
                                                 _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), *numer1);
}

/* Of two vectors of 8 doubles holding integers >= 2^15: m (the 15 bits
 * after the leading one) and floor(log2) + 1023, as 16 int32 lanes. */
INLINE void split16(__m512d lo, __m512d hi, __m512i *m, __m512i *e)
{
    const __m512i bl = _mm512_castpd_si512(lo), bh = _mm512_castpd_si512(hi);
    const __m512i k = _mm512_set1_epi64(0x7FFF);
    *m = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(
             _mm512_and_si512(_mm512_srli_epi64(bl, 52 - 15), k))),
         _mm512_cvtepi64_epi32(_mm512_and_si512(_mm512_srli_epi64(bh, 52 - 15), k)), 1);
    *e = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(_mm512_srli_epi64(bl, 52))),
                            _mm512_cvtepi64_epi32(_mm512_srli_epi64(bh, 52)), 1);
}

/* The terms of 16 pixels; lanes outside `valid` are left out.  With
 * log2_q11(v) = entry(16 leading bits) + 2048 k, k = floor(log2 v) - 15:
 *   den term = U(x) + 2048 (floor(log2 x) - 17), x = s11 + 2^17,
 *   num term = U(numer2) - U(numer1)
 *              + 2048 (floor(log2 numer2) - floor(log2 numer1)). */
INLINE void terms16(__m512i s11, __m512i s22, __m512i s12, __mmask16 valid,
                    const TermsCtx *c, TermsAcc *a)
{
    const __m512i nsq = _mm512_set1_epi32(2 << 16);
    const __mmask16 fl = _mm512_mask_cmplt_epi32_mask(valid, s11, nsq);
    const __mmask16 lg = valid & ~fl;
    a->cnt = _mm512_mask_sub_epi32(a->cnt, fl, a->cnt, _mm512_set1_epi32(-1));
    a->nonlog = add_wide(a->nonlog, _mm512_maskz_mov_epi32(fl, s22));
    if (!lg)
        return;
    /* den: floor(log2 x) from the exponent of x >> 8 (below 2^24: exact in
     * float; x >= 2^18 here), then m = (x >> k) - 2^15 */
    const __m512i x = _mm512_add_epi32(s11, nsq);
    const __m512i ex = _mm512_sub_epi32(_mm512_srli_epi32(
        _mm512_castps_si512(_mm512_cvtepi32_ps(_mm512_srli_epi32(x, 8))), 23),
        _mm512_set1_epi32(127 - 8));
    const __m512i mx = _mm512_and_si512(_mm512_srlv_epi32(x, _mm512_sub_epi32(ex, _mm512_set1_epi32(15))),
                                        _mm512_set1_epi32(0x7FFF));
    __mmask16 t0, t1 = 0, t2 = 0;
    __m512i ux = log2_u(mx, lg, &c->log2, &t0);

    const __mmask16 nm = _mm512_mask_cmpgt_epi32_mask(
        _mm512_mask_cmpgt_epi32_mask(lg, s12, _mm512_setzero_si512()), s22, _mm512_setzero_si512());
    __m512i m1, m2, e1, e2, u1, u2;
    m1 = m2 = e1 = e2 = u1 = u2 = _mm512_setzero_si512();
    if (nm) {
        __m512d n1[2], n2[2];
        numers8(_mm512_castsi512_si256(s11), _mm512_castsi512_si256(s22),
                _mm512_castsi512_si256(s12), c, &n1[0], &n2[0]);
        numers8(_mm512_extracti64x4_epi64(s11, 1), _mm512_extracti64x4_epi64(s22, 1),
                _mm512_extracti64x4_epi64(s12, 1), c, &n1[1], &n2[1]);
        split16(n1[0], n1[1], &m1, &e1);
        split16(n2[0], n2[1], &m2, &e2);
        u1 = log2_u(m1, nm, &c->log2, &t1);
        u2 = log2_u(m2, nm, &c->log2, &t2);
    }
    if (__builtin_expect((t0 | t1 | t2) != 0, 0)) {
        if (t0)
            ux = log2_from_table(ux, mx, t0, c->log2.tab);
        if (t1)
            u1 = log2_from_table(u1, m1, t1, c->log2.tab);
        if (t2)
            u2 = log2_from_table(u2, m2, t2, c->log2.tab);
    }
    a->den = _mm512_mask_add_epi32(a->den, lg, a->den, _mm512_add_epi32(ux, _mm512_slli_epi32(
        _mm512_sub_epi32(ex, _mm512_set1_epi32(17)), 11)));
    if (nm)
        a->num = _mm512_mask_add_epi32(a->num, nm, a->num, _mm512_add_epi32(
            _mm512_sub_epi32(u2, u1), _mm512_slli_epi32(_mm512_sub_epi32(e2, e1), 11)));
}

INLINE void terms_flush_row(TermsAcc *a)
{
    a->num64 = add_wide_signed(a->num64, a->num);
    a->den64 = add_wide_signed(a->den64, a->den);
    a->cnt64 = add_wide(a->cnt64, a->cnt);
    a->num = a->den = a->cnt = _mm512_setzero_si512();
}

INLINE void terms_finish(TermsAcc *a, QmVifAccum *acc)
{
    terms_flush_row(a);
    acc->num_log += _mm512_reduce_add_epi64(a->num64);
    acc->den_log += _mm512_reduce_add_epi64(a->den64);
    acc->num_non_log += _mm512_reduce_add_epi64(a->nonlog);
    acc->den_non_log += _mm512_reduce_add_epi64(a->cnt64);
}

INLINE void terms_init(TermsAcc *a, TermsCtx *c, const QmVifParams *p)
{
    a->num = a->den = a->cnt = _mm512_setzero_si512();
    a->num64 = a->den64 = a->cnt64 = a->nonlog = _mm512_setzero_si512();
    c->egl = _mm512_set1_pd(p->enhn_gain_limit);
    log2_init(&c->log2, p->log2_tab);
}

/* Samples j + off .. j + off + 31 (off even, |off| <= 8) of the aligned
 * vectors a, b, c at j - 32, j, j + 32 (valignd takes an immediate). */
INLINE __m512i cut(__m512i a, __m512i b, __m512i c, int off)
{
    switch (off) {
    case -8: return _mm512_alignr_epi32(b, a, 12);
    case -6: return _mm512_alignr_epi32(b, a, 13);
    case -4: return _mm512_alignr_epi32(b, a, 14);
    case -2: return _mm512_alignr_epi32(b, a, 15);
    case 0: return b;
    case 2: return _mm512_alignr_epi32(c, b, 1);
    case 4: return _mm512_alignr_epi32(c, b, 2);
    case 6: return _mm512_alignr_epi32(c, b, 3);
    default: return _mm512_alignr_epi32(c, b, 4);
    }
}

/* A biased stream filtered along the row for the 32 outputs at j: even
 * outputs in *e, odd ones in *o (vif_avx2.c hfilter). */
INLINE void hfilter(const uint16_t *s, ptrdiff_t j, const int half,
                    const RowW *rw, __m512i init, __m512i *e, __m512i *o)
{
    const int first = vif_x86_row_first(half);
    __m512i ae = init, ao = init;
    /* The vectors at j + off (off even, |off| <= 8) cut from three aligned
     * ones: a 64-byte load at an offset of 2 off bytes would always split
     * a cache line, which costs more here than a valignd. */
    const __m512i va = _mm512_load_si512(s + j - BLOCK), vb = _mm512_load_si512(s + j);
    const __m512i vc = _mm512_load_si512(s + j + BLOCK);
    for (int l = 0; l < vif_x86_row_loads(half); l++) {
        const __m512i v = cut(va, vb, vc, first + 2 * l);
        for (int q = 0; q < vif_x86_row_ne(half, l); q++)
            ae = _mm512_add_epi32(ae, _mm512_madd_epi16(v, rw->e[l][q]));
        for (int q = 0; q < vif_x86_row_no(half, l); q++)
            ao = _mm512_add_epi32(ao, _mm512_madd_epi16(v, rw->o[l][q]));
    }
    *e = ae;
    *o = ao;
}

/* (a b + 2^31) >> 32 per unsigned 32-bit lane */
INLINE __m512i mul_q32(__m512i a, __m512i b)
{
    const __m512i rnd = _mm512_set1_epi64(0x80000000);
    const __m512i ev = _mm512_add_epi64(_mm512_mul_epu32(a, b), rnd);
    const __m512i od = _mm512_add_epi64(_mm512_mul_epu32(_mm512_srli_epi64(a, 32),
                                                         _mm512_srli_epi64(b, 32)), rnd);
    return _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(ev, 32), od);
}

INLINE void stat_hblock(uint16_t *const *st, ptrdiff_t j, int w, const int taps,
                        const RowW *rw, const TermsCtx *c, TermsAcc *a)
{
    const int half = taps / 2;
    const __m512i bias = _mm512_set1_epi32(INT32_MIN);
    const __m512i bias_rnd = _mm512_set1_epi32((int32_t)(0x80000000u + 0x8000u));
    __m512i a1[2], a2[2], l[2], h[2];
    hfilter(st[VIF_X86_MU1], j, half, rw, bias, &a1[0], &a1[1]);
    hfilter(st[VIF_X86_MU2], j, half, rw, bias, &a2[0], &a2[1]);
    __m512i s11[2], s22[2], s12[2];
    hfilter(st[VIF_X86_XXL], j, half, rw, bias_rnd, &l[0], &l[1]);
    hfilter(st[VIF_X86_XXH], j, half, rw, bias, &h[0], &h[1]);
    for (int i = 0; i < 2; i++)
        s11[i] = _mm512_sub_epi32(_mm512_add_epi32(h[i], _mm512_srli_epi32(l[i], 16)),
                                  mul_q32(a1[i], a1[i]));
    hfilter(st[VIF_X86_YYL], j, half, rw, bias_rnd, &l[0], &l[1]);
    hfilter(st[VIF_X86_YYH], j, half, rw, bias, &h[0], &h[1]);
    for (int i = 0; i < 2; i++)
        s22[i] = _mm512_max_epi32(_mm512_sub_epi32(_mm512_add_epi32(h[i], _mm512_srli_epi32(l[i], 16)),
                                                   mul_q32(a2[i], a2[i])),
                                  _mm512_setzero_si512());
    hfilter(st[VIF_X86_XYL], j, half, rw, bias_rnd, &l[0], &l[1]);
    hfilter(st[VIF_X86_XYH], j, half, rw, bias, &h[0], &h[1]);
    for (int i = 0; i < 2; i++)
        s12[i] = _mm512_sub_epi32(_mm512_add_epi32(h[i], _mm512_srli_epi32(l[i], 16)),
                                  mul_q32(a1[i], a2[i]));
    /* lane i of the even outputs is output j + 2 i, of the odd ones j + 2 i + 1 */
    const int left = w - (int)j;
    const __mmask16 ve = left >= BLOCK ? 0xFFFF : (__mmask16)((1u << ((left + 1) / 2)) - 1);
    const __mmask16 vo = left >= BLOCK ? 0xFFFF : (__mmask16)((1u << (left / 2)) - 1);
    terms16(s11[0], s22[0], s12[0], ve, c, a);
    terms16(s11[1], s22[1], s12[1], vo, c, a);
}

INLINE void stat_scale(const void *ref, ptrdiff_t ref_stride, const void *dis,
                       ptrdiff_t dis_stride, int w, int h, int in_bits,
                       const int scale, const QmVifParams *p, void *scratch,
                       QmVifAccum *acc)
{
    const int taps = vif_taps[scale], half = taps / 2;
    uint16_t *st[VIF_X86_STREAMS];
    vif_x86_streams(scratch, w, st);

    __m512i wp[(QM_VIF_MAX_HALF + 2) / 2], ww[QM_VIF_MAX_HALF + 1];
    col_weights(scale, wp, ww);
    RowW rw;
    row_weights(scale, &rw);

    Vert16Shifts vs;
    const int sh_sq = 2 * (in_bits - 8);
    vs.mu = _mm_cvtsi32_si128(in_bits);
    vs.sq = _mm_cvtsi32_si128(sh_sq);
    vs.hi = _mm_cvtsi32_si128(16 - sh_sq);
    vs.mu_init = _mm512_set1_epi32((int32_t)(0x80000000u + (1u << (in_bits - 1))));
    vs.lo_init = _mm512_set1_epi32((int32_t)(0x80000000u + (sh_sq ? 1u << (sh_sq - 1) : 0)));
    vs.mu_init15 = _mm512_set1_epi32((int32_t)(1u << (in_bits - 1)));
    vs.lo_init15 = _mm512_set1_epi32((int32_t)((1u << 30) + (sh_sq ? 1u << (sh_sq - 1) : 0)));

    TermsCtx c;
    TermsAcc a;
    terms_init(&a, &c, p);
    const uint8_t *rr[2 * QM_VIF_MAX_HALF + 1], *dr[2 * QM_VIF_MAX_HALF + 1];
    for (int i = 0; i < h; i++) {
        vif_x86_window(rr, ref, ref_stride, i, h, taps);
        vif_x86_window(dr, dis, dis_stride, i, h, taps);
        for (int x = 0; x < w; x += BLOCK) {
            const __mmask32 m = cols_mask(w - x);
            if (in_bits == 8)
                vert8(rr, dr, taps, wp, x, m, st);
            else if (in_bits < 16)  /* samples below 2^15 (vif.h: in_bits bits) */
                vert15(rr, dr, taps, wp, ww, x, m, &vs, st);
            else
                vert16(rr, dr, taps, ww, x, m, &vs, st);
        }
        for (int s = 0; s < VIF_X86_STREAMS; s++)
            vif_x86_pad(st[s], w, half);
        for (int j = 0; j < w; j += BLOCK)
            stat_hblock(st, j, w, taps, &rw, &c, &a);
        terms_flush_row(&a);
    }
    terms_finish(&a, acc);
}

void qm_vif_stat_avx512(const void *ref, ptrdiff_t ref_stride, const void *dis,
                        ptrdiff_t dis_stride, int w, int h, int in_bits,
                        int scale, const QmVifParams *p, void *scratch,
                        QmVifAccum *acc)
{
#define STAT(S) stat_scale(ref, ref_stride, dis, dis_stride, w, h, in_bits, \
                           S, p, scratch, acc)
    QM_VIF_FOR_SCALE(scale, STAT);
#undef STAT
}

void qm_vif_terms_avx512(const int32_t *s11, const int32_t *s22,
                         const int32_t *s12, int n, const QmVifParams *p,
                         QmVifAccum *acc)
{
    TermsCtx c;
    TermsAcc a;
    terms_init(&a, &c, p);
    for (int j = 0; j < n; j += 16) {
        const __mmask16 m = n - j >= 16 ? 0xFFFF : (__mmask16)((1u << (n - j)) - 1);
        terms16(_mm512_maskz_loadu_epi32(m, s11 + j), _mm512_maskz_loadu_epi32(m, s22 + j),
                _mm512_maskz_loadu_epi32(m, s12 + j), m, &c, &a);
        /* the 32-bit sums gain at most 1 term (below 2^16) per lane and call */
        if ((j / 16) % 32768 == 32767)
            terms_flush_row(&a);
    }
    terms_finish(&a, acc);
}

/* Whether every entry not flagged as near a tie with the band of l comes
 * out exactly. */
static int log2_agrees(const Log2Ctx *l, const uint16_t *tab)
{
    for (int m = 0; m < 1 << 15; m += 16) {
        const __m512i mv = _mm512_add_epi32(_mm512_set1_epi32(m), _mm512_setr_epi32(
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
        __mmask16 tie;
        int32_t got[16];
        _mm512_storeu_si512(got, log2_u(mv, 0xFFFF, l, &tie));
        for (int k = 0; k < 16; k++)
            if (!(tie >> k & 1) && got[k] != tab[(1 << 15) + m + k] - 2048 * 15)
                return 0;
    }
    return 1;
}

int qm_vif_log2_check_avx512(const uint16_t *tab)
{
    /* the narrowest band in steps of 1e-4 up to 0.003 that suffices */
    for (int ppm = 100; ppm <= 3000; ppm += 100) {
        Log2Ctx l;
        log2_init(&l, tab);
        l.tie = _mm512_set1_ps(0.5f - 1e-6f * ppm);
        if (log2_agrees(&l, tab)) {
            __atomic_store_n(&log2_band_ppm, ppm, __ATOMIC_RELAXED);
            return 1;
        }
    }
    return 0;
}

/* ---- stage 2: low-pass and decimation (vif_avx2.c) ---- */

INLINE void dec_vert8(const uint8_t *const *r, const int taps, const __m512i *wp,
                      ptrdiff_t x, __mmask32 m, uint16_t *out)
{
    const int half = taps / 2;
    __m512i s[2];
    s[0] = s[1] = _mm512_set1_epi32(1 << 7);
    for (int k = 0; k <= half; k += 2) {
        __m512i it[2];
        for (int n = 0; n < 2; n++) {
            const int i = k + n;
            if (i > half) {
                it[n] = _mm512_setzero_si512();
                continue;
            }
            const __m512i t = load_u8(r[i] + x, m);
            it[n] = _mm512_add_epi16(t, i == half ? t : load_u8(r[taps - 1 - i] + x, m));
        }
        madd_rows(s, it[0], it[1], wp[k / 2]);
    }
    s[0] = _mm512_srli_epi32(s[0], 8);
    s[1] = _mm512_srli_epi32(s[1], 8);
    store_lo16(out + x, s);
}

INLINE void dec_vert16(const uint8_t *const *r, const int taps, const __m512i *ww,
                       ptrdiff_t x, __mmask32 m, const Vert16Shifts *vs, uint16_t *out)
{
    const int half = taps / 2;
    __m512i s[2];
    s[0] = s[1] = vs->mu_init;
    for (int k = 0; k <= half; k++) {
        const __m512i t = load_u16(r[k] + 2 * x, m);
        const __m512i b = k == half ? t : load_u16(r[taps - 1 - k] + 2 * x, m);
        madd_rows(s, bias16(t), bias16(b), ww[k]);
    }
    s[0] = _mm512_srl_epi32(s[0], vs->mu);
    s[1] = _mm512_srl_epi32(s[1], vs->mu);
    store_lo16(out + x, s);
}

INLINE void dec_horizontal(const uint16_t *v, int wo, const int taps,
                           const RowW *rw, uint16_t *out)
{
    const int half = taps / 2, first = vif_x86_row_first(half);
    const __m512i init = _mm512_set1_epi32((int32_t)(0x80000000u + 0x8000u));
    for (int j = 0; j < wo; j += BLOCK) {
        __m512i lo = init, hi = init;
        for (int l = 0; l < vif_x86_row_loads(half); l++) {
            const uint16_t *q = v + 2 * j + first + 2 * l;
            const __m512i a = _mm512_loadu_si512(q), b = _mm512_loadu_si512(q + 32);
            for (int k = 0; k < vif_x86_row_ne(half, l); k++) {
                lo = _mm512_add_epi32(lo, _mm512_madd_epi16(a, rw->e[l][k]));
                hi = _mm512_add_epi32(hi, _mm512_madd_epi16(b, rw->e[l][k]));
            }
        }
        /* results are below 2^16: the truncating narrowing is exact */
        const __m256i rl = _mm512_cvtepi32_epi16(_mm512_srli_epi32(lo, 16));
        const __m256i rh = _mm512_cvtepi32_epi16(_mm512_srli_epi32(hi, 16));
        const int left = wo - j;
        _mm256_mask_storeu_epi16(out + j, left >= 16 ? 0xFFFF : (__mmask16)((1u << left) - 1), rl);
        if (left > 16)
            _mm256_mask_storeu_epi16(out + j + 16, left >= 32 ? 0xFFFF
                                     : (__mmask16)((1u << (left - 16)) - 1), rh);
    }
}

INLINE void decimate_scale(const void *ref, ptrdiff_t ref_stride, const void *dis,
                           ptrdiff_t dis_stride, int w, int h, int in_bits,
                           const int fscale, uint16_t *ref_out, uint16_t *dis_out,
                           ptrdiff_t out_stride, void *scratch)
{
    const int taps = vif_taps[fscale], half = taps / 2;
    uint16_t *st[VIF_X86_STREAMS];
    vif_x86_streams(scratch, w, st);
    __m512i wp[(QM_VIF_MAX_HALF + 2) / 2], ww[QM_VIF_MAX_HALF + 1];
    col_weights(fscale, wp, ww);
    RowW rw;
    row_weights(fscale, &rw);
    Vert16Shifts vs;
    vs.mu = _mm_cvtsi32_si128(in_bits);
    vs.mu_init = _mm512_set1_epi32((int32_t)(0x80000000u + (1u << (in_bits - 1))));

    uint16_t *v1 = st[0], *v2 = st[1];
    const uint8_t *rr[2 * QM_VIF_MAX_HALF + 1], *dr[2 * QM_VIF_MAX_HALF + 1];
    for (int i = 0; i < h / 2; i++) {
        vif_x86_window(rr, ref, ref_stride, 2 * i, h, taps);
        vif_x86_window(dr, dis, dis_stride, 2 * i, h, taps);
        for (int x = 0; x < w; x += BLOCK) {
            const __mmask32 m = cols_mask(w - x);
            if (in_bits == 8) {
                dec_vert8(rr, taps, wp, x, m, v1);
                dec_vert8(dr, taps, wp, x, m, v2);
            } else {
                dec_vert16(rr, taps, ww, x, m, &vs, v1);
                dec_vert16(dr, taps, ww, x, m, &vs, v2);
            }
        }
        vif_x86_pad(v1, w, half);
        vif_x86_pad(v2, w, half);
        dec_horizontal(v1, w / 2, taps, &rw,
                       (uint16_t *)((uint8_t *)ref_out + i * out_stride));
        dec_horizontal(v2, w / 2, taps, &rw,
                       (uint16_t *)((uint8_t *)dis_out + i * out_stride));
    }
}

void qm_vif_decimate_avx512(const void *ref, ptrdiff_t ref_stride,
                            const void *dis, ptrdiff_t dis_stride, int w, int h,
                            int in_bits, int scale, uint16_t *ref_out,
                            uint16_t *dis_out, ptrdiff_t out_stride, void *scratch)
{
#define DEC(S) decimate_scale(ref, ref_stride, dis, dis_stride, w, h, in_bits, \
                              S, ref_out, dis_out, out_stride, scratch)
    QM_VIF_FOR_NEXT_SCALE(scale, DEC);
#undef DEC
}
