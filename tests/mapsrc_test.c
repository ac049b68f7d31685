/* tools/compare/mapsrc.c: raw and Y4M files read in place give the caps and
 * the pictures that filesrc ! rawvideoparse and filesrc ! y4mdec give (the
 * readers qmetric-compare used before), for odd sizes, several formats and
 * frame lines with parameters; 10- and 12-bit Y4M (which 1.22's y4mdec
 * does not read) give the pictures of the same bytes read as raw; a file cut
 * inside a frame drops that frame with a warning; a bad frame line is an
 * error that names its byte; a Y4M stream on a pipe is read by frames,
 * anything else left in the pipe untouched.  No GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include "../tools/compare/mapsrc.h"
#include "pipe_feed.h"
#include "unit.h"

static char dir[] = "/tmp/qm-mapsrc-XXXXXX";

typedef struct Run {
    GPtrArray *frames;   /* GstSample */
    char *caps;
    char *error, *warning;
} Run;

static void run_free(Run *r)
{
    g_ptr_array_unref(r->frames);
    g_free(r->caps);
    g_free(r->error);
    g_free(r->warning);
}

/* Every frame `head` gives (an element or a description), into a sink. */
static Run run_pipeline(GstElement *head, const char *desc)
{
    Run r = { g_ptr_array_new_with_free_func((GDestroyNotify)gst_sample_unref), NULL, NULL, NULL };
    GstElement *pipe = gst_pipeline_new(NULL), *sink = gst_element_factory_make("appsink", NULL);
    GstBus *bus;
    GstSample *s;
    g_object_set(sink, "sync", FALSE, NULL);
    if (!head) {
        GError *err = NULL;
        head = gst_parse_bin_from_description(desc, TRUE, &err);
        if (!head) {
            fprintf(stderr, "%s: %s\n", desc, err->message);
            exit(1);
        }
    }
    gst_bin_add_many(GST_BIN(pipe), head, sink, NULL);
    gst_element_link(head, sink);
    gst_element_set_state(pipe, GST_STATE_PLAYING);
    while ((s = gst_app_sink_pull_sample(GST_APP_SINK(sink)))) {
        if (!r.caps)
            r.caps = gst_caps_to_string(gst_sample_get_caps(s));
        g_ptr_array_add(r.frames, s);
    }
    bus = gst_element_get_bus(pipe);
    for (GstMessage *m; (m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR | GST_MESSAGE_WARNING));) {
        GError *e = NULL;
        char *dbg = NULL;
        if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
            gst_message_parse_error(m, &e, &dbg);
            if (!r.error)
                r.error = g_strdup(e->message);
        } else {
            gst_message_parse_warning(m, &e, &dbg);
            if (!r.warning)
                r.warning = g_strdup(e->message);
        }
        g_clear_error(&e);
        g_free(dbg);
        gst_message_unref(m);
    }
    gst_object_unref(bus);
    gst_element_set_state(pipe, GST_STATE_NULL);
    gst_object_unref(pipe);
    return r;
}

/* Whether two frames hold the same pictures, each through its own layout:
 * plane p has rows[p] rows of bytes[p] bytes. */
static int n_rows[GST_VIDEO_MAX_PLANES], row_bytes[GST_VIDEO_MAX_PLANES], n_planes;

static gboolean same_pictures(GstSample *a, GstSample *b)
{
    GstVideoInfo ia, ib;
    GstVideoFrame fa, fb;
    gboolean same = TRUE;
    gst_video_info_from_caps(&ia, gst_sample_get_caps(a));
    gst_video_info_from_caps(&ib, gst_sample_get_caps(b));
    if (!gst_video_frame_map(&fa, &ia, gst_sample_get_buffer(a), GST_MAP_READ))
        return FALSE;
    if (!gst_video_frame_map(&fb, &ib, gst_sample_get_buffer(b), GST_MAP_READ)) {
        gst_video_frame_unmap(&fa);
        return FALSE;
    }
    for (int p = 0; p < n_planes && same; p++)
        for (int y = 0; y < n_rows[p] && same; y++)
            same = !memcmp((guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&fa, p) + y * GST_VIDEO_FRAME_PLANE_STRIDE(&fa, p),
                           (guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&fb, p) + y * GST_VIDEO_FRAME_PLANE_STRIDE(&fb, p),
                           (size_t)row_bytes[p]);
    gst_video_frame_unmap(&fa);
    gst_video_frame_unmap(&fb);
    return same;
}

