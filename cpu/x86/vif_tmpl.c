/* gst-qmetric: the x86 twins of the VIF stages, written once for both
 * vector widths.  An instance file (vif_avx2.c, vif_avx512.c) includes its
 * width header (vec_avx2.h or vec_avx512.h), defines the per-pixel terms
 * (terms_block() and its accumulators, which differ by ISA: AVX2 reads the
 * log2 table, AVX-512 computes most entries) and the exported names
 * VIF_STAT and VIF_DECIMATE, then includes this file.
 *
 * cpu/vif.c is the specification; these compute the same integers
 * (tests/checkasm/vif.c compares them bit for bit).  What differs is only
 * how:
 *
 *   - filters run on pmaddwd, two taps per instruction (vif_x86.h says how
 *     the Q16 taps are paired and why samples are biased by 2^15);
 *   - 8-bit pictures are centred (c = x - 128, |c| <= 128) so that the
 *     squares and cross products of two symmetric rows, added, still fit a
 *     16-bit lane: the vertical pass filters sums of symmetric rows, half
 *     the multiplies, and recovers the specification's moments from
 *       sum f x^2 = sum f c^2 + 256 sum f x - 2^30,
 *       sum f x y = sum f c e + 128 (sum f x + sum f y) - 2^30
 *     (each filter sums to 2^16), exact modulo 2^32 like the C sums.
 *
 * A block is VN16 columns (16 or 32); the last block of a row is handled
 * as v_block_at() says (moved back, or masked).
 */
#include "vif.h"
#include "x86/vif_x86.h"

static const int vif_taps[QM_VIF_SCALES] = { 17, 9, 5, 3 };

VI V bias16(V v)
{
    return v_xor(v, v_set16((short)0x8000));
}

/* acc += pmaddwd of the interleaved (a[i], b[i]) with weights w: lanes of
 * acc[0] are columns 0-3 and 8-11, of acc[1] columns 4-7 and 12-15. */
VI void madd_rows(V acc[2], V a, V b, V w)
{
    acc[0] = v_add32(acc[0], v_madd16(v_unpacklo16(a, b), w));
    acc[1] = v_add32(acc[1], v_madd16(v_unpackhi16(a, b), w));
}

/* The low (*lo16) and high (*hi16) 16 bits of the 32-bit lanes of such an
 * acc[2] pair, back in column order. */
VI void split32(const V v[2], V *lo16, V *hi16)
{
    /* per 128-bit lane: bytes 0-1, 4-5, 8-9, 12-13, then 2-3, 6-7, ... */
    const V sh = v_set4x32(0x05040100, 0x0D0C0908, 0x07060302, 0x0F0E0B0A);
    const V a = v_shuffle8(v[0], sh), b = v_shuffle8(v[1], sh);
    *lo16 = v_unpacklo64(a, b);
    if (hi16)
        *hi16 = v_unpackhi64(a, b);
}

/* Store the low 16 bits of acc[2] (the C code's uint16_t cast), biased. */
VI void store_lo16(uint16_t *dst, const V v[2])
{
    V lo;
    split32(v, &lo, NULL);
    v_storeu(dst, bias16(lo));
}

VI void store_split(uint16_t *dl, uint16_t *dh, const V v[2])
{
    V lo, hi;
    split32(v, &lo, &hi);
    v_storeu(dl, bias16(lo));
    v_storeu(dh, bias16(hi));
}

/* ---- stage 1: vertical pass ---- */

