/* tools/compare/frametable.c: the frame numbers of an encoded input from
 * its packets, on synthetic streams (no GStreamer pipeline).
 *
 * Streams are generated in presentation order (I, P and runs of 0..3
 * B-frames, key frames with open or closed GOPs) and emitted in decode
 * order as an encoder does (an anchor, then the B-frames shown before it).
 * Checked, for a few hundred random streams (seed printed):
 *   - a whole table numbers the frames in presentation order, leaving out
 *     what precedes the first key frame and its leading pictures;
 *   - reading stops early (with DTS, and without: Matroska) only once the
 *     frames below `need` are final: their numbers equal the whole table's;
 *   - the seek point of every frame is the last key frame (decode order)
 *     shown at or before it, and decoding from there gives exactly the
 *     frames from its rank on (none shown later is decoded before it);
 *   - a segment (edit list) leaves out what it clips, and the frame its
 *     start cuts is found at the segment's start;
 *   - refusals: packets without timestamps, two at one time, no key frame.
 */
#include <stdlib.h>
#include <string.h>

#include "../tools/compare/frametable.h"
#include "unit.h"

#define DUR (40 * GST_MSECOND)
#define MAXF 400

typedef struct {
    QmcPacket p[MAXF];
    int pres[MAXF];            /* the packet's presentation index */
    int n;
    int first_key;             /* presentation index of the first key frame: the
                                * frames shown before it are no frames */
    int shift;                 /* PTS = (presentation index + shift) frames */
} Stream;

static guint32 rng;
static guint32 rnd(guint32 n)
{
    rng = rng * 1664525u + 1013904223u;
    return (rng >> 8) % n;
}

/* The next packet in decode order: the frame shown at index pres (its
 * timestamps are set once the stream is complete). */
static void emit(Stream *s, int *d, int pres, gboolean key)
{
    s->pres[*d] = pres;
    s->p[*d].key = key;
    (*d)++;
}

/* The B-frames shown at lo .. hi - 1, in the order of a B-pyramid: the
 * middle one (a reference for the others) first, or in order. */
static void emit_bs(Stream *s, int *d, int lo, int hi, gboolean pyramid)
{
    int mid = lo + (hi - lo) / 2;
    if (lo >= hi)
        return;
    if (!pyramid || hi - lo < 3) {
        for (int b = lo; b < hi; b++)
            emit(s, d, b, FALSE);
        return;
    }
    emit(s, d, mid, FALSE);
    emit_bs(s, d, lo, mid, pyramid);
    emit_bs(s, d, mid + 1, hi, pyramid);
}

/* n frames in presentation order: anchors every 1..8 frames (B-frames
 * between them, in a pyramid or in order), a third of them key frames, half of those closing their
 * GOP (no B-frame shown right before them); emitted in decode order: an
 * anchor, then the B-frames shown between the previous anchor and it.
 * The stream starts with `lead` B-frames shown before its first anchor
 * (leading pictures of an open GOP the recording starts in), and with a
 * P-frame as that anchor when start_p (a recording cut inside a GOP). */
static void make_stream(Stream *s, int n, gboolean dts, int lead, gboolean start_p)
{
    char type[MAXF];
    int prev = -1, d = 0, anchors = 0, shift = 0;
    gboolean pyramid = rnd(2);

    memset(s, 0, sizeof(*s));
    memset(type, 'B', sizeof(type));
    for (int a = lead; a < n; a += 1 + (int)rnd(8))
        type[a] = 'A';
    type[n - 1] = 'A';
    s->first_key = -1;
    for (int a = lead; a < n; a++) {
        if (type[a] != 'A')
            continue;
        anchors++;
        if (anchors == 1)
            type[a] = start_p ? 'P' : 'I';
        else
            type[a] = (anchors == 2 && start_p) || rnd(3) == 0 ? 'I' : 'P';
        if (type[a] == 'I' && anchors > 1 && rnd(2) && type[a - 1] == 'B' && a - 1 > lead)
            type[a - 1] = 'P';
        if (type[a] == 'I' && s->first_key < 0)
            s->first_key = a;
    }
    for (int a = 0; a < n; a++) {
        if (type[a] == 'B')
            continue;
        emit(s, &d, a, type[a] == 'I');
        emit_bs(s, &d, prev + 1, a, pyramid);
        prev = a;
    }
    /* DTS in decode order; PTS shifted by the least that keeps every PTS
     * at or above its DTS (as MP4 muxers do): the DTS rule is then tight */
    for (int i = 0; i < d; i++)
        shift = MAX(shift, i - s->pres[i]);
    for (int i = 0; i < d; i++) {
        s->p[i].pts = (GstClockTime)(s->pres[i] + shift) * DUR;
        s->p[i].dts = dts ? (GstClockTime)i * DUR : GST_CLOCK_TIME_NONE;
        s->p[i].dur = DUR;
    }
    s->shift = shift;
    s->n = d;
}

