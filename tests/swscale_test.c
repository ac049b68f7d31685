/* tools/compare/swscale.c, swscale_av.c: the pictures of qmetric-compare's scaler equal
 * FFmpeg's `scale` filter's byte for byte: Debian's ffmpeg scales the same
 * raw frames (`-f rawvideo ... -vf scale=W:H:flags=K -f rawvideo`) and every
 * plane of every frame is compared, for each planar and semi-planar format
 * the comparison uses (8 to 16 bits, 4:2:0, 4:2:2, 4:4:4, grey, NV12-like),
 * up and down, odd sizes, each scaler libswscale has on 8-bit 4:2:0 and
 * bicubic, lanczos and bilinear on the rest, from packed planes, from
 * padded unaligned rows, and from a frame that ends where an inaccessible
 * page begins (libswscale reads a little past the last row).  Also: the
 * same size passes the buffer through; a format libswscale lacks is an
 * error naming it; the --scaler spellings accepted and refused.  SKIP (77)
 * without ffmpeg (scripts/install-deps.sh installs it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <libavutil/pixdesc.h>

#include "../tools/compare/swscale.h"
#include "unit.h"

static char dir[] = "/tmp/qm-swscale-XXXXXX";
static const char *ffmpeg;

typedef struct {
    const char *gst, *av;      /* GStreamer's and FFmpeg's names of the format */
} Fmt;

static const Fmt formats[] = {
    { "I420", "yuv420p" },         { "YV12", "yuv420p" },  /* V before U: planes alike */
    { "Y42B", "yuv422p" },         { "Y444", "yuv444p" },
    { "GRAY8", "gray" },           { "NV12", "nv12" },
    { "NV21", "nv21" },            { "I420_10LE", "yuv420p10le" },
    { "I422_10LE", "yuv422p10le" }, { "Y444_10LE", "yuv444p10le" },
    { "P010_10LE", "p010le" },     { "I420_12LE", "yuv420p12le" },
    { "I422_12LE", "yuv422p12le" }, { "Y444_12LE", "yuv444p12le" },
    { "Y444_16LE", "yuv444p16le" }, { "P016_LE", "p016le" },
    { "GRAY16_LE", "gray16le" },
};

#define FRAMES 2

/* A tightly packed frame's planes, as FFmpeg's rawvideo reads and writes
 * them: each plane's row bytes and rows. */
typedef struct {
    int n;
    gsize row[GST_VIDEO_MAX_PLANES], rows[GST_VIDEO_MAX_PLANES], size;
} Layout;

static Layout layout_of(GstVideoFormat f, int w, int h)
{
    const GstVideoFormatInfo *fi = gst_video_format_get_info(f);
    Layout l = { 0 };
    l.n = GST_VIDEO_FORMAT_INFO_N_PLANES(fi);
    for (int p = 0; p < l.n; p++) {
        gint comp[GST_VIDEO_MAX_COMPONENTS];
        gst_video_format_info_component(fi, p, comp);
        l.row[p] = (gsize)GST_VIDEO_FORMAT_INFO_SCALE_WIDTH(fi, comp[0], w) *
                   GST_VIDEO_FORMAT_INFO_PSTRIDE(fi, comp[0]);
        l.rows[p] = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT(fi, comp[0], h);
        l.size += l.row[p] * l.rows[p];
    }
    return l;
}

/* Frames with detail at every scale: gradients, stripes, hard edges and
 * noise over the whole range of the format's depth (MSB-aligned where the
 * format shifts its samples). */
static guint8 *make_frames(GstVideoFormat f, int w, int h, gsize *size)
{
    const GstVideoFormatInfo *fi = gst_video_format_get_info(f);
    Layout l = layout_of(f, w, h);
    int depth = GST_VIDEO_FORMAT_INFO_DEPTH(fi, 0), shift = GST_VIDEO_FORMAT_INFO_SHIFT(fi, 0);
    int bytes = GST_VIDEO_FORMAT_INFO_PSTRIDE(fi, 0);
    guint32 max = (1u << depth) - 1, seed = 12345;
    guint8 *buf = g_malloc(l.size * FRAMES), *q = buf;

    for (int k = 0; k < FRAMES; k++) {
        for (int p = 0; p < l.n; p++) {
            for (gsize y = 0; y < l.rows[p]; y++) {
                for (gsize x = 0; x < l.row[p] / bytes; x++, q += bytes) {
                    double base = 0.5 + 0.3 * ((double)x / (l.row[p] / bytes)) -
                                  0.2 * ((double)y / l.rows[p]);
                    int v;
                    seed = seed * 1664525u + 1013904223u;
                    base += ((x / 5 + y / 3 + k + p) % 2) * 0.15 + (x % 7 == 0) * 0.1;
                    v = (int)(base * max) + (int)(seed >> 24) - 128 * (int)max / 255;
                    v = CLAMP(v, 0, (int)max) << shift;
                    q[0] = v & 0xff;
                    if (bytes == 2)
                        q[1] = v >> 8;
                }
            }
        }
    }
    *size = l.size * FRAMES;
    return buf;
}

