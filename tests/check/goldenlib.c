/* gst-qmetric: what the golden gates share (goldenlib.h). */
#include <errno.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gstdio.h>

#include "goldenlib.h"
#include "qm.h"



gboolean
in_list (const char *list, const char *s)
{
  gchar **v;
  gboolean hit = FALSE;
  guint i;

  if (!list || !*list)
    return TRUE;
  v = g_strsplit (list, ",", -1);
  for (i = 0; v[i]; i++)
    if (*v[i] && strstr (s, v[i]))
      hit = TRUE;
  g_strfreev (v);
  return hit;
}

gboolean
key_selected (const char *key)
{
  const char *want = g_getenv ("QMETRIC_GOLDEN_FEATURES");
  gchar **v;
  gboolean hit = FALSE;
  guint i;

  if (!want || !*want)
    return TRUE;
  v = g_strsplit (want, ",", -1);
  for (i = 0; v[i]; i++)
    if (!strcmp (v[i], key))
      hit = TRUE;
  g_strfreev (v);
  return hit;
}

/* Decompress golden/yuv/X.yuv.xz into the cache once. */
gchar *
clip (const char *golden, const char *cache, const char *rel)
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

RunResult *
run_pipeline (const char *desc)
{
  RunResult *r = g_new0 (RunResult, 1);
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
        gst_structure_has_name (gst_message_get_structure (m),
            "qmetric-reconfigured")) {
      r->reconfigured++;
    } else if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ELEMENT &&
        gst_structure_has_name (gst_message_get_structure (m), "qmetric")) {
      const GstStructure *s = gst_message_get_structure (m);
      guint64 idx;
      gint64 *k = g_new (gint64, 1);
      gst_structure_get_uint64 (s, "index", &idx);
      *k = (gint64) idx;
      g_hash_table_insert (r->frames, k, gst_structure_copy (s));
    }
    gst_message_unref (m);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  return r;
}

void
run_result_free (RunResult * r)
{
  g_hash_table_unref (r->frames);
  g_free (r->error);
  g_free (r);
}

/* reference value: null = infinite */
double
gval (const QmJson * v)
{
  return v->type == QM_JSON_NUMBER ? v->num : INFINITY;
}

static gboolean
close_within (double ours, double ref, double tol)
{
  if (isinf (ref) || isnan (ref) || isinf (ours) || isnan (ours))
    return !isfinite (ref) && !isfinite (ours);
  return fabs (ours - ref) < tol;
}

gboolean
close_enough (double ours, double ref)
{
  return close_within (ours, ref, TOL);
}



FeatStat *
stat_for (GPtrArray * stats, const char *key)
{
  guint i;
  FeatStat *f;

  for (i = 0; i < stats->len; i++) {
    f = g_ptr_array_index (stats, i);
    if (!strcmp (f->key, key))
      return f;
  }
  f = g_new0 (FeatStat, 1);
  f->key = g_strdup (key);
  g_ptr_array_add (stats, f);
  return f;
}

void
feat_stat_free (FeatStat * f)
{
  g_free (f->key);
  g_free (f);
}

gboolean
golden_check_value (GPtrArray * stats, const char *label, const char *key,
    const char *where, gboolean have, double v, const QmJson * g)
{
  return golden_check_within (stats, label, key, where, have, v, g, TOL);
}

gboolean
golden_check_within (GPtrArray * stats, const char *label, const char *key,
    const char *where, gboolean have, double v, const QmJson * g, double tol)
{
  FeatStat *st = stat_for (stats, key);

  st->checked++;
  if (!have || !g) {
    if (st->fails++ == 0)
      g_print ("  %s: %s missing (%s)\n", label, key, where);
    return FALSE;
  }
  if (isfinite (v) && isfinite (gval (g)))
    st->worst = MAX (st->worst, fabs (v - gval (g)));
  if (!close_within (v, gval (g), tol)) {
    if (st->fails++ < 3)
      g_print ("  %s: %s %s: ours %.17g, reference %.17g\n", label, key,
          where, v, gval (g));
    return FALSE;
  }
  return TRUE;
}

const QmJson *
golden_parent_case (const char *golden, const char *name)
{
  static QmJson *parent;
  const QmJson *list;
  size_t i;

  if (!parent) {
    gchar *path = g_build_filename (golden, "manifest.json", NULL);
    char err[256];
    parent = qm_json_load (path, err, sizeof (err));
    if (!parent)
      g_print ("FAIL: %s\n", err);
    g_free (path);
  }
  list = parent ? qm_json_get (parent, "cases") : NULL;
  for (i = 0; list && i < list->n; i++)
    if (!g_strcmp0 (qm_json_str (list->items[i], "name"), name))
      return list->items[i];
  return NULL;
}


