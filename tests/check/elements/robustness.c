/* gst-qmetric: the element under hostile input (suite "robustness").
 * Every case asserts the exact outcome: counts, message fields, error and
 * warning texts.  docs/robustness.md lists the faults and outcomes. */
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include <gst/check/gstcheck.h>
#include <gst/app/gstappsrc.h>

#include "../qmtest.h"
#include "json.h"

#define CAPS_64 "video/x-raw,format=I420,width=64,height=48,framerate=25/1"

static guint
gen_moving (gint plane, gint x, gint y, gpointer user)
{
  guint f = GPOINTER_TO_UINT (user);
  return (x * 7 + y * 13 + plane * 31 + f * 5) % 200 + 16;
}

static GstBuffer *
frame (const gchar * caps, guint f)
{
  return qm_make_frame (caps, gen_moving, GUINT_TO_POINTER (f));
}

/* Everything the bus says, kept: qm_rig_run() records only the element's
 * usual messages. */
typedef struct
{
  GPtrArray *elements;          /* GstStructure, every element message */
  GPtrArray *warnings;          /* GstMessage, every warning */
  gchar *error;
  gboolean eos;
} Bus;

static void
bus_run (GstElement * pipe, Bus * b)
{
  GstBus *bus = gst_element_get_bus (pipe);
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  if (!b->elements) {
    b->elements = g_ptr_array_new_with_free_func ((GDestroyNotify)
        gst_structure_free);
    b->warnings = g_ptr_array_new_with_free_func ((GDestroyNotify)
        gst_message_unref);
  }
  b->eos = FALSE;
  while (!b->eos && !b->error && g_get_monotonic_time () < deadline) {
    GstMessage *m = gst_bus_timed_pop (bus, 100 * GST_MSECOND);
    if (!m)
      continue;
    switch (GST_MESSAGE_TYPE (m)) {
      case GST_MESSAGE_EOS:
        b->eos = TRUE;
        break;
      case GST_MESSAGE_ERROR:{
        GError *e;
        gst_message_parse_error (m, &e, NULL);
        b->error = g_strdup (e->message);
        g_error_free (e);
        break;
      }
      case GST_MESSAGE_WARNING:
        g_ptr_array_add (b->warnings, gst_message_ref (m));
        break;
      case GST_MESSAGE_ELEMENT:
        g_ptr_array_add (b->elements,
            gst_structure_copy (gst_message_get_structure (m)));
        break;
      default:
        break;
    }
    gst_message_unref (m);
  }
  gst_object_unref (bus);
  fail_unless (b->eos || b->error, "pipeline did not finish in 60 s");
}

static void
bus_clear (Bus * b)
{
  g_clear_pointer (&b->elements, g_ptr_array_unref);
  g_clear_pointer (&b->warnings, g_ptr_array_unref);
  g_clear_pointer (&b->error, g_free);
}

/* The nth element message named name (NULL if fewer). */
static const GstStructure *
bus_element (Bus * b, const gchar * name, guint nth)
{
  guint i;

  for (i = 0; i < b->elements->len; i++) {
    const GstStructure *s = g_ptr_array_index (b->elements, i);
    if (gst_structure_has_name (s, name) && nth-- == 0)
      return s;
  }
  return NULL;
}

static guint
bus_count (Bus * b, const gchar * name)
{
  guint i, n = 0;

  for (i = 0; i < b->elements->len; i++)
    n += gst_structure_has_name (g_ptr_array_index (b->elements, i), name);
  return n;
}

/* The text of the warning that contains `part`, or NULL. */
static gchar *
bus_warning (Bus * b, const gchar * part)
{
  guint i;

  for (i = 0; i < b->warnings->len; i++) {
    GError *e;
    gst_message_parse_warning (g_ptr_array_index (b->warnings, i), &e, NULL);
    if (strstr (e->message, part)) {
      gchar *t = g_strdup (e->message);
      g_error_free (e);
      return t;
    }
    g_error_free (e);
  }
  return NULL;
}

static guint64
summary_u64 (Bus * b, const gchar * field)
{
  const GstStructure *s = bus_element (b, "qmetric-summary", 0);
  guint64 v = G_MAXUINT64;

  fail_unless (s != NULL, "no summary");
  fail_unless (gst_structure_get_uint64 (s, field, &v), "no %s", field);
  return v;
}

static QmRig *
rig_new (const gchar * props, const gchar * ref_caps, const gchar * dist_caps)
{
  return qm_rig_new (props, ref_caps, dist_caps);
}

/* ---- leaks at their root ---- */

/* A failed start (the engine cannot open) must release both buffers of the
 * pair it was given: otherwise upstream's pool never gets them back. */
GST_START_TEST (test_failed_start_releases_buffers)
{
  static const gchar *props[] = {
    "metrics=nosuchmetric", "metrics=psnr model=/nonexistent/model.json "
        "metrics=vmaf", "metrics=psnr log-location=/nonexistent/dir/x.json",
  };
  guint c;

  for (c = 0; c < G_N_ELEMENTS (props); c++) {
    QmRig *rig = rig_new (props[c], CAPS_64, NULL);
    Bus b = { 0 };
    GstBuffer *r = frame (CAPS_64, 0), *d = frame (CAPS_64, 0);

    gst_buffer_ref (r);
    gst_buffer_ref (d);
    qm_rig_push (rig, TRUE, r, 0);
    qm_rig_push (rig, FALSE, d, 0);
    qm_rig_eos (rig, TRUE);
    qm_rig_eos (rig, FALSE);
    bus_run (rig->pipe, &b);
    fail_unless (b.error != NULL, "%s: no error", props[c]);
    gst_element_set_state (rig->pipe, GST_STATE_NULL);
    fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (r), 1);
    fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (d), 1);
    gst_buffer_unref (r);
    gst_buffer_unref (d);
    bus_clear (&b);
    qm_rig_free (rig);
  }
}
GST_END_TEST;

