/* gst-qmetric: the metric engine's public API.
 *
 * The engine is independent of GStreamer: a pair of pictures goes in, one row
 * of named scores per pair comes out, in submission order.  Feature names are
 * libvmaf's JSON keys so that logs of both tools can be compared directly.
 *
 * Threading: one engine is driven by one thread (submit/receive/flush/close);
 * internally it may compute several frames at once on its own workers.
 */
#ifndef QM_H
#define QM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes: 0 on success, a negative QM_E* otherwise. */
enum {
    QM_OK = 0,
    QM_EINVAL = -1,   /* bad argument or unsupported combination */
    QM_ENOMEM = -2,
    QM_ENOTSUP = -3,  /* format, size or feature not supported */
    QM_EMODEL = -4,   /* model file missing or malformed */
    QM_EIO = -5,
    QM_EDEVICE = -6,  /* no usable GPU, or a GPU call failed */
    QM_EAGAIN = -7,   /* no result ready yet */
    QM_EOF = -8,      /* flushed and every result has been received */
};

/** Human-readable text for a QM_E* code (static storage). */
const char *qm_strerror(int err);

typedef enum QmChroma {
    QM_CHROMA_400 = 0, /* luma only (GRAY) */
    QM_CHROMA_420,
    QM_CHROMA_422,
    QM_CHROMA_444,
} QmChroma;

/* How YCbCr samples encode colour, for the metrics that convert them to
 * RGB (ssimulacra2): what the picture's producer says (the element: the
 * caps' colorimetry, where they state one).  Zero: not known, which those
 * metrics read as BT.709, limited range. */
typedef enum QmMatrix {
    QM_MATRIX_UNKNOWN = 0, QM_MATRIX_BT709, QM_MATRIX_BT601, QM_MATRIX_BT2020,
    QM_MATRIX_SMPTE240M, QM_MATRIX_FCC,
} QmMatrix;
typedef enum QmRange { QM_RANGE_UNKNOWN = 0, QM_RANGE_LIMITED, QM_RANGE_FULL } QmRange;
typedef struct QmColor {
    QmMatrix matrix;
    QmRange range;
} QmColor;

/**
 * One picture, planar.  Samples are uint8_t when bpc == 8 and little-endian
 * uint16_t holding values 0 .. 2^bpc - 1 otherwise.  Strides are in bytes.
 * Chroma planes hold ceil(w / 2) (x ceil(h / 2)) samples, as GStreamer and
 * FFmpeg lay them out (qm_plane_size_full()); libvmaf's metrics read the
 * (w >> ss_x) x (h >> ss_y) part (qm_plane_size()), leaving out an
 * odd-sized picture's last chroma column/row as libvmaf does; XPSNR
 * reads the whole plane as FFmpeg's filter does, SSIMULACRA2 as the golden
 * set's RGB conversion does.
 */
typedef struct QmPicture {
    int w, h;               /* luma size */
    int bpc;                /* 8 .. 16 */
    QmChroma chroma;
    const void *data[3];    /* Y, Cb, Cr; Cb/Cr unused for QM_CHROMA_400 */
    ptrdiff_t stride[3];    /* bytes */
    /* Only the CUDA backend reads pictures that are not plain planar host
     * memory: zero for the CPU backend. */
    unsigned flags;         /* QM_PICTURE_DEVICE: data are CUDA device pointers */
    int step[3];            /* samples between neighbours: 2 where Cb and Cr
                               are interleaved (NV12, P010; data[2] points at
                               the first Cr sample); 0 means 1 */
    int shift;              /* stored sample >> shift = value (P010: 6) */
    QmColor color;          /* its colorimetry; zero: not known */
} QmPicture;

enum { QM_PICTURE_DEVICE = 1 << 0 };

/** Plane p's size in samples for a picture of this geometry, as libvmaf
 *  sizes it (chroma: floor). */
void qm_plane_size(int w, int h, QmChroma chroma, int p, int *pw, int *ph);
/** Plane p's size as stored (chroma: ceil), what a picture must hold. */
void qm_plane_size_full(int w, int h, QmChroma chroma, int p, int *pw, int *ph);
/** 1 for QM_CHROMA_400, else 3. */
int qm_n_planes(QmChroma chroma);

typedef enum QmBackend {
    QM_BACKEND_AUTO = 0, /* CUDA when a device works, else CPU */
    QM_BACKEND_CPU,
    QM_BACKEND_CUDA,
} QmBackend;

enum { QM_LOG_ERROR = 0, QM_LOG_WARNING, QM_LOG_INFO, QM_LOG_DEBUG };
typedef void (*QmLogFn)(void *opaque, int level, const char *msg);

