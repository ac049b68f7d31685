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

static void copy_part(QmCopyPool *cp, unsigned k)
{
    const int r0 = (int)((int64_t)cp->total_rows * k / cp->parts);
    const int r1 = (int)((int64_t)cp->total_rows * (k + 1) / cp->parts);
    copy_rows(cp->runs, cp->n_runs, r0, r1);
}

static void *copy_thread(void *arg)
{
    QmCopyPool *cp = arg;
    pthread_mutex_lock(&cp->lock);
    const unsigned k = 1 + cp->pending++;  /* this thread's part */
    pthread_cond_signal(&cp->done);
    uint64_t seen = cp->gen;
    for (;;) {
        while (cp->gen == seen && !cp->quit)
            pthread_cond_wait(&cp->go, &cp->lock);
        if (cp->quit)
            break;
        seen = cp->gen;
        pthread_mutex_unlock(&cp->lock);
        copy_part(cp, k);
        pthread_mutex_lock(&cp->lock);
        if (--cp->pending == 0)
            pthread_cond_signal(&cp->done);
    }
    pthread_mutex_unlock(&cp->lock);
    return NULL;
}

void qm_copy_pool_start(QmCopyPool *cp, unsigned threads)
{
    cp->parts = 1;
    if (threads <= 1 || pthread_mutex_init(&cp->lock, NULL))
        return;
    if (pthread_cond_init(&cp->go, NULL)) {
        pthread_mutex_destroy(&cp->lock);
        return;
    }
    if (pthread_cond_init(&cp->done, NULL)) {
        pthread_cond_destroy(&cp->go);
        pthread_mutex_destroy(&cp->lock);
        return;
    }
    cp->inited = true;
    cp->min_bytes = (size_t)1 << 20;
    if (threads > QM_COPY_MAX_THREADS)
        threads = QM_COPY_MAX_THREADS;
    pthread_mutex_lock(&cp->lock);
    for (unsigned i = 0; i + 1 < threads; i++) {
        if (pthread_create(&cp->th[i], NULL, copy_thread, cp))
            break;
        cp->n_th++;
    }
    /* each thread takes its part number on start */
    while (cp->pending < cp->n_th)
        pthread_cond_wait(&cp->done, &cp->lock);
    cp->pending = 0;
    pthread_mutex_unlock(&cp->lock);
    cp->parts = 1 + cp->n_th;
}

void qm_copy_pool_stop(QmCopyPool *cp)
{
    if (!cp->inited)
        return;
    pthread_mutex_lock(&cp->lock);
    cp->quit = true;
    pthread_cond_broadcast(&cp->go);
    pthread_mutex_unlock(&cp->lock);
    for (unsigned i = 0; i < cp->n_th; i++)
        pthread_join(cp->th[i], NULL);
    pthread_cond_destroy(&cp->go);
    pthread_cond_destroy(&cp->done);
    pthread_mutex_destroy(&cp->lock);
    cp->inited = false;
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
    pthread_mutex_lock(&cp->lock);
    cp->runs = runs;
    cp->n_runs = n_runs;
    cp->total_rows = rows;
    cp->pending = cp->n_th;
    cp->gen++;
    pthread_cond_broadcast(&cp->go);
    pthread_mutex_unlock(&cp->lock);
    copy_part(cp, 0);
    pthread_mutex_lock(&cp->lock);
    while (cp->pending)
        pthread_cond_wait(&cp->done, &cp->lock);
    pthread_mutex_unlock(&cp->lock);
}
