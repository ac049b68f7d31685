/* gst-qmetric: the plan of an engine (see plan.h): metric and model
 * selection, instances and their options, the feature table. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

void qm_vmessage(char **dst, const QmSettings *s, int level, const char *fmt, va_list ap)
{
    char buf[512];
    vsnprintf(buf, sizeof(buf), fmt, ap);
    if (dst) {
        free(*dst);
        *dst = strdup(buf);
    }
    if (s && s->log && level >= 0)
        s->log(s->log_opaque, level, buf);
}

static void plan_error(QmPlan *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    qm_vmessage(&p->err, NULL, -1, fmt, ap);
    va_end(ap);
}

static void plan_log(const QmSettings *s, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    qm_vmessage(NULL, s, level, fmt, ap);
    va_end(ap);
}

static void opt_defaults(const QmMetricDesc *d, QmOptValues *o)
{
    memset(o, 0, sizeof(*o));
    for (int i = 0; d->options && d->options[i].name; i++)
        o->v[i] = d->options[i].def;
}

/* Find or add the instance of metric d with options o. */
static int add_inst(QmPlan *p, const QmMetricDesc *d, const QmOptValues *o,
                    bool report, QmPlanInst **out)
{
    for (int i = 0; i < p->ninst; i++) {
        if (p->inst[i].d == d && !memcmp(&p->inst[i].opt, o, sizeof(*o))) {
            p->inst[i].report |= report;
            *out = &p->inst[i];
            return 0;
        }
    }
    if (p->ninst == QM_PLAN_MAX_INST)
        return QM_ENOTSUP;
    QmPlanInst *in = &p->inst[p->ninst++];
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

static int check_metric_list(QmPlan *p, const char *list)
{
    size_t n;
    for (const char *t; (t = next_name(&list, &n));) {
        char name[64];
        snprintf(name, sizeof(name), "%.*s", (int)n, t);
        if (strcmp(name, "all") && strcmp(name, "default") &&
            !qm_metric_describe(name)) {
            char known[512] = "";
            for (const char *const *k = qm_metric_names(); *k; k++)
                snprintf(known + strlen(known), sizeof(known) - strlen(known),
                         "%s%s", known[0] ? ", " : "", *k);
            plan_error(p, "unknown metric '%s' (known: all, %s)", name, known);
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

static int setup_models(QmPlan *p, const QmSettings *s)
{
    const char *list = s->models && *s->models ? s->models : "vmaf_v0.6.1";
    char path[4096];
    if (s->model_path)
        snprintf(path, sizeof(path), "%s", s->model_path);
    else
        default_model_path(path, sizeof(path));

    char **names, *lerr = NULL;
    int err = qm_model_list_parse(list, &names, &lerr);
    if (err) {
        plan_error(p, "%s", lerr ? lerr : "cannot parse the model list");
        free(lerr);
        return err;
    }
    for (char **name = names; *name; name++) {
        if (p->nmodels == (int)(sizeof(p->models) / sizeof(p->models[0]))) {
            plan_error(p, "too many models (at most %d)", p->nmodels);
            qm_model_list_free(names);
            return QM_ENOTSUP;
        }
        char *msg = NULL;
        QmPlanModel *mo = &p->models[p->nmodels];
        err = qm_model_load(&mo->m, *name, path, &msg);
        if (err) {
            plan_error(p, "%s", msg ? msg : "cannot load model");
            free(msg);
            qm_model_list_free(names);
            return err;
        }
        p->nmodels++;
    }
    qm_model_list_free(names);
    return 0;
}

/* Instances for every model input, with the options the model asks for. */
static int add_model_inputs(QmPlan *p, QmPlanModel *mo, QmPlanInst **insts)
{
    for (unsigned i = 0; i < qm_model_n_inputs(mo->m); i++) {
        const QmModelInput *mi = qm_model_input(mo->m, i);
        const QmMetricDesc *d = qm_metric_find(mi->metric);
        if (!d) {
            plan_error(p, "model %s: input metric '%s' is not available",
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
                plan_error(p, "model %s: unknown option '%s' for %s",
                          qm_model_name(mo->m), mi->opt_name[k], mi->metric);
                return QM_EMODEL;
            }
        }
        int err = add_inst(p, d, &o, false, &insts[i]);
        if (err)
            return err;
    }
    return 0;
}

/* QmSettings.features: "name=opt=val:opt=val,name2,..." (libvmaf's
 * --feature spelling), one reported instance per entry. */
static int add_feature_options(QmPlan *p, const QmSettings *s)
{
    const char *t = s->features;
    while (t && *t) {
        while (*t == ',' || *t == ' ')
            t++;
        if (!*t)
            break;
        size_t len = strcspn(t, ",");
        char entry[512];
        if (len >= sizeof(entry)) {
            plan_error(p, "features: entry too long: '%.40s...'", t);
            return QM_EINVAL;
        }
        memcpy(entry, t, len);
        entry[len] = 0;
        t += len;
        while (len && entry[len - 1] == ' ')
            entry[--len] = 0;

        char *opts = strchr(entry, '=');
        if (opts)
            *opts++ = 0;
        const QmMetricDesc *d = qm_metric_find(entry);
        if (!d) {
            plan_error(p, "features: unknown metric '%s'", entry);
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
                plan_error(p, "features: %s: '%s' is not OPTION=VALUE", d->name,
                          tok);
                return QM_EINVAL;
            }
            *val++ = 0;
            char msg[600];
            if (qm_option_parse(d, tok, val, &o, msg, sizeof(msg))) {
                plan_error(p, "features: %s", msg);
                return QM_EINVAL;
            }
        }
        if (s->w < d->min_w || s->h < d->min_h) {
            plan_error(p, "metric %s needs at least %dx%d pictures, got %dx%d",
                      d->name, d->min_w, d->min_h, s->w, s->h);
            return QM_ENOTSUP;
        }
        QmPlanInst *in;
        int err = add_inst(p, d, &o, true, &in);
        if (err) {
            plan_error(p, "features: too many metric instances");
            return err;
        }
    }
    return 0;
}

const char *qm_chroma_name(QmChroma c)
{
    static const char *const n[] = { "4:0:0 (GRAY)", "4:2:0", "4:2:2", "4:4:4" };
    return n[c];
}

/* Why metric d cannot run on the engine's input (written to why), or NULL
 * when it can.  Its descriptor says what it needs (chroma, a smallest
 * size); what else it refuses (a bit depth...) its init() answers with
 * QM_ENOTSUP, so a trial init() asks it. */
static const char *cannot_run(const QmSettings *s, const QmMetricDesc *d, char *why,
                              size_t len)
{
    if (s->chroma == QM_CHROMA_400 && !(d->flags & QM_METRIC_LUMA_ONLY)) {
        snprintf(why, len, "it needs chroma planes and the input is %s",
                 qm_chroma_name(s->chroma));
        return why;
    }
    if (s->w < d->min_w || s->h < d->min_h) {
        snprintf(why, len, "it needs at least %dx%d pictures, the input is %dx%d",
                 d->min_w, d->min_h, s->w, s->h);
        return why;
    }
    QmOptValues o;
    opt_defaults(d, &o);
    QmMetricConfig cfg = { s->w, s->h, s->bpc, s->chroma, &o };
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
    snprintf(why, len, "it does not support %dx%d %d-bit %s input", s->w,
             s->h, s->bpc, qm_chroma_name(s->chroma));
    return why;
}

/* Whether every input of the loaded models can run; else why not. */
static const char *models_cannot_run(QmPlan *p, const QmSettings *s, char *why, size_t len)
{
    for (int m = 0; m < p->nmodels; m++) {
        for (unsigned i = 0; i < qm_model_n_inputs(p->models[m].m); i++) {
            const QmModelInput *mi = qm_model_input(p->models[m].m, i);
            const QmMetricDesc *d = qm_metric_find(mi->metric);
            char sub[256];
            if (d && cannot_run(s, d, sub, sizeof(sub))) {
                snprintf(why, len, "its input %s cannot run: %s", d->name, sub);
                return why;
            }
        }
    }
    return NULL;
}

/* qm_plan_build() without the clean-up after an error. */
static int plan(QmPlan *p, const QmSettings *s)
{
    const char *list = s->metrics;
    bool all = !list || !*list || name_in_list(list, "all");
    bool vmaf = all || name_in_list(list, "vmaf") || name_in_list(list, "default");
    int err = check_metric_list(p, list);
    if (err)
        return err;

    for (int i = 0; qm_metrics[i]; i++) {
        const QmMetricDesc *d = qm_metrics[i];
        const bool named = name_in_list(list, d->name);
        const bool required = named && !s->metrics_are_default;
        bool want = named || (all && !(d->flags & QM_METRIC_OPT_IN) &&
                              !(d->flags & QM_METRIC_MODEL_INPUT));
        if (!want)
            continue;
        char why[256];
        if (cannot_run(s, d, why, sizeof(why))) {
            if (!required) {
                /* "all" (and the default list) mean what this input supports */
                plan_log(s, QM_LOG_WARNING, "metric %s left out: %s", d->name, why);
                continue;
            }
            plan_error(p, "metric %s cannot run: %s", d->name, why);
            return QM_ENOTSUP;
        }
        QmOptValues o;
        opt_defaults(d, &o);
        QmPlanInst *in;
        if ((err = add_inst(p, d, &o, true, &in)))
            return err;
    }

    if ((err = add_feature_options(p, s)))
        return err;

    QmPlanInst *model_insts[QM_PLAN_MAX_MODELS][QM_MAX_FEATURES];
    if (vmaf) {
        if ((err = setup_models(p, s)))
            return err;
        char why[320];
        if (models_cannot_run(p, s, why, sizeof(why))) {
            if ((name_in_list(list, "vmaf") || name_in_list(list, "default")) &&
                !s->metrics_are_default) {
                plan_error(p, "metric vmaf cannot run: %s", why);
                return QM_ENOTSUP;
            }
            plan_log(s, QM_LOG_WARNING, "metric vmaf left out: %s", why);
            for (int m = 0; m < p->nmodels; m++)
                qm_model_free(&p->models[m].m);
            p->nmodels = 0;
        }
        for (int m = 0; m < p->nmodels; m++)
            if ((err = add_model_inputs(p, &p->models[m], model_insts[m])))
                return err;
    }

    /* global feature table: every instance's features, then model scores */
    unsigned n = 0;
    for (int i = 0; i < p->ninst; i++) {
        p->inst[i].base = n;
        n += p->inst[i].nf;
    }
    p->nfeat = n + (unsigned)p->nmodels;
    p->names = calloc(p->nfeat, sizeof(*p->names));
    p->reported = calloc(p->nfeat, 1);
    if (!p->names || !p->reported)
        return QM_ENOMEM;
    for (int i = 0; i < p->ninst; i++) {
        QmPlanInst *in = &p->inst[i];
        for (unsigned f = 0; f < in->nf; f++) {
            p->names[in->base + f] = qm_feature_key(in->d, f, &in->opt);
            if (!p->names[in->base + f])
                return QM_ENOMEM;
            /* model inputs are reported as libvmaf reports them */
            p->reported[in->base + f] = 1;
        }
        if (qm_metric_delay(in->d, &in->opt) > p->delay)
            p->delay = qm_metric_delay(in->d, &in->opt);
    }
    for (int m = 0; m < p->nmodels; m++) {
        QmPlanModel *mo = &p->models[m];
        mo->out = n + (unsigned)m;
        /* one model: libvmaf's key "vmaf"; several: each model's name, as
         * libvmaf's tool names the scores of several models */
        p->names[mo->out] = strdup(p->nmodels == 1 ? "vmaf" : qm_model_name(mo->m));
        if (!p->names[mo->out])
            return QM_ENOMEM;
        p->reported[mo->out] = 1;
        for (unsigned i = 0; i < qm_model_n_inputs(mo->m); i++) {
            const QmModelInput *mi = qm_model_input(mo->m, i);
            QmPlanInst *in = model_insts[m][i];
            unsigned f;
            for (f = 0; f < in->nf; f++)
                if (!strcmp(in->d->features[f], mi->feature))
                    break;
            if (f == in->nf) {
                plan_error(p, "model %s: metric %s has no feature '%s'",
                          qm_model_name(mo->m), mi->metric, mi->feature);
                return QM_EMODEL;
            }
            mo->in[i] = in->base + f;
        }
    }
    if (p->ninst == 0) {
        plan_error(p, "no metric selected");
        return QM_EINVAL;
    }
    return 0;
}

int qm_plan_build(QmPlan *p, const QmSettings *s, char **err)
{
    memset(p, 0, sizeof(*p));
    const int code = plan(p, s);
    if (code) {
        *err = p->err;
        p->err = NULL;
        qm_plan_free(p);
        return code;
    }
    return 0;
}

void qm_plan_free(QmPlan *p)
{
    for (int m = 0; m < p->nmodels; m++)
        qm_model_free(&p->models[m].m);
    for (unsigned i = 0; p->names && i < p->nfeat; i++)
        free(p->names[i]);
    free(p->names);
    free(p->reported);
    free(p->err);
    memset(p, 0, sizeof(*p));
}
