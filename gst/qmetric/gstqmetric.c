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
 * scores.  Frames are paired by running time.  The distorted frames leave on
 * the src pad unchanged, so the element can sit in front of a sink.
 *
 * For every compared pair it posts an element message named "qmetric"
 * (fields: index, timestamp, stream-time, running-time, duration, then one
 * double per feature), attaches a #GstQmetricMeta to the outgoing buffer and
 * sends a tag event with the scores.  At EOS it posts "qmetric-summary" with
 * the pooled values and completes the log file (libvmaf's JSON, CSV or XML).
 * A frame that arrives on one pad without a partner on the other is not
 * compared with anything: it is counted and reported in a warning.
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

#include <math.h>
#include <string.h>

#include <gst/video/video.h>

#include "gstqmetric.h"
#include "gstqmetriccuda.h"
#include "gstqmetricframe.h"
#include "gstqmetricmeta.h"
#include "qm.h"
#include "qmlog.h"
#include "gstqmetricwindow.h"

GST_DEBUG_CATEGORY_STATIC (gst_qmetric_debug);
#define GST_CAT_DEFAULT gst_qmetric_debug

#define DEFAULT_METRICS "all"
#define DEFAULT_MODEL "vmaf_v0.6.1"
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
#define DEFAULT_WINDOW "none"

/* individual warnings for the first unmatched frames; then every Nth */
#define UNMATCHED_WARN_FIRST 20
#define UNMATCHED_WARN_EVERY 1000

enum
{
  PROP_0,
  PROP_METRICS,
  PROP_MODEL,
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

struct _GstQmetric
{
  GstAggregator parent;

  GstAggregatorPad *ref_pad, *dist_pad;

  /* properties, under the object lock */
  gchar *metrics;
  gchar *model;
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
  gchar *window;

  /* CUDA shared with upstream (a GstCudaContext) */
  GstObject *cuda_ctx;

  /* streaming state */
  GstVideoInfo ref_info, dist_info;
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
  guint64 unmatched_ref, unmatched_dist, unreadable;
  gboolean no_timestamps_warned;
  gboolean finished;
  gint64 t_start;               /* monotonic us, for the log's fps */
  QmWindow *win;                /* qmetric-window messages (qmwindow.c) */
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
static GstFlowReturn gst_qmetric_aggregate (GstAggregator * agg,
    gboolean timeout);
static void gst_qmetric_set_context (GstElement * element,
    GstContext * context);
static gboolean gst_qmetric_src_query (GstAggregator * agg, GstQuery * query);
static GstClockTime gst_qmetric_get_next_time (GstAggregator * agg);

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
  GString *s = g_string_new ("Comma-separated metrics to compute: \"all\" "
      "(every metric below), or any of:");
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

  /* the blurb lists the metrics of this build: it must outlive the class */
  g_object_class_install_property (gobject_class, PROP_METRICS,
      g_param_spec_string ("metrics", "Metrics", metric_list_blurb (),
          DEFAULT_METRICS, G_PARAM_READWRITE | G_PARAM_STATIC_NAME |
          G_PARAM_STATIC_NICK | GST_PARAM_MUTABLE_READY));
  g_object_class_install_property (gobject_class, PROP_MODEL,
      g_param_spec_string ("model", "VMAF model",
          "VMAF model(s) for the metric \"vmaf\", comma-separated: a built-in "
          "name (vmaf_v0.6.1, vmaf_4k_v0.6.1, vmaf_v0.6.1neg) or the path of "
          "a libvmaf JSON model. With one model the score is named \"vmaf\", "
          "with several each score is named after its model (e.g. "
          "\"vmaf_v0.6.1neg\")", DEFAULT_MODEL, flags));
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
          "distorted frame that still makes them a pair (-1 = half a frame "
          "duration)", 0, G_MAXUINT64, DEFAULT_PAIRING_TOLERANCE, flags));
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
  self->window = g_strdup (DEFAULT_WINDOW);
  g_queue_init (&self->out);
}

