/* gst-qmetric: a small recursive-descent JSON reader. */
#include "json.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DEPTH 64

typedef struct Parser {
    const char *p, *end, *start;
    char *err;
    size_t errlen;
} Parser;

static void fail(Parser *ps, const char *what)
{
    if (!ps->err || !ps->errlen || ps->err[0])
        return;
    int line = 1;
    for (const char *c = ps->start; c < ps->p && c < ps->end; c++)
        line += *c == '\n';
    snprintf(ps->err, ps->errlen, "%s at line %d", what, line);
}

static void skip_ws(Parser *ps)
{
    while (ps->p < ps->end &&
           (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static QmJson *new_node(QmJsonType t)
{
    QmJson *j = calloc(1, sizeof(*j));
    if (j)
        j->type = t;
    return j;
}

static int push(QmJson *parent, QmJson *child)
{
    if ((parent->n & (parent->n - 1)) == 0) {  /* grow at powers of two */
        size_t cap = parent->n ? parent->n * 2 : 4;
        QmJson **it = realloc(parent->items, cap * sizeof(*it));
        if (!it)
            return -1;
        parent->items = it;
    }
    parent->items[parent->n++] = child;
    return 0;
}

static void put_utf8(char **o, unsigned cp)
{
    if (cp < 0x80) {
        *(*o)++ = (char)cp;
    } else if (cp < 0x800) {
        *(*o)++ = (char)(0xC0 | (cp >> 6));
        *(*o)++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *(*o)++ = (char)(0xE0 | (cp >> 12));
        *(*o)++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *(*o)++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *(*o)++ = (char)(0xF0 | (cp >> 18));
        *(*o)++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *(*o)++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *(*o)++ = (char)(0x80 | (cp & 0x3F));
    }
}

static int hex4(const char *s, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        *v <<= 4;
        if (c >= '0' && c <= '9') *v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') *v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') *v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    return 0;
}

static char *parse_string(Parser *ps)
{
    /* ps->p is at the opening quote; output is never longer than input */
    const char *s = ++ps->p;
    while (s < ps->end && *s != '"') {
        if (*s == '\\')
            s++;
        s++;
    }
    if (s >= ps->end) {
        fail(ps, "unterminated string");
        return NULL;
    }
    char *out = malloc((size_t)(s - ps->p) + 1), *o = out;
    if (!out)
        return NULL;
    while (ps->p < s) {
        char c = *ps->p++;
        if ((unsigned char)c < 0x20) {
            fail(ps, "control character in string");
            free(out);
            return NULL;
        }
        if (c != '\\') {
            *o++ = c;
            continue;
        }
        c = *ps->p++;
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (s - ps->p < 4 || hex4(ps->p, &cp)) {
                fail(ps, "bad \\u escape");
                free(out);
                return NULL;
            }
            ps->p += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && s - ps->p >= 6 &&
                ps->p[0] == '\\' && ps->p[1] == 'u' && !hex4(ps->p + 2, &lo) &&
                lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                ps->p += 6;
            }
            put_utf8(&o, cp);  /* 6 input bytes always cover <= 4 output */
            break;
        }
        default:
            fail(ps, "bad escape in string");
            free(out);
            return NULL;
        }
    }
    *o = 0;
    ps->p = s + 1;
    return out;
}

static QmJson *parse_value(Parser *ps, int depth);

static int by_key(const void *a, const void *b)
{
    return strcmp((*(QmJson *const *)a)->key, (*(QmJson *const *)b)->key);
}

/* RFC 8259 section 4: names SHOULD be unique, and readers differ on which
 * of two equal names counts; a file that names a member twice is refused,
 * so that no reader of ours takes a value the writer did not mean.  The
 * name given twice, or NULL; *oom when the check could not be made. */
