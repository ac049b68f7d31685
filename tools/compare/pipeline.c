/* qmetric-compare: the pipeline of a run.  The reference is decoded once;
 * each distorted side (app->dists: the one of a two-input run, or each of
 * a ladder's renditions) is scored against it by a qmetric element of its
 * own.  Every input is the same branch (side.c):
 *
 *   reference -> [tee ->] queue -> qmetric -> fakesink     (one per distorted side)
 *   distorted ->          queue ->
 *
 * A ladder's reference feeds its elements through a tee; a two-input run's
 * feeds its one element directly.  Each branch is held at its first caps
 * until the comparison format is chosen from the reference's (configure()),
 * then every capsfilter gets that format, and the distorted ones the
 * reference's size.
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "compare.h"

#include "qm.h"

/* ---------------------------------------------------------------- format */

static gboolean qmetric_accepts(GstElement *qm, GstVideoFormat f)
{
    GstPad *pad = gst_element_get_static_pad(qm, "ref_sink");
    GstCaps *tmpl = gst_pad_get_pad_template_caps(pad);
    GstCaps *c = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING,
                                     gst_video_format_to_string(f), NULL);
    gboolean ok = gst_caps_can_intersect(tmpl, c);
    gst_caps_unref(c);
    gst_caps_unref(tmpl);
    gst_object_unref(pad);
    return ok;
}

/* The format both streams are compared in: the reference's own format when
 * qmetric reads it (then the reference is not touched), else the nearest
 * planar YUV format that loses nothing: same bit depth and chroma layout,
 * RGB as 4:4:4. */
static GstVideoFormat compare_format(GstElement *qm, GstVideoFormat ref)
{
    const GstVideoFormatInfo *fi = gst_video_format_get_info(ref);
    int depth = GST_VIDEO_FORMAT_INFO_DEPTH(fi, 0);
    const char *f;

    if (qmetric_accepts(qm, ref))
        return ref;
    if (GST_VIDEO_FORMAT_INFO_IS_GRAY(fi))
        f = depth > 8 ? "GRAY16_LE" : "GRAY8";
    else if (!GST_VIDEO_FORMAT_INFO_IS_RGB(fi) && fi->w_sub[1] == 1 && fi->h_sub[1] == 1)
        f = depth > 12 ? "P016_LE" : depth > 10 ? "I420_12LE" : depth > 8 ? "I420_10LE" : "I420";
    else if (!GST_VIDEO_FORMAT_INFO_IS_RGB(fi) && fi->w_sub[1] == 1 && fi->h_sub[1] == 0 &&
             depth <= 12)
        f = depth > 10 ? "I422_12LE" : depth > 8 ? "I422_10LE" : "Y42B";
    else
        f = depth > 12 ? "Y444_16LE" : depth > 10 ? "Y444_12LE" : depth > 8 ? "Y444_10LE" : "Y444";
    return gst_video_format_from_string(f);
}

/* The first checks of a two-input run, with both decoded formats: the
 * sizes agree unless --scale; an RGB side is converted into the other
 * side's YUV space (*colorimetry, g_free), as its encoder would have; two
 * YUV streams are compared as stored, as libvmaf does (their colorimetry
 * labels are often guesses, and re-matrixing on a wrong label would itself
 * be measured), with a note when one is full range and the other limited. */
