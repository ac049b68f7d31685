/* gst-qmetric: the AVX-512 (F, BW, VL, DQ) instance of the VIF twins
 * (vif_tmpl.c has the stages and their method; cpu/vif.c is the
 * specification), on 32 columns per block with masked loads and stores for
 * the last block of a row.  Defined here, as only AVX-512 does it: the
 * per-pixel terms, with most log2 table entries computed rather than read
 * (see "log2" below).  The only fused multiply-adds are in that log2
 * approximation (explicit intrinsics); the double arithmetic that must
 * match the C code is written with separate operations and the build has
 * -ffp-contract=off.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "x86/vec_avx512.h"
#include "vif.h"

/* ---- log2, computed where that is safe ----
 * The C code reads log2 from qm_vif_log2_table(): entry 2^15 + m (0 <= m <
 * 2^15) is round(2048 log2f(2^15 + m)), log2f in float as libvmaf computes
 * it.  Reading three entries per pixel costs more than computing them 16
 * lanes at a time in float: entry 2^15 + m = 2048 * 15 + U(m),
 *   U(m) = 2048 log2(y), y = 1 + m / 2^15, rounded,
 * and with c the centre 1 + (2 q + 1) / 32 of the sixteenth q of [1, 2)
 * holding y, 2048 log2(y) = 2048 log2(c) + 2048 log2(1 + r), r = (y - c)
 * / c, |r| <= 1/33.  y - c is exact in float; 2048 log2(c) is kept as an
 * integer plus a float remainder; the Taylor series of 2048 log2(1 + r) to
 * degree 5 is within 2955 |r|^6 / 6 < 4e-7 of it; the float roundings add
 * less than 5e-5.  log2f's own error (under one float ulp, 2048 * 2^-20 =
 * 0.002 after the scaling, in glibc) moves the table's rounding off the
 * exact one only where 2048 log2 lies that close to a tie (38 entries with
 * glibc 2.36).  So values within a band around a tie are read from the
 * table instead.  The band starts at 0.003 (1.5 float ulps); once per
 * process qm_vif_dsp_init() runs qm_vif_log2_check_avx512(), which
 * computes every entry and narrows the band to just cover the entries the
 * rounding alone gets wrong (about 0.001 with glibc: a fraction of a
 * percent of the values then come from the table), or, were that band
 * wider than 0.003, keeps the AVX2 stages.  tests/checkasm compares the
 * twin with the table at every index. */
static int log2_band_ppm = 3000;  /* the band in millionths */

typedef struct Log2Ctx {
    const uint16_t *tab;
    __m512 inv;     /* 1 / c_q, q = 0..15 */
    __m512i lg_hi;  /* round(2048 log2(c_q)) */
    __m512 lg_lo;   /* 2048 log2(c_q) - lg_hi */
    __m512 a[6];    /* a[n] = (-1)^(n+1) 2048 / (n ln 2) */
    __m512 tie;     /* 0.5 - band */
} Log2Ctx;

static void log2_init(Log2Ctx *l, const uint16_t *tab)
{
    float inv[16], lo[16];
    int32_t hi[16];
    for (int q = 0; q < 16; q++) {
        const double c = 1.0 + (2 * q + 1) / 32.0, v = 2048.0 * log2(c);
        inv[q] = (float)(1.0 / c);
        hi[q] = (int32_t)lround(v);
        lo[q] = (float)(v - hi[q]);
    }
    l->tab = tab;
    l->inv = _mm512_loadu_ps(inv);
    l->lg_hi = _mm512_loadu_si512(hi);
    l->lg_lo = _mm512_loadu_ps(lo);
    for (int n = 1; n <= 5; n++)
        l->a[n] = _mm512_set1_ps((float)((n & 1 ? 2048.0 : -2048.0) / (n * M_LN2)));
    l->tie = _mm512_set1_ps(0.5f - 1e-6f * __atomic_load_n(&log2_band_ppm, __ATOMIC_RELAXED));
}

/* The table entries 2^15 + m of the lanes in `tie`, out of line: about
 * one block of 16 pixels in ten needs it (natural video, glibc's band). */
