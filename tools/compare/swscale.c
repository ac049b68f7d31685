/* qmetric-compare: "qmcswscale", a private element that scales the
 * distorted video with libswscale exactly as FFmpeg 5.1's `scale` filter
 * does on `ffmpeg -i dist -vf scale=W:H:flags=K`, so that a rendition
 * scored against a larger source gets the pixels (and so the scores) of the
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
 * threads clobber the first row of the next slice, and GStreamer's buffers
 * have strides padded to 4 bytes: with 4 threads on 10-bit 322x181 frames,
 * 70 of 300 frames came out differently.  One thread upscales 540p to 1080p
 * in a few milliseconds, a fraction of what the metrics take, and each
 * rendition of a ladder scales in its own streaming thread.
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

#include <gst/video/gstvideofilter.h>
#include <gst/video/video.h>
#include <unistd.h>

#include <libavutil/frame.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

GST_DEBUG_CATEGORY_STATIC(qmc_swscale_debug);
#define GST_CAT_DEFAULT qmc_swscale_debug

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

typedef struct {
    GstVideoFilter parent;
    char *flags;               /* FFmpeg's flags= string */
    struct SwsContext *sws;    /* NULL: passthrough */
    enum AVPixelFormat av;     /* the format, in and out */
    gboolean swap_uv;
    AVFrame *padded;           /* an input frame near a page end is copied here */
} QmcSwscale;

typedef struct {
    GstVideoFilterClass parent_class;
} QmcSwscaleClass;

enum { PROP_0, PROP_FLAGS };

static GType qmc_swscale_get_type(void);
G_DEFINE_TYPE(QmcSwscale, qmc_swscale, GST_TYPE_VIDEO_FILTER)

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

/* Any size on the other side, the rest unchanged: the format is converted
 * upstream, the size is what downstream's capsfilter asks for. */
static GstCaps *transform_caps(GstBaseTransform *trans, GstPadDirection dir, GstCaps *caps,
                               GstCaps *filter)
{
    GstCaps *ret = gst_caps_new_empty();

    for (guint i = 0; i < gst_caps_get_size(caps); i++) {
        GstStructure *s = gst_structure_copy(gst_caps_get_structure(caps, i));
        GstCapsFeatures *f = gst_caps_get_features(caps, i);
        gst_structure_set(s, "width", GST_TYPE_INT_RANGE, 1, G_MAXINT, "height",
                          GST_TYPE_INT_RANGE, 1, G_MAXINT, NULL);
        /* the pixels change shape with the size: leave it to the sink */
        gst_structure_remove_field(s, "pixel-aspect-ratio");
        gst_caps_append_structure_full(ret, s, f ? gst_caps_features_copy(f) : NULL);
    }
    ret = gst_caps_simplify(ret);
    if (filter) {
        GstCaps *t = gst_caps_intersect_full(filter, ret, GST_CAPS_INTERSECT_FIRST);
        gst_caps_unref(ret);
        ret = t;
    }
    GST_DEBUG_OBJECT(trans, "%s %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
                     dir == GST_PAD_SINK ? "sink" : "src", caps, ret);
    return ret;
}

/* Without a size asked for downstream, keep the input's (passthrough). */
static GstCaps *fixate_caps(GstBaseTransform *trans, GstPadDirection dir, GstCaps *caps,
                            GstCaps *othercaps)
{
    const GstStructure *in = gst_caps_get_structure(caps, 0);
    GstStructure *out;
    int w, h;

    othercaps = gst_caps_truncate(othercaps);
    othercaps = gst_caps_make_writable(othercaps);
    out = gst_caps_get_structure(othercaps, 0);
    if (gst_structure_get_int(in, "width", &w))
        gst_structure_fixate_field_nearest_int(out, "width", w);
    if (gst_structure_get_int(in, "height", &h))
        gst_structure_fixate_field_nearest_int(out, "height", h);
    return gst_caps_fixate(othercaps);
}

static int set_int(struct SwsContext *c, const char *key, int64_t v)
{
    return av_opt_set_int(c, key, v, 0);
}

