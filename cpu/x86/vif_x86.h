/* gst-qmetric: what the x86 twins of the VIF stages (vif_avx2.c,
 * vif_avx512.c) share: their scratch layout, the mirrored borders and the
 * way the Q16 filters are cut into pairs of 16-bit coefficients.  Plain C,
 * no intrinsics; cpu/vif.c is the specification these twins reproduce.
 *
 * Both twins evaluate the integer filters with pmaddwd (16 x 16-bit signed
 * products summed in pairs into 32-bit lanes), so:
 *   - every coefficient of a pair must be below 2^15.  All taps of libvmaf's
 *     four filters are, except the centre of the 3-tap one (43728); every
 *     centre tap is even (7784, 14692, 26386, 43728), so a centre can be
 *     used as two half-weight taps;
 *   - unsigned 16-bit samples v are fed as v - 2^15 (v ^ 0x8000).  Since
 *     each filter sums to 65536, sum f (v - 2^15) = sum f v - 2^31, and the
 *     2^31 is put back through the accumulator's initial value.  All sums
 *     are taken modulo 2^32, where the specification's true values (always
 *     in [0, 2^32)) are exact.
 */
#ifndef QM_VIF_X86_H
#define QM_VIF_X86_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "vif.h"
#include "vif_pixel.h"

/* The moment rows of one output row, as 16-bit streams (biased by 2^15):
 * the two vertical means and the low and high 16 bits of the three
 * vertical second moments (the C stage's xx/yy/xy, split as its
 * join_q16() splits them). */
enum {
    VIF_X86_MU1, VIF_X86_MU2,
    VIF_X86_XXL, VIF_X86_XXH,
    VIF_X86_YYL, VIF_X86_YYH,
    VIF_X86_XYL, VIF_X86_XYH,
    VIF_X86_STREAMS
};

/* Each stream: a 64-byte aligned border of 64 samples, the row rounded up
 * to 64 samples, 128 more.  The widest reads: the statistics of a block of
 * 32 outputs starting at j < w read samples j - 32 .. j + 63 (aligned
 * vectors, vif_avx512.c); a block of 32 decimated outputs starting before
 * w / 2 reads up to 32 + 4 + 31 samples past twice its start (< w + 66). */
#define VIF_X86_BORDER 64

static inline size_t vif_x86_stream_len(int w)
{
    return (((size_t)w + 63) & ~(size_t)63) + 3 * VIF_X86_BORDER;
}

static inline size_t vif_x86_scratch_size(int w)
{
    return VIF_X86_STREAMS * vif_x86_stream_len(w) * sizeof(uint16_t) + 64;
}

/* Pointers to sample 0 of each stream.  The slack after each row is
 * cleared once per call, so that lanes past w compute on defined values
 * (their results are masked out; clearing keeps tools like valgrind
 * quiet and the behaviour reproducible). */
