/* gst-qmetric: CUDA twin of cpu/adm.c (integer ADM, libvmaf 3.2.0 "adm").
 *
 * Per frame, on the engine's stream:
 *
 *   adm_scale_kernel x 4   one per scale: every stage of cpu/adm.h for a
 *                          tile of the scale's bands, both pictures, in one
 *                          block (cuda/adm_tile.cuh: DWT vertical pass into
 *                          shared memory, horizontal pass, decouple, CSF
 *                          and masking terms in registers, the 3x3 masking
 *                          sums from shared memory, numerator and
 *                          denominator terms); it writes the band a of both
 *                          pictures (the next scale's input, which stays on
 *                          the device) and per band row and tile its 9
 *                          integer partial sums;
 *   adm_final_kernel       one block per scale: the partial sums of each
 *                          band row added, the row rounded as the C code
 *                          rounds it, the rows added (all integers);
 *   one cudaMemcpyAsync    of the 4 x 9 sums into the slot's pinned buffer.
 *
 * collect() turns the sums into the features with the C code's host
 * functions (qm_adm_num_scale, qm_adm_den_scale, qm_adm_scores).  Every
 * per-sample operation is the C code's integer arithmetic with the same
 * widths and wraps (the int32 rounding term of scales 1-3, the int16
 * truncation of the centre masking term at scale 0), the angle test the
 * same float/double conversions (nvcc --fmad=false), and every sum an
 * integer sum: the twin is bit-exact (cuda_tol 0).
 *
 * The scale kernels' index arithmetic and the final reduction are
 * __host__ __device__ code that tests/parity/host_arith runs on the host
 * against the C stage functions.
 */
#include <stdlib.h>
#include <string.h>

#include "adm_tile.cuh"
#include "common.cuh"

