/* GStreamer qmetric: full-reference video quality metrics
 * Copyright (C) 2026 the gst-qmetric authors
 *
 * This library is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Library General Public
 * License as published by the Free Software Foundation; either
 * version 2.1 of the License, or (at your option) any later version.
 */
/**
 * SECTION:element-qmetric
 * @title: qmetric
 *
 * qmetric compares a distorted video stream with its reference, frame by
 * frame, with the metrics of Netflix's libvmaf (VMAF and its features,
 * PSNR, SSIM, MS-SSIM, PSNR-HVS, CIEDE2000, CAMBI), reproducing libvmaf's
 * scores.  Each frame is paired with the nearest frame of the other stream in
 * running time (docs/element.md, "Pairing").  The distorted frames leave on
 * the src pad unchanged, so the element can sit in front of a sink.
 *
 * For every compared pair it posts an element message named "qmetric"
 * (fields: index, timestamp, stream-time, running-time, duration, then one
 * double per feature), attaches a #GstQmetricMeta to the outgoing buffer and
 * sends a tag event with the scores.  At EOS it posts "qmetric-summary" with
 * the pooled values and completes the log file (libvmaf's JSON, CSV or XML).
 * A frame that arrives on one pad without a partner on the other is not
 * compared with anything: it is counted and reported in a warning.
 * When both pads change size or format, the engine starts again at the
 * change and a "qmetric-reconfigured" message says where; a flushing seek
 * after EOS starts a new segment with a summary of its own.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 -m qmetric name=q log-location=scores.json ! fakesink \
 *     videotestsrc num-buffers=100 ! video/x-raw,width=640,height=360 ! tee name=t \
 *     t. ! queue ! q.ref_sink \
 *     t. ! queue ! x264enc bitrate=300 ! avdec_h264 ! q.dist_sink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <math.h>
#include <string.h>

#include <gst/video/video.h>

#include "gstqmetric.h"
#include "gstqmetriccuda.h"
#include "gstqmetricframe.h"
#include "gstqmetricmeta.h"
#include "pair.h"
#include "partial.h"
#include "qm.h"
#include "qmlog.h"
#include "gstqmetricwindow.h"

GST_DEBUG_CATEGORY_STATIC (gst_qmetric_debug);
#define GST_CAT_DEFAULT gst_qmetric_debug

/* a first pipeline should be fast: libvmaf's VMAF plus the two scores
 * everyone asks for, as qmetric-compare's default; "all" costs tens of times
 * more CPU (docs/element.md) */
#define DEFAULT_METRICS QM_DEFAULT_METRICS
#define DEFAULT_MODEL "vmaf_v0.6.1"
#define DEFAULT_FEATURES NULL
#define DEFAULT_LOG_LOCATION NULL
#define DEFAULT_LOG_FORMAT QM_LOG_FORMAT_JSON
#define DEFAULT_POST_MESSAGES TRUE
#define DEFAULT_SUBSAMPLE 1
#define DEFAULT_THREADS 0
#define DEFAULT_DISABLE_CLIP FALSE
#define DEFAULT_ENABLE_TRANSFORM FALSE
#define DEFAULT_POOL (QM_POOL_LIBVMAF)
#define DEFAULT_BACKEND QM_BACKEND_AUTO
#define DEFAULT_CUDA_DEVICE_ID -1
#define DEFAULT_PAIRING_TOLERANCE GST_CLOCK_TIME_NONE
#define DEFAULT_PARTNER_TIMEOUT (5 * GST_SECOND)

/* frames held per sink pad while their partners are looked for.  They are
 * taken only as the decision needs them, so a queue rarely holds more than
 * two; the rest is room for reordered timestamps, and a full queue ends the
 * wait (core/pair.h) */
#define PAIR_QUEUE_MAX 8
#define DEFAULT_WINDOW "none"

/* individual warnings for the first unmatched frames; then every Nth */
#define UNMATCHED_WARN_FIRST 20
#define UNMATCHED_WARN_EVERY 1000

enum
{
  PROP_0,
  PROP_METRICS,
  PROP_MODEL,
  PROP_FEATURES,
  PROP_LOG_LOCATION,
  PROP_LOG_FORMAT,
  PROP_POST_MESSAGES,
  PROP_SUBSAMPLE,
  PROP_THREADS,
  PROP_DISABLE_CLIP,
  PROP_ENABLE_TRANSFORM,
  PROP_POOL,
  PROP_BACKEND,
  PROP_CUDA_DEVICE_ID,
  PROP_PAIRING_TOLERANCE,
  PROP_PARTNER_TIMEOUT,
  PROP_WINDOW,
};

/* One compared pair, from submission to the push of its distorted frame. */
typedef struct
{
  guint64 index;
  GstQmetricSide ref, dist;
  GstBuffer *dist_buf;          /* NULL once pushed */
  GstClockTime pts, duration, running_time, stream_time;
  gboolean matched;             /* FALSE: a distorted frame with no reference */
  gboolean done;                /* scores known (or none due) */
  gboolean has_scores;
  gboolean unreadable;          /* matched but not mapped: not compared */
  gdouble *values;
  guint8 *present;
} QmPair;

/* Frames taken off one sink pad, waiting for the pairing decision
 * (GstAggregatorPad shows only its head buffer). */
typedef struct
{
  GstBuffer *buf[PAIR_QUEUE_MAX];
  QmPairFrame f[PAIR_QUEUE_MAX];
  /* each frame's caps when it was taken: a caps change may come (and
   * change the pad's info) while earlier frames still wait here */
  GstVideoInfo info[PAIR_QUEUE_MAX];
  guint n;
  gint n_shared;                /* n, for the watchdog thread (atomic) */
  GstClockTime prev_t;          /* last timed frame's running time */
  gint64 last_dur;              /* and its duration, or -1 (live end of
                                 * comparison) */
} QmPadQueue;

struct _GstQmetric
{
  GstAggregator parent;

  GstAggregatorPad *ref_pad, *dist_pad;

  /* properties, under the object lock */
  gchar *metrics;
  gboolean metrics_set;         /* FALSE: the default list, a wish only */
  gchar *model;
  gchar *features;
  gchar *log_location;
  QmLogFormat log_format;
  gboolean post_messages;
  guint subsample;
  guint threads;
  gboolean disable_clip;
  gboolean enable_transform;
  guint pool;
  QmBackend backend;
  gint cuda_device_id;
  GstClockTime pairing_tolerance;
  GstClockTime partner_timeout;
  gchar *window;

  /* CUDA shared with upstream (a GstCudaContext) */
  GstObject *cuda_ctx;

  /* streaming state */
  GstVideoInfo ref_info, dist_info;   /* the pads' latest caps */
  /* the caps of the pair being compared (its frames' own, from the pairing
   * queue) and those the engine was opened for */
  GstVideoInfo pair_ref_info, pair_dist_info, engine_info;
  gboolean have_ref_info, have_dist_info;
  QmEngine *engine;
  guint n_features;
  const gchar **names;          /* interned */
  GQuark *quarks;
  QmPool *pools;
  QmLog *log;
  GQueue out;                   /* QmPair, in output order */
  guint64 n_pairs;              /* pairs submitted since start */
  guint64 n_scored;             /* pairs with scores */
  guint64 unmatched_ref, unmatched_dist, unreadable, out_of_range;
  /* buffers of CUDA memory read in place by the CUDA backend, and those
   * mapped for the CPU instead (a download; see compare_pair) */
  guint64 cuda_in_place, cuda_copied;
  gboolean foreign_ctx_warned;
  /* pairing (core/pair.h); [0] reference, [1] distorted */
  QmPadQueue pq[2];
  QmPairState pair_state;
  guint modes_warned;           /* 1 << QmPairMode of the warnings posted */
  gboolean rates_checked;
  guint64 late;                 /* live: frames that arrived past deadline */
  GstClockTime agg_latency;     /* live: the latency aggregate() last saw,
                                 * for get_next_time() (see there) */

  /* partner-timeout watchdog (non-live) */
  GThread *watchdog;
  GMutex wd_lock;
  GCond wd_cond;
  gboolean wd_running;
  gint64 last_data_us[2];       /* monotonic time of each pad's last buffer */
  gboolean finished;
  /* a flushing seek sent upstream and not yet flushed through (atomic):
   * between the flush-start downstream (which lets our pushes return at
   * once) and the flush upstream, the frames still queued are on their way
   * out and are dropped, not scored */
  gint seek_flushing;
  /* the summary's segment: which one (0 = the first since start, +1 for
   * each flush after a summary), the flushes inside it, and the stream
   * times of its first and last compared pairs */
  guint segment, flushes;
  GstClockTime first_stream_time, last_stream_time;
  gboolean reconfigured;        /* engine closed by a size/format change */
  guint pad_diff_warned;        /* PAD_DIFF_* last warned about */
  gint64 t_start;               /* monotonic us, for the log's fps */
  QmWindow *win;                /* qmetric-window messages (qmwindow.c) */
  /* what the engine computes, as a chunk of a title records it
   * (core/partial.h): the summary's "identity" */
  gchar *identity;
};

#define gst_qmetric_parent_class parent_class
G_DEFINE_TYPE (GstQmetric, gst_qmetric, GST_TYPE_AGGREGATOR);
GST_ELEMENT_REGISTER_DEFINE (qmetric, "qmetric", GST_RANK_NONE,
    GST_TYPE_QMETRIC);

static void gst_qmetric_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec);
static void gst_qmetric_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec);
static void gst_qmetric_finalize (GObject * object);
static gboolean gst_qmetric_start (GstAggregator * agg);
static gboolean gst_qmetric_stop (GstAggregator * agg);
static GstFlowReturn gst_qmetric_flush (GstAggregator * agg);
static gboolean gst_qmetric_sink_event (GstAggregator * agg,
    GstAggregatorPad * pad, GstEvent * event);
static gboolean gst_qmetric_sink_query (GstAggregator * agg,
    GstAggregatorPad * pad, GstQuery * query);
static gboolean live_may_end (GstQmetric * self, gint64 deadline);
static gint64 live_end_time (GstQmetric * self, guint i);
static GstFlowReturn gst_qmetric_aggregate (GstAggregator * agg,
    gboolean timeout);
static void gst_qmetric_set_context (GstElement * element,
    GstContext * context);
static gboolean gst_qmetric_src_query (GstAggregator * agg, GstQuery * query);
static gboolean gst_qmetric_src_event (GstAggregator * agg, GstEvent * event);
static GstClockTime gst_qmetric_get_next_time (GstAggregator * agg);
static GstPadProbeReturn data_probe (GstPad * pad, GstPadProbeInfo * info,
    gpointer user);
static void pairing_start (GstQmetric * self);
static void pairing_stop (GstQmetric * self);
static void pairing_reset (GstQmetric * self);

/* ---- enums ---- */

/* The GType of enum (flags NULL) or flags values (enum_values NULL) named
 * name, registered on the first call (thread-safe). */
static GType
register_once (GType * type, const gchar * name,
    const GEnumValue * enum_values, const GFlagsValue * flags_values)
{
  if (g_once_init_enter (type)) {
    GType t = enum_values ? g_enum_register_static (name, enum_values) :
        g_flags_register_static (name, flags_values);
    g_once_init_leave (type, t);
  }
  return *type;
}

GType
gst_qmetric_log_format_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {QM_LOG_FORMAT_JSON, "libvmaf's JSON layout", "json"},
    {QM_LOG_FORMAT_CSV, "CSV, one row per frame", "csv"},
    {QM_LOG_FORMAT_XML, "libvmaf's XML layout", "xml"},
    {QM_LOG_FORMAT_JSONL, "JSON lines: a header, one object per frame and "
          "per window (see the window property) as they end, a summary at "
          "the end", "jsonl"},
    {0, NULL, NULL},
  };

  return register_once (&type, "GstQmetricLogFormat", values, NULL);
}

GType
gst_qmetric_backend_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {QM_BACKEND_AUTO, "CUDA when a GPU works, else CPU", "auto"},
    {QM_BACKEND_CPU, "CPU", "cpu"},
    {QM_BACKEND_CUDA, "CUDA (an error when no GPU works)", "cuda"},
    {0, NULL, NULL},
  };

  return register_once (&type, "GstQmetricBackend", values, NULL);
}

GType
gst_qmetric_pool_get_type (void)
{
  static GType type = 0;
  static const GFlagsValue values[] = {
    {QM_POOL_MIN, "Minimum", "min"},
    {QM_POOL_MAX, "Maximum", "max"},
    {QM_POOL_MEAN, "Arithmetic mean", "mean"},
    {QM_POOL_HARMONIC_MEAN, "Harmonic mean, n / sum(1 / (x + 1)) - 1",
        "harmonic-mean"},
    {QM_POOL_P1, "1st percentile", "p1"},
    {QM_POOL_P5, "5th percentile", "p5"},
    {0, NULL, NULL},
  };

  return register_once (&type, "GstQmetricPool", NULL, values);
}

