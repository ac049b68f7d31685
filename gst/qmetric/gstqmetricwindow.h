/* GStreamer qmetric: a reporting window (qmwindow.c) as the
 * "qmetric-window" element message's structure. */
#ifndef __GST_QMETRIC_WINDOW_H__
#define __GST_QMETRIC_WINDOW_H__

#include <gst/gst.h>

#include "qmwindow.h"

G_BEGIN_DECLS

/* The "qmetric-window" structure of st; quarks: the names of the element's
 * n features (st->pools follow them). */
GstStructure *gst_qmetric_window_structure (const QmWindowStats * st,
    const GQuark * quarks, guint n);

G_END_DECLS

#endif
