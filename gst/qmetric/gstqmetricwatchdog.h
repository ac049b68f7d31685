/* GStreamer qmetric: the partner-timeout watchdog (not live).
 *
 * A non-live GstAggregator waits for data on every pad without a timeout: a
 * pad whose upstream never sends anything would hold the pipeline forever.
 * This thread notices a sink pad silent for the timeout while the other
 * waits (frames queued, or ended), posts a warning on the element and ends
 * the silent pad with an EOS of its own, so that the element counts the
 * waiting frames as unmatched and finishes.  In a live pipeline (the
 * aggregator has a latency) it does nothing: the latency bounds the wait. */
#ifndef __GST_QMETRIC_WATCHDOG_H__
#define __GST_QMETRIC_WATCHDOG_H__

#include <gst/gst.h>
#include <gst/base/gstaggregator.h>

#include "gstqmetricpad.h"

G_BEGIN_DECLS

typedef struct
{
  GstAggregator *agg;
  GstQmetricPad *pad[2];        /* [QM_PAIR_REF], [QM_PAIR_DIST] */
  gint64 timeout_us;
  GThread *thread;
  GMutex lock;
  GCond cond;
  gboolean running;             /* under lock */
} GstQmetricWatchdog;

void gst_qmetric_watchdog_init (GstQmetricWatchdog * wd);
void gst_qmetric_watchdog_clear (GstQmetricWatchdog * wd);

/* Watch the two sink pads of agg (timeout in ns; 0: never, no thread). */
void gst_qmetric_watchdog_start (GstQmetricWatchdog * wd, GstAggregator * agg,
    GstQmetricPad * ref, GstQmetricPad * dist, GstClockTime timeout);
/* Stop and join the thread (if started). */
void gst_qmetric_watchdog_stop (GstQmetricWatchdog * wd);

G_END_DECLS

#endif /* __GST_QMETRIC_WATCHDOG_H__ */
