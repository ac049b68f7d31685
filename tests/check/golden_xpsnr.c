/* gst-qmetric: the golden gate of XPSNR against FFmpeg n7.1's xpsnr filter.
 *
 * For every case of ../shared/golden/xpsnr/manifest.json (the clips of the
 * parent manifest, whose layout it gives), run the qmetric element with
 * metrics=xpsnr in a real pipeline (filesrc ! rawvideoparse ! qmetric) at
 * the case's frame rate, and compare every frame's xpsnr_y/u/v (the
 * element's bus messages) with the reference's full-precision values, and
 * the log's aggregate_metrics with FFmpeg's pooled values (xpsnr_min: the
 * smallest of the three), |ours - reference| < 1e-6, null (infinite) only
 * against infinite.  The weighted SSE is exact integer arithmetic, so the
 * frames' values are equal, not merely close.  A frame carrying other
 * scores than the three fails.
 *
 * Environment and arguments: as tests/check/golden.c (QMETRIC_GOLDEN_DIR,
 * _REQUIRED, _CACHE, _CASES, _FEATURES, _EXTRA="backend=cuda" for the CUDA
 * twin; --group N/M).
 */
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "goldenlib.h"

static const char *const keys[] = { "xpsnr_y", "xpsnr_u", "xpsnr_v" };

/* Whether the xpsnr case c describes the same clips as the parent case pc
 * (the layout rawvideoparse is given comes from pc). */
static gboolean
same_clips (const QmJson * c, const QmJson * pc)
{
  static const char *const num[] = { "width", "height", "fps", "frame_bytes" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (num); i++)
    if (qm_json_num (c, num[i], -1) != qm_json_num (pc, num[i], -2))
      return FALSE;
  return !g_strcmp0 (qm_json_str (c, "pix_fmt"), qm_json_str (pc, "pix_fmt"));
}

/* Every frame's three values against the reference's full precision. */
static gboolean
check_frames (const char *cname, const QmJson * gold, RunResult * r,
    GPtrArray * stats)
{
  const QmJson *frames = qm_json_get (gold, "frames");
  gboolean ok = TRUE;
  size_t i, k;

  if (!frames || frames->n != g_hash_table_size (r->frames)) {
    g_print ("  %s: FAIL: %u frames scored, the reference has %u\n", cname,
        g_hash_table_size (r->frames), frames ? (unsigned) frames->n : 0);
    ok = FALSE;
  }
  for (i = 0; frames && i < frames->n; i++) {
    const QmJson *fr = qm_json_at (frames, i);
    const QmJson *m = qm_json_get (fr, "metrics_full_precision");
    gint64 idx = (gint64) qm_json_num (fr, "frameNum", -1);
    const GstStructure *st = g_hash_table_lookup (r->frames, &idx);
    gchar where[32];

    /* timestamp, stream-time, running-time, duration, index, the scores */
    if (st && gst_structure_n_fields (st) != 5 + G_N_ELEMENTS (keys)) {
      g_print ("  %s: FAIL: frame %" G_GINT64_FORMAT " has other scores "
          "than xpsnr_y/u/v: %" GST_PTR_FORMAT "\n", cname, idx, st);
      ok = FALSE;
    }
    g_snprintf (where, sizeof (where), "frame %" G_GINT64_FORMAT, idx);
    for (k = 0; k < G_N_ELEMENTS (keys); k++) {
      double v = NAN;
      gboolean have = st && gst_structure_get_double (st, keys[k], &v);

      if (key_selected (keys[k]))
        ok &= golden_check_value (stats, cname, keys[k], where, have, v,
            qm_json_get (m, keys[k]));
    }
  }
  return ok;
}

