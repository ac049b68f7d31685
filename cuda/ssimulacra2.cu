/* gst-qmetric: CUDA twin of cpu/ssimulacra2.c (SSIMULACRA2, libjxl
 * v0.12.0's tool).  The whole pyramid stays on the device; per frame one
 * kernel reads the pictures and a graph captured once per slot does the
 * rest, ending with a copy of 108 sums (6 scales x 3 channels x 6) into the
 * slot's pinned buffer.  Per scale:
 *
 *   s2_conv_kernel    scale 0: one thread per pixel, both pictures'
 *                     YCbCr -> 16-bit R'G'B' -> linear light (stored for the
 *                     next scale) -> XYB;
 *   s2_down_kernel    the other scales: the 2x2 average of the previous
 *                     scale's linear planes -> linear light and XYB;
 *   s2_hblur_kernel   the horizontal pass of the 15 blurred planes (3
 *                     channels x {img1, img2, img1^2, img2^2, img1 img2}):
 *                     a block takes 32 rows of one channel, a warp one of
 *                     the five planes, a thread one row; tiles of 32
 *                     columns (and the 6 + 4 the filter reaches beyond) of
 *                     both pictures are staged in shared memory by
 *                     coalesced loads (the next tile's while this one is
 *                     computed), the outputs leave the same way;
 *   s2_vblur_kernel   the vertical pass: a thread runs one column of one
 *                     plane top to bottom (loads coalesced across the warp,
 *                     each row read once, ten rows ahead);
 *   s2_maps_kernel    per pixel the 1 - SSIM' and edge terms of the three
 *                     channels; a block's 32 x 32 pixels summed per column
 *                     in order, then columns and warps in a fixed order;
 *   s2_total_kernel   at the end, each scale's 18 sums over its blocks.
 * collect() applies the C reference's qm_ssimu2_score().
 *
 * The filters are recursive: a thread runs a whole row or column, so a
 * scale's time is bound by its lines' length more than by its pixels, and
 * scale 0 alone leaves most of the GPU idle.  The graph therefore forks:
 * scale 0 runs on the element's stream while a side stream runs the
 * downsampling chain and scales 1.. (their lines together about as long as
 * scale 0's), each branch with its own planes; the branches join before
 * s2_total_kernel.  The arithmetic and its order within each scale are the
 * same either way.
 *
 * Exactness: the per-pixel arithmetic is cpu/ssimulacra2_pixel.h, the C
 * code's own (fmaf where the reference fuses, IEEE division, no other
 * contraction: --fmad=false), and each filter runs the same sequence of
 * operations per line (the horizontal pass's singles and groups of four at
 * the same positions), so every blurred value and every per-pixel term is
 * the C code's bit for bit.  Only the double sums differ: a tree per block
 * and over blocks instead of the reference's raster order (relative
 * ~1e-15), so the score is within 1e-9 of the C code's (cuda_tol).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.cuh"
#include "ssimulacra2.h"

#define S2_PX 32           /* pixel kernels: 32 x 8 threads */
#define S2_PY 8
#define S2_MROWS 32        /* s2_maps_kernel: rows per block */
#define S2_HROWS 32        /* s2_hblur_kernel: rows per block */
#define S2_TW 32           /* its tile width */
#define S2_HALO 10         /* the filter reads 6 columns left, 4 right */
#define S2_IPITCH (S2_TW + S2_HALO + 1)  /* odd: rows hit distinct banks */
#define S2_VX 128          /* s2_vblur_kernel: columns per block */
#define S2_NSUM 18         /* per scale: 3 channels x 6 sums */

typedef struct S2Scale {
    int w, h;
    size_t plane;          /* w * h */
    int gx, gy;            /* grid of the pixel kernels */
    int mgy, nblocks;      /* s2_maps_kernel's grid: gx x mgy blocks */
} S2Scale;

