/* qmetric-bench-probes' bookkeeping without a pipeline: the search for the
 * largest probe count kept (bench/probes-search.c) against every threshold
 * in a range, and the stall records (bench/probes-stall.c): causes, counts,
 * the worst kept, the JSON. */
#include <stdlib.h>
#include <string.h>

#include "probes.h"
#include "unit.h"

/* Run a search against "kept up to t probes"; returns the runs made. */
static int drive(PbSearch *s, int t, int *order, int max)
{
    int runs = 0, n;
    while ((n = pb_search_next(s)) > 0 && runs < max) {
        order[runs++] = n;
        pb_search_record(s, n, n <= t);
    }
    return runs;
}

static void test_bisect(void)
{
    const int steps[] = { 1, 2, 4 };
    for (size_t k = 0; k < G_N_ELEMENTS(steps); k++) {
        const int lo = 8, hi = 64, step = steps[k];
        for (int t = 0; t <= 70; t++) {
            PbSearch s;
            int order[64];
            pb_search_bisect(&s, lo, hi, step);
            const int runs = drive(&s, t, order, 64);
            /* every count run lies in the range, none twice */
            for (int i = 0; i < runs; i++) {
                CHECK(order[i] >= lo && order[i] <= hi, "step %d, t %d: ran %d", step, t,
                      order[i]);
                for (int j = 0; j < i; j++)
                    CHECK(order[i] != order[j], "step %d, t %d: %d twice", step, t, order[i]);
            }
            /* log2 of the range's size, and a little */
            CHECK(runs <= 7, "step %d, t %d: %d runs", step, t, runs);
            const int good = s.good, bad = s.bad ? s.bad : hi + 1;
            const int want = t < lo ? 0 : t > hi ? hi : t;
            /* the bracket holds the answer and is at most step wide */
            if (t < lo) {
                /* nothing kept: measured at lo itself */
                CHECK(good == 0 && s.bad == lo, "step %d, t %d: good %d bad %d", step, t, good,
                      s.bad);
            } else {
                CHECK(good <= want && want < bad && bad - good <= step,
                      "step %d, t %d: bracket (%d, %d)", step, t, good, bad);
                /* the ends are measured: lo kept is found, all kept is hi */
                CHECK(good >= lo, "step %d, t %d: lo kept but found %d", step, t, good);
                if (t >= hi)
                    CHECK(good == hi && !s.bad, "step %d, t %d: all kept, found %d", step, t,
                          good);
                if (step == 1)
                    CHECK(good == want, "t %d: found %d", t, good);
            }
        }
    }
    /* a single count */
    PbSearch s;
    int order[4];
    pb_search_bisect(&s, 5, 5, 1);
    CHECK(drive(&s, 9, order, 4) == 1 && order[0] == 5 && s.good == 5 && !s.bad,
          "bisect 5:5, kept: good %d bad %d", s.good, s.bad);
    pb_search_bisect(&s, 5, 5, 1);
    CHECK(drive(&s, 2, order, 4) == 1 && s.good == 0 && s.bad == 5,
          "bisect 5:5, not kept: good %d bad %d", s.good, s.bad);
}

static void test_sweep(void)
{
    const int list[] = { 8, 16, 24, 32, 48 };
    PbSearch s;
    int order[8];
    pb_search_sweep(&s, list, 5, false);
    int runs = drive(&s, 20, order, 8);
    CHECK(runs == 3 && s.good == 16 && s.bad == 24, "sweep stops after 24: %d runs, %d/%d",
          runs, s.good, s.bad);
    pb_search_sweep(&s, list, 5, true);
    runs = drive(&s, 20, order, 8);
    CHECK(runs == 5 && s.good == 16 && s.bad == 24, "keep going: %d runs, %d/%d", runs,
          s.good, s.bad);
    /* a list run in its own order: repeats (five runs of 48) all run */
    const int same[] = { 48, 48, 48 };
    pb_search_sweep(&s, same, 3, true);
    runs = drive(&s, 0, order, 8);
    CHECK(runs == 3 && s.good == 0 && s.bad == 48, "repeats: %d runs", runs);
}

static void test_stalls(void)
{
    PbStalls st;
    pb_stalls_init(&st, 10, 2);
    /* causes: the longest known segment; nothing known, unknown */
    const double segs[][PB_N_SEGMENTS] = {
        { 1, 2, 30, 4, 0 },     /* submit */
        { 12, -1, -1, -1, -1 }, /* element thread, the rest unknown */
        { 0, 0, 0, 25, 1 },     /* device */
        { -1, -1, -1, -1, -1 }, /* unknown */
    };
    const PbWait want[] = { PB_WAIT_SUBMIT, PB_WAIT_ELEMENT, PB_WAIT_DEVICE, PB_WAIT_UNKNOWN };
    for (int i = 0; i < 4; i++) {
        PbStall s = { .probe = i, .frame = 10 * i, .total_ms = 20 + i };
        memcpy(s.seg_ms, segs[i], sizeof(s.seg_ms));
        pb_stall_ready(&st, &s);
        CHECK(s.cause == want[i], "stall %d: cause %s", i, pb_wait_name(s.cause));
    }
    CHECK(st.ready_over == 4 && st.by_cause[PB_WAIT_SUBMIT] == 1 &&
          st.by_cause[PB_WAIT_UNKNOWN] == 1, "counts by cause");
    /* the two worst kept */
    CHECK(st.n_ready == 2 && ((st.ready[0].frame == 30 && st.ready[1].frame == 20) ||
                              (st.ready[0].frame == 20 && st.ready[1].frame == 30)),
          "the worst two kept: %d %d", st.ready[0].frame, st.ready[1].frame);
    PbStall a = { .probe = 1, .frame = 3, .side = 1, .decoded = true, .total_ms = 50,
                  .queued_ms = 45, .decode_ms = 5 };
    pb_stall_arrival(&st, &a);
    CHECK(st.arrival_over[1] == 1 && st.arrival_over[0] == 0 && st.n_arrival == 1,
          "arrival counts");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    pb_stalls_json(f, &st);
    fclose(f);
    /* worst first; unknown segments are null, not negative */
    CHECK(strstr(buf, "\"frame\": 30") && strstr(buf, "\"frame\": 30") < strstr(buf, "\"frame\": 20"),
          "worst first: %s", buf);
    CHECK(strstr(buf, "\"map_ms\": null") && !strstr(buf, "-1.000"), "nulls: %s", buf);
    CHECK(strstr(buf, "\"queued_ms\": 45.000") && strstr(buf, "\"side\": \"distorted\""),
          "arrival record: %s", buf);
    free(buf);
    pb_stalls_clear(&st);
}

int main(void)
{
    test_bisect();
    test_sweep();
    test_stalls();
    printf("%s (%d failures)\n", failures ? "FAIL" : "ok", failures);
    return failures ? 1 : 0;
}
