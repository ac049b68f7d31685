/* qmetric-yuv: the part of a mapped input file registered with the engine
 * for direct transfers to the device (qm_engine_register_host).
 *
 * Registering pins pages, so a file is registered a chunk at a time, just
 * before its first frame is submitted, and each chunk is unregistered once
 * every frame touching it has been received: at most `limit` bytes of a
 * file are pinned at once, whatever its length, and only the frames a run
 * reads are ever pinned (the time it takes is part of the run's).  It is
 * done by the thread that drives the engine: on the H100 host, uploads
 * issued by another thread stalled for the whole of a registration
 * (docs/benchmarks.md), so a thread of its own would gain nothing.  Chunks
 * are whole pages and, where a few frames make a whole number of pages,
 * whole frames; otherwise a frame across a chunk boundary lies in no single
 * registered range and is staged (counted as such).
 */
#ifndef QM_HOSTWIN_H
#define QM_HOSTWIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qm.h"

/* The default bound on a file's registered bytes (qmetric-yuv
 * --register-limit, in MiB). */
#define HOSTWIN_DEFAULT_LIMIT ((size_t)1 << 30)

typedef struct HostWin {
    QmEngine *e;
    const uint8_t *map;
    size_t frame;
    size_t chunk;        /* bytes per registered range, whole pages */
    size_t limit;
    size_t end;          /* bytes the run may read, rounded up to whole pages */
    bool off;            /* nothing (more) to register: no map, or refused */
    uint64_t lo, hi;     /* chunks lo .. hi - 1 are registered */
    double secs;         /* spent registering and unregistering */
    uint64_t bytes;      /* registered, in all */
    unsigned calls;      /* successful registrations */
} HostWin;

/** Set up a window over map (frames of `frame` bytes, of which the run reads
 *  first .. last - 1; size: the mapping's length), at most limit bytes
 *  registered; map NULL: a window that does nothing. */
void hostwin_init(HostWin *w, QmEngine *e, const uint8_t *map, size_t size, size_t frame,
                  uint64_t first, uint64_t last, size_t limit);

/** Frame n is about to be submitted and every frame below done has been
 *  received: unregister what no frame in flight touches, register what n
 *  needs.  0, or the negative QM_E* code of a failed call (the window then
 *  registers nothing more; frames go through the staging copy). */
int hostwin_need(HostWin *w, uint64_t n, uint64_t done);

/** Unregister everything (before the engine is closed). */
void hostwin_close(HostWin *w);

#endif /* QM_HOSTWIN_H */
