/* the fiber scheduler of cuda_runtime.h */
#include <csetjmp>

#include "cuda_runtime.h"

/* Switching fibers: getcontext(), setcontext() and swapcontext() save or
 * restore the signal mask (a system call each), and every barrier and warp
 * collective switches each thread twice.  Without AddressSanitizer each
 * fiber is entered once, ever, with setcontext(), and then runs one thread
 * of every block in a loop (fiber_main()), switched with _setjmp() and
 * _longjmp(), which make no system call: several times faster.  Under ASan
 * a fresh context per thread and swapcontext() stay, which ASan intercepts
 * to follow the stacks. */
#if defined(__SANITIZE_ADDRESS__)
#define EMU_UCONTEXT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMU_UCONTEXT 1
#endif
#endif

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

#define STACK (256 * 1024)

struct Fiber {
    ucontext_t ctx;
    jmp_buf jb;       /* where a suspended fiber resumes (no EMU_UCONTEXT) */
    bool started;
    char *stack;
    uint3 tid;
    int warp;
    bool done;
    EmuBarrier *wait;
    long wait_gen;
};

static std::vector<Fiber> fib;
static std::vector<EmuWarp> warps;
static EmuBarrier block_bar;
static ucontext_t sched;
static jmp_buf sched_jb;
static int cur;
static const std::function<void()> *body;
static long progress;

int emu_cur_lane(void) { return cur & 31; }
EmuWarp *emu_cur_warp(void) { return &warps[fib[cur].warp]; }
EmuBarrier *emu_block_barrier(void) { return &block_bar; }

static void release_if_complete(EmuBarrier *b)
{
    if (b->arrived > 0 && b->arrived >= b->live) {
        b->arrived = 0;
        b->gen++;
        progress++;
    }
}

void emu_barrier(EmuBarrier *b)
{
    const long gen = b->gen;
    b->arrived++;
    if (b->arrived >= b->live) {
        release_if_complete(b);
        return;
    }
    fib[cur].wait = b;
    fib[cur].wait_gen = gen;
#ifdef EMU_UCONTEXT
    swapcontext(&fib[cur].ctx, &sched);
#else
    if (!_setjmp(fib[cur].jb))
        _longjmp(sched_jb, 1);
#endif
    fib[cur].wait = nullptr;
}

/* The end of a thread.  No reference into fib is held across a switch:
 * emu_run() may grow the vector between launches. */
static void thread_done(void)
{
    Fiber &f = fib[cur];
    f.done = true;
    progress++;
    EmuWarp &w = warps[f.warp];
    w.bar.live--;
    release_if_complete(&w.bar);
    block_bar.live--;
    release_if_complete(&block_bar);
}

static void fiber_main(void)
{
#ifdef EMU_UCONTEXT
    (*body)();
    thread_done();
    /* returns to uc_link: the scheduler */
#else
    for (;;) {
        (*body)();
        thread_done();
        /* resumed as a thread of a later block (cur is then this fiber) */
        if (!_setjmp(fib[cur].jb))
            _longjmp(sched_jb, 1);
    }
#endif
}

/* Run fiber f until it waits or ends.  A function of its own: the
 * scheduler's locals stay out of the _setjmp() frame (they could be
 * clobbered by the _longjmp() back). */
static __attribute__((noinline)) void resume(Fiber &f)
{
#ifdef EMU_UCONTEXT
    swapcontext(&sched, &f.ctx);
#else
    if (!_setjmp(sched_jb)) {
        if (!f.started) {
            f.started = true;
            setcontext(&f.ctx);
        }
        _longjmp(f.jb, 1);
    }
#endif
}

void emu_run(dim3 grid, dim3 block, const std::function<void()> &b)
{
    const int nt = (int)(block.x * block.y * block.z);
    if (nt % 32) {
        fprintf(stderr, "emu: block of %d threads\n", nt);
        emu_errors++;
    }
    if ((int)fib.size() < nt) {
        const size_t old = fib.size();
        fib.resize(nt);
        for (size_t i = old; i < fib.size(); i++) {
            fib[i].stack = (char *)malloc(STACK);
            fib[i].started = false;
        }
    }
    warps.resize((nt + 31) / 32);
    body = &b;
    gridDim = grid;
    blockDim = block;
    for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++)
    for (unsigned bx = 0; bx < grid.x; bx++) {
        blockIdx = {bx, by, bz};
        block_bar = EmuBarrier();
        block_bar.live = nt;
        for (auto &w : warps) {
            w.bar = EmuBarrier();
            w.bar.live = 0;
        }
        for (int i = 0; i < nt; i++) {
            Fiber &f = fib[i];
            f.tid = {(unsigned)(i % block.x), (unsigned)((i / block.x) % block.y),
                     (unsigned)(i / (block.x * block.y))};
            f.warp = i / 32;
            warps[f.warp].bar.live++;
            f.done = false;
            f.wait = nullptr;
#ifndef EMU_UCONTEXT
            if (f.started)
                continue;  /* waits in fiber_main() for its next thread */
#endif
            getcontext(&f.ctx);
            f.ctx.uc_stack.ss_sp = f.stack;
            f.ctx.uc_stack.ss_size = STACK;
            f.ctx.uc_link = &sched;
            makecontext(&f.ctx, fiber_main, 0);
        }
        int left = nt;
        while (left > 0) {
            const long before = progress;
            bool ran = false;
            for (int i = 0; i < nt; i++) {
                Fiber &f = fib[i];
                if (f.done)
                    continue;
                if (f.wait && f.wait->gen == f.wait_gen)
                    continue;
                cur = i;
                threadIdx = f.tid;
                ran = true;
                resume(f);
                if (f.done)
                    left--;
            }
            if (!ran && progress == before) {
                fprintf(stderr, "emu: deadlock in block (%u,%u)\n", bx, by);
                emu_errors++;
                exit(3);
            }
        }
    }
}
