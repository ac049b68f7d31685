/* gst-qmetric: CUDA twin of cpu/psnr_hvs.c, bit-exact.
 *
 * Stage 1 of cpu/psnr_hvs.h (per 8x8 block: integer DCT of both blocks,
 * masking, the 64 CSF-weighted squared errors) runs one thread per block,
 * with the C code's float operations in the same order (nvcc --fmad=false,
 * IEEE division and square root, no flush to zero), so every term has the
 * C code's bits.  The terms go to device memory in the C reference's
 * summation order (block raster, then coefficient raster).
 *
 * Stage 2 (qm_hvs_accumulate(): all terms of a plane added one after the
 * other into ONE float) is reproduced exactly but in parallel, by the
 * decomposition of cuda/fsum.h: along a run of terms that keeps the
 * accumulator in one binade and holds no rounding tie, the float sum is the
 * accumulator plus an integer sum of the terms in units of the binade.
 *   hvs_blocks_kernel   stage 1; also a rough (double) sum per chunk of
 *                       HVS_CHUNK terms;
 *   hvs_guess_kernel    prefix of the rough sums: the binade the accumulator
 *                       is expected to be in at the start of each chunk;
 *   hvs_units_kernel    per chunk, the integer sum of its terms in units of
 *                       the expected binade and its two neighbours (or "tie");
 *   hvs_chain_kernel    one thread block per plane walks the chunks: a run of
 *                       chunks whose expected binade is the real one and that
 *                       stays inside it is added at once (block scan); a chunk
 *                       where that fails is done element-wise (again by runs,
 *                       with a real float addition at each binade crossing or
 *                       tie).  The rough sums only choose the fast path: the
 *                       result never depends on them.
 * The three accumulators go back to the host, where collect() finishes with
 * the C reference's qm_hvs_plane_error() and qm_hvs_scores().
 * The per-block code is cpu/psnr_hvs_block.h, the C code's own (one block
 * per thread here, st = n = 1).  tests/parity/host_arith checks it in this
 * shape on the host against cpu/psnr_hvs.c, and this decomposition of the
 * sum (psnr_hvs_sum.cuh), emulated, against qm_hvs_accumulate().
 *
 * Why not copy the terms back and add them on the host: 16 MB per frame at
 * 1080p 4:2:0 (65 MB at 4K), and ~4 million dependent float additions per
 * 1080p frame (several ms on one core); a single GPU thread is slower still.
 * On natural pictures a plane needs ~10-30 element-wise chunks (the first
 * binades, crossings, the odd tie), so the chain is a few dozen block-wide
 * scans per plane.
 */
#include <math.h>

#include "common.cuh"
#include "fsum.h"
#include "psnr_hvs_block.h"
#include "psnr_hvs_sum.cuh"

#define HVS_BLOCK_THREADS 128

typedef unsigned long long u64;

typedef struct HvsPlaneGeom {
    int nbx;              /* blocks per block row */
    int nblocks;
    int nchunks;
    int coff;             /* first chunk of the plane */
    long long toff;       /* first term of the plane */
} HvsPlaneGeom;

typedef struct HvsGeom {
    HvsPlaneGeom pl[3];
} HvsGeom;

/* Plane p of kernel parameters, selected without indexing them by a
 * run-time value (which would copy the whole parameter to local memory). */
__device__ __forceinline__ HvsPlaneGeom hvs_geom(const HvsGeom &g, int p)
{
    return p == 0 ? g.pl[0] : p == 1 ? g.pl[1] : g.pl[2];
}

__device__ __forceinline__ QmGpuPlane hvs_plane(const QmGpuPicture &pic, int p)
{
    return p == 0 ? pic.p[0] : p == 1 ? pic.p[1] : pic.p[2];
}

typedef struct HvsTabs {
    QmHvsTables t[3];
} HvsTabs;

typedef struct HvsGpu {
    int bpc;
    HvsGeom g;
    int max_nblocks, max_nchunks;
    float var64, var16;
    HvsTabs tabs;             /* a kernel parameter */
    float *d_terms;           /* every term of a frame (shared by the slots:
                                 one stream runs the frames one by one) */
    double *d_chunk_sum;
    unsigned char *d_guess;
    u64 *d_units;             /* [chunk][HVS_NCAND] */
    float *d_acc;             /* [slot][3] */
    float *h_acc;             /* pinned copy */
} HvsGpu;

/* ---- stage 1 ---- */

