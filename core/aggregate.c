/* gst-qmetric: pooled values metrics provide themselves (aggregate.h). */
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"

/* pooled values one instance may name */
#define MAX_VALUES QM_MAX_FEATURES

typedef struct AggInst {
    const QmMetricDesc *d;
    QmOptValues opt;
    unsigned base;
    unsigned aux;            /* row index of its aux values, or QM_NO_AUX */
    void *state;
    char *key[MAX_VALUES];   /* keys handed out, made on first use */
} AggInst;

struct QmAggregates {
    AggInst inst[QM_PLAN_MAX_INST];
    int n;
};

void qm_aggregates_free(QmAggregates *a)
{
    if (!a)
        return;
    for (int i = 0; i < a->n; i++) {
        free(a->inst[i].state);
        for (int k = 0; k < MAX_VALUES; k++)
            free(a->inst[i].key[k]);
    }
    free(a);
}

/* The pooling of an instance of d (options opt) whose features are at
 * base in a row and its aux values at aux (QM_NO_AUX: none): 0, or
 * QM_ENOMEM or its init()'s error. */
static int add_inst(QmAggregates *a, const QmMetricDesc *d, const QmOptValues *opt,
                    unsigned base, unsigned aux, int w, int h, int bpc, QmChroma chroma)
{
    const QmPoolFuncs *pf = d->pool;
    if (a->n == QM_PLAN_MAX_INST)
        return QM_ENOMEM;
    AggInst *ai = &a->inst[a->n++];
    ai->d = d;
    ai->opt = *opt;
    ai->base = base;
    ai->aux = aux;
    ai->state = calloc(1, pf->state_size ? pf->state_size : 1);
    if (!ai->state)
        return QM_ENOMEM;
    const QmMetricConfig cfg = { w, h, bpc, chroma, &ai->opt };
    return pf->init ? pf->init(ai->state, &cfg) : 0;
}

int qm_aggregates_open(QmAggregates **out, const QmPlan *p, int w, int h, int bpc,
                       QmChroma chroma)
{
    QmAggregates *a = calloc(1, sizeof(*a));
    *out = NULL;
    if (!a)
        return QM_ENOMEM;
    for (int i = 0; i < p->ninst; i++) {
        const QmPlanInst *pi = &p->inst[i];
        const int err = pi->d->pool ? add_inst(a, pi->d, &pi->opt, pi->base, pi->aux, w, h,
                                               bpc, chroma) : 0;
        if (err) {
            qm_aggregates_free(a);
            return err;
        }
    }
    *out = a;
    return 0;
}

QmAggregates *qm_aggregates_for_keys(unsigned n, const char *const *names, int w, int h,
                                     int bpc, QmChroma chroma)
{
    QmAggregates *a = calloc(1, sizeof(*a));
    for (unsigned i = 0; a && i < n; i++) {
        unsigned f = 0;
        const QmMetricDesc *d = qm_feature_owner(names[i], &f);
        if (!d || !d->pool || f != 0 || strcmp(names[i], d->features[0]))
            continue;
        /* an instance's features stand together in a row, in order */
        unsigned nf = 1;
        while (d->features[nf] && i + nf < n && !strcmp(names[i + nf], d->features[nf]))
            nf++;
        if (d->features[nf])
            continue;
        QmOptValues opt;
        memset(&opt, 0, sizeof(opt));
        for (int k = 0; d->options && d->options[k].name; k++)
            opt.v[k] = d->options[k].def;
        /* rows carry no aux values: a metric pooled from them (e.g.
         * psnr's apsnr) is not offered here (qm_aggregates_from_rows) */
        if (add_inst(a, d, &opt, i, QM_NO_AUX, w, h, bpc, chroma)) {
            qm_aggregates_free(a);
            return NULL;
        }
    }
    return a;
}

void qm_aggregates_add(QmAggregates *a, const double *value, const uint8_t *present)
{
    for (int i = 0; a && i < a->n; i++) {
        const AggInst *ai = &a->inst[i];
        ai->d->pool->add(ai->state, value + ai->base, present + ai->base);
        if (ai->aux != QM_NO_AUX && ai->d->pool->add_aux)
            ai->d->pool->add_aux(ai->state, value + ai->aux);
    }
}

bool qm_aggregates_from_rows(const QmAggregates *a)
{
    for (int i = 0; a && i < a->n; i++)
        if (a->inst[i].aux != QM_NO_AUX)
            return false;
    return true;
}

const char *qm_aggregates_get(QmAggregates *a, unsigned i, double *value)
{
    for (int k = 0; a && k < a->n; k++) {
        AggInst *ai = &a->inst[k];
        for (unsigned n = 0; n < MAX_VALUES; n++) {
            const char *name = ai->d->pool->value(ai->state, n, value);
            if (!name)
                break;
            if (i--)
                continue;
            if (!ai->key[n])
                ai->key[n] = qm_metric_key(ai->d, name, &ai->opt);
            return ai->key[n];
        }
    }
    return NULL;
}
