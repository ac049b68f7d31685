/* gst-qmetric: cuda/copypool.c, the staging copy shared by threads (no GPU
 * needed): every row of every run lands exactly once, with 1..8 threads,
 * runs of all shapes, many rounds in a row (the hand-over between rounds
 * is where a lost wake-up or a stale part would show). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copypool.h"

static uint32_t state = 20261122;

static uint32_t rnd(void)
{
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
}

int main(void)
{
    enum { SRC = 1 << 20, DST = 1 << 21 };
    uint8_t *src = malloc(SRC), *dst = malloc(DST), *want = malloc(DST);
    if (!src || !dst || !want)
        return 1;
    for (int i = 0; i < SRC; i++)
        src[i] = (uint8_t)rnd();
    int fails = 0;
    for (unsigned threads = 1; threads <= QM_COPY_MAX_THREADS + 1; threads++) {
        QmCopyPool cp;
        memset(&cp, 0, sizeof(cp));
        qm_copy_pool_start(&cp, threads);
        cp.min_bytes = 0;  /* every round through the threads */
        for (int round = 0; round < 300; round++) {
            QmCopyRun runs[6];
            const int n = 1 + rnd() % 6;
            size_t dpos = 0;
            for (int i = 0; i < n; i++) {
                QmCopyRun *r = &runs[i];
                r->row = 1 + rnd() % 300;
                r->rows = (int)(rnd() % 40);  /* empty runs too */
                r->spitch = (ptrdiff_t)(r->row + rnd() % 64);
                if (rnd() & 1 && r->rows) {    /* bottom-up source */
                    r->src = src + (size_t)(r->rows - 1) * (size_t)r->spitch;
                    r->spitch = -r->spitch;
                } else {
                    r->src = src;
                }
                r->dpitch = r->row + rnd() % 32;
                r->dst = dst + dpos;
                dpos += r->dpitch * (size_t)r->rows;
            }
            memset(dst, 0xcd, DST);
            memset(want, 0xcd, DST);
            for (int i = 0; i < n; i++)
                for (int y = 0; y < runs[i].rows; y++)
                    memcpy(want + (runs[i].dst - dst) + (size_t)y * runs[i].dpitch,
                           runs[i].src + (ptrdiff_t)y * runs[i].spitch, runs[i].row);
            qm_copy_run(&cp, runs, n);
            if (memcmp(dst, want, DST)) {
                if (fails++ < 5)
                    printf("FAIL: %u threads, round %d\n", threads, round);
            }
        }
        printf("%u threads: %u parts, ok\n", threads, cp.parts);
        qm_copy_pool_stop(&cp);
    }
    free(src);
    free(dst);
    free(want);
    return fails ? 1 : 0;
}
