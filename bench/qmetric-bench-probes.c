/* qmetric-bench-probes: how many live qmetric probes one process and one GPU
 * keep at real time, and the latency of their scores (issue 13).
 *
 *   qmetric-bench-probes [--backend cuda|cpu] [--probes N | --sweep N,N,...]
 *       [--width W] [--height H] [--fps N] [--duration S] [--warmup S]
 *       [--distinct N] [--dist-source memory|decode] [--decoder DESC]
 *       [--h264 FILE] [--bitrate KBPS] [--metrics LIST] [--threads N]
 *       [--feeders N] [--phase spread|aligned] [--lookahead N]
 *       [--pair-latency MS] [--budget-ms MS] [--cuda-device N] [--no-single-check] [--keep-going]
 *       [--timeout S] [--json FILE]
 *
 * A probe (gst-launch equivalent, built in code, N of them in one pipeline):
 *   appsrc is-live=true (reference)  ! qmetric.ref_sink
 *   appsrc is-live=true (distorted)  ! qmetric.dist_sink
 *   qmetric backend=cuda metrics=vmaf ! fakesink sync=false
 * The pictures are --distinct (16) NV12 reference pictures and their
 * distorted copies (bench/qmbench.c's content: VMAF well below 100), made
 * once and, with the CUDA backend, copied once into CUDA memory (buffers of
 * a GstCudaBufferPool on one GstCudaContext that the pipeline hands to every
 * element through the "gst.cuda.context" GstContext, so qmetric reads them
 * in place: the summary's cuda-in-place count says it did).
 * --dist-source decode: the distorted side is
 *   appsrc is-live=true (H.264 access units) ! h264parse ! DECODER
 *     ! video/x-raw(memory:CUDAMemory),format=NV12 ! qmetric.dist_sink
 * with DECODER = --decoder (default nvh264dec; with --backend cpu,
 * "avdec_h264 ! videoconvert" and system memory).  The bitstream is the
 * reference pictures encoded once by x264enc (zerolatency, High profile, one
 * GOP per cycle) from the distorted pictures, or --h264 FILE.  Every probe has its own decoder.
 *
 * The sources declare no latency of their own, so each qmetric gets
 * --pair-latency (its GstAggregator "latency" property, default one frame
 * period, 100 ms with a decoder): how long a frame waits for its partner past its running time
 * before it counts as unmatched.  It delays nothing when both frames are
 * there.
 *
 * Pacing: --feeders threads (default min(N, 4)) push frame k of probe j when
 * the pipeline clock (CLOCK_MONOTONIC) reaches base time + PTS, PTS =
 * start + k / fps + phase_j: real time, timestamps in running time, as a
 * capture source.  --phase spread (default) offsets probe j by j / (N fps)
 * so that the probes' frames do not all land at once; aligned puts them
 * all on the same instant (the worst burst).
 *
 * Stamps (CLOCK_MONOTONIC), per probe and frame k: push (into appsrc),
 * arrival (a buffer probe on qmetric's sink pads) on each side, and the
 * moment the element posts the "qmetric" message of frame k, caught by a
 * synchronous bus handler in the posting thread (no main-loop delay).
 * Per frame:
 *   latency = message - max(arrival ref k, arrival dist k)
 *   ready   = message - max(arrivals of frames k .. k + lookahead)
 *   e2e     = message - max(push ref k, push dist k)   (decoding included)
 * VMAF needs one frame of look-ahead (libvmaf's motion2 score of frame k is
 * min(motion(k), motion(k+1))), so latency is at least a frame period by
 * definition; "ready" is the latency from the moment the score can first be
 * computed (--lookahead, default 1 for VMAF; 0 for metrics without motion).
 * A message before frame k + lookahead arrived counts as "early" (the
 * look-ahead is smaller than said).  p50 / p99 / max are nearest-rank over
 * all probes' frames after --warmup seconds, except the last `lookahead`
 * frames of each probe (scored at EOS without look-ahead).
 *
 * Two verdicts per run of N probes:
 *   keeps up:  every probe ended, >= 99.5 % of the pushed pairs were
 *              scored, the median latency of the window's last second is
 *              less than one frame period above that of its first second
 *              (no backlog building up), and at most 0.5 % of the pushes
 *              were more than a quarter period late (the pacing itself kept
 *              real time);
 *   real time: keeps up, and the p99 of "ready" is below --budget-ms
 *              (default one frame period, 1 / fps).
 * The sweep reports the largest N for each; it stops at the first N that
 * does not keep up (--keep-going runs them all).
 *
 * Also reported: unmatched frames (qmetric-summary), pushes more than a
 * quarter period late (the pacing threads' own lag), wall time from the
 * first push to the last message against the stream time pushed, CPU use
 * of the process over the measured window (getrusage, in cores and in % of
 * all cores) and, with the CUDA backend, GPU use from NVML (libnvidia-ml.so.1
 * loaded at run time, NVML device 0; "n/a" without it): utilisation, NVDEC
 * utilisation, device memory used.
 *
 * Results equal single-instance results: first, one probe runs alone (at
 * most 3 s); every probe of every run is then compared with its scores,
 * frame by frame (same frame index, same pictures), where the frame and
 * both its neighbours were scored in both runs (VMAF's motion reads the
 * neighbouring pairs; an unmatched one changes it legitimately); the
 * largest absolute difference is reported (--no-single-check skips this).
 *
 * Without a GPU (no driver, no device, or a build without GStreamer's CUDA
 * library) --backend cuda prints why and exits 77.  --backend cpu runs the
 * same measurement on the CPU backend with system memory: small sizes and a
 * few probes test the machinery on any machine.
 *
 * Exit: 0 when every run completed (real time or not), 1 when a run failed,
 * 2 on bad arguments, 77 when the chosen backend cannot run here.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes.h"
#include "qmbench.h"
#include "qmbench-gst.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: qmetric-bench-probes [--backend cuda|cpu] [--probes N | --sweep N,N,...]\n"
        "    [--width W] [--height H] [--fps N] [--duration S] [--warmup S] [--distinct N]\n"
        "    [--dist-source memory|decode] [--decoder DESC] [--h264 FILE] [--bitrate KBPS]\n"
        "    [--metrics LIST] [--threads N] [--feeders N] [--phase spread|aligned]\n"
        "    [--lookahead N] [--pair-latency MS] [--cuda-device N] [--no-single-check]\n"
        "    [--budget-ms MS] [--keep-going] [--timeout S] [--json FILE]\n"
        "  N live probes (appsrc pairs paced at real time -> qmetric) in one pipeline;\n"
        "  reports scored pairs, latency from the later buffer's arrival to the score's\n"
        "  message (p50/p99/max), CPU and GPU use, and the largest N that keeps up\n"
        "  (>= 99.5%% scored, no growing backlog, pacing on time) and that also keeps\n"
        "  the p99 'ready' latency under --budget-ms (default one frame period).\n"
        "  defaults: --backend cuda --sweep 8,16,24,32,48,64 --width 1920 --height 1080\n"
        "  --fps 60 --duration 10 --warmup 2 --distinct 16 --dist-source memory\n"
        "  --decoder nvh264dec (cpu: 'avdec_h264 ! videoconvert') --bitrate 8000\n"
        "  --metrics vmaf --threads 0 --feeders min(N,4) --phase spread --lookahead 1\n"
        "  --pair-latency one frame period, 100 with a decoder (qmetric's latency)\n"
        "  --budget-ms one frame period\n"
        "  --cuda-device 0 --timeout 60.  Exit 77: the backend cannot run here.\n"
        "  See the comment at the top of bench/qmetric-bench-probes.c.\n");
}


/* Whether qmetric's sink pads accept CUDA memory (a build with the CUDA
 * backend and GStreamer's CUDA library). */
