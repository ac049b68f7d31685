/* qmetric-probe: Prometheus text exposition of the probes (see expo.h).
 * Every family is written once (HELP, TYPE, then the sample of every
 * probe), as the format requires. */
#include "expo.h"

#include <math.h>
#include <string.h>

#include "probe.h"

/* a label value: backslash, double quote and newline escaped */
static void
append_label (GString * s, const gchar * key, const gchar * value)
{
  g_string_append_printf (s, "%s=\"", key);
  for (; *value; value++) {
    if (*value == '\\' || *value == '"')
      g_string_append_c (s, '\\');
    if (*value == '\n')
      g_string_append (s, "\\n");
    else
      g_string_append_c (s, *value);
  }
  g_string_append_c (s, '"');
}

static void
append_double (GString * s, gdouble v)
{
  gchar buf[G_ASCII_DTOSTR_BUF_SIZE];

  if (isnan (v))
    g_string_append (s, "NaN");
  else if (isinf (v))
    g_string_append (s, v > 0 ? "+Inf" : "-Inf");
  else
    /* locale-independent, round-trips */
    g_string_append (s, g_ascii_dtostr (buf, sizeof (buf), v));
}

static void
family (GString * s, const gchar * name, const gchar * type,
    const gchar * help)
{
  g_string_append_printf (s, "# HELP %s %s\n# TYPE %s %s\n", name, help,
      name, type);
}

/* name{probe="..."<extra>} value */
static void
sample (GString * s, const gchar * name, const Probe * p, const gchar * k1,
    const gchar * v1, const gchar * k2, const gchar * v2, gdouble value)
{
  g_string_append_printf (s, "%s{", name);
  append_label (s, "probe", p->name);
  if (k1) {
    g_string_append_c (s, ',');
    append_label (s, k1, v1);
  }
  if (k2) {
    g_string_append_c (s, ',');
    append_label (s, k2, v2);
  }
  g_string_append (s, "} ");
  append_double (s, value);
  g_string_append_c (s, '\n');
}

#define EACH_PROBE(probes, p) \
  for (guint _i = 0; _i < (probes)->len && \
      ((p) = g_ptr_array_index ((probes), _i)); _i++)

/* a counter family: one sample per probe from the field at `offset` */
static void
counter (GString * s, GPtrArray * probes, const gchar * name,
    const gchar * help, gsize offset)
{
  Probe *p;

  family (s, name, "counter", help);
  EACH_PROBE (probes, p)
      sample (s, name, p, NULL, NULL, NULL, NULL,
      (gdouble) G_STRUCT_MEMBER (guint64, p, offset));
}

/* an error or a reason as a label value: at most PROBE_ERROR_MAX bytes,
 * cut at a character boundary */
static gchar *
bounded_label (const gchar * e)
{
  const gchar *end;

  if (strlen (e) <= PROBE_ERROR_MAX)
    return g_strdup (e);
  if (!g_utf8_validate (e, PROBE_ERROR_MAX, &end))
    return g_strndup (e, end - e);
  end = g_utf8_find_prev_char (e, e + PROBE_ERROR_MAX + 1);
  return g_strndup (e, end - e);
}

/* the last window is exported while it is of the running pipeline and
 * pairs are being scored: stale scores disappear, and Prometheus marks
 * their series stale, instead of plotting the last value for ever */
static gboolean
window_fresh (const Probe * p)
{
  return p->state == PROBE_SCORING && p->last_fresh;
}

