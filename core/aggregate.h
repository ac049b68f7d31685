/* gst-qmetric: the pooled values metrics define for themselves
 * (QmMetricDesc.aggregate), over a log's frames: e.g. XPSNR's, pooled from
 * the frames' weighted SSE as FFmpeg pools it, written to libvmaf's
 * "aggregate_metrics".  Plain C, no GStreamer: core/qmlog.c feeds one from
 * the frames it writes. */
#ifndef QM_AGGREGATE_H
#define QM_AGGREGATE_H

#include <stdint.h>

#include "qm.h"

typedef struct QmAggregates QmAggregates;

/**
 * The aggregates of the features among names[0 .. n-1] (feature keys as
 * logs name them) whose metric defines one, for pictures of this geometry.
 * NULL when out of memory; an empty set when no feature has one.
 */
QmAggregates *qm_aggregates_new(unsigned n, const char *const *names, int w, int h,
                                int bpc, QmChroma chroma);
/** One frame's row (values where present[i] is nonzero), in frame order. */
void qm_aggregates_add(QmAggregates *a, const double *v, const uint8_t *present);
/** How many aggregates there are (features with one that had a frame). */
unsigned qm_aggregates_count(const QmAggregates *a);
/** Aggregate i: the column of its feature in names (its key is the
 *  feature's), and its value. */
unsigned qm_aggregates_column(const QmAggregates *a, unsigned i);
double qm_aggregates_value(const QmAggregates *a, unsigned i);
void qm_aggregates_free(QmAggregates *a);

#endif /* QM_AGGREGATE_H */
