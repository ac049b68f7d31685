/* qmetric-bench-probes: how many live qmetric probes one process and one GPU
 * keep at real time, against how many streams the same sources, parsers and
 * decoders keep without qmetric, and the latency of the scores (issues 13
 * and 25).
 *
 *   qmetric-bench-probes [--backend cuda|cpu] [--probes N | --sweep N,N,...
 *       | --bisect LO:HI[:STEP]] [--baseline] [--time-budget S]
 *       [--width W] [--height H] [--fps N] [--bits 8|10] [--duration S]
 *       [--warmup S] [--distinct N] [--dist-source memory|decode]
 *       [--ref-source memory|decode] [--codec h264|h265] [--decoder DESC]
 *       [--dist-file FILE] [--ref-file FILE] [--bitrate KBPS]
 *       [--ref-bitrate KBPS] [--metrics LIST] [--threads N] [--feeders N]
 *       [--phase spread|aligned] [--lookahead N] [--pair-latency MS]
 *       [--budget-ms MS] [--stall-ms MS] [--stall-records N]
 *       [--cuda-device N] [--cuda-sched gst|spin|yield|blocking]
 *       [--cuda-context shared|per-probe] [--no-single-check] [--keep-going]
 *       [--timeout S] [--json FILE]
 *
 * A probe (gst-launch equivalent, built in code, N of them in one pipeline):
 *   appsrc is-live=true (reference)  ! qmetric.ref_sink
 *   appsrc is-live=true (distorted)  ! qmetric.dist_sink
 *   qmetric backend=cuda metrics=vmaf ! fakesink sync=false
 * The pictures are --distinct (16) reference pictures and their distorted
 * copies (bench/qmbench.c's content: VMAF well below 100; NV12, or P010 with
 * --bits 10), made once and, with the CUDA backend, copied once into CUDA
 * memory (GStreamer's CUDA allocator on one GstCudaContext that the pipeline
 * hands to every element through the "gst.cuda.context" GstContext, so
 * qmetric reads them in place: the summary's cuda-in-place count says it
 * did).  --dist-source decode (and --ref-source decode: both sides decoded,
 * a contribution feed against its distribution encode): that side is
 *   appsrc is-live=true (access units) ! h264parse|h265parse ! DECODER
 *     ! video/x-raw(memory:CUDAMemory),format=NV12|P010_10LE,width,height
 * with DECODER = --decoder (default nvh264dec / nvh265dec by --codec; with
 * --backend cpu, "avdec_h264 ! videoconvert" / "avdec_h265 ! videoconvert"
 * and system memory).  Each bitstream is that side's pictures encoded once
 * (x264enc High, or x265enc Main / Main 10 by --bits; zero latency, one
 * closed GOP per cycle of --distinct pictures; the distorted side at
 * --bitrate, default 8000 kbit/s, the reference at --ref-bitrate, default
 * 50000), or --dist-file / --ref-file.  Every probe has its own decoders.
 *
 * --baseline adds the decode-only baseline, run in the same invocation
 * before the probes: the same sources, parsers and decoders with each side
 * into a fakesink instead of qmetric, paced the same way.  Every density
 * figure is then "probes kept at real time / decode-only streams kept at
 * real time" on the same machine (a stream: one probe's sources and
 * decoders).
 *
 * The sources declare no latency of their own, so each qmetric gets
 * --pair-latency (its GstAggregator "latency" property, default one frame
 * period, 100 ms with a decoder): how long a frame waits for its partner
 * past its running time before it counts as unmatched.  It delays nothing
 * when both frames are there.
 *
 * Pacing: --feeders threads (default one per 6 probes, at least min(N, 4))
 * push frame k of probe j when the pipeline clock (CLOCK_MONOTONIC) reaches
 * base time + PTS, PTS = start + k / fps + phase_j: real time, timestamps in
 * running time, as a capture source.  --phase spread (default) offsets probe j by j / (N fps)
 * so that the probes' frames do not all land at once; aligned puts them
 * all on the same instant (the worst burst).
 *
 * Stamps (CLOCK_MONOTONIC), per probe and frame k: push (into appsrc), the
 * moment appsrc's thread sends it on, arrival (a buffer probe on qmetric's
 * sink pads, or the baseline's fakesinks) on each side, and the moment the
 * element posts the "qmetric" message of frame k, caught by a synchronous
 * bus handler in the posting thread (no main-loop delay).  With
 * QMETRIC_FRAME_TIMES=1 (set here unless already set) the element adds its
 * own stamps of each pair to the message (gst/qmetric/qmframetimes.h):
 * taken off the pads, mapped, submitted to the engine, scores handed out.
 * Per frame:
 *   latency = message - max(arrival ref k, arrival dist k)
 *   ready   = message - max(arrivals of frames k .. k + lookahead)
 *   e2e     = message - max(push ref k, push dist k)   (decoding included)
 *   decode  = arrival - push, on a decoded side (parser, decoder, queues)
 * VMAF needs one frame of look-ahead (libvmaf's motion2 score of frame k is
 * min(motion(k), motion(k+1))), so latency is at least a frame period by
 * definition; "ready" is the latency from the moment the score can first be
 * computed (--lookahead, default 1 for VMAF; 0 for metrics without motion).
 * A message before frame k + lookahead arrived counts as "early" (the
 * look-ahead is smaller than said).  p50 / p99 / max are nearest-rank over
 * all probes' frames after --warmup seconds, except the last `lookahead`
 * frames of each probe (scored at EOS without look-ahead).
 *
 * Kept at real time, the density verdict of a run of N probes (or N
 * decode-only streams): over the measured window (every probe's frames
 * after the warm-up, except the last `lookahead`), at least 99.5 % of the
 * pairs were delivered by their deadline, and at most 0.5 % of the pushes
 * were more than a quarter period late (the pacing itself kept real time).
 * The deadline of pair k is its running time plus the latency the consumer
 * announces downstream: qmetric's latency query (its latency property, its
 * look-ahead and the decoders' latency), by which its score's message must
 * be posted; in the baseline, the decoders' latency plus the same latency
 * property, by which every decoded frame of the pair must reach its
 * fakesink (with no decoded side, both frames).  A live sink downstream
 * would drop what comes later.  The search reports the largest N kept:
 * --sweep runs a list (stopping after the first N not kept unless
 * --keep-going), --bisect LO:HI[:STEP] halves [LO, HI] until the largest N
 * kept and the smallest N not kept are at most STEP (default 1) apart (the
 * range's ends are run too), and --time-budget S ends either before a run
 * that the remaining seconds would not hold (the previous run's wall time
 * as the estimate; with --baseline, the baseline's search has at most half
 * of them).
 *
 * Two older verdicts per run, for qmetric:
 *   keeps up:  every probe ended, >= 99.5 % of the pushed pairs were
 *              scored (at any time), the median latency of the window's
 *              last second is less than one frame period above that of its
 *              first second (no backlog building up), and the pacing kept
 *              real time as above;
 *   real time: keeps up, and the p99 of "ready" is below --budget-ms
 *              (default one frame period, 1 / fps).
 *
 * Stall records: every score later than --stall-ms (default 10) after
 * ready, with the segments it waited in (between the stamps above: the
 * element's thread busy elsewhere, the map, the submit waiting for a free
 * frame slot, the device and the look-ahead, the message) and the longest
 * named; and every frame that took longer than --stall-ms from its push to
 * its consumer's pad, split into waiting for appsrc's thread (busy with
 * earlier frames or blocked downstream) and the way from there (parser,
 * decoder, its copy out).  Counts by cause, and the --stall-records (default
 * 100) worst of each kind, go to the JSON.  GST_TRACERS (latency, stats)
 * work as in any GStreamer program.
 *
 * Also reported: unmatched and skipped frames (qmetric-summary), wall time
 * from the first push to the last message against the stream time pushed,
 * CPU use of the process over the measured window (getrusage, in cores and
 * in % of all cores) and, with the CUDA backend, GPU use from NVML
 * (libnvidia-ml.so.1 loaded at run time, NVML device 0; "n/a" without it):
 * utilisation, NVDEC utilisation, device memory used.  --cuda-sched makes
 * the shared CUDA context with the driver's spin, yield or blocking-sync
 * wait instead of GStreamer's (gst: the driver's automatic choice), the wait
 * the decoders use after each picture's copy.  --cuda-context per-probe
 * gives each probe (both sides decoded) a GstCudaContext of its own, as
 * GStreamer 1.22 gives each pipeline that finds none a CUDA context of its
 * own (qmetric-probe runs a pipeline a probe): the GPU then switches between
 * contexts instead of running their work side by side.
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
 * Exit: 0 when every run completed (kept or not), 1 when a run failed,
 * 2 on bad arguments, 77 when the chosen backend or decoder cannot run here.
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
        "usage: qmetric-bench-probes [--backend cuda|cpu] [--probes N | --sweep N,N,...\n"
        "    | --bisect LO:HI[:STEP]] [--baseline] [--time-budget S] [--width W] [--height H]\n"
        "    [--fps N] [--bits 8|10] [--duration S] [--warmup S] [--distinct N]\n"
        "    [--dist-source memory|decode] [--ref-source memory|decode] [--codec h264|h265]\n"
        "    [--decoder DESC] [--dist-file FILE] [--ref-file FILE] [--bitrate KBPS]\n"
        "    [--ref-bitrate KBPS] [--metrics LIST] [--threads N] [--feeders N]\n"
        "    [--phase spread|aligned] [--lookahead N] [--pair-latency MS] [--budget-ms MS]\n"
        "    [--stall-ms MS] [--stall-records N] [--cuda-device N]\n"
        "    [--cuda-sched gst|spin|yield|blocking] [--cuda-context shared|per-probe]\n"
        "    [--no-single-check] [--keep-going]\n"
        "    [--timeout S] [--json FILE]\n"
        "  N live probes (appsrc pairs paced at real time, a side optionally through a\n"
        "  parser and a decoder, -> qmetric) in one pipeline; --baseline first runs the\n"
        "  same sources and decoders into fakesinks.  Reports, per run, the pairs kept\n"
        "  (delivered by their running time plus the consumer's announced latency),\n"
        "  scored pairs, latency from the later buffer's arrival to the score's message\n"
        "  (p50/p99/max), stall records, CPU and GPU use; and the largest N kept at real\n"
        "  time (>= 99.5%% of the window's pairs kept, pacing on time) for the probes\n"
        "  and the baseline, and their ratio.\n"
        "  defaults: --backend cuda --sweep 8,16,24,32,48,64 --width 1920 --height 1080\n"
        "  --fps 60 --bits 8 --duration 10 --warmup 2 --distinct 16 --dist-source memory\n"
        "  --ref-source memory --codec h264 (h265 with --bits 10) --decoder nvh264dec /\n"
        "  nvh265dec (cpu: 'avdec_h264 ! videoconvert' / 'avdec_h265 ! videoconvert')\n"
        "  --bitrate 8000 --ref-bitrate 50000 --metrics vmaf --threads 0\n"
        "  --feeders min(N, max(4, N/6)) --phase spread --lookahead 1 --pair-latency one\n"
        "  frame period, 100 with a decoder (qmetric's latency) --budget-ms one frame period\n"
        "  --stall-ms 10 --stall-records 100 --cuda-device 0 --cuda-sched gst\n"
        "  --cuda-context shared --timeout 60.\n"
        "  --h264 FILE is --dist-file FILE.  Exit 77: the backend or a decoder cannot run\n"
        "  here.  See the comment at the top of bench/qmetric-bench-probes.c.\n");
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
    fprintf(f, "{\"probes\": %d, \"sink\": \"%s\", \"ok\": %s", r->probes,
            r->sink == PB_SINK_FAKESINK ? "fakesink" : "qmetric", r->why[0] ? "false" : "true");
    if (r->why[0]) {
        fprintf(f, ", \"error\": ");
        qb_json_str(f, r->why);
    }
    fprintf(f, ", \"kept\": %s, \"window_pairs\": %" G_GUINT64_FORMAT ", \"window_kept\": %"
            G_GUINT64_FORMAT ", \"kept_ratio\": %.6f, \"deadline_ms\": %.3f",
            r->kept ? "true" : "false", r->window_pairs, r->window_kept, r->kept_ratio,
            r->deadline_ms);
    fprintf(f, ", \"realtime\": %s, \"pushed\": %" G_GUINT64_FORMAT ", \"scored\": %"
            G_GUINT64_FORMAT ", \"scored_ratio\": %.6f, \"summaries\": %d, \"summary_frames\": %"
            G_GUINT64_FORMAT ", \"unmatched\": %" G_GUINT64_FORMAT ", \"skipped\": %"
            G_GUINT64_FORMAT ", \"cuda_in_place\": %" G_GUINT64_FORMAT ", \"cuda_copied\": %"
            G_GUINT64_FORMAT ", \"warnings\": %" G_GUINT64_FORMAT, r->realtime ? "true" : "false",
            r->pushed, r->scored, r->scored_ratio, r->summaries, r->summary_frames, r->unmatched,
            r->skipped, r->cuda_in_place, r->cuda_copied, r->warnings);
    json_lat(f, "latency", &r->lat);
    json_lat(f, "ready", &r->ready);
    json_lat(f, "e2e", &r->e2e);
    json_lat(f, "arrival_lag", &r->lag);
    json_lat(f, "decode", &r->decode);
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
    fprintf(f, ", \"seconds\": [");
    for (int i = 0; i < r->n_secs; i++)
        fprintf(f, "%s{\"pairs\": %" G_GUINT64_FORMAT ", \"kept\": %" G_GUINT64_FORMAT
                ", \"scored\": %" G_GUINT64_FORMAT ", \"latency_p50_ms\": %.3f, "
                "\"latency_p99_ms\": %.3f, \"latency_max_ms\": %.3f}", i ? ", " : "",
                r->secs[i].pairs, r->secs[i].kept, r->secs[i].scored, r->secs[i].lat.p50,
                r->secs[i].lat.p99, r->secs[i].lat.max);
    fprintf(f, "]");
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
    fprintf(f, ", \"stalls\": ");
    pb_stalls_json(f, &r->stalls);
    fprintf(f, "}");
}

static void print_header(PbSink sink)
{
    if (sink == PB_SINK_FAKESINK) {
        printf("%6s %8s %20s %25s %6s %6s %6s %s\n", "streams", "kept%", "deadline ms",
               "decode p50/p99/max ms", "cpu", "gpu%", "dec%", "kept");
        return;
    }
    printf("%6s %8s %8s %6s %23s %17s %9s %6s %6s %6s %8s %9s %s\n", "probes", "kept%",
           "scored%", "unmtch", "latency p50/p99/max ms", "ready p50/p99 ms", "e2e p99", "cpu",
           "gpu%", "dec%", "mem MiB", "maxdiff", "kept / keeps up / real time");
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
    if (r->sink == PB_SINK_FAKESINK)
        printf("%6d %8.2f %20.1f %8.2f/%7.2f/%8.2f %6.2f %6s %6s %s%s%s\n", r->probes,
               100.0 * r->kept_ratio, r->deadline_ms, r->decode.p50, r->decode.p99,
               r->decode.max, r->cpu_cores, gpu, dec, r->kept ? "yes" : "no",
               r->why[0] ? ": " : "", r->why);
    else
        printf("%6d %8.2f %8.2f %6" G_GUINT64_FORMAT " %7.2f/%7.2f/%7.2f %8.2f/%8.2f %9.2f "
               "%6.2f %6s %6s %8s %9s %s / %s / %s%s%s\n", r->probes, 100.0 * r->kept_ratio,
               100.0 * r->scored_ratio, r->unmatched, r->lat.p50, r->lat.p99, r->lat.max,
               r->ready.p50, r->ready.p99, r->e2e.p99, r->cpu_cores, gpu, dec, mem, diff,
               r->kept ? "yes" : "no", r->keeps_up ? "yes" : "no", r->realtime ? "yes" : "no",
               r->why[0] ? ": " : "", r->why);
    if (r->early || r->late_pushes)
        printf("       (%" G_GUINT64_FORMAT " messages before their look-ahead arrived, %"
               G_GUINT64_FORMAT " pushes late, worst %.2f ms)\n", r->early, r->late_pushes,
               r->push_late_max_ms);
    if (r->sink == PB_SINK_QMETRIC && r->lost_no_ref + r->lost_no_dist + r->lost_late +
        r->lost_in_time)
        printf("       unscored pairs: %" G_GUINT64_FORMAT " without the reference, %"
               G_GUINT64_FORMAT " without the distorted frame, %" G_GUINT64_FORMAT
               " later than the element's latency then in effect (worst %.1f ms past the running time), %"
               G_GUINT64_FORMAT " both in time; %" G_GUINT64_FORMAT " in the first second; %"
               G_GUINT64_FORMAT " skipped to keep up. "
               "Arrival lag distorted - reference p50/p99/max %.2f/%.2f/%.2f ms\n",
               r->lost_no_ref, r->lost_no_dist, r->lost_late, r->lost_lag_max_ms,
               r->lost_in_time, r->lost_first_s, r->skipped, r->lag.p50, r->lag.p99, r->lag.max);
    const PbStalls *st = &r->stalls;
    if (st->ready_over || st->arrival_over[0] || st->arrival_over[1]) {
        printf("       stalls over %.0f ms: %" G_GUINT64_FORMAT " scores (", st->threshold_ms,
               st->ready_over);
        for (int i = 0, first = 1; i < PB_WAIT_N; i++)
            if (st->by_cause[i]) {
                printf("%s%s %" G_GUINT64_FORMAT, first ? "" : ", ", pb_wait_name((PbWait)i),
                       st->by_cause[i]);
                first = 0;
            }
        printf("), %" G_GUINT64_FORMAT " reference and %" G_GUINT64_FORMAT
               " distorted frames on their way to the %s\n", st->arrival_over[0],
               st->arrival_over[1], r->sink == PB_SINK_FAKESINK ? "sink" : "element");
    }
    fflush(stdout);
}

/* The verdict and the search of one kind of run (the probes, or the
 * baseline): its runs go to the JSON as they finish. */
