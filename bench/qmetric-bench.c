/* qmetric-bench: throughput of the metric engine, per metric and backend.
 *
 *   qmetric-bench [--sizes 576x324,1920x1080,3840x2160] [--bits 8,10]
 *                 [--metrics SET,...] [--backends cpu,cuda] [--threads 1,N]
 *                 [--inputs host,device] [--seconds S] [--warmup N]
 *                 [--repeats N] [--distinct N] [--models LIST] [--preset P]
 *                 [--json FILE]
 *
 * --metrics: ',' separates runs, '+' joins the metrics of one run (one
 * engine computing them together): e.g.
 * --metrics 'default,all,combined,vmaf+psnr+float_ssim'.  "default" is VMAF
 * (vmaf_v0.6.1 and its features), "all" every metric, "combined" VMAF + PSNR
 * + SSIM + MS-SSIM + PSNR-HVS (issue 5's combined target); other names are
 * the engine's metric names (qm_metric_names(); `metrics` of the element).
 * Without --metrics: every metric alone, then default and all.
 *
 * --preset: libvmaf's CLI preset (the element's `preset`, e.g. aom_ctc=v7.0):
 * its models and metrics in every run; with no --metrics, the preset alone
 * (`none` beside it).
 * --models: the VMAF model(s) of the run (the element's `model`, e.g.
 * vmaf_v1.0.16_3d0h; default vmaf_v0.6.1); their features come with them.
 *
 * Content: synthetic textured pictures (sums of moving gratings plus noise),
 * --distinct reference frames cycled (default 8, at most 256; use 64 or
 * more where caches could flatter the figure), the distorted ones a quantised copy with a
 * little noise (bench/qmbench.c), 4:2:0, generated before timing.  Each
 * repeat opens a fresh engine, receives N warm-up results untimed
 * (--warmup, default 8), then times about S seconds of steady state
 * (--seconds, default 1); the figure is the median frames/s of the repeats
 * (--repeats, default 3; every repeat is in the JSON as fps_runs).  How the
 * interval is taken: see measure().
 *
 * --inputs: "host" (default) gives the pictures in system memory: the CUDA
 * backend copies them into its pinned staging and uploads them, and that is
 * timed; "device" gives them in GPU memory (CUDA backend only; the
 * nvh264dec ! qmetric case); "host,device" measures both.  --device-input is
 * --inputs device.  The CPU backend reads host memory only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qm.h"
#include "qmbench.h"

#include "backend.h"

#define MAX_FRAMES 256

static int n_frames = 8;      /* --distinct */
static const char *models;    /* --models, NULL: the default model */
static const char *preset;    /* --preset FAMILY=VERSION (aom_ctc=v7.0), or NULL */

typedef struct Clip {
    int w, h, bpc;
    uint8_t *buf[2][MAX_FRAMES];   /* host: ref, dist */
    uint8_t *dbuf[2][MAX_FRAMES];  /* device copies (or NULL) */
    bool device_ok;             /* every device copy was made */
    size_t plane_off[3], stride[3], size;
} Clip;

static uint32_t rng = 12345;

static void make_clip(Clip *c, int w, int h, int bpc, bool device)
{
    memset(c, 0, sizeof(*c));
    c->w = w;
    c->h = h;
    c->bpc = bpc;
    const size_t bytes = bpc > 8 ? 2 : 1;
    int pw[3], ph[3];
    ptrdiff_t stride[3];
    size_t off = 0;
    for (int p = 0; p < 3; p++) {
        qm_plane_size_full(w, h, QM_CHROMA_420, p, &pw[p], &ph[p]);
        c->stride[p] = (size_t)pw[p] * bytes;
        stride[p] = (ptrdiff_t)c->stride[p];
        c->plane_off[p] = off;
        off += c->stride[p] * (size_t)ph[p];
    }
    c->size = off;
    c->device_ok = device;
    for (int f = 0; f < n_frames; f++) {
        uint8_t *r[3], *d[3];
        for (int k = 0; k < 2; k++)
            c->buf[k][f] = malloc(c->size);
        for (int p = 0; p < 3; p++) {
            r[p] = c->buf[0][f] + c->plane_off[p];
            d[p] = c->buf[1][f] + c->plane_off[p];
        }
        qb_synth_frame(w, bpc, 3, pw, ph, r, d, stride, f, &rng);
        /* device copies through the CUDA backend (the bench includes no
         * CUDA header) */
        const QmBackendOps *cuda = qm_backend_cuda();
        if (device && cuda && cuda->device_copy) {
            for (int k = 0; k < 2; k++)
                if (!(c->dbuf[k][f] = cuda->device_copy(c->buf[k][f], c->size)))
                    c->device_ok = false;
        } else if (device) {
            c->device_ok = false;
        }
    }
}

