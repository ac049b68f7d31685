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

#include <string.h>

#include <gst/video/video.h>

#include "gstqmetric.h"
#include "gstqmetriccuda.h"
#include "gstqmetricframe.h"
#include "gstqmetricholds.h"
#include "gstqmetricmeta.h"
#include "gstqmetricpad.h"
#include "gstqmetricpairing.h"
#include "gstqmetricreport.h"
#include "gstqmetricscoredpair.h"
#include "gstqmetricwatchdog.h"
#include "qm.h"
#include "qmlog.h"
#include "qmshed.h"

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

#define DEFAULT_WINDOW "none"
/* live, behind: score at least one pair in 100 (docs/element.md, Overload) */
#define DEFAULT_MAX_SKIP 100

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
  PROP_MAX_SKIP,
  PROP_PRESET,
};

struct _GstQmetric
{
  GstAggregator parent;

  GstQmetricPad *ref_pad, *dist_pad;

  /* properties, under the object lock */
  gchar *metrics;
  gboolean metrics_set;         /* FALSE: the default list, a wish only */
  gchar *model;
  gboolean model_set;           /* FALSE: the default model (none with a preset) */
  gchar *features;
  gchar *preset;
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
  guint max_skip;

  /* CUDA shared with upstream (a GstCudaContext) */
  GstObject *cuda_ctx;

  /* streaming state */
  GstCaps *src_caps;            /* the caps last set on the src pad */
  /* the caps of the pair being compared (its frames' own, from the pairing
   * queue) and those the engine was opened for */
  GstVideoInfo pair_ref_info, pair_dist_info, engine_info;
  QmEngine *engine;
  gboolean opening;             /* in qm_engine_open() (its log callback) */
  GQueue out;                   /* GstQmetricScoredPair, in output order */
  QmShed shed;                  /* which pairs, when behind (qmshed.c) */
  GstQmetricPairing pairing;    /* which frames are compared */
  GstQmetricReport report;      /* scores, logs, counters, warnings */
  GstClockTime agg_latency;     /* live: the latency aggregate() last saw,
                                 * for get_next_time() (see there) */

  GstQmetricWatchdog watchdog;  /* partner-timeout (not live) */
  gboolean finished;
  /* a flushing seek sent upstream and not yet flushed through (atomic):
   * between the flush-start downstream (which lets our pushes return at
   * once) and the flush upstream, the frames still queued are on their way
   * out and are dropped, not scored */
  gint seek_flushing;
  gboolean reconfigured;        /* engine closed by a size/format change */
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
static gboolean gst_qmetric_sink_query_pre_queue (GstAggregator * agg,
    GstAggregatorPad * pad, GstQuery * query);
static GstFlowReturn gst_qmetric_aggregate (GstAggregator * agg,
    gboolean timeout);
static void gst_qmetric_set_context (GstElement * element,
    GstContext * context);
static gboolean gst_qmetric_src_query (GstAggregator * agg, GstQuery * query);
static gboolean gst_qmetric_src_event (GstAggregator * agg, GstEvent * event);
static GstClockTime gst_qmetric_get_next_time (GstAggregator * agg);

/* GstAggregator's latency complaint, repeated at every latency query, goes
 * through the element's limiter like its own warnings (gstqmetricwarn.h) */
static gboolean
gst_qmetric_post_message (GstElement * element, GstMessage * msg)
{
  msg = gst_qmetric_warn_filter (&GST_QMETRIC (element)->report.warn, msg);
  return msg ? GST_ELEMENT_CLASS (parent_class)->post_message (element,
      msg) : FALSE;
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
          "CPU threads computing the metrics (0 = one per CPU core, or 2 "
          "for a live input in CUDA memory); "
          "frames are computed in parallel, scores stay in order; with the "
          "CUDA backend and system-memory input, up to 8 of them share the "
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
  g_object_class_install_property (gobject_class, PROP_MAX_SKIP,
      g_param_spec_uint ("max-skip", "Maximum skip",
          "Live: when the metrics cannot keep up with the input, score a "
          "share of the pairs, evenly spread (7 in 8, 3 in 4, 2 in 3, 1 in "
          "2, 1 in 3, ... chosen from the backlog and the measured capacity, "
          "back to every pair when the backlog is gone) and pass the others "
          "downstream unscored, counted as skipped; at least one pair in "
          "max-skip is scored (1 = score every pair however late: the delay "
          "then grows without bound). Not live, every pair is scored",
          1, 100000, DEFAULT_MAX_SKIP, flags));
  g_object_class_install_property (gobject_class, PROP_PRESET,
      g_param_spec_string ("preset", "Preset",
          "A preset of libvmaf's command line tool, FAMILY=VERSION: "
          "aom_ctc=v1.0 .. aom_ctc=v7.0 (--aom_ctc) or nflx_ctc=v1.0 "
          "(--nflx_ctc): its two named models (scores vmaf and vmaf_neg) and "
          "its metrics with their options, the log's aggregate_metrics "
          "included. \"model\" and \"features\" add to it, \"metrics\" "
          "too when set (NULL: no preset)", NULL, flags));

  {
    /* system memory, and CUDA memory where GStreamer's CUDA library and our
     * CUDA backend are built (nvh264dec ! qmetric without a copy): caps
     * known at run time, hence no static templates.  The sink pads are
     * GstQmetricPad (each holds its frames waiting for pairing) */
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
              GST_PAD_ALWAYS, caps, pads[i].direction == GST_PAD_SINK ?
              GST_TYPE_QMETRIC_PAD : GST_TYPE_AGGREGATOR_PAD));
    gst_caps_unref (caps);
  }

  gst_element_class_set_static_metadata (element_class,
      "Video quality metrics", "Filter/Analyzer/Video",
      "Full-reference video quality (VMAF, PSNR, SSIM, MS-SSIM, PSNR-HVS, "
      "CIEDE2000, CAMBI) of a distorted stream against its reference",
      "gst-qmetric authors");

  element_class->set_context = GST_DEBUG_FUNCPTR (gst_qmetric_set_context);
  element_class->post_message = GST_DEBUG_FUNCPTR (gst_qmetric_post_message);
  agg_class->src_query = GST_DEBUG_FUNCPTR (gst_qmetric_src_query);
  agg_class->src_event = GST_DEBUG_FUNCPTR (gst_qmetric_src_event);
  agg_class->start = GST_DEBUG_FUNCPTR (gst_qmetric_start);
  agg_class->stop = GST_DEBUG_FUNCPTR (gst_qmetric_stop);
  agg_class->flush = GST_DEBUG_FUNCPTR (gst_qmetric_flush);
  agg_class->sink_event = GST_DEBUG_FUNCPTR (gst_qmetric_sink_event);
  agg_class->sink_query = GST_DEBUG_FUNCPTR (gst_qmetric_sink_query);
  agg_class->sink_query_pre_queue =
      GST_DEBUG_FUNCPTR (gst_qmetric_sink_query_pre_queue);
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
static GstQmetricPad *
add_sink_pad (GstQmetric * self, const gchar * name)
{
  GstPadTemplate *templ =
      gst_element_class_get_pad_template (GST_ELEMENT_GET_CLASS (self), name);
  GstPad *pad = gst_pad_new_from_template (templ, name);

  gst_element_add_pad (GST_ELEMENT (self), pad);
  return GST_QMETRIC_PAD (pad);
}

