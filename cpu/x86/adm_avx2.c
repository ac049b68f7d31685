/* gst-qmetric: AVX2 twins of the ADM row kernels (cpu/adm.c, cpu/adm.h).
 *
 * Each twin computes exactly what its C kernel computes, bit for bit
 * (tests/checkasm/adm.c); the comments say why a narrower or reordered
 * operation gives the same values.  Scale 0 (the 16-bit pipeline) runs in
 * 32-bit lanes: every band sample there is bounded by QM_ADM_BAND0_MAX.
 * Scales 1-3 keep the C kernels' 64-bit products, in four 64-bit lanes;
 * what AVX2 lacks for them (arithmetic 64-bit shifts, int64 -> float) is
 * built from what it has.
 */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "adm.h"
#include "adm_x86.h"

#define AT(p, j) ((const __m256i *)((p) + (j)))

/* Lanes 0 .. n - 1 of 8 (n <= 8). */
static inline __m256i lane_mask(int n)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
}

/* Two 16-bit taps as the 32-bit multiplier of _mm256_madd_epi16 over
 * interleaved (first, second) sample pairs. */
static inline __m256i tap_pair(int32_t first, int32_t second)
{
    return _mm256_set1_epi32((int32_t)(((uint32_t)second << 16) | (uint16_t)first));
}

/* Low 16 bits, sign-extended: the C code's (int16_t) conversion. */
static inline __m256i trunc16(__m256i x)
{
    return _mm256_srai_epi32(_mm256_slli_epi32(x, 16), 16);
}

/* Sum of the four 64-bit lanes. */
static inline int64_t hsum64(__m256i v)
{
    const __m128i s = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    return _mm_cvtsi128_si64(s) + _mm_extract_epi64(s, 1);
}

/* The low 32 bits of four 64-bit lanes, packed. */
static inline __m128i low32(__m256i v)
{
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
}

/* The high 32 bits of four 64-bit lanes, packed. */
static inline __m128i high32(__m256i v)
{
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7)));
}

/* x >> s, arithmetic, for 64-bit lanes (AVX2 has the logical shift only):
 * the complement of a negative lane is shifted instead. */
static inline __m256i sra64(__m256i x, __m128i s)
{
    const __m256i sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), x);
    return _mm256_xor_si256(_mm256_srl_epi64(_mm256_xor_si256(x, sign), s), sign);
}

/* Four uint32 as doubles (exact). */
static inline __m256d u32_pd(__m128i x)
{
    return _mm256_add_pd(_mm256_cvtepi32_pd(_mm_xor_si128(x, _mm_set1_epi32(INT32_MIN))),
                         _mm256_set1_pd(2147483648.0));
}

/* Four int64 rounded to float as the C code's conversion does (to
 * nearest, ties to even), which AVX2 lacks: the exact sum hi * 2^32 + lo
 * is rounded to double with round-to-odd (the rounding error of the
 * double sum, exact by Fast2Sum since |hi * 2^32| > lo or hi = 0, moves
 * an inexact even result one step towards the exact value); then double
 * -> float rounds to nearest once more, which gives the correctly
 * rounded float since 53 >= 2 * 24 + 2 (Boldo and Melquiond, "When double
 * rounding is odd", 2005). */
static inline __m128 i64_ps(__m256i x)
{
    const __m256d dh = _mm256_mul_pd(_mm256_cvtepi32_pd(high32(x)), _mm256_set1_pd(4294967296.0));
    const __m256d dl = u32_pd(low32(x));
    const __m256d s = _mm256_add_pd(dh, dl);
    const __m256d err = _mm256_add_pd(_mm256_sub_pd(dh, s), dl);
    const __m256i bits = _mm256_castpd_si256(s);
    const __m256i inexact = _mm256_castpd_si256(_mm256_cmp_pd(err, _mm256_setzero_pd(), _CMP_NEQ_OQ));
    const __m256i even = _mm256_cmpeq_epi64(_mm256_and_si256(bits, _mm256_set1_epi64x(1)),
                                            _mm256_setzero_si256());
    /* +1 ulp where err has the sign of s, else -1 */
    const __m256i away = _mm256_cmpgt_epi64(_mm256_setzero_si256(),
                                            _mm256_xor_si256(_mm256_castpd_si256(err), bits));
    const __m256i step = _mm256_or_si256(away, _mm256_set1_epi64x(1));
    const __m256i odd = _mm256_add_epi64(bits, _mm256_and_si256(step, _mm256_and_si256(inexact, even)));
    return _mm256_cvtpd_ps(_mm256_castsi256_pd(odd));
}

void qm_adm_i64_to_float_avx2(const int64_t *x, float *out, int n)
{
    int i = 0;
    for (; i + 4 <= n; i += 4)
        _mm_storeu_ps(out + i, i64_ps(_mm256_loadu_si256((const __m256i *)(x + i))));
    for (; i < n; i++)
        out[i] = (float)x[i];
}

/* ------------------------------------------------------------------------ */
/* DWT, scale 0                                                              */
/* ------------------------------------------------------------------------ */

static inline __m256i load_centred(const void *row, int bpc, int j, __m256i half)
{
    __m256i x;
    if (bpc == 8)
        x = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)((const uint8_t *)row + j)));
    else
        x = _mm256_loadu_si256((const __m256i *)((const uint16_t *)row + j));
    /* 16-bit wrap = the C code's (int16_t) of the difference */
    return _mm256_sub_epi16(x, half);
}

