/* gst-qmetric: pairing of reference and distorted frames (pair.h has the
 * rules).  Backend-neutral and free of GStreamer so that the element and
 * the tools share it and the unit test drives it directly. */
#include "pair.h"

#define NONE_FOUND (-2)  /* no candidate at all */
#define LAST_TAKEN (-1)  /* the candidate is the last frame already taken */

void qm_pair_reset(QmPairState *s)
{
    int p;

    for (p = 0; p < 2; p++) {
        s->last_t[p] = QM_PAIR_NO_TIME;
        s->have_last[p] = 0;
        s->first_offset[p] = QM_PAIR_NO_OFFSET;
        s->have_first[p] = 0;
        s->taken[p] = 0;
    }
    s->gap = 0;
}

int64_t qm_pair_tolerance(int64_t override, int64_t dur_a, int64_t dur_b)
{
    int64_t d;

    if (override >= 0)
        return override;
    if (dur_a > 0 && dur_b > 0)
        d = dur_a < dur_b ? dur_a : dur_b;
    else if (dur_a > 0)
        d = dur_a;
    else if (dur_b > 0)
        d = dur_b;
    else
        return 0;
    /* two frames closer than half the shorter frame show the same instant;
     * further apart, a frame of the faster input lies between them */
    return d / 2;
}

static int64_t dist_ns(int64_t a, int64_t b)
{
    return a > b ? a - b : b - a;
}

/* Is a candidate at time a nearer to x than the best so far, at time b?
 * Equal distance: the earlier time; equal times: the one seen first (the
 * caller visits candidates in arrival order), so never. */
static int nearer(int64_t x, int64_t a, int64_t b)
{
    int64_t da = dist_ns(a, x), db = dist_ns(b, x);

    return da < db || (da == db && a < b);
}

/* The frame of input q nearest to time x: LAST_TAKEN, a queue index, or
 * NONE_FOUND.  *complete is 0 when a frame yet to come could still be
 * nearer: no queued frame of q lies at or after x and none matches x. */
static int nearest(const QmPairState *s, const QmPairInput *in, int q,
                   int64_t x, int *complete)
{
    int best = NONE_FOUND;
    int64_t best_t = 0;
    size_t i;

    *complete = 0;
    if (s->have_last[q] && s->last_t[q] >= 0) {
        best = LAST_TAKEN;
        best_t = s->last_t[q];
    }
    for (i = 0; i < in->n[q]; i++) {
        int64_t t = in->f[q][i].t;
        if (t < 0)
            continue;
        if (t >= x)
            *complete = 1;
        if (best == NONE_FOUND || nearer(x, t, best_t)) {
            best = (int)i;
            best_t = t;
        }
    }
    /* a later frame at distance 0 would lose the tie to this one */
    if (best != NONE_FOUND && best_t == x)
        *complete = 1;
    return best;
}

static QmPairDecision unmatched(int p, QmPairMode mode, QmPairReason why,
                                int64_t tol)
{
    QmPairDecision d = { p == QM_PAIR_REF ? QM_PAIR_DROP_REF :
                         QM_PAIR_PASS_DIST, mode, why, tol, -1 };
    return d;
}

static QmPairDecision decision(QmPairAction a, QmPairMode mode, int64_t tol)
{
    QmPairDecision d = { a, mode, QM_PAIR_OK, tol, -1 };
    return d;
}

static QmPairDecision wait_for(int need, QmPairMode mode, int64_t tol)
{
    QmPairDecision d = { QM_PAIR_WAIT, mode, QM_PAIR_OK, tol, need };
    return d;
}

/* Whether a frame of input q may still come, or has come unqueued, for a
 * head that is (or is not) past the deadline.  The deadline ends the wait
 * for frames still to come, not for ones that have come: a partner that
 * is here is looked at first (a live element that gets to its queues late
 * would otherwise give up heads whose partners arrived in time). */
static int may_wait(const QmPairInput *in, int q, int expired)
{
    return !in->done[q] && (!expired || in->more[q]);
}

