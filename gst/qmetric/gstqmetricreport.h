/* GStreamer qmetric: what the element reports.
 *
 * The names of the scores (fixed by the first engine of a run), the pooled
 * values, the log file, the reporting window, the counters of the summary,
 * and everything they become: the "qmetric" message of every scored pair,
 * the meta and tags of its outgoing buffer, the "qmetric-window",
 * "qmetric-reconfigured" and "qmetric-summary" messages, and the warnings
 * that carry one of its counts.  The warnings' state (`warn`,
 * gstqmetricwarn.h) lives here, since the summary counts those held back;
 * the element posts the notices without a count through it directly.
 *
 * The element calls it as things happen; it never calls the element.  The
 * aggregator's streaming thread only, except the warnings of `warn`. */
#ifndef __GST_QMETRIC_REPORT_H__
#define __GST_QMETRIC_REPORT_H__

#include <gst/gst.h>

#include "gstqmetriccuda.h"
#include "gstqmetricscoredpair.h"
#include "gstqmetricwarn.h"
#include "pair.h"
#include "qm.h"
#include "qmlog.h"
#include "qmwindow.h"

G_BEGIN_DECLS

typedef struct
{
  GstElement *element;
  GstQmetricWarn warn;

  /* the scores, in the engine's order */
  guint n_features;
  const gchar **names;          /* interned */
  GQuark *quarks;
  QmPool *pools;
  /* pooled values the metrics provide themselves (apsnr_y, XPSNR's) over
   * the frames of the summary, for the log's aggregate_metrics; none after
   * a change of size or format (aggs_off) */
  QmAggregates *aggs;
  gboolean aggs_off;
  QmLog *log;
  gchar *log_location;
  QmWindow *win;                /* NULL: window=none */

  /* the summary: counters since the start or the last summary */
  guint64 n_pairs;              /* pairs compared (and indices given) */
  guint64 n_scored;             /* pairs with scores */
  guint64 unmatched_ref, unmatched_dist, unreadable, out_of_range;
  guint64 skipped;              /* pairs not scored to keep up (live) */
  guint64 late;                 /* live: frames past their partner's wait */
  /* buffers of CUDA memory read in place by the CUDA backend, and those
   * mapped for the CPU instead (a download) */
  guint64 cuda_in_place, cuda_copied;
  /* which segment (0 = the first since start, +1 for each flush after a
   * summary), the flushes inside it, the stream times of its first and
   * last compared pairs */
  guint segment, flushes;
  GstClockTime first_stream_time, last_stream_time;
  gint64 t_start;               /* monotonic us, for the log's fps */
  QmBackend backend;            /* of the last engine opened */
  gchar *backend_note;          /* why (backend=auto), as last posted */
  /* what the engine computes, as a chunk of a title records it
   * (core/partial.h): the summary's "identity" */
  gchar *identity;
  gboolean frame_times;         /* QMETRIC_FRAME_TIMES=1: stamps in messages */
} GstQmetricReport;

void gst_qmetric_report_init (GstQmetricReport * r, GstElement * element);
void gst_qmetric_report_clear (GstQmetricReport * r);

/* A new stream: the window property parsed (FALSE: an error was posted),
 * counters, warnings and names afresh. */
gboolean gst_qmetric_report_start (GstQmetricReport * r,
    const gchar * window);
/* Stopped without EOS: the window and the log are completed (pool: the
 * pool property), the names forgotten. */
void gst_qmetric_report_stop (GstQmetricReport * r, guint pool);
/* A flushing seek; new_segment: after the summary, which the frames that
 * follow get one of their own. */
void gst_qmetric_report_flush (GstQmetricReport * r, gboolean new_segment);

/* An engine was opened (settings s): its backend (with backend=auto, why:
 * posted when it changes) and its identity. */
void gst_qmetric_report_backend (GstQmetricReport * r, QmEngine * engine,
    const QmSettings * s);
/* The names of the engine's scores: taken from the first engine of a run.
 * FALSE: they differ from those of the engine before it (a caps change);
 * the caller posts the error. */
gboolean gst_qmetric_report_features (GstQmetricReport * r,
    QmEngine * engine);
/* The pooled values of the engine's own metrics (QmAggregates): made for
 * the first engine of the summary, kept across a flushing seek; after a
 * size or format change (reconfigured) none, as they are defined for one
 * picture format.  FALSE: out of memory (the caller posts the error). */
gboolean gst_qmetric_report_aggregates (GstQmetricReport * r,
    QmEngine * engine, gboolean reconfigured);
/* The log-location property (NULL: none) in format, for w x h pictures:
 * opened unless it is already.  FALSE: an error was posted. */
gboolean gst_qmetric_report_open_log (GstQmetricReport * r,
    const gchar * location, QmLogFormat format, gint w, gint h);
/* The engine restarted at a size or format change, at pair n_pairs. */
void gst_qmetric_report_reconfigured (GstQmetricReport * r, GstClockTime rt,
    const GstVideoInfo * info);

/* A pair submitted: its index, the segment's stream times, the skip. */
void gst_qmetric_report_compared (GstQmetricReport * r,
    GstQmetricScoredPair * p);
/* The engine's result for p: scores pooled (the metrics' own pooled values
 * also from a result skipped by subsample), logged and posted ("qmetric",
 * when post).  GST_FLOW_ERROR: the log could not be written (posted). */
GstFlowReturn gst_qmetric_report_scores (GstQmetricReport * r,
    GstQmetricScoredPair * p, const QmResult * res, gboolean post);
/* p leaves, in output order: into the window. */
void gst_qmetric_report_leaving (GstQmetricReport * r,
    GstQmetricScoredPair * p);
/* p's scores on its way out: *buf (made writable) gets the meta; the tags
 * are returned.  NULL, and *buf untouched, when p has no scores. */
GstTagList *gst_qmetric_report_decorate (GstQmetricReport * r,
    GstQmetricScoredPair * p, GstBuffer ** buf);

/* A frame without a partner (in_order: no earlier pair is still to
 * leave). */
void gst_qmetric_report_unmatched (GstQmetricReport * r, gboolean is_ref,
    GstClockTime rt, QmPairReason why, gboolean in_order);
/* A frame that came after its partner stopped waiting (live). */
void gst_qmetric_report_late (GstQmetricReport * r, gboolean is_ref,
    GstClockTime rt, GstClockTime late);
/* A pair not compared: a frame of `side` unreadable or out of range. */
void gst_qmetric_report_not_compared (GstQmetricReport * r,
    GstQmetricMapResult why, const gchar * side, GstClockTime rt,
    const gchar * problem);
/* A buffer's memory (a) and whether it is read in place. */
void gst_qmetric_report_cuda (GstQmetricReport * r, GstQmetricCudaAccess a,
    gboolean in_place);

/* The end of the comparison (EOS): the window and the log completed,
 * "qmetric-summary" posted.  GST_FLOW_ERROR: the log could not be
 * completed (posted). */
GstFlowReturn gst_qmetric_report_finish (GstQmetricReport * r, guint pool);

G_END_DECLS

#endif /* __GST_QMETRIC_REPORT_H__ */
