/* gst-qmetric: the engine: metric instances, frames in flight, ordered
 * results, VMAF prediction.
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
#include "backend.h"

#define MAX_INST 32   /* bitmasks below */
#define MAX_WORKERS 64

typedef struct Inst {
    const QmMetricDesc *d;
    QmOptValues opt;
    unsigned base, nf;   /* first global feature index, feature count */
    void **priv;         /* one per worker, or one for SEQUENTIAL */
    int npriv;
    uint64_t next_seq;   /* SEQUENTIAL: the frame allowed to compute next */
    bool report;         /* selected by the user (not only a model input) */
    bool dev;            /* computed by the accelerator backend */
} Inst;

typedef struct ModelOut {
    QmModel *m;
    unsigned in[QM_MAX_FEATURES];
    unsigned out;        /* global feature index of the score */
} ModelOut;

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

    Inst inst[MAX_INST];
    int ninst;
    ModelOut models[8];
    int nmodels;
    char **names;        /* global feature keys */
    uint8_t *reported;   /* per feature: appears in results */
    unsigned nfeat;
    unsigned delay;

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

void qm_plane_size(int w, int h, QmChroma chroma, int p, int *pw, int *ph)
{
    int sx = 0, sy = 0;
    if (p > 0) {
        sx = chroma == QM_CHROMA_420 || chroma == QM_CHROMA_422;
        sy = chroma == QM_CHROMA_420;
    }
    /* floor, as libvmaf sizes the chroma planes of odd-sized pictures */
    *pw = w >> sx;
    *ph = h >> sy;
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
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    free(e->err);
    e->err = strdup(buf);
    if (e->s.log)
        e->s.log(e->s.log_opaque, QM_LOG_ERROR, buf);
}

void qm_engine_log(QmEngine *e, int level, const char *fmt, ...)
{
    if (!e->s.log)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    e->s.log(e->s.log_opaque, level, buf);
}

/* ---- instances ---- */

static void opt_defaults(const QmMetricDesc *d, QmOptValues *o)
{
    memset(o, 0, sizeof(*o));
    for (int i = 0; d->options && d->options[i].name; i++)
        o->v[i] = d->options[i].def;
}

/* Find or add the instance of metric d with options o. */
static int add_inst(QmEngine *e, const QmMetricDesc *d, const QmOptValues *o,
                    bool report, Inst **out)
{
    for (int i = 0; i < e->ninst; i++) {
        if (e->inst[i].d == d && !memcmp(&e->inst[i].opt, o, sizeof(*o))) {
            e->inst[i].report |= report;
            *out = &e->inst[i];
            return 0;
        }
    }
    if (e->ninst == MAX_INST)
        return QM_ENOTSUP;
    Inst *in = &e->inst[e->ninst++];
    memset(in, 0, sizeof(*in));
    in->d = d;
    in->opt = *o;
    in->report = report;
    while (d->features[in->nf])
        in->nf++;
    *out = in;
    return 0;
}

/* Next name of a comma/space-separated list: its start and length, or
 * NULL at the end. */
static const char *next_name(const char **p, size_t *len)
{
    const char *s = *p;
    while (s && (*s == ',' || *s == ' '))
        s++;
    if (!s || !*s)
        return NULL;
    const char *q = s;
    while (*q && *q != ',' && *q != ' ')
        q++;
    *len = (size_t)(q - s);
    *p = q;
    return s;
}

static bool name_in_list(const char *list, const char *name)
{
    size_t l = strlen(name), n;
    for (const char *s; (s = next_name(&list, &n));)
        if (n == l && !strncmp(s, name, l))
            return true;
    return false;
}

static int check_metric_list(QmEngine *e, const char *list)
{
    size_t n;
    for (const char *s; (s = next_name(&list, &n));) {
        char name[64];
        snprintf(name, sizeof(name), "%.*s", (int)n, s);
        if (strcmp(name, "all") && strcmp(name, "default") &&
            !qm_metric_describe(name)) {
            char known[512] = "";
            for (const char *const *k = qm_metric_names(); *k; k++)
                snprintf(known + strlen(known), sizeof(known) - strlen(known),
                         "%s%s", known[0] ? ", " : "", *k);
            set_error(e, "unknown metric '%s' (known: all, %s)", name, known);
            return QM_EINVAL;
        }
    }
    return 0;
}

static int default_model_path(char *buf, size_t len)
{
    const char *env = getenv("QMETRIC_MODEL_PATH");
    snprintf(buf, len, "%s%s%s", env ? env : "", env ? ":" : "",
             QM_MODEL_DIR);
    return 0;
}

