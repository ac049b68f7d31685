#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include "cuda_runtime_api.h"

/* Registered host ranges [first, second), as the driver keeps them: a range
 * overlapping one is refused, unregister takes a range's start.
 * EMU_HOST_REGISTER=refuse makes every registration fail (as a file system
 * that refuses long-term pins of its pages does). */
static std::map<uintptr_t, uintptr_t> emu_ranges;
static std::mutex emu_ranges_lock;

static bool emu_in_range(const void *p, size_t n)
{
    const uintptr_t lo = (uintptr_t)p, hi = lo + n;
    std::lock_guard<std::mutex> l(emu_ranges_lock);
    auto it = emu_ranges.upper_bound(lo);
    if (it == emu_ranges.begin())
        return false;
    --it;
    return lo >= it->first && hi <= it->second;
}

static bool emu_env(const char *v)
{
    const char *e = getenv("EMU_HOST_REGISTER");
    return e && !strcmp(e, v);
}

extern "C" {
int emu_sms = 132;
long emu_errors;
long emu_host_registers, emu_host_registered, emu_host_direct_copies;
cudaError_t cudaMalloc(void **p, size_t n) { *p = malloc(n ? n : 1); memset(*p, 0xCD, n); return cudaSuccess; }
cudaError_t cudaMallocHost(void **p, size_t n) { *p = malloc(n ? n : 1); memset(*p, 0xCD, n); return cudaSuccess; }
cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
cudaError_t cudaFreeHost(void *p) { free(p); return cudaSuccess; }
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind, cudaStream_t) { memmove(d, s, n); return cudaSuccess; }
cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind) { memmove(d, s, n); return cudaSuccess; }
cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t) { memset(d, v, n); return cudaSuccess; }
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }
cudaError_t cudaSetDevice(int) { return cudaSuccess; }
cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int)
{
    switch (a) {
    case cudaDevAttrMultiProcessorCount: *v = emu_sms; break;
    case cudaDevAttrHostRegisterSupported: *v = 1; break;
    case cudaDevAttrHostRegisterReadOnlySupported: *v = 1; break;
    default: return cudaErrorInvalidValue;
    }
    return cudaSuccess;
}
/* the copy runs at once (streams are synchronous here); a host source must
 * be whole rows of memory the caller can read, which ASan checks */
cudaError_t cudaMemcpy2DAsync(void *d, size_t dpitch, const void *s, size_t spitch, size_t w,
                              size_t h, cudaMemcpyKind k, cudaStream_t)
{
    if (w > dpitch || w > spitch)
        return cudaErrorInvalidValue;
    if (k == cudaMemcpyHostToDevice && h && emu_in_range(s, spitch * (h - 1) + w))
        emu_host_direct_copies++;
    for (size_t y = 0; y < h; y++)
        memmove((char *)d + y * dpitch, (const char *)s + y * spitch, w);
    return cudaSuccess;
}
cudaError_t cudaHostRegister(void *p, size_t n, unsigned flags)
{
    if (!p || !n)
        return cudaErrorInvalidValue;
    if (emu_env("refuse"))
        return cudaErrorNotSupported;
    const uintptr_t lo = (uintptr_t)p, hi = lo + n;
    std::lock_guard<std::mutex> l(emu_ranges_lock);
    for (auto &r : emu_ranges)
        if (lo < r.second && r.first < hi)
            return cudaErrorHostMemoryAlreadyRegistered;
    emu_ranges[lo] = hi;
    emu_host_registers++;
    emu_host_registered++;
    return cudaSuccess;
}
cudaError_t cudaHostUnregister(void *p)
{
    std::lock_guard<std::mutex> l(emu_ranges_lock);
    if (!emu_ranges.erase((uintptr_t)p))
        return cudaErrorHostMemoryNotRegistered;
    emu_host_registered--;
    return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int) { memset(p, 0, sizeof(*p)); strcpy(p->name, "emulator"); p->major = 9; p->multiProcessorCount = emu_sms; return cudaSuccess; }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned) { *s = (cudaStream_t)malloc(1); return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
cudaError_t cudaStreamDestroy(cudaStream_t s) { free(s); return cudaSuccess; }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) { *e = (cudaEvent_t)malloc(1); return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
/* streams run synchronously here: every wait is already satisfied */
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) { return cudaSuccess; }
cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventDestroy(cudaEvent_t e) { free(e); return cudaSuccess; }
const char *cudaGetErrorName(cudaError_t) { return "emuError"; }
const char *cudaGetErrorString(cudaError_t) { return "emulated error"; }
cudaError_t cudaGetDriverEntryPointByVersion(const char *, void **fn, unsigned, unsigned long long, cudaDriverEntryPointQueryResult *) { *fn = nullptr; return cudaErrorInvalidValue; }
}
