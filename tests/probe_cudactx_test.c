/* qmetric-probe's shared CUDA context (tools/probe/cudactx.c) without a
 * GPU: elements of separate pipelines, each pipeline's bus with the probe's
 * sync handler, post the messages GStreamer's CUDA library posts
 * (gst_cuda_ensure_element_context(): NEED_CONTEXT, then HAVE_CONTEXT with
 * the context it made); an element of a later pipeline that asks must be
 * handed the first context made on each device, first device first. */
#include <gst/gst.h>
#include <string.h>

#include "cudactx.h"
#include "unit.h"

#define CUDA_TYPE "gst.cuda.context"

/* an element that keeps what set_context() gives it, in order */
typedef struct
{
  GstElement parent;
  GPtrArray *given;
} CtxProbe;
typedef struct
{
  GstElementClass parent;
} CtxProbeClass;

G_DEFINE_TYPE (CtxProbe, ctx_probe, GST_TYPE_ELEMENT);

static void
ctx_probe_set_context (GstElement * e, GstContext * ctx)
{
  g_ptr_array_add (((CtxProbe *) e)->given, gst_context_ref (ctx));
  GST_ELEMENT_CLASS (ctx_probe_parent_class)->set_context (e, ctx);
}

static void
ctx_probe_finalize (GObject * o)
{
  g_ptr_array_unref (((CtxProbe *) o)->given);
  G_OBJECT_CLASS (ctx_probe_parent_class)->finalize (o);
}

static void
ctx_probe_class_init (CtxProbeClass * k)
{
  GST_ELEMENT_CLASS (k)->set_context = ctx_probe_set_context;
  G_OBJECT_CLASS (k)->finalize = ctx_probe_finalize;
}

static void
ctx_probe_init (CtxProbe * p)
{
  p->given = g_ptr_array_new_with_free_func ((GDestroyNotify) gst_context_unref);
}

/* a pipeline of one CtxProbe, its bus with the probe's handler */
static GstElement *
pipeline (CtxProbe ** probe)
{
  GstElement *pipe = gst_pipeline_new (NULL);
  GstBus *bus = gst_element_get_bus (pipe);

  *probe = g_object_new (ctx_probe_get_type (), NULL);
  gst_bin_add (GST_BIN (pipe), GST_ELEMENT (*probe));
  gst_bus_set_sync_handler (bus, probe_cuda_sync, NULL, NULL);
  gst_object_unref (bus);
  return pipe;
}

static GstContext *
context (const gchar * type, guint device)
{
  GstContext *c = gst_context_new (type, TRUE);

  gst_structure_set (gst_context_writable_structure (c), "cuda-device-id",
      G_TYPE_UINT, device, NULL);
  return c;
}

static void
have (CtxProbe * p, GstContext * c)
{
  gst_element_post_message (GST_ELEMENT (p),
      gst_message_new_have_context (GST_OBJECT (p), c));
}

static void
need (CtxProbe * p, const gchar * type)
{
  gst_element_post_message (GST_ELEMENT (p),
      gst_message_new_need_context (GST_OBJECT (p), type));
}

int
main (int argc, char **argv)
{
  CtxProbe *a, *b, *c, *d;
  GstElement *pa, *pb, *pc, *pd;
  GstContext *dev0, *dev1, *dev0_again, *other;

  gst_init (&argc, &argv);
  dev0 = context (CUDA_TYPE, 0);
  dev1 = context (CUDA_TYPE, 1);
  dev0_again = context (CUDA_TYPE, 0);
  other = context ("gst.gl.GLDisplay", 0);
  pa = pipeline (&a);
  pb = pipeline (&b);
  pc = pipeline (&c);
  pd = pipeline (&d);

  /* nothing kept yet: an element that asks gets nothing (and makes its own) */
  need (a, CUDA_TYPE);
  CHECK (a->given->len == 0, "first asker given %u contexts", a->given->len);
  CHECK (probe_cuda_kept () == 0, "kept %u before any was made",
      probe_cuda_kept ());

  /* a's context is kept; b, in another pipeline, is handed it */
  have (a, gst_context_ref (dev0));
  CHECK (probe_cuda_kept () == 1, "kept %u after the first", probe_cuda_kept ());
  need (b, CUDA_TYPE);
  CHECK (b->given->len == 1 && g_ptr_array_index (b->given, 0) == dev0,
      "second pipeline given %u contexts, not the first one made",
      b->given->len);

  /* a second context of device 0 is not kept; one of device 1 is, after it;
   * other context types are neither kept nor answered */
  have (b, gst_context_ref (dev0_again));
  have (c, gst_context_ref (dev1));
  have (c, gst_context_ref (other));
  CHECK (probe_cuda_kept () == 2, "kept %u, not one a device",
      probe_cuda_kept ());
  need (d, "gst.gl.GLDisplay");
  CHECK (d->given->len == 0, "a GL display request was answered");
  need (d, CUDA_TYPE);
  CHECK (d->given->len == 2 && g_ptr_array_index (d->given, 0) == dev0 &&
      g_ptr_array_index (d->given, 1) == dev1,
      "given %u contexts, not device 0's then device 1's", d->given->len);

  gst_object_unref (pa);
  gst_object_unref (pb);
  gst_object_unref (pc);
  gst_object_unref (pd);
  gst_context_unref (dev0);
  gst_context_unref (dev1);
  gst_context_unref (dev0_again);
  gst_context_unref (other);
  if (failures)
    printf ("%d check(s) failed\n", failures);
  else
    printf ("shared CUDA context: all checks passed\n");
  return failures ? 1 : 0;
}