static gboolean check_pair(App *app, const GstVideoInfo *ri, const GstVideoInfo *di,
                           char **colorimetry)
{
    if ((ri->width != di->width || ri->height != di->height) && !app->o.scale) {
        qmc_post_error(app, "sizes differ: reference is %dx%d, distorted is %dx%d "
                       "(add --scale to scale the distorted video to the reference size)",
                       ri->width, ri->height, di->width, di->height);
        return FALSE;
    }
    app->scaled = ri->width != di->width || ri->height != di->height;
    if (GST_VIDEO_INFO_IS_RGB(ri) && GST_VIDEO_INFO_IS_YUV(di))
        *colorimetry = gst_video_colorimetry_to_string(&di->colorimetry);
    else if (GST_VIDEO_INFO_IS_RGB(di) && GST_VIDEO_INFO_IS_YUV(ri))
        *colorimetry = gst_video_colorimetry_to_string(&ri->colorimetry);
    else if (GST_VIDEO_INFO_IS_YUV(ri) && GST_VIDEO_INFO_IS_YUV(di) &&
             ri->colorimetry.range != di->colorimetry.range &&
             ri->colorimetry.range != GST_VIDEO_COLOR_RANGE_UNKNOWN &&
             di->colorimetry.range != GST_VIDEO_COLOR_RANGE_UNKNOWN)
        app->range_note = TRUE;
    return TRUE;
}

/* A two-input run's timing: each side's frame duration (the gap check), a
 * warning when the rates differ, the frames to expect (the progress line). */
static void time_pair(App *app, const GstVideoInfo *ri, const GstVideoInfo *di)
{
    app->side[REF].dur = ri->fps_n > 0 ? app->frame_dur : GST_CLOCK_TIME_NONE;
    app->side[DIST].dur = di->fps_n > 0 ?
        gst_util_uint64_scale_int(GST_SECOND, di->fps_d, di->fps_n) : GST_CLOCK_TIME_NONE;
    if (!app->o.pair_by_time && ri->fps_n > 0 && di->fps_n > 0 &&
        (gint64)ri->fps_n * di->fps_d != (gint64)di->fps_n * ri->fps_d)
        qmc_post_warning(app, "frame rates differ: reference %.4g fps, distorted %.4g fps; "
                     "--pair-by index pairs frame N with frame N whatever their times "
                     "(--pair-by time pairs the nearest frames in time)",
                     (double)ri->fps_n / ri->fps_d, (double)di->fps_n / di->fps_d);
    if (app->side[REF].raw)
        app->total_frames = app->side[REF].raw_frames - app->o.skip[REF];
    else if (app->side[REF].mapped && app->side[REF].map.frames > app->o.skip[REF])
        app->total_frames = app->side[REF].map.frames - app->o.skip[REF];
    if (app->o.max_frames && (!app->total_frames || app->o.max_frames < app->total_frames))
        app->total_frames = app->o.max_frames;
}

/* Whether side s's decoded pictures may reach its element in CUDA memory:
 * NVDEC's decoders offer it, and the element's CUDA backend reads it in
 * place.  Only a stream that needs no conversion (already in the
 * comparison format, no colour space to change) and no scaling (no scaler
 * in its branch, or already the reference's size) may: videoconvert and
 * the scalers pass other memory through but work on system memory only.
 * Without it each picture is copied to the host by its decoder and back to
 * the GPU by the element, and a ladder's reference once per rendition. */
static gboolean stays_on_gpu(const App *app, const Side *s, gboolean colorimetry)
{
    GstVideoInfo vi;

    if ((app->o.backend && !strcmp(app->o.backend, "cpu")) || colorimetry || !s->caps ||
        !gst_video_info_from_caps(&vi, s->caps) || GST_VIDEO_INFO_FORMAT(&vi) != app->target)
        return FALSE;
    return !s->scale || (GST_VIDEO_INFO_WIDTH(&vi) == GST_VIDEO_INFO_WIDTH(&app->ref_info) &&
                         GST_VIDEO_INFO_HEIGHT(&vi) == GST_VIDEO_INFO_HEIGHT(&app->ref_info));
}

/* Side s's capsfilter, set before its first caps pass the hold: the
 * comparison format, and for a distorted side the reference's size; in
 * CUDA memory first where stays_on_gpu() allows (a decoder without CUDA
 * memory takes the second structure). */
