/* gst-qmetric tools: map in the pages of mapped input files ahead of the
 * reader (prefault.h says why). */
#include "prefault.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  /* Linux 5.14 */
#endif

#define MAX_MAPS 4

struct QmPrefault {
    pthread_t th;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    const uint8_t *map[MAX_MAPS];
    size_t size[MAX_MAPS];
    int n;
    size_t frame, page;
    unsigned ahead;
    uint64_t reading;     /* the reader's frame */
    uint64_t next;        /* the first frame not yet populated */
    bool quit, touch;     /* touch: no MADV_POPULATE_READ here */
};

/* Populate bytes [off, off + len) of mapping i. */
static void populate(QmPrefault *pf, int i, size_t off, size_t len)
{
    if (off >= pf->size[i])
        return;
    if (len > pf->size[i] - off)
        len = pf->size[i] - off;
    const uintptr_t a = (uintptr_t)(pf->map[i] + off);
    const uintptr_t start = a & ~(uintptr_t)(pf->page - 1);
    const size_t span = a + len - start;
    if (!pf->touch && madvise((void *)start, span, MADV_POPULATE_READ) == 0)
        return;
    if (!pf->touch && errno != EINVAL)
        return;  /* e.g. EFAULT past the end of the file: the reader sees it */
    pf->touch = true;
    volatile uint8_t sink = 0;
    for (uintptr_t p = start; p < a + len; p += pf->page)
        sink ^= *(const volatile uint8_t *)p;
    (void)sink;
}

static void *prefault_main(void *arg)
{
    QmPrefault *pf = arg;
    pthread_mutex_lock(&pf->lock);
    for (;;) {
        while (!pf->quit && pf->next >= pf->reading + pf->ahead)
            pthread_cond_wait(&pf->cv, &pf->lock);
        if (pf->quit)
            break;
        const uint64_t f = pf->next > pf->reading ? pf->next : pf->reading;
        pthread_mutex_unlock(&pf->lock);
        for (int i = 0; i < pf->n; i++)
            populate(pf, i, (size_t)f * pf->frame, pf->frame);
        pthread_mutex_lock(&pf->lock);
        pf->next = f + 1;
    }
    pthread_mutex_unlock(&pf->lock);
    return NULL;
}

QmPrefault *qm_prefault_start(const uint8_t *const maps[], const size_t sizes[], int n,
                              size_t frame, unsigned ahead)
{
    if (n < 1 || n > MAX_MAPS || !frame || !ahead)
        return NULL;
    QmPrefault *pf = calloc(1, sizeof(*pf));
    if (!pf)
        return NULL;
    for (int i = 0; i < n; i++) {
        pf->map[i] = maps[i];
        pf->size[i] = sizes[i];
    }
    pf->n = n;
    pf->frame = frame;
    pf->ahead = ahead;
    const long ps = sysconf(_SC_PAGESIZE);
    pf->page = ps > 0 ? (size_t)ps : 4096;
    pthread_mutex_init(&pf->lock, NULL);
    pthread_cond_init(&pf->cv, NULL);
    if (pthread_create(&pf->th, NULL, prefault_main, pf)) {
        pthread_mutex_destroy(&pf->lock);
        pthread_cond_destroy(&pf->cv);
        free(pf);
        return NULL;
    }
    return pf;
}

void qm_prefault_reading(QmPrefault *pf, uint64_t frame)
{
    if (!pf)
        return;
    pthread_mutex_lock(&pf->lock);
    if (frame > pf->reading) {
        pf->reading = frame;
        pthread_cond_signal(&pf->cv);
    }
    pthread_mutex_unlock(&pf->lock);
}

void qm_prefault_stop(QmPrefault *pf)
{
    if (!pf)
        return;
    pthread_mutex_lock(&pf->lock);
    pf->quit = true;
    pthread_cond_signal(&pf->cv);
    pthread_mutex_unlock(&pf->lock);
    pthread_join(pf->th, NULL);
    pthread_mutex_destroy(&pf->lock);
    pthread_cond_destroy(&pf->cv);
    free(pf);
}
