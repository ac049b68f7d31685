/* GStreamer qmetric: the partner-timeout watchdog (gstqmetricwatchdog.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstqmetricwatchdog.h"

GST_DEBUG_CATEGORY_STATIC (gst_qmetric_watchdog_debug);
#define GST_CAT_DEFAULT gst_qmetric_watchdog_debug

void
gst_qmetric_watchdog_init (GstQmetricWatchdog * wd)
{
  GST_DEBUG_CATEGORY_INIT (gst_qmetric_watchdog_debug, "qmetricwatchdog", 0,
      "qmetric: the partner-timeout watchdog");
  g_mutex_init (&wd->lock);
  g_cond_init (&wd->cond);
}

void
gst_qmetric_watchdog_clear (GstQmetricWatchdog * wd)
{
  g_mutex_clear (&wd->lock);
  g_cond_clear (&wd->cond);
}

static gpointer
watchdog_loop (gpointer data)
{
  GstQmetricWatchdog *wd = data;
  const gint64 timeout_us = wd->timeout_us;

  g_mutex_lock (&wd->lock);
  while (wd->running) {
    gint64 now = g_get_monotonic_time (), wake = now + timeout_us;
    gint silent = -1;
    gint64 last = 0;
    guint i;

    for (i = 0; i < 2; i++) {
      gint64 due;

      last = gst_qmetric_pad_last_data (wd->pad[i]);
      due = last + timeout_us;
      if (due > now) {
        wake = MIN (wake, due);
        continue;
      }
      if (gst_qmetric_pad_starved (wd->pad[i]) &&
          gst_qmetric_pad_waiting (wd->pad[!i]) &&
          !GST_CLOCK_TIME_IS_VALID (gst_aggregator_get_latency (wd->agg)) &&
          gst_qmetric_pad_claim_silence (wd->pad[i], last)) {
        silent = i;
        break;
      }
    }
    if (silent >= 0) {
      const gchar *name = GST_PAD_NAME (wd->pad[silent]);
      const gchar *other = GST_PAD_NAME (wd->pad[!silent]);

      g_mutex_unlock (&wd->lock);
      GST_ELEMENT_WARNING (wd->agg, STREAM, FAILED,
          ("No data on %s for %.1f s while %s waits for it "
              "(partner-timeout): %s is treated as ended and the waiting "
              "frames are counted as unmatched", name, (now - last) / 1e6,
              other, name), (NULL));
      gst_pad_send_event (GST_PAD (wd->pad[silent]), gst_event_new_eos ());
      g_mutex_lock (&wd->lock);
      continue;
    }
    g_cond_wait_until (&wd->cond, &wd->lock, wake);
  }
  g_mutex_unlock (&wd->lock);
  return NULL;
}

void
gst_qmetric_watchdog_start (GstQmetricWatchdog * wd, GstAggregator * agg,
    GstQmetricPad * ref, GstQmetricPad * dist, GstClockTime timeout)
{
  if (timeout == 0)
    return;
  wd->agg = agg;
  wd->pad[0] = ref;
  wd->pad[1] = dist;
  wd->timeout_us = MIN (timeout / GST_USECOND, G_MAXINT64 / 4);
  wd->running = TRUE;
  wd->thread = g_thread_new ("qmetric-watchdog", watchdog_loop, wd);
}

void
gst_qmetric_watchdog_stop (GstQmetricWatchdog * wd)
{
  if (!wd->thread)
    return;
  g_mutex_lock (&wd->lock);
  wd->running = FALSE;
  g_cond_signal (&wd->cond);
  g_mutex_unlock (&wd->lock);
  g_thread_join (wd->thread);
  wd->thread = NULL;
}
