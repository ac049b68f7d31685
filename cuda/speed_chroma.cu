/* gst-qmetric: CUDA twin of cpu/speed_chroma.c (SpEED-QA on the chroma planes,
 * libvmaf 3.2.0 "speed_chroma").
 *
 * A frame is four jobs (Cb ref, Cb dis, Cr ref, Cr dis), each kernel takes
 * all four (blockIdx.z = job).  Per job, the stages of cpu/speed.h:
 *
 *   speed_rescale_kernel    (only when speed_prescale rescales) stage 1 and
 *                           stage 2: every destination sample from the
 *                           source samples converted to float on the fly;
 *   speed_antialias_kernel  stage 3 at the kept samples only: the vertical
 *                           pass at the source rows 16 y - r .. 16 y + r of
 *                           the columns the horizontal pass at 16 x reads,
 *                           then that pass (stage 1 on the fly without a
 *                           rescale);
 *   speed_local_kernel      stage 4 on the decimated plane, written cut to
 *                           whole blocks (tw x th) into the frame's result;
 *   speed_cov_kernel        stage 5's covariance: in each of six blocks a
 *                           job, 25 threads form the means, then each thread
 *                           one element of the lower triangle (325);
 *   speed_qr_kernel         stage 5's QR decomposition of the covariance
 *                           (qm_speed_qr_c()): 24 Householder reflections,
 *                           each two 25x25 products, one thread per element.
 * then one cudaMemcpyAsync of the four covariances, QR decompositions and
 * cut planes into the slot's pinned buffer.
 *
 * Equality with the C reference.  Every sample of every stage is computed
 * by one thread with the C code's operations in the C code's order and
 * types: the filters' float sums tap by tap, each mean a float sum in the
 * C loop order, each covariance a double sum in the C loop order (one
 * thread per element: double addition is not associative, so the sums
 * stay sequential; they are short, (tw - 4)(th - 4) terms).  nvcc builds
 * with --fmad=false and the C side with -ffp-contract=off; + - * / and the
 * conversions are correctly rounded on both.  No device libm call is made:
 * the rescalers' source positions and weights (floor, ceil and Lanczos'
 * double sin) are tables the host fills with the C code's own functions
 * (qm_speed_bilinear_pos(), qm_speed_interp_taps()), and the filter taps
 * are the C code's.
 *
 * The rest of stage 5 (the eigenvalues, the back substitution, X .* Y,
 * the log2 of the entropies) and stage 6 run on the host in collect(),
 * through the C functions themselves (qm_speed_estimate_cov_c() given the
 * device's covariance and QR, qm_speed_plane_score(),
 * qm_speed_set_features()).  Why there: the eigenvalues are a sequential
 * float recurrence (GSL's tridiagonalisation and implicit QR steps) that a
 * one-thread kernel would run slowly on the stream, and the entropies need
 * glibc's log2 (CUDA's may differ in the last bit); on the host they are
 * bit-identical by construction and cheap once the QR decomposition (about
 * nine tenths of the C code's stage 5 at 1080p) comes from the device.
 * The stream stays asynchronous: once the slot's event has completed, the
 * engine's poll (host_done()) posts the four estimates to worker threads
 * and polls them while it submits the next frames; collect() finds them
 * done.  So the features equal the C reference's exactly (cuda_tol 0).
 *
 * Memory: the device work buffers (rescaled planes, decimated planes, the
 * result area) are shared by the slots (the stream orders the frames: a
 * frame's copy to its pinned slot is queued before the next frame's
 * kernels); only the pinned results are per slot.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.cuh"
#include "jobqueue.h"

extern "C" {
#include "speed.h"
}

namespace {

constexpr int kJobs = 4;               /* Cb ref, Cb dis, Cr ref, Cr dis */
constexpr int kN = QM_SPEED_N;         /* 25 */
constexpr int kPairs = kN * (kN + 1) / 2;
constexpr int kCovBlock = 64;   /* threads of a block of the covariance */
constexpr int kCovBlocks = (kPairs + kCovBlock - 1) / kCovBlock;  /* per job */
constexpr int kQrThreads = (kN * kN + 31) / 32 * 32;
/* a job's result: covariance, Q, R (kN * kN floats each), the plane */
constexpr int kPlaneAt = 3 * kN * kN;
constexpr int kDec = 1 << QM_SPEED_SCALES;  /* vif_dec16_s: every 16th */
constexpr int kTaps = QM_SPEED_INTERP_TAPS;

