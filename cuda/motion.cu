/* gst-qmetric: CUDA twin of cpu/motion.c (integer motion, libvmaf 3.2.0).
 *
 * The stages of cpu/motion.h, per frame i >= min_idx (1, or 2 with
 * motion_five_frame_window), with the reference luma of the frame it is
 * compared with (i - 1, or i - 2 with the five-frame window) kept on the
 * device:
 *
 *   motion_sad_kernel   one block per tile of TW x TH output samples:
 *                       d = prev - cur over the tile and its 2-sample
 *                       mirrored border, blurred vertically into shared
 *                       memory (int32, or int64 sums at 16 bits:
 *                       qm_motion_blur_v*() of motion.h, the C code's own),
 *                       then horizontally from shared memory
 *                       (qm_motion_blur_h_abs()); per tile and row the
 *                       uint32 sum of |b|.  The same pass stores the current luma
 *                       (>> shift, packed) as the next frame's "previous".
 *                       The last block to finish adds the tiles' row sums
 *                       into each row's uint32 SAD and the rows into the
 *                       frame's uint64 SAD, in a fixed order (stage 2).
 *   motion_store_kernel frames before min_idx: only the copy of the luma.
 *
 * Every sum is an integer sum: the uint32 row SADs are sums modulo 2^32
 * (as the C code's wrapping uint32 accumulator) whatever the order of the
 * additions, and the frame SAD is their exact uint64 sum, so the twin is
 * bit-exact (cuda_tol 0).  collect() calls the C reference's
 * qm_motion_score(); motion2/motion3 stay with the C descriptor's post() and
 * flush() on the host.
 *
 * History: a ring of step + 1 device buffers of raw luma (step 1, or 2 with
 * the five-frame window: frames i - 1 and i - 2 both stay).  Frame i reads
 * the buffer frame i - step wrote and writes its own luma into the one that
 * held frame i - step - 1, which nothing reads any more; the stream runs
 * the frames' kernels in order, so no copy and no host round trip are
 * needed, and the luma is kept raw rather than blurred because the C
 * reference blurs the difference (blur_rows_vertical() rounds after the
 * subtraction, which blurring each frame apart would not reproduce).
 * Which buffer holds which frame is host state advanced by submit(), in
 * frame order; the kernels that use it are already queued in that order.
 */
#include <stdlib.h>
#include <string.h>

#include "common.cuh"
#include "motion.h"

#define R (QM_MOTION_TAPS / 2)  /* 2: the blur's reach on either side */
#define TW 128                  /* output columns per tile */
#define TH 16                   /* output rows per tile */
#define SEG 8                   /* output rows per vertical-pass item */
#define NSEG (TH / SEG)
#define HC (TW + 2 * R)         /* tile columns with the border */
#define NT 256                  /* threads per block */
#define NWARPS (NT / 32)
#define ROWS_PER_WARP (TH / NWARPS)
#define COLS_PER_LANE (TW / 32)

static_assert(TH % SEG == 0, "segments tile the rows");
static_assert(TW % 32 == 0 && TH % NWARPS == 0,
              "the horizontal pass gives each warp whole rows");

/*
 * prev: the luma of frame i - step (values, packed, w per row); next: where
 * this frame's luma goes.  partial[tx * h + y]: row y's sum over tile column
 * tx.  done: blocks finished (0 between frames).  sad: the frame's SAD.
 * WIDE: 64-bit vertical sums (bpc 16), as cpu/motion.c's `wide`.
 */
