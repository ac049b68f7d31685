/* gst-qmetric: the engine, i.e. the scheduler of a plan (plan.h: the
 * metric instances and models): frames in flight, ordered results, VMAF
 * prediction.
 *
 * A frame moves through: submitted -> computed (every instance's compute()
 * done, pictures released) -> posted (post() of every instance ran, in frame
 * order) -> ready (the look-ahead of the slowest metric has arrived, models
 * predicted) -> received.  Workers compute several frames at once; a
 * QM_METRIC_SEQUENTIAL instance computes its frames in order.  The rows of a
 * frame stay in the ring until received, so that post() can still write the
 * rows of earlier frames (motion2 of frame i needs frame i + 1).
 *
 * Instances run either on the CPU workers (their QmMetricDesc.cpu functions)
 * or on an accelerator backend seen only through core/backend.h.  The mutex
 * guards the ring and the counters, never work: compute(), the backend's
 * calls (its staging copy, its waits) and the release callback all run with
 * the mutex dropped.  One thread at a time talks to the backend (bk_busy).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metric.h"
#include "model.h"
#include "plan.h"
#include "aggregate.h"
#include "backend.h"

#define MAX_INST QM_PLAN_MAX_INST   /* bitmasks below */
#define MAX_WORKERS 64

/* A plan instance (plan.h) as the scheduler runs it. */
typedef struct Inst {
    const QmMetricDesc *d;
    const QmOptValues *opt;
    unsigned base, nf;   /* first global feature index, feature count */
    void **priv;         /* one per worker, or one for SEQUENTIAL */
    int npriv;
    uint64_t next_seq;   /* SEQUENTIAL: the frame allowed to compute next */
    bool dev;            /* computed by the accelerator backend */
    unsigned aux;        /* plan.h: the row index of its aux values, or
                            QM_NO_AUX */
} Inst;

/* S_RELEASING: computed, the release callback is running (without the
 * lock); post() waits for it so that the pictures are released before the
 * frame can be received. */
typedef enum {
    S_FREE, S_COMPUTING, S_RELEASING, S_COMPUTED, S_POSTED, S_READY
} SlotState;

typedef struct Slot {
    SlotState state;
    uint64_t index;
    QmPicture ref, dist;
    void *user;
    bool computed;        /* not skipped by subsample */
    uint32_t todo;        /* instances to compute on the CPU */
    uint32_t claimed, done;
    bool bk_pending;      /* backend work submitted, not yet collected */
    double *v;
    uint8_t *set;
} Slot;

struct QmEngine {
    QmSettings s;
    char *err;

    QmPlan plan;          /* instances, models, the features of a row */
    Inst inst[MAX_INST];  /* plan.inst[i] as it runs */
    int ninst;

    /* frames */
    Slot *ring;
    unsigned cap;         /* ring capacity */
    uint64_t next_index;  /* next frame to submit */
    uint64_t next_post;   /* next frame for post() */
    uint64_t next_recv;   /* next frame to hand out */
    uint64_t next_ready;  /* next frame to become ready */
    unsigned max_inflight;
    bool flushed, failed;
    double *outv;         /* copy handed out by receive */
    uint8_t *outset;

    /* threads */
    pthread_mutex_t lock;
    pthread_cond_t work_cv, done_cv;
    pthread_t th[MAX_WORKERS];
    int nthreads;         /* 0: compute in the caller's thread */
    bool quit;
    int busy;             /* tasks being computed */
    bool sync_inited, threads_started;

    /* accelerator backend: the instances it can run go there */
    const QmBackendOps *bk;
    void *bk_ctx;
    unsigned bk_slots;
    uint64_t next_bk;     /* oldest frame whose backend work is not collected */
    bool bk_busy;         /* a thread is calling the backend (lock dropped) */
    unsigned timeout_ms;  /* bound on every wait for the backend */
    char backend_note[320]; /* where the metrics run and why (open_backend) */
    unsigned test_delay_us; /* QMETRIC_TEST_DELAY_US: a slow CPU, for tests */
};

const char *qm_strerror(int err)
{
    switch (err) {
    case QM_OK: return "success";
    case QM_EINVAL: return "invalid argument";
    case QM_ENOMEM: return "out of memory";
    case QM_ENOTSUP: return "not supported";
    case QM_EMODEL: return "model file missing or malformed";
    case QM_EIO: return "input/output error";
    case QM_EDEVICE: return "GPU device error";
    case QM_EAGAIN: return "no result ready";
    case QM_EOF: return "end of stream";
    default: return "unknown error";
    }
}

/* log2 of plane p's subsampling */
static void subsampling(QmChroma chroma, int p, int *sx, int *sy)
{
    *sx = p > 0 && (chroma == QM_CHROMA_420 || chroma == QM_CHROMA_422);
    *sy = p > 0 && chroma == QM_CHROMA_420;
}

