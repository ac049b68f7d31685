/* qmetric-compare: the command line: --help, parsing, usage errors. */
#include "compare.h"
#include "preset.h"
#include "swscale.h"

/* ----------------------------------------------------------------- options */

static void usage(FILE *f)
{
    fputs(
"usage: qmetric-compare REFERENCE DISTORTED [options]\n"
"       qmetric-compare REFERENCE DIST1 DIST2 ... [--manifest FILE] [options]\n"
"\n"
"Measure the quality of DISTORTED against REFERENCE with the qmetric element\n"
"(VMAF, PSNR, SSIM, MS-SSIM, PSNR-HVS, CIEDE2000, CAMBI as libvmaf 3.2.0;\n"
"XPSNR as FFmpeg; SSIMULACRA2 as libjxl).\n"
"Inputs: any file or URI GStreamer decodes; raw .yuv/.raw with --size.\n"
"\n"
"Metrics\n"
"  --metrics LIST          comma-separated: vmaf, psnr, float_ssim, float_ms_ssim,\n"
"                          psnr_hvs, ciede, cambi, xpsnr, ssimulacra2, ...,\n"
"                          or all\n"
"                          (default: vmaf,psnr,float_ssim: docs/metrics.md,\n"
"                          \"Default metrics\")\n"
"  --feature NAME          add a metric to --metrics, or to the VMAF model when\n"
"                          --metrics is not given (libvmaf's --feature;\n"
"                          repeatable); NAME=OPT=VAL:OPT=VAL adds an instance\n"
"                          with those options\n"
"  -m, --model MODEL       VMAF model: vmaf_v0.6.1, vmaf_4k_v0.6.1, vmaf_v0.6.1neg\n"
"                          or a JSON path; repeatable or comma-separated;\n"
"                          libvmaf's version=/path=/name=/enable_transform/\n"
"                          disable_clip keys are accepted (name=: the score's key)\n"
"  --aom_ctc v1.0..v7.0, --nflx_ctc v1.0\n"
"                          libvmaf's presets: two named models (vmaf, vmaf_neg)\n"
"                          and their metrics with options, in place of the\n"
"                          default metrics (--metrics, --feature, -m add to it)\n"
"  --enable-transform      apply the model's score transform\n"
"  --disable-clip          do not clip VMAF to the model's range\n"
"  --subsample N           score every Nth frame only (libvmaf --subsample)\n"
"  --threads N             CPU threads (default: one per core)\n"
"  --backend auto|cpu|cuda where the metrics run (default auto)\n"
"  --cuda-device-id N      CUDA device (default: any)\n"
"  --gpus all|N|ID,ID,...  spread a ladder's renditions over these CUDA devices\n"
"                          (round robin; N: the first N devices; one device:\n"
"                          ID,); a two-input comparison runs on the first\n"
"  --dry-run               print which rendition runs on which device, then exit\n"
"\n"
"Inputs\n"
"  -r, --reference FILE, -d, --distorted FILE\n"
"                          the inputs, libvmaf style\n"
"  --size WxH              raw input size (or --width W --height H)\n"
"  --format FMT            raw input pixel format, GStreamer's name (I420,\n"
"                          I420_10LE, NV12, Y444, ...; default I420)\n"
"  -p, --pixel_format 420|422|444|400, -b, --bitdepth 8|10|12|16\n"
"                          the same, libvmaf style\n"
"  --fps N[/D]             raw input frame rate (default 25; XPSNR's temporal\n"
"                          term is second-order from 32)\n"
"  --scale[=K]             scale the distorted video to the reference size as\n"
"                          FFmpeg's scale filter does (libswscale); --scale=K\n"
"                          is --scale --scaler K\n"
"  --scaler K              libswscale's scaler, as in FFmpeg's scale=W:H:flags=K\n"
"                          (bicubic, lanczos, bilinear, spline, ...; default\n"
"                          bicubic; implies --scale)\n"
"  --pair-by index|time    pair the Nth frames (default, as libvmaf; warns when\n"
"                          the frame rates differ or timestamps jump) or by\n"
"                          running time, as the qmetric element pairs\n"
"  --shortest              when frame counts differ, compare the common frames\n"
"                          instead of failing\n"
"  --frames N, --frame_cnt N\n"
"                          compare the first N frames only\n"
"  --frame_skip_ref N, --frame_skip_dist N\n"
"                          leave out the first N frames of the reference or\n"
"                          the distorted input (as libvmaf; index pairing)\n"
"\n"
"Chunks (a title scored in parts and joined by qmetric-merge; see docs/cli.md)\n"
"  --start N               score frames N.. only (with --frames M: N..N+M-1),\n"
"                          exactly as a whole run scores them; encoded inputs\n"
"                          seek to the key frame before the chunk\n"
"  --partial FILE          also write the chunk's scores at full precision for\n"
"                          qmetric-merge\n"
"  --count-frames          print the number of frame pairs (read from the\n"
"                          containers' packets where possible) and exit\n"
"\n"
"Alignment (a constant frame offset between the inputs; see docs/cli.md)\n"
"  --detect-offset[=MAX]   report the offset (-MAX..MAX, default 30) and its\n"
"                          confidence, score nothing; JSON with --summary json\n"
"  --align auto|force      find the offset, then score with it applied; auto\n"
"                          refuses an offset of confidence below 0.5, force\n"
"                          applies it anyway\n"
"  --align-max N           the largest offset tried, in frames (default 30)\n"
"  --align-window N        frame pairs compared per offset (default 60)\n"
"\n"
"Results\n"
"  -o, --output FILE       per-frame log (libvmaf layout); - for stdout\n"
"  --format json|xml|csv   its format (default: from the extension, else json);\n"
"                          also --json, --xml, --csv\n"
"  --pool LIST             pooled values: min,max,mean,harmonic_mean,p1,p5\n"
"  --plot FILE.svg         chart of the per-frame scores; - for stdout\n"
"  --plot-metrics LIST     features (or metrics) to chart (default: vmaf, else\n"
"                          the first feature); on a ladder, the table's columns\n"
"                          and --plot-rd's panels\n"
"  --fail-below FEATURE[.STAT]=VALUE\n"
"                          exit 1 if FEATURE's pooled STAT (mean, min, max,\n"
"                          harmonic_mean, p1, p5; default mean) is below VALUE,\n"
"                          e.g. vmaf=93, vmaf.p5=80, psnr_y.min=30 (repeatable)\n"
"  --summary text|json     the summary as a table (default) or as JSON on\n"
"                          stdout (the table then goes to stderr)\n"
"  -q, --quiet             no progress line, no table, no \"ok\" lines\n"
"  -v, --version           print the version\n"
"  --help                  this text\n"
"\n"
"Ladders (several renditions of one reference, scored in one pass: the\n"
"reference is decoded once; see docs/cli.md)\n"
"  --manifest FILE         renditions, one [NAME=]PATH a line ([GROUP] lines\n"
"                          group them), or a JSON array of paths or of\n"
"                          {\"name\", \"path\", \"group\"} objects\n"
"  --ladder-csv FILE, --ladder-json FILE\n"
"                          one row per rendition: codec, resolution, bitrate\n"
"                          (kbit/s, file size x 8 / duration), size, frames and\n"
"                          pooled metrics (readable by qmetric-bd); - for stdout\n"
"  --plot-rd FILE.svg      the rate-quality chart (a panel per metric: VMAF,\n"
"                          PSNR, SSIM, SSIMULACRA2, ...): a labelled point per\n"
"                          rendition, a curve per group (the manifest's, else\n"
"                          per codec or resolution)\n"
"  --hull                  draw the upper convex hull of all the points on it\n"
"  -o DIR/ or -o PATTERN   each rendition's per-frame log: DIR/NAME.json, or\n"
"                          PATTERN with {name} replaced (e.g. logs/{name}.xml)\n"
"  Renditions of another size are scaled to the reference's as by --scale\n"
"  (--scaler K chooses the scaler; default bicubic).\n"
"\n"
"The log and the chart are written when the comparison completes, never in part.\n"
"Exit status: 0 ok, 1 a --fail-below threshold failed, 2 usage, input or\n"
"output error, 130 interrupted.\n",
        f);
}

