/* gst-qmetric: an SVG chart of per-frame scores, written by hand.
 *
 * No plotting library: the chart is a few hundred lines of SVG text, so the
 * tool stays a plain GStreamer application and the output is reproducible
 * byte for byte.  Features are grouped into panels by unit (VMAF score, dB,
 * SSIM index, ...), one line per feature, its pooled mean dashed, its worst
 * frames circled.
 */
#ifndef QM_PLOT_H
#define QM_PLOT_H

#include <stddef.h>

#include <glib.h>

typedef struct QmPlotSeries {
    const char *name;    /* feature key, e.g. "vmaf", "psnr_y" */
    const double *x;     /* frame indices, ascending */
    const double *y;     /* scores; NaN or +-inf: not drawn (a gap) */
    size_t n;
    double mean;         /* pooled mean to mark; NaN: the mean of the finite y */
} QmPlotSeries;

typedef struct QmPlotOptions {
    const char *title;
    const char *subtitle; /* NULL: none */
    int width;            /* pixels; 0: 1000 */
    int n_worst;          /* worst frames circled per line; 0: 5, <0: none */
} QmPlotOptions;

/* How a feature reads (qm_feature_info(): its metric's descriptor): the
 * panel it shares with the features of the same unit, direction and range,
 * its metric's name on the axis, whether a higher score is better (+1),
 * worse (-1) or neither (0).  A feature no metric describes gets a panel of
 * its own named after it. */
typedef struct QmPlotFeatureInfo {
    char group[128];      /* panel key */
    const char *name;     /* its metric's display name, or the feature key */
    const char *unit;     /* NULL: no metric describes the feature */
    const char *metric;   /* its metric ("vmaf": a model's score), or NULL */
    int better;
    double lo, hi;        /* natural range (NaN: none), clamps the axis */
} QmPlotFeatureInfo;

void qm_plot_feature_info(const char *name, QmPlotFeatureInfo *info);

/* Write the chart; FALSE with *error set when the file cannot be written. */
gboolean qm_plot_svg(const char *path, const QmPlotSeries *series, size_t n,
                     const QmPlotOptions *opts, GError **error);

/* The same chart into a string (tests, other writers). */
char *qm_plot_svg_string(const QmPlotSeries *series, size_t n,
                         const QmPlotOptions *opts);

/* Pieces shared with the other SVG writers (rdplot.c). */
/** The i-th line colour of the palette (cycles). */
const char *qm_plot_colour(unsigned i);
/** Append t to s escaped for XML text and attributes. */
void qm_plot_xml_text(GString *s, const char *t);
/** Widen [lo, hi] to "nice" ticks (1, 2, 5 x 10^k), at most max_ticks. */
void qm_plot_nice_scale(double *lo, double *hi, double *step, int max_ticks);
/** A tick label with as many decimals as the step needs. */
void qm_plot_fmt_tick(char *buf, size_t len, double v, double step);

#endif /* QM_PLOT_H */