static int setup_models(QmEngine *e)
{
    const char *list = e->s.models && *e->s.models ? e->s.models : "vmaf_v0.6.1";
    char path[4096];
    if (e->s.model_path)
        snprintf(path, sizeof(path), "%s", e->s.model_path);
    else
        default_model_path(path, sizeof(path));

    char **names, *lerr = NULL;
    int err = qm_model_list_parse(list, &names, &lerr);
    if (err) {
        set_error(e, "%s", lerr ? lerr : "cannot parse the model list");
        free(lerr);
        return err;
    }
    for (char **name = names; *name; name++) {
        if (e->nmodels == (int)(sizeof(e->models) / sizeof(e->models[0]))) {
            set_error(e, "too many models (at most %d)", e->nmodels);
            qm_model_list_free(names);
            return QM_ENOTSUP;
        }
        char *msg = NULL;
        ModelOut *mo = &e->models[e->nmodels];
        err = qm_model_load(&mo->m, *name, path, &msg);
        if (err) {
            set_error(e, "%s", msg ? msg : "cannot load model");
            free(msg);
            qm_model_list_free(names);
            return err;
        }
        e->nmodels++;
    }
    qm_model_list_free(names);
    return 0;
}

/* Instances for every model input, with the options the model asks for. */
static int add_model_inputs(QmEngine *e, ModelOut *mo, Inst **insts)
{
    for (unsigned i = 0; i < qm_model_n_inputs(mo->m); i++) {
        const QmModelInput *mi = qm_model_input(mo->m, i);
        const QmMetricDesc *d = qm_metric_find(mi->metric);
        if (!d) {
            set_error(e, "model %s: input metric '%s' is not available",
                      qm_model_name(mo->m), mi->metric);
            return QM_EMODEL;
        }
        QmOptValues o;
        opt_defaults(d, &o);
        for (unsigned k = 0; k < mi->n_opts; k++) {
            int found = 0;
            for (int j = 0; d->options && d->options[j].name; j++) {
                if (!strcmp(d->options[j].name, mi->opt_name[k])) {
                    o.v[j] = mi->opt_value[k];
                    found = 1;
                }
            }
            if (!found) {
                set_error(e, "model %s: unknown option '%s' for %s",
                          qm_model_name(mo->m), mi->opt_name[k], mi->metric);
                return QM_EMODEL;
            }
        }
        int err = add_inst(e, d, &o, false, &insts[i]);
        if (err)
            return err;
    }
    return 0;
}

/* QmSettings.features: "name=opt=val:opt=val,name2,..." (libvmaf's
 * --feature spelling), one reported instance per entry. */
static int add_feature_options(QmEngine *e)
{
    const char *p = e->s.features;
    while (p && *p) {
        while (*p == ',' || *p == ' ')
            p++;
        if (!*p)
            break;
        size_t len = strcspn(p, ",");
        char entry[512];
        if (len >= sizeof(entry)) {
            set_error(e, "features: entry too long: '%.40s...'", p);
            return QM_EINVAL;
        }
        memcpy(entry, p, len);
        entry[len] = 0;
        p += len;
        while (len && entry[len - 1] == ' ')
            entry[--len] = 0;

        char *opts = strchr(entry, '=');
        if (opts)
            *opts++ = 0;
        const QmMetricDesc *d = qm_metric_find(entry);
        if (!d) {
            set_error(e, "features: unknown metric '%s'", entry);
            return QM_EINVAL;
        }
        QmOptValues o;
        opt_defaults(d, &o);
        for (char *tok = opts, *next; tok && *tok; tok = next) {
            next = strchr(tok, ':');
            if (next)
                *next++ = 0;
            char *val = strchr(tok, '=');
            if (!val) {
                set_error(e, "features: %s: '%s' is not OPTION=VALUE", d->name,
                          tok);
                return QM_EINVAL;
            }
            *val++ = 0;
            char msg[600];
            if (qm_option_parse(d, tok, val, &o, msg, sizeof(msg))) {
                set_error(e, "features: %s", msg);
                return QM_EINVAL;
            }
        }
        if (e->s.w < d->min_w || e->s.h < d->min_h) {
            set_error(e, "metric %s needs at least %dx%d pictures, got %dx%d",
                      d->name, d->min_w, d->min_h, e->s.w, e->s.h);
            return QM_ENOTSUP;
        }
        Inst *in;
        int err = add_inst(e, d, &o, true, &in);
        if (err) {
            set_error(e, "features: too many metric instances");
            return err;
        }
    }
    return 0;
}

