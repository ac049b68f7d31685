/* gst-qmetric: the element pairs only true pairs (suite "robustness").
 *
 * Every frame shows a picture unique to its id, so PSNR is at its cap
 * (60 dB at 8 bits) for a true pair and far below it for any other.  Each
 * case asserts that every score message is at the cap, the exact number of
 * pairs, and the exact unmatched counts of the summary. */
#include <string.h>

#include <gst/check/gstcheck.h>
#include <gst/app/gstappsrc.h>

#include "../qmtest.h"

#define CAPS_FMT "video/x-raw,format=I420,width=32,height=24,framerate=%d/1"
#define PSNR_CAP 60.0
#define MS GST_MSECOND

static guint
gen_id (gint plane, gint x, gint y, gpointer user)
{
  guint id = GPOINTER_TO_UINT (user);

  /* ids below 38 give 38 distinct shifts of the pattern */
  return (x * 7 + y * 13 + plane * 31 + id * 5) % 192 + 16;
}

static gchar *
caps_at (gint rate)
{
  return g_strdup_printf (CAPS_FMT, rate);
}

/* Push picture id with the given PTS (GST_CLOCK_TIME_NONE: none),
 * duration, offset and flags. */
static void
push (QmRig * rig, gboolean ref, guint id, GstClockTime pts,
    GstClockTime dur, guint64 offset, GstBufferFlags flags)
{
  gchar *caps = caps_at (25);
  GstBuffer *buf = qm_make_frame (caps, gen_id, GUINT_TO_POINTER (id));

  g_free (caps);
  GST_BUFFER_PTS (buf) = pts;
  GST_BUFFER_DURATION (buf) = dur;
  GST_BUFFER_OFFSET (buf) = offset;
  GST_BUFFER_FLAG_SET (buf, flags);
  fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (ref ?
              rig->ref : rig->dist), buf), GST_FLOW_OK);
}

static guint64
summary_u64 (QmRig * rig, const gchar * field)
{
  guint64 v = G_MAXUINT64;

  fail_unless (rig->summary != NULL, "no summary");
  fail_unless (gst_structure_get_uint64 (rig->summary, field, &v),
      "summary has no %s", field);
  return v;
}

static gboolean
warned (QmRig * rig, const gchar * text)
{
  guint i;

  for (i = 0; i < rig->warnings->len; i++)
    if (strstr (g_ptr_array_index (rig->warnings, i), text))
      return TRUE;
  return FALSE;
}

/* Finish the streams and check: every scored pair true, exact counts. */
static void
expect (QmRig * rig, const gchar * name, guint pairs, guint64 uref,
    guint64 udist, guint dist_frames)
{
  guint i;

  qm_rig_finish (rig);
  fail_unless (rig->eos && !rig->error, "%s: %s", name, rig->error);
  for (i = 0; i < rig->scores->len; i++) {
    gdouble v = qm_rig_score (rig, i, "psnr_y");
    guint64 rt = 0;
    gst_structure_get_uint64 (g_ptr_array_index (rig->scores, i),
        "running-time", &rt);
    fail_unless (v == PSNR_CAP, "%s: pair %u (distorted at %" GST_TIME_FORMAT
        ") is not a true pair: psnr_y %f", name, i, GST_TIME_ARGS (rt), v);
  }
  fail_unless_equals_int (rig->scores->len, pairs);
  fail_unless_equals_uint64 (summary_u64 (rig, "pairs"), pairs);
  fail_unless_equals_uint64 (summary_u64 (rig, "unmatched-reference"), uref);
  fail_unless_equals_uint64 (summary_u64 (rig, "unmatched-distorted"), udist);
  /* every distorted frame still leaves, paired or not */
  fail_unless_equals_int (rig->buffers->len, dist_frames);
}

/* One second from a source at the faster rate; each pad shows, at each of
 * its frame times, the source picture nearest in time (the earlier on a
 * tie), as videorate does. */
