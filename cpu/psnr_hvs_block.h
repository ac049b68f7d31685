/* gst-qmetric: the per-block arithmetic of PSNR-HVS (stage 1 of psnr_hvs.h),
 * written once for cpu/psnr_hvs.c and its twin cuda/psnr_hvs.cu (see
 * qm_hd.h), following libvmaf's calc_psnrhvs() (third_party/xiph/
 * psnr_hvs.c, libvmaf 3.2.0) operation by operation.
 *
 * Layout: n blocks side by side ("lanes"); value k of block b (k in raster
 * order: sample i * 8 + j before the DCT, coefficient v * 8 + u after it) is
 * at v[k * st + b].  The C code keeps QM_HVS_CHUNK blocks coefficient-major
 * (st = QM_HVS_CHUNK, n <= QM_HVS_CHUNK), so that the loops over b
 * vectorise, each lane performing the reference's scalar sequence; a CUDA
 * thread keeps its one block in registers (st = 1, n = 1).
 *
 * Exactness: the reference works in single precision; every float operation
 * below happens in its order and precision (no contraction: -ffp-contract=off,
 * nvcc --fmad=false), so both backends give the same bits
 * (tests/parity/host_arith, tests/parity/parity).
 */
#ifndef QM_PSNR_HVS_BLOCK_H
#define QM_PSNR_HVS_BLOCK_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "qm_hd.h"
#include "psnr_hvs.h"

/* The unbiased variance factors n / (n - 1) for the 64 samples of a block and
 * the 16 of a quadrant, formed in float as the reference's 1 / 63.f * 64 and
 * 1 / 15.f * 16 are.  (The CUDA twin forms them on the host and passes them
 * to its kernels.) */
QM_HD float qm_hvs_var64(void)
{
    return 1.0f / 63.0f * 64.0f;
}

QM_HD float qm_hvs_var16(void)
{
    return 1.0f / 15.0f * 16.0f;
}

/* Daala's integer rounding helpers (libvmaf psnr_hvs.c, OD_DCT_RSHIFT and the
 * "(x * c + round) >> shift" products of od_bin_fdct8): halving rounds toward
 * zero, the lifting products round half up.  Right shifts of negative values
 * are arithmetic (GCC/Clang, nvcc). */
QM_HD int32_t qm_hvs_half(int32_t a)
{
    return ((int32_t)((uint32_t)a >> 31) + a) >> 1;
}

QM_HD int32_t qm_hvs_mul(int32_t a, int32_t c, int shift)
{
    return (a * c + (1 << (shift - 1))) >> shift;
}

/* One 8-point forward DCT (Daala od_bin_fdct8: butterflies, then lifting
 * rotations with 13-15 bit constants) on n lanes: element m of lane b is
 * in[m * istep + b], output coefficient k goes to out[k * ostep + b]. */
