/* gst-qmetric: AVX2 twins of the VIF stages.  cpu/vif.c is the
 * specification; these compute the same integers (tests/checkasm/vif.c
 * compares them bit for bit).  What differs is only how:
 *
 *   - filters run on pmaddwd, two taps per instruction (vif_x86.h says how
 *     the Q16 taps are paired and why samples are biased by 2^15);
 *   - 8-bit pictures are centred (c = x - 128, |c| <= 128) so that the
 *     squares and cross products of two symmetric rows, added, still fit a
 *     16-bit lane: the vertical pass filters sums of symmetric rows, half
 *     the multiplies, and recovers the specification's moments from
 *       sum f x^2 = sum f c^2 + 256 sum f x - 2^30,
 *       sum f x y = sum f c e + 128 (sum f x + sum f y) - 2^30
 *     (each filter sums to 2^16), exact modulo 2^32 like the C sums;
 *   - the per-pixel terms are evaluated four pixels at a time in double
 *     with the same operations in the same order as the C code (no fused
 *     multiply-add: the build uses -ffp-contract=off and -mavx2 has no FMA),
 *     and log2 is read from the same table.  The table index of a 64-bit
 *     value (x >> k, its 16 leading bits) is read off the double holding it
 *     exactly: for 2^e <= x < 2^(e+1), x >> (e - 15) is 2^15 plus the top
 *     15 bits of the mantissa.
 *
 * Lanes are 16 columns per block; a row whose width is not a multiple of 16
 * ends with a block overlapping the one before (the vertical passes write
 * the same values twice) or, narrower than 16, is copied to a zeroed block
 * first, so that no row is read past its width.
 */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "vif.h"
#include "x86/vif_x86.h"

#define INLINE static inline __attribute__((always_inline))
/* Makes the compiler store array a and load its elements back one by one,
 * rather than extract them from the vector register (slower). */
#define KEEP_IN_MEMORY(a) __asm__("" : "+m"(a))
#define BLOCK 16

static const int vif_taps[QM_VIF_SCALES] = { 17, 9, 5, 3 };

INLINE __m256i load_u8(const uint8_t *p)
{
    return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p));
}

INLINE __m256i load_u16(const uint8_t *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}

INLINE __m256i bias16(__m256i v)
{
    return _mm256_xor_si256(v, _mm256_set1_epi16((short)0x8000));
}

/* acc += pmaddwd of the interleaved (a[i], b[i]) with weights w: lanes of
 * acc[0] are columns 0-3 and 8-11, of acc[1] columns 4-7 and 12-15. */
INLINE void madd_rows(__m256i acc[2], __m256i a, __m256i b, __m256i w)
{
    acc[0] = _mm256_add_epi32(acc[0], _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), w));
    acc[1] = _mm256_add_epi32(acc[1], _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), w));
}

/* The low (*lo16) and high (*hi16) 16 bits of the 32-bit lanes of such an
 * acc[2] pair, back in column order. */
INLINE void split32(const __m256i v[2], __m256i *lo16, __m256i *hi16)
{
    const __m256i sh = _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15,
                                        0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
    const __m256i a = _mm256_shuffle_epi8(v[0], sh), b = _mm256_shuffle_epi8(v[1], sh);
    *lo16 = _mm256_unpacklo_epi64(a, b);
    if (hi16)
        *hi16 = _mm256_unpackhi_epi64(a, b);
}

/* Store the low 16 bits of acc[2] (the C code's uint16_t cast), biased. */
INLINE void store_lo16(uint16_t *dst, const __m256i v[2])
{
    __m256i lo;
    split32(v, &lo, NULL);
    _mm256_storeu_si256((__m256i *)dst, bias16(lo));
}

INLINE void store_split(uint16_t *dl, uint16_t *dh, const __m256i v[2])
{
    __m256i lo, hi;
    split32(v, &lo, &hi);
    _mm256_storeu_si256((__m256i *)dl, bias16(lo));
    _mm256_storeu_si256((__m256i *)dh, bias16(hi));
}

/* ---- stage 1: vertical pass ---- */

/* 8-bit samples, 16 columns at x.  Item k (k <= half) of a moment combines
 * rows k and taps-1-k (the centre row twice, at half weight):
 *   c_t + c_b,  c_t^2 + c_b^2 - 2^14,  c_t e_t + c_b e_b - 2^7,
 * biased into int16 ([-2^14, 2^14] and [-32640, 32640]); items are paired
 * for pmaddwd with weights (g[k], g[k+1]), wp[k / 2].  The weights sum to
 * 2^15, so the biases total 2^29 and 2^22; with A = sum f x = sum f c +
 * 2^23, the accumulators start at
 *   mean:  2^23 + 128 (A plus the C code's rounding: mu = acc >> 8),
 *   x^2:   2^29 - 2^30 - 256 * 128, to which 256 * acc_mean is added,
 *   x y:   2^22 - 2^30 - 128 * 256, to which 128 * (acc_mean1 + acc_mean2).
 */
