/* gst-qmetric: core/pair.c, the pairing decision, driven directly.
 *
 * A small simulator plays two inputs into bounded queues in arrival order,
 * asks qm_pair_decide() after every arrival until it waits, then ends both
 * inputs.  Every frame carries the id of the picture it shows; a pair is
 * true when both ids are equal.  Each case asserts that every pair is true
 * and the exact number of pairs and of unmatched frames per input. */
#include <stdlib.h>
#include <string.h>

#include "pair.h"
#include "unit.h"

#define MAXF 256
#define SEC 1000000000LL

typedef struct {
    QmPairFrame f;
    int id;          /* picture shown */
    int64_t arrive;  /* arrival order key */
} Frame;

typedef struct {
    Frame in[2][MAXF];
    int n[2];
} Script;

typedef struct {
    int pairs, false_pairs, unmatched[2];
    int pair_ref[MAXF], pair_dist[MAXF];   /* ids */
} Result;

static void add(Script *sc, int p, int64_t t, int64_t dur, int id)
{
    Frame *f = &sc->in[p][sc->n[p]++];

    f->f.t = t;
    f->f.dur = dur;
    f->f.offset = QM_PAIR_NO_OFFSET;
    f->f.discont = 0;
    f->id = id;
    f->arrive = t >= 0 ? t : sc->n[p];
}

/* Queues of at most cap frames; tolerance < 0: derived. */
static Result run(const Script *sc, size_t cap, int64_t tolerance)
{
    QmPairFrame q[2][MAXF];
    int qid[2][MAXF];
    size_t n[2] = { 0, 0 };
    int next[2] = { 0, 0 }, p, ended = 0, guard = 0;
    QmPairState st;
    Result res;

    memset(&res, 0, sizeof(res));
    qm_pair_reset(&st);
    while (!ended) {
        QmPairInput in;
        QmPairDecision d;

        /* the next arrival: the earlier of the two inputs' next frames
         * (reference first), when its queue has room */
        int can[2], pick = -1;
        for (p = 0; p < 2; p++)
            can[p] = next[p] < sc->n[p] && n[p] < cap;
        if (can[0] && can[1])
            pick = sc->in[0][next[0]].arrive <= sc->in[1][next[1]].arrive ?
                0 : 1;
        else if (can[0] || can[1])
            pick = can[0] ? 0 : 1;
        if (pick >= 0) {
            q[pick][n[pick]] = sc->in[pick][next[pick]].f;
            qid[pick][n[pick]++] = sc->in[pick][next[pick]++].id;
        }

        for (;;) {
            in.f[0] = q[0];
            in.f[1] = q[1];
            in.n[0] = n[0];
            in.n[1] = n[1];
            for (p = 0; p < 2; p++)
                in.done[p] = n[p] >= cap || next[p] >= sc->n[p];
            in.deadline = QM_PAIR_NO_DEADLINE;
            in.tolerance = tolerance;
            in.more[0] = in.more[1] = 0;    /* no deadline: never read */
            d = qm_pair_decide(&st, &in);
            if (d.action == QM_PAIR_WAIT)
                break;
            qm_pair_apply(&st, &in, &d);
            if (d.action == QM_PAIR_MATCH) {
                res.pair_ref[res.pairs] = qid[0][0];
                res.pair_dist[res.pairs] = qid[1][0];
                if (qid[0][0] != qid[1][0])
                    res.false_pairs++;
                res.pairs++;
            } else {
                res.unmatched[d.action == QM_PAIR_PASS_DIST]++;
            }
            for (p = 0; p < 2; p++) {
                if (d.action == QM_PAIR_MATCH ||
                    (p == 0) == (d.action == QM_PAIR_DROP_REF)) {
                    memmove(q[p], q[p] + 1, (n[p] - 1) * sizeof(q[p][0]));
                    memmove(qid[p], qid[p] + 1, (n[p] - 1) * sizeof(int));
                    n[p]--;
                }
            }
        }
        ended = pick < 0 && n[0] == 0 && n[1] == 0;
        /* both done and frames left: decide() must never wait */
        if (pick < 0 && !ended) {
            CHECK(0, "waited with both inputs done (%zu, %zu queued)",
                  n[0], n[1]);
            break;
        }
        if (++guard > 10 * MAXF) {
            CHECK(0, "no progress");
            break;
        }
    }
    return res;
}

