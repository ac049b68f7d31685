/* qmetric-compare: a ladder, several renditions of one reference scored in
 * one pipeline.  The reference is decoded once and a tee feeds one qmetric
 * element per rendition; each rendition is decoded, converted to the
 * comparison format and scaled to the reference's size.  Frames pair by
 * index, as in the two-input comparison.  At the end: one row per rendition
 * (codec, resolution, bitrate, size, frames, pooled metrics) as a table, CSV,
 * JSON, and a rate-quality chart; each rendition's per-frame log.
 */
#include "compare.h"
#include "swscale.h"

#include "json.h"
#include "series.h"
#include "../rdplot.h"

typedef struct {
    App *app;
    int idx;                   /* -1: the reference */
    char *name, *display, *uri;
    guint64 size;              /* bytes; 0 unknown */
    gboolean mapped;           /* a Y4M file read in place (mapsrc.c) */
    QmcMapSpec map;
    GstElement *src, *convert, *scale, *filter, *qm;
    GstPad *hold_pad;
    gulong block_id;
    GstCaps *caps;             /* decoded caps */
    gboolean linked;
    guint64 skipped, frames, passed;
    gint eos;
    char *codec;               /* from the stream's caps, as the missing-plugin names go */
    char *group;               /* the manifest's series for the chart, or NULL */
    char *series;              /* the chart's series it is drawn in (results) */
    gboolean rate_warned;      /* its frame rate differs from the reference's: said once */
    gboolean failed;           /* below a --fail-below threshold */
    guint tag_bitrate;         /* bit/s from the stream's tags; 0 none */
    gint64 container_dur;      /* ns, from the demuxer; -1 unknown */
    GstStructure *summary;
    Output log;
} Rend;

static Rend ref_r;
static GPtrArray *rends;       /* Rend*: the renditions, in the order given */
static gboolean configured;
static GstClockTime frame_dur;
static GstVideoFormat target;
static GstVideoInfo ref_info;

/* ---------------------------------------------------------------- inputs */

static char *default_name(const char *arg)
{
    char *base = g_path_get_basename(arg);
    char *dot = strrchr(base, '.');
    if (dot && dot != base)
        *dot = '\0';
    return base;
}

/* NAME=PATH names a rendition, unless the whole argument is a file. */
static Rend *add_rendition(App *app, const char *arg)
{
    Rend *r = g_new0(Rend, 1);
    const char *eq = strchr(arg, '=');
    const char *path = arg;
    if (eq && eq != arg && !g_file_test(arg, G_FILE_TEST_EXISTS) &&
        !memchr(arg, '/', eq - arg)) {
        r->name = g_strndup(arg, eq - arg);
        path = eq + 1;
    }
    r->app = app;
    r->idx = rends->len;
    r->display = g_strdup(path);
    qmc_output_protect(path);
    if (!r->name)
        r->name = default_name(path);
    for (guint i = 0; i < rends->len; i++)
        if (!strcmp(((Rend *)rends->pdata[i])->name, r->name))
            qmc_usage_error("two renditions are named '%s' (name them: NAME=PATH)", r->name);
    g_ptr_array_add(rends, r);
    return r;
}

/* Whether what follows a manifest's leading '[' is JSON (an array of
 * objects or strings, or an empty one) rather than a text manifest's first
 * [GROUP] line. */
static gboolean json_array_start(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return *p == '{' || *p == '"' || *p == ']';
}

/* One [NAME=]PATH a line ('#' comments, blank lines skipped; a [GROUP] line
 * puts the lines after it in that series of the chart), or a JSON array of
 * paths or of {"name": ..., "path": ..., "group": ...} ("codec" stands for
 * "group" when there is none).  Relative paths are relative to the
 * manifest's directory. */
