/* gst-qmetric: which pairs a live element scores when it cannot score them
 * all (see qmshed.h). */
#include "qmshed.h"

#include <math.h>
#include <string.h>

/* The shares above one half, largest first: steps of at most about 10 %
 * of the pairs.  From one half down, 1/q for q = 2, 3, 4, ... */
static const unsigned fine[][2] = {
    { 1, 1 }, { 7, 8 }, { 5, 6 }, { 4, 5 }, { 3, 4 }, { 7, 10 }, { 2, 3 }, { 3, 5 },
};
#define N_FINE (sizeof(fine) / sizeof(fine[0]))

/* Level l's share, p / q. */
static void level_share(unsigned l, unsigned *p, unsigned *q)
{
    if (l < N_FINE) {
        *p = fine[l][0];
        *q = fine[l][1];
    } else {
        *p = 1;
        *q = l - (unsigned)N_FINE + 2;   /* N_FINE: 1/2 */
    }
}

static double share_of(unsigned l)
{
    unsigned p, q;
    level_share(l, &p, &q);
    return (double)p / q;
}

/* xorshift32: the element's own sequence of waits (qm_shed_seed()) */
static uint32_t next_random(QmShed *s)
{
    uint32_t x = s->random;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return s->random = x;
}

/* The lag has come within half the budget at now_us: the waits before the
 * next step up start, each between its length and twice that.  Elements
 * that fell behind together (probes on one GPU) would otherwise all step
 * up at the same moment, each step a share of every element's pairs at
 * once. */
static void calm_from(QmShed *s, int64_t now_us)
{
    s->calm_since_us = now_us;
    s->jitter = next_random(s) % 1024;
}

static int64_t jittered(const QmShed *s, int64_t us)
{
    return us + us * (int64_t)s->jitter / 1024;
}

void qm_shed_seed(QmShed *s, uint32_t seed)
{
    /* spread the bits first: seeds one apart (names that differ in a
     * digit) start the sequence at unrelated places */
    seed ^= seed >> 16;
    seed *= 0x85ebca6bu;
    seed ^= seed >> 13;
    seed *= 0xc2b2ae35u;
    seed ^= seed >> 16;
    s->random = seed ? seed : 0x9e3779b9u;
}

void qm_shed_init(QmShed *s, unsigned max_skip)
{
    memset(s, 0, sizeof(*s));
    s->max_skip = max_skip ? max_skip : 1;
    /* every share of at least 1/max_skip (max_skip 1: every pair only) */
    s->max_level = s->max_skip == 1 ? 0 : (unsigned)N_FINE + s->max_skip - 2;
    s->p = s->q = 1;
    s->period_start_us = -1;
    s->prev_lag_ns = -1;
    s->calm_since_us = -1;
    s->hold_us = QM_SHED_HOLD_US;
    s->lowered_us = -1;
    s->svc_cur_ns = s->svc_prev_ns = INT64_MAX;
    s->svc_epoch_us = -1;
    qm_shed_seed(s, 0);
}

double qm_shed_share(const QmShed *s)
{
    return (double)s->p / s->q;
}

/* The shortest time in the engine of the two windows (INT64_MAX: no
 * result yet). */
static int64_t service_ns(const QmShed *s)
{
    return s->svc_cur_ns < s->svc_prev_ns ? s->svc_cur_ns : s->svc_prev_ns;
}

void qm_shed_result(QmShed *s, int64_t now_us, int64_t inflight_ns)
{
    if (inflight_ns < 0)
        return;
    if (s->svc_epoch_us < 0 || now_us - s->svc_epoch_us >= QM_SHED_SERVICE_US) {
        s->svc_prev_ns = s->svc_cur_ns;
        s->svc_cur_ns = INT64_MAX;
        s->svc_epoch_us = now_us;
    }
    if (inflight_ns < s->svc_cur_ns)
        s->svc_cur_ns = inflight_ns;
    s->queue_ns = inflight_ns - service_ns(s);
    s->period_done++;
}

/* The first level (the largest share) that asks for at most `load` of the
 * capacity at `rate` pairs/s; -1 with the capacity or the rate not known. */
static int level_for(const QmShed *s, double rate, double load)
{
    if (s->capacity <= 0 || rate <= 0)
        return -1;
    const double most = s->capacity * load / rate;
    if (most >= 1)
        return 0;
    if (most < 0.5) {
        /* 1/q <= most */
        const double q = ceil(1 / most);
        const double l = q - 2 + N_FINE;
        return l > s->max_level ? (int)s->max_level : (int)l;
    }
    unsigned l = 1;
    while (l < N_FINE && share_of(l) > most)
        l++;
    return (int)(l > s->max_level ? s->max_level : l);
}

/* A step up failed: wait twice as long before the next (up to
 * QM_SHED_HOLD_MAX_US). */
static void double_hold(QmShed *s)
{
    s->hold_us = s->hold_us * 2 > QM_SHED_HOLD_MAX_US ? QM_SHED_HOLD_MAX_US : s->hold_us * 2;
}

