/* qmetric-compare: measure the quality of a video against its reference.
 *
 *   qmetric-compare REFERENCE DISTORTED [options]
 *
 * Any two files or URIs GStreamer can decode (or raw .yuv with --size and
 * --format) are decoded, brought to one pixel format (the reference's),
 * optionally scaled (--scale), paired frame by frame and scored by the
 * qmetric element.  Prints a progress line while it runs and a summary
 * table at the end; writes libvmaf-style logs (--output) and an SVG chart
 * (--plot); --fail-below turns a score into an exit status for CI.
 *
 * With several distorted inputs (a ladder) the reference is decoded once and
 * every rendition is scored in the same pipeline (ladder.c).
 *
 * Exit status: 0 success, 1 a --fail-below threshold was not met, 2 a usage
 * or input error (one line on stderr says which), 130 interrupted.
 *
 * The parts are listed in compare.h.
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "compare.h"

#include <signal.h>

void qmc_clear_progress(App *app)
{
    if (app->line_drawn) {
        fputs("\r\033[K", stderr);
        app->line_drawn = FALSE;
    }
}

/* A pipeline warning, printed unless it is one the run reports otherwise:
 * unmatched frames (in the summary and by the count check) and undecodable
 * streams (by the error that follows, or they are not the video). */
void qmc_print_warning(App *app, GstMessage *msg)
{
    GError *err = NULL;
    const GstStructure *d = NULL;
    gst_message_parse_warning(msg, &err, NULL);
    gst_message_parse_warning_details(msg, &d);
    if (!(d && gst_structure_has_field(d, "details")) &&
        !g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_CODEC_NOT_FOUND)) {
        qmc_clear_progress(app);
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

static Side *side_of(App *app, GstObject *o)
{
    for (int i = 0; i < 2; i++) {
        GstElement *roots[] = { app->side[i].src, app->side[i].convert };
        for (guint k = 0; k < G_N_ELEMENTS(roots); k++)
            if (roots[k] && (o == GST_OBJECT(roots[k]) ||
                             gst_object_has_as_ancestor(o, GST_OBJECT(roots[k]))))
                return &app->side[i];
    }
    return NULL;
}

static void maybe_done(App *app)
{
    /* qmetric is done at its EOS; with strict frame counts we also wait for
     * the longer input to end so that its count is exact */
    if (!app->pipeline_eos)
        return;
    if (app->o.shortest || app->o.max_frames || app->interrupted ||
        (app->side[REF].eos && app->side[DIST].eos))
        g_main_loop_quit(app->loop);
}

static void on_error(App *app, GstMessage *msg)
{
    GError *err = NULL;
    char *dbg = NULL;
    Side *s = side_of(app, GST_MESSAGE_SRC(msg));

    gst_message_parse_error(msg, &err, &dbg);
    if (s && s->missing_video) {
        qmc_fail(app, EXIT_USAGE, "%s: no decoder for this format (%s); install the "
                 "GStreamer plugin that provides it", s->display, s->missing_video);
    } else if (s && (g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_TYPE_NOT_FOUND) ||
                     g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_WRONG_TYPE))) {
        qmc_fail(app, EXIT_USAGE, "%s: not a video format GStreamer recognises (the %s)",
                 s->display, qmc_side_name[s->id]);
    } else if (s && !s->linked &&
               (g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_CODEC_NOT_FOUND) ||
                g_error_matches(err, GST_CORE_ERROR, GST_CORE_ERROR_MISSING_PLUGIN))) {
        /* decodebin found streams, none of them video it can decode */
        if (s->missing)
            qmc_fail(app, EXIT_USAGE, "%s: no video stream found (it holds %s)", s->display,
                     s->missing);
        else
            qmc_fail(app, EXIT_USAGE, "%s: no video stream found (the %s)", s->display,
                     qmc_side_name[s->id]);
    } else if (s) {
        qmc_fail(app, EXIT_USAGE, "%s: %s", s->display, err->message);
    } else if (GST_MESSAGE_SRC(msg) == GST_OBJECT(app->qm)) {
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
            if (app->chunk)
                qmc_chunk_on_scores(app, st);
            else
                qmc_on_scores(app, st);
        } else if (gst_structure_has_name(st, "qmetric-summary")) {
            gst_clear_structure(&app->summary);
            app->summary = gst_structure_copy(st);
        }
        break;
    }
    case GST_MESSAGE_APPLICATION: {
        const GstStructure *st = gst_message_get_structure(msg);
        if (gst_structure_has_name(st, "qmc-error")) {
            qmc_fail(app, EXIT_USAGE, "%s", gst_structure_get_string(st, "message"));
        } else if (gst_structure_has_name(st, "qmc-warning")) {
            qmc_clear_progress(app);
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
        qmc_print_warning(app, msg);
        break;
    default:
        break;
    }
    return G_SOURCE_CONTINUE;
}

