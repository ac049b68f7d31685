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

gboolean
gst_qmetric_cuda_is_device_buffer (GstBuffer * buffer)
{
  return gst_buffer_n_memory (buffer) > 0 &&
      gst_is_cuda_memory (gst_buffer_peek_memory (buffer, 0));
}

GstMapFlags
gst_qmetric_cuda_map_flags (void)
{
  return GST_MAP_CUDA;
}
