/* gst-qmetric: how fast the pictures of raw files can reach the GPU, path by
 * path, without the metrics: the ceiling that qmetric-yuv's CUDA path meets
 * (docs/benchmarks.md, "Raw files on the GPU").
 *
 *   qmetric-bench-ingest [--size WxH] [--frames N] [--threads 1,4,8]
 *                        [--dir /dev/shm] [--json FILE]
 *
 * Two files of N frames of 8-bit 4:2:0 (a reference and a distorted) are
 * written to DIR and removed at the end; each path moves the luma planes of
 * every pair (what vmaf_v0.6.1 uploads), frames shared out among T threads
 * (thread t takes pairs t, t + T, ...), and reports the rate in GB/s of
 * luma and in pairs/s:
 *   warm      memcpy from a private, already touched buffer: the host's
 *             copy bandwidth with no file and no page fault
 *   mmap      memcpy from a fresh mapping of the files (what the engine's
 *             staging copy does with qmetric-yuv's mapped inputs)
 *   pread     pread() of each plane straight into the destination
 *   pread+h2d pread() into page-locked memory, then cudaMemcpyAsync to the
 *             device on the thread's own stream, two buffers a thread so
 *             that the next read overlaps the upload (CUDA builds only)
 *   h2d       the uploads alone, from page-locked memory (CUDA builds only)
 * The destination is page-locked (cudaHostAlloc) in CUDA builds, else
 * plain memory touched beforehand. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifdef QM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#define MAX_THREADS 64

typedef enum { P_WARM, P_MMAP, P_PREAD, P_PREAD_H2D, P_H2D, N_PATHS } Path;
static const char *const path_name[N_PATHS] = { "warm", "mmap", "pread", "pread+h2d", "h2d" };

typedef struct Bench {
    int w, h, frames;
    size_t frame, luma;   /* bytes of a 4:2:0 frame, of its luma plane */
    int fd[2];
    const uint8_t *map[2];
    uint8_t *warm;        /* WARM_FRAMES luma planes, touched */
    Path path;
    unsigned threads;
} Bench;

#define WARM_FRAMES 64    /* 130 MB at 1080p: far larger than the caches */

typedef struct Worker {
    Bench *b;
    unsigned id;
    uint8_t *dst[2];      /* two luma pairs of page-locked memory */
    void *dev;
#ifdef QM_HAVE_CUDA
    cudaStream_t st;
    cudaEvent_t ev[2];
#endif
    int err;
} Worker;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int read_all(int fd, uint8_t *dst, size_t n, off_t off)
{
    while (n) {
        ssize_t got = pread(fd, dst, n, off);
        if (got <= 0)
            return got ? errno : EIO;
        dst += got;
        n -= (size_t)got;
        off += got;
    }
    return 0;
}

static void *work(void *arg)
{
    Worker *wk = arg;
    Bench *b = wk->b;
    unsigned k = 0;
    for (int n = (int)wk->id; n < b->frames && !wk->err; n += (int)b->threads, k ^= 1) {
        uint8_t *dst = wk->dst[k];
        const off_t off = (off_t)n * (off_t)b->frame;
#ifdef QM_HAVE_CUDA
        /* this buffer's previous upload must be done before it is rewritten */
        if ((b->path == P_PREAD_H2D || b->path == P_H2D) && cudaEventSynchronize(wk->ev[k])) {
            wk->err = EIO;
            break;
        }
#endif
        for (int s = 0; s < 2; s++) {
            uint8_t *d = dst + (size_t)s * b->luma;
            switch (b->path) {
            case P_WARM:
                memcpy(d, b->warm + (size_t)(n % WARM_FRAMES) * b->luma, b->luma);
                break;
            case P_MMAP:
                memcpy(d, b->map[s] + off, b->luma);
                break;
            case P_PREAD:
            case P_PREAD_H2D:
                wk->err = read_all(b->fd[s], d, b->luma, off);
                break;
            default:
                break;
            }
        }
#ifdef QM_HAVE_CUDA
        if (b->path == P_PREAD_H2D || b->path == P_H2D) {
            if (cudaMemcpyAsync(wk->dev, dst, 2 * b->luma, cudaMemcpyHostToDevice, wk->st) ||
                cudaEventRecord(wk->ev[k], wk->st))
                wk->err = EIO;
        }
#endif
    }
#ifdef QM_HAVE_CUDA
    if (wk->st && cudaStreamSynchronize(wk->st))
        wk->err = EIO;
#endif
    return NULL;
}

