/* gst-qmetric: the SSIMULACRA2 golden gate.
 *
 * For every case of ../shared/golden/ssimulacra2/manifest.json (libjxl
 * v0.12.0's ssimulacra2 tool on PNGs made from the golden clips), run the
 * qmetric element (filesrc ! rawvideoparse ! qmetric metrics=ssimulacra2)
 * and compare every frame's score with the tool's printed value: |ours -
 * printed| < TOL, the printed 8 decimals (docs/accuracy.md).  The gate is
 * sharp enough to tell an implementation without libjxl's FMA from ours:
 * the manifest's no-FMA build of the same tool must fail it on every case
 * whose frames are not identical (checked here too).
 *
 * The conversion: each frame of both clips converted by the metric's own
 * stage (qm_ssimu2_rgb16_row(), BT.709 limited range) must hash, as 16-bit
 * big-endian R G B rows, to the manifest's rgb16_sha256 of that frame (not
 * with QMETRIC_GOLDEN_EXTRA: the CUDA variant checks the scores only).
 *
 * Environment: as tests/check/golden.c (QMETRIC_GOLDEN_DIR, _REQUIRED,
 * _CACHE, _CASES, _EXTRA, _THREADS).  Exit status: 0 pass, 1 fail, 77 skip.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gst/gst.h>

#include "golden_util.h"
#include "json.h"
#include "qm.h"
#include "sha256.h"
#include "ssimulacra2.h"

/* the tool prints 8 decimals (rounding: up to 5e-9) */
#define TOL 1e-8

static const QmJson *
find_case (const QmJson * cases, const char *name)
{
  size_t i;

  for (i = 0; cases && i < cases->n; i++)
    if (!g_strcmp0 (qm_json_str (cases->items[i], "name"), name))
      return cases->items[i];
  return NULL;
}

/* sha256 of frame f of a clip laid out as case pc says, converted to
 * 16-bit RGB (big-endian, R G B interleaved, rows top to bottom). */
static gboolean
frame_hash (const guint8 * clip, gsize size, const QmJson * pc, guint64 f,
    char hex[QM_SHA256_HEX])
{
  const int w = (int) qm_json_num (pc, "width", 0);
  const int h = (int) qm_json_num (pc, "height", 0);
  const int bpc = (int) qm_json_num (pc, "bitdepth", 8);
  const char *pix = qm_json_str (pc, "pix_fmt");
  const gsize frame = (gsize) qm_json_num (pc, "frame_bytes", 0);
  const QmJson *st = qm_json_get (pc, "plane_strides");
  const QmJson *of = qm_json_get (pc, "plane_offsets");
  const int ss_x = !g_str_has_prefix (pix, "yuv444");
  const int ss_y = g_str_has_prefix (pix, "yuv420");
  const int bytes = bpc > 8 ? 2 : 1;
  const guint8 *base = clip + f * frame;
  QmSsimu2Conv cv;
  QmSha256 sha;
  guint8 digest[QM_SHA256_BYTES], *be;
  guint16 *rgb;
  gint32 *tmp;
  int x, y;

  if (!st || !of || st->n < 3 || of->n < 3 || (f + 1) * frame > size)
    return FALSE;
  qm_ssimu2_conv_init (&cv, bpc, 0.2126, 0.0722, 0);
  rgb = g_new (guint16, 3 * (gsize) w);
  tmp = g_new (gint32, 3 * (gsize) w);
  be = g_new (guint8, 6 * (gsize) w);
  qm_sha256_init (&sha);
  for (y = 0; y < h; y++) {
    const guint8 *row[3];
    int p;
    for (p = 0; p < 3; p++)
      row[p] = base + (gsize) of->items[p]->num +
          (gsize) (p ? y >> ss_y : y) * (gsize) st->items[p]->num;
    qm_ssimu2_rgb16_row (row[0], row[1], row[2], w, bpc, ss_x,
        (int) st->items[1]->num / bytes, &cv, tmp, rgb);
    for (x = 0; x < 3 * w; x++) {
      be[2 * x] = (guint8) (rgb[x] >> 8);
      be[2 * x + 1] = (guint8) rgb[x];
    }
    qm_sha256_update (&sha, be, 6 * (gsize) w);
  }
  qm_sha256_final (&sha, digest);
  qm_sha256_hex (digest, hex);
  g_free (rgb);
  g_free (tmp);
  g_free (be);
  return TRUE;
}