static void set_level(QmShed *s, unsigned l, QmShedChange *change)
{
    *change = l > s->level ? QM_SHED_RAISED : QM_SHED_LOWERED;
    s->level = l;
    level_share(l, &s->p, &s->q);
    s->n = 0;   /* the next pair is scored */
}

/* The end of a control period at now_us. */
static void control(QmShed *s, int64_t now_us, int64_t lag_ns,
                    int64_t budget_ns, int64_t frame_ns, QmShedChange *change)
{
    const double dt = (now_us - s->period_start_us) / 1e6;
    const double rate = frame_ns > 0 ? 1e9 / frame_ns : s->period_pairs / dt;
    unsigned l = s->level;

    if (s->rate > 0 && fabs(rate - s->rate) > 0.2 * s->rate) {
        /* another input rate: what was learnt about steps up no longer
         * holds */
        s->hold_us = QM_SHED_HOLD_US;
        s->lowered_us = -1;
    }
    s->rate = rate;
    s->rising = s->prev_lag_ns >= 0 && lag_ns > s->prev_lag_ns ? s->rising + 1 : 0;
    if (lag_ns > budget_ns) {
        /* behind: the element was busy the whole period, so what it
         * scored is what it can score at this share */
        s->calm_since_us = -1;
        if (s->period_done)
            s->capacity = s->period_done / dt;
        else if (s->period_scored)
            s->capacity = s->period_scored / dt;
        if (s->lowered_us >= 0 && now_us - s->lowered_us < 2 * s->hold_us) {
            /* the last step up was one too many: back to where it was
             * calm, and wait longer before the next one */
            if (s->lowered_from > l)
                l = s->lowered_from;
            double_hold(s);
        } else if (s->prev_lag_ns < 0 || lag_ns >= s->prev_lag_ns) {
            /* the backlog does not shrink at this share (while it shrinks,
             * the share stays): what the capacity allows, at least one
             * step less */
            const int want = level_for(s, rate, QM_SHED_LOAD);
            l = want > (int)l ? (unsigned)want : l < s->max_level ? l + 1 : l;
        }
        s->lowered_us = -1;
    } else if (lag_ns <= budget_ns / 2) {
        if (s->calm_since_us < 0) {
            calm_from(s, now_us);
        } else if (l > 0) {
            /* the backlog is gone: score more.  When the input slowed
             * down, as many more as the capacity allows at once; else one
             * step, but not beyond what the measured capacity can score,
             * except now and then: the capacity may have grown */
            const int64_t calm = now_us - s->calm_since_us;
            const bool held = calm >= jittered(s, s->hold_us);
            const int want = level_for(s, rate, QM_SHED_LOAD);
            const int top = level_for(s, rate, 1.0);
            if (held && want >= 0 && want < (int)l - 1)
                l = (unsigned)want;
            else if ((held && (int)l - 1 >= top) || calm >= jittered(s, QM_SHED_PROBE_US))
                l--;
            if (l != s->level) {
                s->lowered_from = s->level;
                s->lowered_us = now_us;
                calm_from(s, now_us);
                if (l == 0)
                    s->hold_us = QM_SHED_HOLD_US;
            }
        }
    } else {
        /* between half the budget and the budget: not behind yet, but
         * where the lag has grown two periods running since a step up of
         * one level, that step was one too many (whichever element's step
         * it was, the load of all of them grew: only those that stepped up
         * step back).  Back now, before the scores come late, and wait
         * longer before the next one.  (A jump of several levels follows a
         * slower input, where a lag in the scoring of the first pairs
         * passes.) */
        s->calm_since_us = -1;
        if (s->lowered_us >= 0 && s->lowered_from == l + 1 && s->rising >= 2) {
            if (now_us - s->lowered_us < 4 * s->hold_us)
                double_hold(s);
            l = s->lowered_from;
            s->lowered_us = -1;
        }
    }
    if (l != s->level)
        set_level(s, l, change);
    s->prev_lag_ns = lag_ns;
}

bool qm_shed_pair(QmShed *s, int64_t now_us, int64_t lag_ns, int64_t budget_ns,
                  int64_t frame_ns, QmShedChange *change)
{
    QmShedChange ch = QM_SHED_SAME;

    /* a pair waits before the engine (lag_ns), then in it (queue_ns), and
     * is scored in svc: its score is late when the three pass the budget.
     * (A scoring slower than the budget alone is late whatever the share: the
     * budget is then left as it is.) */
    const int64_t svc = service_ns(s);
    lag_ns += s->queue_ns;
    if (svc < budget_ns)
        budget_ns -= svc;
    if (s->max_skip > 1 && budget_ns > 0) {
        if (s->period_start_us < 0) {
            s->period_start_us = now_us;
        } else if (now_us - s->period_start_us >= QM_SHED_PERIOD_US) {
            control(s, now_us, lag_ns, budget_ns, frame_ns, &ch);
            s->period_start_us = now_us;
            s->period_pairs = s->period_scored = s->period_done = 0;
        }
    }
    const bool score = (s->n % s->q) * s->p % s->q < s->p;
    s->n++;
    s->period_pairs++;
    s->period_scored += score;
    if (change)
        *change = ch;
    return score;
}
