/* qmetric-probe: one CUDA context a device for all of its pipelines. */
#ifndef QMETRIC_PROBE_CUDACTX_H
#define QMETRIC_PROBE_CUDACTX_H

#include <gst/gst.h>

/* The bus sync handler of every probe pipeline (user data unused): keeps the
 * first "gst.cuda.context" each device's pipelines make and hands it to the
 * elements of the other pipelines that ask for one. */
GstBusSyncReply probe_cuda_sync (GstBus * bus, GstMessage * msg,
    gpointer data);

/* How many contexts are kept (one a device); for tests. */
guint probe_cuda_kept (void);

#endif