static int parse_int(const char *opt, const char *s, int min, int max)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        qmc_usage_error("%s: '%s' is not a whole number in %d..%d", opt, s, min, max);
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
        qmc_usage_error("%s: '%s' is not a frame rate (e.g. 25, 29.97, 30000/1001)", opt, s);
    /* 29.97 and friends are NTSC rates */
    if (fabs(v * 1001 / 1000 - floor(v * 1001 / 1000 + 0.5)) < 1e-3 && fabs(v - floor(v)) > 1e-3) {
        *n = (int)floor(v * 1001 / 1000 + 0.5) * 1000;
        *d = 1001;
    } else {
        gst_util_double_to_fraction(v, n, d);
    }
}

void qmc_append_list(GString *s, const char *items)
{
    if (s->len)
        g_string_append_c(s, ',');
    g_string_append(s, items);
}

/* libvmaf's --model takes "version=NAME:name=..:enable_transform"; ours takes
 * a name or a path too.  Accept both, so that scripts can move over
 * unchanged: the model and its name go to the element ("version=NAME:
 * name=LABEL"), the switches are the element's own properties. */
static void add_model(Options *o, const char *arg)
{
    char **parts, **p;
    const char *model = NULL, *label = NULL;
    gboolean path = FALSE;

    if (!strchr(arg, '=')) {
        qmc_append_list(o->models, arg);
        return;
    }
    parts = g_strsplit(arg, ":", -1);
    for (p = parts; *p; p++) {
        char *eq = strchr(*p, '=');
        const char *key = *p, *val = eq ? eq + 1 : "true";
        if (eq)
            *eq = '\0';
        if (!strcmp(key, "version") || !strcmp(key, "path")) {
            model = val;
            path = !strcmp(key, "path");
        }
        else if (!strcmp(key, "enable_transform"))
            o->enable_transform = !strcmp(val, "true");
        else if (!strcmp(key, "disable_clip"))
            o->disable_clip = !strcmp(val, "true");
        else if (!strcmp(key, "name") && *val && !strpbrk(val, ",:"))
            label = val;
        else if (!strcmp(key, "name"))
            qmc_usage_error("--model: name=%s: a name is not empty and holds no ',' "
                            "or ':'", val);
        else
            qmc_usage_error("--model: unknown key '%s' (expected version=, path=, "
                            "name=, enable_transform, disable_clip)", key);
    }
    if (!model)
        qmc_usage_error("--model '%s' names no model (version=... or path=...)", arg);
    if (label) {
        char *entry = g_strdup_printf("%s=%s:name=%s", path ? "path" : "version", model,
                                      label);
        qmc_append_list(o->models, entry);
        g_free(entry);
    } else {
        qmc_append_list(o->models, model);
    }
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
        qmc_usage_error("--size: '%s' is not WIDTHxHEIGHT (e.g. 1920x1080)", s);
}

