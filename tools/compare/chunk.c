/* qmetric-compare: a chunk of a title (--start N --frames M --partial FILE).
 *
 * Frames N .. N+M-1 are scored exactly as a whole run scores them: the
 * qmetric element is fed from frame F = N - QM_CHUNK_CONTEXT (rounded down
 * to the --subsample step: the same frames are computed) so that temporal
 * features have their history, up to QMC_LOOKAHEAD frames past the end for
 * the look-ahead; only N .. N+M-1 are reported (log, summary, partial).
 *
 * Frame numbers are those of a whole run: the N-th frame in presentation
 * order after --frame_skip_*.  Raw and Y4M files read in place start at
 * their frame F; a pipe is read from its start.  An encoded input seeks to
 * the key frame before F (frametable.c finds it from the demuxer's packets)
 * and each decoded frame's number is its timestamp's place in that index.
 * Every decoded frame from the key frame on must then come exactly once
 * and in order, and a decoded frame the index does not have is an error:
 * a file that the index misreads stops the chunk with a message instead of
 * shifting scores onto other frames.
 *
 * The seek: nothing reaches the decoder before it.  Each video decoder that
 * decodebin plugs for an input that seeks holds its first packet at its
 * sink pad and posts "qmc-seek"; the main loop sends a flushing key-unit
 * seek from there upstream to the demuxer, and packets pass from the
 * seek's FLUSH_STOP on.  The decoder so sees its caps, the flush, the new
 * segment and the key frame first, with nothing in flight: a decoder that
 * outputs frames late (from its flush, or a thread of its own: NVIDIA's
 * nvh264dec flushes its parser's display queue there) has nothing to output
 * across the flush, and nothing before the key frame is decoded for
 * nothing.  The flush is dropped before it reaches the element (nothing of
 * the stream reached it yet, and a flush would reset the other stream's
 * frames).
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "chunkpart.h"
#include "frametable.h"

#include "metric.h"
#include "partial.h"
#include "qmlog.h"

/* frames fed past the chunk's end: the engine's longest look-ahead, and at
 * least one so that the run knows whether frame `end` exists */
#define QMC_LOOKAHEAD MAX(QM_MAX_DELAY, 1)
#define NONE G_MAXUINT64

typedef enum { BY_COUNT, BY_TABLE } IndexKind;

typedef struct {
    IndexKind kind;
    QmcFrameTable *table;      /* BY_TABLE */
    QmcSeekPoint sp;           /* BY_TABLE: where decoding starts */
    gboolean seek;             /* BY_TABLE and not from the start */
    guint64 skip;              /* --frame_skip_* */
    guint64 base;              /* BY_COUNT: the input's frame the source gives first */
    GstPad *dec_pad;           /* the sink pad of the decoder that posted "qmc-seek" */
    gint seek_posted;          /* atomic: a decoder's first packet asked for the seek */
    /* the side's streaming thread */
    gint seek_sent, seek_done; /* atomic */
    guint64 next;              /* BY_COUNT: frames given; BY_TABLE: the next frame expected */
    gboolean started;          /* BY_TABLE: the first frame at or after the key frame came */
    gboolean done;             /* the last frame fed went: end the stream */
    gboolean eos_sent;         /* and its end went downstream */
    gboolean failed;
    gboolean ended;            /* the input ended before everything was fed */
    guint64 have;              /* frames of the input (whole-run numbers) seen so far */
    guint64 count;             /* its frames after the skip, when known before (else NONE) */
    guint64 fed;               /* frames that reached the element (its streaming thread) */
    GstVideoInfo info;         /* their format */
} ChunkSide;

struct QmcChunk {
    guint64 start, end;        /* frames reported: start .. end - 1 (end NONE: to the end) */
    guint64 first, feed_end;   /* frames fed */
    ChunkSide side[2];
    QmcChunkPart *part;        /* --partial */
    /* results, main thread */
    unsigned n;
    char **names;
    double *v;
    guint8 *present;
    QmPool *pools;
    unsigned pool_flags;
    QmLog *log;
    guint64 next_row;          /* the next frame of the partial */
    guint64 scored;
    gint64 t0;
    gboolean write_failed;
};

/* ------------------------------------------------------------ the options */

