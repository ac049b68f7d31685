/* gst-qmetric: the tile computation of the CUDA twin of integer ADM
 * (cuda/adm.cu), written as __host__ __device__ code so that
 * tests/parity/host_arith can run the very same code on the host, one
 * thread after the other, against the C stage functions of cpu/adm.c.
 *
 * One block owns a tile of kTH x TW band samples of one scale and does, for
 * both pictures, every stage of cpu/adm.h for it:
 *
 *   phase_v   vertical pass of the DWT (QmAdmDwtFn, first half) over the
 *             tile's band rows and the input columns they need, read from
 *             the picture (scale 0) or the previous scale's band a, into
 *             shared memory (lo / hi);
 *   phase_h   horizontal pass (QmAdmDwtFn, second half): bands a, h, v, d
 *             of both pictures per sample, in registers; a is written out
 *             (the next scale's input); then decouple, CSF and masking terms
 *             (QmAdmDecoupleFn) in registers: the 3x3-summed masking planes
 *             go to shared memory, the rest (|CSF value| of every part and
 *             orientation, the centre terms) stays in registers; the
 *             denominator terms (QmAdmDenFn) are summed on the way;
 *   phase_n   numerator terms (QmAdmNumFn): the 3x3 box of the masking
 *             planes from shared memory, cubed and summed.
 *
 * The masking threshold needs the masking planes one sample beyond the
 * tile: the tile is computed with a one-sample halo (recomputed by the
 * neighbouring blocks too).  Halo positions outside the band take the
 * values of the sample the C code reads there: row/column -1 reads 1,
 * row h / column w reads h - 1 / w - 1 (cpu/adm.c qm_adm_num_c).  Since
 * every value at a band position is a function of the input alone, the
 * tile computes a mirrored position from the mirrored band row/column.
 *
 * Sums.  Every sum of the C code is an integer sum, but the numerator and
 * denominator sums are rounded per band row ((row + add) >> shift) before
 * they are added up: each block leaves, per band row of its tile that is
 * summed (q->roi), its 9 integer partial sums (DLM h/v/d, AIM h/v/d,
 * denominator h/v/d) in a table [row][tile column][9]; a final kernel adds
 * the tile columns of each row (exact: integers modulo 2^64, as the C
 * code's int64/uint64 accumulators), rounds the row as the C code does,
 * and adds the rows.  So the sums, hence the features, are bit-identical.
 *
 * Thread layout: thread t owns band row t / 16 of the tile and the columns
 * (t % 16) + 16 k, k < K: the 16 threads of a row are one half-warp, which
 * reduces its row's partial sums with shuffles; consecutive threads read
 * consecutive shared-memory words.
 */
#ifndef QM_ADM_TILE_CUH
#define QM_ADM_TILE_CUH

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "qm_hd.h"

#define restrict __restrict__
extern "C" {
#include "adm.h"
}
#undef restrict

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define ADM_HD __host__ __device__ __forceinline__

