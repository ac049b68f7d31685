/* gst-qmetric: unit test of cpu/motion.c.
 *
 * 1. The row-SAD stage against a direct per-pixel evaluation of the
 *    definition (every tap mirrored on its own, 64-bit arithmetic
 *    throughout), bit-exact, on random pictures and worst cases (all 0
 *    against all max, checkerboards) at 8, 10, 12 and 16 bits, sizes from
 *    3x3 up, odd widths, strides larger than the row.
 * 2. The engine's sequence rules (motion2 / motion3 one frame late, frame 0
 *    and the last frame, 1- to 8-frame streams), with the default options
 *    and with the _hfr models' five-frame window and moving average (given
 *    through QmSettings.features), against the whole-stream rules of
 *    libvmaf's flush() as the golden README states them, on synthetic
 *    pictures; the keys are libvmaf's (no integer_motion).
 *
 * Exit status: 0 pass, 1 fail.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "motion.h"
#include "unit.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

/* ---- the definition, evaluated directly ---- */

static int mirror_ref(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - 2 - i : i;
}

static int64_t sample(const uint8_t *p, ptrdiff_t stride, int bpc, int x, int y)
{
    const uint8_t *row = p + y * stride;
    return bpc == 8 ? row[x] : ((const uint16_t *)row)[x];
}

static uint64_t sad_direct(const uint8_t *prev, const uint8_t *cur,
                           ptrdiff_t stride, int w, int h, int bpc,
                           uint32_t *row_sad)
{
    static const int64_t f[5] = { 3571, 16004, 26386, 16004, 3571 };
    int64_t *v = malloc((size_t)w * sizeof(*v));
    uint64_t total = 0;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            int64_t s = 0;
            for (int k = 0; k < 5; k++) {
                int yy = mirror_ref(y - 2 + k, h);
                s += f[k] * (sample(prev, stride, bpc, x, yy) -
                             sample(cur, stride, bpc, x, yy));
            }
            v[x] = (s + ((int64_t)1 << (bpc - 1))) >> bpc;
        }
        uint32_t rs = 0;
        for (int x = 0; x < w; x++) {
            int64_t s = 0;
            for (int k = 0; k < 5; k++)
                s += f[k] * v[mirror_ref(x - 2 + k, w)];
            int64_t b = (s + 32768) >> 16;
            rs += (uint32_t)(b < 0 ? -b : b);
        }
        row_sad[y] = rs;
        total += rs;
    }
    free(v);
    return total;
}

enum { PAT_RANDOM, PAT_EXTREME, PAT_CHECKER, PAT_SMALL_DIFF, N_PAT };

static void fill(uint8_t *p, ptrdiff_t stride, int w, int h, int bpc, int pat,
                 int which)
{
    const uint32_t max = (1u << bpc) - 1;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            uint32_t v;
            switch (pat) {
            case PAT_RANDOM: v = rnd() & max; break;
            case PAT_EXTREME: v = which ? 0 : max; break;
            case PAT_CHECKER: v = ((x + y + which) & 1) ? max : 0; break;
            default: v = (max / 2 + (which ? (rnd() % 3) : 0)) & max; break;
            }
            uint8_t *row = p + y * stride;
            if (bpc == 8)
                row[x] = (uint8_t)v;
            else
                ((uint16_t *)row)[x] = (uint16_t)v;
        }
    }
}

static void check_stage(void)
{
    static const int sizes[][2] = { { 3, 3 }, { 3, 7 }, { 7, 3 }, { 4, 5 },
                                    { 5, 4 }, { 17, 9 }, { 33, 31 },
                                    { 64, 6 }, { 577, 13 } };
    static const int depths[] = { 8, 10, 12, 16 };
    int ncmp = 0;
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        for (size_t d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
            for (int pat = 0; pat < N_PAT; pat++) {
                const int w = sizes[s][0], h = sizes[s][1], bpc = depths[d];
                const int bytes = bpc == 8 ? 1 : 2;
                /* a stride larger than the row, not a multiple of 4 */
                const ptrdiff_t stride = (ptrdiff_t)w * bytes + 6;
                uint8_t *a = calloc((size_t)(stride * h), 1);
                uint8_t *b = calloc((size_t)(stride * h), 1);
                int32_t *scratch = malloc(qm_motion_scratch_len(w) * sizeof(int32_t));
                uint32_t *rs = malloc((size_t)h * sizeof(uint32_t));
                uint32_t *rs_ref = malloc((size_t)h * sizeof(uint32_t));
                fill(a, stride, w, h, bpc, pat, 0);
                fill(b, stride, w, h, bpc, pat, 1);
                qm_motion_row_sad_fn(bpc)(a, stride, b, stride, w, h, bpc,
                                          scratch, rs);
                const uint64_t got = qm_motion_sum_rows(rs, h);
                const uint64_t want = sad_direct(a, b, stride, w, h, bpc, rs_ref);
                CHECK(got == want && !memcmp(rs, rs_ref, (size_t)h * sizeof(*rs)),
                      "row SAD %dx%d %d-bit pattern %d: %llu, expected %llu",
                      w, h, bpc, pat, (unsigned long long)got,
                      (unsigned long long)want);
                ncmp++;
                free(a);
                free(b);
                free(scratch);
                free(rs);
                free(rs_ref);
            }
        }
    }
    printf("row-SAD stage: %d comparisons\n", ncmp);
}

