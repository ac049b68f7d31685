/* gst-qmetric: writing arithmetic once for the C reference and its CUDA twin.
 *
 * A header of per-block or per-pixel arithmetic (e.g. psnr_hvs_block.h,
 * ciede_pixel.h, vif_pixel.h, motion.h) is included by the C code (cpu/,
 * -ffp-contract=off) and by the .cu twin (nvcc --fmad=false), so both run
 * the same operations in the same order and give the same bits.  Such a header:
 *   - marks its functions QM_HD: static inline in C, __host__ __device__
 *     inline in CUDA (host too: tests/parity/host_arith runs it there);
 *   - passes doubles to libm explicitly: C++ would pick the float overload
 *     of sqrt, exp, atan2... for a float argument where C promotes it;
 *   - marks loops over a block's fixed extent QM_UNROLL, so that a CUDA
 *     thread's block stays in registers (C: the compiler's choice);
 *   - uses no C-only syntax (designated initialisers, compound literals);
 *   - reaches device intrinsics through the qm_hd_* helpers below.
 */
#ifndef QM_HD_H
#define QM_HD_H

#include <stdint.h>

#ifdef __CUDACC__
#define QM_HD __host__ __device__ __forceinline__
#define QM_UNROLL _Pragma("unroll")
#else
#define QM_HD static inline
#define QM_UNROLL
#endif

/* Leading zero bits of x != 0, and a read of a table that does not change
 * during a kernel (the read-only cache on the GPU): the device's intrinsic,
 * the compiler's builtin or a plain load elsewhere (the C code, the host
 * pass of nvcc, the emulator). */
QM_HD int qm_hd_clz32(uint32_t x)
{
#ifdef __CUDA_ARCH__
    return __clz((int)x);
#else
    return __builtin_clz(x);
#endif
}

QM_HD int qm_hd_clz64(uint64_t x)
{
#ifdef __CUDA_ARCH__
    return __clzll((long long)x);
#else
    return __builtin_clzll(x);
#endif
}

QM_HD uint16_t qm_hd_ldg_u16(const uint16_t *p)
{
#ifdef __CUDA_ARCH__
    return __ldg(p);
#else
    return *p;
#endif
}

#endif /* QM_HD_H */

/* C++ (nvcc, tests/cuda-emu) reads our C headers' restrict as its
 * __restrict__ extension.  Outside the include guard: a header that
 * includes this one gets it back after an #undef restrict elsewhere. */
#if defined(__cplusplus) && !defined(restrict)
#define restrict __restrict__
#endif
