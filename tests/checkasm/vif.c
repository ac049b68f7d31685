/* gst-qmetric checkasm: the VIF twins (cpu/x86/vif_*.c) against the C
 * stages of cpu/vif.c, bit for bit.
 *
 * Stages: terms (the per-pixel VIF terms of rows of statistics), stat (one
 * scale's four sums) and decimate (low-pass + 2:1).  Pictures are placed so
 * that the last sample of their last row is the last byte before an
 * inaccessible page: a twin reading past a row's width there faults.  The
 * stride padding of the other rows holds random bytes, which would change
 * the results if a twin used them.  Decimated outputs sit between guard
 * values that must survive.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "checkasm.h"
#include "vif.h"

/* ---- pictures with a fault page after the last row ---- */

typedef struct Pic {
    uint8_t *map;
    size_t map_len;
    uint8_t *data;  /* row 0 */
    ptrdiff_t stride;
} Pic;

static int pic_alloc(Pic *p, int w, int h, int bps, ptrdiff_t stride)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t bytes = (size_t)stride * (size_t)(h - 1) + (size_t)w * bps;
    const size_t body = (bytes + page - 1) / page * page;
    p->map_len = body + page;
    p->map = mmap(NULL, p->map_len, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p->map == MAP_FAILED)
        return -1;
    if (mprotect(p->map + body, page, PROT_NONE)) {
        munmap(p->map, p->map_len);
        return -1;
    }
    p->data = p->map + body - bytes;
    p->stride = stride;
    /* random bytes everywhere, stride padding included */
    for (size_t i = 0; i < body; i++)
        p->map[i] = (uint8_t)checkasm_rand();
    return 0;
}

static void pic_free(Pic *p)
{
    munmap(p->map, p->map_len);
}

/* dis as a distorted copy of ref: ref plus noise within +-amp, clamped */
static void pic_distort(const Pic *ref, Pic *dis, int w, int h, int bits, int amp)
{
    const int max = (1 << bits) - 1;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            int v;
            if (bits == 8)
                v = ref->data[y * ref->stride + x];
            else
                v = ((const uint16_t *)(ref->data + y * ref->stride))[x];
            v += (int)(checkasm_rand() % (2 * amp + 1)) - amp;
            v = v < 0 ? 0 : v > max ? max : v;
            if (bits == 8)
                dis->data[y * dis->stride + x] = (uint8_t)v;
            else
                ((uint16_t *)(dis->data + y * dis->stride))[x] = (uint16_t)v;
        }
    }
}

/* The picture pair of case `pat`: ref from pattern pat % PATTERNS, dis a
 * noisy copy (odd cases) or an independent pattern. */
static void fill_pair(Pic *ref, Pic *dis, int w, int h, int bits, int pat)
{
    checkasm_fill(ref->data, ref->stride, w, h, bits, pat % CHECKASM_PATTERNS);
    if (pat & 1) {
        const int amp = 1 + (int)(checkasm_rand() % ((1u << (bits - 4)) + 1));
        pic_distort(ref, dis, w, h, bits, amp);
    } else {
        checkasm_fill(dis->data, dis->stride, w, h, bits,
                      (pat / 2 + 1) % CHECKASM_PATTERNS);
    }
}

static ptrdiff_t pick_stride(int w, int bps, int big)
{
    ptrdiff_t s = (ptrdiff_t)w * bps + (ptrdiff_t)(checkasm_rand() % 40) * bps;
    if (big)
        s += 8192 + 2 * (ptrdiff_t)(checkasm_rand() % 64);
    return s;
}

/* The pair of case `pat` in fresh pictures (every fifth case with a large
 * reference stride); -1 after a failure is reported. */
