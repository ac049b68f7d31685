/* gst-qmetric: AVX-512 (F, BW, VL, DQ) twins of the ADM row kernels
 * (cpu/adm.c, cpu/adm.h).
 *
 * Each twin computes exactly what its C kernel computes, bit for bit
 * (tests/checkasm/adm.c).  Scale 0 (the 16-bit pipeline) runs in 16
 * 32-bit lanes: every band sample there is bounded by QM_ADM_BAND0_MAX.
 * Scales 1-3 run in 8 64-bit lanes with the C kernels' 64-bit products;
 * AVX-512 has the 64-bit shifts, minima and int64 -> float conversion
 * that the C code's types imply.  Column tails use masked loads/stores.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "adm.h"
#include "adm_x86.h"

static inline __mmask16 mask16(int n)
{
    return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
}

static inline __mmask8 mask8(int n)
{
    return n >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << n) - 1);
}

/* Low 16 bits, sign-extended: the C code's (int16_t) conversion. */
static inline __m512i trunc16(__m512i x)
{
    return _mm512_srai_epi32(_mm512_slli_epi32(x, 16), 16);
}

/* x * sign for a sign mask sm (0 or -1 per lane) */
static inline __m512i apply_sign32(__m512i x, __m512i sm)
{
    return _mm512_sub_epi32(_mm512_xor_si512(x, sm), sm);
}

static inline __m512i apply_sign64(__m512i x, __m512i sm)
{
    return _mm512_sub_epi64(_mm512_xor_si512(x, sm), sm);
}

/* 8 int32 at p (lanes past n zero), sign-extended to 64 bits */
static inline __m512i load8_i64(const int32_t *p, __mmask8 m)
{
    return _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(m, p));
}

/* Two 16-bit taps as the 32-bit multiplier of madd over (first, second)
 * sample pairs. */
static inline __m512i tap_pair(int32_t first, int32_t second)
{
    return _mm512_set1_epi32((int32_t)(((uint32_t)second << 16) | (uint16_t)first));
}

/* ------------------------------------------------------------------------ */
/* DWT                                                                       */
/* ------------------------------------------------------------------------ */

static inline __m512i load_centred(const void *row, int bpc, int j, __m512i half)
{
    __m512i x;
    if (bpc == 8)
        x = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)((const uint8_t *)row + j)));
    else
        x = _mm512_loadu_si512((const void *)((const uint16_t *)row + j));
    /* 16-bit wrap = the C code's (int16_t) of the difference */
    return _mm512_sub_epi16(x, half);
}

/* One filter of the scale-0 vertical pass over 32 columns; every 32-bit
 * sum is exact (|sum| <= 54822 * 2^15) and the result fits int16, so the
 * saturating pack is the C code's (int16_t). */
static inline __m512i vpass32(__m512i r01l, __m512i r01h, __m512i r23l, __m512i r23h,
                              __m512i c01, __m512i c23, __m512i add, __m128i sh)
{
    const __m512i l = _mm512_sra_epi32(_mm512_add_epi32(_mm512_add_epi32(
        _mm512_madd_epi16(r01l, c01), _mm512_madd_epi16(r23l, c23)), add), sh);
    const __m512i h = _mm512_sra_epi32(_mm512_add_epi32(_mm512_add_epi32(
        _mm512_madd_epi16(r01h, c01), _mm512_madd_epi16(r23h, c23)), add), sh);
    return _mm512_packs_epi32(l, h);
}

/* Scale-0 horizontal pass, 16 outputs from pairs (x[2j-1], x[2j]) and
 * (x[2j+1], x[2j+2]): |sum| <= 54822 * 27411 < 2^31, result fits int16. */
static inline __m512i hpass16(__m512i p0, __m512i p1, __m512i c01, __m512i c23)
{
    const __m512i s = _mm512_add_epi32(_mm512_madd_epi16(p0, c01), _mm512_madd_epi16(p1, c23));
    return _mm512_srai_epi32(_mm512_add_epi32(s, _mm512_set1_epi32(32768)), 16);
}