/* The unmatched-frame warning carries its details (and frees its own). */
GST_START_TEST (test_unmatched_warning_details)
{
  QmRig *rig = rig_new ("metrics=psnr", CAPS_64, NULL);
  Bus b = { 0 };
  const GstStructure *details = NULL, *inner;
  const GValue *v;
  guint64 rt = 0, count = 0;
  guint i;

  for (i = 0; i < 3; i++)
    qm_rig_push (rig, TRUE, frame (CAPS_64, i), i);
  qm_rig_push (rig, FALSE, frame (CAPS_64, 2), 2);
  qm_rig_eos (rig, TRUE);
  qm_rig_eos (rig, FALSE);
  bus_run (rig->pipe, &b);
  fail_unless (b.eos && !b.error, "%s", b.error);
  fail_unless_equals_int (b.warnings->len, 2);
  gst_message_parse_warning_details (g_ptr_array_index (b.warnings, 0),
      &details);
  fail_unless (details != NULL);
  v = gst_structure_get_value (details, "details");
  fail_unless (v && GST_VALUE_HOLDS_STRUCTURE (v));
  inner = gst_value_get_structure (v);
  fail_unless (gst_structure_has_name (inner, "qmetric-unmatched"));
  fail_unless_equals_string (gst_structure_get_string (inner, "pad"),
      "ref_sink");
  fail_unless (gst_structure_get_uint64 (inner, "running-time", &rt));
  fail_unless_equals_uint64 (rt, 0);
  fail_unless (gst_structure_get_uint64 (inner, "count", &count));
  fail_unless_equals_uint64 (count, 1);
  fail_unless_equals_uint64 (summary_u64 (&b, "unmatched-reference"), 2);
  fail_unless_equals_uint64 (summary_u64 (&b, "frames"), 1);
  bus_clear (&b);
  qm_rig_free (rig);
}
GST_END_TEST;

/* ---- buffers that lie about their size ---- */

/* A frame of CAPS_64 with a GstVideoMeta of the given planes, in a buffer of
 * `size` bytes (a copy of the frame's start). */
static GstBuffer *
meta_frame (guint f, gsize size, const gsize * offset, const gint * stride,
    guint width)
{
  GstBuffer *full = frame (CAPS_64, f), *buf;

  buf = gst_buffer_copy_region (full, GST_BUFFER_COPY_MEMORY, 0,
      MIN (size, gst_buffer_get_size (full)));
  if (size > gst_buffer_get_size (full))
    buf = gst_buffer_append (buf, gst_buffer_new_allocate (NULL,
            size - gst_buffer_get_size (full), NULL));
  gst_buffer_unref (full);
  gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_FORMAT_I420, width, 48, 3, (gsize *) offset, (gint *) stride);
  return buf;
}

GST_START_TEST (test_meta_past_memory)
{
  /* I420 64x48: Y 64x48, Cb/Cr 32x24 = 4608 bytes */
  static const gsize off_ok[4] = { 0, 3072, 3840 }, off_far[4] = { 0, 3072,
    4600
  };
  static const gint str_ok[4] = { 64, 32, 32 }, str_big[4] = { 128, 32, 32 },
      str_short[4] = { 32, 32, 32 };
  static const struct
  {
    const gsize *off;
    const gint *stride;
    guint width;
    const gchar *problem;
  } cases[] = {
    /* stride 128 needs 128 * 47 + 64 bytes for luma alone */
    {off_ok, str_big, 64, "plane 0 needs 6080 bytes (offset 0, stride 128, "
          "48 rows) but its memory has 4608"},
    /* Cr starts 8 bytes before the end */
    {off_far, str_ok, 64, "plane 2 needs 5368 bytes (offset 4600, stride 32, "
          "24 rows) but its memory has 4608"},
    {off_ok, str_short, 64, "plane 0 has a stride of 32 bytes, shorter than "
          "its rows (64 bytes)"},
    {off_ok, str_ok, 32, "its video meta (32x48 I420, 3 planes) does not "
          "match the caps (64x48 I420)"},
  };
  guint c;

  for (c = 0; c < G_N_ELEMENTS (cases); c++) {
    QmRig *rig = rig_new ("metrics=psnr", CAPS_64, NULL);
    Bus b = { 0 };
    gchar *w, *expect;
    guint i;

    for (i = 0; i < 3; i++) {
      qm_rig_push (rig, TRUE, frame (CAPS_64, i), i);
      qm_rig_push (rig, FALSE, i == 1 ? meta_frame (i, 4608, cases[c].off,
              cases[c].stride, cases[c].width) : frame (CAPS_64, i), i);
    }
    qm_rig_eos (rig, TRUE);
    qm_rig_eos (rig, FALSE);
    bus_run (rig->pipe, &b);
    fail_unless (b.eos && !b.error, "case %u: %s", c, b.error);
    fail_unless_equals_uint64 (summary_u64 (&b, "unreadable"), 1);
    fail_unless_equals_uint64 (summary_u64 (&b, "frames"), 2);
    fail_unless_equals_int (bus_count (&b, "qmetric"), 2);
    expect = g_strdup_printf ("Distorted frame at running time 0:00:00."
        "040000000 is unreadable: %s; it is not compared (1 such pairs so "
        "far)", cases[c].problem);
    w = bus_warning (&b, "unreadable");
    fail_unless (w != NULL, "case %u: no warning", c);
    fail_unless_equals_string (w, expect);
    g_free (w);
    g_free (expect);
    bus_clear (&b);
    qm_rig_free (rig);
  }
}
GST_END_TEST;

/* A well-formed meta with padded strides in a large enough buffer is
 * read (the check refuses only what is outside the memory). */
