/* gst-qmetric: the arithmetic of the CUDA twins, run on the host against the
 * C reference (no GPU needed; tests/parity/parity.c runs the kernels
 * themselves on a GPU).
 *
 *   psnr_hvs   the per-block code of cpu/psnr_hvs_block.h in the CUDA twin's
 *              shape (one block, st = n = 1), compiled by nvcc for the host,
 *              against qm_hvs_blocks_c() (lanes): every term bit for bit;
 *              and the decomposition of the ordered float sum used by
 *              cuda/psnr_hvs.cu (chunk units in guessed binades, the chain
 *              and its element-wise pass, emulated one thread after the
 *              other) against qm_hvs_accumulate(), on terms of synthetic
 *              pictures and on adversarial sequences (ties, subnormals,
 *              stagnation, wide ranges);
 *   ciede      cpu/ciede_pixel.h compiled by nvcc for the host against
 *              the C code's qm_ciede_lab() and qm_ciede_de2000() (the same
 *              source, with glibc on both sides: this checks the casts and
 *              C++ overloads; CUDA's libm is the parity test's business);
 *   vif        cpu/vif_pixel.h's per-pixel terms compiled by nvcc for the
 *              host, summed as cuda/vif.cu sums them, against the C
 *              stage qm_vif_terms_cpu() on rows of random and extreme local
 *              statistics, at several enhancement gain limits;
 *   motion     the kernel's per-column arithmetic (cpu/motion.h: mirrored
 *              differences, both blurs) against the C stage's row SADs
 *              (qm_motion_row_sad_8/16), on random pictures of small and
 *              odd sizes at 8, 10, 15 and 16 bits;
 *   adm        the scale kernels of cuda/adm.cu (cuda/adm_tile.cuh: tiles,
 *              halos, mirrored borders, per-row partial sums, the final
 *              row rounding), emulated one thread and one block after the
 *              other (shared memory and registers poisoned per block), on
 *              pictures of many sizes, depths, layouts, patterns and
 *              options, against the stage functions of cpu/adm.c (every
 *              integer sum) and the descriptor's compute() (features, bit
 *              for bit).
 *
 *   host_arith [--seed N]      exit 0 pass, 1 fail
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vector>

#include "adm_tile.cuh"
#include "ciede_pixel.h"
#include "motion.h"
#include "vif_pixel.h"
#include "fsum.h"
#include "psnr_hvs_block.h"
#include "psnr_hvs_sum.cuh"
#include "metric.h"

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
        int tmp[64];
        float m, dm;
        qm_hvs_block_prep(&m, s, tmp, 1, 1, tab.mask, qm_hvs_var64(), qm_hvs_var16());
        qm_hvs_block_prep(&dm, t, tmp, 1, 1, tab.mask, qm_hvs_var64(), qm_hvs_var16());
        m = dm > m ? dm : m;
        for (int k = 0; k < QM_HVS_COEFFS; k++) {
            const float q = qm_hvs_term(k, s[k], t[k], m, tab.csf[k], tab.mask[k]);
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
        const QmLab ga = qm_ciede_pixel_lab(c1[0], c1[1], c1[2], &cv);
        const QmLab gb = qm_ciede_pixel_lab(c2[0], c2[1], c2[2], &cv);
        const float de = qm_ciede_de2000(a, b), gde = qm_ciede_pixel_de2000(ga, gb);
        if (qm_fsum_bits(a.l) != qm_fsum_bits(ga.l) || qm_fsum_bits(a.a) != qm_fsum_bits(ga.a) ||
            qm_fsum_bits(a.b) != qm_fsum_bits(ga.b) || qm_fsum_bits(b.l) != qm_fsum_bits(gb.l) ||
            qm_fsum_bits(de) != qm_fsum_bits(gde)) {
            if (bad < 3)
                printf("  ciede: %d bits (%d %d %d) (%d %d %d): cuda %.9g c %.9g\n", bpc,
                       c1[0], c1[1], c1[2], c2[0], c2[1], c2[2], gde, de);
            bad++;
        }
        /* the GPU's x^7 against glibc's powf (a statistic, see cpu/ciede_pixel.h) */
        const float c = (float)(urand() * 200.0);
        *pow7_diff += qm_fsum_bits(powf(c, 7)) != qm_fsum_bits(qm_ciede_pow7f_double(c));
    }
    return bad;
}

