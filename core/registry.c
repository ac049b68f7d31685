/* gst-qmetric: the table of metrics.  Adding a metric = one descriptor in
 * its own file and one line here. */
#include <stdio.h>
#include <stdlib.h>
#include <locale.h>
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
extern const QmMetricDesc qm_metric_speed_chroma;

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
    &qm_metric_speed_chroma,
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
        else if (od->flags & QM_OPT_ENUM)  /* libvmaf prints the string */
            l += (size_t)snprintf(buf + l, sizeof(buf) - l, "_%s_%s", k,
                                  d->option_choices[i][(int)o->v[i]]);
        else  /* libvmaf prints a double option's value with "%g" */
            l += (size_t)snprintf(buf + l, sizeof(buf) - l, "_%s_%g", k, o->v[i]);
    }
    return strdup(buf);
}

unsigned qm_metric_delay(const QmMetricDesc *d, const QmOptValues *o)
{
    return d->delay_of ? d->delay_of(o) : d->delay;
}

int qm_option_parse(const QmMetricDesc *d, const char *name, const char *text,
                    QmOptValues *o, char *err, size_t errlen)
{
    int i;
    for (i = 0; d->options && d->options[i].name; i++)
        if (!strcmp(d->options[i].name, name))
            break;
    if (!d->options || !d->options[i].name) {
        char known[512] = "";
        for (int k = 0; d->options && d->options[k].name; k++)
            snprintf(known + strlen(known), sizeof(known) - strlen(known),
                     "%s%s", k ? ", " : "", d->options[k].name);
        snprintf(err, errlen, "%s has no option '%s' (options: %s)", d->name,
                 name, known[0] ? known : "none");
        return QM_EINVAL;
    }
    const QmOptionDesc *od = &d->options[i];
    double v;
    if (od->flags & QM_OPT_ENUM) {
        const char *const *choices = d->option_choices[i];
        int k;
        for (k = 0; choices[k]; k++)
            if (!strcmp(choices[k], text))
                break;
        if (!choices[k]) {
            char known[256] = "";
            for (int c = 0; choices[c]; c++)
                snprintf(known + strlen(known), sizeof(known) - strlen(known),
                         "%s%s", c ? ", " : "", choices[c]);
            snprintf(err, errlen, "%s: '%s' is not a value of %s (one of: %s)",
                     d->name, text, name, known);
            return QM_EINVAL;
        }
        v = k;
    } else if (od->flags & QM_OPT_BOOL) {
        /* libvmaf's option parser: "true" / "false" (and 1 / 0) */
        if (!strcmp(text, "true") || !strcmp(text, "1"))
            v = 1;
        else if (!strcmp(text, "false") || !strcmp(text, "0"))
            v = 0;
        else {
            snprintf(err, errlen, "%s: %s takes true or false, not '%s'",
                     d->name, name, text);
            return QM_EINVAL;
        }
    } else {
        /* numbers use '.', whatever the locale */
        char *end = NULL;
        locale_t cloc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
        locale_t prev = cloc ? uselocale(cloc) : (locale_t)0;
        v = strtod(text, &end);
        if (cloc) {
            uselocale(prev);
            freelocale(cloc);
        }
        if (end == text || *end || v != v) {
            snprintf(err, errlen, "%s: %s takes a number, not '%s'", d->name,
                     name, text);
            return QM_EINVAL;
        }
        if ((od->flags & QM_OPT_INT) && v != (double)(long long)v) {
            snprintf(err, errlen, "%s: %s takes a whole number, not '%s'",
                     d->name, name, text);
            return QM_EINVAL;
        }
        if (v < od->min || v > od->max) {
            snprintf(err, errlen, "%s: %s = %s is outside [%g, %g]", d->name,
                     name, text, od->min, od->max);
            return QM_EINVAL;
        }
    }
    o->v[i] = v;
    return 0;
}
