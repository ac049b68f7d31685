/* gst-qmetric: the metric descriptor shared by the CPU and CUDA backends.
 *
 * One metric = one QmMetricDesc in the registry (registry.c).  The descriptor
 * names the features the metric writes (libvmaf's JSON keys), its options,
 * its C functions and, where built, its CUDA twin.  The engine calls:
 *
 *   init()     once per instance (one per worker thread unless the metric
 *              is QM_METRIC_SEQUENTIAL), with the picture geometry;
 *   compute()  once per computed frame, writing row 0 (the frame itself);
 *   post()     in frame order, after compute() of that frame, on the one
 *              instance 0; may read/write rows 0 .. desc->delay back
 *              (temporal features such as motion2 that need the next frame);
 *   flush()    at the end, in place of the missing look-ahead;
 *   close()    per instance.
 *
 * Scores are written through qm_rows_set(); feature indices are positions in
 * desc->features.
 */
#ifndef QM_METRIC_H
#define QM_METRIC_H

#include <math.h>

#include "qm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QM_MAX_FEATURES 16  /* per metric */
#define QM_MAX_OPTIONS 8    /* per metric */
#define QM_MAX_DELAY 2      /* frames of look-ahead a metric may need */

/* The scores of the frame being processed and of up to QM_MAX_DELAY frames
 * before it, restricted to one metric's features. */
typedef struct QmRows {
    double *v[QM_MAX_DELAY + 1];
    uint8_t *set[QM_MAX_DELAY + 1];
    uint64_t index;  /* frame index of row 0 */
} QmRows;

static inline void qm_rows_set(QmRows *r, unsigned back, unsigned f, double x)
{
    r->v[back][f] = x;
    r->set[back][f] = 1;
}

/* Returns 0 and *x when frame (index - back) has feature f, else -1. */
static inline int qm_rows_get(const QmRows *r, unsigned back, unsigned f,
                              double *x)
{
    if (back > r->index || !r->v[back] || !r->set[back][f])
        return -1;
    *x = r->v[back][f];
    return 0;
}

/* Options are doubles (booleans are 0/1), stored in a QmOptValues.  List
 * them in alphabetical order of name: libvmaf sorts them that way when it
 * appends them to feature keys. */
enum {
    QM_OPT_BOOL = 1 << 0,    /* a switch; appears in keys as "_<alias>" */
    QM_OPT_IN_KEY = 1 << 1,  /* libvmaf's VMAF_OPT_FLAG_FEATURE_PARAM: a
                                non-default value is appended to the keys */
    QM_OPT_ENUM = 1 << 2,    /* a libvmaf string option: the value is an
                                index into the metric's option_choices[i],
                                keys show the name */
    QM_OPT_INT = 1 << 3,     /* a libvmaf int option: whole numbers only */
};

typedef struct QmOptionDesc {
    const char *name;     /* libvmaf's option name, e.g. "vif_enhn_gain_limit" */
    const char *alias;    /* libvmaf's key suffix alias, e.g. "egl" */
    const char *help;
    double def, min, max;
    unsigned flags;       /* QM_OPT_* */
} QmOptionDesc;

typedef struct QmOptValues {
    double v[QM_MAX_OPTIONS];
} QmOptValues;

/* Everything init() may need. */
typedef struct QmMetricConfig {
    int w, h, bpc;
    QmChroma chroma;
    const QmOptValues *opt;  /* indexed like desc->options */
} QmMetricConfig;

/* Input of one compute() call. */
typedef struct QmFrame {
    const QmPicture *ref;
    const QmPicture *dist;
    uint64_t index;
} QmFrame;

enum {
    /* compute() keeps state between frames: one instance, called in frame
     * order (e.g. motion keeps the previous reference luma). */
    QM_METRIC_SEQUENTIAL = 1 << 0,
    /* compute() runs on every frame even when subsample skips it (libvmaf's
     * VMAF_FEATURE_EXTRACTOR_PREV_REF rule); its rows of skipped frames are
     * not reported. */
    QM_METRIC_EVERY_FRAME = 1 << 1,
    /* luma only (works on QM_CHROMA_400 input) */
    QM_METRIC_LUMA_ONLY = 1 << 2,
    /* not part of the default "all" set (expensive or experimental) */
    QM_METRIC_OPT_IN = 1 << 3,
    /* a VMAF model input (vif, adm, motion): part of "all" through the
     * model, with the model's options, not on its own */
    QM_METRIC_MODEL_INPUT = 1 << 4,
    /* reads nothing but the luma plane, on any input (the GPU backend then
     * uploads no chroma when every metric on it says so) */
    QM_METRIC_NO_CHROMA = 1 << 5,
};

