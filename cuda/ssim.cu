/* gst-qmetric: CUDA twins of cpu/float_ssim.c (float_ssim) and cpu/float_ms_ssim.c
 * (float_ms_ssim), the stages of cpu/ssim.h as kernels.
 *
 * Per frame, on the stream, without a host round trip:
 *
 *   float_ssim     box_decimate (when the factor is > 1), ssim_tiles,
 *                  ssim_rows, one copy of the per-row sums;
 *   float_ms_ssim  lpf_decimate x 4 (scale i -> i + 1, each scale's picture
 *                  kept on the device), ssim_tiles for the five scales in
 *                  one launch, ssim_rows, one copy of the per-row sums.
 *
 * Stage 1 (to_float) is folded into the loaders: wherever a kernel reads
 * the picture itself it converts the sample as qm_ssim_to_float() does.
 * Stages 3 and 4 (horizontal and vertical Gaussian, per-pixel terms) are
 * fused in ssim_tiles: a block loads a 42 x 42 input tile of ref and dis
 * into shared memory, filters its rows horizontally into five 42 x 32
 * shared planes, then each warp filters columns vertically for one row of
 * 32 valid pixels at a time and computes the SSIM terms.
 *
 * Exactness: the per-pixel arithmetic is the C code's, operation by
 * operation (float products widened to double and summed tap by tap in the
 * reference's order, each filter output rounded to float, the terms in the
 * same mix of float and double; --fmad=false keeps every product rounded).
 * Filter taps come from the C code itself (qm_ssim_gauss_taps(),
 * qm_ssim_box_kernel(), qm_ms_ssim_lpf_kernel()).  So the filtered planes
 * and every per-pixel term are bit-identical to the CPU's.  Only the sum of
 * the terms over a row differs in order: the C code adds a row left to
 * right, here a warp adds its 32 columns as a tree and ssim_rows adds the
 * tiles of a row left to right, all in double and in a fixed order
 * (deterministic, no atomics).  The host then calls the C code's own
 * qm_ssim_pool() on those per-row sums (rows added in the same order as on
 * the CPU) and qm_ms_ssim_combine().  See cuda_tol in cpu/float_ssim.c and
 * cpu/float_ms_ssim.c for what that order changes in the scores.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.cuh"

#include "ssim.h"

/* ---- geometry of the kernels ---- */

/* ssim_tiles: a tile is SSIM_TX valid columns (one warp, lane = column) by
 * SSIM_TY valid rows; SSIM_NW warps take its rows in turn. */
#define SSIM_TX 32
#define SSIM_TY 32
#define SSIM_NW 8
#define SSIM_THREADS (SSIM_TX * SSIM_NW)
#define SSIM_IN_W (SSIM_TX + QM_SSIM_WIN - 1)  /* 42 input columns */
#define SSIM_IN_H (SSIM_TY + QM_SSIM_WIN - 1)  /* 42 input rows */

/* lpf_decimate: DEC_DX x DEC_DY outputs per block of 32 x 8 threads */
#define LPF_TAPS QM_MS_SSIM_LPF_TAPS
#define LPF_R (LPF_TAPS / 2)
#define DEC_DX 32
#define DEC_DY 16
#define DEC_NW 8
/* input rows 2 y - 4 .. 2 y + 4 for DEC_DY outputs: 2 (DEC_DY - 1) + 9 */
#define DEC_IN_H (2 * (DEC_DY - 1) + LPF_TAPS)
/* input columns split by parity (the CPU's phases): output column x, tap u
 * reads phase u & 1, index x + u / 2 (x < 32, u / 2 <= 4) */
#define DEC_IN_HALF (DEC_DX + LPF_R)

#define FULL_MASK 0xffffffffu

/* A plane a kernel reads: the picture's luma samples (T: uint8_t or
 * uint16_t, MSB-aligned by shift, step apart), or a float picture that an
 * earlier kernel wrote. */
