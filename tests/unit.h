/* gst-qmetric: the checks of the plain C unit tests (model_test,
 * motion_test, plot_test, ...): CHECK counts a failed condition in
 * `failures`, reports it (file:line and a printf-style message) and goes
 * on; unit_slurp() reads back a file a test wrote. */
#ifndef QM_TESTS_UNIT_H
#define QM_TESTS_UNIT_H

#include <stdio.h>
#include <stdlib.h>

/* where failed checks are reported */
#ifndef QM_CHECK_OUT
#define QM_CHECK_OUT stdout
#endif

static int failures;

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            failures++;                                                       \
            fprintf(QM_CHECK_OUT, "FAIL %s:%d: ", __FILE__, __LINE__);        \
            fprintf(QM_CHECK_OUT, __VA_ARGS__);                               \
            fputc('\n', QM_CHECK_OUT);                                        \
        }                                                                     \
    } while (0)

/* The first 64 KiB of a file as a string (empty when it cannot be read);
 * the caller frees it. */
static inline char *unit_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *s = calloc(1, 1 << 16);
    if (f && s)
        s[fread(s, 1, (1 << 16) - 1, f)] = 0;
    if (f)
        fclose(f);
    return s;
}

#endif /* QM_TESTS_UNIT_H */
