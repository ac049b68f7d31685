/* qmetric-compare: per-frame scores kept for the chart and the gates, the
 * summary table, the SVG chart. */
#include "compare.h"

/* ----------------------------------------------------------------- results */

static Column *column(App *app, const char *name)
{
    for (guint i = 0; i < app->cols->len; i++) {
        Column *c = g_ptr_array_index(app->cols, i);
        if (!strcmp(c->name, name))
            return c;
    }
    return NULL;
}

static gboolean has_feature(App *app, const char *name)
{
    return app->features && g_strv_contains((const char *const *)app->features, name);
}

static char *feature_list(char **features)
{
    return features ? g_strjoinv(", ", features) : g_strdup("none");
}

/* The features of a frame's scores (the element's message): its doubles. */
char **qmc_score_features(const GstStructure *st)
{
    GPtrArray *names = g_ptr_array_new();
    for (int i = 0; i < gst_structure_n_fields(st); i++) {
        const char *f = gst_structure_nth_field_name(st, i);
        if (gst_structure_get_field_type(st, f) == G_TYPE_DOUBLE)
            g_ptr_array_add(names, g_strdup(f));
    }
    g_ptr_array_add(names, NULL);
    return (char **)g_ptr_array_free(names, FALSE);
}

/* A gate on a feature that is not scored is a usage error, found at the
 * first frame rather than after an hour of decoding; nothing is written. */
gboolean qmc_check_gate_features(App *app, char **features)
{
    for (guint i = 0; i < app->o.thresholds->len; i++) {
        Threshold *t = &g_array_index(app->o.thresholds, Threshold, i);
        if (!features || !g_strv_contains((const char *const *)features, t->feature)) {
            char *l = feature_list(features);
            app->no_output = TRUE;
            qmc_fail(app, EXIT_USAGE, "--fail-below: no feature '%s' in the scores (they are: %s)",
                     t->feature, l);
            g_free(l);
            return FALSE;
        }
    }
    return TRUE;
}

/* Expand --plot-metrics against the features scored: feature keys, or
 * metric names standing for their per-plane features (psnr -> psnr_y,
 * psnr_cb, psnr_cr), or "all". */
static char **expand_plot_features(char **features, const char *list, char **bad)
{
    GPtrArray *out = g_ptr_array_new();
    char **items = g_strsplit(list, ",", -1);
    for (char **it = items; *it; it++) {
        char *name = g_strstrip(*it);
        const gboolean key = g_strv_contains((const char *const *)features, name);
        gboolean found = FALSE;
        if (!*name)
            continue;
        for (char **f = features; *f; f++) {
            gboolean take;
            if (!strcmp(name, "all"))
                take = TRUE;
            else if (key)
                take = !strcmp(*f, name);
            else
                take = g_str_has_prefix(*f, name) && (*f)[strlen(name)] == '_' &&
                       !strchr(*f + strlen(name) + 1, '_');
            if (take) {
                found = TRUE;
                if (!g_ptr_array_find_with_equal_func(out, *f, g_str_equal, NULL))
                    g_ptr_array_add(out, g_strdup(*f));
            }
        }
        if (!found && !*bad)
            *bad = g_strdup(name);
    }
    g_strfreev(items);
    g_ptr_array_add(out, NULL);
    return (char **)g_ptr_array_free(out, FALSE);
}

gboolean qmc_check_plot_features(App *app, char **features)
{
    char *bad = NULL;
    if (!app->o.plot_metrics)
        return TRUE;
    g_strfreev(app->plot_features);
    app->plot_features = expand_plot_features(features, app->o.plot_metrics, &bad);
    if (bad) {
        char *l = feature_list(features);
        app->no_output = TRUE;
        qmc_fail(app, EXIT_USAGE, "--plot-metrics: no feature or metric '%s' in the scores "
                 "(they are: %s)", bad, l);
        g_free(l);
        g_free(bad);
        return FALSE;
    }
    return TRUE;
}

/* The first scores tell which features exist: check the names the user gave
 * against them now rather than after an hour of decoding. */
