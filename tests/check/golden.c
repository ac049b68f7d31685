/* gst-qmetric: the golden gate.
 *
 * For every case of ../shared/golden/manifest.json, run the qmetric element
 * in a real pipeline (filesrc ! rawvideoparse ! qmetric) with the models of
 * every reference run of the case at once, and compare every frame's scores
 * (from the element's bus messages) and the pooled values (from its JSON
 * log) with the reference implementation's JSON, key by key, for every run:
 * |ours - reference| < 1e-6 (docs/accuracy.md: identical to the printed
 * six decimals; the reference rounds to 5e-7), null (infinite) only against
 * infinite; a reference key missing from our output fails.  No run is
 * skipped: a model we cannot run fails the case.
 *
 * Keys: for every run, the engine configured as that run (its model, its
 * extra features, the case's geometry) must name exactly the reference's
 * keys, none missing and none extra (the element's logs and messages carry
 * the engine's names).
 *
 * The cases of xpsnr/manifest.json (FFmpeg n7.1's xpsnr filter, the same
 * clips) run the element with metrics=xpsnr at the case's frame rate: every
 * frame's xpsnr_y/u/v against the reference's full-precision values and
 * the log's aggregate_metrics against FFmpeg's pooled ones, |diff| < 1e-6
 * (the weighted SSE is exact, so the frames' values are equal).
 *
 * Environment:
 *   QMETRIC_GOLDEN_DIR       the golden data (default: set by meson)
 *   QMETRIC_GOLDEN_REQUIRED  "1": missing data is a failure (CI), else a skip
 *   QMETRIC_GOLDEN_CACHE     where decompressed clips are kept
 *   QMETRIC_GOLDEN_CASES     comma-separated substrings of case names
 *   QMETRIC_GOLDEN_SETS      "libvmaf", "xpsnr" or both (default both)
 *   QMETRIC_GOLDEN_FEATURES  comma-separated keys to check (default: all)
 *   QMETRIC_GOLDEN_EXTRA     extra qmetric properties (e.g. "backend=cuda")
 * Arguments: [--group N/M] checks the cases whose position % M == N.
 * Exit status: 0 pass, 1 fail, 77 skip.
 */
#include <errno.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <glib/gstdio.h>

#include <gst/gst.h>

#include "json.h"
#include "qm.h"

/* docs/accuracy.md: every feature is identical to the reference's six
 * printed decimals (rounding: up to 5e-7); 1e-6 leaves room for that
 * rounding only.  A documented exception would get its own bound here. */
#define TOL 1e-6

/* The reference's known defect we do not reproduce (../shared/golden/README:
 * ciede2000 on 4:2:2 reads the wrong chroma samples). */
static const struct {
  const char *cas, *key;
} exempt[] = {
  {"garden_576x324_yuv422p_x264crf32", "ciede2000"},
};

static const struct {
  const char *pix_fmt, *gst;
} formats[] = {
  {"yuv420p", "i420"}, {"yuv422p", "y42b"}, {"yuv444p", "y444"},
  {"yuv420p10le", "i420-10le"}, {"yuv422p10le", "i422-10le"},
  {"yuv444p10le", "y444-10le"}, {"yuv420p12le", "i420-12le"},
  {"yuv422p12le", "i422-12le"}, {"yuv444p12le", "y444-12le"},
};

typedef struct {
  GHashTable *frames;           /* index -> GstStructure */
  gchar *error;
  gboolean eos;
} RunResult;

static gboolean
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

static gboolean
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

static gboolean
is_exempt (const char *cas, const char *key)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (exempt); i++)
    if (!strcmp (exempt[i].cas, cas) && !strcmp (exempt[i].key, key))
      return TRUE;
  return FALSE;
}

/* Decompress golden/yuv/X.yuv.xz into the cache once. */
static gchar *
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

static RunResult *
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

static void
run_result_free (RunResult * r)
{
  g_hash_table_unref (r->frames);
  g_free (r->error);
  g_free (r);
}

/* reference value: null = infinite */
static double
gval (const QmJson * v)
{
  return v->type == QM_JSON_NUMBER ? v->num : INFINITY;
}

static gboolean
close_enough (double ours, double ref)
{
  if (isinf (ref) || isnan (ref) || isinf (ours) || isnan (ours))
    return !isfinite (ref) && !isfinite (ours);
  return fabs (ours - ref) < TOL;
}

typedef struct {
  gchar *key;
  double worst;
  guint fails, checked;
} FeatStat;

