/* gst-qmetric: libvmaf's presets and the options they set, each on its own.
 *
 *  - the presets: every version of --aom_ctc and --nflx_ctc found, bad
 *    versions refused with libvmaf's words (tools/cli_parse.c); each
 *    preset's plan: models named vmaf and vmaf_neg, the aggregates, every
 *    instance one the CUDA twin takes (whole preset on the GPU in one pass;
 *    with a GPU, the engine puts every instance there);
 *  - psnr: reduced_hbd_peak, min_sse, enable_chroma, enable_apsnr (values
 *    from their definitions; the caps the golden README lists for identical
 *    576x324 input), the aggregates over every frame with subsample;
 *  - float_ssim / float_ms_ssim: enable_db, clip_db, scale;
 *  - model labels (version=NAME:name=LABEL), duplicate keys refused.
 *
 * Plain C, the engine on synthetic pictures; a few seconds.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "plan.h"
#include "preset.h"
#include "qm.h"
#include "unit.h"

/* ---- pictures ---- */

typedef struct Clip {
    int w, h, bpc;
    uint8_t *y[2][64], *u[2][64], *v[2][64];  /* [ref/dis][frame] */
    int n;
} Clip;

static uint32_t rnd_state = 1;
static uint32_t rnd(void)
{
    rnd_state = rnd_state * 1664525u + 1013904223u;
    return rnd_state >> 8;
}

/* n frames of w x h 4:2:0: a smooth ramp with noise; the distorted copy
 * has `noise` added (0: identical) */
static void clip_make(Clip *c, int w, int h, int bpc, int n, int noise)
{
    const int bps = bpc > 8 ? 2 : 1, max = (1 << bpc) - 1;
    memset(c, 0, sizeof(*c));
    c->w = w;
    c->h = h;
    c->bpc = bpc;
    c->n = n;
    for (int f = 0; f < n; f++) {
        for (int p = 0; p < 3; p++) {
            const int pw = p ? w / 2 : w, ph = p ? h / 2 : h;
            uint8_t *ref = malloc((size_t)pw * ph * bps), *dis = malloc((size_t)pw * ph * bps);
            for (int i = 0; i < pw * ph; i++) {
                int a = (int)((i % pw) * max / (pw > 1 ? pw - 1 : 1)) / 2 + (int)(rnd() % 16) + f;
                int b = a + (noise ? (int)(rnd() % (2 * noise + 1)) - noise : 0);
                a = a < 0 ? 0 : a > max ? max : a;
                b = b < 0 ? 0 : b > max ? max : b;
                if (bps == 1) {
                    ref[i] = (uint8_t)a;
                    dis[i] = (uint8_t)b;
                } else {
                    ((uint16_t *)ref)[i] = (uint16_t)a;
                    ((uint16_t *)dis)[i] = (uint16_t)b;
                }
            }
            uint8_t **dr = p == 0 ? c->y[0] : p == 1 ? c->u[0] : c->v[0];
            uint8_t **dd = p == 0 ? c->y[1] : p == 1 ? c->u[1] : c->v[1];
            dr[f] = ref;
            dd[f] = dis;
        }
    }
}

static void clip_free(Clip *c)
{
    for (int s = 0; s < 2; s++)
        for (int f = 0; f < c->n; f++) {
            free(c->y[s][f]);
            free(c->u[s][f]);
            free(c->v[s][f]);
        }
}

static void pic_of(const Clip *c, int side, int f, QmPicture *p)
{
    const int bps = c->bpc > 8 ? 2 : 1;
    memset(p, 0, sizeof(*p));
    p->w = c->w;
    p->h = c->h;
    p->bpc = c->bpc;
    p->chroma = QM_CHROMA_420;
    p->data[0] = c->y[side][f];
    p->data[1] = c->u[side][f];
    p->data[2] = c->v[side][f];
    p->stride[0] = (ptrdiff_t)c->w * bps;
    p->stride[1] = p->stride[2] = (ptrdiff_t)(c->w / 2) * bps;
}

