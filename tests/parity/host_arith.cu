/* gst-qmetric: the arithmetic of the CUDA twins, run on the host against the
 * C reference (no GPU needed; tests/parity/parity.c runs the kernels
 * themselves on a GPU).
 *
 *   psnr_hvs   the per-block code of cuda/psnr_hvs_block.cuh, compiled for
 *              the host, against qm_hvs_blocks_c(): every term bit for bit;
 *              and the decomposition of the ordered float sum used by
 *              cuda/psnr_hvs.cu (chunk units in guessed binades, the chain
 *              and its element-wise pass, emulated one thread after the
 *              other) against qm_hvs_accumulate(), on terms of synthetic
 *              pictures and on adversarial sequences (ties, subnormals,
 *              stagnation, wide ranges);
 *   ciede      cuda/ciede_pixel.cuh against qm_ciede_lab() and
 *              qm_ciede_de2000() (with glibc on both sides: this checks the
 *              transcription, casts and overloads; CUDA's libm is the
 *              parity test's business).
 *
 *   host_arith [--seed N]      exit 0 pass, 1 fail
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ciede_pixel.cuh"
#include "fsum.h"
#include "psnr_hvs_block.cuh"

typedef unsigned long long u64;

static uint64_t rng;

static uint32_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (uint32_t)((rng * 2685821657736338717ULL) >> 32);
}

static double urand(void)
{
    return rnd() * (1.0 / 4294967296.0);
}

/* ---- psnr_hvs stage 1 ---- */

/* A strip of nb blocks (8 rows, 7 nb + 1 columns) through both codes. */
static long hvs_strip(int bpc, int plane, int kind, int nb)
{
    const int max = (1 << bpc) - 1, w = QM_HVS_STEP * nb + 1;
    QmHvsTables tab;
    qm_hvs_tables(&tab, plane);
    int *ref = (int *)malloc(sizeof(int) * 8 * w), *dis = (int *)malloc(sizeof(int) * 8 * w);
    const int base = (int)(rnd() % (uint32_t)(max + 1));
    for (int i = 0; i < 8 * w; i++) {
        int a, b;
        switch (kind) {
        case 0: a = rnd() % (max + 1); b = rnd() % (max + 1); break;
        case 1: a = base; b = base + (int)(rnd() % 5) - 2; break;        /* flat */
        case 2: a = rnd() % (max + 1); b = a + (int)(rnd() % 9) - 4; break;
        case 3: a = ((i ^ (i / w)) & 1) ? max : 0; b = rnd() % (max + 1); break;
        case 4: a = base; b = base; break;                                /* identical */
        case 5: a = max; b = 0; break;
        default: a = (base + i * 3) % (max + 1); b = a * 7 / 8; break;
        }
        ref[i] = a;
        dis[i] = b < 0 ? 0 : b > max ? max : b;
    }
    /* C reference: samples as the picture holds them */
    const size_t bytes = bpc == 8 ? 1 : 2;
    uint8_t *r = (uint8_t *)malloc(bytes * 8 * w), *d = (uint8_t *)malloc(bytes * 8 * w);
    for (int i = 0; i < 8 * w; i++) {
        if (bpc == 8) {
            r[i] = (uint8_t)ref[i];
            d[i] = (uint8_t)dis[i];
        } else {
            ((uint16_t *)r)[i] = (uint16_t)ref[i];
            ((uint16_t *)d)[i] = (uint16_t)dis[i];
        }
    }
    float *terms = (float *)malloc(sizeof(float) * QM_HVS_COEFFS * nb);
    QmHvsScratch *scr = (QmHvsScratch *)malloc(sizeof(*scr));
    qm_hvs_blocks_c(r, (ptrdiff_t)(w * bytes), d, (ptrdiff_t)(w * bytes), bpc, nb, &tab,
                    terms, scr);
    long bad = 0;
    for (int b = 0; b < nb; b++) {
        int s[64], t[64];
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 8; j++) {
                s[i * 8 + j] = ref[i * w + QM_HVS_STEP * b + j];
                t[i * 8 + j] = dis[i * w + QM_HVS_STEP * b + j];
            }
        float m = hvs_block_prep(s, tab.mask, hvs_var64(), hvs_var16());
        const float dm = hvs_block_prep(t, tab.mask, hvs_var64(), hvs_var16());
        m = dm > m ? dm : m;
        for (int k = 0; k < QM_HVS_COEFFS; k++) {
            const float q = hvs_term(k, s[k], t[k], m, tab.csf[k], tab.mask[k]);
            const float c = terms[(size_t)k * nb + b];
            if (qm_fsum_bits(q) != qm_fsum_bits(c)) {
                if (bad < 3)
                    printf("  psnr_hvs term: %d bits plane %d kind %d block %d k %d: "
                           "cuda %.9g c %.9g\n", bpc, plane, kind, b, k, q, c);
                bad++;
            }
        }
    }
    free(ref);
    free(dis);
    free(r);
    free(d);
    free(terms);
    free(scr);
    return bad;
}

