/* gst-qmetric: point labels of the rate-quality chart (see rdlabel.h). */
#include <math.h>

#include "rdlabel.h"

/* Costs of a place, in "pixels": overlapping text is worst (it cannot be
 * read), a leader line is better than any real overlap. */
#define COST_LABEL 20.0      /* per square pixel over another label */
#define COST_MARKER 4.0      /* per square pixel over a point marker */
#define COST_OUTSIDE 20.0    /* per square pixel outside the plot area */
#define COST_CROSS 100.0     /* per curve segment through the text */
#define COST_FAR 30.0        /* per step away from the point */
#define COST_RANK 0.5        /* per place tried before this one */
#define SWEEPS 3

double qm_rd_text_width(const char *text, double px)
{
    /* DejaVu Sans: digits 0.636 em, lower case about 0.6 em */
    return (text ? g_utf8_strlen(text, -1) : 0) * px * 0.64;
}

double qm_rd_box_overlap(const QmRdBox *a, const QmRdBox *b)
{
    const double w = fmin(a->x1, b->x1) - fmax(a->x0, b->x0);
    const double h = fmin(a->y1, b->y1) - fmax(a->y0, b->y0);
    return w > 0 && h > 0 ? w * h : 0;
}

/* Whether the segment (x0,y0)-(x1,y1) passes through the box
 * (Liang-Barsky clipping: some parameter range survives all four edges). */
static gboolean crosses(const double *s, const QmRdBox *b)
{
    const double dx = s[2] - s[0], dy = s[3] - s[1];
    const double p[4] = { -dx, dx, -dy, dy };
    const double q[4] = { s[0] - b->x0, b->x1 - s[0], s[1] - b->y0, b->y1 - s[1] };
    double t0 = 0, t1 = 1;
    for (int k = 0; k < 4; k++) {
        if (p[k] == 0) {
            if (q[k] < 0)
                return FALSE;
            continue;
        }
        const double t = q[k] / p[k];
        if (p[k] < 0)
            t0 = fmax(t0, t);
        else
            t1 = fmin(t1, t);
        if (t0 > t1)
            return FALSE;
    }
    return TRUE;
}

/* Whether a leader line (from its point, a) crosses the segment b away from
 * that point: the curves through the point itself touch it there. */
static gboolean leader_crosses(const double *a, const double *b)
{
    const double rx = a[2] - a[0], ry = a[3] - a[1], sx = b[2] - b[0], sy = b[3] - b[1];
    const double d = rx * sy - ry * sx;
    if (d == 0)
        return FALSE;           /* parallel: a leader never runs along a curve */
    const double t = ((b[0] - a[0]) * sy - (b[1] - a[1]) * sx) / d;
    const double u = ((b[0] - a[0]) * ry - (b[1] - a[1]) * rx) / d;
    return t > 0.05 && t <= 1 && u >= 0 && u <= 1;
}

/* The k-th place tried for a label, or FALSE past the last one.  Places
 * alternate: even labels try above first, odd ones below. */
static gboolean place(const QmRdLabel *l, int k, gboolean below_first, double g,
                      QmRdBox *b, int *far)
{
    /* side: +1 below, -1 above; dx: -1 left of the point, 0 centred, +1 right */
    static const struct { int side, dx, far; } order[] = {
        { -1, 0, 0 }, { -1, -1, 0 }, { 1, 0, 0 }, { 1, 1, 0 },
        { 0, 1, 0 }, { 0, -1, 0 }, { -1, 1, 0 }, { 1, -1, 0 },
        { -1, 0, 1 }, { 1, 0, 1 }, { -1, -1, 1 }, { 1, 1, 1 },
        { -1, 1, 1 }, { 1, -1, 1 }, { -1, 0, 2 }, { 1, 0, 2 },
        { -1, -1, 2 }, { 1, 1, 2 }, { -1, 1, 2 }, { 1, -1, 2 },
        { -1, 0, 3 }, { 1, 0, 3 }, { -1, -1, 3 }, { 1, 1, 3 },
    };
    if (k >= (int)G_N_ELEMENTS(order))
        return FALSE;
    const int side = below_first ? -order[k].side : order[k].side;
    const int dx = below_first ? -order[k].dx : order[k].dx;
    const double lift = order[k].far * (l->h + 4);
    double x0, y0;
    if (side == 0) {             /* beside, vertically centred */
        x0 = dx > 0 ? l->x + g + 1 : l->x - g - 1 - l->w;
        y0 = l->y - l->h / 2;
    } else {
        const double gd = dx ? g * 0.7 : g; /* diagonal places sit closer */
        x0 = dx == 0 ? l->x - l->w / 2 : dx > 0 ? l->x + gd : l->x - gd - l->w;
        y0 = side < 0 ? l->y - gd - l->h - lift : l->y + gd + lift;
    }
    *b = (QmRdBox){ x0, y0, x0 + l->w, y0 + l->h };
    *far = order[k].far;
    return TRUE;
}

