/* gst-qmetric: XPSNR, exact to FFmpeg n7.1's `xpsnr` filter
 * (libavfilter/vf_xpsnr.c, tag n7.1): the definition is in xpsnr.h, the
 * block arithmetic in xpsnr_block.h.
 *
 * Features xpsnr_y, xpsnr_u, xpsnr_v (FFmpeg's stats file: "XPSNR y/u/v"),
 * in dB, inf where the weighted SSE is 0 (identical planes).  The metric is
 * temporal: its one instance sees every frame in order and keeps the
 * reference luma of the last two frames; its first frame is compared with
 * an all-zero "previous" frame, as FFmpeg's filter does.
 *
 * Option fps: the integer frame rate that chooses the temporal term
 * (first-order below 32, second-order from 32).  Its default is the
 * stream's rate (QmSettings.fps_n / fps_d: the element's caps, the tools'
 * --fps), else 24, the rate of the command FFmpeg's reference values were
 * made with.
 *
 * Pooled: FFmpeg's closing values (from the square roots of the frames'
 * weighted SSE) are this metric's own (QmMetricDesc.pool), written to a
 * log's "aggregate_metrics" as xpsnr_y, xpsnr_u, xpsnr_v and xpsnr_min.
 *
 * The per-block sums come from the stages of xpsnr.h: the C ones here (the
 * specification), or their SIMD twins (cpu/x86/xpsnr_*.c, the same
 * integers), chosen once per instance by qm_xpsnr_dsp_init().
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "metric.h"
#include "xpsnr.h"
#include "xpsnr_block.h"

/* vf_xpsnr.c: picture sizes from which the 2x2-group filters are used
 * ("a bit more than HD") and up to which the weights are smoothed. */
#define DS_ABOVE (2048 * 1152)
#define SMOOTH_UP_TO (640 * 480)

enum { OPT_FPS };

int qm_xpsnr_fps(const QmOptValues *o)
{
    return (int)o->v[OPT_FPS];
}

int qm_xpsnr_setup(QmXpsnrGeom *g, int w, int h, int bpc, QmChroma chroma, int fps)
{
    memset(g, 0, sizeof(*g));
    if (bpc < 8 || bpc > 16 || w < 1 || h < 1)
        return QM_ENOTSUP;
    g->w = w;
    g->h = h;
    g->bpc = bpc;
    g->nplanes = qm_n_planes(chroma);
    for (int p = 0; p < g->nplanes; p++)
        qm_plane_size_full(w, h, chroma, p, &g->pw[p], &g->ph[p]);
    const uint64_t peak = ((uint64_t)1 << bpc) - 1;
    for (int p = 0; p < g->nplanes; p++)
        g->num[p] = (uint64_t)g->pw[p] * (uint64_t)g->ph[p] * (peak * peak);

    /* vf_xpsnr.c computes w * h in 32 bits, as here */
    const uint32_t area = (uint32_t)w * (uint32_t)h;
    const double r = (double)area / (3840.0 * 2160.0);
    const int b = 4 * (int32_t)(32.0 * sqrt(r) + 0.5);
    g->b = b >= 4 ? b : 0;
    g->ds = area > DS_ABOVE ? 2 : 1;
    g->second_order = fps >= QM_XPSNR_SECOND_ORDER_FPS;
    g->smooth = area <= SMOOTH_UP_TO;
    g->avg_act = sqrt(16.0 * (double)(1 << (2 * bpc - 9)) / sqrt(r > 0.00001 ? r : 0.00001));
    g->floor = (double)(1 << (bpc - 6));
    if (!g->b)
        return 0;  /* plain SSE: no blocks */
    if (g->ds == 2 && ((w | h) & 1))
        return QM_ENOTSUP;
    g->wblk = (w + b - 1) / b;
    g->hblk = (h + b - 1) / b;
    g->nblk = g->wblk * g->hblk;
    if (g->nplanes > 1) {
        /* vf_xpsnr.c walks each chroma grid with a running block index
         * into the luma weights: right only when the grids have the same
         * shape, which 4:2:0, 4:2:2 and 4:4:4 always give (a chroma block
         * is b/2 or b wide and ceil(W/2) < ceil(W/b) b/2 + b/2) */
        g->bx = b * g->pw[1] / w;
        g->by = b * g->ph[1] / h;
        if (g->bx < 1 || g->by < 1 || (g->pw[1] + g->bx - 1) / g->bx != g->wblk ||
            (g->ph[1] + g->by - 1) / g->by != g->hblk)
            return QM_ENOTSUP;
    }
    return 0;
}