static void read_manifest(App *app, const char *file)
{
    char *text = NULL, *dir = g_path_get_dirname(file);
    gsize len;
    GError *err = NULL;
    const char *p;

    if (!g_file_get_contents(file, &text, &len, &err))
        qmc_input_error("--manifest: %s", err->message);
    for (p = text; *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'; p++)
        ;
    if (*p == '{' || (*p == '[' && json_array_start(p + 1))) {
        char msg[256];
        QmJson *j = qm_json_parse(text, len, msg, sizeof(msg));
        const QmJson *a;
        if (!j)
            qmc_input_error("--manifest %s: not valid JSON: %s", file, msg);
        a = j->type == QM_JSON_ARRAY ? j : qm_json_get(j, "renditions");
        if (!a || a->type != QM_JSON_ARRAY)
            qmc_input_error("--manifest %s: expected an array of renditions", file);
        for (size_t i = 0; i < a->n; i++) {
            const QmJson *e = a->items[i];
            const char *path = e->type == QM_JSON_STRING ? e->str : qm_json_str(e, "path");
            const char *name = e->type == QM_JSON_OBJECT ? qm_json_str(e, "name") : NULL;
            const char *group = e->type == QM_JSON_OBJECT ? qm_json_str(e, "group") : NULL;
            char *full, *arg;
            Rend *r;
            if (!group && e->type == QM_JSON_OBJECT)
                group = qm_json_str(e, "codec");
            if (!path)
                qmc_input_error("--manifest %s: rendition %zu has no \"path\"", file, i + 1);
            full = g_path_is_absolute(path) || gst_uri_is_valid(path) ?
                   g_strdup(path) : g_build_filename(dir, path, NULL);
            arg = name ? g_strdup_printf("%s=%s", name, full) : g_strdup(full);
            r = add_rendition(app, arg);
            r->group = g_strdup(group);
            g_free(arg);
            g_free(full);
        }
        qm_json_free(j);
    } else {
        char **lines = g_strsplit(text, "\n", -1);
        char *group = NULL;
        for (char **l = lines; *l; l++) {
            char *t = g_strstrip(*l), *eq, *full, *arg;
            const char *path;
            size_t n = strlen(t);
            if (!*t || *t == '#')
                continue;
            if (t[0] == '[' && n >= 2 && t[n - 1] == ']') {
                /* [GROUP]: the chart's series of the lines below; [] none */
                g_free(group);
                group = n > 2 ? g_strndup(t + 1, n - 2) : NULL;
                continue;
            }
            eq = strchr(t, '=');
            path = eq && !memchr(t, '/', eq - t) ? eq + 1 : t;
            full = g_path_is_absolute(path) || gst_uri_is_valid(path) ?
                   g_strdup(path) : g_build_filename(dir, path, NULL);
            arg = path == t ? g_strdup(full) : g_strdup_printf("%.*s=%s", (int)(eq - t), t, full);
            add_rendition(app, arg)->group = g_strdup(group);
            g_free(arg);
            g_free(full);
        }
        g_free(group);
        g_strfreev(lines);
    }
    if (!rends->len)
        qmc_input_error("--manifest %s: no renditions in it", file);
    g_free(text);
    g_free(dir);
}

/* A Y4M file that can be read in place: its spec. */
static void check_y4m(Rend *r, const char *path)
{
    char *why = NULL;
    if (path && qmc_is_y4m_name(path))
        r->mapped = qmc_y4m_spec(path, &r->map, &why);  /* else y4mdec reads it */
    g_free(why);
}

/* The URI of an encoded input and its size; raw inputs are refused. */
static void check_rend(App *app, Rend *r)
{
    GStatBuf st;
    if (gst_uri_is_valid(r->display)) {
        char *path = g_filename_from_uri(r->display, NULL, NULL);
        r->uri = g_strdup(r->display);
        if (path && g_stat(path, &st) == 0)
            r->size = st.st_size;
        check_y4m(r, path);
        g_free(path);
        return;
    }
    if (g_stat(r->display, &st) != 0)
        qmc_input_error("%s: %s", r->display, g_strerror(errno));
    if (!S_ISREG(st.st_mode))
        qmc_input_error("%s: not a regular file", r->display);
    if (g_str_has_suffix(r->display, ".yuv") || g_str_has_suffix(r->display, ".raw") ||
        app->o.width)
        qmc_input_error("%s: raw video is not supported in a ladder (give encoded files or "
                        "compare raw files one pair at a time)", r->display);
    r->size = st.st_size;
    check_y4m(r, r->display);
    r->uri = gst_filename_to_uri(r->display, NULL);
    if (!r->uri)
        qmc_input_error("%s: cannot make a URI of this path", r->display);
}

/* ---------------------------------------------------------------- pipeline */

/* Called with app->lock held when the reference's decoded caps are known:
 * every capsfilter gets the comparison format (and the reference's size). */
static gboolean configure(App *app)
{
    GstCaps *c;
    if (!gst_video_info_from_caps(&ref_info, ref_r.caps)) {
        qmc_post_error(app, "%s: cannot read the decoded video format", ref_r.display);
        return FALSE;
    }
    target = qmc_compare_format(((Rend *)rends->pdata[0])->qm, GST_VIDEO_INFO_FORMAT(&ref_info));
    c = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING,
                            gst_video_format_to_string(target), NULL);
    g_object_set(ref_r.filter, "caps", c, NULL);
    c = gst_caps_make_writable(c);
    gst_caps_set_simple(c, "width", G_TYPE_INT, ref_info.width, "height", G_TYPE_INT,
                        ref_info.height, NULL);
    for (guint i = 0; i < rends->len; i++)
        g_object_set(((Rend *)rends->pdata[i])->filter, "caps", c, NULL);
    gst_caps_unref(c);
    frame_dur = ref_info.fps_n > 0 ?
        gst_util_uint64_scale_int(GST_SECOND, ref_info.fps_d, ref_info.fps_n) : GST_SECOND / 25;
    configured = TRUE;
    return TRUE;
}

/* Renditions wait at their first caps until the reference's are known (their
 * conversion depends on it); the reference's caps configure everything. */
static GstPadProbeReturn hold_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Rend *r = data;
    App *app = r->app;
    GstEvent *ev;
    GstPadProbeReturn ret = GST_PAD_PROBE_OK;

    if (!(GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM))
        return GST_PAD_PROBE_OK;
    ev = GST_PAD_PROBE_INFO_EVENT(info);
    if (GST_EVENT_TYPE(ev) != GST_EVENT_CAPS)
        return GST_PAD_PROBE_PASS;
    g_mutex_lock(&app->lock);
    if (!r->caps) {
        GstCaps *caps;
        gst_event_parse_caps(ev, &caps);
        r->caps = gst_caps_ref(caps);
    }
    if (!configured && r == &ref_r && configure(app)) {
        for (guint i = 0; i < rends->len; i++) {
            Rend *o = rends->pdata[i];
            if (o->block_id) {
                gst_pad_remove_probe(o->hold_pad, o->block_id);
                o->block_id = 0;
            }
        }
    }
    if (configured) {
        r->block_id = 0;
        ret = GST_PAD_PROBE_REMOVE;
    }
    g_mutex_unlock(&app->lock);
    return ret;
}

/* The decoded caps of each input (its size and frame rate for the row). */
static GstPadProbeReturn caps_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Rend *r = data;
    GstEvent *ev = GST_PAD_PROBE_INFO_EVENT(info);
    if (GST_EVENT_TYPE(ev) == GST_EVENT_CAPS) {
        GstCaps *caps;
        gst_event_parse_caps(ev, &caps);
        g_mutex_lock(&r->app->lock);
        if (!r->caps)
            r->caps = gst_caps_ref(caps);
        g_mutex_unlock(&r->app->lock);
    }
    return GST_PAD_PROBE_OK;
}

/* A rendition of another frame rate than the reference's still pairs by
 * index: said once, as the two-input comparison says it. */
static void rate_check(Rend *r, GstEvent *ev)
{
    GstCaps *caps;
    int n, d;
    if (r == &ref_r || r->rate_warned || ref_info.fps_n <= 0)
        return;
    gst_event_parse_caps(ev, &caps);
    if (!gst_structure_get_fraction(gst_caps_get_structure(caps, 0), "framerate", &n, &d) ||
        n <= 0 || (gint64)n * ref_info.fps_d == (gint64)ref_info.fps_n * d)
        return;
    r->rate_warned = TRUE;
    qmc_post_warning(r->app, "frame rates differ: reference %.4g fps, %s %.4g fps; a ladder "
                     "pairs frame N with frame N whatever their times", (double)ref_info.fps_n /
                     ref_info.fps_d, r->name, (double)n / d);
}

/* After each capsfilter: --frame_skip_*, --frames, index timestamps on a
 * plain timeline (frame N pairs with frame N), the end of each stream. */