gchar *
expo_render (GPtrArray * probes, gsize * len)
{
  GString *s = g_string_new (NULL);
  Probe *p;
  guint k, j;

  family (s, "qmetric_probe_up", "gauge",
      "1 while the probe scores pairs (one within its stall timeout), else 0");
  EACH_PROBE (probes, p)
      sample (s, "qmetric_probe_up", p, NULL, NULL, NULL, NULL,
      p->state == PROBE_SCORING);
  family (s, "qmetric_probe_state", "gauge",
      "The probe's state, 1 on the series of the current one: starting, "
      "waiting (no pair yet), scoring, stalled (no pair for the stall "
      "timeout), failed (waiting to restart); reason: why it does not score");
  EACH_PROBE (probes, p) {
    gchar *reason = p->reason ? bounded_label (p->reason) : NULL;
    sample (s, "qmetric_probe_state", p, "state", probe_state_names[p->state],
        reason ? "reason" : NULL, reason, 1);
    g_free (reason);
  }
  family (s, "qmetric_probe_last_error_info", "gauge",
      "The probe's last error (pipeline error, or no pair scored within "
      "its restart timeout), 1 once there was one");
  EACH_PROBE (probes, p) {
    if (p->last_error) {
      gchar *e = bounded_label (p->last_error);
      sample (s, "qmetric_probe_last_error_info", p, "error", e, NULL, NULL,
          1);
      g_free (e);
    }
  }

  counter (s, probes, "qmetric_frames_total",
      "Frame pairs compared, counted as their window ends",
      G_STRUCT_OFFSET (Probe, frames));
  family (s, "qmetric_unmatched_frames_total", "counter",
      "Frames with no partner on the other input, not compared");
  EACH_PROBE (probes, p) {
    sample (s, "qmetric_unmatched_frames_total", p, "side", "reference",
        NULL, NULL, (gdouble) p->unmatched_ref);
    sample (s, "qmetric_unmatched_frames_total", p, "side", "distorted",
        NULL, NULL, (gdouble) p->unmatched_dist);
  }
  counter (s, probes, "qmetric_unreadable_frames_total",
      "Frame pairs that could not be read (smaller than their caps say)",
      G_STRUCT_OFFSET (Probe, unreadable));
  counter (s, probes, "qmetric_skipped_frames_total",
      "Frame pairs compared but not scored, to keep up with a live source "
      "(the element's max-skip)", G_STRUCT_OFFSET (Probe, skipped));
  counter (s, probes, "qmetric_windows_total", "Reporting windows ended",
      G_STRUCT_OFFSET (Probe, windows));
  counter (s, probes, "qmetric_probe_errors_total",
      "Pipeline errors and quiet pipelines restarted (each one stops the "
      "pipeline and schedules a restart)",
      G_STRUCT_OFFSET (Probe, errors));
  counter (s, probes, "qmetric_probe_restarts_total",
      "Pipeline restarts after an error or the end of the input",
      G_STRUCT_OFFSET (Probe, restarts));

  family (s, "qmetric_window_score", "gauge",
      "Pooled score of a feature over the last window (stat: mean, "
      "harmonic-mean, min, max, p1, p5, as selected by stats=)");
  EACH_PROBE (probes, p) {
    for (j = 0; window_fresh (p) && j < p->last->len; j++) {
      ProbeFeature *f = &g_array_index (p->last, ProbeFeature, j);
      for (k = 0; k < PROBE_N_STATS; k++)
        if (p->stats & (1u << k))
          sample (s, "qmetric_window_score", p, "feature", f->feature, "stat",
            probe_stat_names[k], f->v[k]);
    }
  }
  family (s, "qmetric_window_frames", "gauge",
      "Frames with a score of the feature in the last window");
  EACH_PROBE (probes, p) {
    for (j = 0; window_fresh (p) && j < p->last->len; j++) {
      ProbeFeature *f = &g_array_index (p->last, ProbeFeature, j);
      sample (s, "qmetric_window_frames", p, "feature", f->feature, NULL,
          NULL, (gdouble) f->frames);
    }
  }
  family (s, "qmetric_window_pairs", "gauge",
      "Frame pairs compared in the last window");
  EACH_PROBE (probes, p) {
    if (window_fresh (p))
      sample (s, "qmetric_window_pairs", p, NULL, NULL, NULL, NULL,
          (gdouble) p->last_pairs);
  }
  family (s, "qmetric_window_end_running_time_seconds", "gauge",
      "Running time of the pipeline at the end of the last window");
  EACH_PROBE (probes, p) {
    if (window_fresh (p) && p->last_end_rt != GST_CLOCK_TIME_NONE)
      sample (s, "qmetric_window_end_running_time_seconds", p, NULL, NULL,
          NULL, NULL, p->last_end_rt / 1e9);
  }
  family (s, "qmetric_window_timestamp_seconds", "gauge",
      "Unix time at which the last window was reported (kept when the "
      "window's values are no longer exported)");
  EACH_PROBE (probes, p) {
    if (p->windows)
      sample (s, "qmetric_window_timestamp_seconds", p, NULL, NULL, NULL,
          NULL, p->last_unix_us / 1e6);
  }

  family (s, "qmetric_frame_vmaf", "histogram",
      "Per-frame VMAF score (the \"vmaf\" field of each frame's message)");
  EACH_PROBE (probes, p) {
    guint64 cum = 0;
    gchar le[G_ASCII_DTOSTR_BUF_SIZE];
    /* a probe without a "vmaf" score (other metrics, several models)
     * would only export zeros */
    if (!p->vmaf_count)
      continue;
    for (k = 0; k <= PROBE_VMAF_BUCKETS; k++) {
      cum += p->vmaf_buckets[k];
      if (k < PROBE_VMAF_BUCKETS)
        g_ascii_dtostr (le, sizeof (le), probe_vmaf_bounds[k]);
      else
        strcpy (le, "+Inf");
      sample (s, "qmetric_frame_vmaf_bucket", p, "le", le, NULL, NULL,
          (gdouble) cum);
    }
    sample (s, "qmetric_frame_vmaf_sum", p, NULL, NULL, NULL, NULL,
        p->vmaf_sum);
    sample (s, "qmetric_frame_vmaf_count", p, NULL, NULL, NULL, NULL,
        (gdouble) p->vmaf_count);
  }
  *len = s->len;
  return g_string_free (s, FALSE);
}