/* --aom_ctc VERSION, --nflx_ctc VERSION: checked here, with libvmaf's words
 * for a bad version (core/preset.h), then the element's "preset". */
static void set_preset(Options *o, const char *family, const char *version)
{
    char why[128];
    if (o->preset)
        qmc_usage_error("--%s: one preset at a time (--aom_ctc or --nflx_ctc)", family);
    if (!qm_preset_find(family, version, why, sizeof(why)))
        qmc_usage_error("%s", why);
    o->preset = g_strdup_printf("%s=%s", family, version);
}

/* libvmaf's --feature NAME adds to the model's features; with options,
 * "NAME=opt=val:opt2=val" adds an instance with those options (keys get
 * libvmaf's option suffixes), through the element's "features" property,
 * which refuses an unknown metric or option by name. */
static void add_feature(Options *o, const char *arg)
{
    size_t n = strcspn(arg, "=:");
    if (!n)
        qmc_usage_error("--feature: '%s' names no feature", arg);
    if (arg[n] == ':')
        qmc_usage_error("--feature %s: options follow the name after '=' "
                        "(NAME=OPTION=VALUE:OPTION=VALUE)", arg);
    if (strchr(arg, ','))
        qmc_usage_error("--feature %s: one feature per --feature", arg);
    qmc_append_list(arg[n] ? o->feature_opts : o->features, arg);
}

