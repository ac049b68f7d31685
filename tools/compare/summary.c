/* qmetric-compare: the summary as one JSON object (--summary json), for
 * scripts: inputs, frame counts, every feature's pooled values (libvmaf's
 * names: min, max, mean, harmonic_mean, p1, p5), the gates and the exit
 * status.  Non-finite scores are null, as in the logs. */
#include "compare.h"

static void json_input(FILE *f, App *app, Side *s)
{
    GstVideoInfo vi;
    fputs("{\"input\": ", f);
    qmc_json_string(f, s->display);
    if (s->caps && gst_video_info_from_caps(&vi, s->caps)) {
        fprintf(f, ", \"width\": %d, \"height\": %d, \"format\": \"%s\"", vi.width, vi.height,
                gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&vi)));
        if (vi.fps_n > 0)
            fprintf(f, ", \"fps\": %.6f", (double)vi.fps_n / vi.fps_d);
    }
    fprintf(f, ", \"frames_decoded\": %" G_GUINT64_FORMAT ", \"frames_skipped\": %"
            G_GUINT64_FORMAT, s->frames, s->skipped);
    if (s->id == DIST && app->scaled)
        fprintf(f, ", \"scaled\": \"%s\"", app->o.scale_method);
    fputc('}', f);
}

void qmc_print_summary_json(App *app, FILE *f, int exit_status)
{
    const GstStructure *sum = app->summary;
    guint64 v;
    int n = sum ? gst_structure_n_fields(sum) : 0;
    gboolean first = TRUE;
    double secs = (g_get_monotonic_time() - app->t0) / 1e6;

    fprintf(f, "{\n  \"version\": \"qmetric-compare %s\",\n  \"reference\": ", QM_VERSION);
    json_input(f, app, &app->side[REF]);
    fputs(",\n  \"distorted\": ", f);
    json_input(f, app, &app->side[DIST]);
    fprintf(f, ",\n  \"compared_as\": \"%s\",\n  \"pair_by\": \"%s\"",
            app->configured ? gst_video_format_to_string(app->target) : "",
            app->o.pair_by_time ? "time" : "index");
    fputs(",\n  \"alignment\": ", f);
    if (app->aligned)
        fprintf(f, "{\"offset\": %d, \"confidence\": %.6f, \"mode\": \"%s\"}",
                app->align.offset, app->align.confidence,
                app->o.align == ALIGN_FORCE ? "force" : "auto");
    else
        fputs("null", f);
    {
        static const char *const counts[][2] = {
            { "frames", "frames" }, { "pairs", "pairs" },
            { "unmatched-reference", "unmatched_reference" },
            { "unmatched-distorted", "unmatched_distorted" }, { "unreadable", "unreadable" },
        };
        for (guint i = 0; i < G_N_ELEMENTS(counts); i++) {
            v = 0;
            if (sum)
                gst_structure_get_uint64(sum, counts[i][0], &v);
            fprintf(f, ",\n  \"%s\": %" G_GUINT64_FORMAT, counts[i][1], v);
        }
    }
    fprintf(f, ",\n  \"seconds\": %.3f", secs);
    fputs(",\n  ", f);
    qmc_json_backend(f, sum);
    fputs(",\n  \"pooled_metrics\": {", f);
    for (int i = 0; i < n; i++) {
        const char *name = gst_structure_nth_field_name(sum, i);
        const GValue *val = gst_structure_get_value(sum, name);
        const GstStructure *p;
        if (!GST_VALUE_HOLDS_STRUCTURE(val))
            continue;
        p = gst_value_get_structure(val);
        fputs(first ? "\n    " : ",\n    ", f);
        first = FALSE;
        qmc_json_string(f, name);
        fputs(": {", f);
        for (int k = 0; k < gst_structure_n_fields(p); k++) {
            const char *field = gst_structure_nth_field_name(p, k);
            double d;
            if (!gst_structure_get_double(p, field, &d))
                continue;
            fprintf(f, "%s\"%s\": ", k ? ", " : "", qmc_stat_name(field));
            qmc_json_number(f, d);
        }
        fputc('}', f);
    }
    fputs(first ? "}" : "\n  }", f);
    fputs(",\n  \"gates\": [", f);
    for (guint i = 0; i < app->o.thresholds->len; i++) {
        Threshold *t = &g_array_index(app->o.thresholds, Threshold, i);
        double d = qmc_gate_value(app, t);
        fputs(i ? ",\n    {\"feature\": " : "\n    {\"feature\": ", f);
        qmc_json_string(f, t->feature);
        fprintf(f, ", \"statistic\": \"%s\", \"threshold\": ", qmc_stat_name(t->stat));
        qmc_json_number(f, t->value);
        fputs(", \"value\": ", f);
        qmc_json_number(f, d);
        fprintf(f, ", \"passed\": %s}", d >= t->value ? "true" : "false");
    }
    fputs(app->o.thresholds->len ? "\n  ]" : "]", f);
    fputs(",\n  \"log\": ", f);
    if (app->o.output) {
        fputs("{\"path\": ", f);
        qmc_json_string(f, app->o.output);
        fprintf(f, ", \"format\": \"%s\"}", app->o.log_format);
    } else {
        fputs("null", f);
    }
    fputs(",\n  \"plot\": ", f);
    qmc_json_string_or_null(f, app->o.plot);
    qmc_json_end(f, app->error, exit_status);
}
