/* qmetric-bench-probes: what its parts share (bench/qmetric-bench-probes.c
 * is the program; the comment at its top describes the measurement). */
#ifndef PROBES_H
#define PROBES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <gst/gst.h>
#include <gst/video/video.h>

/* ---- frames: bench/probes-frames.c ---- */

typedef enum { PB_CODEC_H264, PB_CODEC_H265 } PbCodec;

/* One side's bitstream, where a decoder makes that side's pictures. */
typedef struct PbStream {
    GstCaps *caps;              /* byte-stream, one access unit a buffer */
    GstBuffer **au;             /* n_au access units, the first a key frame */
    int n_au;                   /* 0: the side is sent as pictures */
} PbStream;

/* The pictures every probe cycles through, [0] the reference and [1] the
 * distorted side, and the bitstreams of the sides a decoder makes. */
typedef struct PbFrames {
    GstVideoInfo info;          /* NV12 (8 bits) or P010_10LE, WxH at the stream's rate */
    int n;                      /* distinct pictures */
    GstBuffer **pic[2];         /* n each: host memory, or CUDA memory once uploaded */
    PbStream bs[2];
} PbFrames;

/** n distinct reference pictures and their distorted copies
 *  (bench/qmbench.c's content, frame f from its own seed, made on every
 *  core) in host memory: NV12 for bits 8, P010_10LE for bits 10; -1 when w
 *  or h is odd or too small for the content. */
int pb_frames_make(PbFrames *fr, int w, int h, int fps, int n, int bits);

/** Side `side`'s bitstream: its pictures encoded once (x264enc, or x265enc
 *  Main / Main 10 by the pictures' depth; zero latency: no B-frames, no
 *  look-ahead, one closed GOP of n pictures, so that the access units can
 *  be sent again and again).  -1 and why[] on error. */
int pb_frames_encode(PbFrames *fr, int side, PbCodec codec, int kbps, char *why, size_t len);

/** Side `side`'s bitstream from a file (anything h264parse / h265parse
 *  reads): its access units in decode order, looped as they are.  The file
 *  must start with a key frame, decode to the pictures' size and have no
 *  frame reordering (B-frames) across the loop point. */
int pb_frames_load(PbFrames *fr, int side, PbCodec codec, const char *path, char *why,
                   size_t len);

void pb_frames_clear(PbFrames *fr);

/** "h264parse" or "h265parse". */
const char *pb_codec_parser(PbCodec codec);

/** A new buffer on the same memory (and video meta) as src: a live source
 *  sends the same picture again without copying it, with its own
 *  timestamps.  GstBuffer's own copy would copy memory marked NO_SHARE. */
GstBuffer *pb_buffer_share(GstBuffer *src);

/* ---- CUDA: bench/probes-cuda.c (bench/probes-cuda-none.c without it) ---- */

/* How host threads wait for the device in the shared context: GStreamer's
 * own context (the driver's default, CU_CTX_SCHED_AUTO: spin while the
 * process has no more contexts than cores), or a context of ours with the
 * driver's spin, yield or blocking-sync wait.  The decoders wait in it
 * (cuStreamSynchronize after each picture's copy); the engine polls events
 * and is not affected. */
typedef enum { PB_SCHED_GST, PB_SCHED_SPIN, PB_SCHED_YIELD, PB_SCHED_BLOCKING } PbSched;

/** A GstCudaContext on the device (as a GstObject: no CUDA header outside
 *  the CUDA files), or NULL and why[] (no driver, no device, a build
 *  without GStreamer's CUDA library). */
GstObject *pb_cuda_open(int device, PbSched sched, char *why, size_t len);
/** Another GstCudaContext on the device, made as GStreamer makes one for a
 *  pipeline that finds none (its own CUDA context, the driver's default
 *  wait), or NULL. */
GstObject *pb_cuda_context_new(int device);
/** Release what pb_cuda_open() made (a context of ours is destroyed). */
void pb_cuda_close(GstObject *ctx);

/** Replace fr's pictures by copies in CUDA memory (GStreamer's CUDA
 *  allocator on ctx), uploaded now, not at the first map. */
int pb_cuda_upload(GstObject *ctx, PbFrames *fr, char *why, size_t len);

/** The GstContext that hands ctx to every element of a pipeline. */
GstContext *pb_cuda_context(GstObject *ctx);

/** The caps feature of CUDA memory ("memory:CUDAMemory"). */
extern const char pb_cuda_feature[];

/* ---- GPU use: bench/probes-gpustat.c ---- */

typedef struct PbGpuStats {
    bool valid;                 /* false: NVML not found or not answering */
    char name[96];
    int samples;
    double util_mean, util_max; /* % of time a kernel ran (NVML's "gpu") */
    double dec_mean, dec_max;   /* NVDEC utilisation, % */
    double mem_used_max_mib, mem_total_mib;
} PbGpuStats;