static void dwt0_row_avx512(const void *const src[4], int bpc, const QmAdmScaleQ *q,
                            int32_t *const band[4], int32_t *restrict tmp)
{
    const int n = q->in_w, w = q->w;
    int16_t *lo = (int16_t *)tmp, *hi = lo + n;
    const int32_t *L = QM_ADM_DB2_LO, *H = QM_ADM_DB2_HI;
    const __m512i l01 = tap_pair(L[0], L[1]), l23 = tap_pair(L[2], L[3]);
    const __m512i h01 = tap_pair(H[0], H[1]), h23 = tap_pair(H[2], H[3]);
    const __m512i vadd = _mm512_set1_epi32((int32_t)q->v_add);
    const __m128i vsh = _mm_cvtsi32_si128(q->v_shift);
    const __m512i half = _mm512_set1_epi16((int16_t)(1 << (bpc - 1)));
    int j = 0;
    for (; j + 32 <= n; j += 32) {
        const __m512i r0 = load_centred(src[0], bpc, j, half);
        const __m512i r1 = load_centred(src[1], bpc, j, half);
        const __m512i r2 = load_centred(src[2], bpc, j, half);
        const __m512i r3 = load_centred(src[3], bpc, j, half);
        const __m512i a = _mm512_unpacklo_epi16(r0, r1), b = _mm512_unpackhi_epi16(r0, r1);
        const __m512i c = _mm512_unpacklo_epi16(r2, r3), d = _mm512_unpackhi_epi16(r2, r3);
        _mm512_storeu_si512(lo + j, vpass32(a, b, c, d, l01, l23, vadd, vsh));
        _mm512_storeu_si512(hi + j, vpass32(a, b, c, d, h01, h23, vadd, vsh));
    }
    adm_dwt0_vtail(src, bpc, q, j, lo, hi);

    /* interior outputs 1 .. w - 3 read columns 2j - 1 .. 2j + 2 < n */
    const int end = w - 2;
    j = 1;
    for (; j + 16 <= end; j += 16) {
        const __m512i p0 = _mm512_loadu_si512(lo + 2 * j - 1);
        const __m512i p1 = _mm512_loadu_si512(lo + 2 * j + 1);
        const __m512i q0 = _mm512_loadu_si512(hi + 2 * j - 1);
        const __m512i q1 = _mm512_loadu_si512(hi + 2 * j + 1);
        _mm512_storeu_si512(band[0] + j, hpass16(p0, p1, l01, l23));
        _mm512_storeu_si512(band[2] + j, hpass16(p0, p1, h01, h23));
        _mm512_storeu_si512(band[1] + j, hpass16(q0, q1, l01, l23));
        _mm512_storeu_si512(band[3] + j, hpass16(q0, q1, h01, h23));
    }
    /* column 0 and the tail, taps mirrored */
    adm_dwt0_hborder(lo, hi, q, j, band);
}

/* Scales 1-3: one filter over 8 values, 64-bit sums of 32x32 -> 64-bit
 * products (exact: |tap| < 2^15), (sum + add) >> sh truncated to int32 as
 * the C code's (int32_t). */
static inline __m256i fir4_64(__m512i x0, __m512i x1, __m512i x2, __m512i x3,
                              const int32_t *f, __m512i add, __m128i sh)
{
    __m512i s = _mm512_add_epi64(_mm512_mul_epi32(x0, _mm512_set1_epi64(f[0])),
                                 _mm512_mul_epi32(x1, _mm512_set1_epi64(f[1])));
    s = _mm512_add_epi64(s, _mm512_add_epi64(_mm512_mul_epi32(x2, _mm512_set1_epi64(f[2])),
                                             _mm512_mul_epi32(x3, _mm512_set1_epi64(f[3]))));
    return _mm512_cvtepi64_epi32(_mm512_sra_epi64(_mm512_add_epi64(s, add), sh));
}