static GstPadProbeReturn flow_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Rend *r = data;
    App *app = r->app;
    guint64 skip = app->o.skip[r == &ref_r ? REF : DIST];

    if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info);
        if (r->skipped < skip) {
            r->skipped++;
            return GST_PAD_PROBE_DROP;
        }
        if (app->o.max_frames && r->passed >= app->o.max_frames) {
            if (!g_atomic_int_get(&r->eos))
                gst_pad_push_event(pad, gst_event_new_eos());
            gst_buffer_unref(buf);
            GST_PAD_PROBE_INFO_FLOW_RETURN(info) = GST_FLOW_EOS;
            return GST_PAD_PROBE_HANDLED;
        }
        r->frames++;
        buf = gst_buffer_make_writable(buf);
        GST_BUFFER_PTS(buf) = r->passed * frame_dur;
        GST_BUFFER_DTS(buf) = GST_CLOCK_TIME_NONE;
        GST_BUFFER_DURATION(buf) = frame_dur;
        GST_PAD_PROBE_INFO_DATA(info) = buf;
        r->passed++;
        return GST_PAD_PROBE_OK;
    }
    if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *ev = GST_PAD_PROBE_INFO_EVENT(info);
        switch (GST_EVENT_TYPE(ev)) {
        case GST_EVENT_CAPS:
            rate_check(r, ev);
            qmc_index_timeline_caps(info, ref_r.caps);
            break;
        case GST_EVENT_SEGMENT: {
            GstSegment seg;
            GstEvent *n;
            gst_segment_init(&seg, GST_FORMAT_TIME);
            n = gst_event_new_segment(&seg);
            gst_event_set_seqnum(n, gst_event_get_seqnum(ev));
            gst_event_unref(ev);
            GST_PAD_PROBE_INFO_DATA(info) = n;
            break;
        }
        case GST_EVENT_GAP:
            return GST_PAD_PROBE_DROP;
        case GST_EVENT_EOS:
            if (g_atomic_int_get(&r->eos))
                return GST_PAD_PROBE_DROP;
            g_atomic_int_set(&r->eos, TRUE);
            break;
        default:
            break;
        }
    }
    return GST_PAD_PROBE_OK;
}

/* The decoder's input: the codec (its caps) and any bitrate tag. */
static GstPadProbeReturn tag_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Rend *r = data;
    GstEvent *ev = GST_PAD_PROBE_INFO_EVENT(info);
    if (GST_EVENT_TYPE(ev) == GST_EVENT_CAPS && !g_atomic_pointer_get(&r->codec)) {
        GstCaps *caps;
        char *d;
        gst_event_parse_caps(ev, &caps);
        d = gst_pb_utils_get_codec_description(caps);
        if (!g_atomic_pointer_compare_and_exchange(&r->codec, NULL, d))
            g_free(d);
    } else if (GST_EVENT_TYPE(ev) == GST_EVENT_TAG) {
        GstTagList *tl;
        guint b = 0;
        gst_event_parse_tag(ev, &tl);
        if ((gst_tag_list_get_uint(tl, GST_TAG_BITRATE, &b) ||
             gst_tag_list_get_uint(tl, GST_TAG_NOMINAL_BITRATE, &b)) && b)
            g_atomic_int_set(&r->tag_bitrate, b);
    }
    return GST_PAD_PROBE_OK;
}

static void on_element_added(GstBin *bin, GstBin *sub, GstElement *e, gpointer data)
{
    Rend *r = data;
    GstElementFactory *f = gst_element_get_factory(e);
    if (f && gst_element_factory_list_is_type(f, GST_ELEMENT_FACTORY_TYPE_DECODER)) {
        GstPad *sink = gst_element_get_static_pad(e, "sink");
        if (sink) {
            gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, tag_probe, r, NULL);
            gst_object_unref(sink);
        }
    }
}

static void on_pad_added(GstElement *dec, GstPad *pad, gpointer data)
{
    Rend *r = data;
    GstPad *sink;

    if (!qmc_pad_is_video(pad) || r->linked)
        return;
    sink = gst_element_get_static_pad(r->convert, "sink");
    if (gst_pad_link(pad, sink) == GST_PAD_LINK_OK)
        r->linked = TRUE;
    else
        qmc_post_error(r->app, "%s: cannot link its decoded video", r->display);
    gst_object_unref(sink);
}

static void on_no_more_pads(GstElement *dec, gpointer data)
{
    Rend *r = data;
    if (!r->linked)
        qmc_post_error(r->app, "%s: no video stream found", r->display);
}

/* source -> convert [-> scale] -> capsfilter; returns the capsfilter. */
static void build_input(App *app, Rend *r, const char *kind)
{
    GstElement *last;
    GstCaps *raw = gst_caps_from_string("video/x-raw(ANY)");
    GstPad *pad;
    char name[64];

    g_snprintf(name, sizeof(name), "%s-convert", kind);
    r->convert = qmc_make("videoconvert", name);
    gst_util_set_object_arg(G_OBJECT(r->convert), "dither", "none");
    g_snprintf(name, sizeof(name), "%s-filter", kind);
    r->filter = qmc_make("capsfilter", name);
    gst_bin_add_many(GST_BIN(app->pipeline), r->convert, r->filter, NULL);
    if (r->mapped && (r->src = qmc_mapped_input(GST_BIN(app->pipeline), r->uri, &r->map, kind))) {
        /* the codec column as y4mdec's input would name it */
        GstCaps *y4m = gst_caps_from_string("application/x-yuv4mpeg, y4mversion=(int)2");
        r->codec = gst_pb_utils_get_codec_description(y4m);
        gst_caps_unref(y4m);
        gst_element_link(r->src, r->convert);
        r->linked = TRUE;
    } else {
        g_snprintf(name, sizeof(name), "%s-decode", kind);
        r->src = qmc_make("uridecodebin", name);
        g_object_set(r->src, "uri", r->uri, "caps", raw, "expose-all-streams", FALSE, NULL);
        g_signal_connect(r->src, "pad-added", G_CALLBACK(on_pad_added), r);
        g_signal_connect(r->src, "no-more-pads", G_CALLBACK(on_no_more_pads), r);
        g_signal_connect(r->src, "deep-element-added", G_CALLBACK(on_element_added), r);
        gst_bin_add(GST_BIN(app->pipeline), r->src);
    }
    gst_caps_unref(raw);
    last = r->convert;
    if (r != &ref_r) {
        /* only renditions of another size are touched: same-size frames pass */
        g_snprintf(name, sizeof(name), "%s-scale", kind);
        r->scale = qmc_make_scaler(name, app->o.scale_method);
        gst_bin_add(GST_BIN(app->pipeline), r->scale);
        gst_element_link(last, r->scale);
        last = r->scale;
    }
    gst_element_link(last, r->filter);
    r->hold_pad = gst_element_get_static_pad(r->convert, "sink");
    gst_pad_add_probe(r->hold_pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, caps_probe, r, NULL);
    r->block_id = gst_pad_add_probe(r->hold_pad, GST_PAD_PROBE_TYPE_BLOCK |
                                    GST_PAD_PROBE_TYPE_DATA_DOWNSTREAM, hold_probe, r, NULL);
    pad = gst_element_get_static_pad(r->filter, "src");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                      flow_probe, r, NULL);
    gst_object_unref(pad);
    qmc_drop_events_after_eos(r->filter);
}

