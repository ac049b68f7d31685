/* gst-qmetric: SSIMULACRA2 (Jon Sneyers, 2022-2023), as libjxl's
 * ssimulacra2 tool (tools/ssimulacra2.cc, v0.12.0) scores two 16-bit sRGB
 * PNGs made from the pictures by the golden set's conversion
 * (../shared/golden/ssimulacra2/manifest.json, yuv_to_rgb; docs/metrics.md).
 *
 * The stages are listed in ssimulacra2.h, their arithmetic is
 * ssimulacra2_pixel.h.  This file streams each scale row by row, so that an
 * instance holds the pyramid's smaller scales and a few rows, not the ~30
 * full-size planes of the reference:
 *
 *   row r of a scale: linear light (scale 0: converted from the pictures;
 *   then from the stored scale), its 2x2 average into the next scale, XYB,
 *   the 16 horizontal blur inputs side by side (3 channels x {img1, img2,
 *   img1^2, img2^2, img1 img2}, one unused), their horizontal pass (a ring
 *   of RING rows), then the vertical pass's row r - 4 (it needs rows up to
 *   4 below and from 6 above) and that row's error maps.
 *
 * Every float operation is the reference's, in its order; the sums are its
 * double sums in its order (raster order per channel), so the score is the
 * reference's bit for bit where libm's pow agrees.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ssimulacra2.h"

#define LANES 16  /* horizontal blur inputs per pixel: 3 x 5, one unused */
#define RING 16   /* rows kept: the vertical pass reads rows n - 6 .. n + 4 */

typedef struct Ssimu2 {
    int w, h, bpc, ss_x, ss_y, cw, ch;
    QmOptValues opt;
    int n_scales, sw[QM_SSIMU2_SCALES], sh[QM_SSIMU2_SCALES];
    QmSsimu2Iir g;
    float *lut;           /* 16-bit sRGB sample -> linear light */
    float *pyr[2];        /* scale s >= 1 in pyr[(s - 1) & 1]: 2 pictures x
                             3 planes of sw[s] x sh[s] */
    uint16_t *rgb;        /* one converted row, 3 x w */
    int32_t *tmp;         /* its samples, 3 x w */
    float *lin0;          /* scale 0: rows r & 1: [2][picture][channel][w] */
    float *xyb;           /* RING rows x [picture][channel][w] */
    float *hin, *hring;   /* LANES x w: one row; RING rows */
    float *vp1, *vp2, *vsum, *vout;  /* vertical pass: 3 x, 3 x, 1 x, 1 x
                                        LANES x w */
    double *terms;        /* error-map terms of a row, one channel: [2][w] */
} Ssimu2;

/* ---- setup ---- */

void qm_ssimu2_conv_init(QmSsimu2Conv *cv, int bpc, double kr, double kb,
                         int full_range)
{
    /* the golden set's order: the four coefficients from Kr and Kb, then
     * (sample - offset) / scale */
    const double kg = 1.0 - kr - kb;
    cv->r_cr = 2.0 * (1.0 - kr);
    cv->g_cb = 2.0 * kb * (1.0 - kb) / kg;
    cv->g_cr = 2.0 * kr * (1.0 - kr) / kg;
    cv->b_cb = 2.0 * (1.0 - kb);
    const double s = (double)(1 << (bpc - 8));
    if (full_range) {
        cv->y_off = 0.0;
        cv->y_div = (double)((1 << bpc) - 1);
        cv->c_off = (double)(1 << (bpc - 1));
        cv->c_div = cv->y_div;
    } else {
        cv->y_off = 16.0 * s;
        cv->y_div = 219.0 * s;
        cv->c_off = 128.0 * s;
        cv->c_div = 224.0 * s;
    }
}

/* Kr, Kb of each QM_SSIMU2_MATRIX_* (H.273 Table 4) */
static const double matrix_k[][2] = {
    [QM_SSIMU2_MATRIX_BT709] = { 0.2126, 0.0722 },
    [QM_SSIMU2_MATRIX_BT601] = { 0.299, 0.114 },
    [QM_SSIMU2_MATRIX_BT2020] = { 0.2627, 0.0593 },
    [QM_SSIMU2_MATRIX_SMPTE240M] = { 0.212, 0.087 },
    [QM_SSIMU2_MATRIX_FCC] = { 0.30, 0.11 },
};

