/* gst-qmetric: the CUDA backend (host side, plain C on the CUDA runtime).
 *
 * The runtime is linked statically and loads the driver at run time, so the
 * plugin loads on machines without a GPU or a driver; qm_gpu_open() then
 * fails with QM_EDEVICE and the engine falls back to the CPU.
 */
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "backend.h"
#include "jobqueue.h"
#include "qm_cuda.h"

typedef QmBackendInst QmGpuInst;
typedef QmBackendSetup QmGpuSetup;
typedef struct QmGpu QmGpu;
static void gpu_free(QmGpu *g);

typedef CUresult (*CtxFn)(CUcontext);
typedef CUresult (*CtxPopFn)(CUcontext *);

typedef struct GpuInst {
    QmGpuInst in;
    const QmCudaFuncs *f;
    void *priv;
} GpuInst;

/* `rows` rows of `row` bytes from src (spitch bytes apart) to dst (dpitch
 * bytes apart): one plane of a host picture into the staging. */
typedef struct CopyRun {
    uint8_t *dst;
    const uint8_t *src;
    size_t dpitch, row;
    ptrdiff_t spitch;
    int rows;
} CopyRun;

#define MAX_RUNS 6  /* 3 planes x 2 pictures */

/* A slot is busy from submit() to collect(); in between, its frame is first
 * staged (its planes being copied into `pinned` by the copy workers, or
 * already copied) and then launched (uploaded, kernels queued). */
typedef struct Slot {
    uint8_t *pinned;      /* host staging: ref then dist planes (NULL until
                           * the slot's first host picture: slot_staging()) */
    uint8_t *dev;         /* device copy of the same layout */
    QmGpuFrame frame;
    uint32_t mask;        /* instances to launch, then launched */
    CopyRun runs[MAX_RUNS];
    int n_runs;
    size_t up[2];         /* staging bytes of each picture to upload */
    bool posted;          /* the runs went to the copy workers */
    bool copied;          /* the staging holds the frame's planes */
    bool launched;        /* atomic: poll() reads it without the lock */
    bool busy;
} Slot;

/* Host pictures smaller than this are copied by the submitting thread
 * itself: waking a worker would cost more than the copy.  (The emulator's
 * parity build sets 0, so that its small pictures take the workers' path.) */
#ifndef QM_INLINE_COPY_BYTES
#define QM_INLINE_COPY_BYTES ((size_t)512 << 10)
#endif
static const size_t inline_copy_bytes = QM_INLINE_COPY_BYTES;

struct QmGpu {
    int device;
    char name[320];
    char err[512];
    cudaStream_t st;                 /* the element's stream */
    cudaEvent_t *ev;                 /* per slot: the frame is done */
    /* Uploads have a stream of their own so that frame i + 1's pictures
     * cross the bus while frame i's kernels run; on st an upload would wait
     * for the previous frame's kernels and host input would be bound by the
     * sum of copy and compute instead of the larger of the two. */
    cudaStream_t up_st;
    cudaEvent_t *up_ev;              /* per slot: uploaded */
    cudaEvent_t *up_start_ev;        /* per slot, QMETRIC_CUDA_TIMES only */
    /* fork: each instance on a stream of its own, forked from st after the
     * upload and joined back before ev (kernels of different metrics run
     * side by side; each metric's frames stay in order on its stream) */
    bool fork;
    cudaStream_t *ist;               /* per instance */
    cudaEvent_t *inst_ev;            /* per slot and instance: finished */
    /* QMETRIC_CUDA_TIMES=1 (fork only): where a frame's time goes, without
     * a profiler.  Per instance: the host time of its submit() (the
     * launches) and of its collect(), and the span of its work on its
     * stream (start event after the upload to its done event; it includes
     * waiting for SMs the other streams hold); the host time of whole
     * submissions; summed here and printed per frame to stderr at close */
    bool times;
    cudaEvent_t *start_ev;           /* per slot and instance */
    double *host_us, *span_us;       /* per instance */
    double *launch_us;               /* per instance: host time of submit() */
    double submit_us;                /* host time of the launches (uploads, kernels) */
    double upload_us;                /* span of the uploads on up_st */
    uint64_t submitted;
    uint64_t copy_ns;                /* worker time of staging copies (atomic) */
    uint64_t timed;                  /* frames collected */
    Slot *slot;
    unsigned n_slots;
    GpuInst *inst;
    unsigned n_inst;
    int w, h, bpc;
    QmChroma chroma;
    size_t pic_bytes;                /* staging bytes reserved per picture */
    bool luma_only;                  /* no instance reads chroma */
    /* The staging copy of a host picture runs on copy workers, one plane a
     * job, several frames at once, while the engine's thread submits the
     * next frames.  Measured on the GPU machines: one thread
     * copies 5-8 GB/s out of a file mapping; threads sharing out the rows of
     * one frame reached 10-14 GB/s in all, however many (their page faults
     * meet in the same page tables), while threads copying whole planes of
     * different frames scale (docs/benchmarks.md, "Raw files"). */
    QmJobQueue copyq;
    /* staged, not launched: pend_n slots from launch_next on (the engine
     * uses the slots round robin, backend.h) */
    unsigned launch_next, pend_n;
    /* The worker that finishes a frame's copy launches it (and the copied
     * frames behind it, in order) at once, so the launches need not wait
     * for the engine's next call: waiting in poll() for the newest frame's
     * copy made the copies one at a time again.  The lock keeps the
     * twins' functions (launches by a worker, poll() and collect() by the
     * engine's thread) one at a time, as they were written for. */
    pthread_mutex_t lock;
    bool lock_inited;
    int async_err;                   /* a worker's launch failed (atomic) */
    bool any_host_done;              /* some instance has host_done() */
    CUcontext ctx;                   /* shared context, or NULL */
    CtxFn push;
    CtxPopFn pop;
    QmLogFn log;
    void *log_opaque;
};

