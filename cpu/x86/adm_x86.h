/* gst-qmetric: scalar pieces of the ADM twins (adm_tmpl.c, compiled in
 * adm_avx2.c and adm_avx512.c): the columns that the vector loops leave
 * to plain code (mirrored DWT taps, row tails, the threshold's mirrored
 * columns).  Each is the C kernel's arithmetic (cpu/adm.c) for those columns.
 */
#ifndef QM_ADM_X86_H
#define QM_ADM_X86_H

#include <math.h>
#include <stdint.h>

#include "adm.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* DWT tap mirror: index -k reads k, index n + k reads n - 1 - k. */
static inline int adm_mirror(int i, int n)
{
    return i < 0 ? -i : (i >= n ? 2 * n - 1 - i : i);
}

/* cos^2(1 degree) in float (the angle test's constant). */
static inline double adm_cos1sq(void)
{
    return (float)(cos(1.0 * M_PI / 180.0) * cos(1.0 * M_PI / 180.0));
}

/* Scale 0, vertical pass of columns [j, n): centred samples, int32 sums. */
static inline void adm_dwt0_vtail(const void *const src[4], int bpc, const QmAdmScaleQ *q,
                                  int j, int16_t *lo, int16_t *hi)
{
    const int32_t *L = QM_ADM_DB2_LO, *H = QM_ADM_DB2_HI;
    const int half = 1 << (bpc - 1);
    for (; j < q->in_w; j++) {
        int32_t sl = 0, sh = 0;
        for (int k = 0; k < 4; k++) {
            const int32_t r = bpc == 8 ? (int16_t)(((const uint8_t *)src[k])[j] - half)
                                       : (int16_t)(((const uint16_t *)src[k])[j] - half);
            sl += L[k] * r;
            sh += H[k] * r;
        }
        lo[j] = (int16_t)((sl + (int32_t)q->v_add) >> q->v_shift);
        hi[j] = (int16_t)((sh + (int32_t)q->v_add) >> q->v_shift);
    }
}

/* Scale 0, horizontal pass of output column 0 and columns [j, w) (taps
 * mirrored). */
static inline void adm_dwt0_hborder(const int16_t *lo, const int16_t *hi, const QmAdmScaleQ *q,
                                    int j, int32_t *const band[4])
{
    const int32_t *L = QM_ADM_DB2_LO, *H = QM_ADM_DB2_HI;
    for (int jj = 0; jj < q->w; jj = (jj == 0 ? j : jj + 1)) {
        int32_t sa = 0, sv = 0, sh = 0, sd = 0;
        for (int k = 0; k < 4; k++) {
            const int c = adm_mirror(2 * jj - 1 + k, q->in_w);
            sa += L[k] * lo[c];
            sv += H[k] * lo[c];
            sh += L[k] * hi[c];
            sd += H[k] * hi[c];
        }
        band[0][jj] = (int16_t)((sa + 32768) >> 16);
        band[2][jj] = (int16_t)((sv + 32768) >> 16);
        band[1][jj] = (int16_t)((sh + 32768) >> 16);
        band[3][jj] = (int16_t)((sd + 32768) >> 16);
    }
}

/* Scales 1-3, vertical pass of columns [j, n), int64 sums. */
static inline void adm_dwt123_vtail(const int32_t *const r[4], const QmAdmScaleQ *q, int j,
                                    int32_t *lo, int32_t *hi)
{
    const int32_t *L = QM_ADM_DB2_LO, *H = QM_ADM_DB2_HI;
    for (; j < q->in_w; j++) {
        int64_t sl = 0, sh = 0;
        for (int k = 0; k < 4; k++) {
            sl += L[k] * (int64_t)r[k][j];
            sh += H[k] * (int64_t)r[k][j];
        }
        lo[j] = (int32_t)((sl + q->v_add) >> q->v_shift);
        hi[j] = (int32_t)((sh + q->v_add) >> q->v_shift);
    }
}

