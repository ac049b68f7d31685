/* qmetric-bench-probes: one run of N probes in one pipeline, and its
 * figures (the definitions are in the comment at the top of
 * bench/qmetric-bench-probes.c). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <gst/app/gstappsrc.h>

#include "probes.h"

gint64 pb_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (gint64)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void sleep_until(gint64 ns)
{
    struct timespec t = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {
    }
}

typedef struct Run Run;

#define PB_LAT_CHANGES 32  /* latency changes noted per probe */

typedef struct Probe Probe;

typedef struct PadTag {
    Run *run;
    Probe *p;
    int side;                   /* 0 reference, 1 distorted */
} PadTag;

/* The element's stage stamps in a message (gst/qmetric/qmframetimes.h). */
enum { EL_TAKEN, EL_MAPPED, EL_SUBMITTED, EL_SCORED, EL_N };
static const char *const el_fields[EL_N] = {
    "t-taken-us", "t-mapped-us", "t-submitted-us", "t-scored-us",
};

/* Per probe, per frame k: stamps in CLOCK_MONOTONIC ns (0: none yet).
 * Each array has one writer (the pacing thread, a pad's streaming thread,
 * the element's src thread) and is read after the pipeline has stopped. */
struct Probe {
    GstElement *bin;            /* the probe's elements */
    GstObject *ctx;             /* its own CUDA context (context_per_probe) */
    GstElement *src[2], *q;     /* q: NULL in the decode-only baseline */
    GstElement *sink[2];        /* the baseline's fakesinks */
    GstClockTime phase;         /* offset of this probe's frames in the period */
    GstClockTime latency;       /* the element's live latency (its deadline past a
                                 * frame's running time), queried at the end */
    GstClockTime side_latency[2];   /* the baseline: each side's upstream latency
                                     * plus the pair latency, queried at the end */
    /* the latency over time: it grows while the run starts (qmetric's
     * look-ahead once it knows the rate, a decoder's once it has the
     * stream), and a frame is judged by the latency then in effect;
     * recorded after the start and after each recalculation */
    gint64 lat_at[PB_LAT_CHANGES];
    GstClockTime lat_val[PB_LAT_CHANGES];
    int n_lat;
    gint64 *push[2], *arr[2], *msg;
    gint64 *deq[2];             /* appsrc's thread sends frame k on */
    gint64 *el[EL_N];           /* the element's stamps of pair k */
    double *score;
    guint64 n_msg;
    guint64 sum_frames, sum_unmatched, sum_skipped, sum_in_place, sum_copied;
    PadTag tag[2], deq_tag[2];
};

struct Run {
    const PbOpts *o;
    PbFrames *fr;
    int n, frames;
    int window_end;             /* frames counted: those pushed after it are the tail */
    Probe *p;
    GstElement *pipe;
    GstClockTime period, start; /* start: PTS (running time) of frame 0 */
    gint64 t0;                  /* the pipeline's base time (monotonic ns) */
    GMutex lock;
    GCond cond;
    int summaries;
    gint stop, feeders_left;
    gint eos;                   /* the pipeline posted EOS */
    char feature[64];           /* the first score of the messages */
};

static GstClockTime element_latency(GstElement *e);

/* Note each probe's latency where it changed (up to PB_LAT_CHANGES). */
static void note_latencies(Run *run)
{
    const gint64 now = pb_now_ns();
    for (int j = 0; j < run->n && run->o->sink == PB_SINK_QMETRIC; j++) {
        Probe *p = &run->p[j];
        const GstClockTime l = element_latency(p->q);
        if (p->n_lat < PB_LAT_CHANGES && (!p->n_lat || p->lat_val[p->n_lat - 1] != l)) {
            p->lat_at[p->n_lat] = now;
            p->lat_val[p->n_lat++] = l;
        }
    }
}

/* The smallest latency in effect between times a and b (monotonic ns):
 * a frame due at a was given up once the clock passed a + that. */
static GstClockTime latency_between(const Probe *p, gint64 a, gint64 b)
{
    GstClockTime l = GST_CLOCK_TIME_NONE;
    for (int i = 0; i < p->n_lat; i++) {
        const bool in_effect_at_a = p->lat_at[i] <= a && (i + 1 == p->n_lat || p->lat_at[i + 1] > a);
        if ((in_effect_at_a || (p->lat_at[i] > a && p->lat_at[i] <= b)) &&
            GST_CLOCK_TIME_IS_VALID(p->lat_val[i]) && (!GST_CLOCK_TIME_IS_VALID(l) || p->lat_val[i] < l))
            l = p->lat_val[i];
    }
    return GST_CLOCK_TIME_IS_VALID(l) ? l : p->latency;
}

/* Running time (and PTS) of frame k of probe p. */
static GstClockTime frame_time(const Run *run, const Probe *p, int k)
{
    return run->start + (GstClockTime)k * run->period + p->phase;
}

/* Frame index of a running time of probe p, or -1 when outside the run. */
static int frame_of(const Run *run, const Probe *p, GstClockTime t)
{
    if (!GST_CLOCK_TIME_IS_VALID(t) || t + run->period / 2 < run->start + p->phase)
        return -1;
    const guint64 k = (t + run->period / 2 - run->start - p->phase) / run->period;
    return k < (guint64)run->frames ? (int)k : -1;
}

/* ---- pacing ---- */