/* SSE of plane p of frame f, as the definition says */
static uint64_t clip_sse(const Clip *c, int f, int p)
{
    const int pw = p ? c->w / 2 : c->w, ph = p ? c->h / 2 : c->h;
    const uint8_t *a = p == 0 ? c->y[0][f] : p == 1 ? c->u[0][f] : c->v[0][f];
    const uint8_t *b = p == 0 ? c->y[1][f] : p == 1 ? c->u[1][f] : c->v[1][f];
    uint64_t s = 0;
    for (int i = 0; i < pw * ph; i++) {
        const int64_t e = c->bpc > 8 ? (int64_t)((const uint16_t *)a)[i] - ((const uint16_t *)b)[i]
                                     : (int64_t)a[i] - b[i];
        s += (uint64_t)(e * e);
    }
    return s;
}

/* ---- running an engine ---- */

#define MAXF 16

typedef struct Run {
    int ok;
    char *err;
    unsigned nf, nagg;
    char names[MAXF * 4][96];
    double v[64][MAXF * 4];
    uint8_t set[64][MAXF * 4];
    char agg_names[8][32];
    double agg[8];
} Run;

static Run *run(const Clip *c, const char *metrics, const char *features,
                const char *models, const char *preset, unsigned subsample)
{
    Run *r = calloc(1, sizeof(*r));
    QmSettings s;
    QmEngine *e = NULL;
    qm_settings_default(&s, c->w, c->h, c->bpc, QM_CHROMA_420);
    s.metrics = metrics;
    s.features = features;
    s.models = models;
    s.preset = preset;
    s.subsample = subsample;
    s.n_threads = 2;
    if (qm_engine_open(&e, &s, &r->err))
        return r;
    r->ok = 1;
    r->nf = qm_engine_n_features(e);
    for (unsigned i = 0; i < r->nf && i < MAXF * 4; i++)
        snprintf(r->names[i], sizeof(r->names[i]), "%s", qm_engine_feature_name(e, i));
    QmAggregates *aggs = qm_aggregates_new(e);
    CHECK(aggs != NULL, "aggregates");
    QmResult res;
    for (int f = 0; f <= c->n; f++) {
        if (f < c->n) {
            QmPicture a, b;
            pic_of(c, 0, f, &a);
            pic_of(c, 1, f, &b);
            CHECK(qm_engine_submit(e, &a, &b, NULL) == 0, "submit: %s", qm_engine_error(e));
        } else {
            qm_engine_flush(e);
        }
        while (qm_engine_receive(e, &res, f == c->n) == 0) {
            for (unsigned i = 0; i < r->nf && i < MAXF * 4; i++) {
                r->v[res.index][i] = res.value[i];
                r->set[res.index][i] = res.present[i];
            }
            qm_aggregates_add(aggs, res.value, res.present);
        }
    }
    const char *name;
    while (r->nagg < 8 && (name = qm_aggregates_get(aggs, r->nagg, &r->agg[r->nagg])))
        snprintf(r->agg_names[r->nagg++], sizeof(r->agg_names[0]), "%s", name);
    qm_aggregates_free(aggs);
    qm_engine_close(&e);
    return r;
}

static void run_free(Run *r)
{
    free(r->err);
    free(r);
}

static int key(const Run *r, const char *name)
{
    for (unsigned i = 0; i < r->nf; i++)
        if (!strcmp(r->names[i], name))
            return (int)i;
    return -1;
}

/* frame f's value of key `name` (NaN when absent) */
static double val(const Run *r, int f, const char *name)
{
    const int k = key(r, name);
    return k >= 0 && r->set[f][k] ? r->v[f][k] : NAN;
}

static const char *const psnr_keys[] = { "psnr_y", "psnr_cb", "psnr_cr" };

