/* qmetric-compare: each input decoded on the GPU of the element it feeds.
 *
 * GStreamer's nvcodec registers one NVDEC decoder per GPU and codec: the
 * first GPU's as nvh264dec, the next ones' as nvh264device1dec, ..., each
 * one rank lower.  decodebin plugs the highest rank, so every input would
 * be decoded on the first GPU, and a rendition scored on another GPU
 * (--gpus) or a run on --cuda-device-id N would have each picture copied
 * from GPU to GPU through the host (the summary's cuda_buffers.copied) on
 * a decoder that all of them share.  uridecodebin's autoplug-sort puts the
 * decoders of the element's GPU before the other decoders; where that GPU
 * has none for the stream, the order stays decodebin's. */
#include "compare.h"

#include <string.h>

/* factory name -> its CUDA device + 1, for the decoders that have one */
static gpointer scan_decoders(gpointer unused)
{
    GHashTable *t = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GList *list = gst_element_factory_list_get_elements(
        GST_ELEMENT_FACTORY_TYPE_DECODER | GST_ELEMENT_FACTORY_TYPE_MEDIA_VIDEO,
        GST_RANK_MARGINAL);
    (void)unused;

    for (GList *l = list; l; l = l->next) {
        GstElementFactory *f = l->data;
        const char *klass = gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_KLASS);
        GstElement *e;
        GParamSpec *p;

        /* (making one opens nothing: NVDEC's decoders open the GPU in
         * their start) */
        if (!klass || !strstr(klass, "Hardware") || !(e = gst_element_factory_create(f, NULL)))
            continue;
        gst_object_ref_sink(e);
        p = g_object_class_find_property(G_OBJECT_GET_CLASS(e), "cuda-device-id");
        if (p && (p->flags & G_PARAM_READABLE) &&
            (p->value_type == G_TYPE_UINT || p->value_type == G_TYPE_INT)) {
            GValue v = G_VALUE_INIT;
            g_value_init(&v, p->value_type);
            g_object_get_property(G_OBJECT(e), "cuda-device-id", &v);
            const int dev = p->value_type == G_TYPE_UINT ? (int)g_value_get_uint(&v)
                                                         : g_value_get_int(&v);
            if (dev >= 0)
                g_hash_table_insert(t, g_strdup(GST_OBJECT_NAME(f)), GINT_TO_POINTER(dev + 1));
        }
        gst_object_unref(e);
    }
    gst_plugin_feature_list_free(list);
    return t;
}

/* the CUDA device of a decoder factory; -1 none */
static int factory_device(GstElementFactory *f)
{
    static GOnce once = G_ONCE_INIT;
    GHashTable *t = g_once(&once, scan_decoders, NULL);
    return GPOINTER_TO_INT(g_hash_table_lookup(t, GST_OBJECT_NAME(f))) - 1;
}

static gboolean is_decoder(GstElementFactory *f)
{
    const char *klass = gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_KLASS);
    return klass && strstr(klass, "Decoder");
}

G_GNUC_BEGIN_IGNORE_DEPRECATIONS /* GValueArray: the signal's type */
/* The factories in decodebin's order, but the decoders of GPU `want` where
 * the first decoder was (parsers stay before them); NULL: no change. */
static GValueArray *on_autoplug_sort(GstElement *bin, GstPad *pad, GstCaps *caps,
                                     GValueArray *factories, gpointer data)
{
    const int want = GPOINTER_TO_INT(data);
    GValueArray *out;
    gboolean any = FALSE, placed = FALSE;
    (void)bin;
    (void)pad;
    (void)caps;

    for (guint i = 0; i < factories->n_values && !any; i++) {
        GstElementFactory *f = g_value_get_object(g_value_array_get_nth(factories, i));
        any = factory_device(f) == want;
    }
    if (!any)
        return NULL;
    out = g_value_array_new(factories->n_values);
    for (guint i = 0; i < factories->n_values; i++) {
        GValue *v = g_value_array_get_nth(factories, i);
        GstElementFactory *f = g_value_get_object(v);
        if (factory_device(f) == want)
            continue;
        if (!placed && is_decoder(f)) {
            for (guint j = 0; j < factories->n_values; j++) {
                GValue *w = g_value_array_get_nth(factories, j);
                if (factory_device(g_value_get_object(w)) == want)
                    g_value_array_append(out, w);
            }
            placed = TRUE;
        }
        g_value_array_append(out, v);
    }
    if (!placed) /* (only decoders of that GPU: they come last, as they were) */
        for (guint j = 0; j < factories->n_values; j++) {
            GValue *w = g_value_array_get_nth(factories, j);
            if (factory_device(g_value_get_object(w)) == want)
                g_value_array_append(out, w);
        }
    return out;
}
G_GNUC_END_IGNORE_DEPRECATIONS

/* The CUDA device of the element a side feeds (a ladder's reference: the
 * first rendition's); -1 where it has none set. */
static int side_device(const Side *s)
{
    const App *app = s->app;
    GstElement *qm = s->qm;
    int dev = -1;

    if (!qm && app->dists && app->dists->len)
        qm = ((Side *)app->dists->pdata[0])->qm;
    if (!qm || (app->o.backend && !strcmp(app->o.backend, "cpu")))
        return -1;
    g_object_get(qm, "cuda-device-id", &dev, NULL);
    return dev;
}

void qmc_decode_on_gpu(Side *s, GstElement *uridecodebin)
{
    const int dev = side_device(s);
    if (dev >= 0)
        g_signal_connect(uridecodebin, "autoplug-sort", G_CALLBACK(on_autoplug_sort),
                         GINT_TO_POINTER(dev));
}
