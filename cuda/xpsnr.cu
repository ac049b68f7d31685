/* gst-qmetric: CUDA twin of cpu/xpsnr.c (FFmpeg n7.1's xpsnr filter; the
 * definition is in cpu/xpsnr.h, the block arithmetic in cpu/xpsnr_block.h).
 *
 * One kernel launch and one 24-byte copy per frame:
 *
 *   xpsnr_kernel   one thread block per luma block of the picture (about
 *                  500 at every size: the block size grows with the
 *                  picture).  Its threads walk the block's samples (2x2
 *                  groups above 2048x1152), 32 consecutive columns a warp:
 *                  the exact integer SSE of the luma block and of the
 *                  chroma blocks with its index, the spatial high-pass sum
 *                  over the active samples and the temporal sum against the
 *                  reference luma of the previous frames; the same pass
 *                  stores this frame's reference luma for the next frames.
 *                  The five uint64 sums are reduced in the block and
 *                  stored; the last block to finish turns them into the
 *                  weights (in parallel), smooths them (one thread: each
 *                  step reads the previous one's result), forms the
 *                  products in parallel and adds them in raster order (one
 *                  thread a plane, from shared memory), and writes each
 *                  plane's integer WSSE: the steps of qm_xpsnr_finish(),
 *                  with the same xpsnr_block.h functions, so the same bits.
 *   xpsnr_plain_kernel  pictures under 2025 samples (no blocks): the
 *                  planes' exact SSE.
 *
 * History: a ring of three device pictures of raw reference luma (the
 * frames i, i - 1, i - 2), zero at the start as the filter's memory is;
 * frame i reads the two before it and writes its own over frame i - 3's.
 * The stream runs the frames in order, so nothing is copied; which buffer
 * holds which frame is host state advanced by submit(), in frame order.
 *
 * Integer sums are exact in any order and the double steps are those of
 * the C reference (IEEE division and square root, no contraction:
 * --fmad=false), so the WSSE is bit-exact (cuda_tol 0); collect() turns it
 * into dB with the C reference's qm_xpsnr_db().
 */
#include <stdlib.h>
#include <string.h>

#include "common.cuh"
#include "xpsnr.h"
#include "xpsnr_block.h"

#define NT 256          /* threads per block at most: 8 warps */
#define NWARPS (NT / 32)
#define NSUM 5          /* sse y, u, v, spatial, temporal */
#define CH 512          /* products staged in shared memory at a time */

enum { S_SSE_Y, S_SSE_U, S_SSE_V, S_SA, S_TA };

typedef struct {
    QmXpsnrGeom g;
    void *ring[3];                 /* reference luma of frames i, i-1, i-2 */
    unsigned long long *blk;       /* nblk x NSUM */
    double *w;                     /* nblk weights */
    unsigned *done;                /* blocks finished in the current frame */
    unsigned long long *d_wsse;    /* [slot][3] */
    unsigned long long *h_wsse;    /* pinned copy */
    unsigned frame;                /* frames submitted */
    int threads;                   /* per block: about 8 samples each */
} XpsnrGpu;

