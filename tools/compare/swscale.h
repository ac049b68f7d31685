/* qmetric-compare: the distorted video scaled as FFmpeg's `scale` filter
 * scales it (libswscale): the scaler names, and "qmcswscale", a private
 * element (swscale.c) over the scaling itself (swscale_av.c; swscale_none.c
 * in a build without libswscale, which refuses to scale).
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#ifndef QMC_SWSCALE_H
#define QMC_SWSCALE_H

#include <gst/gst.h>
#include <gst/video/video.h>

/* The scaler when none is named: FFmpeg's command line gives its scale
 * filters flags=bicubic (fftools' default sws_flags). */
#define QMC_DEFAULT_SCALER "bicubic"

/* Whether flags is a --scaler value: FFmpeg's `flags=` syntax (libswscale's
 * sws_flags constants joined by '+') naming exactly one scaler, optionally
 * with other flags ("lanczos", "bicubic+accurate_rnd").  FALSE with the
 * reason in *why (g_free) otherwise, or in a build without libswscale. */
gboolean qmc_scaler_check(const char *flags, char **why);

/* The scalers libswscale knows, from its own option table, as
 * "fast_bilinear, bilinear, bicubic, ..." (g_free). */
char *qmc_scaler_names(void);

/* A new "qmcswscale" element named name: the frames it receives, scaled to
 * the size its downstream caps ask for with the given flags (same format;
 * passthrough at the same size).  The element type is registered (for this
 * process only) on the first call. */
GstElement *qmc_make_scaler(const char *name, const char *flags);

/* The element's scaling of one stream: in's format and size to out's size.
 * open: NULL with the reason in *why; scale: FALSE with the reason.  Frames
 * are GStreamer's (any strides, planes anywhere in memory). */
typedef struct QmcSws QmcSws;
QmcSws *qmc_sws_open(const GstVideoInfo *in, const GstVideoInfo *out, const char *flags,
                     char **why);
gboolean qmc_sws_scale(QmcSws *s, const GstVideoFrame *in, GstVideoFrame *out, char **why);
void qmc_sws_close(QmcSws *s);

#endif