void qm_ssimu2_setup_conv(const QmOptValues *opt, int bpc, QmColor c,
                          QmSsimu2Conv *conv)
{
    static const int from_color[] = {
        [QM_MATRIX_UNKNOWN] = QM_SSIMU2_MATRIX_BT709,
        [QM_MATRIX_BT709] = QM_SSIMU2_MATRIX_BT709,
        [QM_MATRIX_BT601] = QM_SSIMU2_MATRIX_BT601,
        [QM_MATRIX_BT2020] = QM_SSIMU2_MATRIX_BT2020,
        [QM_MATRIX_SMPTE240M] = QM_SSIMU2_MATRIX_SMPTE240M,
        [QM_MATRIX_FCC] = QM_SSIMU2_MATRIX_FCC,
    };
    int m = (int)opt->v[QM_SSIMU2_OPT_MATRIX];
    int r = (int)opt->v[QM_SSIMU2_OPT_RANGE];
    if (m == QM_SSIMU2_MATRIX_AUTO)
        m = (unsigned)c.matrix < sizeof(from_color) / sizeof(from_color[0])
                ? from_color[c.matrix] : QM_SSIMU2_MATRIX_BT709;
    if (r == QM_SSIMU2_RANGE_AUTO)
        r = c.range == QM_RANGE_FULL ? QM_SSIMU2_RANGE_FULL : QM_SSIMU2_RANGE_LIMITED;
    qm_ssimu2_conv_init(conv, bpc, matrix_k[m][0], matrix_k[m][1],
                        r == QM_SSIMU2_RANGE_FULL);
}

int qm_ssimu2_scales(int w, int h, int sw[QM_SSIMU2_SCALES],
                     int sh[QM_SSIMU2_SCALES])
{
    int n = 0;
    sw[0] = w;
    sh[0] = h;
    while (++n < QM_SSIMU2_SCALES && sw[n - 1] >= 8 && sh[n - 1] >= 8) {
        sw[n] = (sw[n - 1] + 1) / 2;
        sh[n] = (sh[n - 1] + 1) / 2;
    }
    return n;
}

static void ssimu2_close(void *priv)
{
    Ssimu2 *s = priv;
    free(s->lut);
    free(s->pyr[0]);
    free(s->pyr[1]);
    free(s->rgb);
    free(s->tmp);
    free(s->lin0);
    free(s->xyb);
    free(s->hin);
    free(s->hring);
    free(s->vp1);
    free(s->vp2);
    free(s->vsum);
    free(s->vout);
    free(s->terms);
    memset(s, 0, sizeof(*s));
}

static int ssimu2_init(void *priv, const QmMetricConfig *cfg)
{
    Ssimu2 *s = priv;
    if (cfg->chroma == QM_CHROMA_400)
        return QM_ENOTSUP;  /* colour in, colour compared */
    s->w = cfg->w;
    s->h = cfg->h;
    s->bpc = cfg->bpc;
    s->ss_x = cfg->chroma != QM_CHROMA_444;
    s->ss_y = cfg->chroma == QM_CHROMA_420;
    qm_plane_size_full(cfg->w, cfg->h, cfg->chroma, 1, &s->cw, &s->ch);
    s->opt = *cfg->opt;
    s->n_scales = qm_ssimu2_scales(s->w, s->h, s->sw, s->sh);
    s->g = qm_ssimu2_iir();
    const size_t w = (size_t)s->w;
    size_t pyr[2] = { 1, 1 };
    for (int i = 1; i < s->n_scales; i++)
        pyr[(i - 1) & 1] = QM_MAX(pyr[(i - 1) & 1], (size_t)s->sw[i] * s->sh[i]);
    s->lut = malloc(65536 * sizeof(float));
    s->pyr[0] = malloc(6 * pyr[0] * sizeof(float));
    s->pyr[1] = malloc(6 * pyr[1] * sizeof(float));
    s->rgb = malloc(3 * w * sizeof(uint16_t));
    s->tmp = malloc(3 * w * sizeof(int32_t));
    s->lin0 = malloc(2 * 6 * w * sizeof(float));
    s->xyb = malloc(RING * 6 * w * sizeof(float));
    s->hin = malloc(LANES * w * sizeof(float));
    s->hring = malloc(RING * LANES * w * sizeof(float));
    s->vp1 = malloc(3 * LANES * w * sizeof(float));
    s->vp2 = malloc(3 * LANES * w * sizeof(float));
    s->vsum = malloc(LANES * w * sizeof(float));
    s->vout = malloc(LANES * w * sizeof(float));
    s->terms = malloc(2 * w * sizeof(double));
    if (!s->lut || !s->pyr[0] || !s->pyr[1] || !s->rgb || !s->tmp || !s->lin0 || !s->xyb ||
        !s->hin || !s->hring || !s->vp1 || !s->vp2 || !s->vsum || !s->vout ||
        !s->terms) {
        ssimu2_close(s);
        return QM_ENOMEM;
    }
    for (int v = 0; v < 65536; v++)
        s->lut[v] = qm_ssimu2_linear((uint16_t)v);
    return 0;
}

