/* gst-qmetric: CUDA twin of cpu/cambi.c (CAMBI, libvmaf 3.2.0).
 *
 * The stages of cpu/cambi.h on the DISTORTED luma, every one a kernel, the
 * options resolved by the C code's own qm_cambi_configure():
 *
 *   cambi_preprocess_kernel  10-bit conversion (nearest-neighbour downscale
 *                            to the encode size through the C code's maps),
 *                            the 2x2 anti-dithering average fused in (each
 *                            output recomputes its right/lower neighbours'
 *                            conversions), and the largest input sample
 *                            (the C code refuses out-of-range input);
 *   cambi_max_kernel         that largest sample over the whole input plane
 *                            when the picture is downscaled;
 *   cambi_mask_kernel        flat pixels and their 7x7 counts in shared
 *                            memory, compared with the area's threshold;
 *   cambi_mode_kernel        per scale: the decimation (every other row and
 *                            column of the previous scale, or of the
 *                            preprocessed picture) and the 3x3 mode filter
 *                            in one pass; it packs each output value with
 *                            the scale's spatial mask (mask of scale 0 at
 *                            (x, y) << scale: decimations compose);
 *   cambi_cvalues_kernel     the c-values (below);
 *   cambi_select_kernel      top-k pooling: three radix-select levels on
 *   cambi_above_kernel       the float bits (11 + 10 + 10, as the C code)
 *                            find the k-th largest c-value V, then one pass
 *                            sums the values above it.
 * collect() turns the exact sums into the pooled means and the score with
 * the C code's qm_cambi_fix_mean() and qm_cambi_score().
 *
 * Exactness.  Every stage but the c-values is integer.  A c-value is the
 * same float expression as the C code's c_pixel() (int product, float
 * conversion, times the same reciprocal table, no FMA: --fmad=false), fed
 * by the same integer counts, so it is the same float.  The pooled sums are
 * exact integers in units of 2^-24 on both sides (cambi.h,
 * QM_CAMBI_FIX_ONE), and the top-k multiset is unique, so its sum does not
 * depend on how it was found: the twin is bit-exact (cuda_tol 0).
 *
 * ---- The windowed histograms (the design) ----
 *
 * The C code slides one histogram per output column down the picture
 * (hist[value][column], updated by every pixel entering or leaving a
 * window).  Its c-value at a pixel of value v reads only the counts of
 * v - 4 .. v + 4 (num_diffs = 4) in the window around the pixel.  Here:
 *
 *   - A warp owns a strip of 32 output columns and SH rows; lane l owns
 *     output column x0 + l and keeps, in shared memory, the counts of its
 *     window for a range of 64 consecutive values (hist[64][32] uint32,
 *     8 KB: lane l always touches bank l, whatever the values, so no bank
 *     conflicts).  The window starts as the (2 pad + 1)^2 box of the
 *     strip's first row; moving down a row, the row leaving and the row
 *     entering are staged in shared memory (32 + 2 pad codes each) and a
 *     ballot marks the columns where the code changes and one of the two
 *     codes is in the range; each lane applies only the marked columns of
 *     its own 2 pad + 1.  On banded (flat) content almost nothing changes
 *     from one row to the next, which is the case CAMBI is about.
 *   - 64 values cover the c-values of pixels whose value lies in a span of
 *     56 (their +-4 neighbours included).  The values of the strip's active
 *     pixels are noted first (a 1025-bit set); a pass covers the next span
 *     of 56 from the smallest value not yet done, and a strip takes as
 *     many passes as its active values need spans: one on banded content,
 *     up to 19 on adversarial content (flat blocks of unrelated values).
 *   - Pixels outside the histogram band, or not in the spatial mask, get
 *     the code "none" and are never counted, as in the C code (which is why
 *     a lookup below the band reads 0, as libvmaf's does).
 *   Summed-area tables per value were the alternative: exact and simple,
 *   but one table per band value (up to ~1000 of them, a GB at 4K) or one
 *   per tile and value, paying for every value of every tile.  The strips
 *   need 8 KB per warp and, per output pixel and pass, about
 *   (2 pad + 1)^2 / SH increments for the first row plus the changed
 *   columns of each slide.
 *
 * Cost, per scale-0 pixel (scales 1-4 add a third more pixels), for the
 * strips that have active pixels (on real video most have none: no pass):
 *   each slide of a warp stages 2 x (32 + 2 pad) codes and takes 3
 *   ballots (about 100-150 instructions per lane, i.e. per output pixel
 *   of that row), plus one shared-memory update per changed column of the
 *   lane's window; the first row of a pass costs 2 pad + 1 such slides;
 *   the c-value itself is 9 shared reads and 4 float products.
 *   1080p, window 33 (pad 16), SH = 33: per pixel about 2 slides (one for
 *     the first row's window, amortised, one for its own row), 300
 *     instructions, plus 0-4 updates on banded content and at most
 *     2 x 33 = 66 on adversarial content: about 2.7M x 300-400 = 1 G lane
 *     instructions, 30 M warp instructions when every strip is active,
 *     some 40 microseconds of issue on an H100 (a few times that latency-
 *     bound), far less on real video.
 *   4K, window 65 (pad 32), SH = 65: the same 2 slides per pixel, with
 *     updates up to 2 x 65 = 130 in the worst case: 11M x 300-450 =
 *     3-5 G lane instructions when everything is active, about 0.1-0.2 ms.
 *   Memory: 8.6 KB of shared memory per warp, no per-value buffers.
 *
 * Buffers: scratch is shared by the frames in flight (the stream runs them
 * in order); only the per-frame results (CambiOut) have one copy per slot.
 */
#include <stdlib.h>
#include <string.h>

#include "common.cuh"

extern "C" {
#include "cambi.h"
}

