/* GStreamer qmetric: no CUDA memory support in this build. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstqmetriccuda.h"

GstCaps *
gst_qmetric_cuda_pad_caps (const gchar * formats)
{
  gchar *s = g_strdup_printf ("video/x-raw, " GST_QMETRIC_CAPS_FIELDS,
      formats);
  GstCaps *caps = gst_caps_from_string (s);

  g_free (s);
  return caps;
}

gboolean
gst_qmetric_cuda_set_context (GstElement * element, GstContext * context,
    gint device_id, GstObject ** cuda_ctx)
{
  return FALSE;
}

gboolean
gst_qmetric_cuda_handle_query (GstElement * element, GstQuery * query,
    GstObject * cuda_ctx)
{
  return FALSE;
}

gboolean
gst_qmetric_cuda_ensure (GstElement * element, gint device_id,
    GstObject ** cuda_ctx)
{
  return FALSE;
}

gpointer
gst_qmetric_cuda_handle (GstObject * cuda_ctx)
{
  return NULL;
}

GstQmetricCudaAccess
gst_qmetric_cuda_buffer_access (GstBuffer * buffer, GstObject * cuda_ctx)
{
  return GST_QMETRIC_CUDA_HOST;
}

void
gst_qmetric_cuda_buffer_sync (GstBuffer * buffer)
{
}

GstMapFlags
gst_qmetric_cuda_map_flags (void)
{
  return 0;
}
