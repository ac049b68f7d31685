/* qmetric-yuv: the part of a mapped input file registered with the engine
 * for direct transfers to the device (qm_engine_register_host).
 *
 * Registering pins pages and takes time (on an H100 host, about 13 GB/s for
 * a read-only shared mapping of a /dev/shm file, one thread: 2026-11-25,
 * e8b1ad8's tools), about as long as copying the frames once, so it is done
 * by a thread of the window's own, ahead of the frames being submitted: a
 * frame whose chunk is not registered yet when it is submitted goes through
 * the engine's staging copy instead (both ways then run at once).  Each
 * chunk is unregistered once every frame touching it has been received: at
 * most `limit` bytes of a file are pinned at once, whatever its length, and
 * only the frames a run reads are ever pinned (the time it takes is part of
 * the run's).  Chunks are whole pages and, where a few frames make a whole
 * number of pages, whole frames; otherwise a frame across a chunk boundary
 * lies in no single registered range and is staged (counted as such).
 */
#ifndef QM_HOSTWIN_H
#define QM_HOSTWIN_H

#include <pthread.h>
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
    pthread_t th;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    bool started, quit;
    bool off;            /* nothing to register (no map, or refused) */
    uint64_t lo, hi;     /* chunks lo .. hi - 1 are registered */
    uint64_t done;       /* frames below this have been received */
    int err;             /* a failed (un)registration, QM_E* */
    double secs;         /* the thread's time registering and unregistering */
    uint64_t bytes;      /* registered, in all */
    unsigned calls;      /* successful registrations */
} HostWin;

/** Set up a window over map (frames of `frame` bytes, of which the run reads
 *  first .. last - 1; size: the mapping's length), at most limit bytes
 *  registered; map NULL: a window that does nothing.  Starts nothing yet. */
void hostwin_init(HostWin *w, QmEngine *e, const uint8_t *map, size_t size, size_t frame,
                  uint64_t first, uint64_t last, size_t limit);

/** Every frame below done has been received: lets the thread unregister
 *  what no frame in flight touches and register further ahead (the first
 *  call starts it).  Returns the error of a failed (un)registration once
 *  (the window then registers nothing more; frames are staged), else 0. */
int hostwin_progress(HostWin *w, uint64_t done);

/** Stop the thread and unregister everything (before the engine closes). */
void hostwin_close(HostWin *w);

#endif /* QM_HOSTWIN_H */
