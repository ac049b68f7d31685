/* gst-qmetric: element tests (no golden data needed). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>

#include <gst/check/gstcheck.h>
#include <gst/base/gstaggregator.h>

#include "../qmtest.h"
#include "gstqmetricmeta.h"
#include "json.h"
#include "metric.h"
#include "qm.h"

#define I420_64 "video/x-raw,format=I420,width=64,height=48,framerate=25/1"

/* A textured pattern; `frame` moves it, `delta` is added to luma of the
 * distorted copy (clamped), so each frame's PSNR is known in closed form. */
typedef struct {
  guint frame;
  gint delta;
  guint max;          /* (1 << bits) - 1 */
} Pat;

static guint
gen_pat (gint plane, gint x, gint y, gpointer user)
{
  const Pat *p = user;
  guint range = (p->max + 1) * 3 / 4, v;
  gint d;

  v = (x * 7 + y * 13 + plane * 31 + p->frame * 5) % range + (p->max + 1) / 16;
  d = plane == 0 ? (gint) v + p->delta : (gint) v;
  return CLAMP (d, 0, (gint) p->max);
}

static GstBuffer *
pat_frame (const gchar * caps, guint frame, gint delta, guint max)
{
  Pat p = { frame, delta, max };
  return qm_make_frame (caps, gen_pat, &p);
}

/* PSNR of luma between the pattern and its shifted copy, computed here with
 * libvmaf's definition: 10 log10(peak^2 / mse), capped at 6 * bits + 12. */
static gdouble
expected_psnr_y (gint w, gint h, guint frame, gint delta, guint bits)
{
  const guint max = (1u << bits) - 1;
  Pat a = { frame, 0, max }, b = { frame, delta, max };
  gdouble sse = 0, mse;
  gint x, y;

  for (y = 0; y < h; y++) {
    for (x = 0; x < w; x++) {
      gdouble e = (gdouble) gen_pat (0, x, y, &a) - gen_pat (0, x, y, &b);
      sse += e * e;
    }
  }
  mse = sse / (w * h);
  return MIN (10 * log10 ((gdouble) max * max / MAX (mse, 1e-16)),
      6.0 * bits + 12);
}

/* n pairs of pattern frames (the distorted one delta away), then EOS on
 * both pads; runs the pipeline until EOS or an error. */
static void
run_pairs (QmRig * rig, const gchar * caps, guint n, gint delta, guint max)
{
  guint i;

  for (i = 0; i < n; i++) {
    qm_rig_push (rig, TRUE, pat_frame (caps, i, 0, max), i);
    qm_rig_push (rig, FALSE, pat_frame (caps, i, delta, max), i);
  }
  qm_rig_finish (rig);
}

GST_START_TEST (test_identical_psnr_at_cap)
{
  static const struct {
    const gchar *caps;
    guint bits;
    gboolean chroma;
  } cases[] = {
    {I420_64, 8, TRUE},
    {"video/x-raw,format=I420_10LE,width=64,height=48,framerate=25/1", 10,
        TRUE},
    {"video/x-raw,format=I420_12LE,width=64,height=48,framerate=25/1", 12,
        TRUE},
    {"video/x-raw,format=GRAY8,width=64,height=48,framerate=25/1", 8, FALSE},
    {"video/x-raw,format=Y444_16LE,width=64,height=48,framerate=25/1", 16,
        TRUE},
  };
  guint c, i;

  for (c = 0; c < G_N_ELEMENTS (cases); c++) {
    QmRig *rig = qm_rig_new ("metrics=psnr", cases[c].caps, NULL);
    run_pairs (rig, cases[c].caps, 3, 0, (1u << cases[c].bits) - 1);
    fail_unless (rig->eos && !rig->error, "%s: %s", cases[c].caps,
        rig->error);
    fail_unless_equals_int (rig->scores->len, 3);
    for (i = 0; i < 3; i++) {
      gdouble cap = 6.0 * cases[c].bits + 12, v;
      fail_unless_equals_float (qm_rig_score (rig, i, "psnr_y"), cap);
      if (cases[c].chroma) {
        fail_unless_equals_float (qm_rig_score (rig, i, "psnr_cb"), cap);
        fail_unless_equals_float (qm_rig_score (rig, i, "psnr_cr"), cap);
      } else {
        fail_if (gst_structure_get_double (g_ptr_array_index (rig->scores, i),
                "psnr_cb", &v), "GRAY input must not report chroma");
      }
    }
    qm_rig_free (rig);
  }
}
GST_END_TEST;

/* SSIM and MS-SSIM of identical pictures are exactly 1 (the MS-SSIM picture
 * must be at least 176x176). */
GST_START_TEST (test_identical_ssim_one)
{
  const gchar *caps = "video/x-raw,format=I420,width=192,height=180,"
      "framerate=25/1";
  QmRig *rig = qm_rig_new ("metrics=float_ssim,float_ms_ssim,psnr", caps,
      NULL);
  guint i;

  run_pairs (rig, caps, 2, 0, 255);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  for (i = 0; i < 2; i++) {
    fail_unless_equals_float (qm_rig_score (rig, i, "float_ssim"), 1.0);
    fail_unless_equals_float (qm_rig_score (rig, i, "float_ms_ssim"), 1.0);
    fail_unless_equals_float (qm_rig_score (rig, i, "psnr_y"), 60.0);
  }
  qm_rig_free (rig);
}
GST_END_TEST;

GST_START_TEST (test_known_distortion)
{
  static const gchar *caps_10 =
      "video/x-raw,format=I420_10LE,width=64,height=48,framerate=25/1";
  QmRig *rig;
  guint i;

  rig = qm_rig_new ("metrics=psnr", I420_64, NULL);
  run_pairs (rig, I420_64, 4, 3, 255);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless_equals_int (rig->scores->len, 4);
  for (i = 0; i < 4; i++) {
    fail_unless (fabs (qm_rig_score (rig, i, "psnr_y") -
            expected_psnr_y (64, 48, i, 3, 8)) < 1e-9);
    fail_unless_equals_float (qm_rig_score (rig, i, "psnr_cb"), 60.0);
  }
  qm_rig_free (rig);

  rig = qm_rig_new ("metrics=psnr", caps_10, NULL);
  run_pairs (rig, caps_10, 2, -17, 1023);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  for (i = 0; i < 2; i++)
    fail_unless (fabs (qm_rig_score (rig, i, "psnr_y") -
            expected_psnr_y (64, 48, i, -17, 10)) < 1e-9);
  qm_rig_free (rig);
}
GST_END_TEST;

