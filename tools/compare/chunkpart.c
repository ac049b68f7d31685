/* qmetric-compare: the partial file of a chunk (core/partial.h): the rows
 * at full precision, what was compared (each input's fingerprint and
 * decoded format, the element's settings as its summary states them, the
 * tool's own settings that change values) and the hashes of the frames
 * near the chunk's ends as the qmetric element received them, which
 * qmetric-merge compares between neighbouring chunks.
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "chunkpart.h"

#include "framehash.h"
#include "partial.h"

typedef struct {
    guint64 frame, hash;
} FrameHash;

struct QmcChunkPart {
    Output out;
    guint64 start, end;
    QmPartialInput in[2];
    QmPartialWriter *writer;
    gboolean failed;
    GMutex lock;
    GArray *hashes[2];         /* FrameHash, frames increasing (streaming threads) */
};

QmcChunkPart *qmc_chunk_part_new(App *app, guint64 start, guint64 end)
{
    QmcChunkPart *p = g_new0(QmcChunkPart, 1);

    p->start = start;
    p->end = end;
    g_mutex_init(&p->lock);
    for (int i = 0; i < 2; i++) {
        Side *s = &app->side[i];
        char *path = g_filename_from_uri(s->uri, NULL, NULL);
        int fd = path && !s->once ? g_open(path, O_RDONLY | O_CLOEXEC, 0) : -1;
        /* a chunk names its inputs by content, which a pipe or a remote
         * stream cannot be read twice for */
        if (fd < 0 || qm_partial_fingerprint_fd(fd, &p->in[i].bytes, p->in[i].fingerprint))
            qmc_input_error("--partial: %s: %s (a chunk records each input's fingerprint: "
                            "give a local file)", s->display,
                            !path ? "not a local file" : s->once ? "a pipe or device"
                                                                 : g_strerror(errno));
        close(fd);
        g_free(path);
        p->hashes[i] = g_array_new(FALSE, FALSE, sizeof(FrameHash));
    }
    qmc_output_prepare(&p->out, "--partial", app->o.partial);
    return p;
}

/* The visible bytes of each plane, row by row: what the element reads. */
static guint64 hash_buffer(GstBuffer *buf, const GstVideoInfo *info)
{
    GstVideoFrame f;
    const void *data[GST_VIDEO_MAX_PLANES];
    ptrdiff_t stride[GST_VIDEO_MAX_PLANES];
    size_t width[GST_VIDEO_MAX_PLANES];
    int height[GST_VIDEO_MAX_PLANES], n;
    guint64 h;

    if (!gst_video_frame_map(&f, info, buf, GST_MAP_READ))
        return 0;
    n = (int)GST_VIDEO_FRAME_N_PLANES(&f);
    for (int pl = 0; pl < n; pl++) {
        int comp[GST_VIDEO_MAX_COMPONENTS];
        gst_video_format_info_component(f.info.finfo, (guint)pl, comp);
        data[pl] = GST_VIDEO_FRAME_PLANE_DATA(&f, pl);
        stride[pl] = GST_VIDEO_FRAME_PLANE_STRIDE(&f, pl);
        width[pl] = (size_t)GST_VIDEO_FRAME_COMP_WIDTH(&f, comp[0]) *
                    (size_t)GST_VIDEO_FRAME_COMP_PSTRIDE(&f, comp[0]);
        height[pl] = GST_VIDEO_FRAME_COMP_HEIGHT(&f, comp[0]);
    }
    h = qm_frame_hash(n, data, stride, width, height);
    gst_video_frame_unmap(&f);
    return h;
}

void qmc_chunk_part_frame(QmcChunkPart *p, int side, guint64 frame, GstBuffer *buf,
                          const GstVideoInfo *info)
{
    FrameHash fh;
    GArray *a = p->hashes[side];
    guint keep = 0;

    if (!qm_partial_hash_wanted(frame, p->start, p->end))
        return;
    fh.frame = frame;
    fh.hash = hash_buffer(buf, info);
    g_mutex_lock(&p->lock);
    /* while the end is not known, the frames more than 2 x QM_CHUNK_CONTEXT
     * back cannot be near it (the look-ahead is shorter): only those near
     * the start stay */
    for (guint i = 0; i < a->len; i++) {
        FrameHash *x = &g_array_index(a, FrameHash, i);
        if (x->frame < p->start + QM_CHUNK_CONTEXT || x->frame + 2 * QM_CHUNK_CONTEXT >= frame)
            g_array_index(a, FrameHash, keep++) = *x;
    }
    g_array_set_size(a, keep);
    g_array_append_val(a, fh);
    g_mutex_unlock(&p->lock);
}

