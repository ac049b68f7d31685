/* qmetric-compare: the types shared by its parts, callers before callees
 * (no part calls one above it but chunk.c and chunkpart.c, which call each
 * other; docs/development.md, "qmetric-compare's parts"):
 *
 *   main.c      the entry: options, then a two-input run or a ladder
 *   pair.c      a two-input run: its steps, outputs, exit status
 *   ladder.c    several renditions against one reference decoded once
 *   ladderout.c a ladder's rows: table, CSV, JSON, rate-quality chart, gates
 *   alignrun.c  --detect-offset and --align: decoding its window, the report
 *   run.c       the main loop of a run: bus, errors, progress line, Ctrl-C
 *   pipeline.c  the pipeline: the reference against each distorted side
 *   side.c      one input's branch: source, conversion, pairing probes
 *   options.c   the command line (--help text, parsing, usage checks)
 *   inputs.c    checks of each input before anything runs
 *   chunk.c     --start/--frames/--partial chunks of a title, --count-frames
 *   chunkpart.c the --partial file of a chunk
 *   frametable.c  an encoded input's frame numbers from its demuxer's packets
 *   summary.c   the summary as JSON (--summary json)
 *   report.c    per-frame scores, the summary table, the chart, the gates
 *   output.c    the files written: temporary until the run succeeds
 *   gpus.c      --gpus: the CUDA devices and which rendition runs where
 *   mapsrc.c    raw file layout; raw and Y4M files read in place (mapped)
 *   swscale.c   --scale: libswscale as FFmpeg's scale filter (swscale.h)
 *   series.c    a ladder's chart: which curve each rendition is drawn in
 *   align.c     the search for a constant frame offset (no GStreamer)
 *   fail.c      errors: usage and input errors, errors while running
 *   crash.c     QMETRIC_BACKTRACE's crash report
 *   format.c    statistic names, JSON strings and numbers
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#ifndef QMC_COMPARE_H
#define QMC_COMPARE_H

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
#include <sys/stat.h>
#include <fcntl.h>
#include "mapsrc.h"
#include <gst/gst.h>
#include <gst/pbutils/pbutils.h>
#include <gst/video/video.h>

#include "../qmplot.h"
#include "align.h"

#ifndef QM_VERSION
#define QM_VERSION "unknown"
#endif

#define EXIT_FAIL_BELOW 1
#define EXIT_USAGE 2
#define EXIT_INTERRUPTED 130

enum { REF = 0, DIST = 1 };
static const char *const qmc_side_name[2] = { "reference", "distorted" };

/* --fail-below FEATURE[.STAT]=VALUE */
typedef struct {
    char *feature;
    char *stat;                /* the summary's field: mean, min, max, harmonic-mean, p1, p5 */
    double value;
} Threshold;

/* A file written while the comparison runs goes to a temporary file first
 * and reaches its destination only when everything succeeded (output.c). */
typedef struct {
    const char *what;          /* the option, for messages: "--output" */
    char *dest;                /* as given; "-" is standard output */
    char *tmp;                 /* written there while running */
    gboolean copy;             /* copied to dest at the end (stdout, devices, links), not renamed */
    gboolean failed;           /* writing the temporary file failed: discard it */
} Output;

typedef enum { SUMMARY_TEXT, SUMMARY_JSON } SummaryKind;
typedef enum { ALIGN_NONE, ALIGN_AUTO, ALIGN_FORCE } AlignMode;

typedef struct {
    char *input[2];
    GString *metrics;          /* --metrics, comma-separated */
    GString *features;         /* --feature: added to --metrics or to the VMAF model */
    GString *feature_opts;     /* --feature NAME=OPT=VAL:...: the element's "features" */
    GString *models;           /* --model, comma-separated */
    char *preset;              /* --aom_ctc/--nflx_ctc: the element's "preset" */
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
    guint64 skip[2];           /* --frame_skip_ref, --frame_skip_dist: leading frames left out */
    /* results */
    char *plot;
    char *plot_metrics;
    GArray *thresholds;        /* Threshold */
    gboolean quiet;
    SummaryKind summary;
    /* ladders (ladder.c) */
    GPtrArray *extra;          /* char*: inputs after REFERENCE DISTORTED */
    char *manifest;
    char *ladder_csv, *ladder_json, *plot_rd;
    gboolean hull;             /* --hull: the upper convex hull on --plot-rd's chart */
    gboolean ladder;           /* several renditions, or a ladder output asked for */
    /* alignment (alignrun.c) */
    gboolean detect_offset;    /* --detect-offset: report the offset, score nothing */
    AlignMode align;           /* --align auto|force */
    int align_max;             /* offsets searched: -align_max..align_max */
    int align_window;          /* frame pairs compared per offset */
    /* GPUs (gpus.c) */
    char *gpus_spec;           /* --gpus as given; NULL: not given */
    gboolean gpus_all;         /* --gpus all */
    int gpus_count;            /* --gpus N: the first N devices; 0 with a list or all */
    GArray *gpus_list;         /* int: --gpus ID,ID,...; NULL otherwise */
    gboolean dry_run;          /* --dry-run: the plan, then exit */
    /* chunks (chunk.c) */
    guint64 start;             /* --start: the chunk's first frame */
    gboolean start_set;
    char *partial;             /* --partial FILE */
    gboolean chunk;            /* --start or --partial: a chunk of the title */
    gboolean count_frames;     /* --count-frames: print the frame pairs, exit */
} Options;

