/* gst-qmetric: the per-block arithmetic of PSNR-HVS (stage 1 of
 * cpu/psnr_hvs.h) as plain code for one block, and the geometry of the
 * parallel ordered sum (stage 2), shared by cuda/psnr_hvs.cu and
 * tests/parity/host_arith.cu: the test compiles this code for the host and
 * holds it against cpu/psnr_hvs.c bit for bit, and emulates the sum's
 * decomposition against the sequential loop.  Every float operation is the
 * C code's, in its order (no contraction: nvcc --fmad=false). */
#ifndef QM_PSNR_HVS_BLOCK_CUH
#define QM_PSNR_HVS_BLOCK_CUH

#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#define restrict __restrict__
extern "C" {
#include "psnr_hvs.h"
}
#undef restrict

#define HVS_HD __host__ __device__ __forceinline__

/* Terms per chunk of the chain (16 blocks of 64 coefficients); the element-
 * wise pass gives one term to each thread of the chain's thread block. */
#define HVS_CHUNK_BLOCKS 16
#define HVS_CHUNK (HVS_CHUNK_BLOCKS * QM_HVS_COEFFS)
#define HVS_CHAIN_THREADS 1024
/* binades tried per chunk: the expected one - 1, itself, + 1 (the float sum
 * drifts from the rough double sum by a fraction of a percent) */
#define HVS_NCAND 3
/* a chunk's sum marker when a term is an exact half unit */
#define HVS_TIE (~0ull)
/* larger than any limit; 1024 of them still fit in 64 bits */
#define HVS_BIG (1ull << 40)

/* The unbiased variance factors n / (n - 1) of a block's 64 and a quadrant's
 * 16 samples, formed in float as cpu/psnr_hvs.c forms them. */
static inline float hvs_var64(void)
{
    return 1.0f / 63.0f * 64.0f;
}

static inline float hvs_var16(void)
{
    return 1.0f / 15.0f * 16.0f;
}

/* block_variance_ratio() of cpu/psnr_hvs.c for one block */
HVS_HD float hvs_var_ratio(const int (&s)[64], float var64, float var16)
{
    int qsum[4] = { 0, 0, 0, 0 };
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
            qsum[(i >> 2) + 2 * (j >> 2)] += s[i * 8 + j];
    const float gmean = (float)(qsum[0] + qsum[1] + qsum[2] + qsum[3]) / 64.f;
    float qmean[4], qvar[4];
#pragma unroll
    for (int q = 0; q < 4; q++) {
        qmean[q] = (float)qsum[q] / 16.f;
        qvar[q] = 0.f;
    }
    float gvar = 0.f;
#pragma unroll
    for (int i = 0; i < 8; i++) {
#pragma unroll
        for (int j = 0; j < 8; j++) {
            const int q = (i >> 2) + 2 * (j >> 2);
            const float x = (float)s[i * 8 + j];
            const float dg = x - gmean, dq = x - qmean[q];
            gvar += dg * dg;
            qvar[q] += dq * dq;
        }
    }
    const float g = gvar * var64;
    const float qs = qvar[0] * var16 + qvar[1] * var16 + qvar[2] * var16 +
                     qvar[3] * var16;
    const float r = qs / g;
    return g > 0 ? r : g;
}

HVS_HD int hvs_half(int a)
{
    return ((int)((unsigned)a >> 31) + a) >> 1;
}

HVS_HD int hvs_mul(int a, int c, int shift)
{
    return (a * c + (1 << (shift - 1))) >> shift;
}

