/* gst-qmetric: partial results of a frame range, for chunked scoring.
 *
 * A long title can be scored in chunks (frame ranges scored on their own,
 * on several GPUs or machines) and the chunks merged into the log and
 * pooled values a single whole-title run gives.  For the merge to be exact
 * a chunk keeps every value at full double precision (the logs print 6
 * decimals) and its frames in order: the pooled values are then computed
 * once, over all frames in frame order, exactly as a whole run pools them.
 *
 * The file is JSON:
 *   { "qmetric_partial": 1, "width": W, "height": H,
 *     "features": [names...], "start": first frame, "frames": count,
 *     "end_of_input": true when the input ended inside this chunk,
 *     "seconds": time the chunk took,
 *     "rows": [[value, ...], ...] }
 * where a value is a number printed with 17 significant digits (read back
 * bit for bit), null where the frame has no value of that feature, or the
 * strings "inf", "-inf", "nan".
 */
#ifndef QM_PARTIAL_H
#define QM_PARTIAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "qm.h"

/* Frames scored before a chunk's first frame (and not reported) so that
 * temporal features see the history a whole run gives them.  The longest
 * reach today is motion in VMAF's five-frame-window models: motion3 of
 * frame i averages motion2 of i and i - 1, whose score compares frames
 * i - 4 and i - 2.  Eight frames leave margin; tests/chunk.sh proves the
 * merge exact at every boundary of the golden clips.  Frames after the
 * chunk: the engine's look-ahead (qm_engine_delay()). */
#define QM_CHUNK_CONTEXT 8

typedef struct QmPartialWriter QmPartialWriter;

/** Start a partial file; NULL with *err (malloc'd) on failure. */
QmPartialWriter *qm_partial_open(const char *path, unsigned n,
                                 const char *const *names, int w, int h,
                                 uint64_t start, char **err);
/** Append the next frame's row (present[i] zero: no value). */
int qm_partial_row(QmPartialWriter *p, const double *v, const uint8_t *present);
/** Finish the file; 0, or QM_EIO when anything could not be written. */
int qm_partial_close(QmPartialWriter *p, bool end_of_input, double seconds);

/* A partial file read back. */
typedef struct QmPartial {
    int w, h;
    unsigned n_features;
    char **features;
    uint64_t start, frames;
    bool end_of_input;
    double seconds;
    double *values;      /* frames x n_features */
    uint8_t *present;    /* frames x n_features */
} QmPartial;

/** Read a partial file; 0, or a negative QM_E* with a message in err. */
int qm_partial_load(QmPartial *p, const char *path, char *err, size_t errlen);
void qm_partial_free(QmPartial *p);

#endif /* QM_PARTIAL_H */
