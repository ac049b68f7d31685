/* gst-qmetric: checkasm tests of the ADM row kernels' SIMD twins
 * (cpu/x86/adm_*.c) against the C kernels (cpu/adm.c), bit for bit, and of
 * the engine's fused row pass against the plane stages.
 *
 * Inputs cover each kernel's domain: scale 0 bands within
 * +-QM_ADM_BAND0_MAX (the DWT's bound), scales 1-3 any int32 for the DWT
 * and the denominator, realistic and extreme values elsewhere; patterns
 * that make the angle test and the gain limit bite (dis a multiple of ref,
 * dis = ref, dis = -ref); widths from the smallest band (3) up, odd ones,
 * and column ranges that start and end anywhere.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adm.h"
#include "checkasm.h"
#include "metric.h"

#define GUARD 16
#define CANARY 0x5a5aa5a5

enum { V0 = 0, V123 = 1 }; /* QmAdmDsp variant: scale 0, scales 1-3 */

static const QmAdmParams WATSON = { 0, 3.0, 1080 };
/* Barten weights exceed 1 and wrap as the reference's conversions do */
static const QmAdmParams BARTEN = { 1, 3.0, 1080 };
static const QmAdmParams BLEND = { 2, 5.0, 1080 };

static const QmAdmParams *pick_params(void)
{
    switch (checkasm_rand() % 4) {
    case 0: return &BARTEN;
    case 1: return &BLEND;
    default: return &WATSON;
    }
}

static int32_t rnd_range(int32_t lo, int32_t hi)
{
    return (int32_t)(lo + (int64_t)(checkasm_rand() % (uint32_t)((int64_t)hi - lo + 1)));
}

static int32_t rnd_i32(void)
{
    return (int32_t)checkasm_rand();
}

/* A band row value for variant v and pattern p (0 random, 1 zero, 2 max,
 * 3 alternating extremes, 4 small, 5 mixed magnitudes). */
static int32_t band_value(int v, int p, int j)
{
    const int32_t mx = v == V0 ? QM_ADM_BAND0_MAX : INT32_MAX;
    switch (p) {
    case 1: return 0;
    case 2: return checkasm_rand() & 1 ? mx : -mx;
    case 3: return j & 1 ? mx : (v == V0 ? -mx : INT32_MIN);
    case 4: return rnd_range(-3, 3);
    case 5: {
        const int bits = (int)(checkasm_rand() % (v == V0 ? 15 : 32));
        const int32_t m = bits >= 31 ? INT32_MAX : (int32_t)((1u << bits) - 1);
        const int32_t x = rnd_range(-m, m);
        return v == V0 && (x > mx || x < -mx) ? x / 2 : x;
    }
    default: return v == V0 ? rnd_range(-mx, mx) : rnd_i32();
    }
}

/* Row buffers with guards: p[-GUARD .. n + GUARD). */
typedef struct Row {
    int32_t *base, *p;
    int n;
} Row;

static Row row_new(int n)
{
    Row r;
    r.n = n;
    r.base = malloc((size_t)(n + 2 * GUARD) * sizeof(int32_t));
    r.p = r.base + GUARD;
    for (int i = 0; i < n + 2 * GUARD; i++)
        r.base[i] = CANARY;
    return r;
}

static void row_free(Row *r)
{
    free(r->base);
}

/* Compares two output rows including their guards. */
static int row_cmp(const char *what, const Row *c, const Row *s)
{
    for (int i = -GUARD; i < c->n + GUARD; i++) {
        if (c->p[i] != s->p[i]) {
            checkasm_fail("%s[%d]: C %" PRId32 " SIMD %" PRId32 " (row of %d)", what, i,
                          c->p[i], s->p[i], c->n);
            return 1;
        }
    }
    return 0;
}

/* A scale recipe whose bands are w x h (DWT input 2w or 2w - 1 wide);
 * fails (skip the case) below the smallest band of that scale, which
 * QM_ADM_MIN_SIZE implies: ceil(33 / 2^(scale + 1)) (the recipe's shifts
 * are the reference's, defined for those sizes only). */
static int make_q(QmAdmScaleQ *q, int scale, int w, int h, int bpc)
{
    const int min = (QM_ADM_MIN_SIZE + (2 << scale) - 1) / (2 << scale);
    if (w < min || h < min)
        return -1;
    const int in_w = 2 * w - (int)(checkasm_rand() & 1);
    const int in_h = 2 * h - (int)(checkasm_rand() & 1);
    return qm_adm_scale_setup(q, scale, in_w, in_h, bpc, pick_params());
}

