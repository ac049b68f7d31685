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
 * Environment and arguments: as tests/check/golden.c (QMETRIC_GOLDEN_DIR,
 * _REQUIRED, _CACHE, _CASES, _EXTRA, _THREADS; --group N/M).  Exit status:
 * 0 pass, 1 fail, 77 skip.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gst/gst.h>

#include "goldenlib.h"
#include "sha256.h"
#include "ssimulacra2.h"

/* the tool prints 8 decimals (rounding: up to 5e-9) */
#define S2_TOL 1e-8

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

/* The scores of one case against the printed values, and the no-FMA
 * build's against them (it must fall outside the gate where the frames are
 * not identical); the RGB hashes on the CPU backend. */
static gboolean
run_case (const char *golden, const char *cache, const QmJson * c,
    GPtrArray * stats)
{
  const char *cname = qm_json_str (c, "name");
  const char *extra = g_getenv ("QMETRIC_GOLDEN_EXTRA");
  const QmJson *pc = golden_parent_case (golden, cname);
  gchar *rel = g_build_filename ("ssimulacra2", qm_json_str (c, "result"), NULL);
  gchar *path = g_build_filename (golden, rel, NULL);
  gchar *parse = NULL, *ref = NULL, *dis = NULL, *desc;
  const QmJson *frames, *nofma;
  gboolean ok = TRUE, identical = TRUE;
  double worst = 0, worst_nofma = 0;
  RunResult *r = NULL;
  QmJson *res;
  char err[256];
  size_t i;

  res = qm_json_load (path, err, sizeof (err));
  g_free (rel);
  g_free (path);
  if (!pc) {
    g_print ("%s: FAIL: not in the golden manifest\n", cname);
    ok = FALSE;
    goto out;
  }
  if (!res || !(parse = golden_rawparse (pc))) {
    g_print ("%s: FAIL: %s\n", cname, res ? "no raw layout" : err);
    ok = FALSE;
    goto out;
  }
  ref = clip (golden, cache, qm_json_str (c, "ref"));
  dis = clip (golden, cache, qm_json_str (c, "dis"));
  if (!ref || !dis) {
    ok = FALSE;
    goto out;
  }
  desc = golden_pipeline ("metrics=ssimulacra2", NULL, ref, dis, parse);
  r = run_pipeline (desc);
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
    const QmJson *want = qm_json_get (fr, "ssimulacra2");
    gint64 idx = (gint64) qm_json_num (fr, "frame", -1);
    const GstStructure *s = g_hash_table_lookup (r->frames, &idx);
    gchar where[32];
    double v = NAN;
    gboolean have = s && gst_structure_get_double (s, "ssimulacra2", &v);

    g_snprintf (where, sizeof (where), "frame %" G_GINT64_FORMAT, idx);
    ok &= golden_check_within (stats, cname, "ssimulacra2", where, have, v,
        want, S2_TOL);
    if (have && want)
      worst = MAX (worst, fabs (v - gval (want)));
    if (!want || gval (want) != 100.0)
      identical = FALSE;
    if (want && nofma && i < nofma->n)
      worst_nofma = MAX (worst_nofma, fabs (qm_json_num (nofma->items[i],
                  "ssimulacra2", NAN) - gval (want)));
  }
  if (!frames || !frames->n || g_hash_table_size (r->frames) != frames->n) {
    g_print ("  %s: FAIL: %u frames scored, the manifest has %u\n", cname,
        g_hash_table_size (r->frames), frames ? (guint) frames->n : 0);
    ok = FALSE;
  }
  /* the gate must be able to fail: libjxl without FMA is outside it */
  if (!identical && !(worst_nofma >= S2_TOL)) {
    g_print ("  %s: FAIL: the no-FMA build's values (worst %.3g) would pass "
        "the gate\n", cname, worst_nofma);
    ok = FALSE;
  }
  if (!extra || !*extra)
    ok &= check_hashes (cname, pc, res, ref, dis);
out:
  g_print ("%s: %s: %d frames, worst |ours - libjxl| %.3g, the no-FMA "
      "build's %.3g\n", cname, ok ? "ok" : "FAIL",
      (int) qm_json_num (c, "frames", 0), worst, worst_nofma);
  if (r)
    run_result_free (r);
  qm_json_free (res);
  g_free (parse);
  g_free (ref);
  g_free (dis);
  return ok;
}

int
main (int argc, char **argv)
{
  return golden_main (argc, argv, "ssimulacra2/manifest.json", run_case);
}
