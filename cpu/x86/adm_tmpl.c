/* gst-qmetric: the x86 twins of the ADM row kernels of scale 0 (the
 * 16-bit pipeline, 32-bit lanes) and the numerator's thresholds, written
 * once for both vector widths.  An instance file (adm_avx2.c,
 * adm_avx512.c) includes its width header (vec_avx2.h or vec_avx512.h),
 * defines what differs by ISA:
 *
 *   angle_sel()        the scale-0 angle test (float -> double compares:
 *                      vector masks of 64-bit lanes against mask registers)
 *   dwt123_row(), decouple123_row(), num_row64(), den123_row()
 *                      scales 1-3, in 64-bit lanes: AVX2 lacks the 64-bit
 *                      arithmetic shift, minimum and int64 -> float that
 *                      AVX-512 has, and builds them from what it has
 *
 * and the exported name ADM_DSP_INIT, then includes this file.
 *
 * cpu/adm.c is the specification; these compute the same integers bit for
 * bit (tests/checkasm/adm.c).  Scale 0 runs in VN32 32-bit lanes: every
 * band sample there is bounded by QM_ADM_BAND0_MAX, which is why the
 * narrower arithmetic is exact (each stage says how).
 */
#include <math.h>
#include <stdint.h>

#include "adm.h"
#include "x86/adm_x86.h"

/* Two 16-bit taps as the 32-bit multiplier of madd over interleaved
 * (first, second) sample pairs. */
VI V tap_pair(int32_t first, int32_t second)
{
    return v_set32((int32_t)(((uint32_t)second << 16) | (uint16_t)first));
}

/* Low 16 bits, sign-extended: the C code's (int16_t) conversion. */
VI V trunc16(V x)
{
    return v_srai32(v_slli32(x, 16), 16);
}

/* x * sign for a sign mask sm (0 or -1 per lane) */
VI V apply_sign(V x, V sm)
{
    return v_sub32(v_xor(x, sm), sm);
}

/* ------------------------------------------------------------------------ */
/* DWT, scale 0                                                              */
/* ------------------------------------------------------------------------ */

VI V load_centred(const void *row, int bpc, int j, V half)
{
    const V x = bpc == 8 ? v_load_u8((const uint8_t *)row + j, v_cols_all())
                         : v_load_u16((const uint16_t *)row + j, v_cols_all());
    /* 16-bit wrap = the C code's (int16_t) of the difference */
    return v_sub16(x, half);
}

/* One filter of the vertical pass over VN16 columns: (sum + add) >> sh of
 * the four rows.  Each 32-bit sum is exact: |sum| <= 54822 * 2^15; the
 * result fits int16 (|result| <= 27411), so the saturating pack is the C
 * code's (int16_t). */
VI V vpass(V r01l, V r01h, V r23l, V r23h, V c01, V c23, V add, __m128i sh)
{
    const V l = v_sra32(v_add32(v_add32(v_madd16(r01l, c01), v_madd16(r23l, c23)), add), sh);
    const V h = v_sra32(v_add32(v_add32(v_madd16(r01h, c01), v_madd16(r23h, c23)), add), sh);
    return v_packs32(l, h);
}

/* Horizontal pass over VN32 outputs from pairs (x[2j-1], x[2j]) and
 * (x[2j+1], x[2j+2]): (sum + 2^15) >> 16; |sum| <= 54822 * 27411 < 2^31,
 * and the result fits int16, so the C code's (int16_t) changes nothing. */
VI V hpass(V p0, V p1, V c01, V c23)
{
    const V s = v_add32(v_madd16(p0, c01), v_madd16(p1, c23));
    return v_srai32(v_add32(s, v_set32(32768)), 16);
}

