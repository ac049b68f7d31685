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

#include "goldenlib.h"
#include "json.h"
#include "qm.h"

/* The reference's known defect we do not reproduce (../shared/golden/README:
 * ciede2000 on 4:2:2 reads the wrong chroma samples). */
static const struct {
  const char *cas, *key;
} exempt[] = {
  {"garden_576x324_yuv422p_x264crf32", "ciede2000"},
};

static gboolean
is_exempt (const char *cas, const char *key)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (exempt); i++)
    if (!strcmp (exempt[i].cas, cas) && !strcmp (exempt[i].key, key))
      return TRUE;
  return FALSE;
}

/* Compare one reference run with what the element reported. */
static gboolean
check_run (const char *cname, const char *model, gboolean multi,
    const QmJson * gold, RunResult * r, const QmJson * log, GPtrArray * stats)
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

/* The keys of one reference run against the engine's names when configured
 * as that run: libvmaf's --model version=M plus its --feature list. */
static gboolean
check_keys (const QmJson * c, const QmJson * run, const QmJson * gold)
{
  const QmJson *extra = qm_json_get (run, "extra_features");
  GString *metrics = g_string_new ("default");
  gchar *label;
  gboolean ok;
  QmSettings s;
  QmEngine *e = NULL;
  char *msg = NULL;
  size_t i;

  golden_settings (c, &s);
  for (i = 0; extra && i < extra->n; i++)
    g_string_append_printf (metrics, ",%s", extra->items[i]->str);
  s.metrics = metrics->str;
  s.models = qm_json_str (run, "model");
  label = g_strdup_printf ("%s [%s]", qm_json_str (c, "name"), s.models);
  if (qm_engine_open (&e, &s, &msg) != 0) {
    g_print ("  %s: FAIL: engine: %s\n", label, msg ? msg : "?");
    free (msg);
    ok = FALSE;
  } else {
    ok = golden_keys_equal (label, e, gold, NULL, NULL);
    qm_engine_close (&e);
  }
  g_string_free (metrics, TRUE);
  g_free (label);
  return ok;
}

static gboolean
run_case (const char *golden, const char *cache, const QmJson * c,
    GPtrArray * stats)
{
  const char *cname = qm_json_str (c, "name");
  const QmJson *runs = qm_json_get (c, "runs");
  GString *models;
  gchar *ref, *dis, *log_path, *desc, *parse, *props;
  gboolean ok = TRUE, multi;
  guint nmodels = 0;
  RunResult *r;
  QmJson *log;
  char err[256];
  size_t i;

  if (!(parse = golden_rawparse (c)))
    return FALSE;
  models = g_string_new (NULL);
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

  ref = clip (golden, cache, qm_json_str (c, "ref"));
  dis = clip (golden, cache, qm_json_str (c, "dis"));
  if (!ref || !dis) {
    g_free (ref);
    g_free (dis);
    g_free (parse);
    g_string_free (models, TRUE);
    return FALSE;
  }

  log_path = g_strdup_printf ("%s/log-%s-%d.json", cache, cname,
      (int) getpid ());
  props = g_strdup_printf ("metrics=all model=%s", models->str);
  desc = golden_pipeline (props, log_path, ref, dis, parse);
  g_free (props);
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
  g_free (parse);
  return ok;
}

int
main (int argc, char **argv)
{
  return golden_main (argc, argv, "manifest.json", run_case);
}