static void
gst_qmetric_finalize (GObject * object)
{
  GstQmetric *self = GST_QMETRIC (object);

  g_free (self->metrics);
  g_free (self->model);
  g_free (self->log_location);
  g_free (self->window);
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
      if (!self->metrics)
        self->metrics = g_strdup (DEFAULT_METRICS);
      break;
    case PROP_MODEL:
      g_free (self->model);
      self->model = g_value_dup_string (value);
      if (!self->model)
        self->model = g_strdup (DEFAULT_MODEL);
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

static gboolean
open_engine (GstQmetric * self)
{
  QmSettings s;
  const GstQmetricFormat *f =
      gst_qmetric_format_lookup (GST_VIDEO_INFO_FORMAT (&self->dist_info));
  gchar *log_location;
  QmLogFormat log_format;
  char *err = NULL;
  guint i;
  int ret;

  qm_settings_default (&s, GST_VIDEO_INFO_WIDTH (&self->dist_info),
      GST_VIDEO_INFO_HEIGHT (&self->dist_info), f->bpc, f->chroma);
  GST_OBJECT_LOCK (self);
  s.metrics = g_strdup (self->metrics);
  s.models = g_strdup (self->model);
  s.n_threads = self->threads;
  s.subsample = self->subsample;
  s.disable_clip = self->disable_clip;
  s.enable_transform = self->enable_transform;
  s.backend = self->backend;
  s.cuda_device = self->cuda_device_id;
  s.cuda_context = gst_qmetric_cuda_handle (self->cuda_ctx);
  log_location = g_strdup (self->log_location);
  log_format = self->log_format;
  GST_OBJECT_UNLOCK (self);
  s.log = qm_engine_log_cb;
  s.log_opaque = self;
  s.release = qm_pair_release;
  s.release_opaque = self;

  ret = qm_engine_open (&self->engine, &s, &err);
  g_free ((gchar *) s.metrics);
  g_free ((gchar *) s.models);
  if (ret) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("Cannot set up the metrics: %s", err ? err : qm_strerror (ret)),
        ("qm_engine_open() returned %d for %dx%d %s", ret, s.w, s.h,
            gst_video_format_to_string (GST_VIDEO_INFO_FORMAT
                (&self->dist_info))));
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
  GST_INFO_OBJECT (self, "metrics run on the %s, %u features, %u frame(s) "
      "of look-ahead", qm_engine_backend (self->engine) == QM_BACKEND_CUDA ?
      "GPU (CUDA)" : "CPU", qm_engine_n_features (self->engine),
      qm_engine_delay (self->engine));

  /* a frame's scores wait for the look-ahead (motion needs the next
   * frame): a live pipeline must know it holds that many frames */
  if (qm_engine_delay (self->engine) > 0 &&
      GST_VIDEO_INFO_FPS_N (&self->dist_info) > 0) {
    GstClockTime lat = gst_util_uint64_scale_int (GST_SECOND *
        qm_engine_delay (self->engine), GST_VIDEO_INFO_FPS_D (&self->dist_info),
        GST_VIDEO_INFO_FPS_N (&self->dist_info));
    gst_aggregator_set_latency (GST_AGGREGATOR (self), lat, lat);
  }

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
      GST_ELEMENT_ERROR (self, RESOURCE, OPEN_WRITE,
          ("%s", err), ("log-location=%s", log_location));
      free (err);
      g_free (log_location);
      qm_engine_close (&self->engine);
      return FALSE;
    }
  }
  g_free (log_location);
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

/* Take every finished result from the engine: pools, log, messages. */
static GstFlowReturn
collect (GstQmetric * self, gboolean wait)
{
  QmResult r;
  gboolean post;
  int err;

  if (!self->engine)
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
            p->present) < 0)
      GST_ELEMENT_WARNING (self, RESOURCE, WRITE,
          ("Could not write to the log file"), (NULL));
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
      "unreadable", G_TYPE_UINT64, self->unreadable, NULL);
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
    if (qm_log_close (self->log, self->pools, pool,
            secs > 0 ? self->n_scored / secs : 0) < 0)
      GST_ELEMENT_WARNING (self, RESOURCE, WRITE,
          ("Could not complete the log file"), (NULL));
    self->log = NULL;
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

