/* gst-qmetric: the stages shared by float SSIM and float MS-SSIM (see
 * ssim.h for the pipeline).
 *
 * Facts taken from libvmaf 3.2.0 (feature/ssim.c, ms_ssim.c,
 * iqa/ssim_tools.c, iqa/convolve.c, iqa/decimate.c, picture_copy.c):
 *
 *  - the Gaussian window is applied as two 1-D passes (IQA_CONVOLVE_1D is
 *    defined in iqa/iqa_options.h), horizontal first, each tap a float
 *    product summed in double and each pass's output rounded to float;
 *    only the "valid" part, where the window fits, is computed;
 *  - ref^2, dis^2 and ref*dis are float products stored as float before
 *    they are filtered;
 *  - sigma^2 = E[x^2] - mu^2 in float, clamped at 0;
 *  - the per-pixel terms are
 *        l = (2 mu_r mu_d + C1) / (mu_r^2 + mu_d^2 + C1)
 *        c = (2 sigma_r sigma_d + C2) / (sigma_r^2 + sigma_d^2 + C2)
 *        s = (sigma_rd + C3) / (sigma_r sigma_d + C3)
 *    with the numerators of l and c in double and their denominators in
 *    float, s entirely in float, and SSIM = l c s summed in double;
 *  - the means are divided by the valid area and returned as float.
 *
 * Every product above is rounded before it is added: the results match the
 * reference bit for bit when the compiler does not fuse multiply-adds
 * (the x86-64 baseline has no FMA; a build with -mfma or -march=native
 * should add -ffp-contract=off).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "ssim.h"

/* 1-D Gaussian, sigma 1.5, normalised and rounded to 6 decimals, exactly as
 * libvmaf tabulates it (iqa/ssim_tools.h, g_gaussian_window_h/_v; the
 * kernel is flagged normalized, so these values are used without rescaling
 * although they sum to 1.000002). */
static const float gauss[QM_SSIM_WIN] = {
    0.001028f, 0.007599f, 0.036001f, 0.109361f, 0.213006f, 0.266012f,
    0.213006f, 0.109361f, 0.036001f, 0.007599f, 0.001028f,
};

void qm_ssim_gauss_taps(float taps[QM_SSIM_WIN])
{
    memcpy(taps, gauss, sizeof(gauss));
}

/* Pixels per block of a row in stage 4: the five filtered values and the
 * terms of a block stay in L1 between the filter and the term loops. */
#define BLOCK 64

static inline const float *frow(const float *p, ptrdiff_t stride, int y)
{
    return (const float *)((const uint8_t *)p + (ptrdiff_t)y * stride);
}

static inline float *frow_w(float *p, ptrdiff_t stride, int y)
{
    return (float *)((uint8_t *)p + (ptrdiff_t)y * stride);
}

/* ---- stage 1 ---- */

void qm_ssim_to_float(float *dst, ptrdiff_t dst_stride, const void *src,
                      ptrdiff_t src_stride, int w, int h, int bpc)
{
    if (bpc == 8) {
        for (int y = 0; y < h; y++) {
            const uint8_t *restrict s =
                (const uint8_t *)src + (ptrdiff_t)y * src_stride;
            float *restrict d = frow_w(dst, dst_stride, y);
            for (int x = 0; x < w; x++)
                d[x] = (float)s[x];
        }
        return;
    }
    /* libvmaf picture_copy.c divides 10-, 12- and 16-bit samples by 4, 16
     * and 256 (float), bringing them to the 8-bit range that the SSIM
     * constants assume.  Division by a power of two is exact, so the
     * product with its inverse is identical; other depths (which the
     * reference mishandles by reading them as bytes) get the same
     * 2^(8 - bpc) scale. */
    const float inv = 1.0f / (float)(1 << (bpc - 8));
    for (int y = 0; y < h; y++) {
        const uint16_t *restrict s =
            (const uint16_t *)((const uint8_t *)src + (ptrdiff_t)y * src_stride);
        float *restrict d = frow_w(dst, dst_stride, y);
        for (int x = 0; x < w; x++)
            d[x] = (float)s[x] * inv;
    }
}

/* Row y of a stage source as floats: the row itself when the source is
 * float, else the samples converted into buf (w floats). */
