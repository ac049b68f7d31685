/* gst-qmetric: Bjøntegaard deltas (see bd.h). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bd.h"

#define BD_MAX_POINTS 64

typedef struct Curve {
    double x[BD_MAX_POINTS], y[BD_MAX_POINTS];
    size_t n;
} Curve;

const char *qm_bd_interp_name(QmBdInterp m)
{
    return m == QM_BD_POLY ? "polynomial" : "pchip";
}

/* Points sorted by x (insertion sort: a ladder has a handful of points).
 * -1 when an x repeats: y is then not a function of x. */
static int make_curve(Curve *c, const double *x, const double *y, size_t n)
{
    if (n > BD_MAX_POINTS)
        return -1;
    c->n = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = c->n++;
        while (k > 0 && c->x[k - 1] > x[i]) {
            c->x[k] = c->x[k - 1];
            c->y[k] = c->y[k - 1];
            k--;
        }
        c->x[k] = x[i];
        c->y[k] = y[i];
    }
    for (size_t i = 1; i < n; i++)
        if (!(c->x[i] > c->x[i - 1]))
            return -1;
    return 0;
}

/* ---- cubic least-squares fit ---- */

/* Coefficients of y ~ c0 + c1 u + c2 u^2 + c3 u^3 with u = x - x0 (x0 the
 * mean of x: centring keeps the normal equations well conditioned), by
 * Gaussian elimination with partial pivoting on the 4x4 normal equations. */
static int poly_fit(const Curve *cv, double x0, double c[4])
{
    double a[4][5] = { { 0 } };
    for (size_t i = 0; i < cv->n; i++) {
        double p[7];
        const double u = cv->x[i] - x0;
        p[0] = 1;
        for (int k = 1; k < 7; k++)
            p[k] = p[k - 1] * u;
        for (int r = 0; r < 4; r++) {
            for (int k = 0; k < 4; k++)
                a[r][k] += p[r + k];
            a[r][4] += p[r] * cv->y[i];
        }
    }
    for (int col = 0; col < 4; col++) {
        int piv = col;
        for (int r = col + 1; r < 4; r++)
            if (fabs(a[r][col]) > fabs(a[piv][col]))
                piv = r;
        if (fabs(a[piv][col]) < 1e-300)
            return -1;
        if (piv != col)
            for (int k = 0; k < 5; k++) {
                const double t = a[col][k];
                a[col][k] = a[piv][k];
                a[piv][k] = t;
            }
        for (int r = 0; r < 4; r++) {
            if (r == col)
                continue;
            const double f = a[r][col] / a[col][col];
            for (int k = col; k < 5; k++)
                a[r][k] -= f * a[col][k];
        }
    }
    for (int k = 0; k < 4; k++)
        c[k] = a[k][4] / a[k][k];
    return 0;
}

static double poly_integral(const Curve *cv, double lo, double hi, int *err)
{
    double x0 = 0, c[4];
    for (size_t i = 0; i < cv->n; i++)
        x0 += cv->x[i];
    x0 /= (double)cv->n;
    if (poly_fit(cv, x0, c) < 0) {
        *err = -1;
        return 0;
    }
    const double ua = lo - x0, ub = hi - x0;
    double s = 0;
    for (int k = 3; k >= 0; k--)  /* antiderivative sum c_k u^(k+1) / (k+1) */
        s += c[k] * (pow(ub, k + 1) - pow(ua, k + 1)) / (k + 1);
    return s;
}

/* ---- piecewise cubic Hermite ---- */

static double sign(double v)
{
    return (v > 0) - (v < 0);
}

/* End slope: the three-point formula, kept shape-preserving. */
static double end_slope(double h0, double h1, double d0, double d1)
{
    double s = ((2 * h0 + h1) * d0 - h0 * d1) / (h0 + h1);
    if (sign(s) != sign(d0))
        s = 0;
    else if (sign(d0) != sign(d1) && fabs(s) > fabs(3 * d0))
        s = 3 * d0;
    return s;
}

static void pchip_slopes(const Curve *cv, double *d)
{
    const size_t n = cv->n;
    double h[BD_MAX_POINTS], del[BD_MAX_POINTS];
    for (size_t k = 0; k + 1 < n; k++) {
        h[k] = cv->x[k + 1] - cv->x[k];
        del[k] = (cv->y[k + 1] - cv->y[k]) / h[k];
    }
    if (n == 2) {
        d[0] = d[1] = del[0];
        return;
    }
    for (size_t k = 1; k + 1 < n; k++) {
        if (del[k - 1] * del[k] <= 0) {
            d[k] = 0;  /* a local extremum: flat, so no overshoot */
        } else {
            const double w1 = 2 * h[k] + h[k - 1], w2 = h[k] + 2 * h[k - 1];
            d[k] = (w1 + w2) / (w1 / del[k - 1] + w2 / del[k]);
        }
    }
    d[0] = end_slope(h[0], h[1], del[0], del[1]);
    d[n - 1] = end_slope(h[n - 2], h[n - 3], del[n - 2], del[n - 3]);
}

