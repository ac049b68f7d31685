/* gst-qmetric: gst/qmetric/qmwindow.c without GStreamer: parsing, window
 * ends, events found ahead of their pairs, the frame cap, and the JSON-lines
 * window record of core/qmlog.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qmlog.h"
#include "qmwindow.h"
#include "unit.h"

#define MS 1000000ull

typedef struct {
    unsigned n;
    QmWindowStats st[16];
    double mean[16];
    uint64_t frames[16];
} Rec;

static void emit(void *opaque, QmWindowStats *st)
{
    Rec *r = opaque;
    if (r->n < 16) {
        r->st[r->n] = *st;
        r->frames[r->n] = st->n_features ? st->pools[0].n : 0;
        r->mean[r->n] = st->n_features && st->pools[0].n ?
            qm_pool_mean(&st->pools[0]) : -1;
        r->st[r->n].pools = NULL;   /* not valid after the callback */
    }
    r->n++;
}

static QmWindow *make(const char *spec, Rec *r)
{
    QmWindowSpec s;
    char err[256];
    memset(r, 0, sizeof(*r));
    CHECK(qm_window_parse(spec, &s, err, sizeof(err)) == 0, "%s: %s", spec, err);
    return qm_window_new(&s, emit, r);
}

static void pair(QmWindow *w, uint64_t i, double v)
{
    uint8_t present = 1;
    qm_window_pair(w, i * 40 * MS, 40 * MS, 0, 1, &v, &present);
}

static void test_parse(void)
{
    static const struct { const char *s; int ok; QmWindowKind kind; uint64_t v; } cases[] = {
        { "", 1, QM_WINDOW_OFF, 0 },
        { "none", 1, QM_WINDOW_OFF, 0 },
        { "1s", 1, QM_WINDOW_DURATION, 1000 * MS },
        { "500ms", 1, QM_WINDOW_DURATION, 500 * MS },
        { "2.5s", 1, QM_WINDOW_DURATION, 2500 * MS },
        { "1min", 1, QM_WINDOW_DURATION, 60000 * MS },
        { "1500us", 1, QM_WINDOW_DURATION, 1500000 },
        { "120frames", 1, QM_WINDOW_FRAMES, 120 },
        { "keyframe", 1, QM_WINDOW_KEYFRAME, 0 },
        { "0s", 0, 0, 0 },
        { "-1s", 0, 0, 0 },
        { "100us", 0, 0, 0 },          /* below 1 ms */
        { "25h", 0, 0, 0 },            /* above a day */
        { "1 s", 0, 0, 0 },
        { "1sec", 0, 0, 0 },
        { "0frames", 0, 0, 0 },
        { "36001frames", 0, 0, 0 },    /* above QM_WINDOW_MAX_FRAMES */
        { "frames", 0, 0, 0 },
        { "nan s", 0, 0, 0 },
        { "inf", 0, 0, 0 },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        QmWindowSpec s;
        char err[256] = "";
        int ok = qm_window_parse(cases[i].s, &s, err, sizeof(err)) == 0;
        CHECK(ok == cases[i].ok, "\"%s\": parsed %d", cases[i].s, ok);
        if (!ok) {
            CHECK(strstr(err, cases[i].s) != NULL, "\"%s\": error \"%s\" does not "
                  "name it", cases[i].s, err);
            continue;
        }
        CHECK(s.kind == cases[i].kind, "\"%s\": kind %d", cases[i].s, s.kind);
        uint64_t v = s.kind == QM_WINDOW_FRAMES ? s.frames : s.duration_ns;
        CHECK(v == cases[i].v, "\"%s\": %llu", cases[i].s, (unsigned long long)v);
    }
}

