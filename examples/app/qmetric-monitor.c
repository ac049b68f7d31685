/* qmetric-monitor: an application that embeds a qmetric pipeline and raises
 * an alert when a score stays below a threshold for several frames.
 *
 *   qmetric-monitor [--feature vmaf] [--below 80] [--frames 10]
 *                   [--num-buffers 300] [--drop-at 150] [--verbose]
 *                   [--pipeline 'DESCRIPTION with qmetric name=q']
 *
 * The scores reach the application two ways, both shown here:
 *  - in the streaming thread, on each scored buffer, as a GstQmetricMeta
 *    (read in a pad probe on qmetric's src pad): no delay, the place to act on
 *    the stream itself (switch a source, tag the frame, raise the bitrate);
 *  - in the main thread, as "qmetric" element messages on the bus: the place
 *    for logging, user interfaces, statistics.
 * The alert is decided in the probe and handed to the main thread as an
 * application message, so that the streaming thread never blocks on output.
 *
 * The default pipeline encodes a test pattern with x264 and, at frame
 * --drop-at, cuts the encoder's bitrate to a tenth: a live encoder losing its
 * bandwidth, which the monitor should notice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gst/gst.h>

#include "gstqmetricmeta.h"

typedef struct {
    /* options */
    const char *feature;
    double below;
    int frames;
    int num_buffers;
    int drop_at;
    gboolean verbose;
    /* streaming thread (pad probe) */
    int run;                  /* consecutive frames below the threshold */
    guint64 run_start;
    double run_min;
    gboolean alerting;
    guint64 metas;
    GstElement *encoder;      /* the default pipeline's x264enc, or NULL */
    /* main thread (bus) */
    guint64 messages;
    double sum;
    guint64 n;
    int alerts;
    GMainLoop *loop;
    int exit_code;
} Monitor;

/* The metric that produces a feature, for the default pipeline. */
static const char *metric_of(const char *feature)
{
    if (g_str_has_prefix(feature, "psnr_hvs"))
        return "psnr_hvs";
    if (g_str_has_prefix(feature, "psnr"))
        return "psnr";
    if (!strcmp(feature, "ciede2000"))
        return "ciede";
    if (g_str_has_prefix(feature, "vmaf"))
        return "vmaf";
    return feature; /* float_ssim, float_ms_ssim, cambi */
}

static void post_alert(GstElement *q, const char *what, guint64 first, guint64 last, double min)
{
    gst_element_post_message(q, gst_message_new_application(GST_OBJECT(q),
        gst_structure_new("qmetric-monitor", "what", G_TYPE_STRING, what,
                          "first", G_TYPE_UINT64, first, "last", G_TYPE_UINT64, last,
                          "min", G_TYPE_DOUBLE, min, NULL)));
}

/* Streaming thread: every buffer leaving qmetric.  A scored buffer carries
 * the scores of its own frame. */
static GstPadProbeReturn on_buffer(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Monitor *m = data;
    GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info);
    GstQmetricMeta *meta = gst_buffer_get_qmetric_meta(buf);
    GstElement *q = GST_ELEMENT(gst_pad_get_parent(pad));
    double v;

    if (!meta || !gst_qmetric_meta_get_score(meta, m->feature, &v))
        goto out; /* an unmatched frame, or subsampled away */
    m->metas++;
    if (m->encoder && m->drop_at >= 0 && meta->index == (guint64)m->drop_at) {
        /* the demonstration: the link loses 90% of its bandwidth */
        guint kbps;
        g_object_get(m->encoder, "bitrate", &kbps, NULL);
        g_object_set(m->encoder, "bitrate", MAX(kbps / 10, 1u), NULL);
        post_alert(q, "bitrate-drop", meta->index, meta->index, kbps / 10);
    }
    if (v < m->below) {
        if (m->run++ == 0) {
            m->run_start = meta->index;
            m->run_min = v;
        }
        m->run_min = MIN(m->run_min, v);
        if (m->run == m->frames && !m->alerting) {
            m->alerting = TRUE;
            post_alert(q, "alert", m->run_start, meta->index, m->run_min);
        }
    } else {
        if (m->alerting)
            post_alert(q, "recovered", m->run_start, meta->index, m->run_min);
        m->alerting = FALSE;
        m->run = 0;
    }