static int fail(QmGpu *g, cudaError_t e, const char *call, const char *where)
{
    snprintf(g->err, sizeof(g->err), "%s failed in %s: %s (%s)", call, where,
             cudaGetErrorName(e), cudaGetErrorString(e));
    if (g->log)
        g->log(g->log_opaque, QM_LOG_ERROR, g->err);
    return QM_EDEVICE;
}

/* Evaluate a CUDA runtime call; on error record its name and text, return. */
#define QM_CUDA_CHECK(g, call)                                     \
    do {                                                           \
        cudaError_t e_ = (call);                                   \
        if (e_ != cudaSuccess)                                     \
            return fail((g), e_, #call, __func__);                 \
    } while (0)

static void ctx_push(QmGpu *g)
{
    if (g->ctx)
        g->push(g->ctx);
}

static void ctx_pop(QmGpu *g)
{
    CUcontext c;
    if (g->ctx)
        g->pop(&c);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void copy_job(void *arg, unsigned group, unsigned job, unsigned worker);
static void copies_done(void *arg, unsigned group);

static int open_locked(QmGpu *g, const QmGpuSetup *s)
{
    int n = 0;
    const cudaError_t ce = cudaGetDeviceCount(&n);
    if (ce == cudaErrorInsufficientDriver) {
        /* what a machine without an NVIDIA driver answers: say so in plain
         * words (the runtime's text blames the driver's version) */
        snprintf(g->err, sizeof(g->err), "no usable NVIDIA driver: libcuda is missing "
                 "or older than this build's CUDA runtime (%s)", cudaGetErrorName(ce));
        return QM_EDEVICE;
    }
    if (ce != cudaErrorNoDevice)
        QM_CUDA_CHECK(g, ce);
    if (ce == cudaErrorNoDevice || n <= 0) {
        snprintf(g->err, sizeof(g->err), "no CUDA device");
        return QM_EDEVICE;
    }
    if (!g->ctx) {
        g->device = s->device >= 0 ? s->device : 0;
        if (g->device >= n) {
            snprintf(g->err, sizeof(g->err),
                     "CUDA device %d requested, %d present", g->device, n);
            return QM_EDEVICE;
        }
        QM_CUDA_CHECK(g, cudaSetDevice(g->device));
    } else {
        QM_CUDA_CHECK(g, cudaGetDevice(&g->device));
    }
    struct cudaDeviceProp prop;
    QM_CUDA_CHECK(g, cudaGetDeviceProperties(&prop, g->device));
    snprintf(g->name, sizeof(g->name), "%s (device %d, sm_%d%d)", prop.name,
             g->device, prop.major, prop.minor);
    QM_CUDA_CHECK(g, cudaStreamCreateWithFlags(&g->st, cudaStreamNonBlocking));
    QM_CUDA_CHECK(g, cudaStreamCreateWithFlags(&g->up_st, cudaStreamNonBlocking));

    /* staging: room for the planes back to back, rows padded to 256 bytes;
     * the interleaved chroma of NV12/P010 keeps its pairs (one plane, twice
     * as wide), so every chroma plane is given room for that */
    const size_t bytes = s->bpc > 8 ? 2 : 1;
    size_t off = 0;
    for (int p = 0; p < qm_n_planes(s->chroma); p++) {
        int pw, ph;
        qm_plane_size_full(s->w, s->h, s->chroma, p, &pw, &ph);
        off += (((size_t)pw * (p ? 2 : 1) * bytes + 255) & ~(size_t)255) * (size_t)ph;
    }
    g->pic_bytes = off;
    g->luma_only = true;
    for (unsigned i = 0; i < g->n_inst; i++)
        if (!(g->inst[i].in.desc->flags & QM_METRIC_NO_CHROMA))
            g->luma_only = false;
    if (qm_jobq_start(&g->copyq, s->copy_threads > 1 ? s->copy_threads : 0,
                                     g->n_slots, copy_job, g))
        return QM_ENOMEM;
    qm_jobq_on_done(&g->copyq, copies_done);

    /* QMETRIC_CUDA_STREAMS=1 keeps every metric on the one stream (to
     * compare; the scores are the same either way) */
    const char *env = getenv("QMETRIC_CUDA_STREAMS");
    g->fork = g->n_inst > 1 && !(env && atoi(env) == 1);
    if (g->fork) {
        g->ist = calloc(g->n_inst, sizeof(*g->ist));
        g->inst_ev = calloc((size_t)g->n_slots * g->n_inst, sizeof(*g->inst_ev));
        if (!g->ist || !g->inst_ev)
            return QM_ENOMEM;
        for (unsigned i = 0; i < g->n_inst; i++)
            QM_CUDA_CHECK(g, cudaStreamCreateWithFlags(&g->ist[i], cudaStreamNonBlocking));
        const char *t = getenv("QMETRIC_CUDA_TIMES");
        g->times = t && atoi(t) == 1;
        if (g->times) {
            g->up_start_ev = calloc(g->n_slots, sizeof(*g->up_start_ev));
            if (!g->up_start_ev)
                return QM_ENOMEM;
            for (unsigned i = 0; i < g->n_slots; i++)
                QM_CUDA_CHECK(g, cudaEventCreateWithFlags(&g->up_start_ev[i], 0));
            g->start_ev = calloc((size_t)g->n_slots * g->n_inst, sizeof(*g->start_ev));
            g->host_us = calloc(g->n_inst, sizeof(*g->host_us));
            g->span_us = calloc(g->n_inst, sizeof(*g->span_us));
            g->launch_us = calloc(g->n_inst, sizeof(*g->launch_us));
            if (!g->start_ev || !g->host_us || !g->span_us || !g->launch_us)
                return QM_ENOMEM;
            for (unsigned i = 0; i < g->n_slots * g->n_inst; i++)
                QM_CUDA_CHECK(g, cudaEventCreateWithFlags(&g->start_ev[i], 0));
        }
        for (unsigned i = 0; i < g->n_slots * g->n_inst; i++)
            QM_CUDA_CHECK(g, cudaEventCreateWithFlags(&g->inst_ev[i], g->times ? 0 :
                                                      cudaEventDisableTiming));
    }

    g->ev = calloc(g->n_slots, sizeof(*g->ev));
    g->up_ev = calloc(g->n_slots, sizeof(*g->up_ev));
    g->slot = calloc(g->n_slots, sizeof(*g->slot));
    if (!g->ev || !g->up_ev || !g->slot)
        return QM_ENOMEM;
    for (unsigned i = 0; i < g->n_slots; i++) {
        QM_CUDA_CHECK(g, cudaEventCreateWithFlags(&g->up_ev[i], g->times ? 0 :
                                                  cudaEventDisableTiming));
        QM_CUDA_CHECK(g, cudaEventCreateWithFlags(&g->ev[i],
                                                  cudaEventDisableTiming));
    }
    for (unsigned i = 0; i < g->n_inst; i++) {
        GpuInst *gi = &g->inst[i];
        QmMetricConfig cfg = { s->w, s->h, s->bpc, s->chroma, gi->in.opt };
        gi->priv = calloc(1, gi->f->priv_size ? gi->f->priv_size : 1);
        if (!gi->priv)
            return QM_ENOMEM;
        int err = gi->f->init(gi->priv, &cfg, g->n_slots, (QmStream)g->st);
        if (err) {
            free(gi->priv);
            gi->priv = NULL;
            if (!g->err[0])
                snprintf(g->err, sizeof(g->err), "%s: CUDA initialisation failed",
                         gi->in.desc->name);
            return err;
        }
    }
    /* what init() queued on st is done before another stream uses it */
    if (g->fork)
        QM_CUDA_CHECK(g, cudaStreamSynchronize(g->st));
    return 0;
}

static int gpu_open(void **pout, const QmGpuSetup *s, char **err)
{
    QmGpu **out = (QmGpu **)pout;
    *out = NULL;
    QmGpu *g = calloc(1, sizeof(*g));
    if (!g)
        return QM_ENOMEM;
    g->w = s->w;
    g->h = s->h;
    g->bpc = s->bpc;
    g->chroma = s->chroma;
    g->n_slots = s->n_slots ? s->n_slots : 2;
    pthread_mutex_init(&g->lock, NULL);
    g->lock_inited = true;
    g->log = s->log;
    g->log_opaque = s->log_opaque;
    g->inst = calloc(s->n_inst ? s->n_inst : 1, sizeof(*g->inst));
    if (!g->inst) {
        free(g);
        return QM_ENOMEM;
    }
    for (unsigned i = 0; i < s->n_inst; i++) {
        g->inst[i].in = s->inst[i];
        g->inst[i].f = s->inst[i].desc->cuda;
        g->any_host_done |= g->inst[i].f->host_done != NULL;
    }
    g->n_inst = s->n_inst;

    int ret = 0;
    if (s->context) {
        /* the driver API through the runtime: no link-time libcuda */
        enum cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuCtxPushCurrent", (void **)&g->push,
                                             12000, cudaEnableDefault, &q) ||
            cudaGetDriverEntryPointByVersion("cuCtxPopCurrent", (void **)&g->pop,
                                             12000, cudaEnableDefault, &q) ||
            !g->push || !g->pop) {
            snprintf(g->err, sizeof(g->err), "CUDA driver entry points unavailable");
            ret = QM_EDEVICE;
        } else {
            g->ctx = (CUcontext)s->context;
        }
    }
    if (!ret) {
        ctx_push(g);
        ret = open_locked(g, s);
        ctx_pop(g);
    }
    if (ret) {
        if (err)
            *err = strdup(g->err[0] ? g->err : qm_strerror(ret));
        gpu_free(g);
        return ret;
    }
    *out = g;
    return 0;
}