typedef struct S2Gpu {
    int w, h, bpc, ss_x, ss_y, cw, ch, n_scales;
    QmOptValues opt;
    S2Scale sc[QM_SSIMU2_SCALES];
    int sw[QM_SSIMU2_SCALES], sh[QM_SSIMU2_SCALES];
    float *d_lin[2];       /* linear planes of scale s in d_lin[s & 1] */
    float *d_xyb;          /* scale 0: 6 planes: picture 1 X Y B, picture 2 */
    float *d_h, *d_v;      /* scale 0: 15 planes: horizontal, vertical pass */
    float *d_xyb1, *d_h1, *d_v1;  /* the same for the side branch's scales */
    cudaStream_t side;     /* scales 1.. (NULL with one scale) */
    cudaEvent_t fork_ev, join_ev;
    double *d_part;        /* S2_NSUM per block of every scale */
    double *d_sums, *h_sums;  /* [slot][QmSsimu2Sums] */
    cudaGraphExec_t *exec; /* per slot: everything after s2_conv_kernel */
    unsigned n_slots;
} S2Gpu;

/* ---- kernels ---- */

typedef struct S2ConvArgs {
    QmSsimu2Conv conv[2];
    int w, h, ss_x, ss_y, cw, ch;
    size_t plane;
    float *lin, *xyb;
} S2ConvArgs;

template <typename T>
__global__ void __launch_bounds__(S2_PX * S2_PY)
s2_conv_kernel(QmGpuFrame f, S2ConvArgs a)
{
    const int x = blockIdx.x * S2_PX + threadIdx.x % S2_PX;
    const int y = blockIdx.y * S2_PY + threadIdx.x / S2_PX;
    if (x >= a.w || y >= a.h)
        return;
    /* the stored chroma planes: an odd size's last column/row included */
    const int cx = min(x >> a.ss_x, a.cw - 1), cy = min(y >> a.ss_y, a.ch - 1);
    const size_t at = (size_t)y * a.w + x;
    for (int i = 0; i < 2; i++) {
        const QmGpuPicture &p = i ? f.dist : f.ref;
        uint16_t rgb[3];
        qm_ssimu2_rgb16(qm_load<T>(p.p[0], p.shift, x, y),
                        qm_load<T>(p.p[1], p.shift, cx, cy),
                        qm_load<T>(p.p[2], p.shift, cx, cy), &a.conv[i], rgb);
        float lin[3], xyb[3];
        for (int c = 0; c < 3; c++) {
            lin[c] = qm_ssimu2_linear(rgb[c]);
            a.lin[(i * 3 + c) * a.plane + at] = lin[c];
        }
        qm_ssimu2_xyb(lin[0], lin[1], lin[2], xyb);
        for (int c = 0; c < 3; c++)
            a.xyb[(i * 3 + c) * a.plane + at] = xyb[c];
    }
}

/* (w, h): the previous scale; the output is ((w + 1) / 2, (h + 1) / 2) */
__global__ void __launch_bounds__(S2_PX * S2_PY)
s2_down_kernel(const float *__restrict__ in, int w, int h, float *__restrict__ lin,
               float *__restrict__ xyb)
{
    const int ow = (w + 1) / 2, oh = (h + 1) / 2;
    const int ox = blockIdx.x * S2_PX + threadIdx.x % S2_PX;
    const int oy = blockIdx.y * S2_PY + threadIdx.x / S2_PX;
    if (ox >= ow || oy >= oh)
        return;
    const size_t plane = (size_t)w * h, oplane = (size_t)ow * oh;
    const int x0 = 2 * ox, x1 = min(2 * ox + 1, w - 1);
    const int y0 = 2 * oy, y1 = min(2 * oy + 1, h - 1);
    const size_t at = (size_t)oy * ow + ox;
    for (int i = 0; i < 2; i++) {
        float v[3], o[3];
        for (int c = 0; c < 3; c++) {
            const float *p = in + (i * 3 + c) * plane;
            v[c] = qm_ssimu2_avg4(p[(size_t)y0 * w + x0], p[(size_t)y0 * w + x1],
                                  p[(size_t)y1 * w + x0], p[(size_t)y1 * w + x1]);
            lin[(i * 3 + c) * oplane + at] = v[c];
        }
        qm_ssimu2_xyb(v[0], v[1], v[2], o);
        for (int c = 0; c < 3; c++)
            xyb[(i * 3 + c) * oplane + at] = o[c];
    }
}