/* ---- stage 1: conversion ---- */

/* Stage 1 on a row whose chroma samples are already one per pixel. */
QM_VECTOR_CLONES
static void rgb16_pixels(const int32_t *restrict y, const int32_t *restrict u,
                         const int32_t *restrict v, int w,
                         const QmSsimu2Conv *cv, uint16_t *restrict rgb)
{
    const QmSsimu2Conv k = *cv;  /* no store to rgb can change it */
    for (int x = 0; x < w; x++)
        qm_ssimu2_rgb16(y[x], u[x], v[x], &k, rgb + 3 * x);
}

void qm_ssimu2_rgb16_row(const void *y, const void *u, const void *v, int w,
                         int bpc, int ss_x, int cw, const QmSsimu2Conv *cv,
                         int32_t *tmp, uint16_t *rgb)
{
    int32_t *ty = tmp, *tu = tmp + w, *tv = tmp + 2 * w;
    for (int x = 0; x < w; x++) {
        const int c = QM_MIN(x >> ss_x, cw - 1);
        if (bpc == 8) {
            ty[x] = ((const uint8_t *)y)[x];
            tu[x] = ((const uint8_t *)u)[c];
            tv[x] = ((const uint8_t *)v)[c];
        } else {
            ty[x] = ((const uint16_t *)y)[x];
            tu[x] = ((const uint16_t *)u)[c];
            tv[x] = ((const uint16_t *)v)[c];
        }
    }
    rgb16_pixels(ty, tu, tv, w, cv, rgb);
}

/* Row r of picture p as linear planes lin[0..2] */
static void linear_row(Ssimu2 *s, const QmPicture *p, const QmSsimu2Conv *cv,
                       int r, float *lin)
{
    const int cy = QM_MIN(r >> s->ss_y, s->ch - 1);
    const uint8_t *y = (const uint8_t *)p->data[0] + (ptrdiff_t)r * p->stride[0];
    const uint8_t *u = (const uint8_t *)p->data[1] + (ptrdiff_t)cy * p->stride[1];
    const uint8_t *v = (const uint8_t *)p->data[2] + (ptrdiff_t)cy * p->stride[2];
    qm_ssimu2_rgb16_row(y, u, v, s->w, s->bpc, s->ss_x, s->cw, cv, s->tmp, s->rgb);
    const int w = s->w;
    for (int x = 0; x < w; x++) {
        lin[x] = s->lut[s->rgb[3 * x]];
        lin[w + x] = s->lut[s->rgb[3 * x + 1]];
        lin[2 * w + x] = s->lut[s->rgb[3 * x + 2]];
    }
}

/* ---- stage 2: the pyramid ---- */

QM_VECTOR_CLONES
static void downsample_row(const float *restrict a, const float *restrict b,
                           int w, float *restrict out)
{
    const int ow = (w + 1) / 2;
    for (int ox = 0; ox < ow; ox++) {
        const int x0 = 2 * ox, x1 = QM_MIN(2 * ox + 1, w - 1);
        out[ox] = qm_ssimu2_avg4(a[x0], a[x1], b[x0], b[x1]);
    }
}

/* ---- stage 3: XYB, blur, maps ---- */

