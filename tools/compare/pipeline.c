/* qmetric-compare: the pipeline: two decoders, conversion to one format,
 * optional scaling, the probes that pair frames, and the qmetric element. */
#include "compare.h"
#include "swscale.h"

#include "qm.h"

/* ---------------------------------------------------------------- pipeline */

static gboolean qmetric_accepts(GstElement *qm, GstVideoFormat f)
{
    GstPad *pad = gst_element_get_static_pad(qm, "ref_sink");
    GstCaps *tmpl = gst_pad_get_pad_template_caps(pad);
    GstCaps *c = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING,
                                     gst_video_format_to_string(f), NULL);
    gboolean ok = gst_caps_can_intersect(tmpl, c);
    gst_caps_unref(c);
    gst_caps_unref(tmpl);
    gst_object_unref(pad);
    return ok;
}

/* The format both streams are compared in: the reference's own format when
 * qmetric reads it (then the reference is not touched), else the nearest
 * planar YUV format that loses nothing: same bit depth and chroma layout,
 * RGB as 4:4:4. */
GstVideoFormat qmc_compare_format(GstElement *qm, GstVideoFormat ref)
{
    const GstVideoFormatInfo *fi = gst_video_format_get_info(ref);
    int depth = GST_VIDEO_FORMAT_INFO_DEPTH(fi, 0);
    const char *f;

    if (qmetric_accepts(qm, ref))
        return ref;
    if (GST_VIDEO_FORMAT_INFO_IS_GRAY(fi))
        f = depth > 8 ? "GRAY16_LE" : "GRAY8";
    else if (!GST_VIDEO_FORMAT_INFO_IS_RGB(fi) && fi->w_sub[1] == 1 && fi->h_sub[1] == 1)
        f = depth > 12 ? "P016_LE" : depth > 10 ? "I420_12LE" : depth > 8 ? "I420_10LE" : "I420";
    else if (!GST_VIDEO_FORMAT_INFO_IS_RGB(fi) && fi->w_sub[1] == 1 && fi->h_sub[1] == 0 &&
             depth <= 12)
        f = depth > 10 ? "I422_12LE" : depth > 8 ? "I422_10LE" : "Y42B";
    else
        f = depth > 12 ? "Y444_16LE" : depth > 10 ? "Y444_12LE" : depth > 8 ? "Y444_10LE" : "Y444";
    return gst_video_format_from_string(f);
}

/* From a streaming thread: a warning for the main loop to print. */
void qmc_post_warning(App *app, const char *fmt, ...)
{
    va_list ap;
    char *msg;
    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    gst_element_post_message(app->pipeline,
        gst_message_new_application(GST_OBJECT(app->pipeline),
            gst_structure_new("qmc-warning", "message", G_TYPE_STRING, msg, NULL)));
    g_free(msg);
}

/* Index pairing puts every frame on the reference's timeline (frame N at N
 * of its frame durations, 1/25 s without a rate).  The caps that reach the
 * element say that timeline's rate instead of the decoder's, so that what
 * the element sees agrees with the timestamps it gets: otherwise it would
 * warn that frames of other rates pair by running time and go unmatched,
 * which index pairing never does. */
void qmc_index_timeline_caps(GstPadProbeInfo *info, const GstCaps *ref)
{
    GstEvent *ev = GST_PAD_PROBE_INFO_EVENT(info), *n;
    GstCaps *caps;
    int fn = 0, fd = 1, cn, cd;

    if (!ref || !gst_structure_get_fraction(gst_caps_get_structure(ref, 0), "framerate",
                                            &fn, &fd) || fn <= 0) {
        fn = 25;
        fd = 1;
    }
    gst_event_parse_caps(ev, &caps);
    if (gst_structure_get_fraction(gst_caps_get_structure(caps, 0), "framerate", &cn, &cd) &&
        (gint64)cn * fd == (gint64)fn * cd)
        return;
    caps = gst_caps_copy(caps);
    gst_caps_set_simple(caps, "framerate", GST_TYPE_FRACTION, fn, fd, NULL);
    n = gst_event_new_caps(caps);
    gst_caps_unref(caps);
    gst_event_set_seqnum(n, gst_event_get_seqnum(ev));
    gst_event_unref(ev);
    GST_PAD_PROBE_INFO_DATA(info) = n;
}