/* Samples a uint32_t partial sum of the row stages takes: each term is
 * below 2^20 (|12 c| + |2 cross| + |diag| <= 24 x 2^15), so 2^11 of them
 * stay below 2^31; exact integer sums in any grouping, so the vectorised
 * clones (QM_VECTOR_CLONES) give the C result. */
#define ROW_CHUNK 2048

/* Sum of |3x3 high-pass| over row[0 .. n - 1] (QmXpsnrHpFn, one row). */
QM_VECTOR_CLONES
static uint64_t hp_row(const int16_t *row, ptrdiff_t stride, int n)
{
    const int16_t *up = row - stride, *dn = row + stride;
    uint64_t s = 0;
    for (int x0 = 0; x0 < n; x0 += ROW_CHUNK) {
        const int x1 = QM_MIN(n, x0 + ROW_CHUNK);
        uint32_t part = 0;
        for (int x = x0; x < x1; x++) {
            const int cross = row[x - 1] + row[x + 1] + up[x] + dn[x];
            const int diag = up[x - 1] + up[x + 1] + dn[x - 1] + dn[x + 1];
            part += qm_xpsnr_hp3(row[x], cross, diag);
        }
        s += part;
    }
    return s;
}

/* Sum of |c - m1| or |c - 2 m1 + m2| over n samples (QmXpsnrTempFn, one
 * row). */
QM_VECTOR_CLONES
static uint64_t temp_row(const int16_t *c, const int16_t *m1, const int16_t *m2, int n)
{
    uint64_t s = 0;
    for (int x0 = 0; x0 < n; x0 += ROW_CHUNK) {
        const int x1 = QM_MIN(n, x0 + ROW_CHUNK);
        uint32_t part = 0;
        if (!m2) {
            for (int x = x0; x < x1; x++)
                part += (uint32_t)abs(c[x] - m1[x]);
        } else {
            for (int x = x0; x < x1; x++)
                part += (uint32_t)abs(c[x] - 2 * m1[x] + m2[x]);
        }
        s += part;
    }
    return s;
}

void qm_xpsnr_finish(const QmXpsnrGeom *g, QmXpsnrBlocks *bk, uint64_t wsse[3])
{
    for (int k = 0; k < g->nblk; k++) {
        const QmXpsnrBlk blk = qm_xpsnr_block(g, k);
        bk->w[k] = qm_xpsnr_weight(&blk, bk->sa[k], bk->ta[k], g->floor);
    }
    if (g->smooth)
        qm_xpsnr_smooth(g, bk->w);
    for (int p = 0; p < g->nplanes; p++) {
        double sum = 0.0;  /* in raster order, as the filter adds */
        for (int k = 0; k < g->nblk; k++)
            sum += (double)bk->sse[p][k] * bk->w[k];
        wsse[p] = qm_xpsnr_wsse(sum, g->avg_act);
    }
}

double qm_xpsnr_db(uint64_t wsse, uint64_t num)
{
    /* vf_xpsnr.c get_avg_xpsnr() of one frame: the square root is taken
     * and squared again; below 1 (only 0 here) the value is inf */
    const double d = sqrt((double)wsse);
    if (!(d >= 1.0))
        return INFINITY;
    return 10.0 * log10((double)num / (d * d));
}

/* ---- the C stages (xpsnr.h) ---- */

/* (ref - dist)^2 over one row, exact: uint32_t partial sums at 8 bits
 * (2^16 samples of at most 255^2), uint64_t above. */
QM_VECTOR_CLONES
static uint64_t row_sse8(const uint8_t *a, const uint8_t *b, int n)
{
    uint64_t s = 0;
    for (int x0 = 0; x0 < n; x0 += 1 << 16) {
        const int x1 = QM_MIN(n, x0 + (1 << 16));
        uint32_t part = 0;
        for (int x = x0; x < x1; x++) {
            const int e = a[x] - b[x];
            part += (uint32_t)(e * e);
        }
        s += part;
    }
    return s;
}