static double agg(const Run *r, const char *name)
{
    for (unsigned i = 0; i < r->nagg; i++)
        if (!strcmp(r->agg_names[i], name))
            return r->agg[i];
    CHECK(0, "no aggregate %s", name);
    return NAN;
}

/* ---- presets ---- */

static void test_preset_lookup(void)
{
    static const char *const aom[] = { "v1.0", "v2.0", "v3.0", "v4.0", "v5.0", "v6.0", "v7.0" };
    char err[128];
    for (unsigned i = 0; i < 7; i++)
        CHECK(qm_preset_find("aom_ctc", aom[i], err, sizeof(err)), "aom_ctc %s", aom[i]);
    CHECK(qm_preset_find("nflx_ctc", "v1.0", err, sizeof(err)), "nflx_ctc v1.0");
    /* libvmaf's words (usage()'s reason line) */
    CHECK(!qm_preset_find("aom_ctc", "v8.0", err, sizeof(err)) &&
          !strcmp(err, "bad aom_ctc version \"v8.0\""), "v8.0: %s", err);
    CHECK(!qm_preset_find("aom_ctc", "proposed", err, sizeof(err)) &&
          !strcmp(err, "`--aom_ctc proposed` is deprecated."), "proposed: %s", err);
    CHECK(!qm_preset_find("nflx_ctc", "v2.0", err, sizeof(err)) &&
          !strcmp(err, "bad nflx_ctc version \"v2.0\""), "nflx v2.0: %s", err);
    CHECK(!qm_preset_find("aom_ctc", "7.0", err, sizeof(err)) &&
          !strcmp(err, "bad aom_ctc version \"7.0\""), "7.0: %s", err);
    CHECK(!qm_preset_parse("aom_ctc", err, sizeof(err)) && strstr(err, "FAMILY=VERSION"),
          "no version: %s", err);
    CHECK(qm_preset_parse("nflx_ctc=v1.0", err, sizeof(err)), "parse");
    /* v7.0 differs from v6.0 in float_ssim's scale alone, v3.0 from v2.0
     * by cambi */
    const QmPreset *v6 = qm_preset_find("aom_ctc", "v6.0", err, sizeof(err));
    const QmPreset *v7 = qm_preset_find("aom_ctc", "v7.0", err, sizeof(err));
    const QmPreset *v2 = qm_preset_find("aom_ctc", "v2.0", err, sizeof(err));
    CHECK(!strstr(v6->features, "scale=1") && strstr(v7->features, "float_ssim=scale=1:"),
          "v7 scale");
    CHECK(!strstr(v2->features, "cambi") && strstr(v6->features, "cambi") && v6->common_bitdepth,
          "v3 cambi, v6 common_bitdepth");
}