template <typename T>
__device__ __forceinline__ void hvs_load(int (&s)[64], const QmGpuPlane &pl,
                                         int shift, int x0, int y0)
{
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
            s[i * 8 + j] = qm_load<T>(pl, shift, x0 + j, y0 + i);
}

/* Stage 1 of one block pair: its 64 terms to o[], their (rough) sum
 * returned.  t is a kernel parameter: its entries are compile-time offsets
 * into constant memory, used as operands without occupying registers. */
template <typename T>
__device__ __forceinline__ float hvs_block(const QmGpuFrame &f, int p, int x0,
                                           int y0, const QmHvsTables &t,
                                           float var64, float var16,
                                           float4 *__restrict__ o)
{
    int s[64], d[64], tmp[64];
    float m, d_m;
    hvs_load<T>(s, hvs_plane(f.ref, p), f.ref.shift, x0, y0);
    qm_hvs_block_prep(&m, s, tmp, 1, 1, t.mask, var64, var16);
    hvs_load<T>(d, hvs_plane(f.dist, p), f.dist.shift, x0, y0);
    qm_hvs_block_prep(&d_m, d, tmp, 1, 1, t.mask, var64, var16);
    /* a distortion is masked by the busier of the two blocks */
    m = d_m > m ? d_m : m;
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < QM_HVS_COEFFS; k += 4) {
        float q[4];
#pragma unroll
        for (int i = 0; i < 4; i++)
            q[i] = qm_hvs_term(k + i, s[k + i], d[k + i], m, t.csf[k + i],
                               t.mask[k + i]);
        o[k >> 2] = make_float4(q[0], q[1], q[2], q[3]);
        sum += q[0] + q[1] + q[2] + q[3];
    }
    return sum;
}

/* One thread per 8x8 block (b in block raster order of plane blockIdx.y):
 * terms[toff + 64 b + k]; and per chunk of HVS_CHUNK_BLOCKS consecutive
 * blocks a rough sum of their terms (only used to guess binades). */
template <typename T>
__global__ void __launch_bounds__(HVS_BLOCK_THREADS)
hvs_blocks_kernel(QmGpuFrame f, HvsGeom g, const __grid_constant__ HvsTabs tabs,
                  float var64, float var16, float *__restrict__ terms,
                  double *__restrict__ chunk_sum)
{
    const int p = blockIdx.y;
    const HvsPlaneGeom G = hvs_geom(g, p);
    const int nb = G.nblocks;
    if ((int)(blockIdx.x * blockDim.x) >= nb)
        return;  /* the whole thread block: no shuffle partner is lost */
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    float bsum = 0.f;
    if (b < nb) {
        const int by = b / G.nbx, bx = b - by * G.nbx;
        const int x0 = QM_HVS_STEP * bx, y0 = QM_HVS_STEP * by;
        float4 *o = (float4 *)(terms + G.toff + (long long)b * QM_HVS_COEFFS);
        /* one copy per plane, each with its tables at fixed offsets */
        if (p == 0)
            bsum = hvs_block<T>(f, 0, x0, y0, tabs.t[0], var64, var16, o);
        else if (p == 1)
            bsum = hvs_block<T>(f, 1, x0, y0, tabs.t[1], var64, var16, o);
        else
            bsum = hvs_block<T>(f, 2, x0, y0, tabs.t[2], var64, var16, o);
    }
    /* rough chunk sum: the 16 lanes of a chunk (chunks start at multiples of
     * 16 blocks, so at lane 0 or 16 of a warp) */
    double cs = bsum;
#pragma unroll
    for (int o = HVS_CHUNK_BLOCKS / 2; o > 0; o >>= 1)
        cs += __shfl_xor_sync(0xffffffffu, cs, o);
    if (b < nb && b % HVS_CHUNK_BLOCKS == 0)
        chunk_sum[G.coff + b / HVS_CHUNK_BLOCKS] = cs;
}

/* ---- block-wide scans (blockDim.x a multiple of 32; the caller passes a
 * barrier between two calls that share sh) ---- */

template <typename T>
__device__ __forceinline__ T hvs_block_incl_scan(T v, T *sh)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const T y = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o)
            v += y;
    }
    if (lane == 31)
        sh[warp] = v;
    __syncthreads();
    if (warp == 0) {
        T w = lane < nwarps ? sh[lane] : (T)0;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const T y = __shfl_up_sync(0xffffffffu, w, o);
            if (lane >= o)
                w += y;
        }
        if (lane < nwarps)
            sh[lane] = w;
    }
    __syncthreads();
    if (warp > 0)
        v += sh[warp - 1];
    return v;
}

