/* GStreamer qmetric: what the element reports (gstqmetricreport.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <string.h>

#include <gst/video/video.h>

#include "gstqmetricmeta.h"
#include "gstqmetricreport.h"
#include "partial.h"

GST_DEBUG_CATEGORY_STATIC (gst_qmetric_report_debug);
#define GST_CAT_DEFAULT gst_qmetric_report_debug

void
gst_qmetric_report_init (GstQmetricReport * r, GstElement * element)
{
  GST_DEBUG_CATEGORY_INIT (gst_qmetric_report_debug, "qmetricreport", 0,
      "qmetric: scores, logs, windows and the summary");
  memset (r, 0, sizeof (*r));
  r->element = element;
  gst_qmetric_warn_init (&r->warn, element);
}

static void
free_features (GstQmetricReport * r)
{
  guint i;

  for (i = 0; r->pools && i < r->n_features; i++)
    qm_pool_clear (&r->pools[i]);
  g_clear_pointer (&r->pools, g_free);
  g_clear_pointer (&r->aggs, qm_aggregates_free);
  r->aggs_off = FALSE;
  g_clear_pointer (&r->names, g_free);
  g_clear_pointer (&r->quarks, g_free);
  r->n_features = 0;
}

void
gst_qmetric_report_clear (GstQmetricReport * r)
{
  free_features (r);
  g_clear_pointer (&r->win, qm_window_free);
  g_clear_pointer (&r->log_location, g_free);
  g_clear_pointer (&r->identity, g_free);
  g_clear_pointer (&r->backend_note, g_free);
  gst_qmetric_warn_clear (&r->warn);
}

/* Text that came from outside (paths) made valid UTF-8 for a GError. */
static gchar *
valid_utf8 (const gchar * s)
{
  return g_utf8_make_valid (s ? s : "", -1);
}

/* Counters, pools and times of a new summary. */
static void
reset_counts (GstQmetricReport * r)
{
  guint i;

  r->n_pairs = r->n_scored = 0;
  r->unmatched_ref = r->unmatched_dist = 0;
  r->unreadable = r->out_of_range = 0;
  r->skipped = 0;
  r->cuda_in_place = r->cuda_copied = 0;
  r->flushes = 0;
  r->first_stream_time = r->last_stream_time = GST_CLOCK_TIME_NONE;
  for (i = 0; r->pools && i < r->n_features; i++) {
    qm_pool_clear (&r->pools[i]);
    qm_pool_init (&r->pools[i]);
  }
  g_clear_pointer (&r->aggs, qm_aggregates_free);
  r->aggs_off = FALSE;
  r->t_start = g_get_monotonic_time ();
}

/* The log completed: the metrics' own pooled values, then the pooled
 * values of every feature (qm_log_close()). */
static int
close_log (GstQmetricReport * r, guint pool, double fps)
{
  const char *key;
  double v;
  guint i;
  int err;

  for (i = 0; (key = qm_aggregates_get (r->aggs, i, &v)); i++)
    if (qm_log_aggregate (r->log, key, v) < 0) {
      GST_WARNING_OBJECT (r->element, "no memory for the log's aggregate "
          "values");
      break;
    }
  err = qm_log_close (r->log, r->pools, pool, fps);
  r->log = NULL;
  return err;
}

/* ---- windows ---- */

/* The counts of frames not scored, as a window and the summary give them
 * (after "pairs"). */
static void
set_counts (GstStructure * s, guint64 unmatched_ref, guint64 unmatched_dist,
    guint64 unreadable, guint64 skipped)
{
  gst_structure_set (s,
      "unmatched", G_TYPE_UINT64, unmatched_ref + unmatched_dist,
      "unmatched-reference", G_TYPE_UINT64, unmatched_ref,
      "unmatched-distorted", G_TYPE_UINT64, unmatched_dist,
      "unreadable", G_TYPE_UINT64, unreadable,
      "skipped", G_TYPE_UINT64, skipped, NULL);
}

