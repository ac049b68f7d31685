/* qmetric-probe: one probe, a pipeline with a qmetric element, what it has
 * reported, and whether it is scoring.  Everything here runs on the main
 * loop's thread (the bus watches and the HTTP server share it), except the
 * input counters, which the pipeline's streaming threads update. */
#ifndef QM_PROBE_H
#define QM_PROBE_H

#include <gst/gst.h>
#include <stdatomic.h>

/* upper bounds of the per-frame VMAF histogram (plus +Inf) */
#define PROBE_VMAF_BUCKETS 12
extern const double probe_vmaf_bounds[PROBE_VMAF_BUCKETS];

/* restart delay: doubles after each failure from the first to the last */
#define PROBE_BACKOFF_FIRST_MS 1000
#define PROBE_BACKOFF_MAX_MS 60000

/* pooled values of a window, in the order of probe_stat_names */
#define PROBE_N_STATS 6
extern const char *const probe_stat_names[PROBE_N_STATS];

/* default of the stats= key (docs/probe.md); without features=, the
 * feature that stands for each metric is exported (probe.c) */
#define PROBE_DEFAULT_STATS "mean,min,p5"

/* stall-timeout: this many windows of a duration window; else the
 * fallback.  restart-timeout: the default, and never less than twice the
 * stall timeout */
#define PROBE_STALL_WINDOWS 3
#define PROBE_STALL_MIN_US (2 * G_USEC_PER_SEC)
#define PROBE_STALL_FALLBACK_US (10 * G_USEC_PER_SEC)
#define PROBE_RESTART_DEFAULT_US (30 * G_USEC_PER_SEC)
/* how often liveness is checked (probe_tick) */
#define PROBE_TICK_MS 250
/* the last error is exported cut to this many bytes */
#define PROBE_ERROR_MAX 200

typedef enum
{
  PROBE_STARTING,               /* pipeline built, not yet playing */
  PROBE_WAITING,                /* playing, no pair scored since it started */
  PROBE_SCORING,                /* a scored pair left the element within the
                                 * stall timeout */
  PROBE_STALLED,                /* scored, then none for the stall timeout */
  PROBE_FAILED,                 /* an error: waiting to restart */
  PROBE_N_STATES
} ProbeState;
extern const char *const probe_state_names[PROBE_N_STATES];

typedef struct
{
  gchar *feature;
  gdouble v[PROBE_N_STATS];
  guint64 frames;
} ProbeFeature;

/* buffers through one pad of the qmetric element, counted by a pad probe
 * in the streaming thread: on a sink pad every buffer, on the src pad those
 * that carry scores (the pairs scored, in output order) */
typedef struct
{
  const gchar *pad;             /* "ref_sink", "dist_sink", "src" */
  atomic_llong buffers;
  atomic_llong last_us;         /* monotonic time of the last one */
} ProbePadCount;

typedef struct
{
  /* configuration */
  gchar *name;
  gchar *description;           /* gst-launch description */
  gchar *element;               /* name of the qmetric element in it */
  gchar *window;                /* set when the element's window is "none" */
  gchar **features;             /* glob patterns of the exported features;
                                   NULL: each metric's headline feature */
  guint stats;                  /* bit k: probe_stat_names[k] exported */
  gint64 stall_timeout_us;      /* 0: from the window */
  gint64 restart_timeout_us;    /* 0: never restart a quiet pipeline */

  /* the running pipeline */
  GstElement *pipeline;
  GstElement *qmetric;
  guint bus_watch;
  guint retry_source;
  guint backoff_ms;
  ProbePadCount inputs[2];
  ProbePadCount scored;
  gint64 stall_us;              /* in effect for this run */
  gint64 run_start_us;          /* monotonic */

  ProbeState state;
  gchar *reason;                /* why not scoring; NULL when unknown */
  gint64 state_since_us;

  /* counters since the process started (they survive restarts) */
  guint64 frames, unmatched_ref, unmatched_dist, unreadable, skipped;
  guint64 windows, errors, restarts;
  guint64 vmaf_buckets[PROBE_VMAF_BUCKETS + 1];   /* cumulative at output */
  guint64 vmaf_count;
  gdouble vmaf_sum;
  gchar *last_error;

  /* the last window (of the selected features); exported only while it
   * is of this run and the probe is scoring */
  GArray *last;                 /* ProbeFeature */
  gboolean last_fresh;
  guint64 last_pairs, last_unmatched;
  GstClockTime last_start_rt, last_end_rt;
  gint64 last_unix_us;          /* when it arrived (wall clock) */
} Probe;

/**
 * Probes from a GKeyFile (probeconf.c): one group per probe, either
 * pipeline= (a gst-launch description holding a qmetric named element=,
 * default "q") or reference= and distorted= URIs (metrics=, model=,
 * backend=, width=, height=, sync= optional); window= (default "1s");
 * features=, stats=, stall-timeout=, restart-timeout=.  An unknown key is
 * an error.  Every description is parsed once to check it.  Returns NULL
 * with *error set.
 */
GPtrArray *probe_load_config (const gchar * path, GError ** error);

/** Parse p's description; its qmetric element in *qmetric (probeconf.c). */
GstElement *probe_parse (Probe * p, GstElement ** qmetric, GError ** error);

/** Start the probe's pipeline (on failure: counted, retried later). */
void probe_start (Probe * p);

/** Stop the pipeline and any pending restart. */
void probe_stop (Probe * p);

/** Time-driven changes: stalls, and the restart of a quiet pipeline. */
void probe_tick (Probe * p);

void probe_free (Probe * p);

#endif /* QM_PROBE_H */
