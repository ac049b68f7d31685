/* gst-qmetric: the golden gate of libvmaf's CLI presets.
 *
 * For every case of ../shared/golden/ctc/manifest.json and every run of it
 * (--aom_ctc v7.0, --nflx_ctc v1.0), run the qmetric element with the
 * "preset" property in a real pipeline (filesrc ! rawvideoparse ! qmetric;
 * the clips and their layout are the parent manifest's) and compare with the
 * reference's JSON: every frame's value of every key (the element's bus
 * messages), every pooled value and every aggregate_metrics value (the
 * element's JSON log), |ours - reference| < 1e-6, null (infinite) only
 * against infinite.
 *
 * Keys: the engine configured with the preset on the case's geometry must
 * name exactly the reference's keys (plus those the manifest says were
 * left out of the reference file, as ciede2000 of the odd-size case) and
 * exactly its aggregate keys.
 *
 * Environment and arguments: as tests/check/golden.c (QMETRIC_GOLDEN_DIR,
 * _REQUIRED, _CACHE, _CASES, _FEATURES, _EXTRA="backend=cuda" for the
 * whole preset on the GPU; --group N/M).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "goldenlib.h"
#include "metric.h"
#include "qm.h"

/* The reference's known defect we do not reproduce (../shared/golden/README:
 * ciede2000 on 4:2:2 reads the wrong chroma samples). */
static gboolean
is_exempt (const char *cas, const char *key)
{
  return !strcmp (cas, "garden_576x324_yuv422p_x264crf32") &&
      !strcmp (key, "ciede2000");
}

/* Whether key is a feature of a metric the run's "left_out" names. */
static gboolean
left_out (const char *key, const QmJson * run)
{
  const QmJson *lo = qm_json_get (run, "left_out");
  size_t i;

  for (i = 0; lo && i < lo->n; i++) {
    const QmMetricDesc *d = qm_metric_find (lo->items[i]->key);
    for (unsigned f = 0; d && d->features[f]; f++)
      if (!strcmp (d->features[f], key))
        return TRUE;
  }
  return FALSE;
}

/* The engine's keys and aggregates with the preset on this geometry against
 * the reference's. */
static gboolean
check_keys (const QmJson * c, const QmJson * run, const char *preset,
    const QmJson * gold)
{
  const QmJson *ga = qm_json_get (gold, "aggregate_metrics");
  gchar *label = g_strdup_printf ("%s [%s]", qm_json_str (c, "name"), preset);
  gboolean ok;
  QmSettings s;
  QmEngine *e = NULL;
  QmAggregates *aggs;
  const char *key;
  char *msg = NULL;
  double v;
  size_t i;

  golden_settings (c, &s);
  s.metrics = QM_DEFAULT_METRICS;
  s.metrics_are_default = TRUE;
  s.preset = preset;
  if (qm_engine_open (&e, &s, &msg) != 0) {
    g_print ("  %s: FAIL: engine: %s\n", label, msg ? msg : "?");
    free (msg);
    g_free (label);
    return FALSE;
  }
  ok = golden_keys_equal (label, e, gold, left_out, run);
  aggs = qm_aggregates_new (e);
  for (i = 0; aggs && (key = qm_aggregates_get (aggs, i, &v)); i++)
    if (!qm_json_get (ga, key)) {
      g_print ("  %s: FAIL: aggregate %s is ours only\n", label, key);
      ok = FALSE;
    }
  if (!ga || ga->n != i) {
    g_print ("  %s: FAIL: %u aggregates, the reference has %u\n", label,
        (unsigned) i, ga ? (unsigned) ga->n : 0);
    ok = FALSE;
  }
  qm_aggregates_free (aggs);
  qm_engine_close (&e);
  g_free (label);
  return ok;
}

/* Frames (the element's messages), pooled values and aggregates (its log)
 * against the reference run. */
