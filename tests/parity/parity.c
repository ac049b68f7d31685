/* gst-qmetric: CPU/CUDA parity, in the spirit of dav1d's checkasm.
 *
 * For every metric with a CUDA twin, run the C reference and the twin on the
 * same pictures and compare every feature: bit-exact where the descriptor's
 * cuda_tol is 0, else within it.  Inputs: random data from a printed seed
 * (reseeded per metric and case), and worst cases: all 0, all max,
 * checkerboard, identical pictures; banded content (steps of one code, as
 * CAMBI looks for) and flat blocks of random values; sizes from the
 * smallest the metric accepts to 1080p, odd sizes, strides wider than the
 * picture (with guard bytes that must stay untouched), chroma interleaved
 * as in NV12/P010 (MSB-aligned) and pictures already in device memory.
 * Pictures hold whole chroma planes (qm_plane_size_full(): an odd size's
 * last column and row, which XPSNR reads).
 * A size the C reference refuses (some metrics decide at init(), e.g.
 * CAMBI) must be refused by the twin with the same error.  Temporal metrics
 * (QM_METRIC_SEQUENTIAL, e.g. motion on consecutive reference pictures) get
 * longer sequences whose reference pictures follow the pattern too: frames
 * alternating between all 0 and all max, a checkerboard then its inverse,
 * and a reference that does not change; every run starts a new engine, so
 * frame 0 checks the first-frame convention.
 * Metrics with options are also run with each option at its non-default
 * extremes, every value of a small integral range (a mode) or else the
 * midpoint, and the option sets of their descriptors
 * (QmMetricDesc.option_sets, on the content the descriptor names: CAMBI's
 * on banded and blocky content up to 1080p), through the descriptors'
 * functions; an option vector both backends refuse alike (e.g. a viewing
 * distance the reference has no CSF for) is counted with the refused
 * combinations.
 *
 * Metrics with post()/flush() (motion) get their option vectors through the
 * engine too (its `features` text), where the temporal rows, the look-ahead
 * and the flush of both backends meet, and the twin must really run on the
 * device.
 *
 *   parity [--seed N] [--metric NAME] [--bench] [--max-pixels N] [--small]
 *          [--quick]
 * (--max-pixels: leave out larger sizes, for tests/cuda-emu; --small: 300x220
 * in place of 577x323, about 3 times faster under the emulator; --quick: per
 * metric only its smallest size, an odd one and 64x48, fewer layouts in the
 * options passes: the CI run under the emulator, tests/parity/meson.build)
 * Exit: 0 pass, 1 fail, 77 no CUDA device, or --metric names a metric
 * without a twin (skip).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "metric.h"
#include "qm.h"
#include "qm_cuda.h"

static uint64_t rng_state;

static uint32_t rnd(void)
{
    /* xorshift64*: reproducible from the printed seed */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 2685821657736338717ULL) >> 32);
}

enum { PAT_RANDOM, PAT_ZERO, PAT_MAX, PAT_CHECKER, PAT_SAME, PAT_NOISY, PAT_BANDS,
       PAT_BLOCKS, PAT_N,
       /* reference sequences of temporal metrics only */
       PAT_CHECKER_INV = PAT_N,
       /* options pass only: the reference with its contrast doubled
        * (gains above 1, for limits such as VIF's enhancement gain) */
       PAT_GAIN };
static const char *const pat_name[] = { "random", "zero", "max", "checker", "identical",
                                        "noisy", "bands", "blocks", "checker-inverse",
                                        "gain" };

/* a well-mixed hash, for the values of PAT_BLOCKS' blocks */
static uint32_t hash3(uint32_t a, uint32_t b, uint32_t c)
{
    uint64_t h = (a * 0x9E3779B97F4A7C15ULL) ^ (b * 0xC2B2AE3D27D4EB4FULL) ^ c;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 29;
    return (uint32_t)h;
}

typedef struct Layout {
    const char *name;
    QmChroma chroma;
    int bpc;
    bool interleaved;   /* GPU gets NV12/P010-style chroma */
    int shift;          /* GPU gets MSB-aligned samples */
    bool device;        /* GPU gets device pointers */
    int pad;            /* extra bytes per row */
} Layout;

static const Layout layouts[] = {
    { "420-8", QM_CHROMA_420, 8, false, 0, false, 0 },
    { "420-8-nv12", QM_CHROMA_420, 8, true, 0, false, 0 },
    { "420-10-p010-device", QM_CHROMA_420, 10, true, 6, true, 0 },
    /* host P010 as stored: what the element gives the CUDA backend */
    { "420-10-p010", QM_CHROMA_420, 10, true, 6, false, 0 },
    { "420-10-padded", QM_CHROMA_420, 10, false, 0, false, 70 },
    { "422-8", QM_CHROMA_422, 8, false, 0, true, 0 },
    { "444-12", QM_CHROMA_444, 12, false, 0, false, 0 },
    { "444-16", QM_CHROMA_444, 16, false, 0, false, 0 },
    { "400-8", QM_CHROMA_400, 8, false, 0, false, 0 },
};

/* 11x11: smallest float_ssim; 33x33: smallest adm (3x3 bands at its last
 * scale, no border left out of its sums); 176x176: smallest float_ms_ssim
 * (1x1 valid region at its last scale); 401x385, 643x641: float_ssim's
 * decimation by 2 and 3 on odd sizes (577x323 has none, 1920x1080 4);
 * 216x1, 233x41: CAMBI's smallest encodes (one side of at least 216) */
static int sizes[][2] = {
    { 1, 1 }, { 2, 2 }, { 3, 5 }, { 11, 11 }, { 16, 16 }, { 17, 9 }, { 33, 33 }, { 35, 19 },
    { 64, 48 }, { 176, 176 }, { 216, 1 }, { 233, 41 }, { 401, 385 }, { 577, 323 },
    { 643, 641 },
    { 1920, 1080 },
};

/* --max-pixels */
static long max_pixels = -1;

/* A size this run leaves out: below the metric's minimum, or above
 * --max-pixels. */
static bool size_skipped(const QmMetricDesc *d, int w, int h)
{
    return w < d->min_w || h < d->min_h || (max_pixels >= 0 && (long)w * h > max_pixels);
}