static int rnd_width(void)
{
    static const int sizes[] = { 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 100, 129, 288, 481, 960 };
    return sizes[checkasm_rand() % (sizeof(sizes) / sizeof(sizes[0]))];
}

/* ------------------------------------------------------------------------ */

static void test_dwt(const char *name, QmAdmDwtRowFn fc, QmAdmDwtRowFn fs, int v, unsigned isa)
{
    if (!checkasm_begin(name, isa))
        return;
    static const int bpcs[] = { 8, 9, 10, 12, 16 };
    for (int it = 0; it < 400; it++) {
        const int in_w = it < 20 ? QM_ADM_MIN_SIZE + it : 5 + (int)(checkasm_rand() % 1990);
        const int bpc = bpcs[checkasm_rand() % 5];
        const int pat = (int)(checkasm_rand() % CHECKASM_PATTERNS);
        QmAdmScaleQ q;
        if (qm_adm_scale_setup(&q, v == V0 ? 0 : 1 + (int)(checkasm_rand() % 3), in_w, 40, bpc, &WATSON))
            continue;
        const size_t es = v == V0 ? (bpc == 8 ? 1 : 2) : 4;
        void *in[4];
        const void *src[4];
        for (int k = 0; k < 4; k++) {
            in[k] = malloc((size_t)in_w * es);
            if (v == V0) {
                checkasm_fill(in[k], (ptrdiff_t)(in_w * es), in_w, 1, bpc, pat);
            } else {
                int32_t *p = in[k];
                const int bp = (int)(checkasm_rand() % 6);
                for (int j = 0; j < in_w; j++)
                    p[j] = band_value(V123, bp, j);
            }
            src[k] = in[k];
        }
        Row bc[4], bs[4];
        int32_t *oc[4], *os[4];
        for (int b = 0; b < 4; b++) {
            bc[b] = row_new(q.w);
            bs[b] = row_new(q.w);
            oc[b] = bc[b].p;
            os[b] = bs[b].p;
        }
        int32_t *tc = malloc(4 * (size_t)in_w * sizeof(int32_t));
        int32_t *ts = malloc(4 * (size_t)in_w * sizeof(int32_t));
        fc(src, bpc, &q, oc, tc);
        fs(src, bpc, &q, os, ts);
        static const char *const names[4] = { "a", "h", "v", "d" };
        int bad = 0;
        for (int b = 0; b < 4 && !bad; b++)
            bad = row_cmp(names[b], &bc[b], &bs[b]);
        if (bad)
            checkasm_fail("  in_w %d bpc %d pattern %d scale %d", in_w, bpc, pat, q.scale);
        for (int b = 0; b < 4; b++) {
            row_free(&bc[b]);
            row_free(&bs[b]);
        }
        for (int k = 0; k < 4; k++)
            free(in[k]);
        free(tc);
        free(ts);
    }
    if (checkasm_bench()) {
        QmAdmScaleQ q;
        const int scale = v == V0 ? 0 : 1;
        const int W = v == V0 ? 1920 : 960, H = v == V0 ? 1080 : 540;
        qm_adm_scale_setup(&q, scale, W, H, 8, &WATSON);
        const size_t es = v == V0 ? 1 : 4;
        uint8_t *in = malloc((size_t)W * 4 * es);
        for (size_t i = 0; i < (size_t)W * 4 * es; i++)
            in[i] = (uint8_t)checkasm_rand();
        const void *src[4] = { in, in + W * es, in + 2 * W * es, in + 3 * W * es };
        int32_t *out = malloc(4 * (size_t)q.w * sizeof(int32_t));
        int32_t *const o[4] = { out, out + q.w, out + 2 * q.w, out + 3 * q.w };
        int32_t *tmp = malloc(4 * (size_t)W * sizeof(int32_t));
        double t[2];
        for (int f = 0; f < 2; f++) {
            const QmAdmDwtRowFn fn = f ? fs : fc;
            BENCH_BEST(t[f], for (int i = 0; i < q.h; i++) fn(src, 8, &q, o, tmp));
        }
        checkasm_bench_report(name, isa, t[0], t[1]);
        free(in);
        free(out);
        free(tmp);
    }
    checkasm_end();
}

