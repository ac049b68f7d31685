/* GStreamer qmetric: pairing the frames of the two sink pads
 * (gstqmetricpairing.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstqmetricpairing.h"

GST_DEBUG_CATEGORY_STATIC (gst_qmetric_pairing_debug);
#define GST_CAT_DEFAULT gst_qmetric_pairing_debug

void
gst_qmetric_pairing_init (GstQmetricPairing * pr, GstQmetricPad * ref,
    GstQmetricPad * dist)
{
  GST_DEBUG_CATEGORY_INIT (gst_qmetric_pairing_debug, "qmetricpairing", 0,
      "qmetric: pairing the frames of the sink pads");
  pr->pad[QM_PAIR_REF] = ref;
  pr->pad[QM_PAIR_DIST] = dist;
  pr->tolerance = -1;
  qm_pair_reset (&pr->state);
}

void
gst_qmetric_pairing_set_tolerance (GstQmetricPairing * pr,
    GstClockTime tolerance)
{
  pr->tolerance = GST_CLOCK_TIME_IS_VALID (tolerance) ?
      (gint64) MIN (tolerance, G_MAXINT64) : -1;
}

void
gst_qmetric_pairing_reset (GstQmetricPairing * pr)
{
  guint i;

  for (i = 0; i < 2; i++)
    gst_qmetric_pad_clear (pr->pad[i]);
  qm_pair_reset (&pr->state);
  pr->wake = 0;
  for (i = 0; i < 2; i++)
    gst_qmetric_pad_touch (pr->pad[i]);
}

/* Take the head buffer of pad i into its queue (d: TAKEN or NO_CAPS).
 * FALSE: nothing to take. */
static gboolean
take (GstQmetricPairing * pr, guint i, gint64 deadline,
    GstQmetricPairingDecision * d)
{
  GstQmetricPad *pad = pr->pad[i];
  const QmPairFrame *f;

  switch (gst_qmetric_pad_take (pad)) {
    case GST_QMETRIC_PAD_NOTHING:
      return FALSE;
    case GST_QMETRIC_PAD_NO_CAPS:
      d->action = GST_QMETRIC_PAIRING_NO_CAPS;
      d->pad = i;
      return TRUE;
    default:
      break;
  }
  f = &pad->f[pad->n - 1];
  GST_LOG_OBJECT (pad, "took frame %" G_GINT64_FORMAT ", deadline %"
      G_GINT64_FORMAT, f->t, deadline);
  d->action = GST_QMETRIC_PAIRING_TAKEN;
  d->pad = i;
  d->rt = gst_qmetric_from_pair_time (f->t);
  /* it came after the time its partner was allowed to wait */
  d->late = f->t >= 0 && deadline != QM_PAIR_NO_DEADLINE && f->t <= deadline ?
      (GstClockTime) (deadline - f->t) : GST_CLOCK_TIME_NONE;
  return TRUE;
}