static bool qmetric_takes_cuda(void)
{
    GstElementFactory *f = gst_element_factory_find("qmetric");
    bool yes = false;
    if (!f)
        return false;
    for (const GList *l = gst_element_factory_get_static_pad_templates(f); l; l = l->next) {
        GstStaticPadTemplate *t = l->data;
        if (t->direction == GST_PAD_SINK && strstr(t->static_caps.string, pb_cuda_feature))
            yes = true;
    }
    gst_object_unref(f);
    return yes;
}

static bool decoder_exists(const char *desc, char *why, size_t len)
{
    GError *e = NULL;
    GstElement *d = gst_parse_bin_from_description(desc, TRUE, &e);
    if (!d) {
        snprintf(why, len, "decoder '%s' not available: %s%s", desc, e ? e->message : "?",
                 strstr(desc, "nvh264dec") ? " (nvcodec registers nvh264dec only where a"
                 " CUDA device and libnvcuvid work)" : "");
        g_clear_error(&e);
        return false;
    }
    g_clear_error(&e);
    gst_object_unref(gst_object_ref_sink(d));
    return true;
}

/* a JSON number, or null for NaN */
static void json_num(FILE *f, const char *key, double v, const char *fmt)
{
    fprintf(f, ", \"%s\": ", key);
    if (isnan(v))
        fputs("null", f);
    else
        fprintf(f, fmt, v);
}

