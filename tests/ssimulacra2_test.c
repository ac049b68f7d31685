/* gst-qmetric: SSIMULACRA2's pieces that the golden gate cannot single out
 * (tests/check/golden_ssimulacra2.c checks whole frames against libjxl):
 *
 *   - the recursive Gaussian's constants are the floats libjxl's
 *     CreateRecursiveGaussian(1.5) rounds its double computation to
 *     (recomputed here from Charalampidis' formulas as gauss_blur.cc does);
 *   - the cube root constant, the sRGB decoding against its formula;
 *   - the YCbCr conversion: a rounding tie of the golden set, the ends of
 *     the ranges, full range, the matrices, which colorimetry wins;
 *   - the scales computed for a size, and the weights consumed in turn when
 *     there are fewer than six (the reference's running index);
 *   - through the engine: identical pictures score exactly 100, the 8x8
 *     minimum, GRAY refused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "qm.h"
#include "ssimulacra2.h"
#include "unit.h"

/* gauss_blur.cc's Inv3x3Matrix() and CreateRecursiveGaussian(), in double */
static void inv3(double m[3][3])
{
    double t[3][3];
    t[0][0] = m[1][1] * m[2][2] - m[1][2] * m[2][1];
    t[0][1] = m[0][2] * m[2][1] - m[0][1] * m[2][2];
    t[0][2] = m[0][1] * m[1][2] - m[0][2] * m[1][1];
    t[1][0] = m[1][2] * m[2][0] - m[1][0] * m[2][2];
    t[1][1] = m[0][0] * m[2][2] - m[0][2] * m[2][0];
    t[1][2] = m[0][2] * m[1][0] - m[0][0] * m[1][2];
    t[2][0] = m[1][0] * m[2][1] - m[1][1] * m[2][0];
    t[2][1] = m[0][1] * m[2][0] - m[0][0] * m[2][1];
    t[2][2] = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    const double det = m[0][0] * t[0][0] + m[0][1] * t[1][0] + m[0][2] * t[2][0];
    const double idet = 1.0 / det;
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++)
            m[j][i] = t[j][i] * idet;
}

static void test_iir(void)
{
    const double sigma = 1.5, pi = 3.141592653589793238;
    const double radius = round(3.2795 * sigma + 0.2546);
    const double w0 = pi / (2.0 * radius);
    const double omega[3] = { w0, 3.0 * w0, 5.0 * w0 };
    const double p1 = 1.0 / tan(0.5 * omega[0]), p3 = -1.0 / tan(0.5 * omega[1]);
    const double p5 = 1.0 / tan(0.5 * omega[2]);
    const double r1 = p1 * p1 / sin(omega[0]), r3 = -p3 * p3 / sin(omega[1]);
    const double r5 = p5 * p5 / sin(omega[2]);
    double rho[3];
    for (int i = 0; i < 3; i++)
        rho[i] = exp(-0.5 * sigma * sigma * omega[i] * omega[i]) * (1.0 / radius);
    const double d13 = p1 * r3 - r1 * p3, d35 = p3 * r5 - r3 * p5;
    const double d51 = p5 * r1 - r5 * p1;
    const double z15 = d35 * (1.0 / d13), z35 = d51 * (1.0 / d13);
    double a[3][3] = { { p1, p3, p5 }, { r1, r3, r5 }, { z15, z35, 1 } };
    inv3(a);
    const double gam[3] = { 1, radius * radius - sigma * sigma,
                            z15 * rho[0] + z35 * rho[1] + rho[2] };
    const QmSsimu2Iir g = qm_ssimu2_iir();
    CHECK(radius == QM_SSIMU2_RADIUS, "radius %g", radius);
    for (int i = 0; i < 3; i++) {
        double beta = 0;
        for (int k = 0; k < 3; k++)
            beta += a[i][k] * gam[k];
        const double n2 = -beta * cos(omega[i] * (radius + 1.0));
        const double d1 = -2.0 * cos(omega[i]), d2 = d1 * d1;
        const float in[4] = { (float)n2, (float)(-d1 * n2), (float)(d2 * n2 - n2),
                              (float)(-d2 * d1 * n2 + 2.0 * d1 * n2) };
        const float prev[4] = { (float)-d1, (float)(d2 - 1.0),
                                (float)(-d2 * d1 + 2.0 * d1),
                                (float)(d2 * d2 - 3.0 * d2 + 1.0) };
        const float prev2[4] = { -1.0f, (float)d1, (float)(-d2 + 1.0),
                                 (float)(d2 * d1 - 2.0 * d1) };
        CHECK(g.n2[i] == (float)n2 && g.d1[i] == (float)d1, "k=%d: n2 %a d1 %a",
              2 * i + 1, (float)n2, (float)d1);
        for (int j = 0; j < 4; j++)
            CHECK(g.mul_in[i][j] == in[j] && g.mul_prev[i][j] == prev[j] &&
                      g.mul_prev2[i][j] == prev2[j],
                  "k=%d lane %d: %a %a %a", 2 * i + 1, j, in[j], prev[j], prev2[j]);
    }
}

