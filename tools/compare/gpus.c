/* qmetric-compare: --gpus, the CUDA devices a run spreads its qmetric
 * elements over.  A ladder has one element per rendition in one pipeline:
 * rendition i runs on device list[i % n] (the element's cuda-device-id),
 * so one process and one decode of the reference serve every GPU.  A
 * two-input comparison has one element: it runs on the list's first device.
 *
 * The device count comes from the CUDA driver API, loaded at run time
 * (libcuda.so.1 is part of the driver, not of the toolkit), so that this
 * tool needs no CUDA at build time and runs on machines without it. */
#include "compare.h"

#include <dlfcn.h>

/* the driver API's entry points, as cuda.h declares them (CUresult is an
 * int enum, 0 CUDA_SUCCESS) */
typedef int (*CuInitFn)(unsigned int flags);
typedef int (*CuDeviceGetCountFn)(int *count);

int qmc_cuda_device_count(char **why)
{
    static int cached = -2;
    static char *reason;
    void *lib;
    CuInitFn init;
    CuDeviceGetCountFn count;
    int rc, n = 0;

    if (cached != -2) {
        if (why)
            *why = reason;
        return cached;
    }
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        reason = g_strdup_printf("no CUDA driver (%s)", dlerror());
        cached = -1;
    } else {
        /* the library stays loaded: the qmetric element loads it again */
        init = (CuInitFn)dlsym(lib, "cuInit");
        count = (CuDeviceGetCountFn)dlsym(lib, "cuDeviceGetCount");
        if (!init || !count) {
            reason = g_strdup("libcuda.so.1 lacks cuInit/cuDeviceGetCount");
            cached = -1;
        } else if ((rc = init(0)) != 0) {
            /* 100 is CUDA_ERROR_NO_DEVICE: a driver and no device */
            reason = rc == 100 ? g_strdup("the CUDA driver sees no device") :
                     g_strdup_printf("cuInit failed (CUresult %d)", rc);
            cached = rc == 100 ? 0 : -1;
        } else if ((rc = count(&n)) != 0) {
            reason = g_strdup_printf("cuDeviceGetCount failed (CUresult %d)", rc);
            cached = -1;
        } else {
            cached = n;
        }
    }
    if (why)
        *why = reason;
    return cached;
}

void qmc_resolve_gpus(App *app)
{
    Options *o = &app->o;
    char *why = NULL;
    int n;

    app->gpus = g_array_new(FALSE, FALSE, sizeof(int));
    if (!o->gpus_spec)
        return;
    n = qmc_cuda_device_count(&why);
    if (o->gpus_all) {
        for (int i = 0; i < n; i++)
            g_array_append_val(app->gpus, i);
        if (n <= 0 && !o->quiet)
            fprintf(stderr, "qmetric-compare: --gpus all: no CUDA device here: %s; running "
                    "with --backend %s\n", why, o->backend ? o->backend : "auto");
        return;
    }
    if (o->gpus_count) {
        if (n >= 0 && o->gpus_count > n)
            qmc_usage_error("--gpus %d: this machine has %d CUDA device%s", o->gpus_count, n,
                            n == 1 ? "" : "s");
        for (int i = 0; i < o->gpus_count; i++)
            g_array_append_val(app->gpus, i);
    } else {
        for (guint i = 0; i < o->gpus_list->len; i++) {
            int id = g_array_index(o->gpus_list, int, i);
            if (n >= 0 && id >= n)
                qmc_usage_error("--gpus %s: there is no CUDA device %d (this machine has %d)",
                                o->gpus_spec, id, n);
            g_array_append_val(app->gpus, id);
        }
    }
    if (n < 0 && !o->quiet)
        fprintf(stderr, "qmetric-compare: warning: --gpus %s: the device ids cannot be checked: "
                "%s\n", o->gpus_spec, why);
}

int qmc_gpu_for(App *app, guint i)
{
    if (!app->gpus || !app->gpus->len)
        return -1;
    return g_array_index(app->gpus, int, i % app->gpus->len);
}

/* --dry-run: where the i-th qmetric element runs (the rest of the line) */
void qmc_print_device(App *app, guint i)
{
    int dev = app->gpus->len ? qmc_gpu_for(app, i) : app->o.cuda_device_id;
    if (dev >= 0)
        printf("CUDA device %d\n", dev);
    else
        printf("backend %s, the element's default device\n",
               app->o.backend ? app->o.backend : "auto");
}
