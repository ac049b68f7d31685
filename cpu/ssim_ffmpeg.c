/* gst-qmetric: SSIM as FFmpeg's `ssim` filter writes it to its stats_file
 * (`ffmpeg -lavfi ssim`, FFmpeg 5.1, Debian 12): Y, U, V and All per frame.
 * The definition and the facts taken from FFmpeg are in ssim_ffmpeg.h and
 * ssim_ffmpeg_pixel.h; the arithmetic is the same operations in the same
 * types and order, so every value is the double FFmpeg prints with %f.
 *
 * Where this departs from what the ffmpeg binary prints (docs/accuracy.md):
 *   - FFmpeg's x86 row function (8 bits) computes windows past the row's
 *     end from leftover buffer contents, adds them and subtracts them again;
 *     when a plane's window count bw - 1 is 1 mod 4 (width mod 16 in 8..11)
 *     it subtracts the row's last window instead of one of them, whose
 *     value depends on earlier planes and frames.  We add the row's windows
 *     (FFmpeg's C code, `ffmpeg -cpuflags 0`).
 *   - FFmpeg sums the rows of each slice thread apart and then the slices;
 *     we add the rows of a plane in one pass (`-filter_complex_threads 1`).
 *     Both orders add the same doubles, and give the same printed digits.
 */
#include <stdlib.h>

#include "ssim_ffmpeg.h"
#include "ssim_ffmpeg_pixel.h"

int qm_ssim_ffmpeg_setup(QmSsimFfGeom *g, int w, int h, int bpc, QmChroma chroma)
{
    if (bpc < 8 || bpc > 16)
        return QM_ENOTSUP;
    g->bpc = bpc;
    g->nplanes = qm_n_planes(chroma);
    int total = 0;
    for (int p = 0; p < g->nplanes; p++) {
        qm_plane_size_full(w, h, chroma, p, &g->pw[p], &g->ph[p]);
        g->bw[p] = g->pw[p] >> 2;
        g->bh[p] = g->ph[p] >> 2;
        if (g->bw[p] < 2 || g->bh[p] < 2)
            return QM_ENOTSUP;
        total += g->pw[p] * g->ph[p];
    }
    /* vf_ssim.c: (double)height * width / (int sum of the planes') */
    for (int p = 0; p < g->nplanes; p++)
        g->coef[p] = (double)g->ph[p] * g->pw[p] / total;
    qm_ssim_ffmpeg_consts(bpc, &g->c1, &g->c2);
    return 0;
}

void qm_ssim_ffmpeg_rows(const QmSsimFfGeom *g, const double *sum, QmRows *out)
{
    double all = 0.0;
    for (int p = 0; p < g->nplanes; p++) {
        const double c = sum[p] / ((g->bw[p] - 1) * (g->bh[p] - 1));
        qm_rows_set(out, 0, QM_SSIM_FFMPEG_Y + p, c);
        all += g->coef[p] * c;
    }
    qm_rows_set(out, 0, QM_SSIM_FFMPEG_ALL, all);
}

/* ---- the C reference ---- */

typedef struct SsimFf {
    QmSsimFfGeom g;
    QmSsimFfSums *blk[2];  /* two block rows, bw[0] each */
    float *win;            /* one row of windows */
    void *col;             /* a block row's column sums: 4 arrays of 4 bw[0] */
} SsimFf;

static void ssim_ff_close(void *priv)
{
    SsimFf *s = priv;
    free(s->blk[0]);
    free(s->blk[1]);
    free(s->win);
    free(s->col);
    s->blk[0] = s->blk[1] = NULL;
    s->win = NULL;
    s->col = NULL;
}

static int ssim_ff_init(void *priv, const QmMetricConfig *cfg)
{
    SsimFf *s = priv;
    const int err = qm_ssim_ffmpeg_setup(&s->g, cfg->w, cfg->h, cfg->bpc, cfg->chroma);
    if (err)
        return err;
    const size_t n = (size_t)s->g.bw[0];  /* the widest plane */
    s->blk[0] = malloc(n * sizeof(QmSsimFfSums));
    s->blk[1] = malloc(n * sizeof(QmSsimFfSums));
    s->win = malloc(n * sizeof(float));
    s->col = malloc(4 * 4 * n * sizeof(uint64_t));
    if (!s->blk[0] || !s->blk[1] || !s->win || !s->col) {
        ssim_ff_close(s);
        return QM_ENOMEM;
    }
    return 0;
}

/* The block sums of block row z of plane p, its 4 x bw blocks: each
 * column's sums over the 4 rows (c1, c2, css, c12, n columns each), then
 * 4 columns a block.  Exact integers whatever the order; one template for
 * 8-bit samples (32-bit sums: at most 8 x 255^2 a column) and 16-bit ones
 * (64-bit), written so that the column loop vectorises. */