static void link_pads(GstElement *a, const char *apad, GstElement *b, const char *bpad)
{
    GstPad *s = apad ? gst_element_request_pad_simple(a, apad) : gst_element_get_static_pad(a, "src");
    GstPad *d = gst_element_get_static_pad(b, bpad);
    if (gst_pad_link(s, d) != GST_PAD_LINK_OK)
        qmc_input_error("internal error: cannot link %s to %s", GST_ELEMENT_NAME(a),
                        GST_ELEMENT_NAME(b));
    gst_object_unref(s);
    gst_object_unref(d);
}

/* -o DIR/ (or an existing directory): DIR/NAME.json; a pattern: {name}
 * replaced by the rendition's name. */
static char *log_path(const Options *o, const Rend *r)
{
    const char *out = o->output;
    if (strstr(out, "{name}")) {
        char **parts = g_strsplit(out, "{name}", -1);
        char *p = g_strjoinv(r->name, parts);
        g_strfreev(parts);
        return p;
    }
    {
        char *file = g_strdup_printf("%s.%s", r->name, o->log_format ? o->log_format : "json");
        char *p = g_build_filename(out, file, NULL);
        g_free(file);
        return p;
    }
}

static void build(App *app)
{
    GstElement *tee;
    app->pipeline = gst_pipeline_new("qmetric-compare");
    build_input(app, &ref_r, "reference");
    tee = qmc_make("tee", "reference-tee");
    gst_bin_add(GST_BIN(app->pipeline), tee);
    gst_element_link(ref_r.filter, tee);
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        char name[64];
        GstElement *rq, *dq, *sink;
        g_snprintf(name, sizeof(name), "rendition%u", i);
        build_input(app, r, name);
        g_snprintf(name, sizeof(name), "qmetric%u", i);
        r->qm = gst_element_factory_make("qmetric", name);
        qmc_configure_qmetric(app, r->qm);
        if (app->gpus->len)
            g_object_set(r->qm, "cuda-device-id", qmc_gpu_for(app, i), NULL);
        if (app->o.output) {
            qmc_set_enum(r->qm, "log-format", app->o.log_format, "--format");
            g_object_set(r->qm, "log-location", r->log.tmp, NULL);
        }
        g_snprintf(name, sizeof(name), "reference-queue%u", i);
        rq = qmc_make("queue", name);
        g_snprintf(name, sizeof(name), "rendition%u-queue", i);
        dq = qmc_make("queue", name);
        sink = qmc_make("fakesink", NULL);
        g_object_set(sink, "sync", FALSE, "async", FALSE, NULL);
        gst_bin_add_many(GST_BIN(app->pipeline), r->qm, rq, dq, sink, NULL);
        link_pads(tee, "src_%u", rq, "sink");
        link_pads(rq, NULL, r->qm, "ref_sink");
        gst_element_link(r->filter, dq);
        link_pads(dq, NULL, r->qm, "dist_sink");
        gst_element_link(r->qm, sink);
    }
}

/* ---------------------------------------------------------------- main loop */

static Rend *rend_of(GstObject *o)
{
    for (guint i = 0; i <= rends->len; i++) {
        Rend *r = i < rends->len ? rends->pdata[i] : &ref_r;
        GstElement *roots[] = { r->src, r->convert, r->scale, r->filter, r->qm };
        for (guint k = 0; k < G_N_ELEMENTS(roots); k++)
            if (roots[k] && (o == GST_OBJECT(roots[k]) ||
                             gst_object_has_as_ancestor(o, GST_OBJECT(roots[k]))))
                return r;
    }
    return NULL;
}

static gboolean on_bus(GstBus *bus, GstMessage *msg, gpointer data)
{
    App *app = data;
    switch (GST_MESSAGE_TYPE(msg)) {
    case GST_MESSAGE_ELEMENT: {
        const GstStructure *st = gst_message_get_structure(msg);
        if (gst_structure_has_name(st, "qmetric-summary")) {
            Rend *r = rend_of(GST_MESSAGE_SRC(msg));
            if (r && r != &ref_r) {
                gst_clear_structure(&r->summary);
                r->summary = gst_structure_copy(st);
            }
        } else if (gst_structure_has_name(st, "qmetric")) {
            if (!app->pairs_done++ && app->o.thresholds->len) {
                char **f = qmc_score_features(st);
                qmc_check_gate_features(app, f);
                g_strfreev(f);
            }
        }
        break;
    }
    case GST_MESSAGE_APPLICATION: {
        const GstStructure *st = gst_message_get_structure(msg);
        if (gst_structure_has_name(st, "qmc-error"))
            qmc_fail(app, EXIT_USAGE, "%s", gst_structure_get_string(st, "message"));
        else if (gst_structure_has_name(st, "qmc-warning"))
            fprintf(stderr, "qmetric-compare: warning: %s\n",
                    gst_structure_get_string(st, "message"));
        break;
    }
    case GST_MESSAGE_EOS:
        g_main_loop_quit(app->loop);
        break;
    case GST_MESSAGE_ERROR: {
        GError *err = NULL;
        Rend *r = rend_of(GST_MESSAGE_SRC(msg));
        gst_message_parse_error(msg, &err, NULL);
        if (r && (g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_TYPE_NOT_FOUND) ||
                  g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_WRONG_TYPE)))
            qmc_fail(app, EXIT_USAGE, "%s: not a video format GStreamer recognises (%s)",
                     r->display, r == &ref_r ? "the reference" : "a rendition");
        else if (r)
            qmc_fail(app, EXIT_USAGE, "%s: %s", r->display, err->message);
        else
            qmc_fail(app, EXIT_USAGE, "%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)),
                     err->message);
        g_error_free(err);
        break;
    }
    case GST_MESSAGE_WARNING:
        qmc_print_warning(app, msg);
        break;
    default:
        break;
    }
    return G_SOURCE_CONTINUE;
}

