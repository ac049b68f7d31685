/* GStreamer qmetric: map video frames for the engine.
 *
 * Planar formats with LSB-aligned samples are read in place (honouring the
 * frame's strides); semi-planar chroma and MSB-aligned samples (P010 and
 * friends) are converted into a planar copy first, since the C reference
 * code reads plain planes. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <string.h>

#include "gstqmetricframe.h"
#include "gstqmetriccuda.h"

static const GstQmetricFormat formats[] = {
  {GST_VIDEO_FORMAT_I420, QM_CHROMA_420, 8, 0, FALSE, FALSE},
  {GST_VIDEO_FORMAT_YV12, QM_CHROMA_420, 8, 0, FALSE, TRUE},
  {GST_VIDEO_FORMAT_NV12, QM_CHROMA_420, 8, 0, TRUE, FALSE},
  {GST_VIDEO_FORMAT_NV21, QM_CHROMA_420, 8, 0, TRUE, TRUE},
  {GST_VIDEO_FORMAT_Y42B, QM_CHROMA_422, 8, 0, FALSE, FALSE},
  {GST_VIDEO_FORMAT_Y444, QM_CHROMA_444, 8, 0, FALSE, FALSE},
  {GST_VIDEO_FORMAT_GRAY8, QM_CHROMA_400, 8, 0, FALSE, FALSE},
  {GST_VIDEO_FORMAT_I420_10LE, QM_CHROMA_420, 10, 0, FALSE, FALSE},
  {GST_VIDEO_FORMAT_I422_10LE, QM_CHROMA_422, 10, 0, FALSE, FALSE},
  {GST_VIDEO_FORMAT_Y444_10LE, QM_CHROMA_444, 10, 0, FALSE, FALSE},
  {GST_VIDEO_FORMAT_P010_10LE, QM_CHROMA_420, 10, 6, TRUE, FALSE},
  {GST_VIDEO_FORMAT_I420_12LE, QM_CHROMA_420, 12, 0, FALSE, FALSE},
  {GST_VIDEO_FORMAT_I422_12LE, QM_CHROMA_422, 12, 0, FALSE, FALSE},
  {GST_VIDEO_FORMAT_Y444_12LE, QM_CHROMA_444, 12, 0, FALSE, FALSE},
  {GST_VIDEO_FORMAT_P012_LE, QM_CHROMA_420, 12, 4, TRUE, FALSE},
  {GST_VIDEO_FORMAT_Y444_16LE, QM_CHROMA_444, 16, 0, FALSE, FALSE},
  {GST_VIDEO_FORMAT_P016_LE, QM_CHROMA_420, 16, 0, TRUE, FALSE},
  {GST_VIDEO_FORMAT_GRAY16_LE, QM_CHROMA_400, 16, 0, FALSE, FALSE},
};

const GstQmetricFormat *
gst_qmetric_format_lookup (GstVideoFormat format)
{
  guint i;

  for (i = 0; i < G_N_ELEMENTS (formats); i++)
    if (formats[i].format == format)
      return &formats[i];
  return NULL;
}

/* Copy one plane, shifting samples right (16-bit samples only). */
static void
copy_shifted (guint8 * dst, gsize dst_stride, const guint8 * src,
    gint src_stride, gint w, gint h, gint shift)
{
  gint x, y;

  for (y = 0; y < h; y++) {
    const guint16 *s = (const guint16 *) (src + (gsize) y * src_stride);
    guint16 *d = (guint16 *) (dst + (gsize) y * dst_stride);
    for (x = 0; x < w; x++)
      d[x] = GUINT16_FROM_LE (s[x]) >> shift;
  }
}

/* Split an interleaved CbCr plane into two planes. */
static void
deinterleave (guint8 * cb, guint8 * cr, gsize dst_stride, const guint8 * src,
    gint src_stride, gint w, gint h, gint bytes, gint shift)
{
  gint x, y;

  for (y = 0; y < h; y++) {
    const guint8 *s = src + (gsize) y * src_stride;
    if (bytes == 1) {
      guint8 *a = cb + (gsize) y * dst_stride, *b = cr + (gsize) y * dst_stride;
      for (x = 0; x < w; x++) {
        a[x] = s[2 * x];
        b[x] = s[2 * x + 1];
      }
    } else {
      const guint16 *s16 = (const guint16 *) s;
      guint16 *a = (guint16 *) (cb + (gsize) y * dst_stride);
      guint16 *b = (guint16 *) (cr + (gsize) y * dst_stride);
      for (x = 0; x < w; x++) {
        a[x] = GUINT16_FROM_LE (s16[2 * x]) >> shift;
        b[x] = GUINT16_FROM_LE (s16[2 * x + 1]) >> shift;
      }
    }
  }
}

