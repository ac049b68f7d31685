/* gst-qmetric: the staging copy shared by a few threads (copypool.h). */
#include "copypool.h"

#include <string.h>

/* Copy global rows [r0, r1) of the runs (their rows counted back to back). */
static void copy_rows(const QmCopyRun *runs, int n_runs, int r0, int r1)
{
    for (int i = 0; i < n_runs && r0 < r1; i++) {
        const QmCopyRun *c = &runs[i];
        if (r0 >= c->rows) {
            r0 -= c->rows;
            r1 -= c->rows;
            continue;
        }
        const int end = r1 < c->rows ? r1 : c->rows;
        for (int y = r0; y < end; y++)
            memcpy(c->dst + (size_t)y * c->dpitch, c->src + (ptrdiff_t)y * c->spitch, c->row);
        r0 = 0;
        r1 -= c->rows;
    }
}

static void copy_part(void *arg, unsigned k, unsigned parts)
{
    QmCopyPool *cp = arg;
    const int r0 = (int)((int64_t)cp->total_rows * k / parts);
    const int r1 = (int)((int64_t)cp->total_rows * (k + 1) / parts);
    copy_rows(cp->runs, cp->n_runs, r0, r1);
}

struct FjStart {
    QmForkJoin *fj;
    unsigned part;
};

static void *fj_thread(void *arg)
{
    struct FjStart *st = arg;
    QmForkJoin *fj = st->fj;
    const unsigned k = st->part;
    pthread_mutex_lock(&fj->lock);
    uint64_t seen = fj->gen;
    fj->pending++;                    /* started: the caller may go on */
    pthread_cond_signal(&fj->done);
    for (;;) {
        while (fj->gen == seen && !fj->quit)
            pthread_cond_wait(&fj->go, &fj->lock);
        if (fj->quit)
            break;
        seen = fj->gen;
        pthread_mutex_unlock(&fj->lock);
        fj->fn(fj->arg, k, fj->parts);
        pthread_mutex_lock(&fj->lock);
        if (--fj->pending == 0)
            pthread_cond_signal(&fj->done);
    }
    pthread_mutex_unlock(&fj->lock);
    return NULL;
}

void qm_fork_join_start(QmForkJoin *fj, unsigned threads)
{
    struct FjStart st[QM_COPY_MAX_THREADS];
    fj->parts = 1;
    if (threads <= 1 || pthread_mutex_init(&fj->lock, NULL))
        return;
    if (pthread_cond_init(&fj->go, NULL)) {
        pthread_mutex_destroy(&fj->lock);
        return;
    }
    if (pthread_cond_init(&fj->done, NULL)) {
        pthread_cond_destroy(&fj->go);
        pthread_mutex_destroy(&fj->lock);
        return;
    }
    fj->inited = true;
    if (threads > QM_COPY_MAX_THREADS)
        threads = QM_COPY_MAX_THREADS;
    pthread_mutex_lock(&fj->lock);
    for (unsigned i = 0; i + 1 < threads; i++) {
        st[i].fj = fj;
        st[i].part = 1 + i;
        if (pthread_create(&fj->th[i], NULL, fj_thread, &st[i]))
            break;
        fj->n_th++;
    }
    /* each thread has read its start (st lives on this stack) */
    while (fj->pending < fj->n_th)
        pthread_cond_wait(&fj->done, &fj->lock);
    fj->pending = 0;
    pthread_mutex_unlock(&fj->lock);
    fj->parts = 1 + fj->n_th;
}

void qm_fork_join_stop(QmForkJoin *fj)
{
    if (!fj->inited)
        return;
    pthread_mutex_lock(&fj->lock);
    fj->quit = true;
    pthread_cond_broadcast(&fj->go);
    pthread_mutex_unlock(&fj->lock);
    for (unsigned i = 0; i < fj->n_th; i++)
        pthread_join(fj->th[i], NULL);
    pthread_cond_destroy(&fj->go);
    pthread_cond_destroy(&fj->done);
    pthread_mutex_destroy(&fj->lock);
    fj->n_th = 0;
    fj->parts = 1;
    fj->inited = false;
}

void qm_fork_join_run(QmForkJoin *fj, QmPartFn fn, void *arg)
{
    if (fj->parts <= 1) {
        fn(arg, 0, 1);
        return;
    }
    pthread_mutex_lock(&fj->lock);
    fj->fn = fn;
    fj->arg = arg;
    fj->pending = fj->n_th;
    fj->gen++;
    pthread_cond_broadcast(&fj->go);
    pthread_mutex_unlock(&fj->lock);
    fn(arg, 0, fj->parts);
    pthread_mutex_lock(&fj->lock);
    while (fj->pending)
        pthread_cond_wait(&fj->done, &fj->lock);
    pthread_mutex_unlock(&fj->lock);
}

void qm_copy_pool_start(QmCopyPool *cp, unsigned threads)
{
    qm_fork_join_start(&cp->fj, threads);
    cp->parts = cp->fj.parts;
    cp->min_bytes = (size_t)1 << 20;
}

void qm_copy_pool_stop(QmCopyPool *cp)
{
    qm_fork_join_stop(&cp->fj);
    cp->parts = 1;
}

/* Small pictures are copied by the caller alone: waking threads would cost
 * more than they save. */
void qm_copy_run(QmCopyPool *cp, const QmCopyRun *runs, int n_runs)
{
    size_t bytes = 0;
    int rows = 0;
    for (int i = 0; i < n_runs; i++) {
        bytes += runs[i].row * (size_t)runs[i].rows;
        rows += runs[i].rows;
    }
    if (cp->parts <= 1 || bytes < cp->min_bytes) {
        copy_rows(runs, n_runs, 0, rows);
        return;
    }
    cp->runs = runs;
    cp->n_runs = n_runs;
    cp->total_rows = rows;
    qm_fork_join_run(&cp->fj, copy_part, cp);
}
