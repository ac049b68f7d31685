/* gst-qmetric: unit test of core/pool.c.  Mean, harmonic mean, min and max
 * must equal libvmaf's plain double sums bit for bit; percentiles are exact
 * up to QM_POOL_EXACT values and within the stated relative error after
 * (QM_POOL_ALPHA of the larger magnitude of the two values interpolated,
 * QM_POOL_TINY absolute near 0) on adversarial distributions; the pool's
 * memory stays constant over 10^7 values. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "qm.h"
#include "unit.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double urand(void) /* [0, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The reference percentile: sort everything, interpolate linearly. */
static double exact_pct(const double *sorted, size_t n, double pct,
                        double *a, double *b)
{
    double pos = pct / 100.0 * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo >= n - 1) {
        *a = *b = sorted[n - 1];
        return sorted[n - 1];
    }
    double f = pos - (double)lo;
    *a = sorted[lo];
    *b = sorted[lo + 1];
    if (f == 0.0 || *a == *b || isinf(*a))
        return *a;
    if (isinf(*b))
        return *b; /* the limit of the interpolation */
    return *a + f * (*b - *a);
}

static const double pcts[] = { 0, 0.1, 1, 5, 10, 25, 33.3, 50, 66.6, 75, 90, 95, 99, 99.9, 100 };
#define N_PCTS (sizeof(pcts) / sizeof(pcts[0]))

