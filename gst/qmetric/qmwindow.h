/* gst-qmetric: reporting windows of a live comparison.
 *
 * Plain C (no GStreamer): the element feeds it every pair in output order
 * and every frame that found no partner; it pools the scores of the current
 * window and calls back when a window ends.  Memory is bounded: a window
 * holds at most QM_WINDOW_MAX_FRAMES scores per feature (then it ends early,
 * reason "cap"), and at most QM_WINDOW_MAX_PENDING unmatched/unreadable
 * events wait for their window. */
#ifndef QM_WINDOW_H
#define QM_WINDOW_H

#include <stdint.h>

#include "qm.h"

/* 10 minutes at 60 frames/s: 288 KiB of doubles per feature */
#define QM_WINDOW_MAX_FRAMES 36000
/* unmatched/unreadable frames found ahead of the scored frames (the
 * engine's look-ahead and frames in flight) */
#define QM_WINDOW_MAX_PENDING 256
/* "no running time" (GStreamer's GST_CLOCK_TIME_NONE) */
#define QM_WINDOW_TIME_NONE UINT64_MAX

typedef enum QmWindowKind {
    QM_WINDOW_OFF,
    QM_WINDOW_DURATION,     /* fixed slices of running time, aligned to 0 */
    QM_WINDOW_FRAMES,       /* a number of pairs */
    QM_WINDOW_KEYFRAME,     /* from one distorted key frame to the next */
} QmWindowKind;

typedef struct QmWindowSpec {
    QmWindowKind kind;
    uint64_t duration_ns;   /* QM_WINDOW_DURATION */
    uint64_t frames;        /* QM_WINDOW_FRAMES */
} QmWindowSpec;

/** Events that are counted, not scored. */
typedef enum QmWindowEvent {
    QM_WINDOW_UNMATCHED_REF,
    QM_WINDOW_UNMATCHED_DIST,
    QM_WINDOW_UNREADABLE,
} QmWindowEvent;

/** One ended window, valid during the callback only. */
typedef struct QmWindowStats {
    uint64_t index;             /* 0, 1, ... since the window was created */
    uint64_t start_rt, end_rt;  /* running time (ns); QM_WINDOW_TIME_NONE if unknown */
    const char *reason;         /* "duration", "frames", "keyframe", "cap",
                                 * "discont", "eos" */
    uint64_t pairs;             /* pairs compared (scored, subsampled out or
                                 * skipped) */
    uint64_t skipped;           /* of them, not scored to keep up */
    uint64_t unmatched_ref, unmatched_dist, unreadable;
    unsigned n_features;
    QmPool *pools;              /* per feature; pools[i].n frames with a score */
} QmWindowStats;

typedef void (*QmWindowEmit)(void *opaque, QmWindowStats *st);

typedef struct QmWindow QmWindow;

/**
 * Parse a window: "" or "none" (off), a duration ("1s", "500ms", "2.5s",
 * "1min", "1h"), a number of pairs ("120frames"), or "keyframe".
 * Returns 0, or -1 with a message in err (len bytes) naming the problem.
 */
int qm_window_parse(const char *s, QmWindowSpec *spec, char *err, size_t len);

/** A window of the given kind; NULL when out of memory. */
QmWindow *qm_window_new(const QmWindowSpec *spec, QmWindowEmit emit,
                        void *opaque);
void qm_window_free(QmWindow *w);

/** What qm_window_pair() says about a pair. */
enum {
    QM_WINDOW_PAIR_KEY = 1 << 0,      /* the distorted frame is a key frame */
    QM_WINDOW_PAIR_SKIPPED = 1 << 1,  /* not scored to keep up (Overload) */
};

/**
 * One pair in output order.  rt, dur: running time and duration (ns, or
 * QM_WINDOW_TIME_NONE); flags: QM_WINDOW_PAIR_*; n, values, present: the n
 * scores (the first call with n > 0 fixes the features), values NULL for a
 * pair that was not scored (subsample, skipped).  May end the current
 * window first (one callback).
 */
void qm_window_pair(QmWindow *w, uint64_t rt, uint64_t dur, unsigned flags,
                    unsigned n, const double *values, const uint8_t *present);

/**
 * A frame that is counted, not scored, at running time rt.  in_order: no
 * pair before rt is still to come, so the event may end the window (else
 * it waits for the pair that follows it, or the window's end).  A late
 * event (rt before the current window) counts in the current window.
 */
void qm_window_event(QmWindow *w, uint64_t rt, QmWindowEvent ev,
                     int keyframe, int in_order);

/** End the current window now (EOS, stop) if it holds anything. */
void qm_window_finish(QmWindow *w, const char *reason);

#endif /* QM_WINDOW_H */