/* The decode position of the packet shown at presentation index i. */
static int dec_pos(const Stream *s, int pres)
{
    for (int d = 0; d < s->n; d++)
        if (s->pres[d] == pres)
            return d;
    return -1;
}

static void check_stream(const Stream *s, gboolean dts)
{
    QmcFrameTable all;
    char *why = NULL;
    int expect = s->n - s->first_key;   /* frames of a decode from the start */

    qmc_frame_table_init(&all, G_MAXUINT64);
    for (int d = 0; d < s->n; d++)
        CHECK(qmc_frame_table_add(&all, &s->p[d]), "a whole table stopped at packet %d", d);
    CHECK(qmc_frame_table_finish(&all, &why), "finish: %s", why ? why : "");
    g_free(why);
    CHECK((int)qmc_frame_table_count(&all) == expect, "%u frames, expected %d",
          (unsigned)qmc_frame_table_count(&all), expect);
    /* frame r is the one shown r-th after the first key frame */
    for (int pres = 0; pres < s->n; pres++) {
        gint64 r = qmc_frame_table_lookup(&all, (GstClockTime)(pres + s->shift) * DUR);
        CHECK(pres < s->first_key ? r == QMC_FT_EXCLUDED : r == pres - s->first_key,
              "frame shown %d numbered %" G_GINT64_FORMAT, pres, r);
    }
    CHECK(qmc_frame_table_lookup(&all, 1) == QMC_FT_UNKNOWN, "a time no packet has");

    /* early stops: the frames below need are final */
    for (int need = 1; need <= expect; need += 1 + (int)rnd(7)) {
        QmcFrameTable t;
        int d = 0;
        qmc_frame_table_init(&t, (guint64)need);
        while (d < s->n && qmc_frame_table_add(&t, &s->p[d]))
            d++;
        CHECK(qmc_frame_table_finish(&t, &why), "finish at need %d", need);
        g_free(why);
        for (int r = 0; r < need; r++)
            CHECK(r < (int)t.frames->len && g_array_index(t.frames, GstClockTime, r) ==
                  g_array_index(all.frames, GstClockTime, r),
                  "need %d (%s DTS), stopped after %d of %d packets: frame %d differs",
                  need, dts ? "with" : "no", d, s->n, r);
        qmc_frame_table_clear(&t);
    }

    /* seek points */
    for (int r = 0; r < expect; r++) {
        QmcSeekPoint sp;
        int kd = -1;
        GstClockTime want = g_array_index(all.frames, GstClockTime, r);
        CHECK(qmc_frame_table_seek_point(&all, (guint64)r, &sp), "no seek point for %d", r);
        for (int d = 0; d < s->n; d++)
            if (s->p[d].key && s->p[d].pts <= want)
                kd = d;
        CHECK(kd >= 0 && sp.pts == s->p[kd].pts, "frame %d: key frame %" GST_TIME_FORMAT
              ", expected the one at decode position %d", r, GST_TIME_ARGS(sp.pts), kd);
        CHECK(sp.from_start == (kd == dec_pos(s, s->first_key)), "frame %d: from_start", r);
        CHECK(sp.rank <= (guint64)r, "frame %d: decoding starts at frame %" G_GUINT64_FORMAT, r,
              sp.rank);
        /* from the key frame on, every frame of rank >= sp.rank is decoded,
         * and only those are shown at or after it */
        for (int d = 0; d < s->n; d++) {
            gint64 fr = qmc_frame_table_lookup(&all, s->p[d].pts);
            if (fr >= (gint64)sp.rank)
                CHECK(d >= kd, "frame %" G_GINT64_FORMAT " is decoded before key frame %d",
                      fr, kd);
            if (d >= kd && s->p[d].pts < sp.pts)
                CHECK(fr < (gint64)sp.rank, "a leading picture got rank %" G_GINT64_FORMAT, fr);
        }
        CHECK(sp.position == sp.pts, "no segment: the seek position is the key frame's time");
    }
    {
        QmcSeekPoint sp;
        CHECK(!qmc_frame_table_seek_point(&all, (guint64)expect, &sp), "a seek past the end");
    }
    qmc_frame_table_clear(&all);
}