#define ND 4                    /* num_diffs: the C code's max_log_contrast 2 */
#define NROWS 64                /* values per histogram pass */
#define SPAN (NROWS - 2 * ND)   /* pixel values a pass computes */
#define MAX_PAD 32              /* window <= 65 (window^2 < 4226) */
#define SEGW_MAX (32 + 2 * MAX_PAD)
#define SEG_WORDS ((SEGW_MAX + 31) / 32)
#define BM_WORDS ((QM_CAMBI_MAX_VALUE + 1 + 31) / 32)
#define CODE_NONE 0xFFFFu
#define UNMASKED 0x8000u        /* packed pixel: outside the spatial mask */
#define VALUE_BITS 0x7FFu       /* packed pixel: the value (<= 1024) */
#define CV_WARPS 4              /* strips per block of the c-value kernel */
#define SEL_NT 256              /* threads of the pooling kernels */
#define SEL_BINS 2048           /* first radix level: bits 30..20 */
#define FULL 0xffffffffu

static_assert(SEGW_MAX <= 32 * SEG_WORDS, "staged rows fit the ballots");
static_assert(SEL_BINS % SEL_NT == 0 && 1024 % SEL_NT == 0,
              "the scan gives each thread whole bins");
static_assert(QM_CAMBI_MAX_VALUE <= (int)VALUE_BITS, "values fit the packing");

/* The results of one frame. */
typedef struct CambiOut {
    unsigned long long nonzero[QM_CAMBI_NUM_SCALES]; /* c-values > 0 */
    unsigned long long sum[QM_CAMBI_NUM_SCALES];     /* all, units of 2^-24 */
    unsigned long long above[QM_CAMBI_NUM_SCALES];   /* sum of those > V */
    unsigned long long n_above[QM_CAMBI_NUM_SCALES]; /* how many */
    unsigned kth[QM_CAMBI_NUM_SCALES];               /* bits of V */
    unsigned maxv;                                   /* largest input sample */
} CambiOut;

/* Radix-select state between the levels of one scale. */
typedef struct CambiSel {
    unsigned long long need;  /* values still to take at the next level */
    unsigned prefix;          /* high bits of V found so far */
} CambiSel;

/* ---- stage 1: preprocessing ---- */

/* cpu/cambi.c CONVERT_ROW: to 10 bits.  Valid input gives at most 1024;
 * out-of-range samples (the frame is refused in collect()) are clamped so
 * that later stages never index past their tables. */
__device__ __forceinline__ unsigned cambi_conv(int raw, int up, int down,
                                               unsigned rnd)
{
    const unsigned v = (((unsigned)raw << up) + rnd) >> down;
    return v < QM_CAMBI_MAX_VALUE ? v : QM_CAMBI_MAX_VALUE;
}

/* largest of a block's values, into *out */
__device__ __forceinline__ void cambi_block_max(unsigned v, unsigned *out)
{
    __shared__ unsigned wmax[32];
    for (int o = 16; o > 0; o >>= 1)
        v = max(v, __shfl_down_sync(FULL, v, o));
    const int t = threadIdx.x + threadIdx.y * blockDim.x;
    const int lane = t & 31, warp = t >> 5;
    const int nw = (blockDim.x * blockDim.y + 31) >> 5;
    if (lane == 0)
        wmax[warp] = v;
    __syncthreads();
    if (t == 0) {
        unsigned m = 0;
        for (int i = 0; i < nw; i++)
            m = max(m, wmax[i]);
        if (m)
            atomicMax(out, m);
    }
}

/* One output sample per thread (32 x 8 blocks); the anti-dithering mean
 * reads the converted right, lower and lower-right neighbours, as
 * cpu/cambi.c anti_dither() does in its forward in-place pass. */
template <typename T>
__global__ void __launch_bounds__(256)
cambi_preprocess_kernel(QmGpuPlane src, int shift, const int *__restrict__ xmap,
                        const int *__restrict__ ymap, uint16_t *__restrict__ img,
                        int w, int h, int up, int down, int anti_dither,
                        int track_max, unsigned *maxv)
{
    const int x = blockIdx.x * 32 + threadIdx.x;
    const int y = blockIdx.y * 8 + threadIdx.y;
    const unsigned rnd = down ? 1u << (down - 1) : 0;
    unsigned mx = 0;
    if (x < w && y < h) {
        const int sx0 = xmap ? __ldg(xmap + x) : x;
        const int sy0 = ymap ? __ldg(ymap + y) : y;
        const int raw = qm_load<T>(src, shift, sx0, sy0);
        mx = (unsigned)raw;
        const unsigned c00 = cambi_conv(raw, up, down, rnd);
        unsigned out = c00;
        if (anti_dither) {
            const bool right = x + 1 < w, below = y + 1 < h;
            const int sx1 = right ? (xmap ? __ldg(xmap + x + 1) : x + 1) : sx0;
            const int sy1 = below ? (ymap ? __ldg(ymap + y + 1) : y + 1) : sy0;
            if (below) {
                const unsigned c01 =
                    cambi_conv(qm_load<T>(src, shift, sx0, sy1), up, down, rnd);
                if (right) {
                    const unsigned c10 =
                        cambi_conv(qm_load<T>(src, shift, sx1, sy0), up, down, rnd);
                    const unsigned c11 =
                        cambi_conv(qm_load<T>(src, shift, sx1, sy1), up, down, rnd);
                    out = (c00 + c10 + c01 + c11) >> 2;
                } else {
                    out = (c00 + c01) >> 1;
                }
            } else if (right) {
                const unsigned c10 =
                    cambi_conv(qm_load<T>(src, shift, sx1, sy0), up, down, rnd);
                out = (c00 + c10) >> 1;
            }
        }
        img[(size_t)y * w + x] = (uint16_t)out;
    }
    if (track_max)  /* uniform: a kernel argument */
        cambi_block_max(mx, maxv);
}

/* The largest sample of the whole input plane (downscaled input: the
 * preprocessing reads only some of them, the C code checks all). */
