/* gst-qmetric: CAMBI banding index of the distorted luma, as libvmaf 3.2.0's
 * "cambi" feature extractor computes it (feature/cambi.c, feature/cambi.h,
 * feature/luminance_tools.c).  The stages are described in cambi.h.
 *
 * Only the no-reference score ("cambi", libvmaf's Cambi_feature_cambi_score)
 * is offered: the full-reference variant and heat-map dumps are not.  The
 * EOTF is BT.1886 (libvmaf's default; its "pq" alternative is not offered)
 * and max_log_contrast is 2 (4 contrast steps), enc_bitdepth the input's.
 *
 * Sizes: libvmaf refuses encodes whose width and height are both below 216.
 * For very elongated pictures its sliding-window loops also read outside the
 * downscaled picture (or its buffers) when a scaled side is shorter than
 * half the window; such sizes are refused here (QM_ENOTSUP) rather than
 * given a value the reference does not define.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cambi.h"
#include "metric.h"

/* ---- constants (all from libvmaf 3.2.0 feature/cambi.c unless noted) ---- */

/* DEFAULT_CAMBI_WINDOW_SIZE: 65 is about one degree of view at 4K */
#define CAMBI_DEFAULT_WINDOW 65
/* DEFAULT_CAMBI_TOPK_POOLING */
#define CAMBI_DEFAULT_TOPK 0.6
/* DEFAULT_CAMBI_TVI: a step is visible when dL > 0.019 L (BT.1886) */
#define CAMBI_DEFAULT_TVI 0.019
/* DEFAULT_CAMBI_VLT: luminance (cd/m2) below which banding is invisible */
#define CAMBI_DEFAULT_VLT 0.0
/* DEFAULT_CAMBI_MAX_LOG_CONTRAST: steps of 1 .. 2^2 10-bit codes */
#define CAMBI_MAX_LOG_CONTRAST 2
/* DEFAULT_CAMBI_MAX_VAL */
#define CAMBI_DEFAULT_MAX_VAL 1000.0
/* CAMBI_MIN_WIDTH_HEIGHT: an encode needs one side of at least this */
#define CAMBI_MIN_SIDE 216
/* MASK_FILTER_SIZE: the spatial mask counts flat pixels in a 7x7 box */
#define CAMBI_MASK_BOX 7
/* CAMBI_RECIPROCAL_LUT_SIZE (cambi.h): libvmaf refuses windows whose
 * window^2 does not index its 4226-entry reciprocal table */
#define CAMBI_RECIP_LUT_SIZE 4226
/* CAMBI_HIGH_RES_SPEEDUP_THRESHOLD_*: the speed-up option names the
 * smallest resolution it applies to */
#define CAMBI_HRS_1080P (1920 * 1080)
#define CAMBI_HRS_1440P (2560 * 1440)
#define CAMBI_HRS_2160P (3840 * 2160)

/* g_scale_weights: coarser scales weigh less */
static const int cambi_scale_weight[QM_CAMBI_NUM_SCALES] = { 16, 8, 4, 2, 1 };

/* g_contrast_weights: suprathreshold contrast response of a step of
 * d + 1 codes */
static const int cambi_contrast_weight[QM_CAMBI_MAX_DIFFS] = {
    1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 8,
    8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
};

/* luminance_tools.c: BT.1886 display with white 300 cd/m2, black
 * 0.01 cd/m2, gamma 2.4; 10-bit limited range [64, 940] (16..235 << 2). */
#define BT1886_GAMMA 2.4
#define BT1886_LW 300.0
#define BT1886_LB 0.01
#define LUMA10_FOOT 64
#define LUMA10_HEAD 940

/* the bits of a float: non-negative floats order like them */
static inline uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

/* ---- stage 1: preprocessing ---- */

/* One sample to 10 bits: deeper samples are rounded ((v + 2) >> 2 for 12
 * bits), shallower ones shifted up (v << 2 for 8 bits). */
#define CONVERT_ROW(T, NAME)                                                 \
    static unsigned NAME(const T *restrict s, const int *restrict xmap,      \
                         uint16_t *restrict d, int w, int up, int down,      \
                         unsigned rnd)                                       \
    {                                                                        \
        unsigned mx = 0;                                                     \
        if (xmap) {                                                          \
            for (int x = 0; x < w; x++)                                      \
                d[x] = (uint16_t)((((unsigned)s[xmap[x]] << up) + rnd) >> down); \
            return 0; /* the caller checks the whole plane */                \
        }                                                                    \
        for (int x = 0; x < w; x++) {                                        \
            const unsigned v = s[x];                                         \
            mx = v > mx ? v : mx;                                            \
            d[x] = (uint16_t)(((v << up) + rnd) >> down);                    \
        }                                                                    \
        return mx;                                                           \
    }
CONVERT_ROW(uint8_t, convert_row8)
CONVERT_ROW(uint16_t, convert_row16)

/* libvmaf cambi.c anti_dithering_filter: each sample becomes the mean
 * (floor) of itself and its right, lower and lower-right neighbours; the
 * last column/row averages the two samples it has.  Reading only right and
 * below, the forward in-place pass sees original values only. */
static void anti_dither(uint16_t *img, ptrdiff_t stride, int w, int h)
{
    for (int y = 0; y + 1 < h; y++) {
        uint16_t *r = img + y * stride;
        const uint16_t *n = r + stride;
        for (int x = 0; x + 1 < w; x++)
            r[x] = (uint16_t)((r[x] + r[x + 1] + n[x] + n[x + 1]) >> 2);
        r[w - 1] = (uint16_t)((r[w - 1] + n[w - 1]) >> 1);
    }
    uint16_t *r = img + (ptrdiff_t)(h - 1) * stride;
    for (int x = 0; x + 1 < w; x++)
        r[x] = (uint16_t)((r[x] + r[x + 1]) >> 1);
}

unsigned qm_cambi_preprocess(const void *src, ptrdiff_t src_stride, int bpc,
                             const int *xmap, const int *ymap, uint16_t *dst,
                             ptrdiff_t dst_stride, int w, int h,
                             int anti_dither_on)
{
    const int up = bpc < 10 ? 10 - bpc : 0;
    const int down = bpc > 10 ? bpc - 10 : 0;
    const unsigned rnd = down ? 1u << (down - 1) : 0;
    dst_stride /= (ptrdiff_t)sizeof(*dst);  /* in samples from here on */
    unsigned mx = 0;
    for (int y = 0; y < h; y++) {
        const uint8_t *row = (const uint8_t *)src +
                             (ptrdiff_t)(ymap ? ymap[y] : y) * src_stride;
        uint16_t *d = dst + y * dst_stride;
        const unsigned m = bpc == 8
            ? convert_row8(row, xmap, d, w, up, down, rnd)
            : convert_row16((const uint16_t *)row, xmap, d, w, up, down, rnd);
        mx = m > mx ? m : mx;
    }
    if (anti_dither_on)
        anti_dither(dst, dst_stride, w, h);
    return mx;
}

