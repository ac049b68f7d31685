/* gst-qmetric: log writers (JSON, CSV, XML). */
#include "qmlog.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct QmLog {
    FILE *f;
    QmLogFormat fmt;
    unsigned n;
    char **names;       /* as written in a frame: escaped for the format */
    char **attr_names;  /* XML: as an attribute value (pooled metrics) */
    uint64_t frames;
    int w, h;
    /* qm_log_aggregate(): keys as given, and values */
    char **agg_keys;
    double *agg_values;
    unsigned n_agg;
};

static const struct { unsigned bit; const char *name; } pool_names[] = {
    { QM_POOL_MIN, "min" },
    { QM_POOL_MAX, "max" },
    { QM_POOL_MEAN, "mean" },
    { QM_POOL_HARMONIC_MEAN, "harmonic_mean" },
    { QM_POOL_P1, "p1" },
    { QM_POOL_P5, "p5" },
};
#define N_POOL (sizeof(pool_names) / sizeof(pool_names[0]))

const char *qm_pool_method_name(unsigned bit)
{
    for (size_t i = 0; i < N_POOL; i++)
        if (pool_names[i].bit == bit)
            return pool_names[i].name;
    return NULL;
}

double qm_pool_value(QmPool *p, unsigned bit)
{
    switch (bit) {
    case QM_POOL_MIN: return p->min;
    case QM_POOL_MAX: return p->max;
    case QM_POOL_MEAN: return qm_pool_mean(p);
    case QM_POOL_HARMONIC_MEAN: return qm_pool_harmonic_mean(p);
    case QM_POOL_P1: return qm_pool_percentile(p, 1.0);
    case QM_POOL_P5: return qm_pool_percentile(p, 5.0);
    default: return NAN;
    }
}

int qm_log_format_from_string(const char *s)
{
    if (!s || !strcmp(s, "json"))
        return QM_LOG_FORMAT_JSON;
    if (!strcmp(s, "csv"))
        return QM_LOG_FORMAT_CSV;
    if (!strcmp(s, "xml"))
        return QM_LOG_FORMAT_XML;
    if (!strcmp(s, "jsonl"))
        return QM_LOG_FORMAT_JSONL;
    return -1;
}

void qm_format_score(char *buf, size_t len, double x)
{
    if (!isfinite(x)) {
        snprintf(buf, len, "null");
        return;
    }
    /* libvmaf (output.c) counts the zeros after the decimal point and
     * switches to 16 decimals past six of them */
    double frac = fabs(x) - (double)(long long)fabs(x);
    int zeros = 0;
    while (frac < 1.0 && frac != 0.0) {
        frac *= 10;
        zeros++;
    }
    snprintf(buf, len, zeros <= 6 ? "%.6f" : "%.16f", x);
}

