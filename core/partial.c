/* gst-qmetric: partial results of a frame range (see partial.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "partial.h"

#ifndef QM_VERSION
#define QM_VERSION "unknown"
#endif

/* ------------------------------------------------------------ fingerprint */

#define FP_SPAN (1u << 20)  /* bytes hashed at each end */

/* n bytes at off into the hash, read with pread(); 0 or -1 (errno set). */
static int hash_range(QmSha256 *c, int fd, uint64_t off, uint64_t n, uint8_t *buf)
{
    while (n) {
        const size_t want = n < FP_SPAN ? (size_t)n : FP_SPAN;
        const ssize_t got = pread(fd, buf, want, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (got == 0)
                errno = EIO;  /* the file shrank under us */
            return -1;
        }
        qm_sha256_update(c, buf, (size_t)got);
        off += (uint64_t)got;
        n -= (uint64_t)got;
    }
    return 0;
}

int qm_partial_fingerprint_fd(int fd, uint64_t *bytes, char hex[QM_SHA256_HEX])
{
    struct stat st;
    if (fstat(fd, &st))
        return QM_EIO;
    if (!S_ISREG(st.st_mode)) {
        errno = ESPIPE;
        return QM_EIO;
    }
    const uint64_t size = (uint64_t)st.st_size;
    const uint64_t span = size < FP_SPAN ? size : FP_SPAN;
    uint8_t len[8], *buf = malloc(FP_SPAN), d[QM_SHA256_BYTES];
    if (!buf) {
        errno = ENOMEM;
        return QM_EIO;
    }
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)(size >> (8 * i));
    QmSha256 c;
    qm_sha256_init(&c);
    qm_sha256_update(&c, len, sizeof(len));
    const int bad = hash_range(&c, fd, 0, span, buf) || hash_range(&c, fd, size - span, span, buf);
    free(buf);
    if (bad)
        return QM_EIO;
    qm_sha256_final(&c, d);
    qm_sha256_hex(d, hex);
    *bytes = size;
    return 0;
}

/* ---------------------------------------------------------------- writing */

/* The settings' keys and values (n of each, the arrays too). */
static void free_settings(char **key, char **value, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        free(key[i]);
        free(value[i]);
    }
    free(key);
    free(value);
}

struct QmPartialWriter {
    FILE *f;
    char *tool;
    unsigned n;
    char **names;
    int w, h;
    uint64_t start;
    bool have_input[2];
    QmPartialInput input[2];
    unsigned n_set;
    char **set_key, **set_value;   /* sorted by key */
    bool header;                   /* what comes before the rows is written */
    uint64_t rows;
    bool failed;
    QmPartialHash *hash;           /* increasing frames */
    unsigned n_hash, cap_hash;
};

/* JSON string: feature names are libvmaf keys (letters, digits, '_' and
 * '.'), settings canonical text, but escape anyway so that no value breaks
 * the file. */
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

static char *dup_or_fail(const char *s, bool *failed)
{
    char *d = strdup(s);
    if (!d)
        *failed = true;
    return d;
}

QmPartialWriter *qm_partial_open(const char *path, const char *tool, unsigned n,
                                 const char *const *names, int w, int h,
                                 uint64_t start, char **err)
{
    QmPartialWriter *p = calloc(1, sizeof(*p));
    FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
    bool oom = !p;
    if (p) {
        p->names = calloc(n ? n : 1, sizeof(*p->names));
        p->tool = dup_or_fail(tool, &oom);
        for (unsigned i = 0; p->names && i < n; i++)
            p->names[i] = dup_or_fail(names[i], &oom);
        oom |= !p->names;
    }
    if (oom || !f) {
        if (err) {
            const char *why = f ? "out of memory" : strerror(errno);
            size_t len = strlen(path) + strlen(why) + 32;
            if ((*err = malloc(len)))
                snprintf(*err, len, "cannot write \"%s\": %s", path, why);
        }
        if (f && f != stdout)
            fclose(f);
        if (p) {
            p->f = NULL;
            p->n = n;
            qm_partial_close(p, false, 0);  /* frees */
        }
        return NULL;
    }
    p->f = f;
    p->n = n;
    p->w = w;
    p->h = h;
    p->start = start;
    return p;
}