/* ---- sequence rules through the engine ---- */

/* The whole-stream rules, written from the golden README's description
 * ("Motion in the v1 models") rather than from motion.c: default options
 * (hfr 0), or the _hfr models' five-frame window and moving average
 * (hfr 1); max 18 as the v1 models set it, 10000 (no clip) otherwise. */
static void temporal_ref(const double *score, int n, int hfr, double max,
                         double *m2, double *m3)
{
    if (!hfr) {
        for (int i = 0; i < n; i++) {
            if (i == 0)
                m2[i] = 0;
            else if (i + 1 < n)
                m2[i] = score[i] < score[i + 1] ? score[i] : score[i + 1];
            else
                m2[i] = score[i];
            const double x = i == 0 ? (n > 1 ? score[1] : 0) : m2[i];
            m3[i] = x < max ? x : max;
        }
        return;
    }
    double m[8];
    for (int i = 0; i < n; i++) {
        if (i < 2)
            m2[i] = 0;
        else if (i == n - 1)
            m2[i] = score[i];
        else if (i == 2)
            m2[i] = score[3];
        else
            m2[i] = score[i - 1] < score[i + 1] ? score[i - 1] : score[i + 1];
        m[i] = m2[i] < max ? m2[i] : max;
    }
    const double head = n > 2 ? (score[2] < max ? score[2] : max) : 0;
    for (int i = 0; i < n; i++) {
        if (i < 2)
            m[i] = head;
        m3[i] = i < 2 ? m[i] : (m[i] + m[i - 1]) / 2;
    }
}