template <typename T, bool WIDE>
__global__ void __launch_bounds__(NT)
motion_sad_kernel(QmGpuPlane cur, int shift, const T *__restrict__ prev,
                  T *__restrict__ next, int w, int h, int bpc,
                  uint32_t *__restrict__ partial, unsigned *__restrict__ done,
                  unsigned long long *__restrict__ sad)
{
    /* sv[r][c]: vertically blurred difference of output row y0 + r at
     * column x0 - R + c */
    __shared__ int32_t sv[TH][HC];
    __shared__ bool last;

    const int tid = threadIdx.x;
    const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;

    /* Vertical pass.  Item = one tile column over SEG output rows: its
     * SEG + 2R differences in registers, SEG blurred values out.  Items
     * 0 .. NSEG*TW-1 are the tile's own columns (aligned loads, and the
     * copy of the luma), the last NSEG*2R the border columns. */
    for (int it = tid; it < NSEG * HC; it += NT) {
        int seg, sc;
        bool own;
        if (it < NSEG * TW) {
            seg = it / TW;
            sc = R + it % TW;
            own = true;
        } else {
            const int k = it - NSEG * TW;
            seg = k / (2 * R);
            const int b = k % (2 * R);
            sc = b < R ? b : TW + b;  /* 0, 1 | TW + 2, TW + 3 */
            own = false;
        }
        const int x = x0 - R + sc;
        const int yo0 = y0 + seg * SEG;  /* first output row */
        /* a column at or past w + R, or rows at or past h, feed no output */
        if (x >= w + R || yo0 >= h)
            continue;
        const int xm = qm_motion_mirror(x, w);
        int32_t d[SEG + 2 * R];
#pragma unroll
        for (int j = 0; j < SEG + 2 * R; j++) {
            /* input rows past h - 1 + R feed only outputs past h - 1:
             * clamp them to keep the mirrored index inside the plane */
            const int y = min(yo0 - R + j, h - 1 + R);
            const int ym = qm_motion_mirror(y, h);
            const int c = qm_load<T>(cur, shift, xm, ym);
            const int p = __ldg(prev + (size_t)ym * w + xm);
            d[j] = p - c;
            /* the centre rows of an own column are this tile's samples:
             * y == ym and x == xm there */
            if (own && j >= R && j < SEG + R && x < w && y < h)
                next[(size_t)y * w + x] = (T)c;
        }
#pragma unroll
        for (int r = 0; r < SEG; r++) {
            /* the C code's vertical blur (motion.h) */
            sv[seg * SEG + r][sc] =
                WIDE ? qm_motion_blur_v_wide(d[r], d[r + 1], d[r + 2], d[r + 3], d[r + 4], bpc)
                     : qm_motion_blur_v(d[r], d[r + 1], d[r + 2], d[r + 3], d[r + 4], bpc);
        }
    }
    __syncthreads();

    /* Horizontal pass: warp k owns rows k*ROWS_PER_WARP.., each lane
     * COLS_PER_LANE columns 32 apart (conflict-free shared reads).  The
     * outputs read sv columns x - R .. x + R < w + R, all written above. */
    const int lane = tid & 31, warp = tid >> 5;
#pragma unroll
    for (int rr = 0; rr < ROWS_PER_WARP; rr++) {
        const int r = warp * ROWS_PER_WARP + rr;
        uint32_t acc = 0;
        if (y0 + r < h) {
#pragma unroll
            for (int k = 0; k < COLS_PER_LANE; k++) {
                const int col = lane + 32 * k;
                if (x0 + col >= w)
                    break;
                /* the C code's horizontal blur (motion.h) */
                acc += qm_motion_blur_h_abs(&sv[r][col]);
            }
        }
        /* uint32 additions modulo 2^32, as the C row accumulator */
        for (int o = 16; o > 0; o >>= 1)
            acc += __shfl_down_sync(0xffffffffu, acc, o);
        if (lane == 0 && y0 + r < h) {
            partial[(size_t)blockIdx.x * h + y0 + r] = acc;
            __threadfence();  /* visible before this block counts as done */
        }
    }

    /* Stage 2 in the block that finishes last: every tile's row sums are
     * written (and fenced) before their block's increment of done. */
    __syncthreads();
    if (tid == 0)
        last = atomicAdd(done, 1u) == gridDim.x * gridDim.y - 1;
    __syncthreads();
    if (!last)
        return;
    unsigned long long total = 0;
    for (int y = tid; y < h; y += NT) {
        uint32_t row = 0;  /* row y's SAD, modulo 2^32 as in the C code */
        for (unsigned tx = 0; tx < gridDim.x; tx++)
            row += __ldcg(partial + (size_t)tx * h + y);
        total += row;
    }
    total = qm_block_sum(total);
    if (tid == 0) {
        *sad = total;
        *done = 0;  /* ready for the next frame (the launch boundary orders it) */
    }
}

