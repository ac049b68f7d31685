/* gst-qmetric: the per-pixel arithmetic of CIEDE2000 (stage 1 of ciede.h),
 * written once for cpu/ciede.c and its twin cuda/ciede.cu (see qm_hd.h).
 *
 * The arithmetic follows the reference's mix of float and double operation by
 * operation (libvmaf src/feature/ciede.c, libvmaf 3.2.0, a port of rust-av's
 * av-metrics), so keep the casts.  libm calls take explicit doubles: C++
 * would otherwise pick float overloads for float arguments, where C promotes
 * them.  With glibc on both sides (the C code; the twin's code compiled for
 * the host by tests/parity/host_arith) the results are the same bits; on the
 * GPU, pow, atan2, sin, cos and exp are CUDA's, and powf(x, 7) is formed in
 * double (qm_ciede_pow7f()): see cuda/ciede.cu.
 */
#ifndef QM_CIEDE_PIXEL_H
#define QM_CIEDE_PIXEL_H

#include <math.h>

#include "qm_hd.h"
#include "ciede.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- colour conversion ---- */

/* sRGB transfer function inverse (IEC 61966-2-1 with av-metrics' threshold
 * 10/255 on the encoded value), in double. */
QM_HD double qm_ciede_srgb_to_linear(double c)
{
    if (c > 10. / 255.)
        return pow((c + 0.055) * (1.0 / 1.055), 2.4);
    return c * (1.0 / 12.92);
}

/* CIE L*a*b* companding f(t), rounded to float as the reference's helper
 * returns float: cube root above (6/29)^3 = 216/24389, else the linear segment
 * (kappa t + 16) / 116 with kappa = 24389/27. */
QM_HD float qm_ciede_lab_f(double t)
{
    if (t > 216.0 / 24389.0)
        return (float)pow(t, 1.0 / 3.0);
    return (float)((24389.0 / 27.0 * t + 16.0) * (1.0 / 116.0));
}

/* One limited-range BT.709 YCbCr sample -> L*a*b* (D65). */
QM_HD QmLab qm_ciede_pixel_lab(double y, double cb, double cr, const QmCiedeConv *cv)
{
    y = (y - cv->y_off) * cv->y_mul;
    cb = (cb - cv->c_off) * cv->c_mul;
    cr = (cr - cv->c_off) * cv->c_mul;

    /* -> R'G'B' with the BT.709 matrix for analogue Y'UV (U, V scaled by
     * 0.436 and 0.615), which av-metrics applies to Cb, Cr normalised to
     * +-0.5; kept as the reference has it (libvmaf ciede.c: "Assumes BT.709") */
    const double r = qm_ciede_srgb_to_linear(y + 1.28033 * cr);
    const double g = qm_ciede_srgb_to_linear(y - 0.21482 * cb - 0.38059 * cr);
    const double b = qm_ciede_srgb_to_linear(y + 2.12798 * cb);

    /* linear sRGB -> XYZ (D65), rows of the sRGB matrix as av-metrics has
     * them; X and Z normalised by the D65 white point (0.95047, 1, 1.08883) */
    const double X = r * 0.4124564390896921 + g * 0.357576077643909 +
                     b * 0.18043748326639894;
    const double Y = r * 0.21267285140562248 + g * 0.715152155287818 +
                     b * 0.07217499330655958;
    const double Z = r * 0.019333895582329317 + g * 0.119192025881303 +
                     b * 0.9503040785363677;
    const double fx = qm_ciede_lab_f(X * (1.0 / 0.95047));
    const double fy = qm_ciede_lab_f(Y);
    const double fz = qm_ciede_lab_f(Z * (1.0 / 1.08883));

    QmLab lab;
    lab.l = (float)(116.0 * fy - 16.0);
    lab.a = (float)(500.0 * (fx - fy));
    lab.b = (float)(200.0 * (fy - fz));
    return lab;
}

/* ---- CIEDE2000 ---- */

/* hue angle h' = atan2(b, a') in [0, 2 pi); 0 for the neutral colour */
QM_HD float qm_ciede_hue_angle(float b, float a_prime)
{
    if (b == 0.0f && a_prime == 0.0f)
        return 0.0f;
    float h = (float)atan2((double)b, (double)a_prime);
    if (h < 0.0f)
        h = (float)(h + 2. * M_PI);
    return h;
}

/* delta h', gated by the unprimed chromas as av-metrics does */
QM_HD float qm_ciede_hue_delta(float c1, float c2, float h1, float h2)
{
    if (c1 == 0.0f || c2 == 0.0f)
        return 0.0f;
    if ((double)fabsf(h1 - h2) <= M_PI)
        return h2 - h1;
    if (h2 <= h1)
        return (float)((h2 - h1) + 2. * M_PI);
    return (float)((h2 - h1) - 2. * M_PI);
}

/* mean hue H-bar' (without the zero-chroma and > 2 pi cases of the paper) */
QM_HD float qm_ciede_hue_mean(float h1, float h2)
{
    if (fabs((double)(h1 - h2)) > M_PI)
        return (float)(((h1 + h2) + 2.0 * M_PI) / 2.0);
    return (float)((h1 + h2) / 2.0);
}

