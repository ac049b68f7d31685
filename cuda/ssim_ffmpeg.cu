/* gst-qmetric: CUDA twin of cpu/ssim_ffmpeg.c (FFmpeg's SSIM).
 *
 *   ssimff_block_kernel   one thread per 4x4 block of every plane: its four
 *                         exact sums;
 *   ssimff_window_kernel  one thread per window: the float of
 *                         qm_ssim_ffmpeg_window() from four blocks' sums;
 *   ssimff_row_kernel     one thread per row of windows: its sum by
 *                         qm_ssim_ffmpeg_row(), the C code's function, so
 *                         in FFmpeg's order (four double lanes at 8 bits, one
 *                         float above);
 *   ssimff_plane_kernel   one thread per plane: the rows' sums added in
 *                         double in row order, as the C code does.
 * The last three read only the twin's buffers: with the copy of the sums
 * they are captured once per slot as a CUDA graph, so a frame costs two
 * launches on the host.  collect() turns the three plane sums into the
 * features with the C reference's qm_ssim_ffmpeg_rows().  Every step is the C code's operation
 * on the same values in the same order (integer sums, then float and double
 * operations with --fmad=false), so the features are bit for bit the C
 * reference's: cuda_tol 0.
 *
 * The scratch buffers (block sums, windows, row sums) serve every slot: the
 * stream orders the frames; each slot has its own three sums on the device
 * and in pinned memory.
 */
#include <stdlib.h>

#include "common.cuh"
#include "ssim_ffmpeg.h"
#include "ssim_ffmpeg_pixel.h"

#define SSIMFF_BX 32
#define SSIMFF_BY 8
#define SSIMFF_ROW_THREADS 128

/* Where each plane's part of a scratch buffer starts (elements). */
typedef struct SsimFfLayout {
    QmSsimFfGeom g;
    int blk[3];   /* block sums: bw x bh per plane */
    int win[3];   /* windows: (bw - 1) x (bh - 1) per plane */
    int row[3];   /* row sums: bh - 1 per plane */
    int nrows;    /* rows of every plane */
} SsimFfLayout;

typedef struct SsimFfGpu {
    SsimFfLayout l;
    dim3 grid_blk, grid_win;
    QmSsimFfSums *d_blk;
    float *d_win;
    double *d_row;
    double *d_sum;   /* [slot][3] */
    double *h_sum;   /* pinned copy */
    unsigned n_slots;
    cudaGraphExec_t *exec;  /* per slot: windows, rows, planes, copy */
} SsimFfGpu;

/* ---- kernels ---- */

template <typename T>
__global__ void __launch_bounds__(SSIMFF_BX * SSIMFF_BY)
ssimff_block_kernel(QmGpuFrame f, SsimFfLayout l, QmSsimFfSums *__restrict__ blk)
{
    const int p = blockIdx.z;
    const int i = blockIdx.x * SSIMFF_BX + (threadIdx.x % SSIMFF_BX);
    const int z = blockIdx.y * SSIMFF_BY + (threadIdx.x / SSIMFF_BX);
    const int bw = l.g.bw[p];
    if (i >= bw || z >= l.g.bh[p])
        return;
    const QmGpuPlane &pa = f.ref.p[p], &pb = f.dist.p[p];
    /* 64-bit sums: 16 products of 16-bit samples pass 32 bits */
    unsigned long long s1 = 0, s2 = 0, ss = 0, s12 = 0;
    QM_UNROLL
    for (int y = 0; y < 4; y++) {
        QM_UNROLL
        for (int x = 0; x < 4; x++) {
            const unsigned long long a = qm_load<T>(pa, f.ref.shift, 4 * i + x, 4 * z + y);
            const unsigned long long b = qm_load<T>(pb, f.dist.shift, 4 * i + x, 4 * z + y);
            s1 += a;
            s2 += b;
            ss += a * a + b * b;
            s12 += a * b;
        }
    }
    QmSsimFfSums s = { (int64_t)s1, (int64_t)s2, (int64_t)ss, (int64_t)s12 };
    blk[l.blk[p] + z * bw + i] = s;
}