template <typename T>
__global__ void __launch_bounds__(256)
cambi_max_kernel(QmGpuPlane src, int shift, unsigned *maxv)
{
    const int x = blockIdx.x * 32 + threadIdx.x;
    unsigned mx = 0;
    if (x < src.w)
        for (int y = blockIdx.y * 8 + threadIdx.y; y < src.h; y += gridDim.y * 8)
            mx = max(mx, (unsigned)qm_load<T>(src, shift, x, y));
    cambi_block_max(mx, maxv);
}

/* ---- stage 2: spatial mask ---- */

#define MT_X 32
#define MT_Y 16
#define MR 3  /* CAMBI_MASK_BOX / 2 */

/* Tiles of MT_X x MT_Y outputs, 256 threads.  cpu/cambi.c flat_row(): a
 * pixel is flat when it equals its right and lower neighbours, a missing
 * neighbour counting as equal; outside the picture nothing is flat. */
__global__ void __launch_bounds__(256)
cambi_mask_kernel(const uint16_t *__restrict__ img, int w, int h,
                  unsigned mask_index, uint8_t *__restrict__ mask)
{
    __shared__ uint8_t flat[MT_Y + 2 * MR][MT_X + 2 * MR];
    __shared__ uint8_t col[MT_Y][MT_X + 2 * MR];
    const int x0 = blockIdx.x * MT_X, y0 = blockIdx.y * MT_Y;
    const int tid = threadIdx.x;
    const int FW = MT_X + 2 * MR;
    for (int i = tid; i < (MT_Y + 2 * MR) * FW; i += blockDim.x) {
        const int r = i / FW, cc = i - r * FW;
        const int x = x0 - MR + cc, y = y0 - MR + r;
        uint8_t f = 0;
        if (x >= 0 && x < w && y >= 0 && y < h) {
            const uint16_t *p = img + (size_t)y * w + x;
            const uint16_t a = p[0];
            const bool eq_r = x + 1 < w ? a == p[1] : true;
            const bool eq_d = y + 1 < h ? a == p[w] : true;
            f = eq_r && eq_d;
        }
        flat[r][cc] = f;
    }
    __syncthreads();
    for (int i = tid; i < MT_Y * FW; i += blockDim.x) {
        const int r = i / FW, cc = i - r * FW;
        unsigned s = 0;
#pragma unroll
        for (int k = 0; k < 2 * MR + 1; k++)
            s += flat[r + k][cc];
        col[r][cc] = (uint8_t)s;
    }
    __syncthreads();
    for (int i = tid; i < MT_Y * MT_X; i += blockDim.x) {
        const int r = i / MT_X, cc = i - r * MT_X;
        const int x = x0 + cc, y = y0 + r;
        if (x >= w || y >= h)
            continue;
        unsigned s = 0;
#pragma unroll
        for (int k = 0; k < 2 * MR + 1; k++)
            s += col[r][cc + k];
        mask[(size_t)y * w + x] = s > mask_index;
    }
}

/* ---- stages 3 and 4: decimation and mode filter ---- */

/* cpu/cambi.c mode3(): the value two of the three share, else the least */
__device__ __forceinline__ unsigned cambi_mode3(unsigned a, unsigned b,
                                                unsigned c)
{
    unsigned m = min(min(a, b), c);
    m = b == c ? b : m;
    return (a == b || a == c) ? a : m;
}

#define MO_X 32
#define MO_Y 8

/*
 * D(x, y) = src[y * step][x * step] (the decimated picture; values only),
 * dst = the 3x3 mode filter of D (cpu/cambi.c qm_cambi_filter_mode(): the
 * first and last rows copied, the horizontal modes keeping the first and
 * last columns), packed with UNMASKED where mask0 at (x, y) << mshift is 0.
 */
__global__ void __launch_bounds__(MO_X * MO_Y)
cambi_mode_kernel(const uint16_t *__restrict__ src, int src_w, int step,
                  uint16_t *__restrict__ dst, int w, int h,
                  const uint8_t *__restrict__ mask0, int mask_w, int mshift)
{
    __shared__ uint16_t t[MO_Y + 2][MO_X + 2];
    const int x0 = blockIdx.x * MO_X, y0 = blockIdx.y * MO_Y;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * MO_X + tx;
    for (int i = tid; i < (MO_Y + 2) * (MO_X + 2); i += MO_X * MO_Y) {
        const int r = i / (MO_X + 2), cc = i - r * (MO_X + 2);
        const int x = x0 - 1 + cc, y = y0 - 1 + r;
        uint16_t v = 0;  /* never read: borders copy instead */
        if (x >= 0 && x < w && y >= 0 && y < h)
            v = src[(size_t)y * step * src_w + (size_t)x * step] & VALUE_BITS;
        t[r][cc] = v;
    }
    __syncthreads();
    const int x = x0 + tx, y = y0 + ty;
    if (x >= w || y >= h)
        return;
    unsigned f;
    if (y == 0 || y == h - 1) {
        f = t[ty + 1][tx + 1];
    } else {
        unsigned hm[3];
#pragma unroll
        for (int k = 0; k < 3; k++) {
            const uint16_t *r = t[ty + k];
            hm[k] = (x == 0 || x == w - 1) ? r[tx + 1]
                                           : cambi_mode3(r[tx], r[tx + 1], r[tx + 2]);
        }
        f = cambi_mode3(hm[0], hm[1], hm[2]);
    }
    const uint8_t m = mask0[((size_t)y << mshift) * mask_w + ((size_t)x << mshift)];
    dst[(size_t)y * w + x] = (uint16_t)(f | (m ? 0u : UNMASKED));
}

/* ---- stage 5: c-values ---- */

typedef struct CvArgs {
    const uint16_t *f;        /* packed picture of the scale */
    float *c;                 /* c-values out */
    const uint8_t *active;    /* [1025]: bit d set when step d + 1 counts */
    const float *recip;       /* [window^2 + 1] */
    unsigned long long *nonzero, *sum;
    int w, h, pad;
    int band_lo, band_n;
    int weight[ND];
    int sh, strips_x, n_strips;
} CvArgs;