static void dwt0_row(const void *const src[4], int bpc, const QmAdmScaleQ *q,
                     int32_t *const band[4], int32_t *restrict tmp)
{
    const int n = q->in_w, w = q->w;
    int16_t *lo = (int16_t *)tmp, *hi = lo + n;
    const int32_t *L = QM_ADM_DB2_LO, *H = QM_ADM_DB2_HI;
    const V l01 = tap_pair(L[0], L[1]), l23 = tap_pair(L[2], L[3]);
    const V h01 = tap_pair(H[0], H[1]), h23 = tap_pair(H[2], H[3]);
    const V vadd = v_set32((int32_t)q->v_add);
    const __m128i vsh = _mm_cvtsi32_si128(q->v_shift);
    const V half = v_set16((int16_t)(1 << (bpc - 1)));
    int j = 0;
    for (; j + VN16 <= n; j += VN16) {
        const V r0 = load_centred(src[0], bpc, j, half);
        const V r1 = load_centred(src[1], bpc, j, half);
        const V r2 = load_centred(src[2], bpc, j, half);
        const V r3 = load_centred(src[3], bpc, j, half);
        const V a = v_unpacklo16(r0, r1), b = v_unpackhi16(r0, r1);
        const V c = v_unpacklo16(r2, r3), d = v_unpackhi16(r2, r3);
        v_storeu(lo + j, vpass(a, b, c, d, l01, l23, vadd, vsh));
        v_storeu(hi + j, vpass(a, b, c, d, h01, h23, vadd, vsh));
    }
    adm_dwt0_vtail(src, bpc, q, j, lo, hi);

    /* interior outputs 1 .. w - 3 read columns 2j - 1 .. 2j + 2 < n */
    const int end = w - 2;
    j = 1;
    for (; j + VN32 <= end; j += VN32) {
        const V p0 = v_loadu(lo + 2 * j - 1), p1 = v_loadu(lo + 2 * j + 1);
        const V q0 = v_loadu(hi + 2 * j - 1), q1 = v_loadu(hi + 2 * j + 1);
        v_storeu(band[0] + j, hpass(p0, p1, l01, l23));
        v_storeu(band[2] + j, hpass(p0, p1, h01, h23));
        v_storeu(band[1] + j, hpass(q0, q1, l01, l23));
        v_storeu(band[3] + j, hpass(q0, q1, h01, h23));
    }
    /* column 0 and the tail, taps mirrored */
    adm_dwt0_hborder(lo, hi, q, j, band);
}

/* ------------------------------------------------------------------------ */
/* DWT, scales 1-3                                                           */
/* ------------------------------------------------------------------------ */

/* One filter over VN64 values in 64-bit lanes (x0..x3 hold the int32
 * inputs in their low halves): 64-bit sums of exact 32x32 -> 64-bit
 * products, (sum + add) >> sh truncated to int32 (the low half of a
 * logical shift by sh <= 32 is that of the arithmetic one). */
VI VH fir4_64(V x0, V x1, V x2, V x3, const int32_t *f, V add, __m128i sh)
{
    V s = v_add64(v_mul_i32(x0, v_set64(f[0])), v_mul_i32(x1, v_set64(f[1])));
    s = v_add64(s, v_add64(v_mul_i32(x2, v_set64(f[2])), v_mul_i32(x3, v_set64(f[3]))));
    return v_low32(v_srl64(v_add64(s, add), sh));
}