void qmc_chunk_check_options(Options *o)
{
    const char *what = o->partial ? "--partial" : "--start";
    gboolean chunk = o->start_set || o->partial;

    if (o->count_frames) {
        if (o->ladder)
            qmc_usage_error("--count-frames counts the frame pairs of REFERENCE DISTORTED; "
                            "count each rendition on its own");
        if (chunk || o->output || o->plot || o->summary == SUMMARY_JSON)
            qmc_usage_error("--count-frames prints the number of frame pairs and scores "
                            "nothing: give it without --start, --partial, -o, --plot or "
                            "--summary json");
    }
    if (!chunk)
        return;
    o->chunk = TRUE;
    if (o->ladder)
        qmc_usage_error("%s scores a chunk of REFERENCE DISTORTED; score a ladder's "
                        "renditions in chunks one by one", what);
    if (o->pair_by_time)
        qmc_usage_error("%s numbers frames by index; with --pair-by time the chunks of a title "
                        "cannot be made to pair as a whole run pairs", what);
    if (o->align || o->detect_offset)
        qmc_usage_error("%s with --align/--detect-offset: find the offset once "
                        "(--detect-offset) and give it to every chunk as --frame_skip_ref or "
                        "--frame_skip_dist", what);
    if (o->partial && o->thresholds->len)
        qmc_usage_error("--fail-below with --partial: a chunk's values are not the title's; "
                        "gate the merged result");
    if (o->partial && !strcmp(o->partial, "-") &&
        ((o->output && !strcmp(o->output, "-")) || (o->plot && !strcmp(o->plot, "-")) ||
         o->summary == SUMMARY_JSON))
        qmc_usage_error("only one of --partial -, -o -, --plot - and --summary json can use "
                        "standard output");
}

/* -------------------------------------------------------------- the index */

/* An input's frames after its --frame_skip_*. */
static guint64 after_skip(guint64 frames, guint64 skip)
{
    return frames - MIN(frames, skip);
}

static G_GNUC_NORETURN void past_end(const Side *s, guint64 start, guint64 frames)
{
    qmc_input_error("%s: --start %" G_GUINT64_FORMAT " is past its end (%" G_GUINT64_FORMAT
                    " frames)", s->display, start, frames);
}

/* An input's index up to frame `need` - 1 of the file (G_MAXUINT64: all);
 * NULL when the input cannot be indexed from its packets (*why says why,
 * *unsupported when that is its format); a broken file is an input error. */
static QmcFrameTable *read_index(Side *s, guint64 need, gboolean *unsupported, char **why)
{
    QmcFrameTable *t = qmc_frame_table_read(s->uri, need, unsupported, why);
    if (!t && !*unsupported)
        qmc_input_error("%s: %s (the %s)", s->display, *why, qmc_side_name[s->id]);
    return t;
}

/* Frames of one input for --count-frames, after its --frame_skip_*. */
static guint64 count_side(App *app, Side *s)
{
    guint64 n, skip = app->o.skip[s->id];
    QmcFrameTable *t = NULL;
    gboolean unsupported = FALSE;
    char *why = NULL;

    if (s->raw) {
        n = s->raw_frames;
    } else if (s->mapped && s->map.frames) {
        n = s->map.frames;
    } else if (s->once) {
        qmc_input_error("%s: a pipe can be read only once: --count-frames would consume it",
                        s->display);
    } else if ((t = read_index(s, G_MAXUINT64, &unsupported, &why))) {
        n = qmc_frame_table_count(t);
        qmc_frame_table_free(t);
    } else {
        /* no index from the packets: decode, as a whole run counts */
        gint64 d = qmc_count_decoded(s->uri, &why);
        if (d < 0)
            qmc_input_error("%s: %s (the %s)", s->display, why, qmc_side_name[s->id]);
        n = (guint64)d;
    }
    g_free(why);
    return after_skip(n, skip);
}

void qmc_count_frames_main(App *app)
{
    guint64 r = count_side(app, &app->side[REF]), d = count_side(app, &app->side[DIST]);
    guint64 n = MIN(r, d);

    if (r != d && !app->o.shortest)
        qmc_input_error("frame counts differ: reference has %" G_GUINT64_FORMAT " frames, "
                        "distorted %" G_GUINT64_FORMAT "%s (--shortest counts the first %"
                        G_GUINT64_FORMAT ")", r, d,
                        app->o.skip[REF] || app->o.skip[DIST] ? " after the skipped ones" : "",
                        n);
    if (app->o.max_frames && app->o.max_frames < n)
        n = app->o.max_frames;
    printf("%" G_GUINT64_FORMAT "\n", n);
    fflush(stdout);
    exit(ferror(stdout) ? EXIT_USAGE : 0);
}