/* ---- stage 2: spatial mask ---- */

size_t qm_cambi_mask_scratch_size(int w)
{
    /* 8 rows of flatness flags (a ring) + column sums padded by 3 a side */
    return 8 * (size_t)w + (size_t)w + CAMBI_MASK_BOX - 1;
}

/* 1 where a pixel equals its right and lower neighbours; a missing
 * neighbour (last column/row) counts as equal (libvmaf
 * get_derivative_data_for_row). */
static void flat_row(const uint16_t *restrict a, const uint16_t *restrict b,
                     int w, uint8_t *restrict d)
{
    if (b) {
        for (int x = 0; x + 1 < w; x++)
            d[x] = (uint8_t)((a[x] == a[x + 1]) & (a[x] == b[x]));
        d[w - 1] = a[w - 1] == b[w - 1];
    } else {
        for (int x = 0; x + 1 < w; x++)
            d[x] = a[x] == a[x + 1];
        d[w - 1] = 1;
    }
}

unsigned qm_cambi_mask_index(int w, int h)
{
    /* libvmaf get_mask_index: more than half of the 7x7 box must be flat
     * at 4K (2^11 blocks of 64x64: (49 - 1) / 2 = 24); the threshold moves
     * by 3/2 per doubling of the area in blocks, rounding down. */
    const uint32_t blocks = (uint32_t)(w >> 6) * (uint32_t)(h >> 6);
    int log2c = 0;
    while (log2c < 32 && ((uint64_t)1 << log2c) < blocks)
        log2c++;  /* ceil(log2(blocks)), 0 for 0 or 1 block */
    return (unsigned)((CAMBI_MASK_BOX * CAMBI_MASK_BOX + 3 * (log2c - 11) - 1) >> 1);
}

void qm_cambi_spatial_mask(const uint16_t *img, ptrdiff_t img_stride, int w,
                           int h, unsigned mask_index, uint8_t *mask,
                           ptrdiff_t mask_stride, uint8_t *scratch)
{
    const int r = CAMBI_MASK_BOX / 2;
    img_stride /= (ptrdiff_t)sizeof(*img);  /* in samples from here on */
    uint8_t *ring = scratch;                 /* flat rows, row y at y & 7 */
    uint8_t *colsum = scratch + 8 * (size_t)w; /* w + 2r, zero margins */
    uint8_t *cs = colsum + r;
    memset(colsum, 0, (size_t)w + 2 * r);

    /* column sums of flat flags over rows [y - r, y + r] (outside: 0) */
    for (int y = 0; y < r && y < h; y++) {
        uint8_t *d = ring + (size_t)(y & 7) * w;
        flat_row(img + y * img_stride,
                 y + 1 < h ? img + (y + 1) * img_stride : NULL, w, d);
        for (int x = 0; x < w; x++)
            cs[x] += d[x];
    }
    for (int y = 0; y < h; y++) {
        const int in = y + r, out = y - r - 1;
        if (in < h) {
            uint8_t *d = ring + (size_t)(in & 7) * w;
            flat_row(img + in * img_stride,
                     in + 1 < h ? img + (in + 1) * img_stride : NULL, w, d);
            for (int x = 0; x < w; x++)
                cs[x] += d[x];
        }
        if (out >= 0) {
            const uint8_t *d = ring + (size_t)(out & 7) * w;
            for (int x = 0; x < w; x++)
                cs[x] -= d[x];
        }
        uint8_t *m = mask + y * mask_stride;
        for (int x = 0; x < w; x++) {
            const unsigned box = (unsigned)colsum[x] + colsum[x + 1] +
                colsum[x + 2] + colsum[x + 3] + colsum[x + 4] +
                colsum[x + 5] + colsum[x + 6];
            m[x] = box > mask_index;
        }
    }
}

/* ---- stage 3: decimation ---- */

void qm_cambi_decimate16(const uint16_t *src, ptrdiff_t src_stride,
                         uint16_t *dst, ptrdiff_t dst_stride, int w, int h)
{
    src_stride /= (ptrdiff_t)sizeof(*src);  /* in samples from here on */
    dst_stride /= (ptrdiff_t)sizeof(*dst);
    for (int y = 0; y < h; y++) {
        const uint16_t *restrict s = src + 2 * y * src_stride;
        uint16_t *restrict d = dst + y * dst_stride;
        for (int x = 0; x < w; x++)
            d[x] = s[2 * x];
    }
}

void qm_cambi_decimate8(const uint8_t *src, ptrdiff_t src_stride,
                        uint8_t *dst, ptrdiff_t dst_stride, int w, int h)
{
    for (int y = 0; y < h; y++) {
        const uint8_t *restrict s = src + 2 * y * src_stride;
        uint8_t *restrict d = dst + y * dst_stride;
        for (int x = 0; x < w; x++)
            d[x] = s[2 * x];
    }
}

/* ---- stage 4: mode filter ---- */

/* libvmaf mode3: the value two of the three share, else the smallest. */
static inline uint16_t mode3(uint16_t a, uint16_t b, uint16_t c)
{
    uint16_t m = a < b ? a : b;
    m = m < c ? m : c;
    m = b == c ? b : m;
    return (a == b || a == c) ? a : m;
}

static void mode_row(const uint16_t *restrict s, uint16_t *restrict d, int w)
{
    d[0] = s[0];
    for (int x = 1; x + 1 < w; x++)
        d[x] = mode3(s[x - 1], s[x], s[x + 1]);
    d[w - 1] = s[w - 1];
}

