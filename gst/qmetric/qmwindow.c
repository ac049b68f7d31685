/* gst-qmetric: reporting windows of a live comparison (see qmwindow.h). */
#include "qmwindow.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t rt;
    QmWindowEvent ev;
} Pending;

struct QmWindow {
    QmWindowSpec spec;
    QmWindowEmit emit;
    void *opaque;
    unsigned n;
    QmPool *pools;              /* allocated with the first scored pair */
    uint64_t index;
    int open;                   /* the window has a start */
    uint64_t start_rt, end_rt;  /* end_rt: nominal end (duration) or the
                                 * end of the last frame seen */
    uint64_t pairs, skipped, counts[3];
    /* events found ahead of the pairs before them (a ring) */
    Pending pending[QM_WINDOW_MAX_PENDING];
    unsigned p_head, p_len;
};

static int parse_duration(const char *s, uint64_t *ns)
{
    static const struct { const char *unit; double ns; } units[] = {
        { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
        { "min", 60e9 }, { "h", 3600e9 },
    };
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v) || v <= 0)
        return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (!strcmp(end, units[i].unit)) {
            double t = v * units[i].ns;
            /* below 1 ms a window is a frame; above a day it never ends */
            if (t < 1e6 || t > 86400e9)
                return -1;
            *ns = (uint64_t)llround(t);
            return 0;
        }
    }
    return -1;
}

int qm_window_parse(const char *s, QmWindowSpec *spec, char *err, size_t len)
{
    memset(spec, 0, sizeof(*spec));
    if (!s || !*s || !strcmp(s, "none"))
        return 0;
    if (!strcmp(s, "keyframe")) {
        spec->kind = QM_WINDOW_KEYFRAME;
        return 0;
    }
    size_t l = strlen(s);
    if (l > 6 && !strcmp(s + l - 6, "frames") && isdigit((unsigned char)s[0])) {
        char *end;
        unsigned long long f = strtoull(s, &end, 10);
        if (end == s + l - 6 && f >= 1 && f <= QM_WINDOW_MAX_FRAMES) {
            spec->kind = QM_WINDOW_FRAMES;
            spec->frames = f;
            return 0;
        }
        snprintf(err, len, "window \"%s\": the number of frames must be "
                 "1 to %d", s, QM_WINDOW_MAX_FRAMES);
        return -1;
    }
    if (!parse_duration(s, &spec->duration_ns)) {
        spec->kind = QM_WINDOW_DURATION;
        return 0;
    }
    snprintf(err, len, "window \"%s\" is not understood: expected \"none\", "
             "a duration from 1ms to 24h (\"1s\", \"500ms\", \"2.5s\", "
             "\"1min\"), a number of frames (\"120frames\") or \"keyframe\"", s);
    return -1;
}

QmWindow *qm_window_new(const QmWindowSpec *spec, QmWindowEmit emit,
                        void *opaque)
{
    QmWindow *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->spec = *spec;
    w->emit = emit;
    w->opaque = opaque;
    return w;
}

void qm_window_free(QmWindow *w)
{
    if (!w)
        return;
    for (unsigned i = 0; i < w->n; i++)
        qm_pool_clear(&w->pools[i]);
    free(w->pools);
    free(w);
}

static int has_content(const QmWindow *w)
{
    return w->pairs || w->counts[0] || w->counts[1] || w->counts[2];
}

/* Start a window at running time rt (the first thing it holds). */
static void begin(QmWindow *w, uint64_t rt)
{
    w->open = 1;
    if (w->spec.kind == QM_WINDOW_DURATION && rt != QM_WINDOW_TIME_NONE) {
        /* aligned to running time 0, so that windows of several probes
         * cover the same span */
        w->start_rt = rt - rt % w->spec.duration_ns;
        w->end_rt = w->start_rt + w->spec.duration_ns;
    } else {
        w->start_rt = rt;
        w->end_rt = rt;
    }
}

/* Frame-driven windows end where their last frame ends. */
static void extend(QmWindow *w, uint64_t rt, uint64_t dur)
{
    if (w->spec.kind == QM_WINDOW_DURATION || rt == QM_WINDOW_TIME_NONE)
        return;
    uint64_t e = dur != QM_WINDOW_TIME_NONE ? rt + dur : rt;
    if (w->start_rt == QM_WINDOW_TIME_NONE)
        w->start_rt = rt;
    if (w->end_rt == QM_WINDOW_TIME_NONE || e > w->end_rt)
        w->end_rt = e;
}

static void count(QmWindow *w, uint64_t rt, QmWindowEvent ev)
{
    if (!w->open)
        begin(w, rt);
    w->counts[ev]++;
    extend(w, rt, QM_WINDOW_TIME_NONE);
}