static const float *src_row(const QmSsimSrc *s, int y, int w, float *buf)
{
    const uint8_t *row = (const uint8_t *)s->data + (ptrdiff_t)y * s->stride;
    if (!s->bpc)
        return (const float *)row;
    qm_ssim_to_float(buf, 0, row, 0, w, 1, s->bpc);
    return buf;
}

/* ---- stage 2 ---- */

/* The decimator reads column f x + u - r for output x and tap u (r =
 * taps / 2).  Splitting each (mirrored) input row into its f phases,
 * phase q holding columns f k + q - r, turns that into phase[u % f][x + u / f]:
 * contiguous in x, so the tap loop vectorises.  The split rows are kept in
 * a cache of `taps` slots, input row i in slot i % taps: the rows one
 * output row needs are at most `taps` consecutive ones (mirroring stays
 * inside that span), so they never evict each other, and consecutive
 * output rows reuse the rows they share. */
static int phase_len(int w, int taps, int factor)
{
    return qm_ssim_decimated_size(w, factor) + (taps - 1) / factor;
}

size_t qm_ssim_decimate_scratch(int w, int taps, int factor)
{
    const size_t wo = (size_t)qm_ssim_decimated_size(w, factor);
    const size_t split = (size_t)factor * (size_t)phase_len(w, taps, factor);
    return wo * sizeof(double) + (size_t)taps * sizeof(const float *) +
           (size_t)taps * sizeof(int) +
           ((size_t)taps * split + (size_t)w) * sizeof(float);
}

/* Phases of one input row: ph[q * plen + k] = s[qm_ssim_mirror(f k + q - r)]. */
static void split_row(float *restrict ph, const float *restrict s, int w,
                      int factor, int r, int plen)
{
    for (int q = 0; q < factor; q++) {
        float *restrict d = ph + (size_t)q * plen;
        /* k where f k + q - r lies inside the row: no mirroring */
        const int k0 = QM_MIN(plen, QM_MAX(0, (r - q + factor - 1) / factor));
        const int k1 = QM_MAX(k0, QM_MIN(plen, (w - 1 + r - q) / factor + 1));
        for (int k = 0; k < k0; k++)
            d[k] = s[qm_ssim_mirror(factor * k + q - r, w)];
        const float *restrict sq = s + q - r;
        for (int k = k0; k < k1; k++)
            d[k] = sq[factor * k];
        for (int k = k1; k < plen; k++)
            d[k] = s[qm_ssim_mirror(factor * k + q - r, w)];
    }
}

/* One kernel row for a row of outputs: acc[x] += sum_u k[u] p[u][x], the
 * taps added one by one in u order.  Inlined with taps constant where it
 * is known, so the tap loop unrolls and the x loop vectorises. */
static inline void mac_row(double *restrict acc, const float *const *p,
                           const float *k, int taps, int n)
{
    for (int x = 0; x < n; x++) {
        double a = acc[x];
        for (int u = 0; u < taps; u++)
            a += (double)(p[u][x] * k[u]);
        acc[x] = a;
    }
}

void qm_ssim_decimate(float *dst, ptrdiff_t dst_stride, const QmSsimSrc *src,
                      int w, int h, const float *kernel, int taps, int factor,
                      void *scratch)
{
    const int wo = qm_ssim_decimated_size(w, factor);
    const int ho = qm_ssim_decimated_size(h, factor);
    const int r = taps / 2;  /* taps -r .. taps - 1 - r, as iqa's kernels */
    const int plen = phase_len(w, taps, factor);
    const size_t split = (size_t)factor * (size_t)plen;
    double *restrict acc = scratch;
    const float **p = (const float **)(acc + wo);  /* taps of one row */
    int *tag = (int *)(p + taps);
    float *cache = (float *)(tag + taps);
    float *rowbuf = cache + (size_t)taps * split;
    for (int i = 0; i < taps; i++)
        tag[i] = -1;

    for (int y = 0; y < ho; y++) {
        for (int x = 0; x < wo; x++)
            acc[x] = 0.0;
        /* per output sample: rows (v) outer, columns (u) inner, one double
         * sum of float products, as iqa's _iqa_filter_pixel() */
        for (int v = 0; v < taps; v++) {
            const int row = qm_ssim_mirror(factor * y + v - r, h);
            float *ph = cache + (size_t)(row % taps) * split;
            if (tag[row % taps] != row) {
                split_row(ph, src_row(src, row, w, rowbuf), w, factor, r,
                          plen);
                tag[row % taps] = row;
            }
            for (int u = 0; u < taps; u++)
                p[u] = ph + (size_t)(u % factor) * plen + u / factor;
            const float *k = kernel + v * taps;
            switch (taps) {  /* MS-SSIM's 9 and the usual box factors */
            case 9: mac_row(acc, p, k, 9, wo); break;
            case 2: mac_row(acc, p, k, 2, wo); break;
            case 3: mac_row(acc, p, k, 3, wo); break;
            case 4: mac_row(acc, p, k, 4, wo); break;
            case 6: mac_row(acc, p, k, 6, wo); break;
            case 8: mac_row(acc, p, k, 8, wo); break;
            default: mac_row(acc, p, k, taps, wo); break;
            }
        }
        float *restrict d = frow_w(dst, dst_stride, y);
        for (int x = 0; x < wo; x++)
            d[x] = (float)acc[x];
    }
}

