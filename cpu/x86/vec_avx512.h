/* gst-qmetric: the AVX-512 (F, BW, VL, DQ) width of the x86 kernel
 * templates; the same names as vec_avx2.h (read its opening comment).
 * Here selections and lane sets are __mmask registers, partial blocks use
 * masked loads and stores (which never touch memory outside the mask).
 */
#ifndef QM_VEC_AVX512_H
#define QM_VEC_AVX512_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define VN32 16
#define VN16 32
#define VN64 8
/* Partial blocks are masked: rows narrower than a block need no copy. */
#define V_NARROW_COPY 0

typedef __m512i V;
typedef __mmask16 VSel;
typedef __mmask16 VLanes;
typedef __mmask32 VCols;
typedef __m256i VH;
typedef __mmask8 VSel64;
typedef __mmask8 VLanes64;

#define VI static inline __attribute__((always_inline))

VI V v_zero(void) { return _mm512_setzero_si512(); }
VI V v_set16(int16_t x) { return _mm512_set1_epi16(x); }
VI V v_set32(int32_t x) { return _mm512_set1_epi32(x); }
VI V v_set64(int64_t x) { return _mm512_set1_epi64(x); }
VI V v_set4x32(int32_t a, int32_t b, int32_t c, int32_t d)
{
    return _mm512_set4_epi32(d, c, b, a);
}
VI V v_loadu(const void *p) { return _mm512_loadu_si512(p); }
VI void v_storeu(void *p, V v) { _mm512_storeu_si512(p, v); }

VI V v_add16(V a, V b) { return _mm512_add_epi16(a, b); }
VI V v_sub16(V a, V b) { return _mm512_sub_epi16(a, b); }
VI V v_mullo16(V a, V b) { return _mm512_mullo_epi16(a, b); }
VI V v_mulhi_u16(V a, V b) { return _mm512_mulhi_epu16(a, b); }
VI V v_unpacklo16(V a, V b) { return _mm512_unpacklo_epi16(a, b); }
VI V v_unpackhi16(V a, V b) { return _mm512_unpackhi_epi16(a, b); }
VI V v_unpacklo64(V a, V b) { return _mm512_unpacklo_epi64(a, b); }
VI V v_unpackhi64(V a, V b) { return _mm512_unpackhi_epi64(a, b); }
VI V v_madd16(V a, V b) { return _mm512_madd_epi16(a, b); }
VI V v_packs32(V a, V b) { return _mm512_packs_epi32(a, b); }
VI V v_shuffle8(V a, V b) { return _mm512_shuffle_epi8(a, b); }
VI V v_xor(V a, V b) { return _mm512_xor_si512(a, b); }
VI V v_and(V a, V b) { return _mm512_and_si512(a, b); }
VI V v_or(V a, V b) { return _mm512_or_si512(a, b); }

VI V v_add32(V a, V b) { return _mm512_add_epi32(a, b); }
VI V v_sub32(V a, V b) { return _mm512_sub_epi32(a, b); }
VI V v_mullo32(V a, V b) { return _mm512_mullo_epi32(a, b); }
VI V v_max32(V a, V b) { return _mm512_max_epi32(a, b); }
VI V v_min32(V a, V b) { return _mm512_min_epi32(a, b); }
VI V v_abs32(V a) { return _mm512_abs_epi32(a); }
#define v_slli32(a, n) _mm512_slli_epi32(a, n)
#define v_srli32(a, n) _mm512_srli_epi32(a, n)
#define v_srai32(a, n) _mm512_srai_epi32(a, n)
VI V v_sll32(V a, __m128i n) { return _mm512_sll_epi32(a, n); }
VI V v_srl32(V a, __m128i n) { return _mm512_srl_epi32(a, n); }
VI V v_sra32(V a, __m128i n) { return _mm512_sra_epi32(a, n); }

VI V v_add64(V a, V b) { return _mm512_add_epi64(a, b); }
VI V v_mul_u32(V a, V b) { return _mm512_mul_epu32(a, b); }
#define v_srli64(a, n) _mm512_srli_epi64(a, n)
VI V v_srl64(V a, __m128i n) { return _mm512_srl_epi64(a, n); }

VI V v_blend16_odd(V a, V b) { return _mm512_mask_blend_epi16(0xAAAAAAAA, a, b); }
VI V v_blend32_odd(V a, V b) { return _mm512_mask_blend_epi32(0xAAAA, a, b); }

/* ---- lane selections ---- */
VI VSel v_cmpgt32(V a, V b) { return _mm512_cmpgt_epi32_mask(a, b); }
VI VSel v_cmpeq32(V a, V b) { return _mm512_cmpeq_epi32_mask(a, b); }
VI VSel v_sel_or(VSel a, VSel b) { return a | b; }
VI VSel v_sel_and(VSel a, VSel b) { return a & b; }
VI VSel v_sel_andnot(VSel a, VSel b) { return (VSel)(~a & b); }
VI V v_select32(V a, VSel s, V b) { return _mm512_mask_mov_epi32(a, s, b); }

