/* gst-qmetric: how often a warning of one cause may be posted.
 *
 * Plain C (no GStreamer): the element keeps one limiter per cause (a late
 * frame, an unmatched frame, GstAggregator's latency complaint, falling
 * behind...).  The first `burst` warnings of a cause pass; after them at
 * most one per `interval_us`.  The one that passes learns how many were
 * held back since the previous one, so that its text can say so; the
 * total held back is kept for the summary.  Not thread-safe: the caller
 * holds a lock. */
#ifndef QM_RATELIMIT_H
#define QM_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct QmRateLimit {
    unsigned burst;             /* passed at once before the limit applies */
    int64_t interval_us;        /* then at most one per interval */
    unsigned passed;            /* how many passed (saturates at burst) */
    int64_t last_us;            /* when the last one passed */
    uint64_t held;              /* held back since the last one passed */
    uint64_t held_total;        /* held back since qm_rate_init() */
} QmRateLimit;

/** A limiter letting `burst` warnings pass, then one per interval_us. */
void qm_rate_init(QmRateLimit *r, unsigned burst, int64_t interval_us);

/**
 * Whether a warning at monotonic time now_us (microseconds) may be posted.
 * When it may, *held (if given) receives the number held back since the
 * previous one that passed, and that count starts again from 0.
 */
bool qm_rate_pass(QmRateLimit *r, int64_t now_us, uint64_t *held);

#endif /* QM_RATELIMIT_H */
