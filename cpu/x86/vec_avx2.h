/* gst-qmetric: the AVX2 width of the x86 kernel templates (vif_tmpl.c,
 * adm_tmpl.c).  A template is written once against the names below; each
 * instance file includes this header (or vec_avx512.h) and then the
 * template, compiled with its ISA flags (dav1d's *_tmpl.c idea applied to
 * vector widths).  Every helper is the plain intrinsic where both widths
 * have one; where AVX-512 has masks and AVX2 has vector masks or nothing,
 * the helper says what both versions compute.
 *
 *   V       an integer vector: VN32 lanes of 32 bits (VN16 of 16 bits)
 *   VSel    a lane selection (here a vector of 0 / -1 lanes, 32-bit)
 *   VLanes  the first n 32-bit lanes (here a vector mask and "all of them")
 *   VH      VN64 32-bit lanes (half a V), widened to or narrowed from the
 *           VN64 64-bit lanes of a V
 *   VSel64  a lane selection of 64-bit lanes (here a vector of 0 / -1)
 *   VLanes64 the first n of VN64 lanes (here a vector mask of 32-bit
 *           lanes and "all of them")
 *   VCols   the columns of a block of VN16 16-bit samples that exist
 *           (unused here: the last block is moved back to end at the row's
 *           width, and rows narrower than a block are copied first)
 *   VKeep16 the 16-bit lanes of a block that count, for sums: loads read 0
 *           in the others (here a vector mask applied after the load; the
 *           last block of a row is moved back, v_tail16())
 */
#ifndef QM_VEC_AVX2_H
#define QM_VEC_AVX2_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define VN32 8
#define VN16 16
#define VN64 4
/* Rows narrower than a block are copied into a zeroed block first. */
#define V_NARROW_COPY 1

typedef __m256i V;
typedef __m256i VSel;
typedef struct VLanes {
    __m256i m;
    int full;
} VLanes;
typedef int VCols;
typedef __m128i VH;
typedef __m256i VSel64;
typedef struct VLanes64 {
    __m128i m;
    int full;
} VLanes64;

#define VI static inline __attribute__((always_inline))

VI V v_zero(void) { return _mm256_setzero_si256(); }
VI V v_set16(int16_t x) { return _mm256_set1_epi16(x); }
VI V v_set32(int32_t x) { return _mm256_set1_epi32(x); }
VI V v_set64(int64_t x) { return _mm256_set1_epi64x(x); }
/* the 128-bit pattern (a, b, c, d) (32-bit words, a lowest) in every lane */
VI V v_set4x32(int32_t a, int32_t b, int32_t c, int32_t d)
{
    return _mm256_setr_epi32(a, b, c, d, a, b, c, d);
}
VI V v_loadu(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }
VI void v_storeu(void *p, V v) { _mm256_storeu_si256((__m256i *)p, v); }

VI V v_add16(V a, V b) { return _mm256_add_epi16(a, b); }
VI V v_sub16(V a, V b) { return _mm256_sub_epi16(a, b); }
VI V v_mullo16(V a, V b) { return _mm256_mullo_epi16(a, b); }
VI V v_mulhi_u16(V a, V b) { return _mm256_mulhi_epu16(a, b); }
VI V v_unpacklo16(V a, V b) { return _mm256_unpacklo_epi16(a, b); }
VI V v_unpackhi16(V a, V b) { return _mm256_unpackhi_epi16(a, b); }
VI V v_unpacklo64(V a, V b) { return _mm256_unpacklo_epi64(a, b); }
VI V v_unpackhi64(V a, V b) { return _mm256_unpackhi_epi64(a, b); }
VI V v_madd16(V a, V b) { return _mm256_madd_epi16(a, b); }
VI V v_packs32(V a, V b) { return _mm256_packs_epi32(a, b); }
VI V v_shuffle8(V a, V b) { return _mm256_shuffle_epi8(a, b); }
VI V v_xor(V a, V b) { return _mm256_xor_si256(a, b); }
VI V v_and(V a, V b) { return _mm256_and_si256(a, b); }
VI V v_or(V a, V b) { return _mm256_or_si256(a, b); }

VI V v_add32(V a, V b) { return _mm256_add_epi32(a, b); }
VI V v_sub32(V a, V b) { return _mm256_sub_epi32(a, b); }
VI V v_mullo32(V a, V b) { return _mm256_mullo_epi32(a, b); }
VI V v_max32(V a, V b) { return _mm256_max_epi32(a, b); }
VI V v_min32(V a, V b) { return _mm256_min_epi32(a, b); }
VI V v_abs32(V a) { return _mm256_abs_epi32(a); }
#define v_slli32(a, n) _mm256_slli_epi32(a, n)
#define v_srli32(a, n) _mm256_srli_epi32(a, n)
#define v_srai32(a, n) _mm256_srai_epi32(a, n)
VI V v_sll32(V a, __m128i n) { return _mm256_sll_epi32(a, n); }
VI V v_srl32(V a, __m128i n) { return _mm256_srl_epi32(a, n); }
VI V v_sra32(V a, __m128i n) { return _mm256_sra_epi32(a, n); }

