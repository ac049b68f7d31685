/* gst-qmetric: the rounding of a sequential single-precision sum, computed
 * in parallel (used by the CUDA twin of PSNR-HVS; plain C as well, so that a
 * host test can check the decomposition against the sequential loop).
 *
 * The C reference adds millions of non-negative float terms into ONE float,
 * one after the other, and the scores depend on the rounding of that exact
 * order.  The result can still be computed in parallel, exactly:
 *
 *   - a float accumulator a >= 0 is written a = A * u with an integer
 *     A < 2^24 and the unit u = 2^(E - 150) of its binade (E = biased
 *     exponent, 1 for 0 and subnormals: [0, 2^-125) is one uniform grid);
 *   - while a + t stays below the top of the binade (A + t/u < 2^24), the
 *     float addition a + t rounds a + t to a multiple of u, i.e. it equals
 *     (A + R) * u where R = t/u rounded to the nearest integer; only an exact
 *     half (a tie) depends on A (ties to even), so ties are left to a real
 *     float addition;
 *   - hence, along a run of terms that neither crosses into the next binade
 *     nor holds a tie, the sequential float sum is A + (sum of the R), an
 *     integer sum that can be formed in any order.
 *
 * The terms being non-negative, the accumulator only grows, so a sum of N
 * terms crosses at most ~40 binades: the parallel code sums the R of large
 * chunks of terms and only goes element by element around the crossings.
 */
#ifndef QM_FSUM_H
#define QM_FSUM_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define QM_FSUM_FN __host__ __device__ __forceinline__
#else
#define QM_FSUM_FN static inline
#endif

/* A + (rounded terms) must stay <= this for the translation to hold: then
 * A + t/u <= A + R + 1/2 < 2^24 for every term of the run. */
#define QM_FSUM_LIMIT ((1u << 24) - 1)
/* R of a term at least as large as the binade itself (never summed: it
 * exceeds the limit on its own). */
#define QM_FSUM_CAP (1u << 25)

/* Accumulator state: a = A * 2^(e - 150), e >= 1, 0 <= A < 2^24, and
 * A >= 2^23 when e > 1 (a normal float's mantissa with its hidden bit). */
typedef struct QmFsum {
    int e;
    uint32_t a;
} QmFsum;

QM_FSUM_FN uint32_t qm_fsum_bits(float f)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t b;
    memcpy(&b, &f, sizeof(b));
    return b;
#endif
}

QM_FSUM_FN QmFsum qm_fsum_from_float(float f)
{
    const uint32_t b = qm_fsum_bits(f);  /* f >= 0: no sign bit */
    QmFsum s;
    s.e = (int)(b >> 23);
    s.a = b & 0x7FFFFFu;
    if (s.e == 0)
        s.e = 1;              /* zero or subnormal: unit 2^-149 */
    else
        s.a |= 0x800000u;     /* hidden bit */
    return s;
}

QM_FSUM_FN float qm_fsum_to_float(QmFsum s)
{
    /* e = 1 covers subnormals (A < 2^23) and the first normal binade alike;
     * otherwise the hidden bit of A carries into the exponent field */
    const uint32_t b = ((uint32_t)(s.e - 1) << 23) + s.a;
#ifdef __CUDA_ARCH__
    return __uint_as_float(b);
#else
    float f;
    memcpy(&f, &b, sizeof(f));
    return f;
#endif
}

/* t / 2^(e - 150) rounded to the nearest integer, for t >= 0 finite; *tie is
 * set when t / u is an exact half (the rounding would depend on A).  Terms of
 * the binade's size or larger give QM_FSUM_CAP. */
QM_FSUM_FN uint32_t qm_fsum_units(float t, int e, int *tie)
{
    const uint32_t b = qm_fsum_bits(t);
    int et = (int)(b >> 23);
    uint32_t m = b & 0x7FFFFFu;
    if (et == 0)
        et = 1;
    else
        m |= 0x800000u;
    const int d = e - et;
    *tie = 0;
    if (d < 0)
        return QM_FSUM_CAP;  /* t normal, t / u = m 2^-d >= 2^24 */
    if (d == 0)
        return m;
    if (d > 24)
        return 0;            /* t / u < 2^24 / 2^25 = 1/2, never exactly */
    const uint32_t half = 1u << (d - 1);
    const uint32_t rem = m & ((1u << d) - 1);
    *tie = rem == half;
    return (m >> d) + (rem > half);
}

/* One term the slow way: the float addition itself. */
QM_FSUM_FN QmFsum qm_fsum_add(QmFsum s, float t)
{
#ifdef __CUDA_ARCH__
    return qm_fsum_from_float(__fadd_rn(qm_fsum_to_float(s), t));
#else
    return qm_fsum_from_float(qm_fsum_to_float(s) + t);
#endif
}

#endif /* QM_FSUM_H */
