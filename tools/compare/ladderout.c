/* qmetric-compare: a ladder's results.  One row per rendition: codec,
 * resolution, bitrate, size, frames, the pooled values of every feature,
 * its chart series and its gates; as a table, CSV (--ladder-csv), JSON
 * (--ladder-json, --summary json) and the rate-quality chart (--plot-rd).
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "ladder.h"

#include "series.h"
#include "../rdplot.h"
#include "qm.h"

/* A report on an open stream (the CSV, the JSON); code: the exit status. */
typedef void (*Writer)(App *app, FILE *f, GPtrArray *feats, GPtrArray *stats, int code);

typedef struct {
    int width, height;
    double seconds;            /* frames / frame rate; NAN unknown */
    double kbps;               /* NAN unknown */
    const char *source;        /* how kbps was found */
    guint64 frames;
} Row;

static void row_of(const Rend *r, Row *w)
{
    const App *app = r->s.app;
    GstVideoInfo vi;
    w->width = w->height = 0;
    w->seconds = w->kbps = NAN;
    w->source = "unknown";
    w->frames = 0;
    if (r->summary)
        gst_structure_get_uint64(r->summary, "frames", &w->frames);
    if (r->s.caps && gst_video_info_from_caps(&vi, r->s.caps)) {
        w->width = vi.width;
        w->height = vi.height;
        /* the whole file decoded: its frames at its frame rate; cut short
         * (--frames, --shortest, Ctrl-C): the container's duration */
        if (vi.fps_n > 0 && r->s.frames && g_atomic_int_get(&r->s.eos) && !app->interrupted &&
            !app->o.max_frames && !app->o.shortest)
            w->seconds = (double)(r->s.frames + r->s.skipped) * vi.fps_d / vi.fps_n;
        else if (r->container_dur > 0)
            w->seconds = r->container_dur / 1e9;
    }
    /* the mean rate of the file as stored, container included: what the
     * ladder costs to deliver; a tag only when the duration is unknown */
    if (r->size && isfinite(w->seconds) && w->seconds > 0) {
        w->kbps = r->size * 8.0 / w->seconds / 1000.0;
        w->source = "size";
    } else if (r->tag_bitrate) {
        w->kbps = r->tag_bitrate / 1000.0;
        w->source = "tag";
    }
}

/* The pooled features, in the summary's order. */
static GPtrArray *features_of(GPtrArray *rends)
{
    GPtrArray *a = g_ptr_array_new();
    for (guint i = 0; i < rends->len; i++) {
        const GstStructure *s = ((Rend *)rends->pdata[i])->summary;
        for (int k = 0; s && k < gst_structure_n_fields(s); k++) {
            const char *n = gst_structure_nth_field_name(s, k);
            if (GST_VALUE_HOLDS_STRUCTURE(gst_structure_get_value(s, n)) &&
                !g_ptr_array_find_with_equal_func(a, n, g_str_equal, NULL))
                g_ptr_array_add(a, (gpointer)n);
        }
    }
    return a;
}

static const char *const stat_fields[] = { "mean", "harmonic-mean", "min", "max", "p1", "p5" };

/* The statistics any rendition pooled, in a fixed order. */
static GPtrArray *stats_of(GPtrArray *rends, GPtrArray *feats)
{
    GPtrArray *a = g_ptr_array_new();
    for (guint s = 0; s < G_N_ELEMENTS(stat_fields); s++) {
        gboolean any = FALSE;
        for (guint i = 0; i < rends->len && !any; i++)
            for (guint f = 0; f < feats->len && !any; f++) {
                const GstStructure *sum = ((Rend *)rends->pdata[i])->summary;
                any = sum && !isnan(qmc_pooled(sum, feats->pdata[f], stat_fields[s]));
            }
        if (any)
            g_ptr_array_add(a, (gpointer)stat_fields[s]);
    }
    return a;
}

static void csv_cell(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n\r")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
}

static void csv_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, ",%.6f", v);
    else
        fputs(",", f);
}

static double gate_value(const Rend *r, const Threshold *t)
{
    return r->summary ? qmc_pooled(r->summary, t->feature, t->stat) : NAN;
}

/* "vmaf.mean 71.234567 < 80; psnr_y.p5 ..." : the gates a rendition fails */
static char *failed_gates(App *app, const Rend *r)
{
    GString *g = g_string_new(NULL);
    for (guint i = 0; i < app->o.thresholds->len; i++) {
        const Threshold *t = &g_array_index(app->o.thresholds, Threshold, i);
        const double v = gate_value(r, t);
        if (!(v >= t->value))
            g_string_append_printf(g, "%s%s.%s %.6f < %g", g->len ? "; " : "", t->feature,
                                   qmc_stat_name(t->stat), v, t->value);
    }
    return g_string_free(g, FALSE);
}

