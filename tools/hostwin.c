/* qmetric-yuv: the registered window of a mapped input (hostwin.h). */
#include "hostwin.h"

#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t gcd(size_t a, size_t b)
{
    while (b) {
        const size_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

void hostwin_init(HostWin *w, QmEngine *e, const uint8_t *map, size_t size, size_t frame,
                  uint64_t first, uint64_t last, size_t limit)
{
    const long ps = sysconf(_SC_PAGESIZE);
    const size_t page = ps > 0 ? (size_t)ps : 4096;
    *w = (HostWin){ .e = e, .map = map, .frame = frame, .limit = limit };
    w->off = !map || !frame || first >= size / frame;
    if (w->off)
        return;
    if (last > size / frame)
        last = size / frame;
    w->end = ((size_t)last * frame + page - 1) / page * page;  /* inside the mapping */
    /* four chunks to a window: the one being read, the next ones, and the
     * frames still in flight behind; a chunk holds at least one frame */
    const size_t want = limit / 4 > frame ? limit / 4 : frame;
    const size_t whole = frame / gcd(frame, page) * page;  /* frames and pages end together */
    w->chunk = whole <= want ? want / whole * whole : (want + page - 1) / page * page;
    if (w->limit < 2 * w->chunk)
        w->limit = 2 * w->chunk;
    w->lo = w->hi = (size_t)first * frame / w->chunk;
    w->done = first;
}

/* The thread: unregister what the frames received no longer need, register
 * ahead while the window has room; the lock is dropped around each call. */
static void *win_main(void *arg)
{
    HostWin *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->quit) {
        const bool drop = w->lo < w->hi &&
                          ((w->lo + 1) * w->chunk - 1) / w->frame < w->done;
        const bool add = !w->off && w->hi * w->chunk < w->end &&
                         (w->hi + 1 - w->lo) * w->chunk <= w->limit;
        if (!drop && !add) {
            pthread_cond_wait(&w->cv, &w->lock);
            continue;
        }
        const uint64_t c = drop ? w->lo : w->hi;
        const uint8_t *p = w->map + c * w->chunk;
        const size_t n = (c + 1) * w->chunk < w->end ? w->chunk : w->end - c * w->chunk;
        pthread_mutex_unlock(&w->lock);
        const double t0 = now_s();
        const int r = drop ? qm_engine_unregister_host(w->e, p) : qm_engine_register_host(w->e, p, n);
        const double dt = now_s() - t0;
        pthread_mutex_lock(&w->lock);
        w->secs += dt;
        if (drop) {
            w->lo++;  /* a failed unregister leaves it to the engine's close */
        } else if (r == 1) {
            w->hi++;
            w->bytes += n;
            w->calls++;
        } else {
            w->off = true;  /* refused (0) or failed: staging from now on */
        }
        if (r < 0 && !w->err)
            w->err = r;
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* The first chunk is registered by the caller, before the first frame is
 * submitted (so that a short run has its frames registered too); the
 * thread takes over from there.  Without a thread: only that chunk. */
static int start(HostWin *w)
{
    const size_t n = w->chunk < w->end - w->lo * w->chunk ? w->chunk : w->end - w->lo * w->chunk;
    const double t0 = now_s();
    const int r = qm_engine_register_host(w->e, w->map + w->lo * w->chunk, n);
    w->secs += now_s() - t0;
    if (r != 1) {
        w->off = true;  /* refused (0) or failed: every frame staged */
        return r < 0 ? r : 0;
    }
    w->hi++;
    w->bytes += n;
    w->calls++;
    if (pthread_mutex_init(&w->lock, NULL))
        return 0;
    if (pthread_cond_init(&w->cv, NULL)) {
        pthread_mutex_destroy(&w->lock);
        return 0;
    }
    if (pthread_create(&w->th, NULL, win_main, w)) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->lock);
        return 0;
    }
    w->started = true;
    return 0;
}

int hostwin_progress(HostWin *w, uint64_t done)
{
    if (!w->started && !w->calls && !w->off)
        return start(w);
    if (!w->started)
        return 0;  /* nothing to register, or only the first chunk */
    pthread_mutex_lock(&w->lock);
    w->done = done;
    const int err = w->err;
    w->err = 0;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->lock);
    return err;
}

void hostwin_close(HostWin *w)
{
    if (w->started) {
        pthread_mutex_lock(&w->lock);
        w->quit = true;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->th, NULL);
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->lock);
        w->started = false;
    }
    const double t0 = now_s();
    for (; w->lo < w->hi; w->lo++)
        qm_engine_unregister_host(w->e, w->map + w->lo * w->chunk);
    w->secs += now_s() - t0;
}