/* One filter of the vertical pass over 16 columns: (sum + add) >> sh of
 * the four rows.  Each 32-bit sum is exact: |sum| <= 54822 * 2^15. */
static inline __m256i vpass16(__m256i r01l, __m256i r01h, __m256i r23l, __m256i r23h,
                              __m256i c01, __m256i c23, __m256i add, __m128i sh)
{
    const __m256i l = _mm256_sra_epi32(_mm256_add_epi32(_mm256_add_epi32(
        _mm256_madd_epi16(r01l, c01), _mm256_madd_epi16(r23l, c23)), add), sh);
    const __m256i h = _mm256_sra_epi32(_mm256_add_epi32(_mm256_add_epi32(
        _mm256_madd_epi16(r01h, c01), _mm256_madd_epi16(r23h, c23)), add), sh);
    /* |result| <= 27411: the saturating pack is the C code's (int16_t) */
    return _mm256_packs_epi32(l, h);
}

/* Horizontal pass over 8 outputs from pairs (x[2j-1], x[2j]) and
 * (x[2j+1], x[2j+2]): (sum + 2^15) >> 16; |sum| <= 54822 * 27411 < 2^31,
 * and the result fits int16, so the C code's (int16_t) changes nothing. */
static inline __m256i hpass8(__m256i p0, __m256i p1, __m256i c01, __m256i c23)
{
    const __m256i s = _mm256_add_epi32(_mm256_madd_epi16(p0, c01), _mm256_madd_epi16(p1, c23));
    return _mm256_srai_epi32(_mm256_add_epi32(s, _mm256_set1_epi32(32768)), 16);
}

static void dwt0_row_avx2(const void *const src[4], int bpc, const QmAdmScaleQ *q,
                          int32_t *const band[4], int32_t *restrict tmp)
{
    const int n = q->in_w, w = q->w;
    int16_t *lo = (int16_t *)tmp, *hi = lo + n;
    const int32_t *L = QM_ADM_DB2_LO, *H = QM_ADM_DB2_HI;
    const __m256i l01 = tap_pair(L[0], L[1]), l23 = tap_pair(L[2], L[3]);
    const __m256i h01 = tap_pair(H[0], H[1]), h23 = tap_pair(H[2], H[3]);
    const __m256i vadd = _mm256_set1_epi32((int32_t)q->v_add);
    const __m128i vsh = _mm_cvtsi32_si128(q->v_shift);
    const __m256i half = _mm256_set1_epi16((int16_t)(1 << (bpc - 1)));
    int j = 0;
    for (; j + 16 <= n; j += 16) {
        const __m256i r0 = load_centred(src[0], bpc, j, half);
        const __m256i r1 = load_centred(src[1], bpc, j, half);
        const __m256i r2 = load_centred(src[2], bpc, j, half);
        const __m256i r3 = load_centred(src[3], bpc, j, half);
        const __m256i a = _mm256_unpacklo_epi16(r0, r1), b = _mm256_unpackhi_epi16(r0, r1);
        const __m256i c = _mm256_unpacklo_epi16(r2, r3), d = _mm256_unpackhi_epi16(r2, r3);
        _mm256_storeu_si256((__m256i *)(lo + j), vpass16(a, b, c, d, l01, l23, vadd, vsh));
        _mm256_storeu_si256((__m256i *)(hi + j), vpass16(a, b, c, d, h01, h23, vadd, vsh));
    }
    adm_dwt0_vtail(src, bpc, q, j, lo, hi);

    /* interior outputs 1 .. w - 3 read columns 2j - 1 .. 2j + 2 < n */
    const int end = w - 2;
    j = 1;
    for (; j + 8 <= end; j += 8) {
        const __m256i p0 = _mm256_loadu_si256((const __m256i *)(lo + 2 * j - 1));
        const __m256i p1 = _mm256_loadu_si256((const __m256i *)(lo + 2 * j + 1));
        const __m256i q0 = _mm256_loadu_si256((const __m256i *)(hi + 2 * j - 1));
        const __m256i q1 = _mm256_loadu_si256((const __m256i *)(hi + 2 * j + 1));
        _mm256_storeu_si256((__m256i *)(band[0] + j), hpass8(p0, p1, l01, l23));
        _mm256_storeu_si256((__m256i *)(band[2] + j), hpass8(p0, p1, h01, h23));
        _mm256_storeu_si256((__m256i *)(band[1] + j), hpass8(q0, q1, l01, l23));
        _mm256_storeu_si256((__m256i *)(band[3] + j), hpass8(q0, q1, h01, h23));
    }
    /* column 0 and the tail, taps mirrored */
    adm_dwt0_hborder(lo, hi, q, j, band);
}

/* Scales 1-3: one filter over 4 values in 64-bit lanes (x0..x3 hold the
 * int32 inputs in their low halves), 64-bit sums of exact 32x32 -> 64-bit
 * products, (sum + add) >> sh truncated to int32 (the low half of a
 * logical shift by sh <= 32 is that of the arithmetic one). */