/* The bytes from one frame of a mapped file to the next, when all are
 * alike (raw files, Y4M whose frame lines carry no parameters). */
static guint64 frame_record(const QmcMapSpec *m)
{
    return m->frame + (m->y4m ? 6 : 0);
}

static void plan_side(App *app, QmcChunk *c, Side *s)
{
    ChunkSide *cs = &c->side[s->id];
    guint64 k;
    char *why = NULL;
    gboolean unsupported = FALSE;

    cs->skip = app->o.skip[s->id];
    cs->count = NONE;
    k = c->first + cs->skip;  /* the input's frame fed first */
    if ((s->raw || s->mapped) && !s->map.pipe && s->map.frames) {
        cs->count = after_skip(s->map.frames, cs->skip);
        /* read in place from frame k: its bytes are known */
        if (k >= s->map.frames)
            past_end(s, c->start, cs->count);
        s->map.first += k * frame_record(&s->map);
        s->map.frames -= k;
        cs->base = k;
        return;
    }
    if (s->raw || s->mapped || s->once || k == 0) {
        /* read from the start; the frames before F are dropped */
        cs->kind = BY_COUNT;
        if (!s->raw && !s->mapped && !s->once) {
            /* from the start anyway: the index only checks the numbering */
            cs->table = read_index(s, c->feed_end == NONE ? NONE : c->feed_end + cs->skip,
                                   &unsupported, &why);
            if (cs->table) {
                cs->kind = BY_TABLE;
                qmc_frame_table_seek_point(cs->table, 0, &cs->sp);
                if (cs->table->complete)
                    cs->count = after_skip(qmc_frame_table_count(cs->table), cs->skip);
            }
            g_free(why);
        }
        return;
    }
    cs->table = read_index(s, c->feed_end == NONE ? NONE : c->feed_end + cs->skip, &unsupported,
                           &why);
    if (!cs->table)
        qmc_input_error("%s: cannot be cut into chunks: %s; score it whole or from its first "
                        "frame (--start 0)", s->display, why);
    if (!qmc_frame_table_seek_point(cs->table, k, &cs->sp))
        past_end(s, c->start, after_skip(qmc_frame_table_count(cs->table), cs->skip));
    cs->kind = BY_TABLE;
    cs->seek = !cs->sp.from_start;
    if (cs->table->complete)
        cs->count = after_skip(qmc_frame_table_count(cs->table), cs->skip);
}

void qmc_chunk_plan(App *app)
{
    Options *o = &app->o;
    QmcChunk *c = g_new0(QmcChunk, 1);
    guint sub = o->subsample > 1 ? (guint)o->subsample : 1;

    app->chunk = c;
    c->start = o->start;
    c->end = o->max_frames ? o->start + o->max_frames : NONE;
    c->first = c->start > QM_CHUNK_CONTEXT ? c->start - QM_CHUNK_CONTEXT : 0;
    c->first -= c->first % sub;  /* the engine computes every sub-th frame from F */
    c->feed_end = c->end == NONE ? NONE : c->end + QMC_LOOKAHEAD;
    c->next_row = c->start;
    plan_side(app, c, &app->side[REF]);
    plan_side(app, c, &app->side[DIST]);
    if (o->partial) {
        /* the frames near the end are hashed: the end is --frames', or the
         * title's when the inputs' lengths are known already */
        guint64 pairs = MIN(c->side[REF].count, c->side[DIST].count);
        c->part = qmc_chunk_part_new(app, c->start, MIN(c->end, pairs));
    }
    /* from here on the chunk's own probe numbers, skips and stops the frames */
    o->skip[REF] = o->skip[DIST] = 0;
    o->max_frames = 0;
    if (!o->quiet) {
        GString *l = g_string_new(NULL);
        for (int i = 0; i < 2; i++) {
            const ChunkSide *cs = &c->side[i];
            g_string_append_printf(l, "%s %s ", i ? ";" : "", qmc_side_name[i]);
            if (cs->seek)
                g_string_append_printf(l, "from the key frame at %" GST_TIME_FORMAT " (frame %"
                                       G_GINT64_FORMAT ")", GST_TIME_ARGS(cs->sp.position),
                                       (gint64)cs->sp.rank - (gint64)cs->skip);
            else if (cs->base)
                g_string_append_printf(l, "from frame %" G_GUINT64_FORMAT,
                                       cs->base - cs->skip);
            else
                g_string_append(l, "from its start");
        }
        fprintf(stderr, "qmetric-compare: chunk: frames %" G_GUINT64_FORMAT "..", c->start);
        if (c->end != NONE)
            fprintf(stderr, "%" G_GUINT64_FORMAT, c->end - 1);
        fprintf(stderr, " (fed from frame %" G_GUINT64_FORMAT "); decoded:%s\n", c->first, l->str);
        g_string_free(l, TRUE);
    }
}