/* The line from a label's point to its text (the nearest point of the box). */
static void leader_of(const QmRdLabel *l, const QmRdBox *b, double *seg)
{
    seg[0] = l->x;
    seg[1] = l->y;
    seg[2] = fmin(fmax(l->x, b->x0), b->x1);
    seg[3] = b->y1 < l->y ? b->y1 : b->y0;
}

/* The cost of label i at b (with a leader line or not), against the
 * others already placed (placed[j]), every marker and every segment. */
static double cost(size_t i, const QmRdBox *b, gboolean leader, const QmRdLabel *labels,
                   const gboolean *placed, size_t n, const QmRdBox *area, const double *segs,
                   size_t n_segs, double r)
{
    double c = 0, lseg[4];
    const double inside = qm_rd_box_overlap(b, area);
    /* a line touching the text's edge is no harm: test the box less 1 px */
    const QmRdBox core = { b->x0 + 1, b->y0 + 1, b->x1 - 1, b->y1 - 1 };
    c += COST_OUTSIDE * ((b->x1 - b->x0) * (b->y1 - b->y0) - inside);
    if (leader)
        leader_of(&labels[i], b, lseg);
    for (size_t j = 0; j < n; j++) {
        const QmRdBox m = { labels[j].x - r, labels[j].y - r, labels[j].x + r, labels[j].y + r };
        c += COST_MARKER * qm_rd_box_overlap(b, &m);
        if (j == i || !placed[j])
            continue;
        c += COST_LABEL * qm_rd_box_overlap(b, &labels[j].box);
        if (labels[j].leader) {
            double o[4];
            leader_of(&labels[j], &labels[j].box, o);
            c += crosses(o, &core) ? COST_CROSS : 0;
        }
        if (leader) {
            const QmRdBox oc = { labels[j].box.x0 + 1, labels[j].box.y0 + 1,
                                 labels[j].box.x1 - 1, labels[j].box.y1 - 1 };
            c += crosses(lseg, &oc) ? COST_CROSS : 0;
        }
    }
    for (size_t s = 0; s < n_segs; s++) {
        if (crosses(segs + 4 * s, &core))
            c += COST_CROSS;
        if (leader && leader_crosses(lseg, segs + 4 * s))
            c += COST_CROSS / 2;
    }
    return c;
}

/* The cheapest place of label i given the others. */
static void best_place(size_t i, QmRdLabel *labels, const gboolean *placed, size_t n,
                       const QmRdBox *area, const double *segs, size_t n_segs, double r)
{
    QmRdLabel *l = &labels[i];
    double best = INFINITY;
    QmRdBox b;
    int far;
    for (int k = 0; place(l, k, i % 2 == 1, r + 2, &b, &far); k++) {
        const double c = cost(i, &b, far > 0, labels, placed, n, area, segs, n_segs, r) +
                         COST_FAR * far + COST_RANK * k;
        if (c < best) {
            best = c;
            l->box = b;
            l->leader = far > 0;
        }
    }
}

void qm_rd_place_labels(QmRdLabel *labels, size_t n, const QmRdBox *area,
                        const double *segs, size_t n_segs, double marker_r)
{
    gboolean *placed = g_new0(gboolean, n ? n : 1);
    /* one by one in order, then a few sweeps that move each label to its
     * best place among all the others: a label placed early no longer
     * blocks a later one that had nowhere else to go */
    for (size_t i = 0; i < n; i++) {
        best_place(i, labels, placed, n, area, segs, n_segs, marker_r);
        placed[i] = TRUE;
    }
    for (int sweep = 0; sweep < SWEEPS; sweep++)
        for (size_t i = 0; i < n; i++)
            best_place(i, labels, placed, n, area, segs, n_segs, marker_r);
    g_free(placed);
}
