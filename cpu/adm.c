/* gst-qmetric: ADM, as libvmaf's integer "adm" feature extractor
 * (integer_adm.c, integer_adm.h, barten_csf_tools.h, libvmaf 3.2.0)
 * computes it, bit for bit.  See adm.h for the stages.
 *
 * Features: integer_adm2 (the VMAF model input: DLM numerator / denominator
 * over 4 scales), integer_adm_scale0..3 (the same per scale), integer_aim
 * (additive impairment measure) and integer_adm3 (a blend of both).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adm.h"
#include "cpu.h"
#include "metric.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Loops with 64-bit products stay scalar: without SSE4/AVX, GCC's vector
 * emulation of 64-bit multiplies is slower than scalar code. */
#if defined(__GNUC__) && !defined(__clang__)
#define QM_SCALAR_LOOPS __attribute__((noinline, optimize("no-tree-vectorize")))
#else
#define QM_SCALAR_LOOPS __attribute__((noinline))
#endif

/* ------------------------------------------------------------------------ */
/* Constants                                                                 */
/* ------------------------------------------------------------------------ */

/* Daubechies-2 analysis filters: adm.h; the low-pass taps sum to 46342
 * (sqrt(2) in Q15, integer_adm.h dwt2_db2_coeffs_lo_sum), the high-pass
 * taps to 0. */
#define DB2_LO QM_ADM_DB2_LO
#define DB2_HI QM_ADM_DB2_HI
#define DB2_LO_SUM 46342

/* Border excluded from the sums: 10 % of each side (ADM_BORDER_FACTOR). */
#define BORDER_FACTOR 0.1

/* Watson et al. 1997, "Visibility of wavelet quantization noise", table IV
 * (luma: a, k, f0, g per orientation ll, lh, hh, hl) and table V (basis
 * function amplitudes A[level][orientation]), as libvmaf integer_adm.h
 * (dwt_7_9_YCbCr_threshold[0], dwt_7_9_basis_function_amplitudes) holds
 * them, in float. */
static const float WATSON_A = 0.495f, WATSON_K = 0.466f, WATSON_F0 = 0.401f;
static const float WATSON_G[4] = { 1.501f, 1.0f, 0.534f, 1.0f };
static const float WATSON_AMP[6][4] = {
    { 0.62171f, 0.67234f, 0.72709f, 0.67234f },
    { 0.34537f, 0.41317f, 0.49428f, 0.41317f },
    { 0.18004f, 0.22727f, 0.28688f, 0.22727f },
    { 0.091401f, 0.11792f, 0.15214f, 0.11792f },
    { 0.045943f, 0.059758f, 0.077727f, 0.059758f },
    { 0.023013f, 0.030018f, 0.039156f, 0.030018f },
};

/* The reference's defaults (integer_adm.h DEFAULT_ADM_*). */
#define DEF_EGL 100.0
#define DEF_NVD 3.0
#define DEF_RDH 1080
#define DEF_NOISE_WEIGHT 0.03125
#define DEF_DLM_WEIGHT 0.5
#define CSF_LUMINANCE 100.0 /* cd/m^2, DEFAULT_ADM_CSF_LUM (Barten CSF) */

enum { CSF_WATSON = 0, CSF_BARTEN, CSF_BLEND, CSF_BLEND_MAE };

/* ------------------------------------------------------------------------ */
/* CSF weights (host)                                                        */
/* ------------------------------------------------------------------------ */

/* Display visual resolution in pixels per degree (Watson eq. 1; ~56.55 at
 * 3 x 1080), in float as the reference. */
static float display_resolution(double nvd, int rdh)
{
    return (float)(nvd * rdh * M_PI / 180.0);
}

/* Watson's quantisation step of DWT level `lambda`, orientation `theta`
 * (eq. 9 with the luma parameters); the CSF weight is its reciprocal.  The
 * float/double mix is the reference's (integer_adm.c dwt_quant_step). */
static float watson_quant_step(int lambda, int theta, double nvd, int rdh)
{
    const float r = display_resolution(nvd, rdh);
    const float t = (float)log10(pow(2.0, lambda + 1) * WATSON_F0 *
                                 WATSON_G[theta] / r);
    const float kt2 = WATSON_K * t * t; /* float products */
    return (float)(2.0 * WATSON_A * pow(10.0, kt2) / WATSON_AMP[lambda][theta]);
}

/* Barten's CSF as simplified in HDR-VDP 2.2.1 (Mantiuk et al. 2011), with
 * the parameters libvmaf barten_csf_tools.h tabulates: per adaptation
 * luminance (cd/m^2) the four neural CSF parameters, then the optical MTF
 * and the rod/cone sensitivity.  Float/double mix as the reference. */
static const float BARTEN_LUM[6] = { 0.002f, 0.02f, 0.2f, 2.0f, 20.0f, 150.0f };
static const float BARTEN_P[6][4] = {
    { 0.991265f, 3.74038f, 0.50722f, 4.46044f },
    { 0.800889f, 3.54104f, 0.682505f, 4.94958f },
    { 0.476505f, 4.37453f, 0.750315f, 5.28678f },
    { 0.405782f, 4.40602f, 0.935314f, 5.61425f },
    { 0.334278f, 3.79542f, 1.07327f, 6.4635f },
    { 0.394533f, 2.7755f, 1.16577f, 7.45665f },
};
static const float BARTEN_SA[4] = { 30.162f, 4.0627f, 1.6596f, 0.2712f };
static const float BARTEN_MTF_A[4] = { 0.424838596301290f, 0.572435103936480f,
                                       0.000167576239164937f,
                                       0.00255872352306433f };
static const float BARTEN_MTF_B[4] = { 0.028f, 0.37f, 37.0f, 360.0f };

static float lerpf(float x0, float y0, float x1, float y1, float x)
{
    return y0 + ((y1 - y0) / (x1 - x0)) * (x - x0);
}

static float barten_csf(int lambda, double nvd, int rdh, double lum,
                        double csf_scale)
{
    const float r = display_resolution(nvd, rdh);
    const float f = (float)(r / pow(2, lambda + 1)); /* cycles per degree */
    double l = lum < BARTEN_LUM[0] ? BARTEN_LUM[0]
             : lum > BARTEN_LUM[5] ? BARTEN_LUM[5] : lum;
    int k = 0;
    for (int i = 0; i < 5; i++)
        if (l >= BARTEN_LUM[i] && l <= BARTEN_LUM[i + 1]) {
            k = i;
            break;
        }
    const float x0 = (float)log10(BARTEN_LUM[k]);
    const float x1 = (float)log10(BARTEN_LUM[k + 1]);
    const float x = (float)log10(l);
    float p[4];
    for (int i = 0; i < 4; i++)
        p[i] = lerpf(x0, BARTEN_P[k][i], x1, BARTEN_P[k + 1][i], x);
    const float a = (float)(1.0f + pow(p[0] * f, p[1]));
    const float b = (float)(1.0f / pow(1 - exp(-pow(f / 7, 2)), p[2]));
    const float ncsf = (float)(p[3] / pow(a * b, 0.5));
    float mtf = 0.0f;
    for (int i = 0; i < 4; i++)
        mtf = (float)(mtf + BARTEN_MTF_A[i] * exp(-BARTEN_MTF_B[i] * f));
    const float lf = (float)lum;
    const float rod_cone = (float)(BARTEN_SA[0] *
        pow(pow(BARTEN_SA[1] / lf, BARTEN_SA[2]) + 1, -BARTEN_SA[3]));
    return (float)(ncsf * mtf * rod_cone * csf_scale);
}

/* Blended Barten/Watson CSF weights, tabulated per display (libvmaf
 * barten_csf_tools.h BLENDED_CSF_<height>_<distance>H[_MAE]): [theta][scale]
 * with theta 0 = horizontal/vertical, 1 = diagonal.  Mode 3 (_MAE) is the
 * set fitted after the L1-optimisation fix of the v1.0.17 models. */
typedef struct BlendTable {
    int rdh;
    double nvd;
    float w[2][2][4]; /* [mode 2 / mode 3][theta][scale] */
} BlendTable;