static void dwt123_row_avx512(const void *const src[4], int bpc, const QmAdmScaleQ *q,
                              int32_t *const band[4], int32_t *restrict tmp)
{
    (void)bpc;
    const int n = q->in_w, w = q->w;
    int32_t *lo = tmp, *hi = tmp + n;
    const int32_t *L = QM_ADM_DB2_LO, *H = QM_ADM_DB2_HI;
    const int32_t *r[4] = { src[0], src[1], src[2], src[3] };
    const __m512i vadd = _mm512_set1_epi64(q->v_add), hadd = _mm512_set1_epi64(q->h_add);
    const __m128i vsh = _mm_cvtsi32_si128(q->v_shift), hsh = _mm_cvtsi32_si128(q->h_shift);
    for (int j = 0; j < n; j += 8) {
        const __mmask8 m = mask8(n - j);
        const __m512i x0 = load8_i64(r[0] + j, m), x1 = load8_i64(r[1] + j, m);
        const __m512i x2 = load8_i64(r[2] + j, m), x3 = load8_i64(r[3] + j, m);
        _mm256_mask_storeu_epi32(lo + j, m, fir4_64(x0, x1, x2, x3, L, vadd, vsh));
        _mm256_mask_storeu_epi32(hi + j, m, fir4_64(x0, x1, x2, x3, H, vadd, vsh));
    }
    /* interior outputs: 64-bit lane e of a load at 2j - 1 holds the pair
     * (x[2j-1+2e], x[2j+2e]); mul_epi32 reads the low half */
    const int end = w - 2;
    int j = 1;
    for (; j + 8 <= end; j += 8) {
        const __m512i p0 = _mm512_loadu_si512(lo + 2 * j - 1), p2 = _mm512_loadu_si512(lo + 2 * j + 1);
        const __m512i q0 = _mm512_loadu_si512(hi + 2 * j - 1), q2 = _mm512_loadu_si512(hi + 2 * j + 1);
        const __m512i p1 = _mm512_srli_epi64(p0, 32), p3 = _mm512_srli_epi64(p2, 32);
        const __m512i q1 = _mm512_srli_epi64(q0, 32), q3 = _mm512_srli_epi64(q2, 32);
        _mm256_storeu_si256((__m256i *)(band[0] + j), fir4_64(p0, p1, p2, p3, L, hadd, hsh));
        _mm256_storeu_si256((__m256i *)(band[2] + j), fir4_64(p0, p1, p2, p3, H, hadd, hsh));
        _mm256_storeu_si256((__m256i *)(band[1] + j), fir4_64(q0, q1, q2, q3, L, hadd, hsh));
        _mm256_storeu_si256((__m256i *)(band[3] + j), fir4_64(q0, q1, q2, q3, H, hadd, hsh));
    }
    adm_dwt123_hborder(lo, hi, q, j, band);
}

/* ------------------------------------------------------------------------ */
/* Decouple                                                                  */
/* ------------------------------------------------------------------------ */

/* dot >= 0 and dot^2 >= (c * oo) * tt for 8 lanes whose integers, rounded
 * to float, are given; float -> double and dot^2 are exact. */
static inline __mmask8 angle_test8(__m256 fd, __m256 fo, __m256 ft, __m512d c)
{
    const __m512d dd = _mm512_cvtps_pd(fd);
    const __m512d rhs = _mm512_mul_pd(_mm512_mul_pd(c, _mm512_cvtps_pd(fo)), _mm512_cvtps_pd(ft));
    return _mm512_cmp_pd_mask(_mm512_mul_pd(dd, dd), rhs, _CMP_GE_OQ) &
           _mm512_cmp_pd_mask(dd, _mm512_setzero_pd(), _CMP_GE_OQ);
}

/* Scale 0: |band| <= QM_ADM_BAND0_MAX, so the dot products fit int32
 * (2 * 22931^2 < 2^31), and int32 -> float rounds as int64 -> float. */
static inline __mmask16 angle16(__m512i oh, __m512i ov, __m512i th, __m512i tv, __m512d c)
{
    const __m512i dot = _mm512_add_epi32(_mm512_mullo_epi32(oh, th), _mm512_mullo_epi32(ov, tv));
    const __m512i oo = _mm512_add_epi32(_mm512_mullo_epi32(oh, oh), _mm512_mullo_epi32(ov, ov));
    const __m512i tt = _mm512_add_epi32(_mm512_mullo_epi32(th, th), _mm512_mullo_epi32(tv, tv));
    const __m512 fd = _mm512_cvtepi32_ps(dot), fo = _mm512_cvtepi32_ps(oo), ft = _mm512_cvtepi32_ps(tt);
    const __mmask8 lo = angle_test8(_mm512_castps512_ps256(fd), _mm512_castps512_ps256(fo),
                                    _mm512_castps512_ps256(ft), c);
    const __mmask8 hi = angle_test8(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(fd), 1)),
                                    _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(fo), 1)),
                                    _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(ft), 1)), c);
    return (__mmask16)(lo | (hi << 8));
}

/* |y| / 30 and |y| / 15 terms of one orientation's CSF values (scale 0,
 * C: mask_row's 16-bit pipeline; all products fit int32). */
