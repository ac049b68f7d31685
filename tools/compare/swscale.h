/* qmetric-compare: the distorted video scaled as FFmpeg's `scale` filter
 * scales it (libswscale), in a private element (swscale.c).
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#ifndef QMC_SWSCALE_H
#define QMC_SWSCALE_H

#include <gst/gst.h>

/* The scaler when none is named: FFmpeg's command line gives its scale
 * filters flags=bicubic (fftools' default sws_flags). */
#define QMC_DEFAULT_SCALER "bicubic"

/* Whether flags is a --scaler value: FFmpeg's `flags=` syntax (libswscale's
 * sws_flags option) naming exactly one scaler, optionally with other flags
 * ("lanczos", "bicubic+accurate_rnd").  FALSE with the reason in *why
 * (g_free) otherwise. */
gboolean qmc_scaler_check(const char *flags, char **why);

/* The scalers libswscale knows, from its own option table, as
 * "fast_bilinear, bilinear, bicubic, ..." (g_free). */
char *qmc_scaler_names(void);

/* A new "qmcswscale" element named name: the frames it receives, scaled to
 * the size its downstream caps ask for with the given flags (same format;
 * passthrough at the same size).  The element type is registered (for this
 * process only) on the first call. */
GstElement *qmc_make_scaler(const char *name, const char *flags);

#endif