/* 8-bit samples, 16 columns at x.  Item k (k <= half) of a moment combines
 * rows k and taps-1-k (the centre row twice, at half weight):
 *   c_t + c_b,  c_t^2 + c_b^2 - 2^14,  c_t e_t + c_b e_b - 2^7,
 * biased into int16 ([-2^14, 2^14] and [-32640, 32640]); items are paired
 * for pmaddwd with weights (g[k], g[k+1]), wp[k / 2].  The weights sum to
 * 2^15, so the biases total 2^29 and 2^22; with A = sum f x = sum f c +
 * 2^23, the accumulators start at
 *   mean:  2^23 + 128 (A plus the C code's rounding: mu = acc >> 8),
 *   x^2:   2^29 - 2^30 - 256 * 128, to which 256 * acc_mean is added,
 *   x y:   2^22 - 2^30 - 128 * 256, to which 128 * (acc_mean1 + acc_mean2).
 */
VI void vert8(const uint8_t *const *r, const uint8_t *const *d,
                  const int taps, const V *wp, ptrdiff_t x, VCols cols,
                  uint16_t *const *st)
{
    const int half = taps / 2;
    const V k128 = v_set16(128);
    const V bq = v_set16(1 << 14), br = v_set16(1 << 7);
    V s1[2], s2[2], q1[2], q2[2], q12[2];
    s1[0] = s1[1] = s2[0] = s2[1] = v_set32((1 << 23) + 128);
    q1[0] = q1[1] = q2[0] = q2[1] =
        v_set32((int32_t)((1u << 29) - (1u << 30) - (1u << 15)));
    q12[0] = q12[1] = v_set32((int32_t)((1u << 22) - (1u << 30) - (1u << 15)));
    for (int k = 0; k <= half; k += 2) {
        V i1[2], i2[2], iq1[2], iq2[2], iq12[2];
        for (int m = 0; m < 2; m++) {
            const int i = k + m;
            if (i > half) {
                i1[m] = i2[m] = iq1[m] = iq2[m] = iq12[m] = v_zero();
                continue;
            }
            const V ct = v_sub16(v_load_u8(r[i] + x, cols), k128);
            const V et = v_sub16(v_load_u8(d[i] + x, cols), k128);
            const V cb = i == half ? ct : v_sub16(v_load_u8(r[taps - 1 - i] + x, cols), k128);
            const V eb = i == half ? et : v_sub16(v_load_u8(d[taps - 1 - i] + x, cols), k128);
            i1[m] = v_add16(ct, cb);
            i2[m] = v_add16(et, eb);
            iq1[m] = v_sub16(v_add16(v_mullo16(ct, ct),
                                                       v_mullo16(cb, cb)), bq);
            iq2[m] = v_sub16(v_add16(v_mullo16(et, et),
                                                       v_mullo16(eb, eb)), bq);
            iq12[m] = v_sub16(v_add16(v_mullo16(ct, et),
                                                        v_mullo16(cb, eb)), br);
        }
        const V w = wp[k / 2];
        madd_rows(s1, i1[0], i1[1], w);
        madd_rows(s2, i2[0], i2[1], w);
        madd_rows(q1, iq1[0], iq1[1], w);
        madd_rows(q2, iq2[0], iq2[1], w);
        madd_rows(q12, iq12[0], iq12[1], w);
    }
    V m[2];
    for (int h = 0; h < 2; h++) {
        q1[h] = v_add32(q1[h], v_slli32(s1[h], 8));
        q2[h] = v_add32(q2[h], v_slli32(s2[h], 8));
        q12[h] = v_add32(q12[h], v_slli32(v_add32(s1[h], s2[h]), 7));
    }
    m[0] = v_srli32(s1[0], 8);
    m[1] = v_srli32(s1[1], 8);
    store_lo16(st[VIF_X86_MU1] + x, m);
    m[0] = v_srli32(s2[0], 8);
    m[1] = v_srli32(s2[1], 8);
    store_lo16(st[VIF_X86_MU2] + x, m);
    store_split(st[VIF_X86_XXL] + x, st[VIF_X86_XXH] + x, q1);
    store_split(st[VIF_X86_YYL] + x, st[VIF_X86_YYH] + x, q2);
    store_split(st[VIF_X86_XYL] + x, st[VIF_X86_XYH] + x, q12);
}