/* -------------------------------------------------------- the frame probe */

/* The whole-run number of a frame the decoder gave, or -1 to drop it (a
 * leading picture of the key frame, a frame the segment clips away); -2
 * after an error was posted. */
static gint64 number_of(App *app, Side *s, ChunkSide *cs, GstBuffer *buf)
{
    GstClockTime pts = GST_BUFFER_PTS(buf);
    gint64 r;

    if (cs->kind == BY_COUNT)
        return (gint64)(cs->base + cs->next++);
    if (!GST_CLOCK_TIME_IS_VALID(pts)) {
        qmc_post_error(app, "%s: a decoded frame has no timestamp: it cannot be numbered for "
                       "a chunk", s->display);
        return -2;
    }
    r = qmc_frame_table_lookup(cs->table, pts);
    if (cs->seek && pts < cs->sp.pts)
        return -1; /* a leading picture of the key frame sought: before the chunk */
    if (r == QMC_FT_EXCLUDED && cs->seek)
        return -1; /* outside the first segment: a whole run's decoder clips it away */
    if (r == QMC_FT_EXCLUDED) {
        qmc_post_error(app, "%s: the decoder gave a frame at %" GST_TIME_FORMAT " that the "
                       "index of its packets leaves out (before its first key frame or "
                       "outside its edit list): its frames cannot be numbered for a chunk",
                       s->display, GST_TIME_ARGS(pts));
        return -2;
    }
    if (r < 0) {
        qmc_post_error(app, "%s: the decoder gave a frame at %" GST_TIME_FORMAT " that no "
                       "packet of its index has: its frames cannot be numbered for a chunk",
                       s->display, GST_TIME_ARGS(pts));
        return -2;
    }
    if (!cs->started) {
        cs->started = TRUE;
        cs->next = cs->sp.rank;
    }
    if ((guint64)r != cs->next) {
        gint64 want = (gint64)cs->next - (gint64)cs->skip;
        if ((guint64)r > cs->next)
            qmc_post_error(app, "%s: frame %" G_GINT64_FORMAT " was not decoded (the decoder gave "
                           "frame %" G_GINT64_FORMAT " next%s): the chunk cannot be scored "
                           "exactly", s->display, want, r - (gint64)cs->skip,
                           cs->seek ? ", after the seek" : "");
        else
            qmc_post_error(app, "%s: frame %" G_GINT64_FORMAT " was decoded twice or out of "
                           "order: the chunk cannot be scored exactly", s->display,
                           r - (gint64)cs->skip);
        return -2;
    }
    cs->next++;
    return r;
}