typedef struct CvWarp {
    uint32_t hist[NROWS][32];   /* [value - base][lane] */
    uint16_t seg_out[SEGW_MAX], seg_in[SEGW_MAX];
    uint32_t present[BM_WORDS]; /* values of the strip's active pixels */
} CvWarp;

/* counting code of a packed pixel: its value when it is in the mask and in
 * the band, else CODE_NONE */
__device__ __forceinline__ unsigned cambi_code(unsigned p, int band_lo,
                                               int band_n)
{
    const unsigned v = p & VALUE_BITS;
    return !(p & UNMASKED) && (unsigned)((int)v - band_lo) < (unsigned)band_n
        ? v : CODE_NONE;
}

/* bits a .. b (0 <= a <= b <= 31) */
__device__ __forceinline__ uint32_t bit_range(int a, int b)
{
    return (FULL >> (31 - b)) & (FULL << a);
}

/* The smallest value >= from in the set, or -1 (warp-uniform). */
__device__ __forceinline__ int cambi_next_value(const uint32_t *present,
                                                int from, int lane)
{
    for (int w0 = 0; w0 < BM_WORDS; w0 += 32) {
        const int wi = w0 + lane;
        uint32_t bits = 0;
        if (wi < BM_WORDS) {
            const int lo = wi * 32;
            bits = present[wi];
            if (lo + 31 < from)
                bits = 0;
            else if (lo < from)
                bits &= FULL << (from - lo);
        }
        const unsigned any = __ballot_sync(FULL, bits != 0);
        if (any) {
            const int src = __ffs(any) - 1;
            const uint32_t b = __shfl_sync(FULL, bits, src);
            return (w0 + src) * 32 + __ffs(b) - 1;
        }
    }
    return -1;
}

/*
 * Move lane's window: the pixels of row `out` leave it, those of row `in`
 * enter (-1: none).  Only codes in [base, base + NROWS) are counted.  The
 * rows are staged for columns x0 - pad .. x0 + 31 + pad; lane's window is
 * staged columns lane .. lane + 2 pad.
 */
__device__ __forceinline__ void cambi_slide(const CvArgs &a, CvWarp &sw,
                                            int x0, int out, int in, int base,
                                            int lane)
{
    const int segw = 32 + 2 * a.pad;
    for (int i = lane; i < segw; i += 32) {
        const int x = x0 - a.pad + i;
        const bool inside = x >= 0 && x < a.w;
        sw.seg_out[i] = (uint16_t)(out >= 0 && inside
            ? cambi_code(a.f[(size_t)out * a.w + x], a.band_lo, a.band_n) : CODE_NONE);
        sw.seg_in[i] = (uint16_t)(in >= 0 && inside
            ? cambi_code(a.f[(size_t)in * a.w + x], a.band_lo, a.band_n) : CODE_NONE);
    }
    __syncwarp();
    /* columns where something counted changes */
    uint32_t changed[SEG_WORDS];
#pragma unroll
    for (int k = 0; k < SEG_WORDS; k++) {
        const int i = k * 32 + lane;
        bool f = false;
        if (i < segw) {
            const unsigned co = sw.seg_out[i], ci = sw.seg_in[i];
            const bool ro = (unsigned)((int)co - base) < NROWS;
            const bool ri = (unsigned)((int)ci - base) < NROWS;
            f = co != ci && (ro || ri);
        }
        changed[k] = __ballot_sync(FULL, f);
    }
    const int first = lane, last = lane + 2 * a.pad;
#pragma unroll
    for (int k = 0; k < SEG_WORDS; k++) {
        const int lo = max(first, k * 32), hi = min(last, k * 32 + 31);
        if (lo > hi)
            continue;
        uint32_t bits = changed[k] & bit_range(lo - k * 32, hi - k * 32);
        while (bits) {
            const int i = k * 32 + __ffs(bits) - 1;
            bits &= bits - 1;
            const unsigned ro = (unsigned)((int)sw.seg_out[i] - base);
            const unsigned ri = (unsigned)((int)sw.seg_in[i] - base);
            if (ro < NROWS)
                sw.hist[ro][lane]--;
            if (ri < NROWS)
                sw.hist[ri][lane]++;
        }
    }
    __syncwarp();  /* the staged rows are reused */
}

/* cpu/cambi.c c_pixel(): row0 is the value's histogram row */
__device__ __forceinline__ float cambi_c_pixel(const CvArgs &a, const CvWarp &sw,
                                               int row0, unsigned act, int lane)
{
    const int p0 = (int)sw.hist[row0][lane];
    float cv = 0.0f;
#pragma unroll
    for (int d = 0; d < ND; d++) {
        const int up = (int)sw.hist[row0 + d + 1][lane];
        const int dn = (int)sw.hist[row0 - d - 1][lane];
        const int q = up > dn ? up : dn;
        float val = (float)(a.weight[d] * p0 * q) * __ldg(a.recip + p0 + q);
        val = act >> d & 1 ? val : 0.0f;
        cv = val > cv ? val : cv;
    }
    return cv;
}