/* ---------------------------------------------------------------- results */

typedef struct {
    int width, height;
    double seconds;            /* frames / frame rate; NAN unknown */
    double kbps;               /* NAN unknown */
    const char *source;        /* how kbps was found */
    guint64 frames;
} Row;

static void row_of(const Rend *r, Row *w)
{
    GstVideoInfo vi;
    w->width = w->height = 0;
    w->seconds = w->kbps = NAN;
    w->source = "unknown";
    w->frames = 0;
    if (r->summary)
        gst_structure_get_uint64(r->summary, "frames", &w->frames);
    if (r->caps && gst_video_info_from_caps(&vi, r->caps)) {
        w->width = vi.width;
        w->height = vi.height;
        /* the whole file decoded: its frames at its frame rate; cut short
         * (--frames, --shortest, Ctrl-C): the container's duration */
        if (vi.fps_n > 0 && r->frames && g_atomic_int_get(&r->eos) && !r->app->interrupted &&
            !r->app->o.max_frames && !r->app->o.shortest)
            w->seconds = (double)(r->frames + r->skipped) * vi.fps_d / vi.fps_n;
        else if (r->container_dur > 0)
            w->seconds = r->container_dur / 1e9;
    }
    /* the mean rate of the file as stored, container included: what the
     * ladder costs to deliver; a tag only when the duration is unknown */
    if (r->size && isfinite(w->seconds) && w->seconds > 0) {
        w->kbps = r->size * 8.0 / w->seconds / 1000.0;
        w->source = "size";
    } else if (r->tag_bitrate) {
        w->kbps = r->tag_bitrate / 1000.0;
        w->source = "tag";
    }
}

/* The pooled features, in the summary's order. */
static GPtrArray *features_of(void)
{
    GPtrArray *a = g_ptr_array_new();
    for (guint i = 0; i < rends->len; i++) {
        const GstStructure *s = ((Rend *)rends->pdata[i])->summary;
        for (int k = 0; s && k < gst_structure_n_fields(s); k++) {
            const char *n = gst_structure_nth_field_name(s, k);
            if (GST_VALUE_HOLDS_STRUCTURE(gst_structure_get_value(s, n)) &&
                !g_ptr_array_find_with_equal_func(a, n, g_str_equal, NULL))
                g_ptr_array_add(a, (gpointer)n);
        }
    }
    return a;
}

static const char *const stat_fields[] = { "mean", "harmonic-mean", "min", "max", "p1", "p5" };

/* The statistics any rendition pooled, in a fixed order. */
static GPtrArray *stats_of(GPtrArray *feats)
{
    GPtrArray *a = g_ptr_array_new();
    for (guint s = 0; s < G_N_ELEMENTS(stat_fields); s++) {
        gboolean any = FALSE;
        for (guint i = 0; i < rends->len && !any; i++)
            for (guint f = 0; f < feats->len && !any; f++) {
                const GstStructure *sum = ((Rend *)rends->pdata[i])->summary;
                any = sum && !isnan(qmc_pooled(sum, feats->pdata[f], stat_fields[s]));
            }
        if (any)
            g_ptr_array_add(a, (gpointer)stat_fields[s]);
    }
    return a;
}

static void csv_cell(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n\r")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
}

static void csv_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, ",%.6f", v);
    else
        fputs(",", f);
}

static double gate_value(const Rend *r, const Threshold *t)
{
    return r->summary ? qmc_pooled(r->summary, t->feature, t->stat) : NAN;
}

/* "vmaf.mean 71.234567 < 80; psnr_y.p5 ..." : the gates a rendition fails */
static char *failed_gates(App *app, const Rend *r)
{
    GString *g = g_string_new(NULL);
    for (guint i = 0; i < app->o.thresholds->len; i++) {
        const Threshold *t = &g_array_index(app->o.thresholds, Threshold, i);
        const double v = gate_value(r, t);
        if (!(v >= t->value))
            g_string_append_printf(g, "%s%s.%s %.6f < %g", g->len ? "; " : "", t->feature,
                                   qmc_stat_name(t->stat), v, t->value);
    }
    return g_string_free(g, FALSE);
}

static void write_csv(FILE *f, GPtrArray *feats, GPtrArray *stats)
{
    App *app = ref_r.app;
    const gboolean gates = app->o.thresholds->len > 0;
    fputs("name,input,codec,width,height,bitrate,bitrate_source,size_bytes,frames,duration_s", f);
    for (guint k = 0; k < feats->len; k++)
        for (guint s = 0; s < stats->len; s++)
            fprintf(f, ",%s.%s", (char *)feats->pdata[k], qmc_stat_name(stats->pdata[s]));
    fputs(gates ? ",group,passed,failed_gates\n" : ",group\n", f);
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        Row w;
        row_of(r, &w);
        csv_cell(f, r->name);
        fputc(',', f);
        csv_cell(f, r->display);
        fputc(',', f);
        csv_cell(f, r->codec ? r->codec : "");
        fprintf(f, ",%d,%d", w.width, w.height);
        csv_number(f, w.kbps);
        fprintf(f, ",%s,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT, w.source, r->size, w.frames);
        csv_number(f, w.seconds);
        for (guint k = 0; k < feats->len; k++)
            for (guint s = 0; s < stats->len; s++)
                csv_number(f, r->summary ? qmc_pooled(r->summary, feats->pdata[k],
                                                      stats->pdata[s]) : NAN);
        fputc(',', f);
        csv_cell(f, r->series ? r->series : "");
        if (gates) {
            char *why = failed_gates(app, r);
            fprintf(f, ",%s,", r->failed ? "false" : "true");
            csv_cell(f, why);
            g_free(why);
        }
        fputc('\n', f);
    }
}