static void write_csv(App *app, FILE *f, GPtrArray *feats, GPtrArray *stats, int code)
{
    GPtrArray *rends = app->dists;
    const gboolean gates = app->o.thresholds->len > 0;
    fputs("name,input,codec,width,height,bitrate,bitrate_source,size_bytes,frames,duration_s", f);
    for (guint k = 0; k < feats->len; k++)
        for (guint s = 0; s < stats->len; s++)
            fprintf(f, ",%s.%s", (char *)feats->pdata[k], qmc_stat_name(stats->pdata[s]));
    fputs(gates ? ",group,passed,failed_gates\n" : ",group\n", f);
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        Row w;
        row_of(r, &w);
        csv_cell(f, r->name);
        fputc(',', f);
        csv_cell(f, r->s.display);
        fputc(',', f);
        csv_cell(f, r->codec ? r->codec : "");
        fprintf(f, ",%d,%d", w.width, w.height);
        csv_number(f, w.kbps);
        fprintf(f, ",%s,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT, w.source, r->size, w.frames);
        csv_number(f, w.seconds);
        for (guint k = 0; k < feats->len; k++)
            for (guint s = 0; s < stats->len; s++)
                csv_number(f, r->summary ? qmc_pooled(r->summary, feats->pdata[k],
                                                      stats->pdata[s]) : NAN);
        fputc(',', f);
        csv_cell(f, r->series ? r->series : "");
        if (gates) {
            char *why = failed_gates(app, r);
            fprintf(f, ",%s,", r->failed ? "false" : "true");
            csv_cell(f, why);
            g_free(why);
        }
        fputc('\n', f);
    }
}

static void write_json(App *app, FILE *f, GPtrArray *feats, GPtrArray *stats, int code)
{
    GPtrArray *rends = app->dists;
    fprintf(f, "{\n  \"version\": \"qmetric-compare %s\",\n  \"reference\": {\"input\": ",
            QM_VERSION);
    qmc_json_string(f, app->side[REF].display);
    fprintf(f, ", \"width\": %d, \"height\": %d, \"frames_decoded\": %" G_GUINT64_FORMAT "}",
            app->configured ? app->ref_info.width : 0,
            app->configured ? app->ref_info.height : 0, app->side[REF].frames);
    fprintf(f, ",\n  \"compared_as\": \"%s\",\n  \"scale_method\": \"%s\",\n  \"renditions\": [",
            app->configured ? gst_video_format_to_string(app->target) : "",
            app->o.scale_method);
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        Row w;
        row_of(r, &w);
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
        qmc_json_string(f, r->name);
        fputs(", \"input\": ", f);
        qmc_json_string(f, r->s.display);
        fputs(", \"codec\": ", f);
        qmc_json_string_or_null(f, r->codec);
        fprintf(f, ", \"width\": %d, \"height\": %d, \"resolution\": \"%dx%d\", \"scaled\": %s",
                w.width, w.height, w.width, w.height,
                app->configured && (w.width != app->ref_info.width || w.height != app->ref_info.height) ?
                "true" : "false");
        fputs(", \"bitrate\": ", f);
        qmc_json_number(f, w.kbps);
        fprintf(f, ", \"bitrate_source\": \"%s\", \"size_bytes\": %" G_GUINT64_FORMAT
                ", \"frames\": %" G_GUINT64_FORMAT ", \"duration_s\": ", w.source, r->size,
                w.frames);
        qmc_json_number(f, w.seconds);
        if (app->o.output) {
            fputs(", \"log\": ", f);
            qmc_json_string(f, r->log.dest);
        }
        if (app->gpus->len)
            fprintf(f, ", \"cuda_device\": %d", qmc_gpu_for(app, i));
        fputs(", ", f);
        qmc_json_backend(f, r->summary);
        fputs(", \"group\": ", f);
        qmc_json_string(f, r->series ? r->series : "");
        fputs(", \"gates\": [", f);
        for (guint g = 0; g < app->o.thresholds->len; g++) {
            const Threshold *t = &g_array_index(app->o.thresholds, Threshold, g);
            const double v = gate_value(r, t);
            fputs(g ? ", {\"feature\": " : "{\"feature\": ", f);
            qmc_json_string(f, t->feature);
            fprintf(f, ", \"statistic\": \"%s\", \"threshold\": %.17g, \"value\": ",
                    qmc_stat_name(t->stat), t->value);
            qmc_json_number(f, v);
            fprintf(f, ", \"passed\": %s}", v >= t->value ? "true" : "false");
        }
        fprintf(f, "], \"passed\": %s", r->failed ? "false" : "true");
        for (guint k = 0; k < feats->len; k++) {
            fputs(", ", f);
            qmc_json_string(f, feats->pdata[k]);
            fputs(": {", f);
            for (guint s = 0; s < stats->len; s++) {
                fprintf(f, "%s\"%s\": ", s ? ", " : "", qmc_stat_name(stats->pdata[s]));
                qmc_json_number(f, r->summary ? qmc_pooled(r->summary, feats->pdata[k],
                                                    stats->pdata[s]) : NAN);
            }
            fputc('}', f);
        }
        fputc('}', f);
    }
    fputs("\n  ],\n  \"failed\": [", f);
    for (guint i = 0, n = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        if (!r->failed)
            continue;
        fputs(n++ ? ", " : "", f);
        qmc_json_string(f, r->name);
    }
    fputc(']', f);
    qmc_json_end(f, app->error, code);
}