VI VSel v_sel_step2(int n, int first)
{
    const int k = (n - first + 1) / 2;  /* lanes i < k */
    return n - first >= 2 * VN32 ? (VSel)0xFFFF : (VSel)((1u << k) - 1);
}

/* ---- the first n 32-bit lanes ---- */
VI VLanes v_lanes32(int n)
{
    return n >= 16 ? (VLanes)0xFFFF : (VLanes)((1u << n) - 1);
}
VI V v_load32(const int32_t *p, VLanes l) { return _mm512_maskz_loadu_epi32(l, p); }
VI void v_store32(int32_t *p, VLanes l, V v) { _mm512_mask_storeu_epi32(p, l, v); }
VI V v_in_lanes(VLanes l, V v) { return _mm512_maskz_mov_epi32(l, v); }

/* ---- blocks of VN16 16-bit columns ---- */
/* The block at x of a row of w samples; columns past w read as 0. */
VI ptrdiff_t v_block_at(int x, int w, VCols *c)
{
    const int left = w - x;
    *c = left >= VN16 ? (VCols)~0u : (VCols)((1u << left) - 1);
    return x;
}
VI VCols v_cols_all(void) { return (VCols)~0u; }
/* Masked loads for the last block only: plain loads are a little faster. */
VI V v_load_u8(const uint8_t *p, VCols c)
{
    return _mm512_cvtepu8_epi16(c == (VCols)~0u ? _mm256_loadu_si256((const __m256i *)p)
                                                : _mm256_maskz_loadu_epi8(c, p));
}
VI V v_load_u16(const void *p, VCols c)
{
    return c == (VCols)~0u ? _mm512_loadu_si512(p) : _mm512_maskz_loadu_epi16(c, p);
}

/* The first n of the 32-bit lanes of lo then hi (each below 2^16: the
 * truncating narrowing is exact) stored as uint16. */
VI void v_store_u16x2(uint16_t *dst, int n, V lo, V hi)
{
    const __m256i rl = _mm512_cvtepi32_epi16(lo), rh = _mm512_cvtepi32_epi16(hi);
    _mm256_mask_storeu_epi16(dst, n >= 16 ? 0xFFFF : (__mmask16)((1u << n) - 1), rl);
    if (n > 16)
        _mm256_mask_storeu_epi16(dst + 16, n >= 32 ? 0xFFFF : (__mmask16)((1u << (n - 16)) - 1), rh);
}

/* The vectors of 16-bit samples at p + off (off even, |off| <= 8; p
 * 64-byte aligned, 32 samples readable either side) cut from the three
 * aligned vectors around p: a 64-byte load at an offset of 2 off bytes
 * would always split a cache line, which costs more than a valignd (which
 * takes an immediate: off must be a constant once inlined). */
typedef struct VWin {
    __m512i a, b, c;
} VWin;
VI VWin v_win(const uint16_t *p)
{
    VWin w;
    w.a = _mm512_load_si512(p - VN16);
    w.b = _mm512_load_si512(p);
    w.c = _mm512_load_si512(p + VN16);
    return w;
}
VI V v_win_at(VWin w, int off)
{
    switch (off) {
    case -8: return _mm512_alignr_epi32(w.b, w.a, 12);
    case -6: return _mm512_alignr_epi32(w.b, w.a, 13);
    case -4: return _mm512_alignr_epi32(w.b, w.a, 14);
    case -2: return _mm512_alignr_epi32(w.b, w.a, 15);
    case 0: return w.b;
    case 2: return _mm512_alignr_epi32(w.c, w.b, 1);
    case 4: return _mm512_alignr_epi32(w.c, w.b, 2);
    case 6: return _mm512_alignr_epi32(w.c, w.b, 3);
    default: return _mm512_alignr_epi32(w.c, w.b, 4);
    }
}

/* ---- 16-bit lanes: arithmetic, halves widened to 32 bits ---- */
VI V v_abs16(V a) { return _mm512_abs_epi16(a); }
VI V v_max_u16(V a, V b) { return _mm512_max_epu16(a, b); }
VI V v_min_u16(V a, V b) { return _mm512_min_epu16(a, b); }
VI V v_lo16_i32(V a) { return _mm512_cvtepi16_epi32(_mm512_castsi512_si256(a)); }
VI V v_hi16_i32(V a) { return _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(a, 1)); }

/* ---- VKeep16: the 16-bit lanes of a block that count; here a mask, and
 * loads touch no memory outside it ---- */
typedef __mmask32 VKeep16;
VI VKeep16 v_keep16(int lo, int hi)
{
    return (VKeep16)((((uint64_t)1 << hi) - 1) & ~(((uint64_t)1 << lo) - 1));
}
VI V v_loadk16(const void *p, VKeep16 k) { return _mm512_maskz_loadu_epi16(k, p); }
VI V v_loadk_u8(const uint8_t *p, VKeep16 k)
{
    return _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(k, p));
}
/* The vector for the last columns [x, n) of a row: at x, masked. */
VI ptrdiff_t v_tail16(int x, int n, VKeep16 *k)
{
    *k = v_keep16(0, n - x);
    return x;
}

