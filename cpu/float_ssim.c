/* gst-qmetric: float SSIM of luma, as libvmaf 3.2.0's "float_ssim" feature
 * extractor (float_ssim.c, ssim.c and IQA's _iqa_ssim) computes it with its
 * default options:
 *
 *   - luma converted to float, 10/12/16-bit scaled to the 8-bit range;
 *   - pictures whose smaller side is >= 384 reduced first by the factor
 *     f = round(min(w, h) / 256): f x f box filter sampled every f pixels
 *     (1920x1080 -> f = 4, 480x270; 1280x720 -> f = 3, 426x240; see
 *     qm_ssim_decimated_size() for the reference's size rule); the option
 *     scale = f (1..10) sets the factor instead, 1 keeping the picture;
 *   - SSIM with the 11x11 Gaussian window (sigma 1.5) over the valid region,
 *     K1 = 0.01, K2 = 0.03, L = 255, averaged and returned as a float.
 *
 * Pictures narrower or lower than the window (11), also after an explicit
 * scale's decimation, have no valid region; the reference then reports
 * NaN, we refuse them (min_w/min_h, qm_ssim_check()).
 *
 * enable_db writes -10 log10(1 - SSIM) instead, clip_db caps that
 * (qm_ssim_db()).  libvmaf's enable_lcs is not offered.
 */
#include <stdlib.h>

#include "metric.h"
#include "ssim.h"

typedef struct SsimState {
    int w, h, bpc;
    int factor;        /* decimation factor, 1 = none */
    int sw, sh;        /* size SSIM runs on */
    float *sref, *sdis;  /* sw x sh, stride sw, when factor > 1 */
    float *kernel;     /* factor x factor box */
    void *dec_scratch;
    QmSsimWork work;
    QmSsimDb db;
} SsimState;

static void ssim_close(void *priv)
{
    SsimState *s = priv;
    free(s->sref);
    free(s->sdis);
    free(s->kernel);
    free(s->dec_scratch);
    qm_ssim_work_free(&s->work);
}

int qm_ssim_check(const QmMetricConfig *cfg)
{
    if (cfg->w < QM_SSIM_WIN || cfg->h < QM_SSIM_WIN || cfg->bpc < 8 ||
        cfg->bpc > 16)
        return QM_ENOTSUP;
    /* an explicit scale may leave less than the window */
    const int f = qm_ssim_factor(cfg);
    if (f > 1 && (qm_ssim_decimated_size(cfg->w, f) < QM_SSIM_WIN ||
                  qm_ssim_decimated_size(cfg->h, f) < QM_SSIM_WIN))
        return QM_ENOTSUP;
    return 0;
}

static int ssim_init(void *priv, const QmMetricConfig *cfg)
{
    SsimState *s = priv;
    int err = qm_ssim_check(cfg);
    if (err)
        return err;
    s->w = cfg->w;
    s->h = cfg->h;
    s->bpc = cfg->bpc;
    s->factor = qm_ssim_factor(cfg);
    qm_ssim_db_setup(&s->db, cfg);
    s->sw = qm_ssim_decimated_size(cfg->w, s->factor);
    s->sh = qm_ssim_decimated_size(cfg->h, s->factor);
    if (s->factor == 1) {
        s->sw = cfg->w;
        s->sh = cfg->h;
    }

    if (s->factor > 1) {
        const size_t sn = (size_t)s->sw * (size_t)s->sh;
        s->sref = malloc(sn * sizeof(float));
        s->sdis = malloc(sn * sizeof(float));
        s->kernel = malloc((size_t)s->factor * s->factor * sizeof(float));
        s->dec_scratch = malloc(qm_ssim_decimate_scratch(cfg->w, s->factor,
                                                         s->factor));
        if (!s->sref || !s->sdis || !s->kernel || !s->dec_scratch)
            goto nomem;
        qm_ssim_box_kernel(s->kernel, s->factor);
    }
    err = qm_ssim_work_init(&s->work, s->sw, s->sh);
    if (err) {
        ssim_close(s);
        return err;
    }
    return 0;

nomem:
    ssim_close(s);
    return QM_ENOMEM;
}