static const BlendTable BLEND[] = {
    { 1080, 3.0, { { { 0.01183f, 0.025026f, 0.04295f, 0.058621f },
                     { 0.004302f, 0.011778f, 0.023918f, 0.035901f } },
                   { { 0.011249f, 0.022606f, 0.035930f, 0.045673f },
                     { 0.004097f, 0.010921f, 0.021430f, 0.031313f } } } },
    { 1080, 5.0, { { { 0.004212f, 0.014809f, 0.029642f, 0.047464f },
                     { 0.000984f, 0.005852f, 0.0146f, 0.027574f } },
                   { { 0.004052f, 0.013939f, 0.026298f, 0.038833f },
                     { 0.000927f, 0.005544f, 0.013415f, 0.024515f } } } },
    /* 2160 at 1.5 H has the pixel density of 1080 at 3 H */
    { 2160, 1.5, { { { 0.01183f, 0.025026f, 0.04295f, 0.058621f },
                     { 0.004302f, 0.011778f, 0.023918f, 0.035901f } },
                   { { 0.011249f, 0.022606f, 0.035930f, 0.045673f },
                     { 0.004097f, 0.010921f, 0.021430f, 0.031313f } } } },
    { 2160, 3.0, { { { 0.00226f, 0.01183f, 0.025026f, 0.04295f },
                     { 0.000479f, 0.004302f, 0.011778f, 0.023918f } },
                   { { 0.002166f, 0.011249f, 0.022606f, 0.035930f },
                     { 0.000447f, 0.004097f, 0.010921f, 0.021430f } } } },
    { 2160, 5.0, { { { 0.000092f, 0.004212f, 0.014809f, 0.029642f },
                     { 0.000050f, 0.000984f, 0.005852f, 0.0146f } },
                   { { 0.000077f, 0.004052f, 0.013939f, 0.026298f },
                     { 0.000045f, 0.000927f, 0.005544f, 0.013415f } } } },
    { 720, 3.0, { { { 0.018715f, 0.035637f, 0.052798f, 0.061509f },
                    { 0.007999f, 0.018396f, 0.031851f, 0.037718f } },
                  { { 0.017329f, 0.030870f, 0.042134f, 0.047410f },
                    { 0.007509f, 0.016707f, 0.028072f, 0.032722f } } } },
    { 720, 5.0, { { { 0.010144f, 0.022561f, 0.040309f, 0.05672f },
                    { 0.003463f, 0.010282f, 0.021839f, 0.034641f } },
                  { { 0.009689f, 0.020577f, 0.034162f, 0.044523f },
                    { 0.003302f, 0.009579f, 0.019661f, 0.030318f } } } },
    { 480, 3.0, { { { 0.027961f, 0.045875f, 0.060275f, 0.056234f },
                    { 0.013572f, 0.026277f, 0.036959f, 0.034511f } },
                  { { 0.024969f, 0.037825f, 0.046676f, 0.043974f },
                    { 0.012511f, 0.023424f, 0.032139f, 0.030166f } } } },
    { 480, 5.0, { { { 0.016781f, 0.032822f, 0.05032f, 0.061594f },
                    { 0.00691f, 0.016545f, 0.029917f, 0.037777f } },
                  { { 0.015665f, 0.028766f, 0.040612f, 0.047483f },
                    { 0.006514f, 0.015107f, 0.026476f, 0.032776f } } } },
};

/* CSF weights of a scale: f[0] for h and v, f[1] for d. */
static int csf_weights(const QmAdmParams *p, int scale, float f[2])
{
    switch (p->csf_mode) {
    case CSF_WATSON:
        for (int t = 0; t < 2; t++) /* Watson orientations 1 (lh), 2 (hh) */
            f[t] = 1.0f / watson_quant_step(scale, t + 1, p->norm_view_dist,
                                            p->ref_display_height);
        return 0;
    case CSF_BARTEN:
        /* adm_csf_scale and adm_csf_diag_scale are not offered: 1.0 */
        for (int t = 0; t < 2; t++)
            f[t] = barten_csf(scale, p->norm_view_dist, p->ref_display_height,
                              CSF_LUMINANCE, 1.0);
        return 0;
    case CSF_BLEND:
    case CSF_BLEND_MAE:
        for (size_t i = 0; i < sizeof(BLEND) / sizeof(BLEND[0]); i++) {
            const BlendTable *b = &BLEND[i];
            if (b->rdh == p->ref_display_height && b->nvd == p->norm_view_dist) {
                for (int t = 0; t < 2; t++)
                    f[t] = b->w[p->csf_mode - CSF_BLEND][t][scale];
                return 0;
            }
        }
        /* the reference returns -EINVAL as a weight: not a result */
        return QM_EINVAL;
    default:
        return QM_EINVAL;
    }
}

/* ------------------------------------------------------------------------ */
/* Recipe of a scale (host)                                                  */
/* ------------------------------------------------------------------------ */

/* ceil(log2(x)) converted to an unsigned shift as the reference does. */
static int ceil_log2(double x)
{
    return (int)(uint32_t)ceil(log2(x));
}

/* (uint32_t)pow(2, s - 1): the rounding term of a shift by s (0 for s = 0,
 * where the reference's out-of-range conversion yields 0 on x86-64). */
static int64_t half_of(int s)
{
    return s > 0 ? (int64_t)1 << (s - 1) : 0;
}

/* The reference converts the float weights to fixed point with plain
 * casts to uint16_t (scale 0) and uint32_t: truncations.  Barten's weights
 * (csf mode 1) exceed 1 and overflow those types; on x86-64 the reference's
 * conversions then wrap modulo 2^16 / 2^32, which (uintN_t)(int64_t) of
 * the truncated value reproduces.  Kept, as the reference computes it. */
static int64_t to_fixed(double x)
{
    return (int64_t)x;
}

int qm_adm_scale_setup(QmAdmScaleQ *q, int scale, int in_w, int in_h,
                       int bpc, const QmAdmParams *p)
{
    memset(q, 0, sizeof(*q));
    /* integer_adm.c extract(): the 16-bit pipeline cannot represent an
     * angular frequency below that of 1080 lines seen at 3 H */
    if (p->norm_view_dist * p->ref_display_height < DEF_NVD * DEF_RDH)
        return QM_EINVAL;
    float f[2];
    int err = csf_weights(p, scale, f);
    if (err)
        return err;
    q->rfactor[0] = q->rfactor[1] = f[0];
    q->rfactor[2] = f[1];

    q->scale = scale;
    q->in_w = in_w;
    q->in_h = in_h;
    const int w = q->w = (in_w + 1) / 2;
    const int h = q->h = (in_h + 1) / 2;

    /* Regions (integer_adm.c: adm_decouple, adm_csf, adm_cm, ...): the sums
     * skip int(n * 0.1 - 0.5) samples on each side; decoupling and CSF run
     * one sample further out on the low side and two on the high side (the
     * masking filter's taps), clipped to the band. */
    const int bx = (int)(w * BORDER_FACTOR - 0.5);
    const int by = (int)(h * BORDER_FACTOR - 0.5);
    q->roi = (QmAdmRect){ bx, by, w - bx, h - by };
    const int wx = (int)(w * BORDER_FACTOR - 0.5 - 1);
    const int wy = (int)(h * BORDER_FACTOR - 0.5 - 1);
    q->work = (QmAdmRect){ QM_MAX(wx, 0), QM_MAX(wy, 0),
                           QM_MIN(w - wx + 2, w), QM_MIN(h - wy + 2, h) };
    const int roi_w = q->roi.x1 - q->roi.x0, roi_h = q->roi.y1 - q->roi.y0;

    if (scale == 0) {
        /* adm_dwt2_8 / adm_dwt2_16: the vertical pass centres the samples
         * (subtracts the low-pass gain times half the range) and drops bpc
         * bits, the horizontal pass 16 bits; bands are int16. */
        q->v_offset = (int64_t)DB2_LO_SUM << (bpc - 1);
        q->v_add = (int64_t)1 << (bpc - 1);
        q->v_shift = bpc;
        q->h_add = 32768;
        q->h_shift = 16;
        q->narrow16 = 1;

        /* adm_csf / adm_cm: 16-bit weights, the h/v weight in Q21 and the
         * d weight in Q23, results brought back to the bands' Q format by
         * shifts of 15 and 17 (the d rounding term is 65535, not 65536).
         * At 3 H x 1080 the Watson weights are the reference's literals. */
        int64_t rf[3];
        if (fabs(p->norm_view_dist * p->ref_display_height - DEF_NVD * DEF_RDH) < 1.0e-8 &&
            p->csf_mode == CSF_WATSON) {
            rf[0] = rf[1] = 36453;
            rf[2] = 49417;
        } else {
            rf[0] = rf[1] = (uint16_t)to_fixed(q->rfactor[0] * pow(2, 21));
            rf[2] = (uint16_t)to_fixed(q->rfactor[2] * pow(2, 23));
        }
        static const int csf_shift[3] = { 15, 15, 17 };
        static const int64_t csf_add[3] = { 16384, 16384, 65535 };
        for (int t = 0; t < 3; t++) {
            q->csf_mul[t] = rf[t];
            q->csf_shift[t] = csf_shift[t];
            q->csf_add[t] = csf_add[t];
        }
        /* 1/30 and 1/15 in Q17 (FIX_ONE_BY_30 = 4369, ONE_BY_15 = 8738),
         * keeping 5 fractional bits after the shift by 12 */
        q->flt_mul = 4369;
        q->ctr_mul = 8738;
        q->flt_add = q->ctr_add = 2048;
        q->flt_shift = q->ctr_shift = 12;

        /* adm_cm: x = src * weight unshifted (Q+21 / Q+23), so the
         * threshold (5 fractional bits) is shifted up by 10 / 12 bits;
         * squares drop 29 / 30 bits, cubes ceil(log2(w)) - 4 / - 3, rows
         * ceil(log2(h)); what is left is a float scaled by 2^52 / 2^57. */
        q->x_add = 0;
        q->x_shift = 0;
        static const int thr_shift[3] = { 10, 10, 12 };
        static const int sq_shift[3] = { 29, 29, 30 };
        static const int cub_less[3] = { 4, 4, 3 };
        static const int exp0[3] = { 52, 52, 57 };
        q->row_shift = ceil_log2(h);
        q->row_add = half_of(q->row_shift);
        for (int t = 0; t < 3; t++) {
            q->thr_shift[t] = thr_shift[t];
            q->sq_shift[t] = sq_shift[t];
            q->sq_add[t] = (int64_t)1 << (sq_shift[t] - 1);
            /* the reference converts through uint32_t; for the widths ADM
             * accepts (33 and up: w >= 17 here) the value is positive and
             * this is the same number, without the undefined conversion of
             * a negative double that narrower test widths would hit */
            q->cub_shift[t] = (int)(int64_t)ceil(log2(w) - cub_less[t]);
            q->cub_add[t] = half_of(q->cub_shift[t]);
            q->num_exp[t] = exp0[t] - q->cub_shift[t] - q->row_shift;
        }
        q->num_float_div = 0;

        /* adm_csf_den_scale: plain cubes of |band| (int16), rows shifted
         * by ceil(log2(area)) - 20 (when positive) so that the 64-bit sum
         * cannot overflow; 6 pending bits per factor -> 2^18. */
        q->dsq_add = 0;
        q->dsq_shift = 0;
        q->dcub_add = 0;
        q->dcub_shift = 0;
        int s = (int)ceil(log2((double)(roi_h * roi_w)) - 20);
        q->drow_shift = s > 0 ? s : 0;
        q->drow_add = (uint64_t)half_of(q->drow_shift);
        q->den_exp = 18 - q->drow_shift;
    } else {
        /* adm_dwt2_s123_combined: int64 accumulation, per-scale rounding
         * (vertical: none / 16 / 16 bits, horizontal: 15 / 16 / 15). */
        static const int64_t v_add[3] = { 0, 32768, 32768 };
        static const int v_shift[3] = { 0, 16, 16 };
        static const int64_t h_add[3] = { 16384, 32768, 16384 };
        static const int h_shift[3] = { 15, 16, 15 };
        q->v_offset = 0;
        q->v_add = v_add[scale - 1];
        q->v_shift = v_shift[scale - 1];
        q->h_add = h_add[scale - 1];
        q->h_shift = h_shift[scale - 1];
        q->narrow16 = 0;

        /* i4_adm_csf / i4_adm_cm: weights in Q32 (uint32), results shifted
         * by 28 with rounding. */
        for (int t = 0; t < 3; t++) {
            q->csf_mul[t] = (uint32_t)to_fixed(q->rfactor[t] * pow(2, 32));
            q->csf_add[t] = (int64_t)1 << 27;
            q->csf_shift[t] = 28;
        }
        /* 1/30 and 1/15 in Q32 (FIX_ONE_BY_30 = 143165577, I4_ONE_BY_15 =
         * 286331153).  The reference's rounding term is (int32_t)(1u << 31),
         * i.e. -2^31: these terms round down by half a unit.  Kept. */
        q->flt_mul = 143165577;
        q->ctr_mul = 286331153;
        q->flt_add = q->ctr_add = -((int64_t)1 << 31);
        q->flt_shift = q->ctr_shift = 32;

        /* i4_adm_cm: x is the CSF value itself; squares drop 30 bits, cubes
         * ceil(log2(w)), rows ceil(log2(h)); float scaled by 2^45 / 2^39 /
         * 2^36 at scales 1 / 2 / 3. */
        static const int exps[3] = { 45, 39, 36 };
        q->x_add = (int64_t)1 << 27;
        q->x_shift = 28;
        q->row_shift = ceil_log2(h);
        q->row_add = half_of(q->row_shift);
        for (int t = 0; t < 3; t++) {
            q->thr_shift[t] = 0;
            q->sq_shift[t] = 30;
            q->sq_add[t] = (int64_t)1 << 29;
            q->cub_shift[t] = ceil_log2(w);
            q->cub_add[t] = half_of(q->cub_shift[t]);
            q->num_exp[t] = exps[scale - 1] - q->cub_shift[t] - q->row_shift;
        }
        q->num_float_div = 1;

        /* adm_csf_den_s123: squares drop 31 / 30 / 31 bits (rounding term
         * 2^shift, not 2^(shift-1): the reference's), cubes
         * ceil(log2(roi width)), rows ceil(log2(roi height)); float scaled
         * by 2^32 / 2^27 / 2^23. */
        static const int dsq[3] = { 31, 30, 31 };
        static const int dexp[3] = { 32, 27, 23 };
        q->dsq_shift = dsq[scale - 1];
        q->dsq_add = (uint64_t)1 << q->dsq_shift;
        q->dcub_shift = ceil_log2(roi_w);
        q->dcub_add = (uint64_t)half_of(q->dcub_shift);
        q->drow_shift = ceil_log2(roi_h);
        q->drow_add = (uint64_t)half_of(q->drow_shift);
        q->den_exp = dexp[scale - 1] - q->drow_shift - q->dcub_shift;
    }
    return 0;
}

