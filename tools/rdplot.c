/* gst-qmetric: rate-quality chart (see rdplot.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qmplot.h"
#include "rdlabel.h"
#include "rdplot.h"

#define FONT "DejaVu Sans, Helvetica, Arial, sans-serif"
#define PANEL_W 460
#define PANEL_H 380
#define MARGIN_L 70            /* y tick labels and the rotated axis title */
#define PANEL_GAP 76
#define MARGIN_R 24
#define MARGIN_T 70
#define MARGIN_B 56
#define LEGEND_GAP 24
#define LEGEND_ROW 20
#define LABEL_PX 10.0          /* point labels' font size */
#define MARKER_R 3.5
#define HULL_COLOUR "#222222"

typedef struct Panel {
    double x0, y0, w, h;       /* plot area, pixels */
    double lr0, lr1;           /* log10 rate range */
    double q0, q1, qstep;      /* quality range and tick step */
} Panel;

static double px(const Panel *p, double rate)
{
    return p->x0 + (log10(rate) - p->lr0) / (p->lr1 - p->lr0) * p->w;
}

static double py(const Panel *p, double q)
{
    return p->y0 + p->h - (q - p->q0) / (p->q1 - p->q0) * p->h;
}

static gboolean usable(double rate, double q)
{
    return isfinite(q) && isfinite(rate) && rate > 0;
}

/* ------------------------------------------------------------------ hull */

typedef struct {
    const double *rate, *q;
} Points;