namespace {

using namespace adm;

template <typename T, bool S0, bool STATS, bool WRITE_A>
__global__ void __launch_bounds__(kThreads) adm_scale_kernel(const ScaleArgs a)
{
    __shared__ Tile<S0> sm;
    Regs<S0> r;
    Sums s;
#pragma unroll
    for (int i = 0; i < kSums; i++)
        s.v[i] = 0;
    const int bx = blockIdx.x, by = blockIdx.y, tid = threadIdx.x;
    phase_v<T, S0>(a, bx, by, tid, sm);
    __syncthreads();
    phase_h<S0, STATS, WRITE_A>(a, bx, by, tid, sm, r, s);
    if (!STATS)
        return;
    __syncthreads();
    phase_n<S0>(a, bx, by, tid, sm, r, s);
    /* the row's 16 threads are a half-warp: xor offsets below 16 stay in it */
#pragma unroll
    for (int i = 0; i < kSums; i++)
#pragma unroll
        for (int o = kLanes / 2; o > 0; o >>= 1)
            s.v[i] += __shfl_xor_sync(0xffffffffu, s.v[i], o);
    if ((tid & (kLanes - 1)) == 0)
        write_partials(a, bx, by, tid, s);
}

constexpr int kFinalThreads = 256;

__global__ void __launch_bounds__(kFinalThreads)
adm_final_kernel(const FinalScale *fs, unsigned long long *out)
{
    const FinalScale f = fs[blockIdx.x];
    unsigned long long acc[kSums];
#pragma unroll
    for (int i = 0; i < kSums; i++)
        acc[i] = 0;
    if (f.active)
        for (int row = f.y0 + (int)threadIdx.x; row < f.y1; row += kFinalThreads)
            final_row(f, row, acc);
    /* integer sums: any order gives the same result */
    __shared__ unsigned long long red[kFinalThreads / 32][kSums];
#pragma unroll
    for (int i = 0; i < kSums; i++) {
        for (int o = 16; o > 0; o >>= 1)
            acc[i] += __shfl_down_sync(0xffffffffu, acc[i], o);
        if ((threadIdx.x & 31) == 0)
            red[threadIdx.x >> 5][i] = acc[i];
    }
    __syncthreads();
    if (threadIdx.x < kSums) {
        unsigned long long v = 0;
        for (int w = 0; w < kFinalThreads / 32; w++)
            v += red[w][threadIdx.x];
        out[blockIdx.x * kSums + threadIdx.x] = v;
    }
}

enum { RES_PER_SLOT = QM_ADM_SCALES * kSums };

typedef struct AdmGpu {
    QmAdmSetup set; /* options and scales (cpu/adm.c qm_adm_setup) */
    int ntx[QM_ADM_SCALES], nty[QM_ADM_SCALES];
    int32_t *d_a[QM_ADM_SCALES - 1][2];      /* band a of scales 0..2 */
    size_t a_pitch[QM_ADM_SCALES - 1];       /* bytes */
    unsigned long long *d_part[QM_ADM_SCALES];
    FinalScale *d_final;                     /* [QM_ADM_SCALES] */
    unsigned long long *d_res;               /* [slot][scale][kSums] */
    unsigned long long *h_res;               /* pinned copy */
} AdmGpu;

void adm_gpu_close(void *priv)
{
    AdmGpu *s = (AdmGpu *)priv;
    for (int k = 0; k < QM_ADM_SCALES - 1; k++)
        for (int p = 0; p < 2; p++) {
            cudaFree(s->d_a[k][p]);
            s->d_a[k][p] = NULL;
        }
    for (int k = 0; k < QM_ADM_SCALES; k++) {
        cudaFree(s->d_part[k]);
        s->d_part[k] = NULL;
    }
    cudaFree(s->d_final);
    cudaFree(s->d_res);
    cudaFreeHost(s->h_res);
    s->d_final = NULL;
    s->d_res = NULL;
    s->h_res = NULL;
}

int adm_gpu_buffers(AdmGpu *s, unsigned n_slots, cudaStream_t cs)
{
    for (int k = 0; k < QM_ADM_SCALES; k++) {
        const QmAdmScaleQ *q = &s->set.q[k];
        tiles(q, &s->ntx[k], &s->nty[k]);
        if (k < QM_ADM_SCALES - 1) {
            s->a_pitch[k] = ((size_t)q->w * sizeof(int32_t) + 255) & ~(size_t)255;
            for (int p = 0; p < 2; p++)
                QM_CU_TRY(cudaMalloc(&s->d_a[k][p], s->a_pitch[k] * (size_t)q->h));
        }
        QM_CU_TRY(cudaMalloc(&s->d_part[k], (size_t)q->h * (size_t)s->ntx[k] * kSums *
                                                sizeof(unsigned long long)));
    }
    QM_CU_TRY(cudaMalloc(&s->d_res, n_slots * RES_PER_SLOT * sizeof(*s->d_res)));
    QM_CU_TRY(cudaMallocHost(&s->h_res, n_slots * RES_PER_SLOT * sizeof(*s->h_res)));
    memset(s->h_res, 0, n_slots * RES_PER_SLOT * sizeof(*s->h_res));

    /* the final kernel's per-scale parameters, once (waited for here) */
    FinalScale f[QM_ADM_SCALES];
    for (int k = 0; k < QM_ADM_SCALES; k++)
        f[k] = final_scale(&s->set.q[k], s->d_part[k], s->ntx[k],
                           !(k == 0 && s->set.skip_scale0));
    QM_CU_TRY(cudaMalloc(&s->d_final, sizeof(f)));
    QM_CU_TRY(cudaMemcpyAsync(s->d_final, f, sizeof(f), cudaMemcpyHostToDevice, cs));
    QM_CU_TRY(cudaStreamSynchronize(cs));
    return 0;
}

int adm_gpu_init(void *priv, const QmMetricConfig *cfg, unsigned n_slots, QmStream st)
{
    AdmGpu *s = (AdmGpu *)priv;
    memset(s, 0, sizeof(*s));
    /* the C reference's limits and setup */
    int err = qm_adm_setup(&s->set, cfg);
    if (err)
        return err;
    err = adm_gpu_buffers(s, n_slots, (cudaStream_t)st);
    if (err)
        adm_gpu_close(s); /* the backend does not call close() after a failed init */
    return err;
}

template <typename T, bool S0, bool STATS, bool WRITE_A>
void adm_launch(const ScaleArgs &a, int ntx, int nty, cudaStream_t cs)
{
    adm_scale_kernel<T, S0, STATS, WRITE_A>
        <<<dim3((unsigned)ntx, (unsigned)nty), kThreads, 0, cs>>>(a);
}

int adm_gpu_submit(void *priv, const QmGpuFrame *f, unsigned slot, QmStream st)
{
    AdmGpu *s = (AdmGpu *)priv;
    cudaStream_t cs = (cudaStream_t)st;
    for (int k = 0; k < QM_ADM_SCALES; k++) {
        const void *in[2];
        ptrdiff_t in_stride[2];
        int in_step[2], in_shift[2];
        if (k == 0) {
            const QmGpuPicture *pic[2] = { &f->ref, &f->dist };
            for (int p = 0; p < 2; p++) {
                in[p] = pic[p]->p[0].data;
                in_stride[p] = pic[p]->p[0].stride;
                in_step[p] = pic[p]->p[0].step;
                in_shift[p] = pic[p]->shift;
            }
        } else {
            for (int p = 0; p < 2; p++) {
                in[p] = s->d_a[k - 1][p];
                in_stride[p] = (ptrdiff_t)s->a_pitch[k - 1];
                in_step[p] = 1;
                in_shift[p] = 0;
            }
        }
        const bool last = k == QM_ADM_SCALES - 1;
        const ScaleArgs a = scale_args(&s->set.q[k], s->set.bpc, s->set.egl, in, in_stride,
                                       in_step, in_shift, last ? NULL : s->d_a[k],
                                       last ? 0 : (ptrdiff_t)s->a_pitch[k], s->d_part[k]);
        const int nx = s->ntx[k], ny = s->nty[k];
        if (k == 0) {
            /* adm_skip_scale0: only the band a, for scale 1 */
            if (s->set.bpc == 8) {
                if (s->set.skip_scale0)
                    adm_launch<uint8_t, true, false, true>(a, nx, ny, cs);
                else
                    adm_launch<uint8_t, true, true, true>(a, nx, ny, cs);
            } else {
                if (s->set.skip_scale0)
                    adm_launch<uint16_t, true, false, true>(a, nx, ny, cs);
                else
                    adm_launch<uint16_t, true, true, true>(a, nx, ny, cs);
            }
        } else if (k < QM_ADM_SCALES - 1) {
            adm_launch<int32_t, false, true, true>(a, nx, ny, cs);
        } else {
            adm_launch<int32_t, false, true, false>(a, nx, ny, cs);
        }
        QM_CU_TRY(cudaGetLastError());
    }
    unsigned long long *res = s->d_res + (size_t)slot * RES_PER_SLOT;
    adm_final_kernel<<<QM_ADM_SCALES, kFinalThreads, 0, cs>>>(s->d_final, res);
    QM_CU_TRY(cudaGetLastError());
    QM_CU_TRY(cudaMemcpyAsync(s->h_res + (size_t)slot * RES_PER_SLOT, res,
                              RES_PER_SLOT * sizeof(*res), cudaMemcpyDeviceToHost, cs));
    return 0;
}

int adm_gpu_collect(void *priv, unsigned slot, QmRows *out)
{
    AdmGpu *s = (AdmGpu *)priv;
    double v[QM_ADM_NFEATURES];
    const QmAdmSetup *c = &s->set;
    features(c->q, s->h_res + (size_t)slot * RES_PER_SLOT, c->skip_scale0, c->noise_weight,
             c->dlm_weight, c->min_val, c->w, c->h, v);
    for (unsigned i = 0; i < QM_ADM_NFEATURES; i++)
        qm_rows_set(out, 0, i, v[i]);
    return 0;
}

} /* namespace */

extern "C" const QmCudaFuncs qm_cuda_adm = {
    sizeof(AdmGpu), adm_gpu_init, adm_gpu_submit, adm_gpu_collect, adm_gpu_close, NULL,
};
