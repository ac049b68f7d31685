/* gst-qmetric: partial results of a frame range, for chunked scoring.
 *
 * A long title can be scored in chunks (frame ranges scored on their own,
 * on several GPUs or machines) and the chunks merged into the log and
 * pooled values a single whole-title run gives.  For the merge to be exact
 * a chunk keeps every value at full double precision (the logs print 6
 * decimals) and its frames in order: the pooled values are then computed
 * once, over all frames in frame order, exactly as a whole run pools them.
 *
 * For the merge to be right, the chunks must be chunks of one comparison:
 * a chunk records what it compared and how, and qmetric-merge refuses parts
 * whose records differ in anything (docs/batch.md):
 *
 *   { "qmetric_partial": 2,
 *     "tool": "qmetric-yuv", "version": QM_VERSION,
 *     "width": W, "height": H,
 *     "start": first frame, "features": [names...],
 *     "rows": [[value, ...], ...],
 *     "frames": count,
 *     "inputs": { "reference": INPUT, "distorted": INPUT },
 *     "settings": { "key": "value", ... },
 *     "frame_hashes": [[frame, "reference hash", "distorted hash"], ...],
 *     "end_of_input": true when the input ended inside this chunk,
 *     "seconds": time the chunk took }
 *
 * INPUT = { "width", "height": the pictures' size; "format": "420", "422",
 * "444", "400" (raw files) or the decoded GStreamer format name; "bitdepth";
 * "bytes": the file's size; "fingerprint": qm_partial_fingerprint() }.  The
 * fingerprint does not depend on the file's name or place: a renamed or
 * moved input still merges.
 *
 * "settings" holds every option that can change a value, as canonical
 * strings (qm_partial_set_engine() records the engine's; a tool adds its
 * own, e.g. "scale"): two chunks merge only when their settings are equal.
 *
 * "frame_hashes": qm_frame_hash() of each input's frames that the chunk
 * read within QM_CHUNK_CONTEXT frames of either end of its range (the
 * context before "start", its first and last frames, the look-ahead after
 * its end), 16 hex digits each, frames increasing.  Adjacent chunks read
 * the frames around their boundary, and the merge compares their hashes.
 *
 * A value is a number printed with 17 significant digits (read back bit
 * for bit), null where the frame has no value of that feature, or the
 * strings "inf", "-inf", "nan".  The inputs, settings and hashes are
 * written after the rows, so a writer may set them at any time before
 * qm_partial_close() (qmetric-compare learns the engine's settings from
 * the element's summary, at the end).
 */
#ifndef QM_PARTIAL_H
#define QM_PARTIAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "qm.h"
#include "sha256.h"

/* Frames scored before a chunk's first frame (and not reported) so that
 * temporal features see the history a whole run gives them.  The longest
 * reach today is motion in VMAF's five-frame-window models: motion3 of
 * frame i averages motion2 of i and i - 1, whose score compares frames
 * i - 4 and i - 2.  XPSNR reads frames i - 1 and i - 2 (its memory is zero
 * before a run's first frame, which a chunk's context starting at frame 0
 * reproduces, and overwritten after two frames otherwise).  Eight frames
 * leave margin; tests/chunk.sh proves the merge exact at every boundary of
 * the golden clips.  Frames after the chunk: the engine's look-ahead
 * (qm_engine_delay()). */
#define QM_CHUNK_CONTEXT 8

#define QM_PARTIAL_VERSION 2

/* The two inputs of a comparison, in the records' order. */
enum { QM_PARTIAL_REFERENCE = 0, QM_PARTIAL_DISTORTED = 1 };

/* What a chunk records about one input. */
typedef struct QmPartialInput {
    int w, h;                          /* pictures as compared */
    char format[32];                   /* "420".."400", or a GStreamer name */
    int bitdepth;
    uint64_t bytes;                    /* the file's size */
    char fingerprint[QM_SHA256_HEX];   /* qm_partial_fingerprint() */
} QmPartialInput;

/**
 * The fingerprint of an open file: SHA-256 of its size (8 bytes,
 * little-endian) followed by its first MiB and its last MiB (the whole
 * file twice when it is smaller), as lower-case hex; its size in *bytes.
 * Reads with pread(): the file offset is not moved.  0, or QM_EIO (a file
 * that is not regular: a pipe has no last MiB to read) with errno set.
 */
int qm_partial_fingerprint_fd(int fd, uint64_t *bytes, char hex[QM_SHA256_HEX]);

/* ---- writing ---- */

typedef struct QmPartialWriter QmPartialWriter;

/**
 * Start a partial file of the frames from `start` on: `tool` names the
 * program ("qmetric-yuv", "qmetric-compare"), n feature names in row order, the size of the
 * pictures compared.  NULL with *err (malloc'd) on failure (the file is
 * created here: a destination that cannot be written fails at once).
 */
QmPartialWriter *qm_partial_open(const char *path, const char *tool, unsigned n,
                                 const char *const *names, int w, int h,
                                 uint64_t start, char **err);