/* Called with app->lock held once both decoded formats are known: choose the
 * comparison format and size, set the capsfilters, release both streams. */
static gboolean configure(App *app)
{
    GstVideoInfo ri, di;
    GstCaps *c;
    char *colorimetry = NULL;

    if (!gst_video_info_from_caps(&ri, app->side[REF].caps) ||
        !gst_video_info_from_caps(&di, app->side[DIST].caps)) {
        qmc_post_error(app, "cannot read the decoded video format");
        return FALSE;
    }
    if ((ri.width != di.width || ri.height != di.height) && !app->o.scale) {
        qmc_post_error(app, "sizes differ: reference is %dx%d, distorted is %dx%d "
                       "(add --scale to scale the distorted video to the reference size)",
                       ri.width, ri.height, di.width, di.height);
        return FALSE;
    }
    app->scaled = ri.width != di.width || ri.height != di.height;
    app->target = qmc_compare_format(app->qm, GST_VIDEO_INFO_FORMAT(&ri));
    app->converted = GST_VIDEO_INFO_FORMAT(&di) != app->target;
    /* Two YUV streams are compared as stored, as libvmaf does: their
     * colorimetry labels are often guesses, and re-matrixing on a wrong
     * label would itself be measured.  An RGB side has to be converted; it
     * goes into the other side's YUV space, as its encoder would have. */
    if (GST_VIDEO_INFO_IS_RGB(&ri) && GST_VIDEO_INFO_IS_YUV(&di))
        colorimetry = gst_video_colorimetry_to_string(&di.colorimetry);
    else if (GST_VIDEO_INFO_IS_RGB(&di) && GST_VIDEO_INFO_IS_YUV(&ri))
        colorimetry = gst_video_colorimetry_to_string(&ri.colorimetry);
    else if (GST_VIDEO_INFO_IS_YUV(&ri) && GST_VIDEO_INFO_IS_YUV(&di) &&
             ri.colorimetry.range != di.colorimetry.range &&
             ri.colorimetry.range != GST_VIDEO_COLOR_RANGE_UNKNOWN &&
             di.colorimetry.range != GST_VIDEO_COLOR_RANGE_UNKNOWN)
        app->range_note = TRUE;
    c = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING,
                            gst_video_format_to_string(app->target), NULL);
    if (colorimetry)
        gst_caps_set_simple(c, "colorimetry", G_TYPE_STRING, colorimetry, NULL);
    g_object_set(app->side[REF].filter, "caps", c, NULL);
    c = gst_caps_make_writable(c);
    gst_caps_set_simple(c, "width", G_TYPE_INT, ri.width, "height", G_TYPE_INT, ri.height,
                        NULL);
    g_object_set(app->side[DIST].filter, "caps", c, NULL);
    gst_caps_unref(c);
    g_free(colorimetry);
    /* index pairing gives both streams the reference's frame duration */
    app->frame_dur = ri.fps_n > 0 ? gst_util_uint64_scale_int(GST_SECOND, ri.fps_d, ri.fps_n)
                                  : GST_SECOND / 25;
    app->side[REF].dur = ri.fps_n > 0 ? app->frame_dur : GST_CLOCK_TIME_NONE;
    app->side[DIST].dur = di.fps_n > 0 ?
        gst_util_uint64_scale_int(GST_SECOND, di.fps_d, di.fps_n) : GST_CLOCK_TIME_NONE;
    if (!app->o.pair_by_time && ri.fps_n > 0 && di.fps_n > 0 &&
        (gint64)ri.fps_n * di.fps_d != (gint64)di.fps_n * ri.fps_d)
        qmc_post_warning(app, "frame rates differ: reference %.4g fps, distorted %.4g fps; "
                     "--pair-by index pairs frame N with frame N whatever their times "
                     "(--pair-by time pairs the nearest frames in time)",
                     (double)ri.fps_n / ri.fps_d, (double)di.fps_n / di.fps_d);
    if (app->side[REF].raw)
        app->total_frames = app->side[REF].raw_frames - app->o.skip[REF];
    else if (app->side[REF].mapped && app->side[REF].map.frames > app->o.skip[REF])
        app->total_frames = app->side[REF].map.frames - app->o.skip[REF];
    if (app->o.max_frames && (!app->total_frames || app->o.max_frames < app->total_frames))
        app->total_frames = app->o.max_frames;
    app->configured = TRUE;
    return TRUE;
}