gboolean qmc_on_sigint(gpointer data)
{
    App *app = data;
    if (app->interrupted) {
        /* second Ctrl-C: leave now */
        g_main_loop_quit(app->loop);
        return G_SOURCE_REMOVE;
    }
    /* first: end both streams so that the log and the summary are complete */
    app->interrupted = TRUE;
    qmc_clear_progress(app);
    fprintf(stderr, "qmetric-compare: interrupted; finishing (Ctrl-C again to quit now)\n");
    gst_element_send_event(app->pipeline, gst_event_new_eos());
    return G_SOURCE_CONTINUE;
}

/* The log and the chart reach their destinations, or are removed when the
 * run failed before its summary or compared nothing (nothing partial is
 * left behind). */
static void write_outputs(App *app)
{
    Output *outs[] = { &app->log, &app->plot };
    guint64 frames = 0;
    gboolean keep;

    if (app->summary)
        gst_structure_get_uint64(app->summary, "frames", &frames);
    keep = frames && !app->no_output;

    for (guint i = 0; i < G_N_ELEMENTS(outs); i++) {
        char *err = NULL;
        if (!outs[i]->tmp)
            continue;
        if (!keep || outs[i]->failed) {
            qmc_output_discard(outs[i]);
        } else if (!qmc_output_commit(outs[i], &err)) {
            if (app->error) /* the first error is the exit status; say this one too */
                fprintf(stderr, "qmetric-compare: %s\n", err);
            qmc_fail(app, EXIT_USAGE, "%s", err);
            g_free(err);
        }
    }
}

/* --dry-run: what would run where, on stdout; nothing is decoded */
static G_GNUC_NORETURN void dry_run(App *app)
{
    int dev = app->gpus->len ? qmc_gpu_for(app, 0) : app->o.cuda_device_id;
    printf("reference   %s\n", app->side[REF].display);
    printf("distorted   %s -> ", app->side[DIST].display);
    if (dev >= 0)
        printf("CUDA device %d\n", dev);
    else
        printf("backend %s, the element's default device\n",
               app->o.backend ? app->o.backend : "auto");
    if (app->gpus->len > 1)
        printf("note        a two-input comparison is one qmetric element: it runs on the "
               "first of --gpus %s\n", app->o.gpus_spec);
    if (app->o.align)
        printf("alignment   --align %s: offsets -%d..+%d, %d frame pairs each\n",
               app->o.align == ALIGN_AUTO ? "auto" : "force", app->o.align_max,
               app->o.align_max, app->o.align_window);
    qmc_exit_after_report(FALSE);
}