/* --quick: the sizes of the metric at hand (pick_quick_sizes()) */
static bool quick;
static int quick_sizes[3][2];
static size_t n_quick_sizes;
static size_t quick_first;  /* index in sizes[] of the smallest one taken */
/* --quick options passes: 8 bits, 10 bits MSB-aligned in device memory,
 * 16 bits (the widest sums) */
static const int quick_layouts[] = { 0, 2, 6 };

static bool is_quick_size(int w, int h)
{
    for (size_t i = 0; i < n_quick_sizes; i++)
        if (quick_sizes[i][0] == w && quick_sizes[i][1] == h)
            return true;
    return false;
}

#define GUARD 64
#define GUARD_BYTE 0xA5

/* Host planar pictures for the CPU; the GPU's layout built from them. */
typedef struct Pic {
    uint8_t *buf[3];
    size_t size[3];
    QmPicture cpu, gpu;
    uint8_t *gbuf, *dbuf;   /* GPU layout (host), its device copy */
    size_t gsize;
} Pic;

static void fill(Pic *pc, const Layout *l, int w, int h, int pat, const Pic *like)
{
    const int bytes = l->bpc > 8 ? 2 : 1, max = (1 << l->bpc) - 1;
    const int np = qm_n_planes(l->chroma);
    /* PAT_BANDS: v = lo + ((ax x + ay y) / bw) mod r, steps of one code;
     * PAT_BLOCKS: bs x bs blocks of values lo .. lo + r - 1.  Drawn for
     * these two only: the other patterns keep the data a seed gave them. */
    int lo = 0, r = 1, bw = 1, ax = 0, ay = 1, bs = 1;
    uint32_t salt = 0;
    if (pat == PAT_BANDS || pat == PAT_BLOCKS) {
        lo = (int)((uint64_t)max * (5 + rnd() % 40) / 100);
        r = 2 + (int)(rnd() % 30);
        bw = 2 + (int)(rnd() % 40);
        ax = (int)(rnd() % 4);
        ay = (int)(rnd() % 4) + (ax == 0);
        bs = 2 + (int)(rnd() % 7);
        salt = rnd();
    }
    memset(&pc->cpu, 0, sizeof(pc->cpu));
    pc->cpu.w = w;
    pc->cpu.h = h;
    pc->cpu.bpc = l->bpc;
    pc->cpu.chroma = l->chroma;
    for (int p = 0; p < np; p++) {
        int pw, ph;
        qm_plane_size_full(w, h, l->chroma, p, &pw, &ph);
        size_t stride = (size_t)pw * bytes + (size_t)l->pad;
        if (!stride)
            stride = 1;
        pc->size[p] = stride * (size_t)(ph ? ph : 1) + 2 * GUARD;
        pc->buf[p] = malloc(pc->size[p]);
        memset(pc->buf[p], GUARD_BYTE, pc->size[p]);
        uint8_t *d = pc->buf[p] + GUARD;
        for (int y = 0; y < ph; y++) {
            for (int x = 0; x < pw; x++) {
                int v;
                if ((pat == PAT_SAME || pat == PAT_GAIN) && like) {
                    v = bytes == 1 ? like->cpu.data[p] ? ((const uint8_t *)like->cpu.data[p])[(size_t)y * like->cpu.stride[p] + x] : 0
                                   : ((const uint16_t *)((const uint8_t *)like->cpu.data[p] + (size_t)y * like->cpu.stride[p]))[x];
                    if (pat == PAT_GAIN) {
                        v = 2 * v - (max + 1) / 2;
                        v = v < 0 ? 0 : v > max ? max : v;
                    }
                } else if (pat == PAT_NOISY && like) {
                    /* the reference plus small noise: realistic scores
                     * (e.g. a positive structure term for MS-SSIM) */
                    const int e = ((int)(rnd() % 9) - 4) * (1 << (l->bpc - 8));
                    v = QM_MAX(0, QM_MIN(max, qm_sample(&like->cpu, p, x, y) + e));
                } else if (pat == PAT_ZERO) {
                    v = 0;
                } else if (pat == PAT_MAX) {
                    v = max;
                } else if (pat == PAT_CHECKER) {
                    v = ((x ^ y) & 1) ? max : 0;
                } else if (pat == PAT_CHECKER_INV) {
                    v = ((x ^ y) & 1) ? 0 : max;
                } else if (pat == PAT_BANDS) {
                    v = lo + ((ax * x + ay * y) / bw) % r;
                } else if (pat == PAT_BLOCKS) {
                    v = lo + (int)(hash3((uint32_t)(x / bs), (uint32_t)(y / bs),
                                         salt + (uint32_t)p) % (uint32_t)r);
                } else {
                    v = (int)(rnd() % (uint32_t)(max + 1));
                }
                if (bytes == 1)
                    d[(size_t)y * stride + x] = (uint8_t)v;
                else
                    ((uint16_t *)(d + (size_t)y * stride))[x] = (uint16_t)v;
            }
        }
        pc->cpu.data[p] = d;
        pc->cpu.stride[p] = (ptrdiff_t)stride;
    }

    /* GPU layout: luma as is (shifted), chroma interleaved when asked */
    pc->gpu = pc->cpu;
    size_t off[3] = { 0 }, total = 0, gstride[3] = { 0 };
    for (int p = 0; p < np; p++) {
        int pw, ph;
        qm_plane_size_full(w, h, l->chroma, p, &pw, &ph);
        if (l->interleaved && p == 2) {
            off[2] = off[1] + (size_t)bytes;
            gstride[2] = gstride[1];
            continue;
        }
        gstride[p] = (size_t)pw * bytes * (l->interleaved && p == 1 ? 2 : 1) + 32;
        off[p] = total;
        total += gstride[p] * (size_t)(ph ? ph : 1);
    }
    pc->gsize = total ? total : 1;
    pc->gbuf = calloc(1, pc->gsize);
    for (int p = 0; p < np; p++) {
        int pw, ph;
        qm_plane_size_full(w, h, l->chroma, p, &pw, &ph);
        const int step = l->interleaved && p > 0 ? 2 : 1;
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++) {
                int v = qm_sample(&pc->cpu, p, x, y) << l->shift;
                uint8_t *row = pc->gbuf + off[p] + (size_t)y * gstride[p];
                if (bytes == 1)
                    row[(size_t)x * step] = (uint8_t)v;
                else
                    ((uint16_t *)row)[(size_t)x * step] = (uint16_t)v;
            }
        pc->gpu.data[p] = pc->gbuf + off[p];
        pc->gpu.stride[p] = (ptrdiff_t)gstride[p];
        pc->gpu.step[p] = step;
    }
    pc->gpu.shift = l->shift;
    pc->dbuf = NULL;
    if (l->device) {
        cudaMalloc((void **)&pc->dbuf, pc->gsize);
        cudaMemcpy(pc->dbuf, pc->gbuf, pc->gsize, cudaMemcpyHostToDevice);
        /* a copy from pageable memory may still be in flight when cudaMemcpy
         * returns, and the engine's stream does not wait for the default
         * stream */
        cudaDeviceSynchronize();
        for (int p = 0; p < np; p++)
            pc->gpu.data[p] = pc->dbuf + ((const uint8_t *)pc->gpu.data[p] - pc->gbuf);
        pc->gpu.flags = QM_PICTURE_DEVICE;
    }
}

