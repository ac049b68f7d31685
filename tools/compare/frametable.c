/* qmetric-compare: the frame index of an encoded input, read from its
 * demuxer without decoding (see frametable.h for what a frame is).
 *
 * Reading stops a little past the last frame a chunk needs: once the
 * `need` smallest timestamps can no longer change.  A packet's PTS is never
 * below its DTS and DTS grow in decode order, so a packet whose DTS is past
 * the need-th smallest PTS proves it; a container without DTS (Matroska)
 * stops after QMC_REORDER_MARGIN packets that changed nothing, which is far
 * beyond what a decoder may reorder (16 frames for H.264 and HEVC).  A late
 * packet that would break this would still be seen: it is decoded inside
 * the chunk, and a decoded frame missing from the index is an error
 * (chunk.c). */
#include <string.h>

#include <gst/pbutils/pbutils.h>
#include <gst/video/video.h>

#include "frametable.h"

#define QMC_REORDER_MARGIN 64

/* The packets read as frames: codecs where a packet (access unit, temporal
 * unit, superframe, picture) decodes into exactly one frame; raw video in
 * a container too.  Other codecs (VP8's hidden frames, MPEG-4 part 2's
 * empty frames) are refused rather than numbered wrongly; a stream of a
 * listed codec where it does not hold (fields coded in packets of their
 * own) fails the chunk's checks of every decoded frame (chunk.c). */
#define QMC_PACKET_CAPS "video/x-h264; video/x-h265; video/x-av1; video/x-vp9; " \
                        "image/jpeg; video/x-raw(ANY)"

/* ---------------------------------------------------------------- the table */

void qmc_frame_table_init(QmcFrameTable *t, guint64 need)
{
    memset(t, 0, sizeof(*t));
    t->segment.format = GST_FORMAT_UNDEFINED;
    t->frame_dur = GST_CLOCK_TIME_NONE;
    t->frames = g_array_new(FALSE, FALSE, sizeof(GstClockTime));
    t->excluded = g_array_new(FALSE, FALSE, sizeof(GstClockTime));
    t->keys = g_array_new(FALSE, FALSE, sizeof(GstClockTime));
    t->heap = g_array_new(FALSE, FALSE, sizeof(GstClockTime));
    t->first_key_pts = GST_CLOCK_TIME_NONE;
    t->straddle = GST_CLOCK_TIME_NONE;
    t->need = need;
}

void qmc_frame_table_clear(QmcFrameTable *t)
{
    if (t->frames)
        g_array_free(t->frames, TRUE);
    if (t->excluded)
        g_array_free(t->excluded, TRUE);
    if (t->keys)
        g_array_free(t->keys, TRUE);
    if (t->heap)
        g_array_free(t->heap, TRUE);
    memset(t, 0, sizeof(*t));
}

/* Whether the decoder keeps this frame: GstVideoDecoder clips [PTS, PTS +
 * duration) by its segment, the duration being the packet's, else one
 * frame at the caps' rate, else 40 ms. */
static gboolean in_segment(const QmcFrameTable *t, const QmcPacket *p)
{
    GstClockTime dur = GST_CLOCK_TIME_IS_VALID(p->dur) ? p->dur :
                       GST_CLOCK_TIME_IS_VALID(t->frame_dur) ? t->frame_dur : 40 * GST_MSECOND;
    if (t->segment.format != GST_FORMAT_TIME)
        return TRUE;
    return gst_segment_clip(&t->segment, GST_FORMAT_TIME, p->pts, p->pts + dur, NULL, NULL);
}

/* The max-heap of the `need` smallest frame timestamps: its top is the
 * need-th smallest. */
#define HEAP(t, i) g_array_index((t)->heap, GstClockTime, (i))

static void heap_swap(QmcFrameTable *t, guint a, guint b)
{
    GstClockTime x = HEAP(t, a);
    HEAP(t, a) = HEAP(t, b);
    HEAP(t, b) = x;
}