static inline __m128i fir4_64(__m256i x0, __m256i x1, __m256i x2, __m256i x3,
                              const int32_t *f, __m256i add, __m128i sh)
{
    __m256i s = _mm256_add_epi64(_mm256_mul_epi32(x0, _mm256_set1_epi64x(f[0])),
                                 _mm256_mul_epi32(x1, _mm256_set1_epi64x(f[1])));
    s = _mm256_add_epi64(s, _mm256_add_epi64(_mm256_mul_epi32(x2, _mm256_set1_epi64x(f[2])),
                                             _mm256_mul_epi32(x3, _mm256_set1_epi64x(f[3]))));
    return low32(_mm256_srl_epi64(_mm256_add_epi64(s, add), sh));
}

static void dwt123_row_avx2(const void *const src[4], int bpc, const QmAdmScaleQ *q,
                            int32_t *const band[4], int32_t *restrict tmp)
{
    (void)bpc;
    const int n = q->in_w, w = q->w;
    int32_t *lo = tmp, *hi = tmp + n;
    const int32_t *L = QM_ADM_DB2_LO, *H = QM_ADM_DB2_HI;
    const int32_t *r[4] = { src[0], src[1], src[2], src[3] };
    const __m256i vadd = _mm256_set1_epi64x(q->v_add), hadd = _mm256_set1_epi64x(q->h_add);
    const __m128i vsh = _mm_cvtsi32_si128(q->v_shift), hsh = _mm_cvtsi32_si128(q->h_shift);
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        __m256i x[4];
        for (int k = 0; k < 4; k++)
            x[k] = _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(r[k] + j)));
        _mm_storeu_si128((__m128i *)(lo + j), fir4_64(x[0], x[1], x[2], x[3], L, vadd, vsh));
        _mm_storeu_si128((__m128i *)(hi + j), fir4_64(x[0], x[1], x[2], x[3], H, vadd, vsh));
    }
    adm_dwt123_vtail(r, q, j, lo, hi);
    /* interior outputs: 64-bit lane e of a load at 2j - 1 holds the pair
     * (x[2j-1+2e], x[2j+2e]); mul_epi32 reads the low half */
    const int end = w - 2;
    j = 1;
    for (; j + 4 <= end; j += 4) {
        const __m256i p0 = _mm256_loadu_si256(AT(lo, 2 * j - 1)), p2 = _mm256_loadu_si256(AT(lo, 2 * j + 1));
        const __m256i q0 = _mm256_loadu_si256(AT(hi, 2 * j - 1)), q2 = _mm256_loadu_si256(AT(hi, 2 * j + 1));
        const __m256i p1 = _mm256_srli_epi64(p0, 32), p3 = _mm256_srli_epi64(p2, 32);
        const __m256i q1 = _mm256_srli_epi64(q0, 32), q3 = _mm256_srli_epi64(q2, 32);
        _mm_storeu_si128((__m128i *)(band[0] + j), fir4_64(p0, p1, p2, p3, L, hadd, hsh));
        _mm_storeu_si128((__m128i *)(band[2] + j), fir4_64(p0, p1, p2, p3, H, hadd, hsh));
        _mm_storeu_si128((__m128i *)(band[1] + j), fir4_64(q0, q1, q2, q3, L, hadd, hsh));
        _mm_storeu_si128((__m128i *)(band[3] + j), fir4_64(q0, q1, q2, q3, H, hadd, hsh));
    }
    adm_dwt123_hborder(lo, hi, q, j, band);
}

/* ------------------------------------------------------------------------ */
/* Decouple, scale 0                                                         */
/* ------------------------------------------------------------------------ */

/* The angle flags of 8 samples (C kernel: dot >= 0 and dot^2 >= cos^2(1deg)
 * |o|^2 |t|^2, the integers rounded to float, compared in double).  With
 * |band| <= QM_ADM_BAND0_MAX every integer fits int32 (2 * 22931^2 < 2^31),
 * and int32 -> float rounds as int64 -> float does; float -> double and
 * dot^2 are exact; (cos * oo) * tt in the C code's order. */
static inline __m256i angle8(__m256i oh, __m256i ov, __m256i th, __m256i tv, __m256d c)
{
    const __m256i dot = _mm256_add_epi32(_mm256_mullo_epi32(oh, th), _mm256_mullo_epi32(ov, tv));
    const __m256i oo = _mm256_add_epi32(_mm256_mullo_epi32(oh, oh), _mm256_mullo_epi32(ov, ov));
    const __m256i tt = _mm256_add_epi32(_mm256_mullo_epi32(th, th), _mm256_mullo_epi32(tv, tv));
    const __m256 fd = _mm256_cvtepi32_ps(dot), fo = _mm256_cvtepi32_ps(oo), ft = _mm256_cvtepi32_ps(tt);
    __m256i m[2];
    for (int h = 0; h < 2; h++) {
        const __m128 d4 = h ? _mm256_extractf128_ps(fd, 1) : _mm256_castps256_ps128(fd);
        const __m128 o4 = h ? _mm256_extractf128_ps(fo, 1) : _mm256_castps256_ps128(fo);
        const __m128 t4 = h ? _mm256_extractf128_ps(ft, 1) : _mm256_castps256_ps128(ft);
        const __m256d dd = _mm256_cvtps_pd(d4);
        const __m256d rhs = _mm256_mul_pd(_mm256_mul_pd(c, _mm256_cvtps_pd(o4)), _mm256_cvtps_pd(t4));
        m[h] = _mm256_castpd_si256(_mm256_cmp_pd(_mm256_mul_pd(dd, dd), rhs, _CMP_GE_OQ));
    }
    /* 64-bit lane masks -> 32-bit lanes */
    const __m256i even = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m256i lo = _mm256_permutevar8x32_epi32(m[0], even);
    const __m256i hi = _mm256_permutevar8x32_epi32(m[1], even);
    const __m256i ge = _mm256_blend_epi32(lo, hi, 0xF0);
    return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_setzero_si256(), dot), ge);
}

