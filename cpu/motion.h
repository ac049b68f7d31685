/* gst-qmetric: integer motion (libvmaf 3.2.0 "motion" feature extractor,
 * integer_motion.c / integer_motion.h / motion_blend_tools.h) as stages.
 *
 * Per frame i >= 1 (frame 0 scores 0):
 *
 *   d       = prev_ref_luma - cur_ref_luma                (signed, per pixel)
 *   v       = (5-tap vertical blur of d + 2^(bpc-1)) >> bpc     (int32)
 *   b       = (5-tap horizontal blur of v + 2^15) >> 16          (int32)
 *   SAD     = sum over rows of (uint32 sum over the row of |b|)
 *   score   = min(SAD / 256 / (w h) * fps_weight, max_val)
 *
 * The taps are a Gaussian in Q16 (they sum to 65536): v is d * 2^(16 - bpc),
 * i.e. the difference in 8-bit units times 256 at every bit depth; b keeps
 * that scale, hence the division by 256.  Borders mirror without
 * repeating the edge sample on both sides: index -k reads k and index
 * n - 1 + k reads n - 1 - k (libvmaf 3.2.0; 3.1.0 repeated the edge sample
 * at the bottom/right, see the golden README "Version sensitivity").
 *
 * Temporal features (computed on the host, one or two frames late), with
 * min = 1 and step = 1 (step: frames between the two pictures compared) or,
 * with motion_five_frame_window, min = 2 and step = 2 (score[i] then
 * compares frames i - 2 and i; 0 for i < 2):
 *   motion2[i] = 0 for i < min;
 *              = score[i] for the last frame;
 *              = min(score[i - step + 1], score[i + 1]) when
 *                i - step + 1 >= min, else score[i + 1];
 *   p[i]       = min(blend(motion2[i]), max_val) for i >= min,
 *              = min(blend(score[min]), max_val) for i < min (0 when the
 *                stream has no frame min);
 *   motion3[i] = p[i], or with motion_moving_average (p[i] + p[i-1]) / 2
 *                for i >= min.
 * (libvmaf 3.2.0 integer_motion.c flush(); see the golden README, "Motion
 * in the v1 models".)
 *
 * Stage boundaries are the GPU kernel boundaries: one kernel produces the
 * per-row SADs of a frame pair (bit-exact, integer), a reduction sums them,
 * and the remaining double arithmetic is shared host code.  The per-pixel
 * arithmetic (mirror, both blurs) is written once below, QM_HD (qm_hd.h):
 * cpu/motion.c and cuda/motion.cu call the same functions.
 */
#ifndef QM_MOTION_H
#define QM_MOTION_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "qm_hd.h"

/* libvmaf integer_motion.h: filter[5] = { 3571, 16004, 26386, 16004, 3571 },
 * a symmetric 5-tap Gaussian in Q16 (the taps sum to 65536). */
#define QM_MOTION_TAPS 5
#define QM_MOTION_F0 3571   /* taps 0 and 4 */
#define QM_MOTION_F1 16004  /* taps 1 and 3 */
#define QM_MOTION_F2 26386  /* tap 2 */
static_assert(2 * QM_MOTION_F0 + 2 * QM_MOTION_F1 + QM_MOTION_F2 == 65536,
              "the motion blur taps sum to 1.0 in Q16");

/* Smallest plane the 5-tap mirror stays inside of: a tap at distance 2 past
 * a border mirrors to index 2 (top/left) or n - 3 (bottom/right). */
#define QM_MOTION_MIN_SIZE 3

/* Mirror an index into [0, n) without repeating the edge sample on either
 * side (libvmaf 3.2.0 integer_motion.c, mirror()): -k -> k, n-1+k -> n-1-k;
 * stays in [0, n) for -2 <= i <= n + 1 when n >= QM_MOTION_MIN_SIZE.  Both
 * backends' border rule. */
QM_HD int qm_motion_mirror(int i, int n)
{
    if (i < 0)
        return -i;
    if (i >= n)
        return 2 * n - 2 - i;
    return i;
}

/* The vertical blur of one column's five differences d0..d4 = prev - cur
 * (rows y - 2 .. y + 2, mirrored), rounded and shifted right by bpc
 * (libvmaf: y_round = 1 << (bpc - 1)).  |d| <= 2^bpc - 1 and the taps sum
 * to 2^16, so the int32 sum is exact for bpc <= 15; 16-bit samples need
 * qm_motion_blur_v_wide() (libvmaf's int64_t accumulator).  Integer sums
 * are exact either way: the narrower type changes no result, nor does
 * adding the symmetric taps' pairs first (two multiplications fewer). */
QM_HD int32_t qm_motion_blur_v(int32_t d0, int32_t d1, int32_t d2, int32_t d3,
                               int32_t d4, int bpc)
{
    const int32_t s = QM_MOTION_F0 * (d0 + d4) + QM_MOTION_F1 * (d1 + d3) +
                      QM_MOTION_F2 * d2;
    return (s + (1 << (bpc - 1))) >> bpc;
}

QM_HD int32_t qm_motion_blur_v_wide(int32_t d0, int32_t d1, int32_t d2,
                                    int32_t d3, int32_t d4, int bpc)
{
    const int64_t s = (int64_t)QM_MOTION_F0 * (d0 + d4) +
                      (int64_t)QM_MOTION_F1 * (d1 + d3) + (int64_t)QM_MOTION_F2 * d2;
    return (int32_t)((s + (1 << (bpc - 1))) >> bpc);
}

