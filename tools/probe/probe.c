/* qmetric-probe: probes from the config file, their pipelines, restarts
 * with backoff, and the state the exporter reads (see probe.h). */
#include "probe.h"

#include <math.h>
#include <string.h>

const double probe_vmaf_bounds[PROBE_VMAF_BUCKETS] = {
  10, 20, 30, 40, 50, 60, 70, 80, 85, 90, 95, 100,
};

const char *const probe_stat_names[PROBE_N_STATS] = {
  "mean", "harmonic-mean", "min", "max", "p1", "p5",
};

static void schedule_restart (Probe * p);

/* ---- config ---- */

/* s as a quoted gst-launch value */
static gchar *
quote (const gchar * s)
{
  GString *q = g_string_new ("\"");

  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      g_string_append_c (q, '\\');
    g_string_append_c (q, *s);
  }
  g_string_append_c (q, '"');
  return g_string_free (q, FALSE);
}

/* The description of a reference/distorted URI pair: both decoded,
 * converted to I420 (scaled to width x height where given) and compared. */
static gchar *
uri_description (GKeyFile * kf, const gchar * group, GError ** error)
{
  gchar *ref = g_key_file_get_string (kf, group, "reference", NULL);
  gchar *dist = g_key_file_get_string (kf, group, "distorted", NULL);
  gint w = g_key_file_get_integer (kf, group, "width", NULL);
  gint h = g_key_file_get_integer (kf, group, "height", NULL);
  gboolean sync = !g_key_file_has_key (kf, group, "sync", NULL) ||
      g_key_file_get_boolean (kf, group, "sync", NULL);
  GString *d, *caps;
  static const gchar *const props[] = { "metrics", "model", "backend" };
  guint i;

  if (!ref || !dist) {
    g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND,
        "probe [%s]: needs pipeline=, or both reference= and distorted=",
        group);
    g_free (ref);
    g_free (dist);
    return NULL;
  }
  caps = g_string_new ("video/x-raw,format=I420");
  if (w > 0 && h > 0)
    g_string_append_printf (caps, ",width=%d,height=%d", w, h);
  d = g_string_new (NULL);
  for (i = 0; i < 2; i++) {
    gchar *q = quote (i ? dist : ref);
    g_string_append_printf (d, "uridecodebin uri=%s ! videoconvert ! "
        "videoscale ! %s ! queue ! q.%s ", q, caps->str,
        i ? "dist_sink" : "ref_sink");
    g_free (q);
  }
  g_string_append (d, "qmetric name=q");
  for (i = 0; i < G_N_ELEMENTS (props); i++) {
    gchar *v = g_key_file_get_string (kf, group, props[i], NULL);
    if (v) {
      gchar *q = quote (v);
      g_string_append_printf (d, " %s=%s", props[i], q);
      g_free (q);
    }
    g_free (v);
  }
  g_string_append_printf (d, " ! fakesink sync=%s", sync ? "true" : "false");
  g_string_free (caps, TRUE);
  g_free (ref);
  g_free (dist);
  return g_string_free (d, FALSE);
}

/* Parse description, find the qmetric named `element` in it. */
static GstElement *
parse (Probe * p, GstElement ** qmetric, GError ** error)
{
  GstElement *pipe = gst_parse_launch_full (p->description, NULL,
      GST_PARSE_FLAG_FATAL_ERRORS, error);
  GstElement *q;

  if (!pipe)
    return NULL;
  if (!GST_IS_BIN (pipe) || !(q = gst_bin_get_by_name (GST_BIN (pipe),
              p->element))) {
    g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
        "the pipeline has no element named \"%s\"", p->element);
    gst_object_unref (pipe);
    return NULL;
  }
  if (strcmp (G_OBJECT_TYPE_NAME (q), "GstQmetric")) {
    g_set_error (error, GST_CORE_ERROR, GST_CORE_ERROR_FAILED,
        "element \"%s\" is a %s, not a qmetric", p->element,
        G_OBJECT_TYPE_NAME (q));
    gst_object_unref (q);
    gst_object_unref (pipe);
    return NULL;
  }
  *qmetric = q;
  return pipe;
}

