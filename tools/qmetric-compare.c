/* qmetric-compare: measure the quality of a video against its reference.
 *
 *   qmetric-compare REFERENCE DISTORTED [options]
 *
 * Any two files or URIs GStreamer can decode (or raw .yuv with --size and
 * --format) are decoded, brought to one pixel format (the reference's),
 * optionally scaled (--scale), paired frame by frame and scored by the
 * qmetric element.  Prints a progress line while it runs and a summary
 * table at the end; writes libvmaf-style logs (--output) and an SVG chart
 * (--plot); --fail-below turns a score into an exit status for CI.
 *
 * Exit status: 0 success, 1 a --fail-below threshold was not met, 2 a usage
 * or input error (one line on stderr says which), 130 interrupted.
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib-unix.h>
#include <glib/gstdio.h>
#include <gst/gst.h>
#include <gst/pbutils/pbutils.h>
#include <gst/video/video.h>

#include "qmplot.h"

#ifndef QM_VERSION
#define QM_VERSION "unknown"
#endif

#define EXIT_FAIL_BELOW 1
#define EXIT_USAGE 2
#define EXIT_INTERRUPTED 130

enum { REF = 0, DIST = 1 };
static const char *const side_name[2] = { "reference", "distorted" };

typedef struct {
    char *feature;
    double value;
} Threshold;

typedef struct {
    char *input[2];
    GString *metrics;          /* --metrics and --feature, comma-separated */
    GString *models;           /* --model, comma-separated */
    gboolean enable_transform, disable_clip;
    char *backend;
    int cuda_device_id;        /* -1: any */
    int subsample, threads;
    char *output, *log_format;
    char *pool;
    /* raw input */
    int width, height;
    char *raw_format;          /* GStreamer name, e.g. I420 */
    int pix_fmt, bitdepth;     /* libvmaf style: 420/422/444/400, 8..16 */
    int fps_n, fps_d;
    /* pipeline */
    gboolean scale;
    char *scale_method;
    gboolean pair_by_time;
    gboolean shortest;
    guint64 max_frames;        /* 0: all */
    /* results */
    char *plot;
    char *plot_metrics;
    GArray *thresholds;        /* Threshold */
    gboolean quiet;
} Options;

typedef struct App App;

typedef struct {
    App *app;
    int id;
    char *uri;
    char *display;             /* as the user wrote it */
    gboolean raw;
    guint64 raw_frames;        /* raw input: frames in the file */
    GstElement *src, *convert, *scale, *filter, *queue;
    GstPad *hold_pad;          /* videoconvert's sink pad */
    gulong block_id;           /* the probe there holding the stream until both are known */
    GstCaps *caps;             /* decoded caps, once known */
    gboolean linked;
    /* streaming thread */
    guint64 frames;            /* decoded frames seen */
    guint64 passed;            /* frames sent to qmetric */
    gint eos;                  /* atomic: read by the other stream's thread */
    char *missing;             /* a missing decoder, from the missing-plugin message */
    char *missing_video;       /* a video stream nothing decodes (unknown-type) */
} Side;

typedef struct {
    char *name;
    GArray *y;                 /* double, one per scored frame */
} Column;

struct App {
    Options o;
    Side side[2];
    GstElement *pipeline, *qm;
    GMainLoop *loop;
    GMutex lock;
    gboolean configured;
    GstClockTime frame_dur;
    GstVideoFormat target;
    gboolean scaled, converted;
    gboolean range_note;       /* one side full range, the other limited */
    gboolean pipeline_eos;
    gboolean interrupted;
    int exit_code;
    char *error;
    /* per-frame results, main thread only */
    GArray *x;                 /* double: frame index of each scored frame */
    GPtrArray *cols;           /* Column: the features we keep (plot, progress, thresholds) */
    char **features;           /* every feature the element reports */
    gboolean features_checked;
    char **plot_features;
    char *progress_feature;
    double progress_sum;
    guint64 progress_n;
    guint64 pairs_done;
    GstStructure *summary;
    gint64 t0;
    /* progress line */
    gboolean tty;
    gboolean line_drawn;
    guint64 total_frames;      /* estimate; 0 unknown */
};

/* ------------------------------------------------------------------ errors */

static void clear_progress(App *app)
{
    if (app->line_drawn) {
        fputs("\r\033[K", stderr);
        app->line_drawn = FALSE;
    }
}

/* The first error wins: it is the cause, later ones are consequences. */
static void fail(App *app, int code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static void fail(App *app, int code, const char *fmt, ...)
{
    va_list ap;
    if (app->error)
        return;
    va_start(ap, fmt);
    app->error = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    app->exit_code = code;
    if (app->loop)
        g_main_loop_quit(app->loop);
}

/* From a streaming thread: hand the error to the main loop. */
static void post_error(App *app, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void post_error(App *app, const char *fmt, ...)
{
    va_list ap;
    char *msg;
    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    gst_element_post_message(app->pipeline,
        gst_message_new_application(GST_OBJECT(app->pipeline),
            gst_structure_new("qmc-error", "message", G_TYPE_STRING, msg, NULL)));
    g_free(msg);
}

/* "qmetric-compare: MESSAGE" and tail on stderr, then exit(EXIT_USAGE). */
static G_GNUC_NORETURN void die_usage(const char *tail, const char *fmt, va_list ap)
{
    fputs("qmetric-compare: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(tail, stderr);
    exit(EXIT_USAGE);
}

/* A bad option: one line, and where to look. */
static G_GNUC_NORETURN void usage_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static void usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    die_usage(" (see qmetric-compare --help)\n", fmt, ap);
}

/* A problem with an input, found before anything runs: one line. */
static G_GNUC_NORETURN void input_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static void input_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    die_usage("\n", fmt, ap);
}

/* ----------------------------------------------------------------- options */

static void usage(FILE *f)
{
    fputs(
"usage: qmetric-compare REFERENCE DISTORTED [options]\n"
"\n"
"Measure the quality of DISTORTED against REFERENCE with the qmetric element\n"
"(VMAF, PSNR, SSIM, MS-SSIM, PSNR-HVS, CIEDE2000, CAMBI as libvmaf 3.2.0).\n"
"Inputs: any file or URI GStreamer decodes; raw .yuv/.raw with --size.\n"
"\n"
"Metrics\n"
"  --metrics LIST          comma-separated: vmaf, psnr, float_ssim, float_ms_ssim,\n"
"                          psnr_hvs, ciede, cambi, ..., or all\n"
"                          (default: vmaf,psnr,float_ssim)\n"
"  --feature NAME          add one metric (libvmaf's --feature; repeatable)\n"
"  -m, --model MODEL       VMAF model: vmaf_v0.6.1, vmaf_4k_v0.6.1, vmaf_v0.6.1neg\n"
"                          or a JSON path; repeatable or comma-separated;\n"
"                          libvmaf's version=/path=/enable_transform/disable_clip\n"
"                          keys are accepted\n"
"  --enable-transform      apply the model's score transform\n"
"  --disable-clip          do not clip VMAF to the model's range\n"
"  --subsample N           score every Nth frame only\n"
"  --threads N             CPU threads (default: one per core)\n"
"  --backend auto|cpu|cuda where the metrics run (default auto)\n"
"  --cuda-device-id N      CUDA device (default: any)\n"
"\n"
"Inputs\n"
"  --size WxH              raw input size (or --width W --height H)\n"
"  --format FMT            raw input pixel format, GStreamer's name (I420,\n"
"                          I420_10LE, NV12, Y444, ...; default I420)\n"
"  -p, --pixel_format 420|422|444|400, -b, --bitdepth 8|10|12|16\n"
"                          the same, libvmaf style\n"
"  --fps N[/D]             raw input frame rate (default 25)\n"
"  --scale[=METHOD]        scale the distorted video to the reference size\n"
"                          (METHOD: bilinear, catrom, lanczos, ...; default catrom)\n"
"  --pair-by index|time    pair the Nth frames (default, as libvmaf) or frames\n"
"                          with the same timestamp\n"
"  --shortest              when frame counts differ, compare the common frames\n"
"                          instead of failing\n"
"  --frames N              compare the first N frames only (libvmaf --frame_cnt)\n"
"\n"
"Results\n"
"  -o, --output FILE       per-frame log (libvmaf layout)\n"
"  --format json|xml|csv   its format (default: from the extension, else json);\n"
"                          also --json, --xml, --csv\n"
"  --pool LIST             pooled values: min,max,mean,harmonic_mean,p1,p5\n"
"  --plot FILE.svg         chart of the per-frame scores\n"
"  --plot-metrics LIST     features (or metrics) to chart (default: vmaf, else\n"
"                          the first feature)\n"
"  --fail-below FEATURE=VALUE\n"
"                          exit 1 if FEATURE's mean is below VALUE (repeatable)\n"
"  -q, --quiet             no progress line\n"
"  -v, --version           print the version\n"
"  --help                  this text\n"
"\n"
"Exit status: 0 ok, 1 a --fail-below threshold failed, 2 usage or input error.\n",
        f);
}

static int parse_int(const char *opt, const char *s, int min, int max)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        usage_error("%s: '%s' is not a whole number in %d..%d", opt, s, min, max);
    return (int)v;
}