/* Every frame's converted pictures against the manifest's hashes. */
static gboolean
check_hashes (const char *cname, const QmJson * pc, const QmJson * res,
    const char *ref, const char *dis)
{
  const QmJson *frames = qm_json_get (qm_json_get (res, "rgb16_sha256"),
      "frames");
  const char *path[2] = { ref, dis }, *side[2] = { "ref", "dis" };
  GMappedFile *m[2] = { NULL, NULL };
  gboolean ok = TRUE;
  guint n = 0;
  size_t i;
  int k;

  for (k = 0; k < 2; k++)
    if (!(m[k] = g_mapped_file_new (path[k], FALSE, NULL)))
      ok = FALSE;
  for (i = 0; ok && frames && i < frames->n; i++) {
    const QmJson *fr = frames->items[i];
    const guint64 f = (guint64) qm_json_num (fr, "frame", -1);
    for (k = 0; k < 2; k++) {
      char hex[QM_SHA256_HEX];
      if (!frame_hash ((const guint8 *) g_mapped_file_get_contents (m[k]),
              g_mapped_file_get_length (m[k]), pc, f, hex) ||
          g_strcmp0 (hex, qm_json_str (fr, side[k]))) {
        g_print ("  %s: FAIL: frame %" G_GUINT64_FORMAT " of %s converts to "
            "RGB with sha256 %s, the manifest has %s\n", cname, f, side[k],
            hex, qm_json_str (fr, side[k]));
        ok = FALSE;
        break;
      }
      n++;
    }
  }
  for (k = 0; k < 2; k++)
    if (m[k])
      g_mapped_file_unref (m[k]);
  if (!frames || !n)
    ok = FALSE;
  g_print ("  %s: RGB conversion %s (%u pictures)\n", cname,
      ok ? "identical" : "DIFFERS", n);
  return ok;
}

/* The scores of one case; *worst, *worst_nofma: the largest differences of
 * ours and of the no-FMA build from the printed values. */
static gboolean
run_case (const char *golden, const char *cache, const QmJson * c,
    const QmJson * pc, gboolean hashes, double *worst, double *worst_nofma)
{
  const char *cname = qm_json_str (c, "name");
  const char *extra = g_getenv ("QMETRIC_GOLDEN_EXTRA");
  const char *threads = g_getenv ("QMETRIC_GOLDEN_THREADS");
  gchar *rel = g_build_filename ("ssimulacra2", qm_json_str (c, "result"), NULL);
  gchar *path = g_build_filename (golden, rel, NULL);
  gchar *parse = qm_golden_rawparse (pc), *ref = NULL, *dis = NULL, *desc;
  const QmJson *frames, *nofma;
  gboolean ok = TRUE, identical = TRUE;
  QmGoldenRun *r = NULL;
  QmJson *res;
  guint fails = 0;
  char err[256];
  size_t i;

  *worst = *worst_nofma = 0;
  res = qm_json_load (path, err, sizeof (err));
  g_free (rel);
  g_free (path);
  if (!res || !parse) {
    g_print ("%s: FAIL: %s\n", cname, res ? "no raw layout" : err);
    ok = FALSE;
    goto out;
  }
  ref = qm_golden_clip (golden, cache, qm_json_str (c, "ref"));
  dis = qm_golden_clip (golden, cache, qm_json_str (c, "dis"));
  if (!ref || !dis) {
    ok = FALSE;
    goto out;
  }
  desc = g_strdup_printf ("qmetric name=q metrics=ssimulacra2 threads=%s %s ! "
      "fakesink filesrc location=\"%s\" ! %s ! q.ref_sink "
      "filesrc location=\"%s\" ! %s ! q.dist_sink", threads ? threads : "2",
      extra ? extra : "", ref, parse, dis, parse);
  r = qm_golden_run_pipeline (desc);
  g_free (desc);
  if (r->error) {
    g_print ("%s: FAIL: %s\n", cname, r->error);
    ok = FALSE;
    goto out;
  }
  frames = qm_json_get (res, "frames");
  nofma = qm_json_get (qm_json_get (res, "ssimulacra2_non_fma_build"), "frames");
  for (i = 0; frames && i < frames->n; i++) {
    const QmJson *fr = frames->items[i];
    gint64 idx = (gint64) qm_json_num (fr, "frame", -1);
    const double want = qm_json_num (fr, "ssimulacra2", NAN);
    const GstStructure *s = g_hash_table_lookup (r->frames, &idx);
    double v;

    if (!s || !gst_structure_get_double (s, "ssimulacra2", &v)) {
      g_print ("  %s: FAIL: frame %" G_GINT64_FORMAT " has no score\n", cname,
          idx);
      ok = FALSE;
      continue;
    }
    *worst = MAX (*worst, fabs (v - want));
    if (!(fabs (v - want) < TOL)) {
      if (fails++ < 3)
        g_print ("  %s: FAIL: frame %" G_GINT64_FORMAT ": ours %.10f, libjxl "
            "%.8f\n", cname, idx, v, want);
      ok = FALSE;
    }
    if (want != 100.0)
      identical = FALSE;
    if (nofma && i < nofma->n)
      *worst_nofma = MAX (*worst_nofma, fabs (qm_json_num (nofma->items[i],
                  "ssimulacra2", NAN) - want));
  }
  if (!frames || !frames->n || g_hash_table_size (r->frames) != frames->n) {
    g_print ("  %s: FAIL: %u frames scored, the manifest has %u\n", cname,
        g_hash_table_size (r->frames), frames ? (guint) frames->n : 0);
    ok = FALSE;
  }
  /* the gate must be able to fail: libjxl without FMA is outside it */
  if (!identical && !(*worst_nofma >= TOL)) {
    g_print ("  %s: FAIL: the no-FMA build's values (worst %.3g) would pass "
        "the gate\n", cname, *worst_nofma);
    ok = FALSE;
  }
  if (hashes)
    ok &= check_hashes (cname, pc, res, ref, dis);
out:
  g_print ("%s: %s\n", cname, ok ? "ok" : "FAIL");
  if (r)
    qm_golden_run_free (r);
  qm_json_free (res);
  g_free (parse);
  g_free (ref);
  g_free (dis);
  return ok;
}

