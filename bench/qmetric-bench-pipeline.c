/* qmetric-bench-pipeline: the qmetric element's throughput inside a real
 * pipeline, and its share of the pipeline's time.
 *
 *   qmetric-bench-pipeline [--variants system,cuda,decode-cuda,decode-system]
 *       [--sizes 1920x1080,...] [--bits 8,10] [--frames N] [--warmup N]
 *       [--distinct N] [--metrics SET,...] [--backends cpu,cuda,auto]
 *       [--threads N] [--repeats N] [--ref-file REF.mp4 --dist-file DIST.mp4]
 *       [--decoder DESC] [--timeout S] [--json FILE]
 *
 * Variants (each built in code, gst-launch equivalents):
 *   system:  appsrc ! qmetric.ref_sink  appsrc ! qmetric.dist_sink
 *            qmetric ! fakesink sync=false                (system memory)
 *   cuda:    appsrc ! cudaupload ! video/x-raw(memory:CUDAMemory) ! qmetric.*
 *   decode-cuda:   filesrc ! qtdemux ! h264parse ! DECODER
 *                  ! video/x-raw(memory:CUDAMemory) ! qmetric.*  (per pad)
 *   decode-system: the same with video/x-raw (the decoder downloads)
 * DECODER is --decoder (a gst-launch bin description, default nvh264dec).
 * The two appsrc push --frames buffers each, cycling --distinct pre-generated
 * synthetic frames (bench/qmbench.c: the reference and its distorted copy),
 * I420 or I420_10LE, timestamped at 30 frames/s (not live, do-timestamp off).
 * qmetric runs with post-messages=false, backend/metrics/threads as given.
 *
 * Each variant also runs a baseline: the same sources (and upload or
 * decoders), each into its own fakesink sync=false, without qmetric.
 *
 * Timing: a pad probe on each fakesink's sink pad stamps the buffers with
 * CLOCK_MONOTONIC.  Buffers 0 .. warmup-1 are not timed (element start-up,
 * CUDA context, engine and model set-up, caches); frames/s = (n - 1 - warmup)
 * / (t[n-1] - t[warmup]) with n the buffers that reached the sink.  With two
 * sinks (baseline) the interval runs from the later sink's buffer `warmup` to
 * the later sink's last buffer, n the smaller count: the pace of both streams
 * together.  Each figure is the median of --repeats runs, each in a freshly
 * built pipeline.
 *
 * qmetric's share of the pipeline time: with T = 1 / frames/s the time per
 * frame, share = 1 - T_baseline / T_qmetric = 1 - fps_qmetric / fps_baseline:
 * the fraction of each frame's time that the pipeline spends because qmetric
 * is in it.  0 means qmetric is not the bottleneck (its work overlaps the
 * sources'); near 1 means it sets the pace.  Medians go in; a small negative
 * value is noise.
 *
 * The program finds qmetric through the registry (GST_PLUGIN_PATH) and else
 * in this build's plugin directory.  A variant whose elements are missing
 * (cudaupload and nvh264dec exist only with nvcodec and a GPU) or whose files
 * were not given prints a skip line and the rest goes on.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gst/app/gstappsrc.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include "qmbench.h"
#include "qmbench-gst.h"

typedef struct Opts {
    int frames, warmup, distinct, repeats, threads;
    double timeout;
    const char *ref_file, *dist_file, *decoder;
} Opts;

/* ---- sources ---- */

typedef struct Frames {
    GstVideoInfo info;
    int n;
    GstBuffer **buf[2];        /* [0] reference, [1] distorted */
} Frames;