INLINE void vert8(const uint8_t *const *r, const uint8_t *const *d,
                  const int taps, const __m256i *wp, ptrdiff_t x,
                  uint16_t *const *st)
{
    const int half = taps / 2;
    const __m256i k128 = _mm256_set1_epi16(128);
    const __m256i bq = _mm256_set1_epi16(1 << 14), br = _mm256_set1_epi16(1 << 7);
    __m256i s1[2], s2[2], q1[2], q2[2], q12[2];
    s1[0] = s1[1] = s2[0] = s2[1] = _mm256_set1_epi32((1 << 23) + 128);
    q1[0] = q1[1] = q2[0] = q2[1] =
        _mm256_set1_epi32((int32_t)((1u << 29) - (1u << 30) - (1u << 15)));
    q12[0] = q12[1] = _mm256_set1_epi32((int32_t)((1u << 22) - (1u << 30) - (1u << 15)));
    for (int k = 0; k <= half; k += 2) {
        __m256i i1[2], i2[2], iq1[2], iq2[2], iq12[2];
        for (int m = 0; m < 2; m++) {
            const int i = k + m;
            if (i > half) {
                i1[m] = i2[m] = iq1[m] = iq2[m] = iq12[m] = _mm256_setzero_si256();
                continue;
            }
            const __m256i ct = _mm256_sub_epi16(load_u8(r[i] + x), k128);
            const __m256i et = _mm256_sub_epi16(load_u8(d[i] + x), k128);
            const __m256i cb = i == half ? ct : _mm256_sub_epi16(load_u8(r[taps - 1 - i] + x), k128);
            const __m256i eb = i == half ? et : _mm256_sub_epi16(load_u8(d[taps - 1 - i] + x), k128);
            i1[m] = _mm256_add_epi16(ct, cb);
            i2[m] = _mm256_add_epi16(et, eb);
            iq1[m] = _mm256_sub_epi16(_mm256_add_epi16(_mm256_mullo_epi16(ct, ct),
                                                       _mm256_mullo_epi16(cb, cb)), bq);
            iq2[m] = _mm256_sub_epi16(_mm256_add_epi16(_mm256_mullo_epi16(et, et),
                                                       _mm256_mullo_epi16(eb, eb)), bq);
            iq12[m] = _mm256_sub_epi16(_mm256_add_epi16(_mm256_mullo_epi16(ct, et),
                                                        _mm256_mullo_epi16(cb, eb)), br);
        }
        const __m256i w = wp[k / 2];
        madd_rows(s1, i1[0], i1[1], w);
        madd_rows(s2, i2[0], i2[1], w);
        madd_rows(q1, iq1[0], iq1[1], w);
        madd_rows(q2, iq2[0], iq2[1], w);
        madd_rows(q12, iq12[0], iq12[1], w);
    }
    __m256i m[2];
    for (int h = 0; h < 2; h++) {
        q1[h] = _mm256_add_epi32(q1[h], _mm256_slli_epi32(s1[h], 8));
        q2[h] = _mm256_add_epi32(q2[h], _mm256_slli_epi32(s2[h], 8));
        q12[h] = _mm256_add_epi32(q12[h], _mm256_slli_epi32(_mm256_add_epi32(s1[h], s2[h]), 7));
    }
    m[0] = _mm256_srli_epi32(s1[0], 8);
    m[1] = _mm256_srli_epi32(s1[1], 8);
    store_lo16(st[VIF_X86_MU1] + x, m);
    m[0] = _mm256_srli_epi32(s2[0], 8);
    m[1] = _mm256_srli_epi32(s2[1], 8);
    store_lo16(st[VIF_X86_MU2] + x, m);
    store_split(st[VIF_X86_XXL] + x, st[VIF_X86_XXH] + x, q1);
    store_split(st[VIF_X86_YYL] + x, st[VIF_X86_YYH] + x, q2);
    store_split(st[VIF_X86_XYL] + x, st[VIF_X86_XYH] + x, q12);
}

/* Shifts and roundings of the 16-bit vertical pass (vif.c
 * DEFINE_STAT_VERTICAL): means >> in_bits, second moments joined from their
 * 16-bit halves (join_q16) with >> 2 (in_bits - 8). */
typedef struct Vert16Shifts {
    __m128i mu, sq, hi;         /* in_bits, 2 (in_bits - 8), 16 - that */
    __m256i mu_init, lo_init;   /* 2^31 bias plus the rounding */
    __m256i mu_init15, lo_init15;  /* vert15: the rounding, 2^30 plus it */
} Vert16Shifts;

/* 16-bit samples, 16 columns at x: rows k and taps-1-k interleaved, weights
 * (g[k], g[k]) in ww[k]; products split into their 16-bit halves
 * (pmullw, pmulhuw), each half filtered on its own as the C code does. */
