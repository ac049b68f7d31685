/* gst-qmetric: integer motion, as libvmaf 3.2.0's "motion" feature extractor
 * (src/feature/integer_motion.c, integer_motion.h, motion_blend_tools.h)
 * computes it.  See motion.h for the formulas and the stage boundaries.
 *
 * Features (libvmaf's JSON keys):
 *   VMAF_integer_feature_motion_sad_score  per-frame score vs. the previous
 *                                          reference frame (frame i - 2 with
 *                                          motion_five_frame_window)
 *   integer_motion2, integer_motion3       temporal features, one frame
 *                                          late (two with the five-frame
 *                                          window)
 *
 * Not offered: libvmaf's "debug" option (it adds the key
 * VMAF_integer_feature_motion_score, i.e. integer_motion).
 */
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "motion.h"

const int32_t qm_motion_filter[QM_MOTION_TAPS] = {
    QM_MOTION_F0, QM_MOTION_F1, QM_MOTION_F2, QM_MOTION_F1, QM_MOTION_F0,
};

#define RADIUS (QM_MOTION_TAPS / 2)

size_t qm_motion_scratch_len(int w)
{
    /* one vertically blurred row plus RADIUS mirrored samples each side */
    return (size_t)w + 2 * RADIUS;
}

/*
 * Vertical pass of one output row: the blur of (prev - cur) over the rows
 * r[0..4] (already mirrored) by qm_motion_blur_v() (motion.h).  Returns
 * nonzero when any output is nonzero.  16-bit samples (`wide`) take the
 * 64-bit sum.
 *
 * Forced inline so that each caller gets a copy specialised for its sample
 * size and accumulator width (one code path for every bit depth).
 */
static inline __attribute__((always_inline)) int32_t
blur_rows_vertical(const uint8_t *const prev[QM_MOTION_TAPS],
                   const uint8_t *const cur[QM_MOTION_TAPS],
                   int w, int bpc, int bytes, int wide, int32_t *restrict out)
{
    int32_t any = 0;

    if (bytes == 1) {
        const uint8_t *restrict p0 = prev[0], *restrict p1 = prev[1],
                      *restrict p2 = prev[2], *restrict p3 = prev[3],
                      *restrict p4 = prev[4];
        const uint8_t *restrict c0 = cur[0], *restrict c1 = cur[1],
                      *restrict c2 = cur[2], *restrict c3 = cur[3],
                      *restrict c4 = cur[4];
        for (int x = 0; x < w; x++) {
            out[x] = qm_motion_blur_v(p0[x] - c0[x], p1[x] - c1[x], p2[x] - c2[x],
                                      p3[x] - c3[x], p4[x] - c4[x], bpc);
            any |= out[x];
        }
        return any;
    }

    const uint16_t *restrict p0 = (const uint16_t *)prev[0],
                   *restrict p1 = (const uint16_t *)prev[1],
                   *restrict p2 = (const uint16_t *)prev[2],
                   *restrict p3 = (const uint16_t *)prev[3],
                   *restrict p4 = (const uint16_t *)prev[4];
    const uint16_t *restrict c0 = (const uint16_t *)cur[0],
                   *restrict c1 = (const uint16_t *)cur[1],
                   *restrict c2 = (const uint16_t *)cur[2],
                   *restrict c3 = (const uint16_t *)cur[3],
                   *restrict c4 = (const uint16_t *)cur[4];
    if (!wide) {
        for (int x = 0; x < w; x++) {
            out[x] = qm_motion_blur_v(p0[x] - c0[x], p1[x] - c1[x], p2[x] - c2[x],
                                      p3[x] - c3[x], p4[x] - c4[x], bpc);
            any |= out[x];
        }
    } else {
        for (int x = 0; x < w; x++) {
            out[x] = qm_motion_blur_v_wide(p0[x] - c0[x], p1[x] - c1[x], p2[x] - c2[x],
                                           p3[x] - c3[x], p4[x] - c4[x], bpc);
            any |= out[x];
        }
    }
    return any;
}

/* Horizontal pass of one row and its SAD (qm_motion_blur_h_abs()): pad
 * points RADIUS samples before the row, whose mirrored border samples are
 * filled in.  The row sum is a uint32 as in libvmaf (it wraps only for
 * rows wider than 65536 samples). */
static inline __attribute__((always_inline)) uint32_t
row_sad_horizontal(const int32_t *restrict pad, int w)
{
    uint32_t sum = 0;
    for (int x = 0; x < w; x++)
        sum += qm_motion_blur_h_abs(pad + x);
    return sum;
}