static void
gst_qmetric_init (GstQmetric * self)
{
  gst_qmetric_report_init (&self->report, GST_ELEMENT (self));
  self->ref_pad = add_sink_pad (self, "ref_sink");
  self->dist_pad = add_sink_pad (self, "dist_sink");
  gst_qmetric_pairing_init (&self->pairing, self->ref_pad, self->dist_pad);
  gst_qmetric_watchdog_init (&self->watchdog);

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
  self->max_skip = DEFAULT_MAX_SKIP;
  g_queue_init (&self->out);
}

static void
gst_qmetric_finalize (GObject * object)
{
  GstQmetric *self = GST_QMETRIC (object);

  g_free (self->metrics);
  g_free (self->model);
  g_free (self->features);
  g_free (self->preset);
  g_free (self->log_location);
  gst_qmetric_watchdog_clear (&self->watchdog);
  gst_qmetric_report_clear (&self->report);
  g_free (self->window);
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

/* A property read when the stream starts (GST_PARAM_MUTABLE_READY) set
 * while the element runs would read back its new value and do nothing:
 * it is refused, and says so.  Called with the object lock, which it drops
 * to post the warning (TRUE: refused). */
static gboolean
refuse_while_running (GstQmetric * self, GParamSpec * pspec)
{
  gchar *now;
  GValue cur = G_VALUE_INIT;

  if (!(pspec->flags & GST_PARAM_MUTABLE_READY) ||
      (GST_STATE (self) <= GST_STATE_READY &&
          GST_STATE_NEXT (self) <= GST_STATE_READY))
    return FALSE;
  GST_OBJECT_UNLOCK (self);
  g_value_init (&cur, pspec->value_type);
  g_object_get_property (G_OBJECT (self), pspec->name, &cur);
  now = g_strdup_value_contents (&cur);
  g_value_unset (&cur);
  GST_WARNING_OBJECT (self, "property %s set while running: refused",
      pspec->name);
  GST_ELEMENT_WARNING (self, CORE, STATE_CHANGE,
      ("The property \"%s\" can be changed only in the NULL or READY state "
          "(it is read when the stream starts); it keeps its value %s",
          pspec->name, now), (NULL));
  g_free (now);
  GST_OBJECT_LOCK (self);
  return TRUE;
}

static void
gst_qmetric_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstQmetric *self = GST_QMETRIC (object);

  GST_OBJECT_LOCK (self);
  if (refuse_while_running (self, pspec)) {
    GST_OBJECT_UNLOCK (self);
    return;
  }
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
      self->model_set = self->model != NULL;
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
    case PROP_MAX_SKIP:
      self->max_skip = g_value_get_uint (value);
      break;
    case PROP_PRESET:
      g_free (self->preset);
      self->preset = g_value_dup_string (value);
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
    case PROP_MAX_SKIP:
      g_value_set_uint (value, self->max_skip);
      break;
    case PROP_PRESET:
      g_value_set_string (value, self->preset);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

/* ---- engine lifetime ---- */

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
      /* what the engine leaves out at its set-up ("metric cambi left out:
       * ...") is the user's to know, not only the debug log's */
      if (self->opening)
        GST_ELEMENT_WARNING (self, LIBRARY, SETTINGS, ("%s", msg), (NULL));
      break;
    case QM_LOG_INFO:
      GST_INFO_OBJECT (self, "%s", msg);
      break;
    default:
      GST_DEBUG_OBJECT (self, "%s", msg);
      break;
  }
}