INLINE void vert16(const uint8_t *const *r, const uint8_t *const *d,
                   const int taps, const __m256i *ww, ptrdiff_t x,
                   const Vert16Shifts *vs, uint16_t *const *st)
{
    const int half = taps / 2;
    const ptrdiff_t xb = 2 * x;
    __m256i a[VIF_X86_STREAMS][2];
    const __m256i hi_init = _mm256_set1_epi32(INT32_MIN);
    for (int h = 0; h < 2; h++) {
        a[VIF_X86_MU1][h] = a[VIF_X86_MU2][h] = vs->mu_init;
        a[VIF_X86_XXL][h] = a[VIF_X86_YYL][h] = a[VIF_X86_XYL][h] = vs->lo_init;
        a[VIF_X86_XXH][h] = a[VIF_X86_YYH][h] = a[VIF_X86_XYH][h] = hi_init;
    }
    for (int k = 0; k <= half; k++) {
        const __m256i xt = load_u16(r[k] + xb), yt = load_u16(d[k] + xb);
        const __m256i xbm = k == half ? xt : load_u16(r[taps - 1 - k] + xb);
        const __m256i ybm = k == half ? yt : load_u16(d[taps - 1 - k] + xb);
        const __m256i w = ww[k];
        madd_rows(a[VIF_X86_MU1], bias16(xt), bias16(xbm), w);
        madd_rows(a[VIF_X86_MU2], bias16(yt), bias16(ybm), w);
        madd_rows(a[VIF_X86_XXL], bias16(_mm256_mullo_epi16(xt, xt)),
                  bias16(_mm256_mullo_epi16(xbm, xbm)), w);
        madd_rows(a[VIF_X86_XXH], bias16(_mm256_mulhi_epu16(xt, xt)),
                  bias16(_mm256_mulhi_epu16(xbm, xbm)), w);
        madd_rows(a[VIF_X86_YYL], bias16(_mm256_mullo_epi16(yt, yt)),
                  bias16(_mm256_mullo_epi16(ybm, ybm)), w);
        madd_rows(a[VIF_X86_YYH], bias16(_mm256_mulhi_epu16(yt, yt)),
                  bias16(_mm256_mulhi_epu16(ybm, ybm)), w);
        madd_rows(a[VIF_X86_XYL], bias16(_mm256_mullo_epi16(xt, yt)),
                  bias16(_mm256_mullo_epi16(xbm, ybm)), w);
        madd_rows(a[VIF_X86_XYH], bias16(_mm256_mulhi_epu16(xt, yt)),
                  bias16(_mm256_mulhi_epu16(xbm, ybm)), w);
    }
    __m256i m[2];
    for (int s = VIF_X86_MU1; s <= VIF_X86_MU2; s++) {
        m[0] = _mm256_srl_epi32(a[s][0], vs->mu);
        m[1] = _mm256_srl_epi32(a[s][1], vs->mu);
        store_lo16(st[s] + x, m);
    }
    for (int s = VIF_X86_XXL; s < VIF_X86_STREAMS; s += 2) {
        for (int h = 0; h < 2; h++)
            m[h] = _mm256_add_epi32(_mm256_sll_epi32(a[s + 1][h], vs->hi),
                                    _mm256_srl_epi32(a[s][h], vs->sq));
        store_split(st[s] + x, st[s + 1] + x, m);
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
                   const int taps, const __m256i *wp, const __m256i *ww,
                   ptrdiff_t x, const Vert16Shifts *vs, uint16_t *const *st)
{
    const int half = taps / 2;
    const ptrdiff_t xb = 2 * x;
    const __m256i lo_bias = _mm256_set1_epi32((int32_t)0x80008000u);
    enum { XX, YY, XY };
    __m256i mu1[2], mu2[2], lo[3][2], hi[3][2];
    for (int h = 0; h < 2; h++) {
        mu1[h] = mu2[h] = vs->mu_init15;
        for (int q = XX; q <= XY; q++) {
            lo[q][h] = vs->lo_init15;
            hi[q][h] = _mm256_setzero_si256();
        }
    }
    for (int k = 0; k <= half; k += 2) {
        __m256i it[2][3][2];  /* [item][moment][half] */
        for (int n = 0; n < 2; n++) {
            const int i = k + n;
            if (i > half) {
                for (int q = XX; q <= XY; q++)
                    it[n][q][0] = it[n][q][1] = _mm256_setzero_si256();
                continue;
            }
            const __m256i xt = load_u16(r[i] + xb), yt = load_u16(d[i] + xb);
            const __m256i xbm = i == half ? xt : load_u16(r[taps - 1 - i] + xb);
            const __m256i ybm = i == half ? yt : load_u16(d[taps - 1 - i] + xb);
            const __m256i px[2] = { _mm256_unpacklo_epi16(xt, xbm), _mm256_unpackhi_epi16(xt, xbm) };
            const __m256i py[2] = { _mm256_unpacklo_epi16(yt, ybm), _mm256_unpackhi_epi16(yt, ybm) };
            for (int h = 0; h < 2; h++) {
                mu1[h] = _mm256_add_epi32(mu1[h], _mm256_madd_epi16(px[h], ww[i]));
                mu2[h] = _mm256_add_epi32(mu2[h], _mm256_madd_epi16(py[h], ww[i]));
                it[n][XX][h] = _mm256_madd_epi16(px[h], px[h]);
                it[n][YY][h] = _mm256_madd_epi16(py[h], py[h]);
                it[n][XY][h] = _mm256_madd_epi16(px[h], py[h]);
            }
        }
        const __m256i w = wp[k / 2];
        for (int q = XX; q <= XY; q++) {
            for (int h = 0; h < 2; h++) {
                const __m256i a = it[0][q][h], b = it[1][q][h];
                const __m256i l = _mm256_xor_si256(_mm256_blend_epi16(
                    a, _mm256_slli_epi32(b, 16), 0xAA), lo_bias);
                const __m256i u = _mm256_blend_epi16(_mm256_srli_epi32(a, 16), b, 0xAA);
                lo[q][h] = _mm256_add_epi32(lo[q][h], _mm256_madd_epi16(l, w));
                hi[q][h] = _mm256_add_epi32(hi[q][h], _mm256_madd_epi16(u, w));
            }
        }
    }
    __m256i v[2];
    v[0] = _mm256_srl_epi32(mu1[0], vs->mu);
    v[1] = _mm256_srl_epi32(mu1[1], vs->mu);
    store_lo16(st[VIF_X86_MU1] + x, v);
    v[0] = _mm256_srl_epi32(mu2[0], vs->mu);
    v[1] = _mm256_srl_epi32(mu2[1], vs->mu);
    store_lo16(st[VIF_X86_MU2] + x, v);
    static const int out[3] = { VIF_X86_XXL, VIF_X86_YYL, VIF_X86_XYL };
    for (int q = XX; q <= XY; q++) {
        for (int h = 0; h < 2; h++)
            v[h] = _mm256_add_epi32(_mm256_sll_epi32(hi[q][h], vs->hi),
                                    _mm256_srl_epi32(lo[q][h], vs->sq));
        store_split(st[out[q]] + x, st[out[q] + 1] + x, v);
    }
}

/* ---- stage 1: horizontal pass and the per-pixel terms ---- */

/* vif_x86_col_words() as vectors */
static void col_weights(int scale, __m256i *wp, __m256i *ww)
{
    uint32_t pair[(QM_VIF_MAX_HALF + 2) / 2], dup[QM_VIF_MAX_HALF + 1];
    const int half = vif_x86_col_words(scale, pair, dup);
    for (int k = 0; k <= half; k += 2)
        wp[k / 2] = _mm256_set1_epi32((int32_t)pair[k / 2]);
    for (int k = 0; k <= half; k++)
        ww[k] = _mm256_set1_epi32((int32_t)dup[k]);
}

/* the weights of vif_x86_row_weights() as vectors */
typedef struct RowW {
    __m256i e[QM_VIF_MAX_HALF + 2][2], o[QM_VIF_MAX_HALF + 2][2];
} RowW;

static void row_weights(int scale, RowW *rw)
{
    VifX86RowWeights w;
    vif_x86_row_weights(scale, &w);
    for (int l = 0; l < QM_VIF_MAX_HALF + 2; l++) {
        for (int q = 0; q < 2; q++) {
            rw->e[l][q] = _mm256_set1_epi32((int32_t)w.e[l][q]);
            rw->o[l][q] = _mm256_set1_epi32((int32_t)w.o[l][q]);
        }
    }
}

typedef struct TermsCtx {
    const uint16_t *tab;
    __m256d egl;
} TermsCtx;

/* Sums of the terms.  den and cnt are 32-bit lanes, moved to the 64-bit
 * den64/cnt64 after every row: a lane gains at most 2 terms per 16
 * columns, each of magnitude below 2^15 (2048 (k - 17), 3 <= k <= 16), so a
 * row of fewer than 2^19 samples cannot overflow it. */
typedef struct TermsAcc {
    __m256i num, nonlog;       /* 4 x int64 */
    __m256i den, cnt;          /* 8 x int32 */
    __m256i den64, cnt64;      /* 4 x int64 */
    int64_t num_tab, den_tab;  /* the log2 table entries */
} TermsAcc;

INLINE __m256i add_wide(__m256i acc64, __m256i v32)
{
    return _mm256_add_epi64(acc64, _mm256_add_epi64(
        _mm256_cvtepu32_epi64(_mm256_castsi256_si128(v32)),
        _mm256_cvtepu32_epi64(_mm256_extracti128_si256(v32, 1))));
}

INLINE __m256i add_wide_signed(__m256i acc64, __m256i v32)
{
    return _mm256_add_epi64(acc64, _mm256_add_epi64(
        _mm256_cvtepi32_epi64(_mm256_castsi256_si128(v32)),
        _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v32, 1))));
}

