/* GStreamer qmetric: which frames of the two sink pads are compared.
 *
 * The rule is core/pair.c's (no GStreamer); this module feeds it from the
 * pads (gstqmetricpad.h), taking a frame off a pad only when the decision
 * needs it, and answers with a decision the element carries out: compare
 * these two frames, drop this reference frame, pass this distorted frame
 * unscored, or wait.  It never posts, pushes or scores anything itself.
 * Live, it also says until when a frame may wait for its partner (the
 * clock less the latency) and when the comparison may end after one pad's
 * EOS.  The aggregator's streaming thread only. */
#ifndef __GST_QMETRIC_PAIRING_H__
#define __GST_QMETRIC_PAIRING_H__

#include <gst/gst.h>
#include <gst/video/video.h>

#include "gstqmetricpad.h"
#include "pair.h"

G_BEGIN_DECLS

typedef enum
{
  /* nothing to decide before a pad brings a frame or EOS, or (live) the
   * clock passes a deadline */
  GST_QMETRIC_PAIRING_WAIT,
  /* a frame was taken off a pad (d->pad) to decide: ask again */
  GST_QMETRIC_PAIRING_TAKEN,
  /* d->ref and d->dist are a pair */
  GST_QMETRIC_PAIRING_MATCH,
  /* d->ref has no partner */
  GST_QMETRIC_PAIRING_DROP_REF,
  /* d->dist has no partner: it goes downstream unscored */
  GST_QMETRIC_PAIRING_PASS_DIST,
  /* data before caps on d->pad (the buffer is dropped): an error */
  GST_QMETRIC_PAIRING_NO_CAPS,
} GstQmetricPairingAction;

typedef struct
{
  GstQmetricPairingAction action;
  guint pad;                    /* TAKEN, NO_CAPS: QM_PAIR_REF/QM_PAIR_DIST */
  QmPairMode mode;              /* MATCH, DROP_REF, PASS_DIST; else
                                 * QM_PAIR_BY_TIME */
  QmPairReason reason;          /* DROP_REF, PASS_DIST: why unmatched */
  /* MATCH: the distorted frame's running time; DROP_REF, PASS_DIST, TAKEN:
   * the frame's (GST_CLOCK_TIME_NONE if it has none) */
  GstClockTime rt;
  /* TAKEN, live: how long after its partner stopped waiting the frame
   * arrived, else GST_CLOCK_TIME_NONE */
  GstClockTime late;
  /* the frames the decision takes off the queues: the caller's */
  GstBuffer *ref, *dist;
  GstCaps *dist_caps;           /* MATCH, PASS_DIST: the distorted frame's */
  GstVideoInfo ref_info, dist_info;     /* MATCH: the caps they came in */
} GstQmetricPairingDecision;

typedef struct
{
  GstQmetricPad *pad[2];        /* [QM_PAIR_REF], [QM_PAIR_DIST] */
  QmPairState state;
  gint64 tolerance;             /* >= 0: pairing-tolerance; -1: derived */
  /* live: the pads whose next buffer lets the last WAIT go on (a bit a
   * pad: 1 << QM_PAIR_REF, 1 << QM_PAIR_DIST); read by
   * gst_qmetric_pairing_next_time() */
  guint wake;
} GstQmetricPairing;

void gst_qmetric_pairing_init (GstQmetricPairing * pr, GstQmetricPad * ref,
    GstQmetricPad * dist);
/* The pairing-tolerance property (ns, GST_CLOCK_TIME_NONE: derived). */
void gst_qmetric_pairing_set_tolerance (GstQmetricPairing * pr,
    GstClockTime tolerance);
/* Start afresh (start, flushing seek): the queued frames are released,
 * nothing is remembered, and both pads count as having just had data. */
void gst_qmetric_pairing_reset (GstQmetricPairing * pr);

/* The next step.  deadline: frames at or before this running time waited
 * long enough (gst_qmetric_pairing_deadline()); done_all: both pads are
 * over, decide everything queued. */
GstQmetricPairingAction gst_qmetric_pairing_next (GstQmetricPairing * pr,
    gint64 deadline, gboolean done_all, GstQmetricPairingDecision * d);

/* Live (latency: the aggregator's; GST_CLOCK_TIME_NONE, not live): frames
 * whose running time is at or before the returned one have waited the
 * whole latency for a partner; -1 when nothing has waited that long yet.
 * Not live, or without a clock: QM_PAIR_NO_DEADLINE. */
gint64 gst_qmetric_pairing_deadline (GstElement * element,
    GstClockTime latency);

/* Whether the comparison is over: not live, when both pads are over; live,
 * once one pad is over and the other can bring no partner for its frames
 * any more (gstqmetricpairing.c, live_may_end()). */
gboolean gst_qmetric_pairing_ended (GstQmetricPairing * pr, gboolean live,
    gint64 deadline);

/* Live: the running time at which a frame waiting for a partner times out
 * (GstAggregatorClass.get_next_time), at the latest `next`; 0: at once. */
GstClockTime gst_qmetric_pairing_next_time (GstQmetricPairing * pr,
    GstClockTime next);

G_END_DECLS

#endif /* __GST_QMETRIC_PAIRING_H__ */