static GstPadProbeReturn chunk_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Side *s = data;
    App *app = s->app;
    QmcChunk *c = app->chunk;
    ChunkSide *cs = &c->side[s->id];
    gint64 r, w;

    if (GST_PAD_PROBE_INFO_TYPE(info) & (GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM |
                                          GST_PAD_PROBE_TYPE_EVENT_FLUSH)) {
        GstEvent *ev = GST_PAD_PROBE_INFO_EVENT(info);
        /* after our end, what the decoder still sends (a tag, its own end)
         * would fail downstream and come back as a flow error */
        if (cs->eos_sent)
            return GST_PAD_PROBE_DROP;
        if (GST_EVENT_TYPE(ev) != GST_EVENT_EOS)
            return GST_PAD_PROBE_OK;
        if (g_atomic_int_get(&cs->seek_posted) && !g_atomic_int_get(&cs->seek_done))
            return GST_PAD_PROBE_DROP; /* the demuxer's end, as the seek was on its way */
        cs->ended = TRUE;
        if (cs->kind == BY_TABLE && !cs->done && !cs->failed && cs->table->complete &&
            (cs->started ? cs->next : cs->sp.rank) < qmc_frame_table_count(cs->table)) {
            qmc_post_error(app, "%s: the decoder ended before frame %" G_GINT64_FORMAT ", but "
                           "its packets hold %" G_GUINT64_FORMAT " frames: the chunk cannot be "
                           "scored exactly", s->display,
                           (gint64)(cs->started ? cs->next : cs->sp.rank) - (gint64)cs->skip,
                           qmc_frame_table_count(cs->table) - cs->skip);
            cs->failed = TRUE;
        }
        return GST_PAD_PROBE_OK;
    }
    if (cs->failed)
        return GST_PAD_PROBE_DROP;
    if (cs->seek && !g_atomic_int_get(&cs->seek_done)) {
        /* the decoder was given packets before the seek: not held at its
         * input (not found inside decodebin), so the seek would race with
         * what it still outputs */
        qmc_post_error(app, "%s: a frame was decoded before the seek to the key frame at %"
                       GST_TIME_FORMAT ": its decoder could not be held (the chunk cannot be "
                       "scored exactly)", s->display, GST_TIME_ARGS(cs->sp.position));
        cs->failed = TRUE;
        return GST_PAD_PROBE_DROP;
    }
    if (cs->done) {
        /* everything fed: end this stream.  The end goes into the
         * conversion, past this pad, so that what the decoder still sends
         * stops here instead of failing on a pad at EOS; the decoder is
         * stopped from the main loop (a flow return of EOS made av1dec fail
         * to decode now and then). */
        if (!cs->eos_sent) {
            GstPad *peer = gst_pad_get_peer(pad);
            cs->eos_sent = TRUE;
            if (peer) {
                gst_pad_send_event(peer, gst_event_new_eos());
                gst_object_unref(peer);
            }
            gst_element_post_message(app->pipeline,
                gst_message_new_application(GST_OBJECT(app->pipeline),
                    gst_structure_new("qmc-stop", "side", G_TYPE_INT, s->id, NULL)));
        }
        return GST_PAD_PROBE_DROP;
    }
    r = number_of(app, s, cs, GST_PAD_PROBE_INFO_BUFFER(info));
    if (r == -2)
        cs->failed = TRUE;
    if (r < 0)
        return GST_PAD_PROBE_DROP;
    w = r - (gint64)cs->skip;
    if (w < 0)
        return GST_PAD_PROBE_DROP; /* --frame_skip_* */
    cs->have = (guint64)w + 1;
    if ((guint64)w < c->first)
        return GST_PAD_PROBE_DROP;
    if (cs->have >= c->feed_end)
        cs->done = TRUE;
    return GST_PAD_PROBE_OK;
}

/* A flush of our seek stops before the element: nothing of this stream
 * reached it yet, and the element would drop the other stream's frames. */
static GstPadProbeReturn drop_flush(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    (void)pad;
    (void)info;
    (void)data;
    return GST_PAD_PROBE_DROP;
}

/* After the whole run's own flow probe (pipeline.c): the frames as the
 * element receives them, numbered from the first fed, for the partial
 * file's hashes. */
static GstPadProbeReturn fed_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Side *s = data;
    QmcChunk *c = s->app->chunk;
    ChunkSide *cs = &c->side[s->id];

    if (!cs->fed) {
        GstCaps *caps = gst_pad_get_current_caps(pad);
        if (!caps || !gst_video_info_from_caps(&cs->info, caps))
            gst_video_info_init(&cs->info);
        if (caps)
            gst_caps_unref(caps);
    }
    qmc_chunk_part_frame(c->part, s->id, c->first + cs->fed++, GST_PAD_PROBE_INFO_BUFFER(info),
                         &cs->info);
    return GST_PAD_PROBE_OK;
}

/* ------------------------------------------------- the decoder's input */

/* One decoder of an input that seeks: its packets wait at its sink pad
 * until the seek's flush went through (shared by its two probes). */
typedef struct {
    Side *s;
    gint released;             /* atomic: the seek's FLUSH_STOP passed */
} DecoderHold;