static void
push_rate (QmRig * rig, gboolean ref, gint rate, gint src)
{
  gint k;

  for (k = 0; k < rate; k++) {
    GstClockTime t = gst_util_uint64_scale_int (k, GST_SECOND, rate);
    guint lo = gst_util_uint64_scale_int (t, src, GST_SECOND), id = lo;
    if (lo + 1 < (guint) src && gst_util_uint64_scale_int (lo + 1, GST_SECOND,
            src) - t < t - gst_util_uint64_scale_int (lo, GST_SECOND, src))
      id = lo + 1;
    push (rig, ref, id, t, gst_util_uint64_scale_int (1, GST_SECOND, rate),
        GST_BUFFER_OFFSET_NONE, 0);
  }
}

static void
run_rates (gint r, gint d, guint pairs, guint uref, guint udist,
    const gchar * props)
{
  gchar *rc = caps_at (r), *dc = caps_at (d), *name, *warn;
  QmRig *rig = qm_rig_new (props, rc, dc);

  name = g_strdup_printf ("%d vs %d fps (%s)", r, d, props);
  push_rate (rig, TRUE, r, MAX (r, d));
  push_rate (rig, FALSE, d, MAX (r, d));
  expect (rig, name, pairs, uref, udist, d);
  warn = g_strdup_printf ("reference %d/1 fps, distorted %d/1 fps", r, d);
  fail_unless (warned (rig, warn), "%s: no warning \"%s\"", name, warn);
  qm_rig_free (rig);
  g_free (warn);
  g_free (name);
  g_free (rc);
  g_free (dc);
}

GST_START_TEST (test_rates)
{
  static const struct
  {
    gint r, d;
    guint pairs, uref, udist;
  } c[] = {
    {24, 12, 12, 12, 0}, {12, 24, 12, 0, 12},
    {60, 25, 25, 35, 0}, {25, 60, 25, 0, 35},
    {50, 30, 30, 20, 0}, {30, 50, 30, 0, 20},
    {30, 25, 25, 5, 0}, {25, 30, 25, 0, 5},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (c); i++) {
    run_rates (c[i].r, c[i].d, c[i].pairs, c[i].uref, c[i].udist,
        "metrics=psnr");
    /* a tolerance of a whole second still pairs only nearest frames */
    run_rates (c[i].r, c[i].d, c[i].pairs, c[i].uref, c[i].udist,
        "metrics=psnr pairing-tolerance=1000000000");
  }
}

GST_END_TEST;

/* 20 frames at 25 fps; picture k at k * 40 ms; skip lists end with -1. */
static void
push_same_rate (QmRig * rig, gboolean ref, const gint * skip)
{
  gint k, s;

  for (k = 0; k < 20; k++) {
    gboolean skipped = FALSE;
    for (s = 0; skip && skip[s] >= 0; s++)
      skipped |= skip[s] == k;
    if (!skipped)
      push (rig, ref, k, k * 40 * MS, 40 * MS, GST_BUFFER_OFFSET_NONE, 0);
  }
}

GST_START_TEST (test_drops)
{
  static const gint drop_d[] = { 3, 7, 8, -1 }, drop_r[] = { 12, -1 };
  gchar *c = caps_at (25);
  QmRig *rig = qm_rig_new ("metrics=psnr", c, NULL);

  push_same_rate (rig, TRUE, drop_r);
  push_same_rate (rig, FALSE, drop_d);
  expect (rig, "drops", 16, 3, 1, 17);
  fail_unless (!warned (rig, "Frame rates differ"));
  qm_rig_free (rig);
  g_free (c);
}

GST_END_TEST;

/* Picture 5 twice more on the distorted pad: with the same timestamp, and
 * 20 ms later (exactly between 5 and 6: the tie goes to the earlier). */
GST_START_TEST (test_duplicates)
{
  gchar *c = caps_at (25);
  QmRig *rig = qm_rig_new ("metrics=psnr", c, NULL);
  gint k;

  push_same_rate (rig, TRUE, NULL);
  for (k = 0; k < 20; k++) {
    push (rig, FALSE, k, k * 40 * MS, 40 * MS, GST_BUFFER_OFFSET_NONE, 0);
    if (k == 5) {
      push (rig, FALSE, 5, 200 * MS, 40 * MS, GST_BUFFER_OFFSET_NONE, 0);
      push (rig, FALSE, 5, 220 * MS, 40 * MS, GST_BUFFER_OFFSET_NONE, 0);
    }
  }
  expect (rig, "duplicates", 20, 0, 2, 22);
  qm_rig_free (rig);
  g_free (c);
}

