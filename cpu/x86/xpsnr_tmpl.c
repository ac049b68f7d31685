/* gst-qmetric: the x86 twins of the XPSNR stages (xpsnr.h), written once
 * for both vector widths.  An instance file (xpsnr_avx2.c, xpsnr_avx512.c)
 * includes its width header (vec_avx2.h or vec_avx512.h), names the
 * exported XPSNR_DSP_INIT, then includes this file.
 *
 * cpu/xpsnr.c is the specification.  Every stage is a sum of exact
 * integers, so any order of addition gives its value; these give it bit
 * for bit (tests/checkasm/xpsnr.c) as long as no lane overflows:
 *
 *   - columns are taken VN16 at a time as 16-bit lanes; the last vector
 *     of a row as v_tail16() says (masked, or moved back to end at the
 *     row's end with the lanes already counted left out), rows narrower
 *     than a vector copied into a zeroed block first where V_NARROW_COPY.
 *     A lane left out reads 0 in every load, and every stage's term is 0
 *     for all-zero samples, so it adds nothing;
 *   - where the bit depth allows (xpsnr.h: samples in [0, 2^bpc)), a
 *     term is computed in 16-bit lanes (each bound is stated where it is
 *     used), else in 32-bit lanes, or with pmaddwd, whose 32-bit sums of
 *     two 16 x 16-bit products are exact for any int16 samples;
 *   - terms are summed per lane in 32 bits and moved to 64-bit lanes
 *     before the largest terms could reach 2^32 (Acc: each stage gives
 *     its bound per vector).
 */
#include <string.h>

#include "xpsnr.h"

/* 32-bit lane sums, moved into 64-bit lanes every `budget` vectors. */
typedef struct Acc {
    V s32, s64;
    int left, budget;
} Acc;

/* s64 + the unsigned 32-bit lanes of x */
VI V add_u32_to64(V s64, V x)
{
    return v_add64(v_add64(s64, v_and(x, v_set64(0xFFFFFFFF))), v_srli64(x, 32));
}

/* budget: how many vectors of terms a 32-bit lane can take, the largest
 * sum one vector adds to a lane being `bound`: (2^32 - 1) / bound */
VI Acc acc_new(uint32_t bound)
{
    Acc a;
    a.s32 = a.s64 = v_zero();
    a.budget = a.left = (int)(UINT32_MAX / bound);
    return a;
}

VI void acc_add(Acc *a, V x)
{
    a->s32 = v_add32(a->s32, x);
    if (--a->left == 0) {
        a->s64 = add_u32_to64(a->s64, a->s32);
        a->s32 = v_zero();
        a->left = a->budget;
    }
}

VI uint64_t acc_total(Acc *a)
{
    return (uint64_t)v_hsum64(add_u32_to64(a->s64, a->s32));
}

/* VN16 samples at p; in a row's last vector (tail) only the lanes of k */
VI V ld16(const void *p, VKeep16 k, int tail)
{
    return tail ? v_loadk16(p, k) : v_loadu(p);
}

VI V ld_u8(const uint8_t *p, VKeep16 k, int tail)
{
    return tail ? v_loadk_u8(p, k) : v_load_u8(p, v_cols_all());
}

/* Runs STEP(x, keep, tail) (one vector of the columns x .. x + VN16 - 1)
 * over the columns [0, n) of a row.  A row narrower than a vector where
 * V_NARROW_COPY must already be copied (narrow_row()): it is read at 0. */
#define FOR_COLUMNS(n, STEP)                                                 \
    do {                                                                     \
        const VKeep16 all_ = v_keep16(0, VN16);                              \
        int x_ = 0;                                                          \
        for (; x_ + VN16 <= (n); x_ += VN16)                                 \
            STEP(x_, all_, 0);                                               \
        if (x_ < (n)) {                                                      \
            VKeep16 k_;                                                      \
            ptrdiff_t t_;                                                    \
            if (V_NARROW_COPY && (n) < VN16) {                               \
                t_ = 0;                                                      \
                k_ = v_keep16(0, (n));                                       \
            } else {                                                         \
                t_ = v_tail16(x_, (n), &k_);                                 \
            }                                                                \
            STEP(t_, k_, 1);                                                 \
        }                                                                    \
    } while (0)