/* The engine failed (err: its return value). */
static GstFlowReturn
engine_failed (GstQmetric * self, int err)
{
  GST_ELEMENT_ERROR (self, LIBRARY, FAILED,
      ("Computing the metrics failed: %s",
          qm_engine_error (self->engine) ? qm_engine_error (self->engine) :
          qm_strerror (err)), (NULL));
  return GST_FLOW_ERROR;
}

/* Text that came from outside (paths, model files) made valid UTF-8 for a
 * GError, which must be. */
static gchar *
valid_utf8 (const gchar * s)
{
  return g_utf8_make_valid (s ? s : "", -1);
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
  /* the distorted input's rate, as FFmpeg's xpsnr reads its second input's */
  s->fps_n = GST_VIDEO_INFO_FPS_N (info);
  s->fps_d = GST_VIDEO_INFO_FPS_D (info);
  GST_OBJECT_LOCK (self);
  s->metrics = g_strdup (self->metrics);
  s->metrics_are_default = !self->metrics_set;
  /* the default model is not added to a preset's */
  s->models = self->model_set || !self->preset ? g_strdup (self->model) : NULL;
  s->features = g_strdup (self->features);
  s->preset = g_strdup (self->preset);
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
  g_free ((gchar *) s->preset);
}

/* A frame's scores wait for the look-ahead (motion needs the next frame):
 * a live pipeline must know that the element holds that many frames, and
 * it waits that much longer for partners.  Set at the first caps with a
 * rate, before the first frame, so that the first frames wait for their
 * partners as long as the later ones (the pipeline's latency is recomputed
 * when it changes, which frames already waiting do not see). */
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

/* device_input: the caps that open it carry CUDA memory */
static gboolean
open_engine (GstQmetric * self, GstClockTime rt, gboolean device_input)
{
  QmSettings s;
  gchar *log_location;
  QmLogFormat log_format;
  char *err = NULL;
  gboolean ok;
  int ret;

  fill_settings (self, &s, &self->pair_dist_info);
  if (s.n_threads == 0 && device_input && s.backend != QM_BACKEND_CPU &&
      gst_qmetric_upstream_live (GST_PAD (self->dist_pad)))
    s.n_threads = GST_QMETRIC_LIVE_DEVICE_THREADS;
  GST_OBJECT_LOCK (self);
  s.cuda_context = gst_qmetric_cuda_handle (self->cuda_ctx);
  log_location = g_strdup (self->log_location);
  log_format = self->log_format;
  GST_OBJECT_UNLOCK (self);
  s.log = qm_engine_log_cb;
  s.log_opaque = self;
  s.release = gst_qmetric_scored_pair_release;
  s.release_opaque = self;

  self->opening = TRUE;
  ret = qm_engine_open (&self->engine, &s, &err);
  self->opening = FALSE;
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
  gst_qmetric_report_backend (&self->report, self->engine, &s);
  GST_INFO_OBJECT (self, "metrics run on the %s (%s), %u features, %u "
      "frame(s) of look-ahead", self->report.backend == QM_BACKEND_CUDA ?
      "GPU" : "CPU", qm_engine_backend_note (self->engine),
      qm_engine_n_features (self->engine), qm_engine_delay (self->engine));

  /* usually announced at the caps already (the same value: no message) */
  announce_lookahead (self, &self->pair_dist_info,
      qm_engine_delay (self->engine));

  if (!gst_qmetric_report_features (&self->report, self->engine)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("The new input format changes the set of scores; this is not "
            "supported mid-stream"), (NULL));
    ok = FALSE;
  } else if (!gst_qmetric_report_aggregates (&self->report, self->engine,
          self->reconfigured)) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("Out of memory"), (NULL));
    ok = FALSE;
  } else {
    ok = gst_qmetric_report_open_log (&self->report, log_location,
        log_format, s.w, s.h);
  }
  g_free (log_location);
  if (!ok) {
    qm_engine_close (&self->engine);
    return FALSE;
  }
  if (self->reconfigured) {
    self->reconfigured = FALSE;
    gst_qmetric_report_reconfigured (&self->report, rt,
        &self->pair_dist_info);
  }
  return TRUE;
}