/* Called once the engine no longer reads the pictures of a submitted pair. */
typedef void (*QmReleaseFn)(void *opaque, void *frame_user);

/* The metrics the element and the tools compute unless told: VMAF (the
 * model's score), PSNR and SSIM (docs/metrics.md, "Default metrics"). */
#define QM_DEFAULT_METRICS "vmaf,psnr,float_ssim"

typedef struct QmSettings {
    int w, h, bpc;
    QmChroma chroma;
    /* Comma-separated metric names (see qm_metric_names()); NULL or "all"
     * selects every metric, "default" the VMAF model's features only,
     * "none" nothing of its own (what `features` and a preset select).  The
     * tools and the element default to QM_DEFAULT_METRICS (with
     * metrics_are_default). */
    const char *metrics;
    /* The metrics list is a default, not the user's request: a metric in it
     * that the input cannot take is left out with a warning (as with "all")
     * instead of failing. */
    bool metrics_are_default;
    /* Comma-separated VMAF models, each a built-in name (vmaf_v0.6.1,
     * vmaf_4k_v0.6.1, vmaf_4k_v0.6.1neg, vmaf_v0.6.1neg, ...) or a path to
     * a libvmaf JSON model, or in libvmaf's --model spelling
     * "version=NAME:name=LABEL" / "path=FILE:name=LABEL".  A model's score
     * is keyed by its LABEL; without one, "vmaf" when it is the only model,
     * else the model's name.  Used when the metric "vmaf" is selected; NULL
     * means vmaf_v0.6.1 (none with a preset). */
    const char *models;
    /* A preset of libvmaf's command line tool, "FAMILY=VERSION":
     * "aom_ctc=v1.0" .. "aom_ctc=v7.0", "nflx_ctc=v1.0" (core/preset.h).
     * Its models and feature instances come before those of `models` and
     * `features`; `metrics`, unless metrics_are_default, adds to them.
     * NULL: none. */
    const char *preset;
    /* Extra feature instances with options, libvmaf's `--feature`
     * spelling: comma-separated entries "NAME" or
     * "NAME=OPTION=VALUE:OPTION=VALUE..." (e.g.
     * "motion=motion_five_frame_window=true:motion_max_val=18,
     * speed_chroma=speed_prescale=0.5:speed_prescale_method=bilinear").
     * Each adds an instance of metric NAME with those options (the others
     * at their defaults), reported under libvmaf's keys with the option
     * suffixes, beside what `metrics` and the models select.  An unknown
     * metric or option, or a value out of range, fails qm_engine_open()
     * with a message naming it.  NULL: none. */
    const char *features;
    /* Directories searched for built-in model names, ':'-separated; NULL
     * uses the QMETRIC_MODEL_PATH environment variable and the install dir. */
    const char *model_path;
    /* The frame rate of the compared sequence (the element: the distorted
     * input's caps, as FFmpeg's xpsnr reads its second input's; the tools:
     * --fps), 0/0 when unknown: the default of options flagged
     * QM_OPT_FRAME_RATE (XPSNR's temporal term). */
    int fps_n, fps_d;
    bool disable_clip;      /* do not clip VMAF to the model's range */
    bool enable_transform;  /* apply the model's score transform */
    int n_threads;          /* CPU workers; 0 = number of CPUs */
    unsigned subsample;     /* compute every Nth pair (motion sees all); 0/1 = all */
    QmBackend backend;
    int cuda_device;        /* -1 = any */
    void *cuda_context;     /* optional CUcontext shared with the caller */
    /* How long (ms) to wait for the GPU to finish a frame, or to go idle at
     * close, before reporting it as not answering; 0 = 10000.  After that
     * the engine fails (submit/receive/flush return an error) and close
     * abandons the device's buffers instead of waiting for ever. */
    unsigned device_timeout_ms;
    QmLogFn log;
    void *log_opaque;
    QmReleaseFn release;    /* optional, see qm_engine_submit() */
    void *release_opaque;
} QmSettings;

/** Fill *s with defaults for a w x h picture. */
void qm_settings_default(QmSettings *s, int w, int h, int bpc, QmChroma chroma);

typedef struct QmEngine QmEngine;

/** Create an engine; on error *out is NULL and *errmsg (if given) points to
 *  a message owned by the caller (free()). */
int qm_engine_open(QmEngine **out, const QmSettings *s, char **errmsg);

/** Backend actually in use (CPU or CUDA). */
QmBackend qm_engine_backend(const QmEngine *e);