static int map_files(Bench *b, bool on)
{
    for (int s = 0; s < 2; s++) {
        if (!on) {
            munmap((void *)b->map[s], b->frame * (size_t)b->frames);
            continue;
        }
        void *m = mmap(NULL, b->frame * (size_t)b->frames, PROT_READ, MAP_PRIVATE, b->fd[s], 0);
        if (m == MAP_FAILED)
            return -1;
        madvise(m, b->frame * (size_t)b->frames, MADV_SEQUENTIAL);
        b->map[s] = m;
    }
    return 0;
}

/* Seconds for one path at one thread count, or < 0. */
static double run(Bench *b, Worker *wk)
{
    pthread_t th[MAX_THREADS];
    if (b->path == P_MMAP && map_files(b, true))
        return -1;
    const double t0 = now_s();
    unsigned started = 0;
    for (unsigned i = 0; i < b->threads; i++) {
        wk[i].b = b;
        wk[i].id = i;
        wk[i].err = 0;
        if (pthread_create(&th[i], NULL, work, &wk[i]))
            break;
        started++;
    }
    int err = started == b->threads ? 0 : EAGAIN;
    for (unsigned i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        err = err ? err : wk[i].err;
    }
    const double t = now_s() - t0;
    if (b->path == P_MMAP)
        map_files(b, false);
    return err ? -1 : t;
}

static int make_files(Bench *b, const char *dir, char path[2][512])
{
    uint8_t *buf = malloc(b->frame);
    if (!buf)
        return -1;
    uint64_t x = 88172645463325252ull;
    for (int s = 0; s < 2; s++) {
        snprintf(path[s], 512, "%s/qmetric-ingest-%d-%c.yuv", dir, (int)getpid(), "rd"[s]);
        b->fd[s] = open(path[s], O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (b->fd[s] < 0) {
            free(buf);
            return -1;
        }
        for (int n = 0; n < b->frames; n++) {
            /* every frame distinct: no page of one is a copy of another */
            for (size_t i = 0; i + 8 <= b->frame; i += 8) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                memcpy(buf + i, &x, 8);
            }
            if (write(b->fd[s], buf, b->frame) != (ssize_t)b->frame) {
                free(buf);
                return -1;
            }
        }
    }
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    Bench b = { .w = 1920, .h = 1080, .frames = 1000 };
    const char *dir = "/dev/shm", *json = NULL, *thr = "1,2,4,8";
    static const struct option opts[] = {
        { "size", required_argument, 0, 's' }, { "frames", required_argument, 0, 'n' },
        { "threads", required_argument, 0, 't' }, { "dir", required_argument, 0, 'D' },
        { "json", required_argument, 0, 'j' }, { "help", no_argument, 0, 'H' }, { 0 }
    };
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 's':
            if (sscanf(optarg, "%dx%d", &b.w, &b.h) != 2 || b.w < 2 || b.h < 2 || (b.w | b.h) & 1)
                goto usage;
            break;
        case 'n': b.frames = atoi(optarg); break;
        case 't': thr = optarg; break;
        case 'D': dir = optarg; break;
        case 'j': json = optarg; break;
        default:
        usage:
            fprintf(stderr, "usage: %s [--size WxH] [--frames N] [--threads 1,4,8] "
                    "[--dir DIR] [--json FILE]\n", argv[0]);
            return c == 'H' ? 0 : 2;
        }
    }
    unsigned tl[16], n_tl = 0;
    for (char *p = (char *)thr; *p && n_tl < 16;) {
        long v = strtol(p, &p, 10);
        if (v < 1 || v > MAX_THREADS)
            goto usage;
        tl[n_tl++] = (unsigned)v;
        if (*p == ',')
            p++;
        else if (*p)
            goto usage;
    }
    if (b.frames < 1 || !n_tl)
        goto usage;
    b.luma = (size_t)b.w * b.h;
    b.frame = b.luma * 3 / 2;
    char path[2][512];
    if (make_files(&b, dir, path)) {
        fprintf(stderr, "qmetric-bench-ingest: cannot write the files in %s: %s\n", dir, strerror(errno));
        return 1;
    }
    if (!(b.warm = malloc(b.luma * WARM_FRAMES)))
        return 1;
    memset(b.warm, 7, b.luma * WARM_FRAMES);

    Worker wk[MAX_THREADS];
    memset(wk, 0, sizeof(wk));
    unsigned max_t = 0;
    for (unsigned i = 0; i < n_tl; i++)
        max_t = tl[i] > max_t ? tl[i] : max_t;
    bool cuda = false;
