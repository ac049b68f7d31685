/* gst-qmetric: gst/qmetric/qmshed.c, the choice of the pairs a live element
 * scores when it cannot score them all, against a simulated element: pairs
 * arrive at a rate, a scored pair takes 1/capacity seconds, a skipped one
 * 1 ms, one at a time, in order. */
#include <stdio.h>

#include "qmshed.h"
#include "unit.h"

typedef struct {
    QmShed shed;
    double now;             /* s, when the element is free */
    uint64_t i;             /* next pair */
    double next_arrival;    /* s */
    double max_lag;
    unsigned changes, raises, lowers;
    uint64_t pairs, scored;
} Sim;

/* Run for `secs` of input at `rate` pairs/s and `capacity` scored pairs/s,
 * the budget 100 ms.  Counts from the start of this call. */
static void run(Sim *m, double secs, double rate, double capacity)
{
    const double end = m->next_arrival + secs;
    m->max_lag = 0;
    m->changes = m->raises = m->lowers = 0;
    m->pairs = m->scored = 0;
    while (m->next_arrival < end) {
        double arrival = m->next_arrival;
        double start = m->now > arrival ? m->now : arrival;
        double lag = start - arrival;
        QmShedChange ch;
        bool score = qm_shed_pair(&m->shed, (int64_t)(start * 1e6),
                                  (int64_t)(lag * 1e9), 100000000,
                                  (int64_t)(1e9 / rate), &ch);
        m->changes += ch != QM_SHED_SAME;
        m->raises += ch == QM_SHED_RAISED;
        m->lowers += ch == QM_SHED_LOWERED;
        m->now = start + (score ? 1.0 / capacity : 0.001);
        m->pairs++;
        m->scored += score;
        if (lag > m->max_lag)
            m->max_lag = lag;
        m->next_arrival += 1.0 / rate;
        m->i++;
    }
}

static void sim_init(Sim *m, unsigned max_skip)
{
    *m = (Sim){ 0 };
    qm_shed_init(&m->shed, max_skip);
}

int main(void)
{
    Sim m;

    /* the capacity keeps up: every pair scored, k never moves */
    sim_init(&m, 100);
    run(&m, 20, 30, 50);
    CHECK(m.scored == m.pairs && m.changes == 0 && m.shed.k == 1,
          "under capacity: %llu of %llu scored, %u changes",
          (unsigned long long)m.scored, (unsigned long long)m.pairs, m.changes);

    /* 40 pairs/s, 16 scored pairs/s possible: k settles at
     * ceil(40 / (16 * 0.8)) = 4 within a few seconds */
    sim_init(&m, 100);
    run(&m, 5, 40, 16);
    CHECK(m.shed.k >= 3 && m.shed.k <= 5, "k = %u after 5 s", m.shed.k);
    /* then holds it: the backlog stays bounded, the share scored is near
     * what the capacity allows, k moves rarely (each failed step down
     * doubles the wait before the next) */
    run(&m, 120, 40, 16);
    double share = (double)m.scored / m.pairs;
    CHECK(share >= 0.8 * 16 / 40 && share <= 16.0 / 40, "share scored %.3f",
          share);
    CHECK(m.max_lag < 1.0, "lag up to %.3f s", m.max_lag);
    CHECK(m.changes <= 12, "%u changes of k in 120 s", m.changes);
    run(&m, 60, 40, 16);
    CHECK(m.changes <= 4, "%u changes of k in the next 60 s", m.changes);

    /* the load drops (the input slows to 8 pairs/s): back to every pair
     * once the hold has passed, and every pair scored after that */
    run(&m, 3, 8, 16);
    CHECK(m.shed.k == 1, "k = %u after the load dropped", m.shed.k);
    run(&m, 10, 8, 16);
    CHECK(m.scored == m.pairs && m.changes == 0, "after recovery: %llu of "
          "%llu scored", (unsigned long long)m.scored,
          (unsigned long long)m.pairs);

    /* the same arrivals and costs give the same subset */
    Sim a, b;
    sim_init(&a, 100);
    sim_init(&b, 100);
    uint64_t diff = 0;
    for (int t = 0; t < 40; t++) {
        run(&a, 0.5, t < 20 ? 40 : 10, 12);
        run(&b, 0.5, t < 20 ? 40 : 10, 12);
        diff += a.scored != b.scored || a.shed.k != b.shed.k;
    }
    CHECK(diff == 0, "two runs differ in %llu half seconds",
          (unsigned long long)diff);

    /* bounded: at most 1 pair in max_skip is skipped... */
    sim_init(&m, 2);
    run(&m, 10, 40, 8);
    CHECK(m.shed.k == 2 && m.scored * 2 >= m.pairs, "max-skip 2: k %u, %llu "
          "of %llu", m.shed.k, (unsigned long long)m.scored,
          (unsigned long long)m.pairs);
    /* ...and max_skip 1 never skips: the backlog grows without bound */
    sim_init(&m, 1);
    run(&m, 10, 40, 16);
    CHECK(m.scored == m.pairs && m.max_lag > 5, "max-skip 1: %llu of %llu, "
          "lag %.1f s", (unsigned long long)m.scored,
          (unsigned long long)m.pairs, m.max_lag);

    printf("%s (%d failed checks)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
