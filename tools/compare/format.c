/* qmetric-compare: how its reports spell things: the statistics of a
 * summary (libvmaf's names and ours), JSON strings and numbers.
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "compare.h"

static const struct { const char *name, *field; } stats[] = {
    { "mean", "mean" }, { "min", "min" }, { "max", "max" },
    { "harmonic_mean", "harmonic-mean" }, { "harmonic-mean", "harmonic-mean" },
    { "p1", "p1" }, { "p5", "p5" },
};

const char *qmc_stat_field(const char *name)
{
    for (guint i = 0; i < G_N_ELEMENTS(stats); i++)
        if (!strcmp(name, stats[i].name))
            return stats[i].field;
    return NULL;
}

/* libvmaf's spelling of a summary field */
const char *qmc_stat_name(const char *field)
{
    return !strcmp(field, "harmonic-mean") ? "harmonic_mean" : field;
}

void qmc_json_string(FILE *f, const char *s)
{
    /* file names need not be UTF-8; JSON must be */
    char *valid = g_utf8_make_valid(s ? s : "", -1);
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)valid; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
    g_free(valid);
}

void qmc_json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6f", v);
    else
        fputs("null", f);
}

void qmc_json_string_or_null(FILE *f, const char *s)
{
    if (s)
        qmc_json_string(f, s);
    else
        fputs("null", f);
}

void qmc_json_backend(FILE *f, const GstStructure *summary)
{
    const char *backend = summary ? gst_structure_get_string(summary, "backend") : NULL;
    guint64 in_place = 0, copied = 0;

    if (summary) {
        gst_structure_get_uint64(summary, "cuda-in-place", &in_place);
        gst_structure_get_uint64(summary, "cuda-copied", &copied);
    }
    fputs("\"backend\": ", f);
    qmc_json_string_or_null(f, backend);
    fprintf(f, ", \"cuda_buffers\": {\"in_place\": %" G_GUINT64_FORMAT ", \"copied\": %"
            G_GUINT64_FORMAT "}", in_place, copied);
}

void qmc_json_end(FILE *f, const char *error, int exit_status)
{
    fputs(",\n  \"error\": ", f);
    qmc_json_string_or_null(f, error);
    fprintf(f, ",\n  \"exit_status\": %d\n}\n", exit_status);
}