GST_END_TEST;

/* Timestamps off by up to 4 ms on both pads. */
GST_START_TEST (test_jitter)
{
  static const gint jit_ms[] = { 3, -2, 4, -4, 1, 0, -3, 2, 4, -1 };
  gchar *c = caps_at (25);
  QmRig *rig = qm_rig_new ("metrics=psnr", c, NULL);
  gint k, p;

  for (p = 0; p < 2; p++)
    for (k = 0; k < 20; k++)
      push (rig, p == 0, k, MAX (0, k * 40 + jit_ms[(k + 3 * p) % 10]) * MS,
          40 * MS, GST_BUFFER_OFFSET_NONE, 0);
  expect (rig, "jitter", 20, 0, 0, 20);
  qm_rig_free (rig);
  g_free (c);
}

GST_END_TEST;

/* The reference sends picture 3 before picture 2.  Output order is kept, so
 * 2 cannot pair on either pad: 19 pairs, one unmatched on each side. */
GST_START_TEST (test_non_monotonic)
{
  static const gint order[] = { 0, 1, 3, 2 };
  gchar *c = caps_at (25);
  QmRig *rig = qm_rig_new ("metrics=psnr", c, NULL);
  gint k;

  for (k = 0; k < 20; k++) {
    gint id = k < 4 ? order[k] : k;
    push (rig, TRUE, id, id * 40 * MS, 40 * MS, GST_BUFFER_OFFSET_NONE, 0);
  }
  push_same_rate (rig, FALSE, NULL);
  expect (rig, "non-monotonic", 19, 1, 1, 20);
  qm_rig_free (rig);
  g_free (c);
}

GST_END_TEST;

/* No timestamps; frame numbers in the buffer offsets (from 100 on the
 * reference, 7 on the distorted pad), gaps on both sides. */
GST_START_TEST (test_no_timestamps_offsets)
{
  gchar *c = caps_at (25);
  QmRig *rig = qm_rig_new ("metrics=psnr", c, NULL);
  gint k;

  for (k = 0; k < 20; k++) {
    if (k != 9 && k != 10)
      push (rig, TRUE, k, GST_CLOCK_TIME_NONE, GST_CLOCK_TIME_NONE, 100 + k,
          0);
    if (k != 3)
      push (rig, FALSE, k, GST_CLOCK_TIME_NONE, GST_CLOCK_TIME_NONE, 7 + k, 0);
  }
  expect (rig, "frame numbers", 17, 1, 2, 19);
  fail_unless (warned (rig, "by frame number"));
  qm_rig_free (rig);
  g_free (c);
}

GST_END_TEST;

/* No timestamps, no offsets: arrival order until the distorted pad flags a
 * discontinuity (frame 3 lost); nothing after it is paired. */
GST_START_TEST (test_no_timestamps_gap)
{
  gchar *c = caps_at (25);
  QmRig *rig = qm_rig_new ("metrics=psnr", c, NULL);
  gint k;

  for (k = 0; k < 20; k++) {
    push (rig, TRUE, k, GST_CLOCK_TIME_NONE, GST_CLOCK_TIME_NONE,
        GST_BUFFER_OFFSET_NONE, 0);
    if (k != 3)
      push (rig, FALSE, k, GST_CLOCK_TIME_NONE, GST_CLOCK_TIME_NONE,
          GST_BUFFER_OFFSET_NONE, k == 4 ? GST_BUFFER_FLAG_DISCONT : 0);
  }
  expect (rig, "arrival order, gap", 3, 17, 16, 19);
  fail_unless (warned (rig, "in arrival order"));
  qm_rig_free (rig);
  g_free (c);
}

GST_END_TEST;

/* Timestamps on the reference only: nothing can be paired, and the warning
 * says why. */
GST_START_TEST (test_mixed_timestamps)
{
  gchar *c = caps_at (25);
  QmRig *rig = qm_rig_new ("metrics=psnr", c, NULL);
  gint k;

  for (k = 0; k < 20; k++) {
    push (rig, TRUE, k, k * 40 * MS, 40 * MS, GST_BUFFER_OFFSET_NONE, 0);
    push (rig, FALSE, k, GST_CLOCK_TIME_NONE, GST_CLOCK_TIME_NONE,
        GST_BUFFER_OFFSET_NONE, 0);
  }
  expect (rig, "mixed", 0, 20, 20, 20);
  fail_unless (warned (rig, "Distorted frames have no timestamps"));
  qm_rig_free (rig);
  g_free (c);
}

