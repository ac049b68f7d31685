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
 * Environment:
 *   QMETRIC_GOLDEN_DIR       the golden data (default: set by meson)
 *   QMETRIC_GOLDEN_REQUIRED  "1": missing data is a failure (CI), else a skip
 *   QMETRIC_GOLDEN_CACHE     where decompressed clips are kept
 *   QMETRIC_GOLDEN_CASES     comma-separated substrings of case names
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

#include "golden_util.h"
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

static gboolean
key_selected (const char *key)
{
  return qm_golden_in_list (g_getenv ("QMETRIC_GOLDEN_FEATURES"), key, TRUE);
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

/* Compare one reference run with what the element reported. */
static gboolean
check_run (const char *cname, const char *model, gboolean multi,
    const QmJson * gold, QmGoldenRun * r, const QmJson * log, GPtrArray * stats)
{
  const QmJson *frames = qm_json_get (gold, "frames");
  const QmJson *gpooled = qm_json_get (gold, "pooled_metrics");
  const QmJson *mpooled = qm_json_get (log, "pooled_metrics");
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
      FeatStat *st;
      double v;

      if (!key_selected (g->key) || is_exempt (cname, g->key))
        continue;
      st = stat_for (stats, g->key);
      st->checked++;
      if (!s || !gst_structure_get_double (s, ours_key, &v)) {
        if (st->fails++ == 0)
          g_print ("  %s [%s]: %s missing in frame %" G_GINT64_FORMAT "\n",
              cname, model, g->key, idx);
        ok = FALSE;
        continue;
      }
      if (isfinite (v) && isfinite (gval (g)))
        st->worst = MAX (st->worst, fabs (v - gval (g)));
      if (!close_enough (v, gval (g))) {
        if (st->fails++ < 3)
          g_print ("  %s [%s]: %s frame %" G_GINT64_FORMAT ": ours %.9g, "
              "reference %.9g\n", cname, model, g->key, idx, v, gval (g));
        ok = FALSE;
      }
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

static gboolean
run_case (const char *golden, const char *cache, const QmJson * c,
    GPtrArray * stats)
{
  const char *cname = qm_json_str (c, "name");
  const char *pix = qm_json_str (c, "pix_fmt");
  const QmJson *runs = qm_json_get (c, "runs");
  const char *extra = g_getenv ("QMETRIC_GOLDEN_EXTRA");
  GString *models = g_string_new (NULL);
  gchar *ref, *dis, *log_path, *desc, *parse = qm_golden_rawparse (c);
  gboolean ok = TRUE, multi;
  guint nmodels = 0;
  QmGoldenRun *r;
  QmJson *log;
  char err[256];
  size_t i;

  if (!parse) {
    g_print ("%s: FAIL: unknown pix_fmt %s\n", cname, pix);
    g_string_free (models, TRUE);
    return FALSE;
  }
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

  ref = qm_golden_clip (golden, cache, qm_json_str (c, "ref"));
  dis = qm_golden_clip (golden, cache, qm_json_str (c, "dis"));
  if (!ref || !dis) {
    g_free (ref);
    g_free (dis);
    g_free (parse);
    g_string_free (models, TRUE);
    return FALSE;
  }

  log_path = g_strdup_printf ("%s/log-%s-%d.json", cache, cname,
      (int) getpid ());
  desc = g_strdup_printf ("qmetric name=q metrics=all model=%s threads=%s "
      "log-location=\"%s\" %s ! fakesink "
      "filesrc location=\"%s\" ! %s ! q.ref_sink "
      "filesrc location=\"%s\" ! %s ! q.dist_sink", models->str,
      g_getenv ("QMETRIC_GOLDEN_THREADS") ? g_getenv ("QMETRIC_GOLDEN_THREADS")
      : "2", log_path, extra ? extra : "", ref, parse, dis, parse);
  {
    gint64 t0 = g_get_monotonic_time ();
    r = qm_golden_run_pipeline (desc);
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
  qm_golden_run_free (r);
  g_free (ref);
  g_free (dis);
  g_string_free (models, TRUE);
  g_free (parse);
  return ok;
}

int
main (int argc, char **argv)
{
  const char *cases = g_getenv ("QMETRIC_GOLDEN_CASES");
  const char *golden;
  gchar *cache;
  QmJson *man;
  const QmJson *list;
  GPtrArray *stats;
  guint group = 0, ngroups = 1, ran = 0, failed = 0, i;
  int status;

  gst_init (&argc, &argv);
  for (i = 1; i < (guint) argc; i++)
    if (!strcmp (argv[i], "--group") && i + 1 < (guint) argc)
      sscanf (argv[++i], "%u/%u", &group, &ngroups);
  man = qm_golden_manifest (QM_GOLDEN_DIR, "manifest.json", &golden, &status);
  if (!man)
    return status;
  /* the CUDA variant of the gate needs a GPU: without one it is skipped */
  if (!qm_golden_device_ok ()) {
    qm_json_free (man);
    return 77;
  }
  cache = qm_golden_cache ();

  stats = g_ptr_array_new_with_free_func ((GDestroyNotify) feat_stat_free);
  list = qm_json_get (man, "cases");
  for (i = 0; list && i < list->n; i++) {
    const QmJson *c = list->items[i];
    if (i % ngroups != group ||
        !qm_golden_in_list (cases, qm_json_str (c, "name"), FALSE))
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
  g_ptr_array_unref (stats);
  qm_json_free (man);
  g_free (cache);
  if (!ran) {
    g_print ("FAIL: no case selected\n");
    return 1;
  }
  return failed ? 1 : 0;
}
