/* qmetric-bench-probes: the pictures the probes send, and the bitstreams
 * of the sides a decoder makes. */
#include <stdlib.h>
#include <string.h>

#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>

#include "probes.h"
#include "qmbench.h"

/* [1 2 1] / 4 across and down, `passes` times, edges repeated, on 8- or
 * 16-bit samples: with qb_synth_frame's quantisation, a distortion VMAF sees
 * clearly (the quantised picture alone scores close to 100 at small sizes). */
static void blur(uint8_t *pl, int w, int h, ptrdiff_t stride, int bytes, int passes)
{
#define AT(p, i) (bytes == 1 ? (int)(p)[i] : (int)((const uint16_t *)(const void *)(p))[i])
#define PUT(p, i, v) do { if (bytes == 1) (p)[i] = (uint8_t)(v); \
                          else ((uint16_t *)(void *)(p))[i] = (uint16_t)(v); } while (0)
    int *tmp = g_new(int, MAX(w, h));
    for (int n = 0; n < passes; n++) {
        for (int y = 0; y < h; y++) {
            uint8_t *r = pl + y * stride;
            for (int x = 0; x < w; x++)
                tmp[x] = (AT(r, MAX(x - 1, 0)) + 2 * AT(r, x) + AT(r, MIN(x + 1, w - 1)) + 2) / 4;
            for (int x = 0; x < w; x++)
                PUT(r, x, tmp[x]);
        }
        for (int x = 0; x < w; x++) {
            for (int y = 0; y < h; y++)
                tmp[y] = (AT(pl + MAX(y - 1, 0) * stride, x) + 2 * AT(pl + y * stride, x) +
                          AT(pl + MIN(y + 1, h - 1) * stride, x) + 2) / 4;
            for (int y = 0; y < h; y++)
                PUT(pl + y * stride, x, tmp[y]);
        }
    }
    g_free(tmp);
#undef AT
#undef PUT
}

/* Frame f's planar pictures into its NV12 or P010 buffers (P010: the
 * samples in the upper 10 of 16 bits, chroma interleaved). */
static int fill(const GstVideoInfo *info, GstBuffer *b, uint8_t *const pl[3],
                const ptrdiff_t stride[3])
{
    const int w = GST_VIDEO_INFO_WIDTH(info), h = GST_VIDEO_INFO_HEIGHT(info);
    const bool p010 = GST_VIDEO_INFO_FORMAT(info) == GST_VIDEO_FORMAT_P010_10LE;
    GstVideoFrame vf;
    if (!gst_video_frame_map(&vf, info, b, GST_MAP_WRITE))
        return -1;
    for (int y = 0; y < h; y++) {
        uint8_t *d = (uint8_t *)GST_VIDEO_FRAME_PLANE_DATA(&vf, 0) +
                     (size_t)y * GST_VIDEO_FRAME_PLANE_STRIDE(&vf, 0);
        const uint8_t *s = pl[0] + (size_t)y * stride[0];
        if (!p010)
            memcpy(d, s, (size_t)w);
        else
            for (int x = 0; x < w; x++)
                ((uint16_t *)d)[x] = GUINT16_TO_LE((uint16_t)(((const uint16_t *)s)[x] << 6));
    }
    for (int y = 0; y < h / 2; y++) {
        uint8_t *uv = (uint8_t *)GST_VIDEO_FRAME_PLANE_DATA(&vf, 1) +
                      (size_t)y * GST_VIDEO_FRAME_PLANE_STRIDE(&vf, 1);
        const uint8_t *u = pl[1] + (size_t)y * stride[1], *v = pl[2] + (size_t)y * stride[2];
        for (int x = 0; x < w / 2; x++) {
            if (!p010) {
                uv[2 * x] = u[x];
                uv[2 * x + 1] = v[x];
            } else {
                ((uint16_t *)uv)[2 * x] = GUINT16_TO_LE((uint16_t)(((const uint16_t *)u)[x] << 6));
                ((uint16_t *)uv)[2 * x + 1] =
                    GUINT16_TO_LE((uint16_t)(((const uint16_t *)v)[x] << 6));
            }
        }
    }
    gst_video_frame_unmap(&vf);
    return 0;
}