static gboolean set_info(GstVideoFilter *filter, GstCaps *incaps, GstVideoInfo *in,
                         GstCaps *outcaps, GstVideoInfo *out)
{
    QmcSwscale *self = (QmcSwscale *)filter;
    GstVideoFormat f = GST_VIDEO_INFO_FORMAT(in);
    const char *name = gst_video_format_to_string(f);
    struct SwsContext *c;
    int64_t flags_value;
    char *flags, *bad;

    sws_freeContext(self->sws);
    self->sws = NULL;
    av_frame_free(&self->padded);
    if (f != GST_VIDEO_INFO_FORMAT(out)) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("cannot scale %s into %s: the scaler keeps "
                          "the format", name, gst_video_format_to_string(out->finfo->format)),
                          (NULL));
        return FALSE;
    }
    if (in->width == out->width && in->height == out->height) {
        gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), TRUE);
        return TRUE;
    }
    gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), FALSE);
    self->av = av_format_of(f, &self->swap_uv);
    if (self->av == AV_PIX_FMT_NONE || !sws_isSupportedInput(self->av) ||
        !sws_isSupportedOutput(self->av)) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("libswscale %d.%d cannot scale %s video",
                          LIBSWSCALE_VERSION_MAJOR, LIBSWSCALE_VERSION_MINOR, name), (NULL));
        return FALSE;
    }
    GST_OBJECT_LOCK(self);
    flags = g_strdup(self->flags);
    GST_OBJECT_UNLOCK(self);
    bad = parse_flags(flags, &flags_value);

    /* what vf_scale sets, and one thread (see the top of the file) */
    c = sws_alloc_context();
    if (bad || !c || set_int(c, "srcw", in->width) < 0 || set_int(c, "srch", in->height) < 0 ||
        set_int(c, "src_format", self->av) < 0 || set_int(c, "dstw", out->width) < 0 ||
        set_int(c, "dsth", out->height) < 0 || set_int(c, "dst_format", self->av) < 0 ||
        set_int(c, "sws_flags", flags_value) < 0 || set_int(c, "threads", 1) < 0 ||
        sws_init_context(c, NULL, NULL) < 0) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("libswscale cannot scale %s %dx%d to %dx%d "
                          "with flags '%s'", name, in->width, in->height, out->width,
                          out->height, flags), (NULL));
        sws_freeContext(c);
        g_free(flags);
        g_free(bad);
        return FALSE;
    }
    GST_INFO_OBJECT(self, "%s %dx%d -> %dx%d, flags %s (0x%" G_GINT64_MODIFIER "x)", name,
                    in->width, in->height, out->width, out->height, flags, flags_value);
    g_free(flags);
    self->sws = c;
    return TRUE;
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

static GstFlowReturn transform_frame(GstVideoFilter *filter, GstVideoFrame *in,
                                     GstVideoFrame *out)
{
    QmcSwscale *self = (QmcSwscale *)filter;
    uint8_t *src[4], *dst[4];
    int src_stride[4], dst_stride[4], h = GST_VIDEO_FRAME_HEIGHT(in), lines;

    planes_of(in, self->swap_uv, src, src_stride);
    planes_of(out, self->swap_uv, dst, dst_stride);
    if (near_page_end(in)) {
        if (!self->padded) {
            self->padded = av_frame_alloc();
            if (self->padded) {
                self->padded->format = self->av;
                self->padded->width = GST_VIDEO_FRAME_WIDTH(in);
                self->padded->height = h;
                if (av_frame_get_buffer(self->padded, 0) < 0)
                    av_frame_free(&self->padded);
            }
            if (!self->padded) {
                GST_ELEMENT_ERROR(self, RESOURCE, NO_SPACE_LEFT, ("no memory to scale a frame"),
                                  (NULL));
                return GST_FLOW_ERROR;
            }
        }
        av_image_copy(self->padded->data, self->padded->linesize, (const uint8_t **)src,
                      src_stride, self->av, self->padded->width, h);
        memcpy(src, self->padded->data, sizeof(src));
        memcpy(src_stride, self->padded->linesize, sizeof(src_stride));
    }
    lines = sws_scale(self->sws, (const uint8_t *const *)src, src_stride, 0, h, dst, dst_stride);
    if (lines != GST_VIDEO_FRAME_HEIGHT(out)) {
        GST_ELEMENT_ERROR(self, STREAM, FAILED, ("libswscale scaled %d of %d lines of a frame",
                          MAX(lines, 0), GST_VIDEO_FRAME_HEIGHT(out)), (NULL));
        return GST_FLOW_ERROR;
    }
    return GST_FLOW_OK;
}

static void set_property(GObject *obj, guint id, const GValue *v, GParamSpec *ps)
{
    QmcSwscale *self = (QmcSwscale *)obj;
    GST_OBJECT_LOCK(self);
    if (id == PROP_FLAGS) {
        g_free(self->flags);
        self->flags = g_value_dup_string(v);
    } else {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(obj, id, ps);
    }
    GST_OBJECT_UNLOCK(self);
}

