/* gst-qmetric: PSNR stages, shared by the C reference and its CUDA twin. */
#ifndef QM_PSNR_H
#define QM_PSNR_H

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct QmPsnrParams {
    int nplanes;
    int pw[3], ph[3];   /* plane sizes */
    double peak2;       /* ((1 << bpc) - 1)^2 */
    double cap;         /* 6 * bpc + 12 dB */
} QmPsnrParams;

void qm_psnr_setup(const QmMetricConfig *cfg, QmPsnrParams *p);

/* Exact sum of squared differences of plane p (w x h samples). */
uint64_t qm_psnr_sse(const QmPicture *ref, const QmPicture *dist, int p,
                     int w, int h);

/* The score of one plane from its SSE: libvmaf's formula and cap. */
double qm_psnr_from_sse(uint64_t sse, int w, int h, double peak2, double cap);

#ifdef __cplusplus
}
#endif
#endif