static const char *gpu_device_name(void *ctx)
{
    return ((QmGpu *)ctx)->name;
}

static const char *gpu_error(void *ctx)
{
    QmGpu *g = ctx;
    return g->err[0] ? g->err : NULL;
}

/* A slot's staging is made at its first host picture, not at open: an
 * engine fed GPU memory reads its pictures in place and never uses it, and
 * pinned memory is slow to make (pages are locked, under a lock of the
 * driver that the process's other CUDA threads wait on, decoders
 * included): at 1080p, 8 slots are about 53 MB an engine, which dozens of
 * live probes starting together would pin at once. */
static int slot_staging(QmGpu *g, Slot *sl)
{
    cudaError_t e;

    if (sl->pinned)
        return 0;
    ctx_push(g);
    e = cudaMallocHost((void **)&sl->pinned, 2 * g->pic_bytes);
    if (e == cudaSuccess) {
        e = cudaMalloc((void **)&sl->dev, 2 * g->pic_bytes);
        if (e != cudaSuccess) {
            cudaFreeHost(sl->pinned);
            sl->pinned = NULL;
        }
    }
    ctx_pop(g);
    return e == cudaSuccess ? 0 : fail(g, e, "allocating the staging", __func__);
}

/* Describe a picture to the kernels.  A host picture gets a compact layout
 * in the slot's staging (only the planes some instance reads, rows padded
 * to 256 bytes); its rows are added to runs[] and *up is the number of
 * staging bytes to upload.  Device pictures are read in place. */
