/* gst-qmetric: the checks of the plain C unit tests (model_test,
 * motion_test, plot_test): CHECK counts a failed condition in `failures`,
 * reports it (file:line and a printf-style message) and goes on. */
#ifndef QM_TESTS_UNIT_H
#define QM_TESTS_UNIT_H

#include <stdio.h>

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

#endif /* QM_TESTS_UNIT_H */
