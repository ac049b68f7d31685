/* gst-qmetric: the scheduler (core/engine.c) driven through a fake
 * accelerator backend (core/backend.h), without a GPU.
 *
 * The fake runs the metrics it takes with their C reference, so every score
 * it hands back must equal, bit for bit, the score of a CPU-only engine on
 * the same pictures; it also checks the contract the scheduler promises a
 * backend (slot i % n_slots, one caller at a time, a slot collected before
 * it is reused) and can be told to fail a submit or a collect, to be slow,
 * or never to finish (a stuck device).  Cases:
 *   1. results in order and exact, device + CPU workers, look-ahead (motion2,
 *      VMAF), 1 and 4 threads, slow polls;
 *   2. subsample;
 *   3. every metric on the device and no worker to collect (the hang fixed
 *      in 7a88fe9): submit must collect the device's oldest frame itself;
 *   4. many frames in flight: every backend slot used;
 *   5. a failing submit and a failing collect: an error naming it;
 *   6. a stuck device: flush and close give up after the bound;
 *   7. "all" on inputs some metrics cannot take (tiny, GRAY, 16-bit).
 * A watchdog turns a hang into a failure.  Exit status: 0 pass, 1 fail.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "metric.h"
#include "unit.h"

#define W 96
#define H 64
#define NF 24

/* ---- pictures ---- */

typedef struct Pic {
    QmPicture p;
    uint8_t *buf;
} Pic;

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static void pic_make(Pic *pic, int w, int h, int bpc, QmChroma chroma, unsigned seed)
{
    const int bytes = bpc > 8 ? 2 : 1;
    size_t off[3], total = 0;
    memset(pic, 0, sizeof(*pic));
    pic->p.w = w;
    pic->p.h = h;
    pic->p.bpc = bpc;
    pic->p.chroma = chroma;
    for (int k = 0; k < qm_n_planes(chroma); k++) {
        int pw, ph;
        qm_plane_size(w, h, chroma, k, &pw, &ph);
        pic->p.stride[k] = (ptrdiff_t)pw * bytes + 16;  /* padded rows */
        off[k] = total;
        total += (size_t)pic->p.stride[k] * (size_t)ph;
    }
    pic->buf = malloc(total);
    rng_state ^= seed * 0x9E3779B97F4A7C15ull + 1;
    /* a smooth ramp plus noise, so that every feature is non-trivial */
    for (int k = 0; k < qm_n_planes(chroma); k++) {
        int pw, ph;
        qm_plane_size(w, h, chroma, k, &pw, &ph);
        uint8_t *base = pic->buf + off[k];
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++) {
                unsigned v = (unsigned)(x * 3 + y * 2 + (int)seed * 5) + rnd() % 24;
                v &= (1u << bpc) - 1;
                uint8_t *row = base + (size_t)y * (size_t)pic->p.stride[k];
                if (bpc == 8)
                    row[x] = (uint8_t)v;
                else
                    ((uint16_t *)row)[x] = (uint16_t)v;
            }
        pic->p.data[k] = base;
    }
}

/* ---- the fake backend ---- */

static struct FakeCfg {
    const char *take;       /* metric names it runs, NULL: every metric */
    int64_t stuck_from;     /* frames from here never finish (-1: none) */
    int64_t fail_submit;    /* submit of this frame fails (-1: none) */
    int64_t fail_collect;   /* collect of this frame fails (-1: none) */
    unsigned slow;          /* a frame's first `slow` non-waiting polls say 0 */
    /* frames finish together, once every slot is busy (as a GPU that
     * works through the frames while the engine submits the next): the
     * next non-waiting reap collects every frame in flight */
    bool batch;
} fake_cfg;

static struct FakeStats {
    unsigned n_slots, max_busy, violations, submits, collects;
    int closed;             /* 1 idle, -1 abandoned */
    pthread_mutex_t lock;
    int inside;             /* callers inside the backend */
} fake_stats;

typedef struct FakeSlot {
    bool busy;
    uint64_t index;
    unsigned polls;
    bool finished;          /* batch: done, whatever the poll */
    uint32_t mask;
    double *v;              /* per instance: its features */
    uint8_t *set;
} FakeSlot;