/* CUDA memory read in place by the CUDA backend. */
static gboolean
map_device (GstQmetricSide * side, const GstQmetricFormat * f,
    const GstVideoInfo * info, GstBuffer * buffer)
{
  QmPicture *p = &side->pic;
  const gint bytes = f->bpc > 8 ? 2 : 1;
  gint pl;

  if (!gst_video_frame_map (&side->frame, (GstVideoInfo *) info, buffer,
          GST_MAP_READ | gst_qmetric_cuda_map_flags ()))
    return FALSE;
  side->mapped = TRUE;
  gst_qmetric_cuda_buffer_sync (buffer);
  p->flags = QM_PICTURE_DEVICE;
  p->shift = f->shift;
  p->data[0] = GST_VIDEO_FRAME_PLANE_DATA (&side->frame, 0);
  p->stride[0] = GST_VIDEO_FRAME_PLANE_STRIDE (&side->frame, 0);
  if (f->semi) {
    const guint8 *uv = GST_VIDEO_FRAME_PLANE_DATA (&side->frame, 1);
    p->data[1] = uv + (f->swap_uv ? bytes : 0);
    p->data[2] = uv + (f->swap_uv ? 0 : bytes);
    p->stride[1] = p->stride[2] = GST_VIDEO_FRAME_PLANE_STRIDE (&side->frame, 1);
    p->step[1] = p->step[2] = 2;
  } else {
    for (pl = 1; pl < qm_n_planes (f->chroma); pl++) {
      gint src = f->swap_uv ? 3 - pl : pl;
      p->data[pl] = GST_VIDEO_FRAME_PLANE_DATA (&side->frame, src);
      p->stride[pl] = GST_VIDEO_FRAME_PLANE_STRIDE (&side->frame, src);
    }
  }
  return TRUE;
}

gboolean
gst_qmetric_side_map (GstQmetricSide * side, const GstVideoInfo * info,
    GstBuffer * buffer, gboolean device)
{
  const GstQmetricFormat *f = gst_qmetric_format_lookup (GST_VIDEO_INFO_FORMAT
      (info));
  const gint w = GST_VIDEO_INFO_WIDTH (info), h = GST_VIDEO_INFO_HEIGHT (info);
  const gint bytes = f && f->bpc > 8 ? 2 : 1;
  QmPicture *p = &side->pic;
  gint pl, cw, ch;

  memset (side, 0, sizeof (*side));
  if (!f)
    return FALSE;
  p->w = w;
  p->h = h;
  p->bpc = f->bpc;
  p->chroma = f->chroma;
  if (device)
    return map_device (side, f, info, buffer);
  if (!gst_video_frame_map (&side->frame, (GstVideoInfo *) info, buffer,
          GST_MAP_READ))
    return FALSE;
  side->mapped = TRUE;

  qm_plane_size (w, h, f->chroma, 1, &cw, &ch);

  if (!f->semi && f->shift == 0) {
    for (pl = 0; pl < qm_n_planes (f->chroma); pl++) {
      gint src = pl;
      if (f->swap_uv && pl > 0)
        src = 3 - pl;
      p->data[pl] = GST_VIDEO_FRAME_PLANE_DATA (&side->frame, src);
      p->stride[pl] = GST_VIDEO_FRAME_PLANE_STRIDE (&side->frame, src);
    }
    return TRUE;
  }

  /* semi-planar and/or MSB-aligned: planar copy with LSB-aligned samples */
  {
    const gsize ys = (gsize) w * bytes, cs = (gsize) MAX (cw, 1) * bytes;
    guint8 *y, *cb, *cr;

    side->scratch = g_malloc (ys * h + 2 * cs * MAX (ch, 1));
    y = side->scratch;
    cb = y + ys * h;
    cr = cb + cs * MAX (ch, 1);
    if (f->shift) {
      copy_shifted (y, ys, GST_VIDEO_FRAME_PLANE_DATA (&side->frame, 0),
          GST_VIDEO_FRAME_PLANE_STRIDE (&side->frame, 0), w, h, f->shift);
      p->data[0] = y;
      p->stride[0] = ys;
    } else {
      p->data[0] = GST_VIDEO_FRAME_PLANE_DATA (&side->frame, 0);
      p->stride[0] = GST_VIDEO_FRAME_PLANE_STRIDE (&side->frame, 0);
    }
    if (f->semi) {
      deinterleave (f->swap_uv ? cr : cb, f->swap_uv ? cb : cr, cs,
          GST_VIDEO_FRAME_PLANE_DATA (&side->frame, 1),
          GST_VIDEO_FRAME_PLANE_STRIDE (&side->frame, 1), cw, ch, bytes,
          f->shift);
    }
    p->data[1] = cb;
    p->data[2] = cr;
    p->stride[1] = p->stride[2] = cs;
  }
  return TRUE;
}

void
gst_qmetric_side_unmap (GstQmetricSide * side)
{
  if (side->mapped)
    gst_video_frame_unmap (&side->frame);
  side->mapped = FALSE;
  g_clear_pointer (&side->scratch, g_free);
}