static const char *chroma_name(QmChroma c)
{
    static const char *const n[] = { "4:0:0 (GRAY)", "4:2:0", "4:2:2", "4:4:4" };
    return n[c];
}

/* Why metric d cannot run on the engine's input (written to why), or NULL
 * when it can.  Its descriptor says what it needs (chroma, a smallest
 * size); what else it refuses (a bit depth...) its init() answers with
 * QM_ENOTSUP, so a trial init() asks it. */
static const char *cannot_run(QmEngine *e, const QmMetricDesc *d, char *why,
                              size_t len)
{
    if (e->s.chroma == QM_CHROMA_400 && !(d->flags & QM_METRIC_LUMA_ONLY)) {
        snprintf(why, len, "it needs chroma planes and the input is %s",
                 chroma_name(e->s.chroma));
        return why;
    }
    if (e->s.w < d->min_w || e->s.h < d->min_h) {
        snprintf(why, len, "it needs at least %dx%d pictures, the input is %dx%d",
                 d->min_w, d->min_h, e->s.w, e->s.h);
        return why;
    }
    QmOptValues o;
    opt_defaults(d, &o);
    QmMetricConfig cfg = { e->s.w, e->s.h, e->s.bpc, e->s.chroma, &o };
    void *priv = calloc(1, d->cpu.priv_size ? d->cpu.priv_size : 1);
    if (!priv)
        return NULL;  /* the real init reports it */
    int err = d->cpu.init(priv, &cfg);
    if (!err && d->cpu.close)
        d->cpu.close(priv);
    free(priv);
    if (err != QM_ENOTSUP)
        return NULL;
    /* size limits beyond min_w/min_h (cambi's scales) land here too */
    snprintf(why, len, "it does not support %dx%d %d-bit %s input", e->s.w,
             e->s.h, e->s.bpc, chroma_name(e->s.chroma));
    return why;
}

/* Whether every input of the loaded models can run; else why not. */
static const char *models_cannot_run(QmEngine *e, char *why, size_t len)
{
    for (int m = 0; m < e->nmodels; m++) {
        for (unsigned i = 0; i < qm_model_n_inputs(e->models[m].m); i++) {
            const QmModelInput *mi = qm_model_input(e->models[m].m, i);
            const QmMetricDesc *d = qm_metric_find(mi->metric);
            char sub[256];
            if (d && cannot_run(e, d, sub, sizeof(sub))) {
                snprintf(why, len, "its input %s cannot run: %s", d->name, sub);
                return why;
            }
        }
    }
    return NULL;
}