typedef struct QmcChunk QmcChunk;

typedef struct App App;

typedef struct Side Side;

/* One input (side.c): its source, conversion and pairing probes.  A
 * two-input run has two; a ladder has its reference and one per rendition. */
struct Side {
    App *app;
    int id;                    /* REF or DIST: its --frame_skip_*, its pad of qmetric */
    char prefix[32];           /* its elements' names: "reference", "distorted", "rendition2" */
    const char *role;          /* in messages: "the reference", "the distorted", "a rendition" */
    char *uri;
    char *display;             /* as the user wrote it */
    gboolean raw;
    guint64 raw_frames;        /* raw input: frames in the file */
    gboolean once;             /* a pipe or device: it can be read only once */
    gboolean mapped;           /* a raw or Y4M file that can be read in place: */
    QmcMapSpec map;            /* where its frames lie */
    GstElement *src, *convert, *scale, *filter;
    GstElement *qm;            /* a distorted side: the qmetric element it feeds */
    const char *log;           /* and the temporary file of that element's log, or NULL */
    Side *partner;             /* two inputs: the other side, past whose end nothing pairs */
    GstPad *hold_pad;          /* videoconvert's sink pad */
    gulong block_id;           /* the probe there holding the stream until configured */
    GstCaps *caps;             /* decoded caps, once known */
    gboolean linked;
    /* streaming thread */
    guint64 skipped;           /* leading frames left out (--frame_skip_*) */
    guint64 frames;            /* decoded frames seen after those */
    GstClockTime last_pts;     /* index pairing: the previous frame's own timestamp */
    GstClockTime dur;          /* its frame duration from the caps, for the gap check */
    gboolean gap_warned;
    guint64 passed;            /* frames sent to qmetric */
    gint eos;                  /* atomic: read by the other stream's thread */
    char *missing;             /* a missing decoder, from the missing-plugin message */
    char *missing_video;       /* a video stream nothing decodes (unknown-type) */
};

typedef struct {
    char *name;
    GArray *y;                 /* double, one per scored frame */
} Column;

/* What a run does with the messages of its qmetric elements (pair.c,
 * ladder.c); dist: the distorted side the element compares. */
typedef struct {
    void (*scores)(App *app, Side *dist, const GstStructure *st);   /* "qmetric": a frame */
    void (*summary)(App *app, Side *dist, const GstStructure *st);  /* "qmetric-summary" */
    gboolean progress;         /* the progress line on a terminal (unless --quiet) */
    gboolean wait_inputs;      /* after the elements' end, the inputs' ends too (exact counts) */
} QmcRunMode;

struct App {
    Options o;
    Side side[2];              /* the reference; a two-input run's distorted */
    GPtrArray *dists;          /* Side*: the distorted sides, one qmetric element each */
    GstElement *pipeline;
    GstElement *qm;            /* a two-input run's element */
    GMainLoop *loop;
    const QmcRunMode *mode;
    GMutex lock;
    gboolean configured;
    GstVideoInfo ref_info;     /* the reference's decoded format, once configured */
    GstClockTime frame_dur;
    GstVideoFormat target;
    gboolean scaled, converted;
    gboolean range_note;       /* one side full range, the other limited */
    gboolean pipeline_eos;
    gboolean interrupted;
    int exit_code;
    char *error;
    gboolean no_output;        /* a usage error found while running: write nothing */
    Output log, plot;
    FILE *table;               /* where the human summary goes; NULL: nowhere */
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
    /* --align: the offset found and applied */
    gboolean aligned;
    QmcAlignResult align;
    /* --gpus resolved: the CUDA device ids to use, in order (empty: none) */
    GArray *gpus;
    /* a chunk of the title (chunk.c); NULL for a whole run */
    QmcChunk *chunk;
};