static void heap_push(QmcFrameTable *t, GstClockTime v)
{
    guint i = t->heap->len;
    g_array_append_val(t->heap, v);
    while (i > 0 && HEAP(t, (i - 1) / 2) < HEAP(t, i)) {
        heap_swap(t, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_replace_top(QmcFrameTable *t, GstClockTime v)
{
    guint i = 0, n = t->heap->len;
    HEAP(t, 0) = v;
    for (;;) {
        guint l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && HEAP(t, l) > HEAP(t, m))
            m = l;
        if (r < n && HEAP(t, r) > HEAP(t, m))
            m = r;
        if (m == i)
            break;
        heap_swap(t, i, m);
        i = m;
    }
}

gboolean qmc_frame_table_add(QmcFrameTable *t, const QmcPacket *p)
{
    t->packets++;
    if (!t->have_key) {
        /* what precedes the first key frame cannot be decoded from the start */
        if (!p->key) {
            if (GST_CLOCK_TIME_IS_VALID(p->pts))
                g_array_append_val(t->excluded, p->pts);
            return TRUE;
        }
        if (!GST_CLOCK_TIME_IS_VALID(p->pts)) {
            t->no_pts++;
            return TRUE;
        }
        t->have_key = TRUE;
        t->first_key_pts = p->pts;
    }
    if (!GST_CLOCK_TIME_IS_VALID(p->pts)) {
        t->no_pts++;
        return TRUE;
    }
    if (p->key)
        g_array_append_val(t->keys, p->pts);
    if (p->pts < t->first_key_pts || !in_segment(t, p)) {
        g_array_append_val(t->excluded, p->pts);
        return TRUE;
    }
    g_array_append_val(t->frames, p->pts);
    if (t->need == G_MAXUINT64)
        return TRUE;
    if (t->heap->len < t->need) {
        heap_push(t, p->pts);
        t->since_change = 0;
    } else if (p->pts < HEAP(t, 0)) {
        heap_replace_top(t, p->pts);
        t->since_change = 0;
    } else {
        t->since_change++;
    }
    if (t->heap->len < t->need)
        return TRUE;
    /* the need-th smallest is final once no later packet can be below it */
    if (GST_CLOCK_TIME_IS_VALID(p->dts) && p->dts > HEAP(t, 0))
        return FALSE;
    return t->since_change < QMC_REORDER_MARGIN;
}

static gint cmp_time(gconstpointer a, gconstpointer b)
{
    const GstClockTime x = *(const GstClockTime *)a, y = *(const GstClockTime *)b;
    return (x > y) - (x < y);
}

/* The position of v in the ascending array a, or -1. */
static gint64 find_time(const GArray *a, GstClockTime v)
{
    guint lo = 0, hi = a->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (g_array_index(a, GstClockTime, mid) < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < a->len && g_array_index(a, GstClockTime, lo) == v ? (gint64)lo : -1;
}

gboolean qmc_frame_table_finish(QmcFrameTable *t, char **why)
{
    *why = NULL;
    if (t->no_pts) {
        *why = g_strdup_printf("%" G_GUINT64_FORMAT " of its %" G_GUINT64_FORMAT " video packets "
                               "carry no timestamp (a raw H.264/H.265 stream?), so a frame's "
                               "number is known only by decoding from the start",
                               t->no_pts, t->packets);
        return FALSE;
    }
    if (!t->have_key) {
        *why = g_strdup(t->packets ? "none of its video packets is a key frame"
                                   : "it has no video packets");
        return FALSE;
    }
    g_array_sort(t->frames, cmp_time);
    g_array_sort(t->excluded, cmp_time);
    for (guint i = 1; i < t->frames->len; i++) {
        GstClockTime v = g_array_index(t->frames, GstClockTime, i);
        if (v == g_array_index(t->frames, GstClockTime, i - 1) || find_time(t->excluded, v) >= 0) {
            *why = g_strdup_printf("two of its video packets have the timestamp %" GST_TIME_FORMAT,
                                   GST_TIME_ARGS(v));
            return FALSE;
        }
    }
    if (t->frames->len && find_time(t->excluded, g_array_index(t->frames, GstClockTime, 0)) >= 0) {
        *why = g_strdup_printf("two of its video packets have the timestamp %" GST_TIME_FORMAT,
                               GST_TIME_ARGS(g_array_index(t->frames, GstClockTime, 0)));
        return FALSE;
    }
    /* a frame that the segment's start cuts (an edit list starting inside
     * it) leaves the decoder with the segment's start as its timestamp */
    t->straddle = GST_CLOCK_TIME_NONE;
    if (t->segment.format == GST_FORMAT_TIME && t->frames->len > 1 &&
        g_array_index(t->frames, GstClockTime, 1) < t->segment.start) {
        *why = g_strdup("its edit list starts inside two frames");
        return FALSE;
    }
    if (t->segment.format == GST_FORMAT_TIME && t->frames->len &&
        g_array_index(t->frames, GstClockTime, 0) < t->segment.start)
        t->straddle = t->segment.start;
    return TRUE;
}

gint64 qmc_frame_table_lookup(const QmcFrameTable *t, GstClockTime pts)
{
    gint64 i = find_time(t->frames, pts);
    if (i >= 0)
        return i;
    if (pts == t->straddle)
        return 0;
    return find_time(t->excluded, pts) >= 0 ? QMC_FT_EXCLUDED : QMC_FT_UNKNOWN;
}

guint64 qmc_frame_table_count(const QmcFrameTable *t)
{
    return t->frames->len;
}

gboolean qmc_frame_table_seek_point(const QmcFrameTable *t, guint64 rank, QmcSeekPoint *sp)
{
    GstClockTime want, key = GST_CLOCK_TIME_NONE;
    guint k, at = 0, lo = 0, hi = t->frames->len;

    if (rank >= t->frames->len || !t->keys->len)
        return FALSE;
    want = g_array_index(t->frames, GstClockTime, rank);
    for (k = 0; k < t->keys->len; k++) {
        GstClockTime v = g_array_index(t->keys, GstClockTime, k);
        if (v <= want) {
            key = v;
            at = k;
        }
    }
    /* the first key frame's PTS is every frame's lower bound: one is found */
    if (!GST_CLOCK_TIME_IS_VALID(key))
        return FALSE;
    sp->from_start = at == 0;
    sp->pts = key;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (g_array_index(t->frames, GstClockTime, mid) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    sp->rank = lo;
    /* seeks are in stream time; a key frame the segment starts after (an
     * edit list that starts inside its GOP) is reached by seeking to the
     * segment's start */
    sp->position = GST_CLOCK_TIME_NONE;
    if (t->segment.format == GST_FORMAT_TIME)
        sp->position = gst_segment_to_stream_time(&t->segment, GST_FORMAT_TIME,
                                                  MAX(key, t->segment.start));
    if (!GST_CLOCK_TIME_IS_VALID(sp->position))
        sp->position = key;
    return TRUE;
}

/* ------------------------------------------------------------ the reading */

/* uridecodebin's autoplug-select answers (GstAutoplugSelectResult is not in
 * a public header) */
enum { SELECT_TRY = 0, SELECT_EXPOSE = 1, SELECT_SKIP = 2 };

typedef struct {
    QmcFrameTable *t;
    gboolean decode;           /* count decoded frames instead (qmc_count_decoded) */
    GstElement *pipeline, *sink;
    gboolean linked;
    gint done;                 /* atomic: enough read */
    guint64 decoded;
    char *codec;               /* a video codec we do not read packets of */
} Reader;

static void post_app(Reader *r, const char *name)
{
    gst_element_post_message(r->pipeline,
        gst_message_new_application(GST_OBJECT(r->pipeline), gst_structure_new_empty(name)));
}

static GstPadProbeReturn packet_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Reader *r = data;
    QmcFrameTable *t = r->t;
    (void)pad;

    if (g_atomic_int_get(&r->done))
        return GST_PAD_PROBE_DROP;
    if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
        QmcPacket p = { GST_BUFFER_PTS(b), GST_BUFFER_DTS(b), GST_BUFFER_DURATION(b),
                        !GST_BUFFER_FLAG_IS_SET(b, GST_BUFFER_FLAG_DELTA_UNIT) };
        if (r->decode) {
            r->decoded++;
        } else if (!qmc_frame_table_add(t, &p)) {
            g_atomic_int_set(&r->done, TRUE);
            post_app(r, "qmc-table-done");
        }
        return GST_PAD_PROBE_DROP;
    }
    if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *ev = GST_PAD_PROBE_INFO_EVENT(info);
        if (GST_EVENT_TYPE(ev) == GST_EVENT_SEGMENT && t && t->segment.format != GST_FORMAT_TIME) {
            const GstSegment *seg;
            gst_event_parse_segment(ev, &seg);
            if (seg->format == GST_FORMAT_TIME)
                t->segment = *seg;
        } else if (GST_EVENT_TYPE(ev) == GST_EVENT_CAPS && t) {
            GstCaps *caps;
            GstStructure *s;
            int n = 0, d = 1;
            gst_event_parse_caps(ev, &caps);
            s = gst_caps_get_structure(caps, 0);
            if (gst_structure_get_fraction(s, "framerate", &n, &d) && n > 0 && d > 0)
                t->frame_dur = gst_util_uint64_scale_int(GST_SECOND, d, n);
        }
    }
    return GST_PAD_PROBE_OK;
}

static gboolean caps_are_video(GstCaps *caps)
{
    const char *name = caps && !gst_caps_is_empty(caps) ?
                       gst_structure_get_name(gst_caps_get_structure(caps, 0)) : "";
    return g_str_has_prefix(name, "video/") || g_str_has_prefix(name, "image/");
}

static void on_pad_added(GstElement *dec, GstPad *pad, gpointer data)
{
    Reader *r = data;
    GstCaps *caps = gst_pad_get_current_caps(pad);
    GstPad *sink;
    (void)dec;

    if (!caps)
        caps = gst_pad_query_caps(pad, NULL);
    if (r->linked || !caps_are_video(caps)) {
        gst_caps_unref(caps);
        return; /* as a whole run: the first video stream */
    }
    gst_caps_unref(caps);
    sink = gst_element_get_static_pad(r->sink, "sink");
    if (gst_pad_link(pad, sink) == GST_PAD_LINK_OK) {
        r->linked = TRUE;
        gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                          packet_probe, r, NULL);
    }
    gst_object_unref(sink);
}