/* 200 ms windows of 40 ms frames; values 0, 1, 2... */
static void test_duration(void)
{
    Rec r;
    QmWindow *w = make("200ms", &r);
    for (uint64_t i = 0; i < 12; i++)
        pair(w, i, (double)i);
    /* windows 0-4 and 5-9 ended with their last frame; 10-11 wait */
    CHECK(r.n == 2, "%u windows", r.n);
    qm_window_finish(w, "eos");
    CHECK(r.n == 3, "%u windows", r.n);
    CHECK(r.st[0].pairs == 5 && r.mean[0] == 2.0, "w0 %llu %f",
          (unsigned long long)r.st[0].pairs, r.mean[0]);
    CHECK(r.st[1].pairs == 5 && r.mean[1] == 7.0, "w1 %f", r.mean[1]);
    CHECK(r.st[2].pairs == 2 && r.mean[2] == 10.5, "w2 %f", r.mean[2]);
    CHECK(r.st[2].start_rt == 400 * MS && r.st[2].end_rt == 600 * MS, "w2 span");
    CHECK(!strcmp(r.st[1].reason, "duration") && !strcmp(r.st[2].reason, "eos"),
          "reasons %s %s", r.st[1].reason, r.st[2].reason);
    qm_window_free(w);

    /* a gap: frames 0-1, then 12: the empty windows between are not
     * reported, the next one starts at its aligned boundary */
    w = make("200ms", &r);
    pair(w, 0, 1);
    pair(w, 1, 1);
    pair(w, 12, 3);
    qm_window_finish(w, "eos");
    CHECK(r.n == 2, "%u windows", r.n);
    CHECK(r.st[1].start_rt == 400 * MS && r.st[1].index == 1, "after gap");
    qm_window_free(w);

    /* running time going back (a new segment) ends the window */
    w = make("1s", &r);
    pair(w, 30, 1);      /* 1.2 s */
    pair(w, 2, 1);       /* 80 ms */
    qm_window_finish(w, "eos");
    CHECK(r.n == 2 && !strcmp(r.st[0].reason, "discont"), "discont: %u", r.n);
    qm_window_free(w);
}

/* Unmatched frames found before the pairs in front of them are scored
 * join the window of their running time. */
static void test_pending_events(void)
{
    Rec r;
    QmWindow *w = make("200ms", &r);
    pair(w, 0, 1);
    pair(w, 1, 1);
    /* reference 3 and 6 dropped while pairs 2, 4, 5 are still scored */
    qm_window_event(w, 3 * 40 * MS, QM_WINDOW_UNMATCHED_REF, 0, 0);
    qm_window_event(w, 6 * 40 * MS, QM_WINDOW_UNMATCHED_REF, 0, 0);
    pair(w, 2, 1);
    pair(w, 4, 1);       /* ends window 0 (its end is 200 ms) */
    CHECK(r.n == 1, "%u windows", r.n);
    CHECK(r.st[0].pairs == 4 && r.st[0].unmatched_ref == 1, "w0 %llu %llu",
          (unsigned long long)r.st[0].pairs, (unsigned long long)r.st[0].unmatched_ref);
    pair(w, 5, 1);
    pair(w, 7, 1);
    /* in order (nothing is being scored): it may end a window at once */
    qm_window_event(w, 10 * 40 * MS, QM_WINDOW_UNMATCHED_DIST, 0, 1);
    CHECK(r.n == 2, "%u windows", r.n);
    CHECK(r.st[1].pairs == 2 && r.st[1].unmatched_ref == 1, "w1");
    qm_window_event(w, 11 * 40 * MS, QM_WINDOW_UNREADABLE, 0, 1);
    qm_window_finish(w, "eos");
    CHECK(r.n == 3 && r.st[2].pairs == 0 && r.st[2].unmatched_dist == 1 &&
          r.st[2].unreadable == 1 && r.frames[2] == 0, "w2: events only");
    qm_window_free(w);

    /* a stream of unmatched frames only (no partner ever) still produces
     * windows, through the bound on waiting events */
    w = make("200ms", &r);
    for (uint64_t i = 0; i < QM_WINDOW_MAX_PENDING + 10; i++)
        qm_window_event(w, i * 40 * MS, QM_WINDOW_UNMATCHED_REF, 0, 0);
    CHECK(r.n == 1 && r.st[0].unmatched_ref == 5, "overflowing events: %u "
          "windows", r.n);
    /* at the end the waiting ones fill their own windows: 266 = 53 x 5 + 1 */
    qm_window_finish(w, "eos");
    CHECK(r.n == 54 && r.st[1].unmatched_ref == 5 && r.st[15].unmatched_ref == 5,
          "after finish: %u windows", r.n);
    qm_window_free(w);
}

/* 30 frames/s, 1 s windows, distorted frames 30-59 lost: the reference
 * frames 30-59 are unmatched and belong to the second window, whenever the
 * element finds them (before or after the pairs in front of them leave, in
 * order or not).  `lag`: how many pairs are still being scored when an
 * unmatched frame is found (0: it is found in order). */
