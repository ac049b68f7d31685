/* qmetric-yuv: run the metric engine on two raw YUV files (no GStreamer),
 * with libvmaf-like options, and write a libvmaf-layout log.  Used by the
 * engine-level golden tests and for debugging a metric in isolation.
 *
 *   qmetric-yuv -r REF.yuv -d DIS.yuv --width W --height H \
 *       [--pixel_format 420|422|444|400] [--bitdepth 8] [--metrics LIST] \
 *       [--model NAME|PATH[,..]] [--threads N] [--subsample N] \
 *       [--frames N] [--backend cpu|cuda|auto] [-o OUT] [--format json|csv|xml]
 *       [--start N] [--partial FILE] [--count-frames] [--allow-cut-tail]
 *
 * Chunked scoring: --start N --frames M scores frames N .. N+M-1 of a
 * longer title exactly as a whole run scores them (the engine also sees up
 * to QM_CHUNK_CONTEXT frames before and its look-ahead after, unreported),
 * and --partial writes them at full precision for qmetric-merge, which
 * joins the chunks into the log a whole run writes.
 *
 * Files hold frames back to back in the standard planar layout: chroma
 * planes ceil(w/2) wide (4:2:0 and 4:2:2) and ceil(h/2) high (4:2:0), rows
 * tightly packed; the engine reads the floor-sized part, as libvmaf does.
 * What is not such a file is refused before anything runs: a size that is
 * not a whole number of frames (wrong --width/--height/--pixel_format/
 * --bitdepth; --allow-cut-tail accepts a last frame cut short), the
 * signature of a container or elementary stream (tools/sniff.c), an empty
 * file.  No output may be one of the inputs (tools/samefile.c).
 */
#include <errno.h>
#include <getopt.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qm.h"
#include "framehash.h"
#include "partial.h"
#include "qmlog.h"
#include "pagedrop.h"
#include "samefile.h"
#include "sniff.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: qmetric-yuv -r REF.yuv -d DIS.yuv --width W --height H [options]\n"
        "  --pixel_format 420|422|444|400   (default 420)\n"
        "  --bitdepth 8..16                 (default 8)\n"
        "  --metrics LIST                   comma-separated, or all (default " QM_DEFAULT_METRICS ":\n"
        "                                   docs/metrics.md, \"Default metrics\")\n"
        "  --model NAME|PATH[,...]          VMAF model(s) (default vmaf_v0.6.1)\n"
        "  --threads N                      (default 1; with --backend cuda, one per\n"
        "                                   core: up to 8 of them copy frames to the GPU)\n"
        "  --subsample N  --frames N\n"
        "  --backend cpu|cuda|auto          (default cpu)\n"
        "  -o FILE  --format json|csv|xml   (default: JSON on stdout)\n"
        "  --start N                        first frame to score (with --frames: a chunk)\n"
        "  --partial FILE                   also write the chunk at full precision\n"
        "                                   for qmetric-merge\n"
        "  --count-frames                   print the number of whole frame pairs and exit\n"
        "  --allow-cut-tail                 score the whole frames of a file whose last\n"
        "                                   frame is cut short (else an error)\n"
        "  --list                           list the metrics and exit\n");
}

typedef struct Layout {
    size_t off[3];
    size_t stride[3];
    int rows[3];
    size_t frame;
} Layout;

static void layout(int w, int h, int bpc, QmChroma c, Layout *l)
{
    const size_t bps = bpc > 8 ? 2 : 1;
    size_t off = 0;
    for (int p = 0; p < 3; p++) {
        int pw = w, ph = h;
        if (p && (c == QM_CHROMA_420 || c == QM_CHROMA_422))
            pw = (w + 1) / 2;
        if (p && c == QM_CHROMA_420)
            ph = (h + 1) / 2;
        if (p && c == QM_CHROMA_400)
            pw = ph = 0;
        l->off[p] = off;
        l->stride[p] = (size_t)pw * bps;
        l->rows[p] = ph;
        off += l->stride[p] * (size_t)ph;
    }
    l->frame = off;
}

static void make_pic(QmPicture *pic, const uint8_t *buf, int w, int h, int bpc,
                     QmChroma c, const Layout *l)
{
    memset(pic, 0, sizeof(*pic));  /* flags, shift, steps: plain host planes */
    pic->w = w;
    pic->h = h;
    pic->bpc = bpc;
    pic->chroma = c;
    for (int p = 0; p < 3; p++) {
        pic->data[p] = buf + l->off[p];
        pic->stride[p] = (ptrdiff_t)(l->stride[p] ? l->stride[p] : 1);
    }
}

