/* gst-qmetric: worker threads for a CUDA twin's host work
 * (jobqueue.h says why). */
#include "jobqueue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* With the lock held: the next job, oldest group first, or false.  A
 * group leaves the ring with its last job taken, so a group is in it at
 * most once (it cannot be posted again before that job is done). */
static bool take(QmJobQueue *q, unsigned *group, unsigned *job)
{
    if (!q->count)
        return false;
    const unsigned gi = q->order[q->head];
    QmJobGroup *g = &q->g[gi];
    *group = gi;
    *job = g->next++;
    if (g->next == g->n) {
        q->head = (q->head + 1) % q->n_groups;
        q->count--;
    }
    return true;
}

static void finish(QmJobQueue *q, unsigned group)
{
    if (++q->g[group].done == q->g[group].n)
        pthread_cond_broadcast(&q->done);
}

typedef struct Worker {
    QmJobQueue *q;
    unsigned index;
} Worker;

static void *worker_main(void *arg)
{
    QmJobQueue *q = ((Worker *)arg)->q;
    const unsigned me = ((Worker *)arg)->index;
    free(arg);
    pthread_mutex_lock(&q->lock);
    for (;;) {
        unsigned group, job;
        while (!q->quit && !take(q, &group, &job))
            pthread_cond_wait(&q->work, &q->lock);
        if (q->quit)
            break;
        pthread_mutex_unlock(&q->lock);
        q->fn(q->arg, group, job, me);
        pthread_mutex_lock(&q->lock);
        if (q->done_fn && q->g[group].done + 1 == q->g[group].n) {
            /* the last job: every other one is counted, and the group
             * cannot be waited for, nor posted again, until it is too */
            pthread_mutex_unlock(&q->lock);
            q->done_fn(q->arg, group);
            pthread_mutex_lock(&q->lock);
        }
        finish(q, group);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

int qm_jobq_start(QmJobQueue *q, unsigned threads, unsigned groups, QmJobFn fn, void *arg)
{
    q->g = calloc(groups ? groups : 1, sizeof(*q->g));
    q->order = calloc(groups ? groups : 1, sizeof(*q->order));
    if (!q->g || !q->order) {
        free(q->g);
        free(q->order);
        q->g = NULL;
        q->order = NULL;
        return -1;
    }
    q->n_groups = groups ? groups : 1;
    q->fn = fn;
    q->arg = arg;
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&q->done, &ca);
    pthread_condattr_destroy(&ca);
    q->inited = true;
    if (threads > QM_JOBQ_MAX_THREADS)
        threads = QM_JOBQ_MAX_THREADS;
    for (unsigned i = 0; i < threads; i++) {
        Worker *w = malloc(sizeof(*w));
        if (!w)
            break;
        w->q = q;
        w->index = q->n_th;
        if (pthread_create(&q->th[q->n_th], NULL, worker_main, w)) {
            free(w);
            break;
        }
        q->n_th++;
    }
    return 0;
}

void qm_jobq_on_done(QmJobQueue *q, QmGroupDoneFn done_fn)
{
    q->done_fn = done_fn;
}

int qm_jobq_post(QmJobQueue *q, unsigned group, unsigned n)
{
    if (!q->inited || group >= q->n_groups)
        return -1;
    pthread_mutex_lock(&q->lock);
    QmJobGroup *g = &q->g[group];
    if (g->posted) {
        pthread_mutex_unlock(&q->lock);
        return -1;
    }
    g->n = n;
    g->next = g->done = 0;
    g->posted = true;
    if (n && q->n_th) {
        q->order[(q->head + q->count) % q->n_groups] = group;
        q->count++;
        pthread_cond_broadcast(&q->work);
    } else {
        /* nothing to run, or no worker: a waiting qm_jobq_wait() runs them */
        pthread_cond_broadcast(&q->done);
    }
    pthread_mutex_unlock(&q->lock);
    return 0;
}

int qm_jobq_wait(QmJobQueue *q, unsigned group, unsigned timeout_ms)
{
    if (!q->inited || group >= q->n_groups)
        return -1;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&q->lock);
    QmJobGroup *g = &q->g[group];
    int ret = 1;
    for (;;) {
        if (g->posted && !q->n_th) {
            /* no worker: run the jobs here */
            while (g->next < g->n) {
                const unsigned job = g->next++;
                pthread_mutex_unlock(&q->lock);
                q->fn(q->arg, group, job, 0);
                pthread_mutex_lock(&q->lock);
                finish(q, group);
            }
        }
        if (g->posted && g->done == g->n)
            break;
        if (pthread_cond_timedwait(&q->done, &q->lock, &until) == ETIMEDOUT &&
            !(g->posted && g->done == g->n)) {
            ret = 0;
            break;
        }
    }
    if (ret == 1)
        g->posted = false;
    pthread_mutex_unlock(&q->lock);
    return ret;
}

void qm_jobq_stop(QmJobQueue *q)
{
    if (!q->inited)
        return;
    pthread_mutex_lock(&q->lock);
    q->quit = true;
    pthread_cond_broadcast(&q->work);
    pthread_mutex_unlock(&q->lock);
    for (unsigned i = 0; i < q->n_th; i++)
        pthread_join(q->th[i], NULL);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->done);
    free(q->g);
    free(q->order);
    memset(q, 0, sizeof(*q));
}