/* The four planes of a frame, in job order. */
struct SpeedJobs {
    QmGpuPlane p[kJobs];
    int shift[kJobs];
};

/* cpu/speed.h QmSpeedDims, what the kernels need */
struct SpeedGeo {
    int w, h, sw, sh, ow, oh, tw, th, subw, subh;
    int bpc;
    int res_floats;   /* per job in the result: kPlaneAt + tw * th */
};

/* Host-built tables (device pointers into one allocation). */
struct SpeedTabs {
    const float *aa, *blur;   /* the C code's filter taps */
    int n_aa, n_blur;
    int method;               /* QmSpeedScaler */
    float rx, ry;             /* nearest: source / destination size */
    /* bilinear: x1, x2 the source columns, fx the weight of x2 (per
     * destination column), the same per row; bicubic / Lanczos-4: x1 the
     * floor of the source position, fx kTaps weights per column */
    const int *x1, *x2, *y1, *y2;
    const float *fx, *fy;
};

/* cpu/speed_chroma.c mirror_i() (filters) and mirror_f() (rescalers) */
__device__ __forceinline__ int speed_mirror(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - i - 2 : i;
}

__device__ __forceinline__ float speed_mirror_f(float i, float left, float right)
{
    return i < left ? -i : i > right ? 2 * right - i : i;
}

/* Stage 1 at sample (x, y) of the job's plane: qm_speed_to_float_c(). */
template <typename T>
struct RawSrc {
    SpeedJobs j;
    int bpc;
    __device__ __forceinline__ float at(int job, int x, int y) const
    {
        const float v = (float)qm_load<T>(j.p[job], j.shift[job], x, y);
        if (sizeof(T) == 1)
            return v + -128;
        const float scaler = bpc == 10 ? 4.0f : bpc == 12 ? 16.0f : 256.0f;
        return v / scaler + -128;
    }
};

/* The rescaled planes, [job][sh][sw]. */
struct FloatSrc {
    const float *p;
    int w, h;
    __device__ __forceinline__ float at(int job, int x, int y) const
    {
        return __ldg(p + ((size_t)job * h + y) * w + x);
    }
};

/* Stage 2, qm_speed_rescale_c(): destination sample (x, y) of each job. */
template <typename T>
__global__ void speed_rescale_kernel(RawSrc<T> src, SpeedGeo g, SpeedTabs t,
                                     float *__restrict__ out)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int job = blockIdx.z;
    if (x >= g.sw || y >= g.sh)
        return;
    float v;
    if (t.method == QM_SPEED_NEAREST) {
        v = src.at(job, (int)(x * t.rx), (int)(y * t.ry));
    } else if (t.method == QM_SPEED_BILINEAR) {
        const int x1 = t.x1[x], x2 = t.x2[x], y1 = t.y1[y], y2 = t.y2[y];
        const float fx = t.fx[x], dy = t.fy[y];
        v = (1 - dy) * (1 - fx) * src.at(job, x1, y1) +
            (1 - dy) * fx * src.at(job, x2, y1) +
            dy * (1 - fx) * src.at(job, x1, y2) + dy * fx * src.at(job, x2, y2);
    } else {
        /* cpu/speed_chroma.c interpolate() */
        const int l4 = t.method == QM_SPEED_LANCZOS4;
        const int lo = l4 ? -4 : -1, hi = l4 ? 4 : 2;
        const float *wx = t.fx + (size_t)x * kTaps, *wy = t.fy + (size_t)y * kTaps;
        const int x0 = t.x1[x], y0 = t.y1[y];
        float acc = 0.0f, wsum = 0.0f;
        for (int j = lo; j <= hi; j++)
            for (int i = lo; i <= hi; i++) {
                const float wgt = wx[i - lo] * wy[j - lo];
                wsum += wgt;
                const int xi = (int)speed_mirror_f((float)(x0 + i), 0, (float)(g.w - 1));
                const int yi = (int)speed_mirror_f((float)(y0 + j), 0, (float)(g.h - 1));
                acc += src.at(job, xi, yi) * wgt;
            }
        v = l4 ? acc / wsum : acc;
    }
    out[((size_t)job * g.sh + y) * g.sw + x] = v;
}