/* The input of plane `kind` (img1, img2, img1^2, img2^2, img1 img2) at a
 * staged column: Multiply()'s float product. */
__device__ __forceinline__ float s2_input(const float (*in1)[S2_IPITCH],
                                          const float (*in2)[S2_IPITCH], int kind,
                                          int r, int col)
{
    const float a = in1[r][col], b = in2[r][col];
    switch (kind) {
    case 0: return a;
    case 1: return b;
    case 2: return a * a;
    case 3: return b * b;
    default: return a * b;
    }
}

/* Samples a thread stages of the tile at t0: columns t0 - 6 .. t0 + 35 of
 * the block's rows, element i = threadIdx.x + k x blockDim.x in raster
 * order; zeros outside the picture, as the reference's bounds checks. */
#define S2_HLOADS ((S2_HROWS * (S2_TW + S2_HALO) + S2_HROWS * 5 - 1) / (S2_HROWS * 5))
__device__ __forceinline__ void s2_hblur_fetch(const float *__restrict__ img1,
                                               const float *__restrict__ img2,
                                               int w, int h, int y0, int t0,
                                               float *pre1, float *pre2)
{
#pragma unroll
    for (int k = 0; k < S2_HLOADS; k++) {
        const int i = threadIdx.x + k * S2_HROWS * 5;
        const int rr = i / (S2_TW + S2_HALO), cc = i % (S2_TW + S2_HALO);
        const int gx = t0 - QM_SSIMU2_RADIUS - 1 + cc, gy = y0 + rr;
        const bool in = i < S2_HROWS * (S2_TW + S2_HALO) && gx >= 0 && gx < w &&
                        gy < h;
        pre1[k] = in ? img1[(size_t)gy * w + gx] : 0.f;
        pre2[k] = in ? img2[(size_t)gy * w + gx] : 0.f;
    }
}

/* Block: S2_HROWS rows of channel blockIdx.y, warp k = plane kind k, lane =
 * row.  Each row is FastGaussian1D's sequence: outputs -4 .. first - 1 one
 * at a time, groups of four from `first` to `gend`, then one at a time. */