GPtrArray *
probe_load_config (const gchar * path, GError ** error)
{
  GKeyFile *kf = g_key_file_new ();
  GPtrArray *probes = g_ptr_array_new_with_free_func ((GDestroyNotify)
      probe_free);
  gchar **groups = NULL;
  guint i;

  if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, error)) {
    g_prefix_error (error, "%s: ", path);
    goto fail;
  }
  groups = g_key_file_get_groups (kf, NULL);
  if (!groups[0]) {
    g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_GROUP_NOT_FOUND,
        "%s: no probe (a probe is a [group] with pipeline= or reference= "
        "and distorted=)", path);
    goto fail;
  }
  for (i = 0; groups[i]; i++) {
    Probe *p = g_new0 (Probe, 1);
    GstElement *pipe, *q = NULL;

    g_ptr_array_add (probes, p);
    p->name = g_strdup (groups[i]);
    p->element = g_key_file_get_string (kf, groups[i], "element", NULL);
    if (!p->element)
      p->element = g_strdup ("q");
    p->window = g_key_file_get_string (kf, groups[i], "window", NULL);
    if (!p->window)
      p->window = g_strdup ("1s");
    p->description = g_key_file_get_string (kf, groups[i], "pipeline", NULL);
    if (!p->description) {
      g_free (p->element);
      p->element = g_strdup ("q");
      if (!(p->description = uri_description (kf, groups[i], error)))
        goto fail;
    }
    p->last = g_array_new (FALSE, TRUE, sizeof (ProbeFeature));
    p->backoff_ms = PROBE_BACKOFF_FIRST_MS;
    p->last_start_rt = p->last_end_rt = GST_CLOCK_TIME_NONE;
    /* a typo in a description is the user's to fix now, not a restart
     * loop later */
    if (!(pipe = parse (p, &q, error))) {
      g_prefix_error (error, "probe [%s]: ", p->name);
      goto fail;
    }
    gst_object_unref (q);
    gst_object_unref (pipe);
  }
  g_strfreev (groups);
  g_key_file_free (kf);
  return probes;

fail:
  g_strfreev (groups);
  g_key_file_free (kf);
  g_ptr_array_unref (probes);
  return NULL;
}

/* ---- what the qmetric element reports ---- */

static void
on_frame (Probe * p, const GstStructure * s)
{
  gdouble v;
  guint i;

  if (!gst_structure_get_double (s, "vmaf", &v))
    return;
  for (i = 0; i < PROBE_VMAF_BUCKETS; i++)
    if (v <= probe_vmaf_bounds[i])
      break;
  p->vmaf_buckets[i]++;
  p->vmaf_count++;
  p->vmaf_sum += v;
}

static guint64
get_u64 (const GstStructure * s, const gchar * field)
{
  guint64 v = 0;

  gst_structure_get_uint64 (s, field, &v);
  return v;
}

static void
on_window (Probe * p, const GstStructure * s)
{
  guint i, n = gst_structure_n_fields (s);

  p->windows++;
  p->last_pairs = get_u64 (s, "pairs");
  p->last_unmatched = get_u64 (s, "unmatched");
  p->frames += p->last_pairs;
  p->unmatched_ref += get_u64 (s, "unmatched-reference");
  p->unmatched_dist += get_u64 (s, "unmatched-distorted");
  p->unreadable += get_u64 (s, "unreadable");
  p->last_start_rt = get_u64 (s, "start-running-time");
  p->last_end_rt = get_u64 (s, "end-running-time");
  p->last_unix_us = g_get_real_time ();

  for (i = 0; i < p->last->len; i++)
    g_free (g_array_index (p->last, ProbeFeature, i).feature);
  g_array_set_size (p->last, 0);
  for (i = 0; i < n; i++) {
    const gchar *name = gst_structure_nth_field_name (s, i);
    const GValue *val = gst_structure_get_value (s, name);
    const GstStructure *f;
    ProbeFeature pf = { 0 };
    guint k;

    if (!GST_VALUE_HOLDS_STRUCTURE (val))
      continue;
    f = gst_value_get_structure (val);
    pf.feature = g_strdup (name);
    pf.frames = get_u64 (f, "frames");
    for (k = 0; k < PROBE_N_STATS; k++)
      if (!gst_structure_get_double (f, probe_stat_names[k], &pf.v[k]))
        pf.v[k] = NAN;
    g_array_append_val (p->last, pf);
  }
  /* the pipeline produces: the next failure starts from a short delay */
  p->backoff_ms = PROBE_BACKOFF_FIRST_MS;
}

/* ---- lifetime ---- */

