/* qmetric-compare: --detect-offset and --align.  The first frames of each
 * input (after any --frame_skip_*) are decoded by a small pipeline of their
 * own (decoder or raw parser -> videoconvert to GRAY8 -> appsink), brought to
 * one small grid (align.c), and searched for the offset that makes them
 * alike.  The report goes to stdout as text or JSON; --align adds the offset
 * to the frames left out before the comparison runs. */
#include "compare.h"

#include <gst/app/gstappsink.h>

typedef struct {
    const QmcAlignInput *in;
    GstElement *pipeline, *convert, *sink;
    gboolean linked;
    gint no_video;             /* atomic: decodebin found no video stream */
    GPtrArray *frames;         /* uint8_t*: grid-sized luma pictures */
} Window;

static void on_pad_added(GstElement *dec, GstPad *pad, gpointer data)
{
    Window *w = data;
    GstPad *sink;

    if (!qmc_pad_is_video(pad) || w->linked)
        return;
    sink = gst_element_get_static_pad(w->convert, "sink");
    w->linked = gst_pad_link(pad, sink) == GST_PAD_LINK_OK;
    gst_object_unref(sink);
}

static void on_no_more_pads(GstElement *dec, gpointer data)
{
    Window *w = data;
    if (!w->linked)
        g_atomic_int_set(&w->no_video, TRUE);
}

static void open_window(App *app, Window *w, const QmcAlignInput *in, const char *prefix)
{
    GstElement *filter, *first;
    GstCaps *gray = gst_caps_from_string("video/x-raw,format=GRAY8");
    char name[64];

    w->in = in;
    w->frames = g_ptr_array_new_with_free_func(g_free);
    w->pipeline = gst_pipeline_new(prefix);
    g_snprintf(name, sizeof(name), "%s-align-convert", prefix);
    w->convert = qmc_make("videoconvert", name);
    /* the same pictures on every run: no dither pattern in the scores */
    gst_util_set_object_arg(G_OBJECT(w->convert), "dither", "none");
    g_snprintf(name, sizeof(name), "%s-align-filter", prefix);
    filter = qmc_make("capsfilter", name);
    g_object_set(filter, "caps", gray, NULL);
    gst_caps_unref(gray);
    g_snprintf(name, sizeof(name), "%s-align-sink", prefix);
    w->sink = qmc_make("appsink", name);
    /* two pictures queued at most: the other input waits while one is read */
    g_object_set(w->sink, "sync", FALSE, "max-buffers", 2, "drop", FALSE, NULL);
    gst_bin_add_many(GST_BIN(w->pipeline), w->convert, filter, w->sink, NULL);
    gst_element_link_many(w->convert, filter, w->sink, NULL);
    if (in->map && (first = qmc_mapped_input(GST_BIN(w->pipeline), in->uri, in->map, prefix))) {
        gst_element_link(first, w->convert);
        w->linked = TRUE;
    } else if (in->raw) {
        GstElement *src;
        first = qmc_raw_source(app, GST_BIN(w->pipeline), in->uri, prefix, &src);
        gst_element_link(first, w->convert);
        w->linked = TRUE;
    } else {
        GstCaps *raw = gst_caps_from_string("video/x-raw(ANY)");
        g_snprintf(name, sizeof(name), "%s-align-decode", prefix);
        first = qmc_make("uridecodebin", name);
        g_object_set(first, "uri", in->uri, "caps", raw, "expose-all-streams", FALSE, NULL);
        gst_caps_unref(raw);
        g_signal_connect(first, "pad-added", G_CALLBACK(on_pad_added), w);
        g_signal_connect(first, "no-more-pads", G_CALLBACK(on_no_more_pads), w);
        gst_bin_add(GST_BIN(w->pipeline), first);
    }
    if (gst_element_set_state(w->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
        qmc_input_error("%s: cannot be opened to look for the offset", in->display);
}

/* The next decoded picture, or NULL at the end of the input.  A decoding
 * error ends the program with one line, as it would in the comparison. */
static GstSample *next_sample(Window *w)
{
    GstBus *bus = gst_element_get_bus(w->pipeline);
    GstSample *s = NULL;

    while (!(s = gst_app_sink_try_pull_sample(GST_APP_SINK(w->sink), 100 * GST_MSECOND))) {
        GstMessage *m;
        if (gst_app_sink_is_eos(GST_APP_SINK(w->sink)))
            break;
        if (g_atomic_int_get(&w->no_video))
            qmc_input_error("%s: no video stream found", w->in->display);
        m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
        if (m) {
            GError *err = NULL;
            gst_message_parse_error(m, &err, NULL);
            if (g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_TYPE_NOT_FOUND) ||
                g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_WRONG_TYPE))
                qmc_input_error("%s: not a video format GStreamer recognises", w->in->display);
            qmc_input_error("%s: %s", w->in->display, err->message);
        }
    }
    gst_object_unref(bus);
    return s;
}