/* Every layout of the same pictures gives the same scores. */
GST_START_TEST (test_layouts_agree)
{
  static const gchar *groups[][3] = {
    {"I420", "YV12", "NV12"},
    {"I420_10LE", "P010_10LE", NULL},
    {"I420_12LE", "P012_LE", NULL},
  };
  static const guint bits[] = { 8, 10, 12 };
  guint g, k, i;

  for (g = 0; g < G_N_ELEMENTS (groups); g++) {
    gdouble first[3][3];
    for (k = 0; k < 3 && groups[g][k]; k++) {
      gchar *caps = g_strdup_printf ("video/x-raw,format=%s,width=66,"
          "height=50,framerate=25/1", groups[g][k]);
      QmRig *rig = qm_rig_new ("metrics=psnr", caps, NULL);
      guint max = (1u << bits[g]) - 1;
      for (i = 0; i < 3; i++) {
        Pat a = { i, 0, max }, b = { i + 1, 0, max };  /* chroma differs too */
        qm_rig_push (rig, TRUE, qm_make_frame (caps, gen_pat, &a), i);
        qm_rig_push (rig, FALSE, qm_make_frame (caps, gen_pat, &b), i);
      }
      qm_rig_finish (rig);
      fail_unless (rig->eos && !rig->error, "%s: %s", caps, rig->error);
      for (i = 0; i < 3; i++) {
        gdouble v[3] = { qm_rig_score (rig, i, "psnr_y"),
          qm_rig_score (rig, i, "psnr_cb"), qm_rig_score (rig, i, "psnr_cr")
        };
        fail_unless (v[1] < 6.0 * bits[g] + 12, "chroma must differ");
        if (k == 0)
          memcpy (first[i], v, sizeof (v));
        else
          fail_unless (!memcmp (first[i], v, sizeof (v)),
              "%s differs from %s at frame %u", groups[g][k], groups[g][0], i);
      }
      qm_rig_free (rig);
      g_free (caps);
    }
  }
}
GST_END_TEST;

GST_START_TEST (test_odd_size)
{
  const gchar *caps = "video/x-raw,format=I420,width=33,height=17,"
      "framerate=25/1";
  QmRig *rig = qm_rig_new ("metrics=psnr", caps, NULL);

  run_pairs (rig, caps, 2, 5, 255);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless (fabs (qm_rig_score (rig, 1, "psnr_y") -
          expected_psnr_y (33, 17, 1, 5, 8)) < 1e-9);
  qm_rig_free (rig);
}
GST_END_TEST;

/* One I420_64 reference frame and one distorted frame of dist_caps, run. */
static QmRig *
run_mismatch (const gchar * dist_caps)
{
  QmRig *rig = qm_rig_new ("metrics=psnr", I420_64, dist_caps);

  qm_rig_push (rig, TRUE, pat_frame (I420_64, 0, 0, 255), 0);
  qm_rig_push (rig, FALSE, pat_frame (dist_caps, 0, 0, 255), 0);
  qm_rig_finish (rig);
  return rig;
}

GST_START_TEST (test_size_mismatch)
{
  QmRig *rig = run_mismatch ("video/x-raw,format=I420,width=32,height=48,"
      "framerate=25/1");

  fail_unless (rig->error != NULL, "a size mismatch must be an error");
  fail_unless (strstr (rig->error, "64x48") && strstr (rig->error, "32x48"),
      "error must name both sizes: %s", rig->error);
  fail_unless_equals_int (rig->scores->len, 0);
  qm_rig_free (rig);
}
GST_END_TEST;

GST_START_TEST (test_format_mismatch)
{
  QmRig *rig = run_mismatch ("video/x-raw,format=Y444,width=64,height=48,"
      "framerate=25/1");

  fail_unless (rig->error != NULL, "a format mismatch must be an error");
  fail_unless (strstr (rig->error, "I420") && strstr (rig->error, "Y444"),
      "error must name both formats: %s", rig->error);
  qm_rig_free (rig);
}
GST_END_TEST;

GST_START_TEST (test_eos_on_one_pad)
{
  QmRig *rig = qm_rig_new ("metrics=psnr", I420_64, NULL);
  guint64 frames = 0, unmatched = 0;
  guint i;

  for (i = 0; i < 5; i++)
    qm_rig_push (rig, TRUE, pat_frame (I420_64, i, 0, 255), i);
  for (i = 0; i < 3; i++)
    qm_rig_push (rig, FALSE, pat_frame (I420_64, i, 2, 255), i);
  qm_rig_eos (rig, FALSE);     /* the reference never ends */
  qm_rig_run (rig);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless (rig->summary != NULL);
  gst_structure_get_uint64 (rig->summary, "frames", &frames);
  gst_structure_get_uint64 (rig->summary, "unmatched-reference", &unmatched);
  fail_unless_equals_int (frames, 3);
  fail_unless (unmatched <= 2);
  fail_unless_equals_int (rig->buffers->len, 3);
  qm_rig_free (rig);
}
GST_END_TEST;

/* The distorted stream lost frame 2: pairs are (0,0) (1,1) (3,3) (4,4) and
 * the lonely reference frame is reported, never compared with frame 3. */
