/* gst-qmetric: the pooled values metrics provide themselves (QmPoolFuncs,
 * metric.h) over the instances of a plan; the public side is QmAggregates
 * in qm.h. */
#ifndef QM_AGGREGATE_H
#define QM_AGGREGATE_H

#include "plan.h"

/* QmAggregates for the instances of p on pictures of this geometry (an
 * instance is pooled from its features at inst->base of each row).
 * Returns 0, or a QM_E* code from a metric's init() or QM_ENOMEM. */
int qm_aggregates_open(QmAggregates **out, const QmPlan *p, int w, int h, int bpc,
                       QmChroma chroma);

#endif /* QM_AGGREGATE_H */