static void
teardown (Probe * p)
{
  if (p->bus_watch) {
    g_source_remove (p->bus_watch);
    p->bus_watch = 0;
  }
  if (p->pipeline) {
    gst_element_set_state (p->pipeline, GST_STATE_NULL);
    gst_clear_object (&p->qmetric);
    gst_clear_object (&p->pipeline);
  }
  p->up = FALSE;
}

/* The pipeline stopped: an error (counted) or the end of its input. */
static void
fail (Probe * p, const gchar * error)
{
  if (error) {
    p->errors++;
    g_free (p->last_error);
    p->last_error = g_strdup (error);
    g_printerr ("qmetric-probe: [%s] %s; restarting in %u ms\n", p->name,
        error, p->backoff_ms);
  } else {
    g_printerr ("qmetric-probe: [%s] end of stream; restarting in %u ms\n",
        p->name, p->backoff_ms);
  }
  teardown (p);
  schedule_restart (p);
}

static gboolean
on_bus (GstBus * bus, GstMessage * msg, gpointer data)
{
  Probe *p = data;

  switch (GST_MESSAGE_TYPE (msg)) {
    case GST_MESSAGE_ELEMENT:
      if (GST_MESSAGE_SRC (msg) == GST_OBJECT (p->qmetric)) {
        const GstStructure *s = gst_message_get_structure (msg);
        if (gst_structure_has_name (s, "qmetric"))
          on_frame (p, s);
        else if (gst_structure_has_name (s, "qmetric-window"))
          on_window (p, s);
      }
      break;
    case GST_MESSAGE_STATE_CHANGED:
      if (GST_MESSAGE_SRC (msg) == GST_OBJECT (p->pipeline)) {
        GstState new_state;
        gst_message_parse_state_changed (msg, NULL, &new_state, NULL);
        p->up = new_state == GST_STATE_PLAYING;
      }
      break;
    case GST_MESSAGE_ERROR:{
      GError *err = NULL;
      gchar *msg_text;
      gst_message_parse_error (msg, &err, NULL);
      msg_text = g_strdup_printf ("%s: %s", GST_OBJECT_NAME
          (GST_MESSAGE_SRC (msg)), err->message);
      g_error_free (err);
      fail (p, msg_text);
      g_free (msg_text);
      /* teardown() removed this watch */
      return G_SOURCE_REMOVE;
    }
    case GST_MESSAGE_EOS:
      fail (p, NULL);
      return G_SOURCE_REMOVE;
    default:
      break;
  }
  return G_SOURCE_CONTINUE;
}

void
probe_start (Probe * p)
{
  GError *err = NULL;
  gchar *window = NULL;
  GstBus *bus;

  teardown (p);
  if (!(p->pipeline = parse (p, &p->qmetric, &err))) {
    fail (p, err->message);
    g_error_free (err);
    return;
  }
  g_object_get (p->qmetric, "window", &window, NULL);
  if (!window || !strcmp (window, "none"))
    g_object_set (p->qmetric, "window", p->window, NULL);
  g_free (window);
  /* the per-frame messages feed the VMAF histogram */
  g_object_set (p->qmetric, "post-messages", TRUE, NULL);

  bus = gst_element_get_bus (p->pipeline);
  p->bus_watch = gst_bus_add_watch (bus, on_bus, p);
  gst_object_unref (bus);
  if (gst_element_set_state (p->pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    /* the ERROR message, if any, is still on the bus: drop it with the
     * watch */
    fail (p, "the pipeline could not start");
  }
}

static gboolean
restart_cb (gpointer data)
{
  Probe *p = data;

  p->retry_source = 0;
  p->restarts++;
  probe_start (p);
  return G_SOURCE_REMOVE;
}

static void
schedule_restart (Probe * p)
{
  if (p->retry_source)
    return;
  p->retry_source = g_timeout_add (p->backoff_ms, restart_cb, p);
  p->backoff_ms = MIN (p->backoff_ms * 2, PROBE_BACKOFF_MAX_MS);
}

void
probe_stop (Probe * p)
{
  if (p->retry_source) {
    g_source_remove (p->retry_source);
    p->retry_source = 0;
  }
  teardown (p);
}

void
probe_free (Probe * p)
{
  guint i;

  probe_stop (p);
  for (i = 0; p->last && i < p->last->len; i++)
    g_free (g_array_index (p->last, ProbeFeature, i).feature);
  if (p->last)
    g_array_unref (p->last);
  g_free (p->name);
  g_free (p->description);
  g_free (p->element);
  g_free (p->window);
  g_free (p->last_error);
  g_free (p);
}