/* The tight layout of one frame (as qmetric-compare's qmc_raw_layout). */
static gsize layout(GstVideoFormat fmt, int w, int h, int *strides, int *offsets, int *np)
{
    const GstVideoFormatInfo *fi = gst_video_format_get_info(fmt);
    gsize off = 0;
    *np = n_planes = GST_VIDEO_FORMAT_INFO_N_PLANES(fi);
    for (int p = 0; p < *np; p++) {
        guint c = 0;
        while (GST_VIDEO_FORMAT_INFO_PLANE(fi, c) != (guint)p)
            c++;
        strides[p] = GST_VIDEO_FORMAT_INFO_SCALE_WIDTH(fi, c, w) * GST_VIDEO_FORMAT_INFO_PSTRIDE(fi, c);
        offsets[p] = (int)off;
        off += (gsize)strides[p] * GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT(fi, c, h);
        n_rows[p] = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT(fi, c, h);
        row_bytes[p] = strides[p];
    }
    return off;
}

/* n frames of random bytes (samples of `bits` bits for 16-bit formats), as
 * a raw file and as a Y4M file with header `hdr`; frame k's line carries
 * parameters when params is set. */
static void write_files(const char *raw, const char *y4m, const char *hdr, gsize frame, int n,
                        int bits, gboolean params)
{
    FILE *fr = fopen(raw, "wb"), *fy = fopen(y4m, "wb");
    guint8 *buf = g_malloc(frame);
    fprintf(fy, "%s\n", hdr);
    for (int k = 0; k < n; k++) {
        for (gsize i = 0; i < frame; i++)
            buf[i] = (guint8)g_random_int();
        if (bits > 8)
            for (gsize i = 0; i + 1 < frame; i += 2)
                buf[i + 1] &= (guint8)((1 << (bits - 8)) - 1);
        fwrite(buf, 1, frame, fr);
        if (params && k % 2)
            fprintf(fy, "FRAME Ixyz XCOMMENT=%d\n", k);
        else
            fputs("FRAME\n", fy);
        fwrite(buf, 1, frame, fy);
    }
    fclose(fr);
    fclose(fy);
    g_free(buf);
}

static void check_same(const char *what, Run *a, Run *b, gboolean caps)
{
    CHECK(a->frames->len == b->frames->len && a->frames->len > 0,
          "%s: %u frames in place, %u the other way", what, a->frames->len, b->frames->len);
    if (caps)
        CHECK(a->caps && b->caps && !strcmp(a->caps, b->caps), "%s: caps\n  in place: %s\n  other:    %s",
              what, a->caps, b->caps);
    for (guint k = 0; k < MIN(a->frames->len, b->frames->len); k++)
        CHECK(same_pictures(a->frames->pdata[k], b->frames->pdata[k]), "%s: frame %u differs", what, k);
    CHECK(!a->error && !b->error, "%s: error %s / %s", what, a->error, b->error);
}

