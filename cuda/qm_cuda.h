/* gst-qmetric: the CUDA backend.
 *
 * One QmGpu per engine: one CUDA stream, device buffers for a ring of frames
 * in flight, pinned staging for host input (so the upload of frame N+1
 * overlaps the kernels of frame N), one event per frame.  Metrics with a
 * CUDA twin (QmMetricDesc.cuda) run here; the engine runs the others on its
 * CPU workers at the same time.  The engine sees the backend as a
 * QmBackendOps table (core/backend.h, qm_backend_cuda()).
 *
 * Per-metric twins implement QmCudaFuncs:
 *   init()     allocate device/pinned buffers for n_slots frames in flight;
 *   submit()   enqueue the kernels of one frame on the stream, leaving the
 *              frame's small results (sums, counts) in pinned host memory of
 *              that slot; never synchronise;
 *   host_done() (optional) once the slot's event has completed, polled
 *              until it returns 1: a twin whose results need host work
 *              starts it at the first call and says when it is finished,
 *              so that the engine goes on submitting meanwhile instead of
 *              waiting in collect() (cuda/speed_chroma.cu); 0 while running;
 *   collect()  once the slot's event has completed (and host_done() said
 *              1): turn those results into the features (the same
 *              host-side formula as the C reference);
 *   close().
 * Every function returns 0 or a negative QM_E* code.
 */
#ifndef QM_CUDA_H
#define QM_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUstream_st *QmStream;  /* cudaStream_t */

/* One plane as the kernels read it. */
typedef struct QmGpuPlane {
    const void *data;   /* device pointer to sample (0, 0) */
    ptrdiff_t stride;   /* bytes */
    int w, h;           /* samples */
    int step;           /* 1, or 2 for interleaved Cb/Cr */
} QmGpuPlane;

typedef struct QmGpuPicture {
    QmGpuPlane p[3];
    int bpc;            /* 8: uint8_t samples, else uint16_t */
    int shift;          /* sample >> shift = value */
    QmColor color;      /* QmPicture.color */
} QmGpuPicture;

typedef struct QmGpuFrame {
    QmGpuPicture ref, dist;
    uint64_t index;
} QmGpuFrame;

typedef struct QmCudaFuncs {
    size_t priv_size;
    int (*init)(void *priv, const QmMetricConfig *cfg, unsigned n_slots,
                QmStream st);
    int (*submit)(void *priv, const QmGpuFrame *f, unsigned slot, QmStream st);
    int (*collect)(void *priv, unsigned slot, QmRows *out);
    void (*close)(void *priv);
    int (*host_done)(void *priv, unsigned slot);
} QmCudaFuncs;

/* The backend itself (cuda/gpu.c) is reached through qm_backend_cuda()
 * (core/backend.h): the scheduler includes no CUDA header. */

#ifdef __cplusplus
}
#endif
#endif /* QM_CUDA_H */