/* ---- stage 3 ---- */

/* out[x] = sum_u gauss[u] a[x + u].  The 11 taps are unrolled so each
 * output's double sum stays in a register and the loop vectorises over x;
 * the taps are still added in the reference's order. */
static void hpass1(float *restrict out, const float *restrict a, int wo)
{
    for (int x = 0; x < wo; x++) {
        double acc = 0.0;
        for (int u = 0; u < QM_SSIM_WIN; u++)
            acc += (double)(a[x + u] * gauss[u]);
        out[x] = (float)acc;
    }
}

/* out[x] = sum_u gauss[u] (a[x + u] b[x + u]), the product rounded to
 * float first (the reference stores it in a float plane). */
static void hpass2(float *restrict out, const float *restrict a,
                   const float *restrict b, int wo)
{
    for (int x = 0; x < wo; x++) {
        double acc = 0.0;
        for (int u = 0; u < QM_SSIM_WIN; u++) {
            const float p = a[x + u] * b[x + u];
            acc += (double)(p * gauss[u]);
        }
        out[x] = (float)acc;
    }
}

void qm_ssim_hfilter(const QmSsimPlanes *out, const QmSsimSrc *ref,
                     const QmSsimSrc *dis, int w, int y0, int y1,
                     float *rowbuf)
{
    const int wo = w - (QM_SSIM_WIN - 1);
    for (int y = y0; y < y1; y++) {
        const float *r = src_row(ref, y, w, rowbuf);
        const float *d = src_row(dis, y, w, rowbuf + w);
        const int slot = y % out->rows;
        float *o[QM_SSIM_NPLANES];
        for (int p = 0; p < QM_SSIM_NPLANES; p++)
            o[p] = frow_w(out->p[p], out->stride, slot);
        hpass1(o[QM_SSIM_MU_R], r, wo);
        hpass1(o[QM_SSIM_MU_D], d, wo);
        hpass2(o[QM_SSIM_RR], r, r, wo);
        hpass2(o[QM_SSIM_DD], d, d, wo);
        hpass2(o[QM_SSIM_RD], r, d, wo);
    }
}

/* ---- stage 4 ---- */

/* out[i] = sum_v gauss[v] rows[v][x0 + i], i < n */
static void vpass(float *restrict out, const float *const *rows, int x0,
                  int n)
{
    const float *restrict r[QM_SSIM_WIN];
    for (int v = 0; v < QM_SSIM_WIN; v++)
        r[v] = rows[v] + x0;
    for (int i = 0; i < n; i++) {
        double acc = 0.0;
        for (int v = 0; v < QM_SSIM_WIN; v++)
            acc += (double)(r[v][i] * gauss[v]);
        out[i] = (float)acc;
    }
}