void qm_plane_size(int w, int h, QmChroma chroma, int p, int *pw, int *ph)
{
    int sx, sy;
    subsampling(chroma, p, &sx, &sy);
    /* floor, as libvmaf sizes the chroma planes of odd-sized pictures */
    *pw = w >> sx;
    *ph = h >> sy;
}

void qm_plane_size_full(int w, int h, QmChroma chroma, int p, int *pw, int *ph)
{
    int sx, sy;
    subsampling(chroma, p, &sx, &sy);
    *pw = (w + sx) >> sx;
    *ph = (h + sy) >> sy;
}

int qm_n_planes(QmChroma chroma)
{
    return chroma == QM_CHROMA_400 ? 1 : 3;
}

void qm_settings_default(QmSettings *s, int w, int h, int bpc, QmChroma chroma)
{
    memset(s, 0, sizeof(*s));
    s->w = w;
    s->h = h;
    s->bpc = bpc;
    s->chroma = chroma;
    s->n_threads = 1;
    s->subsample = 1;
    s->backend = QM_BACKEND_CPU;
    s->cuda_device = -1;
}

static void set_error(QmEngine *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    qm_vmessage(&e->err, &e->s, QM_LOG_ERROR, fmt, ap);
    va_end(ap);
}

void qm_engine_log(QmEngine *e, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    qm_vmessage(NULL, &e->s, level, fmt, ap);
    va_end(ap);
}

/* ---- CPU backend: instances' private data per worker ---- */

static int cpu_init_insts(QmEngine *e)
{
    int workers = e->nthreads ? e->nthreads : 1;
    for (int i = 0; i < e->ninst; i++) {
        Inst *in = &e->inst[i];
        /* a backend instance keeps one CPU state, for post() and flush() */
        in->npriv = (in->d->flags & QM_METRIC_SEQUENTIAL) || in->dev ? 1 : workers;
        in->priv = calloc((size_t)in->npriv, sizeof(void *));
        if (!in->priv)
            return QM_ENOMEM;
        QmMetricConfig cfg = { e->s.w, e->s.h, e->s.bpc, e->s.chroma, in->opt };
        for (int k = 0; k < in->npriv; k++) {
            in->priv[k] = calloc(1, in->d->cpu.priv_size ? in->d->cpu.priv_size : 1);
            if (!in->priv[k])
                return QM_ENOMEM;
            int err = in->d->cpu.init(in->priv[k], &cfg);
            if (err == QM_ENOTSUP) {
                /* a size or depth the metric refuses with these option
                 * values (SpEED's prescale and 16x decimation must leave a
                 * 5x5 block, say): name the input, not just "not supported" */
                set_error(e, "%s cannot run on %dx%d %d-bit %s input with its "
                          "options (the picture's size or depth is outside "
                          "what they allow)", in->d->name, e->s.w, e->s.h, e->s.bpc,
                          qm_chroma_name(e->s.chroma));
                free(in->priv[k]);
                in->priv[k] = NULL;
                return err;
            }
            if (err) {
                set_error(e, "%s: initialisation failed: %s", in->d->name,
                          qm_strerror(err));
                free(in->priv[k]);
                in->priv[k] = NULL;
                return err;
            }
        }
    }
    return 0;
}

static void cpu_close_insts(QmEngine *e)
{
    for (int i = 0; i < e->ninst; i++) {
        Inst *in = &e->inst[i];
        for (int k = 0; in->priv && k < in->npriv; k++) {
            if (!in->priv[k])
                continue;
            if (in->d->cpu.close)
                in->d->cpu.close(in->priv[k]);
            free(in->priv[k]);
        }
        free(in->priv);
        in->priv = NULL;
    }
}

static Slot *slot_of(QmEngine *e, uint64_t index)
{
    return &e->ring[index % e->cap];
}

static void rows_for(QmEngine *e, const Inst *in, uint64_t index, QmRows *r)
{
    memset(r, 0, sizeof(*r));
    r->index = index;
    for (unsigned b = 0; b <= QM_MAX_DELAY && b <= index; b++) {
        uint64_t k = index - b;
        if (k < e->next_recv)
            break;  /* already handed out */
        Slot *s = slot_of(e, k);
        r->v[b] = s->v + in->base;
        r->set[b] = s->set + in->base;
    }
}

/* Run one instance on one frame (called without the lock). */
static int run_task(QmEngine *e, Slot *s, int inst, int worker)
{
    Inst *in = &e->inst[inst];
    QmRows r;
    memset(&r, 0, sizeof(r));
    r.index = s->index;
    r.v[0] = s->v + in->base;
    r.set[0] = s->set + in->base;
    r.aux = in->aux != QM_NO_AUX ? s->v + in->aux : NULL;
    QmFrame f = { &s->ref, &s->dist, s->index };
    void *priv = in->priv[in->npriv == 1 ? 0 : worker];
    int err = in->d->cpu.compute(priv, &f, &r);
    if (e->test_delay_us && s->computed)
        usleep(e->test_delay_us);
    if (err)
        set_error(e, "%s failed on frame %llu: %s", in->d->name,
                  (unsigned long long)s->index, qm_strerror(err));
    return err;
}