/* Rows narrower than a vector (V_NARROW_COPY): the columns [x0, x1) of
 * a row of es-byte samples, copied into a zeroed block at the same
 * columns; returns the block's column 0.  -NARROW_LEAD <= x0, x1 <=
 * VN16 + NARROW_LEAD: the widest reads are two columns either side. */
enum { NARROW_LEAD = 4, NARROW_LEN = VN16 + 2 * NARROW_LEAD };

static const void *narrow_row(uint8_t blk[NARROW_LEN * 2], const void *row, int x0, int x1,
                              int es)
{
    memset(blk, 0, NARROW_LEN * 2);
    memcpy(blk + (NARROW_LEAD + x0) * es, (const uint8_t *)row + (ptrdiff_t)x0 * es,
           (size_t)(x1 - x0) * (size_t)es);
    return blk + NARROW_LEAD * es;
}

/* ------------------------------------------------------------------------ */
/* SSE                                                                       */
/* ------------------------------------------------------------------------ */

/* Below 16 bits |a - b| < 2^15 fits a 16-bit lane, and pmaddwd adds the
 * squares in pairs: below 2 (2^bpc - 1)^2 < 2^31. */
VI V sse8_vec(const uint8_t *a, const uint8_t *b, ptrdiff_t x, VKeep16 k, int tail)
{
    const V d = v_sub16(ld_u8(a + x, k, tail), ld_u8(b + x, k, tail));
    return v_madd16(d, d);
}

VI V sse15_vec(const uint16_t *a, const uint16_t *b, ptrdiff_t x, VKeep16 k, int tail)
{
    const V d = v_sub16(ld16(a + x, k, tail), ld16(b + x, k, tail));
    return v_madd16(d, d);
}

/* 16 bits: |a - b| <= 65535 as an unsigned lane; its square (below 2^32)
 * from the low and high 16-bit halves of the product, into 64-bit lanes
 * at once. */
VI V sse16_vec(V s64, const uint16_t *a, const uint16_t *b, ptrdiff_t x, VKeep16 k, int tail)
{
    const V p = ld16(a + x, k, tail), q = ld16(b + x, k, tail);
    const V d = v_sub16(v_max_u16(p, q), v_min_u16(p, q));
    const V lo = v_mullo16(d, d), hi = v_mulhi_u16(d, d);
    return add_u32_to64(add_u32_to64(s64, v_unpacklo16(lo, hi)), v_unpackhi16(lo, hi));
}

static uint64_t sse(const void *a, ptrdiff_t a_stride, const void *b, ptrdiff_t b_stride,
                    int w, int h, int bpc)
{
    const int es = bpc == 8 ? 1 : 2;
    const uint32_t m = (1u << (bpc < 16 ? bpc : 15)) - 1;
    Acc acc = acc_new(2 * m * m);
    V s16 = v_zero();
    uint8_t nb[2][NARROW_LEN * 2];
    for (int y = 0; y < h; y++) {
        const void *pa = (const uint8_t *)a + y * a_stride;
        const void *pb = (const uint8_t *)b + y * b_stride;
        if (V_NARROW_COPY && w < VN16) {
            pa = narrow_row(nb[0], pa, 0, w, es);
            pb = narrow_row(nb[1], pb, 0, w, es);
        }
        if (bpc == 8) {
#define STEP(x, k, t) acc_add(&acc, sse8_vec(pa, pb, x, k, t))
            FOR_COLUMNS(w, STEP);
#undef STEP
        } else if (bpc < 16) {
#define STEP(x, k, t) acc_add(&acc, sse15_vec(pa, pb, x, k, t))
            FOR_COLUMNS(w, STEP);
#undef STEP
        } else {
#define STEP(x, k, t) s16 = sse16_vec(s16, pa, pb, x, k, t)
            FOR_COLUMNS(w, STEP);
#undef STEP
        }
    }
    return acc_total(&acc) + (uint64_t)v_hsum64(s16);
}

/* ------------------------------------------------------------------------ */
/* Spatial activity, pictures up to 2048x1152                                */
/* ------------------------------------------------------------------------ */