static QmPairDecision decide_by_time(const QmPairState *s,
                                     const QmPairInput *in)
{
    const QmPairFrame *r = in->n[0] ? &in->f[0][0] : NULL;
    const QmPairFrame *d = in->n[1] ? &in->f[1][0] : NULL;
    const QmPairFrame *X, *Y;
    int p, q, i, j, complete, expired;
    int64_t tol;

    /* the earlier head is decided first (reference first on a tie) */
    p = !r ? QM_PAIR_DIST : !d ? QM_PAIR_REF :
        r->t <= d->t ? QM_PAIR_REF : QM_PAIR_DIST;
    q = !p;
    X = &in->f[p][0];
    expired = in->deadline != QM_PAIR_NO_DEADLINE && X->t <= in->deadline;
    tol = qm_pair_tolerance(in->tolerance, X->dur, QM_PAIR_NO_TIME);

    if (in->n[q] == 0) {
        if (!may_wait(in, q, expired))
            return unmatched(p, QM_PAIR_BY_TIME, QM_PAIR_NO_PARTNER, tol);
        return wait_for(q, QM_PAIR_BY_TIME, tol);
    }
    j = nearest(s, in, q, X->t, &complete);
    if (!complete && may_wait(in, q, expired))
        return wait_for(q, QM_PAIR_BY_TIME, tol);
    if (j == NONE_FOUND)
        return unmatched(p, QM_PAIR_BY_TIME, QM_PAIR_NO_PARTNER, tol);
    if (j != 0) {
        int64_t t = j == LAST_TAKEN ? s->last_t[q] : in->f[q][j].t;
        return unmatched(p, QM_PAIR_BY_TIME, dist_ns(t, X->t) > tol ?
                         QM_PAIR_TOO_FAR : QM_PAIR_TAKEN, tol);
    }
    Y = &in->f[q][0];
    tol = qm_pair_tolerance(in->tolerance, X->dur, Y->dur);
    if (dist_ns(X->t, Y->t) > tol)
        return unmatched(p, QM_PAIR_BY_TIME, QM_PAIR_TOO_FAR, tol);

    /* X's nearest is Y: is X also Y's nearest, or is a later frame of X's
     * input nearer to Y? */
    i = nearest(s, in, p, Y->t, &complete);
    if (!complete && may_wait(in, p, expired))
        return wait_for(p, QM_PAIR_BY_TIME, tol);
    if (i != 0)
        return unmatched(p, QM_PAIR_BY_TIME, QM_PAIR_TAKEN, tol);
    return decision(QM_PAIR_MATCH, QM_PAIR_BY_TIME, tol);
}

/* Neither head has a running time. */
static QmPairDecision decide_by_order(const QmPairState *s,
                                      const QmPairInput *in)
{
    const QmPairFrame *r = in->n[0] ? &in->f[0][0] : NULL;
    const QmPairFrame *d = in->n[1] ? &in->f[1][0] : NULL;
    uint64_t fr, fd;
    int64_t nr, nd;

    if (!r || !d) {
        int p = r ? QM_PAIR_REF : QM_PAIR_DIST;
        QmPairMode mode = in->f[p][0].offset != QM_PAIR_NO_OFFSET ?
            QM_PAIR_BY_OFFSET : QM_PAIR_BY_ARRIVAL;
        if (s->have_last[!p] && s->last_t[!p] >= 0)
            return unmatched(p, QM_PAIR_MIXED, QM_PAIR_NOT_COMPARABLE, 0);
        if (s->gap && mode == QM_PAIR_BY_ARRIVAL)
            return unmatched(p, mode, QM_PAIR_GAP, 0);
        if (in->done[!p])
            return unmatched(p, mode, QM_PAIR_NO_PARTNER, 0);
        return wait_for(!p, mode, 0);
    }
    if (r->offset != QM_PAIR_NO_OFFSET && d->offset != QM_PAIR_NO_OFFSET) {
        /* frame numbers count from each input's first frame */
        fr = s->have_first[0] ? s->first_offset[0] : r->offset;
        fd = s->have_first[1] ? s->first_offset[1] : d->offset;
        nr = (int64_t)(r->offset - fr);
        nd = (int64_t)(d->offset - fd);
        if (nr == nd)
            return decision(QM_PAIR_MATCH, QM_PAIR_BY_OFFSET, 0);
        return unmatched(nr < nd ? QM_PAIR_REF : QM_PAIR_DIST,
                         QM_PAIR_BY_OFFSET, QM_PAIR_GAP, 0);
    }
    if (s->gap)
        return unmatched(QM_PAIR_REF, QM_PAIR_BY_ARRIVAL, QM_PAIR_GAP, 0);
    if (r->discont && s->taken[0] > 0)
        return unmatched(QM_PAIR_REF, QM_PAIR_BY_ARRIVAL, QM_PAIR_GAP, 0);
    if (d->discont && s->taken[1] > 0)
        return unmatched(QM_PAIR_DIST, QM_PAIR_BY_ARRIVAL, QM_PAIR_GAP, 0);
    return decision(QM_PAIR_MATCH, QM_PAIR_BY_ARRIVAL, 0);
}

