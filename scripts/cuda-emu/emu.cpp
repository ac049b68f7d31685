/* the fiber scheduler of cuda_runtime.h */
#include "cuda_runtime.h"

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

#define STACK (256 * 1024)

struct Fiber {
    ucontext_t ctx;
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
    swapcontext(&fib[cur].ctx, &sched);
    fib[cur].wait = nullptr;
}

static void fiber_main(void)
{
    (*body)();
    Fiber &f = fib[cur];
    f.done = true;
    progress++;
    EmuWarp &w = warps[f.warp];
    w.bar.live--;
    release_if_complete(&w.bar);
    block_bar.live--;
    release_if_complete(&block_bar);
    /* returns to uc_link: the scheduler */
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
        for (size_t i = old; i < fib.size(); i++)
            fib[i].stack = (char *)malloc(STACK);
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
                swapcontext(&sched, &f.ctx);
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