/* Move the pending events that fall before `boundary` (all of them for
 * QM_WINDOW_TIME_NONE) into the current window. */
static void fold_pending(QmWindow *w, uint64_t boundary)
{
    unsigned kept = 0;
    Pending keep[QM_WINDOW_MAX_PENDING];
    while (w->p_len) {
        Pending *p = &w->pending[w->p_head];
        w->p_head = (w->p_head + 1) % QM_WINDOW_MAX_PENDING;
        w->p_len--;
        if (boundary == QM_WINDOW_TIME_NONE || p->rt == QM_WINDOW_TIME_NONE ||
            p->rt < boundary)
            count(w, p->rt, p->ev);
        else
            keep[kept++] = *p;
    }
    w->p_head = 0;
    memcpy(w->pending, keep, kept * sizeof(Pending));
    w->p_len = kept;
}

/* End the current window: events before `boundary` join it, then it is
 * reported and emptied. */
static void close_window(QmWindow *w, const char *reason, uint64_t boundary)
{
    fold_pending(w, boundary);
    if (!w->open || !has_content(w)) {
        w->open = 0;
        return;
    }
    QmWindowStats st = {
        .index = w->index++,
        .start_rt = w->start_rt,
        .end_rt = w->end_rt,
        .reason = reason,
        .pairs = w->pairs,
        .skipped = w->skipped,
        .unmatched_ref = w->counts[QM_WINDOW_UNMATCHED_REF],
        .unmatched_dist = w->counts[QM_WINDOW_UNMATCHED_DIST],
        .unreadable = w->counts[QM_WINDOW_UNREADABLE],
        .n_features = w->n,
        .pools = w->pools,
    };
    if (w->emit)
        w->emit(w->opaque, &st);
    for (unsigned i = 0; i < w->n; i++) {
        qm_pool_clear(&w->pools[i]);
        qm_pool_init(&w->pools[i]);
    }
    w->pairs = w->skipped = 0;
    memset(w->counts, 0, sizeof(w->counts));
    w->open = 0;
}

/* Whether something at running time rt (a key frame or not) belongs to the
 * next window; *reason says why. */
static int ends_before(const QmWindow *w, uint64_t rt, int keyframe,
                       const char **reason)
{
    if (!w->open || !has_content(w))
        return 0;
    if (w->pairs >= QM_WINDOW_MAX_FRAMES) {
        *reason = "cap";
        return 1;
    }
    switch (w->spec.kind) {
    case QM_WINDOW_DURATION:
        if (rt == QM_WINDOW_TIME_NONE || w->start_rt == QM_WINDOW_TIME_NONE)
            return 0;
        if (rt < w->start_rt) {
            /* running time went back (a new segment) */
            *reason = "discont";
            return 1;
        }
        *reason = "duration";
        return rt >= w->end_rt;
    case QM_WINDOW_FRAMES:
        *reason = "frames";
        return w->pairs >= w->spec.frames;
    case QM_WINDOW_KEYFRAME:
        *reason = "keyframe";
        return keyframe;
    default:
        return 0;
    }
}

/* The earliest running time of a waiting event before `before`, or
 * QM_WINDOW_TIME_NONE. */
static uint64_t earliest_pending(const QmWindow *w, uint64_t before)
{
    uint64_t first = QM_WINDOW_TIME_NONE;
    for (unsigned k = 0; k < w->p_len; k++) {
        uint64_t t = w->pending[(w->p_head + k) % QM_WINDOW_MAX_PENDING].rt;
        if (t != QM_WINDOW_TIME_NONE && t < before && t < first)
            first = t;
    }
    return first;
}

/* Duration windows, none open: the waiting events before the slice that
 * starts at `slice` are in earlier slices, each reported as a window of
 * its own (the pairs around them were not in those slices). */
static void report_pending_slices(QmWindow *w, uint64_t slice)
{
    uint64_t t;
    while ((t = earliest_pending(w, slice)) != QM_WINDOW_TIME_NONE) {
        begin(w, t);
        close_window(w, "duration", w->end_rt);
    }
}

/* Something in output order at rt: end the current window if rt is past
 * it.  A duration window takes the waiting events of its slice only; a
 * window of frames, those before rt. */