/* FEATURE[.STAT]=VALUE.  Feature names have dots of their own
 * (vmaf_v0.6.1neg), so STAT is what follows the last dot when it is a
 * statistic's name; otherwise the gate is on the mean. */
static void add_threshold(Options *o, const char *arg)
{
    const char *eq = strrchr(arg, '=');
    Threshold t = { 0 };
    char *end, *name, *dot;

    if (!eq || eq == arg)
        qmc_usage_error("--fail-below: '%s' is not FEATURE[.STAT]=VALUE (e.g. vmaf=93, "
                        "vmaf.p5=80)", arg);
    t.value = g_ascii_strtod(eq + 1, &end);
    if (end == eq + 1 || *end || !isfinite(t.value))
        qmc_usage_error("--fail-below: '%s' is not a number", eq + 1);
    name = g_strndup(arg, eq - arg);
    dot = strrchr(name, '.');
    if (dot && qmc_stat_field(dot + 1)) {
        t.stat = g_strdup(qmc_stat_field(dot + 1));
        *dot = '\0';
    } else {
        t.stat = g_strdup("mean");
    }
    if (!*name)
        qmc_usage_error("--fail-below: '%s' names no feature", arg);
    t.feature = name;
    g_array_append_val(o->thresholds, t);
}

/* --gpus all | N (the first N devices, as docker's --gpus) | ID,ID,...
 * (those devices).  A lone number is a count, so 0 is refused with the
 * spelling of "device 0 alone".  The ids are checked against the machine
 * when the run starts (gpus.c). */
static void parse_gpus(Options *o, const char *arg)
{
    g_free(o->gpus_spec);
    o->gpus_spec = g_strdup(arg);
    o->gpus_all = FALSE;
    o->gpus_count = 0;
    if (o->gpus_list)
        g_array_set_size(o->gpus_list, 0);
    if (!strcmp(arg, "all")) {
        o->gpus_all = TRUE;
    } else if (!strchr(arg, ',')) {
        if (!strcmp(arg, "0"))
            qmc_usage_error("--gpus 0: a lone number counts GPUs; device 0 alone is "
                            "--gpus 0, (with a comma) or --cuda-device-id 0");
        o->gpus_count = parse_int("--gpus", arg, 1, 1024);
    } else {
        char **ids = g_strsplit(arg, ",", -1);
        if (!o->gpus_list)
            o->gpus_list = g_array_new(FALSE, FALSE, sizeof(int));
        for (char **p = ids; *p; p++) {
            int id;
            if (!**p && p != ids && !p[1])
                break; /* "0," : one device */
            id = parse_int("--gpus: a device id", *p, 0, 1023);
            for (guint k = 0; k < o->gpus_list->len; k++)
                if (g_array_index(o->gpus_list, int, k) == id)
                    qmc_usage_error("--gpus %s: device %d is listed twice", arg, id);
            g_array_append_val(o->gpus_list, id);
        }
        g_strfreev(ids);
    }
}

/* --scaler K, --scale=K: FFmpeg's flags=K.  The videoscale method names that
 * --scale took before and libswscale does not know (catrom, mitchell, ...)
 * are refused with the list, not mapped to a kernel that differs. */
static void set_scaler(Options *o, const char *opt, const char *flags)
{
    char *why = NULL;
    if (!qmc_scaler_check(flags, &why))
        qmc_usage_error("%s: %s", opt, why);
    g_free(o->scale_method);
    o->scale_method = g_strdup(flags);
}

