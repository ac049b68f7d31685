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
                  size_t limit)
{
    const long ps = sysconf(_SC_PAGESIZE);
    const size_t page = ps > 0 ? (size_t)ps : 4096;
    *w = (HostWin){ .e = e, .map = map, .size = size, .frame = frame, .limit = limit };
    w->off = !map || !size || !frame;
    w->mapped = (size + page - 1) / page * page;
    /* four chunks to a window: one being read, the next, and room for the
     * frames still in flight behind; a chunk holds at least one frame */
    size_t want = limit / 4 > frame ? limit / 4 : frame;
    const size_t g = frame ? gcd(frame, page) : page;
    const size_t whole = frame / g * page;  /* frames and pages end together */
    if (frame && whole <= want)
        w->chunk = want / whole * whole;
    else
        w->chunk = (want + page - 1) / page * page;
    if (w->limit < 2 * w->chunk)
        w->limit = 2 * w->chunk;
}

/* Register chunk c; false when the window stops (refused, or an error). */
static int reg_chunk(HostWin *w, uint64_t c)
{
    const size_t lo = (size_t)c * w->chunk;
    const size_t hi = lo + w->chunk < w->mapped ? lo + w->chunk : w->mapped;
    const int r = qm_engine_register_host(w->e, w->map + lo, hi - lo);
    if (r == 1) {
        w->bytes += hi - lo;
        w->calls++;
    }
    return r;
}

int hostwin_need(HostWin *w, uint64_t n, uint64_t done)
{
    if (w->off)
        return 0;
    const double t0 = now_s();
    int ret = 0;
    /* chunk lo is free once the last frame starting in it was received */
    while (w->lo < w->hi && ((w->lo + 1) * w->chunk - 1) / w->frame < done) {
        if ((ret = qm_engine_unregister_host(w->e, w->map + w->lo * w->chunk)) < 0)
            break;
        w->lo++;
    }
    const uint64_t c0 = n * w->frame / w->chunk;
    const uint64_t c1 = ((n + 1) * w->frame - 1) / w->chunk;
    if (!ret && w->lo == w->hi)
        w->lo = w->hi = c0;  /* nothing registered: start at frame n */
    while (!ret && w->hi <= c1 && (size_t)(w->hi * w->chunk) < w->mapped &&
           (w->hi + 1 - w->lo) * w->chunk <= w->limit) {
        const int r = reg_chunk(w, w->hi);
        if (r != 1) {
            ret = r;
            w->off = true;  /* refused (0) or failed: staging from now on */
            break;
        }
        w->hi++;
    }
    if (ret < 0)
        w->off = true;
    w->secs += now_s() - t0;
    return ret < 0 ? ret : 0;
}

void hostwin_close(HostWin *w)
{
    const double t0 = now_s();
    for (; w->lo < w->hi; w->lo++)
        qm_engine_unregister_host(w->e, w->map + w->lo * w->chunk);
    w->secs += now_s() - t0;
}