void qm_adm_recip_table(int32_t *recip)
{
    recip[0] = 0;
    for (int m = 1; m < QM_ADM_RECIP_SIZE; m++)
        recip[m] = (int32_t)((1 << 30) / m);
}

/* ------------------------------------------------------------------------ */
/* Stage DWT                                                                 */
/* ------------------------------------------------------------------------ */

/* Mirror of the DWT taps: index -k reads k, index n + k reads n - 1 - k
 * (integer_adm.c dwt2_src_indices_filt). */
static inline int dwt_mirror(int i, int n)
{
    return i < 0 ? -i : (i >= n ? 2 * n - 1 - i : i);
}

/* Scale 0 works in int16/int32 (vectorisable, 16-bit multiplies).  The
 * reference subtracts DB2_LO_SUM * 2^(bpc-1) from the low-pass sum to
 * centre the unsigned samples; since the low-pass taps sum to DB2_LO_SUM
 * and the high-pass taps to 0, subtracting 2^(bpc-1) from every sample
 * first gives the same sums, and centred samples fit int16 up to 16 bits.
 * No sum can overflow int32: sum |taps| * 2^15 = 54822 * 32768 < 2^31. */
static void dwt0_centre(const uint8_t *row, int bpc, int n, int16_t *restrict out)
{
    const int half = 1 << (bpc - 1);
    if (bpc == 8) {
        for (int j = 0; j < n; j++)
            out[j] = (int16_t)(row[j] - half);
    } else {
        const uint16_t *r16 = (const uint16_t *)row;
        for (int j = 0; j < n; j++)
            out[j] = (int16_t)(r16[j] - half);
    }
}

static void dwt0_vertical(const int16_t *restrict r0, const int16_t *restrict r1,
                          const int16_t *restrict r2, const int16_t *restrict r3,
                          int n, int32_t add, int sh, int16_t *restrict lo,
                          int16_t *restrict hi)
{
    for (int j = 0; j < n; j++) {
        const int32_t l = DB2_LO[0] * r0[j] + DB2_LO[1] * r1[j] +
                          DB2_LO[2] * r2[j] + DB2_LO[3] * r3[j];
        const int32_t h = DB2_HI[0] * r0[j] + DB2_HI[1] * r1[j] +
                          DB2_HI[2] * r2[j] + DB2_HI[3] * r3[j];
        lo[j] = (int16_t)((l + add) >> sh);
        hi[j] = (int16_t)((h + add) >> sh);
    }
}

/* Horizontal pass, output column j from input columns c0..c3. */
#define DWT0_POINT(j, c0, c1, c2, c3)                                        \
    do {                                                                     \
        const int32_t l0 = lo[c0], l1 = lo[c1], l2 = lo[c2], l3 = lo[c3];    \
        const int32_t h0 = hi[c0], h1 = hi[c1], h2 = hi[c2], h3 = hi[c3];    \
        a[j] = (int16_t)((DB2_LO[0] * l0 + DB2_LO[1] * l1 + DB2_LO[2] * l2 + \
                          DB2_LO[3] * l3 + 32768) >> 16);                    \
        bv[j] = (int16_t)((DB2_HI[0] * l0 + DB2_HI[1] * l1 + DB2_HI[2] * l2 +\
                           DB2_HI[3] * l3 + 32768) >> 16);                   \
        bh[j] = (int16_t)((DB2_LO[0] * h0 + DB2_LO[1] * h1 + DB2_LO[2] * h2 +\
                           DB2_LO[3] * h3 + 32768) >> 16);                   \
        bd[j] = (int16_t)((DB2_HI[0] * h0 + DB2_HI[1] * h1 + DB2_HI[2] * h2 +\
                           DB2_HI[3] * h3 + 32768) >> 16);                   \
    } while (0)

static void dwt0_horizontal(const int16_t *restrict lo, const int16_t *restrict hi,
                            int n, int w, int32_t *restrict a,
                            int32_t *restrict bh, int32_t *restrict bv,
                            int32_t *restrict bd)
{
    /* interior: taps 2j-1 .. 2j+2 all inside (n >= 5 guarantees w >= 3) */
    const int end = w - 2;
    DWT0_POINT(0, 1, 0, 1, 2);
    for (int j = 1; j < end; j++)
        DWT0_POINT(j, 2 * j - 1, 2 * j, 2 * j + 1, 2 * j + 2);
    for (int j = QM_MAX(end, 1); j < w; j++)
        DWT0_POINT(j, dwt_mirror(2 * j - 1, n), dwt_mirror(2 * j, n),
                   dwt_mirror(2 * j + 1, n), dwt_mirror(2 * j + 2, n));
}

static void dwt0_row(const void *const src[4], int bpc, const QmAdmScaleQ *q,
                     int32_t *const band[4], int32_t *restrict tmp)
{
    const int n = q->in_w;
    int16_t *t16 = (int16_t *)tmp, *lo = t16 + 4 * (size_t)n, *hi = lo + n;
    for (int k = 0; k < 4; k++)
        dwt0_centre(src[k], bpc, n, t16 + k * (size_t)n);
    dwt0_vertical(t16, t16 + n, t16 + 2 * (size_t)n, t16 + 3 * (size_t)n, n,
                  (int32_t)q->v_add, q->v_shift, lo, hi);
    dwt0_horizontal(lo, hi, n, q->w, band[0], band[1], band[2], band[3]);
}

/* Scales 1-3: int32 band a in, int64 sums (the reference's; the values
 * grow by about 2^16 per scale).  Vertical pass of one output row. */