static void sample_size(Window *w, GstSample *s, int *width, int *height)
{
    GstVideoInfo vi;
    if (!gst_video_info_from_caps(&vi, gst_sample_get_caps(s)))
        qmc_input_error("%s: cannot read the decoded video format", w->in->display);
    *width = vi.width;
    *height = vi.height;
}

/* The picture on the grid, kept; the sample released. */
static void keep(Window *w, GstSample *s, int gw, int gh)
{
    GstVideoInfo vi;
    GstVideoFrame f;
    guint8 *pic = g_malloc((gsize)gw * gh);

    if (!gst_video_info_from_caps(&vi, gst_sample_get_caps(s)) ||
        !gst_video_frame_map(&f, &vi, gst_sample_get_buffer(s), GST_MAP_READ))
        qmc_input_error("%s: cannot read a decoded frame", w->in->display);
    qmc_align_downscale(GST_VIDEO_FRAME_PLANE_DATA(&f, 0), GST_VIDEO_FRAME_PLANE_STRIDE(&f, 0),
                        GST_VIDEO_FRAME_WIDTH(&f), GST_VIDEO_FRAME_HEIGHT(&f), pic, gw, gh);
    gst_video_frame_unmap(&f);
    gst_sample_unref(s);
    g_ptr_array_add(w->frames, pic);
}

static void close_window(Window *w)
{
    gst_element_set_state(w->pipeline, GST_STATE_NULL);
    gst_object_unref(w->pipeline);
    g_ptr_array_free(w->frames, TRUE);
}

void qmc_align_inputs(App *app, const QmcAlignInput *ref, const QmcAlignInput *dist,
                      QmcAlignResult *res)
{
    Window w[2] = { { 0 } };
    const QmcAlignInput *in[2] = { ref, dist };
    GstSample *first[2];
    guint want = (guint)(app->o.align_window + app->o.align_max);
    int size[2][2], gw, gh;
    QmcLumaSeq seq[2];
    char err[256];

    for (int i = 0; i < 2; i++)
        open_window(app, &w[i], in[i], qmc_side_name[i]);
    for (int i = 0; i < 2; i++) {
        /* --frame_skip_*: the search starts where the comparison would */
        for (guint64 k = 0; k <= in[i]->skip; k++) {
            first[i] = next_sample(&w[i]);
            if (!first[i])
                qmc_input_error("%s: no frames to look for an offset in%s", in[i]->display,
                                in[i]->skip ? " after the skipped ones" : "");
            if (k < in[i]->skip)
                gst_sample_unref(first[i]);
        }
        sample_size(&w[i], first[i], &size[i][0], &size[i][1]);
    }
    qmc_align_grid(size[REF][0], size[REF][1], size[DIST][0], size[DIST][1], &gw, &gh);
    for (int i = 0; i < 2; i++) {
        GstSample *s = first[i];
        do {
            keep(&w[i], s, gw, gh);
        } while (w[i].frames->len < want && (s = next_sample(&w[i])));
        /* the rest is not needed: stop decoding it now */
        gst_element_set_state(w[i].pipeline, GST_STATE_NULL);
        seq[i].width = gw;
        seq[i].height = gh;
        seq[i].n = (int)w[i].frames->len;
        seq[i].frame = (const uint8_t *const *)w[i].frames->pdata;
    }
    if (qmc_align_detect(&seq[REF], &seq[DIST], app->o.align_max, app->o.align_window, res, err,
                         sizeof(err)) != 0)
        qmc_input_error("%s and %s: %s", ref->display, dist->display, err);
    for (int i = 0; i < 2; i++)
        close_window(&w[i]);
}