/* Holds each decoded stream at its first caps until the other one's are
 * known too: the distorted stream's conversion depends on the reference's
 * format and size. */
static GstPadProbeReturn hold_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Side *s = data;
    App *app = s->app;
    GstEvent *ev;
    GstPadProbeReturn ret = GST_PAD_PROBE_OK;

    if (!(GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM))
        return GST_PAD_PROBE_OK; /* data before caps: keep it waiting */
    ev = GST_PAD_PROBE_INFO_EVENT(info);
    if (GST_EVENT_TYPE(ev) != GST_EVENT_CAPS)
        return GST_PAD_PROBE_PASS; /* stream-start and the like go through */

    g_mutex_lock(&app->lock);
    if (!s->caps) {
        GstCaps *caps;
        gst_event_parse_caps(ev, &caps);
        s->caps = gst_caps_ref(caps);
    }
    if (!app->configured && app->side[REF].caps && app->side[DIST].caps) {
        Side *other = &app->side[!s->id];
        if (configure(app) && other->block_id) {
            /* the other stream waits in this same probe: release it */
            gst_pad_remove_probe(other->hold_pad, other->block_id);
            other->block_id = 0;
        }
    }
    if (app->configured) {
        s->block_id = 0;
        ret = GST_PAD_PROBE_REMOVE;
    }
    g_mutex_unlock(&app->lock);
    return ret;
}

/* Index pairing ignores the timestamps, so a frame that an encoder or a
 * capture dropped shifts every later pair by one.  A jump of more than 1.5
 * frame durations between two frames is the sign; say so once per input. */
static void check_gap(App *app, Side *s, GstClockTime pts)
{
    GstClockTime last = s->last_pts;
    if (!GST_CLOCK_TIME_IS_VALID(pts))
        return;
    s->last_pts = pts;
    if (s->gap_warned || !GST_CLOCK_TIME_IS_VALID(last) || !GST_CLOCK_TIME_IS_VALID(s->dur) ||
        pts <= last || (pts - last) * 2 <= s->dur * 3)
        return;
    s->gap_warned = TRUE;
    qmc_post_warning(app, "%s: its timestamps jump by %.1f ms (%.2f frame durations) after frame "
                 "%" G_GUINT64_FORMAT " (a dropped frame?); --pair-by index pairs frame N with "
                 "frame N regardless, so the later pairs may be shifted (--pair-by time pairs "
                 "by timestamp)", s->display, (double)(pts - last) / GST_MSECOND,
                 (double)(pts - last) / s->dur, s->frames - 2);
}

/* Between the capsfilter and the queue: leaves out --frame_skip_* frames,
 * counts frames, gives them index timestamps, stops at --frames and notes
 * the end of each stream. */
