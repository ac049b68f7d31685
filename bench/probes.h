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

/* The pictures every probe cycles through, and the distorted side's H.264
 * bitstream when a decoder makes the distorted pictures. */
typedef struct PbFrames {
    GstVideoInfo info;          /* NV12 WxH at the stream's frame rate */
    int n;                      /* distinct pictures */
    GstBuffer **ref, **dist;    /* n each: host memory, or CUDA memory once uploaded */
    GstCaps *h264_caps;         /* byte-stream, one access unit a buffer */
    GstBuffer **au;             /* n_au access units, the first an IDR */
    int n_au;
} PbFrames;

/** n distinct NV12 reference pictures and their distorted copies
 *  (bench/qmbench.c's content) in host memory; -1 when w or h is odd or too
 *  small for the content. */
int pb_frames_make(PbFrames *fr, int w, int h, int fps, int n);

/** The distorted side's bitstream: the distorted pictures encoded with
 *  x264enc (tune zerolatency, High profile, one closed GOP of n pictures, so
 *  the access units can be sent again and again).  -1 and why[] on error. */
int pb_frames_encode(PbFrames *fr, int kbps, char *why, size_t len);

/** The distorted side's bitstream from an H.264 file (anything h264parse
 *  reads): its access units in decode order, looped as they are.  The file
 *  must start with an IDR picture, decode to the frames' size and have no
 *  frame reordering (B-frames) across the loop point. */
int pb_frames_load_h264(PbFrames *fr, const char *path, char *why, size_t len);

void pb_frames_clear(PbFrames *fr);

/** A new buffer on the same memory (and video meta) as src: a live source
 *  sends the same picture again without copying it, with its own
 *  timestamps.  GstBuffer's own copy would copy memory marked NO_SHARE. */
GstBuffer *pb_buffer_share(GstBuffer *src);

/* ---- CUDA: bench/probes-cuda.c (bench/probes-cuda-none.c without it) ---- */

/** A GstCudaContext on the device (as a GstObject: no CUDA header outside
 *  the CUDA files), or NULL and why[] (no driver, no device, a build
 *  without GStreamer's CUDA library). */
GstObject *pb_cuda_open(int device, char *why, size_t len);

/** Replace fr's pictures by copies in CUDA memory (buffers of a
 *  GstCudaBufferPool on ctx), uploaded now, not at the first map. */
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

/* ---- one run of N probes: bench/probes-run.c ---- */

typedef enum { PB_DIST_MEMORY, PB_DIST_DECODE } PbDistSource;

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
    PbDistSource dist;
    const char *decoder;        /* a gst-launch bin description */
    const double *single;       /* scores of one probe alone, or NULL */
    int n_single;
    double timeout;             /* seconds after the last push */
    double budget_ms;           /* p99 "ready" latency allowed (one period) */
} PbOpts;

typedef struct PbLat {
    guint64 n;
    double p50, p99, max;       /* ms */
} PbLat;

typedef struct PbResult {
    int probes;
    guint64 pushed;             /* pairs sent (all probes) */
    guint64 scored;             /* "qmetric" messages */
    guint64 summary_frames, unmatched, cuda_in_place, cuda_copied;
    int summaries;              /* "qmetric-summary" messages (one a probe) */
    double scored_ratio;
    PbLat lat;                  /* message - later arrival of frame k's two buffers */
    PbLat ready;                /* message - later arrival of frames k .. k+lookahead */
    PbLat e2e;                  /* message - later push of frame k (with decoding) */
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

#endif /* PROBES_H */