void qm_ssim_vfilter(QmSsimRowSums *sums, const QmSsimPlanes *in, int wo,
                     int y0, int y1)
{
    float C1, C2, C3;
    qm_ssim_consts(&C1, &C2, &C3);

    for (int y = y0; y < y1; y++) {
        const float *rows[QM_SSIM_NPLANES][QM_SSIM_WIN];
        for (int p = 0; p < QM_SSIM_NPLANES; p++)
            for (int v = 0; v < QM_SSIM_WIN; v++)
                rows[p][v] = frow(in->p[p], in->stride, (y + v) % in->rows);

        QmSsimRowSums rs = { 0.0, 0.0, 0.0, 0.0 };
        for (int x0 = 0; x0 < wo; x0 += BLOCK) {
            const int n = QM_MIN(BLOCK, wo - x0);
            float m[QM_SSIM_NPLANES][BLOCK];
            for (int p = 0; p < QM_SSIM_NPLANES; p++)
                vpass(m[p], rows[p], x0, n);

            double t_ssim[BLOCK], t_l[BLOCK], t_c[BLOCK], t_s[BLOCK];
            for (int i = 0; i < n; i++) {
                const QmSsimRowSums t = qm_ssim_pixel(
                    m[QM_SSIM_MU_R][i], m[QM_SSIM_MU_D][i], m[QM_SSIM_RR][i],
                    m[QM_SSIM_DD][i], m[QM_SSIM_RD][i], C1, C2, C3);
                t_ssim[i] = t.ssim;
                t_l[i] = t.l;
                t_c[i] = t.c;
                t_s[i] = t.s;
            }
            for (int i = 0; i < n; i++) {
                rs.ssim += t_ssim[i];
                rs.l += t_l[i];
                rs.c += t_c[i];
                rs.s += t_s[i];
            }
        }
        sums[y - y0] = rs;
    }
}

/* ---- geometry, kernels, host-side formulas ---- */

int qm_ssim_auto_scale(int w, int h)
{
    /* libvmaf ssim.c: max(1, _round((float)min(w, h) / 256.0f)), where
     * iqa's _round() rounds halves away from zero. */
    const float q = (float)QM_MIN(w, h) / 256.0f;
    const int t = (int)q;
    const int r = (q - (float)t >= 0.5f) ? t + 1 : t;
    return QM_MAX(1, r);
}

int qm_ssim_factor(const QmMetricConfig *cfg)
{
    const int scale = cfg->opt ? (int)cfg->opt->v[QM_SSIM_OPT_SCALE] : 0;
    return scale > 0 ? scale : qm_ssim_auto_scale(cfg->w, cfg->h);
}

void qm_ssim_db_setup(QmSsimDb *db, const QmMetricConfig *cfg)
{
    db->on = cfg->opt && cfg->opt->v[QM_SSIM_OPT_ENABLE_DB] != 0;
    db->max_db = INFINITY;
    if (cfg->opt && cfg->opt->v[QM_SSIM_OPT_CLIP_DB] != 0) {
        /* the reference's unsigned arithmetic: peak^2 and w h in 32 bits */
        const unsigned peak = (1u << cfg->bpc) - 1;
        const double mse = 0.5 / (unsigned)(cfg->w * cfg->h);
        db->max_db = ceil(10. * log10((unsigned)(peak * peak) / mse));
    }
}

double qm_ssim_db(const QmSsimDb *db, double score)
{
    if (!db->on)
        return score;
    const double v = -10. * log10(1 - score);
    return v < db->max_db ? v : db->max_db;
}

void qm_ssim_box_kernel(float *k, int factor)
{
    const float v = 1.0f / (float)(factor * factor);
    for (int i = 0; i < factor * factor; i++)
        k[i] = v;
}

void qm_ms_ssim_lpf_kernel(float *k)
{
    /* libvmaf ms_ssim.c, g_lpf: the 9x9 low-pass filter of the 9/7
     * biorthogonal wavelet, tabulated to 6 decimals.  It is symmetric in
     * both axes, so it is given here by distance from the centre
     * [|dy|][|dx|].  (It is not exactly the rounded outer product of the
     * 1-D g_lpf_h, so it cannot be rebuilt from that; the decimator uses
     * this 2-D table.) */
    static const float q[5][5] = {
        {  0.363505f,  0.160885f, -0.047149f, -0.010146f,  0.016114f },
        {  0.160885f,  0.071207f, -0.020867f, -0.004490f,  0.007132f },
        { -0.047149f, -0.020867f,  0.006115f,  0.001316f, -0.002090f },
        { -0.010146f, -0.004490f,  0.001316f,  0.000283f, -0.000450f },
        {  0.016114f,  0.007132f, -0.002090f, -0.000450f,  0.000714f },
    };
    for (int i = 0; i < QM_MS_SSIM_LPF_TAPS; i++)
        for (int j = 0; j < QM_MS_SSIM_LPF_TAPS; j++)
            k[i * QM_MS_SSIM_LPF_TAPS + j] = q[abs(i - 4)][abs(j - 4)];
}