static GstPadProbeReturn flow_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Side *s = data;
    App *app = s->app;
    Side *other = &app->side[!s->id];

    if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info);
        if (s->skipped < app->o.skip[s->id]) {
            s->skipped++; /* --frame_skip_*: before counting, as libvmaf */
            return GST_PAD_PROBE_DROP;
        }
        if (app->o.max_frames && s->passed >= app->o.max_frames) {
            /* enough: end this stream here and stop its decoder */
            if (!s->eos)
                gst_pad_push_event(pad, gst_event_new_eos());
            gst_buffer_unref(buf);
            GST_PAD_PROBE_INFO_FLOW_RETURN(info) = GST_FLOW_EOS;
            return GST_PAD_PROBE_HANDLED;
        }
        s->frames++;
        if (!app->o.pair_by_time)
            check_gap(app, s, GST_BUFFER_PTS(buf));
        if (!app->o.pair_by_time && !app->o.shortest && !app->o.max_frames &&
            g_atomic_int_get(&other->eos) &&
            s->passed >= other->passed) {
            /* past the end of the other stream: keep decoding this one to
             * count its frames for the error message, compare nothing more */
            return GST_PAD_PROBE_DROP;
        }
        if (!app->o.pair_by_time) {
            /* frame N pairs with frame N, as in libvmaf, whatever the
             * containers' timestamps (edit lists, B-frame delay, other
             * frame rates) say */
            buf = gst_buffer_make_writable(buf);
            GST_BUFFER_PTS(buf) = s->passed * app->frame_dur;
            GST_BUFFER_DTS(buf) = GST_CLOCK_TIME_NONE;
            GST_BUFFER_DURATION(buf) = app->frame_dur;
            GST_PAD_PROBE_INFO_DATA(info) = buf;
        }
        s->passed++;
        return GST_PAD_PROBE_OK;
    }
    if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *ev = GST_PAD_PROBE_INFO_EVENT(info);
        switch (GST_EVENT_TYPE(ev)) {
        case GST_EVENT_CAPS:
            if (!app->o.pair_by_time)
                qmc_index_timeline_caps(info, app->side[REF].caps);
            break;
        case GST_EVENT_SEGMENT:
            if (!app->o.pair_by_time) {
                /* our timestamps start at 0 on a plain timeline */
                GstSegment seg;
                GstEvent *n;
                gst_segment_init(&seg, GST_FORMAT_TIME);
                n = gst_event_new_segment(&seg);
                gst_event_set_seqnum(n, gst_event_get_seqnum(ev));
                gst_event_unref(ev);
                GST_PAD_PROBE_INFO_DATA(info) = n;
            }
            break;
        case GST_EVENT_GAP:
            if (!app->o.pair_by_time)
                return GST_PAD_PROBE_DROP; /* its time is on the old timeline */
            break;
        case GST_EVENT_EOS:
            if (g_atomic_int_get(&s->eos))
                return GST_PAD_PROBE_DROP; /* the decoder's own, after --frames */
            g_atomic_int_set(&s->eos, TRUE);
            gst_element_post_message(app->pipeline,
                gst_message_new_application(GST_OBJECT(app->pipeline),
                    gst_structure_new("qmc-eos", "side", G_TYPE_INT, s->id, NULL)));
            break;
        default:
            break;
        }
    }
    return GST_PAD_PROBE_OK;
}

/* After --frames, flow_probe has put the filter's source pad at EOS.  An
 * event the decoder still sends (a tag, say) fails there, the filter
 * answers FALSE, and upstream turns that into a flow error: "Internal data
 * stream error" from decodebin's multiqueue, now and then with Matroska
 * H.264 and --frames.  Such events are dropped before the filter. */
static GstPadProbeReturn after_eos_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    GstPad *src = data;
    const GstEventType t = GST_EVENT_TYPE(GST_PAD_PROBE_INFO_EVENT(info));
    (void)pad;
    if (GST_PAD_IS_EOS(src) && t != GST_EVENT_FLUSH_START && t != GST_EVENT_FLUSH_STOP)
        return GST_PAD_PROBE_DROP;
    return GST_PAD_PROBE_OK;
}

void qmc_drop_events_after_eos(GstElement *filter)
{
    GstPad *sink = gst_element_get_static_pad(filter, "sink");
    gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, after_eos_probe,
                      gst_element_get_static_pad(filter, "src"), gst_object_unref);
    gst_object_unref(sink);
}