/* ------------------------------------------------------------------------ */

/* ref/dis detail rows of one decouple test case: patterns for ref, and dis
 * drawn from ref (scaled, equal, negated, perturbed) or independently. */
static void fill_decouple(int v, int w, int32_t *ref[3], int32_t *dis[3])
{
    const int rp = (int)(checkasm_rand() % 6);
    const int dp = (int)(checkasm_rand() % 9);
    const int32_t mx = v == V0 ? QM_ADM_BAND0_MAX : INT32_MAX;
    for (int b = 0; b < 3; b++) {
        for (int j = 0; j < w; j++) {
            const int32_t o = band_value(v, rp, j);
            int64_t t;
            switch (dp) {
            case 0: t = o; break;
            case 1: t = -(int64_t)o; break;
            case 2: t = (int64_t)o * rnd_range(0, 300) / 100; break;
            case 3: t = (int64_t)o + rnd_range(-4, 4); break;
            case 4: t = (int64_t)o * rnd_range(95, 105) / 100 + rnd_range(-2, 2); break;
            case 5: t = checkasm_rand() % 8 ? o : band_value(v, 0, j); break;
            default: t = band_value(v, (int)(checkasm_rand() % 6), j); break;
            }
            if (t > mx)
                t = mx;
            if (t < -(int64_t)mx - (v == V0 ? 0 : 1))
                t = -(int64_t)mx - (v == V0 ? 0 : 1);
            ref[b][j] = o;
            dis[b][j] = (int32_t)t;
        }
    }
}

static void test_decouple(const char *name, QmAdmDecoupleRowFn fc, QmAdmDecoupleRowFn fs,
                          int v, unsigned isa, const int32_t *recip)
{
    if (!checkasm_begin(name, isa))
        return;
    static const double egls[] = { 100.0, 1.0, 2.7, 100.0, 13.0 };
    for (int it = 0; it < 1500; it++) {
        const int w = rnd_width();
        QmAdmScaleQ q;
        if (make_q(&q, v == V0 ? 0 : 1 + (int)(checkasm_rand() % 3), w, 20, 8 + (int)(checkasm_rand() % 9)))
            continue;
        int x0 = (int)(checkasm_rand() % (uint32_t)w), x1 = (int)(checkasm_rand() % (uint32_t)(w + 1));
        if (checkasm_rand() & 1) {
            x0 = 0;
            x1 = w;
        }
        if (x0 > x1) {
            const int s = x0;
            x0 = x1;
            x1 = s;
        }
        const double egl = egls[checkasm_rand() % 5];
        Row rr[3], dr[3], oc[10], os[10];
        int32_t *ref[3], *dis[3];
        for (int b = 0; b < 3; b++) {
            rr[b] = row_new(w);
            dr[b] = row_new(w);
            ref[b] = rr[b].p;
            dis[b] = dr[b].p;
        }
        fill_decouple(v, w, ref, dis);
        for (int k = 0; k < 10; k++) {
            oc[k] = row_new(w);
            os[k] = row_new(w);
        }
        const int32_t *const cref[3] = { ref[0], ref[1], ref[2] };
        const int32_t *const cdis[3] = { dis[0], dis[1], dis[2] };
        int32_t *const rc[3] = { oc[0].p, oc[1].p, oc[2].p }, *const ac[3] = { oc[3].p, oc[4].p, oc[5].p };
        int32_t *const mrc[2] = { oc[6].p, oc[7].p }, *const mac[2] = { oc[8].p, oc[9].p };
        int32_t *const rs[3] = { os[0].p, os[1].p, os[2].p }, *const as[3] = { os[3].p, os[4].p, os[5].p };
        int32_t *const mrs[2] = { os[6].p, os[7].p }, *const mas[2] = { os[8].p, os[9].p };
        fc(cref, cdis, x0, x1, &q, egl, recip, rc, ac, mrc, mac);
        fs(cref, cdis, x0, x1, &q, egl, recip, rs, as, mrs, mas);
        static const char *const names[10] = { "rst_h", "rst_v", "rst_d", "add_h", "add_v",
                                               "add_d", "mask_r_sum", "mask_r_ctr",
                                               "mask_a_sum", "mask_a_ctr" };
        int bad = 0;
        for (int k = 0; k < 10 && !bad; k++)
            bad = row_cmp(names[k], &oc[k], &os[k]);
        if (bad)
            checkasm_fail("  w %d x0 %d x1 %d egl %g scale %d csf %" PRId64, w, x0, x1, egl,
                          q.scale, q.csf_mul[0]);
        for (int b = 0; b < 3; b++) {
            row_free(&rr[b]);
            row_free(&dr[b]);
        }
        for (int k = 0; k < 10; k++) {
            row_free(&oc[k]);
            row_free(&os[k]);
        }
    }
    if (checkasm_bench()) {
        const int w = v == V0 ? 960 : 480, h = v == V0 ? 540 : 270;
        QmAdmScaleQ q;
        qm_adm_scale_setup(&q, v == V0 ? 0 : 1, 2 * w, 2 * h, 8, &WATSON);
        int32_t *mem = malloc(16 * (size_t)w * sizeof(int32_t));
        int32_t *ref[3], *dis[3], *o[10];
        for (int b = 0; b < 3; b++) {
            ref[b] = mem + b * w;
            dis[b] = mem + (3 + b) * w;
        }
        for (int k = 0; k < 10; k++)
            o[k] = mem + (6 + k) * w;
        fill_decouple(v, w, ref, dis);
        const int32_t *const cref[3] = { ref[0], ref[1], ref[2] };
        const int32_t *const cdis[3] = { dis[0], dis[1], dis[2] };
        double t[2];
        for (int f = 0; f < 2; f++) {
            const QmAdmDecoupleRowFn fn = f ? fs : fc;
            BENCH_BEST(t[f], for (int i = 0; i < h; i++) fn(cref, cdis, 0, w, &q, 100.0, recip, o, o + 3, o + 6, o + 8));
        }
        checkasm_bench_report(name, isa, t[0], t[1]);
        free(mem);
    }
    checkasm_end();
}

