/* qmetric-compare: the scaling of the "qmcswscale" element (swscale.c) by
 * libswscale, exactly as FFmpeg 5.1's `scale` filter does it on
 * `ffmpeg -i dist -vf scale=W:H:flags=K`, so that a rendition scored
 * against a larger source gets the pixels (and so the scores) of the
 * FFmpeg + libvmaf workflow.
 *
 * What the filter hands libswscale for a progressive frame (vf_scale.c,
 * config_props; fftools' default sws_flags): the sizes, the same pixel
 * format in and out, sws_flags = the scaler named by flags= (bicubic when
 * none, as fftools sets it; no accurate_rnd, no full_chroma_int, no
 * bitexact), param0/param1 left at libswscale's defaults (bicubic B=0
 * C=0.6, lanczos 3 taps), chroma positions at libswscale's default (the
 * filter's 4:2:0 override of the vertical position is the same value for a
 * progressive frame), dithering at its default (auto).  Nothing else is
 * set, so the same libswscale on the same CPU gives the same bytes;
 * tests/swscale_test.c compares them with Debian's ffmpeg.
 *
 * One thread: libswscale 6's slice threads are not used.  Its SIMD output
 * stages store whole vectors past the end of a row (FFmpeg's frames have
 * strides padded to 32/64 bytes for them); one thread writes the rows in
 * order, so the next row overwrites those bytes (the last rows of a frame
 * are written by its C functions), but slices written at once by several
 * threads clobber the first row of the next slice unless the strides have
 * FFmpeg's padding, which GStreamer's (4 bytes) do not: the pixels would
 * change from run to run.  One thread upscales 540p to 1080p in about 1 ms,
 * a fraction of what the metrics take, and each rendition of a ladder
 * scales in its own streaming thread.
 *
 * Its SIMD input stages also read up to 30 bytes past the end of the last
 * row of a plane (NV12 on x86-64; a few bytes for the planar formats),
 * which FFmpeg's padded frames allow but a frame mapped from the end of a
 * file does not: a frame whose plane ends near a page boundary is copied
 * into a padded frame first (the next page may not be mapped).
 *
 * Range: the filter converts a frame tagged full range to limited range
 * (sws_setColorspaceDetails with the frame's range in, the context's
 * limited range out) unless out_range=full is given.  Here both streams are
 * compared as stored, so the range is left alone: for such an input this
 * equals `scale=W:H:flags=K:out_range=full` (docs/cli.md).
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "swscale.h"

#include <string.h>
#include <unistd.h>

#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

/* Bytes past a plane's last row that libswscale may read: 30 measured on
 * x86-64 (NV12), with room for wider vectors. */
#define READ_SLACK 256

/* The flags that choose a kernel; libswscale wants exactly one of them. */
#define SCALER_MASK (SWS_FAST_BILINEAR | SWS_BILINEAR | SWS_BICUBIC | SWS_X | SWS_POINT | \
                     SWS_AREA | SWS_BICUBLIN | SWS_GAUSS | SWS_SINC | SWS_LANCZOS | SWS_SPLINE)

/* The planar and semi-planar formats qmetric compares in, by FFmpeg's name
 * (resolved at run time: a libswscale that lacks one, such as p012le before
 * FFmpeg 6, refuses it with a message instead of a failed build).  YV12 is
 * I420 with its chroma planes swapped: both are filtered alike. */
static const struct {
    const char *gst, *av;
    gboolean swap_uv;
} formats[] = {
    { "I420", "yuv420p", FALSE },        { "YV12", "yuv420p", TRUE },
    { "NV12", "nv12", FALSE },           { "NV21", "nv21", FALSE },
    { "Y42B", "yuv422p", FALSE },        { "Y444", "yuv444p", FALSE },
    { "GRAY8", "gray", FALSE },          { "I420_10LE", "yuv420p10le", FALSE },
    { "I422_10LE", "yuv422p10le", FALSE }, { "Y444_10LE", "yuv444p10le", FALSE },
    { "P010_10LE", "p010le", FALSE },    { "I420_12LE", "yuv420p12le", FALSE },
    { "I422_12LE", "yuv422p12le", FALSE }, { "Y444_12LE", "yuv444p12le", FALSE },
    { "P012_LE", "p012le", FALSE },      { "Y444_16LE", "yuv444p16le", FALSE },
    { "P016_LE", "p016le", FALSE },      { "GRAY16_LE", "gray16le", FALSE },
};

