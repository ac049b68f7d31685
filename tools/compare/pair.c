/* qmetric-compare REFERENCE DISTORTED: the two-input comparison, from its
 * checked inputs to its exit status.
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "compare.h"

/* The element's messages: a chunk keeps the frames of the chunk only, and
 * numbers them as a whole run does. */
static void pair_scores(App *app, Side *dist, const GstStructure *st)
{
    if (app->chunk)
        qmc_chunk_on_scores(app, st);
    else
        qmc_on_scores(app, st);
}

static void pair_summary(App *app, Side *dist, const GstStructure *st)
{
    gst_clear_structure(&app->summary);
    app->summary = gst_structure_copy(st);
}

/* the progress line; the end waits for both inputs' ends so that their
 * frame counts are exact (the count check) */
static const QmcRunMode pair_mode = { pair_scores, pair_summary, TRUE, TRUE };

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
    printf("reference   %s\n", app->side[REF].display);
    printf("distorted   %s -> ", app->side[DIST].display);
    qmc_print_device(app, 0);
    if (app->gpus->len > 1)
        printf("note        a two-input comparison is one qmetric element: it runs on the "
               "first of --gpus %s\n", app->o.gpus_spec);
    if (app->o.align)
        printf("alignment   --align %s: offsets -%d..+%d, %d frame pairs each\n",
               app->o.align == ALIGN_AUTO ? "auto" : "force", app->o.align_max,
               app->o.align_max, app->o.align_window);
    qmc_exit_after_report(FALSE);
}

int qmc_pair_main(App *app)
{
    int code = 0;

    app->x = g_array_new(FALSE, FALSE, sizeof(double));
    app->cols = g_ptr_array_new();
    qmc_side_init(&app->side[REF], app, REF, "reference", "the reference");
    qmc_side_init(&app->side[DIST], app, DIST, "distorted", "the distorted");
    app->side[REF].partner = &app->side[DIST];
    app->side[DIST].partner = &app->side[REF];
    app->dists = g_ptr_array_new();
    g_ptr_array_add(app->dists, &app->side[DIST]);
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
    qmc_require_qmetric();
    /* a destination that cannot be written is named before anything runs */
    if (app->o.output)
        qmc_output_prepare(&app->log, "--output", app->o.output);
    if (app->o.plot)
        qmc_output_prepare(&app->plot, "--plot", app->o.plot);
    /* (a chunk writes its log itself: the element sees context frames) */
    if (app->o.output && !app->chunk)
        app->side[DIST].log = app->log.tmp;
    qmc_build_pipeline(app);
    if (app->gpus->len > 1 && !app->o.quiet)
        fprintf(stderr, "qmetric-compare: a two-input comparison runs on one GPU: CUDA "
                "device %d (--gpus spreads the renditions of a ladder)\n", qmc_gpu_for(app, 0));

    qmc_run(app, &pair_mode);
    qmc_run_stop(app);
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
    qmc_run_free(app);
    return code;
}