static void stage(QmGpu *g, Slot *sl, int which, const QmPicture *pic,
                  QmGpuPicture *gp, CopyRun *runs, int *n_runs, size_t *up)
{
    const size_t bytes = pic->bpc > 8 ? 2 : 1;
    const int np = qm_n_planes(pic->chroma);
    const bool inter = np == 3 && pic->step[1] == 2;
    /* (a slot with a host picture has its staging: slot_staging()) */
    uint8_t *host = sl->pinned ? sl->pinned + (size_t)which * g->pic_bytes : NULL;
    uint8_t *dev = sl->dev ? sl->dev + (size_t)which * g->pic_bytes : NULL;
    size_t off = 0;

    gp->bpc = pic->bpc;
    gp->shift = pic->shift;
    gp->color = pic->color;
    for (int p = 0; p < np; p++) {
        int pw, ph, fw, fh;
        qm_plane_size(pic->w, pic->h, pic->chroma, p, &pw, &ph);
        /* whole planes are staged: XPSNR and SSIMULACRA2 read an odd
         * size's last chroma column and row, which libvmaf's metrics leave
         * out (qm.h) */
        qm_plane_size_full(pic->w, pic->h, pic->chroma, p, &fw, &fh);
        gp->p[p].w = pw;
        gp->p[p].h = ph;
        gp->p[p].step = pic->step[p] ? pic->step[p] : 1;
        if (pic->flags & QM_PICTURE_DEVICE) {
            gp->p[p].data = pic->data[p];
            gp->p[p].stride = pic->stride[p];
            continue;
        }
        if (p && g->luma_only) {
            gp->p[p].data = NULL;  /* not uploaded: nothing reads it */
            gp->p[p].stride = 0;
            continue;
        }
        if (inter && p == 2) {
            /* Cr shares the staged interleaved plane with Cb */
            gp->p[2].data = (const uint8_t *)gp->p[1].data +
                ((const uint8_t *)pic->data[2] - (const uint8_t *)pic->data[1]);
            gp->p[2].stride = gp->p[1].stride;
            continue;
        }
        const size_t row = (size_t)fw * (inter && p == 1 ? 2 : 1) * bytes;
        const size_t pitch = (row + 255) & ~(size_t)255;
        runs[(*n_runs)++] = (CopyRun){ host + off, pic->data[p], pitch, row,
                                     pic->stride[p], fh };
        gp->p[p].data = dev + off;
        gp->p[p].stride = (ptrdiff_t)pitch;
        off += pitch * (size_t)fh;
    }
    *up = off;
}

