/* qmetric-compare: raw and Y4M files read in place.  The file is mapped and
 * every frame goes downstream as a buffer that wraps its pages, with a
 * video meta giving the tight plane layout.
 *
 * Why: filesrc reads each frame into a freshly allocated buffer (at 2160p
 * every frame's 12 MB are faulted in, zeroed and copied), and 1.22's
 * y4mdec also gathers each frame from 4 KiB reads into another copy, so
 * reading, not the metrics or the GPUs, would bound a run from files.
 * Read in place, the frames cost the page faults of the first touch only,
 * taken by the threads that copy them anyway.  y4mdec also reads 8-bit 4:2:0, 4:2:2 and 4:4:4 only; FFmpeg
 * writes 10-, 12- and 16-bit and grey Y4M too.
 *
 * A Y4M stream on a pipe cannot be mapped: its frames are read into a few
 * buffers of a pool, reused.  Its header is looked at with tee(2), which
 * leaves it in the pipe, so that a pipe carrying anything else goes to
 * GStreamer's decoders whole. */
#define _GNU_SOURCE  /* tee(2), pipe2(2) */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gst/app/gstappsrc.h>

#include "mapsrc.h"
#include "../pagedrop.h"

/* ------------------------------------------------------------------ layout */

/* Bytes of one tightly packed frame and the plane layout of raw files as
 * libvmaf and FFmpeg write them (GStreamer's own default pads rows to 4
 * bytes, which differs for odd widths).  Formats whose samples are not
 * whole bytes apart (v210 packs six pixels into 16 bytes, its rows into
 * 128-byte blocks) have no bytes-per-pixel: their layout is GStreamer's,
 * which for v210 is the one its specification and FFmpeg use.  0: no
 * layout (tiled or unknown formats), which the callers report. */
gsize qmc_raw_layout(GstVideoFormat fmt, int w, int h, int *strides, int *offsets,
                     int *n_planes)
{
    const GstVideoFormatInfo *fi = gst_video_format_get_info(fmt);
    gsize off = 0;
    guint p, c;

    *n_planes = 0;
    if (!fi || fmt == GST_VIDEO_FORMAT_UNKNOWN || fmt == GST_VIDEO_FORMAT_ENCODED ||
        GST_VIDEO_FORMAT_INFO_IS_TILED(fi))
        return 0;
    for (c = 0; c < GST_VIDEO_FORMAT_INFO_N_COMPONENTS(fi); c++) {
        if (GST_VIDEO_FORMAT_INFO_PSTRIDE(fi, c) <= 0) {
            GstVideoInfo vi;
            if (!gst_video_info_set_format(&vi, fmt, w, h))
                return 0;
            *n_planes = GST_VIDEO_INFO_N_PLANES(&vi);
            for (p = 0; p < (guint)*n_planes; p++) {
                strides[p] = GST_VIDEO_INFO_PLANE_STRIDE(&vi, p);
                offsets[p] = (int)GST_VIDEO_INFO_PLANE_OFFSET(&vi, p);
            }
            return GST_VIDEO_INFO_SIZE(&vi);
        }
    }
    *n_planes = GST_VIDEO_FORMAT_INFO_N_PLANES(fi);
    for (p = 0; p < (guint)*n_planes; p++) {
        for (c = 0; c < GST_VIDEO_FORMAT_INFO_N_COMPONENTS(fi); c++)
            if (GST_VIDEO_FORMAT_INFO_PLANE(fi, c) == p)
                break;
        int pw = GST_VIDEO_FORMAT_INFO_SCALE_WIDTH(fi, c, w);
        int ph = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT(fi, c, h);
        strides[p] = pw * GST_VIDEO_FORMAT_INFO_PSTRIDE(fi, c);
        offsets[p] = (int)off;
        off += (gsize)strides[p] * ph;
    }
    return off;
}

/* ------------------------------------------------------------- Y4M header */

/* The Y4M colour-space tags read in place, and their GStreamer formats.
 * The 4:2:0 sitings differ in where chroma sits, not in the bytes. */
