/* gst-qmetric: what the golden gates share (tests/check/golden.c: the
 * libvmaf runs of ../shared/golden/manifest.json; golden_ctc.c: the CLI
 * presets of ctc/manifest.json; golden_xpsnr.c: FFmpeg's xpsnr filter,
 * xpsnr/manifest.json; golden_ssimulacra2.c: libjxl's tool,
 * ssimulacra2/manifest.json) and the element tests that run pipelines the
 * same way (ssimulacra2_color.c): the clips decompressed into a cache, the
 * element run in a pipeline with its messages kept, the comparison rule and
 * the per-feature statistics. */
#ifndef QM_GOLDENLIB_H
#define QM_GOLDENLIB_H

#include <gst/gst.h>

#include "json.h"
#include "qm.h"

/* docs/accuracy.md: every feature is identical to the reference's six
 * printed decimals (rounding: up to 5e-7); 1e-6 leaves room for that
 * rounding only.  A documented exception would get its own bound here. */
#define TOL 1e-6

typedef struct {
  GHashTable *frames;           /* index -> GstStructure */
  guint reconfigured;           /* "qmetric-reconfigured" messages */
  gchar *error;
  gboolean eos;
} RunResult;

typedef struct {
  gchar *key;
  double worst;
  guint fails, checked;
} FeatStat;

/* Whether s contains one of the comma-separated substrings of list (an
 * empty or NULL list selects everything). */
gboolean in_list (const char *list, const char *s);
/* Whether QMETRIC_GOLDEN_FEATURES selects key. */
gboolean key_selected (const char *key);
/* golden/REL (an .xz file) decompressed into the cache once: its path, or
 * NULL after a message. */
gchar *clip (const char *golden, const char *cache, const char *rel);
/* The gate's pipeline: both clips through `parse` into a qmetric element
 * with `props`, the log at log_path (NULL: none), QMETRIC_GOLDEN_THREADS threads
 * (default 2) and QMETRIC_GOLDEN_EXTRA's properties. */
gchar *golden_pipeline (const char *props, const char *log_path,
    const char *ref, const char *dis, const char *parse);
/* The pipeline run to its end (EOS, an error, or 600 s without a
 * message): every "qmetric" message by index. */
RunResult *run_pipeline (const char *desc);
void run_result_free (RunResult * r);
/* A reference value: null means infinite. */
double gval (const QmJson * v);
gboolean close_enough (double ours, double ref);
FeatStat *stat_for (GPtrArray * stats, const char *key);
void feat_stat_free (FeatStat * f);
/* One value of key (have: whether ours exists, v) against the reference's
 * g, counted in key's statistics; the first failures printed after label
 * (the case and run) with where (e.g. "frame 3", "pooled mean"). */
gboolean golden_check_value (GPtrArray * stats, const char *label,
    const char *key, const char *where, gboolean have, double v,
    const QmJson * g);
/* golden_check_value() with another bound than TOL (a reference printed
 * with other decimals). */
gboolean golden_check_within (GPtrArray * stats, const char *label,
    const char *key, const char *where, gboolean have, double v,
    const QmJson * g, double tol);
/* The case of this name in the parent manifest (golden/manifest.json:
 * its clips' layout), or NULL. */
const QmJson *golden_parent_case (const char *golden, const char *name);
/* rawvideoparse for a case of the parent manifest (its pix_fmt, width,
 * height, fps, frame_bytes, plane_strides, plane_offsets): the files are
 * tightly packed, GStreamer's default rows 4-byte aligned.  NULL after a
 * message for an unknown format. */
gchar *golden_rawparse (const QmJson * c);
/* Default settings for the geometry of case c (width, height, bitdepth,
 * pix_fmt). */
void golden_settings (const QmJson * c, QmSettings * s);
/* Whether the engine names exactly the keys of the reference's first frame
 * (but those `ignore` says the reference left out): else FALSE after a
 * line per key missing or extra, each starting with label. */
gboolean golden_keys_equal (const char *label, const QmEngine * e,
    const QmJson * gold, gboolean (*ignore) (const char *key,
        const QmJson * user), const QmJson * user);

/* One case of a manifest: TRUE when it passes.  golden: the data's
 * folder (QMETRIC_GOLDEN_DIR), cache: where clips and logs go. */
typedef gboolean (*GoldenCaseFn) (const char *golden, const char *cache,
    const QmJson * c, GPtrArray * stats);

/* A gate's main(): the cases of golden/MANIFEST (a path relative to the
 * golden folder) that [--group N/M] and QMETRIC_GOLDEN_CASES select, run
 * by run_case, then the per-feature table.  Exit status 0 pass, 1 fail,
 * 77 skip (no data unless QMETRIC_GOLDEN_REQUIRED=1, or backend=cuda
 * asked for without a device). */
int golden_main (int argc, char **argv, const char *manifest_rel,
    GoldenCaseFn run_case);

#endif