static int guards_intact(const Pic *pc, const Layout *l)
{
    for (int p = 0; p < qm_n_planes(l->chroma); p++)
        for (size_t i = 0; i < GUARD; i++)
            if (pc->buf[p][i] != GUARD_BYTE || pc->buf[p][pc->size[p] - 1 - i] != GUARD_BYTE)
                return 0;
    return 1;
}

static void pic_free(Pic *pc)
{
    for (int p = 0; p < 3; p++)
        free(pc->buf[p]);
    free(pc->gbuf);
    if (pc->dbuf)
        cudaFree(pc->dbuf);
    memset(pc, 0, sizeof(*pc));
}

/* An engine for one metric on one backend: one thread on the CPU; on CUDA
 * four, so that the backend's copy workers stage several frames at once
 * and launch them in order (eight slots in flight). */
static int open_engine(QmEngine **e, const char *metric, const char *features,
                       const Layout *l, int w, int h, QmBackend be, char **msg)
{
    QmSettings s;
    qm_settings_default(&s, w, h, l->bpc, l->chroma);
    /* an option vector alone: beside the default instance, options that
     * keys do not show would write the same keys twice (refused) */
    s.metrics = features && *features ? "none" : metric;
    s.features = features;
    s.backend = be;
    s.n_threads = be == QM_BACKEND_CUDA ? 4 : 1;
    return qm_engine_open(e, &s, msg);
}

/* The error with which an engine for this metric and geometry does not
 * open, or 0. */
static int open_error(const char *metric, const Layout *l, int w, int h, QmBackend be)
{
    QmEngine *e;
    char *msg = NULL;
    const int err = open_engine(&e, metric, NULL, l, w, h, be, &msg);
    free(msg);
    if (!err)
        qm_engine_close(&e);
    return err;
}

/* Small pictures go through the engine this many times (frames 0 .. n - 1,
 * again and again): more frames than the CUDA backend has slots, so that
 * every slot is reused while the copy workers stage and launch the next
 * frames (a stale or early read shows as a difference). */
#define ENGINE_REPS 3
static int engine_reps(int w, int h)
{
    return (long)w * h <= 20000 ? ENGINE_REPS : 1;
}

/* Run one engine over n frames, repeated engine_reps() times; results in
 * out[frame * nf + f].  features: QmSettings.features (instances with
 * options), or NULL. */