/* Sum NSUM values over the block (whole warps); thread 0 gets the totals. */
__device__ void block_sums(unsigned long long v[NSUM])
{
    __shared__ unsigned long long part[NSUM][NWARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
#pragma unroll
    for (int j = 0; j < NSUM; j++) {
        for (int o = 16; o > 0; o >>= 1)
            v[j] += __shfl_down_sync(0xffffffffu, v[j], o);
        if (lane == 0)
            part[j][warp] = v[j];
    }
    __syncthreads();
    if (threadIdx.x == 0) {
#pragma unroll
        for (int j = 0; j < NSUM; j++) {
            v[j] = 0;
            for (int k = 0; k < nwarps; k++)
                v[j] += part[j][k];
        }
    }
}

template <typename T>
__device__ __forceinline__ int sample(const QmGpuPicture &p, int plane, int x, int y)
{
    return qm_load<T>(p.p[plane], p.shift, x, y);
}

/* (ref - dist)^2 summed over a rectangle of plane p, the block's threads
 * 32 columns a warp. */
template <typename T>
__device__ unsigned long long rect_sse(const QmGpuFrame &f, int p, int x0, int y0,
                                       int w, int h)
{
    unsigned long long s = 0;
    for (int y = threadIdx.x >> 5; y < h; y += blockDim.x >> 5)
        for (int x = threadIdx.x & 31; x < w; x += 32) {
            const long long e = sample<T>(f.ref, p, x0 + x, y0 + y) -
                                sample<T>(f.dist, p, x0 + x, y0 + y);
            s += (unsigned long long)(e * e);
        }
    return s;
}

/* Luma activity and SSE of block blk, samples one at a time (ds 1). */
template <typename T>
__device__ void luma_block_1(const QmGpuFrame &f, const QmXpsnrGeom &g,
                             const QmXpsnrBlk &k, T *cur, const T *m1, const T *m2,
                             unsigned long long v[NSUM])
{
    const QmGpuPicture &r = f.ref;
    for (int y = threadIdx.x >> 5; y < k.bh; y += blockDim.x >> 5) {
        const int gy = k.y0 + y;
        for (int x = threadIdx.x & 31; x < k.bw; x += 32) {
            const int gx = k.x0 + x;
            const size_t i = (size_t)gy * g.w + gx;
            const int c = sample<T>(r, 0, gx, gy);
            const long long e = c - sample<T>(f.dist, 0, gx, gy);
            v[S_SSE_Y] += (unsigned long long)(e * e);
            const int cs = qm_xpsnr_s16(c), p1 = qm_xpsnr_s16(m1[i]);
            const int t = g.second_order ? cs - 2 * p1 + qm_xpsnr_s16(m2[i]) : cs - p1;
            v[S_TA] += 2u * (unsigned)(t < 0 ? -t : t);  /* XPSNR_GAMMA */
            cur[i] = (T)c;
            if (x >= k.xa && x < k.wa && y >= k.ya && y < k.ha) {
#define S(dx, dy) qm_xpsnr_s16(sample<T>(r, 0, gx + (dx), gy + (dy)))
                const int cross = S(-1, 0) + S(1, 0) + S(0, -1) + S(0, 1);
                const int diag = S(-1, -1) + S(1, -1) + S(-1, 1) + S(1, 1);
#undef S
                v[S_SA] += qm_xpsnr_hp3(cs, cross, diag);
            }
        }
    }
}

/* The same over 2x2 groups (ds 2: above 2048x1152; even sizes). */
template <typename T>
__device__ void luma_block_2(const QmGpuFrame &f, const QmXpsnrGeom &g,
                             const QmXpsnrBlk &k, T *cur, const T *m1, const T *m2,
                             unsigned long long v[NSUM])
{
    const QmGpuPicture &r = f.ref;
    const bool spatial = k.wa > 12;  /* n7.1 drops the filter's result else */
    for (int y = 2 * (threadIdx.x >> 5); y < k.bh; y += 2 * (blockDim.x >> 5)) {
        for (int x = 2 * (threadIdx.x & 31); x < k.bw; x += 64) {
            int sc = 0, s1 = 0, s2 = 0;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const int gx = k.x0 + x + (j & 1), gy = k.y0 + y + (j >> 1);
                const size_t i = (size_t)gy * g.w + gx;
                const int c = sample<T>(r, 0, gx, gy);
                const long long e = c - sample<T>(f.dist, 0, gx, gy);
                v[S_SSE_Y] += (unsigned long long)(e * e);
                sc += qm_xpsnr_s16(c);
                s1 += qm_xpsnr_s16(m1[i]);
                if (g.second_order)
                    s2 += qm_xpsnr_s16(m2[i]);
                cur[i] = (T)c;
            }
            const int t = g.second_order ? sc - 2 * s1 + s2 : sc - s1;
            v[S_TA] += 2u * (unsigned)(t < 0 ? -t : t);  /* XPSNR_GAMMA */
            if (spatial && x >= k.xa && x < k.wa && y >= k.ya && y < k.ha) {
                const int gx = k.x0 + x, gy = k.y0 + y;
#define S(dx, dy) qm_xpsnr_s16(sample<T>(r, 0, gx + (dx), gy + (dy)))
                const int vert = S(0, -1) + S(1, -1) + S(0, 2) + S(1, 2);
                const int horz = S(-1, 0) + S(2, 0) + S(-1, 1) + S(2, 1);
                const int corner = S(-1, -1) + S(2, -1) + S(-1, 2) + S(2, 2);
                const int outer = S(-1, -2) + S(0, -2) + S(1, -2) + S(2, -2) +
                                  S(-1, 3) + S(0, 3) + S(1, 3) + S(2, 3) +
                                  S(-2, -1) + S(-2, 0) + S(-2, 1) + S(-2, 2) +
                                  S(3, -1) + S(3, 0) + S(3, 1) + S(3, 2);
#undef S
                v[S_SA] += qm_xpsnr_hpds(sc, vert, horz, corner, outer);
            }
        }
    }
}