typedef struct SsimSrc {
    const void *data;
    ptrdiff_t stride;  /* bytes */
    int step;          /* samples between horizontal neighbours (raw) */
    int shift;         /* raw: sample >> shift is the value */
    int is_float;
} SsimSrc;

/* Sample (x, y) as float.  Raw samples are converted as stage 1
 * (qm_ssim_to_float) does: (float)value * 2^(8 - bpc); at 8 bits inv is
 * 1.0f and the product is the converted value itself, bit for bit. */
template <typename T>
__device__ __forceinline__ float src_load(const SsimSrc &s, float inv, int x,
                                          int y)
{
    const char *row = (const char *)s.data + (ptrdiff_t)y * s.stride;
    if (s.is_float)
        return __ldg((const float *)row + x);
    const int v = (int)(__ldg((const T *)row + (ptrdiff_t)x * s.step) >> s.shift);
    return (float)v * inv;
}

/* ---- stage 2: decimation ---- */

typedef struct BoxArg {
    SsimSrc src[2];        /* ref, dis */
    float *dst[2];
    ptrdiff_t dst_stride;  /* bytes */
    int w, h, wo, ho;
    int factor;            /* taps = factor, as cpu/float_ssim.c calls it */
    float inv;
    const float *kernel;   /* factor x factor, row-major (device) */
} BoxArg;

/* float_ssim's f x f box filter sampled every f pixels
 * (qm_ssim_decimate() with taps = factor): one thread per output, the taps
 * summed rows outer, columns inner, each a float product widened to double,
 * as the C code (and iqa's _iqa_filter_pixel) adds them. */
template <typename T>
__global__ void __launch_bounds__(256) box_decimate(const BoxArg a)
{
    const int x = blockIdx.x * 32 + threadIdx.x;
    const int y = blockIdx.y * 8 + threadIdx.y;
    if (x >= a.wo || y >= a.ho)
        return;
    const SsimSrc src = blockIdx.z ? a.src[1] : a.src[0];
    const int f = a.factor, r = f / 2;
    double acc = 0.0;
    for (int v = 0; v < f; v++) {
        const int sy = qm_ssim_mirror(f * y + v - r, a.h);
        for (int u = 0; u < f; u++) {
            const float s =
                src_load<T>(src, a.inv, qm_ssim_mirror(f * x + u - r, a.w), sy);
            acc += (double)(s * __ldg(a.kernel + v * f + u));
        }
    }
    float *d = (float *)((char *)(blockIdx.z ? a.dst[1] : a.dst[0]) +
                         (ptrdiff_t)y * a.dst_stride);
    d[x] = (float)acc;
}

typedef struct LpfArg {
    SsimSrc src[2];        /* ref, dis at scale i */
    float *dst[2];         /* scale i + 1 */
    ptrdiff_t dst_stride;  /* bytes */
    int w, h, wo, ho;
    float inv;
    float k[LPF_TAPS * LPF_TAPS];  /* qm_ms_ssim_lpf_kernel(), row-major */
} LpfArg;

/* MS-SSIM's 9x9 low-pass sampled every 2 pixels (qm_ssim_decimate() with
 * taps 9, factor 2).  The block's input (mirrored) goes to shared memory
 * split into even and odd columns, so that the 32 lanes of a warp read 32
 * consecutive floats for every tap.  blockIdx.z: 0 ref, 1 dis. */
