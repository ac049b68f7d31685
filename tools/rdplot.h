/* gst-qmetric: a rate-quality chart (quality against bitrate, one curve per
 * ladder) as SVG, written by hand like qmplot.c.  One panel per metric,
 * side by side; the bitrate axis is logarithmic, as codec comparisons draw
 * it (equal ratios of rate are equal distances, the space Bjøntegaard's
 * deltas are computed in). */
#ifndef QM_RDPLOT_H
#define QM_RDPLOT_H

#include <stddef.h>

#include <glib.h>

typedef struct QmRdCurve {
    const char *name;      /* the ladder, e.g. "x264 medium" */
    const double *rate;    /* kbit/s, > 0 */
    const double *const *quality; /* quality[m][i]: metric m at point i */
    const char *const *label;     /* per point (e.g. "1280x720"), or NULL */
    size_t n;
} QmRdCurve;

/* The chart as a string: n_metrics panels (metric names in metrics[]),
 * title and subtitle (NULL: none).  Points with a non-finite quality are
 * left out of their curve. */
char *qm_rd_svg_string(const QmRdCurve *curves, size_t n_curves,
                       const char *const *metrics, size_t n_metrics,
                       const char *title, const char *subtitle);

#endif /* QM_RDPLOT_H */