static void first_scores(App *app, const GstStructure *st)
{
    app->features = qmc_score_features(st);
    app->features_checked = TRUE;

    qmc_check_plot_features(app, app->features);
    if (!app->o.plot_metrics) {
        /* VMAF (one line per model when several), else the first feature */
        GPtrArray *p = g_ptr_array_new();
        for (char **f = app->features; *f; f++)
            if (has_feature(app, "vmaf") ? !strcmp(*f, "vmaf") : g_str_has_prefix(*f, "vmaf_"))
                g_ptr_array_add(p, g_strdup(*f));
        if (!p->len && app->features[0])
            g_ptr_array_add(p, g_strdup(app->features[0]));
        g_ptr_array_add(p, NULL);
        app->plot_features = (char **)g_ptr_array_free(p, FALSE);
    }
    qmc_check_gate_features(app, app->features);
    app->progress_feature = g_strdup(has_feature(app, "vmaf") ? "vmaf" :
                                     app->plot_features[0] ? app->plot_features[0] :
                                     app->features[0]);
    for (char **f = app->plot_features; *f; f++) {
        Column *c = g_new0(Column, 1);
        c->name = g_strdup(*f);
        c->y = g_array_new(FALSE, FALSE, sizeof(double));
        g_ptr_array_add(app->cols, c);
    }
}

void qmc_on_scores(App *app, const GstStructure *st)
{
    guint64 index = 0;
    double v;

    if (!app->features_checked)
        first_scores(app, st);
    gst_structure_get_uint64(st, "index", &index);
    app->pairs_done = index + 1;
    v = index;
    g_array_append_val(app->x, v);
    for (guint i = 0; i < app->cols->len; i++) {
        Column *c = g_ptr_array_index(app->cols, i);
        if (!gst_structure_get_double(st, c->name, &v))
            v = NAN;
        g_array_append_val(c->y, v);
    }
    if (app->progress_feature && gst_structure_get_double(st, app->progress_feature, &v) &&
        isfinite(v)) {
        app->progress_sum += v;
        app->progress_n++;
    }
}

double qmc_pooled(const GstStructure *summary, const char *feature, const char *method)
{
    const GValue *v = gst_structure_get_value(summary, feature);
    double d;
    if (!v || !GST_VALUE_HOLDS_STRUCTURE(v))
        return NAN;
    if (!gst_structure_get_double(gst_value_get_structure(v), method, &d))
        return NAN;
    return d;
}

double qmc_mean_of(App *app, const char *feature)
{
    double m = app->summary ? qmc_pooled(app->summary, feature, "mean") : NAN;
    Column *c;
    if (!isnan(m))
        return m;
    /* --pool without mean: the plain mean of the frames we kept */
    if ((c = column(app, feature))) {
        double s = 0;
        guint n = 0;
        for (guint i = 0; i < c->y->len; i++) {
            double y = g_array_index(c->y, double, i);
            if (!isnan(y)) {
                s += y;
                n++;
            }
        }
        return n ? s / n : NAN;
    }
    return NAN;
}

static void print_value(FILE *out, double v)
{
    if (isnan(v))
        fprintf(out, " %12s", "-");
    else if (isinf(v))
        fprintf(out, " %12s", v > 0 ? "inf" : "-inf");
    else
        fprintf(out, " %12.6f", v);
}

static void describe_input(FILE *out, App *app, Side *s)
{
    GstVideoInfo vi;
    fprintf(out, "%-10s %s", qmc_side_name[s->id], s->display);
    if (s->caps && gst_video_info_from_caps(&vi, s->caps)) {
        fprintf(out, "  (%dx%d %s", vi.width, vi.height,
               gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&vi)));
        if (vi.fps_n > 0)
            fprintf(out, " %.4g fps", (double)vi.fps_n / vi.fps_d);
        if (s->id == DIST && app->converted)
            fprintf(out, ", converted to %s", gst_video_format_to_string(app->target));
        if (s->id == DIST && app->scaled)
            fprintf(out, ", scaled (%s)", app->o.scale_method);
        if (s->id == REF && GST_VIDEO_INFO_FORMAT(&vi) != app->target)
            fprintf(out, ", compared as %s", gst_video_format_to_string(app->target));
        fprintf(out, ")");
    }
    fprintf(out, "\n");
}

/* A feature VMAF computes for its model (integer_vif_scale0, integer_adm2,
 * integer_motion2, ...), unless that metric was named in --metrics ("all"
 * does not name them either): they would bury the scores asked for. */
