/* qmetric-compare: "qmcswscale", the private element that scales the
 * distorted video on its streaming thread: any size to the size its
 * downstream caps ask for, the format kept (converted upstream), the buffer
 * passed through at the same size.  The scaling itself is libswscale's as
 * FFmpeg's scale filter uses it (swscale_av.c).
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "swscale.h"

#include <gst/video/gstvideofilter.h>

GST_DEBUG_CATEGORY_STATIC(qmc_swscale_debug);
#define GST_CAT_DEFAULT qmc_swscale_debug

typedef struct {
    GstVideoFilter parent;
    char *flags;               /* FFmpeg's flags= string */
    QmcSws *sws;               /* NULL: passthrough */
} QmcSwscale;

typedef struct {
    GstVideoFilterClass parent_class;
} QmcSwscaleClass;

enum { PROP_0, PROP_FLAGS };

static GType qmc_swscale_get_type(void);
G_DEFINE_TYPE(QmcSwscale, qmc_swscale, GST_TYPE_VIDEO_FILTER)

/* Any size on the other side, the rest unchanged: the format is converted
 * upstream, the size is what downstream's capsfilter asks for.  Other
 * memory than the system's (a decoder's CUDA memory) passes at its own
 * size only: libswscale reads system memory. */
static GstCaps *transform_caps(GstBaseTransform *trans, GstPadDirection dir, GstCaps *caps,
                               GstCaps *filter)
{
    GstCaps *ret = gst_caps_new_empty();

    for (guint i = 0; i < gst_caps_get_size(caps); i++) {
        GstStructure *s = gst_structure_copy(gst_caps_get_structure(caps, i));
        GstCapsFeatures *f = gst_caps_get_features(caps, i);
        if (!f || gst_caps_features_is_equal(f, GST_CAPS_FEATURES_MEMORY_SYSTEM_MEMORY)) {
            gst_structure_set(s, "width", GST_TYPE_INT_RANGE, 1, G_MAXINT, "height",
                              GST_TYPE_INT_RANGE, 1, G_MAXINT, NULL);
            /* the pixels change shape with the size: leave it to the sink */
            gst_structure_remove_field(s, "pixel-aspect-ratio");
        }
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

static gboolean set_info(GstVideoFilter *filter, GstCaps *incaps, GstVideoInfo *in,
                         GstCaps *outcaps, GstVideoInfo *out)
{
    QmcSwscale *self = (QmcSwscale *)filter;
    char *flags, *why = NULL;

    qmc_sws_close(self->sws);
    self->sws = NULL;
    if (GST_VIDEO_INFO_FORMAT(in) != GST_VIDEO_INFO_FORMAT(out)) {
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("cannot scale %s into %s: the scaler keeps "
                          "the format", gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(in)),
                          gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(out))), (NULL));
        return FALSE;
    }
    gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self),
                                       in->width == out->width && in->height == out->height);
    if (in->width == out->width && in->height == out->height)
        return TRUE;
    GST_OBJECT_LOCK(self);
    flags = g_strdup(self->flags);
    GST_OBJECT_UNLOCK(self);
    self->sws = qmc_sws_open(in, out, flags, &why);
    if (!self->sws)
        GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("%s", why), (NULL));
    else
        GST_INFO_OBJECT(self, "%s %dx%d -> %dx%d, flags %s",
                        gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(in)), in->width,
                        in->height, out->width, out->height, flags);
    g_free(flags);
    g_free(why);
    return self->sws != NULL;
}

static GstFlowReturn transform_frame(GstVideoFilter *filter, GstVideoFrame *in,
                                     GstVideoFrame *out)
{
    QmcSwscale *self = (QmcSwscale *)filter;
    char *why = NULL;

    if (qmc_sws_scale(self->sws, in, out, &why))
        return GST_FLOW_OK;
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("%s", why), (NULL));
    g_free(why);
    return GST_FLOW_ERROR;
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
    qmc_sws_close(self->sws);
    self->sws = NULL;
    return TRUE;
}

static void finalize(GObject *obj)
{
    QmcSwscale *self = (QmcSwscale *)obj;
    qmc_sws_close(self->sws);
    g_free(self->flags);
    G_OBJECT_CLASS(qmc_swscale_parent_class)->finalize(obj);
}

static void qmc_swscale_class_init(QmcSwscaleClass *klass)
{
    GObjectClass *oc = G_OBJECT_CLASS(klass);
    GstElementClass *ec = GST_ELEMENT_CLASS(klass);
    GstBaseTransformClass *bc = GST_BASE_TRANSFORM_CLASS(klass);
    GstVideoFilterClass *vc = GST_VIDEO_FILTER_CLASS(klass);
    /* any format in system memory: the scaling refuses what it cannot do,
     * naming the format, and the same size always passes; in other memory
     * the same size only (transform_caps()) */
    GstCaps *caps = gst_caps_from_string("video/x-raw; video/x-raw(ANY)");

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
