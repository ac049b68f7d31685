/* gst-qmetric: libFuzzer harness for the element.
 *
 * The input is read as a script: caps for each pad (format and size within
 * small limits), then up to 24 steps, each pushing a frame to one pad with a
 * chosen size (exact, short, long), an optional GstVideoMeta with chosen
 * offsets and strides, a timestamp (none, in order, out of order, far), and
 * samples taken from the input, or changing a pad's caps mid-stream, or
 * ending a pad.  Both appsrcs end at the end of the script and the pipeline
 * runs to EOS or an error.
 *
 * What counts as a finding: ASan/UBSan reports, a GLib warning or critical
 * (made fatal: e.g. gst_video_frame_map's checks of a meta), and a pipeline
 * that neither ends nor fails within 20 s.  An error message from the
 * element is a correct outcome for hostile input, not a finding.
 *
 * Build and run: docs/robustness.md ("Fuzzing the element"). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>

gboolean gst_plugin_qmetric_register (void);

typedef struct
{
  const uint8_t *p;
  size_t n;
} Reader;

static guint
take (Reader * r, guint range)
{
  guint v;

  if (r->n == 0 || range <= 1)
    return 0;
  v = range > 256 && r->n >= 2 ? (guint) (r->p[0] | r->p[1] << 8) : r->p[0];
  r->p += range > 256 && r->n >= 2 ? 2 : 1;
  r->n -= range > 256 && r->n >= 2 ? 2 : 1;
  return v % range;
}

/* the element's formats, and one it refuses in its caps */
static const GstVideoFormat formats[] = {
  GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_YV12, GST_VIDEO_FORMAT_NV12,
  GST_VIDEO_FORMAT_NV21, GST_VIDEO_FORMAT_Y42B, GST_VIDEO_FORMAT_Y444,
  GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_I420_10LE,
  GST_VIDEO_FORMAT_I422_10LE, GST_VIDEO_FORMAT_Y444_10LE,
  GST_VIDEO_FORMAT_P010_10LE, GST_VIDEO_FORMAT_I420_12LE,
  GST_VIDEO_FORMAT_I422_12LE, GST_VIDEO_FORMAT_Y444_12LE,
  GST_VIDEO_FORMAT_P012_LE, GST_VIDEO_FORMAT_Y444_16LE,
  GST_VIDEO_FORMAT_P016_LE, GST_VIDEO_FORMAT_GRAY16_LE,
};

/* metric sets: fast ones mostly; vmaf and cambi exercise the temporal and
 * the size-limited paths */
static const gchar *metric_sets[] = {
  "psnr", "float_ssim", "psnr,float_ssim", "ciede", "psnr_hvs",
  "float_ms_ssim", "adm", "vif",
  "vmaf", "cambi", "motion",
};

#define MAX_DIM 48

static GstCaps *
make_caps (Reader * r, GstVideoInfo * info)
{
  GstVideoFormat f = formats[take (r, G_N_ELEMENTS (formats))];
  gint w = 1 + take (r, MAX_DIM), h = 1 + take (r, MAX_DIM);
  guint extra = take (r, 8);
  GstCaps *caps;

  gst_video_info_set_format (info, f, w, h);
  info->fps_n = extra & 1 ? 0 : 25;
  info->fps_d = 1;
  if (extra & 2)
    info->colorimetry.range = GST_VIDEO_COLOR_RANGE_0_255;
  if (extra & 4)
    info->par_n = 4, info->par_d = 3;
  caps = gst_video_info_to_caps (info);
  return caps;
}

static GstBuffer *
make_buffer (Reader * r, const GstVideoInfo * info, guint64 * clock)
{
  guint size_mode = take (r, 8), meta_mode = take (r, 4), ts_mode = take (r,
      6);
  gsize size = GST_VIDEO_INFO_SIZE (info);
  GstBuffer *buf;
  GstMapInfo map;
  gsize i;

  /* 0..4: exact; 5: short by some bytes; 6: much shorter; 7: longer */
  if (size_mode == 5)
    size = size > 0 ? size - 1 - take (r, MIN (size, 4096)) % size : 0;
  else if (size_mode == 6)
    size = take (r, size + 1);
  else if (size_mode == 7)
    size += take (r, 4096);
  buf = gst_buffer_new_allocate (NULL, size, NULL);
  if (size && gst_buffer_map (buf, &map, GST_MAP_WRITE)) {
    /* samples from the input, repeated; a byte of fill decides the rest */
    for (i = 0; i < size; i++)
      map.data[i] = r->n ? r->p[i % r->n] : 0;
    gst_buffer_unmap (buf, &map);
  }
  if (meta_mode == 1 || meta_mode == 2) {
    gsize offset[GST_VIDEO_MAX_PLANES];
    gint stride[GST_VIDEO_MAX_PLANES];
    guint p;
    for (p = 0; p < GST_VIDEO_INFO_N_PLANES (info); p++) {
      offset[p] = GST_VIDEO_INFO_PLANE_OFFSET (info, p);
      stride[p] = GST_VIDEO_INFO_PLANE_STRIDE (info, p);
      if (meta_mode == 2) {
        /* hostile: offsets and strides as the input says */
        offset[p] = take (r, 65536);
        stride[p] = (gint) take (r, 512) - 64;
      }
    }
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_INFO_FORMAT (info), GST_VIDEO_INFO_WIDTH (info) + (meta_mode
            == 2 ? (gint) take (r, 3) - 1 : 0), GST_VIDEO_INFO_HEIGHT (info),
        GST_VIDEO_INFO_N_PLANES (info), offset, stride);
  } else if (meta_mode == 3) {
    /* a meta of another format than the caps */
    gsize offset[GST_VIDEO_MAX_PLANES] = { 0 };
    gint stride[GST_VIDEO_MAX_PLANES] = { 64, 64, 64, 64 };
    gst_buffer_add_video_meta_full (buf, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_FORMAT_GRAY8, 8, 8, 1, offset, stride);
  }
  switch (ts_mode) {
    case 0:                    /* none */
      break;
    case 1:                    /* backwards */
      GST_BUFFER_PTS (buf) = *clock > 40 * GST_MSECOND ?
          *clock - 40 * GST_MSECOND : 0;
      break;
    case 2:                    /* a jump */
      *clock += take (r, 1000) * GST_MSECOND;
      GST_BUFFER_PTS (buf) = *clock;
      break;
    default:                   /* in order, with jitter */
      GST_BUFFER_PTS (buf) = *clock + take (r, 5) * GST_MSECOND;
      GST_BUFFER_DURATION (buf) = 40 * GST_MSECOND;
      *clock += 40 * GST_MSECOND;
      break;
  }
  return buf;
}

