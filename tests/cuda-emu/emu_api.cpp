#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>
#include "cuda_runtime_api.h"

/* One capture at a time (the twins capture on one thread, one stream). */
typedef std::vector<std::function<void()>> EmuWork;
static cudaStream_t capturing;
static EmuWork *recorded;
EmuWork *emu_capture(cudaStream_t s)
{
    return recorded && s == capturing ? recorded : nullptr;
}
extern "C" {
int emu_sms = 132;
long emu_errors;
cudaError_t cudaMalloc(void **p, size_t n) { *p = malloc(n ? n : 1); memset(*p, 0xCD, n); return cudaSuccess; }
cudaError_t cudaMallocHost(void **p, size_t n) { *p = malloc(n ? n : 1); memset(*p, 0xCD, n); return cudaSuccess; }
cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
cudaError_t cudaFreeHost(void *p) { free(p); return cudaSuccess; }
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind, cudaStream_t st)
{
    if (EmuWork *w = emu_capture(st))
        w->push_back([d, s, n] { memmove(d, s, n); });
    else
        memmove(d, s, n);
    return cudaSuccess;
}
cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind) { memmove(d, s, n); return cudaSuccess; }
cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t st)
{
    if (EmuWork *w = emu_capture(st))
        w->push_back([d, v, n] { memset(d, v, n); });
    else
        memset(d, v, n);
    return cudaSuccess;
}
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaGetDevice(int *d) { *d = 0; return cudaSuccess; }
cudaError_t cudaSetDevice(int) { return cudaSuccess; }
cudaError_t cudaGetDeviceCount(int *n) { *n = 1; return cudaSuccess; }
cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr, int) { *v = emu_sms; return cudaSuccess; }
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
/* the emulator runs a stream's work at launch: no time passes between events */
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t, cudaEvent_t) { *ms = 0; return cudaSuccess; }
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode)
{
    if (recorded)
        return cudaErrorInvalidValue;
    capturing = s;
    recorded = new EmuWork;
    return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
    if (!recorded || s != capturing)
        return cudaErrorInvalidValue;
    *g = (cudaGraph_t)recorded;
    recorded = nullptr;
    capturing = nullptr;
    return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long)
{
    *e = (cudaGraphExec_t) new EmuWork(*(EmuWork *)g);
    return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s)
{
    if (EmuWork *w = emu_capture(s)) {
        w->push_back([e] { for (auto &f : *(EmuWork *)e) f(); });
        return cudaSuccess;
    }
    for (auto &f : *(EmuWork *)e)
        f();
    return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t g) { delete (EmuWork *)g; return cudaSuccess; }
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) { delete (EmuWork *)e; return cudaSuccess; }
const char *cudaGetErrorName(cudaError_t) { return "emuError"; }
const char *cudaGetErrorString(cudaError_t) { return "emulated error"; }
cudaError_t cudaGetDriverEntryPointByVersion(const char *, void **fn, unsigned, unsigned long long, cudaDriverEntryPointQueryResult *) { *fn = nullptr; return cudaErrorInvalidValue; }
}