static FeatStat *
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

static void
feat_stat_free (FeatStat * f)
{
  g_free (f->key);
  g_free (f);
}

/* One frame's value of key (ours_key in the message s) against the
 * reference's value g: counted in stats, the first failures printed (who
 * names the case and run). */
static gboolean
check_value (GPtrArray * stats, const char *who, const char *key,
    const char *ours_key, gint64 idx, const GstStructure * s, const QmJson * g)
{
  FeatStat *st = stat_for (stats, key);
  double v;

  st->checked++;
  if (!g || !s || !gst_structure_get_double (s, ours_key, &v)) {
    if (st->fails++ == 0)
      g_print ("  %s: %s missing in frame %" G_GINT64_FORMAT "\n", who, key,
          idx);
    return FALSE;
  }
  if (isfinite (v) && isfinite (gval (g)))
    st->worst = MAX (st->worst, fabs (v - gval (g)));
  if (!close_enough (v, gval (g))) {
    if (st->fails++ < 3)
      g_print ("  %s: %s frame %" G_GINT64_FORMAT ": ours %.17g, reference "
          "%.17g\n", who, key, idx, v, gval (g));
    return FALSE;
  }
  return TRUE;
}

/* Compare one reference run with what the element reported. */
static gboolean
check_run (const char *cname, const char *model, gboolean multi,
    const QmJson * gold, RunResult * r, const QmJson * log, GPtrArray * stats)
{
  const QmJson *frames = qm_json_get (gold, "frames");
  const QmJson *gpooled = qm_json_get (gold, "pooled_metrics");
  const QmJson *mpooled = qm_json_get (log, "pooled_metrics");
  gchar *who = g_strdup_printf ("%s [%s]", cname, model);
  gboolean ok = TRUE;
  size_t i, k;

  for (i = 0; frames && i < frames->n; i++) {
    const QmJson *fr = qm_json_at (frames, i);
    const QmJson *m = qm_json_get (fr, "metrics");
    gint64 idx = (gint64) qm_json_num (fr, "frameNum", -1);
    const GstStructure *s = g_hash_table_lookup (r->frames, &idx);

    for (k = 0; m && k < m->n; k++) {
      const QmJson *g = m->items[k];
      /* with several models each score is named after its model */
      const char *ours_key = !strcmp (g->key, "vmaf") && multi ? model : g->key;

      if (!key_selected (g->key) || is_exempt (cname, g->key))
        continue;
      ok &= check_value (stats, who, g->key, ours_key, idx, s, g);
    }
  }
  /* pooled values, from the element's JSON log */
  for (k = 0; gpooled && k < gpooled->n; k++) {
    const QmJson *gp = gpooled->items[k];
    const char *ours_key = !strcmp (gp->key, "vmaf") && multi ? model : gp->key;
    const QmJson *mp = qm_json_get (mpooled, ours_key);
    size_t j;

    if (!key_selected (gp->key) || is_exempt (cname, gp->key))
      continue;
    for (j = 0; j < gp->n; j++) {
      const QmJson *mv = qm_json_get (mp, gp->items[j]->key);
      if (!mv || !close_enough (gval (mv), gval (gp->items[j]))) {
        g_print ("  %s [%s]: pooled %s.%s: ours %.9g, reference %.9g\n",
            cname, model, gp->key, gp->items[j]->key, mv ? gval (mv) : NAN,
            gval (gp->items[j]));
        stat_for (stats, gp->key)->fails++;
        ok = FALSE;
      }
    }
  }
  g_free (who);
  return ok;
}

static const struct {
  const char *pix_fmt;
  QmChroma chroma;
} chroma_of[] = {
  {"yuv420p", QM_CHROMA_420}, {"yuv422p", QM_CHROMA_422},
  {"yuv444p", QM_CHROMA_444},
};

/* The keys of one reference run against the engine's names when configured
 * as that run: libvmaf's --model version=M plus its --feature list. */