static void write_json(App *app, FILE *f, GPtrArray *feats, GPtrArray *stats, int code)
{
    fprintf(f, "{\n  \"version\": \"qmetric-compare %s\",\n  \"reference\": {\"input\": ",
            QM_VERSION);
    qmc_json_string(f, ref_r.display);
    fprintf(f, ", \"width\": %d, \"height\": %d, \"frames_decoded\": %" G_GUINT64_FORMAT "}",
            configured ? ref_info.width : 0, configured ? ref_info.height : 0, ref_r.frames);
    fprintf(f, ",\n  \"compared_as\": \"%s\",\n  \"scale_method\": \"%s\",\n  \"renditions\": [",
            configured ? gst_video_format_to_string(target) : "",
            app->o.scale_method);
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        Row w;
        row_of(r, &w);
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
        qmc_json_string(f, r->name);
        fputs(", \"input\": ", f);
        qmc_json_string(f, r->display);
        fputs(", \"codec\": ", f);
        if (r->codec)
            qmc_json_string(f, r->codec);
        else
            fputs("null", f);
        fprintf(f, ", \"width\": %d, \"height\": %d, \"resolution\": \"%dx%d\", \"scaled\": %s",
                w.width, w.height, w.width, w.height,
                configured && (w.width != ref_info.width || w.height != ref_info.height) ?
                "true" : "false");
        fputs(", \"bitrate\": ", f);
        qmc_json_number(f, w.kbps);
        fprintf(f, ", \"bitrate_source\": \"%s\", \"size_bytes\": %" G_GUINT64_FORMAT
                ", \"frames\": %" G_GUINT64_FORMAT ", \"duration_s\": ", w.source, r->size,
                w.frames);
        qmc_json_number(f, w.seconds);
        if (app->o.output) {
            fputs(", \"log\": ", f);
            qmc_json_string(f, r->log.dest);
        }
        if (app->gpus->len)
            fprintf(f, ", \"cuda_device\": %d", qmc_gpu_for(app, i));
        fputs(", \"group\": ", f);
        qmc_json_string(f, r->series ? r->series : "");
        fputs(", \"gates\": [", f);
        for (guint g = 0; g < app->o.thresholds->len; g++) {
            const Threshold *t = &g_array_index(app->o.thresholds, Threshold, g);
            const double v = gate_value(r, t);
            fputs(g ? ", {\"feature\": " : "{\"feature\": ", f);
            qmc_json_string(f, t->feature);
            fprintf(f, ", \"statistic\": \"%s\", \"threshold\": %.17g, \"value\": ",
                    qmc_stat_name(t->stat), t->value);
            qmc_json_number(f, v);
            fprintf(f, ", \"passed\": %s}", v >= t->value ? "true" : "false");
        }
        fprintf(f, "], \"passed\": %s", r->failed ? "false" : "true");
        for (guint k = 0; k < feats->len; k++) {
            fputs(", ", f);
            qmc_json_string(f, feats->pdata[k]);
            fputs(": {", f);
            for (guint s = 0; s < stats->len; s++) {
                fprintf(f, "%s\"%s\": ", s ? ", " : "", qmc_stat_name(stats->pdata[s]));
                qmc_json_number(f, r->summary ? qmc_pooled(r->summary, feats->pdata[k],
                                                    stats->pdata[s]) : NAN);
            }
            fputc('}', f);
        }
        fputc('}', f);
    }
    fputs("\n  ],\n  \"failed\": [", f);
    for (guint i = 0, n = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        if (!r->failed)
            continue;
        fputs(n++ ? ", " : "", f);
        qmc_json_string(f, r->name);
    }
    fputs("],\n  \"error\": ", f);
    if (app->error)
        qmc_json_string(f, app->error);
    else
        fputs("null", f);
    fprintf(f, ",\n  \"exit_status\": %d\n}\n", code);
}

static void print_table(FILE *f, GPtrArray *feats)
{
    static const char *const cols[] = { "vmaf", "psnr_y", "float_ssim" };
    fprintf(f, "%-16s %11s %10s %7s", "rendition", "size", "kbit/s", "frames");
    for (guint c = 0; c < G_N_ELEMENTS(cols); c++)
        if (g_ptr_array_find_with_equal_func(feats, cols[c], g_str_equal, NULL))
            fprintf(f, " %10s", cols[c]);
    fputc('\n', f);
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        Row w;
        char res[32];
        row_of(r, &w);
        g_snprintf(res, sizeof(res), "%dx%d", w.width, w.height);
        fprintf(f, "%-16s %11s %10.1f %7" G_GUINT64_FORMAT, r->name, res, w.kbps, w.frames);
        for (guint c = 0; c < G_N_ELEMENTS(cols); c++)
            if (g_ptr_array_find_with_equal_func(feats, cols[c], g_str_equal, NULL))
                fprintf(f, " %10.6f", r->summary ? qmc_pooled(r->summary, cols[c], "mean") : NAN);
        fputc('\n', f);
    }
}

/* The chart's series of every rendition (series.c). */
static void assign_series(void)
{
    QmcSeriesIn *in = g_new0(QmcSeriesIn, rends->len);
    char **names;
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        Row w;
        row_of(r, &w);
        in[i] = (QmcSeriesIn){ r->group, r->codec, w.width, w.height };
    }
    names = qmc_ladder_series(in, rends->len);
    for (guint i = 0; i < rends->len; i++)
        ((Rend *)rends->pdata[i])->series = names[i];
    g_free(names);              /* the strings now belong to the renditions */
    g_free(in);
}

/* --fail-below on every rendition: a line per gate (the passes unless
 * --quiet), then one naming the renditions that fail.  EXIT_FAIL_BELOW
 * when one does, else 0. */
static int check_gates(App *app)
{
    GString *names = g_string_new(NULL);
    guint n = 0;
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        for (guint g = 0; g < app->o.thresholds->len; g++) {
            const Threshold *t = &g_array_index(app->o.thresholds, Threshold, g);
            if (!qmc_report_gate(app, r->name, t, gate_value(r, t)))
                r->failed = TRUE;
        }
        if (r->failed)
            g_string_append_printf(names, "%s%s", n++ ? ", " : "", r->name);
    }
    if (n)
        fprintf(stderr, "qmetric-compare: --fail-below: %u of %u renditions fail: %s\n", n,
                rends->len, names->str);
    g_string_free(names, TRUE);
    return n ? EXIT_FAIL_BELOW : 0;
}