/* ---- class ---- */

static gchar *
metric_list_blurb (void)
{
  /* qmetric-compare reads the names after "any of:" */
  GString *s = g_string_new ("Comma-separated metrics to compute (default "
      "\"" DEFAULT_METRICS "\", of which what cannot run on the input is "
      "left out with a warning; a metric named here that cannot run is an "
      "error): \"all\" (every metric below that the input supports, "
      "leaving out with a warning one that cannot run at the input's size, "
      "bit depth or chroma; it costs tens of times the CPU time of the "
      "default, see docs/element.md), or any of:");
  const char *const *n;

  for (n = qm_metric_names (); *n; n++)
    g_string_append_printf (s, " %s (%s);", *n, qm_metric_describe (*n));
  if (s->str[s->len - 1] == ';')
    g_string_truncate (s, s->len - 1);
  return g_string_free (s, FALSE);
}

static void
gst_qmetric_class_init (GstQmetricClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstAggregatorClass *agg_class = GST_AGGREGATOR_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
      GST_PARAM_MUTABLE_READY;

  gobject_class->set_property = gst_qmetric_set_property;
  gobject_class->get_property = gst_qmetric_get_property;
  gobject_class->finalize = gst_qmetric_finalize;

  /* the blurb lists the metrics of this build: made once, kept by the
   * param spec for the life of the process (STATIC_BLURB: not copied) */
  g_object_class_install_property (gobject_class, PROP_METRICS,
      g_param_spec_string ("metrics", "Metrics", metric_list_blurb (),
          DEFAULT_METRICS, G_PARAM_READWRITE | G_PARAM_STATIC_NAME |
          G_PARAM_STATIC_NICK | G_PARAM_STATIC_BLURB |
          GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_MODEL,
      g_param_spec_string ("model", "VMAF model",
          "VMAF model(s) for the metric \"vmaf\", comma-separated: a built-in "
          "name (vmaf_v0.6.1, vmaf_4k_v0.6.1, vmaf_v0.6.1neg, "
          "vmaf_v1.0.16_3d0h, vmaf_v1.0.16_5d0h, vmaf_v1.0.16_1d5h_2160, "
          "vmaf_v1.0.16_3d0h_2160 and their _hfr variants, e.g. "
          "vmaf_v1.0.16_hfr_3d0h) or the path of "
          "a libvmaf JSON model. With one model the score is named \"vmaf\", "
          "with several each score is named after its model (e.g. "
          "\"vmaf_v0.6.1neg\")", DEFAULT_MODEL, flags));
  g_object_class_install_property (gobject_class, PROP_FEATURES,
      g_param_spec_string ("features", "Features with options",
          "Extra metric instances with options, libvmaf's --feature "
          "spelling, comma-separated: NAME or NAME=OPTION=VALUE:OPTION=VALUE "
          "(e.g. \"adm=adm_enhn_gain_limit=1.0,motion=motion_max_val=18\"). "
          "Each adds an instance beside those of \"metrics\" and the "
          "model(s), its scores named with libvmaf's option suffixes "
          "(e.g. \"integer_adm2_egl_1\"); an unknown metric or option is an "
          "error. NULL: none", DEFAULT_FEATURES, flags));
  g_object_class_install_property (gobject_class, PROP_LOG_LOCATION,
      g_param_spec_string ("log-location", "Log location",
          "File to write the per-frame scores and the pooled values to "
          "(written as frames arrive, completed at EOS; NULL: no log)",
          DEFAULT_LOG_LOCATION, flags));
  g_object_class_install_property (gobject_class, PROP_LOG_FORMAT,
      g_param_spec_enum ("log-format", "Log format", "Layout of the log file",
          GST_TYPE_QMETRIC_LOG_FORMAT, DEFAULT_LOG_FORMAT, flags));
  g_object_class_install_property (gobject_class, PROP_POST_MESSAGES,
      g_param_spec_boolean ("post-messages", "Post messages",
          "Post a \"qmetric\" element message for every compared frame "
          "(the \"qmetric-summary\" message at EOS is always posted)",
          DEFAULT_POST_MESSAGES, G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
          GST_PARAM_MUTABLE_PLAYING));
  g_object_class_install_property (gobject_class, PROP_SUBSAMPLE,
      g_param_spec_uint ("subsample", "Subsample",
          "Compute the scores of every Nth pair only (frame indices still "
          "count every pair; motion sees every frame, as in libvmaf)",
          1, G_MAXUINT, DEFAULT_SUBSAMPLE, flags));
  g_object_class_install_property (gobject_class, PROP_THREADS,
      g_param_spec_uint ("threads", "Threads",
          "CPU threads computing the metrics (0 = one per CPU core); "
          "frames are computed in parallel, scores stay in order; with the "
          "CUDA backend and system-memory input, up to 4 of them share the "
          "copy into the GPU's staging memory",
          0, 64, DEFAULT_THREADS, flags));
  g_object_class_install_property (gobject_class, PROP_DISABLE_CLIP,
      g_param_spec_boolean ("disable-clip", "Disable clip",
          "Do not clip the VMAF score to the model's range (0..100)",
          DEFAULT_DISABLE_CLIP, flags));
  g_object_class_install_property (gobject_class, PROP_ENABLE_TRANSFORM,
      g_param_spec_boolean ("enable-transform", "Enable transform",
          "Apply the model's score transform (the \"phone\" model of "
          "vmaf_v0.6.1)", DEFAULT_ENABLE_TRANSFORM, flags));
  g_object_class_install_property (gobject_class, PROP_POOL,
      g_param_spec_flags ("pool", "Pooling",
          "Pooled values in the summary message and the log",
          GST_TYPE_QMETRIC_POOL, DEFAULT_POOL, flags));
  g_object_class_install_property (gobject_class, PROP_BACKEND,
      g_param_spec_enum ("backend", "Backend",
          "Where the metrics run", GST_TYPE_QMETRIC_BACKEND, DEFAULT_BACKEND,
          flags));
  g_object_class_install_property (gobject_class, PROP_CUDA_DEVICE_ID,
      g_param_spec_int ("cuda-device-id", "CUDA device id",
          "CUDA device to use (-1 = any)", -1, G_MAXINT,
          DEFAULT_CUDA_DEVICE_ID, flags));
  g_object_class_install_property (gobject_class, PROP_PAIRING_TOLERANCE,
      g_param_spec_uint64 ("pairing-tolerance", "Pairing tolerance",
          "Largest difference of running time (ns) between a reference and a "
          "distorted frame that still makes them a pair (-1 = half the "
          "shorter of the two frames' durations).  Frames pair only with the "
          "nearest frame of the other pad, whatever the tolerance",
          0, G_MAXUINT64, DEFAULT_PAIRING_TOLERANCE, flags));
  g_object_class_install_property (gobject_class, PROP_PARTNER_TIMEOUT,
      g_param_spec_uint64 ("partner-timeout", "Partner timeout",
          "Not live: when one sink pad gets no data for this long (ns) while "
          "the other has frames waiting or has ended, post a warning and "
          "treat the silent pad as ended, counting the waiting frames as "
          "unmatched (0 = wait forever; live pipelines use the latency)",
          0, G_MAXUINT64, DEFAULT_PARTNER_TIMEOUT, flags));
  g_object_class_install_property (gobject_class, PROP_WINDOW,
      g_param_spec_string ("window", "Reporting window",
          "Post a \"qmetric-window\" message (and a log record with "
          "log-format=jsonl) with the pooled scores and the frame counts of "
          "each window: \"none\", a duration of running time (\"1s\", "
          "\"500ms\", \"1min\"; windows aligned to running time 0), a "
          "number of pairs (\"120frames\") or \"keyframe\" (from one "
          "distorted key frame to the next). A window ends early after 36000 "
          "pairs", DEFAULT_WINDOW, flags));

  {
    /* system memory, and CUDA memory where GStreamer's CUDA library and our
     * CUDA backend are built (nvh264dec ! qmetric without a copy) */
    static const struct
    {
      const gchar *name;
      GstPadDirection direction;
    } pads[] = {
      {"ref_sink", GST_PAD_SINK}, {"dist_sink", GST_PAD_SINK},
      {"src", GST_PAD_SRC},
    };
    GstCaps *caps = gst_qmetric_cuda_pad_caps (GST_QMETRIC_FORMATS);
    guint i;

    for (i = 0; i < G_N_ELEMENTS (pads); i++)
      gst_element_class_add_pad_template (element_class,
          gst_pad_template_new_with_gtype (pads[i].name, pads[i].direction,
              GST_PAD_ALWAYS, caps, GST_TYPE_AGGREGATOR_PAD));
    gst_caps_unref (caps);
  }

  gst_element_class_set_static_metadata (element_class,
      "Video quality metrics", "Filter/Analyzer/Video",
      "Full-reference video quality (VMAF, PSNR, SSIM, MS-SSIM, PSNR-HVS, "
      "CIEDE2000, CAMBI) of a distorted stream against its reference",
      "gst-qmetric authors");

  element_class->set_context = GST_DEBUG_FUNCPTR (gst_qmetric_set_context);
  agg_class->src_query = GST_DEBUG_FUNCPTR (gst_qmetric_src_query);
  agg_class->src_event = GST_DEBUG_FUNCPTR (gst_qmetric_src_event);
  agg_class->start = GST_DEBUG_FUNCPTR (gst_qmetric_start);
  agg_class->stop = GST_DEBUG_FUNCPTR (gst_qmetric_stop);
  agg_class->flush = GST_DEBUG_FUNCPTR (gst_qmetric_flush);
  agg_class->sink_event = GST_DEBUG_FUNCPTR (gst_qmetric_sink_event);
  agg_class->sink_query = GST_DEBUG_FUNCPTR (gst_qmetric_sink_query);
  agg_class->aggregate = GST_DEBUG_FUNCPTR (gst_qmetric_aggregate);
  agg_class->get_next_time = GST_DEBUG_FUNCPTR (gst_qmetric_get_next_time);
  /* the output caps are the distorted input's, set from its CAPS event */
  agg_class->negotiate = NULL;

  gst_type_mark_as_plugin_api (GST_TYPE_QMETRIC_LOG_FORMAT, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_QMETRIC_BACKEND, 0);
  gst_type_mark_as_plugin_api (GST_TYPE_QMETRIC_POOL, 0);

  GST_DEBUG_CATEGORY_INIT (gst_qmetric_debug, "qmetric", 0,
      "video quality metrics");
}

/* The ALWAYS sink pad of template `name`, added to the element. */
static GstAggregatorPad *
add_sink_pad (GstQmetric * self, const gchar * name)
{
  GstPadTemplate *templ =
      gst_element_class_get_pad_template (GST_ELEMENT_GET_CLASS (self), name);
  GstPad *pad = gst_pad_new_from_template (templ, name);

  gst_element_add_pad (GST_ELEMENT (self), pad);
  return GST_AGGREGATOR_PAD (pad);
}

static void
gst_qmetric_init (GstQmetric * self)
{
  self->ref_pad = add_sink_pad (self, "ref_sink");
  self->dist_pad = add_sink_pad (self, "dist_sink");
  g_mutex_init (&self->wd_lock);
  g_cond_init (&self->wd_cond);
  /* the partner-timeout watchdog needs to know when data last came */
  gst_pad_add_probe (GST_PAD (self->ref_pad), GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_BUFFER_LIST, data_probe, self, NULL);
  gst_pad_add_probe (GST_PAD (self->dist_pad), GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_BUFFER_LIST, data_probe, self, NULL);

  self->metrics = g_strdup (DEFAULT_METRICS);
  self->model = g_strdup (DEFAULT_MODEL);
  self->log_location = g_strdup (DEFAULT_LOG_LOCATION);
  self->log_format = DEFAULT_LOG_FORMAT;
  self->post_messages = DEFAULT_POST_MESSAGES;
  self->subsample = DEFAULT_SUBSAMPLE;
  self->threads = DEFAULT_THREADS;
  self->disable_clip = DEFAULT_DISABLE_CLIP;
  self->enable_transform = DEFAULT_ENABLE_TRANSFORM;
  self->pool = DEFAULT_POOL;
  self->backend = DEFAULT_BACKEND;
  self->cuda_device_id = DEFAULT_CUDA_DEVICE_ID;
  self->pairing_tolerance = DEFAULT_PAIRING_TOLERANCE;
  self->partner_timeout = DEFAULT_PARTNER_TIMEOUT;
  self->window = g_strdup (DEFAULT_WINDOW);
  g_queue_init (&self->out);
}

static void
gst_qmetric_finalize (GObject * object)
{
  GstQmetric *self = GST_QMETRIC (object);

  g_free (self->metrics);
  g_free (self->model);
  g_free (self->features);
  g_free (self->log_location);
  g_mutex_clear (&self->wd_lock);
  g_cond_clear (&self->wd_cond);
  g_free (self->window);
  g_free (self->identity);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_qmetric_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstQmetric *self = GST_QMETRIC (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_METRICS:
      g_free (self->metrics);
      self->metrics = g_value_dup_string (value);
      self->metrics_set = self->metrics != NULL;
      if (!self->metrics)
        self->metrics = g_strdup (DEFAULT_METRICS);
      break;
    case PROP_MODEL:
      g_free (self->model);
      self->model = g_value_dup_string (value);
      if (!self->model)
        self->model = g_strdup (DEFAULT_MODEL);
      break;
    case PROP_FEATURES:
      g_free (self->features);
      self->features = g_value_dup_string (value);
      break;
    case PROP_LOG_LOCATION:
      g_free (self->log_location);
      self->log_location = g_value_dup_string (value);
      break;
    case PROP_LOG_FORMAT:
      self->log_format = g_value_get_enum (value);
      break;
    case PROP_POST_MESSAGES:
      self->post_messages = g_value_get_boolean (value);
      break;
    case PROP_SUBSAMPLE:
      self->subsample = g_value_get_uint (value);
      break;
    case PROP_THREADS:
      self->threads = g_value_get_uint (value);
      break;
    case PROP_DISABLE_CLIP:
      self->disable_clip = g_value_get_boolean (value);
      break;
    case PROP_ENABLE_TRANSFORM:
      self->enable_transform = g_value_get_boolean (value);
      break;
    case PROP_POOL:
      self->pool = g_value_get_flags (value);
      break;
    case PROP_BACKEND:
      self->backend = g_value_get_enum (value);
      break;
    case PROP_CUDA_DEVICE_ID:
      self->cuda_device_id = g_value_get_int (value);
      break;
    case PROP_PAIRING_TOLERANCE:
      self->pairing_tolerance = g_value_get_uint64 (value);
      break;
    case PROP_PARTNER_TIMEOUT:
      self->partner_timeout = g_value_get_uint64 (value);
      break;
    case PROP_WINDOW:
      g_free (self->window);
      self->window = g_value_dup_string (value);
      if (!self->window)
        self->window = g_strdup (DEFAULT_WINDOW);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_qmetric_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstQmetric *self = GST_QMETRIC (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_METRICS:
      g_value_set_string (value, self->metrics);
      break;
    case PROP_MODEL:
      g_value_set_string (value, self->model);
      break;
    case PROP_FEATURES:
      g_value_set_string (value, self->features);
      break;
    case PROP_LOG_LOCATION:
      g_value_set_string (value, self->log_location);
      break;
    case PROP_LOG_FORMAT:
      g_value_set_enum (value, self->log_format);
      break;
    case PROP_POST_MESSAGES:
      g_value_set_boolean (value, self->post_messages);
      break;
    case PROP_SUBSAMPLE:
      g_value_set_uint (value, self->subsample);
      break;
    case PROP_THREADS:
      g_value_set_uint (value, self->threads);
      break;
    case PROP_DISABLE_CLIP:
      g_value_set_boolean (value, self->disable_clip);
      break;
    case PROP_ENABLE_TRANSFORM:
      g_value_set_boolean (value, self->enable_transform);
      break;
    case PROP_POOL:
      g_value_set_flags (value, self->pool);
      break;
    case PROP_BACKEND:
      g_value_set_enum (value, self->backend);
      break;
    case PROP_CUDA_DEVICE_ID:
      g_value_set_int (value, self->cuda_device_id);
      break;
    case PROP_PAIRING_TOLERANCE:
      g_value_set_uint64 (value, self->pairing_tolerance);
      break;
    case PROP_PARTNER_TIMEOUT:
      g_value_set_uint64 (value, self->partner_timeout);
      break;
    case PROP_WINDOW:
      g_value_set_string (value, self->window);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* ---- pairs ---- */

static void
qm_pair_free (QmPair * p)
{
  gst_qmetric_side_unmap (&p->ref);
  gst_qmetric_side_unmap (&p->dist);
  gst_clear_buffer (&p->dist_buf);
  g_free (p->values);
  g_free (p->present);
  g_free (p);
}

/* Engine callback, possibly from a worker thread: the pictures are read. */
static void
qm_pair_release (void *opaque, void *frame_user)
{
  QmPair *p = frame_user;

  gst_qmetric_side_unmap (&p->ref);
  gst_qmetric_side_unmap (&p->dist);
}

static void
qm_engine_log_cb (void *opaque, int level, const char *msg)
{
  GstQmetric *self = opaque;

  switch (level) {
    case QM_LOG_ERROR:
      GST_ERROR_OBJECT (self, "%s", msg);
      break;
    case QM_LOG_WARNING:
      GST_WARNING_OBJECT (self, "%s", msg);
      break;
    case QM_LOG_INFO:
      GST_INFO_OBJECT (self, "%s", msg);
      break;
    default:
      GST_DEBUG_OBJECT (self, "%s", msg);
      break;
  }
}

/* ---- engine lifetime ---- */

static void
free_features (GstQmetric * self)
{
  guint i;

  for (i = 0; self->pools && i < self->n_features; i++)
    qm_pool_clear (&self->pools[i]);
  g_clear_pointer (&self->pools, g_free);
  g_clear_pointer (&self->names, g_free);
  g_clear_pointer (&self->quarks, g_free);
  self->n_features = 0;
}

/* Text that came from outside (paths, model files) made valid UTF-8 for a
 * GError, which must be. */
static gchar *
valid_utf8 (const gchar * s)
{
  return g_utf8_make_valid (s ? s : "", -1);
}

/* A side's colorimetry as QmPicture.color takes it: what its caps state
 * (the caps event marks a matrix they do not state unknown). */
static void
color_of (const GstVideoInfo * info, QmColor * c)
{
  switch (info->colorimetry.matrix) {
    case GST_VIDEO_COLOR_MATRIX_BT709:
      c->matrix = QM_MATRIX_BT709;
      break;
    case GST_VIDEO_COLOR_MATRIX_BT601:
      c->matrix = QM_MATRIX_BT601;
      break;
    case GST_VIDEO_COLOR_MATRIX_BT2020:
      c->matrix = QM_MATRIX_BT2020;
      break;
    case GST_VIDEO_COLOR_MATRIX_SMPTE240M:
      c->matrix = QM_MATRIX_SMPTE240M;
      break;
    case GST_VIDEO_COLOR_MATRIX_FCC:
      c->matrix = QM_MATRIX_FCC;
      break;
    default:
      c->matrix = QM_MATRIX_UNKNOWN;
      break;
  }
  c->range = info->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255 ?
      QM_RANGE_FULL : info->colorimetry.range == GST_VIDEO_COLOR_RANGE_16_235 ?
      QM_RANGE_LIMITED : QM_RANGE_UNKNOWN;
}

/* The pair's colorimetry: each side's caps, a side that states none taking
 * the other's (a raw reference beside its decoded encode). */
static void
pair_colors (GstQmetric * self, QmColor * ref, QmColor * dist)
{
  color_of (&self->pair_ref_info, ref);
  color_of (&self->pair_dist_info, dist);
  if (ref->matrix == QM_MATRIX_UNKNOWN)
    *ref = *dist;
  else if (dist->matrix == QM_MATRIX_UNKNOWN)
    *dist = *ref;
}

/* The engine's settings for pictures described by info, from the
 * properties (the strings are the caller's to g_free) */
static void
fill_settings (GstQmetric * self, QmSettings * s, const GstVideoInfo * info)
{
  const GstQmetricFormat *f =
      gst_qmetric_format_lookup (GST_VIDEO_INFO_FORMAT (info));

  qm_settings_default (s, GST_VIDEO_INFO_WIDTH (info),
      GST_VIDEO_INFO_HEIGHT (info), f->bpc, f->chroma);
  GST_OBJECT_LOCK (self);
  s->metrics = g_strdup (self->metrics);
  s->metrics_are_default = !self->metrics_set;
  s->models = g_strdup (self->model);
  s->features = g_strdup (self->features);
  s->n_threads = self->threads;
  s->subsample = self->subsample;
  s->disable_clip = self->disable_clip;
  s->enable_transform = self->enable_transform;
  s->backend = self->backend;
  s->cuda_device = self->cuda_device_id;
  GST_OBJECT_UNLOCK (self);
}

static void
clear_settings (QmSettings * s)
{
  g_free ((gchar *) s->metrics);
  g_free ((gchar *) s->models);
  g_free ((gchar *) s->features);
}

/* A frame's scores wait for the look-ahead (motion needs the next frame):
 * a live pipeline must know that the element holds that many frames, and
 * it waits that much longer for partners.  Set at the first caps with a
 * rate, before the first frame: set at the first pair, the frames before
 * the pipeline's latency was recomputed had a shorter wait than the ones
 * after (seen in qmetric-bench-probes as pairs lost in the first second). */
static void
announce_lookahead (GstQmetric * self, const GstVideoInfo * info,
    unsigned delay)
{
  GstClockTime lat;

  if (delay == 0 || GST_VIDEO_INFO_FPS_N (info) <= 0)
    return;
  lat = gst_util_uint64_scale_int (GST_SECOND * delay,
      GST_VIDEO_INFO_FPS_D (info), GST_VIDEO_INFO_FPS_N (info));
  gst_aggregator_set_latency (GST_AGGREGATOR (self), lat, lat);
}

static gboolean
open_engine (GstQmetric * self, GstClockTime rt)
{
  QmSettings s;
  gchar *log_location;
  QmLogFormat log_format;
  char *err = NULL;
  guint i;
  int ret;

  fill_settings (self, &s, &self->pair_dist_info);
  GST_OBJECT_LOCK (self);
  s.cuda_context = gst_qmetric_cuda_handle (self->cuda_ctx);
  log_location = g_strdup (self->log_location);
  log_format = self->log_format;
  GST_OBJECT_UNLOCK (self);
  s.log = qm_engine_log_cb;
  s.log_opaque = self;
  s.release = qm_pair_release;
  s.release_opaque = self;

  ret = qm_engine_open (&self->engine, &s, &err);
  clear_settings (&s);
  if (ret) {
    gchar *why = valid_utf8 (err ? err : qm_strerror (ret));
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("Cannot set up the metrics: %s", why),
        ("qm_engine_open() returned %d for %dx%d %s", ret, s.w, s.h,
            gst_video_format_to_string (GST_VIDEO_INFO_FORMAT
                (&self->pair_dist_info))));
    g_free (why);
    free (err);
    g_free (log_location);
    return FALSE;
  }
  if (s.backend == QM_BACKEND_AUTO && qm_have_cuda () &&
      qm_engine_backend (self->engine) != QM_BACKEND_CUDA) {
    /* one clear line for users who expected the GPU */
    GST_ELEMENT_INFO (self, RESOURCE, NOT_FOUND,
        ("No usable CUDA device: the metrics run on the CPU"),
        ("backend=auto; the GST_DEBUG=qmetric:4 log says why"));
  }
  {
    /* kept for the summary: the engine is closed before it is posted */
    char *id = qm_partial_engine_settings (self->engine, &s);
    g_free (self->identity);
    self->identity = g_strdup (id);
    free (id);
  }
  GST_INFO_OBJECT (self, "metrics run on the %s, %u features, %u frame(s) "
      "of look-ahead", qm_engine_backend (self->engine) == QM_BACKEND_CUDA ?
      "GPU (CUDA)" : "CPU", qm_engine_n_features (self->engine),
      qm_engine_delay (self->engine));

  /* usually announced at the caps already (the same value: no message) */
  announce_lookahead (self, &self->pair_dist_info,
      qm_engine_delay (self->engine));

  if (self->n_features == 0) {
    self->n_features = qm_engine_n_features (self->engine);
    self->names = g_new0 (const gchar *, self->n_features);
    self->quarks = g_new0 (GQuark, self->n_features);
    self->pools = g_new0 (QmPool, self->n_features);
    for (i = 0; i < self->n_features; i++) {
      self->names[i] =
          g_intern_string (qm_engine_feature_name (self->engine, i));
      self->quarks[i] = g_quark_from_string (self->names[i]);
      qm_pool_init (&self->pools[i]);
    }
  } else {
    /* a new engine after a caps change must report the same features */
    gboolean same = self->n_features == qm_engine_n_features (self->engine);
    for (i = 0; same && i < self->n_features; i++)
      same = !strcmp (self->names[i], qm_engine_feature_name (self->engine,
              i));
    if (!same) {
      GST_ELEMENT_ERROR (self, STREAM, FORMAT,
          ("The new input format changes the set of scores; this is not "
              "supported mid-stream"), (NULL));
      qm_engine_close (&self->engine);
      g_free (log_location);
      return FALSE;
    }
  }

  if (log_location && !self->log) {
    self->log = qm_log_open (log_location, log_format, self->n_features,
        self->names, s.w, s.h, &err);
    if (!self->log) {
      gchar *why = valid_utf8 (err);
      gchar *loc = valid_utf8 (log_location);
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
          ("%s", why), ("log-location=%s", loc));
      g_free (loc);
      g_free (why);
      free (err);
      g_free (log_location);
      qm_engine_close (&self->engine);
      return FALSE;
    }
  }
  g_free (log_location);

  if (self->reconfigured) {
    /* a size or format change: motion and the other temporal features
     * start afresh with the new engine, at this pair */
    self->reconfigured = FALSE;
    gst_element_post_message (GST_ELEMENT (self),
        gst_message_new_element (GST_OBJECT (self),
            gst_structure_new ("qmetric-reconfigured",
                "index", G_TYPE_UINT64, self->n_pairs,
                "running-time", G_TYPE_UINT64, rt,
                "width", G_TYPE_INT, s.w, "height", G_TYPE_INT, s.h,
                "format", G_TYPE_STRING, gst_video_format_to_string
                (GST_VIDEO_INFO_FORMAT (&self->pair_dist_info)), NULL)));
  }
  return TRUE;
}

/* ---- output ---- */

static GstStructure *
scores_structure (GstQmetric * self, const gchar * name, QmPair * p)
{
  GstStructure *s = gst_structure_new (name,
      "index", G_TYPE_UINT64, p->index,
      "timestamp", G_TYPE_UINT64, p->pts,
      "stream-time", G_TYPE_UINT64, p->stream_time,
      "running-time", G_TYPE_UINT64, p->running_time,
      "duration", G_TYPE_UINT64, p->duration, NULL);
  guint i;

  for (i = 0; i < self->n_features; i++) {
    if (p->present[i])
      gst_structure_id_set (s, self->quarks[i], G_TYPE_DOUBLE, p->values[i],
          NULL);
  }
  return s;
}

static void
ensure_tag (const gchar * feature, gchar * tag, gsize len)
{
  g_snprintf (tag, len, "qmetric-%s", feature);
  if (!gst_tag_exists (tag)) {
    gchar *blurb = g_strdup_printf ("%s score of the frame, computed by the "
        "qmetric element", feature);
    /* registered once per name and never freed: tags are process-global */
    gst_tag_register (g_intern_string (tag), GST_TAG_FLAG_META, G_TYPE_DOUBLE,
        g_intern_string (tag), g_intern_string (blurb), gst_tag_merge_use_first);
    g_free (blurb);
  }
}

static GstFlowReturn
push_pair (GstQmetric * self, QmPair * p)
{
  GstAggregator *agg = GST_AGGREGATOR (self);
  GstBuffer *buf = p->dist_buf;
  GstTagList *tags = NULL;
  GstEvent *segment;
  GstFlowReturn ret;
  guint i;

  p->dist_buf = NULL;
  if (p->has_scores) {
    gchar tag[256];

    buf = gst_buffer_make_writable (buf);
    tags = gst_tag_list_new_empty ();
    gst_tag_list_set_scope (tags, GST_TAG_SCOPE_STREAM);
    for (i = 0; i < self->n_features; i++) {
      if (!p->present[i])
        continue;
      ensure_tag (self->names[i], tag, sizeof (tag));
      gst_tag_list_add (tags, GST_TAG_MERGE_REPLACE, tag, p->values[i], NULL);
    }
    {
      /* the meta carries the present scores only */
      const gchar **names = g_newa (const gchar *, self->n_features);
      gdouble *values = g_newa (gdouble, self->n_features);
      guint n = 0;
      for (i = 0; i < self->n_features; i++) {
        if (p->present[i]) {
          names[n] = self->names[i];
          values[n++] = p->values[i];
        }
      }
      gst_buffer_add_qmetric_meta (buf, p->index, n, names, values);
    }
  }

  /* GstAggregator (1.22) sends stream-start/caps/segment with the first
   * buffer only; before that a tag event would be out of order, so the first
   * frame's tags follow its buffer and every later frame's precede it. */
  segment = gst_pad_get_sticky_event (agg->srcpad, GST_EVENT_SEGMENT, 0);
  if (segment && tags) {
    gst_pad_push_event (agg->srcpad, gst_event_new_tag (tags));
    tags = NULL;
  }
  gst_clear_event (&segment);
  ret = gst_aggregator_finish_buffer (agg, buf);
  if (tags)
    gst_pad_push_event (agg->srcpad, gst_event_new_tag (tags));
  return ret;
}

/* A log that cannot be written (disk full, say) is an error: a probe whose
 * record silently stops is worse than one that stops.  The log is closed
 * (what can still be written, is) and not touched again. */
static void
log_write_error (GstQmetric * self, const gchar * what)
{
  const int e = errno;          /* of the failed write, before anything */
  gchar *loc, *where;

  GST_OBJECT_LOCK (self);
  loc = g_strdup (self->log_location);
  GST_OBJECT_UNLOCK (self);
  where = valid_utf8 (loc);
  GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
      ("%s \"%s\": %s", what, where, g_strerror (e)),
      ("log-location=%s", where));
  g_free (where);
  g_free (loc);
  if (self->log) {
    qm_log_close (self->log, NULL, 0, 0);
    self->log = NULL;
  }
}

/* Take every finished result from the engine: pools, log, messages. */
static GstFlowReturn
collect (GstQmetric * self, gboolean wait)
{
  QmResult r;
  gboolean post;
  int err;

  /* results that come in while a flushing seek is under way belong to
   * frames the flush discards */
  if (!self->engine || g_atomic_int_get (&self->seek_flushing))
    return GST_FLOW_OK;
  GST_OBJECT_LOCK (self);
  post = self->post_messages;
  GST_OBJECT_UNLOCK (self);
  while ((err = qm_engine_receive (self->engine, &r, wait)) == 0) {
    QmPair *p = r.frame_user;
    guint i;

    p->done = TRUE;
    p->has_scores = r.computed;
    if (!r.computed)
      continue;
    p->values = g_memdup2 (r.value, self->n_features * sizeof (gdouble));
    p->present = g_memdup2 (r.present, self->n_features);
    for (i = 0; i < self->n_features; i++)
      if (r.present[i])
        qm_pool_add (&self->pools[i], r.value[i]);
    self->n_scored++;
    if (self->log && qm_log_frame (self->log, p->index, p->values,
            p->present) < 0) {
      log_write_error (self, "Could not write to the log file");
      return GST_FLOW_ERROR;
    }
    if (post)
      gst_element_post_message (GST_ELEMENT (self),
          gst_message_new_element (GST_OBJECT (self),
              scores_structure (self, "qmetric", p)));
  }
  if (err != QM_EAGAIN && err != QM_EOF) {
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
        ("Computing the metrics failed: %s",
            qm_engine_error (self->engine) ? qm_engine_error (self->engine) :
            qm_strerror (err)), (NULL));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

/* ---- reporting windows ---- */

/* qmwindow.c's callback: one window ended. */
static void
window_emit (void *opaque, QmWindowStats * st)
{
  GstQmetric *self = opaque;

  if (self->log) {
    QmLogWindow lw = { st->index, st->start_rt, st->end_rt, st->reason,
      st->pairs, st->unmatched_ref, st->unmatched_dist, st->unreadable,
      MIN (st->n_features, self->n_features), st->pools,
      QM_POOL_LIBVMAF | QM_POOL_P1 | QM_POOL_P5
    };
    if (qm_log_window (self->log, &lw) < 0)
      GST_ELEMENT_WARNING (self, RESOURCE, WRITE,
          ("Could not write to the log file"), (NULL));
  }
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self),
          gst_qmetric_window_structure (st, self->quarks,
              self->n_features)));
}