static inline void mask_terms0(__m512i x, const QmAdmScaleQ *q, int t, __m512i *su, __m512i *ce)
{
    __m512i y = _mm512_mullo_epi32(x, _mm512_set1_epi32((int32_t)q->csf_mul[t]));
    y = _mm512_add_epi32(y, _mm512_set1_epi32((int32_t)q->csf_add[t]));
    y = _mm512_abs_epi32(trunc16(_mm512_sra_epi32(y, _mm_cvtsi32_si128(q->csf_shift[t]))));
    const __m512i f = _mm512_add_epi32(_mm512_mullo_epi32(y, _mm512_set1_epi32((int32_t)q->flt_mul)),
                                       _mm512_set1_epi32((int32_t)q->flt_add));
    const __m512i c = _mm512_add_epi32(_mm512_mullo_epi32(y, _mm512_set1_epi32((int32_t)q->ctr_mul)),
                                       _mm512_set1_epi32((int32_t)q->ctr_add));
    *su = _mm512_add_epi32(*su, trunc16(_mm512_sra_epi32(f, _mm_cvtsi32_si128(q->flt_shift))));
    *ce = _mm512_add_epi32(*ce, trunc16(_mm512_sra_epi32(c, _mm_cvtsi32_si128(q->ctr_shift))));
}

static void decouple0_row_avx512(const int32_t *const ref[3], const int32_t *const dis[3],
                                 int x0, int x1, const QmAdmScaleQ *q, double egl,
                                 const int32_t *recip, int32_t *const rst[3],
                                 int32_t *const add[3], int32_t *const mask_r[2],
                                 int32_t *const mask_a[2])
{
    const __m512d c = _mm512_set1_pd(adm_cos1sq());
    /* integral egl (1 and 100 in practice): |rs| * egl <= 22931 * 100 fits
     * int32; otherwise the C code's double product, truncated */
    const int egl_int = egl == floor(egl) && egl <= 100.0;
    const __m512i egl_i = _mm512_set1_epi32(egl_int ? (int32_t)egl : 0);
    const __m512d egl_d = _mm512_set1_pd(egl);
    const __m512i zero = _mm512_setzero_si512(), k_one = _mm512_set1_epi32(32768);
    const __m512i round15 = _mm512_set1_epi32(16384);
    for (int j = x0; j < x1; j += 16) {
        const __mmask16 lm = mask16(x1 - j);
        __m512i o[3], t[3];
        for (int b = 0; b < 3; b++) {
            o[b] = _mm512_maskz_loadu_epi32(lm, ref[b] + j);
            t[b] = _mm512_maskz_loadu_epi32(lm, dis[b] + j);
        }
        const __mmask16 ang = angle16(o[0], o[1], t[0], t[1], c);
        __m512i rv[3], av[3];
        for (int b = 0; b < 3; b++) {
            const __m512i ob = o[b], tb = t[b];
            const __m512i sm = _mm512_srai_epi32(ob, 31);
            const __m512i to = apply_sign32(tb, sm);
            const __m512i ao = _mm512_abs_epi32(ob);
            /* k = (recip[|o|] * to + 2^14) >> 15 clipped to [0, 2^15]:
             * to <= 0 gives 0 and to > |o| gives 2^15 (recip[m] * (m + 1)
             * >= 2^30 for m <= 2^15), so to clamped to [0, |o|] gives
             * every other k, with recip[m] * m <= 2^30 in int32.
             * o == 0: 2^15 (the reference's special case). */
            const __m512i rc = _mm512_i32gather_epi32(ao, recip, 4);
            const __m512i tc = _mm512_min_epi32(_mm512_max_epi32(to, zero), ao);
            __m512i k = _mm512_srai_epi32(_mm512_add_epi32(_mm512_mullo_epi32(rc, tc), round15), 15);
            const __mmask16 oz = _mm512_cmpeq_epi32_mask(ob, zero);
            k = _mm512_mask_mov_epi32(k, _mm512_cmpgt_epi32_mask(to, ao) | oz, k_one);
            /* |k * o| <= 2^15 * 22931 */
            const __m512i rs = _mm512_srai_epi32(_mm512_add_epi32(_mm512_mullo_epi32(k, ob), round15), 15);
            __m512i g;
            if (egl_int) {
                g = _mm512_mullo_epi32(rs, egl_i);
            } else {
                const __m512d lo = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(rs)), egl_d);
                const __m512d hi = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(rs, 1)), egl_d);
                g = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvttpd_epi32(lo)),
                                       _mm512_cvttpd_epi32(hi), 1);
            }
            const __m512i lim = apply_sign32(_mm512_min_epi32(apply_sign32(g, sm), to), sm);
            const __mmask16 use = ang & _mm512_cmpgt_epi32_mask(k, zero) & ~oz;
            rv[b] = _mm512_mask_mov_epi32(rs, use, lim);
            av[b] = _mm512_sub_epi32(tb, rv[b]);
            _mm512_mask_storeu_epi32(rst[b] + j, lm, rv[b]);
            _mm512_mask_storeu_epi32(add[b] + j, lm, av[b]);
        }
        __m512i su = zero, ce = zero, sa = zero, ca = zero;
        for (int b = 0; b < 3; b++) {
            mask_terms0(rv[b], q, b, &su, &ce);
            mask_terms0(av[b], q, b, &sa, &ca);
        }
        _mm512_mask_storeu_epi32(mask_r[0] + j, lm, su);
        _mm512_mask_storeu_epi32(mask_r[1] + j, lm, _mm512_sub_epi32(ce, su));
        _mm512_mask_storeu_epi32(mask_a[0] + j, lm, sa);
        _mm512_mask_storeu_epi32(mask_a[1] + j, lm, _mm512_sub_epi32(ca, sa));
    }
}

