/* gst-qmetric: the window property, the qmetric-window message and the
 * JSON-lines log (no golden data needed). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include <gst/check/gstcheck.h>

#include "../qmtest.h"
#include "json.h"


/* 25 frames/s: the rig's frame i is at running time i * 40 ms */
#define I420_64 "video/x-raw,format=I420,width=64,height=48,framerate=25/1"

/* a textured pattern, moved by frame; delta added to the distorted luma */
static guint
gen (gint plane, gint x, gint y, gpointer user)
{
  const gint *fd = user;
  gint v = (x * 7 + y * 13 + plane * 31 + fd[0] * 5) % 192 + 16;

  return plane == 0 ? CLAMP (v + fd[1], 0, 255) : v;
}

static GstBuffer *
frame (guint i, gint delta)
{
  gint fd[2] = { (gint) i, delta };
  return qm_make_frame (I420_64, gen, fd);
}

static gdouble
pooled (const GstStructure * w, const gchar * feature, const gchar * stat)
{
  const GstStructure *f;
  gdouble v = NAN;

  fail_unless (gst_structure_get (w, feature, GST_TYPE_STRUCTURE, &f, NULL),
      "window has no %s", feature);
  fail_unless (gst_structure_get_double (f, stat, &v), "no %s", stat);
  gst_structure_free ((GstStructure *) f);
  return v;
}

static int
cmp_double (const void *a, const void *b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;
  return (x > y) - (x < y);
}

/* The window's psnr_y statistics equal those of the per-frame messages
 * whose running time is in [start, end), computed here independently. */
static void
check_window_stats (GPtrArray * scores, const GstStructure * w)
{
  guint64 start = qm_u64 (w, "start-running-time"), end = qm_u64 (w,
      "end-running-time"), rt, frames;
  gdouble v[64], sum = 0, inv = 0, mn = INFINITY, mx = -INFINITY;
  guint n = 0, i;
  const gdouble pcts[2] = { 1, 5 };
  const gchar *names[2] = { "p1", "p5" };

  for (i = 0; i < scores->len; i++) {
    const GstStructure *s = g_ptr_array_index (scores, i);
    gst_structure_get_uint64 (s, "running-time", &rt);
    if (rt < start || rt >= end)
      continue;
    fail_unless (n < G_N_ELEMENTS (v));
    gst_structure_get_double (s, "psnr_y", &v[n]);
    sum += v[n];
    inv += 1.0 / (v[n] + 1.0);
    mn = MIN (mn, v[n]);
    mx = MAX (mx, v[n]);
    n++;
  }
  fail_unless_equals_uint64 (qm_u64 (w, "pairs"), n);
  fail_unless (gst_structure_get (w, "psnr_y", GST_TYPE_STRUCTURE, NULL,
          NULL) || n == 0);
  {
    const GstStructure *f;
    gst_structure_get (w, "psnr_y", GST_TYPE_STRUCTURE, &f, NULL);
    gst_structure_get_uint64 (f, "frames", &frames);
    gst_structure_free ((GstStructure *) f);
  }
  fail_unless_equals_uint64 (frames, n);
  /* same values summed in the same order: equal, not close */
  fail_unless (pooled (w, "psnr_y", "mean") == sum / n);
  fail_unless (pooled (w, "psnr_y", "harmonic-mean") == n / inv - 1.0);
  fail_unless (pooled (w, "psnr_y", "min") == mn);
  fail_unless (pooled (w, "psnr_y", "max") == mx);
  qsort (v, n, sizeof (gdouble), cmp_double);
  for (i = 0; i < 2; i++) {
    /* linear interpolation between the closest ranks */
    gdouble pos = pcts[i] / 100.0 * (n - 1), f = pos - floor (pos);
    guint lo = (guint) pos;
    gdouble want = lo + 1 < n ? v[lo] + f * (v[lo + 1] - v[lo]) : v[n - 1];
    fail_unless (pooled (w, "psnr_y", names[i]) == want, "%s %f != %f",
        names[i], pooled (w, "psnr_y", names[i]), want);
  }
}

/* 20 reference frames; the distorted stream lost 7 and 12, the reference
 * lost 16.  200 ms windows hold frames 0-4, 5-9, 10-14, 15-19. */