static void dwt123_row(const void *const src[4], int bpc, const QmAdmScaleQ *q,
                       int32_t *const band[4], int32_t *restrict tmp)
{
    (void)bpc;
    const int n = q->in_w, w = q->w;
    int32_t *lo = tmp, *hi = tmp + n;
    const int32_t *L = QM_ADM_DB2_LO, *H = QM_ADM_DB2_HI;
    const int32_t *r[4] = { src[0], src[1], src[2], src[3] };
    const V vadd = v_set64(q->v_add), hadd = v_set64(q->h_add);
    const __m128i vsh = _mm_cvtsi32_si128(q->v_shift), hsh = _mm_cvtsi32_si128(q->h_shift);
    int j = 0;
    for (; j + VN64 <= n; j += VN64) {
        V x[4];
        for (int k = 0; k < 4; k++)
            x[k] = v_from_i32(vh_loadu(r[k] + j));
        vh_storeu(lo + j, fir4_64(x[0], x[1], x[2], x[3], L, vadd, vsh));
        vh_storeu(hi + j, fir4_64(x[0], x[1], x[2], x[3], H, vadd, vsh));
    }
    adm_dwt123_vtail(r, q, j, lo, hi);
    /* interior outputs: 64-bit lane e of a load at 2j - 1 holds the pair
     * (x[2j-1+2e], x[2j+2e]); mul_epi32 reads the low half */
    const int end = w - 2;
    j = 1;
    for (; j + VN64 <= end; j += VN64) {
        const V p0 = v_loadu(lo + 2 * j - 1), p2 = v_loadu(lo + 2 * j + 1);
        const V q0 = v_loadu(hi + 2 * j - 1), q2 = v_loadu(hi + 2 * j + 1);
        const V p1 = v_srli64(p0, 32), p3 = v_srli64(p2, 32);
        const V q1 = v_srli64(q0, 32), q3 = v_srli64(q2, 32);
        vh_storeu(band[0] + j, fir4_64(p0, p1, p2, p3, L, hadd, hsh));
        vh_storeu(band[2] + j, fir4_64(p0, p1, p2, p3, H, hadd, hsh));
        vh_storeu(band[1] + j, fir4_64(q0, q1, q2, q3, L, hadd, hsh));
        vh_storeu(band[3] + j, fir4_64(q0, q1, q2, q3, H, hadd, hsh));
    }
    adm_dwt123_hborder(lo, hi, q, j, band);
}

/* ------------------------------------------------------------------------ */
/* Decouple, scale 0                                                         */
/* ------------------------------------------------------------------------ */

/* |y| / 30 and |y| / 15 terms of one orientation's CSF values, added to
 * su and ce (C: mask_row, 16-bit pipeline; all products fit int32). */
VI void mask_terms0(V x, const QmAdmScaleQ *q, int t, V *su, V *ce)
{
    V y = v_mullo32(x, v_set32((int32_t)q->csf_mul[t]));
    y = v_add32(y, v_set32((int32_t)q->csf_add[t]));
    y = v_abs32(trunc16(v_sra32(y, _mm_cvtsi32_si128(q->csf_shift[t]))));
    const V f = v_add32(v_mullo32(y, v_set32((int32_t)q->flt_mul)), v_set32((int32_t)q->flt_add));
    const V c = v_add32(v_mullo32(y, v_set32((int32_t)q->ctr_mul)), v_set32((int32_t)q->ctr_add));
    *su = v_add32(*su, trunc16(v_sra32(f, _mm_cvtsi32_si128(q->flt_shift))));
    *ce = v_add32(*ce, trunc16(v_sra32(c, _mm_cvtsi32_si128(q->ctr_shift))));
}