QM_VECTOR_CLONES
static uint64_t row_sse16(const uint16_t *a, const uint16_t *b, int n)
{
    uint64_t s = 0;
    for (int x = 0; x < n; x++) {
        const int64_t e = (int64_t)a[x] - b[x];
        s += (uint64_t)(e * e);
    }
    return s;
}

uint64_t qm_xpsnr_sse_c(const void *a, ptrdiff_t a_stride, const void *b,
                        ptrdiff_t b_stride, int w, int h, int bpc)
{
    const uint8_t *pa = a, *pb = b;
    uint64_t s = 0;
    for (int y = 0; y < h; y++, pa += a_stride, pb += b_stride) {
        if (bpc == 8)
            s += row_sse8(pa, pb, w);
        else
            s += row_sse16((const uint16_t *)pa, (const uint16_t *)pb, w);
    }
    return s;
}

uint64_t qm_xpsnr_hp_c(const int16_t *c, ptrdiff_t stride, int w, int h, int bpc)
{
    uint64_t s = 0;
    for (int y = 0; y < h; y++)
        s += hp_row(c + y * stride, stride, w);
    (void)bpc;
    return s;
}

uint64_t qm_xpsnr_temp_c(const int16_t *c, const int16_t *m1, const int16_t *m2,
                         ptrdiff_t stride, int w, int h, int bpc)
{
    uint64_t t = 0;
    for (int y = 0; y < h; y++)
        t += temp_row(c + y * stride, m1 + y * stride, m2 ? m2 + y * stride : NULL, w);
    (void)bpc;
    return t;
}

static inline uint32_t hpds_part(const int16_t *c, ptrdiff_t W, int n)
{
    uint32_t s = 0;
    for (int g = 0; g < n; g++) {
        const int16_t *r0 = c + 2 * g - 2 * W, *r1 = r0 + W, *r2 = r1 + W,
                      *r3 = r2 + W, *r4 = r3 + W, *r5 = r4 + W;
        const int centre = r2[0] + r2[1] + r3[0] + r3[1];
        const int vert = r1[0] + r1[1] + r4[0] + r4[1];
        const int horz = r2[-1] + r2[2] + r3[-1] + r3[2];
        const int corner = r1[-1] + r1[2] + r4[-1] + r4[2];
        const int outer = r0[-1] + r0[0] + r0[1] + r0[2] + r5[-1] + r5[0] + r5[1] +
                          r5[2] + r1[-2] + r2[-2] + r3[-2] + r4[-2] + r1[3] + r2[3] +
                          r3[3] + r4[3];
        s += qm_xpsnr_hpds(centre, vert, horz, corner, outer);
    }
    return s;
}

/* |high-pass| of n 2x2 groups, the first at c (rows y - 2 .. y + 3 and
 * columns x - 2 .. x + 3 around each are read); terms below 3.2 x 10^6,
 * so uint32_t partial sums of 1024 groups. */
QM_VECTOR_CLONES
static uint64_t hpds_row(const int16_t *c, ptrdiff_t W, int n)
{
    uint64_t s = 0;
    for (int g0 = 0; g0 < n; g0 += 1024)
        s += hpds_part(c + 2 * g0, W, QM_MIN(n - g0, 1024));
    return s;
}

/* Temporal activity of n 2x2 groups (rows at c and c + W), without the
 * factor 2: |S(c) - S(m1)| or |S(c) - 2 S(m1) + S(m2)| of the group sums
 * S; terms below 2^19 and n below 2^12 (half a block row; blocks are
 * under 2^12 wide): a uint32_t sum. */
QM_VECTOR_CLONES
static uint64_t temp_groups(const int16_t *c, const int16_t *m1, const int16_t *m2,
                            ptrdiff_t W, int n)
{
    uint32_t t = 0;
    for (int g = 0; g < n; g++) {
        const ptrdiff_t i = 2 * g;
#define SUM4(p) ((p)[i] + (p)[i + 1] + (p)[i + W] + (p)[i + W + 1])
        const int d = m2 ? SUM4(c) - 2 * SUM4(m1) + SUM4(m2) : SUM4(c) - SUM4(m1);
#undef SUM4
        t += (uint32_t)abs(d);
    }
    return t;
}