GST_START_TEST (test_dropped_frame)
{
  QmRig *rig = qm_rig_new ("metrics=psnr", I420_64, NULL);
  static const guint kept[] = { 0, 1, 3, 4 };
  guint64 unmatched = 0, index;
  guint i;

  for (i = 0; i < 5; i++)
    qm_rig_push (rig, TRUE, pat_frame (I420_64, i, 0, 255), i);
  for (i = 0; i < 4; i++)
    /* distortion differs per frame, so a mispairing would show */
    qm_rig_push (rig, FALSE, pat_frame (I420_64, kept[i], kept[i] + 1, 255),
        kept[i]);
  qm_rig_finish (rig);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless_equals_int (rig->scores->len, 4);
  for (i = 0; i < 4; i++) {
    gst_structure_get_uint64 (g_ptr_array_index (rig->scores, i), "index",
        &index);
    fail_unless_equals_int (index, i);
    fail_unless (fabs (qm_rig_score (rig, i, "psnr_y") -
            expected_psnr_y (64, 48, kept[i], kept[i] + 1, 8)) < 1e-9,
        "pair %u compared the wrong frames", i);
  }
  gst_structure_get_uint64 (rig->summary, "unmatched-reference", &unmatched);
  fail_unless_equals_int (unmatched, 1);
  fail_unless (rig->warnings->len >= 1);
  fail_unless (strstr (g_ptr_array_index (rig->warnings, 0), "Reference") !=
      NULL, "%s", (gchar *) g_ptr_array_index (rig->warnings, 0));
  qm_rig_free (rig);
}
GST_END_TEST;

/* A distorted frame with no reference leaves unscored, in order. */
GST_START_TEST (test_extra_distorted_frame)
{
  QmRig *rig = qm_rig_new ("metrics=psnr", I420_64, NULL);
  guint64 unmatched = 0;
  guint i;

  for (i = 0; i < 4; i++)
    if (i != 1)
      qm_rig_push (rig, TRUE, pat_frame (I420_64, i, 0, 255), i);
  for (i = 0; i < 4; i++)
    qm_rig_push (rig, FALSE, pat_frame (I420_64, i, 2, 255), i);
  qm_rig_finish (rig);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless_equals_int (rig->scores->len, 3);
  fail_unless_equals_int (rig->buffers->len, 4);
  for (i = 0; i < 4; i++) {
    GstBuffer *b = g_ptr_array_index (rig->buffers, i);
    fail_unless_equals_uint64 (GST_BUFFER_PTS (b), i * 40 * GST_MSECOND);
    fail_unless ((gst_buffer_get_qmetric_meta (b) == NULL) == (i == 1));
  }
  gst_structure_get_uint64 (rig->summary, "unmatched-distorted", &unmatched);
  fail_unless_equals_int (unmatched, 1);
  qm_rig_free (rig);
}
GST_END_TEST;

GST_START_TEST (test_meta_and_tags)
{
  QmRig *rig = qm_rig_new ("metrics=psnr", I420_64, NULL);
  guint i;

  run_pairs (rig, I420_64, 3, 4, 255);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless_equals_int (rig->buffers->len, 3);
  for (i = 0; i < 3; i++) {
    GstQmetricMeta *m =
        gst_buffer_get_qmetric_meta (g_ptr_array_index (rig->buffers, i));
    gdouble v;
    fail_unless (m != NULL, "buffer %u has no GstQmetricMeta", i);
    fail_unless_equals_int (m->index, i);
    fail_unless (gst_qmetric_meta_get_score (m, "psnr_y", &v));
    fail_unless_equals_float (v, qm_rig_score (rig, i, "psnr_y"));
    fail_if (gst_qmetric_meta_get_score (m, "vmaf_nonexistent", NULL));
  }
  /* one tag event per scored frame */
  fail_unless_equals_int (rig->tags->len, 3);
  for (i = 0; i < 3; i++) {
    gdouble v = 0;
    fail_unless (gst_tag_list_get_double (g_ptr_array_index (rig->tags, i),
            "qmetric-psnr_y", &v));
    fail_unless_equals_float (v, qm_rig_score (rig, i, "psnr_y"));
  }
  qm_rig_free (rig);
}
GST_END_TEST;

GST_START_TEST (test_subsample)
{
  QmRig *rig = qm_rig_new ("metrics=psnr subsample=2", I420_64, NULL);
  static const guint64 want[] = { 0, 2, 4 };
  guint64 idx;
  guint i;

  run_pairs (rig, I420_64, 5, 1, 255);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless_equals_int (rig->scores->len, 3);
  for (i = 0; i < 3; i++) {
    gst_structure_get_uint64 (g_ptr_array_index (rig->scores, i), "index",
        &idx);
    fail_unless_equals_uint64 (idx, want[i]);
  }
  fail_unless_equals_int (rig->buffers->len, 5);
  qm_rig_free (rig);
}
GST_END_TEST;

/* The log written by the element says what the messages said. */
static void
check_json_log (QmRig * rig, const gchar * path)
{
  char err[256];
  QmJson *doc = qm_json_load (path, err, sizeof (err));
  const QmJson *frames, *pooled;
  guint i;

  fail_unless (doc != NULL, "log does not parse: %s", err);
  frames = qm_json_get (doc, "frames");
  fail_unless (frames && frames->n == rig->scores->len);
  for (i = 0; i < frames->n; i++) {
    const QmJson *fr = qm_json_at (frames, i);
    const QmJson *m = qm_json_get (fr, "metrics");
    fail_unless_equals_int ((gint) qm_json_num (fr, "frameNum", -1), i);
    /* six decimals, as libvmaf prints them */
    fail_unless (fabs (qm_json_num (m, "psnr_y", -1) -
            qm_rig_score (rig, i, "psnr_y")) <= 5e-7);
  }
  pooled = qm_json_get (qm_json_get (doc, "pooled_metrics"), "psnr_y");
  fail_unless (pooled != NULL);
  fail_unless (qm_json_get (pooled, "harmonic_mean") != NULL);
  qm_json_free (doc);
}