template <typename T>
__global__ void __launch_bounds__(DEC_DX * DEC_NW) lpf_decimate(const LpfArg a)
{
    __shared__ float s_in[DEC_IN_H][2][DEC_IN_HALF];
    const SsimSrc src = blockIdx.z ? a.src[1] : a.src[0];
    const int ox0 = blockIdx.x * DEC_DX, oy0 = blockIdx.y * DEC_DY;
    const int gx0 = 2 * ox0 - LPF_R, gy0 = 2 * oy0 - LPF_R;
    const int tid = threadIdx.y * DEC_DX + threadIdx.x;

    for (int i = tid; i < DEC_IN_H * 2 * DEC_IN_HALF; i += DEC_DX * DEC_NW) {
        const int r = i / (2 * DEC_IN_HALF), c = i - r * (2 * DEC_IN_HALF);
        s_in[r][c & 1][c >> 1] =
            src_load<T>(src, a.inv, qm_ssim_mirror(gx0 + c, a.w),
                        qm_ssim_mirror(gy0 + r, a.h));
    }
    __syncthreads();

    const int lx = threadIdx.x, ox = ox0 + lx;
    float *dst = blockIdx.z ? a.dst[1] : a.dst[0];
    for (int ly = threadIdx.y; ly < DEC_DY; ly += DEC_NW) {
        const int oy = oy0 + ly;
        if (ox >= a.wo || oy >= a.ho)
            continue;
        /* output (ox, oy), tap (u, v) reads input (2 ox + u - 4,
         * 2 oy + v - 4): local row 2 ly + v, local column 2 lx + u */
        double acc = 0.0;
#pragma unroll
        for (int v = 0; v < LPF_TAPS; v++)
#pragma unroll
            for (int u = 0; u < LPF_TAPS; u++)
                acc += (double)(s_in[2 * ly + v][u & 1][lx + (u >> 1)] *
                                a.k[v * LPF_TAPS + u]);
        float *d = (float *)((char *)dst + (ptrdiff_t)oy * a.dst_stride);
        d[ox] = (float)acc;
    }
}

/* ---- stages 3 and 4: SSIM terms of every scale, per tile ---- */

typedef struct SsimScaleArg {
    SsimSrc ref, dis;
    int w, h;          /* the scale's size */
    int wo, ho;        /* its valid region: w - 10, h - 10 */
    int tiles_x;
    int block0;        /* first block of the scale in the grid */
    double *part;      /* [ho][tiles_x][4]: a tile's sums of one row */
} SsimScaleArg;

typedef struct SsimArg {
    SsimScaleArg sc[QM_MS_SSIM_SCALES];
    int n;
    float inv;
    float g[QM_SSIM_WIN];  /* qm_ssim_gauss_taps() */
    float C1, C2, C3;
} SsimArg;

