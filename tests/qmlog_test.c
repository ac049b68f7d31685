/* gst-qmetric: core/qmlog.c under hostile feature names and full disks.
 * Every name is written escaped for its format (exact bytes checked), and
 * a log that cannot be written is refused at open (/dev/full).
 *
 * Metric-defined pooled values (core/aggregate.c, QmMetricDesc.aggregate)
 * with XPSNR's: FFmpeg's closing value from the square roots of the
 * frames' weighted SSE (not the mean of their dB values), the mean of the
 * values (inf) when those roots sum to less than the frame count, every
 * format's place for it, and logs of metrics without one left as they
 * were ("aggregate_metrics": {}). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggregate.h"
#include "qmlog.h"
#include "unit.h"
#include "xpsnr.h"

/* quote, backslash, comma, markup, a control character, a byte that is not
 * UTF-8, and a name that starts with a digit */
static const char *const names[] = {
    "a\"b\\c", "x,y<z>&'", "tab\there", "bad\xff", "9lives",
};
#define N (sizeof(names) / sizeof(names[0]))

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *s = calloc(1, 1 << 16);
    if (f && s)
        s[fread(s, 1, (1 << 16) - 1, f)] = 0;
    if (f)
        fclose(f);
    return s;
}

static char *write_log(QmLogFormat fmt)
{
    char path[] = "/tmp/qmlog_test.XXXXXX";
    int fd = mkstemp(path);
    double v[N] = { 1, 2, 3, 4, 5 };
    uint8_t present[N] = { 1, 1, 1, 1, 1 };
    char *err = NULL, *s;
    QmPool pools[N];
    QmLog *l;

    CHECK(fd >= 0, "mkstemp");
    close(fd);
    l = qm_log_open(path, fmt, N, names, 8, 8, &err);
    CHECK(l != NULL, "open: %s", err ? err : "?");
    if (!l)
        return strdup("");
    for (unsigned i = 0; i < N; i++) {
        qm_pool_init(&pools[i]);
        qm_pool_add(&pools[i], v[i]);
    }
    CHECK(qm_log_frame(l, 0, v, present) == 0, "frame");
    CHECK(qm_log_close(l, pools, QM_POOL_MEAN, 1.0) == 0, "close");
    for (unsigned i = 0; i < N; i++)
        qm_pool_clear(&pools[i]);
    s = slurp(path);
    unlink(path);
    return s;
}

#define W 64
#define H 48
#define BPC 10

/* Wc Hc peak^2 of plane p of a 64x48 10-bit 4:2:0 picture */
static uint64_t num(int p)
{
    return (p ? 32ull * 24 : (uint64_t)W * H) * 1023ull * 1023ull;
}

/* The log of frames whose planes have these weighted SSE (wsse[f][p]) */
static char *log_of(QmLogFormat fmt, int nfr, const uint64_t (*wsse)[3], const char *const *names,
                    unsigned n)
{
    char path[] = "/tmp/aggregate_test.XXXXXX";
    int fd = mkstemp(path);
    char *err = NULL;
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    QmLog *l = qm_log_open(path, fmt, n, names, W, H, &err);
    CHECK(l != NULL, "open: %s", err ? err : "?");
    if (!l)
        return strdup("");
    qm_log_set_aggregates(l, qm_aggregates_new(n, names, W, H, BPC, QM_CHROMA_420));
    for (int f = 0; f < nfr; f++) {
        double v[4];
        uint8_t set[4] = { 1, 1, 1, 1 };
        for (unsigned i = 0; i < n; i++)
            v[i] = i < 3 ? qm_xpsnr_db(wsse[f][i], num((int)i)) : 40.0 + f;
        qm_log_frame(l, (uint64_t)f, v, set);
    }
    CHECK(qm_log_close(l, NULL, 0, 1.0) == 0, "close");
    char *s = slurp(path);
    unlink(path);
    return s;
}

/* FFmpeg's closing value of plane p: 10 log10(num / (S / N)^2) */
static double pooled(int nfr, const uint64_t (*wsse)[3], int p)
{
    double s = 0;
    for (int f = 0; f < nfr; f++)
        s += sqrt((double)wsse[f][p]);
    const double d = s / nfr;
    return 10.0 * log10((double)num(p) / (d * d));
}

