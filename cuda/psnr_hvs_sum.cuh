/* gst-qmetric: the geometry of the parallel ordered sum of PSNR-HVS (stage 2
 * of cpu/psnr_hvs.h) in cuda/psnr_hvs.cu, shared with tests/parity/host_arith,
 * which emulates the sum's decomposition against the sequential loop.  The
 * per-block arithmetic (stage 1) is cpu/psnr_hvs_block.h, shared with the C
 * code. */
#ifndef QM_PSNR_HVS_SUM_CUH
#define QM_PSNR_HVS_SUM_CUH

#include "psnr_hvs.h"

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

#endif /* QM_PSNR_HVS_SUM_CUH */