void qm_cambi_filter_mode(const uint16_t *src, ptrdiff_t src_stride,
                          uint16_t *dst, ptrdiff_t dst_stride, int w, int h,
                          uint16_t *scratch)
{
    /* libvmaf filter_mode: the first and last rows keep their values; the
     * others get the vertical mode of the horizontal modes of three rows
     * (horizontal modes keep the first and last columns). */
    src_stride /= (ptrdiff_t)sizeof(*src);  /* in samples from here on */
    dst_stride /= (ptrdiff_t)sizeof(*dst);
    memcpy(dst, src, (size_t)w * sizeof(*dst));
    if (h > 1)
        memcpy(dst + (h - 1) * dst_stride, src + (h - 1) * src_stride,
               (size_t)w * sizeof(*dst));
    if (h < 3)
        return;
    uint16_t *hm[3] = { scratch, scratch + w, scratch + 2 * (size_t)w };
    mode_row(src, hm[0], w);
    mode_row(src + src_stride, hm[1], w);
    for (int y = 1; y + 1 < h; y++) {
        mode_row(src + (y + 1) * src_stride, hm[(y + 1) % 3], w);
        const uint16_t *restrict a = hm[0], *restrict b = hm[1],
                       *restrict c = hm[2];
        uint16_t *restrict d = dst + y * dst_stride;
        for (int x = 0; x < w; x++)
            d[x] = mode3(a[x], b[x], c[x]);
    }
}

/* ---- stage 5: c-values ---- */

/* The histograms (libvmaf's scheme): for each value v of the band and each
 * column x, the number of masked pixels of value v in the window around
 * (x, y), i.e. in rows [y - pad, y + pad] and columns [x - pad, x + pad].
 * Moving down a row, each column sees one pixel leave and one enter; a
 * pixel counts in the window-wide run of columns around it of its value's
 * histogram row.  Rows have pad spare columns either side, so that runs
 * are never clipped (the spare columns are never read), and there are
 * num_diffs zero rows either side of the band, so that lookups at
 * v +- (d + 1) need no checks (values below 0 count 0, as in libvmaf;
 * nothing above the band is ever looked up).  Only values of the band are
 * counted (codes v - band_lo). */
static size_t hist_stride(const QmCambiParams *p, int w)
{
    return (size_t)w + 2 * (size_t)(p->window >> 1);
}

static size_t hist_rows(const QmCambiParams *p)
{
    return (size_t)p->band_n + 2 * (size_t)p->num_diffs;
}

/* the band codes of the window's rows and of the row leaving it */
static int code_ring(const QmCambiParams *p)
{
    return 2 * (p->window >> 1) + 2;
}

/* bytes of scratch: the histograms, a ring of rows of band codes, and a
 * row of "not counted" codes */
size_t qm_cambi_c_scratch_size(const QmCambiParams *p, int w)
{
    return (hist_rows(p) * hist_stride(p, w) +
            ((size_t)code_ring(p) + 1) * (size_t)w) * sizeof(uint16_t);
}

/* band code of each pixel of a row: value - band_lo, or band_n when the
 * pixel is not counted (masked out or outside the band) */
static void row_codes(const uint16_t *restrict img,
                      const uint8_t *restrict mask, int w, int band_lo,
                      unsigned band_n, uint16_t *restrict code)
{
    for (int x = 0; x < w; x++) {
        unsigned c = (unsigned)(img[x] - band_lo);
        c = c < band_n ? c : band_n;
        code[x] = (uint16_t)(mask[x] ? c : band_n);
    }
}

/* A run of len consecutive columns from `start` whose pixels of one code
 * all enter (sign +1) or all leave (-1): together they change padded
 * columns start .. start + len + win - 2 of the code's row by the number
 * of the run's windows covering each, a trapezoid (1, 2, .., plateau,
 * .., 2, 1), in one pass instead of len passes of win columns. */
static void run_apply(uint16_t *restrict hist, size_t hs, int win,
                      unsigned code, int start, int len, int sign)
{
    uint16_t *restrict row = hist + (size_t)code * hs + start;
    if (len == 1) {
        for (int k = 0; k < win; k++)
            row[k] = (uint16_t)(row[k] + sign);
        return;
    }
    const int n = len + win - 1;
    const int plateau = len < win ? len : win;
    for (int t = 0; t < n; t++) {
        int cover = t + 1 < plateau ? t + 1 : plateau;
        cover = cover < n - t ? cover : n - t;
        row[t] = (uint16_t)(row[t] + sign * cover);
    }
}

/* Whether 16 columns of the leaving and entering codes are all equal. */
static inline int same16(const uint16_t *restrict out,
                         const uint16_t *restrict in)
{
    unsigned diff = 0;
    for (int k = 0; k < 16; k++)
        diff |= (unsigned)(out[k] ^ in[k]);
    return !diff;
}

/* Move the window down: pixels of codes `out` leave, `in` enter (band_n:
 * no pixel).  hist points at the first (padded) column of code 0's row; a
 * pixel of column x counts in padded columns x .. x + 2 pad, which are
 * output columns x - pad .. x + pad.  Columns where the same code leaves
 * and enters change nothing (rows are compared 16 columns at a time
 * first).  Small windows are updated column by column; larger ones gather
 * the columns into runs of equal codes (see run_apply). */
static void hist_slide(uint16_t *restrict hist, size_t hs, int w, int win,
                       unsigned band_n, const uint16_t *restrict out,
                       const uint16_t *restrict in)
{
    if (win <= 16) {
        for (int x0 = 0; x0 < w; x0 += 16) {
            const int xe = x0 + 16 < w ? x0 + 16 : w;
            if (xe - x0 == 16 && same16(out + x0, in + x0))
                continue;
            for (int x = x0; x < xe; x++) {
                const unsigned co = out[x], ci = in[x];
                if (co == ci)
                    continue;
                if (co < band_n) {
                    uint16_t *restrict r = hist + co * hs + x;
                    for (int k = 0; k < win; k++)
                        r[k]--;
                }
                if (ci < band_n) {
                    uint16_t *restrict r = hist + ci * hs + x;
                    for (int k = 0; k < win; k++)
                        r[k]++;
                }
            }
        }
        return;
    }
    unsigned run_out = band_n, run_in = band_n;  /* codes of the open runs */
    int start_out = 0, start_in = 0;
    for (int x0 = 0; x0 < w; x0 += 16) {
        const int xe = x0 + 16 < w ? x0 + 16 : w;
        if (xe - x0 == 16 && same16(out + x0, in + x0)) {
            /* nothing changes here: close the runs */
            if (run_out != band_n)
                run_apply(hist, hs, win, run_out, start_out, x0 - start_out,
                          -1);
            if (run_in != band_n)
                run_apply(hist, hs, win, run_in, start_in, x0 - start_in, +1);
            run_out = run_in = band_n;
            continue;
        }
        for (int x = x0; x < xe; x++) {
            const unsigned same = out[x] == in[x];
            const unsigned co = same ? band_n : out[x];
            const unsigned ci = same ? band_n : in[x];
            if (co != run_out) {
                if (run_out != band_n)
                    run_apply(hist, hs, win, run_out, start_out,
                              x - start_out, -1);
                run_out = co;
                start_out = x;
            }
            if (ci != run_in) {
                if (run_in != band_n)
                    run_apply(hist, hs, win, run_in, start_in, x - start_in,
                              +1);
                run_in = ci;
                start_in = x;
            }
        }
    }
    if (run_out != band_n)
        run_apply(hist, hs, win, run_out, start_out, w - start_out, -1);
    if (run_in != band_n)
        run_apply(hist, hs, win, run_in, start_in, w - start_in, +1);
}