/* Scales 1-3, horizontal pass of output column 0 and columns [j, w). */
static inline void adm_dwt123_hborder(const int32_t *lo, const int32_t *hi, const QmAdmScaleQ *q,
                                      int j, int32_t *const band[4])
{
    const int32_t *L = QM_ADM_DB2_LO, *H = QM_ADM_DB2_HI;
    for (int jj = 0; jj < q->w; jj = (jj == 0 ? j : jj + 1)) {
        int64_t sa = 0, sv = 0, sh = 0, sd = 0;
        for (int k = 0; k < 4; k++) {
            const int c = adm_mirror(2 * jj - 1 + k, q->in_w);
            sa += L[k] * (int64_t)lo[c];
            sv += H[k] * (int64_t)lo[c];
            sh += L[k] * (int64_t)hi[c];
            sd += H[k] * (int64_t)hi[c];
        }
        band[0][jj] = (int32_t)((sa + q->h_add) >> q->h_shift);
        band[2][jj] = (int32_t)((sv + q->h_add) >> q->h_shift);
        band[1][jj] = (int32_t)((sh + q->h_add) >> q->h_shift);
        band[3][jj] = (int32_t)((sd + q->h_add) >> q->h_shift);
    }
}

/* The masking threshold's mirrored columns: vs[c - c0] is the vertical
 * 3-sum of column c; column -1 reads 1, column w reads w - 1. */
static inline void adm_thr_edges(const int32_t *const sum[3], int w, int c0, int c1,
                                 int32_t *vs)
{
    if (c0 < 0)
        vs[0] = sum[0][1] + sum[1][1] + sum[2][1];
    if (c1 > w)
        vs[w - c0] = sum[0][w - 1] + sum[1][w - 1] + sum[2][w - 1];
}

/* Columns per threshold chunk of the twins' numerator kernels. */
#define ADM_NUM_CHUNK 512

/* An ISA's pieces of the numerator kernel: the thresholds of a chunk; the
 * scale-0 sum (unsigned products; sets *wrapped where a square reaches
 * 2^31); the general sum (the C kernel's num_row). */
typedef void (*AdmThrFn)(const int32_t *const sum[3], const int32_t *ctr, int w, int j0,
                         int n, int32_t *restrict vs, int32_t *restrict thr);
typedef int64_t (*AdmNum0Fn)(const int32_t *src, const int32_t *thr, int n,
                             const QmAdmScaleQ *q, int t, int *wrapped);
typedef int64_t (*AdmNumFn)(const int32_t *src, const int32_t *thr, int n,
                            const QmAdmScaleQ *q, int t);

/* The numerator kernel (QmAdmNumRowFn) from an ISA's pieces, as the C
 * kernel chains them; inlined with constant pieces. */
static inline __attribute__((always_inline)) void
adm_num_row_x86(const int32_t *const src[3], const int32_t *const sum[3], const int32_t *ctr,
                const QmAdmScaleQ *q, int64_t in[3], AdmThrFn thresholds, AdmNum0Fn num0,
                AdmNumFn num)
{
    const QmAdmRect *rc = &q->roi;
    int32_t vs[ADM_NUM_CHUNK + 2], thr[ADM_NUM_CHUNK];
    in[0] = in[1] = in[2] = 0;
    for (int j0 = rc->x0; j0 < rc->x1; j0 += ADM_NUM_CHUNK) {
        const int n = rc->x1 - j0 < ADM_NUM_CHUNK ? rc->x1 - j0 : ADM_NUM_CHUNK;
        thresholds(sum, ctr, q->w, j0, n, vs, thr);
        for (int t = 0; t < 3; t++) {
            int wrapped = 1;
            int64_t v = 0;
            if (q->narrow16)
                v = num0(src[t] + j0, thr, n, q, t, &wrapped);
            if (wrapped)
                v = num(src[t] + j0, thr, n, q, t);
            /* wraps, as the C stage's sum (defined unsigned arithmetic) */
            in[t] = (int64_t)((uint64_t)in[t] + (uint64_t)v);
        }
    }
}

#endif /* QM_ADM_X86_H */
