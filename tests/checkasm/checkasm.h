/* gst-qmetric: checkasm-style tests of the SIMD twins in cpu/x86/ against
 * their C stages (dav1d's tests/checkasm in spirit; our own code).
 *
 * A test file tests/checkasm/<metric>.c defines void checkasm_<metric>(void)
 * and, for each stage and each ISA the CPU has, runs the C stage and the twin
 * on the same inputs (random with the printed seed, plus worst cases) and
 * compares the outputs exactly.  With --bench it also times both.
 */
#ifndef QM_CHECKASM_H
#define QM_CHECKASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu.h"

/** The ISA levels to test (QM_CPU_* bits available on this CPU). */
unsigned checkasm_isas(void);
/** Name of a single QM_CPU_* bit ("avx2", "avx512"). */
const char *checkasm_isa_name(unsigned isa);

/** Seeded 32-bit random numbers (xorshift); reseeded per stage so that a
 *  failing stage repeats with the printed seed alone. */
uint32_t checkasm_rand(void);
void checkasm_reseed(const char *stage);

/** Start a stage (name, isa); returns false when the stage is filtered out
 *  by --test.  Then call checkasm_fail() for each mismatch (printf-style;
 *  the first few are printed) and checkasm_end() once. */
bool checkasm_begin(const char *stage, unsigned isa);
void checkasm_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void checkasm_end(void);

/** --bench: true when timings are wanted; checkasm_now() is a monotonic
 *  clock in seconds; checkasm_bench_report() prints one line. */
bool checkasm_bench(void);
double checkasm_now(void);
void checkasm_bench_report(const char *stage, unsigned isa, double c_s, double simd_s);
/** t = the best of 7 timings of the statement(s) (the machine is shared). */
#define BENCH_BEST(t, ...)                                   \
    do {                                                     \
        (t) = 1e9;                                           \
        for (int r_ = 0; r_ < 7; r_++) {                     \
            const double t0_ = checkasm_now();               \
            __VA_ARGS__;                                     \
            const double dt_ = checkasm_now() - t0_;         \
            (t) = dt_ < (t) ? dt_ : (t);                     \
        }                                                    \
    } while (0)

/** Fill w x h samples of bits-bit values (bits <= 8: uint8_t, else
 *  uint16_t) with pattern p (0 random, 1 zero, 2 max, 3 checkerboard of
 *  0/max, 4 random within +-3 of mid-grey, 5 smooth gradient). */
enum { CHECKASM_PATTERNS = 6 };
void checkasm_fill(void *buf, ptrdiff_t stride, int w, int h, int bits, int pattern);

#endif /* QM_CHECKASM_H */