/* The log2 table entries are read one by one from stored index vectors:
 * on Zen 5 that costs about half as much per entry as AVX2 gathers, and
 * the scalar loads run beside the vector work.  Left-out lanes hold index
 * 0, whose entry is 0 (qm_vif_log2_table() zeroes the unused entries). */
INLINE int64_t tab_sum(const uint16_t *tab, __m256i v)
{
    uint32_t i[8];
    _mm256_storeu_si256((__m256i *)i, v);
    KEEP_IN_MEMORY(i);
    return (int64_t)tab[i[0]] + tab[i[1]] + tab[i[2]] + tab[i[3]] +
           tab[i[4]] + tab[i[5]] + tab[i[6]] + tab[i[7]];
}

/* lanes (0, 2, 4, 6) minus lanes (1, 3, 5, 7) */
INLINE int64_t tab_diff(const uint16_t *tab, __m256i v)
{
    uint32_t i[8];
    _mm256_storeu_si256((__m256i *)i, v);
    KEEP_IN_MEMORY(i);
    return (int64_t)tab[i[0]] - tab[i[1]] + tab[i[2]] - tab[i[3]] +
           tab[i[4]] - tab[i[5]] + tab[i[6]] - tab[i[7]];
}

/* The table index of the integer held exactly in double bits (>= 2^15):
 * 2^15 plus the top 15 mantissa bits. */
INLINE __m256i log2_index(__m256i bits)
{
    return _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi64(bits, 52 - 15),
                                            _mm256_set1_epi64x(0x7FFF)),
                           _mm256_set1_epi64x(0x8000));
}

/* The numerator terms of 4 pixels (vif.c qm_vif_terms_cpu) where m32 is
 * set: log2_q11_64(numer2) - log2_q11_64(numer1), the table entries to
 * a->num_tab, the rest (2048 k, from the exponents) returned. */