/* c-value of a pixel of value v (libvmaf c_value_pixel): h0[k * s] is the
 * window's count of value v + k, p0 that of v; for the steps d + 1 whose
 * bit d is set in act, the largest w_d p0 q / (p0 + q), q the larger count
 * d + 1 codes above or below, computed in int, then float times the
 * table's reciprocal of p0 + q.  The counts of every step lie in the band
 * (or its zero rows), so all steps are computed and the inactive ones
 * dropped, without branches. */
static inline float c_pixel(const uint16_t *restrict h0, ptrdiff_t s,
                            uint32_t act, int nd, const int *restrict weight,
                            const float *restrict recip)
{
    const int p0 = *h0;
    float cv = 0.0f;
    for (int d = 0; d < nd; d++) {
        const int up = h0[(d + 1) * s], dn = h0[-(d + 1) * s];
        const int q = up > dn ? up : dn;
        float val = (float)(weight[d] * p0 * q) * recip[p0 + q];
        val = act >> d & 1 ? val : 0.0f;
        cv = val > cv ? val : cv;
    }
    return cv;
}

/* c-values of row y from the histograms of its window (hist: column x of
 * code 0's row at hist[x]); nd is a parameter so that the common 4 can be
 * unrolled. */
static inline void c_row_nd(const uint16_t *restrict hist, size_t hs, int w,
                            const uint16_t *restrict img,
                            const uint8_t *restrict mask,
                            const QmCambiParams *p, int nd,
                            float *restrict c, QmCambiCStats *st)
{
    const int band_lo = p->band_lo;
    const uint32_t *restrict active = p->active;
    const float *restrict recip = p->recip;
    int weight[QM_CAMBI_MAX_DIFFS];
    for (int d = 0; d < nd; d++)
        weight[d] = p->weight[d];
    const ptrdiff_t s = (ptrdiff_t)hs;
    uint64_t nonzero = 0;
    double sum = 0.0;  /* exact: one row (see QM_CAMBI_FIX_ONE) */
    for (int x = 0; x < w; x++) {
        const unsigned v = img[x];
        const uint32_t act = mask[x] ? active[v] : 0;
        float cv = 0.0f;
        if (act) {
            cv = c_pixel(hist + (ptrdiff_t)(v - band_lo) * s + x, s, act, nd,
                         weight, recip);
            nonzero += cv > 0.0f;
            sum += cv;
        }
        c[x] = cv;
    }
    st->nonzero += nonzero;
    st->sum += qm_cambi_fix(sum);
}

static void c_row(const uint16_t *hist, size_t hs, int w,
                  const uint16_t *img, const uint8_t *mask,
                  const QmCambiParams *p, float *c, QmCambiCStats *st)
{
    if (p->num_diffs == 4)  /* libvmaf's default max_log_contrast 2 */
        c_row_nd(hist, hs, w, img, mask, p, 4, c, st);
    else
        c_row_nd(hist, hs, w, img, mask, p, p->num_diffs, c, st);
}

void qm_cambi_c_values(const uint16_t *img, ptrdiff_t img_stride,
                       const uint8_t *mask, ptrdiff_t mask_stride, int w,
                       int h, const QmCambiParams *p, float *c,
                       QmCambiCStats *st, void *scratch)
{
    const int pad = p->window >> 1, ring = code_ring(p);
    const unsigned band_n = (unsigned)p->band_n;
    img_stride /= (ptrdiff_t)sizeof(*img);  /* in samples from here on */
    const size_t hs = hist_stride(p, w);
    uint16_t *hist = scratch;
    uint16_t *codes = hist + hist_rows(p) * hs;  /* row r at r % ring */
    uint16_t *none = codes + (size_t)ring * w;
    memset(hist, 0, hist_rows(p) * hs * sizeof(*hist));
    for (int x = 0; x < w; x++)
        none[x] = (uint16_t)band_n;
    uint16_t *h0 = hist + (size_t)p->num_diffs * hs;  /* code 0, padded */
    st->nonzero = 0;
    st->sum = 0;

    /* the window of row y: rows [y - pad, y + pad] */
    for (int y = 0; y < pad && y < h; y++) {
        uint16_t *cr = codes + (size_t)(y % ring) * w;
        row_codes(img + y * img_stride, mask + y * mask_stride, w,
                  p->band_lo, band_n, cr);
        hist_slide(h0, hs, w, p->window, band_n, none, cr);
    }
    for (int y = 0; y < h; y++) {
        const int in = y + pad, out = y - pad - 1;
        const uint16_t *ci = none, *co = none;
        if (in < h) {
            uint16_t *cr = codes + (size_t)(in % ring) * w;
            row_codes(img + in * img_stride, mask + in * mask_stride, w,
                      p->band_lo, band_n, cr);
            ci = cr;
        }
        if (out >= 0)
            co = codes + (size_t)(out % ring) * w;
        if (ci != co)
            hist_slide(h0, hs, w, p->window, band_n, co, ci);
        c_row(h0 + pad, hs, w, img + y * img_stride, mask + y * mask_stride,
              p, c + (size_t)y * w, st);
    }
}

/* ---- stage 6: top-k pooling ---- */

/* Of the m values of c: add those whose bin ((bits >> shift) & mask) is
 * above t to *sum (exact, units of 2^-24), and move those of bin t to the
 * front of c.  Returns how many were moved. */