/* VMAF and PSNR (Y) panels, those of them that were computed; one curve
 * per series, each point labelled with its rendition's name. */
static char *rd_svg(App *app, GPtrArray *feats)
{
    const char *want[] = { "vmaf", "psnr_y" };
    const char *metrics[2];
    size_t nm = 0;
    GPtrArray *names = g_ptr_array_new();
    GArray *curves = g_array_new(FALSE, TRUE, sizeof(QmRdCurve));
    GPtrArray *owned = g_ptr_array_new_with_free_func(g_free);
    char *svg, *sub;

    for (guint k = 0; k < G_N_ELEMENTS(want); k++)
        if (g_ptr_array_find_with_equal_func(feats, want[k], g_str_equal, NULL))
            metrics[nm++] = want[k];
    /* the series in order of first appearance */
    for (guint i = 0; i < rends->len; i++) {
        const char *s = ((Rend *)rends->pdata[i])->series;
        if (!g_ptr_array_find_with_equal_func(names, s, g_str_equal, NULL))
            g_ptr_array_add(names, (gpointer)s);
    }
    for (guint c = 0; c < names->len; c++) {
        double *rate = g_new(double, rends->len);
        double **q = g_new0(double *, 2);
        const char **label = g_new(const char *, rends->len);
        size_t n = 0;
        q[0] = g_new(double, rends->len);
        q[1] = g_new(double, rends->len);
        for (guint i = 0; i < rends->len; i++) {
            Rend *r = rends->pdata[i];
            Row w;
            if (strcmp(r->series, names->pdata[c]))
                continue;
            row_of(r, &w);
            rate[n] = w.kbps;
            for (size_t m = 0; m < nm; m++)
                q[m][n] = qmc_pooled(r->summary, metrics[m], "mean");
            label[n++] = r->name;
        }
        QmRdCurve cv = { .name = names->pdata[c], .rate = rate,
                         .quality = (const double *const *)q, .label = label, .n = n };
        g_array_append_val(curves, cv);
        g_ptr_array_add(owned, rate);
        g_ptr_array_add(owned, q[0]);
        g_ptr_array_add(owned, q[1]);
        g_ptr_array_add(owned, q);
        g_ptr_array_add(owned, label);
    }
    sub = g_strdup_printf("%u renditions of %s, mean over frames; bitrate = file size x 8 / "
                          "duration", rends->len, ref_r.display);
    {
        const QmRdOptions ro = { .title = "Rate-quality", .subtitle = sub,
                                 .hull = app->o.hull };
        svg = qm_rd_svg_string((QmRdCurve *)curves->data, curves->len, metrics, nm, &ro);
    }
    g_free(sub);
    g_ptr_array_free(owned, TRUE);
    g_array_free(curves, TRUE);
    g_ptr_array_free(names, TRUE);
    return svg;
}

static gboolean write_to(App *app, Output *out, const char *text)
{
    FILE *f = fopen(out->tmp, "w");
    gboolean ok = f && fputs(text, f) >= 0;
    if (f && fclose(f) != 0)
        ok = FALSE;
    if (!ok)
        qmc_fail(app, EXIT_USAGE, "%s %s: cannot be written", out->what, out->dest);
    return ok;
}

static char *to_string(void (*fn)(FILE *, GPtrArray *, GPtrArray *), GPtrArray *a, GPtrArray *b)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fn(f, a, b);
    fclose(f);
    return buf;
}

/* ---------------------------------------------------------------- entry */

/* --dry-run: which rendition runs on which device, on stdout */
static G_GNUC_NORETURN void dry_run(App *app)
{
    printf("%-16s %s (decoded once)\n", "reference", ref_r.display);
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        int dev = app->gpus->len ? qmc_gpu_for(app, i) : app->o.cuda_device_id;
        printf("%-16s %s -> ", r->name, r->display);
        if (dev >= 0)
            printf("CUDA device %d\n", dev);
        else
            printf("backend %s, the element's default device\n",
                   app->o.backend ? app->o.backend : "auto");
    }
    qmc_exit_after_report(FALSE);
}

/* --detect-offset: each rendition's offset against the reference */
static G_GNUC_NORETURN void detect_offsets(App *app)
{
    gboolean json = app->o.summary == SUMMARY_JSON;
    QmcAlignInput ref = { ref_r.display, ref_r.uri, FALSE, app->o.skip[REF],
                          ref_r.mapped ? &ref_r.map : NULL };
    if (json)
        fputs("{\"renditions\": [", stdout);
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        QmcAlignInput dist = { r->display, r->uri, FALSE, app->o.skip[DIST],
                               r->mapped ? &r->map : NULL };
        QmcAlignResult res;
        qmc_align_inputs(app, &ref, &dist, &res);
        if (json) {
            fputs(i ? ", " : "", stdout);
            qmc_align_print_json(stdout, "", &ref, &dist, &res);
        } else {
            if (i)
                fputc('\n', stdout);
            qmc_align_print(stdout, r->name, &ref, &dist, &res);
        }
        qmc_align_result_clear(&res);
    }
    if (json)
        fputs("]}\n", stdout);
    qmc_exit_after_report(TRUE);
}

