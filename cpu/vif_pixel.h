/* gst-qmetric: the per-pixel arithmetic of VIF (stage 1 of vif.h), written
 * once for cpu/vif.c and its twin cuda/vif.cu (see qm_hd.h): the mirrored
 * border, the table log2, the local (co)variances from the filtered sums,
 * and the VIF terms of a pixel, all as libvmaf integer_vif.c evaluates
 * them (see vif.c for the derivation of each rounding).
 */
#ifndef QM_VIF_PIXEL_H
#define QM_VIF_PIXEL_H

#include <stdint.h>
#include <stdlib.h>

#include "qm_hd.h"
#include "vif.h"

/* libvmaf integer_vif.c: sigma_nsq = 65536 << 1, the noise variance 2.0
 * (as in the float VIF) in the Q16 variance unit. */
#define QM_VIF_SIGMA_NSQ (2 << 16)

/* libvmaf pads each scale's picture with mirrored rows (row -k is row k,
 * row h-1+k is row h-1-k) and each filtered row with mirrored columns the
 * same way.  Its padding copies are sequential, so a pad wider than the
 * picture reflects again at the far edge: the extension is periodic with
 * period 2 (n - 1).  (With n = 1 the reference reads samples left over
 * from earlier work, which is why that size is refused.) */
QM_HD int qm_vif_mirror(int i, int n)
{
    if ((unsigned)i < (unsigned)n)
        return i;
    if (n < 2)
        return 0;
    const int period = 2 * (n - 1);
    i = abs(i) % period;
    return i < n ? i : period - i;
}

/* libvmaf integer_vif.h log2_32 / log2_64: 2048 log2(x) from the 16 most
 * significant bits of x (the rest truncated) and the table
 * (qm_vif_log2_table()), for x >= 2^17 (so that at least one bit is
 * shifted out and the index lands in 32768 .. 65535). */
QM_HD int32_t qm_vif_log2_32(const uint16_t *tab, uint32_t x)
{
    const int k = 16 - qm_hd_clz32(x);
    return (int32_t)qm_hd_ldg_u16(tab + (x >> k)) + 2048 * k;
}

QM_HD int32_t qm_vif_log2_64(const uint16_t *tab, uint64_t x)
{
    const int k = 48 - qm_hd_clz64(x);
    return (int32_t)qm_hd_ldg_u16(tab + (x >> k)) + 2048 * k;
}

/* The local statistics of a pixel from its horizontally filtered sums:
 * a1, a2 the means (Q24 of the normalised sample, unshifted), fxx, fyy,
 * fxy the second moments already brought to Q16 (>> 16 with rounding).
 * The squares of the means go to Q16 by >> 32 with rounding; differences
 * are taken modulo 2^32 and read as signed, and sigma2^2 is clamped at 0
 * (libvmaf vif_statistic_*: mu*_sq_val, xx/yy/xy_filt_val). */
QM_HD void qm_vif_sigmas(uint32_t a1, uint32_t a2, uint32_t fxx, uint32_t fyy,
                         uint32_t fxy, int32_t *s11, int32_t *s22, int32_t *s12)
{
    const uint32_t mu1_sq = (uint32_t)(((uint64_t)a1 * a1 + 0x80000000u) >> 32);
    const uint32_t mu2_sq = (uint32_t)(((uint64_t)a2 * a2 + 0x80000000u) >> 32);
    const uint32_t mu12 = (uint32_t)(((uint64_t)a1 * a2 + 0x80000000u) >> 32);
    const int32_t v2 = (int32_t)(fyy - mu2_sq);
    *s11 = (int32_t)(fxx - mu1_sq);
    *s22 = v2 > 0 ? v2 : 0;
    *s12 = (int32_t)(fxy - mu12);
}

/* The VIF terms of one pixel from its local statistics (Q16, s22 >= 0),
 * added to *acc (libvmaf vif_statistic_*, the part after the filters).  In
 * Q11 log2 units:
 *   den term: log2(sigma_n^2 + sigma1^2) - 17, i.e. log2(1 + sigma1^2/2)
 *             with 2^17 = sigma_n^2 in Q16;
 *   num term: log2(sv^2 + sigma_n^2 + g^2 sigma1^2) - log2(sv^2 + sigma_n^2),
 *             only where sigma12 > 0 and sigma2^2 > 0.
 * g and sv^2 are evaluated in double exactly as the reference writes them
 * (eps = 65536e-10 in g's denominator; sv^2 truncated to an integer and
 * clamped at 0; g capped at the enhancement gain limit after sv^2 is
 * formed; g^2 sigma1^2 truncated to an integer). */
QM_HD void qm_vif_pixel_terms(int32_t s11, int32_t s22, int32_t s12,
                              const uint16_t *tab, double egl, QmVifAccum *acc)
{
    const double eps = 65536 * 1.0e-10;
    if (s11 < QM_VIF_SIGMA_NSQ) {
        acc->num_non_log += s22;
        acc->den_non_log++;
        return;
    }
    acc->den_log += qm_vif_log2_32(tab, (uint32_t)s11 + QM_VIF_SIGMA_NSQ) - 2048 * 17;
    if (s12 <= 0 || s22 <= 0)
        return;
    double g = s12 / (s11 + eps);
    /* (int32_t) of the difference, then max(., 0): any difference below 1
     * (the reference's int conversion of a huge negative value included)
     * gives 0; sv < s22 <= INT32_MAX here (g s12 > 0), so the conversion
     * is exact */
    const double sv = s22 - g * s12;
    const uint32_t sv_sq = sv >= 1.0 ? (uint32_t)(int32_t)sv : 0;
    g = g < egl ? g : egl;
    const uint32_t numer1 = sv_sq + QM_VIF_SIGMA_NSQ;
    const int64_t numer2 = (int64_t)(g * g * s11) + numer1;
    acc->num_log += qm_vif_log2_64(tab, (uint64_t)numer2) - qm_vif_log2_64(tab, numer1);
}

#endif /* QM_VIF_PIXEL_H */