QM_VECTOR_CLONES
static void xyb_row(const float *restrict r, const float *restrict g,
                    const float *restrict b, int w, float *restrict ox,
                    float *restrict oy, float *restrict ob)
{
    for (int x = 0; x < w; x++) {
        float v[3];
        qm_ssimu2_xyb(r[x], g[x], b[x], v);
        ox[x] = v[0];
        oy[x] = v[1];
        ob[x] = v[2];
    }
}

/* The blur inputs of a row: lane 5c + {0..4} of pixel x = img1, img2,
 * img1^2, img2^2, img1 img2 of channel c (Multiply(): a float product). */
QM_VECTOR_CLONES
static void blur_inputs(const float *restrict xyb1, const float *restrict xyb2,
                        int w, float *restrict in)
{
    for (int x = 0; x < w; x++) {
        float *o = in + (size_t)x * LANES;
        for (int c = 0; c < 3; c++) {
            const float a = xyb1[c * w + x], b = xyb2[c * w + x];
            o[5 * c] = a;
            o[5 * c + 1] = b;
            o[5 * c + 2] = a * a;
            o[5 * c + 3] = b * b;
            o[5 * c + 4] = a * b;
        }
        o[15] = 0.0f;
    }
}

/* FastGaussian1D on LANES interleaved lines: outputs -4 .. 7 one at a
 * time (those before 0 only feed the recursion), then groups of four while
 * the group's last input x[n + 7] is inside, then one at a time. */
QM_VECTOR_CLONES
static void blur_h_row(const QmSsimu2Iir *g, const float *restrict in, int w,
                       float *restrict out)
{
    float p1[3 * LANES] = { 0 }, p2[3 * LANES] = { 0 };
    float s[4 * LANES], o[LANES];
    const int first = QM_MIN(8, w);
    int n = 1 - QM_SSIMU2_RADIUS;
    for (; n < first; n++) {
        const int left = n - QM_SSIMU2_RADIUS - 1, right = n + QM_SSIMU2_RADIUS - 1;
        for (int l = 0; l < LANES; l++)
            s[l] = (left >= 0 ? in[left * LANES + l] : 0.0f) +
                   (right < w ? in[right * LANES + l] : 0.0f);
        qm_ssimu2_h1(g, p1, p2, s, o, LANES);
        if (n >= 0)
            memcpy(out + (size_t)n * LANES, o, sizeof(o));
    }
    for (; n < w - QM_SSIMU2_RADIUS + 1 - 3; n += 4) {
        const float *a = in + (size_t)(n - QM_SSIMU2_RADIUS - 1) * LANES;
        const float *b = in + (size_t)(n + QM_SSIMU2_RADIUS - 1) * LANES;
        for (int i = 0; i < 4 * LANES; i++)
            s[i] = a[i] + b[i];
        qm_ssimu2_h4(g, p1, p2, s, out + (size_t)n * LANES, LANES);
    }
    for (; n < w; n++) {
        const int left = n - QM_SSIMU2_RADIUS - 1, right = n + QM_SSIMU2_RADIUS - 1;
        for (int l = 0; l < LANES; l++)
            s[l] = (left >= 0 ? in[left * LANES + l] : 0.0f) +
                   (right < w ? in[right * LANES + l] : 0.0f);
        qm_ssimu2_h1(g, p1, p2, s, out + (size_t)n * LANES, LANES);
    }
}

QM_VECTOR_CLONES
static void blur_v_row(const QmSsimu2Iir *g, const float *restrict top,
                       const float *restrict bot, int n, float *restrict p1,
                       float *restrict p2, float *restrict sum,
                       float *restrict out)
{
    if (top && bot)
        for (int i = 0; i < n; i++)
            sum[i] = top[i] + bot[i];
    else if (top || bot)
        memcpy(sum, top ? top : bot, (size_t)n * sizeof(float));
    else
        memset(sum, 0, (size_t)n * sizeof(float));
    qm_ssimu2_v1(g, p1, p2, sum, out, n);
}

/* The terms of channel c of a row: terms[x] = 1 - SSIM', terms[w + x] = the
 * edge ratio less 1. */
QM_VECTOR_CLONES
static void map_terms(const float *restrict img1, const float *restrict img2,
                      const float *restrict blur, int c, int w,
                      double *restrict terms)
{
    for (int x = 0; x < w; x++) {
        const float *b = blur + (size_t)x * LANES + 5 * c;
        terms[x] = qm_ssimu2_ssim(b[0], b[1], b[2], b[3], b[4]);
        terms[w + x] = qm_ssimu2_edge(img1[x], b[0], img2[x], b[1]);
    }
}

