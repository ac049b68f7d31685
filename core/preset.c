/* gst-qmetric: the presets of libvmaf's command line tool (see preset.h).
 *
 * What each version selects, from libvmaf 3.2.0's tools/cli_parse.c
 * (aom_ctc_v1_0() .. aom_ctc_v7_0(), nflx_ctc_v1_0()):
 *
 *   aom_ctc v1.0  models vmaf_v0.6.1 named "vmaf" and vmaf_v0.6.1neg named
 *                 "vmaf_neg"; psnr with reduced_hbd_peak, enable_apsnr and
 *                 min_sse 0.5; ciede; float_ssim and float_ms_ssim in dB,
 *                 clipped; psnr_hvs
 *   v2.0          as v1.0
 *   v3.0          adds cambi
 *   v4.0, v5.0    as v3.0
 *   v6.0          adds common_bitdepth
 *   v7.0          float_ssim with scale 1 (no automatic downscaling)
 *   nflx_ctc v1.0 models vmaf_4k_v0.6.1 named "vmaf" and vmaf_4k_v0.6.1neg
 *                 named "vmaf_neg"; psnr with enable_apsnr (enable_chroma is
 *                 its default); float_ssim in dB, clipped; cambi
 */
#include <stdio.h>
#include <string.h>

#include "preset.h"

#define AOM_MODELS "version=vmaf_v0.6.1:name=vmaf,version=vmaf_v0.6.1neg:name=vmaf_neg"
#define AOM_PSNR "psnr=reduced_hbd_peak=true:enable_apsnr=true:min_sse=0.5"
#define AOM_MS_SSIM "float_ms_ssim=enable_db=true:clip_db=true"
#define AOM_V1 AOM_PSNR ",ciede,float_ssim=enable_db=true:clip_db=true," \
               AOM_MS_SSIM ",psnr_hvs"
#define AOM_V3 AOM_V1 ",cambi"
/* v7.0 replaces float_ssim in place */
#define AOM_V7 AOM_PSNR ",ciede,float_ssim=scale=1:enable_db=true:clip_db=true," \
               AOM_MS_SSIM ",psnr_hvs,cambi"

static const QmPreset presets[] = {
    { "aom_ctc", "v1.0", AOM_MODELS, AOM_V1, false },
    { "aom_ctc", "v2.0", AOM_MODELS, AOM_V1, false },
    { "aom_ctc", "v3.0", AOM_MODELS, AOM_V3, false },
    { "aom_ctc", "v4.0", AOM_MODELS, AOM_V3, false },
    { "aom_ctc", "v5.0", AOM_MODELS, AOM_V3, false },
    { "aom_ctc", "v6.0", AOM_MODELS, AOM_V3, true },
    { "aom_ctc", "v7.0", AOM_MODELS, AOM_V7, true },
    { "nflx_ctc", "v1.0",
      "version=vmaf_4k_v0.6.1:name=vmaf,version=vmaf_4k_v0.6.1neg:name=vmaf_neg",
      "psnr=enable_chroma=true:enable_apsnr=true,"
      "float_ssim=enable_db=true:clip_db=true,cambi", false },
};

static const char *const families[] = { "aom_ctc", "nflx_ctc", NULL };

const char *const *qm_preset_families(void)
{
    return families;
}

const QmPreset *qm_preset_find(const char *family, const char *version,
                               char *err, size_t errlen)
{
    bool known = false;
    for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
        if (strcmp(presets[i].family, family))
            continue;
        known = true;
        if (!strcmp(presets[i].version, version))
            return &presets[i];
    }
    if (!known)
        snprintf(err, errlen, "unknown preset '%s' (aom_ctc or nflx_ctc)", family);
    else if (!strcmp(family, "aom_ctc") && !strcmp(version, "proposed"))
        snprintf(err, errlen, "`--aom_ctc proposed` is deprecated.");
    else
        snprintf(err, errlen, "bad %s version \"%s\"", family, version);
    return NULL;
}

const QmPreset *qm_preset_parse(const char *spec, char *err, size_t errlen)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec) {
        snprintf(err, errlen, "preset '%s' is not FAMILY=VERSION (e.g. aom_ctc=v7.0)",
                 spec);
        return NULL;
    }
    char family[32];
    snprintf(family, sizeof(family), "%.*s", (int)(eq - spec), spec);
    return qm_preset_find(family, eq + 1, err, errlen);
}