/* The "qmetric-window" message's structure of one ended window. */
static GstStructure *
window_structure (GstQmetricReport * r, const QmWindowStats * st)
{
  GstStructure *s = gst_structure_new ("qmetric-window",
      "window", G_TYPE_UINT64, st->index,
      "start-running-time", G_TYPE_UINT64, st->start_rt,
      "end-running-time", G_TYPE_UINT64, st->end_rt,
      "reason", G_TYPE_STRING, st->reason,
      "pairs", G_TYPE_UINT64, st->pairs, NULL);
  guint i;

  set_counts (s, st->unmatched_ref, st->unmatched_dist, st->unreadable,
      st->skipped);

  for (i = 0; i < st->n_features && i < r->n_features; i++) {
    QmPool *p = &st->pools[i];
    GstStructure *f;

    if (!p->n)
      continue;
    /* every pooling method, whatever the pool property says: a window is
     * small and a monitor wants its low percentiles */
    f = gst_structure_new ("pooled",
        "frames", G_TYPE_UINT64, (guint64) p->n,
        "mean", G_TYPE_DOUBLE, qm_pool_mean (p),
        "harmonic-mean", G_TYPE_DOUBLE, qm_pool_harmonic_mean (p),
        "min", G_TYPE_DOUBLE, p->min,
        "max", G_TYPE_DOUBLE, p->max,
        "p1", G_TYPE_DOUBLE, qm_pool_percentile (p, 1.0),
        "p5", G_TYPE_DOUBLE, qm_pool_percentile (p, 5.0), NULL);
    gst_structure_id_set (s, r->quarks[i], GST_TYPE_STRUCTURE, f, NULL);
    gst_structure_free (f);
  }
  return s;
}

/* qmwindow.c's callback: one window ended. */
static void
window_emit (void *opaque, QmWindowStats * st)
{
  GstQmetricReport *r = opaque;

  if (r->log) {
    QmLogWindow lw = { st->index, st->start_rt, st->end_rt, st->reason,
      st->pairs, st->unmatched_ref, st->unmatched_dist, st->unreadable,
      st->skipped, MIN (st->n_features, r->n_features), st->pools,
      QM_POOL_LIBVMAF | QM_POOL_P1 | QM_POOL_P5
    };
    if (qm_log_window (r->log, &lw) < 0)
      GST_ELEMENT_WARNING (r->element, RESOURCE, WRITE,
          ("Could not write to the log file"), (NULL));
  }
  gst_element_post_message (r->element,
      gst_message_new_element (GST_OBJECT (r->element),
          window_structure (r, st)));
}

void
gst_qmetric_report_leaving (GstQmetricReport * r, GstQmetricScoredPair * p)
{
  GstClockTime rt = p->running_time;
  gboolean key;

  if (!r->win)
    return;
  key = p->dist_buf &&
      !GST_BUFFER_FLAG_IS_SET (p->dist_buf, GST_BUFFER_FLAG_DELTA_UNIT);
  if (!p->matched)
    qm_window_event (r->win, rt, QM_WINDOW_UNMATCHED_DIST, key, TRUE);
  else if (p->unreadable)
    qm_window_event (r->win, rt, QM_WINDOW_UNREADABLE, key, TRUE);
  else
    qm_window_pair (r->win, rt, p->duration, (key ? QM_WINDOW_PAIR_KEY :
            0) | (p->skipped ? QM_WINDOW_PAIR_SKIPPED : 0), r->n_features,
        p->has_scores ? p->values : NULL, p->present);
}

/* ---- the stream ---- */

gboolean
gst_qmetric_report_start (GstQmetricReport * r, const gchar * window)
{
  QmWindowSpec spec;
  gchar err[256];

  r->segment = 0;
  r->frame_times = qm_frame_times_wanted ();
  r->backend = QM_BACKEND_CPU;
  g_clear_pointer (&r->backend_note, g_free);
  gst_qmetric_warn_reset (&r->warn);
  r->late = 0;
  g_clear_pointer (&r->win, qm_window_free);
  if (qm_window_parse (window, &spec, err, sizeof (err)) != 0) {
    GST_ELEMENT_ERROR (r->element, LIBRARY, SETTINGS, ("%s", err), (NULL));
    return FALSE;
  }
  if (spec.kind != QM_WINDOW_OFF)
    r->win = qm_window_new (&spec, window_emit, r);
  free_features (r);
  reset_counts (r);
  return TRUE;
}

void
gst_qmetric_report_stop (GstQmetricReport * r, guint pool)
{
  qm_window_finish (r->win, "stop");
  g_clear_pointer (&r->win, qm_window_free);
  if (r->log)
    close_log (r, pool, 0);
  free_features (r);
}

void
gst_qmetric_report_flush (GstQmetricReport * r, gboolean new_segment)
{
  if (new_segment) {
    r->segment++;
    reset_counts (r);
  } else {
    r->flushes++;
  }
}

/* ---- engine ---- */

