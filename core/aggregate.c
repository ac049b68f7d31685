/* gst-qmetric: pooled values metrics provide themselves (aggregate.h). */
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"

/* pooled values one instance may name */
#define MAX_VALUES QM_MAX_FEATURES

typedef struct AggInst {
    const QmMetricDesc *d;
    const QmOptValues *opt;
    unsigned base;
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

int qm_aggregates_open(QmAggregates **out, const QmPlan *p, int w, int h, int bpc,
                       QmChroma chroma)
{
    QmAggregates *a = calloc(1, sizeof(*a));
    *out = NULL;
    if (!a)
        return QM_ENOMEM;
    for (int i = 0; i < p->ninst; i++) {
        const QmPlanInst *pi = &p->inst[i];
        const QmPoolFuncs *pf = pi->d->pool;
        if (!pf)
            continue;
        AggInst *ai = &a->inst[a->n++];
        ai->d = pi->d;
        ai->opt = &pi->opt;
        ai->base = pi->base;
        ai->state = calloc(1, pf->state_size ? pf->state_size : 1);
        if (!ai->state) {
            qm_aggregates_free(a);
            return QM_ENOMEM;
        }
        const QmMetricConfig cfg = { w, h, bpc, chroma, &pi->opt };
        const int err = pf->init ? pf->init(ai->state, &cfg) : 0;
        if (err) {
            qm_aggregates_free(a);
            return err;
        }
    }
    *out = a;
    return 0;
}

void qm_aggregates_add(QmAggregates *a, const double *value, const uint8_t *present)
{
    for (int i = 0; a && i < a->n; i++) {
        const AggInst *ai = &a->inst[i];
        ai->d->pool->add(ai->state, value + ai->base, present + ai->base);
    }
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
                ai->key[n] = qm_metric_key(ai->d, name, ai->opt);
            return ai->key[n];
        }
    }
    return NULL;
}