#define RT30(i) ((i) * 1000 * MS / 30)

static void pair30(QmWindow *w, uint64_t i, int with_duration)
{
    uint8_t present = 1;
    double v = 1;
    qm_window_pair(w, RT30(i), with_duration ? RT30(i + 1) - RT30(i) :
                   QM_WINDOW_TIME_NONE, 0, 1, &v, &present);
}

static void drops_across_boundary(unsigned lag, int with_duration)
{
    Rec r;
    QmWindow *w = make("1s", &r);
    uint64_t next_pair = 0;

    for (uint64_t i = 0; i < 90; i++) {
        /* the pairs that have left by the time frame i is decided */
        while (next_pair + lag <= i && next_pair < 90) {
            if (next_pair < 30 || next_pair >= 60)
                pair30(w, next_pair, with_duration);
            next_pair++;
        }
        if (i >= 30 && i < 60)
            qm_window_event(w, RT30(i), QM_WINDOW_UNMATCHED_REF, 0,
                            next_pair >= 30 && lag == 0);
    }
    for (; next_pair < 90; next_pair++)
        if (next_pair >= 60)
            pair30(w, next_pair, with_duration);
    qm_window_finish(w, "eos");
    CHECK(r.n == 3, "lag %u, durations %d: %u windows", lag, with_duration, r.n);
    for (unsigned k = 0; k < 3 && k < r.n; k++) {
        CHECK(r.st[k].start_rt == k * 1000 * MS &&
              r.st[k].end_rt == (k + 1) * 1000 * MS, "lag %u: window %u spans "
              "%llu-%llu", lag, k, (unsigned long long)r.st[k].start_rt,
              (unsigned long long)r.st[k].end_rt);
        CHECK(r.st[k].pairs == (k == 1 ? 0 : 30) &&
              r.st[k].unmatched_ref == (k == 1 ? 30 : 0),
              "lag %u, durations %d: window %u has %llu pairs and %llu unmatched "
              "reference frames", lag, with_duration, k,
              (unsigned long long)r.st[k].pairs,
              (unsigned long long)r.st[k].unmatched_ref);
    }
    qm_window_free(w);
}

static void test_drops_across_boundary(void)
{
    static const unsigned lags[] = { 0, 1, 2, 8, 31, 40 };
    for (size_t i = 0; i < sizeof(lags) / sizeof(lags[0]); i++) {
        drops_across_boundary(lags[i], 1);
        drops_across_boundary(lags[i], 0);
    }

    /* events waiting across several empty slices: each slice that holds
     * one is a window of its own, in order */
    Rec r;
    QmWindow *w = make("200ms", &r);
    pair(w, 0, 1);
    for (uint64_t i = 1; i < 17; i++)
        qm_window_event(w, i * 40 * MS, QM_WINDOW_UNMATCHED_DIST, 0, 0);
    pair(w, 17, 1);
    qm_window_finish(w, "eos");
    static const uint64_t un[] = { 4, 5, 5, 2 };
    CHECK(r.n == 4, "%u windows", r.n);
    for (unsigned k = 0; k < 4 && k < r.n; k++)
        CHECK(r.st[k].start_rt == k * 200 * MS && r.st[k].unmatched_dist == un[k] &&
              r.st[k].pairs == (k == 0 || k == 3), "slice %u: %llu unmatched, %llu "
              "pairs", k, (unsigned long long)r.st[k].unmatched_dist,
              (unsigned long long)r.st[k].pairs);
    qm_window_free(w);
}

