/* gst-qmetric: the "common test conditions" presets of libvmaf's command
 * line tool, --aom_ctc v1.0 .. v7.0 and --nflx_ctc v1.0 (libvmaf 3.2.0,
 * tools/cli_parse.c): each is a pair of named VMAF models and a list of
 * feature instances with options, nothing else.  QmSettings.preset names
 * one as "FAMILY=VERSION" (e.g. "aom_ctc=v7.0"); the planner (plan.c) adds
 * its models and features to the settings' own. */
#ifndef QM_PRESET_H
#define QM_PRESET_H

#include <stdbool.h>
#include <stddef.h>

typedef struct QmPreset {
    const char *family;    /* "aom_ctc", "nflx_ctc" */
    const char *version;   /* "v1.0" ... */
    const char *models;    /* QmSettings.models spelling, labels included */
    const char *features;  /* QmSettings.features spelling */
    /* libvmaf's common_bitdepth (aom_ctc v6.0 on): inputs of different bit
     * depths are compared at the larger; raw input has one --bitdepth */
    bool common_bitdepth;
} QmPreset;

/**
 * The preset `version` of `family`, or NULL with the reason in err (errlen
 * bytes): libvmaf's own words for a bad version of a known family
 * ("bad aom_ctc version \"v8.0\"", "`--aom_ctc proposed` is deprecated.").
 */
const QmPreset *qm_preset_find(const char *family, const char *version,
                               char *err, size_t errlen);

/** qm_preset_find() of "FAMILY=VERSION". */
const QmPreset *qm_preset_parse(const char *spec, char *err, size_t errlen);

/** The families, NULL-terminated ("aom_ctc", "nflx_ctc"). */
const char *const *qm_preset_families(void);

#endif /* QM_PRESET_H */
