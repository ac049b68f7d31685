/* gst-qmetric: CIEDE2000 stage functions, shared by the CPU code and its CUDA
 * twin (which mirrors every stage so that a parity harness can compare them).
 *
 *   1. per pixel (one GPU thread per pixel): both YCbCr triplets -> CIE L*a*b*
 *      (qm_ciede_lab()), then their CIEDE2000 difference (qm_ciede_de2000());
 *      a row at a time on the CPU (QmCiedeRowFn);
 *   2. the frame's sum of the per-pixel differences, in double
 *      (qm_ciede_sum(): the reference adds them in raster order; any order
 *      changes the score by ~1e-15 only);
 *   3. host-side: qm_ciede_score(), 45 - 20 log10(mean difference).
 *
 * The arithmetic is the reference's exactly, float or double operation by
 * operation (libvmaf src/feature/ciede.c, a port of rust-av's av-metrics), so
 * keep the casts when mirroring it.
 */
#ifndef QM_CIEDE_H
#define QM_CIEDE_H

#include <stddef.h>
#include <stdint.h>

#include "qm_hd.h"  /* restrict, when C++ (the CUDA twin) includes this */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct QmLab {
    float l, a, b;
} QmLab;

/* Limited-range YCbCr normalisation for a bit depth: (v - off) * mul. */
typedef struct QmCiedeConv {
    double y_off, y_mul;  /* 16 << (bpc - 8), 1 / (219 << (bpc - 8)) */
    double c_off, c_mul;  /* 128 << (bpc - 8), 1 / (224 << (bpc - 8)) */
} QmCiedeConv;

void qm_ciede_conv(QmCiedeConv *cv, int bpc);

struct QmMetricConfig;

/* 0 for a format the metric takes, else QM_ENOTSUP (libvmaf ciede.c init():
 * colour, 8..16 bits; and a chroma plane of at least one sample): init()
 * of both backends. */
int qm_ciede_check(const struct QmMetricConfig *cfg);

/* One limited-range BT.709 YCbCr sample -> L*a*b* (D65). */
QmLab qm_ciede_lab(double y, double cb, double cr, const QmCiedeConv *cv);

/* CIEDE2000 colour difference with kL = 0.65, kC = 1, kH = 4. */
float qm_ciede_de2000(QmLab c1, QmLab c2);

/* CPU-only memo of the pure functions qm_ciede_lab() (per YCbCr triplet) and
 * qm_ciede_de2000() (per pair of triplets): natural pictures repeat colours
 * heavily, and a hit returns the very value the computation would give.
 * Direct-mapped; keys are triplets packed as y | cb << 16 | cr << 32. */
#define QM_CIEDE_CACHE_BITS 14
typedef struct QmCiedeLabSlot {
    uint64_t key;
    QmLab lab;
} QmCiedeLabSlot;
typedef struct QmCiedePairSlot {
    uint64_t ref, dist;
    float de;
} QmCiedePairSlot;
typedef struct QmCiedeCache {
    QmCiedeLabSlot lab[1 << QM_CIEDE_CACHE_BITS];
    QmCiedePairSlot pair[1 << QM_CIEDE_CACHE_BITS];
} QmCiedeCache;

/* Empty the cache (needed once, before first use). */
void qm_ciede_cache_reset(QmCiedeCache *c);

/**
 * Stage 1 for one luma row of w pixels: de[x] = CIEDE2000 between the
 * reference and distorted colours at x.  y_* are the luma rows, cb_* and
 * cr_* the chroma rows belonging to this luma row, and cx[x] the chroma
 * column of luma column x (the engine's chroma placement, see ciede.c).
 * Samples are uint8_t when bpc == 8, else uint16_t.  cache may be NULL.
 */
typedef void (*QmCiedeRowFn)(const void *y_ref, const void *cb_ref,
                             const void *cr_ref, const void *y_dist,
                             const void *cb_dist, const void *cr_dist,
                             const int32_t *cx, int w, int bpc,
                             const QmCiedeConv *cv, QmCiedeCache *cache,
                             float *restrict de);

void qm_ciede_row_c(const void *y_ref, const void *cb_ref, const void *cr_ref,
                    const void *y_dist, const void *cb_dist,
                    const void *cr_dist, const int32_t *cx, int w, int bpc,
                    const QmCiedeConv *cv, QmCiedeCache *cache,
                    float *restrict de);

/* Stage 2: acc + de[0] + ... + de[n - 1], left to right, in double. */
double qm_ciede_sum(double acc, const float *de, int n);

/* Stage 3: the "ciede2000" feature; +inf when the sum is 0. */
double qm_ciede_score(double de_sum, int w, int h);

#ifdef __cplusplus
}
#endif

#endif /* QM_CIEDE_H */