GST_START_TEST (test_duration_windows)
{
  QmRig *rig = qm_rig_new ("metrics=psnr window=200ms", I420_64, NULL);
  static const guint64 pairs[] = { 5, 4, 4, 4 };
  static const guint64 un_ref[] = { 0, 1, 1, 0 };
  static const guint64 un_dist[] = { 0, 0, 0, 1 };
  guint i;

  for (i = 0; i < 20; i++) {
    if (i != 16)
      qm_rig_push (rig, TRUE, frame (i, 0), i);
    if (i != 7 && i != 12)
      /* a different distortion per frame: every window differs */
      qm_rig_push (rig, FALSE, frame (i, 1 + i % 7), i);
  }
  qm_rig_finish (rig);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless_equals_int (rig->scores->len, 17);
  fail_unless_equals_int (rig->windows->len, 4);
  for (i = 0; i < 4; i++) {
    const GstStructure *w = g_ptr_array_index (rig->windows, i);
    fail_unless_equals_uint64 (qm_u64 (w, "window"), i);
    fail_unless_equals_uint64 (qm_u64 (w, "start-running-time"),
        i * 200 * GST_MSECOND);
    fail_unless_equals_uint64 (qm_u64 (w, "end-running-time"),
        (i + 1) * 200 * GST_MSECOND);
    /* the last pair of each window completes it: no need to wait for EOS */
    fail_unless_equals_string (gst_structure_get_string (w, "reason"),
        "duration");
    fail_unless_equals_uint64 (qm_u64 (w, "pairs"), pairs[i]);
    fail_unless_equals_uint64 (qm_u64 (w, "unmatched-reference"), un_ref[i]);
    fail_unless_equals_uint64 (qm_u64 (w, "unmatched-distorted"), un_dist[i]);
    fail_unless_equals_uint64 (qm_u64 (w, "unmatched"), un_ref[i] + un_dist[i]);
    fail_unless_equals_uint64 (qm_u64 (w, "unreadable"), 0);
    check_window_stats (rig->scores, w);
  }
  qm_rig_free (rig);
}
GST_END_TEST;

/* 25 frames/s, window=1s, distorted frames 25-49 lost: the unmatched
 * reference frames 25-49 are in the second window, whether the pairs in
 * front of them are still being scored (motion's look-ahead) or not. */
GST_START_TEST (test_drops_across_boundary)
{
  static const gchar *props[] = {
    "metrics=psnr window=1s",
    "metrics=psnr,motion window=1s",
    "metrics=psnr,motion threads=2 window=1s",
  };
  guint c, i;

  for (c = 0; c < G_N_ELEMENTS (props); c++) {
    QmRig *rig = qm_rig_new (props[c], I420_64, NULL);

    for (i = 0; i < 75; i++) {
      qm_rig_push (rig, TRUE, frame (i, 0), i);
      if (i < 25 || i >= 50)
        qm_rig_push (rig, FALSE, frame (i, 1 + i % 5), i);
    }
    qm_rig_finish (rig);
    fail_unless (rig->eos && !rig->error, "%s", rig->error);
    fail_unless_equals_int (rig->windows->len, 3);
    for (i = 0; i < 3; i++) {
      const GstStructure *w = g_ptr_array_index (rig->windows, i);
      fail_unless_equals_uint64 (qm_u64 (w, "start-running-time"),
          i * GST_SECOND);
      fail_unless_equals_uint64 (qm_u64 (w, "end-running-time"),
          (i + 1) * GST_SECOND);
      fail_unless (qm_u64 (w, "pairs") == (i == 1 ? 0 : 25) &&
          qm_u64 (w, "unmatched-reference") == (i == 1 ? 25 : 0) &&
          qm_u64 (w, "unmatched-distorted") == 0, "%s: window %u has %"
          G_GUINT64_FORMAT " pairs and %" G_GUINT64_FORMAT " unmatched "
          "reference frames", props[c], i, qm_u64 (w, "pairs"),
          qm_u64 (w, "unmatched-reference"));
    }
    qm_rig_free (rig);
  }
}
GST_END_TEST;

