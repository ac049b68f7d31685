/* gst-qmetric: what the descriptors tell the rest of the product
 * (core/registry.c, core/metric.h), checked for every metric of the build:
 * a display name, a description and a scale (unit, direction, range) for
 * charts; option sets the parity test can read (qm_option_parse(), each
 * run some way); every feature key, with and without option suffixes,
 * leading back to its metric (qm_feature_info(): charts); no feature key
 * written by two metrics; the catalogue (qm_metric_names()) naming every
 * metric once, in the table's order, then "vmaf".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "unit.h"

static void check_descriptor(const QmMetricDesc *d)
{
    CHECK(strspn(d->name, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(d->name),
          "%s: a name is [a-z0-9_]+ (files and symbols are named after it)", d->name);
    CHECK(d->display && *d->display, "%s: display name", d->name);
    CHECK(d->description && *d->description, "%s: description", d->name);
    CHECK(d->scale.unit && *d->scale.unit, "%s: scale unit", d->name);
    CHECK(d->scale.better >= -1 && d->scale.better <= 1, "%s: scale direction %d", d->name,
          d->scale.better);
    CHECK(!(d->scale.lo >= d->scale.hi), "%s: range [%g, %g]", d->name, d->scale.lo,
          d->scale.hi);
    CHECK(d->features && d->features[0], "%s: features", d->name);

    for (int i = 0; d->option_sets && d->option_sets[i].options; i++) {
        const QmOptionSet *set = &d->option_sets[i];
        CHECK(set->flags & (QM_OPTSET_DIRECT | QM_OPTSET_ENGINE),
              "%s: option set \"%s\" runs nowhere", d->name, set->options);
        QmOptValues o;
        char buf[512], err[600];
        snprintf(buf, sizeof(buf), "%s", set->options);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(tok, '=');
            CHECK(eq != NULL, "%s: option set \"%s\": '%s' is not name=value", d->name,
                  set->options, tok);
            if (!eq)
                continue;
            *eq = 0;
            CHECK(qm_option_parse(d, tok, eq + 1, &o, err, sizeof(err)) == 0,
                  "%s: option set \"%s\": %s", d->name, set->options, err);
        }
    }

    /* every feature leads back to its metric, also with option suffixes */
    QmOptValues o;
    memset(&o, 0, sizeof(o));
    for (int i = 0; d->options && d->options[i].name; i++)
        o.v[i] = d->options[i].max != d->options[i].def ? d->options[i].max
                                                         : d->options[i].min;
    for (unsigned f = 0; d->features[f]; f++) {
        QmFeatureInfo fi;
        CHECK(qm_feature_info(d->features[f], &fi) && !strcmp(fi.metric, d->name),
              "%s: feature %s", d->name, d->features[f]);
        char *key = qm_feature_key(d, f, &o);
        CHECK(key && qm_feature_info(key, &fi) && !strcmp(fi.metric, d->name) &&
              !strcmp(fi.unit, d->scale.unit), "%s: key %s", d->name, key ? key : "?");
        free(key);
    }
}

int main(void)
{
    int n = 0;
    for (int i = 0; qm_metrics[i]; i++, n++) {
        check_descriptor(qm_metrics[i]);
        CHECK(qm_metric_find(qm_metrics[i]->name) == qm_metrics[i], "find %s",
              qm_metrics[i]->name);
        for (int j = 0; j < i; j++)
            for (int f = 0; qm_metrics[i]->features[f]; f++)
                for (int g = 0; qm_metrics[j]->features[g]; g++)
                    CHECK(strcmp(qm_metrics[i]->features[f], qm_metrics[j]->features[g]),
                          "feature %s written by %s and %s", qm_metrics[i]->features[f],
                          qm_metrics[j]->name, qm_metrics[i]->name);
    }
    CHECK(n > 0, "no metric");

    const char *const *names = qm_metric_names();
    int k = 0;
    for (; names[k] && k < n; k++)
        CHECK(!strcmp(names[k], qm_metrics[k]->name), "catalogue entry %d: %s", k, names[k]);
    CHECK(k == n && names[k] && !strcmp(names[k], "vmaf") && !names[k + 1],
          "the catalogue ends with vmaf");

    QmFeatureInfo fi;
    CHECK(qm_feature_info("vmaf", &fi) && !strcmp(fi.metric, "vmaf") && fi.lo == 0 &&
          fi.hi == 100 && fi.better == 1, "vmaf");
    CHECK(qm_feature_info("vmaf_v0.6.1neg", &fi) && !strcmp(fi.metric, "vmaf"),
          "a model's name");
    CHECK(!qm_feature_info("no_such_feature", &fi), "an unknown key");
    /* what stands for a metric in a ladder's table and chart */
    static const struct { const char *key; bool headline, model_input; } heads[] = {
        { "vmaf", true, false }, { "psnr_y", true, false }, { "psnr_cb", false, false },
        { "psnr_hvs", true, false }, { "psnr_hvs_y", false, false },
        { "ssimulacra2", true, false }, { "float_ssim", true, false },
        { "integer_vif_scale0", true, true }, { "integer_adm2", true, true },
    };
    for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
        CHECK(qm_feature_info(heads[i].key, &fi) && fi.headline == heads[i].headline &&
              fi.model_input == heads[i].model_input, "headline/model input of %s",
              heads[i].key);
    /* SSIMULACRA2's chart: higher is better, 100 at most, unbounded below */
    CHECK(qm_feature_info("ssimulacra2", &fi) && !strcmp(fi.display, "SSIMULACRA2") &&
          fi.better == 1 && fi.hi == 100 && isnan(fi.lo), "ssimulacra2's scale");
    if (failures)
        return 1;
    printf("registry: %d metrics ok\n", n);
    return 0;
}