__global__ void __launch_bounds__(S2_HROWS * 5)
s2_hblur_kernel(const float *__restrict__ xyb, int w, int h,
                float *__restrict__ out)
{
    __shared__ float in1[S2_HROWS][S2_IPITCH], in2[S2_HROWS][S2_IPITCH];
    __shared__ float res[5][S2_HROWS][S2_TW + 1];
    const int c = blockIdx.y;
    const int r = threadIdx.x % S2_HROWS, kind = threadIdx.x / S2_HROWS;
    const int y0 = blockIdx.x * S2_HROWS, y = y0 + r;
    const size_t plane = (size_t)w * h;
    const float *img1 = xyb + c * plane, *img2 = xyb + (3 + c) * plane;
    const QmSsimu2Iir g = qm_ssimu2_iir();
    float p1[3] = { 0.f, 0.f, 0.f }, p2[3] = { 0.f, 0.f, 0.f };
    const int first = min(8, w);
    const int gend = w - 7 > first ? first + (w - 7 - first + 3) / 4 * 4 : first;
    /* the next tile's samples, loaded while the current one is computed */
    float pre1[S2_HLOADS], pre2[S2_HLOADS];
    s2_hblur_fetch(img1, img2, w, h, y0, 0, pre1, pre2);
    for (int t0 = 0; t0 < w; t0 += S2_TW) {
        __syncthreads();  /* the previous tile's results are stored */
#pragma unroll
        for (int k = 0; k < S2_HLOADS; k++) {
            const int i = threadIdx.x + k * S2_HROWS * 5;
            if (i < S2_HROWS * (S2_TW + S2_HALO)) {
                in1[i / (S2_TW + S2_HALO)][i % (S2_TW + S2_HALO)] = pre1[k];
                in2[i / (S2_TW + S2_HALO)][i % (S2_TW + S2_HALO)] = pre2[k];
            }
        }
        __syncthreads();
        if (t0 + S2_TW < w)
            s2_hblur_fetch(img1, img2, w, h, y0, t0 + S2_TW, pre1, pre2);
        if (y < h) {
            /* staged column of picture column x: x - t0 + 6 */
            const int base = QM_SSIMU2_RADIUS + 1 - t0;
            if (t0 == 0)
                for (int n = 1 - QM_SSIMU2_RADIUS; n < 0; n++) {
                    const float s = 0.0f + s2_input(in1, in2, kind, r,
                                                    n + QM_SSIMU2_RADIUS - 1 + base);
                    float o;
                    qm_ssimu2_h1(&g, p1, p2, &s, &o, 1);
                }
            const int end = min(t0 + S2_TW, w);
            for (int n = t0; n < end;) {
                if (n < first || n >= gend) {
                    const float s =
                        s2_input(in1, in2, kind, r, n - QM_SSIMU2_RADIUS - 1 + base) +
                        s2_input(in1, in2, kind, r, n + QM_SSIMU2_RADIUS - 1 + base);
                    qm_ssimu2_h1(&g, p1, p2, &s, &res[kind][r][n - t0], 1);
                    n++;
                } else {
                    float s[4], o[4];
                    for (int j = 0; j < 4; j++)
                        s[j] = s2_input(in1, in2, kind, r,
                                        n + j - QM_SSIMU2_RADIUS - 1 + base) +
                               s2_input(in1, in2, kind, r,
                                        n + j + QM_SSIMU2_RADIUS - 1 + base);
                    qm_ssimu2_h4(&g, p1, p2, s, o, 1);
                    for (int j = 0; j < 4; j++)
                        res[kind][r][n - t0 + j] = o[j];
                    n += 4;
                }
            }
        }
        __syncthreads();
        for (int i = threadIdx.x; i < 5 * S2_HROWS * S2_TW; i += blockDim.x) {
            const int k = i / (S2_HROWS * S2_TW), rr = i / S2_TW % S2_HROWS;
            const int j = i % S2_TW;
            if (y0 + rr < h && t0 + j < w)
                out[(c * 5 + k) * plane + (size_t)(y0 + rr) * w + t0 + j] =
                    res[k][rr][j];
        }
    }
}

/* One column of one of the 15 planes (blockIdx.y), rows -4 .. h - 1, in
 * chunks of 10 rows: the rows a chunk reads below (n + 4) are those the
 * next chunk reads above (n + 10 - 6), so each row is loaded once, and the
 * next chunk's loads are in flight while a chunk is computed. */
