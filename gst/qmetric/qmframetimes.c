/* GStreamer qmetric: stage stamps of a pair (see qmframetimes.h). */
#include <stdlib.h>

#include "qmframetimes.h"

static const gchar *const names[QM_FT_N] = {
  "t-taken-us", "t-mapped-us", "t-submitted-us", "t-scored-us",
};

gboolean
qm_frame_times_wanted (void)
{
  const gchar *v = g_getenv ("QMETRIC_FRAME_TIMES");

  return v && atoi (v) == 1;
}

void
qm_frame_times_add (GstStructure * s, const QmFrameTimes * ft)
{
  guint i;

  for (i = 0; i < QM_FT_N; i++)
    if (ft->t[i] > 0)
      gst_structure_set (s, names[i], G_TYPE_UINT64, (guint64) ft->t[i], NULL);
}
