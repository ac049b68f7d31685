/* gst-qmetric: the table of metrics.  Adding a metric = one descriptor in
 * its own file and one line here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"

extern const QmMetricDesc qm_metric_psnr;
extern const QmMetricDesc qm_metric_float_ssim;
extern const QmMetricDesc qm_metric_float_ms_ssim;
extern const QmMetricDesc qm_metric_psnr_hvs;
extern const QmMetricDesc qm_metric_ciede;
extern const QmMetricDesc qm_metric_cambi;
extern const QmMetricDesc qm_metric_vif;
extern const QmMetricDesc qm_metric_adm;
extern const QmMetricDesc qm_metric_motion;

const QmMetricDesc *const qm_metrics[] = {
    &qm_metric_psnr,
    &qm_metric_float_ssim,
    &qm_metric_float_ms_ssim,
    &qm_metric_psnr_hvs,
    &qm_metric_ciede,
    &qm_metric_cambi,
    &qm_metric_vif,
    &qm_metric_adm,
    &qm_metric_motion,
    NULL,
};

/* "vmaf" is not a metric of its own: it selects the model(s), whose inputs
 * pull in vif/adm/motion with the options the model asks for. */
static const char vmaf_description[] =
    "VMAF score of the selected model(s) (features: vmaf, plus the model's "
    "VIF, ADM and motion features)";

const QmMetricDesc *qm_metric_find(const char *name)
{
    for (int i = 0; qm_metrics[i]; i++)
        if (!strcmp(qm_metrics[i]->name, name))
            return qm_metrics[i];
    return NULL;
}

const char *const *qm_metric_names(void)
{
    static const char *names[32];
    if (!names[0]) {
        int n = 0;
        for (int i = 0; qm_metrics[i] && n < 30; i++)
            names[n++] = qm_metrics[i]->name;
        names[n++] = "vmaf";
        names[n] = NULL;
    }
    return names;
}

const char *qm_metric_describe(const char *name)
{
    if (!strcmp(name, "vmaf"))
        return vmaf_description;
    const QmMetricDesc *d = qm_metric_find(name);
    return d ? d->description : NULL;
}

bool qm_metric_has_cuda(const char *name)
{
    if (!strcmp(name, "vmaf")) {
        static const char *const inputs[] = { "vif", "adm", "motion" };
        for (int i = 0; i < 3; i++)
            if (!qm_metric_has_cuda(inputs[i]))
                return false;
        return true;
    }
    const QmMetricDesc *d = qm_metric_find(name);
    return d && d->cuda;
}

char *qm_feature_key(const QmMetricDesc *d, unsigned f, const QmOptValues *o)
{
    char buf[256];
    size_t l = (size_t)snprintf(buf, sizeof(buf), "%s", d->features[f]);
    for (int i = 0; d->options && d->options[i].name && l < sizeof(buf); i++) {
        const QmOptionDesc *od = &d->options[i];
        if (o->v[i] == od->def || !(od->flags & QM_OPT_IN_KEY))
            continue;
        const char *k = od->alias ? od->alias : od->name;
        if (od->flags & QM_OPT_BOOL)
            l += (size_t)snprintf(buf + l, sizeof(buf) - l, "_%s", k);
        else  /* libvmaf prints a double option's value with "%g" */
            l += (size_t)snprintf(buf + l, sizeof(buf) - l, "_%s_%g", k, o->v[i]);
    }
    return strdup(buf);
}