GST_END_TEST;

/* Not live, the distorted pad never gets data: after partner-timeout the
 * three waiting reference frames are unmatched and the pipeline ends. */
GST_START_TEST (test_partner_timeout)
{
  gchar *c = caps_at (25);
  QmRig *rig = qm_rig_new ("metrics=psnr partner-timeout=300000000", c, NULL);
  gint64 t0 = g_get_monotonic_time ();
  gint k;

  for (k = 0; k < 3; k++)
    push (rig, TRUE, k, k * 40 * MS, 40 * MS, GST_BUFFER_OFFSET_NONE, 0);
  qm_rig_eos (rig, TRUE);
  qm_rig_run (rig);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless (g_get_monotonic_time () - t0 < 5 * G_USEC_PER_SEC);
  fail_unless (warned (rig, "No data on dist_sink"));
  fail_unless_equals_uint64 (summary_u64 (rig, "pairs"), 0);
  fail_unless_equals_uint64 (summary_u64 (rig, "unmatched-reference"), 3);
  fail_unless_equals_uint64 (summary_u64 (rig, "unmatched-distorted"), 0);
  qm_rig_free (rig);
  g_free (c);
}

GST_END_TEST;

/* Same, the reference silent while distorted frames wait (no EOS on
 * either pad): they leave unscored, the summary counts them. */
GST_START_TEST (test_partner_timeout_reference)
{
  gchar *c = caps_at (25);
  QmRig *rig = qm_rig_new ("metrics=psnr partner-timeout=300000000", c, NULL);
  gint k;

  for (k = 0; k < 4; k++)
    push (rig, FALSE, k, k * 40 * MS, 40 * MS, GST_BUFFER_OFFSET_NONE, 0);
  qm_rig_run (rig);
  fail_unless (rig->eos && !rig->error, "%s", rig->error);
  fail_unless (warned (rig, "No data on ref_sink"));
  /* how many reached the element before the timeout varies (1 to 4); each
   * is counted and leaves unscored */
  fail_unless (rig->buffers->len >= 1 && rig->buffers->len <= 4);
  fail_unless_equals_uint64 (summary_u64 (rig, "unmatched-distorted"),
      rig->buffers->len);
  fail_unless_equals_uint64 (summary_u64 (rig, "pairs"), 0);
  qm_rig_free (rig);
  g_free (c);
}

GST_END_TEST;

static void
count_handoff (GstElement * sink, GstBuffer * buf, GstPad * pad, gpointer user)
{
  g_atomic_int_inc ((gint *) user);
}

/* Plays a live pipeline to EOS: the number of "qmetric" messages and of
 * those with PSNR at its cap (true pairs), and a copy of the summary. */
static GstStructure *
run_live (GstElement * pipe, guint * n_scores, guint * n_true)
{
  GstBus *bus = gst_element_get_bus (pipe);
  GstStructure *sum = NULL;
  gboolean done = FALSE;

  *n_scores = *n_true = 0;
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  while (!done) {
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT);
    const GstStructure *s;
    gdouble v;

    fail_unless (m != NULL, "timeout");
    s = gst_message_get_structure (m);
    if (GST_MESSAGE_TYPE (m) != GST_MESSAGE_ELEMENT) {
      fail_unless (GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS, "error");
      done = TRUE;
    } else if (gst_structure_has_name (s, "qmetric")) {
      (*n_scores)++;
      *n_true += gst_structure_get_double (s, "psnr_y", &v) && v == PSNR_CAP;
    } else if (gst_structure_has_name (s, "qmetric-summary")) {
      sum = gst_structure_copy (s);
    }
    gst_message_unref (m);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  fail_unless (sum != NULL);
  return sum;
}

/* Arrival times of the distorted pad's buffers and of the scores, in
 * monotonic microseconds, by running time (frame k at k x 50 ms). */
#define LAG_FRAMES 30
typedef struct
{
  gint64 arrived[LAG_FRAMES], scored[LAG_FRAMES];
} LagTimes;

