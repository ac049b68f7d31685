/* gst-qmetric checkasm: the XPSNR twins (cpu/x86/xpsnr_*.c) against the C
 * stages of cpu/xpsnr.c, bit for bit.
 *
 * Stages: sse (a rectangle's squared error), hp and temp (a block's
 * spatial and temporal activity, samples), hpds and tempds (the same over
 * 2x2 groups).  Each plane holds exactly what the stage may read (the
 * rectangle and the rows and columns around it that xpsnr.h names), with
 * an inaccessible page right after its last sample or right before its
 * first: a twin reading outside faults.  The stride padding holds random
 * bytes, which would change the results if a twin used them.
 *
 * Samples: every bit depth's range (xpsnr.h: [0, 2^bpc), any int16_t at
 * 16 bits), random and worst cases (all 0, all max, alternating extremes,
 * isolated extremes that give the largest high-pass); widths from 1, odd
 * ones and those around a vector's; a large block of worst-case samples
 * per stage and lane width, so that the twins' 32-bit lane sums must be
 * moved to 64 bits in time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "checkasm.h"
#include "metric.h"
#include "xpsnr.h"

/* ---- planes: what a stage reads, between fault pages ---- */

typedef struct Plane {
    uint8_t *map;
    size_t map_len;
    uint8_t *org;  /* sample (0, 0) */
    ptrdiff_t stride;
    int es;        /* bytes per sample */
} Plane;

static void plane_fill(Plane *p, int w, int h, int hx, int hy, int bits, int pat);

/* A stride for planes whose readable rows are rw samples of es bytes:
 * some padding, large when big. */
static ptrdiff_t pick_stride(int rw, int es, int big)
{
    ptrdiff_t s = (ptrdiff_t)(rw + (int)(checkasm_rand() % 24)) * es;
    if (big)
        s += 16384 + 2 * (ptrdiff_t)(checkasm_rand() % 64);
    return s;
}

/* A plane whose samples (x, y), -hx <= x < w + hx, -hy <= y < h + hy are
 * readable (hx, hy: the halo), stride bytes apart (0: pick_stride()), with
 * a fault page after the last of them or before the first (at random).
 * Returns -1 (failure reported) when mmap fails. */
static int plane_new(Plane *p, int w, int h, int hx, int hy, int es, ptrdiff_t stride)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const int rw = w + 2 * hx, rh = h + 2 * hy;
    p->es = es;
    p->stride = stride ? stride : pick_stride(rw, es, 0);
    const size_t span = (size_t)p->stride * (size_t)(rh - 1) + (size_t)rw * (size_t)es;
    const size_t body = (span + page - 1) / page * page;
    p->map_len = body + 2 * page;
    p->map = mmap(NULL, p->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p->map == MAP_FAILED) {
        checkasm_fail("mmap failed");
        return -1;
    }
    if (mprotect(p->map, page, PROT_NONE) || mprotect(p->map + page + body, page, PROT_NONE)) {
        checkasm_fail("mprotect failed");
        munmap(p->map, p->map_len);
        return -1;
    }
    for (size_t i = 0; i < body; i++)
        p->map[page + i] = (uint8_t)checkasm_rand();
    uint8_t *first = p->map + page + (checkasm_rand() & 1 ? body - span : 0);
    p->org = first + hy * p->stride + hx * es;
    return 0;
}

static void plane_free(Plane *p)
{
    munmap(p->map, p->map_len);
}

/* Sample patterns (bits-bit values; at 16 bits the int16_t view of
 * a value v >= 2^15 is v - 2^16).  HIGH and LOW are the largest and the
 * smallest sample as the stages see it: max and 0 below 16 bits, the
 * int16_t extremes 2^15 - 1 and -2^15 at 16. */
enum {
    PAT_RANDOM, PAT_ZERO, PAT_MAX, PAT_CHECKER, PAT_FLAT_NOISE, PAT_GRADIENT,
    PAT_DOTS,       /* max on every third row and column, else 0 */
    PAT_DOTS_INV,   /* 0 there, else max */
    PAT_EXTREMES,   /* random 0, max, HIGH and LOW */
    PAT_HIGH, PAT_LOW,
    PAT_CHECKER_HL,   /* HIGH and LOW alternating */
    PAT_CHECKER2_HL,  /* 2x2 squares of HIGH and LOW alternating */
    PATTERNS
};