/* The last block of a frame: qm_xpsnr_finish() on the blocks' sums. */
__device__ void finish(const QmXpsnrGeom &g, const unsigned long long *blk, double *w,
                       unsigned long long *wsse)
{
    __shared__ double prod[3][CH];
    /* other blocks' sums: read past the (incoherent) L1 */
    for (int k = threadIdx.x; k < g.nblk; k += blockDim.x) {
        const QmXpsnrBlk b = qm_xpsnr_block(&g, k);
        w[k] = qm_xpsnr_weight(&b, __ldcg(blk + (size_t)k * NSUM + S_SA),
                               __ldcg(blk + (size_t)k * NSUM + S_TA), g.floor);
    }
    __syncthreads();
    if (g.smooth && threadIdx.x == 0)
        qm_xpsnr_smooth(&g, w);
    __syncthreads();
    double acc = 0.0;  /* thread p: plane p's sum, in raster order */
    for (int base = 0; base < g.nblk; base += CH) {
        const int n = min(CH, g.nblk - base);
        for (int i = threadIdx.x; i < g.nplanes * n; i += blockDim.x) {
            const int p = i / n, k = base + i % n;
            prod[p][i % n] = (double)__ldcg(blk + (size_t)k * NSUM + p) * w[k];
        }
        __syncthreads();
        if (threadIdx.x < g.nplanes)
            for (int j = 0; j < n; j++)
                acc += prod[threadIdx.x][j];
        __syncthreads();
    }
    if (threadIdx.x < g.nplanes)
        wsse[threadIdx.x] = qm_xpsnr_wsse(acc, g.avg_act);
}