#define SSIMFF_BLOCK_ROW(name, T, U)                                                \
    QM_VECTOR_CLONES static void name(const QmPicture *r, const QmPicture *d,      \
                                      int p, int z, int bw, U *restrict c,          \
                                      QmSsimFfSums *out)                            \
    {                                                                               \
        const int n = 4 * bw;                                                       \
        U *c1 = c, *c2 = c + n, *css = c + 2 * n, *c12 = c + 3 * n;                \
        for (int y = 0; y < 4; y++) {                                               \
            const T *a = (const T *)((const uint8_t *)r->data[p] +                  \
                                     (ptrdiff_t)(4 * z + y) * r->stride[p]);        \
            const T *b = (const T *)((const uint8_t *)d->data[p] +                  \
                                     (ptrdiff_t)(4 * z + y) * d->stride[p]);        \
            for (int x = 0; x < n; x++) {                                           \
                const U va = a[x], vb = b[x];                                       \
                c1[x] = (y ? c1[x] : 0) + va;                                       \
                c2[x] = (y ? c2[x] : 0) + vb;                                       \
                css[x] = (y ? css[x] : 0) + va * va + vb * vb;                      \
                c12[x] = (y ? c12[x] : 0) + va * vb;                                \
            }                                                                       \
        }                                                                           \
        for (int i = 0; i < bw; i++) {                                              \
            QmSsimFfSums s = { 0, 0, 0, 0 };                                        \
            for (int x = 4 * i; x < 4 * i + 4; x++) {                               \
                s.s1 += (int64_t)c1[x];                                             \
                s.s2 += (int64_t)c2[x];                                             \
                s.ss += (int64_t)css[x];                                            \
                s.s12 += (int64_t)c12[x];                                           \
            }                                                                       \
            out[i] = s;                                                             \
        }                                                                           \
    }
SSIMFF_BLOCK_ROW(block_row8, uint8_t, uint32_t)
SSIMFF_BLOCK_ROW(block_row16, uint16_t, uint64_t)

static void block_row(const QmPicture *r, const QmPicture *d, int p, int z, int bw,
                      void *col, QmSsimFfSums *out)
{
    if (r->bpc == 8)
        block_row8(r, d, p, z, bw, col, out);
    else
        block_row16(r, d, p, z, bw, col, out);
}

static int ssim_ff_compute(void *priv, const QmFrame *f, QmRows *out)
{
    SsimFf *s = priv;
    const QmSsimFfGeom *g = &s->g;
    double sum[3];
    for (int p = 0; p < g->nplanes; p++) {
        const int bw = g->bw[p];
        block_row(f->ref, f->dist, p, 0, bw, s->col, s->blk[0]);
        sum[p] = 0.0;
        for (int y = 1; y < g->bh[p]; y++) {
            const QmSsimFfSums *up = s->blk[(y - 1) & 1];
            QmSsimFfSums *cur = s->blk[y & 1];
            block_row(f->ref, f->dist, p, y, bw, s->col, cur);
            for (int i = 0; i < bw - 1; i++) {
                QmSsimFfSums w = up[i];
                qm_ssim_ffmpeg_add(&w, &up[i + 1]);
                qm_ssim_ffmpeg_add(&w, &cur[i]);
                qm_ssim_ffmpeg_add(&w, &cur[i + 1]);
                s->win[i] = qm_ssim_ffmpeg_window(&w, g->c1, g->c2);
            }
            sum[p] += qm_ssim_ffmpeg_row(s->win, bw - 1, g->bpc);
        }
    }
    qm_ssim_ffmpeg_rows(g, sum, out);
    return 0;
}

extern const struct QmCudaFuncs qm_cuda_ssim_ffmpeg;  /* cuda/ssim_ffmpeg.cu */

static const char *const ssim_ff_features[] = {
    "ssim_ffmpeg_y", "ssim_ffmpeg_u", "ssim_ffmpeg_v", "ssim_ffmpeg_all", NULL
};

const QmMetricDesc qm_metric_ssim_ffmpeg = {
    .name = "ssim_ffmpeg",
    .display = "SSIM (FFmpeg)",
    .description = "SSIM of Y, U, V and All as FFmpeg's ssim filter: 8x8 windows "
                   "on a 4-sample grid, All weighted by plane size",
    .scale = { "index", +1, NAN, 1 },
    .features = ssim_ff_features,
    /* not in "all": FFmpeg's metric, not libvmaf's (logs of "all" keep
     * libvmaf's keys); on GRAY input only Y and All are set (All = Y) */
    .flags = QM_METRIC_LUMA_ONLY | QM_METRIC_OPT_IN,
    .min_w = 8,
    .min_h = 8,
    .cpu = {
        .priv_size = sizeof(SsimFf),
        .init = ssim_ff_init,
        .compute = ssim_ff_compute,
        .close = ssim_ff_close,
    },
    .cuda = QM_CUDA_TWIN(qm_cuda_ssim_ffmpeg),
    /* the same floats on both; a row's sum and the plane's in the same
     * order (cuda/ssim_ffmpeg.cu) */
    .cuda_tol = 0,
};