static void parse_fraction(const char *opt, const char *s, int *n, int *d)
{
    double v;
    char *end;
    if (sscanf(s, "%d/%d", n, d) == 2 && *n > 0 && *d > 0)
        return;
    v = g_ascii_strtod(s, &end);
    if (end == s || *end || !(v > 0) || v > 1000)
        usage_error("%s: '%s' is not a frame rate (e.g. 25, 29.97, 30000/1001)", opt, s);
    /* 29.97 and friends are NTSC rates */
    if (fabs(v * 1001 / 1000 - floor(v * 1001 / 1000 + 0.5)) < 1e-3 && fabs(v - floor(v)) > 1e-3) {
        *n = (int)floor(v * 1001 / 1000 + 0.5) * 1000;
        *d = 1001;
    } else {
        gst_util_double_to_fraction(v, n, d);
    }
}

static void append_list(GString *s, const char *items)
{
    if (s->len)
        g_string_append_c(s, ',');
    g_string_append(s, items);
}

/* libvmaf's --model takes "version=NAME:name=..:enable_transform"; ours takes
 * a name or a path.  Accept both, so that scripts can move over unchanged. */
static void add_model(Options *o, const char *arg)
{
    char **parts, **p;
    const char *model = NULL;

    if (!strchr(arg, '=')) {
        append_list(o->models, arg);
        return;
    }
    parts = g_strsplit(arg, ":", -1);
    for (p = parts; *p; p++) {
        char *eq = strchr(*p, '=');
        const char *key = *p, *val = eq ? eq + 1 : "true";
        if (eq)
            *eq = '\0';
        if (!strcmp(key, "version") || !strcmp(key, "path"))
            model = val;
        else if (!strcmp(key, "enable_transform"))
            o->enable_transform = !strcmp(val, "true");
        else if (!strcmp(key, "disable_clip"))
            o->disable_clip = !strcmp(val, "true");
        else if (!strcmp(key, "name"))
            fprintf(stderr, "qmetric-compare: note: --model name=%s ignored: one model "
                    "is reported as \"vmaf\", several by their model names\n", val);
        else
            usage_error("--model: unknown key '%s' (expected version=, path=, "
                        "enable_transform, disable_clip)", key);
    }
    if (!model)
        usage_error("--model '%s' names no model (version=... or path=...)", arg);
    append_list(o->models, model);
    g_strfreev(parts);
}

static gboolean is_log_format(const char *s)
{
    return !g_ascii_strcasecmp(s, "json") || !g_ascii_strcasecmp(s, "xml") ||
           !g_ascii_strcasecmp(s, "csv");
}

static void parse_size(const char *s, int *w, int *h)
{
    if (sscanf(s, "%dx%d", w, h) != 2 || *w <= 0 || *h <= 0 || *w > 65536 || *h > 65536)
        usage_error("--size: '%s' is not WIDTHxHEIGHT (e.g. 1920x1080)", s);
}

