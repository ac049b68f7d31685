/* gst-qmetric: CUDA twin of cpu/psnr.c.
 *
 * One kernel sums the squared errors of every plane exactly (64-bit integer
 * atomics: the result does not depend on the order); the host turns the sums
 * into PSNR (and, with enable_apsnr, the aux values of the aggregates) with
 * the C reference's own qm_psnr_rows().  Every option is a host-side
 * constant (peak, caps), so the twin takes them all. */
#include <math.h>

#include "common.cuh"
#include "psnr.h"

typedef struct {
    QmPsnrParams prm;
    unsigned long long *d_sse;  /* [slot][3] */
    unsigned long long *h_sse;  /* pinned copy */
} PsnrGpu;

template <typename T>
__global__ void psnr_sse_kernel(QmGpuFrame f, unsigned long long *sse)
{
    const int p = blockIdx.y;
    const QmGpuPlane &a = f.ref.p[p], &b = f.dist.p[p];
    const int n = a.w * a.h;
    unsigned long long acc = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += gridDim.x * blockDim.x) {
        const int y = i / a.w, x = i - y * a.w;
        const long long e = qm_load<T>(a, f.ref.shift, x, y) -
                            qm_load<T>(b, f.dist.shift, x, y);
        acc += (unsigned long long)(e * e);
    }
    acc = qm_block_sum(acc);
    if (threadIdx.x == 0 && acc)
        atomicAdd(&sse[p], acc);
}

static int psnr_gpu_init(void *priv, const QmMetricConfig *cfg,
                         unsigned n_slots, QmStream st)
{
    PsnrGpu *s = (PsnrGpu *)priv;
    qm_psnr_setup(cfg, &s->prm);
    QM_CU_TRY(cudaMalloc(&s->d_sse, n_slots * 3 * sizeof(unsigned long long)));
    QM_CU_TRY(cudaMallocHost(&s->h_sse, n_slots * 3 * sizeof(unsigned long long)));
    return 0;
}

static int psnr_gpu_submit(void *priv, const QmGpuFrame *f, unsigned slot,
                           QmStream st)
{
    PsnrGpu *s = (PsnrGpu *)priv;
    unsigned long long *d = s->d_sse + 3 * slot;
    cudaStream_t cs = (cudaStream_t)st;
    QM_CU_TRY(cudaMemsetAsync(d, 0, 3 * sizeof(*d), cs));
    /* enough blocks to fill the GPU at 1080p; grid-stride beyond */
    const int threads = 256;
    int blocks = (s->prm.pw[0] * s->prm.ph[0] + threads * 8 - 1) / (threads * 8);
    dim3 grid(blocks < 1 ? 1 : (blocks > 1024 ? 1024 : blocks), s->prm.nplanes);
    if (f->ref.bpc == 8)
        psnr_sse_kernel<uint8_t><<<grid, threads, 0, cs>>>(*f, d);
    else
        psnr_sse_kernel<uint16_t><<<grid, threads, 0, cs>>>(*f, d);
    QM_CU_TRY(cudaGetLastError());
    QM_CU_TRY(cudaMemcpyAsync(s->h_sse + 3 * slot, d, 3 * sizeof(*d),
                              cudaMemcpyDeviceToHost, cs));
    return 0;
}

static int psnr_gpu_collect(void *priv, unsigned slot, QmRows *out)
{
    PsnrGpu *s = (PsnrGpu *)priv;
    uint64_t sse[3];
    for (int p = 0; p < s->prm.nplanes; p++)
        sse[p] = s->h_sse[3 * slot + p];
    qm_psnr_rows(&s->prm, sse, out);
    return 0;
}

static void psnr_gpu_close(void *priv)
{
    PsnrGpu *s = (PsnrGpu *)priv;
    cudaFree(s->d_sse);
    cudaFreeHost(s->h_sse);
}

extern "C" const QmCudaFuncs qm_cuda_psnr = {
    sizeof(PsnrGpu), psnr_gpu_init, psnr_gpu_submit, psnr_gpu_collect,
    psnr_gpu_close, NULL,
};