static const struct {
    const char *tag;
    GstVideoFormat fmt;
} y4m_formats[] = {
    { "420jpeg", GST_VIDEO_FORMAT_I420 },   { "420mpeg2", GST_VIDEO_FORMAT_I420 },
    { "420paldv", GST_VIDEO_FORMAT_I420 },  { "420", GST_VIDEO_FORMAT_I420 },
    { "411", GST_VIDEO_FORMAT_Y41B },       { "422", GST_VIDEO_FORMAT_Y42B },
    { "444", GST_VIDEO_FORMAT_Y444 },       { "mono", GST_VIDEO_FORMAT_GRAY8 },
    { "420p10", GST_VIDEO_FORMAT_I420_10LE }, { "422p10", GST_VIDEO_FORMAT_I422_10LE },
    { "444p10", GST_VIDEO_FORMAT_Y444_10LE }, { "420p12", GST_VIDEO_FORMAT_I420_12LE },
    { "422p12", GST_VIDEO_FORMAT_I422_12LE }, { "444p12", GST_VIDEO_FORMAT_Y444_12LE },
    { "444p16", GST_VIDEO_FORMAT_Y444_16LE }, { "mono16", GST_VIDEO_FORMAT_GRAY16_LE },
};

/* Header lines are short; a longer one is not a Y4M header. */
#define Y4M_LINE_MAX 1024

static gboolean parse_ratio(const char *s, int *n, int *d)
{
    char *end;
    long a = strtol(s, &end, 10), b;
    if (end == s || *end != ':')
        return FALSE;
    s = end + 1;
    b = strtol(s, &end, 10);
    if (end == s || a < 0 || b < 0 || a > G_MAXINT || b > G_MAXINT)
        return FALSE;
    *n = (int)a;
    *d = (int)b;
    return TRUE;
}

/* The spec from the first n bytes of a Y4M stream (line: NUL-terminated
 * after them, writable), whose size is `size` bytes (0 for a pipe). */
static gboolean parse_header(char *line, size_t n, guint64 size, QmcMapSpec *spec, char **why)
{
    char *nl, **tok;
    int w = 0, h = 0, fn = 25, fd = 1, pn = 1, pd = 1;
    const char *ctag = "420jpeg", *itag = "p";
    GstVideoFormat fmt = GST_VIDEO_FORMAT_UNKNOWN;
    gboolean ok = FALSE;

    nl = memchr(line, '\n', n);
    if (n < 10 || strncmp(line, "YUV4MPEG2 ", 10) || !nl) {
        *why = g_strdup("no YUV4MPEG2 header line");
        return FALSE;
    }
    *nl = 0;
    tok = g_strsplit(line + 10, " ", -1);
    for (char **t = tok; *t; t++) {
        switch (**t) {
        case 'W': w = atoi(*t + 1); break;
        case 'H': h = atoi(*t + 1); break;
        case 'F': if (!parse_ratio(*t + 1, &fn, &fd)) fn = 0; break;
        case 'A': if (!parse_ratio(*t + 1, &pn, &pd) || !pn || !pd) pn = pd = 1; break;
        case 'C': ctag = *t + 1; break;
        case 'I': itag = *t + 1; break;
        default: break;  /* X (comments, FFmpeg's colour range) and unknown tags */
        }
    }
    for (size_t i = 0; i < G_N_ELEMENTS(y4m_formats); i++)
        if (!strcmp(ctag, y4m_formats[i].tag))
            fmt = y4m_formats[i].fmt;
    if (w <= 0 || h <= 0)
        *why = g_strdup("no frame size in the header");
    else if (w > 65536 || h > 65536)
        *why = g_strdup_printf("frame size %dx%d too large", w, h);
    else if (fmt == GST_VIDEO_FORMAT_UNKNOWN)
        *why = g_strdup_printf("colour space C%s is not read in place", ctag);
    else if (strcmp(itag, "p") && strcmp(itag, "?"))
        *why = g_strdup_printf("interlaced (I%s)", itag);
    else
        ok = TRUE;
    if (ok) {
        int strides[GST_VIDEO_MAX_PLANES], offsets[GST_VIDEO_MAX_PLANES], np = 0;
        GstVideoInfo vi;
        gsize frame = 0;
        guint64 first = (guint64)(nl - line) + 1, rec;
        if (!gst_video_info_set_format(&vi, fmt, w, h)) {
            *why = g_strdup("frame size too large");
            ok = FALSE;
        } else {
            /* tight rows, chroma ceil(w / 2) wide: the layout of raw files */
            frame = qmc_raw_layout(fmt, w, h, strides, offsets, &np);
            /* frames without parameters: "FRAME\n" and the pictures; a count
             * only when the file is exactly that */
            rec = frame + 6;
            qmc_raw_spec(spec, fmt, w, h, fn, fn ? fd : 1, frame, strides, offsets, np,
                         size < first || (size - first) % rec ? 0 : (size - first) / rec);
            spec->y4m = TRUE;
            spec->no_colorimetry = FALSE;
            spec->first = first;
            GST_VIDEO_INFO_PAR_N(&spec->info) = pn;
            GST_VIDEO_INFO_PAR_D(&spec->info) = pd;
        }
    }
    g_strfreev(tok);
    return ok;
}

