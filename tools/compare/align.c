/* qmetric-compare: the offset search on small luma pictures (align.h). */
#include "align.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void qmc_align_downscale(const uint8_t *src, ptrdiff_t stride, int sw, int sh, uint8_t *dst,
                         int dw, int dh)
{
    for (int y = 0; y < dh; y++) {
        /* 64-bit products: 8K rows times a grid of a few hundred */
        int y0 = (int)((int64_t)y * sh / dh), y1 = (int)((int64_t)(y + 1) * sh / dh);
        for (int x = 0; x < dw; x++) {
            int x0 = (int)((int64_t)x * sw / dw), x1 = (int)((int64_t)(x + 1) * sw / dw);
            uint64_t sum = 0, n = (uint64_t)(x1 - x0) * (uint64_t)(y1 - y0);
            for (int yy = y0; yy < y1; yy++) {
                const uint8_t *row = src + yy * stride;
                for (int xx = x0; xx < x1; xx++)
                    sum += row[xx];
            }
            dst[y * dw + x] = (uint8_t)((sum + n / 2) / n);
        }
    }
}

void qmc_align_grid(int rw, int rh, int dw, int dh, int *gw, int *gh)
{
    int w = rw / 8, h;
    if (w < 64)
        w = 64;
    if (w > rw)
        w = rw;
    if (w > dw)
        w = dw;
    h = (int)(((int64_t)w * rh + rw / 2) / rw);
    if (h < 1)
        h = 1;
    if (h > rh)
        h = rh;
    if (h > dh)
        h = dh;
    *gw = w;
    *gh = h;
}

/* Sum of squared differences of two pictures of n pixels. */
static uint64_t sse(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) {
        int d = (int)a[i] - (int)b[i];
        s += (uint64_t)(d * d);
    }
    return s;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* a is a better candidate than b: higher PSNR, then nearer 0, then negative */
static int better(int da, double pa, int db, double pb)
{
    if (pa != pb)
        return pa > pb;
    if (abs(da) != abs(db))
        return abs(da) < abs(db);
    return da < db;
}

int qmc_align_detect(const QmcLumaSeq *ref, const QmcLumaSeq *dist, int max_offset, int window,
                     QmcAlignResult *res, char *err, size_t err_len)
{
    const double peak2 = 255.0 * 255.0;
    const double mse_floor = peak2 / pow(10.0, QMC_ALIGN_PSNR_CAP / 10.0);
    int nmin = ref->n < dist->n ? ref->n : dist->n;
    int m = max_offset, w = window, n_cand, best = 0, second = 0;
    size_t px = (size_t)ref->width * (size_t)ref->height;
    double *mse, *sorted;

    memset(res, 0, sizeof(*res));
    if (ref->width != dist->width || ref->height != dist->height || !px) {
        snprintf(err, err_len, "the pictures to compare differ in size (%dx%d, %dx%d)",
                 ref->width, ref->height, dist->width, dist->height);
        return -1;
    }
    if (m > nmin - QMC_ALIGN_MIN_WINDOW) {
        m = nmin - QMC_ALIGN_MIN_WINDOW;
        res->narrowed = 1;
    }
    if (m < 1) {
        snprintf(err, err_len, "too short to look for an offset: the reference has %d frames, "
                 "the distorted %d; at least %d each are needed (a window of %d frames and "
                 "one frame of offset)", ref->n, dist->n, QMC_ALIGN_MIN_WINDOW + 1,
                 QMC_ALIGN_MIN_WINDOW);
        return -1;
    }
    if (w > nmin - m)
        w = nmin - m;
    n_cand = 2 * m + 1;
    mse = malloc(sizeof(double) * n_cand);
    sorted = malloc(sizeof(double) * n_cand);
    res->psnr = malloc(sizeof(double) * n_cand);
    if (!mse || !sorted || !res->psnr) {
        free(mse);
        free(sorted);
        qmc_align_result_clear(res);
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    for (int d = -m; d <= m; d++) {
        uint64_t total = 0;
        double e;
        for (int i = 0; i < w; i++) {
            int ri = d >= 0 ? i + d : i, di = d >= 0 ? i : i - d;
            total += sse(ref->frame[ri], dist->frame[di], px);
        }
        e = (double)total / ((double)px * w);
        if (e < mse_floor)
            e = mse_floor;
        mse[d + m] = e;
        res->psnr[d + m] = 10.0 * log10(peak2 / e);
    }
    for (int d = -m; d <= m; d++)
        if (better(d, res->psnr[d + m], best, res->psnr[best + m]))
            best = d;
    second = best == -m ? -m + 1 : -m;
    for (int d = -m; d <= m; d++)
        if (d != best && better(d, res->psnr[d + m], second, res->psnr[second + m]))
            second = d;
    memcpy(sorted, res->psnr, sizeof(double) * n_cand);
    qsort(sorted, n_cand, sizeof(double), cmp_double);
    res->offset = best;
    res->second_offset = second;
    res->psnr_best = res->psnr[best + m];
    res->psnr_second = res->psnr[second + m];
    res->psnr_median = sorted[m]; /* n_cand is odd: the middle value */
    res->confidence = 1.0 - mse[best + m] / mse[second + m];
    if (res->confidence < 0)
        res->confidence = 0;
    res->is_static = res->psnr_best - res->psnr_median < QMC_ALIGN_STATIC_DB;
    res->max_offset = m;
    res->window = w;
    free(mse);
    free(sorted);
    return 0;
}

void qmc_align_result_clear(QmcAlignResult *res)
{
    free(res->psnr);
    res->psnr = NULL;
}