static int make_frames(Frames *fr, int w, int h, int bits, int n)
{
    memset(fr, 0, sizeof(*fr));
    if (!gst_video_info_set_format(&fr->info, bits > 8 ? GST_VIDEO_FORMAT_I420_10LE
                                   : GST_VIDEO_FORMAT_I420, (guint)w, (guint)h))
        return -1;
    GST_VIDEO_INFO_FPS_N(&fr->info) = 30;
    GST_VIDEO_INFO_FPS_D(&fr->info) = 1;
    fr->n = n;
    uint32_t rng = 12345;
    for (int k = 0; k < 2; k++)
        fr->buf[k] = g_new0(GstBuffer *, n);
    for (int f = 0; f < n; f++) {
        GstMapInfo m[2];
        uint8_t *pl[2][3];
        int pw[3], ph[3];
        ptrdiff_t stride[3];
        for (int k = 0; k < 2; k++) {
            fr->buf[k][f] = gst_buffer_new_allocate(NULL, GST_VIDEO_INFO_SIZE(&fr->info), NULL);
            if (!fr->buf[k][f] || !gst_buffer_map(fr->buf[k][f], &m[k], GST_MAP_WRITE))
                return -1;
            for (int p = 0; p < 3; p++)
                pl[k][p] = m[k].data + GST_VIDEO_INFO_PLANE_OFFSET(&fr->info, p);
        }
        for (int p = 0; p < 3; p++) {
            pw[p] = GST_VIDEO_INFO_COMP_WIDTH(&fr->info, p);
            ph[p] = GST_VIDEO_INFO_COMP_HEIGHT(&fr->info, p);
            stride[p] = GST_VIDEO_INFO_PLANE_STRIDE(&fr->info, p);
        }
        qb_synth_frame(w, bits, 3, pw, ph, pl[0], pl[1], stride, f, &rng);
        for (int k = 0; k < 2; k++)
            gst_buffer_unmap(fr->buf[k][f], &m[k]);
    }
    return 0;
}

static void free_frames(Frames *fr)
{
    for (int k = 0; k < 2; k++) {
        for (int f = 0; f < fr->n && fr->buf[k]; f++)
            if (fr->buf[k][f])
                gst_buffer_unref(fr->buf[k][f]);
        g_free(fr->buf[k]);
    }
    memset(fr, 0, sizeof(*fr));
}

typedef struct Feed {
    GstBuffer **buf;
    int n_distinct, pushed, total;
    GstClockTime dur;
} Feed;

/* Called in appsrc's streaming thread whenever its queue is empty: one
 * buffer per call, so nothing piles up ahead of the pipeline. */
static void need_data(GstAppSrc *src, guint length, gpointer user)
{
    Feed *fd = user;
    (void)length;
    if (fd->pushed >= fd->total) {
        gst_app_src_end_of_stream(src);
        return;
    }
    /* a new buffer header sharing the frame's memory: timestamps differ */
    GstBuffer *b = gst_buffer_copy(fd->buf[fd->pushed % fd->n_distinct]);
    GST_BUFFER_PTS(b) = (GstClockTime)fd->pushed * fd->dur;
    GST_BUFFER_DTS(b) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION(b) = fd->dur;
    GST_BUFFER_OFFSET(b) = (guint64)fd->pushed;
    fd->pushed++;
    gst_app_src_push_buffer(src, b);
}

/* ---- sinks ---- */

typedef struct Stamp {
    int warmup;
    guint64 n;
    double t_first, t_last;  /* buffer `warmup`, last buffer */
} Stamp;

static GstPadProbeReturn stamp_probe(GstPad *pad, GstPadProbeInfo *info, gpointer user)
{
    Stamp *s = user;
    (void)pad;
    (void)info;
    const double t = qb_now();
    if (s->n == (guint64)s->warmup)
        s->t_first = t;
    s->t_last = t;
    s->n++;
    return GST_PAD_PROBE_OK;
}

static GstElement *add_sink(GstElement *pipe, Stamp *st, int warmup)
{
    GstElement *sink = gst_element_factory_make("fakesink", NULL);
    g_object_set(sink, "sync", FALSE, NULL);
    gst_bin_add(GST_BIN(pipe), sink);
    memset(st, 0, sizeof(*st));
    st->warmup = warmup;
    GstPad *pad = gst_element_get_static_pad(sink, "sink");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, stamp_probe, st, NULL);
    gst_object_unref(pad);
    return sink;
}

/* ---- variants ---- */