/* ------------------------------------------------------------------------ */

/* Masking rows: scale 0 sums of three int16 terms each; scales 1-3 of
 * three terms up to 2^31 / 30, kept where the 3x3 sums fit int32. */
static int32_t mask_value(int v, int p)
{
    switch (p) {
    case 1: return 0;
    case 2: return v == V0 ? rnd_range(-3 * 32768, 3 * 32767) : rnd_range(0, 150000000);
    case 3: return v == V0 ? rnd_range(-40, 400) : rnd_range(0, 1 << 20);
    default: return v == V0 ? rnd_range(0, 3 * 2200) : rnd_range(0, 3 * 2000000);
    }
}

static void test_num(const char *name, QmAdmNumRowFn fc, QmAdmNumRowFn fs, int v, unsigned isa)
{
    if (!checkasm_begin(name, isa))
        return;
    for (int it = 0; it < 1500; it++) {
        const int w = rnd_width();
        QmAdmScaleQ q;
        if (make_q(&q, v == V0 ? 0 : 1 + (int)(checkasm_rand() % 3), w, 20, 8 + (int)(checkasm_rand() % 9)))
            continue;
        const int sp = (int)(checkasm_rand() % 6), mp = (int)(checkasm_rand() % 4);
        Row src[3], sum[3], ctr = row_new(w);
        for (int k = 0; k < 3; k++) {
            src[k] = row_new(w);
            sum[k] = row_new(w);
            for (int j = 0; j < w; j++) {
                src[k].p[j] = band_value(v, sp, j);
                if (v != V0 && sp != 4)
                    src[k].p[j] /= 1 << (checkasm_rand() % 8);
                sum[k].p[j] = mask_value(v, mp);
            }
        }
        for (int j = 0; j < w; j++)
            ctr.p[j] = mask_value(v, mp);
        const int32_t *const s3[3] = { src[0].p, src[1].p, src[2].p };
        const int32_t *const m3[3] = { sum[0].p, sum[1].p, sum[2].p };
        int64_t ic[3], is[3];
        fc(s3, m3, ctr.p, &q, ic);
        fs(s3, m3, ctr.p, &q, is);
        for (int t = 0; t < 3; t++)
            if (ic[t] != is[t]) {
                checkasm_fail("orientation %d: C %" PRId64 " SIMD %" PRId64 " (w %d scale %d src %d mask %d)",
                              t, ic[t], is[t], w, q.scale, sp, mp);
                break;
            }
        for (int k = 0; k < 3; k++) {
            row_free(&src[k]);
            row_free(&sum[k]);
        }
        row_free(&ctr);
    }
    if (checkasm_bench()) {
        const int w = v == V0 ? 960 : 480, h = v == V0 ? 540 : 270;
        QmAdmScaleQ q;
        qm_adm_scale_setup(&q, v == V0 ? 0 : 1, 2 * w, 2 * h, 8, &WATSON);
        int32_t *mem = malloc(7 * (size_t)w * sizeof(int32_t));
        for (int j = 0; j < 7 * w; j++)
            mem[j] = j < 3 * w ? band_value(v, 0, j) / 64 : mask_value(v, 0);
        const int32_t *const s3[3] = { mem, mem + w, mem + 2 * w };
        const int32_t *const m3[3] = { mem + 3 * w, mem + 4 * w, mem + 5 * w };
        double t[2];
        int64_t in[3];
        for (int f = 0; f < 2; f++) {
            const QmAdmNumRowFn fn = f ? fs : fc;
            BENCH_BEST(t[f], for (int i = 0; i < h; i++) fn(s3, m3, mem + 6 * w, &q, in));
        }
        checkasm_bench_report(name, isa, t[0], t[1]);
        free(mem);
    }
    checkasm_end();
}

