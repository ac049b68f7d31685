/* GStreamer qmetric: per-frame quality scores attached to output buffers.
 *
 * The qmetric element attaches one GstQmetricMeta to each distorted frame it
 * pushes after scoring it.  Applications read it without linking the plugin:
 * this header is self-contained (the API type is looked up by name once the
 * plugin is loaded, e.g. after the element has been created).
 *
 *   GstQmetricMeta *m = gst_buffer_get_qmetric_meta (buffer);
 *   gdouble vmaf;
 *   if (m && gst_qmetric_meta_get_score (m, "vmaf", &vmaf)) ...
 */
#ifndef __GST_QMETRIC_META_H__
#define __GST_QMETRIC_META_H__

#include <string.h>

#include <gst/gst.h>

G_BEGIN_DECLS

#define GST_QMETRIC_META_API_NAME "GstQmetricMetaAPI"
#define GST_QMETRIC_META_INFO_NAME "GstQmetricMeta"

/**
 * GstQmetricMeta:
 * @meta: parent #GstMeta
 * @index: index of the compared pair (0 for the first pair of the stream)
 * @n_scores: number of scores
 * @names: (array length=n_scores): feature names (libvmaf's JSON keys, e.g.
 *   "vmaf", "psnr_y"), interned strings
 * @values: (array length=n_scores): the scores; +inf where the metric is
 *   infinite (e.g. psnr_hvs of identical frames)
 */
typedef struct _GstQmetricMeta {
  GstMeta meta;

  guint64 index;
  guint n_scores;
  const gchar **names;
  gdouble *values;
} GstQmetricMeta;

/* Registered by the plugin; 0 until the plugin is loaded. */
static inline GType
gst_qmetric_meta_api_get_type (void)
{
  return g_type_from_name (GST_QMETRIC_META_API_NAME);
}

static inline GstQmetricMeta *
gst_buffer_get_qmetric_meta (GstBuffer * buffer)
{
  GType api = gst_qmetric_meta_api_get_type ();
  return api ? (GstQmetricMeta *) gst_buffer_get_meta (buffer, api) : NULL;
}

/* Look a score up by feature name; FALSE when the meta does not carry it. */
static inline gboolean
gst_qmetric_meta_get_score (const GstQmetricMeta * meta, const gchar * name,
    gdouble * value)
{
  guint i;

  for (i = 0; i < meta->n_scores; i++) {
    if (strcmp (meta->names[i], name) == 0) {
      if (value)
        *value = meta->values[i];
      return TRUE;
    }
  }
  return FALSE;
}

/* For the plugin's own use. */
GType gst_qmetric_meta_api_register (void);
const GstMetaInfo *gst_qmetric_meta_get_info (void);
GstQmetricMeta *gst_buffer_add_qmetric_meta (GstBuffer * buffer,
    guint64 index, guint n_scores, const gchar ** names,
    const gdouble * values);

G_END_DECLS

#endif /* __GST_QMETRIC_META_H__ */
