/* gst-qmetric: metric-defined pooled values (see aggregate.h). */
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "metric.h"

typedef struct Agg {
    unsigned col;                  /* the feature's column in a row */
    const QmMetricDesc *d;
    unsigned f;                    /* the feature's index in d */
    double state[QM_AGG_STATE];
    uint64_t n;
} Agg;

struct QmAggregates {
    QmMetricConfig cfg;
    unsigned n;
    Agg *agg;
};

QmAggregates *qm_aggregates_new(unsigned n, const char *const *names, int w, int h,
                                int bpc, QmChroma chroma)
{
    QmAggregates *a = calloc(1, sizeof(*a));
    if (!a || !(a->agg = calloc(n ? n : 1, sizeof(*a->agg)))) {
        free(a);
        return NULL;
    }
    a->cfg = (QmMetricConfig){ w, h, bpc, chroma, NULL };
    for (unsigned i = 0; i < n; i++) {
        unsigned f = 0;
        const QmMetricDesc *d = qm_feature_owner(names[i], &f);
        if (d && d->aggregate)
            a->agg[a->n++] = (Agg){ .col = i, .d = d, .f = f };
    }
    return a;
}

void qm_aggregates_add(QmAggregates *a, const double *v, const uint8_t *present)
{
    for (unsigned i = 0; a && i < a->n; i++) {
        Agg *g = &a->agg[i];
        if (present[g->col]) {
            g->d->aggregate->add(g->state, &a->cfg, g->f, v[g->col]);
            g->n++;
        }
    }
}

/* The i-th aggregate with frames. */
static const Agg *nth(const QmAggregates *a, unsigned i)
{
    for (unsigned k = 0; a && k < a->n; k++)
        if (a->agg[k].n && i-- == 0)
            return &a->agg[k];
    return NULL;
}

unsigned qm_aggregates_count(const QmAggregates *a)
{
    unsigned c = 0;
    for (unsigned k = 0; a && k < a->n; k++)
        c += a->agg[k].n > 0;
    return c;
}

unsigned qm_aggregates_column(const QmAggregates *a, unsigned i)
{
    const Agg *g = nth(a, i);
    return g ? g->col : 0;
}

double qm_aggregates_value(const QmAggregates *a, unsigned i)
{
    const Agg *g = nth(a, i);
    return g ? g->d->aggregate->value(g->state, &a->cfg, g->f, g->n) : 0.0;
}

void qm_aggregates_free(QmAggregates *a)
{
    if (a)
        free(a->agg);
    free(a);
}