/* Launch a staged slot whose planes are in its staging (the context is
 * pushed): upload them, then every instance's kernels. */
static int launch(QmGpu *g, unsigned si)
{
    Slot *sl = &g->slot[si];
    const uint32_t inst_mask = sl->mask;
    const double t_sub = g->times ? now_ms() : 0;
    /* The slot's device pictures are free: its previous frame was collected
     * before this one was submitted, so no kernel still reads them. */
    if (g->times) {
        cudaError_t e = cudaEventRecord(g->up_start_ev[si], g->up_st);
        if (e)
            return fail(g, e, "cudaEventRecord", __func__);
    }
    for (int k = 0; k < 2; k++) {
        if (!sl->up[k])
            continue;
        cudaError_t e = cudaMemcpyAsync(sl->dev + (size_t)k * g->pic_bytes,
                                        sl->pinned + (size_t)k * g->pic_bytes, sl->up[k],
                                        cudaMemcpyHostToDevice, g->up_st);
        if (e)
            return fail(g, e, "cudaMemcpyAsync", __func__);
    }
    {
        cudaError_t e = cudaEventRecord(g->up_ev[si], g->up_st);
        if (e)
            return fail(g, e, "cudaEventRecord", __func__);
    }
    for (unsigned i = 0; i < g->n_inst; i++) {
        if (!(inst_mask & (1u << i)))
            continue;
        cudaStream_t cs = g->fork ? g->ist[i] : g->st;
        cudaError_t e = cudaStreamWaitEvent(cs, g->up_ev[si], 0);
        if (!e && g->times)
            e = cudaEventRecord(g->start_ev[(size_t)si * g->n_inst + i], cs);
        if (e)
            return fail(g, e, "cudaStreamWaitEvent", __func__);
        const double t0 = g->times ? now_ms() : 0;
        int ret = g->inst[i].f->submit(g->inst[i].priv, &sl->frame, si, (QmStream)cs);
        if (g->times)
            g->launch_us[i] += (now_ms() - t0) * 1e3;
        if (ret) {
            e = cudaGetLastError();
            if (e)
                fail(g, e, g->inst[i].in.desc->name, "kernel launch");
            return ret;
        }
        if (g->fork) {
            cudaEvent_t done = g->inst_ev[(size_t)si * g->n_inst + i];
            if ((e = cudaEventRecord(done, cs)) || (e = cudaStreamWaitEvent(g->st, done, 0)))
                return fail(g, e, "cudaEventRecord/cudaStreamWaitEvent", __func__);
        }
    }
    cudaError_t e = cudaEventRecord(g->ev[si], g->st);
    if (e)
        return fail(g, e, "cudaEventRecord", __func__);
    /* after ev's record: poll() queries ev once it sees this */
    __atomic_store_n(&sl->launched, true, __ATOMIC_RELEASE);
    if (g->times) {
        g->submit_us += (now_ms() - t_sub) * 1e3;
        g->submitted++;
    }
    return 0;
}

/* Launch the staged slots in submission order, as long as their copies are
 * done (the lock held, the context current). */
static int launch_staged(QmGpu *g)
{
    while (g->pend_n) {
        const unsigned si = g->launch_next;
        if (!g->slot[si].copied)
            break;
        g->launch_next = (si + 1) % g->n_slots;
        g->pend_n--;
        const int ret = launch(g, si);
        if (ret)
            return ret;
    }
    return 0;
}

/* Make the backend's device current on a copy worker's thread. */
static void ctx_enter(QmGpu *g)
{
    if (g->ctx)
        g->push(g->ctx);
    else
        cudaSetDevice(g->device);
}

/* The copy workers' group-done callback: the frame in slot `group` is in its
 * staging; launch what can be launched. */
