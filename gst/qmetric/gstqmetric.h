/* GStreamer qmetric: full-reference video quality metrics. */
#ifndef __GST_QMETRIC_H__
#define __GST_QMETRIC_H__

#include <gst/gst.h>
#include <gst/base/gstaggregator.h>

#include "gstqmetricenums.h"

G_BEGIN_DECLS

#define GST_TYPE_QMETRIC (gst_qmetric_get_type ())
G_DECLARE_FINAL_TYPE (GstQmetric, gst_qmetric, GST, QMETRIC, GstAggregator);

GST_ELEMENT_REGISTER_DECLARE (qmetric);

G_END_DECLS

#endif /* __GST_QMETRIC_H__ */