static guint
frame_at (GstClockTime t)
{
  return (guint) ((t + 25 * MS) / (50 * MS));
}

static GstPadProbeReturn
dist_arrival (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  LagTimes *lt = user;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  guint k = frame_at (GST_BUFFER_PTS (buf));

  if (k < LAG_FRAMES)
    lt->arrived[k] = g_get_monotonic_time ();
  return GST_PAD_PROBE_OK;
}

/* in the posting thread, as the element posts it */
static GstBusSyncReply
score_posted (GstBus * bus, GstMessage * m, gpointer user)
{
  LagTimes *lt = user;
  const GstStructure *s = gst_message_get_structure (m);
  guint64 rt;

  if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ELEMENT &&
      gst_structure_has_name (s, "qmetric") &&
      gst_structure_get_uint64 (s, "running-time", &rt) &&
      frame_at (rt) < LAG_FRAMES)
    lt->scored[frame_at (rt)] = g_get_monotonic_time ();
  return GST_BUS_PASS;
}

static gint
cmp_i64 (gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *) a, y = *(const gint64 *) b;
  return x < y ? -1 : x > y;
}

/* Live, 20 frames/s, the distorted side comes about 10 ms after its
 * reference, as a decoder's would (the reference branch's frames reach the
 * element about 50 ms after their running time, identity with a ts-offset
 * of -40 ms holds the distorted ones until 10 ms later), and each pair
 * takes 45 ms to score
 * (QMETRIC_TEST_DELAY_US): while pair k is scored the element polls for its
 * result and takes reference frame k + 1 into its own queue, leaving the
 * reference pad empty.  Distorted frame k + 1 must then be taken as it
 * arrives, not when reference frame k + 2 does, a frame period later: its
 * score leaves 45-50 ms after it.  (Before that wake, 9 of the 25 frames
 * timed here waited, their scores 85 ms after them: the 75th percentile.) */