GST_START_TEST (test_logs)
{
  gchar *dir = g_dir_make_tmp ("qmlogXXXXXX", NULL);
  static const gchar *fmts[] = { "json", "csv", "xml" };
  guint f;

  for (f = 0; f < G_N_ELEMENTS (fmts); f++) {
    gchar *path = g_build_filename (dir, fmts[f], NULL);
    gchar *props = g_strdup_printf ("metrics=psnr log-location=%s "
        "log-format=%s pool=min+max+mean+harmonic-mean+p1", path, fmts[f]);
    QmRig *rig = qm_rig_new (props, I420_64, NULL);
    gchar *text = NULL;
    const GstStructure *pooled;

    run_pairs (rig, I420_64, 4, 6, 255);
    fail_unless (rig->eos && !rig->error, "%s", rig->error);
    fail_unless (g_file_get_contents (path, &text, NULL, NULL));
    if (f == 0) {
      check_json_log (rig, path);
    } else if (f == 1) {
      gchar **lines = g_strsplit (text, "\n", -1);
      fail_unless (g_str_has_prefix (lines[0], "Frame,psnr_y,psnr_cb,psnr_cr"));
      fail_unless_equals_int (g_strv_length (lines), 4 + 2);
      g_strfreev (lines);
    } else {
      fail_unless (strstr (text, "<frame frameNum=\"3\"") != NULL);
      fail_unless (strstr (text, "</VMAF>") != NULL);
      fail_unless (strstr (text, "p1=\"") != NULL);
    }
    pooled = gst_value_get_structure (gst_structure_get_value (rig->summary,
            "psnr_y"));
    fail_unless (gst_structure_has_field (pooled, "p1"));
    fail_unless (gst_structure_has_field (pooled, "harmonic-mean"));
    g_free (text);
    g_unlink (path);
    g_free (path);
    g_free (props);
    qm_rig_free (rig);
  }
  g_rmdir (dir);
  g_free (dir);
}
GST_END_TEST;

GST_START_TEST (test_unwritable_log)
{
  QmRig *rig = qm_rig_new ("metrics=psnr log-location=/nonexistent/dir/x.json",
      I420_64, NULL);

  run_pairs (rig, I420_64, 2, 1, 255);
  fail_unless (rig->error && strstr (rig->error, "/nonexistent/dir/x.json"),
      "%s", rig->error);
  qm_rig_free (rig);
}
GST_END_TEST;

GST_START_TEST (test_truncated_frame)
{
  QmRig *rig = qm_rig_new ("metrics=psnr", I420_64, NULL);
  guint64 unreadable = 0;
  GstBuffer *b;
  guint i;

  for (i = 0; i < 3; i++) {
    qm_rig_push (rig, TRUE, pat_frame (I420_64, i, 0, 255), i);
    b = pat_frame (I420_64, i, 1, 255);
    if (i == 1)
      gst_buffer_resize (b, 0, 1000);   /* far less than a frame */
    qm_rig_push (rig, FALSE, b, i);
  }
  qm_rig_finish (rig);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless_equals_int (rig->scores->len, 2);
  gst_structure_get_uint64 (rig->summary, "unreadable", &unreadable);
  fail_unless_equals_int (unreadable, 1);
  fail_unless (rig->warnings->len >= 1);
  qm_rig_free (rig);
}
GST_END_TEST;

GST_START_TEST (test_bad_settings)
{
  QmRig *rig = qm_rig_new ("metrics=psnr,nosuchmetric", I420_64, NULL);

  run_pairs (rig, I420_64, 2, 1, 255);
  fail_unless (rig->error && strstr (rig->error, "nosuchmetric"), "%s",
      rig->error);
  qm_rig_free (rig);

  rig = qm_rig_new ("metrics=vmaf model=/nonexistent/model.json", I420_64,
      NULL);
  run_pairs (rig, I420_64, 2, 1, 255);
  fail_unless (rig->error && strstr (rig->error, "/nonexistent/model.json"),
      "a missing model must be an error naming it: %s", rig->error);
  qm_rig_free (rig);

  {
    /* a malformed model file: an error naming the file, no crash */
    gchar *path = g_build_filename (g_get_tmp_dir (), "qm-bad-model.json",
        NULL);
    gchar *props = g_strdup_printf ("metrics=vmaf model=%s", path);
    fail_unless (g_file_set_contents (path, "{\"model_dict\": [1, 2", -1,
            NULL));
    rig = qm_rig_new (props, I420_64, NULL);
    run_pairs (rig, I420_64, 2, 1, 255);
    fail_unless (rig->error && strstr (rig->error, "qm-bad-model.json"),
        "a malformed model must be an error naming it: %s", rig->error);
    qm_rig_free (rig);
    g_unlink (path);
    g_free (path);
    g_free (props);
  }
}
GST_END_TEST;

/* One metric set on two WxH I420 frames: the rig after EOS or an error. */
static QmRig *
run_size (const gchar * metrics, gint w, gint h)
{
  gchar *caps = g_strdup_printf ("video/x-raw,format=I420,width=%d,height=%d,"
      "framerate=25/1", w, h);
  gchar *props = g_strdup_printf ("metrics=%s", metrics);
  QmRig *rig = qm_rig_new (props, caps, NULL);

  run_pairs (rig, caps, 2, 3, 255);
  g_free (props);
  g_free (caps);
  return rig;
}

/* Every metric of the registry at sizes at and beyond the limits: alone it
 * either scores or fails naming why it cannot run (never an initialisation
 * failure); "all" never fails, scores what each metric alone scores and
 * leaves out, with a warning naming it, each one that cannot run (a VMAF
 * input through "vmaf"; an opt-in metric is not part of "all"). */
