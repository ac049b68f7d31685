/* gst-qmetric: PSNR-HVS, as libvmaf's "psnr_hvs" feature extractor
 * (src/feature/third_party/xiph/psnr_hvs.c, libvmaf 3.2.0, itself Xiph's
 * Daala tool) computes it.
 *
 * Per plane, on 8x8 blocks laid on a grid of step 7:
 *   - both blocks are transformed by Daala's 8x8 integer DCT (od_bin_fdct8x8);
 *   - a masking threshold is derived from the AC energy of each block weighted
 *     by a masking table, scaled by how much of the block's variance survives
 *     splitting it into four 4x4 quadrants; the larger of the reference's and
 *     the distorted block's thresholds is used;
 *   - each AC coefficient error is reduced by threshold / mask weight (floored
 *     at 0), weighted by a contrast sensitivity table, squared and summed.
 *   - the sum is divided by the number of coefficients and by peak^2.
 * Features: 10 log10(1 / err) per plane, and for "psnr_hvs" the same of
 * 0.8 err_Y + 0.1 (err_Cb + err_Cr).  Identical planes: err = 0, +inf dB.
 *
 * Exactness: the reference works in single precision, accumulating a plane's
 * errors into one float in block raster order; every float operation below
 * happens in the same order and precision (see psnr_hvs.h).  The CPU code
 * processes QM_HVS_CHUNK blocks side by side, one block per vector lane, so
 * each lane performs exactly the reference's scalar sequence; the per-block
 * arithmetic is in psnr_hvs_block.h, which the CUDA twin shares.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "psnr_hvs.h"
#include "psnr_hvs_block.h"

/* ---- constants ---- */

/* Contrast sensitivity weights (libvmaf psnr_hvs.c: csf_y, csf_cb420,
 * csf_cr420; "normalized inverse quantization matrix for 8x8 DCT at the point
 * of transparency", Xiph).  Declared as float but written with double
 * literals, like the reference, so each entry rounds decimal -> double ->
 * float exactly as there.  Row = vertical frequency. */
static const float hvs_csf_y[QM_HVS_COEFFS] = {
    1.6193873005, 2.2901594831, 2.08509755623, 1.48366094411, 1.00227514334, 0.678296995242, 0.466224900598, 0.3265091542,
    2.2901594831, 1.94321815382, 2.04793073064, 1.68731108984, 1.2305666963, 0.868920337363, 0.61280991668, 0.436405793551,
    2.08509755623, 2.04793073064, 1.34329019223, 1.09205635862, 0.875748795257, 0.670882927016, 0.501731932449, 0.372504254596,
    1.48366094411, 1.68731108984, 1.09205635862, 0.772819797575, 0.605636379554, 0.48309405692, 0.380429446972, 0.295774038565,
    1.00227514334, 1.2305666963, 0.875748795257, 0.605636379554, 0.448996256676, 0.352889268808, 0.283006984131, 0.226951348204,
    0.678296995242, 0.868920337363, 0.670882927016, 0.48309405692, 0.352889268808, 0.27032073436, 0.215017739696, 0.17408067321,
    0.466224900598, 0.61280991668, 0.501731932449, 0.380429446972, 0.283006984131, 0.215017739696, 0.168869545842, 0.136153931001,
    0.3265091542, 0.436405793551, 0.372504254596, 0.295774038565, 0.226951348204, 0.17408067321, 0.136153931001, 0.109083846276,
};