static void set_filter(App *app, Side *s, const char *colorimetry)
{
    GstCaps *c = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING,
                                     gst_video_format_to_string(app->target), NULL);

    if (colorimetry)
        gst_caps_set_simple(c, "colorimetry", G_TYPE_STRING, colorimetry, NULL);
    if (s != &app->side[REF])
        gst_caps_set_simple(c, "width", G_TYPE_INT, GST_VIDEO_INFO_WIDTH(&app->ref_info),
                            "height", G_TYPE_INT, GST_VIDEO_INFO_HEIGHT(&app->ref_info), NULL);
    if (stays_on_gpu(app, s, colorimetry != NULL)) {
        GstCaps *cuda = gst_caps_copy(c);
        gst_caps_set_features(cuda, 0, gst_caps_features_new("memory:CUDAMemory", NULL));
        c = gst_caps_merge(cuda, c);
    }
    g_object_set(s->filter, "caps", c, NULL);
    gst_caps_unref(c);
}

/* Called with app->lock held once the decoded formats it needs are known
 * (ready()): choose the comparison format and size, set the capsfilters
 * (a ladder's renditions not decoded yet get theirs in hold_probe()). */
static gboolean configure(App *app)
{
    GstVideoInfo *ri = &app->ref_info, di;
    const Side *pair = app->o.ladder ? NULL : &app->side[DIST];
    char *colorimetry = NULL;

    if (!gst_video_info_from_caps(ri, app->side[REF].caps) ||
        (pair && !gst_video_info_from_caps(&di, pair->caps))) {
        /* (with two inputs, either may be the one) */
        if (pair)
            qmc_post_error(app, "cannot read the decoded video format");
        else
            qmc_post_error(app, "%s: cannot read the decoded video format",
                           app->side[REF].display);
        return FALSE;
    }
    if (pair && !check_pair(app, ri, &di, &colorimetry))
        return FALSE;
    app->target = compare_format(((Side *)app->dists->pdata[0])->qm, GST_VIDEO_INFO_FORMAT(ri));
    if (pair)
        app->converted = GST_VIDEO_INFO_FORMAT(&di) != app->target;
    set_filter(app, &app->side[REF], colorimetry);
    for (guint i = 0; i < app->dists->len; i++)
        set_filter(app, app->dists->pdata[i], colorimetry);
    g_free(colorimetry);
    /* index pairing gives every stream the reference's frame duration */
    app->frame_dur = ri->fps_n > 0 ? gst_util_uint64_scale_int(GST_SECOND, ri->fps_d, ri->fps_n)
                                   : GST_SECOND / 25;
    if (pair)
        time_pair(app, ri, &di);
    app->configured = TRUE;
    return TRUE;
}

/* Whether configure() can run, from the hold probe of side s: at the
 * reference's caps; with two inputs once the distorted's are known too (its
 * size and colour space decide).  A ladder's reference waits for no
 * rendition: it feeds them all. */
static gboolean ready(App *app, const Side *s)
{
    if (app->o.ladder)
        return s == &app->side[REF];
    return app->side[REF].caps && app->side[DIST].caps;
}

static void release(Side *s)
{
    if (s->block_id) {
        gst_pad_remove_probe(s->hold_pad, s->block_id);
        s->block_id = 0;
    }
}

/* Holds each decoded stream at its first caps until the comparison format
 * is chosen: the distorted streams' conversion depends on the reference's
 * format and size. */
static GstPadProbeReturn hold_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Side *s = data;
    App *app = s->app;
    GstEvent *ev;
    GstPadProbeReturn ret = GST_PAD_PROBE_OK;

    if (!(GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM))
        return GST_PAD_PROBE_OK; /* data before caps: keep it waiting */
    ev = GST_PAD_PROBE_INFO_EVENT(info);
    if (GST_EVENT_TYPE(ev) != GST_EVENT_CAPS)
        return GST_PAD_PROBE_PASS; /* stream-start and the like go through */

    g_mutex_lock(&app->lock);
    if (!s->caps) {
        GstCaps *caps;
        gst_event_parse_caps(ev, &caps);
        s->caps = gst_caps_ref(caps);
    }
    if (!app->configured && ready(app, s) && configure(app)) {
        /* the others whose caps came wait in this same probe: release
         * them (a ladder's renditions not decoded yet keep theirs, which
         * sets their capsfilter from their caps when they come) */
        if (s != &app->side[REF])
            release(&app->side[REF]);
        for (guint i = 0; i < app->dists->len; i++) {
            Side *d = app->dists->pdata[i];
            if (d != s && d->caps)
                release(d);
        }
    } else if (app->configured && app->o.ladder && s != &app->side[REF]) {
        /* a rendition whose caps came after configure(): its hold was
         * kept for this (those whose caps came before were set and
         * released there) */
        set_filter(app, s, NULL);
    }
    if (app->configured) {
        s->block_id = 0;
        ret = GST_PAD_PROBE_REMOVE;
    }
    g_mutex_unlock(&app->lock);
    return ret;
}

