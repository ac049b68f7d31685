/* gst-qmetric: float SSIM of luma, as libvmaf 3.2.0's "float_ssim" feature
 * extractor (float_ssim.c, ssim.c and IQA's _iqa_ssim) computes it with its
 * default options:
 *
 *   - luma converted to float, 10/12/16-bit scaled to the 8-bit range;
 *   - pictures whose smaller side is >= 384 reduced first by the factor
 *     f = round(min(w, h) / 256): f x f box filter sampled every f pixels
 *     (1920x1080 -> f = 4, 480x270; 1280x720 -> f = 3, 426x240; see
 *     qm_ssim_decimated_size() for the reference's size rule);
 *   - SSIM with the 11x11 Gaussian window (sigma 1.5) over the valid region,
 *     K1 = 0.01, K2 = 0.03, L = 255, averaged and returned as a float.
 *
 * Pictures narrower or lower than the window (11) have no valid region; the
 * reference then reports NaN, we refuse them (min_w/min_h).
 * libvmaf's options (enable_lcs, enable_db, clip_db, scale) are not offered.
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
    s->factor = qm_ssim_auto_scale(cfg->w, cfg->h);
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
    qm_rows_set(out, 0, 0, (double)sc.ssim);
    return 0;
}

extern const struct QmCudaFuncs qm_cuda_float_ssim;  /* cuda/ssim.cu */

static const char *const ssim_features[] = { "float_ssim", NULL };

const QmMetricDesc qm_metric_float_ssim = {
    .name = "float_ssim",
    .display = "SSIM",
    .description = "SSIM of luma (11x11 Gaussian window, auto downscale), "
                   "as libvmaf's float_ssim",
    .scale = { "index", +1, NAN, 1 },
    .features = ssim_features,
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
     * below 1, 2^-23 at 1. */
    .cuda_tol = 0x1p-23,
};