uint64_t qm_xpsnr_hpds_c(const int16_t *c, ptrdiff_t stride, int n, int rows)
{
    uint64_t s = 0;
    for (int j = 0; j < rows; j++)
        s += hpds_row(c + 2 * j * stride, stride, n);
    return s;
}

uint64_t qm_xpsnr_tempds_c(const int16_t *c, const int16_t *m1, const int16_t *m2,
                           ptrdiff_t stride, int n, int rows)
{
    uint64_t t = 0;
    for (int j = 0; j < rows; j++) {
        const ptrdiff_t o = 2 * j * stride;
        t += temp_groups(c + o, m1 + o, m2 ? m2 + o : NULL, stride, n);
    }
    return t;
}

void qm_xpsnr_dsp_init(QmXpsnrDsp *dsp, unsigned flags)
{
    dsp->sse = qm_xpsnr_sse_c;
    dsp->hp = qm_xpsnr_hp_c;
    dsp->temp = qm_xpsnr_temp_c;
    dsp->hpds = qm_xpsnr_hpds_c;
    dsp->tempds = qm_xpsnr_tempds_c;
#ifdef QM_HAVE_XPSNR_AVX2
    if (flags & QM_CPU_AVX2)
        qm_xpsnr_dsp_init_avx2(dsp);
#endif
#ifdef QM_HAVE_XPSNR_AVX512
    if (flags & QM_CPU_AVX512)
        qm_xpsnr_dsp_init_avx512(dsp);
#endif
    (void)flags;
}

/* ---- the metric ---- */

typedef struct Xpsnr {
    QmXpsnrGeom g;
    /* reference luma as int16_t (the filter's view): a ring of the frames
     * i (being computed), i - 1 and i - 2; zero before the first frame */
    int16_t *hist[3];
    unsigned cur;
    QmXpsnrDsp dsp;
    QmXpsnrBlocks bk;
    void *mem;
} Xpsnr;

static void xpsnr_close(void *priv)
{
    Xpsnr *s = priv;
    for (int i = 0; i < 3; i++)
        free(s->hist[i]);
    free(s->mem);
    memset(s, 0, sizeof(*s));
}

static int xpsnr_init(void *priv, const QmMetricConfig *cfg)
{
    Xpsnr *s = priv;
    memset(s, 0, sizeof(*s));
    int err = qm_xpsnr_setup(&s->g, cfg->w, cfg->h, cfg->bpc, cfg->chroma,
                             qm_xpsnr_fps(cfg->opt));
    qm_xpsnr_dsp_init(&s->dsp, qm_cpu_flags());
    if (err || !s->g.b)
        return err;
    const size_t n = (size_t)s->g.nblk, px = (size_t)cfg->w * (size_t)cfg->h;
    for (int i = 0; i < 3; i++)
        if (!(s->hist[i] = calloc(px, sizeof(int16_t))))
            goto nomem;
    uint64_t *m = s->mem = calloc(n, 5 * sizeof(uint64_t) + sizeof(double));
    if (!m)
        goto nomem;
    for (int p = 0; p < 3; p++)
        s->bk.sse[p] = m + (size_t)p * n;
    s->bk.sa = m + 3 * n;
    s->bk.ta = m + 4 * n;
    s->bk.w = (double *)(m + 5 * n);
    return 0;
nomem:
    xpsnr_close(s);
    return QM_ENOMEM;
}

/* Rows [y0, y1) of the reference luma into the ring's current slot (w
 * samples a row), as int16_t. */
QM_VECTOR_CLONES
static void load_luma(const QmPicture *ref, int16_t *dst, int w, int y0, int y1)
{
    dst += (ptrdiff_t)y0 * w;
    for (int y = y0; y < y1; y++, dst += w) {
        if (ref->bpc == 8) {
            const uint8_t *r = qm_row8(ref, 0, y);
            for (int x = 0; x < w; x++)
                dst[x] = (int16_t)r[x];
        } else {
            const uint16_t *r = qm_row16(ref, 0, y);
            for (int x = 0; x < w; x++)
                dst[x] = (int16_t)qm_xpsnr_s16(r[x]);
        }
    }
}