/** Why the metrics run where they run, one line (static until close): e.g.
 *  "backend=cpu", "this build has no CUDA backend", "no usable GPU: no CUDA
 *  device", "CUDA on NVIDIA H100: 5 of 6 metric instances on the GPU". */
const char *qm_engine_backend_note(const QmEngine *e);

/** Whether some metric runs on the CPU: pictures must then be planar host
 *  memory (device pictures are accepted only when every metric is on the
 *  GPU). */
bool qm_engine_reads_host(const QmEngine *e);

/** The features every result row carries, in a fixed order. */
unsigned qm_engine_n_features(const QmEngine *e);
const char *qm_engine_feature_name(const QmEngine *e, unsigned i);

/** Frames of look-ahead a result needs (1 with motion/VMAF, else 0). */
unsigned qm_engine_delay(const QmEngine *e);

/**
 * Queue one pair.  The pictures must stay readable until the release
 * callback is called with frame_user (which may happen before this returns).
 * Blocks while the engine's workers are all busy.
 */
int qm_engine_submit(QmEngine *e, const QmPicture *ref, const QmPicture *dist,
                     void *frame_user);

enum {
    /* no scores for this pair, as for a pair that subsample leaves out:
     * metrics that see every frame (motion) still read it, so the scores of
     * the pairs around it are those of a run that scores every pair */
    QM_SUBMIT_SKIP = 1 << 0,
};

/** qm_engine_submit() with QM_SUBMIT_* flags. */
int qm_engine_submit_flags(QmEngine *e, const QmPicture *ref,
                           const QmPicture *dist, void *frame_user,
                           unsigned flags);

typedef struct QmResult {
    uint64_t index;      /* pair index, from 0 in submission order */
    void *frame_user;
    bool computed;       /* false for pairs skipped by subsample */
    const double *value; /* qm_engine_n_features() entries (valid until next
                            call), then values only qm_aggregates_add() reads */
    const uint8_t *present; /* nonzero where value[i] was produced */
} QmResult;

/**
 * Take the next finished result in submission order.  Returns QM_EAGAIN when
 * none is ready (or waits when block is true and one is still being
 * computed), QM_EOF after a flush once all were taken.
 */
int qm_engine_receive(QmEngine *e, QmResult *r, bool block);

/** No more pairs: every submitted pair becomes receivable. */
int qm_engine_flush(QmEngine *e);

/* ---- what an engine computes: the identity a chunk of a title records
 *      (core/partial.h) so that chunks of other runs are not merged ---- */

/**
 * The metric instances the engine runs (the user's and the VMAF models'
 * inputs), each with every option value: "name" for a metric without
 * options, else "name=option=value:option=value..." (the descriptor's
 * options in order, values printed with 17 significant digits), sorted,
 * comma-separated.  device_only: just those the accelerator backend runs
 * ("" when none).  malloc'd; NULL when out of memory.
 */
char *qm_engine_metrics_text(const QmEngine *e, bool device_only);
/** VMAF models loaded, in the order of their scores. */
unsigned qm_engine_n_models(const QmEngine *e);
/** Model i's name (its file name without ".json"). */
const char *qm_engine_model_name(const QmEngine *e, unsigned i);
/** SHA-256 (32 bytes) of the model file the engine loaded for model i. */
const uint8_t *qm_engine_model_sha256(const QmEngine *e, unsigned i);

/** Last error message of the engine (e.g. a failed GPU call), or NULL. */
const char *qm_engine_error(const QmEngine *e);

void qm_engine_close(QmEngine **e);

/* ---- pooled values the metrics provide themselves ---- */

/* Some metrics pool a run their own way (libvmaf's "aggregate_metrics";
 * XPSNR: from the square roots of its weighted SSE, QmMetricDesc.pool).
 * The consumer adds the rows it pools, as it adds them to QmPools. */
typedef struct QmAggregates QmAggregates;

/** For the results of engine e (empty when none of its metrics has such a
 *  value); NULL when out of memory or a metric's pooling fails to start. */
QmAggregates *qm_aggregates_new(const QmEngine *e);
/** The same for rows known only by their feature keys (names[0 .. n-1]:
 *  qmetric-merge's chunks) of pictures of this geometry: an instance for
 *  each run of a pooling metric's features, with its options at their
 *  defaults (keys with option suffixes are not recognised); NULL when out
 *  of memory. */
QmAggregates *qm_aggregates_for_keys(unsigned n, const char *const *names, int w, int h,
                                     int bpc, QmChroma chroma);
/** Add one result row (QmResult.value and .present, as qm_engine_receive()
 *  returned them: value also carries the aux values some metrics need,
 *  behind the features).  Add every result reported, computed or skipped
 *  by subsample. */