/* ---- binade guesses ---- */

/* One thread block per plane: the rough accumulator at the start of each
 * chunk, hence the binade exponent e it is expected in; guess = e - 1 (the
 * first of the HVS_NCAND candidates), at least 1. */
__global__ void __launch_bounds__(1024)
hvs_guess_kernel(HvsGeom g, const double *__restrict__ chunk_sum,
                 unsigned char *__restrict__ guess)
{
    __shared__ double sh[32];
    const HvsPlaneGeom G = hvs_geom(g, blockIdx.x);
    const int nc = G.nchunks;
    const double *cs = chunk_sum + G.coff;
    unsigned char *gs = guess + G.coff;
    const int per = (nc + (int)blockDim.x - 1) / (int)blockDim.x;
    const int k0 = min((int)threadIdx.x * per, nc), k1 = min(k0 + per, nc);
    double own = 0.;
    for (int k = k0; k < k1; k++)
        own += cs[k];
    double est = hvs_block_incl_scan(own, sh) - own;
    for (int k = k0; k < k1; k++) {
        const int e = qm_fsum_from_float((float)est).e;
        gs[k] = (unsigned char)(e > 1 ? e - 1 : 1);
        est += cs[k];
    }
}

/* One warp per chunk: the sum of its terms in units of each candidate
 * binade, or HVS_TIE when a term is an exact half unit there. */
