/* gst-qmetric: where the point labels of a rate-quality chart go.
 *
 * Each label is tried at a few places around its point (above, below,
 * beside, diagonally, then further up or down with a leader line) and the
 * cheapest is kept: overlapping an already placed label costs most, then a
 * point marker, then a curve crossing the text, then leaving the plot area;
 * among equal places the nearer and the earlier in the list wins.  Labels are
 * placed one by one in the order given, so that neighbours of one curve
 * alternate above and below it.  Not optimal, but simple and deterministic:
 * the same chart gives the same SVG bytes.
 */
#ifndef QM_RDLABEL_H
#define QM_RDLABEL_H

#include <stddef.h>

#include <glib.h>

typedef struct QmRdBox {
    double x0, y0, x1, y1; /* pixels, x0 <= x1, y0 <= y1 */
} QmRdBox;

typedef struct QmRdLabel {
    double x, y;           /* the point it names, pixels */
    double w, h;           /* the text's box */
    /* placed: */
    QmRdBox box;           /* where the text's box went */
    gboolean leader;       /* away from the point: join them with a line */
} QmRdLabel;

/** The width of text at font size px (DejaVu Sans' mean advance, generous). */
double qm_rd_text_width(const char *text, double px);

/**
 * Place n labels inside area.  segs holds n_segs line segments (x0, y0, x1,
 * y1, four doubles each: the curves) that text should not cross.  Markers
 * are the labels' own points (radius marker_r).
 */
void qm_rd_place_labels(QmRdLabel *labels, size_t n, const QmRdBox *area,
                        const double *segs, size_t n_segs, double marker_r);

/** Overlapping area of two boxes (0 when apart). */
double qm_rd_box_overlap(const QmRdBox *a, const QmRdBox *b);

#endif /* QM_RDLABEL_H */
