/* gst-qmetric: helpers shared by the CUDA kernels. */
#ifndef QM_CUDA_COMMON_CUH
#define QM_CUDA_COMMON_CUH

#include <cuda_runtime.h>

#include "qm_cuda.h"

/* Sample (x, y) of a plane, whatever its layout: 8 or 16 bits, planar or
 * interleaved (step 2), MSB-aligned (shift). */
template <typename T>
__device__ __forceinline__ int qm_load(const QmGpuPlane &p, int shift, int x,
                                       int y)
{
    const T *row = (const T *)((const char *)p.data + (ptrdiff_t)y * p.stride);
    return (int)(__ldg(row + (ptrdiff_t)x * p.step) >> shift);
}

/* Sum over a block; every thread gets the total.  Integer sums are exact,
 * so the order does not matter. */
template <typename T>
__device__ __forceinline__ T qm_block_sum(T v)
{
    __shared__ T warp_sums[32];
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        warp_sums[warp] = v;
    __syncthreads();
    const int nwarps = (blockDim.x + 31) >> 5;
    v = threadIdx.x < nwarps ? warp_sums[threadIdx.x] : (T)0;
    if (warp == 0)
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

#define QM_CU_TRY(call)                                    \
    do {                                                   \
        if ((call) != cudaSuccess)                         \
            return QM_EDEVICE;                             \
    } while (0)

/* What launch() enqueues on cs, captured once as a graph into *exec (left
 * alone when already made): a slot's work that reads only the twin's own
 * buffers.  QM_EDEVICE, *exec NULL, when the capture fails. */
template <typename F>
static int qm_graph_once(cudaGraphExec_t *exec, cudaStream_t cs, F launch)
{
    if (*exec)
        return 0;
    QM_CU_TRY(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
    launch();
    const cudaError_t launched = cudaGetLastError();
    cudaGraph_t graph = NULL;
    const cudaError_t ended = cudaStreamEndCapture(cs, &graph);
    cudaError_t e = launched ? launched : ended;
    if (!e)
        e = cudaGraphInstantiate(exec, graph, 0);
    if (graph)
        cudaGraphDestroy(graph);
    if (e) {
        *exec = NULL;
        return QM_EDEVICE;
    }
    return 0;
}

#endif
