/* qmetric-bench-probes: the pictures the probes send, and the distorted
 * side's H.264 bitstream. */
#include <stdlib.h>
#include <string.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include "probes.h"
#include "qmbench.h"

/* [1 2 1] / 4 across and down, `passes` times, edges repeated: with
 * qb_synth_frame's quantisation, a distortion VMAF sees clearly (the
 * quantised picture alone scores close to 100 at small sizes). */
static void blur(uint8_t *pl, int w, int h, ptrdiff_t stride, int passes)
{
    uint8_t *tmp = g_malloc((size_t)MAX(w, h));
    for (int n = 0; n < passes; n++) {
        for (int y = 0; y < h; y++) {
            uint8_t *r = pl + y * stride;
            for (int x = 0; x < w; x++)
                tmp[x] = (uint8_t)((r[MAX(x - 1, 0)] + 2 * r[x] + r[MIN(x + 1, w - 1)] + 2) / 4);
            memcpy(r, tmp, (size_t)w);
        }
        for (int x = 0; x < w; x++) {
            for (int y = 0; y < h; y++)
                tmp[y] = (uint8_t)((pl[MAX(y - 1, 0) * stride + x] + 2 * pl[y * stride + x] +
                                    pl[MIN(y + 1, h - 1) * stride + x] + 2) / 4);
            for (int y = 0; y < h; y++)
                pl[y * stride + x] = tmp[y];
        }
    }
    g_free(tmp);
}

int pb_frames_make(PbFrames *fr, int w, int h, int fps, int n)
{
    memset(fr, 0, sizeof(*fr));
    /* 4:2:0 with whole chroma samples */
    if (w < 16 || h < 16 || (w & 1) || (h & 1) || n < 1 ||
        !gst_video_info_set_format(&fr->info, GST_VIDEO_FORMAT_NV12, (guint)w, (guint)h))
        return -1;
    GST_VIDEO_INFO_FPS_N(&fr->info) = fps;
    GST_VIDEO_INFO_FPS_D(&fr->info) = 1;
    fr->n = n;
    fr->ref = g_new0(GstBuffer *, n);
    fr->dist = g_new0(GstBuffer *, n);

    /* qb_synth_frame writes planar chroma: made planar, then interleaved */
    const int pw[3] = { w, w / 2, w / 2 }, ph[3] = { h, h / 2, h / 2 };
    const ptrdiff_t stride[3] = { w, w / 2, w / 2 };
    uint8_t *pl[2][3];
    for (int k = 0; k < 2; k++)
        for (int p = 0; p < 3; p++)
            pl[k][p] = g_malloc((size_t)stride[p] * ph[p]);
    uint32_t rng = 12345;   /* bench/qmetric-bench-pipeline.c's seed: the same content */
    int err = 0;
    for (int f = 0; f < n && !err; f++) {
        qb_synth_frame(w, 8, 3, pw, ph, pl[0], pl[1], stride, f, &rng);
        blur(pl[1][0], pw[0], ph[0], stride[0], 2);
        for (int k = 0; k < 2 && !err; k++) {
            GstBuffer *b = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(&fr->info), NULL);
            GstVideoFrame vf;
            if (!b || !gst_video_frame_map(&vf, &fr->info, b, GST_MAP_WRITE)) {
                if (b)
                    gst_buffer_unref(b);
                err = -1;
                break;
            }
            for (int y = 0; y < h; y++)
                memcpy((uint8_t *)GST_VIDEO_FRAME_PLANE_DATA(&vf, 0) +
                       (size_t)y * GST_VIDEO_FRAME_PLANE_STRIDE(&vf, 0),
                       pl[k][0] + (size_t)y * stride[0], (size_t)w);
            for (int y = 0; y < h / 2; y++) {
                uint8_t *uv = (uint8_t *)GST_VIDEO_FRAME_PLANE_DATA(&vf, 1) +
                              (size_t)y * GST_VIDEO_FRAME_PLANE_STRIDE(&vf, 1);
                for (int x = 0; x < w / 2; x++) {
                    uv[2 * x] = pl[k][1][(size_t)y * stride[1] + x];
                    uv[2 * x + 1] = pl[k][2][(size_t)y * stride[2] + x];
                }
            }
            gst_video_frame_unmap(&vf);
            (k ? fr->dist : fr->ref)[f] = b;
        }
    }
    for (int k = 0; k < 2; k++)
        for (int p = 0; p < 3; p++)
            g_free(pl[k][p]);
    if (err)
        pb_frames_clear(fr);
    return err;
}