static uint32_t sample(int pat, int x, int y, int bits)
{
    const uint32_t max = (1u << bits) - 1;
    const uint32_t high = bits == 16 ? 0x7FFF : max, low = bits == 16 ? 0x8000 : 0;
    switch (pat) {
    case PAT_ZERO: return 0;
    case PAT_MAX: return max;
    case PAT_CHECKER: return ((x ^ y) & 1) ? max : 0;
    case PAT_FLAT_NOISE: return (max >> 1) - 3 + checkasm_rand() % 7;
    case PAT_GRADIENT: return (uint32_t)(((uint64_t)(x + 2 * y) * 37) & max);
    case PAT_DOTS: return (x % 3 == 0 && y % 3 == 0) ? max : 0;
    case PAT_DOTS_INV: return (x % 3 == 0 && y % 3 == 0) ? 0 : max;
    case PAT_EXTREMES: {
        const uint32_t r = checkasm_rand() % 4;
        return r == 0 ? 0 : r == 1 ? max : r == 2 ? high : low;
    }
    case PAT_HIGH: return high;
    case PAT_LOW: return low;
    case PAT_CHECKER_HL: return ((x ^ y) & 1) ? high : low;
    /* x, y from -2: shifted so that the squares are the 2x2 groups */
    case PAT_CHECKER2_HL: return (((x + 2) / 2 ^ (y + 2) / 2) & 1) ? high : low;
    default: return checkasm_rand() & max;
    }
}

/* samples (x, y) of the plane's readable area (halo hx, hy) */
static void plane_fill(Plane *p, int w, int h, int hx, int hy, int bits, int pat)
{
    for (int y = -hy; y < h + hy; y++) {
        uint8_t *row = p->org + y * p->stride;
        for (int x = -hx; x < w + hx; x++) {
            const uint32_t v = sample(pat, x, y, bits);
            if (p->es == 1)
                row[x] = (uint8_t)v;
            else
                ((uint16_t *)row)[x] = (uint16_t)v;
        }
    }
}

static int rnd_pat(void)
{
    return (int)(checkasm_rand() % PATTERNS);
}

/* widths: 1 up, around the vectors' 16 and 32 lanes, and block widths */
static int rnd_width(int it)
{
    static const int sizes[] = { 1, 2, 3, 5, 7, 8, 13, 15, 16, 17, 22, 31, 32, 33,
                                 44, 47, 63, 64, 65, 96, 100, 128, 129, 200 };
    const int n = (int)(sizeof(sizes) / sizeof(sizes[0]));
    return it < n ? sizes[it] : sizes[checkasm_rand() % n];
}

static int rnd_bits(void)
{
    static const int bits[] = { 8, 9, 10, 11, 12, 14, 15, 16 };
    return bits[checkasm_rand() % 8];
}

static void report(uint64_t c, uint64_t s, const char *what, int w, int h, int bits, int pat)
{
    if (c != s)
        checkasm_fail("%s %dx%d bits %d pattern %d: C %" PRIu64 " SIMD %" PRIu64, what, w, h,
                      bits, pat, c, s);
}

static void planes_free(Plane *p, int n)
{
    while (n-- > 0)
        plane_free(&p[n]);
}

/* n planes of w x h samples of es bytes (halo hx, hy) with bits-bit
 * patterns pat[i]; one stride for all when `shared` (a large one when
 * big), else one each.  0, or -1 (reported) with none left. */
static int planes_new(Plane *p, int n, int w, int h, int hx, int hy, int es, int bits,
                      const int *pat, int shared, int big)
{
    const ptrdiff_t common = pick_stride(w + 2 * hx, es, big);
    for (int i = 0; i < n; i++) {
        const ptrdiff_t st = shared || i == 0 ? common : 0;
        if (plane_new(&p[i], w, h, hx, hy, es, st)) {
            planes_free(p, i);
            return -1;
        }
        plane_fill(&p[i], w, h, hx, hy, bits, pat[i]);
    }
    return 0;
}

