/* gst-qmetric: which pairs a live element scores when it cannot score them
 * all (docs/element.md, "Overload").
 *
 * Plain C (no GStreamer).  The element asks, for every pair it is about to
 * submit, whether to score it; the answer follows a share of the pairs
 * (counted from the pair where the share last changed), so the subset
 * depends only on the share's history.  The share starts at every pair and
 * is revised at most once per control period from what the element
 * measures.  The share scored is one of a fixed list
 * of fractions p/q (qm_shed_share()): 1, 7/8, 5/6, 4/5, 3/4, 7/10, 2/3,
 * 3/5, 1/2, then 1/3, 1/4, ... down to 1/max_skip; pair n (counted from
 * the last change) is scored when n p mod q < p, so p pairs of every q
 * consecutive ones, evenly spread, the first of them scored.  (Steps of
 * 1/k alone would jump from every pair to half of them: at 1.5 times
 * the capacity, 50 % scored where 67 % could be.)
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
 *   capacity at this load.  The share becomes the largest that asks for
 *   at most QM_SHED_LOAD of it, and one step smaller each period the lag
 *   does not shrink.
 * - once the lag is back within half the budget for a hold time, the
 *   share steps up: straight to what QM_SHED_LOAD of the capacity allows
 *   when the input became slower, else by one step, but not above what the
 *   measured capacity can score (rate x share <= capacity) except after
 *   QM_SHED_PROBE_US without a backlog (the load may have become lighter).
 *   A step up that puts it behind again within twice the hold goes back to
 *   the share it came from and doubles the hold (up to
 *   QM_SHED_HOLD_MAX_US): the share settles instead of swinging.  So does
 *   a step up of one level after which the lag, past half the budget,
 *   grows two periods running: elements that share an engine (probes on
 *   one GPU) slow each other, and the lag turns before it reaches the
 *   budget.  A new input rate (20 % off) starts the hold afresh.
 * - each wait before a step up (the hold, QM_SHED_PROBE_US) lasts between
 *   once and twice its length, drawn from qm_shed_seed()'s sequence, so
 *   that elements that fell behind together step up at different times.
 *
 * Not thread-safe: one streaming thread calls it. */
#ifndef QM_SHED_H
#define QM_SHED_H

#include <stdbool.h>
#include <stdint.h>

/* the window of the shortest time in the engine (two of them) */
#define QM_SHED_SERVICE_US 2000000
/* one decision about the share per period */
#define QM_SHED_PERIOD_US 500000
/* the share of the measured capacity asked for on falling behind: the rest
 * drains the backlog; steps up then use what is left of it */
#define QM_SHED_LOAD 0.8
/* how long the lag stays small before the share steps up; doubled after a
 * step up that failed */
#define QM_SHED_HOLD_US 1000000
#define QM_SHED_HOLD_MAX_US 16000000
/* beyond what the measured capacity can score, a step up is tried only
 * after this long without a backlog (the load may have become lighter) */
#define QM_SHED_PROBE_US 30000000

typedef enum QmShedChange {
    QM_SHED_SAME,
    QM_SHED_RAISED,     /* fewer pairs scored (the level grew) */
    QM_SHED_LOWERED,    /* more pairs scored (the level fell) */
} QmShedChange;

typedef struct QmShed {
    unsigned max_skip;          /* the smallest share is 1/max_skip (1: never skip) */
    unsigned level, max_level;  /* the share's place in the list (0: every pair) */
    unsigned p, q;              /* the share: p pairs of every q */
    uint64_t n;                 /* pairs since the share last changed */
    int64_t period_start_us;    /* -1: no period yet */
    unsigned period_pairs, period_scored;
    int64_t prev_lag_ns;        /* the lag at the last period's end */
    double capacity;            /* scored pairs/s while behind; 0 unknown */
    int64_t calm_since_us;      /* lag within half the budget since; -1 */
    int64_t hold_us;
    int64_t lowered_us;         /* when the share last stepped up; -1 */
    unsigned lowered_from;      /* and from which level */
    double rate;                /* input pairs/s at the last period's end */
    /* qm_shed_result(): the shortest time in the engine over the current
     * and the previous QM_SHED_SERVICE_US (a scored pair's service, its
     * look-ahead included), and how much longer the last one took */
    int64_t svc_cur_ns, svc_prev_ns, svc_epoch_us;
    int64_t queue_ns;
    unsigned period_done;       /* scored results this period */
    uint32_t random;            /* qm_shed_seed() */
    unsigned jitter;            /* the waits of this calm spell: + jitter/1024 */
    unsigned rising;            /* periods in a row the lag grew (this one included) */
} QmShed;

/** A controller that scores every pair and skips at most max_skip - 1 of
 *  every max_skip (max_skip 1: never). */
void qm_shed_init(QmShed *s, unsigned max_skip);

/** Seeds the jitter of the waits before a step up (each between the wait
 *  and twice it): give each element its own seed, so that elements that
 *  fell behind together do not step up together.  The same seed and the
 *  same arrivals give the same subset. */
void qm_shed_seed(QmShed *s, uint32_t seed);

/** The share of the pairs scored now, p / q. */
double qm_shed_share(const QmShed *s);

/**
 * One pair, at monotonic time now_us: lag_ns how far its running time is
 * behind the clock's, budget_ns how far it may be (the latency), frame_ns
 * the duration of a frame (the input's rate; <= 0 unknown).  Returns
 * whether to score it; *change (if given) says whether the share changed
 * just before this pair.
 */
bool qm_shed_pair(QmShed *s, int64_t now_us, int64_t lag_ns, int64_t budget_ns,
                  int64_t frame_ns, QmShedChange *change);

/* A scored pair's results came back at now_us, inflight_ns after it was
 * submitted: what it spent beyond the shortest such time of the last few
 * seconds is taken for queueing in the engine, and counts in the lag of the
 * pairs that follow. */
void qm_shed_result(QmShed *s, int64_t now_us, int64_t inflight_ns);

#endif /* QM_SHED_H */