gboolean qmc_y4m_spec(const char *path, QmcMapSpec *spec, char **why)
{
    char line[Y4M_LINE_MAX + 1];
    FILE *f = fopen(path, "rb");
    GStatBuf st;
    size_t n;

    *why = NULL;
    if (!f || g_stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        *why = g_strdup("not a regular file");
        if (f)
            fclose(f);
        return FALSE;
    }
    n = fread(line, 1, Y4M_LINE_MAX, f);
    fclose(f);
    line[n] = 0;
    return parse_header(line, n, (guint64)st.st_size, spec, why);
}

gboolean qmc_y4m_pipe_spec(const char *path, QmcMapSpec *spec, char **why)
{
    char line[Y4M_LINE_MAX + 1];
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC), p[2];
    size_t have = 0;
    gint64 deadline = 0;
    gboolean ok = FALSE;

    *why = NULL;
    spec->pipe = FALSE;
    spec->fd = -1;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode) || pipe2(p, O_CLOEXEC) != 0) {
        *why = g_strdup("not a pipe");
        if (fd >= 0)
            close(fd);
        return FALSE;
    }
    /* tee(2) copies the start of what the pipe holds without taking it:
     * until the header's line is there (the first wait blocks, as reading
     * would; then 10 s at most for the rest of the line) */
    for (gboolean last = FALSE;;) {
        ssize_t t = tee(fd, p[1], Y4M_LINE_MAX, have ? SPLICE_F_NONBLOCK : 0);
        if (t > 0) {
            ssize_t got = 0, r;
            while (got < t && (r = read(p[0], line + got, (size_t)(t - got))) > 0)
                got += r;
            have = (size_t)got;
            line[have] = 0;
            if ((have >= 10 && strncmp(line, "YUV4MPEG2 ", 10)) ||
                (have < 10 && strncmp(line, "YUV4MPEG2 ", have)) ||
                memchr(line, '\n', have) || have >= Y4M_LINE_MAX)
                break;
        } else if (t == 0 || errno != EAGAIN) {
            break;  /* the end of the stream, or not a pipe tee reads */
        }
        if (last)
            break;  /* the writer is gone and all it wrote was looked at */
        /* the writer gone (POLLHUP, its bytes still in the pipe): one more
         * look takes whatever it wrote last */
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        if (poll(&pf, 1, 0) == 1 && (pf.revents & POLLHUP)) {
            last = TRUE;
            continue;
        }
        if (!deadline)
            deadline = g_get_monotonic_time() + 10 * G_TIME_SPAN_SECOND;
        else if (g_get_monotonic_time() > deadline)
            break;
        g_usleep(1000);
    }
    close(p[0]);
    close(p[1]);
    ok = parse_header(line, have, 0, spec, why);
    /* refused, the descriptor stays open too (see the header) */
    spec->pipe = ok;
    spec->fd = fd;
    return ok;
}