/* CSF value of scales 1-3: (int32)((mul * x + add) >> shift), mul < 2^32
 * and x an int32: the 64-bit product is exact. */
static inline __m512i csf64(__m512i x, __m512i mul, __m512i add, __m128i sh)
{
    return _mm512_sra_epi64(_mm512_add_epi64(_mm512_mullo_epi64(x, mul), add), sh);
}

/* |y| / 30 and |y| / 15 terms of scales 1-3 (C: mask_row_wide): y the
 * int32 CSF value, |y| <= 2^31 as uint32; (fm * |y| + fa) >> 32 in int64,
 * truncated to int32. */
static inline void mask_terms123(__m512i x, const QmAdmScaleQ *q, int t, __m256i *su, __m256i *ce)
{
    const __m512i y = _mm512_cvtepi32_epi64(_mm512_cvtepi64_epi32(
        csf64(x, _mm512_set1_epi64(q->csf_mul[t]), _mm512_set1_epi64(q->csf_add[t]),
              _mm_cvtsi32_si128(q->csf_shift[t]))));
    const __m512i ay = _mm512_abs_epi64(y);
    const __m512i f = _mm512_add_epi64(_mm512_mul_epu32(ay, _mm512_set1_epi64(q->flt_mul)),
                                       _mm512_set1_epi64(q->flt_add));
    const __m512i c = _mm512_add_epi64(_mm512_mul_epu32(ay, _mm512_set1_epi64(q->ctr_mul)),
                                       _mm512_set1_epi64(q->ctr_add));
    *su = _mm256_add_epi32(*su, _mm512_cvtepi64_epi32(_mm512_sra_epi64(f, _mm_cvtsi32_si128(q->flt_shift))));
    *ce = _mm256_add_epi32(*ce, _mm512_cvtepi64_epi32(_mm512_sra_epi64(c, _mm_cvtsi32_si128(q->ctr_shift))));
}