/* ffmpeg's frames of the case, packed; NULL if it failed (said). */
static guint8 *ffmpeg_scale(const Fmt *fmt, const char *in, int w, int h, int ow, int oh,
                            const char *flags, gsize *size)
{
    char *sz = g_strdup_printf("%dx%d", w, h);
    char *vf = g_strdup_printf("scale=%d:%d:flags=%s", ow, oh, flags);
    char *out = g_build_filename(dir, "ffmpeg.raw", NULL);
    const char *argv[] = { ffmpeg, "-v", "error", "-nostdin", "-f", "rawvideo", "-pix_fmt",
                           fmt->av, "-s", sz, "-i", in, "-vf", vf, "-f", "rawvideo", "-y", out,
                           NULL };
    char *err = NULL, *data = NULL;
    gint status = -1;
    gsize len = 0;

    if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                      &err, &status, NULL) || !g_spawn_check_wait_status(status, NULL) ||
        !g_file_get_contents(out, &data, &len, NULL)) {
        CHECK(0, "ffmpeg %s %s %s: %s", fmt->av, sz, vf, err ? err : "did not run");
        g_free(data);
        data = NULL;
    }
    *size = len;
    g_free(err);
    g_free(out);
    g_free(vf);
    g_free(sz);
    return (guint8 *)data;
}

enum { PACKED, PADDED, AT_PAGE_END };
static const char *const mode_name[] = { "packed", "padded rows", "at a page end" };

static void unmap_guarded(gpointer p)
{
    gsize *m = p;
    munmap(m, m[0]);
}

/* A buffer of size bytes that ends where an inaccessible page begins. */
static GstBuffer *guarded_buffer(gsize size)
{
    gsize page = (gsize)sysconf(_SC_PAGESIZE);
    gsize len = (size + sizeof(gsize) + page - 1) / page * page + page;
    guint8 *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    g_assert(m != MAP_FAILED);
    mprotect(m + len - page, page, PROT_NONE);
    *(gsize *)m = len;
    return gst_buffer_new_wrapped_full(0, m + len - page - size, size, 0, size, m,
                                       unmap_guarded);
}

/* The frames through a qmcswscale element, packed.  PADDED: each input row
 * padded by 6 bytes and every plane starting 6 bytes further on (rows not
 * aligned); AT_PAGE_END: packed, ending at an inaccessible page.  NULL on
 * an error, its message in *error. */