gboolean qmc_pad_is_video(GstPad *pad)
{
    GstCaps *caps = gst_pad_get_current_caps(pad);
    gboolean video;

    if (!caps)
        caps = gst_pad_query_caps(pad, NULL);
    video = g_str_has_prefix(gst_structure_get_name(gst_caps_get_structure(caps, 0)), "video/");
    gst_caps_unref(caps);
    return video;
}

static void on_pad_added(GstElement *dec, GstPad *pad, gpointer data)
{
    Side *s = data;
    GstPad *sink;

    if (!qmc_pad_is_video(pad) || s->linked)
        return; /* audio, subtitles, a second video stream: not compared */
    sink = gst_element_get_static_pad(s->convert, "sink");
    if (gst_pad_link(pad, sink) == GST_PAD_LINK_OK)
        s->linked = TRUE;
    else
        qmc_post_error(s->app, "%s: cannot link its decoded video", s->display);
    gst_object_unref(sink);
}

/* A stream no decoder takes: remember it when it is video, so that the
 * error says "no decoder" for a video codec and "no video" otherwise. */
static void on_unknown_type(GstElement *dec, GstPad *pad, GstCaps *caps, gpointer data)
{
    Side *s = data;
    const char *media = gst_structure_get_name(gst_caps_get_structure(caps, 0));
    if (!s->missing_video && (g_str_has_prefix(media, "video/") ||
                              g_str_has_prefix(media, "image/")))
        s->missing_video = gst_pb_utils_get_decoder_description(caps);
}

static void on_no_more_pads(GstElement *dec, gpointer data)
{
    Side *s = data;
    if (!s->linked)
        qmc_post_error(s->app, "%s: no video stream found (the %s)", s->display,
                       qmc_side_name[s->id]);
}

GstElement *qmc_make(const char *factory, const char *name)
{
    GstElement *e = gst_element_factory_make(factory, name);
    if (!e) {
        fprintf(stderr, "qmetric-compare: GStreamer element '%s' is missing (install "
                "gstreamer1.0-plugins-base/-good)\n", factory);
        exit(EXIT_USAGE);
    }
    return e;
}

/* An enum property from its nick, or a usage error listing the choices. */
void qmc_set_enum(GstElement *e, const char *prop, const char *nick, const char *opt)
{
    GParamSpec *ps = g_object_class_find_property(G_OBJECT_GET_CLASS(e), prop);
    GEnumClass *ec = g_type_class_ref(ps->value_type);
    GEnumValue *v = g_enum_get_value_by_nick(ec, nick);
    if (!v) {
        GString *l = g_string_new(NULL);
        for (guint i = 0; i < ec->n_values; i++)
            g_string_append_printf(l, "%s%s", i ? ", " : "", ec->values[i].value_nick);
        qmc_usage_error("%s: '%s' is not one of %s", opt, nick, l->str);
    }
    g_object_set(e, prop, v->value, NULL);
    g_type_class_unref(ec);
}

GstElement *qmc_mapped_input(GstBin *bin, const char *uri, const QmcMapSpec *spec,
                             const char *prefix)
{
    char *path = g_filename_from_uri(uri, NULL, NULL);
    char name[64];
    GstElement *src;

    g_snprintf(name, sizeof(name), "%s-source", prefix);
    src = path ? qmc_map_source(path, name, spec) : NULL;
    g_free(path);
    if (src)
        gst_bin_add(bin, src);
    return src;
}

/* filesrc -> rawvideoparse for a raw file (--size, --format, --fps), added to
 * bin; returns the parser, the source in *src. */