static inline __attribute__((always_inline)) void
motion_row_sad(const void *prev, ptrdiff_t prev_stride, const void *cur,
               ptrdiff_t cur_stride, int w, int h, int bpc, int bytes,
               int32_t *scratch, uint32_t *row_sad)
{
    const int wide = bpc > 15;
    int32_t *row = scratch + RADIUS;
    for (int y = 0; y < h; y++) {
        const uint8_t *pr[QM_MOTION_TAPS], *cr[QM_MOTION_TAPS];
        for (int k = 0; k < QM_MOTION_TAPS; k++) {
            const int r = qm_motion_mirror(y - RADIUS + k, h);
            pr[k] = (const uint8_t *)prev + r * prev_stride;
            cr[k] = (const uint8_t *)cur + r * cur_stride;
        }
        if (!blur_rows_vertical(pr, cr, w, bpc, bytes, wide, row)) {
            row_sad[y] = 0;  /* an all-zero row: libvmaf skips it too */
            continue;
        }
        for (int k = 1; k <= RADIUS; k++) {
            row[-k] = row[qm_motion_mirror(-k, w)];
            row[w - 1 + k] = row[qm_motion_mirror(w - 1 + k, w)];
        }
        row_sad[y] = row_sad_horizontal(scratch, w);
    }
}

/*
 * Both entry points are compiled for three x86-64 levels and picked at load
 * time by the CPU (GCC function multiversioning; the code stays plain C):
 * the baseline x86-64 target only has SSE2, whose lack of a 32-bit vector
 * multiply makes these loops about three times slower than with AVX2.
 * Other compilers and targets get one version.
 */
#define MOTION_CLONES QM_VECTOR_CLONES

MOTION_CLONES
void qm_motion_row_sad_8(const void *prev, ptrdiff_t prev_stride,
                         const void *cur, ptrdiff_t cur_stride,
                         int w, int h, int bpc,
                         int32_t *scratch, uint32_t *row_sad)
{
    motion_row_sad(prev, prev_stride, cur, cur_stride, w, h, bpc, 1, scratch,
                   row_sad);
}

MOTION_CLONES
void qm_motion_row_sad_16(const void *prev, ptrdiff_t prev_stride,
                          const void *cur, ptrdiff_t cur_stride,
                          int w, int h, int bpc,
                          int32_t *scratch, uint32_t *row_sad)
{
    motion_row_sad(prev, prev_stride, cur, cur_stride, w, h, bpc, 2, scratch,
                   row_sad);
}

QmMotionRowSadFn qm_motion_row_sad_fn(int bpc)
{
    return bpc == 8 ? qm_motion_row_sad_8 : qm_motion_row_sad_16;
}

uint64_t qm_motion_sum_rows(const uint32_t *row_sad, int h)
{
    uint64_t sad = 0;
    for (int y = 0; y < h; y++)
        sad += row_sad[y];
    return sad;
}

double qm_motion_score(uint64_t sad, int w, int h, double fps_weight,
                       double max_val)
{
    /* libvmaf: MIN((double)sad / 256. / (w * h) * fps_weight, max_val), with
     * w * h an unsigned product; 256 undoes the Q8 scale of the blur */
    const double s = (double)sad / 256. / (double)((unsigned)w * (unsigned)h) *
                     fps_weight;
    return s < max_val ? s : max_val;
}

double qm_motion_blend(double x, double factor, double offset)
{
    const double lo = offset < x ? offset : x;
    return x * factor + (1 - factor) * lo;
}

/* motion2 of frame i >= min from score[i - step + 1] (lo, when that frame
 * is >= min) and score[i + 1] (hi, when frame i + 1 exists) */
static double motion2_of(double score, int has_hi, double hi, int has_lo,
                         double lo)
{
    if (!has_hi)
        return score;
    if (has_lo)
        return lo < hi ? lo : hi;
    return hi;
}

static double processed_of(double x, double factor, double offset,
                           double max_val)
{
    const double b = qm_motion_blend(x, factor, offset);
    return b < max_val ? b : max_val;
}