static size_t split_at_bin(float *c, size_t m, int shift, uint32_t mask,
                           uint32_t t, uint64_t *sum)
{
    size_t j = 0;
    for (size_t i0 = 0; i0 < m; i0 += QM_CAMBI_EXACT_RUN) {
        const size_t e = m - i0 < QM_CAMBI_EXACT_RUN ? m : i0 + QM_CAMBI_EXACT_RUN;
        double s0 = 0.0, s1 = 0.0;  /* two chains: half the add latency */
        size_t i = i0;
        for (; i + 1 < e; i += 2) {
            const float a = c[i], b = c[i + 1];
            const uint32_t ba = (float_bits(a) >> shift) & mask;
            const uint32_t bb = (float_bits(b) >> shift) & mask;
            s0 += ba > t ? a : 0.0f;
            s1 += bb > t ? b : 0.0f;
            c[j] = a;
            j += ba == t;
            c[j] = b;
            j += bb == t;
        }
        for (; i < e; i++) {
            const uint32_t ba = (float_bits(c[i]) >> shift) & mask;
            s0 += ba > t ? c[i] : 0.0f;
            c[j] = c[i];
            j += ba == t;
        }
        *sum += qm_cambi_fix(s0 + s1);  /* a block of c-values: exact */
    }
    return j;
}

uint64_t qm_cambi_topk_count(uint64_t n, double topk)
{
    /* libvmaf spatial_pooling: k = (int)(topk * n) clipped to [1, n] */
    long long k = (long long)(topk * (double)n);
    return k < 1 ? 1 : (uint64_t)k > n ? n : (uint64_t)k;
}

double qm_cambi_pool_topk(float *c, size_t n, const QmCambiCStats *st,
                          double topk, QmCambiPoolScratch *sc)
{
    /* libvmaf spatial_pooling: the mean of the k largest values (it finds
     * them by quickselect) */
    const long long k = (long long)qm_cambi_topk_count(n, topk);

    /* Usually most c-values are 0 and the k largest are all the others. */
    if (st->nonzero <= (uint64_t)k)
        return qm_cambi_fix_mean(st->sum, (uint64_t)k);

    /* Radix select on the bits of the values: bits 30..20, then 19..10 and
     * 9..0 of those that share the higher bits of the k-th largest (moved
     * to the front of c, the larger ones summed on the way).  The first
     * level counts in 4 interleaved histograms: runs of equal bins would
     * otherwise wait on each other's increments. */
    uint32_t *restrict cnt = sc->count;
    const uint32_t top = QM_CAMBI_POOL_BINS - 1;  /* (sign bit dropped) */
    memset(cnt, 0, sizeof(sc->count));
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        cnt[0 * QM_CAMBI_POOL_BINS + ((float_bits(c[i]) >> 20) & top)]++;
        cnt[1 * QM_CAMBI_POOL_BINS + ((float_bits(c[i + 1]) >> 20) & top)]++;
        cnt[2 * QM_CAMBI_POOL_BINS + ((float_bits(c[i + 2]) >> 20) & top)]++;
        cnt[3 * QM_CAMBI_POOL_BINS + ((float_bits(c[i + 3]) >> 20) & top)]++;
    }
    for (; i < n; i++)
        cnt[(float_bits(c[i]) >> 20) & top]++;
    for (int b = 0; b < QM_CAMBI_POOL_BINS; b++)
        cnt[b] += cnt[QM_CAMBI_POOL_BINS + b] + cnt[2 * QM_CAMBI_POOL_BINS + b] +
                  cnt[3 * QM_CAMBI_POOL_BINS + b];
    long long need = k;   /* values still to take */
    uint64_t total = 0;   /* sum of the values taken (units of 2^-24) */
    /* bin 0 holds the zeros: more than k values are not, so t > 0 */
    uint32_t t = top;
    while (t > 0 && cnt[t] < need)
        need -= cnt[t--];
    size_t m = split_at_bin(c, n, 20, top, t, &total);
    uint32_t prefix = t;  /* bits 30..shift of the k-th largest so far */
    for (int shift = 10; ; shift -= 10) {
        if ((uint64_t)need == m) {  /* the whole bin is taken */
            for (size_t j0 = 0; j0 < m; j0 += QM_CAMBI_EXACT_RUN) {
                const size_t e = m - j0 < QM_CAMBI_EXACT_RUN ? m : j0 + QM_CAMBI_EXACT_RUN;
                double b = 0.0;  /* exact: a block */
                for (size_t j = j0; j < e; j++)
                    b += c[j];
                total += qm_cambi_fix(b);
            }
            break;
        }
        const uint32_t mask = (1u << 10) - 1;
        memset(cnt, 0, 1024 * sizeof(*cnt));
        for (size_t j = 0; j < m; j++)
            cnt[(float_bits(c[j]) >> shift) & mask]++;
        t = mask;
        while (t > 0 && cnt[t] < need)
            need -= cnt[t--];
        m = split_at_bin(c, m, shift, mask, t, &total);
        prefix = (prefix << 10) | t;
        if (shift == 0) {  /* all 31 bits known: equal values */
            float v;
            memcpy(&v, &prefix, sizeof(v));
            total += (uint64_t)need * qm_cambi_fix(v);
            break;
        }
    }
    return qm_cambi_fix_mean(total, (uint64_t)k);
}

/* ---- host side ---- */

double qm_cambi_score(const double pooled[QM_CAMBI_NUM_SCALES], int window,
                      double max_val)
{
    /* libvmaf weight_scores_per_scale, normalised by the pixels of the
     * (odd) window; then cambi_max_val clips */
    double s = 0.0;
    for (int i = 0; i < QM_CAMBI_NUM_SCALES; i++)
        s += pooled[i] * cambi_scale_weight[i];
    s /= (double)(window * window);
    return s < max_val ? s : max_val;
}

/* ---- luminance model (libvmaf luminance_tools.c) ---- */

static double bt1886_eotf(double v)
{
    const double lw = pow(BT1886_LW, 1.0 / BT1886_GAMMA);
    const double lb = pow(BT1886_LB, 1.0 / BT1886_GAMMA);
    const double a = pow(lw - lb, BT1886_GAMMA);
    const double b = lb / (lw - lb);
    return a * pow(fmax(v + b, 0.0), BT1886_GAMMA);
}

/* Display luminance of a 10-bit limited-range code. */
static double luminance10(int code)
{
    const int c = code < LUMA10_FOOT ? LUMA10_FOOT
                : code > LUMA10_HEAD ? LUMA10_HEAD : code;
    return bt1886_eotf((double)(c - LUMA10_FOOT) / (LUMA10_HEAD - LUMA10_FOOT));
}

/* A step of `diff` codes up from `code` is visible (Weber-like law). */
static int step_visible(int code, int diff, double tvi)
{
    const double l = luminance10(code);
    return luminance10(code + diff) - l > tvi * l;
}