GST_START_TEST (test_meta_padded_ok)
{
  static const gsize off[4] = { 0, 128 * 48, 128 * 48 + 64 * 24 };
  static const gint stride[4] = { 128, 64, 64 };
  QmRig *rig = rig_new ("metrics=psnr", CAPS_64, NULL);
  Bus b = { 0 };
  GstBuffer *buf;
  GstVideoFrame vf;
  GstVideoInfo info;
  GstCaps *caps = gst_caps_from_string (CAPS_64);
  guint i;

  gst_video_info_from_caps (&info, caps);
  gst_caps_unref (caps);
  for (i = 0; i < 2; i++) {
    GstBuffer *src = frame (CAPS_64, i);
    GstVideoFrame sf;
    buf = gst_buffer_new_allocate (NULL, off[2] + 64 * 24, NULL);
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_FORMAT_I420, 64, 48, 3, (gsize *) off, (gint *) stride);
    fail_unless (gst_video_frame_map (&vf, &info, buf, GST_MAP_WRITE));
    fail_unless (gst_video_frame_map (&sf, &info, src, GST_MAP_READ));
    fail_unless (gst_video_frame_copy (&vf, &sf));
    gst_video_frame_unmap (&sf);
    gst_video_frame_unmap (&vf);
    gst_buffer_unref (src);
    qm_rig_push (rig, TRUE, frame (CAPS_64, i), i);
    qm_rig_push (rig, FALSE, buf, i);
  }
  qm_rig_eos (rig, TRUE);
  qm_rig_eos (rig, FALSE);
  bus_run (rig->pipe, &b);
  fail_unless (b.eos && !b.error, "%s", b.error);
  fail_unless_equals_uint64 (summary_u64 (&b, "unreadable"), 0);
  fail_unless_equals_uint64 (summary_u64 (&b, "frames"), 2);
  /* identical pictures: PSNR at its cap (6 * 8 + 12) */
  {
    gdouble y = 0;
    fail_unless (gst_structure_get_double (bus_element (&b, "qmetric", 1),
            "psnr_y", &y));
    fail_unless_equals_float (y, 60.0);
  }
  bus_clear (&b);
  qm_rig_free (rig);
}
GST_END_TEST;

/* Samples above the bit depth are refused, named, counted. */
static guint
gen_hot (gint plane, gint x, gint y, gpointer user)
{
  if (plane == GPOINTER_TO_INT (user) && x == 3 && y == 2)
    return 0xFFFF;
  return (x + y) % 1000;
}

GST_START_TEST (test_out_of_range_samples)
{
  static const gchar *caps[] = {
    "video/x-raw,format=I420_10LE,width=64,height=48,framerate=25/1",
    "video/x-raw,format=Y444_12LE,width=64,height=48,framerate=25/1",
  };
  static const gchar *expect[] = {
    "Reference frame at running time 0:00:00.000000000 has samples beyond "
        "its bit depth: plane 1 has the value 65535 at (3, 2), beyond 10 "
        "bits; it is not compared (1 such pairs so far)",
    "Reference frame at running time 0:00:00.000000000 has samples beyond "
        "its bit depth: plane 1 has the value 65535 at (3, 2), beyond 12 "
        "bits; it is not compared (1 such pairs so far)",
  };
  guint c;

  for (c = 0; c < G_N_ELEMENTS (caps); c++) {
    QmRig *rig = rig_new ("metrics=psnr,float_ssim,vmaf", caps[c], NULL);
    Bus b = { 0 };
    gchar *w;

    qm_rig_push (rig, TRUE, qm_make_frame (caps[c], gen_hot,
            GINT_TO_POINTER (1)), 0);
    qm_rig_push (rig, FALSE, qm_make_frame (caps[c], gen_hot,
            GINT_TO_POINTER (-1)), 0);
    qm_rig_push (rig, TRUE, qm_make_frame (caps[c], gen_hot,
            GINT_TO_POINTER (-1)), 1);
    qm_rig_push (rig, FALSE, qm_make_frame (caps[c], gen_hot,
            GINT_TO_POINTER (-1)), 1);
    qm_rig_eos (rig, TRUE);
    qm_rig_eos (rig, FALSE);
    bus_run (rig->pipe, &b);
    fail_unless (b.eos && !b.error, "%s", b.error);
    fail_unless_equals_uint64 (summary_u64 (&b, "out-of-range"), 1);
    fail_unless_equals_uint64 (summary_u64 (&b, "unreadable"), 0);
    fail_unless_equals_uint64 (summary_u64 (&b, "frames"), 1);
    w = bus_warning (&b, "beyond");
    fail_unless (w != NULL);
    fail_unless_equals_string (w, expect[c]);
    g_free (w);
    bus_clear (&b);
    qm_rig_free (rig);
  }
}
GST_END_TEST;

/* ---- renegotiation ---- */

/* The log's aggregate_metrics (each key once: a log naming one twice does
 * not load); its member count, or -1 after a message. */
static gint
log_aggregates (const gchar * path, const QmJson ** agg, QmJson ** doc)
{
  char err[256];

  *doc = qm_json_load (path, err, sizeof (err));
  fail_unless (*doc != NULL, "log %s: %s", path, err);
  *agg = qm_json_get (*doc, "aggregate_metrics");
  fail_unless (*agg != NULL, "no aggregate_metrics in %s", path);
  return (gint) (*agg)->n;
}

static void
set_caps (QmRig * rig, gboolean ref, const gchar * s)
{
  GstCaps *caps = gst_caps_from_string (s);
  gst_app_src_set_caps (GST_APP_SRC (ref ? rig->ref : rig->dist), caps);
  gst_caps_unref (caps);
}

/* A size or format change opens a new engine at the first pair in the new
 * caps; the log's whole-run values (apsnr_y...) are defined for one format:
 * the log has none then. */
