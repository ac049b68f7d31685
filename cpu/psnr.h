/* gst-qmetric: PSNR stages, shared by the C reference and its CUDA twin. */
#ifndef QM_PSNR_H
#define QM_PSNR_H

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Option indices (cpu/psnr.c, alphabetical as libvmaf sorts them). */
enum { QM_PSNR_ENABLE_APSNR, QM_PSNR_ENABLE_CHROMA, QM_PSNR_MIN_SSE,
       QM_PSNR_REDUCED_HBD_PEAK };

typedef struct QmPsnrParams {
    int nplanes;        /* 1 without enable_chroma or on GRAY input */
    int pw[3], ph[3];   /* plane sizes */
    uint32_t peak;      /* (1 << bpc) - 1, or 255 << (bpc - 8) with
                           reduced_hbd_peak */
    double peak2;       /* peak^2 */
    double cap[3];      /* per plane: 6 * bpc + 12 dB, or from min_sse */
    bool apsnr;         /* enable_apsnr: the frame's SSE go to rows->aux */
} QmPsnrParams;

void qm_psnr_setup(const QmMetricConfig *cfg, QmPsnrParams *p);

/* Exact sum of squared differences of plane p (w x h samples). */
uint64_t qm_psnr_sse(const QmPicture *ref, const QmPicture *dist, int p,
                     int w, int h);

/* The score of one plane from its SSE: libvmaf's formula and cap. */
double qm_psnr_from_sse(uint64_t sse, int w, int h, double peak2, double cap);

/* A frame's features (and, with enable_apsnr, aux values) from the SSE of
 * its planes: what compute() and the twin's collect() write. */
void qm_psnr_rows(const QmPsnrParams *p, const uint64_t *sse, QmRows *out);

#ifdef __cplusplus
}
#endif
#endif
