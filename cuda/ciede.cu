/* gst-qmetric: CUDA twin of cpu/ciede.c.
 *
 *   ciede_kernel        one thread per pixel: both YCbCr triplets -> L*a*b*
 *                       -> CIEDE2000 (stage 1 of cpu/ciede.h, every float and
 *                       double operation as qm_ciede_lab() and
 *                       qm_ciede_de2000() do it), summed in double per thread
 *                       block in a fixed tree order;
 *   ciede_total_kernel  the sum of the thread blocks' sums, in a fixed order.
 * collect() applies the C reference's qm_ciede_score() to the frame's sum.
 *
 * The per-pixel code is cpu/ciede_pixel.h, the C code's own; tests/parity/
 * host_arith compiles it with nvcc for the host and holds it against
 * cpu/ciede.c bit for bit (C++ overloads, casts).
 *
 * Differences from the C reference, all far below the tolerance:
 *   - the sum of the per-pixel differences is a tree of double additions
 *     instead of a left-to-right loop (relative ~1e-15);
 *   - pow, atan2, sin, cos and exp are CUDA's double functions (within 1-2
 *     ulp, like glibc's, but not always the same bits); their results are
 *     rounded to float, so a pixel's difference changes in the last float bit
 *     only where a result lands within ~1e-16 (relative) of a rounding
 *     boundary;
 *   - powf(C', 7) of the rotation term is formed in double and rounded to
 *     float: it differs from glibc's powf in the last bit for ~0.07% of the
 *     arguments, which changes ~1e-6 of the pixels' differences, in their
 *     last bit.
 * Identical frames: every difference is 0, the sum is exactly 0 and the score
 * +inf, as on the CPU.
 */
#include <math.h>

#include "ciede_pixel.h"
#include "common.cuh"

#define CIEDE_BX 32
#define CIEDE_BY 8

typedef struct CiedeParams {
    QmCiedeConv cv;
    int w, h;
    int ss_x, ss_y;   /* chroma sample of luma (x, y): (x >> ss_x, y >> ss_y) */
    int cw, ch;       /* chroma plane size: the last column/row is reused
                         past it (odd sizes), as cpu/ciede.c clamps */
} CiedeParams;

typedef struct CiedeGpu {
    CiedeParams prm;
    dim3 grid;
    int nblocks;
    double *d_part;   /* one sum per thread block */
    double *d_sum;    /* [slot] */
    double *h_sum;    /* pinned copy */
} CiedeGpu;

/* ---- kernels ---- */

/* Threads of a block cover CIEDE_BX x CIEDE_BY pixels; part[block] = the
 * double sum of their differences. */
template <typename T>
__global__ void __launch_bounds__(CIEDE_BX * CIEDE_BY)
ciede_kernel(QmGpuFrame f, CiedeParams prm, double *__restrict__ part)
{
    const int x = blockIdx.x * CIEDE_BX + (threadIdx.x % CIEDE_BX);
    const int y = blockIdx.y * CIEDE_BY + (threadIdx.x / CIEDE_BX);
    double de = 0.;
    if (x < prm.w && y < prm.h) {
        const int cx = min(x >> prm.ss_x, prm.cw - 1);
        const int cy = min(y >> prm.ss_y, prm.ch - 1);
        const int ry = qm_load<T>(f.ref.p[0], f.ref.shift, x, y);
        const int ru = qm_load<T>(f.ref.p[1], f.ref.shift, cx, cy);
        const int rv = qm_load<T>(f.ref.p[2], f.ref.shift, cx, cy);
        const int dy = qm_load<T>(f.dist.p[0], f.dist.shift, x, y);
        const int du = qm_load<T>(f.dist.p[1], f.dist.shift, cx, cy);
        const int dv = qm_load<T>(f.dist.p[2], f.dist.shift, cx, cy);
        /* equal colours differ by exactly 0 (as the C code, which skips
         * them); also keeps identical frames at +inf */
        if (ry != dy || ru != du || rv != dv)
            de = qm_ciede_pixel_de2000(qm_ciede_pixel_lab(ry, ru, rv, &prm.cv),
                                       qm_ciede_pixel_lab(dy, du, dv, &prm.cv));
    }
    de = qm_block_sum(de);
    if (threadIdx.x == 0)
        part[blockIdx.y * gridDim.x + blockIdx.x] = de;
}