static const char *duplicate_key(const QmJson *obj, int *oom)
{
    *oom = 0;
    if (obj->n < 2)
        return NULL;
    QmJson **s = malloc(obj->n * sizeof(*s));
    if (!s) {
        *oom = 1;
        return NULL;
    }
    memcpy(s, obj->items, obj->n * sizeof(*s));
    qsort(s, obj->n, sizeof(*s), by_key);  /* n log n: an object may be large */
    const char *dup = NULL;
    for (size_t i = 1; i < obj->n && !dup; i++)
        if (!strcmp(s[i - 1]->key, s[i]->key))
            dup = s[i]->key;
    free(s);
    return dup;
}

/* At the end of an object: 0, or -1 after fail(). */
static int check_unique(Parser *ps, const QmJson *obj)
{
    int oom;
    const char *dup = duplicate_key(obj, &oom);
    if (!dup && !oom)
        return 0;
    char what[128];
    if (dup)
        snprintf(what, sizeof(what), "member name \"%.60s\" given twice in one object", dup);
    fail(ps, dup ? what : "out of memory");
    return -1;
}

static QmJson *parse_container(Parser *ps, int depth, int is_obj)
{
    QmJson *j = new_node(is_obj ? QM_JSON_OBJECT : QM_JSON_ARRAY);
    if (!j)
        return NULL;
    const char close = is_obj ? '}' : ']';
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return j;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (is_obj) {
            if (ps->p >= ps->end || *ps->p != '"') {
                fail(ps, "expected a member name");
                goto err;
            }
            if (!(key = parse_string(ps)))
                goto err;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                free(key);
                fail(ps, "expected ':'");
                goto err;
            }
            ps->p++;
        }
        QmJson *v = parse_value(ps, depth + 1);
        if (!v) {
            free(key);
            goto err;
        }
        v->key = key;
        if (push(j, v)) {
            qm_json_free(v);
            goto err;
        }
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            if (is_obj && check_unique(ps, j))
                goto err;
            return j;
        }
        fail(ps, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
        goto err;
    }
err:
    qm_json_free(j);
    return NULL;
}

static QmJson *parse_value(Parser *ps, int depth)
{
    if (depth > MAX_DEPTH) {
        fail(ps, "nesting too deep");
        return NULL;
    }
    skip_ws(ps);
    if (ps->p >= ps->end) {
        fail(ps, "unexpected end of input");
        return NULL;
    }
    const char c = *ps->p;
    if (c == '{' || c == '[')
        return parse_container(ps, depth, c == '{');
    if (c == '"') {
        char *s = parse_string(ps);
        if (!s)
            return NULL;
        QmJson *j = new_node(QM_JSON_STRING);
        if (!j) {
            free(s);
            return NULL;
        }
        j->str = s;
        return j;
    }
    static const struct { const char *word; QmJsonType t; double v; } words[] = {
        { "true", QM_JSON_BOOL, 1 }, { "false", QM_JSON_BOOL, 0 },
        { "null", QM_JSON_NULL, 0 },
    };
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        size_t l = strlen(words[i].word);
        if ((size_t)(ps->end - ps->p) >= l && !memcmp(ps->p, words[i].word, l)) {
            ps->p += l;
            QmJson *j = new_node(words[i].t);
            if (j)
                j->num = words[i].v;
            return j;
        }
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        char buf[64];
        size_t l = 0;
        while (ps->p + l < ps->end && l < sizeof(buf) - 1 &&
               strchr("+-0123456789.eE", ps->p[l]))
            l++;
        if (l == sizeof(buf) - 1) {
            fail(ps, "number too long (over 62 characters)");
            return NULL;
        }
        memcpy(buf, ps->p, l);
        buf[l] = 0;
        char *e;
        errno = 0;
        double v = strtod(buf, &e);
        if (e == buf || *e) {
            fail(ps, "bad number");
            return NULL;
        }
        /* RFC 8259 section 6 lets a reader limit the range: a number
         * beyond a double (1e999) is an error, not an infinity */
        if (!isfinite(v)) {
            fail(ps, "number out of range");
            return NULL;
        }
        ps->p += l;
        QmJson *j = new_node(QM_JSON_NUMBER);
        if (j)
            j->num = v;
        return j;
    }
    fail(ps, "unexpected character");
    return NULL;
}

