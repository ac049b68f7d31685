/* gst-qmetric: the AVX-512 (F, BW, VL, DQ) instance of the ADM twins
 * (adm_tmpl.c has the stages and their method; cpu/adm.c is the
 * specification).  Defined here: the angle tests (mask registers), the
 * CSF product of scales 1-3 (a 64-bit multiply) and their decoupling
 * limit (double -> int64, 64-bit minima), which AVX-512 has and AVX2 lacks.
 * Each computes exactly what the C kernel computes, bit for bit
 * (tests/checkasm/adm.c).
 */
#include <math.h>
#include <stdint.h>

#include "x86/vec_avx512.h"
#include "adm.h"
#include "x86/adm_x86.h"

/* ------------------------------------------------------------------------ */
/* Angle tests                                                               */
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

/* Scales 1-3: the C code's 64-bit integers rounded to float. */
VI VSel64 angle_sel64(V dot, V oo, V tt, double cos1sq)
{
    return angle_test8(_mm512_cvtepi64_ps(dot), _mm512_cvtepi64_ps(oo), _mm512_cvtepi64_ps(tt),
                       _mm512_set1_pd(cos1sq));
}

/* CSF value of scales 1-3 (C: mask_row_wide, num_row): (int32)((mul * x
 * + add) >> sh), 0 <= mul < 2^32 and x an int32: the 64-bit product is
 * exact. */
VI VH csf32(VH x, int64_t mul, int64_t add, int sh)
{
    const V v = _mm512_add_epi64(_mm512_mullo_epi64(v_from_i32(x), _mm512_set1_epi64(mul)),
                                 _mm512_set1_epi64(add));
    return v_low32(_mm512_sra_epi64(v, _mm_cvtsi32_si128(sh)));
}

/* The decoupling limit of scales 1-3 where it is used (k > 0, so to > 0
 * and rs has o's sign): sign(o) * min(sign(o) * (int64)(rs * egl), to),
 * the C code's double product truncated (exact for an integral egl:
 * |rs * egl| < 2^38), then clamped. */
VI VH decouple_lim(VH rs, V to, V sm, double egl)
{
    const V g = _mm512_cvttpd_epi64(_mm512_mul_pd(_mm512_cvtepi64_pd(v_from_i32(rs)), _mm512_set1_pd(egl)));
    const V gs = _mm512_sub_epi64(_mm512_xor_si512(g, sm), sm);
    const V lim = _mm512_min_epi64(gs, to);
    return v_low32(_mm512_sub_epi64(_mm512_xor_si512(lim, sm), sm));
}

#define ADM_DSP_INIT qm_adm_dsp_init_avx512
#include "x86/adm_tmpl.c"