static guint8 *element_scale(GstVideoFormat f, const guint8 *in, int w, int h, int ow, int oh,
                             const char *flags, int mode, char **error)
{
    GstElement *e = qmc_make_scaler(NULL, flags);
    GstHarness *hs;
    GstBus *bus = gst_bus_new();
    Layout li = layout_of(f, w, h), lo = layout_of(f, ow, oh);
    GstVideoInfo oi;
    guint8 *out = g_malloc(lo.size * FRAMES), *o = out;
    const char *name = gst_video_format_to_string(f);
    char *caps;

    hs = gst_harness_new_with_element(e, "sink", "src");
    gst_element_set_bus(e, bus);
    caps = g_strdup_printf("video/x-raw,format=%s,width=%d,height=%d,framerate=25/1", name, w, h);
    gst_harness_set_src_caps_str(hs, caps);
    g_free(caps);
    caps = g_strdup_printf("video/x-raw,format=%s,width=%d,height=%d,framerate=25/1", name, ow,
                           oh);
    gst_harness_set_sink_caps_str(hs, caps);
    {
        GstCaps *c = gst_caps_from_string(caps);
        gst_video_info_from_caps(&oi, c);
        gst_caps_unref(c);
    }
    g_free(caps);

    for (int k = 0; k < FRAMES && out; k++) {
        int pad = mode == PADDED ? 6 : 0;
        gsize offsets[GST_VIDEO_MAX_PLANES], at = pad;
        gint strides[GST_VIDEO_MAX_PLANES];
        GstBuffer *b;
        GstMapInfo mi;
        GstVideoFrame vf;
        GstFlowReturn ret;

        for (int p = 0; p < li.n; p++) {
            strides[p] = (gint)(li.row[p] + pad);
            offsets[p] = at;
            at += (gsize)strides[p] * li.rows[p] + pad;
        }
        b = mode == AT_PAGE_END ? guarded_buffer(at) : gst_buffer_new_allocate(NULL, at, NULL);
        gst_buffer_map(b, &mi, GST_MAP_WRITE);
        memset(mi.data, 0xa5, at);
        for (int p = 0; p < li.n; p++) {
            for (gsize y = 0; y < li.rows[p]; y++) {
                memcpy(mi.data + offsets[p] + y * strides[p], in, li.row[p]);
                in += li.row[p];
            }
        }
        gst_buffer_unmap(b, &mi);
        gst_buffer_add_video_meta_full(b, GST_VIDEO_FRAME_FLAG_NONE, f, w, h, li.n, offsets,
                                       strides);
        ret = gst_harness_push(hs, b);
        if (ret != GST_FLOW_OK) {
            GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
            GError *err = NULL;
            if (m)
                gst_message_parse_error(m, &err, NULL);
            *error = g_strdup(err ? err->message : gst_flow_get_name(ret));
            g_clear_error(&err);
            if (m)
                gst_message_unref(m);
            g_clear_pointer(&out, g_free);
            break;
        }
        b = gst_harness_pull(hs);
        gst_video_frame_map(&vf, &oi, b, GST_MAP_READ);
        for (int p = 0; p < lo.n; p++) {
            for (gsize y = 0; y < lo.rows[p]; y++) {
                memcpy(o, (guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&vf, p) +
                       y * GST_VIDEO_FRAME_PLANE_STRIDE(&vf, p), lo.row[p]);
                o += lo.row[p];
            }
        }
        gst_video_frame_unmap(&vf);
        gst_buffer_unref(b);
    }
    gst_harness_teardown(hs);
    gst_object_unref(e);
    gst_object_unref(bus);
    return out;
}

/* The first differing sample, as "plane P row Y byte X of frame K". */
static char *where(GstVideoFormat f, int ow, int oh, gsize at)
{
    Layout l = layout_of(f, ow, oh);
    gsize k = at / l.size, r = at % l.size;
    for (int p = 0; p < l.n; p++) {
        if (r < l.row[p] * l.rows[p])
            return g_strdup_printf("frame %zu plane %d row %zu byte %zu", k, p, r / l.row[p],
                                   r % l.row[p]);
        r -= l.row[p] * l.rows[p];
    }
    return g_strdup("?");
}

static int cases;

/* One format and size pair, each scaler given: ffmpeg's bytes against the
 * element's from packed planes and (the first scaler) from padded rows and
 * at a page end. */
static void check_case(const Fmt *fmt, int w, int h, int ow, int oh, const char *const *flags)
{
    GstVideoFormat f = gst_video_format_from_string(fmt->gst);
    gsize in_size, ff_size, at;
    guint8 *in = make_frames(f, w, h, &in_size);
    char *path = g_build_filename(dir, "in.raw", NULL);
    gsize want = layout_of(f, ow, oh).size * FRAMES;

    g_file_set_contents(path, (char *)in, in_size, NULL);
    for (int i = 0; flags[i]; i++) {
        guint8 *ff = ffmpeg_scale(fmt, path, w, h, ow, oh, flags[i], &ff_size);
        if (!ff)
            continue;
        CHECK(ff_size == want, "%s %dx%d -> %dx%d %s: ffmpeg wrote %zu bytes, expected %zu",
              fmt->gst, w, h, ow, oh, flags[i], ff_size, want);
        for (int mode = PACKED; mode <= (i == 0 ? AT_PAGE_END : PACKED); mode++) {
            char *error = NULL;
            guint8 *mine = element_scale(f, in, w, h, ow, oh, flags[i], mode, &error);
            cases++;
            CHECK(mine, "%s %dx%d -> %dx%d %s: %s", fmt->gst, w, h, ow, oh, flags[i], error);
            for (at = 0; mine && ff_size == want && at < want && mine[at] == ff[at]; at++)
                ;
            if (mine && ff_size == want && at < want) {
                char *w_at = where(f, ow, oh, at);
                CHECK(0, "%s %dx%d -> %dx%d flags=%s, %s: differs from ffmpeg at %s (%d, "
                      "ffmpeg %d)", fmt->gst, w, h, ow, oh, flags[i], mode_name[mode], w_at,
                      mine[at], ff[at]);
                g_free(w_at);
            }
            g_free(mine);
            g_free(error);
        }
        g_free(ff);
    }
    g_free(path);
    g_free(in);
}