/* From start(): the window property, parsed. */
static gboolean
window_start (GstQmetric * self)
{
  QmWindowSpec spec;
  gchar *str, err[256];
  gboolean ok;

  g_clear_pointer (&self->win, qm_window_free);
  GST_OBJECT_LOCK (self);
  str = g_strdup (self->window);
  GST_OBJECT_UNLOCK (self);
  ok = qm_window_parse (str, &spec, err, sizeof (err)) == 0;
  if (!ok)
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS, ("%s", err), (NULL));
  else if (spec.kind != QM_WINDOW_OFF)
    self->win = qm_window_new (&spec, window_emit, self);
  g_free (str);
  return ok;
}

/* A pair leaving the element, in output order, into the current window. */
static void
window_add (GstQmetric * self, QmPair * p)
{
  GstClockTime rt = p->running_time;
  gboolean key;

  if (!self->win)
    return;
  key = p->dist_buf &&
      !GST_BUFFER_FLAG_IS_SET (p->dist_buf, GST_BUFFER_FLAG_DELTA_UNIT);
  if (!p->matched)
    qm_window_event (self->win, rt, QM_WINDOW_UNMATCHED_DIST, key, TRUE);
  else if (p->unreadable)
    qm_window_event (self->win, rt, QM_WINDOW_UNREADABLE, key, TRUE);
  else
    qm_window_pair (self->win, rt, p->duration, key, self->n_features,
        p->has_scores ? p->values : NULL, p->present);
}