static void advance(QmWindow *w, uint64_t rt, int keyframe)
{
    const char *reason = NULL;
    const int slices = w->spec.kind == QM_WINDOW_DURATION;
    if (ends_before(w, rt, keyframe, &reason)) {
        uint64_t boundary = rt;
        if (!strcmp(reason, "discont"))
            boundary = QM_WINDOW_TIME_NONE;
        else if (slices && w->start_rt != QM_WINDOW_TIME_NONE)
            boundary = w->end_rt;
        close_window(w, reason, boundary);
    }
    if (!w->open && slices && rt != QM_WINDOW_TIME_NONE)
        report_pending_slices(w, rt - rt % w->spec.duration_ns);
    if (!w->open)
        begin(w, rt);
}

void qm_window_pair(QmWindow *w, uint64_t rt, uint64_t dur, unsigned flags,
                    unsigned n, const double *values, const uint8_t *present)
{
    const int keyframe = (flags & QM_WINDOW_PAIR_KEY) != 0;
    if (!w || w->spec.kind == QM_WINDOW_OFF)
        return;
    if (!w->pools && n) {
        /* allocated once; if it fails the window counts frames only */
        w->pools = calloc(n, sizeof(QmPool));
        w->n = w->pools ? n : 0;
        for (unsigned i = 0; i < w->n; i++)
            qm_pool_init(&w->pools[i]);
    }
    advance(w, rt, keyframe);
    /* events queued before this pair's running time are in this window or
     * an earlier one: they cannot wait for a later pair */
    if (rt != QM_WINDOW_TIME_NONE)
        fold_pending(w, rt);
    w->pairs++;
    w->skipped += (flags & QM_WINDOW_PAIR_SKIPPED) != 0;
    extend(w, rt, dur);
    for (unsigned i = 0; values && present && i < w->n; i++)
        if (present[i])
            qm_pool_add(&w->pools[i], values[i]);

    /* a window that is known to be complete is reported now, not when the
     * next pair arrives (a frame later, or never on a stalled stream) */
    const char *reason = NULL;
    if (w->pairs >= QM_WINDOW_MAX_FRAMES)
        reason = "cap";
    else if (w->spec.kind == QM_WINDOW_FRAMES && w->pairs >= w->spec.frames)
        reason = "frames";
    else if (w->spec.kind == QM_WINDOW_DURATION && rt != QM_WINDOW_TIME_NONE &&
             dur != QM_WINDOW_TIME_NONE && rt + dur >= w->end_rt)
        reason = "duration";
    if (reason)
        close_window(w, reason, w->end_rt);
}

void qm_window_event(QmWindow *w, uint64_t rt, QmWindowEvent ev,
                     int keyframe, int in_order)
{
    if (!w || w->spec.kind == QM_WINDOW_OFF)
        return;
    if (in_order || rt == QM_WINDOW_TIME_NONE) {
        /* nothing earlier is still to come: it may end the window */
        if (rt != QM_WINDOW_TIME_NONE) {
            advance(w, rt, keyframe);
            fold_pending(w, rt);
        }
        if (!w->open)
            begin(w, rt);
        count(w, rt, ev);
        return;
    }
    if (w->p_len == QM_WINDOW_MAX_PENDING) {
        /* bounded: the oldest waiting event is taken as in order */
        Pending old = w->pending[w->p_head];
        w->p_head = (w->p_head + 1) % QM_WINDOW_MAX_PENDING;
        w->p_len--;
        advance(w, old.rt, 0);
        count(w, old.rt, old.ev);
    }
    w->pending[(w->p_head + w->p_len) % QM_WINDOW_MAX_PENDING] =
        (Pending){ rt, ev };
    w->p_len++;
}

void qm_window_finish(QmWindow *w, const char *reason)
{
    if (!w || w->spec.kind == QM_WINDOW_OFF)
        return;
    /* no pair is to come: the waiting events are in order now (each may
     * end a window) */
    if (w->spec.kind == QM_WINDOW_DURATION) {
        /* each in the window of its slice: up to the latest one's slice,
         * which ends with the rest */
        uint64_t last = 0;
        int timed = 0;
        for (unsigned k = 0; k < w->p_len; k++) {
            uint64_t t = w->pending[(w->p_head + k) % QM_WINDOW_MAX_PENDING].rt;
            if (t != QM_WINDOW_TIME_NONE && (!timed || t > last)) {
                last = t;
                timed = 1;
            }
        }
        if (timed)
            advance(w, last, 0);
        fold_pending(w, QM_WINDOW_TIME_NONE);
    }
    while (w->p_len) {
        Pending old = w->pending[w->p_head];
        w->p_head = (w->p_head + 1) % QM_WINDOW_MAX_PENDING;
        w->p_len--;
        if (old.rt != QM_WINDOW_TIME_NONE)
            advance(w, old.rt, 0);
        count(w, old.rt, old.ev);
    }
    close_window(w, reason, QM_WINDOW_TIME_NONE);
}