/* ---- names as each format must write them ----
 * Feature names come from model files and options, so they can hold any
 * byte.  Each writer gets them escaped once, at open. */

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if there is none. */
static size_t utf8_seq(const unsigned char *s)
{
    size_t n;
    unsigned cp;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        n = 2;
        cp = s[0] & 0x1F;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        n = 3;
        cp = s[0] & 0x0F;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        n = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    /* overlong forms, surrogates and code points past U+10FFFF */
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

typedef struct {
    char *p;
    size_t len, cap;
} Buf;

static void buf_put(Buf *b, const char *s, size_t n)
{
    if (!b->p)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = 2 * (b->len + n + 1);
        char *p = realloc(b->p, cap);
        if (!p) {
            free(b->p);
            b->p = NULL;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

/* JSON string contents (RFC 8259): quote, backslash and controls escaped;
 * bytes that are not UTF-8 become U+FFFD so that the file stays valid. */
static char *escape_json(const char *s)
{
    Buf b = { malloc(16), 0, 16 };
    const unsigned char *u = (const unsigned char *)s;
    char tmp[8];
    while (*u) {
        size_t n = utf8_seq(u);
        if (n == 0) {
            buf_put(&b, "\\ufffd", 6);
            u++;
        } else if (*u == '"' || *u == '\\') {
            tmp[0] = '\\';
            tmp[1] = (char)*u++;
            buf_put(&b, tmp, 2);
        } else if (*u < 0x20 || *u == 0x7F) {
            snprintf(tmp, sizeof(tmp), "\\u%04x", *u++);
            buf_put(&b, tmp, 6);
        } else {
            buf_put(&b, (const char *)u, n);
            u += n;
        }
    }
    buf_put(&b, "", 0);
    return b.p;
}

/* An XML attribute value: markup characters as entities; characters XML
 * 1.0 does not allow (controls, non-UTF-8 bytes) as U+FFFD. */
static char *escape_xml_value(const char *s)
{
    Buf b = { malloc(16), 0, 16 };
    const unsigned char *u = (const unsigned char *)s;
    while (*u) {
        size_t n = utf8_seq(u);
        if (n == 0 || (*u < 0x20 && *u != '\t' && *u != '\n' && *u != '\r')) {
            buf_put(&b, "\xEF\xBF\xBD", 3);
            u++;
            continue;
        }
        switch (*u) {
        case '&': buf_put(&b, "&amp;", 5); break;
        case '<': buf_put(&b, "&lt;", 4); break;
        case '>': buf_put(&b, "&gt;", 4); break;
        case '"': buf_put(&b, "&quot;", 6); break;
        case '\'': buf_put(&b, "&apos;", 6); break;
        case '\t': buf_put(&b, "&#9;", 4); break;
        case '\n': buf_put(&b, "&#10;", 5); break;
        case '\r': buf_put(&b, "&#13;", 5); break;
        default: buf_put(&b, (const char *)u, n); break;
        }
        u += n;
    }
    buf_put(&b, "", 0);
    return b.p;
}

/* An XML attribute name (libvmaf's XML writes each feature as an attribute
 * of <frame>): ASCII letters, digits, '_', '-', '.' kept, anything else
 * '_', and '_' in front of a name that cannot start one.  Escaping is not
 * possible in a name; the pooled section keeps the exact name as a value. */
static char *xml_name(const char *s)
{
    size_t len = strlen(s);
    char *o = malloc(len + 2), *d = o;
    if (!o)
        return NULL;
    if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z') ||
          s[0] == '_'))
        *d++ = '_';
    for (; *s; s++) {
        char c = *s;
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                 (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
        *d++ = ok ? c : '_';
    }
    *d = 0;
    return o;
}

/* A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line
 * break, quotes doubled; bytes that are not UTF-8 become U+FFFD. */
static char *escape_csv(const char *s)
{
    Buf b = { malloc(16), 0, 16 };
    const unsigned char *u = (const unsigned char *)s;
    int quote = strpbrk(s, ",\"\r\n") != NULL;
    if (quote)
        buf_put(&b, "\"", 1);
    while (*u) {
        size_t n = utf8_seq(u);
        if (n == 0)
            buf_put(&b, "\xEF\xBF\xBD", 3), n = 1;
        else if (*u == '"')
            buf_put(&b, "\"\"", 2);
        else
            buf_put(&b, (const char *)u, n);
        u += n;
    }
    if (quote)
        buf_put(&b, "\"", 1);
    buf_put(&b, "", 0);
    return b.p;
}

static void free_names(QmLog *l)
{
    for (unsigned i = 0; i < l->n; i++) {
        if (l->names)
            free(l->names[i]);
        if (l->attr_names)
            free(l->attr_names[i]);
    }
    free(l->names);
    free(l->attr_names);
    for (unsigned i = 0; i < l->n_agg; i++)
        free(l->agg_keys[i]);
    free(l->agg_keys);
    free(l->agg_values);
}

int qm_log_aggregate(QmLog *l, const char *key, double value)
{
    if (!l)
        return 0;
    char **k = realloc(l->agg_keys, (l->n_agg + 1) * sizeof(*k));
    if (k)
        l->agg_keys = k;
    double *v = realloc(l->agg_values, (l->n_agg + 1) * sizeof(*v));
    if (v)
        l->agg_values = v;
    char *dup = k && v ? strdup(key) : NULL;
    if (!dup)
        return QM_ENOMEM;
    l->agg_keys[l->n_agg] = dup;
    l->agg_values[l->n_agg++] = value;
    return 0;
}

/* The "name": value pairs of qm_log_aggregate() in JSON: one per line
 * (pretty, the JSON log) or on one line (JSON lines). */
static void write_json_aggregates(QmLog *l, int pretty)
{
    char num[64];
    for (unsigned i = 0; i < l->n_agg; i++) {
        char *k = escape_json(l->agg_keys[i]);
        qm_format_score(num, sizeof(num), l->agg_values[i]);
        fprintf(l->f, pretty ? "%s\n    \"%s\": %s" : "%s\"%s\":%s", i ? "," : "",
                k ? k : "", num);
        free(k);
    }
}

QmLog *qm_log_open(const char *path, QmLogFormat fmt, unsigned n,
                   const char *const *names, int w, int h, char **err)
{
    QmLog *l = calloc(1, sizeof(*l));
    if (!l) {
        *err = strdup("out of memory");
        return NULL;
    }
    l->fmt = fmt;
    l->n = n;
    l->w = w;
    l->h = h;
    l->names = calloc(n ? n : 1, sizeof(char *));
    l->attr_names = calloc(n ? n : 1, sizeof(char *));
    int oom = !l->names || !l->attr_names;
    for (unsigned i = 0; !oom && i < n; i++) {
        switch (fmt) {
        case QM_LOG_FORMAT_JSON:
        case QM_LOG_FORMAT_JSONL:
            l->names[i] = escape_json(names[i]);
            break;
        case QM_LOG_FORMAT_CSV:
            l->names[i] = escape_csv(names[i]);
            break;
        case QM_LOG_FORMAT_XML:
            l->names[i] = xml_name(names[i]);
            l->attr_names[i] = escape_xml_value(names[i]);
            oom |= !l->attr_names[i];
            break;
        }
        oom |= !l->names[i];
    }
    if (oom) {
        *err = strdup("out of memory");
        free_names(l);
        free(l);
        return NULL;
    }
    l->f = fopen(path, "w");
    if (!l->f) {
        size_t len = strlen(path) + 128;
        *err = malloc(len);
        if (*err)
            snprintf(*err, len, "cannot open log file \"%s\" for writing: %s",
                     path, strerror(errno));
        free_names(l);
        free(l);
        return NULL;
    }
    switch (fmt) {
    case QM_LOG_FORMAT_JSON:
        fprintf(l->f, "{\n  \"version\": \"gst-qmetric %s\",\n  \"frames\": [",
                QM_VERSION);
        break;
    case QM_LOG_FORMAT_CSV:
        fprintf(l->f, "Frame");
        for (unsigned i = 0; i < n; i++)
            fprintf(l->f, ",%s", l->names[i]);
        fprintf(l->f, "\n");
        break;
    case QM_LOG_FORMAT_XML:
        fprintf(l->f, "<VMAF version=\"gst-qmetric %s\">\n", QM_VERSION);
        fprintf(l->f, "  <params qualityWidth=\"%d\" qualityHeight=\"%d\" />\n",
                w, h);
        fprintf(l->f, "  <frames>\n");
        break;
    case QM_LOG_FORMAT_JSONL:
        fprintf(l->f, "{\"type\":\"header\",\"version\":\"gst-qmetric %s\","
                "\"width\":%d,\"height\":%d}\n", QM_VERSION, w, h);
        break;
    }
    /* a file that cannot take even its header (a full disk, /dev/full)
     * is refused now rather than at the first frame */
    if (fflush(l->f) || ferror(l->f)) {
        size_t len = strlen(path) + 128;
        int e = errno;
        *err = malloc(len);
        if (*err)
            snprintf(*err, len, "cannot write log file \"%s\": %s", path,
                     strerror(e));
        fclose(l->f);
        free_names(l);
        free(l);
        return NULL;
    }
    return l;
}

/* "name":value for each present score */
static void write_jsonl_scores(QmLog *l, const double *v, const uint8_t *present)
{
    char num[64];
    unsigned k = 0;
    for (unsigned i = 0; i < l->n; i++) {
        if (!present[i])
            continue;
        qm_format_score(num, sizeof(num), v[i]);
        fprintf(l->f, "%s\"%s\":%s", k++ ? "," : "", l->names[i], num);
    }
}

int qm_log_frame(QmLog *l, uint64_t frame_num, const double *v,
                 const uint8_t *present)
{
    char num[64];
    unsigned cnt = 0;
    for (unsigned i = 0; i < l->n; i++)
        cnt += present[i] != 0;
    if (!cnt && l->fmt != QM_LOG_FORMAT_CSV)
        return 0;
    switch (l->fmt) {
    case QM_LOG_FORMAT_JSON: {
        fprintf(l->f, "%s\n    {\n      \"frameNum\": %llu,\n      \"metrics\": {",
                l->frames ? "," : "", (unsigned long long)frame_num);
        unsigned k = 0;
        for (unsigned i = 0; i < l->n; i++) {
            if (!present[i])
                continue;
            qm_format_score(num, sizeof(num), v[i]);
            fprintf(l->f, "%s\n        \"%s\": %s", k++ ? "," : "", l->names[i], num);
        }
        fprintf(l->f, "\n      }\n    }");
        break;
    }
    case QM_LOG_FORMAT_CSV:
        fprintf(l->f, "%llu", (unsigned long long)frame_num);
        for (unsigned i = 0; i < l->n; i++) {
            if (present[i])
                qm_format_score(num, sizeof(num), v[i]);
            else
                num[0] = 0;
            fprintf(l->f, ",%s", num);
        }
        fprintf(l->f, "\n");
        break;
    case QM_LOG_FORMAT_XML:
        fprintf(l->f, "    <frame frameNum=\"%llu\"", (unsigned long long)frame_num);
        for (unsigned i = 0; i < l->n; i++) {
            if (!present[i])
                continue;
            qm_format_score(num, sizeof(num), v[i]);
            fprintf(l->f, " %s=\"%s\"", l->names[i], num);
        }
        fprintf(l->f, " />\n");
        break;
    case QM_LOG_FORMAT_JSONL:
        fprintf(l->f, "{\"type\":\"frame\",\"frameNum\":%llu,\"metrics\":{",
                (unsigned long long)frame_num);
        write_jsonl_scores(l, v, present);
        fprintf(l->f, "}}\n");
        break;
    }
    l->frames++;
    /* a live log is read while it grows: hand each frame to the OS */
    fflush(l->f);
    return ferror(l->f) ? QM_EIO : 0;
}

/* "name":{"frames":n,"min":x,...} for each feature with a frame */
static void write_jsonl_pools(QmLog *l, unsigned n, QmPool *pools,
                              unsigned methods, int with_frames)
{
    char num[64];
    unsigned k = 0;
    for (unsigned i = 0; pools && i < n && i < l->n; i++) {
        if (!pools[i].n)
            continue;
        fprintf(l->f, "%s\"%s\":{", k++ ? "," : "", l->names[i]);
        unsigned j = 0;
        if (with_frames) {
            fprintf(l->f, "\"frames\":%llu", (unsigned long long)pools[i].n);
            j++;
        }
        for (size_t m = 0; m < N_POOL; m++) {
            if (!(methods & pool_names[m].bit))
                continue;
            qm_format_score(num, sizeof(num), qm_pool_value(&pools[i], pool_names[m].bit));
            fprintf(l->f, "%s\"%s\":%s", j++ ? "," : "", pool_names[m].name, num);
        }
        fprintf(l->f, "}");
    }
}

/* a running time in ns, or null */
static void write_jsonl_time(FILE *f, const char *key, uint64_t t)
{
    if (t == UINT64_MAX)
        fprintf(f, ",\"%s\":null", key);
    else
        fprintf(f, ",\"%s\":%llu", key, (unsigned long long)t);
}

int qm_log_window(QmLog *l, const QmLogWindow *w)
{
    if (!l || l->fmt != QM_LOG_FORMAT_JSONL)
        return 0;
    fprintf(l->f, "{\"type\":\"window\",\"window\":%llu",
            (unsigned long long)w->index);
    write_jsonl_time(l->f, "start_running_time", w->start_rt);
    write_jsonl_time(l->f, "end_running_time", w->end_rt);
    fprintf(l->f, ",\"reason\":\"%s\",\"pairs\":%llu,\"unmatched_reference\":%llu,"
            "\"unmatched_distorted\":%llu,\"unreadable\":%llu,\"pooled_metrics\":{",
            w->reason, (unsigned long long)w->pairs,
            (unsigned long long)w->unmatched_ref,
            (unsigned long long)w->unmatched_dist,
            (unsigned long long)w->unreadable);
    write_jsonl_pools(l, w->n, w->pools, w->methods, 1);
    fprintf(l->f, "}}\n");
    fflush(l->f);
    return ferror(l->f) ? QM_EIO : 0;
}

int qm_log_close(QmLog *l, QmPool *pools, unsigned methods, double fps)
{
    if (!l)
        return 0;
    char num[64];
    unsigned k = 0;
    switch (l->fmt) {
    case QM_LOG_FORMAT_JSON:
        fprintf(l->f, "\n  ],\n");
        qm_format_score(num, sizeof(num), fps);
        fprintf(l->f, "  \"fps\": %s,\n", num);
        fprintf(l->f, "  \"pooled_metrics\": {");
        for (unsigned i = 0; pools && i < l->n; i++) {
            if (!pools[i].n)
                continue;
            fprintf(l->f, "%s\n    \"%s\": {", k++ ? "," : "", l->names[i]);
            unsigned j = 0;
            for (size_t m = 0; m < N_POOL; m++) {
                if (!(methods & pool_names[m].bit))
                    continue;
                qm_format_score(num, sizeof(num), qm_pool_value(&pools[i], pool_names[m].bit));
                fprintf(l->f, "%s\n      \"%s\": %s", j++ ? "," : "", pool_names[m].name, num);
            }
            fprintf(l->f, "\n    }");
        }
        fprintf(l->f, "\n  },\n  \"aggregate_metrics\": {");
        write_json_aggregates(l, 1);
        fprintf(l->f, "%s}\n}\n", l->n_agg ? "\n  " : "");
        break;
    case QM_LOG_FORMAT_CSV:
        break;  /* CSV holds the frames only, as libvmaf's */
    case QM_LOG_FORMAT_XML:
        fprintf(l->f, "  </frames>\n  <pooled_metrics>\n");
        for (unsigned i = 0; pools && i < l->n; i++) {
            if (!pools[i].n)
                continue;
            fprintf(l->f, "    <metric name=\"%s\"", l->attr_names[i]);
            for (size_t m = 0; m < N_POOL; m++) {
                if (!(methods & pool_names[m].bit))
                    continue;
                qm_format_score(num, sizeof(num), qm_pool_value(&pools[i], pool_names[m].bit));
                fprintf(l->f, " %s=\"%s\"", pool_names[m].name, num);
            }
            fprintf(l->f, " />\n");
        }
        fprintf(l->f, "  </pooled_metrics>\n");
        if (l->n_agg) {
            /* libvmaf's layout: one attribute per value */
            fprintf(l->f, "  <aggregate_metrics");
            for (unsigned i = 0; i < l->n_agg; i++) {
                char *attr = xml_name(l->agg_keys[i]);
                qm_format_score(num, sizeof(num), l->agg_values[i]);
                fprintf(l->f, " %s=\"%s\"", attr ? attr : "_", num);
                free(attr);
            }
            fprintf(l->f, " />\n");
        }
        qm_format_score(num, sizeof(num), fps);
        fprintf(l->f, "  <fyi fps=\"%s\" />\n</VMAF>\n", num);
        break;
    case QM_LOG_FORMAT_JSONL:
        qm_format_score(num, sizeof(num), fps);
        fprintf(l->f, "{\"type\":\"summary\",\"frames\":%llu,\"fps\":%s,"
                "\"pooled_metrics\":{", (unsigned long long)l->frames, num);
        write_jsonl_pools(l, l->n, pools, methods, 0);
        fprintf(l->f, "}");
        if (l->n_agg) {
            fprintf(l->f, ",\"aggregate_metrics\":{");
            write_json_aggregates(l, 0);
            fprintf(l->f, "}");
        }
        fprintf(l->f, "}\n");
        break;
    }
    int err = ferror(l->f) ? QM_EIO : 0;
    if (fclose(l->f))
        err = QM_EIO;
    free_names(l);
    free(l);
    return err;
}