void qm_motion_temporal(const double *score, size_t n, int ffw, int mma,
                        double bf, double bo, double max_val, double *m2,
                        double *m3)
{
    const size_t min = ffw ? 2 : 1, step = ffw ? 2 : 1;
    const double stamp = n > min ? processed_of(score[min], bf, bo, max_val) : 0.;
    double prev = stamp;
    for (size_t i = 0; i < n; i++) {
        if (i < min) {
            m2[i] = 0.;
            m3[i] = stamp;
            prev = stamp;
            continue;
        }
        const size_t lo = i + 1 - step;
        m2[i] = motion2_of(score[i], i + 1 < n, i + 1 < n ? score[i + 1] : 0.,
                           lo >= min, score[lo]);
        const double p = processed_of(m2[i], bf, bo, max_val);
        m3[i] = mma ? (p + prev) / 2.0 : p;
        prev = p;
    }
}

/* ---- the metric ---- */

/* Feature and option indices: motion.h (shared with the CUDA twin). */

typedef struct MotionState {
    int w, h, bpc, bytes;
    QmMotionRowSadFn row_sad_fn;
    uint8_t *prev;          /* the previous reference luma, tightly packed */
    ptrdiff_t prev_stride;
    int have_prev;
    int32_t *scratch;
    uint32_t *row_sad;
    double blend_factor, blend_offset, fps_weight, max_val;
    int force_zero;
    int five_frame_window, moving_average;
    unsigned min_idx, step;   /* 2, 2 with the five-frame window; else 1, 1 */
    uint8_t *prev2;           /* five-frame window: luma of frame i - 2 */
    int have_prev2;
    /* written by post()/flush() only (they may run while compute() works
     * on a later frame): the previous frame's clipped, blended motion2 */
    double prev_processed;
} MotionState;

static void motion_close(void *priv)
{
    MotionState *s = priv;
    free(s->prev);
    free(s->prev2);
    free(s->scratch);
    free(s->row_sad);
    s->prev = NULL;
    s->prev2 = NULL;
    s->scratch = NULL;
    s->row_sad = NULL;
}

int qm_motion_check(const QmMetricConfig *cfg)
{
    if (cfg->w < QM_MOTION_MIN_SIZE || cfg->h < QM_MOTION_MIN_SIZE ||
        cfg->bpc < 8 || cfg->bpc > 16)
        return QM_ENOTSUP;
    return 0;
}

static int motion_init(void *priv, const QmMetricConfig *cfg)
{
    MotionState *s = priv;
    const int err = qm_motion_check(cfg);
    if (err)
        return err;
    s->w = cfg->w;
    s->h = cfg->h;
    s->bpc = cfg->bpc;
    s->bytes = cfg->bpc == 8 ? 1 : 2;
    s->row_sad_fn = qm_motion_row_sad_fn(cfg->bpc);
    s->blend_factor = cfg->opt->v[QM_MOTION_OPT_BLEND_FACTOR];
    s->blend_offset = cfg->opt->v[QM_MOTION_OPT_BLEND_OFFSET];
    s->force_zero = cfg->opt->v[QM_MOTION_OPT_FORCE_ZERO] != 0;
    s->fps_weight = cfg->opt->v[QM_MOTION_OPT_FPS_WEIGHT];
    s->max_val = cfg->opt->v[QM_MOTION_OPT_MAX_VAL];
    s->five_frame_window = cfg->opt->v[QM_MOTION_OPT_FIVE_FRAME_WINDOW] != 0;
    s->moving_average = cfg->opt->v[QM_MOTION_OPT_MOVING_AVERAGE] != 0;
    s->min_idx = s->step = s->five_frame_window ? 2 : 1;

    s->prev_stride = (ptrdiff_t)s->w * s->bytes;
    s->prev = malloc((size_t)s->prev_stride * (size_t)s->h);
    if (s->five_frame_window && s->prev) {
        s->prev2 = malloc((size_t)s->prev_stride * (size_t)s->h);
        if (!s->prev2) {
            motion_close(s);
            return QM_ENOMEM;
        }
    }
    s->scratch = malloc(qm_motion_scratch_len(s->w) * sizeof(int32_t));
    s->row_sad = malloc((size_t)s->h * sizeof(uint32_t));
    if (!s->prev || !s->scratch || !s->row_sad) {
        motion_close(s);
        return QM_ENOMEM;
    }
    return 0;
}