INLINE __m256i num4(__m128i s11, __m128i s22, __m128i s12, __m128i m32,
                    const TermsCtx *c, TermsAcc *a)
{
    const __m256d eps = _mm256_set1_pd(65536 * 1.0e-10);
    const __m256d d11 = _mm256_cvtepi32_pd(s11), d22 = _mm256_cvtepi32_pd(s22);
    const __m256d d12 = _mm256_cvtepi32_pd(s12);
    __m256d g = _mm256_div_pd(d12, _mm256_add_pd(d11, eps));
    const __m256d sv = _mm256_sub_pd(d22, _mm256_mul_pd(g, d12));
    const __m256d sv_sq = _mm256_and_pd(_mm256_round_pd(sv, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC),
                                        _mm256_cmp_pd(sv, _mm256_set1_pd(1.0), _CMP_GE_OQ));
    const __m256d numer1 = _mm256_add_pd(sv_sq, _mm256_set1_pd(2 << 16));
    g = _mm256_min_pd(g, c->egl);
    const __m256d numer2 = _mm256_add_pd(
        _mm256_round_pd(_mm256_mul_pd(_mm256_mul_pd(g, g), d11),
                        _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), numer1);
    const __m256i b1 = _mm256_castpd_si256(numer1), b2 = _mm256_castpd_si256(numer2);
    const __m256i m = _mm256_cvtepi32_epi64(m32);
    /* numer2's index in the even 32-bit lanes, numer1's in the odd ones */
    a->num_tab += tab_diff(c->tab, _mm256_and_si256(_mm256_blend_epi32(
        log2_index(b2), _mm256_slli_epi64(log2_index(b1), 32), 0xAA), m));
    /* 2048 k of each value: the exponents' difference */
    const __m256i dk = _mm256_slli_epi64(_mm256_sub_epi64(_mm256_srli_epi64(b2, 52),
                                                          _mm256_srli_epi64(b1, 52)), 11);
    return _mm256_and_si256(dk, m);
}

/* The terms of 8 pixels with statistics s11, s22, s12; lanes where valid
 * is 0 are left out. */
INLINE void terms8(__m256i s11, __m256i s22, __m256i s12, __m256i valid,
                   const TermsCtx *c, TermsAcc *a)
{
    const __m256i zero = _mm256_setzero_si256();
    const __m256i nsq = _mm256_set1_epi32(2 << 16);
    const __m256i flat = _mm256_cmpgt_epi32(nsq, s11);
    const __m256i fl = _mm256_and_si256(flat, valid), lg = _mm256_andnot_si256(flat, valid);
    a->cnt = _mm256_sub_epi32(a->cnt, fl);
    a->nonlog = add_wide(a->nonlog, _mm256_and_si256(s22, fl));

    /* den: log2_q11_32(s11 + sigma_n^2) - 2048 * 17 = tab[x >> k] +
     * 2048 (k - 17).  k = floor(log2 x) - 15 comes from the exponent of
     * x >> 8 (below 2^24: exact in float; x >= 2^18 here). */
    const __m256i x = _mm256_add_epi32(s11, nsq);
    const __m256i e = _mm256_srli_epi32(
        _mm256_castps_si256(_mm256_cvtepi32_ps(_mm256_srli_epi32(x, 8))), 23);
    const __m256i k = _mm256_sub_epi32(e, _mm256_set1_epi32(127 - 8 + 15));
    a->den_tab += tab_sum(c->tab, _mm256_and_si256(_mm256_srlv_epi32(x, k), lg));
    a->den = _mm256_add_epi32(a->den, _mm256_and_si256(_mm256_slli_epi32(
        _mm256_sub_epi32(k, _mm256_set1_epi32(17)), 11), lg));

    const __m256i nm = _mm256_and_si256(lg, _mm256_and_si256(_mm256_cmpgt_epi32(s12, zero),
                                                             _mm256_cmpgt_epi32(s22, zero)));
    if (_mm256_testz_si256(nm, nm))
        return;
    const __m256i n0 = num4(_mm256_castsi256_si128(s11), _mm256_castsi256_si128(s22),
                            _mm256_castsi256_si128(s12), _mm256_castsi256_si128(nm), c, a);
    const __m256i n1 = num4(_mm256_extracti128_si256(s11, 1), _mm256_extracti128_si256(s22, 1),
                            _mm256_extracti128_si256(s12, 1), _mm256_extracti128_si256(nm, 1), c, a);
    a->num = _mm256_add_epi64(a->num, _mm256_add_epi64(n0, n1));
}

INLINE void terms_flush_row(TermsAcc *a)
{
    a->den64 = add_wide_signed(a->den64, a->den);
    a->cnt64 = add_wide(a->cnt64, a->cnt);
    a->den = a->cnt = _mm256_setzero_si256();
}

INLINE int64_t hsum64(__m256i v)
{
    const __m128i s = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    return _mm_cvtsi128_si64(s) + _mm_extract_epi64(s, 1);
}

INLINE void terms_finish(TermsAcc *a, QmVifAccum *acc)
{
    terms_flush_row(a);
    acc->num_log += hsum64(a->num) + a->num_tab;
    acc->den_log += hsum64(a->den64) + a->den_tab;
    acc->num_non_log += hsum64(a->nonlog);
    acc->den_non_log += hsum64(a->cnt64);
}

INLINE void terms_init(TermsAcc *a, TermsCtx *c, const QmVifParams *p)
{
    a->num = a->nonlog = a->den = a->cnt = a->den64 = a->cnt64 = _mm256_setzero_si256();
    a->num_tab = a->den_tab = 0;
    c->tab = p->log2_tab;
    c->egl = _mm256_set1_pd(p->enhn_gain_limit);
}

