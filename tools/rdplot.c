/* gst-qmetric: rate-quality chart (see rdplot.h). */
#include <math.h>
#include <stdio.h>

#include "qmplot.h"
#include "rdplot.h"

#define FONT "DejaVu Sans, Helvetica, Arial, sans-serif"
#define PANEL_W 460
#define PANEL_H 340
#define MARGIN_L 70
#define MARGIN_R 24
#define MARGIN_T 70
#define MARGIN_B 56
#define LEGEND_ROW 20

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

/* Ticks of a logarithmic rate axis: 1, 2, 5 x 10^k inside the range (only
 * powers of ten when the range spans more than two decades). */
static void rate_ticks(GString *s, const Panel *p)
{
    static const double mant[] = { 1, 2, 5 };
    const int all = p->lr1 - p->lr0 <= 2.0;
    for (int e = (int)floor(p->lr0); e <= (int)ceil(p->lr1); e++) {
        for (int k = 0; k < 3; k++) {
            if (!all && k)
                continue;
            const double r = mant[k] * pow(10, e), lr = log10(r);
            if (lr < p->lr0 - 1e-9 || lr > p->lr1 + 1e-9)
                continue;
            const double x = px(p, r);
            char buf[32];
            if (r >= 1000)
                g_snprintf(buf, sizeof(buf), "%g M", r / 1000);
            else
                g_snprintf(buf, sizeof(buf), "%g k", r);
            g_string_append_printf(s, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
                                   "stroke='#e4e4e4'/>\n", x, p->y0, x, p->y0 + p->h);
            g_string_append_printf(s, "<text x='%.1f' y='%.1f' text-anchor='middle' "
                                   "font-size='11'>%s</text>\n", x, p->y0 + p->h + 16, buf);
        }
    }
}

char *qm_rd_svg_string(const QmRdCurve *curves, size_t n_curves,
                       const char *const *metrics, size_t n_metrics,
                       const char *title, const char *subtitle)
{
    GString *s = g_string_new(NULL);
    const int legend_h = (int)n_curves * LEGEND_ROW + 10;
    const double width = MARGIN_L + n_metrics * (PANEL_W + MARGIN_L) - MARGIN_L + MARGIN_R + 160;
    const double height = MARGIN_T + PANEL_H + MARGIN_B + (legend_h > 0 ? 0 : 0);

    /* one rate range for every panel, so that the panels line up */
    double rmin = INFINITY, rmax = -INFINITY;
    for (size_t c = 0; c < n_curves; c++)
        for (size_t i = 0; i < curves[c].n; i++)
            if (curves[c].rate[i] > 0) {
                rmin = fmin(rmin, curves[c].rate[i]);
                rmax = fmax(rmax, curves[c].rate[i]);
            }
    if (!(rmin < rmax)) {
        rmin = isfinite(rmin) ? rmin / 2 : 100;
        rmax = isfinite(rmax) ? rmax * 2 : 1000;
    }
    const double pad = 0.04 * (log10(rmax) - log10(rmin));

    g_string_append_printf(s, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' "
                           "height='%.0f' viewBox='0 0 %.0f %.0f' font-family='%s'>\n",
                           width, height, width, height, FONT);
    g_string_append_printf(s, "<rect width='%.0f' height='%.0f' fill='white'/>\n", width, height);
    g_string_append(s, "<text x='20' y='28' font-size='17' font-weight='bold'>");
    qm_plot_xml_text(s, title ? title : "Rate-quality");
    g_string_append(s, "</text>\n");
    if (subtitle) {
        g_string_append(s, "<text x='20' y='48' font-size='12' fill='#555'>");
        qm_plot_xml_text(s, subtitle);
        g_string_append(s, "</text>\n");
    }

    for (size_t m = 0; m < n_metrics; m++) {
        Panel p = { .x0 = MARGIN_L + m * (PANEL_W + MARGIN_L), .y0 = MARGIN_T,
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
        p.q0 = qmin;
        p.q1 = qmax;
        qm_plot_nice_scale(&p.q0, &p.q1, &p.qstep, 7);

        g_string_append_printf(s, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
                               "fill='none' stroke='#999'/>\n", p.x0, p.y0, p.w, p.h);
        for (double q = p.q0; q <= p.q1 + p.qstep * 1e-6; q += p.qstep) {
            char buf[32];
            qm_plot_fmt_tick(buf, sizeof(buf), q, p.qstep);
            g_string_append_printf(s, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
                                   "stroke='#e4e4e4'/>\n", p.x0, py(&p, q), p.x0 + p.w, py(&p, q));
            g_string_append_printf(s, "<text x='%.1f' y='%.1f' text-anchor='end' "
                                   "font-size='11'>%s</text>\n", p.x0 - 6, py(&p, q) + 4, buf);
        }
        rate_ticks(s, &p);
        g_string_append_printf(s, "<text x='%.1f' y='%.1f' text-anchor='middle' "
                               "font-size='12'>bitrate (kbit/s, log scale)</text>\n",
                               p.x0 + p.w / 2, p.y0 + p.h + 38);
        g_string_append_printf(s, "<text transform='translate(%.1f %.1f) rotate(-90)' "
                               "text-anchor='middle' font-size='12'>", p.x0 - 48,
                               p.y0 + p.h / 2);
        qm_plot_xml_text(s, metrics[m]);
        g_string_append(s, "</text>\n");

        for (size_t c = 0; c < n_curves; c++) {
            const QmRdCurve *cv = &curves[c];
            const char *col = qm_plot_colour((unsigned)c);
            GString *d = g_string_new(NULL);
            for (size_t i = 0; i < cv->n; i++) {
                const double q = cv->quality[m][i];
                if (!isfinite(q) || !(cv->rate[i] > 0))
                    continue;
                g_string_append_printf(d, "%s%.1f,%.1f", d->len ? " L" : "M",
                                       px(&p, cv->rate[i]), py(&p, q));
            }
            g_string_append_printf(s, "<path d='%s' fill='none' stroke='%s' "
                                   "stroke-width='2'/>\n", d->str, col);
            g_string_free(d, TRUE);
            for (size_t i = 0; i < cv->n; i++) {
                const double q = cv->quality[m][i];
                if (!isfinite(q) || !(cv->rate[i] > 0))
                    continue;
                g_string_append_printf(s, "<circle cx='%.1f' cy='%.1f' r='3.5' fill='%s'>"
                                       "<title>", px(&p, cv->rate[i]), py(&p, q), col);
                qm_plot_xml_text(s, cv->name);
                if (cv->label && cv->label[i]) {
                    g_string_append(s, " ");
                    qm_plot_xml_text(s, cv->label[i]);
                }
                g_string_append_printf(s, ": %.0f kbit/s, %.3f</title></circle>\n",
                                       cv->rate[i], q);
            }
        }
    }

    /* legend, right of the panels */
    const double lx = MARGIN_L + n_metrics * (PANEL_W + MARGIN_L) - MARGIN_L + 18;
    for (size_t c = 0; c < n_curves; c++) {
        const double ly = MARGIN_T + 10 + c * LEGEND_ROW;
        g_string_append_printf(s, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' "
                               "stroke='%s' stroke-width='3'/>\n", lx, ly, lx + 22, ly,
                               qm_plot_colour((unsigned)c));
        g_string_append_printf(s, "<text x='%.1f' y='%.1f' font-size='12'>", lx + 28, ly + 4);
        qm_plot_xml_text(s, curves[c].name);
        g_string_append(s, "</text>\n");
    }
    g_string_append(s, "</svg>\n");
    return g_string_free(s, FALSE);
}