static int run(const char *metric, const char *features, const Layout *l, int w, int h,
               Pic *ref, Pic *dis, int n, QmBackend be, double *out, uint8_t *set,
               unsigned *nf, double *secs)
{
    QmEngine *e;
    char *msg = NULL;
    int err = open_engine(&e, metric, features, l, w, h, be, &msg);
    if (err) {
        /* a format or size the metric refuses is checked in main() */
        if (err != QM_ENOTSUP)
            printf("  engine (%s): %s\n", be == QM_BACKEND_CUDA ? "cuda" : "cpu", msg);
        free(msg);
        return err;
    }
    *nf = qm_engine_n_features(e);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    QmResult r;
    int got = 0;
    const int total = n * engine_reps(w, h);
    for (int k = 0; k < total && !err; k++) {
        const int i = k % n;
        err = qm_engine_submit(e, be == QM_BACKEND_CUDA ? &ref[i].gpu : &ref[i].cpu,
                               be == QM_BACKEND_CUDA ? &dis[i].gpu : &dis[i].cpu, NULL);
        while (!err && qm_engine_receive(e, &r, false) == 0) {
            memcpy(out + (size_t)got * *nf, r.value, *nf * sizeof(double));
            memcpy(set + (size_t)got * *nf, r.present, *nf);
            got++;
        }
    }
    qm_engine_flush(e);
    while (!err && qm_engine_receive(e, &r, true) == 0) {
        memcpy(out + (size_t)got * *nf, r.value, *nf * sizeof(double));
        memcpy(set + (size_t)got * *nf, r.present, *nf);
        got++;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (secs)
        *secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (err || got != total) {
        printf("  engine (%s): %s\n", be == QM_BACKEND_CUDA ? "cuda" : "cpu",
               qm_engine_error(e) ? qm_engine_error(e) : "frames missing");
        err = err ? err : QM_EINVAL;
    }
    qm_engine_close(&e);
    return err;
}

#define MAX_FRAMES 6
#define MAX_ROWS (MAX_FRAMES * ENGINE_REPS * QM_MAX_FEATURES * 4)

/* n frames of nf features, the C reference's (a, present in sa) against the
 * twin's (b, sb), [frame * nf + feature]: the same features present, equal
 * infinities and NaNs, else within the descriptor's cuda_tol; *worst keeps
 * the largest difference.  Returns 1 at the first frame with a mismatch
 * (every mismatch of that frame printed), else 0. */
static int compare_frames(const QmMetricDesc *d, int n, unsigned nf, const double *a,
                          const uint8_t *sa, const double *b, const uint8_t *sb,
                          double *worst)
{
    int bad = 0;
    for (int i = 0; i < n && !bad; i++) {
        for (unsigned f = 0; f < nf; f++) {
            const size_t k = (size_t)i * nf + f;
            const double x = a[k], y = b[k];
            if (sa[k] != sb[k]) {
                printf("  %s frame %d feature %u: present on one side only\n", d->name, i, f);
                bad = 1;
                continue;
            }
            if (!sa[k] || (isinf(x) && isinf(y) && x == y) || (isnan(x) && isnan(y)))
                continue;
            const double diff = fabs(x - y);
            *worst = diff > *worst ? diff : *worst;
            if (!(diff <= d->cuda_tol)) {
                printf("  %s frame %d feature %u: cpu %.17g cuda %.17g\n", d->name, i, f, x,
                       y);
                bad = 1;
            }
        }
    }
    return bad;
}

/* Pattern of reference frame i of a temporal metric's case `pat`: the frame
 * to frame differences are then the worst cases (largest positive and
 * negative steps, alternating signs at every sample, none at all). */
static int ref_pattern(int pat, int i)
{
    switch (pat) {
    case PAT_ZERO:
        return i & 1 ? PAT_MAX : PAT_ZERO;
    case PAT_MAX:
        return i & 1 ? PAT_ZERO : PAT_MAX;
    case PAT_CHECKER:
        return i == 0 ? PAT_CHECKER : i == 1 ? PAT_CHECKER_INV : PAT_RANDOM;
    case PAT_SAME:
        return i == 0 ? PAT_RANDOM : PAT_SAME;  /* a copy of frame 0 */
    default:
        return PAT_RANDOM;
    }
}

/* ---- options: the descriptors driven directly ---- */

/* The rows a descriptor writes frame i's nf features to (no earlier frames:
 * the options pass leaves metrics with post() out). */
static QmRows frame_rows(double *out, uint8_t *set, int i, unsigned nf)
{
    QmRows rows;
    memset(&rows, 0, sizeof(rows));
    rows.v[0] = out + (size_t)i * nf;
    rows.set[0] = set + (size_t)i * nf;
    rows.index = (uint64_t)i;
    return rows;
}

static int direct_cpu(const QmMetricDesc *d, const QmMetricConfig *cfg, Pic *ref,
                      Pic *dis, int n, unsigned nf, double *out, uint8_t *set)
{
    void *priv = calloc(1, d->cpu.priv_size ? d->cpu.priv_size : 1);
    if (!priv)
        return QM_ENOMEM;
    int err = d->cpu.init(priv, cfg);
    const bool inited = !err;
    for (int i = 0; i < n && !err; i++) {
        QmRows rows = frame_rows(out, set, i, nf);
        const QmFrame fr = { &ref[i].cpu, &dis[i].cpu, (uint64_t)i };
        err = d->cpu.compute(priv, &fr, &rows);
    }
    if (inited && d->cpu.close)
        d->cpu.close(priv);
    free(priv);
    return err;
}

/* The GPU layout of a picture in device memory (uploaded here if fill()
 * left it on the host). */
static int gpu_picture(Pic *pc, int w, int h, QmGpuPicture *gp)
{
    const bool dev = pc->gpu.flags & QM_PICTURE_DEVICE;
    if (!dev && !pc->dbuf) {
        if (cudaMalloc((void **)&pc->dbuf, pc->gsize) != cudaSuccess) {
            pc->dbuf = NULL;
            return QM_EDEVICE;
        }
        if (cudaMemcpy(pc->dbuf, pc->gbuf, pc->gsize, cudaMemcpyHostToDevice) != cudaSuccess)
            return QM_EDEVICE;
    }
    memset(gp, 0, sizeof(*gp));
    for (int p = 0; p < qm_n_planes(pc->gpu.chroma); p++) {
        const uint8_t *hp = (const uint8_t *)pc->gpu.data[p];
        int pw, ph;
        qm_plane_size(w, h, pc->gpu.chroma, p, &pw, &ph);
        gp->p[p].data = dev ? (const void *)hp : (const void *)(pc->dbuf + (hp - pc->gbuf));
        gp->p[p].stride = pc->gpu.stride[p];
        gp->p[p].w = pw;
        gp->p[p].h = ph;
        gp->p[p].step = pc->gpu.step[p] ? pc->gpu.step[p] : 1;
    }
    gp->bpc = pc->gpu.bpc;
    gp->shift = pc->gpu.shift;
    return 0;
}

static int direct_cuda(const QmMetricDesc *d, const QmMetricConfig *cfg, Pic *ref,
                       Pic *dis, int n, unsigned nf, double *out, uint8_t *set)
{
    cudaStream_t st;
    if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess)
        return QM_EDEVICE;
    void *priv = calloc(1, d->cuda->priv_size ? d->cuda->priv_size : 1);
    int err = priv ? d->cuda->init(priv, cfg, (unsigned)n, (QmStream)st) : QM_ENOMEM;
    const bool inited = !err;
    QmGpuFrame f[4];
    for (int i = 0; i < n && i < 4 && !err; i++) {
        memset(&f[i], 0, sizeof(f[i]));
        f[i].index = (uint64_t)i;
        err = gpu_picture(&ref[i], cfg->w, cfg->h, &f[i].ref);
        if (!err)
            err = gpu_picture(&dis[i], cfg->w, cfg->h, &f[i].dist);
    }
    /* a pageable cudaMemcpy may return before its DMA is done, and st does
     * not wait for the legacy stream */
    if (!err && cudaDeviceSynchronize() != cudaSuccess)
        err = QM_EDEVICE;
    for (int i = 0; i < n && !err; i++)
        err = d->cuda->submit(priv, &f[i], (unsigned)i, (QmStream)st);
    if (cudaStreamSynchronize(st) != cudaSuccess && !err)
        err = QM_EDEVICE;
    for (int i = 0; i < n && !err; i++) {
        QmRows rows = frame_rows(out, set, i, nf);
        err = d->cuda->collect(priv, (unsigned)i, &rows);
    }
    /* A metric without history again, each frame in another slot (the
     * frames in reverse): a slot's second frame must give what that frame
     * gave in its own slot, bit for bit.  Twins that capture a slot's work
     * once (a CUDA graph) and replay it are checked here. */
    if (!err && n > 1 && !(d->flags & QM_METRIC_SEQUENTIAL)) {
        double *again = calloc((size_t)n * nf, sizeof(*again));
        uint8_t *aset = calloc((size_t)n * nf, 1);
        if (!again || !aset)
            err = QM_ENOMEM;
        for (int i = 0; i < n && !err; i++)
            err = d->cuda->submit(priv, &f[n - 1 - i], (unsigned)i, (QmStream)st);
        if (cudaStreamSynchronize(st) != cudaSuccess && !err)
            err = QM_EDEVICE;
        for (int i = 0; i < n && !err; i++) {
            QmRows rows = frame_rows(again, aset, n - 1 - i, nf);
            err = d->cuda->collect(priv, (unsigned)i, &rows);
        }
        for (size_t k = 0; !err && k < (size_t)n * nf; k++)
            if (aset[k] != set[k] || (set[k] && memcmp(&again[k], &out[k], sizeof(double)))) {
                fprintf(stderr, "%s: frame %zu, feature %zu: %.17g in a reused slot, "
                        "%.17g before\n", d->name, k / nf, k % nf, again[k], out[k]);
                err = QM_EDEVICE;
            }
        free(again);
        free(aset);
    }
    if (inited && d->cuda->close)
        d->cuda->close(priv);
    free(priv);
    cudaStreamDestroy(st);
    return err;
}

