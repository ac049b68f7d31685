/* qmetric-bd: Bjøntegaard deltas between encoding ladders, and their
 * rate-quality chart.
 *
 *   qmetric-bd [--metric vmaf,psnr_y] [--interp pchip|polynomial] [--json]
 *              [--plot rd.svg] [--title T] ANCHOR TEST [TEST...]
 *
 * A ladder is a CSV file (a header row naming the columns, one row per
 * rendition) or a JSON array of objects, with a `bitrate` column in kbit/s
 * and one column per metric (a JSON value that is an object gives its
 * "mean").  `NAME=FILE` names a ladder; otherwise the file's base name
 * does.  Each TEST ladder is compared with the ANCHOR: BD-rate (percent
 * rate change at equal quality; negative = fewer bits) and BD-quality (mean
 * quality change at equal rate), per metric, with the interpolation named
 * (tools/bd.h).  Exit status 2 for a usage or input error, 1 when a delta
 * cannot be computed (curves that do not overlap, too few points).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "bd.h"
#include "json.h"
#include "qmplot.h"
#include "rdplot.h"
#include "samefile.h"

#define MAX_METRICS 8

typedef struct Ladder {
    char *name;
    GArray *rate;                     /* double */
    GArray *q[MAX_METRICS];           /* double per metric */
    GPtrArray *label;                 /* char*, per point */
} Ladder;