/* Push the distorted frames whose scores are known, in order. */
static GstFlowReturn
push_ready (GstQmetric * self)
{
  GstFlowReturn ret = GST_FLOW_OK;

  while (ret == GST_FLOW_OK && !g_queue_is_empty (&self->out)) {
    QmPair *p = g_queue_peek_head (&self->out);
    if (!p->done)
      break;
    g_queue_pop_head (&self->out);
    window_add (self, p);
    ret = push_pair (self, p);
    qm_pair_free (p);
  }
  return ret;
}

static GstFlowReturn
drain (GstQmetric * self, gboolean wait)
{
  GstFlowReturn ret = collect (self, wait);

  return ret == GST_FLOW_OK ? push_ready (self) : ret;
}

/* Flush the engine so every submitted pair gets its scores and is pushed. */
static GstFlowReturn
drain_all (GstQmetric * self)
{
  GstFlowReturn ret;

  if (self->engine)
    qm_engine_flush (self->engine);
  ret = drain (self, TRUE);
  qm_engine_close (&self->engine);
  /* anything left (engine failure) is pushed without scores */
  while (!g_queue_is_empty (&self->out)) {
    QmPair *p = g_queue_pop_head (&self->out);
    if (ret == GST_FLOW_OK && p->dist_buf) {
      p->has_scores = FALSE;
      ret = push_pair (self, p);
    }
    qm_pair_free (p);
  }
  return ret;
}

static GstStructure *
summary_structure (GstQmetric * self)
{
  GstStructure *s;
  guint i, m, pool;

  GST_OBJECT_LOCK (self);
  pool = self->pool;
  GST_OBJECT_UNLOCK (self);

  s = gst_structure_new ("qmetric-summary",
      "frames", G_TYPE_UINT64, self->n_scored,
      "pairs", G_TYPE_UINT64, self->n_pairs,
      "unmatched", G_TYPE_UINT64, self->unmatched_ref + self->unmatched_dist,
      "unmatched-reference", G_TYPE_UINT64, self->unmatched_ref,
      "unmatched-distorted", G_TYPE_UINT64, self->unmatched_dist,
      "unreadable", G_TYPE_UINT64, self->unreadable,
      "cuda-in-place", G_TYPE_UINT64, self->cuda_in_place,
      "cuda-copied", G_TYPE_UINT64, self->cuda_copied,

      "out-of-range", G_TYPE_UINT64, self->out_of_range,
      "segment", G_TYPE_UINT, self->segment,
      "flushes", G_TYPE_UINT, self->flushes,
      "first-stream-time", G_TYPE_UINT64, self->first_stream_time,
      "last-stream-time", G_TYPE_UINT64, self->last_stream_time, NULL);
  if (self->identity)
    gst_structure_set (s, "identity", G_TYPE_STRING, self->identity, NULL);
  for (i = 0; i < self->n_features; i++) {
    GstStructure *f;
    if (!self->pools[i].n)
      continue;
    f = gst_structure_new_empty ("pooled");
    for (m = 1; m <= QM_POOL_P5; m <<= 1) {
      if (pool & m) {
        gchar *field = g_strdelimit (g_strdup (qm_pool_method_name (m)), "_",
            '-');
        gst_structure_set (f, field, G_TYPE_DOUBLE,
            qm_pool_value (&self->pools[i], m), NULL);
        g_free (field);
      }
    }
    gst_structure_id_set (s, self->quarks[i], GST_TYPE_STRUCTURE, f, NULL);
    gst_structure_free (f);
  }
  return s;
}

/* End of the comparison: scores out, log complete, summary posted. */
static GstFlowReturn
finish (GstQmetric * self)
{
  GstFlowReturn ret;
  guint pool;
  double secs;

  if (self->finished)
    return GST_FLOW_OK;
  self->finished = TRUE;
  ret = drain_all (self);
  qm_window_finish (self->win, "eos");

  GST_OBJECT_LOCK (self);
  pool = self->pool;
  GST_OBJECT_UNLOCK (self);
  secs = (g_get_monotonic_time () - self->t_start) / 1e6;
  if (self->log) {
    int err = qm_log_close (self->log, self->pools, pool,
        secs > 0 ? self->n_scored / secs : 0);
    self->log = NULL;
    if (err < 0) {
      log_write_error (self, "Could not complete the log file");
      if (ret == GST_FLOW_OK)
        ret = GST_FLOW_ERROR;
    }
  }
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self), summary_structure (self)));
  GST_INFO_OBJECT (self, "compared %" G_GUINT64_FORMAT " pairs, %"
      G_GUINT64_FORMAT " reference and %" G_GUINT64_FORMAT
      " distorted frames unmatched", self->n_pairs, self->unmatched_ref,
      self->unmatched_dist);
  return ret;
}