template <typename T>
__global__ void __launch_bounds__(SSIM_THREADS) ssim_tiles(const SsimArg a)
{
    __shared__ float s_in[2][SSIM_IN_H][SSIM_IN_W];
    __shared__ float s_h[QM_SSIM_NPLANES][SSIM_IN_H][SSIM_TX];

    /* the scale of this block (block0 increases with the scale) */
    SsimScaleArg S = a.sc[0];
#pragma unroll
    for (int i = 1; i < QM_MS_SSIM_SCALES; i++)
        if (i < a.n && (int)blockIdx.x >= a.sc[i].block0)
            S = a.sc[i];
    const int b = (int)blockIdx.x - S.block0;
    const int tx = b % S.tiles_x, ty = b / S.tiles_x;
    const int x0 = tx * SSIM_TX, y0 = ty * SSIM_TY;
    const int tid = threadIdx.y * SSIM_TX + threadIdx.x;

    /* input rows y0 .. y0 + 41, columns x0 .. x0 + 41; what lies outside
     * the picture is no valid pixel's input: zeros */
    for (int i = tid; i < SSIM_IN_H * SSIM_IN_W; i += SSIM_THREADS) {
        const int r = i / SSIM_IN_W, c = i - r * SSIM_IN_W;
        const int x = x0 + c, y = y0 + r;
        float vr = 0.0f, vd = 0.0f;
        if (x < S.w && y < S.h) {
            vr = src_load<T>(S.ref, a.inv, x, y);
            vd = src_load<T>(S.dis, a.inv, x, y);
        }
        s_in[0][r][c] = vr;
        s_in[1][r][c] = vd;
    }
    __syncthreads();

    /* stage 3 (qm_ssim_hfilter's hpass1/hpass2): each output a double sum
     * of 11 float products in tap order, rounded to float; ref^2, dis^2
     * and ref*dis rounded to float before they are weighted */
    const int hrows = min(SSIM_IN_H, S.h - y0);
    for (int i = tid; i < hrows * SSIM_TX; i += SSIM_THREADS) {
        const int r = i / SSIM_TX, c = i - r * SSIM_TX;
        double mr = 0.0, md = 0.0, rr = 0.0, dd = 0.0, rd = 0.0;
#pragma unroll
        for (int u = 0; u < QM_SSIM_WIN; u++) {
            const float xr = s_in[0][r][c + u], xd = s_in[1][r][c + u];
            const float g = a.g[u];
            const float prr = xr * xr, pdd = xd * xd, prd = xr * xd;
            mr += (double)(xr * g);
            md += (double)(xd * g);
            rr += (double)(prr * g);
            dd += (double)(pdd * g);
            rd += (double)(prd * g);
        }
        s_h[QM_SSIM_MU_R][r][c] = (float)mr;
        s_h[QM_SSIM_MU_D][r][c] = (float)md;
        s_h[QM_SSIM_RR][r][c] = (float)rr;
        s_h[QM_SSIM_DD][r][c] = (float)dd;
        s_h[QM_SSIM_RD][r][c] = (float)rd;
    }
    __syncthreads();

    /* stage 4 (qm_ssim_vfilter): warp w takes tile rows w, w + 8, ...;
     * lane = column */
    const int c = threadIdx.x, x = x0 + c;
    for (int r = threadIdx.y; r < SSIM_TY; r += SSIM_NW) {
        const int y = y0 + r;
        if (y >= S.ho)
            break;  /* the same for the whole warp */
        double t_ssim = 0.0, t_l = 0.0, t_c = 0.0, t_s = 0.0;
        if (x < S.wo) {
            float m[QM_SSIM_NPLANES];
#pragma unroll
            for (int p = 0; p < QM_SSIM_NPLANES; p++) {
                double acc = 0.0;
#pragma unroll
                for (int v = 0; v < QM_SSIM_WIN; v++)
                    acc += (double)(s_h[p][r + v][c] * a.g[v]);
                m[p] = (float)acc;
            }
            /* the terms, as qm_ssim_vfilter() */
            const QmSsimRowSums t =
                qm_ssim_pixel(m[QM_SSIM_MU_R], m[QM_SSIM_MU_D], m[QM_SSIM_RR],
                              m[QM_SSIM_DD], m[QM_SSIM_RD], a.C1, a.C2, a.C3);
            t_ssim = t.ssim;
            t_l = t.l;
            t_c = t.c;
            t_s = t.s;
        }
        /* the row's 32 columns: a fixed tree (columns beyond the valid
         * region add 0.0) */
        for (int o = 16; o > 0; o >>= 1) {
            t_ssim += __shfl_down_sync(FULL_MASK, t_ssim, o);
            t_l += __shfl_down_sync(FULL_MASK, t_l, o);
            t_c += __shfl_down_sync(FULL_MASK, t_c, o);
            t_s += __shfl_down_sync(FULL_MASK, t_s, o);
        }
        if (c == 0) {
            double *p = S.part + ((size_t)y * S.tiles_x + tx) * 4;
            p[0] = t_ssim;
            p[1] = t_l;
            p[2] = t_c;
            p[3] = t_s;
        }
    }
}

typedef struct RowsArg {
    const double *part[QM_MS_SSIM_SCALES];
    int tiles_x[QM_MS_SSIM_SCALES];
    int row0[QM_MS_SSIM_SCALES];  /* first row of the scale in rows */
    int n, total;                 /* scales, rows of all scales */
    double *rows;                 /* QmSsimRowSums[total] */
} RowsArg;