/* Stage 3, qm_speed_filter_c() with the anti-alias taps at (16 x, 16 y)
 * only: the vertical pass of each column the horizontal pass reads, each
 * a float sum in tap order as the C code forms its row of them. */
template <typename Src>
__global__ void speed_antialias_kernel(Src src, SpeedGeo g, SpeedTabs t,
                                       float *__restrict__ dec)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int job = blockIdx.z;
    if (x >= g.ow || y >= g.oh)
        return;
    const int fw = t.n_aa, r = fw / 2;
    float acc = 0;
    for (int k = 0; k < fw; k++) {
        const int col = speed_mirror(kDec * x - r + k, g.sw);
        float v = 0;
        for (int kv = 0; kv < fw; kv++)
            v += t.aa[kv] * src.at(job, col, speed_mirror(kDec * y - r + kv, g.sh));
        acc += t.aa[k] * v;
    }
    dec[((size_t)job * g.oh + y) * g.ow + x] = acc;
}

/* Stage 4: the decimated plane minus its blur, at the tw x th samples the
 * covariance and the blocks read, into the job's result (after its
 * covariance). */
__global__ void speed_local_kernel(const float *__restrict__ dec, SpeedGeo g,
                                   SpeedTabs t, float *__restrict__ res)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int job = blockIdx.z;
    if (x >= g.tw || y >= g.th)
        return;
    const float *d = dec + (size_t)job * g.oh * g.ow;
    const int fw = t.n_blur, r = fw / 2;
    float acc = 0;
    for (int k = 0; k < fw; k++) {
        const int col = speed_mirror(x - r + k, g.ow);
        float v = 0;
        for (int kv = 0; kv < fw; kv++)
            v += t.blur[kv] * d[(size_t)speed_mirror(y - r + kv, g.oh) * g.ow + col];
        acc += t.blur[k] * v;
    }
    res[(size_t)job * g.res_floats + kPlaneAt + (size_t)y * g.tw + x] =
        d[(size_t)y * g.ow + x] - acc;
}

/* Stage 5's QR decomposition of the covariance, qm_speed_qr_c(): one
 * block per job, thread (i, j) owns element (i, j) of every 25x25 product
 * (its sum in k order, as the C matmul forms each element); the two norms
 * of each reflection are one thread's sums, as in C. */
__global__ void __launch_bounds__(kQrThreads)
speed_qr_kernel(SpeedGeo g, float *__restrict__ res)
{
    __shared__ float a[kN * kN], z[kN * kN], q[kN * kN], h[kN * kN];
    __shared__ float v[kN], len;
    float *job = res + (size_t)blockIdx.x * g.res_floats;
    const int t = threadIdx.x, i = t / kN, j = t % kN;
    const bool own = t < kN * kN;
    if (own) {
        a[t] = job[t];
        z[t] = a[t];
        q[t] = i == j ? 1 : 0;
    }
    __syncthreads();
    for (int k = 0; k < kN - 1; k++) {
        if (own && (i < k || j < k))
            z[t] = i == j ? 1 : 0;
        __syncthreads();
        if (t < kN)
            v[t] = z[t * kN + k];
        __syncthreads();
        if (t == 0) {
            /* cpu/speed_chroma.c norm_f(): a float sum, sqrt in double */
            float sq = 0;
            for (int m = 0; m < kN; m++)
                sq += v[m] * v[m];
            const float nrm = (float)sqrt((double)sq);
            v[k] += (a[k * kN + k] >= 0 ? 1 : -1) * nrm;
            sq = 0;
            for (int m = 0; m < kN; m++)
                sq += v[m] * v[m];
            len = (float)sqrt((double)sq);
        }
        __syncthreads();
        if (t < kN)
            v[t] = v[t] / len;
        __syncthreads();
        if (own) {
            h[t] = -2 * v[i] * v[j];
            if (i == j)
                h[t] += 1;
        }
        __syncthreads();
        float zn = 0, qn = 0;
        if (own)
            for (int m = 0; m < kN; m++) {
                zn += h[i * kN + m] * z[m * kN + j];
                qn += h[i * kN + m] * q[m * kN + j];
            }
        __syncthreads();
        if (own) {
            z[t] = zn;
            q[t] = qn;
        }
        __syncthreads();
    }
    if (own) {
        float r = 0;
        for (int m = 0; m < kN; m++)
            r += q[i * kN + m] * a[m * kN + j];
        job[kN * kN + t] = q[j * kN + i];    /* Q is returned transposed */
        job[2 * kN * kN + t] = r;
    }
}