void qm_ssim_pool(QmSsimScore *out, const QmSsimRowSums *rows, int wo, int ho)
{
    QmSsimRowSums t = { 0.0, 0.0, 0.0, 0.0 };
    for (int y = 0; y < ho; y++) {
        t.ssim += rows[y].ssim;
        t.l += rows[y].l;
        t.c += rows[y].c;
        t.s += rows[y].s;
    }
    const double n = (double)wo * (double)ho;
    out->ssim = (float)(t.ssim / n);
    out->l = (float)(t.l / n);
    out->c = (float)(t.c / n);
    out->s = (float)(t.s / n);
}

double qm_ms_ssim_combine(const QmSsimScore sc[QM_MS_SSIM_SCALES])
{
    /* libvmaf ms_ssim.c, g_alphas/g_betas/g_gammas (float): the exponents
     * of Wang, Simoncelli & Bovik, "Multi-scale structural similarity for
     * image quality assessment" (2003); luminance only at the coarsest
     * scale. */
    static const float alpha[QM_MS_SSIM_SCALES] =
        { 0.0f, 0.0f, 0.0f, 0.0f, 0.1333f };
    static const float beta[QM_MS_SSIM_SCALES] =
        { 0.0448f, 0.2856f, 0.3001f, 0.2363f, 0.1333f };
    static const float *const gamma = beta;  /* same values in libvmaf */

    double ms = 1.0;
    for (int i = 0; i < QM_MS_SSIM_SCALES; i++)
        ms *= pow(sc[i].l, alpha[i]) * pow(sc[i].c, beta[i]) *
              pow(sc[i].s, gamma[i]);
    return ms;
}

/* ---- CPU driver for one scale ---- */

/* Valid rows per vertical band; the ring holds the band plus the 10 rows
 * of window overlap, each input row filtered horizontally once. */
#define BAND 16

int qm_ssim_work_init(QmSsimWork *wk, int max_w, int max_h)
{
    memset(wk, 0, sizeof(*wk));
    if (max_w < QM_SSIM_WIN || max_h < QM_SSIM_WIN)
        return QM_EINVAL;
    const int wo = max_w - (QM_SSIM_WIN - 1), ho = max_h - (QM_SSIM_WIN - 1);
    const size_t row = ((size_t)wo + 15) & ~(size_t)15;  /* floats */
    const int rows = BAND + QM_SSIM_WIN - 1;
    wk->buf = malloc(row * rows * QM_SSIM_NPLANES * sizeof(float));
    wk->sums = malloc((size_t)ho * sizeof(*wk->sums));
    wk->rowbuf = malloc(2 * (size_t)max_w * sizeof(float));
    if (!wk->buf || !wk->sums || !wk->rowbuf) {
        qm_ssim_work_free(wk);
        return QM_ENOMEM;
    }
    for (int p = 0; p < QM_SSIM_NPLANES; p++)
        wk->ring.p[p] = wk->buf + (size_t)p * row * rows;
    wk->ring.stride = (ptrdiff_t)(row * sizeof(float));
    wk->ring.rows = rows;
    wk->max_w = max_w;
    wk->max_h = max_h;
    return 0;
}

void qm_ssim_work_free(QmSsimWork *wk)
{
    free(wk->buf);
    free(wk->sums);
    free(wk->rowbuf);
    memset(wk, 0, sizeof(*wk));
}

void qm_ssim_scale(QmSsimScore *out, QmSsimWork *wk, const QmSsimSrc *ref,
                   const QmSsimSrc *dis, int w, int h)
{
    const int wo = w - (QM_SSIM_WIN - 1), ho = h - (QM_SSIM_WIN - 1);
    int next = 0;  /* first input row not yet filtered horizontally */
    for (int y0 = 0; y0 < ho; y0 += BAND) {
        const int y1 = QM_MIN(y0 + BAND, ho);
        qm_ssim_hfilter(&wk->ring, ref, dis, w, next, y1 + QM_SSIM_WIN - 1,
                        wk->rowbuf);
        next = y1 + QM_SSIM_WIN - 1;
        qm_ssim_vfilter(wk->sums + y0, &wk->ring, wo, y0, y1);
    }
    qm_ssim_pool(out, wk->sums, wo, ho);
}