static void parse_options(Options *o, int argc, char **argv)
{
    enum {
        O_METRICS = 256, O_FEATURE, O_TRANSFORM, O_NOCLIP, O_SUBSAMPLE, O_THREADS,
        O_BACKEND, O_CUDA, O_SIZE, O_WIDTH, O_HEIGHT, O_FORMAT, O_FPS, O_SCALE,
        O_PAIR, O_SHORTEST, O_FRAMES, O_JSON, O_XML, O_CSV, O_POOL, O_PLOT,
        O_PLOT_METRICS, O_FAIL, O_HELP,
    };
    static const struct option opts[] = {
        { "reference", required_argument, NULL, 'r' },
        { "distorted", required_argument, NULL, 'd' },
        { "metrics", required_argument, NULL, O_METRICS },
        { "feature", required_argument, NULL, O_FEATURE },
        { "model", required_argument, NULL, 'm' },
        { "enable-transform", no_argument, NULL, O_TRANSFORM },
        { "enable_transform", no_argument, NULL, O_TRANSFORM },
        { "disable-clip", no_argument, NULL, O_NOCLIP },
        { "disable_clip", no_argument, NULL, O_NOCLIP },
        { "subsample", required_argument, NULL, O_SUBSAMPLE },
        { "threads", required_argument, NULL, O_THREADS },
        { "backend", required_argument, NULL, O_BACKEND },
        { "cuda-device-id", required_argument, NULL, O_CUDA },
        { "cuda_device_id", required_argument, NULL, O_CUDA },
        { "size", required_argument, NULL, O_SIZE },
        { "width", required_argument, NULL, O_WIDTH },
        { "height", required_argument, NULL, O_HEIGHT },
        { "format", required_argument, NULL, O_FORMAT },
        { "pixel_format", required_argument, NULL, 'p' },
        { "pixel-format", required_argument, NULL, 'p' },
        { "bitdepth", required_argument, NULL, 'b' },
        { "fps", required_argument, NULL, O_FPS },
        { "scale", optional_argument, NULL, O_SCALE },
        { "pair-by", required_argument, NULL, O_PAIR },
        { "shortest", no_argument, NULL, O_SHORTEST },
        { "frames", required_argument, NULL, O_FRAMES },
        { "frame_cnt", required_argument, NULL, O_FRAMES },
        { "output", required_argument, NULL, 'o' },
        { "json", no_argument, NULL, O_JSON },
        { "xml", no_argument, NULL, O_XML },
        { "csv", no_argument, NULL, O_CSV },
        { "pool", required_argument, NULL, O_POOL },
        { "plot", required_argument, NULL, O_PLOT },
        { "plot-metrics", required_argument, NULL, O_PLOT_METRICS },
        { "fail-below", required_argument, NULL, O_FAIL },
        { "quiet", no_argument, NULL, 'q' },
        { "version", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, O_HELP },
        { NULL, 0, NULL, 0 },
    };
    int c, n_pos = 0;

    memset(o, 0, sizeof(*o));
    o->metrics = g_string_new(NULL);
    o->models = g_string_new(NULL);
    o->cuda_device_id = -1;
    o->fps_n = 25;
    o->fps_d = 1;
    o->thresholds = g_array_new(FALSE, FALSE, sizeof(Threshold));

    opterr = 0; /* our own one-line messages */
    while ((c = getopt_long(argc, argv, "-r:d:m:o:p:b:qvh", opts, NULL)) != -1) {
        switch (c) {
        case 1: /* a positional argument, in order */
            if (n_pos >= 2)
                usage_error("unexpected argument '%s': give REFERENCE and DISTORTED only",
                            optarg);
            if (o->input[n_pos])
                n_pos++;
            if (n_pos >= 2)
                usage_error("unexpected argument '%s'", optarg);
            o->input[n_pos++] = g_strdup(optarg);
            break;
        case 'r': g_free(o->input[REF]); o->input[REF] = g_strdup(optarg); break;
        case 'd': g_free(o->input[DIST]); o->input[DIST] = g_strdup(optarg); break;
        case O_METRICS: append_list(o->metrics, optarg); break;
        case O_FEATURE:
            /* libvmaf's "name=opt=val:..." options are not ours; take the name */
            {
                char *name = g_strndup(optarg, strcspn(optarg, "=:"));
                append_list(o->metrics, name);
                g_free(name);
            }
            break;
        case 'm': add_model(o, optarg); break;
        case O_TRANSFORM: o->enable_transform = TRUE; break;
        case O_NOCLIP: o->disable_clip = TRUE; break;
        case O_SUBSAMPLE: o->subsample = parse_int("--subsample", optarg, 1, G_MAXINT); break;
        case O_THREADS: o->threads = parse_int("--threads", optarg, 0, 64); break;
        case O_BACKEND:
            if (strcmp(optarg, "auto") && strcmp(optarg, "cpu") && strcmp(optarg, "cuda"))
                usage_error("--backend: '%s' is not auto, cpu or cuda", optarg);
            g_free(o->backend);
            o->backend = g_strdup(optarg);
            break;
        case O_CUDA: o->cuda_device_id = parse_int("--cuda-device-id", optarg, -1, G_MAXINT); break;
        case O_SIZE: parse_size(optarg, &o->width, &o->height); break;
        case O_WIDTH: o->width = parse_int("--width", optarg, 1, 65536); break;
        case O_HEIGHT: o->height = parse_int("--height", optarg, 1, 65536); break;
        case O_FORMAT:
            /* one option for both, as the values cannot be confused */
            if (is_log_format(optarg)) {
                g_free(o->log_format);
                o->log_format = g_ascii_strdown(optarg, -1);
            } else {
                if (gst_video_format_from_string(optarg) == GST_VIDEO_FORMAT_UNKNOWN)
                    usage_error("--format: '%s' is neither a log format (json, xml, csv) "
                                "nor a GStreamer pixel format (I420, NV12, I420_10LE, ...)",
                                optarg);
                g_free(o->raw_format);
                o->raw_format = g_strdup(optarg);
            }
            break;
        case 'p':
            if (strcmp(optarg, "420") && strcmp(optarg, "422") && strcmp(optarg, "444") &&
                strcmp(optarg, "400"))
                usage_error("--pixel_format: '%s' is not 420, 422, 444 or 400", optarg);
            o->pix_fmt = atoi(optarg);
            break;
        case 'b': o->bitdepth = parse_int("--bitdepth", optarg, 8, 16); break;
        case O_FPS: parse_fraction("--fps", optarg, &o->fps_n, &o->fps_d); break;
        case O_SCALE:
            o->scale = TRUE;
            g_free(o->scale_method);
            o->scale_method = g_strdup(optarg ? optarg : "catrom");
            break;
        case O_PAIR:
            if (!strcmp(optarg, "time"))
                o->pair_by_time = TRUE;
            else if (!strcmp(optarg, "index"))
                o->pair_by_time = FALSE;
            else
                usage_error("--pair-by: '%s' is not index or time", optarg);
            break;
        case O_SHORTEST: o->shortest = TRUE; break;
        case O_FRAMES: o->max_frames = (guint64)parse_int("--frames", optarg, 1, G_MAXINT); break;
        case 'o': g_free(o->output); o->output = g_strdup(optarg); break;
        case O_JSON: g_free(o->log_format); o->log_format = g_strdup("json"); break;
        case O_XML: g_free(o->log_format); o->log_format = g_strdup("xml"); break;
        case O_CSV: g_free(o->log_format); o->log_format = g_strdup("csv"); break;
        case O_POOL: g_free(o->pool); o->pool = g_strdup(optarg); break;
        case O_PLOT: g_free(o->plot); o->plot = g_strdup(optarg); break;
        case O_PLOT_METRICS: g_free(o->plot_metrics); o->plot_metrics = g_strdup(optarg); break;
        case O_FAIL: {
            const char *eq = strchr(optarg, '=');
            Threshold t;
            char *end;
            if (!eq || eq == optarg)
                usage_error("--fail-below: '%s' is not FEATURE=VALUE (e.g. vmaf=90)", optarg);
            t.value = g_ascii_strtod(eq + 1, &end);
            if (end == eq + 1 || *end || !isfinite(t.value))
                usage_error("--fail-below: '%s' is not a number", eq + 1);
            t.feature = g_strndup(optarg, eq - optarg);
            g_array_append_val(o->thresholds, t);
            break;
        }
        case 'q': o->quiet = TRUE; break;
        case 'v': printf("qmetric-compare %s (%s)\n", QM_VERSION,
                         gst_version_string());
                  exit(0);
        case 'h':
        case O_HELP: usage(stdout); exit(0);
        case ':':
            usage_error("option %s needs a value", argv[optind - 1]);
        case '?':
        default:
            if (optopt && optopt < 256)
                usage_error("unknown option -%c", optopt);
            usage_error("unknown option %s", argv[optind - 1]);
        }
    }
    if (!o->input[REF] || !o->input[DIST])
        usage_error("give two inputs: REFERENCE DISTORTED");
    if ((o->width > 0) != (o->height > 0))
        usage_error("raw input needs both --width and --height (or --size WxH)");
    if (o->output && !o->log_format) {
        /* as the user would expect from the name */
        if (g_str_has_suffix(o->output, ".xml"))
            o->log_format = g_strdup("xml");
        else if (g_str_has_suffix(o->output, ".csv"))
            o->log_format = g_strdup("csv");
        else
            o->log_format = g_strdup("json");
    }
    if (o->pix_fmt || o->bitdepth) {
        /* libvmaf's layout names -> GStreamer's planar formats */
        int pf = o->pix_fmt ? o->pix_fmt : 420, bd = o->bitdepth ? o->bitdepth : 8;
        const char *f = NULL;
        if (o->raw_format)
            usage_error("give --format or --pixel_format/--bitdepth, not both");
        if (bd == 8)
            f = pf == 420 ? "I420" : pf == 422 ? "Y42B" : pf == 444 ? "Y444" : "GRAY8";
        else if (bd == 10)
            f = pf == 420 ? "I420_10LE" : pf == 422 ? "I422_10LE" : pf == 444 ? "Y444_10LE" : NULL;
        else if (bd == 12)
            f = pf == 420 ? "I420_12LE" : pf == 422 ? "I422_12LE" : pf == 444 ? "Y444_12LE" : NULL;
        else if (bd == 16)
            f = pf == 444 ? "Y444_16LE" : pf == 400 ? "GRAY16_LE" : NULL;
        if (!f)
            usage_error("--pixel_format %d with --bitdepth %d has no planar GStreamer format",
                        pf, bd);
        o->raw_format = g_strdup(f);
    }
    if (!o->raw_format)
        o->raw_format = g_strdup("I420");
    if (o->pool) {
        /* libvmaf spells harmonic_mean with '_', GStreamer flags with '-' and '+' */
        char *p;
        for (p = o->pool; *p; p++) {
            if (*p == '_') *p = '-';
            if (*p == ',') *p = '+';
        }
    }
}

/* ------------------------------------------------------------------ inputs */

static gboolean is_raw_name(const char *s)
{
    char *l = g_ascii_strdown(s, -1);
    gboolean raw = g_str_has_suffix(l, ".yuv") || g_str_has_suffix(l, ".raw");
    g_free(l);
    return raw;
}

/* Bytes of one tightly packed frame and the plane layout of raw files as
 * libvmaf and FFmpeg write them (GStreamer's own default pads rows to 4
 * bytes, which differs for odd widths). */