void
gst_qmetric_report_backend (GstQmetricReport * r, QmEngine * engine,
    const QmSettings * s)
{
  char *id;

  r->backend = qm_engine_backend (engine);
  if (s->backend == QM_BACKEND_AUTO &&
      g_strcmp0 (r->backend_note, qm_engine_backend_note (engine))) {
    /* backend=auto chose: one line says where and why (once, and again
     * only if a reopened engine chose otherwise) */
    g_free (r->backend_note);
    r->backend_note = g_strdup (qm_engine_backend_note (engine));
    GST_ELEMENT_INFO (r->element, RESOURCE, SETTINGS,
        ("backend=auto: the metrics run on the %s (%s)",
            r->backend == QM_BACKEND_CUDA ? "GPU" : "CPU", r->backend_note),
        (NULL));
  }
  /* kept for the summary: the engine is closed before it is posted */
  id = qm_partial_engine_settings (engine, s);
  g_free (r->identity);
  r->identity = g_strdup (id);
  free (id);
}

gboolean
gst_qmetric_report_features (GstQmetricReport * r, QmEngine * engine)
{
  guint i;
  gboolean same;

  if (r->n_features == 0) {
    r->n_features = qm_engine_n_features (engine);
    r->names = g_new0 (const gchar *, r->n_features);
    r->quarks = g_new0 (GQuark, r->n_features);
    r->pools = g_new0 (QmPool, r->n_features);
    for (i = 0; i < r->n_features; i++) {
      r->names[i] = g_intern_string (qm_engine_feature_name (engine, i));
      r->quarks[i] = g_quark_from_string (r->names[i]);
      qm_pool_init (&r->pools[i]);
    }
    return TRUE;
  }
  /* a new engine after a caps change must report the same features */
  same = r->n_features == qm_engine_n_features (engine);
  for (i = 0; same && i < r->n_features; i++)
    same = !strcmp (r->names[i], qm_engine_feature_name (engine, i));
  return same;
}

gboolean
gst_qmetric_report_aggregates (GstQmetricReport * r, QmEngine * engine,
    gboolean reconfigured)
{
  if (reconfigured) {
    g_clear_pointer (&r->aggs, qm_aggregates_free);
    r->aggs_off = TRUE;
    return TRUE;
  }
  /* before any pair the engine may open again (XPSNR's rate from the
   * distorted caps): the values follow its options */
  if (r->aggs_off || (r->aggs && r->n_pairs))
    return TRUE;
  qm_aggregates_free (r->aggs);
  r->aggs = qm_aggregates_new (engine);
  return r->aggs != NULL;
}

gboolean
gst_qmetric_report_open_log (GstQmetricReport * r, const gchar * location,
    QmLogFormat format, gint w, gint h)
{
  char *err = NULL;

  if (!location || r->log)
    return TRUE;
  r->log = qm_log_open (location, format, r->n_features, r->names, w, h,
      &err);
  if (!r->log) {
    gchar *why = valid_utf8 (err);
    gchar *loc = valid_utf8 (location);
    GST_ELEMENT_ERROR (r->element, RESOURCE, OPEN_WRITE,
        ("%s", why), ("log-location=%s", loc));
    g_free (loc);
    g_free (why);
    free (err);
    return FALSE;
  }
  g_free (r->log_location);
  r->log_location = g_strdup (location);
  return TRUE;
}

void
gst_qmetric_report_reconfigured (GstQmetricReport * r, GstClockTime rt,
    const GstVideoInfo * info)
{
  /* motion and the other temporal features start afresh with the new
   * engine, at this pair */
  gst_element_post_message (r->element,
      gst_message_new_element (GST_OBJECT (r->element),
          gst_structure_new ("qmetric-reconfigured",
              "index", G_TYPE_UINT64, r->n_pairs,
              "running-time", G_TYPE_UINT64, rt,
              "width", G_TYPE_INT, GST_VIDEO_INFO_WIDTH (info),
              "height", G_TYPE_INT, GST_VIDEO_INFO_HEIGHT (info),
              "format", G_TYPE_STRING,
              gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (info)),
              NULL)));
}

/* ---- pairs ---- */

/* A log that cannot be written (disk full, say) is an error: a probe whose
 * record silently stops is worse than one that stops.  The log is closed
 * (what can still be written, is) and not touched again. */
static void
log_write_error (GstQmetricReport * r, const gchar * what)
{
  const int e = errno;          /* of the failed write, before anything */
  gchar *where = valid_utf8 (r->log_location);

  GST_ELEMENT_ERROR (r->element, RESOURCE, WRITE,
      ("%s \"%s\": %s", what, where, g_strerror (e)),
      ("log-location=%s", where));
  g_free (where);
  if (r->log) {
    qm_log_close (r->log, NULL, 0, 0);
    r->log = NULL;
  }
}