/* window=3frames: 8 pairs make windows of 3, 3 and 2 (the last at EOS). */
GST_START_TEST (test_frame_windows)
{
  QmRig *rig = qm_rig_new ("metrics=psnr window=3frames", I420_64, NULL);
  guint i;

  for (i = 0; i < 8; i++) {
    qm_rig_push (rig, TRUE, frame (i, 0), i);
    qm_rig_push (rig, FALSE, frame (i, 2 + i), i);
  }
  qm_rig_finish (rig);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless_equals_int (rig->windows->len, 3);
  for (i = 0; i < 3; i++) {
    const GstStructure *w = g_ptr_array_index (rig->windows, i);
    fail_unless_equals_uint64 (qm_u64 (w, "pairs"), i < 2 ? 3 : 2);
    fail_unless_equals_string (gst_structure_get_string (w, "reason"),
        i < 2 ? "frames" : "eos");
    /* frame-driven windows span their frames: first start to last end */
    fail_unless_equals_uint64 (qm_u64 (w, "start-running-time"),
        3 * i * 40 * GST_MSECOND);
    fail_unless_equals_uint64 (qm_u64 (w, "end-running-time"),
        MIN (3 * i + 3, 8) * 40 * GST_MSECOND);
    check_window_stats (rig->scores, w);
  }
  qm_rig_free (rig);
}
GST_END_TEST;

/* window=keyframe: a window starts at each distorted frame without
 * DELTA_UNIT (here frames 0, 4 and 6). */
GST_START_TEST (test_keyframe_windows)
{
  QmRig *rig = qm_rig_new ("metrics=psnr window=keyframe", I420_64, NULL);
  static const guint64 pairs[] = { 4, 2, 3 };
  guint i;

  for (i = 0; i < 9; i++) {
    GstBuffer *d = frame (i, 3);
    if (i != 0 && i != 4 && i != 6)
      GST_BUFFER_FLAG_SET (d, GST_BUFFER_FLAG_DELTA_UNIT);
    qm_rig_push (rig, TRUE, frame (i, 0), i);
    qm_rig_push (rig, FALSE, d, i);
  }
  qm_rig_finish (rig);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless_equals_int (rig->windows->len, 3);
  for (i = 0; i < 3; i++) {
    const GstStructure *w = g_ptr_array_index (rig->windows, i);
    fail_unless_equals_uint64 (qm_u64 (w, "pairs"), pairs[i]);
    fail_unless_equals_string (gst_structure_get_string (w, "reason"),
        i < 2 ? "keyframe" : "eos");
  }
  qm_rig_free (rig);
}
GST_END_TEST;

/* A window that cannot be parsed stops the element with a clear error. */
GST_START_TEST (test_bad_window)
{
  GstElement *pipe = gst_parse_launch ("videotestsrc num-buffers=2 ! "
      "video/x-raw,width=64,height=48 ! tee name=t t. ! queue ! q.ref_sink "
      "t. ! queue ! q.dist_sink qmetric name=q metrics=psnr window=fortnight "
      "! fakesink", NULL);
  GstBus *bus = gst_element_get_bus (pipe);
  GstMessage *m;
  GError *err = NULL;

  gst_element_set_state (pipe, GST_STATE_PLAYING);
  m = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND, GST_MESSAGE_ERROR);
  fail_unless (m != NULL);
  gst_message_parse_error (m, &err, NULL);
  fail_unless (strstr (err->message, "window \"fortnight\" is not "
          "understood") != NULL, "%s", err->message);
  g_error_free (err);
  gst_message_unref (m);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}
GST_END_TEST;

/* log-format=jsonl: a header, one line per frame, one per window as it
 * ends (in stream order), a summary; each line a JSON object. */
