#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>
#include "cuda_runtime_api.h"

/* One capture at a time, on one thread: the stream it began on and the
 * streams forked from it (a cudaStreamWaitEvent on an event recorded in the
 * capture, as CUDA's graphs fork) record into one list of work, in the
 * order it is issued.  Each branch is issued after what it waits for, so
 * running the list in order respects every edge of the graph. */
typedef std::vector<std::function<void()>> EmuWork;
static std::vector<cudaStream_t> capturing;   /* [0]: where it began */
static std::vector<cudaEvent_t> captured_events;
static EmuWork *recorded;
EmuWork *emu_capture(cudaStream_t s)
{
    if (recorded)
        for (cudaStream_t c : capturing)
            if (c == s)
                return recorded;
    return nullptr;
}
static bool emu_event_captured(cudaEvent_t e)
{
    for (cudaEvent_t c : captured_events)
        if (c == e)
            return true;
    return false;
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
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    if (emu_capture(s))
        captured_events.push_back(e);
    return cudaSuccess;
}
/* streams run synchronously here: every wait is already satisfied; one on
 * an event of the capture brings the stream into it */
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned)
{
    if (recorded && !emu_capture(s) && emu_event_captured(e))
        capturing.push_back(s);
    return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventDestroy(cudaEvent_t e) { free(e); return cudaSuccess; }
/* the emulator runs a stream's work at launch: no time passes between events */
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t, cudaEvent_t) { *ms = 0; return cudaSuccess; }
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode)
{
    if (recorded)
        return cudaErrorInvalidValue;
    capturing.assign(1, s);
    captured_events.clear();
    recorded = new EmuWork;
    return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
    if (!recorded || s != capturing[0])
        return cudaErrorInvalidValue;
    *g = (cudaGraph_t)recorded;
    recorded = nullptr;
    capturing.clear();
    captured_events.clear();
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
