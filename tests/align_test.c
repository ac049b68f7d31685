/* tools/compare/align.c: the offset search on synthetic sequences.
 *
 * A moving texture (8x8 random blocks panning 3 pixels right and 1 down a
 * frame, plus a bright square crossing it) is cut into a reference and a
 * distorted sequence that start at different frames: the search must find
 * exactly that offset, positive and negative, through noise and through a
 * downscale to another size; a still picture and content that repeats
 * within the range must come out with low confidence; short and mismatched
 * inputs are refused with a sentence.
 */
#include "../tools/compare/align.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;
#define CHECK(cond, ...)                                                                     \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fails++;                                                                         \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                           \
            printf(__VA_ARGS__);                                                             \
            printf("\n");                                                                    \
        }                                                                                    \
    } while (0)

typedef struct {
    QmcLumaSeq s;
    uint8_t **buf;
} Seq;

static uint32_t rng = 1;
static uint32_t next_rand(void)
{
    rng = rng * 1664525u + 1013904223u; /* Numerical Recipes' LCG: reproducible everywhere */
    return rng >> 8;
}

/* texture: (TW / 8) x (TH / 8) random blocks */
#define TW 512
#define TH 384
static uint8_t texture[TH / 8][TW / 8];

static void make_texture(void)
{
    rng = 12345;
    for (int y = 0; y < TH / 8; y++)
        for (int x = 0; x < TW / 8; x++)
            texture[y][x] = (uint8_t)(16 + next_rand() % 220);
}

/* frame t of the moving content, w x h; period > 0: t taken modulo it */
static void draw(uint8_t *p, int w, int h, int t, int period)
{
    if (period)
        t %= period;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int tx = (x + 3 * t) % TW, ty = (y + t) % TH;
            int sq = x >= 4 * t % w && x < 4 * t % w + w / 6 && y >= h / 3 && y < h / 3 + h / 6;
            p[y * w + x] = sq ? 235 : texture[ty / 8][tx / 8];
        }
}

