/* GStreamer qmetric: the scored-pair type (gstqmetricscoredpair.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstqmetricscoredpair.h"

void
gst_qmetric_scored_pair_free (GstQmetricScoredPair * p)
{
  gst_qmetric_side_unmap (&p->ref);
  gst_qmetric_side_unmap (&p->dist);
  gst_clear_buffer (&p->dist_buf);
  gst_clear_caps (&p->caps);
  g_free (p->values);
  g_free (p->present);
  g_free (p);
}

void
gst_qmetric_scored_pair_release (void *opaque, void *frame_user)
{
  GstQmetricScoredPair *p = frame_user;

  gst_qmetric_side_unmap (&p->ref);
  gst_qmetric_side_unmap (&p->dist);
}
