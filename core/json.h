/* gst-qmetric: a small JSON reader (RFC 8259) for model files, golden data
 * and tests.  Builds an immutable tree; no dependency beyond libc. */
#ifndef QM_JSON_H
#define QM_JSON_H

#include <stddef.h>

typedef enum QmJsonType {
    QM_JSON_NULL, QM_JSON_BOOL, QM_JSON_NUMBER, QM_JSON_STRING,
    QM_JSON_ARRAY, QM_JSON_OBJECT,
} QmJsonType;

typedef struct QmJson QmJson;
struct QmJson {
    QmJsonType type;
    double num;        /* NUMBER, and BOOL as 0/1 */
    char *str;         /* STRING value (NUL-terminated, unescaped) */
    char *key;         /* member name when inside an OBJECT */
    QmJson **items;    /* ARRAY elements / OBJECT members */
    size_t n;
};

/** Parse text of length len; NULL on error with a message in err (if given,
 *  at least 128 bytes) naming the line of the problem.  An object that
 *  names a member twice is an error (RFC 8259 leaves its meaning open). */
QmJson *qm_json_parse(const char *text, size_t len, char *err, size_t errlen);
/* Largest file qm_json_load() reads: model files are about 100 KB; a
 * larger one is a mistake (or /dev/zero) and is refused before reading. */
#define QM_JSON_MAX_FILE (64u << 20)

/** Read and parse a file: a regular file of at most QM_JSON_MAX_FILE bytes
 *  (a directory, fifo or device is refused without blocking). */
QmJson *qm_json_load(const char *path, char *err, size_t errlen);
/** The bytes qm_json_load() parses (same checks, same messages): a
 *  malloc'd buffer of *len bytes (not NUL-terminated), or NULL. */
char *qm_json_read_file(const char *path, size_t *len, char *err, size_t errlen);
void qm_json_free(QmJson *j);

/** Member of an object by name, or NULL. */
const QmJson *qm_json_get(const QmJson *obj, const char *key);
/** Element i of an array (or member i of an object), or NULL. */
const QmJson *qm_json_at(const QmJson *arr, size_t i);
/** Number value of member key, or def when absent / not a number. */
double qm_json_num(const QmJson *obj, const char *key, double def);
/** String value of member key, or NULL. */
const char *qm_json_str(const QmJson *obj, const char *key);

#endif /* QM_JSON_H */
