/* qmetric-probe: one CUDA context a device, shared by every probe.
 *
 * GStreamer's CUDA elements (nvh264dec, cudaupload, qmetric) look for a
 * "gst.cuda.context" GstContext in their pipeline and make a CUDA context
 * of their own when none answers (cuCtxCreate).  qmetric-probe runs a
 * pipeline a probe, so without this every probe's decoders and element
 * ran in a context of their own, and the GPU time-sliced between the
 * contexts instead of running their work side by side (docs/cuda.md, "Live
 * probes beside decoders").  Sharing also lets the element read the
 * decoders' CUDA memory in place.
 *
 * The first context a pipeline makes on a device is kept for the life of
 * the process (one a device: bounded), and set on each element of any
 * pipeline that asks, before the element would make its own.  Only the
 * context's type and its "cuda-device-id" field are read, so the program
 * needs no link to GStreamer's CUDA library: an element handed a context
 * of another device ignores it, and one that has a context already keeps it
 * (gst_cuda_handle_set_context()). */
#include <string.h>

#include "cudactx.h"

#define CUDA_CONTEXT_TYPE "gst.cuda.context"

static GMutex lock;
static GPtrArray *kept;         /* GstContext *, one a device id */

static gint
device_of (GstContext * ctx)
{
  const GstStructure *s = gst_context_get_structure (ctx);
  guint dev;

  /* GstCudaContext's contexts carry the device as a guint */
  return gst_structure_get_uint (s, "cuda-device-id", &dev) ? (gint) dev : -1;
}

static void
keep (GstContext * ctx)
{
  gint dev = device_of (ctx);
  guint i;

  g_mutex_lock (&lock);
  if (!kept)
    kept = g_ptr_array_new_with_free_func ((GDestroyNotify) gst_context_unref);
  for (i = 0; i < kept->len; i++)
    if (device_of (g_ptr_array_index (kept, i)) == dev)
      break;
  if (i == kept->len)
    g_ptr_array_add (kept, gst_context_ref (ctx));
  g_mutex_unlock (&lock);
}

static void
hand_out (GstElement * element)
{
  GstContext **ctxs = NULL;
  guint i, n = 0;

  /* set outside the lock: an element's set_context may post messages */
  g_mutex_lock (&lock);
  if (kept && kept->len) {
    n = kept->len;
    ctxs = g_new (GstContext *, n);
    for (i = 0; i < n; i++)
      ctxs[i] = gst_context_ref (g_ptr_array_index (kept, i));
  }
  g_mutex_unlock (&lock);
  /* an element keeps the first context it accepts: one that takes any
   * device gets the first kept */
  for (i = 0; i < n; i++) {
    gst_element_set_context (element, ctxs[i]);
    gst_context_unref (ctxs[i]);
  }
  g_free (ctxs);
}

GstBusSyncReply
probe_cuda_sync (GstBus * bus, GstMessage * msg, gpointer data)
{
  const gchar *type = NULL;
  GstContext *ctx = NULL;

  switch (GST_MESSAGE_TYPE (msg)) {
    case GST_MESSAGE_NEED_CONTEXT:
      if (gst_message_parse_context_type (msg, &type) &&
          !strcmp (type, CUDA_CONTEXT_TYPE) && GST_IS_ELEMENT (msg->src))
        hand_out (GST_ELEMENT (msg->src));
      break;
    case GST_MESSAGE_HAVE_CONTEXT:
      gst_message_parse_have_context (msg, &ctx);
      if (ctx && !strcmp (gst_context_get_context_type (ctx),
              CUDA_CONTEXT_TYPE))
        keep (ctx);
      if (ctx)
        gst_context_unref (ctx);
      break;
    default:
      break;
  }
  return GST_BUS_PASS;
}

guint
probe_cuda_kept (void)
{
  guint n;

  g_mutex_lock (&lock);
  n = kept ? kept->len : 0;
  g_mutex_unlock (&lock);
  return n;
}