GstQmetricPairingAction
gst_qmetric_pairing_next (GstQmetricPairing * pr, gint64 deadline,
    gboolean done_all, GstQmetricPairingDecision * d)
{
  GstQmetricPad *const *pad = pr->pad;
  QmPairInput in;
  QmPairDecision pd;
  guint i;

  memset (d, 0, sizeof (*d));
  d->rt = d->late = GST_CLOCK_TIME_NONE;
  pr->wake = 0;
  for (i = 0; i < 2; i++) {
    GstAggregatorPad *apad = GST_AGGREGATOR_PAD (pad[i]);
    in.f[i] = pad[i]->f;
    in.n[i] = pad[i]->n;
    /* nothing more will be looked at: ended, or the queue is full */
    in.done[i] = done_all || pad[i]->n >= GST_QMETRIC_PAD_QUEUE_MAX ||
        (gst_aggregator_pad_is_eos (apad) &&
        !gst_aggregator_pad_has_buffer (apad));
    in.more[i] = !in.done[i] && gst_aggregator_pad_has_buffer (apad);
  }
  in.deadline = deadline;
  in.tolerance = pr->tolerance;
  pd = qm_pair_decide (&pr->state, &in);

  if (pd.action == QM_PAIR_WAIT) {
    if (done_all || (pad[0]->n == 0 && pad[1]->n == 0)) {
      /* Not live, a frame is taken only with one of the other pad (or its
       * end) in sight: a pad whose frame waits here looks empty to
       * GstAggregator, which then calls aggregate() only once that pad
       * brings another frame, even when the other pad's frame is there */
      if (!done_all && deadline == QM_PAIR_NO_DEADLINE &&
          !((in.more[0] || in.done[0]) && (in.more[1] || in.done[1])))
        return d->action = GST_QMETRIC_PAIRING_WAIT;
      if (take (pr, QM_PAIR_REF, deadline, d) ||
          take (pr, QM_PAIR_DIST, deadline, d))
        return d->action;
      if (!done_all && deadline != QM_PAIR_NO_DEADLINE)
        pr->wake = (in.done[0] ? 0 : 1u << QM_PAIR_REF) |
            (in.done[1] ? 0 : 1u << QM_PAIR_DIST);
    } else if (take (pr, pd.need, deadline, d))
      return d->action;
    else if (deadline != QM_PAIR_NO_DEADLINE && !in.done[pd.need])
      pr->wake = 1u << pd.need;
    return d->action = GST_QMETRIC_PAIRING_WAIT;
  }

  GST_LOG_OBJECT (GST_OBJECT_PARENT (pad[0]), "decision %d (reason %d) on "
      "heads ref %" G_GINT64_FORMAT " dist %" G_GINT64_FORMAT " (queued %"
      G_GSIZE_FORMAT "/%" G_GSIZE_FORMAT ", more %d/%d), deadline %"
      G_GINT64_FORMAT, pd.action, pd.reason, in.n[0] ? in.f[0][0].t : -1,
      in.n[1] ? in.f[1][0].t : -1, in.n[0], in.n[1], in.more[0], in.more[1],
      deadline);
  qm_pair_apply (&pr->state, &in, &pd);
  d->mode = pd.mode;
  d->reason = pd.reason;
  switch (pd.action) {
    case QM_PAIR_MATCH:
      d->action = GST_QMETRIC_PAIRING_MATCH;
      d->rt = gst_qmetric_from_pair_time (pad[QM_PAIR_DIST]->f[0].t);
      d->ref = gst_qmetric_pad_pop (pad[QM_PAIR_REF], NULL, &d->ref_info);
      d->dist = gst_qmetric_pad_pop (pad[QM_PAIR_DIST], &d->dist_caps,
          &d->dist_info);
      break;
    case QM_PAIR_DROP_REF:
      d->action = GST_QMETRIC_PAIRING_DROP_REF;
      d->rt = gst_qmetric_from_pair_time (pad[QM_PAIR_REF]->f[0].t);
      d->ref = gst_qmetric_pad_pop (pad[QM_PAIR_REF], NULL, NULL);
      break;
    default:
      d->action = GST_QMETRIC_PAIRING_PASS_DIST;
      d->rt = gst_qmetric_from_pair_time (pad[QM_PAIR_DIST]->f[0].t);
      d->dist = gst_qmetric_pad_pop (pad[QM_PAIR_DIST], &d->dist_caps, NULL);
      break;
  }
  return d->action;
}

gint64
gst_qmetric_pairing_deadline (GstElement * element, GstClockTime latency)
{
  GstClockTime now, base;
  GstClock *clock;

  if (!GST_CLOCK_TIME_IS_VALID (latency))
    return QM_PAIR_NO_DEADLINE;
  clock = gst_element_get_clock (element);
  if (!clock)
    return QM_PAIR_NO_DEADLINE;
  now = gst_clock_get_time (clock);
  base = gst_element_get_base_time (element);
  gst_object_unref (clock);
  if (now < base + latency)
    return -1;                  /* nothing has waited that long yet */
  return gst_qmetric_to_pair_time (now - base - latency);
}

/* Live, once one pad has ended: whether the other pad can still bring a
 * partner for the ended pad's frames.  It cannot when it has ended too,
 * when it has already sent a frame later than the ended pad's end time
 * (gst_qmetric_pad_end_time()), or when the deadline (the clock less the
 * latency) has passed that time: its partners would be late.  Until then
 * the other pad's last frames, still upstream within the latency, may
 * bring partners that count. */
