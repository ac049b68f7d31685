/* gst-qmetric: the plan of an engine: which metric instances run (a metric
 * and its option values), the VMAF models they feed, and the features of a
 * result row.
 *
 * qm_plan_build() reads the selection of QmSettings (metrics, features,
 * models) against the picture geometry: "all" and the default list mean
 * what the input supports (left-out metrics are logged as warnings), a
 * metric asked for by name that cannot run is an error, a model's inputs
 * become instances with the model's options, and instances with equal
 * options are shared.  The scheduler (engine.c) runs the plan and decides
 * nothing about metrics.
 *
 * A result row holds every instance's features (instance i from
 * inst[i].base, inst[i].nf of them, in the descriptor's order), then one
 * score per model.
 */
#ifndef QM_PLAN_H
#define QM_PLAN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "metric.h"
#include "model.h"

#define QM_PLAN_MAX_INST 32   /* the scheduler keeps instances in bitmasks */
#define QM_PLAN_MAX_MODELS 8

typedef struct QmPlanInst {
    const QmMetricDesc *d;
    QmOptValues opt;
    unsigned base, nf;   /* first feature index in a row, feature count */
    bool report;         /* selected by the user (not only a model input) */
} QmPlanInst;

typedef struct QmPlanModel {
    QmModel *m;
    unsigned in[QM_MAX_FEATURES];  /* feature index of each model input */
    unsigned out;                  /* feature index of the score */
} QmPlanModel;

typedef struct QmPlan {
    QmPlanInst inst[QM_PLAN_MAX_INST];
    int ninst;
    QmPlanModel models[QM_PLAN_MAX_MODELS];
    int nmodels;
    char **names;        /* nfeat feature keys (libvmaf's, option suffixes
                            included; "vmaf" or the model names last) */
    uint8_t *reported;   /* per feature: appears in results */
    unsigned nfeat;
    unsigned delay;      /* the largest look-ahead of an instance */
    char *err;           /* while building: why it failed */
} QmPlan;

/**
 * Plan what an engine with settings s computes.  Returns 0, or a QM_E*
 * code with *err (malloc'd, the caller frees; NULL when out of memory)
 * saying why, the plan then empty.  Warnings go to s->log.
 */
int qm_plan_build(QmPlan *p, const QmSettings *s, char **err);

void qm_plan_free(QmPlan *p);

/** "4:2:0", "4:0:0 (GRAY)"...: for messages. */
const char *qm_chroma_name(QmChroma c);

/** A one-line message from fmt: a copy in *dst (replacing it; dst may be
 *  NULL) and to s->log at this level (s NULL or level < 0: not logged). */
void qm_vmessage(char **dst, const QmSettings *s, int level, const char *fmt, va_list ap);

#endif /* QM_PLAN_H */