/* An edit list: the segment starts inside frame `cut` (shown index) and
 * stops after frame `last`. */
static void check_segment(const Stream *s, int cut, int last)
{
    QmcFrameTable t;
    char *why = NULL;

    qmc_frame_table_init(&t, G_MAXUINT64);
    gst_segment_init(&t.segment, GST_FORMAT_TIME);
    t.segment.start = (GstClockTime)(cut + s->shift) * DUR + DUR / 2;
    t.segment.stop = (GstClockTime)(last + s->shift + 1) * DUR;
    t.segment.time = 0;
    for (int d = 0; d < s->n; d++)
        qmc_frame_table_add(&t, &s->p[d]);
    CHECK(qmc_frame_table_finish(&t, &why), "segment: %s", why ? why : "");
    g_free(why);
    CHECK((int)qmc_frame_table_count(&t) == last - cut + 1, "segment %d..%d: %u frames", cut,
          last, (unsigned)qmc_frame_table_count(&t));
    /* the cut frame comes out of the decoder at the segment's start */
    CHECK(qmc_frame_table_lookup(&t, t.segment.start) == 0, "the cut frame");
    CHECK(qmc_frame_table_lookup(&t, (GstClockTime)(cut + s->shift) * DUR) == 0, "the cut frame's PTS");
    CHECK(qmc_frame_table_lookup(&t, (GstClockTime)(cut + s->shift - 1) * DUR) == QMC_FT_EXCLUDED,
          "the frame before the segment");
    CHECK(qmc_frame_table_lookup(&t, (GstClockTime)(last + s->shift + 1) * DUR) == QMC_FT_EXCLUDED,
          "the frame after the segment");
    CHECK(qmc_frame_table_lookup(&t, (GstClockTime)(last + s->shift) * DUR) == last - cut,
          "the segment's last frame");
    for (int r = 0; r <= last - cut; r++) {
        QmcSeekPoint sp;
        if (qmc_frame_table_seek_point(&t, (guint64)r, &sp) && !sp.from_start)
            CHECK(sp.position == MAX(sp.pts, t.segment.start) - t.segment.start,
                  "the seek position is the key frame's stream time (or the segment's start)");
    }
    qmc_frame_table_clear(&t);
}

static gboolean refused(const QmcPacket *p, int n, const char *want)
{
    QmcFrameTable t;
    char *why = NULL;
    gboolean ok;

    qmc_frame_table_init(&t, G_MAXUINT64);
    for (int i = 0; i < n; i++)
        qmc_frame_table_add(&t, &p[i]);
    ok = !qmc_frame_table_finish(&t, &why) && why && strstr(why, want);
    if (!ok)
        printf("expected a refusal with '%s', got: %s\n", want, why ? why : "none");
    g_free(why);
    qmc_frame_table_clear(&t);
    return ok;
}

int main(void)
{
    const GstClockTime N = GST_CLOCK_TIME_NONE;
    const char *seed = getenv("FRAMETABLE_SEED");
    Stream s;
    int streams = 0;

    rng = seed ? (guint32)strtoul(seed, NULL, 10) : 20261128u;
    printf("seed %u (FRAMETABLE_SEED)\n", rng);
    for (int i = 0; i < 300; i++) {
        gboolean dts = i % 2;
        int n = 8 + (int)rnd(160);
        make_stream(&s, n, dts, (int)rnd(3), rnd(4) == 0);
        check_stream(&s, dts);
        if (n > 20)
            check_segment(&s, s.first_key + 1 + (int)rnd(5), n - 2 - (int)rnd(5));
        streams++;
        if (failures) {
            printf("stream %d (%d packets) failed\n", i, s.n);
            break;
        }
    }
    {
        const QmcPacket no_pts[] = { { 0, 0, DUR, TRUE }, { N, DUR, DUR, FALSE } };
        const QmcPacket twice[] = { { 0, 0, DUR, TRUE }, { DUR, DUR, DUR, FALSE },
                                    { DUR, 2 * DUR, DUR, FALSE } };
        const QmcPacket no_key[] = { { 0, 0, DUR, FALSE }, { DUR, DUR, DUR, FALSE } };
        CHECK(refused(no_pts, 2, "carry no timestamp"), "no PTS");
        CHECK(refused(twice, 3, "have the timestamp"), "two packets at one time");
        CHECK(refused(no_key, 2, "key frame"), "no key frame");
        CHECK(refused(no_key, 0, "no video packets"), "no packets");
    }
    printf("frametable: %d streams, %d failed checks\n", streams, failures);
    return failures ? 1 : 0;
}