/* x * sign for a sign mask sm (0 or -1 per lane) */
static inline __m256i apply_sign(__m256i x, __m256i sm)
{
    return _mm256_sub_epi32(_mm256_xor_si256(x, sm), sm);
}

/* |y| / 30 and |y| / 15 terms of one orientation's CSF values, added to
 * su and ce (C: mask_row, 16-bit pipeline; all products fit int32). */
static inline void mask_terms0(__m256i x, const QmAdmScaleQ *q, int t, __m256i *su, __m256i *ce)
{
    __m256i y = _mm256_mullo_epi32(x, _mm256_set1_epi32((int32_t)q->csf_mul[t]));
    y = _mm256_add_epi32(y, _mm256_set1_epi32((int32_t)q->csf_add[t]));
    y = _mm256_abs_epi32(trunc16(_mm256_sra_epi32(y, _mm_cvtsi32_si128(q->csf_shift[t]))));
    const __m256i f = _mm256_add_epi32(_mm256_mullo_epi32(y, _mm256_set1_epi32((int32_t)q->flt_mul)),
                                       _mm256_set1_epi32((int32_t)q->flt_add));
    const __m256i c = _mm256_add_epi32(_mm256_mullo_epi32(y, _mm256_set1_epi32((int32_t)q->ctr_mul)),
                                       _mm256_set1_epi32((int32_t)q->ctr_add));
    *su = _mm256_add_epi32(*su, trunc16(_mm256_sra_epi32(f, _mm_cvtsi32_si128(q->flt_shift))));
    *ce = _mm256_add_epi32(*ce, trunc16(_mm256_sra_epi32(c, _mm_cvtsi32_si128(q->ctr_shift))));
}

static inline void store8(int32_t *p, __m256i v, __m256i m, int full)
{
    if (full)
        _mm256_storeu_si256((__m256i *)p, v);
    else
        _mm256_maskstore_epi32(p, m, v);
}

static inline __m256i load8(const int32_t *p, __m256i m, int full)
{
    return full ? _mm256_loadu_si256((const __m256i *)p) : _mm256_maskload_epi32(p, m);
}

static void decouple0_row_avx2(const int32_t *const ref[3], const int32_t *const dis[3],
                               int x0, int x1, const QmAdmScaleQ *q, double egl,
                               const int32_t *recip, int32_t *const rst[3],
                               int32_t *const add[3], int32_t *const mask_r[2],
                               int32_t *const mask_a[2])
{
    const __m256d cos1sq = _mm256_set1_pd(adm_cos1sq());
    /* integral egl (1 and 100 in practice): |rs| * egl <= 22931 * 100 fits
     * int32; otherwise the C code's double product, truncated */
    const int egl_int = egl == floor(egl) && egl <= 100.0;
    const __m256i egl_i = _mm256_set1_epi32(egl_int ? (int32_t)egl : 0);
    const __m256d egl_d = _mm256_set1_pd(egl);
    const __m256i zero = _mm256_setzero_si256(), k_one = _mm256_set1_epi32(32768);
    const __m256i round15 = _mm256_set1_epi32(16384);
    for (int j = x0; j < x1; j += 8) {
        const int full = x1 - j >= 8;
        const __m256i lm = lane_mask(x1 - j);
        __m256i o[3], t[3];
        for (int b = 0; b < 3; b++) {
            o[b] = load8(ref[b] + j, lm, full);
            t[b] = load8(dis[b] + j, lm, full);
        }
        const __m256i ang = angle8(o[0], o[1], t[0], t[1], cos1sq);
        __m256i rv[3], av[3];
        for (int b = 0; b < 3; b++) {
            const __m256i ob = o[b], tb = t[b];
            const __m256i sm = _mm256_srai_epi32(ob, 31);
            const __m256i to = apply_sign(tb, sm);
            const __m256i ao = _mm256_abs_epi32(ob);
            /* k = (recip[|o|] * to + 2^14) >> 15 clipped to [0, 2^15]:
             * to <= 0 gives k = 0 and to > |o| gives k = 2^15 (recip[m] *
             * (m + 1) >= 2^30 for m <= 2^15), so to clamped to [0, |o|]
             * gives every other k, with recip[m] * m <= 2^30 in int32.
             * o == 0: k = 2^15 (the reference's special case). */
            const __m256i rc = _mm256_i32gather_epi32(recip, ao, 4);
            const __m256i tc = _mm256_min_epi32(_mm256_max_epi32(to, zero), ao);
            const __m256i kk = _mm256_srai_epi32(_mm256_add_epi32(_mm256_mullo_epi32(rc, tc), round15), 15);
            const __m256i oz = _mm256_cmpeq_epi32(ob, zero);
            const __m256i k = _mm256_blendv_epi8(kk, k_one, _mm256_or_si256(_mm256_cmpgt_epi32(to, ao), oz));
            /* |k * o| <= 2^15 * 22931 */
            const __m256i rs = _mm256_srai_epi32(_mm256_add_epi32(_mm256_mullo_epi32(k, ob), round15), 15);
            __m256i g;
            if (egl_int) {
                g = _mm256_mullo_epi32(rs, egl_i);
            } else {
                const __m256d lo = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(rs)), egl_d);
                const __m256d hi = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(rs, 1)), egl_d);
                g = _mm256_setr_m128i(_mm256_cvttpd_epi32(lo), _mm256_cvttpd_epi32(hi));
            }
            const __m256i lim = apply_sign(_mm256_min_epi32(apply_sign(g, sm), to), sm);
            const __m256i use = _mm256_andnot_si256(oz, _mm256_and_si256(ang, _mm256_cmpgt_epi32(k, zero)));
            rv[b] = _mm256_blendv_epi8(rs, lim, use);
            av[b] = _mm256_sub_epi32(tb, rv[b]);
            store8(rst[b] + j, rv[b], lm, full);
            store8(add[b] + j, av[b], lm, full);
        }
        __m256i su = zero, ce = zero, sa = zero, ca = zero;
        for (int b = 0; b < 3; b++) {
            mask_terms0(rv[b], q, b, &su, &ce);
            mask_terms0(av[b], q, b, &sa, &ca);
        }
        store8(mask_r[0] + j, su, lm, full);
        store8(mask_r[1] + j, _mm256_sub_epi32(ce, su), lm, full);
        store8(mask_a[0] + j, sa, lm, full);
        store8(mask_a[1] + j, _mm256_sub_epi32(ca, sa), lm, full);
    }
}