static void test_frames_keyframe_cap(void)
{
    Rec r;
    QmWindow *w = make("4frames", &r);
    for (uint64_t i = 0; i < 10; i++)
        pair(w, i, 1);
    CHECK(r.n == 2, "%u windows", r.n);
    qm_window_finish(w, "eos");
    CHECK(r.n == 3 && r.st[2].pairs == 2, "last of 2");
    CHECK(r.st[1].start_rt == 160 * MS && r.st[1].end_rt == 320 * MS, "span");
    qm_window_free(w);

    w = make("keyframe", &r);
    uint8_t present = 1;
    double v = 1;
    static const int key[] = { 1, 0, 0, 1, 0, 1, 1 };
    for (uint64_t i = 0; i < 7; i++)
        qm_window_pair(w, i * 40 * MS, 40 * MS, key[i], 1, &v, &present);
    qm_window_finish(w, "eos");
    CHECK(r.n == 4 && r.st[0].pairs == 3 && r.st[1].pairs == 2 &&
          r.st[2].pairs == 1 && r.st[3].pairs == 1, "keyframe: %u windows", r.n);
    qm_window_free(w);

    /* a day-long window holds at most QM_WINDOW_MAX_FRAMES pairs */
    w = make("24h", &r);
    for (uint64_t i = 0; i < QM_WINDOW_MAX_FRAMES + 5; i++)
        pair(w, i, 1);
    qm_window_finish(w, "eos");
    CHECK(r.n == 2 && r.st[0].pairs == QM_WINDOW_MAX_FRAMES &&
          !strcmp(r.st[0].reason, "cap") && r.st[1].pairs == 5, "cap");
    qm_window_free(w);

    /* pairs skipped to keep up count as pairs and as skipped, unscored */
    w = make("3frames", &r);
    pair(w, 0, 2);
    qm_window_pair(w, 40 * MS, 40 * MS, QM_WINDOW_PAIR_SKIPPED, 1, NULL, NULL);
    qm_window_pair(w, 80 * MS, 40 * MS, QM_WINDOW_PAIR_SKIPPED, 1, NULL, NULL);
    CHECK(r.n == 1 && r.st[0].pairs == 3 && r.st[0].skipped == 2 &&
          r.frames[0] == 1, "skipped pairs: %llu", (unsigned long long)r.st[0].skipped);
    qm_window_free(w);

    /* unscored pairs (subsample) count as pairs, not as frames of a feature */
    w = make("2frames", &r);
    pair(w, 0, 4);
    qm_window_pair(w, 40 * MS, 40 * MS, 0, 1, NULL, NULL);
    CHECK(r.n == 1 && r.st[0].pairs == 2 && r.frames[0] == 1 && r.mean[0] == 4,
          "subsampled pair");
    qm_window_free(w);
}

static void test_jsonl_record(void)
{
    char path[] = "/tmp/window_test-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    close(fd);
    const char *names[2] = { "vmaf", "psnr_y" };
    char *err = NULL;
    QmLog *l = qm_log_open(path, QM_LOG_FORMAT_JSONL, 2, names, 64, 48, &err);
    CHECK(l != NULL, "open: %s", err ? err : "");
    if (!l)
        return;
    QmPool pools[2];
    qm_pool_init(&pools[0]);
    qm_pool_init(&pools[1]);
    qm_pool_add(&pools[0], 90);
    qm_pool_add(&pools[0], 80);
    QmLogWindow lw = {
        .index = 3, .start_rt = 3000 * MS, .end_rt = UINT64_MAX,
        .reason = "eos", .pairs = 2, .unmatched_ref = 1, .unmatched_dist = 0,
        .unreadable = 0, .n = 2, .pools = pools,
        .methods = QM_POOL_MIN | QM_POOL_MEAN | QM_POOL_P5,
    };
    CHECK(qm_log_window(l, &lw) == 0, "window");
    CHECK(qm_log_close(l, NULL, 0, 0) == 0, "close");
    char buf[1024] = "";
    FILE *f = fopen(path, "r");
    char *line = NULL;
    for (int i = 0; f && i < 2; i++)
        line = fgets(buf, sizeof(buf), f);
    if (f)
        fclose(f);
    remove(path);
    /* psnr_y has no frame in the window: left out; p5 of {80, 90} is
     * 80 + 0.05 * 10 */
    CHECK(line && !strcmp(buf, "{\"type\":\"window\",\"window\":3,"
          "\"start_running_time\":3000000000,\"end_running_time\":null,"
          "\"reason\":\"eos\",\"pairs\":2,\"unmatched_reference\":1,"
          "\"unmatched_distorted\":0,\"unreadable\":0,\"skipped\":0,"
          "\"pooled_metrics\":"
          "{\"vmaf\":{\"frames\":2,\"min\":80.000000,\"mean\":85.000000,"
          "\"p5\":80.500000}}}\n"), "record: %s", buf);
    qm_pool_clear(&pools[0]);
    qm_pool_clear(&pools[1]);
}

int main(void)
{
    test_parse();
    test_duration();
    test_pending_events();
    test_drops_across_boundary();
    test_frames_keyframe_cap();
    test_jsonl_record();
    printf("%s (%d failed checks)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