static void on_no_more_pads(GstElement *dec, gpointer data)
{
    Reader *r = data;
    (void)dec;
    if (!r->linked)
        post_app(r, "qmc-table-novideo");
}

/* Packets of the listed codecs are exposed as they leave the demuxer;
 * nothing is decoded (a video codec not listed is remembered, for the
 * message). */
static int on_autoplug_select(GstElement *bin, GstPad *pad, GstCaps *caps,
                              GstElementFactory *f, gpointer data)
{
    Reader *r = data;
    const char *klass = gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_KLASS);
    const char *name = gst_structure_get_name(gst_caps_get_structure(caps, 0));
    (void)bin;
    (void)pad;

    if (r->decode || !klass || !strstr(klass, "Decoder") ||
        !strcmp(name, "application/x-yuv4mpeg"))
        return SELECT_TRY;
    if (caps_are_video(caps) && !r->codec)
        r->codec = gst_pb_utils_get_codec_description(caps);
    return SELECT_SKIP;
}

/* Run the reading pipeline; NULL on success, else the error (g_malloc'd),
 * with *unsupported set when it is about the input's format. */
static char *run_reader(Reader *r, const char *uri, gboolean *unsupported)
{
    GstElement *src;
    GstBus *bus;
    GstCaps *caps = gst_caps_from_string(r->decode ? "video/x-raw(ANY)" : QMC_PACKET_CAPS);
    char *err = NULL;
    gboolean over = FALSE;

    *unsupported = FALSE;
    r->pipeline = gst_pipeline_new("qmetric-compare-index");
    src = gst_element_factory_make("uridecodebin", NULL);
    r->sink = gst_element_factory_make("fakesink", NULL);
    if (!src || !r->sink) {
        gst_caps_unref(caps);
        return g_strdup("GStreamer's uridecodebin or fakesink is missing");
    }
    g_object_set(src, "uri", uri, "caps", caps, "expose-all-streams", FALSE, NULL);
    g_object_set(r->sink, "sync", FALSE, "async", FALSE, NULL);
    gst_caps_unref(caps);
    gst_bin_add_many(GST_BIN(r->pipeline), src, r->sink, NULL);
    g_signal_connect(src, "pad-added", G_CALLBACK(on_pad_added), r);
    g_signal_connect(src, "no-more-pads", G_CALLBACK(on_no_more_pads), r);
    g_signal_connect(src, "autoplug-select", G_CALLBACK(on_autoplug_select), r);

    bus = gst_element_get_bus(r->pipeline);
    if (gst_element_set_state(r->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
        over = TRUE;
    while (!over) {
        GstMessage *m = gst_bus_timed_pop_filtered(bus, GST_CLOCK_TIME_NONE,
                                                   GST_MESSAGE_EOS | GST_MESSAGE_ERROR |
                                                   GST_MESSAGE_APPLICATION);
        const GstStructure *st = gst_message_get_structure(m);
        switch (GST_MESSAGE_TYPE(m)) {
        case GST_MESSAGE_EOS:
            if (r->t)
                r->t->complete = TRUE;
            over = TRUE;
            break;
        case GST_MESSAGE_ERROR: {
            GError *e = NULL;
            gst_message_parse_error(m, &e, NULL);
            err = g_strdup(e->message);
            g_error_free(e);
            over = TRUE;
            break;
        }
        default:
            if (gst_structure_has_name(st, "qmc-table-done")) {
                over = TRUE;
            } else if (gst_structure_has_name(st, "qmc-table-novideo")) {
                err = g_strdup("no video stream found");
                over = TRUE;
            }
            break;
        }
        gst_message_unref(m);
    }
    if (!err && !r->linked)
        err = g_strdup("no video stream found");
    if (err && r->codec && !r->linked) {
        /* the reason a video stream was not read, rather than what followed */
        g_free(err);
        err = g_strdup_printf("its video is %s, whose packets are not read as frames (H.264, "
                              "H.265, AV1, VP9, JPEG and raw video are)", r->codec);
        *unsupported = TRUE;
    }
    gst_element_set_state(r->pipeline, GST_STATE_NULL);
    gst_object_unref(bus);
    gst_object_unref(r->pipeline);
    g_free(r->codec);
    return err;
}

QmcFrameTable *qmc_frame_table_read(const char *uri, guint64 need, gboolean *unsupported,
                                    char **err)
{
    Reader r = { 0 };
    QmcFrameTable *t = g_new0(QmcFrameTable, 1);

    qmc_frame_table_init(t, need);
    r.t = t;
    *err = run_reader(&r, uri, unsupported);
    if (!*err && !qmc_frame_table_finish(t, err))
        *unsupported = TRUE;
    if (*err) {
        qmc_frame_table_free(t);
        return NULL;
    }
    return t;
}

void qmc_frame_table_free(QmcFrameTable *t)
{
    if (!t)
        return;
    qmc_frame_table_clear(t);
    g_free(t);
}

gint64 qmc_count_decoded(const char *uri, char **err)
{
    Reader r = { 0 };
    gboolean unsupported;

    r.decode = TRUE;
    *err = run_reader(&r, uri, &unsupported);
    return *err ? -1 : (gint64)r.decoded;
}