/* ---- vif ---- */

static int32_t vif_stat(int kind)
{
    switch (kind) {
    case 0:
        return (int32_t)rnd();                       /* anything */
    case 1:
        return (int32_t)(rnd() % (1u << 22));        /* around sigma_n^2 */
    default:
        return (int32_t)(rnd() % (1u << 31));        /* large, positive */
    }
}

static long vif_tests(long *n_rows)
{
    static const double egls[] = { 100.0, 1.0, 50.5, 1.0000001 };
    uint16_t *tab = (uint16_t *)malloc(QM_VIF_LOG2_TABLE_SIZE * sizeof(uint16_t));
    qm_vif_log2_table(tab);
    enum { N = 1000 };
    int32_t s11[N], s22[N], s12[N];
    long bad = 0;
    *n_rows = 0;
    for (int rep = 0; rep < 400; rep++) {
        const int k = (int)(rnd() % 3);
        for (int j = 0; j < N; j++) {
            s11[j] = vif_stat(k);
            s22[j] = vif_stat(k) & 0x7fffffff;   /* the stage clamps it at 0 */
            s12[j] = vif_stat((int)(rnd() % 3));
            if (j % 97 == 0)
                s11[j] = (2 << 16) - (int32_t)(rnd() % 2);  /* the branch's edge */
        }
        const double egl = egls[rep % 4];
        const QmVifParams p = { egl, tab };
        QmVifAccum c = { 0, 0, 0, 0 }, g = { 0, 0, 0, 0 };
        qm_vif_terms_cpu(s11, s22, s12, N, &p, &c);
        for (int j = 0; j < N; j++)
            qm_vif_pixel_terms(s11[j], s22[j], s12[j], tab, egl, &g);
        bad += c.num_log != g.num_log || c.den_log != g.den_log ||
               c.num_non_log != g.num_non_log || c.den_non_log != g.den_non_log;
        (*n_rows)++;
    }
    free(tab);
    return bad;
}

/* ---- motion ---- */

/* Row SADs as cuda/motion.cu forms them: per output sample the five
 * mirrored differences of its column, the vertical blur, then the
 * horizontal one over five mirrored columns; a row's sum modulo 2^32. */
static void motion_gpu_rows(const uint16_t *prev, const uint16_t *cur, int w, int h, int bpc,
                            uint32_t *rows)
{
    std::vector<int32_t> v((size_t)w * h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int32_t d[5];
            for (int k = 0; k < 5; k++) {
                const int ym = qm_motion_mirror(y - 2 + k, h);
                d[k] = prev[(size_t)ym * w + x] - cur[(size_t)ym * w + x];
            }
            v[(size_t)y * w + x] = bpc > 15 ? qm_motion_blur_v_wide(d[0], d[1], d[2], d[3], d[4], bpc)
                                            : qm_motion_blur_v(d[0], d[1], d[2], d[3], d[4], bpc);
        }
    for (int y = 0; y < h; y++) {
        uint32_t acc = 0;
        for (int x = 0; x < w; x++) {
            int32_t c[5];
            for (int k = 0; k < 5; k++)
                c[k] = v[(size_t)y * w + qm_motion_mirror(x - 2 + k, w)];
            acc += qm_motion_blur_h_abs(c);
        }
        rows[y] = acc;
    }
}