static int make_pair(Pic *ref, Pic *dis, int w, int h, int bits, int pat)
{
    const int bps = bits == 8 ? 1 : 2, big = (pat % 5) == 4;
    if (pic_alloc(ref, w, h, bps, pick_stride(w, bps, big)) ||
        pic_alloc(dis, w, h, bps, pick_stride(w, bps, 0))) {
        checkasm_fail("mmap failed");
        return -1;
    }
    fill_pair(ref, dis, w, h, bits, pat);
    return 0;
}

static void params_init(QmVifParams *p, const uint16_t *tab, double egl)
{
    p->enhn_gain_limit = egl;
    p->log2_tab = tab;
}

static int accum_eq(const QmVifAccum *a, const QmVifAccum *b)
{
    return a->num_log == b->num_log && a->den_log == b->den_log &&
           a->num_non_log == b->num_non_log && a->den_non_log == b->den_non_log;
}

/* ---- terms ---- */

static int32_t rand_i32(void) { return (int32_t)checkasm_rand(); }

/* statistics of kind `kind` for one pixel */
static void make_stats(int kind, int32_t *s11, int32_t *s22, int32_t *s12, double egl)
{
    static const int32_t edge11[] = { 0, -1, INT32_MIN, (2 << 16) - 1, 2 << 16,
                                      (2 << 16) + 1, INT32_MAX, INT32_MAX - (2 << 16),
                                      1 << 30, 3 << 20 };
    static const int32_t edge22[] = { 0, 1, 2, INT32_MAX, 1 << 17, 12345678 };
    switch (kind) {
    case 0:  /* anything (s22 >= 0) */
        *s11 = rand_i32();
        *s22 = (int32_t)(checkasm_rand() >> 1);
        *s12 = rand_i32();
        break;
    case 1: {  /* plausible statistics of a picture */
        const int sh = (int)(checkasm_rand() % 28);
        *s11 = (int32_t)(checkasm_rand() >> (4 + sh % 28));
        *s22 = (int32_t)(checkasm_rand() >> (4 + (int)(checkasm_rand() % 28)));
        const int32_t lim = *s11 > 1 ? *s11 : 2;
        *s12 = (int32_t)(checkasm_rand() % (2u * (uint32_t)lim)) - lim;
        break;
    }
    case 2:  /* edge values */
        *s11 = edge11[checkasm_rand() % (sizeof(edge11) / sizeof(*edge11))];
        *s22 = edge22[checkasm_rand() % (sizeof(edge22) / sizeof(*edge22))];
        *s12 = (int32_t[]){ 0, 1, -1, INT32_MAX, INT32_MIN, *s11, *s22 }[checkasm_rand() % 7];
        break;
    case 3: {  /* sv^2 near 1: s22 ~ g s12 with g ~ 1 */
        const int32_t v = (2 << 16) + (int32_t)(checkasm_rand() % (1u << 30));
        *s11 = v;
        *s12 = v - (int32_t)(checkasm_rand() % 3);
        *s22 = *s12 + (int32_t)(checkasm_rand() % 4);
        break;
    }
    default: {  /* g near the gain limit */
        const int32_t v = (2 << 16) + (int32_t)(checkasm_rand() % (1u << 24));
        const double t = egl * v + (double)((int)(checkasm_rand() % 5) - 2);
        *s11 = v;
        *s12 = t > INT32_MAX ? INT32_MAX : (int32_t)t;
        *s22 = (int32_t)(checkasm_rand() >> 1);
        break;
    }
    }
}

/* Every log2 table index through the denominator term: x = s11 + 2^17
 * with 16 leading bits i (each i from 2^15 to 2^16 - 1) and random bits
 * below; a twin that computes the entries instead of reading them must
 * agree with the table at every one (the numerator terms reach the same
 * computation with random values). */
