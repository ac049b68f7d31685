/* gst-qmetric: driver of the checkasm-style SIMD tests (see checkasm.h).
 *   checkasm [--seed N] [--test STAGE-SUBSTRING] [--bench]
 * Exit status: 0 all passed, 1 a mismatch, 77 when this CPU has no SIMD
 * level with twins (nothing was compared: a skip, not a pass). */
#include "checkasm.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(m) void checkasm_##m(void);
#include "checkasm_list.h"
#undef CHECK

static uint32_t seed, state;
static const char *filter;
static bool bench;
static const char *cur_stage;
static unsigned cur_isa;
static int cur_fails, total_fails, total_stages;

unsigned checkasm_isas(void) { return qm_cpu_flags(); }

const char *checkasm_isa_name(unsigned isa)
{
    return isa == QM_CPU_AVX512 ? "avx512" : isa == QM_CPU_AVX2 ? "avx2" : "?";
}

uint32_t checkasm_rand(void)
{
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
}

void checkasm_reseed(const char *stage)
{
    uint32_t h = seed ^ 2166136261u;
    for (const char *c = stage; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    state = h ? h : 1;
}

bool checkasm_begin(const char *stage, unsigned isa)
{
    if (filter && !strstr(stage, filter))
        return false;
    cur_stage = stage;
    cur_isa = isa;
    cur_fails = 0;
    checkasm_reseed(stage);
    return true;
}

void checkasm_fail(const char *fmt, ...)
{
    if (cur_fails++ < 5) {
        va_list ap;
        printf("  FAIL %s_%s (seed %" PRIu32 "): ", cur_stage,
               checkasm_isa_name(cur_isa), seed);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
    }
}

void checkasm_end(void)
{
    total_stages++;
    if (cur_fails)
        total_fails++;
    printf("%-32s %-7s %s\n", cur_stage, checkasm_isa_name(cur_isa),
           cur_fails ? "FAILED" : "ok");
}

bool checkasm_bench(void) { return bench; }

double checkasm_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

void checkasm_bench_report(const char *stage, unsigned isa, double c_s, double simd_s)
{
    printf("  bench %-26s %-7s C %10.1f us  SIMD %10.1f us  x%.2f\n", stage,
           checkasm_isa_name(isa), c_s * 1e6, simd_s * 1e6, c_s / simd_s);
}

void checkasm_fill(void *buf, ptrdiff_t stride, int w, int h, int bits, int pattern)
{
    const uint32_t max = (1u << bits) - 1, mid = 1u << (bits - 1);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            uint32_t v;
            switch (pattern) {
            case 1: v = 0; break;
            case 2: v = max; break;
            case 3: v = ((x ^ y) & 1) ? max : 0; break;
            case 4: v = mid - 3 + checkasm_rand() % 7; break;
            case 5: v = (uint32_t)(((uint64_t)(x + y) * max) / (w + h)); break;
            default: v = checkasm_rand() & max; break;
            }
            if (bits <= 8)
                ((uint8_t *)buf)[y * stride + x] = (uint8_t)v;
            else
                ((uint16_t *)((uint8_t *)buf + y * stride))[x] = (uint16_t)v;
        }
    }
}

int main(int argc, char **argv)
{
    seed = (uint32_t)time(NULL);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = (uint32_t)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--test") && i + 1 < argc)
            filter = argv[++i];
        else if (!strcmp(argv[i], "--bench"))
            bench = true;
        else {
            fprintf(stderr, "usage: %s [--seed N] [--test STAGE] [--bench]\n", argv[0]);
            return 2;
        }
    }
    printf("checkasm: seed %" PRIu32 ", ISAs:%s%s\n", seed,
           (checkasm_isas() & QM_CPU_AVX2) ? " avx2" : "",
           (checkasm_isas() & QM_CPU_AVX512) ? " avx512" : "");
#define CHECK(m) checkasm_##m();
#include "checkasm_list.h"
#undef CHECK
    if (!total_stages) {
        printf("SKIP: no SIMD twin can run on this CPU (or none matched --test)\n");
        return 77;
    }
    printf("checkasm: %d stage/ISA pairs, %d failed\n", total_stages, total_fails);
    return total_fails ? 1 : 0;
}
