/* gst-qmetric tests: shared rig. */
#include <string.h>

#include <gst/check/gstcheck.h>
#include <gst/app/gstappsrc.h>
#include <gst/app/gstappsink.h>

#include "qmtest.h"

#define FRAME_NS (40 * GST_MSECOND)

static GstPadProbeReturn
tag_probe (GstPad * pad, GstPadProbeInfo * info, gpointer user)
{
  QmRig *rig = user;
  GstEvent *ev = GST_PAD_PROBE_INFO_EVENT (info);

  if (GST_EVENT_TYPE (ev) == GST_EVENT_TAG) {
    GstTagList *tl;
    gst_event_parse_tag (ev, &tl);
    g_ptr_array_add (rig->tags, gst_tag_list_copy (tl));
  }
  return GST_PAD_PROBE_OK;
}

static GstFlowReturn
on_sample (GstAppSink * sink, gpointer user)
{
  QmRig *rig = user;
  GstSample *s = gst_app_sink_pull_sample (sink);

  g_ptr_array_add (rig->buffers, gst_buffer_ref (gst_sample_get_buffer (s)));
  gst_sample_unref (s);
  return GST_FLOW_OK;
}

QmRig *
qm_rig_new (const gchar * props, const gchar * ref_caps,
    const gchar * dist_caps)
{
  QmRig *rig = g_new0 (QmRig, 1);
  GError *err = NULL;
  gchar *desc;
  GstCaps *caps;
  GstPad *pad;
  GstAppSinkCallbacks cb = { 0 };

  desc = g_strdup_printf ("appsrc name=ref format=time ! q.ref_sink "
      "appsrc name=dist format=time ! q.dist_sink "
      "qmetric name=q %s ! appsink name=sink sync=false", props ? props : "");
  rig->pipe = gst_parse_launch (desc, &err);
  fail_unless (rig->pipe != NULL, "pipeline %s: %s", desc,
      err ? err->message : "?");
  g_free (desc);
  rig->ref = gst_bin_get_by_name (GST_BIN (rig->pipe), "ref");
  rig->dist = gst_bin_get_by_name (GST_BIN (rig->pipe), "dist");
  rig->q = gst_bin_get_by_name (GST_BIN (rig->pipe), "q");
  rig->sink = gst_bin_get_by_name (GST_BIN (rig->pipe), "sink");

  caps = gst_caps_from_string (ref_caps);
  g_object_set (rig->ref, "caps", caps, NULL);
  gst_caps_unref (caps);
  caps = gst_caps_from_string (dist_caps ? dist_caps : ref_caps);
  g_object_set (rig->dist, "caps", caps, NULL);
  gst_caps_unref (caps);

  rig->scores = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_structure_free);
  rig->windows = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_structure_free);
  rig->warnings = g_ptr_array_new_with_free_func (g_free);
  rig->infos = g_ptr_array_new_with_free_func (g_free);
  rig->buffers = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  rig->tags = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_tag_list_unref);

  cb.new_sample = on_sample;
  gst_app_sink_set_callbacks (GST_APP_SINK (rig->sink), &cb, rig, NULL);
  pad = gst_element_get_static_pad (rig->sink, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, tag_probe, rig,
      NULL);
  gst_object_unref (pad);

  fail_unless (gst_element_set_state (rig->pipe, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  return rig;
}

void
qm_rig_push (QmRig * rig, gboolean ref, GstBuffer * buf, guint i)
{
  GST_BUFFER_PTS (buf) = i * FRAME_NS;
  GST_BUFFER_DURATION (buf) = FRAME_NS;
  gst_app_src_push_buffer (GST_APP_SRC (ref ? rig->ref : rig->dist), buf);
}

void
qm_rig_eos (QmRig * rig, gboolean ref)
{
  gst_app_src_end_of_stream (GST_APP_SRC (ref ? rig->ref : rig->dist));
}

void
qm_rig_run (QmRig * rig)
{
  GstBus *bus = gst_element_get_bus (rig->pipe);
  gint64 deadline = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;

  while (!rig->eos && !rig->error && g_get_monotonic_time () < deadline) {
    GstMessage *m = gst_bus_timed_pop (bus, 100 * GST_MSECOND);
    if (!m)
      continue;
    switch (GST_MESSAGE_TYPE (m)) {
      case GST_MESSAGE_EOS:
        rig->eos = TRUE;
        break;
      case GST_MESSAGE_ERROR:{
        GError *e;
        gchar *dbg;
        gst_message_parse_error (m, &e, &dbg);
        rig->error = g_strdup (e->message);
        GST_INFO ("error: %s (%s)", e->message, dbg);
        g_error_free (e);
        g_free (dbg);
        break;
      }
      case GST_MESSAGE_WARNING:{
        GError *e;
        gst_message_parse_warning (m, &e, NULL);
        g_ptr_array_add (rig->warnings, g_strdup (e->message));
        g_error_free (e);
        break;
      }
      case GST_MESSAGE_INFO:{
        GError *e;
        gst_message_parse_info (m, &e, NULL);
        g_ptr_array_add (rig->infos, g_strdup (e->message));
        g_error_free (e);
        break;
      }
      case GST_MESSAGE_ELEMENT:{
        const GstStructure *s = gst_message_get_structure (m);
        if (gst_structure_has_name (s, "qmetric"))
          g_ptr_array_add (rig->scores, gst_structure_copy (s));
        else if (gst_structure_has_name (s, "qmetric-summary"))
          rig->summary = gst_structure_copy (s);
        else if (gst_structure_has_name (s, "qmetric-window"))
          g_ptr_array_add (rig->windows, gst_structure_copy (s));
        break;
      }
      default:
        break;
    }
    gst_message_unref (m);
  }
  gst_object_unref (bus);
  fail_unless (rig->eos || rig->error, "pipeline did not finish in 60 s");
}

void
qm_rig_finish (QmRig * rig)
{
  qm_rig_eos (rig, TRUE);
  qm_rig_eos (rig, FALSE);
  qm_rig_run (rig);
}

void
qm_rig_free (QmRig * rig)
{
  gst_element_set_state (rig->pipe, GST_STATE_NULL);
  gst_object_unref (rig->ref);
  gst_object_unref (rig->dist);
  gst_object_unref (rig->q);
  gst_object_unref (rig->sink);
  gst_object_unref (rig->pipe);
  g_ptr_array_unref (rig->scores);
  g_ptr_array_unref (rig->windows);
  g_ptr_array_unref (rig->warnings);
  g_ptr_array_unref (rig->infos);
  g_ptr_array_unref (rig->buffers);
  g_ptr_array_unref (rig->tags);
  if (rig->summary)
    gst_structure_free (rig->summary);
  g_free (rig->error);
  g_free (rig);
}

guint64
qm_u64 (const GstStructure * s, const gchar * field)
{
  guint64 v = G_MAXUINT64;

  fail_unless (gst_structure_get_uint64 (s, field, &v), "no field %s", field);
  return v;
}

gboolean
qm_has_text (GPtrArray * texts, const gchar * part)
{
  guint i;

  for (i = 0; i < texts->len; i++)
    if (strstr (g_ptr_array_index (texts, i), part))
      return TRUE;
  return FALSE;
}

gdouble
qm_rig_score (QmRig * rig, guint n, const gchar * feature)
{
  gdouble v = 0;

  fail_unless (n < rig->scores->len, "only %u score messages", rig->scores->len);
  fail_unless (gst_structure_get_double (g_ptr_array_index (rig->scores, n),
          feature, &v), "message %u has no %s", n, feature);
  return v;
}

GstBuffer *
qm_make_frame (const gchar * caps_str, QmGenFn gen, gpointer user)
{
  GstCaps *caps = gst_caps_from_string (caps_str);
  GstVideoInfo info;
  GstVideoFrame f;
  GstBuffer *buf;
  guint c, x, y;

  fail_unless (gst_video_info_from_caps (&info, caps), "caps %s", caps_str);
  gst_caps_unref (caps);
  buf = gst_buffer_new_allocate (NULL, info.size, NULL);
  gst_buffer_memset (buf, 0, 0, info.size);
  fail_unless (gst_video_frame_map (&f, &info, buf, GST_MAP_WRITE));
  for (c = 0; c < GST_VIDEO_FRAME_N_COMPONENTS (&f); c++) {
    const GstVideoFormatInfo *fi = info.finfo;
    const gint bytes = fi->depth[c] + fi->shift[c] > 8 ? 2 : 1;
    /* an interleaved component's offset is one sample (GStreamer 1.22's
     * table says 1 byte for P010's Cr, so do not use poffset as is) */
    guint8 *data = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&f, fi->plane[c]) +
        (fi->poffset[c] ? bytes : 0);
    gint stride = GST_VIDEO_FRAME_COMP_STRIDE (&f, c);
    gint ps = GST_VIDEO_FRAME_COMP_PSTRIDE (&f, c);
    for (y = 0; y < (guint) GST_VIDEO_FRAME_COMP_HEIGHT (&f, c); y++) {
      for (x = 0; x < (guint) GST_VIDEO_FRAME_COMP_WIDTH (&f, c); x++) {
        guint v = gen (c, x, y, user) << fi->shift[c];
        guint8 *p = data + y * stride + x * ps;
        if (bytes == 2)
          GST_WRITE_UINT16_LE (p, v);
        else
          *p = v;
      }
    }
  }
  gst_video_frame_unmap (&f);
  return buf;
}