GST_START_TEST (test_all_at_any_size)
{
  static const gint sizes[][2] = {
    {1, 1}, {2, 8191}, {8191, 2}, {7, 7}, {16, 16},
  };
  const char *const *names = qm_metric_names ();
  guint z, m;

  for (z = 0; z < G_N_ELEMENTS (sizes); z++) {
    const gint w = sizes[z][0], h = sizes[z][1];
    QmRig *all = run_size ("all", w, h);
    const GstStructure *row;

    fail_unless (all->eos && !all->error, "all at %dx%d: %s", w, h,
        all->error);
    fail_unless_equals_int (all->scores->len, 2);
    row = g_ptr_array_index (all->scores, 0);
    for (m = 0; names[m]; m++) {
      /* "vmaf" has no descriptor: the model's inputs have */
      const QmMetricDesc *d = qm_metric_find (names[m]);
      const gboolean in_all = !d || !(d->flags & QM_METRIC_OPT_IN);
      const gchar *via = d && (d->flags & QM_METRIC_MODEL_INPUT) ? "vmaf" :
          names[m];
      gchar *left_out = g_strdup_printf ("metric %s left out: ", via);
      QmRig *one = run_size (names[m], w, h);

      if (one->error) {
        fail_unless (strstr (one->error, "cannot run") ||
            strstr (one->error, "needs at least"), "%s at %dx%d: %s",
            names[m], w, h, one->error);
        if (in_all)
          fail_unless (qm_has_text (all->warnings, left_out), "%s at %dx%d "
              "fails alone (%s) but \"all\" has no warning \"%s\"",
              names[m], w, h, one->error, left_out);
      } else {
        const GstStructure *alone;
        guint f;
        fail_unless (one->eos && one->scores->len == 2, "%s at %dx%d",
            names[m], w, h);
        /* (VMAF may be left out for another of its inputs) */
        fail_if (via == names[m] && qm_has_text (all->warnings, left_out), "%s "
            "runs alone at %dx%d but \"all\" left it out", names[m], w, h);
        alone = g_ptr_array_index (one->scores, 0);
        /* its scores are in "all"'s rows (past the five time fields) */
        for (f = 5; in_all && via == names[m] &&
            f < (guint) gst_structure_n_fields (alone); f++)
          fail_unless (gst_structure_has_field (row,
                  gst_structure_nth_field_name (alone, f)), "all at %dx%d "
              "has no %s", w, h, gst_structure_nth_field_name (alone, f));
      }
      g_free (left_out);
      qm_rig_free (one);
    }
    qm_rig_free (all);
  }
}
GST_END_TEST;

/* backend=auto says where the metrics run and why, in an info message,
 * and the summary names the backend. */
GST_START_TEST (test_backend_auto_says_where)
{
  QmRig *rig = qm_rig_new ("metrics=psnr backend=auto", I420_64, NULL);
  const gchar *info = NULL, *backend;
  guint i, n = 0;

  run_pairs (rig, I420_64, 2, 3, 255);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  for (i = 0; i < rig->infos->len; i++) {
    if (g_str_has_prefix (g_ptr_array_index (rig->infos, i),
            "backend=auto: the metrics run on the ")) {
      info = g_ptr_array_index (rig->infos, i);
      n++;
    }
  }
  fail_unless_equals_int (n, 1);
  backend = gst_structure_get_string (rig->summary, "backend");
  fail_unless (backend != NULL);
  if (!strcmp (backend, "cpu")) {
    /* the reason follows in parentheses */
    fail_unless (g_str_has_prefix (info, "backend=auto: the metrics run on "
            "the CPU (") && strlen (info) > 40, "%s", info);
    if (!qm_have_cuda ())
      fail_unless_equals_string (info, "backend=auto: the metrics run on the "
          "CPU (this build has no CUDA backend)");
  } else {
    fail_unless_equals_string (backend, "cuda");
    fail_unless (g_str_has_prefix (info, "backend=auto: the metrics run on "
            "the GPU (CUDA on "), "%s", info);
  }
  qm_rig_free (rig);
}
GST_END_TEST;

GST_START_TEST (test_properties)
{
  GstElement *q = gst_element_factory_make ("qmetric", NULL);
  gchar *s;
  guint u;
  gint i;
  gboolean b;
  guint64 t;

  fail_unless (q != NULL);
  g_object_get (q, "metrics", &s, NULL);
  fail_unless_equals_string (s, "vmaf,psnr,float_ssim");
  g_free (s);
  g_object_get (q, "model", &s, NULL);
  fail_unless_equals_string (s, "vmaf_v0.6.1");
  g_free (s);

  g_object_set (q, "metrics", "psnr,vmaf", "model", "vmaf_v0.6.1neg",
      "log-location", "/tmp/x.json", "subsample", 3, "threads", 2,
      "disable-clip", TRUE, "enable-transform", TRUE, "post-messages", FALSE,
      "cuda-device-id", 1, "pairing-tolerance", (guint64) 5000, "max-skip", 4,
      NULL);
  gst_util_set_object_arg (G_OBJECT (q), "log-format", "xml");
  gst_util_set_object_arg (G_OBJECT (q), "backend", "cpu");
  gst_util_set_object_arg (G_OBJECT (q), "pool", "mean+p5");

  g_object_get (q, "metrics", &s, NULL);
  fail_unless_equals_string (s, "psnr,vmaf");
  g_free (s);
  g_object_get (q, "model", &s, NULL);
  fail_unless_equals_string (s, "vmaf_v0.6.1neg");
  g_free (s);
  g_object_get (q, "log-location", &s, NULL);
  fail_unless_equals_string (s, "/tmp/x.json");
  g_free (s);
  g_object_get (q, "subsample", &u, NULL);
  fail_unless_equals_int (u, 3);
  g_object_get (q, "threads", &u, NULL);
  fail_unless_equals_int (u, 2);
  g_object_get (q, "disable-clip", &b, NULL);
  fail_unless (b);
  g_object_get (q, "enable-transform", &b, NULL);
  fail_unless (b);
  g_object_get (q, "post-messages", &b, NULL);
  fail_unless (!b);
  g_object_get (q, "cuda-device-id", &i, NULL);
  fail_unless_equals_int (i, 1);
  g_object_get (q, "pairing-tolerance", &t, NULL);
  fail_unless_equals_uint64 (t, 5000);
  g_object_get (q, "log-format", &i, NULL);
  fail_unless_equals_int (i, 2);
  g_object_get (q, "backend", &i, NULL);
  fail_unless_equals_int (i, 1);
  g_object_get (q, "pool", &u, NULL);
  fail_unless_equals_int (u, 4 | 32);
  g_object_get (q, "max-skip", &u, NULL);
  fail_unless_equals_int (u, 4);
  gst_object_unref (q);
}
GST_END_TEST;

/* A property read at the start (GST_PARAM_MUTABLE_READY) set while the
 * element plays keeps its value, with a warning naming it; post-messages
 * (GST_PARAM_MUTABLE_PLAYING) changes; in READY everything changes. */
/* The sink pads are the element's own GstAggregatorPad subclass (each holds
 * its pairing queue), named by their templates; the src pad is the
 * aggregator's. */
