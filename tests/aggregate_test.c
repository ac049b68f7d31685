/* gst-qmetric: pooled values a metric provides itself (QmMetricDesc.pool,
 * core/aggregate.c) and their place in the logs (core/qmlog.c).
 *
 * A fake metric pools the way XPSNR does (the mean of the root distortions
 * behind its per-frame dB values, not the mean of the dB values) and names
 * a second value of its own; its instance sits in the middle of a result
 * row and has a non-default option.  Checked: the pooled values over the
 * rows added (frames without the feature left out), their keys with the
 * option suffix, the end of the list, init() seeing the geometry, the
 * JSON, XML and JSON-lines logs, a log without such values written as
 * before, and an engine of real metrics (none of them has one).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggregate.h"
#include "qmlog.h"
#include "unit.h"

typedef struct FakeState {
    int w;
    double sum, lowest;
    unsigned n;
} FakeState;

static int fake_init(void *state, const QmMetricConfig *cfg)
{
    FakeState *s = state;
    s->w = cfg->w;
    s->lowest = INFINITY;
    return 0;
}

/* fake_db = -20 log10(root distortion): pool the distortions */
static void fake_add(void *state, const double *v, const uint8_t *set)
{
    FakeState *s = state;
    if (!set[0])
        return;
    s->sum += pow(10.0, -v[0] / 20.0);
    s->lowest = v[0] < s->lowest ? v[0] : s->lowest;
    s->n++;
}

static const char *fake_value(const void *state, unsigned n, double *x)
{
    const FakeState *s = state;
    if (n == 0) {
        *x = -20.0 * log10(s->sum / s->n);
        return "fake_db";
    }
    if (n == 1) {
        *x = s->w == 64 ? s->lowest : NAN;  /* init() saw the width */
        return "fake_lowest";
    }
    return NULL;
}

static const QmPoolFuncs fake_pool = {
    sizeof(FakeState), fake_init, fake_add, fake_value,
};
static const char *const fake_features[] = { "fake_db", "fake_other", NULL };
static const QmOptionDesc fake_options[] = {
    { "fake_opt", "fo", "an option", 1, 0, 4, QM_OPT_IN_KEY },
    { NULL },
};
static const QmMetricDesc fake = {
    .name = "fake",
    .display = "fake",
    .features = fake_features,
    .options = fake_options,
    .pool = &fake_pool,
};

/* A log of one frame with the given pooled values of the metric's own. */
static char *write_log(QmLogFormat fmt, unsigned n_agg)
{
    static const char *const names[] = { "fake_db_fo_2" };
    char path[] = "/tmp/aggregate_test.XXXXXX";
    int fd = mkstemp(path);
    double v = 30;
    uint8_t present = 1;
    char *err = NULL;
    QmPool pool;
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    QmLog *l = qm_log_open(path, fmt, 1, names, 64, 48, &err);
    CHECK(l != NULL, "open: %s", err ? err : "?");
    if (!l)
        return strdup("");
    qm_pool_init(&pool);
    qm_pool_add(&pool, v);
    CHECK(qm_log_frame(l, 0, &v, &present) == 0, "frame");
    if (n_agg > 0)
        CHECK(qm_log_aggregate(l, "fake_db_fo_2", 25.5) == 0, "aggregate");
    if (n_agg > 1)
        CHECK(qm_log_aggregate(l, "fake_lowest_fo_2", 20) == 0, "aggregate");
    CHECK(qm_log_close(l, &pool, QM_POOL_MEAN, 1.0) == 0, "close");
    qm_pool_clear(&pool);
    char *s = unit_slurp(path);
    unlink(path);
    return s;
}