int qmc_ladder_main(App *app)
{
    Options *o = &app->o;
    Output csv = { 0 }, json = { 0 }, rd = { 0 };
    GstBus *bus;
    int code = 0;
    guint64 ref_frames;

    if (o->plot || o->pair_by_time)
        qmc_usage_error("%s is not available with several renditions",
                        o->plot ? "--plot" : "--pair-by time");
    if (o->output && !strcmp(o->output, "-"))
        qmc_usage_error("-o -: a ladder writes one log per rendition: give a directory "
                        "(-o DIR/) or a pattern with {name}");
    rends = g_ptr_array_new();
    ref_r.app = app;
    ref_r.idx = -1;
    ref_r.display = g_strdup(o->input[REF]);
    ref_r.name = g_strdup("reference");
    check_rend(app, &ref_r);
    if (o->input[DIST])
        add_rendition(app, o->input[DIST]);
    for (guint i = 0; i < o->extra->len; i++)
        add_rendition(app, o->extra->pdata[i]);
    if (o->manifest)
        read_manifest(app, o->manifest);
    for (guint i = 0; i < rends->len; i++)
        check_rend(app, rends->pdata[i]);
    if (o->dry_run)
        dry_run(app);
    if (o->detect_offset)
        detect_offsets(app);
    if (!qmc_find_qmetric()) {
        fprintf(stderr, "qmetric-compare: the qmetric GStreamer element was not found: "
                "build it (ninja -C build) or set GST_PLUGIN_PATH to its directory\n");
        return EXIT_USAGE;
    }
    if (o->output) {
        gboolean dir = g_str_has_suffix(o->output, "/") ||
                       g_file_test(o->output, G_FILE_TEST_IS_DIR);
        if (!dir && !strstr(o->output, "{name}"))
            qmc_usage_error("-o %s: with several renditions give a directory (DIR/) or a "
                            "pattern with {name}", o->output);
        if (dir && g_mkdir_with_parents(o->output, 0777) != 0)
            qmc_usage_error("-o %s: %s", o->output, g_strerror(errno));
        for (guint i = 0; i < rends->len; i++) {
            Rend *r = rends->pdata[i];
            char *p = log_path(o, r), *d = g_path_get_dirname(p);
            /* the pattern's directories are made, as DIR/ is */
            if (g_mkdir_with_parents(d, 0777) != 0)
                qmc_usage_error("-o %s: %s", d, g_strerror(errno));
            g_free(d);
            qmc_output_prepare(&r->log, "--output", p);
            g_free(p);
        }
    }
    if (o->ladder_csv)
        qmc_output_prepare(&csv, "--ladder-csv", o->ladder_csv);
    if (o->ladder_json)
        qmc_output_prepare(&json, "--ladder-json", o->ladder_json);
    if (o->plot_rd)
        qmc_output_prepare(&rd, "--plot-rd", o->plot_rd);
    build(app);
    if (app->gpus->len && !o->quiet) {
        fputs("qmetric-compare: GPUs:", stderr);
        for (guint i = 0; i < rends->len; i++)
            fprintf(stderr, "%s %s on %d", i ? "," : "", ((Rend *)rends->pdata[i])->name,
                    qmc_gpu_for(app, i));
        fputc('\n', stderr);
    }

    app->loop = g_main_loop_new(NULL, FALSE);
    bus = gst_element_get_bus(app->pipeline);
    gst_bus_add_watch(bus, on_bus, app);
    gst_object_unref(bus);
    g_unix_signal_add(SIGINT, qmc_on_sigint, app);
    app->t0 = g_get_monotonic_time();
    qmc_set_phase("running");
    if (gst_element_set_state(app->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
        qmc_fail(app, EXIT_USAGE, "the pipeline cannot start");
    else
        g_main_loop_run(app->loop);
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        if (!gst_element_query_duration(r->src, GST_FORMAT_TIME, &r->container_dur))
            r->container_dur = -1;
    }
    qmc_set_phase("stopping the pipeline");
    gst_element_set_state(app->pipeline, GST_STATE_NULL);
    qmc_set_phase("results");

    /* every rendition has the reference's frame count, as in a single run */
    ref_frames = ref_r.frames;
    for (guint i = 0; i < rends->len && !app->error && !app->interrupted; i++) {
        Rend *r = rends->pdata[i];
        guint64 n = 0;
        if (r->summary)
            gst_structure_get_uint64(r->summary, "frames", &n);
        if (!r->summary || !n)
            qmc_fail(app, EXIT_USAGE, "%s: no frames were compared", r->display);
        else if (!o->shortest && !o->max_frames && r->frames != ref_frames)
            qmc_fail(app, EXIT_USAGE, "frame counts differ: reference has %" G_GUINT64_FORMAT
                     " frames, %s %" G_GUINT64_FORMAT " (--shortest accepts this)",
                     ref_frames, r->display, r->frames);
    }
    {
        GPtrArray *feats = features_of(), *stats = stats_of(feats);
        gboolean ok = !app->error;
        FILE *table = o->quiet ? NULL : o->summary == SUMMARY_JSON ||
                      qmc_output_is_stdout(&csv) || qmc_output_is_stdout(&json) ||
                      qmc_output_is_stdout(&rd) ? stderr : stdout;
        Output *outs[] = { &csv, &json, &rd };
        int gates = 0;
        if (ok) {
            assign_series();
            if (table)
                print_table(table, feats);
            gates = check_gates(app);
        }
        if (ok && csv.tmp) {
            char *t = to_string(write_csv, feats, stats);
            write_to(app, &csv, t);
            free(t);
        }
        if (ok && json.tmp) {
            char *buf = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&buf, &len);
            write_json(app, f, feats, stats, gates);
            fclose(f);
            write_to(app, &json, buf);
            free(buf);
        }
        if (ok && rd.tmp) {
            char *svg = rd_svg(app, feats);
            write_to(app, &rd, svg);
            g_free(svg);
        }
        ok = !app->error;
        for (guint i = 0; i < rends->len + G_N_ELEMENTS(outs); i++) {
            Output *out = i < rends->len ? &((Rend *)rends->pdata[i])->log :
                          outs[i - rends->len];
            char *err = NULL;
            if (!out->tmp)
                continue;
            if (!ok)
                qmc_output_discard(out);
            else if (!qmc_output_commit(out, &err)) {
                qmc_fail(app, EXIT_USAGE, "%s", err);
                g_free(err);
            }
        }
        code = app->error ? app->exit_code : app->interrupted ? EXIT_INTERRUPTED : gates;
        if (o->summary == SUMMARY_JSON && ok)
            write_json(app, stdout, feats, stats, code);
        g_ptr_array_free(stats, TRUE);
        g_ptr_array_free(feats, TRUE);
    }
    if (app->error)
        fprintf(stderr, "qmetric-compare: %s\n", app->error);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "qmetric-compare: standard output cannot be written\n");
        code = EXIT_USAGE;
    }
    qmc_set_phase("freeing the pipeline");
    gst_object_unref(app->pipeline);
    qmc_set_phase("exiting");
    return code;
}