static void decouple0_row(const int32_t *const ref[3], const int32_t *const dis[3],
                          int x0, int x1, const QmAdmScaleQ *q, double egl,
                          const int32_t *recip, int32_t *const rst[3],
                          int32_t *const add[3], int32_t *const mask_r[2],
                          int32_t *const mask_a[2])
{
    const double cos1sq = adm_cos1sq();
    /* integral egl (1 and 100 in practice): |rs| * egl <= 22931 * 100 fits
     * int32; otherwise the C code's double product, truncated */
    const int egl_int = egl == floor(egl) && egl <= 100.0;
    const V egl_i = v_set32(egl_int ? (int32_t)egl : 0);
    const V zero = v_zero(), k_one = v_set32(32768);
    const V round15 = v_set32(16384);
    for (int j = x0; j < x1; j += VN32) {
        const VLanes lm = v_lanes32(x1 - j);
        V o[3], t[3];
        for (int b = 0; b < 3; b++) {
            o[b] = v_load32(ref[b] + j, lm);
            t[b] = v_load32(dis[b] + j, lm);
        }
        const VSel ang = angle_sel(o[0], o[1], t[0], t[1], cos1sq);
        V rv[3], av[3];
        for (int b = 0; b < 3; b++) {
            const V ob = o[b], tb = t[b];
            const V sm = v_srai32(ob, 31);
            const V to = apply_sign(tb, sm);
            const V ao = v_abs32(ob);
            /* k = (recip[|o|] * to + 2^14) >> 15 clipped to [0, 2^15]:
             * to <= 0 gives k = 0 and to > |o| gives k = 2^15 (recip[m] *
             * (m + 1) >= 2^30 for m <= 2^15), so to clamped to [0, |o|]
             * gives every other k, with recip[m] * m <= 2^30 in int32.
             * o == 0: k = 2^15 (the reference's special case). */
            const V rc = v_gather32(recip, ao);
            const V tc = v_min32(v_max32(to, zero), ao);
            const V kk = v_srai32(v_add32(v_mullo32(rc, tc), round15), 15);
            const VSel oz = v_cmpeq32(ob, zero);
            const V k = v_select32(kk, v_sel_or(v_cmpgt32(to, ao), oz), k_one);
            /* |k * o| <= 2^15 * 22931 */
            const V rs = v_srai32(v_add32(v_mullo32(k, ob), round15), 15);
            V g;
            if (egl_int)
                g = v_mullo32(rs, egl_i);
            else
                g = v_mul_f64_trunc32(rs, egl);
            const V lim = apply_sign(v_min32(apply_sign(g, sm), to), sm);
            const VSel use = v_sel_andnot(oz, v_sel_and(ang, v_cmpgt32(k, zero)));
            rv[b] = v_select32(rs, use, lim);
            av[b] = v_sub32(tb, rv[b]);
            v_store32(rst[b] + j, lm, rv[b]);
            v_store32(add[b] + j, lm, av[b]);
        }
        V su = zero, ce = zero, sa = zero, ca = zero;
        for (int b = 0; b < 3; b++) {
            mask_terms0(rv[b], q, b, &su, &ce);
            mask_terms0(av[b], q, b, &sa, &ca);
        }
        v_store32(mask_r[0] + j, lm, su);
        v_store32(mask_r[1] + j, lm, v_sub32(ce, su));
        v_store32(mask_a[0] + j, lm, sa);
        v_store32(mask_a[1] + j, lm, v_sub32(ca, sa));
    }
}

/* |y| / 30 and |y| / 15 terms of scales 1-3 (C: mask_row_wide): y the
 * int32 CSF value, |y| <= 2^31 as uint32, (fm * |y| + fa) >> sh in int64
 * truncated to int32. */
VI void mask_terms123(VH x, const QmAdmScaleQ *q, int t, VH *su, VH *ce)
{
    const V ay = v_from_u32(vh_abs32(csf32(x, q->csf_mul[t], q->csf_add[t], q->csf_shift[t])));
    const V f = v_add64(v_mul_u32(ay, v_set64(q->flt_mul)), v_set64(q->flt_add));
    const V c = v_add64(v_mul_u32(ay, v_set64(q->ctr_mul)), v_set64(q->ctr_add));
    *su = vh_add32(*su, v_sra64_to32(f, q->flt_shift));
    *ce = vh_add32(*ce, v_sra64_to32(c, q->ctr_shift));
}

/* Scales 1-3, VN64 samples per step in 64-bit lanes (C: decouple_row,
 * wide). */