int main(void)
{
    /* the fake instance at features 3 and 4 of a six-feature row */
    QmPlan plan;
    memset(&plan, 0, sizeof(plan));
    plan.ninst = 1;
    plan.inst[0].d = &fake;
    plan.inst[0].opt.v[0] = 2;
    plan.inst[0].base = 3;
    plan.inst[0].nf = 2;
    plan.nfeat = 6;

    QmAggregates *a = NULL;
    CHECK(qm_aggregates_open(&a, &plan, 64, 48, 8, QM_CHROMA_420) == 0 && a, "open");
    const double rows[3][6] = {
        { 0, 0, 0, 20, 7, 0 },
        { 0, 0, 0, 999, 7, 0 },  /* fake_db absent: left out */
        { 0, 0, 0, 40, 7, 0 },
    };
    const uint8_t set[3][6] = {
        { 1, 1, 1, 1, 1, 1 },
        { 1, 1, 1, 0, 1, 1 },
        { 1, 1, 1, 1, 1, 1 },
    };
    for (int i = 0; i < 3; i++)
        qm_aggregates_add(a, rows[i], set[i]);
    double x = 0;
    const char *k = qm_aggregates_get(a, 0, &x);
    /* (10^-1 + 10^-2) / 2 = 0.055: 25.19 dB, not the mean 30 of the dB values */
    const double want = -20.0 * log10(0.055);
    CHECK(k && !strcmp(k, "fake_db_fo_2"), "first key: %s", k ? k : "(none)");
    CHECK(fabs(x - want) < 1e-12, "pooled %.17g, expected %.17g", x, want);
    k = qm_aggregates_get(a, 1, &x);
    CHECK(k && !strcmp(k, "fake_lowest_fo_2"), "second key: %s", k ? k : "(none)");
    CHECK(x == 20, "lowest %g (init() saw the geometry?)", x);
    CHECK(qm_aggregates_get(a, 2, &x) == NULL, "two values only");
    qm_aggregates_free(a);

    /* the logs */
    char *s = write_log(QM_LOG_FORMAT_JSON, 2);
    CHECK(strstr(s, "\"aggregate_metrics\": {\n    \"fake_db_fo_2\": 25.500000,\n"
                    "    \"fake_lowest_fo_2\": 20.000000\n  }\n}\n") != NULL,
          "JSON aggregate_metrics:\n%s", s);
    free(s);
    s = write_log(QM_LOG_FORMAT_JSON, 0);
    CHECK(strstr(s, "\"aggregate_metrics\": {}\n}\n") != NULL, "JSON without:\n%s", s);
    free(s);
    s = write_log(QM_LOG_FORMAT_XML, 1);
    CHECK(strstr(s, "</pooled_metrics>\n  <aggregate_metrics fake_db_fo_2=\"25.500000\" />\n"
                    "  <fyi") != NULL, "XML aggregate_metrics:\n%s", s);
    free(s);
    s = write_log(QM_LOG_FORMAT_XML, 0);
    CHECK(strstr(s, "aggregate_metrics") == NULL, "XML without:\n%s", s);
    free(s);
    s = write_log(QM_LOG_FORMAT_JSONL, 1);
    CHECK(strstr(s, "}},\"aggregate_metrics\":{\"fake_db_fo_2\":25.500000}}\n") != NULL,
          "JSON lines aggregate_metrics:\n%s", s);
    free(s);

    /* an engine of real metrics: none pools on its own */
    QmSettings st;
    qm_settings_default(&st, 64, 48, 8, QM_CHROMA_420);
    st.metrics = "psnr,float_ssim";
    QmEngine *e = NULL;
    char *msg = NULL;
    CHECK(qm_engine_open(&e, &st, &msg) == 0, "engine: %s", msg ? msg : "?");
    free(msg);
    if (e) {
        QmAggregates *none = qm_aggregates_new(e);
        CHECK(none && !qm_aggregates_get(none, 0, &x), "no pooled value of their own");
        qm_aggregates_free(none);
        qm_engine_close(&e);
    }
    if (failures)
        return 1;
    printf("aggregate: ok\n");
    return 0;
}