int qm_partial_set_input(QmPartialWriter *p, int which, const QmPartialInput *in)
{
    if (which != QM_PARTIAL_REFERENCE && which != QM_PARTIAL_DISTORTED)
        return QM_EINVAL;
    p->input[which] = *in;
    p->have_input[which] = true;
    return 0;
}

int qm_partial_set(QmPartialWriter *p, const char *key, const char *value)
{
    unsigned i = 0;
    while (i < p->n_set && strcmp(p->set_key[i], key) < 0)
        i++;
    char *v = strdup(value);
    if (!v)
        return QM_ENOMEM;
    if (i < p->n_set && !strcmp(p->set_key[i], key)) {
        free(p->set_value[i]);
        p->set_value[i] = v;
        return 0;
    }
    char *k = strdup(key);
    char **nk = realloc(p->set_key, (p->n_set + 1) * sizeof(*nk));
    if (nk)
        p->set_key = nk;
    char **nv = realloc(p->set_value, (p->n_set + 1) * sizeof(*nv));
    if (nv)
        p->set_value = nv;
    if (!k || !nk || !nv) {
        free(k);
        free(v);
        return QM_ENOMEM;
    }
    memmove(&p->set_key[i + 1], &p->set_key[i], (p->n_set - i) * sizeof(*nk));
    memmove(&p->set_value[i + 1], &p->set_value[i], (p->n_set - i) * sizeof(*nv));
    p->set_key[i] = k;
    p->set_value[i] = v;
    p->n_set++;
    return 0;
}

/* Text appended to a growing buffer; false when out of memory. */
typedef struct Text {
    char *s;
    size_t len, cap;
} Text;

static bool add(Text *t, const char *a, const char *b, const char *c)
{
    const size_t n = strlen(a) + strlen(b) + strlen(c);
    if (t->len + n + 1 > t->cap) {
        const size_t cap = (t->len + n + 1) * 2;
        char *g = realloc(t->s, cap);
        if (!g)
            return false;
        t->s = g;
        t->cap = cap;
    }
    t->len += (size_t)sprintf(t->s + t->len, "%s%s%s", a, b, c);
    return true;
}

char *qm_partial_engine_settings(const QmEngine *e, const QmSettings *s)
{
    Text t = { NULL, 0, 0 };
    char num[32];
    const bool cuda = qm_engine_backend(e) == QM_BACKEND_CUDA;
    char *metrics = qm_engine_metrics_text(e, false);
    char *dev = cuda ? qm_engine_metrics_text(e, true) : NULL;
    bool ok = metrics && (!cuda || dev);
    /* in the order of the keys (qm_partial_set() sorts anyway) */
    ok = ok && add(&t, "backend=", cuda ? "cuda" : "cpu", "\n");
    snprintf(num, sizeof(num), "%d", s->bpc);
    ok = ok && add(&t, "bitdepth=", num, "\n");
    if (ok && cuda)
        ok = add(&t, "device_metrics=", dev, "\n");
    ok = ok && add(&t, "disable_clip=", s->disable_clip ? "true" : "false", "\n");
    ok = ok && add(&t, "enable_transform=", s->enable_transform ? "true" : "false", "\n");
    ok = ok && add(&t, "metrics=", metrics, "\n");
    /* models: "name sha256:HEX" each, in score order ("none" without) */
    const unsigned nm = qm_engine_n_models(e);
    ok = ok && add(&t, "models=", nm ? "" : "none", "");
    for (unsigned i = 0; ok && i < nm; i++) {
        char hex[QM_SHA256_HEX], *name = strdup(qm_engine_model_name(e, i));
        for (char *c = name; c && *c; c++)
            if ((unsigned char)*c < 0x20)
                *c = '?';  /* one line per setting */
        qm_sha256_hex(qm_engine_model_sha256(e, i), hex);
        ok = name && add(&t, i ? "," : "", name, " sha256:") && add(&t, hex, "", "");
        free(name);
    }
    ok = ok && add(&t, "\n", "", "");
    static const char *const chroma[] = { "400", "420", "422", "444" };
    ok = ok && add(&t, "pixel_format=", (unsigned)s->chroma < 4 ? chroma[s->chroma] : "unknown", "\n");
    snprintf(num, sizeof(num), "%u", s->subsample > 1 ? s->subsample : 1);
    ok = ok && add(&t, "subsample=", num, "\n");
    free(metrics);
    free(dev);
    if (!ok) {
        free(t.s);
        return NULL;
    }
    return t.s;
}

