/* gst-qmetric: the AVX2 instance of the ADM twins (adm_tmpl.c has the
 * scale-0 stages and the thresholds; cpu/adm.c is the specification).
 * Defined here, as only AVX2 does it: the scale-0 angle test, and scales
 * 1-3, which keep the C kernels' 64-bit products in four 64-bit lanes;
 * what AVX2 lacks for them (arithmetic 64-bit shifts, int64 -> float) is
 * built from what it has.  Each twin computes exactly what its C kernel
 * computes, bit for bit (tests/checkasm/adm.c); the comments say why a
 * narrower or reordered operation gives the same values.
 */
#include <math.h>
#include <stdint.h>

#include "x86/vec_avx2.h"
#include "adm.h"
#include "x86/adm_x86.h"

#define AT(p, j) ((const __m256i *)((p) + (j)))

/* Lanes 0 .. n - 1 of 8 (n <= 8). */
static inline __m256i lane_mask(int n)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx);
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
/* DWT, scales 1-3                                                          */
/* ------------------------------------------------------------------------ */

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

static void dwt123_row(const void *const src[4], int bpc, const QmAdmScaleQ *q,
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
/* Decouple                                                                   */
/* ------------------------------------------------------------------------ */

/* The angle flags of 8 samples (C kernel: dot >= 0 and dot^2 >= cos^2(1deg)
 * |o|^2 |t|^2, the integers rounded to float, compared in double).  With
 * |band| <= QM_ADM_BAND0_MAX every integer fits int32 (2 * 22931^2 < 2^31),
 * and int32 -> float rounds as int64 -> float does; float -> double and
 * dot^2 are exact; (cos * oo) * tt in the C code's order. */
VI VSel angle_sel(V oh, V ov, V th, V tv, double cos1sq)
{
    const __m256d c = _mm256_set1_pd(cos1sq);
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
static void decouple123_row(const int32_t *const ref[3], const int32_t *const dis[3],
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
    return v_hsum64(acc);
}

/* ------------------------------------------------------------------------ */
/* Denominator sums                                                          */
/* ------------------------------------------------------------------------ */

/* Scales 1-3: u = |x| <= 2^31; s = (u^2 + a) >> sh may reach 2^32 + 1,
 * so s * u is formed from s's halves (mod 2^64, as the C code's uint64). */
static void den123_row(const int32_t *const ref[3], const QmAdmScaleQ *q, uint64_t in[3])
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
        in[t] = (uint64_t)v_hsum64(acc);
    }
}

#define ADM_DSP_INIT qm_adm_dsp_init_avx2
#include "x86/adm_tmpl.c"