/* Live mode: GstAggregator calls aggregate(timeout=TRUE) once the clock
 * passes this running time plus the latency.  What can time out is the
 * oldest queued frame: when it is older than the latency its partner is not
 * coming.  (The default, the src segment's position, is never advanced by
 * this element: frames leave after scoring, out of step with the pads, so
 * every frame would have timed out.)  Nothing queued: nothing to wait for,
 * unless a pad has ended. */
static GstClockTime
gst_qmetric_get_next_time (GstAggregator * agg)
{
  GstQmetric *self = GST_QMETRIC (agg);
  GstAggregatorPad *pads[2] = { self->ref_pad, self->dist_pad };
  GstClockTime next = GST_CLOCK_TIME_NONE;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (pads); i++) {
    GstBuffer *buf = gst_aggregator_pad_peek_buffer (pads[i]);
    /* a pad at EOS ends the comparison: time out at once so that
     * aggregate() sees it (a live partner may never send EOS) */
    if (!buf && gst_aggregator_pad_is_eos (pads[i]))
      return 0;
    if (buf) {
      GstClockTime rt = buffer_running_time (pads[i], buf);
      if (GST_CLOCK_TIME_IS_VALID (rt) && (!GST_CLOCK_TIME_IS_VALID (next)
              || rt < next))
        next = rt;
      gst_buffer_unref (buf);
    }
  }
  return next;
}

static GstClockTime
pairing_tolerance (GstQmetric * self, GstBuffer * buf)
{
  GstClockTime tol, dur = GST_BUFFER_DURATION (buf);

  GST_OBJECT_LOCK (self);
  tol = self->pairing_tolerance;
  GST_OBJECT_UNLOCK (self);
  if (GST_CLOCK_TIME_IS_VALID (tol))
    return tol;
  if (!GST_CLOCK_TIME_IS_VALID (dur) && GST_VIDEO_INFO_FPS_N (&self->dist_info)
      > 0)
    dur = gst_util_uint64_scale_int (GST_SECOND,
        GST_VIDEO_INFO_FPS_D (&self->dist_info),
        GST_VIDEO_INFO_FPS_N (&self->dist_info));
  /* frames closer than half a frame are the same instant; 1 ms otherwise */
  return GST_CLOCK_TIME_IS_VALID (dur) ? dur / 2 : GST_MSECOND;
}

static void
warn_unmatched (GstQmetric * self, gboolean is_ref, GstClockTime rt)
{
  guint64 n = is_ref ? self->unmatched_ref : self->unmatched_dist;

  if (n > UNMATCHED_WARN_FIRST && n % UNMATCHED_WARN_EVERY)
    return;
  GST_ELEMENT_WARNING_WITH_DETAILS (self, STREAM, FAILED,
      ("%s frame at running time %" GST_TIME_FORMAT " has no %s frame: it is "
          "not compared (%" G_GUINT64_FORMAT " such frames so far)",
          is_ref ? "Reference" : "Distorted", GST_TIME_ARGS (rt),
          is_ref ? "distorted" : "reference", n),
      (NULL), ("details", GST_TYPE_STRUCTURE,
          gst_structure_new ("qmetric-unmatched", "pad", G_TYPE_STRING,
              is_ref ? "ref_sink" : "dist_sink", "running-time",
              G_TYPE_UINT64, rt, "count", G_TYPE_UINT64, n, NULL), NULL));
}

/* A reference frame with no partner is dropped. */
static void
drop_ref (GstQmetric * self, GstClockTime rt)
{
  gst_aggregator_pad_drop_buffer (self->ref_pad);
  /* in order when no earlier pair is still being scored */
  qm_window_event (self->win, rt, QM_WINDOW_UNMATCHED_REF, FALSE,
      g_queue_is_empty (&self->out));
  self->unmatched_ref++;
  warn_unmatched (self, TRUE, rt);
}

/* A distorted frame with no partner still goes downstream, unscored. */
static void
pass_dist (GstQmetric * self, GstClockTime rt)
{
  QmPair *p = g_new0 (QmPair, 1);

  p->dist_buf = gst_aggregator_pad_pop_buffer (self->dist_pad);
  p->running_time = rt;
  p->done = TRUE;
  g_queue_push_tail (&self->out, p);
  self->unmatched_dist++;
  warn_unmatched (self, FALSE, rt);
}

