/* gst-qmetric: a rate-quality chart (quality against bitrate, one curve per
 * series: a ladder, a codec, a group of renditions) as SVG, written by hand
 * like qmplot.c.  One panel per metric, side by side; the bitrate axis is
 * logarithmic in kbit/s, as codec comparisons draw it (equal ratios of rate
 * are equal distances, the space Bjontegaard's deltas are computed in).
 * Every point is labelled beside it (rdlabel.c places the labels); the
 * upper convex hull of all the points can be drawn over the curves.
 */
#ifndef QM_RDPLOT_H
#define QM_RDPLOT_H

#include <stddef.h>

#include <glib.h>

typedef struct QmRdCurve {
    const char *name;      /* the series, e.g. "x264 medium", "H.264", "1280x720" */
    const double *rate;    /* kbit/s, > 0; any order (drawn in rate order) */
    const double *const *quality; /* quality[m][i]: metric m at point i */
    const char *const *label;     /* per point (e.g. "720p"), or NULL: the bitrate */
    size_t n;
} QmRdCurve;

typedef struct QmRdOptions {
    const char *title;     /* NULL: "Rate-quality" */
    const char *subtitle;  /* NULL: none */
    gboolean hull;         /* draw the upper convex hull of all the points */
} QmRdOptions;

/* The chart as a string: n_metrics panels (metric names in metrics[]).
 * Points with a non-finite quality or a rate <= 0 are left out. */
char *qm_rd_svg_string(const QmRdCurve *curves, size_t n_curves,
                       const char *const *metrics, size_t n_metrics,
                       const QmRdOptions *opts);

/**
 * The upper convex hull of the points (rate[i], q[i]) in the rate-quality
 * plane (linear rate: the operating points a rate allocation would choose,
 * no point of the hull being reachable by mixing two others), from the
 * lowest rate up to the highest quality: its rising part, the Pareto front
 * of rate against quality.  Writes the indices of its vertices in order of
 * rate to idx (room for n) and returns how many.  Points with a non-finite
 * value or a rate <= 0 are ignored; of two points at one rate, the better.
 */
size_t qm_rd_upper_hull(const double *rate, const double *q, size_t n, size_t *idx);

#endif /* QM_RDPLOT_H */