int qm_partial_set_lines(QmPartialWriter *p, const char *text)
{
    int err = 0;
    while (*text && !err) {
        const char *nl = strchr(text, '\n'), *eq = strchr(text, '=');
        const size_t len = nl ? (size_t)(nl - text) : strlen(text);
        if (!eq || eq >= text + len || eq == text)
            return QM_EINVAL;
        char *key = strndup(text, (size_t)(eq - text));
        char *value = strndup(eq + 1, len - (size_t)(eq - text) - 1);
        err = key && value ? qm_partial_set(p, key, value) : QM_ENOMEM;
        free(key);
        free(value);
        text += len + (nl != NULL);
    }
    return err;
}

int qm_partial_set_engine(QmPartialWriter *p, const QmEngine *e, const QmSettings *s)
{
    char *lines = qm_partial_engine_settings(e, s);
    const int err = lines ? qm_partial_set_lines(p, lines) : QM_ENOMEM;
    free(lines);
    return err;
}

bool qm_partial_hash_wanted(uint64_t frame, uint64_t start, uint64_t end)
{
    const uint64_t c = QM_CHUNK_CONTEXT;
    if (frame + c < start)
        return false;
    if (frame < start + c || end == UINT64_MAX)
        return true;
    return frame + c >= end && frame < end + c;
}

int qm_partial_frame_hash(QmPartialWriter *p, uint64_t frame, uint64_t ref, uint64_t dis)
{
    if (p->n_hash && frame <= p->hash[p->n_hash - 1].frame)
        return QM_EINVAL;
    if (!qm_partial_hash_wanted(frame, p->start, UINT64_MAX))
        return 0;
    /* The frames read end at most QM_MAX_DELAY after the chunk's end, so a
     * frame more than 2 x QM_CHUNK_CONTEXT before this one is not within
     * QM_CHUNK_CONTEXT of the end: keep it only if it is near the start. */
    unsigned keep = 0;
    for (unsigned i = 0; i < p->n_hash; i++) {
        const uint64_t f = p->hash[i].frame;
        if (f < p->start + QM_CHUNK_CONTEXT || f + 2 * QM_CHUNK_CONTEXT >= frame)
            p->hash[keep++] = p->hash[i];
    }
    p->n_hash = keep;
    if (p->n_hash == p->cap_hash) {
        const unsigned cap = p->cap_hash ? 2 * p->cap_hash : 4 * QM_CHUNK_CONTEXT;
        QmPartialHash *h = realloc(p->hash, cap * sizeof(*h));
        if (!h)
            return QM_ENOMEM;
        p->hash = h;
        p->cap_hash = cap;
    }
    p->hash[p->n_hash++] = (QmPartialHash){ frame, { ref, dis } };
    return 0;
}

static void put_input(FILE *f, const char *name, const QmPartialInput *in)
{
    fprintf(f, "  \"%s\": {\"width\": %d, \"height\": %d, \"format\": ", name, in->w, in->h);
    put_string(f, in->format);
    fprintf(f, ", \"bitdepth\": %d, \"bytes\": %" PRIu64 ", \"fingerprint\": \"%s\"}",
            in->bitdepth, in->bytes, in->fingerprint);
}

/* Everything before the rows, once. */
static void write_header(QmPartialWriter *p)
{
    if (p->header)
        return;
    p->header = true;
    FILE *f = p->f;
    fprintf(f, "{\n\"qmetric_partial\": %d,\n\"tool\": ", QM_PARTIAL_VERSION);
    put_string(f, p->tool);
    fputs(",\n\"version\": ", f);
    put_string(f, QM_VERSION);
    fprintf(f, ",\n\"width\": %d,\n\"height\": %d,\n\"start\": %" PRIu64 ",\n\"features\": [",
            p->w, p->h, p->start);
    for (unsigned i = 0; i < p->n; i++) {
        if (i)
            fputs(", ", f);
        put_string(f, p->names[i]);
    }
    fputs("],\n\"rows\": [", f);
}

/* Everything after the rows: the identity, which a writer may learn only
 * at the end (qmetric-compare: from the element's summary). */
