/* qmetric-bench-probes: GPU use from NVML, loaded at run time (the driver
 * ships libnvidia-ml.so.1; nothing to link, no header).  The few entry
 * points and structs used are NVML's stable C ABI (nvml.h): every call
 * returns 0 on success, a device is an opaque pointer, utilisation is two
 * unsigned ints (gpu, memory), memory info three unsigned long longs
 * (total, free, used) in bytes. */
#include <dlfcn.h>
#include <string.h>

#include "probes.h"

typedef void *NvDev;
typedef struct { unsigned int gpu, memory; } NvUtil;
typedef struct { unsigned long long total, free, used; } NvMem;

struct PbGpuSampler {
    void *lib;
    NvDev dev;
    int (*shutdown)(void);
    int (*util)(NvDev, NvUtil *);
    int (*mem)(NvDev, NvMem *);
    int (*dec)(NvDev, unsigned int *, unsigned int *);
    int period_ms;
    GThread *thread;
    gint stop;
    PbGpuStats st;
    double util_sum, dec_sum;
};

static gpointer sample_loop(gpointer data)
{
    PbGpuSampler *s = data;
    while (!g_atomic_int_get(&s->stop)) {
        NvUtil u;
        NvMem m;
        unsigned int dec = 0, per = 0;
        if (s->util(s->dev, &u) == 0) {
            s->st.samples++;
            s->util_sum += u.gpu;
            s->st.util_max = MAX(s->st.util_max, u.gpu);
            if (s->dec && s->dec(s->dev, &dec, &per) == 0) {
                s->dec_sum += dec;
                s->st.dec_max = MAX(s->st.dec_max, dec);
            }
        }
        if (s->mem(s->dev, &m) == 0) {
            s->st.mem_used_max_mib = MAX(s->st.mem_used_max_mib, m.used / 1048576.0);
            s->st.mem_total_mib = m.total / 1048576.0;
        }
        g_usleep((gulong)s->period_ms * 1000);
    }
    return NULL;
}

PbGpuSampler *pb_gpu_start(int device, int period_ms)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return NULL;
    PbGpuSampler *s = g_new0(PbGpuSampler, 1);
    int (*init)(void) = (int (*)(void))dlsym(lib, "nvmlInit_v2");
    int (*handle)(unsigned int, NvDev *) =
        (int (*)(unsigned int, NvDev *))dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
    int (*name)(NvDev, char *, unsigned int) =
        (int (*)(NvDev, char *, unsigned int))dlsym(lib, "nvmlDeviceGetName");
    s->lib = lib;
    s->shutdown = (int (*)(void))dlsym(lib, "nvmlShutdown");
    s->util = (int (*)(NvDev, NvUtil *))dlsym(lib, "nvmlDeviceGetUtilizationRates");
    s->mem = (int (*)(NvDev, NvMem *))dlsym(lib, "nvmlDeviceGetMemoryInfo");
    s->dec = (int (*)(NvDev, unsigned int *, unsigned int *))
                 dlsym(lib, "nvmlDeviceGetDecoderUtilization");
    if (!init || !handle || !s->shutdown || !s->util || !s->mem || init() != 0) {
        dlclose(lib);
        g_free(s);
        return NULL;
    }
    if (handle((unsigned int)device, &s->dev) != 0) {
        s->shutdown();
        dlclose(lib);
        g_free(s);
        return NULL;
    }
    if (name)
        name(s->dev, s->st.name, sizeof(s->st.name));
    s->period_ms = period_ms;
    s->thread = g_thread_new("pb-nvml", sample_loop, s);
    return s;
}

void pb_gpu_stop(PbGpuSampler *s, PbGpuStats *out)
{
    memset(out, 0, sizeof(*out));
    if (!s)
        return;
    g_atomic_int_set(&s->stop, 1);
    g_thread_join(s->thread);
    *out = s->st;
    out->valid = s->st.samples > 0;
    if (out->valid) {
        out->util_mean = s->util_sum / s->st.samples;
        out->dec_mean = s->dec_sum / s->st.samples;
    }
    s->shutdown();
    dlclose(s->lib);
    g_free(s);
}