static void decouple123_row(const int32_t *const ref[3], const int32_t *const dis[3],
                            int x0, int x1, const QmAdmScaleQ *q, double egl,
                            const int32_t *recip, int32_t *const rst[3],
                            int32_t *const add[3], int32_t *const mask_r[2],
                            int32_t *const mask_a[2])
{
    const double cos1sq = adm_cos1sq();
    const V zero = v_zero(), one = v_set64(1), k_one = v_set64(32768);
    for (int j = x0; j < x1; j += VN64) {
        const VLanes64 lm = v_lanes64(x1 - j);
        VH t32[3];
        V o[3], t[3];
        for (int b = 0; b < 3; b++) {
            o[b] = v_from_i32(vh_load32(ref[b] + j, lm));
            t32[b] = vh_load32(dis[b] + j, lm);
            t[b] = v_from_i32(t32[b]);
        }
        /* the C kernel's 64-bit integers (wrapping) */
        const V dot = v_add64(v_mul_i32(o[0], t[0]), v_mul_i32(o[1], t[1]));
        const V oo = v_add64(v_mul_i32(o[0], o[0]), v_mul_i32(o[1], o[1]));
        const V tt = v_add64(v_mul_i32(t[0], t[0]), v_mul_i32(t[1], t[1]));
        const VSel64 ang = angle_sel64(dot, oo, tt, cos1sq);
        VH rv[3], av[3];
        for (int b = 0; b < 3; b++) {
            const V ob = o[b];
            const V sm = v_sign64(ob);
            const V to = v_sub64(v_xor(t[b], sm), sm);
            const V ao = v_sub64(v_xor(ob, sm), sm);
            /* |o| >= 2^15 is rounded to 15 significant bits first: shift
             * by bit length - 15 */
            const VSel64 big = v_cmpgt64(ao, v_set64(32767));
            const V sh = v_in_sel64(big, v_sub64(v_ilog2_64(ao), v_set64(14)));
            const V m = v_srlv64(v_add64(ao, v_srli64(v_sllv64(one, sh), 1)), sh);
            const V rc = v_from_u32(v_gather32_i64(recip, m));
            /* to <= 0 gives k <= 0, clipped to 0; for to > 0 (<= 2^31) the
             * unsigned 32x32 product is the C code's; k < 2^63 */
            V k = v_add64(v_mul_u32(rc, to), v_sllv64(v_set64(1 << 14), sh));
            k = v_srlv64(k, v_add64(sh, v_set64(15)));
            k = v_in_sel64(v_cmpgt64(to, zero), v_min64(k, k_one));
            const VSel64 oz = v_cmpeq64(ob, zero);
            k = v_select64(k, oz, k_one);
            /* rs = (k * o + 2^14) >> 15 fits int32 (|k * o| <= 2^46): the
             * low half of the logical shift */
            const VH rs = v_low32(v_srli64(v_add64(v_mul_i32(k, ob), v_set64(16384)), 15));
            const VH lim = decouple_lim(rs, to, sm, egl);
            const VSel64 use = v_sel64_andnot(oz, v_sel64_and(ang, v_cmpgt64(k, zero)));
            rv[b] = vh_select(rs, use, lim);
            av[b] = vh_sub32(t32[b], rv[b]);
            vh_store32(rst[b] + j, lm, rv[b]);
            vh_store32(add[b] + j, lm, av[b]);
        }
        VH su = vh_zero(), ce = su, sa = su, ca = su;
        for (int b = 0; b < 3; b++) {
            mask_terms123(rv[b], q, b, &su, &ce);
            mask_terms123(av[b], q, b, &sa, &ca);
        }
        vh_store32(mask_r[0] + j, lm, su);
        vh_store32(mask_r[1] + j, lm, vh_sub32(ce, su));
        vh_store32(mask_a[0] + j, lm, sa);
        vh_store32(mask_a[1] + j, lm, vh_sub32(ca, sa));
    }
}

/* ------------------------------------------------------------------------ */
/* Numerator sums                                                            */
/* ------------------------------------------------------------------------ */

/* a + b + c of VN32 int32 lanes at p0[i], p1[i], p2[i] (plus p3[i] where
 * given), whole blocks first, then one block of the lanes left. */
VI void add_rows(int32_t *restrict dst, const int32_t *p0, const int32_t *p1,
                 const int32_t *p2, const int32_t *p3, int n)
{
    int i = 0;
    for (; i + VN32 <= n; i += VN32) {
        V s = v_add32(v_add32(v_loadu(p0 + i), v_loadu(p1 + i)), v_loadu(p2 + i));
        if (p3)
            s = v_add32(s, v_loadu(p3 + i));
        v_storeu(dst + i, s);
    }
    if (i < n) {
        const VLanes l = v_lanes32(n - i);
        V s = v_add32(v_add32(v_load32(p0 + i, l), v_load32(p1 + i, l)), v_load32(p2 + i, l));
        if (p3)
            s = v_add32(s, v_load32(p3 + i, l));
        v_store32(dst + i, l, s);
    }
}