static int build_features(QmEngine *e)
{
    const char *list = e->s.metrics;
    bool all = !list || !*list || name_in_list(list, "all");
    bool vmaf = all || name_in_list(list, "vmaf") || name_in_list(list, "default");
    int err = check_metric_list(e, list);
    if (err)
        return err;

    for (int i = 0; qm_metrics[i]; i++) {
        const QmMetricDesc *d = qm_metrics[i];
        const bool named = name_in_list(list, d->name);
        const bool required = named && !e->s.metrics_are_default;
        bool want = named || (all && !(d->flags & QM_METRIC_OPT_IN) &&
                              !(d->flags & QM_METRIC_MODEL_INPUT));
        if (!want)
            continue;
        char why[256];
        if (cannot_run(e, d, why, sizeof(why))) {
            if (!required) {
                /* "all" (and the default list) mean what this input supports */
                qm_engine_log(e, QM_LOG_WARNING, "metric %s left out: %s", d->name, why);
                continue;
            }
            set_error(e, "metric %s cannot run: %s", d->name, why);
            return QM_ENOTSUP;
        }
        QmOptValues o;
        opt_defaults(d, &o);
        Inst *in;
        if ((err = add_inst(e, d, &o, true, &in)))
            return err;
    }

    if ((err = add_feature_options(e)))
        return err;

    Inst *model_insts[8][QM_MAX_FEATURES];
    if (vmaf) {
        if ((err = setup_models(e)))
            return err;
        char why[320];
        if (models_cannot_run(e, why, sizeof(why))) {
            if ((name_in_list(list, "vmaf") || name_in_list(list, "default")) &&
                !e->s.metrics_are_default) {
                set_error(e, "metric vmaf cannot run: %s", why);
                return QM_ENOTSUP;
            }
            qm_engine_log(e, QM_LOG_WARNING, "metric vmaf left out: %s", why);
            for (int m = 0; m < e->nmodels; m++)
                qm_model_free(&e->models[m].m);
            e->nmodels = 0;
        }
        for (int m = 0; m < e->nmodels; m++)
            if ((err = add_model_inputs(e, &e->models[m], model_insts[m])))
                return err;
    }

    /* global feature table: every instance's features, then model scores */
    unsigned n = 0;
    for (int i = 0; i < e->ninst; i++) {
        e->inst[i].base = n;
        n += e->inst[i].nf;
    }
    e->nfeat = n + (unsigned)e->nmodels;
    e->names = calloc(e->nfeat, sizeof(*e->names));
    e->reported = calloc(e->nfeat, 1);
    if (!e->names || !e->reported)
        return QM_ENOMEM;
    for (int i = 0; i < e->ninst; i++) {
        Inst *in = &e->inst[i];
        for (unsigned f = 0; f < in->nf; f++) {
            e->names[in->base + f] = qm_feature_key(in->d, f, &in->opt);
            if (!e->names[in->base + f])
                return QM_ENOMEM;
            /* model inputs are reported as libvmaf reports them */
            e->reported[in->base + f] = 1;
        }
        if (qm_metric_delay(in->d, &in->opt) > e->delay)
            e->delay = qm_metric_delay(in->d, &in->opt);
    }
    for (int m = 0; m < e->nmodels; m++) {
        ModelOut *mo = &e->models[m];
        mo->out = n + (unsigned)m;
        /* one model: libvmaf's key "vmaf"; several: each model's name, as
         * libvmaf's tool names the scores of several models */
        e->names[mo->out] = strdup(e->nmodels == 1 ? "vmaf" : qm_model_name(mo->m));
        if (!e->names[mo->out])
            return QM_ENOMEM;
        e->reported[mo->out] = 1;
        for (unsigned i = 0; i < qm_model_n_inputs(mo->m); i++) {
            const QmModelInput *mi = qm_model_input(mo->m, i);
            Inst *in = model_insts[m][i];
            unsigned f;
            for (f = 0; f < in->nf; f++)
                if (!strcmp(in->d->features[f], mi->feature))
                    break;
            if (f == in->nf) {
                set_error(e, "model %s: metric %s has no feature '%s'",
                          qm_model_name(mo->m), mi->metric, mi->feature);
                return QM_EMODEL;
            }
            mo->in[i] = in->base + f;
        }
    }
    if (e->ninst == 0) {
        set_error(e, "no metric selected");
        return QM_EINVAL;
    }
    return 0;
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
        QmMetricConfig cfg = { e->s.w, e->s.h, e->s.bpc, e->s.chroma, &in->opt };
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
                          "options (the picture is too small or too deep for "
                          "them)", in->d->name, e->s.w, e->s.h, e->s.bpc,
                          chroma_name(e->s.chroma));
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
    QmFrame f = { &s->ref, &s->dist, s->index };
    void *priv = in->priv[in->npriv == 1 ? 0 : worker];
    int err = in->d->cpu.compute(priv, &f, &r);
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
    for (int m = 0; m < e->nmodels; m++) {
        ModelOut *mo = &e->models[m];
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
           (e->next_ready + e->delay < e->next_post ||
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
        if (e->s.backend != QM_BACKEND_CUDA)
            return 0;
        set_error(e, "backend=cuda: this build has no CUDA backend "
                  "(meson -Dcuda=enabled)");
        return QM_EDEVICE;
    }
    for (int i = 0; i < e->ninst; i++) {
        if (!ops->can_run(e->inst[i].d, &e->inst[i].opt))
            continue;
        gi[n].desc = e->inst[i].d;
        gi[n].opt = &e->inst[i].opt;
        gi[n].base = e->inst[i].base;
        n++;
    }
    if (n == 0 && e->s.backend == QM_BACKEND_AUTO)
        return 0;
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
        qm_engine_log(e, QM_LOG_INFO, "no usable GPU (%s): metrics run on the CPU",
                      msg ? msg : qm_strerror(err));
        free(msg);
        return 0;
    }
    e->bk = ops;
    /* the backend's instance index k is the k-th instance it accepted */
    for (int i = 0; i < e->ninst; i++)
        e->inst[i].dev = ops->can_run(e->inst[i].d, &e->inst[i].opt);
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
    for (int m = 0; m < e->nmodels; m++)
        qm_model_free(&e->models[m].m);
    for (unsigned i = 0; e->names && i < e->nfeat; i++)
        free(e->names[i]);
    free(e->names);
    free(e->reported);
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
    int err = QM_EINVAL;
    if (s->w <= 0 || s->h <= 0 || s->bpc < 8 || s->bpc > 16 ||
        s->chroma > QM_CHROMA_444) {
        set_error(e, "unsupported picture: %dx%d, %d bits", s->w, s->h, s->bpc);
        goto fail;
    }
    if ((err = build_features(e)))
        goto fail;
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
    e->cap = e->max_inflight + e->delay + 64;

    if (s->backend != QM_BACKEND_CPU && (err = open_backend(e, accel)))
        goto fail;
    if ((err = cpu_init_insts(e)))
        goto fail;

    e->ring = calloc(e->cap, sizeof(*e->ring));
    e->outv = calloc(e->nfeat, sizeof(double));
    e->outset = calloc(e->nfeat, 1);
    if (!e->ring || !e->outv || !e->outset) {
        err = QM_ENOMEM;
        goto fail;
    }
    for (unsigned i = 0; i < e->cap; i++) {
        e->ring[i].v = calloc(e->nfeat, sizeof(double));
        e->ring[i].set = calloc(e->nfeat, 1);
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
    return e->nfeat;
}

