/* gst-qmetric: CPU feature detection for the SIMD twins (see cpu.h). */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

static unsigned detect(void)
{
    unsigned f = 0;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        f |= QM_CPU_AVX2;
    if ((f & QM_CPU_AVX2) && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq"))
        f |= QM_CPU_AVX512;
#endif
    return f;
}

unsigned qm_cpu_flags(void)
{
    /* Detection is idempotent, so a race between first callers only
     * repeats the same work; the stored value is the same for all. */
    static int done;
    static unsigned flags;
    if (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
        unsigned f = detect();
        const char *cap = getenv("QMETRIC_CPU");
        if (cap && !strcmp(cap, "c"))
            f = 0;
        else if (cap && !strcmp(cap, "avx2"))
            f &= QM_CPU_AVX2;
        __atomic_store_n(&flags, f, __ATOMIC_RELAXED);
        __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&flags, __ATOMIC_RELAXED);
}
