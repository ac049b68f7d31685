/* gst-qmetric: an SVG chart of per-frame scores (see qmplot.h). */
#include "qmplot.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qm.h"

/* A qualitative palette that stays apart on white and for common colour
 * vision deficiencies (Tableau 10 order).  Red is kept for worst frames. */
static const char *const palette[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b",
    "#17becf", "#e377c2", "#7f7f7f", "#bcbd22",
};
#define N_COLOURS (sizeof(palette) / sizeof(palette[0]))

const char *qm_plot_colour(unsigned i)
{
    return palette[i % N_COLOURS];
}
#define WORST_COLOUR "#d62728"
#define FONT "DejaVu Sans, Helvetica, Arial, sans-serif"

/* Layout, in pixels. */
#define MARGIN_L 84     /* y tick labels and the rotated axis title */
#define MARGIN_R 28
#define PANEL_GAP 26
#define LEGEND_ROW 20
#define CHAR_W 7.0      /* average advance of a 12 px DejaVu Sans glyph */

void qm_plot_feature_info(const char *name, QmPlotFeatureInfo *info)
{
    QmFeatureInfo fi;
    memset(info, 0, sizeof(*info));
    if (!qm_feature_info(name, &fi)) {
        g_snprintf(info->group, sizeof(info->group), "=%s", name);
        info->name = name;
        info->better = 1;
        info->lo = info->hi = NAN;
        return;
    }
    g_snprintf(info->group, sizeof(info->group), "%s|%d|%g|%g", fi.unit, fi.better, fi.lo,
               fi.hi);
    info->name = fi.display;
    info->unit = fi.unit;
    info->metric = fi.metric;
    info->better = fi.better;
    info->lo = fi.lo;
    info->hi = fi.hi;
}

void qm_plot_xml_text(GString *s, const char *t)
{
    for (; t && *t; t++) {
        switch (*t) {
        case '&': g_string_append(s, "&amp;"); break;
        case '<': g_string_append(s, "&lt;"); break;
        case '>': g_string_append(s, "&gt;"); break;
        case '"': g_string_append(s, "&quot;"); break;
        case '\'': g_string_append(s, "&apos;"); break;
        default:
            /* control characters are not allowed in XML 1.0 */
            if ((unsigned char)*t >= 0x20 || *t == '\t' || *t == '\n')
                g_string_append_c(s, *t);
            break;
        }
    }
}

/* A score with the digits that matter at its magnitude. */
static void fmt_value(char *buf, size_t len, double v)
{
    double a = fabs(v);
    if (!isfinite(v))
        g_snprintf(buf, len, "%s", isnan(v) ? "n/a" : v > 0 ? "inf" : "-inf");
    else if (a >= 100)
        g_snprintf(buf, len, "%.1f", v);
    else if (a >= 10)
        g_snprintf(buf, len, "%.2f", v);
    else if (a >= 1)
        g_snprintf(buf, len, "%.3f", v);
    else
        g_snprintf(buf, len, "%.4f", v);
}

/* Tick labels: as many decimals as the step needs, no more. */
void qm_plot_fmt_tick(char *buf, size_t len, double v, double step)
{
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (fabs(v) < step * 1e-6)
        v = 0; /* no "-0" */
    g_snprintf(buf, len, "%.*f", dec, v);
}

/* "Nice" numbers (1, 2, 5 x 10^k) so that ticks read at a glance. */
static double nice_num(double x, int round_it)
{
    double e = floor(log10(x)), f = x / pow(10, e), nf;
    if (round_it)
        nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
    else
        nf = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
    return nf * pow(10, e);
}

void qm_plot_nice_scale(double *lo, double *hi, double *step, int max_ticks)
{
    double range = nice_num(*hi - *lo, 0);
    *step = nice_num(range / (max_ticks - 1), 1);
    *lo = floor(*lo / *step + 1e-9) * *step;
    *hi = ceil(*hi / *step - 1e-9) * *step;
}

static double series_mean(const QmPlotSeries *s)
{
    double sum = 0;
    size_t n = 0;
    if (!isnan(s->mean))
        return s->mean;
    for (size_t i = 0; i < s->n; i++) {
        if (isfinite(s->y[i])) {
            sum += s->y[i];
            n++;
        }
    }
    return n ? sum / n : NAN;
}

typedef struct {
    double x0, x1, y0, y1;   /* data range */
    double left, top, w, h;  /* plot area */
} Frame;