enum { V_SYSTEM, V_CUDA, V_DECODE_CUDA, V_DECODE_SYSTEM, V_N };
static const char *const vname[V_N] = { "system", "cuda", "decode-cuda", "decode-system" };

static bool is_decode(int v)
{
    return v == V_DECODE_CUDA || v == V_DECODE_SYSTEM;
}

static bool have_factory(const char *name)
{
    GstElementFactory *f = gst_element_factory_find(name);
    if (f)
        gst_object_unref(f);
    return f != NULL;
}

/* Why variant v cannot run here, or NULL. */
static const char *missing(int v, const Opts *o, char *buf, size_t len)
{
    const char *need[4] = { "fakesink", NULL, NULL, NULL };
    if (v == V_SYSTEM || v == V_CUDA) {
        need[1] = "appsrc";
        if (v == V_CUDA)
            need[2] = "cudaupload";
    } else {
        if (!o->ref_file || !o->dist_file) {
            snprintf(buf, len, "needs --ref-file and --dist-file (H.264 in MP4)");
            return buf;
        }
        need[1] = "qtdemux";
        need[2] = "h264parse";
        GError *err = NULL;
        GstElement *dec = gst_parse_bin_from_description(o->decoder, TRUE, &err);
        if (!dec) {
            snprintf(buf, len, "decoder '%s' not available: %s", o->decoder,
                     err ? err->message : "?");
            g_clear_error(&err);
            return buf;
        }
        g_clear_error(&err);
        gst_object_unref(gst_object_ref_sink(dec));
        for (int k = 0; k < 2; k++) {
            const char *f = k ? o->dist_file : o->ref_file;
            if (!g_file_test(f, G_FILE_TEST_IS_REGULAR)) {
                snprintf(buf, len, "no file %s", f);
                return buf;
            }
        }
    }
    for (int i = 0; need[i]; i++)
        if (!have_factory(need[i])) {
            snprintf(buf, len, "no element %s%s", need[i],
                     !strcmp(need[i], "cudaupload")
                         ? " (nvcodec registers it only where a CUDA device works)" : "");
            return buf;
        }
    return NULL;
}

static void demux_pad_added(GstElement *demux, GstPad *pad, gpointer user)
{
    GstElement *parse = user;
    (void)demux;
    GstCaps *caps = gst_pad_get_current_caps(pad);
    if (!caps)
        caps = gst_pad_query_caps(pad, NULL);
    const bool video = caps && gst_caps_get_size(caps) > 0 &&
        g_str_has_prefix(gst_structure_get_name(gst_caps_get_structure(caps, 0)), "video/");
    if (caps)
        gst_caps_unref(caps);
    if (!video)
        return;
    GstPad *sink = gst_element_get_static_pad(parse, "sink");
    if (!gst_pad_is_linked(sink))
        gst_pad_link(pad, sink);
    gst_object_unref(sink);
}

/* One input branch (k = 0 reference, 1 distorted) added to pipe; returns its
 * last element (whose "src" pad feeds qmetric or a fakesink), or NULL. */