/* Values an option is tried at (besides its default, left out): both
 * extremes; every value in between for a small integral range (e.g. a mode
 * selector), else the midpoint (a non-integral value where the range
 * allows, e.g. an enhancement gain limit of 50.5).  Returns the count. */
static int option_values(const QmOptionDesc *od, double *v)
{
    double c[8];
    int nc = 0, n = 0;
    c[nc++] = od->min;
    c[nc++] = od->max;
    if (!(od->flags & QM_OPT_BOOL)) {
        const bool integral = od->min == floor(od->min) && od->max == floor(od->max);
        if (integral && od->max - od->min <= 5)
            for (double x = od->min + 1; x < od->max; x++)
                c[nc++] = x;
        else
            c[nc++] = 0.5 * (od->min + od->max);
    }
    for (int i = 0; i < nc; i++) {
        bool dup = c[i] == od->def;
        for (int j = 0; j < n && !dup; j++)
            dup = v[j] == c[i];
        if (!dup)
            v[n++] = c[i];
    }
    return n;
}

/* What an option vector runs on: sizes, layouts (indices into layouts[];
 * none: every layout) and patterns of the distorted pictures. */
typedef struct OptionPlan {
    const int (*sizes)[2];
    size_t n_sizes;
    const int *layouts;
    size_t n_layouts;
    const int *pats;
    size_t n_pats;
} OptionPlan;

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* QM_TEST_CONTENT_SMALL, and each option alone: small sizes (33x33: the
 * smallest adm) */
static int osizes[][2] = { { 16, 16 }, { 33, 33 }, { 35, 19 }, { 64, 48 }, { 577, 323 } };
static const int opats[] = { PAT_RANDOM, PAT_GAIN, PAT_SAME };
static const OptionPlan plan_small = { osizes, N_OF(osizes), NULL, 0, opats, N_OF(opats) };

/* QM_TEST_CONTENT_BANDED (CAMBI): banded and blocky content up to 1080p,
 * where its largest window (63) and cambi_high_res_speedup=1080 act */
static int osizes_large[][2] = { { 577, 323 }, { 1920, 1080 } };
static const int olayouts_large[] = { 0, 2, 5, 6 };  /* 420-8, p010, 444-12/16 */
static const int opats_large[] = { PAT_BANDS, PAT_BLOCKS, PAT_RANDOM };
static const OptionPlan plan_large = { osizes_large, N_OF(osizes_large), olayouts_large,
                                       N_OF(olayouts_large), opats_large, N_OF(opats_large) };

/* QM_TEST_CONTENT_NATURAL (SpEED): 577x323 (4:2:0: 6 blocks; 2 at
 * speed_prescale 0.6) and 1080p (72 blocks, 4:2:0), where the rescalers and
 * the 16x decimation have room; realistic (noisy) and identical
 * distortions too */
static int osizes_speed[][2] = { { 577, 323 }, { 1920, 1080 } };
static const int olayouts_speed[] = { 0, 1, 2, 4, 5, 6 };  /* all but 10-bit padded, 400 */
static const int opats_speed[] = { PAT_RANDOM, PAT_NOISY, PAT_SAME };
static const OptionPlan plan_speed = { osizes_speed, N_OF(osizes_speed), olayouts_speed,
                                       N_OF(olayouts_speed), opats_speed, N_OF(opats_speed) };

/* XPSNR's listed values: 577x323 (weights smoothed) and pictures above
 * 2048x1152, where its filters take 2x2 groups: 2050x1152 (a last block
 * column too narrow for the spatial term) and 3840x2160 */
static int osizes_uhd[][2] = { { 577, 323 }, { 2050, 1152 }, { 3840, 2160 } };
static const int olayouts_uhd[] = { 0, 2, 5, 6 };  /* 420-8, p010, 444-12/16 */
static const int opats_uhd[] = { PAT_RANDOM, PAT_NOISY, PAT_SAME };
static const OptionPlan plan_uhd = { osizes_uhd, N_OF(osizes_uhd), olayouts_uhd,
                                     N_OF(olayouts_uhd), opats_uhd, N_OF(opats_uhd) };

/* --small: 300x220 wherever 577x323 is tried */
static void small_sizes(void)
{
    int (*const lists[])[2] = { sizes, osizes, osizes_large, osizes_speed, osizes_uhd };
    const size_t lens[] = { N_OF(sizes), N_OF(osizes), N_OF(osizes_large),
                            N_OF(osizes_speed), N_OF(osizes_uhd) };
    for (size_t l = 0; l < N_OF(lists); l++)
        for (size_t i = 0; i < lens[l]; i++)
            if (lists[l][i][0] == 577 && lists[l][i][1] == 323) {
                lists[l][i][0] = 300;
                lists[l][i][1] = 220;
            }
}

/* The plan of a metric's option sets (QmMetricDesc.option_sets_content). */
static const OptionPlan *content_plan(QmTestContent c)
{
    switch (c) {
    case QM_TEST_CONTENT_BANDED:
        return &plan_large;
    case QM_TEST_CONTENT_NATURAL:
        return &plan_speed;
    case QM_TEST_CONTENT_UHD:
        return &plan_uhd;
    default:
        return &plan_small;
    }
}

/* One option vector through both backends' descriptors on the plan's
 * sizes, layouts and patterns.  A vector both refuse with the same error
 * (e.g. a viewing distance the reference cannot compute) is counted
 * apart. */