static void test_transfer(void)
{
    const float bias = 0.0037930732552754493f;
    /* MakePositiveXYB of black: the cube roots cancel their bias */
    float xyb[3];
    qm_ssimu2_xyb(0.0f, 0.0f, 0.0f, xyb);
    CHECK(fabsf(qm_ssimu2_cbrt_add(bias, -cbrtf(bias))) < 1e-7f, "cbrt(bias)");
    CHECK(fabsf(xyb[0] - 0.42f) < 1e-6f && fabsf(xyb[1] - 0.01f) < 1e-6f &&
              fabsf(xyb[2] - 0.55f) < 1e-6f,
          "black: %g %g %g", xyb[0], xyb[1], xyb[2]);
    for (float x = 1e-6f; x < 10.0f; x *= 1.7f)
        CHECK(fabsf(qm_ssimu2_cbrt_add(x, 0.0f) - cbrtf(x)) <= 6e-7f * cbrtf(x),
              "cbrt(%g)", x);
    /* the sRGB curve: the rational fit against its formula, monotonic */
    float prev = -1.0f;
    double worst = 0;
    for (int v = 0; v < 65536; v++) {
        const float l = qm_ssimu2_linear((uint16_t)v);
        const double e = v / 65535.0;
        const double want = e <= 0.04045 ? e / 12.92 : pow((e + 0.055) / 1.055, 2.4);
        worst = fmax(worst, fabs(l - want));
        CHECK(l >= prev, "not monotonic at %d", v);
        prev = l;
    }
    CHECK(worst < 1e-5, "sRGB fit off by %g", worst);
    CHECK(qm_ssimu2_linear(0) == 0.0f, "black");
}

static void rgb(int y, int u, int v, int bpc, double kr, double kb, int full,
                uint16_t out[3])
{
    QmSsimu2Conv cv;
    qm_ssimu2_conv_init(&cv, bpc, kr, kb, full);
    qm_ssimu2_rgb16(y, u, v, &cv, out);
}

static void test_conversion(void)
{
    uint16_t c[3];
    /* the golden set's tie: 10-bit Y 210, U = V 512 is exactly 10922.5,
     * rounded half up */
    rgb(210, 512, 512, 10, 0.2126, 0.0722, 0, c);
    CHECK(c[0] == 10923 && c[1] == 10923 && c[2] == 10923, "tie: %u %u %u",
          c[0], c[1], c[2]);
    rgb(16, 128, 128, 8, 0.2126, 0.0722, 0, c);
    CHECK(c[0] == 0 && c[1] == 0 && c[2] == 0, "black");
    rgb(235, 128, 128, 8, 0.2126, 0.0722, 0, c);
    CHECK(c[0] == 65535 && c[1] == 65535 && c[2] == 65535, "white");
    rgb(4, 128, 128, 8, 0.2126, 0.0722, 0, c);  /* beyond black, white: clipped */
    CHECK(c[0] == 0 && c[1] == 0 && c[2] == 0, "clip: %u %u %u", c[0], c[1], c[2]);
    rgb(250, 255, 0, 8, 0.2126, 0.0722, 0, c);
    CHECK(c[1] == 65535 && c[2] == 65535, "clip: %u %u %u", c[0], c[1], c[2]);
    rgb(255, 128, 128, 8, 0.299, 0.114, 1, c);
    CHECK(c[0] == 65535 && c[1] == 65535 && c[2] == 65535, "full-range white");
    /* full range, BT.601: B = Y' + 1.772 (U - 128) / 255 */
    rgb(100, 200, 128, 8, 0.299, 0.114, 1, c);
    CHECK(c[2] == (uint16_t)floor((100 / 255.0 + 1.772 * (72 / 255.0)) * 65535 + 0.5),
          "full-range B %u", c[2]);

    /* which colorimetry: an option names one, else the picture's, else
     * BT.709 limited */
    QmOptValues o;
    memset(&o, 0, sizeof(o));
    const QmColor c601 = { QM_MATRIX_BT601, QM_RANGE_FULL }, unknown = { 0, 0 };
    QmSsimu2Conv cv, want;
    qm_ssimu2_setup_conv(&o, 8, c601, &cv);
    qm_ssimu2_conv_init(&want, 8, 0.299, 0.114, 1);
    CHECK(!memcmp(&cv, &want, sizeof(want)), "the picture's BT.601 full");
    qm_ssimu2_setup_conv(&o, 8, unknown, &cv);
    qm_ssimu2_conv_init(&want, 8, 0.2126, 0.0722, 0);
    CHECK(!memcmp(&cv, &want, sizeof(want)), "unknown = BT.709 limited");
    o.v[QM_SSIMU2_OPT_MATRIX] = QM_SSIMU2_MATRIX_BT2020;
    o.v[QM_SSIMU2_OPT_RANGE] = QM_SSIMU2_RANGE_LIMITED;
    qm_ssimu2_setup_conv(&o, 10, c601, &cv);
    qm_ssimu2_conv_init(&want, 10, 0.2627, 0.0593, 0);
    CHECK(!memcmp(&cv, &want, sizeof(want)), "the options win");
}