static void write_tail(QmPartialWriter *p, bool end_of_input, double seconds)
{
    FILE *f = p->f;
    const uint64_t end = p->start + p->rows;
    fprintf(f, "\n],\n\"frames\": %" PRIu64 ",\n\"inputs\": {\n", p->rows);
    put_input(f, "reference", &p->input[0]);
    fputs(",\n", f);
    put_input(f, "distorted", &p->input[1]);
    fputs("\n},\n\"settings\": {", f);
    for (unsigned i = 0; i < p->n_set; i++) {
        fputs(i ? ",\n  " : "\n  ", f);
        put_string(f, p->set_key[i]);
        fputs(": ", f);
        put_string(f, p->set_value[i]);
    }
    fputs("\n},\n\"frame_hashes\": [", f);
    unsigned k = 0;
    for (unsigned i = 0; i < p->n_hash; i++) {
        const QmPartialHash *h = &p->hash[i];
        if (!qm_partial_hash_wanted(h->frame, p->start, end))
            continue;
        fprintf(f, "%s[%" PRIu64 ", \"%016" PRIx64 "\", \"%016" PRIx64 "\"]",
                k++ ? ",\n  " : "\n  ", h->frame, h->hash[0], h->hash[1]);
    }
    fprintf(f, "\n],\n\"end_of_input\": %s,\n\"seconds\": %.6f\n}\n",
            end_of_input ? "true" : "false", seconds);
}

int qm_partial_row(QmPartialWriter *p, const double *v, const uint8_t *present)
{
    FILE *f = p->f;
    write_header(p);
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
    /* a record without both inputs is no record: the file is left
     * incomplete (not JSON), which every reader refuses */
    int err = !f ? QM_EIO : !p->have_input[0] || !p->have_input[1] ? QM_EINVAL : 0;
    if (!err) {
        write_header(p);
        write_tail(p, end_of_input, seconds);
        if (p->failed || fflush(f) || ferror(f))
            err = QM_EIO;
    }
    if (f && f != stdout && fclose(f) && !err)
        err = QM_EIO;
    for (unsigned i = 0; p->names && i < p->n; i++)
        free(p->names[i]);
    free(p->names);
    free_settings(p->set_key, p->set_value, p->n_set);
    free(p->tool);
    free(p->hash);
    free(p);
    return err;
}

/* ---------------------------------------------------------------- reading */

typedef struct Loader {
    QmPartial *p;
    char *err;
    size_t errlen;
} Loader;