/* ------------------------------------------------------------ the element */

/* An enum property from its nick, or a usage error listing the choices. */
static void set_enum(GstElement *e, const char *prop, const char *nick, const char *opt)
{
    GParamSpec *ps = g_object_class_find_property(G_OBJECT_GET_CLASS(e), prop);
    GEnumClass *ec = g_type_class_ref(ps->value_type);
    GEnumValue *v = g_enum_get_value_by_nick(ec, nick);
    if (!v) {
        GString *l = g_string_new(NULL);
        for (guint i = 0; i < ec->n_values; i++)
            g_string_append_printf(l, "%s%s", i ? ", " : "", ec->values[i].value_nick);
        qmc_usage_error("%s: '%s' is not one of %s", opt, nick, l->str);
    }
    g_object_set(e, prop, v->value, NULL);
    g_type_class_unref(ec);
}

/* Find the element: GST_PLUGIN_PATH or an installed copy first, then the
 * install directory of this build, then the build tree (so that
 * build/tools/qmetric-compare works without any setup). */
static gboolean find_qmetric(void)
{
    static const char *const dirs[] = {
#ifdef QM_PLUGIN_INSTALL_DIR
        QM_PLUGIN_INSTALL_DIR,
#endif
#ifdef QM_BUILD_PLUGIN_DIR
        QM_BUILD_PLUGIN_DIR,
#endif
    };
    GstPluginFeature *f = gst_registry_lookup_feature(gst_registry_get(), "qmetric");
    for (size_t i = 0; !f && i < G_N_ELEMENTS(dirs); i++) {
        if (g_file_test(dirs[i], G_FILE_TEST_IS_DIR)) {
            gst_registry_scan_path(gst_registry_get(), dirs[i]);
            f = gst_registry_lookup_feature(gst_registry_get(), "qmetric");
        }
    }
    if (f)
        gst_object_unref(f);
    return f != NULL;
}

/* The metrics of this build (the engine's catalogue, qm_metric_names()). */
static char **known_metrics(void)
{
    return g_strdupv((char **)qm_metric_names());
}

static gboolean element_has_metric(char **metrics, const char *metric)
{
    return g_strv_contains((const char *const *)metrics, metric);
}

/* --pool, plus every statistic a --fail-below gate reads (vmaf.p5 needs p5
 * pooled even when --pool did not ask for it). */
static void set_pool(App *app, GstElement *qm)
{
    const Options *o = &app->o;
    GParamSpec *ps = g_object_class_find_property(G_OBJECT_GET_CLASS(qm), "pool");
    GFlagsClass *fc = g_type_class_ref(ps->value_type);
    GValue v = G_VALUE_INIT;
    guint flags;

    g_value_init(&v, ps->value_type);
    if (o->pool) {
        if (!gst_value_deserialize(&v, o->pool))
            qmc_usage_error("--pool: '%s' is not a list of min, max, mean, harmonic_mean, "
                            "p1, p5", o->pool);
    } else {
        g_object_get_property(G_OBJECT(qm), "pool", &v);
    }
    flags = g_value_get_flags(&v);
    for (guint i = 0; i < o->thresholds->len; i++) {
        Threshold *t = &g_array_index(o->thresholds, Threshold, i);
        GFlagsValue *f = g_flags_get_value_by_nick(fc, t->stat);
        if (!f)
            qmc_usage_error("--fail-below: this qmetric element does not pool '%s'", t->stat);
        flags |= f->value;
    }
    g_value_set_flags(&v, flags);
    g_object_set_property(G_OBJECT(qm), "pool", &v);
    g_value_unset(&v);
    g_type_class_unref(fc);
}