static gsize raw_layout(GstVideoFormat fmt, int w, int h, int *strides, int *offsets,
                        int *n_planes)
{
    const GstVideoFormatInfo *fi = gst_video_format_get_info(fmt);
    gsize off = 0;
    guint p, c;

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

static void set_int_array(GstElement *e, const char *prop, const int *v, int n)
{
    GValue arr = G_VALUE_INIT, item = G_VALUE_INIT;
    g_value_init(&arr, GST_TYPE_ARRAY);
    g_value_init(&item, G_TYPE_INT);
    for (int i = 0; i < n; i++) {
        g_value_set_int(&item, v[i]);
        gst_value_array_append_value(&arr, &item);
    }
    g_object_set_property(G_OBJECT(e), prop, &arr);
    g_value_unset(&item);
    g_value_unset(&arr);
}

/* Check an input before anything runs, so that a typo is one clear line. */
static void check_input(App *app, Side *s, const char *arg)
{
    char *path = NULL;

    s->display = g_strdup(arg);
    if (gst_uri_is_valid(arg) && !g_str_has_prefix(arg, "file:")) {
        s->uri = g_strdup(arg); /* network and other URIs: GStreamer will tell */
        return;
    }
    if (g_str_has_prefix(arg, "file:")) {
        path = g_filename_from_uri(arg, NULL, NULL);
        if (!path)
            input_error("%s: not a valid file URI", arg);
    } else {
        path = g_strdup(arg);
    }
    if (!g_file_test(path, G_FILE_TEST_EXISTS))
        input_error("%s: no such file (the %s)", arg, side_name[s->id]);
    if (g_file_test(path, G_FILE_TEST_IS_DIR))
        input_error("%s: is a directory, not a video (the %s)", arg, side_name[s->id]);
    if (g_access(path, R_OK) != 0)
        input_error("%s: cannot be read: %s", arg, g_strerror(errno));
    s->uri = gst_filename_to_uri(path, NULL);
    s->raw = is_raw_name(path);
    if (s->raw) {
        GStatBuf st;
        int strides[4], offsets[4], np;
        GstVideoFormat fmt = gst_video_format_from_string(app->o.raw_format);
        gsize fsize;
        if (app->o.width <= 0)
            input_error("%s: raw video needs its geometry: --size WxH (and --format, "
                        "default I420)", arg);
        fsize = raw_layout(fmt, app->o.width, app->o.height, strides, offsets, &np);
        if (g_stat(path, &st) != 0)
            input_error("%s: %s", arg, g_strerror(errno));
        if (st.st_size == 0)
            input_error("%s: empty file", arg);
        if ((gsize)st.st_size % fsize)
            input_error("%s: %lld bytes is not a whole number of %dx%d %s frames (%zu "
                        "bytes each): check --size and --format", arg,
                        (long long)st.st_size, app->o.width, app->o.height,
                        app->o.raw_format, fsize);
        s->raw_frames = (guint64)st.st_size / fsize;
    }
    g_free(path);
}

/* ---------------------------------------------------------------- pipeline */

static gboolean qmetric_accepts(App *app, GstVideoFormat f)
{
    GstPad *pad = gst_element_get_static_pad(app->qm, "ref_sink");
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
static GstVideoFormat compare_format(App *app, GstVideoFormat ref)
{
    const GstVideoFormatInfo *fi = gst_video_format_get_info(ref);
    int depth = GST_VIDEO_FORMAT_INFO_DEPTH(fi, 0);
    const char *f;

    if (qmetric_accepts(app, ref))
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

/* Called with app->lock held once both decoded formats are known: choose the
 * comparison format and size, set the capsfilters, release both streams. */
static gboolean configure(App *app)
{
    GstVideoInfo ri, di;
    GstCaps *c;
    char *colorimetry = NULL;

    if (!gst_video_info_from_caps(&ri, app->side[REF].caps) ||
        !gst_video_info_from_caps(&di, app->side[DIST].caps)) {
        post_error(app, "cannot read the decoded video format");
        return FALSE;
    }
    if ((ri.width != di.width || ri.height != di.height) && !app->o.scale) {
        post_error(app, "sizes differ: reference is %dx%d, distorted is %dx%d "
                   "(add --scale to scale the distorted video to the reference size)",
                   ri.width, ri.height, di.width, di.height);
        return FALSE;
    }
    app->scaled = ri.width != di.width || ri.height != di.height;
    app->target = compare_format(app, GST_VIDEO_INFO_FORMAT(&ri));
    app->converted = GST_VIDEO_INFO_FORMAT(&di) != app->target;
    /* Two YUV streams are compared as stored, as libvmaf does: their
     * colorimetry labels are often guesses, and re-matrixing on a wrong
     * label would itself be measured.  An RGB side has to be converted; it
     * goes into the other side's YUV space, as its encoder would have. */
    if (GST_VIDEO_INFO_IS_RGB(&ri) && GST_VIDEO_INFO_IS_YUV(&di))
        colorimetry = gst_video_colorimetry_to_string(&di.colorimetry);
    else if (GST_VIDEO_INFO_IS_RGB(&di) && GST_VIDEO_INFO_IS_YUV(&ri))
        colorimetry = gst_video_colorimetry_to_string(&ri.colorimetry);
    else if (GST_VIDEO_INFO_IS_YUV(&ri) && GST_VIDEO_INFO_IS_YUV(&di) &&
             ri.colorimetry.range != di.colorimetry.range &&
             ri.colorimetry.range != GST_VIDEO_COLOR_RANGE_UNKNOWN &&
             di.colorimetry.range != GST_VIDEO_COLOR_RANGE_UNKNOWN)
        app->range_note = TRUE;
    c = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING,
                            gst_video_format_to_string(app->target), NULL);
    if (colorimetry)
        gst_caps_set_simple(c, "colorimetry", G_TYPE_STRING, colorimetry, NULL);
    g_object_set(app->side[REF].filter, "caps", c, NULL);
    c = gst_caps_make_writable(c);
    gst_caps_set_simple(c, "width", G_TYPE_INT, ri.width, "height", G_TYPE_INT, ri.height,
                        NULL);
    g_object_set(app->side[DIST].filter, "caps", c, NULL);
    gst_caps_unref(c);
    g_free(colorimetry);
    /* index pairing gives both streams the reference's frame duration */
    app->frame_dur = ri.fps_n > 0 ? gst_util_uint64_scale_int(GST_SECOND, ri.fps_d, ri.fps_n)
                                  : GST_SECOND / 25;
    if (app->side[REF].raw)
        app->total_frames = app->side[REF].raw_frames;
    if (app->o.max_frames && (!app->total_frames || app->o.max_frames < app->total_frames))
        app->total_frames = app->o.max_frames;
    app->configured = TRUE;
    return TRUE;
}

/* Holds each decoded stream at its first caps until the other one's are
 * known too: the distorted stream's conversion depends on the reference's
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
    if (!app->configured && app->side[REF].caps && app->side[DIST].caps) {
        Side *other = &app->side[!s->id];
        if (configure(app) && other->block_id) {
            /* the other stream waits in this same probe: release it */
            gst_pad_remove_probe(other->hold_pad, other->block_id);
            other->block_id = 0;
        }
    }
    if (app->configured) {
        s->block_id = 0;
        ret = GST_PAD_PROBE_REMOVE;
    }
    g_mutex_unlock(&app->lock);
    return ret;
}

/* Between the capsfilter and the queue: counts frames, gives them index
 * timestamps, stops at --frames and notes the end of each stream. */
static GstPadProbeReturn flow_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    Side *s = data;
    App *app = s->app;
    Side *other = &app->side[!s->id];

    if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_BUFFER) {
        GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info);
        if (app->o.max_frames && s->passed >= app->o.max_frames) {
            /* enough: end this stream here and stop its decoder */
            if (!s->eos)
                gst_pad_push_event(pad, gst_event_new_eos());
            gst_buffer_unref(buf);
            GST_PAD_PROBE_INFO_FLOW_RETURN(info) = GST_FLOW_EOS;
            return GST_PAD_PROBE_HANDLED;
        }
        s->frames++;
        if (!app->o.shortest && !app->o.max_frames && g_atomic_int_get(&other->eos) &&
            s->passed >= other->passed) {
            /* past the end of the other stream: keep decoding this one to
             * count its frames for the error message, compare nothing more */
            return GST_PAD_PROBE_DROP;
        }
        if (!app->o.pair_by_time) {
            /* frame N pairs with frame N, as in libvmaf, whatever the
             * containers' timestamps (edit lists, B-frame delay, other
             * frame rates) say */
            buf = gst_buffer_make_writable(buf);
            GST_BUFFER_PTS(buf) = s->passed * app->frame_dur;
            GST_BUFFER_DTS(buf) = GST_CLOCK_TIME_NONE;
            GST_BUFFER_DURATION(buf) = app->frame_dur;
            GST_PAD_PROBE_INFO_DATA(info) = buf;
        }
        s->passed++;
        return GST_PAD_PROBE_OK;
    }
    if (GST_PAD_PROBE_INFO_TYPE(info) & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
        GstEvent *ev = GST_PAD_PROBE_INFO_EVENT(info);
        switch (GST_EVENT_TYPE(ev)) {
        case GST_EVENT_SEGMENT:
            if (!app->o.pair_by_time) {
                /* our timestamps start at 0 on a plain timeline */
                GstSegment seg;
                GstEvent *n;
                gst_segment_init(&seg, GST_FORMAT_TIME);
                n = gst_event_new_segment(&seg);
                gst_event_set_seqnum(n, gst_event_get_seqnum(ev));
                gst_event_unref(ev);
                GST_PAD_PROBE_INFO_DATA(info) = n;
            }
            break;
        case GST_EVENT_GAP:
            if (!app->o.pair_by_time)
                return GST_PAD_PROBE_DROP; /* its time is on the old timeline */
            break;
        case GST_EVENT_EOS:
            if (g_atomic_int_get(&s->eos))
                return GST_PAD_PROBE_DROP; /* the decoder's own, after --frames */
            g_atomic_int_set(&s->eos, TRUE);
            gst_element_post_message(app->pipeline,
                gst_message_new_application(GST_OBJECT(app->pipeline),
                    gst_structure_new("qmc-eos", "side", G_TYPE_INT, s->id, NULL)));
            break;
        default:
            break;
        }
    }
    return GST_PAD_PROBE_OK;
}

static void on_pad_added(GstElement *dec, GstPad *pad, gpointer data)
{
    Side *s = data;
    GstCaps *caps = gst_pad_get_current_caps(pad);
    GstPad *sink;
    gboolean video;

    if (!caps)
        caps = gst_pad_query_caps(pad, NULL);
    video = g_str_has_prefix(gst_structure_get_name(gst_caps_get_structure(caps, 0)),
                             "video/");
    gst_caps_unref(caps);
    if (!video || s->linked)
        return; /* audio, subtitles, a second video stream: not compared */
    sink = gst_element_get_static_pad(s->convert, "sink");
    if (gst_pad_link(pad, sink) == GST_PAD_LINK_OK)
        s->linked = TRUE;
    else
        post_error(s->app, "%s: cannot link its decoded video", s->display);
    gst_object_unref(sink);
}

/* A stream no decoder takes: remember it when it is video, so that the
 * error says "no decoder" for a video codec and "no video" otherwise. */