int main(int argc, char **argv)
{
    App app_s;
    App *app = &app_s;
    GstBus *bus;
    guint tick = 0;
    int code = 0;

    memset(app, 0, sizeof(*app));
    qmc_install_crash_handler();
    gst_init(NULL, NULL); /* our options are not GStreamer's */
    qmc_parse_options(&app->o, argc, argv);
    g_mutex_init(&app->lock);
    qmc_resolve_gpus(app);
    if (app->o.ladder)
        return qmc_ladder_main(app);
    app->x = g_array_new(FALSE, FALSE, sizeof(double));
    app->cols = g_ptr_array_new();
    for (int i = 0; i < 2; i++) {
        app->side[i].app = app;
        app->side[i].id = i;
        app->side[i].last_pts = GST_CLOCK_TIME_NONE;
        app->side[i].dur = GST_CLOCK_TIME_NONE;
    }
    qmc_check_input(app, &app->side[REF], app->o.input[REF]);
    qmc_check_input(app, &app->side[DIST], app->o.input[DIST]);
    if (app->o.count_frames)
        qmc_count_frames_main(app);
    if (app->o.dry_run)
        dry_run(app);
    if (app->o.detect_offset || app->o.align)
        qmc_align_main(app); /* --detect-offset ends here */
    if (app->o.chunk)
        qmc_chunk_plan(app);
    if (app->side[REF].raw && app->side[DIST].raw && !app->o.shortest && !app->o.max_frames &&
        !app->o.pair_by_time && !app->chunk &&
        app->side[REF].raw_frames - app->o.skip[REF] !=
        app->side[DIST].raw_frames - app->o.skip[DIST]) {
        guint64 r = app->side[REF].raw_frames - app->o.skip[REF];
        guint64 d = app->side[DIST].raw_frames - app->o.skip[DIST];
        qmc_input_error("frame counts differ: reference has %" G_GUINT64_FORMAT
                        " frames, distorted %" G_GUINT64_FORMAT "%s (--shortest compares the "
                        "first %" G_GUINT64_FORMAT ")", r, d,
                        app->o.skip[REF] || app->o.skip[DIST] ? " after the skipped ones" : "",
                        MIN(r, d));
    }
    if (!qmc_find_qmetric()) {
        fprintf(stderr, "qmetric-compare: the qmetric GStreamer element was not found: "
                "build it (ninja -C build) or set GST_PLUGIN_PATH to its directory\n");
        return EXIT_USAGE;
    }
    /* a destination that cannot be written is named before anything runs */
    if (app->o.output)
        qmc_output_prepare(&app->log, "--output", app->o.output);
    if (app->o.plot)
        qmc_output_prepare(&app->plot, "--plot", app->o.plot);
    qmc_build_pipeline(app);

    app->loop = g_main_loop_new(NULL, FALSE);
    bus = gst_element_get_bus(app->pipeline);
    gst_bus_add_watch(bus, on_bus, app);
    gst_object_unref(bus);
    g_unix_signal_add(SIGINT, qmc_on_sigint, app);
    app->tty = isatty(STDERR_FILENO) && !app->o.quiet;
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
    qmc_clear_progress(app);
    qmc_set_phase("stopping the pipeline");
    gst_element_set_state(app->pipeline, GST_STATE_NULL);
    qmc_set_phase("results");
    if (app->chunk && app->summary)
        qmc_chunk_finish(app);

    if (!app->error && !app->summary)
        qmc_fail(app, EXIT_USAGE, "no frames were compared");
    /* the human table goes to stderr when stdout carries what a script reads */
    if (!app->o.quiet)
        app->table = app->o.summary == SUMMARY_JSON || qmc_output_is_stdout(&app->log) ||
                     qmc_output_is_stdout(&app->plot) ? stderr : stdout;
    if (app->summary && !app->no_output) {
        guint64 frames = 0;
        gst_structure_get_uint64(app->summary, "frames", &frames);
        if (!frames && !app->error && !app->chunk)
            qmc_fail(app, EXIT_USAGE, "no frames were compared (empty input?)");
        if ((!app->error || frames) && app->table)
            qmc_print_summary(app, app->table);
        if (app->o.plot && frames)
            qmc_write_plot(app);
    }
    /* the inputs' lengths differ: report both counts (by time, the counts
     * may differ: the unmatched frames are in the summary) */
    if (!app->error && !app->interrupted && !app->o.shortest && !app->o.max_frames &&
        !app->o.pair_by_time && !app->chunk && app->side[REF].frames != app->side[DIST].frames)
        qmc_fail(app, EXIT_USAGE, "frame counts differ: reference has %" G_GUINT64_FORMAT
                 " frames, distorted %" G_GUINT64_FORMAT " (scores above cover the first %"
                 G_GUINT64_FORMAT "; --shortest accepts this)", app->side[REF].frames,
                 app->side[DIST].frames, MIN(app->side[REF].frames, app->side[DIST].frames));
    write_outputs(app);

    if (app->error) {
        code = app->exit_code;
    } else {
        qmc_check_gates(app, &code);
        if (app->interrupted)
            code = EXIT_INTERRUPTED;
    }
    if (app->o.summary == SUMMARY_JSON && app->summary && !app->no_output)
        qmc_print_summary_json(app, stdout, code);
    if (app->error)
        fprintf(stderr, "qmetric-compare: %s\n", app->error);
    /* a summary nobody received is a failure too (stdout on a full disk) */
    if (fflush(stdout) != 0) {
        fprintf(stderr, "qmetric-compare: standard output cannot be written: %s\n",
                g_strerror(errno));
        code = EXIT_USAGE;
    } else if (ferror(stdout)) {
        fprintf(stderr, "qmetric-compare: standard output cannot be written\n");
        code = EXIT_USAGE;
    }
    qmc_set_phase("freeing the pipeline");
    gst_object_unref(app->pipeline);
    qmc_set_phase("exiting");
    return code;
}
