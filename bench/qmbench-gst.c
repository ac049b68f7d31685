/* qmetric-bench-pipeline and qmetric-bench-probes: finding the element. */
#include <stdio.h>

#include "qmbench-gst.h"

bool qb_find_qmetric(void)
{
    GstPluginFeature *f = gst_registry_lookup_feature(gst_registry_get(), "qmetric");
#ifdef QM_BUILD_PLUGIN_DIR
    /* not installed and GST_PLUGIN_PATH names no build: this build tree's */
    if (!f && g_file_test(QM_BUILD_PLUGIN_DIR, G_FILE_TEST_IS_DIR)) {
        gst_registry_scan_path(gst_registry_get(), QM_BUILD_PLUGIN_DIR);
        f = gst_registry_lookup_feature(gst_registry_get(), "qmetric");
    }
#endif
    if (!f)
        return false;
    GstPlugin *p = gst_plugin_feature_get_plugin(f);
    if (p) {
        printf("# qmetric plugin: %s\n", gst_plugin_get_filename(p)
                                         ? gst_plugin_get_filename(p) : "?");
        gst_object_unref(p);
    }
    gst_object_unref(f);
    return true;
}