/* Shifts and roundings of the 16-bit vertical pass (vif.c
 * DEFINE_STAT_VERTICAL): means >> in_bits, second moments joined from their
 * 16-bit halves (join_q16) with >> 2 (in_bits - 8). */
typedef struct Vert16Shifts {
    __m128i mu, sq, hi;         /* in_bits, 2 (in_bits - 8), 16 - that */
    V mu_init, lo_init;   /* 2^31 bias plus the rounding */
    V mu_init15, lo_init15;  /* vert15: the rounding, 2^30 plus it */
} Vert16Shifts;

/* 16-bit samples, 16 columns at x: rows k and taps-1-k interleaved, weights
 * (g[k], g[k]) in ww[k]; products split into their 16-bit halves
 * (pmullw, pmulhuw), each half filtered on its own as the C code does. */
VI void vert16(const uint8_t *const *r, const uint8_t *const *d,
                   const int taps, const V *ww, ptrdiff_t x, VCols cols,
                   const Vert16Shifts *vs, uint16_t *const *st)
{
    const int half = taps / 2;
    const ptrdiff_t xb = 2 * x;
    V a[VIF_X86_STREAMS][2];
    const V hi_init = v_set32(INT32_MIN);
    for (int h = 0; h < 2; h++) {
        a[VIF_X86_MU1][h] = a[VIF_X86_MU2][h] = vs->mu_init;
        a[VIF_X86_XXL][h] = a[VIF_X86_YYL][h] = a[VIF_X86_XYL][h] = vs->lo_init;
        a[VIF_X86_XXH][h] = a[VIF_X86_YYH][h] = a[VIF_X86_XYH][h] = hi_init;
    }
    for (int k = 0; k <= half; k++) {
        const V xt = v_load_u16(r[k] + xb, cols), yt = v_load_u16(d[k] + xb, cols);
        const V xbm = k == half ? xt : v_load_u16(r[taps - 1 - k] + xb, cols);
        const V ybm = k == half ? yt : v_load_u16(d[taps - 1 - k] + xb, cols);
        const V w = ww[k];
        madd_rows(a[VIF_X86_MU1], bias16(xt), bias16(xbm), w);
        madd_rows(a[VIF_X86_MU2], bias16(yt), bias16(ybm), w);
        madd_rows(a[VIF_X86_XXL], bias16(v_mullo16(xt, xt)),
                  bias16(v_mullo16(xbm, xbm)), w);
        madd_rows(a[VIF_X86_XXH], bias16(v_mulhi_u16(xt, xt)),
                  bias16(v_mulhi_u16(xbm, xbm)), w);
        madd_rows(a[VIF_X86_YYL], bias16(v_mullo16(yt, yt)),
                  bias16(v_mullo16(ybm, ybm)), w);
        madd_rows(a[VIF_X86_YYH], bias16(v_mulhi_u16(yt, yt)),
                  bias16(v_mulhi_u16(ybm, ybm)), w);
        madd_rows(a[VIF_X86_XYL], bias16(v_mullo16(xt, yt)),
                  bias16(v_mullo16(xbm, ybm)), w);
        madd_rows(a[VIF_X86_XYH], bias16(v_mulhi_u16(xt, yt)),
                  bias16(v_mulhi_u16(xbm, ybm)), w);
    }
    V m[2];
    for (int s = VIF_X86_MU1; s <= VIF_X86_MU2; s++) {
        m[0] = v_srl32(a[s][0], vs->mu);
        m[1] = v_srl32(a[s][1], vs->mu);
        store_lo16(st[s] + x, m);
    }
    for (int s = VIF_X86_XXL; s < VIF_X86_STREAMS; s += 2) {
        for (int h = 0; h < 2; h++)
            m[h] = v_add32(v_sll32(a[s + 1][h], vs->hi),
                                    v_srl32(a[s][h], vs->sq));
        store_split(st[s] + x, st[s + 1] + x, m);
    }
}