static void json_lat(FILE *f, const char *key, const PbLat *l)
{
    fprintf(f, ", \"%s\": {\"n\": %" G_GUINT64_FORMAT ", \"p50_ms\": %.4f, \"p99_ms\": %.4f, "
            "\"max_ms\": %.4f}", key, l->n, l->p50, l->p99, l->max);
}

static void json_run(FILE *f, const PbResult *r)
{
    fprintf(f, "{\"probes\": %d, \"ok\": %s", r->probes, r->why[0] ? "false" : "true");
    if (r->why[0]) {
        fprintf(f, ", \"error\": ");
        qb_json_str(f, r->why);
    }
    fprintf(f, ", \"realtime\": %s, \"pushed\": %" G_GUINT64_FORMAT ", \"scored\": %"
            G_GUINT64_FORMAT ", \"scored_ratio\": %.6f, \"summaries\": %d, \"summary_frames\": %"
            G_GUINT64_FORMAT ", \"unmatched\": %" G_GUINT64_FORMAT ", \"cuda_in_place\": %"
            G_GUINT64_FORMAT ", \"cuda_copied\": %" G_GUINT64_FORMAT ", \"warnings\": %"
            G_GUINT64_FORMAT, r->realtime ? "true" : "false", r->pushed, r->scored,
            r->scored_ratio, r->summaries, r->summary_frames, r->unmatched, r->cuda_in_place,
            r->cuda_copied, r->warnings);
    json_lat(f, "latency", &r->lat);
    json_lat(f, "ready", &r->ready);
    json_lat(f, "e2e", &r->e2e);
    json_lat(f, "arrival_lag", &r->lag);
    fprintf(f, ", \"lost\": {\"no_reference\": %" G_GUINT64_FORMAT ", \"no_distorted\": %"
            G_GUINT64_FORMAT ", \"late\": %" G_GUINT64_FORMAT ", \"in_time\": %"
            G_GUINT64_FORMAT ", \"first_second\": %" G_GUINT64_FORMAT ", \"late_max_ms\": %.3f}",
            r->lost_no_ref, r->lost_no_dist, r->lost_late, r->lost_in_time, r->lost_first_s,
            r->lost_lag_max_ms);
    fprintf(f, ", \"lost_in_time_first\": [");
    for (int i = 0; i < r->n_in_time; i++)
        fprintf(f, "%s{\"probe\": %d, \"frame\": %d, \"reference_ms\": %.3f, "
                "\"distorted_ms\": %.3f, \"latency_ms\": %.3f, \"previous_scored\": %s, "
                "\"next_scored\": %s}", i ? ", " : "", r->in_time[i].probe,
                r->in_time[i].frame, r->in_time[i].ref_ms, r->in_time[i].dist_ms,
                r->in_time[i].latency_ms, r->in_time[i].prev ? "true" : "false",
                r->in_time[i].next ? "true" : "false");
    fprintf(f, "]");
    fprintf(f, ", \"keeps_up\": %s, \"latency_first_s_p50_ms\": %.4f, "
            "\"latency_last_s_p50_ms\": %.4f", r->keeps_up ? "true" : "false", r->lat_head_ms,
            r->lat_tail_ms);
    fprintf(f, ", \"early\": %" G_GUINT64_FORMAT ", \"late_pushes\": %" G_GUINT64_FORMAT
            ", \"push_late_max_ms\": %.3f, \"stream_s\": %.3f, \"wall_s\": %.3f, "
            "\"cpu_cores\": %.3f, \"cpu_pct\": %.2f, \"ncpu\": %d", r->early, r->late_pushes,
            r->push_late_max_ms, r->stream_s, r->wall_s, r->cpu_cores, r->cpu_pct, r->ncpu);
    if (r->gpu.valid)
        fprintf(f, ", \"gpu\": {\"samples\": %d, \"util_mean\": %.1f, \"util_max\": %.0f, "
                "\"dec_mean\": %.1f, \"dec_max\": %.0f, \"mem_used_max_mib\": %.0f, "
                "\"mem_total_mib\": %.0f}", r->gpu.samples, r->gpu.util_mean, r->gpu.util_max,
                r->gpu.dec_mean, r->gpu.dec_max, r->gpu.mem_used_max_mib, r->gpu.mem_total_mib);
    else
        fprintf(f, ", \"gpu\": null");
    fprintf(f, ", \"feature\": ");
    qb_json_str(f, r->feature);
    json_num(f, "score_mean", r->score_mean, "%.6f");
    fprintf(f, ", \"score_compared\": %" G_GUINT64_FORMAT, r->score_compared);
    json_num(f, "score_maxdiff", r->score_compared ? r->score_maxdiff : NAN, "%.3g");
    fprintf(f, "}");
}