typedef struct MakeJob {
    PbFrames *fr;
    int bits, first, step;
    gint *errp;                 /* atomic, shared by the jobs */
} MakeJob;

/* Frames first, first + step, ...: made by one of several threads.  Each
 * frame has its own generator seed, so the pictures do not depend on the
 * thread count. */
static gpointer make_frames(gpointer data)
{
    MakeJob *j = data;
    PbFrames *fr = j->fr;
    const int w = GST_VIDEO_INFO_WIDTH(&fr->info), h = GST_VIDEO_INFO_HEIGHT(&fr->info);
    const int bytes = j->bits > 8 ? 2 : 1;
    /* qb_synth_frame writes planar chroma: made planar, then interleaved */
    const int pw[3] = { w, w / 2, w / 2 }, ph[3] = { h, h / 2, h / 2 };
    const ptrdiff_t stride[3] = { (ptrdiff_t)w * bytes, (ptrdiff_t)w / 2 * bytes,
                                  (ptrdiff_t)w / 2 * bytes };
    uint8_t *pl[2][3];
    for (int k = 0; k < 2; k++)
        for (int p = 0; p < 3; p++)
            pl[k][p] = g_malloc((size_t)stride[p] * ph[p]);
    for (int f = j->first; f < fr->n && !g_atomic_int_get(j->errp); f += j->step) {
        /* bench/qmetric-bench-pipeline.c's seed for frame 0 */
        uint32_t rng = 12345u + 2654435761u * (uint32_t)f;
        if (!rng)
            rng = 1;
        qb_synth_frame(w, j->bits, 3, pw, ph, pl[0], pl[1], stride, f, &rng);
        blur(pl[1][0], pw[0], ph[0], stride[0], bytes, 2);
        for (int k = 0; k < 2; k++) {
            GstBuffer *b = fr->pic[k][f];
            if (fill(&fr->info, b, pl[k], stride)) {
                g_atomic_int_set(j->errp, 1);
                break;
            }
        }
    }
    for (int k = 0; k < 2; k++)
        for (int p = 0; p < 3; p++)
            g_free(pl[k][p]);
    return NULL;
}

int pb_frames_make(PbFrames *fr, int w, int h, int fps, int n, int bits)
{
    memset(fr, 0, sizeof(*fr));
    /* 4:2:0 with whole chroma samples */
    if (w < 16 || h < 16 || (w & 1) || (h & 1) || n < 1 || (bits != 8 && bits != 10) ||
        !gst_video_info_set_format(&fr->info, bits > 8 ? GST_VIDEO_FORMAT_P010_10LE
                                                       : GST_VIDEO_FORMAT_NV12,
                                   (guint)w, (guint)h))
        return -1;
    GST_VIDEO_INFO_FPS_N(&fr->info) = fps;
    GST_VIDEO_INFO_FPS_D(&fr->info) = 1;
    fr->n = n;
    for (int k = 0; k < 2; k++) {
        fr->pic[k] = g_new0(GstBuffer *, n);
        for (int f = 0; f < n; f++)
            fr->pic[k][f] = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(&fr->info), NULL);
    }
    const int nth = MAX(1, MIN(n, (int)g_get_num_processors()));
    MakeJob *jobs = g_new0(MakeJob, nth);
    GThread **th = g_new0(GThread *, nth);
    gint err = 0;
    for (int i = 0; i < nth; i++) {
        jobs[i] = (MakeJob){ .fr = fr, .bits = bits, .first = i, .step = nth, .errp = &err };
        th[i] = g_thread_new("pb-make", make_frames, &jobs[i]);
    }
    for (int i = 0; i < nth; i++)
        g_thread_join(th[i]);
    g_free(th);
    g_free(jobs);
    if (err)
        pb_frames_clear(fr);
    return err ? -1 : 0;
}

const char *pb_codec_parser(PbCodec codec)
{
    return codec == PB_CODEC_H265 ? "h265parse" : "h264parse";
}

static const char *const codec_names[] = { "H.264", "H.265" };