static void dwt_vertical(const int32_t *restrict r0, const int32_t *restrict r1,
                         const int32_t *restrict r2, const int32_t *restrict r3,
                         int n, int64_t add, int sh, int32_t *restrict lo,
                         int32_t *restrict hi)
{
    for (int j = 0; j < n; j++) {
        const int64_t s0 = r0[j], s1 = r1[j], s2 = r2[j], s3 = r3[j];
        const int64_t l = DB2_LO[0] * s0 + DB2_LO[1] * s1 + DB2_LO[2] * s2 +
                          DB2_LO[3] * s3;
        const int64_t h = DB2_HI[0] * s0 + DB2_HI[1] * s1 + DB2_HI[2] * s2 +
                          DB2_HI[3] * s3;
        lo[j] = (int32_t)((l + add) >> sh);
        hi[j] = (int32_t)((h + add) >> sh);
    }
}

#define DWT_POINT(j, c0, c1, c2, c3)                                         \
    do {                                                                     \
        const int64_t l0 = lo[c0], l1 = lo[c1], l2 = lo[c2], l3 = lo[c3];    \
        const int64_t h0 = hi[c0], h1 = hi[c1], h2 = hi[c2], h3 = hi[c3];    \
        a[j] = (int32_t)((DB2_LO[0] * l0 + DB2_LO[1] * l1 + DB2_LO[2] * l2 + \
                          DB2_LO[3] * l3 + add) >> sh);                      \
        bv[j] = (int32_t)((DB2_HI[0] * l0 + DB2_HI[1] * l1 + DB2_HI[2] * l2 +\
                           DB2_HI[3] * l3 + add) >> sh);                     \
        bh[j] = (int32_t)((DB2_LO[0] * h0 + DB2_LO[1] * h1 + DB2_LO[2] * h2 +\
                           DB2_LO[3] * h3 + add) >> sh);                     \
        bd[j] = (int32_t)((DB2_HI[0] * h0 + DB2_HI[1] * h1 + DB2_HI[2] * h2 +\
                           DB2_HI[3] * h3 + add) >> sh);                     \
    } while (0)

static void dwt_horizontal(const int32_t *restrict lo, const int32_t *restrict hi,
                           int n, int w, int64_t add, int sh,
                           int32_t *restrict a, int32_t *restrict bh,
                           int32_t *restrict bv, int32_t *restrict bd)
{
    const int end = w - 2;
    DWT_POINT(0, 1, 0, 1, 2);
    for (int j = 1; j < end; j++)
        DWT_POINT(j, 2 * j - 1, 2 * j, 2 * j + 1, 2 * j + 2);
    for (int j = QM_MAX(end, 1); j < w; j++)
        DWT_POINT(j, dwt_mirror(2 * j - 1, n), dwt_mirror(2 * j, n),
                  dwt_mirror(2 * j + 1, n), dwt_mirror(2 * j + 2, n));
}

static void dwt123_row(const void *const src[4], const QmAdmScaleQ *q,
                       int32_t *const band[4], int32_t *restrict tmp)
{
    const int n = q->in_w;
    int32_t *lo = tmp, *hi = tmp + n;
    dwt_vertical(src[0], src[1], src[2], src[3], n, q->v_add, q->v_shift, lo, hi);
    dwt_horizontal(lo, hi, n, q->w, q->h_add, q->h_shift, band[0], band[1],
                   band[2], band[3]);
}

void qm_adm_dwt_row_c(const void *const src[4], int bpc, const QmAdmScaleQ *q,
                      int32_t *const band[4], int32_t *restrict tmp)
{
    if (q->scale == 0)
        dwt0_row(src, bpc, q, band, tmp);
    else
        dwt123_row(src, q, band, tmp);
}

void qm_adm_dwt_rows(const void *src, ptrdiff_t src_stride, const QmAdmScaleQ *q,
                     int i, const void *rows[4])
{
    for (int k = 0; k < 4; k++)
        rows[k] = (const uint8_t *)src + dwt_mirror(2 * i - 1 + k, q->in_h) * src_stride;
}

void qm_adm_dwt_c(const void *src, ptrdiff_t src_stride, int bpc,
                  const QmAdmScaleQ *q, int32_t *const band[4],
                  ptrdiff_t band_stride, int32_t *restrict tmp)
{
    for (int i = 0; i < q->h; i++) {
        const void *rows[4];
        int32_t *b[4];
        qm_adm_dwt_rows(src, src_stride, q, i, rows);
        for (int k = 0; k < 4; k++)
            b[k] = (int32_t *)((uint8_t *)band[k] + i * band_stride);
        qm_adm_dwt_row_c(rows, bpc, q, b, tmp);
    }
}

/* ------------------------------------------------------------------------ */
/* Masking terms (part of stage decouple)                                   */
/* ------------------------------------------------------------------------ */

#define ROW(p, stride, i) ((p) + (i) * ((stride) / (ptrdiff_t)sizeof(*(p))))

/* |x| as uint32, 2^31 for INT32_MIN (what the reference's abs() yields on
 * x86-64 for it, where abs() itself is undefined and compilers may widen
 * it differently) */
static inline uint32_t uabs32(int32_t x)
{
    return x < 0 ? 0u - (uint32_t)x : (uint32_t)x;
}

/* Scales 1-3: 64-bit products (scalar, see QM_SCALAR_LOOPS). */
static QM_SCALAR_LOOPS void
mask_row_wide(const int32_t *restrict x, int n, const QmAdmScaleQ *q, int t,
              int32_t *restrict fs, int32_t *restrict cs)
{
    const int csh = q->csf_shift[t], fsh = q->flt_shift, ksh = q->ctr_shift;
    const int64_t mul = q->csf_mul[t], add = q->csf_add[t];
    const int64_t fm = q->flt_mul, fa = q->flt_add, km = q->ctr_mul, ka = q->ctr_add;
    for (int j = 0; j < n; j++) {
        const int32_t y = (int32_t)((mul * x[j] + add) >> csh);
        const int64_t ay = y < 0 ? -(int64_t)y : y;
        fs[j] += (int32_t)((fm * ay + fa) >> fsh);
        cs[j] += (int32_t)((km * ay + ka) >> ksh);
    }
}

/* One orientation of a row: adds |y| / 30 to fs and |y| / 15 to cs.
 * Scale 0 (n16) fits int32 throughout, which vectorises: |x| <= 22931 (the
 * DWT's gains bound every scale-0 band) times a 16-bit weight < 2^31, and
 * |y| < 2^15 times 4369 or 8738 likewise. */
static inline __attribute__((always_inline)) void
mask_row(const int32_t *restrict x, int n, const QmAdmScaleQ *q, int t,
         int n16, int32_t *restrict fs, int32_t *restrict cs)
{
    const int csh = q->csf_shift[t], fsh = q->flt_shift, ksh = q->ctr_shift;
    if (n16) {
        const int32_t mul = (int32_t)q->csf_mul[t], add = (int32_t)q->csf_add[t];
        const int32_t fm = (int32_t)q->flt_mul, fa = (int32_t)q->flt_add;
        const int32_t km = (int32_t)q->ctr_mul, ka = (int32_t)q->ctr_add;
        for (int j = 0; j < n; j++) {
            const int32_t y = (int16_t)((mul * x[j] + add) >> csh);
            const int32_t ay = y < 0 ? -y : y;
            fs[j] += (int16_t)((fm * ay + fa) >> fsh);
            cs[j] += (int16_t)((km * ay + ka) >> ksh);
        }
        return;
    }
    mask_row_wide(x, n, q, t, fs, cs);
}

/* Masking planes of a row chunk of one band set: sum = sum_t |y_t| / 30,
 * ctr = sum_t |y_t| / 15 - sum. */
static void mask_chunk(const int32_t *const x[3], int n, const QmAdmScaleQ *q,
                       int32_t *restrict su, int32_t *restrict ce)
{
    for (int j = 0; j < n; j++)
        su[j] = ce[j] = 0;
    for (int t = 0; t < 3; t++) {
        if (q->narrow16)
            mask_row(x[t], n, q, t, 1, su, ce);
        else
            mask_row(x[t], n, q, t, 0, su, ce);
    }
    for (int j = 0; j < n; j++)
        ce[j] -= su[j];
}

/* ------------------------------------------------------------------------ */
/* Stage decouple                                                            */
/* ------------------------------------------------------------------------ */

/* k = t / o in Q15 clipped to [0, 1] (integer_adm.c adm_decouple_s123; at
 * scale 0 the reference indexes its table by o directly, which gives the
 * same k for every int16 o).  1/|o| comes from the table: |o| >= 2^15
 * (scales 1-3 only, `wide`) is first rounded to 15 significant bits, the
 * dropped bits being added back to the final shift.  to = t * sign(o),
 * ao = |o|: sign handling without branches (the signs are random). */
static inline __attribute__((always_inline)) int64_t
decouple_gain(int32_t o, uint32_t ao, int64_t to, const int32_t *recip, int wide)
{
    uint32_t m = ao;
    int sh = 0;
    if (wide) {
        const int s = 17 - __builtin_clz(m | 1);
        sh = m >= 32768 ? s : 0;
        m = (m + ((1u << sh) >> 1)) >> sh;
    }
    int64_t k = ((int64_t)recip[m] * to + ((int64_t)1 << (14 + sh))) >> (15 + sh);
    k = k < 0 ? 0 : (k > 32768 ? 32768 : k);
    return o == 0 ? 32768 : k;
}

/* x + y wrapping (int32 extremes at scales 1-3 reach 2^63), as the
 * reference's int64 sums compile */
static inline int64_t sum64(int64_t x, int64_t y)
{
    return (int64_t)((uint64_t)x + (uint64_t)y);
}

