/* gst-qmetric: CIEDE2000, as libvmaf's "ciede" feature extractor
 * (src/feature/ciede.c, libvmaf 3.2.0, ported from rust-av av-metrics)
 * computes it:
 *
 *   - chroma is brought to luma size by replication (nearest neighbour);
 *   - each YCbCr triplet (limited range, BT.709) -> linear sRGB -> XYZ ->
 *     L*a*b* (D65 white);
 *   - per pixel, CIEDE2000 (Sharma, Wu, Dalal 2005) with kL = 0.65, kC = 1,
 *     kH = 4, in av-metrics' variant (the hue difference is gated by the
 *     unprimed chromas, the mean hue ignores the zero-chroma rule);
 *   - score = 45 - 20 log10(mean difference over the luma pixels); identical
 *     frames score +inf.
 *
 * Chroma placement (cx[], chroma row choice in ciede_compute()): luma (x, y)
 * uses chroma sample (x >> ss_x, y >> ss_y) of each chroma plane, which is
 * plain replication.  Two deliberate departures from the reference:
 *   - 4:2:2: the reference takes chroma sample x (not x / 2) of chroma row
 *     y / 2, as if the planes were 4:2:0; we use sample x / 2 of row y (the
 *     golden test exempts ciede2000 on its 4:2:2 case for this reason);
 *   - odd sizes: the chroma planes are floor(w / 2) (x floor(h / 2)) wide
 *     (tall), so the last luma column (row) has no chroma sample of its own;
 *     the reference reads one sample past the plane there.  We clamp: the
 *     last luma column / row uses the last chroma column / row.
 *
 * Exactness: the arithmetic follows the reference's mix of float and double
 * operation by operation (see the casts), and calls the same libm functions,
 * so each per-pixel difference is bit-identical.  Pixels whose two triplets
 * are equal contribute exactly 0 in the reference (every term of the formula
 * is then 0), so they are skipped; the L*a*b* values of triplets and the
 * differences of pairs of triplets are memoised (QmCiedeCache), which returns
 * the same bits as recomputing them.
 */
#include <math.h>
#include <stdlib.h>

#include "ciede.h"
#include "metric.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* ---- colour conversion ---- */

void qm_ciede_conv(QmCiedeConv *cv, int bpc)
{
    /* limited range: luma 16..235, chroma 16..240 around 128, at 8 bits,
     * scaled by 2^(bpc - 8) (libvmaf ciede.c, get_lab_color()) */
    const double scale = (double)(1 << (bpc - 8));
    cv->y_off = 16. * scale;
    cv->y_mul = 1. / (219. * scale);
    cv->c_off = 128. * scale;
    cv->c_mul = 1. / (224. * scale);
}

/* sRGB transfer function inverse (IEC 61966-2-1 with av-metrics' threshold
 * 10/255 on the encoded value), in double. */
static inline double srgb_to_linear(double c)
{
    if (c > 10. / 255.)
        return pow((c + 0.055) * (1.0 / 1.055), 2.4);
    return c * (1.0 / 12.92);
}

/* CIE L*a*b* companding f(t), rounded to float as the reference's helper
 * returns float: cube root above (6/29)^3 = 216/24389, else the linear segment
 * (kappa t + 16) / 116 with kappa = 24389/27. */
static inline float lab_f(double t)
{
    if (t > 216.0 / 24389.0)
        return (float)pow(t, 1.0 / 3.0);
    return (float)((24389.0 / 27.0 * t + 16.0) * (1.0 / 116.0));
}

