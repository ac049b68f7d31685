/* gst-qmetric tests: a qmetric element between two appsrcs and an appsink,
 * with everything the bus and the src pad said recorded. */
#ifndef QM_TEST_H
#define QM_TEST_H

#include <gst/gst.h>
#include <gst/video/video.h>

typedef struct {
  GstElement *pipe, *ref, *dist, *q, *sink;
  GPtrArray *scores;      /* GstStructure "qmetric", in order */
  GstStructure *summary;  /* "qmetric-summary" or NULL */
  GPtrArray *windows;     /* GstStructure "qmetric-window", in order */
  GPtrArray *warnings;    /* gchar*, the messages' text */
  GPtrArray *infos;       /* gchar*, the info messages' text */
  gchar *error;           /* first error's text, or NULL */
  GPtrArray *buffers;     /* GstBuffer from the appsink */
  GPtrArray *tags;        /* GstTagList seen on the appsink's pad */
  gboolean eos;
} QmRig;

/* props: extra properties for qmetric, e.g. "metrics=psnr". */
QmRig *qm_rig_new (const gchar * props, const gchar * ref_caps,
    const gchar * dist_caps);
/* Push one frame (takes buf) with PTS = i * 40 ms on one side. */
void qm_rig_push (QmRig * rig, gboolean ref, GstBuffer * buf, guint i);
void qm_rig_eos (QmRig * rig, gboolean ref);
/* Run until EOS or an error (or 60 s); fills the records. */
void qm_rig_run (QmRig * rig);
/* End both streams, then qm_rig_run (). */
void qm_rig_finish (QmRig * rig);
void qm_rig_free (QmRig * rig);

/* A guint64 field of s, asserting it exists. */
guint64 qm_u64 (const GstStructure * s, const gchar * field);
/* Whether one of texts (gchar*) contains part. */
gboolean qm_has_text (GPtrArray * texts, const gchar * part);

/* Field of the nth score message, asserting it exists. */
gdouble qm_rig_score (QmRig * rig, guint n, const gchar * feature);

/* A frame of the given caps, each sample from gen(plane, x, y, user). */
typedef guint (*QmGenFn) (gint plane, gint x, gint y, gpointer user);
GstBuffer *qm_make_frame (const gchar * caps, QmGenFn gen, gpointer user);

#endif