GST_START_TEST (test_pad_types)
{
  GstElement *q = gst_element_factory_make ("qmetric", NULL);
  const gchar *const names[] = { "ref_sink", "dist_sink" };
  GType qpad = g_type_from_name ("GstQmetricPad");
  GstPad *pad;
  guint i;

  fail_unless (q != NULL);
  fail_unless (qpad != 0);
  fail_unless (g_type_is_a (qpad, GST_TYPE_AGGREGATOR_PAD));
  for (i = 0; i < G_N_ELEMENTS (names); i++) {
    GstPadTemplate *t = gst_element_get_pad_template (q, names[i]);
    fail_unless (t != NULL);
    fail_unless_equals_int (GST_PAD_TEMPLATE_PRESENCE (t), GST_PAD_ALWAYS);
    fail_unless (GST_PAD_TEMPLATE_GTYPE (t) == qpad);
    pad = gst_element_get_static_pad (q, names[i]);
    fail_unless (pad != NULL);
    fail_unless (G_OBJECT_TYPE (pad) == qpad);
    fail_unless_equals_string (GST_PAD_NAME (pad), names[i]);
    gst_object_unref (pad);
  }
  pad = gst_element_get_static_pad (q, "src");
  fail_unless (G_OBJECT_TYPE (pad) != qpad);
  fail_unless (GST_IS_AGGREGATOR_PAD (pad));
  gst_object_unref (pad);
  gst_object_unref (q);
}

GST_END_TEST;

GST_START_TEST (test_ready_only_properties_refused)
{
  QmRig *rig = qm_rig_new ("metrics=psnr", I420_64, NULL);
  GstState state = GST_STATE_NULL;
  guint64 frames = 0;
  gchar *s;
  guint u, i;
  gboolean b;

  for (i = 0; i < 4; i++) {
    qm_rig_push (rig, TRUE, pat_frame (I420_64, i, 0, 255), i);
    qm_rig_push (rig, FALSE, pat_frame (I420_64, i, 3, 255), i);
  }
  /* the element runs (PAUSED or PLAYING: the sink prerolls on its own) */
  gst_element_get_state (rig->q, &state, NULL, 0);
  fail_unless (state >= GST_STATE_PAUSED);
  g_object_set (rig->q, "metrics", "psnr,float_ssim", "subsample", 4,
      "post-messages", FALSE, NULL);
  g_object_get (rig->q, "metrics", &s, "subsample", &u, "post-messages", &b,
      NULL);
  fail_unless_equals_string (s, "psnr");
  fail_unless_equals_int (u, 1);
  fail_unless (!b);
  g_free (s);
  qm_rig_finish (rig);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless (qm_has_text (rig->warnings, "The property \"metrics\" can be "
          "changed only in the NULL or READY state (it is read when the "
          "stream starts); it keeps its value \"psnr\""));
  fail_unless (qm_has_text (rig->warnings, "The property \"subsample\" can be "
          "changed only in the NULL or READY state (it is read when the "
          "stream starts); it keeps its value 1"));
  /* the stream ran with the old values: psnr only, every frame scored */
  fail_unless (rig->scores->len <= 2);
  fail_unless (gst_structure_has_field (rig->summary, "psnr_y"));
  fail_unless (gst_structure_get_uint64 (rig->summary, "frames", &frames));
  fail_unless_equals_uint64 (frames, 4);
  fail_unless (!gst_structure_has_field (rig->summary, "float_ssim"));

  gst_element_set_state (rig->pipe, GST_STATE_READY);
  g_object_set (rig->q, "metrics", "psnr,float_ssim", NULL);
  g_object_get (rig->q, "metrics", &s, NULL);
  fail_unless_equals_string (s, "psnr,float_ssim");
  g_free (s);
  qm_rig_free (rig);
}

GST_END_TEST;

/* the smallest square every metric of the presets takes (CAMBI: 216) */
#define I420_224 "video/x-raw,format=I420,width=224,height=224,framerate=25/1"

/* The "preset" property: libvmaf's --aom_ctc v7.0 (two named models, its
 * metrics with their options, apsnr in the log's aggregate_metrics), what
 * "model" adds to it, and a bad version refused in libvmaf's words. */