out:
    gst_object_unref(q);
    return GST_PAD_PROBE_OK;
}

/* Main thread: the bus. */
static gboolean on_bus(GstBus *bus, GstMessage *msg, gpointer data)
{
    Monitor *m = data;
    const GstStructure *s = gst_message_get_structure(msg);
    double v;
    guint64 index = 0, first = 0, last = 0;

    switch (GST_MESSAGE_TYPE(msg)) {
    case GST_MESSAGE_ELEMENT:
        if (gst_structure_has_name(s, "qmetric")) {
            m->messages++;
            if (gst_structure_get_double(s, m->feature, &v)) {
                m->sum += v;
                m->n++;
                gst_structure_get_uint64(s, "index", &index);
                if (m->verbose)
                    g_print("frame %5" G_GUINT64_FORMAT "  %s %.3f\n", index, m->feature, v);
            }
        } else if (gst_structure_has_name(s, "qmetric-summary")) {
            const GValue *pooled = gst_structure_get_value(s, m->feature);
            if (pooled && GST_VALUE_HOLDS_STRUCTURE(pooled) &&
                gst_structure_get_double(gst_value_get_structure(pooled), "mean", &v))
                g_print("summary: %s mean %.3f (pooled by qmetric)\n", m->feature, v);
        }
        break;
    case GST_MESSAGE_APPLICATION: {
        const char *what = gst_structure_get_string(s, "what");
        if (!gst_structure_has_name(s, "qmetric-monitor"))
            break;
        gst_structure_get_uint64(s, "first", &first);
        gst_structure_get_uint64(s, "last", &last);
        gst_structure_get_double(s, "min", &v);
        if (!strcmp(what, "alert")) {
            m->alerts++;
            g_print("ALERT: %s below %g for %d frames (frames %" G_GUINT64_FORMAT "..%"
                    G_GUINT64_FORMAT ", lowest %.3f)\n", m->feature, m->below, m->frames,
                    first, last, v);
        } else if (!strcmp(what, "recovered")) {
            g_print("recovered at frame %" G_GUINT64_FORMAT " (%s was below %g from frame %"
                    G_GUINT64_FORMAT ", lowest %.3f)\n", last, m->feature, m->below, first, v);
        } else if (!strcmp(what, "bitrate-drop")) {
            g_print("frame %" G_GUINT64_FORMAT ": encoder bitrate cut to %.0f kbit/s\n", first, v);
        }
        break;
    }
    case GST_MESSAGE_ERROR: {
        GError *err;
        gst_message_parse_error(msg, &err, NULL);
        g_printerr("error from %s: %s\n", GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)), err->message);
        g_error_free(err);
        m->exit_code = 2;
        g_main_loop_quit(m->loop);
        break;
    }
    case GST_MESSAGE_EOS:
        g_main_loop_quit(m->loop);
        break;
    default:
        break;
    }
    return G_SOURCE_CONTINUE;
}