/* ---- pairing ---- */

static GstClockTime
buffer_running_time (GstAggregatorPad * pad, GstBuffer * buf)
{
  GstClockTime ts = GST_BUFFER_PTS (buf);

  if (!GST_CLOCK_TIME_IS_VALID (ts))
    ts = GST_BUFFER_DTS (buf);
  if (!GST_CLOCK_TIME_IS_VALID (ts) || pad->segment.format != GST_FORMAT_TIME)
    return GST_CLOCK_TIME_NONE;
  return gst_segment_to_running_time (&pad->segment, GST_FORMAT_TIME, ts);
}

static const gchar *const pad_names[2] = { "ref_sink", "dist_sink" };

static GstAggregatorPad *
pad_of (GstQmetric * self, guint i)
{
  return i == QM_PAIR_REF ? self->ref_pad : self->dist_pad;
}

static gint64
to_pair_time (GstClockTime t)
{
  return GST_CLOCK_TIME_IS_VALID (t) && t <= G_MAXINT64 ? (gint64) t :
      QM_PAIR_NO_TIME;
}

static GstClockTime
from_pair_time (gint64 t)
{
  return t >= 0 ? (GstClockTime) t : GST_CLOCK_TIME_NONE;
}

/* Live: frames whose running time is at or before the returned one have
 * waited the whole latency for a partner.  Not live: nothing expires. */
static gint64
live_deadline (GstQmetric * self)
{
  GstAggregator *agg = GST_AGGREGATOR (self);
  GstClockTime latency = gst_aggregator_get_latency (agg), now, base;
  GstClock *clock;

  if (!GST_CLOCK_TIME_IS_VALID (latency))
    return QM_PAIR_NO_DEADLINE;
  clock = gst_element_get_clock (GST_ELEMENT (self));
  if (!clock)
    return QM_PAIR_NO_DEADLINE;
  now = gst_clock_get_time (clock);
  base = gst_element_get_base_time (GST_ELEMENT (self));
  gst_object_unref (clock);
  if (now < base + latency)
    return -1;                  /* nothing has waited that long yet */
  return to_pair_time (now - base - latency);
}

/* ---- partner-timeout watchdog (not live) ---- */

static GstPadProbeReturn
data_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  GstQmetric *self = user;

  g_mutex_lock (&self->wd_lock);
  self->last_data_us[GST_AGGREGATOR_PAD (pad) == self->dist_pad] =
      g_get_monotonic_time ();
  g_mutex_unlock (&self->wd_lock);
  return GST_PAD_PROBE_OK;
}

/* Pad i has nothing: no buffer queued here or in the aggregator, no EOS. */
static gboolean
pad_starved (GstQmetric * self, guint i)
{
  GstAggregatorPad *pad = pad_of (self, i);

  return !gst_aggregator_pad_is_eos (pad) &&
      !gst_aggregator_pad_has_buffer (pad) &&
      g_atomic_int_get (&self->pq[i].n_shared) == 0;
}

/* Pad i holds frames waiting for a partner, or has ended. */
static gboolean
pad_waiting (GstQmetric * self, guint i)
{
  GstAggregatorPad *pad = pad_of (self, i);

  return gst_aggregator_pad_is_eos (pad) ||
      gst_aggregator_pad_has_buffer (pad) ||
      g_atomic_int_get (&self->pq[i].n_shared) > 0;
}

/* A non-live GstAggregator waits for data on every pad without a timeout:
 * a pad whose upstream never sends anything would hold the pipeline
 * forever.  This thread notices a pad silent for partner-timeout while the
 * other waits, and ends the silent pad with an EOS of our own, so that
 * aggregate() counts the waiting frames as unmatched and finishes. */
static gpointer
watchdog_loop (gpointer data)
{
  GstQmetric *self = data;
  gint64 timeout_us;

  GST_OBJECT_LOCK (self);
  timeout_us = MIN (self->partner_timeout / GST_USECOND, G_MAXINT64 / 4);
  GST_OBJECT_UNLOCK (self);

  g_mutex_lock (&self->wd_lock);
  while (self->wd_running) {
    gint64 now = g_get_monotonic_time (), wake = now + timeout_us;
    gint silent_pad = -1;
    guint i;

    for (i = 0; i < 2; i++) {
      gint64 due = self->last_data_us[i] + timeout_us;
      if (due > now) {
        wake = MIN (wake, due);
        continue;
      }
      if (pad_starved (self, i) && pad_waiting (self, !i) &&
          !GST_CLOCK_TIME_IS_VALID (gst_aggregator_get_latency
              (GST_AGGREGATOR (self)))) {
        silent_pad = i;
        break;
      }
    }
    if (silent_pad >= 0) {
      gdouble secs = (now - self->last_data_us[silent_pad]) / 1e6;
      /* once per pad: its EOS stands until the next start or flush */
      self->last_data_us[silent_pad] = G_MAXINT64 / 2;
      g_mutex_unlock (&self->wd_lock);
      GST_ELEMENT_WARNING (self, STREAM, FAILED,
          ("No data on %s for %.1f s while %s waits for it "
              "(partner-timeout): %s is treated as ended and the waiting "
              "frames are counted as unmatched", pad_names[silent_pad], secs,
              pad_names[!silent_pad], pad_names[silent_pad]), (NULL));
      gst_pad_send_event (GST_PAD (pad_of (self, silent_pad)),
          gst_event_new_eos ());
      g_mutex_lock (&self->wd_lock);
      continue;
    }
    g_cond_wait_until (&self->wd_cond, &self->wd_lock, wake);
  }
  g_mutex_unlock (&self->wd_lock);
  return NULL;
}

/* ---- the frames held for pairing ---- */

static void
queue_clear (QmPadQueue * q)
{
  guint i;

  for (i = 0; i < q->n; i++)
    gst_buffer_unref (q->buf[i]);
  q->n = 0;
  g_atomic_int_set (&q->n_shared, 0);
  q->prev_t = GST_CLOCK_TIME_NONE;
  q->last_dur = -1;
}

/* Remove the head of pad i's queue; the caller owns the buffer. */
static GstBuffer *
queue_pop (GstQmetric * self, guint i)
{
  QmPadQueue *q = &self->pq[i];
  GstBuffer *buf = q->buf[0];

  q->n--;
  memmove (q->buf, q->buf + 1, q->n * sizeof (q->buf[0]));
  memmove (q->f, q->f + 1, q->n * sizeof (q->f[0]));
  memmove (q->info, q->info + 1, q->n * sizeof (q->info[0]));
  g_atomic_int_set (&q->n_shared, q->n);
  return buf;
}

static void
pairing_reset (GstQmetric * self)
{
  guint i;

  for (i = 0; i < 2; i++)
    queue_clear (&self->pq[i]);
  qm_pair_reset (&self->pair_state);
  g_mutex_lock (&self->wd_lock);
  self->last_data_us[0] = self->last_data_us[1] = g_get_monotonic_time ();
  g_mutex_unlock (&self->wd_lock);
}

static void
pairing_start (GstQmetric * self)
{
  GstClockTime timeout;

  pairing_reset (self);
  self->modes_warned = 0;
  self->rates_checked = FALSE;
  self->late = 0;
  self->agg_latency = GST_CLOCK_TIME_NONE;
  GST_OBJECT_LOCK (self);
  timeout = self->partner_timeout;
  GST_OBJECT_UNLOCK (self);
  if (timeout > 0) {
    self->wd_running = TRUE;
    self->watchdog = g_thread_new ("qmetric-watchdog", watchdog_loop, self);
  }
}

static void
pairing_stop (GstQmetric * self)
{
  if (self->watchdog) {
    g_mutex_lock (&self->wd_lock);
    self->wd_running = FALSE;
    g_cond_signal (&self->wd_cond);
    g_mutex_unlock (&self->wd_lock);
    g_thread_join (self->watchdog);
    self->watchdog = NULL;
  }
  pairing_reset (self);
}

/* The duration of a frame: its own, else the caps' frame rate, else the
 * distance from the previous frame of its pad. */
static gint64
frame_duration (GstQmetric * self, guint i, GstBuffer * buf, gint64 t)
{
  const GstVideoInfo *info = i == QM_PAIR_REF ? &self->ref_info :
      &self->dist_info;
  GstClockTime prev = self->pq[i].prev_t;

  if (GST_BUFFER_DURATION_IS_VALID (buf))
    return to_pair_time (GST_BUFFER_DURATION (buf));
  if (GST_VIDEO_INFO_FPS_N (info) > 0 && GST_VIDEO_INFO_FPS_D (info) > 0)
    return to_pair_time (gst_util_uint64_scale_int (GST_SECOND,
            GST_VIDEO_INFO_FPS_D (info), GST_VIDEO_INFO_FPS_N (info)));
  if (t >= 0 && GST_CLOCK_TIME_IS_VALID (prev) && (GstClockTime) t > prev)
    return t - (gint64) prev;
  return QM_PAIR_NO_TIME;
}

/* A warning that repeats: the first UNMATCHED_WARN_FIRST, then every
 * UNMATCHED_WARN_EVERYth. */
static gboolean
warn_now (guint64 n)
{
  return n <= UNMATCHED_WARN_FIRST || n % UNMATCHED_WARN_EVERY == 0;
}

/* Take the head buffer of sink pad i into our queue.  FALSE: nothing to
 * take (or no room); *error: data came before caps (an error is posted). */
static gboolean
pull_frame (GstQmetric * self, guint i, gint64 deadline, gboolean * error)
{
  GstAggregatorPad *pad = pad_of (self, i);
  QmPadQueue *q = &self->pq[i];
  gboolean have_info = i == QM_PAIR_REF ? self->have_ref_info :
      self->have_dist_info;
  QmPairFrame *f = &q->f[q->n];
  GstBuffer *buf;

  if (q->n >= PAIR_QUEUE_MAX || !gst_aggregator_pad_has_buffer (pad))
    return FALSE;
  /* the pad's upstream may have been blocked on the full pad: its silence
   * counts from now, not from its last buffer (partner-timeout); set before
   * the pop so that the watchdog never sees the pad empty and silent */
  g_mutex_lock (&self->wd_lock);
  self->last_data_us[i] = g_get_monotonic_time ();
  g_mutex_unlock (&self->wd_lock);
  /* only this thread takes buffers: has_buffer stays true until the pop */
  if (!(buf = gst_aggregator_pad_pop_buffer (pad)))
    return FALSE;
  if (!have_info) {
    gst_buffer_unref (buf);
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Data arrived before caps on %s", pad_names[i]), (NULL));
    *error = TRUE;
    return FALSE;
  }
  f->t = to_pair_time (buffer_running_time (pad, buf));
  f->dur = frame_duration (self, i, buf, f->t);
  f->offset = GST_BUFFER_OFFSET_IS_VALID (buf) ? GST_BUFFER_OFFSET (buf) :
      QM_PAIR_NO_OFFSET;
  f->discont = GST_BUFFER_IS_DISCONT (buf);
  if (f->t >= 0) {
    q->prev_t = f->t;
    q->last_dur = f->dur;
  }
  GST_LOG_OBJECT (self, "took %s frame %" G_GINT64_FORMAT ", deadline %"
      G_GINT64_FORMAT, pad_names[i], f->t, deadline);
  q->info[q->n] = i == QM_PAIR_REF ? self->ref_info : self->dist_info;
  q->buf[q->n++] = buf;
  g_atomic_int_set (&q->n_shared, q->n);

  if (f->t >= 0 && deadline != QM_PAIR_NO_DEADLINE && f->t <= deadline) {
    /* it came after the time its partner was allowed to wait */
    self->late++;
    if (warn_now (self->late))
      GST_ELEMENT_WARNING (self, STREAM, FAILED,
          ("%s frame at running time %" GST_TIME_FORMAT " arrived %"
              GST_TIME_FORMAT " after its partner stopped waiting; raise "
              "the latency property to pair frames this late (%"
              G_GUINT64_FORMAT " late frames so far)",
              i == QM_PAIR_REF ? "Reference" : "Distorted",
              GST_TIME_ARGS (f->t), GST_TIME_ARGS (deadline - f->t),
              self->late), (NULL));
  }
  return TRUE;
}

/* Reported once, when both caps are known: different rates are paired
 * frame by frame, and the frames between pairs are unmatched. */