static void on_unknown_type(GstElement *dec, GstPad *pad, GstCaps *caps, gpointer data)
{
    Side *s = data;
    const char *media = gst_structure_get_name(gst_caps_get_structure(caps, 0));
    if (!s->missing_video && (g_str_has_prefix(media, "video/") ||
                              g_str_has_prefix(media, "image/")))
        s->missing_video = gst_pb_utils_get_decoder_description(caps);
}

static void on_no_more_pads(GstElement *dec, gpointer data)
{
    Side *s = data;
    if (!s->linked)
        post_error(s->app, "%s: no video stream found (the %s)", s->display,
                   side_name[s->id]);
}

static GstElement *make(const char *factory, const char *name)
{
    GstElement *e = gst_element_factory_make(factory, name);
    if (!e) {
        fprintf(stderr, "qmetric-compare: GStreamer element '%s' is missing (install "
                "gstreamer1.0-plugins-base/-good)\n", factory);
        exit(EXIT_USAGE);
    }
    return e;
}

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
        usage_error("%s: '%s' is not one of %s", opt, nick, l->str);
    }
    g_object_set(e, prop, v->value, NULL);
    g_type_class_unref(ec);
}

static void build_side(App *app, Side *s)
{
    GstElement *last;
    GstPad *pad, *qpad;
    char name[32];

    g_snprintf(name, sizeof(name), "%s-convert", side_name[s->id]);
    s->convert = make("videoconvert", name);
    /* dithering would add a pattern of its own that the metrics measure */
    gst_util_set_object_arg(G_OBJECT(s->convert), "dither", "none");
    g_snprintf(name, sizeof(name), "%s-filter", side_name[s->id]);
    s->filter = make("capsfilter", name);
    g_snprintf(name, sizeof(name), "%s-queue", side_name[s->id]);
    s->queue = make("queue", name);
    gst_bin_add_many(GST_BIN(app->pipeline), s->convert, s->filter, s->queue, NULL);
    last = s->convert;
    if (s->id == DIST && app->o.scale) {
        s->scale = make("videoscale", "distorted-scale");
        set_enum(s->scale, "method", app->o.scale_method, "--scale");
        gst_bin_add(GST_BIN(app->pipeline), s->scale);
        gst_element_link(last, s->scale);
        last = s->scale;
    }
    gst_element_link_many(last, s->filter, s->queue, NULL);
    qpad = gst_element_get_static_pad(app->qm, s->id == REF ? "ref_sink" : "dist_sink");
    pad = gst_element_get_static_pad(s->queue, "src");
    gst_pad_link(pad, qpad);
    gst_object_unref(pad);
    gst_object_unref(qpad);

    s->hold_pad = gst_element_get_static_pad(s->convert, "sink");
    s->block_id = gst_pad_add_probe(s->hold_pad, GST_PAD_PROBE_TYPE_BLOCK |
                                    GST_PAD_PROBE_TYPE_DATA_DOWNSTREAM,
                                    hold_probe, s, NULL);
    pad = gst_element_get_static_pad(s->filter, "src");
    gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM,
                      flow_probe, s, NULL);
    gst_object_unref(pad);

    if (s->raw) {
        GstElement *parse;
        GstVideoFormat fmt = gst_video_format_from_string(app->o.raw_format);
        int strides[4], offsets[4], np;
        gsize fsize = raw_layout(fmt, app->o.width, app->o.height, strides, offsets, &np);
        char *path = g_filename_from_uri(s->uri, NULL, NULL);

        g_snprintf(name, sizeof(name), "%s-source", side_name[s->id]);
        s->src = make("filesrc", name);
        g_object_set(s->src, "location", path, NULL);
        g_free(path);
        g_snprintf(name, sizeof(name), "%s-parse", side_name[s->id]);
        parse = make("rawvideoparse", name);
        g_object_set(parse, "width", app->o.width, "height", app->o.height,
                     "format", fmt, "framerate", app->o.fps_n, app->o.fps_d,
                     "frame-size", (guint)fsize, NULL);
        set_int_array(parse, "plane-strides", strides, np);
        set_int_array(parse, "plane-offsets", offsets, np);
        gst_bin_add_many(GST_BIN(app->pipeline), s->src, parse, NULL);
        gst_element_link_many(s->src, parse, s->convert, NULL);
        s->linked = TRUE;
    } else {
        /* (ANY): with plain video/x-raw, decodebin 1.22 rejects its decoders when
         * expose-all-streams is off */
        GstCaps *raw = gst_caps_from_string("video/x-raw(ANY)");
        g_snprintf(name, sizeof(name), "%s-decode", side_name[s->id]);
        s->src = make("uridecodebin", name);
        /* only the video: other streams are neither decoded nor exposed */
        g_object_set(s->src, "uri", s->uri, "caps", raw, "expose-all-streams", FALSE, NULL);
        gst_caps_unref(raw);
        g_signal_connect(s->src, "pad-added", G_CALLBACK(on_pad_added), s);
        g_signal_connect(s->src, "no-more-pads", G_CALLBACK(on_no_more_pads), s);
        g_signal_connect(s->src, "unknown-type", G_CALLBACK(on_unknown_type), s);
        gst_bin_add(GST_BIN(app->pipeline), s->src);
    }
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

/* The metrics of this build.  The element's "metrics" property describes
 * them as "...any of: name (description); name (...)": the one place the
 * application can learn them without linking the engine. */
static char **element_metrics(GstElement *qm)
{
    GParamSpec *ps = g_object_class_find_property(G_OBJECT_GET_CLASS(qm), "metrics");
    const char *b = ps ? g_param_spec_get_blurb(ps) : NULL;
    GPtrArray *a = g_ptr_array_new();
    const char *p = b ? strstr(b, "any of:") : NULL;

    if (p) {
        char **entries = g_strsplit(p + strlen("any of:"), ";", -1);
        for (char **e = entries; *e; e++) {
            /* descriptions have ';' too: a name is [a-z0-9_]+ before " (" */
            char *t = g_strstrip(*e);
            size_t len = strspn(t, "abcdefghijklmnopqrstuvwxyz0123456789_");
            if (len && g_str_has_prefix(t + len, " ("))
                g_ptr_array_add(a, g_strndup(t, len));
        }
        g_strfreev(entries);
    }
    g_ptr_array_add(a, NULL);
    return (char **)g_ptr_array_free(a, FALSE);
}

static gboolean element_has_metric(char **metrics, const char *metric)
{
    return g_strv_contains((const char *const *)metrics, metric);
}

static void build_pipeline(App *app)
{
    const Options *o = &app->o;
    GstElement *sink;
    GstPad *src, *sinkpad;

    app->pipeline = gst_pipeline_new("qmetric-compare");
    app->qm = gst_element_factory_make("qmetric", "qmetric");
    char **known = element_metrics(app->qm);
    if (!o->metrics->len) {
        /* libvmaf's default (VMAF) plus the two scores everyone asks for;
         * without VMAF in this build, the two alone */
        gboolean vmaf = element_has_metric(known, "vmaf") &&
                        element_has_metric(known, "vif") &&
                        element_has_metric(known, "adm") &&
                        element_has_metric(known, "motion");
        append_list(app->o.metrics, vmaf ? "vmaf,psnr,float_ssim" : "psnr,float_ssim");
    } else if (known[0]) {
        /* a misspelt metric is a usage error, named before anything runs */
        char **m = g_strsplit(o->metrics->str, ",", -1);
        for (char **it = m; *it; it++) {
            char *name = g_strstrip(*it);
            if (*name && strcmp(name, "all") && strcmp(name, "default") &&
                !element_has_metric(known, name)) {
                char *l = g_strjoinv(", ", known);
                usage_error("--metrics: unknown metric '%s' (this build has: %s, or all)",
                            name, l);
            }
        }
        g_strfreev(m);
    }
    g_strfreev(known);
    g_object_set(app->qm, "metrics", o->metrics->str, "post-messages", TRUE, NULL);
    if (o->models->len)
        g_object_set(app->qm, "model", o->models->str, NULL);
    if (o->enable_transform)
        g_object_set(app->qm, "enable-transform", TRUE, NULL);
    if (o->disable_clip)
        g_object_set(app->qm, "disable-clip", TRUE, NULL);
    if (o->subsample)
        g_object_set(app->qm, "subsample", (guint)o->subsample, NULL);
    if (o->threads)
        g_object_set(app->qm, "threads", (guint)o->threads, NULL);
    if (o->backend)
        set_enum(app->qm, "backend", o->backend, "--backend");
    if (o->cuda_device_id >= 0)
        g_object_set(app->qm, "cuda-device-id", o->cuda_device_id, NULL);
    if (o->output) {
        g_object_set(app->qm, "log-location", o->output, NULL);
        set_enum(app->qm, "log-format", o->log_format, "--format");
    }
    if (o->pool) {
        GParamSpec *ps = g_object_class_find_property(G_OBJECT_GET_CLASS(app->qm), "pool");
        GValue v = G_VALUE_INIT;
        g_value_init(&v, ps->value_type);
        if (!gst_value_deserialize(&v, o->pool))
            usage_error("--pool: '%s' is not a list of min, max, mean, harmonic_mean, "
                        "p1, p5", o->pool);
        g_object_set_property(G_OBJECT(app->qm), "pool", &v);
        g_value_unset(&v);
    }
    sink = make("fakesink", "sink");
    g_object_set(sink, "sync", FALSE, "async", FALSE, NULL);
    gst_bin_add_many(GST_BIN(app->pipeline), app->qm, sink, NULL);
    src = gst_element_get_static_pad(app->qm, "src");
    sinkpad = gst_element_get_static_pad(sink, "sink");
    gst_pad_link(src, sinkpad);
    gst_object_unref(src);
    gst_object_unref(sinkpad);
    build_side(app, &app->side[REF]);
    build_side(app, &app->side[DIST]);
}