#define I16(pl) ((const int16_t *)(pl).org)

/* ---- the stages, one case each ---- */

static void sse_case(QmXpsnrSseFn fs, int w, int h, int bits, const int pat[2], int big)
{
    Plane p[2];
    if (planes_new(p, 2, w, h, 0, 0, bits == 8 ? 1 : 2, bits, pat, 0, big))
        return;
    report(qm_xpsnr_sse_c(p[0].org, p[0].stride, p[1].org, p[1].stride, w, h, bits),
           fs(p[0].org, p[0].stride, p[1].org, p[1].stride, w, h, bits), "sse", w, h, bits,
           pat[0] * PATTERNS + pat[1]);
    planes_free(p, 2);
}

static void hp_case(QmXpsnrHpFn fs, int w, int h, int bits, int pat, int big)
{
    Plane p;
    if (planes_new(&p, 1, w, h, 1, 1, 2, bits, &pat, 1, big))
        return;
    const ptrdiff_t st = p.stride / 2;
    report(qm_xpsnr_hp_c(I16(p), st, w, h, bits), fs(I16(p), st, w, h, bits), "hp", w, h, bits,
           pat);
    plane_free(&p);
}

static void temp_case(QmXpsnrTempFn fs, int w, int h, int bits, int second, const int pat[3],
                      int big)
{
    Plane p[3];
    if (planes_new(p, 3, w, h, 0, 0, 2, bits, pat, 1, big))
        return;
    const ptrdiff_t st = p[0].stride / 2;
    const int16_t *m2 = second ? I16(p[2]) : NULL;
    report(qm_xpsnr_temp_c(I16(p[0]), I16(p[1]), m2, st, w, h, bits),
           fs(I16(p[0]), I16(p[1]), m2, st, w, h, bits), second ? "temp (2nd order)" : "temp",
           w, h, bits, pat[0] * PATTERNS * PATTERNS + pat[1] * PATTERNS + pat[2]);
    planes_free(p, 3);
}

/* n x rows groups: 2n x 2 rows samples, two around them for the filter */
static void hpds_case(QmXpsnrHpdsFn fs, int n, int rows, int bits, int pat, int big)
{
    Plane p;
    if (planes_new(&p, 1, 2 * n, 2 * rows, 2, 2, 2, bits, &pat, 1, big))
        return;
    const ptrdiff_t st = p.stride / 2;
    report(qm_xpsnr_hpds_c(I16(p), st, n, rows), fs(I16(p), st, n, rows), "hpds groups", n,
           rows, bits, pat);
    plane_free(&p);
}

static void tempds_case(QmXpsnrTempdsFn fs, int n, int rows, int bits, int second,
                        const int pat[3], int big)
{
    Plane p[3];
    if (planes_new(p, 3, 2 * n, 2 * rows, 0, 0, 2, bits, pat, 1, big))
        return;
    const ptrdiff_t st = p[0].stride / 2;
    const int16_t *m2 = second ? I16(p[2]) : NULL;
    report(qm_xpsnr_tempds_c(I16(p[0]), I16(p[1]), m2, st, n, rows),
           fs(I16(p[0]), I16(p[1]), m2, st, n, rows),
           second ? "tempds groups (2nd order)" : "tempds groups", n, rows, bits,
           pat[0] * PATTERNS * PATTERNS + pat[1] * PATTERNS + pat[2]);
    planes_free(p, 3);
}

/* ---- the tests ---- */

static void rnd_pats(int *pat, int n)
{
    for (int i = 0; i < n; i++)
        pat[i] = rnd_pat();
}

static int rnd_height(void)
{
    return 1 + (int)(checkasm_rand() % 40);
}

static void test_sse(QmXpsnrSseFn fs)
{
    int pat[2];
    for (int it = 0; it < 500; it++) {
        rnd_pats(pat, 2);
        sse_case(fs, rnd_width(it), rnd_height(), rnd_bits(), pat, it % 5 == 4);
    }
    /* the largest squares, over more vectors than a 32-bit lane holds */
    static const int bits[] = { 8, 10, 15, 16 };
    static const int worst[2] = { PAT_MAX, PAT_ZERO };
    for (int i = 0; i < 4; i++)
        sse_case(fs, 1001 + 2 * i, 1100, bits[i], worst, 0);
}