/* Every preset's plan: names, aggregates, and every instance on the GPU. */
static void test_preset_plans(void)
{
    static const char *const presets[] = {
        "aom_ctc=v1.0", "aom_ctc=v3.0", "aom_ctc=v6.0", "aom_ctc=v7.0", "nflx_ctc=v1.0",
    };
    for (unsigned k = 0; k < sizeof(presets) / sizeof(presets[0]); k++) {
        QmSettings s;
        QmPlan p;
        char *err = NULL;
        qm_settings_default(&s, 576, 324, 10, QM_CHROMA_420);
        s.metrics = QM_DEFAULT_METRICS;
        s.metrics_are_default = true;
        s.preset = presets[k];
        if (qm_plan_build(&p, &s, &err)) {
            CHECK(0, "%s: %s", presets[k], err ? err : "?");
            free(err);
            continue;
        }
        bool vmaf = false, neg = false, ms = false, hvs = false, cambi = false;
        for (unsigned i = 0; i < p.nfeat; i++) {
            vmaf |= !strcmp(p.names[i], "vmaf");
            neg |= !strcmp(p.names[i], "vmaf_neg");
            ms |= !strcmp(p.names[i], "float_ms_ssim");
            hvs |= !strcmp(p.names[i], "psnr_hvs");
            cambi |= !strcmp(p.names[i], "cambi");
            /* no option suffix on any key but the neg model's egl */
            CHECK(!strstr(p.names[i], "_db") && !strstr(p.names[i], "scale_1") &&
                  !strstr(p.names[i], "apsnr"), "%s: key %s", presets[k], p.names[i]);
        }
        const bool aom = !strncmp(presets[k], "aom", 3);
        CHECK(vmaf && neg && p.nmodels == 2, "%s: models", presets[k]);
        CHECK(ms == aom && hvs == aom && cambi == (strcmp(presets[k], "aom_ctc=v1.0") != 0),
              "%s: metrics", presets[k]);
        CHECK(!strcmp(qm_model_name(p.models[0].m), aom ? "vmaf_v0.6.1" : "vmaf_4k_v0.6.1") &&
              !strcmp(qm_model_name(p.models[1].m),
                      aom ? "vmaf_v0.6.1neg" : "vmaf_4k_v0.6.1neg"), "%s: model files",
              presets[k]);
        /* apsnr: psnr's SSE of each plane, every frame */
        CHECK(p.naux == 3, "%s: aux values %u", presets[k], p.naux);
        /* the whole preset in one pass on the GPU: a twin for every
         * instance that takes its options */
        for (int i = 0; i < p.ninst; i++) {
            const QmMetricDesc *d = p.inst[i].d;
            CHECK(!d->cuda_accepts || d->cuda_accepts(&p.inst[i].opt),
                  "%s: %s's twin refuses the preset's options", presets[k], d->name);
            CHECK(!qm_have_cuda() || d->cuda, "%s: %s has no CUDA twin", presets[k], d->name);
        }
        qm_plan_free(&p);
    }
    if (!qm_have_cuda())
        return;
    /* with a device: every instance goes there */
    QmSettings s;
    QmEngine *e = NULL;
    char *err = NULL;
    qm_settings_default(&s, 576, 324, 8, QM_CHROMA_420);
    s.preset = "aom_ctc=v7.0";
    s.backend = QM_BACKEND_CUDA;
    if (qm_engine_open(&e, &s, &err)) {
        printf("no CUDA device (%s): the all-on-device check is left out\n", err ? err : "?");
        free(err);
        return;
    }
    char *all = qm_engine_metrics_text(e, false), *dev = qm_engine_metrics_text(e, true);
    CHECK(all && dev && !strcmp(all, dev), "on the device: %s\nall: %s", dev, all);
    free(all);
    free(dev);
    qm_engine_close(&e);
}

/* ---- psnr ---- */

