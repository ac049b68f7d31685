/* gst-qmetric: libFuzzer harness of the model parser: the JSON reader
 * (core/json.c), the model validation and the embedded libsvm text parser
 * (core/model.c), then a prediction with the model that loaded.  Any input
 * must give a model or QM_EMODEL with a message that is valid UTF-8; never
 * a crash, a leak or undefined behaviour (ASan + UBSan). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p, n = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1
                           : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : 9;
        if (n == 9 || (n == 0 && c < 0x20))
            return 0;
        for (unsigned i = 1; i <= n; i++)
            if ((p[i] & 0xC0) != 0x80)
                return 0;
        p += n + 1;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the JSON reader on its own: it also reads golden data */
    char jerr[256];
    QmJson *j = qm_json_parse((const char *)data, size, jerr, sizeof(jerr));
    qm_json_free(j);

    QmModel *m = NULL;
    char *err = NULL;
    int r = qm_model_parse(&m, "fuzz.json", (const char *)data, size, &err);
    if (r) {
        if (!err || !valid_utf8(err)) {
            fprintf(stderr, "error %d without a valid UTF-8 message\n", r);
            abort();
        }
        free(err);
        return 0;
    }
    double in[16];
    for (unsigned i = 0; i < 16; i++)
        in[i] = 0.25 * i;
    (void)qm_model_predict(m, in, false, false);
    (void)qm_model_predict(m, in, true, true);
    qm_model_free(&m);
    return 0;
}
