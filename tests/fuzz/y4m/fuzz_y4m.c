/* gst-qmetric: libFuzzer harness of qmetric-compare's Y4M reader
 * (tools/compare/mapsrc.c): the input is written to a file, its header read
 * by qmc_y4m_spec(), and, when accepted with frames of at most 64 KiB, every
 * frame pulled through the mapped source to an appsink.  Whatever the
 * bytes: the header is accepted or refused with a reason, the frames end in
 * EOS or in an error message within 10 s; never a crash, a read outside
 * the file (ASan) or a hang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>

#include "../../../tools/compare/mapsrc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char path[] = "/tmp/qm-fuzz-y4m-XXXXXX";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    gst_init(NULL, NULL);
    int fd = mkstemp(path);
    if (fd < 0)
        abort();
    close(fd);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static gboolean ready;
    QmcMapSpec spec;
    char *why = NULL;
    FILE *f;

    if (!ready) {  /* replay.c calls the initialiser; libFuzzer too */
        ready = TRUE;
        if (path[sizeof(path) - 2] == 'X')
            LLVMFuzzerInitialize(NULL, NULL);
    }
    if (size > (1 << 20) || !(f = fopen(path, "wb")))
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    if (!qmc_y4m_spec(path, &spec, &why)) {
        if (!why)  /* a refusal says why */
            abort();
        g_free(why);
        return 0;
    }
    if (spec.frame > (1 << 16))
        return 0;
    GstElement *pipe = gst_pipeline_new(NULL), *sink = gst_element_factory_make("appsink", NULL);
    GstElement *src = qmc_map_source(path, NULL, &spec);
    if (!src) {  /* an empty file, say */
        gst_object_unref(pipe);
        gst_object_unref(sink);
        return 0;
    }
    g_object_set(sink, "sync", FALSE, NULL);
    gst_bin_add_many(GST_BIN(pipe), src, sink, NULL);
    gst_element_link(src, sink);
    gst_element_set_state(pipe, GST_STATE_PLAYING);
    gint64 end = g_get_monotonic_time() + 10 * G_TIME_SPAN_SECOND;
    for (;;) {
        GstSample *s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 100 * GST_MSECOND);
        if (s) {
            /* read every byte of the frame: ASan sees a read past the file */
            GstMapInfo m;
            GstBuffer *b = gst_sample_get_buffer(s);
            volatile guint8 sum = 0;
            if (gst_buffer_map(b, &m, GST_MAP_READ)) {
                for (gsize i = 0; i < m.size; i++)
                    sum ^= m.data[i];
                gst_buffer_unmap(b, &m);
            }
            gst_sample_unref(s);
            continue;
        }
        if (gst_app_sink_is_eos(GST_APP_SINK(sink)))
            break;
        GstBus *bus = gst_element_get_bus(pipe);
        GstMessage *msg = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
        gst_object_unref(bus);
        if (msg) {
            gst_message_unref(msg);
            break;
        }
        if (g_get_monotonic_time() > end)
            abort();  /* neither frames, nor an end, nor an error */
    }
    gst_element_set_state(pipe, GST_STATE_NULL);
    gst_object_unref(pipe);
    return 0;
}