/* Scales 1-3, 8 samples per step in 64-bit lanes. */
static void decouple123_row_avx512(const int32_t *const ref[3], const int32_t *const dis[3],
                                   int x0, int x1, const QmAdmScaleQ *q, double egl,
                                   const int32_t *recip, int32_t *const rst[3],
                                   int32_t *const add[3], int32_t *const mask_r[2],
                                   int32_t *const mask_a[2])
{
    const __m512d c = _mm512_set1_pd(adm_cos1sq());
    const __m512d egl_d = _mm512_set1_pd(egl);
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi64(1);
    const __m512i k_one = _mm512_set1_epi64(32768);
    for (int j = x0; j < x1; j += 8) {
        const __mmask8 lm = mask8(x1 - j);
        __m512i o[3], t[3];
        for (int b = 0; b < 3; b++) {
            o[b] = load8_i64(ref[b] + j, lm);
            t[b] = load8_i64(dis[b] + j, lm);
        }
        /* the C kernel's 64-bit integers (wrapping), rounded to float */
        const __m512i dot = _mm512_add_epi64(_mm512_mul_epi32(o[0], t[0]), _mm512_mul_epi32(o[1], t[1]));
        const __m512i oo = _mm512_add_epi64(_mm512_mul_epi32(o[0], o[0]), _mm512_mul_epi32(o[1], o[1]));
        const __m512i tt = _mm512_add_epi64(_mm512_mul_epi32(t[0], t[0]), _mm512_mul_epi32(t[1], t[1]));
        const __mmask8 ang = angle_test8(_mm512_cvtepi64_ps(dot), _mm512_cvtepi64_ps(oo),
                                         _mm512_cvtepi64_ps(tt), c);
        __m256i rv[3], av[3];
        for (int b = 0; b < 3; b++) {
            const __m512i ob = o[b], tb = t[b];
            const __m512i sm = _mm512_srai_epi64(ob, 63);
            const __m512i to = apply_sign64(tb, sm);
            const __m512i ao = _mm512_abs_epi64(ob);
            /* |o| >= 2^15 is rounded to 15 significant bits first: shift
             * by bit length - 15 (exact exponent of the double) */
            const __m512i e = _mm512_cvttpd_epi64(_mm512_getexp_pd(_mm512_cvtepi64_pd(ao)));
            const __mmask8 big = _mm512_cmpge_epi64_mask(ao, _mm512_set1_epi64(32768));
            const __m512i sh = _mm512_maskz_sub_epi64(big, e, _mm512_set1_epi64(14));
            const __m512i m = _mm512_srlv_epi64(_mm512_add_epi64(ao, _mm512_srli_epi64(
                _mm512_sllv_epi64(one, sh), 1)), sh);
            const __m512i rc = _mm512_cvtepu32_epi64(_mm512_i64gather_epi32(m, recip, 4));
            /* to <= 0 gives k <= 0, clipped to 0; for to > 0 (<= 2^31) the
             * unsigned 32x32 product is the C code's */
            __m512i k = _mm512_add_epi64(_mm512_mul_epu32(rc, to),
                                         _mm512_sllv_epi64(_mm512_set1_epi64(1 << 14), sh));
            k = _mm512_srlv_epi64(k, _mm512_add_epi64(sh, _mm512_set1_epi64(15)));
            k = _mm512_maskz_min_epu64(_mm512_cmpgt_epi64_mask(to, zero), k, k_one);
            const __mmask8 oz = _mm512_cmpeq_epi64_mask(ob, zero);
            k = _mm512_mask_mov_epi64(k, oz, k_one);
            /* |k * o| <= 2^46; the result fits int32 */
            const __m512i rs = _mm512_srai_epi64(_mm512_add_epi64(_mm512_mul_epi32(k, ob),
                                                                  _mm512_set1_epi64(16384)), 15);
            /* (int64)(rs * egl) in double, as the C code (exact for an
             * integral egl: |rs * egl| < 2^38) */
            const __m512i g = _mm512_cvttpd_epi64(_mm512_mul_pd(_mm512_cvtepi64_pd(rs), egl_d));
            const __m512i lim = apply_sign64(_mm512_min_epi64(apply_sign64(g, sm), to), sm);
            const __mmask8 use = ang & _mm512_cmpgt_epi64_mask(k, zero) & ~oz;
            rv[b] = _mm512_cvtepi64_epi32(_mm512_mask_mov_epi64(rs, use, lim));
            av[b] = _mm256_sub_epi32(_mm512_cvtepi64_epi32(tb), rv[b]);
            _mm256_mask_storeu_epi32(rst[b] + j, lm, rv[b]);
            _mm256_mask_storeu_epi32(add[b] + j, lm, av[b]);
        }
        __m256i su = _mm256_setzero_si256(), ce = su, sa = su, ca = su;
        for (int b = 0; b < 3; b++) {
            mask_terms123(_mm512_cvtepi32_epi64(rv[b]), q, b, &su, &ce);
            mask_terms123(_mm512_cvtepi32_epi64(av[b]), q, b, &sa, &ca);
        }
        _mm256_mask_storeu_epi32(mask_r[0] + j, lm, su);
        _mm256_mask_storeu_epi32(mask_r[1] + j, lm, _mm256_sub_epi32(ce, su));
        _mm256_mask_storeu_epi32(mask_a[0] + j, lm, sa);
        _mm256_mask_storeu_epi32(mask_a[1] + j, lm, _mm256_sub_epi32(ca, sa));
    }
}

/* ------------------------------------------------------------------------ */
/* Numerator sums                                                            */
/* ------------------------------------------------------------------------ */

/* Masking thresholds of columns [j0, j0 + n) of a row (C: qm_adm_num_row_c):
 * 3x3 sums of `sum` (taps mirrored) plus ctr. */