/* Every sample of the frame as stored (chroma ceil-sized): the hash a
 * chunk records of the frames at its ends (core/framehash.h). */
static uint64_t hash_frame(const uint8_t *buf, const Layout *l)
{
    const void *data[3];
    ptrdiff_t stride[3];
    for (int p = 0; p < 3; p++) {
        data[p] = buf + l->off[p];
        stride[p] = (ptrdiff_t)l->stride[p];
    }
    return qm_frame_hash(3, data, stride, l->stride, l->rows);
}

/* Frames in flight need their buffers until released: a read source keeps
 * a ring, no larger than the frames in flight need (every fresh buffer
 * costs page faults: at 1080p a ring of 256 took more system time than ADM
 * took user time). */
#define RING 32

/* One input file.  A regular file is mapped: its frames go to the engine
 * in place, without a read into a buffer (that single-threaded copy set the
 * pace with the CUDA backend; the engine's staging copy runs on several
 * threads).  Anything else (a pipe) is read into a ring of buffers; its
 * first frame is read at open, so that what it holds is checked before
 * anything runs. */
typedef struct Source {
    FILE *f;
    const char *path;
    size_t frame;
    const uint8_t *map;
    size_t size;
    bool regular;
    QmPageDrop *drop;  /* a mapping's pages of frames done with */
    uint64_t first;    /* the first frame given to the engine */
    uint8_t *ring[RING];
    size_t head;       /* a pipe: bytes of frame 0 read at open */
    uint64_t bytes;    /* a pipe: bytes read so far */
    size_t cut;        /* bytes of a last frame cut short (0: none) */
} Source;

/* What is wrong with the input's first bytes, or NULL. */
static const char *check_head(Source *src)
{
    if (src->regular)
        return qm_sniff_fd(fileno(src->f));
    return src->head ? qm_sniff_container(src->ring[0], src->head) : NULL;
}

/* 0, or -1 when out of memory. */
static int source_open(Source *src, FILE *f, const char *path, size_t frame)
{
    struct stat st;
    memset(src, 0, sizeof(*src));
    src->f = f;
    src->path = path;
    src->frame = frame;
    if (!fstat(fileno(f), &st) && S_ISREG(st.st_mode)) {
        src->regular = true;
        src->size = (size_t)st.st_size;
        src->cut = src->size % frame;
        if (!st.st_size)
            return 0;
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fileno(f), 0);
        if (m != MAP_FAILED) {
            madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
            src->map = m;
            return 0;
        }
        /* not mappable: read like a pipe */
        src->regular = false;
        src->cut = 0;
    }
    for (unsigned i = 0; i < RING; i++)
        if (!(src->ring[i] = malloc(frame)))
            return -1;
    src->head = fread(src->ring[0], 1, frame, f);
    src->bytes = src->head;
    src->cut = src->head % frame;
    return 0;
}

/* The engine reads frames from `first` on, and releases them in order:
 * the pages of a released frame leave the page tables as the run goes
 * (pagedrop.h). */
static void source_start(Source *src, uint64_t first)
{
    src->first = first;
    if (src->map)
        src->drop = qm_pagedrop_new(src->map, src->size);
}

static void source_done(Source *src, uint64_t n)
{
    qm_pagedrop_done(src->drop, n - src->first, (n + 1) * src->frame);
}

static void source_close(Source *src)
{
    qm_pagedrop_free(src->drop);
    if (src->map)
        munmap((void *)src->map, src->size);
    for (unsigned i = 0; i < RING; i++)
        free(src->ring[i]);
}

/* Frame n of the source (frames are asked for in order): in place, or
 * read into the ring.  NULL at the end. */
static const uint8_t *source_frame(Source *src, uint64_t n)
{
    const size_t frame = src->frame;
    if (src->regular)
        return n < src->size / frame ? src->map + n * frame : NULL;
    if (n == 0)
        return src->head == frame ? src->ring[0] : NULL;
    if (src->cut || src->bytes < n * frame)
        return NULL;  /* ended before */
    uint8_t *buf = src->ring[n % RING];
    const size_t got = fread(buf, 1, frame, src->f);
    src->bytes += got;
    if (got && got != frame)
        src->cut = got;
    return got == frame ? buf : NULL;
}

/* A whole number of frames, or a message (exit status 2 unless the cut
 * tail is accepted). */