/* ----------------------------------------------------------------- results */

static Column *column(App *app, const char *name)
{
    for (guint i = 0; i < app->cols->len; i++) {
        Column *c = g_ptr_array_index(app->cols, i);
        if (!strcmp(c->name, name))
            return c;
    }
    return NULL;
}

static gboolean has_feature(App *app, const char *name)
{
    return app->features && g_strv_contains((const char *const *)app->features, name);
}

static char *feature_list(App *app)
{
    return app->features ? g_strjoinv(", ", app->features) : g_strdup("none");
}

/* Expand --plot-metrics: feature keys, or metric names standing for their
 * per-plane features (psnr -> psnr_y, psnr_cb, psnr_cr), or "all". */
static char **expand_plot_features(App *app, const char *list, char **bad)
{
    GPtrArray *out = g_ptr_array_new();
    char **items = g_strsplit(list, ",", -1);
    for (char **it = items; *it; it++) {
        char *name = g_strstrip(*it);
        gboolean found = FALSE;
        if (!*name)
            continue;
        for (char **f = app->features; f && *f; f++) {
            gboolean take;
            if (!strcmp(name, "all"))
                take = TRUE;
            else if (has_feature(app, name))
                take = !strcmp(*f, name);
            else
                take = g_str_has_prefix(*f, name) && (*f)[strlen(name)] == '_' &&
                       !strchr(*f + strlen(name) + 1, '_');
            if (take) {
                found = TRUE;
                if (!g_ptr_array_find_with_equal_func(out, *f, g_str_equal, NULL))
                    g_ptr_array_add(out, g_strdup(*f));
            }
        }
        if (!found && !*bad)
            *bad = g_strdup(name);
    }
    g_strfreev(items);
    g_ptr_array_add(out, NULL);
    return (char **)g_ptr_array_free(out, FALSE);
}

/* The first scores tell which features exist: check the names the user gave
 * against them now rather than after an hour of decoding. */
static void first_scores(App *app, const GstStructure *st)
{
    GPtrArray *names = g_ptr_array_new();
    char *bad = NULL;
    int n = gst_structure_n_fields(st);

    for (int i = 0; i < n; i++) {
        const char *f = gst_structure_nth_field_name(st, i);
        if (gst_structure_get_field_type(st, f) == G_TYPE_DOUBLE)
            g_ptr_array_add(names, g_strdup(f));
    }
    g_ptr_array_add(names, NULL);
    app->features = (char **)g_ptr_array_free(names, FALSE);
    app->features_checked = TRUE;

    if (app->o.plot_metrics) {
        app->plot_features = expand_plot_features(app, app->o.plot_metrics, &bad);
        if (bad) {
            char *l = feature_list(app);
            fail(app, EXIT_USAGE, "--plot-metrics: no feature or metric '%s' in the scores "
                 "(they are: %s)", bad, l);
            g_free(l);
        }
    } else {
        /* VMAF (one line per model when several), else the first feature */
        GPtrArray *p = g_ptr_array_new();
        for (char **f = app->features; *f; f++)
            if (has_feature(app, "vmaf") ? !strcmp(*f, "vmaf") : g_str_has_prefix(*f, "vmaf_"))
                g_ptr_array_add(p, g_strdup(*f));
        if (!p->len && app->features[0])
            g_ptr_array_add(p, g_strdup(app->features[0]));
        g_ptr_array_add(p, NULL);
        app->plot_features = (char **)g_ptr_array_free(p, FALSE);
    }
    for (guint i = 0; i < app->o.thresholds->len; i++) {
        Threshold *t = &g_array_index(app->o.thresholds, Threshold, i);
        if (!has_feature(app, t->feature)) {
            char *l = feature_list(app);
            fail(app, EXIT_USAGE, "--fail-below: no feature '%s' in the scores (they are: %s)",
                 t->feature, l);
            g_free(l);
        }
    }
    app->progress_feature = g_strdup(has_feature(app, "vmaf") ? "vmaf" :
                                     app->plot_features[0] ? app->plot_features[0] :
                                     app->features[0]);
    for (char **f = app->plot_features; *f; f++) {
        Column *c = g_new0(Column, 1);
        c->name = g_strdup(*f);
        c->y = g_array_new(FALSE, FALSE, sizeof(double));
        g_ptr_array_add(app->cols, c);
    }
}

static void on_scores(App *app, const GstStructure *st)
{
    guint64 index = 0;
    double v;

    if (!app->features_checked)
        first_scores(app, st);
    gst_structure_get_uint64(st, "index", &index);
    app->pairs_done = index + 1;
    v = index;
    g_array_append_val(app->x, v);
    for (guint i = 0; i < app->cols->len; i++) {
        Column *c = g_ptr_array_index(app->cols, i);
        if (!gst_structure_get_double(st, c->name, &v))
            v = NAN;
        g_array_append_val(c->y, v);
    }
    if (app->progress_feature && gst_structure_get_double(st, app->progress_feature, &v) &&
        isfinite(v)) {
        app->progress_sum += v;
        app->progress_n++;
    }
}

static double pooled(const GstStructure *summary, const char *feature, const char *method)
{
    const GValue *v = gst_structure_get_value(summary, feature);
    double d;
    if (!v || !GST_VALUE_HOLDS_STRUCTURE(v))
        return NAN;
    if (!gst_structure_get_double(gst_value_get_structure(v), method, &d))
        return NAN;
    return d;
}

static double mean_of(App *app, const char *feature)
{
    double m = app->summary ? pooled(app->summary, feature, "mean") : NAN;
    Column *c;
    if (!isnan(m))
        return m;
    /* --pool without mean: the plain mean of the frames we kept */
    if ((c = column(app, feature))) {
        double s = 0;
        guint n = 0;
        for (guint i = 0; i < c->y->len; i++) {
            double y = g_array_index(c->y, double, i);
            if (!isnan(y)) {
                s += y;
                n++;
            }
        }
        return n ? s / n : NAN;
    }
    return NAN;
}

static void print_value(double v)
{
    if (isnan(v))
        printf(" %12s", "-");
    else if (isinf(v))
        printf(" %12s", v > 0 ? "inf" : "-inf");
    else
        printf(" %12.6f", v);
}

static void describe_input(App *app, Side *s)
{
    GstVideoInfo vi;
    printf("%-10s %s", side_name[s->id], s->display);
    if (s->caps && gst_video_info_from_caps(&vi, s->caps)) {
        printf("  (%dx%d %s", vi.width, vi.height,
               gst_video_format_to_string(GST_VIDEO_INFO_FORMAT(&vi)));
        if (vi.fps_n > 0)
            printf(" %.4g fps", (double)vi.fps_n / vi.fps_d);
        if (s->id == DIST && app->converted)
            printf(", converted to %s", gst_video_format_to_string(app->target));
        if (s->id == DIST && app->scaled)
            printf(", scaled (%s)", app->o.scale_method);
        if (s->id == REF && GST_VIDEO_INFO_FORMAT(&vi) != app->target)
            printf(", compared as %s", gst_video_format_to_string(app->target));
        printf(")");
    }
    printf("\n");
}

/* A feature VMAF computes for its model (integer_vif_scale0, integer_adm2,
 * integer_motion2, ...), unless that metric was named in --metrics ("all"
 * does not name them either): they would bury the scores asked for. */
static gboolean vmaf_input_hidden(App *app, const char *f)
{
    static const struct { const char *metric, *mark; } inputs[] = {
        { "vif", "vif" }, { "adm", "adm" }, { "adm", "integer_aim" }, { "motion", "motion" },
    };
    char **asked = g_strsplit(app->o.metrics->str, ",", -1);
    gboolean hide = FALSE;

    for (guint i = 0; i < G_N_ELEMENTS(inputs) && !hide; i++) {
        if (strstr(f, inputs[i].mark))
            hide = !g_strv_contains((const char *const *)asked, inputs[i].metric);
    }
    g_strfreev(asked);
    return hide;
}