static long motion_tests(long *cases)
{
    static const int depths[] = { 8, 10, 15, 16 };
    long bad = 0;
    *cases = 0;
    for (int rep = 0; rep < 200; rep++) {
        const int w = 3 + (int)(rnd() % 70), h = 3 + (int)(rnd() % 40);
        const int bpc = depths[rep % 4], max = (1 << bpc) - 1;
        std::vector<uint16_t> prev((size_t)w * h), cur((size_t)w * h);
        std::vector<uint8_t> prev8((size_t)w * h), cur8((size_t)w * h);
        for (size_t i = 0; i < prev.size(); i++) {
            /* extremes often: the largest blurred differences */
            const uint32_t r = rnd();
            prev[i] = (uint16_t)(r & 1 ? (r >> 1) % (max + 1) : (r & 2 ? max : 0));
            cur[i] = (uint16_t)(r & 4 ? (r >> 3) % (max + 1) : (r & 8 ? 0 : max));
            prev8[i] = (uint8_t)prev[i];
            cur8[i] = (uint8_t)cur[i];
        }
        std::vector<uint32_t> c(h), g(h);
        std::vector<int32_t> scratch(qm_motion_scratch_len(w));
        if (bpc == 8)
            qm_motion_row_sad_fn(8)(prev8.data(), w, cur8.data(), w, w, h, 8, scratch.data(),
                                    c.data());
        else
            qm_motion_row_sad_fn(bpc)(prev.data(), 2 * w, cur.data(), 2 * w, w, h, bpc,
                                      scratch.data(), c.data());
        motion_gpu_rows(prev.data(), cur.data(), w, h, bpc, g.data());
        bad += c != g;
        (*cases)++;
    }
    return bad;
}

/* ---- adm ---- */

extern "C" const QmMetricDesc qm_metric_adm;