/* Samples below 2^15 (9- to 15-bit pictures): a row pair (x_t, x_b)
 * interleaved then gives, through pmaddwd, both the weighted mean and,
 * multiplied by itself (or by its dis twin), the item x_t^2 + x_b^2 (x_t
 * y_t + x_b y_b), below 2^31: no bias, half the multiplies.  The items of
 * two row pairs are then cut into 16-bit halves side by side, pairs for
 * pmaddwd with the weights (g[k], g[k + 1]) as in vert8: low halves biased
 * (the weights sum to 2^15, so that is 2^30 in all), high halves below 2^15
 * as they are. */
VI void vert15(const uint8_t *const *r, const uint8_t *const *d,
                   const int taps, const V *wp, const V *ww,
                   ptrdiff_t x, VCols cols, const Vert16Shifts *vs, uint16_t *const *st)
{
    const int half = taps / 2;
    const ptrdiff_t xb = 2 * x;
    const V lo_bias = v_set32((int32_t)0x80008000u);
    enum { XX, YY, XY };
    V mu1[2], mu2[2], lo[3][2], hi[3][2];
    for (int h = 0; h < 2; h++) {
        mu1[h] = mu2[h] = vs->mu_init15;
        for (int q = XX; q <= XY; q++) {
            lo[q][h] = vs->lo_init15;
            hi[q][h] = v_zero();
        }
    }
    for (int k = 0; k <= half; k += 2) {
        V it[2][3][2];  /* [item][moment][half] */
        for (int n = 0; n < 2; n++) {
            const int i = k + n;
            if (i > half) {
                for (int q = XX; q <= XY; q++)
                    it[n][q][0] = it[n][q][1] = v_zero();
                continue;
            }
            const V xt = v_load_u16(r[i] + xb, cols), yt = v_load_u16(d[i] + xb, cols);
            const V xbm = i == half ? xt : v_load_u16(r[taps - 1 - i] + xb, cols);
            const V ybm = i == half ? yt : v_load_u16(d[taps - 1 - i] + xb, cols);
            const V px[2] = { v_unpacklo16(xt, xbm), v_unpackhi16(xt, xbm) };
            const V py[2] = { v_unpacklo16(yt, ybm), v_unpackhi16(yt, ybm) };
            for (int h = 0; h < 2; h++) {
                mu1[h] = v_add32(mu1[h], v_madd16(px[h], ww[i]));
                mu2[h] = v_add32(mu2[h], v_madd16(py[h], ww[i]));
                it[n][XX][h] = v_madd16(px[h], px[h]);
                it[n][YY][h] = v_madd16(py[h], py[h]);
                it[n][XY][h] = v_madd16(px[h], py[h]);
            }
        }
        const V w = wp[k / 2];
        for (int q = XX; q <= XY; q++) {
            for (int h = 0; h < 2; h++) {
                const V a = it[0][q][h], b = it[1][q][h];
                const V l = v_xor(v_blend16_odd(
                    a, v_slli32(b, 16)), lo_bias);
                const V u = v_blend16_odd(v_srli32(a, 16), b);
                lo[q][h] = v_add32(lo[q][h], v_madd16(l, w));
                hi[q][h] = v_add32(hi[q][h], v_madd16(u, w));
            }
        }
    }
    V v[2];
    v[0] = v_srl32(mu1[0], vs->mu);
    v[1] = v_srl32(mu1[1], vs->mu);
    store_lo16(st[VIF_X86_MU1] + x, v);
    v[0] = v_srl32(mu2[0], vs->mu);
    v[1] = v_srl32(mu2[1], vs->mu);
    store_lo16(st[VIF_X86_MU2] + x, v);
    static const int out[3] = { VIF_X86_XXL, VIF_X86_YYL, VIF_X86_XYL };
    for (int q = XX; q <= XY; q++) {
        for (int h = 0; h < 2; h++)
            v[h] = v_add32(v_sll32(hi[q][h], vs->hi),
                                    v_srl32(lo[q][h], vs->sq));
        store_split(st[out[q]] + x, st[out[q] + 1] + x, v);
    }
}