int
main (int argc, char **argv)
{
  const char *cases = g_getenv ("QMETRIC_GOLDEN_CASES");
  const char *extra = g_getenv ("QMETRIC_GOLDEN_EXTRA");
  const char *golden;
  const QmJson *list;
  QmJson *man, *parent;
  guint ran = 0, failed = 0;
  gchar *cache;
  int status;
  size_t i;

  gst_init (&argc, &argv);
  man = qm_golden_manifest (QM_GOLDEN_DIR, "ssimulacra2/manifest.json",
      &golden, &status);
  if (!man)
    return status;
  parent = qm_golden_manifest (golden, "manifest.json", &golden, &status);
  if (!parent) {
    qm_json_free (man);
    return status;
  }
  if (!qm_golden_device_ok ()) {
    qm_json_free (man);
    qm_json_free (parent);
    return 77;
  }
  cache = qm_golden_cache ();
  g_print ("case                                                    frames  "
      "worst |ours - libjxl|  no-FMA build's\n");
  list = qm_json_get (man, "cases");
  for (i = 0; list && i < list->n; i++) {
    const QmJson *c = list->items[i];
    const char *name = qm_json_str (c, "name");
    const QmJson *pc = find_case (qm_json_get (parent, "cases"), name);
    double worst, worst_nofma;
    gboolean ok;

    if (!qm_golden_in_list (cases, name, FALSE))
      continue;
    ran++;
    if (!pc) {
      g_print ("%s: FAIL: not in the golden manifest\n", name);
      failed++;
      continue;
    }
    ok = run_case (golden, cache, c, pc, !extra || !*extra, &worst,
        &worst_nofma);
    failed += !ok;
    g_print ("%-55s %6d  %20.3g  %14.3g\n", name,
        (int) qm_json_num (c, "frames", 0), worst, worst_nofma);
  }
  g_print ("%u passed, %u failed\n", ran - failed, failed);
  qm_json_free (man);
  qm_json_free (parent);
  g_free (cache);
  if (!ran) {
    g_print ("FAIL: no case selected\n");
    return 1;
  }
  return failed ? 1 : 0;
}