/* Where sample (x, y) of plane p of a picture starts. */
static const void *sample_at(const QmPicture *pic, int p, int x, int y)
{
    return (const uint8_t *)pic->data[p] + (ptrdiff_t)y * pic->stride[p] +
           (ptrdiff_t)x * (pic->bpc == 8 ? 1 : 2);
}

static uint64_t rect_sse(const Xpsnr *s, const QmFrame *f, int p, int x0, int y0, int w, int h)
{
    return s->dsp.sse(sample_at(f->ref, p, x0, y0), f->ref->stride[p],
                      sample_at(f->dist, p, x0, y0), f->dist->stride[p], w, h, f->ref->bpc);
}

/*
 * The blocks are walked in raster order, so the rows of a block are far
 * apart and the hardware prefetchers see no stream to follow: the loads of
 * each block would wait on memory.  The block loop asks for the next
 * block's lines while it computes this one (prefetch_block()).  These are
 * inlined into it: GCC counts a prefetch as no side effect, so it would
 * drop the call of a function that only prefetches.
 *
 * prefetch_rect(): the cache lines of h rows of w_bytes, stride bytes
 * apart, from p.
 */
static inline __attribute__((always_inline)) void
prefetch_rect(const void *p, ptrdiff_t stride, int w_bytes, int h)
{
    const uint8_t *row = p;
    for (int y = 0; y < h; y++, row += stride) {
        for (int x = 0; x < w_bytes; x += 64)
            __builtin_prefetch(row + x);
        __builtin_prefetch(row + w_bytes - 1);  /* a row that starts mid-line */
    }
}

/* What block k reads that is not in cache yet: the distorted luma, both
 * pictures' chroma and the previous frames' luma (the current frame's is
 * converted from the reference a row of blocks at a time, just before,
 * which brings the reference's luma in). */
static inline __attribute__((always_inline)) void
prefetch_block(const Xpsnr *s, const QmFrame *f, int k, const int16_t *m1, const int16_t *m2)
{
    const QmXpsnrGeom *g = &s->g;
    const int es = f->ref->bpc == 8 ? 1 : 2;
    const QmXpsnrBlk blk = qm_xpsnr_block(g, k);
    prefetch_rect(sample_at(f->dist, 0, blk.x0, blk.y0), f->dist->stride[0], blk.bw * es,
                  blk.bh);
    for (int i = 0; i < 2; i++) {
        const QmPicture *pic = i ? f->dist : f->ref;
        for (int p = 1; p < g->nplanes; p++) {
            int x0, y0, bw, bh;
            qm_xpsnr_cblock(g, p, k, &x0, &y0, &bw, &bh);
            prefetch_rect(sample_at(pic, p, x0, y0), pic->stride[p], bw * es, bh);
        }
    }
    const ptrdiff_t o = (ptrdiff_t)blk.y0 * g->w + blk.x0;
    const int row = g->w * (int)sizeof(int16_t), bw = blk.bw * (int)sizeof(int16_t);
    prefetch_rect(m1 + o, row, bw, blk.bh);
    if (g->second_order)
        prefetch_rect(m2 + o, row, bw, blk.bh);
}

/* Spatial and temporal sums of luma block k. */
static void block_activity(const Xpsnr *s, const QmXpsnrBlk *k, const int16_t *c,
                           const int16_t *m1, const int16_t *m2, uint64_t *sa,
                           uint64_t *ta)
{
    const QmXpsnrGeom *g = &s->g;
    const ptrdiff_t W = g->w;
    const ptrdiff_t o = k->y0 * W + k->x0;  /* the block's first sample */
    uint64_t t;
    c += o;
    m1 += o;
    m2 = g->second_order ? m2 + o : NULL;
    if (g->ds == 1) {
        *sa = s->dsp.hp(c + k->ya * W + k->xa, W, k->wa - k->xa, k->ha - k->ya, g->bpc);
        t = s->dsp.temp(c, m1, m2, W, k->bw, k->bh, g->bpc);
    } else {
        /* 2x2 groups from (xa, ya) (k->wa - k->xa and k->ha - k->ya are
         * even: qm_xpsnr_setup()); n7.1 drops the filter's result for an
         * active width of 12 or less */
        *sa = k->wa > 12 ? s->dsp.hpds(c + k->ya * W + k->xa, W, (k->wa - k->xa + 1) / 2,
                                       (k->ha - k->ya + 1) / 2)
                         : 0;
        t = s->dsp.tempds(c, m1, m2, W, k->bw / 2, (k->bh + 1) / 2);
    }
    *ta = 2 * t;  /* XPSNR_GAMMA */
}