/* x * sign for a sign mask sm (0 or -1) */
static inline int64_t apply_sign(int64_t x, int64_t sm)
{
    return (x ^ sm) - sm;
}

/* Columns per chunk of the angle flags (a stack buffer). */
#define DECOUPLE_CHUNK 256

static inline __attribute__((always_inline)) void
decouple_row(const int32_t *const ref[3], const int32_t *const dis[3], int x0,
             int x1, const QmAdmScaleQ *q, double egl, const int32_t *recip,
             int32_t *const rst[3], int32_t *const add[3],
             int32_t *const mask_r[2], int32_t *const mask_a[2], int wide)
{
    /* cos^2(1 degree) in float (integer_adm.c adm_decouple) */
    const double cos1sq = (float)(cos(1.0 * M_PI / 180.0) * cos(1.0 * M_PI / 180.0));
    /* egl as an exact integer when it is one (1 and 100 in practice) */
    const int64_t egl_int = egl == floor(egl) && egl <= (1 << 20) ? (int64_t)egl : 0;
    uint8_t angle[DECOUPLE_CHUNK];
    const int32_t *oh = ref[0], *ov = ref[1], *th = dis[0], *tv = dis[1];
    for (int j0 = x0; j0 < x1; j0 += DECOUPLE_CHUNK) {
        const int n = QM_MIN(DECOUPLE_CHUNK, x1 - j0);
        /* Is the angle between (oh, ov) and (th, tv) below 1 degree?
         * (o.t >= 0 and (o.t)^2 >= cos^2(1deg) |o|^2 |t|^2, the 64-bit
         * integers rounded to float and compared in double.  The
         * reference divides each by 4096 first: exact, so left out.) */
        for (int j = 0; j < n; j++) {
            const int64_t a = oh[j0 + j], b = ov[j0 + j];
            const int64_t c = th[j0 + j], d = tv[j0 + j];
            const double dot = (float)sum64(a * c, b * d);
            const double oo = (float)sum64(a * a, b * b);
            const double tt = (float)sum64(c * c, d * d);
            angle[j] = (dot >= 0.0) & (dot * dot >= cos1sq * oo * tt);
        }
        for (int b = 0; b < 3; b++) {
            const int32_t *o = ref[b] + j0, *t = dis[b] + j0;
            int32_t *r = rst[b] + j0, *a = add[b] + j0;
            for (int j = 0; j < n; j++) {
                const int32_t ob = o[j], tb = t[j];
                const int64_t sm = ob >> 31; /* 0 or -1 */
                const int64_t to = apply_sign(tb, sm);
                const int64_t k = decouple_gain(ob, (uint32_t)apply_sign(ob, sm),
                                                to, recip, wide);
                const int32_t rs = (int32_t)((k * ob + 16384) >> 15);
                /* Where the orientation is kept, the restored part may
                 * exceed the reference by the gain limit, up to dis
                 * itself: min(rs * egl, t) for o > 0, max() for o < 0,
                 * the double truncated to an integer (the reference
                 * tests the sign of k * o in float: k > 0 and o's
                 * sign).  t is an integer, so truncating first and
                 * clamping in integers is the same; an integral egl
                 * gives an exact integer product.  max(g, t) is done
                 * as -min(-g, -t). */
                const int64_t g = egl_int ? rs * egl_int : (int64_t)(rs * egl);
                const int64_t go = apply_sign(g, sm);
                const int64_t lim = apply_sign(go < to ? go : to, sm);
                const int use = angle[j] & (k > 0) & (ob != 0);
                const int32_t rv = use ? (int32_t)lim : rs;
                r[j] = rv;
                a[j] = (int32_t)((uint32_t)tb - (uint32_t)rv); /* wraps */
            }
        }
        /* the masking planes of both parts, while the chunk is hot */
        const int32_t *cr[3], *ca[3];
        for (int b = 0; b < 3; b++) {
            cr[b] = rst[b] + j0;
            ca[b] = add[b] + j0;
        }
        mask_chunk(cr, n, q, mask_r[0] + j0, mask_r[1] + j0);
        mask_chunk(ca, n, q, mask_a[0] + j0, mask_a[1] + j0);
    }
}

void qm_adm_decouple_row_c(const int32_t *const ref[3], const int32_t *const dis[3],
                           int x0, int x1, const QmAdmScaleQ *q, double egl,
                           const int32_t *recip, int32_t *const rst[3],
                           int32_t *const add[3], int32_t *const mask_r[2],
                           int32_t *const mask_a[2])
{
    if (q->scale == 0)
        decouple_row(ref, dis, x0, x1, q, egl, recip, rst, add, mask_r, mask_a, 0);
    else
        decouple_row(ref, dis, x0, x1, q, egl, recip, rst, add, mask_r, mask_a, 1);
}

void qm_adm_decouple_c(const int32_t *const ref[3], const int32_t *const dis[3],
                       ptrdiff_t stride, const QmAdmScaleQ *q, double egl,
                       const int32_t *recip, int32_t *const rst[3],
                       int32_t *const add[3], int32_t *const mask_r[2],
                       int32_t *const mask_a[2])
{
    const QmAdmRect *rc = &q->work;
    for (int i = rc->y0; i < rc->y1; i++) {
        const int32_t *o[3], *t[3];
        int32_t *r[3], *a[3], *mr[2], *ma[2];
        for (int b = 0; b < 3; b++) {
            o[b] = ROW(ref[b], stride, i);
            t[b] = ROW(dis[b], stride, i);
            r[b] = ROW(rst[b], stride, i);
            a[b] = ROW(add[b], stride, i);
        }
        for (int b = 0; b < 2; b++) {
            mr[b] = ROW(mask_r[b], stride, i);
            ma[b] = ROW(mask_a[b], stride, i);
        }
        qm_adm_decouple_row_c(o, t, rc->x0, rc->x1, q, egl, recip, r, a, mr, ma);
    }
}

/* ------------------------------------------------------------------------ */
/* Stage numerator sums (contrast masking)                                   */
/* ------------------------------------------------------------------------ */

/* Columns per chunk of the threshold row (a stack buffer). */
#define NUM_CHUNK 512

/* Sum over a row chunk of the cubed masked terms of one orientation,
 * the reference's arithmetic as is (64-bit products, scalar). */
static QM_SCALAR_LOOPS int64_t
num_row(const int32_t *restrict src, const int32_t *restrict thr, int n,
        const QmAdmScaleQ *q, int t)
{
    const int64_t mul = q->csf_mul[t], xadd = q->x_add, sqa = q->sq_add[t];
    const int64_t cuba = q->cub_add[t];
    const int xsh = q->x_shift, ts = q->thr_shift[t], sqs = q->sq_shift[t];
    const int cubs = q->cub_shift[t];
    int64_t in = 0;
    for (int j = 0; j < n; j++) {
        const int32_t x = (int32_t)((mul * src[j] + xadd) >> xsh);
        /* the reference's int32 arithmetic, wrapping */
        int32_t m = (int32_t)(uabs32(x) - ((uint32_t)thr[j] << ts));
        m = m < 0 ? 0 : m;
        const int32_t m2 = (int32_t)(((int64_t)m * m + sqa) >> sqs);
        /* the sum wraps as the reference's int64 sum and the SIMD lanes do
         * (reachable only with out-of-range bands; defined arithmetic) */
        in = (int64_t)((uint64_t)in + (uint64_t)(((int64_t)m2 * m + cuba) >> cubs));
    }
    return in;
}

/* The same at scale 0, cheaper: there x = src * weight fits int32 (|src|
 * <= 22931, the bound the DWT's gains put on every scale-0 band, times a
 * 16-bit weight), and while every square m2 stays below 2^31 all terms are
 * non-negative, so unsigned 32x32->64-bit products give the reference's
 * values.  A square of 2^31 or more (which the reference's int32 wraps
 * negative; possible only after a masking term truncated to int16 went
 * negative) is flagged, and the caller recomputes the chunk with
 * num_row(). */
static inline __attribute__((always_inline)) int64_t
num_row0(const int32_t *restrict src, const int32_t *restrict thr, int n,
         const QmAdmScaleQ *q, int t, int *wrapped)
{
    const int32_t mul = (int32_t)q->csf_mul[t];
    const uint64_t sqa = (uint64_t)q->sq_add[t], cuba = (uint64_t)q->cub_add[t];
    const int ts = q->thr_shift[t], sqs = q->sq_shift[t], cubs = q->cub_shift[t];
    uint64_t in = 0;
    uint32_t over = 0;
    for (int j = 0; j < n; j++) {
        const int32_t x = mul * src[j];
        const int32_t ax = x < 0 ? -x : x;
        const int32_t m = (int32_t)((uint32_t)ax - ((uint32_t)thr[j] << ts));
        const uint32_t mu = m < 0 ? 0 : (uint32_t)m;
        const uint32_t m2 = (uint32_t)(((uint64_t)mu * mu + sqa) >> sqs);
        over |= m2;
        in += ((uint64_t)m2 * mu + cuba) >> cubs;
    }
    *wrapped = (int)(over >> 31);
    return (int64_t)in;
}