namespace admtest {

using namespace adm;

/* One scale's kernel on the host: every block, each phase for every thread
 * before the next phase (the kernel's __syncthreads()), the half-warp
 * reduction as a plain sum. */
template <typename T, bool S0, bool STATS, bool WRITE_A>
static void emulate_scale(const ScaleArgs &a, int ntx, int nty)
{
    Tile<S0> *sm = (Tile<S0> *)malloc(sizeof(Tile<S0>));
    Regs<S0> *r = (Regs<S0> *)malloc(sizeof(Regs<S0>) * kThreads);
    Sums *s = (Sums *)malloc(sizeof(Sums) * kThreads);
    for (int by = 0; by < nty; by++)
        for (int bx = 0; bx < ntx; bx++) {
            memset(sm, 0xA5, sizeof(*sm));
            memset(r, 0x5A, sizeof(Regs<S0>) * kThreads);
            for (int t = 0; t < kThreads; t++)
                phase_v<T, S0>(a, bx, by, t, *sm);
            for (int t = 0; t < kThreads; t++) {
                memset(&s[t], 0, sizeof(s[t]));
                phase_h<S0, STATS, WRITE_A>(a, bx, by, t, *sm, r[t], s[t]);
            }
            for (int t = 0; STATS && t < kThreads; t++)
                phase_n<S0>(a, bx, by, t, *sm, r[t], s[t]);
            for (int g = 0; STATS && g < kTH; g++) {
                Sums row;
                memset(&row, 0, sizeof(row));
                for (int l = 0; l < kLanes; l++)
                    for (int i = 0; i < kSums; i++)
                        row.v[i] += s[g * kLanes + l].v[i];
                write_partials(a, bx, by, g * kLanes, row);
            }
        }
    free(sm);
    free(r);
    free(s);
}

/* The twin's frame: four scale kernels and the final kernel. */
static void emulate_frame(const QmAdmScaleQ q[QM_ADM_SCALES], int bpc, double egl, int skip0,
                          const void *const in0[2], const ptrdiff_t st0[2], const int step0[2],
                          const int shift0[2], unsigned long long res[QM_ADM_SCALES * kSums])
{
    int32_t *band[QM_ADM_SCALES][2] = { { NULL } };
    ptrdiff_t bst[QM_ADM_SCALES] = { 0 };
    unsigned long long *part[QM_ADM_SCALES];
    FinalScale fs[QM_ADM_SCALES];
    for (int k = 0; k < QM_ADM_SCALES; k++) {
        int ntx, nty;
        tiles(&q[k], &ntx, &nty);
        /* poisoned: every value read must have been written */
        bst[k] = (ptrdiff_t)(((size_t)q[k].w + 3) * sizeof(int32_t));
        for (int p = 0; p < 2; p++) {
            band[k][p] = (int32_t *)malloc((size_t)bst[k] * q[k].h);
            memset(band[k][p], 0xA5, (size_t)bst[k] * q[k].h);
        }
        const size_t pn = (size_t)q[k].h * ntx * kSums;
        part[k] = (unsigned long long *)malloc(pn * sizeof(unsigned long long));
        memset(part[k], 0xA5, pn * sizeof(unsigned long long));
    }
    for (int k = 0; k < QM_ADM_SCALES; k++) {
        const void *in[2];
        ptrdiff_t st[2];
        int step[2], shift[2];
        for (int p = 0; p < 2; p++) {
            in[p] = k ? (const void *)band[k - 1][p] : in0[p];
            st[p] = k ? bst[k - 1] : st0[p];
            step[p] = k ? 1 : step0[p];
            shift[p] = k ? 0 : shift0[p];
        }
        const bool last = k == QM_ADM_SCALES - 1;
        const ScaleArgs a = scale_args(&q[k], bpc, egl, in, st, step, shift,
                                       last ? NULL : band[k], bst[k], part[k]);
        int ntx, nty;
        tiles(&q[k], &ntx, &nty);
        if (k == 0) {
            if (bpc == 8) {
                if (skip0)
                    emulate_scale<uint8_t, true, false, true>(a, ntx, nty);
                else
                    emulate_scale<uint8_t, true, true, true>(a, ntx, nty);
            } else {
                if (skip0)
                    emulate_scale<uint16_t, true, false, true>(a, ntx, nty);
                else
                    emulate_scale<uint16_t, true, true, true>(a, ntx, nty);
            }
        } else if (!last) {
            emulate_scale<int32_t, false, true, true>(a, ntx, nty);
        } else {
            emulate_scale<int32_t, false, true, false>(a, ntx, nty);
        }
        fs[k] = final_scale(&q[k], part[k], ntx, !(k == 0 && skip0));
    }
    for (int k = 0; k < QM_ADM_SCALES; k++) {
        unsigned long long acc[kSums] = { 0 };
        if (fs[k].active)
            for (int row = fs[k].y0; row < fs[k].y1; row++)
                final_row(fs[k], row, acc);
        memcpy(res + k * kSums, acc, sizeof(acc));
        free(band[k][0]);
        free(band[k][1]);
        free(part[k]);
    }
}

/* The C code's sums, through its stage functions (as cpu/adm.c
 * adm_compute calls them). */
static void c_sums(const QmAdmScaleQ q[QM_ADM_SCALES], int bpc, double egl, int skip0,
                   const void *ref, ptrdiff_t rst_, const void *dis, ptrdiff_t dst_,
                   unsigned long long res[QM_ADM_SCALES * kSums])
{
    const int bw = q[0].w, bh = q[0].h;
    const size_t row = ((size_t)bw + 15) & ~(size_t)15;
    const ptrdiff_t st = (ptrdiff_t)(row * sizeof(int32_t));
    enum { NP = 20 };
    int32_t *mem = (int32_t *)malloc(NP * row * bh * sizeof(int32_t));
    int32_t *pl[NP];
    for (int i = 0; i < NP; i++)
        pl[i] = mem + (size_t)i * row * bh;
    int32_t *recip = (int32_t *)malloc(QM_ADM_RECIP_SIZE * sizeof(int32_t));
    int32_t *tmp = (int32_t *)malloc(4 * (size_t)q[0].in_w * sizeof(int32_t));
    qm_adm_recip_table(recip);
    memset(res, 0, QM_ADM_SCALES * kSums * sizeof(*res));
    for (int k = 0; k < QM_ADM_SCALES; k++) {
        const void *ri = ref, *di = dis;
        ptrdiff_t rs = rst_, ds = dst_;
        if (k > 0) {
            ri = pl[0 + ((k - 1) & 1)];
            di = pl[2 + ((k - 1) & 1)];
            rs = ds = st;
        }
        int32_t *const rb[4] = { pl[0 + (k & 1)], pl[4], pl[5], pl[6] };
        int32_t *const db[4] = { pl[2 + (k & 1)], pl[7], pl[8], pl[9] };
        qm_adm_dwt_c(ri, rs, bpc, &q[k], rb, st, tmp);
        qm_adm_dwt_c(di, ds, bpc, &q[k], db, st, tmp);
        if (k == 0 && skip0)
            continue;
        const int32_t *const r3[3] = { rb[1], rb[2], rb[3] };
        const int32_t *const d3[3] = { db[1], db[2], db[3] };
        int32_t *const rsv[3] = { pl[10], pl[11], pl[12] };
        int32_t *const adv[3] = { pl[13], pl[14], pl[15] };
        int32_t *const mr[2] = { pl[16], pl[17] };
        int32_t *const ma[2] = { pl[18], pl[19] };
        qm_adm_decouple_c(r3, d3, st, &q[k], egl, recip, rsv, adv, mr, ma);
        const int32_t *const crs[3] = { rsv[0], rsv[1], rsv[2] };
        const int32_t *const cad[3] = { adv[0], adv[1], adv[2] };
        int64_t n[3];
        uint64_t d[3];
        qm_adm_num_c(crs, ma[0], ma[1], st, &q[k], n);
        for (int t = 0; t < 3; t++)
            res[k * kSums + t] = (unsigned long long)n[t];
        qm_adm_num_c(cad, mr[0], mr[1], st, &q[k], n);
        for (int t = 0; t < 3; t++)
            res[k * kSums + 3 + t] = (unsigned long long)n[t];
        qm_adm_den_c(r3, st, &q[k], d);
        for (int t = 0; t < 3; t++)
            res[k * kSums + 6 + t] = d[t];
    }
    free(mem);
    free(recip);
    free(tmp);
}

typedef struct OptSet {
    const char *name;
    double v[8]; /* QM_ADM_OPT_*: csf, dlmw, egl, min, nw, nvd, rdh, ssz */
} OptSet;

static const OptSet opt_sets[] = {
    { "default", { 0, 0.5, 100, 0, 0.03125, 3, 1080, 0 } },
    { "egl=1", { 0, 0.5, 1, 0, 0.03125, 3, 1080, 0 } },
    { "egl=1.5", { 0, 0.5, 1.5, 0, 0.03125, 3, 1080, 0 } },
    { "csf=1", { 1, 0.5, 100, 0, 0.03125, 3, 1080, 0 } },
    { "csf=2", { 2, 0.5, 100, 0, 0.03125, 3, 1080, 0 } },
    { "csf=3,rdh=720,nvd=5", { 3, 0.5, 100, 0, 0.03125, 5, 720, 0 } },
    { "nvd=24", { 0, 0.5, 100, 0, 0.03125, 24, 1080, 0 } },
    { "rdh=4320", { 0, 0.5, 100, 0, 0.03125, 3, 4320, 0 } },
    { "csf=1,rdh=4320,egl=2.7", { 1, 0.5, 2.7, 0, 0.03125, 3, 4320, 0 } },
    { "ssz=1", { 0, 0.5, 100, 0, 0.03125, 3, 1080, 1 } },
    { "nw=0,dlmw=1,min=1", { 0, 1, 100, 1, 0, 3, 1080, 0 } },
    { "nw=1500,dlmw=0", { 0, 0, 100, 0, 1500, 3, 1080, 0 } },
};
enum { N_OPT_SETS = sizeof(opt_sets) / sizeof(opt_sets[0]) };

enum { AP_RANDOM, AP_NOISY, AP_GAIN, AP_SAME, AP_ZERO, AP_MAX, AP_CHECKER, AP_DIS_ZERO,
       AP_SMOOTH, AP_INVERSE, AP_FLAT_REF, AP_N };

static int clampi(int v, int max)
{
    return v < 0 ? 0 : v > max ? max : v;
}

/* ref / dis samples of a pattern, w x h ints */
static void adm_pattern(int pat, int w, int h, int bpc, int *ref, int *dis)
{
    const int max = (1 << bpc) - 1, sc = bpc - 8;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int i = y * w + x;
            int r = (int)(rnd() % (uint32_t)(max + 1));
            if (pat == AP_SMOOTH) {
                r = (int)((0.5 + 0.4 * sin(x * 0.13 + y * 0.07) * cos(y * 0.11)) * max) +
                    (((int)(rnd() % 9) - 4) << (sc > 0 ? sc : 0));
                r = clampi(r, max);
            } else if (pat == AP_ZERO) {
                r = 0;
            } else if (pat == AP_MAX) {
                r = max;
            } else if (pat == AP_CHECKER) {
                r = ((x ^ y) & 1) ? max : 0;
            } else if (pat == AP_FLAT_REF) {
                r = max / 3;
            }
            int d;
            switch (pat) {
            case AP_NOISY: d = clampi(r + (((int)(rnd() % 9) - 4) << sc), max); break;
            case AP_GAIN: d = clampi(2 * r - (max + 1) / 2, max); break;
            case AP_SAME: case AP_ZERO: case AP_MAX: d = r; break;
            case AP_DIS_ZERO: d = 0; break;
            case AP_INVERSE: d = max - r; break;
            case AP_SMOOTH: d = r; break; /* blurred below */
            default: d = (int)(rnd() % (uint32_t)(max + 1)); break;
            }
            ref[i] = r;
            dis[i] = d;
        }
    if (pat == AP_SMOOTH) /* a blur and a contrast loss: realistic scores */
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                const int x1 = x + 1 < w ? x + 1 : x, y1 = y + 1 < h ? y + 1 : y;
                const int b = (ref[y * w + x] + ref[y * w + x1] + ref[y1 * w + x] +
                               ref[y1 * w + x1]) / 4;
                dis[y * w + x] = clampi((b * 7 + max / 2) / 8, max);
            }
}