/* ------------------------------------------------------------------ report */

/* What to give the comparison: the totals, user skips included. */
static void skips_for(const QmcAlignInput *ref, const QmcAlignInput *dist,
                      const QmcAlignResult *r, guint64 *sr, guint64 *sd)
{
    *sr = ref->skip + (r->offset > 0 ? (guint64)r->offset : 0);
    *sd = dist->skip + (r->offset < 0 ? (guint64)-r->offset : 0);
}

static gboolean confident(const QmcAlignResult *r)
{
    return !r->is_static && r->confidence >= QMC_ALIGN_MIN_CONFIDENCE;
}

void qmc_align_print(FILE *f, const char *name, const QmcAlignInput *ref,
                     const QmcAlignInput *dist, const QmcAlignResult *r)
{
    guint64 sr, sd;
    skips_for(ref, dist, r, &sr, &sd);
    if (name)
        fprintf(f, "rendition   %s (%s)\n", name, dist->display);
    if (r->offset > 0)
        fprintf(f, "offset      %+d: the distorted video starts at reference frame %d "
                "(its frame i shows reference frame i%+d)\n", r->offset, r->offset, r->offset);
    else if (r->offset < 0)
        fprintf(f, "offset      %+d: the distorted video has %d extra frames in front "
                "(its frame i%+d shows reference frame i)\n", r->offset, -r->offset,
                -r->offset);
    else
        fprintf(f, "offset      0: the inputs are aligned\n");
    if (r->is_static)
        fprintf(f, "confidence  %.3f (low: the content barely changes from frame to frame: "
                "the best offset scores less than %.0f dB above the median)\n", r->confidence,
                QMC_ALIGN_STATIC_DB);
    else if (confident(r))
        fprintf(f, "confidence  %.3f (the best offset is clearly ahead)\n", r->confidence);
    else
        fprintf(f, "confidence  %.3f (low: offset %+d scores almost as well: repeating "
                "content, or content that barely moves)\n", r->confidence, r->second_offset);
    fprintf(f, "scores      offset %+d %.2f dB, next best %+d %.2f dB, median %.2f dB "
            "(window PSNR of luma)\n", r->offset, r->psnr_best, r->second_offset,
            r->psnr_second, r->psnr_median);
    fprintf(f, "searched    offsets -%d..+%d%s, %d frame pairs each",
            r->max_offset, r->max_offset, r->narrowed ? " (narrowed: the inputs are short)" : "",
            r->window);
    if (ref->skip || dist->skip)
        fprintf(f, ", after the frames --frame_skip_* leaves out");
    fputc('\n', f);
    if (r->offset || ref->skip || dist->skip)
        fprintf(f, "apply       --frame_skip_ref %" G_GUINT64_FORMAT " --frame_skip_dist %"
                G_GUINT64_FORMAT " (or --align auto)\n", sr, sd);
}

