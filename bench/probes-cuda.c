/* qmetric-bench-probes: pictures in CUDA memory, with GStreamer 1.22's CUDA
 * library (gst-plugins-bad's libgstcuda).  The CUDA context is one
 * GstCudaContext that the pipeline hands to every element (qmetric,
 * nvh264dec) through the GstContext "gst.cuda.context", so that the
 * elements read the pictures in place. */
#include <string.h>

#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>

#include "probes.h"

const char pb_cuda_feature[] = GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY;

/* The context made here, when the scheduling policy is ours: destroyed by
 * pb_cuda_close() (a wrapped GstCudaContext does not own its handle). */
static CUcontext own_ctx;

GstObject *pb_cuda_open(int device, PbSched sched, char *why, size_t len)
{
    /* the library dlopens the driver: no driver, no GPU */
    if (!gst_cuda_load_library()) {
        snprintf(why, len, "no CUDA driver (libcuda.so.1 could not be loaded)");
        return NULL;
    }
    if (sched == PB_SCHED_GST) {
        GstCudaContext *ctx = gst_cuda_context_new((guint)device);
        if (!ctx)
            snprintf(why, len, "no usable CUDA device %d", device);
        return ctx ? GST_OBJECT(ctx) : NULL;
    }
    const unsigned flags = sched == PB_SCHED_SPIN ? CU_CTX_SCHED_SPIN
                           : sched == PB_SCHED_YIELD ? CU_CTX_SCHED_YIELD
                                                     : CU_CTX_SCHED_BLOCKING_SYNC;
    CUdevice dev;
    CUcontext ctx = NULL, popped;
    if (CuInit(0) != CUDA_SUCCESS || CuDeviceGet(&dev, device) != CUDA_SUCCESS ||
        CuCtxCreate(&ctx, flags, dev) != CUDA_SUCCESS) {
        snprintf(why, len, "cannot make a CUDA context on device %d", device);
        return NULL;
    }
    /* cuCtxCreate makes it current: GStreamer pushes it where it needs it */
    CuCtxPopCurrent(&popped);
    GstCudaContext *gctx = gst_cuda_context_new_wrapped(ctx, dev);
    if (!gctx) {
        CuCtxDestroy(ctx);
        snprintf(why, len, "cannot wrap a CUDA context of device %d", device);
        return NULL;
    }
    own_ctx = ctx;
    return GST_OBJECT(gctx);
}

GstObject *pb_cuda_context_new(int device)
{
    GstCudaContext *ctx = gst_cuda_context_new((guint)device);
    return ctx ? GST_OBJECT(ctx) : NULL;
}

void pb_cuda_close(GstObject *ctx)
{
    if (ctx)
        gst_object_unref(ctx);
    if (own_ctx)
        CuCtxDestroy(own_ctx);
    own_ctx = NULL;
}

/* One CUDA memory for a picture of info, in a buffer with the video meta of
 * the memory's own layout (its pitch, not GstVideoInfo's default).  Taken
 * from the allocator, not a GstCudaBufferPool: 1.22's pool refused this
 * configuration on the GPU machine ("cannot start a GstCudaBufferPool"). */
static GstBuffer *cuda_buffer(GstCudaContext *ctx, const GstVideoInfo *info)
{
    /* 1.22 takes no NULL allocator: the one registered by name */
    GstAllocator *alloc = gst_allocator_find(GST_CUDA_MEMORY_TYPE_NAME);
    if (!alloc)
        return NULL;
#if GST_CHECK_VERSION(1, 24, 0)
    GstMemory *mem = gst_cuda_allocator_alloc(GST_CUDA_ALLOCATOR(alloc), ctx, NULL, info);
#else
    GstMemory *mem = gst_cuda_allocator_alloc(GST_CUDA_ALLOCATOR(alloc), ctx, info);
#endif
    gst_object_unref(alloc);
    if (!mem)
        return NULL;
    GstBuffer *b = gst_buffer_new();
    gst_buffer_append_memory(b, mem);
    GstCudaMemory *cm = GST_CUDA_MEMORY_CAST(mem);
    gst_buffer_add_video_meta_full(b, GST_VIDEO_FRAME_FLAG_NONE,
                                   GST_VIDEO_INFO_FORMAT(&cm->info),
                                   GST_VIDEO_INFO_WIDTH(&cm->info),
                                   GST_VIDEO_INFO_HEIGHT(&cm->info),
                                   GST_VIDEO_INFO_N_PLANES(&cm->info),
                                   cm->info.offset, cm->info.stride);
    return b;
}

/* One picture copied into CUDA memory, then mapped for CUDA once:
 * GstCudaMemory copies host writes to the device at the next CUDA map, and
 * that should happen here, not in the first pass of the measurement. */
static GstBuffer *upload(GstCudaContext *ctx, const GstVideoInfo *info, GstBuffer *host)
{
    GstBuffer *b = cuda_buffer(ctx, info);
    GstVideoFrame src, dst;
    if (!b)
        return NULL;
    if (!gst_video_frame_map(&src, info, host, GST_MAP_READ))
        goto fail;
    if (!gst_video_frame_map(&dst, info, b, GST_MAP_WRITE)) {
        gst_video_frame_unmap(&src);
        goto fail;
    }
    const gboolean ok = gst_video_frame_copy(&dst, &src);
    gst_video_frame_unmap(&dst);
    gst_video_frame_unmap(&src);
    if (!ok || !gst_video_frame_map(&dst, info, b, GST_MAP_READ | GST_MAP_CUDA))
        goto fail;
    gst_video_frame_unmap(&dst);
    return b;
fail:
    gst_buffer_unref(b);
    return NULL;
}

int pb_cuda_upload(GstObject *ctx, PbFrames *fr, char *why, size_t len)
{
    gst_cuda_memory_init_once();
    for (int f = 0; f < fr->n; f++) {
        for (int k = 0; k < 2; k++) {
            GstBuffer **slot = &fr->pic[k][f];
            GstBuffer *b = upload(GST_CUDA_CONTEXT(ctx), &fr->info, *slot);
            if (!b) {
                snprintf(why, len, "cannot copy picture %d (%dx%d %s) into CUDA memory", f,
                         GST_VIDEO_INFO_WIDTH(&fr->info), GST_VIDEO_INFO_HEIGHT(&fr->info),
                         GST_VIDEO_INFO_NAME(&fr->info));
                return -1;
            }
            gst_buffer_unref(*slot);
            *slot = b;
        }
    }
    return 0;
}

GstContext *pb_cuda_context(GstObject *ctx)
{
    return gst_context_new_cuda_context(GST_CUDA_CONTEXT(ctx));
}
