/* gst-qmetric test driver: run one metric's CPU functions with explicit
 * option values over a raw YUV pair and write libvmaf-style JSON (frames and
 * pooled min/max/mean/harmonic_mean) with the engine's key names, e.g. to
 * check options that models set (adm_enhn_gain_limit=1 of vmaf_v0.6.1neg)
 * against the golden data before the model code exists:
 *
 *   cc -O2 -Icpu tests/metric_opts.c build/cpu/libqmcore.a -lm -lpthread \
 *      -o /tmp/metric_opts
 *   /tmp/metric_opts adm REF.yuv DIS.yuv 576 324 8 420 adm_enhn_gain_limit=1 \
 *      > mine.json
 *   python3 GOLDEN/compare.py mine.json GOLDEN/results/CASE__vmaf_v0.6.1neg.json \
 *      --metrics integer_adm2_egl_1,integer_adm_scale0_egl_1
 *
 * Frames are read with tightly packed planes (the golden clips' layout);
 * chroma planes are ceil(w / 2) wide in the file and floor(w / 2) in the
 * picture, like the engine's qmetric-yuv.  Not built by meson (a developer
 * tool); only the metric's init/compute/close are used (no post/flush).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"

static int usage(void)
{
    fprintf(stderr, "usage: metric_opts METRIC REF DIS W H BPC 420|422|444 "
                    "[option=value ...]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 8)
        return usage();
    const QmMetricDesc *d = qm_metric_find(argv[1]);
    if (!d || d->flags & QM_METRIC_SEQUENTIAL || d->delay) {
        fprintf(stderr, "metric_opts: no such metric, or one with state "
                        "between frames: %s\n", argv[1]);
        return 2;
    }
    const int w = atoi(argv[4]), h = atoi(argv[5]), bpc = atoi(argv[6]);
    const int sub = atoi(argv[7]);
    const QmChroma chroma = sub == 420 ? QM_CHROMA_420
                          : sub == 422 ? QM_CHROMA_422 : QM_CHROMA_444;
    QmOptValues ov;
    memset(&ov, 0, sizeof(ov));
    for (int i = 0; d->options && d->options[i].name; i++)
        ov.v[i] = d->options[i].def;
    for (int a = 8; a < argc; a++) {
        char name[64];
        double v;
        int found = 0;
        if (sscanf(argv[a], "%63[^=]=%lf", name, &v) != 2)
            return usage();
        for (int i = 0; d->options && d->options[i].name; i++)
            if (!strcmp(d->options[i].name, name)) {
                ov.v[i] = v;
                found = 1;
            }
        if (!found) {
            fprintf(stderr, "metric_opts: %s has no option %s\n", d->name, name);
            return 2;
        }
    }

    /* file layout: packed planes, chroma ceil-sized */
    const int bps = bpc > 8 ? 2 : 1;
    const int cw = sub == 444 ? w : (w + 1) / 2, ch = sub == 420 ? (h + 1) / 2 : h;
    const size_t ysz = (size_t)w * h * bps, csz = (size_t)cw * ch * bps;
    const size_t fsz = ysz + 2 * csz;
    FILE *fr = fopen(argv[2], "rb"), *fd = fopen(argv[3], "rb");
    uint8_t *br = malloc(fsz), *bd = malloc(fsz);
    void *priv = calloc(1, d->cpu.priv_size ? d->cpu.priv_size : 1);
    unsigned nf = 0;
    while (d->features[nf])
        nf++;
    QmPool *pool = calloc(nf, sizeof(*pool));
    char **keys = calloc(nf, sizeof(*keys));
    if (!fr || !fd || !br || !bd || !priv || !pool || !keys) {
        fprintf(stderr, "metric_opts: cannot open the inputs\n");
        return 1;
    }
    for (unsigned f = 0; f < nf; f++) {
        keys[f] = qm_feature_key(d, f, &ov);
        qm_pool_init(&pool[f]);
    }
    const QmMetricConfig cfg = { w, h, bpc, chroma, &ov };
    int err = d->cpu.init(priv, &cfg);
    if (err) {
        fprintf(stderr, "metric_opts: init failed: %s\n", qm_strerror(err));
        return 1;
    }
    printf("{\n  \"frames\": [");
    for (uint64_t i = 0; fread(br, 1, fsz, fr) == fsz && fread(bd, 1, fsz, fd) == fsz; i++) {
        QmPicture pr = { w, h, bpc, chroma, { br, br + ysz, br + ysz + csz },
                         { (ptrdiff_t)w * bps, (ptrdiff_t)cw * bps, (ptrdiff_t)cw * bps } };
        QmPicture pd = pr;
        pd.data[0] = bd;
        pd.data[1] = bd + ysz;
        pd.data[2] = bd + ysz + csz;
        double v[QM_MAX_FEATURES];
        uint8_t set[QM_MAX_FEATURES] = { 0 };
        QmRows rows;
        memset(&rows, 0, sizeof(rows));
        rows.v[0] = v;
        rows.set[0] = set;
        rows.index = i;
        const QmFrame fm = { &pr, &pd, i };
        if ((err = d->cpu.compute(priv, &fm, &rows))) {
            fprintf(stderr, "metric_opts: frame %llu: %s\n",
                    (unsigned long long)i, qm_strerror(err));
            return 1;
        }
        printf("%s\n    {\"frameNum\": %llu, \"metrics\": {", i ? "," : "",
               (unsigned long long)i);
        for (unsigned f = 0, n = 0; f < nf; f++) {
            if (!set[f])
                continue;
            printf("%s\"%s\": %.6f", n++ ? ", " : "", keys[f], v[f]);
            qm_pool_add(&pool[f], v[f]);
        }
        printf("}}");
    }
    printf("\n  ],\n  \"pooled_metrics\": {");
    for (unsigned f = 0, n = 0; f < nf; f++) {
        if (!pool[f].n)
            continue;
        printf("%s\n    \"%s\": {\"min\": %.6f, \"max\": %.6f, \"mean\": %.6f, "
               "\"harmonic_mean\": %.6f}", n++ ? "," : "", keys[f], pool[f].min,
               pool[f].max, qm_pool_mean(&pool[f]), qm_pool_harmonic_mean(&pool[f]));
    }
    printf("\n  }\n}\n");
    if (d->cpu.close)
        d->cpu.close(priv);
    for (unsigned f = 0; f < nf; f++) {
        free(keys[f]);
        qm_pool_clear(&pool[f]);
    }
    free(keys);
    free(pool);
    free(priv);
    free(br);
    free(bd);
    fclose(fr);
    fclose(fd);
    return 0;
}