/* One warp per strip of 32 columns x a.sh rows (see the top comment). */
__global__ void __launch_bounds__(CV_WARPS * 32)
cambi_cvalues_kernel(CvArgs a)
{
    __shared__ CvWarp smem[CV_WARPS];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int strip = blockIdx.x * CV_WARPS + warp;
    if (strip >= a.n_strips)
        return;  /* the whole warp: no block-wide synchronisation below */
    CvWarp &sw = smem[warp];
    const int x0 = (strip % a.strips_x) * 32;
    const int y0 = (strip / a.strips_x) * a.sh;
    const int y1 = min(y0 + a.sh, a.h);
    const int x = x0 + lane;
    const bool own = x < a.w;

    /* the values of the strip's active pixels; the others' c-values are 0 */
    for (int i = lane; i < BM_WORDS; i += 32)
        sw.present[i] = 0;
    __syncwarp();
    for (int y = y0; y < y1; y++) {
        if (!own)
            continue;
        const unsigned p = a.f[(size_t)y * a.w + x];
        const unsigned v = p & VALUE_BITS;
        if (!(p & UNMASKED) && __ldg(a.active + v))
            atomicOr(&sw.present[v >> 5], 1u << (v & 31));
        else
            a.c[(size_t)y * a.w + x] = 0.0f;
    }
    __syncwarp();

    unsigned nonzero = 0;
    unsigned long long sum = 0;
    for (int lo = cambi_next_value(sw.present, 0, lane); lo >= 0;
         lo = cambi_next_value(sw.present, lo + SPAN, lane)) {
        /* this pass: pixels of values lo .. lo + SPAN - 1, counts of
         * values base .. base + NROWS - 1 */
        const int base = lo - ND;
        for (int r = 0; r < NROWS; r++)
            sw.hist[r][lane] = 0;
        const int r0 = max(0, y0 - a.pad), r1 = min(a.h - 1, y0 + a.pad);
        for (int r = r0; r <= r1; r++)
            cambi_slide(a, sw, x0, -1, r, base, lane);
        for (int y = y0; y < y1; y++) {
            if (y > y0) {
                const int out = y - a.pad - 1, in = y + a.pad;
                if (out >= 0 || in < a.h)
                    cambi_slide(a, sw, x0, out, in < a.h ? in : -1, base, lane);
            }
            if (!own)
                continue;
            const unsigned p = a.f[(size_t)y * a.w + x];
            const int v = (int)(p & VALUE_BITS);
            if ((p & UNMASKED) || v < lo || v >= lo + SPAN)
                continue;
            const unsigned act = __ldg(a.active + v);
            if (!act)
                continue;
            const float cv = cambi_c_pixel(a, sw, v - base, act, lane);
            a.c[(size_t)y * a.w + x] = cv;
            nonzero += cv > 0.0f;
            /* exact: cv is 0 or a multiple of 2^-24 below 2^14 (cambi.h) */
            sum += (unsigned long long)((double)cv * QM_CAMBI_FIX_ONE);
        }
    }
    /* integer sums: exact in any order */
    for (int o = 16; o > 0; o >>= 1) {
        nonzero += __shfl_down_sync(FULL, nonzero, o);
        sum += __shfl_down_sync(FULL, sum, o);
    }
    if (lane == 0 && nonzero) {
        atomicAdd(a.nonzero, (unsigned long long)nonzero);
        atomicAdd(a.sum, sum);
    }
}

/* ---- stage 6: top-k pooling ---- */

__device__ __forceinline__ unsigned cambi_bits(float f)
{
    return (unsigned)__float_as_int(f);
}

/* Exclusive suffix sum over the block's threads: the sum of v over the
 * threads after this one (SEL_NT threads). */
__device__ unsigned long long cambi_suffix_excl(unsigned long long v)
{
    __shared__ unsigned long long wsum[SEL_NT / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned long long s = v;  /* inclusive suffix within the warp */
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned long long t = __shfl_down_sync(FULL, s, o);
        if (lane + o < 32)
            s += t;
    }
    if (lane == 0)
        wsum[warp] = s;
    __syncthreads();
    unsigned long long later = 0;
    for (int k = warp + 1; k < SEL_NT / 32; k++)
        later += wsum[k];
    __syncthreads();
    return s - v + later;
}

/*
 * One radix level of the k-th largest c-value of a scale (cpu/cambi.c
 * qm_cambi_pool_topk, which it mirrors: level 0 bins bits 30..20 of every
 * value, level 1 bits 19..10 of those sharing the chosen bits 30..20, level
 * 2 bits 9..0 of those sharing bits 30..10).  Blocks count into ghist; the
 * last block picks the bin t holding the need-th largest, exactly as the C
 * code's loop (the largest t whose values from t up number at least need;
 * 0 if none above 0 does) and leaves the state for the next level.  Zeros
 * are not counted: they are only in bin 0 of level 0, never chosen there
 * (more than k values are not 0), and no other level sees them.  Nothing
 * to do when at most k values are not 0: pooling takes them all.
 */
__global__ void __launch_bounds__(SEL_NT)
cambi_select_kernel(const float *__restrict__ c, size_t n, int level,
                    unsigned long long k, CambiOut *out, int scale,
                    CambiSel *sel, unsigned *ghist, unsigned *done)
{
    __shared__ unsigned hist[SEL_BINS];
    __shared__ bool last;
    __shared__ int chosen;
    if (out->nonzero[scale] <= k)
        return;
    const int tid = threadIdx.x, lane = tid & 31;
    const int nb = level == 0 ? SEL_BINS : 1024;
    const int shift = level == 0 ? 20 : level == 1 ? 10 : 0;
    const unsigned prefix = level == 0 ? 0 : sel->prefix;
    for (int b = tid; b < nb; b += SEL_NT)
        hist[b] = 0;
    __syncthreads();
    /* whole warps iterate together (__match_any_sync): runs of equal bins
     * are frequent, one atomic per distinct bin of a warp */
    for (size_t i0 = (size_t)blockIdx.x * SEL_NT; i0 < n;
         i0 += (size_t)gridDim.x * SEL_NT) {
        const size_t i = i0 + tid;
        unsigned bin = 0xffffffffu;
        if (i < n) {
            const unsigned b = cambi_bits(c[i]);
            if (level == 0 ? b != 0 : (b >> (shift + 10)) == prefix)
                bin = (b >> shift) & (unsigned)(nb - 1);
        }
        const unsigned peers = __match_any_sync(FULL, bin);
        if (bin != 0xffffffffu && lane == __ffs(peers) - 1)
            atomicAdd(&hist[bin], (unsigned)__popc(peers));
    }
    __syncthreads();
    for (int b = tid; b < nb; b += SEL_NT)
        if (hist[b])
            atomicAdd(&ghist[b], hist[b]);
    __threadfence();
    __syncthreads();
    if (tid == 0)
        last = atomicAdd(done, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last)
        return;

    /* the last block: every block's counts are in ghist */
    for (int b = tid; b < nb; b += SEL_NT) {
        hist[b] = __ldcg(ghist + b);
        ghist[b] = 0;  /* ready for the next level */
    }
    if (tid == 0) {
        chosen = 0;
        *done = 0;
    }
    __syncthreads();
    const unsigned long long need = level == 0 ? k : sel->need;
    const int per = nb / SEL_NT;
    unsigned long long local = 0;
    for (int j = 0; j < per; j++)
        local += hist[tid * per + j];
    const unsigned long long suf = cambi_suffix_excl(local);
    /* the largest bin b > 0 of this thread with count(b and up) >= need */
    int cand = 0;
    unsigned long long cand_above = 0, run = suf;
    for (int j = per - 1; j >= 0; j--) {
        const int b = tid * per + j;
        if (b == 0)
            break;
        if (run + hist[b] >= need) {
            cand = b;
            cand_above = run;
            break;
        }
        run += hist[b];
    }
    if (cand)
        atomicMax(&chosen, cand);
    __syncthreads();
    const int t = chosen;
    /* t == 0: the C loop stops at bin 0, having taken every bin above */
    const bool owner = t ? cand == t : tid == 0;
    if (owner) {
        const unsigned long long above = t ? cand_above : suf + local - hist[0];
        const unsigned p = level == 0 ? (unsigned)t : (prefix << 10) | (unsigned)t;
        sel->need = need - above;
        sel->prefix = p;
        if (level == 2)
            out->kth[scale] = p;
    }
}

