/* qmetric-compare: the main loop of a run: the bus (errors, warnings, the
 * ends of the streams, the elements' scores handed to the run's mode), the
 * progress line, Ctrl-C.
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "compare.h"

#include <signal.h>

static void clear_progress(App *app)
{
    if (app->line_drawn) {
        fputs("\r\033[K", stderr);
        app->line_drawn = FALSE;
    }
}

/* A pipeline warning, printed unless it is one the run reports otherwise:
 * unmatched frames (in the summary and by the count check) and undecodable
 * streams (by the error that follows, or they are not the video). */
static void print_warning(App *app, GstMessage *msg)
{
    GError *err = NULL;
    const GstStructure *d = NULL;
    gst_message_parse_warning(msg, &err, NULL);
    gst_message_parse_warning_details(msg, &d);
    if (!(d && gst_structure_has_field(d, "details")) &&
        !g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_CODEC_NOT_FOUND)) {
        clear_progress(app);
        fprintf(stderr, "qmetric-compare: warning: %s: %s\n",
                GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)), err->message);
    }
    g_error_free(err);
}

/* ---------------------------------------------------------------- progress */

static void fmt_duration(char *buf, size_t len, double s)
{
    int t = (int)(s + 0.5);
    if (t >= 3600)
        g_snprintf(buf, len, "%d:%02d:%02d", t / 3600, t / 60 % 60, t % 60);
    else
        g_snprintf(buf, len, "%d:%02d", t / 60, t % 60);
}

static gboolean on_tick(gpointer data)
{
    App *app = data;
    double secs = (g_get_monotonic_time() - app->t0) / 1e6;
    double fps = secs > 0 ? app->pairs_done / secs : 0;
    GString *l;
    char eta[32];

    if (!app->total_frames && app->configured && app->side[REF].caps) {
        /* the duration of an encoded reference, in frames */
        GstVideoInfo vi;
        gint64 dur;
        GstPad *pad = gst_element_get_static_pad(app->side[REF].convert, "sink");
        if (gst_video_info_from_caps(&vi, app->side[REF].caps) && vi.fps_n > 0 &&
            gst_pad_peer_query_duration(pad, GST_FORMAT_TIME, &dur) && dur > 0)
            app->total_frames = gst_util_uint64_scale_round(dur, vi.fps_n,
                                                            (guint64)vi.fps_d * GST_SECOND);
        gst_object_unref(pad);
        if (app->o.max_frames && app->total_frames > app->o.max_frames)
            app->total_frames = app->o.max_frames;
    }
    l = g_string_new(NULL);
    g_string_append_printf(l, "frame %" G_GUINT64_FORMAT, app->pairs_done);
    if (app->total_frames) {
        g_string_append_printf(l, "/%" G_GUINT64_FORMAT " %3.0f%%", app->total_frames,
                               MIN(100.0, 100.0 * app->pairs_done / app->total_frames));
    }
    g_string_append_printf(l, "  %.1f fps", fps);
    if (app->total_frames && fps > 0 && app->pairs_done < app->total_frames) {
        fmt_duration(eta, sizeof(eta), (app->total_frames - app->pairs_done) / fps);
        g_string_append_printf(l, "  ETA %s", eta);
    }
    if (app->progress_n)
        g_string_append_printf(l, "  %s %.3f (mean so far)", app->progress_feature,
                               app->progress_sum / app->progress_n);
    fprintf(stderr, "\r%s\033[K", l->str);
    fflush(stderr);
    app->line_drawn = TRUE;
    g_string_free(l, TRUE);
    return G_SOURCE_CONTINUE;
}

/* ---------------------------------------------------------------- main loop */

static gboolean within(GstObject *o, GstElement *root)
{
    return root && (o == GST_OBJECT(root) || gst_object_has_as_ancestor(o, GST_OBJECT(root)));
}

/* The input whose elements posted o: its source and conversion; in a
 * ladder, where names like "qmetric3" do not say which input is meant, its
 * scaler, capsfilter and qmetric element too. */
static Side *side_of(App *app, GstObject *o)
{
    for (guint i = 0; i <= app->dists->len; i++) {
        Side *s = i ? app->dists->pdata[i - 1] : &app->side[REF];
        if (within(o, s->src) || within(o, s->convert) ||
            (app->o.ladder && (within(o, s->scale) || within(o, s->filter) || within(o, s->qm))))
            return s;
    }
    return NULL;
}

/* The distorted side whose qmetric element posted o. */
static Side *dist_of(App *app, GstObject *o)
{
    for (guint i = 0; i < app->dists->len; i++) {
        Side *s = app->dists->pdata[i];
        if (o == GST_OBJECT(s->qm))
            return s;
    }
    return NULL;
}

static void maybe_done(App *app)
{
    /* the elements are done at the pipeline's EOS; with strict frame
     * counts a two-input run also waits for the longer input to end, so
     * that its count in the error is exact */
    if (!app->pipeline_eos)
        return;
    if (!app->mode->wait_inputs || app->o.shortest || app->o.max_frames || app->interrupted ||
        (app->side[REF].eos && app->side[DIST].eos))
        g_main_loop_quit(app->loop);
}

/* An error of the pipeline, as one line naming the input it concerns.  A
 * two-input run explains a stream it cannot decode (no decoder for its
 * video, no video at all); a ladder gives the decoder's own message. */