/* Four int32 sign-extended in 64-bit lanes, from 64-bit lanes whose low
 * halves hold them. */
static inline __m256i sext_low(__m256i v)
{
    const __m256i sign = _mm256_shuffle_epi32(_mm256_srai_epi32(v, 31), _MM_SHUFFLE(2, 2, 0, 0));
    return _mm256_blend_epi32(v, sign, 0xAA);
}

/* CSF values of scales 1-3 (C: mask_row_wide, num_row): (int32)((mul * x
 * + add) >> sh), 0 <= mul < 2^32, x an int32: the product is exact in
 * int64 (a signed product where mul fits int32, else |x| * mul with x's
 * sign); the low half of the shifted sum (sh <= 32) is the C code's
 * truncation. */
static inline __m128i csf4(__m128i x, int64_t mul, int64_t add, int sh)
{
    __m256i v;
    if (mul < INT32_MAX) {
        /* the Watson weights: a signed 32x32 -> 64-bit product */
        v = _mm256_mul_epi32(_mm256_cvtepi32_epi64(x), _mm256_set1_epi64x(mul));
    } else {
        const __m256i sign = _mm256_cvtepi32_epi64(_mm_srai_epi32(x, 31));
        const __m256i p = _mm256_mul_epu32(_mm256_cvtepu32_epi64(_mm_abs_epi32(x)),
                                           _mm256_set1_epi64x(mul));
        v = _mm256_sub_epi64(_mm256_xor_si256(p, sign), sign);
    }
    return low32(_mm256_srl_epi64(_mm256_add_epi64(v, _mm256_set1_epi64x(add)), _mm_cvtsi32_si128(sh)));
}

/* (int32)(v >> sh) of four int64 whose high half it is for sh = 32 */
static inline __m128i shift_trunc(__m256i v, int sh)
{
    return sh == 32 ? high32(v) : low32(sra64(v, _mm_cvtsi32_si128(sh)));
}

/* |y| / 30 and |y| / 15 terms of scales 1-3 (C: mask_row_wide) for four
 * samples: y the int32 CSF value, |y| <= 2^31 as uint32, (fm * |y| + fa)
 * >> 32 in int64 truncated to int32: the high half. */
static inline void mask_terms4(__m128i x, const QmAdmScaleQ *q, int t, __m128i *su, __m128i *ce)
{
    const __m128i y = csf4(x, q->csf_mul[t], q->csf_add[t], q->csf_shift[t]);
    const __m256i ay = _mm256_cvtepu32_epi64(_mm_abs_epi32(y));
    const __m256i f = _mm256_add_epi64(_mm256_mul_epu32(ay, _mm256_set1_epi64x(q->flt_mul)),
                                       _mm256_set1_epi64x(q->flt_add));
    const __m256i c = _mm256_add_epi64(_mm256_mul_epu32(ay, _mm256_set1_epi64x(q->ctr_mul)),
                                       _mm256_set1_epi64x(q->ctr_add));
    *su = _mm_add_epi32(*su, shift_trunc(f, q->flt_shift));
    *ce = _mm_add_epi32(*ce, shift_trunc(c, q->ctr_shift));
}

static inline __m128i load4(const int32_t *p, __m128i m, int full)
{
    return full ? _mm_loadu_si128((const __m128i *)p) : _mm_maskload_epi32(p, m);
}

static inline void store4(int32_t *p, __m128i v, __m128i m, int full)
{
    if (full)
        _mm_storeu_si128((__m128i *)p, v);
    else
        _mm_maskstore_epi32(p, m, v);
}