GST_START_TEST (test_renegotiate_size_and_format)
{
  static const gchar *second_caps[] = {
    "video/x-raw,format=I420,width=32,height=32,framerate=25/1",
    "video/x-raw,format=Y444,width=64,height=48,framerate=25/1",
  };
  gchar *dir = g_dir_make_tmp ("qmrenegXXXXXX", NULL);
  gchar *log = g_build_filename (dir, "log.json", NULL);
  gchar *props = g_strdup_printf ("metrics=none features=psnr=enable_apsnr="
      "true log-location=%s", log);
  guint c;

  for (c = 0; c < G_N_ELEMENTS (second_caps); c++) {
    QmRig *rig = rig_new (props, CAPS_64, NULL);
    const QmJson *agg;
    QmJson *doc;
    Bus b = { 0 };
    const GstStructure *m;
    guint64 index = 0, rt = 0;
    gint w = 0;
    gdouble y;
    guint i;

    for (i = 0; i < 2; i++) {
      qm_rig_push (rig, TRUE, frame (CAPS_64, i), i);
      qm_rig_push (rig, FALSE, frame (CAPS_64, i), i);
    }
    set_caps (rig, TRUE, second_caps[c]);
    set_caps (rig, FALSE, second_caps[c]);
    for (i = 2; i < 5; i++) {
      qm_rig_push (rig, TRUE, frame (second_caps[c], i), i);
      qm_rig_push (rig, FALSE, frame (second_caps[c], i), i);
    }
    qm_rig_eos (rig, TRUE);
    qm_rig_eos (rig, FALSE);
    bus_run (rig->pipe, &b);
    fail_unless (b.eos && !b.error, "%s", b.error);
    fail_unless_equals_int (bus_count (&b, "qmetric"), 5);
    fail_unless_equals_int (bus_count (&b, "qmetric-reconfigured"), 1);
    m = bus_element (&b, "qmetric-reconfigured", 0);
    gst_structure_get_uint64 (m, "index", &index);
    gst_structure_get_uint64 (m, "running-time", &rt);
    gst_structure_get_int (m, "width", &w);
    fail_unless_equals_uint64 (index, 2);
    fail_unless_equals_uint64 (rt, 80 * GST_MSECOND);
    fail_unless_equals_int (w, c == 0 ? 32 : 64);
    fail_unless_equals_string (gst_structure_get_string (m, "format"),
        c == 0 ? "I420" : "Y444");
    for (i = 0; i < 5; i++) {
      fail_unless (gst_structure_get_double (bus_element (&b, "qmetric", i),
              "psnr_y", &y));
      fail_unless_equals_float (y, 60.0);
    }
    fail_unless_equals_uint64 (summary_u64 (&b, "frames"), 5);
    fail_unless_equals_int (log_aggregates (log, &agg, &doc), 0);
    qm_json_free (doc);
    bus_clear (&b);
    qm_rig_free (rig);
  }
  g_unlink (log);
  g_rmdir (dir);
  g_free (props);
  g_free (log);
  g_free (dir);
}
GST_END_TEST;

/* The distorted frames leave with their own caps: a size change on both
 * pads reaches downstream with the first frame in the new size, not before
 * the frames still being scored (with motion's look-ahead, the last frame
 * of the old size is held until the next frame; its caps used to go
 * downstream ahead of it, so a sink saw a 64x48 buffer under 32x32 caps). */
static GstPadProbeReturn
check_buffer_fits_caps (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  guint *wrong = user;
  GstCaps *caps = gst_pad_get_current_caps (pad);
  GstVideoInfo vi;

  fail_unless (caps && gst_video_info_from_caps (&vi, caps));
  if (gst_buffer_get_size (GST_PAD_PROBE_INFO_BUFFER (info)) != vi.size)
    (*wrong)++;
  gst_caps_unref (caps);
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_renegotiate_caps_order)
{
  const gchar *small = "video/x-raw,format=I420,width=32,height=32,"
      "framerate=25/1";
  QmRig *rig = rig_new ("metrics=psnr,motion", CAPS_64, NULL);
  GstPad *pad = gst_element_get_static_pad (rig->sink, "sink");
  Bus b = { 0 };
  guint wrong = 0, i;

  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, check_buffer_fits_caps,
      &wrong, NULL);
  for (i = 0; i < 8; i++) {
    if (i == 4) {
      set_caps (rig, TRUE, small);
      set_caps (rig, FALSE, small);
    }
    qm_rig_push (rig, TRUE, frame (i < 4 ? CAPS_64 : small, i), i);
    qm_rig_push (rig, FALSE, frame (i < 4 ? CAPS_64 : small, i), i);
  }
  qm_rig_eos (rig, TRUE);
  qm_rig_eos (rig, FALSE);
  bus_run (rig->pipe, &b);
  fail_unless (b.eos && !b.error, "%s", b.error);
  fail_unless_equals_int (rig->buffers->len, 8);
  fail_unless_equals_int (wrong, 0);
  gst_object_unref (pad);
  bus_clear (&b);
  qm_rig_free (rig);
}
GST_END_TEST;

/* Colorimetry, PAR and frame rate changes keep the engine: motion (which
 * depends on the previous frame) scores exactly as without the change. */
static void
run_motion (gboolean change, GArray * out, Bus * b)
{
  QmRig *rig = rig_new ("metrics=motion", CAPS_64, NULL);
  const gchar *meta_caps = "video/x-raw,format=I420,width=64,height=48,"
      "framerate=25/1,colorimetry=bt709,pixel-aspect-ratio=4/3";
  guint i;

  for (i = 0; i < 6; i++) {
    if (change && i == 3) {
      set_caps (rig, TRUE, meta_caps);
      set_caps (rig, FALSE, meta_caps);
    }
    qm_rig_push (rig, TRUE, frame (CAPS_64, i * 3), i);
    qm_rig_push (rig, FALSE, frame (CAPS_64, i * 3 + 1), i);
  }
  qm_rig_eos (rig, TRUE);
  qm_rig_eos (rig, FALSE);
  bus_run (rig->pipe, b);
  fail_unless (b->eos && !b->error, "%s", b->error);
  for (i = 0; i < b->elements->len; i++) {
    const GstStructure *s = g_ptr_array_index (b->elements, i);
    gdouble v;
    if (gst_structure_has_name (s, "qmetric") &&
        gst_structure_get_double (s, "integer_motion2", &v))
      g_array_append_val (out, v);
  }
  qm_rig_free (rig);
}

GST_START_TEST (test_metadata_change_keeps_engine)
{
  GArray *a = g_array_new (FALSE, FALSE, sizeof (gdouble));
  GArray *c = g_array_new (FALSE, FALSE, sizeof (gdouble));
  Bus ba = { 0 }, bc = { 0 };
  guint i;

  run_motion (FALSE, a, &ba);
  run_motion (TRUE, c, &bc);
  fail_unless_equals_int (a->len, 6);
  fail_unless_equals_int (c->len, 6);
  for (i = 0; i < a->len; i++)
    fail_unless (g_array_index (a, gdouble, i) == g_array_index (c, gdouble,
            i), "frame %u: %g vs %g", i, g_array_index (a, gdouble, i),
        g_array_index (c, gdouble, i));
  /* the motion of frame 3 is not 0: its history was kept */
  fail_unless (g_array_index (c, gdouble, 3) > 0);
  fail_unless_equals_int (bus_count (&bc, "qmetric-reconfigured"), 0);
  g_array_unref (a);
  g_array_unref (c);
  bus_clear (&ba);
  bus_clear (&bc);
}
GST_END_TEST;