/* ---- psnr_hvs stage 2: the kernels' decomposition, one thread at a time ---- */

static long n_fallback, n_restart, n_prefix_broken;

/* hvs_exact_chunk() */
static QmFsum emu_exact_chunk(const float *t, int n, QmFsum st)
{
    int s = 0;
    while (s < n) {
        n_restart++;
        u64 acc = 0, incl_last = 0;
        int j = 0;
        for (int tid = 0; tid < HVS_CHAIN_THREADS; tid++) {
            u64 r = 0;
            if (tid >= s && tid < n) {
                int tie;
                const uint32_t u = qm_fsum_units(t[tid], st.e, &tie);
                r = tie ? HVS_BIG : u;
            }
            acc += r;
            const int ok = tid < n && st.a + acc <= QM_FSUM_LIMIT;
            if (ok && j != tid)
                n_prefix_broken++;  /* __syncthreads_count() would lie */
            if (ok) {
                j++;
                incl_last = acc;
            }
        }
        if (j > 0)
            st.a = st.a + (uint32_t)incl_last;
        if (j < n) {
            st = qm_fsum_add(st, t[j]);
            s = j + 1;
        } else {
            s = n;
        }
    }
    return st;
}

/* hvs_blocks_kernel's rough chunk sums, hvs_guess_kernel, hvs_units_kernel
 * and hvs_chain_kernel for one plane of nb blocks (terms block-major). */
static float emu_plane_sum(const float *t, int nb)
{
    const int nc = (nb + HVS_CHUNK_BLOCKS - 1) / HVS_CHUNK_BLOCKS;
    const long long nt = (long long)nb * QM_HVS_COEFFS;
    double *cs = (double *)calloc(nc + 1, sizeof(double));
    unsigned char *guess = (unsigned char *)calloc(nc + 1, 1);
    u64 *units = (u64 *)calloc((size_t)(nc + 1) * HVS_NCAND, sizeof(u64));
    for (int b = 0; b < nb; b++) {
        float bs = 0.f;
        for (int k = 0; k < QM_HVS_COEFFS; k += 4)
            bs += t[b * 64 + k] + t[b * 64 + k + 1] + t[b * 64 + k + 2] + t[b * 64 + k + 3];
        cs[b / HVS_CHUNK_BLOCKS] += bs;
    }
    double est = 0.;
    for (int k = 0; k < nc; k++) {
        const int e = qm_fsum_from_float((float)est).e;
        guess[k] = (unsigned char)(e > 1 ? e - 1 : 1);
        est += cs[k];
    }
    for (int k = 0; k < nc; k++) {
        const long long first = (long long)k * HVS_CHUNK;
        const long long n = nt - first < HVS_CHUNK ? nt - first : HVS_CHUNK;
        for (int c = 0; c < HVS_NCAND; c++) {
            u64 sum = 0;
            int tie = 0;
            for (long long i = 0; i < n; i++) {
                int tt;
                sum += qm_fsum_units(t[first + i], guess[k] + c, &tt);
                tie |= tt;
            }
            units[(size_t)k * HVS_NCAND + c] = tie ? HVS_TIE : sum;
        }
    }
    QmFsum st;
    st.e = 1;
    st.a = 0;
    int k0 = 0;
    while (k0 < nc) {
        u64 acc = 0, incl_last = 0;
        int j = 0;
        for (int tid = 0; tid < HVS_CHAIN_THREADS; tid++) {
            const int k = k0 + tid;
            u64 v = HVS_BIG;
            if (k < nc) {
                const int c = st.e - (int)guess[k];
                if (c >= 0 && c < HVS_NCAND) {
                    const u64 u = units[(size_t)k * HVS_NCAND + c];
                    if (u != HVS_TIE)
                        v = u;
                }
            }
            acc += v;
            const int ok = k < nc && st.a + acc <= QM_FSUM_LIMIT;
            if (ok && j != tid)
                n_prefix_broken++;
            if (ok) {
                j++;
                incl_last = acc;
            }
        }
        if (j > 0)
            st.a = st.a + (uint32_t)incl_last;
        k0 += j;
        if (j < HVS_CHAIN_THREADS && k0 < nc) {
            n_fallback++;
            const long long first = (long long)k0 * HVS_CHUNK;
            const int n = (int)(nt - first < HVS_CHUNK ? nt - first : HVS_CHUNK);
            st = emu_exact_chunk(t + first, n, st);
            k0++;
        }
    }
    free(cs);
    free(guess);
    free(units);
    return qm_fsum_to_float(st);
}

