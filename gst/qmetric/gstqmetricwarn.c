/* GStreamer qmetric: the element's warnings about its input
 * (gstqmetricwarn.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstqmetricwarn.h"

GST_DEBUG_CATEGORY_STATIC (gst_qmetric_warn_debug);
#define GST_CAT_DEFAULT gst_qmetric_warn_debug

void
gst_qmetric_warn_init (GstQmetricWarn * w, GstElement * element)
{
  GST_DEBUG_CATEGORY_INIT (gst_qmetric_warn_debug, "qmetricwarn", 0,
      "qmetric: warnings about the input");
  w->element = element;
  g_mutex_init (&w->lock);
}

void
gst_qmetric_warn_clear (GstQmetricWarn * w)
{
  g_mutex_clear (&w->lock);
}

void
gst_qmetric_warn_reset (GstQmetricWarn * w)
{
  const gchar *env = g_getenv ("QMETRIC_WARN_INTERVAL_MS");
  gint64 interval = env ? g_ascii_strtoll (env, NULL, 10) * 1000 :
      GST_QMETRIC_WARN_INTERVAL_US;
  guint i;

  g_mutex_lock (&w->lock);
  for (i = 0; i < GST_QMETRIC_WARN_N; i++)
    qm_rate_init (&w->rl[i], i == GST_QMETRIC_WARN_LATENCY ? 1 :
        GST_QMETRIC_WARN_BURST,
        interval > 0 ? interval : GST_QMETRIC_WARN_INTERVAL_US);
  g_mutex_unlock (&w->lock);
  w->modes = 0;
  w->rates_checked = FALSE;
  w->pad_diff = 0;
  w->foreign_ctx = FALSE;
}

guint64
gst_qmetric_warn_suppressed (GstQmetricWarn * w)
{
  guint64 n = 0;
  guint i;

  g_mutex_lock (&w->lock);
  for (i = 0; i < GST_QMETRIC_WARN_N; i++)
    n += w->rl[i].held_total;
  g_mutex_unlock (&w->lock);
  return n;
}

/* Whether a warning of `cause` may be posted now; if so, held[] is "" or
 * "; N similar warnings suppressed", for its text. */
static gboolean
pass (GstQmetricWarn * w, GstQmetricWarnCause cause, gchar held[64])
{
  guint64 n = 0;
  gboolean ok;

  g_mutex_lock (&w->lock);
  ok = qm_rate_pass (&w->rl[cause], g_get_monotonic_time (), &n);
  g_mutex_unlock (&w->lock);
  held[0] = 0;
  if (ok && n)
    g_snprintf (held, 64, "; %" G_GUINT64_FORMAT " similar warning%s "
        "suppressed", n, n == 1 ? "" : "s");
  return ok;
}

/* GstAggregator posts "Impossible to configure latency" (CORE, CLOCK) at
 * every latency query that finds max < min, and queries at every wake-up
 * while it has no latency: with a live pad that has no data, about 56 a
 * second. */
GstMessage *
gst_qmetric_warn_filter (GstQmetricWarn * w, GstMessage * msg)
{
  GError *err = NULL;
  gchar *dbg = NULL, held[64];

  if (GST_MESSAGE_TYPE (msg) != GST_MESSAGE_WARNING ||
      GST_MESSAGE_SRC (msg) != GST_OBJECT (w->element))
    return msg;
  gst_message_parse_warning (msg, &err, &dbg);
  if (err->domain == GST_CORE_ERROR && err->code == GST_CORE_ERROR_CLOCK) {
    if (!pass (w, GST_QMETRIC_WARN_LATENCY, held)) {
      gst_message_unref (msg);
      msg = NULL;
    } else {
      /* its text is the generic "clock problem": the reason is the last
       * line of the debug text; and how many like it were held back */
      const gchar *why = dbg ? strrchr (dbg, '\n') : NULL;
      GError *e = g_error_new (err->domain, err->code, "%s%s%s%s%s",
          why ? "Clock problem: " : err->message, why ? why + 1 : "",
          held[0] ? " (" : "", held[0] ? held + 2 : "", held[0] ? ")" : "");
      GstMessage *m = gst_message_new_warning (GST_MESSAGE_SRC (msg), e, dbg);
      gst_message_set_seqnum (m, gst_message_get_seqnum (msg));
      gst_message_unref (msg);
      msg = m;
      g_error_free (e);
    }
  }
  g_error_free (err);
  g_free (dbg);
  return msg;
}

