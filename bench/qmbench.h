/* Helpers shared by bench/qmetric-bench.c and bench/qmetric-bench-pipeline.c:
 * synthetic content, metric-set names, list parsing, medians.  No GStreamer,
 * no engine: both programs use them the same way, so their figures describe
 * the same content and the same metric sets. */
#ifndef QMBENCH_H
#define QMBENCH_H

#include <stdio.h>

#include <stddef.h>
#include <stdint.h>

/* The metrics of issue 5's combined target: VMAF + PSNR + SSIM + MS-SSIM +
 * PSNR-HVS, spelled as the engine's (and the element's) `metrics` setting. */
#define QB_COMBINED "vmaf,psnr,float_ssim,float_ms_ssim,psnr_hvs"

/**
 * One synthetic frame pair: the reference is a sum of moving gratings plus
 * noise (frame index f moves them), the distorted copy the reference
 * coarsely quantised (16 levels) plus +-1 noise.  Planes are pw[p] x ph[p]
 * samples, uint8_t for bpc 8 and uint16_t (0 .. 2^bpc - 1) above, at
 * stride[p] bytes.  *rng is the generator's state (xorshift32, not 0); the
 * same state and arguments give the same pictures.
 */
void qb_synth_frame(int w, int bpc, int nplanes, const int pw[], const int ph[],
                    uint8_t *const ref[], uint8_t *const dist[],
                    const ptrdiff_t stride[], int f, uint32_t *rng);

/**
 * A metric set as the benches' --metrics accept it, turned into the
 * engine's comma-separated list (malloc'ed): '+' joins metrics of one run,
 * "default" is VMAF (vmaf), "combined" QB_COMBINED, "all" stays "all"; other
 * names pass through for the engine to check.
 */
char *qb_metric_list(const char *set);

/** Split s at any character of sep (empty fields dropped); *n entries, the
 *  vector NULL-terminated; free with qb_free_list(). */
char **qb_split(const char *s, const char *sep, int *n);
void qb_free_list(char **v);

/** Median of n values (sorts v in place); 0 when n is 0. */
double qb_median(double *v, int n);

/** CLOCK_MONOTONIC in seconds. */
double qb_now(void);

/** s as a JSON string (quotes and backslashes escaped, control characters
 *  left out; NULL as ""). */
void qb_json_str(FILE *f, const char *s);

#endif /* QMBENCH_H */
