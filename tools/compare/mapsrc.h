/* qmetric-compare: raw and Y4M files read in place (mapsrc.c). */
#ifndef QMC_MAPSRC_H
#define QMC_MAPSRC_H

#include <gst/gst.h>
#include <gst/video/video.h>

/* Where a file's frames lie and the caps they go out with. */
typedef struct QmcMapSpec {
    GstVideoInfo info;        /* format, size, rate, aspect: the caps */
    gboolean y4m;             /* each frame behind a "FRAME[ params]\n" line */
    gboolean no_colorimetry;  /* caps without a colorimetry field (as rawvideoparse) */
    guint64 first;            /* byte of the first frame (Y4M: of its FRAME line) */
    gsize frame;              /* bytes of a frame's pictures */
    int strides[GST_VIDEO_MAX_PLANES], offsets[GST_VIDEO_MAX_PLANES], n_planes;
    guint64 frames;           /* whole frames in the file, when known (else 0) */
    gboolean pipe;            /* a pipe read by frames from fd (its header not yet
                               * read); else a file mapped */
    int fd;
} QmcMapSpec;

/* A Y4M file's spec from its header: TRUE for a progressive file in a
 * format read in place, else FALSE with the reason in *why (the caller then
 * decodes the file with GStreamer's y4mdec, which may refuse it too). */
gboolean qmc_y4m_spec(const char *path, QmcMapSpec *spec, char **why);

/* A Y4M stream on a pipe (`<(...)`, /dev/stdin): its header looked at
 * without taking it from the pipe (tee(2)).  TRUE, with spec->pipe set and
 * spec->fd open on the pipe, when it is one read here; else FALSE with the
 * reason, the pipe's content untouched for GStreamer's decoders.  When the
 * path was a pipe, spec->fd is open on it in both cases; a refused one is
 * the caller's to close, after the decoders have opened the path: were it
 * the last reader of a named FIFO, closing it would drop what it holds. */
gboolean qmc_y4m_pipe_spec(const char *path, QmcMapSpec *spec, char **why);

/* Bytes of one frame of a raw file and its planes' strides and offsets
 * (tightly packed, as libvmaf and FFmpeg write them); 0 for a format with
 * no layout in a raw file (tiled, unknown). */
gsize qmc_raw_layout(GstVideoFormat fmt, int w, int h, int *strides, int *offsets,
                     int *n_planes);

/* The spec of a raw file of tightly packed frames (qmc_raw_layout's). */
void qmc_raw_spec(QmcMapSpec *spec, GstVideoFormat fmt, int w, int h, int fps_n, int fps_d,
                  gsize frame, const int *strides, const int *offsets, int n_planes,
                  guint64 frames);

/* An appsrc named `name` whose buffers are the frames of the mapped file:
 * no read into a buffer and no copy, so the engine's threads (or the GPU's
 * staging workers) take the pictures from the file's pages.  NULL when the
 * file cannot be mapped (not a regular file, say): the caller reads it the
 * usual way.  With spec->pipe, the frames are read from it into
 * buffers of a pool instead, and the source owns the descriptor.  A frame
 * cut short at the end is left out with a warning; a malformed Y4M frame
 * line ends the stream with an error naming its byte. */
GstElement *qmc_map_source(const char *path, const char *name, const QmcMapSpec *spec);

#endif