/* Frame 0: only keep the luma for frame 1. */
template <typename T>
__global__ void motion_store_kernel(QmGpuPlane cur, int shift,
                                    T *__restrict__ next, int w, int h)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= w)
        return;
    for (int y = blockIdx.y; y < h; y += gridDim.y)
        next[(size_t)y * w + x] = (T)qm_load<T>(cur, shift, x, y);
}

/* step + 1 history buffers: the five-frame window's step is 2 */
#define MAX_LUMA 3

typedef struct {
    int w, h, bpc, bytes;
    int force_zero;
    double fps_weight, max_val;
    unsigned min_idx, step;     /* 2, 2 with the five-frame window; else 1, 1 */
    unsigned n_luma;            /* buffers in the history ring: step + 1 */
    unsigned tiles_x, tiles_y;
    void *d_luma[MAX_LUMA];     /* reference luma of the last frames */
    unsigned head;              /* which of d_luma holds the latest frame */
    unsigned n_stored;          /* frames stored so far (up to step) */
    uint32_t *d_partial;        /* [tiles_x][h] */
    unsigned *d_done;
    unsigned long long *d_sad;  /* [slot] */
    unsigned long long *h_sad;  /* [slot], pinned */
    uint8_t *computed;          /* [slot]: SAD computed (else the score is 0) */
} MotionGpu;

static void motion_gpu_close(void *priv)
{
    MotionGpu *s = (MotionGpu *)priv;
    for (int k = 0; k < MAX_LUMA; k++)
        cudaFree(s->d_luma[k]);
    cudaFree(s->d_partial);
    cudaFree(s->d_done);
    cudaFree(s->d_sad);
    cudaFreeHost(s->h_sad);
    free(s->computed);
    memset(s, 0, sizeof(*s));
}

static int motion_gpu_alloc(MotionGpu *s, unsigned n_slots, cudaStream_t cs)
{
    const size_t plane = (size_t)s->w * (size_t)s->h * (size_t)s->bytes;
    for (unsigned k = 0; k < s->n_luma; k++)
        QM_CU_TRY(cudaMalloc(&s->d_luma[k], plane));
    QM_CU_TRY(cudaMalloc(&s->d_partial,
                         (size_t)s->tiles_x * (size_t)s->h * sizeof(uint32_t)));
    QM_CU_TRY(cudaMalloc(&s->d_done, sizeof(unsigned)));
    QM_CU_TRY(cudaMalloc(&s->d_sad, n_slots * sizeof(unsigned long long)));
    QM_CU_TRY(cudaMallocHost(&s->h_sad, n_slots * sizeof(unsigned long long)));
    QM_CU_TRY(cudaMemsetAsync(s->d_done, 0, sizeof(unsigned), cs));
    return 0;
}

static int motion_gpu_init(void *priv, const QmMetricConfig *cfg,
                           unsigned n_slots, QmStream st)
{
    MotionGpu *s = (MotionGpu *)priv;
    memset(s, 0, sizeof(*s));
    int err = qm_motion_check(cfg);
    if (err)
        return err;
    s->w = cfg->w;
    s->h = cfg->h;
    s->bpc = cfg->bpc;
    s->bytes = cfg->bpc == 8 ? 1 : 2;
    /* libvmaf integer_motion.c: the five-frame window (the _hfr v1 models)
     * scores frame i against frame i - 2 from frame 2 on */
    s->min_idx = s->step =
        cfg->opt->v[QM_MOTION_OPT_FIVE_FRAME_WINDOW] != 0 ? 2 : 1;
    s->n_luma = s->step + 1;
    s->force_zero = cfg->opt->v[QM_MOTION_OPT_FORCE_ZERO] != 0;
    s->fps_weight = cfg->opt->v[QM_MOTION_OPT_FPS_WEIGHT];
    s->max_val = cfg->opt->v[QM_MOTION_OPT_MAX_VAL];
    s->tiles_x = (unsigned)((s->w + TW - 1) / TW);
    s->tiles_y = (unsigned)((s->h + TH - 1) / TH);
    if (s->tiles_y > 65535)  /* gridDim.y */
        return QM_ENOTSUP;
    s->computed = (uint8_t *)calloc(n_slots ? n_slots : 1, 1);
    if (!s->computed)
        return QM_ENOMEM;
    if (s->force_zero)
        return 0;  /* every score is 0: nothing to keep */
    err = motion_gpu_alloc(s, n_slots, (cudaStream_t)st);
    if (err)
        motion_gpu_close(s);
    return err;
}

