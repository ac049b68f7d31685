/* qmetric-probe: the probes' configuration file (see probe.h,
 * docs/probe.md).  Everything is checked at start: an unknown key, a bad
 * value or a description that does not parse stops the program with the
 * probe and the key named, rather than a restart loop or a setting
 * silently ignored later. */
#include "probe.h"

#include <string.h>

#include "duration.h"

static const gchar *const known_keys[] = {
  "pipeline", "element", "window", "reference", "distorted", "width",
  "height", "metrics", "model", "backend", "sync", "features", "stats",
  "stall-timeout", "restart-timeout",
};

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

GstElement *
probe_parse (Probe * p, GstElement ** qmetric, GError ** error)
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

/* stats=: names of probe_stat_names, comma-separated */
static gboolean
parse_stats (Probe * p, const gchar * s, GError ** error)
{
  gchar **names = g_strsplit (s, ",", -1);
  guint i, k;

  p->stats = 0;
  for (i = 0; names[i]; i++) {
    gchar *n = g_strstrip (names[i]);
    for (k = 0; k < PROBE_N_STATS; k++)
      if (!strcmp (n, probe_stat_names[k]))
        break;
    if (k == PROBE_N_STATS) {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
          "stats: \"%s\" is not one of mean, harmonic-mean, min, max, p1, "
          "p5", n);
      g_strfreev (names);
      return FALSE;
    }
    p->stats |= 1u << k;
  }
  g_strfreev (names);
  if (!p->stats) {
    g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
        "stats: empty (name at least one of mean, harmonic-mean, min, max, "
        "p1, p5)");
    return FALSE;
  }
  return TRUE;
}

/* features=: glob patterns (* and ?), comma-separated */
static gboolean
parse_features (Probe * p, const gchar * s, GError ** error)
{
  gchar **pats = g_strsplit (s, ",", -1);
  guint i, n = 0;

  for (i = 0; pats[i]; i++) {
    gchar *t = g_strdup (g_strstrip (pats[i]));
    g_free (pats[i]);
    if (*t)
      pats[n++] = t;
    else
      g_free (t);
  }
  pats[n] = NULL;
  if (!n) {
    g_strfreev (pats);
    g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
        "features: empty (\"*\" exports every feature)");
    return FALSE;
  }
  p->features = pats;
  return TRUE;
}

/* a duration key; *out unchanged when absent */
static gboolean
get_duration (GKeyFile * kf, const gchar * group, const gchar * key,
    gint64 * out, GError ** error)
{
  gchar *s = g_key_file_get_string (kf, group, key, NULL);
  gint64 v;

  if (!s)
    return TRUE;
  v = parse_duration_us (g_strstrip (s));
  if (v < 0) {
    g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
        "%s: \"%s\" is not a duration (500ms, 3s, 1m, 0)", key, s);
    g_free (s);
    return FALSE;
  }
  g_free (s);
  *out = v;
  return TRUE;
}

static gboolean
load_probe (Probe * p, GKeyFile * kf, const gchar * group, GError ** error)
{
  gchar **keys = g_key_file_get_keys (kf, group, NULL, NULL);
  gchar *s;
  GstElement *pipe, *q = NULL;
  guint i, k;

  for (i = 0; keys && keys[i]; i++) {
    for (k = 0; k < G_N_ELEMENTS (known_keys); k++)
      if (!strcmp (keys[i], known_keys[k]))
        break;
    if (k == G_N_ELEMENTS (known_keys)) {
      g_set_error (error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND,
          "unknown key \"%s\"", keys[i]);
      g_strfreev (keys);
      return FALSE;
    }
  }
  g_strfreev (keys);

  p->element = g_key_file_get_string (kf, group, "element", NULL);
  if (!p->element)
    p->element = g_strdup ("q");
  p->window = g_key_file_get_string (kf, group, "window", NULL);
  if (!p->window)
    p->window = g_strdup ("1s");
  s = g_key_file_get_string (kf, group, "features", NULL);
  if (s && !parse_features (p, s, error)) {
    g_free (s);
    return FALSE;
  }
  g_free (s);
  s = g_key_file_get_string (kf, group, "stats", NULL);
  if (!parse_stats (p, s ? s : PROBE_DEFAULT_STATS, error)) {
    g_free (s);
    return FALSE;
  }
  g_free (s);
  p->restart_timeout_us = PROBE_RESTART_DEFAULT_US;
  if (!get_duration (kf, group, "stall-timeout", &p->stall_timeout_us, error)
      || !get_duration (kf, group, "restart-timeout", &p->restart_timeout_us,
          error))
    return FALSE;

  p->description = g_key_file_get_string (kf, group, "pipeline", NULL);
  if (!p->description) {
    g_free (p->element);
    p->element = g_strdup ("q");
    if (!(p->description = uri_description (kf, group, error)))
      return FALSE;
  }
  /* a typo in a description is the user's to fix now, not a restart loop
   * later */
  if (!(pipe = probe_parse (p, &q, error)))
    return FALSE;
  gst_object_unref (q);
  gst_object_unref (pipe);
  return TRUE;
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

    g_ptr_array_add (probes, p);
    p->name = g_strdup (groups[i]);
    p->last = g_array_new (FALSE, TRUE, sizeof (ProbeFeature));
    p->backoff_ms = PROBE_BACKOFF_FIRST_MS;
    p->last_start_rt = p->last_end_rt = GST_CLOCK_TIME_NONE;
    p->inputs[0].pad = "ref_sink";
    p->inputs[1].pad = "dist_sink";
    p->scored.pad = "src";
    if (!load_probe (p, kf, groups[i], error)) {
      if (!g_str_has_prefix ((*error)->message, "probe ["))
        g_prefix_error (error, "probe [%s]: ", p->name);
      goto fail;
    }
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