static void check_aggregates(void)
{
    static const char *const xnames[] = { "xpsnr_y", "xpsnr_u", "xpsnr_v", "psnr_y" };
    /* large and small distortions: the mean of the dB values is far from
     * FFmpeg's value */
    static const uint64_t wsse[3][3] = {
        { 1334334582ull, 9, 123456789ull },
        { 4, 1000000ull, 2 },
        { 77777ull, 1, 0 },
    };
    char want[128], *s;

    s = log_of(QM_LOG_FORMAT_JSON, 3, wsse, xnames, 4);
    for (int p = 0; p < 3; p++) {
        double mean_db = 0;
        for (int f = 0; f < 3; f++)
            mean_db += qm_xpsnr_db(wsse[f][p], num(p)) / 3;
        snprintf(want, sizeof(want), "\"%s\": %.6f", xnames[p], pooled(3, wsse, p));
        if (isinf(mean_db)) {
            /* plane V has a frame of WSSE 0 but its roots sum past 3 */
            CHECK(strstr(s, want), "json aggregate %s (not %g):\n%s", want, mean_db, s);
        } else {
            CHECK(strstr(s, want) && fabs(pooled(3, wsse, p) - mean_db) > 1,
                  "json aggregate %s (mean of dB %g):\n%s", want, mean_db, s);
        }
    }
    CHECK(strstr(s, "\"aggregate_metrics\": {\n    \"xpsnr_y\": "), "json layout:\n%s", s);
    CHECK(!strstr(strstr(s, "\"aggregate_metrics\""), "\"psnr_y\""),
          "psnr has no aggregate:\n%s", s);
    free(s);

    s = log_of(QM_LOG_FORMAT_XML, 3, wsse, xnames, 4);
    snprintf(want, sizeof(want), "<aggregate_metrics xpsnr_y=\"%.6f\" xpsnr_u=\"%.6f\" "
             "xpsnr_v=\"%.6f\" />", pooled(3, wsse, 0), pooled(3, wsse, 1), pooled(3, wsse, 2));
    CHECK(strstr(s, want), "xml: %s\n%s", want, s);
    free(s);

    s = log_of(QM_LOG_FORMAT_JSONL, 3, wsse, xnames, 4);
    snprintf(want, sizeof(want), ",\"aggregate_metrics\":{\"xpsnr_y\":%.6f,", pooled(3, wsse, 0));
    CHECK(strstr(s, want), "jsonl: %s\n%s", want, s);
    free(s);

    /* identical planes (WSSE 0), and roots summing to less than the frame
     * count: the mean of the values, inf, written as null */
    static const uint64_t zero[2][3] = { { 0, 0, 1 }, { 0, 1, 0 } };
    s = log_of(QM_LOG_FORMAT_JSON, 2, zero, xnames, 3);
    CHECK(strstr(s, "\"xpsnr_y\": null") && strstr(s, "\"xpsnr_u\": null") &&
              strstr(s, "\"xpsnr_v\": null"), "identical: null:\n%s", s);
    free(s);
    static const uint64_t two[2][3] = { { 0, 4, 9 }, { 9, 0, 1 } };
    s = log_of(QM_LOG_FORMAT_JSON, 2, two, xnames, 3);
    snprintf(want, sizeof(want), "\"xpsnr_y\": %.6f", pooled(2, two, 0));
    CHECK(strstr(s, want), "roots 3 >= 2 frames: %s\n%s", want, s);
    free(s);

    /* no metric with an aggregate: the log as before */
    s = log_of(QM_LOG_FORMAT_JSON, 1, wsse, xnames + 3, 1);
    CHECK(strstr(s, "\"aggregate_metrics\": {}\n}\n"), "empty aggregate:\n%s", s);
    free(s);
    s = log_of(QM_LOG_FORMAT_XML, 1, wsse, xnames + 3, 1);
    CHECK(!strstr(s, "aggregate_metrics"), "xml without aggregates:\n%s", s);
    free(s);

}

int main(void)
{
    char *s, *err = NULL;

    s = write_log(QM_LOG_FORMAT_JSON);
    CHECK(strstr(s, "\"a\\\"b\\\\c\": 1.000000"), "json quote/backslash:\n%s", s);
    CHECK(strstr(s, "\"x,y<z>&'\": 2.000000"), "json markup kept:\n%s", s);
    CHECK(strstr(s, "\"tab\\u0009here\": 3.000000"), "json control:\n%s", s);
    CHECK(strstr(s, "\"bad\\ufffd\": 4.000000"), "json non-UTF-8:\n%s", s);
    CHECK(strstr(s, "\"bad\\ufffd\": {"), "json pooled name:\n%s", s);
    free(s);

    s = write_log(QM_LOG_FORMAT_CSV);
    CHECK(!strcmp(s, "Frame,\"a\"\"b\\c\",\"x,y<z>&'\",tab\there,bad\xEF\xBF\xBD,"
                     "9lives\n0,1.000000,2.000000,3.000000,4.000000,5.000000\n"),
          "csv header:\n%s", s);
    free(s);

    s = write_log(QM_LOG_FORMAT_XML);
    CHECK(strstr(s, "<frame frameNum=\"0\" a_b_c=\"1.000000\" x_y_z___=\"2.000000\" "
                    "tab_here=\"3.000000\" bad_=\"4.000000\" _9lives=\"5.000000\" />"),
          "xml attribute names:\n%s", s);
    CHECK(strstr(s, "<metric name=\"a&quot;b\\c\" mean=\"1.000000\" />"),
          "xml value quote:\n%s", s);
    CHECK(strstr(s, "<metric name=\"x,y&lt;z&gt;&amp;&apos;\""), "xml markup:\n%s", s);
    CHECK(strstr(s, "<metric name=\"tab&#9;here\""), "xml tab:\n%s", s);
    CHECK(strstr(s, "<metric name=\"bad\xEF\xBF\xBD\""), "xml non-UTF-8:\n%s", s);
    free(s);

    /* a full disk: refused at open, with the reason */
    if (access("/dev/full", W_OK) == 0) {
        QmLog *l = qm_log_open("/dev/full", QM_LOG_FORMAT_JSON, N, names, 8, 8, &err);
        CHECK(l == NULL, "/dev/full accepted");
        CHECK(err && !strcmp(err, "cannot write log file \"/dev/full\": "
                                  "No space left on device"),
              "error: %s", err ? err : "(none)");
        free(err);
    }

    check_aggregates();

    if (failures)
        printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
