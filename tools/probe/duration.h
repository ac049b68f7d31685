/* qmetric-probe: durations in the configuration files. */
#ifndef QM_PROBE_DURATION_H
#define QM_PROBE_DURATION_H

#include <glib.h>

/**
 * A duration as Go writes them ("1s", "500ms", "1m30s", "2.5s", "0"; units
 * ns, us, ms, s, m, h), also "min" for minutes as the qmetric element's
 * window property spells it.  Returns microseconds, or -1 when s is
 * malformed, negative or over a day.
 */
gint64 parse_duration_us (const gchar * s);

#endif /* QM_PROBE_DURATION_H */