/* With the lock held: find a runnable task.  Returns the slot or NULL. */
static Slot *pick_task(QmEngine *e, int *inst)
{
    for (uint64_t k = e->next_post; k < e->next_index; k++) {
        Slot *s = slot_of(e, k);
        if (s->state != S_COMPUTING)
            continue;
        uint32_t avail = s->todo & ~s->claimed;
        while (avail) {
            int i = __builtin_ctz(avail);
            avail &= avail - 1;
            Inst *in = &e->inst[i];
            if ((in->d->flags & QM_METRIC_SEQUENTIAL) && in->next_seq != s->index)
                continue;
            s->claimed |= 1u << i;
            if (in->d->flags & QM_METRIC_SEQUENTIAL)
                in->next_seq = UINT64_MAX;  /* busy until this task ends */
            *inst = i;
            return s;
        }
    }
    return NULL;
}

static void predict_ready(QmEngine *e, Slot *s)
{
    if (!s->computed)
        return;
    for (int m = 0; m < e->plan.nmodels; m++) {
        QmPlanModel *mo = &e->plan.models[m];
        double in[QM_MAX_FEATURES];
        unsigned n = qm_model_n_inputs(mo->m);
        bool ok = true;
        for (unsigned i = 0; i < n; i++) {
            ok &= s->set[mo->in[i]] != 0;
            in[i] = s->v[mo->in[i]];
        }
        if (!ok)
            continue;
        s->v[mo->out] = qm_model_predict(mo->m, in, e->s.disable_clip,
                                         e->s.enable_transform);
        s->set[mo->out] = 1;
    }
}

/* With the lock held: run post() in order and mark frames ready. */
static void advance(QmEngine *e)
{
    while (e->next_post < e->next_index) {
        Slot *s = slot_of(e, e->next_post);
        if (s->state != S_COMPUTED)
            break;
        for (int i = 0; i < e->ninst; i++) {
            Inst *in = &e->inst[i];
            if (!in->d->cpu.post)
                continue;
            QmRows r;
            rows_for(e, in, s->index, &r);
            int err = in->d->cpu.post(in->priv[0], &r);
            if (err) {
                set_error(e, "%s: post-processing failed", in->d->name);
                e->failed = true;
            }
        }
        s->state = S_POSTED;
        e->next_post++;
    }
    /* frame k is ready once frame k + delay is posted, or after a flush */
    while (e->next_ready < e->next_post &&
           (e->next_ready + e->plan.delay < e->next_post ||
            (e->flushed && e->next_post == e->next_index))) {
        Slot *s = slot_of(e, e->next_ready);
        predict_ready(e, s);
        s->state = S_READY;
        e->next_ready++;
    }
}

/* With the lock held, which it drops while the release callback runs:
 * instance inst (-1: the backend) is done with frame s. */
static void finish_task(QmEngine *e, Slot *s, int inst, int err)
{
    if (inst >= 0) {
        s->done |= 1u << inst;
        if (e->inst[inst].d->flags & QM_METRIC_SEQUENTIAL)
            e->inst[inst].next_seq = s->index + 1;
    }
    if (err)
        e->failed = true;
    if (s->done == s->todo && !s->bk_pending && s->state == S_COMPUTING) {
        if (e->s.release) {
            /* the callback unmaps upstream buffers: not under the lock */
            s->state = S_RELEASING;
            void *user = s->user;
            pthread_mutex_unlock(&e->lock);
            e->s.release(e->s.release_opaque, user);
            pthread_mutex_lock(&e->lock);
        }
        s->state = S_COMPUTED;
        advance(e);
        pthread_cond_broadcast(&e->done_cv);
    }
}

/* With the lock held: become the one thread that calls the backend. */
static void bk_enter(QmEngine *e)
{
    while (e->bk_busy)
        pthread_cond_wait(&e->done_cv, &e->lock);
    e->bk_busy = true;
}

static void bk_leave(QmEngine *e)
{
    e->bk_busy = false;
    pthread_cond_broadcast(&e->done_cv);
}

static void bk_fail(QmEngine *e, const char *what)
{
    const char *msg = e->bk->error(e->bk_ctx);
    set_error(e, "%s: %s", e->bk->name, msg ? msg : what);
    e->failed = true;
}

/* With the lock held (dropped around the backend's calls): collect the
 * backend work of finished frames, in order.  block: wait, at most
 * timeout_ms per frame, until frame `until` is collected. */