static int check_option_vector(const QmMetricDesc *d, int m, uint64_t seed, const QmOptValues *ov,
                               const char *label, unsigned salt, const OptionPlan *plan,
                               double *worst, int *checks, int *refused)
{
    unsigned nf = 0;
    while (d->features[nf])
        nf++;
    int fails = 0;
    /* --quick: the metric's own small sizes instead of the plan's */
    const int *lay = quick ? quick_layouts : plan->layouts;
    const size_t nl = quick ? N_OF(quick_layouts) : lay ? plan->n_layouts : N_OF(layouts);
    const int (*sz)[2] = quick ? (const int (*)[2])quick_sizes : plan->sizes;
    const size_t ns = quick ? n_quick_sizes : plan->n_sizes;
    /* a temporal metric compares frame i with frame i - 1 or i - 2 (the
     * five-frame window of motion): 4 frames, as many as direct_cuda() takes */
    const int n = d->flags & QM_METRIC_SEQUENTIAL ? 4 : 2;
    for (size_t lj = 0; lj < nl; lj++) {
        const size_t li = lay ? (size_t)lay[lj] : lj;
        const Layout *l = &layouts[li];
        if (l->chroma == QM_CHROMA_400 && !(d->flags & QM_METRIC_LUMA_ONLY))
            continue;
        for (size_t si = 0; si < ns; si++) {
            const int w = sz[si][0], h = sz[si][1];
            if (size_skipped(d, w, h))
                continue;
            for (size_t pi = 0; pi < plan->n_pats; pi++) {
                const int pat = plan->pats[pi];
                rng_state = seed ^ ((uint64_t)(m + 1) << 40) ^ ((uint64_t)li << 32) ^
                            ((uint64_t)si << 16) ^ ((uint64_t)salt << 8) ^
                            (uint64_t)pat ^ 0x51ED27FF2B7C1A93ULL;
                Pic ref[4], dis[4];
                for (int i = 0; i < n; i++) {
                    fill(&ref[i], l, w, h, PAT_RANDOM, NULL);
                    fill(&dis[i], l, w, h, pat, &ref[i]);
                }
                const QmMetricConfig cfg = { w, h, l->bpc, l->chroma, ov };
                double a[4 * QM_MAX_FEATURES], b[4 * QM_MAX_FEATURES];
                uint8_t sa[4 * QM_MAX_FEATURES] = { 0 }, sb[4 * QM_MAX_FEATURES] = { 0 };
                int ea = direct_cpu(d, &cfg, ref, dis, n, nf, a, sa);
                int eb = direct_cuda(d, &cfg, ref, dis, n, nf, b, sb);
                int bad = 0;
                if (ea && ea == eb) {
                    (*refused)++;
                } else {
                    (*checks)++;
                    if (ea || eb) {
                        printf("  %s: cpu %s, cuda %s\n", d->name, qm_strerror(ea),
                               qm_strerror(eb));
                        bad = 1;
                    }
                }
                if (!bad && !ea)
                    bad = compare_frames(d, n, nf, a, sa, b, sb, worst);
                for (int i = 0; i < n; i++) {
                    pic_free(&ref[i]);
                    pic_free(&dis[i]);
                }
                if (bad) {
                    fails++;
                    printf("FAIL %s %s %s %dx%d %s (seed %" PRIu64 ")\n", d->name, label,
                           l->name, w, h, pat_name[pat], seed);
                }
            }
        }
    }
    return fails;
}

/* An option set ("name=value,...", QmOptionSet.options) over the values in
 * *o, as the engine reads a features text (qm_option_parse()).  Returns 0,
 * or nonzero with the problem in err. */
static int parse_option_set(const QmMetricDesc *d, const char *options, QmOptValues *o,
                            char *err, size_t errlen)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", options);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            snprintf(err, errlen, "'%s' is not name=value", tok);
            return 1;
        }
        *eq = 0;
        if (qm_option_parse(d, tok, eq + 1, o, err, errlen))
            return 1;
    }
    return 0;
}

/* Each option at each value of option_values(), the others at their
 * defaults, then the descriptor's option sets (QM_OPTSET_DIRECT).  Of metrics with
 * post()/flush() (host code both backends share) only what compute() and
 * the twin's collect() write is compared here; check_engine_options() runs
 * the rest. */
static int check_options(const QmMetricDesc *d, int m, uint64_t seed, double *worst,
                         int *checks, int *refused)
{
    int fails = 0;
    if (!d->options || !d->options[0].name)
        return 0;
    QmOptValues def;
    memset(&def, 0, sizeof(def));
    for (int j = 0; d->options[j].name; j++)
        def.v[j] = d->options[j].def;
    for (int oi = 0; d->options[oi].name; oi++) {
        const QmOptionDesc *od = &d->options[oi];
        double vals[16];
        const int nv = option_values(od, vals);
        for (int vi = 0; vi < nv; vi++) {
            QmOptValues ov = def;
            ov.v[oi] = vals[vi];
            char label[96];
            snprintf(label, sizeof(label), "%s=%g", od->name, vals[vi]);
            fails += check_option_vector(d, m, seed, &ov, label, (unsigned)(oi * 16 + vi),
                                         &plan_small, worst, checks, refused);
        }
    }
    for (size_t ci = 0; d->option_sets && d->option_sets[ci].options; ci++) {
        const QmOptionSet *set = &d->option_sets[ci];
        if (!(set->flags & QM_OPTSET_DIRECT))
            continue;
        QmOptValues ov = def;
        char err[600];
        if (parse_option_set(d, set->options, &ov, err, sizeof(err))) {
            printf("FAIL %s: option set \"%s\": %s\n", d->name, set->options, err);
            (*checks)++;
            fails++;
            continue;
        }
        fails += check_option_vector(d, m, seed, &ov, set->options, (unsigned)(200 + ci),
                                     content_plan(d->option_sets_content), worst, checks,
                                     refused);
    }
    return fails;
}

/* Whether an engine on the CUDA backend runs every instance on the device
 * (else the C code would be compared with itself); true where it does not
 * open (the runs report that). */
static bool on_device(const char *metric, const char *features, const Layout *l, int w,
                      int h)
{
    QmEngine *e;
    char *msg = NULL;
    if (open_engine(&e, metric, features, l, w, h, QM_BACKEND_CUDA, &msg)) {
        free(msg);
        return true;
    }
    const bool dev = !qm_engine_reads_host(e);
    qm_engine_close(&e);
    return dev;
}