typedef struct Fake {
    QmBackendInst inst[32];
    void *priv[32];
    unsigned n_inst, n_slots;
    FakeSlot *slot;
    unsigned stride;        /* features per instance, room for any metric */
    char err[256];
} Fake;

static void enter(void)
{
    pthread_mutex_lock(&fake_stats.lock);
    if (++fake_stats.inside > 1)
        fake_stats.violations++;
    pthread_mutex_unlock(&fake_stats.lock);
}

static void leave(void)
{
    pthread_mutex_lock(&fake_stats.lock);
    fake_stats.inside--;
    pthread_mutex_unlock(&fake_stats.lock);
}

static bool fake_can_run(const QmMetricDesc *d, const QmOptValues *o)
{
    (void)o;
    if (!fake_cfg.take)
        return true;
    char list[256];
    snprintf(list, sizeof(list), ",%s,", fake_cfg.take);
    char name[80];
    snprintf(name, sizeof(name), ",%s,", d->name);
    return strstr(list, name) != NULL;
}

static int fake_open(void **ctx, const QmBackendSetup *s, char **err)
{
    (void)err;
    Fake *f = calloc(1, sizeof(*f));
    f->n_inst = s->n_inst;
    f->n_slots = s->n_slots;
    f->stride = QM_MAX_FEATURES;
    f->slot = calloc(s->n_slots, sizeof(*f->slot));
    for (unsigned k = 0; k < s->n_slots; k++) {
        f->slot[k].v = calloc((size_t)f->stride * s->n_inst + 1, sizeof(double));
        f->slot[k].set = calloc((size_t)f->stride * s->n_inst + 1, 1);
    }
    for (unsigned i = 0; i < s->n_inst; i++) {
        const QmMetricDesc *d = s->inst[i].desc;
        f->inst[i] = s->inst[i];
        f->priv[i] = calloc(1, d->cpu.priv_size ? d->cpu.priv_size : 1);
        QmMetricConfig cfg = { s->w, s->h, s->bpc, s->chroma, s->inst[i].opt };
        if (d->cpu.init(f->priv[i], &cfg))
            return QM_EDEVICE;
    }
    fake_stats.n_slots = s->n_slots;
    *ctx = f;
    return 0;
}

static const char *fake_name(void *ctx)
{
    (void)ctx;
    return "fake device";
}

static int fake_submit(void *ctx, unsigned slot, const QmPicture *ref,
                       const QmPicture *dist, uint64_t index, uint32_t mask)
{
    Fake *f = ctx;
    enter();
    FakeSlot *sl = &f->slot[slot];
    int ret = 0;
    if (slot != index % f->n_slots || sl->busy)
        fake_stats.violations++;
    if ((int64_t)index == fake_cfg.fail_submit) {
        snprintf(f->err, sizeof(f->err), "submit refused frame %llu",
                 (unsigned long long)index);
        ret = QM_EDEVICE;
        goto out;
    }
    sl->busy = true;
    sl->index = index;
    sl->polls = 0;
    sl->mask = mask;
    unsigned busy = 0;
    for (unsigned k = 0; k < f->n_slots; k++)
        busy += f->slot[k].busy;
    if (busy > fake_stats.max_busy)
        fake_stats.max_busy = busy;
    fake_stats.submits++;
    /* the host pictures are read now: like a staging copy, nothing later */
    memset(sl->set, 0, (size_t)f->stride * f->n_inst);
    for (unsigned i = 0; i < f->n_inst; i++) {
        if (!(mask & (1u << i)))
            continue;
        QmRows r;
        memset(&r, 0, sizeof(r));
        r.index = index;
        r.v[0] = sl->v + (size_t)i * f->stride;
        r.set[0] = sl->set + (size_t)i * f->stride;
        QmFrame fr = { ref, dist, index };
        if (f->inst[i].desc->cpu.compute(f->priv[i], &fr, &r))
            ret = QM_EDEVICE;
    }
out:
    leave();
    return ret;
}