static void test_scales(void)
{
    int sw[QM_SSIMU2_SCALES], sh[QM_SSIMU2_SCALES];
    CHECK(qm_ssimu2_scales(1920, 1080, sw, sh) == 6 && sw[5] == 60 && sh[5] == 34,
          "1080p: %dx%d", sw[5], sh[5]);
    /* a scale is computed while the previous one is at least 8x8 */
    CHECK(qm_ssimu2_scales(8, 8, sw, sh) == 2 && sw[1] == 4, "8x8");
    CHECK(qm_ssimu2_scales(15, 40, sw, sh) == 3 && sw[2] == 4 && sh[2] == 10,
          "15x40: %dx%d", sw[2], sh[2]);
    CHECK(qm_ssimu2_scales(7, 100, sw, sh) == 1, "7 wide");

    /* With two scales, the 4-norm of Y's 1 - SSIM' at scale 0 takes the
     * 16th weight (1.8422455520539298), not the one of its place with six
     * scales (the 40th, 7.466890328078848). */
    QmSsimu2Sums s;
    memset(&s, 0, sizeof(s));
    sw[0] = 16, sh[0] = 16, sw[1] = 8, sh[1] = 8;
    s.v[0][1][1] = 16 * 16;  /* 4-norm 1 */
    double x = 1.8422455520539298 * 0.9562382616834844;
    x = 2.326765642916932 * x - 0.020884521182843837 * x * x +
        6.248496625763138e-05 * x * x * x;
    const double want = 100.0 - 10.0 * pow(x, 0.6276336467831387);
    CHECK(qm_ssimu2_score(&s, 2, sw, sh) == want, "two scales: %.17g, want %.17g",
          qm_ssimu2_score(&s, 2, sw, sh), want);
    memset(&s, 0, sizeof(s));
    CHECK(qm_ssimu2_score(&s, 2, sw, sh) == 100.0, "no error: 100");
}

/* One pair through an engine; the score, or NAN with *err set. */
static double engine_score(int w, int h, QmChroma chroma, const uint8_t *ref,
                           const uint8_t *dist, int *err)
{
    QmSettings st;
    QmEngine *e = NULL;
    char *msg = NULL;
    qm_settings_default(&st, w, h, 8, chroma);
    st.metrics = "ssimulacra2";
    st.backend = QM_BACKEND_CPU;
    st.n_threads = 1;
    *err = qm_engine_open(&e, &st, &msg);
    free(msg);
    if (*err)
        return NAN;
    QmPicture p[2];
    const uint8_t *src[2] = { ref, dist };
    for (int i = 0; i < 2; i++) {
        memset(&p[i], 0, sizeof(p[i]));
        p[i].w = w;
        p[i].h = h;
        p[i].bpc = 8;
        p[i].chroma = chroma;
        p[i].data[0] = src[i];
        p[i].data[1] = src[i] + w * h;
        p[i].data[2] = src[i] + w * h + ((w + 1) / 2) * ((h + 1) / 2);
        p[i].stride[0] = w;
        p[i].stride[1] = p[i].stride[2] = (w + 1) / 2;
    }
    double v = NAN;
    QmResult r;
    if (!qm_engine_submit(e, &p[0], &p[1], NULL) && !qm_engine_flush(e) &&
        !qm_engine_receive(e, &r, true) && r.present[0])
        v = r.value[0];
    qm_engine_close(&e);
    return v;
}

static void test_engine(void)
{
    enum { W = 33, H = 17 };
    static uint8_t a[W * H * 2], b[W * H * 2];
    uint32_t s = 1;
    for (size_t i = 0; i < sizeof(a); i++) {
        s = s * 1664525u + 1013904223u;
        a[i] = (uint8_t)(16 + (s >> 24) % 200);
        b[i] = (uint8_t)(a[i] + ((s >> 8) & 3));
    }
    int err;
    CHECK(engine_score(W, H, QM_CHROMA_420, a, a, &err) == 100.0, "identical");
    const double v = engine_score(W, H, QM_CHROMA_420, a, b, &err);
    CHECK(isfinite(v) && v < 100.0, "different pictures: %g", v);
    CHECK(isfinite(engine_score(8, 8, QM_CHROMA_420, a, b, &err)), "8x8 is taken");
    engine_score(7, 8, QM_CHROMA_420, a, b, &err);
    CHECK(err == QM_EINVAL || err == QM_ENOTSUP, "7x8 refused: %d", err);
    engine_score(16, 16, QM_CHROMA_400, a, b, &err);
    CHECK(err != 0, "GRAY refused");
}

int main(void)
{
    test_iir();
    test_transfer();
    test_conversion();
    test_scales();
    test_engine();
    if (failures)
        printf("%d check(s) failed\n", failures);
    else
        printf("ssimulacra2: all checks passed\n");
    return failures ? 1 : 0;
}
