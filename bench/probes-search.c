/* qmetric-bench-probes: which probe count to run next, in a sweep or a
 * bisection for the largest N kept at real time. */
#include "probes.h"

void pb_search_sweep(PbSearch *s, const int *list, int n, bool keep_going)
{
    *s = (PbSearch){ .list = list, .n_list = n, .keep_going = keep_going };
}

void pb_search_bisect(PbSearch *s, int lo, int hi, int step)
{
    *s = (PbSearch){ .lo = lo, .hi = hi, .step = step > 0 ? step : 1 };
}

int pb_search_next(PbSearch *s)
{
    if (s->stop)
        return 0;
    if (s->list)
        return s->next < s->n_list ? s->list[s->next] : 0;
    /* the bracket: (good, bad), good = lo - 1 and bad = hi + 1 until run */
    const int good = s->good ? s->good : s->lo - 1;
    const int bad = s->bad ? s->bad : s->hi + 1;
    if (good >= s->hi || bad <= s->lo)
        return 0;
    if (bad - good <= s->step) {
        /* narrow enough; but an end of the range never run is run, so that
         * "nothing kept" and "all kept" are measured, not inferred */
        if (good < s->lo)
            return s->lo;
        if (bad > s->hi)
            return s->hi;
        return 0;
    }
    /* the middle, but a known end of the range is not run again */
    int n = good + (bad - good) / 2;
    return n < s->lo ? s->lo : n > s->hi ? s->hi : n;
}

void pb_search_record(PbSearch *s, int n, bool kept)
{
    if (kept && n > s->good && (!s->bad || n < s->bad))
        s->good = n;
    if (!kept && (!s->bad || n < s->bad))
        s->bad = n;
    if (s->list) {
        s->next++;
        if (!kept && !s->keep_going)
            s->stop = true;
    }
}