void
gst_qmetric_report_compared (GstQmetricReport * r, GstQmetricScoredPair * p)
{
  if (!GST_CLOCK_TIME_IS_VALID (r->first_stream_time))
    r->first_stream_time = p->stream_time;
  r->last_stream_time = p->stream_time;
  p->index = r->n_pairs++;
  r->skipped += p->skipped;
}

static GstStructure *
scores_structure (GstQmetricReport * r, GstQmetricScoredPair * p)
{
  GstStructure *s = gst_structure_new ("qmetric",
      "index", G_TYPE_UINT64, p->index,
      "timestamp", G_TYPE_UINT64, p->pts,
      "stream-time", G_TYPE_UINT64, p->stream_time,
      "running-time", G_TYPE_UINT64, p->running_time,
      "duration", G_TYPE_UINT64, p->duration, NULL);
  guint i;

  for (i = 0; i < r->n_features; i++) {
    if (p->present[i])
      gst_structure_id_set (s, r->quarks[i], G_TYPE_DOUBLE, p->values[i],
          NULL);
  }
  if (r->frame_times)
    qm_frame_times_add (s, &p->times);
  return s;
}

GstFlowReturn
gst_qmetric_report_scores (GstQmetricReport * r, GstQmetricScoredPair * p,
    const QmResult * res, gboolean post)
{
  guint i;

  p->done = TRUE;
  p->has_scores = res->computed;
  /* every result: a metric's own pooled values may count skipped ones */
  qm_aggregates_add (r->aggs, res->value, res->present);
  if (!res->computed)
    return GST_FLOW_OK;
  qm_frame_times_stamp (&p->times, QM_FT_SCORED);
  p->values = g_memdup2 (res->value, r->n_features * sizeof (gdouble));
  p->present = g_memdup2 (res->present, r->n_features);
  for (i = 0; i < r->n_features; i++)
    if (res->present[i])
      qm_pool_add (&r->pools[i], res->value[i]);
  r->n_scored++;
  if (r->log && qm_log_frame (r->log, p->index, p->values, p->present) < 0) {
    log_write_error (r, "Could not write to the log file");
    return GST_FLOW_ERROR;
  }
  if (post)
    gst_element_post_message (r->element,
        gst_message_new_element (GST_OBJECT (r->element),
            scores_structure (r, p)));
  return GST_FLOW_OK;
}

/* The tag "qmetric-<feature>", registered at its first use. */
static void
ensure_tag (const gchar * feature, gchar * tag, gsize len)
{
  g_snprintf (tag, len, "qmetric-%s", feature);
  if (!gst_tag_exists (tag)) {
    gchar *blurb = g_strdup_printf ("%s score of the frame, computed by the "
        "qmetric element", feature);
    /* registered once per name and never freed: tags are process-global */
    gst_tag_register (g_intern_string (tag), GST_TAG_FLAG_META, G_TYPE_DOUBLE,
        g_intern_string (tag), g_intern_string (blurb),
        gst_tag_merge_use_first);
    g_free (blurb);
  }
}

GstTagList *
gst_qmetric_report_decorate (GstQmetricReport * r, GstQmetricScoredPair * p,
    GstBuffer ** buf)
{
  const gchar **names;
  gdouble *values;
  GstTagList *tags;
  gchar tag[256];
  guint i, n = 0;

  if (!p->has_scores)
    return NULL;
  *buf = gst_buffer_make_writable (*buf);
  tags = gst_tag_list_new_empty ();
  gst_tag_list_set_scope (tags, GST_TAG_SCOPE_STREAM);
  for (i = 0; i < r->n_features; i++) {
    if (!p->present[i])
      continue;
    ensure_tag (r->names[i], tag, sizeof (tag));
    gst_tag_list_add (tags, GST_TAG_MERGE_REPLACE, tag, p->values[i], NULL);
  }
  /* the meta carries the present scores only */
  names = g_newa (const gchar *, r->n_features);
  values = g_newa (gdouble, r->n_features);
  for (i = 0; i < r->n_features; i++) {
    if (p->present[i]) {
      names[n] = r->names[i];
      values[n++] = p->values[i];
    }
  }
  gst_buffer_add_qmetric_meta (*buf, p->index, n, names, values);
  return tags;
}

/* ---- frames not compared ---- */

