/* gst-qmetric: VMAF models (libvmaf's JSON model format) and their
 * prediction.  Shared by both backends: prediction runs on the host. */
#ifndef QM_MODEL_H
#define QM_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric.h"

typedef struct QmModel QmModel;

/* One input of a model: the engine metric that computes it, the feature's
 * base key in that metric (desc->features entry) and the option values the
 * model asks for (e.g. vif_enhn_gain_limit 1.0 for vmaf_v0.6.1neg). */
typedef struct QmModelInput {
    const char *metric;         /* "vif", "adm", "motion" */
    const char *feature;        /* "integer_vif_scale0", ... */
    unsigned n_opts;
    const char *opt_name[QM_MAX_OPTIONS];
    double opt_value[QM_MAX_OPTIONS];
} QmModelInput;

/**
 * Load a model: `name_or_path` is a file path (contains '/' or ends in
 * ".json") or a built-in name looked up as NAME.json in each directory of
 * `search_path` (':'-separated).  The file must be a regular file of at
 * most QM_JSON_MAX_FILE bytes; every number must be finite and in its
 * field's range.  On failure returns QM_EMODEL and a malloc'd message in
 * *err naming the file and the field (valid UTF-8: other bytes of the file
 * name appear as "\xNN").
 */
int qm_model_load(QmModel **out, const char *name_or_path,
                  const char *search_path, char **err);

/**
 * The model of the JSON text[0..len) (the parser fuzzing harness and tests
 * use it): qm_model_load() without the file; `name` names it in messages
 * and becomes its name (a ".json" suffix removed).
 */
int qm_model_parse(QmModel **out, const char *name, const char *text,
                   size_t len, char **err);

/**
 * Split the comma-separated list of the "model" setting into a
 * NULL-terminated array of names (blanks around each name removed).  An
 * empty entry ("a,,b", a leading or trailing comma, an empty list) is
 * QM_EINVAL with a malloc'd message in *err naming the list and the entry.
 * Free the array with qm_model_list_free().
 */
int qm_model_list_parse(const char *list, char ***names, char **err);
void qm_model_list_free(char **names);

/** The model's name (file name without ".json"). */
const char *qm_model_name(const QmModel *m);
/** SHA-256 of the bytes the model was parsed from (the file as read, or
 *  qm_model_parse()'s text): 32 bytes, valid while the model is. */
const uint8_t *qm_model_sha256(const QmModel *m);

unsigned qm_model_n_inputs(const QmModel *m);
const QmModelInput *qm_model_input(const QmModel *m, unsigned i);

/**
 * VMAF score from the model's inputs (in qm_model_input() order): feature
 * normalisation, nu-SVR with RBF kernel, the model's score transform when
 * enable_transform, then clipping to the model's score_clip unless
 * disable_clip.  Follows libvmaf's predict.c arithmetic (double precision).
 */
double qm_model_predict(const QmModel *m, const double *in,
                        bool disable_clip, bool enable_transform);

void qm_model_free(QmModel **m);

#endif /* QM_MODEL_H */