static G_GNUC_NORETURN void die(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("qmetric-bd: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(status);
}

static gboolean parse_number(const char *s, double *v)
{
    char *end;
    while (*s == ' ' || *s == '"')
        s++;
    *v = g_ascii_strtod(s, &end);
    while (*end == ' ' || *end == '"' || *end == '\r')
        end++;
    return end != s && !*end;
}

static char *unquote(const char *s)
{
    char *t = g_strstrip(g_strdup(s));
    size_t n = strlen(t);
    if (n >= 2 && t[0] == '"' && t[n - 1] == '"') {
        memmove(t, t + 1, n - 2);
        t[n - 2] = 0;
    }
    return t;
}

static void add_point(Ladder *l, const char *file, unsigned row, double rate,
                      const double *q, unsigned nm, const char *label)
{
    if (!(rate > 0) || !isfinite(rate))
        die(2, "%s: row %u: the bitrate must be a positive number", file, row);
    g_array_append_val(l->rate, rate);
    for (unsigned m = 0; m < nm; m++)
        g_array_append_val(l->q[m], q[m]);
    g_ptr_array_add(l->label, g_strdup(label));
}

static void load_csv(Ladder *l, const char *file, const char *text,
                     char **metrics, unsigned nm)
{
    char **lines = g_strsplit(text, "\n", -1);
    char **head = NULL;
    int rate_col = -1, label_col = -1, col[MAX_METRICS];
    unsigned row = 0;
    for (char **ln = lines; *ln; ln++) {
        if (!*g_strstrip(*ln) || **ln == '#')
            continue;
        char **cells = g_strsplit(*ln, ",", -1);
        const int nc = (int)g_strv_length(cells);
        if (!head) {
            head = cells;
            for (int c = 0; c < nc; c++) {
                char *h = unquote(cells[c]);
                if (!strcmp(h, "bitrate"))
                    rate_col = c;
                else if (!strcmp(h, "name") || !strcmp(h, "resolution"))
                    label_col = label_col < 0 ? c : label_col;
                g_free(cells[c]);
                cells[c] = h;
            }
            if (rate_col < 0)
                die(2, "%s: no 'bitrate' column (kbit/s)", file);
            for (unsigned m = 0; m < nm; m++) {
                col[m] = -1;
                for (int c = 0; c < nc; c++)
                    if (!strcmp(cells[c], metrics[m]) ||
                        (g_str_has_prefix(cells[c], metrics[m]) &&
                         !strcmp(cells[c] + strlen(metrics[m]), ".mean")))
                        col[m] = c;
                if (col[m] < 0)
                    die(2, "%s: no column for the metric '%s'", file, metrics[m]);
            }
            continue;
        }
        row++;
        double rate, q[MAX_METRICS];
        if (rate_col >= nc || !parse_number(cells[rate_col], &rate))
            die(2, "%s: row %u: the bitrate is not a number", file, row);
        for (unsigned m = 0; m < nm; m++)
            if (col[m] >= nc || !parse_number(cells[col[m]], &q[m]))
                die(2, "%s: row %u: '%s' is not a number", file, row, metrics[m]);
        char *label = label_col >= 0 && label_col < nc ? unquote(cells[label_col]) : NULL;
        add_point(l, file, row, rate, q, nm, label);
        g_free(label);
        g_strfreev(cells);
    }
    g_strfreev(head);
    g_strfreev(lines);
}

static gboolean json_value(const QmJson *o, const char *key, double *v)
{
    const QmJson *x = qm_json_get(o, key);
    if (x && x->type == QM_JSON_OBJECT)
        x = qm_json_get(x, "mean");
    if (!x || x->type != QM_JSON_NUMBER)
        return FALSE;
    *v = x->num;
    return TRUE;
}

static void load_json(Ladder *l, const char *file, const char *text, size_t len,
                      char **metrics, unsigned nm)
{
    char err[256];
    QmJson *j = qm_json_parse(text, len, err, sizeof(err));
    if (!j)
        die(2, "%s: %s", file, err);
    const QmJson *rows = j->type == QM_JSON_ARRAY ? j : qm_json_get(j, "renditions");
    if (!rows || rows->type != QM_JSON_ARRAY)
        die(2, "%s: expected an array of renditions", file);
    for (size_t r = 0; r < rows->n; r++) {
        double rate, q[MAX_METRICS];
        if (!json_value(rows->items[r], "bitrate", &rate))
            die(2, "%s: rendition %zu has no numeric 'bitrate'", file, r + 1);
        for (unsigned m = 0; m < nm; m++)
            if (!json_value(rows->items[r], metrics[m], &q[m]))
                die(2, "%s: rendition %zu has no numeric '%s'", file, r + 1, metrics[m]);
        const char *label = qm_json_str(rows->items[r], "name");
        add_point(l, file, (unsigned)r + 1, rate, q, nm, label ? label : qm_json_str(rows->items[r], "resolution"));
    }
    qm_json_free(j);
}

static void load_ladder(Ladder *l, const char *arg, char **metrics, unsigned nm)
{
    const char *eq = strchr(arg, '=');
    const char *file = eq ? eq + 1 : arg;
    char *text;
    gsize len;
    GError *e = NULL;
    if (!g_file_get_contents(file, &text, &len, &e))
        die(2, "%s", e->message);
    if (eq) {
        l->name = g_strndup(arg, (gsize)(eq - arg));
    } else {
        char *b = g_path_get_basename(file), *dot = strrchr(b, '.');
        if (dot && dot != b)
            *dot = 0;
        l->name = b;
    }
    l->rate = g_array_new(FALSE, FALSE, sizeof(double));
    for (unsigned m = 0; m < nm; m++)
        l->q[m] = g_array_new(FALSE, FALSE, sizeof(double));
    l->label = g_ptr_array_new_with_free_func(g_free);
    const char *p = text;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    if (*p == '[' || *p == '{')
        load_json(l, file, text, len, metrics, nm);
    else
        load_csv(l, file, text, metrics, nm);
    if (l->rate->len == 0)
        die(2, "%s: no renditions", file);
    g_free(text);
}

int main(int argc, char **argv)
{
    char *metric_opt = NULL, *interp_opt = NULL, *plot = NULL, *title = NULL;
    gboolean json = FALSE;
    GOptionEntry entries[] = {
        { "metric", 'm', 0, G_OPTION_ARG_STRING, &metric_opt,
          "metrics to compare, comma-separated (default: vmaf)", "LIST" },
        { "interp", 0, 0, G_OPTION_ARG_STRING, &interp_opt,
          "pchip (default) or polynomial (the original cubic fit)", "NAME" },
        { "json", 0, 0, G_OPTION_ARG_NONE, &json, "print JSON instead of a table", NULL },
        { "plot", 0, 0, G_OPTION_ARG_FILENAME, &plot, "write the rate-quality chart (SVG)", "FILE" },
        { "title", 0, 0, G_OPTION_ARG_STRING, &title, "the chart's title", "TEXT" },
        { NULL },
    };
    GOptionContext *ctx = g_option_context_new("ANCHOR TEST [TEST...]");
    g_option_context_set_summary(ctx, "Bjøntegaard delta rate and quality between encoding "
                                 "ladders (CSV or JSON with a bitrate column in kbit/s).");
    g_option_context_add_main_entries(ctx, entries, NULL);
    GError *e = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &e))
        die(2, "%s", e->message);
    if (argc < 3)
        die(2, "give an anchor ladder and at least one test ladder (--help)");
    QmBdInterp interp = QM_BD_PCHIP;
    if (interp_opt && !strcmp(interp_opt, "polynomial"))
        interp = QM_BD_POLY;
    else if (interp_opt && strcmp(interp_opt, "pchip"))
        die(2, "--interp: '%s' is not pchip or polynomial", interp_opt);
    char **metrics = g_strsplit(metric_opt ? metric_opt : "vmaf", ",", -1);
    const unsigned nm = g_strv_length(metrics);
    if (nm == 0 || nm > MAX_METRICS)
        die(2, "--metric: give 1 to %d metrics", MAX_METRICS);
    for (unsigned m = 0; m < nm; m++)
        if (!*metrics[m])
            die(2, "--metric: an empty metric name");

    const int nl = argc - 1;
    if (plot) {
        /* before anything is written: the chart must not replace a ladder */
        const char **files = g_new0(const char *, nl);
        for (int i = 0; i < nl; i++) {
            const char *eq = strchr(argv[i + 1], '=');
            files[i] = eq ? eq + 1 : argv[i + 1];
        }
        const char *same = qm_output_is_input(plot, files, (size_t)nl);
        if (same)
            die(2, "--plot %s is the ladder %s (the same file): it would be overwritten",
                plot, same);
        g_free(files);
    }
    Ladder *lad = g_new0(Ladder, nl);
    for (int i = 0; i < nl; i++)
        load_ladder(&lad[i], argv[i + 1], metrics, nm);

    int status = 0;
    GString *out = g_string_new(NULL), *sub = g_string_new(NULL);
    if (json)
        g_string_append_printf(out, "{\"interpolation\": \"%s\", \"anchor\": \"%s\", \"tests\": [",
                               qm_bd_interp_name(interp), lad[0].name);
    else
        g_string_append_printf(out, "Bjøntegaard deltas against '%s' (%s interpolation, "
                               "log10 rate)\n%-20s %-12s %12s %12s\n", lad[0].name,
                               qm_bd_interp_name(interp), "ladder", "metric", "BD-rate %",
                               "BD-quality");
    for (int i = 1; i < nl; i++) {
        if (json)
            g_string_append_printf(out, "%s\n {\"name\": \"%s\", \"metrics\": {", i > 1 ? "," : "",
                                   lad[i].name);
        for (unsigned m = 0; m < nm; m++) {
            double rate = NAN, dq = NAN;
            const char *why_r = NULL, *why_q = NULL;
            const Ladder *a = &lad[0], *t = &lad[i];
            if (qm_bd_rate((double *)a->rate->data, (double *)a->q[m]->data, a->rate->len,
                           (double *)t->rate->data, (double *)t->q[m]->data, t->rate->len,
                           interp, &rate, &why_r) < 0 ||
                qm_bd_quality((double *)a->rate->data, (double *)a->q[m]->data, a->rate->len,
                              (double *)t->rate->data, (double *)t->q[m]->data, t->rate->len,
                              interp, &dq, &why_q) < 0) {
                fprintf(stderr, "qmetric-bd: %s against %s, %s: %s\n", t->name, a->name,
                        metrics[m], why_r ? why_r : why_q);
                status = 1;
            }
            if (json) {
                g_string_append_printf(out, "%s\"%s\": {\"bd_rate_percent\": ", m ? ", " : "", metrics[m]);
                if (isfinite(rate)) g_string_append_printf(out, "%.10g", rate);
                else g_string_append(out, "null");
                g_string_append(out, ", \"bd_quality\": ");
                if (isfinite(dq)) g_string_append_printf(out, "%.10g}", dq);
                else g_string_append(out, "null}");
            } else {
                g_string_append_printf(out, "%-20s %-12s %12.3f %12.4f\n", t->name, metrics[m], rate, dq);
            }
            if (m == 0 && isfinite(rate))
                g_string_append_printf(sub, "%s%s: BD-rate %+.2f%%, BD-%s %+.3f", sub->len ? "; " : "",
                                       t->name, rate, metrics[0], dq);
        }
        if (json)
            g_string_append(out, "}}");
    }
    if (json)
        g_string_append(out, "\n]}\n");
    fputs(out->str, stdout);

    if (plot) {
        QmRdCurve *cv = g_new0(QmRdCurve, nl);
        const double **qs = g_new0(const double *, (size_t)nl * nm);
        for (int i = 0; i < nl; i++) {
            for (unsigned m = 0; m < nm; m++)
                qs[(size_t)i * nm + m] = (double *)lad[i].q[m]->data;
            cv[i] = (QmRdCurve){ .name = lad[i].name, .rate = (double *)lad[i].rate->data,
                                 .quality = &qs[(size_t)i * nm],
                                 .label = (const char *const *)lad[i].label->pdata,
                                 .n = lad[i].rate->len };
        }
        g_string_prepend(sub, nl > 1 ? "against " : "");
        if (nl > 1) {
            g_string_insert(sub, 8, lad[0].name);
            g_string_insert(sub, 8 + strlen(lad[0].name), " (");
            g_string_append_printf(sub, "; %s)", qm_bd_interp_name(interp));
        }
        char *svg = qm_rd_svg_string(cv, (size_t)nl, (const char *const *)metrics, nm,
                                     title ? title : "Rate-quality", sub->str);
        if (!g_file_set_contents(plot, svg, -1, &e))
            die(2, "%s", e->message);
        g_free(svg);
        g_free(qs);
        g_free(cv);
    }
    g_string_free(out, TRUE);
    g_string_free(sub, TRUE);
    return status;
}