static GstElement *add_branch(GstElement *pipe, int v, int k, const Opts *o, Frames *fr,
                              Feed *fd, char *why, size_t whylen)
{
    GstElement *last;
    if (!is_decode(v)) {
        GstElement *src = gst_element_factory_make("appsrc", NULL);
        GstCaps *caps = gst_video_info_to_caps(&fr->info);
        g_object_set(src, "caps", caps, "format", GST_FORMAT_TIME, "is-live", FALSE,
                     "do-timestamp", FALSE, "block", FALSE, NULL);
        gst_caps_unref(caps);
        fd->buf = fr->buf[k];
        fd->n_distinct = fr->n;
        fd->pushed = 0;
        fd->total = o->frames;
        fd->dur = gst_util_uint64_scale_int(GST_SECOND, GST_VIDEO_INFO_FPS_D(&fr->info),
                                            GST_VIDEO_INFO_FPS_N(&fr->info));
        GstAppSrcCallbacks cb = { .need_data = need_data };
        gst_app_src_set_callbacks(GST_APP_SRC(src), &cb, fd, NULL);
        gst_bin_add(GST_BIN(pipe), src);
        last = src;
        if (v == V_CUDA) {
            GstElement *up = gst_element_factory_make("cudaupload", NULL);
            GstElement *cf = gst_element_factory_make("capsfilter", NULL);
            GstCaps *cc = gst_caps_from_string("video/x-raw(memory:CUDAMemory)");
            g_object_set(cf, "caps", cc, NULL);
            gst_caps_unref(cc);
            gst_bin_add_many(GST_BIN(pipe), up, cf, NULL);
            if (!gst_element_link_many(src, up, cf, NULL)) {
                snprintf(why, whylen, "cannot link appsrc ! cudaupload ! "
                         "video/x-raw(memory:CUDAMemory)");
                return NULL;
            }
            last = cf;
        }
        return last;
    }
    GstElement *src = gst_element_factory_make("filesrc", NULL);
    GstElement *demux = gst_element_factory_make("qtdemux", NULL);
    GstElement *parse = gst_element_factory_make("h264parse", NULL);
    GstElement *dec = gst_parse_bin_from_description(o->decoder, TRUE, NULL);
    GstElement *cf = gst_element_factory_make("capsfilter", NULL);
    if (!src || !demux || !parse || !dec || !cf) {
        snprintf(why, whylen, "cannot make filesrc, qtdemux, h264parse, %s", o->decoder);
        return NULL;
    }
    g_object_set(src, "location", k ? o->dist_file : o->ref_file, NULL);
    GstCaps *cc = gst_caps_from_string(v == V_DECODE_CUDA ? "video/x-raw(memory:CUDAMemory)"
                                       : "video/x-raw");
    g_object_set(cf, "caps", cc, NULL);
    gst_caps_unref(cc);
    gst_bin_add_many(GST_BIN(pipe), src, demux, parse, dec, cf, NULL);
    if (!gst_element_link(src, demux) || !gst_element_link_many(parse, dec, cf, NULL)) {
        snprintf(why, whylen, "cannot link h264parse ! %s ! %s", o->decoder,
                 v == V_DECODE_CUDA ? "video/x-raw(memory:CUDAMemory)" : "video/x-raw");
        return NULL;
    }
    g_signal_connect(demux, "pad-added", G_CALLBACK(demux_pad_added), parse);
    return cf;
}

typedef struct Run {
    double fps;          /* < 0: failed */
    guint64 frames;      /* buffers at the (slower) sink */
    guint64 scored;      /* qmetric-summary frames, or 0 */
    char why[512];
} Run;