QmJson *qm_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
    Parser ps = { text, text + len, text, err, errlen };
    if (err && errlen)
        err[0] = 0;
    QmJson *j = parse_value(&ps, 0);
    if (!j) {
        fail(&ps, "out of memory");
        return NULL;
    }
    skip_ws(&ps);
    if (ps.p != ps.end) {
        fail(&ps, "trailing characters after the JSON value");
        qm_json_free(j);
        return NULL;
    }
    return j;
}

char *qm_json_read_file(const char *path, size_t *len_out, char *err, size_t errlen)
{
    /* O_NONBLOCK: opening a fifo for reading would wait for a writer */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (err)
            snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    const char *why = NULL;
    if (fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (S_ISDIR(st.st_mode))
        why = "a directory, not a regular file";
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file (a device, fifo or socket)";
    else if ((uint64_t)st.st_size > QM_JSON_MAX_FILE)
        why = "larger than 64 MiB (QM_JSON_MAX_FILE)";
    if (why) {
        close(fd);
        if (err)
            snprintf(err, errlen, "%s: %s", path, why);
        return NULL;
    }
    /* one read loop up to the limit: the file may change under us */
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *buf = malloc(cap);
    int rerr = 0;
    while (buf) {
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rerr = errno;
            break;
        }
        if (r == 0)
            break;
        len += (size_t)r;
        if (len == cap) {
            if (cap > QM_JSON_MAX_FILE) {
                rerr = EFBIG;
                break;
            }
            size_t nc = cap * 2 > QM_JSON_MAX_FILE + 1 ? QM_JSON_MAX_FILE + 1 : cap * 2;
            char *nb = realloc(buf, nc);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap = nc;
        }
    }
    close(fd);
    if (!buf || rerr) {
        free(buf);
        if (err)
            snprintf(err, errlen, "cannot read %s: %s", path,
                     rerr == EFBIG ? "larger than 64 MiB (QM_JSON_MAX_FILE)"
                     : rerr ? strerror(rerr) : "out of memory");
        return NULL;
    }
    *len_out = len;
    return buf;
}

QmJson *qm_json_load(const char *path, char *err, size_t errlen)
{
    size_t len;
    char *buf = qm_json_read_file(path, &len, err, errlen);
    if (!buf)
        return NULL;
    char perr[160];
    QmJson *j = qm_json_parse(buf, len, perr, sizeof(perr));
    free(buf);
    if (!j && err)
        snprintf(err, errlen, "%s: %s", path, perr);
    return j;
}

void qm_json_free(QmJson *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->n; i++)
        qm_json_free(j->items[i]);
    free(j->items);
    free(j->str);
    free(j->key);
    free(j);
}

const QmJson *qm_json_get(const QmJson *obj, const char *key)
{
    if (!obj || obj->type != QM_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (!strcmp(obj->items[i]->key, key))
            return obj->items[i];
    return NULL;
}

const QmJson *qm_json_at(const QmJson *arr, size_t i)
{
    if (!arr || (arr->type != QM_JSON_ARRAY && arr->type != QM_JSON_OBJECT) ||
        i >= arr->n)
        return NULL;
    return arr->items[i];
}

double qm_json_num(const QmJson *obj, const char *key, double def)
{
    const QmJson *v = qm_json_get(obj, key);
    return v && v->type == QM_JSON_NUMBER ? v->num : def;
}

const char *qm_json_str(const QmJson *obj, const char *key)
{
    const QmJson *v = qm_json_get(obj, key);
    return v && v->type == QM_JSON_STRING ? v->str : NULL;
}