typedef struct Feeder {
    Run *run;
    int id, count;
    GThread *thread;
    guint64 late;
    gint64 late_max;
} Feeder;

static void stamp(GstBuffer *b, GstClockTime pts, GstClockTime dur)
{
    GST_BUFFER_PTS(b) = pts;
    GST_BUFFER_DTS(b) = pts;    /* no reordering: decode order is display order */
    GST_BUFFER_DURATION(b) = dur;
}

/* Push every frame of probes id, id + count, ... at its running time: the
 * pipeline clock reaches base time + PTS, the buffer enters appsrc, as a
 * capture card's would.  Phases spread the probes over the period. */
static gpointer feed(gpointer data)
{
    Feeder *f = data;
    Run *run = f->run;
    const PbFrames *fr = run->fr;
    for (int k = 0; k < run->frames && !g_atomic_int_get(&run->stop); k++) {
        for (int j = f->id; j < run->n; j += f->count) {
            Probe *p = &run->p[j];
            const GstClockTime pts = frame_time(run, p, k);
            const gint64 due = run->t0 + (gint64)pts;
            sleep_until(due);
            const gint64 late = pb_now_ns() - due;
            if (late > (gint64)run->period / 4)
                f->late++;
            f->late_max = MAX(f->late_max, late);
            for (int i = 0; i < 2; i++) {
                const PbStream *bs = &fr->bs[i];
                GstBuffer *b = pb_buffer_share(run->o->decode[i] ? bs->au[k % bs->n_au]
                                                                 : fr->pic[i][k % fr->n]);
                stamp(b, pts, run->period);
                p->push[i][k] = pb_now_ns();
                gst_app_src_push_buffer(GST_APP_SRC(p->src[i]), b);
            }
        }
    }
    g_atomic_int_add(&run->feeders_left, -1);
    return NULL;
}

/* ---- stamps at the element ---- */

static GstPadProbeReturn on_arrival(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    PadTag *t = data;
    (void)pad;
    GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
    const int k = frame_of(t->run, t->p, GST_BUFFER_PTS(b));
    if (k >= 0 && !t->p->arr[t->side][k])
        t->p->arr[t->side][k] = pb_now_ns();
    return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn on_dequeue(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    PadTag *t = data;
    (void)pad;
    const int k = frame_of(t->run, t->p, GST_BUFFER_PTS(GST_PAD_PROBE_INFO_BUFFER(info)));
    if (k >= 0 && !t->p->deq[t->side][k])
        t->p->deq[t->side][k] = pb_now_ns();
    return GST_PAD_PROBE_OK;
}

/* Called in the posting thread (the element's src thread): the stamp is the
 * moment the score exists, not when a main loop gets round to it. */
static GstBusSyncReply on_message(GstBus *bus, GstMessage *m, gpointer data)
{
    Run *run = data;
    (void)bus;
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS)
        g_atomic_int_set(&run->eos, 1);
    if (GST_MESSAGE_TYPE(m) != GST_MESSAGE_ELEMENT)
        return GST_BUS_PASS;
    const GstStructure *s = gst_message_get_structure(m);
    Probe *p = g_object_get_data(G_OBJECT(GST_MESSAGE_SRC(m)), "pb-probe");
    if (!p || !s)
        return GST_BUS_PASS;
    if (gst_structure_has_name(s, "qmetric")) {
        const gint64 now = pb_now_ns();
        guint64 rt = GST_CLOCK_TIME_NONE;
        gst_structure_get_uint64(s, "running-time", &rt);
        const int k = frame_of(run, p, rt);
        if (k >= 0 && !p->msg[k]) {
            p->msg[k] = now;
            /* vmaf, else the first score: the scores follow index,
             * timestamp, stream-time, running-time and duration */
            const char *name = gst_structure_has_field(s, "vmaf") ? "vmaf" :
                gst_structure_n_fields(s) > 5 ? gst_structure_nth_field_name(s, 5) : NULL;
            double v = NAN;
            if (name && gst_structure_get_double(s, name, &v) && p == &run->p[0] &&
                !run->feature[0]) {
                g_mutex_lock(&run->lock);
                g_strlcpy(run->feature, name, sizeof(run->feature));
                g_mutex_unlock(&run->lock);
            }
            p->score[k] = v;
            for (int i = 0; i < EL_N; i++) {
                guint64 us = 0;
                if (gst_structure_get_uint64(s, el_fields[i], &us))
                    p->el[i][k] = (gint64)us * 1000;
            }
        }
        p->n_msg++;
        return GST_BUS_DROP;
    }
    if (gst_structure_has_name(s, "qmetric-summary")) {
        gst_structure_get_uint64(s, "frames", &p->sum_frames);
        gst_structure_get_uint64(s, "unmatched", &p->sum_unmatched);
        gst_structure_get_uint64(s, "cuda-in-place", &p->sum_in_place);
        gst_structure_get_uint64(s, "cuda-copied", &p->sum_copied);
        gst_structure_get_uint64(s, "skipped", &p->sum_skipped);
        g_mutex_lock(&run->lock);
        run->summaries++;
        g_cond_broadcast(&run->cond);
        g_mutex_unlock(&run->lock);
        return GST_BUS_DROP;
    }
    return GST_BUS_PASS;
}

/* ---- building ---- */

