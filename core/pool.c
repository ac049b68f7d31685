/* gst-qmetric: pooling of per-frame scores into a summary (libvmaf's
 * definitions of mean and harmonic mean; percentiles by linear
 * interpolation).  Backend-neutral: used by the element, the CLIs and the
 * tools alike.
 *
 * Memory is bounded whatever the stream's length (a live probe runs for
 * weeks): min, max and the two sums are running values, and percentiles
 * come from the first QM_POOL_EXACT values kept verbatim, then from a
 * log-bucketed sketch (the idea of DDSketch, Masson et al., VLDB 2019): a
 * value x != 0 goes to bucket i = ceil(log_g |x|) with g = (1+a)/(1-a), whose
 * representative 2 g^i / (g+1) is within a relative a of every value of the
 * bucket.  One count per bucket, for the span of buckets seen only. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "qm.h"

/* Buckets of one sign: counts of indices [lo, lo + len). */
typedef struct Store {
    int32_t lo;
    uint32_t len;
    uint64_t *cnt;
} Store;

struct QmPoolSketch {
    uint64_t zero, neg_inf, pos_inf;
    Store pos, neg; /* neg holds |x| of negative values */
};

/* Extra buckets on each growth, so that a slowly drifting score does not
 * reallocate on every new bucket. */
#define STORE_SLACK 64

static double ln_gamma(void)
{
    /* g = (1 + a) / (1 - a) = 1 + 2a / (1 - a) */
    return log1p(2.0 * QM_POOL_ALPHA / (1.0 - QM_POOL_ALPHA));
}

static int32_t bucket_of(double mag, double lg)
{
    return (int32_t)ceil(log(mag) / lg);
}

/* The smallest and the largest index a finite |x| >= QM_POOL_TINY can have:
 * stores never grow past them, which bounds a pool's memory. */
static void index_range(double lg, int32_t *imin, int32_t *imax)
{
    *imin = bucket_of(QM_POOL_TINY, lg);
    *imax = bucket_of(DBL_MAX, lg);
}

static int store_add(Store *s, int32_t i, double lg)
{
    if (s->len && i >= s->lo && i < s->lo + (int64_t)s->len) {
        s->cnt[i - s->lo]++;
        return 0;
    }
    int32_t imin, imax;
    index_range(lg, &imin, &imax);
    int64_t lo = s->len ? s->lo : i, hi = s->len ? s->lo + (int64_t)s->len - 1 : i;
    if (i < lo)
        lo = i - STORE_SLACK;
    if (i > hi)
        hi = i + STORE_SLACK;
    if (lo < imin)
        lo = imin;
    if (hi > imax)
        hi = imax;
    size_t len = (size_t)(hi - lo + 1);
    uint64_t *cnt = calloc(len, sizeof(*cnt));
    if (!cnt)
        return -1;
    if (s->len)
        memcpy(cnt + (s->lo - lo), s->cnt, s->len * sizeof(*cnt));
    free(s->cnt);
    s->cnt = cnt;
    s->lo = (int32_t)lo;
    s->len = (uint32_t)len;
    s->cnt[i - s->lo]++;
    return 0;
}

static int sketch_add(QmPoolSketch *sk, double v)
{
    if (isinf(v)) {
        if (v > 0)
            sk->pos_inf++;
        else
            sk->neg_inf++;
        return 0;
    }
    double mag = fabs(v);
    if (mag < QM_POOL_TINY) {
        sk->zero++;
        return 0;
    }
    double lg = ln_gamma();
    return store_add(v > 0 ? &sk->pos : &sk->neg, bucket_of(mag, lg), lg);
}

/* Representative of bucket i: 2 g^i / (g + 1), within a relative a of every
 * magnitude in (g^(i-1), g^i]. */
static double bucket_value(int32_t i, double lg)
{
    double g = exp(lg);
    return exp((double)i * lg) * (2.0 / (g + 1.0));
}

/* The value of rank k (0-based, ascending) in the sketch. */
static double sketch_rank(const QmPoolSketch *sk, uint64_t k)
{
    double lg = ln_gamma();
    if (k < sk->neg_inf)
        return -INFINITY;
    k -= sk->neg_inf;
    for (uint32_t j = sk->neg.len; j-- > 0;) {
        if (k < sk->neg.cnt[j])
            return -bucket_value(sk->neg.lo + (int32_t)j, lg);
        k -= sk->neg.cnt[j];
    }
    if (k < sk->zero)
        return 0.0;
    k -= sk->zero;
    for (uint32_t j = 0; j < sk->pos.len; j++) {
        if (k < sk->pos.cnt[j])
            return bucket_value(sk->pos.lo + (int32_t)j, lg);
        k -= sk->pos.cnt[j];
    }
    return INFINITY;
}