__global__ void __launch_bounds__(SSIMFF_BX * SSIMFF_BY)
ssimff_window_kernel(SsimFfLayout l, const QmSsimFfSums *__restrict__ blk,
                     float *__restrict__ win)
{
    const int p = blockIdx.z;
    const int i = blockIdx.x * SSIMFF_BX + (threadIdx.x % SSIMFF_BX);
    const int y = 1 + blockIdx.y * SSIMFF_BY + (threadIdx.x / SSIMFF_BX);
    const int bw = l.g.bw[p];
    if (i >= bw - 1 || y >= l.g.bh[p])
        return;
    const QmSsimFfSums *up = blk + l.blk[p] + (y - 1) * bw + i;
    const QmSsimFfSums *cur = up + bw;
    /* the C code's order: up[i], up[i + 1], cur[i], cur[i + 1] (integers) */
    QmSsimFfSums s = up[0];
    qm_ssim_ffmpeg_add(&s, &up[1]);
    qm_ssim_ffmpeg_add(&s, &cur[0]);
    qm_ssim_ffmpeg_add(&s, &cur[1]);
    win[l.win[p] + (y - 1) * (bw - 1) + i] = qm_ssim_ffmpeg_window(&s, l.g.c1, l.g.c2);
}

__global__ void __launch_bounds__(SSIMFF_ROW_THREADS)
ssimff_row_kernel(SsimFfLayout l, const float *__restrict__ win, double *__restrict__ row)
{
    const int r = blockIdx.x * SSIMFF_ROW_THREADS + threadIdx.x;
    if (r >= l.nrows)
        return;
    int p = 0;
    while (p + 1 < l.g.nplanes && r >= l.row[p + 1])
        p++;
    const int y = r - l.row[p], n = l.g.bw[p] - 1;
    row[r] = qm_ssim_ffmpeg_row(win + l.win[p] + y * n, n, l.g.bpc);
}

__global__ void ssimff_plane_kernel(SsimFfLayout l, const double *__restrict__ row,
                                    double *__restrict__ sum)
{
    const int p = threadIdx.x;
    if (p >= l.g.nplanes)
        return;
    double s = 0.0;
    for (int y = 0; y < l.g.bh[p] - 1; y++)
        s += row[l.row[p] + y];
    sum[p] = s;
}

/* ---- the twin ---- */

static void ssimff_gpu_close(void *priv)
{
    SsimFfGpu *s = (SsimFfGpu *)priv;
    for (unsigned i = 0; s->exec && i < s->n_slots; i++)
        if (s->exec[i])
            cudaGraphExecDestroy(s->exec[i]);
    free(s->exec);
    s->exec = NULL;
    cudaFree(s->d_blk);
    cudaFree(s->d_win);
    cudaFree(s->d_row);
    cudaFree(s->d_sum);
    cudaFreeHost(s->h_sum);
    s->d_blk = NULL;
    s->d_win = NULL;
    s->d_row = NULL;
    s->d_sum = NULL;
    s->h_sum = NULL;
}

static int ssimff_gpu_alloc(SsimFfGpu *s, int nblk, int nwin, unsigned n_slots)
{
    QM_CU_TRY(cudaMalloc(&s->d_blk, (size_t)nblk * sizeof(QmSsimFfSums)));
    QM_CU_TRY(cudaMalloc(&s->d_win, (size_t)nwin * sizeof(float)));
    QM_CU_TRY(cudaMalloc(&s->d_row, (size_t)s->l.nrows * sizeof(double)));
    QM_CU_TRY(cudaMalloc(&s->d_sum, (size_t)n_slots * 3 * sizeof(double)));
    QM_CU_TRY(cudaMallocHost(&s->h_sum, (size_t)n_slots * 3 * sizeof(double)));
    s->exec = (cudaGraphExec_t *)calloc(n_slots, sizeof(*s->exec));
    return s->exec ? 0 : QM_ENOMEM;
}

