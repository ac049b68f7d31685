/* GStreamer qmetric: one distorted frame on its way out, with the scores of
 * its pair once the engine has them. */
#ifndef __GST_QMETRIC_SCORED_PAIR_H__
#define __GST_QMETRIC_SCORED_PAIR_H__

#include <gst/gst.h>

#include "gstqmetricframe.h"
#include "qmframetimes.h"

G_BEGIN_DECLS

/* From the pairing decision to the push of its distorted frame, in output
 * order.  The pictures stay mapped until the engine has read them; the
 * distorted buffer until it is pushed.  An unmatched distorted frame is one
 * too (matched FALSE), so that it leaves in its place. */
typedef struct
{
  guint64 index;                /* of the compared pair, from 0 */
  GstQmetricSide ref, dist;
  GstBuffer *dist_buf;          /* NULL once pushed */
  GstCaps *caps;                /* dist_buf's caps (the src pad's for it) */
  GstClockTime pts, duration, running_time, stream_time;
  gboolean matched;             /* FALSE: a distorted frame with no reference */
  gboolean done;                /* scores known (or none due) */
  gboolean has_scores;
  gboolean unreadable;          /* matched but not mapped: not compared */
  gboolean skipped;             /* not scored to keep up (Overload) */
  gdouble *values;              /* n_features each, when has_scores */
  guint8 *present;
  QmFrameTimes times;           /* stage stamps (qmframetimes.h) */
} GstQmetricScoredPair;

void gst_qmetric_scored_pair_free (GstQmetricScoredPair * p);

/* The engine's release callback (QmSettings.release): it has read the
 * pictures, which are unmapped.  Any thread. */
void gst_qmetric_scored_pair_release (void *opaque, void *frame_user);

G_END_DECLS

#endif /* __GST_QMETRIC_SCORED_PAIR_H__ */