static void check_passthrough(void)
{
    GstElement *e = qmc_make_scaler(NULL, "lanczos");
    GstHarness *hs = gst_harness_new_with_element(e, "sink", "src");
    GstBuffer *in, *out;
    gst_harness_set_src_caps_str(hs, "video/x-raw,format=I420,width=64,height=48,framerate=25/1");
    gst_harness_set_sink_caps_str(hs, "video/x-raw,format=I420,width=64,height=48");
    in = gst_buffer_new_allocate(NULL, 64 * 48 * 3 / 2, NULL);
    gst_buffer_ref(in);
    CHECK(gst_harness_push(hs, in) == GST_FLOW_OK, "same size: push failed");
    out = gst_harness_pull(hs);
    CHECK(out == in, "same size: the buffer was not passed through");
    gst_buffer_unref(out);
    gst_buffer_unref(in);
    gst_harness_teardown(hs);
    gst_object_unref(e);
}

/* P012 entered libswscale after FFmpeg 5.1: refused with its name there,
 * compared like the others where the library has it. */
static void check_p012(void)
{
    static const char *const bicubic[] = { "bicubic", NULL };
    static const Fmt p012 = { "P012_LE", "p012le" };
    if (av_get_pix_fmt("p012le") == AV_PIX_FMT_NONE) {
        char *error = NULL;
        guint8 in[32 * 16 * 3] = { 0 };
        guint8 *out = element_scale(GST_VIDEO_FORMAT_P012_LE, in, 16, 16, 32, 32, "bicubic",
                                    PACKED, &error);
        CHECK(!out && error && strstr(error, "cannot scale P012_LE"),
              "P012_LE without libswscale support: %s", error ? error : "no error");
        g_free(out);
        g_free(error);
    } else {
        check_case(&p012, 97, 55, 160, 90, bicubic);
    }
}

static void check_spellings(void)
{
    static const char *const good[] = { "bicubic", "lanczos", "bilinear", "spline", "neighbor",
                                        "lanczos+accurate_rnd", "bicubic+full_chroma_int", NULL };
    static const char *const bad[] = { "catrom", "mitchell", "nearest-neighbour", "",
                                       "bicubic+lanczos", "accurate_rnd", "4-tap", NULL };
    char *names = qmc_scaler_names(), *why;
    for (int i = 0; good[i]; i++) {
        why = NULL;
        CHECK(qmc_scaler_check(good[i], &why), "'%s' refused: %s", good[i], why);
        g_free(why);
    }
    for (int i = 0; bad[i]; i++) {
        why = NULL;
        CHECK(!qmc_scaler_check(bad[i], &why) && why && strstr(why, "bicubic, ") &&
              strstr(why, "lanczos"), "'%s' accepted or refused without the list: %s", bad[i],
              why ? why : "");
        g_free(why);
    }
    CHECK(!strcmp(names, "fast_bilinear, bilinear, bicubic, experimental, neighbor, area, "
                         "bicublin, gauss, sinc, lanczos, spline"),
          "scaler names: %s", names);
    g_free(names);
}

int main(int argc, char **argv)
{
    static const char *const all[] = { "bicubic", "fast_bilinear", "bilinear", "experimental",
                                       "neighbor", "area", "bicublin", "gauss", "sinc",
                                       "lanczos", "spline", "lanczos+accurate_rnd", NULL };
    static const char *const three[] = { "bicubic", "lanczos", "bilinear", NULL };

    gst_init(&argc, &argv);
    ffmpeg = g_find_program_in_path("ffmpeg");
    if (!ffmpeg) {
        printf("SKIP: ffmpeg is not installed (scripts/install-deps.sh)\n");
        return 77;
    }
    if (!g_mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    check_spellings();
    check_passthrough();
    /* 8-bit 4:2:0: every scaler; up (odd to odd, and 540p-like 2x) and down */
    check_case(&formats[0], 333, 187, 641, 359, all);
    check_case(&formats[0], 333, 187, 161, 91, all);
    check_case(&formats[0], 320, 180, 640, 360, three);
    for (gsize i = 1; i < G_N_ELEMENTS(formats); i++) {
        check_case(&formats[i], 175, 99, 322, 181, three);
        check_case(&formats[i], 175, 99, 87, 51, three);
    }
    check_p012();
    {
        char *rm = g_strdup_printf("rm -rf '%s'", dir);
        if (system(rm) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
        g_free(rm);
    }
    printf("%d comparisons with ffmpeg, %d failures\n", cases, failures);
    return failures ? 1 : 0;
}
