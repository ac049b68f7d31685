/* gst-qmetric: the partial file writer and reader (core/partial.c) as a
 * writer without an engine uses them (qmetric-compare: rows first, the
 * inputs and the element's settings at the end).
 *
 * - inputs and settings given after the rows are recorded; settings come
 *   back sorted, values and rows bit for bit;
 * - of the frame hashes given (every frame read, the end not known while
 *   reading), exactly those within QM_CHUNK_CONTEXT of the chunk's ends
 *   are kept;
 * - a writer that never set an input leaves no valid file (QM_EINVAL);
 *   a settings line without '=' is refused;
 * - two parts of the same record compare equal; one setting changed, or
 *   present in one only, is named.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "partial.h"
#include "unit.h"

static const char *const names[] = { "psnr_y", "vmaf" };

static QmPartialInput input(const char *fp)
{
    QmPartialInput in;
    memset(&in, 0, sizeof(in));
    in.w = 64;
    in.h = 48;
    strcpy(in.format, "I420_10LE");
    in.bitdepth = 10;
    in.bytes = 123456;
    snprintf(in.fingerprint, sizeof(in.fingerprint), "%064d", 0);
    memcpy(in.fingerprint, fp, strlen(fp));
    return in;
}

/* A chunk of frames start .. start + n - 1 read with its context and one
 * frame of look-ahead; settings given as lines, after the rows. */
static int write_chunk(const char *path, uint64_t start, unsigned n, const char *lines,
                       bool with_inputs)
{
    char *err = NULL;
    QmPartialWriter *w = qm_partial_open(path, "qmetric-compare", 2, names, 64, 48, start, &err);
    CHECK(w, "open %s: %s", path, err ? err : "");
    free(err);
    if (!w)
        return -1;
    const uint64_t first = start > 20 ? start - 20 : 0;
    for (uint64_t f = first; f <= start + n; f++) {
        CHECK(qm_partial_frame_hash(w, f, f * 3 + 1, f * 5 + 2) == 0, "hash of frame %" PRIu64, f);
        if (f >= start && f < start + n) {
            const double v[2] = { 40.0 + f / 3.0, f == start ? INFINITY : 90.0 + f / 7.0 };
            const uint8_t set[2] = { 1, f != start + 1 };
            CHECK(qm_partial_row(w, v, set) == 0, "row %" PRIu64, f);
        }
    }
    CHECK(qm_partial_frame_hash(w, start, 0, 0) == QM_EINVAL, "a frame hashed twice");
    if (with_inputs) {
        QmPartialInput r = input("aa"), d = input("bb");
        CHECK(qm_partial_set_input(w, QM_PARTIAL_REFERENCE, &r) == 0 &&
              qm_partial_set_input(w, QM_PARTIAL_DISTORTED, &d) == 0, "inputs");
        CHECK(qm_partial_set_lines(w, lines) == 0, "settings lines");
        CHECK(qm_partial_set(w, "scale", "none") == 0, "a setting");
    }
    return qm_partial_close(w, false, 0.5);
}

