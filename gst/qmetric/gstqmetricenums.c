/* GStreamer qmetric: the enum and flags types of the element's properties
 * (gstqmetricenums.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstqmetricenums.h"
#include "qm.h"
#include "qmlog.h"

/* The GType of enum (flags NULL) or flags values (enum_values NULL) named
 * name, registered on the first call (thread-safe). */
static GType
register_once (GType * type, const gchar * name,
    const GEnumValue * enum_values, const GFlagsValue * flags_values)
{
  if (g_once_init_enter (type)) {
    GType t = enum_values ? g_enum_register_static (name, enum_values) :
        g_flags_register_static (name, flags_values);
    g_once_init_leave (type, t);
  }
  return *type;
}

GType
gst_qmetric_log_format_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {QM_LOG_FORMAT_JSON, "libvmaf's JSON layout", "json"},
    {QM_LOG_FORMAT_CSV, "CSV, one row per frame", "csv"},
    {QM_LOG_FORMAT_XML, "libvmaf's XML layout", "xml"},
    {QM_LOG_FORMAT_JSONL, "JSON lines: a header, one object per frame and "
          "per window (see the window property) as they end, a summary at "
          "the end", "jsonl"},
    {0, NULL, NULL},
  };

  return register_once (&type, "GstQmetricLogFormat", values, NULL);
}

GType
gst_qmetric_backend_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {QM_BACKEND_AUTO, "CUDA when a GPU works, else CPU", "auto"},
    {QM_BACKEND_CPU, "CPU", "cpu"},
    {QM_BACKEND_CUDA, "CUDA (an error when no GPU works)", "cuda"},
    {0, NULL, NULL},
  };

  return register_once (&type, "GstQmetricBackend", values, NULL);
}

GType
gst_qmetric_pool_get_type (void)
{
  static GType type = 0;
  static const GFlagsValue values[] = {
    {QM_POOL_MIN, "Minimum", "min"},
    {QM_POOL_MAX, "Maximum", "max"},
    {QM_POOL_MEAN, "Arithmetic mean", "mean"},
    {QM_POOL_HARMONIC_MEAN, "Harmonic mean, n / sum(1 / (x + 1)) - 1",
        "harmonic-mean"},
    {QM_POOL_P1, "1st percentile", "p1"},
    {QM_POOL_P5, "5th percentile", "p5"},
    {0, NULL, NULL},
  };

  return register_once (&type, "GstQmetricPool", NULL, values);
}