/* The metric list: the defaults, --feature, and a check of every name. */
static void resolve_metrics(App *app, GstElement *qm)
{
    const Options *o = &app->o;
    char **known = known_metrics();
    gboolean vmaf = element_has_metric(known, "vmaf") && element_has_metric(known, "vif") &&
                    element_has_metric(known, "adm") && element_has_metric(known, "motion");
    if (o->preset && !o->metrics->len) {
        /* the preset is the selection (the element's "preset"); --feature
         * NAME adds to it */
    } else if (!o->metrics->len && !o->features->len && !o->feature_opts->len) {
        /* libvmaf's default (VMAF) plus the two scores everyone asks for;
         * without VMAF in this build, the two alone */
        qmc_append_list(app->o.metrics, vmaf ? "vmaf,psnr,float_ssim" : "psnr,float_ssim");
    } else if (!o->metrics->len && vmaf) {
        /* libvmaf: --feature adds to the model's features */
        qmc_append_list(app->o.metrics, "vmaf");
    }
    if (o->features->len)
        qmc_append_list(app->o.metrics, o->features->str);
    if (known[0]) {
        /* a misspelt metric is a usage error, named before anything runs */
        char **m = g_strsplit(o->metrics->str, ",", -1);
        for (char **it = m; *it; it++) {
            char *name = g_strstrip(*it);
            if (*name && strcmp(name, "all") && strcmp(name, "default") &&
                !element_has_metric(known, name)) {
                char *l = g_strjoinv(", ", known);
                qmc_usage_error("--metrics: unknown metric '%s' (this build has: %s, or all)",
                                name, l);
            }
        }
        g_strfreev(m);
    }
    g_strfreev(known);
}

/* Everything but the log: the same for every element of a ladder.  The
 * metric list is completed (defaults, --feature) on the first call only. */
static void configure_qmetric(App *app, GstElement *qm)
{
    static gboolean resolved;
    const Options *o = &app->o;

    if (!resolved) {
        resolved = TRUE;
        resolve_metrics(app, qm);
    }
    if (o->preset) {
        if (!g_object_class_find_property(G_OBJECT_GET_CLASS(qm), "preset"))
            qmc_usage_error("--%.*s: this qmetric element has no presets (no \"preset\" "
                            "property)", (int)strcspn(o->preset, "="), o->preset);
        g_object_set(qm, "preset", o->preset, NULL);
    }
    if (o->metrics->len)
        g_object_set(qm, "metrics", o->metrics->str, NULL);
    g_object_set(qm, "post-messages", TRUE, NULL);
    if (o->feature_opts->len) {
        if (!g_object_class_find_property(G_OBJECT_GET_CLASS(qm), "features"))
            qmc_usage_error("--feature %s: this qmetric element takes no feature options "
                            "(it has no \"features\" property)", o->feature_opts->str);
        g_object_set(qm, "features", o->feature_opts->str, NULL);
    }
    if (o->models->len)
        g_object_set(qm, "model", o->models->str, NULL);
    if (o->enable_transform)
        g_object_set(qm, "enable-transform", TRUE, NULL);
    if (o->disable_clip)
        g_object_set(qm, "disable-clip", TRUE, NULL);
    if (o->subsample)
        g_object_set(qm, "subsample", (guint)o->subsample, NULL);
    if (o->threads)
        g_object_set(qm, "threads", (guint)o->threads, NULL);
    if (o->backend)
        set_enum(qm, "backend", o->backend, "--backend");
    if (o->cuda_device_id >= 0)
        g_object_set(qm, "cuda-device-id", o->cuda_device_id, NULL);
    set_pool(app, qm);
}