typedef struct Series {
    const char *name;
    PbSearch search;
    int best_up, best_rt;       /* largest N that keeps up / is real time (qmetric) */
    const char *ended;          /* "done", "budget" */
    double wall_last;           /* the last run's wall time, start to end, s */
    int runs;
} Series;

static bool run_series(Series *se, const PbOpts *o, PbFrames *fr, GstObject *ctx, FILE *jf,
                       double budget_s, gint64 t_start, char *gpu_name, size_t gpu_len)
{
    bool all_ran = true;
    int n;
    se->ended = "done";
    if (jf)
        fprintf(jf, "\"runs\": [");
    print_header(o->sink);
    while ((n = pb_search_next(&se->search)) > 0) {
        const double spent = (pb_now_ns() - t_start) / 1e9;
        /* the next run takes about as long as the last, at least its stream time */
        const double est = MAX(se->wall_last, o->warmup + o->duration);
        if (budget_s > 0 && spent + est > budget_s) {
            se->ended = "budget";
            printf("# %s: stopped before %d: %.0f s of the %.0f s time budget spent, a run "
                   "takes about %.0f s\n", se->name, n, spent, budget_s, est);
            break;
        }
        PbResult r;
        const gint64 t0 = pb_now_ns();
        const bool ran = pb_run(o, fr, ctx, n, &r);
        se->wall_last = (pb_now_ns() - t0) / 1e9;
        print_row(&r);
        if (jf) {
            fprintf(jf, "%s\n  ", se->runs ? "," : "");
            json_run(jf, &r);
        }
        se->runs++;
        all_ran &= ran;
        pb_search_record(&se->search, n, r.kept);
        if (r.realtime)
            se->best_rt = MAX(se->best_rt, n);
        if (r.keeps_up)
            se->best_up = MAX(se->best_up, n);
        if (r.gpu.valid && !gpu_name[0])
            g_strlcpy(gpu_name, r.gpu.name, gpu_len);
        pb_result_clear(&r);
    }
    if (se->search.stop && se->search.next < se->search.n_list)
        printf("# %s: stopped after the first count not kept (--keep-going runs the rest)\n",
               se->name);
    if (jf)
        fprintf(jf, "\n]");
    return all_ran;
}