/* ---- stage 1: horizontal pass and the per-pixel terms ---- */

/* vif_x86_col_words() as vectors */
static void col_weights(int scale, V *wp, V *ww)
{
    uint32_t pair[(QM_VIF_MAX_HALF + 2) / 2], dup[QM_VIF_MAX_HALF + 1];
    const int half = vif_x86_col_words(scale, pair, dup);
    for (int k = 0; k <= half; k += 2)
        wp[k / 2] = v_set32((int32_t)pair[k / 2]);
    for (int k = 0; k <= half; k++)
        ww[k] = v_set32((int32_t)dup[k]);
}

/* the weights of vif_x86_row_weights() as vectors */
typedef struct RowW {
    V e[QM_VIF_MAX_HALF + 2][2], o[QM_VIF_MAX_HALF + 2][2];
} RowW;

static void row_weights(int scale, RowW *rw)
{
    VifX86RowWeights w;
    vif_x86_row_weights(scale, &w);
    for (int l = 0; l < QM_VIF_MAX_HALF + 2; l++) {
        for (int q = 0; q < 2; q++) {
            rw->e[l][q] = v_set32((int32_t)w.e[l][q]);
            rw->o[l][q] = v_set32((int32_t)w.o[l][q]);
        }
    }
}
/* Filter a biased stream along the row for the VN16 outputs at j: even
 * outputs (j, j+2, ...) in *e, odd ones in *o, one vector serving both
 * (vif_x86_row_weights()); v_win_at() says how the shifted vectors are
 * made. */
VI void hfilter(const uint16_t *s, ptrdiff_t j, const int half,
                const RowW *rw, V init, V *e, V *o)
{
    const int first = vif_x86_row_first(half);
    V ae = init, ao = init;
    const VWin win = v_win(s + j);
    for (int l = 0; l < vif_x86_row_loads(half); l++) {
        const V v = v_win_at(win, first + 2 * l);
        for (int q = 0; q < vif_x86_row_ne(half, l); q++)
            ae = v_add32(ae, v_madd16(v, rw->e[l][q]));
        for (int q = 0; q < vif_x86_row_no(half, l); q++)
            ao = v_add32(ao, v_madd16(v, rw->o[l][q]));
    }
    *e = ae;
    *o = ao;
}

/* (a b + 2^31) >> 32 per unsigned 32-bit lane (vif.c mu1_sq etc.) */
VI V mul_q32(V a, V b)
{
    const V rnd = v_set64(0x80000000);
    const V ev = v_add64(v_mul_u32(a, b), rnd);
    const V od = v_add64(v_mul_u32(v_srli64(a, 32),
                                                         v_srli64(b, 32)), rnd);
    return v_blend32_odd(v_srli64(ev, 32), od);
}

/* Horizontal pass (vif.c stat_horizontal) of 16 outputs at j and their
 * terms; only outputs below w count. */