typedef int (*QmInitFn)(void *priv, const QmMetricConfig *cfg);
typedef int (*QmComputeFn)(void *priv, const QmFrame *f, QmRows *out);
typedef int (*QmPostFn)(void *priv, QmRows *rows);
typedef int (*QmFlushFn)(void *priv, QmRows *rows);
typedef void (*QmCloseFn)(void *priv);

typedef struct QmCpuFuncs {
    size_t priv_size;
    QmInitFn init;
    QmComputeFn compute;
    QmPostFn post;    /* optional */
    QmFlushFn flush;  /* optional; rows.v[0] is the last frame */
    QmCloseFn close;  /* optional */
} QmCpuFuncs;

struct QmCudaFuncs;  /* cuda/qm_cuda.h */

/* Pooled values a metric provides itself (the log's "aggregate_metrics"),
 * for a metric whose score over a run is not a pool of its per-frame
 * values: XPSNR pools the square roots of its weighted SSE (a mean of root
 * distortions, not of dB values) and reports the smallest plane's.  The
 * consumer of the results (the element, qmetric-yuv) drives it through
 * QmAggregates (qm.h) with the rows it pools. */
typedef struct QmPoolFuncs {
    size_t state_size;  /* zeroed before init() */
    /* optional: the geometry and options of the instance */
    int (*init)(void *state, const QmMetricConfig *cfg);
    /* one frame's row of the instance: v[f], present where set[f] is
     * nonzero, for feature f of desc->features; in frame order */
    void (*add)(void *state, const double *v, const uint8_t *set);
    /* the n-th pooled value: its name (a feature's, or another libvmaf key
     * such as "xpsnr_min"; the instance's option suffixes are appended as
     * to its features) and *x; NULL after the last */
    const char *(*value)(const void *state, unsigned n, double *x);
} QmPoolFuncs;

/* How a metric's scores read (charts, reports): metrics with the same unit,
 * direction and range share a chart panel (tools/qmplot.c). */
typedef struct QmScale {
    const char *unit;  /* axis unit, e.g. "dB", "index", "ratio" */
    int better;        /* +1: a higher score is better, -1: lower is, 0:
                          neither (the score describes the content) */
    double lo, hi;     /* natural range, NAN where unbounded: clamps an axis */
} QmScale;

/* An option vector the parity test (tests/parity) runs besides each option
 * alone: a combination the one-at-a-time pass cannot reach (a model's
 * option set, a CSF table for another display), or a value worth content
 * of its own. */
typedef struct QmOptionSet {
    /* "name=value,name=value", values in libvmaf's spelling as
     * qm_option_parse() reads them (true/false, a choice's name) */
    const char *options;
    unsigned flags;    /* QM_OPTSET_* */
} QmOptionSet;

enum {
    /* through the descriptors' functions, C reference against the twin */
    QM_OPTSET_DIRECT = 1 << 0,
    /* through an engine on each backend (QmSettings.features) on reference
     * sequences: where post()/flush(), the look-ahead or a twin's
     * host_done() meet the options */
    QM_OPTSET_ENGINE = 1 << 1,
};

/* The content the parity test runs a metric's option sets on. */
typedef enum QmTestContent {
    /* small sizes up to 577x323, every layout; random, gain and identical
     * distortions */
    QM_TEST_CONTENT_SMALL = 0,
    /* banded and blocky pictures up to 1080p (CAMBI's windows and
     * high-resolution speedup) */
    QM_TEST_CONTENT_BANDED,
    /* 577x323 and 1080p, realistic (noisy) and identical distortions too
     * (SpEED's rescalers and block grid) */
    QM_TEST_CONTENT_NATURAL,
} QmTestContent;

