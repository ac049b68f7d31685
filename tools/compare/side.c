/* qmetric-compare: one input's branch of the pipeline, the same for every
 * input of a run (the two of a two-input run; a ladder's reference and
 * each of its renditions):
 *
 *   source -> videoconvert [-> scaler] -> capsfilter
 *
 * The source is the file read in place (raw, Y4M), rawvideoparse over a
 * raw file, or uridecodebin exposing the video only.  The capsfilter gets
 * the comparison format when the run chooses it (pipeline.c); until then
 * the probe that pipeline.c puts on the conversion's sink pad holds the
 * stream.  The flow probe on the capsfilter's source pad pairs frames by
 * index: it leaves out --frame_skip_* frames, counts the rest, stops at
 * --frames and puts frame N at N frame durations of the reference.
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "compare.h"
#include "swscale.h"

void qmc_side_init(Side *s, App *app, int id, const char *prefix, const char *role)
{
    s->app = app;
    s->id = id;
    g_strlcpy(s->prefix, prefix, sizeof(s->prefix));
    s->role = role;
    s->last_pts = GST_CLOCK_TIME_NONE;
    s->dur = GST_CLOCK_TIME_NONE;
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

/* ----------------------------------------------------------------- sources */

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

static void set_int_array(GstElement *e, const char *prop, const int *v, int n)
{
    GValue arr = G_VALUE_INIT, item = G_VALUE_INIT;
    g_value_init(&arr, GST_TYPE_ARRAY);
    g_value_init(&item, G_TYPE_INT);
    for (int i = 0; i < n; i++) {
        g_value_set_int(&item, v[i]);
        gst_value_array_append_value(&arr, &item);
    }
    g_object_set_property(G_OBJECT(e), prop, &arr);
    g_value_unset(&item);
    g_value_unset(&arr);
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
    set_int_array(parse, "plane-strides", strides, np);
    set_int_array(parse, "plane-offsets", offsets, np);
    gst_bin_add_many(bin, *src, parse, NULL);
    gst_element_link(*src, parse);
    return parse;
}

static void on_pad_added(GstElement *dec, GstPad *pad, gpointer data)
{
    Side *s = data;
    GstPad *sink;

    if (!qmc_pad_is_video(pad) || s->linked)
        return; /* audio, subtitles, a second video stream: not compared */
    sink = gst_element_get_static_pad(s->convert, "sink");
    if (gst_pad_link(pad, sink) == GST_PAD_LINK_OK) {
        s->linked = TRUE;
        if (s->app->chunk)
            qmc_chunk_watch(s, pad);
    } else
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
    if (s->linked)
        return;
    /* with two inputs the role says which; a ladder names the file alone */
    if (s->app->o.ladder)
        qmc_post_error(s->app, "%s: no video stream found", s->display);
    else
        qmc_post_error(s->app, "%s: no video stream found (%s)", s->display, s->role);
}

/* The source of the side, linked to its conversion when it has one pad
 * (a file read in place, a raw parser); uridecodebin links its video pad
 * when it appears. */
static void add_source(Side *s)
{
    App *app = s->app;
    GstBin *bin = GST_BIN(app->pipeline);
    GstCaps *raw;
    char name[64];

    if (s->mapped && (s->src = qmc_mapped_input(bin, s->uri, &s->map, s->prefix))) {
        gst_element_link(s->src, s->convert);
        s->linked = TRUE;
        return;
    }
    if (s->raw) {
        GstElement *parse = qmc_raw_source(app, bin, s->uri, s->prefix, &s->src);
        gst_element_link(parse, s->convert);
        s->linked = TRUE;
        if (app->chunk)
            qmc_chunk_from_start(app, s);
        return;
    }
    /* (ANY): with plain video/x-raw, decodebin 1.22 rejects its decoders when
     * expose-all-streams is off */
    raw = gst_caps_from_string("video/x-raw(ANY)");
    g_snprintf(name, sizeof(name), "%s-decode", s->prefix);
    s->src = qmc_make("uridecodebin", name);
    /* only the video: other streams are neither decoded nor exposed */
    g_object_set(s->src, "uri", s->uri, "caps", raw, "expose-all-streams", FALSE, NULL);
    gst_caps_unref(raw);
    g_signal_connect(s->src, "pad-added", G_CALLBACK(on_pad_added), s);
    g_signal_connect(s->src, "no-more-pads", G_CALLBACK(on_no_more_pads), s);
    g_signal_connect(s->src, "unknown-type", G_CALLBACK(on_unknown_type), s);
    gst_bin_add(bin, s->src);
}