static double px(const Frame *f, double x)
{
    return f->left + (f->x1 > f->x0 ? (x - f->x0) / (f->x1 - f->x0) : 0.5) * f->w;
}

static double py(const Frame *f, double y)
{
    return f->top + (f->y1 - y) / (f->y1 - f->y0) * f->h;
}

/* The line of one series.  Long series are thinned to the minimum and the
 * maximum of each pixel column, in frame order: the drawing is the same as
 * with every point (a dip of one frame stays visible), the file stays small. */
static void series_path(GString *s, const Frame *f, const QmPlotSeries *se,
                        const char *colour)
{
    const gboolean thin = se->n > (size_t)(2 * f->w);
    gboolean pen_down = FALSE;
    long col = LONG_MIN;
    size_t imin = 0, imax = 0;
    gboolean have = FALSE;

    g_string_append_printf(s, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" "
                           "stroke-linejoin=\"round\" stroke-linecap=\"round\" d=\"",
                           colour);
#define EMIT(i) do { \
        g_string_append_printf(s, "%c%.1f %.1f ", pen_down ? 'L' : 'M', \
                               px(f, se->x[i]), py(f, se->y[i])); \
        if (!pen_down) g_string_append(s, "l0 0 "); \
        pen_down = TRUE; \
    } while (0)
#define FLUSH() do { \
        if (have) { \
            if (imin == imax) EMIT(imin); \
            else if (imin < imax) { EMIT(imin); EMIT(imax); } \
            else { EMIT(imax); EMIT(imin); } \
            have = FALSE; \
        } \
    } while (0)

    for (size_t i = 0; i < se->n; i++) {
        if (!isfinite(se->y[i])) {
            FLUSH();
            pen_down = FALSE; /* a gap: the next point starts a new subpath */
            continue;
        }
        if (!thin) {
            EMIT(i);
            continue;
        }
        long c = (long)floor(px(f, se->x[i]));
        if (c != col) {
            FLUSH();
            col = c;
        }
        if (!have) {
            imin = imax = i;
            have = TRUE;
        } else {
            if (se->y[i] < se->y[imin]) imin = i;
            if (se->y[i] > se->y[imax]) imax = i;
        }
    }
    FLUSH();
#undef FLUSH
#undef EMIT
    g_string_append(s, "\"/>\n");
}

typedef struct {
    double v;
    size_t i;
} Ranked;