static gboolean
check_keys (const QmJson * c, const QmJson * run, const QmJson * gold)
{
  const char *cname = qm_json_str (c, "name");
  const char *pix = qm_json_str (c, "pix_fmt");
  const QmJson *extra = qm_json_get (run, "extra_features");
  const QmJson *fr = qm_json_at (qm_json_get (gold, "frames"), 0);
  const QmJson *m = fr ? qm_json_get (fr, "metrics") : NULL;
  GString *metrics = g_string_new ("default");
  GHashTable *ours = g_hash_table_new (g_str_hash, g_str_equal);
  gboolean ok = TRUE;
  QmSettings s;
  QmEngine *e = NULL;
  char *msg = NULL;
  size_t i;

  qm_settings_default (&s, (int) qm_json_num (c, "width", 0),
      (int) qm_json_num (c, "height", 0), (int) qm_json_num (c, "bitdepth", 8),
      QM_CHROMA_420);
  for (i = 0; i < G_N_ELEMENTS (chroma_of); i++)
    if (g_str_has_prefix (pix, chroma_of[i].pix_fmt))
      s.chroma = chroma_of[i].chroma;
  for (i = 0; extra && i < extra->n; i++)
    g_string_append_printf (metrics, ",%s", extra->items[i]->str);
  s.metrics = metrics->str;
  s.models = qm_json_str (run, "model");
  if (qm_engine_open (&e, &s, &msg) != 0) {
    g_print ("  %s [%s]: FAIL: engine: %s\n", cname, s.models,
        msg ? msg : "?");
    free (msg);
    g_string_free (metrics, TRUE);
    g_hash_table_unref (ours);
    return FALSE;
  }
  for (i = 0; i < qm_engine_n_features (e); i++)
    g_hash_table_add (ours, (gpointer) qm_engine_feature_name (e, i));
  for (i = 0; m && i < m->n; i++) {
    if (!g_hash_table_remove (ours, m->items[i]->key)) {
      g_print ("  %s [%s]: FAIL: key %s missing from our output\n", cname,
          s.models, m->items[i]->key);
      ok = FALSE;
    }
  }
  if (g_hash_table_size (ours)) {
    GList *l, *keys = g_hash_table_get_keys (ours);
    for (l = keys; l; l = l->next)
      g_print ("  %s [%s]: FAIL: key %s is ours only (libvmaf does not write "
          "it)\n", cname, s.models, (const char *) l->data);
    g_list_free (keys);
    ok = FALSE;
  }
  qm_engine_close (&e);
  g_string_free (metrics, TRUE);
  g_hash_table_unref (ours);
  return ok;
}

/* Both clips of a case, decompressed into the cache: TRUE, or FALSE and
 * neither. */
static gboolean
case_clips (const char *dir, const char *cache, const QmJson * c,
    gchar ** ref, gchar ** dis)
{
  *ref = clip (dir, cache, qm_json_str (c, "ref"));
  *dis = clip (dir, cache, qm_json_str (c, "dis"));
  if (*ref && *dis)
    return TRUE;
  g_clear_pointer (ref, g_free);
  g_clear_pointer (dis, g_free);
  return FALSE;
}

/* GStreamer's name of an FFmpeg pix_fmt, or NULL after a message. */
static const char *
gst_format_of (const char *cname, const char *pix)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (formats); i++)
    if (!strcmp (formats[i].pix_fmt, pix))
      return formats[i].gst;
  g_print ("%s: FAIL: unknown pix_fmt %s\n", cname, pix);
  return NULL;
}

/* The bytes of one sample and the chroma subsampling of a pix_fmt. */
static void
pix_layout (const char *pix, int *bytes, int *sx, int *sy)
{
  *bytes = strstr (pix, "le") ? 2 : 1;
  *sx = g_str_has_prefix (pix, "yuv420") || g_str_has_prefix (pix, "yuv422");
  *sy = g_str_has_prefix (pix, "yuv420");
}

/* One case of ../shared/golden/xpsnr/manifest.json (FFmpeg n7.1's xpsnr
 * filter): the element with metrics=xpsnr at the case's frame rate, each
 * frame's value against the reference's full-precision one and the pooled
 * values of the log's aggregate_metrics against FFmpeg's closing values,
 * |diff| < TOL, inf only against inf; the engine's keys exactly
 * xpsnr_y/u/v. */