static void sleep_ms(unsigned ms)
{
    struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

static int fake_poll(void *ctx, unsigned slot, unsigned timeout_ms)
{
    Fake *f = ctx;
    enter();
    FakeSlot *sl = &f->slot[slot];
    int ret = 1;
    if (!sl->busy)
        fake_stats.violations++;
    if (fake_cfg.stuck_from >= 0 && (int64_t)sl->index >= fake_cfg.stuck_from) {
        sleep_ms(timeout_ms);  /* the device never answers */
        ret = 0;
    } else if (!timeout_ms && sl->polls++ < fake_cfg.slow) {
        ret = 0;
    } else if (!timeout_ms && fake_cfg.batch && !sl->finished) {
        /* the poll that finds every slot busy starts them; the next finds
         * them all done */
        bool all = true;
        for (unsigned k = 0; k < f->n_slots; k++)
            all &= f->slot[k].busy;
        for (unsigned k = 0; all && k < f->n_slots; k++)
            f->slot[k].finished = true;
        ret = 0;
    }
    leave();
    return ret;
}

static int fake_collect(void *ctx, unsigned slot, uint64_t index, double *row,
                        uint8_t *set)
{
    Fake *f = ctx;
    enter();
    FakeSlot *sl = &f->slot[slot];
    int ret = 0;
    if (!sl->busy || sl->index != index)
        fake_stats.violations++;
    sl->busy = sl->finished = false;
    fake_stats.collects++;
    if ((int64_t)index == fake_cfg.fail_collect) {
        snprintf(f->err, sizeof(f->err), "frame %llu came back corrupt",
                 (unsigned long long)index);
        ret = QM_EDEVICE;
    }
    for (unsigned i = 0; i < f->n_inst && !ret; i++) {
        if (!(sl->mask & (1u << i)))
            continue;
        const QmMetricDesc *d = f->inst[i].desc;
        for (unsigned k = 0; d->features[k]; k++) {
            row[f->inst[i].base + k] = sl->v[(size_t)i * f->stride + k];
            set[f->inst[i].base + k] = sl->set[(size_t)i * f->stride + k];
        }
    }
    leave();
    return ret;
}

static int fake_close(void *ctx, unsigned timeout_ms)
{
    Fake *f = ctx;
    bool stuck = false;
    for (unsigned k = 0; k < f->n_slots; k++)
        stuck |= f->slot[k].busy && fake_cfg.stuck_from >= 0 &&
                 (int64_t)f->slot[k].index >= fake_cfg.stuck_from;
    if (stuck) {
        sleep_ms(timeout_ms);
        fake_stats.closed = -1;
        return QM_EDEVICE;  /* abandoned: a real device's buffers would leak */
    }
    fake_stats.closed = 1;
    for (unsigned i = 0; i < f->n_inst; i++) {
        if (f->inst[i].desc->cpu.close)
            f->inst[i].desc->cpu.close(f->priv[i]);
        free(f->priv[i]);
    }
    for (unsigned k = 0; k < f->n_slots; k++) {
        free(f->slot[k].v);
        free(f->slot[k].set);
    }
    free(f->slot);
    free(f);
    return 0;
}

static const char *fake_error(void *ctx)
{
    Fake *f = ctx;
    return f->err[0] ? f->err : NULL;
}

static const QmBackendOps fake_ops = {
    .name = "fake",
    .can_run = fake_can_run,
    .open = fake_open,
    .device_name = fake_name,
    .submit = fake_submit,
    .poll = fake_poll,
    .collect = fake_collect,
    .close = fake_close,
    .error = fake_error,
};

static void fake_reset(void)
{
    memset(&fake_cfg, 0, sizeof(fake_cfg));
    fake_cfg.stuck_from = fake_cfg.fail_submit = fake_cfg.fail_collect = -1;
    fake_stats.n_slots = fake_stats.max_busy = fake_stats.violations = 0;
    fake_stats.submits = fake_stats.collects = 0;
    fake_stats.closed = 0;
}

/* ---- runs ---- */

typedef struct Frame {
    int id;
    int released;           /* times the release callback ran */
} Frame;

typedef struct Run {
    unsigned nfeat;
    char *names[64];
    double v[NF][64];
    uint8_t present[NF][64];
    bool computed[NF];
    unsigned n;             /* results received */
    int err;                /* first error seen */
    unsigned bad_order, not_released;
    Frame frames[NF];
} Run;

static void on_release(void *opaque, void *user)
{
    (void)opaque;
    __atomic_add_fetch(&((Frame *)user)->released, 1, __ATOMIC_SEQ_CST);
}

static void take(QmEngine *e, Run *run, QmResult *r)
{
    Frame *fr = r->frame_user;
    if (r->index != run->n || fr != &run->frames[run->n])
        run->bad_order++;
    if (__atomic_load_n(&fr->released, __ATOMIC_SEQ_CST) != 1)
        run->not_released++;   /* pictures go back before the result */
    unsigned i = run->n++;
    (void)e;
    run->computed[i] = r->computed;
    for (unsigned k = 0; k < run->nfeat; k++) {
        run->v[i][k] = r->value[k];
        run->present[i][k] = r->present[k];
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Submit NF pairs (receiving as it goes), flush, receive the rest. */
static void run_engine(Run *run, const char *metrics, int threads, unsigned subsample,
                       QmBackend backend, bool receive_late)
{
    static Pic ref[NF], dist[NF];
    if (!ref[0].buf) {
        for (int i = 0; i < NF; i++) {
            pic_make(&ref[i], W, H, 8, QM_CHROMA_420, (unsigned)(2 * i));
            pic_make(&dist[i], W, H, 8, QM_CHROMA_420, (unsigned)(2 * i + 1));
        }
    }
    memset(run, 0, sizeof(*run));
    QmSettings s;
    qm_settings_default(&s, W, H, 8, QM_CHROMA_420);
    s.metrics = metrics;
    s.n_threads = threads;
    s.subsample = subsample;
    s.backend = backend;
    s.release = on_release;
    s.device_timeout_ms = 300;
    QmEngine *e;
    char *msg = NULL;
    run->err = qm_engine_open_with(&e, &s, &fake_ops, &msg);
    if (run->err) {
        printf("open: %s\n", msg);
        free(msg);
        return;
    }
    run->nfeat = qm_engine_n_features(e);
    for (unsigned k = 0; k < run->nfeat && k < 64; k++)
        run->names[k] = strdup(qm_engine_feature_name(e, k));
    QmResult r;
    for (int i = 0; i < NF && !run->err; i++) {
        run->frames[i].id = i;
        run->err = qm_engine_submit(e, &ref[i].p, &dist[i].p, &run->frames[i]);
        while (!receive_late && !run->err && qm_engine_receive(e, &r, false) == 0)
            take(e, run, &r);
    }
    if (!run->err)
        run->err = qm_engine_flush(e);
    int err;
    while (!run->err && (err = qm_engine_receive(e, &r, true)) == 0)
        take(e, run, &r);
    if (!run->err && err != QM_EOF)
        run->err = err;
    qm_engine_close(&e);
    for (int i = 0; i < NF; i++)
        if (run->frames[i].released > 1)
            run->not_released++;
}

static void run_free(Run *run)
{
    for (unsigned k = 0; k < run->nfeat && k < 64; k++)
        free(run->names[k]);
}

/* Every result of b equals a's, bit for bit. */
static void check_same(const Run *a, const Run *b, const char *what)
{
    CHECK(a->err == 0 && b->err == 0, "%s: errors %d %d", what, a->err, b->err);
    CHECK(a->n == NF && b->n == NF, "%s: %u and %u results", what, a->n, b->n);
    CHECK(a->nfeat == b->nfeat, "%s: %u vs %u features", what, a->nfeat, b->nfeat);
    CHECK(b->bad_order == 0 && b->not_released == 0, "%s: %u out of order, %u "
          "released wrongly", what, b->bad_order, b->not_released);
    unsigned diff = 0, present = 0;
    for (unsigned i = 0; i < a->n && i < b->n; i++) {
        if (a->computed[i] != b->computed[i])
            diff++;
        for (unsigned k = 0; k < a->nfeat && k < b->nfeat; k++) {
            if (strcmp(a->names[k], b->names[k]) || a->present[i][k] != b->present[i][k] ||
                (a->present[i][k] && memcmp(&a->v[i][k], &b->v[i][k], sizeof(double)))) {
                if (diff++ < 5)
                    printf("  %s: frame %u %s: %.17g/%d vs %s %.17g/%d\n", what, i,
                           a->names[k], a->v[i][k], a->present[i][k], b->names[k],
                           b->v[i][k], b->present[i][k]);
            }
            present += b->present[i][k] != 0;
        }
    }
    CHECK(diff == 0, "%s: %u differences", what, diff);
    CHECK(present > 0, "%s: no score at all", what);
}

static bool has_feature(const Run *r, const char *name)
{
    for (unsigned k = 0; k < r->nfeat; k++)
        if (!strcmp(r->names[k], name))
            return true;
    return false;
}

static void test_ordered(void)
{
    const char *metrics = "vmaf,psnr,float_ssim,ciede";
    for (int threads = 1; threads <= 4; threads += 3) {
        for (unsigned sub = 1; sub <= 3; sub += 2) {
            Run cpu, dev;
            char what[96];
            run_engine(&cpu, metrics, threads, sub, QM_BACKEND_CPU, false);
            /* the device takes the model inputs and psnr (motion2 needs the
             * next frame: look-ahead across the device and the CPU) */
            fake_reset();
            fake_cfg.take = "vif,adm,motion,psnr";
            fake_cfg.slow = 3;
            run_engine(&dev, metrics, threads, sub, QM_BACKEND_CUDA, false);
            snprintf(what, sizeof(what), "ordered, %d threads, subsample %u", threads, sub);
            check_same(&cpu, &dev, what);
            CHECK(has_feature(&dev, "vmaf") && has_feature(&dev, "integer_motion2") &&
                  has_feature(&dev, "ciede2000"), "%s: features missing", what);
            CHECK(fake_stats.violations == 0, "%s: %u contract violations", what,
                  fake_stats.violations);
            CHECK(fake_stats.submits == NF && fake_stats.collects == NF,
                  "%s: %u submits, %u collects (motion sees every frame)", what,
                  fake_stats.submits, fake_stats.collects);
            CHECK(fake_stats.closed == 1, "%s: backend not closed cleanly", what);
            unsigned computed = 0;
            for (unsigned i = 0; i < dev.n; i++)
                computed += dev.computed[i];
            CHECK(computed == (NF + sub - 1) / sub, "%s: %u computed", what, computed);
            run_free(&cpu);
            run_free(&dev);
        }
    }
}

/* Everything on the device, two threads, results taken only at the end: the
 * submitting thread is the only one that can collect (7a88fe9). */
static void test_all_on_device(void)
{
    Run cpu, dev;
    run_engine(&cpu, "vmaf,psnr", 2, 1, QM_BACKEND_CPU, true);
    fake_reset();
    fake_cfg.slow = 1000000;  /* only a waiting poll completes a frame */
    run_engine(&dev, "vmaf,psnr", 2, 1, QM_BACKEND_CUDA, true);
    check_same(&cpu, &dev, "all on device");
    CHECK(fake_stats.violations == 0, "all on device: %u violations", fake_stats.violations);
    /* 4 slots, and max_inflight 2 * 2 threads: the ring of the device full */
    CHECK(fake_stats.max_busy == fake_stats.n_slots && fake_stats.n_slots == 4,
          "all on device: %u of %u slots in flight at most", fake_stats.max_busy,
          fake_stats.n_slots);
    run_free(&cpu);
    run_free(&dev);
}

/* Everything on the device, two threads (as many frames in flight as
 * slots), frames finishing together while the next are submitted: the
 * non-waiting reap of a submit collects every frame in flight, and the
 * submit must then look again instead of waiting for a worker's signal
 * (there is none: it hung the golden gate on the GPU, 1d71151). */
static void test_device_batch(void)
{
    Run cpu, dev;
    run_engine(&cpu, "vmaf,psnr", 2, 1, QM_BACKEND_CPU, true);
    fake_reset();
    fake_cfg.batch = true;
    run_engine(&dev, "vmaf,psnr", 2, 1, QM_BACKEND_CUDA, true);
    check_same(&cpu, &dev, "device batch");
    CHECK(fake_stats.violations == 0, "device batch: %u violations", fake_stats.violations);
    run_free(&cpu);
    run_free(&dev);
}

/* Many threads, slow polls: the device holds as many frames as it has
 * slots while the CPU workers run ahead. */
static void test_many_in_flight(void)
{
    Run cpu, dev;
    run_engine(&cpu, "vmaf,psnr,float_ssim", 1, 1, QM_BACKEND_CPU, false);
    fake_reset();
    fake_cfg.take = "vif,adm,motion";
    fake_cfg.slow = 1000000;
    run_engine(&dev, "vmaf,psnr,float_ssim", 8, 1, QM_BACKEND_CUDA, false);
    check_same(&cpu, &dev, "many in flight");
    /* eight threads: eight copy workers and eight slots, all of them used */
    CHECK(fake_stats.max_busy == fake_stats.n_slots && fake_stats.n_slots == 8,
          "many in flight: %u of %u slots in flight at most", fake_stats.max_busy,
          fake_stats.n_slots);
    CHECK(fake_stats.violations == 0, "many in flight: %u violations",
          fake_stats.violations);
    run_free(&cpu);
    run_free(&dev);
}

static void test_errors(void)
{
    for (int threads = 1; threads <= 3; threads += 2) {
        Run run;
        fake_reset();
        fake_cfg.fail_submit = 5;
        run_engine(&run, "vmaf,psnr", threads, 1, QM_BACKEND_CUDA, false);
        CHECK(run.err != 0, "failing submit: no error");
        CHECK(run.n <= 5, "failing submit: %u results (frame 5 failed)", run.n);
        CHECK(run.bad_order == 0 && run.not_released == 0,
              "failing submit: order %u, release %u", run.bad_order, run.not_released);
        for (int i = 0; i < NF; i++)
            CHECK(run.frames[i].released == (i <= 5), "failing submit: frame %d "
                  "released %d times", i, run.frames[i].released);
        run_free(&run);

        fake_reset();
        fake_cfg.fail_collect = 7;
        run_engine(&run, "vmaf,psnr", threads, 1, QM_BACKEND_CUDA, false);
        CHECK(run.err != 0, "failing collect: no error");
        CHECK(run.n <= 7, "failing collect: %u results (frame 7 failed)", run.n);
        CHECK(run.not_released == 0, "failing collect: released wrongly");
        for (int i = 0; i < NF; i++)
            CHECK(run.frames[i].released <= 1, "failing collect: frame %d released %d "
                  "times", i, run.frames[i].released);
        run_free(&run);
    }
    /* the message names the backend and what it said */
    QmSettings s;
    qm_settings_default(&s, W, H, 8, QM_CHROMA_420);
    s.metrics = "psnr";
    s.backend = QM_BACKEND_CUDA;
    fake_reset();
    fake_cfg.fail_submit = 0;
    QmEngine *e;
    Pic a, b;
    pic_make(&a, W, H, 8, QM_CHROMA_420, 1);
    pic_make(&b, W, H, 8, QM_CHROMA_420, 2);
    CHECK(qm_engine_open_with(&e, &s, &fake_ops, NULL) == 0, "open");
    CHECK(qm_engine_submit(e, &a.p, &b.p, NULL) != 0, "submit of frame 0 succeeded");
    const char *m = qm_engine_error(e);
    CHECK(m && !strcmp(m, "fake: submit refused frame 0"), "message: %s", m ? m : "(none)");
    qm_engine_close(&e);
    free(a.buf);
    free(b.buf);
}

/* A device that never finishes frame 3 on: flush and close give up after
 * the bound (300 ms each here), every picture goes back. */
static void test_stuck(void)
{
    for (int threads = 1; threads <= 2; threads++) {
        Run run;
        fake_reset();
        fake_cfg.stuck_from = 3;
        double t0 = now_s();
        run_engine(&run, "psnr", threads, 1, QM_BACKEND_CUDA, true);
        double dt = now_s() - t0;
        CHECK(run.err != 0, "stuck: no error");
        CHECK(run.n == 0, "stuck: %u results received late", run.n);
        CHECK(fake_stats.closed == -1, "stuck: the backend was not abandoned");
        /* submit waits once for frame 3 (slot reuse), then the engine has
         * failed; close waits once: about 0.6 s */
        CHECK(dt < 3.0, "stuck: %.2f s to give up", dt);
        unsigned released = 0;
        for (int i = 0; i < NF; i++)
            released += run.frames[i].released == 1;
        CHECK(released == fake_stats.submits + 0u || released == fake_stats.submits + 1u,
              "stuck: %u pictures released for %u submits", released, fake_stats.submits);
        CHECK(run.not_released == 0, "stuck: a picture released twice");
        run_free(&run);
    }
    /* the error says which frame and how long */
    QmSettings s;
    qm_settings_default(&s, W, H, 8, QM_CHROMA_420);
    s.metrics = "psnr";
    s.backend = QM_BACKEND_CUDA;
    s.device_timeout_ms = 100;
    fake_reset();
    fake_cfg.stuck_from = 0;
    QmEngine *e;
    Pic a, b;
    pic_make(&a, W, H, 8, QM_CHROMA_420, 1);
    pic_make(&b, W, H, 8, QM_CHROMA_420, 2);
    CHECK(qm_engine_open_with(&e, &s, &fake_ops, NULL) == 0, "open");
    CHECK(qm_engine_submit(e, &a.p, &b.p, NULL) == 0, "submit");
    CHECK(qm_engine_flush(e) != 0, "flush of a stuck frame succeeded");
    const char *m = qm_engine_error(e);
    CHECK(m && !strcmp(m, "fake: the device did not finish frame 0 within 100 ms"),
          "message: %s", m ? m : "(none)");
    double t0 = now_s();
    qm_engine_close(&e);
    CHECK(now_s() - t0 < 1.0, "close took %.2f s", now_s() - t0);
    CHECK(fake_stats.closed == -1, "stuck close: not abandoned");
    free(a.buf);
    free(b.buf);
}

/* ---- "all" means what the input supports ---- */

typedef struct Logs {
    char text[4096];
} Logs;

static void on_log(void *opaque, int level, const char *msg)
{
    Logs *l = opaque;
    if (level <= QM_LOG_WARNING)
        snprintf(l->text + strlen(l->text), sizeof(l->text) - strlen(l->text),
                 "%s\n", msg);
}

static bool default_list;  /* open_with(): metrics_are_default */

static int open_with(int w, int h, int bpc, QmChroma c, const char *metrics,
                     Logs *logs, char **names, char **msg)
{
    QmSettings s;
    qm_settings_default(&s, w, h, bpc, c);
    s.metrics = metrics;
    s.metrics_are_default = default_list;
    s.log = on_log;
    s.log_opaque = logs;
    memset(logs, 0, sizeof(*logs));
    QmEngine *e;
    *msg = NULL;
    int err = qm_engine_open(&e, &s, msg);
    if (!err) {
        /* the feature keys, ' '-separated */
        size_t n = 0;
        *names = calloc(1, 4096);
        for (unsigned k = 0; k < qm_engine_n_features(e); k++)
            n += (size_t)snprintf(*names + n, 4096 - n, "%s ",
                                  qm_engine_feature_name(e, k));
        qm_engine_close(&e);
    }
    return err;
}

static void test_all_supported(void)
{
    Logs l;
    char *names = NULL, *msg = NULL;

    /* 16x16: psnr, ciede, psnr_hvs and float_ssim fit; VMAF (adm needs
     * 33x33), float_ms_ssim (176x176) and cambi (its scales) do not */
    CHECK(open_with(16, 16, 8, QM_CHROMA_420, "all", &l, &names, &msg) == 0,
          "all at 16x16: %s", msg ? msg : "");
    if (names) {
        CHECK(!strcmp(names, "psnr_y psnr_cb psnr_cr float_ssim psnr_hvs_y psnr_hvs_cb "
                      "psnr_hvs_cr psnr_hvs ciede2000 "), "all at 16x16: %s", names);
        CHECK(strstr(l.text, "metric float_ms_ssim left out: it needs at least 176x176 "
                     "pictures, the input is 16x16\n") &&
              strstr(l.text, "metric cambi left out: it does not support 16x16 8-bit "
                     "4:2:0 input\n") &&
              strstr(l.text, "metric vmaf left out: its input adm cannot run: it needs "
                     "at least 33x33 pictures, the input is 16x16\n"), "warnings: %s", l.text);
        free(names);
        names = NULL;
    }
    /* named, it is an error naming the reason */
    CHECK(open_with(16, 16, 8, QM_CHROMA_420, "psnr,float_ms_ssim", &l, &names, &msg) ==
          QM_ENOTSUP, "float_ms_ssim at 16x16 opened");
    CHECK(msg && !strcmp(msg, "metric float_ms_ssim cannot run: it needs at least "
                         "176x176 pictures, the input is 16x16"), "%s", msg ? msg : "");
    free(msg);
    CHECK(open_with(16, 16, 8, QM_CHROMA_420, "vmaf", &l, &names, &msg) == QM_ENOTSUP,
          "vmaf at 16x16 opened");
    CHECK(msg && !strcmp(msg, "metric vmaf cannot run: its input adm cannot run: it "
                         "needs at least 33x33 pictures, the input is 16x16"),
          "%s", msg ? msg : "");
    free(msg);
    /* a model's option values can refuse a size the defaults accept: the
     * 5d0h model's SpEED prescale (0.6) leaves no 5x5 block at 320x240 */
    {
        QmSettings s;
        qm_settings_default(&s, 320, 240, 8, QM_CHROMA_420);
        s.metrics = "vmaf";
        s.models = "vmaf_v1.0.16_5d0h";
        QmEngine *e;
        msg = NULL;
        CHECK(qm_engine_open(&e, &s, &msg) == QM_ENOTSUP, "5d0h at 320x240 opened");
        CHECK(msg && strstr(msg, "speed_chroma cannot run on 320x240 8-bit 4:2:0 input "
                            "with its options"), "%s", msg ? msg : "");
        free(msg);
    }
    /* the element's default list (not set by the user) is a wish: at 16x16
     * VMAF is left out with a warning and PSNR and SSIM are computed */
    default_list = true;
    CHECK(open_with(16, 16, 8, QM_CHROMA_420, "vmaf,psnr,float_ssim", &l, &names, &msg) == 0,
          "default list at 16x16: %s", msg ? msg : "");
    if (names) {
        CHECK(strstr(names, "psnr_y ") && strstr(names, "float_ssim ") &&
              !strstr(names, "vmaf"), "default list at 16x16 gives: %s", names);
        CHECK(strstr(l.text, "metric vmaf left out: its input adm cannot run: it needs "
                     "at least 33x33 pictures, the input is 16x16"), "no warning: %s", l.text);
    }
    free(names);
    names = NULL;
    free(msg);
    default_list = false;

    /* 16-bit: psnr_hvs takes 8 to 12 bits */
    CHECK(open_with(W, H, 16, QM_CHROMA_420, "all", &l, &names, &msg) == 0,
          "all at 16 bits: %s", msg ? msg : "");
    if (names) {
        CHECK(!strstr(names, "psnr_hvs") && strstr(names, "vmaf ") &&
              strstr(names, "ciede2000"), "all at 16 bits: %s", names);
        CHECK(strstr(l.text, "metric psnr_hvs left out: it does not support 96x64 "
                     "16-bit 4:2:0 input\n"), "warnings: %s", l.text);
        free(names);
        names = NULL;
    }
    free(msg);
    CHECK(open_with(W, H, 16, QM_CHROMA_420, "psnr_hvs", &l, &names, &msg) == QM_ENOTSUP,
          "psnr_hvs at 16 bits opened");
    CHECK(msg && !strcmp(msg, "metric psnr_hvs cannot run: it does not support 96x64 "
                         "16-bit 4:2:0 input"), "%s", msg ? msg : "");
    free(msg);

    /* GRAY: what needs chroma is left out, with a warning */
    CHECK(open_with(W, H, 8, QM_CHROMA_400, "all", &l, &names, &msg) == 0,
          "all on GRAY: %s", msg ? msg : "");
    if (names) {
        CHECK(!strstr(names, "ciede") && !strstr(names, "psnr_hvs") &&
              strstr(names, "psnr_y "), "all on GRAY: %s", names);
        CHECK(strstr(l.text, "metric ciede left out: it needs chroma planes and the "
                     "input is 4:0:0 (GRAY)\n"), "warnings: %s", l.text);
        free(names);
        names = NULL;
    }
    free(msg);
    CHECK(open_with(W, H, 8, QM_CHROMA_400, "ciede", &l, &names, &msg) == QM_ENOTSUP,
          "ciede on GRAY opened");
    CHECK(msg && !strcmp(msg, "metric ciede cannot run: it needs chroma planes and the "
                         "input is 4:0:0 (GRAY)"), "%s", msg ? msg : "");
    free(msg);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char m[] = "FAIL: engine_test hung (watchdog)\n";
    if (write(1, m, sizeof(m) - 1) < 0)
        _exit(2);
    _exit(1);
}

int main(void)
{
    pthread_mutex_init(&fake_stats.lock, NULL);
    signal(SIGALRM, on_alarm);
    alarm(60);
    test_ordered();
    test_all_on_device();
    test_device_batch();
    test_many_in_flight();
    test_errors();
    test_stuck();
    test_all_supported();
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