/* ------------------------------------------------------------------------ */

static void test_den(const char *name, QmAdmDenRowFn fc, QmAdmDenRowFn fs, int v, unsigned isa)
{
    if (!checkasm_begin(name, isa))
        return;
    for (int it = 0; it < 1500; it++) {
        const int w = rnd_width();
        QmAdmScaleQ q;
        if (make_q(&q, v == V0 ? 0 : 1 + (int)(checkasm_rand() % 3), w, 20, 8))
            continue;
        const int p = (int)(checkasm_rand() % 6);
        Row r[3];
        for (int k = 0; k < 3; k++) {
            r[k] = row_new(w);
            for (int j = 0; j < w; j++)
                r[k].p[j] = band_value(v, p, j);
        }
        const int32_t *const r3[3] = { r[0].p, r[1].p, r[2].p };
        uint64_t ic[3], is[3];
        fc(r3, &q, ic);
        fs(r3, &q, is);
        for (int t = 0; t < 3; t++)
            if (ic[t] != is[t]) {
                checkasm_fail("orientation %d: C %" PRIu64 " SIMD %" PRIu64 " (w %d scale %d pattern %d)",
                              t, ic[t], is[t], w, q.scale, p);
                break;
            }
        for (int k = 0; k < 3; k++)
            row_free(&r[k]);
    }
    if (checkasm_bench()) {
        const int w = v == V0 ? 960 : 480, h = v == V0 ? 540 : 270;
        QmAdmScaleQ q;
        qm_adm_scale_setup(&q, v == V0 ? 0 : 1, 2 * w, 2 * h, 8, &WATSON);
        int32_t *mem = malloc(3 * (size_t)w * sizeof(int32_t));
        for (int j = 0; j < 3 * w; j++)
            mem[j] = band_value(v, 0, j);
        const int32_t *const r3[3] = { mem, mem + w, mem + 2 * w };
        double t[2];
        uint64_t in[3];
        for (int f = 0; f < 2; f++) {
            const QmAdmDenRowFn fn = f ? fs : fc;
            BENCH_BEST(t[f], for (int i = 0; i < h; i++) fn(r3, &q, in));
        }
        checkasm_bench_report(name, isa, t[0], t[1]);
        free(mem);
    }
    checkasm_end();
}

/* ------------------------------------------------------------------------ */
/* The engine (fused rows, best kernels) against the plane stages            */
/* ------------------------------------------------------------------------ */

/* Features of one frame through the plane stages (C). */
static void plane_features(const QmAdmSetup *st, const void *ref, const void *dis,
                           ptrdiff_t stride, double out[QM_ADM_NFEATURES])
{
    int32_t *scratch = malloc(qm_adm_planes_scratch(st) * sizeof(int32_t));
    QmAdmSums acc;
    qm_adm_planes_sums(st, ref, stride, dis, stride, scratch, &acc);
    qm_adm_features(st, &acc, out);
    free(scratch);
}

extern const QmMetricDesc qm_metric_adm;