static GstElement *make(GstElement *pipe, const char *factory, char *why, size_t len)
{
    GstElement *e = gst_element_factory_make(factory, NULL);
    if (!e)
        snprintf(why, len, "no element %s", factory);
    else
        gst_bin_add(GST_BIN(pipe), e);
    return e;
}

static GstElement *make_appsrc(GstElement *pipe, GstCaps *caps, char *why, size_t len)
{
    GstElement *s = make(pipe, "appsrc", why, len);
    if (s)
        /* live, our timestamps; an unbounded queue that never blocks the
         * pacing thread: a probe that falls behind shows in its latency */
        g_object_set(s, "caps", caps, "is-live", TRUE, "format", GST_FORMAT_TIME,
                     "do-timestamp", FALSE, "block", FALSE, "max-bytes", (guint64)0,
                     "min-latency", (gint64)0, NULL);
    return s;
}

/* appsrc ! parser ! decoder ! capsfilter for side i: the decoder must give
 * the pictures' format and size, in CUDA memory with the CUDA backend (only
 * those: its colorimetry is the stream's, and a conversion is not asked
 * for).  Returns the capsfilter, or NULL and why[]. */
static GstElement *decode_chain(Run *run, GstElement *pipe, GstElement *src, char *why,
                                size_t len)
{
    const PbOpts *o = run->o;
    const GstVideoInfo *info = &run->fr->info;
    GError *e = NULL;
    GstElement *parse = make(pipe, pb_codec_parser(o->codec), why, len);
    GstElement *dec = gst_parse_bin_from_description(o->decoder, TRUE, &e);
    GstElement *cf = make(pipe, "capsfilter", why, len);
    if (!parse || !dec || !cf) {
        if (!dec)
            snprintf(why, len, "decoder '%s': %s", o->decoder, e ? e->message : "?");
        g_clear_error(&e);
        return NULL;
    }
    g_clear_error(&e);
    gst_bin_add(GST_BIN(pipe), dec);
    GstCaps *want = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING,
                                        GST_VIDEO_INFO_NAME(info), "width", G_TYPE_INT,
                                        GST_VIDEO_INFO_WIDTH(info), "height", G_TYPE_INT,
                                        GST_VIDEO_INFO_HEIGHT(info), NULL);
    if (o->cuda)
        gst_caps_set_features(want, 0, gst_caps_features_new(pb_cuda_feature, NULL));
    g_object_set(cf, "caps", want, NULL);
    if (!gst_element_link_many(src, parse, dec, cf, NULL)) {
        gchar *c = gst_caps_to_string(want);
        snprintf(why, len, "cannot link appsrc ! %s ! %s ! %s", pb_codec_parser(o->codec),
                 o->decoder, c);
        g_free(c);
        cf = NULL;
    }
    gst_caps_unref(want);
    return cf;
}

static bool build_probe(Run *run, GstElement *pipe, Probe *p, char *why, size_t len)
{
    const PbOpts *o = run->o;
    GstCaps *caps = gst_video_info_to_caps(&run->fr->info);
    GstElement *tail[2];
    if (o->cuda)
        gst_caps_set_features(caps, 0, gst_caps_features_new(pb_cuda_feature, NULL));
    for (int i = 0; i < 2; i++) {
        p->src[i] = make_appsrc(pipe, o->decode[i] ? run->fr->bs[i].caps : caps, why, len);
        if (!p->src[i]) {
            gst_caps_unref(caps);
            return false;
        }
        tail[i] = o->decode[i] ? decode_chain(run, pipe, p->src[i], why, len) : p->src[i];
        if (!tail[i]) {
            gst_caps_unref(caps);
            return false;
        }
        /* when appsrc's streaming thread sends frame k on (a decoder busy
         * with earlier frames, or blocked downstream, delays that) */
        GstPad *pad = gst_element_get_static_pad(p->src[i], "src");
        p->deq_tag[i] = (PadTag){ run, p, i };
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, on_dequeue, &p->deq_tag[i], NULL);
        gst_object_unref(pad);
    }
    gst_caps_unref(caps);

    GstPad *in[2] = { NULL, NULL };
    bool ok = true;
    if (o->sink == PB_SINK_FAKESINK) {
        for (int i = 0; i < 2 && ok; i++) {
            p->sink[i] = make(pipe, "fakesink", why, len);
            if (!p->sink[i])
                return false;
            g_object_set(p->sink[i], "sync", FALSE, "async", FALSE, NULL);
            ok = gst_element_link(tail[i], p->sink[i]);
            if (!ok)
                snprintf(why, len, "cannot link to fakesink");
            else
                in[i] = gst_element_get_static_pad(p->sink[i], "sink");
        }
    } else {
        p->q = make(pipe, "qmetric", why, len);
        GstElement *sink = make(pipe, "fakesink", why, len);
        if (!p->q || !sink)
            return false;
        /* latency: how long a frame waits for its partner past its running
         * time (GstAggregator's property); the sources declare none */
        g_object_set(p->q, "metrics", o->metrics, "threads", (guint)o->threads,
                     "latency", (guint64)o->pair_latency, NULL);
        gst_util_set_object_arg(G_OBJECT(p->q), "backend", o->cuda ? "cuda" : "cpu");
        g_object_set_data(G_OBJECT(p->q), "pb-probe", p);
        g_object_set(sink, "sync", FALSE, "async", FALSE, NULL);
        if (!(gst_element_link_pads(tail[0], "src", p->q, "ref_sink") &&
              gst_element_link_pads(tail[1], "src", p->q, "dist_sink") &&
              gst_element_link(p->q, sink))) {
            snprintf(why, len, "cannot link the probe to qmetric (does this qmetric accept "
                     "%s %s?)", o->cuda ? "CUDA memory," : "", GST_VIDEO_INFO_NAME(&run->fr->info));
            ok = false;
        } else {
            in[0] = gst_element_get_static_pad(p->q, "ref_sink");
            in[1] = gst_element_get_static_pad(p->q, "dist_sink");
        }
    }
    for (int i = 0; i < 2; i++) {
        if (!in[i])
            continue;
        p->tag[i] = (PadTag){ run, p, i };
        gst_pad_add_probe(in[i], GST_PAD_PROBE_TYPE_BUFFER, on_arrival, &p->tag[i], NULL);
        gst_object_unref(in[i]);
    }
    return ok;
}

