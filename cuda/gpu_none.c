/* gst-qmetric: the CUDA backend's entry points when it is not built. */
#include <stdlib.h>
#include <string.h>

#include "qm_cuda.h"

bool qm_gpu_built(void) { return false; }

int qm_gpu_open(QmGpu **out, const QmGpuSetup *s, char **err)
{
    (void)s;
    *out = NULL;
    if (err)
        *err = strdup("this build has no CUDA backend (meson -Dcuda=enabled)");
    return QM_EDEVICE;
}

const char *qm_gpu_device_name(const QmGpu *g) { (void)g; return ""; }
const char *qm_gpu_error(const QmGpu *g) { (void)g; return NULL; }
int qm_gpu_submit(QmGpu *g, unsigned slot, const QmPicture *r, const QmPicture *d,
                  uint64_t i, uint32_t m)
{ (void)g; (void)slot; (void)r; (void)d; (void)i; (void)m; return QM_EDEVICE; }
int qm_gpu_poll(QmGpu *g, unsigned slot, bool b) { (void)g; (void)slot; (void)b; return QM_EDEVICE; }
int qm_gpu_collect(QmGpu *g, unsigned s, uint64_t i, double *r, uint8_t *t)
{ (void)g; (void)s; (void)i; (void)r; (void)t; return QM_EDEVICE; }
void qm_gpu_close(QmGpu **g) { *g = NULL; }