static void expect(const char *name, Result r, int pairs, int uref,
                   int udist)
{
    CHECK(r.false_pairs == 0, "%s: %d false pairs", name, r.false_pairs);
    CHECK(r.pairs == pairs, "%s: %d pairs, expected %d", name, r.pairs,
          pairs);
    CHECK(r.unmatched[0] == uref, "%s: %d unmatched reference, expected %d",
          name, r.unmatched[0], uref);
    CHECK(r.unmatched[1] == udist, "%s: %d unmatched distorted, expected %d",
          name, r.unmatched[1], udist);
}

static int64_t at(int k, int rate)
{
    return (int64_t)k * SEC / rate;
}

/* One second of a source at rate_src; each input shows, at each of its
 * frame times, the source picture nearest in time (the earlier on a tie),
 * as videorate does. */
static void rates(Script *sc, int rate_r, int rate_d)
{
    int p, k, src = rate_r > rate_d ? rate_r : rate_d;
    int rate[2] = { rate_r, rate_d };

    memset(sc, 0, sizeof(*sc));
    for (p = 0; p < 2; p++) {
        for (k = 0; k < rate[p]; k++) {
            int64_t t = at(k, rate[p]);
            /* nearest source frame: floor and ceil candidates */
            int lo = (int)(t * src / SEC), id = lo;
            if (lo + 1 < src && at(lo + 1, src) - t < t - at(lo, src))
                id = lo + 1;
            add(sc, p, t, SEC / rate[p], id);
        }
    }
}

static void test_rates(void)
{
    static const struct {
        int r, d, pairs, uref, udist;
    } c[] = {
        { 25, 25, 25, 0, 0 },
        { 24, 12, 12, 12, 0 }, { 12, 24, 12, 0, 12 },
        { 60, 25, 25, 35, 0 }, { 25, 60, 25, 0, 35 },
        { 50, 30, 30, 20, 0 }, { 30, 50, 30, 0, 20 },
        { 30, 25, 25, 5, 0 }, { 25, 30, 25, 0, 5 },
    };
    Script sc;
    size_t i;
    char name[64];

    for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        rates(&sc, c[i].r, c[i].d);
        snprintf(name, sizeof(name), "%d vs %d fps", c[i].r, c[i].d);
        expect(name, run(&sc, 8, -1), c[i].pairs, c[i].uref, c[i].udist);
        /* a huge override never pairs a frame with a farther one */
        snprintf(name, sizeof(name), "%d vs %d fps, tolerance 1 s", c[i].r,
                 c[i].d);
        expect(name, run(&sc, 8, SEC), c[i].pairs, c[i].uref, c[i].udist);
        /* the smallest queue that can still look one frame ahead */
        snprintf(name, sizeof(name), "%d vs %d fps, queue 2", c[i].r, c[i].d);
        expect(name, run(&sc, 2, -1), c[i].pairs, c[i].uref, c[i].udist);
    }
}

/* 20 frames at 25 fps on each input, picture k at k * 40 ms. */
static void same_rate(Script *sc, const int *skip_r, const int *skip_d)
{
    int k, p;

    memset(sc, 0, sizeof(*sc));
    for (p = 0; p < 2; p++) {
        const int *skip = p ? skip_d : skip_r;
        for (k = 0; k < 20; k++) {
            int s, skipped = 0;
            for (s = 0; skip && skip[s] >= 0; s++)
                skipped |= skip[s] == k;
            if (!skipped)
                add(sc, p, at(k, 25), SEC / 25, k);
        }
    }
}

static void test_drops(void)
{
    static const int drop_d[] = { 3, 7, 8, -1 }, drop_r[] = { 12, -1 };
    Script sc;

    same_rate(&sc, drop_r, drop_d);
    expect("drops", run(&sc, 8, -1), 16, 3, 1);
    expect("drops, tolerance 1 s", run(&sc, 8, SEC), 16, 3, 1);
}

