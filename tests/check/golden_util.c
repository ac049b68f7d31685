/* gst-qmetric: what the golden gates share (golden_util.h). */
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gstdio.h>

#include "golden_util.h"
#include "qm.h"

static const struct {
  const char *pix_fmt, *gst;
} formats[] = {
  {"yuv420p", "i420"}, {"yuv422p", "y42b"}, {"yuv444p", "y444"},
  {"yuv420p10le", "i420-10le"}, {"yuv422p10le", "i422-10le"},
  {"yuv444p10le", "y444-10le"}, {"yuv420p12le", "i420-12le"},
  {"yuv422p12le", "i422-12le"}, {"yuv444p12le", "y444-12le"},
};

gboolean
qm_golden_in_list (const char *list, const char *s, gboolean whole)
{
  gchar **v;
  gboolean hit = FALSE;
  guint i;

  if (!list || !*list)
    return TRUE;
  v = g_strsplit (list, ",", -1);
  for (i = 0; v[i]; i++)
    if (*v[i] && (whole ? !strcmp (s, v[i]) : strstr (s, v[i]) != NULL))
      hit = TRUE;
  g_strfreev (v);
  return hit;
}

gchar *
qm_golden_clip (const char *golden, const char *cache, const char *rel)
{
  gchar *src = g_build_filename (golden, rel, NULL);
  gchar *base = g_path_get_basename (rel);
  gchar *dst, *tmp, *cmd;
  int status = -1;

  base[strlen (base) - 3] = 0;  /* strip .xz */
  dst = g_build_filename (cache, base, NULL);
  if (!g_file_test (dst, G_FILE_TEST_EXISTS)) {
    gchar *qs, *qt;
    tmp = g_strdup_printf ("%s.%d.part", dst, (int) getpid ());
    qs = g_shell_quote (src);
    qt = g_shell_quote (tmp);
    cmd = g_strdup_printf ("xz -dc %s > %s", qs, qt);
    g_free (qs);
    g_free (qt);
    status = system (cmd);
    if (status != 0 || g_rename (tmp, dst) != 0) {
      g_printerr ("cannot decompress %s (is xz installed?)\n", src);
      g_unlink (tmp);
      g_clear_pointer (&dst, g_free);
    }
    g_free (cmd);
    g_free (tmp);
  }
  g_free (src);
  g_free (base);
  return dst;
}

gchar *
qm_golden_rawparse (const QmJson * c)
{
  const char *pix = qm_json_str (c, "pix_fmt"), *gfmt = NULL;
  const QmJson *strides = qm_json_get (c, "plane_strides");
  const QmJson *offsets = qm_json_get (c, "plane_offsets");
  GString *parse;
  size_t i;

  for (i = 0; pix && i < G_N_ELEMENTS (formats); i++)
    if (!strcmp (formats[i].pix_fmt, pix))
      gfmt = formats[i].gst;
  if (!gfmt || !strides || !offsets)
    return NULL;
  parse = g_string_new (NULL);
  g_string_append_printf (parse, "rawvideoparse width=%d height=%d "
      "format=%s framerate=24/1 frame-size=%d plane-strides=\"<",
      (int) qm_json_num (c, "width", 0), (int) qm_json_num (c, "height", 0),
      gfmt, (int) qm_json_num (c, "frame_bytes", 0));
  for (i = 0; i < strides->n; i++)
    g_string_append_printf (parse, "%s%d", i ? "," : "",
        (int) strides->items[i]->num);
  g_string_append (parse, ">\" plane-offsets=\"<");
  for (i = 0; i < offsets->n; i++)
    g_string_append_printf (parse, "%s%d", i ? "," : "",
        (int) offsets->items[i]->num);
  g_string_append (parse, ">\"");
  return g_string_free (parse, FALSE);
}

QmGoldenRun *
qm_golden_run_pipeline (const char *desc)
{
  QmGoldenRun *r = g_new0 (QmGoldenRun, 1);
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch (desc, &err);
  GstBus *bus;

  r->frames = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
      (GDestroyNotify) gst_structure_free);
  if (!pipe) {
    r->error = g_strdup_printf ("pipeline does not parse: %s",
        err ? err->message : "?");
    g_clear_error (&err);
    return r;
  }
  bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  while (!r->eos && !r->error) {
    GstMessage *m = gst_bus_timed_pop (bus, 600 * GST_SECOND);
    if (!m) {
      r->error = g_strdup ("timed out after 600 s");
      break;
    }
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS) {
      r->eos = TRUE;
    } else if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
      GError *e;
      gchar *dbg;
      gst_message_parse_error (m, &e, &dbg);
      r->error = g_strdup_printf ("%s (%s)", e->message, dbg ? dbg : "");
      g_error_free (e);
      g_free (dbg);
    } else if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ELEMENT &&
        gst_structure_has_name (gst_message_get_structure (m), "qmetric")) {
      const GstStructure *s = gst_message_get_structure (m);
      guint64 idx;
      gint64 *k = g_new (gint64, 1);
      gst_structure_get_uint64 (s, "index", &idx);
      *k = (gint64) idx;
      g_hash_table_insert (r->frames, k, gst_structure_copy (s));
    } else if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ELEMENT &&
        gst_structure_has_name (gst_message_get_structure (m),
            "qmetric-reconfigured")) {
      r->reconfigured++;
    }
    gst_message_unref (m);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  return r;
}

void
qm_golden_run_free (QmGoldenRun * r)
{
  g_hash_table_unref (r->frames);
  g_free (r->error);
  g_free (r);
}

QmJson *
qm_golden_manifest (const char *default_dir, const char *name,
    const char **dir, int *status)
{
  const char *golden = g_getenv ("QMETRIC_GOLDEN_DIR");
  const char *required = g_getenv ("QMETRIC_GOLDEN_REQUIRED");
  gchar *path;
  QmJson *man;
  char err[256];

  *dir = golden ? golden : default_dir;
  path = g_build_filename (*dir, name, NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS)) {
    if (required && !strcmp (required, "1")) {
      g_print ("FAIL: golden data not found at %s "
          "(QMETRIC_GOLDEN_REQUIRED=1)\n", path);
      *status = 1;
    } else {
      g_print ("SKIP: golden data not found at %s (set QMETRIC_GOLDEN_DIR)\n",
          path);
      *status = 77;
    }
    g_free (path);
    return NULL;
  }
  man = qm_json_load (path, err, sizeof (err));
  g_free (path);
  if (!man) {
    g_print ("FAIL: %s\n", err);
    *status = 1;
  }
  return man;
}

gchar *
qm_golden_cache (void)
{
  gchar *cache = g_strdup (g_getenv ("QMETRIC_GOLDEN_CACHE"));
  if (!cache)
    cache = g_build_filename (g_get_tmp_dir (), "qmetric-golden-cache", NULL);
  g_mkdir_with_parents (cache, 0755);
  return cache;
}

gboolean
qm_golden_device_ok (void)
{
  const char *extra = g_getenv ("QMETRIC_GOLDEN_EXTRA");
  QmSettings s;
  QmEngine *e = NULL;
  char *msg = NULL;

  if (!extra || !strstr (extra, "backend=cuda"))
    return TRUE;
  qm_settings_default (&s, 16, 16, 8, QM_CHROMA_420);
  s.metrics = "psnr";
  s.backend = QM_BACKEND_CUDA;
  if (qm_engine_open (&e, &s, &msg) != 0) {
    g_print ("SKIP: no CUDA device (%s)\n", msg ? msg : "?");
    free (msg);
    return FALSE;
  }
  qm_engine_close (&e);
  return TRUE;
}