static void test_terms_every_index(QmVifTermsFn twin, const uint16_t *tab)
{
    enum { N = 1 << 15 };
    int32_t *s11 = malloc(N * sizeof(int32_t)), *s22 = malloc(N * sizeof(int32_t));
    int32_t *s12 = malloc(N * sizeof(int32_t));
    QmVifParams p;
    params_init(&p, tab, 100.0);
    for (int k = 3; k <= 15; k++) {
        for (int i = 0; i < N; i++) {
            const uint32_t low = checkasm_rand() & ((1u << k) - 1);
            s11[i] = (int32_t)((((uint32_t)N + (uint32_t)i) << k | low) - (2u << 16));
            make_stats(1, &(int32_t){ 0 }, &s22[i], &s12[i], 100.0);
        }
        for (int at = 0; at < N; at += 512) {
            QmVifAccum a = { 0 }, b = { 0 };
            qm_vif_terms_cpu(s11 + at, s22 + at, s12 + at, 512, &p, &a);
            twin(s11 + at, s22 + at, s12 + at, 512, &p, &b);
            if (!accum_eq(&a, &b))
                checkasm_fail("every index, shift %d, indices %d..%d: C den %lld num %lld, "
                              "twin den %lld num %lld", k, N + at, N + at + 511,
                              (long long)a.den_log, (long long)a.num_log,
                              (long long)b.den_log, (long long)b.num_log);
        }
    }
    free(s11);
    free(s22);
    free(s12);
}

static void test_terms(QmVifTermsFn twin, const uint16_t *tab)
{
    enum { MAXN = 4099 };
    static int32_t s11[MAXN], s22[MAXN], s12[MAXN];
    test_terms_every_index(twin, tab);
    static const int ns[] = { 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 577, 1920, MAXN };
    static const double egls[] = { 100.0, 1.0, 1.5, 37.25 };
    for (int e = 0; e < 4; e++) {
        QmVifParams p;
        params_init(&p, tab, egls[e]);
        for (int kind = 0; kind <= 5; kind++) {
            for (unsigned t = 0; t < sizeof(ns) / sizeof(*ns); t++) {
                const int n = ns[t];
                for (int i = 0; i < n; i++)
                    make_stats(kind == 5 ? (int)(checkasm_rand() % 5) : kind,
                               &s11[i], &s22[i], &s12[i], egls[e]);
                QmVifAccum a = { 0 }, b = { 0 };
                qm_vif_terms_cpu(s11, s22, s12, n, &p, &a);
                twin(s11, s22, s12, n, &p, &b);
                if (!accum_eq(&a, &b)) {
                    checkasm_fail("egl %g kind %d n %d: C %lld %lld %lld %lld, twin "
                                  "%lld %lld %lld %lld", egls[e], kind, n,
                                  (long long)a.num_log, (long long)a.den_log,
                                  (long long)a.num_non_log, (long long)a.den_non_log,
                                  (long long)b.num_log, (long long)b.den_log,
                                  (long long)b.num_non_log, (long long)b.den_non_log);
                }
            }
        }
    }
}

/* ---- stat and decimate ---- */

typedef struct Size { int w, h; } Size;

/* from 1 x 1 up; the engine's smallest picture (16 x 16) gives scale 3 a
 * 2 x 2 picture */
static const Size sizes[] = {
    { 1, 1 }, { 2, 2 }, { 3, 5 }, { 5, 3 }, { 7, 9 }, { 8, 8 }, { 15, 17 },
    { 16, 16 }, { 17, 2 }, { 31, 33 }, { 32, 7 }, { 33, 31 }, { 47, 4 },
    { 64, 11 }, { 65, 19 }, { 100, 3 }, { 127, 6 }, { 129, 18 }, { 577, 5 },
    { 1920, 3 },
};