static __attribute__((noinline)) __m512i
log2_from_table(__m512i u, __m512i m, __mmask16 tie, const uint16_t *tab)
{
    /* a 32-bit read ending at the entry, one entry early */
    const __m512i e = _mm512_srli_epi32(_mm512_mask_i32gather_epi32(
        _mm512_setzero_si512(), tie, _mm512_add_epi32(m, _mm512_set1_epi32(0x8000 - 1)),
        (const int *)tab, 2), 16);
    return _mm512_mask_sub_epi32(u, tie, e, _mm512_set1_epi32(2048 * 15));
}

/* Table entry 2^15 + m, minus 2048 * 15, for 0 <= m < 2^15, unless the
 * lane is in *tie (within the band around a rounding tie; lanes in `act`
 * only): log2_from_table() then has the last word. */
VI __m512i log2_u(__m512i m, __mmask16 act, const Log2Ctx *l, __mmask16 *tie)
{
    /* y = 1 + m / 2^15 and c, the centre of its sixteenth, as float bits */
    const __m512i yb = _mm512_or_si512(_mm512_slli_epi32(m, 8), _mm512_set1_epi32(0x3F800000));
    const __m512i cb = _mm512_ternarylogic_epi32(yb, _mm512_set1_epi32(~0x7FFFF),
                                                 _mm512_set1_epi32(0x40000), 0xEA);
    const __m512i q = _mm512_srli_epi32(m, 11);
    const __m512 r = _mm512_mul_ps(_mm512_sub_ps(_mm512_castsi512_ps(yb), _mm512_castsi512_ps(cb)),
                                   _mm512_permutexvar_ps(q, l->inv));
    __m512 p = l->a[5];
    for (int n = 4; n >= 1; n--)
        p = _mm512_fmadd_ps(p, r, l->a[n]);
    const __m512 v = _mm512_fmadd_ps(p, r, _mm512_permutexvar_ps(q, l->lg_lo));
    /* v minus v rounded to the nearest integer (vreduceps), in [-0.5, 0.5] */
    const __m512 f = _mm512_reduce_ps(v, _MM_FROUND_TO_NEAREST_INT);
    *tie = _mm512_mask_cmp_ps_mask(act, _mm512_abs_ps(f), l->tie, _CMP_GT_OQ);
    return _mm512_add_epi32(_mm512_permutexvar_epi32(q, l->lg_hi),
                            _mm512_cvttps_epi32(_mm512_sub_ps(v, f)));
}

typedef struct TermsCtx {
    __m512d egl;
    Log2Ctx log2;
} TermsCtx;

/* num and den gain at most 2 terms per lane per 32 columns, below 2^16
 * and 2^15 in magnitude; they and cnt are 32-bit lanes moved to 64 bits
 * after every row, so rows of fewer than 2^19 samples cannot overflow
 * them. */
typedef struct TermsAcc {
    __m512i num, den, cnt;            /* 16 x int32 */
    __m512i num64, den64, cnt64, nonlog;  /* 8 x int64 */
} TermsAcc;

VI __m512i add_wide(__m512i acc64, __m512i v32)
{
    return _mm512_add_epi64(acc64, _mm512_add_epi64(
        _mm512_cvtepu32_epi64(_mm512_castsi512_si256(v32)),
        _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(v32, 1))));
}

VI __m512i add_wide_signed(__m512i acc64, __m512i v32)
{
    return _mm512_add_epi64(acc64, _mm512_add_epi64(
        _mm512_cvtepi32_epi64(_mm512_castsi512_si256(v32)),
        _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(v32, 1))));
}

/* numer1 and numer2 of 8 pixels (vif.c qm_vif_terms_cpu), where the
 * numerator term is log2_q11_64(numer2) - log2_q11_64(numer1); both hold
 * integers below 2^53 exactly. */