GstElement *qmc_raw_source(App *app, GstBin *bin, const char *uri, const char *prefix,
                           GstElement **src)
{
    GstElement *parse;
    GstVideoFormat fmt = gst_video_format_from_string(app->o.raw_format);
    int strides[4], offsets[4], np;
    gsize fsize = qmc_raw_layout(fmt, app->o.width, app->o.height, strides, offsets, &np);
    char *path = g_filename_from_uri(uri, NULL, NULL);
    char name[64];

    g_snprintf(name, sizeof(name), "%s-source", prefix);
    *src = qmc_make("filesrc", name);
    g_object_set(*src, "location", path, NULL);
    g_free(path);
    g_snprintf(name, sizeof(name), "%s-parse", prefix);
    parse = qmc_make("rawvideoparse", name);
    g_object_set(parse, "width", app->o.width, "height", app->o.height,
                 "format", fmt, "framerate", app->o.fps_n, app->o.fps_d,
                 "frame-size", (guint)fsize, NULL);
    qmc_set_int_array(parse, "plane-strides", strides, np);
    qmc_set_int_array(parse, "plane-offsets", offsets, np);
    gst_bin_add_many(bin, *src, parse, NULL);
    gst_element_link(*src, parse);
    return parse;
}

static void build_side(App *app, Side *s)
{
    GstElement *last;
    GstPad *pad, *qpad;
    char name[32];

    g_snprintf(name, sizeof(name), "%s-convert", qmc_side_name[s->id]);
    s->convert = qmc_make("videoconvert", name);
    /* dithering would add a pattern of its own that the metrics measure */
    gst_util_set_object_arg(G_OBJECT(s->convert), "dither", "none");
    g_snprintf(name, sizeof(name), "%s-filter", qmc_side_name[s->id]);
    s->filter = qmc_make("capsfilter", name);
    g_snprintf(name, sizeof(name), "%s-queue", qmc_side_name[s->id]);
    s->queue = qmc_make("queue", name);
    gst_bin_add_many(GST_BIN(app->pipeline), s->convert, s->filter, s->queue, NULL);
    last = s->convert;
    if (s->id == DIST && app->o.scale) {
        s->scale = qmc_make_scaler("distorted-scale", app->o.scale_method);
        gst_bin_add(GST_BIN(app->pipeline), s->scale);
        gst_element_link(last, s->scale);
        last = s->scale;
    }
    gst_element_link_many(last, s->filter, s->queue, NULL);
    qpad = gst_element_get_static_pad(app->qm, s->id == REF ? "ref_sink" : "dist_sink");
    pad = gst_element_get_static_pad(s->queue, "src");
    gst_pad_link(pad, qpad);
    gst_object_unref(pad);
    gst_object_unref(qpad);

    s->hold_pad = gst_element_get_static_pad(s->convert, "sink");
    s->block_id = gst_pad_add_probe(s->hold_pad, GST_PAD_PROBE_TYPE_BLOCK |
                                    GST_PAD_PROBE_TYPE_DATA_DOWNSTREAM,
                                    hold_probe, s, NULL);
    pad = gst_element_get_static_pad(s->filter, "src");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                      flow_probe, s, NULL);
    gst_object_unref(pad);
    qmc_drop_events_after_eos(s->filter);

    if (s->mapped && (s->src = qmc_mapped_input(GST_BIN(app->pipeline), s->uri, &s->map,
                                                 qmc_side_name[s->id]))) {
        gst_element_link(s->src, s->convert);
        s->linked = TRUE;
    } else if (s->raw) {
        GstElement *parse = qmc_raw_source(app, GST_BIN(app->pipeline), s->uri,
                                           qmc_side_name[s->id], &s->src);
        gst_element_link(parse, s->convert);
        s->linked = TRUE;
    } else {
        /* (ANY): with plain video/x-raw, decodebin 1.22 rejects its decoders when
         * expose-all-streams is off */
        GstCaps *raw = gst_caps_from_string("video/x-raw(ANY)");
        g_snprintf(name, sizeof(name), "%s-decode", qmc_side_name[s->id]);
        s->src = qmc_make("uridecodebin", name);
        /* only the video: other streams are neither decoded nor exposed */
        g_object_set(s->src, "uri", s->uri, "caps", raw, "expose-all-streams", FALSE, NULL);
        gst_caps_unref(raw);
        g_signal_connect(s->src, "pad-added", G_CALLBACK(on_pad_added), s);
        g_signal_connect(s->src, "no-more-pads", G_CALLBACK(on_no_more_pads), s);
        g_signal_connect(s->src, "unknown-type", G_CALLBACK(on_unknown_type), s);
        gst_bin_add(GST_BIN(app->pipeline), s->src);
    }
}

