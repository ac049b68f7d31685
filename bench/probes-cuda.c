/* qmetric-bench-probes: pictures in CUDA memory, with GStreamer 1.22's CUDA
 * library (gst-plugins-bad's libgstcuda).  The CUDA context is one
 * GstCudaContext that the pipeline hands to every element (qmetric,
 * nvh264dec) through the GstContext "gst.cuda.context", so that the
 * elements read the pictures in place. */
#include <string.h>

#include <gst/cuda/gstcudabufferpool.h>
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudautils.h>

#include "probes.h"

const char pb_cuda_feature[] = GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY;

GstObject *pb_cuda_open(int device, char *why, size_t len)
{
    /* the library dlopens the driver: no driver, no GPU */
    if (!gst_cuda_load_library()) {
        snprintf(why, len, "no CUDA driver (libcuda.so.1 could not be loaded)");
        return NULL;
    }
    GstCudaContext *ctx = gst_cuda_context_new((guint)device);
    if (!ctx) {
        snprintf(why, len, "no usable CUDA device %d", device);
        return NULL;
    }
    return GST_OBJECT(ctx);
}

/* One picture copied into a buffer of the pool, then mapped for CUDA once:
 * GstCudaMemory copies host writes to the device at the next CUDA map, and
 * that should happen here, not in the first pass of the measurement. */
static GstBuffer *upload(GstBufferPool *pool, const GstVideoInfo *info, GstBuffer *host)
{
    GstBuffer *b = NULL;
    GstVideoFrame src, dst;
    if (gst_buffer_pool_acquire_buffer(pool, &b, NULL) != GST_FLOW_OK)
        return NULL;
    if (!gst_buffer_get_video_meta(b)) {
        /* the pool's pitch is the memory's, not GstVideoInfo's default */
        GstCudaMemory *cm = GST_CUDA_MEMORY_CAST(gst_buffer_peek_memory(b, 0));
        gst_buffer_add_video_meta_full(b, GST_VIDEO_FRAME_FLAG_NONE,
                                       GST_VIDEO_INFO_FORMAT(&cm->info),
                                       GST_VIDEO_INFO_WIDTH(&cm->info),
                                       GST_VIDEO_INFO_HEIGHT(&cm->info),
                                       GST_VIDEO_INFO_N_PLANES(&cm->info),
                                       cm->info.offset, cm->info.stride);
    }
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
    GstBufferPool *pool = gst_cuda_buffer_pool_new(GST_CUDA_CONTEXT(ctx));
    GstStructure *cfg = gst_buffer_pool_get_config(pool);
    GstCaps *caps = gst_video_info_to_caps(&fr->info);
    int err = 0;

    gst_caps_set_features(caps, 0, gst_caps_features_new(pb_cuda_feature, NULL));
    /* no maximum: every picture of the set is held at once */
    gst_buffer_pool_config_set_params(cfg, caps, (guint)GST_VIDEO_INFO_SIZE(&fr->info), 0, 0);
    gst_buffer_pool_config_add_option(cfg, GST_BUFFER_POOL_OPTION_VIDEO_META);
    gst_caps_unref(caps);
    if (!gst_buffer_pool_set_config(pool, cfg) || !gst_buffer_pool_set_active(pool, TRUE)) {
        snprintf(why, len, "cannot start a GstCudaBufferPool for %dx%d NV12",
                 GST_VIDEO_INFO_WIDTH(&fr->info), GST_VIDEO_INFO_HEIGHT(&fr->info));
        gst_object_unref(pool);
        return -1;
    }
    for (int f = 0; f < fr->n && !err; f++) {
        for (int k = 0; k < 2 && !err; k++) {
            GstBuffer **slot = k ? &fr->dist[f] : &fr->ref[f];
            GstBuffer *b = upload(pool, &fr->info, *slot);
            if (!b) {
                snprintf(why, len, "cannot copy picture %d into CUDA memory", f);
                err = -1;
                break;
            }
            gst_buffer_unref(*slot);
            *slot = b;
        }
    }
    /* every picture stays out of the pool for the whole run (shared by
     * the probes, never written again); an inactive pool frees each buffer
     * when it comes back instead of handing it out again */
    gst_buffer_pool_set_active(pool, FALSE);
    gst_object_unref(pool);
    return err;
}

GstContext *pb_cuda_context(GstObject *ctx)
{
    return gst_context_new_cuda_context(GST_CUDA_CONTEXT(ctx));
}