static gboolean
run_xpsnr_case (const char *dir, const char *cache, const QmJson * c,
    GPtrArray * stats)
{
  static const char *const keys[] = { "xpsnr_y", "xpsnr_u", "xpsnr_v" };
  const char *cname = qm_json_str (c, "name");
  const char *pix = qm_json_str (c, "pix_fmt");
  const char *gfmt = NULL, *extra = g_getenv ("QMETRIC_GOLDEN_EXTRA");
  const int w = (int) qm_json_num (c, "width", 0);
  const int h = (int) qm_json_num (c, "height", 0);
  int bytes, sx, sy, cw, ch;
  gchar *ref, *dis, *log_path, *desc, *path;
  gboolean ok = TRUE;
  RunResult *r;
  QmJson *log = NULL, *gold = NULL;
  const QmJson *frames, *agg, *pooled;
  char err[256];
  size_t i, k;

  if (!(gfmt = gst_format_of (cname, pix)))
    return FALSE;
  pix_layout (pix, &bytes, &sx, &sy);
  cw = (w + sx) >> sx;
  ch = (h + sy) >> sy;
  if (!case_clips (dir, cache, c, &ref, &dis))
    return FALSE;
  log_path = g_strdup_printf ("%s/log-xpsnr-%s-%d.json", cache, cname,
      (int) getpid ());
  {
    /* tightly packed planes, FFmpeg's rawvideo layout */
    gchar *parse = g_strdup_printf ("rawvideoparse width=%d height=%d "
        "format=%s framerate=%d/1 frame-size=%d plane-strides=\"<%d,%d,%d>\" "
        "plane-offsets=\"<0,%d,%d>\"", w, h, gfmt,
        (int) qm_json_num (c, "fps", 24), (int) qm_json_num (c, "frame_bytes", 0),
        w * bytes, cw * bytes, cw * bytes, w * h * bytes,
        w * h * bytes + cw * ch * bytes);
    desc = g_strdup_printf ("qmetric name=q metrics=xpsnr threads=2 "
        "log-location=\"%s\" %s ! fakesink "
        "filesrc location=\"%s\" ! %s ! q.ref_sink "
        "filesrc location=\"%s\" ! %s ! q.dist_sink", log_path,
        extra ? extra : "", ref, parse, dis, parse);
    g_free (parse);
  }
  r = run_pipeline (desc);
  g_print ("%s (xpsnr): %u frames\n", cname, g_hash_table_size (r->frames));
  if (r->error) {
    g_print ("%s: FAIL: %s\n  pipeline: %s\n", cname, r->error, desc);
    ok = FALSE;
    goto out;
  }
  path = g_build_filename (dir, qm_json_str (c, "result"), NULL);
  gold = qm_json_load (path, err, sizeof (err));
  g_free (path);
  log = qm_json_load (log_path, err, sizeof (err));
  if (!gold || !log) {
    g_print ("%s: FAIL: %s\n", cname, err);
    ok = FALSE;
    goto out;
  }
  frames = qm_json_get (gold, "frames");
  if (!frames || frames->n != g_hash_table_size (r->frames)) {
    g_print ("%s: FAIL: %u frames scored, the reference has %u\n", cname,
        g_hash_table_size (r->frames), frames ? (unsigned) frames->n : 0);
    ok = FALSE;
  }
  for (i = 0; frames && i < frames->n; i++) {
    const QmJson *fr = qm_json_at (frames, i);
    const QmJson *m = qm_json_get (fr, "metrics_full_precision");
    gint64 idx = (gint64) qm_json_num (fr, "frameNum", -1);
    const GstStructure *st = g_hash_table_lookup (r->frames, &idx);

    if (st && gst_structure_n_fields (st) != 5 + G_N_ELEMENTS (keys)) {
      g_print ("%s: FAIL: frame %" G_GINT64_FORMAT " has other scores than "
          "xpsnr_y/u/v: %" GST_PTR_FORMAT "\n", cname, idx, st);
      ok = FALSE;
    }
    for (k = 0; k < G_N_ELEMENTS (keys); k++) {
      if (key_selected (keys[k]))
        ok &= check_value (stats, cname, keys[k], keys[k], idx, st,
            qm_json_get (m, keys[k]));
    }
  }
  /* pooled as FFmpeg pools them: the log's aggregate_metrics, and the
   * smallest of the three (FFmpeg's "minimum") */
  agg = qm_json_get (log, "aggregate_metrics");
  pooled = qm_json_get (gold, "pooled_full_precision");
  for (k = 0; k <= G_N_ELEMENTS (keys); k++) {
    const char *key = k < G_N_ELEMENTS (keys) ? keys[k] : "xpsnr_min";
    const QmJson *mv = qm_json_get (agg, key);
    double want = INFINITY;

    if (k < G_N_ELEMENTS (keys))
      want = qm_json_get (pooled, key) ? gval (qm_json_get (pooled, key)) : NAN;
    for (i = 0; k == G_N_ELEMENTS (keys) && i < G_N_ELEMENTS (keys); i++)
      want = MIN (want, gval (qm_json_get (pooled, keys[i])));
    if (!key_selected (key))
      continue;
    if (!mv || !close_enough (gval (mv), want)) {
      g_print ("  %s: pooled %s: ours %.9g, reference %.9g\n", cname, key,
          mv ? gval (mv) : NAN, want);
      stat_for (stats, key)->fails++;
      ok = FALSE;
    }
  }
out:
  g_print ("%s (xpsnr): %s\n", cname, ok ? "ok" : "FAIL");
  qm_json_free (gold);
  qm_json_free (log);
  g_unlink (log_path);
  g_free (log_path);
  g_free (desc);
  run_result_free (r);
  g_free (ref);
  g_free (dis);
  return ok;
}