static int ssim_compute(void *priv, const QmFrame *f, QmRows *out)
{
    SsimState *s = priv;
    /* the luma samples themselves: the stages convert them row by row */
    QmSsimSrc r = { f->ref->data[0], f->ref->stride[0], s->bpc };
    QmSsimSrc d = { f->dist->data[0], f->dist->stride[0], s->bpc };
    if (s->factor > 1) {
        const ptrdiff_t ss = (ptrdiff_t)(s->sw * sizeof(float));
        qm_ssim_decimate(s->sref, ss, &r, s->w, s->h, s->kernel, s->factor,
                         s->factor, s->dec_scratch);
        qm_ssim_decimate(s->sdis, ss, &d, s->w, s->h, s->kernel, s->factor,
                         s->factor, s->dec_scratch);
        r = (QmSsimSrc){ s->sref, ss, 0 };
        d = (QmSsimSrc){ s->sdis, ss, 0 };
    }

    QmSsimScore sc;
    qm_ssim_scale(&sc, &s->work, &r, &d, s->sw, s->sh);
    qm_rows_set(out, 0, 0, qm_ssim_db(&s->db, (double)sc.ssim));
    return 0;
}

extern const struct QmCudaFuncs qm_cuda_float_ssim;  /* cuda/ssim.cu */

static const char *const ssim_features[] = { "float_ssim", NULL };

static const QmOptionDesc ssim_options[] = {
    { "clip_db", NULL, "with enable_db, cap the value at that of an error of "
      "half a sample step", 0, 0, 1, QM_OPT_BOOL },
    { "enable_db", NULL, "write -10 log10(1 - SSIM) (dB) instead of SSIM",
      0, 0, 1, QM_OPT_BOOL },
    { "scale", NULL, "decimation factor: 0 automatic (round(min(w, h) / 256)), "
      "1 none, 2..10 that factor", 0, 0, 10, QM_OPT_INT },
    { NULL },
};

/* the presets' combinations (core/preset.c); scale=1 on sizes that
 * decimate by default, an explicit factor on odd sizes */
static const QmOptionSet ssim_option_sets[] = {
    { "enable_db=true,clip_db=true", QM_OPTSET_DIRECT | QM_OPTSET_ENGINE },
    { "scale=1,enable_db=true,clip_db=true", QM_OPTSET_DIRECT | QM_OPTSET_ENGINE },
    { "scale=3", QM_OPTSET_DIRECT },
    { NULL },
};

const QmMetricDesc qm_metric_float_ssim = {
    .name = "float_ssim",
    .display = "SSIM",
    .description = "SSIM of luma (11x11 Gaussian window, auto downscale), "
                   "as libvmaf's float_ssim",
    .scale = { "index", +1, NAN, 1 },
    .features = ssim_features,
    .options = ssim_options,
    .flags = QM_METRIC_LUMA_ONLY | QM_METRIC_NO_CHROMA,
    /* the 11x11 window must fit at least once (below that the reference's
     * score is NaN) */
    .min_w = QM_SSIM_WIN,
    .min_h = QM_SSIM_WIN,
    .cpu = {
        .priv_size = sizeof(SsimState),
        .init = ssim_init,
        .compute = ssim_compute,
        .close = ssim_close,
    },
    .cuda = QM_CUDA_TWIN(qm_cuda_float_ssim),
    /* The twin's per-pixel terms are bit-identical; only the order of the
     * double sums over a row differs (a tree per 32 columns), which moves
     * the mean by far less than a float ulp (< 1e-9 relative even at
     * 1080p), so the float score is equal or one ulp apart: at most 2^-24
     * below 1, 2^-23 at 1.  They are one ulp apart only when the two double
     * sums straddle a float rounding point (they differ by ~1e-16 relative,
     * a float ulp is 6e-8), so in practice the scores are equal, and so
     * are their dB values (enable_db), for which one ulp of a score s would
     * be 10 / ln 10 * 2^-24 / (1 - s) dB: the bound holds for the score,
     * the dB values are checked at it too (docs/accuracy.md). */
    .cuda_tol = 0x1p-23,
    .option_sets = ssim_option_sets,
};