/* One features text through the engine on both backends: reference
 * sequences of ref_pattern() (the frame-to-frame worst cases), MAX_FRAMES
 * frames (every GPU slot reused, the five-frame window's history ring
 * around twice), small sizes, 8, 10 (device memory) and 16 bits. */
static int check_engine_vector(const QmMetricDesc *d, int m, uint64_t seed,
                               const char *features, unsigned salt, double *worst,
                               int *checks, int *refused)
{
    static const int pats[] = { PAT_RANDOM, PAT_ZERO, PAT_CHECKER, PAT_SAME };
    static const int elayouts[] = { 0, 2, 6 };
    const int (*sz)[2] = quick ? (const int (*)[2])quick_sizes : osizes;
    const size_t ns = quick ? n_quick_sizes : N_OF(osizes);
    int fails = 0;
    for (size_t lj = 0; lj < N_OF(elayouts); lj++) {
        const int li = elayouts[lj];
        const Layout *l = &layouts[li];
        for (size_t si = 0; si < ns; si++) {
            const int w = sz[si][0], h = sz[si][1], n = MAX_FRAMES;
            if (size_skipped(d, w, h))
                continue;
            if (!on_device(d->name, features, l, w, h)) {
                (*checks)++;
                fails++;
                printf("FAIL %s \"%s\" %s %dx%d: runs on the CPU with backend=cuda\n",
                       d->name, features, l->name, w, h);
                continue;
            }
            for (size_t pi = 0; pi < N_OF(pats); pi++) {
                const int pat = pats[pi];
                rng_state = seed ^ ((uint64_t)(m + 1) << 40) ^ ((uint64_t)li << 32) ^
                            ((uint64_t)si << 16) ^ ((uint64_t)salt << 8) ^ (uint64_t)pat ^
                            0x2545F4914F6CDD1DULL;
                Pic ref[MAX_FRAMES], dis[MAX_FRAMES];
                for (int i = 0; i < n; i++) {
                    const int rp = ref_pattern(pat, i);
                    fill(&ref[i], l, w, h, rp, rp == PAT_SAME ? &ref[0] : NULL);
                    fill(&dis[i], l, w, h, PAT_RANDOM, NULL);
                }
                double a[MAX_ROWS], b[MAX_ROWS];
                uint8_t sa[MAX_ROWS], sb[MAX_ROWS];
                unsigned nfa = 0, nfb = 0;
                const int ea = run(d->name, features, l, w, h, ref, dis, n, QM_BACKEND_CPU, a,
                                   sa, &nfa, NULL);
                const int eb = run(d->name, features, l, w, h, ref, dis, n, QM_BACKEND_CUDA, b,
                                   sb, &nfb, NULL);
                int bad = 0;
                if (ea == QM_ENOTSUP && eb == QM_ENOTSUP) {
                    (*refused)++;
                } else {
                    (*checks)++;
                    bad = ea || eb || nfa != nfb;
                    if (!bad)
                        bad = compare_frames(d, n * engine_reps(w, h), nfa, a, sa, b, sb, worst);
                }
                for (int i = 0; i < n; i++) {
                    pic_free(&ref[i]);
                    pic_free(&dis[i]);
                }
                if (bad) {
                    fails++;
                    printf("FAIL %s engine \"%s\" %s %dx%d %s (seed %" PRIu64 ")\n", d->name,
                           features, l->name, w, h, pat_name[pat], seed);
                }
            }
        }
    }
    return fails;
}

/* Through the engine: for metrics with post()/flush(), each option alone
 * at the values of option_values(); then the descriptor's option sets
 * marked QM_OPTSET_ENGINE, as the engine's features text
 * ("metric=name=value:name=value"). */
static int check_engine_options(const QmMetricDesc *d, int m, uint64_t seed, double *worst,
                                int *checks, int *refused)
{
    int fails = 0;
    const bool sweep = d->options && d->options[0].name && (d->cpu.post || d->cpu.flush);
    for (int oi = 0; sweep && d->options[oi].name; oi++) {
        const QmOptionDesc *od = &d->options[oi];
        double vals[16];
        const int nv = option_values(od, vals);
        for (int vi = 0; vi < nv; vi++) {
            char features[160];
            if (od->flags & QM_OPT_BOOL)
                snprintf(features, sizeof(features), "%s=%s=%s", d->name, od->name,
                         vals[vi] != 0 ? "true" : "false");
            else
                snprintf(features, sizeof(features), "%s=%s=%.17g", d->name, od->name,
                         vals[vi]);
            fails += check_engine_vector(d, m, seed, features, (unsigned)(oi * 16 + vi),
                                         worst, checks, refused);
        }
    }
    for (size_t ci = 0; d->option_sets && d->option_sets[ci].options; ci++) {
        const QmOptionSet *set = &d->option_sets[ci];
        if (!(set->flags & QM_OPTSET_ENGINE))
            continue;
        char features[600];
        snprintf(features, sizeof(features), "%s=%s", d->name, set->options);
        for (char *c = features; *c; c++)
            if (*c == ',')
                *c = ':';
        fails += check_engine_vector(d, m, seed, features, (unsigned)(200 + ci), worst,
                                     checks, refused);
    }
    return fails;
}

/* --quick: the metric's sizes, from sizes[]: the smallest one the C
 * reference takes (8-bit 4:2:0), then 35x19 (odd) and 64x48 where taken;
 * a metric with a larger minimum that takes neither (CAMBI: 216x1) gets
 * the odd 233x41 instead, where taken. */
static void pick_quick_sizes(const QmMetricDesc *d)
{
    static const int extra[][2] = { { 35, 19 }, { 64, 48 }, { 233, 41 } };
    n_quick_sizes = 0;
    quick_first = N_OF(sizes);
    for (size_t si = 0; si < N_OF(sizes); si++) {
        const int w = sizes[si][0], h = sizes[si][1];
        if (!size_skipped(d, w, h) && !open_error(d->name, &layouts[0], w, h, QM_BACKEND_CPU)) {
            quick_sizes[n_quick_sizes][0] = w;
            quick_sizes[n_quick_sizes][1] = h;
            n_quick_sizes++;
            quick_first = si;
            break;
        }
    }
    for (size_t k = 0; k < N_OF(extra); k++) {
        const int w = extra[k][0], h = extra[k][1];
        if (is_quick_size(w, h) || size_skipped(d, w, h) || (k == 2 && n_quick_sizes > 1) ||
            open_error(d->name, &layouts[0], w, h, QM_BACKEND_CPU))
            continue;
        quick_sizes[n_quick_sizes][0] = w;
        quick_sizes[n_quick_sizes][1] = h;
        n_quick_sizes++;
    }
}