static int xpsnr_compute(void *priv, const QmFrame *f, QmRows *out)
{
    Xpsnr *s = priv;
    const QmXpsnrGeom *g = &s->g;
    uint64_t wsse[3] = { 0, 0, 0 };

    if (!g->b) {
        /* under 2025 luma samples: unweighted SSE (vf_xpsnr.c, b < 4) */
        for (int p = 0; p < g->nplanes; p++)
            wsse[p] = rect_sse(s, f, p, 0, 0, g->pw[p], g->ph[p]);
    } else {
        int16_t *c = s->hist[s->cur];
        const int16_t *m1 = s->hist[(s->cur + 2) % 3], *m2 = s->hist[(s->cur + 1) % 3];
        int loaded = 0;  /* rows of c filled */
        for (int k = 0; k < g->nblk; k++) {
            const QmXpsnrBlk blk = qm_xpsnr_block(g, k);
            if (k % g->wblk == 0) {
                /* a row of blocks reads its rows and the 2 below (the
                 * high-pass's reach): converted just before, they are still
                 * in cache for the activity, and the reference's rows for
                 * the luma SSE */
                const int y1 = QM_MIN(g->h, blk.y0 + g->b + 2);
                load_luma(f->ref, c, g->w, loaded, y1);
                loaded = y1;
            }
            if (k + 1 < g->nblk)
                prefetch_block(s, f, k + 1, m1, m2);
            s->bk.sse[0][k] = rect_sse(s, f, 0, blk.x0, blk.y0, blk.bw, blk.bh);
            s->bk.sa[k] = s->bk.ta[k] = 0;
            if (!blk.small)
                block_activity(s, &blk, c, m1, m2, &s->bk.sa[k], &s->bk.ta[k]);
            for (int p = 1; p < g->nplanes; p++) {
                int x0, y0, bw, bh;
                qm_xpsnr_cblock(g, p, k, &x0, &y0, &bw, &bh);
                s->bk.sse[p][k] = rect_sse(s, f, p, x0, y0, bw, bh);
            }
        }
        qm_xpsnr_finish(g, &s->bk, wsse);
        s->cur = (s->cur + 1) % 3;
    }
    for (int p = 0; p < g->nplanes; p++)
        qm_rows_set(out, 0, (unsigned)p, qm_xpsnr_db(wsse[p], g->num[p]));
    return 0;
}

/* ---- pooled: FFmpeg's closing values ---- */

typedef struct XpsnrPool {
    int nplanes;
    uint64_t num[3];             /* Wc Hc peak^2 */
    double roots[3], values[3];  /* sums of sqrt(WSSE) and of the values */
    uint64_t n[3];
} XpsnrPool;

static int xpsnr_pool_init(void *state, const QmMetricConfig *cfg)
{
    XpsnrPool *s = state;
    QmXpsnrGeom g;
    qm_xpsnr_setup(&g, cfg->w, cfg->h, cfg->bpc, cfg->chroma, 0);  /* sizes first */
    s->nplanes = g.nplanes;
    memcpy(s->num, g.num, sizeof(s->num));
    return 0;
}

/* A frame's WSSE comes back from its value, rounded to the integer it
 * was: the value carries it to a relative 2e-15 or so, so the integer is
 * exact below about 10^14 (every golden case, whose largest is 1.3e9); a
 * larger one is off by that relative error, the pooled value by less than
 * 1e-13 dB.  Logs and chunk files keep full doubles in memory and at 17
 * digits, so a merge of chunks pools the same numbers as a whole run. */