static void thresholds(const int32_t *const sum[3], const int32_t *ctr, int w, int j0,
                       int n, int32_t *restrict vs, int32_t *restrict thr)
{
    const int32_t *up = sum[0], *mid = sum[1], *dn = sum[2];
    const int c0 = j0 - 1, c1 = j0 + n + 1;
    const int lo = c0 < 0 ? 0 : c0, hi = c1 > w ? w : c1;
    for (int c = lo; c < hi; c += 16) {
        const __mmask16 m = mask16(hi - c);
        const __m512i s = _mm512_add_epi32(_mm512_add_epi32(_mm512_maskz_loadu_epi32(m, up + c),
                                                            _mm512_maskz_loadu_epi32(m, mid + c)),
                                           _mm512_maskz_loadu_epi32(m, dn + c));
        _mm512_mask_storeu_epi32(vs + c - c0, m, s);
    }
    adm_thr_edges(sum, w, c0, c1, vs);
    for (int k = 0; k < n; k += 16) {
        const __mmask16 m = mask16(n - k);
        const __m512i s = _mm512_add_epi32(_mm512_add_epi32(_mm512_maskz_loadu_epi32(m, vs + k),
                                                            _mm512_maskz_loadu_epi32(m, vs + k + 1)),
                                           _mm512_add_epi32(_mm512_maskz_loadu_epi32(m, vs + k + 2),
                                                            _mm512_maskz_loadu_epi32(m, ctr + j0 + k)));
        _mm512_mask_storeu_epi32(thr + k, m, s);
    }
}

/* The C kernel's general per-sample arithmetic (C: num_row) on 8 lanes:
 * x the CSF value (int32), m = max(|x| - (thr << ts), 0) in wrapping
 * int32, m2 = (int32)((m^2 + sqa) >> sqs), term = (m2 * m + cuba) >> cubs
 * in int64; lanes past n add 0. */
static int64_t num_row64(const int32_t *src, const int32_t *thr, int n, const QmAdmScaleQ *q, int t)
{
    const __m512i mul = _mm512_set1_epi64(q->csf_mul[t]), xadd = _mm512_set1_epi64(q->x_add);
    const __m128i xsh = _mm_cvtsi32_si128(q->x_shift), ts = _mm_cvtsi32_si128(q->thr_shift[t]);
    const __m128i sqs = _mm_cvtsi32_si128(q->sq_shift[t]), cubs = _mm_cvtsi32_si128(q->cub_shift[t]);
    const __m512i sqa = _mm512_set1_epi64(q->sq_add[t]), cuba = _mm512_set1_epi64(q->cub_add[t]);
    __m512i acc = _mm512_setzero_si512();
    for (int j = 0; j < n; j += 8) {
        const __mmask8 lm = mask8(n - j);
        const __m256i x = _mm512_cvtepi64_epi32(csf64(load8_i64(src + j, lm), mul, xadd, xsh));
        const __m256i th = _mm256_sll_epi32(_mm256_maskz_loadu_epi32(lm, thr + j), ts);
        const __m256i m32 = _mm256_max_epi32(_mm256_sub_epi32(_mm256_abs_epi32(x), th),
                                             _mm256_setzero_si256());
        const __m512i m = _mm512_maskz_cvtepu32_epi64(lm, m32);
        const __m512i m2 = _mm512_cvtepi32_epi64(_mm512_cvtepi64_epi32(
            _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(m, m), sqa), sqs)));
        acc = _mm512_add_epi64(acc, _mm512_sra_epi64(_mm512_add_epi64(_mm512_mul_epi32(m2, m), cuba), cubs));
    }
    return _mm512_reduce_add_epi64(acc);
}

/* Scale 0 (C: num_row0): x = src * weight fits int32, m >= 0 as uint32;
 * the square and the cube are unsigned 32x32 -> 64-bit products of the
 * even and odd lanes.  Sets *wrapped when a square reaches 2^31. */
static int64_t num_row0_avx512(const int32_t *src, const int32_t *thr, int n,
                               const QmAdmScaleQ *q, int t, int *wrapped)
{
    const __m512i mul = _mm512_set1_epi32((int32_t)q->csf_mul[t]);
    const __m128i ts = _mm_cvtsi32_si128(q->thr_shift[t]);
    const __m128i sqs = _mm_cvtsi32_si128(q->sq_shift[t]);
    const __m128i cubs = _mm_cvtsi32_si128(q->cub_shift[t]);
    const __m512i sqa = _mm512_set1_epi64(q->sq_add[t]), cuba = _mm512_set1_epi64(q->cub_add[t]);
    __m512i acc = _mm512_setzero_si512(), over = _mm512_setzero_si512();
    for (int j = 0; j < n; j += 16) {
        const __mmask16 lm = mask16(n - j);
        const __m512i x = _mm512_mullo_epi32(_mm512_maskz_loadu_epi32(lm, src + j), mul);
        const __m512i th = _mm512_sll_epi32(_mm512_maskz_loadu_epi32(lm, thr + j), ts);
        /* lanes past n: mu = 0 adds (0 + sqa) >> sqs = 0, then 0 */
        const __m512i m = _mm512_maskz_max_epi32(lm, _mm512_sub_epi32(_mm512_abs_epi32(x), th),
                                                 _mm512_setzero_si512());
        const __m512i mo = _mm512_srli_epi64(m, 32);
        const __m512i se = _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(m, m), sqa), sqs);
        const __m512i so = _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(mo, mo), sqa), sqs);
        over = _mm512_or_si512(over, _mm512_or_si512(se, so));
        acc = _mm512_add_epi64(acc, _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(se, m), cuba), cubs));
        acc = _mm512_add_epi64(acc, _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(so, mo), cuba), cubs));
    }
    /* bit 31 of any 32-bit square */
    *wrapped = _mm512_test_epi64_mask(over, _mm512_set1_epi64(0x80000000)) != 0;
    return _mm512_reduce_add_epi64(acc);
}

