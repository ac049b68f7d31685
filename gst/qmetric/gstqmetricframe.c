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

gboolean
gst_qmetric_info_from_caps (GstVideoInfo * info, const GstCaps * caps)
{
  if (!gst_video_info_from_caps (info, caps))
    return FALSE;
  if (!gst_structure_has_field (gst_caps_get_structure (caps, 0),
          "colorimetry"))
    info->colorimetry.matrix = GST_VIDEO_COLOR_MATRIX_UNKNOWN;
  return TRUE;
}

static const struct {
  GstVideoColorMatrix gst;
  QmMatrix qm;
} matrices[] = {
  {GST_VIDEO_COLOR_MATRIX_BT709, QM_MATRIX_BT709},
  {GST_VIDEO_COLOR_MATRIX_BT601, QM_MATRIX_BT601},
  {GST_VIDEO_COLOR_MATRIX_BT2020, QM_MATRIX_BT2020},
  {GST_VIDEO_COLOR_MATRIX_SMPTE240M, QM_MATRIX_SMPTE240M},
  {GST_VIDEO_COLOR_MATRIX_FCC, QM_MATRIX_FCC},
};

/* A side's colorimetry as QmPicture.color takes it: what its caps state
 * (any other matrix: unknown). */
static void
color_of (const GstVideoInfo * info, QmColor * c)
{
  guint i;

  c->matrix = QM_MATRIX_UNKNOWN;
  for (i = 0; i < G_N_ELEMENTS (matrices); i++)
    if (matrices[i].gst == info->colorimetry.matrix)
      c->matrix = matrices[i].qm;
  c->range = info->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255 ?
      QM_RANGE_FULL : info->colorimetry.range == GST_VIDEO_COLOR_RANGE_16_235 ?
      QM_RANGE_LIMITED : QM_RANGE_UNKNOWN;
}

void
gst_qmetric_sides_share_color (GstQmetricSide * ref, GstQmetricSide * dist)
{
  if (ref->pic.color.matrix == QM_MATRIX_UNKNOWN)
    ref->pic.color = dist->pic.color;
  else if (dist->pic.color.matrix == QM_MATRIX_UNKNOWN)
    dist->pic.color = ref->pic.color;
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

/* Every plane of a mapped frame lies inside the memory it was mapped from:
 * a GstVideoMeta's offsets and strides are the producer's word, not checked
 * by gst_video_frame_map() against the memory's size.  Rows must not
 * overlap (a stride shorter than a row, or negative, is refused too). */
static gboolean
check_extent (GstQmetricSide * side)
{
  GstVideoFrame *fr = &side->frame;
  const GstVideoFormatInfo *fi = fr->info.finfo;
  guint pl, c;

  for (pl = 0; pl < GST_VIDEO_FRAME_N_PLANES (fr); pl++) {
    /* the meta path maps each plane's memory; otherwise map[0] is all */
    const GstMapInfo *m = fr->meta ? &fr->map[pl] : &fr->map[0];
    const guint8 *base = m->data, *data = fr->data[pl];
    const gint64 stride = GST_VIDEO_FRAME_PLANE_STRIDE (fr, pl);
    guint64 row = 0, rows = 0, off, need;

    for (c = 0; c < GST_VIDEO_FRAME_N_COMPONENTS (fr); c++) {
      if (fi->plane[c] != pl)
        continue;
      row = MAX (row, (guint64) GST_VIDEO_FRAME_COMP_WIDTH (fr, c) *
          GST_VIDEO_FRAME_COMP_PSTRIDE (fr, c));
      rows = MAX (rows, (guint64) GST_VIDEO_FRAME_COMP_HEIGHT (fr, c));
    }
    if (rows == 0)
      continue;
    if (stride < (gint64) row) {
      side->problem = g_strdup_printf ("plane %u has a stride of %"
          G_GINT64_FORMAT " bytes, shorter than its rows (%" G_GUINT64_FORMAT
          " bytes)", pl, stride, row);
      return FALSE;
    }
    if (data < base || (gsize) (data - base) > m->size) {
      side->problem = g_strdup_printf ("plane %u starts outside its memory",
          pl);
      return FALSE;
    }
    off = (guint64) (data - base);
    /* stride <= G_MAXINT and rows <= G_MAXINT: no overflow in 64 bits */
    need = off + (guint64) stride * (rows - 1) + row;
    if (need > m->size) {
      side->problem = g_strdup_printf ("plane %u needs %" G_GUINT64_FORMAT
          " bytes (offset %" G_GUINT64_FORMAT ", stride %" G_GINT64_FORMAT
          ", %" G_GUINT64_FORMAT " rows) but its memory has %" G_GSIZE_FORMAT,
          pl, need, off, stride, rows, m->size);
      return FALSE;
    }
  }
  return TRUE;
}

/* A GstVideoMeta that disagrees with the caps would make
 * gst_video_frame_map() fail with a critical (it asserts them): refuse it
 * first, with a reason. */
static gboolean
check_meta (GstQmetricSide * side, const GstVideoInfo * info,
    GstBuffer * buffer)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buffer);

  if (!meta)
    return TRUE;
  if (meta->format != GST_VIDEO_INFO_FORMAT (info) ||
      meta->n_planes != GST_VIDEO_INFO_N_PLANES (info) ||
      meta->width < (guint) GST_VIDEO_INFO_WIDTH (info) ||
      meta->height < (guint) GST_VIDEO_INFO_HEIGHT (info)) {
    side->problem = g_strdup_printf ("its video meta (%ux%u %s, %u planes) "
        "does not match the caps (%dx%d %s)", meta->width, meta->height,
        gst_video_format_to_string (meta->format), meta->n_planes,
        GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info),
        gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (info)));
    return FALSE;
  }
  return TRUE;
}

