/* qmetric-compare built without libswscale (libswscale-dev): the element
 * passes frames of the reference's size and refuses to scale, --scale and
 * --scaler are refused (swscale.h).
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "swscale.h"

#define NO_SWSCALE "this qmetric-compare was built without libswscale (libswscale-dev)"

gboolean qmc_scaler_check(const char *flags, char **why)
{
    (void)flags;
    *why = g_strdup_printf("%s: it cannot scale", NO_SWSCALE);
    return FALSE;
}

char *qmc_scaler_names(void)
{
    return g_strdup("");
}

QmcSws *qmc_sws_open(const GstVideoInfo *in, const GstVideoInfo *out, const char *flags,
                     char **why)
{
    (void)flags;
    *why = g_strdup_printf("cannot scale %dx%d to %dx%d: %s", in->width, in->height, out->width,
                           out->height, NO_SWSCALE);
    return NULL;
}

gboolean qmc_sws_scale(QmcSws *s, const GstVideoFrame *in, GstVideoFrame *out, char **why)
{
    (void)s, (void)in, (void)out;
    *why = g_strdup(NO_SWSCALE);
    return FALSE;
}

void qmc_sws_close(QmcSws *s)
{
    (void)s;
}