/* ---- figures ---- */

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest-rank percentiles of n values in ns, as ms. */
static void percentiles(double *v, guint64 n, PbLat *out)
{
    memset(out, 0, sizeof(*out));
    out->n = n;
    if (!n)
        return;
    qsort(v, n, sizeof(double), cmp_double);
    out->p50 = v[(guint64)ceil(0.50 * n) - 1] / 1e6;
    out->p99 = v[(guint64)ceil(0.99 * n) - 1] / 1e6;
    out->max = v[n - 1] / 1e6;
}

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec +
           u.ru_stime.tv_usec * 1e-6;
}

/* The min latency of an answered latency query when live, else
 * GST_CLOCK_TIME_NONE (takes the query). */
static GstClockTime live_min(GstQuery *q, gboolean answered)
{
    GstClockTime min = GST_CLOCK_TIME_NONE;
    gboolean live = FALSE;
    if (answered)
        gst_query_parse_latency(q, &live, &min, NULL);
    gst_query_unref(q);
    return live ? min : GST_CLOCK_TIME_NONE;
}

/* A live element's latency (min), or GST_CLOCK_TIME_NONE. */
static GstClockTime element_latency(GstElement *e)
{
    GstQuery *q = gst_query_new_latency();
    return live_min(q, gst_element_query(e, q));
}

/* The live latency upstream of a sink (the decoders' own), or
 * GST_CLOCK_TIME_NONE. */
static GstClockTime upstream_latency(GstElement *sink)
{
    GstPad *pad = gst_element_get_static_pad(sink, "sink");
    GstQuery *q = gst_query_new_latency();
    const GstClockTime l = live_min(q, gst_pad_peer_query(pad, q));
    gst_object_unref(pad);
    return l;
}

/* Why pair k of probe p has no score, from what reached the element's
 * pads (on_arrival's stamps). */
static void classify_loss(Run *run, const Probe *p, int k, PbResult *r)
{
    const gint64 ref = p->arr[0][k], dis = p->arr[1][k];
    /* the element gives up on a partner once the clock passes the frame's
     * running time plus its latency: compare each arrival with that */
    const gint64 due = run->t0 + (gint64)frame_time(run, p, k);
    const gint64 late = MAX(ref - due, dis - due);
    const GstClockTime lat = latency_between(p, due, due + late);
    if (!ref)
        r->lost_no_ref++;
    else if (!dis)
        r->lost_no_dist++;
    else if (GST_CLOCK_TIME_IS_VALID(lat) && late > (gint64)lat) {
        r->lost_late++;
        r->lost_lag_max_ms = MAX(r->lost_lag_max_ms, late / 1e6);
    } else {
        if (r->n_in_time < (int)G_N_ELEMENTS(r->in_time)) {
            typeof(r->in_time[0]) *x = &r->in_time[r->n_in_time++];
            x->probe = (int)(p - run->p);
            x->frame = k;
            x->ref_ms = (ref - due) / 1e6;
            x->dist_ms = (dis - due) / 1e6;
            x->latency_ms = GST_CLOCK_TIME_IS_VALID(lat) ? lat / 1e6 : -1;
            x->prev = k > 0 && p->msg[k - 1];
            x->next = k + 1 < run->frames && p->msg[k + 1];
        }
        r->lost_in_time++;
    }
    if (k < run->o->fps)
        r->lost_first_s++;
}

/* Where pair k of probe p waited, once its score came later than the
 * stall threshold after it could first be computed (frame k + lookahead's
 * later buffer, frame j, arrived at ready): the element's stamps of frame j
 * (taken, mapped, submitted) and of frame k (scores handed out), and the
 * message.  A segment the stamps do not give stays -1. */
static void ready_stall(Run *run, Probe *p, int k, int j, gint64 ready, PbResult *r)
{
    const gint64 due = run->t0 + (gint64)frame_time(run, p, k);
    const gint64 t[] = { ready, p->el[EL_TAKEN][j], p->el[EL_MAPPED][j],
                         p->el[EL_SUBMITTED][j], p->el[EL_SCORED][k], p->msg[k] };
    PbStall s = { .probe = (int)(p - run->p), .frame = k, .side = -1,
                  .total_ms = (p->msg[k] - ready) / 1e6 };
    for (int i = 0; i < PB_N_SEGMENTS; i++)
        s.seg_ms[i] = t[i] && t[i + 1] ? MAX(0, t[i + 1] - t[i]) / 1e6 : -1;
    for (int i = 0; i < 2; i++)
        s.late_ms[i] = p->arr[i][k] ? (p->arr[i][k] - due) / 1e6 : -1;
    s.queued_ms = s.decode_ms = -1;
    pb_stall_ready(&r->stalls, &s);
}

