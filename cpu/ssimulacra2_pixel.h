/* gst-qmetric: the per-pixel arithmetic of SSIMULACRA2, written once for
 * cpu/ssimulacra2.c and its twin cuda/ssimulacra2.cu (see qm_hd.h).
 *
 * The definition is libjxl's tool (tools/ssimulacra2.cc, v0.12.0) reading a
 * 16-bit RGB PNG; its float arithmetic is reproduced operation by operation,
 * including where its Highway code fuses a multiply and an add (FMA on the
 * AVX2 and AVX-512 targets the reference values come from): those places
 * call fmaf(), everything else is plain float or double arithmetic
 * (-ffp-contract=off, nvcc --fmad=false).  Builds of libjxl without FMA
 * differ from the reference by up to 1.19 points on a 4K frame, so which
 * operations are fused is part of the specification here:
 *
 *   fused: the sRGB decoding polynomial (lib/jxl/cms, TF_SRGB), the opsin
 *          mixing and the cube root of the XYB conversion (lib/jxl/enc_xyb.cc,
 *          base/fast_math-inl.h CubeRootAndAdd), both passes of the
 *          recursive Gaussian (tools/gauss_blur.cc);
 *   not fused: the PNG sample scaling, MakePositiveXYB, the 2x2 average of
 *          the pyramid, the products blurred for the variances, the SSIM
 *          and edge maps and the pooling (baseline x86-64 code, no FMA).
 */
#ifndef QM_SSIMULACRA2_PIXEL_H
#define QM_SSIMULACRA2_PIXEL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "qm_hd.h"

/* Unrolled in both compilers: the loops over a group's four outputs, so
 * that the C code vectorises the loop over the lanes around them. */
#ifdef __CUDACC__
#define QM_SSIMU2_UNROLL _Pragma("unroll")
#else
#define QM_SSIMU2_UNROLL _Pragma("GCC unroll 4")
#endif

/* ---- YCbCr -> 16-bit R'G'B' (the golden set's conversion) ---- */

/* One side's conversion, from the matrix's Kr, Kb and the range
 * (qm_ssimu2_conv_init()): Y' = (Y - y_off) / y_div, C = (C - c_off) / c_div,
 * R = Y' + r_cr Cr, G = Y' - g_cb Cb - g_cr Cr, B = Y' + b_cb Cb, in double
 * and in that order; then each of R, G, B clipped to 0..1, times 65535,
 * rounded half up. */
typedef struct QmSsimu2Conv {
    double y_off, y_div, c_off, c_div;
    double r_cr, g_cb, g_cr, b_cb;
} QmSsimu2Conv;

QM_HD uint16_t qm_ssimu2_q16(double v)
{
    v = v < 0. ? 0. : v > 1. ? 1. : v;
    return (uint16_t)floor(v * 65535. + 0.5);
}

QM_HD void qm_ssimu2_rgb16(int y, int cb, int cr, const QmSsimu2Conv *cv,
                           uint16_t rgb[3])
{
    const double yn = ((double)y - cv->y_off) / cv->y_div;
    const double u = ((double)cb - cv->c_off) / cv->c_div;
    const double v = ((double)cr - cv->c_off) / cv->c_div;
    rgb[0] = qm_ssimu2_q16(yn + cv->r_cr * v);
    rgb[1] = qm_ssimu2_q16(yn - cv->g_cb * u - cv->g_cr * v);
    rgb[2] = qm_ssimu2_q16(yn + cv->b_cb * u);
}

/* ---- 16-bit sRGB sample -> linear light ---- */

/* The PNG reader's scaling (lib/jxl/base/float.h LoadFloatRow: v times the
 * float 1 / 65535), then the sRGB decoding of the colour management (the
 * rational polynomial of TF_SRGB::DisplayFromEncoded, evaluated by Horner's
 * scheme with FMA, and a division). */
