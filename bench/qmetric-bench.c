/* qmetric-bench: throughput of the metric engine, per metric and backend.
 *
 *   qmetric-bench [--sizes 576x324,1920x1080,3840x2160] [--bits 8,10]
 *                 [--metrics psnr,...,default,all] [--backends cpu,cuda]
 *                 [--threads 1,N] [--seconds S] [--json FILE] [--device-input]
 *
 * Content: synthetic textured pictures (sums of moving gratings plus noise),
 * 8 reference frames cycled, the distorted ones a quantised, slightly
 * blurred copy, generated before timing.  Each measurement submits frames
 * for about S seconds after a warm-up of 8 frames and reports the median
 * frames/s of 3 repeats.  "default" is VMAF (vmaf_v0.6.1 and its features),
 * "all" every metric.  CUDA measurements take host pictures (uploaded through
 * the engine's pinned staging) unless --device-input, where the pictures are
 * already in device memory.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "qm.h"

#ifdef QM_BENCH_CUDA
#include <cuda_runtime_api.h>
#endif

#define NFRAMES 8

typedef struct Clip {
    int w, h, bpc;
    uint8_t *buf[2][NFRAMES];   /* host: ref, dist */
    uint8_t *dbuf[2][NFRAMES];  /* device copies (or NULL) */
    size_t plane_off[3], stride[3], size;
} Clip;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static uint32_t rng = 12345;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static void make_clip(Clip *c, int w, int h, int bpc, bool device)
{
    memset(c, 0, sizeof(*c));
    c->w = w;
    c->h = h;
    c->bpc = bpc;
    const size_t bytes = bpc > 8 ? 2 : 1;
    size_t off = 0;
    for (int p = 0; p < 3; p++) {
        int pw, ph;
        qm_plane_size(w, h, QM_CHROMA_420, p, &pw, &ph);
        c->stride[p] = (size_t)pw * bytes;
        c->plane_off[p] = off;
        off += c->stride[p] * (size_t)ph;
    }
    c->size = off;
    const int max = (1 << bpc) - 1;
    for (int f = 0; f < NFRAMES; f++) {
        for (int k = 0; k < 2; k++)
            c->buf[k][f] = malloc(c->size);
        for (int p = 0; p < 3; p++) {
            int pw, ph;
            qm_plane_size(w, h, QM_CHROMA_420, p, &pw, &ph);
            const double s = (double)w / pw;
            for (int y = 0; y < ph; y++) {
                for (int x = 0; x < pw; x++) {
                    const double X = x * s + 3.0 * f, Y = y * s + 1.5 * f;
                    double v = 0.5 + 0.18 * sin(X * 0.05) * cos(Y * 0.031) +
                               0.12 * sin((X + Y) * 0.21 + p) +
                               0.08 * sin(X * 0.9 + Y * 0.37) +
                               0.04 * ((int)(rnd() & 255) - 128) / 128.0;
                    int r = (int)(v * max + 0.5);
                    r = r < 0 ? 0 : r > max ? max : r;
                    /* distortion: coarse quantisation plus a little noise */
                    const int q = 1 << (bpc - 4);
                    int d = (r / q) * q + q / 2 + (int)(rnd() % 3) - 1;
                    d = d < 0 ? 0 : d > max ? max : d;
                    size_t o = c->plane_off[p] + (size_t)y * c->stride[p];
                    if (bytes == 1) {
                        c->buf[0][f][o + x] = (uint8_t)r;
                        c->buf[1][f][o + x] = (uint8_t)d;
                    } else {
                        ((uint16_t *)(c->buf[0][f] + o))[x] = (uint16_t)r;
                        ((uint16_t *)(c->buf[1][f] + o))[x] = (uint16_t)d;
                    }
                }
            }
        }
#ifdef QM_BENCH_CUDA
        if (device) {
            for (int k = 0; k < 2; k++) {
                if (cudaMalloc((void **)&c->dbuf[k][f], c->size) != cudaSuccess ||
                    cudaMemcpy(c->dbuf[k][f], c->buf[k][f], c->size,
                               cudaMemcpyHostToDevice) != cudaSuccess)
                    c->dbuf[k][f] = NULL;
            }
        }
#else
        (void)device;
#endif
    }
}

