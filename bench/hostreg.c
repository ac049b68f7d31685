/* gst-qmetric: what registering a mapped input file for direct transfers
 * costs (qm_engine_register_host, qmetric-yuv's window; docs/benchmarks.md).
 * A file of `MiB` in /dev/shm (or the directory given), mapped read-only
 * private and shared, registered in 249 MiB chunks (cudaHostRegister,
 * read-only, portable) and unregistered: GB/s for one file, then for two
 * files at once (a thread each); how long 4 MiB uploads issued by another
 * thread take while a file is registered (the driver serialises them: why
 * qmetric-yuv registers on the thread that submits); then the same bytes
 * copied by the device from the registered pages (cudaMemcpy2DAsync, 1920
 * byte rows) and by one CPU thread into pinned memory, for comparison.
 * Plain C on the CUDA runtime, built with the CUDA backend
 * (build/bench/qmetric-hostreg [MiB [DIR]]); bench/rawio.sh runs it first.
 */
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define CHUNK ((size_t)249 << 20)  /* qmetric-yuv's chunk at 1080p 8-bit 4:2:0 */
#define RO (cudaHostRegisterPortable | cudaHostRegisterReadOnly)

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef struct File {
    char path[512];
    int fd;
    size_t n;
    int flags;            /* MAP_SHARED or MAP_PRIVATE */
    double gbps;
    cudaError_t err;
} File;

static pthread_barrier_t start;

/* Register the file chunk by chunk, unregistering the previous one (a
 * window of two chunks, as qmetric-yuv keeps a few). */
static void *reg_file(void *arg)
{
    File *f = arg;
    uint8_t *p = mmap(NULL, f->n, PROT_READ, f->flags, f->fd, 0);
    pthread_barrier_wait(&start);
    if (p == MAP_FAILED) {
        f->err = cudaErrorInvalidValue;
        return NULL;
    }
    const double t0 = now_s();
    size_t done = 0;
    for (size_t o = 0; o + CHUNK <= f->n && !f->err; o += CHUNK) {
        f->err = cudaHostRegister(p + o, CHUNK, RO);
        if (o && !f->err)
            cudaHostUnregister(p + o - CHUNK);
        done = o + CHUNK;
    }
    if (done && !f->err)
        cudaHostUnregister(p + done - CHUNK);
    f->gbps = done / 1e9 / (now_s() - t0);
    munmap(p, f->n);
    return NULL;
}

static void run(File *f, int n, int flags, const char *what)
{
    pthread_t th[2];
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (int k = 0; k < n; k++) {
        f[k].flags = flags;
        f[k].err = cudaSuccess;
        pthread_create(&th[k], NULL, reg_file, &f[k]);
    }
    for (int k = 0; k < n; k++)
        pthread_join(th[k], NULL);
    pthread_barrier_destroy(&start);
    printf("register %-7s %d file%s at once: ", what, n, n > 1 ? "s" : " ");
    for (int k = 0; k < n; k++)
        printf("%s%.1f GB/s%s", k ? ", " : "", f[k].gbps,
               f[k].err ? cudaGetErrorName(f[k].err) : "");
    printf("\n");
}

/* 4 MiB uploads from pinned memory, one at a time, until *stop (or n of
 * them when stop is NULL): their mean and worst time in microseconds. */
static void uploads(volatile int *stop, long n, double *mean, double *worst)
{
    uint8_t *d, *h;
    cudaStream_t st;
    *mean = *worst = -1;
    if (cudaMalloc((void **)&d, 4 << 20) || cudaMallocHost((void **)&h, 4 << 20) ||
        cudaStreamCreate(&st))
        return;
    long k = 0;
    const double t0 = now_s();
    *worst = 0;
    while (stop ? !*stop : k < n) {
        const double t = now_s();
        cudaMemcpyAsync(d, h, 4 << 20, cudaMemcpyHostToDevice, st);
        cudaStreamSynchronize(st);
        const double dt = (now_s() - t) * 1e6;
        *worst = dt > *worst ? dt : *worst;
        k++;
    }
    *mean = (now_s() - t0) * 1e6 / (k ? k : 1);
    printf("  %ld uploads of 4 MiB, mean %.0f us, worst %.0f us\n", k, *mean, *worst);
    cudaStreamDestroy(st);
    cudaFree(d);
    cudaFreeHost(h);
}

