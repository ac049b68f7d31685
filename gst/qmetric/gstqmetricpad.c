/* GStreamer qmetric: the element's sink pad (gstqmetricpad.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstqmetricpad.h"

G_DEFINE_TYPE (GstQmetricPad, gst_qmetric_pad, GST_TYPE_AGGREGATOR_PAD);

/* every buffer that reaches the pad, before the aggregator queues it */
static GstPadProbeReturn
data_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  gst_qmetric_pad_touch (GST_QMETRIC_PAD (pad));
  return GST_PAD_PROBE_OK;
}

static void
gst_qmetric_pad_constructed (GObject * object)
{
  G_OBJECT_CLASS (gst_qmetric_pad_parent_class)->constructed (object);
  gst_pad_add_probe (GST_PAD (object), GST_PAD_PROBE_TYPE_BUFFER |
      GST_PAD_PROBE_TYPE_BUFFER_LIST, data_probe, NULL, NULL);
}

static void
gst_qmetric_pad_finalize (GObject * object)
{
  GstQmetricPad *pad = GST_QMETRIC_PAD (object);

  gst_qmetric_pad_clear (pad);
  gst_clear_caps (&pad->caps);
  g_mutex_clear (&pad->data_lock);
  G_OBJECT_CLASS (gst_qmetric_pad_parent_class)->finalize (object);
}

static void
gst_qmetric_pad_class_init (GstQmetricPadClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);

  gobject_class->constructed = gst_qmetric_pad_constructed;
  gobject_class->finalize = gst_qmetric_pad_finalize;
}

static void
gst_qmetric_pad_init (GstQmetricPad * pad)
{
  g_mutex_init (&pad->data_lock);
  pad->prev_t = GST_CLOCK_TIME_NONE;
  pad->last_dur = -1;
  pad->last_data_us = g_get_monotonic_time ();
}

GstClockTime
gst_qmetric_pad_running_time (GstQmetricPad * pad, GstBuffer * buf)
{
  GstAggregatorPad *apad = GST_AGGREGATOR_PAD (pad);
  GstClockTime ts = GST_BUFFER_PTS (buf);

  if (!GST_CLOCK_TIME_IS_VALID (ts))
    ts = GST_BUFFER_DTS (buf);
  if (!GST_CLOCK_TIME_IS_VALID (ts) || apad->segment.format != GST_FORMAT_TIME)
    return GST_CLOCK_TIME_NONE;
  return gst_segment_to_running_time (&apad->segment, GST_FORMAT_TIME, ts);
}

void
gst_qmetric_pad_set_caps (GstQmetricPad * pad, GstCaps * caps,
    const GstVideoInfo * info)
{
  pad->info = *info;
  pad->have_info = TRUE;
  gst_caps_replace (&pad->caps, caps);
}

void
gst_qmetric_pad_forget_caps (GstQmetricPad * pad)
{
  pad->have_info = FALSE;
  gst_clear_caps (&pad->caps);
}

/* The duration of a frame: its own, else the caps' frame rate, else the
 * distance from the previous frame of the pad. */
static gint64
frame_duration (GstQmetricPad * pad, GstBuffer * buf, gint64 t)
{
  const GstVideoInfo *info = &pad->info;

  if (GST_BUFFER_DURATION_IS_VALID (buf))
    return gst_qmetric_to_pair_time (GST_BUFFER_DURATION (buf));
  if (GST_VIDEO_INFO_FPS_N (info) > 0 && GST_VIDEO_INFO_FPS_D (info) > 0)
    return gst_qmetric_to_pair_time (gst_util_uint64_scale_int (GST_SECOND,
            GST_VIDEO_INFO_FPS_D (info), GST_VIDEO_INFO_FPS_N (info)));
  if (t >= 0 && GST_CLOCK_TIME_IS_VALID (pad->prev_t)
      && (GstClockTime) t > pad->prev_t)
    return t - (gint64) pad->prev_t;
  return QM_PAIR_NO_TIME;
}

GstQmetricPadTake
gst_qmetric_pad_take (GstQmetricPad * pad)
{
  GstAggregatorPad *apad = GST_AGGREGATOR_PAD (pad);
  QmPairFrame *f = &pad->f[pad->n];
  GstBuffer *buf;

  if (pad->n >= GST_QMETRIC_PAD_QUEUE_MAX ||
      !gst_aggregator_pad_has_buffer (apad))
    return GST_QMETRIC_PAD_NOTHING;
  /* the pad's upstream may have been blocked on the full pad: its silence
   * counts from now, not from its last buffer (partner-timeout); set before
   * the pop so that the watchdog never sees the pad empty and silent */
  gst_qmetric_pad_touch (pad);
  /* only this thread takes buffers: has_buffer stays true until the pop */
  if (!(buf = gst_aggregator_pad_pop_buffer (apad)))
    return GST_QMETRIC_PAD_NOTHING;
  if (!pad->have_info) {
    gst_buffer_unref (buf);
    return GST_QMETRIC_PAD_NO_CAPS;
  }
  f->t = gst_qmetric_to_pair_time (gst_qmetric_pad_running_time (pad, buf));
  f->dur = frame_duration (pad, buf, f->t);
  f->offset = GST_BUFFER_OFFSET_IS_VALID (buf) ? GST_BUFFER_OFFSET (buf) :
      QM_PAIR_NO_OFFSET;
  f->discont = GST_BUFFER_IS_DISCONT (buf);
  if (f->t >= 0) {
    pad->prev_t = f->t;
    pad->last_dur = f->dur;
  }
  pad->frame_info[pad->n] = pad->info;
  pad->frame_caps[pad->n] = pad->caps ? gst_caps_ref (pad->caps) : NULL;
  pad->buf[pad->n++] = buf;
  g_atomic_int_set (&pad->n_shared, pad->n);
  return GST_QMETRIC_PAD_TAKEN;
}