/* Frame k of side i of probe p took longer than the stall threshold from
 * its push to the consumer's pad. */
static void arrival_stall(Run *run, Probe *p, int k, int i, PbResult *r)
{
    const gint64 due = run->t0 + (gint64)frame_time(run, p, k);
    PbStall s = { .probe = (int)(p - run->p), .frame = k, .side = i,
                  .decoded = run->o->decode[i],
                  .total_ms = (p->arr[i][k] - p->push[i][k]) / 1e6,
                  .queued_ms = p->deq[i][k] ? (p->deq[i][k] - p->push[i][k]) / 1e6 : -1,
                  .decode_ms = p->deq[i][k] ? (p->arr[i][k] - p->deq[i][k]) / 1e6 : -1,
                  .cause = PB_WAIT_UNKNOWN };
    for (int x = 0; x < 2; x++)
        s.late_ms[x] = p->arr[x][k] ? (p->arr[x][k] - due) / 1e6 : -1;
    for (int x = 0; x < PB_N_SEGMENTS; x++)
        s.seg_ms[x] = -1;
    pb_stall_arrival(&r->stalls, &s);
}

/* Whether pair k of probe p was delivered by its deadline (see PbResult). */
static bool kept(const Run *run, const Probe *p, int k)
{
    const gint64 due = run->t0 + (gint64)frame_time(run, p, k);
    if (run->o->sink == PB_SINK_QMETRIC)
        return p->msg[k] && GST_CLOCK_TIME_IS_VALID(p->latency) &&
               p->msg[k] <= due + (gint64)p->latency;
    const bool any = run->o->decode[0] || run->o->decode[1];
    for (int i = 0; i < 2; i++) {
        if (any && !run->o->decode[i])
            continue;
        if (!p->arr[i][k] || !GST_CLOCK_TIME_IS_VALID(p->side_latency[i]) ||
            p->arr[i][k] > due + (gint64)p->side_latency[i])
            return false;
    }
    return true;
}

/* The window second by second (r->secs). */
static void per_second(Run *run, int warm, PbResult *r)
{
    const int fps = MAX(1, (int)run->o->fps), end = run->window_end;
    r->n_secs = end > warm ? (end - warm + fps - 1) / fps : 0;
    r->secs = g_new0(struct PbSecond, MAX(1, r->n_secs));
    double *lat = g_new(double, (gsize)run->n * fps);
    for (int b = 0; b < r->n_secs; b++) {
        struct PbSecond *s = &r->secs[b];
        guint64 nl = 0;
        for (int j = 0; j < run->n; j++) {
            Probe *p = &run->p[j];
            for (int k = warm + b * fps; k < MIN(end, warm + (b + 1) * fps); k++) {
                s->pairs++;
                s->kept += kept(run, p, k);
                if (!p->msg[k])
                    continue;
                s->scored++;
                if (p->arr[0][k] && p->arr[1][k])
                    lat[nl++] = (double)(p->msg[k] - MAX(p->arr[0][k], p->arr[1][k]));
            }
        }
        percentiles(lat, nl, &s->lat);
    }
    g_free(lat);
}