void qmc_require_qmetric(void)
{
    if (!find_qmetric()) {
        fprintf(stderr, "qmetric-compare: the qmetric GStreamer element was not found: "
                "build it (ninja -C build) or set GST_PLUGIN_PATH to its directory\n");
        exit(EXIT_USAGE);
    }
}

/* The element of the i-th distorted side (-1: the one of a two-input run),
 * configured; its log goes to log (a temporary file) when not NULL. */
static GstElement *make_qmetric(App *app, int i, const char *log)
{
    char name[32] = "qmetric";
    GstElement *qm;

    if (i >= 0)
        g_snprintf(name, sizeof(name), "qmetric%d", i);
    qm = gst_element_factory_make("qmetric", name);
    configure_qmetric(app, qm);
    if (app->gpus->len)
        g_object_set(qm, "cuda-device-id", qmc_gpu_for(app, MAX(i, 0)), NULL);
    if (log) {
        set_enum(qm, "log-format", app->o.log_format, "--format");
        g_object_set(qm, "log-location", log, NULL);
    }
    return qm;
}

/* a's source pad (a request pad from the template apad, or "src") to b's bpad */
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

static void hold(Side *s)
{
    s->block_id = gst_pad_add_probe(s->hold_pad, GST_PAD_PROBE_TYPE_BLOCK |
                                    GST_PAD_PROBE_TYPE_DATA_DOWNSTREAM, hold_probe, s, NULL);
}

void qmc_build_pipeline(App *app)
{
    /* a ladder's names number its renditions: qmetric0, reference-queue0 */
    const gboolean ladder = app->o.ladder;
    Side *ref = &app->side[REF];
    GstBin *bin;
    GstElement *ref_out;
    char name[64];

    app->pipeline = gst_pipeline_new("qmetric-compare");
    bin = GST_BIN(app->pipeline);
    for (guint i = 0; i < app->dists->len; i++) {
        Side *d = app->dists->pdata[i];
        /* the elements first: a chunk's reference branch sets the partner
         * timeout of the element (chunk.c) */
        d->qm = make_qmetric(app, ladder ? (int)i : -1, d->log);
        gst_bin_add(bin, d->qm);
    }
    if (!ladder)
        app->qm = ((Side *)app->dists->pdata[0])->qm;
    qmc_side_build(ref, FALSE);
    hold(ref);
    ref_out = ref->filter;
    if (ladder) {
        ref_out = qmc_make("tee", "reference-tee");
        gst_bin_add(bin, ref_out);
        gst_element_link(ref->filter, ref_out);
    }
    for (guint i = 0; i < app->dists->len; i++) {
        Side *d = app->dists->pdata[i];
        GstElement *rq, *dq, *sink;

        /* a ladder scales every rendition: those of the reference's size pass */
        qmc_side_build(d, ladder || app->o.scale);
        hold(d);
        if (ladder)
            g_snprintf(name, sizeof(name), "reference-queue%u", i);
        else
            g_strlcpy(name, "reference-queue", sizeof(name));
        rq = qmc_make("queue", name);
        g_snprintf(name, sizeof(name), "%s-queue", d->prefix);
        dq = qmc_make("queue", name);
        /* (a ladder's are fakesink0, fakesink1, ...) */
        sink = qmc_make("fakesink", ladder ? NULL : "sink");
        g_object_set(sink, "sync", FALSE, "async", FALSE, NULL);
        gst_bin_add_many(bin, rq, dq, sink, NULL);
        link_pads(ref_out, ladder ? "src_%u" : NULL, rq, "sink");
        link_pads(rq, NULL, d->qm, "ref_sink");
        link_pads(d->filter, NULL, dq, "sink");
        link_pads(dq, NULL, d->qm, "dist_sink");
        link_pads(d->qm, NULL, sink, "sink");
    }
}
