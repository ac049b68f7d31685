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
 * Exactness: the arithmetic (ciede_pixel.h, shared with the CUDA twin)
 * follows the reference's mix of float and double operation by operation
 * (see the casts), and calls the same libm functions, so each per-pixel
 * difference is bit-identical.  Pixels whose two triplets
 * are equal contribute exactly 0 in the reference (every term of the formula
 * is then 0), so they are skipped; the L*a*b* values of triplets and the
 * differences of pairs of triplets are memoised (QmCiedeCache), which returns
 * the same bits as recomputing them.
 */
#include <math.h>
#include <stdlib.h>

#include "ciede.h"
#include "ciede_pixel.h"
#include "metric.h"

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

/* the per-pixel arithmetic is ciede_pixel.h's, shared with the CUDA twin */

QmLab qm_ciede_lab(double y, double cb, double cr, const QmCiedeConv *cv)
{
    return qm_ciede_pixel_lab(y, cb, cr, cv);
}

float qm_ciede_de2000(QmLab c1, QmLab c2)
{
    return qm_ciede_pixel_de2000(c1, c2);
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

int qm_ciede_check(const QmMetricConfig *cfg)
{
    /* libvmaf ciede.c init(): needs colour; 8, 10, 12 and 16 bits (the
     * formula holds for every depth from 8 to 16, which we accept) */
    if (cfg->chroma == QM_CHROMA_400 || cfg->bpc < 8 || cfg->bpc > 16)
        return QM_ENOTSUP;
    int cw, ch;
    qm_plane_size(cfg->w, cfg->h, cfg->chroma, 1, &cw, &ch);
    if (cw < 1 || ch < 1)
        return QM_ENOTSUP;
    return 0;
}

static int ciede_init(void *priv, const QmMetricConfig *cfg)
{
    CiedeState *s = priv;
    const int err = qm_ciede_check(cfg);
    if (err)
        return err;
    s->w = cfg->w;
    s->h = cfg->h;
    s->bpc = cfg->bpc;
    int cw;
    qm_plane_size(cfg->w, cfg->h, cfg->chroma, 1, &cw, &s->ch);
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
    .display = "CIEDE2000",
    .description = "CIEDE2000 colour difference, 45 - 20 log10(mean dE00)",
    /* libvmaf's reporting: dB-like, higher is better */
    .scale = { "dB", +1, NAN, NAN },
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