static GstPadProbeReturn hold_packets(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    DecoderHold *h = data;
    Side *s = h->s;
    ChunkSide *cs = &s->app->chunk->side[s->id];

    (void)info;
    if (g_atomic_int_get(&h->released))
        return GST_PAD_PROBE_REMOVE; /* the key frame sought and what follows it */
    if (g_atomic_int_compare_and_exchange(&cs->seek_posted, FALSE, TRUE)) {
        /* the demuxer is running: the seek can go to it (from the main
         * loop: a flushing seek from this streaming thread would wait on
         * itself) */
        cs->dec_pad = gst_object_ref(pad);
        gst_element_post_message(s->app->pipeline,
            gst_message_new_application(GST_OBJECT(s->app->pipeline),
                gst_structure_new("qmc-seek", "side", G_TYPE_INT, s->id, NULL)));
    }
    /* blocked until the seek's FLUSH_START, which drops this packet */
    return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn hold_flush(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    DecoderHold *h = data;
    ChunkSide *cs = &h->s->app->chunk->side[h->s->id];

    (void)pad;
    if (GST_EVENT_TYPE(GST_PAD_PROBE_INFO_EVENT(info)) != GST_EVENT_FLUSH_STOP ||
        !g_atomic_int_get(&cs->seek_sent))
        return GST_PAD_PROBE_OK;
    /* before any packet after it: the decoder outputs nothing before this */
    g_atomic_int_set(&cs->seek_done, TRUE);
    g_atomic_int_set(&h->released, TRUE);
    return GST_PAD_PROBE_REMOVE;
}

static gboolean is_video_decoder(GstElement *e)
{
    const char *klass = gst_element_get_metadata(e, GST_ELEMENT_METADATA_KLASS);
    return klass && strstr(klass, "Decoder") && strstr(klass, "Video");
}

/* An element decodebin plugs (the pipeline's "deep-element-added", in the
 * thread that plugs it, before it is linked): a video decoder of the side
 * is held at its input.  Every one is: with several video streams, the one
 * the tool links is not known yet. */
static void on_element(GstBin *bin, GstBin *sub, GstElement *e, gpointer data)
{
    Side *s = data;
    GstIterator *it;
    GValue v = G_VALUE_INIT;
    DecoderHold *h;

    (void)bin;
    (void)sub;
    if (!s->src || !is_video_decoder(e) ||
        !gst_object_has_as_ancestor(GST_OBJECT(e), GST_OBJECT(s->src)))
        return;
    it = gst_element_iterate_sink_pads(e);
    if (gst_iterator_next(it, &v) == GST_ITERATOR_OK) {
        GstPad *pad = g_value_get_object(&v);
        h = g_rc_box_new0(DecoderHold);
        h->s = s;
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BLOCK | GST_PAD_PROBE_TYPE_BUFFER |
                          GST_PAD_PROBE_TYPE_BUFFER_LIST, hold_packets, h, g_rc_box_release);
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_FLUSH, hold_flush, g_rc_box_acquire(h),
                          g_rc_box_release);
        g_value_unset(&v);
    }
    gst_iterator_free(it);
}

/* ------------------------------------------------------------ the sides */

void qmc_chunk_build_side(App *app, Side *s)
{
    GstPad *pad = gst_element_get_static_pad(s->filter, "src");
    /* a side that seeks decodes up to a GOP before its first frame reaches
     * the element, while the other may be feeding already: the element's
     * partner timeout (5 s, for stalled live-like inputs) would end it */
    if (s->id == REF)
        g_object_set(app->qm, "partner-timeout", (guint64)0, NULL);
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_FLUSH, drop_flush, NULL, NULL);
    if (app->chunk->part)
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, fed_probe, s, NULL);
    gst_object_unref(pad);
    if (app->chunk->side[s->id].seek)
        g_signal_connect(app->pipeline, "deep-element-added", G_CALLBACK(on_element), s);
}

guint64 qmc_chunk_skip(App *app, int side)
{
    return app->chunk->side[side].skip;
}

void qmc_chunk_watch(Side *s, GstPad *pad)
{
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM |
                      GST_PAD_PROBE_TYPE_EVENT_FLUSH, chunk_probe, s, NULL);
}

void qmc_chunk_from_start(App *app, Side *s)
{
    app->chunk->side[s->id].base = 0;
}

void qmc_chunk_stop(App *app, int id)
{
    GstElement *src = app->side[id].src;
    /* its frames reached the chunk's end: decoding more is waste */
    if (gst_element_set_locked_state(src, TRUE))
        gst_element_set_state(src, GST_STATE_NULL);
}