/* Stage 5's covariance, qm_speed_cov_c(): blocks of kCovBlock threads,
 * kCovBlocks of them per job (blockIdx.y), a thread per element of the
 * lower triangle.  Each element is one long sequential double sum (C
 * order), so the time is that chain's latency: spread over many SMs, not
 * four blocks (one per job: 94 us at 1080p, against about a tenth).  Every
 * block forms the job's 25 means itself (the same float sums) rather than
 * waiting on another kernel. */
__global__ void __launch_bounds__(kCovBlock)
speed_cov_kernel(SpeedGeo g, float *__restrict__ res)
{
    __shared__ float mean[kN];
    float *cov = res + (size_t)blockIdx.y * g.res_floats;
    const float *__restrict__ data = cov + kPlaneAt;
    const int st = g.tw, t = threadIdx.x;
    const size_t cnt = (size_t)g.subw * (size_t)g.subh;
    if (t < kN) {
        const int r = t / QM_SPEED_BLOCK, c = t % QM_SPEED_BLOCK;
        float s = 0;
        for (int i = 0; i < g.subh; i++) {
            const float *row = data + (size_t)(r + i) * st + c;
#pragma unroll 8
            for (int j = 0; j < g.subw; j++)
                s += row[j];
        }
        mean[t] = s / (float)cnt;
    }
    __syncthreads();
    const int e = blockIdx.x * kCovBlock + t;
    if (e >= kPairs)
        return;
    /* element (a, b), b <= a, of the lower triangle, row by row */
    int a = 0;
    while ((a + 1) * (a + 2) / 2 <= e)
        a++;
    const int b = e - a * (a + 1) / 2;
    const float *pa = data + (size_t)(a / QM_SPEED_BLOCK) * st + a % QM_SPEED_BLOCK;
    const float *pb = data + (size_t)(b / QM_SPEED_BLOCK) * st + b % QM_SPEED_BLOCK;
    const double ma = mean[a], mb = mean[b];
    double s = 0;
    for (int i = 0; i < g.subh; i++) {
        const float *ra = pa + (size_t)i * st, *rb = pb + (size_t)i * st;
#pragma unroll 8
        for (int j = 0; j < g.subw; j++)
            s += ((double)ra[j] - ma) * ((double)rb[j] - mb);
    }
    const float v = (float)(s / (double)cnt);
    cov[a * kN + b] = v;
    cov[b * kN + a] = v;
}

typedef struct SpeedGpu {
    QmSpeedParams m;
    SpeedGeo g;
    SpeedTabs t;
    bool rescale;
    void *d_tab;      /* the tables of t */
    float *d_scaled;  /* [job][sh][sw], only when rescaling */
    float *d_dec;     /* [job][oh][ow] */
    float *d_res;     /* [job][covariance, tw x th plane] */
    float *h_res;     /* pinned, [slot][job][...] */
    float *work;      /* host: [worker] qm_speed_estimate_cov_c()'s work */
    float *blocks;    /* host: [slot][job] entropies, variances (nb each) */
    int *singular;    /* host: [slot][job] */
    size_t work_floats;
    unsigned n_slots;
    /* The four estimates of a frame (Cb ref, Cb dis, Cr ref, Cr dis) are
     * SpEED's main host cost (about 78 us a plane and side at 1080p on the
     * development machine).  They run on worker threads, posted by
     * host_done() once the slot's results are in pinned memory, so they
     * overlap the engine's next submissions instead of holding its backend
     * thread in collect() (jobqueue.h). */
    QmJobQueue q;
    /* per slot, on the engine's backend thread only: estimates posted,
     * and seen finished */
    bool *posted, *finished;
} SpeedGpu;

static void speed_estimate_job(void *arg, unsigned slot, unsigned j, unsigned worker);

static void speed_gpu_close(void *priv)
{
    SpeedGpu *s = (SpeedGpu *)priv;
    qm_jobq_stop(&s->q);
    free(s->posted);
    free(s->singular);
    s->posted = s->finished = NULL;
    s->singular = NULL;
    cudaFree(s->d_tab);
    cudaFree(s->d_scaled);
    cudaFree(s->d_dec);
    cudaFree(s->d_res);
    cudaFreeHost(s->h_res);
    free(s->work);
    free(s->blocks);
    s->d_tab = NULL;
    s->d_scaled = s->d_dec = s->d_res = s->h_res = NULL;
    s->work = s->blocks = NULL;
}