/* ---- output ---- */

static GstFlowReturn
push_pair (GstQmetric * self, GstQmetricScoredPair * p)
{
  GstAggregator *agg = GST_AGGREGATOR (self);
  GstBuffer *buf = p->dist_buf;
  GstTagList *tags;
  GstEvent *segment;
  GstFlowReturn ret;

  p->dist_buf = NULL;
  tags = gst_qmetric_report_decorate (&self->report, p, &buf);

  /* GstAggregator (1.22) sends stream-start/caps/segment with the first
   * buffer only; before that a tag event would be out of order, so the first
   * frame's tags follow its buffer and every later frame's precede it. */
  /* a caps change goes downstream with the first frame in the new caps,
   * after the frames of the old ones */
  if (p->caps && p->caps != self->src_caps) {
    if (!self->src_caps || !gst_caps_is_equal (p->caps, self->src_caps))
      gst_aggregator_set_src_caps (agg, p->caps);
    gst_caps_replace (&self->src_caps, p->caps);
  }
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

  /* results that come in while a flushing seek is under way belong to
   * frames the flush discards */
  if (!self->engine || g_atomic_int_get (&self->seek_flushing))
    return GST_FLOW_OK;
  GST_OBJECT_LOCK (self);
  post = self->post_messages;
  GST_OBJECT_UNLOCK (self);
  while ((err = qm_engine_receive (self->engine, &r, wait)) == 0) {
    GstQmetricScoredPair *p = r.frame_user;
    if (gst_qmetric_report_scores (&self->report, p, &r,
            post) != GST_FLOW_OK)
      return GST_FLOW_ERROR;
    /* how long it was in the engine once taken (a wait for a free slot
     * is already in the lag of the pairs behind it): a queue there is lag
     * too (qmshed.h) */
    if (p->has_scores && p->times.t[QM_FT_SUBMITTED] > 0)
      qm_shed_result (&self->shed, p->times.t[QM_FT_SCORED],
          (p->times.t[QM_FT_SCORED] - p->times.t[QM_FT_SUBMITTED]) * 1000);
  }
  if (err != QM_EAGAIN && err != QM_EOF)
    return engine_failed (self, err);
  return GST_FLOW_OK;
}

/* Push the distorted frames whose scores are known, in order. */
static GstFlowReturn
push_ready (GstQmetric * self)
{
  GstFlowReturn ret = GST_FLOW_OK;

  while (ret == GST_FLOW_OK && !g_queue_is_empty (&self->out)) {
    GstQmetricScoredPair *p = g_queue_peek_head (&self->out);
    if (!p->done)
      break;
    g_queue_pop_head (&self->out);
    gst_qmetric_report_leaving (&self->report, p);
    ret = push_pair (self, p);
    gst_qmetric_scored_pair_free (p);
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
    GstQmetricScoredPair *p = g_queue_pop_head (&self->out);
    if (ret == GST_FLOW_OK && p->dist_buf) {
      p->has_scores = FALSE;
      ret = push_pair (self, p);
    }
    gst_qmetric_scored_pair_free (p);
  }
  return ret;
}

/* The pool property (read at the end; GST_PARAM_MUTABLE_READY). */
static guint
pool_methods (GstQmetric * self)
{
  guint pool;

  GST_OBJECT_LOCK (self);
  pool = self->pool;
  GST_OBJECT_UNLOCK (self);
  return pool;
}

/* End of the comparison: scores out, log complete, summary posted. */
static GstFlowReturn
finish (GstQmetric * self)
{
  GstFlowReturn ret, rr;

  if (self->finished)
    return GST_FLOW_OK;
  self->finished = TRUE;
  ret = drain_all (self);
  rr = gst_qmetric_report_finish (&self->report, pool_methods (self));
  return ret == GST_FLOW_OK ? rr : ret;
}

/* ---- pairing ---- */

/* A reference frame with no partner is dropped. */
static void
drop_ref (GstQmetric * self, GstBuffer * buf, GstClockTime rt,
    QmPairReason why)
{
  gst_buffer_unref (buf);
  /* in order when no earlier pair is still being scored */
  gst_qmetric_report_unmatched (&self->report, TRUE, rt, why,
      g_queue_is_empty (&self->out));
}