VI void numers8(__m256i s11, __m256i s22, __m256i s12, const TermsCtx *c,
                    __m512d *numer1, __m512d *numer2)
{
    const __m512d eps = _mm512_set1_pd(65536 * 1.0e-10);
    const __m512d d11 = _mm512_cvtepi32_pd(s11), d22 = _mm512_cvtepi32_pd(s22);
    const __m512d d12 = _mm512_cvtepi32_pd(s12);
    __m512d g = _mm512_div_pd(d12, _mm512_add_pd(d11, eps));
    const __m512d sv = _mm512_sub_pd(d22, _mm512_mul_pd(g, d12));
    const __m512d sv_sq = _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(sv, _mm512_set1_pd(1.0), _CMP_GE_OQ),
                                              _mm512_roundscale_pd(sv, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
    *numer1 = _mm512_add_pd(sv_sq, _mm512_set1_pd(2 << 16));
    g = _mm512_min_pd(g, c->egl);
    *numer2 = _mm512_add_pd(_mm512_roundscale_pd(_mm512_mul_pd(_mm512_mul_pd(g, g), d11),
                                                 _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), *numer1);
}

/* Of two vectors of 8 doubles holding integers >= 2^15: m (the 15 bits
 * after the leading one) and floor(log2) + 1023, as 16 int32 lanes. */
VI void split16(__m512d lo, __m512d hi, __m512i *m, __m512i *e)
{
    const __m512i bl = _mm512_castpd_si512(lo), bh = _mm512_castpd_si512(hi);
    const __m512i k = _mm512_set1_epi64(0x7FFF);
    *m = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(
             _mm512_and_si512(_mm512_srli_epi64(bl, 52 - 15), k))),
         _mm512_cvtepi64_epi32(_mm512_and_si512(_mm512_srli_epi64(bh, 52 - 15), k)), 1);
    *e = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(_mm512_srli_epi64(bl, 52))),
                            _mm512_cvtepi64_epi32(_mm512_srli_epi64(bh, 52)), 1);
}

/* The terms of 16 pixels; lanes outside `valid` are left out.  With
 * log2_q11(v) = entry(16 leading bits) + 2048 k, k = floor(log2 v) - 15:
 *   den term = U(x) + 2048 (floor(log2 x) - 17), x = s11 + 2^17,
 *   num term = U(numer2) - U(numer1)
 *              + 2048 (floor(log2 numer2) - floor(log2 numer1)). */
VI void terms_block(__m512i s11, __m512i s22, __m512i s12, __mmask16 valid,
                    const TermsCtx *c, TermsAcc *a)
{
    const __m512i nsq = _mm512_set1_epi32(2 << 16);
    const __mmask16 fl = _mm512_mask_cmplt_epi32_mask(valid, s11, nsq);
    const __mmask16 lg = valid & ~fl;
    a->cnt = _mm512_mask_sub_epi32(a->cnt, fl, a->cnt, _mm512_set1_epi32(-1));
    a->nonlog = add_wide(a->nonlog, _mm512_maskz_mov_epi32(fl, s22));
    if (!lg)
        return;
    /* den: floor(log2 x) from the exponent of x >> 8 (below 2^24: exact in
     * float; x >= 2^18 here), then m = (x >> k) - 2^15 */
    const __m512i x = _mm512_add_epi32(s11, nsq);
    const __m512i ex = _mm512_sub_epi32(_mm512_srli_epi32(
        _mm512_castps_si512(_mm512_cvtepi32_ps(_mm512_srli_epi32(x, 8))), 23),
        _mm512_set1_epi32(127 - 8));
    const __m512i mx = _mm512_and_si512(_mm512_srlv_epi32(x, _mm512_sub_epi32(ex, _mm512_set1_epi32(15))),
                                        _mm512_set1_epi32(0x7FFF));
    __mmask16 t0, t1 = 0, t2 = 0;
    __m512i ux = log2_u(mx, lg, &c->log2, &t0);

    const __mmask16 nm = _mm512_mask_cmpgt_epi32_mask(
        _mm512_mask_cmpgt_epi32_mask(lg, s12, _mm512_setzero_si512()), s22, _mm512_setzero_si512());
    __m512i m1, m2, e1, e2, u1, u2;
    m1 = m2 = e1 = e2 = u1 = u2 = _mm512_setzero_si512();
    if (nm) {
        __m512d n1[2], n2[2];
        numers8(_mm512_castsi512_si256(s11), _mm512_castsi512_si256(s22),
                _mm512_castsi512_si256(s12), c, &n1[0], &n2[0]);
        numers8(_mm512_extracti64x4_epi64(s11, 1), _mm512_extracti64x4_epi64(s22, 1),
                _mm512_extracti64x4_epi64(s12, 1), c, &n1[1], &n2[1]);
        split16(n1[0], n1[1], &m1, &e1);
        split16(n2[0], n2[1], &m2, &e2);
        u1 = log2_u(m1, nm, &c->log2, &t1);
        u2 = log2_u(m2, nm, &c->log2, &t2);
    }
    if (__builtin_expect((t0 | t1 | t2) != 0, 0)) {
        if (t0)
            ux = log2_from_table(ux, mx, t0, c->log2.tab);
        if (t1)
            u1 = log2_from_table(u1, m1, t1, c->log2.tab);
        if (t2)
            u2 = log2_from_table(u2, m2, t2, c->log2.tab);
    }
    a->den = _mm512_mask_add_epi32(a->den, lg, a->den, _mm512_add_epi32(ux, _mm512_slli_epi32(
        _mm512_sub_epi32(ex, _mm512_set1_epi32(17)), 11)));
    if (nm)
        a->num = _mm512_mask_add_epi32(a->num, nm, a->num, _mm512_add_epi32(
            _mm512_sub_epi32(u2, u1), _mm512_slli_epi32(_mm512_sub_epi32(e2, e1), 11)));
}