GST_START_TEST (test_live_lagging_partner)
{
  GstElement *pipe;
  GstElement *q;
  GstPad *pad;
  GstBus *bus;
  GstStructure *sum;
  LagTimes lt;
  gint64 d[LAG_FRAMES];
  guint n = 0, n_scores, n_true, k;

  memset (&lt, 0, sizeof (lt));
  g_setenv ("QMETRIC_TEST_DELAY_US", "45000", TRUE);
  pipe = gst_parse_launch ("videotestsrc is-live=true pattern=ball "
      "num-buffers=30 ! video/x-raw,format=I420,width=32,height=24,"
      "framerate=20/1 ! tee name=t t. ! queue ! q.ref_sink "
      "t. ! queue max-size-time=0 max-size-buffers=0 max-size-bytes=0 ! "
      "identity sync=true ts-offset=-40000000 ! q.dist_sink "
      "qmetric name=q metrics=psnr threads=2 max-skip=1 "
      "latency=500000000 ! fakesink sync=false", NULL);
  q = gst_bin_get_by_name (GST_BIN (pipe), "q");
  pad = gst_element_get_static_pad (q, "dist_sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, dist_arrival, &lt, NULL);
  bus = gst_element_get_bus (pipe);
  gst_bus_set_sync_handler (bus, score_posted, &lt, NULL);
  sum = run_live (pipe, &n_scores, &n_true);
  g_unsetenv ("QMETRIC_TEST_DELAY_US");
  fail_unless_equals_int (n_scores, LAG_FRAMES);
  fail_unless_equals_int (n_true, LAG_FRAMES);
  /* the first frames wait for the engine to open */
  for (k = 5; k < LAG_FRAMES; k++)
    if (lt.arrived[k] && lt.scored[k])
      d[n++] = lt.scored[k] - lt.arrived[k];
  fail_unless (n >= LAG_FRAMES - 6, "%u frames timed", n);
  qsort (d, n, sizeof (d[0]), cmp_i64);
  GST_INFO ("distorted arrival to score: median %" G_GINT64_FORMAT " us, "
      "75th percentile %" G_GINT64_FORMAT " us, max %" G_GINT64_FORMAT " us",
      d[n / 2], d[n * 3 / 4], d[n - 1]);
  fail_unless (d[n * 3 / 4] < 65000, "a quarter of the distorted frames' "
      "scores left %" G_GINT64_FORMAT " us or more after the frames arrived "
      "(the scoring takes 45 ms)", d[n * 3 / 4]);
  gst_structure_free (sum);
  gst_object_unref (bus);
  gst_object_unref (pad);
  gst_object_unref (q);
  gst_object_unref (pipe);
}

GST_END_TEST;

/* Live, 30 fps reference and the same frames through videorate at 15 fps:
 * every pair true, every other reference frame unmatched (drop-only: no
 * closing duplicate at 1 s).  The distorted branch is held 10 ms a frame
 * (150 ms in all, inside the latency), so the reference pad ends first and
 * the comparison must wait for the distorted pad's last frames (before
 * that wait this failed 6 runs in 32 under load). */
GST_START_TEST (test_live_rates)
{
  GstElement *pipe = gst_parse_launch ("videotestsrc is-live=true "
      "pattern=ball num-buffers=30 ! video/x-raw,format=I420,width=32,"
      "height=24,framerate=30/1 ! tee name=t "
      "t. ! queue ! q.ref_sink "
      "t. ! queue ! videorate drop-only=true ! video/x-raw,framerate=15/1 ! "
      "identity sleep-time=10000 ! q.dist_sink "
      "qmetric name=q metrics=psnr latency=200000000 ! "
      "fakesink name=sink sync=false signal-handoffs=true", NULL);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipe), "sink");
  GstStructure *sum = NULL;
  guint n_scores = 0, n_true = 0, n_out = 0;
  guint64 pairs = 0, uref = 0, udist = 0;

  g_signal_connect (sink, "handoff", G_CALLBACK (count_handoff), &n_out);
  sum = run_live (pipe, &n_scores, &n_true);
  gst_structure_get_uint64 (sum, "pairs", &pairs);
  gst_structure_get_uint64 (sum, "unmatched-reference", &uref);
  gst_structure_get_uint64 (sum, "unmatched-distorted", &udist);
  /* Every pair true, every frame accounted for.  On an idle machine that
   * is 15 pairs and 15 unmatched reference frames; a loaded one (valgrind)
   * can make the live source and videorate send other frames, so the split
   * is not asserted, only that nothing is lost or mispaired. */
  fail_unless_equals_int (n_true, n_scores);
  fail_unless_equals_uint64 (pairs, n_scores);
  fail_unless (pairs >= 1);
  fail_unless_equals_uint64 (pairs + uref, 30);
  fail_unless_equals_uint64 (pairs + udist, n_out);
  gst_structure_free (sum);
  gst_object_unref (sink);
  gst_object_unref (pipe);
}

GST_END_TEST;

/* Live, the distorted frames come 300 ms after their references (a delay
 * the latency query does not report) but the latency allows 100 ms: no
 * frame is paired, and the warnings say that frames arrive late. */
GST_START_TEST (test_live_late)
{
  GstElement *pipe = gst_parse_launch ("videotestsrc is-live=true "
      "pattern=ball num-buffers=15 ! video/x-raw,format=I420,width=32,"
      "height=24,framerate=30/1 ! tee name=t "
      "t. ! queue ! q.ref_sink "
      "t. ! queue max-size-time=0 max-size-buffers=0 max-size-bytes=0 ! "
      "identity sync=true ts-offset=300000000 ! q.dist_sink "
      "qmetric name=q metrics=psnr latency=100000000 ! fakesink sync=false",
      NULL);
  GstBus *bus = gst_element_get_bus (pipe);
  guint n_scores = 0, n_late = 0;
  gboolean done = FALSE;

  gst_element_set_state (pipe, GST_STATE_PLAYING);
  while (!done) {
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 30 * GST_SECOND,
        GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT |
        GST_MESSAGE_WARNING);
    fail_unless (m != NULL, "timeout");
    switch (GST_MESSAGE_TYPE (m)) {
      case GST_MESSAGE_WARNING:{
        GError *e;
        gst_message_parse_warning (m, &e, NULL);
        n_late += strstr (e->message, "after its partner stopped waiting; "
            "raise the latency property") != NULL;
        g_error_free (e);
        break;
      }
      case GST_MESSAGE_ELEMENT:
        n_scores += gst_structure_has_name (gst_message_get_structure (m),
            "qmetric");
        break;
      case GST_MESSAGE_EOS:
        done = TRUE;
        break;
      default:
        fail ("error");
    }
    gst_message_unref (m);
  }
  gst_element_set_state (pipe, GST_STATE_NULL);
  fail_unless_equals_int (n_scores, 0);
  fail_unless (n_late > 0, "no lateness warning");
  gst_object_unref (bus);
  gst_object_unref (pipe);
}