static int bk_reap(QmEngine *e, bool block, uint64_t until)
{
    if (!e->bk)
        return 0;
    bk_enter(e);
    int ret = 0;
    while (!e->failed && e->next_bk < e->next_index) {
        Slot *s = slot_of(e, e->next_bk);
        if (!s->bk_pending) {
            e->next_bk++;
            continue;
        }
        const bool wait = block && e->next_bk <= until;
        const unsigned slot = (unsigned)(s->index % e->bk_slots);
        const uint64_t index = s->index;
        /* the slot's row is written by collect() alone until bk_pending
         * clears: nothing else reads a frame before it is computed */
        pthread_mutex_unlock(&e->lock);
        int r = e->bk->poll(e->bk_ctx, slot, wait ? e->timeout_ms : 0);
        if (r == 1 && e->bk->collect(e->bk_ctx, slot, index, s->v, s->set) < 0)
            r = QM_EDEVICE;
        pthread_mutex_lock(&e->lock);
        if (r < 0) {
            bk_fail(e, "device work failed");
            ret = QM_EDEVICE;
            break;
        }
        if (r == 0) {
            if (wait) {
                set_error(e, "%s: the device did not finish frame %llu within %u ms",
                          e->bk->name, (unsigned long long)index, e->timeout_ms);
                e->failed = true;
                ret = QM_EDEVICE;
            }
            break;
        }
        s->bk_pending = false;
        e->next_bk++;
        finish_task(e, s, -1, 0);
    }
    bk_leave(e);
    return ret;
}