static GstFlowReturn
compare_pair (GstQmetric * self, GstBuffer * rbuf, GstBuffer * dbuf,
    GstClockTime rt)
{
  QmPair *p = g_new0 (QmPair, 1);
  GstSegment *seg = &self->dist_pad->segment;
  gboolean gpu;
  int err;

  if (!self->engine && !open_engine (self)) {
    g_free (p);
    return GST_FLOW_ERROR;
  }
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
   * it again) */
  gpu = qm_engine_backend (self->engine) == QM_BACKEND_CUDA &&
      !qm_engine_reads_host (self->engine);
  if (!gst_qmetric_side_map (&p->ref, &self->ref_info, rbuf, gpu &&
          gst_qmetric_cuda_is_device_buffer (rbuf)) ||
      !gst_qmetric_side_map (&p->dist, &self->dist_info, dbuf, gpu &&
          gst_qmetric_cuda_is_device_buffer (dbuf))) {
    /* e.g. a truncated buffer: report it, keep the stream going */
    GST_ELEMENT_WARNING (self, STREAM, FORMAT,
        ("Frame at running time %" GST_TIME_FORMAT " is smaller than its "
            "caps say (reference %" G_GSIZE_FORMAT ", distorted %"
            G_GSIZE_FORMAT " bytes, expected %" G_GSIZE_FORMAT "); it is not "
            "compared", GST_TIME_ARGS (rt), gst_buffer_get_size (rbuf),
            gst_buffer_get_size (dbuf), GST_VIDEO_INFO_SIZE (&self->dist_info)),
        (NULL));
    gst_qmetric_side_unmap (&p->ref);
    gst_qmetric_side_unmap (&p->dist);
    self->unreadable++;
    p->unreadable = TRUE;
    p->done = TRUE;
    g_queue_push_tail (&self->out, p);
    gst_buffer_unref (rbuf);
    return GST_FLOW_OK;
  }
  gst_buffer_unref (rbuf);       /* the mapped frame holds its own ref */
  p->index = self->n_pairs++;
  g_queue_push_tail (&self->out, p);

  err = qm_engine_submit (self->engine, &p->ref.pic, &p->dist.pic, p);
  if (err == QM_EAGAIN) {
    /* results are taken after every submit; this only happens if the
     * engine's ring is full of look-ahead: take them and try again */
    drain (self, TRUE);
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

static GstFlowReturn
gst_qmetric_aggregate (GstAggregator * agg, gboolean timeout)
{
  GstQmetric *self = GST_QMETRIC (agg);
  GstBuffer *rbuf, *dbuf;
  GstFlowReturn ret = GST_FLOW_OK;
  GstClockTime rt_r = GST_CLOCK_TIME_NONE, rt_d = GST_CLOCK_TIME_NONE;

  if (self->finished)
    return GST_FLOW_EOS;

  rbuf = gst_aggregator_pad_peek_buffer (self->ref_pad);
  dbuf = gst_aggregator_pad_peek_buffer (self->dist_pad);
  if (rbuf)
    rt_r = buffer_running_time (self->ref_pad, rbuf);
  if (dbuf)
    rt_d = buffer_running_time (self->dist_pad, dbuf);

  if (rbuf && dbuf) {
    if (!self->have_ref_info || !self->have_dist_info) {
      GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
          ("Data arrived before caps on %s", self->have_ref_info ?
              "dist_sink" : "ref_sink"), (NULL));
      ret = GST_FLOW_NOT_NEGOTIATED;
    } else if (!GST_CLOCK_TIME_IS_VALID (rt_r)
        || !GST_CLOCK_TIME_IS_VALID (rt_d)) {
      /* without timestamps the only pairing left is arrival order */
      if (!self->no_timestamps_warned) {
        GST_ELEMENT_WARNING (self, STREAM, FAILED,
            ("Frames without timestamps: pairing them in arrival order"),
            (NULL));
        self->no_timestamps_warned = TRUE;
      }
      ret = compare_pair (self, gst_aggregator_pad_pop_buffer (self->ref_pad),
          gst_aggregator_pad_pop_buffer (self->dist_pad), rt_d);
    } else {
      GstClockTime tol = pairing_tolerance (self, dbuf);
      if (rt_r + tol < rt_d) {
        drop_ref (self, rt_r);
      } else if (rt_d + tol < rt_r) {
        pass_dist (self, rt_d);
      } else {
        ret = compare_pair (self, gst_aggregator_pad_pop_buffer
            (self->ref_pad), gst_aggregator_pad_pop_buffer (self->dist_pad),
            rt_d);
      }
    }
  } else if (gst_aggregator_pad_is_eos (self->ref_pad) ||
      gst_aggregator_pad_is_eos (self->dist_pad)) {
    /* one side ended: the comparison is over.  What is queued on the other
     * side has no partner; later frames get EOS upstream. */
    while (rbuf) {
      drop_ref (self, rt_r);
      gst_buffer_unref (rbuf);
      if ((rbuf = gst_aggregator_pad_peek_buffer (self->ref_pad)))
        rt_r = buffer_running_time (self->ref_pad, rbuf);
    }
    while (dbuf) {
      pass_dist (self, rt_d);
      gst_buffer_unref (dbuf);
      if ((dbuf = gst_aggregator_pad_peek_buffer (self->dist_pad)))
        rt_d = buffer_running_time (self->dist_pad, dbuf);
    }
    ret = GST_FLOW_EOS;
  } else if (timeout) {
    /* live: the partner did not arrive within the latency */
    if (rbuf)
      drop_ref (self, rt_r);
    else if (dbuf)
      pass_dist (self, rt_d);
  }
  gst_clear_buffer (&rbuf);
  gst_clear_buffer (&dbuf);

  if (ret == GST_FLOW_EOS) {
    ret = finish (self);
    return ret == GST_FLOW_OK ? GST_FLOW_EOS : ret;
  }
  if (ret == GST_FLOW_OK)
    ret = drain (self, FALSE);
  return ret;
}

