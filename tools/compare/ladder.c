/* qmetric-compare: a ladder, several renditions of one reference scored in
 * one pipeline.  The reference is decoded once and feeds one qmetric
 * element per rendition (pipeline.c); each rendition is decoded, converted
 * to the comparison format and scaled to the reference's size.  Frames pair
 * by index, as in the two-input comparison.  At the end (ladderout.c): one
 * row per rendition as a table, CSV, JSON and a rate-quality chart; each
 * rendition's per-frame log.
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "ladder.h"

#include "json.h"

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
    GPtrArray *rends = app->dists;
    Rend *r = g_new0(Rend, 1);
    const char *eq = strchr(arg, '=');
    const char *path = arg;
    char prefix[32];
    if (eq && eq != arg && !g_file_test(arg, G_FILE_TEST_EXISTS) &&
        !memchr(arg, '/', eq - arg)) {
        r->name = g_strndup(arg, eq - arg);
        path = eq + 1;
    }
    g_snprintf(prefix, sizeof(prefix), "rendition%u", rends->len);
    qmc_side_init(&r->s, app, DIST, prefix, "a rendition");
    r->s.display = g_strdup(path);
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
    if (!app->dists->len)
        qmc_input_error("--manifest %s: no renditions in it", file);
    g_free(text);
    g_free(dir);
}

/* A Y4M file that can be read in place: its spec. */
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

/* A rendition of another frame rate than the reference's still pairs by
 * index: said once, as the two-input comparison says it.  On the
 * capsfilter's sink pad, where the caps still carry the decoded rate (the
 * flow probe after it puts the reference's timeline in them). */
static GstPadProbeReturn rate_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Rend *r = data;
    const GstVideoInfo *ri = &r->s.app->ref_info;
    GstEvent *ev = GST_PAD_PROBE_INFO_EVENT(info);
    GstCaps *caps;
    int n, d;

    if (GST_EVENT_TYPE(ev) != GST_EVENT_CAPS || r->rate_warned || ri->fps_n <= 0)
        return GST_PAD_PROBE_OK;
    gst_event_parse_caps(ev, &caps);
    if (!gst_structure_get_fraction(gst_caps_get_structure(caps, 0), "framerate", &n, &d) ||
        n <= 0 || (gint64)n * ri->fps_d == (gint64)ri->fps_n * d)
        return GST_PAD_PROBE_OK;
    r->rate_warned = TRUE;
    qmc_post_warning(r->s.app, "frame rates differ: reference %.4g fps, %s %.4g fps; a ladder "
                     "pairs frame N with frame N whatever their times", (double)ri->fps_n /
                     ri->fps_d, r->name, (double)n / d);
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

/* What a rendition's row needs from its branch besides the scores: the
 * codec and any bitrate tag (a Y4M file read in place: the codec as
 * y4mdec's input would name it), a warning about its frame rate. */
static void watch_rendition(Rend *r)
{
    GstPad *pad;

    if (r->s.linked) {
        GstCaps *y4m = gst_caps_from_string("application/x-yuv4mpeg, y4mversion=(int)2");
        r->codec = gst_pb_utils_get_codec_description(y4m);
        gst_caps_unref(y4m);
    } else {
        g_signal_connect(r->s.src, "deep-element-added", G_CALLBACK(on_element_added), r);
    }
    pad = gst_element_get_static_pad(r->s.filter, "sink");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, rate_probe, r, NULL);
    gst_object_unref(pad);
}

/* ---------------------------------------------------------------- run */

/* A gate or a --plot-metrics name on a feature that no element scores is a
 * usage error at the first frame (the features are the same for every
 * rendition). */
static void ladder_scores(App *app, Side *dist, const GstStructure *st)
{
    if (!app->pairs_done++) {
        char **f = qmc_score_features(st);
        if (qmc_check_gate_features(app, f))
            qmc_check_plot_features(app, f);
        g_strfreev(f);
    }
}

static void ladder_summary(App *app, Side *dist, const GstStructure *st)
{
    Rend *r = (Rend *)dist;
    if (r) {
        gst_clear_structure(&r->summary);
        r->summary = gst_structure_copy(st);
    }
}

/* no progress line; the run ends with its elements (each counts its own
 * rendition's frames) */
static const QmcRunMode ladder_mode = { ladder_scores, ladder_summary, FALSE, FALSE };

/* ---------------------------------------------------------------- entry */