static void copies_done(void *arg, unsigned group)
{
    QmGpu *g = arg;
    pthread_mutex_lock(&g->lock);
    g->slot[group].copied = true;
    if (!g->async_err) {
        ctx_enter(g);
        __atomic_store_n(&g->async_err, launch_staged(g), __ATOMIC_RELEASE);
        ctx_pop(g);
    }
    pthread_mutex_unlock(&g->lock);
}

static void copy_plane(const CopyRun *c)
{
    for (int y = 0; y < c->rows; y++)
        memcpy(c->dst + (size_t)y * c->dpitch, c->src + (ptrdiff_t)y * c->spitch, c->row);
}

/* A copy worker's job: plane `job` of the frame staged in slot `group`. */
static void copy_job(void *arg, unsigned group, unsigned job, unsigned worker)
{
    QmGpu *g = arg;
    (void)worker;
    const double t0 = g->times ? now_ms() : 0;
    copy_plane(&g->slot[group].runs[job]);
    if (g->times)
        __atomic_add_fetch(&g->copy_ns, (uint64_t)((now_ms() - t0) * 1e6), __ATOMIC_RELAXED);
}

static int gpu_submit(void *ctx, unsigned slot, const QmPicture *ref,
                      const QmPicture *dist, uint64_t index, uint32_t inst_mask)
{
    QmGpu *g = ctx;
    const unsigned si = slot % g->n_slots;
    Slot *sl = &g->slot[si];
    pthread_mutex_lock(&g->lock);
    int ret = g->async_err;
    if (!ret && sl->busy) {
        snprintf(g->err, sizeof(g->err), "GPU slot %u still busy", slot);
        ret = QM_EINVAL;
    }
    if (ret) {
        pthread_mutex_unlock(&g->lock);
        return ret;
    }
    if (!((ref->flags & dist->flags) & QM_PICTURE_DEVICE) &&
        (ret = slot_staging(g, sl))) {
        pthread_mutex_unlock(&g->lock);
        return ret;
    }
    /* the slot is free (its previous frame was collected), so its staging
     * can be written while the stream works on the other slots */
    sl->n_runs = 0;
    stage(g, sl, 0, ref, &sl->frame.ref, sl->runs, &sl->n_runs, &sl->up[0]);
    stage(g, sl, 1, dist, &sl->frame.dist, sl->runs, &sl->n_runs, &sl->up[1]);
    sl->frame.index = index;
    sl->mask = inst_mask;
    sl->copied = sl->posted = false;
    __atomic_store_n(&sl->launched, false, __ATOMIC_RELAXED);
    sl->busy = true;
    /* queued before the post: the worker that finishes the copy takes the
     * lock, finds the slot here and launches it */
    if (!g->pend_n++)
        g->launch_next = si;
    if (sl->n_runs && sl->up[0] + sl->up[1] >= inline_copy_bytes && g->copyq.n_th)
        sl->posted = qm_jobq_post(&g->copyq, si, (unsigned)sl->n_runs) == 0;
    if (!sl->posted) {
        for (int i = 0; i < sl->n_runs; i++)
            copy_job(g, si, (unsigned)i, 0);
        sl->copied = true;
    }
    ctx_push(g);
    ret = launch_staged(g);
    ctx_pop(g);
    pthread_mutex_unlock(&g->lock);
    return ret;
}

/* A pause between two queries of work that is not done: yield for the
 * first millisecond (a frame is usually that close to done, and
 * cudaEventSynchronize spins or yields the same way), then sleep 50 us,
 * which bounds the wake-up delay while the other slots keep the GPU busy.
 * Unlike cudaEventSynchronize, the wait can give up. */
static void pause_after(double start)
{
    if (now_ms() - start < 1.0) {
        sched_yield();
    } else {
        struct timespec d = { 0, 50000 };
        nanosleep(&d, NULL);
    }
}

/* With the slot's event completed: whether every instance's host work for
 * it is done too (1), still running (0), or failed (< 0). */
static int host_done(QmGpu *g, unsigned si)
{
    const Slot *sl = &g->slot[si];
    for (unsigned i = 0; i < g->n_inst; i++) {
        if (!(sl->mask & (1u << i)) || !g->inst[i].f->host_done)
            continue;
        const int r = g->inst[i].f->host_done(g->inst[i].priv, si);
        if (r < 0) {
            snprintf(g->err, sizeof(g->err), "%s: the host part of frame %llu failed",
                     g->inst[i].in.desc->name, (unsigned long long)sl->frame.index);
            if (g->log)
                g->log(g->log_opaque, QM_LOG_ERROR, g->err);
        }
        if (r <= 0)
            return r;
    }
    return 1;
}

/* Polled without the lock, which the copy workers take to launch: taking
 * it on every pass of the wait made their launches queue behind the
 * engine's thread.  The slot's event is recorded once, before `launched`
 * is set, and recorded again only after collect(), so it can be queried
 * unlocked; host_done() calls the twins and takes the lock. */