__global__ void __launch_bounds__(256)
hvs_units_kernel(HvsGeom g, const float *__restrict__ terms,
                 const unsigned char *__restrict__ guess, u64 *__restrict__ units)
{
    const HvsPlaneGeom G = hvs_geom(g, blockIdx.y);
    const int k = (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    const int lane = threadIdx.x & 31;
    if (k >= G.nchunks)
        return;  /* whole warp */
    const long long first = (long long)k * HVS_CHUNK;
    const long long left = (long long)G.nblocks * QM_HVS_COEFFS - first;
    const int n4 = (int)(left < HVS_CHUNK ? left : HVS_CHUNK) / 4;
    const float4 *t4 = (const float4 *)(terms + G.toff + first);
    const int e0 = guess[G.coff + k];
    u64 sum[HVS_NCAND];
    int tie[HVS_NCAND];
#pragma unroll
    for (int c = 0; c < HVS_NCAND; c++) {
        sum[c] = 0;
        tie[c] = 0;
    }
    for (int i = lane; i < n4; i += 32) {
        const float4 v = __ldg(t4 + i);
        const float x[4] = { v.x, v.y, v.z, v.w };
#pragma unroll
        for (int c = 0; c < HVS_NCAND; c++) {
#pragma unroll
            for (int m = 0; m < 4; m++) {
                int tt;
                sum[c] += qm_fsum_units(x[m], e0 + c, &tt);
                tie[c] |= tt;
            }
        }
    }
#pragma unroll
    for (int c = 0; c < HVS_NCAND; c++) {
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            sum[c] += __shfl_xor_sync(0xffffffffu, sum[c], o);
        tie[c] = __any_sync(0xffffffffu, tie[c]);
    }
    if (lane == 0) {
        u64 *u = units + ((size_t)G.coff + k) * HVS_NCAND;
#pragma unroll
        for (int c = 0; c < HVS_NCAND; c++)
            u[c] = tie[c] ? HVS_TIE : sum[c];
    }
}

/* ---- the chain ---- */

/* The n <= blockDim.x terms t[] added to st exactly, one term per thread:
 * repeatedly, the longest run from the first term not yet added that stays
 * in st's binade without a tie is added as an integer (block scan), then the
 * term that stops it is added as a float by its thread. */
__device__ QmFsum hvs_exact_chunk(const float *__restrict__ t, int n, QmFsum st,
                                  u64 *sh_scan, uint32_t *sh_a, int *sh_e)
{
    const int tid = threadIdx.x;
    const float x = tid < n ? t[tid] : 0.f;
    int s = 0;
    while (s < n) {
        u64 r = 0;
        if (tid >= s && tid < n) {
            int tie;
            const uint32_t u = qm_fsum_units(x, st.e, &tie);
            r = tie ? HVS_BIG : u;
        }
        /* terms before s add 0, so their prefix is ok: the ok threads are
         * exactly 0 .. j-1 */
        const u64 incl = hvs_block_incl_scan(r, sh_scan);
        const int ok = tid < n && st.a + incl <= QM_FSUM_LIMIT;
        const int j = __syncthreads_count(ok);
        if (j > 0 && tid == j - 1)
            *sh_a = st.a + (uint32_t)incl;
        __syncthreads();
        if (j > 0)
            st.a = *sh_a;
        if (j < n) {
            __syncthreads();  /* sh_a read by all before it is rewritten */
            if (tid == j) {
                const QmFsum ns = qm_fsum_add(st, x);
                *sh_a = ns.a;
                *sh_e = ns.e;
            }
            __syncthreads();
            st.a = *sh_a;
            st.e = *sh_e;
            s = j + 1;
        } else {
            s = n;
        }
    }
    return st;
}

/* One thread block (HVS_CHAIN_THREADS) per plane: acc[p] = the float sum of
 * the plane's terms in order, as qm_hvs_accumulate() forms it. */
__global__ void __launch_bounds__(HVS_CHAIN_THREADS)
hvs_chain_kernel(HvsGeom g, const float *__restrict__ terms,
                 const unsigned char *__restrict__ guess,
                 const u64 *__restrict__ units, float *__restrict__ acc)
{
    __shared__ u64 sh_scan[32];
    __shared__ uint32_t sh_a;
    __shared__ int sh_e;
    const int p = blockIdx.x, tid = threadIdx.x, nthr = blockDim.x;
    const HvsPlaneGeom G = hvs_geom(g, p);
    const int nc = G.nchunks;
    const long long nt = (long long)G.nblocks * QM_HVS_COEFFS;
    const float *t = terms + G.toff;
    const unsigned char *gs = guess + G.coff;
    const u64 *us = units + (size_t)G.coff * HVS_NCAND;
    QmFsum st;
    st.e = 1;
    st.a = 0;  /* 0.f */
    int k0 = 0;
    while (k0 < nc) {
        /* fast path: chunks k0 .. k0 + nthr - 1, each added at once if its
         * units were formed in st's binade and the run stays inside it */
        const int k = k0 + tid;
        u64 v = HVS_BIG;
        if (k < nc) {
            const int c = st.e - (int)gs[k];
            if (c >= 0 && c < HVS_NCAND) {
                const u64 u = us[(size_t)k * HVS_NCAND + c];
                if (u != HVS_TIE)
                    v = u;
            }
        }
        const u64 incl = hvs_block_incl_scan(v, sh_scan);
        const int ok = k < nc && st.a + incl <= QM_FSUM_LIMIT;
        const int j = __syncthreads_count(ok);  /* ok is a prefix */
        if (j > 0 && tid == j - 1)
            sh_a = st.a + (uint32_t)incl;
        __syncthreads();
        if (j > 0)
            st.a = sh_a;
        k0 += j;
        if (j < nthr && k0 < nc) {
            /* chunk k0 crosses a binade, holds a tie, or was guessed in
             * another binade: term by term */
            const long long first = (long long)k0 * HVS_CHUNK;
            const int n = (int)(nt - first < HVS_CHUNK ? nt - first : HVS_CHUNK);
            st = hvs_exact_chunk(t + first, n, st, sh_scan, &sh_a, &sh_e);
            k0++;
        }
    }
    if (tid == 0)
        acc[p] = qm_fsum_to_float(st);
}

/* ---- the twin ---- */

static void hvs_gpu_close(void *priv)
{
    HvsGpu *s = (HvsGpu *)priv;
    cudaFree(s->d_terms);
    cudaFree(s->d_chunk_sum);
    cudaFree(s->d_guess);
    cudaFree(s->d_units);
    cudaFree(s->d_acc);
    cudaFreeHost(s->h_acc);
    s->d_terms = NULL;
    s->d_chunk_sum = NULL;
    s->d_guess = NULL;
    s->d_units = NULL;
    s->d_acc = NULL;
    s->h_acc = NULL;
}

static int hvs_gpu_alloc(HvsGpu *s, unsigned n_slots, long long nterms,
                         int nchunks)
{
    QM_CU_TRY(cudaMalloc(&s->d_terms, (size_t)nterms * sizeof(float)));
    QM_CU_TRY(cudaMalloc(&s->d_chunk_sum, (size_t)nchunks * sizeof(double)));
    QM_CU_TRY(cudaMalloc(&s->d_guess, (size_t)nchunks));
    QM_CU_TRY(cudaMalloc(&s->d_units, (size_t)nchunks * HVS_NCAND * sizeof(u64)));
    QM_CU_TRY(cudaMalloc(&s->d_acc, (size_t)n_slots * 3 * sizeof(float)));
    QM_CU_TRY(cudaMallocHost(&s->h_acc, (size_t)n_slots * 3 * sizeof(float)));
    return 0;
}

static int hvs_gpu_init(void *priv, const QmMetricConfig *cfg, unsigned n_slots,
                        QmStream st)
{
    HvsGpu *s = (HvsGpu *)priv;
    int err = qm_hvs_check(cfg);  /* the C reference's limits */
    if (err)
        return err;
    s->bpc = cfg->bpc;
    s->var64 = qm_hvs_var64();
    s->var16 = qm_hvs_var16();
    long long nterms = 0;
    int nchunks = 0;
    s->max_nblocks = s->max_nchunks = 0;
    for (int p = 0; p < 3; p++) {
        int pw, ph;
        qm_plane_size(cfg->w, cfg->h, cfg->chroma, p, &pw, &ph);
        qm_hvs_tables(&s->tabs.t[p], p);
        HvsPlaneGeom *G = &s->g.pl[p];
        G->nbx = qm_hvs_nblocks(pw);
        G->nblocks = qm_hvs_nblocks(pw) * qm_hvs_nblocks(ph);
        G->nchunks = (G->nblocks + HVS_CHUNK_BLOCKS - 1) / HVS_CHUNK_BLOCKS;
        G->toff = nterms;
        G->coff = nchunks;
        nterms += (long long)G->nblocks * QM_HVS_COEFFS;
        nchunks += G->nchunks;
        s->max_nblocks = QM_MAX(s->max_nblocks, G->nblocks);
        s->max_nchunks = QM_MAX(s->max_nchunks, G->nchunks);
    }
    if (s->max_nblocks == 0)
        return QM_ENOTSUP;  /* below 8x8: refused by the C code's min_w/min_h */
    (void)st;
    err = hvs_gpu_alloc(s, n_slots, nterms, nchunks);
    if (err)
        hvs_gpu_close(s);
    return err;
}

static int hvs_gpu_submit(void *priv, const QmGpuFrame *f, unsigned slot,
                          QmStream st)
{
    HvsGpu *s = (HvsGpu *)priv;
    cudaStream_t cs = (cudaStream_t)st;
    float *acc = s->d_acc + 3 * slot;

    const dim3 g1((s->max_nblocks + HVS_BLOCK_THREADS - 1) / HVS_BLOCK_THREADS, 3);
    if (f->ref.bpc == 8)
        hvs_blocks_kernel<uint8_t><<<g1, HVS_BLOCK_THREADS, 0, cs>>>(
            *f, s->g, s->tabs, s->var64, s->var16, s->d_terms, s->d_chunk_sum);
    else
        hvs_blocks_kernel<uint16_t><<<g1, HVS_BLOCK_THREADS, 0, cs>>>(
            *f, s->g, s->tabs, s->var64, s->var16, s->d_terms, s->d_chunk_sum);
    QM_CU_TRY(cudaGetLastError());

    hvs_guess_kernel<<<3, 1024, 0, cs>>>(s->g, s->d_chunk_sum, s->d_guess);
    QM_CU_TRY(cudaGetLastError());

    const int warps = 256 / 32;
    const dim3 g3((s->max_nchunks + warps - 1) / warps, 3);
    hvs_units_kernel<<<g3, 256, 0, cs>>>(s->g, s->d_terms, s->d_guess, s->d_units);
    QM_CU_TRY(cudaGetLastError());

    hvs_chain_kernel<<<3, HVS_CHAIN_THREADS, 0, cs>>>(s->g, s->d_terms, s->d_guess,
                                                      s->d_units, acc);
    QM_CU_TRY(cudaGetLastError());

    QM_CU_TRY(cudaMemcpyAsync(s->h_acc + 3 * slot, acc, 3 * sizeof(float),
                              cudaMemcpyDeviceToHost, cs));
    return 0;
}

static int hvs_gpu_collect(void *priv, unsigned slot, QmRows *out)
{
    HvsGpu *s = (HvsGpu *)priv;
    double err[3], v[4];
    for (int p = 0; p < 3; p++)
        err[p] = qm_hvs_plane_error(s->h_acc[3 * slot + p], (long)s->g.pl[p].nblocks,
                                    s->bpc);
    qm_hvs_scores(err, v);
    for (unsigned i = 0; i < 4; i++)
        qm_rows_set(out, 0, i, v[i]);
    return 0;
}

extern "C" const QmCudaFuncs qm_cuda_psnr_hvs = {
    sizeof(HvsGpu), hvs_gpu_init, hvs_gpu_submit, hvs_gpu_collect, hvs_gpu_close, NULL,
};