const char *qm_engine_feature_name(const QmEngine *e, unsigned i)
{
    return i < e->nfeat ? e->names[i] : NULL;
}

unsigned qm_engine_delay(const QmEngine *e)
{
    return e->delay;
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
                                   in->d->options[k].name, in->opt.v[k]);
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
    return (unsigned)e->nmodels;
}

const char *qm_engine_model_name(const QmEngine *e, unsigned i)
{
    return qm_model_name(e->models[i].m);
}

const uint8_t *qm_engine_model_sha256(const QmEngine *e, unsigned i)
{
    return qm_model_sha256(e->models[i].m);
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

int qm_engine_submit(QmEngine *e, const QmPicture *ref, const QmPicture *dist,
                     void *frame_user)
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
    while (e->nthreads && inflight(e) >= (int)e->max_inflight && !e->failed) {
        /* No worker collects backend work: when the oldest frames wait on
         * the device alone (every metric on it, max_inflight <= bk_slots),
         * waiting for a worker's signal would wait for ever.  Collect it
         * here. */
        if (e->bk) {
            const uint64_t seen = e->next_bk;
            if (bk_reap(e, false, 0) < 0 || e->failed) {
                pthread_mutex_unlock(&e->lock);
                return QM_EDEVICE;
            }
            /* What it collected may have finished every frame in flight;
             * their signal came before this thread could wait for it.  (A
             * device that finishes frames on its own, as the CUDA backend's
             * copy workers launch them, made this a hang.) */
            if (e->next_bk != seen)
                continue;
            if (e->next_bk < e->next_index) {
                /* next_bk is the oldest frame the device still holds */
                if (bk_reap(e, true, e->next_bk) < 0) {
                    pthread_mutex_unlock(&e->lock);
                    return QM_EDEVICE;
                }
                continue;
            }
        }
        pthread_cond_wait(&e->done_cv, &e->lock);
    }

    /* the backend slot of this frame must be free: collect its last user */
    if (e->bk && e->next_index >= e->bk_slots &&
        bk_reap(e, true, e->next_index - e->bk_slots) < 0) {
        pthread_mutex_unlock(&e->lock);
        return QM_EDEVICE;
    }

    Slot *s = slot_of(e, e->next_index);
    s->index = e->next_index;
    s->ref = *ref;
    s->dist = *dist;
    s->user = frame_user;
    s->computed = s->index % e->s.subsample == 0;
    s->todo = s->claimed = s->done = 0;
    s->bk_pending = false;
    uint32_t bk_todo = 0;
    unsigned k = 0;
    for (int i = 0; i < e->ninst; i++) {
        /* a sequential instance sees every frame, or its order would stall */
        bool run = s->computed || (e->inst[i].d->flags &
                                    (QM_METRIC_EVERY_FRAME | QM_METRIC_SEQUENTIAL));
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
    memset(s->set, 0, e->nfeat);
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
        bk_reap(e, block, e->next_recv + e->delay);
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
    memcpy(e->outv, s->v, e->nfeat * sizeof(double));
    for (unsigned i = 0; i < e->nfeat; i++)
        e->outset[i] = s->computed && s->set[i] && e->reported[i];
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