static const struct {
  const char *pix_fmt, *gst;
} formats[] = {
  {"yuv420p", "i420"}, {"yuv422p", "y42b"}, {"yuv444p", "y444"},
  {"yuv420p10le", "i420-10le"}, {"yuv422p10le", "i422-10le"},
  {"yuv444p10le", "y444-10le"}, {"yuv420p12le", "i420-12le"},
  {"yuv422p12le", "i422-12le"}, {"yuv444p12le", "y444-12le"},
};

gchar *
golden_rawparse (const QmJson * c)
{
  const char *pix = qm_json_str (c, "pix_fmt");
  const QmJson *strides = qm_json_get (c, "plane_strides");
  const QmJson *offsets = qm_json_get (c, "plane_offsets");
  const char *gfmt = NULL;
  GString *parse;
  size_t i;

  for (i = 0; pix && i < G_N_ELEMENTS (formats); i++)
    if (!strcmp (formats[i].pix_fmt, pix))
      gfmt = formats[i].gst;
  if (!gfmt || !strides || !offsets) {
    g_print ("%s: FAIL: unknown pix_fmt %s or no plane layout\n",
        qm_json_str (c, "name"), pix ? pix : "?");
    return NULL;
  }
  parse = g_string_new (NULL);
  g_string_append_printf (parse, "rawvideoparse width=%d height=%d "
      "format=%s framerate=%d/1 frame-size=%d plane-strides=\"<",
      (int) qm_json_num (c, "width", 0), (int) qm_json_num (c, "height", 0),
      gfmt, (int) qm_json_num (c, "fps", 24),
      (int) qm_json_num (c, "frame_bytes", 0));
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

gchar *
golden_pipeline (const char *props, const char *log_path, const char *ref,
    const char *dis, const char *parse)
{
  const char *extra = g_getenv ("QMETRIC_GOLDEN_EXTRA");
  const char *threads = g_getenv ("QMETRIC_GOLDEN_THREADS");
  gchar *log = log_path ? g_strdup_printf ("log-location=\"%s\"", log_path) :
      g_strdup ("");
  gchar *desc = g_strdup_printf ("qmetric name=q %s threads=%s %s %s "
      "! fakesink filesrc location=\"%s\" ! %s ! q.ref_sink "
      "filesrc location=\"%s\" ! %s ! q.dist_sink", props,
      threads ? threads : "2", log, extra ? extra : "", ref, parse, dis,
      parse);

  g_free (log);
  return desc;
}

static const struct {
  const char *pix_fmt;
  QmChroma chroma;
} chroma_of[] = {
  {"yuv420p", QM_CHROMA_420}, {"yuv422p", QM_CHROMA_422},
  {"yuv444p", QM_CHROMA_444},
};

void
golden_settings (const QmJson * c, QmSettings * s)
{
  const char *pix = qm_json_str (c, "pix_fmt");
  size_t i;

  qm_settings_default (s, (int) qm_json_num (c, "width", 0),
      (int) qm_json_num (c, "height", 0), (int) qm_json_num (c, "bitdepth", 8),
      QM_CHROMA_420);
  for (i = 0; pix && i < G_N_ELEMENTS (chroma_of); i++)
    if (g_str_has_prefix (pix, chroma_of[i].pix_fmt))
      s->chroma = chroma_of[i].chroma;
}

gboolean
golden_keys_equal (const char *label, const QmEngine * e, const QmJson * gold,
    gboolean (*ignore) (const char *key, const QmJson * user),
    const QmJson * user)
{
  const QmJson *fr = qm_json_at (qm_json_get (gold, "frames"), 0);
  const QmJson *m = fr ? qm_json_get (fr, "metrics") : NULL;
  GHashTable *ours = g_hash_table_new (g_str_hash, g_str_equal);
  gboolean ok = TRUE;
  size_t i;

  for (i = 0; i < qm_engine_n_features (e); i++)
    if (!ignore || !ignore (qm_engine_feature_name (e, i), user))
      g_hash_table_add (ours, (gpointer) qm_engine_feature_name (e, i));
  for (i = 0; m && i < m->n; i++) {
    if (!g_hash_table_remove (ours, m->items[i]->key)) {
      g_print ("  %s: FAIL: key %s missing from our output\n", label,
          m->items[i]->key);
      ok = FALSE;
    }
  }
  if (g_hash_table_size (ours)) {
    GList *l, *keys = g_hash_table_get_keys (ours);
    for (l = keys; l; l = l->next)
      g_print ("  %s: FAIL: key %s is ours only (libvmaf does not write it)\n",
          label, (const char *) l->data);
    g_list_free (keys);
    ok = FALSE;
  }
  g_hash_table_unref (ours);
  return ok;
}

static gboolean
golden_cuda_missing (void)
{
  const char *extra = g_getenv ("QMETRIC_GOLDEN_EXTRA");
  QmSettings s;
  QmEngine *e = NULL;
  char *msg = NULL;

  if (!extra || !strstr (extra, "backend=cuda"))
    return FALSE;
  qm_settings_default (&s, 16, 16, 8, QM_CHROMA_420);
  s.metrics = "psnr";
  s.backend = QM_BACKEND_CUDA;
  if (qm_engine_open (&e, &s, &msg) != 0) {
    g_print ("SKIP: no CUDA device (%s)\n", msg ? msg : "?");
    free (msg);
    return TRUE;
  }
  qm_engine_close (&e);
  return FALSE;
}

int
golden_main (int argc, char **argv, const char *manifest_rel,
    GoldenCaseFn run_case)
{
  const char *golden = g_getenv ("QMETRIC_GOLDEN_DIR");
  const char *required = g_getenv ("QMETRIC_GOLDEN_REQUIRED");
  const char *cases = g_getenv ("QMETRIC_GOLDEN_CASES");
  gchar *manifest, *cache;
  QmJson *man;
  const QmJson *list;
  GPtrArray *stats;
  guint group = 0, ngroups = 1, ran = 0, failed = 0, i;
  char err[256];
  int status;

  gst_init (&argc, &argv);
  for (i = 1; i < (guint) argc; i++)
    if (!strcmp (argv[i], "--group") && i + 1 < (guint) argc)
      sscanf (argv[++i], "%u/%u", &group, &ngroups);
  if (!golden)
    golden = QM_GOLDEN_DIR;
  manifest = g_build_filename (golden, manifest_rel, NULL);
  if (!g_file_test (manifest, G_FILE_TEST_EXISTS)) {
    if (required && !strcmp (required, "1")) {
      g_print ("FAIL: golden data not found at %s "
          "(QMETRIC_GOLDEN_REQUIRED=1)\n", manifest);
      return 1;
    }
    g_print ("SKIP: golden data not found at %s (set QMETRIC_GOLDEN_DIR)\n",
        manifest);
    g_free (manifest);
    return 77;
  }
  /* the CUDA variant of a gate needs a GPU: without one it is skipped */
  if (golden_cuda_missing ()) {
    g_free (manifest);
    return 77;
  }
  man = qm_json_load (manifest, err, sizeof (err));
  if (!man) {
    g_print ("FAIL: %s\n", err);
    return 1;
  }
  cache = g_strdup (g_getenv ("QMETRIC_GOLDEN_CACHE"));
  if (!cache)
    cache = g_build_filename (g_get_tmp_dir (), "qmetric-golden-cache", NULL);
  g_mkdir_with_parents (cache, 0755);

  stats = g_ptr_array_new_with_free_func ((GDestroyNotify) feat_stat_free);
  list = qm_json_get (man, "cases");
  for (i = 0; list && i < list->n; i++) {
    const QmJson *c = list->items[i];
    if (i % ngroups != group || !in_list (cases, qm_json_str (c, "name")))
      continue;
    ran++;
    if (!run_case (golden, cache, c, stats))
      failed++;
  }
  g_print ("\nfeature                                   worst abs diff  "
      "failures/checked\n");
  for (i = 0; i < stats->len; i++) {
    FeatStat *f = g_ptr_array_index (stats, i);
    g_print ("%-40s  %14.3e  %u/%u\n", f->key, f->worst, f->fails, f->checked);
  }
  g_print ("%u passed, %u failed\n", ran - failed, failed);
  status = failed ? 1 : 0;
  if (!ran) {
    g_print ("FAIL: no case selected\n");
    status = 1;
  }
  g_ptr_array_unref (stats);
  qm_json_free (man);
  g_free (manifest);
  g_free (cache);
  return status;
}