/* The features of the table and of the chart: --plot-metrics', else the
 * one that stands for each metric (qm_feature_info()'s headline: VMAF's
 * scores first, then the others in the scores' order), leaving out the
 * models' input metrics and the scores whose higher values are not better;
 * else (none is left) the first feature. */
static GPtrArray *shown_features(App *app, GPtrArray *feats)
{
    GPtrArray *a = g_ptr_array_new();
    if (app->o.plot_metrics) {
        for (char **f = app->plot_features; f && *f; f++)
            g_ptr_array_add(a, *f);
        return a;
    }
    for (int vmaf = 1; vmaf >= 0; vmaf--)
        for (guint k = 0; k < feats->len; k++) {
            QmFeatureInfo fi;
            if (qm_feature_info(feats->pdata[k], &fi) && fi.headline && !fi.model_input &&
                fi.better > 0 && (strcmp(fi.metric, "vmaf") == 0) == vmaf)
                g_ptr_array_add(a, feats->pdata[k]);
        }
    if (!a->len && feats->len)
        g_ptr_array_add(a, feats->pdata[0]);
    return a;
}

static void print_table(GPtrArray *rends, FILE *f, GPtrArray *cols)
{
    fprintf(f, "%-16s %11s %10s %7s", "rendition", "size", "kbit/s", "frames");
    for (guint c = 0; c < cols->len; c++)
        fprintf(f, " %*s", MAX(10, (int)strlen(cols->pdata[c])), (char *)cols->pdata[c]);
    fputc('\n', f);
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        Row w;
        char res[32];
        row_of(r, &w);
        g_snprintf(res, sizeof(res), "%dx%d", w.width, w.height);
        fprintf(f, "%-16s %11s %10.1f %7" G_GUINT64_FORMAT, r->name, res, w.kbps, w.frames);
        for (guint c = 0; c < cols->len; c++)
            fprintf(f, " %*.6f", MAX(10, (int)strlen(cols->pdata[c])),
                    r->summary ? qmc_pooled(r->summary, cols->pdata[c], "mean") : NAN);
        fputc('\n', f);
    }
}

/* The chart's series of every rendition (series.c). */
static void assign_series(GPtrArray *rends)
{
    QmcSeriesIn *in = g_new0(QmcSeriesIn, rends->len);
    char **names;
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        Row w;
        row_of(r, &w);
        in[i] = (QmcSeriesIn){ r->group, r->codec, w.width, w.height };
    }
    names = qmc_ladder_series(in, rends->len);
    for (guint i = 0; i < rends->len; i++)
        ((Rend *)rends->pdata[i])->series = names[i];
    g_free(names);              /* the strings now belong to the renditions */
    g_free(in);
}

/* --fail-below on every rendition: a line per gate (the passes unless
 * --quiet), then one naming the renditions that fail.  EXIT_FAIL_BELOW
 * when one does, else 0. */
static int check_gates(App *app)
{
    GPtrArray *rends = app->dists;
    GString *names = g_string_new(NULL);
    guint n = 0;
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        for (guint g = 0; g < app->o.thresholds->len; g++) {
            const Threshold *t = &g_array_index(app->o.thresholds, Threshold, g);
            if (!qmc_report_gate(app, r->name, t, gate_value(r, t)))
                r->failed = TRUE;
        }
        if (r->failed)
            g_string_append_printf(names, "%s%s", n++ ? ", " : "", r->name);
    }
    if (n)
        fprintf(stderr, "qmetric-compare: --fail-below: %u of %u renditions fail: %s\n", n,
                rends->len, names->str);
    g_string_free(names, TRUE);
    return n ? EXIT_FAIL_BELOW : 0;
}

/* A panel per shown feature; one curve per series, each point labelled
 * with its rendition's name. */
