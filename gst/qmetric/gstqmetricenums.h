/* GStreamer qmetric: the enum and flags types of the element's properties
 * (log-format, backend, pool), over the engine's values. */
#ifndef __GST_QMETRIC_ENUMS_H__
#define __GST_QMETRIC_ENUMS_H__

#include <glib-object.h>

G_BEGIN_DECLS

#define GST_TYPE_QMETRIC_LOG_FORMAT (gst_qmetric_log_format_get_type ())
GType gst_qmetric_log_format_get_type (void);

#define GST_TYPE_QMETRIC_BACKEND (gst_qmetric_backend_get_type ())
GType gst_qmetric_backend_get_type (void);

#define GST_TYPE_QMETRIC_POOL (gst_qmetric_pool_get_type ())
GType gst_qmetric_pool_get_type (void);

G_END_DECLS

#endif /* __GST_QMETRIC_ENUMS_H__ */