/*
 * |b| of the horizontal blur at v[2] of five vertically blurred values
 * v[0..4] (mirrored at the row's ends).
 *
 * libvmaf computes b = (sum f[k] v[k] + 2^15) >> 16 in int64_t, because
 * |v| reaches 65535 and 65535 * 65536 does not fit an int32.  The same b
 * comes out of int32 arithmetic (which vectorises on every SIMD level) by
 * splitting each tap into f = 256 fh + fl (fh = f >> 8, fl = f & 255):
 *
 *   A = sum fh v  (|A| <= 253 * 65535),  B = sum fl v  (|B| <= 768 * 65535)
 *   b = floor((256 A + B + 2^15) / 2^16)
 *     = floor((A + floor((B + 2^15) / 2^8)) / 2^8)
 *
 * exact because A is an integer and floor(floor(x) / m) = floor(x / m) for
 * an integer m > 0; ">>" on a negative int is an arithmetic shift (floor)
 * with GCC, Clang and nvcc, as libvmaf also assumes.
 */
QM_HD uint32_t qm_motion_blur_h_abs(const int32_t *v)
{
    const int32_t e0 = v[0] + v[4], e1 = v[1] + v[3], e2 = v[2];
    const int32_t a = (QM_MOTION_F0 >> 8) * e0 + (QM_MOTION_F1 >> 8) * e1 +
                      (QM_MOTION_F2 >> 8) * e2;
    const int32_t b = (QM_MOTION_F0 & 255) * e0 + (QM_MOTION_F1 & 255) * e1 +
                      (QM_MOTION_F2 & 255) * e2;
    const int32_t r = (a + ((b + (1 << 15)) >> 8)) >> 8;
    return (uint32_t)(r < 0 ? -r : r);
}

#ifdef __cplusplus
extern "C" {
#endif

struct QmMetricConfig;

/* 0 for a geometry the metric takes (both sides at least
 * QM_MOTION_MIN_SIZE, 8..16 bits), else QM_ENOTSUP: init() of both
 * backends. */
int qm_motion_check(const struct QmMetricConfig *cfg);

extern const int32_t qm_motion_filter[QM_MOTION_TAPS];

/**
 * Stage 1: per-row SADs of the blurred luma difference of two pictures.
 *
 * prev, cur: w x h luma planes (uint8_t when bpc == 8, else uint16_t holding
 * 0 .. 2^bpc - 1), strides in bytes.  w, h >= QM_MOTION_MIN_SIZE, bpc 8..16.
 * scratch: at least qm_motion_scratch_len(w) int32_t.
 * row_sad[y] receives row y's sum of |b| as libvmaf accumulates it (uint32,
 * wrapping like the reference for rows wider than 65536 samples).
 * Bit-exact between backends.
 */
typedef void (*QmMotionRowSadFn)(const void *prev, ptrdiff_t prev_stride,
                                 const void *cur, ptrdiff_t cur_stride,
                                 int w, int h, int bpc,
                                 int32_t *scratch, uint32_t *row_sad);

void qm_motion_row_sad_8(const void *prev, ptrdiff_t prev_stride,
                         const void *cur, ptrdiff_t cur_stride,
                         int w, int h, int bpc,
                         int32_t *scratch, uint32_t *row_sad);
void qm_motion_row_sad_16(const void *prev, ptrdiff_t prev_stride,
                          const void *cur, ptrdiff_t cur_stride,
                          int w, int h, int bpc,
                          int32_t *scratch, uint32_t *row_sad);

/** The row-SAD function for this bit depth. */
QmMotionRowSadFn qm_motion_row_sad_fn(int bpc);

/** int32_t elements of scratch the row-SAD stage needs for width w. */
size_t qm_motion_scratch_len(int w);

/** Stage 2: the frame's SAD, the exact uint64 sum of the row SADs. */
uint64_t qm_motion_sum_rows(const uint32_t *row_sad, int h);

/* ---- the metric's feature and option indices (qm_metric_motion), shared
 *      with the CUDA twin ---- */

/* Features, in the order of the descriptor's key list.  libvmaf 3.2.0
 * writes "VMAF_integer_feature_motion_score" (integer_motion) only in its
 * debug mode, so it is not offered. */
enum {
    QM_MOTION_FEAT_SAD,      /* VMAF_integer_feature_motion_sad_score */
    QM_MOTION_FEAT_MOTION2,  /* integer_motion2 */
    QM_MOTION_FEAT_MOTION3,  /* integer_motion3 */
    QM_MOTION_N_FEATURES
};

/* Options: alphabetical by libvmaf name (metric.h). */
enum {
    QM_MOTION_OPT_BLEND_FACTOR,
    QM_MOTION_OPT_BLEND_OFFSET,
    QM_MOTION_OPT_FIVE_FRAME_WINDOW,
    QM_MOTION_OPT_FORCE_ZERO,
    QM_MOTION_OPT_FPS_WEIGHT,
    QM_MOTION_OPT_MAX_VAL,
    QM_MOTION_OPT_MOVING_AVERAGE
};

/* ---- host-side formulas, shared by every backend ---- */

/** Per-frame score from the SAD (libvmaf integer_motion.c, extract()). */
double qm_motion_score(uint64_t sad, int w, int h, double fps_weight,
                       double max_val);

/** libvmaf motion_blend_tools.h: x * f + (1 - f) * min(offset, x). */
double qm_motion_blend(double x, double factor, double offset);

/**
 * motion2 and motion3 of a whole sequence of n per-frame scores (the
 * formulas above, as libvmaf's flush() evaluates them).  The engine's
 * streaming post()/flush() give the same values; tests compare the two.
 */
void qm_motion_temporal(const double *score, size_t n, int five_frame_window,
                        int moving_average, double blend_factor,
                        double blend_offset, double max_val, double *motion2,
                        double *motion3);

#ifdef __cplusplus
}
#endif

#endif /* QM_MOTION_H */