int main(void)
{
    char dir[] = "/tmp/qm_partial_test_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char a[300], b[300], c[300], d[300], none[300];
    snprintf(a, sizeof(a), "%s/a.json", dir);
    snprintf(b, sizeof(b), "%s/b.json", dir);
    snprintf(c, sizeof(c), "%s/c.json", dir);
    snprintf(d, sizeof(d), "%s/d.json", dir);
    snprintf(none, sizeof(none), "%s/none.json", dir);
    const char *lines = "subsample=1\nbackend=cpu\nmetrics=psnr,vmaf\n";

    CHECK(write_chunk(a, 0, 30, lines, true) == 0, "chunk a");
    CHECK(write_chunk(b, 30, 25, lines, true) == 0, "chunk b");
    CHECK(write_chunk(c, 30, 25, "subsample=2\nbackend=cpu\nmetrics=psnr,vmaf", true) == 0,
          "chunk c");
    CHECK(write_chunk(d, 30, 25, "subsample=1\nbackend=cpu\nmetrics=psnr,vmaf\nextra=1", true) == 0,
          "chunk d");
    CHECK(write_chunk(none, 0, 30, lines, false) == QM_EINVAL, "no inputs: not QM_EINVAL");

    QmPartial pa, pb, pc, pd, pn;
    char err[600];
    CHECK(qm_partial_load(&pa, a, err, sizeof(err)) == 0, "load a: %s", err);
    CHECK(qm_partial_load(&pb, b, err, sizeof(err)) == 0, "load b: %s", err);
    CHECK(qm_partial_load(&pc, c, err, sizeof(err)) == 0, "load c: %s", err);
    CHECK(qm_partial_load(&pd, d, err, sizeof(err)) == 0, "load d: %s", err);
    CHECK(qm_partial_load(&pn, none, err, sizeof(err)) < 0, "a file without inputs loads");
    printf("without inputs: %s\n", err);

    /* the record as given */
    CHECK(!strcmp(pb.tool, "qmetric-compare") && pb.start == 30 && pb.frames == 25 &&
          pb.w == 64 && pb.h == 48 && pb.n_features == 2 && !strcmp(pb.features[1], "vmaf"),
          "header fields");
    CHECK(!strcmp(pb.input[0].format, "I420_10LE") && pb.input[0].bitdepth == 10 &&
          pb.input[1].bytes == 123456 && !strncmp(pb.input[1].fingerprint, "bb00", 4),
          "inputs");
    static const char *const keys[] = { "backend", "metrics", "scale", "subsample" };
    CHECK(pb.n_settings == 4, "%u settings", pb.n_settings);
    for (unsigned i = 0; i < pb.n_settings && i < 4; i++)
        CHECK(!strcmp(pb.set_key[i], keys[i]), "setting %u is %s, not %s", i, pb.set_key[i],
              keys[i]);
    /* rows bit for bit, absent values absent */
    for (unsigned r = 0; r < pb.frames; r++) {
        const uint64_t f = pb.start + r;
        CHECK(pb.values[2 * r] == 40.0 + f / 3.0, "row %u psnr_y", r);
        CHECK(pb.present[2 * r + 1] == (f != pb.start + 1), "row %u vmaf present", r);
        if (pb.present[2 * r + 1])
            CHECK(f == pb.start ? isinf(pb.values[2 * r + 1])
                                : pb.values[2 * r + 1] == 90.0 + f / 7.0, "row %u vmaf", r);
    }
    /* hashes: frames 22..37 (context and first 8) and 47..62 (last 8 and
     * the look-ahead read) of b, and nothing else */
    unsigned want = 0;
    for (uint64_t f = 10; f <= 55; f++) {
        const bool kept = (f >= 22 && f < 38) || (f >= 47 && f < 63);
        want += kept;
        unsigned i = 0;
        while (i < pb.n_hashes && pb.hashes[i].frame != f)
            i++;
        CHECK(kept == (i < pb.n_hashes), "frame %" PRIu64 " kept %d", f, i < pb.n_hashes);
        if (i < pb.n_hashes)
            CHECK(pb.hashes[i].hash[0] == f * 3 + 1 && pb.hashes[i].hash[1] == f * 5 + 2,
                  "frame %" PRIu64 "'s hashes", f);
    }
    CHECK(pb.n_hashes == want, "%u hashes, want %u", pb.n_hashes, want);

    /* comparisons */
    CHECK(qm_partial_compare(&pb, &pa, err, sizeof(err)) == 0, "same record: %s", err);
    CHECK(qm_partial_compare_frames(&pb, &pa, err, sizeof(err)) == 0, "same frames: %s", err);
    CHECK(qm_partial_compare(&pc, &pa, err, sizeof(err)) < 0 &&
          !strcmp(err, "settings.subsample: 2 against 1"), "subsample: %s", err);
    CHECK(qm_partial_compare(&pd, &pa, err, sizeof(err)) < 0 &&
          !strcmp(err, "settings.extra: 1 against (not set)"), "extra setting: %s", err);
    CHECK(qm_partial_compare(&pa, &pd, err, sizeof(err)) < 0 &&
          !strcmp(err, "settings.extra: (not set) against 1"), "missing setting: %s", err);

    {   /* a settings line without '=' */
        char *e = NULL;
        QmPartialWriter *w = qm_partial_open(none, "t", 2, names, 64, 48, 0, &e);
        CHECK(w && qm_partial_set_lines(w, "backend=cpu\nnovalue\n") == QM_EINVAL,
              "a line without '='");
        CHECK(w && qm_partial_set_lines(w, "=x") == QM_EINVAL, "an empty key");
        if (w)
            qm_partial_close(w, false, 0);
        free(e);
    }
    qm_partial_free(&pa);
    qm_partial_free(&pb);
    qm_partial_free(&pc);
    qm_partial_free(&pd);
    unlink(a);
    unlink(b);
    unlink(c);
    unlink(d);
    unlink(none);
    rmdir(dir);
    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