QmLab qm_ciede_lab(double y, double cb, double cr, const QmCiedeConv *cv)
{
    y = (y - cv->y_off) * cv->y_mul;
    cb = (cb - cv->c_off) * cv->c_mul;
    cr = (cr - cv->c_off) * cv->c_mul;

    /* -> R'G'B' with the BT.709 matrix for analogue Y'UV (U, V scaled by
     * 0.436 and 0.615), which av-metrics applies to Cb, Cr normalised to
     * +-0.5; kept as the reference has it (libvmaf ciede.c: "Assumes BT.709") */
    const double r = srgb_to_linear(y + 1.28033 * cr);
    const double g = srgb_to_linear(y - 0.21482 * cb - 0.38059 * cr);
    const double b = srgb_to_linear(y + 2.12798 * cb);

    /* linear sRGB -> XYZ (D65), rows of the sRGB matrix as av-metrics has
     * them; X and Z normalised by the D65 white point (0.95047, 1, 1.08883) */
    const double X = r * 0.4124564390896921 + g * 0.357576077643909 +
                     b * 0.18043748326639894;
    const double Y = r * 0.21267285140562248 + g * 0.715152155287818 +
                     b * 0.07217499330655958;
    const double Z = r * 0.019333895582329317 + g * 0.119192025881303 +
                     b * 0.9503040785363677;
    const double fx = lab_f(X * (1.0 / 0.95047));
    const double fy = lab_f(Y);
    const double fz = lab_f(Z * (1.0 / 1.08883));

    QmLab lab = {
        .l = (float)(116.0 * fy - 16.0),
        .a = (float)(500.0 * (fx - fy)),
        .b = (float)(200.0 * (fy - fz)),
    };
    return lab;
}

/* ---- CIEDE2000 ---- */

/* Weighting factors (libvmaf ciede.c, extract(): default_ksub), floats
 * initialised from double literals (hence the casts: decimal -> double ->
 * float, as there). */
static const float ksub_l = (float)0.65, ksub_c = (float)1.0, ksub_h = (float)4.0;

/* 25^7, the chroma compensation constant of CIEDE2000, in double and as the
 * float that powf(25, 7) folds to. */
static const double pow25_7 = 6103515625.0;

/* hue angle h' = atan2(b, a') in [0, 2 pi); 0 for the neutral colour */
static inline float hue_angle(float b, float a_prime)
{
    if (b == 0.0f && a_prime == 0.0f)
        return 0.0f;
    float h = (float)atan2(b, a_prime);
    if (h < 0.0f)
        h = (float)(h + 2. * M_PI);
    return h;
}

/* delta h', gated by the unprimed chromas as av-metrics does */
static inline float hue_delta(float c1, float c2, float h1, float h2)
{
    if (c1 == 0.0f || c2 == 0.0f)
        return 0.0f;
    if (fabsf(h1 - h2) <= M_PI)
        return h2 - h1;
    if (h2 <= h1)
        return (float)((h2 - h1) + 2. * M_PI);
    return (float)((h2 - h1) - 2. * M_PI);
}

/* mean hue H-bar' (without the zero-chroma and > 2 pi cases of the paper) */
static inline float hue_mean(float h1, float h2)
{
    if (fabs(h1 - h2) > M_PI)
        return (float)(((h1 + h2) + 2.0 * M_PI) / 2.0);
    return (float)((h1 + h2) / 2.0);
}

/* T(H-bar'), the hue weighting function of CIEDE2000, in double */
static inline float hue_weight(float h)
{
    return (float)(1.0 - 0.17 * cos(h - M_PI / 6.0) + 0.24 * cos(2.0 * h) +
                   0.32 * cos(3.0 * h + M_PI / 30.0) -
                   0.20 * cos(4.0 * h - 7.0 * M_PI / 20.0));
}

/* R_T, the blue-region rotation term: -2 sqrt(C^7 / (C^7 + 25^7))
 * sin(60 deg * exp(-((H - 275 deg) / 25 deg)^2)); here C^7 is formed with
 * powf, and the angles round through float as the reference's helpers do */
static inline float rotation_term(float c_bar_prime, float h_bar_prime)
{
    const float h_deg = (float)(h_bar_prime * (180.0 / M_PI));
    const float t = (float)((h_deg - 275.0) * (1.0 / 25.0));
    const float c7 = powf(c_bar_prime, 7);
    const float ratio = c7 / (c7 + powf(25.0f, 7));
    const float theta_deg = (float)(60.0 * exp(-(t * t)));
    const float theta = (float)(theta_deg * (M_PI / 180.0));
    return (float)(-2.0 * sqrt(ratio) * sin(theta));
}