/* Per-row sums: a row's tiles added left to right, one thread per row and
 * term.  rows[] has QmSsimRowSums' layout (ssim, l, c, s). */
__global__ void __launch_bounds__(256) ssim_rows(const RowsArg a)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 4 * a.total)
        return;
    const int row = i >> 2, k = i & 3;
    const double *part = a.part[0];
    int tiles = a.tiles_x[0], y = row;
#pragma unroll
    for (int s = 1; s < QM_MS_SSIM_SCALES; s++)
        if (s < a.n && row >= a.row0[s]) {
            part = a.part[s];
            tiles = a.tiles_x[s];
            y = row - a.row0[s];
        }
    const double *p = part + (size_t)y * tiles * 4 + k;
    double t = 0.0;
    for (int tx = 0; tx < tiles; tx++)
        t += p[(size_t)tx * 4];
    a.rows[i] = t;
}

/* ---- host side, shared by both twins ---- */

typedef struct SsimGpu {
    int bpc;
    float inv;            /* stage 1's scale, 2^(8 - bpc) */
    int n;                /* scales */
    int w[QM_MS_SSIM_SCALES], h[QM_MS_SSIM_SCALES];
    /* device float pictures of each scale (ref, dis); NULL where the scale
     * is the picture itself (read from the frame) */
    float *img[QM_MS_SSIM_SCALES][2];
    ptrdiff_t pitch[QM_MS_SSIM_SCALES];  /* bytes */
    int tiles_x[QM_MS_SSIM_SCALES];
    int block0[QM_MS_SSIM_SCALES + 1];
    int row0[QM_MS_SSIM_SCALES + 1];
    double *d_part;       /* all scales' tile sums */
    double *part[QM_MS_SSIM_SCALES];
    QmSsimRowSums *d_rows;  /* per-row sums of all scales */
    QmSsimRowSums *h_rows;  /* pinned, [slot][row0[n]] */
    float g[QM_SSIM_WIN];
    float C1, C2, C3;
    /* float_ssim's decimation (factor 1: none) */
    int factor;
    int pic_w, pic_h;
    float *d_box;
    /* float_ms_ssim's low-pass */
    float lpf[LPF_TAPS * LPF_TAPS];
} SsimGpu;

static void ssim_gpu_close(void *priv)
{
    SsimGpu *s = (SsimGpu *)priv;
    for (int i = 0; i < QM_MS_SSIM_SCALES; i++)
        for (int j = 0; j < 2; j++)
            cudaFree(s->img[i][j]);
    cudaFree(s->d_part);
    cudaFree(s->d_rows);
    cudaFree(s->d_box);
    if (s->h_rows)
        cudaFreeHost(s->h_rows);
    memset(s, 0, sizeof(*s));
}

/* Buffers and launch geometry for scales of sizes w[], h[] (n set); the
 * scales in `owned` get device float pictures. */