VI void stat_hblock(uint16_t *const *st, ptrdiff_t j, int w, const int taps,
                        const RowW *rw, const TermsCtx *c, TermsAcc *a)
{
    const int half = taps / 2;
    const V bias = v_set32(INT32_MIN);
    const V bias_rnd = v_set32((int32_t)(0x80000000u + 0x8000u));
    V a1[2], a2[2], l[2], h[2];
    hfilter(st[VIF_X86_MU1], j, half, rw, bias, &a1[0], &a1[1]);
    hfilter(st[VIF_X86_MU2], j, half, rw, bias, &a2[0], &a2[1]);
    V s11[2], s22[2], s12[2];
    hfilter(st[VIF_X86_XXL], j, half, rw, bias_rnd, &l[0], &l[1]);
    hfilter(st[VIF_X86_XXH], j, half, rw, bias, &h[0], &h[1]);
    for (int i = 0; i < 2; i++)
        s11[i] = v_sub32(v_add32(h[i], v_srli32(l[i], 16)),
                                  mul_q32(a1[i], a1[i]));
    hfilter(st[VIF_X86_YYL], j, half, rw, bias_rnd, &l[0], &l[1]);
    hfilter(st[VIF_X86_YYH], j, half, rw, bias, &h[0], &h[1]);
    for (int i = 0; i < 2; i++)
        s22[i] = v_max32(v_sub32(v_add32(h[i], v_srli32(l[i], 16)),
                                                   mul_q32(a2[i], a2[i])),
                                  v_zero());
    hfilter(st[VIF_X86_XYL], j, half, rw, bias_rnd, &l[0], &l[1]);
    hfilter(st[VIF_X86_XYH], j, half, rw, bias, &h[0], &h[1]);
    for (int i = 0; i < 2; i++)
        s12[i] = v_sub32(v_add32(h[i], v_srli32(l[i], 16)),
                                  mul_q32(a1[i], a2[i]));
    /* lane i of the even outputs is output j + 2 i, of the odd ones
     * j + 2 i + 1 */
    terms_block(s11[0], s22[0], s12[0], v_sel_step2(w - (int)j, 0), c, a);
    terms_block(s11[1], s22[1], s12[1], v_sel_step2(w - (int)j, 1), c, a);
}

/* The samples of `taps` rows at columns 0..w-1 (w < VN16) copied into a
 * zeroed block, for rows too narrow for one vector (V_NARROW_COPY). */
static void narrow_rows(const uint8_t **rows, int taps, int w, int bytes,
                        uint8_t block[][VN16 * 2])
{
    for (int k = 0; k < taps; k++) {
        memset(block[k], 0, VN16 * 2);
        memcpy(block[k], rows[k], (size_t)w * bytes);
        rows[k] = block[k];
    }
}

VI void stat_scale(const void *ref, ptrdiff_t ref_stride, const void *dis,
                       ptrdiff_t dis_stride, int w, int h, int in_bits,
                       const int scale, const QmVifParams *p, void *scratch,
                       QmVifAccum *acc)
{
    const int taps = vif_taps[scale], half = taps / 2;
    uint16_t *st[VIF_X86_STREAMS];
    vif_x86_streams(scratch, w, st);

    V wp[(QM_VIF_MAX_HALF + 2) / 2], ww[QM_VIF_MAX_HALF + 1];
    col_weights(scale, wp, ww);
    RowW rw;
    row_weights(scale, &rw);

    Vert16Shifts vs;
    const int sh_sq = 2 * (in_bits - 8);
    vs.mu = _mm_cvtsi32_si128(in_bits);
    vs.sq = _mm_cvtsi32_si128(sh_sq);
    vs.hi = _mm_cvtsi32_si128(16 - sh_sq);
    vs.mu_init = v_set32((int32_t)(0x80000000u + (1u << (in_bits - 1))));
    vs.lo_init = v_set32((int32_t)(0x80000000u + (sh_sq ? 1u << (sh_sq - 1) : 0)));
    vs.mu_init15 = v_set32((int32_t)(1u << (in_bits - 1)));
    vs.lo_init15 = v_set32((int32_t)((1u << 30) + (sh_sq ? 1u << (sh_sq - 1) : 0)));

    TermsCtx c;
    TermsAcc a;
    terms_init(&a, &c, p);
    const uint8_t *rr[2 * QM_VIF_MAX_HALF + 1], *dr[2 * QM_VIF_MAX_HALF + 1];
    uint8_t nr[2 * QM_VIF_MAX_HALF + 1][VN16 * 2], nd[2 * QM_VIF_MAX_HALF + 1][VN16 * 2];
    for (int i = 0; i < h; i++) {
        vif_x86_window(rr, ref, ref_stride, i, h, taps);
        vif_x86_window(dr, dis, dis_stride, i, h, taps);
        if (V_NARROW_COPY && w < VN16) {
            narrow_rows(rr, taps, w, in_bits == 8 ? 1 : 2, nr);
            narrow_rows(dr, taps, w, in_bits == 8 ? 1 : 2, nd);
        }
        for (int x = 0; x < w; x += VN16) {
            VCols cols;
            const ptrdiff_t xc = v_block_at(x, w, &cols);
            if (in_bits == 8)
                vert8(rr, dr, taps, wp, xc, cols, st);
            else if (in_bits < 16)  /* samples below 2^15 (vif.h: in_bits bits) */
                vert15(rr, dr, taps, wp, ww, xc, cols, &vs, st);
            else
                vert16(rr, dr, taps, ww, xc, cols, &vs, st);
        }
        for (int s = 0; s < VIF_X86_STREAMS; s++)
            vif_x86_pad(st[s], w, half);
        for (int j = 0; j < w; j += VN16)
            stat_hblock(st, j, w, taps, &rw, &c, &a);
        terms_flush_row(&a);
    }
    terms_finish(&a, acc);
}