static volatile int reg_done;

static void *reg_then_stop(void *arg)
{
    reg_file(arg);
    reg_done = 1;
    return NULL;
}

int main(int argc, char **argv)
{
    const size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 2048;
    const char *dir = argc > 2 ? argv[2] : "/dev/shm";
    File f[2];
    memset(f, 0, sizeof(f));
    if (cudaFree(0) != cudaSuccess) {
        fprintf(stderr, "hostreg: no CUDA device\n");
        return 77;
    }
    for (int k = 0; k < 2; k++) {
        snprintf(f[k].path, sizeof(f[k].path), "%s/qm-hostreg-%d", dir, k);
        f[k].n = mib << 20;
        f[k].fd = open(f[k].path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (f[k].fd < 0 || ftruncate(f[k].fd, (off_t)f[k].n)) {
            perror(f[k].path);
            return 1;
        }
        uint8_t *w = mmap(NULL, f[k].n, PROT_READ | PROT_WRITE, MAP_SHARED, f[k].fd, 0);
        if (w == MAP_FAILED) {
            perror("mmap");
            return 1;
        }
        for (size_t i = 0; i < f[k].n; i++)
            w[i] = (uint8_t)(i * 2654435761u >> 24);
        munmap(w, f[k].n);
    }
    int ro = 0;
    cudaDeviceGetAttribute(&ro, cudaDevAttrHostRegisterReadOnlySupported, 0);
    printf("hostreg: %zu MiB per file in %s, %zu MiB chunks, read-only registration %s\n",
           mib, dir, CHUNK >> 20, ro ? "supported" : "NOT supported");
    run(f, 1, MAP_PRIVATE, "private");
    run(f, 1, MAP_SHARED, "shared");
    run(f, 2, MAP_SHARED, "shared");
    double mean, worst;
    printf("uploads alone:\n");
    uploads(NULL, 2000, &mean, &worst);
    printf("uploads while another thread registers a file:\n");
    pthread_t th;
    pthread_barrier_init(&start, NULL, 1);
    f[0].flags = MAP_SHARED;
    f[0].err = cudaSuccess;
    pthread_create(&th, NULL, reg_then_stop, &f[0]);
    uploads(&reg_done, 0, &mean, &worst);
    pthread_join(th, NULL);
    pthread_barrier_destroy(&start);

    /* the device's copy from registered pages against one CPU thread's */
    const size_t n = CHUNK, row = 1920, rows = n / row;
    uint8_t *p = mmap(NULL, n, PROT_READ, MAP_SHARED, f[0].fd, 0), *d, *h;
    cudaStream_t st;
    if (p == MAP_FAILED || cudaMalloc((void **)&d, n) || cudaMallocHost((void **)&h, n) ||
        cudaStreamCreate(&st) || cudaHostRegister(p, n, RO)) {
        fprintf(stderr, "hostreg: setup of the copies failed\n");
        return 1;
    }
    double best = 0;
    for (int i = 0; i < 3; i++) {
        const double t0 = now_s();
        cudaMemcpy2DAsync(d, row, p, row, row, rows, cudaMemcpyHostToDevice, st);
        cudaStreamSynchronize(st);
        const double g = n / 1e9 / (now_s() - t0);
        best = g > best ? g : best;
    }
    cudaHostUnregister(p);
    const double t0 = now_s();
    memcpy(h, p, n);
    const double cpu = n / 1e9 / (now_s() - t0);
    printf("copy: device from registered pages %.1f GB/s; one CPU thread into pinned "
           "memory %.1f GB/s\n", best, cpu);
    for (int k = 0; k < 2; k++) {
        close(f[k].fd);
        unlink(f[k].path);
    }
    return 0;
}