static int gpu_poll(void *ctx, unsigned slot, unsigned timeout_ms)
{
    QmGpu *g = ctx;
    const unsigned si = slot % g->n_slots;
    const double start = now_ms();
    int ret;
    for (;;) {
        ret = __atomic_load_n(&g->async_err, __ATOMIC_ACQUIRE);
        if (!ret && __atomic_load_n(&g->slot[si].launched, __ATOMIC_ACQUIRE)) {
            ctx_push(g);
            const cudaError_t e = cudaEventQuery(g->ev[si]);
            ctx_pop(g);
            if (e == cudaSuccess) {
                ret = 1;
                if (g->any_host_done) {
                    pthread_mutex_lock(&g->lock);
                    ctx_push(g);
                    ret = host_done(g, si);
                    ctx_pop(g);
                    pthread_mutex_unlock(&g->lock);
                }
            } else if (e != cudaErrorNotReady) {
                pthread_mutex_lock(&g->lock);
                ret = fail(g, e, "cudaEventQuery", __func__);
                pthread_mutex_unlock(&g->lock);
            }
        }
        if (ret != 0)
            break;
        if (now_ms() - start >= (double)timeout_ms)
            break;
        pause_after(start);
    }
    return ret < 0 ? QM_EDEVICE : ret;
}

static int gpu_collect(void *ctx, unsigned slot, uint64_t index, double *row,
                       uint8_t *set)
{
    QmGpu *g = ctx;
    Slot *sl = &g->slot[slot % g->n_slots];
    int ret = 0;
    /* the copy group is free once its callback (which launched the frame,
     * and may still launch later ones) has returned: wait without the lock */
    if (sl->posted && qm_jobq_wait(&g->copyq, slot % g->n_slots, QM_DEVICE_TIMEOUT_MS) != 1) {
        snprintf(g->err, sizeof(g->err), "the staging copy of frame %llu did not finish",
                 (unsigned long long)index);
        return QM_EDEVICE;
    }
    sl->posted = false;
    pthread_mutex_lock(&g->lock);
    for (unsigned i = 0; i < g->n_inst && !ret; i++) {
        if (!(sl->mask & (1u << i)))
            continue;
        QmRows r;
        memset(&r, 0, sizeof(r));
        r.index = index;
        r.v[0] = row + g->inst[i].in.base;
        r.set[0] = set + g->inst[i].in.base;
        r.aux = g->inst[i].in.aux != QM_NO_AUX ? row + g->inst[i].in.aux : NULL;
        const double t0 = g->times ? now_ms() : 0;
        ret = g->inst[i].f->collect(g->inst[i].priv, slot % g->n_slots, &r);
        if (g->times) {
            const size_t k = (size_t)(slot % g->n_slots) * g->n_inst + i;
            float ms = 0;
            g->host_us[i] += (now_ms() - t0) * 1e3;
            ctx_push(g);
            if (cudaEventElapsedTime(&ms, g->start_ev[k], g->inst_ev[k]) == cudaSuccess)
                g->span_us[i] += ms * 1e3;
            ctx_pop(g);
        }
    }
    if (g->times) {
        float ms = 0;
        ctx_push(g);
        if (cudaEventElapsedTime(&ms, g->up_start_ev[slot % g->n_slots],
                                 g->up_ev[slot % g->n_slots]) == cudaSuccess)
            g->upload_us += ms * 1e3;
        ctx_pop(g);
    }
    g->timed += g->times;
    sl->busy = sl->copied = false;
    __atomic_store_n(&sl->launched, false, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&g->lock);
    return ret;
}

/* Whether every stream is idle within timeout_ms (with the context
 * pushed). */
static bool streams_idle(QmGpu *g, unsigned timeout_ms)
{
    const double start = now_ms();
    for (;;) {
        bool busy = (g->st && cudaStreamQuery(g->st) == cudaErrorNotReady) ||
                    (g->up_st && cudaStreamQuery(g->up_st) == cudaErrorNotReady);
        for (unsigned i = 0; g->ist && i < g->n_inst && !busy; i++)
            busy = g->ist[i] && cudaStreamQuery(g->ist[i]) == cudaErrorNotReady;
        if (!busy)
            return true;
        if (now_ms() - start >= (double)timeout_ms)
            return false;
        pause_after(start);
    }
}

