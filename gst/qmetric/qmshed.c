/* gst-qmetric: which pairs a live element scores when it cannot score them
 * all (see qmshed.h). */
#include "qmshed.h"

#include <math.h>
#include <string.h>

void qm_shed_init(QmShed *s, unsigned max_skip)
{
    memset(s, 0, sizeof(*s));
    s->max_skip = max_skip ? max_skip : 1;
    s->k = 1;
    s->period_start_us = -1;
    s->prev_lag_ns = -1;
    s->calm_since_us = -1;
    s->hold_us = QM_SHED_HOLD_US;
    s->lowered_us = -1;
    s->svc_cur_ns = s->svc_prev_ns = INT64_MAX;
    s->svc_epoch_us = -1;
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

/* The smallest k that asks for at most QM_SHED_LOAD of the capacity (0:
 * not known). */
static unsigned k_for(const QmShed *s, double rate)
{
    if (s->capacity <= 0 || rate <= 0)
        return 0;
    double k = ceil(rate / (s->capacity * QM_SHED_LOAD));
    if (k < 1)
        return 1;
    return k > s->max_skip ? s->max_skip : (unsigned)k;
}

static void set_k(QmShed *s, unsigned k, QmShedChange *change)
{
    *change = k > s->k ? QM_SHED_RAISED : QM_SHED_LOWERED;
    s->k = k;
    s->n = 0;   /* the next pair is scored */
}

/* The end of a control period at now_us. */
static void control(QmShed *s, int64_t now_us, int64_t lag_ns,
                    int64_t budget_ns, int64_t frame_ns, QmShedChange *change)
{
    const double dt = (now_us - s->period_start_us) / 1e6;
    const double rate = frame_ns > 0 ? 1e9 / frame_ns : s->period_pairs / dt;
    unsigned k = s->k;

    if (s->rate > 0 && fabs(rate - s->rate) > 0.2 * s->rate) {
        /* another input rate: what was learnt about steps down no longer
         * holds */
        s->hold_us = QM_SHED_HOLD_US;
        s->lowered_us = -1;
    }
    s->rate = rate;
    if (lag_ns > budget_ns) {
        /* behind: the element was busy the whole period, so what it
         * scored is what it can score at this k */
        s->calm_since_us = -1;
        if (s->period_done)
            s->capacity = s->period_done / dt;
        else if (s->period_scored)
            s->capacity = s->period_scored / dt;
        if (s->lowered_us >= 0 && now_us - s->lowered_us < 2 * s->hold_us) {
            /* the last step down was one too many: back to where it was
             * calm, and wait longer before the next one */
            if (s->lowered_from > k)
                k = s->lowered_from;
            s->hold_us = s->hold_us * 2 > QM_SHED_HOLD_MAX_US ?
                QM_SHED_HOLD_MAX_US : s->hold_us * 2;
        } else if (s->prev_lag_ns < 0 || lag_ns >= s->prev_lag_ns) {
            /* the backlog does not shrink at this k (while it shrinks, k
             * stays): what the capacity allows, at least one more */
            unsigned want = k_for(s, rate);
            k = want > k ? want : k < s->max_skip ? k + 1 : k;
        }
        s->lowered_us = -1;
    } else if (lag_ns <= budget_ns / 2) {
        if (s->calm_since_us < 0) {
            s->calm_since_us = now_us;
        } else if (k > 1) {
            /* the backlog is gone: score more.  When the input slowed
             * down, as many more as the capacity allows at once; else one
             * step, but not below what the measured capacity can score,
             * except now and then: the capacity may have grown */
            const int64_t calm = now_us - s->calm_since_us;
            const unsigned want = k_for(s, rate);
            const double fl = s->capacity > 0 ? ceil(rate / s->capacity) : 1;
            const unsigned floor_k = fl < 1 ? 1 : fl > s->max_skip ?
                s->max_skip : (unsigned)fl;
            if (calm >= s->hold_us && want && want < k - 1)
                k = want;
            else if ((calm >= s->hold_us && k - 1 >= floor_k) ||
                     calm >= QM_SHED_PROBE_US)
                k--;
            if (k != s->k) {
                s->lowered_from = s->k;
                s->lowered_us = now_us;
                s->calm_since_us = now_us;
                if (k == 1)
                    s->hold_us = QM_SHED_HOLD_US;
            }
        }
    } else {
        s->calm_since_us = -1;
    }
    if (k != s->k)
        set_k(s, k, change);
    s->prev_lag_ns = lag_ns;
}

bool qm_shed_pair(QmShed *s, int64_t now_us, int64_t lag_ns, int64_t budget_ns,
                  int64_t frame_ns, QmShedChange *change)
{
    QmShedChange ch = QM_SHED_SAME;

    /* a pair waits before the engine (lag_ns), then in it (queue_ns), and
     * is scored in svc: its score is late when the three pass the budget.
     * (A scoring slower than the budget alone is late whatever k is: the
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
    const bool score = s->n % s->k == 0;
    s->n++;
    s->period_pairs++;
    s->period_scored += score;
    if (change)
        *change = ch;
    return score;
}