int main(int argc, char **argv)
{
    static const struct {
        GstVideoFormat fmt;
        const char *ctag;  /* NULL: not in Y4M */
        int bits;
    } fmts[] = {
        { GST_VIDEO_FORMAT_I420, "420jpeg", 8 },      { GST_VIDEO_FORMAT_Y42B, "422", 8 },
        { GST_VIDEO_FORMAT_Y444, "444", 8 },          { GST_VIDEO_FORMAT_GRAY8, "mono", 8 },
        { GST_VIDEO_FORMAT_I420_10LE, "420p10", 10 }, { GST_VIDEO_FORMAT_Y444_12LE, "444p12", 12 },
        { GST_VIDEO_FORMAT_UYVY, NULL, 8 },
    };
    static const int sizes[][2] = { { 33, 17 }, { 64, 48 }, { 1, 1 }, { 1282, 722 } };
    gboolean have_y4mdec;
    (void)argc;
    (void)argv;
    gst_init(NULL, NULL);
    g_random_set_seed(20261126);
    if (!gst_element_factory_find("rawvideoparse")) {
        printf("SKIP: no rawvideoparse\n");
        return 77;
    }
    have_y4mdec = gst_element_factory_find("y4mdec") != NULL;
    if (!g_mkdtemp(dir))
        return 1;
    char *raw = g_build_filename(dir, "a.yuv", NULL), *y4m = g_build_filename(dir, "a.y4m", NULL);

    for (size_t f = 0; f < G_N_ELEMENTS(fmts); f++) {
        for (size_t z = 0; z < G_N_ELEMENTS(sizes); z++) {
            const int w = sizes[z][0], h = sizes[z][1], n = 5;
            int strides[4], offsets[4], np;
            const char *fname = gst_video_format_to_string(fmts[f].fmt);
            /* rawvideoparse's "format" takes the enum's nick: i420-10le */
            char *nick = g_ascii_strdown(fname, -1);
            g_strdelimit(nick, "_", '-');
            gsize frame = layout(fmts[f].fmt, w, h, strides, offsets, &np);
            char *hdr = g_strdup_printf("YUV4MPEG2 W%d H%d F30000:1001 Ip A1:1 C%s XYSCSS=X",
                                        w, h, fmts[f].ctag ? fmts[f].ctag : "420");
            char *what = g_strdup_printf("%s %dx%d", fname, w, h);
            QmcMapSpec spec;
            char *desc, *why = NULL;
            Run a, b;

            write_files(raw, y4m, hdr, frame, n, fmts[f].bits, z == 1);

            /* raw: against filesrc ! rawvideoparse */
            qmc_raw_spec(&spec, fmts[f].fmt, w, h, 30000, 1001, frame, strides, offsets, np, n);
            a = run_pipeline(qmc_map_source(raw, NULL, &spec), NULL);
            desc = g_strdup_printf("filesrc location=%s ! rawvideoparse width=%d height=%d "
                                   "format=%s framerate=30000/1001 frame-size=%zu "
                                   "plane-strides=<%d,%d,%d> plane-offsets=<%d,%d,%d>",
                                   raw, w, h, nick, frame, strides[0], np > 1 ? strides[1] : 0,
                                   np > 2 ? strides[2] : 0, offsets[0], np > 1 ? offsets[1] : 0,
                                   np > 2 ? offsets[2] : 0);
            if (np < 3) {  /* as many array entries as planes */
                g_free(desc);
                desc = np == 1 ?
                    g_strdup_printf("filesrc location=%s ! rawvideoparse width=%d height=%d "
                                    "format=%s framerate=30000/1001 frame-size=%zu "
                                    "plane-strides=<%d> plane-offsets=<0>", raw, w, h, nick,
                                    frame, strides[0]) :
                    g_strdup_printf("filesrc location=%s ! rawvideoparse width=%d height=%d "
                                    "format=%s framerate=30000/1001 frame-size=%zu "
                                    "plane-strides=<%d,%d> plane-offsets=<%d,%d>", raw, w, h,
                                    nick, frame, strides[0], strides[1], offsets[0], offsets[1]);
            }
            b = run_pipeline(NULL, desc);
            char *rwhat = g_strdup_printf("raw %s", what);
            check_same(rwhat, &a, &b, TRUE);
            g_free(rwhat);
            run_free(&a);
            run_free(&b);
            g_free(desc);

            if (fmts[f].ctag) {
                gboolean ok = qmc_y4m_spec(y4m, &spec, &why);
                CHECK(ok, "y4m %s: header refused: %s", what, why);
                CHECK(!ok || spec.frames == (z == 1 ? 0 : (guint64)n),
                      "y4m %s: %" G_GUINT64_FORMAT " frames counted", what, spec.frames);
                g_free(why);
                why = NULL;
                if (ok) {
                    char *ywhat = g_strdup_printf("y4m %s", what);
                    a = run_pipeline(qmc_map_source(y4m, NULL, &spec), NULL);
                    if (fmts[f].bits == 8 && fmts[f].fmt != GST_VIDEO_FORMAT_GRAY8 && have_y4mdec &&
                        w > 1) {  /* (1.22's y4mdec gives no frame of 1x1) */
                        /* the reader it replaces: same caps, same pictures */
                        desc = g_strdup_printf("filesrc location=%s ! y4mdec", y4m);
                        b = run_pipeline(NULL, desc);
                        g_free(desc);
                        check_same(ywhat, &a, &b, TRUE);
                    } else {
                        /* the same bytes read as raw (caps differ in colorimetry) */
                        QmcMapSpec rs;
                        qmc_raw_spec(&rs, fmts[f].fmt, w, h, 30000, 1001, frame, strides, offsets,
                                     np, n);
                        b = run_pipeline(qmc_map_source(raw, NULL, &rs), NULL);
                        check_same(ywhat, &a, &b, FALSE);
                    }
                    run_free(&a);
                    run_free(&b);
                    g_free(ywhat);
                }
            }
            g_free(hdr);
            g_free(what);
            g_free(nick);
        }
    }

    /* a Y4M file cut inside its third frame: two frames and a warning */
    {
        int strides[4], offsets[4], np;
        gsize frame = layout(GST_VIDEO_FORMAT_I420, 32, 16, strides, offsets, &np);
        QmcMapSpec spec;
        char *why = NULL;
        write_files(raw, y4m, "YUV4MPEG2 W32 H16 F25:1", frame, 3, 8, FALSE);
        g_assert(truncate(y4m, 24 + 2 * (6 + frame) + 6 + frame / 2) == 0);
        CHECK(qmc_y4m_spec(y4m, &spec, &why), "cut file: header refused");
        Run a = run_pipeline(qmc_map_source(y4m, NULL, &spec), NULL);
        CHECK(a.frames->len == 2, "cut file: %u frames (2 expected)", a.frames->len);
        CHECK(a.warning && strstr(a.warning, "ends inside frame 2"), "cut file: warning %s",
              a.warning);
        CHECK(!a.error, "cut file: error %s", a.error);
        run_free(&a);

        /* a frame line that is not one: an error naming its byte */
        write_files(raw, y4m, "YUV4MPEG2 W32 H16 F25:1", frame, 3, 8, FALSE);
        FILE *fy = fopen(y4m, "r+b");
        fseek(fy, 24 + (6 + frame), SEEK_SET);
        fputs("FRAMX", fy);
        fclose(fy);
        a = run_pipeline(qmc_map_source(y4m, NULL, &spec), NULL);
        CHECK(a.frames->len == 1, "bad frame line: %u frames (1 expected)", a.frames->len);
        char *at = g_strdup_printf("no Y4M FRAME line at byte %zu (frame 1)", (size_t)(24 + 6 + frame));
        CHECK(a.error && strstr(a.error, at), "bad frame line: error %s (expected '%s')", a.error, at);
        g_free(at);
        run_free(&a);
        g_free(why);
    }

    /* pipes: a Y4M stream read by frames gives the pictures of the same
     * file mapped; anything else is left in the pipe untouched */
    {
        int strides[4], offsets[4], np, p[2];
        gsize frame = layout(GST_VIDEO_FORMAT_I420_10LE, 33, 17, strides, offsets, &np);
        QmcMapSpec fspec, pspec;
        char *why = NULL, *fdpath;
        gchar *bytes;
        gsize len;
        write_files(raw, y4m, "YUV4MPEG2 W33 H17 F25:1 C420p10", frame, 40, 10, TRUE);
        g_assert(g_file_get_contents(y4m, &bytes, &len, NULL) && pipe(p) == 0);
        QmPipeFeed fd_feed = { p[1], bytes, len };
        GThread *wr = g_thread_new("writer", qm_pipe_feed, &fd_feed);
        fdpath = g_strdup_printf("/proc/self/fd/%d", p[0]);
        CHECK(qmc_y4m_pipe_spec(fdpath, &pspec, &why) && pspec.pipe, "pipe: header refused: %s", why);
        g_free(why);
        why = NULL;
        CHECK(qmc_y4m_spec(y4m, &fspec, &why), "pipe: the file's header refused");
        Run a = run_pipeline(qmc_map_source(fdpath, NULL, &pspec), NULL);
        Run b = run_pipeline(qmc_map_source(y4m, NULL, &fspec), NULL);
        CHECK(a.frames->len == 40, "pipe: %u frames (40 expected)", a.frames->len);
        check_same("10-bit y4m from a pipe", &a, &b, TRUE);
        run_free(&a);
        run_free(&b);
        g_thread_join(wr);
        close(p[0]);
        g_free(bytes);

        /* not Y4M: refused, every byte still in the pipe */
        static const char other[] = "\x1a\x45\xdf\xa3 a Matroska file, say";
        g_assert(pipe(p) == 0 && write(p[1], other, sizeof(other)) == (ssize_t)sizeof(other));
        close(p[1]);
        g_free(fdpath);
        fdpath = g_strdup_printf("/proc/self/fd/%d", p[0]);
        CHECK(!qmc_y4m_pipe_spec(fdpath, &pspec, &why) && why, "not y4m: accepted");
        g_free(why);
        why = NULL;
        char back[sizeof(other)];
        CHECK(read(p[0], back, sizeof(back)) == (ssize_t)sizeof(back) && !memcmp(back, other, sizeof(other)),
              "not y4m: the pipe's bytes were taken");
        CHECK(pspec.fd >= 0 && !pspec.pipe, "not y4m: the descriptor is the caller's");
        close(pspec.fd);
        close(p[0]);
        CHECK(!qmc_y4m_pipe_spec(y4m, &pspec, &why) && why && strstr(why, "not a pipe"),
              "a file taken for a pipe: %s", why);
        g_free(why);
        g_free(fdpath);
    }

    /* headers that are not read in place: said why */
    {
        static const char *const bad[][2] = {
            { "YUV4MPEG2 W32 H16 F25:1 It", "interlaced" },
            { "YUV4MPEG2 W32 H16 F25:1 C420p14", "C420p14" },
            { "YUV4MPEG2 H16 F25:1", "no frame size" },
            { "YUV4MPEG2 W100000 H16", "100000x16 too large" },
            { "YUV4MPEG W32 H16", "no YUV4MPEG2 header" },
        };
        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
            QmcMapSpec spec;
            char *why = NULL;
            FILE *fy = fopen(y4m, "wb");
            fprintf(fy, "%s\nFRAME\n", bad[i][0]);
            fclose(fy);
            CHECK(!qmc_y4m_spec(y4m, &spec, &why) && why && strstr(why, bad[i][1]),
                  "'%s': %s (expected '%s')", bad[i][0], why, bad[i][1]);
            g_free(why);
        }
        CHECK(!qmc_map_source(dir, NULL, &(QmcMapSpec){ 0 }), "a directory was mapped");
    }

    remove(raw);
    remove(y4m);
    g_rmdir(dir);
    g_free(raw);
    g_free(y4m);
    if (failures)
        printf("mapsrc: %d checks failed\n", failures);
    else
        printf("mapsrc: all checks passed\n");
    return failures ? 1 : 0;
}