GST_START_TEST (test_preset)
{
  GstElement *q = gst_element_factory_make ("qmetric", NULL);
  gchar *dir = g_dir_make_tmp ("qmpresetXXXXXX", NULL);
  gchar *path = g_build_filename (dir, "log.json", NULL);
  gchar *props = g_strdup_printf ("preset=aom_ctc=v7.0 log-location=%s", path);
  static const gchar *const keys[] = { "vmaf", "vmaf_neg", "psnr_y",
    "float_ssim", "float_ms_ssim", "psnr_hvs", "ciede2000", "cambi",
    "integer_adm2_egl_1", "integer_vif_scale0_egl_1"
  };
  const guint n = 3, max = 255, pixels = 224 * 224;
  Pat a = { 0, 0, max }, b = { 0, 4, max };
  gdouble sse = 0, want;
  QmRig *rig;
  QmJson *doc;
  const QmJson *agg;
  char err[256];
  gchar *s;
  guint i, f;
  gint x, y;

  g_object_get (q, "preset", &s, NULL);
  fail_unless (s == NULL);
  g_object_set (q, "preset", "nflx_ctc=v1.0", NULL);
  g_object_get (q, "preset", &s, NULL);
  fail_unless_equals_string (s, "nflx_ctc=v1.0");
  g_free (s);
  gst_object_unref (q);

  rig = qm_rig_new (props, I420_224, NULL);
  run_pairs (rig, I420_224, n, 4, max);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless_equals_int (rig->scores->len, n);
  for (i = 0; i < G_N_ELEMENTS (keys); i++)
    fail_unless (gst_structure_has_field (g_ptr_array_index (rig->scores, 0),
            keys[i]), "no %s", keys[i]);
  /* dB SSIM, without a suffix */
  fail_unless (qm_rig_score (rig, 0, "float_ssim") > 1.0);
  doc = qm_json_load (path, err, sizeof (err));
  fail_unless (doc != NULL, "%s", err);
  agg = qm_json_get (doc, "aggregate_metrics");
  fail_unless (agg && agg->n == 3);
  /* apsnr_y over the three frames from the pattern's own SSE; chroma is
   * identical: its cap, ceil(10 log10(255^2 N 2)) */
  for (f = 0; f < n; f++) {
    a.frame = b.frame = f;
    for (y = 0; y < 224; y++)
      for (x = 0; x < 224; x++) {
        gdouble e = (gdouble) gen_pat (0, x, y, &a) - gen_pat (0, x, y, &b);
        sse += e * e;
      }
  }
  want = 10 * log10 (255.0 * 255 * pixels * n / sse);
  fail_unless (fabs (qm_json_num (agg, "apsnr_y", 0) - want) < 1e-6,
      "apsnr_y %f, want %f", qm_json_num (agg, "apsnr_y", 0), want);
  want = ceil (10 * log10 (255.0 * 255 * (pixels / 4) * n * 2));
  fail_unless (qm_json_num (agg, "apsnr_cb", 0) == want, "apsnr_cb %f vs %f",
      qm_json_num (agg, "apsnr_cb", 0), want);
  qm_json_free (doc);
  qm_rig_free (rig);
  g_unlink (path);

  /* "model" adds to the preset's two */
  rig = qm_rig_new ("preset=nflx_ctc=v1.0 model=vmaf_v0.6.1", I420_224, NULL);
  run_pairs (rig, I420_224, 2, 4, max);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless (qm_rig_score (rig, 0, "vmaf") != qm_rig_score (rig, 0,
          "vmaf_v0.6.1"));
  fail_unless (gst_structure_has_field (g_ptr_array_index (rig->scores, 0),
          "vmaf_neg"));
  fail_unless (!gst_structure_has_field (g_ptr_array_index (rig->scores, 0),
          "float_ms_ssim"));
  qm_rig_free (rig);

  rig = qm_rig_new ("preset=aom_ctc=v8.0", I420_224, NULL);
  run_pairs (rig, I420_224, 1, 4, max);
  fail_unless (rig->error && strstr (rig->error,
          "bad aom_ctc version \"v8.0\""), "%s", rig->error);
  qm_rig_free (rig);
  g_rmdir (dir);
  g_free (dir);
  g_free (path);
  g_free (props);
}
GST_END_TEST;

GST_START_TEST (test_threads_keep_order)
{
  QmRig *rig = qm_rig_new ("metrics=psnr threads=4", I420_64, NULL);
  guint i;

  for (i = 0; i < 30; i++) {
    qm_rig_push (rig, TRUE, pat_frame (I420_64, i, 0, 255), i);
    qm_rig_push (rig, FALSE, pat_frame (I420_64, i, i % 7 + 1, 255), i);
  }
  qm_rig_finish (rig);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless_equals_int (rig->scores->len, 30);
  for (i = 0; i < 30; i++)
    fail_unless (fabs (qm_rig_score (rig, i, "psnr_y") -
            expected_psnr_y (64, 48, i, i % 7 + 1, 8)) < 1e-9);
  qm_rig_free (rig);
}
GST_END_TEST;

/* The pictures upstream pools are asked to add: two a CPU worker, or a
 * fixed few for CUDA memory that the CUDA backend reads in place, whatever
 * the threads (66 a decoder on a 32-core machine slowed every decoder's
 * start beside a probe). */
static guint
allocation_min (const gchar * props, const gchar * caps_str)
{
  gchar *desc = g_strdup_printf ("qmetric %s", props);
  GstElement *q = gst_parse_launch (desc, NULL);
  GstPad *pad = gst_element_get_static_pad (q, "ref_sink");
  GstCaps *caps = gst_caps_from_string (caps_str);
  GstQuery *query = gst_query_new_allocation (caps, TRUE);
  guint min = 0;

  fail_unless (q && pad);
  fail_unless (gst_pad_query (pad, query), "no allocation answer");
  fail_unless_equals_int (gst_query_get_n_allocation_pools (query), 1);
  gst_query_parse_nth_allocation_pool (query, 0, NULL, NULL, &min, NULL);
  gst_query_unref (query);
  gst_caps_unref (caps);
  gst_object_unref (pad);
  gst_object_unref (q);
  g_free (desc);
  return min;
}

GST_START_TEST (test_allocation_answer)
{
  const gchar *sys = "video/x-raw,format=NV12,width=64,height=48,"
      "framerate=30/1";
  const gchar *cuda = "video/x-raw(memory:CUDAMemory),format=NV12,width=64,"
      "height=48,framerate=30/1";

  fail_unless_equals_int (allocation_min ("threads=3", sys), 8);
  fail_unless_equals_int (allocation_min ("threads=40", sys), 64);
  fail_unless_equals_int (allocation_min ("threads=3 backend=cpu", cuda), 8);
  fail_unless_equals_int (allocation_min ("threads=40 backend=cpu", cuda), 64);
  fail_unless_equals_int (allocation_min ("threads=40", cuda), 12);
  fail_unless_equals_int (allocation_min ("threads=0 backend=cuda", cuda), 12);
}
GST_END_TEST;

/* The summary says what the engine computed, as a chunk of a title
 * records it (core/partial.h): the settings that change values, one
 * key=value line each, sorted. */
GST_START_TEST (test_summary_identity)
{
  QmRig *rig = qm_rig_new ("metrics=psnr,float_ssim subsample=2 backend=cpu",
      I420_64, NULL);
  const gchar *id;
  guint i;

  for (i = 0; i < 4; i++) {
    qm_rig_push (rig, TRUE, pat_frame (I420_64, i, 0, 255), i);
    qm_rig_push (rig, FALSE, pat_frame (I420_64, i, 1, 255), i);
  }
  qm_rig_finish (rig);
  fail_unless (rig->summary != NULL);
  id = gst_structure_get_string (rig->summary, "identity");
  fail_unless (id != NULL, "no identity in the summary");
  fail_unless_equals_string (id, "backend=cpu\nbitdepth=8\ndisable_clip=false\n"
      "enable_transform=false\nmetrics=float_ssim=clip_db=0:enable_db=0:scale=0,"
      "psnr=enable_apsnr=0:enable_chroma=1:min_sse=0:reduced_hbd_peak=0\n"
      "models=none\n"
      "pixel_format=420\nsubsample=2\n");
  qm_rig_free (rig);
}
GST_END_TEST;