static int ssim_gpu_setup(SsimGpu *s, int bpc, unsigned owned,
                          unsigned n_slots)
{
    s->bpc = bpc;
    s->inv = bpc > 8 ? 1.0f / (float)(1 << (bpc - 8)) : 1.0f;
    qm_ssim_gauss_taps(s->g);
    qm_ssim_consts(&s->C1, &s->C2, &s->C3);

    size_t part = 0;
    s->block0[0] = 0;
    s->row0[0] = 0;
    for (int i = 0; i < s->n; i++) {
        const int wo = s->w[i] - (QM_SSIM_WIN - 1), ho = s->h[i] - (QM_SSIM_WIN - 1);
        if (wo < 1 || ho < 1)
            return QM_ENOTSUP;
        s->tiles_x[i] = (wo + SSIM_TX - 1) / SSIM_TX;
        const int tiles_y = (ho + SSIM_TY - 1) / SSIM_TY;
        s->block0[i + 1] = s->block0[i] + s->tiles_x[i] * tiles_y;
        s->row0[i + 1] = s->row0[i] + ho;
        part += (size_t)ho * s->tiles_x[i] * 4;
    }
    if (cudaMalloc(&s->d_part, part * sizeof(double)) != cudaSuccess)
        return QM_EDEVICE;
    part = 0;
    for (int i = 0; i < s->n; i++) {
        s->part[i] = s->d_part + part;
        part += (size_t)(s->row0[i + 1] - s->row0[i]) * s->tiles_x[i] * 4;
        if (!(owned & (1u << i)))
            continue;
        /* rows padded to 128 bytes */
        s->pitch[i] = (ptrdiff_t)((((size_t)s->w[i] + 31) & ~(size_t)31) * sizeof(float));
        for (int j = 0; j < 2; j++)
            if (cudaMalloc(&s->img[i][j], (size_t)s->pitch[i] * s->h[i]) != cudaSuccess)
                return QM_EDEVICE;
    }
    const size_t rows = (size_t)s->row0[s->n];
    if (cudaMalloc(&s->d_rows, rows * sizeof(QmSsimRowSums)) != cudaSuccess ||
        cudaMallocHost(&s->h_rows, n_slots * rows * sizeof(QmSsimRowSums)) != cudaSuccess)
        return QM_EDEVICE;
    return 0;
}

/* The luma plane of a frame's picture as a raw source. */
static SsimSrc raw_src(const QmGpuPicture *p)
{
    SsimSrc r = { p->p[0].data, p->p[0].stride, p->p[0].step ? p->p[0].step : 1,
                  p->shift, 0 };
    return r;
}

/* Scale i's picture pair as sources: the owned float pictures, or the
 * frame's. */
static void scale_src(const SsimGpu *s, int i, const QmGpuFrame *f,
                      SsimSrc *r, SsimSrc *d)
{
    if (s->img[i][0]) {
        *r = (SsimSrc){ s->img[i][0], s->pitch[i], 1, 0, 1 };
        *d = (SsimSrc){ s->img[i][1], s->pitch[i], 1, 0, 1 };
    } else {
        *r = raw_src(&f->ref);
        *d = raw_src(&f->dist);
    }
}

/* Stages 3-4 of every scale, the per-row sums, and their copy to the
 * slot's pinned buffer. */
template <typename T>
static int ssim_gpu_scales(SsimGpu *s, const QmGpuFrame *f, unsigned slot,
                           cudaStream_t cs)
{
    SsimArg a;
    memset(&a, 0, sizeof(a));
    a.n = s->n;
    a.inv = s->inv;
    memcpy(a.g, s->g, sizeof(a.g));
    a.C1 = s->C1;
    a.C2 = s->C2;
    a.C3 = s->C3;
    RowsArg ra;
    memset(&ra, 0, sizeof(ra));
    ra.n = s->n;
    ra.total = s->row0[s->n];
    ra.rows = (double *)s->d_rows;
    for (int i = 0; i < s->n; i++) {
        SsimScaleArg *S = &a.sc[i];
        scale_src(s, i, f, &S->ref, &S->dis);
        S->w = s->w[i];
        S->h = s->h[i];
        S->wo = s->w[i] - (QM_SSIM_WIN - 1);
        S->ho = s->h[i] - (QM_SSIM_WIN - 1);
        S->tiles_x = s->tiles_x[i];
        S->block0 = s->block0[i];
        S->part = s->part[i];
        ra.part[i] = s->part[i];
        ra.tiles_x[i] = s->tiles_x[i];
        ra.row0[i] = s->row0[i];
    }
    ssim_tiles<T><<<s->block0[s->n], dim3(SSIM_TX, SSIM_NW), 0, cs>>>(a);
    QM_CU_TRY(cudaGetLastError());
    ssim_rows<<<(4 * ra.total + 255) / 256, 256, 0, cs>>>(ra);
    QM_CU_TRY(cudaGetLastError());
    const size_t bytes = (size_t)ra.total * sizeof(QmSsimRowSums);
    QM_CU_TRY(cudaMemcpyAsync(s->h_rows + (size_t)slot * ra.total, s->d_rows,
                              bytes, cudaMemcpyDeviceToHost, cs));
    return 0;
}