int main(int argc, char **argv)
{
    uint64_t seed = (uint64_t)time(NULL);
    const char *only = NULL;
    /* a log file shows each line as it comes (slow runs: tests/cuda-emu) */
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--metric") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--max-pixels") && i + 1 < argc)
            max_pixels = strtol(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--quick"))
            quick = true;
        else if (!strcmp(argv[i], "--small"))
            small_sizes();
    }
    if (only) {
        const QmMetricDesc *d = qm_metric_find(only);
        if (!d) {
            printf("FAIL: unknown metric '%s'\n", only);
            return 1;
        }
        if (!d->cuda) {
            /* e.g. a metric listed for the CI run before its twin exists */
            printf("SKIP: %s has no CUDA twin (its descriptor's .cuda is NULL): nothing "
                   "to compare\n", only);
            return 77;
        }
    }
    if (!qm_have_cuda()) {
        printf("SKIP: this build has no CUDA backend\n");
        return 77;
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    printf("parity: seed %" PRIu64 " (rerun with --seed %" PRIu64 ")\n", seed, seed);
    int fails = 0, checks = 0, unsupported = 0;
    for (int m = 0; qm_metrics[m]; m++) {
        const QmMetricDesc *d = qm_metrics[m];
        if (!d->cuda || (only && strcmp(only, d->name)))
            continue;
        double worst = 0;
        if (quick) {
            pick_quick_sizes(d);
            printf("%s: --quick sizes", d->name);
            for (size_t k = 0; k < n_quick_sizes; k++)
                printf(" %dx%d", quick_sizes[k][0], quick_sizes[k][1]);
            printf("\n");
        }
        for (size_t li = 0; li < sizeof(layouts) / sizeof(layouts[0]); li++) {
            const Layout *l = &layouts[li];
            if (l->chroma == QM_CHROMA_400 && !(d->flags & QM_METRIC_LUMA_ONLY))
                continue;
            for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
                const int w = sizes[si][0], h = sizes[si][1];
                if (size_skipped(d, w, h) || (quick && si > quick_first && !is_quick_size(w, h)))
                    continue;
                /* a geometry the C reference refuses at init() (e.g. CAMBI
                 * below 216 on both sides): the twin must refuse it with
                 * the same error */
                const int cpu_err = open_error(d->name, l, w, h, QM_BACKEND_CPU);
                if (cpu_err) {
                    const int gerr = open_error(d->name, l, w, h, QM_BACKEND_CUDA);
                    if (gerr == cpu_err) {
                        unsupported++;
                    } else {
                        checks++;
                        fails++;
                        printf("FAIL %s %s %dx%d: the C code refuses (%s), the "
                               "twin %s\n", d->name, l->name, w, h,
                               qm_strerror(cpu_err), gerr ? qm_strerror(gerr) : "accepts");
                    }
                    continue;
                }
                /* temporal metrics: enough frames to reuse every GPU slot
                 * (the engine has 4) and come back to each history buffer */
                const bool temporal = (d->flags & QM_METRIC_SEQUENTIAL) != 0;
                const int n = temporal ? (w * h > 100000 ? 3 : MAX_FRAMES)
                                       : (w * h > 100000 ? 2 : 3);
                for (int pat = 0; pat < PAT_N; pat++) {
                    rng_state = seed ^ ((uint64_t)(m + 1) << 40) ^ ((uint64_t)li << 32) ^
                                ((uint64_t)si << 16) ^ (uint64_t)pat ^ 0x9E3779B97F4A7C15ULL;
                    Pic ref[MAX_FRAMES], dis[MAX_FRAMES];
                    for (int i = 0; i < n; i++) {
                        const int rp = temporal ? ref_pattern(pat, i) : PAT_RANDOM;
                        fill(&ref[i], l, w, h, rp, rp == PAT_SAME ? &ref[0] : NULL);
                        fill(&dis[i], l, w, h, pat, &ref[i]);
                    }
                    double a[MAX_ROWS], b[MAX_ROWS];
                    uint8_t sa[MAX_ROWS], sb[MAX_ROWS];
                    unsigned nfa = 0, nfb = 0;
                    int ea = run(d->name, NULL, l, w, h, ref, dis, n, QM_BACKEND_CPU, a, sa, &nfa, NULL);
                    int eb = run(d->name, NULL, l, w, h, ref, dis, n, QM_BACKEND_CUDA, b, sb, &nfb, NULL);
                    /* refused by both backends alike (e.g. psnr_hvs above 12
                     * bits, ciede without a chroma sample): nothing to compare */
                    const int refused = ea == QM_ENOTSUP && eb == QM_ENOTSUP;
                    if (refused)
                        unsupported++;
                    else
                        checks++;
                    int bad = !refused && (ea || eb || nfa != nfb);
                    if (!refused && (ea == QM_ENOTSUP || eb == QM_ENOTSUP))
                        printf("  %s refused by the %s backend only\n", d->name,
                               ea == QM_ENOTSUP ? "cpu" : "cuda");
                    if (!bad && !refused)
                        bad = compare_frames(d, n * engine_reps(w, h), nfa, a, sa, b, sb, &worst);
                    for (int i = 0; i < n; i++) {
                        if (!guards_intact(&ref[i], l) || !guards_intact(&dis[i], l)) {
                            printf("  guard bytes overwritten\n");
                            bad = 1;
                        }
                        pic_free(&ref[i]);
                        pic_free(&dis[i]);
                    }
                    if (bad) {
                        fails++;
                        printf("FAIL %s %s %dx%d %s (seed %" PRIu64 ")\n", d->name,
                               l->name, w, h, pat_name[pat], seed);
                    }
                }
            }
        }
        fails += check_options(d, m, seed, &worst, &checks, &unsupported);
        fails += check_engine_options(d, m, seed, &worst, &checks, &unsupported);
        printf("%-16s worst |cpu - cuda| %.3g (tolerance %.3g)\n", d->name, worst,
               d->cuda_tol);
    }
    printf("parity: %d passed, %d failed (%d combinations refused by both backends)\n",
           checks - fails, fails, unsupported);
    return fails ? 1 : 0;
}