typedef struct PbGpuSampler PbGpuSampler;

/** Sample NVML every period_ms on NVML device index `device` until
 *  pb_gpu_stop(); NULL when libnvidia-ml.so.1 is missing or fails (then the
 *  report says "n/a"). */
PbGpuSampler *pb_gpu_start(int device, int period_ms);
void pb_gpu_stop(PbGpuSampler *s, PbGpuStats *out);

/* ---- stall records: bench/probes-stall.c ---- */

/* What a late score waited for, in the order of a pair's way through the
 * element (the element's stamps, gst/qmetric/qmframetimes.h): */
typedef enum {
    PB_WAIT_ELEMENT,            /* both buffers in the pads, the element's thread
                                 * elsewhere (an earlier pair, a blocked submit) */
    PB_WAIT_MAP,                /* mapping the buffers (a CUDA memory sync) */
    PB_WAIT_SUBMIT,             /* qm_engine_submit(): no free frame slot until an
                                 * earlier frame finished on the device */
    PB_WAIT_DEVICE,             /* submitted to the scores handed out: the device's
                                 * work and the look-ahead frame's */
    PB_WAIT_POST,               /* scores handed out to the message */
    PB_WAIT_UNKNOWN,            /* the element gave no stamps */
    PB_WAIT_N
} PbWait;

#define PB_N_SEGMENTS PB_WAIT_UNKNOWN

/* frames pushed after a run's window, not counted (probes-run.c) */
#define PB_TAIL_FRAMES 4

typedef struct PbStall {
    int probe, frame;
    int side;                   /* arrival stalls: 0 reference, 1 distorted */
    bool decoded;               /* arrival stalls: the side goes through a decoder */
    /* ready stalls: message - ready; arrival stalls: arrival at the
     * consumer's pad - push into appsrc */
    double total_ms;
    double seg_ms[PB_N_SEGMENTS];   /* ready stalls: the segments, in order (< 0: unknown) */
    /* arrival stalls: push into appsrc -> appsrc's thread sends it on (it was
     * busy with earlier frames: decoding them, or blocked downstream) ->
     * the consumer's pad (parser, decoder, its copy out) */
    double queued_ms, decode_ms;
    double late_ms[2];          /* each side's arrival - the frame's due time */
    PbWait cause;               /* ready stalls: the longest segment */
} PbStall;

typedef struct PbStalls {
    double threshold_ms;
    guint64 ready_over;         /* scores later than the threshold after ready */
    guint64 by_cause[PB_WAIT_N];
    guint64 arrival_over[2];    /* frames later than it from push to the consumer */
    PbStall *ready, *arrival;   /* the worst `keep` of each, by total_ms */
    int n_ready, n_arrival, keep;
} PbStalls;

void pb_stalls_init(PbStalls *st, double threshold_ms, int keep);
void pb_stalls_clear(PbStalls *st);
/** Count a ready stall (its cause from its segments) and keep it if it is
 *  among the worst. */
void pb_stall_ready(PbStalls *st, PbStall *s);
/** Count an arrival stall and keep it if it is among the worst. */
void pb_stall_arrival(PbStalls *st, const PbStall *s);
/** The longest known segment; PB_WAIT_UNKNOWN when none is known. */
PbWait pb_stall_cause(const double seg_ms[PB_N_SEGMENTS]);
const char *pb_wait_name(PbWait w);
/** The records as a JSON object (worst first). */
void pb_stalls_json(FILE *f, const PbStalls *st);

/* ---- one run of N probes: bench/probes-run.c ---- */

/* What consumes the pictures: qmetric, or fakesink (the decode-only
 * baseline: the same sources, parsers and decoders, nothing scored). */
typedef enum { PB_SINK_QMETRIC, PB_SINK_FAKESINK } PbSink;

typedef struct PbOpts {
    bool cuda;                  /* backend=cuda and frames in CUDA memory */
    int fps;
    double duration, warmup;    /* seconds of stream time */
    int feeders;                /* pacing threads (0: min(probes, 4)) */
    bool aligned;               /* every probe at the same phase */
    int lookahead;              /* frames a score waits for (VMAF: 1) */
    const char *metrics;
    int threads;                /* the element's threads property */
    GstClockTime pair_latency;  /* the element's latency property (GstAggregator) */
    bool decode[2];             /* side decoded from fr->bs[side] */
    PbCodec codec;
    const char *decoder;        /* a gst-launch bin description */
    PbSink sink;
    /* each probe in a CUDA context of its own, as separate pipelines get
     * one each (qmetric-probe's probes); both sides decoded in it */
    bool context_per_probe;
    int cuda_device;
    const double *single;       /* scores of one probe alone, or NULL */
    int n_single;
    double timeout;             /* seconds after the last push */
    double budget_ms;           /* p99 "ready" latency allowed (one period) */
    double stall_ms;            /* stall records: later than this */
    int stall_keep;             /* records kept per kind */
} PbOpts;