static char *rd_svg(App *app, GPtrArray *shown)
{
    GPtrArray *rends = app->dists;
    const size_t nm = shown->len;
    GPtrArray *names = g_ptr_array_new();
    GArray *curves = g_array_new(FALSE, TRUE, sizeof(QmRdCurve));
    GPtrArray *owned = g_ptr_array_new_with_free_func(g_free);
    char *svg, *sub;

    /* the series in order of first appearance */
    for (guint i = 0; i < rends->len; i++) {
        const char *s = ((Rend *)rends->pdata[i])->series;
        if (!g_ptr_array_find_with_equal_func(names, s, g_str_equal, NULL))
            g_ptr_array_add(names, (gpointer)s);
    }
    for (guint c = 0; c < names->len; c++) {
        double *rate = g_new(double, rends->len);
        double **q = g_new0(double *, MAX(nm, 1));
        const char **label = g_new(const char *, rends->len);
        size_t n = 0;
        for (size_t m = 0; m < nm; m++) {
            q[m] = g_new(double, rends->len);
            g_ptr_array_add(owned, q[m]);
        }
        for (guint i = 0; i < rends->len; i++) {
            Rend *r = rends->pdata[i];
            Row w;
            if (strcmp(r->series, names->pdata[c]))
                continue;
            row_of(r, &w);
            rate[n] = w.kbps;
            for (size_t m = 0; m < nm; m++)
                q[m][n] = qmc_pooled(r->summary, shown->pdata[m], "mean");
            label[n++] = r->name;
        }
        QmRdCurve cv = { .name = names->pdata[c], .rate = rate,
                         .quality = (const double *const *)q, .label = label, .n = n };
        g_array_append_val(curves, cv);
        g_ptr_array_add(owned, rate);
        g_ptr_array_add(owned, q);
        g_ptr_array_add(owned, label);
    }
    sub = g_strdup_printf("%u renditions of %s, mean over frames; bitrate = file size x 8 / "
                          "duration", rends->len, app->side[REF].display);
    {
        const QmRdOptions ro = { .title = "Rate-quality", .subtitle = sub,
                                 .hull = app->o.hull };
        svg = qm_rd_svg_string((QmRdCurve *)curves->data, curves->len,
                               (const char *const *)shown->pdata, nm, &ro);
    }
    g_free(sub);
    g_ptr_array_free(owned, TRUE);
    g_array_free(curves, TRUE);
    g_ptr_array_free(names, TRUE);
    return svg;
}

static gboolean write_to(App *app, Output *out, const char *text)
{
    FILE *f = fopen(out->tmp, "w");
    gboolean ok = f && fputs(text, f) >= 0;
    if (f && fclose(f) != 0)
        ok = FALSE;
    if (!ok)
        qmc_fail(app, EXIT_USAGE, "%s %s: cannot be written", out->what, out->dest);
    return ok;
}

/* A report made by fn, written to out's temporary file. */
static void write_report(App *app, Output *out, Writer fn, GPtrArray *feats, GPtrArray *stats,
                         int code)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fn(app, f, feats, stats, code);
    fclose(f);
    write_to(app, out, buf);
    free(buf);
}

/* After the run: the table, the gates, the reports; every output reaches
 * its destination, or none does when the run failed.  The exit status. */
int qmc_ladder_report(App *app, Output *csv, Output *json, Output *rd)
{
    const Options *o = &app->o;
    GPtrArray *rends = app->dists;
    GPtrArray *feats = features_of(rends), *stats = stats_of(rends, feats);
    GPtrArray *shown = shown_features(app, feats);
    gboolean ok = !app->error;
    FILE *table = o->quiet ? NULL : o->summary == SUMMARY_JSON ||
                  qmc_output_is_stdout(csv) || qmc_output_is_stdout(json) ||
                  qmc_output_is_stdout(rd) ? stderr : stdout;
    Output *outs[] = { csv, json, rd };
    int gates = 0, code;
    if (ok) {
        assign_series(rends);
        if (table)
            print_table(rends, table, shown);
        gates = check_gates(app);
    }
    if (ok && csv->tmp)
        write_report(app, csv, write_csv, feats, stats, gates);
    if (ok && json->tmp)
        write_report(app, json, write_json, feats, stats, gates);
    if (ok && rd->tmp) {
        char *svg = rd_svg(app, shown);
        write_to(app, rd, svg);
        g_free(svg);
    }
    ok = !app->error;
    for (guint i = 0; i < rends->len + G_N_ELEMENTS(outs); i++) {
        Output *out = i < rends->len ? &((Rend *)rends->pdata[i])->log :
                      outs[i - rends->len];
        char *err = NULL;
        if (!out->tmp)
            continue;
        if (!ok)
            qmc_output_discard(out);
        else if (!qmc_output_commit(out, &err)) {
            qmc_fail(app, EXIT_USAGE, "%s", err);
            g_free(err);
        }
    }
    code = app->error ? app->exit_code : app->interrupted ? EXIT_INTERRUPTED : gates;
    if (o->summary == SUMMARY_JSON && ok)
        write_json(app, stdout, feats, stats, code);
    g_ptr_array_free(shown, TRUE);
    g_ptr_array_free(stats, TRUE);
    g_ptr_array_free(feats, TRUE);
    return code;
}