/* Filter a biased stream along the row for the 16 outputs at j: even
 * outputs (j, j+2, ...) in *e, odd ones in *o, one load serving both
 * (vif_x86_row_weights()). */
INLINE void hfilter(const uint16_t *s, ptrdiff_t j, const int half,
                    const RowW *rw, __m256i init, __m256i *e, __m256i *o)
{
    const int first = vif_x86_row_first(half);
    __m256i ae = init, ao = init;
    for (int l = 0; l < vif_x86_row_loads(half); l++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(s + j + first + 2 * l));
        for (int q = 0; q < vif_x86_row_ne(half, l); q++)
            ae = _mm256_add_epi32(ae, _mm256_madd_epi16(v, rw->e[l][q]));
        for (int q = 0; q < vif_x86_row_no(half, l); q++)
            ao = _mm256_add_epi32(ao, _mm256_madd_epi16(v, rw->o[l][q]));
    }
    *e = ae;
    *o = ao;
}

/* (a b + 2^31) >> 32 per unsigned 32-bit lane (vif.c mu1_sq etc.) */
INLINE __m256i mul_q32(__m256i a, __m256i b)
{
    const __m256i rnd = _mm256_set1_epi64x(0x80000000);
    const __m256i ev = _mm256_add_epi64(_mm256_mul_epu32(a, b), rnd);
    const __m256i od = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32),
                                                         _mm256_srli_epi64(b, 32)), rnd);
    return _mm256_blend_epi32(_mm256_srli_epi64(ev, 32), od, 0xAA);
}

/* Horizontal pass (vif.c stat_horizontal) of 16 outputs at j and their
 * terms; only outputs below w count. */
INLINE void stat_hblock(uint16_t *const *st, ptrdiff_t j, int w, const int taps,
                        const RowW *rw, const TermsCtx *c, TermsAcc *a)
{
    const int half = taps / 2;
    const __m256i bias = _mm256_set1_epi32(INT32_MIN);
    const __m256i bias_rnd = _mm256_set1_epi32((int32_t)(0x80000000u + 0x8000u));
    __m256i a1[2], a2[2], l[2], h[2];
    hfilter(st[VIF_X86_MU1], j, half, rw, bias, &a1[0], &a1[1]);
    hfilter(st[VIF_X86_MU2], j, half, rw, bias, &a2[0], &a2[1]);
    __m256i s11[2], s22[2], s12[2];
    hfilter(st[VIF_X86_XXL], j, half, rw, bias_rnd, &l[0], &l[1]);
    hfilter(st[VIF_X86_XXH], j, half, rw, bias, &h[0], &h[1]);
    for (int i = 0; i < 2; i++)
        s11[i] = _mm256_sub_epi32(_mm256_add_epi32(h[i], _mm256_srli_epi32(l[i], 16)),
                                  mul_q32(a1[i], a1[i]));
    hfilter(st[VIF_X86_YYL], j, half, rw, bias_rnd, &l[0], &l[1]);
    hfilter(st[VIF_X86_YYH], j, half, rw, bias, &h[0], &h[1]);
    for (int i = 0; i < 2; i++)
        s22[i] = _mm256_max_epi32(_mm256_sub_epi32(_mm256_add_epi32(h[i], _mm256_srli_epi32(l[i], 16)),
                                                   mul_q32(a2[i], a2[i])),
                                  _mm256_setzero_si256());
    hfilter(st[VIF_X86_XYL], j, half, rw, bias_rnd, &l[0], &l[1]);
    hfilter(st[VIF_X86_XYH], j, half, rw, bias, &h[0], &h[1]);
    for (int i = 0; i < 2; i++)
        s12[i] = _mm256_sub_epi32(_mm256_add_epi32(h[i], _mm256_srli_epi32(l[i], 16)),
                                  mul_q32(a1[i], a2[i]));
    const __m256i left = _mm256_set1_epi32((int32_t)(w - j));
    const __m256i ve = _mm256_cmpgt_epi32(left, _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14));
    const __m256i vo = _mm256_cmpgt_epi32(left, _mm256_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15));
    terms8(s11[0], s22[0], s12[0], ve, c, a);
    terms8(s11[1], s22[1], s12[1], vo, c, a);
}

/* The samples of `taps` rows at columns 0..w-1 (w < 16) copied into a
 * zeroed 16-column block, for rows too narrow for one vector. */
static void narrow_rows(const uint8_t **rows, int taps, int w, int bytes,
                        uint8_t block[][BLOCK * 2])
{
    for (int k = 0; k < taps; k++) {
        memset(block[k], 0, BLOCK * 2);
        memcpy(block[k], rows[k], (size_t)w * bytes);
        rows[k] = block[k];
    }
}