/* The sum and number of the c-values above V, the k-th largest. */
__global__ void __launch_bounds__(SEL_NT)
cambi_above_kernel(const float *__restrict__ c, size_t n,
                   unsigned long long k, CambiOut *out, int scale)
{
    if (out->nonzero[scale] <= k)
        return;
    const unsigned kth = out->kth[scale];
    unsigned long long sum = 0, cnt = 0;
    for (size_t i = (size_t)blockIdx.x * SEL_NT + threadIdx.x; i < n;
         i += (size_t)gridDim.x * SEL_NT) {
        const float v = c[i];
        if (cambi_bits(v) > kth) {
            sum += (unsigned long long)((double)v * QM_CAMBI_FIX_ONE);
            cnt++;
        }
    }
    sum = qm_block_sum(sum);
    __syncthreads();  /* qm_block_sum's shared words are reused */
    cnt = qm_block_sum(cnt);
    if (threadIdx.x == 0 && cnt) {
        atomicAdd(&out->above[scale], sum);
        atomicAdd(&out->n_above[scale], cnt);
    }
}

/* ---- host side ---- */

typedef struct CambiGpu {
    QmCambiConfig cf;  /* from the C code; not moved once configured */
    int up, down, track_max;
    int ws[QM_CAMBI_NUM_SCALES], hs[QM_CAMBI_NUM_SCALES];
    int sh[QM_CAMBI_NUM_SCALES], strips_x[QM_CAMBI_NUM_SCALES];
    int n_strips[QM_CAMBI_NUM_SCALES];
    unsigned sel_blocks[QM_CAMBI_NUM_SCALES];
    uint64_t k[QM_CAMBI_NUM_SCALES];
    int *d_xmap, *d_ymap;
    uint16_t *d_img;       /* preprocessed, w x h */
    uint8_t *d_mask;       /* spatial mask of scale 0, w x h */
    uint16_t *d_f[2];      /* packed pictures of the scales, ping-pong */
    float *d_c;            /* c-values of a scale */
    uint8_t *d_active;
    float *d_recip;
    unsigned *d_hist, *d_done;
    CambiSel *d_sel;
    CambiOut *d_out, *h_out;  /* [slot] */
    /* per slot: the work after preprocessing (mask, every scale's kernels,
     * the copy of the results), captured once as a graph.  It reads only
     * the element's own buffers, so one capture serves every frame of the
     * slot, and one graph launch replaces some thirty kernel launches: at
     * 1080p their host cost (about 130 us a frame on the GPU machine's
     * CPU) bounded the whole engine's frame rate, not the GPU. */
    cudaGraphExec_t *exec;
    unsigned n_slots;
} CambiGpu;

static void cambi_gpu_close(void *priv)
{
    CambiGpu *s = (CambiGpu *)priv;
    for (unsigned i = 0; s->exec && i < s->n_slots; i++)
        if (s->exec[i])
            cudaGraphExecDestroy(s->exec[i]);
    free(s->exec);
    cudaFree(s->d_xmap);
    cudaFree(s->d_ymap);
    cudaFree(s->d_img);
    cudaFree(s->d_mask);
    cudaFree(s->d_f[0]);
    cudaFree(s->d_f[1]);
    cudaFree(s->d_c);
    cudaFree(s->d_active);
    cudaFree(s->d_recip);
    cudaFree(s->d_hist);
    cudaFree(s->d_done);
    cudaFree(s->d_sel);
    cudaFree(s->d_out);
    cudaFreeHost(s->h_out);
    qm_cambi_config_free(&s->cf);
    memset(s, 0, sizeof(*s));
}