/* --dry-run: which rendition runs on which device, on stdout */
static G_GNUC_NORETURN void dry_run(App *app)
{
    printf("%-16s %s (decoded once)\n", "reference", app->side[REF].display);
    for (guint i = 0; i < app->dists->len; i++) {
        Rend *r = app->dists->pdata[i];
        printf("%-16s %s -> ", r->name, r->s.display);
        qmc_print_device(app, i);
    }
    qmc_exit_after_report(FALSE);
}

/* --detect-offset: each rendition's offset against the reference */
static G_GNUC_NORETURN void detect_offsets(App *app)
{
    gboolean json = app->o.summary == SUMMARY_JSON;
    QmcAlignInput ref = qmc_align_input(&app->side[REF]);
    if (json)
        fputs("{\"renditions\": [", stdout);
    for (guint i = 0; i < app->dists->len; i++) {
        Rend *r = app->dists->pdata[i];
        QmcAlignInput dist = qmc_align_input(&r->s);
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
    Side *ref = &app->side[REF];
    GPtrArray *rends;
    int code;

    if (o->plot || o->pair_by_time)
        qmc_usage_error("%s is not available with several renditions",
                        o->plot ? "--plot" : "--pair-by time");
    if (o->output && !strcmp(o->output, "-"))
        qmc_usage_error("-o -: a ladder writes one log per rendition: give a directory "
                        "(-o DIR/) or a pattern with {name}");
    rends = app->dists = g_ptr_array_new();
    qmc_side_init(ref, app, REF, "reference", "the reference");
    ref->display = g_strdup(o->input[REF]);
    qmc_check_ladder_input(app, ref);
    if (o->input[DIST])
        add_rendition(app, o->input[DIST]);
    for (guint i = 0; i < o->extra->len; i++)
        add_rendition(app, o->extra->pdata[i]);
    if (o->manifest)
        read_manifest(app, o->manifest);
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        r->size = qmc_check_ladder_input(app, &r->s);
    }
    if (o->dry_run)
        dry_run(app);
    if (o->detect_offset)
        detect_offsets(app);
    qmc_require_qmetric();
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
            r->s.log = r->log.tmp;
            g_free(p);
        }
    }
    if (o->ladder_csv)
        qmc_output_prepare(&csv, "--ladder-csv", o->ladder_csv);
    if (o->ladder_json)
        qmc_output_prepare(&json, "--ladder-json", o->ladder_json);
    if (o->plot_rd)
        qmc_output_prepare(&rd, "--plot-rd", o->plot_rd);
    qmc_build_pipeline(app);
    for (guint i = 0; i < rends->len; i++)
        watch_rendition(rends->pdata[i]);
    if (app->gpus->len && !o->quiet) {
        fputs("qmetric-compare: GPUs:", stderr);
        for (guint i = 0; i < rends->len; i++)
            fprintf(stderr, "%s %s on %d", i ? "," : "", ((Rend *)rends->pdata[i])->name,
                    qmc_gpu_for(app, i));
        fputc('\n', stderr);
    }

    qmc_run(app, &ladder_mode);
    for (guint i = 0; i < rends->len; i++) {
        Rend *r = rends->pdata[i];
        if (!gst_element_query_duration(r->s.src, GST_FORMAT_TIME, &r->container_dur))
            r->container_dur = -1;
    }
    qmc_run_stop(app);

    /* every rendition has the reference's frame count, as in a single run */
    for (guint i = 0; i < rends->len && !app->error && !app->interrupted; i++) {
        Rend *r = rends->pdata[i];
        guint64 n = 0;
        if (r->summary)
            gst_structure_get_uint64(r->summary, "frames", &n);
        if (!r->summary || !n)
            qmc_fail(app, EXIT_USAGE, "%s: no frames were compared", r->s.display);
        else if (!o->shortest && !o->max_frames && r->s.frames != ref->frames)
            qmc_fail(app, EXIT_USAGE, "frame counts differ: reference has %" G_GUINT64_FORMAT
                     " frames, %s %" G_GUINT64_FORMAT " (--shortest accepts this)",
                     ref->frames, r->s.display, r->s.frames);
    }
    code = qmc_ladder_report(app, &csv, &json, &rd);
    if (app->error)
        fprintf(stderr, "qmetric-compare: %s\n", app->error);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "qmetric-compare: standard output cannot be written\n");
        code = EXIT_USAGE;
    }
    qmc_run_free(app);
    return code;
}
