/* gst-qmetric: float MS-SSIM of luma, as libvmaf 3.2.0's "float_ms_ssim"
 * feature extractor (float_ms_ssim.c, ms_ssim.c) computes it with its
 * default options (Wang's MS-SSIM, 11x11 Gaussian window, 5 scales):
 *
 *   - luma converted to float, 10/12/16-bit scaled to the 8-bit range;
 *   - scale 0 is the picture itself; scale i + 1 is scale i filtered with
 *     the 9x9 low-pass of the 9/7 biorthogonal wavelet (mirrored borders)
 *     and sampled every 2 pixels, ceil(n / 2) samples per axis;
 *   - at every scale, single-scale SSIM gives the means of the luminance
 *     (l), contrast (c) and structure (s) terms, each a float;
 *   - MS-SSIM = prod_i l_i^alpha_i c_i^beta_i s_i^gamma_i in double (not
 *     rounded to float, unlike float_ssim).
 *
 * The reference refuses pictures where the window does not fit at every
 * scale, checked on floor-halved sizes: (w >> i) and (h >> i) >= 11 for
 * i = 0..4, i.e. w, h >= 176 ("error: scale below 1x1!", and the run
 * fails).  We refuse them the same way.  libvmaf's options (enable_lcs,
 * enable_db, clip_db) are not offered.
 */
#include <stdlib.h>

#include "metric.h"
#include "ssim.h"

/* smallest side with an 11-pixel scale 4: 11 << 4 */
#define MS_SSIM_MIN (QM_SSIM_WIN << (QM_MS_SSIM_SCALES - 1))

typedef struct MsSsimState {
    int bpc;
    int w[QM_MS_SSIM_SCALES], h[QM_MS_SSIM_SCALES];
    /* scales 1..4, stride w[i]; scale 0 is read from the picture */
    float *ref[QM_MS_SSIM_SCALES], *dis[QM_MS_SSIM_SCALES];
    float lpf[QM_MS_SSIM_LPF_TAPS * QM_MS_SSIM_LPF_TAPS];
    void *dec_scratch;
    QmSsimWork work;
} MsSsimState;

static void ms_ssim_close(void *priv)
{
    MsSsimState *s = priv;
    for (int i = 0; i < QM_MS_SSIM_SCALES; i++) {
        free(s->ref[i]);
        free(s->dis[i]);
    }
    free(s->dec_scratch);
    qm_ssim_work_free(&s->work);
}

int qm_ms_ssim_check(const QmMetricConfig *cfg)
{
    /* libvmaf ms_ssim.c: every scale, halved with floor, must hold the
     * window */
    for (int i = 0; i < QM_MS_SSIM_SCALES; i++)
        if ((cfg->w >> i) < QM_SSIM_WIN || (cfg->h >> i) < QM_SSIM_WIN)
            return QM_ENOTSUP;
    if (cfg->bpc < 8 || cfg->bpc > 16)
        return QM_ENOTSUP;
    return 0;
}

static int ms_ssim_init(void *priv, const QmMetricConfig *cfg)
{
    MsSsimState *s = priv;
    int err = qm_ms_ssim_check(cfg);
    if (err)
        return err;
    s->bpc = cfg->bpc;
    s->w[0] = cfg->w;
    s->h[0] = cfg->h;
    /* the scales themselves are ceil-halved (iqa/decimate.c) */
    for (int i = 1; i < QM_MS_SSIM_SCALES; i++) {
        s->w[i] = qm_ssim_decimated_size(s->w[i - 1], 2);
        s->h[i] = qm_ssim_decimated_size(s->h[i - 1], 2);
    }
    for (int i = 1; i < QM_MS_SSIM_SCALES; i++) {
        const size_t n = (size_t)s->w[i] * (size_t)s->h[i];
        s->ref[i] = malloc(n * sizeof(float));
        s->dis[i] = malloc(n * sizeof(float));
        if (!s->ref[i] || !s->dis[i])
            goto nomem;
    }
    s->dec_scratch = malloc(qm_ssim_decimate_scratch(cfg->w,
                                                     QM_MS_SSIM_LPF_TAPS, 2));
    if (!s->dec_scratch)
        goto nomem;
    qm_ms_ssim_lpf_kernel(s->lpf);
    err = qm_ssim_work_init(&s->work, cfg->w, cfg->h);
    if (err) {
        ms_ssim_close(s);
        return err;
    }
    return 0;

nomem:
    ms_ssim_close(s);
    return QM_ENOMEM;
}

static int ms_ssim_compute(void *priv, const QmFrame *f, QmRows *out)
{
    MsSsimState *s = priv;
    QmSsimSrc r[QM_MS_SSIM_SCALES], d[QM_MS_SSIM_SCALES];
    /* scale 0: the luma samples themselves, converted row by row */
    r[0] = (QmSsimSrc){ f->ref->data[0], f->ref->stride[0], s->bpc };
    d[0] = (QmSsimSrc){ f->dist->data[0], f->dist->stride[0], s->bpc };
    for (int i = 1; i < QM_MS_SSIM_SCALES; i++) {
        const ptrdiff_t stride = (ptrdiff_t)(s->w[i] * sizeof(float));
        qm_ssim_decimate(s->ref[i], stride, &r[i - 1], s->w[i - 1],
                         s->h[i - 1], s->lpf, QM_MS_SSIM_LPF_TAPS, 2,
                         s->dec_scratch);
        qm_ssim_decimate(s->dis[i], stride, &d[i - 1], s->w[i - 1],
                         s->h[i - 1], s->lpf, QM_MS_SSIM_LPF_TAPS, 2,
                         s->dec_scratch);
        r[i] = (QmSsimSrc){ s->ref[i], stride, 0 };
        d[i] = (QmSsimSrc){ s->dis[i], stride, 0 };
    }

    QmSsimScore sc[QM_MS_SSIM_SCALES];
    for (int i = 0; i < QM_MS_SSIM_SCALES; i++)
        qm_ssim_scale(&sc[i], &s->work, &r[i], &d[i], s->w[i], s->h[i]);
    qm_rows_set(out, 0, 0, qm_ms_ssim_combine(sc));
    return 0;
}

extern const struct QmCudaFuncs qm_cuda_float_ms_ssim;  /* cuda/ssim.cu */

static const char *const ms_ssim_features[] = { "float_ms_ssim", NULL };

const QmMetricDesc qm_metric_float_ms_ssim = {
    .name = "float_ms_ssim",
    .display = "MS-SSIM",
    .description = "MS-SSIM of luma (5 scales, Wang's exponents), as "
                   "libvmaf's float_ms_ssim",
    .scale = { "index", +1, NAN, 1 },
    .features = ms_ssim_features,
    .flags = QM_METRIC_LUMA_ONLY | QM_METRIC_NO_CHROMA,
    .min_w = MS_SSIM_MIN,
    .min_h = MS_SSIM_MIN,
    .cpu = {
        .priv_size = sizeof(MsSsimState),
        .init = ms_ssim_init,
        .compute = ms_ssim_compute,
        .close = ms_ssim_close,
    },
    .cuda = QM_CUDA_TWIN(qm_cuda_float_ms_ssim),
    /* As float_ssim (cpu/float_ssim.c): each of the float means l, c, s of a
     * scale is equal or one ulp apart (relative <= 2^-23); the product of
     * their powers moves by at most the sum of the exponents (2.1335) times
     * that, 2.6e-7 of a score <= 1. */
    .cuda_tol = 3e-7,
};