static int cambi_gpu_alloc(CambiGpu *s, unsigned n_slots, cudaStream_t cs)
{
    const QmCambiConfig *cf = &s->cf;
    const size_t npix = (size_t)cf->w * cf->h;
    const size_t n0 = (size_t)s->ws[0] * s->hs[0];
    const int window = cf->par.window;
    if (cf->xmap) {
        QM_CU_TRY(cudaMalloc(&s->d_xmap, (size_t)cf->w * sizeof(int)));
        QM_CU_TRY(cudaMalloc(&s->d_ymap, (size_t)cf->h * sizeof(int)));
        QM_CU_TRY(cudaMemcpyAsync(s->d_xmap, cf->xmap, (size_t)cf->w * sizeof(int),
                                  cudaMemcpyHostToDevice, cs));
        QM_CU_TRY(cudaMemcpyAsync(s->d_ymap, cf->ymap, (size_t)cf->h * sizeof(int),
                                  cudaMemcpyHostToDevice, cs));
    }
    QM_CU_TRY(cudaMalloc(&s->d_img, npix * sizeof(uint16_t)));
    QM_CU_TRY(cudaMalloc(&s->d_mask, npix));
    QM_CU_TRY(cudaMalloc(&s->d_f[0], n0 * sizeof(uint16_t)));
    QM_CU_TRY(cudaMalloc(&s->d_f[1], n0 * sizeof(uint16_t)));
    QM_CU_TRY(cudaMalloc(&s->d_c, n0 * sizeof(float)));

    uint8_t active[QM_CAMBI_MAX_VALUE + 1];
    for (int v = 0; v <= QM_CAMBI_MAX_VALUE; v++)
        active[v] = (uint8_t)cf->active[v];  /* ND = 4 bits */
    QM_CU_TRY(cudaMalloc(&s->d_active, sizeof(active)));
    QM_CU_TRY(cudaMemcpyAsync(s->d_active, active, sizeof(active),
                              cudaMemcpyHostToDevice, cs));  /* staged at once */
    const size_t nrecip = (size_t)window * window + 1;
    QM_CU_TRY(cudaMalloc(&s->d_recip, nrecip * sizeof(float)));
    QM_CU_TRY(cudaMemcpyAsync(s->d_recip, cf->recip, nrecip * sizeof(float),
                              cudaMemcpyHostToDevice, cs));

    QM_CU_TRY(cudaMalloc(&s->d_hist, SEL_BINS * sizeof(unsigned)));
    QM_CU_TRY(cudaMalloc(&s->d_done, sizeof(unsigned)));
    QM_CU_TRY(cudaMalloc(&s->d_sel, sizeof(CambiSel)));
    QM_CU_TRY(cudaMemsetAsync(s->d_hist, 0, SEL_BINS * sizeof(unsigned), cs));
    QM_CU_TRY(cudaMemsetAsync(s->d_done, 0, sizeof(unsigned), cs));
    QM_CU_TRY(cudaMemsetAsync(s->d_sel, 0, sizeof(CambiSel), cs));
    QM_CU_TRY(cudaMalloc(&s->d_out, n_slots * sizeof(CambiOut)));
    QM_CU_TRY(cudaMallocHost(&s->h_out, n_slots * sizeof(CambiOut)));
    s->exec = (cudaGraphExec_t *)calloc(n_slots, sizeof(*s->exec));
    if (!s->exec)
        return QM_ENOMEM;
    s->n_slots = n_slots;
    /* the host tables (xmap, recip) stay until close(); the stream orders
     * these copies before any frame's kernels */
    return 0;
}

static int cambi_gpu_init(void *priv, const QmMetricConfig *cfg,
                          unsigned n_slots, QmStream st)
{
    CambiGpu *s = (CambiGpu *)priv;
    memset(s, 0, sizeof(*s));
    int err = qm_cambi_configure(&s->cf, cfg);  /* the C code's checks */
    if (err)
        return err;
    const QmCambiConfig *cf = &s->cf;
    const int pad = cf->par.window >> 1;
    if (cf->par.num_diffs != ND || pad > MAX_PAD) {
        /* not reachable: max_log_contrast is fixed, window^2 < 4226 */
        qm_cambi_config_free(&s->cf);
        return QM_ENOTSUP;
    }
    s->up = cf->bpc < 10 ? 10 - cf->bpc : 0;
    s->down = cf->bpc > 10 ? cf->bpc - 10 : 0;
    s->track_max = cf->bpc > 8 && cf->bpc < 16;  /* the C code's check */

    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) !=
            cudaSuccess || sms < 1)
        sms = 1;
    for (int sc = 0; sc < QM_CAMBI_NUM_SCALES; sc++) {
        const int w = qm_cambi_halve(cf->w, sc + cf->hrs);
        const int h = qm_cambi_halve(cf->h, sc + cf->hrs);
        s->ws[sc] = w;
        s->hs[sc] = h;
        s->k[sc] = qm_cambi_topk_count((uint64_t)w * h, cf->topk);
        /* strips: about 16 warps per SM, but at least a window of rows
         * each (the first row's window costs (2 pad + 1)^2 per lane) */
        const int sx = (w + 31) / 32;
        const int want = 16 * sms;
        const int ry = want / sx > 1 ? want / sx : 1;
        int sh = (h + ry - 1) / ry;
        sh = sh < cf->par.window ? cf->par.window : sh;
        sh = sh > h ? h : sh;
        s->sh[sc] = sh;
        s->strips_x[sc] = sx;
        s->n_strips[sc] = sx * ((h + sh - 1) / sh);
        const size_t n = (size_t)w * h;
        size_t blocks = (n + SEL_NT * 16 - 1) / (SEL_NT * 16);
        blocks = blocks < 1 ? 1 : blocks > (size_t)(4 * sms) ? (size_t)(4 * sms) : blocks;
        s->sel_blocks[sc] = (unsigned)blocks;
    }
    err = cambi_gpu_alloc(s, n_slots ? n_slots : 1, (cudaStream_t)st);
    if (err)
        cambi_gpu_close(s);
    return err;
}

template <typename T>
static void cambi_launch_preprocess(const CambiGpu *s, const QmGpuPlane &lum,
                                    int shift, CambiOut *o, cudaStream_t cs)
{
    const QmCambiConfig *cf = &s->cf;
    const dim3 blk(32, 8), grid((cf->w + 31) / 32, (cf->h + 7) / 8);
    /* without a downscale every input sample is read here */
    cambi_preprocess_kernel<T><<<grid, blk, 0, cs>>>(
        lum, shift, s->d_xmap, s->d_ymap, s->d_img, cf->w, cf->h, s->up,
        s->down, cf->anti_dither, s->track_max && !cf->xmap, &o->maxv);
    if (s->track_max && cf->xmap) {
        const int gy = (lum.h + 7) / 8;
        const dim3 mgrid((lum.w + 31) / 32, gy < 1024 ? gy : 1024);
        cambi_max_kernel<T><<<mgrid, blk, 0, cs>>>(lum, shift, &o->maxv);
    }
}