VI V v_add64(V a, V b) { return _mm256_add_epi64(a, b); }
VI V v_mul_u32(V a, V b) { return _mm256_mul_epu32(a, b); }
#define v_srli64(a, n) _mm256_srli_epi64(a, n)
VI V v_srl64(V a, __m128i n) { return _mm256_srl_epi64(a, n); }

/* odd 16-bit (32-bit) lanes from b, even ones from a */
VI V v_blend16_odd(V a, V b) { return _mm256_blend_epi16(a, b, 0xAA); }
VI V v_blend32_odd(V a, V b) { return _mm256_blend_epi32(a, b, 0xAA); }

/* ---- lane selections (32-bit lanes) ---- */
VI VSel v_cmpgt32(V a, V b) { return _mm256_cmpgt_epi32(a, b); }
VI VSel v_cmpeq32(V a, V b) { return _mm256_cmpeq_epi32(a, b); }
VI VSel v_sel_or(VSel a, VSel b) { return _mm256_or_si256(a, b); }
VI VSel v_sel_and(VSel a, VSel b) { return _mm256_and_si256(a, b); }
VI VSel v_sel_andnot(VSel a, VSel b) { return _mm256_andnot_si256(a, b); }
/* b in the selected lanes, a elsewhere */
VI V v_select32(V a, VSel s, V b) { return _mm256_blendv_epi8(a, b, s); }

/* Lane i selected where first + 2 i < n (first 0 or 1): the outputs of
 * one parity that exist, n outputs left in the block. */
VI VSel v_sel_step2(int n, int first)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n - first), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14));
}

/* ---- the first n 32-bit lanes: loads and stores leave the others alone
 * (loads read 0 there), and never touch memory past them ---- */
VI VLanes v_lanes32(int n)
{
    VLanes l;
    l.m = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    l.full = n >= 8;
    return l;
}
VI V v_load32(const int32_t *p, VLanes l)
{
    return l.full ? _mm256_loadu_si256((const __m256i *)p) : _mm256_maskload_epi32(p, l.m);
}
VI void v_store32(int32_t *p, VLanes l, V v)
{
    if (l.full)
        _mm256_storeu_si256((__m256i *)p, v);
    else
        _mm256_maskstore_epi32(p, l.m, v);
}
/* v in the lanes of l, 0 in the others */
VI V v_in_lanes(VLanes l, V v) { return _mm256_and_si256(v, l.m); }

/* ---- blocks of VN16 16-bit columns ---- */
/* The block at x of a row of w samples: AVX2 has no byte-masked loads, so
 * a last partial block is moved back to end at w (outputs written twice,
 * the same values) and rows narrower than a block start at 0 (copied into
 * a zeroed block, V_NARROW_COPY). */
VI ptrdiff_t v_block_at(int x, int w, VCols *c)
{
    *c = 0;
    return w < VN16 ? 0 : x + VN16 <= w ? x : w - VN16;
}
/* every column of a block (a whole block inside the row) */
VI VCols v_cols_all(void) { return 0; }
/* VN16 samples, 8-bit or 16-bit, as 16-bit lanes */
VI V v_load_u8(const uint8_t *p, VCols c)
{
    (void)c;
    return _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p));
}
VI V v_load_u16(const void *p, VCols c)
{
    (void)c;
    return _mm256_loadu_si256((const __m256i *)p);
}

/* The first n (<= VN16) of the 32-bit lanes of lo then hi (each below
 * 2^16; lo holds columns 0 .. VN32 - 1) stored as uint16. */
VI void v_store_u16x2(uint16_t *dst, int n, V lo, V hi)
{
    const V res = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
    if (n >= VN16) {
        _mm256_storeu_si256((__m256i *)dst, res);
    } else {
        uint16_t tmp[VN16];
        _mm256_storeu_si256((__m256i *)tmp, res);
        memcpy(dst, tmp, (size_t)n * sizeof(uint16_t));
    }
}

/* The vectors of 16-bit samples at p + off for even |off| <= 8 (a row
 * filter's taps): here plain unaligned loads. */
