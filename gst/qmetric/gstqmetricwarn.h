/* GStreamer qmetric: the element's warnings about its input.
 *
 * Warnings that can come with every frame (a late or unmatched frame, an
 * unreadable one, falling behind, GstAggregator's latency complaint) are
 * rate-limited per cause (qmratelimit.h): the first GST_QMETRIC_WARN_BURST
 * pass, then one per interval, which says how many like it were held back
 * (docs/element.md, "Warnings").  Notices about the stream as a whole
 * (different rates, pairing without timestamps, caps that differ, CUDA
 * memory of a foreign context) are posted once.  The counts in a text are
 * the caller's.  Any thread may post a rate-limited warning. */
#ifndef __GST_QMETRIC_WARN_H__
#define __GST_QMETRIC_WARN_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "gstqmetricframe.h"
#include "pair.h"
#include "qmratelimit.h"
#include "qmshed.h"

G_BEGIN_DECLS

typedef enum
{
  GST_QMETRIC_WARN_LATE,
  GST_QMETRIC_WARN_UNMATCHED_REF,
  GST_QMETRIC_WARN_UNMATCHED_DIST,
  GST_QMETRIC_WARN_UNREADABLE,
  GST_QMETRIC_WARN_OUT_OF_RANGE,
  /* GstAggregator: "Impossible to configure latency", at every latency
   * query; the same text every time, so the first passes, not a burst */
  GST_QMETRIC_WARN_LATENCY,
  GST_QMETRIC_WARN_OVERLOAD,
  GST_QMETRIC_WARN_N
} GstQmetricWarnCause;

#define GST_QMETRIC_WARN_BURST 20
/* QMETRIC_WARN_INTERVAL_MS overrides it (tests) */
#define GST_QMETRIC_WARN_INTERVAL_US (10 * G_USEC_PER_SEC)

typedef struct
{
  GstElement *element;
  GMutex lock;                  /* the limiters */
  QmRateLimit rl[GST_QMETRIC_WARN_N];
  /* streaming thread only: what was said once */
  guint modes;                  /* 1 << QmPairMode */
  gboolean rates_checked;
  guint pad_diff;               /* the differences last warned about */
  gboolean foreign_ctx;
} GstQmetricWarn;

void gst_qmetric_warn_init (GstQmetricWarn * w, GstElement * element);
void gst_qmetric_warn_clear (GstQmetricWarn * w);
/* A new stream (start): limiters afresh, nothing said yet. */
void gst_qmetric_warn_reset (GstQmetricWarn * w);
/* Warnings held back since the reset (the summary's). */
guint64 gst_qmetric_warn_suppressed (GstQmetricWarn * w);

/* GstElementClass.post_message: the element's own CORE/CLOCK warning
 * (GstAggregator's latency complaint) through its limiter, its text made
 * specific; NULL when held back (msg is consumed).  Other messages are
 * returned as they are. */
GstMessage *gst_qmetric_warn_filter (GstQmetricWarn * w, GstMessage * msg);

/* A frame at running time rt arrived `late` after its partner stopped
 * waiting; count: late frames so far. */
void gst_qmetric_warn_late (GstQmetricWarn * w, gboolean is_ref,
    GstClockTime rt, GstClockTime late, guint64 count);
/* A frame with no partner; count: such frames of its pad so far. */
void gst_qmetric_warn_unmatched (GstQmetricWarn * w, gboolean is_ref,
    GstClockTime rt, QmPairReason why, guint64 count);
/* A pair not compared: a frame that could not be mapped or whose samples
 * exceed its bit depth (why), side "Reference" or "Distorted"; count: such
 * pairs so far. */
void gst_qmetric_warn_not_compared (GstQmetricWarn * w,
    GstQmetricMapResult why, const gchar * side, GstClockTime rt,
    const gchar * problem, guint64 count);
/* The share of pairs scored changed (shed: after the change). */
void gst_qmetric_warn_overload (GstQmetricWarn * w, const QmShed * shed,
    GstClockTime latency);

/* Frames paired without timestamps (mode), once per mode; drop_ref: the
 * decision dropped a reference frame (for QM_PAIR_MIXED: which pad has no
 * timestamps). */
void gst_qmetric_warn_mode (GstQmetricWarn * w, QmPairMode mode,
    gboolean drop_ref);
/* Once both caps are known: different frame rates. */
void gst_qmetric_warn_rates (GstQmetricWarn * w, const GstVideoInfo * r,
    const GstVideoInfo * d);
/* At every caps: interlacing, pixel aspect ratio or range that differ
 * (once per combination). */
void gst_qmetric_warn_pad_differences (GstQmetricWarn * w,
    const GstVideoInfo * r, const GstVideoInfo * d);
/* CUDA memory of a context this element cannot reach (once). */
void gst_qmetric_warn_foreign_context (GstQmetricWarn * w);

G_END_DECLS

#endif /* __GST_QMETRIC_WARN_H__ */