static gboolean
live_may_end (GstQmetricPairing * pr, gint64 deadline)
{
  gboolean over_r = gst_qmetric_pad_over (pr->pad[QM_PAIR_REF]);
  gboolean over_d = gst_qmetric_pad_over (pr->pad[QM_PAIR_DIST]);
  GstQmetricPad *other;
  gint64 end;
  GstBuffer *head;

  if (over_r == over_d)
    return over_r;
  other = pr->pad[over_r ? QM_PAIR_DIST : QM_PAIR_REF];
  end = gst_qmetric_pad_end_time (pr->pad[over_r ? QM_PAIR_REF :
          QM_PAIR_DIST], pr->tolerance);
  if (end < 0 || (deadline != QM_PAIR_NO_DEADLINE && deadline >= end))
    return TRUE;
  if (GST_CLOCK_TIME_IS_VALID (other->prev_t) && (gint64) other->prev_t > end)
    return TRUE;
  if ((head = gst_aggregator_pad_peek_buffer (GST_AGGREGATOR_PAD (other)))) {
    gint64 t = gst_qmetric_to_pair_time (gst_qmetric_pad_running_time (other,
            head));
    gst_buffer_unref (head);
    if (t > end)
      return TRUE;
  }
  return FALSE;
}

gboolean
gst_qmetric_pairing_ended (GstQmetricPairing * pr, gboolean live,
    gint64 deadline)
{
  if (live)
    return live_may_end (pr, deadline);
  return gst_qmetric_pad_over (pr->pad[QM_PAIR_REF]) &&
      gst_qmetric_pad_over (pr->pad[QM_PAIR_DIST]);
}

GstClockTime
gst_qmetric_pairing_next_time (GstQmetricPairing * pr, GstClockTime next)
{
  guint i;

  /* Live, GstAggregator calls aggregate() when every pad holds a buffer,
   * or at a timeout.  The frames taken into the pads' own queues leave
   * their aggregator pads empty: a partner (or the frame a WAIT needs)
   * that comes after them would wait for the other pad's next buffer,
   * about a frame period, or for the timeout.  Its arrival wakes the
   * aggregator, which asks for the next time again: a time in the past
   * makes it call aggregate() at once, which takes that buffer (so this
   * never repeats without progress). */
  for (i = 0; i < 2; i++)
    if ((pr->wake & (1u << i)) &&
        gst_aggregator_pad_has_buffer (GST_AGGREGATOR_PAD (pr->pad[i])))
      return 0;

  for (i = 0; i < 2; i++) {
    GstQmetricPad *pad = pr->pad[i];
    GstBuffer *buf = gst_aggregator_pad_peek_buffer (GST_AGGREGATOR_PAD (pad));
    GstClockTime rt;

    /* a pad at EOS ends the comparison once the other pad can bring no
     * more partners (live_may_end): time out at once when that is so
     * (a live partner may never send EOS), else when the clock passes the
     * last time a partner could have (plus the latency) */
    if (!buf && gst_aggregator_pad_is_eos (GST_AGGREGATOR_PAD (pad))) {
      gint64 end;

      /* (no deadline here: GstAggregator calls get_next_time() holding
       * the lock that gst_aggregator_get_latency() takes; a time in the
       * past makes it time out at once, and aggregate() compares with the
       * clock) */
      if (pad->n > 0 || live_may_end (pr, QM_PAIR_NO_DEADLINE) ||
          (end = gst_qmetric_pad_end_time (pad, pr->tolerance)) < 0)
        return 0;
      if (!GST_CLOCK_TIME_IS_VALID (next) || (GstClockTime) end < next)
        next = (GstClockTime) end;
      continue;
    }
    rt = gst_qmetric_pad_earliest (pad, buf);
    gst_clear_buffer (&buf);
    if (GST_CLOCK_TIME_IS_VALID (rt) && (!GST_CLOCK_TIME_IS_VALID (next)
            || rt < next))
      next = rt;
  }
  return next;
}