static void test_psnr_options(void)
{
    Clip c;
    /* reduced_hbd_peak: 1020 at 10 bits, no change at 8 */
    clip_make(&c, 64, 48, 10, 2, 9);
    Run *d = run(&c, "psnr", NULL, NULL, NULL, 1);
    Run *r = run(&c, "float_ssim", "psnr=reduced_hbd_peak=true", NULL, NULL, 1);
    CHECK(d->ok && r->ok, "psnr runs: %s %s", d->err, r->err);
    for (int f = 0; f < c.n && d->ok && r->ok; f++) {
        for (int p = 0; p < 3; p++) {
            const double mse = (double)clip_sse(&c, f, p) / ((p ? 32.0 * 24 : 64.0 * 48));
            const double want = 10 * log10(1020.0 * 1020.0 / mse);
            const double got = val(r, f, psnr_keys[p]);
            CHECK(fabs(got - want) < 1e-12, "reduced peak f%d p%d: %.12f vs %.12f", f, p,
                  got, want);
            CHECK(fabs(val(d, f, psnr_keys[p]) - got - 20 * log10(1023.0 / 1020.0)) < 1e-9,
                  "reduced peak: 0.0255 dB lower");
        }
    }
    run_free(d);
    run_free(r);
    clip_free(&c);
    clip_make(&c, 64, 48, 8, 1, 9);
    d = run(&c, "psnr", NULL, NULL, NULL, 1);
    r = run(&c, "float_ssim", "psnr=reduced_hbd_peak=true", NULL, NULL, 1);
    CHECK(d->ok && r->ok && val(d, 0, "psnr_y") == val(r, 0, "psnr_y") &&
          val(d, 0, "psnr_cb") == val(r, 0, "psnr_cb"), "8 bits: reduced peak is 255");
    run_free(d);
    run_free(r);
    clip_free(&c);

    /* min_sse: the caps of identical 576x324 planes (golden ctc README):
     * 8-bit Y 104, 4:2:0 chroma 98; 10-bit 116, 110; without it 60 / 72 */
    static const struct { int bpc; double y, c, y0; double ay, ac; } caps[] = {
        { 8, 104, 98, 60, 120, 114 }, { 10, 116, 110, 72, 127, 121 },
    };
    for (int k = 0; k < 2; k++) {
        /* the README's apsnr caps are for 36 frames (8-bit) and 12 (10-bit) */
        clip_make(&c, 576, 324, caps[k].bpc, k ? 12 : 36, 0);
        d = run(&c, "psnr", NULL, NULL, NULL, 1);
        r = run(&c, "float_ssim", "psnr=min_sse=0.5:enable_apsnr=true", NULL, NULL, 1);
        CHECK(d->ok && r->ok, "identical runs");
        if (d->ok && r->ok) {
            CHECK(val(d, 0, "psnr_y") == caps[k].y0, "%d-bit default cap %g", caps[k].bpc,
                  val(d, 0, "psnr_y"));
            CHECK(val(r, 5, "psnr_y") == caps[k].y && val(r, 5, "psnr_cb") == caps[k].c &&
                  val(r, 5, "psnr_cr") == caps[k].c, "%d-bit min_sse caps %g %g %g",
                  caps[k].bpc, val(r, 5, "psnr_y"), val(r, 5, "psnr_cb"), val(r, 5, "psnr_cr"));
            CHECK(agg(r, "apsnr_y") == caps[k].ay && agg(r, "apsnr_cb") == caps[k].ac &&
                  agg(r, "apsnr_cr") == caps[k].ac, "%d-bit apsnr caps %g %g %g", caps[k].bpc,
                  agg(r, "apsnr_y"), agg(r, "apsnr_cb"), agg(r, "apsnr_cr"));
            CHECK(d->nagg == 0, "no aggregates without enable_apsnr");
            CHECK(r->nagg == 3 && !strcmp(r->agg_names[0], "apsnr_y") &&
                  !strcmp(r->agg_names[1], "apsnr_cb") && !strcmp(r->agg_names[2], "apsnr_cr"),
                  "aggregate keys");
        }
        run_free(d);
        run_free(r);
        clip_free(&c);
    }

    /* enable_apsnr: one PSNR over the run, N and SSE summed */
    clip_make(&c, 96, 64, 10, 9, 40);
    r = run(&c, "float_ssim", "psnr=enable_apsnr=true", NULL, NULL, 1);
    Run *sub = run(&c, "float_ssim", "psnr=enable_apsnr=true", NULL, NULL, 3);
    CHECK(r->ok && sub->ok, "apsnr runs");
    for (int p = 0; p < 3 && r->ok && sub->ok; p++) {
        uint64_t sse = 0;
        for (int f = 0; f < c.n; f++)
            sse += clip_sse(&c, f, p);
        const double n = (double)c.n * (p ? 48 * 32 : 96 * 64);
        const double want = 10 * log10(1023.0 * 1023.0 * n / (double)sse);
        const double got = agg(r, p == 0 ? "apsnr_y" : p == 1 ? "apsnr_cb" : "apsnr_cr");
        CHECK(fabs(got - want) < 1e-9, "apsnr p%d: %.12f vs %.12f", p, got, want);
        /* subsample reports frames 0, 3, 6, but apsnr counts every frame */
        CHECK(agg(sub, p == 0 ? "apsnr_y" : p == 1 ? "apsnr_cb" : "apsnr_cr") == got,
              "apsnr with subsample p%d", p);
    }
    CHECK(sub->ok && !isnan(val(sub, 3, "psnr_y")) && isnan(val(sub, 4, "psnr_y")),
          "subsample: psnr_y of frame 3, not of 4");
    run_free(r);
    run_free(sub);

    /* enable_chroma=false: psnr_y only; the chroma aggregates are the
     * reference's -inf of nothing counted */
    r = run(&c, "float_ssim", "psnr=enable_chroma=false:enable_apsnr=true", NULL, NULL, 1);
    CHECK(r->ok && !isnan(val(r, 0, "psnr_y")) && isnan(val(r, 0, "psnr_cb")) &&
          isnan(val(r, 0, "psnr_cr")), "enable_chroma=false");
    CHECK(r->ok && isfinite(agg(r, "apsnr_y")) && agg(r, "apsnr_cb") == -INFINITY &&
          agg(r, "apsnr_cr") == -INFINITY, "apsnr without chroma");
    run_free(r);
    clip_free(&c);
}