GST_END_TEST;

/* Live, the distorted frames come 60 ms after their references, inside the
 * 200 ms latency (issue 13: a pair whose two buffers both arrive is never
 * lost because upstream is late): every frame pairs, none is unmatched,
 * although the reference pad reaches EOS before the last distorted frames
 * arrive. */
GST_START_TEST (test_live_partner_after_eos)
{
  GstElement *pipe = gst_parse_launch ("videotestsrc is-live=true "
      "pattern=ball num-buffers=15 ! video/x-raw,format=I420,width=32,"
      "height=24,framerate=30/1 ! tee name=t "
      "t. ! queue ! q.ref_sink "
      "t. ! queue max-size-time=0 max-size-buffers=0 max-size-bytes=0 ! "
      "identity sync=true ts-offset=60000000 ! q.dist_sink "
      "qmetric name=q metrics=psnr latency=200000000 ! fakesink sync=false",
      NULL);
  GstStructure *sum = NULL;
  guint n_scores, n_true;
  guint64 pairs = 0, uref = 0, udist = 0;

  sum = run_live (pipe, &n_scores, &n_true);
  gst_structure_get_uint64 (sum, "pairs", &pairs);
  gst_structure_get_uint64 (sum, "unmatched-reference", &uref);
  gst_structure_get_uint64 (sum, "unmatched-distorted", &udist);
  fail_unless_equals_uint64 (pairs, 15);
  fail_unless_equals_int (n_scores, 15);
  fail_unless_equals_int (n_true, 15);
  fail_unless_equals_uint64 (uref, 0);
  fail_unless_equals_uint64 (udist, 0);
  gst_structure_free (sum);
  gst_object_unref (pipe);
}

GST_END_TEST;

/* Holds the first buffer through a pad 250 ms, as a decoder starting up
 * does; those behind it queue up and then come in one burst. */
static GstPadProbeReturn
hold_first (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  if (g_atomic_int_compare_and_exchange ((gint *) user, 0, 1))
    g_usleep (250000);
  return GST_PAD_PROBE_OK;
}

/* Live, 30 fps, latency 100 ms: the distorted side starts 250 ms late and
 * catches up in a burst, as qmetric-bench-probes saw behind nvh264dec
 * (issue 13).  Frames 0-4 come past their partners' deadline (late, not
 * paired); from frame 5 on each comes inside it, the first within 17 ms,
 * and must pair even though they arrive together, behind late ones.
 * Frame 5 is left out of the count (17 ms of scheduling slack). */
GST_START_TEST (test_live_startup_burst)
{
  GstElement *pipe = gst_parse_launch ("videotestsrc is-live=true "
      "pattern=ball num-buffers=30 ! video/x-raw,format=I420,width=176,"
      "height=144,framerate=30/1 ! tee name=t "
      "t. ! queue ! q.ref_sink "
      "t. ! queue name=dq max-size-time=0 max-size-buffers=0 "
      "max-size-bytes=0 ! q.dist_sink "
      "qmetric name=q metrics=psnr,vmaf latency=100000000 ! fakesink sync=false",
      NULL);
  GstElement *dq = gst_bin_get_by_name (GST_BIN (pipe), "dq");
  GstPad *pad = gst_element_get_static_pad (dq, "src");
  GstStructure *sum = NULL;
  guint n_scores, n_true;
  guint64 pairs = 0, uref = 0;
  gint held = 0;

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, hold_first, &held, NULL);
  sum = run_live (pipe, &n_scores, &n_true);
  gst_structure_get_uint64 (sum, "pairs", &pairs);
  gst_structure_get_uint64 (sum, "unmatched-reference", &uref);
  GST_INFO ("%" G_GUINT64_FORMAT " pairs, %" G_GUINT64_FORMAT
      " unmatched reference frames", pairs, uref);
  fail_unless (pairs >= 24, "%" G_GUINT64_FORMAT " pairs of 30: frames that "
      "came in time were lost", pairs);
  fail_unless_equals_int (n_true, n_scores);
  fail_unless_equals_uint64 (pairs, n_scores);
  fail_unless_equals_uint64 (pairs + uref, 30);
  gst_structure_free (sum);
  gst_object_unref (pad);
  gst_object_unref (dq);
  gst_object_unref (pipe);
}