/* One case: C sums and features against the emulated twin's.  layout 1:
 * the twin reads interleaved samples (step 2), MSB-aligned where the
 * container has room (shift). */
static int adm_case(int w, int h, int bpc, int pat, int os, int layout)
{
    const OptSet *o = &opt_sets[os];
    const int bytes = bpc > 8 ? 2 : 1;
    int *ref = (int *)malloc(sizeof(int) * w * h), *dis = (int *)malloc(sizeof(int) * w * h);
    adm_pattern(pat, w, h, bpc, ref, dis);
    /* planar for the C code, rows padded */
    const ptrdiff_t cst = (ptrdiff_t)(w * bytes + 24);
    uint8_t *cr = (uint8_t *)calloc((size_t)cst * h, 1), *cd = (uint8_t *)calloc((size_t)cst * h, 1);
    /* the twin's layout */
    const int step = layout ? 2 : 1, shift = layout && bpc > 8 ? 16 - bpc : 0;
    const ptrdiff_t gst = (ptrdiff_t)(w * bytes * step + 40);
    uint8_t *gr = (uint8_t *)calloc((size_t)gst * h, 1), *gd = (uint8_t *)calloc((size_t)gst * h, 1);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const int r = ref[y * w + x], d = dis[y * w + x];
            if (bytes == 1) {
                cr[y * cst + x] = (uint8_t)r;
                cd[y * cst + x] = (uint8_t)d;
                gr[y * gst + x * step] = (uint8_t)r;
                gd[y * gst + x * step] = (uint8_t)d;
                if (step == 2) {
                    gr[y * gst + x * step + 1] = 0xFF; /* the other chroma */
                    gd[y * gst + x * step + 1] = 0x11;
                }
            } else {
                ((uint16_t *)(cr + y * cst))[x] = (uint16_t)r;
                ((uint16_t *)(cd + y * cst))[x] = (uint16_t)d;
                ((uint16_t *)(gr + y * gst))[x * step] = (uint16_t)(r << shift);
                ((uint16_t *)(gd + y * gst))[x * step] = (uint16_t)(d << shift);
                if (step == 2) {
                    ((uint16_t *)(gr + y * gst))[x * step + 1] = 0xFFFF;
                    ((uint16_t *)(gd + y * gst))[x * step + 1] = 0x1234;
                }
            }
        }

    QmAdmParams par;
    par.csf_mode = (int)o->v[QM_ADM_OPT_CSF_MODE];
    par.norm_view_dist = o->v[QM_ADM_OPT_NVD];
    par.ref_display_height = (int)o->v[QM_ADM_OPT_RDH];
    const double egl = o->v[QM_ADM_OPT_EGL];
    const int skip0 = o->v[QM_ADM_OPT_SKIP_SCALE0] != 0;
    QmAdmScaleQ q[QM_ADM_SCALES];
    int in_w = w, in_h = h, bad = 0;
    for (int k = 0; k < QM_ADM_SCALES; k++) {
        if (qm_adm_scale_setup(&q[k], k, in_w, in_h, bpc, &par)) {
            printf("  adm: setup failed (%s)\n", o->name);
            bad = 1;
        }
        in_w = q[k].w;
        in_h = q[k].h;
    }
    unsigned long long cs[QM_ADM_SCALES * kSums], gs[QM_ADM_SCALES * kSums];
    if (!bad) {
        c_sums(q, bpc, egl, skip0, cr, cst, cd, cst, cs);
        const void *in[2] = { gr, gd };
        const ptrdiff_t st[2] = { gst, gst };
        const int steps[2] = { step, step }, shifts[2] = { shift, shift };
        emulate_frame(q, bpc, egl, skip0, in, st, steps, shifts, gs);
        for (int k = skip0; k < QM_ADM_SCALES; k++)
            for (int i = 0; i < kSums; i++)
                if (cs[k * kSums + i] != gs[k * kSums + i]) {
                    if (!bad || getenv("ADM_VERBOSE"))
                        printf("  adm %dx%d %d bits pattern %d %s layout %d: scale %d sum %d: "
                               "c %lld twin %lld\n", w, h, bpc, pat, o->name, layout, k, i,
                               (long long)cs[k * kSums + i], (long long)gs[k * kSums + i]);
                    bad = 1;
                }
    }
    /* the features: the descriptor's compute() against the twin's collect() */
    if (!bad) {
        QmOptValues ov;
        memset(&ov, 0, sizeof(ov));
        memcpy(ov.v, o->v, sizeof(o->v));
        const QmMetricConfig cfg = { w, h, bpc, QM_CHROMA_400, &ov };
        void *priv = calloc(1, qm_metric_adm.cpu.priv_size);
        double cv[QM_MAX_FEATURES], tv[QM_ADM_NFEATURES];
        uint8_t set[QM_MAX_FEATURES] = { 0 };
        int err = qm_metric_adm.cpu.init(priv, &cfg);
        if (!err) {
            QmPicture pr, pd;
            memset(&pr, 0, sizeof(pr));
            pr.w = w;
            pr.h = h;
            pr.bpc = bpc;
            pr.chroma = QM_CHROMA_400;
            pd = pr;
            pr.data[0] = cr;
            pr.stride[0] = cst;
            pd.data[0] = cd;
            pd.stride[0] = cst;
            QmRows rows;
            memset(&rows, 0, sizeof(rows));
            rows.v[0] = cv;
            rows.set[0] = set;
            const QmFrame fr = { &pr, &pd, 0 };
            err = qm_metric_adm.cpu.compute(priv, &fr, &rows);
            qm_metric_adm.cpu.close(priv);
        }
        free(priv);
        features(q, gs, skip0, o->v[QM_ADM_OPT_NOISE_WEIGHT], o->v[QM_ADM_OPT_DLM_WEIGHT],
                 o->v[QM_ADM_OPT_MIN_VAL], w, h, tv);
        for (int f = 0; f < QM_ADM_NFEATURES && !err; f++) {
            const bool same = memcmp(&cv[f], &tv[f], sizeof(double)) == 0 ||
                              (isnan(cv[f]) && isnan(tv[f]));
            if (!same && !bad) {
                printf("  adm %dx%d %d bits pattern %d %s: feature %d: c %.17g twin %.17g\n",
                       w, h, bpc, pat, o->name, f, cv[f], tv[f]);
                bad = 1;
            }
        }
        if (err) {
            printf("  adm: compute failed (%d)\n", err);
            bad = 1;
        }
    }
    free(ref);
    free(dis);
    free(cr);
    free(cd);
    free(gr);
    free(gd);
    return bad;
}