/* Sums in the reference's order (SSIMMap(), EdgeDiffMap(): raster order,
 * each sum its own double; one loop carries all six). */
static void map_sums(const double *terms, int w, double sum[6])
{
    double s0 = sum[0], s1 = sum[1], s2 = sum[2], s3 = sum[3], s4 = sum[4],
           s5 = sum[5];
    for (int x = 0; x < w; x++) {
        const double t = terms[x], e = terms[w + x];
        const double d = t < 0.0 ? 0.0 : t;
        const double artifact = e < 0.0 ? 0.0 : e;
        const double lost = -e < 0.0 ? 0.0 : -e;
        s0 += d;
        s1 += qm_ssimu2_quartic(d);
        s2 += artifact;
        s3 += qm_ssimu2_quartic(artifact);
        s4 += lost;
        s5 += qm_ssimu2_quartic(lost);
    }
    sum[0] = s0;
    sum[1] = s1;
    sum[2] = s2;
    sum[3] = s3;
    sum[4] = s4;
    sum[5] = s5;
}

static inline float *ring_row(float *ring, int r, size_t row)
{
    return ring + (size_t)(r % RING) * row;
}

/* Vertical output row n of a scale of w x h, then its maps. */
static void vertical_step(Ssimu2 *s, int n, int w, int h, double sums[3][6])
{
    const size_t row = (size_t)w * LANES;
    const int top = n - QM_SSIMU2_RADIUS - 1, bot = n + QM_SSIMU2_RADIUS - 1;
    blur_v_row(&s->g, top >= 0 ? ring_row(s->hring, top, row) : NULL,
               bot < h ? ring_row(s->hring, bot, row) : NULL, (int)row,
               s->vp1, s->vp2, s->vsum, s->vout);
    float *t = s->vp1;
    s->vp1 = s->vp2;
    s->vp2 = t;
    if (n < 0)
        return;
    const float *xyb = ring_row(s->xyb, n, 6 * (size_t)w);
    for (int c = 0; c < 3; c++) {
        map_terms(xyb + c * w, xyb + (3 + c) * w, s->vout, c, w, s->terms);
        map_sums(s->terms, w, sums[c]);
    }
}

/* One scale: rows of linear light in, sums out, the next scale's linear
 * planes written when there is one. */
static void scale_pass(Ssimu2 *s, int sc, const QmFrame *f,
                       const QmSsimu2Conv conv[2], double sums[3][6])
{
    const int w = s->sw[sc], h = s->sh[sc];
    const size_t plane = (size_t)w * h;
    const float *cur = sc ? s->pyr[(sc - 1) & 1] : NULL;
    float *next = sc + 1 < s->n_scales ? s->pyr[sc & 1] : NULL;
    const size_t next_plane = next ? (size_t)s->sw[sc + 1] * s->sh[sc + 1] : 0;
    memset(s->vp1, 0, 3 * LANES * (size_t)w * sizeof(float));
    memset(s->vp2, 0, 3 * LANES * (size_t)w * sizeof(float));
    for (int r = 0; r < h; r++) {
        const float *lin[2][3], *prev[2][3];
        for (int i = 0; i < 2; i++) {
            if (sc == 0) {
                float *row = s->lin0 + (size_t)((r & 1) * 6 + i * 3) * w;
                linear_row(s, i ? f->dist : f->ref, &conv[i], r, row);
                for (int c = 0; c < 3; c++) {
                    lin[i][c] = row + (size_t)c * w;
                    prev[i][c] = s->lin0 + (size_t)((~r & 1) * 6 + i * 3 + c) * w;
                }
            } else {
                for (int c = 0; c < 3; c++) {
                    lin[i][c] = cur + (i * 3 + c) * plane + (size_t)r * w;
                    prev[i][c] = lin[i][c] - w;
                }
            }
        }
        if (next && ((r & 1) || r == h - 1))
            for (int i = 0; i < 2; i++)
                for (int c = 0; c < 3; c++)
                    downsample_row((r & 1) ? prev[i][c] : lin[i][c], lin[i][c], w,
                                   next + (i * 3 + c) * next_plane +
                                       (size_t)(r >> 1) * s->sw[sc + 1]);
        float *xyb = ring_row(s->xyb, r, 6 * (size_t)w);
        for (int i = 0; i < 2; i++)
            xyb_row(lin[i][0], lin[i][1], lin[i][2], w, xyb + (size_t)i * 3 * w,
                    xyb + (size_t)(i * 3 + 1) * w, xyb + (size_t)(i * 3 + 2) * w);
        blur_inputs(xyb, xyb + 3 * (size_t)w, w, s->hin);
        blur_h_row(&s->g, s->hin, w, ring_row(s->hring, r, (size_t)w * LANES));
        vertical_step(s, r - QM_SSIMU2_RADIUS + 1, w, h, sums);
    }
    for (int n = QM_MAX(h - QM_SSIMU2_RADIUS + 1, 1 - QM_SSIMU2_RADIUS); n < h; n++)
        vertical_step(s, n, w, h, sums);
}