void qmc_parse_options(Options *o, int argc, char **argv)
{
    enum {
        O_METRICS = 256, O_FEATURE, O_TRANSFORM, O_NOCLIP, O_SUBSAMPLE, O_THREADS,
        O_BACKEND, O_CUDA, O_SIZE, O_WIDTH, O_HEIGHT, O_FORMAT, O_FPS, O_SCALE, O_SCALER,
        O_PAIR, O_SHORTEST, O_FRAMES, O_JSON, O_XML, O_CSV, O_POOL, O_PLOT,
        O_PLOT_METRICS, O_FAIL, O_HELP, O_SKIP_REF, O_SKIP_DIST, O_SUMMARY,
        O_MANIFEST, O_LADDER_CSV, O_LADDER_JSON, O_PLOT_RD, O_DETECT_OFFSET, O_ALIGN,
        O_ALIGN_MAX, O_ALIGN_WINDOW, O_GPUS, O_DRY_RUN, O_HULL, O_START, O_PARTIAL, O_COUNT,
        O_AOM_CTC, O_NFLX_CTC,
    };
    static const struct option opts[] = {
        { "reference", required_argument, NULL, 'r' },
        { "distorted", required_argument, NULL, 'd' },
        { "metrics", required_argument, NULL, O_METRICS },
        { "feature", required_argument, NULL, O_FEATURE },
        { "model", required_argument, NULL, 'm' },
        { "aom_ctc", required_argument, NULL, O_AOM_CTC },
        { "nflx_ctc", required_argument, NULL, O_NFLX_CTC },
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
        { "scaler", required_argument, NULL, O_SCALER },
        { "pair-by", required_argument, NULL, O_PAIR },
        { "shortest", no_argument, NULL, O_SHORTEST },
        { "frames", required_argument, NULL, O_FRAMES },
        { "frame_cnt", required_argument, NULL, O_FRAMES },
        { "frame_skip_ref", required_argument, NULL, O_SKIP_REF },
        { "frame-skip-ref", required_argument, NULL, O_SKIP_REF },
        { "frame_skip_dist", required_argument, NULL, O_SKIP_DIST },
        { "frame-skip-dist", required_argument, NULL, O_SKIP_DIST },
        { "summary", required_argument, NULL, O_SUMMARY },
        { "output", required_argument, NULL, 'o' },
        { "json", no_argument, NULL, O_JSON },
        { "xml", no_argument, NULL, O_XML },
        { "csv", no_argument, NULL, O_CSV },
        { "pool", required_argument, NULL, O_POOL },
        { "plot", required_argument, NULL, O_PLOT },
        { "plot-metrics", required_argument, NULL, O_PLOT_METRICS },
        { "fail-below", required_argument, NULL, O_FAIL },
        { "manifest", required_argument, NULL, O_MANIFEST },
        { "ladder-csv", required_argument, NULL, O_LADDER_CSV },
        { "ladder-json", required_argument, NULL, O_LADDER_JSON },
        { "plot-rd", required_argument, NULL, O_PLOT_RD },
        { "hull", no_argument, NULL, O_HULL },
        { "detect-offset", optional_argument, NULL, O_DETECT_OFFSET },
        { "align", required_argument, NULL, O_ALIGN },
        { "align-max", required_argument, NULL, O_ALIGN_MAX },
        { "align-window", required_argument, NULL, O_ALIGN_WINDOW },
        { "gpus", required_argument, NULL, O_GPUS },
        { "dry-run", no_argument, NULL, O_DRY_RUN },
        { "start", required_argument, NULL, O_START },
        { "partial", required_argument, NULL, O_PARTIAL },
        { "count-frames", no_argument, NULL, O_COUNT },
        { "quiet", no_argument, NULL, 'q' },
        { "version", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, O_HELP },
        { NULL, 0, NULL, 0 },
    };
    int c, n_pos = 0;

    memset(o, 0, sizeof(*o));
    o->metrics = g_string_new(NULL);
    o->features = g_string_new(NULL);
    o->feature_opts = g_string_new(NULL);
    o->models = g_string_new(NULL);
    o->cuda_device_id = -1;
    o->fps_n = 25;
    o->fps_d = 1;
    o->thresholds = g_array_new(FALSE, FALSE, sizeof(Threshold));
    o->extra = g_ptr_array_new();
    o->align_max = 30;
    o->align_window = 60;

    opterr = 0; /* our own one-line messages */
    while ((c = getopt_long(argc, argv, "-r:d:m:o:p:b:qvh", opts, NULL)) != -1) {
        switch (c) {
        case 1: /* a positional argument, in order */
            if (n_pos >= 2) {
                /* a third input and more: a ladder (ladder.c) */
                g_ptr_array_add(o->extra, g_strdup(optarg));
                break;
            }
            if (o->input[n_pos])
                n_pos++;
            if (n_pos >= 2) {
                g_ptr_array_add(o->extra, g_strdup(optarg));
                break;
            }
            o->input[n_pos++] = g_strdup(optarg);
            break;
        case 'r': g_free(o->input[REF]); o->input[REF] = g_strdup(optarg); break;
        case 'd': g_free(o->input[DIST]); o->input[DIST] = g_strdup(optarg); break;
        case O_METRICS: qmc_append_list(o->metrics, optarg); break;
        case O_FEATURE: add_feature(o, optarg); break;
        case 'm': add_model(o, optarg); break;
        case O_AOM_CTC:
        case O_NFLX_CTC: set_preset(o, c == O_AOM_CTC ? "aom_ctc" : "nflx_ctc", optarg); break;
        case O_TRANSFORM: o->enable_transform = TRUE; break;
        case O_NOCLIP: o->disable_clip = TRUE; break;
        case O_SUBSAMPLE: o->subsample = parse_int("--subsample", optarg, 1, G_MAXINT); break;
        case O_THREADS: o->threads = parse_int("--threads", optarg, 0, 64); break;
        case O_BACKEND:
            if (strcmp(optarg, "auto") && strcmp(optarg, "cpu") && strcmp(optarg, "cuda"))
                qmc_usage_error("--backend: '%s' is not auto, cpu or cuda", optarg);
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
                    qmc_usage_error("--format: '%s' is neither a log format (json, xml, csv) "
                                    "nor a GStreamer pixel format (I420, NV12, I420_10LE, ...)",
                                    optarg);
                g_free(o->raw_format);
                o->raw_format = g_strdup(optarg);
            }
            break;
        case 'p':
            if (strcmp(optarg, "420") && strcmp(optarg, "422") && strcmp(optarg, "444") &&
                strcmp(optarg, "400"))
                qmc_usage_error("--pixel_format: '%s' is not 420, 422, 444 or 400", optarg);
            o->pix_fmt = atoi(optarg);
            break;
        case 'b': o->bitdepth = parse_int("--bitdepth", optarg, 8, 16); break;
        case O_FPS: parse_fraction("--fps", optarg, &o->fps_n, &o->fps_d); break;
        case O_SCALE:
        case O_SCALER:
            o->scale = TRUE;
            if (optarg)
                set_scaler(o, c == O_SCALE ? "--scale" : "--scaler", optarg);
            else if (!o->scale_method)
                set_scaler(o, "--scale", QMC_DEFAULT_SCALER);
            break;
        case O_PAIR:
            if (!strcmp(optarg, "time"))
                o->pair_by_time = TRUE;
            else if (!strcmp(optarg, "index"))
                o->pair_by_time = FALSE;
            else
                qmc_usage_error("--pair-by: '%s' is not index or time", optarg);
            break;
        case O_SHORTEST: o->shortest = TRUE; break;
        case O_FRAMES: o->max_frames = (guint64)parse_int("--frames", optarg, 1, G_MAXINT); break;
        case O_SKIP_REF:
            o->skip[REF] = (guint64)parse_int("--frame_skip_ref", optarg, 0, G_MAXINT);
            break;
        case O_SKIP_DIST:
            o->skip[DIST] = (guint64)parse_int("--frame_skip_dist", optarg, 0, G_MAXINT);
            break;
        case O_SUMMARY:
            if (!strcmp(optarg, "json"))
                o->summary = SUMMARY_JSON;
            else if (!strcmp(optarg, "text"))
                o->summary = SUMMARY_TEXT;
            else
                qmc_usage_error("--summary: '%s' is not text or json", optarg);
            break;
        case 'o': g_free(o->output); o->output = g_strdup(optarg); break;
        case O_JSON: g_free(o->log_format); o->log_format = g_strdup("json"); break;
        case O_XML: g_free(o->log_format); o->log_format = g_strdup("xml"); break;
        case O_CSV: g_free(o->log_format); o->log_format = g_strdup("csv"); break;
        case O_POOL: g_free(o->pool); o->pool = g_strdup(optarg); break;
        case O_PLOT: g_free(o->plot); o->plot = g_strdup(optarg); break;
        case O_PLOT_METRICS: g_free(o->plot_metrics); o->plot_metrics = g_strdup(optarg); break;
        case O_FAIL: add_threshold(o, optarg); break;
        case O_MANIFEST: g_free(o->manifest); o->manifest = g_strdup(optarg); break;
        case O_LADDER_CSV: g_free(o->ladder_csv); o->ladder_csv = g_strdup(optarg); break;
        case O_LADDER_JSON: g_free(o->ladder_json); o->ladder_json = g_strdup(optarg); break;
        case O_PLOT_RD: g_free(o->plot_rd); o->plot_rd = g_strdup(optarg); break;
        case O_HULL: o->hull = TRUE; break;
        case O_DETECT_OFFSET:
            o->detect_offset = TRUE;
            if (optarg)
                o->align_max = parse_int("--detect-offset", optarg, 1, 10000);
            break;
        case O_ALIGN:
            if (!strcmp(optarg, "auto"))
                o->align = ALIGN_AUTO;
            else if (!strcmp(optarg, "force"))
                o->align = ALIGN_FORCE;
            else
                qmc_usage_error("--align: '%s' is not auto or force (a known offset: "
                                "--frame_skip_ref or --frame_skip_dist)", optarg);
            break;
        case O_ALIGN_MAX: o->align_max = parse_int("--align-max", optarg, 1, 10000); break;
        case O_ALIGN_WINDOW:
            o->align_window = parse_int("--align-window", optarg, QMC_ALIGN_MIN_WINDOW, 10000);
            break;
        case O_GPUS: parse_gpus(o, optarg); break;
        case O_DRY_RUN: o->dry_run = TRUE; break;
        case O_START:
            o->start = (guint64)parse_int("--start", optarg, 0, G_MAXINT);
            o->start_set = TRUE;
            break;
        case O_PARTIAL: g_free(o->partial); o->partial = g_strdup(optarg); break;
        case O_COUNT: o->count_frames = TRUE; break;
        case 'q': o->quiet = TRUE; break;
        case 'v': printf("qmetric-compare %s (%s)\n", QM_VERSION,
                         gst_version_string());
                  exit(0);
        case 'h':
        case O_HELP: usage(stdout); exit(0);
        case ':':
            qmc_usage_error("option %s needs a value", argv[optind - 1]);
        case '?':
        default:
            if (optopt && optopt < 256)
                qmc_usage_error("unknown option -%c", optopt);
            qmc_usage_error("unknown option %s", argv[optind - 1]);
        }
    }
    /* several renditions, a manifest or a ladder output: ladder mode; one
     * DISTORTED without them is the plain comparison */
    o->ladder = o->extra->len || o->manifest || o->ladder_csv || o->ladder_json || o->plot_rd;
    if (!o->input[REF] || (!o->input[DIST] && !o->manifest))
        qmc_usage_error("give two inputs: REFERENCE DISTORTED");
    if ((o->width > 0) != (o->height > 0))
        qmc_usage_error("raw input needs both --width and --height (or --size WxH)");
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
            qmc_usage_error("give --format or --pixel_format/--bitdepth, not both");
        if (bd == 8)
            f = pf == 420 ? "I420" : pf == 422 ? "Y42B" : pf == 444 ? "Y444" : "GRAY8";
        else if (bd == 10)
            f = pf == 420 ? "I420_10LE" : pf == 422 ? "I422_10LE" : pf == 444 ? "Y444_10LE" : NULL;
        else if (bd == 12)
            f = pf == 420 ? "I420_12LE" : pf == 422 ? "I422_12LE" : pf == 444 ? "Y444_12LE" : NULL;
        else if (bd == 16)
            f = pf == 444 ? "Y444_16LE" : pf == 400 ? "GRAY16_LE" : NULL;
        if (!f)
            qmc_usage_error("--pixel_format %d with --bitdepth %d has no planar GStreamer format",
                            pf, bd);
        o->raw_format = g_strdup(f);
    }
    if (!o->raw_format)
        o->raw_format = g_strdup("I420");
    if (o->hull && !o->plot_rd)
        qmc_usage_error("--hull draws on the rate-quality chart: give --plot-rd FILE.svg too");
    if (!o->scale_method)
        o->scale_method = g_strdup(QMC_DEFAULT_SCALER);
    if (o->detect_offset && o->align)
        qmc_usage_error("--detect-offset reports the offset, --align applies it: give one");
    if (o->align && o->pair_by_time)
        qmc_usage_error("--align applies to --pair-by index; with --pair-by time the "
                        "timestamps decide which frames pair");
    if (o->align && o->ladder)
        qmc_usage_error("--align is not available with several renditions (--detect-offset "
                        "reports each one's offset; score one with --frame_skip_ref/"
                        "--frame_skip_dist)");
    if (o->gpus_spec && o->cuda_device_id >= 0)
        qmc_usage_error("give --gpus or --cuda-device-id, not both");
    if (o->gpus_spec && o->backend && !strcmp(o->backend, "cpu"))
        qmc_usage_error("--gpus with --backend cpu: nothing would run on a GPU");
    qmc_chunk_check_options(o);
    if (o->pair_by_time && (o->skip[REF] || o->skip[DIST]))
        qmc_usage_error("--frame_skip_ref/--frame_skip_dist apply to --pair-by index; with "
                        "--pair-by time the timestamps decide which frames pair");
    {
        /* one thing on stdout, or scripts cannot read it */
        int on_stdout = (o->output && !strcmp(o->output, "-")) +
                        (o->ladder_csv && !strcmp(o->ladder_csv, "-")) +
                        (o->ladder_json && !strcmp(o->ladder_json, "-")) +
                        (o->plot_rd && !strcmp(o->plot_rd, "-")) +
                        (o->plot && !strcmp(o->plot, "-")) + (o->summary == SUMMARY_JSON);
        if (on_stdout > 1 && !o->ladder)
            qmc_usage_error("only one of -o -, --plot - and --summary json can use standard "
                            "output");
        if (on_stdout > 1)
            qmc_usage_error("only one of -o -, --plot -, --ladder-csv -, --ladder-json -, "
                            "--plot-rd - and --summary json can use standard output");
    }
    /* no output may replace an input (output.c); a ladder's renditions are
     * added as they are read (ladder.c) */
    qmc_output_protect(o->input[REF]);
    qmc_output_protect(o->input[DIST]);
    qmc_output_protect(o->manifest);
    if (o->pool) {
        /* libvmaf spells harmonic_mean with '_', GStreamer flags with '-' and '+' */
        char *p;
        for (p = o->pool; *p; p++) {
            if (*p == '_') *p = '-';
            if (*p == ',') *p = '+';
        }
    }
}

