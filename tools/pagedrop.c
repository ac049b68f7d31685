/* gst-qmetric: drop the pages of a mapped input file behind the run
 * (pagedrop.h says why). */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pagedrop.h"

/* Bytes dropped at a time: one madvise() for several frames (about ten
 * at 1080p 4:2:0) keeps the calls few, and the page tables of a batch are
 * small beside a run's. */
#define BATCH ((size_t)32 << 20)

struct QmPageDrop {
    pthread_mutex_t mu;
    pthread_cond_t cv;    /* wakes the thread: a batch to drop, or stop */
    pthread_cond_t idle;  /* wakes qm_pagedrop_sync() */
    pthread_t th;
    const unsigned char *base;
    size_t size, page;
    uint64_t next;        /* every frame before it has been told */
    size_t done;          /* the end of frame next - 1: bytes below are done */
    size_t dropped;       /* bytes below were dropped (a page multiple) */
    bool busy, stop;
    bool flush;           /* qm_pagedrop_sync() waits: drop less than a batch too */
    size_t end[QM_PAGEDROP_WINDOW]; /* frames next.. told early: their end + 1 */
};

static size_t droppable(const QmPageDrop *d)
{
    size_t to = d->done & ~(d->page - 1);
    return to > d->dropped ? to - d->dropped : 0;
}

/* Whether the thread has pages to drop now. */
static bool due(const QmPageDrop *d)
{
    return droppable(d) >= (d->flush ? 1 : BATCH);
}

static void *drop_main(void *arg)
{
    QmPageDrop *d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->stop && !due(d)) {
            pthread_cond_broadcast(&d->idle);
            pthread_cond_wait(&d->cv, &d->mu);
        }
        if (d->stop)
            break;
        const size_t from = d->dropped, n = droppable(d);
        d->busy = true;
        pthread_mutex_unlock(&d->mu);
        /* a private or shared read-only mapping of a file: its pages go
         * from the page tables, the file's data stays in the page cache */
        madvise((void *)(d->base + from), n, MADV_DONTNEED);
        pthread_mutex_lock(&d->mu);
        d->dropped = from + n;
        d->busy = false;
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

QmPageDrop *qm_pagedrop_new(const void *base, size_t size)
{
    QmPageDrop *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    long pg = sysconf(_SC_PAGESIZE);
    d->page = pg > 0 ? (size_t)pg : 4096;
    d->base = base;
    d->size = size;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    pthread_cond_init(&d->idle, NULL);
    if (pthread_create(&d->th, NULL, drop_main, d)) {
        pthread_cond_destroy(&d->idle);
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->mu);
        free(d);
        return NULL;
    }
    return d;
}

void qm_pagedrop_done(QmPageDrop *d, uint64_t index, size_t end)
{
    if (!d)
        return;
    if (end > d->size)
        end = d->size;
    pthread_mutex_lock(&d->mu);
    if (index >= d->next && index - d->next < QM_PAGEDROP_WINDOW) {
        d->end[index % QM_PAGEDROP_WINDOW] = end + 1;
        size_t *e;
        while (*(e = &d->end[d->next % QM_PAGEDROP_WINDOW])) {
            if (*e - 1 > d->done)
                d->done = *e - 1;
            *e = 0;
            d->next++;
        }
        if (due(d))
            pthread_cond_signal(&d->cv);
    }
    pthread_mutex_unlock(&d->mu);
}

size_t qm_pagedrop_sync(QmPageDrop *d)
{
    if (!d)
        return 0;
    pthread_mutex_lock(&d->mu);
    /* the thread drops what is left below a batch too */
    d->flush = true;
    pthread_cond_signal(&d->cv);
    while (d->busy || droppable(d))
        pthread_cond_wait(&d->idle, &d->mu);
    d->flush = false;
    size_t r = d->dropped;
    pthread_mutex_unlock(&d->mu);
    return r;
}

void qm_pagedrop_free(QmPageDrop *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->mu);
    d->stop = true;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->th, NULL);
    pthread_cond_destroy(&d->idle);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
}