/* Run a built pipeline whose appsink is named "out" to EOS, keeping each
 * sample's buffer (an access unit) in bs and the first sample's caps;
 * pictures: pushed into src first (display order, then EOS: the encoder
 * flushes). */
static int collect_aus(GstElement *pipe, const PbFrames *fr, GstBuffer **pictures,
                       GstAppSrc *src, PbStream *bs, char *why, size_t len)
{
    GstAppSink *sink = GST_APP_SINK(gst_bin_get_by_name(GST_BIN(pipe), "out"));
    GPtrArray *aus = g_ptr_array_new();
    int err = 0;

    if (gst_element_set_state(pipe, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        snprintf(why, len, "cannot start the encoding pipeline");
        err = -1;
    }
    if (!err && src) {
        const GstClockTime dur = gst_util_uint64_scale_int(GST_SECOND, 1,
                                                           GST_VIDEO_INFO_FPS_N(&fr->info));
        for (int f = 0; f < fr->n; f++) {
            GstBuffer *b = pb_buffer_share(pictures[f]);
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
            if (!bs->caps && gst_sample_get_caps(s))
                bs->caps = gst_caps_copy(gst_sample_get_caps(s));
            g_ptr_array_add(aus, gst_buffer_ref(gst_sample_get_buffer(s)));
            gst_sample_unref(s);
        }
        m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
        if (!m && g_get_monotonic_time() > deadline) {
            snprintf(why, len, "the bitstream pipeline did not finish in 300 s");
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

    if (!err && (aus->len == 0 || !bs->caps)) {
        snprintf(why, len, "no access units came out");
        err = -1;
    }
    if (!err && GST_BUFFER_FLAG_IS_SET(g_ptr_array_index(aus, 0), GST_BUFFER_FLAG_DELTA_UNIT)) {
        /* the loop restarts the decoder at the first unit */
        snprintf(why, len, "the bitstream does not start with a key frame");
        err = -1;
    }
    if (!err) {
        bs->n_au = (int)aus->len;
        bs->au = (GstBuffer **)g_ptr_array_free(aus, FALSE);
        /* the live side gives its own timestamps and frame rate */
        gst_caps_set_simple(bs->caps, "framerate", GST_TYPE_FRACTION,
                            GST_VIDEO_INFO_FPS_N(&fr->info), 1, NULL);
    } else {
        g_ptr_array_foreach(aus, (GFunc)(void (*)(void))gst_buffer_unref, NULL);
        g_ptr_array_free(aus, TRUE);
        gst_clear_caps(&bs->caps);
    }
    return err;
}

int pb_frames_encode(PbFrames *fr, int side, PbCodec codec, int kbps, char *why, size_t len)
{
    const bool deep = GST_VIDEO_INFO_FORMAT(&fr->info) == GST_VIDEO_FORMAT_P010_10LE;
    GError *e = NULL;
    gchar *desc;
    /* zero latency: no B-frames and no look-ahead, so decode order is
     * display order and the decoder holds no frame back; one GOP of exactly
     * n pictures (key-int-max).  H.264: High profile, 8 bits (what NVDEC
     * decodes; see ../shared/gpu/README.md on a Baseline stream that did
     * not negotiate).  H.265: Main, or Main 10 from 10-bit pictures (x265
     * takes planar I420_10LE). */
    if (codec == PB_CODEC_H264 && deep) {
        snprintf(why, len, "10-bit pictures are encoded as H.265 Main 10 (--codec h265): "
                 "NVDEC has no H.264 High 10");
        return -1;
    }
    if (codec == PB_CODEC_H264)
        desc = g_strdup_printf(
            "appsrc name=in format=time ! videoconvert ! x264enc tune=zerolatency "
            "speed-preset=superfast bitrate=%d key-int-max=%d ! "
            "video/x-h264,profile=high,stream-format=byte-stream,alignment=au ! "
            "h264parse config-interval=-1 ! "
            "video/x-h264,stream-format=byte-stream,alignment=au ! "
            "appsink name=out sync=false", kbps, fr->n);
    else
        desc = g_strdup_printf(
            "appsrc name=in format=time ! videoconvert ! video/x-raw,format=%s ! "
            "x265enc tune=zerolatency speed-preset=ultrafast bitrate=%d key-int-max=%d ! "
            "video/x-h265,profile=%s ! h265parse config-interval=-1 ! "
            "video/x-h265,stream-format=byte-stream,alignment=au ! "
            "appsink name=out sync=false", deep ? "I420_10LE" : "I420", kbps, fr->n,
            deep ? "main-10" : "main");
    GstElement *pipe = gst_parse_launch(desc, &e);
    g_free(desc);
    if (!pipe) {
        snprintf(why, len, "cannot make the %s encoder (%s): %s", codec_names[codec],
                 codec == PB_CODEC_H264 ? "x264enc, gstreamer1.0-plugins-ugly"
                                        : "x265enc, gstreamer1.0-plugins-bad",
                 e ? e->message : "?");
        g_clear_error(&e);
        return -1;
    }
    g_clear_error(&e);
    GstElement *in = gst_bin_get_by_name(GST_BIN(pipe), "in");
    GstCaps *caps = gst_video_info_to_caps(&fr->info);
    g_object_set(in, "caps", caps, "max-bytes", (guint64)0, NULL);
    gst_caps_unref(caps);
    PbStream *bs = &fr->bs[side ? 1 : 0];
    int err = collect_aus(pipe, fr, fr->pic[side ? 1 : 0], GST_APP_SRC(in), bs, why, len);
    gst_object_unref(in);
    gst_object_unref(pipe);
    if (!err && bs->n_au != fr->n) {
        snprintf(why, len, "the encoder made %d access units from %d pictures", bs->n_au,
                 fr->n);
        err = -1;
    }
    return err;
}

int pb_frames_load(PbFrames *fr, int side, PbCodec codec, const char *path, char *why,
                   size_t len)
{
    const char *caps = codec == PB_CODEC_H265 ? "video/x-h265" : "video/x-h264";
    gchar *desc = g_strdup_printf("filesrc name=file ! %s config-interval=-1 ! "
                                  "%s,stream-format=byte-stream,alignment=au ! "
                                  "appsink name=out sync=false", pb_codec_parser(codec), caps);
    GstElement *pipe = gst_parse_launch(desc, NULL);
    g_free(desc);
    if (!pipe) {
        snprintf(why, len, "cannot make filesrc ! %s ! appsink", pb_codec_parser(codec));
        return -1;
    }
    GstElement *file = gst_bin_get_by_name(GST_BIN(pipe), "file");
    g_object_set(file, "location", path, NULL);
    gst_object_unref(file);
    PbStream *bs = &fr->bs[side ? 1 : 0];
    int err = collect_aus(pipe, fr, NULL, NULL, bs, why, len);
    gst_object_unref(pipe);
    if (err) {
        gchar *w = g_strdup(why);
        snprintf(why, len, "%s (%s): %s", path, codec_names[codec], w);
        g_free(w);
    } else {
        const GstStructure *s = gst_caps_get_structure(bs->caps, 0);
        int w = 0, h = 0;
        gst_structure_get_int(s, "width", &w);
        gst_structure_get_int(s, "height", &h);
        if (w != GST_VIDEO_INFO_WIDTH(&fr->info) || h != GST_VIDEO_INFO_HEIGHT(&fr->info)) {
            snprintf(why, len, "%s is %dx%d, the pictures %dx%d (--width/--height)",
                     path, w, h, GST_VIDEO_INFO_WIDTH(&fr->info),
                     GST_VIDEO_INFO_HEIGHT(&fr->info));
            err = -1;
        }
    }
    return err;
}

void pb_frames_clear(PbFrames *fr)
{
    for (int k = 0; k < 2; k++) {
        for (int f = 0; fr->pic[k] && f < fr->n; f++)
            if (fr->pic[k][f])
                gst_buffer_unref(fr->pic[k][f]);
        g_free(fr->pic[k]);
        for (int i = 0; i < fr->bs[k].n_au; i++)
            gst_buffer_unref(fr->bs[k].au[i]);
        g_free(fr->bs[k].au);
        gst_clear_caps(&fr->bs[k].caps);
    }
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