/* The filter taps and the rescaler's tables, uploaded once (waited for
 * here, at init). */
static int speed_upload_tables(SpeedGpu *s, cudaStream_t cs)
{
    const QmSpeedDims *d = &s->m.d;
    const int nw = d->sw, nh = d->sh;
    const size_t n_taps = 256;   /* aa[128], blur[128] */
    const size_t n_f = n_taps + (size_t)kTaps * (nw + nh);
    const size_t n_i = 2 * (size_t)(nw + nh);
    const size_t bytes = n_f * sizeof(float) + n_i * sizeof(int);
    float *hf = (float *)calloc(1, bytes);
    if (!hf)
        return QM_ENOMEM;
    int *hi = (int *)(hf + n_f);
    memcpy(hf, s->m.aa, 128 * sizeof(float));
    memcpy(hf + 128, s->m.blur, 128 * sizeof(float));
    float *fx = hf + n_taps, *fy = fx + (size_t)kTaps * nw;
    int *x1 = hi, *x2 = x1 + nw, *y1 = x2 + nw, *y2 = y1 + nh;
    const float rx = (float)d->w / nw, ry = (float)d->h / nh;
    if (s->rescale && s->m.method == QM_SPEED_BILINEAR) {
        for (int x = 0; x < nw; x++)
            qm_speed_bilinear_pos(x, rx, d->w, &x1[x], &x2[x], &fx[x]);
        for (int y = 0; y < nh; y++)
            qm_speed_bilinear_pos(y, ry, d->h, &y1[y], &y2[y], &fy[y]);
    } else if (s->rescale && s->m.method != QM_SPEED_NEAREST) {
        const int l4 = s->m.method == QM_SPEED_LANCZOS4;
        for (int x = 0; x < nw; x++)
            x1[x] = qm_speed_interp_taps(l4, x, rx, fx + (size_t)x * kTaps);
        for (int y = 0; y < nh; y++)
            y1[y] = qm_speed_interp_taps(l4, y, ry, fy + (size_t)y * kTaps);
    }
    int err = 0;
    if (cudaMalloc(&s->d_tab, bytes) != cudaSuccess ||
        cudaMemcpyAsync(s->d_tab, hf, bytes, cudaMemcpyHostToDevice, cs) != cudaSuccess ||
        cudaStreamSynchronize(cs) != cudaSuccess)
        err = QM_EDEVICE;
    free(hf);
    if (err)
        return err;
    const float *df = (const float *)s->d_tab;
    const int *di = (const int *)(df + n_f);
    SpeedTabs *t = &s->t;
    t->aa = df;
    t->blur = df + 128;
    t->n_aa = s->m.n_aa;
    t->n_blur = s->m.n_blur;
    t->method = (int)s->m.method;
    /* cpu/speed_chroma.c rescale_nearest(): (float)sw / dw */
    t->rx = rx;
    t->ry = ry;
    t->fx = df + n_taps;
    t->fy = t->fx + (size_t)kTaps * nw;
    t->x1 = di;
    t->x2 = di + nw;
    t->y1 = di + 2 * nw;
    t->y2 = t->y1 + nh;
    return 0;
}

