/* gst-qmetric: the AVX2 instance of the VIF twins (vif_tmpl.c has the
 * stages and their method; cpu/vif.c is the specification).  Defined here,
 * as only AVX2 does it: the per-pixel terms, evaluated four pixels at a
 * time in double with the same operations in the same order as the C code
 * (no fused multiply-add: the build uses -ffp-contract=off and -mavx2 has
 * no FMA), log2 read from the same table.  The table index of a 64-bit
 * value (x >> k, its 16 leading bits) is read off the double holding it
 * exactly: for 2^e <= x < 2^(e+1), x >> (e - 15) is 2^15 plus the top 15
 * bits of the mantissa.
 */
#include <stdint.h>
#include <string.h>

#include "x86/vec_avx2.h"
#include "vif.h"

/* Makes the compiler store array a and load its elements back one by one,
 * rather than extract them from the vector register (slower). */
#define KEEP_IN_MEMORY(a) __asm__("" : "+m"(a))

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

VI __m256i add_wide(__m256i acc64, __m256i v32)
{
    return _mm256_add_epi64(acc64, _mm256_add_epi64(
        _mm256_cvtepu32_epi64(_mm256_castsi256_si128(v32)),
        _mm256_cvtepu32_epi64(_mm256_extracti128_si256(v32, 1))));
}

VI __m256i add_wide_signed(__m256i acc64, __m256i v32)
{
    return _mm256_add_epi64(acc64, _mm256_add_epi64(
        _mm256_cvtepi32_epi64(_mm256_castsi256_si128(v32)),
        _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v32, 1))));
}

/* The log2 table entries are read one by one from stored index vectors:
 * on Zen 5 that costs about half as much per entry as AVX2 gathers, and
 * the scalar loads run beside the vector work.  Left-out lanes hold index
 * 0, whose entry is 0 (qm_vif_log2_table() zeroes the unused entries). */
VI int64_t tab_sum(const uint16_t *tab, __m256i v)
{
    uint32_t i[8];
    _mm256_storeu_si256((__m256i *)i, v);
    KEEP_IN_MEMORY(i);
    return (int64_t)tab[i[0]] + tab[i[1]] + tab[i[2]] + tab[i[3]] +
           tab[i[4]] + tab[i[5]] + tab[i[6]] + tab[i[7]];
}

/* lanes (0, 2, 4, 6) minus lanes (1, 3, 5, 7) */
VI int64_t tab_diff(const uint16_t *tab, __m256i v)
{
    uint32_t i[8];
    _mm256_storeu_si256((__m256i *)i, v);
    KEEP_IN_MEMORY(i);
    return (int64_t)tab[i[0]] - tab[i[1]] + tab[i[2]] - tab[i[3]] +
           tab[i[4]] - tab[i[5]] + tab[i[6]] - tab[i[7]];
}

/* The table index of the integer held exactly in double bits (>= 2^15):
 * 2^15 plus the top 15 mantissa bits. */
VI __m256i log2_index(__m256i bits)
{
    return _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi64(bits, 52 - 15),
                                            _mm256_set1_epi64x(0x7FFF)),
                           _mm256_set1_epi64x(0x8000));
}

/* The numerator terms of 4 pixels (vif.c qm_vif_terms_cpu) where m32 is
 * set: log2_q11_64(numer2) - log2_q11_64(numer1), the table entries to
 * a->num_tab, the rest (2048 k, from the exponents) returned. */
VI __m256i num4(__m128i s11, __m128i s22, __m128i s12, __m128i m32,
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
VI void terms_block(__m256i s11, __m256i s22, __m256i s12, __m256i valid,
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

VI void terms_flush_row(TermsAcc *a)
{
    a->den64 = add_wide_signed(a->den64, a->den);
    a->cnt64 = add_wide(a->cnt64, a->cnt);
    a->den = a->cnt = _mm256_setzero_si256();
}

VI void terms_finish(TermsAcc *a, QmVifAccum *acc)
{
    terms_flush_row(a);
    acc->num_log += v_hsum64(a->num) + a->num_tab;
    acc->den_log += v_hsum64(a->den64) + a->den_tab;
    acc->num_non_log += v_hsum64(a->nonlog);
    acc->den_non_log += v_hsum64(a->cnt64);
}

VI void terms_init(TermsAcc *a, TermsCtx *c, const QmVifParams *p)
{
    a->num = a->nonlog = a->den = a->cnt = a->den64 = a->cnt64 = _mm256_setzero_si256();
    a->num_tab = a->den_tab = 0;
    c->tab = p->log2_tab;
    c->egl = _mm256_set1_pd(p->enhn_gain_limit);
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
        terms_block(v11, v22, v12, _mm256_cmpgt_epi32(_mm256_set1_epi32(n - j), lane), &c, &a);
        /* at most 2^16 terms (each below 2^15) per 32-bit lane between
         * flushes */
        if ((j / 8) % 65536 == 65535)
            terms_flush_row(&a);
    }
    terms_finish(&a, acc);
}

#define VIF_STAT qm_vif_stat_avx2
#define VIF_DECIMATE qm_vif_decimate_avx2
#include "x86/vif_tmpl.c"
