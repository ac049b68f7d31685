/* gst-qmetric: Bjøntegaard delta rate and delta quality between two
 * rate-quality curves (G. Bjøntegaard, "Calculation of average PSNR
 * differences between RD-curves", ITU-T VCEG-M33, 2001).
 *
 * Both work on log10(rate).  BD-rate: the mean horizontal distance between
 * the curves (log-rate as a function of quality) over the quality range both
 * cover, given as the percent rate change of the test curve against the
 * anchor at equal quality (negative: the test needs fewer bits).
 * BD-quality (BD-PSNR, BD-VMAF): the mean vertical distance (quality as a
 * function of log-rate) over the log-rate range both cover.
 *
 * Two interpolations, named in every output:
 *  QM_BD_POLY   the original: a cubic polynomial fitted by least squares
 *               (exact through 4 points), integrated exactly;
 *  QM_BD_PCHIP  piecewise cubic Hermite interpolation through the points
 *               (shape-preserving slopes: the weighted harmonic mean of the
 *               neighbouring secants inside, a one-sided three-point
 *               formula at the ends, as MATLAB's pchip and SciPy's
 *               PchipInterpolator compute them), integrated exactly piece
 *               by piece; the form later codec test conditions adopted
 *               because a cubic fit can swing between the points.
 */
#ifndef QM_BD_H
#define QM_BD_H

#include <stddef.h>

typedef enum { QM_BD_PCHIP = 0, QM_BD_POLY } QmBdInterp;

/** Name of an interpolation ("pchip", "polynomial"). */
const char *qm_bd_interp_name(QmBdInterp m);

/**
 * BD-rate in percent of the test curve (rt, qt: nt points) against the
 * anchor (ra, qa: na points).  Rates must be > 0; at least 4 points each
 * (QM_BD_POLY) or 2 (QM_BD_PCHIP), and the qualities of each curve must be
 * distinct.  Returns 0, or -1 with a reason in *why (static text) when the
 * curves do not allow it (too few points, no overlap, repeated qualities).
 */
int qm_bd_rate(const double *ra, const double *qa, size_t na,
               const double *rt, const double *qt, size_t nt,
               QmBdInterp m, double *pct, const char **why);

/** BD-quality: mean quality difference (test - anchor), same rules. */
int qm_bd_quality(const double *ra, const double *qa, size_t na,
                  const double *rt, const double *qt, size_t nt,
                  QmBdInterp m, double *delta, const char **why);

#endif /* QM_BD_H */