struct QmcSws {
    struct SwsContext *sws;
    enum AVPixelFormat av;     /* the format, in and out */
    gboolean swap_uv;
    AVFrame *padded;           /* an input frame near a page end is copied here */
};

static gboolean is_flag(const AVOption *o)
{
    return o->type == AV_OPT_TYPE_CONST && o->unit && !strcmp(o->unit, "sws_flags");
}

/* FFmpeg's flags= value: names of libswscale's sws_flags constants joined
 * by '+', the value vf_scale hands libswscale.  Parsed here rather than by
 * av_opt_set(), which logs its refusals on stderr.  NULL, or the name that
 * is not a flag. */
static char *parse_flags(const char *flags, int64_t *value)
{
    char **names = g_strsplit(flags, "+", -1), *bad = NULL;
    const AVClass *cls = sws_get_class();

    *value = 0;
    for (char **n = names; !bad && *n; n++) {
        const AVOption *o = NULL;
        while ((o = av_opt_next(&cls, o)) && !(is_flag(o) && !strcmp(o->name, *n)))
            ;
        if (o)
            *value |= o->default_val.i64;
        else
            bad = g_strdup(*n);
    }
    if (!names[0] && !bad)
        bad = g_strdup("");
    g_strfreev(names);
    return bad;
}

gboolean qmc_scaler_check(const char *flags, char **why)
{
    int64_t v;
    char *bad = parse_flags(flags, &v), *names;
    int n = __builtin_popcountll((unsigned long long)v & SCALER_MASK);

    if (!bad && n == 1)
        return TRUE;
    names = qmc_scaler_names();
    if (bad && !strcmp(bad, flags))
        *why = g_strdup_printf("'%s' is not a libswscale scaler (one of: %s)", flags, names);
    else if (bad)
        *why = g_strdup_printf("'%s' in '%s' is not a libswscale flag (scalers: %s)", bad, flags,
                               names);
    else
        *why = g_strdup_printf("'%s' names %s scaler; give one of: %s", flags,
                               n ? "more than one" : "no", names);
    g_free(names);
    g_free(bad);
    return FALSE;
}

char *qmc_scaler_names(void)
{
    const AVClass *cls = sws_get_class();
    const AVOption *o = NULL;
    GString *s = g_string_new(NULL);

    while ((o = av_opt_next(&cls, o))) {
        int64_t v = o->default_val.i64;
        if (is_flag(o) && v && !(v & ~(int64_t)SCALER_MASK))
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", o->name);
    }
    return g_string_free(s, FALSE);
}

static enum AVPixelFormat av_format_of(GstVideoFormat f, gboolean *swap_uv)
{
    const char *name = gst_video_format_to_string(f);
    *swap_uv = FALSE;
    for (gsize i = 0; name && i < G_N_ELEMENTS(formats); i++) {
        if (!strcmp(formats[i].gst, name)) {
            *swap_uv = formats[i].swap_uv;
            return av_get_pix_fmt(formats[i].av);
        }
    }
    return AV_PIX_FMT_NONE;
}

static int set_int(struct SwsContext *c, const char *key, int64_t v)
{
    return av_opt_set_int(c, key, v, 0);
}

QmcSws *qmc_sws_open(const GstVideoInfo *in, const GstVideoInfo *out, const char *flags,
                     char **why)
{
    const char *name = gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(in));
    QmcSws *s = g_new0(QmcSws, 1);
    int64_t value;
    char *bad = parse_flags(flags, &value);

    s->av = av_format_of(GST_VIDEO_INFO_FORMAT(in), &s->swap_uv);
    if (s->av == AV_PIX_FMT_NONE || !sws_isSupportedInput(s->av) ||
        !sws_isSupportedOutput(s->av)) {
        *why = g_strdup_printf("libswscale %d.%d cannot scale %s video", LIBSWSCALE_VERSION_MAJOR,
                               LIBSWSCALE_VERSION_MINOR, name);
        goto fail;
    }
    /* what vf_scale sets, and one thread (see the top of the file) */
    s->sws = sws_alloc_context();
    if (bad || !s->sws || set_int(s->sws, "srcw", in->width) < 0 ||
        set_int(s->sws, "srch", in->height) < 0 || set_int(s->sws, "src_format", s->av) < 0 ||
        set_int(s->sws, "dstw", out->width) < 0 || set_int(s->sws, "dsth", out->height) < 0 ||
        set_int(s->sws, "dst_format", s->av) < 0 || set_int(s->sws, "sws_flags", value) < 0 ||
        set_int(s->sws, "threads", 1) < 0 || sws_init_context(s->sws, NULL, NULL) < 0) {
        *why = g_strdup_printf("libswscale cannot scale %s %dx%d to %dx%d with flags '%s'", name,
                               in->width, in->height, out->width, out->height, flags);
        goto fail;
    }
    g_free(bad);
    return s;