/* fail.c: errors.  Before the run: one line, exit 2.  While it runs: the
 * first one is kept (it is the cause) and ends the main loop; a streaming
 * thread posts its errors and warnings for the main loop to handle. */
G_GNUC_NORETURN void qmc_usage_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
G_GNUC_NORETURN void qmc_input_error(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
void qmc_fail(App *app, int code, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
void qmc_post_error(App *app, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* "qmetric-compare: warning: ..." printed by the main loop */
void qmc_post_warning(App *app, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* After a report on stdout (--dry-run, --detect-offset): exit 0, or 2 when
 * it could not be written (say: with a line on stderr). */
G_GNUC_NORETURN void qmc_exit_after_report(gboolean say);

/* crash.c: QMETRIC_BACKTRACE's report names the phase of the run a crash
 * came in. */
void qmc_install_crash_handler(void);
void qmc_set_phase(const char *phase);

/* run.c: the main loop of a run, from PLAYING to the end of its streams
 * (qmc_run), then the pipeline stopped (qmc_run_stop); the qmetric
 * elements' messages go to the mode's functions */
void qmc_run(App *app, const QmcRunMode *mode);
void qmc_run_stop(App *app);
/* At the very end: the pipeline freed. */
void qmc_run_free(App *app);

/* pair.c: REFERENCE DISTORTED; the exit status */
int qmc_pair_main(App *app);

/* options.c */
void qmc_parse_options(Options *o, int argc, char **argv);
/* "a,b" + "c" -> "a,b,c" */
void qmc_append_list(GString *s, const char *items);

/* output.c */
/* An input (a path or file: URI) that qmc_output_prepare() refuses as a
 * destination, whatever name (link) it is given as. */
void qmc_output_protect(const char *input);
void qmc_output_prepare(Output *out, const char *what, const char *dest);
gboolean qmc_output_commit(Output *out, char **err);
void qmc_output_discard(Output *out);
gboolean qmc_output_is_stdout(const Output *out);

/* inputs.c */
void qmc_check_input(App *app, Side *s, const char *arg);
/* A ladder's input (no raw video); its size in bytes, 0 unknown. */
guint64 qmc_check_ladder_input(App *app, Side *s);

/* side.c: one input's branch, source -> videoconvert [-> scaler] ->
 * capsfilter, with its probes (not linked downstream) */
void qmc_side_init(Side *s, App *app, int id, const char *prefix, const char *role);
void qmc_side_build(Side *s, gboolean scale);
GstElement *qmc_make(const char *factory, const char *name);
/* Whether a decodebin pad carries video (its caps, else what it can do). */
gboolean qmc_pad_is_video(GstPad *pad);
/* The source of a raw or Y4M input read in place, added to bin; NULL when
 * the file cannot be mapped (the caller reads it the usual way) */
GstElement *qmc_mapped_input(GstBin *bin, const char *uri, const QmcMapSpec *spec,
                             const char *prefix);
/* filesrc -> rawvideoparse of a raw input in bin; returns the parser */
GstElement *qmc_raw_source(App *app, GstBin *bin, const char *uri, const char *prefix,
                           GstElement **src);

/* pipeline.c: the pipeline of a run, app->side[REF] against each of
 * app->dists; exits 2 when the qmetric element is not installed */
void qmc_require_qmetric(void);
void qmc_build_pipeline(App *app);

/* alignrun.c: decode the first frames of two inputs and search for their
 * offset (exits 2 with one line when it cannot); the report as text or JSON */
typedef struct {
    const char *display, *uri;
    gboolean raw;
    guint64 skip;              /* frames left out first (--frame_skip_*) */
    const QmcMapSpec *map;     /* read in place when not NULL */
} QmcAlignInput;
/* A side as the search reads it (its --frame_skip_* included). */
QmcAlignInput qmc_align_input(const Side *s);
void qmc_align_inputs(App *app, const QmcAlignInput *ref, const QmcAlignInput *dist,
                      QmcAlignResult *res);
void qmc_align_print(FILE *f, const char *name, const QmcAlignInput *ref,
                     const QmcAlignInput *dist, const QmcAlignResult *res);
void qmc_align_print_json(FILE *f, const char *indent, const QmcAlignInput *ref,
                          const QmcAlignInput *dist, const QmcAlignResult *res);
/* --align: detect, refuse a doubtful offset unless forced, add it to
 * o->skip; --detect-offset: print the report and exit 0 */
void qmc_align_main(App *app);

/* gpus.c */
/* CUDA devices through the driver (libcuda.so.1, loaded at run time);
 * -1 with a reason in why when there is no driver */
int qmc_cuda_device_count(char **why);
/* --gpus -> app->gpus; says on stderr when "all" finds none */
void qmc_resolve_gpus(App *app);
/* the device of the i-th qmetric element: round robin; -1 without --gpus */
int qmc_gpu_for(App *app, guint i);
/* --dry-run: "CUDA device N" or the backend, for the i-th element */
void qmc_print_device(App *app, guint i);

/* ladder.c: several renditions against one reference decoded once */
int qmc_ladder_main(App *app);

/* chunk.c: a chunk of the title.  The options' checks (usage errors);
 * --count-frames (prints, exits); the plan before the pipeline (frame
 * index, where each input starts; --frame_skip_* and --frames move into the
 * chunk); the probe on the pad that feeds each side's conversion; the
 * seek, from the main loop on "qmc-seek"; every "qmetric" message; the end
 * (counts, partial file, log, summary of the chunk's frames). */
void qmc_chunk_check_options(Options *o);
G_GNUC_NORETURN void qmc_count_frames_main(App *app);
void qmc_chunk_plan(App *app);
void qmc_chunk_build_side(App *app, Side *s);
void qmc_chunk_watch(Side *s, GstPad *pad);
/* a raw input read by rawvideoparse after all: its frames from the first */
void qmc_chunk_from_start(App *app, Side *s);
void qmc_chunk_seek(App *app, int side);
/* a side that fed everything: its source stops (main loop, "qmc-stop") */
void qmc_chunk_stop(App *app, int side);
void qmc_chunk_started(App *app);
void qmc_chunk_on_scores(App *app, const GstStructure *st);
void qmc_chunk_finish(App *app);

/* report.c */
void qmc_on_scores(App *app, const GstStructure *st);
double qmc_mean_of(App *app, const char *feature);
void qmc_print_summary(App *app, FILE *f);
void qmc_write_plot(App *app);
void qmc_check_gates(App *app, int *code);
/* One gate's verdict on stderr ("WHO: vmaf mean 71.2 is below 80"); whether it passed. */
gboolean qmc_report_gate(App *app, const char *who, const Threshold *t, double v);
/* The features of the element's per-frame message (NULL-terminated; g_strfreev). */
char **qmc_score_features(const GstStructure *st);
/* Every gate's feature among these, else a usage error (qmc_fail); FALSE then. */
gboolean qmc_check_gate_features(App *app, char **features);
/* --plot-metrics expanded against these features into app->plot_features
 * (untouched without the option); a name matching none is a usage error
 * (qmc_fail), FALSE then. */
gboolean qmc_check_plot_features(App *app, char **features);
double qmc_gate_value(App *app, const Threshold *t);
/* One pooled value of a feature from the summary message; NAN if absent. */
double qmc_pooled(const GstStructure *summary, const char *feature, const char *method);

/* summary.c: the summary as JSON (--summary json) */
void qmc_print_summary_json(App *app, FILE *f, int exit_status);

/* format.c */
/* The summary's field for a statistic as users write it (libvmaf's
 * harmonic_mean, our harmonic-mean), or NULL. */
const char *qmc_stat_field(const char *name);
/* libvmaf's spelling of a summary field (harmonic-mean -> harmonic_mean) */
const char *qmc_stat_name(const char *field);
/* A string as a JSON string literal, quotes included. */
void qmc_json_string(FILE *f, const char *s);
/* A number as JSON: 6 decimals; null when not finite (as in the logs). */
void qmc_json_number(FILE *f, double v);
/* A string, or null for NULL. */
void qmc_json_string_or_null(FILE *f, const char *s);
/* Where an element's metrics ran ("backend": "cuda" or "cpu", null before
 * its summary) and how its buffers in CUDA memory were read
 * ("cuda_buffers": read in place, or copied to the host): two members
 * from its qmetric-summary, without the comma before them. */
void qmc_json_backend(FILE *f, const GstStructure *summary);
/* The last members of a JSON summary, "error" and "exit_status", and its
 * closing brace. */
void qmc_json_end(FILE *f, const char *error, int exit_status);

#endif
