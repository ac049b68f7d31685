/* qmetric-probe: one probe, a pipeline with a qmetric element, and what it
 * has reported.  Everything here runs on the main loop's thread (the bus
 * watches and the HTTP server share it), so the state needs no lock. */
#ifndef QM_PROBE_H
#define QM_PROBE_H

#include <gst/gst.h>

/* upper bounds of the per-frame VMAF histogram (plus +Inf) */
#define PROBE_VMAF_BUCKETS 12
extern const double probe_vmaf_bounds[PROBE_VMAF_BUCKETS];

/* restart delay: doubles after each failure from the first to the last */
#define PROBE_BACKOFF_FIRST_MS 1000
#define PROBE_BACKOFF_MAX_MS 60000

/* pooled values of a window, in the order of probe_stat_names */
#define PROBE_N_STATS 6
extern const char *const probe_stat_names[PROBE_N_STATS];

typedef struct
{
  gchar *feature;
  gdouble v[PROBE_N_STATS];
  guint64 frames;
} ProbeFeature;

typedef struct
{
  /* configuration */
  gchar *name;
  gchar *description;           /* gst-launch description */
  gchar *element;               /* name of the qmetric element in it */
  gchar *window;                /* set when the element's window is "none" */

  /* the running pipeline */
  GstElement *pipeline;
  GstElement *qmetric;
  guint bus_watch;
  guint retry_source;
  guint backoff_ms;
  gboolean up;

  /* counters since the process started (they survive restarts) */
  guint64 frames, unmatched_ref, unmatched_dist, unreadable;
  guint64 windows, errors, restarts;
  guint64 vmaf_buckets[PROBE_VMAF_BUCKETS + 1];   /* cumulative at output */
  guint64 vmaf_count;
  gdouble vmaf_sum;
  gchar *last_error;

  /* the last window */
  GArray *last;                 /* ProbeFeature */
  guint64 last_pairs, last_unmatched;
  GstClockTime last_start_rt, last_end_rt;
  gint64 last_unix_us;          /* when it arrived (wall clock) */
} Probe;

/**
 * Probes from a GKeyFile: one group per probe, either pipeline= (a
 * gst-launch description holding a qmetric named element=, default "q") or
 * reference= and distorted= URIs (metrics=, model=, backend=, width=,
 * height= optional); window= (default "1s").  Every description is parsed
 * once to check it.  Returns NULL with *error set.
 */
GPtrArray *probe_load_config (const gchar * path, GError ** error);

/** Start the probe's pipeline (on failure: counted, retried later). */
void probe_start (Probe * p);

/** Stop the pipeline and any pending restart. */
void probe_stop (Probe * p);

void probe_free (Probe * p);

#endif /* QM_PROBE_H */