static gboolean vmaf_input_hidden(App *app, const char *f)
{
    static const struct { const char *metric, *mark; } inputs[] = {
        { "vif", "vif" }, { "adm", "adm" }, { "adm", "integer_aim" }, { "motion", "motion" },
    };
    char **asked = g_strsplit(app->o.metrics->str, ",", -1);
    gboolean hide = FALSE;

    for (guint i = 0; i < G_N_ELEMENTS(inputs) && !hide; i++) {
        if (strstr(f, inputs[i].mark))
            hide = !g_strv_contains((const char *const *)asked, inputs[i].metric);
    }
    g_strfreev(asked);
    return hide;
}

void qmc_print_summary(App *app, FILE *out)
{
    static const struct { const char *field, *title; } cols[] = {
        { "mean", "mean" }, { "min", "min" }, { "max", "max" },
        { "harmonic-mean", "harmonic mean" }, { "p1", "1st pct" }, { "p5", "5th pct" },
    };
    gboolean show[G_N_ELEMENTS(cols)] = { FALSE };
    GPtrArray *rows = g_ptr_array_new();
    int hidden = 0;
    guint64 frames = 0, pairs = 0, ur = 0, ud = 0, unreadable = 0;
    int n = gst_structure_n_fields(app->summary), width = 8;
    double secs = (g_get_monotonic_time() - app->t0) / 1e6;

    gst_structure_get_uint64(app->summary, "frames", &frames);
    gst_structure_get_uint64(app->summary, "pairs", &pairs);
    gst_structure_get_uint64(app->summary, "unmatched-reference", &ur);
    gst_structure_get_uint64(app->summary, "unmatched-distorted", &ud);
    gst_structure_get_uint64(app->summary, "unreadable", &unreadable);

    describe_input(out, app, &app->side[REF]);
    describe_input(out, app, &app->side[DIST]);
    fprintf(out, "frames     %" G_GUINT64_FORMAT " scored of %" G_GUINT64_FORMAT " pairs "
            "(decoded: reference %" G_GUINT64_FORMAT ", distorted %" G_GUINT64_FORMAT
            "%s); unmatched: reference %" G_GUINT64_FORMAT ", distorted %" G_GUINT64_FORMAT,
            frames, pairs, app->side[REF].frames, app->side[DIST].frames,
            app->side[REF].eos && app->side[DIST].eos ? "" : ", stopped early", ur, ud);
    if (app->side[REF].skipped || app->side[DIST].skipped)
        fprintf(out, "; skipped first: reference %" G_GUINT64_FORMAT ", distorted %"
                G_GUINT64_FORMAT, app->side[REF].skipped, app->side[DIST].skipped);
    if (unreadable)
        fprintf(out, "; unreadable %" G_GUINT64_FORMAT, unreadable);
    fprintf(out, "\ntime       %.1f s, %.1f frames/s\n", secs, secs > 0 ? pairs / secs : 0.0);
    if (app->aligned)
        fprintf(out, "aligned    offset %+d found by --align %s (confidence %.3f)\n",
                app->align.offset, app->o.align == ALIGN_FORCE ? "force" : "auto",
                app->align.confidence);
    if (app->range_note)
        fprintf(out, "note       one input is full range, the other limited: compared as "
                "stored (as libvmaf does), which lowers the scores\n");
    fprintf(out, "\n");

    /* VMAF first (the headline), then the rest in the element's order;
     * VMAF's own inputs only when their metric was asked for */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            const char *f = gst_structure_nth_field_name(app->summary, i);
            const GValue *v = gst_structure_get_value(app->summary, f);
            gboolean vmaf = !strcmp(f, "vmaf") || g_str_has_prefix(f, "vmaf_");
            if (!GST_VALUE_HOLDS_STRUCTURE(v) || vmaf != (pass == 0))
                continue;
            if (vmaf_input_hidden(app, f)) {
                hidden++;
                continue;
            }
            g_ptr_array_add(rows, (gpointer)f);
            width = MAX(width, (int)strlen(f));
            for (guint c = 0; c < G_N_ELEMENTS(cols); c++)
                if (gst_structure_has_field(gst_value_get_structure(v), cols[c].field))
                    show[c] = TRUE;
        }
    }
    fprintf(out, "%-*s", width, "feature");
    for (guint c = 0; c < G_N_ELEMENTS(cols); c++)
        if (show[c])
            fprintf(out, " %12s", cols[c].title);
    fprintf(out, "\n");
    for (guint r = 0; r < rows->len; r++) {
        const char *f = g_ptr_array_index(rows, r);
        fprintf(out, "%-*s", width, f);
        for (guint c = 0; c < G_N_ELEMENTS(cols); c++)
            if (show[c])
                print_value(out, qmc_pooled(app->summary, f, cols[c].field));
        fprintf(out, "\n");
    }
    if (hidden)
        fprintf(out, "(%d VMAF input features not shown%s; add vif,adm,motion to --metrics "
                "to see them)\n", hidden, app->o.output ? ", they are in the log" : "");
    g_ptr_array_free(rows, TRUE);
    if (app->o.output)
        fprintf(out, "\nper-frame log: %s (%s)\n",
                qmc_output_is_stdout(&app->log) ? "standard output" : app->o.output,
                app->o.log_format);
    fflush(out);
}