static void
check_rates (GstQmetric * self)
{
  const GstVideoInfo *r = &self->ref_info, *d = &self->dist_info;

  if (self->rates_checked || !self->have_ref_info || !self->have_dist_info)
    return;
  self->rates_checked = TRUE;
  if (GST_VIDEO_INFO_FPS_N (r) > 0 && GST_VIDEO_INFO_FPS_N (d) > 0 &&
      gst_util_fraction_compare (GST_VIDEO_INFO_FPS_N (r),
          GST_VIDEO_INFO_FPS_D (r), GST_VIDEO_INFO_FPS_N (d),
          GST_VIDEO_INFO_FPS_D (d)) != 0)
    GST_ELEMENT_WARNING (self, STREAM, FORMAT,
        ("Frame rates differ: reference %d/%d fps, distorted %d/%d fps; each "
            "frame is compared with the nearest frame of the other stream in "
            "running time, and frames without one are counted as unmatched",
            GST_VIDEO_INFO_FPS_N (r), GST_VIDEO_INFO_FPS_D (r),
            GST_VIDEO_INFO_FPS_N (d), GST_VIDEO_INFO_FPS_D (d)), (NULL));
}

/* Without timestamps, say once per mode how frames are paired. */
static void
warn_mode (GstQmetric * self, const QmPairDecision * d)
{
  if (d->mode == QM_PAIR_BY_TIME || (self->modes_warned & (1u << d->mode)))
    return;
  self->modes_warned |= 1u << d->mode;
  if (d->mode == QM_PAIR_MIXED)
    GST_ELEMENT_WARNING (self, STREAM, FAILED,
        ("%s frames have no timestamps while %s frames have them: such "
            "frames are never paired and are counted as unmatched",
            d->action == QM_PAIR_DROP_REF ? "Reference" : "Distorted",
            d->action == QM_PAIR_DROP_REF ? "distorted" : "reference"),
        (NULL));
  else
    GST_ELEMENT_WARNING (self, STREAM, FAILED,
        ("Frames without timestamps: pairing them %s",
            qm_pair_mode_text (d->mode)), (NULL));
}

static void
warn_unmatched (GstQmetric * self, gboolean is_ref, GstClockTime rt,
    QmPairReason why)
{
  guint64 n = is_ref ? self->unmatched_ref : self->unmatched_dist;
  GstStructure *details;

  if (!warn_now (n))
    return;
  details = gst_structure_new ("qmetric-unmatched", "pad", G_TYPE_STRING,
      is_ref ? "ref_sink" : "dist_sink", "running-time", G_TYPE_UINT64, rt,
      "count", G_TYPE_UINT64, n, "reason", G_TYPE_STRING,
      qm_pair_reason_text (why), NULL);
  GST_ELEMENT_WARNING_WITH_DETAILS (self, STREAM, FAILED,
      ("%s frame at running time %" GST_TIME_FORMAT " has no %s frame (%s): "
          "it is not compared (%" G_GUINT64_FORMAT " such frames so far)",
          is_ref ? "Reference" : "Distorted", GST_TIME_ARGS (rt),
          is_ref ? "distorted" : "reference", qm_pair_reason_text (why), n),
      (NULL), ("details", GST_TYPE_STRUCTURE, details, NULL));
  /* the message holds a copy */
  gst_structure_free (details);
}

/* A reference frame with no partner is dropped. */
static void
drop_ref (GstQmetric * self, GstClockTime rt, QmPairReason why)
{
  gst_buffer_unref (queue_pop (self, QM_PAIR_REF));
  /* in order when no earlier pair is still being scored */
  qm_window_event (self->win, rt, QM_WINDOW_UNMATCHED_REF, FALSE,
      g_queue_is_empty (&self->out));
  self->unmatched_ref++;
  warn_unmatched (self, TRUE, rt, why);
}

/* A distorted frame with no partner still goes downstream, unscored. */
static void
pass_dist (GstQmetric * self, GstClockTime rt, QmPairReason why)
{
  QmPair *p = g_new0 (QmPair, 1);

  p->dist_buf = queue_pop (self, QM_PAIR_DIST);
  p->running_time = rt;
  p->done = TRUE;
  g_queue_push_tail (&self->out, p);
  self->unmatched_dist++;
  warn_unmatched (self, FALSE, rt, why);
}

/* Live: scores that the engine can finish now (more frames in it than its
 * look-ahead, e.g. VMAF's motion needs the next frame) are taken when
 * aggregate() runs, and without new input it runs only when a queued frame
 * times out.  So that a score leaves as soon as it is ready, not when the
 * next frame arrives, aggregate() is called every QM_RESULT_POLL while such
 * work is in the engine: the running time returned here is that much
 * later than now, less the latency the aggregator adds.  The latency is
 * the one aggregate() last read: GstAggregator calls get_next_time() with
 * the lock gst_aggregator_get_latency() takes. */
#define QM_RESULT_POLL (GST_MSECOND / 2)

static GstClockTime
result_poll_time (GstQmetric * self)
{
  GstClock *clock;
  GstClockTime now, base, t;
  guint pending = 0;
  GList *l;

  if (!self->engine || !GST_CLOCK_TIME_IS_VALID (self->agg_latency))
    return GST_CLOCK_TIME_NONE;
  for (l = self->out.head; l; l = l->next)
    pending += !((QmPair *) l->data)->done;
  if (pending <= qm_engine_delay (self->engine))
    return GST_CLOCK_TIME_NONE;
  if (!(clock = gst_element_get_clock (GST_ELEMENT (self))))
    return GST_CLOCK_TIME_NONE;
  now = gst_clock_get_time (clock);
  gst_object_unref (clock);
  base = gst_element_get_base_time (GST_ELEMENT (self));
  t = now + QM_RESULT_POLL;
  if (t < base + self->agg_latency)
    return 0;
  return t - base - self->agg_latency;
}

/* Live mode: GstAggregator calls aggregate(timeout=TRUE) once the clock
 * passes this running time plus the latency.  What can time out is the
 * oldest frame waiting for a partner, in our queues or the aggregator's:
 * when it is older than the latency its partner is not coming.  (The
 * default, the src segment's position, is never advanced by this element:
 * frames leave after scoring, out of step with the pads, so every frame
 * would have timed out.)  Nothing queued: nothing to wait for, unless a pad
 * has ended. */
static GstClockTime
gst_qmetric_get_next_time (GstAggregator * agg)
{
  GstQmetric *self = GST_QMETRIC (agg);
  GstClockTime next = GST_CLOCK_TIME_NONE;
  guint i, k;

  next = result_poll_time (self);
  for (i = 0; i < 2; i++) {
    GstAggregatorPad *pad = pad_of (self, i);
    GstBuffer *buf = gst_aggregator_pad_peek_buffer (pad);
    GstClockTime rt = GST_CLOCK_TIME_NONE;

    /* a pad at EOS ends the comparison once the other pad can bring no
     * more partners (live_may_end): time out at once when that is so
     * (a live partner may never send EOS), else when the clock passes the
     * last time a partner could have (plus the latency) */
    if (!buf && gst_aggregator_pad_is_eos (pad)) {
      gint64 end;

      /* (no live_deadline() here: GstAggregator calls us holding the lock
       * that gst_aggregator_get_latency() takes; a time in the past makes
       * it time out at once, and aggregate() compares with the clock) */
      if (self->pq[i].n > 0 || live_may_end (self, QM_PAIR_NO_DEADLINE) ||
          (end = live_end_time (self, i)) < 0)
        return 0;
      if (!GST_CLOCK_TIME_IS_VALID (next) || (GstClockTime) end < next)
        next = (GstClockTime) end;
      continue;
    }
    if (buf) {
      rt = buffer_running_time (pad, buf);
      gst_buffer_unref (buf);
    }
    for (k = 0; k < self->pq[i].n; k++) {
      GstClockTime t = from_pair_time (self->pq[i].f[k].t);
      if (GST_CLOCK_TIME_IS_VALID (t) && (!GST_CLOCK_TIME_IS_VALID (rt)
              || t < rt))
        rt = t;
    }
    if (GST_CLOCK_TIME_IS_VALID (rt) && (!GST_CLOCK_TIME_IS_VALID (next)
            || rt < next))
      next = rt;
  }
  return next;
}

/* Whether a buffer is read in place by the CUDA backend (gpu: every metric
 * runs there); counts the buffers of CUDA memory read in place and those
 * copied (mapped for the CPU: a download). */
static gboolean
cuda_access (GstQmetric * self, GstBuffer * buf, gboolean gpu)
{
  GstQmetricCudaAccess a = gst_qmetric_cuda_buffer_access (buf,
      self->cuda_ctx);

  if (a == GST_QMETRIC_CUDA_IN_PLACE && gpu) {
    self->cuda_in_place++;
    return TRUE;
  }
  if (a != GST_QMETRIC_CUDA_HOST)
    self->cuda_copied++;
  if (a == GST_QMETRIC_CUDA_FOREIGN) {
    if (!self->foreign_ctx_warned) {
      self->foreign_ctx_warned = TRUE;
      GST_ELEMENT_WARNING (self, STREAM, FAILED,
          ("CUDA memory from another CUDA context, which this element's "
              "context cannot access: frames are copied through system "
              "memory (slower; share one context, e.g. the same "
              "cuda-device-id upstream)"), (NULL));
    }
  }
  return FALSE;
}

/* The pair is not compared (a buffer unreadable or out of range): its
 * distorted frame still goes downstream, unscored, in order. */
static void
skip_pair (GstQmetric * self, QmPair * p, GstBuffer * rbuf,
    GstQmetricMapResult why, const gchar * side, const gchar * problem)
{
  guint64 n;

  if (why == GST_QMETRIC_MAP_OUT_OF_RANGE) {
    n = ++self->out_of_range;
    if (n <= UNMATCHED_WARN_FIRST || n % UNMATCHED_WARN_EVERY == 0)
      GST_ELEMENT_WARNING (self, STREAM, FORMAT,
          ("%s frame at running time %" GST_TIME_FORMAT " has samples beyond "
              "its bit depth: %s; it is not compared (%" G_GUINT64_FORMAT
              " such pairs so far)", side, GST_TIME_ARGS (p->running_time),
              problem, n), (NULL));
  } else {
    n = ++self->unreadable;
    if (n <= UNMATCHED_WARN_FIRST || n % UNMATCHED_WARN_EVERY == 0)
      GST_ELEMENT_WARNING (self, STREAM, FORMAT,
          ("%s frame at running time %" GST_TIME_FORMAT " is unreadable: %s; "
              "it is not compared (%" G_GUINT64_FORMAT " such pairs so far)",
              side, GST_TIME_ARGS (p->running_time), problem, n), (NULL));
  }
  gst_qmetric_side_unmap (&p->ref);
  gst_qmetric_side_unmap (&p->dist);
  p->unreadable = TRUE;         /* counted as unreadable in its window */
  p->done = TRUE;
  g_queue_push_tail (&self->out, p);
  gst_buffer_unref (rbuf);
}

/* Both pads' caps must describe the same picture when a pair is compared.
 * (At a renegotiation one pad may be ahead of the other for a while; its
 * frames then pair with nothing in time, so a mismatch here is real.) */
static gboolean
formats_agree (GstQmetric * self)
{
  const GstVideoInfo *r = &self->pair_ref_info, *d = &self->pair_dist_info;

  if (GST_VIDEO_INFO_WIDTH (r) == GST_VIDEO_INFO_WIDTH (d) &&
      GST_VIDEO_INFO_HEIGHT (r) == GST_VIDEO_INFO_HEIGHT (d) &&
      GST_VIDEO_INFO_FORMAT (r) == GST_VIDEO_INFO_FORMAT (d))
    return TRUE;
  GST_ELEMENT_ERROR (self, STREAM, FORMAT,
      ("Reference and distorted video differ: reference is %dx%d %s, "
          "distorted is %dx%d %s; both must have the same size and format "
          "(scale/convert the distorted stream first)",
          GST_VIDEO_INFO_WIDTH (r), GST_VIDEO_INFO_HEIGHT (r),
          gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (r)),
          GST_VIDEO_INFO_WIDTH (d), GST_VIDEO_INFO_HEIGHT (d),
          gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (d))), (NULL));
  return FALSE;
}

static gboolean geometry_changed (const GstVideoInfo * a,
    const GstVideoInfo * b);

