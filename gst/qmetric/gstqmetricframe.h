/* GStreamer qmetric: GstVideoFrame <-> engine picture. */
#ifndef __GST_QMETRIC_FRAME_H__
#define __GST_QMETRIC_FRAME_H__

#include <gst/video/video.h>

#include "qm.h"

G_BEGIN_DECLS

/* How a raw video format reaches the engine. */
typedef struct {
  GstVideoFormat format;
  QmChroma chroma;
  gint bpc;           /* significant bits per sample */
  gint shift;         /* stored sample >> shift = value (P010: 6) */
  gboolean semi;      /* Cb/Cr interleaved in one plane */
  gboolean swap_uv;   /* Cr stored before Cb (YV12, NV21) */
} GstQmetricFormat;

/* The caps formats the element accepts, for the pad templates. */
#define GST_QMETRIC_FORMATS "{ I420, YV12, NV12, NV21, Y42B, Y444, GRAY8, " \
    "I420_10LE, I422_10LE, Y444_10LE, P010_10LE, I420_12LE, I422_12LE, " \
    "Y444_12LE, P012_LE, Y444_16LE, P016_LE, GRAY16_LE }"

/* NULL for a format the engine cannot read. */
const GstQmetricFormat *gst_qmetric_format_lookup (GstVideoFormat format);

/* gst_video_info_from_caps(), except that a matrix the caps do not state
 * is GST_VIDEO_COLOR_MATRIX_UNKNOWN: GStreamer's guess depends on the
 * picture's size, and an unstated matrix takes the other side's
 * (gst_qmetric_sides_share_color()). */
gboolean gst_qmetric_info_from_caps (GstVideoInfo * info, const GstCaps * caps);

/* One side of a pair: the mapped frame and the picture handed to the
 * engine (pointing into the frame, or into `scratch` where the layout had
 * to be converted: semi-planar chroma, MSB-aligned samples). */
typedef struct {
  GstVideoFrame frame;
  gboolean mapped;
  guint8 *scratch;
  QmPicture pic;
  gchar *problem;     /* why the map failed (for the warning), or NULL */
} GstQmetricSide;

/* What gst_qmetric_side_map() found. */
typedef enum {
  GST_QMETRIC_MAP_OK,
  /* cannot be mapped, or a plane (by the caps or the GstVideoMeta: offset,
   * stride, rows) lies outside the buffer's memory, or a stride is shorter
   * than a row: nothing is read */
  GST_QMETRIC_MAP_UNREADABLE,
  /* a sample exceeds the format's bit depth (e.g. 1024 in a 10-bit
   * format): the frame is not compared (host memory only; see
   * docs/robustness.md) */
  GST_QMETRIC_MAP_OUT_OF_RANGE,
} GstQmetricMapResult;

/* Map buffer (read) and describe it to the engine.  device: the buffer is
 * CUDA memory and the engine reads device memory: map it in place (device
 * pointers, chroma interleaved as stored).  as_stored: the engine reads
 * semi-planar chroma and MSB-aligned samples as they are stored (every
 * metric on the CUDA backend), so a host picture in NV12, P010, P012 or
 * P016 is described without a copy; else it is copied to planar
 * LSB-aligned planes.  On anything but GST_QMETRIC_MAP_OK side->problem
 * says what (freed by unmap). */
GstQmetricMapResult gst_qmetric_side_map (GstQmetricSide * side,
    const GstVideoInfo * info, GstBuffer * buffer, gboolean device,
    gboolean as_stored);
void gst_qmetric_side_unmap (GstQmetricSide * side);

/* After both sides of a pair are mapped: a side whose caps state no matrix
 * converts as the other side (a raw reference beside its decoded encode);
 * QmPicture.color is read by the metrics that convert to RGB. */
void gst_qmetric_sides_share_color (GstQmetricSide * ref,
    GstQmetricSide * dist);

G_END_DECLS

#endif /* __GST_QMETRIC_FRAME_H__ */
