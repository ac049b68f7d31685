/* Placeholder while model.c is not built: every model load fails cleanly. */
#include <stdlib.h>
#include <string.h>

#include "model.h"

int qm_model_load(QmModel **out, const char *name_or_path,
                  const char *search_path, char **err)
{
    (void)name_or_path;
    (void)search_path;
    *out = NULL;
    if (err)
        *err = strdup("VMAF models are not supported by this build");
    return QM_EMODEL;
}
const char *qm_model_name(const QmModel *m) { (void)m; return ""; }
unsigned qm_model_n_inputs(const QmModel *m) { (void)m; return 0; }
const QmModelInput *qm_model_input(const QmModel *m, unsigned i) { (void)m; (void)i; return NULL; }
double qm_model_predict(const QmModel *m, const double *in, bool a, bool b)
{ (void)m; (void)in; (void)a; (void)b; return 0; }
void qm_model_free(QmModel **m) { *m = NULL; }