void qmc_chunk_seek(App *app, int id)
{
    ChunkSide *cs = &app->chunk->side[id];
    GstEvent *ev = gst_event_new_seek(1.0, GST_FORMAT_TIME, GST_SEEK_FLAG_FLUSH |
                                      GST_SEEK_FLAG_KEY_UNIT | GST_SEEK_FLAG_SNAP_BEFORE,
                                      GST_SEEK_TYPE_SET, (gint64)cs->sp.position,
                                      GST_SEEK_TYPE_NONE, -1);
    g_atomic_int_set(&cs->seek_sent, TRUE);
    /* upstream from the decoder's input, to the demuxer */
    if (!gst_pad_push_event(cs->dec_pad, ev))
        qmc_fail(app, EXIT_USAGE, "%s: the seek to %" GST_TIME_FORMAT " failed: it cannot be "
                 "scored in chunks", app->side[id].display, GST_TIME_ARGS(cs->sp.position));
}

/* ------------------------------------------------------------- the scores */

static gboolean open_outputs(App *app, QmcChunk *c, const GstStructure *st)
{
    GstVideoInfo vi;
    GPtrArray *names = g_ptr_array_new();
    char *err = NULL;

    for (int i = 0; i < gst_structure_n_fields(st); i++) {
        const char *f = gst_structure_nth_field_name(st, i);
        if (gst_structure_get_field_type(st, f) == G_TYPE_DOUBLE)
            g_ptr_array_add(names, g_strdup(f));
    }
    c->n = names->len;
    g_ptr_array_add(names, NULL);
    c->names = (char **)g_ptr_array_free(names, FALSE);
    c->v = g_new0(double, c->n + 1);
    c->present = g_new0(guint8, c->n + 1);
    c->pools = g_new0(QmPool, c->n + 1);
    for (unsigned i = 0; i < c->n; i++)
        qm_pool_init(&c->pools[i]);
    g_object_get(app->qm, "pool", &c->pool_flags, NULL);
    if (!gst_video_info_from_caps(&vi, app->side[REF].caps))
        gst_video_info_init(&vi);
    if (c->part && !qmc_chunk_part_open(app, c->part, c->n, (const char *const *)c->names,
                                        vi.width, vi.height))
        return FALSE;
    if (app->log.tmp &&
        !(c->log = qm_log_open(app->log.tmp, qm_log_format_from_string(app->o.log_format),
                               c->n, (const char *const *)c->names, vi.width, vi.height,
                               &err))) {
        qmc_fail(app, EXIT_USAGE, "--output %s: %s", app->o.output, err);
        free(err);
        return FALSE;
    }
    return TRUE;
}

/* The partial's rows up to frame `to` - 1 that no score came for (frames
 * --subsample skips). */
static void empty_rows(QmcChunk *c, guint64 to)
{
    memset(c->present, 0, c->n + 1);
    for (; c->next_row < to; c->next_row++)
        if (c->part)
            qmc_chunk_part_row(c->part, c->v, c->present);
}

void qmc_chunk_on_scores(App *app, const GstStructure *st)
{
    QmcChunk *c = app->chunk;
    guint64 index = 0, w;
    GstStructure *mine;
    int known = 0;

    if (app->error || !gst_structure_get_uint64(st, "index", &index))
        return;
    if (!c->names && !open_outputs(app, c, st))
        return;
    w = c->first + index;
    if (w < c->start || w >= c->end)
        return; /* context and look-ahead */
    empty_rows(c, w);
    for (unsigned i = 0; i < c->n; i++) {
        c->present[i] = gst_structure_get_double(st, c->names[i], &c->v[i]);
        known += c->present[i];
    }
    for (int i = 0; i < gst_structure_n_fields(st); i++)
        known -= gst_structure_get_field_type(st, gst_structure_nth_field_name(st, i)) ==
                 G_TYPE_DOUBLE;
    if (known) {
        qmc_fail(app, EXIT_USAGE, "frame %" G_GUINT64_FORMAT " has scores the first frame of the "
                 "chunk did not have", w);
        return;
    }
    for (unsigned i = 0; i < c->n; i++)
        if (c->present[i])
            qm_pool_add(&c->pools[i], c->v[i]);
    if (c->part)
        qmc_chunk_part_row(c->part, c->v, c->present);
    if (c->log && qm_log_frame(c->log, w, c->v, c->present) < 0)
        c->write_failed = TRUE;
    c->next_row = w + 1;
    c->scored++;
    /* the rest of the tool sees whole-run numbers and the chunk's frames only */
    mine = gst_structure_copy(st);
    gst_structure_set(mine, "index", G_TYPE_UINT64, w, NULL);
    qmc_on_scores(app, mine);
    gst_structure_free(mine);
}

