/* GStreamer qmetric: full-reference video quality metrics. */
#ifndef __GST_QMETRIC_H__
#define __GST_QMETRIC_H__

#include <gst/gst.h>
#include <gst/base/gstaggregator.h>

G_BEGIN_DECLS

#define GST_TYPE_QMETRIC (gst_qmetric_get_type ())
G_DECLARE_FINAL_TYPE (GstQmetric, gst_qmetric, GST, QMETRIC, GstAggregator);

#define GST_TYPE_QMETRIC_LOG_FORMAT (gst_qmetric_log_format_get_type ())
GType gst_qmetric_log_format_get_type (void);

#define GST_TYPE_QMETRIC_BACKEND (gst_qmetric_backend_get_type ())
GType gst_qmetric_backend_get_type (void);

#define GST_TYPE_QMETRIC_POOL (gst_qmetric_pool_get_type ())
GType gst_qmetric_pool_get_type (void);

GST_ELEMENT_REGISTER_DECLARE (qmetric);

G_END_DECLS

#endif /* __GST_QMETRIC_H__ */