static bool report_cut(const Source *src, const Layout *l, int w, int h, int bpc,
                       QmChroma c, bool allowed)
{
    static const char *const pf[] = { "400", "420", "422", "444" };
    const uint64_t bytes = src->regular ? src->size : src->bytes;
    if (!src->cut)
        return true;
    fprintf(stderr, "qmetric-yuv: %s%s: %llu bytes is not a whole number of frames of %zu "
            "bytes (%dx%d, pixel format %s, %d-bit): %zu bytes left over%s\n",
            allowed ? "warning: " : "", src->path, (unsigned long long)bytes, l->frame, w, h,
            pf[c], bpc, src->cut,
            allowed ? "; the last frame, cut short, is left out"
                    : "; check --width/--height/--pixel_format/--bitdepth "
                      "(--allow-cut-tail scores the whole frames)");
    return allowed;
}

/* An option's named values: the value of `name`, or -1 after a message. */
typedef struct NameValue {
    const char *name;
    int value;
} NameValue;

static int option_value(const NameValue *t, const char *option, const char *name)
{
    for (; t->name; t++)
        if (!strcmp(t->name, name))
            return t->value;
    fprintf(stderr, "qmetric-yuv: bad %s %s\n", option, name);
    return -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *ref_path = NULL, *dis_path = NULL, *out_path = NULL;
    const char *format = "json", *partial_path = NULL;
    uint64_t start = 0;
    bool count_only = false, allow_cut = false;
    bool threads_set = false;
    int w = 0, h = 0, bpc = 8;
    long max_frames = -1;
    QmSettings s;
    qm_settings_default(&s, 0, 0, 8, QM_CHROMA_420);
    s.chroma = QM_CHROMA_420;
    /* the element's and qmetric-compare's default: what cannot run on the
     * input is left out with a warning */
    s.metrics = QM_DEFAULT_METRICS;
    s.metrics_are_default = true;

    enum { O_W = 256, O_H, O_PF, O_BD, O_MET, O_MOD, O_THR, O_SUB, O_FR, O_BE,
           O_FMT, O_LIST, O_START, O_PARTIAL, O_COUNT, O_CUT };
    static const struct option opts[] = {
        { "reference", required_argument, 0, 'r' },
        { "distorted", required_argument, 0, 'd' },
        { "output", required_argument, 0, 'o' },
        { "width", required_argument, 0, O_W },
        { "height", required_argument, 0, O_H },
        { "pixel_format", required_argument, 0, O_PF },
        { "bitdepth", required_argument, 0, O_BD },
        { "metrics", required_argument, 0, O_MET },
        { "model", required_argument, 0, O_MOD },
        { "threads", required_argument, 0, O_THR },
        { "subsample", required_argument, 0, O_SUB },
        { "frames", required_argument, 0, O_FR },
        { "backend", required_argument, 0, O_BE },
        { "format", required_argument, 0, O_FMT },
        { "list", no_argument, 0, O_LIST },
        { "start", required_argument, 0, O_START },
        { "partial", required_argument, 0, O_PARTIAL },
        { "count-frames", no_argument, 0, O_COUNT },
        { "allow-cut-tail", no_argument, 0, O_CUT },
        { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    int c;
    while ((c = getopt_long(argc, argv, "r:d:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'r': ref_path = optarg; break;
        case 'd': dis_path = optarg; break;
        case 'o': out_path = optarg; break;
        case O_W: w = atoi(optarg); break;
        case O_H: h = atoi(optarg); break;
        case O_PF: {
            static const NameValue pf[] = { { "420", QM_CHROMA_420 }, { "422", QM_CHROMA_422 },
                                            { "444", QM_CHROMA_444 }, { "400", QM_CHROMA_400 },
                                            { NULL, 0 } };
            const int v = option_value(pf, "--pixel_format", optarg);
            if (v < 0)
                return 2;
            s.chroma = (QmChroma)v;
            break;
        }
        case O_BD: bpc = atoi(optarg); break;
        case O_MET: s.metrics = optarg; s.metrics_are_default = false; break;
        case O_MOD: s.models = optarg; break;
        case O_THR: s.n_threads = atoi(optarg); threads_set = true; break;
        case O_SUB: s.subsample = (unsigned)atoi(optarg); break;
        case O_FR: max_frames = atol(optarg); break;
        case O_BE: {
            static const NameValue be[] = { { "cpu", QM_BACKEND_CPU }, { "cuda", QM_BACKEND_CUDA },
                                            { "auto", QM_BACKEND_AUTO }, { NULL, 0 } };
            const int v = option_value(be, "--backend", optarg);
            if (v < 0)
                return 2;
            s.backend = (QmBackend)v;
            break;
        }
        case O_FMT: format = optarg; break;
        case O_START: {
            char *end;
            errno = 0;
            const unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || *end || !*optarg || optarg[0] == '-') {
                fprintf(stderr, "qmetric-yuv: bad --start %s\n", optarg);
                return 2;
            }
            start = v;
            break;
        }
        case O_PARTIAL: partial_path = optarg; break;
        case O_COUNT: count_only = true; break;
        case O_CUT: allow_cut = true; break;
        case O_LIST:
            for (const char *const *n = qm_metric_names(); *n; n++)
                printf("%-14s %s\n", *n, qm_metric_describe(*n));
            return 0;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!ref_path || !dis_path || w <= 0 || h <= 0) {
        usage(stderr);
        return 2;
    }
    /* libvmaf's CLI runs one thread unless told; on the GPU one thread
     * leaves the staging copy to a single core (VMAF v1 from raw 1080p:
     * 101 % CPU, 900 frames in 2.26 s on an H100 at fc1ab83), so a CUDA run
     * uses the cores unless told */
    if (!threads_set && s.backend == QM_BACKEND_CUDA)
        s.n_threads = 0;
    int fmt = qm_log_format_from_string(format);
    if (fmt < 0) {
        fprintf(stderr, "qmetric-yuv: bad --format %s\n", format);
        return 2;
    }
    s.w = w;
    s.h = h;
    s.bpc = bpc;

    /* nothing is opened for writing before this: an output that is one of
     * the inputs would be destroyed */
    const char *const inputs[] = { ref_path, dis_path };
    const char *const outputs[] = { out_path, partial_path };
    const char *const output_opt[] = { "-o", "--partial" };
    for (int i = 0; i < 2; i++) {
        const char *in = outputs[i] ? qm_output_is_input(outputs[i], inputs, 2) : NULL;
        if (in) {
            fprintf(stderr, "qmetric-yuv: %s %s is the input %s (the same file): it would "
                    "be overwritten\n", output_opt[i], outputs[i], in);
            return 2;
        }
    }
    if (out_path && partial_path && qm_same_file(out_path, partial_path)) {
        fprintf(stderr, "qmetric-yuv: -o %s and --partial %s are the same file\n",
                out_path, partial_path);
        return 2;
    }

    FILE *fr = fopen(ref_path, "rb"), *fd = fopen(dis_path, "rb");
    if (!fr || !fd) {
        fprintf(stderr, "qmetric-yuv: cannot open %s: %s\n",
                !fr ? ref_path : dis_path, strerror(errno));
        return 2;
    }
    Layout l;
    layout(w, h, bpc, s.chroma, &l);
    Source sr, sd;
    if (source_open(&sr, fr, ref_path, l.frame) || source_open(&sd, fd, dis_path, l.frame)) {
        fprintf(stderr, "qmetric-yuv: out of memory\n");
        return 2;
    }
    /* raw planar frames, or nothing: a container read as frames scores
     * garbage, a size that is not whole frames means wrong options */
    Source *const src[2] = { &sr, &sd };
    for (int i = 0; i < 2; i++) {
        const char *what = check_head(src[i]);
        if (what) {
            fprintf(stderr, "qmetric-yuv: %s is %s, not raw planar frames: decode it "
                    "with qmetric-compare, which reads containers and codecs\n",
                    src[i]->path, what);
            return 2;
        }
        if (src[i]->regular ? !src[i]->size : !src[i]->head) {
            fprintf(stderr, "qmetric-yuv: %s is empty: no frames to score\n", src[i]->path);
            return 2;
        }
        if (src[i]->regular && !report_cut(src[i], &l, w, h, bpc, s.chroma, allow_cut))
            return 2;
    }
    /* a chunk records its inputs; a pipe has no fingerprint (its end
     * cannot be read without reading all of it) */
    QmPartialInput pin[2];
    for (int i = 0; partial_path && i < 2; i++) {
        static const char *const pf[] = { "400", "420", "422", "444" };
        memset(&pin[i], 0, sizeof(pin[i]));
        pin[i].w = w;
        pin[i].h = h;
        snprintf(pin[i].format, sizeof(pin[i].format), "%s", pf[s.chroma]);
        pin[i].bitdepth = bpc;
        if (qm_partial_fingerprint_fd(fileno(src[i]->f), &pin[i].bytes, pin[i].fingerprint)) {
            fprintf(stderr, "qmetric-yuv: --partial: %s: %s (a chunk records each input's "
                    "fingerprint, which needs a regular file)\n", src[i]->path,
                    errno == ESPIPE ? "not a regular file" : strerror(errno));
            return 2;
        }
    }
    if (count_only) {
        uint64_t n = 0;
        while (source_frame(&sr, n) && source_frame(&sd, n))
            n++;
        for (int i = 0; i < 2; i++)
            if (!src[i]->regular && !report_cut(src[i], &l, w, h, bpc, s.chroma, allow_cut))
                return 2;
        printf("%llu\n", (unsigned long long)n);
        return 0;
    }

    QmEngine *e;
    char *msg = NULL;
    int err = qm_engine_open(&e, &s, &msg);
    if (err) {
        fprintf(stderr, "qmetric-yuv: %s\n", msg ? msg : qm_strerror(err));
        free(msg);
        return 2;
    }
    unsigned nf = qm_engine_n_features(e);
    const char **names = calloc(nf, sizeof(*names));
    for (unsigned i = 0; i < nf; i++)
        names[i] = qm_engine_feature_name(e, i);
    QmLog *log = NULL;
    if (out_path || !partial_path) {
        log = qm_log_open(out_path ? out_path : "/dev/stdout", fmt, nf, names, w, h, &msg);
        if (!log) {
            fprintf(stderr, "qmetric-yuv: %s\n", msg);
            return 2;
        }
    }
    QmPartialWriter *part = NULL;
    if (partial_path) {
        part = qm_partial_open(partial_path, "qmetric-yuv", nf, names, w, h, start, &msg);
        if (!part) {
            fprintf(stderr, "qmetric-yuv: %s\n", msg);
            return 2;
        }
        /* what makes two chunks parts of one comparison (core/partial.h);
         * raw files are compared as they are: no scaling */
        if (qm_partial_set_input(part, QM_PARTIAL_REFERENCE, &pin[0]) ||
            qm_partial_set_input(part, QM_PARTIAL_DISTORTED, &pin[1]) ||
            qm_partial_set_engine(part, e, &s) || qm_partial_set(part, "scale", "none")) {
            fprintf(stderr, "qmetric-yuv: out of memory\n");
            return 2;
        }
    }
    QmPool *pools = calloc(nf, sizeof(*pools));
    /* the pooled values some metrics provide themselves, over the same rows */
    QmAggregates *aggs = qm_aggregates_new(e);
    if (!pools || !aggs) {
        fprintf(stderr, "qmetric-yuv: out of memory\n");
        return 1;
    }

    /* A chunk: the engine starts QM_CHUNK_CONTEXT frames early (on a
     * multiple of the subsample step, so that the same frames are computed
     * as in a whole run) and runs its look-ahead past the end; only frames
     * start .. end - 1 are reported. */
    const unsigned sub = s.subsample > 1 ? s.subsample : 1;
    uint64_t first = start > QM_CHUNK_CONTEXT ? start - QM_CHUNK_CONTEXT : 0;
    first -= first % sub;
    const uint64_t end = max_frames < 0 ? UINT64_MAX : start + (uint64_t)max_frames;
    const uint64_t feed_end = end == UINT64_MAX ? UINT64_MAX : end + qm_engine_delay(e);
    /* a chunk hashes the frames near its ends (partial files are of
     * regular files: the number of frames is known) */
    const uint64_t avail = sr.size < sd.size ? sr.size / l.frame : sd.size / l.frame;
    const uint64_t hash_end = end < avail ? end : avail;
    bool ended = false;
    uint64_t n = 0;
    for (; n < first && !ended; n++)
        ended = !source_frame(&sr, n) || !source_frame(&sd, n);

    source_start(&sr, first);
    source_start(&sd, first);
    const bool times = getenv("QMETRIC_YUV_TIMES") != NULL;
    double t0 = now_s();
    uint64_t got = 0, reported = 0;
    int rc = 0, out_err = 0;
    for (;;) {
        bool more = !ended && n < feed_end;
        const uint8_t *rb = NULL, *db = NULL;
        if (more) {
            rb = source_frame(&sr, n);
            db = source_frame(&sd, n);
            if (!rb || !db) {
                more = false;
                ended = true;
            }
        }
        if (more && part && qm_partial_hash_wanted(n, start, hash_end) &&
            qm_partial_frame_hash(part, n, hash_frame(rb, &l), hash_frame(db, &l))) {
            fprintf(stderr, "qmetric-yuv: out of memory\n");
            rc = 2;
            break;
        }
        if (more) {
            QmPicture pr, pd;
            make_pic(&pr, rb, w, h, bpc, s.chroma, &l);
            make_pic(&pd, db, w, h, bpc, s.chroma, &l);
            err = qm_engine_submit(e, &pr, &pd, NULL);
            if (err) {
                fprintf(stderr, "qmetric-yuv: %s\n", qm_engine_error(e) ? qm_engine_error(e) : qm_strerror(err));
                rc = 1;
                break;
            }
            n++;
        } else {
            qm_engine_flush(e);
        }
        QmResult r;
        /* keep fewer than RING frames outstanding */
        while ((err = qm_engine_receive(e, &r, !more || (n - first) - got >= RING - 8)) == 0) {
            const uint64_t index = first + r.index;
            got++;
            /* a result comes once the engine is done with its pictures */
            source_done(&sr, index);
            source_done(&sd, index);
            if (index < start || index >= end)
                continue;
            reported++;
            if (log && qm_log_frame(log, index, r.value, r.present) && !out_err)
                out_err = errno ? errno : EIO;
            if (part && qm_partial_row(part, r.value, r.present) && !out_err)
                out_err = errno ? errno : EIO;
            for (unsigned i = 0; i < nf; i++)
                if (r.present[i])
                    qm_pool_add(&pools[i], r.value[i]);
            qm_aggregates_add(aggs, r.value, r.present);
        }
        if (err != QM_EAGAIN && err != QM_EOF) {
            fprintf(stderr, "qmetric-yuv: %s\n", qm_engine_error(e) ? qm_engine_error(e) : qm_strerror(err));
            rc = 1;
            break;
        }
        if (!more)
            break;
    }
    /* The input ends inside this chunk when frame `end` does not exist:
     * read as look-ahead, or (no look-ahead) asked for now. */
    bool end_of_input = ended && n <= end;
    if (!ended && n == end)
        end_of_input = !source_frame(&sr, n) || !source_frame(&sd, n);
    /* a pipe's size is known at its end only */
    for (int i = 0; i < 2; i++)
        if (!src[i]->regular && !report_cut(src[i], &l, w, h, bpc, s.chroma, allow_cut))
            rc = 2;
    if (!reported && !rc) {
        /* an empty result is not a score */
        fprintf(stderr, "qmetric-yuv: no frames scored: --start %llu is at or past the end "
                "of the input (%llu frames)\n", (unsigned long long)start,
                (unsigned long long)(ended ? n : avail));
        rc = 2;
    }
    const double secs = now_s() - t0;
    const double fps = reported / secs;
    double agg;
    for (unsigned i = 0; log && !out_err; i++) {
        const char *key = qm_aggregates_get(aggs, i, &agg);
        if (!key)
            break;
        if (qm_log_aggregate(log, key, agg))
            out_err = ENOMEM;
    }
    errno = 0;
    if (log && qm_log_close(log, pools, QM_POOL_LIBVMAF, fps) && !out_err)
        out_err = errno ? errno : EIO;
    errno = 0;
    if (part && qm_partial_close(part, end_of_input, secs) && !out_err)
        out_err = errno ? errno : EIO;
    if (out_err) {
        /* an output that is not complete is a failure, not a result */
        fprintf(stderr, "qmetric-yuv: %s: cannot be written: %s\n",
                out_path ? out_path : partial_path ? partial_path : "standard output",
                strerror(out_err));
        rc = 2;
    }
    fprintf(stderr, "qmetric-yuv: %llu frames, %.2f fps\n", (unsigned long long)reported, fps);
    for (unsigned i = 0; i < nf; i++)
        qm_pool_clear(&pools[i]);
    qm_engine_close(&e);
    const double t1 = now_s();
    source_close(&sr);
    source_close(&sd);
    /* where a run's time goes after its last frame (docs/development.md) */
    if (times)
        fprintf(stderr, "qmetric-yuv times: frames %.3f s, log and engine close %.3f s, "
                "files closed %.3f s\n", secs, t1 - t0 - secs, now_s() - t1);
    free(pools);
    qm_aggregates_free(aggs);
    free(names);
    fclose(fr);
    fclose(fd);
    return rc;
}
