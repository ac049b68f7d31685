#include "qmbench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint32_t rnd(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

void qb_synth_frame(int w, int bpc, int nplanes, const int pw[], const int ph[],
                    uint8_t *const ref[], uint8_t *const dist[],
                    const ptrdiff_t stride[], int f, uint32_t *rng)
{
    const int max = (1 << bpc) - 1;
    const int q = 1 << (bpc - 4);
    for (int p = 0; p < nplanes; p++) {
        /* chroma gratings at the luma frequencies, so all planes look alike */
        const double s = (double)w / pw[p];
        for (int y = 0; y < ph[p]; y++) {
            uint8_t *r8 = ref[p] + (ptrdiff_t)y * stride[p];
            uint8_t *d8 = dist[p] + (ptrdiff_t)y * stride[p];
            for (int x = 0; x < pw[p]; x++) {
                const double X = x * s + 3.0 * f, Y = y * s + 1.5 * f;
                double v = 0.5 + 0.18 * sin(X * 0.05) * cos(Y * 0.031) +
                           0.12 * sin((X + Y) * 0.21 + p) +
                           0.08 * sin(X * 0.9 + Y * 0.37) +
                           0.04 * ((int)(rnd(rng) & 255) - 128) / 128.0;
                int r = (int)(v * max + 0.5);
                r = r < 0 ? 0 : r > max ? max : r;
                int d = (r / q) * q + q / 2 + (int)(rnd(rng) % 3) - 1;
                d = d < 0 ? 0 : d > max ? max : d;
                if (bpc == 8) {
                    r8[x] = (uint8_t)r;
                    d8[x] = (uint8_t)d;
                } else {
                    ((uint16_t *)r8)[x] = (uint16_t)r;
                    ((uint16_t *)d8)[x] = (uint16_t)d;
                }
            }
        }
    }
}

char *qb_metric_list(const char *set)
{
    int n;
    char **v = qb_split(set, "+", &n);
    size_t len = 1;
    for (int i = 0; i < n; i++)
        len += strlen(QB_COMBINED) + strlen(v[i]) + 1;
    char *out = malloc(len);
    if (!out) {
        qb_free_list(v);
        return NULL;
    }
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        const char *m = v[i];
        if (!strcmp(m, "default"))
            m = "vmaf";
        else if (!strcmp(m, "combined"))
            m = QB_COMBINED;
        if (i)
            strcat(out, ",");
        strcat(out, m);
    }
    qb_free_list(v);
    return out;
}

char **qb_split(const char *s, const char *sep, int *n)
{
    size_t cap = 1;
    for (const char *c = s; *c; c++)
        cap += strchr(sep, *c) != NULL;
    char **v = calloc(cap + 1, sizeof(char *));
    char *d = strdup(s), *save = NULL;
    *n = 0;
    if (!v || !d) {
        free(d);
        return v;
    }
    for (char *t = strtok_r(d, sep, &save); t; t = strtok_r(NULL, sep, &save))
        v[(*n)++] = strdup(t);
    free(d);
    return v;
}

void qb_free_list(char **v)
{
    for (char **p = v; p && *p; p++)
        free(*p);
    free(v);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double qb_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n & 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double qb_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

void qb_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
    fputc('"', f);
}