fail:
    g_free(bad);
    qmc_sws_close(s);
    return NULL;
}

void qmc_sws_close(QmcSws *s)
{
    if (!s)
        return;
    sws_freeContext(s->sws);
    av_frame_free(&s->padded);
    g_free(s);
}

/* Whether libswscale's reads past the end of some plane's last row could
 * reach the next page (which may not be mapped). */
static gboolean near_page_end(const GstVideoFrame *f)
{
    static gsize page;
    if (!page)
        page = (gsize)sysconf(_SC_PAGESIZE);
    for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES(f); p++) {
        gint comp[GST_VIDEO_MAX_COMPONENTS];
        const GstVideoFormatInfo *fi = f->info.finfo;
        gst_video_format_info_component(fi, p, comp);
        guintptr last = (guintptr)GST_VIDEO_FRAME_PLANE_DATA(f, p) +
            (gsize)GST_VIDEO_FRAME_PLANE_STRIDE(f, p) *
            (GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT(fi, comp[0], GST_VIDEO_FRAME_HEIGHT(f)) - 1) +
            (gsize)GST_VIDEO_FORMAT_INFO_SCALE_WIDTH(fi, comp[0], GST_VIDEO_FRAME_WIDTH(f)) *
            GST_VIDEO_FORMAT_INFO_PSTRIDE(fi, comp[0]) - 1;
        if (last % page + READ_SLACK >= page)
            return TRUE;
    }
    return FALSE;
}

/* A frame's planes and strides in FFmpeg's plane order. */
static void planes_of(const GstVideoFrame *f, gboolean swap_uv, uint8_t *data[4],
                      int stride[4])
{
    for (guint p = 0; p < 4; p++) {
        guint to = swap_uv && (p == 1 || p == 2) ? 3 - p : p;
        data[to] = p < GST_VIDEO_FRAME_N_PLANES(f) ? GST_VIDEO_FRAME_PLANE_DATA(f, p) : NULL;
        stride[to] = p < GST_VIDEO_FRAME_N_PLANES(f) ? GST_VIDEO_FRAME_PLANE_STRIDE(f, p) : 0;
    }
}

gboolean qmc_sws_scale(QmcSws *s, const GstVideoFrame *in, GstVideoFrame *out, char **why)
{
    uint8_t *src[4], *dst[4];
    int src_stride[4], dst_stride[4], h = GST_VIDEO_FRAME_HEIGHT(in), lines;

    planes_of(in, s->swap_uv, src, src_stride);
    planes_of(out, s->swap_uv, dst, dst_stride);
    if (near_page_end(in)) {
        if (!s->padded && (s->padded = av_frame_alloc())) {
            s->padded->format = s->av;
            s->padded->width = GST_VIDEO_FRAME_WIDTH(in);
            s->padded->height = h;
            if (av_frame_get_buffer(s->padded, 0) < 0)
                av_frame_free(&s->padded);
        }
        if (!s->padded) {
            *why = g_strdup("no memory to scale a frame");
            return FALSE;
        }
        av_image_copy(s->padded->data, s->padded->linesize, (const uint8_t **)src, src_stride,
                      s->av, s->padded->width, h);
        memcpy(src, s->padded->data, sizeof(src));
        memcpy(src_stride, s->padded->linesize, sizeof(src_stride));
    }
    lines = sws_scale(s->sws, (const uint8_t *const *)src, src_stride, 0, h, dst, dst_stride);
    if (lines != GST_VIDEO_FRAME_HEIGHT(out)) {
        *why = g_strdup_printf("libswscale scaled %d of %d lines of a frame", MAX(lines, 0),
                               GST_VIDEO_FRAME_HEIGHT(out));
        return FALSE;
    }
    return TRUE;
}