/* Masking thresholds of columns [j0, j0 + n) of a row (C: qm_adm_num_row_c):
 * 3x3 sums of `sum` (taps mirrored) plus ctr; int32 sums wrap like the C
 * code's. */
static void thresholds(const int32_t *const sum[3], const int32_t *ctr, int w, int j0,
                       int n, int32_t *restrict vs, int32_t *restrict thr)
{
    const int c0 = j0 - 1, c1 = j0 + n + 1;
    const int lo = c0 < 0 ? 0 : c0, hi = c1 > w ? w : c1;
    add_rows(vs + lo - c0, sum[0] + lo, sum[1] + lo, sum[2] + lo, NULL, hi - lo);
    adm_thr_edges(sum, w, c0, c1, vs);
    add_rows(thr, vs, vs + 1, vs + 2, ctr + j0, n);
}

/* Scale 0 (C: num_row0): x = src * weight fits int32, m >= 0 as uint32;
 * the square and the cube are unsigned 32x32 -> 64-bit products of the
 * even and odd lanes.  Sets *wrapped when a square reaches 2^31. */
static int64_t num_row0(const int32_t *src, const int32_t *thr, int n,
                        const QmAdmScaleQ *q, int t, int *wrapped)
{
    const V mul = v_set32((int32_t)q->csf_mul[t]);
    const __m128i ts = _mm_cvtsi32_si128(q->thr_shift[t]);
    const __m128i sqs = _mm_cvtsi32_si128(q->sq_shift[t]);
    const __m128i cubs = _mm_cvtsi32_si128(q->cub_shift[t]);
    const V sqa = v_set64(q->sq_add[t]), cuba = v_set64(q->cub_add[t]);
    V acc = v_zero(), over = v_zero();
    for (int j = 0; j < n; j += VN32) {
        const VLanes lm = v_lanes32(n - j);
        const V x = v_mullo32(v_load32(src + j, lm), mul);
        const V th = v_sll32(v_load32(thr + j, lm), ts);
        /* lanes past n: m = 0 adds (0 + sqa) >> sqs = 0, then 0 */
        const V m = v_in_lanes(lm, v_max32(v_sub32(v_abs32(x), th), v_zero()));
        const V mo = v_srli64(m, 32);
        const V se = v_srl64(v_add64(v_mul_u32(m, m), sqa), sqs);
        const V so = v_srl64(v_add64(v_mul_u32(mo, mo), sqa), sqs);
        over = v_or(over, v_or(se, so));
        acc = v_add64(acc, v_srl64(v_add64(v_mul_u32(se, m), cuba), cubs));
        acc = v_add64(acc, v_srl64(v_add64(v_mul_u32(so, mo), cuba), cubs));
    }
    /* bit 31 of any 32-bit square */
    *wrapped = v_any_bits64(over, 0x80000000);
    return v_hsum64(acc);
}

/* The C kernel's general per-sample arithmetic (C: num_row) on VN64 lanes:
 * x the CSF value (int32), m = max(|x| - (thr << ts), 0) in wrapping
 * int32, m2 = (int32)((m^2 + sqa) >> sqs) (mul_epi32 reads the low half,
 * signed), term = (m2 * m + cuba) >> cubs in int64; lanes past n: m = 0
 * adds (0 + sqa) >> sqs = 0, then 0. */