/* Scales 1-3, 4 samples per step in 64-bit lanes (C: decouple_row, wide). */
static void decouple123_row_avx2(const int32_t *const ref[3], const int32_t *const dis[3],
                                 int x0, int x1, const QmAdmScaleQ *q, double egl,
                                 const int32_t *recip, int32_t *const rst[3],
                                 int32_t *const add[3], int32_t *const mask_r[2],
                                 int32_t *const mask_a[2])
{
    const __m256d c = _mm256_set1_pd(adm_cos1sq());
    const __m256d egl_d = _mm256_set1_pd(egl);
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi64x(1);
    const __m256i k_one = _mm256_set1_epi64x(32768);
    for (int j = x0; j < x1; j += 4) {
        const int full = x1 - j >= 4;
        const __m128i lm = _mm256_castsi256_si128(lane_mask(x1 - j));
        __m128i o32[3], t32[3];
        __m256i o[3], t[3];
        for (int b = 0; b < 3; b++) {
            o32[b] = load4(ref[b] + j, lm, full);
            t32[b] = load4(dis[b] + j, lm, full);
            o[b] = _mm256_cvtepi32_epi64(o32[b]);
            t[b] = _mm256_cvtepi32_epi64(t32[b]);
        }
        /* the C kernel's 64-bit integers (wrapping), rounded to float */
        const __m256i dot = _mm256_add_epi64(_mm256_mul_epi32(o[0], t[0]), _mm256_mul_epi32(o[1], t[1]));
        const __m256i oo = _mm256_add_epi64(_mm256_mul_epi32(o[0], o[0]), _mm256_mul_epi32(o[1], o[1]));
        const __m256i tt = _mm256_add_epi64(_mm256_mul_epi32(t[0], t[0]), _mm256_mul_epi32(t[1], t[1]));
        const __m256d dd = _mm256_cvtps_pd(i64_ps(dot));
        const __m256d rhs = _mm256_mul_pd(_mm256_mul_pd(c, _mm256_cvtps_pd(i64_ps(oo))),
                                          _mm256_cvtps_pd(i64_ps(tt)));
        const __m256i ang = _mm256_castpd_si256(_mm256_and_pd(
            _mm256_cmp_pd(_mm256_mul_pd(dd, dd), rhs, _CMP_GE_OQ),
            _mm256_cmp_pd(dd, _mm256_setzero_pd(), _CMP_GE_OQ)));
        __m128i rv[3], av[3];
        for (int b = 0; b < 3; b++) {
            const __m256i ob = o[b];
            const __m256i sm = _mm256_cmpgt_epi64(zero, ob);
            const __m256i to = _mm256_sub_epi64(_mm256_xor_si256(t[b], sm), sm);
            const __m256i ao = _mm256_sub_epi64(_mm256_xor_si256(ob, sm), sm);
            /* |o| >= 2^15 is rounded to 15 significant bits first: shift
             * by bit length - 15, the exponent of the exact double (|o| =
             * 2^31 converts as -2^31: same exponent) */
            const __m256i e = _mm256_sub_epi64(_mm256_and_si256(_mm256_srli_epi64(_mm256_castpd_si256(
                _mm256_cvtepi32_pd(low32(ao))), 52), _mm256_set1_epi64x(0x7FF)), _mm256_set1_epi64x(1023 + 14));
            const __m256i big = _mm256_cmpgt_epi64(ao, _mm256_set1_epi64x(32767));
            const __m256i sh = _mm256_and_si256(big, e);
            const __m256i m = _mm256_srlv_epi64(_mm256_add_epi64(ao, _mm256_srli_epi64(
                _mm256_sllv_epi64(one, sh), 1)), sh);
            const __m256i rc = _mm256_cvtepu32_epi64(_mm256_i64gather_epi32(recip, m, 4));
            /* to <= 0 gives k <= 0, clipped to 0; for to > 0 (<= 2^31) the
             * unsigned 32x32 product is the C code's */
            __m256i k = _mm256_add_epi64(_mm256_mul_epu32(rc, to),
                                         _mm256_sllv_epi64(_mm256_set1_epi64x(1 << 14), sh));
            k = _mm256_srlv_epi64(k, _mm256_add_epi64(sh, _mm256_set1_epi64x(15)));
            k = _mm256_blendv_epi8(k, k_one, _mm256_cmpgt_epi64(k, k_one));
            k = _mm256_and_si256(k, _mm256_cmpgt_epi64(to, zero));
            const __m256i oz = _mm256_cmpeq_epi64(ob, zero);
            k = _mm256_blendv_epi8(k, k_one, oz);
            /* rs = (k * o + 2^14) >> 15 fits int32 (|k * o| <= 2^46) */
            const __m128i rs = low32(_mm256_srli_epi64(_mm256_add_epi64(_mm256_mul_epi32(k, ob),
                                                                        _mm256_set1_epi64x(16384)), 15));
            /* Where used (k > 0, so to > 0 and rs has o's sign), the limit
             * is sign(o) * min(trunc(|rs| * egl), to): the C code's double
             * product truncated, then clamped; min(trunc(a), to) =
             * trunc(min(a, to)) for an integer to, and a result of 2^31
             * converts to 0x80000000, the same bits. */
            const __m256d mag = _mm256_mul_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0),
                                                               _mm256_cvtepi32_pd(rs)), egl_d);
            const __m128i lim_m = _mm256_cvttpd_epi32(_mm256_min_pd(mag, u32_pd(low32(to))));
            const __m128i sm32 = low32(sm);
            const __m128i lim = _mm_sub_epi32(_mm_xor_si128(lim_m, sm32), sm32);
            const __m256i use = _mm256_andnot_si256(oz, _mm256_and_si256(ang, _mm256_cmpgt_epi64(k, zero)));
            rv[b] = _mm_blendv_epi8(rs, lim, low32(use));
            av[b] = _mm_sub_epi32(t32[b], rv[b]);
            store4(rst[b] + j, rv[b], lm, full);
            store4(add[b] + j, av[b], lm, full);
        }
        __m128i su = _mm_setzero_si128(), ce = su, sa = su, ca = su;
        for (int b = 0; b < 3; b++) {
            mask_terms4(rv[b], q, b, &su, &ce);
            mask_terms4(av[b], q, b, &sa, &ca);
        }
        store4(mask_r[0] + j, su, lm, full);
        store4(mask_r[1] + j, _mm_sub_epi32(ce, su), lm, full);
        store4(mask_a[0] + j, sa, lm, full);
        store4(mask_a[1] + j, _mm_sub_epi32(ca, sa), lm, full);
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
    int c = lo;
    for (; c + 8 <= hi; c += 8)
        _mm256_storeu_si256((__m256i *)(vs + c - c0),
                            _mm256_add_epi32(_mm256_add_epi32(_mm256_loadu_si256(AT(up, c)),
                                                              _mm256_loadu_si256(AT(mid, c))),
                                             _mm256_loadu_si256(AT(dn, c))));
    for (; c < hi; c++)
        vs[c - c0] = up[c] + mid[c] + dn[c];
    adm_thr_edges(sum, w, c0, c1, vs);
    int k = 0;
    for (; k + 8 <= n; k += 8) {
        const __m256i s = _mm256_add_epi32(_mm256_add_epi32(_mm256_loadu_si256(AT(vs, k)),
                                                            _mm256_loadu_si256(AT(vs, k + 1))),
                                           _mm256_add_epi32(_mm256_loadu_si256(AT(vs, k + 2)),
                                                            _mm256_loadu_si256(AT(ctr, j0 + k))));
        _mm256_storeu_si256((__m256i *)(thr + k), s);
    }
    for (; k < n; k++)
        thr[k] = vs[k] + vs[k + 1] + vs[k + 2] + ctr[j0 + k];
}