/* Two threads: as many frames in flight as the GPU holds.  With every
 * metric on the GPU no worker thread collects its work, and the element
 * once waited for ever here (seen on the GPU machine).  On the CPU the same
 * checks hold. */
GST_START_TEST (test_threads_two_gpu_bound)
{
  QmRig *rig = qm_rig_new ("metrics=psnr,float_ssim threads=2", I420_64, NULL);
  guint i, n = 200;

  for (i = 0; i < n; i++) {
    qm_rig_push (rig, TRUE, pat_frame (I420_64, i, 0, 255), i);
    qm_rig_push (rig, FALSE, pat_frame (I420_64, i, i % 5 + 1, 255), i);
  }
  qm_rig_finish (rig);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless_equals_int (rig->scores->len, n);
  for (i = 0; i < n; i++)
    fail_unless (fabs (qm_rig_score (rig, i, "psnr_y") -
            expected_psnr_y (64, 48, i, i % 5 + 1, 8)) < 1e-9);
  qm_rig_free (rig);
}
GST_END_TEST;

/* Run a live pipeline description to EOS (or 30 s); the summary or NULL. */
static GstStructure *
run_live (const gchar * desc, gchar ** error)
{
  GstElement *pipe = gst_parse_launch (desc, NULL);
  GstBus *bus;
  GstStructure *summary = NULL;
  gboolean done = FALSE;

  fail_unless (pipe != NULL, "%s", desc);
  bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  while (!done) {
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT);
    if (!m)
      break;
    switch (GST_MESSAGE_TYPE (m)) {
      case GST_MESSAGE_ELEMENT:
        if (gst_structure_has_name (gst_message_get_structure (m),
                "qmetric-summary"))
          summary = gst_structure_copy (gst_message_get_structure (m));
        break;
      case GST_MESSAGE_ERROR:{
        GError *err;
        gst_message_parse_error (m, &err, NULL);
        *error = g_strdup (err->message);
        g_error_free (err);
        done = TRUE;
        break;
      }
      default:
        done = TRUE;
        break;
    }
    gst_message_unref (m);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
  return summary;
}

/* Live: the distorted frames arrive 80 ms after their references (an
 * encoder, a network).  With 200 ms of latency every frame is paired: the
 * wait runs from each queued frame's own running time, not from the start
 * of the stream. */
GST_START_TEST (test_live_late_partner)
{
  gchar *error = NULL;
  guint64 frames = 0, unmatched = 1;
  GstStructure *sum = run_live ("videotestsrc is-live=true num-buffers=25 ! "
      I420_64 " ! tee name=t "
      "t. ! queue ! q.ref_sink "
      "t. ! queue min-threshold-time=80000000 max-size-time=0 "
      "max-size-buffers=0 max-size-bytes=0 ! q.dist_sink "
      "qmetric name=q metrics=psnr latency=200000000 ! fakesink sync=false",
      &error);

  fail_unless (sum != NULL, "no summary: %s", error ? error : "timeout");
  gst_structure_get_uint64 (sum, "frames", &frames);
  gst_structure_get_uint64 (sum, "unmatched", &unmatched);
  fail_unless_equals_int (frames, 25);
  fail_unless_equals_int (unmatched, 0);
  gst_structure_free (sum);
  g_free (error);
}
GST_END_TEST;

/* Live: the reference ends, the distorted source (a network receiver, say)
 * never sends EOS.  The comparison still ends, with its summary. */
GST_START_TEST (test_live_eos_one_side)
{
  gchar *error = NULL;
  guint64 frames = 0;
  GstStructure *sum = run_live ("videotestsrc is-live=true num-buffers=10 ! "
      I420_64 " ! q.ref_sink "
      "videotestsrc is-live=true ! " I420_64 " ! q.dist_sink "
      "qmetric name=q metrics=psnr latency=100000000 ! fakesink sync=false",
      &error);

  fail_unless (sum != NULL, "no summary: %s", error ? error : "timeout");
  gst_structure_get_uint64 (sum, "frames", &frames);
  fail_unless (frames >= 5 && frames <= 10, "%" G_GUINT64_FORMAT " frames",
      frames);
  gst_structure_free (sum);
  g_free (error);
}
GST_END_TEST;

static Suite *
qmetric_suite (void)
{
  Suite *s = suite_create ("qmetric");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_identical_psnr_at_cap);
  tcase_add_test (tc, test_identical_ssim_one);
  tcase_add_test (tc, test_known_distortion);
  tcase_add_test (tc, test_layouts_agree);
  tcase_add_test (tc, test_odd_size);
  tcase_add_test (tc, test_size_mismatch);
  tcase_add_test (tc, test_format_mismatch);
  tcase_add_test (tc, test_eos_on_one_pad);
  tcase_add_test (tc, test_dropped_frame);
  tcase_add_test (tc, test_extra_distorted_frame);
  tcase_add_test (tc, test_meta_and_tags);
  tcase_add_test (tc, test_subsample);
  tcase_add_test (tc, test_logs);
  tcase_add_test (tc, test_unwritable_log);
  tcase_add_test (tc, test_truncated_frame);
  tcase_add_test (tc, test_bad_settings);
  tcase_add_test (tc, test_all_at_any_size);
  tcase_add_test (tc, test_backend_auto_says_where);
  tcase_add_test (tc, test_properties);
  tcase_add_test (tc, test_pad_types);
  tcase_add_test (tc, test_ready_only_properties_refused);
  tcase_add_test (tc, test_preset);
  tcase_add_test (tc, test_threads_keep_order);
  tcase_add_test (tc, test_allocation_answer);
  tcase_add_test (tc, test_summary_identity);
  tcase_add_test (tc, test_threads_two_gpu_bound);
  tcase_add_test (tc, test_live_late_partner);
  tcase_add_test (tc, test_live_eos_one_side);
  return s;
}

GST_CHECK_MAIN (qmetric);