static void
run_pipeline (GstElement * pipe)
{
  GstBus *bus = gst_element_get_bus (pipe);
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  gboolean done = FALSE;

  while (!done) {
    GstMessage *m = gst_bus_timed_pop (bus, 100 * GST_MSECOND);
    if (g_get_monotonic_time () > deadline) {
      /* a hang on hostile input is a finding */
      g_printerr ("qmetric fuzz: pipeline neither ended nor failed in 20 s\n");
      abort ();
    }
    if (!m)
      continue;
    done = GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS ||
        GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR;
    gst_message_unref (m);
  }
  gst_object_unref (bus);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  gst_init (argc, argv);
  if (!gst_plugin_qmetric_register ())
    abort ();
  /* GLib's own checks (g_return_if_fail) are findings too */
  g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t * data, size_t size)
{
  Reader r = { data, size };
  GstVideoInfo info[2];
  GstCaps *caps[2];
  GstElement *pipe, *src[2], *q;
  guint64 clock[2] = { 0, 0 };
  gboolean ended[2] = { FALSE, FALSE };
  guint steps, i, s;
  gchar *desc;

  if (size < 4)
    return 0;
  desc = g_strdup_printf ("appsrc name=ref format=time ! q.ref_sink "
      "appsrc name=dist format=time ! q.dist_sink "
      "qmetric name=q threads=1 metrics=%s ! fakesink sync=false",
      metric_sets[take (&r, G_N_ELEMENTS (metric_sets))]);
  pipe = gst_parse_launch (desc, NULL);
  g_free (desc);
  if (!pipe)
    abort ();
  src[0] = gst_bin_get_by_name (GST_BIN (pipe), "ref");
  src[1] = gst_bin_get_by_name (GST_BIN (pipe), "dist");
  q = gst_bin_get_by_name (GST_BIN (pipe), "q");
  if (take (&r, 8) == 0)
    g_object_set (q, "subsample", 2, NULL);
  caps[0] = make_caps (&r, &info[0]);
  if (take (&r, 8) == 0) {
    caps[1] = make_caps (&r, &info[1]);
  } else {
    caps[1] = gst_caps_ref (caps[0]);
    info[1] = info[0];
  }
  for (i = 0; i < 2; i++)
    g_object_set (src[i], "caps", caps[i], NULL);
  gst_element_set_state (pipe, GST_STATE_PLAYING);

  steps = take (&r, 25);
  for (s = 0; s < steps && r.n; s++) {
    guint op = take (&r, 16), side = op & 1;
    if (ended[side])
      continue;
    if (op == 14 || op == 15) {
      /* a caps change on one pad (the script may follow on the other) */
      gst_caps_unref (caps[side]);
      caps[side] = make_caps (&r, &info[side]);
      gst_app_src_set_caps (GST_APP_SRC (src[side]), caps[side]);
    } else if (op == 12 || op == 13) {
      if (take (&r, 4) == 0) {
        gst_app_src_end_of_stream (GST_APP_SRC (src[side]));
        ended[side] = TRUE;
      }
    } else {
      gst_app_src_push_buffer (GST_APP_SRC (src[side]),
          make_buffer (&r, &info[side], &clock[side]));
    }
  }
  for (i = 0; i < 2; i++)
    if (!ended[i])
      gst_app_src_end_of_stream (GST_APP_SRC (src[i]));
  run_pipeline (pipe);
  gst_element_set_state (pipe, GST_STATE_NULL);
  for (i = 0; i < 2; i++) {
    gst_caps_unref (caps[i]);
    gst_object_unref (src[i]);
  }
  gst_object_unref (q);
  gst_object_unref (pipe);
  return 0;
}