/* Integrals over [0, t] of the four Hermite basis functions on [0, 1]. */
static void hermite_integrals(double t, double H[4])
{
    const double t2 = t * t, t3 = t2 * t, t4 = t3 * t;
    H[0] = t - t3 + t4 / 2;          /* h00 = 2t^3 - 3t^2 + 1 */
    H[1] = t2 / 2 - 2 * t3 / 3 + t4 / 4; /* h10 = t^3 - 2t^2 + t */
    H[2] = t3 - t4 / 2;              /* h01 = -2t^3 + 3t^2 */
    H[3] = t4 / 4 - t3 / 3;          /* h11 = t^3 - t^2 */
}

static double pchip_integral(const Curve *cv, double lo, double hi)
{
    double d[BD_MAX_POINTS], s = 0;
    pchip_slopes(cv, d);
    for (size_t k = 0; k + 1 < cv->n; k++) {
        const double xa = fmax(lo, cv->x[k]), xb = fmin(hi, cv->x[k + 1]);
        if (!(xb > xa))
            continue;
        const double h = cv->x[k + 1] - cv->x[k];
        double A[4], B[4];
        hermite_integrals((xa - cv->x[k]) / h, A);
        hermite_integrals((xb - cv->x[k]) / h, B);
        s += h * (cv->y[k] * (B[0] - A[0]) + h * d[k] * (B[1] - A[1]) +
                  cv->y[k + 1] * (B[2] - A[2]) + h * d[k + 1] * (B[3] - A[3]));
    }
    return s;
}

/* Mean of (test - anchor) over the x range both curves cover. */
static int mean_gap(const Curve *a, const Curve *t, QmBdInterp m, double *gap,
                    const char **why)
{
    const size_t need = m == QM_BD_POLY ? 4 : 2;
    if (a->n < need || t->n < need) {
        *why = m == QM_BD_POLY ? "each curve needs at least 4 points for the "
               "polynomial fit" : "each curve needs at least 2 points";
        return -1;
    }
    const double lo = fmax(a->x[0], t->x[0]), hi = fmin(a->x[a->n - 1], t->x[t->n - 1]);
    if (!(hi > lo)) {
        *why = "the two curves do not overlap";
        return -1;
    }
    int err = 0;
    const double ia = m == QM_BD_POLY ? poly_integral(a, lo, hi, &err) : pchip_integral(a, lo, hi);
    const double it = m == QM_BD_POLY ? poly_integral(t, lo, hi, &err) : pchip_integral(t, lo, hi);
    if (err) {
        *why = "the polynomial fit is singular";
        return -1;
    }
    *gap = (it - ia) / (hi - lo);
    return 0;
}

static int check_input(const double *r, const double *q, size_t n, const char **why)
{
    if (n > BD_MAX_POINTS) {
        *why = "too many points on a curve (at most 64)";
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (!(r[i] > 0) || !isfinite(r[i]) || !isfinite(q[i])) {
            *why = "rates must be positive and qualities finite";
            return -1;
        }
    return 0;
}

/* Both curves as (x, y) with the rate on a log10 scale: log-rate against
 * quality (rate_is_y) or quality against log-rate. */
static int make_curves(const double *ra, const double *qa, size_t na,
                       const double *rt, const double *qt, size_t nt,
                       bool rate_is_y, Curve *a, Curve *t, const char **why)
{
    double la[BD_MAX_POINTS], lt[BD_MAX_POINTS];
    if (check_input(ra, qa, na, why) || check_input(rt, qt, nt, why))
        return -1;
    for (size_t i = 0; i < na; i++)
        la[i] = log10(ra[i]);
    for (size_t i = 0; i < nt; i++)
        lt[i] = log10(rt[i]);
    if (rate_is_y ? make_curve(a, qa, la, na) || make_curve(t, qt, lt, nt)
                  : make_curve(a, la, qa, na) || make_curve(t, lt, qt, nt)) {
        *why = rate_is_y ? "a curve has the same quality at two rates"
                         : "a curve has two points at the same rate";
        return -1;
    }
    return 0;
}

int qm_bd_rate(const double *ra, const double *qa, size_t na,
               const double *rt, const double *qt, size_t nt,
               QmBdInterp m, double *pct, const char **why)
{
    Curve a, t;
    double gap;
    if (make_curves(ra, qa, na, rt, qt, nt, true, &a, &t, why) ||
        mean_gap(&a, &t, m, &gap, why))
        return -1;
    *pct = (pow(10.0, gap) - 1.0) * 100.0;
    return 0;
}

int qm_bd_quality(const double *ra, const double *qa, size_t na,
                  const double *rt, const double *qt, size_t nt,
                  QmBdInterp m, double *delta, const char **why)
{
    Curve a, t;
    if (make_curves(ra, qa, na, rt, qt, nt, false, &a, &t, why))
        return -1;
    return mean_gap(&a, &t, m, delta, why);
}
