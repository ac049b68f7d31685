/* GStreamer qmetric: a sink pad of the element.
 *
 * A GstAggregatorPad shows only its head buffer; pairing needs to look a few
 * frames ahead on each pad, so the frames it takes wait here, each with its
 * pairing description (core/pair.h), the caps it came in and its running
 * time.  The pad also keeps its caps in stream order and the time its last
 * buffer arrived (the partner-timeout watchdog's clue).
 *
 * Threads: the queue and the caps belong to the aggregator's streaming
 * thread; n_shared and the time of the last data may be read by any (the
 * watchdog's). */
#ifndef __GST_QMETRIC_PAD_H__
#define __GST_QMETRIC_PAD_H__

#include <gst/gst.h>
#include <gst/base/gstaggregator.h>
#include <gst/video/video.h>

#include "pair.h"

G_BEGIN_DECLS

/* frames held per sink pad while their partners are looked for.  They are
 * taken only as the decision needs them, so a queue rarely holds more than
 * two; the rest is room for reordered timestamps, and a full queue ends the
 * wait (core/pair.h) */
#define GST_QMETRIC_PAD_QUEUE_MAX 8

/* GStreamer times <-> core/pair.h's (signed, QM_PAIR_NO_TIME) */
static inline gint64
gst_qmetric_to_pair_time (GstClockTime t)
{
  return GST_CLOCK_TIME_IS_VALID (t) && t <= G_MAXINT64 ? (gint64) t :
      QM_PAIR_NO_TIME;
}

static inline GstClockTime
gst_qmetric_from_pair_time (gint64 t)
{
  return t >= 0 ? (GstClockTime) t : GST_CLOCK_TIME_NONE;
}

#define GST_TYPE_QMETRIC_PAD (gst_qmetric_pad_get_type ())
G_DECLARE_FINAL_TYPE (GstQmetricPad, gst_qmetric_pad, GST, QMETRIC_PAD,
    GstAggregatorPad);

struct _GstQmetricPad
{
  GstAggregatorPad parent;

  /* the latest caps, in stream order: set from the CAPS event, which the
   * aggregator hands over once the frames queued before it are taken */
  GstVideoInfo info;
  gboolean have_info;
  GstCaps *caps;

  /* frames taken for pairing, oldest first; each with the caps it came in
   * (a caps change may arrive while earlier frames still wait here) */
  GstBuffer *buf[GST_QMETRIC_PAD_QUEUE_MAX];
  QmPairFrame f[GST_QMETRIC_PAD_QUEUE_MAX];
  GstVideoInfo frame_info[GST_QMETRIC_PAD_QUEUE_MAX];
  GstCaps *frame_caps[GST_QMETRIC_PAD_QUEUE_MAX];
  guint n;
  gint n_shared;                /* n, for other threads (atomic) */
  GstClockTime prev_t;          /* last timed frame's running time */
  gint64 last_dur;              /* and its duration, or -1 */

  /* monotonic time (us) of the last buffer, under data_lock */
  GMutex data_lock;
  gint64 last_data_us;
};

/* The running time of buf on this pad (its PTS, else its DTS), or
 * GST_CLOCK_TIME_NONE. */
GstClockTime gst_qmetric_pad_running_time (GstQmetricPad * pad,
    GstBuffer * buf);

/* A CAPS event: the pad's caps from now on (info parsed from caps). */
void gst_qmetric_pad_set_caps (GstQmetricPad * pad, GstCaps * caps,
    const GstVideoInfo * info);
/* No caps any more (stop, start). */
void gst_qmetric_pad_forget_caps (GstQmetricPad * pad);

/* What gst_qmetric_pad_take() did. */
typedef enum
{
  GST_QMETRIC_PAD_TAKEN,        /* the head buffer is now queued here */
  GST_QMETRIC_PAD_NOTHING,      /* no buffer, or the queue is full */
  GST_QMETRIC_PAD_NO_CAPS,      /* a buffer before any caps: dropped */
} GstQmetricPadTake;

/* Take the aggregator's head buffer into the queue (the streaming thread
 * only: the buffer stays there until this pop).  The new frame is
 * pad->f[pad->n - 1]. */
GstQmetricPadTake gst_qmetric_pad_take (GstQmetricPad * pad);

/* Remove the queue's head.  The caller owns the buffer, and its caps if it
 * asks for them (else they are released); info (optional) receives the
 * frame's video info. */
GstBuffer *gst_qmetric_pad_pop (GstQmetricPad * pad, GstCaps ** caps,
    GstVideoInfo * info);

/* Empty the queue and forget the last frame's time. */
void gst_qmetric_pad_clear (GstQmetricPad * pad);

/* The earliest running time of the frames waiting on this pad: those
 * queued here and head, the aggregator's head buffer (or NULL); or
 * GST_CLOCK_TIME_NONE. */
GstClockTime gst_qmetric_pad_earliest (GstQmetricPad * pad,
    GstBuffer * head);

/* Live: the latest running time at which a frame of the other pad could
 * still pair with this pad's last frame (its start plus its duration, or
 * plus the tolerance when that is given (>= 0) and longer), or -1 when the
 * pad had no timed frame. */
gint64 gst_qmetric_pad_end_time (GstQmetricPad * pad, gint64 tolerance);

/* Nothing here: no buffer queued here or in the aggregator, no EOS. */
gboolean gst_qmetric_pad_starved (GstQmetricPad * pad);
/* Frames wait here for a partner, or the pad has ended. */
gboolean gst_qmetric_pad_waiting (GstQmetricPad * pad);
/* Ended, and everything it sent has left the queue. */
gboolean gst_qmetric_pad_over (GstQmetricPad * pad);

/* Data counts as arrived now (start, flush, a frame taken). */
void gst_qmetric_pad_touch (GstQmetricPad * pad);
gint64 gst_qmetric_pad_last_data (GstQmetricPad * pad);
/* The pad was silent since `since` (its last_data): mark it so that it is
 * reported once.  FALSE if data came meanwhile. */
gboolean gst_qmetric_pad_claim_silence (GstQmetricPad * pad, gint64 since);

G_END_DECLS

#endif /* __GST_QMETRIC_PAD_H__ */