void
gst_qmetric_warn_late (GstQmetricWarn * w, gboolean is_ref, GstClockTime rt,
    GstClockTime late, guint64 count)
{
  gchar held[64];

  if (pass (w, GST_QMETRIC_WARN_LATE, held))
    GST_ELEMENT_WARNING (w->element, STREAM, FAILED,
        ("%s frame at running time %" GST_TIME_FORMAT " arrived %"
            GST_TIME_FORMAT " after its partner stopped waiting; raise "
            "the latency property to pair frames this late (%"
            G_GUINT64_FORMAT " late frames so far%s)",
            is_ref ? "Reference" : "Distorted", GST_TIME_ARGS (rt),
            GST_TIME_ARGS (late), count, held), (NULL));
}

void
gst_qmetric_warn_unmatched (GstQmetricWarn * w, gboolean is_ref,
    GstClockTime rt, QmPairReason why, guint64 count)
{
  GstStructure *details;
  gchar held[64];

  if (!pass (w, is_ref ? GST_QMETRIC_WARN_UNMATCHED_REF :
          GST_QMETRIC_WARN_UNMATCHED_DIST, held))
    return;
  details = gst_structure_new ("qmetric-unmatched", "pad", G_TYPE_STRING,
      is_ref ? "ref_sink" : "dist_sink", "running-time", G_TYPE_UINT64, rt,
      "count", G_TYPE_UINT64, count, "reason", G_TYPE_STRING,
      qm_pair_reason_text (why), NULL);
  GST_ELEMENT_WARNING_WITH_DETAILS (w->element, STREAM, FAILED,
      ("%s frame at running time %" GST_TIME_FORMAT " has no %s frame (%s): "
          "it is not compared (%" G_GUINT64_FORMAT " such frames so far%s)",
          is_ref ? "Reference" : "Distorted", GST_TIME_ARGS (rt),
          is_ref ? "distorted" : "reference", qm_pair_reason_text (why),
          count, held), (NULL), ("details", GST_TYPE_STRUCTURE, details,
          NULL));
  /* the message holds a copy */
  gst_structure_free (details);
}

void
gst_qmetric_warn_not_compared (GstQmetricWarn * w, GstQmetricMapResult why,
    const gchar * side, GstClockTime rt, const gchar * problem, guint64 count)
{
  gchar held[64];

  if (why == GST_QMETRIC_MAP_OUT_OF_RANGE) {
    if (pass (w, GST_QMETRIC_WARN_OUT_OF_RANGE, held))
      GST_ELEMENT_WARNING (w->element, STREAM, FORMAT,
          ("%s frame at running time %" GST_TIME_FORMAT " has samples beyond "
              "its bit depth: %s; it is not compared (%" G_GUINT64_FORMAT
              " such pairs so far%s)", side, GST_TIME_ARGS (rt), problem,
              count, held), (NULL));
  } else if (pass (w, GST_QMETRIC_WARN_UNREADABLE, held)) {
    GST_ELEMENT_WARNING (w->element, STREAM, FORMAT,
        ("%s frame at running time %" GST_TIME_FORMAT " is unreadable: %s; "
            "it is not compared (%" G_GUINT64_FORMAT " such pairs so "
            "far%s)", side, GST_TIME_ARGS (rt), problem, count, held),
        (NULL));
  }
}

void
gst_qmetric_warn_overload (GstQmetricWarn * w, const QmShed * shed,
    GstClockTime latency)
{
  gchar held[64];

  if (shed->level == 0) {
    GST_ELEMENT_INFO (w->element, STREAM, FAILED,
        ("Keeping up again: scoring every pair (%.1f pairs/s)", shed->rate),
        (NULL));
  } else if (pass (w, GST_QMETRIC_WARN_OVERLOAD, held)) {
    GST_ELEMENT_WARNING (w->element, STREAM, FAILED,
        ("Falling behind: scoring %u pair%s in %u (%.1f of %.1f pairs/s) to "
            "stay within the latency (%" GST_TIME_FORMAT "); the other pairs "
            "pass downstream unscored and are counted as skipped (max-skip=%u"
            "%s)", shed->p, shed->p > 1 ? "s" : "", shed->q,
            shed->rate * qm_shed_share (shed), shed->rate,
            GST_TIME_ARGS (latency), shed->max_skip, held), (NULL));
  }
}

