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
    /* four chunks to a window: the one being read, the next, and the
     * frames still in flight behind; a chunk holds at least one frame */
    const size_t want = limit / 4 > frame ? limit / 4 : frame;
    const size_t whole = frame / gcd(frame, page) * page;  /* frames and pages end together */
    w->chunk = whole <= want ? want / whole * whole : (want + page - 1) / page * page;
    if (w->limit < 2 * w->chunk)
        w->limit = 2 * w->chunk;
    w->lo = w->hi = (size_t)first * frame / w->chunk;
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
    const uint64_t first = n * w->frame / w->chunk, last = ((n + 1) * w->frame - 1) / w->chunk;
    if (w->lo == w->hi && w->hi < first)
        w->lo = w->hi = first;  /* frames passed while the window was full */
    while (!ret && w->hi <= last && w->hi * w->chunk < w->end &&
           (w->hi + 1 - w->lo) * w->chunk <= w->limit) {
        const size_t lo = w->hi * w->chunk;
        const size_t len = lo + w->chunk < w->end ? w->chunk : w->end - lo;
        const int r = qm_engine_register_host(w->e, w->map + lo, len);
        if (r != 1) {
            ret = r;
            w->off = true;  /* refused (0) or failed: staging from now on */
            break;
        }
        w->hi++;
        w->bytes += len;
        w->calls++;
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