void qm_adm_num_row_c(const int32_t *const src[3], const int32_t *const sum[3],
                      const int32_t *ctr, const QmAdmScaleQ *q, int64_t in[3])
{
    const QmAdmRect *rc = &q->roi;
    const int w = q->w;
    const int32_t *up = sum[0], *mid = sum[1], *dn = sum[2];
    int32_t vs[NUM_CHUNK + 2], thr[NUM_CHUNK];
    in[0] = in[1] = in[2] = 0;
    for (int j0 = rc->x0; j0 < rc->x1; j0 += NUM_CHUNK) {
        const int n = QM_MIN(NUM_CHUNK, rc->x1 - j0);
        /* vertical 3-sums of columns j0 - 1 .. j0 + n; column -1
         * reads 1, column w reads w - 1 */
        const int c0 = j0 - 1, c1 = j0 + n + 1; /* columns [c0, c1) */
        const int lo = QM_MAX(c0, 0), hi = QM_MIN(c1, w);
        for (int c = lo; c < hi; c++)
            vs[c - c0] = up[c] + mid[c] + dn[c];
        if (c0 < 0)
            vs[0] = up[1] + mid[1] + dn[1];
        if (c1 > w)
            vs[w - c0] = up[w - 1] + mid[w - 1] + dn[w - 1];
        for (int k = 0; k < n; k++)
            thr[k] = vs[k] + vs[k + 1] + vs[k + 2] + ctr[j0 + k];
        for (int t = 0; t < 3; t++) {
            const int32_t *x = src[t] + j0;
            int wrapped = 1;
            int64_t v = 0;
            if (q->narrow16)
                v = num_row0(x, thr, n, q, t, &wrapped);
            if (wrapped)
                v = num_row(x, thr, n, q, t);
            in[t] = (int64_t)((uint64_t)in[t] + (uint64_t)v);  /* wraps, as above */
        }
    }
}

void qm_adm_num_c(const int32_t *const src[3], const int32_t *sum,
                  const int32_t *ctr, ptrdiff_t stride, const QmAdmScaleQ *q,
                  int64_t acc[3])
{
    const QmAdmRect *rc = &q->roi;
    const int h = q->h;
    acc[0] = acc[1] = acc[2] = 0;
    for (int i = rc->y0; i < rc->y1; i++) {
        /* the threshold's taps: row -1 reads row 1, row h reads h - 1 */
        const int32_t *const s3[3] = { ROW(sum, stride, i > 0 ? i - 1 : 1),
                                       ROW(sum, stride, i),
                                       ROW(sum, stride, i + 1 < h ? i + 1 : h - 1) };
        const int32_t *x[3];
        for (int t = 0; t < 3; t++)
            x[t] = ROW(src[t], stride, i);
        int64_t in[3];
        qm_adm_num_row_c(x, s3, ROW(ctr, stride, i), q, in);
        for (int t = 0; t < 3; t++)
            acc[t] += (in[t] + q->row_add) >> q->row_shift;
    }
}

/* ------------------------------------------------------------------------ */
/* Stage denominator sums                                                    */
/* ------------------------------------------------------------------------ */

void qm_adm_den_row_c(const int32_t *const ref[3], const QmAdmScaleQ *q,
                      uint64_t in[3])
{
    const QmAdmRect *rc = &q->roi;
    for (int t = 0; t < 3; t++) {
        const int32_t *s = ref[t];
        uint64_t v = 0;
        if (q->narrow16) {
            /* plain cubes; |x| <= 2^15, so the square fits 32 bits */
            for (int j = rc->x0; j < rc->x1; j++) {
                const uint32_t u = uabs32(s[j]);
                v += (uint64_t)(u * u) * u;
            }
        } else {
            for (int j = rc->x0; j < rc->x1; j++) {
                const uint64_t u = uabs32(s[j]);
                v += (((u * u + q->dsq_add) >> q->dsq_shift) * u +
                      q->dcub_add) >> q->dcub_shift;
            }
        }
        in[t] = v;
    }
}

void qm_adm_den_c(const int32_t *const ref[3], ptrdiff_t stride,
                  const QmAdmScaleQ *q, uint64_t acc[3])
{
    const QmAdmRect *rc = &q->roi;
    acc[0] = acc[1] = acc[2] = 0;
    for (int i = rc->y0; i < rc->y1; i++) {
        const int32_t *r[3];
        uint64_t in[3];
        for (int t = 0; t < 3; t++)
            r[t] = ROW(ref[t], stride, i);
        qm_adm_den_row_c(r, q, in);
        for (int t = 0; t < 3; t++)
            acc[t] += (in[t] + q->drow_add) >> q->drow_shift;
    }
}

/* ------------------------------------------------------------------------ */
/* Host: per-scale values and final scores                                   */
/* ------------------------------------------------------------------------ */

/* Noise floor term cbrt(area * nw) of each orientation, in float. */
static float noise_floor(const QmAdmScaleQ *q, double noise_weight)
{
    const int area = (q->roi.y1 - q->roi.y0) * (q->roi.x1 - q->roi.x0);
    return powf((float)(area * noise_weight), 1.0f / 3.0f);
}

float qm_adm_num_scale(const QmAdmScaleQ *q, const int64_t acc[3],
                       double noise_weight)
{
    const float nf = noise_floor(q, noise_weight);
    float v[3];
    for (int t = 0; t < 3; t++) {
        const double s = pow(2, q->num_exp[t]);
        /* scale 0 divides in double (adm_cm), scales 1-3 in float
         * (i4_adm_cm's final_shift is a float) */
        const float f = q->num_float_div ? (float)acc[t] / (float)s
                                         : (float)((double)acc[t] / s);
        v[t] = powf(f, 1.0f / 3.0f) + nf;
    }
    return v[0] + v[1] + v[2];
}

float qm_adm_den_scale(const QmAdmScaleQ *q, const uint64_t acc[3],
                       double noise_weight)
{
    const float nf = noise_floor(q, noise_weight);
    const double s = pow(2, q->den_exp);
    float v[3];
    for (int t = 0; t < 3; t++) {
        /* the CSF weight is applied after cubing: sum (r x)^3 = r^3 sum x^3 */
        const double csf = (double)acc[t] / s * pow(q->rfactor[t], 3);
        v[t] = powf((float)csf, 1.0f / 3.0f) + nf;
    }
    return v[0] + v[1] + v[2];
}

void qm_adm_scores(const float num[4], const float aim[4], const float den[4],
                   int w, int h, double dlm_weight, double min_val,
                   double *out)
{
    double n = 0, d = 0, an = 0;
    for (int s = 0; s < QM_ADM_SCALES; s++) {
        n += num[s];
        d += den[s];
        an += aim[s];
        out[QM_ADM_SCALE0 + s] = (double)num[s] / (double)den[s];
    }
    /* integer_compute_adm: sums below 1e-10 per 1080p-sized area are 0 */
    const double limit = 1e-10 * (w * h) / (1920.0 * 1080.0);
    if (n < limit)
        n = 0;
    if (d < limit)
        d = 0;
    double adm2 = 1.0, aim_score = 0.0; /* reference: AIM left unset */
    if (d != 0.0) {
        adm2 = n / d;
        aim_score = an / d; /* AIM is normalised by the DLM denominator */
    }
    out[QM_ADM_ADM2] = adm2;
    out[QM_ADM_AIM] = aim_score;
    const double adm3 = adm2 * dlm_weight + (1 - aim_score) * (1 - dlm_weight);
    out[QM_ADM_ADM3] = adm3 > min_val ? adm3 : min_val;
}

/* ------------------------------------------------------------------------ */
/* The metric                                                                */
/* ------------------------------------------------------------------------ */


int qm_adm_setup(QmAdmSetup *st, const QmMetricConfig *cfg)
{
    const double *o = cfg->opt->v;
    memset(st, 0, sizeof(*st));
    if (cfg->bpc < 8 || cfg->bpc > 16)
        return QM_ENOTSUP;
    if (cfg->w < QM_ADM_MIN_SIZE || cfg->h < QM_ADM_MIN_SIZE)
        return QM_ENOTSUP;
    st->w = cfg->w;
    st->h = cfg->h;
    st->bpc = cfg->bpc;
    st->egl = o[QM_ADM_OPT_EGL];
    st->dlm_weight = o[QM_ADM_OPT_DLM_WEIGHT];
    st->min_val = o[QM_ADM_OPT_MIN_VAL];
    st->noise_weight = o[QM_ADM_OPT_NOISE_WEIGHT];
    st->skip_scale0 = o[QM_ADM_OPT_SKIP_SCALE0] != 0.0;
    const QmAdmParams par = {
        .csf_mode = (int)o[QM_ADM_OPT_CSF_MODE],
        .norm_view_dist = o[QM_ADM_OPT_NVD],
        .ref_display_height = (int)o[QM_ADM_OPT_RDH],
    };
    int in_w = cfg->w, in_h = cfg->h;
    for (int k = 0; k < QM_ADM_SCALES; k++) {
        int err = qm_adm_scale_setup(&st->q[k], k, in_w, in_h, cfg->bpc, &par);
        if (err)
            return err;
        in_w = st->q[k].w;
        in_h = st->q[k].h;
    }
    return 0;
}

void qm_adm_dsp_init(QmAdmDsp *dsp, unsigned cpu_flags)
{
    for (int v = 0; v < 2; v++) {
        dsp->dwt_row[v] = qm_adm_dwt_row_c;
        dsp->decouple_row[v] = qm_adm_decouple_row_c;
        dsp->num_row[v] = qm_adm_num_row_c;
        dsp->den_row[v] = qm_adm_den_row_c;
    }
#ifdef QM_HAVE_ADM_AVX2
    if (cpu_flags & QM_CPU_AVX2)
        qm_adm_dsp_init_avx2(dsp);
#endif
#ifdef QM_HAVE_ADM_AVX512
    if (cpu_flags & QM_CPU_AVX512)
        qm_adm_dsp_init_avx512(dsp);
#endif
    (void)cpu_flags;
}

