/* gst-qmetric: what the golden gates share (tests/check/golden.c for
 * libvmaf's results, golden_ssimulacra2.c for libjxl's): the clips, the
 * element in a pipeline, the data directory and the CUDA variant. */
#ifndef QM_GOLDEN_UTIL_H
#define QM_GOLDEN_UTIL_H

#include <gst/gst.h>

#include "json.h"

typedef struct {
  GHashTable *frames;           /* index -> GstStructure "qmetric" */
  guint reconfigured;           /* "qmetric-reconfigured" messages */
  gchar *error;
  gboolean eos;
} QmGoldenRun;

/* Whether s is (whole: TRUE) or contains (FALSE) one of the
 * comma-separated items of list (an empty or NULL list: every s). */
gboolean qm_golden_in_list (const char *list, const char *s, gboolean whole);

/* Decompress golden/REL (yuv/X.yuv.xz) into the cache once; the path of
 * the clip, NULL (after a message) when it cannot. */
gchar *qm_golden_clip (const char *golden, const char *cache, const char *rel);

/* "rawvideoparse ..." for a case of the golden manifest (its size, format
 * and plane layout: the files are tightly packed, GStreamer's default rows
 * 4-byte aligned); NULL for a pix_fmt without a GStreamer format. */
gchar *qm_golden_rawparse (const QmJson * c);

/* Run a pipeline to EOS (or an error, or 600 s without a message),
 * keeping every "qmetric" message by frame index. */
QmGoldenRun *qm_golden_run_pipeline (const char *desc);
void qm_golden_run_free (QmGoldenRun * r);

/* The manifest `name` of the golden data (QMETRIC_GOLDEN_DIR, else
 * default_dir), loaded, with *dir set; NULL with *status 77 (missing data,
 * SKIP) or 1 (missing data with QMETRIC_GOLDEN_REQUIRED=1, or unreadable). */
QmJson *qm_golden_manifest (const char *default_dir, const char *name,
    const char **dir, int *status);

/* The cache of decompressed clips (QMETRIC_GOLDEN_CACHE, else a folder in
 * the temporary directory), created. */
gchar *qm_golden_cache (void);

/* With QMETRIC_GOLDEN_EXTRA asking for backend=cuda: whether a CUDA device
 * works (FALSE after a SKIP line). */
gboolean qm_golden_device_ok (void);

#endif