static inline void vif_x86_streams(void *scratch, int w, uint16_t *s[VIF_X86_STREAMS])
{
    const size_t len = vif_x86_stream_len(w);
    uint16_t *p = (uint16_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    for (int i = 0; i < VIF_X86_STREAMS; i++) {
        s[i] = p + i * len + VIF_X86_BORDER;
        for (size_t k = (size_t)w; k < len - VIF_X86_BORDER; k++)
            s[i][k] = 0;
    }
}

static inline void vif_x86_pad(uint16_t *row, int n, int half)
{
    if (half < n - 1) {  /* one reflection each side: mirror() without % */
        for (int k = 1; k <= half; k++) {
            row[-k] = row[k];
            row[n - 1 + k] = row[n - 1 - k];
        }
        return;
    }
    for (int k = 1; k <= half; k++) {
        row[-k] = row[qm_vif_mirror(-k, n)];
        row[n - 1 + k] = row[qm_vif_mirror(n - 1 + k, n)];
    }
}

/* The `taps` rows centred on row i, mirrored at the top and bottom. */
static inline void vif_x86_window(const uint8_t **rows, const void *base,
                                  ptrdiff_t stride, int i, int h, int taps)
{
    const int half = taps / 2;
    for (int k = 0; k < taps; k++) {
        const int y = i - half + k;
        /* mirror() (an integer division) only near the edges */
        rows[k] = (const uint8_t *)base +
                  (ptrdiff_t)(y >= 0 && y < h ? y : qm_vif_mirror(y, h)) * stride;
    }
}

/* A filter along a row on pmaddwd, for a block of outputs starting at j.
 * pmaddwd multiplies adjacent samples (2 i, 2 i + 1) of a vector loaded at
 * j + off by a weight pair and sums them into lane i.  With off even, lane
 * i lines up with the even output c = j + 2 i (taps c + off - j ... ) and
 * with the odd output c + 1 alike, so one load serves both: load L (at
 * off = first + 2 L) carries the weights (f[k], f[k + 1]) for the even
 * outputs and (f[k - 1], f[k]) for the odd ones, k = first + 2 L + half,
 * taps outside the filter weighing 0.  Even half-widths start at
 * first = -half (half + 1 loads); the odd one (3 taps) at -half - 1
 * (half + 2 loads, the first without odd-output weights, the last without
 * even ones).  A weight must be below 2^15: the only larger tap, the
 * 3-tap filter's centre (43728), is split over a second pair at the same
 * load (slot 1); the taps of the other filters (at most 26386) need no
 * second slot.  The decimation uses the even-output weights (its output j
 * is centred on sample 2 j). */
static inline int vif_x86_row_loads(int half) { return half + 1 + (half & 1); }
static inline int vif_x86_row_first(int half) { return -half - (half & 1); }

/* pmaddwd pairs per load (0, 1 or 2) for the even / odd outputs */
static inline int vif_x86_row_ne(int half, int load)
{
    if (!(half & 1))
        return 1;
    return load == half + 1 ? 0 : load == (half + 1) / 2 ? 2 : 1;
}

static inline int vif_x86_row_no(int half, int load)
{
    if (!(half & 1))
        return 1;
    return load == 0 ? 0 : load == (half + 1) / 2 ? 2 : 1;
}

/* weights of taps k and k + 1 as one or two pairs below 2^15 */
static inline void vif_x86_tap_pair(const uint16_t *f, int taps, int k, uint32_t w[2])
{
    const uint32_t a = k >= 0 && k < taps ? f[k] : 0;
    const uint32_t b = k + 1 >= 0 && k + 1 < taps ? f[k + 1] : 0;
    const uint32_t a0 = a > 0x7FFF ? a / 2 : a, b0 = b > 0x7FFF ? b / 2 : b;
    w[0] = a0 | b0 << 16;
    w[1] = (a - a0) | (b - b0) << 16;
}

typedef struct VifX86RowWeights {
    uint32_t e[QM_VIF_MAX_HALF + 2][2];  /* [load][slot], even outputs */
    uint32_t o[QM_VIF_MAX_HALF + 2][2];  /* odd outputs */
} VifX86RowWeights;

static inline void vif_x86_row_weights(int scale, VifX86RowWeights *rw)
{
    int taps;
    const uint16_t *f = qm_vif_filter(scale, &taps);
    const int half = taps / 2, first = vif_x86_row_first(half);
    for (int l = 0; l < vif_x86_row_loads(half); l++) {
        vif_x86_tap_pair(f, taps, first + 2 * l + half, rw->e[l]);
        vif_x86_tap_pair(f, taps, first + 2 * l + half - 1, rw->o[l]);
    }
}

/* A filter across rows as symmetric pairs: weight g[k] on rows k and
 * taps - 1 - k (k < half: g = f[k]), and the centre row counted twice with
 * g[half] = f[half] / 2; the weights sum to 32768. */
static inline void vif_x86_col_weights(int scale, int16_t g[QM_VIF_MAX_HALF + 1])
{
    int taps;
    const uint16_t *f = qm_vif_filter(scale, &taps);
    const int half = taps / 2;
    for (int k = 0; k < half; k++)
        g[k] = (int16_t)f[k];
    g[half] = (int16_t)(f[half] / 2);
}

/* The column weights as pmaddwd operands (one 32-bit word per lane):
 * pair[k / 2] holds g[k] and g[k + 1] (0 past the centre) for a pair of
 * rows per multiply, dup[k] holds g[k] twice (two rows already added, or
 * a row's two halves).  Returns half (the filter's taps / 2). */
static inline int vif_x86_col_words(int scale, uint32_t pair[(QM_VIF_MAX_HALF + 2) / 2],
                                    uint32_t dup[QM_VIF_MAX_HALF + 1])
{
    int taps;
    int16_t g[QM_VIF_MAX_HALF + 1];
    qm_vif_filter(scale, &taps);
    const int half = taps / 2;
    vif_x86_col_weights(scale, g);
    for (int k = 0; k <= half; k += 2)
        pair[k / 2] = (uint16_t)g[k] | (k + 1 <= half ? (uint32_t)(uint16_t)g[k + 1] << 16 : 0);
    for (int k = 0; k <= half; k++)
        dup[k] = (uint16_t)g[k] | (uint32_t)(uint16_t)g[k] << 16;
    return half;
}

#endif /* QM_VIF_X86_H */