void
gst_qmetric_report_unmatched (GstQmetricReport * r, gboolean is_ref,
    GstClockTime rt, QmPairReason why, gboolean in_order)
{
  guint64 n;

  /* an unmatched distorted frame enters the window when it leaves */
  if (is_ref) {
    qm_window_event (r->win, rt, QM_WINDOW_UNMATCHED_REF, FALSE, in_order);
    n = ++r->unmatched_ref;
  } else {
    n = ++r->unmatched_dist;
  }
  gst_qmetric_warn_unmatched (&r->warn, is_ref, rt, why, n);
}

void
gst_qmetric_report_late (GstQmetricReport * r, gboolean is_ref,
    GstClockTime rt, GstClockTime late)
{
  gst_qmetric_warn_late (&r->warn, is_ref, rt, late, ++r->late);
}

void
gst_qmetric_report_not_compared (GstQmetricReport * r,
    GstQmetricMapResult why, const gchar * side, GstClockTime rt,
    const gchar * problem)
{
  guint64 n = why == GST_QMETRIC_MAP_OUT_OF_RANGE ? ++r->out_of_range :
      ++r->unreadable;

  gst_qmetric_warn_not_compared (&r->warn, why, side, rt, problem, n);
}

void
gst_qmetric_report_cuda (GstQmetricReport * r, GstQmetricCudaAccess a,
    gboolean in_place)
{
  if (in_place) {
    r->cuda_in_place++;
    return;
  }
  if (a != GST_QMETRIC_CUDA_HOST)
    r->cuda_copied++;
  if (a == GST_QMETRIC_CUDA_FOREIGN)
    gst_qmetric_warn_foreign_context (&r->warn);
}

/* ---- the end ---- */

static GstStructure *
summary_structure (GstQmetricReport * r, guint pool)
{
  GstStructure *s;
  guint i, m;

  s = gst_structure_new ("qmetric-summary",
      "frames", G_TYPE_UINT64, r->n_scored,
      "pairs", G_TYPE_UINT64, r->n_pairs, NULL);
  set_counts (s, r->unmatched_ref, r->unmatched_dist, r->unreadable,
      r->skipped);
  gst_structure_set (s,
      "cuda-in-place", G_TYPE_UINT64, r->cuda_in_place,
      "cuda-copied", G_TYPE_UINT64, r->cuda_copied,
      "warnings-suppressed", G_TYPE_UINT64,
      gst_qmetric_warn_suppressed (&r->warn),
      "backend", G_TYPE_STRING, r->backend == QM_BACKEND_CUDA ? "cuda" : "cpu",
      "out-of-range", G_TYPE_UINT64, r->out_of_range,
      "segment", G_TYPE_UINT, r->segment,
      "flushes", G_TYPE_UINT, r->flushes,
      "first-stream-time", G_TYPE_UINT64, r->first_stream_time,
      "last-stream-time", G_TYPE_UINT64, r->last_stream_time, NULL);
  if (r->identity)
    gst_structure_set (s, "identity", G_TYPE_STRING, r->identity, NULL);
  for (i = 0; i < r->n_features; i++) {
    GstStructure *f;
    if (!r->pools[i].n)
      continue;
    f = gst_structure_new_empty ("pooled");
    for (m = 1; m <= QM_POOL_P5; m <<= 1) {
      if (pool & m) {
        gchar *field = g_strdelimit (g_strdup (qm_pool_method_name (m)), "_",
            '-');
        gst_structure_set (f, field, G_TYPE_DOUBLE,
            qm_pool_value (&r->pools[i], m), NULL);
        g_free (field);
      }
    }
    gst_structure_id_set (s, r->quarks[i], GST_TYPE_STRUCTURE, f, NULL);
    gst_structure_free (f);
  }
  return s;
}

GstFlowReturn
gst_qmetric_report_finish (GstQmetricReport * r, guint pool)
{
  GstFlowReturn ret = GST_FLOW_OK;
  double secs = (g_get_monotonic_time () - r->t_start) / 1e6;

  qm_window_finish (r->win, "eos");
  if (r->log) {
    int err = close_log (r, pool, secs > 0 ? r->n_scored / secs : 0);
    if (err < 0) {
      log_write_error (r, "Could not complete the log file");
      ret = GST_FLOW_ERROR;
    }
  }
  gst_element_post_message (r->element,
      gst_message_new_element (GST_OBJECT (r->element),
          summary_structure (r, pool)));
  GST_INFO_OBJECT (r->element, "compared %" G_GUINT64_FORMAT " pairs, %"
      G_GUINT64_FORMAT " reference and %" G_GUINT64_FORMAT
      " distorted frames unmatched", r->n_pairs, r->unmatched_ref,
      r->unmatched_dist);
  return ret;
}