/* Warnings are rate-limited per cause.  A live reference against a live
 * distorted source that never sends anything: GstAggregator cannot
 * configure its latency (the empty appsrc reports max 0 < min 33 ms) and
 * posted "clock problem" at every latency query, about 56 a second once
 * partner-timeout had ended the distorted pad; every reference frame is
 * unmatched.  With the interval at 300 ms (QMETRIC_WARN_INTERVAL_MS) for
 * 1.5 s: the latency warning once, then about every 300 ms saying how many
 * were held back; the unmatched frames' first 20, then the same; the
 * summary counts what was held back. */
GST_START_TEST (test_warnings_rate_limited)
{
  GstElement *pipe;
  GstBus *bus;
  GstMessage *m;
  guint clock = 0, clock_held = 0, unmatched = 0, unmatched_held = 0;
  guint64 suppressed = 0, unmatched_ref = 0;
  gint64 end, give_up;
  gboolean eos = FALSE;

  g_setenv ("QMETRIC_WARN_INTERVAL_MS", "300", TRUE);
  pipe = gst_parse_launch ("videotestsrc is-live=true ! " CAPS_64 " ! "
      "q.ref_sink appsrc is-live=true format=time caps=\"" CAPS_64 "\" ! "
      "q.dist_sink qmetric name=q metrics=psnr partner-timeout=100000000 ! "
      "fakesink", NULL);
  bus = gst_element_get_bus (pipe);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  end = g_get_monotonic_time () + 1500 * G_TIME_SPAN_MILLISECOND;
  give_up = end + 10 * G_TIME_SPAN_SECOND;
  while (!eos) {
    GError *e;
    if (end && g_get_monotonic_time () > end) {
      gst_element_send_event (pipe, gst_event_new_eos ());
      end = 0;
    }
    fail_if (g_get_monotonic_time () > give_up, "no EOS");
    if (!(m = gst_bus_timed_pop (bus, 50 * GST_MSECOND)))
      continue;
    switch (GST_MESSAGE_TYPE (m)) {
      case GST_MESSAGE_WARNING:
        gst_message_parse_warning (m, &e, NULL);
        if (e->domain == GST_CORE_ERROR && e->code == GST_CORE_ERROR_CLOCK) {
          fail_unless (g_str_has_prefix (e->message, "Clock problem: "
                  "Impossible to configure latency"), "%s", e->message);
          clock++;
          clock_held += strstr (e->message, "similar warnings suppressed)")
              != NULL;
        } else if (strstr (e->message, "has no distorted frame")) {
          unmatched++;
          unmatched_held += strstr (e->message, "similar warning") != NULL;
        }
        g_error_free (e);
        break;
      case GST_MESSAGE_ERROR:
        fail ("error");
        break;
      case GST_MESSAGE_EOS:
        eos = TRUE;
        break;
      case GST_MESSAGE_ELEMENT:
        if (gst_structure_has_name (gst_message_get_structure (m),
                "qmetric-summary")) {
          gst_structure_get_uint64 (gst_message_get_structure (m),
              "warnings-suppressed", &suppressed);
          gst_structure_get_uint64 (gst_message_get_structure (m),
              "unmatched-reference", &unmatched_ref);
        }
        break;
      default:
        break;
    }
    gst_message_unref (m);
  }
  g_unsetenv ("QMETRIC_WARN_INTERVAL_MS");
  GST_INFO ("%u latency warnings (%u counting), %u unmatched (%u counting), "
      "%" G_GUINT64_FORMAT " suppressed, %" G_GUINT64_FORMAT " unmatched",
      clock, clock_held, unmatched, unmatched_held, suppressed, unmatched_ref);
  /* once, then at most one per 300 ms of the 1.5 s, each after a flood */
  fail_unless (clock >= 2 && clock <= 7, "%u latency warnings", clock);
  fail_unless (clock_held >= 1 && clock_held == clock - 1, "%u of %u say "
      "how many were held back", clock_held, clock);
  fail_unless (unmatched_ref > 30, "%" G_GUINT64_FORMAT " unmatched",
      unmatched_ref);
  fail_unless (unmatched >= 20 && unmatched <= 20 + 6, "%u unmatched-frame "
      "warnings for %" G_GUINT64_FORMAT " frames", unmatched, unmatched_ref);
  fail_unless (unmatched_held >= 1);
  fail_unless (suppressed >= 10, "%" G_GUINT64_FORMAT " suppressed",
      suppressed);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipe);
}
GST_END_TEST;

/* Changes the capsfilter's colorimetry at the 25th frame, from the
 * source's streaming thread. */
static GstPadProbeReturn
change_colorimetry (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  GstElement *cf = user;
  guint n = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (cf), "n")) + 1;

  g_object_set_data (G_OBJECT (cf), "n", GUINT_TO_POINTER (n));
  if (n == 25) {
    GstCaps *caps = gst_caps_from_string (CAPS_64 ",colorimetry=bt709");
    g_object_set (cf, "caps", caps, NULL);
    gst_caps_unref (caps);
  }
  return GST_PAD_PROBE_OK;
}

/* A colorimetry-only caps change on both pads (one source through a tee),
 * 50 times (QMETRIC_CAPS_LOOP): every run ends with EOS and all 60 frames
 * scored.  The change makes both branches ask for allocation again; the tee
 * waits for both answers, and the distorted pad's query used to wait behind
 * a frame that the element would take only with the next reference frame,
 * which the tee held back: a stall with no error in about 1 run in 8. */