static void test_stat(QmVifStatFn twin, const uint16_t *tab)
{
    static const int depth[] = { 8, 9, 10, 12, 15, 16 };
    for (unsigned si = 0; si < sizeof(sizes) / sizeof(*sizes); si++) {
        const int w = sizes[si].w, h = sizes[si].h;
        void *scratch = malloc(qm_vif_scratch_size(w));
        for (int di = 0; di < (int)(sizeof(depth) / sizeof(*depth)); di++) {
            const int bits = depth[di];
            for (int scale = 0; scale < QM_VIF_SCALES; scale++) {
                for (int pat = 0; pat < 2 * CHECKASM_PATTERNS; pat++) {
                    Pic ref, dis;
                    if (make_pair(&ref, &dis, w, h, bits, pat))
                        return;
                    QmVifParams p;
                    params_init(&p, tab, pat % 3 == 2 ? 1.0 : 100.0);
                    QmVifAccum a = { 0 }, b = { 0 };
                    qm_vif_stat_cpu(ref.data, ref.stride, dis.data, dis.stride, w, h,
                                    bits, scale, &p, scratch, &a);
                    twin(ref.data, ref.stride, dis.data, dis.stride, w, h, bits, scale,
                         &p, scratch, &b);
                    if (!accum_eq(&a, &b))
                        checkasm_fail("%dx%d %d-bit scale %d pattern %d: C %lld %lld %lld "
                                      "%lld, twin %lld %lld %lld %lld", w, h, bits, scale,
                                      pat, (long long)a.num_log, (long long)a.den_log,
                                      (long long)a.num_non_log, (long long)a.den_non_log,
                                      (long long)b.num_log, (long long)b.den_log,
                                      (long long)b.num_non_log, (long long)b.den_non_log);
                    pic_free(&ref);
                    pic_free(&dis);
                }
            }
        }
        free(scratch);
    }
}

#define GUARD 0xA5C3u
enum { GUARD_ROWS = 2, GUARD_COLS = 9 };

static void test_decimate(QmVifDecimateFn twin)
{
    static const int depth[] = { 8, 9, 10, 12, 15, 16 };
    for (unsigned si = 0; si < sizeof(sizes) / sizeof(*sizes); si++) {
        const int w = sizes[si].w, h = sizes[si].h, wo = w / 2, ho = h / 2;
        void *scratch = malloc(qm_vif_scratch_size(w));
        /* rows of wo outputs, GUARD_COLS guards after each, GUARD_ROWS rows
         * of guards before and after */
        const ptrdiff_t ostride = wo + GUARD_COLS;
        const size_t olen = (size_t)ostride * (size_t)(ho + 2 * GUARD_ROWS);
        uint16_t *out[4];
        for (int i = 0; i < 4; i++)
            out[i] = malloc(olen * sizeof(uint16_t));
        for (int di = 0; di < (int)(sizeof(depth) / sizeof(*depth)); di++) {
            const int bits = depth[di];
            for (int scale = 0; scale < QM_VIF_SCALES - 1; scale++) {
                for (int pat = 0; pat < 2 * CHECKASM_PATTERNS; pat++) {
                    Pic ref, dis;
                    if (make_pair(&ref, &dis, w, h, bits, pat))
                        return;
                    for (int i = 0; i < 4; i++)
                        for (size_t k = 0; k < olen; k++)
                            out[i][k] = GUARD;
                    const ptrdiff_t first = GUARD_ROWS * ostride;
                    qm_vif_decimate_cpu(ref.data, ref.stride, dis.data, dis.stride, w, h,
                                        bits, scale, out[0] + first, out[1] + first,
                                        ostride * (ptrdiff_t)sizeof(uint16_t), scratch);
                    twin(ref.data, ref.stride, dis.data, dis.stride, w, h, bits, scale,
                         out[2] + first, out[3] + first,
                         ostride * (ptrdiff_t)sizeof(uint16_t), scratch);
                    for (int pl = 0; pl < 2; pl++) {
                        for (size_t k = 0; k < olen; k++) {
                            const ptrdiff_t row = (ptrdiff_t)k / ostride - GUARD_ROWS;
                            const ptrdiff_t col = (ptrdiff_t)k % ostride;
                            const int inside = row >= 0 && row < ho && col < wo;
                            if (out[pl][k] != out[pl + 2][k] ||
                                (!inside && out[pl + 2][k] != GUARD)) {
                                checkasm_fail("%dx%d %d-bit scale %d pattern %d %s: row %td "
                                              "col %td: C %u twin %u%s", w, h, bits, scale,
                                              pat, pl ? "dis" : "ref", row, col,
                                              out[pl][k], out[pl + 2][k],
                                              inside ? "" : " (guard)");
                                break;
                            }
                        }
                    }
                    pic_free(&ref);
                    pic_free(&dis);
                }
            }
        }
        for (int i = 0; i < 4; i++)
            free(out[i]);
        free(scratch);
    }
}