/* T(H-bar'), the hue weighting function of CIEDE2000, in double */
QM_HD float qm_ciede_hue_weight(float h)
{
    const double hd = h;
    return (float)(1.0 - 0.17 * cos(hd - M_PI / 6.0) + 0.24 * cos(2.0 * hd) +
                   0.32 * cos(3.0 * hd + M_PI / 30.0) -
                   0.20 * cos(4.0 * hd - 7.0 * M_PI / 20.0));
}

/* x^7 rounded to float, formed in double: x^2 is exact, the rest carries a
 * relative error of a few 2^-53 before the rounding to float, so this is the
 * correctly rounded value but for ~1e-8 of the arguments.  glibc's powf (of
 * the C code) rounds a double approximation of its own and differs from it in
 * the last bit for ~1e-3 of the arguments (tests/parity/host_arith counts
 * them), which reaches ~1e-6 of the pixels' differences, in their last bit;
 * CUDA's powf is less accurate than either. */
QM_HD float qm_ciede_pow7f_double(float x)
{
    const double x1 = x, x2 = x1 * x1, x3 = x2 * x1, x6 = x3 * x3;
    return (float)(x6 * x1);
}

/* the reference's powf(x, 7): glibc's on the host, the above on the GPU */
QM_HD float qm_ciede_pow7f(float x)
{
#ifdef __CUDA_ARCH__
    return qm_ciede_pow7f_double(x);
#else
    return powf(x, 7);
#endif
}

/* R_T, the blue-region rotation term: -2 sqrt(C^7 / (C^7 + 25^7))
 * sin(60 deg * exp(-((H - 275 deg) / 25 deg)^2)); here C^7 is formed as
 * powf, and the angles round through float as the reference's helpers do */
QM_HD float qm_ciede_rotation_term(float c_bar_prime, float h_bar_prime)
{
    const float h_deg = (float)(h_bar_prime * (180.0 / M_PI));
    const float t = (float)((h_deg - 275.0) * (1.0 / 25.0));
    const float c7 = qm_ciede_pow7f(c_bar_prime);
    /* the reference's powf(25, 7), which the compiler folds: 5^14 rounded
     * to float */
    const float ratio = c7 / (c7 + (float)6103515625.0);
    const float theta_deg = (float)(60.0 * exp((double)(-(t * t))));
    const float theta = (float)(theta_deg * (M_PI / 180.0));
    return (float)(-2.0 * sqrt((double)ratio) * sin((double)theta));
}

/* CIEDE2000 colour difference with kL = 0.65, kC = 1, kH = 4. */
QM_HD float qm_ciede_pixel_de2000(QmLab c1, QmLab c2)
{
    /* Weighting factors (libvmaf ciede.c, extract(): default_ksub), floats
     * initialised from double literals (hence the casts: decimal -> double
     * -> float, as there). */
    const float ksub_l = (float)0.65, ksub_c = (float)1.0, ksub_h = (float)4.0;
    /* 25^7, the chroma compensation constant of CIEDE2000, in double */
    const double pow25_7 = 6103515625.0;

    const float dl = c2.l - c1.l;
    const float l_bar = (c1.l + c2.l) / 2;
    const float ch1 = (float)sqrt((double)c1.a * c1.a + (double)c1.b * c1.b);
    const float ch2 = (float)sqrt((double)c2.a * c2.a + (double)c2.b * c2.b);
    const float c_bar = (ch1 + ch2) / 2;

    /* a' = a (1 + G), G = (1 - sqrt(C-bar^7 / (C-bar^7 + 25^7))) / 2 */
    const double cb7 = pow((double)c_bar, 7.0);
    const double g = 1 - sqrt(cb7 / (cb7 + pow25_7));
    const float a1p = (float)(c1.a + (c1.a / 2) * g);
    const float a2p = (float)(c2.a + (c2.a / 2) * g);
    const float c1p = (float)sqrt((double)a1p * a1p + (double)c1.b * c1.b);
    const float c2p = (float)sqrt((double)a2p * a2p + (double)c2.b * c2.b);
    const float c_bar_p = (c1p + c2p) / 2;
    const float dc = c2p - c1p;

    const float lm = l_bar - 50;
    const double lm2 = (double)lm * lm;
    const float s_l = (float)(1. + (0.015 * lm2) / sqrt(20 + lm2));
    const float s_c = (float)(1. + 0.045 * c_bar_p);

    const float h1 = qm_ciede_hue_angle(c1.b, a1p);
    const float h2 = qm_ciede_hue_angle(c2.b, a2p);
    const float dh = qm_ciede_hue_delta(ch1, ch2, h1, h2);
    const float dH = (float)(2.0 * sqrt((double)(c1p * c2p)) * sin(dh / 2.0));
    const float h_bar = qm_ciede_hue_mean(h1, h2);
    const float t = qm_ciede_hue_weight(h_bar);
    const float s_h = (float)(1.0 + 0.015 * c_bar_p * t);
    const float r_t = qm_ciede_rotation_term(c_bar_p, h_bar);

    const float tl = dl / (ksub_l * s_l);
    const float tc = dc / (ksub_c * s_c);
    const float th = dH / (ksub_h * s_h);
    return (float)sqrt((double)tl * tl + (double)tc * tc + (double)th * th +
                       r_t * tc * th);
}

#endif /* QM_CIEDE_PIXEL_H */