static const float hvs_csf_cb[QM_HVS_COEFFS] = {
    1.91113096927, 2.46074210438, 1.18284184739, 1.14982565193, 1.05017074788, 0.898018824055, 0.74725392039, 0.615105596242,
    2.46074210438, 1.58529308355, 1.21363250036, 1.38190029285, 1.33100189972, 1.17428548929, 0.996404342439, 0.830890433625,
    1.18284184739, 1.21363250036, 0.978712413627, 1.02624506078, 1.03145147362, 0.960060382087, 0.849823426169, 0.731221236837,
    1.14982565193, 1.38190029285, 1.02624506078, 0.861317501629, 0.801821139099, 0.751437590932, 0.685398513368, 0.608694761374,
    1.05017074788, 1.33100189972, 1.03145147362, 0.801821139099, 0.676555426187, 0.605503172737, 0.55002013668, 0.495804539034,
    0.898018824055, 1.17428548929, 0.960060382087, 0.751437590932, 0.605503172737, 0.514674450957, 0.454353482512, 0.407050308965,
    0.74725392039, 0.996404342439, 0.849823426169, 0.685398513368, 0.55002013668, 0.454353482512, 0.389234902883, 0.342353999733,
    0.615105596242, 0.830890433625, 0.731221236837, 0.608694761374, 0.495804539034, 0.407050308965, 0.342353999733, 0.295530605237,
};

static const float hvs_csf_cr[QM_HVS_COEFFS] = {
    2.03871978502, 2.62502345193, 1.26180942886, 1.11019789803, 1.01397751469, 0.867069376285, 0.721500455585, 0.593906509971,
    2.62502345193, 1.69112867013, 1.17180569821, 1.3342742857, 1.28513006198, 1.13381474809, 0.962064122248, 0.802254508198,
    1.26180942886, 1.17180569821, 0.944981930573, 0.990876405848, 0.995903384143, 0.926972725286, 0.820534991409, 0.706020324706,
    1.11019789803, 1.3342742857, 0.990876405848, 0.831632933426, 0.77418706195, 0.725539939514, 0.661776842059, 0.587716619023,
    1.01397751469, 1.28513006198, 0.995903384143, 0.77418706195, 0.653238524286, 0.584635025748, 0.531064164893, 0.478717061273,
    0.867069376285, 1.13381474809, 0.926972725286, 0.725539939514, 0.584635025748, 0.496936637883, 0.438694579826, 0.393021669543,
    0.721500455585, 0.962064122248, 0.820534991409, 0.661776842059, 0.531064164893, 0.438694579826, 0.375820256136, 0.330555063063,
    0.593906509971, 0.802254508198, 0.706020324706, 0.587716619023, 0.478717061273, 0.393021669543, 0.330555063063, 0.285345396658,
};

/* Masking weight = (csf * 0.3885746225901003)^2, evaluated in double and
 * stored as float (libvmaf psnr_hvs.c, calc_psnrhvs(); the factor maps the
 * CSF table onto the PSNR-HVS-M masking table of Ponomarenko et al., VPQM-07). */
#define HVS_MASK_SCALE 0.3885746225901003

void qm_hvs_tables(QmHvsTables *t, int plane)
{
    const float *csf = plane == 0 ? hvs_csf_y : plane == 1 ? hvs_csf_cb : hvs_csf_cr;
    for (int k = 0; k < QM_HVS_COEFFS; k++) {
        const double c = (double)csf[k] * HVS_MASK_SCALE;
        t->csf[k] = csf[k];
        t->mask[k] = (float)(c * c);
    }
}

/* ---- stage 1: per-block DCT, masking and weighted errors ---- */

/* The arithmetic is psnr_hvs_block.h's (shared with the CUDA twin); here,
 * the gathering of QM_HVS_CHUNK blocks into coefficient-major lanes. */

/* Copy n overlapping 8x8 blocks (step 7) into coefficient-major lanes. */
static void gather_blocks(int32_t *restrict dst, const void *src,
                          ptrdiff_t stride, int bpc, int n)
{
    const ptrdiff_t C = QM_HVS_CHUNK;
    for (int i = 0; i < 8; i++) {
        const uint8_t *row = (const uint8_t *)src + i * stride;
        for (int j = 0; j < 8; j++) {
            int32_t *restrict o = dst + (i * 8 + j) * C;
            if (bpc == 8) {
                const uint8_t *p = row + j;
                for (int b = 0; b < n; b++)
                    o[b] = p[QM_HVS_STEP * b];
            } else {
                const uint16_t *p = (const uint16_t *)row + j;
                for (int b = 0; b < n; b++)
                    o[b] = p[QM_HVS_STEP * b];
            }
        }
    }
}

