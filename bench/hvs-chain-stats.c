/* hvs-chain-stats: how often the CUDA twin of PSNR-HVS leaves its fast path.
 *
 * cuda/psnr_hvs.cu adds each plane's terms in the C code's order, exactly,
 * in parallel: a chunk of HVS_CHUNK terms is added at once when its terms,
 * in units of the accumulator's binade, hold no rounding tie and keep the
 * accumulator inside that binade; any other chunk is walked term by term in
 * runs, one block-wide step per tie or binade crossing (cuda/fsum.h).  This
 * program replays those decisions on the host, on qmetric-bench's synthetic
 * content (bench/qmbench.c), and counts them: chunks, slow chunks and why
 * (tie, binade overflow, wrong binade guess), and the term-by-term steps,
 * which is what the chain kernel's time grows with.  It also checks that the
 * replayed sum equals the C code's sequential one.
 *
 *   hvs-chain-stats [WxH ...]      (default 1920x1080 3840x2160; 8 and 10 bits)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsum.h"
#include "psnr_hvs.h"
#include "qmbench.h"

#define CHUNK (16 * QM_HVS_COEFFS)  /* HVS_CHUNK of cuda/psnr_hvs_sum.cuh */
#define NCAND 3                     /* HVS_NCAND */

typedef struct Stats {
    long chunks, slow, ties, overflow, miss, steps;
} Stats;

/* The plane's terms in summation order (block raster, then coefficient). */
static float *plane_terms(const uint8_t *ref, const uint8_t *dis, ptrdiff_t stride, int w,
                          int h, int bpc, int plane, size_t *n, float *seq)
{
    QmHvsTables t;
    qm_hvs_tables(&t, plane);
    const int nbx = qm_hvs_nblocks(w), nby = qm_hvs_nblocks(h);
    *n = (size_t)nbx * nby * QM_HVS_COEFFS;
    float *terms = malloc(*n * sizeof(float)), *row = malloc((size_t)nbx * QM_HVS_COEFFS * sizeof(float));
    QmHvsScratch *sc = malloc(sizeof(*sc));
    if (!terms || !row || !sc)
        exit(2);
    size_t o = 0;
    float acc = 0.f;
    for (int by = 0; by < nby; by++) {
        const ptrdiff_t off = (ptrdiff_t)by * QM_HVS_STEP * stride;
        qm_hvs_blocks_c(ref + off, stride, dis + off, stride, bpc, nbx, &t, row, sc);
        for (int b = 0; b < nbx; b++)
            for (int k = 0; k < QM_HVS_COEFFS; k++)
                terms[o++] = row[(size_t)k * nbx + b];
        acc = qm_hvs_accumulate(acc, row, nbx);
    }
    free(row);
    free(sc);
    *seq = acc;
    return terms;
}

static float replay(const float *T, size_t n, Stats *st)
{
    double est = 0;  /* the rough running sum the guess kernel forms */
    QmFsum s = { 1, 0 };
    memset(st, 0, sizeof(*st));
    for (size_t a = 0; a < n; a += CHUNK) {
        const size_t e = a + CHUNK < n ? a + CHUNK : n;
        double cs = 0;
        for (size_t i = a; i < e; i++)
            cs += T[i];
        const int ge = qm_fsum_from_float((float)est).e, g = ge > 1 ? ge - 1 : 1;
        est += cs;
        st->chunks++;
        const int c = s.e - g;
        int fast = 0;
        if (c >= 0 && c < NCAND) {
            uint64_t u = 0;
            int tie = 0;
            for (size_t i = a; i < e; i++) {
                int tt;
                u += qm_fsum_units(T[i], s.e, &tt);
                tie |= tt;
            }
            if (tie)
                st->ties++;
            else if (s.a + u <= QM_FSUM_LIMIT)
                s.a += (uint32_t)u, fast = 1;
            else
                st->overflow++;
        } else {
            st->miss++;
        }
        if (fast)
            continue;
        st->slow++;
        for (size_t i = a; i < e;) {
            st->steps++;  /* a run added as integers, then one float addition */
            for (; i < e; i++) {
                int tt;
                const uint32_t u = qm_fsum_units(T[i], s.e, &tt);
                if (tt || s.a + (uint64_t)u > QM_FSUM_LIMIT)
                    break;
                s.a += u;
            }
            if (i < e)
                s = qm_fsum_add(s, T[i++]);
        }
    }
    return qm_fsum_to_float(s);
}

int main(int argc, char **argv)
{
    const char *defsizes[] = { "1920x1080", "3840x2160" };
    const int nsizes = argc > 1 ? argc - 1 : 2;
    int bad = 0;
    printf("%-10s %4s %5s %8s %6s %6s %8s %6s %6s  %s\n", "size", "bits", "plane", "chunks",
           "slow", "ties", "overflow", "miss", "steps", "sum = C code's");
    for (int si = 0; si < nsizes; si++) {
        int w, h;
        if (sscanf(argc > 1 ? argv[si + 1] : defsizes[si], "%dx%d", &w, &h) != 2 || w < 8 || h < 8) {
            fprintf(stderr, "usage: hvs-chain-stats [WxH ...]\n");
            return 2;
        }
        for (int bpc = 8; bpc <= 10; bpc += 2) {
            const int bytes = bpc > 8 ? 2 : 1;
            int pw[3] = { w, (w + 1) / 2, (w + 1) / 2 }, ph[3] = { h, (h + 1) / 2, (h + 1) / 2 };
            uint8_t *ref[3], *dis[3];
            ptrdiff_t stride[3];
            for (int p = 0; p < 3; p++) {
                stride[p] = (ptrdiff_t)pw[p] * bytes;
                ref[p] = malloc((size_t)stride[p] * ph[p]);
                dis[p] = malloc((size_t)stride[p] * ph[p]);
                if (!ref[p] || !dis[p])
                    return 2;
            }
            uint32_t rng = 12345;
            qb_synth_frame(w, bpc, 3, pw, ph, ref, dis, stride, 0, &rng);
            for (int p = 0; p < 3; p++) {
                size_t n;
                float seq;
                float *T = plane_terms(ref[p], dis[p], stride[p], pw[p], ph[p], bpc, p, &n, &seq);
                Stats st;
                const float r = replay(T, n, &st);
                printf("%-10s %4d %5d %8ld %6ld %6ld %8ld %6ld %6ld  %s\n", argc > 1 ? argv[si + 1] : defsizes[si],
                       bpc, p, st.chunks, st.slow, st.ties, st.overflow, st.miss, st.steps,
                       r == seq ? "yes" : "NO");
                bad |= r != seq;
                free(T);
                free(ref[p]);
                free(dis[p]);
            }
        }
    }
    return bad;
}