static void print_header(void)
{
    printf("%6s %8s %6s %23s %17s %9s %6s %6s %6s %8s %9s %s\n", "probes", "scored%",
           "unmtch", "latency p50/p99/max ms", "ready p50/p99 ms", "e2e p99", "cpu",
           "gpu%", "dec%", "mem MiB", "maxdiff", "keeps up / real time");
}

static void print_row(const PbResult *r)
{
    char gpu[16] = "n/a", dec[16] = "n/a", mem[16] = "n/a", diff[16] = "-";
    if (r->gpu.valid) {
        snprintf(gpu, sizeof(gpu), "%.0f", r->gpu.util_mean);
        snprintf(dec, sizeof(dec), "%.0f", r->gpu.dec_mean);
        snprintf(mem, sizeof(mem), "%.0f", r->gpu.mem_used_max_mib);
    }
    if (r->score_compared)
        snprintf(diff, sizeof(diff), "%.1e", r->score_maxdiff);
    printf("%6d %8.2f %6" G_GUINT64_FORMAT " %7.2f/%7.2f/%7.2f %8.2f/%8.2f %9.2f %6.2f "
           "%6s %6s %8s %9s %s / %s%s%s\n", r->probes, 100.0 * r->scored_ratio, r->unmatched,
           r->lat.p50, r->lat.p99, r->lat.max, r->ready.p50, r->ready.p99, r->e2e.p99,
           r->cpu_cores, gpu, dec, mem, diff, r->keeps_up ? "yes" : "no",
           r->realtime ? "yes" : "no",
           r->why[0] ? ": " : "", r->why);
    if (r->early || r->late_pushes)
        printf("       (%" G_GUINT64_FORMAT " messages before their look-ahead arrived, %"
               G_GUINT64_FORMAT " pushes late, worst %.2f ms)\n", r->early, r->late_pushes,
               r->push_late_max_ms);
    if (r->lost_no_ref + r->lost_no_dist + r->lost_late + r->lost_in_time)
        printf("       unscored pairs: %" G_GUINT64_FORMAT " without the reference, %"
               G_GUINT64_FORMAT " without the distorted frame, %" G_GUINT64_FORMAT
               " later than the element's latency then in effect (worst %.1f ms past the running time), %"
               G_GUINT64_FORMAT " both in time; %" G_GUINT64_FORMAT " in the first second. "
               "Arrival lag distorted - reference p50/p99/max %.2f/%.2f/%.2f ms\n",
               r->lost_no_ref, r->lost_no_dist, r->lost_late, r->lost_lag_max_ms,
               r->lost_in_time, r->lost_first_s, r->lag.p50, r->lag.p99, r->lag.max);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    PbOpts o = { .cuda = true, .fps = 60, .duration = 10, .warmup = 2, .lookahead = 1,
                 .metrics = "vmaf", .dist = PB_DIST_MEMORY, .timeout = 60 };
    const char *backend = "cuda", *sweep = "8,16,24,32,48,64", *json = NULL, *h264 = NULL;
    const char *dist = "memory", *phase = "spread";
    int width = 1920, height = 1080, distinct = 16, bitrate = 8000, device = 0, probes = 0;
    bool single_check = true, keep_going = false;
    double pair_ms = -1;

    gst_init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const bool v = i + 1 < argc;
        if (!strcmp(a, "--backend") && v) backend = argv[++i];
        else if (!strcmp(a, "--probes") && v) probes = atoi(argv[++i]);
        else if (!strcmp(a, "--sweep") && v) sweep = argv[++i];
        else if (!strcmp(a, "--width") && v) width = atoi(argv[++i]);
        else if (!strcmp(a, "--height") && v) height = atoi(argv[++i]);
        else if (!strcmp(a, "--fps") && v) o.fps = atoi(argv[++i]);
        else if (!strcmp(a, "--duration") && v) o.duration = atof(argv[++i]);
        else if (!strcmp(a, "--warmup") && v) o.warmup = atof(argv[++i]);
        else if (!strcmp(a, "--distinct") && v) distinct = atoi(argv[++i]);
        else if (!strcmp(a, "--dist-source") && v) dist = argv[++i];
        else if (!strcmp(a, "--decoder") && v) o.decoder = argv[++i];
        else if (!strcmp(a, "--h264") && v) h264 = argv[++i];
        else if (!strcmp(a, "--bitrate") && v) bitrate = atoi(argv[++i]);
        else if (!strcmp(a, "--metrics") && v) o.metrics = argv[++i];
        else if (!strcmp(a, "--threads") && v) o.threads = atoi(argv[++i]);
        else if (!strcmp(a, "--feeders") && v) o.feeders = atoi(argv[++i]);
        else if (!strcmp(a, "--phase") && v) phase = argv[++i];
        else if (!strcmp(a, "--lookahead") && v) o.lookahead = atoi(argv[++i]);
        else if (!strcmp(a, "--pair-latency") && v) pair_ms = atof(argv[++i]);
        else if (!strcmp(a, "--budget-ms") && v) o.budget_ms = atof(argv[++i]);
        else if (!strcmp(a, "--cuda-device") && v) device = atoi(argv[++i]);
        else if (!strcmp(a, "--timeout") && v) o.timeout = atof(argv[++i]);
        else if (!strcmp(a, "--json") && v) json = argv[++i];
        else if (!strcmp(a, "--no-single-check")) single_check = false;
        else if (!strcmp(a, "--keep-going")) keep_going = true;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (strcmp(backend, "cuda") && strcmp(backend, "cpu")) {
        fprintf(stderr, "--backend: cuda or cpu, not %s\n", backend);
        return 2;
    }
    o.cuda = !strcmp(backend, "cuda");
    if (!strcmp(dist, "decode") || !strcmp(dist, "nvh264dec"))
        o.dist = PB_DIST_DECODE;
    else if (strcmp(dist, "memory")) {
        fprintf(stderr, "--dist-source: memory or decode, not %s\n", dist);
        return 2;
    }
    if (!o.decoder)
        o.decoder = !strcmp(dist, "nvh264dec") || o.cuda ? "nvh264dec"
                                                         : "avdec_h264 ! videoconvert";
    if (strcmp(phase, "spread") && strcmp(phase, "aligned")) {
        fprintf(stderr, "--phase: spread or aligned, not %s\n", phase);
        return 2;
    }
    o.aligned = !strcmp(phase, "aligned");
    if (!(o.budget_ms > 0))
        o.budget_ms = 1000.0 / MAX(o.fps, 1);
    /* a decoder's first frames come late (start-up, frame threads) */
    o.pair_latency = pair_ms >= 0 ? (GstClockTime)(pair_ms * 1e6)
                     : o.dist == PB_DIST_DECODE ? 100 * GST_MSECOND
                     : gst_util_uint64_scale_int(GST_SECOND, 1, MAX(o.fps, 1));
    if (o.fps < 1 || !(o.duration > 0) || o.warmup < 0 || distinct < 1 || o.lookahead < 0 ||
        o.threads < 0 || o.feeders < 0 || !(o.timeout > 0) || bitrate < 1 || device < 0) {
        fprintf(stderr, "need --fps >= 1, --duration > 0, --warmup >= 0, --distinct >= 1, "
                "--lookahead >= 0, --timeout > 0, --bitrate >= 1\n");
        return 2;
    }
    int nsw = 0;
    int *list = NULL;
    if (probes > 0) {
        nsw = 1;
        list = g_new(int, 1);
        list[0] = probes;
    } else {
        char **v = qb_split(sweep, ",", &nsw);
        list = g_new(int, MAX(nsw, 1));
        for (int i = 0; i < nsw; i++)
            if ((list[i] = atoi(v[i])) < 1) {
                fprintf(stderr, "--sweep: probe counts >= 1, not %s\n", v[i]);
                return 2;
            }
        qb_free_list(v);
    }
    if (nsw < 1) {
        fprintf(stderr, "--probes N or --sweep N,N,...\n");
        return 2;
    }

    if (!qb_find_qmetric()) {
        fprintf(stderr, "no qmetric element: set GST_PLUGIN_PATH to the build's gst/qmetric\n");
        return 1;
    }
    char why[512] = "";
    GstObject *ctx = NULL;
    if (o.cuda) {
        if (!(ctx = pb_cuda_open(device, why, sizeof(why)))) {
            printf("SKIP: --backend cuda: %s\n", why);
            return 77;
        }
        if (!qmetric_takes_cuda()) {
            printf("SKIP: this qmetric does not accept CUDA memory (built without the CUDA "
                   "backend or gstreamer-cuda-1.0)\n");
            gst_object_unref(ctx);
            return 77;
        }
    }
    if (o.dist == PB_DIST_DECODE && !decoder_exists(o.decoder, why, sizeof(why))) {
        printf("SKIP: %s\n", why);
        if (ctx)
            gst_object_unref(ctx);
        return 77;
    }

    PbFrames fr;
    if (pb_frames_make(&fr, width, height, o.fps, distinct)) {
        fprintf(stderr, "cannot make %dx%d NV12 pictures (even sizes >= 16)\n", width, height);
        return 2;
    }
    int rc = 0;
    if (o.dist == PB_DIST_DECODE &&
        (h264 ? pb_frames_load_h264(&fr, h264, why, sizeof(why))
              : pb_frames_encode(&fr, bitrate, why, sizeof(why)))) {
        fprintf(stderr, "the distorted bitstream: %s\n", why);
        rc = 1;
    }
    if (!rc && ctx && pb_cuda_upload(ctx, &fr, why, sizeof(why))) {
        fprintf(stderr, "%s\n", why);
        rc = 1;
    }
    FILE *jf = NULL;
    if (!rc && json && !(jf = fopen(json, "w"))) {
        fprintf(stderr, "%s: %s\n", json, g_strerror(errno));
        rc = 1;
    }
    if (rc) {
        pb_frames_clear(&fr);
        if (ctx)
            gst_object_unref(ctx);
        return rc;
    }

    const double period_ms = 1000.0 / o.fps;
    printf("# %s backend, %dx%d NV12 at %d fps, distorted from %s%s%s, metrics %s, "
           "%.1f s + %.1f s warm-up a run, phase %s, look-ahead %d\n", backend, width, height,
           o.fps, o.dist == PB_DIST_DECODE ? "H.264 through " : "memory",
           o.dist == PB_DIST_DECODE ? o.decoder : "", h264 ? " (--h264 file)" : "",
           o.metrics, o.duration, o.warmup, phase, o.lookahead);
    printf("# keeps up: >= 99.5%% of pairs scored, latency not growing, pacing on time; "
           "real time: also p99 'ready' latency < %.2f ms\n", o.budget_ms);
    if (jf) {
        fprintf(jf, "{\"tool\": \"qmetric-bench-probes\", \"backend\": \"%s\", \"width\": %d, "
                "\"height\": %d, \"fps\": %d, \"format\": \"NV12\", \"duration_s\": %g, "
                "\"warmup_s\": %g, \"distinct\": %d, \"dist_source\": \"%s\", \"decoder\": ",
                backend, width, height, o.fps, o.duration, o.warmup, distinct,
                o.dist == PB_DIST_DECODE ? "decode" : "memory");
        qb_json_str(jf, o.dist == PB_DIST_DECODE ? o.decoder : "");
        fprintf(jf, ", \"h264\": ");
        qb_json_str(jf, h264 ? h264 : "");
        fprintf(jf, ", \"metrics\": ");
        qb_json_str(jf, o.metrics);
        fprintf(jf, ", \"threads\": %d, \"feeders\": %d, \"phase\": \"%s\", \"lookahead\": %d, "
                "\"pair_latency_ms\": %.3f, "
                "\"criterion\": {\"scored_ratio_min\": 0.995, \"latency_growth_max_ms\": %.4f, "
                "\"late_pushes_max_ratio\": 0.005, \"ready_p99_max_ms\": %.4f}",
                o.threads, o.feeders, phase, o.lookahead, o.pair_latency / 1e6, period_ms,
                o.budget_ms);
    }

    /* one probe alone: the scores every probe of every run must equal */
    PbResult single;
    memset(&single, 0, sizeof(single));
    if (single_check) {
        PbOpts so = o;
        so.duration = MIN(o.duration, 3.0);
        so.warmup = 0;
        if (!pb_run(&so, &fr, ctx, 1, &single)) {
            printf("single probe: failed: %s\n", single.why);
            rc = 1;
        } else {
            o.single = single.scores;
            o.n_single = single.n_scores;
            printf("# single probe: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                   " pairs scored, mean %s %.4f\n", single.scored, single.pushed,
                   single.feature, single.score_mean);
        }
        if (jf) {
            fprintf(jf, ", \"single\": ");
            json_run(jf, &single);
        }
    }

    int best = 0, best_up = 0;
    char gpu_name[96] = "";
    if (jf)
        fprintf(jf, ", \"runs\": [");
    if (!rc) {
        print_header();
        for (int i = 0; i < nsw; i++) {
            PbResult r;
            const bool ran = pb_run(&o, &fr, ctx, list[i], &r);
            print_row(&r);
            if (jf) {
                fprintf(jf, "%s\n  ", i ? "," : "");
                json_run(jf, &r);
            }
            if (!ran)
                rc = 1;
            if (r.realtime)
                best = MAX(best, r.probes);
            if (r.keeps_up)
                best_up = MAX(best_up, r.probes);
            if (r.gpu.valid && !gpu_name[0])
                g_strlcpy(gpu_name, r.gpu.name, sizeof(gpu_name));
            const bool stop = !r.keeps_up && !keep_going;
            pb_result_clear(&r);
            if (stop && i + 1 < nsw) {
                printf("# stopped at the first probe count that does not keep up "
                       "(--keep-going runs the rest)\n");
                break;
            }
        }
        printf("largest probe count that keeps up: %d; that also meets the latency budget: "
               "%d\n", best_up, best);
    }
    if (jf) {
        fprintf(jf, "\n], \"max_keeps_up_probes\": %d, \"max_realtime_probes\": %d, "
                "\"gpu_name\": ", best_up, best);
        qb_json_str(jf, gpu_name);
        fprintf(jf, "}\n");
        fclose(jf);
    }
    pb_result_clear(&single);
    pb_frames_clear(&fr);
    g_free(list);
    if (ctx)
        gst_object_unref(ctx);
    return rc;
}