void qmc_raw_spec(QmcMapSpec *spec, GstVideoFormat fmt, int w, int h, int fps_n, int fps_d,
                  gsize frame, const int *strides, const int *offsets, int n_planes,
                  guint64 frames)
{
    memset(spec, 0, sizeof(*spec));
    spec->fd = -1;
    gst_video_info_set_format(&spec->info, fmt, w, h);
    GST_VIDEO_INFO_FPS_N(&spec->info) = fps_n;
    GST_VIDEO_INFO_FPS_D(&spec->info) = fps_d;
    /* the caps rawvideoparse gives these frames (y4mdec's have colorimetry) */
    spec->no_colorimetry = TRUE;
    spec->frame = frame;
    spec->n_planes = n_planes;
    memcpy(spec->strides, strides, sizeof(int) * (size_t)n_planes);
    memcpy(spec->offsets, offsets, sizeof(int) * (size_t)n_planes);
    spec->frames = frames;
}

/* ----------------------------------------------------------------- source */

typedef struct Map {
    gint refs;
    const guint8 *base;  /* a mapped file, or NULL: */
    gsize size;
    QmPageDrop *drop;    /* its pages of frames done with (pagedrop.h) */
    int fd;              /* a pipe, read into buffers of the pool */
    GstBufferPool *pool;
    gboolean header_read;
    QmcMapSpec spec;
    guint64 pos;     /* the next frame's byte (the appsrc's thread alone) */
    guint64 index;   /* and its number */
    gboolean ended;
} Map;

static void map_unref(gpointer data)
{
    Map *m = data;
    if (!g_atomic_int_dec_and_test(&m->refs))
        return;
    qm_pagedrop_free(m->drop);
    if (m->base)
        munmap((void *)m->base, m->size);
    if (m->pool) {
        gst_buffer_pool_set_active(m->pool, FALSE);
        gst_object_unref(m->pool);
    }
    if (m->fd >= 0)
        close(m->fd);
    g_free(m);
}

/* A buffer that wraps frame `index` of a mapping: when it goes, the frame
 * is done with. */
typedef struct Wrap {
    Map *m;
    guint64 index;
    gsize end;
} Wrap;

static void wrap_free(gpointer data)
{
    Wrap *w = data;
    qm_pagedrop_done(w->m->drop, w->index, w->end);
    map_unref(w->m);
    g_free(w);
}

static void bad_frame_line(Map *m, GstElement *src)
{
    GST_ELEMENT_ERROR(src, STREAM, DECODE,
                      ("no Y4M FRAME line at byte %" G_GUINT64_FORMAT " (frame %" G_GUINT64_FORMAT
                       ")", m->pos, m->index), (NULL));
}

static void cut_short(Map *m, GstElement *src, guint64 got)
{
    GST_ELEMENT_WARNING(src, STREAM, DECODE,
                        ("the %s ends inside frame %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
                         " of %" G_GSIZE_FORMAT " bytes): that frame is left out",
                         m->base ? "file" : "stream", m->index, got, m->spec.frame), (NULL));
}

/* The frame at m->pos of a mapped file: 1 with the byte of its pictures in
 * *at and the next frame's in *next; 0 at the end of the file (or a frame
 * cut short, said on src); -1 on a bad frame line, posted on src. */
static int locate(Map *m, GstElement *src, guint64 *at, guint64 *next)
{
    guint64 data = m->pos;
    if (m->pos >= m->size)
        return 0;
    if (m->spec.y4m) {
        const guint8 *p = m->base + m->pos;
        const gsize left = m->size - m->pos;
        const guint8 *nl = memchr(p, '\n', MIN(left, (gsize)Y4M_LINE_MAX));
        if (left < 5 || memcmp(p, "FRAME", 5) || !nl) {
            bad_frame_line(m, src);
            return -1;
        }
        data = m->pos + (guint64)(nl - p) + 1;
    }
    if (data + m->spec.frame > m->size) {
        cut_short(m, src, m->size - MIN(data, m->size));
        return 0;
    }
    *at = data;
    *next = data + m->spec.frame;
    return 1;
}