QM_HD float qm_ssimu2_linear(uint16_t v)
{
    const float x = (float)v * (1.0f / 65535.0f);
    if (!(x > 0.04045f))
        return x * (1.0f / 12.92f);
    float p = 8.210152774e-01f, q = 6.521209011e-03f;
    p = fmaf(p, x, 7.961564959e-01f);
    q = fmaf(q, x, -5.512498495e-02f);
    p = fmaf(p, x, 1.624820318e-01f);
    q = fmaf(q, x, 4.987528350e-01f);
    p = fmaf(p, x, 1.043637593e-02f);
    q = fmaf(q, x, 1.076976492e+00f);
    p = fmaf(p, x, 2.200248328e-04f);
    q = fmaf(q, x, 2.631846970e-01f);
    return p / q;
}

/* ---- linear RGB -> XYB, made positive ---- */

QM_HD float qm_ssimu2_as_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

QM_HD uint32_t qm_ssimu2_as_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

/* cbrt(x) + add for x >= 0 (CubeRootAndAdd: an exponent estimate, three
 * Newton steps on x^(-1/3), a final one, then x * r^2 + add). */
QM_HD float qm_ssimu2_cbrt_add(float x, float add)
{
    const float k1_3 = 1.0f / 3, k4_3 = 4.0f / 3;
    const float xa_3 = k1_3 * x;
    const uint32_t bits = qm_ssimu2_as_bits(x);
    const uint32_t est = bits == 0 ? 0 : 0x54800000u - (bits >> 23) * 0x002AAAAAu;
    float r = qm_ssimu2_as_float(est);
    float r2 = r * r;
    r = fmaf(-xa_3, r2 * r2, k4_3 * r);
    r2 = r * r;
    r = fmaf(-xa_3, r2 * r2, k4_3 * r);
    r2 = r * r;
    r = fmaf(-xa_3, r2 * r2, k4_3 * r);
    r2 = r * r;
    r = fmaf(k1_3, fmaf(-x, r2 * r2, r), r);
    r2 = r * r;
    return fmaf(r2, x, add);
}

/* Linear sRGB -> XYB (opsin absorbance matrix of lib/jxl/cms/opsin_params.h
 * at intensity target 255, the bias 0.0037930732552754493f, cube roots less
 * the bias's), then ssimulacra2's MakePositiveXYB: X * 14 + 0.42, Y + 0.01,
 * (B - Y) + 0.55. */
QM_HD void qm_ssimu2_xyb(float r, float g, float b, float out[3])
{
    const float bias = 0.0037930732552754493f;
    /* -cbrtf(bias) (glibc; also the correctly rounded cube root) */
    const float neg_cbrt_bias = -0x1.3f64eap-3f;
    const float m00 = 0.30f, m02 = 0.078f, m01 = 1.0f - m02 - m00;
    const float m10 = 0.23f, m12 = 0.078f, m11 = 1.0f - m12 - m10;
    const float m20 = 0.24342268924547819f, m21 = 0.20476744424496821f;
    const float m22 = 1.0f - m20 - m21;
    float mx0 = fmaf(m00, r, fmaf(m01, g, fmaf(m02, b, bias)));
    float mx1 = fmaf(m10, r, fmaf(m11, g, fmaf(m12, b, bias)));
    float mx2 = fmaf(m20, r, fmaf(m21, g, fmaf(m22, b, bias)));
    mx0 = mx0 < 0.0f ? 0.0f : mx0;
    mx1 = mx1 < 0.0f ? 0.0f : mx1;
    mx2 = mx2 < 0.0f ? 0.0f : mx2;
    mx0 = qm_ssimu2_cbrt_add(mx0, neg_cbrt_bias);
    mx1 = qm_ssimu2_cbrt_add(mx1, neg_cbrt_bias);
    mx2 = qm_ssimu2_cbrt_add(mx2, neg_cbrt_bias);
    const float x = 0.5f * (mx0 - mx1);
    const float y = 0.5f * (mx0 + mx1);
    out[0] = x * 14.0f + 0.42f;
    out[1] = y + 0.01f;
    out[2] = (mx2 - y) + 0.55f;
}

/* ---- the pyramid: 2x2 average in linear light ---- */