void qmc_align_print_json(FILE *f, const char *ind, const QmcAlignInput *ref,
                          const QmcAlignInput *dist, const QmcAlignResult *r)
{
    guint64 sr, sd;
    skips_for(ref, dist, r, &sr, &sd);
    fprintf(f, "{\n%s  \"reference\": ", ind);
    qmc_json_string(f, ref->display);
    fprintf(f, ",\n%s  \"distorted\": ", ind);
    qmc_json_string(f, dist->display);
    fprintf(f, ",\n%s  \"offset\": %d,\n%s  \"confidence\": %.6f,\n%s  \"confident\": %s,\n"
            "%s  \"static\": %s,\n", ind, r->offset, ind, r->confidence, ind,
            confident(r) ? "true" : "false", ind, r->is_static ? "true" : "false");
    fprintf(f, "%s  \"frame_skip_ref\": %" G_GUINT64_FORMAT ",\n%s  \"frame_skip_dist\": %"
            G_GUINT64_FORMAT ",\n", ind, sr, ind, sd);
    fprintf(f, "%s  \"psnr_best\": %.6f,\n%s  \"second_offset\": %d,\n%s  \"psnr_second\": "
            "%.6f,\n%s  \"psnr_median\": %.6f,\n", ind, r->psnr_best, ind, r->second_offset,
            ind, r->psnr_second, ind, r->psnr_median);
    fprintf(f, "%s  \"max_offset\": %d,\n%s  \"narrowed\": %s,\n%s  \"window\": %d,\n"
            "%s  \"candidates\": [", ind, r->max_offset, ind, r->narrowed ? "true" : "false",
            ind, r->window, ind);
    for (int d = -r->max_offset; d <= r->max_offset; d++)
        fprintf(f, "%s{\"offset\": %d, \"psnr\": %.6f}", d > -r->max_offset ? ", " : "", d,
                r->psnr[d + r->max_offset]);
    fprintf(f, "]\n%s}", ind);
}

QmcAlignInput qmc_align_input(const Side *s)
{
    QmcAlignInput in = { s->display, s->uri, s->raw, s->app->o.skip[s->id],
                         s->mapped ? &s->map : NULL };
    return in;
}

void qmc_align_main(App *app)
{
    Options *o = &app->o;
    QmcAlignInput in[2];
    for (int i = 0; i < 2; i++)
        if (app->side[i].once)
            qmc_usage_error("--%s reads the first frames of both inputs, then the comparison "
                            "reads them again: %s is a pipe or a device, which can be read "
                            "once (save it to a file first)",
                            o->detect_offset ? "detect-offset" : "align", app->side[i].display);
    for (int i = 0; i < 2; i++)
        in[i] = qmc_align_input(&app->side[i]);
    qmc_align_inputs(app, &in[REF], &in[DIST], &app->align);
    if (o->detect_offset) {
        if (o->summary == SUMMARY_JSON) {
            qmc_align_print_json(stdout, "", &in[REF], &in[DIST], &app->align);
            fputc('\n', stdout);
        } else {
            /* the report is what was asked for: -q does not hide it */
            qmc_align_print(stdout, NULL, &in[REF], &in[DIST], &app->align);
        }
        qmc_exit_after_report(TRUE);
    }
    if (!confident(&app->align) && o->align == ALIGN_AUTO) {
        qmc_input_error("--align auto: no reliable offset: the best, %+d, has confidence %.3f "
                        "(%s; %.3f needed); --detect-offset shows the scores, --align force "
                        "applies %+d anyway, --frame_skip_ref/--frame_skip_dist set one by hand",
                        app->align.offset, app->align.confidence,
                        app->align.is_static ? "the content barely changes from frame to frame" :
                        "another offset scores almost as well: repeating content, or content "
                        "that barely moves",
                        QMC_ALIGN_MIN_CONFIDENCE, app->align.offset);
    }
    app->aligned = TRUE;
    if (app->align.offset > 0)
        o->skip[REF] += (guint64)app->align.offset;
    else
        o->skip[DIST] += (guint64)-app->align.offset;
    if (!o->quiet) {
        int n = abs(app->align.offset);
        fprintf(stderr, "qmetric-compare: %salignment: offset %+d, confidence %.3f: ",
                confident(&app->align) ? "" : "warning: forced ", app->align.offset,
                app->align.confidence);
        if (n)
            fprintf(stderr, "the %s's first %d frame%s left out\n",
                    qmc_side_name[app->align.offset > 0 ? REF : DIST], n, n > 1 ? "s are" : " is");
        else
            fprintf(stderr, "the inputs are aligned\n");
    }
}