static void check_sequence(int nframes, int threads, int hfr)
{
    const int w = 37, h = 21;
    const double max = hfr ? 18.0 : 10000.0;
    QmSettings s;
    qm_settings_default(&s, w, h, 8, QM_CHROMA_400);
    s.metrics = hfr ? "psnr" : "motion";
    if (hfr)  /* the _hfr models' motion options, as the engine's option text */
        s.features = "motion=motion_five_frame_window=true:"
                     "motion_moving_average=true:motion_max_val=18";
    s.n_threads = threads;
    QmEngine *e;
    char *err = NULL;
    int r = qm_engine_open(&e, &s, &err);
    CHECK(r == 0, "engine: %s", err ? err : "?");
    free(err);
    if (r)
        return;
    CHECK(qm_engine_delay(e) == (hfr ? 2u : 1u), "delay %u", qm_engine_delay(e));
    unsigned fs = 0, f2 = 0, f3 = 0, nmotion = 0;
    const char *sfx = hfr ? "_mffw_mmxv_18_mma" : "";
    char k_s[128], k_2[128], k_3[128];
    snprintf(k_s, sizeof(k_s), "VMAF_integer_feature_motion_sad_score%s", sfx);
    snprintf(k_2, sizeof(k_2), "integer_motion2%s", sfx);
    snprintf(k_3, sizeof(k_3), "integer_motion3%s", sfx);
    for (unsigned i = 0; i < qm_engine_n_features(e); i++) {
        const char *n = qm_engine_feature_name(e, i);
        nmotion += strstr(n, "motion") != NULL;
        if (!strcmp(n, k_s))
            fs = i;
        else if (!strcmp(n, k_2))
            f2 = i;
        else if (!strcmp(n, k_3))
            f3 = i;
    }
    /* libvmaf's keys and no others (no integer_motion) */
    CHECK(nmotion == 3 && fs != f2 && f2 != f3, "motion keys: %u, %s", nmotion,
          qm_engine_feature_name(e, fs));
    uint8_t *pics = malloc((size_t)(w * h * nframes));
    double score[8], m2[8], m3[8], got_s[8], got2[8], got3[8];
    int32_t *scratch = malloc(qm_motion_scratch_len(w) * sizeof(int32_t));
    uint32_t rs[21];
    const int step = hfr ? 2 : 1;
    for (int i = 0; i < nframes; i++) {
        /* a level shift per frame on the random picture makes scores that
         * differ and can exceed 18 */
        fill(pics + i * w * h, w, w, h, 8, PAT_RANDOM, 0);
        if (i % 3 == 1)
            memset(pics + i * w * h, 40 * i, (size_t)(w * h) / 2);
        score[i] = 0;
        if (i >= step) {
            qm_motion_row_sad_8(pics + (i - step) * w * h, w, pics + i * w * h,
                                w, w, h, 8, scratch, rs);
            score[i] = qm_motion_score(qm_motion_sum_rows(rs, h), w, h, 1.0,
                                       max);
        }
    }
    temporal_ref(score, nframes, hfr, max, m2, m3);
    {
        /* the shared whole-stream helper agrees with the README rules */
        double t2[8], t3[8];
        qm_motion_temporal(score, (size_t)nframes, hfr, hfr, 1.0, 40.0, max,
                           t2, t3);
        for (int i = 0; i < nframes; i++)
            CHECK(t2[i] == m2[i] && t3[i] == m3[i],
                  "qm_motion_temporal, %d frames, hfr %d, frame %d: (%g %g), "
                  "expected (%g %g)", nframes, hfr, i, t2[i], t3[i], m2[i],
                  m3[i]);
    }

    int got = 0;
    QmResult res;
    /* every frame, then the flush (i == nframes); the results as they come */
    for (int i = 0; i <= nframes; i++) {
        const bool flushed = i == nframes;
        if (flushed) {
            qm_engine_flush(e);
        } else {
            QmPicture p = { .w = w, .h = h, .bpc = 8, .chroma = QM_CHROMA_400,
                            .data = { pics + i * w * h }, .stride = { w } };
            CHECK(qm_engine_submit(e, &p, &p, NULL) == 0, "submit %d", i);
        }
        while (qm_engine_receive(e, &res, flushed) == 0) {
            got_s[got] = res.value[fs];
            got2[got] = res.value[f2];
            got3[got] = res.value[f3];
            CHECK(res.present[fs] && res.present[f2] && res.present[f3],
                  "frame %d: features missing", got);
            got++;
        }
    }
    CHECK(got == nframes, "%d frames received of %d", got, nframes);
    for (int i = 0; i < got && i < nframes; i++)
        CHECK(got_s[i] == score[i] && got2[i] == m2[i] && got3[i] == m3[i],
              "%d frames, %d threads, frame %d: (%g %g %g), expected (%g %g %g)",
              nframes, threads, i, got_s[i], got2[i], got3[i], score[i], m2[i],
              m3[i]);
    qm_engine_close(&e);
    free(pics);
    free(scratch);
}

int main(void)
{
    check_stage();
    for (int n = 1; n <= 8; n++) {
        for (int hfr = 0; hfr <= 1; hfr++) {
            check_sequence(n, 1, hfr);
            check_sequence(n, 2, hfr);
        }
    }
    /* host formulas at non-default options */
    CHECK(qm_motion_blend(50.0, 0.5, 40.0) == 50.0 * 0.5 + 0.5 * 40.0, "blend");
    {
        /* README: in a 3-frame _hfr stream only frame 2 has a score; every
         * frame's motion3 is then min(score[2], 18) */
        const double sc[3] = { 0, 0, 25.0 };
        double t2[3], t3[3];
        qm_motion_temporal(sc, 3, 1, 1, 1.0, 40.0, 18.0, t2, t3);
        CHECK(t2[0] == 0 && t2[1] == 0 && t2[2] == 25.0, "hfr 3 frames m2");
        CHECK(t3[0] == 18.0 && t3[1] == 18.0 && t3[2] == 18.0,
              "hfr 3 frames m3: %g %g %g", t3[0], t3[1], t3[2]);
        const double one[1] = { 0 };
        qm_motion_temporal(one, 1, 0, 0, 1.0, 40.0, 18.0, t2, t3);
        CHECK(t2[0] == 0 && t3[0] == 0, "one frame");
    }
    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