void qm_adm_features(const QmAdmSetup *st, const QmAdmSums *acc,
                     double out[QM_ADM_NFEATURES])
{
    float num[QM_ADM_SCALES], aim[QM_ADM_SCALES], den[QM_ADM_SCALES];
    for (int k = 0; k < QM_ADM_SCALES; k++) {
        const QmAdmScaleQ *q = &st->q[k];
        if (k == 0 && st->skip_scale0) {
            /* adm_skip_scale0: no sums; the reference's denominator */
            num[0] = aim[0] = 0.0f;
            den[0] = 1e-10f;
            continue;
        }
        den[k] = qm_adm_den_scale(q, acc->den[k], st->noise_weight);
        num[k] = qm_adm_num_scale(q, acc->dlm[k], st->noise_weight);
        /* AIM: no noise floor */
        aim[k] = qm_adm_num_scale(q, acc->aim[k], 0.0);
    }
    qm_adm_scores(num, aim, den, st->w, st->h, st->dlm_weight, st->min_val, out);
}

/* Planes of qm_adm_planes_sums(): band a (ping-pong) of both pictures,
 * their detail bands, the decoupled parts and the masking planes. */
enum {
    P_REF_A0, P_REF_A1, P_DIS_A0, P_DIS_A1,
    P_REF_H, P_REF_V, P_REF_D, P_DIS_H, P_DIS_V, P_DIS_D,
    P_RST_H, P_RST_V, P_RST_D, P_ADD_H, P_ADD_V, P_ADD_D,
    P_SUM_A, P_CTR_A, P_SUM_R, P_CTR_R,
    P_COUNT
};

static size_t planes_row(const QmAdmSetup *st)
{
    return ((size_t)st->q[0].w + 15) & ~(size_t)15;
}

size_t qm_adm_planes_scratch(const QmAdmSetup *st)
{
    return P_COUNT * planes_row(st) * (size_t)st->q[0].h + QM_ADM_RECIP_SIZE +
           4 * (size_t)st->w;
}

void qm_adm_planes_sums(const QmAdmSetup *st, const void *ref, ptrdiff_t ref_stride,
                        const void *dis, ptrdiff_t dis_stride, int32_t *scratch,
                        QmAdmSums *acc)
{
    const size_t row = planes_row(st), plane = row * (size_t)st->q[0].h;
    const ptrdiff_t bs = (ptrdiff_t)(row * sizeof(int32_t));
    int32_t *p[P_COUNT];
    for (int i = 0; i < P_COUNT; i++)
        p[i] = scratch + i * plane;
    int32_t *recip = scratch + P_COUNT * plane, *tmp = recip + QM_ADM_RECIP_SIZE;
    qm_adm_recip_table(recip);
    memset(acc, 0, sizeof(*acc));
    for (int k = 0; k < QM_ADM_SCALES; k++) {
        const QmAdmScaleQ *q = &st->q[k];
        const void *ri = ref, *di = dis;
        ptrdiff_t rs = ref_stride, ds = dis_stride;
        if (k > 0) {
            ri = p[P_REF_A0 + ((k - 1) & 1)];
            di = p[P_DIS_A0 + ((k - 1) & 1)];
            rs = ds = bs;
        }
        int32_t *const rb[4] = { p[P_REF_A0 + (k & 1)], p[P_REF_H], p[P_REF_V], p[P_REF_D] };
        int32_t *const db[4] = { p[P_DIS_A0 + (k & 1)], p[P_DIS_H], p[P_DIS_V], p[P_DIS_D] };
        qm_adm_dwt_c(ri, rs, st->bpc, q, rb, bs, tmp);
        qm_adm_dwt_c(di, ds, st->bpc, q, db, bs, tmp);
        if (k == 0 && st->skip_scale0)
            continue;
        const int32_t *const ref3[3] = { rb[1], rb[2], rb[3] };
        const int32_t *const dis3[3] = { db[1], db[2], db[3] };
        int32_t *const rst[3] = { p[P_RST_H], p[P_RST_V], p[P_RST_D] };
        int32_t *const add[3] = { p[P_ADD_H], p[P_ADD_V], p[P_ADD_D] };
        int32_t *const mask_r[2] = { p[P_SUM_R], p[P_CTR_R] };
        int32_t *const mask_a[2] = { p[P_SUM_A], p[P_CTR_A] };
        qm_adm_decouple_c(ref3, dis3, bs, q, st->egl, recip, rst, add, mask_r, mask_a);
        qm_adm_den_c(ref3, bs, q, acc->den[k]);
        /* DLM: the restored part, masked by the additive impairment */
        const int32_t *const crst[3] = { rst[0], rst[1], rst[2] };
        qm_adm_num_c(crst, mask_a[0], mask_a[1], bs, q, acc->dlm[k]);
        /* AIM: the additive impairment, masked by the restored part */
        const int32_t *const cadd[3] = { add[0], add[1], add[2] };
        qm_adm_num_c(cadd, mask_r[0], mask_r[1], bs, q, acc->aim[k]);
    }
}

/* The engine runs the row kernels band row by band row, all four scales in
 * one pass over the picture, so that every intermediate row is used while
 * it is in cache: as soon as scale k has the band a rows that band row i
 * of scale k + 1 reads (rows 2i - 1 .. 2i + 2, mirrored), that row runs,
 * from a ring of ARING band a rows (it reads rows no older than 3 behind
 * the newest).  Per scale and row: the DWT of both pictures, the decouple
 * of the rows and columns the sums read (q->roi widened by the masking
 * taps: the rest is read by nothing), the denominator of the ROI's rows;
 * the numerator of band row i needs the masking terms of rows i - 1 ..
 * i + 1, so it runs one row behind, from a ring of RING row sets.  Every
 * kernel is pointwise per row or reads the rows the plane stages read, so
 * the sums are those of qm_adm_planes_sums() (tests/checkasm/adm.c). */
enum { RING = 4, ARING = 8 };
/* rows of one ring slot: rst h v d, add h v d, mask_r sum ctr, mask_a sum ctr */
enum { S_RST = 0, S_ADD = 3, S_MR = 6, S_MA = 8, S_ROWS = 10 };

typedef struct AdmScale {
    int32_t *ring[RING][S_ROWS];
    int32_t *aring[2][ARING]; /* band a rows of [ref, dis] (scales 0-2) */
    int next_dwt;             /* next band row to compute */
    int next_num;             /* next numerator row */
} AdmScale;

typedef struct AdmState {
    QmAdmSetup set;
    QmAdmDsp dsp;
    int32_t *recip;      /* QM_ADM_RECIP_SIZE */
    int32_t *mem;
    AdmScale sc[QM_ADM_SCALES];
    int32_t *band[2][4]; /* one band row of [ref, dis]: a (last scale), h, v, d */
    int32_t *tmp;        /* 4 * w */
    /* the frame being computed */
    const void *pic[2];
    ptrdiff_t pic_stride[2];
    QmAdmSums acc;
} AdmState;

static void adm_close(void *priv)
{
    AdmState *s = priv;
    free(s->recip);
    free(s->mem);
    s->recip = s->mem = NULL;
}

/* int32 of a row of n samples, padded to 64 bytes */
static size_t row_len(int n)
{
    return ((size_t)n + 15) & ~(size_t)15;
}

static int adm_init(void *priv, const QmMetricConfig *cfg)
{
    AdmState *s = priv;
    int err = qm_adm_setup(&s->set, cfg);
    if (err)
        return err;
    qm_adm_dsp_init(&s->dsp, qm_cpu_flags());
    size_t total = 2 * 4 * row_len(s->set.q[0].w) + 4 * (size_t)cfg->w;
    for (int k = 0; k < QM_ADM_SCALES; k++)
        total += (RING * S_ROWS + 2 * ARING) * row_len(s->set.q[k].w);
    s->recip = malloc(QM_ADM_RECIP_SIZE * sizeof(int32_t));
    s->mem = malloc(total * sizeof(int32_t));
    if (!s->recip || !s->mem) {
        adm_close(s);
        return QM_ENOMEM;
    }
    int32_t *m = s->mem;
    for (int k = 0; k < QM_ADM_SCALES; k++) {
        const size_t bw = row_len(s->set.q[k].w);
        for (int r = 0; r < RING; r++)
            for (int b = 0; b < S_ROWS; b++, m += bw)
                s->sc[k].ring[r][b] = m;
        for (int p = 0; p < 2; p++)
            for (int r = 0; r < ARING; r++, m += bw)
                s->sc[k].aring[p][r] = m;
    }
    for (int p = 0; p < 2; p++)
        for (int b = 0; b < 4; b++, m += row_len(s->set.q[0].w))
            s->band[p][b] = m;
    s->tmp = m;
    qm_adm_recip_table(s->recip);
    return 0;
}

/* Numerator rows of band row i: the DLM (restored part masked by the
 * additive impairment) and the AIM (the converse). */
static void num_rows(AdmState *s, int k, QmAdmNumRowFn num, int i)
{
    const QmAdmScaleQ *q = &s->set.q[k];
    int32_t *const (*ring)[S_ROWS] = s->sc[k].ring;
    const int h = q->h;
    /* the threshold's taps: row -1 reads row 1, row h reads h - 1 */
    int32_t *const *up = ring[(i > 0 ? i - 1 : 1) % RING];
    int32_t *const *mid = ring[i % RING];
    int32_t *const *dn = ring[(i + 1 < h ? i + 1 : h - 1) % RING];
    const int32_t *const sa[3] = { up[S_MA], mid[S_MA], dn[S_MA] };
    const int32_t *const sr[3] = { up[S_MR], mid[S_MR], dn[S_MR] };
    const int32_t *const rst[3] = { mid[S_RST], mid[S_RST + 1], mid[S_RST + 2] };
    const int32_t *const add[3] = { mid[S_ADD], mid[S_ADD + 1], mid[S_ADD + 2] };
    int64_t in[3];
    num(rst, sa, mid[S_MA + 1], q, in);
    for (int t = 0; t < 3; t++)
        s->acc.dlm[k][t] += (in[t] + q->row_add) >> q->row_shift;
    num(add, sr, mid[S_MR + 1], q, in);
    for (int t = 0; t < 3; t++)
        s->acc.aim[k][t] += (in[t] + q->row_add) >> q->row_shift;
}