typedef const uint16_t *VWin;
VI VWin v_win(const uint16_t *p) { return p; }
VI V v_win_at(VWin w, int off) { return _mm256_loadu_si256((const __m256i *)(w + off)); }

/* ---- 16-bit lanes: arithmetic, halves widened to 32 bits ---- */
VI V v_abs16(V a) { return _mm256_abs_epi16(a); }
VI V v_max_u16(V a, V b) { return _mm256_max_epu16(a, b); }
VI V v_min_u16(V a, V b) { return _mm256_min_epu16(a, b); }
/* the int16 lanes 0 .. VN32 - 1 (VN32 .. VN16 - 1), sign-extended */
VI V v_lo16_i32(V a) { return _mm256_cvtepi16_epi32(_mm256_castsi256_si128(a)); }
VI V v_hi16_i32(V a) { return _mm256_cvtepi16_epi32(_mm256_extracti128_si256(a, 1)); }

/* ---- VKeep16: the 16-bit lanes of a block that count; loads read 0 in
 * the others.  Here a vector of 0 / -1 lanes applied after a plain load of
 * all VN16 lanes (the caller makes them readable: v_tail16()). ---- */
typedef __m256i VKeep16;
/* lanes lo <= i < hi */
VI VKeep16 v_keep16(int lo, int hi)
{
    const __m256i i = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm256_andnot_si256(_mm256_cmpgt_epi16(_mm256_set1_epi16((short)lo), i),
                               _mm256_cmpgt_epi16(_mm256_set1_epi16((short)hi), i));
}
VI V v_loadk16(const void *p, VKeep16 k)
{
    return _mm256_and_si256(_mm256_loadu_si256((const __m256i *)p), k);
}
/* VN16 bytes as 16-bit lanes */
VI V v_loadk_u8(const uint8_t *p, VKeep16 k)
{
    return _mm256_and_si256(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p)), k);
}
/* The vector for the last columns [x, n) of a row (n - VN16 < x < n):
 * where it loads and the lanes that count.  Here it is moved back to end
 * at n, so rows of n >= VN16 columns only (narrower ones are copied into
 * a block first, V_NARROW_COPY). */
VI ptrdiff_t v_tail16(int x, int n, VKeep16 *k)
{
    *k = v_keep16(x - (n - VN16), VN16);
    return n - VN16;
}

/* ---- gathers and double arithmetic on 32-bit lanes ---- */
/* base[idx[i]] per lane */
VI V v_gather32(const int32_t *base, V idx) { return _mm256_i32gather_epi32(base, idx, 4); }
/* (int32_t)(x * f) per lane: the product in double, truncated */
VI V v_mul_f64_trunc32(V x, double f)
{
    const __m256d fd = _mm256_set1_pd(f);
    const __m256d lo = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(x)), fd);
    const __m256d hi = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(x, 1)), fd);
    return _mm256_setr_m128i(_mm256_cvttpd_epi32(lo), _mm256_cvttpd_epi32(hi));
}

/* ---- 64-bit lanes ---- */
VI V v_sub64(V a, V b) { return _mm256_sub_epi64(a, b); }
/* signed 32 x 32 -> 64-bit products of the low halves */
VI V v_mul_i32(V a, V b) { return _mm256_mul_epi32(a, b); }
/* a * b mod 2^64 for b < 2^32 (AVX2 has no 64-bit multiply: a's halves) */
VI V v_mullo64_u32(V a, V b)
{
    return _mm256_add_epi64(_mm256_mul_epu32(a, b),
                            _mm256_slli_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), b), 32));
}
VI V v_sllv64(V a, V n) { return _mm256_sllv_epi64(a, n); }
VI V v_srlv64(V a, V n) { return _mm256_srlv_epi64(a, n); }
/* x >> s, arithmetic (AVX2 has the logical shift only): the complement
 * of a negative lane is shifted instead */
VI V v_sra64(V x, __m128i s)
{
    const __m256i sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), x);
    return _mm256_xor_si256(_mm256_srl_epi64(_mm256_xor_si256(x, sign), s), sign);
}
/* 0 or -1 per lane: the sign of x */
VI V v_sign64(V x) { return _mm256_cmpgt_epi64(_mm256_setzero_si256(), x); }
VI VSel64 v_cmpgt64(V a, V b) { return _mm256_cmpgt_epi64(a, b); }
VI VSel64 v_cmpeq64(V a, V b) { return _mm256_cmpeq_epi64(a, b); }
VI VSel64 v_sel64_and(VSel64 a, VSel64 b) { return _mm256_and_si256(a, b); }
VI VSel64 v_sel64_andnot(VSel64 a, VSel64 b) { return _mm256_andnot_si256(a, b); }
/* b in the selected lanes, a elsewhere */
VI V v_select64(V a, VSel64 s, V b) { return _mm256_blendv_epi8(a, b, s); }
/* v in the selected lanes, 0 elsewhere */
VI V v_in_sel64(VSel64 s, V v) { return _mm256_and_si256(v, s); }
/* min(a, b) for a, b below 2^63 */
VI V v_min64(V a, V b) { return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(a, b)); }
/* floor(log2 x) for 0 < x <= 2^31: the exponent of the exact double of
 * x's low half read as int32 (2^31 converts as -2^31: same exponent) */