/* Samples of a 10- or 12-bit format stored LSB-aligned in 16 bits: the
 * upper bits must be zero.  The metrics index tables and scale by the bit
 * depth, so a larger value is refused rather than guessed at (clamping or
 * masking would score a picture nobody sent).  One OR over the frame;
 * only on failure a second pass finds the first offender for the warning. */
static gboolean
check_range (GstQmetricSide * side)
{
  const QmPicture *p = &side->pic;
  const guint16 mask = (guint16) ~((1u << p->bpc) - 1);
  gint pl, x, y, w, h;

  for (pl = 0; pl < qm_n_planes (p->chroma); pl++) {
    guint16 acc = 0;

    qm_plane_size_full (p->w, p->h, p->chroma, pl, &w, &h);
    for (y = 0; y < h; y++) {
      const guint16 *s = (const guint16 *) ((const guint8 *) p->data[pl] +
          (gsize) y * p->stride[pl]);
      for (x = 0; x < w; x++)
        acc |= GUINT16_FROM_LE (s[x]);
    }
    if (!(acc & mask))
      continue;
    for (y = 0; y < h; y++) {
      const guint16 *s = (const guint16 *) ((const guint8 *) p->data[pl] +
          (gsize) y * p->stride[pl]);
      for (x = 0; x < w; x++) {
        if (GUINT16_FROM_LE (s[x]) & mask) {
          side->problem = g_strdup_printf ("plane %d has the value %u at "
              "(%d, %d), beyond %d bits", pl, GUINT16_FROM_LE (s[x]), x, y,
              p->bpc);
          return FALSE;
        }
      }
    }
  }
  return TRUE;
}

/* Describe a mapped frame's planes as they are stored: semi-planar chroma
 * as one interleaved plane (step 2), samples MSB-aligned (shift). */
static void
describe_as_stored (GstQmetricSide * side, const GstQmetricFormat * f)
{
  QmPicture *p = &side->pic;
  const gint bytes = f->bpc > 8 ? 2 : 1;
  gint pl;

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
}