/* Indices by rate, the better quality first at equal rates. */
static int by_rate_then_quality(gconstpointer a, gconstpointer b, gpointer data)
{
    const Points *pt = data;
    const size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (pt->rate[i] != pt->rate[j])
        return pt->rate[i] < pt->rate[j] ? -1 : 1;
    if (pt->q[i] != pt->q[j])
        return pt->q[i] > pt->q[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

static void sort_points(size_t *o, size_t n, const double *rate, const double *q)
{
    Points pt = { rate, q };
    g_qsort_with_data(o, (gint)n, sizeof(*o), by_rate_then_quality, &pt);
}

size_t qm_rd_upper_hull(const double *rate, const double *q, size_t n, size_t *idx)
{
    size_t *o = g_new(size_t, n ? n : 1), m = 0, h = 0;
    for (size_t i = 0; i < n; i++)
        if (usable(rate[i], q[i]))
            o[m++] = i;
    sort_points(o, m, rate, q);
    /* Andrew's monotone chain, upper half: keep only right turns */
    for (size_t k = 0; k < m; k++) {
        const size_t c = o[k];
        if (h && rate[idx[h - 1]] == rate[c])
            continue;                       /* the better point at this rate is in */
        while (h >= 2) {
            const size_t a = idx[h - 2], b = idx[h - 1];
            const double cross = (rate[b] - rate[a]) * (q[c] - q[a]) -
                                 (q[b] - q[a]) * (rate[c] - rate[a]);
            if (cross < 0)
                break;
            h--;
        }
        idx[h++] = c;
    }
    /* the rising part: up to the best quality */
    for (size_t k = 1; k < h; k++)
        if (q[idx[k]] <= q[idx[k - 1]]) {
            h = k;
            break;
        }
    g_free(o);
    return h;
}

/* ------------------------------------------------------------------ axes */

static void fmt_rate(char *buf, size_t len, double r)
{
    /* plain kbit/s, as the axis title says: 500, 1000, 20000 */
    g_snprintf(buf, len, "%.10g", r);
}

static void rate_tick(GString *s, const Panel *p, double r)
{
    const double x = px(p, r);
    char buf[32];
    fmt_rate(buf, sizeof(buf), r);
    g_string_append_printf(s, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
                           "stroke='#e4e4e4'/>\n", x, p->y0, x, p->y0 + p->h);
    g_string_append_printf(s, "<text x='%.1f' y='%.1f' text-anchor='middle' "
                           "font-size='11'>%s</text>\n", x, p->y0 + p->h + 16, buf);
}

/* Ticks of the logarithmic rate axis: the coarsest of these mantissa sets
 * that gives at least four ticks in the range (powers of ten alone when
 * the range spans several decades); a range too narrow for any of them
 * (within one octave or so) gets evenly spaced round values instead. */
static void rate_ticks(GString *s, const Panel *p)
{
    static const double sets[][9] = {
        { 1 }, { 1, 2, 5 }, { 1, 1.5, 2, 3, 5, 7 }, { 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 },
    };
    static const int n_set[] = { 1, 3, 6, 9 };
    const int e0 = (int)floor(p->lr0), e1 = (int)ceil(p->lr1);
    for (int k = 0; k < (int)G_N_ELEMENTS(n_set); k++) {
        int count = 0;
        for (int e = e0; e <= e1; e++)
            for (int j = 0; j < n_set[k]; j++) {
                const double lr = log10(sets[k][j]) + e;
                count += lr >= p->lr0 - 1e-9 && lr <= p->lr1 + 1e-9;
            }
        if (count < 4)
            continue;
        for (int e = e0; e <= e1; e++)
            for (int j = 0; j < n_set[k]; j++) {
                const double r = sets[k][j] * pow(10, e), lr = log10(r);
                if (lr >= p->lr0 - 1e-9 && lr <= p->lr1 + 1e-9)
                    rate_tick(s, p, r);
            }
        return;
    }
    double lo = pow(10, p->lr0), hi = pow(10, p->lr1), step;
    qm_plot_nice_scale(&lo, &hi, &step, 8);
    for (double r = lo; r <= hi + step * 1e-6; r += step)
        if (r > 0 && log10(r) >= p->lr0 - 1e-9 && log10(r) <= p->lr1 + 1e-9)
            rate_tick(s, p, r);
}

/* "psnr_y (dB)": the metric and the unit of its descriptor's scale. */
static void metric_title(GString *s, const char *metric)
{
    QmPlotFeatureInfo fi;
    qm_plot_feature_info(metric, &fi);
    qm_plot_xml_text(s, metric);
    if (fi.unit) {
        g_string_append(s, " (");
        qm_plot_xml_text(s, fi.unit);
        g_string_append(s, ")");
    }
}

/* ---------------------------------------------------------------- series */

/* The points of a curve that are drawn, in order of rate. */
static size_t drawn_points(const QmRdCurve *cv, size_t m, size_t *o)
{
    size_t k = 0;
    for (size_t i = 0; i < cv->n; i++)
        if (usable(cv->rate[i], cv->quality[m][i]))
            o[k++] = i;
    sort_points(o, k, cv->rate, cv->quality[m]);
    return k;
}

static char *point_label(const QmRdCurve *cv, size_t i)
{
    if (cv->label && cv->label[i] && *cv->label[i])
        return g_strdup(cv->label[i]);
    return g_strdup_printf("%.0f kbit/s", cv->rate[i]);
}

static void add_seg(GArray *segs, double x0, double y0, double x1, double y1)
{
    const double s[4] = { x0, y0, x1, y1 };
    g_array_append_vals(segs, s, 4);
}

static void draw_panel(GString *s, const Panel *p, const QmRdCurve *curves, size_t n_curves,
                       size_t m, const char *metric, gboolean hull)
{
    GArray *segs = g_array_new(FALSE, FALSE, sizeof(double));
    GArray *labels = g_array_new(FALSE, FALSE, sizeof(QmRdLabel));
    GPtrArray *texts = g_ptr_array_new_with_free_func(g_free);
    GArray *owner = g_array_new(FALSE, FALSE, sizeof(size_t)); /* curve of each label */
    GString *paths = g_string_new(NULL), *dots = g_string_new(NULL);
    GString *front = g_string_new(NULL); /* the hull, over the curves */

    g_string_append_printf(s, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
                           "fill='none' stroke='#999'/>\n", p->x0, p->y0, p->w, p->h);
    for (double q = p->q0; q <= p->q1 + p->qstep * 1e-6; q += p->qstep) {
        char buf[32];
        qm_plot_fmt_tick(buf, sizeof(buf), q, p->qstep);
        g_string_append_printf(s, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
                               "stroke='#e4e4e4'/>\n", p->x0, py(p, q), p->x0 + p->w, py(p, q));
        g_string_append_printf(s, "<text x='%.1f' y='%.1f' text-anchor='end' "
                               "font-size='11'>%s</text>\n", p->x0 - 6, py(p, q) + 4, buf);
    }
    rate_ticks(s, p);
    g_string_append_printf(s, "<text x='%.1f' y='%.1f' text-anchor='middle' "
                           "font-size='12'>bitrate (kbit/s, log scale)</text>\n",
                           p->x0 + p->w / 2, p->y0 + p->h + 38);
    g_string_append_printf(s, "<text transform='translate(%.1f %.1f) rotate(-90)' "
                           "text-anchor='middle' font-size='12'>", p->x0 - 48,
                           p->y0 + p->h / 2);
    metric_title(s, metric);
    g_string_append(s, "</text>\n");

    if (hull) {
        size_t total = 0, k = 0;
        for (size_t c = 0; c < n_curves; c++)
            total += curves[c].n;
        double *r = g_new(double, total ? total : 1), *q = g_new(double, total ? total : 1);
        size_t *idx = g_new(size_t, total ? total : 1);
        for (size_t c = 0; c < n_curves; c++)
            for (size_t i = 0; i < curves[c].n; i++, k++) {
                r[k] = curves[c].rate[i];
                q[k] = curves[c].quality[m][i];
            }
        const size_t h = qm_rd_upper_hull(r, q, total, idx);
        g_string_append_printf(front, "<path id='hull-%zu' d='", m);
        for (size_t j = 0; j < h; j++) {
            g_string_append_printf(front, "%s%.1f,%.1f", j ? " L" : "M", px(p, r[idx[j]]),
                                   py(p, q[idx[j]]));
            if (j)
                add_seg(segs, px(p, r[idx[j - 1]]), py(p, q[idx[j - 1]]), px(p, r[idx[j]]),
                        py(p, q[idx[j]]));
        }
        g_string_append_printf(front, "' fill='none' stroke='%s' stroke-width='1.5' "
                               "stroke-dasharray='6 4'/>\n", HULL_COLOUR);
        g_free(r);
        g_free(q);
        g_free(idx);
    }

    for (size_t c = 0; c < n_curves; c++) {
        const QmRdCurve *cv = &curves[c];
        const char *col = qm_plot_colour((unsigned)c);
        size_t *o = g_new(size_t, cv->n ? cv->n : 1);
        const size_t k = drawn_points(cv, m, o);
        g_string_append(paths, "<path d='");
        for (size_t j = 0; j < k; j++) {
            const double x = px(p, cv->rate[o[j]]), y = py(p, cv->quality[m][o[j]]);
            g_string_append_printf(paths, "%s%.1f,%.1f", j ? " L" : "M", x, y);
            if (j)
                add_seg(segs, px(p, cv->rate[o[j - 1]]), py(p, cv->quality[m][o[j - 1]]), x, y);
        }
        g_string_append_printf(paths, "' fill='none' stroke='%s' stroke-width='2'/>\n", col);
        for (size_t j = 0; j < k; j++) {
            const size_t i = o[j];
            const double x = px(p, cv->rate[i]), y = py(p, cv->quality[m][i]);
            char *text = point_label(cv, i);
            g_string_append_printf(dots, "<circle cx='%.1f' cy='%.1f' r='%.1f' fill='%s'>"
                                   "<title>", x, y, MARKER_R, col);
            qm_plot_xml_text(dots, cv->name);
            g_string_append(dots, ", ");
            qm_plot_xml_text(dots, text);
            g_string_append_printf(dots, ": %.0f kbit/s, %s %.3f</title></circle>\n",
                                   cv->rate[i], metric, cv->quality[m][i]);
            QmRdLabel l = { .x = x, .y = y, .w = qm_rd_text_width(text, LABEL_PX),
                            .h = LABEL_PX + 2 };
            g_array_append_val(labels, l);
            g_ptr_array_add(texts, text);
            g_array_append_val(owner, c);
        }
        g_free(o);
    }
    g_string_append(s, paths->str);
    g_string_append(s, front->str);
    g_string_append(s, dots->str);

    const QmRdBox area = { p->x0 + 1, p->y0 + 1, p->x0 + p->w - 1, p->y0 + p->h - 1 };
    qm_rd_place_labels((QmRdLabel *)labels->data, labels->len, &area,
                       (const double *)segs->data, segs->len / 4, MARKER_R);
    g_string_append(s, "<g class='labels' font-size='10'>\n");
    for (guint i = 0; i < labels->len; i++) {
        const QmRdLabel *l = &g_array_index(labels, QmRdLabel, i);
        const char *col = qm_plot_colour((unsigned)g_array_index(owner, size_t, i));
        if (l->leader) {
            /* from the marker's edge to the nearest edge of the text */
            const double ty = l->box.y1 < l->y ? l->box.y1 : l->box.y0;
            const double tx = fmin(fmax(l->x, l->box.x0), l->box.x1);
            const double d = hypot(tx - l->x, ty - l->y);
            g_string_append_printf(s, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
                                   "stroke='%s' stroke-width='0.8'/>\n",
                                   l->x + (tx - l->x) * MARKER_R / d,
                                   l->y + (ty - l->y) * MARKER_R / d, tx, ty, col);
        }
        /* the baseline sits 2.5 px above the box's bottom (DejaVu's descent) */
        g_string_append_printf(s, "<text x='%.1f' y='%.1f' fill='%s'>", l->box.x0,
                               l->box.y1 - 3, col);
        qm_plot_xml_text(s, texts->pdata[i]);
        g_string_append(s, "</text>\n");
    }
    g_string_append(s, "</g>\n");

    g_string_free(paths, TRUE);
    g_string_free(front, TRUE);
    g_string_free(dots, TRUE);
    g_array_free(owner, TRUE);
    g_ptr_array_free(texts, TRUE);
    g_array_free(labels, TRUE);
    g_array_free(segs, TRUE);
}

/* ----------------------------------------------------------------- chart */

char *qm_rd_svg_string(const QmRdCurve *curves, size_t n_curves,
                       const char *const *metrics, size_t n_metrics,
                       const QmRdOptions *opts)
{
    const QmRdOptions none = { 0 };
    GString *s = g_string_new(NULL);
    if (!opts)
        opts = &none;

    /* the legend's width: its longest entry */
    double legend_w = qm_rd_text_width(opts->hull ? "upper convex hull" : "", 12);
    for (size_t c = 0; c < n_curves; c++)
        legend_w = fmax(legend_w, qm_rd_text_width(curves[c].name, 12));
    legend_w += 34;
    const size_t rows = n_curves + (opts->hull ? 1 : 0);
    const double panels_w = MARGIN_L + n_metrics * PANEL_W + (n_metrics ? n_metrics - 1 : 0) *
                            PANEL_GAP;
    const double width = panels_w + LEGEND_GAP + legend_w + MARGIN_R;
    const double height = fmax(MARGIN_T + PANEL_H + MARGIN_B,
                               MARGIN_T + 10 + rows * LEGEND_ROW + 10);

    /* one rate range for every panel, so that the panels line up */
    double rmin = INFINITY, rmax = -INFINITY;
    for (size_t c = 0; c < n_curves; c++)
        for (size_t i = 0; i < curves[c].n; i++)
            if (curves[c].rate[i] > 0 && isfinite(curves[c].rate[i])) {
                rmin = fmin(rmin, curves[c].rate[i]);
                rmax = fmax(rmax, curves[c].rate[i]);
            }
    if (!(rmin < rmax)) {
        rmin = isfinite(rmin) ? rmin / 2 : 100;
        rmax = isfinite(rmax) ? rmax * 2 : 1000;
    }
    /* room for the labels of the end points */
    const double pad = 0.06 * (log10(rmax) - log10(rmin));

    g_string_append_printf(s, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' "
                           "height='%.0f' viewBox='0 0 %.0f %.0f' font-family='%s'>\n",
                           width, height, width, height, FONT);
    g_string_append_printf(s, "<rect width='%.0f' height='%.0f' fill='white'/>\n", width, height);
    g_string_append(s, "<text x='20' y='28' font-size='17' font-weight='bold'>");
    qm_plot_xml_text(s, opts->title ? opts->title : "Rate-quality");
    g_string_append(s, "</text>\n");
    if (opts->subtitle) {
        g_string_append(s, "<text x='20' y='48' font-size='12' fill='#555'>");
        qm_plot_xml_text(s, opts->subtitle);
        g_string_append(s, "</text>\n");
    }

    for (size_t m = 0; m < n_metrics; m++) {
        Panel p = { .x0 = MARGIN_L + m * (PANEL_W + PANEL_GAP), .y0 = MARGIN_T,
                    .w = PANEL_W, .h = PANEL_H,
                    .lr0 = log10(rmin) - pad, .lr1 = log10(rmax) + pad };
        double qmin = INFINITY, qmax = -INFINITY;
        for (size_t c = 0; c < n_curves; c++)
            for (size_t i = 0; i < curves[c].n; i++) {
                const double q = curves[c].quality[m][i];
                if (isfinite(q)) {
                    qmin = fmin(qmin, q);
                    qmax = fmax(qmax, q);
                }
            }
        if (!(qmin < qmax)) {
            qmin = isfinite(qmin) ? qmin - 1 : 0;
            qmax = isfinite(qmax) ? qmax + 1 : 1;
        }
        /* a label's height of room above the best point and below the
         * worst, inside the metric's own range (VMAF stops at 100) */
        const double qpad = (qmax - qmin) * (LABEL_PX + 8) / PANEL_H;
        QmPlotFeatureInfo fi;
        qm_plot_feature_info(metrics[m], &fi);
        p.q0 = qmin - qpad;
        p.q1 = qmax + qpad;
        if (isfinite(fi.lo) && p.q0 < fi.lo && qmin >= fi.lo)
            p.q0 = fi.lo;
        if (isfinite(fi.hi) && p.q1 > fi.hi && qmax <= fi.hi)
            p.q1 = fi.hi;
        qm_plot_nice_scale(&p.q0, &p.q1, &p.qstep, 7);
        g_string_append_printf(s, "<g id='panel-%zu'>\n", m);
        draw_panel(s, &p, curves, n_curves, m, metrics[m], opts->hull);
        g_string_append(s, "</g>\n");
    }

    /* legend, right of the panels: each series, then the hull */
    const double lx = panels_w + LEGEND_GAP;
    g_string_append(s, "<g id='legend' font-size='12'>\n");
    for (size_t c = 0; c < rows; c++) {
        const double ly = MARGIN_T + 10 + c * LEGEND_ROW;
        const gboolean is_hull = c == n_curves;
        const char *col = is_hull ? HULL_COLOUR : qm_plot_colour((unsigned)c);
        g_string_append_printf(s, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
                               "stroke='%s' stroke-width='%s'%s/>\n", lx, ly, lx + 22, ly,
                               col, is_hull ? "1.5" : "2",
                               is_hull ? " stroke-dasharray='6 4'" : "");
        if (!is_hull)
            g_string_append_printf(s, "<circle cx='%.1f' cy='%.1f' r='%.1f' fill='%s'/>\n",
                                   lx + 11, ly, MARKER_R, col);
        g_string_append_printf(s, "<text x='%.1f' y='%.1f'>", lx + 28, ly + 4);
        qm_plot_xml_text(s, is_hull ? "upper convex hull" : curves[c].name);
        g_string_append(s, "</text>\n");
    }
    g_string_append(s, "</g>\n</svg>\n");
    return g_string_free(s, FALSE);
}