VI void terms_flush_row(TermsAcc *a)
{
    a->num64 = add_wide_signed(a->num64, a->num);
    a->den64 = add_wide_signed(a->den64, a->den);
    a->cnt64 = add_wide(a->cnt64, a->cnt);
    a->num = a->den = a->cnt = _mm512_setzero_si512();
}

VI void terms_finish(TermsAcc *a, QmVifAccum *acc)
{
    terms_flush_row(a);
    acc->num_log += _mm512_reduce_add_epi64(a->num64);
    acc->den_log += _mm512_reduce_add_epi64(a->den64);
    acc->num_non_log += _mm512_reduce_add_epi64(a->nonlog);
    acc->den_non_log += _mm512_reduce_add_epi64(a->cnt64);
}

VI void terms_init(TermsAcc *a, TermsCtx *c, const QmVifParams *p)
{
    a->num = a->den = a->cnt = _mm512_setzero_si512();
    a->num64 = a->den64 = a->cnt64 = a->nonlog = _mm512_setzero_si512();
    c->egl = _mm512_set1_pd(p->enhn_gain_limit);
    log2_init(&c->log2, p->log2_tab);
}


void qm_vif_terms_avx512(const int32_t *s11, const int32_t *s22,
                         const int32_t *s12, int n, const QmVifParams *p,
                         QmVifAccum *acc)
{
    TermsCtx c;
    TermsAcc a;
    terms_init(&a, &c, p);
    for (int j = 0; j < n; j += 16) {
        const __mmask16 m = n - j >= 16 ? 0xFFFF : (__mmask16)((1u << (n - j)) - 1);
        terms_block(_mm512_maskz_loadu_epi32(m, s11 + j), _mm512_maskz_loadu_epi32(m, s22 + j),
                _mm512_maskz_loadu_epi32(m, s12 + j), m, &c, &a);
        /* the 32-bit sums gain at most 1 term (below 2^16) per lane and call */
        if ((j / 16) % 32768 == 32767)
            terms_flush_row(&a);
    }
    terms_finish(&a, acc);
}

/* Whether every entry not flagged as near a tie with the band of l comes
 * out exactly. */
static int log2_agrees(const Log2Ctx *l, const uint16_t *tab)
{
    for (int m = 0; m < 1 << 15; m += 16) {
        const __m512i mv = _mm512_add_epi32(_mm512_set1_epi32(m), _mm512_setr_epi32(
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
        __mmask16 tie;
        int32_t got[16];
        _mm512_storeu_si512(got, log2_u(mv, 0xFFFF, l, &tie));
        for (int k = 0; k < 16; k++)
            if (!(tie >> k & 1) && got[k] != tab[(1 << 15) + m + k] - 2048 * 15)
                return 0;
    }
    return 1;
}

int qm_vif_log2_check_avx512(const uint16_t *tab)
{
    /* the narrowest band in steps of 1e-4 up to 0.003 that suffices */
    for (int ppm = 100; ppm <= 3000; ppm += 100) {
        Log2Ctx l;
        log2_init(&l, tab);
        l.tie = _mm512_set1_ps(0.5f - 1e-6f * ppm);
        if (log2_agrees(&l, tab)) {
            __atomic_store_n(&log2_band_ppm, ppm, __ATOMIC_RELAXED);
            return 1;
        }
    }
    return 0;
}


#define VIF_STAT qm_vif_stat_avx512
#define VIF_DECIMATE qm_vif_decimate_avx512
#include "x86/vif_tmpl.c"