static int adm_tests(long *cases)
{
    static const int sizes[][2] = {
        { 33, 33 }, { 34, 33 }, { 33, 40 }, { 35, 37 }, { 47, 61 }, { 64, 48 }, { 65, 33 },
        { 100, 77 }, { 129, 67 }, { 130, 131 }, { 257, 129 }, { 321, 243 }, { 577, 323 },
    };
    static const int depths[] = { 8, 10, 12, 16 };
    const int ns = (int)(sizeof(sizes) / sizeof(sizes[0]));
    int fails = 0;
    *cases = 0;
    /* every size with every pattern, options, depths and layouts rotating */
    for (int si = 0; si < ns; si++)
        for (int pat = 0; pat < AP_N; pat++) {
            fails += adm_case(sizes[si][0], sizes[si][1], depths[(si * 3 + pat) % 4], pat,
                              (si + pat) % N_OPT_SETS, (si + pat) & 1);
            ++*cases;
        }
    /* every option set with the patterns that exercise the decoupling */
    for (int os = 0; os < N_OPT_SETS; os++)
        for (int pat = AP_NOISY; pat <= AP_GAIN; pat++)
            for (int di = 0; di < 4; di++) {
                const int si = (os + di + pat) % ns;
                fails += adm_case(sizes[si][0], sizes[si][1], depths[di], pat, os, di & 1);
                ++*cases;
            }
    /* Barten's weights (csf=1, above 1 and wrapped to 16 / 32 bits as the
     * reference converts them) give the largest CSF values: extreme
     * patterns with them */
    static const int extreme[] = { AP_CHECKER, AP_INVERSE, AP_RANDOM, AP_DIS_ZERO, AP_GAIN };
    for (int pi = 0; pi < 5; pi++)
        for (int di = 0; di < 4; di++)
            for (int si = 4; si < 9; si += 4) {
                fails += adm_case(sizes[si][0], sizes[si][1], depths[di], extreme[pi], 3, di & 1);
                ++*cases;
            }
    /* one 1080p frame of each depth */
    for (int di = 0; di < 4; di++) {
        fails += adm_case(1920, 1080, depths[di], di & 1 ? AP_SMOOTH : AP_NOISY, di == 3 ? 1 : 0, 0);
        ++*cases;
    }
    return fails;
}

} /* namespace admtest */

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

    long vif_rows;
    bad = vif_tests(&vif_rows);
    printf("vif: %ld of %ld rows of terms differ\n", bad, vif_rows);
    fails += bad != 0;

    long motion_cases;
    bad = motion_tests(&motion_cases);
    printf("motion: %ld of %ld pictures' row SADs differ\n", bad, motion_cases);
    fails += bad != 0;

    long adm_cases;
    const int adm_fails = admtest::adm_tests(&adm_cases);
    printf("adm: %d of %ld cases differ\n", adm_fails, adm_cases);
    fails += adm_fails != 0;

    printf("host_arith: %s\n", fails ? "FAIL" : "pass");
    return fails ? 1 : 0;
}