/** Record input `which` (QM_PARTIAL_REFERENCE or _DISTORTED), at any
 *  time before qm_partial_close().  Both are required. */
int qm_partial_set_input(QmPartialWriter *p, int which, const QmPartialInput *in);
/** Record a setting (a canonical string value; a key set again replaces
 *  its value), at any time before qm_partial_close(). */
int qm_partial_set(QmPartialWriter *p, const char *key, const char *value);
/**
 * Record the engine's settings: "metrics" (qm_engine_metrics_text()),
 * "models" (each model's name and the SHA-256 of the file loaded),
 * "subsample", "pixel_format", "bitdepth", "enable_transform",
 * "disable_clip", "backend" ("cpu", or "cuda" with "device_metrics": what
 * runs on the device, as CUDA float features may differ from the CPU's in
 * the last digits).  s: the settings the engine was opened with.
 */
int qm_partial_set_engine(QmPartialWriter *p, const QmEngine *e, const QmSettings *s);
/**
 * The settings qm_partial_set_engine() records, as "key=value" lines (one
 * per setting, sorted by key), malloc'd; NULL when out of memory.  For a
 * writer without an engine of its own: the qmetric element posts them in
 * its "qmetric-summary" message (field "identity"), and qmetric-compare
 * records them with qm_partial_set_lines().
 */
char *qm_partial_engine_settings(const QmEngine *e, const QmSettings *s);
/** qm_partial_set() of every "key=value" line of text; QM_EINVAL for a
 *  line without '=' or with an empty key. */
int qm_partial_set_lines(QmPartialWriter *p, const char *text);
/**
 * The hashes (qm_frame_hash()) of frame `frame` of both inputs, in
 * increasing frame order, for every frame the chunk reads (the context and
 * look-ahead included).  The writer keeps those within QM_CHUNK_CONTEXT
 * frames of the chunk's start or end (memory bounded: 4 x QM_CHUNK_CONTEXT
 * entries); qm_partial_hash_wanted() tells which frames can matter, so a
 * caller that knows its range hashes only those.
 */
int qm_partial_frame_hash(QmPartialWriter *p, uint64_t frame, uint64_t ref, uint64_t dis);
/** Whether a chunk of frames start .. end - 1 keeps frame's hashes (end:
 *  UINT64_MAX while unknown; every frame from start + QM_CHUNK_CONTEXT on
 *  may then be among the last). */
bool qm_partial_hash_wanted(uint64_t frame, uint64_t start, uint64_t end);
/** Append the next frame's row (present[i] zero: no value). */
int qm_partial_row(QmPartialWriter *p, const double *v, const uint8_t *present);
/** Finish the file; 0, or QM_EIO when anything could not be written, or
 *  QM_EINVAL when an input was not set (nothing usable is left then). */
int qm_partial_close(QmPartialWriter *p, bool end_of_input, double seconds);

/* ---- reading ---- */

typedef struct QmPartialHash {
    uint64_t frame;
    uint64_t hash[2];        /* reference, distorted */
} QmPartialHash;

/* A partial file read back. */
typedef struct QmPartial {
    char *path;
    char *tool, *version;
    QmPartialInput input[2];
    unsigned n_settings;
    char **set_key, **set_value;   /* sorted by key */
    int w, h;
    unsigned n_features;
    char **features;
    uint64_t start, frames;
    bool end_of_input;
    double seconds;
    double *values;      /* frames x n_features */
    uint8_t *present;    /* frames x n_features */
    unsigned n_hashes;
    QmPartialHash *hashes;   /* increasing frames */
} QmPartial;

/**
 * Read a partial file; 0, or a negative QM_E* with a message in err.
 * Strict: every field present with its type, no other field, no member
 * named twice, rows of n_features values, counts that match; a file of
 * format 1 (no identity) is refused with a message to score it again.
 */
int qm_partial_load(QmPartial *p, const char *path, char *err, size_t errlen);
void qm_partial_free(QmPartial *p);

/**
 * Whether parts b and a are chunks of one comparison: 0, or -1 with the
 * first difference in `what`, b's value first (e.g. "settings.subsample: 2
 * against 1", "inputs.distorted.fingerprint: 5d41... against 9f86...").
 * Compares the tool, version, each input's record, every setting (a key
 * present in one part only too), the picture size and the features.
 */
int qm_partial_compare(const QmPartial *b, const QmPartial *a, char *what, size_t len);
/**
 * Whether parts b and a read the same frames where both read them: 0, or
 * -1 with the first frame whose hashes differ in `what` ("frame_hashes:
 * frame 239 of the distorted input: ... against ...").  Where one part
 * ends at the other's start, both must have hashed the QM_CHUNK_CONTEXT
 * frames before that boundary (each reads them).
 */
int qm_partial_compare_frames(const QmPartial *b, const QmPartial *a, char *what, size_t len);

#endif /* QM_PARTIAL_H */