void qmc_chunk_started(App *app)
{
    app->chunk->t0 = g_get_monotonic_time();
}

/* ------------------------------------------------------------- the end */

/* The frames the title has, as far as this chunk saw: NONE when both
 * inputs go on past what was fed.  A count that differs between them is
 * an error unless --shortest (as in a whole run). */
static guint64 title_pairs(App *app, QmcChunk *c)
{
    const ChunkSide *r = &c->side[REF], *d = &c->side[DIST];
    gboolean er = r->ended && r->have < c->feed_end, ed = d->ended && d->have < c->feed_end;

    if (!er && !ed)
        return NONE;
    if (!app->o.shortest && !(er && ed && r->have == d->have)) {
        GString *m = g_string_new("frame counts differ: ");
        for (int i = 0; i < 2; i++) {
            const ChunkSide *cs = &c->side[i];
            gboolean e = i == REF ? er : ed;
            g_string_append_printf(m, "%s%s has %s%" G_GUINT64_FORMAT " frames", i ? ", " : "",
                                   qmc_side_name[i], e ? "" : "more than ", cs->have);
        }
        g_string_append(m, " (--shortest accepts this)");
        qmc_fail(app, EXIT_USAGE, "%s", m->str);
        g_string_free(m, TRUE);
        return 0;
    }
    return MIN(er ? r->have : NONE, ed ? d->have : NONE);
}

/* The summary of the chunk's frames, replacing the element's (which pooled
 * the context and look-ahead too). */
static void chunk_summary(App *app, QmcChunk *c, guint64 rows)
{
    GstStructure *s = gst_structure_copy(app->summary);

    gst_structure_set(s, "frames", G_TYPE_UINT64, c->scored, "pairs", G_TYPE_UINT64, rows, NULL);
    for (unsigned i = 0; i < c->n; i++) {
        GstStructure *f;
        gst_structure_remove_field(s, c->names[i]);
        if (!c->pools[i].n)
            continue;
        f = gst_structure_new_empty("pooled");
        for (unsigned m = 1; m <= QM_POOL_P5; m <<= 1) {
            if (c->pool_flags & m) {
                char *field = g_strdelimit(g_strdup(qm_pool_method_name(m)), "_", '-');
                gst_structure_set(f, field, G_TYPE_DOUBLE, qm_pool_value(&c->pools[i], m), NULL);
                g_free(field);
            }
        }
        gst_structure_set(s, c->names[i], GST_TYPE_STRUCTURE, f, NULL);
        gst_structure_free(f);
    }
    gst_structure_free(app->summary);
    app->summary = s;
}

void qmc_chunk_finish(App *app)
{
    QmcChunk *c = app->chunk;
    guint64 pairs = NONE, last, rows;
    double secs = (g_get_monotonic_time() - c->t0) / 1e6;
    gboolean eoi = FALSE;

    if (!app->error && !app->interrupted)
        pairs = title_pairs(app, c);
    if (!app->error && pairs != NONE && pairs <= c->start)
        qmc_fail(app, EXIT_USAGE, "--start %" G_GUINT64_FORMAT " is past the end: the inputs have "
                 "%" G_GUINT64_FORMAT " frame pairs", c->start, pairs);
    if (!app->error && !app->interrupted && !c->names)
        qmc_fail(app, EXIT_USAGE, "no frames were compared");
    last = MIN(c->end, pairs);
    if (!app->error && !app->interrupted) {
        eoi = pairs != NONE && pairs <= c->end;
        if (last == NONE)
            last = c->next_row; /* no end given and none seen: cannot happen */
        empty_rows(c, last);
    }
    rows = c->next_row > c->start ? c->next_row - c->start : 0;
    if (c->log && qm_log_close(c->log, c->pools, c->pool_flags,
                               secs > 0 ? c->scored / secs : 0) < 0)
        c->write_failed = TRUE;
    c->log = NULL;
    if (c->write_failed && !app->error)
        qmc_fail(app, EXIT_USAGE, "the chunk's log cannot be written (disk full?)");
    if (app->summary && c->names)
        chunk_summary(app, c, rows);
    if (c->part)
        qmc_chunk_part_close(app, c->part, eoi, secs);
}
