/* gst-qmetric: which reference frame goes with which distorted frame.
 *
 * A pure decision, without GStreamer: the caller keeps a small queue of
 * frames per input (oldest first), asks qm_pair_decide() what to do with the
 * heads, does it, and tells qm_pair_apply().  The rules (docs/element.md,
 * "Pairing"):
 *
 * - Frames with running times pair with the NEAREST frame of the other input,
 *   and only when each is the other's nearest (a frame whose nearest partner
 *   is closer to another frame stays unmatched) and they are at most the
 *   tolerance apart.  Candidates are the queued frames plus the last frame
 *   already taken from that input (so a duplicate, or a frame whose partner
 *   went to an earlier frame, stays unmatched).
 * - Ties: of two frames equally near, the one earlier in running time is
 *   the nearer; of two with the same running time, the one that arrived first.
 * - Tolerance: an explicit override when >= 0, else half the shorter of the
 *   two frames' durations, else 0 (identical running times only).
 * - Frames without running times on both inputs pair by frame number (buffer
 *   offset, counted from each input's first frame) when both carry one, else
 *   in arrival order until a discontinuity: after a gap nothing pairs any
 *   more (the number of lost frames is unknown).  A frame without a running
 *   time whose partner has one is never paired.
 * - The decision waits only while a frame that is not there yet could change
 *   it; an input that is done (EOS, or its queue is full) or a frame past its
 *   live deadline ends the wait. */
#ifndef QM_PAIR_H
#define QM_PAIR_H

#include <stddef.h>
#include <stdint.h>

#define QM_PAIR_NO_TIME (-1)             /* running time / duration unknown */
#define QM_PAIR_NO_OFFSET UINT64_MAX     /* no frame number */
#define QM_PAIR_NO_DEADLINE INT64_MIN    /* not live: nothing expires */

enum { QM_PAIR_REF = 0, QM_PAIR_DIST = 1 };

typedef struct QmPairFrame {
    int64_t t;          /* running time (ns) or QM_PAIR_NO_TIME */
    int64_t dur;        /* frame duration (ns) or QM_PAIR_NO_TIME */
    uint64_t offset;    /* frame number or QM_PAIR_NO_OFFSET */
    int discont;        /* the input says frames were lost before this one */
} QmPairFrame;

typedef enum QmPairAction {
    QM_PAIR_WAIT,       /* a frame still to come may change the answer */
    QM_PAIR_MATCH,      /* the two heads are a pair */
    QM_PAIR_DROP_REF,   /* the reference head has no partner */
    QM_PAIR_PASS_DIST,  /* the distorted head has no partner */
} QmPairAction;

typedef enum QmPairMode {
    QM_PAIR_BY_TIME,    /* running times */
    QM_PAIR_BY_OFFSET,  /* no times: frame numbers */
    QM_PAIR_BY_ARRIVAL, /* no times, no frame numbers: arrival order */
    QM_PAIR_MIXED,      /* one input has times, the other none: no pairs */
} QmPairMode;

typedef enum QmPairReason {
    QM_PAIR_OK,
    QM_PAIR_NO_PARTNER,     /* the other input ended or gave up */
    QM_PAIR_TOO_FAR,        /* nearest partner beyond the tolerance */
    QM_PAIR_TAKEN,          /* nearest partner is nearer to another frame */
    QM_PAIR_GAP,            /* no times: a gap (frame number, discont) */
    QM_PAIR_NOT_COMPARABLE, /* times on one input only */
} QmPairReason;

typedef struct QmPairDecision {
    QmPairAction action;
    QmPairMode mode;
    QmPairReason reason;    /* why a head is unmatched */
    int64_t tolerance;      /* the tolerance used (time mode), ns */
    int need;               /* WAIT: the input whose next frame is needed
                             * (QM_PAIR_REF or QM_PAIR_DIST) */
} QmPairDecision;

/* What is known about the inputs at one decision. */
typedef struct QmPairInput {
    const QmPairFrame *f[2];    /* queued frames, oldest first */
    size_t n[2];
    int done[2];                /* no further frame will be considered */
    int64_t deadline;           /* frames with t <= deadline waited long
                                 * enough (live); QM_PAIR_NO_DEADLINE */
    int64_t tolerance;          /* >= 0: override; < 0: derived */
    int more[2];                /* frames have arrived that are not queued
                                 * yet: an expired head waits for them */
} QmPairInput;

/* What the decision remembers of frames already taken. */
typedef struct QmPairState {
    int64_t last_t[2];          /* last frame taken, or QM_PAIR_NO_TIME */
    int have_last[2];
    uint64_t first_offset[2];
    int have_first[2];
    uint64_t taken[2];          /* frames taken, all modes */
    int gap;                    /* arrival order broken: no more pairs */
} QmPairState;

void qm_pair_reset(QmPairState *s);

/* What to do with the heads of in.  Never WAIT when both inputs are done
 * and a frame is queued. */
QmPairDecision qm_pair_decide(const QmPairState *s, const QmPairInput *in);

/* The caller took the frames d names (both heads for MATCH, one for the
 * others) off the queues in `in`; call before removing them. */
void qm_pair_apply(QmPairState *s, const QmPairInput *in,
                   const QmPairDecision *d);

/* Tolerance for two frame durations (QM_PAIR_NO_TIME when unknown):
 * override when >= 0, else half the shorter known duration, else 0. */
int64_t qm_pair_tolerance(int64_t override, int64_t dur_a, int64_t dur_b);

const char *qm_pair_reason_text(QmPairReason r);
const char *qm_pair_mode_text(QmPairMode m);

#endif /* QM_PAIR_H */