static void figures(Run *run, int warm, PbResult *r)
{
    const int D = run->o->lookahead;
    const bool scoring = run->o->sink == PB_SINK_QMETRIC;
    const gint64 stall = (gint64)(run->o->stall_ms * 1e6);
    const guint64 cap = (guint64)run->n * run->frames;
    double *lat = g_new(double, cap), *ready = g_new(double, cap), *e2e = g_new(double, cap);
    double *head = g_new(double, cap), *tail = g_new(double, cap), *lag = g_new(double, cap);
    double *dec = g_new(double, 2 * cap);
    guint64 nlag = 0, nl = 0, nr = 0, ne = 0, nscore = 0, nh = 0, nt = 0, nd = 0;
    /* the first and the last second of the window: a growing latency is a
     * backlog, a probe that does not keep pace */
    const int end = run->window_end, sec = MAX(1, MIN(run->o->fps, (end - warm) / 2));
    gint64 first_push = G_MAXINT64, last_msg = 0;
    double score_sum = 0;
    for (int j = 0; j < run->n; j++) {
        Probe *p = &run->p[j];
        const GstClockTime dl[3] = { scoring ? p->latency : GST_CLOCK_TIME_NONE,
                                     p->side_latency[0], p->side_latency[1] };
        for (int i = 0; i < 3; i++)
            if (GST_CLOCK_TIME_IS_VALID(dl[i]) && (i == 0 || !scoring))
                r->deadline_ms = MAX(r->deadline_ms, dl[i] / 1e6);
        r->scored += p->n_msg;
        r->summary_frames += p->sum_frames;
        r->unmatched += p->sum_unmatched;
        r->skipped += p->sum_skipped;
        r->cuda_in_place += p->sum_in_place;
        r->cuda_copied += p->sum_copied;
        for (int k = 0; k < run->frames; k++) {
            if (p->push[0][k])
                first_push = MIN(first_push, p->push[0][k]);
            if (p->msg[k])
                last_msg = MAX(last_msg, p->msg[k]);
            for (int i = 0; !scoring && i < 2; i++)
                last_msg = MAX(last_msg, p->arr[i][k]);
            if (p->arr[0][k] && p->arr[1][k])
                lag[nlag++] = (double)MAX(0, p->arr[1][k] - p->arr[0][k]);
            if (scoring && !p->msg[k])
                classify_loss(run, p, k, r);
        }
        /* the window: after the warm-up, before the tail */
        for (int k = warm; k < run->window_end; k++) {
            r->window_pairs++;
            r->window_kept += kept(run, p, k);
            for (int i = 0; i < 2; i++) {
                if (!p->arr[i][k] || !p->push[i][k])
                    continue;
                if (run->o->decode[i])
                    dec[nd++] = (double)(p->arr[i][k] - p->push[i][k]);
                if (p->arr[i][k] - p->push[i][k] > stall)
                    arrival_stall(run, p, k, i, r);
            }
            const gint64 m = p->msg[k];
            if (!m)
                continue;
            if (!isnan(p->score[k])) {
                score_sum += p->score[k];
                nscore++;
                /* VMAF's motion reads the neighbouring pairs: where one
                 * of them was unmatched in either run, the engine compared
                 * other frames and the scores may differ legitimately */
                const double *s1 = run->o->single;
                const bool neighbours = k >= 1 && k + 1 < run->frames &&
                    k + 1 < run->o->n_single && !isnan(p->score[k - 1]) &&
                    !isnan(p->score[k + 1]) && s1 && !isnan(s1[k - 1]) &&
                    !isnan(s1[k + 1]);
                if (s1 && k + D < run->o->n_single && !isnan(s1[k]) && neighbours) {
                    r->score_maxdiff = MAX(r->score_maxdiff,
                                           fabs(p->score[k] - run->o->single[k]));
                    r->score_compared++;
                }
            }
            if (p->push[0][k] && p->push[1][k])
                e2e[ne++] = (double)(m - MAX(p->push[0][k], p->push[1][k]));
            if (!p->arr[0][k] || !p->arr[1][k])
                continue;
            lat[nl++] = (double)(m - MAX(p->arr[0][k], p->arr[1][k]));
            if (k < warm + sec)
                head[nh++] = lat[nl - 1];
            else if (k >= end - sec)
                tail[nt++] = lat[nl - 1];
            gint64 last = 0;
            int lj = k;
            bool all = true;
            for (int i = k; i <= k + D; i++) {
                all = all && p->arr[0][i] && p->arr[1][i];
                if (MAX(p->arr[0][i], p->arr[1][i]) > last) {
                    last = MAX(p->arr[0][i], p->arr[1][i]);
                    lj = i;
                }
            }
            if (!all)
                continue;
            if (m < last) {
                r->early++;     /* the look-ahead is smaller than --lookahead */
            } else {
                ready[nr++] = (double)(m - last);
                if (m - last > stall)
                    ready_stall(run, p, k, lj, last, r);
            }
        }
    }
    percentiles(lat, nl, &r->lat);
    percentiles(ready, nr, &r->ready);
    percentiles(e2e, ne, &r->e2e);
    percentiles(lag, nlag, &r->lag);
    percentiles(dec, nd, &r->decode);
    g_free(lag);
    g_free(dec);
    PbLat h, t;
    percentiles(head, nh, &h);
    percentiles(tail, nt, &t);
    r->lat_head_ms = h.p50;
    r->lat_tail_ms = t.p50;
    if (scoring)
        per_second(run, warm, r);
    g_free(head);
    g_free(tail);
    g_free(lat);
    g_free(ready);
    g_free(e2e);
    r->pushed = cap;
    r->scored_ratio = cap ? (double)r->scored / cap : 0;
    r->kept_ratio = r->window_pairs ? (double)r->window_kept / r->window_pairs : 0;
    r->score_mean = nscore ? score_sum / nscore : NAN;
    r->stream_s = (double)run->frames * run->period / 1e9;
    r->wall_s = last_msg > first_push ? (last_msg - first_push) / 1e9 : 0;
    g_strlcpy(r->feature, run->feature, sizeof(r->feature));
    r->n_scores = run->frames;
    r->scores = g_new(double, run->frames);
    memcpy(r->scores, run->p[0].score, sizeof(double) * run->frames);
}

/* ---- the run ---- */

/* Wait up to `secs` for cond(run) to hold, watching the bus for errors;
 * false and r->why on an error. */
static bool wait_for(Run *run, GstBus *bus, double secs, bool (*cond)(Run *), PbResult *r)
{
    const gint64 end = pb_now_ns() + (gint64)(secs * 1e9);
    while (!cond(run) && pb_now_ns() < end) {
        GstMessage *m = gst_bus_timed_pop_filtered(bus, 50 * GST_MSECOND,
            GST_MESSAGE_ERROR | GST_MESSAGE_WARNING | GST_MESSAGE_LATENCY);
        if (!m)
            continue;
        if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_LATENCY) {
            /* qmetric announces its look-ahead once it knows the rate */
            gst_bin_recalculate_latency(GST_BIN(run->pipe));
            if (run->t0)
                note_latencies(run);
        } else if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING) {
            r->warnings++;
        } else {
            GError *e = NULL;
            gchar *dbg = NULL;
            gst_message_parse_error(m, &e, &dbg);
            snprintf(r->why, sizeof(r->why), "%s: %s (%s)", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)),
                     e ? e->message : "error", dbg ? dbg : "");
            g_clear_error(&e);
            g_free(dbg);
        }
        gst_message_unref(m);
        if (r->why[0])
            return false;
    }
    return true;
}