template <typename T>
__global__ void __launch_bounds__(NT)
xpsnr_kernel(QmGpuFrame f, const __grid_constant__ QmXpsnrGeom g, T *__restrict__ cur,
             const T *__restrict__ m1, const T *__restrict__ m2,
             unsigned long long *__restrict__ blk,
             double *__restrict__ w, unsigned *__restrict__ done,
             unsigned long long *__restrict__ wsse)
{
    __shared__ bool last;
    const int kb = blockIdx.x;
    const QmXpsnrBlk k = qm_xpsnr_block(&g, kb);
    unsigned long long v[NSUM] = { 0, 0, 0, 0, 0 };
    if (g.ds == 1)
        luma_block_1<T>(f, g, k, cur, m1, m2, v);
    else
        luma_block_2<T>(f, g, k, cur, m1, m2, v);
#pragma unroll
    for (int p = 1; p < 3; p++) {  /* constant indices: v stays in registers */
        if (p < g.nplanes) {
            int x0, y0, bw, bh;
            qm_xpsnr_cblock(&g, p, kb, &x0, &y0, &bw, &bh);
            v[p] = rect_sse<T>(f, p, x0, y0, bw, bh);
        }
    }
    block_sums(v);
    if (threadIdx.x == 0) {
#pragma unroll
        for (int j = 0; j < NSUM; j++)
            blk[(size_t)kb * NSUM + j] = v[j];
        __threadfence();
        last = atomicAdd(done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    finish(g, blk, w, wsse);
    if (threadIdx.x == 0)
        *done = 0;  /* for the next frame, which the stream runs after */
}

template <typename T>
__global__ void __launch_bounds__(NT)
xpsnr_plain_kernel(QmGpuFrame f, const __grid_constant__ QmXpsnrGeom g,
                   unsigned long long *__restrict__ wsse)
{
    unsigned long long v[NSUM] = { 0, 0, 0, 0, 0 };
#pragma unroll
    for (int p = 0; p < 3; p++)
        if (p < g.nplanes)
            v[p] = rect_sse<T>(f, p, 0, 0, g.pw[p], g.ph[p]);
    block_sums(v);
    if (threadIdx.x == 0)
        for (int p = 0; p < g.nplanes; p++)
            wsse[p] = v[p];
}

static void xpsnr_gpu_close(void *priv)
{
    XpsnrGpu *s = (XpsnrGpu *)priv;
    for (int i = 0; i < 3; i++)
        cudaFree(s->ring[i]);
    cudaFree(s->blk);
    cudaFree(s->w);
    cudaFree(s->done);
    cudaFree(s->d_wsse);
    cudaFreeHost(s->h_wsse);
    memset(s, 0, sizeof(*s));
}

static int xpsnr_gpu_init_(XpsnrGpu *s, const QmMetricConfig *cfg, unsigned n_slots,
                           cudaStream_t st)
{
    const size_t n3 = (size_t)n_slots * 3 * sizeof(unsigned long long);
    QM_CU_TRY(cudaMalloc(&s->d_wsse, n3));
    QM_CU_TRY(cudaMallocHost(&s->h_wsse, n3));
    if (!s->g.b)
        return 0;
    /* small blocks (4x4 at 64x48) get one warp, 1080p's 64x64 eight */
    s->threads = 32 * ((s->g.b * s->g.b / 8 + 31) / 32);
    s->threads = s->threads < 32 ? 32 : s->threads > NT ? NT : s->threads;
    const size_t px = (size_t)cfg->w * cfg->h * (cfg->bpc > 8 ? 2 : 1);
    for (int i = 0; i < 3; i++) {
        QM_CU_TRY(cudaMalloc(&s->ring[i], px));
        QM_CU_TRY(cudaMemsetAsync(s->ring[i], 0, px, st));
    }
    QM_CU_TRY(cudaMalloc(&s->blk, (size_t)s->g.nblk * NSUM * sizeof(unsigned long long)));
    QM_CU_TRY(cudaMalloc(&s->w, (size_t)s->g.nblk * sizeof(double)));
    QM_CU_TRY(cudaMalloc(&s->done, sizeof(unsigned)));
    QM_CU_TRY(cudaMemsetAsync(s->done, 0, sizeof(unsigned), st));
    return 0;
}

static int xpsnr_gpu_init(void *priv, const QmMetricConfig *cfg, unsigned n_slots,
                          QmStream st)
{
    XpsnrGpu *s = (XpsnrGpu *)priv;
    memset(s, 0, sizeof(*s));
    const int err = qm_xpsnr_setup(&s->g, cfg->w, cfg->h, cfg->bpc, cfg->chroma,
                                   qm_xpsnr_fps(cfg->opt));
    if (err)
        return err;
    const int e = xpsnr_gpu_init_(s, cfg, n_slots, (cudaStream_t)st);
    if (e)
        xpsnr_gpu_close(s);
    return e;
}

template <typename T>
static void launch(XpsnrGpu *s, const QmGpuFrame *f, unsigned long long *wsse,
                   cudaStream_t cs)
{
    if (!s->g.b) {
        xpsnr_plain_kernel<T><<<1, NT, 0, cs>>>(*f, s->g, wsse);
        return;
    }
    /* frame i: ring[i % 3]; i - 1 and i - 2 in the two others */
    const unsigned c = s->frame % 3;
    xpsnr_kernel<T><<<s->g.nblk, s->threads, 0, cs>>>(*f, s->g, (T *)s->ring[c],
                                               (const T *)s->ring[(c + 2) % 3],
                                               (const T *)s->ring[(c + 1) % 3],
                                               s->blk, s->w, s->done, wsse);
}

static int xpsnr_gpu_submit(void *priv, const QmGpuFrame *f, unsigned slot, QmStream st)
{
    XpsnrGpu *s = (XpsnrGpu *)priv;
    cudaStream_t cs = (cudaStream_t)st;
    unsigned long long *d = s->d_wsse + 3 * slot;
    if (f->ref.bpc == 8)
        launch<uint8_t>(s, f, d, cs);
    else
        launch<uint16_t>(s, f, d, cs);
    s->frame++;
    QM_CU_TRY(cudaGetLastError());
    QM_CU_TRY(cudaMemcpyAsync(s->h_wsse + 3 * slot, d, 3 * sizeof(*d),
                              cudaMemcpyDeviceToHost, cs));
    return 0;
}

static int xpsnr_gpu_collect(void *priv, unsigned slot, QmRows *out)
{
    XpsnrGpu *s = (XpsnrGpu *)priv;
    for (int p = 0; p < s->g.nplanes; p++)
        qm_rows_set(out, 0, (unsigned)p, qm_xpsnr_db(s->h_wsse[3 * slot + p], s->g.num[p]));
    return 0;
}

extern "C" const QmCudaFuncs qm_cuda_xpsnr = {
    sizeof(XpsnrGpu), xpsnr_gpu_init, xpsnr_gpu_submit, xpsnr_gpu_collect,
    xpsnr_gpu_close, NULL,
};