static void print_summary(App *app)
{
    static const struct { const char *field, *title; } cols[] = {
        { "mean", "mean" }, { "min", "min" }, { "max", "max" },
        { "harmonic-mean", "harmonic mean" }, { "p1", "1st pct" }, { "p5", "5th pct" },
    };
    gboolean show[G_N_ELEMENTS(cols)] = { FALSE };
    GPtrArray *rows = g_ptr_array_new();
    int hidden = 0;
    guint64 frames = 0, pairs = 0, ur = 0, ud = 0, unreadable = 0;
    int n = gst_structure_n_fields(app->summary), width = 8;
    double secs = (g_get_monotonic_time() - app->t0) / 1e6;

    gst_structure_get_uint64(app->summary, "frames", &frames);
    gst_structure_get_uint64(app->summary, "pairs", &pairs);
    gst_structure_get_uint64(app->summary, "unmatched-reference", &ur);
    gst_structure_get_uint64(app->summary, "unmatched-distorted", &ud);
    gst_structure_get_uint64(app->summary, "unreadable", &unreadable);

    describe_input(app, &app->side[REF]);
    describe_input(app, &app->side[DIST]);
    printf("frames     %" G_GUINT64_FORMAT " scored of %" G_GUINT64_FORMAT " pairs "
           "(decoded: reference %" G_GUINT64_FORMAT ", distorted %" G_GUINT64_FORMAT
           "%s); unmatched: reference %" G_GUINT64_FORMAT ", distorted %" G_GUINT64_FORMAT,
           frames, pairs, app->side[REF].frames, app->side[DIST].frames,
           app->side[REF].eos && app->side[DIST].eos ? "" : ", stopped early", ur, ud);
    if (unreadable)
        printf("; unreadable %" G_GUINT64_FORMAT, unreadable);
    printf("\ntime       %.1f s, %.1f frames/s\n", secs, secs > 0 ? pairs / secs : 0.0);
    if (app->range_note)
        printf("note       one input is full range, the other limited: compared as stored "
               "(as libvmaf does), which lowers the scores\n");
    printf("\n");

    /* VMAF first (the headline), then the rest in the element's order;
     * VMAF's own inputs only when their metric was asked for */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            const char *f = gst_structure_nth_field_name(app->summary, i);
            const GValue *v = gst_structure_get_value(app->summary, f);
            gboolean vmaf = !strcmp(f, "vmaf") || g_str_has_prefix(f, "vmaf_");
            if (!GST_VALUE_HOLDS_STRUCTURE(v) || vmaf != (pass == 0))
                continue;
            if (vmaf_input_hidden(app, f)) {
                hidden++;
                continue;
            }
            g_ptr_array_add(rows, (gpointer)f);
            width = MAX(width, (int)strlen(f));
            for (guint c = 0; c < G_N_ELEMENTS(cols); c++)
                if (gst_structure_has_field(gst_value_get_structure(v), cols[c].field))
                    show[c] = TRUE;
        }
    }
    printf("%-*s", width, "feature");
    for (guint c = 0; c < G_N_ELEMENTS(cols); c++)
        if (show[c])
            printf(" %12s", cols[c].title);
    printf("\n");
    for (guint r = 0; r < rows->len; r++) {
        const char *f = g_ptr_array_index(rows, r);
        printf("%-*s", width, f);
        for (guint c = 0; c < G_N_ELEMENTS(cols); c++)
            if (show[c])
                print_value(pooled(app->summary, f, cols[c].field));
        printf("\n");
    }
    if (hidden)
        printf("(%d VMAF input features not shown%s; add vif,adm,motion to --metrics to "
               "see them)\n", hidden, app->o.output ? ", they are in the log" : "");
    g_ptr_array_free(rows, TRUE);
    if (app->o.output)
        printf("\nper-frame log: %s (%s)\n", app->o.output, app->o.log_format);
    fflush(stdout);
}

static void write_plot(App *app)
{
    QmPlotSeries *se = g_new0(QmPlotSeries, app->cols->len);
    char *ref = g_path_get_basename(app->side[REF].display);
    char *dist = g_path_get_basename(app->side[DIST].display);
    char *title, *subtitle;
    GString *names = g_string_new(NULL);
    GError *err = NULL;
    QmPlotOptions po = { 0 };

    for (guint i = 0; i < app->cols->len; i++) {
        Column *c = g_ptr_array_index(app->cols, i);
        se[i].name = c->name;
        se[i].x = (double *)app->x->data;
        se[i].y = (double *)c->y->data;
        se[i].n = c->y->len;
        se[i].mean = mean_of(app, c->name);
        if (names->len)
            g_string_append(names, ", ");
        g_string_append(names, c->name);
    }
    title = g_strdup_printf("Per-frame quality of %s", dist);
    if (app->cols->len > 4)
        g_string_printf(names, "%u features", app->cols->len); /* the legend names them */
    subtitle = g_strdup_printf("against %s, %u frames scored%s; %s", ref, app->x->len,
                               app->o.subsample > 1 ? " (subsampled)" : "", names->str);
    po.title = title;
    po.subtitle = subtitle;
    if (!qm_plot_svg(app->o.plot, se, app->cols->len, &po, &err)) {
        fail(app, EXIT_USAGE, "--plot: %s", err->message);
        g_error_free(err);
    }
    g_free(title);
    g_free(subtitle);
    g_string_free(names, TRUE);
    g_free(ref);
    g_free(dist);
    g_free(se);
}

/* ---------------------------------------------------------------- progress */

static void fmt_duration(char *buf, size_t len, double s)
{
    int t = (int)(s + 0.5);
    if (t >= 3600)
        g_snprintf(buf, len, "%d:%02d:%02d", t / 3600, t / 60 % 60, t % 60);
    else
        g_snprintf(buf, len, "%d:%02d", t / 60, t % 60);
}

static gboolean on_tick(gpointer data)
{
    App *app = data;
    double secs = (g_get_monotonic_time() - app->t0) / 1e6;
    double fps = secs > 0 ? app->pairs_done / secs : 0;
    GString *l;
    char eta[32];

    if (!app->total_frames && app->configured && app->side[REF].caps) {
        /* the duration of an encoded reference, in frames */
        GstVideoInfo vi;
        gint64 dur;
        GstPad *pad = gst_element_get_static_pad(app->side[REF].convert, "sink");
        if (gst_video_info_from_caps(&vi, app->side[REF].caps) && vi.fps_n > 0 &&
            gst_pad_peer_query_duration(pad, GST_FORMAT_TIME, &dur) && dur > 0)
            app->total_frames = gst_util_uint64_scale_round(dur, vi.fps_n,
                                                            (guint64)vi.fps_d * GST_SECOND);
        gst_object_unref(pad);
        if (app->o.max_frames && app->total_frames > app->o.max_frames)
            app->total_frames = app->o.max_frames;
    }
    l = g_string_new(NULL);
    g_string_append_printf(l, "frame %" G_GUINT64_FORMAT, app->pairs_done);
    if (app->total_frames) {
        g_string_append_printf(l, "/%" G_GUINT64_FORMAT " %3.0f%%", app->total_frames,
                               MIN(100.0, 100.0 * app->pairs_done / app->total_frames));
    }
    g_string_append_printf(l, "  %.1f fps", fps);
    if (app->total_frames && fps > 0 && app->pairs_done < app->total_frames) {
        fmt_duration(eta, sizeof(eta), (app->total_frames - app->pairs_done) / fps);
        g_string_append_printf(l, "  ETA %s", eta);
    }
    if (app->progress_n)
        g_string_append_printf(l, "  %s %.3f (mean so far)", app->progress_feature,
                               app->progress_sum / app->progress_n);
    fprintf(stderr, "\r%s\033[K", l->str);
    fflush(stderr);
    app->line_drawn = TRUE;
    g_string_free(l, TRUE);
    return G_SOURCE_CONTINUE;
}

/* ---------------------------------------------------------------- main loop */

static Side *side_of(App *app, GstObject *o)
{
    for (int i = 0; i < 2; i++) {
        GstElement *roots[] = { app->side[i].src, app->side[i].convert };
        for (guint k = 0; k < G_N_ELEMENTS(roots); k++)
            if (roots[k] && (o == GST_OBJECT(roots[k]) ||
                             gst_object_has_as_ancestor(o, GST_OBJECT(roots[k]))))
                return &app->side[i];
    }
    return NULL;
}

static void maybe_done(App *app)
{
    /* qmetric is done at its EOS; with strict frame counts we also wait for
     * the longer input to end so that its count is exact */
    if (!app->pipeline_eos)
        return;
    if (app->o.shortest || app->o.max_frames || app->interrupted ||
        (app->side[REF].eos && app->side[DIST].eos))
        g_main_loop_quit(app->loop);
}

