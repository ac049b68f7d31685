/* gst-qmetric: PSNR of each plane, as libvmaf's "psnr" feature extractor
 * (integer_psnr.c, libvmaf 3.2.0) computes it.
 *
 *   mse  = SSE / (plane width * plane height), SSE summed exactly in integers
 *   psnr = min(10 log10(peak^2 / max(mse, 1e-16)), cap)
 *
 * peak is (1 << bpc) - 1, or 255 << (bpc - 8) with reduced_hbd_peak (the
 * 8-bit peak scaled: 1020 at 10 bits, 4080 at 12), which lowers high bit
 * depth scores by 20 log10(1023 / 1020) = 0.0255 dB at 10 bits.  The cap
 * is 6 * bpc + 12 dB (60 at 8 bits, 72 at 10, 84 at 12), what identical
 * planes score; with min_sse > 0 it is per plane ceil(10 log10(peak^2 N /
 * min_sse)), N the plane's samples (the score of an SSE of min_sse).
 *
 * enable_apsnr adds whole-run values (aggregates apsnr_y, apsnr_cb,
 * apsnr_cr): one PSNR per plane over every frame counted,
 * 10 (log10 peak^2 + log10 N - log10 SSE), N and SSE summed over the frames,
 * capped at ceil(10 log10(peak^2 N 2)) with libvmaf's unsigned 64-bit
 * product (it wraps only past 2^64 samples-times-peak^2).  A plane not
 * computed (enable_chroma off, GRAY input) has N = SSE = 0 and the
 * reference's -inf (written as null).  The per-frame SSE are summed as
 * doubles: exact while the sum stays below 2^53 (a 1080p 10-bit plane's
 * worst frame is 2^41), far below the printed precision beyond.
 */
#include <float.h>
#include <math.h>

#include "psnr.h"

void qm_psnr_setup(const QmMetricConfig *cfg, QmPsnrParams *s)
{
    const bool chroma = !cfg->opt || cfg->opt->v[QM_PSNR_ENABLE_CHROMA] != 0;
    const double min_sse = cfg->opt ? cfg->opt->v[QM_PSNR_MIN_SSE] : 0.0;
    s->nplanes = chroma ? qm_n_planes(cfg->chroma) : 1;
    const bool reduced = cfg->opt && cfg->opt->v[QM_PSNR_REDUCED_HBD_PEAK] != 0;
    s->peak = reduced ? 255u << (cfg->bpc - 8) : (1u << cfg->bpc) - 1;
    s->peak2 = (double)s->peak * s->peak;
    for (int p = 0; p < 3; p++) {
        qm_plane_size(cfg->w, cfg->h, cfg->chroma, p, &s->pw[p], &s->ph[p]);
        if (min_sse != 0.0) {
            const double mse = min_sse / ((double)s->pw[p] * s->ph[p]);
            s->cap[p] = ceil(10.0 * log10(s->peak2 / mse));
        } else {
            s->cap[p] = 6.0 * cfg->bpc + 12.0;
        }
    }
    s->apsnr = cfg->opt && cfg->opt->v[QM_PSNR_ENABLE_APSNR] != 0;
}

static int psnr_init(void *priv, const QmMetricConfig *cfg)
{
    qm_psnr_setup(cfg, priv);
    return 0;
}

uint64_t qm_psnr_sse(const QmPicture *ref, const QmPicture *dist, int p,
                     int w, int h)
{
    uint64_t sse = 0;
    for (int y = 0; y < h; y++) {
        uint64_t row = 0;  /* a row of 16-bit errors can exceed 32 bits */
        if (ref->bpc == 8) {
            const uint8_t *a = qm_row8(ref, p, y), *b = qm_row8(dist, p, y);
            for (int x = 0; x < w; x++) {
                const int e = a[x] - b[x];
                row += (uint32_t)(e * e);
            }
        } else {
            const uint16_t *a = qm_row16(ref, p, y), *b = qm_row16(dist, p, y);
            for (int x = 0; x < w; x++) {
                const int64_t e = (int64_t)a[x] - b[x];
                row += (uint64_t)(e * e);
            }
        }
        sse += row;
    }
    return sse;
}

double qm_psnr_from_sse(uint64_t sse, int w, int h, double peak2, double cap)
{
    const double mse = (double)sse / ((double)w * h);
    return QM_MIN(10.0 * log10(peak2 / QM_MAX(mse, 1e-16)), cap);
}

void qm_psnr_rows(const QmPsnrParams *s, const uint64_t *sse, QmRows *out)
{
    for (int p = 0; p < s->nplanes; p++) {
        qm_rows_set(out, 0, (unsigned)p,
                    qm_psnr_from_sse(sse[p], s->pw[p], s->ph[p], s->peak2, s->cap[p]));
        if (out->aux)
            out->aux[p] = (double)sse[p];
    }
}

