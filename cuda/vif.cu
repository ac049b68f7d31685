/* gst-qmetric: CUDA twin of cpu/vif.c (integer VIF, libvmaf 3.2.0 "vif").
 *
 * One kernel per scale does both stages of cpu/vif.h on a tile of the
 * scale's picture held in shared memory:
 *
 *   QmVifStatFn      the vertical then horizontal pass of the scale's filter
 *                    over ref, dis, ref^2, dis^2, ref*dis, the local
 *                    (co)variances and the per-pixel VIF terms, summed into
 *                    the four integers of QmVifAccum (per thread, per block,
 *                    then one 64-bit integer atomicAdd per sum and block:
 *                    integer sums are exact in any order);
 *   QmVifDecimateFn  the low-pass of the next scale's filter at the even
 *                    rows and columns, written as the next scale's picture
 *                    (uint16_t, device memory that stays on the device).
 *
 * Every integer operation is the C code's (same widths, same roundings, the
 * same modulo-2^32 differences); where the C code splits a 48-bit sum into
 * two 32-bit halves to vectorise, the kernels use a 64-bit accumulator,
 * which gives the same value.  The per-pixel part (local statistics, gain,
 * residual variance, the log2 terms) is the C code's own functions
 * (cpu/vif_pixel.h; nvcc --fmad=false: no contraction; double division and
 * conversions are correctly rounded on the GPU as on the CPU), and log2
 * comes from the same table (qm_vif_log2_table(), uploaded once).  So the
 * sums, hence the features, are bit-identical to the C reference.
 *
 * Borders: a tile element outside the picture holds the mirrored sample
 * (qm_vif_mirror(): no repeated edge sample, periodic beyond).  That
 * is exactly what the C code's padding gives: its horizontal pass reads the
 * vertically filtered row at mirrored columns, and the vertical filter at a
 * mirrored column is the vertical filter of the mirrored input column.
 * Tile positions beyond the picture are computed and left out of the sums.
 *
 * Per frame: one memset of the 4 x 4 sums, four kernels (scales 0..3), one
 * cudaMemcpyAsync of the sums into the slot's pinned buffer; the host turns
 * them into scores with qm_vif_scale_score(), as the C code does.
 */
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "common.cuh"
#include "vif_pixel.h"