static void on_error(App *app, GstMessage *msg)
{
    GError *err = NULL;
    char *dbg = NULL;
    Side *s = side_of(app, GST_MESSAGE_SRC(msg));

    gst_message_parse_error(msg, &err, &dbg);
    if (s && s->missing_video) {
        fail(app, EXIT_USAGE, "%s: no decoder for this format (%s); install the "
             "GStreamer plugin that provides it", s->display, s->missing_video);
    } else if (s && (g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_TYPE_NOT_FOUND) ||
                     g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_WRONG_TYPE))) {
        fail(app, EXIT_USAGE, "%s: not a video format GStreamer recognises (the %s)",
             s->display, side_name[s->id]);
    } else if (s && !s->linked &&
               (g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_CODEC_NOT_FOUND) ||
                g_error_matches(err, GST_CORE_ERROR, GST_CORE_ERROR_MISSING_PLUGIN))) {
        /* decodebin found streams, none of them video it can decode */
        if (s->missing)
            fail(app, EXIT_USAGE, "%s: no video stream found (it holds %s)", s->display,
                 s->missing);
        else
            fail(app, EXIT_USAGE, "%s: no video stream found (the %s)", s->display,
                 side_name[s->id]);
    } else if (s) {
        fail(app, EXIT_USAGE, "%s: %s", s->display, err->message);
    } else if (GST_MESSAGE_SRC(msg) == GST_OBJECT(app->qm)) {
        fail(app, EXIT_USAGE, "%s", err->message);
    } else {
        fail(app, EXIT_USAGE, "%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)), err->message);
    }
    if (g_getenv("QMETRIC_COMPARE_DEBUG") && dbg)
        fprintf(stderr, "debug: %s\n", dbg);
    g_error_free(err);
    g_free(dbg);
}

static gboolean on_bus(GstBus *bus, GstMessage *msg, gpointer data)
{
    App *app = data;

    switch (GST_MESSAGE_TYPE(msg)) {
    case GST_MESSAGE_ELEMENT: {
        const GstStructure *st = gst_message_get_structure(msg);
        if (gst_is_missing_plugin_message(msg)) {
            Side *s = side_of(app, GST_MESSAGE_SRC(msg));
            if (s && !s->missing)
                s->missing = gst_missing_plugin_message_get_description(msg);
        } else if (gst_structure_has_name(st, "qmetric")) {
            on_scores(app, st);
        } else if (gst_structure_has_name(st, "qmetric-summary")) {
            gst_clear_structure(&app->summary);
            app->summary = gst_structure_copy(st);
        }
        break;
    }
    case GST_MESSAGE_APPLICATION: {
        const GstStructure *st = gst_message_get_structure(msg);
        if (gst_structure_has_name(st, "qmc-error")) {
            fail(app, EXIT_USAGE, "%s", gst_structure_get_string(st, "message"));
        } else if (gst_structure_has_name(st, "qmc-eos")) {
            maybe_done(app);
        }
        break;
    }
    case GST_MESSAGE_EOS:
        app->pipeline_eos = TRUE;
        maybe_done(app);
        break;
    case GST_MESSAGE_ERROR:
        on_error(app, msg);
        break;
    case GST_MESSAGE_WARNING: {
        GError *err = NULL;
        const GstStructure *d = NULL;
        gst_message_parse_warning(msg, &err, NULL);
        gst_message_parse_warning_details(msg, &d);
        /* unmatched frames are reported in the summary and by the count
         * check; undecodable streams by the error that follows, or they are
         * not the video */
        if (!(d && gst_structure_has_field(d, "details")) &&
            !g_error_matches(err, GST_STREAM_ERROR, GST_STREAM_ERROR_CODEC_NOT_FOUND)) {
            clear_progress(app);
            fprintf(stderr, "qmetric-compare: warning: %s: %s\n",
                    GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)), err->message);
        }
        g_error_free(err);
        break;
    }
    default:
        break;
    }
    return G_SOURCE_CONTINUE;
}

static gboolean on_sigint(gpointer data)
{
    App *app = data;
    if (app->interrupted) {
        /* second Ctrl-C: leave now */
        g_main_loop_quit(app->loop);
        return G_SOURCE_REMOVE;
    }
    /* first: end both streams so that the log and the summary are complete */
    app->interrupted = TRUE;
    clear_progress(app);
    fprintf(stderr, "qmetric-compare: interrupted; finishing (Ctrl-C again to quit now)\n");
    gst_element_send_event(app->pipeline, gst_event_new_eos());
    return G_SOURCE_CONTINUE;
}

int main(int argc, char **argv)
{
    App app_s;
    App *app = &app_s;
    GstBus *bus;
    guint tick = 0;
    int code = 0;

    memset(app, 0, sizeof(*app));
    gst_init(NULL, NULL); /* our options are not GStreamer's */
    parse_options(&app->o, argc, argv);
    g_mutex_init(&app->lock);
    app->x = g_array_new(FALSE, FALSE, sizeof(double));
    app->cols = g_ptr_array_new();
    for (int i = 0; i < 2; i++) {
        app->side[i].app = app;
        app->side[i].id = i;
    }
    check_input(app, &app->side[REF], app->o.input[REF]);
    check_input(app, &app->side[DIST], app->o.input[DIST]);
    if (app->side[REF].raw && app->side[DIST].raw && !app->o.shortest && !app->o.max_frames &&
        app->side[REF].raw_frames != app->side[DIST].raw_frames)
        input_error("frame counts differ: reference has %" G_GUINT64_FORMAT
                    " frames, distorted %" G_GUINT64_FORMAT " (--shortest compares the "
                    "first %" G_GUINT64_FORMAT ")", app->side[REF].raw_frames,
                    app->side[DIST].raw_frames,
                    MIN(app->side[REF].raw_frames, app->side[DIST].raw_frames));
    if (!find_qmetric()) {
        fprintf(stderr, "qmetric-compare: the qmetric GStreamer element was not found: "
                "build it (ninja -C build) or set GST_PLUGIN_PATH to its directory\n");
        return EXIT_USAGE;
    }
    build_pipeline(app);

    app->loop = g_main_loop_new(NULL, FALSE);
    bus = gst_element_get_bus(app->pipeline);
    gst_bus_add_watch(bus, on_bus, app);
    gst_object_unref(bus);
    g_unix_signal_add(SIGINT, on_sigint, app);
    app->tty = isatty(STDERR_FILENO) && !app->o.quiet;
    app->t0 = g_get_monotonic_time();
    if (app->tty)
        tick = g_timeout_add(200, on_tick, app);

    if (gst_element_set_state(app->pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
        fail(app, EXIT_USAGE, "the pipeline cannot start");
    else
        g_main_loop_run(app->loop);

    if (tick)
        g_source_remove(tick);
    clear_progress(app);
    gst_element_set_state(app->pipeline, GST_STATE_NULL);

    if (!app->error && !app->summary)
        fail(app, EXIT_USAGE, "no frames were compared");
    if (app->summary) {
        guint64 frames = 0;
        gst_structure_get_uint64(app->summary, "frames", &frames);
        if (!frames && !app->error)
            fail(app, EXIT_USAGE, "no frames were compared (empty input?)");
        if (!app->error || frames)
            print_summary(app);
        if (app->o.plot && frames)
            write_plot(app);
    }
    /* the inputs' lengths differ: report both counts */
    if (!app->error && !app->interrupted && !app->o.shortest && !app->o.max_frames &&
        app->side[REF].frames != app->side[DIST].frames)
        fail(app, EXIT_USAGE, "frame counts differ: reference has %" G_GUINT64_FORMAT
             " frames, distorted %" G_GUINT64_FORMAT " (scores above cover the first %"
             G_GUINT64_FORMAT "; --shortest accepts this)", app->side[REF].frames,
             app->side[DIST].frames, MIN(app->side[REF].frames, app->side[DIST].frames));

    if (app->error) {
        fprintf(stderr, "qmetric-compare: %s\n", app->error);
        code = app->exit_code;
    } else {
        for (guint i = 0; i < app->o.thresholds->len; i++) {
            Threshold *t = &g_array_index(app->o.thresholds, Threshold, i);
            double m = mean_of(app, t->feature);
            if (!(m >= t->value)) {
                fprintf(stderr, "qmetric-compare: %s mean %.6f is below %g (--fail-below)\n",
                        t->feature, m, t->value);
                code = EXIT_FAIL_BELOW;
            } else if (!app->o.quiet) {
                fprintf(stderr, "qmetric-compare: %s mean %.6f >= %g: ok\n", t->feature, m,
                        t->value);
            }
        }
        if (app->interrupted)
            code = EXIT_INTERRUPTED;
    }
    gst_object_unref(app->pipeline);
    return code;
}