static void test_duplicates(void)
{
    Script sc;
    Frame f;

    same_rate(&sc, NULL, NULL);
    /* picture 5 twice on the distorted input: once with the same time, once
     * (as videorate repeats it) 20 ms later; insert both after frame 5 */
    memmove(&sc.in[1][8], &sc.in[1][6], 14 * sizeof(Frame));
    sc.n[1] += 2;
    f = sc.in[1][5];
    sc.in[1][6] = f;
    f.f.t += 20000000;
    f.arrive = f.f.t;
    sc.in[1][7] = f;
    expect("duplicates", run(&sc, 8, -1), 20, 0, 2);
}

static void test_jitter(void)
{
    static const int jit_ms[] = { 3, -2, 4, -4, 1, 0, -3, 2, 4, -1 };
    Script sc;
    int k;

    same_rate(&sc, NULL, NULL);
    for (k = 0; k < sc.n[1]; k++) {
        sc.in[1][k].f.t += jit_ms[k % 10] * 1000000LL;
        sc.in[1][k].f.t = sc.in[1][k].f.t < 0 ? 0 : sc.in[1][k].f.t;
        sc.in[1][k].arrive = sc.in[1][k].f.t;
        sc.in[0][k].f.t += jit_ms[(k + 3) % 10] * 1000000LL;
        sc.in[0][k].f.t = sc.in[0][k].f.t < 0 ? 0 : sc.in[0][k].f.t;
        sc.in[0][k].arrive = sc.in[0][k].f.t;
    }
    expect("jitter 4 ms", run(&sc, 8, -1), 20, 0, 0);
    expect("jitter 4 ms, queue 2", run(&sc, 2, -1), 20, 0, 0);
}

static void test_non_monotonic(void)
{
    Script sc;
    Frame f;

    same_rate(&sc, NULL, NULL);
    /* the reference sends 3 before 2 (arrival order follows the list) */
    f = sc.in[0][2];
    sc.in[0][2] = sc.in[0][3];
    sc.in[0][3] = f;
    for (int k = 0; k < sc.n[0]; k++)
        sc.in[0][k].arrive = k * 1000 + 1;
    for (int k = 0; k < sc.n[1]; k++)
        sc.in[1][k].arrive = k * 1000 + 2;
    /* 2 and 3 cannot both pair without reordering the output: 3 pairs,
     * the reference's 2 and the distorted 2 are unmatched */
    expect("non-monotonic", run(&sc, 8, -1), 19, 1, 1);
}

static void untimed(Script *sc, const int *skip_r, const int *skip_d,
                    int offsets, int discont)
{
    int p, k;

    same_rate(sc, skip_r, skip_d);
    for (p = 0; p < 2; p++) {
        for (k = 0; k < sc->n[p]; k++) {
            Frame *f = &sc->in[p][k];
            /* offsets from 100 on one input, 7 on the other: numbered from
             * each input's first frame */
            f->f.offset = offsets ? (uint64_t)f->id + (p ? 7 : 100) :
                QM_PAIR_NO_OFFSET;
            f->f.discont = discont && k > 0 && f->id != sc->in[p][k - 1].id + 1;
            f->f.t = QM_PAIR_NO_TIME;
            f->f.dur = QM_PAIR_NO_TIME;
            f->arrive = k;
        }
    }
}

static void test_no_timestamps(void)
{
    static const int drop_d[] = { 3, -1 }, drop_r[] = { 9, 10, -1 };
    Script sc;

    untimed(&sc, NULL, NULL, 0, 0);
    expect("arrival order", run(&sc, 8, -1), 20, 0, 0);
    untimed(&sc, drop_r, drop_d, 1, 0);
    expect("frame numbers with gaps", run(&sc, 8, -1), 17, 1, 2);
    /* arrival order, distorted loses frame 3 (flagged discont): 3 pairs,
     * then nothing: 17 + 16 frames are unmatched */
    untimed(&sc, NULL, drop_d, 0, 1);
    expect("arrival order, gap", run(&sc, 8, -1), 3, 17, 16);
    /* a gap that nothing flags cannot be seen in arrival order (a limit
     * stated in docs/element.md), so no case here claims to catch it */
}