typedef struct PbLat {
    guint64 n;
    double p50, p99, max;       /* ms */
} PbLat;

typedef struct PbResult {
    int probes;
    PbSink sink;
    guint64 pushed;             /* pairs sent (all probes) */
    guint64 scored;             /* "qmetric" messages */
    guint64 summary_frames, unmatched, skipped, cuda_in_place, cuda_copied;
    int summaries;              /* "qmetric-summary" messages (one a probe) */
    double scored_ratio;
    /* the density verdict over the measured window (after the warm-up, not
     * the last `lookahead` frames): a pair is kept when it is delivered by
     * its deadline, its running time plus the latency the consumer
     * announces (qmetric's latency query: its latency property, its
     * look-ahead and the decoders' latency; decode-only: the decoders'
     * latency plus the same latency property) -- with qmetric, its score's
     * message by then; decode-only, every decoded frame of the pair at
     * fakesink by then */
    guint64 window_pairs, window_kept;
    double kept_ratio;
    double deadline_ms;         /* the largest latency allowed, over the probes */
    bool kept;                  /* kept_ratio >= 0.995, pacing on time, no error */
    PbLat lat;                  /* message - later arrival of frame k's two buffers */
    PbLat ready;                /* message - later arrival of frames k .. k+lookahead */
    PbLat e2e;                  /* message - later push of frame k (with decoding) */
    PbLat decode;               /* decoded sides: arrival - push (parser, decoder, queues) */
    guint64 early;              /* messages before frame k+lookahead arrived */
    guint64 late_pushes;        /* pushed more than a quarter period late */
    double push_late_max_ms;
    double stream_s, wall_s;    /* pushed stream time; first push to last message */
    double cpu_cores, cpu_pct;  /* process CPU time / wall time, over the window */
    int ncpu;
    PbGpuStats gpu;
    guint64 warnings;
    char feature[64];           /* the messages' first score (vmaf) */
    double score_mean;          /* of that score, over the window */
    guint64 score_compared;     /* scores compared with one probe alone */
    double score_maxdiff;
    double lat_head_ms, lat_tail_ms;  /* median latency, first and last second */
    /* the window second by second, over every probe (where a backlog
     * builds, and when): pairs, those in time, those scored, latency */
    struct PbSecond { guint64 pairs, kept, scored; PbLat lat; } *secs;
    int n_secs;
    /* pairs without a score, by what reached the element: a buffer missing
     * on a pad; both, one later than the element's live latency past the
     * frame's running time; both in time (a fault: nothing may be lost so) */
    guint64 lost_no_ref, lost_no_dist, lost_late, lost_in_time, lost_first_s;
    double lost_lag_max_ms;     /* of the late ones: the later arrival - running time */
    PbLat lag;                  /* distorted - reference arrival, every pair with both */
    /* the first in-time losses, for a closer look: probe, frame, each
     * buffer's arrival past the frame's running time, the element's latency */
    struct { int probe, frame; double ref_ms, dist_ms, latency_ms; bool prev, next; } in_time[16];
    int n_in_time;
    PbStalls stalls;
    bool keeps_up;              /* scored, no backlog growth, pacing on time */
    bool realtime;              /* keeps up and p99 "ready" < the budget */
    double *scores;             /* probe 0's scores by frame (n_scores), for --single */
    int n_scores;
    char why[512];              /* the run failed: why */
} PbResult;

/** Run n probes at once in one pipeline; false and r->why on failure. */
bool pb_run(const PbOpts *o, PbFrames *fr, GstObject *cuda_ctx, int n, PbResult *r);
void pb_result_clear(PbResult *r);

/** CLOCK_MONOTONIC in ns: the clock of the pipeline and of every stamp. */
gint64 pb_now_ns(void);

/* ---- the search for the largest N kept: bench/probes-search.c ---- */

/* Either a list of probe counts run in order (a sweep: it stops after the
 * first N not kept unless keep_going), or a bisection of [lo, hi] that
 * stops once the largest N kept and the smallest N not kept are at most
 * `step` apart, lo and hi themselves run where the bracket reaches them
 * (so that "none kept" and "all kept" are measured).  Kept is assumed to
 * fall with N. */
typedef struct PbSearch {
    const int *list;
    int n_list, next;
    bool keep_going;
    int lo, hi, step;
    int good;                   /* largest N kept so far (0: none) */
    int bad;                    /* smallest N not kept so far (0: none) */
    bool stop;
} PbSearch;

void pb_search_sweep(PbSearch *s, const int *list, int n, bool keep_going);
void pb_search_bisect(PbSearch *s, int lo, int hi, int step);
/** The next probe count to run, or 0 when the search is over. */
int pb_search_next(PbSearch *s);
void pb_search_record(PbSearch *s, int n, bool kept);

#endif /* PROBES_H */