/* Downsample(): the four samples (the last row / column repeated at odd
 * sizes) summed from 0 in raster order, times 1/4. */
QM_HD float qm_ssimu2_avg4(float a, float b, float c, float d)
{
    float s = 0.0f;
    s += a;
    s += b;
    s += c;
    s += d;
    return s * 0.25f;
}

/* ---- the recursive Gaussian (sigma 1.5) ---- */

/* CreateRecursiveGaussian(1.5) (Charalampidis 2016, truncated cosines):
 * radius 5 and three second-order filters k = 1, 3, 5, each
 *   y[n] = n2 (x[n - 6] + x[n + 4]) - d1 y[n - 1] - y[n - 2]
 * (zero outside the picture), the output being y1 + (y3 + y5).  The
 * constants are the floats the reference rounds its double computation to
 * (tests/ssimulacra2_test.c recomputes them); d1 of k = 5 is -2 cos(pi/2)
 * in double, not 0.  The horizontal pass evaluates four outputs at once
 * from the previous two: mul_in[j], mul_prev[j], mul_prev2[j] are output
 * j's weights of the group's first input sum, of y[n - 1] and of y[n - 2]
 * (the sympy expansion in gauss_blur.cc). */
#define QM_SSIMU2_RADIUS 5

typedef struct QmSsimu2Iir {
    float n2[3], d1[3];
    float mul_in[3][4], mul_prev[3][4], mul_prev2[3][4];
} QmSsimu2Iir;

QM_HD QmSsimu2Iir qm_ssimu2_iir(void)
{
    const QmSsimu2Iir g = {
        { 0x1.c4fa84p-5f, -0x1.e1fd7ap-5f, 0x1.a8894ap-7f },
        { -0x1.e6f0e2p+0f, -0x1.2cf23p+0f, -0x1.1a6264p-53f },
        { { 0x1.c4fa84p-5f, 0x1.aecee8p-4f, 0x1.287a74p-3f, 0x1.5c87fap-3f },
          { -0x1.e1fd7ap-5f, -0x1.1b4e84p-4f, -0x1.70352cp-6f, 0x1.5e2fb4p-5f },
          { 0x1.a8894ap-7f, 0x1.d44a64p-60f, -0x1.a8894ap-7f, -0x1.d44a64p-59f } },
        { { 0x1.e6f0e2p+0f, 0x1.4f1bbcp+1f, 0x1.89f188p+1f, 0x1.9e377ap+1f },
          { 0x1.2cf23p+0f, 0x1.87221ap-2f, -0x1.73fd62p-1f, -0x1.3c6ef4p+0f },
          { 0x1.1a6264p-53f, -0x1p+0f, -0x1.1a6264p-52f, 0x1p+0f } },
        { { -0x1p+0f, -0x1.e6f0e2p+0f, -0x1.4f1bbcp+1f, -0x1.89f188p+1f },
          { -0x1p+0f, -0x1.2cf23p+0f, -0x1.87221ap-2f, 0x1.73fd62p-1f },
          { -0x1p+0f, -0x1.1a6264p-53f, 0x1p+0f, 0x1.1a6264p-52f } },
    };
    return g;
}

/* The filters below run on n lines side by side ("lanes"): value i of lane
 * l is at a[i * n + l].  A lane's state is y[n - 1] (p1) and y[n - 2] (p2)
 * of each k: p1[k * n + l], p2[k * n + l].  The C code runs a row's 16
 * blurred planes (or a whole row of columns) as lanes, so that the loops
 * over l vectorise with each lane doing the reference's scalar sequence; a
 * CUDA thread runs one lane (n = 1). */

/* Horizontal pass, one output alone (the first outputs, and those the
 * groups of four leave at the end of a row): s[l] is x[n - 6] + x[n + 4]. */