/* The C reference's accumulation of block-major terms. */
static float ref_plane_sum(const float *t, int nb)
{
    float *cm = (float *)malloc(sizeof(float) * QM_HVS_COEFFS * (nb ? nb : 1));
    for (int b = 0; b < nb; b++)
        for (int k = 0; k < QM_HVS_COEFFS; k++)
            cm[(size_t)k * nb + b] = t[(size_t)b * QM_HVS_COEFFS + k];
    const float acc = qm_hvs_accumulate(0.f, cm, nb);
    free(cm);
    return acc;
}

static int check_sum(const char *what, const float *t, int nb)
{
    const long f0 = n_fallback, r0 = n_restart;
    const float a = ref_plane_sum(t, nb), b = emu_plane_sum(t, nb);
    const int ok = qm_fsum_bits(a) == qm_fsum_bits(b);
    printf("  %-34s %8d blocks: %s (%.9g), %ld element-wise chunks, %ld runs\n", what,
           nb, ok ? "exact" : "DIFFERS", a, n_fallback - f0, n_restart - r0);
    if (!ok)
        printf("    emulated %.9g\n", b);
    return ok;
}

/* Terms of a synthetic w x h 8-bit picture pair (block-major). */
static float *picture_terms(int w, int h, int kind, int *nb_out)
{
    const int nbx = qm_hvs_nblocks(w), nby = qm_hvs_nblocks(h), nb = nbx * nby;
    uint8_t *r = (uint8_t *)malloc((size_t)w * h), *d = (uint8_t *)malloc((size_t)w * h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const double v = 128 + 60 * sin(x * 0.013 + y * 0.021) + 40 * sin(x * 0.11) * cos(y * 0.07);
            int a = (int)v + (int)(rnd() % 9) - 4, b;
            a = a < 0 ? 0 : a > 255 ? 255 : a;
            switch (kind) {
            case 0: b = a + (int)(rnd() % 5) - 2; break;           /* mild noise */
            case 1: b = (int)v + (int)(rnd() % 41) - 20; break;     /* heavy noise */
            case 2: b = ((x / 8 + y / 8) & 1) ? a : a + 3; break;   /* blocky */
            default: b = a; break;                                  /* identical */
            }
            r[(size_t)y * w + x] = (uint8_t)a;
            d[(size_t)y * w + x] = (uint8_t)(b < 0 ? 0 : b > 255 ? 255 : b);
        }
    QmHvsTables tab;
    qm_hvs_tables(&tab, 0);
    QmHvsScratch *scr = (QmHvsScratch *)malloc(sizeof(*scr));
    float *row = (float *)malloc(sizeof(float) * QM_HVS_COEFFS * nbx);
    float *t = (float *)malloc(sizeof(float) * QM_HVS_COEFFS * (size_t)nb);
    for (int by = 0; by < nby; by++) {
        const size_t off = (size_t)by * QM_HVS_STEP * w;
        qm_hvs_blocks_c(r + off, w, d + off, w, 8, nbx, &tab, row, scr);
        for (int bx = 0; bx < nbx; bx++)
            for (int k = 0; k < QM_HVS_COEFFS; k++)
                t[((size_t)by * nbx + bx) * QM_HVS_COEFFS + k] = row[(size_t)k * nbx + bx];
    }
    free(r);
    free(d);
    free(scr);
    free(row);
    *nb_out = nb;
    return t;
}

static int hvs_sum_tests(void)
{
    int ok = 1;
    static const char *const pic_name[] = { "picture, mild noise", "picture, heavy noise",
                                            "picture, blocky", "picture, identical" };
    for (int kind = 0; kind < 4; kind++) {
        int nb;
        float *t = picture_terms(1280, 720, kind, &nb);
        ok &= check_sum(pic_name[kind], t, nb);
        free(t);
    }
    static const char *const seq_name[] = {
        "uniform [0, 1000)", "log-uniform 1e-4 .. 1e8", "small integers (ties)",
        "powers of two (ties)", "mostly zero", "subnormals", "stagnation",
        "masked squares", "growing", "single block",
    };
    for (int kind = 0; kind < 10; kind++) {
        const int nb = kind == 9 ? 1 : kind == 3 || kind == 5 ? 3000 : 20000 + (int)(rnd() % 20000);
        float *t = (float *)malloc(sizeof(float) * QM_HVS_COEFFS * nb);
        for (long i = 0; i < (long)nb * QM_HVS_COEFFS; i++) {
            float v;
            switch (kind) {
            case 0: v = (float)(urand() * 1000.0); break;
            case 1: v = (float)pow(10.0, urand() * 12 - 4); break;
            case 2: v = (float)(rnd() % 16); break;
            case 3: v = ldexpf(1.0f, (int)(rnd() % 40) - 20) * (float)(1 + rnd() % 4); break;
            case 4: v = (rnd() % 4) ? 0.f : (float)(urand() * urand() * 1e6); break;
            case 5: v = (float)(urand() * 1e-40); break;
            case 6: v = i < 100 ? 1e6f : (float)(urand() * 0.1); break;
            case 7: {
                const float w = (float)(urand() * 3), o = (float)(rnd() % 200) - (float)urand() * 5.f;
                const float we = (o > 0.f ? o : 0.f) * w;
                v = we * we;
                break;
            }
            case 8: v = (float)(urand() * (double)i * 0.001); break;
            default: v = (float)(urand() * 100.0); break;
            }
            t[i] = v;
        }
        ok &= check_sum(seq_name[kind], t, nb);
        free(t);
    }
    if (n_prefix_broken) {
        printf("  the ok flags of a scan were not a prefix (%ld times)\n", n_prefix_broken);
        ok = 0;
    }
    return ok;
}