static int64_t num_row64(const int32_t *src, const int32_t *thr, int n,
                         const QmAdmScaleQ *q, int t)
{
    const __m128i ts = _mm_cvtsi32_si128(q->thr_shift[t]);
    const __m128i sqs = _mm_cvtsi32_si128(q->sq_shift[t]), cubs = _mm_cvtsi32_si128(q->cub_shift[t]);
    const V sqa = v_set64(q->sq_add[t]), cuba = v_set64(q->cub_add[t]);
    V acc = v_zero();
    for (int j = 0; j < n; j += VN64) {
        const VLanes64 lm = v_lanes64(n - j);
        const VH x = csf32(vh_load32(src + j, lm), q->csf_mul[t], q->x_add, q->x_shift);
        const VH th = vh_sll32(vh_load32(thr + j, lm), ts);
        const VH m32 = vh_in_lanes(lm, vh_max32(vh_sub32(vh_abs32(x), th), vh_zero()));
        const V m = v_from_u32(m32);
        const V m2 = v_srl64(v_add64(v_mul_u32(m, m), sqa), sqs);
        acc = v_add64(acc, v_sra64(v_add64(v_mul_i32(m2, m), cuba), cubs));
    }
    return v_hsum64(acc);
}

static void num_row(const int32_t *const src[3], const int32_t *const sum[3],
                    const int32_t *ctr, const QmAdmScaleQ *q, int64_t in[3])
{
    adm_num_row_x86(src, sum, ctr, q, in, thresholds, num_row0, num_row64);
}

/* ------------------------------------------------------------------------ */
/* Denominator sums                                                          */
/* ------------------------------------------------------------------------ */

/* Scale 0: plain cubes; u = |x| <= 2^15, u^2 in 32 bits, u^3 in 64 (even and odd
 * lanes). */
static void den0_row(const int32_t *const ref[3], const QmAdmScaleQ *q, uint64_t in[3])
{
    const int x0 = q->roi.x0, x1 = q->roi.x1;
    for (int t = 0; t < 3; t++) {
        V acc = v_zero();
        for (int j = x0; j < x1; j += VN32) {
            const V u = v_abs32(v_load32(ref[t] + j, v_lanes32(x1 - j)));
            const V u2 = v_mullo32(u, u);
            acc = v_add64(acc, v_mul_u32(u2, u));
            acc = v_add64(acc, v_mul_u32(v_srli64(u2, 32), v_srli64(u, 32)));
        }
        in[t] = (uint64_t)v_hsum64(acc);
    }
}

/* Scales 1-3: u = |x| <= 2^31; s = (u^2 + a) >> sh may reach 2^32 + 1,
 * so s * u is a full 64-bit product (mod 2^64, as the C code's uint64). */
static void den123_row(const int32_t *const ref[3], const QmAdmScaleQ *q, uint64_t in[3])
{
    const int x0 = q->roi.x0, x1 = q->roi.x1;
    const V sqa = v_set64((int64_t)q->dsq_add), cuba = v_set64((int64_t)q->dcub_add);
    const __m128i sqs = _mm_cvtsi32_si128(q->dsq_shift), cubs = _mm_cvtsi32_si128(q->dcub_shift);
    for (int t = 0; t < 3; t++) {
        V acc = v_zero();
        for (int j = x0; j < x1; j += VN64) {
            const VLanes64 lm = v_lanes64(x1 - j);
            const V u = v_from_u32(vh_abs32(vh_load32(ref[t] + j, lm)));
            const V s = v_srl64(v_add64(v_mul_u32(u, u), sqa), sqs);
            const V v = v_srl64(v_add64(v_mullo64_u32(s, u), cuba), cubs);
            acc = v_add64(acc, v_in_lanes64(lm, v));
        }
        in[t] = (uint64_t)v_hsum64(acc);
    }
}

void ADM_DSP_INIT(QmAdmDsp *dsp)
{
    dsp->dwt_row[0] = dwt0_row;
    dsp->dwt_row[1] = dwt123_row;
    dsp->decouple_row[0] = decouple0_row;
    dsp->decouple_row[1] = decouple123_row;
    dsp->num_row[0] = num_row;
    dsp->num_row[1] = num_row;
    dsp->den_row[0] = den0_row;
    dsp->den_row[1] = den123_row;
}