static void get_property(GObject *obj, guint id, GValue *v, GParamSpec *ps)
{
    QmcSwscale *self = (QmcSwscale *)obj;
    GST_OBJECT_LOCK(self);
    if (id == PROP_FLAGS)
        g_value_set_string(v, self->flags);
    else
        G_OBJECT_WARN_INVALID_PROPERTY_ID(obj, id, ps);
    GST_OBJECT_UNLOCK(self);
}

static gboolean stop(GstBaseTransform *trans)
{
    QmcSwscale *self = (QmcSwscale *)trans;
    sws_freeContext(self->sws);
    self->sws = NULL;
    av_frame_free(&self->padded);
    return TRUE;
}

static void finalize(GObject *obj)
{
    QmcSwscale *self = (QmcSwscale *)obj;
    sws_freeContext(self->sws);
    av_frame_free(&self->padded);
    g_free(self->flags);
    G_OBJECT_CLASS(qmc_swscale_parent_class)->finalize(obj);
}

static GstCaps *template_caps(void)
{
    GValue list = G_VALUE_INIT, v = G_VALUE_INIT;
    GstCaps *caps = gst_caps_new_simple("video/x-raw", "width", GST_TYPE_INT_RANGE, 1, G_MAXINT,
                                        "height", GST_TYPE_INT_RANGE, 1, G_MAXINT, "framerate",
                                        GST_TYPE_FRACTION_RANGE, 0, 1, G_MAXINT, 1, NULL);
    g_value_init(&list, GST_TYPE_LIST);
    g_value_init(&v, G_TYPE_STRING);
    for (gsize i = 0; i < G_N_ELEMENTS(formats); i++) {
        g_value_set_static_string(&v, formats[i].gst);
        gst_value_list_append_value(&list, &v);
    }
    gst_caps_set_value(caps, "format", &list);
    g_value_unset(&v);
    g_value_unset(&list);
    return caps;
}

static void qmc_swscale_class_init(QmcSwscaleClass *klass)
{
    GObjectClass *oc = G_OBJECT_CLASS(klass);
    GstElementClass *ec = GST_ELEMENT_CLASS(klass);
    GstBaseTransformClass *bc = GST_BASE_TRANSFORM_CLASS(klass);
    GstVideoFilterClass *vc = GST_VIDEO_FILTER_CLASS(klass);
    GstCaps *caps = template_caps();

    oc->set_property = set_property;
    oc->get_property = get_property;
    oc->finalize = finalize;
    g_object_class_install_property(oc, PROP_FLAGS,
        g_param_spec_string("flags", "Flags", "libswscale flags as FFmpeg's scale=...:flags= "
                            "takes them (one scaler, e.g. bicubic, lanczos+accurate_rnd)",
                            QMC_DEFAULT_SCALER,
                            G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
                            GST_PARAM_MUTABLE_READY));
    gst_element_class_add_pad_template(ec, gst_pad_template_new("sink", GST_PAD_SINK,
                                                                GST_PAD_ALWAYS, caps));
    gst_element_class_add_pad_template(ec, gst_pad_template_new("src", GST_PAD_SRC,
                                                                GST_PAD_ALWAYS, caps));
    gst_caps_unref(caps);
    gst_element_class_set_static_metadata(ec, "libswscale scaler (qmetric-compare)",
                                          "Filter/Converter/Video/Scaler",
                                          "Scales video as FFmpeg's scale filter does",
                                          "the gst-qmetric authors");
    bc->transform_caps = GST_DEBUG_FUNCPTR(transform_caps);
    bc->fixate_caps = GST_DEBUG_FUNCPTR(fixate_caps);
    bc->stop = GST_DEBUG_FUNCPTR(stop);
    vc->set_info = GST_DEBUG_FUNCPTR(set_info);
    vc->transform_frame = GST_DEBUG_FUNCPTR(transform_frame);
}

static void qmc_swscale_init(QmcSwscale *self)
{
    self->flags = g_strdup(QMC_DEFAULT_SCALER);
}

GstElement *qmc_make_scaler(const char *name, const char *flags)
{
    static gsize registered;
    GstElement *e;

    if (g_once_init_enter(&registered)) {
        GST_DEBUG_CATEGORY_INIT(qmc_swscale_debug, "qmcswscale", 0,
                                "qmetric-compare's libswscale scaler");
        gst_element_register(NULL, "qmcswscale", GST_RANK_NONE, qmc_swscale_get_type());
        g_once_init_leave(&registered, 1);
    }
    e = gst_element_factory_make("qmcswscale", name);
    if (e && flags)
        g_object_set(e, "flags", flags, NULL);
    return e;
}