static void sketch_free(QmPoolSketch **sk)
{
    if (!*sk)
        return;
    free((*sk)->pos.cnt);
    free((*sk)->neg.cnt);
    free(*sk);
    *sk = NULL;
}

/* The first QM_POOL_EXACT values move into a new sketch; the array goes. */
static int start_sketch(QmPool *p)
{
    QmPoolSketch *sk = calloc(1, sizeof(*sk));
    if (!sk)
        return -1;
    size_t kept = (size_t)(p->n - 1 - p->n_nan - p->n_lost);
    for (size_t i = 0; i < kept; i++)
        if (sketch_add(sk, p->values[i])) {
            sketch_free(&sk);
            return -1;
        }
    free(p->values);
    p->values = NULL;
    p->cap = 0;
    p->sketch = sk;
    return 0;
}

void qm_pool_init(QmPool *p)
{
    memset(p, 0, sizeof(*p));
}

void qm_pool_add(QmPool *p, double v)
{
    /* libvmaf's pooling: plain double sums in frame order (a compensated
     * sum would differ from libvmaf's pooled values in the last bits) */
    if (p->n == 0 || v < p->min)
        p->min = v;
    if (p->n == 0 || v > p->max)
        p->max = v;
    p->sum += v;
    p->inv_sum += 1.0 / (v + 1.0);
    p->n++;
    if (isnan(v)) {
        p->n_nan++;
        return;
    }
    if (p->n_lost)
        return; /* percentiles are NaN for good: spare the work */
    size_t kept = (size_t)(p->n - 1 - p->n_nan);
    if (!p->sketch && kept == QM_POOL_EXACT && start_sketch(p)) {
        p->n_lost++;
        return;
    }
    if (p->sketch) {
        if (sketch_add(p->sketch, v))
            p->n_lost++;
        return;
    }
    if (kept == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 256;
        if (cap > QM_POOL_EXACT)
            cap = QM_POOL_EXACT;
        double *nv = realloc(p->values, cap * sizeof(double));
        if (!nv) {
            p->n_lost++;
            return;
        }
        p->values = nv;
        p->cap = cap;
    }
    p->values[kept] = v;
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

/* v_lo + f (v_hi - v_lo), 0 <= f < 1; an infinite end wins (its limit),
 * rather than inf * 0 or inf - inf turning into NaN. */
static double lerp(double lo, double hi, double f)
{
    if (f == 0.0 || lo == hi || isinf(lo))
        return lo;
    if (isinf(hi))
        return hi;
    return lo + f * (hi - lo);
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

double qm_pool_percentile(QmPool *p, double pct)
{
    if (p->n_nan || p->n_lost || isnan(pct))
        return NAN;
    uint64_t n = p->n;
    if (!n)
        return 0.0;
    pct = clamp(pct, 0.0, 100.0);
    double pos = pct / 100.0 * (double)(n - 1);
    uint64_t lo = (uint64_t)pos;
    if (lo >= n - 1)
        return p->max;
    double f = pos - (double)lo;
    if (!p->sketch) {
        qsort(p->values, (size_t)n, sizeof(double), cmp_double);
        return lerp(p->values[lo], p->values[lo + 1], f);
    }
    /* the extreme ranks are known exactly; inner ranks within a */
    double a = lo == 0 ? p->min : clamp(sketch_rank(p->sketch, lo), p->min, p->max);
    double b = f == 0.0 ? a : clamp(sketch_rank(p->sketch, lo + 1), p->min, p->max);
    if (lo + 1 == n - 1)
        b = p->max;
    return lerp(a, b, f);
}

size_t qm_pool_bytes(const QmPool *p)
{
    size_t b = p->cap * sizeof(double);
    if (p->sketch)
        b += sizeof(*p->sketch) + ((size_t)p->sketch->pos.len + p->sketch->neg.len) * sizeof(uint64_t);
    return b;
}

void qm_pool_clear(QmPool *p)
{
    free(p->values);
    sketch_free(&p->sketch);
    qm_pool_init(p);
}