/* fdct8_lanes() of cpu/psnr_hvs.c (Daala od_bin_fdct8) on one vector */
HVS_HD void hvs_fdct8(int (&v)[8])
{
    int t0 = v[0], t4 = v[1], t2 = v[2], t6 = v[3];
    int t7 = v[4], t3 = v[5], t5 = v[6], t1 = v[7];
    t1 = t0 - t1;
    const int t1h = hvs_half(t1);
    t0 -= t1h;
    t4 += t5;
    const int t4h = hvs_half(t4);
    t5 -= t4h;
    t3 = t2 - t3;
    t2 -= hvs_half(t3);
    t6 += t7;
    const int t6h = hvs_half(t6);
    t7 = t6h - t7;
    t0 += t6h;
    t6 = t0 - t6;
    t2 = t4h - t2;
    t4 = t2 - t4;
    t0 -= hvs_mul(t4, 13573, 15);
    t4 += hvs_mul(t0, 11585, 14);
    t0 -= hvs_mul(t4, 13573, 15);
    t6 -= hvs_mul(t2, 21895, 15);
    t2 += hvs_mul(t6, 15137, 14);
    t6 -= hvs_mul(t2, 21895, 15);
    t3 += hvs_mul(t5, 19195, 15);
    t5 += hvs_mul(t3, 11585, 14);
    t3 -= hvs_mul(t5, 7489, 13);
    t7 = hvs_half(t5) - t7;
    t5 -= t7;
    t3 = t1h - t3;
    t1 -= t3;
    t7 += hvs_mul(t1, 3227, 15);
    t1 -= hvs_mul(t7, 6393, 15);
    t7 += hvs_mul(t1, 3227, 15);
    t5 += hvs_mul(t3, 2485, 13);
    t3 -= hvs_mul(t5, 18205, 15);
    t5 += hvs_mul(t3, 2485, 13);
    v[0] = t0;
    v[1] = t1;
    v[2] = t2;
    v[3] = t3;
    v[4] = t4;
    v[5] = t5;
    v[6] = t6;
    v[7] = t7;
}

/* 2-D DCT in place, columns first then rows, as fdct8x8_lanes(): column j's
 * vertical frequency k is kept at row k of column j, so that the row pass
 * finds vertical frequency v of every column in row v. */
HVS_HD void hvs_fdct8x8(int (&blk)[64])
{
#pragma unroll
    for (int j = 0; j < 8; j++) {
        int v[8];
#pragma unroll
        for (int m = 0; m < 8; m++)
            v[m] = blk[m * 8 + j];
        hvs_fdct8(v);
#pragma unroll
        for (int k = 0; k < 8; k++)
            blk[k * 8 + j] = v[k];
    }
#pragma unroll
    for (int r = 0; r < 8; r++) {
        int v[8];
#pragma unroll
        for (int m = 0; m < 8; m++)
            v[m] = blk[r * 8 + m];
        hvs_fdct8(v);
#pragma unroll
        for (int k = 0; k < 8; k++)
            blk[r * 8 + k] = v[k];
    }
}

/* block_mask() of cpu/psnr_hvs.c for one transformed block */
HVS_HD float hvs_mask(const int (&c)[64], float vr,
                      const float *__restrict__ mask)
{
    float e = 0.f;
#pragma unroll
    for (int k = 1; k < QM_HVS_COEFFS; k++)
        e += (float)(c[k] * c[k]) * mask[k];
    return (float)(sqrt((double)(e * vr)) / 32.0);
}

/* The masking threshold of one block (samples row-major in s, replaced by
 * their DCT): block_variance_ratio(), fdct8x8_lanes() and block_mask() of
 * cpu/psnr_hvs.c. */
HVS_HD float hvs_block_prep(int (&s)[64], const float *__restrict__ mask,
                            float var64, float var16)
{
    const float vr = hvs_var_ratio(s, var64, var16);
    hvs_fdct8x8(s);
    return hvs_mask(s, vr, mask);
}

/* The term of coefficient k of a block pair (the end of qm_hvs_blocks_c()):
 * sk, dk = the two coefficients, m = the larger masking threshold, w = csf[k],
 * mk = mask[k].  The DC error is not masked. */
HVS_HD float hvs_term(int k, int sk, int dk, float m, float w, float mk)
{
    float we;
    if (k == 0) {
        we = (float)abs(sk - dk) * w;
    } else {
        const float err = (float)abs(sk - dk);
        const float thr = m / mk;
        const float over = err - thr;
        we = (over > 0.f ? over : 0.f) * w;
    }
    return we * we;
}

#endif /* QM_PSNR_HVS_BLOCK_CUH */