static void print_times(const QmGpu *g)
{
    if (!g->times || !g->timed)
        return;
    fprintf(stderr, "qmetric CUDA, per frame over %llu frames (host time of submit() / "
            "host time of collect() / span on the stream):", (unsigned long long)g->timed);
    for (unsigned i = 0; i < g->n_inst; i++)
        fprintf(stderr, " %s %.1f / %.1f / %.1f us;", g->inst[i].in.desc->name,
                g->submitted ? g->launch_us[i] / g->submitted : 0.0,
                g->host_us[i] / g->timed, g->span_us[i] / g->timed);
    fprintf(stderr, " launch of a frame %.1f us; staging copy %.1f us of worker time a frame;"
            " upload %.1f us on its stream\n",
            g->submitted ? g->submit_us / g->submitted : 0.0,
            g->submitted ? g->copy_ns * 1e-3 / g->submitted : 0.0, g->upload_us / g->timed);
}

static int gpu_close(void *ctx, unsigned timeout_ms)
{
    QmGpu *g = ctx;
    if (!g)
        return 0;
    print_times(g);
    qm_jobq_stop(&g->copyq);  /* before the staging it writes is freed */
    ctx_push(g);
    bool idle = streams_idle(g, timeout_ms);
    ctx_pop(g);
    if (!idle) {
        /* cudaFree and cudaStreamDestroy would wait for the device: the
         * buffers it may still write stay allocated (a leak, once) */
        snprintf(g->err, sizeof(g->err), "the CUDA stream did not go idle within %u ms",
                 timeout_ms);
        if (g->log)
            g->log(g->log_opaque, QM_LOG_ERROR, g->err);
        return QM_EDEVICE;
    }
    gpu_free(g);
    return 0;
}

/* Free everything (the streams are idle or were never used). */
static void gpu_free(QmGpu *g)
{
    qm_jobq_stop(&g->copyq);
    ctx_push(g);
    for (unsigned i = 0; i < g->n_inst; i++) {
        if (g->inst[i].priv && g->inst[i].f->close)
            g->inst[i].f->close(g->inst[i].priv);
        free(g->inst[i].priv);
    }
    for (unsigned i = 0; g->slot && i < g->n_slots; i++) {
        if (g->slot[i].pinned)
            cudaFreeHost(g->slot[i].pinned);
        if (g->slot[i].dev)
            cudaFree(g->slot[i].dev);
        if (g->ev && g->ev[i])
            cudaEventDestroy(g->ev[i]);
    }
    for (unsigned i = 0; g->up_ev && i < g->n_slots; i++)
        if (g->up_ev[i])
            cudaEventDestroy(g->up_ev[i]);
    for (unsigned i = 0; g->up_start_ev && i < g->n_slots; i++)
        if (g->up_start_ev[i])
            cudaEventDestroy(g->up_start_ev[i]);
    for (unsigned i = 0; g->inst_ev && i < g->n_slots * g->n_inst; i++)
        if (g->inst_ev[i])
            cudaEventDestroy(g->inst_ev[i]);
    for (unsigned i = 0; g->start_ev && i < g->n_slots * g->n_inst; i++)
        if (g->start_ev[i])
            cudaEventDestroy(g->start_ev[i]);
    for (unsigned i = 0; g->ist && i < g->n_inst; i++)
        if (g->ist[i])
            cudaStreamDestroy(g->ist[i]);
    if (g->st)
        cudaStreamDestroy(g->st);
    if (g->up_st)
        cudaStreamDestroy(g->up_st);
    ctx_pop(g);
    free(g->slot);
    free(g->ev);
    free(g->ist);
    free(g->up_ev);
    free(g->up_start_ev);
    free(g->inst_ev);
    free(g->start_ev);
    free(g->host_us);
    free(g->span_us);
    free(g->launch_us);
    free(g->inst);
    if (g->lock_inited)
        pthread_mutex_destroy(&g->lock);
    free(g);
}

/* A twin exists and takes these options (motion's five-frame window has
 * no twin yet: such an instance stays on the CPU). */
static bool gpu_can_run(const QmMetricDesc *d, const QmOptValues *o)
{
    return d->cuda != NULL && (!d->cuda_accepts || d->cuda_accepts(o));
}

static void *gpu_device_copy(const void *src, size_t n)
{
    void *d = NULL;
    if (cudaMalloc(&d, n) != cudaSuccess)
        return NULL;
    if (cudaMemcpy(d, src, n, cudaMemcpyHostToDevice) != cudaSuccess) {
        cudaFree(d);
        return NULL;
    }
    return d;
}

static void gpu_device_free(void *p)
{
    cudaFree(p);
}

static const QmBackendOps cuda_backend = {
    .name = "CUDA",
    .can_run = gpu_can_run,
    .open = gpu_open,
    .device_name = gpu_device_name,
    .submit = gpu_submit,
    .poll = gpu_poll,
    .collect = gpu_collect,
    .close = gpu_close,
    .error = gpu_error,
    .device_copy = gpu_device_copy,
    .device_free = gpu_device_free,
};

const QmBackendOps *qm_backend_cuda(void)
{
    return &cuda_backend;
}