int main(int argc, char **argv)
{
    Monitor m = { .feature = "vmaf", .below = 80, .frames = 10, .num_buffers = 300,
                  .drop_at = 150 };
    char *feature = NULL, *pipeline_desc = NULL;
    GOptionEntry entries[] = {
        { "feature", 0, 0, G_OPTION_ARG_STRING, &feature, "Score to watch (default vmaf)", "NAME" },
        { "below", 0, 0, G_OPTION_ARG_DOUBLE, &m.below, "Alert threshold (default 80)", "VALUE" },
        { "frames", 0, 0, G_OPTION_ARG_INT, &m.frames,
          "Alert after this many frames in a row below (default 10)", "N" },
        { "num-buffers", 0, 0, G_OPTION_ARG_INT, &m.num_buffers,
          "Frames of the default pipeline (default 300)", "N" },
        { "drop-at", 0, 0, G_OPTION_ARG_INT, &m.drop_at,
          "Default pipeline: cut the bitrate at this frame (-1: never; default 150)", "N" },
        { "verbose", 'v', 0, G_OPTION_ARG_NONE, &m.verbose, "Print every frame's score", NULL },
        { "pipeline", 0, 0, G_OPTION_ARG_STRING, &pipeline_desc,
          "Pipeline to run instead (must contain 'qmetric name=q')", "DESC" },
        { NULL },
    };
    GOptionContext *ctx = g_option_context_new("- alert when video quality drops");
    GError *err = NULL;
    GstElement *pipeline, *q;
    GstPad *src;
    GstBus *bus;

    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_add_group(ctx, gst_init_get_option_group());
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        g_printerr("%s\n", err->message);
        return 2;
    }
    g_option_context_free(ctx);
    if (feature)
        m.feature = feature;

#ifdef QM_BUILD_PLUGIN_DIR
    /* run from the build tree without GST_PLUGIN_PATH */
    if (!gst_registry_lookup_feature(gst_registry_get(), "qmetric"))
        gst_registry_scan_path(gst_registry_get(), QM_BUILD_PLUGIN_DIR);
#endif

    if (!pipeline_desc) {
        /* the reference goes straight in; the distorted path is a live-style
         * x264 encoder whose bitrate the probe cuts at --drop-at */
        pipeline_desc = g_strdup_printf(
            "videotestsrc num-buffers=%d pattern=zone-plate kx2=20 ky2=20 kt=1 ! "
            "video/x-raw,format=I420,width=640,height=360,framerate=30/1 ! tee name=t "
            "t. ! queue max-size-buffers=0 max-size-bytes=0 max-size-time=0 ! q.ref_sink "
            "t. ! queue ! x264enc name=enc bitrate=2000 speed-preset=ultrafast tune=zerolatency ! "
            "avdec_h264 ! q.dist_sink "
            "qmetric name=q metrics=%s ! fakesink", m.num_buffers, metric_of(m.feature));
    }
    pipeline = gst_parse_launch(pipeline_desc, &err);
    if (!pipeline) {
        g_printerr("cannot build the pipeline: %s\n", err->message);
        return 2;
    }
    q = gst_bin_get_by_name(GST_BIN(pipeline), "q");
    if (!q) {
        g_printerr("the pipeline has no element named 'q' (qmetric name=q)\n");
        return 2;
    }
    m.encoder = gst_bin_get_by_name(GST_BIN(pipeline), "enc");
    src = gst_element_get_static_pad(q, "src");
    gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, on_buffer, &m, NULL);
    gst_object_unref(src);

    m.loop = g_main_loop_new(NULL, FALSE);
    bus = gst_element_get_bus(pipeline);
    gst_bus_add_watch(bus, on_bus, &m);
    gst_object_unref(bus);
    g_print("watching %s: alert when below %g for %d frames\n", m.feature, m.below, m.frames);
    gst_element_set_state(pipeline, GST_STATE_PLAYING);
    g_main_loop_run(m.loop);
    gst_element_set_state(pipeline, GST_STATE_NULL);

    g_print("frames: %" G_GUINT64_FORMAT " messages, %" G_GUINT64_FORMAT " metas; %s mean %.3f; "
            "%d alert(s)\n", m.messages, m.metas, m.feature, m.n ? m.sum / m.n : 0.0, m.alerts);
    if (m.encoder)
        gst_object_unref(m.encoder);
    gst_object_unref(q);
    gst_object_unref(pipeline);
    g_free(pipeline_desc);
    return m.exit_code;
}