void qm_hvs_blocks_c(const void *ref, ptrdiff_t ref_stride,
                     const void *dist, ptrdiff_t dist_stride,
                     int bpc, int nblocks, const QmHvsTables *t,
                     float *restrict terms, QmHvsScratch *scratch)
{
    const ptrdiff_t C = QM_HVS_CHUNK;
    const size_t bytes = bpc == 8 ? 1 : 2;
    int32_t *restrict s = scratch->s, *restrict d = scratch->d;

    for (int b0 = 0; b0 < nblocks; b0 += QM_HVS_CHUNK) {
        const int n = QM_MIN(QM_HVS_CHUNK, nblocks - b0);
        const size_t off = (size_t)b0 * QM_HVS_STEP * bytes;
        float s_m[QM_HVS_CHUNK], d_m[QM_HVS_CHUNK];

        gather_blocks(s, (const uint8_t *)ref + off, ref_stride, bpc, n);
        gather_blocks(d, (const uint8_t *)dist + off, dist_stride, bpc, n);
        qm_hvs_block_prep(s_m, s, scratch->tmp, C, n, t->mask, qm_hvs_var64(),
                          qm_hvs_var16());
        qm_hvs_block_prep(d_m, d, scratch->tmp, C, n, t->mask, qm_hvs_var64(),
                          qm_hvs_var16());
        /* a distortion is masked by the busier of the two blocks */
        for (int b = 0; b < n; b++)
            s_m[b] = d_m[b] > s_m[b] ? d_m[b] : s_m[b];

        /* the DC error is not masked */
        {
            float *restrict o = terms + b0;
            const float w = t->csf[0];
            for (int b = 0; b < n; b++)
                o[b] = qm_hvs_term_dc(s[b], d[b], w);
        }
        for (int k = 1; k < QM_HVS_COEFFS; k++) {
            const int32_t *restrict cs = s + k * C, *restrict cd = d + k * C;
            float *restrict o = terms + (size_t)k * nblocks + b0;
            const float w = t->csf[k], mk = t->mask[k];
            for (int b = 0; b < n; b++)
                o[b] = qm_hvs_term_ac(cs[b], cd[b], s_m[b], w, mk);
        }
    }
}

/* ---- stage 2 and 3 ---- */

float qm_hvs_accumulate(float acc, const float *terms, int nblocks)
{
    for (int b = 0; b < nblocks; b++)
        for (int k = 0; k < QM_HVS_COEFFS; k++)
            acc += terms[(size_t)k * nblocks + b];
    return acc;
}

double qm_hvs_plane_error(float acc, long nblocks, int bpc)
{
    /* float divisions by the coefficient count and by peak^2 (both converted
     * from int), as the reference's calc_psnrhvs() ends */
    const int32_t peak = (1 << bpc) - 1;
    acc /= (float)(nblocks * QM_HVS_COEFFS);
    acc /= (float)(peak * peak);
    return acc;
}

static double hvs_db(double err)
{
    return 10.0 * -log10(err);
}

void qm_hvs_scores(const double err[3], double out[4])
{
    for (int p = 0; p < 3; p++)
        out[p] = hvs_db(err[p]);
    /* libvmaf psnr_hvs.c extract(): luma 0.8, each chroma plane 0.1, combined
     * before the conversion to dB */
    out[3] = hvs_db(err[0] * .8 + .1 * (err[1] + err[2]));
}

/* ---- the metric ---- */

typedef struct HvsState {
    int bpc;
    int pw[3], ph[3];
    QmHvsTables tab[3];
    float *terms;        /* one block row of the widest plane */
    QmHvsScratch *scratch;
} HvsState;

static void hvs_close(void *priv)
{
    HvsState *s = priv;
    free(s->terms);
    free(s->scratch);
    s->terms = NULL;
    s->scratch = NULL;
}