GST_START_TEST (test_colorimetry_change_loop)
{
  const gchar *env = g_getenv ("QMETRIC_CAPS_LOOP");
  guint runs = env ? atoi (env) : 50, r;

  for (r = 0; r < runs; r++) {
    GstElement *pipe = gst_parse_launch ("videotestsrc name=src "
        "num-buffers=60 pattern=ball ! capsfilter name=cf caps=\"" CAPS_64
        ",colorimetry=bt601\" ! tee name=t t. ! queue ! q.ref_sink t. ! "
        "queue ! videobalance brightness=0.05 ! q.dist_sink qmetric name=q "
        "metrics=psnr ! fakesink", NULL);
    GstElement *src = gst_bin_get_by_name (GST_BIN (pipe), "src");
    GstElement *cf = gst_bin_get_by_name (GST_BIN (pipe), "cf");
    GstPad *pad = gst_element_get_static_pad (src, "src");
    GstBus *bus = gst_element_get_bus (pipe);
    GstMessage *m;
    guint scored = 0;

    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, change_colorimetry, cf,
        NULL);
    gst_element_set_state (pipe, GST_STATE_PLAYING);
    /* a run takes milliseconds: 10 s without a message is the stall */
    while ((m = gst_bus_timed_pop_filtered (bus, 10 * GST_SECOND,
                GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT))) {
      gboolean end = GST_MESSAGE_TYPE (m) != GST_MESSAGE_ELEMENT;
      fail_if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR, "run %u: error", r);
      scored += !end && gst_structure_has_name (gst_message_get_structure (m),
          "qmetric");
      gst_message_unref (m);
      if (end)
        break;
    }
    fail_unless (m != NULL, "run %u stalled after %u frames", r, scored);
    fail_unless_equals_int (scored, 60);
    gst_element_set_state (pipe, GST_STATE_NULL);
    gst_object_unref (bus);
    gst_object_unref (pad);
    gst_object_unref (cf);
    gst_object_unref (src);
    gst_object_unref (pipe);
  }
}
GST_END_TEST;

GST_START_TEST (test_pad_differences_warn)
{
  static const struct
  {
    const gchar *dist;
    const gchar *warning;
  } cases[] = {
    {"video/x-raw,format=I420,width=64,height=48,framerate=25/1,"
          "colorimetry=(string)1:4:0:0", "Reference and distorted video "
          "differ (range: reference limited, distorted full); the samples are "
          "compared as they are"},
    {"video/x-raw,format=I420,width=64,height=48,framerate=25/1,"
          "pixel-aspect-ratio=4/3", "Reference and distorted video differ "
          "(pixel-aspect-ratio: reference 1/1, distorted 4/3); the samples "
          "are compared as they are"},
    {"video/x-raw,format=I420,width=64,height=48,framerate=25/1,"
          "interlace-mode=interleaved", "Reference and distorted video differ "
          "(interlace-mode: reference progressive, distorted interleaved); "
          "the samples are compared as they are"},
  };
  guint c;

  for (c = 0; c < G_N_ELEMENTS (cases); c++) {
    QmRig *rig = rig_new ("metrics=psnr", CAPS_64 ",colorimetry=bt601",
        cases[c].dist);
    Bus b = { 0 };
    gchar *w;
    guint i;

    for (i = 0; i < 2; i++) {
      qm_rig_push (rig, TRUE, frame (CAPS_64, i), i);
      qm_rig_push (rig, FALSE, frame (CAPS_64, i), i);
    }
    qm_rig_eos (rig, TRUE);
    qm_rig_eos (rig, FALSE);
    bus_run (rig->pipe, &b);
    fail_unless (b.eos && !b.error, "%s", b.error);
    fail_unless_equals_int (b.warnings->len, 1);
    w = bus_warning (&b, "differ");
    fail_unless_equals_string (w, cases[c].warning);
    fail_unless_equals_uint64 (summary_u64 (&b, "frames"), 2);
    g_free (w);
    bus_clear (&b);
    qm_rig_free (rig);
  }
}
GST_END_TEST;

/* ---- seeks and flushes ---- */

/* Score messages already on the bus (left there for bus_run). */
static guint
bus_count_pending (GstElement * pipe, const gchar * name)
{
  GstBus *bus = gst_element_get_bus (pipe);
  GList *kept = NULL, *l;
  GstMessage *m;
  guint n = 0;

  while ((m = gst_bus_pop (bus))) {
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ELEMENT &&
        gst_structure_has_name (gst_message_get_structure (m), name))
      n++;
    kept = g_list_append (kept, m);
  }
  for (l = kept; l; l = l->next)
    gst_bus_post (bus, l->data);
  g_list_free (kept);
  gst_object_unref (bus);
  return n;
}

/* Holds a seek on its way upstream: the frames already on their way to the
 * element keep coming meanwhile, as they do where a demuxer or a busy
 * machine takes its time (on the GPU machine, with the CUDA backend's deeper
 * queue, this was every run: the element scored those frames into the
 * summary). */
static GstPadProbeReturn
slow_seek (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) == GST_EVENT_SEEK)
    g_usleep (100 * 1000);
  return GST_PAD_PROBE_OK;
}

/* Two videotestsrc (same pattern) into qmetric; a flushing seek after the
 * first EOS scores the new segment with a summary of its own.  The
 * whole-run values of the first summary's log cover its frames on both
 * sides of the flush, each key once. */
