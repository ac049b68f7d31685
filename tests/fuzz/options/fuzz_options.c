/* gst-qmetric: libFuzzer harness of the option parsers: the "model" list
 * (qm_model_list_parse), and the engine's setup from a metric list, a model
 * list and a picture size (qm_engine_open: metric names, model loading,
 * model inputs and their options).  Input: byte 0 and 1 give width and
 * height (1..64), byte 2 the depth and chroma, then "metrics\nmodels".
 * Every failure must come with a message; never a crash or a leak.
 *
 * '/' in the model list is replaced: the harness loads built-in names and
 * relative .json names only, never an arbitrary path of this machine (the
 * refusal of paths that are not regular files has its own unit test). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "qm.h"

#ifndef QM_FUZZ_MODELS
#define QM_FUZZ_MODELS "data/models"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(void *opaque, int level, const char *msg)
{
    (void)opaque, (void)level, (void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3 || size > 4096)
        return 0;
    int w = 1 + data[0] % 64, h = 1 + data[1] % 64;
    static const int depths[] = { 8, 10, 12, 16 };
    int bpc = depths[data[2] & 3];
    QmChroma chroma = (QmChroma)((data[2] >> 2) & 3);
    char *text = malloc(size - 3 + 1);
    if (!text)
        return 0;
    memcpy(text, data + 3, size - 3);
    text[size - 3] = 0;
    char *models = strchr(text, '\n');
    if (models)
        *models++ = 0;
    for (char *p = models; p && *p; p++)
        if (*p == '/')
            *p = '_';

    char **names = NULL, *err = NULL;
    if (models) {
        int r = qm_model_list_parse(models, &names, &err);
        if (r && !err)
            abort();
        qm_model_list_free(names);
        free(err);
        err = NULL;
    }

    QmSettings s;
    qm_settings_default(&s, w, h, bpc, chroma);
    s.metrics = text;
    s.models = models;
    s.model_path = QM_FUZZ_MODELS;
    s.n_threads = 1;
    s.backend = QM_BACKEND_CPU;
    s.log = quiet;
    QmEngine *e = NULL;
    int r = qm_engine_open(&e, &s, &err);
    if (r && !err) {
        fprintf(stderr, "qm_engine_open: %d without a message\n", r);
        abort();
    }
    free(err);
    qm_engine_close(&e);
    free(text);
    return 0;
}