static void xpsnr_pool_add(void *state, const double *v, const uint8_t *set)
{
    XpsnrPool *s = state;
    for (int p = 0; p < s->nplanes; p++) {
        if (!set[p])
            continue;
        const double wsse = isinf(v[p]) ? 0.0
                                        : floor((double)s->num[p] / pow(10.0, v[p] / 10.0) + 0.5);
        s->roots[p] += sqrt(wsse);
        s->values[p] += v[p];
        s->n[p]++;
    }
}

/* vf_xpsnr.c get_avg_xpsnr(): the mean of the root distortions, or the
 * mean of the values when the roots sum to less than the frame count */
static double pooled_plane(const XpsnrPool *s, int p)
{
    const double n = (double)s->n[p];
    if (s->roots[p] >= n) {
        const double d = s->roots[p] / n;
        return 10.0 * log10((double)s->num[p] / (d * d));
    }
    return s->values[p] / n;
}

/* xpsnr_y, xpsnr_u, xpsnr_v, then xpsnr_min (FFmpeg's "minimum", with
 * chroma) */
static const char *xpsnr_pool_value(const void *state, unsigned k, double *x)
{
    static const char *const names[] = { "xpsnr_y", "xpsnr_u", "xpsnr_v" };
    const XpsnrPool *s = state;
    if (!s->n[0])
        return NULL;
    if (k < (unsigned)s->nplanes) {
        *x = pooled_plane(s, (int)k);
        return names[k];
    }
    if (k > (unsigned)s->nplanes || s->nplanes == 1)
        return NULL;
    *x = pooled_plane(s, 0);
    for (int p = 1; p < s->nplanes; p++)
        *x = QM_MIN(*x, pooled_plane(s, p));
    return "xpsnr_min";
}

static const QmPoolFuncs xpsnr_pool = {
    .state_size = sizeof(XpsnrPool),
    .init = xpsnr_pool_init,
    .add = xpsnr_pool_add,
    .value = xpsnr_pool_value,
};

/* both temporal orders where the filters take 2x2 groups (above
 * 2048x1152): the option passes stay at small sizes */
static const QmOptionSet xpsnr_option_sets[] = {
    { "fps=24", QM_OPTSET_DIRECT },
    { "fps=60", QM_OPTSET_DIRECT },
    { NULL },
};

extern const struct QmCudaFuncs qm_cuda_xpsnr;  /* cuda/xpsnr.cu */

static const char *const xpsnr_features[] = { "xpsnr_y", "xpsnr_u", "xpsnr_v", NULL };

static const QmOptionDesc xpsnr_options[] = {
    { "fps", NULL,
      "integer frame rate: the temporal term is first-order below 32, "
      "second-order from 32 (default: the stream's rate, else 24)",
      24, 0, 1000, QM_OPT_INT | QM_OPT_FRAME_RATE },
    { NULL },
};

const QmMetricDesc qm_metric_xpsnr = {
    .name = "xpsnr",
    .display = "XPSNR",
    .description = "XPSNR of Y, U and V in dB, as FFmpeg's xpsnr filter: PSNR "
                   "weighted by the reference's spatial and temporal activity "
                   "per block (inf for identical planes)",
    .scale = { "dB", +1, NAN, NAN },
    .features = xpsnr_features,
    .options = xpsnr_options,
    /* not in "all": FFmpeg's metric, not libvmaf's (logs of "all" keep
     * libvmaf's keys) */
    .flags = QM_METRIC_SEQUENTIAL | QM_METRIC_EVERY_FRAME | QM_METRIC_LUMA_ONLY |
             QM_METRIC_OPT_IN,
    .min_w = 1,
    .min_h = 1,
    .cpu = {
        .priv_size = sizeof(Xpsnr),
        .init = xpsnr_init,
        .compute = xpsnr_compute,
        .close = xpsnr_close,
    },
    .cuda = QM_CUDA_TWIN(qm_cuda_xpsnr),
    .cuda_tol = 0,  /* the WSSE is an exact integer on both */
    .option_sets = xpsnr_option_sets,
    .option_sets_content = QM_TEST_CONTENT_UHD,
    .pool = &xpsnr_pool,
};