/* ---- stage 4: the score ---- */

/* The weights of the 108 norms (tools/ssimulacra2.cc, Msssim::Score(),
 * tuned by the metric's author on CID22, TID2013, KADID-10k and
 * KonFiG-IQA), in the order they are consumed: per channel X, Y, B; per
 * scale; per norm (1, 4): SSIM', ringing, blurring. */
static const double weight[108] = {
    0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0,
    0.0004371155730107379, 0.0, 1.1041726426657346, 0.00066284834129271,
    0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0,
    1.8422455520539298, 11.441172603757666, 0.0, 0.0007989109436015163,
    0.000176816438078653, 0.0, 1.8787594979546387, 10.94906990605142, 0.0,
    0.0007289346991508072, 0.9677937080626833, 0.0, 0.00014003424285435884,
    0.9981766977854967, 0.00031949755934435053, 0.0004550992113792063, 0.0,
    0.0, 0.0013648766163243398, 0.0, 0.0, 0.0, 0.0, 0.0, 7.466890328078848,
    0.0, 17.445833984131262, 0.0006235601634041466, 0.0, 0.0,
    6.683678146179332, 0.00037724407979611296, 1.027889937768264,
    225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361,
    0.001237755635509985, 176.39317598450694, 0.0, 0.0, 24.43300999870476,
    0.28520802612117757, 0.0004485436923833408, 0.0, 0.0, 0.0,
    34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0008680556573291698, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0005313191874358747, 0.0, 0.00016533814161379112, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0004179171803251336, 0.0017290828234722833, 0.0,
    0.0020827005846636437, 0.0, 0.0, 8.826982764996862, 23.19243343998926,
    0.0, 95.1080498811086, 0.9863978034400682, 0.9834382792465353,
    0.0012286405048278493, 171.2667255897307, 0.9807858872435379, 0.0, 0.0,
    0.0, 0.0005130064588990679, 0.0, 0.00010854057858411537,
};

double qm_ssimu2_score(const QmSsimu2Sums *s, int n_scales,
                       const int sw[QM_SSIMU2_SCALES],
                       const int sh[QM_SSIMU2_SCALES])
{
    /* the norms: mean = sum / pixels, 4-norm = (sum / pixels)^(1/4) */
    double norm[QM_SSIMU2_SCALES][3][6];
    for (int sc = 0; sc < n_scales; sc++) {
        const double one_per_pixels = 1.0 / (double)((size_t)sw[sc] * sh[sc]);
        for (int c = 0; c < 3; c++)
            for (int k = 0; k < 6; k += 2) {
                norm[sc][c][k] = one_per_pixels * s->v[sc][c][k];
                norm[sc][c][k + 1] = sqrt(sqrt(one_per_pixels * s->v[sc][c][k + 1]));
            }
    }
    /* with fewer than six scales, the weights are still taken in turn (the
     * reference's running index), not by scale */
    double ssim = 0.0;
    int i = 0;
    for (int c = 0; c < 3; c++)
        for (int sc = 0; sc < n_scales; sc++)
            for (int n = 0; n < 2; n++) {
                ssim += weight[i++] * fabs(norm[sc][c][n]);
                ssim += weight[i++] * fabs(norm[sc][c][2 + n]);
                ssim += weight[i++] * fabs(norm[sc][c][4 + n]);
            }
    ssim = ssim * 0.9562382616834844;
    ssim = 2.326765642916932 * ssim - 0.020884521182843837 * ssim * ssim +
           6.248496625763138e-05 * ssim * ssim * ssim;
    if (ssim > 0)
        return 100.0 - 10.0 * pow(ssim, 0.6276336467831387);
    return 100.0;
}

