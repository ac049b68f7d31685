/* gst-qmetric: the AVX2 instance of the ADM twins (adm_tmpl.c has the
 * stages and their method; cpu/adm.c is the specification).  Defined
 * here, as only AVX2 does it: int64 -> float (which AVX2 lacks) with its
 * exported batch form, the angle tests (vector masks of 64-bit lanes), the
 * CSF product of scales 1-3 (no 64-bit multiply: a 32 x 32-bit product
 * with the sign applied) and the decoupling limit of scales 1-3 (computed
 * in double: AVX2 has no double -> int64).  Each computes exactly what
 * the C kernel computes, bit for bit (tests/checkasm/adm.c).
 */
#include <math.h>
#include <stdint.h>

#include "x86/vec_avx2.h"
#include "adm.h"
#include "x86/adm_x86.h"

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
    const __m256d dh = _mm256_mul_pd(_mm256_cvtepi32_pd(v_high32(x)), _mm256_set1_pd(4294967296.0));
    const __m256d dl = u32_pd(v_low32(x));
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
VI VH csf32(VH x, int64_t mul, int64_t add, int sh)
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
    return v_low32(_mm256_srl_epi64(_mm256_add_epi64(v, _mm256_set1_epi64x(add)), _mm_cvtsi32_si128(sh)));
}

/* The angle flags of scales 1-3 (C kernel: dot >= 0 and dot^2 >=
 * cos^2(1deg) |o|^2 |t|^2), from the C code's 64-bit integers rounded to
 * float; float -> double and dot^2 are exact. */
VI VSel64 angle_sel64(V dot, V oo, V tt, double cos1sq)
{
    const __m256d c = _mm256_set1_pd(cos1sq);
    const __m256d dd = _mm256_cvtps_pd(i64_ps(dot));
    const __m256d rhs = _mm256_mul_pd(_mm256_mul_pd(c, _mm256_cvtps_pd(i64_ps(oo))),
                                      _mm256_cvtps_pd(i64_ps(tt)));
    return _mm256_castpd_si256(_mm256_and_pd(_mm256_cmp_pd(_mm256_mul_pd(dd, dd), rhs, _CMP_GE_OQ),
                                             _mm256_cmp_pd(dd, _mm256_setzero_pd(), _CMP_GE_OQ)));
}

/* The decoupling limit of scales 1-3 where it is used (k > 0, so to > 0
 * and rs has o's sign): sign(o) * min(trunc(|rs| * egl), to), the C code's
 * double product truncated, then clamped; min(trunc(a), to) =
 * trunc(min(a, to)) for an integer to, and a result of 2^31 converts to
 * 0x80000000, the same bits. */
VI VH decouple_lim(VH rs, V to, V sm, double egl)
{
    const __m256d mag = _mm256_mul_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), _mm256_cvtepi32_pd(rs)),
                                      _mm256_set1_pd(egl));
    const __m128i lim_m = _mm256_cvttpd_epi32(_mm256_min_pd(mag, u32_pd(v_low32(to))));
    const __m128i sm32 = v_low32(sm);
    return _mm_sub_epi32(_mm_xor_si128(lim_m, sm32), sm32);
}

#define ADM_DSP_INIT qm_adm_dsp_init_avx2
#include "x86/adm_tmpl.c"