void qmc_write_plot(App *app)
{
    QmPlotSeries *se = g_new0(QmPlotSeries, app->cols->len);
    char *ref = g_path_get_basename(app->side[REF].display);
    char *dist = g_path_get_basename(app->side[DIST].display);
    char *title, *subtitle;
    GString *names = g_string_new(NULL);
    GError *err = NULL;
    QmPlotOptions po = { 0 };

    for (guint i = 0; i < app->cols->len; i++) {
        Column *c = g_ptr_array_index(app->cols, i);
        se[i].name = c->name;
        se[i].x = (double *)app->x->data;
        se[i].y = (double *)c->y->data;
        se[i].n = c->y->len;
        se[i].mean = qmc_mean_of(app, c->name);
        if (names->len)
            g_string_append(names, ", ");
        g_string_append(names, c->name);
    }
    title = g_strdup_printf("Per-frame quality of %s", dist);
    if (app->cols->len > 4)
        g_string_printf(names, "%u features", app->cols->len); /* the legend names them */
    subtitle = g_strdup_printf("against %s, %u frames scored%s; %s", ref, app->x->len,
                               app->o.subsample > 1 ? " (subsampled)" : "", names->str);
    po.title = title;
    po.subtitle = subtitle;
    if (!qm_plot_svg(app->plot.tmp, se, app->cols->len, &po, &err)) {
        app->plot.failed = TRUE;
        qmc_fail(app, EXIT_USAGE, "--plot %s: cannot be written (%s)", app->o.plot,
                 err->message);
        g_error_free(err);
    }
    g_free(title);
    g_free(subtitle);
    g_string_free(names, TRUE);
    g_free(ref);
    g_free(dist);
    g_free(se);
}

/* The value a gate compares: the pooled statistic from the summary (the
 * pool was widened to hold it), or for the mean the frames kept here when
 * the element did not pool it. */
double qmc_gate_value(App *app, const Threshold *t)
{
    if (!strcmp(t->stat, "mean"))
        return qmc_mean_of(app, t->feature);
    return app->summary ? qmc_pooled(app->summary, t->feature, t->stat) : NAN;
}

/* One gate's verdict, one line on stderr (a pass only without --quiet);
 * who: the rendition it was applied to, or NULL.  Returns whether it passed
 * (a value that is not a number fails). */
gboolean qmc_report_gate(App *app, const char *who, const Threshold *t, double v)
{
    const gboolean ok = v >= t->value;
    if (ok && app->o.quiet)
        return TRUE;
    fprintf(stderr, "qmetric-compare: %s%s%s %s %.6f ", who ? who : "", who ? ": " : "",
            t->feature, qmc_stat_name(t->stat), v);
    if (ok)
        fprintf(stderr, ">= %g: ok\n", t->value);
    else
        fprintf(stderr, "is below %g (--fail-below)\n", t->value);
    return ok;
}

/* Every --fail-below gate: one line each on stderr (the passing ones unless
 * --quiet); *code becomes EXIT_FAIL_BELOW when one fails. */
void qmc_check_gates(App *app, int *code)
{
    for (guint i = 0; i < app->o.thresholds->len; i++) {
        Threshold *t = &g_array_index(app->o.thresholds, Threshold, i);
        if (!qmc_report_gate(app, NULL, t, qmc_gate_value(app, t)))
            *code = EXIT_FAIL_BELOW;
    }
}
