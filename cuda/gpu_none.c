/* gst-qmetric: a build without the CUDA backend registers none. */
#include "backend.h"

const QmBackendOps *qm_backend_cuda(void)
{
    return NULL;
}