/* Run a built pipeline to EOS; fill r from the stamps. */
static void run_pipeline(GstElement *pipe, Stamp *st, int nst, const Opts *o, Run *r)
{
    GstBus *bus = gst_element_get_bus(pipe);
    r->fps = -1;
    r->scored = 0;
    r->why[0] = 0;
    if (gst_element_set_state(pipe, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
        snprintf(r->why, sizeof(r->why), "cannot start the pipeline");
    const double deadline = qb_now() + o->timeout;
    bool eos = false;
    while (!r->why[0] && !eos) {
        const double left = deadline - qb_now();
        if (left <= 0) {
            snprintf(r->why, sizeof(r->why), "timeout after %g s", o->timeout);
            break;
        }
        GstMessage *m = gst_bus_timed_pop_filtered(bus, (GstClockTime)(left * GST_SECOND),
            GST_MESSAGE_EOS | GST_MESSAGE_ERROR | GST_MESSAGE_ELEMENT);
        if (!m)
            continue;
        switch (GST_MESSAGE_TYPE(m)) {
        case GST_MESSAGE_EOS:
            eos = true;
            break;
        case GST_MESSAGE_ERROR: {
            GError *e = NULL;
            gchar *dbg = NULL;
            gst_message_parse_error(m, &e, &dbg);
            snprintf(r->why, sizeof(r->why), "%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)),
                     e ? e->message : "error");
            g_clear_error(&e);
            g_free(dbg);
            break;
        }
        case GST_MESSAGE_ELEMENT: {
            const GstStructure *s = gst_message_get_structure(m);
            if (s && gst_structure_has_name(s, "qmetric-summary"))
                gst_structure_get_uint64(s, "frames", &r->scored);
            break;
        }
        default:
            break;
        }
        gst_message_unref(m);
    }
    gst_element_set_state(pipe, GST_STATE_NULL);
    gst_object_unref(bus);
    if (r->why[0])
        return;
    /* both streams' pace: the later sink's stamps, the smaller count */
    guint64 n = st[0].n;
    double t0 = st[0].t_first, t1 = st[0].t_last;
    for (int i = 1; i < nst; i++) {
        n = MIN(n, st[i].n);
        t0 = MAX(t0, st[i].t_first);
        t1 = MAX(t1, st[i].t_last);
    }
    r->frames = n;
    if (n < (guint64)o->warmup + 2 || !(t1 > t0)) {
        snprintf(r->why, sizeof(r->why), "only %" G_GUINT64_FORMAT " buffers reached the sink"
                 " (need more than --warmup %d + 1)", n, o->warmup);
        return;
    }
    r->fps = (double)(n - 1 - (guint64)o->warmup) / (t1 - t0);
}

/* One run of variant v; with_qmetric false: the baseline. */
static void run_once(int v, bool with_qmetric, const char *metrics, const char *backend,
                     const Opts *o, Frames *fr, Run *r)
{
    GstElement *pipe = gst_pipeline_new(NULL);
    Feed fd[2];
    Stamp st[2];
    GstElement *tail[2];
    int nst = 0;
    memset(r, 0, sizeof(*r));
    for (int k = 0; k < 2; k++)
        if (!(tail[k] = add_branch(pipe, v, k, o, fr, &fd[k], r->why, sizeof(r->why)))) {
            r->fps = -1;
            gst_object_unref(pipe);
            return;
        }
    bool ok = true;
    if (with_qmetric) {
        GstElement *q = gst_element_factory_make("qmetric", NULL);
        g_object_set(q, "metrics", metrics, "post-messages", FALSE, "threads",
                     (guint)o->threads, NULL);
        gst_util_set_object_arg(G_OBJECT(q), "backend", backend);
        gst_bin_add(GST_BIN(pipe), q);
        GstElement *sink = add_sink(pipe, &st[0], o->warmup);
        nst = 1;
        ok = gst_element_link_pads(tail[0], "src", q, "ref_sink") &&
             gst_element_link_pads(tail[1], "src", q, "dist_sink") &&
             gst_element_link(q, sink);
    } else {
        for (int k = 0; k < 2; k++) {
            GstElement *sink = add_sink(pipe, &st[k], o->warmup);
            ok = ok && gst_element_link(tail[k], sink);
        }
        nst = 2;
    }
    if (!ok) {
        snprintf(r->why, sizeof(r->why), "cannot link the pipeline");
        r->fps = -1;
    } else {
        run_pipeline(pipe, st, nst, o, r);
    }
    gst_object_unref(pipe);
}

/* ---- main ---- */

static void json_runs(FILE *f, const char *key, const double *v, int n)
{
    fprintf(f, ", \"%s\": [", key);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%.2f", i ? ", " : "", v[i]);
    fprintf(f, "]");
}

/* Median frames/s of o->repeats runs into *med, the runs into v[]; false
 * (and why) when one failed. */
static bool measure(int v, bool with_q, const char *metrics, const char *backend,
                    const Opts *o, Frames *fr, double *v_runs, double *med,
                    guint64 *frames, guint64 *scored, char *why, size_t whylen)
{
    double *tmp = g_new(double, o->repeats);
    for (int i = 0; i < o->repeats; i++) {
        Run r;
        run_once(v, with_q, metrics, backend, o, fr, &r);
        if (r.fps < 0) {
            snprintf(why, whylen, "%s", r.why);
            g_free(tmp);
            return false;
        }
        v_runs[i] = tmp[i] = r.fps;
        *frames = r.frames;
        *scored = r.scored;
        if (with_q && r.scored + 1 < r.frames) {
            /* every distorted frame should have been scored */
            snprintf(why, whylen, "qmetric scored %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                     " frames", r.scored, r.frames);
            g_free(tmp);
            return false;
        }
    }
    *med = qb_median(tmp, o->repeats);
    g_free(tmp);
    return true;
}

static void usage(void)
{
    fprintf(stderr,
        "usage: qmetric-bench-pipeline [--variants system,cuda,decode-cuda,decode-system]\n"
        "    [--sizes WxH,...] [--bits 8,10] [--frames N] [--warmup N] [--distinct N]\n"
        "    [--metrics SET,...] [--backends cpu,cuda,auto] [--threads N] [--repeats N]\n"
        "    [--ref-file REF.mp4 --dist-file DIST.mp4] [--decoder DESC] [--timeout S]\n"
        "    [--json FILE]\n"
        "  SET: a metric, 'default' (VMAF), 'all', 'combined' (" QB_COMBINED "),\n"
        "       or metrics joined by '+'; ',' separates runs\n"
        "  defaults: --variants system,cuda (+ decode-cuda,decode-system with files)\n"
        "  --sizes 1920x1080 --bits 8 --frames 600 --warmup 30 --distinct 8\n"
        "  --metrics psnr,default,combined --backends auto --threads 0 --repeats 3\n"
        "  --decoder nvh264dec --timeout 300.  See the comment at the top of\n"
        "  bench/qmetric-bench-pipeline.c.\n");
}

int main(int argc, char **argv)
{
    Opts o = { .frames = 600, .warmup = 30, .distinct = 8, .repeats = 3, .threads = 0,
               .timeout = 300, .decoder = "nvh264dec" };
    const char *variants = NULL, *sizes = "1920x1080", *bits = "8";
    const char *metrics = "psnr,default,combined", *backends = "auto", *json = NULL;
    gst_init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--variants") && v) variants = argv[++i];
        else if (!strcmp(a, "--sizes") && v) sizes = argv[++i];
        else if (!strcmp(a, "--bits") && v) bits = argv[++i];
        else if (!strcmp(a, "--frames") && v) o.frames = atoi(argv[++i]);
        else if (!strcmp(a, "--warmup") && v) o.warmup = atoi(argv[++i]);
        else if (!strcmp(a, "--distinct") && v) o.distinct = atoi(argv[++i]);
        else if (!strcmp(a, "--metrics") && v) metrics = argv[++i];
        else if (!strcmp(a, "--backends") && v) backends = argv[++i];
        else if (!strcmp(a, "--threads") && v) o.threads = atoi(argv[++i]);
        else if (!strcmp(a, "--repeats") && v) o.repeats = atoi(argv[++i]);
        else if (!strcmp(a, "--ref-file") && v) o.ref_file = argv[++i];
        else if (!strcmp(a, "--dist-file") && v) o.dist_file = argv[++i];
        else if (!strcmp(a, "--decoder") && v) o.decoder = argv[++i];
        else if (!strcmp(a, "--timeout") && v) o.timeout = atof(argv[++i]);
        else if (!strcmp(a, "--json") && v) json = argv[++i];
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage();
            return 0;
        } else {
            usage();
            return 2;
        }
    }
    if (o.warmup < 0 || o.frames < o.warmup + 2 || o.distinct < 1 || o.repeats < 1 ||
        o.threads < 0 || !(o.timeout > 0)) {
        fprintf(stderr, "need --frames >= --warmup + 2, --warmup >= 0, --distinct >= 1,"
                " --repeats >= 1, --threads >= 0, --timeout > 0\n");
        return 2;
    }
    if (!variants)
        variants = o.ref_file || o.dist_file ? "system,cuda,decode-cuda,decode-system"
                                             : "system,cuda";
    if (!qb_find_qmetric()) {
        fprintf(stderr, "no qmetric element: set GST_PLUGIN_PATH to the build's gst/qmetric\n");
        return 1;
    }

    int nv, ns, nb, nm, nbe;
    char **V = qb_split(variants, ",", &nv), **S = qb_split(sizes, ",", &ns),
         **B = qb_split(bits, ",", &nb), **M = qb_split(metrics, ",", &nm),
         **BE = qb_split(backends, ",", &nbe);
    int vid[16];
    for (int i = 0; i < nv && i < 16; i++) {
        vid[i] = -1;
        for (int k = 0; k < V_N; k++)
            if (!strcmp(V[i], vname[k]))
                vid[i] = k;
        if (vid[i] < 0) {
            fprintf(stderr, "--variants: unknown %s\n", V[i]);
            return 2;
        }
    }
    nv = MIN(nv, 16);
    for (int i = 0; i < nbe; i++)
        if (strcmp(BE[i], "cpu") && strcmp(BE[i], "cuda") && strcmp(BE[i], "auto")) {
            fprintf(stderr, "--backends: cpu, cuda or auto, not %s\n", BE[i]);
            return 2;
        }
    int mw = 10;
    for (int i = 0; i < nm; i++)
        mw = MAX(mw, (int)strlen(M[i]));

    FILE *jf = NULL;
    if (json && !(jf = fopen(json, "w"))) {
        fprintf(stderr, "%s: %s\n", json, g_strerror(errno));
        return 1;
    }
    if (jf) {
        fprintf(jf, "{\"frames\": %d, \"warmup\": %d, \"distinct\": %d, \"repeats\": %d, "
                "\"threads\": %d, \"decoder\": ", o.frames, o.warmup, o.distinct, o.repeats,
                o.threads);
        qb_json_str(jf, o.decoder);
        fprintf(jf, ", \"ref_file\": ");
        qb_json_str(jf, o.ref_file ? o.ref_file : "");
        fprintf(jf, ", \"dist_file\": ");
        qb_json_str(jf, o.dist_file ? o.dist_file : "");
        fprintf(jf, ", \"results\": [\n");
    }
    int first = 1;
    double *runs_q = g_new(double, o.repeats), *runs_b = g_new(double, o.repeats);
    printf("%-13s %-10s %-4s %-*s %-5s %10s %10s %7s\n", "variant", "size", "bits", mw,
           "metrics", "back", "frames/s", "baseline", "share");
    for (int vi = 0; vi < nv; vi++) {
        const int v = vid[vi];
        char why[512];
        if (missing(v, &o, why, sizeof(why))) {
            printf("%-13s skipped: %s\n", vname[v], why);
            fflush(stdout);
            if (jf) {
                fprintf(jf, "%s  {\"variant\": \"%s\", \"skipped\": ", first ? "" : ",\n",
                        vname[v]);
                qb_json_str(jf, why);
                fprintf(jf, "}");
                first = 0;
            }
            continue;
        }
        /* decode variants: the files fix size and depth */
        const int n_s = is_decode(v) ? 1 : ns, n_b = is_decode(v) ? 1 : nb;
        for (int si = 0; si < n_s; si++) {
            for (int bi = 0; bi < n_b; bi++) {
                Frames fr;
                memset(&fr, 0, sizeof(fr));
                const char *size_l = is_decode(v) ? "file" : S[si];
                const char *bits_l = is_decode(v) ? "-" : B[bi];
                if (!is_decode(v)) {
                    int w, h;
                    if (sscanf(S[si], "%dx%d", &w, &h) != 2 || w < 1 || h < 1 ||
                        make_frames(&fr, w, h, atoi(B[bi]), o.distinct)) {
                        fprintf(stderr, "cannot make %s %s-bit frames\n", S[si], B[bi]);
                        free_frames(&fr);
                        continue;
                    }
                }
                double base = -1;
                guint64 nframes = 0, scored = 0;
                char bwhy[512] = "";
                if (!measure(v, false, NULL, NULL, &o, &fr, runs_b, &base, &nframes, &scored,
                             bwhy, sizeof(bwhy)))
                    base = -1;
                if (base >= 0)
                    printf("%-13s %-10s %-4s %-*s %-5s %10s %10.1f %7s\n", vname[v], size_l,
                           bits_l, mw, "(baseline)", "-", "-", base, "-");
                else
                    printf("%-13s %-10s %-4s %-*s %-5s %10s %10s %7s  (%s; qmetric runs"
                           " skipped)\n", vname[v], size_l, bits_l, mw, "(baseline)", "-",
                           "-", "-", "-", bwhy);
                fflush(stdout);
                if (jf) {
                    fprintf(jf, "%s  {\"variant\": \"%s\", \"size\": \"%s\", \"bits\": \"%s\", "
                            "\"baseline\": true, \"frames\": %" G_GUINT64_FORMAT,
                            first ? "" : ",\n", vname[v], size_l, bits_l, nframes);
                    if (base >= 0) {
                        fprintf(jf, ", \"fps\": %.2f", base);
                        json_runs(jf, "fps_runs", runs_b, o.repeats);
                    } else {
                        fprintf(jf, ", \"error\": ");
                        qb_json_str(jf, bwhy);
                    }
                    fprintf(jf, "}");
                    first = 0;
                }
                for (int mi = 0; mi < nm && base >= 0; mi++) {
                    char *list = qb_metric_list(M[mi]);
                    for (int ei = 0; ei < nbe; ei++) {
                        double fps = -1;
                        why[0] = 0;
                        if (!measure(v, true, list, BE[ei], &o, &fr, runs_q, &fps, &nframes,
                                     &scored, why, sizeof(why)))
                            fps = -1;
                        const double share = fps > 0 && base > 0 ? 1.0 - fps / base : -1;
                        char sh[16] = "-";
                        if (fps > 0 && base > 0)
                            snprintf(sh, sizeof(sh), "%.0f%%", 100.0 * share);
                        if (fps > 0)
                            printf("%-13s %-10s %-4s %-*s %-5s %10.1f %10.1f %7s\n", vname[v],
                                   size_l, bits_l, mw, M[mi], BE[ei], fps, base, sh);
                        else
                            printf("%-13s %-10s %-4s %-*s %-5s %10s %10.1f %7s  (%s)\n",
                                   vname[v], size_l, bits_l, mw, M[mi], BE[ei], "-", base, sh,
                                   why);
                        fflush(stdout);
                        if (jf) {
                            fprintf(jf, "%s  {\"variant\": \"%s\", \"size\": \"%s\", "
                                    "\"bits\": \"%s\", \"metrics\": ", first ? "" : ",\n",
                                    vname[v], size_l, bits_l);
                            qb_json_str(jf, M[mi]);
                            fprintf(jf, ", \"metric_list\": ");
                            qb_json_str(jf, list);
                            fprintf(jf, ", \"backend\": \"%s\", \"threads\": %d, "
                                    "\"frames\": %" G_GUINT64_FORMAT ", \"scored\": %"
                                    G_GUINT64_FORMAT, BE[ei], o.threads, nframes, scored);
                            if (fps > 0) {
                                fprintf(jf, ", \"fps\": %.2f", fps);
                                json_runs(jf, "fps_runs", runs_q, o.repeats);
                            } else {
                                fprintf(jf, ", \"error\": ");
                                qb_json_str(jf, why);
                            }
                            if (base > 0)
                                fprintf(jf, ", \"baseline_fps\": %.2f", base);
                            if (fps > 0 && base > 0)
                                fprintf(jf, ", \"share\": %.4f", share);
                            fprintf(jf, "}");
                            first = 0;
                        }
                    }
                    free(list);
                }
                free_frames(&fr);
            }
        }
    }
    if (jf) {
        fprintf(jf, "\n]}\n");
        fclose(jf);
    }
    g_free(runs_q);
    g_free(runs_b);
    qb_free_list(V);
    qb_free_list(S);
    qb_free_list(B);
    qb_free_list(M);
    qb_free_list(BE);
    return 0;
}
