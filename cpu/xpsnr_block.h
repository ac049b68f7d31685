/* gst-qmetric: the block arithmetic of XPSNR (xpsnr.h), written once for
 * cpu/xpsnr.c and its twin cuda/xpsnr.cu (see qm_hd.h).
 *
 * The integer parts (high-pass filters, temporal differences) are exact
 * whatever the order of their sums.  The double parts follow FFmpeg n7.1's
 * vf_xpsnr.c operation by operation (calc_squared_error_and_weight(),
 * get_wsse()): the same divisions, the square and its square root, the
 * in-place smoothing in raster order and the weighted sums in raster
 * order, so that both backends (IEEE double, no contraction: the C code is
 * built with -ffp-contract=off, nvcc with --fmad=false) give FFmpeg's bits.
 */
#ifndef QM_XPSNR_BLOCK_H
#define QM_XPSNR_BLOCK_H

#include <math.h>
#include <stdint.h>

#include "qm_hd.h"
#include "xpsnr.h"

/* A sample as FFmpeg's filter holds it for the activity: in an int16_t
 * (8-bit input is copied into one, deeper input is read as one), so a
 * 16-bit value above 32767 counts as negative. */
QM_HD int qm_xpsnr_s16(int v)
{
    return (int)(int16_t)v;
}

/* |3x3 high-pass| at one sample: c the centre, cross the sum of its four
 * direct neighbours, diag the sum of its four diagonal ones
 * (vf_xpsnr.c: 12 c - 2 (W + E + N + S) - (NW + NE + SW + SE)). */
QM_HD uint32_t qm_xpsnr_hp3(int c, int cross, int diag)
{
    const int f = 12 * c - 2 * cross - diag;
    return (uint32_t)(f < 0 ? -f : f);
}

/*
 * |high-pass| of the 2x2 group at (x, y) .. (x + 1, y + 1) above 2048x1152
 * (vf_xpsnr.c highds()), from sums of samples (rows y-2 .. y+3, columns
 * x-2 .. x+3 around the group):
 *   centre  the group's 4 samples                          weight 12
 *   vert    (x, x+1) of rows y-1 and y+2                   weight -3
 *   horz    columns x-1 and x+2 of rows y and y+1          weight -3
 *   corner  (x-1, y-1), (x+2, y-1), (x-1, y+2), (x+2, y+2)  weight -2
 *   outer   x-1 .. x+2 of rows y-2 and y+3, rows y-1 .. y+2 of columns
 *           x-2 and x+3 (16 samples)                       weight -1
 */
QM_HD uint32_t qm_xpsnr_hpds(int centre, int vert, int horz, int corner, int outer)
{
    const int f = 12 * centre - 3 * vert - 3 * horz - 2 * corner - outer;
    return (uint32_t)(f < 0 ? -f : f);
}

/* One luma block: its place and size, and the active part whose samples
 * the spatial filter visits ([xa, wa) x [ya, ha) relative to (x0, y0)). */
typedef struct QmXpsnrBlk {
    int x0, y0, bw, bh;
    int xa, ya, wa, ha;
    int small;  /* no active sample: weight 1, no activity */
} QmXpsnrBlk;

QM_HD QmXpsnrBlk qm_xpsnr_block(const QmXpsnrGeom *g, int k)
{
    QmXpsnrBlk o;
    o.x0 = (k % g->wblk) * g->b;
    o.y0 = (k / g->wblk) * g->b;
    o.bw = o.x0 + g->b > g->w ? g->w - o.x0 : g->b;
    o.bh = o.y0 + g->b > g->h ? g->h - o.y0 : g->b;
    /* the picture's outermost ds rows/columns are left out */
    o.xa = o.x0 > 0 ? 0 : g->ds;
    o.ya = o.y0 > 0 ? 0 : g->ds;
    o.wa = o.x0 + o.bw < g->w ? o.bw : o.bw - g->ds;
    o.ha = o.y0 + o.bh < g->h ? o.bh : o.bh - g->ds;
    o.small = o.wa <= o.xa || o.ha <= o.ya;
    return o;
}

/* Chroma block k of plane p (the chroma grid has the luma grid's shape:
 * qm_xpsnr_setup() checks it): origin and size. */
QM_HD void qm_xpsnr_cblock(const QmXpsnrGeom *g, int p, int k, int *x0, int *y0,
                           int *bw, int *bh)
{
    *x0 = (k % g->wblk) * g->bx;
    *y0 = (k / g->wblk) * g->by;
    *bw = *x0 + g->bx > g->pw[p] ? g->pw[p] - *x0 : g->bx;
    *bh = *y0 + g->by > g->ph[p] ? g->ph[p] - *y0 : g->by;
}

/* The weight of a block from its activity sums (vf_xpsnr.c: ms_act, then
 * weights[] = 1 / sqrt(ms_act), ms_act squared "since SSE is squared").
 * sa: spatial sum over the active samples; ta: temporal sum (with its
 * factor 2) over the whole block. */
QM_HD double qm_xpsnr_weight(const QmXpsnrBlk *k, uint64_t sa, uint64_t ta,
                             double least)
{
    if (k->small)
        return 1.0;
    double a = (double)sa / ((double)(k->wa - k->xa) * (double)(k->ha - k->ya));
    a += (double)ta / ((double)k->bw * (double)k->bh);
    if (a < least)
        a = least;
    a *= a;
    return 1.0 / sqrt(a);
}

QM_HD double qm_xpsnr_max(double a, double b)
{
    return a > b ? a : b;  /* FFMAX */
}

/*
 * Min-smoothing of the weights in raster order, in place (pictures of at
 * most 640x480; vf_xpsnr.c get_wsse(), "in-line min-smoothing as in
 * paper"): at block i with origin x, the left neighbour w[i-1] is lowered
 * to the largest of the weights next to it (w[i-2] and w[i] within a row,
 * w[i-2] alone at a row start, w[i] alone in the second column) and of
 * the block above it; the last block is lowered to the larger of its left
 * and upper neighbours.  Sequential: each step reads what the previous one
 * wrote.
 */
QM_HD void qm_xpsnr_smooth(const QmXpsnrGeom *g, double *w)
{
    const int wb = g->wblk;
    for (int i = 0; i < g->nblk; i++) {
        const int x = (i % wb) * g->b, y = (i / wb) * g->b;
        double p;
        if (x == 0)
            p = i > 1 ? w[i - 2] : 0.0;
        else
            p = x > g->b ? qm_xpsnr_max(w[i - 2], w[i]) : w[i];
        if (i > wb)
            p = qm_xpsnr_max(p, w[i - 1 - wb]);
        if (i > 0 && w[i - 1] > p)
            w[i - 1] = p;
        if (x + g->b >= g->w && y + g->b >= g->h && i > wb) {
            p = qm_xpsnr_max(w[i - 1], w[i - wb]);
            if (w[i] > p)
                w[i] = p;
        }
    }
}

/* The integer WSSE of a plane from its weighted sum (vf_xpsnr.c:
 * (uint64_t)(wsse * avg_act + 0.5), 0 for a sum <= 0). */
QM_HD uint64_t qm_xpsnr_wsse(double sum, double avg_act)
{
    return sum <= 0.0 ? 0 : (uint64_t)(sum * avg_act + 0.5);
}

#endif /* QM_XPSNR_BLOCK_H */