static void *worker_main(void *arg)
{
    QmEngine *e = ((void **)arg)[0];
    int id = (int)(intptr_t)((void **)arg)[1];
    free(arg);
    pthread_mutex_lock(&e->lock);
    for (;;) {
        int inst;
        Slot *s;
        while (!e->quit && !(s = pick_task(e, &inst)))
            pthread_cond_wait(&e->work_cv, &e->lock);
        if (e->quit)
            break;
        e->busy++;
        pthread_mutex_unlock(&e->lock);
        int err = run_task(e, s, inst, id);
        pthread_mutex_lock(&e->lock);
        e->busy--;
        finish_task(e, s, inst, err);
        pthread_cond_broadcast(&e->work_cv);  /* a sequential task may be free */
        pthread_cond_broadcast(&e->done_cv);
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

static int inflight(const QmEngine *e)
{
    return (int)(e->next_index - e->next_post);
}

/* ---- public API ---- */

/* Put the instances the backend can run on it.  With backend=auto a
 * missing or failing device means the CPU, said once in the log. */
static int open_backend(QmEngine *e, const QmBackendOps *ops)
{
    QmBackendInst gi[MAX_INST];
    unsigned n = 0;
    if (!ops) {
        snprintf(e->backend_note, sizeof(e->backend_note),
                 "this build has no CUDA backend");
        if (e->s.backend != QM_BACKEND_CUDA)
            return 0;
        set_error(e, "backend=cuda: this build has no CUDA backend "
                  "(meson -Dcuda=enabled)");
        return QM_EDEVICE;
    }
    for (int i = 0; i < e->ninst; i++) {
        if (!ops->can_run(e->inst[i].d, e->inst[i].opt))
            continue;
        gi[n].desc = e->inst[i].d;
        gi[n].opt = e->inst[i].opt;
        gi[n].base = e->inst[i].base;
        gi[n].aux = e->inst[i].aux;
        n++;
    }
    if (n == 0 && e->s.backend == QM_BACKEND_AUTO) {
        snprintf(e->backend_note, sizeof(e->backend_note),
                 "none of the metrics has a %s twin", ops->name);
        return 0;
    }
    /* Frames in flight on the device.  Host pictures are copied into the
     * staging of several frames at once (a worker a plane) while earlier
     * frames run: eight slots keep eight copy workers and the GPU busy;
     * with fewer threads, four. */
    const unsigned copy_threads = e->nthreads > 8 ? 8 : e->nthreads > 1 ? (unsigned)e->nthreads : 1;
    e->bk_slots = copy_threads >= 4 ? 8 : 4;
    QmBackendSetup gs = {
        .w = e->s.w, .h = e->s.h, .bpc = e->s.bpc, .chroma = e->s.chroma,
        .device = e->s.cuda_device, .context = e->s.cuda_context,
        .n_slots = e->bk_slots, .inst = gi, .n_inst = n,
        .copy_threads = copy_threads,
        .log = e->s.log, .log_opaque = e->s.log_opaque,
    };
    char *msg = NULL;
    int err = ops->open(&e->bk_ctx, &gs, &msg);
    if (err) {
        if (e->s.backend == QM_BACKEND_CUDA) {
            set_error(e, "backend=cuda: %s", msg ? msg : qm_strerror(err));
            free(msg);
            return err;
        }
        snprintf(e->backend_note, sizeof(e->backend_note), "no usable GPU: %s",
                 msg ? msg : qm_strerror(err));
        qm_engine_log(e, QM_LOG_INFO, "%s: metrics run on the CPU", e->backend_note);
        free(msg);
        return 0;
    }
    e->bk = ops;
    /* the backend's instance index k is the k-th instance it accepted */
    for (int i = 0; i < e->ninst; i++)
        e->inst[i].dev = ops->can_run(e->inst[i].d, e->inst[i].opt);
    snprintf(e->backend_note, sizeof(e->backend_note), "%s on %s: %u of %d "
             "metric instances on the GPU", ops->name,
             ops->device_name(e->bk_ctx), n, e->ninst);
    qm_engine_log(e, QM_LOG_INFO, "%s backend on %s: %u of %d metric "
                  "instances on the GPU", ops->name, ops->device_name(e->bk_ctx),
                  n, e->ninst);
    for (int i = 0; i < e->ninst; i++)
        if (!e->inst[i].dev)
            qm_engine_log(e, e->s.backend == QM_BACKEND_CUDA ? QM_LOG_WARNING : QM_LOG_INFO,
                          "%s has no %s twin%s: it runs on the CPU", e->inst[i].d->name,
                          ops->name, e->inst[i].d->cuda ? " for its options" : "");
    return 0;
}

static void engine_free(QmEngine *e)
{
    if (e->threads_started) {
        pthread_mutex_lock(&e->lock);
        e->quit = true;
        pthread_cond_broadcast(&e->work_cv);
        pthread_mutex_unlock(&e->lock);
        for (int i = 0; i < e->nthreads; i++)
            pthread_join(e->th[i], NULL);
    }
    if (e->sync_inited) {
        pthread_mutex_destroy(&e->lock);
        pthread_cond_destroy(&e->work_cv);
        pthread_cond_destroy(&e->done_cv);
    }
    /* the device is idle once closed: only then may pictures go.  A device
     * that does not answer within the bound is abandoned (its buffers
     * leak); the pictures still go back to the caller, whose results are
     * lost anyway, so that a wedged GPU cannot hang a state change. */
    if (e->bk && e->bk->close(e->bk_ctx, e->timeout_ms) < 0) {
        const char *msg = e->bk->error(e->bk_ctx);
        qm_engine_log(e, QM_LOG_ERROR, "%s: the device did not go idle within %u ms "
                      "(%s); its buffers are abandoned", e->bk->name, e->timeout_ms,
                      msg ? msg : "no answer");
    }
    e->bk = NULL;
    /* pictures of frames still in flight are released: the caller owns them */
    if (e->ring && e->s.release) {
        for (uint64_t k = e->next_post; k < e->next_index; k++) {
            Slot *s = slot_of(e, k);
            if (s->state == S_COMPUTING)
                e->s.release(e->s.release_opaque, s->user);
        }
    }
    cpu_close_insts(e);
    qm_plan_free(&e->plan);
    for (unsigned i = 0; e->ring && i < e->cap; i++) {
        free(e->ring[i].v);
        free(e->ring[i].set);
    }
    free(e->ring);
    free(e->outv);
    free(e->outset);
    free(e->err);
    free(e);
}

int qm_engine_open(QmEngine **out, const QmSettings *s, char **errmsg)
{
    return qm_engine_open_with(out, s, qm_backend_cuda(), errmsg);
}

int qm_engine_open_with(QmEngine **out, const QmSettings *s,
                        const QmBackendOps *accel, char **errmsg)
{
    *out = NULL;
    if (errmsg)
        *errmsg = NULL;
    QmEngine *e = calloc(1, sizeof(*e));
    if (!e)
        return QM_ENOMEM;
    e->s = *s;
    e->timeout_ms = s->device_timeout_ms ? s->device_timeout_ms : QM_DEVICE_TIMEOUT_MS;
    /* a test hook: every CPU computation of a metric on a scored frame
     * takes this much longer (a machine too slow for its input, on demand;
     * the element's overload test, docs/element.md "Overload") */
    const char *delay = getenv("QMETRIC_TEST_DELAY_US");
    if (delay)
        e->test_delay_us = (unsigned)strtoul(delay, NULL, 10);
    int err = QM_EINVAL;
    if (s->w <= 0 || s->h <= 0 || s->bpc < 8 || s->bpc > 16 ||
        s->chroma > QM_CHROMA_444) {
        set_error(e, "unsupported picture: %dx%d, %d bits", s->w, s->h, s->bpc);
        goto fail;
    }
    char *why = NULL;
    if ((err = qm_plan_build(&e->plan, s, &why))) {
        if (why)
            set_error(e, "%s", why);
        free(why);
        goto fail;
    }
    e->ninst = e->plan.ninst;
    for (int i = 0; i < e->ninst; i++) {
        const QmPlanInst *pi = &e->plan.inst[i];
        e->inst[i].d = pi->d;
        e->inst[i].opt = &pi->opt;
        e->inst[i].base = pi->base;
        e->inst[i].nf = pi->nf;
        e->inst[i].aux = pi->aux;
    }
    /* the settings' strings were only needed above */
    e->s.metrics = e->s.models = e->s.model_path = e->s.features = NULL;
    if (e->s.subsample < 1)
        e->s.subsample = 1;

    int nt = s->n_threads;
    if (nt <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nt = n > 0 ? (int)n : 1;
    }
    if (nt > MAX_WORKERS)
        nt = MAX_WORKERS;
    e->nthreads = nt > 1 ? nt : 0;
    e->max_inflight = (unsigned)(nt > 1 ? 2 * nt : 1);
    e->cap = e->max_inflight + e->plan.delay + 64;

    snprintf(e->backend_note, sizeof(e->backend_note), "backend=cpu");
    if (s->backend != QM_BACKEND_CPU && (err = open_backend(e, accel)))
        goto fail;
    if ((err = cpu_init_insts(e)))
        goto fail;

    e->ring = calloc(e->cap, sizeof(*e->ring));
    /* the features, then the aux values (plan.h; QmAggregates reads them) */
    e->outv = calloc(e->plan.nfeat + e->plan.naux, sizeof(double));
    e->outset = calloc(e->plan.nfeat, 1);
    if (!e->ring || !e->outv || !e->outset) {
        err = QM_ENOMEM;
        goto fail;
    }
    for (unsigned i = 0; i < e->cap; i++) {
        /* the features, then the aux values (plan.h) */
        e->ring[i].v = calloc(e->plan.nfeat + e->plan.naux, sizeof(double));
        e->ring[i].set = calloc(e->plan.nfeat, 1);
        if (!e->ring[i].v || !e->ring[i].set) {
            err = QM_ENOMEM;
            goto fail;
        }
    }

    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->work_cv, NULL);
    pthread_cond_init(&e->done_cv, NULL);
    e->sync_inited = true;
    int started = 0;
    for (int i = 0; i < e->nthreads; i++) {
        void **arg = malloc(2 * sizeof(void *));
        if (!arg)
            break;
        arg[0] = e;
        arg[1] = (void *)(intptr_t)i;
        if (pthread_create(&e->th[i], NULL, worker_main, arg)) {
            free(arg);
            break;
        }
        started++;
    }
    e->threads_started = started > 0;
    if (started < e->nthreads) {
        e->nthreads = started;
        set_error(e, "cannot start worker threads");
        err = QM_ENOMEM;
        goto fail;
    }
    *out = e;
    return 0;

fail:
    if (errmsg)
        *errmsg = strdup(e->err ? e->err : qm_strerror(err));
    engine_free(e);
    return err;
}

QmBackend qm_engine_backend(const QmEngine *e)
{
    return e->bk ? QM_BACKEND_CUDA : QM_BACKEND_CPU;
}

const char *qm_engine_backend_note(const QmEngine *e)
{
    return e->backend_note;
}

bool qm_engine_reads_host(const QmEngine *e)
{
    for (int i = 0; i < e->ninst; i++)
        if (!e->inst[i].dev)
            return true;
    return false;
}

bool qm_have_cuda(void)
{
    return qm_backend_cuda() != NULL;
}

unsigned qm_engine_n_features(const QmEngine *e)
{
    return e->plan.nfeat;
}

const char *qm_engine_feature_name(const QmEngine *e, unsigned i)
{
    return i < e->plan.nfeat ? e->plan.names[i] : NULL;
}

unsigned qm_engine_delay(const QmEngine *e)
{
    return e->plan.delay;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *qm_engine_metrics_text(const QmEngine *e, bool device_only)
{
    char *items[MAX_INST];
    size_t n = 0, total = 1;
    for (int i = 0; i < e->ninst; i++) {
        const Inst *in = &e->inst[i];
        if (device_only && !in->dev)
            continue;
        /* name, then "=opt=value" / ":opt=value": at most 17 digits, sign,
         * point and a 4-character exponent a value */
        size_t len = strlen(in->d->name) + 1;
        for (int k = 0; in->d->options && in->d->options[k].name; k++)
            len += strlen(in->d->options[k].name) + 32;
        char *t = malloc(len);
        if (!t) {
            while (n)
                free(items[--n]);
            return NULL;
        }
        size_t at = (size_t)snprintf(t, len, "%s", in->d->name);
        for (int k = 0; in->d->options && in->d->options[k].name; k++)
            at += (size_t)snprintf(t + at, len - at, "%c%s=%.17g", k ? ':' : '=',
                                   in->d->options[k].name, in->opt->v[k]);
        items[n++] = t;
        total += at + 1;
    }
    qsort(items, n, sizeof(*items), by_text);
    char *out = malloc(total);
    size_t at = 0;
    if (out)
        out[0] = 0;
    for (size_t i = 0; i < n; i++) {
        if (out)
            at += (size_t)snprintf(out + at, total - at, "%s%s", i ? "," : "", items[i]);
        free(items[i]);
    }
    return out;
}

unsigned qm_engine_n_models(const QmEngine *e)
{
    return (unsigned)e->plan.nmodels;
}

const char *qm_engine_model_name(const QmEngine *e, unsigned i)
{
    return qm_model_name(e->plan.models[i].m);
}

const uint8_t *qm_engine_model_sha256(const QmEngine *e, unsigned i)
{
    return qm_model_sha256(e->plan.models[i].m);
}

QmAggregates *qm_aggregates_new(const QmEngine *e)
{
    QmAggregates *a;
    return qm_aggregates_open(&a, &e->plan, e->s.w, e->s.h, e->s.bpc, e->s.chroma) ? NULL : a;
}

const char *qm_engine_error(const QmEngine *e)
{
    return e->err;
}

static bool needs_host_planar(const QmPicture *a, const QmPicture *b)
{
    const QmPicture *p[2] = { a, b };
    for (int i = 0; i < 2; i++) {
        if (p[i]->flags || p[i]->shift)
            return true;
        for (int k = 0; k < 3; k++)
            if (p[i]->step[k] > 1)
                return true;
    }
    return false;
}

/* Back-pressure of qm_engine_submit(), with the lock held (dropped while
 * it waits and while the backend is called): wait until fewer than
 * max_inflight frames are being computed, collecting the backend's
 * finished frames meanwhile, then until the backend slot of the next frame
 * is free.  Returns 0, or QM_EDEVICE when the device failed or did not
 * answer in time. */
static int wait_for_room(QmEngine *e)
{
    while (e->nthreads && inflight(e) >= (int)e->max_inflight && !e->failed) {
        /* No worker collects backend work: when the oldest frames wait on
         * the device alone (every metric on it, max_inflight <= bk_slots),
         * waiting for a worker's signal would wait for ever.  Collect it
         * here. */
        if (e->bk) {
            const uint64_t seen = e->next_bk;
            if (bk_reap(e, false, 0) < 0 || e->failed)
                return QM_EDEVICE;
            /* What it collected may have finished every frame in flight,
             * and their signal came before this thread could wait for it:
             * waiting would hang where a device finishes frames on its own
             * (the CUDA backend, whose copy workers launch them). */
            if (e->next_bk != seen)
                continue;
            if (e->next_bk < e->next_index) {
                /* next_bk is the oldest frame the device still holds */
                if (bk_reap(e, true, e->next_bk) < 0)
                    return QM_EDEVICE;
                continue;
            }
        }
        pthread_cond_wait(&e->done_cv, &e->lock);
    }

    /* the backend slot of this frame must be free: collect its last user */
    if (e->bk && e->next_index >= e->bk_slots &&
        bk_reap(e, true, e->next_index - e->bk_slots) < 0)
        return QM_EDEVICE;
    return 0;
}

int qm_engine_submit(QmEngine *e, const QmPicture *ref, const QmPicture *dist,
                     void *frame_user)
{
    return qm_engine_submit_flags(e, ref, dist, frame_user, 0);
}

int qm_engine_submit_flags(QmEngine *e, const QmPicture *ref,
                           const QmPicture *dist, void *frame_user,
                           unsigned flags)
{
    if (e->flushed)
        return QM_EINVAL;
    if (ref->w != e->s.w || ref->h != e->s.h || dist->w != e->s.w ||
        dist->h != e->s.h || ref->bpc != e->s.bpc || dist->bpc != e->s.bpc ||
        ref->chroma != e->s.chroma || dist->chroma != e->s.chroma) {
        set_error(e, "picture does not match the engine's %dx%d %d-bit setup",
                  e->s.w, e->s.h, e->s.bpc);
        return QM_EINVAL;
    }
    pthread_mutex_lock(&e->lock);
    if (e->failed) {
        pthread_mutex_unlock(&e->lock);
        return QM_EINVAL;
    }
    /* the ring holds frames until received: the caller must receive */
    if (e->next_index - e->next_recv >= e->cap) {
        pthread_mutex_unlock(&e->lock);
        return QM_EAGAIN;
    }
    const int full = wait_for_room(e);
    if (full) {
        pthread_mutex_unlock(&e->lock);
        return full;
    }

    Slot *s = slot_of(e, e->next_index);
    s->index = e->next_index;
    s->ref = *ref;
    s->dist = *dist;
    s->user = frame_user;
    s->computed = s->index % e->s.subsample == 0 && !(flags & QM_SUBMIT_SKIP);
    s->todo = s->claimed = s->done = 0;
    s->bk_pending = false;
    uint32_t bk_todo = 0;
    unsigned k = 0;
    for (int i = 0; i < e->ninst; i++) {
        /* a sequential instance sees every frame, or its order would stall;
         * aux values cover every frame (metric.h) */
        bool run = s->computed || e->inst[i].aux != QM_NO_AUX ||
                   (e->inst[i].d->flags & (QM_METRIC_EVERY_FRAME | QM_METRIC_SEQUENTIAL));
        if (e->inst[i].dev) {
            if (run)
                bk_todo |= 1u << k;
            k++;
        } else if (run) {
            s->todo |= 1u << i;
        }
    }
    if ((s->todo || !bk_todo) && needs_host_planar(ref, dist)) {
        set_error(e, "the CPU metrics need planar pictures in host memory");
        pthread_mutex_unlock(&e->lock);
        return QM_ENOTSUP;
    }
    memset(s->set, 0, e->plan.nfeat);
    /* aux values a metric does not write (a plane it skips) count as 0 */
    memset(s->v + e->plan.nfeat, 0, e->plan.naux * sizeof(double));
    if (bk_todo) {
        /* claim the backend before the frame is visible, so that no other
         * thread polls its slot before it is submitted */
        bk_enter(e);
        s->bk_pending = true;
    }
    s->state = S_COMPUTING;
    e->next_index++;

    if (bk_todo) {
        /* the CPU metrics start while the backend copies the pictures.
         * Only then: a frame all on the device gives the workers nothing
         * to do, and waking every one of them twice a frame (each takes the
         * lock and scans the ring) cost the submitting thread its lock at
         * thousands of frames a second. */
        if (e->nthreads && s->todo)
            pthread_cond_broadcast(&e->work_cv);
        pthread_mutex_unlock(&e->lock);
        int r = e->bk->submit(e->bk_ctx, (unsigned)(s->index % e->bk_slots),
                              ref, dist, s->index, bk_todo);
        pthread_mutex_lock(&e->lock);
        if (r < 0)
            bk_fail(e, "submit failed");  /* the frame stays pending */
        bk_leave(e);
    }
    if (!s->todo && !s->bk_pending) {
        finish_task(e, s, -1, 0);
    } else if (e->nthreads) {
        if (s->todo)
            pthread_cond_broadcast(&e->work_cv);
    } else {
        /* one thread: compute here, in order */
        int inst;
        Slot *t;
        while ((t = pick_task(e, &inst))) {
            pthread_mutex_unlock(&e->lock);
            int err = run_task(e, t, inst, 0);
            pthread_mutex_lock(&e->lock);
            finish_task(e, t, inst, err);
        }
    }
    bk_reap(e, false, 0);
    int ret = e->failed ? QM_EINVAL : 0;
    pthread_mutex_unlock(&e->lock);
    return ret;
}

int qm_engine_flush(QmEngine *e)
{
    pthread_mutex_lock(&e->lock);
    if (e->next_index > 0)
        bk_reap(e, true, e->next_index - 1);
    while (!e->failed && e->next_post < e->next_index)
        pthread_cond_wait(&e->done_cv, &e->lock);
    if (!e->flushed && e->next_index > 0 && !e->failed) {
        for (int i = 0; i < e->ninst; i++) {
            Inst *in = &e->inst[i];
            if (!in->d->cpu.flush)
                continue;
            QmRows r;
            rows_for(e, in, e->next_index - 1, &r);
            if (in->d->cpu.flush(in->priv[0], &r)) {
                set_error(e, "%s: flush failed", in->d->name);
                e->failed = true;
            }
        }
    }
    e->flushed = true;
    advance(e);
    int ret = e->failed ? QM_EINVAL : 0;
    pthread_mutex_unlock(&e->lock);
    return ret;
}

int qm_engine_receive(QmEngine *e, QmResult *r, bool block)
{
    pthread_mutex_lock(&e->lock);
    for (;;) {
        bk_reap(e, block, e->next_recv + e->plan.delay);
        if (e->failed) {
            pthread_mutex_unlock(&e->lock);
            return QM_EINVAL;
        }
        if (e->next_recv < e->next_ready)
            break;
        if (e->flushed && e->next_recv == e->next_index) {
            pthread_mutex_unlock(&e->lock);
            return QM_EOF;
        }
        /* waiting helps only while a frame is still being computed and
         * nothing but look-ahead is missing */
        if (!block || e->next_post >= e->next_index) {
            pthread_mutex_unlock(&e->lock);
            return QM_EAGAIN;
        }
        pthread_cond_wait(&e->done_cv, &e->lock);
    }
    Slot *s = slot_of(e, e->next_recv);
    memcpy(e->outv, s->v, (e->plan.nfeat + e->plan.naux) * sizeof(double));
    for (unsigned i = 0; i < e->plan.nfeat; i++)
        e->outset[i] = s->computed && s->set[i] && e->plan.reported[i];
    r->index = s->index;
    r->frame_user = s->user;
    r->computed = s->computed;
    r->value = e->outv;
    r->present = e->outset;
    s->state = S_FREE;
    e->next_recv++;
    pthread_mutex_unlock(&e->lock);
    return 0;
}

void qm_engine_close(QmEngine **pe)
{
    if (!*pe)
        return;
    engine_free(*pe);
    *pe = NULL;
}