static void free_clip(Clip *c)
{
    for (int f = 0; f < n_frames; f++)
        for (int k = 0; k < 2; k++) {
            free(c->buf[k][f]);
            if (c->dbuf[k][f])
                qm_backend_cuda()->device_free(c->dbuf[k][f]);
        }
}

static void pic(QmPicture *p, const Clip *c, int k, int f, bool device)
{
    memset(p, 0, sizeof(*p));
    p->w = c->w;
    p->h = c->h;
    p->bpc = c->bpc;
    p->chroma = QM_CHROMA_420;
    const uint8_t *base = device ? c->dbuf[k][f] : c->buf[k][f];
    for (int i = 0; i < 3; i++) {
        p->data[i] = base + c->plane_off[i];
        p->stride[i] = (ptrdiff_t)c->stride[i];
    }
    if (device)
        p->flags = QM_PICTURE_DEVICE;
}

/* frames/s of one configuration, or a negative error.
 *
 * Timed: the steady state only.  The clock starts when the result of the
 * warm-up's last pair is received (engine opened, workers and GPU buffers
 * up, caches warm) and stops when the first result is received after
 * `seconds` more; frames/s = results received in between / that time.  A
 * result is received only once its pair is finished, GPU work included (the
 * CUDA backend records an event per frame on its stream and hands out the
 * result once the event has completed), so the host clock times the GPU too.
 * The flush and the drain of the frames still in flight are not timed: the
 * interval ends and starts alike, on a receipt with the pipeline full. */
static double measure(const Clip *c, const char *metrics, QmBackend be,
                      int threads, double seconds, int warm, bool device,
                      char *why, size_t whylen)
{
    QmSettings s;
    qm_settings_default(&s, c->w, c->h, c->bpc, QM_CHROMA_420);
    s.metrics = metrics;
    if (models)
        s.models = models;
    s.preset = preset;
    s.backend = be;
    s.n_threads = threads;
    QmEngine *e;
    char *msg = NULL;
    int err = qm_engine_open(&e, &s, &msg);
    if (err) {
        snprintf(why, whylen, "%s", msg ? msg : qm_strerror(err));
        free(msg);
        return -1;
    }
    if (be == QM_BACKEND_CUDA && qm_engine_backend(e) != QM_BACKEND_CUDA) {
        snprintf(why, whylen, "no GPU");
        qm_engine_close(&e);
        return -1;
    }
    if (device && qm_engine_reads_host(e)) {
        snprintf(why, whylen, "a metric of the set runs on the CPU: device input refused");
        qm_engine_close(&e);
        return -1;
    }
    QmResult r;
    uint64_t n = 0, got = 0;
    double t0 = 0, t1 = 0;
    bool done = false;
    while (!done) {
        QmPicture a, b;
        pic(&a, c, 0, (int)(n % (uint64_t)n_frames), device);
        pic(&b, c, 1, (int)(n % (uint64_t)n_frames), device);
        if ((err = qm_engine_submit(e, &a, &b, NULL)))
            break;
        n++;
        while (!done && (err = qm_engine_receive(e, &r, false)) == 0) {
            const double t = qb_now();
            got++;
            if (got == (uint64_t)warm)
                t0 = t;
            else if (got > (uint64_t)warm && t - t0 >= seconds) {
                t1 = t;
                done = true;
            }
        }
        if (err == QM_EAGAIN)
            err = 0;
        if (err)
            break;
    }
    if (!err) {
        qm_engine_flush(e);
        while (qm_engine_receive(e, &r, true) == 0)
            ;
    }
    double fps = err ? -1 : (double)(got - (uint64_t)warm) / (t1 - t0);
    if (err)
        snprintf(why, whylen, "%s", qm_engine_error(e) ? qm_engine_error(e) : qm_strerror(err));
    qm_engine_close(&e);
    return fps;
}

/* CUDA twins missing for a metric list (engine spelling), "" when none */
static void missing_twins(const char *list, char *out, size_t len)
{
    int n;
    char **v = qb_split(list, ",", &n);
    out[0] = 0;
    for (int i = 0; i < n; i++)
        if (strcmp(v[i], "all") && !qm_metric_has_cuda(v[i]))
            snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? ", " : "", v[i]);
    qb_free_list(v);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: qmetric-bench [--sizes WxH,...] [--bits 8,10] [--metrics SET,...]\n"
            "                     [--backends cpu,cuda] [--threads N,...] [--inputs host,device]\n"
            "                     [--seconds S] [--warmup N] [--repeats N] [--distinct N]\n"
            "                     [--models LIST] [--preset FAMILY=VERSION] [--json FILE]\n"
            "  SET: a metric, 'default' (VMAF), 'all', 'combined' (" QB_COMBINED "),\n"
            "       or metrics joined by '+' (one run), e.g. vmaf+psnr+float_ssim\n"
            "  --device-input = --inputs device (the comment at the top of\n"
            "  bench/qmetric-bench.c says more)\n");
}