namespace {

/* Tile geometry.  A block of kThreads threads owns kTileH output rows and
 * TW = kTileWH - 2R output columns of its scale (R: the filter radius), so
 * that the tile with its horizontal halo is kTileWH columns wide: the
 * vertical pass then gives every thread one column and kRowsPerThread
 * consecutive rows (a sliding window: each input sample's products are
 * formed once for the rows it contributes to). */
constexpr int kThreads = 256;
constexpr int kTileH = 16;
constexpr int kTileWH = 64;
constexpr int kRowsPerThread = 4;
static_assert(kTileWH * (kTileH / kRowsPerThread) == kThreads,
              "vertical pass: one (column, row group) per thread");
static_assert(kTileWH * (kTileH / 2) == 2 * kThreads,
              "decimation, vertical pass: two (column, even row) per thread");

template <int S>
struct VifGeo {
    static constexpr int R = 8 >> S;             /* 17, 9, 5, 3 taps */
    static constexpr int TAPS = 2 * R + 1;
    static constexpr int TW = kTileWH - 2 * R;   /* output columns */
    static constexpr int IH = kTileH + 2 * R;    /* input rows */
    /* Row strides of the arrays the horizontal pass reads: consecutive
     * threads take consecutive outputs (r, c) = divmod(i, TW), so with a
     * stride congruent to TW modulo 32 words (u32) or 64 halves (u16) a warp
     * reads 32 distinct banks even where it spans two rows. */
    static constexpr int S32 = TW + 32;
    static constexpr int S16 = TW + 64;
    /* the decimation's low-pass is the next scale's filter */
    static constexpr int DR = R / 2;
    static constexpr int DTAPS = 2 * DR + 1;
    static_assert(TW % 2 == 0, "tiles start at even columns");
};

template <int S>
struct VifTile {
    /* the scale's samples, mirrored: rows ty0 - R .., columns tx0 - R .. */
    uint16_t in_r[VifGeo<S>::IH][kTileWH];
    uint16_t in_d[VifGeo<S>::IH][kTileWH];
    /* vertical pass of the statistics (cpu/vif.c VifRows mu1 .. xy) */
    uint16_t mu1[kTileH][VifGeo<S>::S16];
    uint16_t mu2[kTileH][VifGeo<S>::S16];
    uint32_t xx[kTileH][VifGeo<S>::S32];
    uint32_t yy[kTileH][VifGeo<S>::S32];
    uint32_t xy[kTileH][VifGeo<S>::S32];
    /* vertical pass of the decimation, even rows only */
    uint16_t dv_r[kTileH / 2][kTileWH];
    uint16_t dv_d[kTileH / 2][kTileWH];
    long long red[kThreads / 32][4];
};

struct VifScaleArgs {
    QmGpuPlane ref, dis;
    int ref_shift, dis_shift;
    int w, h;
    int in_bits;                  /* bpc at scale 0, 16 at scales 1..3 */
    unsigned f[17];               /* the scale's filter */
    unsigned fd[9];               /* the next scale's (decimation) */
    uint16_t *out_ref, *out_dis;  /* next scale, (w / 2) x (h / 2) */
    ptrdiff_t out_stride;         /* bytes */
    const uint16_t *log2_tab;     /* qm_vif_log2_table() */
    double egl;                   /* enhancement gain limit */
    unsigned long long *acc;      /* QmVifAccum of this scale, as 4 sums */
};

/* One scale: statistics (STAT) and/or decimation to the next scale (DEC).
 * T: sample type of the scale's picture (uint8_t only at scale 0, 8 bits). */
template <int S, typename T, bool STAT, bool DEC>
__global__ void __launch_bounds__(kThreads)
vif_scale_kernel(const VifScaleArgs a)
{
    using G = VifGeo<S>;
    constexpr int R = G::R, TAPS = G::TAPS, TW = G::TW;
    constexpr int RG = kRowsPerThread;
    /* 8-bit samples: products < 2^16, every vertical sum < 2^32 (the C
     * code's uint16_t PROD path, whose high halves vanish); deeper samples
     * need the full 48-bit sums of the second moments. */
    constexpr bool kEight = sizeof(T) == 1;
    typedef typename std::conditional<kEight, uint32_t, uint64_t>::type Acc;

    __shared__ VifTile<S> sm;
    const int t = threadIdx.x;
    const int tx0 = blockIdx.x * TW, ty0 = blockIdx.y * kTileH;

    /* every pass gives thread t the tile column t % kTileWH */
    const int col = t % kTileWH, grp = t / kTileWH;

    /* 1. the tile and its halo, mirrored at the picture's edges: qm_load()
     * with the column's part of the address formed once */
    {
        const int x = qm_vif_mirror(tx0 - R + col, a.w);
        const char *rc = (const char *)a.ref.data + (ptrdiff_t)x * a.ref.step * (ptrdiff_t)sizeof(T);
        const char *dc = (const char *)a.dis.data + (ptrdiff_t)x * a.dis.step * (ptrdiff_t)sizeof(T);
        for (int r = grp; r < G::IH; r += kThreads / kTileWH) {
            const int y = qm_vif_mirror(ty0 - R + r, a.h);
            sm.in_r[r][col] = (uint16_t)(__ldg((const T *)(rc + (ptrdiff_t)y * a.ref.stride)) >> a.ref_shift);
            sm.in_d[r][col] = (uint16_t)(__ldg((const T *)(dc + (ptrdiff_t)y * a.dis.stride)) >> a.dis_shift);
        }
    }
    __syncthreads();

    /* 2a. vertical pass of the statistics (cpu/vif.c stat_vertical*):
     * output rows r0 .. r0 + RG - 1 of column col read tile rows
     * r0 .. r0 + TAPS + RG - 2 */
    if (STAT) {
        const int r0 = grp * RG;
        uint32_t m1[RG], m2[RG];
        Acc sxx[RG], syy[RG], sxy[RG];
#pragma unroll
        for (int q = 0; q < RG; q++) {
            m1[q] = m2[q] = 0;
            sxx[q] = syy[q] = sxy[q] = 0;
        }
#pragma unroll
        for (int j = 0; j < TAPS + RG - 1; j++) {
            const uint32_t x = sm.in_r[r0 + j][col], y = sm.in_d[r0 + j][col];
            const uint32_t pxx = x * x, pyy = y * y, pxy = x * y;
#pragma unroll
            for (int q = 0; q < RG; q++) {
                const int k = j - q;
                if (k < 0 || k >= TAPS)
                    continue;
                const uint32_t fk = a.f[k];
                m1[q] += fk * x;
                m2[q] += fk * y;
                sxx[q] += (Acc)fk * pxx;
                syy[q] += (Acc)fk * pyy;
                sxy[q] += (Acc)fk * pxy;
            }
        }
        /* means >> in_bits, second moments >> 2 (in_bits - 8), both with
         * rounding (libvmaf vif_statistic_8/16, as in cpu/vif.c) */
        const int sh_mu = a.in_bits, sh_sq = 2 * (a.in_bits - 8);
        const uint32_t rnd_mu = 1u << (sh_mu - 1);
        const Acc rnd_sq = sh_sq ? (Acc)1 << (sh_sq - 1) : 0;
#pragma unroll
        for (int q = 0; q < RG; q++) {
            const int o = r0 + q;
            sm.mu1[o][col] = (uint16_t)((m1[q] + rnd_mu) >> sh_mu);
            sm.mu2[o][col] = (uint16_t)((m2[q] + rnd_mu) >> sh_mu);
            sm.xx[o][col] = (uint32_t)((sxx[q] + rnd_sq) >> sh_sq);
            sm.yy[o][col] = (uint32_t)((syy[q] + rnd_sq) >> sh_sq);
            sm.xy[o][col] = (uint32_t)((sxy[q] + rnd_sq) >> sh_sq);
        }
    }

    /* 2b. vertical pass of the decimation (cpu/vif.c dec_vertical*) at the
     * tile's even rows 2m, i.e. picture rows ty0 + 2m (ty0 is even) */
    if (DEC) {
        constexpr int DR = G::DR, DTAPS = G::DTAPS;
        const uint32_t rnd = 1u << (a.in_bits - 1);
#pragma unroll
        for (int it = 0; it < 2; it++) {
            const int m = grp + it * (kThreads / kTileWH);
            const int base = 2 * m + R - DR;
            uint32_t s1 = 0, s2 = 0;
#pragma unroll
            for (int k = 0; k < DTAPS; k++) {
                s1 += a.fd[k] * sm.in_r[base + k][col];
                s2 += a.fd[k] * sm.in_d[base + k][col];
            }
            sm.dv_r[m][col] = (uint16_t)((s1 + rnd) >> a.in_bits);
            sm.dv_d[m][col] = (uint16_t)((s2 + rnd) >> a.in_bits);
        }
    }
    __syncthreads();

    /* 3a. horizontal pass (cpu/vif.c stat_horizontal), local statistics and
     * VIF terms (cpu/vif_pixel.h, the C code's functions); output (o, c)
     * reads tile columns c .. c + 2R */
    QmVifAccum sums = { 0, 0, 0, 0 };
    if (STAT) {
        const uint16_t *tab = a.log2_tab;
        const double egl = a.egl;
        for (int i = t; i < kTileH * TW; i += kThreads) {
            const int o = i / TW, c = i % TW;
            if (ty0 + o >= a.h || tx0 + c >= a.w)
                continue;
            uint32_t a1 = 0, a2 = 0;
            uint64_t fxx = 0, fyy = 0, fxy = 0;
#pragma unroll
            for (int k = 0; k < TAPS; k++) {
                const uint32_t fk = a.f[k];
                a1 += fk * sm.mu1[o][c + k];
                a2 += fk * sm.mu2[o][c + k];
                fxx += (uint64_t)fk * sm.xx[o][c + k];
                fyy += (uint64_t)fk * sm.yy[o][c + k];
                fxy += (uint64_t)fk * sm.xy[o][c + k];
            }
            int32_t s11, s22, s12;
            qm_vif_sigmas(a1, a2, (uint32_t)((fxx + 0x8000) >> 16),
                          (uint32_t)((fyy + 0x8000) >> 16),
                          (uint32_t)((fxy + 0x8000) >> 16), &s11, &s22, &s12);
            qm_vif_pixel_terms(s11, s22, s12, tab, egl, &sums);
        }
    }

    /* 3b. horizontal pass of the decimation at even columns (cpu/vif.c
     * dec_horizontal): next-scale sample (ty0 / 2 + m, tx0 / 2 + n) */
    if (DEC) {
        constexpr int DR = G::DR, DTAPS = G::DTAPS, DW = TW / 2;
        const int wo = a.w / 2, ho = a.h / 2;
        for (int i = t; i < (kTileH / 2) * DW; i += kThreads) {
            const int m = i / DW, n = i % DW;
            const int oy = (ty0 >> 1) + m, ox = (tx0 >> 1) + n;
            if (oy >= ho || ox >= wo)
                continue;
            const int base = 2 * n + R - DR;
            uint32_t s1 = 0, s2 = 0;
#pragma unroll
            for (int k = 0; k < DTAPS; k++) {
                s1 += a.fd[k] * sm.dv_r[m][base + k];
                s2 += a.fd[k] * sm.dv_d[m][base + k];
            }
            uint16_t *ro = (uint16_t *)((char *)a.out_ref + (ptrdiff_t)oy * a.out_stride);
            uint16_t *dout = (uint16_t *)((char *)a.out_dis + (ptrdiff_t)oy * a.out_stride);
            ro[ox] = (uint16_t)((s1 + 0x8000) >> 16);
            dout[ox] = (uint16_t)((s2 + 0x8000) >> 16);
        }
    }

    /* 4. the block's four sums: warps, then one atomicAdd per sum */
    if (STAT) {
        long long v[4] = { sums.num_log, sums.den_log, sums.num_non_log, sums.den_non_log };
#pragma unroll
        for (int q = 0; q < 4; q++)
            for (int off = 16; off > 0; off >>= 1)
                v[q] += __shfl_down_sync(0xffffffffu, v[q], off);
        if ((t & 31) == 0) {
#pragma unroll
            for (int q = 0; q < 4; q++)
                sm.red[t >> 5][q] = v[q];
        }
        __syncthreads();
        if (t < 4) {
            long long sum = 0;
#pragma unroll
            for (int wi = 0; wi < kThreads / 32; wi++)
                sum += sm.red[wi][t];
            if (sum)
                atomicAdd(a.acc + t, (unsigned long long)sum);
        }
    }
}

template <int S, typename T, bool STAT, bool DEC>
void vif_launch(const VifScaleArgs &a, cudaStream_t cs)
{
    constexpr int TW = VifGeo<S>::TW;
    const dim3 grid((unsigned)((a.w + TW - 1) / TW),
                    (unsigned)((a.h + kTileH - 1) / kTileH));
    vif_scale_kernel<S, T, STAT, DEC><<<grid, kThreads, 0, cs>>>(a);
}

typedef struct VifGpu {
    int w[QM_VIF_SCALES], h[QM_VIF_SCALES];
    int bpc;
    bool skip_scale0;
    double egl;
    unsigned filter[QM_VIF_SCALES][17];
    uint16_t *d_log2;                        /* QM_VIF_LOG2_TABLE_SIZE */
    uint16_t *d_ref[QM_VIF_SCALES];          /* scales 1..3 */
    uint16_t *d_dis[QM_VIF_SCALES];
    size_t pitch[QM_VIF_SCALES];             /* bytes */
    unsigned long long *d_acc;               /* [slot][scale][4] */
    unsigned long long *h_acc;               /* pinned copy */
} VifGpu;

enum { ACC_PER_SLOT = QM_VIF_SCALES * 4 };

void vif_gpu_close(void *priv)
{
    VifGpu *s = (VifGpu *)priv;
    for (int i = 1; i < QM_VIF_SCALES; i++) {
        cudaFree(s->d_ref[i]);
        cudaFree(s->d_dis[i]);
        s->d_ref[i] = s->d_dis[i] = NULL;
    }
    cudaFree(s->d_log2);
    cudaFree(s->d_acc);
    cudaFreeHost(s->h_acc);
    s->d_log2 = NULL;
    s->d_acc = NULL;
    s->h_acc = NULL;
}

int vif_gpu_init_buffers(VifGpu *s, unsigned n_slots, cudaStream_t cs)
{
    for (int i = 1; i < QM_VIF_SCALES; i++) {
        s->pitch[i] = ((size_t)s->w[i] * sizeof(uint16_t) + 255) & ~(size_t)255;
        QM_CU_TRY(cudaMalloc(&s->d_ref[i], s->pitch[i] * (size_t)s->h[i]));
        QM_CU_TRY(cudaMalloc(&s->d_dis[i], s->pitch[i] * (size_t)s->h[i]));
    }
    QM_CU_TRY(cudaMalloc(&s->d_acc, n_slots * ACC_PER_SLOT * sizeof(*s->d_acc)));
    QM_CU_TRY(cudaMallocHost(&s->h_acc, n_slots * ACC_PER_SLOT * sizeof(*s->h_acc)));
    memset(s->h_acc, 0, n_slots * ACC_PER_SLOT * sizeof(*s->h_acc));

    /* the C code's log2 table, once (waited for here, at init) */
    const size_t tab_bytes = QM_VIF_LOG2_TABLE_SIZE * sizeof(uint16_t);
    QM_CU_TRY(cudaMalloc(&s->d_log2, tab_bytes));
    uint16_t *tab = (uint16_t *)malloc(tab_bytes);
    if (!tab)
        return QM_ENOMEM;
    qm_vif_log2_table(tab);
    cudaError_t e = cudaMemcpyAsync(s->d_log2, tab, tab_bytes,
                                    cudaMemcpyHostToDevice, cs);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(cs);
    free(tab);
    return e == cudaSuccess ? 0 : QM_EDEVICE;
}

int vif_gpu_init(void *priv, const QmMetricConfig *cfg, unsigned n_slots,
                 QmStream st)
{
    VifGpu *s = (VifGpu *)priv;
    memset(s, 0, sizeof(*s));
    /* the C reference's limits (cpu/vif.c vif_init) */
    if (cfg->w < 16 || cfg->h < 16 || cfg->bpc < 8 || cfg->bpc > 16)
        return QM_ENOTSUP;
    s->bpc = cfg->bpc;
    s->egl = cfg->opt->v[QM_VIF_OPT_EGL];
    s->skip_scale0 = cfg->opt->v[QM_VIF_OPT_SKIP_SCALE0] != 0.0;
    s->w[0] = cfg->w;
    s->h[0] = cfg->h;
    for (int i = 1; i < QM_VIF_SCALES; i++) {
        s->w[i] = s->w[i - 1] / 2;
        s->h[i] = s->h[i - 1] / 2;
    }
    for (int i = 0; i < QM_VIF_SCALES; i++) {
        int taps;
        const uint16_t *f = qm_vif_filter(i, &taps);
        /* the kernels are built for these lengths: 2 (8 >> scale) + 1 */
        if (taps != 2 * (8 >> i) + 1)
            return QM_EINVAL;
        for (int k = 0; k < 17; k++)
            s->filter[i][k] = k < taps ? f[k] : 0;
    }
    int err = vif_gpu_init_buffers(s, n_slots, (cudaStream_t)st);
    if (err)
        vif_gpu_close(s);  /* the backend does not call close() after a failed init */
    return err;
}

int vif_gpu_submit(void *priv, const QmGpuFrame *f, unsigned slot, QmStream st)
{
    VifGpu *s = (VifGpu *)priv;
    cudaStream_t cs = (cudaStream_t)st;
    unsigned long long *acc = s->d_acc + (size_t)slot * ACC_PER_SLOT;
    QM_CU_TRY(cudaMemsetAsync(acc, 0, ACC_PER_SLOT * sizeof(*acc), cs));
    for (int sc = 0; sc < QM_VIF_SCALES; sc++) {
        VifScaleArgs a;
        memset(&a, 0, sizeof(a));
        if (sc == 0) {
            a.ref = f->ref.p[0];
            a.dis = f->dist.p[0];
            a.ref_shift = f->ref.shift;
            a.dis_shift = f->dist.shift;
            a.in_bits = s->bpc;
        } else {
            /* decimated pictures: normalised sample x 2^8, 16-bit samples */
            const QmGpuPlane r = { s->d_ref[sc], (ptrdiff_t)s->pitch[sc],
                                   s->w[sc], s->h[sc], 1 };
            const QmGpuPlane d = { s->d_dis[sc], (ptrdiff_t)s->pitch[sc],
                                   s->w[sc], s->h[sc], 1 };
            a.ref = r;
            a.dis = d;
            a.in_bits = 16;
        }
        a.w = s->w[sc];
        a.h = s->h[sc];
        memcpy(a.f, s->filter[sc], sizeof(a.f));
        if (sc + 1 < QM_VIF_SCALES) {
            memcpy(a.fd, s->filter[sc + 1], sizeof(a.fd));
            a.out_ref = s->d_ref[sc + 1];
            a.out_dis = s->d_dis[sc + 1];
            a.out_stride = (ptrdiff_t)s->pitch[sc + 1];
        }
        a.log2_tab = s->d_log2;
        a.egl = s->egl;
        a.acc = acc + 4 * sc;
        switch (sc) {
        case 0:
            /* vif_skip_scale0: no statistics, but scale 1 still needs the
             * decimated picture */
            if (s->bpc == 8) {
                if (s->skip_scale0)
                    vif_launch<0, uint8_t, false, true>(a, cs);
                else
                    vif_launch<0, uint8_t, true, true>(a, cs);
            } else {
                if (s->skip_scale0)
                    vif_launch<0, uint16_t, false, true>(a, cs);
                else
                    vif_launch<0, uint16_t, true, true>(a, cs);
            }
            break;
        case 1:
            vif_launch<1, uint16_t, true, true>(a, cs);
            break;
        case 2:
            vif_launch<2, uint16_t, true, true>(a, cs);
            break;
        default:
            vif_launch<3, uint16_t, true, false>(a, cs);
            break;
        }
        QM_CU_TRY(cudaGetLastError());
    }
    QM_CU_TRY(cudaMemcpyAsync(s->h_acc + (size_t)slot * ACC_PER_SLOT, acc,
                              ACC_PER_SLOT * sizeof(*acc),
                              cudaMemcpyDeviceToHost, cs));
    return 0;
}

int vif_gpu_collect(void *priv, unsigned slot, QmRows *out)
{
    VifGpu *s = (VifGpu *)priv;
    const unsigned long long *h = s->h_acc + (size_t)slot * ACC_PER_SLOT;
    for (int sc = 0; sc < QM_VIF_SCALES; sc++) {
        if (sc == 0 && s->skip_scale0) {
            /* libvmaf vif_skip_scale0: reported as 0 (cpu/vif.c) */
            qm_rows_set(out, 0, 0, 0.0);
            continue;
        }
        QmVifAccum acc;
        acc.num_log = (int64_t)h[4 * sc + 0];
        acc.den_log = (int64_t)h[4 * sc + 1];
        acc.num_non_log = (int64_t)h[4 * sc + 2];
        acc.den_non_log = (int64_t)h[4 * sc + 3];
        qm_rows_set(out, 0, (unsigned)sc, qm_vif_scale_score(&acc));
    }
    return 0;
}

} /* namespace */

extern "C" const QmCudaFuncs qm_cuda_vif = {
    sizeof(VifGpu), vif_gpu_init, vif_gpu_submit, vif_gpu_collect,
    vif_gpu_close, NULL,
};