QM_HD void qm_ssimu2_h1(const QmSsimu2Iir *g, float *restrict p1,
                        float *restrict p2, const float *restrict s,
                        float *restrict out, int n)
{
    for (int l = 0; l < n; l++) {
        float o[3];
        QM_UNROLL
        for (int k = 0; k < 3; k++) {
            float v = s[l] * g->mul_in[k][0];
            v = fmaf(g->mul_prev2[k][0], p2[k * n + l], v);
            v = fmaf(g->mul_prev[k][0], p1[k * n + l], v);
            p2[k * n + l] = p1[k * n + l];
            p1[k * n + l] = v;
            o[k] = v;
        }
        out[l] = o[0] + (o[1] + o[2]);
    }
}

/* Horizontal pass, outputs n .. n + 3 from their input sums s[j * n + l]
 * (j = 0..3) into out[j * n + l], as the vector lanes of FastGaussian1D
 * compute them (a weight the lane does not have is a zero product there:
 * left out). */
QM_HD void qm_ssimu2_h4(const QmSsimu2Iir *g, float *restrict p1,
                        float *restrict p2, const float *restrict s,
                        float *restrict out, int n)
{
    for (int l = 0; l < n; l++) {
        float o[3][4];
        QM_SSIMU2_UNROLL
        for (int k = 0; k < 3; k++) {
            QM_SSIMU2_UNROLL
            for (int j = 0; j < 4; j++) {
                float v = s[l] * g->mul_in[k][j];
                QM_SSIMU2_UNROLL
                for (int i = 1; i <= j; i++)
                    v = fmaf(g->mul_in[k][j - i], s[i * n + l], v);
                v = fmaf(g->mul_prev2[k][j], p2[k * n + l], v);
                v = fmaf(g->mul_prev[k][j], p1[k * n + l], v);
                o[k][j] = v;
            }
            p2[k * n + l] = o[k][2];
            p1[k * n + l] = o[k][3];
        }
        QM_SSIMU2_UNROLL
        for (int j = 0; j < 4; j++)
            out[j * n + l] = o[0][j] + (o[1][j] + o[2][j]);
    }
}

/* Vertical pass, one output per lane from the input sums s[l] (x[n - 6] +
 * x[n + 4]): VerticalBlock's n2 s - (d1 y[n - 1] + y[n - 2]) with both
 * products fused.  y[n] is written over p2: the caller swaps p1 and p2
 * before the next row. */
QM_HD void qm_ssimu2_v1(const QmSsimu2Iir *g, const float *restrict p1,
                        float *restrict p2, const float *restrict s,
                        float *restrict out, int n)
{
    for (int l = 0; l < n; l++) {
        float o[3];
        QM_UNROLL
        for (int k = 0; k < 3; k++) {
            o[k] = fmaf(g->n2[k], s[l],
                        -fmaf(g->d1[k], p1[k * n + l], p2[k * n + l]));
            p2[k * n + l] = o[k];
        }
        out[l] = o[0] + (o[1] + o[2]);
    }
}

/* ---- the error maps ---- */

/* 1 - SSIM' at one pixel (SSIMMap(): no luminance denominator, kC2 =
 * 0.0009), not yet clamped at 0. */
QM_HD double qm_ssimu2_ssim(float mu1, float mu2, float s11, float s22,
                            float s12)
{
    const float mu11 = mu1 * mu1, mu22 = mu2 * mu2, mu12 = mu1 * mu2;
    const float dm = mu1 - mu2;
    const float num_m = (float)(1.0 - (double)(dm * dm));
    const float num_s = 2.0f * (s12 - mu12) + 0.0009f;
    const float denom_s = (s11 - mu11) + (s22 - mu22) + 0.0009f;
    return 1.0 - (double)(num_m * num_s / denom_s);
}

/* EdgeDiffMap()'s ratio less 1: > 0 where the distorted picture has an
 * edge the original lacks (ringing, blocking), < 0 where it lost one. */
QM_HD double qm_ssimu2_edge(float img1, float mu1, float img2, float mu2)
{
    return (1.0 + (double)fabsf(img2 - mu2)) /
           (1.0 + (double)fabsf(img1 - mu1)) - 1.0;
}

QM_HD double qm_ssimu2_quartic(double x)
{
    x *= x;
    x *= x;
    return x;
}

#endif /* QM_SSIMULACRA2_PIXEL_H */