typedef struct QmMetricDesc {
    const char *name;              /* user-facing, e.g. "float_ssim" */
    const char *display;           /* its name in prose and charts, "SSIM" */
    const char *description;       /* one line for docs and gst-inspect */
    QmScale scale;                 /* how its features read */
    const char *const *features;   /* NULL-terminated libvmaf keys */
    const QmOptionDesc *options;   /* terminated by { NULL } ; may be NULL */
    /* per option index: the NULL-terminated names of a QM_OPT_ENUM option,
     * NULL for the others; may be NULL when no option is an enum */
    const char *const *const *option_choices;
    unsigned flags;                /* QM_METRIC_* */
    unsigned delay;                /* frames of look-ahead post() needs */
    /* optional: the look-ahead of an instance with these options, when it
     * depends on them (at most QM_MAX_DELAY); NULL: `delay` */
    unsigned (*delay_of)(const QmOptValues *o);
    int min_w, min_h;              /* smallest picture accepted */
    QmCpuFuncs cpu;
    const struct QmCudaFuncs *cuda; /* NULL when no CUDA twin exists */
    /* optional: whether the twin computes an instance with these options
     * (else that instance runs on the CPU); NULL: every option vector */
    bool (*cuda_accepts)(const QmOptValues *o);
    /* largest |CPU - CUDA| the parity test accepts per feature: 0 for
     * features computed from exact integer sums (bit-exact) */
    double cuda_tol;
    /* option vectors the parity test runs besides each option alone,
     * terminated by { NULL }; may be NULL */
    const QmOptionSet *option_sets;
    QmTestContent option_sets_content;  /* what they run on */
    const QmPoolFuncs *pool;       /* pooled values of its own, or NULL */
} QmMetricDesc;

/* NULL-terminated table of every metric (registry.c). */
extern const QmMetricDesc *const qm_metrics[];

const QmMetricDesc *qm_metric_find(const char *name);

/* Feature key of feature f of a metric instance with these option values:
 * libvmaf appends "_<alias>_<value>" for every option that differs from its
 * default (e.g. "integer_vif_scale0_egl_1").  Returns a malloc'd string. */
char *qm_feature_key(const QmMetricDesc *d, unsigned f, const QmOptValues *o);
/* The same for any key of the metric (e.g. a pooled value's name). */
char *qm_metric_key(const QmMetricDesc *d, const char *name, const QmOptValues *o);

/* Look-ahead of an instance of d with options o (desc->delay_of or
 * desc->delay). */
unsigned qm_metric_delay(const QmMetricDesc *d, const QmOptValues *o);

/* Option `name` of d set from text (libvmaf's spelling: a number, true /
 * false for a switch, a choice's name for QM_OPT_ENUM), range-checked.
 * Returns 0, or QM_EINVAL with a message in err (errlen bytes) naming the
 * option and the problem. */
int qm_option_parse(const QmMetricDesc *d, const char *name, const char *text,
                    QmOptValues *o, char *err, size_t errlen);

/* ---- sample access helpers for the C reference code ---- */

static inline const uint8_t *qm_row8(const QmPicture *p, int plane, int y)
{
    return (const uint8_t *)p->data[plane] + (ptrdiff_t)y * p->stride[plane];
}

static inline const uint16_t *qm_row16(const QmPicture *p, int plane, int y)
{
    return (const uint16_t *)((const uint8_t *)p->data[plane] +
                              (ptrdiff_t)y * p->stride[plane]);
}

/* Sample (x, y) of a plane as an int, whatever the bit depth. */
static inline int qm_sample(const QmPicture *p, int plane, int x, int y)
{
    return p->bpc == 8 ? qm_row8(p, plane, y)[x] : qm_row16(p, plane, y)[x];
}

/* Hot loops written in plain C, compiled for baseline x86-64 plus AVX2 and
 * AVX-512 targets with the best picked at load time (GCC's target_clones):
 * no intrinsics, the same arithmetic, several times faster than SSE2 alone
 * where 32-bit vector multiplies are needed.  Other compilers/targets get
 * one version; define QM_NO_TARGET_CLONES for the baseline only. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 && \
    defined(__x86_64__) && defined(__ELF__) && !defined(QM_NO_TARGET_CLONES)
#define QM_VECTOR_CLONES \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define QM_VECTOR_CLONES
#endif

#define QM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define QM_MAX(a, b) ((a) > (b) ? (a) : (b))

#ifdef __cplusplus
}
#endif

/* The CUDA twin of a metric, or NULL in a build without CUDA. */
#ifdef QM_HAVE_CUDA
#define QM_CUDA_TWIN(sym) (&(sym))
#else
#define QM_CUDA_TWIN(sym) NULL
#endif

#endif /* QM_METRIC_H */