/* ------------------------------------------------------------------ probes */

/* The first decoded caps of the input (its size and rate for the reports).
 * The hold probe after this one may be gone before they come: an input
 * released while its caps event was between the two. */
static GstPadProbeReturn caps_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Side *s = data;
    GstEvent *ev = GST_PAD_PROBE_INFO_EVENT(info);
    if (GST_EVENT_TYPE(ev) == GST_EVENT_CAPS) {
        GstCaps *caps;
        gst_event_parse_caps(ev, &caps);
        g_mutex_lock(&s->app->lock);
        if (!s->caps)
            s->caps = gst_caps_ref(caps);
        g_mutex_unlock(&s->app->lock);
    }
    return GST_PAD_PROBE_OK;
}

/* Index pairing puts every frame on the reference's timeline (frame N at N
 * of its frame durations, 1/25 s without a rate).  The caps that reach the
 * element say that timeline's rate instead of the decoder's, so that what
 * the element sees agrees with the timestamps it gets: otherwise it would
 * warn that frames of other rates pair by running time and go unmatched,
 * which index pairing never does. */
static void index_timeline_caps(GstPadProbeInfo *info, const GstCaps *ref)
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

/* Index pairing ignores the timestamps, so a frame that an encoder or a
 * capture dropped shifts every later pair by one.  A jump of more than 1.5
 * frame durations between two frames is the sign; say so once per input.
 * (s->dur is set for the two inputs of a two-input run only.) */
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

/* After the capsfilter: leaves out --frame_skip_* frames, counts frames,
 * gives them index timestamps, stops at --frames and notes the end of each
 * stream. */
static GstPadProbeReturn flow_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Side *s = data;
    App *app = s->app;
    Side *other = s->partner;

    if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info);
        if (s->skipped < app->o.skip[s->id]) {
            s->skipped++; /* --frame_skip_*: before counting, as libvmaf */
            return GST_PAD_PROBE_DROP;
        }
        if (app->o.max_frames && s->passed >= app->o.max_frames) {
            /* enough: end this stream here and stop its decoder */
            if (!g_atomic_int_get(&s->eos))
                gst_pad_push_event(pad, gst_event_new_eos());
            gst_buffer_unref(buf);
            GST_PAD_PROBE_INFO_FLOW_RETURN(info) = GST_FLOW_EOS;
            return GST_PAD_PROBE_HANDLED;
        }
        s->frames++;
        if (!app->o.pair_by_time)
            check_gap(app, s, GST_BUFFER_PTS(buf));
        if (other && !app->o.pair_by_time && !app->o.shortest && !app->o.max_frames &&
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
                index_timeline_caps(info, app->side[REF].caps);
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

/* Frames read in place from a Y4M file start wherever the file puts them
 * ("FRAME\n" headers between the pictures), so their planes are seldom
 * aligned.  videoconvert's ORC code faults on some such planes (Y444 to
 * I420 halving with ORC 0.4.33: a general protection fault, reported as
 * address 0).  A frame that will be converted and has a plane off a 32-byte
 * boundary is copied to an aligned buffer first; frames compared as they
 * are keep being read in place (the engine takes any alignment).  Before
 * the comparison format is known (the first frame), any unaligned frame is
 * copied. */
static gboolean planes_aligned(GstBuffer *buf, const GstVideoInfo *vi)
{
    GstVideoFrame f;
    gboolean ok = TRUE;
    if (!gst_video_frame_map(&f, (GstVideoInfo *)vi, buf, GST_MAP_READ))
        return TRUE; /* not ours to judge: videoconvert says what is wrong */
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(&f); p++)
        ok &= ((guintptr)GST_VIDEO_FRAME_PLANE_DATA(&f, p) % 32 == 0) &&
              GST_VIDEO_FRAME_PLANE_STRIDE(&f, p) % 4 == 0;
    gst_video_frame_unmap(&f);
    return ok;
}

