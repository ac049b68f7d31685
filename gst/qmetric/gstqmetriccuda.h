/* GStreamer qmetric: sharing CUDA with upstream (GstCudaContext, CUDA
 * memory).  Implemented by gstqmetriccuda.c when GStreamer's CUDA library
 * and the CUDA backend are built, else by gstqmetriccuda_none.c. */
#ifndef __GST_QMETRIC_CUDA_H__
#define __GST_QMETRIC_CUDA_H__

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

/* Caps the pads accept: system memory, plus CUDA memory where built. */
GstCaps *gst_qmetric_cuda_pad_caps (const gchar * formats);

/* The fields of one structure of those caps (after the media type and its
 * memory feature), for g_strdup_printf (): %s is the format list. */
#define GST_QMETRIC_CAPS_FIELDS "format=(string)%s, width=(int)[1, max], " \
    "height=(int)[1, max], framerate=(fraction)[0, max]"

/* The element's GstCudaContext (a GstObject), or NULL. */
gboolean gst_qmetric_cuda_set_context (GstElement * element,
    GstContext * context, gint device_id, GstObject ** cuda_ctx);
gboolean gst_qmetric_cuda_handle_query (GstElement * element,
    GstQuery * query, GstObject * cuda_ctx);
/* Find or create the context (FALSE: no usable CUDA). */
gboolean gst_qmetric_cuda_ensure (GstElement * element, gint device_id,
    GstObject ** cuda_ctx);
/* CUcontext of a GstCudaContext. */
gpointer gst_qmetric_cuda_handle (GstObject * cuda_ctx);

/* Whether the buffer's memory is CUDA memory (map it with
 * gst_qmetric_cuda_map_flags() to get device pointers). */
gboolean gst_qmetric_cuda_is_device_buffer (GstBuffer * buffer);
GstMapFlags gst_qmetric_cuda_map_flags (void);

G_END_DECLS

#endif
