/* A host emulation of the CUDA subset the kernels use, to run them without a
 * GPU: every thread of a block is a fiber (ucontext), blocks run one after
 * the other, __syncthreads/__syncwarp and warp collectives are barriers
 * among the live fibers of the block/warp (deadlocks and collectives with
 * missing or mismatched lanes are reported), device memory is host memory
 * (so AddressSanitizer checks every access).  Launches `k<<<g, b, s, st>>>(a)`
 * must be rewritten `(emu_cfg(g, b, s, st), k)(a)` (rewrite.py). */
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <tuple>
#include <vector>
#include <ucontext.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __restrict__ __restrict
#define __grid_constant__

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct uint3 { unsigned x, y, z; };
struct float4 { float x, y, z, w; };
static inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }

#include "cuda_runtime_api.h"
template <typename T> static inline cudaError_t cudaMalloc(T **p, size_t n)
{ return cudaMalloc((void **)p, n); }
template <typename T> static inline cudaError_t cudaMallocHost(T **p, size_t n)
{ return cudaMallocHost((void **)p, n); }

extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;

/* ---- scheduler ---- */
struct EmuBarrier {
    int arrived = 0;
    long gen = 0;
    int live = 0;
    /* __syncthreads_count: the count of generation gen is in slot gen & 1
     * (a fiber released first may start the next one before the others
     * have read theirs) */
    long count_gen[2] = { -1, -1 };
    int count[2] = { 0, 0 };
};
struct EmuWarp {
    EmuBarrier bar;
    uint64_t buf[32];
    int kind[32];
};
void emu_yield_wait(EmuBarrier *b, long gen);
void emu_barrier(EmuBarrier *b);
int emu_cur_lane(void);
EmuWarp *emu_cur_warp(void);
EmuBarrier *emu_block_barrier(void);
void emu_run(dim3 grid, dim3 block, const std::function<void()> &body);

/* the work recorded by a stream capture (cudaStreamBeginCapture), or NULL */
std::vector<std::function<void()>> *emu_capture(cudaStream_t s);
struct EmuCfg { dim3 g, b; cudaStream_t st; };
static inline EmuCfg emu_cfg(dim3 g, dim3 b, size_t = 0, cudaStream_t st = 0) { return {g, b, st}; }
template <typename... P> struct EmuLaunch {
    EmuCfg c;
    void (*k)(P...);
    template <typename... A> void operator()(A &&...a)
    {
        std::tuple<P...> args(std::forward<A>(a)...);
        if (auto *rec = emu_capture(c.st)) {
            /* the arguments are copied, as a graph's kernel node keeps them */
            const EmuCfg cc = c;
            auto kk = k;
            rec->push_back([cc, kk, args] { emu_run(cc.g, cc.b, [&] { std::apply(kk, args); }); });
            return;
        }
        emu_run(c.g, c.b, [&] { std::apply(k, args); });
    }
};
template <typename... P> EmuLaunch<P...> operator,(EmuCfg c, void (*k)(P...))
{ return EmuLaunch<P...>{c, k}; }

/* ---- intrinsics ---- */
static inline void __syncthreads(void) { emu_barrier(emu_block_barrier()); }
static inline void __threadfence(void) {}
static inline int __syncthreads_count(int p)
{
    EmuBarrier *b = emu_block_barrier();
    const int slot = (int)(b->gen & 1);
    if (b->count_gen[slot] != b->gen) {
        b->count_gen[slot] = b->gen;
        b->count[slot] = 0;
    }
    b->count[slot] += p != 0;
    emu_barrier(b);
    return b->count[slot];
}

#define EMU_FULL 0xffffffffu
static inline void emu_check_mask(unsigned m)
{
    if (m != EMU_FULL) { fprintf(stderr, "emu: partial mask %08x\n", m); emu_errors++; }
}