void VIF_STAT(const void *ref, ptrdiff_t ref_stride, const void *dis,
              ptrdiff_t dis_stride, int w, int h, int in_bits, int scale,
              const QmVifParams *p, void *scratch, QmVifAccum *acc)
{
#define STAT(S) stat_scale(ref, ref_stride, dis, dis_stride, w, h, in_bits, \
                           S, p, scratch, acc)
    QM_VIF_FOR_SCALE(scale, STAT);
#undef STAT
}

/* ---- stage 2: low-pass and decimation ---- */

/* Vertical low-pass of 8-bit rows at 16 columns: items x_t + x_b (at most
 * 510), pairs of items weighted (g[k], g[k+1]). */
VI void dec_vert8(const uint8_t *const *r, const int taps, const V *wp,
                      ptrdiff_t x, VCols cols, uint16_t *out)
{
    const int half = taps / 2;
    V s[2];
    s[0] = s[1] = v_set32(1 << 7);
    for (int k = 0; k <= half; k += 2) {
        V it[2];
        for (int m = 0; m < 2; m++) {
            const int i = k + m;
            if (i > half) {
                it[m] = v_zero();
                continue;
            }
            const V t = v_load_u8(r[i] + x, cols);
            it[m] = v_add16(t, i == half ? t : v_load_u8(r[taps - 1 - i] + x, cols));
        }
        madd_rows(s, it[0], it[1], wp[k / 2]);
    }
    s[0] = v_srli32(s[0], 8);
    s[1] = v_srli32(s[1], 8);
    store_lo16(out + x, s);
}

VI void dec_vert16(const uint8_t *const *r, const int taps, const V *ww,
                       ptrdiff_t x, VCols cols, const Vert16Shifts *vs, uint16_t *out)
{
    const int half = taps / 2;
    V s[2];
    s[0] = s[1] = vs->mu_init;
    for (int k = 0; k <= half; k++) {
        const V t = v_load_u16(r[k] + 2 * x, cols);
        const V b = k == half ? t : v_load_u16(r[taps - 1 - k] + 2 * x, cols);
        madd_rows(s, bias16(t), bias16(b), ww[k]);
    }
    s[0] = v_srl32(s[0], vs->mu);
    s[1] = v_srl32(s[1], vs->mu);
    store_lo16(out + x, s);
}

/* Horizontal low-pass at even columns (vif.c dec_horizontal): output j is
 * centred on sample 2 j, so the loads of vif_x86_row_weights() at 2 j +
 * off with the even-output weights give outputs j, j + 1, ... in order. */
