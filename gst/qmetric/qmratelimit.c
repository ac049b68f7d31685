/* gst-qmetric: how often a warning of one cause may be posted (see
 * qmratelimit.h). */
#include "qmratelimit.h"

#include <string.h>

void qm_rate_init(QmRateLimit *r, unsigned burst, int64_t interval_us)
{
    memset(r, 0, sizeof(*r));
    r->burst = burst;
    r->interval_us = interval_us;
}

bool qm_rate_pass(QmRateLimit *r, int64_t now_us, uint64_t *held)
{
    if (r->passed >= r->burst && now_us - r->last_us < r->interval_us) {
        r->held++;
        r->held_total++;
        return false;
    }
    if (r->passed < r->burst)
        r->passed++;
    r->last_us = now_us;
    if (held)
        *held = r->held;
    r->held = 0;
    return true;
}