static void json_series_end(FILE *jf, const Series *se)
{
    fprintf(jf, ", \"max_kept\": %d, \"min_not_kept\": ", se->search.good);
    if (se->search.bad)
        fprintf(jf, "%d", se->search.bad);
    else
        fputs("null", jf);
    fprintf(jf, ", \"search_ended\": \"%s\"", se->ended);
}

static const char *side_name(bool decode)
{
    return decode ? "decode" : "memory";
}

int main(int argc, char **argv)
{
    PbOpts o = { .cuda = true, .fps = 60, .duration = 10, .warmup = 2, .lookahead = 1,
                 .metrics = "vmaf", .timeout = 60, .stall_ms = 10, .stall_keep = 100 };
    const char *backend = "cuda", *sweep = "8,16,24,32,48,64", *json = NULL, *bisect = NULL;
    const char *file[2] = { NULL, NULL }, *src[2] = { "memory", "memory" }, *phase = "spread";
    const char *codec = NULL, *sched = "gst", *context = "shared";
    int width = 1920, height = 1080, distinct = 16, device = 0, probes = 0, bits = 8;
    int kbps[2] = { 50000, 8000 };
    bool single_check = true, keep_going = false, baseline = false;
    double pair_ms = -1, budget_s = 0;

    gst_init(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const bool v = i + 1 < argc;
        if (!strcmp(a, "--backend") && v) backend = argv[++i];
        else if (!strcmp(a, "--probes") && v) probes = atoi(argv[++i]);
        else if (!strcmp(a, "--sweep") && v) sweep = argv[++i];
        else if (!strcmp(a, "--bisect") && v) bisect = argv[++i];
        else if (!strcmp(a, "--baseline")) baseline = true;
        else if (!strcmp(a, "--time-budget") && v) budget_s = atof(argv[++i]);
        else if (!strcmp(a, "--width") && v) width = atoi(argv[++i]);
        else if (!strcmp(a, "--height") && v) height = atoi(argv[++i]);
        else if (!strcmp(a, "--fps") && v) o.fps = atoi(argv[++i]);
        else if (!strcmp(a, "--bits") && v) bits = atoi(argv[++i]);
        else if (!strcmp(a, "--duration") && v) o.duration = atof(argv[++i]);
        else if (!strcmp(a, "--warmup") && v) o.warmup = atof(argv[++i]);
        else if (!strcmp(a, "--distinct") && v) distinct = atoi(argv[++i]);
        else if (!strcmp(a, "--dist-source") && v) src[1] = argv[++i];
        else if (!strcmp(a, "--ref-source") && v) src[0] = argv[++i];
        else if (!strcmp(a, "--codec") && v) codec = argv[++i];
        else if (!strcmp(a, "--decoder") && v) o.decoder = argv[++i];
        else if ((!strcmp(a, "--dist-file") || !strcmp(a, "--h264")) && v) file[1] = argv[++i];
        else if (!strcmp(a, "--ref-file") && v) file[0] = argv[++i];
        else if (!strcmp(a, "--bitrate") && v) kbps[1] = atoi(argv[++i]);
        else if (!strcmp(a, "--ref-bitrate") && v) kbps[0] = atoi(argv[++i]);
        else if (!strcmp(a, "--metrics") && v) o.metrics = argv[++i];
        else if (!strcmp(a, "--threads") && v) o.threads = atoi(argv[++i]);
        else if (!strcmp(a, "--feeders") && v) o.feeders = atoi(argv[++i]);
        else if (!strcmp(a, "--phase") && v) phase = argv[++i];
        else if (!strcmp(a, "--lookahead") && v) o.lookahead = atoi(argv[++i]);
        else if (!strcmp(a, "--pair-latency") && v) pair_ms = atof(argv[++i]);
        else if (!strcmp(a, "--budget-ms") && v) o.budget_ms = atof(argv[++i]);
        else if (!strcmp(a, "--stall-ms") && v) o.stall_ms = atof(argv[++i]);
        else if (!strcmp(a, "--stall-records") && v) o.stall_keep = atoi(argv[++i]);
        else if (!strcmp(a, "--cuda-device") && v) device = atoi(argv[++i]);
        else if (!strcmp(a, "--cuda-sched") && v) sched = argv[++i];
        else if (!strcmp(a, "--cuda-context") && v) context = argv[++i];
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
#define BAD(...) do { fprintf(stderr, "qmetric-bench-probes: " __VA_ARGS__); \
                      fputc('\n', stderr); return 2; } while (0)
    if (strcmp(backend, "cuda") && strcmp(backend, "cpu"))
        BAD("--backend: cuda or cpu, not %s", backend);
    o.cuda = !strcmp(backend, "cuda");
    for (int i = 0; i < 2; i++) {
        if (!strcmp(src[i], "nvh264dec"))       /* the old spelling of decode */
            src[i] = "decode";
        if (strcmp(src[i], "decode") && strcmp(src[i], "memory"))
            BAD("--%s-source: memory or decode, not %s", i ? "dist" : "ref", src[i]);
        o.decode[i] = !strcmp(src[i], "decode");
        if (file[i] && !o.decode[i])
            BAD("--%s-file needs --%s-source decode", i ? "dist" : "ref", i ? "dist" : "ref");
    }
    if (bits != 8 && bits != 10)
        BAD("--bits: 8 or 10, not %d", bits);
    if (!codec)
        codec = bits > 8 ? "h265" : "h264";
    if (strcmp(codec, "h264") && strcmp(codec, "h265"))
        BAD("--codec: h264 or h265, not %s", codec);
    o.codec = !strcmp(codec, "h265") ? PB_CODEC_H265 : PB_CODEC_H264;
    if (bits > 8 && o.codec == PB_CODEC_H264 && (o.decode[0] || o.decode[1]))
        BAD("--bits 10 decodes H.265 Main 10 (--codec h265): NVDEC has no H.264 High 10");
    if (!o.decoder)
        o.decoder = o.cuda ? (o.codec == PB_CODEC_H265 ? "nvh265dec" : "nvh264dec")
                           : (o.codec == PB_CODEC_H265 ? "avdec_h265 ! videoconvert"
                                                       : "avdec_h264 ! videoconvert");
    if (strcmp(phase, "spread") && strcmp(phase, "aligned"))
        BAD("--phase: spread or aligned, not %s", phase);
    o.aligned = !strcmp(phase, "aligned");
    PbSched sch = PB_SCHED_GST;
    if (!strcmp(sched, "spin")) sch = PB_SCHED_SPIN;
    else if (!strcmp(sched, "yield")) sch = PB_SCHED_YIELD;
    else if (!strcmp(sched, "blocking")) sch = PB_SCHED_BLOCKING;
    else if (strcmp(sched, "gst"))
        BAD("--cuda-sched: gst, spin, yield or blocking, not %s", sched);
    if (strcmp(context, "shared") && strcmp(context, "per-probe"))
        BAD("--cuda-context: shared or per-probe, not %s", context);
    o.context_per_probe = !strcmp(context, "per-probe");
    if (o.context_per_probe && !(o.decode[0] && o.decode[1]))
        BAD("--cuda-context per-probe decodes both sides in each probe's context "
            "(--ref-source decode --dist-source decode): pictures in memory belong to one");
    if (baseline && !o.decode[0] && !o.decode[1])
        BAD("--baseline compares against decoding: give --dist-source or --ref-source decode");
    if (!(o.budget_ms > 0))
        o.budget_ms = 1000.0 / MAX(o.fps, 1);
    const bool decoding = o.decode[0] || o.decode[1];
    /* a decoder's first frames come late (start-up, frame threads) */
    o.cuda_device = device;
    o.pair_latency = pair_ms >= 0 ? (GstClockTime)(pair_ms * 1e6)
                     : decoding ? 100 * GST_MSECOND
                     : gst_util_uint64_scale_int(GST_SECOND, 1, MAX(o.fps, 1));
    if (o.fps < 1 || !(o.duration > 0) || o.warmup < 0 || distinct < 1 || o.lookahead < 0 ||
        o.threads < 0 || o.feeders < 0 || !(o.timeout > 0) || kbps[0] < 1 || kbps[1] < 1 ||
        device < 0 || o.stall_ms < 0 || o.stall_keep < 0 || budget_s < 0)
        BAD("need --fps >= 1, --duration > 0, --warmup >= 0, --distinct >= 1, "
            "--lookahead >= 0, --timeout > 0, --bitrate >= 1, --stall-ms >= 0, "
            "--time-budget >= 0");

    PbSearch search;
    int nsw = 0, lo = 0, hi = 0, step = 1;
    int *list = NULL;
    if (bisect) {
        if (sscanf(bisect, "%d:%d:%d", &lo, &hi, &step) < 2 || lo < 1 || hi < lo || step < 1)
            BAD("--bisect LO:HI[:STEP] with 1 <= LO <= HI, STEP >= 1, not %s", bisect);
        pb_search_bisect(&search, lo, hi, step);
    } else {
        if (probes > 0) {
            nsw = 1;
            list = g_new(int, 1);
            list[0] = probes;
        } else {
            char **v = qb_split(sweep, ",", &nsw);
            list = g_new(int, MAX(nsw, 1));
            for (int i = 0; i < nsw; i++)
                if ((list[i] = atoi(v[i])) < 1)
                    BAD("--sweep: probe counts >= 1, not %s", v[i]);
            qb_free_list(v);
        }
        if (nsw < 1)
            BAD("--probes N, --sweep N,N,... or --bisect LO:HI");
        pb_search_sweep(&search, list, nsw, keep_going);
    }
#undef BAD

    if (!qb_find_qmetric()) {
        fprintf(stderr, "no qmetric element: set GST_PLUGIN_PATH to the build's gst/qmetric\n");
        return 1;
    }
    /* the element's stage stamps in its messages: the stall records' segments */
    g_setenv("QMETRIC_FRAME_TIMES", "1", FALSE);
    char why[512] = "";
    GstObject *ctx = NULL;
    if (o.cuda) {
        if (!(ctx = pb_cuda_open(device, sch, why, sizeof(why)))) {
            printf("SKIP: --backend cuda: %s\n", why);
            return 77;
        }
        if (!qmetric_takes_cuda()) {
            printf("SKIP: this qmetric does not accept CUDA memory (built without the CUDA "
                   "backend or gstreamer-cuda-1.0)\n");
            pb_cuda_close(ctx);
            return 77;
        }
    }
    if (decoding && !decoder_exists(o.decoder, why, sizeof(why))) {
        printf("SKIP: %s\n", why);
        pb_cuda_close(ctx);
        return 77;
    }

    PbFrames fr;
    const gint64 t_make = pb_now_ns();
    if (pb_frames_make(&fr, width, height, o.fps, distinct, bits)) {
        fprintf(stderr, "qmetric-bench-probes: cannot make %dx%d %d-bit pictures (even sizes "
                ">= 16)\n", width, height, bits);
        pb_cuda_close(ctx);
        return 2;
    }
    int rc = 0;
    for (int i = 0; i < 2 && !rc; i++) {
        if (!o.decode[i])
            continue;
        if (file[i] ? pb_frames_load(&fr, i, o.codec, file[i], why, sizeof(why))
                    : pb_frames_encode(&fr, i, o.codec, kbps[i], why, sizeof(why))) {
            fprintf(stderr, "qmetric-bench-probes: the %s bitstream: %s\n",
                    i ? "distorted" : "reference", why);
            rc = 1;
        }
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
        pb_cuda_close(ctx);
        g_free(list);
        return rc;
    }
    const double prep_s = (pb_now_ns() - t_make) / 1e9;

    const double period_ms = 1000.0 / o.fps;
    printf("# %s backend, %dx%d %s at %d fps, reference from %s, distorted from %s%s%s, "
           "metrics %s, %.1f s + %.1f s warm-up a run, phase %s, look-ahead %d, CUDA wait %s, "
           "CUDA context %s (pictures and bitstreams made in %.1f s)\n", backend, width, height,
           GST_VIDEO_INFO_NAME(&fr.info), o.fps, side_name(o.decode[0]), side_name(o.decode[1]),
           decoding ? " through " : "", decoding ? o.decoder : "", o.metrics, o.duration,
           o.warmup, phase, o.lookahead, sched, context, prep_s);
    printf("# kept: >= 99.5%% of the window's pairs delivered by running time + the consumer's "
           "latency, pacing on time; keeps up: >= 99.5%% scored, latency not growing, pacing on "
           "time; real time: also p99 'ready' latency < %.2f ms; stalls: over %.1f ms\n",
           o.budget_ms, o.stall_ms);
    if (jf) {
        fprintf(jf, "{\"tool\": \"qmetric-bench-probes\", \"backend\": \"%s\", \"width\": %d, "
                "\"height\": %d, \"fps\": %d, \"format\": \"%s\", \"bits\": %d, "
                "\"duration_s\": %g, \"warmup_s\": %g, \"distinct\": %d, \"ref_source\": \"%s\", "
                "\"dist_source\": \"%s\", \"codec\": \"%s\", \"decoder\": ", backend, width,
                height, o.fps, GST_VIDEO_INFO_NAME(&fr.info), bits, o.duration, o.warmup,
                distinct, side_name(o.decode[0]), side_name(o.decode[1]), codec);
        qb_json_str(jf, decoding ? o.decoder : "");
        for (int i = 0; i < 2; i++) {
            fprintf(jf, ", \"%s_file\": ", i ? "dist" : "ref");
            qb_json_str(jf, file[i] ? file[i] : "");
            fprintf(jf, ", \"%s_kbps\": %d", i ? "dist" : "ref",
                    o.decode[i] && !file[i] ? kbps[i] : 0);
        }
        fprintf(jf, ", \"metrics\": ");
        qb_json_str(jf, o.metrics);
        fprintf(jf, ", \"threads\": %d, \"feeders\": %d, \"phase\": \"%s\", \"lookahead\": %d, "
                "\"pair_latency_ms\": %.3f, \"cuda_sched\": \"%s\", \"cuda_context\": \"%s\", "
                "\"prepare_s\": %.3f, "
                "\"criterion\": {\"kept_ratio_min\": 0.995, \"scored_ratio_min\": 0.995, "
                "\"latency_growth_max_ms\": %.4f, \"late_pushes_max_ratio\": 0.005, "
                "\"ready_p99_max_ms\": %.4f, \"stall_ms\": %.3f}",
                o.threads, o.feeders, phase, o.lookahead, o.pair_latency / 1e6, sched, context,
                prep_s,
                period_ms, o.budget_ms, o.stall_ms);
        if (bisect)
            fprintf(jf, ", \"search\": {\"bisect\": [%d, %d], \"step\": %d, "
                    "\"time_budget_s\": %g}", lo, hi, step, budget_s);
        else
            fprintf(jf, ", \"search\": {\"sweep\": true, \"keep_going\": %s, "
                    "\"time_budget_s\": %g}", keep_going ? "true" : "false", budget_s);
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

    char gpu_name[96] = "";
    const gint64 t_start = pb_now_ns();
    Series base = { .name = "decode-only baseline" }, pro = { .name = "probes", .search = search };
    if (!rc && baseline) {
        PbOpts bo = o;
        bo.sink = PB_SINK_FAKESINK;
        bo.single = NULL;
        base.search = search;
        printf("# decode-only baseline: the same sources and decoders into fakesinks\n");
        if (jf)
            fprintf(jf, ", \"baseline\": {\"sink\": \"fakesink\", ");
        /* at most half the time budget: the probes' search gets the rest */
        if (!run_series(&base, &bo, &fr, ctx, jf, budget_s / 2, t_start, gpu_name,
                        sizeof(gpu_name)))
            rc = 1;
        if (jf) {
            json_series_end(jf, &base);
            fprintf(jf, "}");
        }
    }
    if (jf)
        fprintf(jf, ", ");
    if (!rc) {
        if (baseline)
            printf("# probes: qmetric\n");
        if (!run_series(&pro, &o, &fr, ctx, jf, budget_s, t_start, gpu_name, sizeof(gpu_name)))
            rc = 1;
    } else if (jf) {
        fprintf(jf, "\"runs\": []");
    }
    if (jf)
        json_series_end(jf, &pro);
    printf("largest probe count kept at real time: %d", pro.search.good);
    if (pro.search.bad)
        printf(" (%d not kept)", pro.search.bad);
    if (baseline) {
        printf("; decode-only streams kept: %d", base.search.good);
        if (base.search.bad)
            printf(" (%d not kept)", base.search.bad);
        if (base.search.good)
            printf("; ratio %.3f", (double)pro.search.good / base.search.good);
    }
    printf("\nlargest probe count that keeps up: %d; that also meets the latency budget: %d\n",
           pro.best_up, pro.best_rt);
    if (jf) {
        fprintf(jf, ", \"max_kept_probes\": %d, \"max_kept_decode_only\": ", pro.search.good);
        if (baseline)
            fprintf(jf, "%d, \"ratio\": ", base.search.good);
        else
            fputs("null, \"ratio\": ", jf);
        if (baseline && base.search.good)
            fprintf(jf, "%.4f", (double)pro.search.good / base.search.good);
        else
            fputs("null", jf);
        fprintf(jf, ", \"max_keeps_up_probes\": %d, \"max_realtime_probes\": %d, "
                "\"gpu_name\": ", pro.best_up, pro.best_rt);
        qb_json_str(jf, gpu_name);
        fprintf(jf, "}\n");
        fclose(jf);
    }
    pb_result_clear(&single);
    pb_frames_clear(&fr);
    g_free(list);
    pb_cuda_close(ctx);
    return rc;
}