GST_END_TEST;

/* The look-ahead VMAF needs (one frame) is part of the element's latency
 * as soon as both pads have caps, before any frame: the first frames wait
 * for their partners as long as the later ones (issue 13: before, it was
 * added at the first pair, and pairs of the first second were lost in
 * qmetric-bench-probes although in time for the later latency). */
GST_START_TEST (test_live_lookahead_at_caps)
{
  GstElement *pipe = gst_parse_launch ("appsrc name=r is-live=true "
      "format=time ! q.ref_sink appsrc name=d is-live=true format=time ! "
      "q.dist_sink qmetric name=q metrics=vmaf latency=10000000 ! "
      "fakesink sync=false async=false", NULL);
  const gchar *names[] = { "r", "d" };
  GstElement *q = gst_bin_get_by_name (GST_BIN (pipe), "q");
  GstClockTime min_before = 0, min_after = 0;
  gboolean live = FALSE;
  GstQuery *query;
  guint i;

  fail_unless (gst_element_set_state (pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  query = gst_query_new_latency ();
  fail_unless (gst_element_query (q, query));
  gst_query_parse_latency (query, &live, &min_before, NULL);
  gst_query_unref (query);
  for (i = 0; i < 2; i++) {
    GstElement *src = gst_bin_get_by_name (GST_BIN (pipe), names[i]);
    GstPad *pad = gst_element_get_static_pad (src, "src");
    GstCaps *caps = gst_caps_from_string ("video/x-raw,format=I420,"
        "width=64,height=48,framerate=25/1");
    GstSegment seg;
    gst_segment_init (&seg, GST_FORMAT_TIME);
    fail_unless (gst_pad_push_event (pad, gst_event_new_stream_start (i ?
                "d" : "r")));
    fail_unless (gst_pad_push_event (pad, gst_event_new_caps (caps)));
    fail_unless (gst_pad_push_event (pad, gst_event_new_segment (&seg)));
    gst_caps_unref (caps);
    gst_object_unref (pad);
    gst_object_unref (src);
  }
  /* GstAggregator hands the caps to the element from its own thread */
  for (i = 0; i < 200 && min_after != 50 * GST_MSECOND; i++) {
    g_usleep (5000);
    query = gst_query_new_latency ();
    fail_unless (gst_element_query (q, query));
    gst_query_parse_latency (query, &live, &min_after, NULL);
    gst_query_unref (query);
  }
  fail_unless (live);
  /* the latency property, then that plus one frame at 25 fps */
  fail_unless_equals_uint64 (min_before, 10 * GST_MSECOND);
  fail_unless_equals_uint64 (min_after, 50 * GST_MSECOND);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (q);
  gst_object_unref (pipe);
}

GST_END_TEST;

static Suite *
pairing_suite (void)
{
  Suite *s = suite_create ("qmetric-pairing");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_rates);
  tcase_add_test (tc, test_drops);
  tcase_add_test (tc, test_duplicates);
  tcase_add_test (tc, test_jitter);
  tcase_add_test (tc, test_non_monotonic);
  tcase_add_test (tc, test_no_timestamps_offsets);
  tcase_add_test (tc, test_no_timestamps_gap);
  tcase_add_test (tc, test_mixed_timestamps);
  tcase_add_test (tc, test_partner_timeout);
  tcase_add_test (tc, test_partner_timeout_reference);
  tcase_add_test (tc, test_live_rates);
  tcase_add_test (tc, test_live_late);
  tcase_add_test (tc, test_live_partner_after_eos);
  tcase_add_test (tc, test_live_lookahead_at_caps);
  tcase_add_test (tc, test_live_startup_burst);
  tcase_add_test (tc, test_live_lagging_partner);
  return s;
}

GST_CHECK_MAIN (pairing);