static void num_row_avx512(const int32_t *const src[3], const int32_t *const sum[3],
                           const int32_t *ctr, const QmAdmScaleQ *q, int64_t in[3])
{
    adm_num_row_x86(src, sum, ctr, q, in, thresholds, num_row0_avx512, num_row64);
}

/* ------------------------------------------------------------------------ */
/* Denominator sums                                                          */
/* ------------------------------------------------------------------------ */

/* Scale 0: plain cubes; u = |x| <= 2^15, u^2 in 32 bits, u^3 in 64. */
static void den0_row_avx512(const int32_t *const ref[3], const QmAdmScaleQ *q, uint64_t in[3])
{
    const int x0 = q->roi.x0, x1 = q->roi.x1;
    for (int t = 0; t < 3; t++) {
        __m512i acc = _mm512_setzero_si512();
        for (int j = x0; j < x1; j += 16) {
            const __m512i u = _mm512_abs_epi32(_mm512_maskz_loadu_epi32(mask16(x1 - j), ref[t] + j));
            const __m512i u2 = _mm512_mullo_epi32(u, u);
            acc = _mm512_add_epi64(acc, _mm512_mul_epu32(u2, u));
            acc = _mm512_add_epi64(acc, _mm512_mul_epu32(_mm512_srli_epi64(u2, 32),
                                                         _mm512_srli_epi64(u, 32)));
        }
        in[t] = (uint64_t)_mm512_reduce_add_epi64(acc);
    }
}

/* Scales 1-3: u = |x| <= 2^31; ((u^2 + a) >> s) may reach 2^32 + 1, so
 * its product with u is a 64-bit multiply (wrapping as the C code's). */
static void den123_row_avx512(const int32_t *const ref[3], const QmAdmScaleQ *q, uint64_t in[3])
{
    const int x0 = q->roi.x0, x1 = q->roi.x1;
    const __m512i sqa = _mm512_set1_epi64((int64_t)q->dsq_add), cuba = _mm512_set1_epi64((int64_t)q->dcub_add);
    const __m128i sqs = _mm_cvtsi32_si128(q->dsq_shift), cubs = _mm_cvtsi32_si128(q->dcub_shift);
    for (int t = 0; t < 3; t++) {
        __m512i acc = _mm512_setzero_si512();
        for (int j = x0; j < x1; j += 8) {
            const __mmask8 lm = mask8(x1 - j);
            const __m512i u = _mm512_abs_epi64(load8_i64(ref[t] + j, lm));
            const __m512i s = _mm512_srl_epi64(_mm512_add_epi64(_mm512_mul_epu32(u, u), sqa), sqs);
            const __m512i v = _mm512_srl_epi64(_mm512_add_epi64(_mm512_mullo_epi64(s, u), cuba), cubs);
            acc = _mm512_mask_add_epi64(acc, lm, acc, v);
        }
        in[t] = (uint64_t)_mm512_reduce_add_epi64(acc);
    }
}

void qm_adm_dsp_init_avx512(QmAdmDsp *dsp)
{
    dsp->dwt_row[0] = dwt0_row_avx512;
    dsp->dwt_row[1] = dwt123_row_avx512;
    dsp->decouple_row[0] = decouple0_row_avx512;
    dsp->decouple_row[1] = decouple123_row_avx512;
    dsp->num_row[0] = num_row_avx512;
    dsp->num_row[1] = num_row_avx512;
    dsp->den_row[0] = den0_row_avx512;
    dsp->den_row[1] = den123_row_avx512;
}