/* Run a built pipeline whose appsink is named "out" to EOS, keeping each
 * sample's buffer (an access unit) and the first sample's caps. */
static int collect_aus(GstElement *pipe, PbFrames *fr, GstAppSrc *src, char *why, size_t len)
{
    GstAppSink *sink = GST_APP_SINK(gst_bin_get_by_name(GST_BIN(pipe), "out"));
    GPtrArray *aus = g_ptr_array_new();
    int err = 0;

    if (gst_element_set_state(pipe, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        snprintf(why, len, "cannot start the encoding pipeline");
        err = -1;
    }
    if (!err && src) {
        /* the distorted pictures in display order, then EOS (the encoder
         * flushes): decoded, they are the distorted pictures plus coding loss */
        const GstClockTime dur = gst_util_uint64_scale_int(GST_SECOND, 1,
                                                           GST_VIDEO_INFO_FPS_N(&fr->info));
        for (int f = 0; f < fr->n; f++) {
            GstBuffer *b = pb_buffer_share(fr->dist[f]);
            GST_BUFFER_PTS(b) = (GstClockTime)f * dur;
            GST_BUFFER_DURATION(b) = dur;
            gst_app_src_push_buffer(src, b);
        }
        gst_app_src_end_of_stream(src);
    }
    /* an error does not end appsink's wait: pull with a timeout and look
     * at the bus between pulls */
    GstBus *bus = gst_element_get_bus(pipe);
    GstMessage *m = NULL;
    const gint64 deadline = g_get_monotonic_time() + 300 * G_TIME_SPAN_SECOND;
    while (!err && !m && !gst_app_sink_is_eos(sink)) {
        GstSample *s = gst_app_sink_try_pull_sample(sink, GST_SECOND / 4);
        if (s) {
            if (!fr->h264_caps && gst_sample_get_caps(s))
                fr->h264_caps = gst_caps_copy(gst_sample_get_caps(s));
            g_ptr_array_add(aus, gst_buffer_ref(gst_sample_get_buffer(s)));
            gst_sample_unref(s);
        }
        m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
        if (!m && g_get_monotonic_time() > deadline) {
            snprintf(why, len, "the H.264 pipeline did not finish in 300 s");
            err = -1;
        }
    }
    if (!m)
        m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    if (m) {
        GError *e = NULL;
        gst_message_parse_error(m, &e, NULL);
        snprintf(why, len, "%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)),
                 e ? e->message : "error");
        g_clear_error(&e);
        gst_message_unref(m);
        err = -1;
    }
    gst_object_unref(bus);
    gst_element_set_state(pipe, GST_STATE_NULL);
    gst_object_unref(sink);

    if (!err && (aus->len == 0 || !fr->h264_caps)) {
        snprintf(why, len, "no H.264 access units came out");
        err = -1;
    }
    if (!err && GST_BUFFER_FLAG_IS_SET(g_ptr_array_index(aus, 0), GST_BUFFER_FLAG_DELTA_UNIT)) {
        /* the loop restarts the decoder at the first unit */
        snprintf(why, len, "the bitstream does not start with a key frame");
        err = -1;
    }
    if (!err) {
        fr->n_au = (int)aus->len;
        fr->au = (GstBuffer **)g_ptr_array_free(aus, FALSE);
        /* the live side gives its own timestamps and frame rate */
        gst_caps_set_simple(fr->h264_caps, "framerate", GST_TYPE_FRACTION,
                            GST_VIDEO_INFO_FPS_N(&fr->info), 1, NULL);
    } else {
        g_ptr_array_foreach(aus, (GFunc)(void (*)(void))gst_buffer_unref, NULL);
        g_ptr_array_free(aus, TRUE);
        if (fr->h264_caps)
            gst_caps_unref(fr->h264_caps);
        fr->h264_caps = NULL;
    }
    return err;
}

int pb_frames_encode(PbFrames *fr, int kbps, char *why, size_t len)
{
    GError *e = NULL;
    /* zerolatency: no B-frames and no look-ahead, so decode order is display
     * order and the decoder holds no frame back; one GOP of exactly n
     * pictures (key-int-max), High profile (what NVDEC decodes; see
     * ../shared/gpu/README.md on a Baseline stream that did not negotiate) */
    gchar *desc = g_strdup_printf(
        "appsrc name=in format=time ! videoconvert ! x264enc tune=zerolatency "
        "speed-preset=superfast bitrate=%d key-int-max=%d ! "
        "video/x-h264,profile=high,stream-format=byte-stream,alignment=au ! "
        "h264parse config-interval=-1 ! "
        "video/x-h264,stream-format=byte-stream,alignment=au ! "
        "appsink name=out sync=false", kbps, fr->n);
    GstElement *pipe = gst_parse_launch(desc, &e);
    g_free(desc);
    if (!pipe) {
        snprintf(why, len, "cannot make the encoder (x264enc, gstreamer1.0-plugins-ugly): %s",
                 e ? e->message : "?");
        g_clear_error(&e);
        return -1;
    }
    g_clear_error(&e);
    GstElement *in = gst_bin_get_by_name(GST_BIN(pipe), "in");
    GstCaps *caps = gst_video_info_to_caps(&fr->info);
    g_object_set(in, "caps", caps, "max-bytes", (guint64)0, NULL);
    gst_caps_unref(caps);
    int err = collect_aus(pipe, fr, GST_APP_SRC(in), why, len);
    gst_object_unref(in);
    gst_object_unref(pipe);
    if (!err && fr->n_au != fr->n) {
        snprintf(why, len, "the encoder made %d access units from %d pictures", fr->n_au,
                 fr->n);
        err = -1;
    }
    return err;
}

int pb_frames_load_h264(PbFrames *fr, const char *path, char *why, size_t len)
{
    GstElement *pipe = gst_parse_launch(
        "filesrc name=file ! h264parse config-interval=-1 ! "
        "video/x-h264,stream-format=byte-stream,alignment=au ! "
        "appsink name=out sync=false", NULL);
    if (!pipe) {
        snprintf(why, len, "cannot make filesrc ! h264parse ! appsink");
        return -1;
    }
    GstElement *file = gst_bin_get_by_name(GST_BIN(pipe), "file");
    g_object_set(file, "location", path, NULL);
    gst_object_unref(file);
    int err = collect_aus(pipe, fr, NULL, why, len);
    gst_object_unref(pipe);
    if (!err) {
        const GstStructure *s = gst_caps_get_structure(fr->h264_caps, 0);
        int w = 0, h = 0;
        gst_structure_get_int(s, "width", &w);
        gst_structure_get_int(s, "height", &h);
        if (w != GST_VIDEO_INFO_WIDTH(&fr->info) || h != GST_VIDEO_INFO_HEIGHT(&fr->info)) {
            snprintf(why, len, "%s is %dx%d, the reference pictures %dx%d (--width/--height)",
                     path, w, h, GST_VIDEO_INFO_WIDTH(&fr->info),
                     GST_VIDEO_INFO_HEIGHT(&fr->info));
            err = -1;
        }
    }
    return err;
}

void pb_frames_clear(PbFrames *fr)
{
    for (int f = 0; f < fr->n; f++) {
        if (fr->ref && fr->ref[f])
            gst_buffer_unref(fr->ref[f]);
        if (fr->dist && fr->dist[f])
            gst_buffer_unref(fr->dist[f]);
    }
    for (int i = 0; i < fr->n_au; i++)
        gst_buffer_unref(fr->au[i]);
    g_free(fr->ref);
    g_free(fr->dist);
    g_free(fr->au);
    if (fr->h264_caps)
        gst_caps_unref(fr->h264_caps);
    memset(fr, 0, sizeof(*fr));
}

GstBuffer *pb_buffer_share(GstBuffer *src)
{
    GstBuffer *b = gst_buffer_new();
    const guint n = gst_buffer_n_memory(src);
    for (guint i = 0; i < n; i++)
        gst_buffer_append_memory(b, gst_memory_ref(gst_buffer_peek_memory(src, i)));
    GstVideoMeta *vm = gst_buffer_get_video_meta(src);
    if (vm)
        gst_buffer_add_video_meta_full(b, vm->flags, vm->format, vm->width, vm->height,
                                       vm->n_planes, vm->offset, vm->stride);
    gst_buffer_copy_into(b, src, GST_BUFFER_COPY_FLAGS, 0, (gsize)-1);
    return b;
}