/* CUDA memory read in place by the CUDA backend. */
static GstQmetricMapResult
map_device (GstQmetricSide * side, const GstQmetricFormat * f,
    const GstVideoInfo * info, GstBuffer * buffer)
{
  if (!gst_video_frame_map (&side->frame, (GstVideoInfo *) info, buffer,
          GST_MAP_READ | gst_qmetric_cuda_map_flags ())) {
    side->problem = g_strdup ("it cannot be mapped (smaller than its caps "
        "say?)");
    return GST_QMETRIC_MAP_UNREADABLE;
  }
  side->mapped = TRUE;
  if (!check_extent (side))
    return GST_QMETRIC_MAP_UNREADABLE;
  gst_qmetric_cuda_buffer_sync (buffer);
  side->pic.flags = QM_PICTURE_DEVICE;
  describe_as_stored (side, f);
  return GST_QMETRIC_MAP_OK;
}

GstQmetricMapResult
gst_qmetric_side_map (GstQmetricSide * side, const GstVideoInfo * info,
    GstBuffer * buffer, gboolean device, gboolean as_stored)
{
  const GstQmetricFormat *f = gst_qmetric_format_lookup (GST_VIDEO_INFO_FORMAT
      (info));
  const gint w = GST_VIDEO_INFO_WIDTH (info), h = GST_VIDEO_INFO_HEIGHT (info);
  const gint bytes = f && f->bpc > 8 ? 2 : 1;
  QmPicture *p = &side->pic;
  gint pl, cw, ch;

  memset (side, 0, sizeof (*side));
  if (!f) {
    side->problem = g_strdup_printf ("the format %s is not supported",
        gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (info)));
    return GST_QMETRIC_MAP_UNREADABLE;
  }
  if (!check_meta (side, info, buffer))
    return GST_QMETRIC_MAP_UNREADABLE;
  p->w = w;
  p->h = h;
  p->bpc = f->bpc;
  p->chroma = f->chroma;
  color_of (info, &p->color);
  if (device)
    return map_device (side, f, info, buffer);
  if (!gst_video_frame_map (&side->frame, (GstVideoInfo *) info, buffer,
          GST_MAP_READ)) {
    side->problem = g_strdup_printf ("it cannot be mapped (%" G_GSIZE_FORMAT
        " bytes, the caps need %" G_GSIZE_FORMAT ")",
        gst_buffer_get_size (buffer), GST_VIDEO_INFO_SIZE (info));
    return GST_QMETRIC_MAP_UNREADABLE;
  }
  side->mapped = TRUE;
  if (!check_extent (side))
    return GST_QMETRIC_MAP_UNREADABLE;

  /* whole chroma planes: XPSNR and SSIMULACRA2 read an odd size's last
   * column/row */
  qm_plane_size_full (w, h, f->chroma, 1, &cw, &ch);

  if (!f->semi && f->shift == 0) {
    for (pl = 0; pl < qm_n_planes (f->chroma); pl++) {
      gint src = pl;
      if (f->swap_uv && pl > 0)
        src = 3 - pl;
      p->data[pl] = GST_VIDEO_FRAME_PLANE_DATA (&side->frame, src);
      p->stride[pl] = GST_VIDEO_FRAME_PLANE_STRIDE (&side->frame, src);
    }
    if (f->bpc > 8 && f->bpc < 16 && !check_range (side))
      return GST_QMETRIC_MAP_OUT_OF_RANGE;
    return GST_QMETRIC_MAP_OK;
  }

  /* semi-planar and/or MSB-aligned: an engine that reads them as they are
   * stored (the CUDA backend: its staging copies the planes as they are,
   * its kernels step and shift) is given them so; for the others a planar
   * copy with LSB-aligned samples.  (NV21's Cr leads its pairs: copied,
   * so that no plane begins inside another's pairs.) */
  if (as_stored && !f->swap_uv) {
    describe_as_stored (side, f);
    return GST_QMETRIC_MAP_OK;
  }
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
  /* shifted formats (P010, P012) drop the low bits: always in range */
  return GST_QMETRIC_MAP_OK;
}

void
gst_qmetric_side_unmap (GstQmetricSide * side)
{
  if (side->mapped)
    gst_video_frame_unmap (&side->frame);
  side->mapped = FALSE;
  g_clear_pointer (&side->scratch, g_free);
  g_clear_pointer (&side->problem, g_free);
}
