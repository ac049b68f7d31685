/* gst-qmetric: a few threads that run the parts of one piece of host work
 * at once (QmForkJoin: the calling thread runs part 0 and waits for the
 * others), and on them the rows of host pictures copied into the GPU
 * backend's pinned staging (QmCopyPool).  One core's memcpy cannot keep up
 * with the kernels at HD and above (about 1,000 frame pairs/s at 1080p).
 * (SpEED chroma's host stage has worker threads of its own: jobqueue.h.)
 * Plain C and pthreads (no CUDA), so that it is tested on
 * any machine (tests/copypool_test.c). */
#ifndef QM_COPYPOOL_H
#define QM_COPYPOOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* `rows` rows of `row` bytes from src (spitch bytes apart) to dst (dpitch
 * bytes apart). */
typedef struct QmCopyRun {
    uint8_t *dst;
    const uint8_t *src;
    size_t dpitch, row;
    ptrdiff_t spitch;
    int rows;
} QmCopyRun;

#define QM_COPY_MAX_THREADS 8

/* fn(arg, part, parts) for part 0 .. parts - 1, each on its own thread. */
typedef void (*QmPartFn)(void *arg, unsigned part, unsigned parts);

typedef struct QmForkJoin {
    pthread_t th[QM_COPY_MAX_THREADS - 1];
    unsigned n_th, parts;
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    uint64_t gen;
    unsigned pending;
    bool quit, inited;
    QmPartFn fn;
    void *arg;
} QmForkJoin;

/** Start threads - 1 helper threads (at most QM_COPY_MAX_THREADS in all);
 *  parts = 1 + the helpers started.  A pool that cannot start threads runs
 *  every part in the caller: never an error.  *fj must be zeroed before; a
 *  zeroed pool is a valid one-thread pool. */
void qm_fork_join_start(QmForkJoin *fj, unsigned threads);

/** Run fn's parts (part 0 in the caller); returns when all are done.
 *  Calls must not overlap (one calling thread). */
void qm_fork_join_run(QmForkJoin *fj, QmPartFn fn, void *arg);

/** Join the threads. */
void qm_fork_join_stop(QmForkJoin *fj);

typedef struct QmCopyPool {
    QmForkJoin fj;
    unsigned parts;    /* fj.parts, once started */
    const QmCopyRun *runs;
    int n_runs, total_rows;
    size_t min_bytes;  /* below this the caller copies alone */
} QmCopyPool;

/** Start threads - 1 helper threads (at most QM_COPY_MAX_THREADS in all).
 *  A pool that cannot start threads copies in the caller: never an error.
 *  *cp must be zeroed before; a zeroed pool is a valid one-thread pool. */
void qm_copy_pool_start(QmCopyPool *cp, unsigned threads);

/** Copy every run; returns when all rows are written.  Calls must not
 *  overlap (one submitting thread). */
void qm_copy_run(QmCopyPool *cp, const QmCopyRun *runs, int n_runs);

/** Join the threads. */
void qm_copy_pool_stop(QmCopyPool *cp);

#ifdef __cplusplus
}
#endif
#endif /* QM_COPYPOOL_H */
