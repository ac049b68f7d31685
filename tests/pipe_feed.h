/* gst-qmetric tests: a pipe's writer on a thread (g_thread_new(NULL,
 * qm_pipe_feed, &feed)): the bytes, then the end of the stream.  A stream
 * larger than the pipe holds needs a writer beside its reader. */
#ifndef QM_TESTS_PIPE_FEED_H
#define QM_TESTS_PIPE_FEED_H

#include <glib.h>
#include <unistd.h>

typedef struct QmPipeFeed {
    int fd;              /* the write end; closed at the end */
    const void *bytes;
    gsize len;
} QmPipeFeed;

static gpointer qm_pipe_feed(gpointer data)
{
    QmPipeFeed *f = data;
    gsize off = 0;
    while (off < f->len) {
        ssize_t w = write(f->fd, (const guint8 *)f->bytes + off, f->len - off);
        if (w <= 0)
            break;  /* the reader went (EPIPE, with SIGPIPE ignored) */
        off += (gsize)w;
    }
    close(f->fd);
    return NULL;
}

#endif