static int speed_gpu_init_(SpeedGpu *s, const QmMetricConfig *cfg, unsigned n_slots,
                           QmStream st)
{
    int err = qm_speed_setup(&s->m, cfg);
    if (err)
        return err;
    const QmSpeedDims *d = &s->m.d;
    s->rescale = qm_speed_rescales(s->m.prescale);
    /* a prescale within 1e-3 of 1 that still changes the plane's size:
     * the C code then filters columns or rows it never wrote (see
     * speed_cuda_accepts() in cpu/speed_chroma.c); not computed here */
    if (!s->rescale && (d->sw != d->w || d->sh != d->h))
        return QM_ENOTSUP;
    SpeedGeo *g = &s->g;
    g->w = d->w;
    g->h = d->h;
    g->sw = d->sw;
    g->sh = d->sh;
    g->ow = d->ow;
    g->oh = d->oh;
    g->tw = d->tw;
    g->th = d->th;
    g->subw = d->subw;
    g->subh = d->subh;
    g->bpc = s->m.bpc;
    g->res_floats = kPlaneAt + d->tw * d->th;

    cudaStream_t cs = (cudaStream_t)st;
    err = speed_upload_tables(s, cs);
    if (err)
        return err;
    const size_t res = (size_t)kJobs * (size_t)g->res_floats;
    if (s->rescale)
        QM_CU_TRY(cudaMalloc(&s->d_scaled, sizeof(float) * kJobs * (size_t)d->sw * d->sh));
    QM_CU_TRY(cudaMalloc(&s->d_dec, sizeof(float) * kJobs * (size_t)d->ow * d->oh));
    QM_CU_TRY(cudaMalloc(&s->d_res, sizeof(float) * res));
    QM_CU_TRY(cudaMallocHost(&s->h_res, sizeof(float) * res * (n_slots ? n_slots : 1)));
    s->n_slots = n_slots ? n_slots : 1;
    s->work_floats = qm_speed_estimate_work(d);
    s->work = (float *)malloc(sizeof(float) * kJobs * s->work_floats);
    s->blocks = (float *)malloc(sizeof(float) * s->n_slots * kJobs * 2 * (size_t)d->nb);
    s->singular = (int *)calloc((size_t)s->n_slots * kJobs, sizeof(int));
    s->posted = (bool *)calloc(2 * (size_t)s->n_slots, sizeof(bool));
    if (!s->work || !s->blocks || !s->singular || !s->posted)
        return QM_ENOMEM;
    s->finished = s->posted + s->n_slots;
    /* one worker per estimate: a frame's four run at once */
    if (qm_jobq_start(&s->q, kJobs, s->n_slots, speed_estimate_job, s))
        return QM_ENOMEM;
    return 0;
}

static int speed_gpu_init(void *priv, const QmMetricConfig *cfg, unsigned n_slots,
                          QmStream st)
{
    /* the backend frees priv without close() when init fails */
    const int err = speed_gpu_init_((SpeedGpu *)priv, cfg, n_slots, st);
    if (err)
        speed_gpu_close(priv);
    return err;
}

static dim3 grid_of(int w, int h, dim3 block)
{
    return dim3((unsigned)(w + (int)block.x - 1) / block.x,
                (unsigned)(h + (int)block.y - 1) / block.y, kJobs);
}

template <typename T>
static int speed_gpu_kernels(SpeedGpu *s, const QmGpuFrame *f, cudaStream_t cs)
{
    const SpeedGeo &g = s->g;
    RawSrc<T> raw;
    /* jobs: Cb ref, Cb dis, Cr ref, Cr dis */
    for (int c = 0; c < 2; c++) {
        raw.j.p[2 * c] = f->ref.p[1 + c];
        raw.j.shift[2 * c] = f->ref.shift;
        raw.j.p[2 * c + 1] = f->dist.p[1 + c];
        raw.j.shift[2 * c + 1] = f->dist.shift;
    }
    raw.bpc = g.bpc;
    const dim3 blk(32, 8);
    if (s->rescale) {
        speed_rescale_kernel<T><<<grid_of(g.sw, g.sh, blk), blk, 0, cs>>>(raw, g, s->t,
                                                                          s->d_scaled);
        const FloatSrc fs = { s->d_scaled, g.sw, g.sh };
        speed_antialias_kernel<FloatSrc><<<grid_of(g.ow, g.oh, blk), blk, 0, cs>>>(
            fs, g, s->t, s->d_dec);
    } else {
        typedef RawSrc<T> Raw;  /* (tests/cuda-emu reads one template level) */
        speed_antialias_kernel<Raw><<<grid_of(g.ow, g.oh, blk), blk, 0, cs>>>(
            raw, g, s->t, s->d_dec);
    }
    speed_local_kernel<<<grid_of(g.tw, g.th, blk), blk, 0, cs>>>(s->d_dec, g, s->t,
                                                                  s->d_res);
    speed_cov_kernel<<<dim3(kCovBlocks, kJobs), kCovBlock, 0, cs>>>(g, s->d_res);
    speed_qr_kernel<<<kJobs, kQrThreads, 0, cs>>>(g, s->d_res);
    QM_CU_TRY(cudaGetLastError());
    return 0;
}