/* Find the element: GST_PLUGIN_PATH or an installed copy first, then the
 * install directory of this build, then the build tree (so that
 * build/tools/qmetric-compare works without any setup). */
gboolean qmc_find_qmetric(void)
{
    static const char *const dirs[] = {
#ifdef QM_PLUGIN_INSTALL_DIR
        QM_PLUGIN_INSTALL_DIR,
#endif
#ifdef QM_BUILD_PLUGIN_DIR
        QM_BUILD_PLUGIN_DIR,
#endif
    };
    GstPluginFeature *f = gst_registry_lookup_feature(gst_registry_get(), "qmetric");
    for (size_t i = 0; !f && i < G_N_ELEMENTS(dirs); i++) {
        if (g_file_test(dirs[i], G_FILE_TEST_IS_DIR)) {
            gst_registry_scan_path(gst_registry_get(), dirs[i]);
            f = gst_registry_lookup_feature(gst_registry_get(), "qmetric");
        }
    }
    if (f)
        gst_object_unref(f);
    return f != NULL;
}

/* The metrics of this build (the engine's catalogue, qm_metric_names()). */
static char **known_metrics(void)
{
    return g_strdupv((char **)qm_metric_names());
}

static gboolean element_has_metric(char **metrics, const char *metric)
{
    return g_strv_contains((const char *const *)metrics, metric);
}

/* --pool, plus every statistic a --fail-below gate reads (vmaf.p5 needs p5
 * pooled even when --pool did not ask for it). */
static void set_pool(App *app, GstElement *qm)
{
    const Options *o = &app->o;
    GParamSpec *ps = g_object_class_find_property(G_OBJECT_GET_CLASS(qm), "pool");
    GFlagsClass *fc = g_type_class_ref(ps->value_type);
    GValue v = G_VALUE_INIT;
    guint flags;

    g_value_init(&v, ps->value_type);
    if (o->pool) {
        if (!gst_value_deserialize(&v, o->pool))
            qmc_usage_error("--pool: '%s' is not a list of min, max, mean, harmonic_mean, "
                            "p1, p5", o->pool);
    } else {
        g_object_get_property(G_OBJECT(qm), "pool", &v);
    }
    flags = g_value_get_flags(&v);
    for (guint i = 0; i < o->thresholds->len; i++) {
        Threshold *t = &g_array_index(o->thresholds, Threshold, i);
        GFlagsValue *f = g_flags_get_value_by_nick(fc, t->stat);
        if (!f)
            qmc_usage_error("--fail-below: this qmetric element does not pool '%s'", t->stat);
        flags |= f->value;
    }
    g_value_set_flags(&v, flags);
    g_object_set_property(G_OBJECT(qm), "pool", &v);
    g_value_unset(&v);
    g_type_class_unref(fc);
}