/* The newest input row that band row i of a scale reads. */
static int last_input_row(const QmAdmScaleQ *q, int i)
{
    int last = 0;
    for (int k = 0; k < 4; k++)
        last = QM_MAX(last, dwt_mirror(2 * i - 1 + k, q->in_h));
    return last;
}

/* Band row i of scale k, then the rows of the next scales it completes. */
static void scale_row(AdmState *s, int k, int i)
{
    const QmAdmScaleQ *q = &s->set.q[k];
    const QmAdmDsp *d = &s->dsp;
    AdmScale *sc = &s->sc[k];
    const int v = k > 0, last = k == QM_ADM_SCALES - 1;
    for (int p = 0; p < 2; p++) {
        const void *rows[4];
        int32_t *b[4] = { s->band[p][0], s->band[p][1], s->band[p][2], s->band[p][3] };
        if (!last)
            b[0] = sc->aring[p][i % ARING];
        if (k == 0) {
            qm_adm_dwt_rows(s->pic[p], s->pic_stride[p], q, i, rows);
        } else {
            for (int j = 0; j < 4; j++)
                rows[j] = s->sc[k - 1].aring[p][dwt_mirror(2 * i - 1 + j, q->in_h) % ARING];
        }
        d->dwt_row[v](rows, s->set.bpc, q, b, s->tmp);
    }
    /* adm_skip_scale0: only the approximation band is kept */
    if (!(k == 0 && s->set.skip_scale0)) {
        const QmAdmRect *roi = &q->roi;
        const int32_t *const ref3[3] = { s->band[0][1], s->band[0][2], s->band[0][3] };
        /* rows and columns that the sums read (see above) */
        if (i >= roi->y0 - 1 && i <= roi->y1) {
            const int32_t *const dis3[3] = { s->band[1][1], s->band[1][2], s->band[1][3] };
            int32_t *const *r = sc->ring[i % RING];
            d->decouple_row[v](ref3, dis3, QM_MAX(roi->x0 - 1, 0), QM_MIN(roi->x1 + 1, q->w),
                               q, s->set.egl, s->recip, r + S_RST, r + S_ADD, r + S_MR,
                               r + S_MA);
        }
        if (i >= roi->y0 && i < roi->y1) {
            uint64_t in[3];
            d->den_row[v](ref3, q, in);
            for (int t = 0; t < 3; t++)
                s->acc.den[k][t] += (in[t] + q->drow_add) >> q->drow_shift;
        }
        /* numerator rows whose lower neighbour (or its mirror) is done */
        for (; sc->next_num < roi->y1 &&
               (sc->next_num + 1 <= i || sc->next_num + 1 >= q->h); sc->next_num++)
            num_rows(s, k, d->num_row[v], sc->next_num);
    }
    if (!last) {
        const QmAdmScaleQ *qn = &s->set.q[k + 1];
        AdmScale *n = &s->sc[k + 1];
        while (n->next_dwt < qn->h && last_input_row(qn, n->next_dwt) <= i)
            scale_row(s, k + 1, n->next_dwt++);
    }
}

static int adm_compute(void *priv, const QmFrame *f, QmRows *out)
{
    AdmState *s = priv;
    s->pic[0] = f->ref->data[0];
    s->pic[1] = f->dist->data[0];
    s->pic_stride[0] = f->ref->stride[0];
    s->pic_stride[1] = f->dist->stride[0];
    memset(&s->acc, 0, sizeof(s->acc));
    for (int k = 0; k < QM_ADM_SCALES; k++) {
        s->sc[k].next_dwt = 0;
        s->sc[k].next_num = s->set.q[k].roi.y0;
    }
    for (int i = 0; i < s->set.q[0].h; i++)
        scale_row(s, 0, i);
    double v[QM_ADM_NFEATURES];
    qm_adm_features(&s->set, &s->acc, v);
    for (unsigned i = 0; i < QM_ADM_NFEATURES; i++)
        qm_rows_set(out, 0, i, v[i]);
    return 0;
}

extern const struct QmCudaFuncs qm_cuda_adm; /* cuda/adm.cu */

static const char *const adm_features[] = {
    "integer_adm2", "integer_adm_scale0", "integer_adm_scale1",
    "integer_adm_scale2", "integer_adm_scale3", "integer_aim",
    "integer_adm3", NULL
};

/* libvmaf's options (integer_adm.c options[]) that models use, plus
 * adm_skip_scale0; adm_csf_scale / adm_csf_diag_scale (Barten only),
 * adm_skip_aim and debug are not offered. */
static const QmOptionDesc adm_options[] = {
    { "adm_csf_mode", "csf",
      "contrast sensitivity function: 0 Watson, 1 Barten, 2 Barten-Watson "
      "blend, 3 blend (v1.0.17 fit)", 0, 0, 3, QM_OPT_IN_KEY },
    { "adm_dlm_weight", "dlmw",
      "linear weighting between DLM and AIM in adm3; 1 is DLM only",
      DEF_DLM_WEIGHT, 0.0, 1.0, QM_OPT_IN_KEY },
    { "adm_enhn_gain_limit", "egl",
      "enhancement gain imposed on adm, >= 1.0; 1.0 disables the gain",
      DEF_EGL, 1.0, DEF_EGL, QM_OPT_IN_KEY },
    { "adm_min_val", "min",
      "minimum of adm3; lower values are clipped to it", 0.0, 0.0, 1.0,
      QM_OPT_IN_KEY },
    { "adm_noise_weight", "nw", "noise weight", DEF_NOISE_WEIGHT, 0.0, 1500.0,
      QM_OPT_IN_KEY },
    { "adm_norm_view_dist", "nvd",
      "normalized viewing distance = viewing distance / display height",
      DEF_NVD, 0.75, 24.0, QM_OPT_IN_KEY },
    { "adm_ref_display_height", "rdh", "reference display height in pixels",
      DEF_RDH, 1, 4320, QM_OPT_IN_KEY },
    { "adm_skip_scale0", "ssz", "skip the calculation of scale 0", 0, 0, 1,
      QM_OPT_IN_KEY | QM_OPT_BOOL },
    { NULL, NULL, NULL, 0, 0, 0, 0 },
};

/* Combinations the one-at-a-time options pass of the parity test cannot
 * reach: CSF tables of other displays, and the integer_adm3 option sets of
 * the VMAF v1 models (3d0h, 5d0h, 1d5h_2160, 3d0h_2160). */
static const QmOptionSet adm_option_sets[] = {
    { "adm_csf_mode=3,adm_ref_display_height=720,adm_norm_view_dist=5", QM_OPTSET_DIRECT },
    { "adm_csf_mode=2,adm_ref_display_height=2160,adm_norm_view_dist=1.5", QM_OPTSET_DIRECT },
    { "adm_csf_mode=1,adm_ref_display_height=4320,adm_enhn_gain_limit=2.7", QM_OPTSET_DIRECT },
    { "adm_skip_scale0=true,adm_enhn_gain_limit=1,adm_noise_weight=0", QM_OPTSET_DIRECT },
    { "adm_csf_mode=2,adm_dlm_weight=0.7,adm_enhn_gain_limit=1,adm_noise_weight=0.02,"
      "adm_min_val=0.5,adm_norm_view_dist=3,adm_ref_display_height=1080", QM_OPTSET_DIRECT },
    { "adm_csf_mode=2,adm_dlm_weight=0.7,adm_enhn_gain_limit=1,adm_noise_weight=0.02,"
      "adm_min_val=0.5,adm_norm_view_dist=5,adm_ref_display_height=1080", QM_OPTSET_DIRECT },
    { "adm_csf_mode=2,adm_dlm_weight=0.7,adm_enhn_gain_limit=1,adm_noise_weight=0.02,"
      "adm_min_val=0.5,adm_norm_view_dist=1.5,adm_ref_display_height=2160", QM_OPTSET_DIRECT },
    { "adm_csf_mode=2,adm_dlm_weight=0.7,adm_enhn_gain_limit=1,adm_noise_weight=0.02,"
      "adm_min_val=0.5,adm_norm_view_dist=3,adm_ref_display_height=2160", QM_OPTSET_DIRECT },
    { NULL },
};

const QmMetricDesc qm_metric_adm = {
    .name = "adm",
    .display = "ADM",
    .description = "ADM (detail loss) of luma, integer implementation: adm2, "
                   "per-scale, AIM and adm3",
    .scale = { "ratio", +1, 0, NAN },
    .features = adm_features,
    .options = adm_options,
    .flags = QM_METRIC_LUMA_ONLY | QM_METRIC_NO_CHROMA | QM_METRIC_MODEL_INPUT,
    .min_w = QM_ADM_MIN_SIZE,
    .min_h = QM_ADM_MIN_SIZE,
    .cpu = {
        .priv_size = sizeof(AdmState),
        .init = adm_init,
        .compute = adm_compute,
        .close = adm_close,
    },
    .cuda = QM_CUDA_TWIN(qm_cuda_adm),
    /* every sum is an integer sum (exact in any order) and every per-sample
     * operation the C code's: bit-identical */
    .cuda_tol = 0,
    .option_sets = adm_option_sets,
};