namespace adm {

constexpr int kTH = 16;                 /* band rows per tile */
constexpr int kLanes = 16;              /* threads per tile row */
constexpr int kThreads = kTH * kLanes;  /* 256 */
constexpr int kSums = 9;                /* DLM h v d, AIM h v d, den h v d */

/* Tile geometry.  Scale 0 keeps its DWT rows in int16 (the C code's and
 * the reference's), scales 1-3 in int32.  K: columns per thread.
 * CWP / PCP: padded row lengths of the shared arrays (a half-warp reads 16
 * consecutive words of one row, the other half-warp the next row: rows
 * offset by 16 words modulo 32, or an odd number of words for int32 rows
 * read with a stride of 2 words, fall in the other banks). */
template <bool S0> struct GeoBase;
template <> struct GeoBase<true> {
    static constexpr int K = 4;
    typedef int16_t V;
    static constexpr int CWP = 160;
    static constexpr int PCP = 80;
};
template <> struct GeoBase<false> {
    static constexpr int K = 2;
    typedef int32_t V;
    static constexpr int CWP = 71;
    static constexpr int PCP = 48;
};

template <bool S0> struct Geo : GeoBase<S0> {
    using GeoBase<S0>::K;
    using GeoBase<S0>::CWP;
    using GeoBase<S0>::PCP;
    static constexpr int TW = kLanes * K;      /* band columns per tile */
    static constexpr int PR = kTH + 2;         /* band rows with the halo */
    static constexpr int PC = TW + 2;          /* band columns with the halo */
    /* input columns of the DWT for band columns -1 .. TW (taps 2q-1 ..
     * 2q+2, q relative to the tile) */
    static constexpr int CW = 2 * TW + 6;
    static constexpr int NHALO = 2 * PC + 2 * kTH;
    static_assert(CW <= CWP && PC <= PCP, "padded rows hold the rows");
};

/* Shared memory of a block: the vertical pass of both pictures (lo: low
 * pass, hi: high pass; [picture][tile row][input column]) and the 3x3
 * masking planes (su[0]: of the additive part, masking the DLM numerator;
 * su[1]: of the restored part, masking the AIM numerator). */
template <bool S0> struct Tile {
    typename Geo<S0>::V lo[2][Geo<S0>::PR][Geo<S0>::CWP];
    typename Geo<S0>::V hi[2][Geo<S0>::PR][Geo<S0>::CWP];
    int32_t su[2][Geo<S0>::PR][Geo<S0>::PCP];
};

/* What a thread keeps of each of its samples between phase_h and phase_n:
 * |x| of the CSF-weighted numerator source per part (0: restored, for the
 * DLM; 1: additive, for the AIM) and orientation, and the centre masking
 * term of the part that masks it (0: additive's, 1: restored's). */
template <bool S0> struct Regs {
    uint32_t ax[Geo<S0>::K][2][3];
    int32_t ce[Geo<S0>::K][2];
};

/* Per-thread partial sums of its tile row (64-bit two's complement: the
 * C code's int64 numerator and uint64 denominator sums alike). */
struct Sums {
    unsigned long long v[kSums];
};

/* Everything a scale's kernel needs (passed by value). */
struct ScaleArgs {
    QmAdmScaleQ q;
    /* input: scale 0 the luma plane (uint8_t or uint16_t samples, `step`
     * apart, MSB-aligned by `shift`), scales 1-3 the previous scale's band
     * a of each picture (int32, step 1, shift 0) */
    const void *in[2];
    ptrdiff_t in_stride[2]; /* bytes */
    int in_step[2], in_shift[2];
    int half;               /* scale 0: 2^(bpc - 1), the centring offset */
    /* output: band a of both pictures (the next scale's input) */
    int32_t *a_out[2];
    ptrdiff_t a_stride;     /* bytes */
    /* output: partial sums [band row][tile column][kSums] */
    unsigned long long *part;
    int ntx;                /* tile columns */
    /* masking planes are needed over roi +- 1: rows [y0, y1), columns
     * [x0, x1), unmirrored band coordinates (may be -1 or h / w) */
    QmAdmRect need;
    /* decouple (cpu/adm.c decouple_rows): the enhancement gain limit, as
     * an exact integer where it is one (else 0), and cos^2(1 degree) */
    double egl, cos1sq;
    long long egl_int;
};

/* Per-scale parameters of the final kernel (in device memory). */
struct FinalScale {
    const unsigned long long *part;
    int ntx, y0, y1, active;
    long long row_add;
    unsigned long long drow_add;
    int row_shift, drow_shift;
};

/* ---- helpers ---- */

template <typename T> ADM_HD T ldg(const T *p)
{
#ifdef __CUDA_ARCH__
    return __ldg(p);
#else
    return *p;
#endif
}

/* |x| as the C code's (uint32_t)abs(x): 2^31 for INT32_MIN. */
ADM_HD uint32_t uabs(int32_t x)
{
    return x < 0 ? 0u - (uint32_t)x : (uint32_t)x;
}

/* cpu/adm.c dwt_mirror(), clamped into [0, n) for the input columns and
 * rows a tile reads only for outputs it discards. */
ADM_HD int dwt_mirror(int i, int n)
{
    i = i < 0 ? -i : (i >= n ? 2 * n - 1 - i : i);
    return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

/* The masking threshold's taps (cpu/adm.c qm_adm_num_c): -1 reads 1, n and
 * beyond read n - 1 (beyond n: tile positions past the band, unused). */
ADM_HD int band_mirror(int p, int n)
{
    return p < 0 ? 1 : (p >= n ? n - 1 : p);
}

/* Sample (x, y) of an input plane. */
template <typename T>
ADM_HD int load_in(const ScaleArgs &a, int pic, int x, int y)
{
    const T *row = (const T *)((const char *)a.in[pic] + (ptrdiff_t)y * a.in_stride[pic]);
    return (int)(ldg(row + (ptrdiff_t)x * a.in_step[pic]) >> a.in_shift[pic]);
}

/* ---- per-sample arithmetic (cpu/adm.c, operation for operation) ---- */

/* Daubechies-2 analysis filters in Q15 (cpu/adm.c DB2_LO / DB2_HI). */
#define ADM_LO(T, s0, s1, s2, s3) \
    ((T)15826 * (s0) + (T)27411 * (s1) + (T)7345 * (s2) + (T)(-4240) * (s3))
#define ADM_HI(T, s0, s1, s2, s3) \
    ((T)(-4240) * (s0) + (T)(-7345) * (s1) + (T)27411 * (s2) + (T)(-15826) * (s3))

/* 2^30 / m (cpu/adm.c qm_adm_recip_table; entry 0 is 0). */
ADM_HD int32_t recip(uint32_t m)
{
    return m ? (int32_t)((1u << 30) / m) : 0;
}

/* Is the angle between (oh, ov) and (th, tv) below 1 degree?  (cpu/adm.c
 * decouple_rows: 64-bit products rounded to float, compared in double.) */
ADM_HD bool angle_kept(int32_t oh, int32_t ov, int32_t th, int32_t tv, double cos1sq)
{
    const long long a = oh, b = ov, c = th, d = tv;
    const double dot = (float)(a * c + b * d);
    const double oo = (float)(a * a + b * b);
    const double tt = (float)(c * c + d * d);
    return (dot >= 0.0) & (dot * dot >= cos1sq * oo * tt);
}

/* The restored part of one orientation (cpu/adm.c decouple_gain and the
 * decouple loop).  WIDE: scales 1-3, where |o| may exceed 2^15. */
template <bool WIDE>
ADM_HD int32_t restore(int32_t ob, int32_t tb, bool angle, long long egl_int, double egl)
{
    if (!WIDE) {
        /* Scale 0: the bands are int16, so |t| <= 2^15, k t < 2^46 and
         * |k o| <= 2^30: the same values in 32-bit variables (and one
         * 32 x 32 -> 64-bit product) */
        const int32_t sm = ob >> 31;
        const int32_t to = (tb ^ sm) - sm;
        const uint32_t m = (uint32_t)((ob ^ sm) - sm);
        int32_t k = (int32_t)(((long long)recip(m) * to + (1 << 14)) >> 15);
        k = k < 0 ? 0 : (k > 32768 ? 32768 : k);
        k = ob == 0 ? 32768 : k;
        const int32_t rs = (k * ob + 16384) >> 15;
        const long long g = egl_int ? rs * egl_int : (long long)(rs * egl);
        const long long go = (g ^ sm) - sm;
        const long long lim = ((go < to ? go : to) ^ sm) - sm;
        const bool use = angle & (k > 0) & (ob != 0);
        return use ? (int32_t)lim : rs;
    }
    const long long sm = ob >> 31; /* 0 or -1 */
    const long long to = ((long long)tb ^ sm) - sm;
    uint32_t m = (uint32_t)((((long long)ob) ^ sm) - sm);
    /* |o| >= 2^15 is rounded to 15 significant bits first */
    const int s = 17 - qm_hd_clz32(m | 1);
    const int sh = m >= 32768 ? s : 0;
    m = (m + ((1u << sh) >> 1)) >> sh;
    long long k = ((long long)recip(m) * to + (1LL << (14 + sh))) >> (15 + sh);
    k = k < 0 ? 0 : (k > 32768 ? 32768 : k);
    k = ob == 0 ? 32768 : k;
    const int32_t rs = (int32_t)((k * ob + 16384) >> 15);
    const long long g = egl_int ? rs * egl_int : (long long)(rs * egl);
    const long long go = (g ^ sm) - sm;
    const long long lim = ((go < to ? go : to) ^ sm) - sm;
    const bool use = angle & (k > 0) & (ob != 0);
    return use ? (int32_t)lim : rs;
}

/* Masking terms of one part (cpu/adm.c mask_chunk / mask_row): su = sum_t
 * |y_t| / 30, ce = sum_t |y_t| / 15 - su, y_t the CSF-weighted samples. */
template <bool S0>
ADM_HD void mask_terms(const QmAdmScaleQ &q, const int32_t x[3], int32_t &su, int32_t &ce)
{
    uint32_t fs = 0, cs = 0; /* int32 sums, modulo 2^32 */
#pragma unroll
    for (int t = 0; t < 3; t++) {
        if (S0) {
            /* int32 arithmetic, truncations to int16 */
            const int32_t mul = (int32_t)q.csf_mul[t], add = (int32_t)q.csf_add[t];
            const int32_t y = (int16_t)((int32_t)((uint32_t)mul * (uint32_t)x[t] + (uint32_t)add) >> q.csf_shift[t]);
            const int32_t ay = y < 0 ? -y : y;
            fs += (uint32_t)(int32_t)(int16_t)(((int32_t)q.flt_mul * ay + (int32_t)q.flt_add) >> q.flt_shift);
            cs += (uint32_t)(int32_t)(int16_t)(((int32_t)q.ctr_mul * ay + (int32_t)q.ctr_add) >> q.ctr_shift);
        } else {
            const int32_t y = (int32_t)((q.csf_mul[t] * x[t] + q.csf_add[t]) >> q.csf_shift[t]);
            const long long ay = y < 0 ? -(long long)y : y;
            fs += (uint32_t)(int32_t)((q.flt_mul * ay + q.flt_add) >> q.flt_shift);
            cs += (uint32_t)(int32_t)((q.ctr_mul * ay + q.ctr_add) >> q.ctr_shift);
        }
    }
    su = (int32_t)fs;
    ce = (int32_t)(cs - fs);
}

/* |x| of the numerator's CSF-weighted source (cpu/adm.c num_row: x =
 * (csf_mul * src + x_add) >> x_shift as int32; at scale 0 x_add = 0 and
 * x_shift = 0, i.e. the low 32 bits of the product). */
template <bool S0>
ADM_HD uint32_t num_abs(const QmAdmScaleQ &q, int t, int32_t src)
{
    if (S0)
        return uabs((int32_t)((uint32_t)(int32_t)q.csf_mul[t] * (uint32_t)src));
    return uabs((int32_t)((q.csf_mul[t] * src + q.x_add) >> q.x_shift));
}

/* One numerator term (cpu/adm.c num_row, wrapping int32 arithmetic). */
ADM_HD long long num_term(const QmAdmScaleQ &q, int t, uint32_t ax, int32_t thr)
{
    int32_t m = (int32_t)(ax - ((uint32_t)thr << q.thr_shift[t]));
    m = m < 0 ? 0 : m;
    const int32_t m2 = (int32_t)(((long long)m * m + q.sq_add[t]) >> q.sq_shift[t]);
    return ((long long)m2 * m + q.cub_add[t]) >> q.cub_shift[t];
}

/* One denominator term (cpu/adm.c qm_adm_den_c). */
template <bool S0>
ADM_HD unsigned long long den_term(const QmAdmScaleQ &q, int32_t s)
{
    if (S0) {
        const uint32_t u = uabs(s);
        return (unsigned long long)(u * u) * u;
    }
    const unsigned long long u = uabs(s);
    return (((u * u + q.dsq_add) >> q.dsq_shift) * u + q.dcub_add) >> q.dcub_shift;
}

/* ---- the phases of a tile ---- */

/* Vertical pass of the DWT: tile row tr (band row i0 - 1 + tr, mirrored)
 * at input columns 2 j0 - 3 + c, c < CW, for both pictures.  T: the input
 * sample type (uint8_t / uint16_t at scale 0, int32_t after). */
template <typename T, bool S0>
ADM_HD void phase_v(const ScaleArgs &a, int bx, int by, int tid, Tile<S0> &sm)
{
    using G = Geo<S0>;
    const QmAdmScaleQ &q = a.q;
    const int i0 = by * kTH, j0 = bx * G::TW;
    for (int it = tid; it < G::PR * G::CW; it += kThreads) {
        const int tr = it / G::CW, c = it - tr * G::CW;
        const int p = band_mirror(i0 - 1 + tr, q.h);
        const int x = dwt_mirror(2 * j0 - 3 + c, q.in_w);
        int y[4];
#pragma unroll
        for (int k = 0; k < 4; k++)
            y[k] = dwt_mirror(2 * p - 1 + k, q.in_h);
#pragma unroll
        for (int pic = 0; pic < 2; pic++) {
            if (S0) {
                /* cpu/adm.c dwt0_centre / dwt0_vertical */
                int32_t s[4];
#pragma unroll
                for (int k = 0; k < 4; k++)
                    s[k] = (int16_t)(load_in<T>(a, pic, x, y[k]) - a.half);
                const int32_t add = (int32_t)q.v_add;
                const int32_t l = ADM_LO(int32_t, s[0], s[1], s[2], s[3]);
                const int32_t h = ADM_HI(int32_t, s[0], s[1], s[2], s[3]);
                sm.lo[pic][tr][c] = (typename G::V)((l + add) >> q.v_shift);
                sm.hi[pic][tr][c] = (typename G::V)((h + add) >> q.v_shift);
            } else {
                /* cpu/adm.c dwt_vertical: int64 sums */
                long long s[4];
#pragma unroll
                for (int k = 0; k < 4; k++)
                    s[k] = load_in<T>(a, pic, x, y[k]);
                const long long l = ADM_LO(long long, s[0], s[1], s[2], s[3]);
                const long long h = ADM_HI(long long, s[0], s[1], s[2], s[3]);
                sm.lo[pic][tr][c] = (int32_t)((l + q.v_add) >> q.v_shift);
                sm.hi[pic][tr][c] = (int32_t)((h + q.v_add) >> q.v_shift);
            }
        }
    }
}

/* Horizontal pass at tile row tr, input columns base .. base + 3 (band
 * column q: base = 2 (q - j0) + 2): b[0..3] = a, h, v, d (cpu/adm.c
 * DWT0_POINT / DWT_POINT).  A: a only. */
template <bool S0, bool A_ONLY>
ADM_HD void hpass(const QmAdmScaleQ &q, const Tile<S0> &sm, int pic, int tr, int base,
                  int32_t b[4])
{
    const typename Geo<S0>::V *lo = &sm.lo[pic][tr][base], *hi = &sm.hi[pic][tr][base];
    if (S0) {
        const int32_t l0 = lo[0], l1 = lo[1], l2 = lo[2], l3 = lo[3];
        b[0] = (int16_t)((ADM_LO(int32_t, l0, l1, l2, l3) + 32768) >> 16);
        if (A_ONLY)
            return;
        const int32_t h0 = hi[0], h1 = hi[1], h2 = hi[2], h3 = hi[3];
        b[2] = (int16_t)((ADM_HI(int32_t, l0, l1, l2, l3) + 32768) >> 16);
        b[1] = (int16_t)((ADM_LO(int32_t, h0, h1, h2, h3) + 32768) >> 16);
        b[3] = (int16_t)((ADM_HI(int32_t, h0, h1, h2, h3) + 32768) >> 16);
    } else {
        const long long add = q.h_add;
        const int sh = q.h_shift;
        const long long l0 = lo[0], l1 = lo[1], l2 = lo[2], l3 = lo[3];
        b[0] = (int32_t)((ADM_LO(long long, l0, l1, l2, l3) + add) >> sh);
        if (A_ONLY)
            return;
        const long long h0 = hi[0], h1 = hi[1], h2 = hi[2], h3 = hi[3];
        b[2] = (int32_t)((ADM_HI(long long, l0, l1, l2, l3) + add) >> sh);
        b[1] = (int32_t)((ADM_LO(long long, h0, h1, h2, h3) + add) >> sh);
        b[3] = (int32_t)((ADM_HI(long long, h0, h1, h2, h3) + add) >> sh);
    }
}

/* Decouple and masking terms of one band position from the detail bands
 * o (reference) and d (distorted), h v d: the restored and additive parts
 * and the masking planes of both (cpu/adm.c decouple_rows, mask_chunk). */
template <bool S0>
ADM_HD void decouple(const ScaleArgs &a, const int32_t o[3], const int32_t d[3],
                     int32_t rst[3], int32_t add[3], int32_t &su_r, int32_t &ce_r,
                     int32_t &su_a, int32_t &ce_a)
{
    const bool angle = angle_kept(o[0], o[1], d[0], d[1], a.cos1sq);
#pragma unroll
    for (int t = 0; t < 3; t++) {
        rst[t] = restore<!S0>(o[t], d[t], angle, a.egl_int, a.egl);
        add[t] = (int32_t)((uint32_t)d[t] - (uint32_t)rst[t]);
    }
    mask_terms<S0>(a.q, rst, su_r, ce_r);
    mask_terms<S0>(a.q, add, su_a, ce_a);
}

ADM_HD bool in_rect(const QmAdmRect &r, int p, int q)
{
    return p >= r.y0 && p < r.y1 && q >= r.x0 && q < r.x1;
}

/* Horizontal pass, band a out, decouple, masking planes, denominator. */
template <bool S0, bool STATS, bool WRITE_A>
ADM_HD void phase_h(const ScaleArgs &a, int bx, int by, int tid, Tile<S0> &sm, Regs<S0> &r,
                    Sums &s)
{
    using G = Geo<S0>;
    const QmAdmScaleQ &q = a.q;
    const int i0 = by * kTH, j0 = bx * G::TW;
    const int tr = 1 + tid / kLanes, lane = tid % kLanes;
    const int p = i0 + tid / kLanes;
#pragma unroll
    for (int k = 0; k < G::K; k++) {
        const int tc = 1 + lane + kLanes * k, qc = j0 + lane + kLanes * k;
#pragma unroll
        for (int j = 0; j < 2; j++) {
            r.ce[k][j] = 0;
#pragma unroll
            for (int t = 0; t < 3; t++)
                r.ax[k][j][t] = 0;
        }
        /* a position past the band's end (row h, column w) can still be
         * in the masking planes' reach: computed at the mirrored position
         * (the tile row of p is mirrored by phase_v already) */
        const bool valid = p < q.h && qc < q.w;
        const bool need = STATS && in_rect(a.need, p, qc);
        const int base = 2 * (band_mirror(qc, q.w) - j0) + 2; /* 2 tc when valid */
        if (WRITE_A && valid && !need) {
            int32_t b[4];
#pragma unroll
            for (int pic = 0; pic < 2; pic++) {
                hpass<S0, true>(q, sm, pic, tr, base, b);
                int32_t *row = (int32_t *)((char *)a.a_out[pic] + (ptrdiff_t)p * a.a_stride);
                row[qc] = b[0];
            }
        }
        if (!STATS)
            continue;
        int32_t su_r = 0, su_a = 0;
        if (need) {
            int32_t br[4], bd[4];
            hpass<S0, false>(q, sm, 0, tr, base, br);
            hpass<S0, false>(q, sm, 1, tr, base, bd);
            if (WRITE_A && valid) {
                int32_t *ra = (int32_t *)((char *)a.a_out[0] + (ptrdiff_t)p * a.a_stride);
                int32_t *da = (int32_t *)((char *)a.a_out[1] + (ptrdiff_t)p * a.a_stride);
                ra[qc] = br[0];
                da[qc] = bd[0];
            }
            const int32_t o[3] = { br[1], br[2], br[3] }, d[3] = { bd[1], bd[2], bd[3] };
            int32_t rst[3], add[3], ce_r, ce_a;
            decouple<S0>(a, o, d, rst, add, su_r, ce_r, su_a, ce_a);
            if (in_rect(q.roi, p, qc)) {
                r.ce[k][0] = ce_a;
                r.ce[k][1] = ce_r;
#pragma unroll
                for (int t = 0; t < 3; t++) {
                    r.ax[k][0][t] = num_abs<S0>(q, t, rst[t]);
                    r.ax[k][1][t] = num_abs<S0>(q, t, add[t]);
                    s.v[6 + t] += den_term<S0>(q, o[t]);
                }
            }
        }
        sm.su[0][tr][tc] = su_a;
        sm.su[1][tr][tc] = su_r;
    }
    /* the halo: masking planes only */
    for (int i = tid; STATS && i < G::NHALO; i += kThreads) {
        int htr, htc;
        if (i < G::PC) {
            htr = 0;
            htc = i;
        } else if (i < 2 * G::PC) {
            htr = kTH + 1;
            htc = i - G::PC;
        } else {
            const int j = i - 2 * G::PC;
            htr = 1 + j / 2;
            htc = j & 1 ? G::TW + 1 : 0;
        }
        const int hp = i0 - 1 + htr, hq = j0 - 1 + htc;
        int32_t su_r = 0, su_a = 0;
        if (in_rect(a.need, hp, hq)) {
            /* the vertical pass of tile row htr is that of the mirrored band
             * row already; the column is mirrored here */
            const int base = 2 * (band_mirror(hq, q.w) - j0) + 2;
            int32_t br[4], bd[4];
            hpass<S0, false>(q, sm, 0, htr, base, br);
            hpass<S0, false>(q, sm, 1, htr, base, bd);
            const int32_t o[3] = { br[1], br[2], br[3] }, d[3] = { bd[1], bd[2], bd[3] };
            int32_t rst[3], add[3], ce_r, ce_a;
            decouple<S0>(a, o, d, rst, add, su_r, ce_r, su_a, ce_a);
        }
        sm.su[0][htr][htc] = su_a;
        sm.su[1][htr][htc] = su_r;
    }
}

/* Numerator terms of the thread's samples in q->roi. */
template <bool S0>
ADM_HD void phase_n(const ScaleArgs &a, int bx, int by, int tid, const Tile<S0> &sm,
                    const Regs<S0> &r, Sums &s)
{
    using G = Geo<S0>;
    const QmAdmScaleQ &q = a.q;
    const int i0 = by * kTH, j0 = bx * G::TW;
    const int tr = 1 + tid / kLanes, lane = tid % kLanes;
    const int p = i0 + tid / kLanes;
#pragma unroll
    for (int k = 0; k < G::K; k++) {
        const int tc = 1 + lane + kLanes * k, qc = j0 + lane + kLanes * k;
        if (!in_rect(q.roi, p, qc))
            continue;
#pragma unroll
        for (int j = 0; j < 2; j++) {
            /* int32 sums, modulo 2^32 as the C code's */
            uint32_t thr = (uint32_t)r.ce[k][j];
#pragma unroll
            for (int dr = -1; dr <= 1; dr++)
#pragma unroll
                for (int dc = -1; dc <= 1; dc++)
                    thr += (uint32_t)sm.su[j][tr + dr][tc + dc];
#pragma unroll
            for (int t = 0; t < 3; t++)
                s.v[3 * j + t] += (unsigned long long)num_term(q, t, r.ax[k][j][t], (int32_t)thr);
        }
    }
}

/* The partial sums of one tile row (the sum over its kLanes threads). */
ADM_HD void write_partials(const ScaleArgs &a, int bx, int by, int tid, const Sums &s)
{
    const int p = by * kTH + tid / kLanes;
    if (p < a.q.roi.y0 || p >= a.q.roi.y1)
        return;
    unsigned long long *o = a.part + ((size_t)p * a.ntx + bx) * kSums;
#pragma unroll
    for (int i = 0; i < kSums; i++)
        o[i] = s.v[i];
}

/* One band row of the final sums: its tile columns added, rounded as the
 * C code rounds a row (qm_adm_num_c, qm_adm_den_c), added to acc. */
ADM_HD void final_row(const FinalScale &f, int row, unsigned long long acc[kSums])
{
    const unsigned long long *p = f.part + (size_t)row * f.ntx * kSums;
    unsigned long long v[kSums];
#pragma unroll
    for (int i = 0; i < kSums; i++)
        v[i] = 0;
    for (int x = 0; x < f.ntx; x++)
#pragma unroll
        for (int i = 0; i < kSums; i++)
            v[i] += ldg(p + (size_t)x * kSums + i);
#pragma unroll
    for (int i = 0; i < 6; i++)
        acc[i] += (unsigned long long)((long long)(v[i] + (unsigned long long)f.row_add) >> f.row_shift);
#pragma unroll
    for (int i = 6; i < kSums; i++)
        acc[i] += (v[i] + f.drow_add) >> f.drow_shift;
}

/* ---- host side ---- */

/* Tiles of scale k: *ntx columns, *nty rows. */
static inline void tiles(const QmAdmScaleQ *q, int *ntx, int *nty)
{
    const int tw = q->scale == 0 ? Geo<true>::TW : Geo<false>::TW;
    *ntx = (q->w + tw - 1) / tw;
    *nty = (q->h + kTH - 1) / kTH;
}

/* The arguments of scale q->scale's kernel.  in*: the luma plane of both
 * pictures at scale 0 (else the previous scale's bands a: step 1, shift
 * 0); a_out: band a of both pictures (NULL at the last scale); part: the
 * scale's partial sums. */
static inline ScaleArgs scale_args(const QmAdmScaleQ *q, int bpc, double egl,
                                   const void *const in[2], const ptrdiff_t in_stride[2],
                                   const int in_step[2], const int in_shift[2],
                                   int32_t *const a_out[2], ptrdiff_t a_stride,
                                   unsigned long long *part)
{
    ScaleArgs a;
    memset(&a, 0, sizeof(a));
    a.q = *q;
    for (int p = 0; p < 2; p++) {
        a.in[p] = in[p];
        a.in_stride[p] = in_stride[p];
        a.in_step[p] = in_step[p] ? in_step[p] : 1;
        a.in_shift[p] = in_shift[p];
        a.a_out[p] = a_out ? a_out[p] : NULL;
    }
    a.half = 1 << (bpc - 1);
    a.a_stride = a_stride;
    a.part = part;
    int nty;
    tiles(q, &a.ntx, &nty);
    /* the masking planes are read over roi +- 1 */
    a.need.x0 = q->roi.x0 - 1;
    a.need.y0 = q->roi.y0 - 1;
    a.need.x1 = q->roi.x1 + 1;
    a.need.y1 = q->roi.y1 + 1;
    /* decouple (cpu/adm.c decouple_rows): egl as an exact integer where it
     * is one, cos^2(1 degree) in float */
    a.egl = egl;
    a.egl_int = egl == floor(egl) && egl <= (1 << 20) ? (long long)egl : 0;
    a.cos1sq = (float)(cos(1.0 * M_PI / 180.0) * cos(1.0 * M_PI / 180.0));
    return a;
}

static inline FinalScale final_scale(const QmAdmScaleQ *q, const unsigned long long *part,
                                     int ntx, int active)
{
    FinalScale f;
    f.part = part;
    f.ntx = ntx;
    f.y0 = q->roi.y0;
    f.y1 = q->roi.y1;
    f.active = active;
    f.row_add = q->row_add;
    f.drow_add = q->drow_add;
    f.row_shift = q->row_shift;
    f.drow_shift = q->drow_shift;
    return f;
}

/* Features from the sums of every scale (res[scale][kSums]), with the C
 * code's host functions (cpu/adm.c adm_compute). */
static inline void features(const QmAdmScaleQ q[QM_ADM_SCALES],
                            const unsigned long long *res, int skip_scale0,
                            double noise_weight, double dlm_weight, double min_val,
                            int w, int h, double out[QM_ADM_NFEATURES])
{
    float num[QM_ADM_SCALES], aim[QM_ADM_SCALES], den[QM_ADM_SCALES];
    for (int k = 0; k < QM_ADM_SCALES; k++) {
        const unsigned long long *v = res + k * kSums;
        if (k == 0 && skip_scale0) {
            num[0] = aim[0] = 0.0f;
            den[0] = 1e-10f;
            continue;
        }
        const int64_t dlm[3] = { (int64_t)v[0], (int64_t)v[1], (int64_t)v[2] };
        const int64_t am[3] = { (int64_t)v[3], (int64_t)v[4], (int64_t)v[5] };
        const uint64_t dn[3] = { v[6], v[7], v[8] };
        den[k] = qm_adm_den_scale(&q[k], dn, noise_weight);
        num[k] = qm_adm_num_scale(&q[k], dlm, noise_weight);
        aim[k] = qm_adm_num_scale(&q[k], am, 0.0);
    }
    qm_adm_scores(num, aim, den, w, h, dlm_weight, min_val, out);
}

} /* namespace adm */

#endif /* QM_ADM_TILE_CUH */