gboolean qmc_chunk_part_open(App *app, QmcChunkPart *p, unsigned n, const char *const *names,
                             int w, int h)
{
    char *err = NULL;
    p->writer = qm_partial_open(p->out.tmp, "qmetric-compare", n, names, w, h, p->start, &err);
    if (!p->writer) {
        qmc_fail(app, EXIT_USAGE, "--partial %s: %s", app->o.partial, err);
        free(err);
        return FALSE;
    }
    return TRUE;
}

void qmc_chunk_part_row(QmcChunkPart *p, const double *v, const guint8 *present)
{
    if (p->writer && qm_partial_row(p->writer, v, present) < 0)
        p->failed = TRUE;
}

/* Each input as decoded (size, format, depth) and the settings of this
 * tool that change values; FALSE when out of memory. */
static gboolean record(App *app, QmcChunkPart *p)
{
    const char *identity = app->summary ? gst_structure_get_string(app->summary, "identity") : NULL;
    char n[2][32];
    gboolean ok = identity && !qm_partial_set_lines(p->writer, identity);

    for (int i = 0; i < 2; i++) {
        GstVideoInfo vi;
        QmPartialInput *in = &p->in[i];
        if (!app->side[i].caps || !gst_video_info_from_caps(&vi, app->side[i].caps))
            return FALSE;
        in->w = vi.width;
        in->h = vi.height;
        g_strlcpy(in->format, gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&vi)),
                  sizeof(in->format));
        in->bitdepth = GST_VIDEO_INFO_COMP_DEPTH(&vi, 0);
        ok = ok && !qm_partial_set_input(p->writer, i ? QM_PARTIAL_DISTORTED : QM_PARTIAL_REFERENCE,
                                         in);
        g_snprintf(n[i], sizeof(n[i]), "%" G_GUINT64_FORMAT, qmc_chunk_skip(app, i));
    }
    return ok && !qm_partial_set(p->writer, "compare_format", gst_video_format_to_string(app->target)) &&
           !qm_partial_set(p->writer, "scale", app->scaled ? app->o.scale_method : "none") &&
           !qm_partial_set(p->writer, "pair_by", "index") &&
           !qm_partial_set(p->writer, "frame_skip_ref", n[REF]) &&
           !qm_partial_set(p->writer, "frame_skip_dist", n[DIST]);
}

/* The frames both inputs were hashed at, in order. */
static gboolean put_hashes(QmcChunkPart *p)
{
    const GArray *r = p->hashes[REF], *d = p->hashes[DIST];
    guint i = 0, k = 0;

    while (i < r->len && k < d->len) {
        const FrameHash *x = &g_array_index(r, FrameHash, i), *y = &g_array_index(d, FrameHash, k);
        if (x->frame < y->frame) {
            i++;
        } else if (y->frame < x->frame) {
            k++;
        } else {
            if (qm_partial_frame_hash(p->writer, x->frame, x->hash, y->hash) < 0)
                return FALSE;
            i++;
            k++;
        }
    }
    return TRUE;
}

void qmc_chunk_part_close(App *app, QmcChunkPart *p, gboolean end_of_input, double seconds)
{
    char *err = NULL;
    gboolean ok = !app->error && !app->interrupted;

    if (p->writer) {
        if (ok && !(record(app, p) && put_hashes(p))) {
            qmc_fail(app, EXIT_USAGE, "--partial %s: the run's identity could not be recorded",
                     app->o.partial);
            ok = FALSE;
        }
        if (qm_partial_close(p->writer, end_of_input, seconds) < 0 || p->failed) {
            if (ok)
                qmc_fail(app, EXIT_USAGE, "--partial %s: cannot be written", app->o.partial);
            ok = FALSE;
        }
        p->writer = NULL;
    }
    if (!ok || !p->out.tmp) {
        qmc_output_discard(&p->out);
    } else if (!qmc_output_commit(&p->out, &err)) {
        qmc_fail(app, EXIT_USAGE, "%s", err);
        g_free(err);
    }
}