float qm_ciede_de2000(QmLab c1, QmLab c2)
{
    const float dl = c2.l - c1.l;
    const float l_bar = (c1.l + c2.l) / 2;
    const float ch1 = (float)sqrt((double)c1.a * c1.a + (double)c1.b * c1.b);
    const float ch2 = (float)sqrt((double)c2.a * c2.a + (double)c2.b * c2.b);
    const float c_bar = (ch1 + ch2) / 2;

    /* a' = a (1 + G), G = (1 - sqrt(C-bar^7 / (C-bar^7 + 25^7))) / 2 */
    const double cb7 = pow(c_bar, 7);
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

    const float h1 = hue_angle(c1.b, a1p);
    const float h2 = hue_angle(c2.b, a2p);
    const float dh = hue_delta(ch1, ch2, h1, h2);
    const float dH = (float)(2.0 * sqrt((double)(c1p * c2p)) * sin(dh / 2.0));
    const float h_bar = hue_mean(h1, h2);
    const float t = hue_weight(h_bar);
    const float s_h = (float)(1.0 + 0.015 * c_bar_p * t);
    const float r_t = rotation_term(c_bar_p, h_bar);

    const float tl = dl / (ksub_l * s_l);
    const float tc = dc / (ksub_c * s_c);
    const float th = dH / (ksub_h * s_h);
    return (float)sqrt((double)tl * tl + (double)tc * tc + (double)th * th +
                       r_t * tc * th);
}

/* ---- stages ---- */

void qm_ciede_cache_reset(QmCiedeCache *c)
{
    /* no packed triplet has bits above 48 set */
    for (size_t i = 0; i < (size_t)1 << QM_CIEDE_CACHE_BITS; i++) {
        c->lab[i].key = UINT64_MAX;
        c->pair[i].ref = UINT64_MAX;
    }
}

static inline uint32_t cache_slot(uint64_t k)
{
    /* Fibonacci hashing: the top bits of k * 2^64 / phi */
    return (uint32_t)((k * 0x9E3779B97F4A7C15ull) >> (64 - QM_CIEDE_CACHE_BITS));
}

static inline QmLab lab_of(uint64_t key, int y, int cb, int cr,
                           const QmCiedeConv *cv, QmCiedeCache *cache)
{
    if (!cache)
        return qm_ciede_lab(y, cb, cr, cv);
    QmCiedeLabSlot *e = &cache->lab[cache_slot(key)];
    if (e->key != key) {
        e->key = key;
        e->lab = qm_ciede_lab(y, cb, cr, cv);
    }
    return e->lab;
}

void qm_ciede_row_c(const void *y_ref, const void *cb_ref, const void *cr_ref,
                    const void *y_dist, const void *cb_dist,
                    const void *cr_dist, const int32_t *cx, int w, int bpc,
                    const QmCiedeConv *cv, QmCiedeCache *cache,
                    float *restrict de)
{
    for (int x = 0; x < w; x++) {
        const int c = cx[x];
        int ry, ru, rv, dy, du, dv;
        if (bpc == 8) {
            ry = ((const uint8_t *)y_ref)[x];
            ru = ((const uint8_t *)cb_ref)[c];
            rv = ((const uint8_t *)cr_ref)[c];
            dy = ((const uint8_t *)y_dist)[x];
            du = ((const uint8_t *)cb_dist)[c];
            dv = ((const uint8_t *)cr_dist)[c];
        } else {
            ry = ((const uint16_t *)y_ref)[x];
            ru = ((const uint16_t *)cb_ref)[c];
            rv = ((const uint16_t *)cr_ref)[c];
            dy = ((const uint16_t *)y_dist)[x];
            du = ((const uint16_t *)cb_dist)[c];
            dv = ((const uint16_t *)cr_dist)[c];
        }
        const uint64_t kr = (uint64_t)ry | (uint64_t)ru << 16 | (uint64_t)rv << 32;
        const uint64_t kd = (uint64_t)dy | (uint64_t)du << 16 | (uint64_t)dv << 32;
        if (kr == kd) {
            de[x] = 0.0f;
            continue;
        }
        QmCiedePairSlot *p = NULL;
        if (cache) {
            p = &cache->pair[cache_slot(kr ^ (kd * 0xFF51AFD7ED558CCDull))];
            if (p->ref == kr && p->dist == kd) {
                de[x] = p->de;
                continue;
            }
        }
        const float v = qm_ciede_de2000(lab_of(kr, ry, ru, rv, cv, cache),
                                        lab_of(kd, dy, du, dv, cv, cache));
        if (p) {
            p->ref = kr;
            p->dist = kd;
            p->de = v;
        }
        de[x] = v;
    }
}