QmPairDecision qm_pair_decide(const QmPairState *s, const QmPairInput *in)
{
    const QmPairFrame *r = in->n[0] ? &in->f[0][0] : NULL;
    const QmPairFrame *d = in->n[1] ? &in->f[1][0] : NULL;

    if (!r && !d)
        return wait_for(QM_PAIR_REF, QM_PAIR_BY_TIME, 0);
    if (r && d && (r->t >= 0) != (d->t >= 0))
        return unmatched(r->t >= 0 ? QM_PAIR_DIST : QM_PAIR_REF,
                         QM_PAIR_MIXED, QM_PAIR_NOT_COMPARABLE, 0);
    if ((r && r->t >= 0) || (d && d->t >= 0))
        return decide_by_time(s, in);
    return decide_by_order(s, in);
}

static void take(QmPairState *s, int p, const QmPairFrame *f)
{
    if (f->t >= 0) {
        s->last_t[p] = f->t;
        s->have_last[p] = 1;
    }
    if (!s->have_first[p] && f->offset != QM_PAIR_NO_OFFSET) {
        s->first_offset[p] = f->offset;
        s->have_first[p] = 1;
    }
    s->taken[p]++;
}

void qm_pair_apply(QmPairState *s, const QmPairInput *in,
                   const QmPairDecision *d)
{
    switch (d->action) {
    case QM_PAIR_MATCH:
        take(s, QM_PAIR_REF, &in->f[0][0]);
        take(s, QM_PAIR_DIST, &in->f[1][0]);
        break;
    case QM_PAIR_DROP_REF:
        take(s, QM_PAIR_REF, &in->f[0][0]);
        break;
    case QM_PAIR_PASS_DIST:
        take(s, QM_PAIR_DIST, &in->f[1][0]);
        break;
    default:
        return;
    }
    if (d->mode == QM_PAIR_BY_ARRIVAL && d->reason == QM_PAIR_GAP)
        s->gap = 1;
}

const char *qm_pair_reason_text(QmPairReason r)
{
    switch (r) {
    case QM_PAIR_OK:
        return "paired";
    case QM_PAIR_NO_PARTNER:
        return "the other input has no frame for it";
    case QM_PAIR_TOO_FAR:
        return "the nearest frame of the other input is beyond the pairing "
               "tolerance";
    case QM_PAIR_TAKEN:
        return "its nearest frame of the other input is nearer to another "
               "frame";
    case QM_PAIR_GAP:
        return "frames were lost (a gap in the frame numbers or a "
               "discontinuity) and there are no timestamps to resynchronise";
    case QM_PAIR_NOT_COMPARABLE:
        return "one input has timestamps and the other has none";
    }
    return "?";
}

const char *qm_pair_mode_text(QmPairMode m)
{
    switch (m) {
    case QM_PAIR_BY_TIME:
        return "by running time";
    case QM_PAIR_BY_OFFSET:
        return "by frame number (buffer offset), as there are no timestamps";
    case QM_PAIR_BY_ARRIVAL:
        return "in arrival order, as there are no timestamps or frame "
               "numbers; a discontinuity stops the pairing";
    case QM_PAIR_MIXED:
        return "not at all: one input has timestamps and the other has none";
    }
    return "?";
}