/* |12 c - 2 cross - diag| of 32-bit lanes */
VI V hp32(V ul, V uc, V ur, V cl, V cc, V cr, V dl, V dc, V dr)
{
    const V cross = v_add32(v_add32(cl, cr), v_add32(uc, dc));
    const V diag = v_add32(v_add32(ul, ur), v_add32(dl, dr));
    const V c12 = v_slli32(v_add32(v_add32(cc, cc), cc), 2);
    return v_abs32(v_sub32(v_sub32(c12, v_add32(cross, cross)), diag));
}

/* Samples below 2^11 (M = 2047): 12 c <= 12 M, 2 cross <= 8 M, diag <= 4 M
 * and every partial result lies in [-12 M, 12 M], inside a 16-bit lane;
 * pmaddwd then adds the |terms| in pairs (below 24 M).  Otherwise the
 * terms in 32-bit lanes (|term| < 24 x 2^15, two a lane per vector). */
VI V hp_vec(const int16_t *up, const int16_t *row, const int16_t *dn, ptrdiff_t x, VKeep16 k,
            int tail, int lanes16)
{
    const V ul = ld16(up + x - 1, k, tail), uc = ld16(up + x, k, tail), ur = ld16(up + x + 1, k, tail);
    const V cl = ld16(row + x - 1, k, tail), cc = ld16(row + x, k, tail), cr = ld16(row + x + 1, k, tail);
    const V dl = ld16(dn + x - 1, k, tail), dc = ld16(dn + x, k, tail), dr = ld16(dn + x + 1, k, tail);
    if (lanes16) {
        const V cross = v_add16(v_add16(cl, cr), v_add16(uc, dc));
        const V diag = v_add16(v_add16(ul, ur), v_add16(dl, dr));
        const V f = v_sub16(v_sub16(v_mullo16(cc, v_set16(12)), v_add16(cross, cross)), diag);
        return v_madd16(v_abs16(f), v_set16(1));
    }
    return v_add32(hp32(v_lo16_i32(ul), v_lo16_i32(uc), v_lo16_i32(ur), v_lo16_i32(cl),
                        v_lo16_i32(cc), v_lo16_i32(cr), v_lo16_i32(dl), v_lo16_i32(dc),
                        v_lo16_i32(dr)),
                   hp32(v_hi16_i32(ul), v_hi16_i32(uc), v_hi16_i32(ur), v_hi16_i32(cl),
                        v_hi16_i32(cc), v_hi16_i32(cr), v_hi16_i32(dl), v_hi16_i32(dc),
                        v_hi16_i32(dr)));
}

VI uint64_t hp_rows(const int16_t *c, ptrdiff_t stride, int w, int h, int lanes16)
{
    Acc acc = acc_new(lanes16 ? 2 * 12 * 2047 : 2 * 24 * 32768);
    uint8_t nb[3][NARROW_LEN * 2];
    for (int y = 0; y < h; y++) {
        const int16_t *row = c + y * stride, *up = row - stride, *dn = row + stride;
        if (V_NARROW_COPY && w < VN16) {
            up = narrow_row(nb[0], up, -1, w + 1, 2);
            row = narrow_row(nb[1], row, -1, w + 1, 2);
            dn = narrow_row(nb[2], dn, -1, w + 1, 2);
        }
#define STEP(x, k, t) acc_add(&acc, hp_vec(up, row, dn, x, k, t, lanes16))
        FOR_COLUMNS(w, STEP);
#undef STEP
    }
    return acc_total(&acc);
}

static uint64_t hp(const int16_t *c, ptrdiff_t stride, int w, int h, int bpc)
{
    return bpc <= 11 ? hp_rows(c, stride, w, h, 1) : hp_rows(c, stride, w, h, 0);
}

/* ------------------------------------------------------------------------ */
/* Temporal activity, pictures up to 2048x1152                               */
/* ------------------------------------------------------------------------ */

/* Samples below 2^14 (M = 16383): c - m1 and (c + m2) - (m1 + m1) lie in
 * [-2 M, 2 M], inside a 16-bit lane; pairs of |terms| below 4 M.
 * Otherwise 32-bit lanes (|term| <= 4 x 2^15, two a lane per vector). */
