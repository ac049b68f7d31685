/* gst-qmetric: partial results of a frame range (see partial.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "partial.h"

struct QmPartialWriter {
    FILE *f;
    unsigned n;
    uint64_t rows;
    bool failed;
};

/* JSON string of a feature name: the names are libvmaf keys (letters,
 * digits, '_' and '.'), but escape anyway so that no name breaks the file. */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

QmPartialWriter *qm_partial_open(const char *path, unsigned n,
                                 const char *const *names, int w, int h,
                                 uint64_t start, char **err)
{
    QmPartialWriter *p = calloc(1, sizeof(*p));
    FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
    if (!p || !f) {
        if (err) {
            const char *why = f ? "out of memory" : strerror(errno);
            size_t len = strlen(path) + strlen(why) + 32;
            if ((*err = malloc(len)))
                snprintf(*err, len, "cannot write \"%s\": %s", path, why);
        }
        if (f && f != stdout)
            fclose(f);
        free(p);
        return NULL;
    }
    p->f = f;
    p->n = n;
    fprintf(f, "{\n\"qmetric_partial\": 1,\n\"width\": %d,\n\"height\": %d,\n"
               "\"start\": %llu,\n\"features\": [", w, h, (unsigned long long)start);
    for (unsigned i = 0; i < n; i++) {
        if (i)
            fputs(", ", f);
        put_string(f, names[i]);
    }
    fputs("],\n\"rows\": [", f);
    return p;
}

int qm_partial_row(QmPartialWriter *p, const double *v, const uint8_t *present)
{
    FILE *f = p->f;
    fputs(p->rows++ ? ",\n[" : "\n[", f);
    for (unsigned i = 0; i < p->n; i++) {
        if (i)
            fputc(',', f);
        if (!present[i])
            fputs("null", f);
        else if (isnan(v[i]))
            fputs("\"nan\"", f);
        else if (isinf(v[i]))
            fputs(v[i] > 0 ? "\"inf\"" : "\"-inf\"", f);
        else
            fprintf(f, "%.17g", v[i]);  /* 17 digits: strtod gives the same bits */
    }
    fputc(']', f);
    if (ferror(f))
        p->failed = true;
    return p->failed ? QM_EIO : 0;
}

int qm_partial_close(QmPartialWriter *p, bool end_of_input, double seconds)
{
    FILE *f = p->f;
    fprintf(f, "\n],\n\"frames\": %llu,\n\"end_of_input\": %s,\n\"seconds\": %.6f\n}\n",
            (unsigned long long)p->rows, end_of_input ? "true" : "false", seconds);
    bool failed = p->failed || fflush(f) || ferror(f);
    if (f != stdout && fclose(f))
        failed = true;
    free(p);
    return failed ? QM_EIO : 0;
}

static int load_fail(QmPartial *p, char *err, size_t errlen, const char *path,
                     const char *what)
{
    snprintf(err, errlen, "%s: %s", path, what);
    qm_partial_free(p);
    return QM_EINVAL;
}

int qm_partial_load(QmPartial *p, const char *path, char *err, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    char jerr[256];
    QmJson *j = qm_json_load(path, jerr, sizeof(jerr));
    if (!j) {
        snprintf(err, errlen, "%s: %s", path, jerr);
        return QM_EIO;
    }
    int rc = QM_EINVAL;
    const QmJson *feat = qm_json_get(j, "features"), *rows = qm_json_get(j, "rows");
    const QmJson *eoi = qm_json_get(j, "end_of_input");
    if (qm_json_num(j, "qmetric_partial", 0) != 1 || !feat || feat->type != QM_JSON_ARRAY ||
        !rows || rows->type != QM_JSON_ARRAY || !eoi || eoi->type != QM_JSON_BOOL) {
        qm_json_free(j);
        return load_fail(p, err, errlen, path, "not a qmetric partial result "
                         "(qmetric-yuv --partial writes them)");
    }
    const double start = qm_json_num(j, "start", -1), frames = qm_json_num(j, "frames", -1);
    p->w = (int)qm_json_num(j, "width", 0);
    p->h = (int)qm_json_num(j, "height", 0);
    p->seconds = qm_json_num(j, "seconds", 0);
    p->end_of_input = eoi->num != 0;
    if (!(start >= 0 && start < 1e15 && start == floor(start)) ||
        frames != (double)rows->n) {
        qm_json_free(j);
        return load_fail(p, err, errlen, path, "'start' or 'frames' does not "
                         "match its rows");
    }
    p->start = (uint64_t)start;
    p->frames = rows->n;
    p->n_features = (unsigned)feat->n;
    p->features = calloc(feat->n ? feat->n : 1, sizeof(char *));
    p->values = calloc(rows->n * feat->n + 1, sizeof(double));
    p->present = calloc(rows->n * feat->n + 1, 1);
    if (!p->features || !p->values || !p->present) {
        qm_json_free(j);
        qm_partial_free(p);
        snprintf(err, errlen, "%s: out of memory", path);
        return QM_ENOMEM;
    }
    for (size_t i = 0; i < feat->n; i++) {
        if (feat->items[i]->type != QM_JSON_STRING || !(p->features[i] = strdup(feat->items[i]->str))) {
            qm_json_free(j);
            return load_fail(p, err, errlen, path, "a feature name is not a string");
        }
    }
    for (size_t r = 0; r < rows->n; r++) {
        const QmJson *row = rows->items[r];
        if (row->type != QM_JSON_ARRAY || row->n != feat->n) {
            snprintf(jerr, sizeof(jerr), "row %zu does not have %zu values", r, feat->n);
            qm_json_free(j);
            return load_fail(p, err, errlen, path, jerr);
        }
        for (size_t i = 0; i < row->n; i++) {
            const QmJson *x = row->items[i];
            double *v = &p->values[r * feat->n + i];
            uint8_t *set = &p->present[r * feat->n + i];
            *set = 1;
            if (x->type == QM_JSON_NUMBER)
                *v = x->num;
            else if (x->type == QM_JSON_NULL)
                *set = 0;
            else if (x->type == QM_JSON_STRING && !strcmp(x->str, "inf"))
                *v = INFINITY;
            else if (x->type == QM_JSON_STRING && !strcmp(x->str, "-inf"))
                *v = -INFINITY;
            else if (x->type == QM_JSON_STRING && !strcmp(x->str, "nan"))
                *v = NAN;
            else {
                snprintf(jerr, sizeof(jerr), "row %zu, value %zu is not a number", r, i);
                qm_json_free(j);
                return load_fail(p, err, errlen, path, jerr);
            }
        }
    }
    rc = 0;
    qm_json_free(j);
    return rc;
}

void qm_partial_free(QmPartial *p)
{
    if (p->features)
        for (unsigned i = 0; i < p->n_features; i++)
            free(p->features[i]);
    free(p->features);
    free(p->values);
    free(p->present);
    memset(p, 0, sizeof(*p));
}
