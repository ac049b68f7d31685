/* gst-qmetric: the element's colorimetry for SSIMULACRA2's conversion to
 * RGB (docs/metrics.md).  In each pipeline the default instance
 * ("ssimulacra2", which follows the caps) runs beside instances whose
 * options name a conversion; per frame the default one must equal the
 * conversion the caps call for, and differ from another:
 *
 *   - caps without colorimetry: BT.709 limited (the golden set's), not
 *     GStreamer's size-dependent default (BT.601 at this size);
 *   - both pads bt601: BT.601;
 *   - only the distorted pad bt601: BT.601 for both sides (the reference
 *     takes it), without a qmetric-reconfigured message although the engine
 *     opened at the reference's caps;
 *   - full range (1:4:5:4): BT.601 full range.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gst/gst.h>

#include "goldenlib.h"

static int failures;

/* The pipeline: smpte bars against a brighter copy, each pad's caps with
 * the given colorimetry (NULL: none); features: the named instances.  Each
 * side has a source of its own: through a tee, a colorimetry asked for on
 * one branch would be negotiated for both pads. */
static RunResult *
run (const char *ref_color, const char *dist_color, const char *features)
{
  gchar *rc = ref_color ? g_strdup_printf (",colorimetry=%s", ref_color) :
      g_strdup ("");
  gchar *dc = dist_color ? g_strdup_printf (",colorimetry=%s", dist_color) :
      g_strdup ("");
  gchar *desc = g_strdup_printf ("qmetric name=q metrics=ssimulacra2 "
      "features=%s threads=1 ! fakesink "
      "videotestsrc num-buffers=3 pattern=smpte ! "
      "video/x-raw,format=I420,width=96,height=64%s ! q.ref_sink "
      "videotestsrc num-buffers=3 pattern=smpte ! "
      "video/x-raw,format=I420,width=96,height=64%s ! videobalance "
      "brightness=0.05 ! q.dist_sink", features, rc, dc);
  RunResult *r = run_pipeline (desc);

  if (r->error) {
    g_print ("FAIL: %s\n  pipeline: %s\n", r->error, desc);
    failures++;
  }
  g_free (rc);
  g_free (dc);
  g_free (desc);
  return r;
}

/* Per frame: key `same` equals "ssimulacra2", key `other` differs. */
static void
expect (const char *what, RunResult * r, const char *same, const char *other)
{
  gint64 i;

  if (r->reconfigured) {
    g_print ("FAIL: %s: %u qmetric-reconfigured message(s)\n", what,
        r->reconfigured);
    failures++;
  }
  if (g_hash_table_size (r->frames) != 3) {
    g_print ("FAIL: %s: %u frames scored\n", what,
        g_hash_table_size (r->frames));
    failures++;
  }
  for (i = 0; i < 3; i++) {
    const GstStructure *s = g_hash_table_lookup (r->frames, &i);
    double v, a, b;
    if (!s || !gst_structure_get_double (s, "ssimulacra2", &v) ||
        !gst_structure_get_double (s, same, &a) ||
        !gst_structure_get_double (s, other, &b)) {
      g_print ("FAIL: %s: frame %d lacks a score\n", what, (int) i);
      failures++;
      continue;
    }
    if (v != a || v == b) {
      g_print ("FAIL: %s: frame %d: %.9f, %s %.9f, %s %.9f\n", what, (int) i,
          v, same, a, other, b);
      failures++;
    }
  }
  run_result_free (r);
}

int
main (int argc, char **argv)
{
  const char *both = "ssimulacra2=yuv_matrix=bt709:yuv_range=limited,"
      "ssimulacra2=yuv_matrix=bt601";
  const char *k709 = "ssimulacra2_matrix_bt709_range_limited";
  const char *k601 = "ssimulacra2_matrix_bt601";

  gst_init (&argc, &argv);
  expect ("no colorimetry", run (NULL, NULL, both), k709, k601);
  expect ("bt601", run ("bt601", "bt601", both), k601, k709);
  expect ("bt601 on the distorted pad", run (NULL, "bt601", both), k601, k709);
  expect ("full range", run ("1:4:5:4", "1:4:5:4",
          "ssimulacra2=yuv_matrix=bt601:yuv_range=full,"
          "ssimulacra2=yuv_matrix=bt601:yuv_range=limited"),
      "ssimulacra2_matrix_bt601_range_full",
      "ssimulacra2_matrix_bt601_range_limited");
  g_print (failures ? "%d failure(s)\n" : "ssimulacra2 colorimetry: ok\n",
      failures);
  return failures ? 1 : 0;
}