static void test_hp(QmXpsnrHpFn fs)
{
    for (int it = 0; it < 500; it++)
        hp_case(fs, rnd_width(it), rnd_height(), rnd_bits(), rnd_pat(), it % 5 == 4);
    /* large terms over more vectors than a 32-bit lane holds: a
     * checkerboard gives every sample |term| = 8 max (the most on
     * average), isolated extremes 12 max */
    hp_case(fs, 2048, 2100, 11, PAT_CHECKER, 0);
    hp_case(fs, 301, 300, 11, PAT_DOTS_INV, 0);
    hp_case(fs, 600, 400, 16, PAT_CHECKER_HL, 0);
    hp_case(fs, 400, 300, 12, PAT_DOTS, 0);
}

static void test_temp(QmXpsnrTempFn fs)
{
    int pat[3];
    for (int it = 0; it < 500; it++) {
        rnd_pats(pat, 3);
        temp_case(fs, rnd_width(it), rnd_height(), rnd_bits(), it & 1, pat, it % 5 == 4);
    }
    /* the largest terms (c and m2 HIGH, m1 LOW) over more vectors than a
     * 32-bit lane holds */
    static const int worst[3] = { PAT_HIGH, PAT_LOW, PAT_HIGH };
    temp_case(fs, 1500, 1500, 14, 1, worst, 0);
    temp_case(fs, 600, 500, 16, 1, worst, 0);
    temp_case(fs, 601, 500, 16, 0, worst, 0);
}

static void test_hpds(QmXpsnrHpdsFn fs)
{
    for (int it = 0; it < 400; it++)
        hpds_case(fs, (rnd_width(it) + 1) / 2, 1 + (int)(checkasm_rand() % 20), rnd_bits(),
                  rnd_pat(), it % 5 == 4);
    /* large terms over more vectors than a 32-bit lane holds: groups of
     * HIGH surrounded by LOW */
    hpds_case(fs, 300, 300, 16, PAT_CHECKER2_HL, 0);
    hpds_case(fs, 301, 200, 16, PAT_CHECKER_HL, 0);
}

static void test_tempds(QmXpsnrTempdsFn fs)
{
    int pat[3];
    for (int it = 0; it < 400; it++) {
        rnd_pats(pat, 3);
        tempds_case(fs, (rnd_width(it) + 1) / 2, 1 + (int)(checkasm_rand() % 20), rnd_bits(),
                    it & 1, pat, it % 5 == 4);
    }
    static const int worst[3] = { PAT_HIGH, PAT_LOW, PAT_HIGH };
    tempds_case(fs, 600, 600, 16, 1, worst, 0);
}

/* ---- --bench: one frame's calls of each stage, C and SIMD ---- */

typedef struct BenchFrame {
    int w, h, bits, b;  /* picture, bit depth, block size */
    Plane pic[2];       /* ref and dist */
    Plane luma[3];      /* int16_t luma of frames i, i - 1, i - 2 */
} BenchFrame;

enum { B_SSE, B_HP, B_TEMP, B_HPDS, B_TEMPDS, B_STAGES };

/* The luma block calls of stage `stage` over a frame, as the metric makes
 * them (the SSE of the luma plane only). */
static uint64_t bench_frame(const QmXpsnrDsp *f, int stage, const BenchFrame *bf)
{
    const ptrdiff_t st = bf->luma[0].stride / 2;
    const int es = bf->bits == 8 ? 1 : 2;
    uint64_t sum = 0;
    for (int y0 = 0; y0 < bf->h; y0 += bf->b) {
        for (int x0 = 0; x0 < bf->w; x0 += bf->b) {
            const int bw = QM_MIN(bf->b, bf->w - x0), bh = QM_MIN(bf->b, bf->h - y0);
            const ptrdiff_t o = y0 * st + x0;
            const int16_t *c = I16(bf->luma[0]) + o, *m1 = I16(bf->luma[1]) + o;
            switch (stage) {
            case B_SSE:
                sum += f->sse(bf->pic[0].org + y0 * bf->pic[0].stride + x0 * es, bf->pic[0].stride,
                              bf->pic[1].org + y0 * bf->pic[1].stride + x0 * es, bf->pic[1].stride,
                              bw, bh, bf->bits);
                break;
            case B_HP: sum += f->hp(c, st, bw, bh, bf->bits); break;
            case B_TEMP: sum += f->temp(c, m1, NULL, st, bw, bh, bf->bits); break;
            case B_HPDS: sum += f->hpds(c, st, bw / 2, bh / 2); break;
            default: sum += f->tempds(c, m1, I16(bf->luma[2]) + o, st, bw / 2, bh / 2); break;
            }
        }
    }
    return sum;
}

