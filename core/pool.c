/* gst-qmetric: pooling of per-frame scores into a summary (libvmaf's
 * definitions of mean and harmonic mean; percentiles by linear
 * interpolation).  Backend-neutral: used by the element, the CLIs and the
 * tools alike. */
#include <stdlib.h>
#include <string.h>

#include "qm.h"

void qm_pool_init(QmPool *p)
{
    memset(p, 0, sizeof(*p));
}

void qm_pool_add(QmPool *p, double v)
{
    if (p->n == 0 || v < p->min)
        p->min = v;
    if (p->n == 0 || v > p->max)
        p->max = v;
    p->sum += v;
    p->inv_sum += 1.0 / (v + 1.0);
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 256;
        double *nv = realloc(p->values, cap * sizeof(double));
        if (nv) {
            p->values = nv;
            p->cap = cap;
        }
    }
    if (p->n < p->cap)
        p->values[p->n] = v;
    p->n++;
}

double qm_pool_mean(const QmPool *p)
{
    return p->sum / (double)p->n;
}

double qm_pool_harmonic_mean(const QmPool *p)
{
    /* libvmaf: pic_cnt / sum(1 / (s + 1)) - 1 */
    return (double)p->n / p->inv_sum - 1.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double qm_pool_percentile(QmPool *p, double pct)
{
    size_t n = p->n < p->cap ? p->n : p->cap;
    if (!n)
        return 0.0;
    qsort(p->values, n, sizeof(double), cmp_double);
    double pos = pct / 100.0 * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo >= n - 1)
        return p->values[n - 1];
    double f = pos - (double)lo;
    return p->values[lo] + f * (p->values[lo + 1] - p->values[lo]);
}

void qm_pool_clear(QmPool *p)
{
    free(p->values);
    qm_pool_init(p);
}
