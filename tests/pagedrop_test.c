/* tools/pagedrop.c: the pages of frames done with leave the page tables,
 * only below the oldest frame still in use, whatever the order frames are
 * told in; the file reads the same afterwards; the mapping's resident size
 * falls (read from /proc/self/smaps). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pagedrop.h"
#define QM_CHECK_OUT stderr
#include "unit.h"

#define FRAME ((size_t)3110400) /* 1080p 4:2:0: not a page multiple */
#define FRAMES 64

/* Resident kB of the mapping that starts at `base`, from smaps. */
static long rss_kb(const void *base)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    long kb = -1;
    int in = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = a == (unsigned long)base;
            continue;
        }
        if (in && sscanf(line, "Rss: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    return kb;
}

static unsigned long long sum(const unsigned char *p, size_t n)
{
    unsigned long long s = 0;
    for (size_t i = 0; i < n; i += 64)
        s = s * 31 + p[i];
    return s;
}

int main(void)
{
    char path[] = "/tmp/qmetric-pagedrop-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        return 1;
    }
    unlink(path);
    unsigned char *buf = malloc(FRAME);
    unsigned long long want = 0;
    for (int k = 0; k < FRAMES; k++) {
        for (size_t i = 0; i < FRAME; i++)
            buf[i] = (unsigned char)(k * 7 + i * 13 + (i >> 12));
        if (write(fd, buf, FRAME) != (ssize_t)FRAME) {
            perror("write");
            return 1;
        }
    }
    const size_t size = FRAME * FRAMES;
    const long page = sysconf(_SC_PAGESIZE);
    const unsigned char *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    want = sum(m, size);  /* touches every page */
    const long full = rss_kb(m);
    CHECK(full >= (long)(size / 1024) - 8, "the mapping is resident after a read: %ld kB", full);

    QmPageDrop *d = qm_pagedrop_new(m, size);
    CHECK(d, "a dropper");
    if (!d)
        return 1;

    /* frames 1..19 told, frame 0 not: nothing may go */
    for (int k = 19; k >= 1; k--)
        qm_pagedrop_done(d, (uint64_t)k, (k + 1) * FRAME);
    CHECK(qm_pagedrop_sync(d) == 0, "pages dropped before frame 0 was told: %zu",
          qm_pagedrop_sync(d));
    CHECK(rss_kb(m) == full, "resident %ld kB, %ld before", rss_kb(m), full);

    /* frame 0 told: frames 0..19 are done; whole pages below the end of
     * frame 19 go, the page frame 20 shares with it stays */
    qm_pagedrop_done(d, 0, FRAME);
    size_t got = qm_pagedrop_sync(d);
    size_t exp = (20 * FRAME) & ~(size_t)(page - 1);
    CHECK(got == exp, "dropped %zu bytes, expected %zu", got, exp);
    long rss = rss_kb(m);
    CHECK(rss >= 0 && rss <= full - (long)(exp / 1024), "resident %ld kB after dropping %zu kB of %ld",
          rss, exp / 1024, full);

    /* a frame told twice, and one far beyond the window, change nothing */
    qm_pagedrop_done(d, 5, 6 * FRAME);
    qm_pagedrop_done(d, 20 + QM_PAGEDROP_WINDOW, size);
    CHECK(qm_pagedrop_sync(d) == exp, "a repeat or a frame out of the window moved the drop");

    /* the rest, shuffled: everything goes (the file's end is a frame end) */
    int order[FRAMES - 20];
    for (int i = 0; i < FRAMES - 20; i++)
        order[i] = 20 + i;
    unsigned x = 12345;
    for (int i = FRAMES - 21; i > 0; i--) {
        x = x * 1103515245u + 12345u;
        int j = (int)((x >> 8) % (unsigned)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < FRAMES - 20; i++)
        qm_pagedrop_done(d, (uint64_t)order[i], (size_t)(order[i] + 1) * FRAME);
    got = qm_pagedrop_sync(d);
    CHECK(got == (size & ~(size_t)(page - 1)), "dropped %zu of %zu bytes", got, size);
    rss = rss_kb(m);
    CHECK(rss >= 0 && rss <= 8, "resident %ld kB after all frames were done", rss);

    /* dropping is never wrong: the file reads the same */
    CHECK(sum(m, size) == want, "the mapping reads differently after the drop");
    qm_pagedrop_free(d);

    /* a second dropper, freed while a batch may be under way */
    d = qm_pagedrop_new(m, size);
    for (int k = 0; k < FRAMES; k++)
        qm_pagedrop_done(d, (uint64_t)k, (size_t)(k + 1) * FRAME);
    qm_pagedrop_free(d);
    qm_pagedrop_free(NULL);
    qm_pagedrop_done(NULL, 0, 0);

    munmap((void *)m, size);
    close(fd);
    free(buf);
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    else
        printf("pagedrop: all checks passed\n");
    return failures ? 1 : 0;
}