void qm_aggregates_add(QmAggregates *a, const double *value, const uint8_t *present);
/** Whether every pooled value comes from the features of the rows alone,
 *  so that rows kept elsewhere (a chunk's partial file) can be pooled again;
 *  false when one needs values of each frame the rows do not carry
 *  (psnr's apsnr_y needs each frame's SSE). */
bool qm_aggregates_from_rows(const QmAggregates *a);
/** The i-th pooled value over the rows added: its key (with the instance's
 *  option suffixes; valid until qm_aggregates_free()) and *value; NULL
 *  after the last. */
const char *qm_aggregates_get(QmAggregates *a, unsigned i, double *value);
void qm_aggregates_free(QmAggregates *a);

/* ---- metric catalogue ---- */

/** NULL-terminated list of the metric names the engine knows. */
const char *const *qm_metric_names(void);
/** Whether metric `name` exists; its one-line description otherwise NULL. */
const char *qm_metric_describe(const char *name);
/** How a feature reads, for charts and reports (the descriptor's display
 *  name and QmScale). */
typedef struct QmFeatureInfo {
    const char *metric;   /* the metric that writes it, e.g. "psnr"; "vmaf"
                             for a model's score */
    const char *display;  /* its name in prose and charts, e.g. "PSNR" */
    const char *unit;     /* e.g. "dB" */
    int better;           /* +1: higher is better, -1: lower is, 0: neither */
    double lo, hi;        /* natural range, NaN where unbounded */
    bool headline;        /* the feature that stands for its metric in a table
                             or a chart: the one named as the metric, else
                             its first (psnr_y for PSNR); a model's score */
    bool model_input;     /* its metric is an input of the VMAF models (vif,
                             adm, motion), reported beside their score */
} QmFeatureInfo;
/** Fill *info for feature key `key` as logs and messages name it (a
 *  metric's feature, with or without the suffixes of its options, e.g.
 *  "integer_vif_scale0_egl_1"; "vmaf" or "vmaf_<model>" for a model's
 *  score) and return true; false for a key no metric writes. */
bool qm_feature_info(const char *key, QmFeatureInfo *info);
/** Whether the CUDA backend was compiled in. */
bool qm_have_cuda(void);
/** Whether metric `name` has a CUDA twin in this build ("vmaf": all of the
 *  model's inputs have one). */
bool qm_metric_has_cuda(const char *name);

/* ---- pooling (libvmaf's definitions) ---- */

/* Memory per pool is bounded whatever the number of values: mean, harmonic
 * mean, min and max are running values (libvmaf's plain double sums, so the
 * pooled values equal libvmaf's); percentiles are exact over the first
 * QM_POOL_EXACT values and come from a log-bucketed sketch after that, with
 * a relative error of at most QM_POOL_ALPHA (docs/robustness.md, Memory). */
#define QM_POOL_EXACT 4096     /* values kept verbatim for exact percentiles */
#define QM_POOL_ALPHA 1e-3     /* the sketch's relative error bound */
#define QM_POOL_TINY 1e-9      /* |x| below this is pooled as 0 by the sketch */

typedef struct QmPoolSketch QmPoolSketch;

typedef struct QmPool {
    uint64_t n;
    double min, max, sum, inv_sum; /* inv_sum = sum of 1 / (x + 1) */
    uint64_t n_nan;                /* NaN values: every percentile is NaN */
    uint64_t n_lost;               /* values the sketch could not store (no memory) */
    double *values;                /* the first QM_POOL_EXACT values, NULL after */
    size_t cap;
    QmPoolSketch *sketch;          /* every value once n > QM_POOL_EXACT */
} QmPool;

void qm_pool_init(QmPool *p);
void qm_pool_add(QmPool *p, double v);
double qm_pool_mean(const QmPool *p);
double qm_pool_harmonic_mean(const QmPool *p); /* n / sum(1/(x+1)) - 1 */
/**
 * Percentile pct (0..100) by linear interpolation between the two values
 * whose ranks surround pct/100*(n-1).  Exact while n <= QM_POOL_EXACT;
 * after that each of the two values is within a relative QM_POOL_ALPHA of
 * the true one (|x| < QM_POOL_TINY: within QM_POOL_TINY absolute), clamped
 * to [min, max].  NaN when a NaN was added or the sketch ran out of memory;
 * 0 when empty.
 */
double qm_pool_percentile(QmPool *p, double pct);
/** Heap bytes the pool holds (its bound is stated in docs/robustness.md). */
size_t qm_pool_bytes(const QmPool *p);
void qm_pool_clear(QmPool *p);

#ifdef __cplusplus
}
#endif
#endif /* QM_H */
