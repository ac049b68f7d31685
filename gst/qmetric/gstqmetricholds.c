/* GStreamer qmetric: what the element holds of its inputs
 * (gstqmetricholds.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/video/video.h>

#include "gstqmetricholds.h"

/* Frames in CUDA memory that the CUDA backend reads in place: the engine
 * holds at most its device slots (8), the look-ahead of motion (1) and the
 * pair being formed, and two to spare. */
#define CUDA_IN_PLACE_HELD 12

gboolean
gst_qmetric_caps_in_cuda (GstCaps * caps)
{
  GstCapsFeatures *f = caps && gst_caps_get_size (caps) ?
      gst_caps_get_features (caps, 0) : NULL;

  return f && gst_caps_features_contains (f, "memory:CUDAMemory");
}

gboolean
gst_qmetric_upstream_live (GstPad * sinkpad)
{
  GstQuery *q = gst_query_new_latency ();
  gboolean live = FALSE;

  if (gst_pad_peer_query (sinkpad, q))
    gst_query_parse_latency (q, &live, NULL, NULL);
  gst_query_unref (q);
  return live;
}

gboolean
gst_qmetric_answer_allocation (GstQuery * query, guint threads, gboolean gpu)
{
  GstCaps *caps;
  GstVideoInfo info;
  guint held;

  gst_query_parse_allocation (query, &caps, NULL);
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return FALSE;
  if (!threads)
    threads = g_get_num_processors ();
  /* on system memory, each CPU thread may hold a pair being scored */
  held = gpu && gst_qmetric_caps_in_cuda (caps) ? CUDA_IN_PLACE_HELD :
      MIN (2 * threads + 2, 64);
  gst_query_add_allocation_pool (query, NULL, info.size, held, 0);
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  return TRUE;
}