GST_START_TEST (test_jsonl_log)
{
  gchar *path = g_build_filename (g_get_tmp_dir (), "qmwindow-XXXXXX.jsonl",
      NULL);
  gint fd = g_mkstemp (path);
  gchar *props, *text = NULL, **lines;
  QmRig *rig;
  guint i, n_frames = 0, n_windows = 0;
  char err[256];

  fail_unless (fd >= 0);
  close (fd);
  props = g_strdup_printf ("metrics=psnr window=4frames log-format=jsonl "
      "log-location=%s", path);
  rig = qm_rig_new (props, I420_64, NULL);
  for (i = 0; i < 10; i++) {
    qm_rig_push (rig, TRUE, frame (i, 0), i);
    qm_rig_push (rig, FALSE, frame (i, 1 + i), i);
  }
  qm_rig_finish (rig);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless (g_file_get_contents (path, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  /* header + 10 frames + 3 windows + summary, then the final newline */
  fail_unless_equals_int (g_strv_length (lines), 1 + 10 + 3 + 1 + 1);
  fail_unless_equals_string (lines[15], "");
  for (i = 0; i < 15; i++) {
    QmJson *j = qm_json_parse (lines[i], strlen (lines[i]), err, sizeof (err));
    const char *type;
    fail_unless (j != NULL, "line %u is not JSON (%s): %s", i, err, lines[i]);
    type = qm_json_str (j, "type");
    fail_unless (type != NULL);
    if (i == 0) {
      fail_unless_equals_string (type, "header");
    } else if (i == 14) {
      fail_unless_equals_string (type, "summary");
    } else if (!strcmp (type, "frame")) {
      fail_unless_equals_int ((gint) qm_json_num (j, "frameNum", -1), n_frames);
      n_frames++;
    } else {
      const GstStructure *w = g_ptr_array_index (rig->windows, n_windows);
      const QmJson *pm = qm_json_get (j, "pooled_metrics");
      fail_unless_equals_string (type, "window");
      fail_unless_equals_int ((gint) qm_json_num (j, "window", -1), n_windows);
      fail_unless_equals_int ((gint) qm_json_num (j, "pairs", -1),
          (gint) qm_u64 (w, "pairs"));
      /* a window's record follows its frames' records (the next window's
       * first frames may come before it) */
      fail_unless (n_frames >= (n_windows == 2 ? 10 : 4 * (n_windows + 1)),
          "window %u before its frames (%u)", n_windows, n_frames);
      fail_unless (pm && qm_json_get (pm, "psnr_y"));
      fail_unless (fabs (qm_json_num (qm_json_get (pm, "psnr_y"), "mean", -1)
              - pooled (w, "psnr_y", "mean")) < 5e-7);
      n_windows++;
    }
    qm_json_free (j);
  }
  fail_unless_equals_int (n_frames, 10);
  fail_unless_equals_int (n_windows, 3);
  g_strfreev (lines);
  g_free (text);
  g_unlink (path);
  g_free (path);
  g_free (props);
  qm_rig_free (rig);
}
GST_END_TEST;

/* A short videotestsrc pipeline (not live, 2.5 s of 10 frames/s): windows
 * of 1 s hold 10, 10 and 5 pairs. */
GST_START_TEST (test_videotestsrc_pipeline)
{
  GError *err = NULL;
  GstElement *pipe = gst_parse_launch ("videotestsrc num-buffers=25 "
      "pattern=ball ! video/x-raw,format=I420,width=64,height=48,"
      "framerate=10/1 ! tee name=t t. ! queue ! q.ref_sink t. ! queue ! "
      "videobalance brightness=0.1 ! q.dist_sink qmetric name=q "
      "metrics=psnr window=1s ! fakesink", &err);
  GstBus *bus;
  GstMessage *m;
  guint n = 0, frames_seen = 0;
  static const guint64 pairs[] = { 10, 10, 5 };
  GPtrArray *scores = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_structure_free);

  fail_unless (pipe != NULL, "%s", err ? err->message : "");
  bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  while ((m = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
              GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT))) {
    const GstStructure *s = gst_message_get_structure (m);
    gboolean done = GST_MESSAGE_TYPE (m) != GST_MESSAGE_ELEMENT;
    fail_if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR);
    if (s && gst_structure_has_name (s, "qmetric")) {
      frames_seen++;
      g_ptr_array_add (scores, gst_structure_copy (s));
    }
    if (s && gst_structure_has_name (s, "qmetric-window")) {
      fail_unless (n < 3);
      fail_unless_equals_uint64 (qm_u64 (s, "window"), n);
      fail_unless_equals_uint64 (qm_u64 (s, "pairs"), pairs[n]);
      /* the messages of a window's frames precede the window's */
      fail_unless (frames_seen >= (n < 2 ? 10 * (n + 1) : 25), "window %u "
          "after %u frames", n, frames_seen);
      /* the pooled psnr_y equals that of the window's frames' messages */
      check_window_stats (scores, s);
      n++;
    }
    gst_message_unref (m);
    if (done)
      break;
  }
  fail_unless_equals_int (n, 3);
  g_ptr_array_unref (scores);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}
GST_END_TEST;

static Suite *
qmwindow_suite (void)
{
  Suite *s = suite_create ("qmwindow");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_duration_windows);
  tcase_add_test (tc, test_drops_across_boundary);
  tcase_add_test (tc, test_frame_windows);
  tcase_add_test (tc, test_keyframe_windows);
  tcase_add_test (tc, test_bad_window);
  tcase_add_test (tc, test_jsonl_log);
  tcase_add_test (tc, test_videotestsrc_pipeline);
  return s;
}

GST_CHECK_MAIN (qmwindow);
