/* gst-qmetric: the CUDA backend.
 *
 * One QmGpu per engine: one CUDA stream, device buffers for a ring of frames
 * in flight, pinned staging for host input (so the upload of frame N+1
 * overlaps the kernels of frame N), one event per frame.  Metrics with a
 * CUDA twin (QmMetricDesc.cuda) run here; the engine runs the others on its
 * CPU workers at the same time.
 *
 * Per-metric twins implement QmCudaFuncs:
 *   init()     allocate device/pinned buffers for n_slots frames in flight;
 *   submit()   enqueue the kernels of one frame on the stream, leaving the
 *              frame's small results (sums, counts) in pinned host memory of
 *              that slot; never synchronise;
 *   collect()  once the slot's event has completed: turn those results into
 *              the features (the same host-side formula as the C reference);
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
} QmCudaFuncs;

/* ---- the backend, used by the engine ---- */

typedef struct QmGpu QmGpu;

typedef struct QmGpuInst {
    const QmMetricDesc *desc;
    const QmOptValues *opt;
    unsigned base;      /* first feature index in a result row */
} QmGpuInst;

typedef struct QmGpuSetup {
    int w, h, bpc;
    QmChroma chroma;
    int device;         /* -1: any */
    void *context;      /* optional CUcontext to share (e.g. GStreamer's) */
    unsigned n_slots;   /* frames in flight */
    unsigned copy_threads; /* threads copying host pictures into staging */
    const QmGpuInst *inst;
    unsigned n_inst;
    QmLogFn log;
    void *log_opaque;
} QmGpuSetup;

/** Whether this build has the CUDA backend. */
bool qm_gpu_built(void);

/** Open the backend: pick the device, create the stream and buffers, init
 *  every instance's twin.  QM_EDEVICE with *err when no GPU works. */
int qm_gpu_open(QmGpu **out, const QmGpuSetup *s, char **err);

/** Device name, for logs. */
const char *qm_gpu_device_name(const QmGpu *g);

/** Enqueue one frame into slot: upload (or use device pointers) and launch
 *  the twins of the instances in inst_mask.  Host pictures are copied to
 *  pinned staging before this returns: the caller may reuse them. */
int qm_gpu_submit(QmGpu *g, unsigned slot, const QmPicture *ref,
                  const QmPicture *dist, uint64_t index, uint32_t inst_mask);

/** 1 when the slot's work has completed, 0 while pending (block: wait). */
int qm_gpu_poll(QmGpu *g, unsigned slot, bool block);

/** Fill the rows of the slot's instances (after qm_gpu_poll() said 1).
 *  row/set are a whole result row. */
int qm_gpu_collect(QmGpu *g, unsigned slot, uint64_t index, double *row,
                   uint8_t *set);

void qm_gpu_close(QmGpu **g);

/** Last error text of the backend (a failed CUDA call, named). */
const char *qm_gpu_error(const QmGpu *g);

#ifdef __cplusplus
}
#endif
#endif /* QM_CUDA_H */
