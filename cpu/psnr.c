/* gst-qmetric: PSNR of each plane, as libvmaf's "psnr" feature extractor
 * (integer_psnr.c, libvmaf 3.2.0) computes it.
 *
 *   mse  = SSE / (plane width * plane height), SSE summed exactly in integers
 *   psnr = min(10 log10(peak^2 / max(mse, 1e-16)), 6 * bpc + 12)
 *
 * peak is (1 << bpc) - 1 (libvmaf's default; its reduced_hbd_peak option is
 * not offered).  The cap 6 * bpc + 12 dB (60 dB at 8 bits, 72 at 10, 84 at
 * 12) is what identical planes score.
 */
#include <math.h>

#include "psnr.h"

void qm_psnr_setup(const QmMetricConfig *cfg, QmPsnrParams *s)
{
    s->nplanes = qm_n_planes(cfg->chroma);
    for (int p = 0; p < s->nplanes; p++)
        qm_plane_size(cfg->w, cfg->h, cfg->chroma, p, &s->pw[p], &s->ph[p]);
    const double peak = (double)((1 << cfg->bpc) - 1);
    s->peak2 = peak * peak;
    s->cap = 6.0 * cfg->bpc + 12.0;
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

static int psnr_compute(void *priv, const QmFrame *f, QmRows *out)
{
    const QmPsnrParams *s = priv;
    for (int p = 0; p < s->nplanes; p++) {
        const uint64_t sse = qm_psnr_sse(f->ref, f->dist, p, s->pw[p], s->ph[p]);
        qm_rows_set(out, 0, (unsigned)p,
                    qm_psnr_from_sse(sse, s->pw[p], s->ph[p], s->peak2, s->cap));
    }
    return 0;
}

extern const struct QmCudaFuncs qm_cuda_psnr;  /* cuda/psnr.cu */

static const char *const psnr_features[] = { "psnr_y", "psnr_cb", "psnr_cr", NULL };

const QmMetricDesc qm_metric_psnr = {
    .name = "psnr",
    .display = "PSNR",
    .description = "PSNR of Y, Cb and Cr in dB, capped at 6 x bitdepth + 12",
    .scale = { "dB", +1, NAN, NAN },
    .features = psnr_features,
    .flags = QM_METRIC_LUMA_ONLY,  /* on GRAY input only psnr_y is set */
    .min_w = 1,
    .min_h = 1,
    .cpu = {
        .priv_size = sizeof(QmPsnrParams),
        .init = psnr_init,
        .compute = psnr_compute,
    },
    .cuda = QM_CUDA_TWIN(qm_cuda_psnr),
};