/* ---- gathers and double arithmetic on 32-bit lanes ---- */
VI V v_gather32(const int32_t *base, V idx) { return _mm512_i32gather_epi32(idx, base, 4); }
VI V v_mul_f64_trunc32(V x, double f)
{
    const __m512d fd = _mm512_set1_pd(f);
    const __m512d lo = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(x)), fd);
    const __m512d hi = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(x, 1)), fd);
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvttpd_epi32(lo)), _mm512_cvttpd_epi32(hi), 1);
}

/* ---- 64-bit lanes ---- */
VI V v_sub64(V a, V b) { return _mm512_sub_epi64(a, b); }
VI V v_mul_i32(V a, V b) { return _mm512_mul_epi32(a, b); }
VI V v_mullo64_u32(V a, V b) { return _mm512_mullo_epi64(a, b); }
VI V v_sllv64(V a, V n) { return _mm512_sllv_epi64(a, n); }
VI V v_srlv64(V a, V n) { return _mm512_srlv_epi64(a, n); }
VI V v_sra64(V x, __m128i s) { return _mm512_sra_epi64(x, s); }
VI V v_sign64(V x) { return _mm512_srai_epi64(x, 63); }
VI VSel64 v_cmpgt64(V a, V b) { return _mm512_cmpgt_epi64_mask(a, b); }
VI VSel64 v_cmpeq64(V a, V b) { return _mm512_cmpeq_epi64_mask(a, b); }
VI VSel64 v_sel64_and(VSel64 a, VSel64 b) { return a & b; }
VI VSel64 v_sel64_andnot(VSel64 a, VSel64 b) { return (VSel64)(~a & b); }
VI V v_select64(V a, VSel64 s, V b) { return _mm512_mask_mov_epi64(a, s, b); }
VI V v_in_sel64(VSel64 s, V v) { return _mm512_maskz_mov_epi64(s, v); }
VI V v_min64(V a, V b) { return _mm512_min_epu64(a, b); }
/* floor(log2 x) for 0 < x <= 2^31: the exponent of the exact double */
VI V v_ilog2_64(V x) { return _mm512_cvttpd_epi64(_mm512_getexp_pd(_mm512_cvtepi64_pd(x))); }

/* ---- VN64 32-bit lanes (VH) and their 64-bit widening ---- */
VI VH vh_loadu(const int32_t *p) { return _mm256_loadu_si256((const __m256i *)p); }
VI void vh_storeu(int32_t *p, VH v) { _mm256_storeu_si256((__m256i *)p, v); }
VI VLanes64 v_lanes64(int n)
{
    return n >= 8 ? (VLanes64)0xFF : (VLanes64)((1u << n) - 1);
}
VI VH vh_load32(const int32_t *p, VLanes64 l) { return _mm256_maskz_loadu_epi32(l, p); }
VI void vh_store32(int32_t *p, VLanes64 l, VH v) { _mm256_mask_storeu_epi32(p, l, v); }
VI V v_in_lanes64(VLanes64 l, V v) { return _mm512_maskz_mov_epi64(l, v); }
VI VH vh_zero(void) { return _mm256_setzero_si256(); }
VI VH vh_add32(VH a, VH b) { return _mm256_add_epi32(a, b); }
VI VH vh_sub32(VH a, VH b) { return _mm256_sub_epi32(a, b); }
VI VH vh_max32(VH a, VH b) { return _mm256_max_epi32(a, b); }
VI VH vh_abs32(VH a) { return _mm256_abs_epi32(a); }
VI VH vh_and(VH a, VH b) { return _mm256_and_si256(a, b); }
VI VH vh_sll32(VH a, __m128i n) { return _mm256_sll_epi32(a, n); }
VI VH vh_in_lanes(VLanes64 l, VH v) { return _mm256_maskz_mov_epi32(l, v); }
VI V v_from_i32(VH v) { return _mm512_cvtepi32_epi64(v); }
VI V v_from_u32(VH v) { return _mm512_cvtepu32_epi64(v); }
VI VH v_low32(V v) { return _mm512_cvtepi64_epi32(v); }
VI VH v_sra64_to32(V v, int sh) { return _mm512_cvtepi64_epi32(_mm512_sra_epi64(v, _mm_cvtsi32_si128(sh))); }
VI VH vh_select(VH a, VSel64 s, VH b) { return _mm256_mask_mov_epi32(a, s, b); }
VI VH v_gather32_i64(const int32_t *base, V idx) { return _mm512_i64gather_epi32(idx, base, 4); }

/* ---- reductions ---- */
VI int64_t v_hsum64(V v) { return _mm512_reduce_add_epi64(v); }
VI int v_any_bits64(V v, int64_t b) { return _mm512_test_epi64_mask(v, _mm512_set1_epi64(b)) != 0; }

#endif /* QM_VEC_AVX512_H */