/* A distorted frame with no partner still goes downstream, unscored. */
static void
pass_dist (GstQmetric * self, GstBuffer * buf, GstCaps * caps,
    GstClockTime rt, QmPairReason why)
{
  GstQmetricScoredPair *p = g_new0 (GstQmetricScoredPair, 1);

  p->dist_buf = buf;
  p->caps = caps;
  p->running_time = rt;
  p->done = TRUE;
  g_queue_push_tail (&self->out, p);
  gst_qmetric_report_unmatched (&self->report, FALSE, rt, why, FALSE);
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
    pending += !((GstQmetricScoredPair *) l->data)->done;
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

  return gst_qmetric_pairing_next_time (&self->pairing,
      result_poll_time (self));
}

/* Whether a buffer is read in place by the CUDA backend (gpu: every metric
 * runs there); counts the buffers of CUDA memory read in place and those
 * copied (mapped for the CPU: a download). */
static gboolean
cuda_access (GstQmetric * self, GstBuffer * buf, gboolean gpu)
{
  GstQmetricCudaAccess a = gst_qmetric_cuda_buffer_access (buf,
      self->cuda_ctx);
  gboolean in_place = a == GST_QMETRIC_CUDA_IN_PLACE && gpu;

  gst_qmetric_report_cuda (&self->report, a, in_place);
  return in_place;
}

/* The pair is not compared (a buffer unreadable or out of range): its
 * distorted frame still goes downstream, unscored, in order. */
static void
skip_pair (GstQmetric * self, GstQmetricScoredPair * p, GstBuffer * rbuf,
    GstQmetricMapResult why, const gchar * side, const gchar * problem)
{
  gst_qmetric_report_not_compared (&self->report, why, side,
      p->running_time, problem);
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

/* Live: whether pair p is scored or skipped to keep up (qmshed.c).  Its lag
 * is how far its running time is behind the clock's; the budget, the
 * aggregator's latency.  A change of the share scored is said: a warning
 * while pairs are skipped, an info message once every pair is scored
 * again. */
static gboolean
shed_skip (GstQmetric * self, GstQmetricScoredPair * p)
{
  GstClock *clock;
  GstClockTime now, base;
  const GstVideoInfo *info = &self->pair_dist_info;
  gint64 frame_ns = -1, lag;
  QmShedChange change;
  gboolean score;

  if (self->shed.max_skip <= 1 || !GST_CLOCK_TIME_IS_VALID (self->agg_latency)
      || !GST_CLOCK_TIME_IS_VALID (p->running_time) ||
      !(clock = gst_element_get_clock (GST_ELEMENT (self))))
    return FALSE;
  now = gst_clock_get_time (clock);
  gst_object_unref (clock);
  base = gst_element_get_base_time (GST_ELEMENT (self));
  lag = (gint64) (now - base) - (gint64) p->running_time;
  if (GST_CLOCK_TIME_IS_VALID (p->duration))
    frame_ns = (gint64) p->duration;
  else if (GST_VIDEO_INFO_FPS_N (info) > 0)
    frame_ns = gst_util_uint64_scale_int (GST_SECOND,
        GST_VIDEO_INFO_FPS_D (info), GST_VIDEO_INFO_FPS_N (info));
  score = qm_shed_pair (&self->shed, g_get_monotonic_time (), lag,
      (gint64) self->agg_latency, frame_ns, &change);
  if (change == QM_SHED_SAME)
    return !score;
  GST_INFO_OBJECT (self, "lag %" GST_STIME_FORMAT ", latency %"
      GST_TIME_FORMAT ": scoring %u of every %u pairs", GST_STIME_ARGS (lag),
      GST_TIME_ARGS (self->agg_latency), self->shed.p, self->shed.q);
  gst_qmetric_warn_overload (&self->report.warn, &self->shed,
      self->agg_latency);
  return !score;
}

/* Score the pair rbuf, dbuf (dcaps: dbuf's caps); all three are taken. */
static GstFlowReturn
compare_pair (GstQmetric * self, GstBuffer * rbuf, GstBuffer * dbuf,
    GstCaps * dcaps, GstClockTime rt)
{
  GstQmetricScoredPair *p;
  GstSegment *seg = &GST_AGGREGATOR_PAD (self->dist_pad)->segment;
  GstQmetricMapResult mr;
  gboolean gpu;
  unsigned flags;
  int err;
  const gint64 taken = g_get_monotonic_time ();

  /* a size or format change reaches the engine with the first pair in the
   * new caps (earlier pairs, queued before the caps event, keep theirs):
   * the pairs so far are scored, in order, and a new engine opens */
  if (self->engine && geometry_changed (&self->pair_dist_info,
          &self->engine_info)) {
    drain_all (self);
    self->reconfigured = TRUE;
  }
  /* both buffers are ours from here on: every exit path releases them */
  if (!formats_agree (self) || (!self->engine &&
          !open_engine (self, rt, gst_qmetric_caps_in_cuda (dcaps)))) {
    gst_buffer_unref (rbuf);
    gst_buffer_unref (dbuf);
    gst_clear_caps (&dcaps);
    return GST_FLOW_ERROR;
  }
  self->engine_info = self->pair_dist_info;
  p = g_new0 (GstQmetricScoredPair, 1);
  p->times.t[QM_FT_TAKEN] = taken;
  p->dist_buf = dbuf;
  p->caps = dcaps;
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
      cuda_access (self, rbuf, gpu), gpu);
  if (mr != GST_QMETRIC_MAP_OK) {
    skip_pair (self, p, rbuf, mr, "Reference", p->ref.problem);
    return GST_FLOW_OK;
  }
  mr = gst_qmetric_side_map (&p->dist, &self->pair_dist_info, dbuf,
      cuda_access (self, dbuf, gpu), gpu);
  if (mr != GST_QMETRIC_MAP_OK) {
    skip_pair (self, p, rbuf, mr, "Distorted", p->dist.problem);
    return GST_FLOW_OK;
  }
  gst_buffer_unref (rbuf);      /* the mapped frame holds its own ref */
  gst_qmetric_sides_share_color (&p->ref, &p->dist);
  qm_frame_times_stamp (&p->times, QM_FT_MAPPED);
  /* a skipped pair still goes through the engine, unscored, as subsample
   * leaves pairs out: motion sees every frame, so the pairs that are
   * scored get the scores of a run that scores them all */
  p->skipped = shed_skip (self, p);
  gst_qmetric_report_compared (&self->report, p);
  g_queue_push_tail (&self->out, p);
  flags = p->skipped ? QM_SUBMIT_SKIP : 0;

  err = qm_engine_submit_flags (self->engine, &p->ref.pic, &p->dist.pic, p,
      flags);
  if (err == QM_EAGAIN) {
    /* results are taken after every submit; this only happens if the
     * engine's ring is full of look-ahead: take them and try again */
    GstFlowReturn ret = drain (self, TRUE);
    /* a push that failed (flushing: a seek is under way) ends this call,
     * as it ends aggregate(); the pair goes with the flush, unscored.
     * Going on would score every frame queued before the seek reached
     * upstream (a backend whose ring fills with frames waiting for
     * results, such as CUDA's, comes here at every seek) */
    if (ret != GST_FLOW_OK || g_atomic_int_get (&self->seek_flushing)) {
      p->done = TRUE;
      return ret;
    }
    err = qm_engine_submit_flags (self->engine, &p->ref.pic, &p->dist.pic,
        p, flags);
  }
  if (err)
    return engine_failed (self, err);
  qm_frame_times_stamp (&p->times, QM_FT_SUBMITTED);
  return GST_FLOW_OK;
}