/* ---- benchmarks (--bench): one 1920 x 1080 picture ---- */

typedef void (*BenchFn)(void *ctx, int c_or_twin);

static double bench_time(BenchFn fn, void *ctx, int which)
{
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        const double t0 = checkasm_now();
        fn(ctx, which);
        const double t = checkasm_now() - t0;
        best = t < best ? t : best;
    }
    return best;
}

typedef struct BenchCtx {
    const QmVifDsp *twin;
    Pic ref, dis;
    int w, h, bits, scale;
    QmVifParams p;
    void *scratch;
    uint16_t *o1, *o2;
    int32_t *s11, *s22, *s12;
} BenchCtx;

static void bench_stat(void *v, int which)
{
    BenchCtx *b = v;
    QmVifAccum a = { 0 };
    (which ? b->twin->stat : qm_vif_stat_cpu)(b->ref.data, b->ref.stride, b->dis.data,
        b->dis.stride, b->w, b->h, b->bits, b->scale, &b->p, b->scratch, &a);
}

static void bench_decimate(void *v, int which)
{
    BenchCtx *b = v;
    (which ? b->twin->decimate : qm_vif_decimate_cpu)(b->ref.data, b->ref.stride,
        b->dis.data, b->dis.stride, b->w, b->h, b->bits, b->scale, b->o1, b->o2,
        (b->w / 2) * (ptrdiff_t)sizeof(uint16_t), b->scratch);
}

static void bench_terms(void *v, int which)
{
    BenchCtx *b = v;
    QmVifAccum a = { 0 };
    for (int i = 0; i < b->h; i++)
        (which ? b->twin->terms : qm_vif_terms_cpu)(b->s11, b->s22, b->s12, b->w, &b->p, &a);
}

static void run_bench(const char *name, unsigned isa, BenchFn fn, BenchCtx *b)
{
    const double c = bench_time(fn, b, 0), t = bench_time(fn, b, 1);
    checkasm_bench_report(name, isa, c, t);
}

/* Something like video for the timings (the C terms take a short path on
 * flat pictures): a gradient with texture, and a noisy copy of it.  At 16
 * bits the values stay below 255 * 256, as in the decimated scales. */
static void bench_picture(Pic *ref, Pic *dis, int w, int h, int bits)
{
    const int max = bits == 16 ? 255 * 256 : (1 << bits) - 1;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            int v = (int)((int64_t)(x + y) * max / (w + h));
            v += (int)(checkasm_rand() % (unsigned)(max / 8 + 1)) - max / 16;
            v = v < 0 ? 0 : v > max ? max : v;
            int u = v + (int)(checkasm_rand() % (unsigned)(max / 32 + 1)) - max / 64;
            u = u < 0 ? 0 : u > max ? max : u;
            if (bits == 8) {
                ref->data[y * ref->stride + x] = (uint8_t)v;
                dis->data[y * dis->stride + x] = (uint8_t)u;
            } else {
                ((uint16_t *)(ref->data + y * ref->stride))[x] = (uint16_t)v;
                ((uint16_t *)(dis->data + y * dis->stride))[x] = (uint16_t)u;
            }
        }
    }
}

