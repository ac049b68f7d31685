/* gst-qmetric: libFuzzer harness of qmetric-compare's Y4M reader
 * (tools/compare/mapsrc.c): the input is written to a file, its header read
 * by qmc_y4m_spec(), and, when accepted with frames of at most 64 KiB, every
 * frame pulled through the mapped source to an appsink; then the same
 * bytes go through a pipe (qmc_y4m_pipe_spec(), frames read from the pipe).
 * Whatever the bytes: the header is accepted or refused with a reason, the
 * frames end in EOS or in an error message within 10 s, and a refused pipe
 * still holds every byte; never a crash, a read outside the file (ASan) or
 * a hang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include <gst/app/gstappsink.h>
#include <gst/gst.h>

#include "../../../tools/compare/mapsrc.h"
#include "../../pipe_feed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char path[] = "/tmp/qm-fuzz-y4m-XXXXXX";
static gboolean initialised;

static void remove_path(void)
{
    unlink(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    initialised = TRUE;
    gst_init(NULL, NULL);
    int fd = mkstemp(path);
    if (fd < 0)
        abort();
    close(fd);
    atexit(remove_path);
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

/* Every frame of src to an appsink: EOS or an error within 10 s. */
static void pull(GstElement *src)
{
    GstElement *pipe = gst_pipeline_new(NULL), *sink = gst_element_factory_make("appsink", NULL);
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
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QmcMapSpec spec;
    char *why = NULL;
    FILE *f;

    /* replay.c calls the initialiser; libFuzzer too.  (Not told by the
     * path: mkstemp() may end a name with an 'X', which made one replay in
     * about 60 call mkstemp() on a name without its template.) */
    if (!initialised)
        LLVMFuzzerInitialize(NULL, NULL);
    if (size > (1 << 20) || !(f = fopen(path, "wb")))
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    if (!qmc_y4m_spec(path, &spec, &why)) {
        if (!why)  /* a refusal says why */
            abort();
        g_free(why);
        why = NULL;
    } else if (spec.frame <= (1 << 16)) {
        GstElement *src = qmc_map_source(path, NULL, &spec);
        if (src)  /* (NULL: an empty file, say) */
            pull(src);
    }

    /* the same bytes through a pipe */
    int p[2];
    if (pipe(p) != 0)
        return 0;
    QmPipeFeed fd_feed = { p[1], data, size };
    GThread *wr = g_thread_new("feed", qm_pipe_feed, &fd_feed);
    char fdpath[64];
    snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", p[0]);
    if (!qmc_y4m_pipe_spec(fdpath, &spec, &why)) {
        if (!why)
            abort();
        g_free(why);
        /* refused: the pipe must still hold the input from its first byte */
        uint8_t *back = g_malloc(size + 1);
        size_t got = 0;
        ssize_t r;
        while (got < size && (r = read(p[0], back + got, size - got)) > 0)
            got += (size_t)r;
        if (got != size || memcmp(back, data, size))
            abort();
        g_free(back);
        if (spec.fd >= 0)
            close(spec.fd);
    } else if (spec.frame <= (1 << 16)) {
        GstElement *src = qmc_map_source(fdpath, NULL, &spec);
        if (src)
            pull(src);  /* the source closes spec.fd */
        else
            close(spec.fd);
    } else {
        close(spec.fd);
    }
    close(p[0]);  /* the writer sees EPIPE if it was not done */
    g_thread_join(wr);
    return 0;
}