void
gst_qmetric_warn_mode (GstQmetricWarn * w, QmPairMode mode,
    gboolean drop_ref)
{
  if (mode == QM_PAIR_BY_TIME || (w->modes & (1u << mode)))
    return;
  w->modes |= 1u << mode;
  if (mode == QM_PAIR_MIXED)
    GST_ELEMENT_WARNING (w->element, STREAM, FAILED,
        ("%s frames have no timestamps while %s frames have them: such "
            "frames are never paired and are counted as unmatched",
            drop_ref ? "Reference" : "Distorted",
            drop_ref ? "distorted" : "reference"), (NULL));
  else
    GST_ELEMENT_WARNING (w->element, STREAM, FAILED,
        ("Frames without timestamps: pairing them %s",
            qm_pair_mode_text (mode)), (NULL));
}

/* Different rates are paired frame by frame, and the frames between pairs
 * are unmatched: said once, at the start. */
void
gst_qmetric_warn_rates (GstQmetricWarn * w, const GstVideoInfo * r,
    const GstVideoInfo * d)
{
  if (w->rates_checked)
    return;
  w->rates_checked = TRUE;
  if (GST_VIDEO_INFO_FPS_N (r) > 0 && GST_VIDEO_INFO_FPS_N (d) > 0 &&
      gst_util_fraction_compare (GST_VIDEO_INFO_FPS_N (r),
          GST_VIDEO_INFO_FPS_D (r), GST_VIDEO_INFO_FPS_N (d),
          GST_VIDEO_INFO_FPS_D (d)) != 0)
    GST_ELEMENT_WARNING (w->element, STREAM, FORMAT,
        ("Frame rates differ: reference %d/%d fps, distorted %d/%d fps; each "
            "frame is compared with the nearest frame of the other stream in "
            "running time, and frames without one are counted as unmatched",
            GST_VIDEO_INFO_FPS_N (r), GST_VIDEO_INFO_FPS_D (r),
            GST_VIDEO_INFO_FPS_N (d), GST_VIDEO_INFO_FPS_D (d)), (NULL));
}

/* What may differ between the pads without stopping the comparison, but
 * means the two streams are not what a user thinks they are. */
enum
{
  PAD_DIFF_INTERLACE = 1 << 0,
  PAD_DIFF_PAR = 1 << 1,
  PAD_DIFF_RANGE = 1 << 2,
};

static const gchar *
range_name (GstVideoColorRange range)
{
  return range == GST_VIDEO_COLOR_RANGE_0_255 ? "full" :
      range == GST_VIDEO_COLOR_RANGE_16_235 ? "limited" : "unknown";
}

/* The pictures are still compared sample by sample, which is what the user
 * asked for, but they should know. */
void
gst_qmetric_warn_pad_differences (GstQmetricWarn * w, const GstVideoInfo * r,
    const GstVideoInfo * d)
{
  guint diff = 0;
  GString *what;

  if (GST_VIDEO_INFO_INTERLACE_MODE (r) != GST_VIDEO_INFO_INTERLACE_MODE (d))
    diff |= PAD_DIFF_INTERLACE;
  if (GST_VIDEO_INFO_PAR_N (r) * (gint64) GST_VIDEO_INFO_PAR_D (d) !=
      GST_VIDEO_INFO_PAR_N (d) * (gint64) GST_VIDEO_INFO_PAR_D (r))
    diff |= PAD_DIFF_PAR;
  if (r->colorimetry.range != d->colorimetry.range)
    diff |= PAD_DIFF_RANGE;
  if (diff == w->pad_diff)
    return;
  w->pad_diff = diff;
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
        range_name (r->colorimetry.range), range_name (d->colorimetry.range));
  GST_ELEMENT_WARNING (w->element, STREAM, FORMAT,
      ("Reference and distorted video differ (%s); the samples are compared "
          "as they are", what->str + 2), (NULL));
  g_string_free (what, TRUE);
}

void
gst_qmetric_warn_foreign_context (GstQmetricWarn * w)
{
  if (w->foreign_ctx)
    return;
  w->foreign_ctx = TRUE;
  GST_ELEMENT_WARNING (w->element, STREAM, FAILED,
      ("CUDA memory from another CUDA context, which this element's "
          "context cannot access: frames are copied through system "
          "memory (slower; share one context, e.g. the same "
          "cuda-device-id upstream)"), (NULL));
}