__global__ void __launch_bounds__(1024)
ciede_total_kernel(const double *__restrict__ part, int n, double *__restrict__ sum)
{
    double s = 0.;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s += part[i];
    s = qm_block_sum(s);
    if (threadIdx.x == 0)
        *sum = s;
}

/* ---- the twin ---- */

static void ciede_gpu_close(void *priv)
{
    CiedeGpu *s = (CiedeGpu *)priv;
    cudaFree(s->d_part);
    cudaFree(s->d_sum);
    cudaFreeHost(s->h_sum);
    s->d_part = NULL;
    s->d_sum = NULL;
    s->h_sum = NULL;
}

static int ciede_gpu_alloc(CiedeGpu *s, unsigned n_slots)
{
    QM_CU_TRY(cudaMalloc(&s->d_part, (size_t)s->nblocks * sizeof(double)));
    QM_CU_TRY(cudaMalloc(&s->d_sum, (size_t)n_slots * sizeof(double)));
    QM_CU_TRY(cudaMallocHost(&s->h_sum, (size_t)n_slots * sizeof(double)));
    return 0;
}

static int ciede_gpu_init(void *priv, const QmMetricConfig *cfg,
                          unsigned n_slots, QmStream st)
{
    CiedeGpu *s = (CiedeGpu *)priv;
    (void)st;
    int err = qm_ciede_check(cfg);  /* the C reference's limits */
    if (err)
        return err;
    CiedeParams *p = &s->prm;
    qm_plane_size(cfg->w, cfg->h, cfg->chroma, 1, &p->cw, &p->ch);
    p->w = cfg->w;
    p->h = cfg->h;
    p->ss_x = cfg->chroma != QM_CHROMA_444;
    p->ss_y = cfg->chroma == QM_CHROMA_420;
    qm_ciede_conv(&p->cv, cfg->bpc);
    s->grid = dim3((cfg->w + CIEDE_BX - 1) / CIEDE_BX,
                   (cfg->h + CIEDE_BY - 1) / CIEDE_BY);
    s->nblocks = (int)(s->grid.x * s->grid.y);
    err = ciede_gpu_alloc(s, n_slots);
    if (err)
        ciede_gpu_close(s);
    return err;
}

static int ciede_gpu_submit(void *priv, const QmGpuFrame *f, unsigned slot,
                            QmStream st)
{
    CiedeGpu *s = (CiedeGpu *)priv;
    cudaStream_t cs = (cudaStream_t)st;
    if (f->ref.bpc == 8)
        ciede_kernel<uint8_t><<<s->grid, CIEDE_BX * CIEDE_BY, 0, cs>>>(*f, s->prm,
                                                                       s->d_part);
    else
        ciede_kernel<uint16_t><<<s->grid, CIEDE_BX * CIEDE_BY, 0, cs>>>(*f, s->prm,
                                                                        s->d_part);
    QM_CU_TRY(cudaGetLastError());
    ciede_total_kernel<<<1, 1024, 0, cs>>>(s->d_part, s->nblocks, s->d_sum + slot);
    QM_CU_TRY(cudaGetLastError());
    QM_CU_TRY(cudaMemcpyAsync(s->h_sum + slot, s->d_sum + slot, sizeof(double),
                              cudaMemcpyDeviceToHost, cs));
    return 0;
}

static int ciede_gpu_collect(void *priv, unsigned slot, QmRows *out)
{
    CiedeGpu *s = (CiedeGpu *)priv;
    qm_rows_set(out, 0, 0, qm_ciede_score(s->h_sum[slot], s->prm.w, s->prm.h));
    return 0;
}

extern "C" const QmCudaFuncs qm_cuda_ciede = {
    sizeof(CiedeGpu), ciede_gpu_init, ciede_gpu_submit, ciede_gpu_collect,
    ciede_gpu_close, NULL,
};