#define S2_VCHUNK (2 * QM_SSIMU2_RADIUS)
__global__ void __launch_bounds__(S2_VX)
s2_vblur_kernel(const float *__restrict__ hin, int w, int h, float *__restrict__ out)
{
    const int x = blockIdx.x * S2_VX + threadIdx.x;
    if (x >= w)
        return;
    const size_t plane = (size_t)w * h;
    const float *in = hin + blockIdx.y * plane + x;
    float *o = out + blockIdx.y * plane + x;
    const QmSsimu2Iir g = qm_ssimu2_iir();
    float p1[3] = { 0.f, 0.f, 0.f }, p2[3] = { 0.f, 0.f, 0.f };
    /* rows n - 6 and n + 4 of the chunk's steps; zero outside the picture */
    float top[S2_VCHUNK], cur[S2_VCHUNK], nxt[S2_VCHUNK];
    int n0 = 1 - QM_SSIMU2_RADIUS;
#pragma unroll
    for (int j = 0; j < S2_VCHUNK; j++) {
        const int r = n0 + j + QM_SSIMU2_RADIUS - 1;
        top[j] = 0.f;
        cur[j] = r < h ? in[(size_t)r * w] : 0.f;
    }
    for (; n0 < h; n0 += S2_VCHUNK) {
#pragma unroll
        for (int j = 0; j < S2_VCHUNK; j++) {
            const int r = n0 + S2_VCHUNK + j + QM_SSIMU2_RADIUS - 1;
            nxt[j] = r < h ? in[(size_t)r * w] : 0.f;
        }
#pragma unroll
        for (int j = 0; j < S2_VCHUNK; j++) {
            const int n = n0 + j;
            /* a missing row adds 0 where the reference reads the other alone */
            const float s = top[j] + cur[j];
            float v;
            qm_ssimu2_v1(&g, p1, p2, &s, &v, 1);
            for (int k = 0; k < 3; k++) {  /* y[n] was written over p2 */
                const float t = p1[k];
                p1[k] = p2[k];
                p2[k] = t;
            }
            if (n >= 0 && n < h)
                o[(size_t)n * w] = v;
            top[j] = cur[j];
            cur[j] = nxt[j];
        }
    }
}

/* The 18 sums of a block's S2_PX x S2_MROWS pixels: each thread adds its
 * column's rows in order, then a warp's lanes and the block's warps are
 * added in a fixed order (shared memory, no shuffles: few barriers). */
__global__ void __launch_bounds__(S2_PX * S2_PY)
s2_maps_kernel(const float *__restrict__ xyb, const float *__restrict__ v, int w,
               int h, double *__restrict__ part)
{
    __shared__ double lane_sums[S2_PY][S2_PX][S2_NSUM + 1];
    const int lane = threadIdx.x % S2_PX, warp = threadIdx.x / S2_PX;
    const int x = blockIdx.x * S2_PX + lane;
    const size_t plane = (size_t)w * h;
    double sum[S2_NSUM];
    for (int k = 0; k < S2_NSUM; k++)
        sum[k] = 0.0;
    for (int i = 0; i < S2_MROWS / S2_PY; i++) {
        const int y = blockIdx.y * S2_MROWS + i * S2_PY + warp;
        if (x >= w || y >= h)
            break;
        const size_t at = (size_t)y * w + x;
        for (int c = 0; c < 3; c++) {
            const float *b = v + c * 5 * plane + at;
            const float mu1 = b[0], mu2 = b[plane];
            const double t = qm_ssimu2_ssim(mu1, mu2, b[2 * plane], b[3 * plane],
                                            b[4 * plane]);
            const double e = qm_ssimu2_edge(xyb[c * plane + at], mu1,
                                            xyb[(3 + c) * plane + at], mu2);
            const double d = t < 0.0 ? 0.0 : t;
            const double artifact = e < 0.0 ? 0.0 : e;
            const double lost = -e < 0.0 ? 0.0 : -e;
            sum[c * 6 + 0] += d;
            sum[c * 6 + 1] += qm_ssimu2_quartic(d);
            sum[c * 6 + 2] += artifact;
            sum[c * 6 + 3] += qm_ssimu2_quartic(artifact);
            sum[c * 6 + 4] += lost;
            sum[c * 6 + 5] += qm_ssimu2_quartic(lost);
        }
    }
    for (int k = 0; k < S2_NSUM; k++)
        lane_sums[warp][lane][k] = sum[k];
    __syncthreads();
    if (threadIdx.x < S2_NSUM) {
        const int k = threadIdx.x;
        double s = 0.0;
        for (int wi = 0; wi < S2_PY; wi++) {
            double ws = 0.0;
            for (int l = 0; l < S2_PX; l++)
                ws += lane_sums[wi][l][k];
            s += ws;
        }
        part[(size_t)(blockIdx.y * gridDim.x + blockIdx.x) * S2_NSUM + k] = s;
    }
}

/* Block (k, scale), one warp: sum k of the scale over its blocks' partial
 * sums, each lane a strided share, then the lanes in order. */