/* The C kernel's general per-sample arithmetic (C: num_row) on 4 lanes:
 * x the CSF value (int32), m = max(|x| - (thr << ts), 0) in wrapping
 * int32, m2 = (int32)((m^2 + sqa) >> sqs) (mul_epi32 reads the low half,
 * signed), term = (m2 * m + cuba) >> cubs in int64; lanes past n: m = 0
 * adds (0 + sqa) >> sqs = 0, then 0. */
static int64_t num_row64(const int32_t *src, const int32_t *thr, int n,
                         const QmAdmScaleQ *q, int t)
{
    const __m128i ts = _mm_cvtsi32_si128(q->thr_shift[t]);
    const __m128i sqs = _mm_cvtsi32_si128(q->sq_shift[t]), cubs = _mm_cvtsi32_si128(q->cub_shift[t]);
    const __m256i sqa = _mm256_set1_epi64x(q->sq_add[t]), cuba = _mm256_set1_epi64x(q->cub_add[t]);
    __m256i acc = _mm256_setzero_si256();
    for (int j = 0; j < n; j += 4) {
        const int full = n - j >= 4;
        const __m128i lm = _mm256_castsi256_si128(lane_mask(n - j));
        const __m128i x = csf4(load4(src + j, lm, full), q->csf_mul[t], q->x_add, q->x_shift);
        const __m128i th = _mm_sll_epi32(load4(thr + j, lm, full), ts);
        const __m128i m32 = _mm_and_si128(_mm_max_epi32(_mm_sub_epi32(_mm_abs_epi32(x), th),
                                                        _mm_setzero_si128()), lm);
        const __m256i m = _mm256_cvtepu32_epi64(m32);
        const __m256i m2 = _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(m, m), sqa), sqs);
        acc = _mm256_add_epi64(acc, sra64(_mm256_add_epi64(_mm256_mul_epi32(m2, m), cuba), cubs));
    }
    return hsum64(acc);
}

/* Scale 0 (C: num_row0): x = src * weight fits int32, m >= 0 as uint32;
 * the square and the cube are unsigned 32x32 -> 64-bit products of the
 * even and odd lanes.  Sets *wrapped when a square reaches 2^31. */