static void test_engine(unsigned isa)
{
    if (!checkasm_begin("adm_engine", isa))
        return;
    static const int sizes[][2] = { { 33, 33 }, { 34, 35 }, { 35, 33 }, { 47, 61 },
                                    { 64, 36 }, { 130, 77 }, { 161, 97 }, { 320, 180 } };
    static const int bpcs[] = { 8, 10, 12, 16 };
    const QmMetricDesc *d = &qm_metric_adm;
    for (int it = 0; it < 48; it++) {
        const int w = sizes[it % 8][0], h = sizes[it % 8][1];
        const int bpc = bpcs[(it / 8) % 4];
        const int pr = (int)(checkasm_rand() % CHECKASM_PATTERNS);
        QmOptValues opt;
        for (int i = 0; d->options[i].name; i++)
            opt.v[i] = d->options[i].def;
        switch (it % 4) {
        case 1: opt.v[QM_ADM_OPT_EGL] = 1.0; break;
        case 2: opt.v[QM_ADM_OPT_CSF_MODE] = 2; opt.v[QM_ADM_OPT_NVD] = 5.0; break;
        case 3: opt.v[QM_ADM_OPT_SKIP_SCALE0] = it & 8 ? 1 : 0; opt.v[QM_ADM_OPT_EGL] = 2.7; break;
        default: break;
        }
        const QmMetricConfig cfg = { w, h, bpc, QM_CHROMA_420, &opt };
        const size_t es = bpc == 8 ? 1 : 2;
        const ptrdiff_t stride = (ptrdiff_t)((size_t)(w + (int)(checkasm_rand() % 40)) * es);
        uint8_t *ref = malloc((size_t)stride * h), *dis = malloc((size_t)stride * h);
        checkasm_fill(ref, stride, w, h, bpc, pr);
        checkasm_fill(dis, stride, w, h, bpc, (int)(checkasm_rand() % CHECKASM_PATTERNS));
        if (checkasm_rand() % 3 == 0) {
            /* dis close to ref: the decoupling's gain limit bites */
            memcpy(dis, ref, (size_t)stride * h);
            for (int k = 0; k < w * h / 8; k++) {
                const size_t at = (size_t)(checkasm_rand() % (uint32_t)h) * (size_t)stride +
                                  (checkasm_rand() % (uint32_t)w) * es;
                dis[at] ^= 1;
            }
        }
        QmAdmSetup st;
        if (qm_adm_setup(&st, &cfg)) {
            checkasm_fail("setup %dx%d", w, h);
            free(ref);
            free(dis);
            continue;
        }
        double want[QM_ADM_NFEATURES], got[QM_ADM_NFEATURES];
        plane_features(&st, ref, dis, stride, want);
        void *priv = calloc(1, d->cpu.priv_size);
        double rv[QM_MAX_FEATURES];
        uint8_t rset[QM_MAX_FEATURES] = { 0 };
        QmRows rows = { { rv }, { rset }, 0, NULL };
        QmPicture pr_ = { 0 }, pd_ = { 0 };
        pr_.data[0] = ref;
        pd_.data[0] = dis;
        pr_.stride[0] = pd_.stride[0] = stride;
        pr_.w = pd_.w = w;
        pr_.h = pd_.h = h;
        pr_.bpc = pd_.bpc = bpc;
        const QmFrame fr = { &pr_, &pd_, 0 };
        if (d->cpu.init(priv, &cfg) || d->cpu.compute(priv, &fr, &rows)) {
            checkasm_fail("engine %dx%d failed", w, h);
        } else {
            for (int f = 0; f < QM_ADM_NFEATURES; f++)
                got[f] = rv[f];
            for (int f = 0; f < QM_ADM_NFEATURES; f++)
                if (memcmp(&got[f], &want[f], sizeof(double))) {
                    checkasm_fail("%dx%d bpc %d case %d feature %d: engine %.17g planes %.17g",
                                  w, h, bpc, it % 4, f, got[f], want[f]);
                    break;
                }
        }
        d->cpu.close(priv);
        free(priv);
        free(ref);
        free(dis);
    }
    checkasm_end();
}

/* Present where cpu/x86/adm_avx2.c is built. */
#pragma weak qm_adm_i64_to_float_avx2

/* int64 -> float of the AVX2 twins against C's conversion: random values,
 * values just around float ties (24 significant bits and a half) at every
 * exponent, around powers of two, and the extremes. */