/* ---- events, queries, state ---- */

static gboolean
check_formats (GstQmetric * self)
{
  const GstVideoInfo *r = &self->ref_info, *d = &self->dist_info;

  if (!self->have_ref_info || !self->have_dist_info)
    return TRUE;
  if (GST_VIDEO_INFO_WIDTH (r) != GST_VIDEO_INFO_WIDTH (d) ||
      GST_VIDEO_INFO_HEIGHT (r) != GST_VIDEO_INFO_HEIGHT (d) ||
      GST_VIDEO_INFO_FORMAT (r) != GST_VIDEO_INFO_FORMAT (d)) {
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
  return TRUE;
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
      GstVideoInfo info;
      gboolean changed;

      gst_event_parse_caps (event, &caps);
      if (!gst_video_info_from_caps (&info, caps)) {
        GST_ELEMENT_ERROR (self, STREAM, FORMAT,
            ("Invalid caps on %s", GST_PAD_NAME (pad)),
            ("%" GST_PTR_FORMAT, caps));
        gst_event_unref (event);
        return FALSE;
      }
      if (is_dist) {
        changed = self->have_dist_info &&
            !gst_video_info_is_equal (&info, &self->dist_info);
        self->dist_info = info;
        self->have_dist_info = TRUE;
      } else {
        changed = self->have_ref_info &&
            !gst_video_info_is_equal (&info, &self->ref_info);
        self->ref_info = info;
        self->have_ref_info = TRUE;
      }
      if (!check_formats (self)) {
        gst_event_unref (event);
        return FALSE;
      }
      if (changed && self->engine) {
        /* new geometry: the pairs so far are scored with the old engine */
        drain_all (self);
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

static gboolean
gst_qmetric_start (GstAggregator * agg)
{
  GstQmetric *self = GST_QMETRIC (agg);

  self->have_ref_info = self->have_dist_info = FALSE;
  self->n_pairs = self->n_scored = 0;
  self->unmatched_ref = self->unmatched_dist = self->unreadable = 0;
  self->no_timestamps_warned = FALSE;
  self->finished = FALSE;
  self->t_start = g_get_monotonic_time ();
  free_features (self);
  if (!window_start (self))
    return FALSE;
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

static GstFlowReturn
gst_qmetric_flush (GstAggregator * agg)
{
  GstQmetric *self = GST_QMETRIC (agg);

  /* a flushing seek: pending frames are discarded, motion starts afresh;
   * the pooled values keep covering every frame compared */
  reset_stream (self);
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