VI V v_ilog2_64(V x)
{
    const __m256i lo = _mm256_permutevar8x32_epi32(x, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
    const __m256i bits = _mm256_castpd_si256(_mm256_cvtepi32_pd(_mm256_castsi256_si128(lo)));
    return _mm256_sub_epi64(_mm256_and_si256(_mm256_srli_epi64(bits, 52), _mm256_set1_epi64x(0x7FF)),
                            _mm256_set1_epi64x(1023));
}

/* ---- VN64 32-bit lanes (VH) and their 64-bit widening ---- */
VI VH vh_loadu(const int32_t *p) { return _mm_loadu_si128((const __m128i *)p); }
VI void vh_storeu(int32_t *p, VH v) { _mm_storeu_si128((__m128i *)p, v); }
VI VLanes64 v_lanes64(int n)
{
    VLanes64 l;
    l.m = _mm_cmpgt_epi32(_mm_set1_epi32(n), _mm_setr_epi32(0, 1, 2, 3));
    l.full = n >= 4;
    return l;
}
/* loads read 0 in the lanes past l; stores leave them alone */
VI VH vh_load32(const int32_t *p, VLanes64 l)
{
    return l.full ? _mm_loadu_si128((const __m128i *)p) : _mm_maskload_epi32(p, l.m);
}
VI void vh_store32(int32_t *p, VLanes64 l, VH v)
{
    if (l.full)
        _mm_storeu_si128((__m128i *)p, v);
    else
        _mm_maskstore_epi32(p, l.m, v);
}
/* v in the 64-bit lanes of l, 0 in the others */
VI V v_in_lanes64(VLanes64 l, V v) { return _mm256_and_si256(v, _mm256_cvtepi32_epi64(l.m)); }
VI VH vh_zero(void) { return _mm_setzero_si128(); }
VI VH vh_add32(VH a, VH b) { return _mm_add_epi32(a, b); }
VI VH vh_sub32(VH a, VH b) { return _mm_sub_epi32(a, b); }
VI VH vh_max32(VH a, VH b) { return _mm_max_epi32(a, b); }
VI VH vh_abs32(VH a) { return _mm_abs_epi32(a); }
VI VH vh_and(VH a, VH b) { return _mm_and_si128(a, b); }
VI VH vh_sll32(VH a, __m128i n) { return _mm_sll_epi32(a, n); }
VI VH vh_in_lanes(VLanes64 l, VH v) { return _mm_and_si128(v, l.m); }
/* int32 lanes sign-extended (zero-extended) to 64 bits */
VI V v_from_i32(VH v) { return _mm256_cvtepi32_epi64(v); }
VI V v_from_u32(VH v) { return _mm256_cvtepu32_epi64(v); }
/* the low (high) 32 bits of each 64-bit lane */
VI VH v_low32(V v)
{
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
}
VI VH v_high32(V v)
{
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7)));
}
/* (int32)(v >> sh), arithmetic: the high half where sh = 32 */
VI VH v_sra64_to32(V v, int sh)
{
    return sh == 32 ? v_high32(v) : v_low32(v_sra64(v, _mm_cvtsi32_si128(sh)));
}
/* b in the lanes selected by s, a elsewhere */
VI VH vh_select(VH a, VSel64 s, VH b) { return _mm_blendv_epi8(a, b, v_low32(s)); }
/* base[idx[i]] for the 64-bit indices of v, as int32 */
VI VH v_gather32_i64(const int32_t *base, V idx) { return _mm256_i64gather_epi32(base, idx, 4); }

/* ---- reductions ---- */
VI int64_t v_hsum64(V v)
{
    const __m128i s = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    /* wraps like the lanes' own adds (defined unsigned arithmetic) */
    return (int64_t)((uint64_t)_mm_cvtsi128_si64(s) + (uint64_t)_mm_extract_epi64(s, 1));
}
/* whether any bit of b is set in some lane of v */
VI int v_any_bits64(V v, int64_t b) { return !_mm256_testz_si256(v, _mm256_set1_epi64x(b)); }

#endif /* QM_VEC_AVX2_H */