/* ---- float_ssim ---- */

static int fssim_gpu_init(void *priv, const QmMetricConfig *cfg,
                          unsigned n_slots, QmStream st)
{
    SsimGpu *s = (SsimGpu *)priv;
    int err = qm_ssim_check(cfg);  /* the C reference's limits */
    if (err)
        return err;
    s->pic_w = cfg->w;
    s->pic_h = cfg->h;
    s->factor = qm_ssim_auto_scale(cfg->w, cfg->h);
    s->n = 1;
    s->w[0] = cfg->w;
    s->h[0] = cfg->h;
    if (s->factor > 1) {
        s->w[0] = qm_ssim_decimated_size(cfg->w, s->factor);
        s->h[0] = qm_ssim_decimated_size(cfg->h, s->factor);
    }
    err = ssim_gpu_setup(s, cfg->bpc, s->factor > 1 ? 1u : 0u, n_slots);
    if (!err && s->factor > 1) {
        const size_t n = (size_t)s->factor * s->factor;
        float *k = (float *)malloc(n * sizeof(float));
        if (!k) {
            err = QM_ENOMEM;
        } else {
            qm_ssim_box_kernel(k, s->factor);
            /* on the frames' stream, waited for here (init only) */
            if (cudaMalloc(&s->d_box, n * sizeof(float)) != cudaSuccess ||
                cudaMemcpyAsync(s->d_box, k, n * sizeof(float),
                                cudaMemcpyHostToDevice, (cudaStream_t)st) != cudaSuccess ||
                cudaStreamSynchronize((cudaStream_t)st) != cudaSuccess)
                err = QM_EDEVICE;
            free(k);
        }
    }
    if (err)
        ssim_gpu_close(s);
    return err;
}

template <typename T>
static int fssim_gpu_frame(SsimGpu *s, const QmGpuFrame *f, unsigned slot,
                           cudaStream_t cs)
{
    if (s->factor > 1) {
        BoxArg a;
        a.src[0] = raw_src(&f->ref);
        a.src[1] = raw_src(&f->dist);
        a.dst[0] = s->img[0][0];
        a.dst[1] = s->img[0][1];
        a.dst_stride = s->pitch[0];
        a.w = s->pic_w;
        a.h = s->pic_h;
        a.wo = s->w[0];
        a.ho = s->h[0];
        a.factor = s->factor;
        a.inv = s->inv;
        a.kernel = s->d_box;
        const dim3 grid((a.wo + 31) / 32, (a.ho + 7) / 8, 2);
        box_decimate<T><<<grid, dim3(32, 8), 0, cs>>>(a);
        QM_CU_TRY(cudaGetLastError());
    }
    return ssim_gpu_scales<T>(s, f, slot, cs);
}

static int fssim_gpu_submit(void *priv, const QmGpuFrame *f, unsigned slot,
                            QmStream st)
{
    SsimGpu *s = (SsimGpu *)priv;
    if (f->ref.bpc == 8)
        return fssim_gpu_frame<uint8_t>(s, f, slot, (cudaStream_t)st);
    return fssim_gpu_frame<uint16_t>(s, f, slot, (cudaStream_t)st);
}

static int fssim_gpu_collect(void *priv, unsigned slot, QmRows *out)
{
    SsimGpu *s = (SsimGpu *)priv;
    QmSsimScore sc;
    qm_ssim_pool(&sc, s->h_rows + (size_t)slot * s->row0[1],
                 s->w[0] - (QM_SSIM_WIN - 1), s->h[0] - (QM_SSIM_WIN - 1));
    qm_rows_set(out, 0, 0, (double)sc.ssim);
    return 0;
}