/* The log's aggregate_metrics against FFmpeg's pooled values. */
static gboolean
check_pooled (const char *cname, const QmJson * gold, const QmJson * log,
    GPtrArray * stats)
{
  const QmJson *agg = qm_json_get (log, "aggregate_metrics");
  const QmJson *pooled = qm_json_get (gold, "pooled_full_precision");
  QmJson min = { 0 };
  gboolean ok = TRUE;
  size_t k;

  /* FFmpeg's "minimum": the smallest of the three pooled values */
  min.type = QM_JSON_NUMBER;
  min.num = INFINITY;
  for (k = 0; k < G_N_ELEMENTS (keys); k++) {
    const QmJson *g = qm_json_get (pooled, keys[k]);
    min.num = MIN (min.num, g ? gval (g) : NAN);
  }
  for (k = 0; k <= G_N_ELEMENTS (keys); k++) {
    const char *key = k < G_N_ELEMENTS (keys) ? keys[k] : "xpsnr_min";
    const QmJson *want = k < G_N_ELEMENTS (keys) ?
        qm_json_get (pooled, key) : &min;
    const QmJson *mv = qm_json_get (agg, key);
    /* apart from the frames' values in the table: those are exact, these
     * went through the log's six decimals */
    gchar *stat = g_strdup_printf ("pooled %s", key);

    if (key_selected (key))
      ok &= golden_check_value (stats, cname, stat, "aggregate_metrics",
          mv != NULL, mv ? gval (mv) : NAN, want);
    g_free (stat);
  }
  return ok;
}

static gboolean
run_case (const char *golden, const char *cache, const QmJson * c,
    GPtrArray * stats)
{
  const char *cname = qm_json_str (c, "name");
  const QmJson *pc = golden_parent_case (golden, cname);
  gchar *xdir = g_build_filename (golden, "xpsnr", NULL);
  gchar *ref = NULL, *dis = NULL, *parse = NULL, *log_path = NULL;
  gchar *desc = NULL, *path;
  QmJson *gold = NULL, *log = NULL;
  RunResult *r = NULL;
  gboolean ok = FALSE;
  char err[256];

  if (!pc || !same_clips (c, pc)) {
    g_print ("%s: FAIL: not a case of the parent manifest with the same "
        "geometry, format and rate\n", cname);
    goto out;
  }
  if (!(parse = golden_rawparse (pc)))
    goto out;
  ref = clip (xdir, cache, qm_json_str (c, "ref"));
  dis = clip (xdir, cache, qm_json_str (c, "dis"));
  path = g_build_filename (xdir, qm_json_str (c, "result"), NULL);
  gold = qm_json_load (path, err, sizeof (err));
  g_free (path);
  if (!ref || !dis || !gold) {
    if (!gold)
      g_print ("%s: FAIL: %s\n", cname, err);
    goto out;
  }
  log_path = g_strdup_printf ("%s/log-xpsnr-%s-%d.json", cache, cname,
      (int) getpid ());
  desc = golden_pipeline ("metrics=xpsnr", log_path, ref, dis, parse);
  {
    gint64 t0 = g_get_monotonic_time ();
    r = run_pipeline (desc);
    g_print ("%s (xpsnr): %u frames in %.1f s\n", cname,
        g_hash_table_size (r->frames), (g_get_monotonic_time () - t0) / 1e6);
  }
  if (r->error) {
    g_print ("%s: FAIL: %s\n  pipeline: %s\n", cname, r->error, desc);
    goto out;
  }
  if (!(log = qm_json_load (log_path, err, sizeof (err)))) {
    g_print ("%s: FAIL: log: %s\n", cname, err);
    goto out;
  }
  ok = check_frames (cname, gold, r, stats);
  ok &= check_pooled (cname, gold, log, stats);
out:
  g_print ("%s (xpsnr): %s\n", cname, ok ? "ok" : "FAIL");
  if (log_path)
    g_unlink (log_path);
  qm_json_free (log);
  qm_json_free (gold);
  if (r)
    run_result_free (r);
  g_free (log_path);
  g_free (desc);
  g_free (ref);
  g_free (dis);
  g_free (parse);
  g_free (xdir);
  return ok;
}

int
main (int argc, char **argv)
{
  return golden_main (argc, argv, "xpsnr/manifest.json", run_case);
}