static int64_t num_row0_avx2(const int32_t *src, const int32_t *thr, int n,
                             const QmAdmScaleQ *q, int t, int *wrapped)
{
    const __m256i mul = _mm256_set1_epi32((int32_t)q->csf_mul[t]);
    const __m128i ts = _mm_cvtsi32_si128(q->thr_shift[t]);
    const __m128i sqs = _mm_cvtsi32_si128(q->sq_shift[t]);
    const __m128i cubs = _mm_cvtsi32_si128(q->cub_shift[t]);
    const __m256i sqa = _mm256_set1_epi64x(q->sq_add[t]), cuba = _mm256_set1_epi64x(q->cub_add[t]);
    __m256i acc = _mm256_setzero_si256(), over = _mm256_setzero_si256();
    for (int j = 0; j < n; j += 8) {
        const __m256i lm = lane_mask(n - j);
        const int full = n - j >= 8;
        const __m256i x = _mm256_mullo_epi32(load8(src + j, lm, full), mul);
        const __m256i th = _mm256_sll_epi32(load8(thr + j, lm, full), ts);
        /* lanes past n: mu = 0 adds (0 + sqa) >> sqs = 0, then 0 */
        const __m256i m = _mm256_and_si256(_mm256_max_epi32(_mm256_sub_epi32(_mm256_abs_epi32(x), th),
                                                            _mm256_setzero_si256()), lm);
        const __m256i mo = _mm256_srli_epi64(m, 32);
        const __m256i se = _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(m, m), sqa), sqs);
        const __m256i so = _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(mo, mo), sqa), sqs);
        over = _mm256_or_si256(over, _mm256_or_si256(se, so));
        acc = _mm256_add_epi64(acc, _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(se, m), cuba), cubs));
        acc = _mm256_add_epi64(acc, _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(so, mo), cuba), cubs));
    }
    /* bit 31 of any 32-bit square */
    *wrapped = !_mm256_testz_si256(over, _mm256_set1_epi64x(0x80000000));
    return hsum64(acc);
}

static void num_row_avx2(const int32_t *const src[3], const int32_t *const sum[3],
                         const int32_t *ctr, const QmAdmScaleQ *q, int64_t in[3])
{
    adm_num_row_x86(src, sum, ctr, q, in, thresholds, num_row0_avx2, num_row64);
}

/* ------------------------------------------------------------------------ */
/* Denominator sums                                                          */
/* ------------------------------------------------------------------------ */

/* Scale 0: plain cubes; u = |x| <= 2^15, u^2 in 32 bits, u^3 in 64. */
static void den0_row_avx2(const int32_t *const ref[3], const QmAdmScaleQ *q, uint64_t in[3])
{
    const int x0 = q->roi.x0, x1 = q->roi.x1;
    for (int t = 0; t < 3; t++) {
        __m256i acc = _mm256_setzero_si256();
        for (int j = x0; j < x1; j += 8) {
            const __m256i lm = lane_mask(x1 - j);
            const __m256i u = _mm256_abs_epi32(load8(ref[t] + j, lm, x1 - j >= 8));
            const __m256i u2 = _mm256_mullo_epi32(u, u);
            acc = _mm256_add_epi64(acc, _mm256_mul_epu32(u2, u));
            acc = _mm256_add_epi64(acc, _mm256_mul_epu32(_mm256_srli_epi64(u2, 32),
                                                         _mm256_srli_epi64(u, 32)));
        }
        in[t] = (uint64_t)hsum64(acc);
    }
}

/* Scales 1-3: u = |x| <= 2^31; s = (u^2 + a) >> sh may reach 2^32 + 1,
 * so s * u is formed from s's halves (mod 2^64, as the C code's uint64). */
static void den123_row_avx2(const int32_t *const ref[3], const QmAdmScaleQ *q, uint64_t in[3])
{
    const int x0 = q->roi.x0, x1 = q->roi.x1;
    const __m256i sqa = _mm256_set1_epi64x((int64_t)q->dsq_add), cuba = _mm256_set1_epi64x((int64_t)q->dcub_add);
    const __m128i sqs = _mm_cvtsi32_si128(q->dsq_shift), cubs = _mm_cvtsi32_si128(q->dcub_shift);
    for (int t = 0; t < 3; t++) {
        __m256i acc = _mm256_setzero_si256();
        for (int j = x0; j < x1; j += 4) {
            const __m128i lm = _mm256_castsi256_si128(lane_mask(x1 - j));
            const __m256i u = _mm256_cvtepu32_epi64(_mm_abs_epi32(load4(ref[t] + j, lm, x1 - j >= 4)));
            const __m256i s = _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epu32(u, u), sqa), sqs);
            const __m256i su = _mm256_add_epi64(_mm256_mul_epu32(s, u),
                                                _mm256_slli_epi64(_mm256_mul_epu32(_mm256_srli_epi64(s, 32), u), 32));
            const __m256i v = _mm256_srl_epi64(_mm256_add_epi64(su, cuba), cubs);
            acc = _mm256_add_epi64(acc, _mm256_and_si256(v, _mm256_cvtepi32_epi64(lm)));
        }
        in[t] = (uint64_t)hsum64(acc);
    }
}

void qm_adm_dsp_init_avx2(QmAdmDsp *dsp)
{
    dsp->dwt_row[0] = dwt0_row_avx2;
    dsp->dwt_row[1] = dwt123_row_avx2;
    dsp->decouple_row[0] = decouple0_row_avx2;
    dsp->decouple_row[1] = decouple123_row_avx2;
    dsp->num_row[0] = num_row_avx2;
    dsp->num_row[1] = num_row_avx2;
    dsp->den_row[0] = den0_row_avx2;
    dsp->den_row[1] = den123_row_avx2;
}