static int psnr_compute(void *priv, const QmFrame *f, QmRows *out)
{
    const QmPsnrParams *s = priv;
    uint64_t sse[3];
    for (int p = 0; p < s->nplanes; p++)
        sse[p] = qm_psnr_sse(f->ref, f->dist, p, s->pw[p], s->ph[p]);
    qm_psnr_rows(s, sse, out);
    return 0;
}

static bool psnr_aux_of(const QmOptValues *o)
{
    return o->v[QM_PSNR_ENABLE_APSNR] != 0;
}

/* enable_apsnr's whole-run values (libvmaf integer_psnr.c flush()), from
 * the frames' SSE (the aux values; a plane not computed stays at 0). */
typedef struct PsnrPool {
    QmPsnrParams prm;
    double sse[3];
    uint64_t frames;
} PsnrPool;

static int psnr_pool_init(void *state, const QmMetricConfig *cfg)
{
    qm_psnr_setup(cfg, &((PsnrPool *)state)->prm);
    return 0;
}

static void psnr_pool_add(void *state, const double *v, const uint8_t *set)
{
    (void)state;
    (void)v;
    (void)set;  /* the capped scores: apsnr needs the SSE (add_aux) */
}

static void psnr_pool_add_aux(void *state, const double *aux)
{
    PsnrPool *s = state;
    for (int p = 0; p < 3; p++)
        s->sse[p] += aux[p];
    s->frames++;
}

static const char *psnr_pool_value(const void *state, unsigned n, double *x)
{
    static const char *const keys[] = { "apsnr_y", "apsnr_cb", "apsnr_cr" };
    const PsnrPool *s = state;
    if (!s->prm.apsnr || n >= 3)
        return NULL;
    /* the reference's integers: peak^2 in 32 bits, the products in 64 */
    const uint32_t peak2 = s->prm.peak * s->prm.peak;
    const int p = (int)n;
    const uint64_t px = p < s->prm.nplanes ?
        s->frames * (uint64_t)s->prm.pw[p] * (uint64_t)s->prm.ph[p] : 0;
    const double apsnr = 10 * (log10((double)peak2) + log10((double)px) - log10(s->sse[p]));
    const double max_apsnr = ceil(10 * log10((double)((uint64_t)peak2 * px * 2)));
    *x = apsnr < max_apsnr ? apsnr : max_apsnr;
    return keys[n];
}

static const QmPoolFuncs psnr_pool = {
    .state_size = sizeof(PsnrPool),
    .init = psnr_pool_init,
    .add = psnr_pool_add,
    .value = psnr_pool_value,
    .add_aux = psnr_pool_add_aux,
};

extern const struct QmCudaFuncs qm_cuda_psnr;  /* cuda/psnr.cu */

static const char *const psnr_features[] = { "psnr_y", "psnr_cb", "psnr_cr", NULL };

static const QmOptionDesc psnr_options[] = {
    { "enable_apsnr", NULL, "also write the PSNR of each plane over the whole run "
      "(aggregates apsnr_y, apsnr_cb, apsnr_cr)", 0, 0, 1, QM_OPT_BOOL },
    { "enable_chroma", NULL, "score the chroma planes too", 1, 0, 1, QM_OPT_BOOL },
    { "min_sse", NULL, "cap each plane's score at that of this SSE "
      "(0: at 6 x bitdepth + 12 dB)", 0, 0, DBL_MAX, 0 },
    { "reduced_hbd_peak", NULL, "peak 255 << (bitdepth - 8) instead of "
      "2^bitdepth - 1 (high bit depth scored as scaled 8-bit)", 0, 0, 1, QM_OPT_BOOL },
    { NULL },
};

/* the presets' combinations (core/preset.c), each option with the others */
static const QmOptionSet psnr_option_sets[] = {
    { "enable_apsnr=true,min_sse=0.5,reduced_hbd_peak=true",
      QM_OPTSET_DIRECT | QM_OPTSET_ENGINE },
    { "enable_apsnr=true,enable_chroma=false", QM_OPTSET_ENGINE },
    { NULL },
};

const QmMetricDesc qm_metric_psnr = {
    .name = "psnr",
    .display = "PSNR",
    .description = "PSNR of Y, Cb and Cr in dB, capped at 6 x bitdepth + 12",
    .scale = { "dB", +1, NAN, NAN },
    .features = psnr_features,
    .options = psnr_options,
    .flags = QM_METRIC_LUMA_ONLY,  /* on GRAY input only psnr_y is set */
    .min_w = 1,
    .min_h = 1,
    .cpu = {
        .priv_size = sizeof(QmPsnrParams),
        .init = psnr_init,
        .compute = psnr_compute,
    },
    .cuda = QM_CUDA_TWIN(qm_cuda_psnr),
    .option_sets = psnr_option_sets,
    .pool = &psnr_pool,
    .n_aux = 3,
    .aux_of = psnr_aux_of,
};