static GstFlowReturn
compare_pair (GstQmetric * self, GstBuffer * rbuf, GstBuffer * dbuf,
    GstClockTime rt)
{
  QmPair *p;
  GstSegment *seg = &self->dist_pad->segment;
  GstQmetricMapResult mr;
  gboolean gpu;
  int err;

  /* a size or format change reaches the engine with the first pair in the
   * new caps (earlier pairs, queued before the caps event, keep theirs):
   * the pairs so far are scored, in order, and a new engine opens */
  if (self->engine && geometry_changed (&self->pair_dist_info,
          &self->engine_info)) {
    drain_all (self);
    self->reconfigured = TRUE;
  }
  /* both buffers are ours from here on: every exit path releases them */
  if (!formats_agree (self) || (!self->engine && !open_engine (self, rt))) {
    gst_buffer_unref (rbuf);
    gst_buffer_unref (dbuf);
    return GST_FLOW_ERROR;
  }
  self->engine_info = self->pair_dist_info;
  p = g_new0 (QmPair, 1);
  p->dist_buf = dbuf;
  p->pts = GST_BUFFER_PTS (dbuf);
  p->duration = GST_BUFFER_DURATION (dbuf);
  p->running_time = rt;
  p->stream_time = seg->format == GST_FORMAT_TIME ?
      gst_segment_to_stream_time (seg, GST_FORMAT_TIME, p->pts) :
      GST_CLOCK_TIME_NONE;
  p->matched = TRUE;

  /* CUDA memory is read in place only when every metric runs on the GPU
   * (mapping it for the CPU downloads it, and then the GPU metrics upload
   * it again) and the memory belongs to a context ours can reach */
  gpu = qm_engine_backend (self->engine) == QM_BACKEND_CUDA &&
      !qm_engine_reads_host (self->engine);
  mr = gst_qmetric_side_map (&p->ref, &self->pair_ref_info, rbuf, 
      cuda_access (self, rbuf, gpu));
  if (mr != GST_QMETRIC_MAP_OK) {
    skip_pair (self, p, rbuf, mr, "Reference", p->ref.problem);
    return GST_FLOW_OK;
  }
  mr = gst_qmetric_side_map (&p->dist, &self->pair_dist_info, dbuf, 
      cuda_access (self, dbuf, gpu));
  if (mr != GST_QMETRIC_MAP_OK) {
    skip_pair (self, p, rbuf, mr, "Distorted", p->dist.problem);
    return GST_FLOW_OK;
  }
  gst_buffer_unref (rbuf);       /* the mapped frame holds its own ref */
  pair_colors (self, &p->ref.pic.color, &p->dist.pic.color);
  if (!GST_CLOCK_TIME_IS_VALID (self->first_stream_time))
    self->first_stream_time = p->stream_time;
  self->last_stream_time = p->stream_time;
  p->index = self->n_pairs++;
  g_queue_push_tail (&self->out, p);

  err = qm_engine_submit (self->engine, &p->ref.pic, &p->dist.pic, p);
  if (err == QM_EAGAIN) {
    /* results are taken after every submit; this only happens if the
     * engine's ring is full of look-ahead: take them and try again */
    GstFlowReturn ret = drain (self, TRUE);
    /* a push that failed (flushing: a seek is under way) ends this call,
     * as it ends aggregate(); the pair goes with the flush, unscored.
     * Carrying on here once made the element score every frame queued
     * before the seek reached upstream (the CUDA backend, whose ring fills
     * with frames waiting for results, took this path on every seek) */
    if (ret != GST_FLOW_OK || g_atomic_int_get (&self->seek_flushing)) {
      p->done = TRUE;
      return ret;
    }
    err = qm_engine_submit (self->engine, &p->ref.pic, &p->dist.pic, p);
  }
  if (err) {
    GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
        ("Computing the metrics failed: %s",
            qm_engine_error (self->engine) ? qm_engine_error (self->engine) :
            qm_strerror (err)), (NULL));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}


/* Decide about the queued heads, taking frames off the aggregator pads only
 * as the decision needs them: a pad's head left in GstAggregatorPad keeps
 * the pad "ready", so that a non-live aggregator calls us again when the
 * other pad's data or EOS comes.  Stops when the needed frame is not there.
 * done_all: both pads are over (end of the comparison). */
static GstFlowReturn
pair_queued (GstQmetric * self, gint64 deadline, gboolean done_all)
{
  GstFlowReturn ret = GST_FLOW_OK;
  gint64 tol;

  GST_OBJECT_LOCK (self);
  tol = GST_CLOCK_TIME_IS_VALID (self->pairing_tolerance) ?
      (gint64) MIN (self->pairing_tolerance, G_MAXINT64) : -1;
  GST_OBJECT_UNLOCK (self);

  while (ret == GST_FLOW_OK && !g_atomic_int_get (&self->seek_flushing)) {
    QmPairInput in;
    QmPairDecision d;
    gboolean error = FALSE, pulled;
    guint i;

    for (i = 0; i < 2; i++) {
      GstAggregatorPad *pad = pad_of (self, i);
      in.f[i] = self->pq[i].f;
      in.n[i] = self->pq[i].n;
      /* nothing more will be looked at: ended, or our queue is full */
      in.done[i] = done_all || self->pq[i].n >= PAIR_QUEUE_MAX ||
          (gst_aggregator_pad_is_eos (pad) &&
          !gst_aggregator_pad_has_buffer (pad));
      in.more[i] = !in.done[i] && gst_aggregator_pad_has_buffer (pad);
    }
    in.deadline = deadline;
    in.tolerance = tol;
    d = qm_pair_decide (&self->pair_state, &in);
    if (d.action == QM_PAIR_WAIT) {
      if (done_all || (self->pq[0].n == 0 && self->pq[1].n == 0))
        pulled = pull_frame (self, QM_PAIR_REF, deadline, &error) ||
            (!error && pull_frame (self, QM_PAIR_DIST, deadline, &error));
      else
        pulled = pull_frame (self, d.need, deadline, &error);
      if (error)
        return GST_FLOW_NOT_NEGOTIATED;
      if (!pulled)
        break;
      continue;
    }
    GST_LOG_OBJECT (self, "decision %d (reason %d) on heads ref %" G_GINT64_FORMAT
        " dist %" G_GINT64_FORMAT " (queued %" G_GSIZE_FORMAT "/%" G_GSIZE_FORMAT
        ", more %d/%d), deadline %"
        G_GINT64_FORMAT, d.action, d.reason, in.n[0] ? in.f[0][0].t : -1,
        in.n[1] ? in.f[1][0].t : -1, in.n[0], in.n[1], in.more[0], in.more[1],
        deadline);
    warn_mode (self, &d);
    qm_pair_apply (&self->pair_state, &in, &d);
    switch (d.action) {
      case QM_PAIR_MATCH:{
        GstClockTime rt = from_pair_time (self->pq[QM_PAIR_DIST].f[0].t);
        GstBuffer *rbuf;
        self->pair_ref_info = self->pq[QM_PAIR_REF].info[0];
        self->pair_dist_info = self->pq[QM_PAIR_DIST].info[0];
        rbuf = queue_pop (self, QM_PAIR_REF);
        ret = compare_pair (self, rbuf, queue_pop (self, QM_PAIR_DIST), rt);
        break;
      }
      case QM_PAIR_DROP_REF:
        drop_ref (self, from_pair_time (self->pq[QM_PAIR_REF].f[0].t),
            d.reason);
        break;
      default:
        pass_dist (self, from_pair_time (self->pq[QM_PAIR_DIST].f[0].t),
            d.reason);
        break;
    }
  }
  return ret;
}

/* Pad i has ended and everything it sent is decided. */
static gboolean
pad_over (GstQmetric * self, guint i)
{
  GstAggregatorPad *pad = pad_of (self, i);

  return gst_aggregator_pad_is_eos (pad) &&
      !gst_aggregator_pad_has_buffer (pad) && self->pq[i].n == 0;
}

/* Live: the latest running time at which a frame of the other pad could
 * still pair with the last frame of pad i (its start plus its duration or
 * the explicit tolerance, whichever is longer), or -1 when pad i had no
 * timed frame. */
static gint64
live_end_time (GstQmetric * self, guint i)
{
  const QmPadQueue *q = &self->pq[i];
  gint64 span = q->last_dur > 0 ? q->last_dur : 0;

  if (!GST_CLOCK_TIME_IS_VALID (q->prev_t))
    return -1;
  GST_OBJECT_LOCK (self);
  if (GST_CLOCK_TIME_IS_VALID (self->pairing_tolerance)
      && self->pairing_tolerance < G_MAXINT64
      && (gint64) self->pairing_tolerance > span)
    span = (gint64) self->pairing_tolerance;
  GST_OBJECT_UNLOCK (self);
  return (gint64) q->prev_t + span;
}

/* Live, once one pad has ended: whether the other pad can still bring a
 * partner for the ended pad's frames.  It cannot when it has ended too,
 * when it has already sent a frame later than live_end_time(), or when
 * the deadline (the clock less the latency) has passed that time: its
 * partners would be late.  Ending at the first EOS without this wait
 * counted the other pad's last frames, still upstream within the latency,
 * as unmatched although their partners had been scored on time. */
static gboolean
live_may_end (GstQmetric * self, gint64 deadline)
{
  gboolean over_r = pad_over (self, QM_PAIR_REF);
  gboolean over_d = pad_over (self, QM_PAIR_DIST);
  guint ended, other;
  gint64 end;
  GstBuffer *head;

  if (over_r == over_d)
    return over_r;
  ended = over_r ? QM_PAIR_REF : QM_PAIR_DIST;
  other = 1 - ended;
  end = live_end_time (self, ended);
  if (end < 0 || (deadline != QM_PAIR_NO_DEADLINE && deadline >= end))
    return TRUE;
  if (GST_CLOCK_TIME_IS_VALID (self->pq[other].prev_t) &&
      (gint64) self->pq[other].prev_t > end)
    return TRUE;
  if ((head = gst_aggregator_pad_peek_buffer (pad_of (self, other)))) {
    gint64 t = to_pair_time (buffer_running_time (pad_of (self, other), head));
    gst_buffer_unref (head);
    if (t > end)
      return TRUE;
  }
  return FALSE;
}

static GstFlowReturn
gst_qmetric_aggregate (GstAggregator * agg, gboolean timeout)
{
  GstQmetric *self = GST_QMETRIC (agg);
  GstFlowReturn ret;
  gint64 deadline;
  GstClockTime latency = gst_aggregator_get_latency (agg);
  gboolean live = GST_CLOCK_TIME_IS_VALID (latency);

  if (self->finished)
    return GST_FLOW_EOS;
  if (g_atomic_int_get (&self->seek_flushing)) {
    /* GstAggregator's finish_buffer drops what we push while it flushes
     * and says OK: without this the frames queued before the seek reached
     * upstream would be scored as fast as they come, into the summary */
    guint i;
    for (i = 0; i < 2; i++)
      while (gst_aggregator_pad_drop_buffer (i ? self->dist_pad :
              self->ref_pad));
    return GST_FLOW_OK;
  }
  self->agg_latency = latency;
  check_rates (self);
  deadline = live_deadline (self);
  GST_LOG_OBJECT (self, "aggregate (timeout %d), deadline %" G_GINT64_FORMAT
      ", latency %" GST_TIME_FORMAT, timeout, deadline, GST_TIME_ARGS (latency));
  if (timeout && deadline == QM_PAIR_NO_DEADLINE) {
    /* live without a clock reading: what made us time out has waited */
    deadline = to_pair_time (gst_qmetric_get_next_time (agg));
  }

  ret = pair_queued (self, deadline, FALSE);
  /* Not live, the comparison ends when both pads have: the frames the other
   * pad still sends are each counted (partner-timeout ends a pad that
   * never does).  Live, a partner may never send EOS: it ends once the
   * other pad can bring no partner for the ended pad's frames any more
   * (live_may_end), and the other pad's later frames get EOS upstream. */
  if (ret == GST_FLOW_OK && (!live ? pad_over (self, QM_PAIR_REF) && pad_over (self, QM_PAIR_DIST) :
          live_may_end (self, deadline))) {
    ret = pair_queued (self, deadline, TRUE);
    if (ret == GST_FLOW_OK)
      ret = finish (self);
    return ret == GST_FLOW_OK ? GST_FLOW_EOS : ret;
  }
  if (ret == GST_FLOW_OK)
    ret = drain (self, FALSE);
  return ret;
}

/* ---- events, queries, state ---- */

/* What may differ between the pads without stopping the comparison, but
 * means the two streams are not what a user thinks they are. */
enum
{
  PAD_DIFF_INTERLACE = 1 << 0,
  PAD_DIFF_PAR = 1 << 1,
  PAD_DIFF_RANGE = 1 << 2,
};

/* Warn (once per combination) when the pads' interlacing, pixel aspect
 * ratio or range differ: the pictures are still compared sample by
 * sample, which is what the user asked for, but they should know. */