static GstPadProbeReturn align_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Side *s = data;
    App *app = s->app;
    GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info), *copy;
    GstCaps *caps = gst_pad_get_current_caps(pad);
    GstAllocationParams params;
    GstVideoFrame from, to;
    GstVideoInfo vi;
    gboolean ok;

    if (!caps)
        return GST_PAD_PROBE_OK;
    ok = gst_video_info_from_caps(&vi, caps);
    gst_caps_unref(caps);
    if (!ok || (app->configured && GST_VIDEO_INFO_FORMAT(&vi) == app->target) ||
        planes_aligned(buf, &vi))
        return GST_PAD_PROBE_OK;
    gst_allocation_params_init(&params);
    params.align = 63;
    copy = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(&vi), &params);
    if (!copy)
        return GST_PAD_PROBE_OK;
    gst_buffer_copy_into(copy, buf, GST_BUFFER_COPY_METADATA, 0, -1);
    if (gst_video_frame_map(&from, &vi, buf, GST_MAP_READ)) {
        if (gst_video_frame_map(&to, &vi, copy, GST_MAP_WRITE)) {
            gst_video_frame_copy(&to, &from);
            gst_video_frame_unmap(&to);
        }
        gst_video_frame_unmap(&from);
    }
    gst_buffer_unref(buf);
    GST_PAD_PROBE_INFO_DATA(info) = copy;
    return GST_PAD_PROBE_OK;
}

/* ------------------------------------------------------------------ branch */

void qmc_side_build(Side *s, gboolean scale)
{
    App *app = s->app;
    GstBin *bin = GST_BIN(app->pipeline);
    GstElement *last;
    GstPad *pad;
    char name[64];

    g_snprintf(name, sizeof(name), "%s-convert", s->prefix);
    s->convert = qmc_make("videoconvert", name);
    /* dithering would add a pattern of its own that the metrics measure */
    gst_util_set_object_arg(G_OBJECT(s->convert), "dither", "none");
    g_snprintf(name, sizeof(name), "%s-filter", s->prefix);
    s->filter = qmc_make("capsfilter", name);
    gst_bin_add_many(bin, s->convert, s->filter, NULL);
    last = s->convert;
    if (scale) {
        /* frames of the reference's size pass untouched */
        g_snprintf(name, sizeof(name), "%s-scale", s->prefix);
        s->scale = qmc_make_scaler(name, app->o.scale_method);
        gst_bin_add(bin, s->scale);
        gst_element_link(last, s->scale);
        last = s->scale;
    }
    gst_element_link(last, s->filter);

    s->hold_pad = gst_element_get_static_pad(s->convert, "sink");
    gst_pad_add_probe(s->hold_pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, caps_probe, s, NULL);
    if (s->mapped)
        gst_pad_add_probe(s->hold_pad, GST_PAD_PROBE_TYPE_BUFFER, align_probe, s, NULL);
    pad = gst_element_get_static_pad(s->filter, "src");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                      flow_probe, s, NULL);
    gst_object_unref(pad);
    pad = gst_element_get_static_pad(s->filter, "sink");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, after_eos_probe,
                      gst_element_get_static_pad(s->filter, "src"), gst_object_unref);
    gst_object_unref(pad);
    if (app->chunk)
        qmc_chunk_build_side(app, s);

    add_source(s);
    if (app->chunk && s->linked) {
        /* a source of our own: its frames are numbered where they leave it */
        GstPad *feed = gst_pad_get_peer(s->hold_pad);
        qmc_chunk_watch(s, feed);
        gst_object_unref(feed);
    }
}