GST_START_TEST (test_seek_after_eos)
{
  gchar *dir = g_dir_make_tmp ("qmseekXXXXXX", NULL);
  gchar *log = g_build_filename (dir, "log.json", NULL);
  gchar *desc = g_strdup_printf ("videotestsrc ! video/x-raw,"
      "format=I420,width=64,height=48,framerate=25/1 ! q.ref_sink "
      "videotestsrc ! video/x-raw,format=I420,width=64,height=48,"
      "framerate=25/1 ! q.dist_sink qmetric name=q metrics=none "
      "features=psnr=enable_apsnr=true log-location=%s ! fakesink "
      "sync=false", log);
  GstElement *pipe = gst_parse_launch (desc, NULL);
  const QmJson *agg;
  QmJson *doc;
  Bus b = { 0 };
  const GstStructure *s;
  guint seg = 99, flushes = 99;
  guint64 frames = 0, first_st = 0, last_st = 0, pre;

  fail_unless (pipe != NULL);
  {
    GstElement *q = gst_bin_get_by_name (GST_BIN (pipe), "q");
    const gchar *pads[] = { "ref_sink", "dist_sink" };
    guint i;
    /* GstAggregator sends the seek to its pads' peers directly */
    for (i = 0; i < 2; i++) {
      GstPad *pad = gst_element_get_static_pad (q, pads[i]);
      GstPad *peer = gst_pad_get_peer (pad);
      gst_pad_add_probe (peer, GST_PAD_PROBE_TYPE_EVENT_UPSTREAM, slow_seek,
          NULL, NULL);
      gst_object_unref (peer);
      gst_object_unref (pad);
    }
    gst_object_unref (q);
  }
  fail_unless (gst_element_set_state (pipe, GST_STATE_PAUSED) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless (gst_element_get_state (pipe, NULL, NULL, GST_CLOCK_TIME_NONE)
      == GST_STATE_CHANGE_SUCCESS);
  /* the pairs compared while prerolling stay in the first summary, which
   * counts the flush */
  pre = bus_count_pending (pipe, "qmetric");
  fail_unless (gst_element_seek (pipe, 1.0, GST_FORMAT_TIME,
          GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE, GST_SEEK_TYPE_SET, 0,
          GST_SEEK_TYPE_SET, 400 * GST_MSECOND));
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  bus_run (pipe, &b);
  fail_unless (b.eos && !b.error, "%s", b.error);
  fail_unless_equals_int (bus_count (&b, "qmetric-summary"), 1);
  gst_structure_get_uint64 (bus_element (&b, "qmetric-summary", 0),
      "frames", &frames);
  /* identical inputs: apsnr_y is its cap, which counts the frames pooled */
  fail_unless_equals_int (log_aggregates (log, &agg, &doc), 3);
  fail_unless_equals_float (qm_json_num (agg, "apsnr_y", 0),
      ceil (10 * log10 (255.0 * 255 * 64 * 48 * frames * 2)));
  qm_json_free (doc);

  /* after EOS: seek back, a shorter segment */
  fail_unless (gst_element_seek (pipe, 1.0, GST_FORMAT_TIME,
          GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE, GST_SEEK_TYPE_SET,
          200 * GST_MSECOND, GST_SEEK_TYPE_SET, 400 * GST_MSECOND));
  bus_run (pipe, &b);
  fail_unless (b.eos && !b.error, "%s", b.error);
  fail_unless_equals_int (bus_count (&b, "qmetric-summary"), 2);

  s = bus_element (&b, "qmetric-summary", 0);
  gst_structure_get_uint (s, "segment", &seg);
  gst_structure_get_uint (s, "flushes", &flushes);
  gst_structure_get_uint64 (s, "frames", &frames);
  gst_structure_get_uint64 (s, "last-stream-time", &last_st);
  fail_unless_equals_int (seg, 0);
  fail_unless_equals_int (flushes, 1);
  fail_unless_equals_uint64 (frames, pre + 10);
  fail_unless_equals_uint64 (last_st, 360 * GST_MSECOND);
  s = bus_element (&b, "qmetric-summary", 1);
  gst_structure_get_uint (s, "segment", &seg);
  gst_structure_get_uint (s, "flushes", &flushes);
  fail_unless_equals_int (flushes, 0);
  gst_structure_get_uint64 (s, "frames", &frames);
  gst_structure_get_uint64 (s, "first-stream-time", &first_st);
  gst_structure_get_uint64 (s, "last-stream-time", &last_st);
  fail_unless_equals_int (seg, 1);
  fail_unless_equals_uint64 (frames, 5);
  fail_unless_equals_uint64 (first_st, 200 * GST_MSECOND);
  fail_unless_equals_uint64 (last_st, 360 * GST_MSECOND);
  fail_unless_equals_int (bus_count (&b, "qmetric"), pre + 15);
  fail_unless_equals_int (bus_count (&b, "qmetric-summary"), 2);

  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  bus_clear (&b);
  g_unlink (log);
  g_rmdir (dir);
  g_free (desc);
  g_free (log);
  g_free (dir);
}
GST_END_TEST;

/* ---- logs ---- */

GST_START_TEST (test_log_write_error)
{
  QmRig *rig;
  Bus b = { 0 };
  guint i;

  if (!g_file_test ("/dev/full", G_FILE_TEST_EXISTS))
    return;
  rig = rig_new ("metrics=psnr log-location=/dev/full", CAPS_64, NULL);
  for (i = 0; i < 2; i++) {
    qm_rig_push (rig, TRUE, frame (CAPS_64, i), i);
    qm_rig_push (rig, FALSE, frame (CAPS_64, i), i);
  }
  qm_rig_eos (rig, TRUE);
  qm_rig_eos (rig, FALSE);
  bus_run (rig->pipe, &b);
  fail_unless_equals_string (b.error,
      "cannot write log file \"/dev/full\": No space left on device");
  bus_clear (&b);
  qm_rig_free (rig);
}
GST_END_TEST;

/* A path that is not UTF-8 still gives a UTF-8 error text. */
GST_START_TEST (test_error_text_utf8)
{
  QmRig *rig = rig_new ("metrics=psnr", CAPS_64, NULL);
  Bus b = { 0 };

  /* (a property read at the start: set in NULL) */
  gst_element_set_state (rig->pipe, GST_STATE_NULL);
  g_object_set (rig->q, "log-location", "/nonexistent/\xff\xfe.json", NULL);
  gst_element_set_state (rig->pipe, GST_STATE_PLAYING);
  qm_rig_push (rig, TRUE, frame (CAPS_64, 0), 0);
  qm_rig_push (rig, FALSE, frame (CAPS_64, 0), 0);
  qm_rig_eos (rig, TRUE);
  qm_rig_eos (rig, FALSE);
  bus_run (rig->pipe, &b);
  fail_unless (b.error != NULL);
  fail_unless (g_utf8_validate (b.error, -1, NULL), "%s", b.error);
  fail_unless_equals_string (b.error, "cannot open log file "
      "\"/nonexistent/\xef\xbf\xbd\xef\xbf\xbd.json\" for writing: "
      "No such file or directory");
  bus_clear (&b);
  qm_rig_free (rig);
}
GST_END_TEST;

/* ---- leaks over many cycles ---- */

/* NULL -> PLAYING -> NULL, n times, alternating a working pipeline with
 * each kind of failed start.  Under GST_TRACERS=leaks (as meson runs this
 * test) no GstObject or GstMiniObject created after the first round may be
 * left alive.  QMETRIC_LEAK_CYCLES sets n (default 50; docs/robustness.md
 * gives the 1,000-cycle command). */
static void
one_cycle (guint k)
{
  static const gchar *variants[] = {
    "metrics=psnr,float_ssim", "metrics=nosuchmetric",
    "metrics=vmaf model=/nonexistent/model.json",
    "metrics=psnr log-location=/nonexistent/dir/x.json",
  };
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=3 ! video/x-raw,"
      "format=I420,width=64,height=48 ! q.ref_sink videotestsrc "
      "num-buffers=4 pattern=ball ! video/x-raw,format=I420,width=64,"
      "height=48 ! q.dist_sink qmetric name=q %s ! fakesink",
      variants[k % G_N_ELEMENTS (variants)]);
  GstElement *pipe = gst_parse_launch (desc, NULL);
  Bus b = { 0 };

  fail_unless (pipe != NULL);
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  bus_run (pipe, &b);
  fail_unless ((k % G_N_ELEMENTS (variants) == 0) == (b.error == NULL),
      "cycle %u: %s", k, b.error);
  gst_element_set_state (pipe, GST_STATE_NULL);
  gst_object_unref (pipe);
  bus_clear (&b);
  g_free (desc);
}

