/* qmetric-bench-probes without GStreamer's CUDA library (or without the
 * CUDA backend): CUDA memory cannot be made, --backend cuda reports why. */
#include "probes.h"

const char pb_cuda_feature[] = "memory:CUDAMemory";

GstObject *pb_cuda_open(int device, PbSched sched, char *why, size_t len)
{
    (void)device;
    (void)sched;
    snprintf(why, len, "this build has no CUDA memory support (it needs the CUDA backend "
             "and gstreamer-cuda-1.0, libgstreamer-plugins-bad1.0-dev)");
    return NULL;
}

GstObject *pb_cuda_context_new(int device)
{
    (void)device;
    return NULL;
}

void pb_cuda_close(GstObject *ctx)
{
    if (ctx)
        gst_object_unref(ctx);
}

int pb_cuda_upload(GstObject *ctx, PbFrames *fr, char *why, size_t len)
{
    (void)ctx;
    (void)fr;
    snprintf(why, len, "this build has no CUDA memory support");
    return -1;
}

GstContext *pb_cuda_context(GstObject *ctx)
{
    (void)ctx;
    return NULL;
}