__global__ void __launch_bounds__(32)
s2_total_kernel(const double *__restrict__ part, const int *__restrict__ first,
                const int *__restrict__ count, double *__restrict__ sums)
{
    __shared__ double lanes[32];
    const int k = blockIdx.x, sc = blockIdx.y;
    const double *p = part + (size_t)first[sc] * S2_NSUM + k;
    double s = 0.0;
    for (int i = threadIdx.x; i < count[sc]; i += 32)
        s += p[(size_t)i * S2_NSUM];
    lanes[threadIdx.x] = s;
    __syncwarp();
    if (threadIdx.x == 0) {
        double t = 0.0;
        for (int l = 0; l < 32; l++)
            t += lanes[l];
        sums[sc * S2_NSUM + k] = t;  /* QmSsimu2Sums.v[sc][k / 6][k % 6] */
    }
}

/* ---- the twin ---- */

static void s2_gpu_close(void *priv)
{
    S2Gpu *s = (S2Gpu *)priv;
    for (unsigned i = 0; s->exec && i < s->n_slots; i++)
        if (s->exec[i])
            cudaGraphExecDestroy(s->exec[i]);
    free(s->exec);
    cudaFree(s->d_lin[0]);
    cudaFree(s->d_lin[1]);
    cudaFree(s->d_xyb);
    cudaFree(s->d_h);
    cudaFree(s->d_v);
    cudaFree(s->d_xyb1);
    cudaFree(s->d_h1);
    cudaFree(s->d_v1);
    if (s->side)
        cudaStreamDestroy(s->side);
    if (s->fork_ev)
        cudaEventDestroy(s->fork_ev);
    if (s->join_ev)
        cudaEventDestroy(s->join_ev);
    cudaFree(s->d_part);
    cudaFree(s->d_sums);
    cudaFreeHost(s->h_sums);
    memset(s, 0, sizeof(*s));
}

/* The scales' partial-sum layout, after it the first / count tables. */
static int s2_gpu_alloc(S2Gpu *s, unsigned n_slots, cudaStream_t cs)
{
    const size_t full = s->sc[0].plane;
    const size_t half = s->n_scales > 1 ? s->sc[1].plane : 1;
    int nparts = 0;
    int first[QM_SSIMU2_SCALES], count[QM_SSIMU2_SCALES];
    for (int i = 0; i < s->n_scales; i++) {
        first[i] = nparts;
        count[i] = s->sc[i].nblocks;
        nparts += s->sc[i].nblocks;
    }
    QM_CU_TRY(cudaMalloc(&s->d_lin[0], 6 * full * sizeof(float)));
    QM_CU_TRY(cudaMalloc(&s->d_lin[1], 6 * half * sizeof(float)));
    QM_CU_TRY(cudaMalloc(&s->d_xyb, 6 * full * sizeof(float)));
    QM_CU_TRY(cudaMalloc(&s->d_h, 15 * full * sizeof(float)));
    QM_CU_TRY(cudaMalloc(&s->d_v, 15 * full * sizeof(float)));
    if (s->n_scales > 1) {
        QM_CU_TRY(cudaMalloc(&s->d_xyb1, 6 * half * sizeof(float)));
        QM_CU_TRY(cudaMalloc(&s->d_h1, 15 * half * sizeof(float)));
        QM_CU_TRY(cudaMalloc(&s->d_v1, 15 * half * sizeof(float)));
        QM_CU_TRY(cudaStreamCreateWithFlags(&s->side, cudaStreamNonBlocking));
        QM_CU_TRY(cudaEventCreateWithFlags(&s->fork_ev, cudaEventDisableTiming));
        QM_CU_TRY(cudaEventCreateWithFlags(&s->join_ev, cudaEventDisableTiming));
    }
    /* the partial sums, then the two int tables of s2_total_kernel */
    QM_CU_TRY(cudaMalloc(&s->d_part, (size_t)nparts * S2_NSUM * sizeof(double) +
                                         2 * QM_SSIMU2_SCALES * sizeof(int)));
    int *tables = (int *)(s->d_part + (size_t)nparts * S2_NSUM);
    QM_CU_TRY(cudaMemcpyAsync(tables, first, sizeof(first), cudaMemcpyHostToDevice, cs));
    QM_CU_TRY(cudaMemcpyAsync(tables + QM_SSIMU2_SCALES, count, sizeof(count),
                              cudaMemcpyHostToDevice, cs));
    /* the stream orders these copies (from the stack) before any use;
     * wait for them before the stack goes */
    QM_CU_TRY(cudaStreamSynchronize(cs));
    QM_CU_TRY(cudaMalloc(&s->d_sums, n_slots * sizeof(QmSsimu2Sums)));
    QM_CU_TRY(cudaMallocHost(&s->h_sums, n_slots * sizeof(QmSsimu2Sums)));
    s->exec = (cudaGraphExec_t *)calloc(n_slots, sizeof(*s->exec));
    if (!s->exec)
        return QM_ENOMEM;
    s->n_slots = n_slots;
    return 0;
}