static gboolean
run_case (const char *golden, const char *cache, const QmJson * c,
    GPtrArray * stats)
{
  const char *cname = qm_json_str (c, "name");
  const char *pix = qm_json_str (c, "pix_fmt");
  const QmJson *runs = qm_json_get (c, "runs");
  const QmJson *strides = qm_json_get (c, "plane_strides");
  const QmJson *offsets = qm_json_get (c, "plane_offsets");
  const char *gfmt = NULL, *extra = g_getenv ("QMETRIC_GOLDEN_EXTRA");
  GString *models = g_string_new (NULL), *parse = g_string_new (NULL);
  gchar *ref, *dis, *log_path, *desc;
  gboolean ok = TRUE, multi;
  guint nmodels = 0;
  RunResult *r;
  QmJson *log;
  char err[256];
  size_t i;

  if (!(gfmt = gst_format_of (cname, pix)))
    return FALSE;
  for (i = 0; runs && i < runs->n; i++) {
    const char *model = qm_json_str (runs->items[i], "model");
    if (!model || !*model) {
      g_print ("%s: FAIL: run %u has no model\n", cname, (unsigned) i);
      ok = FALSE;
      continue;
    }
    g_string_append_printf (models, "%s%s", nmodels++ ? "," : "", model);
  }
  multi = nmodels > 1;

  if (!case_clips (golden, cache, c, &ref, &dis))
    return FALSE;
  /* the files are tightly packed; GStreamer's default rows are 4-byte
   * aligned, so give rawvideoparse the manifest's layout */
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

  log_path = g_strdup_printf ("%s/log-%s-%d.json", cache, cname,
      (int) getpid ());
  desc = g_strdup_printf ("qmetric name=q metrics=all model=%s threads=%s "
      "log-location=\"%s\" %s ! fakesink "
      "filesrc location=\"%s\" ! %s ! q.ref_sink "
      "filesrc location=\"%s\" ! %s ! q.dist_sink", models->str,
      g_getenv ("QMETRIC_GOLDEN_THREADS") ? g_getenv ("QMETRIC_GOLDEN_THREADS")
      : "2", log_path, extra ? extra : "", ref, parse->str, dis, parse->str);
  {
    gint64 t0 = g_get_monotonic_time ();
    r = run_pipeline (desc);
    g_print ("%s: %u frames in %.1f s\n", cname,
        g_hash_table_size (r->frames), (g_get_monotonic_time () - t0) / 1e6);
  }
  if (r->error) {
    g_print ("%s: FAIL: %s\n  pipeline: %s\n", cname, r->error, desc);
    ok = FALSE;
    goto out;
  }
  log = qm_json_load (log_path, err, sizeof (err));
  if (!log) {
    g_print ("%s: FAIL: log: %s\n", cname, err);
    ok = FALSE;
    goto out;
  }
  for (i = 0; runs && i < runs->n; i++) {
    const char *model = qm_json_str (runs->items[i], "model");
    gchar *path;
    QmJson *gold;

    if (!model)
      continue;  /* reported above */
    path = g_build_filename (golden, qm_json_str (runs->items[i], "result"),
        NULL);
    gold = qm_json_load (path, err, sizeof (err));
    g_free (path);
    if (!gold) {
      g_print ("%s: FAIL: %s\n", cname, err);
      ok = FALSE;
      continue;
    }
    ok &= check_keys (c, runs->items[i], gold);
    ok &= check_run (cname, model, multi, gold, r, log, stats);
    qm_json_free (gold);
  }
  qm_json_free (log);
out:
  g_print ("%s: %s\n", cname, ok ? "ok" : "FAIL");
  g_unlink (log_path);
  g_free (log_path);
  g_free (desc);
  run_result_free (r);
  g_free (ref);
  g_free (dis);
  g_string_free (models, TRUE);
  g_string_free (parse, TRUE);
  return ok;
}

