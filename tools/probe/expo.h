/* qmetric-probe: the probes' state in Prometheus's text exposition format
 * (version 0.0.4). */
#ifndef QM_PROBE_EXPO_H
#define QM_PROBE_EXPO_H

#include <glib.h>

#define EXPO_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/** The exposition of every probe in probes (Probe *). */
gchar *expo_render (GPtrArray * probes, gsize * len);

#endif /* QM_PROBE_EXPO_H */