/* Carry out the pairing's decisions about the queued frames until it
 * waits (gstqmetricpairing.h).  done_all: both pads are over (end of the
 * comparison). */
static GstFlowReturn
pair_queued (GstQmetric * self, gint64 deadline, gboolean done_all)
{
  GstFlowReturn ret = GST_FLOW_OK;

  while (ret == GST_FLOW_OK && !g_atomic_int_get (&self->seek_flushing)) {
    GstQmetricPairingDecision d;

    gst_qmetric_pairing_next (&self->pairing, deadline, done_all, &d);
    /* pairing without timestamps is said once per mode, before the first
     * decision made that way is carried out */
    gst_qmetric_warn_mode (&self->report.warn, d.mode,
        d.action == GST_QMETRIC_PAIRING_DROP_REF);
    switch (d.action) {
      case GST_QMETRIC_PAIRING_WAIT:
        return ret;
      case GST_QMETRIC_PAIRING_NO_CAPS:
        GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
            ("Data arrived before caps on %s",
                GST_PAD_NAME (self->pairing.pad[d.pad])), (NULL));
        return GST_FLOW_NOT_NEGOTIATED;
      case GST_QMETRIC_PAIRING_TAKEN:
        if (GST_CLOCK_TIME_IS_VALID (d.late))
          gst_qmetric_report_late (&self->report, d.pad == QM_PAIR_REF,
              d.rt, d.late);
        break;
      case GST_QMETRIC_PAIRING_MATCH:
        self->pair_ref_info = d.ref_info;
        self->pair_dist_info = d.dist_info;
        ret = compare_pair (self, d.ref, d.dist, d.dist_caps, d.rt);
        /* what is scored leaves now, not when this loop ends: with frames
         * always waiting (behind, live), that is much later */
        if (ret == GST_FLOW_OK)
          ret = drain (self, FALSE);
        break;
      case GST_QMETRIC_PAIRING_DROP_REF:
        drop_ref (self, d.ref, d.rt, d.reason);
        break;
      case GST_QMETRIC_PAIRING_PASS_DIST:
        pass_dist (self, d.dist, d.dist_caps, d.rt, d.reason);
        break;
    }
  }
  return ret;
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
      while (gst_aggregator_pad_drop_buffer (GST_AGGREGATOR_PAD
              (self->pairing.pad[i])));
    return GST_FLOW_OK;
  }
  self->agg_latency = latency;
  if (self->ref_pad->have_info && self->dist_pad->have_info)
    gst_qmetric_warn_rates (&self->report.warn, &self->ref_pad->info,
        &self->dist_pad->info);
  /* (one latency query per call: while GstAggregator has no latency, each
   * one queries upstream, and may post a warning) */
  deadline = gst_qmetric_pairing_deadline (GST_ELEMENT (self), latency);
  GST_LOG_OBJECT (self, "aggregate (timeout %d), deadline %" G_GINT64_FORMAT
      ", latency %" GST_TIME_FORMAT, timeout, deadline,
      GST_TIME_ARGS (latency));
  if (timeout && deadline == QM_PAIR_NO_DEADLINE) {
    /* live without a clock reading: what made us time out has waited */
    deadline = gst_qmetric_to_pair_time (gst_qmetric_get_next_time (agg));
  }

  ret = pair_queued (self, deadline, FALSE);
  /* Not live, the comparison ends when both pads have: the frames the other
   * pad still sends are each counted (partner-timeout ends a pad that
   * never does).  Live, a partner may never send EOS: it ends once the
   * other pad can bring no partner for the ended pad's frames any more
   * (gstqmetricpairing.c), and the other pad's later frames get EOS
   * upstream. */
  if (ret == GST_FLOW_OK &&
      gst_qmetric_pairing_ended (&self->pairing, live, deadline)) {
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

static gboolean
gst_qmetric_sink_event (GstAggregator * agg, GstAggregatorPad * pad,
    GstEvent * event)
{
  GstQmetric *self = GST_QMETRIC (agg);
  GstQmetricPad *qpad = GST_QMETRIC_PAD (pad);
  gboolean is_dist = qpad == self->dist_pad;

  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:{
      GstCaps *caps;
      GstVideoInfo info;
      gboolean changed;

      gst_event_parse_caps (event, &caps);
      if (!gst_qmetric_info_from_caps (&info, caps)) {
        GST_ELEMENT_ERROR (self, STREAM, FORMAT,
            ("Invalid caps on %s", GST_PAD_NAME (pad)),
            ("%" GST_PTR_FORMAT, caps));
        gst_event_unref (event);
        return FALSE;
      }
      changed = qpad->have_info && geometry_changed (&info, &qpad->info);
      /* the frames that follow take these caps (the src pad takes the
       * distorted ones with the first frame in them: push_pair) */
      gst_qmetric_pad_set_caps (qpad, caps, &info);
      if (changed && self->report.n_features) {
        /* frames queued before this event keep their caps; the engine is
         * re-initialised at the first pair in the new ones (compare_pair) */
        GST_INFO_OBJECT (self, "%s changes to %dx%d %s",
            GST_PAD_NAME (pad), GST_VIDEO_INFO_WIDTH (&info),
            GST_VIDEO_INFO_HEIGHT (&info),
            gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (&info)));
      }
      if (self->ref_pad->have_info && self->dist_pad->have_info)
        gst_qmetric_warn_pad_differences (&self->report.warn,
            &self->ref_pad->info, &self->dist_pad->info);
      /* The engine opens at the first pad's caps, before any frame: the
       * other pad (a decoder, say) may send its caps only with its first
       * frame, and a set-up at the first pair (with the CUDA backend,
       * about 140 ms while seven other probes set theirs up) would hold
       * this thread while frames come, so that pairs whose two frames
       * arrived inside the latency are given up.  The look-ahead is
       * announced with it.  Caps that differ on the other pad are refused
       * at the first pair; a later change of size or format reopens it
       * there. */
      /* XPSNR's temporal order follows the distorted input's integer rate
       * (FFmpeg reads its second input's): an engine opened at the
       * reference's caps with another one, before any pair, opens again at
       * the first pair */
      if (is_dist && self->engine && self->report.n_pairs == 0 &&
          GST_VIDEO_INFO_FPS_D (&info) > 0 &&
          GST_VIDEO_INFO_FPS_D (&self->engine_info) > 0 &&
          GST_VIDEO_INFO_FPS_N (&info) / GST_VIDEO_INFO_FPS_D (&info) !=
          GST_VIDEO_INFO_FPS_N (&self->engine_info) /
          GST_VIDEO_INFO_FPS_D (&self->engine_info))
        qm_engine_close (&self->engine);
      else if (!self->engine &&
          gst_qmetric_format_lookup (GST_VIDEO_INFO_FORMAT (&info))) {
        self->pair_dist_info = info;
        if (!open_engine (self, GST_CLOCK_TIME_NONE,
                gst_qmetric_caps_in_cuda (caps))) {
          gst_event_unref (event);
          return FALSE;
        }
        self->engine_info = info;
      }
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

/* The pictures the element may hold (gstqmetricholds.h). */
static gboolean
answer_allocation (GstQmetric * self, GstQuery * query)
{
  guint threads;
  gboolean gpu;

  GST_OBJECT_LOCK (self);
  threads = self->threads;
  gpu = self->backend != QM_BACKEND_CPU;
  GST_OBJECT_UNLOCK (self);
  return gst_qmetric_answer_allocation (query, threads, gpu);
}

/* Serialized queries wait in the pad's queue until every buffer before
 * them is taken, and hold their sender meanwhile.  An allocation query is
 * answered at once instead: a tee sends it to both branches and waits for
 * both answers, so the reference branch stops until the distorted pad's
 * query is answered, and that pad's frames may be waiting for a reference
 * frame (GstAggregator, not live, calls aggregate() only when every pad
 * shows a buffer).  Queued, it would stall the pipeline for good at a
 * caps change on both pads. */
static gboolean
gst_qmetric_sink_query_pre_queue (GstAggregator * agg, GstAggregatorPad * pad,
    GstQuery * query)
{
  if (GST_QUERY_TYPE (query) == GST_QUERY_ALLOCATION)
    return answer_allocation (GST_QMETRIC (agg), query);
  return GST_AGGREGATOR_CLASS (parent_class)->sink_query_pre_queue (agg, pad,
      query);
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
    case GST_QUERY_ALLOCATION:
      return answer_allocation (self, query);
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
    gst_qmetric_scored_pair_free (g_queue_pop_head (&self->out));
}

static gboolean
gst_qmetric_start (GstAggregator * agg)
{
  GstQmetric *self = GST_QMETRIC (agg);
  GstClockTime timeout, tolerance;
  gchar *window;
  QmBackend be;
  gint dev;
  gboolean ok;

  GST_OBJECT_LOCK (self);
  window = g_strdup (self->window);
  timeout = self->partner_timeout;
  tolerance = self->pairing_tolerance;
  be = self->backend;
  dev = self->cuda_device_id;
  qm_shed_init (&self->shed, self->max_skip);
  /* each element its own jitter of the waits before a step up: probes that
   * fell behind together on one GPU then do not step up together.  From
   * the element's name, so that a pipeline run again sheds the same way */
  qm_shed_seed (&self->shed, g_str_hash (GST_OBJECT_NAME (self)));
  GST_OBJECT_UNLOCK (self);

  gst_qmetric_pad_forget_caps (self->ref_pad);
  gst_qmetric_pad_forget_caps (self->dist_pad);
  self->reconfigured = FALSE;
  self->finished = FALSE;
  self->agg_latency = GST_CLOCK_TIME_NONE;
  g_atomic_int_set (&self->seek_flushing, 0);
  ok = gst_qmetric_report_start (&self->report, window);
  g_free (window);
  /* a bad window property fails the start before the watchdog thread is
   * made: GstAggregator does not call stop() after a failed start, and the
   * thread would outlive the element */
  if (!ok)
    return FALSE;
  gst_qmetric_pairing_reset (&self->pairing);
  gst_qmetric_pairing_set_tolerance (&self->pairing, tolerance);
  gst_qmetric_watchdog_start (&self->watchdog, agg, self->ref_pad,
      self->dist_pad, timeout);
  /* share upstream's CUDA context (or make one) so that CUDA memory is
   * read without a copy; without a driver this fails and auto means CPU */
  if (be != QM_BACKEND_CPU && qm_have_cuda () &&
      !gst_qmetric_cuda_ensure (GST_ELEMENT (self), dev, &self->cuda_ctx))
    GST_INFO_OBJECT (self, "no GStreamer CUDA context");
  return TRUE;
}

static gboolean
gst_qmetric_stop (GstAggregator * agg)
{
  GstQmetric *self = GST_QMETRIC (agg);

  gst_qmetric_watchdog_stop (&self->watchdog);
  gst_qmetric_pairing_reset (&self->pairing);
  /* stopped without EOS (an application shutting down, say): score what
   * was submitted and still leave a complete log; nothing is pushed */
  if (self->engine) {
    qm_engine_flush (self->engine);
    collect (self, TRUE);
  }
  reset_stream (self);
  gst_qmetric_report_stop (&self->report, pool_methods (self));
  gst_clear_object (&self->cuda_ctx);
  gst_qmetric_pad_forget_caps (self->ref_pad);
  gst_qmetric_pad_forget_caps (self->dist_pad);
  gst_clear_caps (&self->src_caps);
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
  gst_qmetric_pairing_reset (&self->pairing);
  gst_qmetric_report_flush (&self->report, self->finished);
  self->finished = FALSE;
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