static void free_clip(Clip *c)
{
    for (int f = 0; f < NFRAMES; f++)
        for (int k = 0; k < 2; k++) {
            free(c->buf[k][f]);
#ifdef QM_BENCH_CUDA
            if (c->dbuf[k][f])
                cudaFree(c->dbuf[k][f]);
#endif
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

/* frames/s of one configuration, or a negative error */
static double measure(const Clip *c, const char *metrics, QmBackend be,
                      int threads, double seconds, bool device, char *why,
                      size_t whylen)
{
    QmSettings s;
    qm_settings_default(&s, c->w, c->h, c->bpc, QM_CHROMA_420);
    s.metrics = metrics;
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
    QmResult r;
    uint64_t n = 0, got = 0;
    double t0 = 0;
    const int warm = 8;
    for (;;) {
        QmPicture a, b;
        pic(&a, c, 0, (int)(n % NFRAMES), device);
        pic(&b, c, 1, (int)(n % NFRAMES), device);
        if ((err = qm_engine_submit(e, &a, &b, NULL)))
            break;
        n++;
        while (qm_engine_receive(e, &r, false) == 0) {
            got++;
            if (got == warm)
                t0 = now();
        }
        if (got >= warm && now() - t0 > seconds)
            break;
    }
    if (!err) {
        qm_engine_flush(e);
        while (qm_engine_receive(e, &r, true) == 0)
            got++;
    }
    double fps = err ? -1 : (got - warm) / (now() - t0);
    if (err)
        snprintf(why, whylen, "%s", qm_engine_error(e) ? qm_engine_error(e) : qm_strerror(err));
    qm_engine_close(&e);
    return fps;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static char **split(const char *s, int *n)
{
    char *d = strdup(s), **v = calloc(64, sizeof(char *));
    *n = 0;
    for (char *t = strtok(d, ","); t && *n < 63; t = strtok(NULL, ","))
        v[(*n)++] = strdup(t);
    free(d);
    return v;
}

int main(int argc, char **argv)
{
    const char *sizes = "576x324,1920x1080,3840x2160", *bits = "8,10";
    const char *metrics = NULL, *backends = NULL, *threads = NULL;
    const char *json = NULL;
    double seconds = 1.0;
    bool device = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--sizes") && v) sizes = argv[++i];
        else if (!strcmp(a, "--bits") && v) bits = argv[++i];
        else if (!strcmp(a, "--metrics") && v) metrics = argv[++i];
        else if (!strcmp(a, "--backends") && v) backends = argv[++i];
        else if (!strcmp(a, "--threads") && v) threads = argv[++i];
        else if (!strcmp(a, "--seconds") && v) seconds = atof(argv[++i]);
        else if (!strcmp(a, "--json") && v) json = argv[++i];
        else if (!strcmp(a, "--device-input")) device = true;
        else {
            fprintf(stderr, "usage: see the comment at the top of bench/qmetric-bench.c\n");
            return 2;
        }
    }
    char deflist[1024] = "";
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

    int ns, nb, nm, nbe, nt;
    char **S = split(sizes, &ns), **B = split(bits, &nb), **M = split(metrics, &nm),
         **BE = split(backends, &nbe), **T = split(threads, &nt);
    FILE *jf = json ? fopen(json, "w") : NULL;
    if (jf)
        fprintf(jf, "{\"seconds\": %g, \"device_input\": %s, \"results\": [\n", seconds,
                device ? "true" : "false");
    int first = 1;
    printf("%-11s %-4s %-15s %-5s %-7s %10s\n", "size", "bits", "metrics", "back", "threads", "frames/s");
    for (int si = 0; si < ns; si++) {
        int w, h;
        if (sscanf(S[si], "%dx%d", &w, &h) != 2)
            continue;
        for (int bi = 0; bi < nb; bi++) {
            Clip c;
            make_clip(&c, w, h, atoi(B[bi]), device);
            for (int mi = 0; mi < nm; mi++) {
                const char *m = !strcmp(M[mi], "default") ? "vmaf" : M[mi];
                for (int ei = 0; ei < nbe; ei++) {
                    QmBackend be = !strcmp(BE[ei], "cuda") ? QM_BACKEND_CUDA : QM_BACKEND_CPU;
                    for (int ti = 0; ti < nt; ti++) {
                        int th = atoi(T[ti]);
                        if (be == QM_BACKEND_CUDA && ti > 0)
                            break;  /* CPU threads only matter for CPU metrics */
                        if (be == QM_BACKEND_CUDA && strcmp(M[mi], "all") &&
                            !qm_metric_has_cuda(m)) {
                            printf("%-11s %-4s %-15s %-5s %-7s %10s  (no CUDA twin yet)\n",
                                   S[si], B[bi], M[mi], BE[ei], "-", "-");
                            continue;
                        }
                        double v[3];
                        char why[256] = "";
                        int k;
                        for (k = 0; k < 3; k++)
                            if ((v[k] = measure(&c, m, be, th, seconds,
                                                device && be == QM_BACKEND_CUDA,
                                                why, sizeof(why))) < 0)
                                break;
                        if (k < 3) {
                            printf("%-11s %-4s %-15s %-5s %-7d %10s  (%s)\n", S[si], B[bi], M[mi],
                                   BE[ei], th, "-", why);
                            continue;
                        }
                        qsort(v, 3, sizeof(double), cmp);
                        printf("%-11s %-4s %-15s %-5s %-7d %10.1f\n", S[si], B[bi], M[mi], BE[ei],
                               th, v[1]);
                        fflush(stdout);
                        if (jf) {
                            fprintf(jf, "%s  {\"size\": \"%s\", \"bits\": %s, \"metrics\": \"%s\", "
                                    "\"backend\": \"%s\", \"threads\": %d, \"fps\": %.2f}",
                                    first ? "" : ",\n", S[si], B[bi], M[mi], BE[ei], th, v[1]);
                            first = 0;
                        }
                    }
                }
            }
            free_clip(&c);
        }
    }
    if (jf) {
        fprintf(jf, "\n]}\n");
        fclose(jf);
    }
    return 0;
}