/* The metric list: the defaults, --feature, and a check of every name. */
static void resolve_metrics(App *app, GstElement *qm)
{
    const Options *o = &app->o;
    char **known = known_metrics();
    gboolean vmaf = element_has_metric(known, "vmaf") && element_has_metric(known, "vif") &&
                    element_has_metric(known, "adm") && element_has_metric(known, "motion");
    if (!o->metrics->len && !o->features->len && !o->feature_opts->len) {
        /* libvmaf's default (VMAF) plus the two scores everyone asks for;
         * without VMAF in this build, the two alone */
        qmc_append_list(app->o.metrics, vmaf ? "vmaf,psnr,float_ssim" : "psnr,float_ssim");
    } else if (!o->metrics->len && vmaf) {
        /* libvmaf: --feature adds to the model's features */
        qmc_append_list(app->o.metrics, "vmaf");
    }
    if (o->features->len)
        qmc_append_list(app->o.metrics, o->features->str);
    if (known[0]) {
        /* a misspelt metric is a usage error, named before anything runs */
        char **m = g_strsplit(o->metrics->str, ",", -1);
        for (char **it = m; *it; it++) {
            char *name = g_strstrip(*it);
            if (*name && strcmp(name, "all") && strcmp(name, "default") &&
                !element_has_metric(known, name)) {
                char *l = g_strjoinv(", ", known);
                qmc_usage_error("--metrics: unknown metric '%s' (this build has: %s, or all)",
                                name, l);
            }
        }
        g_strfreev(m);
    }
    g_strfreev(known);
}

/* Everything but the log: the same for every element of a ladder.  The
 * metric list is completed (defaults, --feature) on the first call only. */
void qmc_configure_qmetric(App *app, GstElement *qm)
{
    static gboolean resolved;
    const Options *o = &app->o;

    if (!resolved) {
        resolved = TRUE;
        resolve_metrics(app, qm);
    }
    g_object_set(qm, "metrics", o->metrics->str, "post-messages", TRUE, NULL);
    if (o->feature_opts->len) {
        if (!g_object_class_find_property(G_OBJECT_GET_CLASS(qm), "features"))
            qmc_usage_error("--feature %s: this qmetric element takes no feature options "
                            "(it has no \"features\" property)", o->feature_opts->str);
        g_object_set(qm, "features", o->feature_opts->str, NULL);
    }
    if (o->models->len)
        g_object_set(qm, "model", o->models->str, NULL);
    if (o->enable_transform)
        g_object_set(qm, "enable-transform", TRUE, NULL);
    if (o->disable_clip)
        g_object_set(qm, "disable-clip", TRUE, NULL);
    if (o->subsample)
        g_object_set(qm, "subsample", (guint)o->subsample, NULL);
    if (o->threads)
        g_object_set(qm, "threads", (guint)o->threads, NULL);
    if (o->backend)
        qmc_set_enum(qm, "backend", o->backend, "--backend");
    if (o->cuda_device_id >= 0)
        g_object_set(qm, "cuda-device-id", o->cuda_device_id, NULL);
    set_pool(app, qm);
}

void qmc_build_pipeline(App *app)
{
    const Options *o = &app->o;
    GstElement *sink;
    GstPad *src, *sinkpad;

    app->pipeline = gst_pipeline_new("qmetric-compare");
    app->qm = gst_element_factory_make("qmetric", "qmetric");
    qmc_configure_qmetric(app, app->qm);
    if (app->gpus && app->gpus->len) {
        /* one element: the first device of --gpus */
        g_object_set(app->qm, "cuda-device-id", qmc_gpu_for(app, 0), NULL);
        if (app->gpus->len > 1 && !o->quiet)
            fprintf(stderr, "qmetric-compare: a two-input comparison runs on one GPU: CUDA "
                    "device %d (--gpus spreads the renditions of a ladder)\n",
                    qmc_gpu_for(app, 0));
    }
    if (o->output) {
        qmc_set_enum(app->qm, "log-format", o->log_format, "--format");
        /* the element writes a temporary file; it becomes o->output at the end */
        g_object_set(app->qm, "log-location", app->log.tmp, NULL);
    }
    sink = qmc_make("fakesink", "sink");
    g_object_set(sink, "sync", FALSE, "async", FALSE, NULL);
    gst_bin_add_many(GST_BIN(app->pipeline), app->qm, sink, NULL);
    src = gst_element_get_static_pad(app->qm, "src");
    sinkpad = gst_element_get_static_pad(sink, "sink");
    gst_pad_link(src, sinkpad);
    gst_object_unref(src);
    gst_object_unref(sinkpad);
    build_side(app, &app->side[REF]);
    build_side(app, &app->side[DIST]);
}