typedef gboolean (*CaseFn) (const char *dir, const char *cache,
    const QmJson * c, GPtrArray * stats);

/* The cases of a manifest's list that fall in this part (position % ngroups
 * == group) and in QMETRIC_GOLDEN_CASES, each through fn. */
static void
run_cases (const QmJson * list, CaseFn fn, const char *dir, const char *cache,
    guint group, guint ngroups, GPtrArray * stats, guint * ran,
    guint * failed)
{
  const char *cases = g_getenv ("QMETRIC_GOLDEN_CASES");
  guint i;

  for (i = 0; list && i < list->n; i++) {
    const QmJson *c = list->items[i];
    if (i % ngroups != group || !in_list (cases, qm_json_str (c, "name")))
      continue;
    (*ran)++;
    if (!fn (dir, cache, c, stats))
      (*failed)++;
  }
}

int
main (int argc, char **argv)
{
  const char *golden = g_getenv ("QMETRIC_GOLDEN_DIR");
  const char *required = g_getenv ("QMETRIC_GOLDEN_REQUIRED");
  const char *sets = g_getenv ("QMETRIC_GOLDEN_SETS");
  gchar *manifest, *cache;
  QmJson *man;
  GPtrArray *stats;
  guint group = 0, ngroups = 1, ran = 0, failed = 0, i;
  char err[256];

  gst_init (&argc, &argv);
  for (i = 1; i < (guint) argc; i++)
    if (!strcmp (argv[i], "--group") && i + 1 < (guint) argc)
      sscanf (argv[++i], "%u/%u", &group, &ngroups);
  if (!golden)
    golden = QM_GOLDEN_DIR;
  manifest = g_build_filename (golden, "manifest.json", NULL);
  if (!g_file_test (manifest, G_FILE_TEST_EXISTS)) {
    if (required && !strcmp (required, "1")) {
      g_print ("FAIL: golden data not found at %s "
          "(QMETRIC_GOLDEN_REQUIRED=1)\n", golden);
      return 1;
    }
    g_print ("SKIP: golden data not found at %s (set QMETRIC_GOLDEN_DIR)\n",
        golden);
    return 77;
  }
  {
    /* the CUDA variant of the gate needs a GPU: without one it is skipped */
    const char *extra = g_getenv ("QMETRIC_GOLDEN_EXTRA");
    if (extra && strstr (extra, "backend=cuda")) {
      QmSettings s;
      QmEngine *e = NULL;
      char *msg = NULL;
      qm_settings_default (&s, 16, 16, 8, QM_CHROMA_420);
      s.metrics = "psnr";
      s.backend = QM_BACKEND_CUDA;
      if (qm_engine_open (&e, &s, &msg) != 0) {
        g_print ("SKIP: no CUDA device (%s)\n", msg ? msg : "?");
        free (msg);
        return 77;
      }
      qm_engine_close (&e);
    }
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
  if (in_list (sets, "libvmaf"))
    run_cases (qm_json_get (man, "cases"), run_case, golden, cache, group,
        ngroups, stats, &ran, &failed);
  if (in_list (sets, "xpsnr")) {
    /* FFmpeg's XPSNR reference values: their own manifest, the same clips */
    gchar *xdir = g_build_filename (golden, "xpsnr", NULL);
    gchar *xman = g_build_filename (xdir, "manifest.json", NULL);
    QmJson *xm = qm_json_load (xman, err, sizeof (err));
    if (!xm) {
      g_print ("%s: %s\n", required && !strcmp (required, "1") ? "FAIL" : "SKIP",
          err);
      if (required && !strcmp (required, "1"))
        failed++;
    }
    if (xm)
      run_cases (qm_json_get (xm, "cases"), run_xpsnr_case, xdir, cache,
          group, ngroups, stats, &ran, &failed);
    qm_json_free (xm);
    g_free (xman);
    g_free (xdir);
  }
  g_print ("\nfeature                                   worst abs diff  "
      "failures/checked\n");
  for (i = 0; i < stats->len; i++) {
    FeatStat *f = g_ptr_array_index (stats, i);
    g_print ("%-40s  %14.3e  %u/%u\n", f->key, f->worst, f->fails, f->checked);
  }
  g_print ("%u passed, %u failed\n", ran - failed, failed);
  g_ptr_array_unref (stats);
  qm_json_free (man);
  g_free (manifest);
  g_free (cache);
  if (!ran) {
    g_print ("FAIL: no case selected\n");
    return 1;
  }
  return failed ? 1 : 0;
}