static bool feeders_done(Run *run)
{
    return g_atomic_int_get(&run->feeders_left) == 0;
}

static bool all_arrived(Run *run)
{
    for (int j = 0; j < run->n; j++)
        if (!run->p[j].arr[1][run->frames - 1] || !run->p[j].arr[0][run->frames - 1])
            return false;
    return true;
}

static bool all_summarised(Run *run)
{
    g_mutex_lock(&run->lock);
    const bool done = run->summaries >= run->n;
    g_mutex_unlock(&run->lock);
    return done;
}

static bool pipeline_eos(Run *run)
{
    return g_atomic_int_get(&run->eos) != 0;
}

static bool never(Run *run)
{
    (void)run;
    return false;
}

bool pb_run(const PbOpts *o, PbFrames *fr, GstObject *cuda_ctx, int n, PbResult *r)
{
    memset(r, 0, sizeof(*r));
    r->probes = n;
    r->sink = o->sink;
    pb_stalls_init(&r->stalls, o->stall_ms, o->stall_keep);
    r->ncpu = (int)g_get_num_processors();
    Run run = { .o = o, .fr = fr, .n = n };
    run.period = gst_util_uint64_scale_int(GST_SECOND, 1, o->fps);
    /* frames are pushed past the window for a tail of PB_TAIL_FRAMES plus
     * the look-ahead: a live input does not stop, and what the window's
     * last frames wait for would otherwise come only at EOS (their
     * look-ahead; a decoder's held picture: GStreamer 1.24's nvh264dec
     * hands a picture over when the next one comes) */
    run.window_end = (int)ceil((o->warmup + o->duration) * o->fps);
    run.frames = run.window_end + PB_TAIL_FRAMES + o->lookahead;
    const int warm = (int)ceil(o->warmup * o->fps);
    g_mutex_init(&run.lock);
    g_cond_init(&run.cond);
    run.p = g_new0(Probe, n);
    for (int j = 0; j < n; j++) {
        Probe *p = &run.p[j];
        for (int i = 0; i < 2; i++) {
            p->push[i] = g_new0(gint64, run.frames);
            p->arr[i] = g_new0(gint64, run.frames);
            p->deq[i] = g_new0(gint64, run.frames);
        }
        for (int i = 0; i < EL_N; i++)
            p->el[i] = g_new0(gint64, run.frames);
        p->msg = g_new0(gint64, run.frames);
        p->score = g_new(double, run.frames);
        for (int k = 0; k < run.frames; k++)
            p->score[k] = NAN;
        p->phase = o->aligned ? 0 : gst_util_uint64_scale_int(run.period, j, n);
    }

    GstElement *pipe = gst_pipeline_new("probes");
    /* the pipeline runs on CLOCK_MONOTONIC, the clock of every stamp */
    GstClock *clock = g_object_new(GST_TYPE_SYSTEM_CLOCK, "clock-type",
                                   GST_CLOCK_TYPE_MONOTONIC, NULL);
    gst_pipeline_use_clock(GST_PIPELINE(pipe), clock);
    run.pipe = pipe;
    bool ok = true;
    for (int j = 0; j < n && ok; j++) {
        Probe *p = &run.p[j];
        p->bin = gst_bin_new(NULL);
        gst_bin_add(GST_BIN(pipe), p->bin);
        ok = build_probe(&run, p->bin, p, r->why, sizeof(r->why));
    }
    for (int j = 0; j < n && ok && cuda_ctx && o->context_per_probe; j++) {
        /* a context a probe, as GStreamer makes one per pipeline */
        Probe *p = &run.p[j];
        if (!(p->ctx = pb_cuda_context_new(o->cuda_device))) {
            snprintf(r->why, sizeof(r->why), "cannot make CUDA context %d of %d", j + 1, n);
            ok = false;
            break;
        }
        GstContext *c = pb_cuda_context(p->ctx);
        gst_element_set_context(p->bin, c);
        gst_context_unref(c);
    }
    if (ok && cuda_ctx && !o->context_per_probe) {
        /* one CUDA context for every element: qmetric reads the pictures
         * (and nvh264dec's output) in place */
        GstContext *c = pb_cuda_context(cuda_ctx);
        gst_element_set_context(pipe, c);
        gst_context_unref(c);
    }
    GstBus *bus = gst_element_get_bus(pipe);
    gst_bus_set_sync_handler(bus, on_message, &run, NULL);

    /* a pacing thread per 6 probes, at least 4: with 4 for 96 sources, pushes
     * came late on the GPU machine (docs/benchmarks.md) */
    int nf = o->feeders > 0 ? MIN(o->feeders, n) : MIN(n, MAX(4, (n + 5) / 6));
    Feeder *fd = g_new0(Feeder, nf);
    double cpu0 = 0, cpu1 = 0;
    gint64 w0 = 0, w1 = 0;
    PbGpuSampler *gs = NULL;
    bool started = false;
    if (ok && gst_element_set_state(pipe, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        wait_for(&run, bus, 0.2, never, r);
        if (!r->why[0])
            snprintf(r->why, sizeof(r->why), "the pipeline did not start");
        ok = false;
    }
    if (ok) {
        gst_element_get_state(pipe, NULL, NULL, 10 * GST_SECOND);
        run.t0 = (gint64)gst_element_get_base_time(pipe);
        note_latencies(&run);
        /* frame 0 a little ahead of now, so that every probe starts on time */
        run.start = (GstClockTime)(pb_now_ns() - run.t0) + 200 * GST_MSECOND;
        g_atomic_int_set(&run.feeders_left, nf);
        for (int i = 0; i < nf; i++) {
            fd[i] = (Feeder){ .run = &run, .id = i, .count = nf };
            fd[i].thread = g_thread_new("pb-feed", feed, &fd[i]);
        }
        started = true;
        /* CPU and GPU use over the measured window, after the warm-up */
        const gint64 warm_at = run.t0 + (gint64)run.start + (gint64)warm * (gint64)run.period;
        ok = wait_for(&run, bus, (warm_at - pb_now_ns()) / 1e9, never, r);
        w0 = pb_now_ns();
        cpu0 = cpu_seconds();
        if (o->cuda)
            gs = pb_gpu_start(0, 100);
        if (ok)
            ok = wait_for(&run, bus, o->duration + o->timeout, feeders_done, r);
        w1 = pb_now_ns();
        cpu1 = cpu_seconds();
        pb_gpu_stop(gs, &r->gpu);
    }
    if (started) {
        g_atomic_int_set(&run.stop, 1);
        for (int i = 0; i < nf; i++) {
            g_thread_join(fd[i].thread);
            r->late_pushes += fd[i].late;
            r->push_late_max_ms = MAX(r->push_late_max_ms, fd[i].late_max / 1e6);
        }
    }
    for (int j = 0; j < n && started; j++) {
        Probe *p = &run.p[j];
        if (p->q) {
            p->latency = element_latency(p->q);
            continue;
        }
        /* the baseline's deadline: what qmetric would allow past the
         * decoders' own latency, its latency property (without the
         * look-ahead, which only scoring needs) */
        for (int i = 0; i < 2; i++) {
            const GstClockTime l = upstream_latency(p->sink[i]);
            p->side_latency[i] = GST_CLOCK_TIME_IS_VALID(l) ? l + o->pair_latency : l;
        }
    }
    if (ok) {
        /* a live comparison ends at the first pad's EOS: let the distorted
         * side's last frames (a decoder holds some) reach the element first */
        ok = wait_for(&run, bus, 2.0, all_arrived, r);
        for (int j = 0; j < n && ok; j++)
            for (int i = 0; i < 2; i++)
                gst_app_src_end_of_stream(GST_APP_SRC(run.p[j].src[i]));
        if (ok)
            ok = wait_for(&run, bus, o->timeout, o->sink == PB_SINK_QMETRIC ? all_summarised
                                                                           : pipeline_eos, r);
        if (ok && o->sink == PB_SINK_QMETRIC && !all_summarised(&run))
            snprintf(r->why, sizeof(r->why), "%d of %d probes ended within %g s of the last"
                     " push", run.summaries, n, o->timeout);
        if (ok && o->sink == PB_SINK_FAKESINK && !pipeline_eos(&run))
            snprintf(r->why, sizeof(r->why), "the decoders did not end within %g s of the "
                     "last push", o->timeout);
    }
    gst_element_set_state(pipe, GST_STATE_NULL);
    gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
    gst_object_unref(bus);
    r->summaries = run.summaries;
    if (started) {
        figures(&run, warm, r);
        if (w1 > w0) {
            r->cpu_cores = (cpu1 - cpu0) / ((w1 - w0) / 1e9);
            r->cpu_pct = 100.0 * r->cpu_cores / MAX(r->ncpu, 1);
        }
    }
    const double period_ms = run.period / 1e6;
    const bool paced = r->late_pushes <= r->pushed / 200;
    r->kept = !r->why[0] && started && r->window_pairs > 0 && r->kept_ratio >= 0.995 && paced;
    r->keeps_up = !r->why[0] && o->sink == PB_SINK_QMETRIC && r->summaries == n &&
                  r->scored_ratio >= 0.995 && r->lat.n > 0 &&
                  r->lat_tail_ms - r->lat_head_ms < period_ms && paced;
    r->realtime = r->keeps_up && r->ready.n > 0 && r->ready.p99 < o->budget_ms;
    gst_object_unref(pipe);
    gst_object_unref(clock);
    for (int j = 0; j < n; j++)
        if (run.p[j].ctx)
            gst_object_unref(run.p[j].ctx);
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < 2; i++) {
            g_free(run.p[j].push[i]);
            g_free(run.p[j].arr[i]);
            g_free(run.p[j].deq[i]);
        }
        for (int i = 0; i < EL_N; i++)
            g_free(run.p[j].el[i]);
        g_free(run.p[j].msg);
        g_free(run.p[j].score);
    }
    g_free(run.p);
    g_free(fd);
    g_mutex_clear(&run.lock);
    g_cond_clear(&run.cond);
    return !r->why[0];
}

void pb_result_clear(PbResult *r)
{
    pb_stalls_clear(&r->stalls);
    g_free(r->scores);
    r->scores = NULL;
    r->n_scores = 0;
    g_free(r->secs);
    r->secs = NULL;
    r->n_secs = 0;
}