/* Live objects per type name (GstLeaksTracer's "get-live-objects"). */
static GHashTable *
live_by_type (GstTracer * leaks)
{
  GHashTable *h = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      NULL);
  GstStructure *info = NULL;
  const GValue *list;
  guint i;

  /* the streaming threads drop their last references as they end: join
   * them first (the tracer's list refs each live object, which must not
   * race with its finalisation) */
  gst_task_cleanup_all ();
  g_signal_emit_by_name (leaks, "get-live-objects", &info);
  fail_unless (info != NULL);
  list = gst_structure_get_value (info, "live-objects-list");
  fail_unless (list != NULL, "%" GST_PTR_FORMAT, info);
  for (i = 0; i < gst_value_list_get_size (list); i++) {
    const GstStructure *o =
        gst_value_get_structure (gst_value_list_get_value (list, i));
    /* "object" holds the object itself: its value type is its type */
    const GValue *ov = gst_structure_get_value (o, "object");
    const gchar *t = ov ? g_type_name (G_VALUE_TYPE (ov)) : "(unknown)";
    gpointer n = g_hash_table_lookup (h, t);
    g_hash_table_replace (h, g_strdup (t),
        GUINT_TO_POINTER (GPOINTER_TO_UINT (n) + 1));
  }
  gst_structure_free (info);
  return h;
}

GST_START_TEST (test_leaks_cycles)
{
  GstTracer *leaks = NULL;
  GList *tracers = gst_tracing_get_active_tracers (), *l;
  const gchar *env = g_getenv ("QMETRIC_LEAK_CYCLES");
  guint n = env ? atoi (env) : 50, k, grown = 0;
  GHashTable *before = NULL, *after;
  GHashTableIter it;
  gpointer key, val;

  for (l = tracers; l; l = l->next)
    if (!strcmp (G_OBJECT_TYPE_NAME (l->data), "GstLeaksTracer"))
      leaks = gst_object_ref (l->data);
  g_list_free_full (tracers, gst_object_unref);
  if (!leaks)
    GST_INFO ("GST_TRACERS=leaks is not set: cycles run without the check");
  /* one round of every variant first: types, tags and caches are made once
   * per process */
  for (k = 0; k < 4; k++)
    one_cycle (k);
  if (leaks)
    before = live_by_type (leaks);
  for (k = 0; k < n; k++)
    one_cycle (k);
  if (!leaks)
    return;
  /* every type has as many live objects as before the n cycles.  Task
   * threads drop their GstTask just after the state change returns: a
   * count still high is looked at again for up to 2 s before it counts. */
  for (k = 0; k < 20; k++) {
    gboolean last = k == 19;
    grown = 0;
    after = live_by_type (leaks);
    g_hash_table_iter_init (&it, after);
    while (g_hash_table_iter_next (&it, &key, &val)) {
      guint was = GPOINTER_TO_UINT (g_hash_table_lookup (before, key));
      if (GPOINTER_TO_UINT (val) > was) {
        if (last)
          g_printerr ("%s: %u live objects before the cycles, %u after\n",
              (const gchar *) key, was, GPOINTER_TO_UINT (val));
        grown++;
      }
    }
    if (!grown || last)
      break;
    g_hash_table_unref (after);
    g_usleep (100 * 1000);
  }
  fail_unless_equals_int (grown, 0);
  g_hash_table_unref (before);
  g_hash_table_unref (after);
  gst_object_unref (leaks);
}
GST_END_TEST;

static Suite *
robustness_suite (void)
{
  Suite *s = suite_create ("robustness");
  TCase *tc = tcase_create ("hostile");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, test_failed_start_releases_buffers);
  tcase_add_test (tc, test_unmatched_warning_details);
  tcase_add_test (tc, test_meta_past_memory);
  tcase_add_test (tc, test_meta_padded_ok);
  tcase_add_test (tc, test_out_of_range_samples);
  tcase_add_test (tc, test_renegotiate_size_and_format);
  tcase_add_test (tc, test_renegotiate_caps_order);
  tcase_add_test (tc, test_metadata_change_keeps_engine);
  tcase_add_test (tc, test_colorimetry_change_loop);
  tcase_add_test (tc, test_warnings_rate_limited);
  tcase_add_test (tc, test_pad_differences_warn);
  tcase_add_test (tc, test_seek_after_eos);
  tcase_add_test (tc, test_log_write_error);
  tcase_add_test (tc, test_error_text_utf8);
  tcase_add_test (tc, test_leaks_cycles);
  return s;
}

GST_CHECK_MAIN (robustness);