/* exchange one 64-bit value per lane; f(all) gives each lane its result */
template <typename F> static inline uint64_t emu_xchg(uint64_t v, int kind, F f)
{
    EmuWarp *w = emu_cur_warp();
    const int lane = emu_cur_lane();
    w->buf[lane] = v;
    w->kind[lane] = kind;
    if (w->bar.live != 32) {
        fprintf(stderr, "emu: collective with %d live lanes\n", w->bar.live);
        emu_errors++;
    }
    emu_barrier(&w->bar);
    for (int l = 0; l < 32; l++)
        if (w->kind[l] != kind) {
            fprintf(stderr, "emu: lanes in different collectives (%d vs %d)\n", w->kind[l], kind);
            emu_errors++;
            break;
        }
    const uint64_t r = f(w->buf, lane);
    emu_barrier(&w->bar);
    return r;
}

static inline void __syncwarp(unsigned m = EMU_FULL)
{
    emu_check_mask(m);
    emu_xchg(0, 1, [](const uint64_t *, int) { return (uint64_t)0; });
}
static inline unsigned __ballot_sync(unsigned m, int p)
{
    emu_check_mask(m);
    return (unsigned)emu_xchg(p != 0, 2, [](const uint64_t *b, int) {
        uint64_t r = 0;
        for (int l = 0; l < 32; l++) r |= (b[l] ? 1ull : 0ull) << l;
        return r;
    });
}
static inline int __any_sync(unsigned m, int p)
{
    return __ballot_sync(m, p) != 0;
}
static inline unsigned __match_any_sync(unsigned m, unsigned v)
{
    emu_check_mask(m);
    return (unsigned)emu_xchg(v, 3, [](const uint64_t *b, int lane) {
        uint64_t r = 0;
        for (int l = 0; l < 32; l++) r |= (b[l] == b[lane] ? 1ull : 0ull) << l;
        return r;
    });
}
template <typename T> static inline uint64_t emu_bits(T v)
{ uint64_t u = 0; memcpy(&u, &v, sizeof(T)); return u; }
template <typename T> static inline T emu_from(uint64_t u)
{ T v; memcpy(&v, &u, sizeof(T)); return v; }
template <typename T> static inline T __shfl_sync(unsigned m, T v, int src)
{
    emu_check_mask(m);
    return emu_from<T>(emu_xchg(emu_bits(v), 4, [src](const uint64_t *b, int) { return b[src & 31]; }));
}
template <typename T> static inline T __shfl_down_sync(unsigned m, T v, unsigned d)
{
    emu_check_mask(m);
    return emu_from<T>(emu_xchg(emu_bits(v), 5, [d](const uint64_t *b, int lane) {
        return lane + d < 32 ? b[lane + d] : b[lane];
    }));
}
template <typename T> static inline T __shfl_up_sync(unsigned m, T v, unsigned d)
{
    emu_check_mask(m);
    return emu_from<T>(emu_xchg(emu_bits(v), 6, [d](const uint64_t *b, int lane) {
        return (unsigned)lane >= d ? b[lane - d] : b[lane];
    }));
}
template <typename T> static inline T __shfl_xor_sync(unsigned m, T v, int x)
{
    emu_check_mask(m);
    return emu_from<T>(emu_xchg(emu_bits(v), 7, [x](const uint64_t *b, int lane) {
        return b[(lane ^ x) & 31];
    }));
}

template <typename T> static inline T __ldg(const T *p) { return *p; }
template <typename T> static inline T __ldcg(const T *p) { return *p; }
static inline unsigned atomicAdd(unsigned *p, unsigned v) { unsigned o = *p; *p = o + v; return o; }
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{ unsigned long long o = *p; *p = o + v; return o; }
static inline unsigned atomicOr(unsigned *p, unsigned v) { unsigned o = *p; *p = o | v; return o; }
static inline unsigned atomicMax(unsigned *p, unsigned v) { unsigned o = *p; *p = o > v ? o : v; return o; }
static inline int atomicMax(int *p, int v) { int o = *p; *p = o > v ? o : v; return o; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline int min(int a, int b) { return a < b ? a : b; }
static inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