static void on_error(App *app, GstMessage *msg)
{
    GError *err = NULL;
    char *dbg = NULL;
    Side *s = side_of(app, GST_MESSAGE_SRC(msg));
    const gboolean explain = s && !app->o.ladder;

    gst_message_parse_error(msg, &err, &dbg);
    if (explain && s->missing_video) {
        qmc_fail(app, EXIT_USAGE, "%s: no decoder for this format (%s); install the "
                 "GStreamer plugin that provides it", s->display, s->missing_video);
    } else if (s && (g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_TYPE_NOT_FOUND) ||
                     g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_WRONG_TYPE))) {
        qmc_fail(app, EXIT_USAGE, "%s: not a video format GStreamer recognises (%s)",
                 s->display, s->role);
    } else if (explain && !s->linked &&
               (g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_CODEC_NOT_FOUND) ||
                g_error_matches(err, GST_CORE_ERROR, GST_CORE_ERROR_MISSING_PLUGIN))) {
        /* decodebin found streams, none of them video it can decode */
        if (s->missing)
            qmc_fail(app, EXIT_USAGE, "%s: no video stream found (it holds %s)", s->display,
                     s->missing);
        else
            qmc_fail(app, EXIT_USAGE, "%s: no video stream found (%s)", s->display, s->role);
    } else if (s) {
        qmc_fail(app, EXIT_USAGE, "%s: %s", s->display, err->message);
    } else if (app->qm && GST_MESSAGE_SRC(msg) == GST_OBJECT(app->qm)) {
        qmc_fail(app, EXIT_USAGE, "%s", err->message);
    } else {
        qmc_fail(app, EXIT_USAGE, "%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)), err->message);
    }
    if (g_getenv("QMETRIC_COMPARE_DEBUG") && dbg)
        fprintf(stderr, "debug: %s\n", dbg);
    g_error_free(err);
    g_free(dbg);
}

static gboolean on_bus(GstBus *bus, GstMessage *msg, gpointer data)
{
    App *app = data;

    switch (GST_MESSAGE_TYPE(msg)) {
    case GST_MESSAGE_ELEMENT: {
        const GstStructure *st = gst_message_get_structure(msg);
        if (gst_is_missing_plugin_message(msg)) {
            Side *s = side_of(app, GST_MESSAGE_SRC(msg));
            if (s && !s->missing)
                s->missing = gst_missing_plugin_message_get_description(msg);
        } else if (gst_structure_has_name(st, "qmetric")) {
            app->mode->scores(app, dist_of(app, GST_MESSAGE_SRC(msg)), st);
        } else if (gst_structure_has_name(st, "qmetric-summary")) {
            app->mode->summary(app, dist_of(app, GST_MESSAGE_SRC(msg)), st);
        }
        break;
    }
    case GST_MESSAGE_APPLICATION: {
        const GstStructure *st = gst_message_get_structure(msg);
        if (gst_structure_has_name(st, "qmc-error")) {
            qmc_fail(app, EXIT_USAGE, "%s", gst_structure_get_string(st, "message"));
        } else if (gst_structure_has_name(st, "qmc-warning")) {
            clear_progress(app);
            fprintf(stderr, "qmetric-compare: warning: %s\n",
                    gst_structure_get_string(st, "message"));
        } else if (gst_structure_has_name(st, "qmc-eos")) {
            maybe_done(app);
        } else if (gst_structure_has_name(st, "qmc-seek") ||
                   gst_structure_has_name(st, "qmc-stop")) {
            int side = 0;
            gst_structure_get_int(st, "side", &side);
            if (gst_structure_has_name(st, "qmc-seek"))
                qmc_chunk_seek(app, side);
            else
                qmc_chunk_stop(app, side);
        }
        break;
    }
    case GST_MESSAGE_EOS:
        app->pipeline_eos = TRUE;
        maybe_done(app);
        break;
    case GST_MESSAGE_ERROR:
        on_error(app, msg);
        break;
    case GST_MESSAGE_WARNING:
        print_warning(app, msg);
        break;
    default:
        break;
    }
    return G_SOURCE_CONTINUE;
}

/* SIGINT: end the streams so that the outputs are complete; twice: quit. */
static gboolean on_sigint(gpointer data)
{
    App *app = data;
    if (app->interrupted) {
        /* second Ctrl-C: leave now */
        g_main_loop_quit(app->loop);
        return G_SOURCE_REMOVE;
    }
    /* first: end both streams so that the log and the summary are complete */
    app->interrupted = TRUE;
    clear_progress(app);
    fprintf(stderr, "qmetric-compare: interrupted; finishing (Ctrl-C again to quit now)\n");
    gst_element_send_event(app->pipeline, gst_event_new_eos());
    return G_SOURCE_CONTINUE;
}

void qmc_run(App *app, const QmcRunMode *mode)
{
    GstBus *bus = gst_element_get_bus(app->pipeline);
    guint tick = 0;

    app->mode = mode;
    app->loop = g_main_loop_new(NULL, FALSE);
    gst_bus_add_watch(bus, on_bus, app);
    gst_object_unref(bus);
    g_unix_signal_add(SIGINT, on_sigint, app);
    app->tty = mode->progress && isatty(STDERR_FILENO) && !app->o.quiet;
    app->t0 = g_get_monotonic_time();
    if (app->chunk)
        qmc_chunk_started(app);
    if (app->tty)
        tick = g_timeout_add(200, on_tick, app);

    qmc_set_phase("running");
    if (gst_element_set_state(app->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
        qmc_fail(app, EXIT_USAGE, "the pipeline cannot start");
    else
        g_main_loop_run(app->loop);

    if (tick)
        g_source_remove(tick);
    clear_progress(app);
}

void qmc_run_stop(App *app)
{
    qmc_set_phase("stopping the pipeline");
    gst_element_set_state(app->pipeline, GST_STATE_NULL);
    qmc_set_phase("results");
}

void qmc_run_free(App *app)
{
    qmc_set_phase("freeing the pipeline");
    gst_object_unref(app->pipeline);
    qmc_set_phase("exiting");
}
