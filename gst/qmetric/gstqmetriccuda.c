/* GStreamer qmetric: CUDA context and memory from GStreamer's CUDA library. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>

#include "gstqmetriccuda.h"

GstCaps *
gst_qmetric_cuda_pad_caps (const gchar * formats)
{
  gchar *s = g_strdup_printf ("video/x-raw, " GST_QMETRIC_CAPS_FIELDS "; "
      "video/x-raw(" GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY "), "
      GST_QMETRIC_CAPS_FIELDS, formats, formats);
  GstCaps *caps = gst_caps_from_string (s);

  g_free (s);
  return caps;
}

gboolean
gst_qmetric_cuda_set_context (GstElement * element, GstContext * context,
    gint device_id, GstObject ** cuda_ctx)
{
  return gst_cuda_handle_set_context (element, context, device_id,
      (GstCudaContext **) cuda_ctx);
}

gboolean
gst_qmetric_cuda_handle_query (GstElement * element, GstQuery * query,
    GstObject * cuda_ctx)
{
  return gst_cuda_handle_context_query (element, query,
      (GstCudaContext *) cuda_ctx);
}

gboolean
gst_qmetric_cuda_ensure (GstElement * element, gint device_id,
    GstObject ** cuda_ctx)
{
  /* GStreamer's CUDA library loads the driver itself; no driver = FALSE */
  if (!gst_cuda_load_library ())
    return FALSE;
  return gst_cuda_ensure_element_context (element, device_id,
      (GstCudaContext **) cuda_ctx);
}

gpointer
gst_qmetric_cuda_handle (GstObject * cuda_ctx)
{
  return cuda_ctx ? gst_cuda_context_get_handle (GST_CUDA_CONTEXT (cuda_ctx)) :
      NULL;
}

GstQmetricCudaAccess
gst_qmetric_cuda_buffer_access (GstBuffer * buffer, GstObject * cuda_ctx)
{
  guint i, n = gst_buffer_n_memory (buffer);
  gboolean reachable = cuda_ctx != NULL;

  if (n == 0 || !gst_is_cuda_memory (gst_buffer_peek_memory (buffer, 0)))
    return GST_QMETRIC_CUDA_HOST;
  /* Device pointers of another context are only valid in ours when the two
   * are the same or peers (GstCudaContext enables peer access between the
   * contexts it creates where the hardware allows it). */
  for (i = 0; i < n && reachable; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buffer, i);
    GstCudaContext *theirs;
    if (!gst_is_cuda_memory (mem))
      return GST_QMETRIC_CUDA_FOREIGN;
    theirs = GST_CUDA_MEMORY_CAST (mem)->context;
    reachable = theirs == (GstCudaContext *) cuda_ctx ||
        gst_cuda_context_can_access_peer ((GstCudaContext *) cuda_ctx, theirs);
  }
  return reachable ? GST_QMETRIC_CUDA_IN_PLACE : GST_QMETRIC_CUDA_FOREIGN;
}

void
gst_qmetric_cuda_buffer_sync (GstBuffer * buffer)
{
#if GST_CHECK_VERSION(1, 24, 0)
  guint i, n = gst_buffer_n_memory (buffer);

  /* a host wait on the producer's stream, only where the memory says work
   * is pending (GST_CUDA_MEMORY_TRANSFER_NEED_SYNC); decoders usually finish
   * their copy-out before pushing, so this is rarely a real wait */
  for (i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buffer, i);
    if (gst_is_cuda_memory (mem))
      gst_cuda_memory_sync (GST_CUDA_MEMORY_CAST (mem));
  }
#endif
}

GstMapFlags
gst_qmetric_cuda_map_flags (void)
{
  return GST_MAP_CUDA;
}
