/* gst-qmetric: the interface between the scheduler (core/engine.c) and an
 * accelerator backend (cuda/gpu.c; a fake one in tests/engine_test.c).
 *
 * The scheduler computes the metric instances it keeps on its own CPU
 * workers (QmMetricDesc.cpu); a backend takes the instances it can run
 * (can_run) and works on a ring of n_slots frames in flight:
 *
 *   open -> { submit(slot) ... poll(slot) = 1 -> collect(slot) }* -> close
 *
 * The scheduler calls the backend from one thread at a time and never while
 * it holds its own mutex, so a backend may copy, wait and block (for at most
 * the timeout it is given) without stalling the CPU workers.  Slots are used
 * round robin: frame i goes to slot i % n_slots, and is collected before
 * frame i + n_slots is submitted.  Every function returns 0 (or 1 for a
 * finished poll) or a negative QM_E* code, and never prints or aborts.
 */
#ifndef QM_BACKEND_H
#define QM_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "metric.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One metric instance handed to the backend. */
typedef struct QmBackendInst {
    const QmMetricDesc *desc;
    const QmOptValues *opt;
    unsigned base;      /* first feature index in a result row */
} QmBackendInst;

typedef struct QmBackendSetup {
    int w, h, bpc;
    QmChroma chroma;
    int device;         /* -1: any */
    void *context;      /* optional device context to share (a CUcontext) */
    unsigned n_slots;   /* frames in flight */
    unsigned copy_threads; /* threads copying host pictures into staging
                              (1: the submitting thread alone) */
    const QmBackendInst *inst;
    unsigned n_inst;
    QmLogFn log;
    void *log_opaque;
} QmBackendSetup;

typedef struct QmBackendOps {
    const char *name;   /* for messages, e.g. "CUDA" */
    /** Whether the backend can compute an instance of metric d with option
     *  values o (such instances go there; the others run on the CPU). */
    bool (*can_run)(const QmMetricDesc *d, const QmOptValues *o);
    /** Set up for s->inst (the instances can_run() accepted, in order; the
     *  bit k of a mask below is s->inst[k]).  QM_EDEVICE with *err (caller
     *  frees) when no device works. */
    int (*open)(void **ctx, const QmBackendSetup *s, char **err);
    /** Device name, for logs. */
    const char *(*device_name)(void *ctx);
    /** Enqueue one frame into slot for the instances in inst_mask, without
     *  waiting for the device.  Pictures, host or device, are read until
     *  the slot is collected (the scheduler releases them after collect()):
     *  a host picture may still be on its way into the backend's staging
     *  when this returns. */
    int (*submit)(void *ctx, unsigned slot, const QmPicture *ref,
                  const QmPicture *dist, uint64_t index, uint32_t inst_mask);
    /** 1 when the slot's work has completed, 0 while it is pending after
     *  waiting up to timeout_ms (0: do not wait). */
    int (*poll)(void *ctx, unsigned slot, unsigned timeout_ms);
    /** Write the slot's features into a whole result row (after poll()
     *  said 1) and free the slot. */
    int (*collect)(void *ctx, unsigned slot, uint64_t index, double *row,
                   uint8_t *set);
    /** Wait up to timeout_ms for the device to go idle, then free
     *  everything.  When it does not answer: QM_EDEVICE, and what the device
     *  may still write (its buffers, its stream) is abandoned, not freed. */
    int (*close)(void *ctx, unsigned timeout_ms);
    /** Last error text (a failed device call, named), or NULL. */
    const char *(*error)(void *ctx);
    /** For benchmarks and tools that give the engine pictures already on the
     *  device (QM_PICTURE_DEVICE): a device copy of n bytes of host memory,
     *  or NULL; and its release.  Optional (NULL where not offered). */
    void *(*device_copy)(const void *src, size_t n);
    void (*device_free)(void *p);
} QmBackendOps;

/** The CUDA backend, or NULL in a build without it: the one place where the
 *  build decides (meson compiles cuda/gpu.c or cuda/gpu_none.c). */
const QmBackendOps *qm_backend_cuda(void);

/** Milliseconds the scheduler waits for a backend's frame (and for its
 *  close) before it reports the device as not answering, unless
 *  QmSettings.device_timeout_ms says otherwise.  A frame takes milliseconds
 *  on a GPU; ten seconds means the device has stopped. */
#define QM_DEVICE_TIMEOUT_MS 10000

/** qm_engine_open() with another accelerator backend than qm_backend_cuda()
 *  (NULL: none); for tests of the scheduler. */
int qm_engine_open_with(QmEngine **out, const QmSettings *s,
                        const QmBackendOps *accel, char **errmsg);

#ifdef __cplusplus
}
#endif
#endif /* QM_BACKEND_H */