static void bench_all(const QmVifDsp *twin, unsigned isa, const uint16_t *tab)
{
    BenchCtx b;
    memset(&b, 0, sizeof(b));
    b.twin = twin;
    params_init(&b.p, tab, 100.0);
    b.scratch = malloc(qm_vif_scratch_size(1920));
    b.o1 = malloc(960 * 540 * sizeof(uint16_t));
    b.o2 = malloc(960 * 540 * sizeof(uint16_t));
    static const struct { int w, h, bits, scale; const char *stat, *dec; } cfg[] = {
        { 1920, 1080, 8, 0, "vif_stat 1080p 8-bit s0", "vif_decimate 1080p 8-bit" },
        { 1920, 1080, 10, 0, "vif_stat 1080p 10-bit s0", "vif_decimate 1080p 10-bit" },
        { 960, 540, 16, 1, "vif_stat 540p 16-bit s1", "vif_decimate 540p 16-bit" },
    };
    for (int i = 0; i < 3; i++) {
        b.w = cfg[i].w;
        b.h = cfg[i].h;
        b.bits = cfg[i].bits;
        b.scale = cfg[i].scale;
        const int bps = b.bits == 8 ? 1 : 2;
        if (pic_alloc(&b.ref, b.w, b.h, bps, (ptrdiff_t)b.w * bps) ||
            pic_alloc(&b.dis, b.w, b.h, bps, (ptrdiff_t)b.w * bps))
            return;
        bench_picture(&b.ref, &b.dis, b.w, b.h, b.bits);
        run_bench(cfg[i].stat, isa, bench_stat, &b);
        run_bench(cfg[i].dec, isa, bench_decimate, &b);
        pic_free(&b.ref);
        pic_free(&b.dis);
    }
    b.w = 1920;
    b.h = 1080;
    b.s11 = malloc(1920 * sizeof(int32_t));
    b.s22 = malloc(1920 * sizeof(int32_t));
    b.s12 = malloc(1920 * sizeof(int32_t));
    /* textured: sigma1^2 above sigma_n^2, covariances mostly positive */
    for (int i = 0; i < 1920; i++) {
        b.s11[i] = (2 << 16) + (int32_t)(checkasm_rand() % (1u << 24));
        b.s12[i] = (int32_t)(checkasm_rand() % (uint32_t)b.s11[i]) - b.s11[i] / 4;
        b.s22[i] = (int32_t)(checkasm_rand() % (1u << 24));
    }
    run_bench("vif_terms 1080p", isa, bench_terms, &b);
    free(b.s11);
    free(b.s22);
    free(b.s12);
    free(b.o1);
    free(b.o2);
    free(b.scratch);
}

void checkasm_vif(void)
{
    uint16_t *tab = malloc(QM_VIF_LOG2_TABLE_SIZE * sizeof(uint16_t));
    qm_vif_log2_table(tab);
    static const unsigned isas[] = { QM_CPU_AVX2, QM_CPU_AVX512 };
    QmVifDsp prev;
    qm_vif_dsp_init(&prev, 0);
    for (unsigned i = 0; i < sizeof(isas) / sizeof(*isas); i++) {
        const unsigned isa = isas[i];
        if (!(checkasm_isas() & isa))
            continue;
        /* this level and the ones below it, as the engine would run */
        QmVifDsp d;
        qm_vif_dsp_init(&d, checkasm_isas() & (isa | (isa - 1)));
        if (d.terms != prev.terms && checkasm_begin("vif_terms", isa)) {
            test_terms(d.terms, tab);
            checkasm_end();
        }
        if (d.stat != prev.stat && checkasm_begin("vif_stat", isa)) {
            test_stat(d.stat, tab);
            checkasm_end();
        }
        if (d.decimate != prev.decimate && checkasm_begin("vif_decimate", isa)) {
            test_decimate(d.decimate);
            checkasm_end();
        }
        if (checkasm_bench() && d.stat != prev.stat)
            bench_all(&d, isa, tab);
        prev = d;
    }
    free(tab);
}