static int speed_gpu_submit(void *priv, const QmGpuFrame *f, unsigned slot, QmStream st)
{
    SpeedGpu *s = (SpeedGpu *)priv;
    cudaStream_t cs = (cudaStream_t)st;
    if (slot >= s->n_slots)
        return QM_EINVAL;
    const int err = f->ref.bpc == 8 ? speed_gpu_kernels<uint8_t>(s, f, cs)
                                    : speed_gpu_kernels<uint16_t>(s, f, cs);
    if (err)
        return err;
    const size_t res = (size_t)kJobs * (size_t)s->g.res_floats;
    QM_CU_TRY(cudaMemcpyAsync(s->h_res + res * slot, s->d_res, sizeof(float) * res,
                              cudaMemcpyDeviceToHost, cs));
    s->posted[slot] = s->finished[slot] = false;
    return 0;
}

/* Stage 5's linear algebra of job j (Cb ref, Cb dis, Cr ref, Cr dis) of
 * a slot's frame, on a worker (its own scratch), into the slot's block
 * and singular buffers. */
static void speed_estimate_job(void *arg, unsigned slot, unsigned j, unsigned worker)
{
    SpeedGpu *s = (SpeedGpu *)arg;
    const QmSpeedParams *m = &s->m;
    /* the planes came back cut to tw x th: rows tw floats apart */
    QmSpeedDims cut = m->d;
    cut.stride = (size_t)m->d.tw;
    const size_t job = (size_t)slot * kJobs + j;
    const float *res = s->h_res + (size_t)s->g.res_floats * job;
    float *e = s->blocks + job * 2 * (size_t)m->d.nb;
    s->singular[job] = qm_speed_estimate_cov_c(&cut, res + kPlaneAt, res, res + kN * kN,
                                               m->sigma_nn, e, e + m->d.nb,
                                               s->work + (size_t)worker * s->work_floats);
}

/* The slot's event has completed (its results are in pinned memory): post
 * the frame's four estimates to the workers at the first call, then say
 * whether they are done.  The engine polls this while it submits the next
 * frames, so the estimates overlap them. */
static int speed_gpu_host_done(void *priv, unsigned slot)
{
    SpeedGpu *s = (SpeedGpu *)priv;
    if (slot >= s->n_slots)
        return QM_EINVAL;
    if (!s->posted[slot]) {
        if (qm_jobq_post(&s->q, slot, kJobs))
            return QM_EINVAL;
        s->posted[slot] = true;
    }
    if (!s->finished[slot])
        s->finished[slot] = qm_jobq_wait(&s->q, slot, 0) == 1;
    return s->finished[slot];
}

/* Stage 6 on the host once the slot's estimates are done, with the C
 * functions (see the top of this file for why). */
static int speed_gpu_collect(void *priv, unsigned slot, QmRows *out)
{
    SpeedGpu *s = (SpeedGpu *)priv;
    const QmSpeedParams *m = &s->m;
    const size_t nb = (size_t)m->d.nb;
    /* normally host_done() said 1 already; a caller that did not poll it
     * (tests/parity's direct path) waits here */
    if (slot >= s->n_slots || speed_gpu_host_done(priv, slot) < 0)
        return QM_EINVAL;
    if (!s->finished[slot] && qm_jobq_wait(&s->q, slot, 10000) != 1)
        return QM_EDEVICE;
    s->posted[slot] = s->finished[slot] = false;
    const float *blocks = s->blocks + (size_t)slot * kJobs * 2 * nb;
    const int *sing = s->singular + (size_t)slot * kJobs;
    float score[2];
    int singular[2];
    for (int c = 0; c < 2; c++) {
        const float *er = blocks + (size_t)(2 * c) * 2 * nb;
        const float *ed = blocks + (size_t)(2 * c + 1) * 2 * nb;
        score[c] = qm_speed_plane_score(&m->d, sing[2 * c], sing[2 * c + 1],
                                        er, er + nb, ed, ed + nb,
                                        m->sigma_nn, m->nn_floor, m->mode);
        singular[c] = sing[2 * c] || sing[2 * c + 1];
    }
    qm_speed_set_features(out, score[0], singular[0], score[1], singular[1], m->max_val);
    return 0;
}

}  // namespace

extern "C" const QmCudaFuncs qm_cuda_speed_chroma = {
    sizeof(SpeedGpu), speed_gpu_init, speed_gpu_submit, speed_gpu_collect,
    speed_gpu_close, speed_gpu_host_done,
};
