/* gst-qmetric: PSNR-HVS stage functions, shared by the CPU code and its CUDA
 * twin (which mirrors every stage so that a parity harness can compare them).
 *
 * A plane is cut into 8x8 blocks whose top-left corners lie on a grid of step
 * 7 (blocks overlap by one row and one column); block (bx, by) starts at
 * (7 bx, 7 by) and only blocks lying wholly inside the plane are used.  The
 * computation has three stages:
 *
 *   1. per block (one GPU thread per block): 2-D integer DCT of both blocks,
 *      contrast masking, and the 64 CSF-weighted squared errors of the block
 *      ("terms", see QmHvsBlocksFn for the layout);
 *   2. accumulation of all terms of a plane into ONE float, block after block
 *      in raster order and inside a block in coefficient raster order: the
 *      reference sums this way in single precision, and the scores depend on
 *      the rounding of that exact order (qm_hvs_accumulate());
 *   3. host-side: normalisation to a mean squared error relative to the peak
 *      (qm_hvs_plane_error()) and conversion of the three planes to dB
 *      (qm_hvs_scores()).
 */
#ifndef QM_PSNR_HVS_H
#define QM_PSNR_HVS_H

#include <stddef.h>
#include <stdint.h>

#include "qm_hd.h"  /* restrict, when C++ (the CUDA twin) includes this */

#ifdef __cplusplus
extern "C" {
#endif

/* Geometry of the block grid (libvmaf third_party/xiph/psnr_hvs.c: 8x8 DCT
 * blocks, calc_psnrhvs() called with _step = 7). */
#define QM_HVS_BLOCK 8
#define QM_HVS_STEP 7
#define QM_HVS_COEFFS 64

/* Blocks the CPU stage function processes side by side (one per vector
 * lane; its working set stays in L1/L2); it loops over chunks of this size,
 * so a call may cover any number of blocks. */
#define QM_HVS_CHUNK 32

/* Number of block positions along a dimension of n samples (0 when n < 8). */
static inline int qm_hvs_nblocks(int n)
{
    return n < QM_HVS_BLOCK ? 0 : (n - QM_HVS_BLOCK) / QM_HVS_STEP + 1;
}

/* Per-plane constants: CSF weights and masking weights, coefficient raster
 * order (vertical frequency * 8 + horizontal frequency). */
typedef struct QmHvsTables {
    float csf[QM_HVS_COEFFS];
    float mask[QM_HVS_COEFFS];
} QmHvsTables;

struct QmMetricConfig;

/* 0 for a format the metric takes, else QM_ENOTSUP (libvmaf psnr_hvs.c
 * init(): GRAY and more than 12 bits are refused, 12-bit coefficients are
 * what keeps its int32 arithmetic in range): init() of both backends. */
int qm_hvs_check(const struct QmMetricConfig *cfg);

/* plane 0 = Y, 1 = Cb, 2 = Cr (the chroma tables are used for every chroma
 * subsampling, as the reference does). */
void qm_hvs_tables(QmHvsTables *t, int plane);

/* Scratch of the CPU stage function (one chunk of blocks). */
typedef struct QmHvsScratch {
    int32_t s[QM_HVS_COEFFS * QM_HVS_CHUNK];
    int32_t d[QM_HVS_COEFFS * QM_HVS_CHUNK];
    int32_t tmp[QM_HVS_COEFFS * QM_HVS_CHUNK];
} QmHvsScratch;

/**
 * Stage 1: nblocks horizontally consecutive blocks of one block row.
 * ref/dist point to the top-left sample of the first block (uint8_t samples
 * when bpc == 8, else uint16_t); block b starts QM_HVS_STEP * b samples to the
 * right.  Strides are in bytes.  Writes terms[k * nblocks + b] for
 * coefficient k (raster order) of block b: the squared CSF-weighted error of
 * that coefficient after masking.
 */
typedef void (*QmHvsBlocksFn)(const void *ref, ptrdiff_t ref_stride,
                              const void *dist, ptrdiff_t dist_stride,
                              int bpc, int nblocks, const QmHvsTables *t,
                              float *restrict terms, QmHvsScratch *scratch);

void qm_hvs_blocks_c(const void *ref, ptrdiff_t ref_stride,
                     const void *dist, ptrdiff_t dist_stride,
                     int bpc, int nblocks, const QmHvsTables *t,
                     float *restrict terms, QmHvsScratch *scratch);

/**
 * Stage 2: add the terms of nblocks blocks (layout of QmHvsBlocksFn) to the
 * plane's float accumulator, block by block, coefficient by coefficient.
 */
float qm_hvs_accumulate(float acc, const float *terms, int nblocks);

/**
 * Stage 3a: the plane's normalised error from its accumulator and block count
 * (NaN when the plane holds no block, as in the reference).
 */
double qm_hvs_plane_error(float acc, long nblocks, int bpc);

/**
 * Stage 3b: features psnr_hvs_y, psnr_hvs_cb, psnr_hvs_cr, psnr_hvs (dB) from
 * the three planes' errors; +inf where an error is 0 (identical planes).
 */
void qm_hvs_scores(const double err[3], double out[4]);

#ifdef __cplusplus
}
#endif

#endif /* QM_PSNR_HVS_H */