/* ---- SSIM, MS-SSIM ---- */

static void test_ssim_options(void)
{
    Clip c;
    clip_make(&c, 576, 324, 8, 2, 12);
    Run *d = run(&c, "float_ssim,float_ms_ssim", NULL, NULL, NULL, 1);
    Run *r = run(&c, "psnr", "float_ssim=enable_db=true,float_ms_ssim=enable_db=true:clip_db=true",
                 NULL, NULL, 1);
    Run *s1 = run(&c, "psnr", "float_ssim=scale=1", NULL, NULL, 1);
    CHECK(d->ok && r->ok && s1->ok, "ssim runs: %s %s %s", d->err, r->err, s1->err);
    for (int f = 0; f < c.n && d->ok && r->ok && s1->ok; f++) {
        const double a = val(d, f, "float_ssim"), b = val(d, f, "float_ms_ssim");
        CHECK(val(r, f, "float_ssim") == -10 * log10(1 - a), "ssim dB f%d: %.9f vs %.9f", f,
              val(r, f, "float_ssim"), a);
        CHECK(val(r, f, "float_ms_ssim") == -10 * log10(1 - b), "ms-ssim dB f%d", f);
        /* 576x324 is not decimated: scale=1 changes nothing */
        CHECK(val(s1, f, "float_ssim") == a, "scale=1 at 576x324");
    }
    run_free(d);
    run_free(r);
    run_free(s1);
    clip_free(&c);

    /* clip_db: identical 576x324 at 104 dB (8-bit) and 116 (10-bit), as the
     * golden README lists; without it, -10 log10(0) is infinite */
    for (int bpc = 8; bpc <= 10; bpc += 2) {
        clip_make(&c, 576, 324, bpc, 1, 0);
        r = run(&c, "psnr", "float_ssim=enable_db=true:clip_db=true,"
                "float_ms_ssim=enable_db=true:clip_db=true", NULL, NULL, 1);
        d = run(&c, "psnr", "float_ssim=enable_db=true", NULL, NULL, 1);
        const double cap = bpc == 8 ? 104 : 116;
        CHECK(r->ok && val(r, 0, "float_ssim") == cap && val(r, 0, "float_ms_ssim") == cap,
              "%d-bit clip_db: %g %g", bpc, val(r, 0, "float_ssim"), val(r, 0, "float_ms_ssim"));
        CHECK(d->ok && val(d, 0, "float_ssim") == INFINITY, "unclipped dB of identical pictures");
        run_free(r);
        run_free(d);
        clip_free(&c);
    }

    /* scale: 1152x648 decimates by 3 by default (round(648 / 256)) */
    clip_make(&c, 1152, 648, 8, 1, 12);
    d = run(&c, "float_ssim", NULL, NULL, NULL, 1);
    Run *s3 = run(&c, "psnr", "float_ssim=scale=3", NULL, NULL, 1);
    s1 = run(&c, "psnr", "float_ssim=scale=1", NULL, NULL, 1);
    Run *s2 = run(&c, "psnr", "float_ssim=scale=2", NULL, NULL, 1);
    CHECK(d->ok && s3->ok && s1->ok && s2->ok, "scale runs");
    if (d->ok && s3->ok && s1->ok && s2->ok) {
        const double a = val(d, 0, "float_ssim");
        CHECK(val(s3, 0, "float_ssim") == a, "scale=3 is the automatic factor here");
        CHECK(val(s1, 0, "float_ssim") != a && val(s2, 0, "float_ssim") != a &&
              val(s1, 0, "float_ssim") != val(s2, 0, "float_ssim"), "scale 1, 2, 3 differ");
    }
    run_free(d);
    run_free(s1);
    run_free(s2);
    run_free(s3);
    clip_free(&c);
    /* a factor that leaves less than the 11x11 window is refused */
    clip_make(&c, 40, 30, 8, 1, 3);
    r = run(&c, "psnr", "float_ssim=scale=3", NULL, NULL, 1);
    CHECK(!r->ok && r->err && strstr(r->err, "float_ssim"), "scale=3 on 40x30: %s",
          r->err ? r->err : "accepted");
    run_free(r);
    r = run(&c, "psnr", "float_ssim=scale=2", NULL, NULL, 1);
    CHECK(r->ok, "scale=2 on 40x30 (20x15): %s", r->err ? r->err : "");
    run_free(r);
    clip_free(&c);
}