static int motion_compute(void *priv, const QmFrame *f, QmRows *out)
{
    MotionState *s = priv;
    double score = 0.;

    /* libvmaf: frames before min_idx and motion_force_zero score 0; the
     * five-frame window compares with frame i - 2 (prev2), else i - 1 */
    if (!s->force_zero && f->index >= s->min_idx) {
        const uint8_t *base = s->five_frame_window ? s->prev2 : s->prev;
        if (!(s->five_frame_window ? s->have_prev2 : s->have_prev))
            return QM_EINVAL;  /* frames must come in order, none skipped */
        s->row_sad_fn(base, s->prev_stride, f->ref->data[0],
                      f->ref->stride[0], s->w, s->h, s->bpc, s->scratch,
                      s->row_sad);
        const uint64_t sad = qm_motion_sum_rows(s->row_sad, s->h);
        score = qm_motion_score(sad, s->w, s->h, s->fps_weight, s->max_val);
    }
    if (!s->force_zero) {
        if (s->five_frame_window) {
            /* frame i - 1 becomes frame i - 2 of the next frame */
            uint8_t *t = s->prev2;
            s->prev2 = s->prev;
            s->prev = t;
            s->have_prev2 = s->have_prev;
        }
        const size_t len = (size_t)s->prev_stride;
        for (int y = 0; y < s->h; y++)
            memcpy(s->prev + (ptrdiff_t)y * s->prev_stride,
                   (const uint8_t *)f->ref->data[0] +
                       (ptrdiff_t)y * f->ref->stride[0],
                   len);
        s->have_prev = 1;
    }
    qm_rows_set(out, 0, QM_MOTION_FEAT_SAD, score);
    return 0;
}

/* Write motion2/motion3 of frame (index - back), index >= min_idx, which
 * has a successor when has_next (libvmaf flush(), streamed).  post() may
 * run while compute() works on a later frame: read only the rows, the
 * options and prev_processed (which compute() never touches). */
static int write_temporal(MotionState *s, QmRows *rows, unsigned back,
                          int has_next)
{
    double score, hi = 0., lo = 0.;
    const unsigned lo_back = back + s->step - 1;
    const int has_lo = rows->index - lo_back >= s->min_idx;
    if (qm_rows_get(rows, back, QM_MOTION_FEAT_SAD, &score) ||
        (has_next && qm_rows_get(rows, back - 1, QM_MOTION_FEAT_SAD, &hi)) ||
        (has_lo && qm_rows_get(rows, lo_back, QM_MOTION_FEAT_SAD, &lo)))
        return QM_EINVAL;
    const double m2 = motion2_of(score, has_next, hi, has_lo, lo);
    const double p = processed_of(m2, s->blend_factor, s->blend_offset,
                                  s->max_val);
    const double m3 = s->moving_average ? (p + s->prev_processed) / 2.0 : p;
    s->prev_processed = p;
    qm_rows_set(rows, back, QM_MOTION_FEAT_MOTION2, m2);
    qm_rows_set(rows, back, QM_MOTION_FEAT_MOTION3, m3);
    return 0;
}

/* The frames before min_idx, rows b0 .. b1 back: motion2 0, motion3 the
 * "stamp" value (also the previous processed value of frame min_idx). */
static void write_head(MotionState *s, QmRows *rows, unsigned b0, unsigned b1,
                       double stamp)
{
    for (unsigned b = b0; b <= b1; b++) {
        qm_rows_set(rows, b, QM_MOTION_FEAT_MOTION2, 0.);
        qm_rows_set(rows, b, QM_MOTION_FEAT_MOTION3, stamp);
    }
    s->prev_processed = stamp;
}

static int motion_post(void *priv, QmRows *rows)
{
    MotionState *s = priv;
    if (rows->index < s->min_idx)
        return 0;
    if (rows->index == s->min_idx) {
        /* frames 0 .. min_idx - 1 take the stamp of score[min_idx] */
        double x;
        if (qm_rows_get(rows, 0, QM_MOTION_FEAT_SAD, &x))
            return QM_EINVAL;
        write_head(s, rows, 1, s->min_idx,
                   processed_of(x, s->blend_factor, s->blend_offset, s->max_val));
        return 0;
    }
    /* frame i's score completes frame i - 1 */
    return write_temporal(s, rows, 1, 1);
}

static int motion_flush(void *priv, QmRows *rows)
{
    MotionState *s = priv;
    /* the last frame has no successor; a stream that ends before frame
     * min_idx has motion2 = motion3 = 0 everywhere */
    if (rows->index < s->min_idx) {
        write_head(s, rows, 0, (unsigned)rows->index, 0.);
        return 0;
    }
    return write_temporal(s, rows, 0, 0);
}

static unsigned motion_delay(const QmOptValues *o)
{
    /* frame 0's motion3 needs score[2] with the five-frame window */
    return o->v[QM_MOTION_OPT_FIVE_FRAME_WINDOW] != 0 ? 2 : 1;
}

extern const struct QmCudaFuncs qm_cuda_motion;  /* cuda/motion.cu */