static int ssimu2_compute(void *priv, const QmFrame *f, QmRows *out)
{
    Ssimu2 *s = priv;
    QmSsimu2Sums sums;
    QmSsimu2Conv conv[2];
    qm_ssimu2_setup_conv(&s->opt, s->bpc, f->ref->color, &conv[0]);
    qm_ssimu2_setup_conv(&s->opt, s->bpc, f->dist->color, &conv[1]);
    memset(&sums, 0, sizeof(sums));
    for (int sc = 0; sc < s->n_scales; sc++)
        scale_pass(s, sc, f, conv, sums.v[sc]);
    qm_rows_set(out, 0, 0, qm_ssimu2_score(&sums, s->n_scales, s->sw, s->sh));
    return 0;
}

/* ---- descriptor ---- */

static const char *const ssimu2_features[] = { "ssimulacra2", NULL };

static const char *const ssimu2_matrices[] = {
    "auto", "bt709", "bt601", "bt2020", "smpte240m", "fcc", NULL,
};
static const char *const ssimu2_ranges[] = { "auto", "limited", "full", NULL };

static const QmOptionDesc ssimu2_options[] = {
    [QM_SSIMU2_OPT_MATRIX] = { "yuv_matrix", "matrix",
        "YCbCr matrix of the conversion to RGB: auto (the pictures' "
        "colorimetry where known, else BT.709), bt709, bt601, bt2020, "
        "smpte240m or fcc", 0, 0, 5, QM_OPT_IN_KEY | QM_OPT_ENUM },
    [QM_SSIMU2_OPT_RANGE] = { "yuv_range", "range",
        "sample range of the conversion to RGB: auto (the pictures' where "
        "known, else limited), limited or full", 0, 0, 2,
        QM_OPT_IN_KEY | QM_OPT_ENUM },
    { NULL },
};

static const char *const *const ssimu2_option_choices[] = {
    [QM_SSIMU2_OPT_MATRIX] = ssimu2_matrices,
    [QM_SSIMU2_OPT_RANGE] = ssimu2_ranges,
};

/* Conversions the one-option-at-a-time pass does not reach (a matrix with
 * a range), one of them also through the engines on both backends. */
static const QmOptionSet ssimu2_option_sets[] = {
    { "yuv_matrix=bt2020,yuv_range=full", QM_OPTSET_DIRECT },
    { "yuv_matrix=bt601,yuv_range=limited", QM_OPTSET_DIRECT | QM_OPTSET_ENGINE },
    { NULL, 0 },
};

extern const struct QmCudaFuncs qm_cuda_ssimulacra2;  /* cuda/ssimulacra2.cu */

const QmMetricDesc qm_metric_ssimulacra2 = {
    .name = "ssimulacra2",
    .display = "SSIMULACRA2",
    .description = "SSIMULACRA2 perceptual similarity in XYB (libjxl), "
                   "100 = identical",
    /* 100 for identical pictures, unbounded below (negative: very strong
     * distortion) */
    .scale = { "score", +1, NAN, 100 },
    .features = ssimu2_features,
    .options = ssimu2_options,
    .option_choices = ssimu2_option_choices,
    .flags = QM_METRIC_OPT_IN,
    /* the reference tool's minimum */
    .min_w = 8,
    .min_h = 8,
    .cpu = {
        .priv_size = sizeof(Ssimu2),
        .init = ssimu2_init,
        .compute = ssimu2_compute,
        .close = ssimu2_close,
    },
    .cuda = QM_CUDA_TWIN(qm_cuda_ssimulacra2),
    /* the twin's per-pixel values are the C code's bit for bit; its double
     * sums are trees instead of raster-order loops (relative ~1e-15),
     * which moves a score by ~1e-11 */
    .cuda_tol = 1e-9,
    .option_sets = ssimu2_option_sets,
};