double qm_ciede_sum(double acc, const float *de, int n)
{
    for (int i = 0; i < n; i++)
        acc += de[i];
    return acc;
}

double qm_ciede_score(double de_sum, int w, int h)
{
    return 45. - 20. * log10(de_sum / ((double)w * h));
}

/* ---- the metric ---- */

typedef struct CiedeState {
    int w, h, bpc;
    int ss_y;            /* chroma row = luma row >> ss_y, clamped */
    int ch;              /* chroma plane height */
    int32_t *cx;         /* chroma column of each luma column */
    float *de;           /* one row of differences */
    QmCiedeConv cv;
    QmCiedeCache *cache; /* kept across frames: entries never go stale */
} CiedeState;

static void ciede_close(void *priv)
{
    CiedeState *s = priv;
    free(s->cx);
    free(s->de);
    free(s->cache);
    s->cx = NULL;
    s->de = NULL;
    s->cache = NULL;
}

static int ciede_init(void *priv, const QmMetricConfig *cfg)
{
    CiedeState *s = priv;
    /* libvmaf ciede.c init(): needs colour; 8, 10, 12 and 16 bits (the
     * formula holds for every depth from 8 to 16, which we accept) */
    if (cfg->chroma == QM_CHROMA_400 || cfg->bpc < 8 || cfg->bpc > 16)
        return QM_ENOTSUP;
    s->w = cfg->w;
    s->h = cfg->h;
    s->bpc = cfg->bpc;
    int cw;
    qm_plane_size(cfg->w, cfg->h, cfg->chroma, 1, &cw, &s->ch);
    if (cw < 1 || s->ch < 1)
        return QM_ENOTSUP;
    const int ss_x = cfg->chroma != QM_CHROMA_444;
    s->ss_y = cfg->chroma == QM_CHROMA_420;
    qm_ciede_conv(&s->cv, cfg->bpc);
    s->cx = malloc((size_t)cfg->w * sizeof(*s->cx));
    s->de = malloc((size_t)cfg->w * sizeof(*s->de));
    s->cache = malloc(sizeof(*s->cache));
    if (!s->cx || !s->de || !s->cache) {
        ciede_close(s);
        return QM_ENOMEM;
    }
    for (int x = 0; x < cfg->w; x++)
        s->cx[x] = QM_MIN(x >> ss_x, cw - 1);
    qm_ciede_cache_reset(s->cache);
    return 0;
}

static int ciede_compute(void *priv, const QmFrame *f, QmRows *out)
{
    CiedeState *s = priv;
    const QmPicture *r = f->ref, *d = f->dist;
    double sum = 0.;
    for (int y = 0; y < s->h; y++) {
        const int cy = QM_MIN(y >> s->ss_y, s->ch - 1);
        qm_ciede_row_c(qm_row8(r, 0, y), qm_row8(r, 1, cy), qm_row8(r, 2, cy),
                       qm_row8(d, 0, y), qm_row8(d, 1, cy), qm_row8(d, 2, cy),
                       s->cx, s->w, s->bpc, &s->cv, s->cache, s->de);
        sum = qm_ciede_sum(sum, s->de, s->w);
    }
    qm_rows_set(out, 0, 0, qm_ciede_score(sum, s->w, s->h));
    return 0;
}

extern const struct QmCudaFuncs qm_cuda_ciede;  /* cuda/ciede.cu */

static const char *const ciede_features[] = { "ciede2000", NULL };

const QmMetricDesc qm_metric_ciede = {
    .name = "ciede",
    .description = "CIEDE2000 colour difference, 45 - 20 log10(mean dE00)",
    .features = ciede_features,
    .min_w = 1,
    .min_h = 1,
    .cpu = {
        .priv_size = sizeof(CiedeState),
        .init = ciede_init,
        .compute = ciede_compute,
        .close = ciede_close,
    },
    .cuda = QM_CUDA_TWIN(qm_cuda_ciede),
    /* CUDA's pow/atan2/sin/cos/exp may differ from glibc's in the last bit of
     * a double, which reaches a pixel's float difference only rarely, and the
     * frame's sum is a tree instead of a loop: expected |diff| ~1e-12; a
     * single pixel's last-bit change in a tiny picture stays below 1e-5 */
    .cuda_tol = 1e-5,
};