/* Everything after preprocessing, for the frame of one slot: the spatial
 * mask, each scale's decimation and mode filter, c-values and pooling,
 * then the copy of the results to the slot's pinned memory. */
static void cambi_launch_scales(const CambiGpu *s, CambiOut *o, CambiOut *h_out,
                                cudaStream_t cs)
{
    const QmCambiConfig *cf = &s->cf;
    {
        const dim3 grid((cf->w + MT_X - 1) / MT_X, (cf->h + MT_Y - 1) / MT_Y);
        cambi_mask_kernel<<<grid, 256, 0, cs>>>(s->d_img, cf->w, cf->h,
                                                cf->mask_index, s->d_mask);
    }

    for (int sc = 0; sc < QM_CAMBI_NUM_SCALES; sc++) {
        const int w = s->ws[sc], h = s->hs[sc];
        /* scale 0 reads the preprocessed picture (decimated first with the
         * speed-up), the others decimate the previous scale's */
        const uint16_t *src = sc == 0 ? s->d_img : s->d_f[(sc - 1) & 1];
        const int src_w = sc == 0 ? cf->w : s->ws[sc - 1];
        const int step = sc > 0 || cf->hrs ? 2 : 1;
        uint16_t *dst = s->d_f[sc & 1];
        const dim3 mgrid((w + MO_X - 1) / MO_X, (h + MO_Y - 1) / MO_Y);
        cambi_mode_kernel<<<mgrid, dim3(MO_X, MO_Y), 0, cs>>>(
            src, src_w, step, dst, w, h, s->d_mask, cf->w, sc + cf->hrs);

        CvArgs a;
        memset(&a, 0, sizeof(a));
        a.f = dst;
        a.c = s->d_c;
        a.active = s->d_active;
        a.recip = s->d_recip;
        a.nonzero = &o->nonzero[sc];
        a.sum = &o->sum[sc];
        a.w = w;
        a.h = h;
        a.pad = cf->par.window >> 1;
        a.band_lo = cf->par.band_lo;
        a.band_n = cf->par.band_n;
        for (int d = 0; d < ND; d++)
            a.weight[d] = cf->par.weight[d];
        a.sh = s->sh[sc];
        a.strips_x = s->strips_x[sc];
        a.n_strips = s->n_strips[sc];
        cambi_cvalues_kernel<<<(a.n_strips + CV_WARPS - 1) / CV_WARPS,
                               CV_WARPS * 32, 0, cs>>>(a);

        const size_t n = (size_t)w * h;
        for (int level = 0; level < 3; level++)
            cambi_select_kernel<<<s->sel_blocks[sc], SEL_NT, 0, cs>>>(
                s->d_c, n, level, s->k[sc], o, sc, s->d_sel, s->d_hist,
                s->d_done);
        cambi_above_kernel<<<s->sel_blocks[sc], SEL_NT, 0, cs>>>(
            s->d_c, n, s->k[sc], o, sc);
    }
    cudaMemcpyAsync(h_out, o, sizeof(*o), cudaMemcpyDeviceToHost, cs);
}

static int cambi_gpu_submit(void *priv, const QmGpuFrame *f, unsigned slot,
                            QmStream st)
{
    CambiGpu *s = (CambiGpu *)priv;
    const QmCambiConfig *cf = &s->cf;
    cudaStream_t cs = (cudaStream_t)st;
    const QmGpuPlane &lum = f->dist.p[0];
    if (f->dist.bpc != cf->bpc || lum.w != cf->in_w || lum.h != cf->in_h ||
        slot >= s->n_slots)
        return QM_EINVAL;
    CambiOut *o = s->d_out + slot;
    QM_CU_TRY(cudaMemsetAsync(o, 0, sizeof(*o), cs));

    /* the frame's own input: launched per frame */
    if (cf->bpc == 8)
        cambi_launch_preprocess<uint8_t>(s, lum, f->dist.shift, o, cs);
    else
        cambi_launch_preprocess<uint16_t>(s, lum, f->dist.shift, o, cs);
    QM_CU_TRY(cudaGetLastError());
    /* the slot's graph of cambi_launch_scales(), captured at its first frame */
    const int err = qm_graph_once(&s->exec[slot], cs, [&] {
        cambi_launch_scales(s, s->d_out + slot, s->h_out + slot, cs);
    });
    if (err)
        return err;
    QM_CU_TRY(cudaGraphLaunch(s->exec[slot], cs));
    return 0;
}

static int cambi_gpu_collect(void *priv, unsigned slot, QmRows *out)
{
    CambiGpu *s = (CambiGpu *)priv;
    const QmCambiConfig *cf = &s->cf;
    const CambiOut *o = s->h_out + slot;
    if (s->track_max && o->maxv > (1u << cf->bpc) - 1)
        return QM_EINVAL;  /* as the C code: samples out of range */
    double pooled[QM_CAMBI_NUM_SCALES];
    for (int sc = 0; sc < QM_CAMBI_NUM_SCALES; sc++) {
        const uint64_t k = s->k[sc];
        uint64_t total;
        if (o->nonzero[sc] <= k) {
            total = o->sum[sc];  /* the k largest are every value not 0 */
        } else {
            /* the values above V, and as many copies of V as complete k */
            float v;
            memcpy(&v, &o->kth[sc], sizeof(v));
            if (o->n_above[sc] >= k)
                return QM_EDEVICE;  /* not a k-th largest: cannot happen */
            total = o->above[sc] + (k - o->n_above[sc]) * qm_cambi_fix(v);
        }
        pooled[sc] = qm_cambi_fix_mean(total, k);
    }
    qm_rows_set(out, 0, 0, qm_cambi_score(pooled, cf->par.window, cf->max_val));
    return 0;
}

extern "C" const QmCudaFuncs qm_cuda_cambi = {
    sizeof(CambiGpu), cambi_gpu_init, cambi_gpu_submit, cambi_gpu_collect,
    cambi_gpu_close, NULL,
};