static int s2_gpu_init(void *priv, const QmMetricConfig *cfg, unsigned n_slots,
                       QmStream st)
{
    S2Gpu *s = (S2Gpu *)priv;
    memset(s, 0, sizeof(*s));
    if (cfg->chroma == QM_CHROMA_400)
        return QM_ENOTSUP;  /* as the C code */
    s->w = cfg->w;
    s->h = cfg->h;
    s->ss_x = cfg->chroma != QM_CHROMA_444;
    s->ss_y = cfg->chroma == QM_CHROMA_420;
    qm_plane_size_full(cfg->w, cfg->h, cfg->chroma, 1, &s->cw, &s->ch);
    s->bpc = cfg->bpc;
    s->opt = *cfg->opt;
    s->n_scales = qm_ssimu2_scales(s->w, s->h, s->sw, s->sh);
    for (int i = 0; i < s->n_scales; i++) {
        S2Scale *c = &s->sc[i];
        c->w = s->sw[i];
        c->h = s->sh[i];
        c->plane = (size_t)c->w * c->h;
        c->gx = (c->w + S2_PX - 1) / S2_PX;
        c->gy = (c->h + S2_PY - 1) / S2_PY;
        c->mgy = (c->h + S2_MROWS - 1) / S2_MROWS;
        c->nblocks = c->gx * c->mgy;
    }
    const int err = s2_gpu_alloc(s, n_slots, (cudaStream_t)st);
    if (err)
        s2_gpu_close(s);
    return err;
}

/* One scale's blurs and maps, from its XYB planes, into its partial sums. */
static void s2_launch_scale(const S2Scale *c, const float *xyb, float *h, float *v,
                            double *part, cudaStream_t st)
{
    s2_hblur_kernel<<<dim3((c->h + S2_HROWS - 1) / S2_HROWS, 3), S2_HROWS * 5, 0, st>>>(
        xyb, c->w, c->h, h);
    s2_vblur_kernel<<<dim3((c->w + S2_VX - 1) / S2_VX, 15), S2_VX, 0, st>>>(h, c->w, c->h, v);
    s2_maps_kernel<<<dim3(c->gx, c->mgy), S2_PX * S2_PY, 0, st>>>(xyb, v, c->w, c->h, part);
}

/* Everything after the conversion of scale 0, and the copy of the sums:
 * reads only the twin's own buffers (the slot's graph).  Scale 0 on cs;
 * scales 1.. on the side stream, forked after the conversion (which wrote
 * scale 0's linear planes, the first downsampling's input) and joined
 * before the total.  The side branch's downsampling overwrites d_lin[0]
 * from scale 2 on, which scale 0's branch does not read. */