/* n bytes from the pipe into p: the count read (short at the end of the
 * stream), or -1 on a read error. */
static gssize read_full(int fd, void *p, gsize n)
{
    gsize got = 0;
    while (got < n) {
        ssize_t r = read(fd, (guint8 *)p + got, n - got);
        if (r > 0)
            got += (gsize)r;
        else if (r == 0)
            break;
        else if (errno != EINTR)
            return -1;
    }
    return (gssize)got;
}

static void read_failed(Map *m, GstElement *src)
{
    GST_ELEMENT_ERROR(src, RESOURCE, READ,
                      ("reading frame %" G_GUINT64_FORMAT ": %s", m->index, g_strerror(errno)),
                      (NULL));
}

/* The next frame of a pipe in a buffer of the pool: 1, or 0 at its end
 * (or a frame cut short, said on src), -1 on an error posted on src. */
static int read_frame(Map *m, GstElement *src, GstBuffer **out)
{
    char line[Y4M_LINE_MAX];
    gsize n = 0;
    gssize r;
    GstMapInfo mi;
    GstBuffer *buf = NULL;

    if (!m->header_read) {  /* looked at, not taken, by qmc_y4m_pipe_spec() */
        char skip[Y4M_LINE_MAX + 1];
        if (read_full(m->fd, skip, m->spec.first) != (gssize)m->spec.first) {
            read_failed(m, src);
            return -1;
        }
        m->header_read = TRUE;
        m->pos = m->spec.first;
    }
    /* the frame line, a byte at a time: nothing of the pictures is taken */
    while (n < sizeof(line) && (r = read_full(m->fd, line + n, 1)) == 1 && line[n++] != '\n')
        ;
    if (n == 0)
        return r < 0 ? (read_failed(m, src), -1) : 0;
    if (n < 6 || memcmp(line, "FRAME", 5) || line[n - 1] != '\n') {
        if (r == 0 && n < 6 && !memcmp(line, "FRAME", MIN(n, 5)))
            return cut_short(m, src, 0), 0;
        bad_frame_line(m, src);
        return -1;
    }
    if (gst_buffer_pool_acquire_buffer(m->pool, &buf, NULL) != GST_FLOW_OK ||
        !gst_buffer_map(buf, &mi, GST_MAP_WRITE)) {
        GST_ELEMENT_ERROR(src, RESOURCE, NO_SPACE_LEFT, ("no buffer for frame %" G_GUINT64_FORMAT,
                                                        m->index), (NULL));
        if (buf)
            gst_buffer_unref(buf);
        return -1;
    }
    r = read_full(m->fd, mi.data, m->spec.frame);
    gst_buffer_unmap(buf, &mi);
    if (r != (gssize)m->spec.frame) {
        gst_buffer_unref(buf);
        if (r < 0)
            return read_failed(m, src), -1;
        return cut_short(m, src, (guint64)r), 0;
    }
    m->pos += n + m->spec.frame;
    *out = buf;
    return 1;
}

