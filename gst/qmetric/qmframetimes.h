/* GStreamer qmetric: when each pair passed the element's stages, for
 * telling where a late score waited (QMETRIC_FRAME_TIMES=1 adds the stamps
 * to the "qmetric" message; bench/qmetric-bench-probes reads them).
 *
 * Stamps are CLOCK_MONOTONIC in microseconds (g_get_monotonic_time()), 0
 * when a stage was not reached.  They are taken for every pair whatever the
 * setting (four clock reads a pair); only the message fields depend on it. */
#ifndef __QM_FRAME_TIMES_H__
#define __QM_FRAME_TIMES_H__

#include <gst/gst.h>

G_BEGIN_DECLS

typedef enum
{
  QM_FT_TAKEN,                  /* the pair decided, both buffers taken off the pads */
  QM_FT_MAPPED,                 /* both buffers mapped (CUDA memory: its sync done) */
  QM_FT_SUBMITTED,              /* qm_engine_submit() returned: a frame slot was free */
  QM_FT_SCORED,                 /* the engine handed out the scores (device done,
                                 * look-ahead posted, seen by the element's thread) */
  QM_FT_N
} QmFtStage;

typedef struct
{
  gint64 t[QM_FT_N];
} QmFrameTimes;

static inline void
qm_frame_times_stamp (QmFrameTimes * ft, QmFtStage stage)
{
  ft->t[stage] = g_get_monotonic_time ();
}

/* Whether QMETRIC_FRAME_TIMES=1 was set when the element started. */
gboolean qm_frame_times_wanted (void);

/* Add the stamps to a "qmetric" message's structure as guint64 fields
 * "t-taken-us", "t-mapped-us", "t-submitted-us", "t-scored-us" (fields of
 * another type than double, so that no reader takes them for scores). */
void qm_frame_times_add (GstStructure * s, const QmFrameTimes * ft);

G_END_DECLS

#endif /* __QM_FRAME_TIMES_H__ */
