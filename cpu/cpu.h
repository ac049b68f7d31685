/* gst-qmetric: which SIMD twins of the C stages this CPU may run.
 *
 * cpu/ holds the C specification of every stage; cpu/x86/ holds
 * accelerated twins of some of them (dav1d's pattern: the C version fills a
 * stage table, then the x86 init overrides what the CPU supports).  Every
 * twin is compared bit for bit with its C stage by tests/checkasm.
 *
 * QMETRIC_CPU=c|avx2|avx512 caps the level (for bug reports and timing the
 * C code); it can only lower what the CPU has.
 */
#ifndef QM_CPU_H
#define QM_CPU_H

enum {
    QM_CPU_AVX2 = 1 << 0,   /* AVX2 (+ BMI2 is not assumed) */
    QM_CPU_AVX512 = 1 << 1, /* AVX-512 F, BW, VL, DQ (Skylake-X level) */
};

/** The QM_CPU_* levels usable here, after QMETRIC_CPU. Thread-safe. */
unsigned qm_cpu_flags(void);

#endif /* QM_CPU_H */