static void test_i64_float(void)
{
    if (!qm_adm_i64_to_float_avx2 || !checkasm_begin("adm_i64_to_float", QM_CPU_AVX2))
        return;
    enum { N = 4096 };
    int64_t x[N];
    float got[N];
    for (int it = 0; it < 400; it++) {
        for (int i = 0; i < N; i++) {
            const uint64_t r = ((uint64_t)checkasm_rand() << 32) | checkasm_rand();
            const int e = (int)(checkasm_rand() % 40);
            const int64_t m = (int64_t)((checkasm_rand() & 0xFFFFFF) | 0x1000000);
            int64_t v;
            switch (i % 6) {
            case 0: v = (int64_t)r; break;
            case 1: v = (int64_t)r >> (checkasm_rand() % 64); break;
            case 2: /* a tie, or one off it */
                /* unsigned shifts: the same bits without signed overflow */
                v = (int64_t)(((uint64_t)m << e) + (e ? (uint64_t)1 << (e - 1) : 0) +
                              (uint64_t)(checkasm_rand() % 3) - 1);
                break;
            case 3: v = ((int64_t)1 << (checkasm_rand() % 63)) + (int64_t)(checkasm_rand() % 5) - 2; break;
            case 4: v = i & 8 ? INT64_MIN + (int64_t)(checkasm_rand() % 3) : INT64_MAX - (int64_t)(checkasm_rand() % 3); break;
            default: v = (int64_t)(((uint64_t)m << e) | (r & (((uint64_t)1 << e) - 1))); break;
            }
            x[i] = checkasm_rand() & 1 ? v : (v == INT64_MIN ? v : -v);
        }
        qm_adm_i64_to_float_avx2(x, got, N);
        for (int i = 0; i < N; i++) {
            const float want = (float)x[i];
            if (memcmp(&want, &got[i], sizeof(float))) {
                checkasm_fail("%" PRId64 ": C %a SIMD %a", x[i], (double)want, (double)got[i]);
                break;
            }
        }
    }
    checkasm_end();
}

void checkasm_adm(void)
{
    QmAdmDsp c, avx2, s;
    int32_t *recip = malloc(QM_ADM_RECIP_SIZE * sizeof(int32_t));
    qm_adm_recip_table(recip);
    qm_adm_dsp_init(&c, 0);
    qm_adm_dsp_init(&avx2, QM_CPU_AVX2);
    const unsigned isas = checkasm_isas();
    if (isas & QM_CPU_AVX2)
        test_i64_float();
    for (unsigned isa = QM_CPU_AVX2; isa <= QM_CPU_AVX512; isa <<= 1) {
        if (!(isas & isa))
            continue;
        qm_adm_dsp_init(&s, isa | (isa - 1));
        /* a level's own twins: those differing from C and the level below */
        const QmAdmDsp *below = isa == QM_CPU_AVX2 ? &c : &avx2;
        for (int v = 0; v < 2; v++) {
            char nm[32];
            if (s.dwt_row[v] != c.dwt_row[v] && s.dwt_row[v] != below->dwt_row[v]) {
                snprintf(nm, sizeof(nm), "adm_dwt_row%s", v ? "123" : "0");
                test_dwt(nm, c.dwt_row[v], s.dwt_row[v], v, isa);
            }
            if (s.decouple_row[v] != c.decouple_row[v] && s.decouple_row[v] != below->decouple_row[v]) {
                snprintf(nm, sizeof(nm), "adm_decouple_row%s", v ? "123" : "0");
                test_decouple(nm, c.decouple_row[v], s.decouple_row[v], v, isa, recip);
            }
            if (s.num_row[v] != c.num_row[v] && s.num_row[v] != below->num_row[v]) {
                snprintf(nm, sizeof(nm), "adm_num_row%s", v ? "123" : "0");
                test_num(nm, c.num_row[v], s.num_row[v], v, isa);
            }
            if (s.den_row[v] != c.den_row[v] && s.den_row[v] != below->den_row[v]) {
                snprintf(nm, sizeof(nm), "adm_den_row%s", v ? "123" : "0");
                test_den(nm, c.den_row[v], s.den_row[v], v, isa);
            }
        }
    }
    /* the engine runs the best level there is (qm_cpu_flags()) */
    if (isas)
        test_engine(isas & QM_CPU_AVX512 ? QM_CPU_AVX512 : QM_CPU_AVX2);
    free(recip);
}