/* ---- names ---- */

static void test_names(void)
{
    Clip c;
    clip_make(&c, 64, 48, 8, 3, 5);
    Run *r = run(&c, "vmaf", NULL, "version=vmaf_v0.6.1:name=mine,vmaf_v0.6.1neg", NULL, 1);
    CHECK(r->ok && key(r, "mine") >= 0 && key(r, "vmaf_v0.6.1neg") >= 0 && key(r, "vmaf") < 0,
          "labels: %s", r->err ? r->err : "");
    run_free(r);
    r = run(&c, "vmaf", NULL, "version=vmaf_v0.6.1:name=a,path=vmaf_v0.6.1neg:name=a", NULL, 1);
    CHECK(!r->ok && r->err && strstr(r->err, "'a'"), "one label twice: %s",
          r->err ? r->err : "accepted");
    run_free(r);
    r = run(&c, "vmaf", NULL, "version=vmaf_v0.6.1:label=x", NULL, 1);
    CHECK(!r->ok && r->err && strstr(r->err, "label"), "bad model key: %s",
          r->err ? r->err : "accepted");
    run_free(r);
    /* two instances that write psnr_y: refused, not a log with one key twice */
    r = run(&c, "psnr", "psnr=min_sse=0.5", NULL, NULL, 1);
    CHECK(!r->ok && r->err && strstr(r->err, "'psnr_y'"), "psnr twice: %s",
          r->err ? r->err : "accepted");
    run_free(r);
    /* a preset with the default metrics adds nothing; named metrics add */
    r = run(&c, "psnr", NULL, NULL, "nflx_ctc=v1.0", 1);
    CHECK(!r->ok && r->err && strstr(r->err, "'psnr_y'"), "preset and psnr: %s",
          r->err ? r->err : "accepted");
    run_free(r);
    r = run(&c, "psnr", NULL, NULL, "aom_ctc=v9.0", 1);
    CHECK(!r->ok && r->err && strstr(r->err, "bad aom_ctc version \"v9.0\""), "bad preset: %s",
          r->err ? r->err : "accepted");
    run_free(r);
    clip_free(&c);
}

int main(void)
{
    test_preset_lookup();
    test_preset_plans();
    test_psnr_options();
    test_ssim_options();
    test_names();
    if (failures)
        printf("%d check(s) failed\n", failures);
    else
        printf("ok\n");
    return failures ? 1 : 0;
}