static int bad(Loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(Loader *l, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(l->err, l->errlen, "%s: not a valid partial result: %s", l->p->path, what);
    return QM_EINVAL;
}

/* Member key of obj with type t, or NULL after bad(). */
static const QmJson *need(Loader *l, const QmJson *obj, const char *ctx, const char *key,
                          QmJsonType t)
{
    static const char *const tn[] = { "null", "a boolean", "a number", "a string",
                                      "an array", "an object" };
    const QmJson *v = qm_json_get(obj, key);
    if (!v)
        bad(l, "no \"%s%s\"", ctx, key);
    else if (v->type != t)
        bad(l, "\"%s%s\" is not %s", ctx, key, tn[t]);
    return v && v->type == t ? v : NULL;
}

/* A whole number in [min, max] (max at most 2^53: exact in a double). */
static int need_uint(Loader *l, const QmJson *obj, const char *ctx, const char *key,
                     double min, double max, uint64_t *out)
{
    const QmJson *v = need(l, obj, ctx, key, QM_JSON_NUMBER);
    if (!v)
        return QM_EINVAL;
    if (!(v->num >= min && v->num <= max && v->num == floor(v->num)))
        return bad(l, "\"%s%s\" is not a whole number from %.0f to %.0f", ctx, key, min, max);
    *out = (uint64_t)v->num;
    return 0;
}

/* Only the members named in `known` (NULL-terminated). */
static int only_known(Loader *l, const QmJson *obj, const char *ctx,
                      const char *const *known)
{
    for (size_t i = 0; i < obj->n; i++) {
        const char *const *k = known;
        while (*k && strcmp(*k, obj->items[i]->key))
            k++;
        if (!*k)
            return bad(l, "unknown field \"%s%s\"", ctx, obj->items[i]->key);
    }
    return 0;
}

static bool is_hex(const char *s, size_t n)
{
    size_t i = 0;
    for (; s[i] && i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return i == n && !s[i];
}

static int load_input(Loader *l, const QmJson *inputs, const char *name, QmPartialInput *in)
{
    static const char *const known[] = { "width", "height", "format", "bitdepth", "bytes",
                                         "fingerprint", NULL };
    char ctx[40];
    snprintf(ctx, sizeof(ctx), "inputs.%s.", name);
    const QmJson *o = need(l, inputs, "inputs.", name, QM_JSON_OBJECT);
    uint64_t w, h, bd;
    const QmJson *fmt, *fp;
    if (!o || only_known(l, o, ctx, known) ||
        need_uint(l, o, ctx, "width", 1, 1 << 30, &w) ||
        need_uint(l, o, ctx, "height", 1, 1 << 30, &h) ||
        need_uint(l, o, ctx, "bitdepth", 1, 64, &bd) ||
        need_uint(l, o, ctx, "bytes", 0, 9007199254740992.0, &in->bytes) ||
        !(fmt = need(l, o, ctx, "format", QM_JSON_STRING)) ||
        !(fp = need(l, o, ctx, "fingerprint", QM_JSON_STRING)))
        return QM_EINVAL;
    if (!fmt->str[0] || strlen(fmt->str) >= sizeof(in->format))
        return bad(l, "\"%sformat\" is empty or too long", ctx);
    if (!is_hex(fp->str, 64))
        return bad(l, "\"%sfingerprint\" is not 64 lower-case hex digits", ctx);
    in->w = (int)w;
    in->h = (int)h;
    in->bitdepth = (int)bd;
    strcpy(in->format, fmt->str);
    strcpy(in->fingerprint, fp->str);
    return 0;
}

static int by_key(const void *a, const void *b)
{
    return strcmp((*(const QmJson *const *)a)->key, (*(const QmJson *const *)b)->key);
}

static int load_settings(Loader *l, const QmJson *set)
{
    QmPartial *p = l->p;
    const QmJson **items = malloc((set->n ? set->n : 1) * sizeof(*items));
    p->set_key = calloc(set->n ? set->n : 1, sizeof(char *));
    p->set_value = calloc(set->n ? set->n : 1, sizeof(char *));
    if (!items || !p->set_key || !p->set_value) {
        free(items);
        return QM_ENOMEM;
    }
    memcpy(items, set->items, set->n * sizeof(*items));
    qsort(items, set->n, sizeof(*items), by_key);
    int err = 0;
    for (size_t i = 0; i < set->n && !err; i++) {
        if (items[i]->type != QM_JSON_STRING) {
            err = bad(l, "\"settings.%s\" is not a string", items[i]->key);
            break;
        }
        p->set_key[i] = strdup(items[i]->key);
        p->set_value[i] = strdup(items[i]->str);
        p->n_settings++;
        if (!p->set_key[i] || !p->set_value[i])
            err = QM_ENOMEM;
    }
    free(items);
    return err;
}

static int parse_hash(const char *s, uint64_t *h)
{
    if (!is_hex(s, 16))
        return -1;
    *h = strtoull(s, NULL, 16);
    return 0;
}

static int load_hashes(Loader *l, const QmJson *arr)
{
    QmPartial *p = l->p;
    p->hashes = calloc(arr->n ? arr->n : 1, sizeof(*p->hashes));
    if (!p->hashes)
        return QM_ENOMEM;
    for (size_t i = 0; i < arr->n; i++) {
        const QmJson *e = arr->items[i];
        QmPartialHash *h = &p->hashes[i];
        const double f = e->type == QM_JSON_ARRAY && e->n == 3 &&
                         e->items[0]->type == QM_JSON_NUMBER ? e->items[0]->num : -1;
        if (!(f >= 0 && f <= 9007199254740992.0 && f == floor(f)) ||
            e->items[1]->type != QM_JSON_STRING || e->items[2]->type != QM_JSON_STRING ||
            parse_hash(e->items[1]->str, &h->hash[0]) || parse_hash(e->items[2]->str, &h->hash[1]))
            return bad(l, "frame_hashes entry %zu is not [frame, \"16 hex digits\", "
                       "\"16 hex digits\"]", i);
        h->frame = (uint64_t)f;
        if (i && h->frame <= p->hashes[i - 1].frame)
            return bad(l, "frame_hashes: frame %" PRIu64 " is not after frame %" PRIu64,
                       h->frame, p->hashes[i - 1].frame);
        if (!qm_partial_hash_wanted(h->frame, p->start, p->start + p->frames))
            return bad(l, "frame_hashes: frame %" PRIu64 " is not within %d frames of the "
                       "range's ends", h->frame, QM_CHUNK_CONTEXT);
        p->n_hashes++;
    }
    return 0;
}

static int load_rows(Loader *l, const QmJson *rows)
{
    QmPartial *p = l->p;
    const size_t nf = p->n_features;
    p->values = calloc(rows->n * nf + 1, sizeof(double));
    p->present = calloc(rows->n * nf + 1, 1);
    if (!p->values || !p->present)
        return QM_ENOMEM;
    for (size_t r = 0; r < rows->n; r++) {
        const QmJson *row = rows->items[r];
        if (row->type != QM_JSON_ARRAY || row->n != nf)
            return bad(l, "row %zu does not have %zu values", r, nf);
        for (size_t i = 0; i < nf; i++) {
            const QmJson *x = row->items[i];
            double *v = &p->values[r * nf + i];
            uint8_t *set = &p->present[r * nf + i];
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
            else
                return bad(l, "row %zu, value %zu is not a number", r, i);
        }
    }
    return 0;
}

static int load_tree(Loader *l, const QmJson *j)
{
    static const char *const known[] = {
        "qmetric_partial", "tool", "version", "inputs", "settings", "width", "height",
        "start", "features", "rows", "frames", "frame_hashes", "end_of_input", "seconds", NULL,
    };
    static const char *const known_inputs[] = { "reference", "distorted", NULL };
    QmPartial *p = l->p;
    const QmJson *fmt = qm_json_get(j, "qmetric_partial");
    if (j->type != QM_JSON_OBJECT || !fmt || fmt->type != QM_JSON_NUMBER) {
        snprintf(l->err, l->errlen, "%s: not a qmetric partial result (qmetric-yuv and "
                 "qmetric-compare --partial write them)", p->path);
        return QM_EINVAL;
    }
    if (fmt->num == 1) {
        snprintf(l->err, l->errlen, "%s: a partial result of format 1, which does not record "
                 "its inputs and settings: score this chunk again with this version (%s)",
                 p->path, QM_VERSION);
        return QM_EINVAL;
    }
    if (fmt->num != QM_PARTIAL_VERSION) {
        snprintf(l->err, l->errlen, "%s: a partial result of format %g; this version (%s) "
                 "reads format %d", p->path, fmt->num, QM_VERSION, QM_PARTIAL_VERSION);
        return QM_EINVAL;
    }
    const QmJson *tool, *version, *inputs, *set, *feat, *rows, *hashes, *eoi, *secs;
    uint64_t w, h, frames;
    int err;
    if ((err = only_known(l, j, "", known)) ||
        !(tool = need(l, j, "", "tool", QM_JSON_STRING)) ||
        !(version = need(l, j, "", "version", QM_JSON_STRING)) ||
        !(inputs = need(l, j, "", "inputs", QM_JSON_OBJECT)) ||
        (err = only_known(l, inputs, "inputs.", known_inputs)) ||
        (err = load_input(l, inputs, "reference", &p->input[0])) ||
        (err = load_input(l, inputs, "distorted", &p->input[1])) ||
        !(set = need(l, j, "", "settings", QM_JSON_OBJECT)) ||
        (err = need_uint(l, j, "", "width", 1, 1 << 30, &w)) ||
        (err = need_uint(l, j, "", "height", 1, 1 << 30, &h)) ||
        (err = need_uint(l, j, "", "start", 0, 1e15, &p->start)) ||
        (err = need_uint(l, j, "", "frames", 0, 1e15, &frames)) ||
        !(feat = need(l, j, "", "features", QM_JSON_ARRAY)) ||
        !(rows = need(l, j, "", "rows", QM_JSON_ARRAY)) ||
        !(hashes = need(l, j, "", "frame_hashes", QM_JSON_ARRAY)) ||
        !(eoi = need(l, j, "", "end_of_input", QM_JSON_BOOL)) ||
        !(secs = need(l, j, "", "seconds", QM_JSON_NUMBER)))
        return err ? err : QM_EINVAL;
    if (frames != rows->n)
        return bad(l, "\"frames\" is %" PRIu64 " but there are %zu rows", frames, rows->n);
    if (!(secs->num >= 0))
        return bad(l, "\"seconds\" is negative");
    p->w = (int)w;
    p->h = (int)h;
    p->frames = frames;
    p->end_of_input = eoi->num != 0;
    p->seconds = secs->num;
    p->tool = strdup(tool->str);
    p->version = strdup(version->str);
    p->features = calloc(feat->n ? feat->n : 1, sizeof(char *));
    if (!p->tool || !p->version || !p->features)
        return QM_ENOMEM;
    for (size_t i = 0; i < feat->n; i++) {
        if (feat->items[i]->type != QM_JSON_STRING || !feat->items[i]->str[0])
            return bad(l, "feature name %zu is not a non-empty string", i);
        if (!(p->features[i] = strdup(feat->items[i]->str)))
            return QM_ENOMEM;
        p->n_features++;
    }
    if ((err = load_settings(l, set)) || (err = load_rows(l, rows)) ||
        (err = load_hashes(l, hashes)))
        return err;
    return 0;
}

int qm_partial_load(QmPartial *p, const char *path, char *err, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    if (!(p->path = strdup(path))) {
        snprintf(err, errlen, "%s: out of memory", path);
        return QM_ENOMEM;
    }
    char jerr[256];
    QmJson *j = qm_json_load(path, jerr, sizeof(jerr));
    if (!j) {
        /* qm_json_load's messages name the file */
        snprintf(err, errlen, "%s", jerr);
        qm_partial_free(p);
        return QM_EIO;
    }
    Loader l = { p, err, errlen };
    int rc = load_tree(&l, j);
    qm_json_free(j);
    if (rc == QM_ENOMEM)
        snprintf(err, errlen, "%s: out of memory", path);
    if (rc)
        qm_partial_free(p);
    return rc;
}

void qm_partial_free(QmPartial *p)
{
    if (p->features)
        for (unsigned i = 0; i < p->n_features; i++)
            free(p->features[i]);
    free_settings(p->set_key, p->set_value, p->n_settings);
    free(p->features);
    free(p->values);
    free(p->present);
    free(p->hashes);
    free(p->tool);
    free(p->version);
    free(p->path);
    memset(p, 0, sizeof(*p));
}

/* ------------------------------------------------------------- comparing */

/* "field: B against A"; long values (a metrics list) are shown from the
 * item where they start to differ. */
static int differ(char *what, size_t len, const char *field, const char *b, const char *a)
{
    size_t k = 0;
    while (a[k] && a[k] == b[k])
        k++;
    const size_t show = 120;
    if (strlen(a) <= show && strlen(b) <= show) {
        snprintf(what, len, "%s: %s against %s", field, b, a);
        return -1;
    }
    while (k && a[k - 1] != ',')
        k--;
    snprintf(what, len, "%s: %s%.*s%s against %s%.*s%s", field, k ? "..." : "",
             (int)show, b + k, strlen(b + k) > show ? "..." : "", k ? "..." : "",
             (int)show, a + k, strlen(a + k) > show ? "..." : "");
    return -1;
}

static int differ_u(char *what, size_t len, const char *field, uint64_t b, uint64_t a)
{
    char x[24], y[24];
    snprintf(x, sizeof(x), "%" PRIu64, b);
    snprintf(y, sizeof(y), "%" PRIu64, a);
    return differ(what, len, field, x, y);
}

static int compare_input(const QmPartialInput *b, const QmPartialInput *a, const char *name,
                         char *what, size_t len)
{
    char f[48];
#define FIELD(n) (snprintf(f, sizeof(f), "inputs.%s.%s", name, n), f)
    if (b->w != a->w)
        return differ_u(what, len, FIELD("width"), (uint64_t)b->w, (uint64_t)a->w);
    if (b->h != a->h)
        return differ_u(what, len, FIELD("height"), (uint64_t)b->h, (uint64_t)a->h);
    if (strcmp(b->format, a->format))
        return differ(what, len, FIELD("format"), b->format, a->format);
    if (b->bitdepth != a->bitdepth)
        return differ_u(what, len, FIELD("bitdepth"), (uint64_t)b->bitdepth, (uint64_t)a->bitdepth);
    if (b->bytes != a->bytes)
        return differ_u(what, len, FIELD("bytes"), b->bytes, a->bytes);
    if (strcmp(b->fingerprint, a->fingerprint))
        return differ(what, len, FIELD("fingerprint"), b->fingerprint, a->fingerprint);
#undef FIELD
    return 0;
}

int qm_partial_compare(const QmPartial *b, const QmPartial *a, char *what, size_t len)
{
    if (strcmp(b->tool, a->tool))
        return differ(what, len, "tool", b->tool, a->tool);
    if (strcmp(b->version, a->version))
        return differ(what, len, "version", b->version, a->version);
    for (int i = 0; i < 2; i++)
        if (compare_input(&b->input[i], &a->input[i], i ? "distorted" : "reference", what, len))
            return -1;
    /* both sorted: walk them together */
    unsigned i = 0, k = 0;
    while (i < b->n_settings || k < a->n_settings) {
        const int c = i == b->n_settings ? 1 : k == a->n_settings ? -1
                      : strcmp(b->set_key[i], a->set_key[k]);
        char f[300];
        if (c) {
            const char *key = c < 0 ? b->set_key[i] : a->set_key[k];
            snprintf(f, sizeof(f), "settings.%s", key);
            return differ(what, len, f, c < 0 ? b->set_value[i] : "(not set)",
                          c < 0 ? "(not set)" : a->set_value[k]);
        }
        if (strcmp(b->set_value[i], a->set_value[k])) {
            snprintf(f, sizeof(f), "settings.%s", b->set_key[i]);
            return differ(what, len, f, b->set_value[i], a->set_value[k]);
        }
        i++;
        k++;
    }
    if (b->w != a->w)
        return differ_u(what, len, "width", (uint64_t)b->w, (uint64_t)a->w);
    if (b->h != a->h)
        return differ_u(what, len, "height", (uint64_t)b->h, (uint64_t)a->h);
    for (unsigned f = 0; f < b->n_features || f < a->n_features; f++) {
        const char *x = f < b->n_features ? b->features[f] : "(none)";
        const char *y = f < a->n_features ? a->features[f] : "(none)";
        if (strcmp(x, y)) {
            char name[48];
            snprintf(name, sizeof(name), "features[%u]", f);
            return differ(what, len, name, x, y);
        }
    }
    return 0;
}

static const QmPartialHash *find_hash(const QmPartial *p, uint64_t frame)
{
    unsigned lo = 0, hi = p->n_hashes;
    while (lo < hi) {
        const unsigned mid = lo + (hi - lo) / 2;
        if (p->hashes[mid].frame < frame)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n_hashes && p->hashes[lo].frame == frame ? &p->hashes[lo] : NULL;
}

/* Where first ends at second's start, both read the frames before it. */
static int boundary(const QmPartial *first, const QmPartial *second, char *what, size_t len)
{
    const uint64_t b = second->start;
    if (first->start + first->frames != b)
        return 0;
    for (uint64_t f = b > QM_CHUNK_CONTEXT ? b - QM_CHUNK_CONTEXT : 0; f < b; f++) {
        const QmPartial *lack = !find_hash(first, f) ? first : !find_hash(second, f) ? second : NULL;
        if (lack) {
            snprintf(what, len, "frame_hashes: frame %" PRIu64 ", read by both parts, has no "
                     "hash in %s", f, lack->path);
            return -1;
        }
    }
    return 0;
}

int qm_partial_compare_frames(const QmPartial *b, const QmPartial *a, char *what, size_t len)
{
    for (unsigned i = 0; i < b->n_hashes; i++) {
        const QmPartialHash *x = &b->hashes[i], *y = find_hash(a, x->frame);
        for (int s = 0; y && s < 2; s++) {
            if (x->hash[s] != y->hash[s]) {
                snprintf(what, len, "frame_hashes: frame %" PRIu64 " of the %s input: "
                         "%016" PRIx64 " against %016" PRIx64, x->frame,
                         s ? "distorted" : "reference", x->hash[s], y->hash[s]);
                return -1;
            }
        }
    }
    return boundary(a, b, what, len) || boundary(b, a, what, len) ? -1 : 0;
}
