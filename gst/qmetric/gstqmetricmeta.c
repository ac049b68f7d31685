/* GStreamer qmetric: GstQmetricMeta implementation. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstqmetricmeta.h"

GType
gst_qmetric_meta_api_register (void)
{
  static GType type = 0;
  static const gchar *tags[] = { NULL };

  if (g_once_init_enter (&type)) {
    GType t = gst_meta_api_type_register (GST_QMETRIC_META_API_NAME, tags);
    g_once_init_leave (&type, t);
  }
  return type;
}

static gboolean
gst_qmetric_meta_init (GstMeta * meta, gpointer params, GstBuffer * buffer)
{
  GstQmetricMeta *m = (GstQmetricMeta *) meta;

  m->index = 0;
  m->n_scores = 0;
  m->names = NULL;
  m->values = NULL;
  return TRUE;
}

static void
gst_qmetric_meta_free (GstMeta * meta, GstBuffer * buffer)
{
  GstQmetricMeta *m = (GstQmetricMeta *) meta;

  g_free (m->names);
  g_free (m->values);
}

static gboolean
gst_qmetric_meta_transform (GstBuffer * dest, GstMeta * meta,
    GstBuffer * buffer, GQuark type, gpointer data)
{
  GstQmetricMeta *m = (GstQmetricMeta *) meta;

  /* scores describe the picture, which a copy still shows */
  if (GST_META_TRANSFORM_IS_COPY (type)) {
    gst_buffer_add_qmetric_meta (dest, m->index, m->n_scores, m->names,
        m->values);
    return TRUE;
  }
  return FALSE;
}

const GstMetaInfo *
gst_qmetric_meta_get_info (void)
{
  static const GstMetaInfo *info = NULL;

  if (g_once_init_enter (&info)) {
    const GstMetaInfo *mi = gst_meta_register (gst_qmetric_meta_api_register (),
        GST_QMETRIC_META_INFO_NAME, sizeof (GstQmetricMeta),
        gst_qmetric_meta_init, gst_qmetric_meta_free,
        gst_qmetric_meta_transform);
    g_once_init_leave (&info, mi);
  }
  return info;
}

GstQmetricMeta *
gst_buffer_add_qmetric_meta (GstBuffer * buffer, guint64 index,
    guint n_scores, const gchar ** names, const gdouble * values)
{
  GstQmetricMeta *m;

  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);

  m = (GstQmetricMeta *) gst_buffer_add_meta (buffer,
      gst_qmetric_meta_get_info (), NULL);
  if (!m)
    return NULL;
  m->index = index;
  m->n_scores = n_scores;
  m->names = g_memdup2 (names, n_scores * sizeof (gchar *));
  m->values = g_memdup2 (values, n_scores * sizeof (gdouble));
  return m;
}