/* Equal, or both NaN (a sum over +inf and -inf). */
static int same(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

/* Adds v[0..n) to a pool and checks every pooled value against the plain
 * computation; `exact`: percentiles must be equal, else within the bound. */
static void check_values(const char *what, double *v, size_t n, int exact)
{
    QmPool p;
    qm_pool_init(&p);
    double sum = 0, inv = 0, mn = v[0], mx = v[0];
    for (size_t i = 0; i < n; i++) {
        qm_pool_add(&p, v[i]);
        sum += v[i];
        inv += 1.0 / (v[i] + 1.0);
        if (v[i] < mn)
            mn = v[i];
        if (v[i] > mx)
            mx = v[i];
    }
    CHECK(p.n == n, "%s: n %" PRIu64 " != %zu", what, p.n, n);
    CHECK(same(qm_pool_mean(&p), sum / (double)n), "%s: mean %.17g != %.17g", what,
          qm_pool_mean(&p), sum / (double)n);
    CHECK(same(qm_pool_harmonic_mean(&p), (double)n / inv - 1.0),
          "%s: harmonic mean %.17g != %.17g", what, qm_pool_harmonic_mean(&p),
          (double)n / inv - 1.0);
    CHECK(p.min == mn && p.max == mx, "%s: min/max %.17g %.17g != %.17g %.17g",
          what, p.min, p.max, mn, mx);
    CHECK((n > QM_POOL_EXACT) == (p.sketch != NULL), "%s: sketch %p at n=%zu",
          what, (void *)p.sketch, n);

    qsort(v, n, sizeof(double), cmp_double);
    double worst = 0;
    for (size_t k = 0; k < N_PCTS; k++) {
        double a, b, want = exact_pct(v, n, pcts[k], &a, &b);
        double got = qm_pool_percentile(&p, pcts[k]);
        if (exact) {
            CHECK(got == want || (isnan(got) && isnan(want)),
                  "%s: p%g %.17g != %.17g", what, pcts[k], got, want);
            continue;
        }
        double mag = fmax(fabs(a), fabs(b));
        if (isinf(want) || isinf(got)) {
            CHECK(got == want, "%s: p%g %.17g != %.17g", what, pcts[k], got, want);
            continue;
        }
        /* the bound, with room for the rounding of log/exp only */
        double bound = QM_POOL_ALPHA * mag * (1 + 1e-9) + QM_POOL_TINY;
        double err = fabs(got - want);
        CHECK(err <= bound, "%s: p%g %.17g vs exact %.17g: error %.3g > %.3g",
              what, pcts[k], got, want, err, bound);
        if (mag > QM_POOL_TINY && err / mag > worst)
            worst = err / mag;
    }
    if (!exact)
        printf("%-34s n=%-8zu worst relative error %.3g (bound %g), %zu bytes\n",
               what, n, worst, QM_POOL_ALPHA, qm_pool_bytes(&p));
    qm_pool_clear(&p);
    CHECK(qm_pool_bytes(&p) == 0 && p.n == 0, "%s: clear left %zu bytes", what,
          qm_pool_bytes(&p));
}

typedef double (*Gen)(size_t i, size_t n);

static double g_uniform(size_t i, size_t n) { (void)i; (void)n; return 100.0 * urand(); }
static double g_vmaf_like(size_t i, size_t n)
{
    (void)n; /* mostly high scores with rare deep drops */
    return i % 997 == 0 ? 5.0 * urand() : 90.0 + 10.0 * urand();
}
static double g_log_uniform(size_t i, size_t n) { (void)i; (void)n; return pow(10.0, -12.0 + 24.0 * urand()); }
static double g_signed(size_t i, size_t n)
{
    (void)i; (void)n;
    double m = pow(10.0, -6.0 + 12.0 * urand());
    return urand() < 0.5 ? -m : m;
}
static double g_constant(size_t i, size_t n) { (void)i; (void)n; return 42.125; }
static double g_two_point(size_t i, size_t n) { (void)n; return i % 2 ? 100.0 : 0.0; }
static double g_ascending(size_t i, size_t n) { return (double)i / (double)n * 60.0; }
static double g_descending(size_t i, size_t n) { return (double)(n - i) / (double)n * 60.0; }
static double g_boundaries(size_t i, size_t n)
{
    /* values on and next to bucket edges g^k */
    (void)n;
    double lg = log1p(2.0 * QM_POOL_ALPHA / (1.0 - QM_POOL_ALPHA));
    double e = exp((double)(i % 4000) * lg);
    int side = (int)(i / 4000) % 3;
    return side == 0 ? e : side == 1 ? nextafter(e, 0) : nextafter(e, INFINITY);
}
static double g_tiny(size_t i, size_t n)
{
    (void)n; /* exact zeros, denormals and values around QM_POOL_TINY */
    switch (i % 5) {
    case 0: return 0.0;
    case 1: return -0.0;
    case 2: return 5e-324;
    case 3: return QM_POOL_TINY * (0.5 + urand());
    default: return urand();
    }
}
static double g_huge(size_t i, size_t n)
{
    (void)n;
    return i % 3 == 0 ? DBL_MAX * urand() : i % 3 == 1 ? -DBL_MAX : 1e300;
}
static double g_inf(size_t i, size_t n)
{
    (void)n;
    return i % 10 == 0 ? INFINITY : i % 10 == 1 ? -INFINITY : 10.0 * urand();
}

static void check_gen(const char *what, Gen g, size_t n, int exact)
{
    double *v = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        v[i] = g(i, n);
    check_values(what, v, n, exact);
    free(v);
}

static void check_special(void)
{
    QmPool p;
    qm_pool_init(&p);
    CHECK(qm_pool_percentile(&p, 50) == 0.0, "empty pool: percentile not 0");
    qm_pool_add(&p, 7.0);
    CHECK(qm_pool_percentile(&p, 0) == 7.0 && qm_pool_percentile(&p, 100) == 7.0,
          "one value: percentiles not the value");
    qm_pool_add(&p, NAN);
    CHECK(isnan(qm_pool_percentile(&p, 50)), "NaN added: percentile not NaN");
    CHECK(isnan(qm_pool_mean(&p)), "NaN added: mean not NaN (libvmaf's sum)");
    qm_pool_clear(&p);
    /* NaN after the switch to the sketch */
    for (int i = 0; i < QM_POOL_EXACT + 10; i++)
        qm_pool_add(&p, (double)i);
    CHECK(!isnan(qm_pool_percentile(&p, 50)), "sketch: percentile NaN");
    qm_pool_add(&p, NAN);
    CHECK(isnan(qm_pool_percentile(&p, 50)), "sketch, NaN added: percentile not NaN");
    qm_pool_clear(&p);
}

/* 10^7 values: the pool's heap stays the same after the first 10^5. */
static void check_memory(void)
{
    QmPool p;
    qm_pool_init(&p);
    size_t at_1e5 = 0, most = 0;
    /* the sketch's size follows the span of magnitudes seen, not the count:
     * show the span (0.5..100) first, then 10^7 scores inside it */
    qm_pool_add(&p, 0.5);
    qm_pool_add(&p, 100.0);
    for (uint64_t i = 2; i < 10000000; i++) {
        qm_pool_add(&p, 0.5 + 99.5 * urand());
        if (i == 100000)
            at_1e5 = qm_pool_bytes(&p);
        if ((i & 0xffff) == 0 && qm_pool_bytes(&p) > most)
            most = qm_pool_bytes(&p);
    }
    size_t end = qm_pool_bytes(&p);
    printf("memory: %zu bytes after 10^5 values, %zu after 10^7 (most %zu)\n",
           at_1e5, end, most);
    CHECK(end == at_1e5 && most == at_1e5,
          "pool memory grew: %zu bytes after 10^5 values, %zu after 10^7", at_1e5, end);
    /* 0..100 at a relative 0.1%: some thousand buckets, not one per value */
    CHECK(end < 64 * 1024, "pool of scores in 0..100 holds %zu bytes", end);
    qm_pool_clear(&p);
}

int main(void)
{
    /* exact while n <= QM_POOL_EXACT */
    check_gen("uniform, exact", g_uniform, 1000, 1);
    check_gen("uniform, exactly QM_POOL_EXACT", g_uniform, QM_POOL_EXACT, 1);
    check_gen("two-point, exact", g_two_point, 101, 1);
    check_gen("infinities, exact", g_inf, 500, 1);
    /* the sketch */
    check_gen("uniform 0..100", g_uniform, QM_POOL_EXACT + 1, 0);
    check_gen("uniform 0..100", g_uniform, 200000, 0);
    check_gen("vmaf-like with rare drops", g_vmaf_like, 200000, 0);
    check_gen("log-uniform 1e-12..1e12", g_log_uniform, 200000, 0);
    check_gen("both signs 1e-6..1e6", g_signed, 200000, 0);
    check_gen("constant", g_constant, 100000, 0);
    check_gen("two-point 0/100", g_two_point, 100001, 0);
    check_gen("ascending", g_ascending, 100000, 0);
    check_gen("descending", g_descending, 100000, 0);
    check_gen("bucket edges", g_boundaries, 120000, 0);
    check_gen("zeros, denormals, tiny", g_tiny, 100000, 0);
    check_gen("huge magnitudes", g_huge, 30000, 0);
    check_gen("infinities", g_inf, 100000, 0);
    check_special();
    check_memory();
    if (failures)
        printf("%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