static int cmp_asc(const void *a, const void *b)
{
    const Ranked *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* The k worst frames, each the worst of its neighbourhood (sep frames
 * either side) and at least sep apart: a dip that lasts twenty frames is one
 * finding, not five, and the next marks go to the next dips.  A flat line
 * has no worst frame. */
static size_t worst_frames(const QmPlotSeries *se, int better, int k, double sep,
                           size_t *out)
{
    Ranked *r = g_new(Ranked, se->n ? se->n : 1);
    size_t n = 0, found = 0, lo = 0, hi = 0;
    double vmin = INFINITY, vmax = -INFINITY;

    for (size_t i = 0; i < se->n; i++) {
        if (isfinite(se->y[i])) {
            vmin = MIN(vmin, se->y[i]);
            vmax = MAX(vmax, se->y[i]);
        }
    }
    if (!(vmax - vmin > 1e-9 * MAX(1.0, fabs(vmax)))) {
        g_free(r);
        return 0;
    }
    for (size_t i = 0; i < se->n; i++) {
        double v;
        gboolean local = TRUE;
        if (!isfinite(se->y[i]))
            continue;
        v = better > 0 ? se->y[i] : -se->y[i];
        /* the window [x - sep, x + sep] slides with i (x ascending) */
        while (se->x[lo] < se->x[i] - sep)
            lo++;
        if (hi < i)
            hi = i;
        while (hi + 1 < se->n && se->x[hi + 1] <= se->x[i] + sep)
            hi++;
        for (size_t j = lo; j <= hi && local; j++) {
            if (j == i || !isfinite(se->y[j]))
                continue;
            double w = better > 0 ? se->y[j] : -se->y[j];
            local = v < w || (v == w && i < j);
        }
        if (local) {
            r[n].v = v;
            r[n++].i = i;
        }
    }
    qsort(r, n, sizeof(*r), cmp_asc);
    for (size_t j = 0; j < n && found < (size_t)k; j++) {
        gboolean near = FALSE;
        for (size_t m = 0; m < found && !near; m++)
            near = fabs(se->x[out[m]] - se->x[r[j].i]) < sep;
        if (!near)
            out[found++] = r[j].i;
    }
    g_free(r);
    return found;
}

typedef struct {
    QmPlotFeatureInfo info;  /* of its first series */
    GString *axis;    /* its metrics' names, then the unit */
    size_t first;     /* index of its first series */
} Panel;

/* Add a series' metric name to its panel's axis title (once). */
static void panel_add_name(Panel *p, const QmPlotFeatureInfo *fi)
{
    char **names = g_strsplit(p->axis->str, " / ", -1);
    const gboolean known = g_strv_contains((const char *const *)names, fi->name);
    g_strfreev(names);
    if (known)
        return;
    if (p->axis->len)
        g_string_append(p->axis, " / ");
    g_string_append(p->axis, fi->name);
}

typedef struct {
    double y;
    size_t series;
} Label;

static int cmp_label(const void *a, const void *b)
{
    const Label *x = a, *y = b;
    return x->y < y->y ? -1 : x->y > y->y;
}

/* Mean labels of one panel, kept inside it and pushed apart so that they
 * never overlap. */
static void place_labels(Label *l, size_t n, double top, double bottom)
{
    const double gap = 13;
    qsort(l, n, sizeof(*l), cmp_label);
    for (size_t i = 0; i < n; i++)
        l[i].y = CLAMP(l[i].y, top, bottom);
    for (size_t i = 1; i < n; i++)
        if (l[i].y < l[i - 1].y + gap)
            l[i].y = l[i - 1].y + gap;
    if (n && l[n - 1].y > bottom) {
        l[n - 1].y = bottom;
        for (size_t i = n - 1; i-- > 0;)
            if (l[i].y > l[i + 1].y - gap)
                l[i].y = l[i + 1].y - gap;
    }
}

char *qm_plot_svg_string(const QmPlotSeries *series, size_t n,
                         const QmPlotOptions *opts)
{
    const int W = opts && opts->width > 0 ? opts->width : 1000;
    const int n_worst = !opts || opts->n_worst == 0 ? 5 : opts->n_worst;
    GString *s = g_string_new(NULL);
    Panel *panels = g_new0(Panel, n ? n : 1);
    size_t n_panels = 0;
    double x0 = INFINITY, x1 = -INFINITY;
    char buf[64], buf2[64];

    /* panels in order of first appearance */
    for (size_t i = 0; i < n; i++) {
        QmPlotFeatureInfo fi;
        size_t p;
        qm_plot_feature_info(series[i].name, &fi);
        for (p = 0; p < n_panels; p++)
            if (!strcmp(panels[p].info.group, fi.group))
                break;
        if (p == n_panels) {
            panels[p].info = fi;
            panels[p].axis = g_string_new(NULL);
            panels[p].first = i;
            n_panels++;
        }
        panel_add_name(&panels[p], &fi);
        for (size_t j = 0; j < series[i].n; j++) {
            x0 = MIN(x0, series[i].x[j]);
            x1 = MAX(x1, series[i].x[j]);
        }
    }
    for (size_t p = 0; p < n_panels; p++)
        if (panels[p].info.unit)
            g_string_append_printf(panels[p].axis, " [%s]", panels[p].info.unit);
    /* the VMAF panel first: it is the score people look for */
    for (size_t p = 1; p < n_panels; p++) {
        if (panels[p].info.metric && !strcmp(panels[p].info.metric, "vmaf")) {
            Panel v = panels[p];
            memmove(&panels[1], &panels[0], p * sizeof(Panel));
            panels[0] = v;
            break;
        }
    }
    if (!isfinite(x0)) {
        x0 = 0;
        x1 = 1;
    }
    if (x1 <= x0)
        x1 = x0 + 1;
    double xstep;
    qm_plot_nice_scale(&x0, &x1, &xstep, 11);
    if (x0 < 0)
        x0 = 0;

    /* legend: one entry per series, then the two marks, wrapped to the width */
    typedef struct { double x, y; } Pos;
    Pos *lpos = g_new(Pos, n + 2);
    char **ltext = g_new0(char *, n + 2);
    double lx = MARGIN_L, ly = 76;
    for (size_t i = 0; i < n + 2; i++) {
        if (i < n) {
            fmt_value(buf, sizeof(buf), series_mean(&series[i]));
            ltext[i] = g_strdup_printf("%s (mean %s)", series[i].name, buf);
        } else {
            ltext[i] = g_strdup(i == n ? "pooled mean" : "worst frames");
        }
        double wdt = 30 + strlen(ltext[i]) * CHAR_W + 22;
        if (lx + wdt > W - MARGIN_R && lx > MARGIN_L) {
            lx = MARGIN_L;
            ly += LEGEND_ROW;
        }
        lpos[i].x = lx;
        lpos[i].y = ly;
        lx += wdt;
    }
    const double panels_top = ly + 22;
    /* one panel gets room to read the line; stacked ones share the page */
    const double PANEL_H = n_panels <= 1 ? 300 : n_panels == 2 ? 240 : 200;
    const double plot_w = W - MARGIN_L - MARGIN_R;
    const double last_bottom = panels_top + n_panels * PANEL_H +
                               (n_panels ? n_panels - 1 : 0) * PANEL_GAP;
    const int H = (int)ceil(last_bottom + (n_panels ? 54 : 80));

    g_string_append_printf(s,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
        "viewBox=\"0 0 %d %d\" font-family=\"%s\" font-size=\"12\">\n<title>",
        W, H, W, H, FONT);
    qm_plot_xml_text(s, opts && opts->title ? opts->title : "Per-frame quality");
    g_string_append_printf(s, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
                           W, H);
    g_string_append_printf(s, "<text x=\"%d\" y=\"32\" font-size=\"18\" "
                           "font-weight=\"bold\" fill=\"#222\">", MARGIN_L);
    qm_plot_xml_text(s, opts && opts->title ? opts->title : "Per-frame quality");
    g_string_append(s, "</text>\n");
    if (opts && opts->subtitle) {
        g_string_append_printf(s, "<text x=\"%d\" y=\"53\" fill=\"#555\">", MARGIN_L);
        qm_plot_xml_text(s, opts->subtitle);
        g_string_append(s, "</text>\n");
    }

    /* legend */
    g_string_append(s, "<g id=\"legend\">\n");
    for (size_t i = 0; i < n + 2; i++) {
        const double x = lpos[i].x, y = lpos[i].y;
        if (i < n)
            g_string_append_printf(s, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                                   "stroke=\"%s\" stroke-width=\"2.5\"/>\n",
                                   x, y - 4, x + 24, y - 4, palette[i % N_COLOURS]);
        else if (i == n)
            g_string_append_printf(s, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                                   "stroke=\"#444\" stroke-width=\"1.5\" "
                                   "stroke-dasharray=\"6 4\"/>\n", x, y - 4, x + 24, y - 4);
        else
            g_string_append_printf(s, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"none\" "
                                   "stroke=\"" WORST_COLOUR "\" stroke-width=\"2\"/>\n",
                                   x + 12, y - 4);
        g_string_append_printf(s, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#222\">", x + 30, y);
        qm_plot_xml_text(s, ltext[i]);
        g_string_append(s, "</text>\n");
    }
    g_string_append(s, "</g>\n");

    if (!n_panels)
        g_string_append_printf(s, "<text x=\"%d\" y=\"%.1f\" fill=\"#555\">no scores to "
                               "plot</text>\n", MARGIN_L, panels_top + 20);

    for (size_t p = 0; p < n_panels; p++) {
        Frame f = { .x0 = x0, .x1 = x1, .left = MARGIN_L, .w = plot_w, .h = PANEL_H,
                    .top = panels_top + p * (PANEL_H + PANEL_GAP) };
        double lo = INFINITY, hi = -INFINITY, ystep;
        int better = 1;
        Label *labels = g_new(Label, n);
        size_t n_labels = 0, in_panel = 0;

        for (size_t i = panels[p].first; i < n; i++) {
            QmPlotFeatureInfo fi;
            qm_plot_feature_info(series[i].name, &fi);
            if (strcmp(fi.group, panels[p].info.group))
                continue;
            better = fi.better;
            in_panel++;
            for (size_t j = 0; j < series[i].n; j++) {
                if (isfinite(series[i].y[j])) {
                    lo = MIN(lo, series[i].y[j]);
                    hi = MAX(hi, series[i].y[j]);
                }
            }
        }
        const double nlo = panels[p].info.lo, nhi = panels[p].info.hi;
        if (!isfinite(lo)) {
            lo = isfinite(nlo) ? nlo : 0;
            hi = isfinite(nhi) ? nhi : lo + 1;
        }
        if (hi - lo < 1e-9 * MAX(1.0, fabs(hi))) {
            /* a flat line: give it some room so that it is not the frame */
            double d = fabs(hi) > 0 ? fabs(hi) * 0.01 : 1;
            lo -= d;
            hi += d;
        }
        qm_plot_nice_scale(&lo, &hi, &ystep, 6);
        /* a score cannot leave its natural range: no "110" on a VMAF axis */
        if (isfinite(nhi) && hi > nhi)
            hi = MAX(nhi, lo + ystep);
        if (isfinite(nlo) && lo < nlo)
            lo = MIN(nlo, hi - ystep);
        f.y0 = lo;
        f.y1 = hi;

        if (panels[p].info.metric)
            g_string_append_printf(s, "<g id=\"panel-%s\">\n", panels[p].info.metric);
        else
            g_string_append_printf(s, "<g id=\"panel-%zu\">\n", p);
        g_string_append_printf(s, "<clipPath id=\"clip%zu\"><rect x=\"%.1f\" y=\"%.1f\" "
                               "width=\"%.1f\" height=\"%.1f\"/></clipPath>\n",
                               p, f.left, f.top - 2, f.w, f.h + 4);
        g_string_append_printf(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                               "fill=\"#fafafa\" stroke=\"#bbb\"/>\n",
                               f.left, f.top, f.w, f.h);
        /* horizontal grid and y ticks */
        for (double v = ceil(lo / ystep - 1e-9) * ystep; v <= hi + ystep * 1e-6; v += ystep) {
            double y = py(&f, v);
            g_string_append_printf(s, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                                   "stroke=\"#e2e2e2\"/>\n", f.left, y, f.left + f.w, y);
            g_string_append_printf(s, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                                   "stroke=\"#888\"/>\n", f.left - 5, y, f.left, y);
            qm_plot_fmt_tick(buf, sizeof(buf), v, ystep);
            g_string_append_printf(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                                   "fill=\"#444\">%s</text>\n", f.left - 8, y + 4, buf);
        }
        /* vertical grid (x ticks labelled under the last panel only) */
        for (double v = x0; v <= x1 + xstep * 1e-6; v += xstep) {
            double x = px(&f, v);
            g_string_append_printf(s, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                                   "stroke=\"#ececec\"/>\n", x, f.top, x, f.top + f.h);
            g_string_append_printf(s, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                                   "stroke=\"#888\"/>\n", x, f.top + f.h, x, f.top + f.h + 4);
            if (p == n_panels - 1) {
                qm_plot_fmt_tick(buf, sizeof(buf), v, xstep);
                g_string_append_printf(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                                       "fill=\"#444\">%s</text>\n", x, f.top + f.h + 18, buf);
            }
        }
        /* axis title, rotated, centred on the panel */
        g_string_append_printf(s, "<text transform=\"translate(22 %.1f) rotate(-90)\" "
                               "text-anchor=\"middle\" font-size=\"13\" fill=\"#222\">",
                               f.top + f.h / 2);
        qm_plot_xml_text(s, panels[p].axis->str);
        if (better < 0)
            g_string_append(s, " (lower is better)");
        g_string_append(s, "</text>\n");

        g_string_append_printf(s, "<g clip-path=\"url(#clip%zu)\">\n", p);
        for (size_t i = panels[p].first; i < n; i++) {
            QmPlotFeatureInfo fi;
            qm_plot_feature_info(series[i].name, &fi);
            if (strcmp(fi.group, panels[p].info.group))
                continue;
            const char *c = palette[i % N_COLOURS];
            series_path(s, &f, &series[i], c);
            double m = series_mean(&series[i]);
            if (isfinite(m)) {
                double y = py(&f, m);
                g_string_append_printf(s, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                                       "stroke=\"%s\" stroke-width=\"1.3\" "
                                       "stroke-dasharray=\"6 4\"/>\n",
                                       f.left, y, f.left + f.w, y, c);
                labels[n_labels].y = y - 5;
                labels[n_labels++].series = i;
            }
        }
        g_string_append(s, "</g>\n");

        /* mean labels, right-aligned above their dashed line, with a white
         * halo so that they stay legible over the lines */
        /* beyond four lines the labels would cover the panel: the legend
         * has the means */
        if (in_panel > 4)
            n_labels = 0;
        place_labels(labels, n_labels, f.top + 12, f.top + f.h - 4);
        for (size_t l = 0; l < n_labels; l++) {
            const QmPlotSeries *se = &series[labels[l].series];
            fmt_value(buf, sizeof(buf), series_mean(se));
            g_string_append_printf(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                                   "font-size=\"11\" fill=\"%s\" stroke=\"#fff\" "
                                   "stroke-width=\"3\" paint-order=\"stroke\">",
                                   f.left + f.w - 6, labels[l].y,
                                   palette[labels[l].series % N_COLOURS]);
            qm_plot_xml_text(s, n_labels > 1 ? se->name : "mean");
            g_string_append_printf(s, "%s %s</text>\n", n_labels > 1 ? " mean" : "", buf);
        }

        /* worst frames: circled; the worst one of each line is labelled */
        for (size_t i = panels[p].first; i < n && n_worst > 0; i++) {
            QmPlotFeatureInfo fi;
            size_t *w = g_new(size_t, n_worst);
            qm_plot_feature_info(series[i].name, &fi);
            if (strcmp(fi.group, panels[p].info.group) || fi.better == 0) {
                g_free(w);
                continue;
            }
            /* about one mark per 20 frames at most, and neighbours never both */
            int kk = (int)MIN((size_t)n_worst, MAX((size_t)1, series[i].n / 20));
            size_t k = worst_frames(&series[i], fi.better, kk, MAX((x1 - x0) / 40, 2.0), w);
            /* marks for up to four lines, words for up to two: more would
             * hide the lines (the circles keep a tooltip) */
            if (in_panel > 4)
                k = 0;
            for (size_t j = 0; j < k; j++) {
                double cx = px(&f, series[i].x[w[j]]), cy = py(&f, series[i].y[w[j]]);
                g_string_append_printf(s, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" "
                                       "fill=\"none\" stroke=\"" WORST_COLOUR "\" "
                                       "stroke-width=\"2\"><title>",
                                       cx, cy, j == 0 ? "6" : "4.5");
                fmt_value(buf, sizeof(buf), series[i].y[w[j]]);
                g_string_append_printf(s, "%s, frame %.0f: %s</title></circle>\n",
                                       series[i].name, series[i].x[w[j]], buf);
                if (j == 0 && in_panel <= 2) {
                    /* label beside the circle, turned inwards at the right
                     * edge and away from the panel border */
                    gboolean right = cx > f.left + f.w - 170;
                    double ty = fi.better > 0 ? cy - 10 : cy + 18;
                    if (ty > f.top + f.h - 4)
                        ty = cy - 10;
                    if (ty < f.top + 12)
                        ty = cy + 18;
                    fmt_value(buf2, sizeof(buf2), series[i].y[w[j]]);
                    g_string_append_printf(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" "
                                           "font-size=\"11\" fill=\"" WORST_COLOUR "\" "
                                           "stroke=\"#fff\" stroke-width=\"3\" "
                                           "paint-order=\"stroke\">",
                                           right ? cx - 9 : cx + 9, ty, right ? "end" : "start");
                    g_string_append(s, "worst: ");
                    if (in_panel > 1) {
                        qm_plot_xml_text(s, series[i].name);
                        g_string_append(s, " ");
                    }
                    g_string_append_printf(s, "%s at frame %.0f</text>\n", buf2,
                                           series[i].x[w[j]]);
                }
            }
            g_free(w);
        }
        g_string_append(s, "</g>\n");
        g_free(labels);
    }
    if (n_panels)
        g_string_append_printf(s, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                               "font-size=\"13\" fill=\"#222\">frame index</text>\n",
                               MARGIN_L + plot_w / 2, last_bottom + 42);
    g_string_append(s, "</svg>\n");

    for (size_t i = 0; i < n + 2; i++)
        g_free(ltext[i]);
    g_free(ltext);
    g_free(lpos);
    for (size_t p = 0; p < n_panels; p++)
        g_string_free(panels[p].axis, TRUE);
    g_free(panels);
    return g_string_free(s, FALSE);
}

gboolean qm_plot_svg(const char *path, const QmPlotSeries *series, size_t n,
                     const QmPlotOptions *opts, GError **error)
{
    char *svg = qm_plot_svg_string(series, n, opts);
    gboolean ok = g_file_set_contents(path, svg, -1, error);
    g_free(svg);
    return ok;
}