int main(int argc, char **argv)
{
    const char *sizes = "576x324,1920x1080,3840x2160", *bits = "8,10";
    const char *metrics = NULL, *backends = NULL, *threads = NULL;
    const char *inputs = "host";
    const char *json = NULL;
    double seconds = 1.0;
    int warm = 8, repeats = 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--sizes") && v) sizes = argv[++i];
        else if (!strcmp(a, "--bits") && v) bits = argv[++i];
        else if (!strcmp(a, "--metrics") && v) metrics = argv[++i];
        else if (!strcmp(a, "--backends") && v) backends = argv[++i];
        else if (!strcmp(a, "--threads") && v) threads = argv[++i];
        else if (!strcmp(a, "--inputs") && v) inputs = argv[++i];
        else if (!strcmp(a, "--seconds") && v) seconds = atof(argv[++i]);
        else if (!strcmp(a, "--warmup") && v) warm = atoi(argv[++i]);
        else if (!strcmp(a, "--repeats") && v) repeats = atoi(argv[++i]);
        else if (!strcmp(a, "--json") && v) json = argv[++i];
        else if (!strcmp(a, "--distinct") && v) n_frames = atoi(argv[++i]);
        else if (!strcmp(a, "--models") && v) models = argv[++i];
        else if (!strcmp(a, "--preset") && v) preset = argv[++i];
        else if (!strcmp(a, "--device-input")) inputs = "device";
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage();
            return 0;
        } else {
            usage();
            return 2;
        }
    }
    if (warm < 1 || repeats < 1 || !(seconds > 0) || n_frames < 1 || n_frames > MAX_FRAMES) {
        fprintf(stderr, "--warmup and --repeats must be >= 1, --seconds > 0, "
                "--distinct 1 to %d\n", MAX_FRAMES);
        return 2;
    }
    char deflist[1024] = "";
    if (!metrics && preset)
        metrics = "none";  /* the preset alone */
    if (!metrics) {
        for (const char *const *n = qm_metric_names(); *n; n++)
            snprintf(deflist + strlen(deflist), sizeof(deflist) - strlen(deflist), "%s,", *n);
        strcat(deflist, "default,all");
        metrics = deflist;
    }
    char nthr[32];
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(nthr, sizeof(nthr), "1,%ld", ncpu > 1 ? ncpu : 1);
    if (!threads)
        threads = nthr;
    if (!backends)
        backends = qm_have_cuda() ? "cpu,cuda" : "cpu";

    int ns, nb, nm, nbe, nt, ni;
    char **S = qb_split(sizes, ",", &ns), **B = qb_split(bits, ",", &nb),
         **M = qb_split(metrics, ",", &nm), **BE = qb_split(backends, ",", &nbe),
         **T = qb_split(threads, ",", &nt), **IN = qb_split(inputs, ",", &ni);
    bool want_device = false;
    for (int k = 0; k < ni; k++) {
        if (!strcmp(IN[k], "device"))
            want_device = true;
        else if (strcmp(IN[k], "host")) {
            fprintf(stderr, "--inputs: host or device, not %s\n", IN[k]);
            return 2;
        }
    }
    for (int k = 0; k < nbe; k++)
        if (strcmp(BE[k], "cpu") && strcmp(BE[k], "cuda")) {
            fprintf(stderr, "--backends: cpu or cuda, not %s\n", BE[k]);
            return 2;
        }
    int mw = 15;
    for (int k = 0; k < nm; k++)
        if ((int)strlen(M[k]) > mw)
            mw = (int)strlen(M[k]);
    FILE *jf = NULL;
    if (json && !(jf = fopen(json, "w"))) {
        perror(json);
        return 1;
    }
    if (jf)
        fprintf(jf, "{\"seconds\": %g, \"warmup\": %d, \"repeats\": %d, "
                "\"distinct\": %d, \"models\": \"%s\", "
                "\"device_input\": %s, \"results\": [\n", seconds, warm, repeats,
                n_frames, models ? models : "default", want_device ? "true" : "false");
    printf("# %d distinct frames cycled; models: %s%s%s\n", n_frames,
           models ? models : preset ? "the preset's" : "default",
           preset ? "; preset " : "", preset ? preset : "");
    int first = 1;
    printf("%-11s %-4s %-*s %-5s %-6s %-7s %10s\n", "size", "bits", mw, "metrics", "back",
           "input", "threads", "frames/s");
    for (int si = 0; si < ns; si++) {
        int w, h;
        if (sscanf(S[si], "%dx%d", &w, &h) != 2) {
            fprintf(stderr, "--sizes: %s is not WxH\n", S[si]);
            continue;
        }
        for (int bi = 0; bi < nb; bi++) {
            Clip c;
            make_clip(&c, w, h, atoi(B[bi]), want_device && qm_have_cuda());
            for (int mi = 0; mi < nm; mi++) {
                char *m = qb_metric_list(M[mi]);
                for (int ei = 0; ei < nbe; ei++) {
                    QmBackend be = !strcmp(BE[ei], "cuda") ? QM_BACKEND_CUDA : QM_BACKEND_CPU;
                    for (int ii = 0; ii < ni; ii++) {
                        const bool device = !strcmp(IN[ii], "device");
                        if (device && be != QM_BACKEND_CUDA)
                            continue;  /* the CPU backend reads host memory only */
                        for (int ti = 0; ti < nt; ti++) {
                            int th = atoi(T[ti]);
                            if (be == QM_BACKEND_CUDA && device && ti > 0)
                                break;  /* threads are CPU workers and, with host
                                         * input, the staging copy's threads */
                            char why[256] = "";
                            if (be == QM_BACKEND_CUDA && !qm_have_cuda()) {
                                printf("%-11s %-4s %-*s %-5s %-6s %-7s %10s  (CUDA backend not built)\n",
                                       S[si], B[bi], mw, M[mi], BE[ei], IN[ii], "-", "-");
                                continue;
                            }
                            missing_twins(m, why, sizeof(why));
                            if (be == QM_BACKEND_CUDA && why[0] && (device || !strchr(m, ','))) {
                                /* a set on host input runs its twinless
                                 * metrics on the CPU beside the GPU: measure */
                                printf("%-11s %-4s %-*s %-5s %-6s %-7s %10s  (no CUDA twin yet: %s)\n",
                                       S[si], B[bi], mw, M[mi], BE[ei], IN[ii], "-", "-", why);
                                continue;
                            }
                            why[0] = 0;
                            double *v = calloc((size_t)repeats, sizeof(double));
                            int k;
                            if (device && !c.device_ok)
                                snprintf(why, sizeof(why), "no device copy of the frames: no GPU?");
                            for (k = 0; k < repeats && !why[0]; k++)
                                if ((v[k] = measure(&c, m, be, th, seconds, warm, device,
                                                    why, sizeof(why))) < 0)
                                    break;
                            if (k < repeats) {
                                printf("%-11s %-4s %-*s %-5s %-6s %-7d %10s  (%s)\n", S[si], B[bi],
                                       mw, M[mi], BE[ei], IN[ii], th, "-", why);
                                free(v);
                                continue;
                            }
                            double runs[64];
                            const int nr = repeats < 64 ? repeats : 64;
                            memcpy(runs, v, (size_t)nr * sizeof(double));
                            const double med = qb_median(v, repeats);
                            printf("%-11s %-4s %-*s %-5s %-6s %-7d %10.1f\n", S[si], B[bi], mw, M[mi],
                                   BE[ei], IN[ii], th, med);
                            fflush(stdout);
                            if (jf) {
                                fprintf(jf, "%s  {\"size\": \"%s\", \"bits\": %s, \"metrics\": ",
                                        first ? "" : ",\n", S[si], B[bi]);
                                qb_json_str(jf, M[mi]);
                                fprintf(jf, ", \"metric_list\": ");
                                qb_json_str(jf, m);
                                fprintf(jf, ", \"backend\": \"%s\", \"input\": \"%s\", "
                                        "\"threads\": %d, \"fps\": %.2f, \"fps_runs\": [",
                                        BE[ei], IN[ii], th, med);
                                for (int r = 0; r < nr; r++)
                                    fprintf(jf, "%s%.2f", r ? ", " : "", runs[r]);
                                fprintf(jf, "]}");
                                first = 0;
                            }
                            free(v);
                        }
                    }
                }
                free(m);
            }
            free_clip(&c);
        }
    }
    if (jf) {
        fprintf(jf, "\n]}\n");
        fclose(jf);
    }
    qb_free_list(S);
    qb_free_list(B);
    qb_free_list(M);
    qb_free_list(BE);
    qb_free_list(T);
    qb_free_list(IN);
    return 0;
}