int qm_hvs_check(const QmMetricConfig *cfg)
{
    if (cfg->chroma == QM_CHROMA_400 || cfg->bpc < 8 || cfg->bpc > 12)
        return QM_ENOTSUP;
    return 0;
}

static int hvs_init(void *priv, const QmMetricConfig *cfg)
{
    HvsState *s = priv;
    const int err = qm_hvs_check(cfg);
    if (err)
        return err;
    s->bpc = cfg->bpc;
    int maxbx = 0;
    for (int p = 0; p < 3; p++) {
        qm_plane_size(cfg->w, cfg->h, cfg->chroma, p, &s->pw[p], &s->ph[p]);
        /* A chroma plane smaller than 8x8 (4:2:0 or 4:2:2 below 16 samples)
         * holds no block: like the reference, its error is 0/0 = NaN and so
         * are its feature and "psnr_hvs" (null in the logs); luma has at
         * least one block (min_w, min_h). */
        qm_hvs_tables(&s->tab[p], p);
        maxbx = QM_MAX(maxbx, qm_hvs_nblocks(s->pw[p]));
    }
    s->terms = malloc((size_t)maxbx * QM_HVS_COEFFS * sizeof(float));
    s->scratch = malloc(sizeof(*s->scratch));
    if (!s->terms || !s->scratch) {
        hvs_close(s);
        return QM_ENOMEM;
    }
    return 0;
}

static int hvs_compute(void *priv, const QmFrame *f, QmRows *out)
{
    HvsState *s = priv;
    double err[3], v[4];
    for (int p = 0; p < 3; p++) {
        const int nbx = qm_hvs_nblocks(s->pw[p]), nby = qm_hvs_nblocks(s->ph[p]);
        const ptrdiff_t rs = f->ref->stride[p], ds = f->dist->stride[p];
        float acc = 0.f;
        for (int by = 0; by < nby; by++) {
            const ptrdiff_t y = (ptrdiff_t)by * QM_HVS_STEP;
            qm_hvs_blocks_c((const uint8_t *)f->ref->data[p] + y * rs, rs,
                            (const uint8_t *)f->dist->data[p] + y * ds, ds,
                            s->bpc, nbx, &s->tab[p], s->terms, s->scratch);
            acc = qm_hvs_accumulate(acc, s->terms, nbx);
        }
        err[p] = qm_hvs_plane_error(acc, (long)nbx * nby, s->bpc);
    }
    qm_hvs_scores(err, v);
    for (unsigned i = 0; i < 4; i++)
        qm_rows_set(out, 0, i, v[i]);
    return 0;
}

extern const struct QmCudaFuncs qm_cuda_psnr_hvs;  /* cuda/psnr_hvs.cu */

static const char *const hvs_features[] = {
    "psnr_hvs_y", "psnr_hvs_cb", "psnr_hvs_cr", "psnr_hvs", NULL
};

const QmMetricDesc qm_metric_psnr_hvs = {
    .name = "psnr_hvs",
    .display = "PSNR-HVS",
    .description = "PSNR-HVS (DCT-domain, CSF-weighted, masked) of Y, Cb, Cr "
                   "and combined, in dB; 8..12 bits",
    .scale = { "dB", +1, NAN, NAN },
    .features = hvs_features,
    /* The reference accepts any size, but below 8x8 no block fits in luma
     * and every feature is NaN: refused here. */
    .min_w = QM_HVS_BLOCK,
    .min_h = QM_HVS_BLOCK,
    .cpu = {
        .priv_size = sizeof(HvsState),
        .init = hvs_init,
        .compute = hvs_compute,
        .close = hvs_close,
    },
    .cuda = QM_CUDA_TWIN(qm_cuda_psnr_hvs),
    /* bit-exact: same per-block float operations, and the ordered float
     * accumulation reproduced exactly (cuda/fsum.h) */
    .cuda_tol = 0,
};