/* libvmaf get_tvi_for_diff: the largest code at which a step of `diff`
 * codes is still visible (visibility falls as the luminance grows), found
 * by bisection over [64, 940 - diff - 1]; 0 when not even the darkest code
 * shows it, 1023 when the brightest tested still does. */
static int tvi_for_diff(int diff, double tvi)
{
    int lo = LUMA10_FOOT, hi = LUMA10_HEAD - diff - 1;
    if (!step_visible(lo, diff, tvi))
        return 0;
    if (!step_visible(lo + 1, diff, tvi))
        return lo;
    if (step_visible(hi, diff, tvi)) {
        if (step_visible(hi + 1, diff, tvi))
            return 1023;
        return hi;
    }
    /* visible at lo + 1, not at hi: find the last visible code */
    lo++;
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        if (step_visible(mid, diff, tvi))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* libvmaf get_vlt_luma: the first code from 64 up whose luminance reaches
 * the threshold; 0 when code 64 already does. */
static int vlt_code(double threshold)
{
    int code = LUMA10_FOOT;
    while (code < 0xffff && luminance10(code) < threshold)
        code++;
    return code == LUMA10_FOOT ? 0 : code;
}

/* ---- the metric ---- */

enum {
    OPT_HRS = 0,   /* cambi_high_res_speedup */
    OPT_MAX_VAL,   /* cambi_max_val */
    OPT_TOPK,      /* cambi_topk */
    OPT_VLT,       /* cambi_vis_lum_threshold */
    OPT_ENC_H,     /* enc_height */
    OPT_ENC_W,     /* enc_width */
    OPT_TVI,       /* tvi_threshold */
    OPT_WINDOW,    /* window_size */
};

typedef struct CambiState {
    QmCambiConfig cf;      /* options resolved, tables */
    uint16_t *img[2];      /* w x h each, ping-pong */
    uint8_t *mask[2];
    uint8_t *mask_scratch;
    uint16_t *mode_scratch;
    float *c;
    void *cscratch;
    QmCambiCStats cstats;
    QmCambiPoolScratch *pool;
} CambiState;

void qm_cambi_config_free(QmCambiConfig *c)
{
    free(c->xmap);
    free(c->ymap);
    free(c->recip);
    memset(c, 0, sizeof(*c));
}

static void cambi_close(void *priv)
{
    CambiState *s = priv;
    qm_cambi_config_free(&s->cf);
    for (int i = 0; i < 2; i++) {
        free(s->img[i]);
        free(s->mask[i]);
    }
    free(s->mask_scratch);
    free(s->mode_scratch);
    free(s->c);
    free(s->cscratch);
    free(s->pool);
    memset(s, 0, sizeof(*s));
}

/* libvmaf decimate_generic_*_and_convert_to_10b: nearest neighbour with
 * the source position stepped in float from ratio / 2 - 0.5 and rounded by
 * (int)(pos + 0.5). */
static int *nearest_map(int in, int out)
{
    int *m = malloc((size_t)out * sizeof(*m));
    if (!m)
        return NULL;
    const float ratio = (float)in / (float)out;
    float pos = (float)(ratio / 2 - 0.5);
    for (int i = 0; i < out; i++) {
        int k = (int)(pos + 0.5);
        m[i] = k < in ? k : in - 1;  /* never reached: float keeps < in */
        pos += ratio;
    }
    return m;
}

int qm_cambi_halve(int n, int k)
{
    while (k-- > 0)
        n = (n + 1) >> 1;
    return n;
}

int qm_cambi_configure(QmCambiConfig *s, const QmMetricConfig *cfg)
{
    const double *o = cfg->opt->v;
    memset(s, 0, sizeof(*s));
    s->in_w = cfg->w;
    s->in_h = cfg->h;
    s->bpc = cfg->bpc;
    if (cfg->bpc < 8 || cfg->bpc > 16)
        return QM_ENOTSUP;

    /* libvmaf's option ranges; enc_width/enc_height 0 mean the input's */
    const int enc_w = (int)o[OPT_ENC_W], enc_h = (int)o[OPT_ENC_H];
    if ((enc_w && (enc_w < 180 || enc_w > 7680)) ||
        (enc_h && (enc_h < 150 || enc_h > 7680)) ||
        o[OPT_WINDOW] < 15 || o[OPT_WINDOW] > 127 ||
        o[OPT_TOPK] < 0.0001 || o[OPT_TOPK] > 1.0 ||
        o[OPT_TVI] < 0.0001 || o[OPT_TVI] > 1.0 ||
        o[OPT_VLT] < 0.0 || o[OPT_VLT] > 300.0 ||
        o[OPT_MAX_VAL] < 0.0 || o[OPT_MAX_VAL] > 1000.0 ||
        o[OPT_HRS] < 0 || o[OPT_HRS] > 2160)
        return QM_EINVAL;

    /* libvmaf init: the encoding size defaults to the input's, and an
     * encode larger than the input is not upscaled back */
    s->w = cfg->w;
    s->h = cfg->h;
    if (enc_w && enc_h && enc_w <= cfg->w && enc_h <= cfg->h) {
        s->w = enc_w;
        s->h = enc_h;
    }
    if (s->w < CAMBI_MIN_SIDE && s->h < CAMBI_MIN_SIDE)
        return QM_ENOTSUP;

    /* enc_bitdepth defaults to the input's: below 10 bits, dithering */
    s->anti_dither = cfg->bpc < 10;
    s->topk = o[OPT_TOPK];
    s->max_val = o[OPT_MAX_VAL];

    const long long enc_pix = (long long)s->w * s->h;
    const int hrs = (int)o[OPT_HRS];
    s->hrs = (hrs == 1080 && enc_pix >= CAMBI_HRS_1080P) ||
             (hrs == 1440 && enc_pix >= CAMBI_HRS_1440P) ||
             (hrs == 2160 && enc_pix >= CAMBI_HRS_2160P);

    /* libvmaf adjust_window_size: scaled by (w + h) / (3840 + 2160) in
     * integer steps (65 * 6000 / 375 / 16 = 65 at 4K), halved with the
     * speed-up, made odd */
    int window = (((int)o[OPT_WINDOW] * (s->w + s->h)) / 375) >> 4;
    if (s->hrs)
        window = (window + 1) >> 1;
    window |= 1;
    if (window * window >= CAMBI_RECIP_LUT_SIZE)
        return QM_EINVAL;  /* libvmaf: "too large for reciprocal LUT" */
    const int pad = window >> 1;

    /* Sizes libvmaf's sliding windows handle: every analysed scale needs
     * sides of at least pad.  On shorter sides its histogram loops read
     * pixels outside the scaled picture: stale pixels of earlier scales
     * left in its buffers, or memory outside them (e.g. 1000x60 and 576x9
     * crash it); its value is not defined there. */
    for (int sc = 0; sc < QM_CAMBI_NUM_SCALES; sc++) {
        const int ws = qm_cambi_halve(s->w, sc + s->hrs);
        const int hs = qm_cambi_halve(s->h, sc + s->hrs);
        if (ws < pad || hs < pad)
            return QM_ENOTSUP;
    }

    /* the luminance model's tables */
    QmCambiParams *p = &s->par;
    p->window = window;
    p->num_diffs = 1 << CAMBI_MAX_LOG_CONTRAST;
    const int nd = p->num_diffs;
    int tvi[QM_CAMBI_MAX_DIFFS];
    for (int d = 0; d < nd; d++) {
        p->weight[d] = cambi_contrast_weight[d];
        tvi[d] = tvi_for_diff(d + 1, o[OPT_TVI]);
    }
    const int vlt = vlt_code(o[OPT_VLT]);
    /* libvmaf c_value_pixel's conditions, in its "value + num_diffs"
     * convention: step d + 1 counts at value v when v <= tvi[d] and
     * v + num_diffs + d + 1 > vlt */
    int top = 0;
    for (int v = 0; v <= QM_CAMBI_MAX_VALUE; v++) {
        uint32_t a = 0;
        for (int d = 0; d < nd; d++)
            if (v <= tvi[d] && v + nd + d + 1 > vlt)
                a |= 1u << d;
        s->active[v] = a;
        if (a)  /* c_pixel reads v +- num_diffs of every active v */
            top = v + nd > top ? v + nd : top;
    }
    p->active = s->active;
    /* the band libvmaf counts: from vlt - 3 num_diffs + 1 to the largest
     * threshold + num_diffs (covers every lookup at v and v +- (d + 1)) */
    p->band_lo = vlt - 3 * nd + 1 > 0 ? vlt - 3 * nd + 1 : 0;
    int band_hi = tvi[nd - 1] + nd;
    band_hi = top > band_hi ? top : band_hi;
    p->band_n = band_hi + 1 - p->band_lo;
    if (p->band_n < 1)
        p->band_n = 1;  /* nothing is ever active then */

    /* libvmaf's reciprocal table (cambi.h reciprocal_lut): 1/n written
     * with 9 significant digits, read back as float (which is not always
     * 1.0f / n, e.g. n = 82) */
    s->recip = malloc((size_t)(window * window + 1) * sizeof(*s->recip));
    if (!s->recip)
        goto nomem;
    s->recip[0] = 0.0f;
    for (int i = 1; i <= window * window; i++) {
        char buf[32];
        snprintf(buf, sizeof(buf), "%.9g", 1.0 / i);
        s->recip[i] = strtof(buf, NULL);
    }
    p->recip = s->recip;

    s->mask_index = qm_cambi_mask_index(s->w, s->h);

    if (s->w != cfg->w || s->h != cfg->h) {
        s->xmap = nearest_map(cfg->w, s->w);
        s->ymap = nearest_map(cfg->h, s->h);
        if (!s->xmap || !s->ymap)
            goto nomem;
    }
    return 0;
nomem:
    qm_cambi_config_free(s);
    return QM_ENOMEM;
}

static int cambi_init(void *priv, const QmMetricConfig *cfg)
{
    CambiState *s = priv;
    memset(s, 0, sizeof(*s));
    const int err = qm_cambi_configure(&s->cf, cfg);
    if (err)
        return err;
    const QmCambiConfig *cf = &s->cf;
    const size_t npix = (size_t)cf->w * cf->h;
    for (int i = 0; i < 2; i++) {
        s->img[i] = malloc(npix * sizeof(uint16_t));
        s->mask[i] = malloc(npix);
        if (!s->img[i] || !s->mask[i])
            goto nomem;
    }
    const int w0 = qm_cambi_halve(cf->w, cf->hrs);
    s->mask_scratch = malloc(qm_cambi_mask_scratch_size(cf->w));
    s->mode_scratch = malloc(3 * (size_t)w0 * sizeof(uint16_t));
    s->c = malloc((size_t)w0 * qm_cambi_halve(cf->h, cf->hrs) * sizeof(float));
    s->cscratch = malloc(qm_cambi_c_scratch_size(&cf->par, w0));
    s->pool = malloc(sizeof(*s->pool));
    if (!s->mask_scratch || !s->mode_scratch || !s->c || !s->cscratch || !s->pool)
        goto nomem;
    return 0;
nomem:
    cambi_close(s);
    return QM_ENOMEM;
}

static int cambi_compute(void *priv, const QmFrame *f, QmRows *out)
{
    CambiState *s = priv;
    const QmCambiConfig *cf = &s->cf;
    const QmPicture *pic = f->dist;
    const unsigned maxv = (1u << cf->bpc) - 1;

    const ptrdiff_t s16 = sizeof(uint16_t);  /* strides are in bytes */
    unsigned mx = qm_cambi_preprocess(pic->data[0], pic->stride[0], pic->bpc,
                                      cf->xmap, cf->ymap, s->img[0],
                                      cf->w * s16, cf->w, cf->h, cf->anti_dither);
    if (cf->xmap) {  /* libvmaf validates the whole input plane */
        for (int y = 0; y < cf->in_h; y++)
            for (int x = 0; x < cf->in_w; x++) {
                const unsigned v = (unsigned)qm_sample(pic, 0, x, y);
                mx = v > mx ? v : mx;
            }
    }
    if (cf->bpc < 16 && mx > maxv)
        return QM_EINVAL;  /* libvmaf validate_image: samples out of range */

    qm_cambi_spatial_mask(s->img[0], cf->w * s16, cf->w, cf->h, cf->mask_index,
                          s->mask[0], cf->w, s->mask_scratch);

    /* a: the picture of the current scale, b: its mode-filtered version */
    uint16_t *a = s->img[0], *b = s->img[1];
    uint8_t *m = s->mask[0], *m2 = s->mask[1];
    int w = cf->w, h = cf->h;
    double pooled[QM_CAMBI_NUM_SCALES];
    for (int sc = 0; sc < QM_CAMBI_NUM_SCALES; sc++) {
        if (sc > 0 || cf->hrs) {
            const int nw = (w + 1) >> 1, nh = (h + 1) >> 1;
            /* scale 0 with the speed-up decimates the unfiltered picture */
            if (sc == 0) {
                qm_cambi_decimate16(a, w * s16, b, nw * s16, nw, nh);
                uint16_t *t = a; a = b; b = t;
            } else {
                qm_cambi_decimate16(b, w * s16, a, nw * s16, nw, nh);
            }
            qm_cambi_decimate8(m, w, m2, nw, nw, nh);
            uint8_t *t = m; m = m2; m2 = t;
            w = nw;
            h = nh;
        }
        qm_cambi_filter_mode(a, w * s16, b, w * s16, w, h, s->mode_scratch);
        qm_cambi_c_values(b, w * s16, m, w, w, h, &cf->par, s->c, &s->cstats,
                          s->cscratch);
        pooled[sc] = qm_cambi_pool_topk(s->c, (size_t)w * h, &s->cstats,
                                        cf->topk, s->pool);
    }
    qm_rows_set(out, 0, 0, qm_cambi_score(pooled, cf->par.window, cf->max_val));
    return 0;
}

static const char *const cambi_features[] = { "cambi", NULL };

extern const struct QmCudaFuncs qm_cuda_cambi;  /* cuda/cambi.cu */

/* libvmaf's names, aliases, defaults and ranges (feature/cambi.c options);
 * alphabetical, as libvmaf orders them in feature keys.  Not offered:
 * topk (cambi_topk is its alias option), enc_bitdepth, max_log_contrast,
 * eotf/cambi_eotf, full_ref, src_width/src_height, heatmaps_path. */
static const QmOptionDesc cambi_options[] = {
    { "cambi_high_res_speedup", "hrs",
      "decimate once more for encodes of at least this resolution "
      "(1080, 1440, 2160; 0 = off)", 0, 0, 2160, QM_OPT_IN_KEY },
    { "cambi_max_val", "cmxv", "largest value reported (clip)",
      CAMBI_DEFAULT_MAX_VAL, 0, 1000, QM_OPT_IN_KEY },
    { "cambi_topk", "ctpk", "fraction of the largest c-values pooled",
      CAMBI_DEFAULT_TOPK, 0.0001, 1.0, QM_OPT_IN_KEY },
    { "cambi_vis_lum_threshold", "vlt",
      "luminance (cd/m2) below which banding is not visible",
      CAMBI_DEFAULT_VLT, 0, 300, QM_OPT_IN_KEY },
    { "enc_height", "ench", "encoding height (0 = input height)", 0, 150,
      7680, QM_OPT_IN_KEY },
    { "enc_width", "encw", "encoding width (0 = input width)", 0, 180, 7680,
      QM_OPT_IN_KEY },
    { "tvi_threshold", "tvit",
      "visibility threshold: dL > tvi_threshold * L", CAMBI_DEFAULT_TVI,
      0.0001, 1.0, QM_OPT_IN_KEY },
    { "window_size", "ws", "window size at 4K (about 1 degree)",
      CAMBI_DEFAULT_WINDOW, 15, 127, QM_OPT_IN_KEY },
    { NULL },
};

/* Values worth banded and blocky content up to 1080p of their own (where the
 * largest window, 63 at 1080p, and cambi_high_res_speedup=1080 act), and
 * the option set of the VMAF v1 models. */
static const QmOptionSet cambi_option_sets[] = {
    /* the VMAF v1 models */
    { "cambi_high_res_speedup=1080,cambi_vis_lum_threshold=0.06,cambi_max_val=17",
      QM_OPTSET_DIRECT },
    { "cambi_topk=0.0001", QM_OPTSET_DIRECT },
    { "cambi_topk=0.05", QM_OPTSET_DIRECT },
    { "cambi_topk=1", QM_OPTSET_DIRECT },
    { "tvi_threshold=0.0001", QM_OPTSET_DIRECT },
    { "tvi_threshold=0.1", QM_OPTSET_DIRECT },
    { "tvi_threshold=1", QM_OPTSET_DIRECT },
    { "cambi_vis_lum_threshold=0.5", QM_OPTSET_DIRECT },
    { "cambi_vis_lum_threshold=20", QM_OPTSET_DIRECT },
    { "cambi_vis_lum_threshold=300", QM_OPTSET_DIRECT },
    { "cambi_max_val=0", QM_OPTSET_DIRECT },
    { "cambi_max_val=0.5", QM_OPTSET_DIRECT },
    { "window_size=15", QM_OPTSET_DIRECT },
    { "window_size=40,cambi_topk=0.01", QM_OPTSET_DIRECT },
    { "window_size=127", QM_OPTSET_DIRECT },  /* the largest window: 63 at 1080p */
    { "enc_width=200,enc_height=150", QM_OPTSET_DIRECT },  /* refused: below 216x216 */
    { "enc_width=300,enc_height=216", QM_OPTSET_DIRECT },
    { "enc_width=1280,enc_height=720,cambi_topk=0.2", QM_OPTSET_DIRECT },
    { "enc_width=999,enc_height=216", QM_OPTSET_DIRECT },  /* wider than 577: ignored */
    { "cambi_high_res_speedup=1080", QM_OPTSET_DIRECT },
    { "cambi_high_res_speedup=1080,cambi_topk=0.01", QM_OPTSET_DIRECT },
    { "cambi_high_res_speedup=1440", QM_OPTSET_DIRECT },  /* not at 1080p */
    { NULL },
};

const QmMetricDesc qm_metric_cambi = {
    .name = "cambi",
    .display = "CAMBI",
    .description = "CAMBI banding index of the distorted luma (libvmaf cambi)",
    .scale = { "banding", -1, 0, NAN },
    .features = cambi_features,
    .options = cambi_options,
    .flags = QM_METRIC_LUMA_ONLY | QM_METRIC_NO_CHROMA,
    .delay = 0,
    /* the real limits depend on both sides, see cambi_init() */
    .min_w = 1,
    .min_h = 1,
    .cpu = {
        .priv_size = sizeof(CambiState),
        .init = cambi_init,
        .compute = cambi_compute,
        .close = cambi_close,
    },
    .cuda = QM_CUDA_TWIN(qm_cuda_cambi),
    /* bit-exact: integer stages, the same float arithmetic per c-value,
     * exact sums (see QM_CAMBI_FIX_ONE in cambi.h) */
    .cuda_tol = 0,
    .option_sets = cambi_option_sets,
    .option_sets_content = QM_TEST_CONTENT_BANDED,
};