QM_HD void qm_hvs_fdct8(int32_t *restrict out, ptrdiff_t ostep,
                        const int32_t *restrict in, ptrdiff_t istep, int n)
{
    for (int b = 0; b < n; b++) {
        /* Daala's input permutation */
        int32_t t0 = in[0 * istep + b], t4 = in[1 * istep + b];
        int32_t t2 = in[2 * istep + b], t6 = in[3 * istep + b];
        int32_t t7 = in[4 * istep + b], t3 = in[5 * istep + b];
        int32_t t5 = in[6 * istep + b], t1 = in[7 * istep + b];

        /* sum/difference butterflies, each keeping half of the sum */
        t1 = t0 - t1;
        const int32_t t1h = qm_hvs_half(t1);
        t0 -= t1h;
        t4 += t5;
        const int32_t t4h = qm_hvs_half(t4);
        t5 -= t4h;
        t3 = t2 - t3;
        t2 -= qm_hvs_half(t3);
        t6 += t7;
        const int32_t t6h = qm_hvs_half(t6);
        t7 = t6h - t7;

        /* embedded 4-point DCT-II */
        t0 += t6h;
        t6 = t0 - t6;
        t2 = t4h - t2;
        t4 = t2 - t4;
        /* 2-point DCT-II: rotation by pi/4 as three lifts,
         * 13573/32768 ~ sqrt(2) - 1, 11585/16384 ~ sqrt(1/2) */
        t0 -= qm_hvs_mul(t4, 13573, 15);
        t4 += qm_hvs_mul(t0, 11585, 14);
        t0 -= qm_hvs_mul(t4, 13573, 15);
        /* 2-point DST-IV: rotation by 3pi/8,
         * 21895/32768 ~ (1 - cos(3pi/8)) / sin(3pi/8), 15137/16384 ~ sin(3pi/8) */
        t6 -= qm_hvs_mul(t2, 21895, 15);
        t2 += qm_hvs_mul(t6, 15137, 14);
        t6 -= qm_hvs_mul(t2, 21895, 15);

        /* embedded 4-point DST-IV:
         * 19195/32768 ~ 2 - sqrt(2), 11585/16384 ~ sqrt(1/2),
         * 7489/8192 ~ sqrt(2) - 1/2 */
        t3 += qm_hvs_mul(t5, 19195, 15);
        t5 += qm_hvs_mul(t3, 11585, 14);
        t3 -= qm_hvs_mul(t5, 7489, 13);
        t7 = qm_hvs_half(t5) - t7;
        t5 -= t7;
        t3 = t1h - t3;
        t1 -= t3;
        /* rotation by pi/16: 3227/32768 ~ (1 - cos(pi/16)) / sin(pi/16),
         * 6393/32768 ~ sin(pi/16) */
        t7 += qm_hvs_mul(t1, 3227, 15);
        t1 -= qm_hvs_mul(t7, 6393, 15);
        t7 += qm_hvs_mul(t1, 3227, 15);
        /* rotation by 3pi/16: 2485/8192 ~ (1 - cos(3pi/16)) / sin(3pi/16),
         * 18205/32768 ~ sin(3pi/16) */
        t5 += qm_hvs_mul(t3, 2485, 13);
        t3 -= qm_hvs_mul(t5, 18205, 15);
        t5 += qm_hvs_mul(t3, 2485, 13);

        out[0 * ostep + b] = t0;
        out[1 * ostep + b] = t1;
        out[2 * ostep + b] = t2;
        out[3 * ostep + b] = t3;
        out[4 * ostep + b] = t4;
        out[5 * ostep + b] = t5;
        out[6 * ostep + b] = t6;
        out[7 * ostep + b] = t7;
    }
}

/* 2-D DCT of n blocks, in place (tmp: 64 st values).  The integer rounding
 * makes the order matter: columns first, then rows (od_bin_fdct8x8). */
QM_HD void qm_hvs_fdct8x8(int32_t *restrict blk, int32_t *restrict tmp,
                          ptrdiff_t st, int n)
{
    /* column j -> tmp "row" j: tmp[(j * 8 + v) * st] = vertical frequency v */
    QM_UNROLL
    for (int j = 0; j < 8; j++)
        qm_hvs_fdct8(tmp + j * 8 * st, st, blk + j * st, 8 * st, n);
    /* vertical frequency v across the 8 columns -> coefficient (v, u) */
    QM_UNROLL
    for (int v = 0; v < 8; v++)
        qm_hvs_fdct8(blk + v * 8 * st, st, tmp + v * st, 8 * st, n);
}

/* Masking strength of n blocks before their DCT: the block's sample variance
 * and the summed variances of its four 4x4 quadrants, all unbiased and in
 * float, as the reference forms them; vr[b] = quadrant variance / block
 * variance (or 0 for a flat block).  Quadrant q = (row >= 4) + 2 (column >=
 * 4), summed in that order.  var64, var16: qm_hvs_var64(), qm_hvs_var16(). */
