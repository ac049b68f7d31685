/* gst-qmetric: the AVX-512 (F, BW, VL, DQ) instance of the ADM twins
 * (adm_tmpl.c has the scale-0 stages and the thresholds; cpu/adm.c is the
 * specification).  Defined here: the scale-0 angle test on mask
 * registers, and scales 1-3 in 8 64-bit lanes with the C kernels' 64-bit
 * products; AVX-512 has the 64-bit shifts, minima and int64 -> float
 * conversion that the C code's types imply.  Column tails use masked
 * loads/stores.  Each twin computes exactly what its C kernel computes,
 * bit for bit (tests/checkasm/adm.c).
 */
#include <math.h>
#include <stdint.h>

#include "x86/vec_avx512.h"
#include "adm.h"
#include "x86/adm_x86.h"

static inline __mmask8 mask8(int n)
{
    return n >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << n) - 1);
}

/* x * sign for a sign mask sm (0 or -1 per 64-bit lane) */
static inline __m512i apply_sign64(__m512i x, __m512i sm)
{
    return _mm512_sub_epi64(_mm512_xor_si512(x, sm), sm);
}

/* 8 int32 at p (lanes past n zero), sign-extended to 64 bits */
static inline __m512i load8_i64(const int32_t *p, __mmask8 m)
{
    return _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(m, p));
}

/* ------------------------------------------------------------------------ */
/* DWT, scales 1-3                                                          */
/* ------------------------------------------------------------------------ */

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

static void dwt123_row(const void *const src[4], int bpc, const QmAdmScaleQ *q,
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
VI VSel angle_sel(V oh, V ov, V th, V tv, double cos1sq)
{
    const __m512d c = _mm512_set1_pd(cos1sq);
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
static void decouple123_row(const int32_t *const ref[3], const int32_t *const dis[3],
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

/* ------------------------------------------------------------------------ */
/* Denominator sums                                                          */
/* ------------------------------------------------------------------------ */

/* Scales 1-3: u = |x| <= 2^31; ((u^2 + a) >> s) may reach 2^32 + 1, so
 * its product with u is a 64-bit multiply (wrapping as the C code's). */
static void den123_row(const int32_t *const ref[3], const QmAdmScaleQ *q, uint64_t in[3])
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

#define ADM_DSP_INIT qm_adm_dsp_init_avx512
#include "x86/adm_tmpl.c"