/* ---- ciede ---- */

static long ciede_tests(long n, long *pow7_diff)
{
    long bad = 0;
    *pow7_diff = 0;
    static const int depths[] = { 8, 10, 12, 16 };
    for (long it = 0; it < n; it++) {
        const int bpc = depths[it % 4], max = (1 << bpc) - 1;
        QmCiedeConv cv;
        qm_ciede_conv(&cv, bpc);
        int c1[3], c2[3];
        for (int i = 0; i < 3; i++)
            c1[i] = (int)(rnd() % (uint32_t)(max + 1));
        for (int i = 0; i < 3; i++) {
            /* nearby colours, far ones, and greys (zero chroma) */
            int v = it & 8 ? c1[i] + (int)(rnd() % 7) - 3 : (int)(rnd() % (uint32_t)(max + 1));
            c2[i] = v < 0 ? 0 : v > max ? max : v;
        }
        if (it & 16)
            c1[1] = c1[2] = c2[1] = c2[2] = 128 << (bpc - 8);
        const QmLab a = qm_ciede_lab(c1[0], c1[1], c1[2], &cv);
        const QmLab b = qm_ciede_lab(c2[0], c2[1], c2[2], &cv);
        const QmLab ga = ciede_lab(c1[0], c1[1], c1[2], cv);
        const QmLab gb = ciede_lab(c2[0], c2[1], c2[2], cv);
        const float de = qm_ciede_de2000(a, b), gde = ciede_de2000(ga, gb);
        if (qm_fsum_bits(a.l) != qm_fsum_bits(ga.l) || qm_fsum_bits(a.a) != qm_fsum_bits(ga.a) ||
            qm_fsum_bits(a.b) != qm_fsum_bits(ga.b) || qm_fsum_bits(b.l) != qm_fsum_bits(gb.l) ||
            qm_fsum_bits(de) != qm_fsum_bits(gde)) {
            if (bad < 3)
                printf("  ciede: %d bits (%d %d %d) (%d %d %d): cuda %.9g c %.9g\n", bpc,
                       c1[0], c1[1], c1[2], c2[0], c2[1], c2[2], gde, de);
            bad++;
        }
        /* the GPU's x^7 against glibc's powf (a statistic, see ciede_pixel.cuh) */
        const float c = (float)(urand() * 200.0);
        *pow7_diff += qm_fsum_bits(powf(c, 7)) != qm_fsum_bits(ciede_pow7f_double(c));
    }
    return bad;
}

int main(int argc, char **argv)
{
    uint64_t seed = (uint64_t)time(NULL);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 0);
    printf("host_arith: seed %" PRIu64 "\n", seed);
    rng = seed ^ 0x9E3779B97F4A7C15ULL;
    if (!rng)
        rng = 1;
    int fails = 0;

    long bad = 0, n = 0;
    for (int bpc = 8; bpc <= 12; bpc += 2)
        for (int plane = 0; plane < 3; plane++)
            for (int kind = 0; kind < 7; kind++)
                for (int rep = 0; rep < 20; rep++) {
                    const int nb = 1 + (int)(rnd() % 40);
                    bad += hvs_strip(bpc, plane, kind, nb);
                    n += (long)nb * QM_HVS_COEFFS;
                }
    printf("psnr_hvs stage 1: %ld of %ld terms differ\n", bad, n);
    fails += bad != 0;

    printf("psnr_hvs stage 2 (ordered float sum):\n");
    fails += !hvs_sum_tests();

    const long nc = 1000000;
    long p7;
    bad = ciede_tests(nc, &p7);
    printf("ciede: %ld of %ld pixel pairs differ (GPU x^7 vs glibc powf: %ld differ)\n",
           bad, nc, p7);
    fails += bad != 0;

    printf("host_arith: %s\n", fails ? "FAIL" : "pass");
    return fails ? 1 : 0;
}