static void add_noise(uint8_t *p, size_t n, int amp)
{
    for (size_t i = 0; i < n; i++) {
        int v = p[i] + (int)(next_rand() % (2 * amp + 1)) - amp;
        p[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}

/* frames first .. first + n - 1; speed 0: the still picture of frame 0 */
static Seq make_seq(int w, int h, int first, int n, int speed, int period, int noise)
{
    Seq q;
    q.buf = calloc(n, sizeof(uint8_t *));
    for (int i = 0; i < n; i++) {
        q.buf[i] = malloc((size_t)w * h);
        draw(q.buf[i], w, h, speed ? first + i : 0, period);
        if (noise)
            add_noise(q.buf[i], (size_t)w * h, noise);
    }
    q.s.width = w;
    q.s.height = h;
    q.s.n = n;
    q.s.frame = (const uint8_t *const *)q.buf;
    return q;
}

static void free_seq(Seq *q)
{
    for (int i = 0; i < q->s.n; i++)
        free(q->buf[i]);
    free(q->buf);
}

/* each picture of q brought to gw x gh by qmc_align_downscale */
static Seq downscaled(const Seq *q, int gw, int gh)
{
    Seq d;
    d.buf = calloc(q->s.n, sizeof(uint8_t *));
    for (int i = 0; i < q->s.n; i++) {
        d.buf[i] = malloc((size_t)gw * gh);
        qmc_align_downscale(q->buf[i], q->s.width, q->s.width, q->s.height, d.buf[i], gw, gh);
    }
    d.s.width = gw;
    d.s.height = gh;
    d.s.n = q->s.n;
    d.s.frame = (const uint8_t *const *)d.buf;
    return d;
}

/* the reference starts at frame rfirst, the distorted at dfirst: offset dfirst - rfirst */
static void exact_offset(int rfirst, int dfirst, int noise, int max, int window)
{
    Seq r = make_seq(96, 64, rfirst, 60, 1, 0, 0), d = make_seq(96, 64, dfirst, 60, 1, 0, noise);
    QmcAlignResult res;
    char err[256];
    int rc = qmc_align_detect(&r.s, &d.s, max, window, &res, err, sizeof(err));
    CHECK(rc == 0, "%s", err);
    if (rc == 0) {
        CHECK(res.offset == dfirst - rfirst, "offset %d, expected %d", res.offset,
              dfirst - rfirst);
        CHECK(res.confidence >= QMC_ALIGN_MIN_CONFIDENCE && !res.is_static,
              "offset %d noise %d: confidence %.3f static %d", dfirst - rfirst, noise,
              res.confidence, res.is_static);
        CHECK(abs(res.second_offset - res.offset) >= 1, "second %d", res.second_offset);
        CHECK(res.max_offset == max && !res.narrowed, "max %d", res.max_offset);
        CHECK(res.window == window, "window %d", res.window);
        CHECK(res.psnr_best >= res.psnr_second && res.psnr_second >= res.psnr_median, "order");
        if (!noise)
            CHECK(res.psnr_best == QMC_ALIGN_PSNR_CAP && res.confidence > 0.99,
                  "exact copy: %.2f dB, confidence %.4f", res.psnr_best, res.confidence);
        printf("offset %+3d noise %2d: found %+3d, confidence %.4f (best %.2f dB, second %.2f "
               "dB at %+d, median %.2f dB)\n", dfirst - rfirst, noise, res.offset,
               res.confidence, res.psnr_best, res.psnr_second, res.second_offset,
               res.psnr_median);
    }
    qmc_align_result_clear(&res);
    free_seq(&r);
    free_seq(&d);
}

static void still_content(int noise)
{
    Seq r = make_seq(96, 64, 0, 40, 0, 0, noise), d = make_seq(96, 64, 0, 40, 0, 0, noise);
    QmcAlignResult res;
    char err[256];
    int rc = qmc_align_detect(&r.s, &d.s, 10, 30, &res, err, sizeof(err));
    CHECK(rc == 0, "%s", err);
    if (rc == 0) {
        CHECK(res.is_static, "still picture (noise %d) not flagged: best %.2f median %.2f", noise,
              res.psnr_best, res.psnr_median);
        CHECK(res.confidence < QMC_ALIGN_MIN_CONFIDENCE, "still picture: confidence %.3f",
              res.confidence);
        if (!noise)
            CHECK(res.offset == 0 && res.confidence == 0, "identical stills: offset %d, "
                  "confidence %.3f", res.offset, res.confidence);
        printf("still, noise %d: offset %+d, confidence %.4f, spread %.3f dB\n", noise,
               res.offset, res.confidence, res.psnr_best - res.psnr_median);
    }
    qmc_align_result_clear(&res);
    free_seq(&r);
    free_seq(&d);
}

/* content that repeats every 4 frames: offsets 4 apart are alike */
static void periodic_content(void)
{
    Seq r = make_seq(96, 64, 0, 50, 1, 4, 0), d = make_seq(96, 64, 1, 50, 1, 4, 0);
    QmcAlignResult res;
    char err[256];
    int rc = qmc_align_detect(&r.s, &d.s, 10, 30, &res, err, sizeof(err));
    CHECK(rc == 0, "%s", err);
    if (rc == 0) {
        CHECK(res.confidence < QMC_ALIGN_MIN_CONFIDENCE && !res.is_static,
              "periodic: confidence %.3f static %d", res.confidence, res.is_static);
        CHECK(res.offset == 1 && abs(res.second_offset - 1) % 4 == 0,
              "periodic: best %d, second %d", res.offset, res.second_offset);
    }
    qmc_align_result_clear(&res);
    free_seq(&r);
    free_seq(&d);
}

/* a 256x192 reference, a 160x120 rendition of it starting 4 frames later,
 * both on the grid qmc_align_grid chooses */
static void other_size(void)
{
    Seq full = make_seq(256, 192, 0, 50, 1, 0, 0), dfull = make_seq(256, 192, 4, 50, 1, 0, 0);
    Seq small = downscaled(&dfull, 160, 120), gr, gd;
    QmcAlignResult res;
    char err[256];
    int gw, gh, rc;

    qmc_align_grid(256, 192, 160, 120, &gw, &gh);
    CHECK(gw == 64 && gh == 48, "grid %dx%d", gw, gh);
    gr = downscaled(&full, gw, gh);
    gd = downscaled(&small, gw, gh);
    rc = qmc_align_detect(&gr.s, &gd.s, 12, 30, &res, err, sizeof(err));
    CHECK(rc == 0, "%s", err);
    if (rc == 0) {
        CHECK(res.offset == 4 && res.confidence >= QMC_ALIGN_MIN_CONFIDENCE,
              "other size: offset %d confidence %.3f", res.offset, res.confidence);
        printf("256x192 vs 160x120 on %dx%d: offset %+d, confidence %.4f\n", gw, gh, res.offset,
               res.confidence);
    }
    qmc_align_result_clear(&res);
    free_seq(&full);
    free_seq(&dfull);
    free_seq(&small);
    free_seq(&gr);
    free_seq(&gd);
}

static void short_inputs(void)
{
    Seq r9 = make_seq(32, 32, 0, 9, 1, 0, 0), d9 = make_seq(32, 32, 1, 9, 1, 0, 0);
    Seq r8 = make_seq(32, 32, 0, 8, 1, 0, 0), other = make_seq(48, 32, 0, 20, 1, 0, 0);
    QmcAlignResult res;
    char err[256] = "";
    int rc;

    /* 9 frames: one frame of offset either way, a window of 8 */
    rc = qmc_align_detect(&r9.s, &d9.s, 30, 60, &res, err, sizeof(err));
    CHECK(rc == 0, "%s", err);
    if (rc == 0)
        CHECK(res.narrowed && res.max_offset == 1 && res.window == 8 && res.offset == 1,
              "9 frames: narrowed %d max %d window %d offset %d", res.narrowed, res.max_offset,
              res.window, res.offset);
    qmc_align_result_clear(&res);
    rc = qmc_align_detect(&r8.s, &d9.s, 30, 60, &res, err, sizeof(err));
    CHECK(rc == -1 && strstr(err, "too short") && strstr(err, "has 8 frames") && !res.psnr,
          "8 frames: rc %d, '%s'", rc, err);
    rc = qmc_align_detect(&r9.s, &other.s, 30, 60, &res, err, sizeof(err));
    CHECK(rc == -1 && strstr(err, "differ in size"), "sizes: rc %d, '%s'", rc, err);
    free_seq(&r9);
    free_seq(&d9);
    free_seq(&r8);
    free_seq(&other);
}

static void downscale_and_grid(void)
{
    uint8_t src[7 * 5], dst[3 * 2];
    int gw, gh;

    /* a constant picture stays constant whatever the cells' sizes */
    memset(src, 77, sizeof(src));
    qmc_align_downscale(src, 7, 7, 5, dst, 3, 2);
    for (int i = 0; i < 6; i++)
        CHECK(dst[i] == 77, "constant: %d at %d", dst[i], i);
    /* 2x2 cells: the rounded mean */
    {
        const uint8_t s[] = { 0, 1, 10, 10, 2, 2, 10, 11 };
        uint8_t d[2];
        qmc_align_downscale(s, 4, 4, 2, d, 2, 1);
        CHECK(d[0] == 1 && d[1] == 10, "means %d %d", d[0], d[1]); /* 5/4 -> 1, 41/4 -> 10 */
    }
    qmc_align_grid(1920, 1080, 1280, 720, &gw, &gh);
    CHECK(gw == 240 && gh == 135, "1080p grid %dx%d", gw, gh);
    qmc_align_grid(320, 240, 320, 240, &gw, &gh);
    CHECK(gw == 64 && gh == 48, "320x240 grid %dx%d", gw, gh);
    qmc_align_grid(40, 30, 40, 30, &gw, &gh);
    CHECK(gw == 40 && gh == 30, "tiny grid %dx%d", gw, gh);
    qmc_align_grid(1920, 1080, 48, 20, &gw, &gh);
    CHECK(gw == 48 && gh == 20, "small distorted grid %dx%d", gw, gh);
}

int main(void)
{
    make_texture();
    exact_offset(0, 5, 0, 10, 40);   /* distorted lacks the first 5 frames */
    exact_offset(3, 0, 0, 10, 40);   /* distorted has 3 extra frames in front */
    exact_offset(0, 0, 0, 10, 40);
    exact_offset(0, 7, 12, 15, 30);  /* through noise (about 37 dB) */
    exact_offset(9, 0, 12, 15, 30);
    exact_offset(0, 15, 0, 15, 30);  /* at the edge of the range */
    exact_offset(15, 0, 0, 15, 30);
    still_content(0);
    still_content(6);
    periodic_content();
    other_size();
    short_inputs();
    downscale_and_grid();
    if (fails) {
        printf("align: %d failure(s)\n", fails);
        return 1;
    }
    printf("align: ok\n");
    return 0;
}
