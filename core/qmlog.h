/* gst-qmetric: per-frame score logs in libvmaf's JSON, CSV and XML layouts.
 * Plain C (no GStreamer), shared by the element and the tools.  Frames are
 * written as they arrive, so a log of a live stream grows while it runs;
 * the pooled values are written by qm_log_close(). */
#ifndef QM_LOG_H
#define QM_LOG_H

#include <stdint.h>

#include "qm.h"

typedef enum QmLogFormat {
    QM_LOG_FORMAT_JSON,
    QM_LOG_FORMAT_CSV,
    QM_LOG_FORMAT_XML,
    QM_LOG_FORMAT_JSONL,    /* JSON lines: a header, one object per frame
                             * and per window, a summary at the end */
} QmLogFormat;

/* Pooling methods written for each feature; libvmaf writes the first four. */
enum {
    QM_POOL_MIN = 1 << 0,
    QM_POOL_MAX = 1 << 1,
    QM_POOL_MEAN = 1 << 2,
    QM_POOL_HARMONIC_MEAN = 1 << 3,
    QM_POOL_P1 = 1 << 4,   /* 1st percentile */
    QM_POOL_P5 = 1 << 5,   /* 5th percentile */
    QM_POOL_LIBVMAF = 0xF,
};

/** Name of one QM_POOL_* bit ("min", "harmonic_mean", "p1"...). */
const char *qm_pool_method_name(unsigned bit);
/** Value of one pooling method. */
double qm_pool_value(QmPool *p, unsigned bit);

typedef struct QmLog QmLog;

/** Parse "json", "csv", "xml" or "jsonl"; -1 if unknown. */
int qm_log_format_from_string(const char *s);

/**
 * Create the log file.  names: the n feature keys (copied).  w, h: picture
 * size written in the header.  Returns NULL with *err (malloc'd) on failure.
 */
QmLog *qm_log_open(const char *path, QmLogFormat fmt, unsigned n,
                   const char *const *names, int w, int h, char **err);

/** Append one frame; values where present[i] is zero are left out. */
int qm_log_frame(QmLog *l, uint64_t frame_num, const double *v,
                 const uint8_t *present);

/** One reporting window (see the element's "window" property). */
typedef struct QmLogWindow {
    uint64_t index;
    uint64_t start_rt, end_rt;  /* running time, ns; UINT64_MAX: unknown */
    const char *reason;
    uint64_t pairs, unmatched_ref, unmatched_dist, unreadable;
    unsigned n;                 /* pools[0..n-1] follow the log's names */
    QmPool *pools;              /* a feature with no frame is left out */
    unsigned methods;           /* QM_POOL_* bits */
} QmLogWindow;

/** Append one window record (JSON lines only; other formats: nothing). */
int qm_log_window(QmLog *l, const QmLogWindow *w);

/** A pooled value a metric provides itself (QmAggregates, qm.h), written
 *  by qm_log_close() after the pooled values: JSON and JSON lines under
 *  "aggregate_metrics", XML as <aggregate_metrics>, CSV not at all.
 *  Returns 0 or QM_ENOMEM. */
int qm_log_aggregate(QmLog *l, const char *key, double value);

/**
 * Write the pooled values (pools[i] for feature i; a feature with no frame
 * is left out), the speed in frames/s, close the file and free l.
 * Returns 0 or a negative QM_E* when anything could not be written.
 */
int qm_log_close(QmLog *l, QmPool *pools, unsigned pool_methods, double fps);

/** Print x as libvmaf does: "%.6f", or "%.16f" for |fraction| < 1e-6
 *  (so small values keep their digits), "null" for inf/NaN. */
void qm_format_score(char *buf, size_t len, double x);

#endif /* QM_LOG_H */