static int ssimff_gpu_init(void *priv, const QmMetricConfig *cfg, unsigned n_slots,
                           QmStream st)
{
    SsimFfGpu *s = (SsimFfGpu *)priv;
    (void)st;
    SsimFfLayout *l = &s->l;
    s->n_slots = n_slots;
    int err = qm_ssim_ffmpeg_setup(&l->g, cfg->w, cfg->h, cfg->bpc, cfg->chroma);
    if (err)
        return err;
    int nblk = 0, nwin = 0;
    l->nrows = 0;
    for (int p = 0; p < l->g.nplanes; p++) {
        l->blk[p] = nblk;
        l->win[p] = nwin;
        l->row[p] = l->nrows;
        nblk += l->g.bw[p] * l->g.bh[p];
        nwin += (l->g.bw[p] - 1) * (l->g.bh[p] - 1);
        l->nrows += l->g.bh[p] - 1;
    }
    /* plane 0 is the largest in both directions */
    s->grid_blk = dim3((l->g.bw[0] + SSIMFF_BX - 1) / SSIMFF_BX,
                       (l->g.bh[0] + SSIMFF_BY - 1) / SSIMFF_BY, l->g.nplanes);
    s->grid_win = dim3((l->g.bw[0] - 1 + SSIMFF_BX - 1) / SSIMFF_BX,
                       (l->g.bh[0] - 1 + SSIMFF_BY - 1) / SSIMFF_BY, l->g.nplanes);
    err = ssimff_gpu_alloc(s, nblk, nwin, n_slots);
    if (err)
        ssimff_gpu_close(s);
    return err;
}

/* What follows the block sums of a frame: reads only the twin's buffers. */
static void ssimff_launch_tail(SsimFfGpu *s, unsigned slot, cudaStream_t cs)
{
    ssimff_window_kernel<<<s->grid_win, SSIMFF_BX * SSIMFF_BY, 0, cs>>>(s->l, s->d_blk,
                                                                       s->d_win);
    const int nb = (s->l.nrows + SSIMFF_ROW_THREADS - 1) / SSIMFF_ROW_THREADS;
    ssimff_row_kernel<<<nb, SSIMFF_ROW_THREADS, 0, cs>>>(s->l, s->d_win, s->d_row);
    double *d = s->d_sum + 3 * slot;
    ssimff_plane_kernel<<<1, 32, 0, cs>>>(s->l, s->d_row, d);
    cudaMemcpyAsync(s->h_sum + 3 * slot, d, 3 * sizeof(double), cudaMemcpyDeviceToHost, cs);
}

static int ssimff_gpu_submit(void *priv, const QmGpuFrame *f, unsigned slot, QmStream st)
{
    SsimFfGpu *s = (SsimFfGpu *)priv;
    cudaStream_t cs = (cudaStream_t)st;
    if (slot >= s->n_slots || f->ref.bpc != s->l.g.bpc)
        return QM_EINVAL;
    const int threads = SSIMFF_BX * SSIMFF_BY;
    if (f->ref.bpc == 8)
        ssimff_block_kernel<uint8_t><<<s->grid_blk, threads, 0, cs>>>(*f, s->l, s->d_blk);
    else
        ssimff_block_kernel<uint16_t><<<s->grid_blk, threads, 0, cs>>>(*f, s->l, s->d_blk);
    QM_CU_TRY(cudaGetLastError());
    /* the slot's graph of the rest, captured at its first frame */
    const int err = qm_graph_once(&s->exec[slot], cs, [&] { ssimff_launch_tail(s, slot, cs); });
    if (err)
        return err;
    QM_CU_TRY(cudaGraphLaunch(s->exec[slot], cs));
    return 0;
}

static int ssimff_gpu_collect(void *priv, unsigned slot, QmRows *out)
{
    SsimFfGpu *s = (SsimFfGpu *)priv;
    qm_ssim_ffmpeg_rows(&s->l.g, s->h_sum + 3 * slot, out);
    return 0;
}

extern "C" const QmCudaFuncs qm_cuda_ssim_ffmpeg = {
    sizeof(SsimFfGpu), ssimff_gpu_init, ssimff_gpu_submit, ssimff_gpu_collect,
    ssimff_gpu_close, NULL,
};