INLINE void stat_scale(const void *ref, ptrdiff_t ref_stride, const void *dis,
                       ptrdiff_t dis_stride, int w, int h, int in_bits,
                       const int scale, const QmVifParams *p, void *scratch,
                       QmVifAccum *acc)
{
    const int taps = vif_taps[scale], half = taps / 2;
    uint16_t *st[VIF_X86_STREAMS];
    vif_x86_streams(scratch, w, st);

    __m256i wp[(QM_VIF_MAX_HALF + 2) / 2], ww[QM_VIF_MAX_HALF + 1];
    col_weights(scale, wp, ww);
    RowW rw;
    row_weights(scale, &rw);

    Vert16Shifts vs;
    const int sh_sq = 2 * (in_bits - 8);
    vs.mu = _mm_cvtsi32_si128(in_bits);
    vs.sq = _mm_cvtsi32_si128(sh_sq);
    vs.hi = _mm_cvtsi32_si128(16 - sh_sq);
    vs.mu_init = _mm256_set1_epi32((int32_t)(0x80000000u + (1u << (in_bits - 1))));
    vs.lo_init = _mm256_set1_epi32((int32_t)(0x80000000u + (sh_sq ? 1u << (sh_sq - 1) : 0)));
    vs.mu_init15 = _mm256_set1_epi32((int32_t)(1u << (in_bits - 1)));
    vs.lo_init15 = _mm256_set1_epi32((int32_t)((1u << 30) + (sh_sq ? 1u << (sh_sq - 1) : 0)));

    TermsCtx c;
    TermsAcc a;
    terms_init(&a, &c, p);
    const uint8_t *rr[2 * QM_VIF_MAX_HALF + 1], *dr[2 * QM_VIF_MAX_HALF + 1];
    uint8_t nr[2 * QM_VIF_MAX_HALF + 1][BLOCK * 2], nd[2 * QM_VIF_MAX_HALF + 1][BLOCK * 2];
    for (int i = 0; i < h; i++) {
        vif_x86_window(rr, ref, ref_stride, i, h, taps);
        vif_x86_window(dr, dis, dis_stride, i, h, taps);
        if (w < BLOCK) {
            narrow_rows(rr, taps, w, in_bits == 8 ? 1 : 2, nr);
            narrow_rows(dr, taps, w, in_bits == 8 ? 1 : 2, nd);
        }
        for (int x = 0; x < w; x += BLOCK) {
            const ptrdiff_t xc = w < BLOCK ? 0 : x + BLOCK <= w ? x : w - BLOCK;
            if (in_bits == 8)
                vert8(rr, dr, taps, wp, xc, st);
            else if (in_bits < 16)  /* samples below 2^15 (vif.h: in_bits bits) */
                vert15(rr, dr, taps, wp, ww, xc, &vs, st);
            else
                vert16(rr, dr, taps, ww, xc, &vs, st);
        }
        for (int s = 0; s < VIF_X86_STREAMS; s++)
            vif_x86_pad(st[s], w, half);
        for (int j = 0; j < w; j += BLOCK)
            stat_hblock(st, j, w, taps, &rw, &c, &a);
        terms_flush_row(&a);
    }
    terms_finish(&a, acc);
}

void qm_vif_stat_avx2(const void *ref, ptrdiff_t ref_stride, const void *dis,
                      ptrdiff_t dis_stride, int w, int h, int in_bits,
                      int scale, const QmVifParams *p, void *scratch,
                      QmVifAccum *acc)
{
#define STAT(S) stat_scale(ref, ref_stride, dis, dis_stride, w, h, in_bits, \
                           S, p, scratch, acc)
    QM_VIF_FOR_SCALE(scale, STAT);
#undef STAT
}

void qm_vif_terms_avx2(const int32_t *s11, const int32_t *s22,
                       const int32_t *s12, int n, const QmVifParams *p,
                       QmVifAccum *acc)
{
    TermsCtx c;
    TermsAcc a;
    terms_init(&a, &c, p);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int j = 0; j < n; j += 8) {
        __m256i v11, v22, v12;
        if (j + 8 <= n) {
            v11 = _mm256_loadu_si256((const __m256i *)(s11 + j));
            v22 = _mm256_loadu_si256((const __m256i *)(s22 + j));
            v12 = _mm256_loadu_si256((const __m256i *)(s12 + j));
        } else {
            int32_t b11[8] = { 0 }, b22[8] = { 0 }, b12[8] = { 0 };
            memcpy(b11, s11 + j, (size_t)(n - j) * sizeof(int32_t));
            memcpy(b22, s22 + j, (size_t)(n - j) * sizeof(int32_t));
            memcpy(b12, s12 + j, (size_t)(n - j) * sizeof(int32_t));
            v11 = _mm256_loadu_si256((const __m256i *)b11);
            v22 = _mm256_loadu_si256((const __m256i *)b22);
            v12 = _mm256_loadu_si256((const __m256i *)b12);
        }
        terms8(v11, v22, v12, _mm256_cmpgt_epi32(_mm256_set1_epi32(n - j), lane), &c, &a);
        /* at most 2^16 terms (each below 2^15) per 32-bit lane between
         * flushes */
        if ((j / 8) % 65536 == 65535)
            terms_flush_row(&a);
    }
    terms_finish(&a, acc);
}

/* ---- stage 2: low-pass and decimation ---- */

/* Vertical low-pass of 8-bit rows at 16 columns: items x_t + x_b (at most
 * 510), pairs of items weighted (g[k], g[k+1]). */