static void bench_all(const QmXpsnrDsp *d, unsigned isa)
{
    static const char *const names[B_STAGES] = { "sse", "hp", "temp", "hpds", "tempds" };
    static const struct { int w, h, bits; } sz[] = { { 1920, 1080, 8 }, { 1920, 1080, 10 },
                                                      { 3840, 2160, 10 } };
    const int pat[3] = { PAT_RANDOM, PAT_RANDOM, PAT_RANDOM };
    QmXpsnrDsp c;
    qm_xpsnr_dsp_init(&c, 0);
    for (int i = 0; i < 3; i++) {
        BenchFrame bf;
        memset(&bf, 0, sizeof(bf));
        bf.w = sz[i].w;
        bf.h = sz[i].h;
        bf.bits = sz[i].bits;
        bf.b = bf.w / 30;  /* 64 at 1080p, 128 at 2160p */
        if (planes_new(bf.pic, 2, bf.w, bf.h, 0, 0, bf.bits == 8 ? 1 : 2, bf.bits, pat, 0, 0))
            return;
        if (planes_new(bf.luma, 3, bf.w, bf.h, 2, 2, 2, bf.bits, pat, 1, 0)) {
            planes_free(bf.pic, 2);
            return;
        }
        const int ds = bf.w * bf.h > 2048 * 1152;
        for (int stage = 0; stage < B_STAGES; stage++) {
            if (stage != B_SSE && (stage >= B_HPDS) != ds)
                continue;
            volatile uint64_t sink = 0;
            double tc, ts;
            BENCH_BEST(tc, sink += bench_frame(&c, stage, &bf));
            BENCH_BEST(ts, sink += bench_frame(d, stage, &bf));
            (void)sink;
            char name[48];
            snprintf(name, sizeof(name), "xpsnr_%s %dp %d-bit", names[stage], bf.h, bf.bits);
            checkasm_bench_report(name, isa, tc, ts);
        }
        planes_free(bf.luma, 3);
        planes_free(bf.pic, 2);
    }
}

void checkasm_xpsnr(void)
{
    static const unsigned isas[] = { QM_CPU_AVX2, QM_CPU_AVX512 };
    QmXpsnrDsp prev;
    qm_xpsnr_dsp_init(&prev, 0);
    for (unsigned i = 0; i < sizeof(isas) / sizeof(*isas); i++) {
        const unsigned isa = isas[i];
        if (!(checkasm_isas() & isa))
            continue;
        /* this level and the ones below it, as the metric would run */
        QmXpsnrDsp d;
        qm_xpsnr_dsp_init(&d, checkasm_isas() & (isa | (isa - 1)));
        if (d.sse != prev.sse && checkasm_begin("xpsnr_sse", isa)) {
            test_sse(d.sse);
            checkasm_end();
        }
        if (d.hp != prev.hp && checkasm_begin("xpsnr_hp", isa)) {
            test_hp(d.hp);
            checkasm_end();
        }
        if (d.temp != prev.temp && checkasm_begin("xpsnr_temp", isa)) {
            test_temp(d.temp);
            checkasm_end();
        }
        if (d.hpds != prev.hpds && checkasm_begin("xpsnr_hpds", isa)) {
            test_hpds(d.hpds);
            checkasm_end();
        }
        if (d.tempds != prev.tempds && checkasm_begin("xpsnr_tempds", isa)) {
            test_tempds(d.tempds);
            checkasm_end();
        }
        if (checkasm_bench() && d.sse != prev.sse)
            bench_all(&d, isa);
        prev = d;
    }
}
