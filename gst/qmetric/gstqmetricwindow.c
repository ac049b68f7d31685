/* GStreamer qmetric: the "qmetric-window" message (docs/element.md#windows). */
#include "gstqmetricwindow.h"

GstStructure *
gst_qmetric_window_structure (const QmWindowStats * st, const GQuark * quarks,
    guint n)
{
  GstStructure *s = gst_structure_new ("qmetric-window",
      "window", G_TYPE_UINT64, st->index,
      "start-running-time", G_TYPE_UINT64, st->start_rt,
      "end-running-time", G_TYPE_UINT64, st->end_rt,
      "reason", G_TYPE_STRING, st->reason,
      "pairs", G_TYPE_UINT64, st->pairs,
      "unmatched", G_TYPE_UINT64, st->unmatched_ref + st->unmatched_dist,
      "unmatched-reference", G_TYPE_UINT64, st->unmatched_ref,
      "unmatched-distorted", G_TYPE_UINT64, st->unmatched_dist,
      "unreadable", G_TYPE_UINT64, st->unreadable,
      "skipped", G_TYPE_UINT64, st->skipped, NULL);
  guint i;

  for (i = 0; i < st->n_features && i < n; i++) {
    QmPool *p = &st->pools[i];
    GstStructure *f;

    if (!p->n)
      continue;
    /* every pooling method, whatever the pool property says: a window is
     * small and a monitor wants its low percentiles */
    f = gst_structure_new ("pooled",
        "frames", G_TYPE_UINT64, (guint64) p->n,
        "mean", G_TYPE_DOUBLE, qm_pool_mean (p),
        "harmonic-mean", G_TYPE_DOUBLE, qm_pool_harmonic_mean (p),
        "min", G_TYPE_DOUBLE, p->min,
        "max", G_TYPE_DOUBLE, p->max,
        "p1", G_TYPE_DOUBLE, qm_pool_percentile (p, 1.0),
        "p5", G_TYPE_DOUBLE, qm_pool_percentile (p, 5.0), NULL);
    gst_structure_id_set (s, quarks[i], GST_TYPE_STRUCTURE, f, NULL);
    gst_structure_free (f);
  }
  return s;
}