static void
check_pad_differences (GstQmetric * self)
{
  const GstVideoInfo *r = &self->ref_info, *d = &self->dist_info;
  guint diff = 0;
  GString *what;

  if (!self->have_ref_info || !self->have_dist_info)
    return;
  if (GST_VIDEO_INFO_INTERLACE_MODE (r) != GST_VIDEO_INFO_INTERLACE_MODE (d))
    diff |= PAD_DIFF_INTERLACE;
  if (GST_VIDEO_INFO_PAR_N (r) * (gint64) GST_VIDEO_INFO_PAR_D (d) !=
      GST_VIDEO_INFO_PAR_N (d) * (gint64) GST_VIDEO_INFO_PAR_D (r))
    diff |= PAD_DIFF_PAR;
  if (r->colorimetry.range != d->colorimetry.range)
    diff |= PAD_DIFF_RANGE;
  if (diff == self->pad_diff_warned)
    return;
  self->pad_diff_warned = diff;
  if (!diff)
    return;
  what = g_string_new (NULL);
  if (diff & PAD_DIFF_INTERLACE)
    g_string_append_printf (what, "; interlace-mode: reference %s, distorted "
        "%s", gst_video_interlace_mode_to_string
        (GST_VIDEO_INFO_INTERLACE_MODE (r)),
        gst_video_interlace_mode_to_string (GST_VIDEO_INFO_INTERLACE_MODE
            (d)));
  if (diff & PAD_DIFF_PAR)
    g_string_append_printf (what, "; pixel-aspect-ratio: reference %d/%d, "
        "distorted %d/%d", GST_VIDEO_INFO_PAR_N (r), GST_VIDEO_INFO_PAR_D (r),
        GST_VIDEO_INFO_PAR_N (d), GST_VIDEO_INFO_PAR_D (d));
  if (diff & PAD_DIFF_RANGE)
    g_string_append_printf (what, "; range: reference %s, distorted %s",
        r->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255 ? "full" :
        r->colorimetry.range == GST_VIDEO_COLOR_RANGE_16_235 ? "limited" :
        "unknown", d->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255 ?
        "full" : d->colorimetry.range == GST_VIDEO_COLOR_RANGE_16_235 ?
        "limited" : "unknown");
  GST_ELEMENT_WARNING (self, STREAM, FORMAT,
      ("Reference and distorted video differ (%s); the samples are compared "
          "as they are", what->str + 2), (NULL));
  g_string_free (what, TRUE);
}

/* A size or format change re-initialises the engine; anything else in the
 * caps (colorimetry, pixel aspect ratio, frame rate, interlacing) leaves
 * it, and the motion history, alone. */
static gboolean
geometry_changed (const GstVideoInfo * a, const GstVideoInfo * b)
{
  return GST_VIDEO_INFO_WIDTH (a) != GST_VIDEO_INFO_WIDTH (b) ||
      GST_VIDEO_INFO_HEIGHT (a) != GST_VIDEO_INFO_HEIGHT (b) ||
      GST_VIDEO_INFO_FORMAT (a) != GST_VIDEO_INFO_FORMAT (b);
}

static gboolean
gst_qmetric_sink_event (GstAggregator * agg, GstAggregatorPad * pad,
    GstEvent * event)
{
  GstQmetric *self = GST_QMETRIC (agg);
  gboolean is_dist = pad == self->dist_pad;

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:{
      GstCaps *caps;
      GstVideoInfo info, *cur = is_dist ? &self->dist_info : &self->ref_info;
      gboolean *have = is_dist ? &self->have_dist_info : &self->have_ref_info;
      gboolean changed;

      gst_event_parse_caps (event, &caps);
      if (!gst_video_info_from_caps (&info, caps)) {
        GST_ELEMENT_ERROR (self, STREAM, FORMAT,
            ("Invalid caps on %s", GST_PAD_NAME (pad)),
            ("%" GST_PTR_FORMAT, caps));
        gst_event_unref (event);
        return FALSE;
      }
      /* GStreamer's matrix for caps that state none depends on the size:
       * unstated, it is not known (docs/metrics.md, SSIMULACRA2) */
      if (!gst_structure_has_field (gst_caps_get_structure (caps, 0),
              "colorimetry"))
        info.colorimetry.matrix = GST_VIDEO_COLOR_MATRIX_UNKNOWN;
      changed = *have && geometry_changed (&info, cur);
      *cur = info;
      *have = TRUE;
      if (changed && self->n_features) {
        /* frames queued before this event keep their caps; the engine is
         * re-initialised at the first pair in the new ones (compare_pair) */
        GST_INFO_OBJECT (self, "%s changes to %dx%d %s",
            GST_PAD_NAME (pad), GST_VIDEO_INFO_WIDTH (&info),
            GST_VIDEO_INFO_HEIGHT (&info),
            gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (&info)));
      }
      check_pad_differences (self);
      /* The engine opens at the first pad's caps, before any frame: the
       * other pad (a decoder, say) may send its caps only with its first
       * frame.  Opened at the first pair, its set-up (some 140 ms with the
       * CUDA backend while seven other probes set theirs up) held this
       * thread while frames came, and pairs whose two frames had arrived
       * inside the latency were given up (issue 13, qmetric-bench-probes
       * with decoders).  The look-ahead is announced with it.  Caps that
       * differ on the other pad are refused at the first pair, as before;
       * a later change of size or format reopens it there. */
      if (!self->engine && gst_qmetric_format_lookup (GST_VIDEO_INFO_FORMAT
              (&info))) {
        self->pair_dist_info = info;
        if (!open_engine (self, GST_CLOCK_TIME_NONE)) {
          gst_event_unref (event);
          return FALSE;
        }
        self->engine_info = info;
      }
      if (is_dist)
        gst_aggregator_set_src_caps (agg, caps);
      gst_event_unref (event);
      return TRUE;
    }
    case GST_EVENT_SEGMENT:
      if (is_dist) {
        const GstSegment *segment;
        gst_event_parse_segment (event, &segment);
        /* the output is the distorted stream: it keeps its timeline */
        gst_aggregator_update_segment (agg, segment);
      }
      break;
    case GST_EVENT_TAG:
      /* the reference's tags describe another stream; the distorted
       * stream's are not forwarded by GstAggregator either */
      break;
    default:
      break;
  }
  return GST_AGGREGATOR_CLASS (parent_class)->sink_event (agg, pad, event);
}

static gboolean
gst_qmetric_sink_query (GstAggregator * agg, GstAggregatorPad * pad,
    GstQuery * query)
{
  GstQmetric *self = GST_QMETRIC (agg);

  switch (GST_QUERY_TYPE (query)) {
    case GST_QUERY_CONTEXT:
      if (gst_qmetric_cuda_handle_query (GST_ELEMENT (agg), query,
              self->cuda_ctx))
        return TRUE;
      break;
    case GST_QUERY_ALLOCATION:{
      GstCaps *caps;
      GstVideoInfo info;
      guint threads;

      gst_query_parse_allocation (query, &caps, NULL);
      if (!caps || !gst_video_info_from_caps (&info, caps))
        return FALSE;
      GST_OBJECT_LOCK (self);
      threads = self->threads ? self->threads : g_get_num_processors ();
      GST_OBJECT_UNLOCK (self);
      /* frames stay with us while they are scored (several in flight, plus
       * the look-ahead of motion): ask upstream pools for that many more */
      gst_query_add_allocation_pool (query, NULL, info.size,
          MIN (2 * threads + 2, 64), 0);
      gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
      return TRUE;
    }
    default:
      break;
  }
  return GST_AGGREGATOR_CLASS (parent_class)->sink_query (agg, pad, query);
}

static void
reset_stream (GstQmetric * self)
{
  qm_engine_close (&self->engine);
  while (!g_queue_is_empty (&self->out))
    qm_pair_free (g_queue_pop_head (&self->out));
}

/* Counters, pools and times of a new summary. */
static void
reset_counts (GstQmetric * self)
{
  guint i;

  self->n_pairs = self->n_scored = 0;
  self->unmatched_ref = self->unmatched_dist = 0;
  self->unreadable = self->out_of_range = 0;
  self->cuda_in_place = self->cuda_copied = 0;
  self->flushes = 0;
  self->first_stream_time = self->last_stream_time = GST_CLOCK_TIME_NONE;
  for (i = 0; self->pools && i < self->n_features; i++) {
    qm_pool_clear (&self->pools[i]);
    qm_pool_init (&self->pools[i]);
  }
  self->finished = FALSE;
  self->t_start = g_get_monotonic_time ();
}

static gboolean
gst_qmetric_start (GstAggregator * agg)
{
  GstQmetric *self = GST_QMETRIC (agg);

  self->have_ref_info = self->have_dist_info = FALSE;
  self->reconfigured = FALSE;
  self->pad_diff_warned = 0;
  self->segment = 0;
  self->foreign_ctx_warned = FALSE;
  g_atomic_int_set (&self->seek_flushing, 0);
  /* a bad window property fails the start before the watchdog thread is
   * made: GstAggregator does not call stop() after a failed start, and the
   * thread would outlive the element (ASan: heap-use-after-free in
   * watchdog_loop after test_bad_window, 1 forked run in 2 or 3) */
  if (!window_start (self))
    return FALSE;
  pairing_start (self);
  free_features (self);
  reset_counts (self);
  {
    gint dev;
    QmBackend be;
    GST_OBJECT_LOCK (self);
    dev = self->cuda_device_id;
    be = self->backend;
    GST_OBJECT_UNLOCK (self);
    /* share upstream's CUDA context (or make one) so that CUDA memory is
     * read without a copy; without a driver this fails and auto means CPU */
    if (be != QM_BACKEND_CPU && qm_have_cuda () &&
        !gst_qmetric_cuda_ensure (GST_ELEMENT (self), dev, &self->cuda_ctx))
      GST_INFO_OBJECT (self, "no GStreamer CUDA context");
  }
  return TRUE;
}

static gboolean
gst_qmetric_stop (GstAggregator * agg)
{
  GstQmetric *self = GST_QMETRIC (agg);

  pairing_stop (self);
  /* stopped without EOS (an application shutting down, say): score what
   * was submitted and still leave a complete log; nothing is pushed */
  if (self->engine) {
    qm_engine_flush (self->engine);
    collect (self, TRUE);
  }
  reset_stream (self);
  qm_window_finish (self->win, "stop");
  g_clear_pointer (&self->win, qm_window_free);
  if (self->log) {
    guint pool;
    GST_OBJECT_LOCK (self);
    pool = self->pool;
    GST_OBJECT_UNLOCK (self);
    qm_log_close (self->log, self->pools, pool, 0);
    self->log = NULL;
  }
  free_features (self);
  gst_clear_object (&self->cuda_ctx);
  return TRUE;
}

static void
gst_qmetric_set_context (GstElement * element, GstContext * context)
{
  GstQmetric *self = GST_QMETRIC (element);
  gint dev;

  GST_OBJECT_LOCK (self);
  dev = self->cuda_device_id;
  GST_OBJECT_UNLOCK (self);
  gst_qmetric_cuda_set_context (element, context, dev, &self->cuda_ctx);
  GST_ELEMENT_CLASS (parent_class)->set_context (element, context);
}

static gboolean
gst_qmetric_src_query (GstAggregator * agg, GstQuery * query)
{
  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT &&
      gst_qmetric_cuda_handle_query (GST_ELEMENT (agg), query,
          GST_QMETRIC (agg)->cuda_ctx))
    return TRUE;
  return GST_AGGREGATOR_CLASS (parent_class)->src_query (agg, query);
}

static gboolean
gst_qmetric_src_event (GstAggregator * agg, GstEvent * event)
{
  GstQmetric *self = GST_QMETRIC (agg);
  gboolean flushing = FALSE, ret;

  if (GST_EVENT_TYPE (event) == GST_EVENT_SEEK) {
    GstSeekFlags flags;
    gst_event_parse_seek (event, NULL, NULL, &flags, NULL, NULL, NULL, NULL);
    flushing = (flags & GST_SEEK_FLAG_FLUSH) != 0;
  }
  if (flushing)
    g_atomic_int_set (&self->seek_flushing, 1);
  ret = GST_AGGREGATOR_CLASS (parent_class)->src_event (agg, event);
  /* a seek that failed upstream flushes nothing: score again */
  if (flushing && !ret)
    g_atomic_int_set (&self->seek_flushing, 0);
  return ret;
}

static GstFlowReturn
gst_qmetric_flush (GstAggregator * agg)
{
  GstQmetric *self = GST_QMETRIC (agg);

  /* a flushing seek: pending frames are discarded, motion starts afresh.
   * Before EOS the summary to come keeps covering every frame compared
   * (it counts the flush); after EOS, when the summary was posted, the
   * frames that follow are a new segment with a summary (and log) of
   * their own, so scoring resumes. */
  reset_stream (self);
  pairing_reset (self);
  if (self->finished) {
    self->segment++;
    reset_counts (self);
  } else {
    self->flushes++;
  }
  g_atomic_int_set (&self->seek_flushing, 0);
  return GST_FLOW_OK;
}

static gboolean
plugin_init (GstPlugin * plugin)
{
  gst_qmetric_meta_api_register ();
  gst_qmetric_meta_get_info ();
  return GST_ELEMENT_REGISTER (qmetric, plugin);
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, qmetric,
    "Full-reference video quality metrics (VMAF, PSNR, SSIM, ...)",
    plugin_init, QM_VERSION, "LGPL", "gst-qmetric",
    "https://github.com/gst-qmetric/gst-qmetric")