static void s2_launch_scales(S2Gpu *s, unsigned slot, cudaStream_t cs)
{
    int nparts = 0;
    for (int i = 0; i < s->n_scales; i++)
        nparts += s->sc[i].nblocks;
    const int *tables = (const int *)(s->d_part + (size_t)nparts * S2_NSUM);
    if (s->side) {
        cudaEventRecord(s->fork_ev, cs);
        cudaStreamWaitEvent(s->side, s->fork_ev, 0);
        double *part = s->d_part + (size_t)s->sc[0].nblocks * S2_NSUM;
        for (int i = 1; i < s->n_scales; i++) {
            const S2Scale *c = &s->sc[i];
            s2_down_kernel<<<dim3(c->gx, c->gy), S2_PX * S2_PY, 0, s->side>>>(
                s->d_lin[(i - 1) & 1], s->sc[i - 1].w, s->sc[i - 1].h,
                s->d_lin[i & 1], s->d_xyb1);
            s2_launch_scale(c, s->d_xyb1, s->d_h1, s->d_v1, part, s->side);
            part += (size_t)c->nblocks * S2_NSUM;
        }
        cudaEventRecord(s->join_ev, s->side);
    }
    s2_launch_scale(&s->sc[0], s->d_xyb, s->d_h, s->d_v, s->d_part, cs);
    if (s->side)
        cudaStreamWaitEvent(cs, s->join_ev, 0);
    double *sums = s->d_sums + (size_t)slot * (sizeof(QmSsimu2Sums) / sizeof(double));
    s2_total_kernel<<<dim3(S2_NSUM, s->n_scales), 32, 0, cs>>>(
        s->d_part, tables, tables + QM_SSIMU2_SCALES, sums);
    cudaMemcpyAsync(s->h_sums + (size_t)slot * (sizeof(QmSsimu2Sums) / sizeof(double)),
                    sums, sizeof(QmSsimu2Sums), cudaMemcpyDeviceToHost, cs);
}

static int s2_gpu_submit(void *priv, const QmGpuFrame *f, unsigned slot, QmStream st)
{
    S2Gpu *s = (S2Gpu *)priv;
    cudaStream_t cs = (cudaStream_t)st;
    if (slot >= s->n_slots)
        return QM_EINVAL;
    S2ConvArgs a;
    /* each picture's own colorimetry, as the C code */
    qm_ssimu2_setup_conv(&s->opt, s->bpc, f->ref.color, &a.conv[0]);
    qm_ssimu2_setup_conv(&s->opt, s->bpc, f->dist.color, &a.conv[1]);
    a.w = s->w;
    a.h = s->h;
    a.ss_x = s->ss_x;
    a.ss_y = s->ss_y;
    a.cw = s->cw;
    a.ch = s->ch;
    a.plane = s->sc[0].plane;
    a.lin = s->d_lin[0];
    a.xyb = s->d_xyb;
    if (f->ref.bpc == 8)
        s2_conv_kernel<uint8_t><<<dim3(s->sc[0].gx, s->sc[0].gy), S2_PX * S2_PY, 0, cs>>>(*f, a);
    else
        s2_conv_kernel<uint16_t><<<dim3(s->sc[0].gx, s->sc[0].gy), S2_PX * S2_PY, 0, cs>>>(*f, a);
    QM_CU_TRY(cudaGetLastError());
    const int err = qm_graph_once(&s->exec[slot], cs,
                                  [&] { s2_launch_scales(s, slot, cs); });
    if (err)
        return err;
    QM_CU_TRY(cudaGraphLaunch(s->exec[slot], cs));
    return 0;
}

static int s2_gpu_collect(void *priv, unsigned slot, QmRows *out)
{
    S2Gpu *s = (S2Gpu *)priv;
    const QmSsimu2Sums *sums = (const QmSsimu2Sums *)s->h_sums + slot;
    qm_rows_set(out, 0, 0, qm_ssimu2_score(sums, s->n_scales, s->sw, s->sh));
    return 0;
}

extern "C" const QmCudaFuncs qm_cuda_ssimulacra2 = {
    sizeof(S2Gpu), s2_gpu_init, s2_gpu_submit, s2_gpu_collect, s2_gpu_close, NULL,
};
