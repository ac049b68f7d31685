/* gst-qmetric: worker threads for a CUDA twin's host work.
 *
 * A frame's GPU results sometimes need host work before they are features
 * (SpEED chroma's eigenvalues and entropies, cuda/speed_chroma.cu).  Done inside
 * collect(), that work holds the engine's one backend thread, which also
 * launches every metric's kernels: at 1080p it bounded the frame rate.
 * Here the twin posts the frame's jobs once the backend sees the frame's
 * event complete (host_done(), cuda/qm_cuda.h), worker threads run them
 * while the engine submits the next frames, and a later host_done() or
 * collect() only checks, or waits, that the group (a slot) is done.
 * (Posting from a cudaLaunchHostFunc callback instead held the twin's
 * stream for the callback's wake-up: its span doubled.)
 *
 * Groups are independent (one per slot); a group's jobs are posted all at
 * once and waited for once.  Plain C and pthreads, no CUDA: tested on any
 * machine (tests/jobqueue_test.c). */
#ifndef QM_JOBQUEUE_H
#define QM_JOBQUEUE_H

#include <pthread.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define QM_JOBQ_MAX_THREADS 8

/* Job `job` (0 .. n - 1) of group `group`, on worker `worker` (0 ..
 * threads - 1: an index for per-worker scratch). */
typedef void (*QmJobFn)(void *arg, unsigned group, unsigned job, unsigned worker);

/* Called once a group's last job is done, on the worker that finished it,
 * without the queue's lock; qm_jobq_wait() sees the group done only once it
 * has returned. */
typedef void (*QmGroupDoneFn)(void *arg, unsigned group);

typedef struct QmJobGroup {
    unsigned n;        /* jobs posted */
    unsigned next;     /* the next job a worker takes */
    unsigned done;     /* jobs finished */
    bool posted;       /* posted and not yet waited for */
} QmJobGroup;

typedef struct QmJobQueue {
    pthread_t th[QM_JOBQ_MAX_THREADS];
    unsigned n_th;
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    QmJobGroup *g;
    unsigned n_groups;
    unsigned *order;      /* groups with jobs to take, oldest first (a ring) */
    unsigned head, count;
    bool quit, inited;
    QmJobFn fn;
    QmGroupDoneFn done_fn;  /* optional: qm_jobq_on_done() */
    void *arg;
} QmJobQueue;

/** Start `threads` workers (1 .. QM_JOBQ_MAX_THREADS) for `groups` groups.
 *  Returns 0, or -1 when nothing could be allocated; a queue that starts no
 *  thread runs each group's jobs in qm_jobq_wait() instead (never an error).
 *  *q must be zeroed before. */
int qm_jobq_start(QmJobQueue *q, unsigned threads, unsigned groups, QmJobFn fn, void *arg);

/** Call done_fn(arg, group) when a group's last job is done, on the worker
 *  thread that did it (set before the first post).  A queue without
 *  threads never calls it: its jobs run in qm_jobq_wait(), under whatever
 *  lock that caller holds. */
void qm_jobq_on_done(QmJobQueue *q, QmGroupDoneFn done_fn);

/** Post jobs 0 .. n - 1 of a group that is not posted (any thread, e.g. a
 *  CUDA host function).  Returns 0, or -1 for a group already posted or
 *  out of range. */
int qm_jobq_post(QmJobQueue *q, unsigned group, unsigned n);

/** Wait until the group's jobs are done; the group is then free to be
 *  posted again.  Returns 1 when done, 0 when the group was not posted
 *  within timeout_ms, -1 for a group out of range. */
int qm_jobq_wait(QmJobQueue *q, unsigned group, unsigned timeout_ms);

/** Finish the jobs taken, drop the others, join the threads, free. */
void qm_jobq_stop(QmJobQueue *q);

#ifdef __cplusplus
}
#endif

#endif
