/* GStreamer qmetric: what the element holds of its inputs, and what it asks
 * of upstream for it: the pictures it asks the pools of its upstream for
 * (an allocation query's answer), and the CPU threads of a live element
 * whose pictures come in GPU memory. */
#ifndef __GST_QMETRIC_HOLDS_H__
#define __GST_QMETRIC_HOLDS_H__

#include <gst/gst.h>

G_BEGIN_DECLS

/* The CPU threads of a live element whose pictures come in GPU memory,
 * when the threads property is 0 (docs/element.md, threads): it scores a
 * picture a frame period and needs no CPU worker, and one thread a core
 * meant 8 copy workers and 8 frames in flight an element, which held back
 * the decoders beside many probes (docs/cuda.md, "Live probes beside
 * decoders"). */
#define GST_QMETRIC_LIVE_DEVICE_THREADS 2

/* Whether caps carry pictures in CUDA memory. */
gboolean gst_qmetric_caps_in_cuda (GstCaps * caps);

/* Whether the peer of a sink pad is a live source. */
gboolean gst_qmetric_upstream_live (GstPad * sinkpad);

/* Answer an allocation query: a pool of the pictures the element may hold
 * at once (threads: the threads property, 0 = one a core; gpu: the CUDA
 * backend, which reads CUDA memory in place) and the video meta.  FALSE:
 * the query has no usable caps. */
gboolean gst_qmetric_answer_allocation (GstQuery * query, guint threads,
    gboolean gpu);

G_END_DECLS

#endif /* __GST_QMETRIC_HOLDS_H__ */