INLINE void dec_vert8(const uint8_t *const *r, const int taps, const __m256i *wp,
                      ptrdiff_t x, uint16_t *out)
{
    const int half = taps / 2;
    __m256i s[2];
    s[0] = s[1] = _mm256_set1_epi32(1 << 7);
    for (int k = 0; k <= half; k += 2) {
        __m256i it[2];
        for (int m = 0; m < 2; m++) {
            const int i = k + m;
            if (i > half) {
                it[m] = _mm256_setzero_si256();
                continue;
            }
            const __m256i t = load_u8(r[i] + x);
            it[m] = _mm256_add_epi16(t, i == half ? t : load_u8(r[taps - 1 - i] + x));
        }
        madd_rows(s, it[0], it[1], wp[k / 2]);
    }
    s[0] = _mm256_srli_epi32(s[0], 8);
    s[1] = _mm256_srli_epi32(s[1], 8);
    store_lo16(out + x, s);
}

INLINE void dec_vert16(const uint8_t *const *r, const int taps, const __m256i *ww,
                       ptrdiff_t x, const Vert16Shifts *vs, uint16_t *out)
{
    const int half = taps / 2;
    __m256i s[2];
    s[0] = s[1] = vs->mu_init;
    for (int k = 0; k <= half; k++) {
        const __m256i t = load_u16(r[k] + 2 * x);
        const __m256i b = k == half ? t : load_u16(r[taps - 1 - k] + 2 * x);
        madd_rows(s, bias16(t), bias16(b), ww[k]);
    }
    s[0] = _mm256_srl_epi32(s[0], vs->mu);
    s[1] = _mm256_srl_epi32(s[1], vs->mu);
    store_lo16(out + x, s);
}

/* Horizontal low-pass at even columns (vif.c dec_horizontal): output j is
 * centred on sample 2 j, so the loads of vif_x86_row_weights() at 2 j +
 * off with the even-output weights give outputs j, j + 1, ... in order. */
INLINE void dec_horizontal(const uint16_t *v, int wo, const int taps,
                           const RowW *rw, uint16_t *out)
{
    const int half = taps / 2, first = vif_x86_row_first(half);
    const __m256i init = _mm256_set1_epi32((int32_t)(0x80000000u + 0x8000u));
    for (int j = 0; j < wo; j += BLOCK) {
        __m256i lo = init, hi = init;
        for (int l = 0; l < vif_x86_row_loads(half); l++) {
            const uint16_t *q = v + 2 * j + first + 2 * l;
            const __m256i a = _mm256_loadu_si256((const __m256i *)q);
            const __m256i b = _mm256_loadu_si256((const __m256i *)(q + 16));
            for (int k = 0; k < vif_x86_row_ne(half, l); k++) {
                lo = _mm256_add_epi32(lo, _mm256_madd_epi16(a, rw->e[l][k]));
                hi = _mm256_add_epi32(hi, _mm256_madd_epi16(b, rw->e[l][k]));
            }
        }
        const __m256i res = _mm256_permute4x64_epi64(
            _mm256_packus_epi32(_mm256_srli_epi32(lo, 16), _mm256_srli_epi32(hi, 16)), 0xD8);
        if (j + BLOCK <= wo) {
            _mm256_storeu_si256((__m256i *)(out + j), res);
        } else {
            uint16_t tmp[BLOCK];
            _mm256_storeu_si256((__m256i *)tmp, res);
            memcpy(out + j, tmp, (size_t)(wo - j) * sizeof(uint16_t));
        }
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
    __m256i wp[(QM_VIF_MAX_HALF + 2) / 2], ww[QM_VIF_MAX_HALF + 1];
    col_weights(fscale, wp, ww);
    RowW rw;
    row_weights(fscale, &rw);
    Vert16Shifts vs;
    vs.mu = _mm_cvtsi32_si128(in_bits);
    vs.mu_init = _mm256_set1_epi32((int32_t)(0x80000000u + (1u << (in_bits - 1))));

    uint16_t *v1 = st[0], *v2 = st[1];
    const uint8_t *rr[2 * QM_VIF_MAX_HALF + 1], *dr[2 * QM_VIF_MAX_HALF + 1];
    uint8_t nr[2 * QM_VIF_MAX_HALF + 1][BLOCK * 2], nd[2 * QM_VIF_MAX_HALF + 1][BLOCK * 2];
    for (int i = 0; i < h / 2; i++) {
        vif_x86_window(rr, ref, ref_stride, 2 * i, h, taps);
        vif_x86_window(dr, dis, dis_stride, 2 * i, h, taps);
        if (w < BLOCK) {
            narrow_rows(rr, taps, w, in_bits == 8 ? 1 : 2, nr);
            narrow_rows(dr, taps, w, in_bits == 8 ? 1 : 2, nd);
        }
        for (int x = 0; x < w; x += BLOCK) {
            const ptrdiff_t xc = w < BLOCK ? 0 : x + BLOCK <= w ? x : w - BLOCK;
            if (in_bits == 8) {
                dec_vert8(rr, taps, wp, xc, v1);
                dec_vert8(dr, taps, wp, xc, v2);
            } else {
                dec_vert16(rr, taps, ww, xc, &vs, v1);
                dec_vert16(dr, taps, ww, xc, &vs, v2);
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

void qm_vif_decimate_avx2(const void *ref, ptrdiff_t ref_stride,
                          const void *dis, ptrdiff_t dis_stride, int w, int h,
                          int in_bits, int scale, uint16_t *ref_out,
                          uint16_t *dis_out, ptrdiff_t out_stride, void *scratch)
{
#define DEC(S) decimate_scale(ref, ref_stride, dis, dis_stride, w, h, in_bits, \
                              S, ref_out, dis_out, out_stride, scratch)
    QM_VIF_FOR_NEXT_SCALE(scale, DEC);
#undef DEC
}