extern "C" const QmCudaFuncs qm_cuda_float_ssim = {
    sizeof(SsimGpu), fssim_gpu_init, fssim_gpu_submit, fssim_gpu_collect,
    ssim_gpu_close, NULL,
};

/* ---- float_ms_ssim ---- */

static int msssim_gpu_init(void *priv, const QmMetricConfig *cfg,
                           unsigned n_slots, QmStream st)
{
    SsimGpu *s = (SsimGpu *)priv;
    int err = qm_ms_ssim_check(cfg);  /* the C reference's limits */
    if (err)
        return err;
    s->n = QM_MS_SSIM_SCALES;
    s->w[0] = cfg->w;
    s->h[0] = cfg->h;
    for (int i = 1; i < QM_MS_SSIM_SCALES; i++) {
        s->w[i] = qm_ssim_decimated_size(s->w[i - 1], 2);
        s->h[i] = qm_ssim_decimated_size(s->h[i - 1], 2);
    }
    qm_ms_ssim_lpf_kernel(s->lpf);
    /* scale 0 is read from the frame, scales 1..4 live on the device */
    const unsigned owned = ((1u << QM_MS_SSIM_SCALES) - 1) & ~1u;
    err = ssim_gpu_setup(s, cfg->bpc, owned, n_slots);
    if (err)
        ssim_gpu_close(s);
    return err;
}

template <typename T>
static int msssim_gpu_frame(SsimGpu *s, const QmGpuFrame *f, unsigned slot,
                            cudaStream_t cs)
{
    LpfArg a;
    a.inv = s->inv;
    memcpy(a.k, s->lpf, sizeof(a.k));
    for (int i = 1; i < QM_MS_SSIM_SCALES; i++) {
        scale_src(s, i - 1, f, &a.src[0], &a.src[1]);
        a.dst[0] = s->img[i][0];
        a.dst[1] = s->img[i][1];
        a.dst_stride = s->pitch[i];
        a.w = s->w[i - 1];
        a.h = s->h[i - 1];
        a.wo = s->w[i];
        a.ho = s->h[i];
        const dim3 grid((a.wo + DEC_DX - 1) / DEC_DX, (a.ho + DEC_DY - 1) / DEC_DY, 2);
        /* T matters for scale 0 only: later sources are float */
        lpf_decimate<T><<<grid, dim3(DEC_DX, DEC_NW), 0, cs>>>(a);
        QM_CU_TRY(cudaGetLastError());
    }
    return ssim_gpu_scales<T>(s, f, slot, cs);
}

static int msssim_gpu_submit(void *priv, const QmGpuFrame *f, unsigned slot,
                             QmStream st)
{
    SsimGpu *s = (SsimGpu *)priv;
    if (f->ref.bpc == 8)
        return msssim_gpu_frame<uint8_t>(s, f, slot, (cudaStream_t)st);
    return msssim_gpu_frame<uint16_t>(s, f, slot, (cudaStream_t)st);
}

static int msssim_gpu_collect(void *priv, unsigned slot, QmRows *out)
{
    SsimGpu *s = (SsimGpu *)priv;
    const QmSsimRowSums *rows = s->h_rows + (size_t)slot * s->row0[s->n];
    QmSsimScore sc[QM_MS_SSIM_SCALES];
    for (int i = 0; i < QM_MS_SSIM_SCALES; i++)
        qm_ssim_pool(&sc[i], rows + s->row0[i], s->w[i] - (QM_SSIM_WIN - 1),
                     s->h[i] - (QM_SSIM_WIN - 1));
    qm_rows_set(out, 0, 0, qm_ms_ssim_combine(sc));
    return 0;
}

extern "C" const QmCudaFuncs qm_cuda_float_ms_ssim = {
    sizeof(SsimGpu), msssim_gpu_init, msssim_gpu_submit, msssim_gpu_collect,
    ssim_gpu_close, NULL,
};