#ifdef QM_HAVE_CUDA
    int ndev = 0;
    cuda = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0;
#endif
    for (unsigned i = 0; i < max_t; i++) {
        for (int k = 0; k < 2; k++) {
#ifdef QM_HAVE_CUDA
            if (cuda) {
                if (cudaHostAlloc((void **)&wk[i].dst[k], 2 * b.luma, cudaHostAllocDefault))
                    return 1;
                continue;
            }
#endif
            if (!(wk[i].dst[k] = malloc(2 * b.luma)))
                return 1;
            memset(wk[i].dst[k], 0, 2 * b.luma);
        }
#ifdef QM_HAVE_CUDA
        if (cuda && (cudaMalloc(&wk[i].dev, 2 * b.luma) || cudaStreamCreateWithFlags(&wk[i].st, cudaStreamNonBlocking) ||
                     cudaEventCreateWithFlags(&wk[i].ev[0], cudaEventDisableTiming) ||
                     cudaEventCreateWithFlags(&wk[i].ev[1], cudaEventDisableTiming) ||
                     cudaEventRecord(wk[i].ev[0], wk[i].st) || cudaEventRecord(wk[i].ev[1], wk[i].st)))
            return 1;
#endif
    }

    FILE *js = json ? fopen(json, "w") : NULL;
    if (js)
        fprintf(js, "{\"width\": %d, \"height\": %d, \"frames\": %d, \"page_locked\": %s, \"runs\": [",
                b.w, b.h, b.frames, cuda ? "true" : "false");
    printf("%dx%d, %d pairs, luma of both (%.2f MB a pair) to %s memory\n", b.w, b.h, b.frames,
           2e-6 * b.luma, cuda ? "page-locked" : "plain");
    printf("%-10s %7s %9s %10s\n", "path", "threads", "GB/s", "pairs/s");
    bool first = true;
    for (int p = 0; p < N_PATHS; p++) {
        if ((p == P_PREAD_H2D || p == P_H2D) && !cuda)
            continue;
        for (unsigned i = 0; i < n_tl; i++) {
            b.path = (Path)p;
            b.threads = tl[i];
            const double t = run(&b, wk);
            if (t < 0) {
                fprintf(stderr, "qmetric-bench-ingest: %s with %u threads failed\n", path_name[p], tl[i]);
                continue;
            }
            const double gbs = 2.0 * b.luma * b.frames / t / 1e9, pps = b.frames / t;
            printf("%-10s %7u %9.1f %10.0f\n", path_name[p], tl[i], gbs, pps);
            fflush(stdout);
            if (js)
                fprintf(js, "%s\n  {\"path\": \"%s\", \"threads\": %u, \"seconds\": %.4f, \"GBps\": %.2f, \"pairs_per_s\": %.1f}",
                        first ? "" : ",", path_name[p], tl[i], t, gbs, pps);
            first = false;
        }
    }
    if (js) {
        fprintf(js, "\n]}\n");
        fclose(js);
    }
    for (int s = 0; s < 2; s++) {
        close(b.fd[s]);
        unlink(path[s]);
    }
    return 0;
}
