/* gst-qmetric benchmarks: GStreamer helpers shared by the pipeline benches. */
#ifndef QMBENCH_GST_H
#define QMBENCH_GST_H

#include <stdbool.h>
#include <gst/gst.h>

/** Whether the registry has the qmetric element (scanning this build's
 *  plugin directory when it does not); prints which file it came from. */
bool qb_find_qmetric(void);

#endif