GstBuffer *
gst_qmetric_pad_pop (GstQmetricPad * pad, GstCaps ** caps,
    GstVideoInfo * info)
{
  GstBuffer *buf = pad->buf[0];

  if (caps)
    *caps = pad->frame_caps[0];
  else
    gst_clear_caps (&pad->frame_caps[0]);
  if (info)
    *info = pad->frame_info[0];
  pad->n--;
  memmove (pad->buf, pad->buf + 1, pad->n * sizeof (pad->buf[0]));
  memmove (pad->frame_caps, pad->frame_caps + 1,
      pad->n * sizeof (pad->frame_caps[0]));
  memmove (pad->f, pad->f + 1, pad->n * sizeof (pad->f[0]));
  memmove (pad->frame_info, pad->frame_info + 1,
      pad->n * sizeof (pad->frame_info[0]));
  g_atomic_int_set (&pad->n_shared, pad->n);
  return buf;
}

void
gst_qmetric_pad_clear (GstQmetricPad * pad)
{
  guint i;

  for (i = 0; i < pad->n; i++) {
    gst_buffer_unref (pad->buf[i]);
    gst_clear_caps (&pad->frame_caps[i]);
  }
  pad->n = 0;
  g_atomic_int_set (&pad->n_shared, 0);
  pad->prev_t = GST_CLOCK_TIME_NONE;
  pad->last_dur = -1;
}

GstClockTime
gst_qmetric_pad_earliest (GstQmetricPad * pad, GstBuffer * head)
{
  GstClockTime rt = head ? gst_qmetric_pad_running_time (pad, head) :
      GST_CLOCK_TIME_NONE;
  guint k;

  for (k = 0; k < pad->n; k++) {
    GstClockTime t = pad->f[k].t >= 0 ? (GstClockTime) pad->f[k].t :
        GST_CLOCK_TIME_NONE;
    if (GST_CLOCK_TIME_IS_VALID (t) && (!GST_CLOCK_TIME_IS_VALID (rt)
            || t < rt))
      rt = t;
  }
  return rt;
}

gint64
gst_qmetric_pad_end_time (GstQmetricPad * pad, gint64 tolerance)
{
  gint64 span = pad->last_dur > 0 ? pad->last_dur : 0;

  if (!GST_CLOCK_TIME_IS_VALID (pad->prev_t))
    return -1;
  if (tolerance >= 0 && tolerance < G_MAXINT64 && tolerance > span)
    span = tolerance;
  return (gint64) pad->prev_t + span;
}

gboolean
gst_qmetric_pad_starved (GstQmetricPad * pad)
{
  GstAggregatorPad *apad = GST_AGGREGATOR_PAD (pad);

  return !gst_aggregator_pad_is_eos (apad) &&
      !gst_aggregator_pad_has_buffer (apad) &&
      g_atomic_int_get (&pad->n_shared) == 0;
}

gboolean
gst_qmetric_pad_waiting (GstQmetricPad * pad)
{
  GstAggregatorPad *apad = GST_AGGREGATOR_PAD (pad);

  return gst_aggregator_pad_is_eos (apad) ||
      gst_aggregator_pad_has_buffer (apad) ||
      g_atomic_int_get (&pad->n_shared) > 0;
}

gboolean
gst_qmetric_pad_over (GstQmetricPad * pad)
{
  GstAggregatorPad *apad = GST_AGGREGATOR_PAD (pad);

  return gst_aggregator_pad_is_eos (apad) &&
      !gst_aggregator_pad_has_buffer (apad) && pad->n == 0;
}

void
gst_qmetric_pad_touch (GstQmetricPad * pad)
{
  g_mutex_lock (&pad->data_lock);
  pad->last_data_us = g_get_monotonic_time ();
  g_mutex_unlock (&pad->data_lock);
}

gint64
gst_qmetric_pad_last_data (GstQmetricPad * pad)
{
  gint64 t;

  g_mutex_lock (&pad->data_lock);
  t = pad->last_data_us;
  g_mutex_unlock (&pad->data_lock);
  return t;
}

gboolean
gst_qmetric_pad_claim_silence (GstQmetricPad * pad, gint64 since)
{
  gboolean same;

  g_mutex_lock (&pad->data_lock);
  same = pad->last_data_us == since;
  /* far in the future: the pad counts as silent once, until its next data
   * (or a start or flush) */
  if (same)
    pad->last_data_us = G_MAXINT64 / 2;
  g_mutex_unlock (&pad->data_lock);
  return same;
}