static int motion_gpu_submit(void *priv, const QmGpuFrame *f, unsigned slot,
                             QmStream st)
{
    MotionGpu *s = (MotionGpu *)priv;
    cudaStream_t cs = (cudaStream_t)st;
    const QmGpuPlane &cur = f->ref.p[0];
    s->computed[slot] = 0;
    /* libvmaf: frames before min_idx and motion_force_zero score 0 */
    if (s->force_zero)
        return 0;
    if (f->ref.bpc != s->bpc || cur.w != s->w || cur.h != s->h)
        return QM_EINVAL;
    /* the buffer of frame i - step - 1, free now */
    const unsigned next_k = (s->head + 1) % s->n_luma;
    void *next = s->d_luma[next_k];
    if (f->index >= s->min_idx) {
        if (s->n_stored < s->step)
            return QM_EINVAL;  /* frames must come in order, none skipped */
        /* frame i - step: step - 1 buffers before the latest one */
        const void *prev =
            s->d_luma[(s->head + s->n_luma - (s->step - 1)) % s->n_luma];
        unsigned long long *sad = s->d_sad + slot;
        const dim3 grid(s->tiles_x, s->tiles_y);
        if (s->bpc == 8)
            motion_sad_kernel<uint8_t, false><<<grid, NT, 0, cs>>>(
                cur, f->ref.shift, (const uint8_t *)prev, (uint8_t *)next,
                s->w, s->h, s->bpc, s->d_partial, s->d_done, sad);
        else if (s->bpc <= 15)
            motion_sad_kernel<uint16_t, false><<<grid, NT, 0, cs>>>(
                cur, f->ref.shift, (const uint16_t *)prev, (uint16_t *)next,
                s->w, s->h, s->bpc, s->d_partial, s->d_done, sad);
        else
            motion_sad_kernel<uint16_t, true><<<grid, NT, 0, cs>>>(
                cur, f->ref.shift, (const uint16_t *)prev, (uint16_t *)next,
                s->w, s->h, s->bpc, s->d_partial, s->d_done, sad);
        QM_CU_TRY(cudaGetLastError());
        QM_CU_TRY(cudaMemcpyAsync(s->h_sad + slot, sad, sizeof(*sad),
                                  cudaMemcpyDeviceToHost, cs));
        s->computed[slot] = 1;
    } else {
        const int threads = 256;
        const dim3 grid((unsigned)((s->w + threads - 1) / threads),
                        (unsigned)(s->h < 65535 ? s->h : 65535));
        if (s->bpc == 8)
            motion_store_kernel<uint8_t><<<grid, threads, 0, cs>>>(
                cur, f->ref.shift, (uint8_t *)next, s->w, s->h);
        else
            motion_store_kernel<uint16_t><<<grid, threads, 0, cs>>>(
                cur, f->ref.shift, (uint16_t *)next, s->w, s->h);
        QM_CU_TRY(cudaGetLastError());
    }
    /* this frame's luma is the one frame i + step compares with */
    s->head = next_k;
    if (s->n_stored < s->step)
        s->n_stored++;
    return 0;
}

static int motion_gpu_collect(void *priv, unsigned slot, QmRows *out)
{
    MotionGpu *s = (MotionGpu *)priv;
    double score = 0.;
    if (s->computed[slot])
        score = qm_motion_score(s->h_sad[slot], s->w, s->h, s->fps_weight,
                                s->max_val);
    qm_rows_set(out, 0, QM_MOTION_FEAT_SAD, score);
    return 0;
}

extern "C" const QmCudaFuncs qm_cuda_motion = {
    sizeof(MotionGpu), motion_gpu_init, motion_gpu_submit, motion_gpu_collect,
    motion_gpu_close, NULL,
};
