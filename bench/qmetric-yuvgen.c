/* qmetric-yuvgen: raw YUV input for benchmarks (bench/rawio.sh).  Writes
 * two files of 8-bit 4:2:0 frames, the bench's synthetic content
 * (qb_synth_frame: moving gratings plus noise, and a copy quantised to 16
 * levels with +-1 noise): `distinct` different frame pairs, made on all the
 * machine's cores, then cycled until `frames` are written.  Enough distinct
 * frames keep the files from being a few pages served again and again
 * from a cache.
 *
 *   qmetric-yuvgen --width W --height H --frames N [--distinct D] REF.yuv DIS.yuv
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qmbench.h"

typedef struct Gen {
    int w, h, distinct;
    size_t frame;
    uint8_t *ref, *dis;  /* distinct frames back to back */
    int next;            /* next frame to make */
    pthread_mutex_t lock;
} Gen;

static void make_frame(Gen *g, int f)
{
    const int pw[3] = { g->w, (g->w + 1) / 2, (g->w + 1) / 2 };
    const int ph[3] = { g->h, (g->h + 1) / 2, (g->h + 1) / 2 };
    uint8_t *r[3], *d[3];
    const ptrdiff_t stride[3] = { pw[0], pw[1], pw[2] };
    size_t off = (size_t)f * g->frame;
    for (int p = 0; p < 3; p++) {
        r[p] = g->ref + off;
        d[p] = g->dis + off;
        off += (size_t)pw[p] * (size_t)ph[p];
    }
    uint32_t rng = 0x9E3779B9u ^ (uint32_t)(f * 2654435761u);
    if (!rng)
        rng = 1;
    qb_synth_frame(g->w, 8, 3, pw, ph, r, d, stride, f, &rng);
}

static void *worker(void *arg)
{
    Gen *g = arg;
    for (;;) {
        pthread_mutex_lock(&g->lock);
        const int f = g->next++;
        pthread_mutex_unlock(&g->lock);
        if (f >= g->distinct)
            return NULL;
        make_frame(g, f);
    }
}

static int write_cycled(const char *path, const uint8_t *buf, size_t frame, int distinct,
                        long frames)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return -1;
    }
    for (long i = 0; i < frames; i++)
        if (fwrite(buf + (size_t)(i % distinct) * frame, 1, frame, f) != frame) {
            perror(path);
            fclose(f);
            return -1;
        }
    if (fclose(f)) {
        perror(path);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    Gen g = { .distinct = 64 };
    long frames = 0;
    const char *paths[2] = { NULL, NULL };
    int np = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--width") && v) g.w = atoi(argv[++i]);
        else if (!strcmp(a, "--height") && v) g.h = atoi(argv[++i]);
        else if (!strcmp(a, "--frames") && v) frames = atol(argv[++i]);
        else if (!strcmp(a, "--distinct") && v) g.distinct = atoi(argv[++i]);
        else if (a[0] != '-' && np < 2) paths[np++] = a;
        else {
            fprintf(stderr, "usage: qmetric-yuvgen --width W --height H --frames N "
                    "[--distinct D] REF.yuv DIS.yuv\n");
            return 2;
        }
    }
    if (g.w <= 0 || g.h <= 0 || frames <= 0 || g.distinct <= 0 || np != 2) {
        fprintf(stderr, "qmetric-yuvgen: --width, --height, --frames and two files needed\n");
        return 2;
    }
    if (g.distinct > frames)
        g.distinct = (int)frames;
    g.frame = (size_t)g.w * g.h + 2 * (size_t)((g.w + 1) / 2) * ((g.h + 1) / 2);
    g.ref = malloc(g.frame * g.distinct);
    g.dis = malloc(g.frame * g.distinct);
    if (!g.ref || !g.dis) {
        fprintf(stderr, "qmetric-yuvgen: out of memory\n");
        return 2;
    }
    pthread_mutex_init(&g.lock, NULL);
    long nt = sysconf(_SC_NPROCESSORS_ONLN);
    nt = nt < 1 ? 1 : nt > 64 ? 64 : nt;
    pthread_t th[64];
    int started = 0;
    for (long t = 0; t < nt; t++)
        started += !pthread_create(&th[started], NULL, worker, &g);
    worker(&g);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    if (write_cycled(paths[0], g.ref, g.frame, g.distinct, frames) ||
        write_cycled(paths[1], g.dis, g.frame, g.distinct, frames))
        return 1;
    free(g.ref);
    free(g.dis);
    return 0;
}