QM_HD void qm_hvs_var_ratio(float *restrict vr, const int32_t *restrict s,
                            ptrdiff_t st, int n, float var64, float var16)
{
    float gmean[QM_HVS_CHUNK], qmean[4][QM_HVS_CHUNK];
    float gvar[QM_HVS_CHUNK], qvar[4][QM_HVS_CHUNK];

    /* Means: the sums are integers below 2^24, exact in float whatever the
     * order, and the divisions by 64 and 16 are exact. */
    int32_t qsum[4][QM_HVS_CHUNK];
    QM_UNROLL
    for (int q = 0; q < 4; q++)
        for (int b = 0; b < n; b++)
            qsum[q][b] = 0;
    QM_UNROLL
    for (int i = 0; i < 8; i++) {
        QM_UNROLL
        for (int j = 0; j < 8; j++) {
            int32_t *restrict qs = qsum[(i >> 2) + 2 * (j >> 2)];
            const int32_t *restrict p = s + (i * 8 + j) * st;
            for (int b = 0; b < n; b++)
                qs[b] += p[b];
        }
    }
    for (int b = 0; b < n; b++) {
        gmean[b] = (float)(qsum[0][b] + qsum[1][b] + qsum[2][b] + qsum[3][b]) / 64.f;
        gvar[b] = 0.f;
    }
    QM_UNROLL
    for (int q = 0; q < 4; q++) {
        for (int b = 0; b < n; b++) {
            qmean[q][b] = (float)qsum[q][b] / 16.f;
            qvar[q][b] = 0.f;
        }
    }
    /* Squared deviations, summed in sample raster order per lane. */
    QM_UNROLL
    for (int i = 0; i < 8; i++) {
        QM_UNROLL
        for (int j = 0; j < 8; j++) {
            const int q = (i >> 2) + 2 * (j >> 2);
            const int32_t *restrict p = s + (i * 8 + j) * st;
            float *restrict qv = qvar[q];
            const float *restrict qm = qmean[q];
            for (int b = 0; b < n; b++) {
                const float x = (float)p[b];
                const float dg = x - gmean[b], dq = x - qm[b];
                gvar[b] += dg * dg;
                qv[b] += dq * dq;
            }
        }
    }
    for (int b = 0; b < n; b++) {
        const float g = gvar[b] * var64;
        const float qs = qvar[0][b] * var16 + qvar[1][b] * var16 +
                         qvar[2][b] * var16 + qvar[3][b] * var16;
        /* the reference keeps g (= 0) for a flat block; the quotient is
         * formed unconditionally so that the loop vectorises */
        const float r = qs / g;
        vr[b] = g > 0 ? r : g;
    }
}

/* Masking threshold of n transformed blocks: sqrt(sum of mask-weighted
 * squared AC coefficients * variance ratio) / 32, all in float except the
 * square root (double, then rounded). */
QM_HD void qm_hvs_mask(float *restrict m, const int32_t *restrict c, ptrdiff_t st,
                       const float *restrict vr, const float *restrict mask, int n)
{
    float e[QM_HVS_CHUNK];
    for (int b = 0; b < n; b++)
        e[b] = 0.f;
    QM_UNROLL
    for (int k = 1; k < QM_HVS_COEFFS; k++) {
        const int32_t *restrict p = c + k * st;
        const float w = mask[k];
        for (int b = 0; b < n; b++) {
            /* the square is an int32 product (|coefficient|^2 is bounded by
             * the block's energy, 64 * 4095^2 < 2^31 at 12 bits) */
            e[b] += (float)(p[b] * p[b]) * w;
        }
    }
    for (int b = 0; b < n; b++)
        m[b] = (float)(sqrt((double)(e[b] * vr[b])) / 32.0);
}

/* The masking threshold m[b] of n blocks (samples in s, replaced by their
 * DCT; tmp: 64 st values): the variance ratio, the 2-D DCT and the mask. */
QM_HD void qm_hvs_block_prep(float *restrict m, int32_t *restrict s,
                             int32_t *restrict tmp, ptrdiff_t st, int n,
                             const float *restrict mask, float var64, float var16)
{
    float vr[QM_HVS_CHUNK];
    qm_hvs_var_ratio(vr, s, st, n, var64, var16);
    qm_hvs_fdct8x8(s, tmp, st, n);
    qm_hvs_mask(m, s, st, vr, mask, n);
}

/* The term of the DC coefficient of a block pair (s, d: the two
 * coefficients, w = csf[0]): the DC error is not masked. */
QM_HD float qm_hvs_term_dc(int32_t s, int32_t d, float w)
{
    const float we = (float)abs(s - d) * w;
    return we * we;
}

/* The term of AC coefficient k of a block pair: s, d = the two coefficients,
 * m = the larger of the two blocks' masking thresholds, w = csf[k],
 * mk = mask[k]. */
QM_HD float qm_hvs_term_ac(int32_t s, int32_t d, float m, float w, float mk)
{
    const float err = (float)abs(s - d);
    const float thr = m / mk;
    /* The reference's "err < thr ? 0 : err - thr": for finite floats
     * err - thr < 0 exactly when err < thr (and is +0 when they are equal),
     * so this is the same value, written as a select that vectorises. */
    const float over = err - thr;
    const float we = (over > 0.f ? over : 0.f) * w;
    return we * we;
}

/* The term of coefficient k of a block pair (arguments as above; mk unused
 * for the DC). */
QM_HD float qm_hvs_term(int k, int32_t s, int32_t d, float m, float w, float mk)
{
    return k == 0 ? qm_hvs_term_dc(s, d, w) : qm_hvs_term_ac(s, d, m, w, mk);
}

#endif /* QM_PSNR_HVS_BLOCK_H */