VI V temp_vec(const int16_t *c, const int16_t *m1, const int16_t *m2, ptrdiff_t x, VKeep16 k,
              int tail, int lanes16, int second)
{
    const V vc = ld16(c + x, k, tail), v1 = ld16(m1 + x, k, tail);
    const V v2 = second ? ld16(m2 + x, k, tail) : v_zero();
    if (lanes16) {
        const V d = second ? v_sub16(v_add16(vc, v2), v_add16(v1, v1)) : v_sub16(vc, v1);
        return v_madd16(v_abs16(d), v_set16(1));
    }
    V lo = v_sub32(v_lo16_i32(vc), v_lo16_i32(v1));
    V hi = v_sub32(v_hi16_i32(vc), v_hi16_i32(v1));
    if (second) {
        lo = v_add32(v_sub32(lo, v_lo16_i32(v1)), v_lo16_i32(v2));
        hi = v_add32(v_sub32(hi, v_hi16_i32(v1)), v_hi16_i32(v2));
    }
    return v_add32(v_abs32(lo), v_abs32(hi));
}

VI uint64_t temp_rows(const int16_t *c, const int16_t *m1, const int16_t *m2, ptrdiff_t stride,
                      int w, int h, int lanes16, int second)
{
    Acc acc = acc_new(lanes16 ? 4 * 16383 : 2 * 4 * 32768);
    uint8_t nb[3][NARROW_LEN * 2];
    for (int y = 0; y < h; y++) {
        const ptrdiff_t o = y * stride;
        const int16_t *pc = c + o, *p1 = m1 + o, *p2 = second ? m2 + o : NULL;
        if (V_NARROW_COPY && w < VN16) {
            pc = narrow_row(nb[0], pc, 0, w, 2);
            p1 = narrow_row(nb[1], p1, 0, w, 2);
            if (second)
                p2 = narrow_row(nb[2], p2, 0, w, 2);
        }
#define STEP(x, k, t) acc_add(&acc, temp_vec(pc, p1, p2, x, k, t, lanes16, second))
        FOR_COLUMNS(w, STEP);
#undef STEP
    }
    return acc_total(&acc);
}

static uint64_t temp(const int16_t *c, const int16_t *m1, const int16_t *m2, ptrdiff_t stride,
                     int w, int h, int bpc)
{
    const int lanes16 = bpc <= 14;
    if (m2)
        return lanes16 ? temp_rows(c, m1, m2, stride, w, h, 1, 1)
                      : temp_rows(c, m1, m2, stride, w, h, 0, 1);
    return lanes16 ? temp_rows(c, m1, NULL, stride, w, h, 1, 0)
                  : temp_rows(c, m1, NULL, stride, w, h, 0, 0);
}

/* ------------------------------------------------------------------------ */
/* 2x2 groups, pictures above 2048x1152                                      */
/* ------------------------------------------------------------------------ */

/* pmaddwd weights: the even column's in the low 16 bits, the odd one's in
 * the high 16 bits */
#define PAIR(even, odd) ((int32_t)(uint16_t)(int16_t)(even) | (int32_t)((uint32_t)(uint16_t)(int16_t)(odd) << 16))

/*
 * The high-pass of a group at columns (x, x + 1), rows (y, y + 1)
 * (qm_xpsnr_hpds()) as weights of the columns x - 2 .. x + 3 of the rows
 * y - 2 .. y + 3, read as three pairs of columns (x - 2, x - 1), (x, x + 1),
 * (x + 2, x + 3): one 32-bit lane (a group) per pair, so one pmaddwd a
 * row and pair.  Rows y and y + 1 weigh (-1, -3) (12, 12) (-3, -1), rows
 * y - 1 and y + 2 (-1, -2) (-3, -3) (-2, -1), rows y - 2 and y + 3
 * (0, -1) (-1, -1) (-1, 0): the centre 12, vert and horz -3, corner -2,
 * outer -1.  |term| < 96 x 2^15 for any int16 samples.
 */
VI V madd3(const int16_t *row, ptrdiff_t x, VKeep16 k, int tail, int32_t w0, int32_t w1,
           int32_t w2)
{
    return v_add32(v_add32(v_madd16(ld16(row + x - 2, k, tail), v_set32(w0)),
                           v_madd16(ld16(row + x, k, tail), v_set32(w1))),
                   v_madd16(ld16(row + x + 2, k, tail), v_set32(w2)));
}