VI void dec_horizontal(const uint16_t *v, int wo, const int taps,
                           const RowW *rw, uint16_t *out)
{
    const int half = taps / 2, first = vif_x86_row_first(half);
    const V init = v_set32((int32_t)(0x80000000u + 0x8000u));
    for (int j = 0; j < wo; j += VN16) {
        V lo = init, hi = init;
        for (int l = 0; l < vif_x86_row_loads(half); l++) {
            const uint16_t *q = v + 2 * j + first + 2 * l;
            const V a = v_loadu(q), b = v_loadu(q + VN16);
            for (int k = 0; k < vif_x86_row_ne(half, l); k++) {
                lo = v_add32(lo, v_madd16(a, rw->e[l][k]));
                hi = v_add32(hi, v_madd16(b, rw->e[l][k]));
            }
        }
        v_store_u16x2(out + j, wo - j, v_srli32(lo, 16), v_srli32(hi, 16));
    }
}

VI void decimate_scale(const void *ref, ptrdiff_t ref_stride, const void *dis,
                           ptrdiff_t dis_stride, int w, int h, int in_bits,
                           const int fscale, uint16_t *ref_out, uint16_t *dis_out,
                           ptrdiff_t out_stride, void *scratch)
{
    const int taps = vif_taps[fscale], half = taps / 2;
    uint16_t *st[VIF_X86_STREAMS];
    vif_x86_streams(scratch, w, st);
    V wp[(QM_VIF_MAX_HALF + 2) / 2], ww[QM_VIF_MAX_HALF + 1];
    col_weights(fscale, wp, ww);
    RowW rw;
    row_weights(fscale, &rw);
    Vert16Shifts vs;
    vs.mu = _mm_cvtsi32_si128(in_bits);
    vs.mu_init = v_set32((int32_t)(0x80000000u + (1u << (in_bits - 1))));

    uint16_t *v1 = st[0], *v2 = st[1];
    const uint8_t *rr[2 * QM_VIF_MAX_HALF + 1], *dr[2 * QM_VIF_MAX_HALF + 1];
    uint8_t nr[2 * QM_VIF_MAX_HALF + 1][VN16 * 2], nd[2 * QM_VIF_MAX_HALF + 1][VN16 * 2];
    for (int i = 0; i < h / 2; i++) {
        vif_x86_window(rr, ref, ref_stride, 2 * i, h, taps);
        vif_x86_window(dr, dis, dis_stride, 2 * i, h, taps);
        if (V_NARROW_COPY && w < VN16) {
            narrow_rows(rr, taps, w, in_bits == 8 ? 1 : 2, nr);
            narrow_rows(dr, taps, w, in_bits == 8 ? 1 : 2, nd);
        }
        for (int x = 0; x < w; x += VN16) {
            VCols cols;
            const ptrdiff_t xc = v_block_at(x, w, &cols);
            if (in_bits == 8) {
                dec_vert8(rr, taps, wp, xc, cols, v1);
                dec_vert8(dr, taps, wp, xc, cols, v2);
            } else {
                dec_vert16(rr, taps, ww, xc, cols, &vs, v1);
                dec_vert16(dr, taps, ww, xc, cols, &vs, v2);
            }
        }
        vif_x86_pad(v1, w, half);
        vif_x86_pad(v2, w, half);
        dec_horizontal(v1, w / 2, taps, &rw,
                       (uint16_t *)((uint8_t *)ref_out + i * out_stride));
        dec_horizontal(v2, w / 2, taps, &rw,
                       (uint16_t *)((uint8_t *)dis_out + i * out_stride));
    }
}

void VIF_DECIMATE(const void *ref, ptrdiff_t ref_stride, const void *dis,
                  ptrdiff_t dis_stride, int w, int h, int in_bits, int scale,
                  uint16_t *ref_out, uint16_t *dis_out, ptrdiff_t out_stride,
                  void *scratch)
{
#define DEC(S) decimate_scale(ref, ref_stride, dis, dis_stride, w, h, in_bits, \
                              S, ref_out, dis_out, out_stride, scratch)
    QM_VIF_FOR_NEXT_SCALE(scale, DEC);
#undef DEC
}