static void test_mixed(void)
{
    Script sc;
    int k;

    same_rate(&sc, NULL, NULL);
    for (k = 0; k < sc.n[1]; k++) {
        sc.in[1][k].f.t = QM_PAIR_NO_TIME;
        sc.in[1][k].arrive = at(k, 25);
    }
    expect("times on one input only", run(&sc, 8, -1), 0, 20, 20);
}

/* Live: a reference frame whose partner is late past the deadline is
 * unmatched without waiting; one not yet past it waits. */
static void test_deadline(void)
{
    QmPairFrame r[1] = { { 0, 40000000, QM_PAIR_NO_OFFSET, 0 } };
    QmPairInput in = { { r, NULL }, { 1, 0 }, { 0, 0 }, QM_PAIR_NO_DEADLINE,
                       -1, { 0, 0 } };
    QmPairState st;
    QmPairDecision d;

    qm_pair_reset(&st);
    d = qm_pair_decide(&st, &in);
    CHECK(d.action == QM_PAIR_WAIT, "no deadline: %d", d.action);
    in.deadline = -1;
    d = qm_pair_decide(&st, &in);
    CHECK(d.action == QM_PAIR_WAIT, "before the deadline: %d", d.action);
    in.deadline = 0;
    d = qm_pair_decide(&st, &in);
    CHECK(d.action == QM_PAIR_DROP_REF && d.reason == QM_PAIR_NO_PARTNER,
          "past the deadline: %d %d", d.action, d.reason);
    /* past the deadline, with a distorted frame arrived but not queued yet
     * (the element got to its queues late): it is looked at first, and
     * paired although the deadline has passed */
    in.more[1] = 1;
    d = qm_pair_decide(&st, &in);
    CHECK(d.action == QM_PAIR_WAIT && d.need == QM_PAIR_DIST,
          "partner arrived: %d need %d", d.action, d.need);
    {
        QmPairFrame dq[1] = { { 1000000, 40000000, QM_PAIR_NO_OFFSET, 0 } };
        in.f[1] = dq;
        in.n[1] = 1;
        in.more[1] = 0;
        d = qm_pair_decide(&st, &in);
        CHECK(d.action == QM_PAIR_MATCH, "partner queued: %d", d.action);
    }
    /* a later frame of the reference input may also have arrived: nearer
     * to the distorted frame, it is looked at before deciding */
    {
        QmPairFrame dq[1] = { { 10000000, 40000000, QM_PAIR_NO_OFFSET, 0 } };
        in.f[1] = dq;
        in.deadline = 50000000;
        in.more[0] = 1;
        d = qm_pair_decide(&st, &in);
        CHECK(d.action == QM_PAIR_WAIT && d.need == QM_PAIR_REF,
              "a nearer reference may be here: %d need %d", d.action, d.need);
        in.more[0] = 0;
        d = qm_pair_decide(&st, &in);
        CHECK(d.action == QM_PAIR_MATCH, "none: the queued heads pair: %d",
              d.action);
    }
}

static void test_tolerance(void)
{
    CHECK(qm_pair_tolerance(-1, 40000000, 20000000) == 10000000, "shorter");
    CHECK(qm_pair_tolerance(-1, QM_PAIR_NO_TIME, 20000000) == 10000000,
          "one known");
    CHECK(qm_pair_tolerance(-1, QM_PAIR_NO_TIME, QM_PAIR_NO_TIME) == 0,
          "none known");
    CHECK(qm_pair_tolerance(5, 40000000, 20000000) == 5, "override");
}

int main(void)
{
    test_tolerance();
    test_rates();
    test_drops();
    test_duplicates();
    test_jitter();
    test_non_monotonic();
    test_no_timestamps();
    test_mixed();
    test_deadline();
    if (failures)
        printf("%d failure(s)\n", failures);
    else
        printf("pairing: all cases hold\n");
    return failures ? 1 : 0;
}