static gboolean
check_run (const char *cname, const char *preset, const QmJson * gold,
    RunResult * r, const QmJson * log, GPtrArray * stats)
{
  const QmJson *frames = qm_json_get (gold, "frames");
  const QmJson *gpooled = qm_json_get (gold, "pooled_metrics");
  const QmJson *mpooled = qm_json_get (log, "pooled_metrics");
  const QmJson *gagg = qm_json_get (gold, "aggregate_metrics");
  const QmJson *magg = qm_json_get (log, "aggregate_metrics");
  gchar *label = g_strdup_printf ("%s [%s]", cname, preset);
  gboolean ok = TRUE;
  size_t i, k, j;

  for (i = 0; frames && i < frames->n; i++) {
    const QmJson *fr = qm_json_at (frames, i);
    const QmJson *m = qm_json_get (fr, "metrics");
    gint64 idx = (gint64) qm_json_num (fr, "frameNum", -1);
    const GstStructure *s = g_hash_table_lookup (r->frames, &idx);
    gchar where[32];

    g_snprintf (where, sizeof (where), "frame %" G_GINT64_FORMAT, idx);
    for (k = 0; m && k < m->n; k++) {
      const QmJson *g = m->items[k];
      double v = NAN;
      gboolean have;

      if (!key_selected (g->key) || is_exempt (cname, g->key))
        continue;
      have = s && gst_structure_get_double (s, g->key, &v);
      ok &= golden_check_value (stats, label, g->key, where, have, v, g);
    }
  }
  for (k = 0; gpooled && k < gpooled->n; k++) {
    const QmJson *gp = gpooled->items[k];
    const QmJson *mp = qm_json_get (mpooled, gp->key);

    if (!key_selected (gp->key) || is_exempt (cname, gp->key))
      continue;
    for (j = 0; j < gp->n; j++) {
      const QmJson *mv = qm_json_get (mp, gp->items[j]->key);
      gchar *where = g_strdup_printf ("pooled %s", gp->items[j]->key);
      ok &= golden_check_value (stats, label, gp->key, where, mv != NULL,
          mv ? gval (mv) : NAN, gp->items[j]);
      g_free (where);
    }
  }
  for (k = 0; gagg && k < gagg->n; k++) {
    const QmJson *ga = gagg->items[k];
    const QmJson *mv = qm_json_get (magg, ga->key);

    if (!key_selected (ga->key))
      continue;
    ok &= golden_check_value (stats, label, ga->key, "aggregate", mv != NULL,
        mv ? gval (mv) : NAN, ga);
  }
  g_free (label);
  return ok;
}

static gboolean
run_case (const char *golden, const char *cache, const QmJson * c,
    GPtrArray * stats)
{
  const char *cname = qm_json_str (c, "name");
  const QmJson *runs = qm_json_get (c, "runs");
  const QmJson *pc = golden_parent_case (golden, cname);
  gchar *ref, *dis, *parse;
  gboolean ok = TRUE;
  char err[256];
  size_t i;

  if (!pc) {
    g_print ("%s: FAIL: not a case of the parent manifest\n", cname);
    return FALSE;
  }
  if (!(parse = golden_rawparse (pc)))
    return FALSE;
  ref = clip (golden, cache, qm_json_str (pc, "ref"));
  dis = clip (golden, cache, qm_json_str (pc, "dis"));
  for (i = 0; ref && dis && runs && i < runs->n; i++) {
    const QmJson *run = runs->items[i];
    gchar *preset = g_strdup_printf ("%s=%s", qm_json_str (run, "preset"),
        qm_json_str (run, "version"));
    gchar *path = g_build_filename (golden, "ctc", qm_json_str (run, "result"),
        NULL);
    gchar *log_path = g_strdup_printf ("%s/log-ctc-%s-%s-%d.json", cache,
        cname, qm_json_str (run, "preset"), (int) getpid ());
    gchar *props = g_strdup_printf ("preset=%s", preset);
    gchar *desc = golden_pipeline (props, log_path, ref, dis, parse);
    QmJson *gold = qm_json_load (path, err, sizeof (err)), *log = NULL;
    gint64 t0 = g_get_monotonic_time ();
    RunResult *r = run_pipeline (desc);

    g_print ("%s [%s]: %u frames in %.1f s\n", cname, preset,
        g_hash_table_size (r->frames), (g_get_monotonic_time () - t0) / 1e6);
    if (!gold) {
      g_print ("%s: FAIL: %s\n", cname, err);
      ok = FALSE;
    } else if (r->error) {
      g_print ("%s [%s]: FAIL: %s\n  pipeline: %s\n", cname, preset, r->error,
          desc);
      ok = FALSE;
    } else if (!(log = qm_json_load (log_path, err, sizeof (err)))) {
      g_print ("%s [%s]: FAIL: log: %s\n", cname, preset, err);
      ok = FALSE;
    } else {
      ok &= check_keys (c, run, preset, gold);
      ok &= check_run (cname, preset, gold, r, log, stats);
    }
    qm_json_free (log);
    qm_json_free (gold);
    run_result_free (r);
    g_unlink (log_path);
    g_free (log_path);
    g_free (desc);
    g_free (props);
    g_free (path);
    g_free (preset);
  }
  if (!ref || !dis)
    ok = FALSE;
  g_print ("%s: %s\n", cname, ok ? "ok" : "FAIL");
  g_free (ref);
  g_free (dis);
  g_free (parse);
  return ok;
}

int
main (int argc, char **argv)
{
  return golden_main (argc, argv, "ctc/manifest.json", run_case);
}