static const char *const motion_features[] = {
    "VMAF_integer_feature_motion_sad_score",
    "integer_motion2",
    "integer_motion3",
    NULL,
};

/* libvmaf integer_motion.c options[]: names, aliases, defaults and ranges;
 * all are VMAF_OPT_FLAG_FEATURE_PARAM (non-default values go into keys). */
static const QmOptionDesc motion_options[] = {
    [QM_MOTION_OPT_BLEND_FACTOR] = { "motion_blend_factor", "mbf",
                         "blend motion score given an offset",
                         1.0, 0.0, 1.0, QM_OPT_IN_KEY },
    [QM_MOTION_OPT_BLEND_OFFSET] = { "motion_blend_offset", "mbo",
                         "blend motion score starting from this offset",
                         40.0, 0.0, 1000.0, QM_OPT_IN_KEY },
    [QM_MOTION_OPT_FIVE_FRAME_WINDOW] = { "motion_five_frame_window", "mffw",
                       "use five-frame temporal window (score vs. frame i - 2)",
                       0.0, 0.0, 1.0, QM_OPT_IN_KEY | QM_OPT_BOOL },
    [QM_MOTION_OPT_FORCE_ZERO] = { "motion_force_zero", "force_0",
                       "forcing motion score to zero",
                       0.0, 0.0, 1.0, QM_OPT_IN_KEY | QM_OPT_BOOL },
    [QM_MOTION_OPT_FPS_WEIGHT] = { "motion_fps_weight", "mfw",
                       "fps-aware multiplicative weight/correction",
                       1.0, 0.0, 5.0, QM_OPT_IN_KEY },
    [QM_MOTION_OPT_MAX_VAL] = { "motion_max_val", "mmxv",
                    "maximum value allowed; larger values will be clipped "
                    "to this value",
                    10000.0, 0.0, 10000.0, QM_OPT_IN_KEY },
    [QM_MOTION_OPT_MOVING_AVERAGE] = { "motion_moving_average", "mma",
                       "use moving average for motion scores after first frame",
                       0.0, 0.0, 1.0, QM_OPT_IN_KEY | QM_OPT_BOOL },
    { NULL },
};

/* The motion options of the VMAF v1 models and a few mixtures, through the
 * engine (where post()/flush(), the look-ahead and the twin's history meet)
 * besides each option alone. */
static const QmOptionSet motion_option_sets[] = {
    /* vmaf_v1.0.16_hfr_*: keys _mffw_mmxv_18_mma */
    { "motion_five_frame_window=true,motion_moving_average=true,motion_max_val=18",
      QM_OPTSET_DIRECT | QM_OPTSET_ENGINE },
    { "motion_max_val=18", QM_OPTSET_ENGINE },  /* the other v1 models */
    { "motion_five_frame_window=true,motion_blend_factor=0.5,motion_blend_offset=3,"
      "motion_fps_weight=1.5,motion_max_val=0.5", QM_OPTSET_ENGINE },
    { "motion_moving_average=true,motion_blend_factor=0.25,motion_blend_offset=2",
      QM_OPTSET_ENGINE },
    { "motion_five_frame_window=true,motion_force_zero=true", QM_OPTSET_ENGINE },
    { NULL },
};

const QmMetricDesc qm_metric_motion = {
    .name = "motion",
    .display = "motion",
    .description = "VMAF integer motion: mean absolute difference of the "
                   "blurred reference luma between consecutive frames",
    /* it describes the content, not its quality */
    .scale = { "mean abs. diff.", 0, 0, NAN },
    .features = motion_features,
    .options = motion_options,
    .flags = QM_METRIC_SEQUENTIAL | QM_METRIC_EVERY_FRAME |
             QM_METRIC_LUMA_ONLY | QM_METRIC_NO_CHROMA | QM_METRIC_MODEL_INPUT,
    .delay = 1,
    .delay_of = motion_delay,
    .min_w = QM_MOTION_MIN_SIZE,
    .min_h = QM_MOTION_MIN_SIZE,
    .cpu = {
        .priv_size = sizeof(MotionState),
        .init = motion_init,
        .compute = motion_compute,
        .post = motion_post,
        .flush = motion_flush,
        .close = motion_close,
    },
    /* integer stages and exact sums: the twin gives the same scores, for
     * every option (the five-frame window keeps two frames on the device;
     * the moving average, blend and clipping are post()/flush() here) */
    .cuda = QM_CUDA_TWIN(qm_cuda_motion),
    .cuda_tol = 0,
    .option_sets = motion_option_sets,
};
