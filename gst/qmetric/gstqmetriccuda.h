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

/* How the CUDA backend can read a buffer. */
typedef enum
{
  GST_QMETRIC_CUDA_HOST = 0,    /* system memory: mapped for the CPU */
  GST_QMETRIC_CUDA_IN_PLACE,    /* CUDA memory of our context, or of one our
                                 * context can access as a peer: read in place
                                 * (map with gst_qmetric_cuda_map_flags()) */
  GST_QMETRIC_CUDA_FOREIGN,     /* CUDA memory of a context we cannot reach:
                                 * mapped for the CPU (a download), then
                                 * uploaded again by our own path */
} GstQmetricCudaAccess;

GstQmetricCudaAccess gst_qmetric_cuda_buffer_access (GstBuffer * buffer,
    GstObject * cuda_ctx);
GstMapFlags gst_qmetric_cuda_map_flags (void);
/* Before kernels read a buffer mapped in place: wait until its producer's
 * work on it is done.  GStreamer 1.24 and later attach a CUDA stream to the
 * memory and leave that wait to the consumer; 1.22's producers synchronise
 * before they push, and there it does nothing. */
void gst_qmetric_cuda_buffer_sync (GstBuffer * buffer);

G_END_DECLS

#endif