static void need_data(GstAppSrc *src, guint length, gpointer data)
{
    Map *m = data;
    GstBuffer *buf = NULL;
    const GstVideoInfo *vi = &m->spec.info;
    gsize offs[GST_VIDEO_MAX_PLANES];
    (void)length;

    if (m->ended)
        return;
    if (m->base) {
        guint64 at = 0, next = 0;
        if (locate(m, GST_ELEMENT(src), &at, &next) > 0) {
            Wrap *w = g_new(Wrap, 1);
            w->m = m;
            w->index = m->index;
            w->end = at + m->spec.frame;
            g_atomic_int_inc(&m->refs);
            buf = gst_buffer_new_wrapped_full(GST_MEMORY_FLAG_READONLY, (gpointer)(m->base + at),
                                              m->spec.frame, 0, m->spec.frame, w, wrap_free);
            m->pos = next;
        }
    } else if (read_frame(m, GST_ELEMENT(src), &buf) <= 0) {
        buf = NULL;
    }
    if (!buf) {
        m->ended = TRUE;
        gst_app_src_end_of_stream(src);
        return;
    }
    for (int p = 0; p < m->spec.n_planes; p++)
        offs[p] = (gsize)m->spec.offsets[p];
    gst_buffer_add_video_meta_full(buf, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_INFO_FORMAT(vi),
                                   GST_VIDEO_INFO_WIDTH(vi), GST_VIDEO_INFO_HEIGHT(vi),
                                   (guint)m->spec.n_planes, offs, m->spec.strides);
    if (GST_VIDEO_INFO_FPS_N(vi) > 0) {
        const GstClockTime t0 = gst_util_uint64_scale(m->index, GST_SECOND * GST_VIDEO_INFO_FPS_D(vi),
                                                      GST_VIDEO_INFO_FPS_N(vi));
        const GstClockTime t1 = gst_util_uint64_scale(m->index + 1,
                                                      GST_SECOND * GST_VIDEO_INFO_FPS_D(vi),
                                                      GST_VIDEO_INFO_FPS_N(vi));
        GST_BUFFER_PTS(buf) = t0;
        GST_BUFFER_DURATION(buf) = t1 - t0;
    }
    GST_BUFFER_OFFSET(buf) = m->index;
    m->index++;
    gst_app_src_push_buffer(src, buf);
}

/* A pool of frame buffers for a pipe: a few in flight, reused, so that
 * their pages are touched once. */
static GstBufferPool *frame_pool(gsize frame)
{
    GstBufferPool *pool = gst_buffer_pool_new();
    GstStructure *cfg = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(cfg, NULL, (guint)frame, 2, 0);
    if (!gst_buffer_pool_set_config(pool, cfg) || !gst_buffer_pool_set_active(pool, TRUE)) {
        gst_object_unref(pool);
        return NULL;
    }
    return pool;
}

GstElement *qmc_map_source(const char *path, const char *name, const QmcMapSpec *spec)
{
    struct stat st;
    void *base = NULL;
    GstBufferPool *pool = NULL;
    Map *m;
    GstElement *src;
    GstCaps *caps;
    GstAppSrcCallbacks cb = { .need_data = need_data };

    if (spec->pipe) {
        if (spec->frame > G_MAXUINT || !(pool = frame_pool(spec->frame)))
            return NULL;
    } else {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return NULL;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
            close(fd);
            return NULL;
        }
        base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (base == MAP_FAILED)
            return NULL;
        madvise(base, (size_t)st.st_size, MADV_SEQUENTIAL);
    }
    src = gst_element_factory_make("appsrc", name);
    if (!src) {
        if (base)
            munmap(base, (size_t)st.st_size);
        if (pool) {
            gst_buffer_pool_set_active(pool, FALSE);
            gst_object_unref(pool);
        }
        return NULL;
    }
    m = g_new0(Map, 1);
    m->refs = 1;
    m->base = base;
    m->size = base ? (gsize)st.st_size : 0;
    m->fd = spec->pipe ? spec->fd : -1;
    m->pool = pool;
    m->spec = *spec;
    m->pos = spec->first;
    if (base)
        m->drop = qm_pagedrop_new(base, m->size);
    caps = gst_video_info_to_caps(&m->spec.info);
    if (spec->no_colorimetry)
        gst_structure_remove_field(gst_caps_get_structure(caps, 0), "colorimetry");
    /* one frame queued: a mapped file's pages need no buffering, and a
     * pipe's writer keeps its own */
    g_object_set(src, "caps", caps, "format", GST_FORMAT_TIME, "stream-type",
                 GST_APP_STREAM_TYPE_STREAM, "max-bytes", (guint64)1, "block", FALSE, NULL);
    if (spec->frames && GST_VIDEO_INFO_FPS_N(&m->spec.info) > 0)
        g_object_set(src, "duration",
                     gst_util_uint64_scale(spec->frames,
                                           GST_SECOND * GST_VIDEO_INFO_FPS_D(&m->spec.info),
                                           GST_VIDEO_INFO_FPS_N(&m->spec.info)), NULL);
    gst_caps_unref(caps);
    gst_app_src_set_callbacks(GST_APP_SRC(src), &cb, m, map_unref);
    return src;
}