VI V hpds_vec(const int16_t *const r[6], ptrdiff_t x, VKeep16 k, int tail)
{
    const int32_t a0 = PAIR(0, -1), a1 = PAIR(-1, -1), a2 = PAIR(-1, 0);
    const int32_t b0 = PAIR(-1, -2), b1 = PAIR(-3, -3), b2 = PAIR(-2, -1);
    const int32_t c0 = PAIR(-1, -3), c1 = PAIR(12, 12), c2 = PAIR(-3, -1);
    const V outer = v_add32(madd3(r[0], x, k, tail, a0, a1, a2), madd3(r[5], x, k, tail, a0, a1, a2));
    const V ring = v_add32(madd3(r[1], x, k, tail, b0, b1, b2), madd3(r[4], x, k, tail, b0, b1, b2));
    const V centre = v_add32(madd3(r[2], x, k, tail, c0, c1, c2), madd3(r[3], x, k, tail, c0, c1, c2));
    return v_abs32(v_add32(v_add32(outer, ring), centre));
}

static uint64_t hpds(const int16_t *c, ptrdiff_t stride, int n, int rows)
{
    Acc acc = acc_new(96 * 32768);
    uint8_t nb[6][NARROW_LEN * 2];
    const int w = 2 * n;
    for (int j = 0; j < rows; j++) {
        const int16_t *r[6];
        for (int i = 0; i < 6; i++) {
            r[i] = c + (2 * j + i - 2) * stride;
            if (V_NARROW_COPY && w < VN16)
                r[i] = narrow_row(nb[i], r[i], -2, w + 2, 2);
        }
#define STEP(x, k, t) acc_add(&acc, hpds_vec(r, x, k, t))
        FOR_COLUMNS(w, STEP);
#undef STEP
    }
    return acc_total(&acc);
}

/* |S(c) - S(m1)| or |S(c) - 2 S(m1) + S(m2)| of the groups of columns
 * (x, x + 1) of two rows, S from pmaddwd of each row's pair; |term| <=
 * 16 x 2^15 for any int16 samples. */
VI V tempds_vec(const int16_t *const r[6], ptrdiff_t x, VKeep16 k, int tail, int second)
{
    const V one = v_set16(1), w1 = v_set16(second ? -2 : -1);
    V d = v_add32(v_madd16(ld16(r[0] + x, k, tail), one), v_madd16(ld16(r[1] + x, k, tail), one));
    d = v_add32(d, v_add32(v_madd16(ld16(r[2] + x, k, tail), w1), v_madd16(ld16(r[3] + x, k, tail), w1)));
    if (second)
        d = v_add32(d, v_add32(v_madd16(ld16(r[4] + x, k, tail), one),
                               v_madd16(ld16(r[5] + x, k, tail), one)));
    return v_abs32(d);
}

VI uint64_t tempds_rows(const int16_t *const pl[3], ptrdiff_t stride, int n, int rows, int second)
{
    Acc acc = acc_new(16 * 32768);
    uint8_t nb[6][NARROW_LEN * 2];
    const int w = 2 * n;
    for (int j = 0; j < rows; j++) {
        const int16_t *r[6] = { NULL };
        for (int i = 0; i < (second ? 6 : 4); i++) {
            r[i] = pl[i / 2] + (2 * j + i % 2) * stride;
            if (V_NARROW_COPY && w < VN16)
                r[i] = narrow_row(nb[i], r[i], 0, w, 2);
        }
#define STEP(x, k, t) acc_add(&acc, tempds_vec(r, x, k, t, second))
        FOR_COLUMNS(w, STEP);
#undef STEP
    }
    return acc_total(&acc);
}

static uint64_t tempds(const int16_t *c, const int16_t *m1, const int16_t *m2, ptrdiff_t stride,
                       int n, int rows)
{
    const int16_t *const pl[3] = { c, m1, m2 };
    return m2 ? tempds_rows(pl, stride, n, rows, 1) : tempds_rows(pl, stride, n, rows, 0);
}

void XPSNR_DSP_INIT(QmXpsnrDsp *dsp)
{
    dsp->sse = sse;
    dsp->hp = hp;
    dsp->temp = temp;
    dsp->hpds = hpds;
    dsp->tempds = tempds;
}
