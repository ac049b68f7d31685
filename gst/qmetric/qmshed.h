/* gst-qmetric: which pairs a live element scores when it cannot score them
 * all (docs/element.md, "Overload").
 *
 * Plain C (no GStreamer).  The element asks, for every pair it is about to
 * submit, whether to score it; the answer is "every k-th pair" (counted
 * from the pair where k last changed), so the subset depends only on k's
 * history.  k starts at 1 and is revised at most once per control period
 * from what the element measures:
 *
 * - lag: how far behind the clock the pair is (the clock's running time
 *   less the pair's), plus how long the last scored pair queued in the
 *   engine (qm_shed_result()), against the budget (the element's latency,
 *   less the time a pair takes to score when that is shorter).  A lag
 *   beyond the budget means pairs wait for the element: it is behind.
 *   (An engine with frames in flight, the CUDA backend's or the CPU
 *   backend's with several threads, takes pairs as fast as they come until
 *   its slots are full: the pairs then wait in it, not before it.)
 * - while behind, the scored pairs per second it managed in the period
 *   (the results the engine handed back, else the pairs submitted): its
 *   capacity at this load.  k becomes the smallest that asks for at
 *   most QM_SHED_LOAD of it, and grows by one more each period the lag
 *   does not shrink.
 * - once the lag is back within half the budget for a hold time, k steps
 *   down: straight to what the capacity allows when the input became
 *   slower, else by one, but not below rate / capacity (the fewest pairs
 *   skipped that the measured capacity can take) except after
 *   QM_SHED_PROBE_US without a backlog (the load may have become lighter).
 *   A step down that puts it behind again within twice the hold goes back
 *   to the k it came from and doubles the hold (up to QM_SHED_HOLD_MAX_US):
 *   k settles instead of swinging.  A new input rate (20 % off) starts the
 *   hold afresh.
 *
 * Not thread-safe: one streaming thread calls it. */
#ifndef QM_SHED_H
#define QM_SHED_H

#include <stdbool.h>
#include <stdint.h>

/* the window of the shortest time in the engine (two of them) */
#define QM_SHED_SERVICE_US 2000000
/* one decision about k per period */
#define QM_SHED_PERIOD_US 500000
/* the share of the measured capacity k aims to use: the rest drains the
 * backlog and absorbs jitter */
#define QM_SHED_LOAD 0.8
/* how long the lag stays small before k steps down; doubled after a step
 * down that failed */
#define QM_SHED_HOLD_US 1000000
#define QM_SHED_HOLD_MAX_US 16000000
/* below what the measured capacity can score, a step down is tried only
 * after this long without a backlog (the load may have become lighter) */
#define QM_SHED_PROBE_US 30000000

typedef enum QmShedChange {
    QM_SHED_SAME,
    QM_SHED_RAISED,     /* k grew: fewer pairs scored */
    QM_SHED_LOWERED,    /* k fell: more pairs scored */
} QmShedChange;

typedef struct QmShed {
    unsigned max_skip;          /* the largest k (1: never skip) */
    unsigned k;                 /* score one pair in k */
    uint64_t n;                 /* pairs since k last changed */
    int64_t period_start_us;    /* -1: no period yet */
    unsigned period_pairs, period_scored;
    int64_t prev_lag_ns;        /* the lag at the last period's end */
    double capacity;            /* scored pairs/s while behind; 0 unknown */
    int64_t calm_since_us;      /* lag within half the budget since; -1 */
    int64_t hold_us;
    int64_t lowered_us;         /* when k last stepped down; -1 */
    unsigned lowered_from;      /* and from which k */
    double rate;                /* input pairs/s at the last period's end */
    /* qm_shed_result(): the shortest time in the engine over the current
     * and the previous QM_SHED_SERVICE_US (a scored pair's service, its
     * look-ahead included), and how much longer the last one took */
    int64_t svc_cur_ns, svc_prev_ns, svc_epoch_us;
    int64_t queue_ns;
    unsigned period_done;       /* scored results this period */
} QmShed;

/** A controller that scores every pair and skips at most max_skip - 1 of
 *  every max_skip (max_skip 1: never). */
void qm_shed_init(QmShed *s, unsigned max_skip);

/**
 * One pair, at monotonic time now_us: lag_ns how far its running time is
 * behind the clock's, budget_ns how far it may be (the latency), frame_ns
 * the duration of a frame (the input's rate; <= 0 unknown).  Returns
 * whether to score it; *change (if given) says whether k changed just
 * before this pair.
 */
bool qm_shed_pair(QmShed *s, int64_t now_us, int64_t lag_ns, int64_t budget_ns,
                  int64_t frame_ns, QmShedChange *change);

/* A scored pair's results came back at now_us, inflight_ns after it was
 * submitted: what it spent beyond the shortest such time of the last few
 * seconds is taken for queueing in the engine, and counts in the lag of the
 * pairs that follow. */
void qm_shed_result(QmShed *s, int64_t now_us, int64_t inflight_ns);

#endif /* QM_SHED_H */
