/* gst-qmetric: SpEED-QA on the chroma planes, libvmaf 3.2.0's
 * "speed_chroma" feature extractor (src/feature/speed.c).  The stages and
 * their precision are described in speed.h.
 *
 * Features (libvmaf's keys, option suffixes appended by the engine):
 *   speed_chroma_u, speed_chroma_v   SpEED of the Cb and Cr planes
 *   speed_chroma_uv                  their mean (the VMAF v1 model input)
 * each clipped to speed_max_val.
 *
 * Every float operation below is written in the order and the types
 * (float vs double) of the reference: SpEED's linear algebra runs in single
 * precision on nearly singular matrices, so a different rounding anywhere
 * shows in the fourth decimal.  Where a double appears in a float
 * expression it is because the reference has a double constant or a double
 * libm call there.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "speed.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#ifndef M_E
#define M_E 2.7182818284590452354
#endif

/* ---- sizes ---- */

int qm_speed_dims(QmSpeedDims *d, int w, int h, double prescale)
{
    memset(d, 0, sizeof(*d));
    d->w = w;
    d->h = h;
    /* libvmaf: (int)(original * speed_prescale + 0.5) */
    d->sw = (int)((double)w * prescale + 0.5);
    d->sh = (int)((double)h * prescale + 0.5);
    d->ow = d->sw >> QM_SPEED_SCALES;
    d->oh = d->sh >> QM_SPEED_SCALES;
    d->tw = d->ow / QM_SPEED_BLOCK * QM_SPEED_BLOCK;
    d->th = d->oh / QM_SPEED_BLOCK * QM_SPEED_BLOCK;
    d->nbh = d->tw / QM_SPEED_BLOCK;
    d->nbv = d->th / QM_SPEED_BLOCK;
    d->nb = d->nbh * d->nbv;
    d->subw = d->tw - QM_SPEED_BLOCK + 1;
    d->subh = d->th - QM_SPEED_BLOCK + 1;
    d->stride = (size_t)QM_MAX(w, d->sw);
    d->rows = (size_t)QM_MAX(h, d->sh);
    /* libvmaf logs "image too small" here and goes on with no block (its
     * score is then 0 / 0); we refuse the geometry instead */
    if (d->nb == 0)
        return QM_ENOTSUP;
    return 0;
}

int qm_speed_rescales(double prescale)
{
    /* libvmaf: !ALMOST_EQUAL(prescale, 1.0), i.e. |x - 1| >= 1e-3 */
    return !(fabs(prescale - 1.0) < 1.0e-3);
}

/* ---- stage 1: samples to float (libvmaf picture_copy()) ---- */

void qm_speed_to_float_c(float *dst, size_t dst_stride, const void *src,
                         ptrdiff_t src_stride, int w, int h, int bpc)
{
    /* picture_copy(..., offset -128, ...): 8-bit samples as they are,
     * deeper ones divided by 4, 16 or 256 (in float) first */
    for (int y = 0; y < h; y++) {
        const uint8_t *row = (const uint8_t *)src + (ptrdiff_t)y * src_stride;
        float *o = dst + (size_t)y * dst_stride;
        if (bpc == 8) {
            for (int x = 0; x < w; x++)
                o[x] = (float)row[x] + -128;
        } else {
            const float scaler = bpc == 10 ? 4.0f : bpc == 12 ? 16.0f : 256.0f;
            const uint16_t *r16 = (const uint16_t *)row;
            for (int x = 0; x < w; x++)
                o[x] = (float)r16[x] / scaler + -128;
        }
    }
}

/* ---- stage 2: rescaling (libvmaf vif_tools.c vif_scale_frame_s) ---- */

/* vif_tools.c mirror(): floats in and out */
static float mirror_f(float i, float left, float right)
{
    return i < left ? -i : i > right ? 2 * right - i : i;
}

void qm_speed_bilinear_pos(int i, float ratio, int n, int *i1, int *i2,
                           float *frac)
{
    /* "(i + 0.5) * ratio - 0.5" is evaluated in double and stored as a
     * float, as libvmaf's precomputed tables */
    const float ii = (float)((i + 0.5) * ratio - 0.5);
    *i1 = (int)mirror_f((float)floor(ii), 0, (float)(n - 1));
    *i2 = (int)mirror_f((float)ceil(ii), 0, (float)(n - 1));
    *frac = ii - *i1;
}

static void rescale_nearest(const float *src, int sw, int sh, float *dst,
                            int dw, int dh, size_t stride)
{
    const float rx = (float)sw / dw, ry = (float)sh / dh;
    for (int y = 0; y < dh; y++)
        for (int x = 0; x < dw; x++) {
            const int sy = (int)(y * ry), sx = (int)(x * rx);
            dst[(size_t)y * stride + x] = src[(size_t)sy * stride + sx];
        }
}

static int rescale_bilinear(const float *src, int sw, int sh, float *dst,
                            int dw, int dh, size_t stride)
{
    /* source columns and weights per output column, as libvmaf's
     * precomputed table */
    int *x1 = malloc(sizeof(int) * (size_t)dw * 2);
    float *dx = malloc(sizeof(float) * (size_t)dw);
    if (!x1 || !dx) {
        free(x1);
        free(dx);
        return QM_ENOMEM;
    }
    int *x2 = x1 + dw;
    const float rx = (float)sw / dw;
    for (int x = 0; x < dw; x++)
        qm_speed_bilinear_pos(x, rx, sw, &x1[x], &x2[x], &dx[x]);
    const float ry = (float)sh / dh;
    for (int y = 0; y < dh; y++) {
        int y1, y2;
        float dy;
        qm_speed_bilinear_pos(y, ry, sh, &y1, &y2, &dy);
        const float *r1 = src + (size_t)y1 * stride;
        const float *r2 = src + (size_t)y2 * stride;
        float *o = dst + (size_t)y * stride;
        for (int x = 0; x < dw; x++) {
            const float fx = dx[x];
            o[x] = (1 - dy) * (1 - fx) * r1[x1[x]] + (1 - dy) * fx * r1[x2[x]] +
                   dy * (1 - fx) * r2[x1[x]] + dy * fx * r2[x2[x]];
        }
    }
    free(x1);
    free(dx);
    return 0;
}

/* Keys' cubic convolution kernel with a = -0.75 (vif_tools.c) */
static float cubic(float t)
{
    const float a = -0.75f;
    if (t < 0)
        t = -t;
    if (t < 1)
        return ((a + 2) * t - (a + 3)) * t * t + 1;
    if (t < 2)
        return (((t - 5) * t + 8) * t - 4) * a;
    return 0;
}

static float lanczos(float x, float a)
{
    if (x == 0.0)
        return 1.0;
    if (x > -a && x < a)
        return (float)(a * sin(M_PI * x) * sin(M_PI * x / a) /
                       (M_PI * M_PI * x * x));
    return 0.0;
}

int qm_speed_interp_taps(int lanczos4, int i, float ratio, float *w)
{
    const int a = lanczos4 ? 4 : 2;
    const int lo = lanczos4 ? -4 : -1, hi = lanczos4 ? 4 : 2;
    /* the source position in double, stored as a float (as bilinear) */
    const float pos = (float)((i + 0.5) * ratio - 0.5);
    const int p0 = (int)floor(pos);
    const float f = pos - p0;
    for (int k = lo; k <= hi; k++)
        w[k - lo] = lanczos4 ? lanczos(k - f, (float)a) : cubic(k - f);
    return p0;
}

/* Bicubic (radius 2) or Lanczos-4 (radius 4) around source sample
 * (x0, y0) with the taps' weights wx, wy (qm_speed_interp_taps()), taps
 * mirrored at the borders; Lanczos divides by its weight sum. */
static float interpolate(const float *src, int sw, int sh, size_t stride,
                         int x0, const float *wx, int y0, const float *wy,
                         int lanczos4)
{
    const int lo = lanczos4 ? -4 : -1, hi = lanczos4 ? 4 : 2;
    float v = 0.0, wsum = 0.0;
    for (int j = lo; j <= hi; j++)
        for (int i = lo; i <= hi; i++) {
            const float wgt = wx[i - lo] * wy[j - lo];
            wsum += wgt;
            const int xi = (int)mirror_f((float)(x0 + i), 0, (float)(sw - 1));
            const int yi = (int)mirror_f((float)(y0 + j), 0, (float)(sh - 1));
            v += src[(size_t)yi * stride + xi] * wgt;
        }
    return lanczos4 ? v / wsum : v;
}

int qm_speed_rescale_c(QmSpeedScaler method, const float *src, int sw,
                       int sh, float *dst, int dw, int dh, size_t stride)
{
    if (sw == dw && sh == dh) {
        for (int y = 0; y < dh; y++)
            memcpy(dst + (size_t)y * stride, src + (size_t)y * stride,
                   sizeof(float) * (size_t)dw);
        return 0;
    }
    switch (method) {
    case QM_SPEED_NEAREST:
        rescale_nearest(src, sw, sh, dst, dw, dh, stride);
        return 0;
    case QM_SPEED_BILINEAR:
        return rescale_bilinear(src, sw, sh, dst, dw, dh, stride);
    case QM_SPEED_BICUBIC:
    case QM_SPEED_LANCZOS4: {
        const int l4 = method == QM_SPEED_LANCZOS4;
        const float rx = (float)sw / dw, ry = (float)sh / dh;
        float wx[QM_SPEED_INTERP_TAPS], wy[QM_SPEED_INTERP_TAPS];
        for (int y = 0; y < dh; y++) {
            const int y0 = qm_speed_interp_taps(l4, y, ry, wy);
            for (int x = 0; x < dw; x++) {
                const int x0 = qm_speed_interp_taps(l4, x, rx, wx);
                dst[(size_t)y * stride + x] =
                    interpolate(src, sw, sh, stride, x0, wx, y0, wy, l4);
            }
        }
        return 0;
    }
    }
    return QM_EINVAL;
}

/* ---- stages 3 and 4: Gaussian blur (libvmaf vif_filter1d_s) ---- */

static int mirror_i(int i, int n)
{
    return i < 0 ? -i : i >= n ? 2 * n - i - 2 : i;
}

void qm_speed_filter_c(const float *f, int fw, const float *src, float *dst,
                       float *tmp, int w, int h, size_t stride)
{
    /* Each output is the same sum, taps in order from 0, as a per-sample
     * loop would give (0 + f0 x0 is f0 x0 exactly; no contraction, see
     * meson.build); the loops run over a row at a time so that the compiler
     * vectorises them, 5x faster than per sample (VMAF v1 on the CPU spent
     * 70% of its time here) */
    const int r = fw / 2;
    const int lo = r < w ? r : w, hi = w - (fw - 1 - r) > lo ? w - (fw - 1 - r) : lo;
    for (int i = 0; i < h; i++) {
        float *restrict t = tmp;
        for (int j = 0; j < w; j++)
            t[j] = 0;
        for (int k = 0; k < fw; k++) {
            const float *restrict row = src + (size_t)mirror_i(i - r + k, h) * stride;
            const float c = f[k];
            for (int j = 0; j < w; j++)
                t[j] += c * row[j];
        }
        float *restrict d = dst + (size_t)i * stride;
        /* the edges mirror; the middle reads tmp straight */
        for (int j = 0; j < lo; j++) {
            float acc = 0;
            for (int k = 0; k < fw; k++)
                acc += f[k] * tmp[mirror_i(j - r + k, w)];
            d[j] = acc;
        }
        for (int j = lo; j < hi; j++)
            d[j] = 0;
        for (int k = 0; k < fw; k++) {
            const float c = f[k];
            const float *restrict in = tmp + k - r;
            for (int j = lo; j < hi; j++)
                d[j] += c * in[j];
        }
        for (int j = hi; j < w; j++) {
            float acc = 0;
            for (int k = 0; k < fw; k++)
                acc += f[k] * tmp[mirror_i(j - r + k, w)];
            d[j] = acc;
        }
    }
}

/* libvmaf vif_tools.h valid_kernelscales[] */
static const float kernelscales[] = {
    1.0f, 1.0f / 2.0f, 3.0f / 2.0f, 2.0f, 2.0f / 3.0f, 24.0f / 10.0f,
    360.0f / 97.0f, 4.0f / 3.0f, 3.5f / 3.0f, 3.75f / 3.0f, 4.25f / 3.0f,
    5.0f / 3.0f, 3.0f, 1.0f / 2.25f, 1.4746f, 1.54f, 1.6f, 1.06667f,
    0.711111f, 0.740740f, 1.111111f,
};

int qm_speed_kernelscale_ok(double kernelscale)
{
    const float k = (float)kernelscale;
    for (size_t i = 0; i < sizeof(kernelscales) / sizeof(kernelscales[0]); i++)
        if (fabsf(k - kernelscales[i]) < 1e-3)
            return 1;
    return 0;
}

/* vif_get_filter_size(): 2^(4 - scale) + 1 taps times the kernel scale,
 * rounded up to odd, at least 3 */
static int filter_size(int scale, float kernelscale)
{
    const int n = (1 << (4 - scale)) + 1;
    int c = (int)ceil(n * kernelscale);
    if (c % 2 == 0)
        c++;
    return c > 3 ? c : 3;
}

/* get_1d_gaussian_kernel(): a sampled normal pdf, normalised to sum 1 (the
 * pdf is multiplied by sigma sqrt(2 pi) instead of divided: the
 * normalisation cancels it, the rounding is the reference's) */
static void gaussian(float *out, int size, float sd)
{
    float sum = 0;
    const int k = (size - 1) / 2;
    for (int i = 0; i < size; i++) {
        const float x = (float)(i - k);
        const float num = (float)exp(-0.5 * x / sd * x / sd);
        const float den = (float)(1 / (sd * sqrt(2 * M_PI)));
        out[i] = num / den;
        sum += out[i];
    }
    for (int i = 0; i < size; i++)
        out[i] /= sum;
}

int qm_speed_blur_taps(float *f, double kernelscale)
{
    const int n = filter_size(QM_SPEED_SCALES, (float)kernelscale);
    gaussian(f, n, n / 5.0f);
    return n;
}

int qm_speed_antialias_taps(float *f, double kernelscale)
{
    /* the scale-1 size, sigma times sqrt(NUM_SCALES) */
    const int n = filter_size(1, (float)kernelscale);
    gaussian(f, n, (float)(sqrt(QM_SPEED_SCALES) * n / 5.0f));
    return n;
}

/* ---- stage 5: covariance ---- */

void qm_speed_cov_c(const QmSpeedDims *d, const float *data, float *cov)
{
    const size_t st = d->stride;
    const size_t cnt = (size_t)d->subw * (size_t)d->subh;
    float mean[QM_SPEED_N];
    for (int r = 0; r < QM_SPEED_BLOCK; r++)
        for (int c = 0; c < QM_SPEED_BLOCK; c++) {
            float s = 0;
            for (int i = 0; i < d->subh; i++)
                for (int j = 0; j < d->subw; j++)
                    s += data[(size_t)(r + i) * st + (size_t)(c + j)];
            mean[r * QM_SPEED_BLOCK + c] = s / (float)cnt;
        }
    for (int a = 0; a < QM_SPEED_N; a++) {
        const float *pa = data + (size_t)(a / QM_SPEED_BLOCK) * st + a % QM_SPEED_BLOCK;
        const double ma = mean[a];
        for (int b = 0; b <= a; b++) {
            const float *pb = data + (size_t)(b / QM_SPEED_BLOCK) * st + b % QM_SPEED_BLOCK;
            const double mb = mean[b];
            double s = 0;
            for (int i = 0; i < d->subh; i++)
                for (int j = 0; j < d->subw; j++) {
                    const double va = pa[(size_t)i * st + j];
                    const double vb = pb[(size_t)i * st + j];
                    s += (va - ma) * (vb - mb);
                }
            const float v = (float)(s / (double)cnt);
            cov[a * QM_SPEED_N + b] = v;
            cov[b * QM_SPEED_N + a] = v;
        }
    }
}

/* ---- stage 5: eigenvalues (GSL symmtd + symm, in float, as libvmaf) ---- */

static float hypot_f(float x, float y)
{
    return (float)sqrt(x * x + y * y);
}

static int sign_of(float x)
{
    return x >= 0 ? 1 : -1;
}

/* Householder vector of column col below row r (in place, v[0] implied 1,
 * A[r][col] = beta); returns tau. */
static float householder(float *a, int col, int r, int n)
{
    if (n - r == 1)
        return 0.0f;
    float norm = 0;
    for (int i = r + 1; i < n; i++)
        norm += a[i * n + col] * a[i * n + col];
    const float xnorm = (float)sqrt(norm);
    if (xnorm == 0.0f)
        return 0.0f;
    const float alpha = a[r * n + col];
    const float beta = -sign_of(alpha) * hypot_f(alpha, xnorm);
    const float tau = (beta - alpha) / beta;
    const float s = alpha - beta;
    if (s != 0.0f) {
        for (int i = r; i < n; i++)
            a[i * n + col] /= s;
        a[r * n + col] = beta;
    }
    return tau;
}

static void tridiagonalize(float *a, int n, float *d, float *sd, float *v,
                           float *x)
{
    for (int i = 0; i < n - 2; i++) {
        const float tau = householder(a, i, i + 1, n);
        for (int j = i + 1; j < n; j++)
            v[j] = a[j * n + i];
        if (tau == 0.0f)
            continue;
        v[i + 1] = 1.0f;
        const int s = i + 1;
        for (int r = s; r < n; r++) {  /* x = tau A v */
            x[r] = 0.0f;
            for (int c = s; c < n; c++)
                x[r] += tau * a[r * n + c] * v[c];
        }
        float xv = 0;
        for (int r = s; r < n; r++)
            xv += x[r] * v[r];
        const float alpha = (float)(-0.5 * tau * xv);
        for (int r = s; r < n; r++)  /* x -= (tau/2)(x.v) v */
            x[r] += alpha * v[r];
        for (int r = s; r < n; r++)  /* A -= x v' + v x' */
            for (int c = s; c < n; c++)
                a[r * n + c] -= x[r] * v[c] + v[r] * x[c];
    }
    for (int i = 0; i < n; i++)
        d[i] = a[i * n + i];
    for (int i = 0; i < n - 1; i++)
        sd[i] = a[(i + 1) * n + i];
}

static void chop(float *d, float *sd, int n)
{
    for (int i = 0; i < n - 1; i++)
        if (fabsf(sd[i]) < QM_SPEED_EIG_EPS * (fabsf(d[i]) + fabsf(d[i + 1])))
            sd[i] = 0.0f;
}

/* Wilkinson shift from the trailing 2x2 block */
static float wilkinson(const float *d, const float *sd, int n)
{
    const float ta = d[n - 2], tb = d[n - 1], tab = sd[n - 2];
    const float dt = (float)((ta - tb) / 2.0);
    if (dt > 0)
        return tb - tab * (tab / (dt + hypot_f(dt, tab)));
    if (dt == 0)
        return tb - fabsf(tab);
    return tb + tab * (tab / (-dt + hypot_f(dt, tab)));
}

static void givens(float a, float b, float *c, float *s)
{
    if (b == 0) {
        *c = 1;
        *s = 0;
    } else if (fabsf(b) > fabsf(a)) {
        const float t = -a / b;
        const float s1 = (float)(1.0 / sqrt(1 + t * t));
        *s = s1;
        *c = s1 * t;
    } else {
        const float t = -b / a;
        const float c1 = (float)(1.0 / sqrt(1 + t * t));
        *c = c1;
        *s = c1 * t;
    }
}

/* One implicit symmetric QR step with Wilkinson shift on the unreduced
 * block d[0..n-1], sd[0..n-2] (GSL qrstep). */
static void qr_step(float *d, float *sd, int n)
{
    float mu = wilkinson(d, sd, n);
    if (QM_SPEED_EIG_EPS * fabsf(mu) > fabsf(d[0]) + fabsf(sd[0]))
        mu = 0;
    float x = d[0] - mu, z = sd[0];
    float ak = 0, bk = 0, zk = 0;
    float ap = d[0], bp = sd[0], aq = d[1];
    float c, s;

    if (n == 2) {
        givens(x, z, &c, &s);
        const float ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        const float bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        const float aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        d[0] = ap1;
        sd[0] = bp1;
        d[1] = aq1;
        return;
    }

    float bq = sd[1];
    for (int k = 0; k < n - 1; k++) {
        givens(x, z, &c, &s);
        const float bk1 = c * bk - s * zk;
        const float ap1 = c * (c * ap - s * bp) + s * (s * aq - c * bp);
        const float bp1 = c * (s * ap + c * bp) - s * (s * bp + c * aq);
        const float zp1 = -s * bq;
        const float aq1 = s * (s * ap + c * bp) + c * (s * bp + c * aq);
        const float bq1 = c * bq;
        ak = ap1;
        bk = bp1;
        zk = zp1;
        ap = aq1;
        bp = bq1;
        if (k < n - 2)
            aq = d[k + 2];
        if (k < n - 3)
            bq = sd[k + 2];
        d[k] = ak;
        if (k > 0)
            sd[k - 1] = bk1;
        if (k < n - 2)
            sd[k + 1] = bp;
        x = bk;
        z = zk;
    }
    d[n - 1] = ap;
    sd[n - 2] = bk;
}

void qm_speed_eigen_c(const float *a_in, float *eig, int n)
{
    float a[QM_SPEED_N * QM_SPEED_N], d[QM_SPEED_N], sd[QM_SPEED_N];
    float v[QM_SPEED_N], x[QM_SPEED_N];
    if (n < 1 || n > QM_SPEED_N)
        return;
    memcpy(a, a_in, sizeof(float) * (size_t)n * (size_t)n);
    if (n == 1) {
        eig[0] = a[0];
        return;
    }
    tridiagonalize(a, n, d, sd, v, x);

    chop(d, sd, n);
    int b = n - 1, iter = 0;
    /* the reference stops after 500 steps (with a warning) and uses what
     * it has: so do we */
    while (b > 0 && iter < QM_SPEED_EIG_MAX_ITERS) {
        if (sd[b - 1] == 0.0f) {
            b--;
            continue;
        }
        int a0 = b - 1;
        while (a0 > 0 && sd[a0 - 1] != 0.0f)
            a0--;
        qr_step(d + a0, sd + a0, b - a0 + 1);
        chop(d + a0, sd + a0, b - a0 + 1);
        iter++;
    }
    memcpy(eig, d, sizeof(float) * (size_t)n);
}

/* ---- stage 5: K X = Y by Householder QR (libvmaf's dense formulation) ---- */

/* dst = x (n x n) * y (n x m), float sums in k order */
static void matmul(float *dst, const float *x, const float *y, int n, int m)
{
    memset(dst, 0, sizeof(float) * (size_t)n * (size_t)m);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++)
            for (int j = 0; j < m; j++)
                dst[(size_t)i * m + j] += x[i * n + k] * y[(size_t)k * m + j];
}

static void transpose(float *a, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) {
            const float t = a[i * n + j];
            a[i * n + j] = a[j * n + i];
            a[j * n + i] = t;
        }
}

static float norm_f(const float *v, int n)
{
    float s = 0;
    for (int i = 0; i < n; i++)
        s += v[i] * v[i];
    return (float)sqrt(s);
}

/*
 * Q R = A with n - 1 full Householder reflections H_k = I - 2 v v' built
 * from column k of the partly reduced matrix Z (rows/columns < k set to the
 * identity first); Q accumulates H_k ... H_1 and R = Q A, then Q is
 * transposed.  Note the sign of each reflection comes from A[k][k], the
 * original matrix, as in the reference.
 */
static void qr_decompose(const float *a, float *q, float *r, float *h,
                         float *z, int n)
{
    float *tmp = r;  /* R is free until the end */
    float v[QM_SPEED_N];
    memcpy(z, a, sizeof(float) * (size_t)n * (size_t)n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            q[i * n + j] = i == j ? 1 : 0;
    for (int k = 0; k < n - 1; k++) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (i < k || j < k)
                    z[i * n + j] = i == j ? 1 : 0;
        for (int i = 0; i < n; i++)
            v[i] = z[i * n + k];
        const float nrm = norm_f(v, n);
        v[k] += sign_of(a[k * n + k]) * nrm;
        const float len = norm_f(v, n);
        for (int i = 0; i < n; i++)
            v[i] = v[i] / len;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                h[i * n + j] = -2 * v[i] * v[j];
        for (int i = 0; i < n; i++)
            h[i * n + i] += 1;
        matmul(tmp, h, z, n, n);
        memcpy(z, tmp, sizeof(float) * (size_t)n * (size_t)n);
        matmul(tmp, h, q, n, n);
        memcpy(q, tmp, sizeof(float) * (size_t)n * (size_t)n);
    }
    matmul(r, q, a, n, n);
    transpose(q, n);
}

void qm_speed_qr_c(const float *a, float *qr, float *work)
{
    const int n = QM_SPEED_N;
    qr_decompose(a, qr, qr + n * n, work, work + n * n, n);
}

/* X = R^-1 (Q' B) with qr = Q, R of A (qm_speed_qr_c()); nonzero when a
 * diagonal element of R is below 1e-6 */
static int solve(const float *qr, const float *b, float *x, int n, int m,
                 float *work)
{
    float *q = work, *qb = q + n * n;
    const float *r = qr + n * n;
    memcpy(q, qr, sizeof(float) * (size_t)n * (size_t)n);
    transpose(q, n);
    matmul(qb, q, b, n, m);
    for (int i = n - 1; i >= 0; i--) {
        const float den = r[i * n + i];
        if (fabsf(den) < QM_SPEED_EIG_EPS)
            return -1;
        for (int j = 0; j < m; j++) {
            float t = qb[(size_t)i * m + j];
            for (int k = i + 1; k < n; k++)
                t -= x[(size_t)k * m + j] * r[i * n + k];
            x[(size_t)i * m + j] = t / den;
        }
    }
    return 0;
}

size_t qm_speed_estimate_work(const QmSpeedDims *d)
{
    const size_t nn = QM_SPEED_N * QM_SPEED_N, nm = (size_t)QM_SPEED_N * d->nb;
    /* cov, eigenvalues, Y, X, Q and R, then qm_speed_qr_c(): H, Z, or
     * solve(): Q, Q'Y */
    return nn + QM_SPEED_N + nm + nm + 2 * nn + QM_MAX(2 * nn, nn + nm);
}

int qm_speed_estimate_c(const QmSpeedDims *d, const float *data,
                        float sigma_nn, float *entropy, float *variance,
                        float *work)
{
    qm_speed_cov_c(d, data, work);
    return qm_speed_estimate_cov_c(d, data, work, NULL, sigma_nn, entropy,
                                   variance, work);
}

int qm_speed_estimate_cov_c(const QmSpeedDims *d, const float *data,
                            const float *cov, const float *qr, float sigma_nn,
                            float *entropy, float *variance, float *work)
{
    const int n = QM_SPEED_N, nb = d->nb;
    /* work's first n * n floats are the covariance's place (cov may be
     * there already) */
    float *eig = work + n * n, *y = eig + n;
    float *x = y + (size_t)n * nb, *own_qr = x + (size_t)n * nb;
    float *tmp = own_qr + 2 * n * n;

    qm_speed_eigen_c(cov, eig, n);

    /* Y[k][block]: sample k (row-major in the 5x5 block) of each block */
    for (int by = 0; by < d->nbv; by++)
        for (int bx = 0; bx < d->nbh; bx++)
            for (int k = 0; k < n; k++)
                y[(size_t)k * nb + by * d->nbh + bx] =
                    data[(size_t)(by * QM_SPEED_BLOCK + k / QM_SPEED_BLOCK) *
                             d->stride +
                         (size_t)(bx * QM_SPEED_BLOCK + k % QM_SPEED_BLOCK)];

    int singular = 0;
    for (int k = 0; k < n; k++)
        if (eig[k] < QM_SPEED_EIG_EPS)
            singular = 1;
    if (!singular) {
        if (!qr) {
            qm_speed_qr_c(cov, own_qr, tmp);
            qr = own_qr;
        }
        singular = solve(qr, y, x, n, nb, tmp) != 0;
    }
    if (singular)
        memset(x, 0, sizeof(float) * (size_t)n * nb);

    /* s = sum_k X[k] Y[k] / 25 per block, summed over k in order */
    for (size_t i = 0; i < (size_t)n * nb; i++)
        x[i] = (x[i] * y[i]) / (float)n;
    for (int k = 1; k < n; k++)
        for (int j = 0; j < nb; j++)
            x[j] += x[(size_t)k * nb + j];

    const double log2_2pie = log2(2 * M_PI * M_E);
    for (int j = 0; j < nb; j++)
        entropy[j] = 0;
    for (int k = 0; k < n; k++) {
        const float l = eig[k] < 0 ? 0 : eig[k];
        for (int j = 0; j < nb; j++)
            entropy[j] = (float)(entropy[j] + (log2(l * x[j] + sigma_nn) +
                                               log2_2pie));
    }
    memcpy(variance, x, sizeof(float) * (size_t)nb);
    return singular;
}

/* ---- stage 6 ---- */

float qm_speed_score(const QmSpeedDims *d, const float *e_ref,
                     const float *v_ref, const float *e_dis,
                     const float *v_dis, float sigma_nn, float nn_floor,
                     int mode)
{
    float score = 0;
    const float base = (float)(QM_SPEED_N * (log2((1 + nn_floor) * sigma_nn) +
                                             log2(2 * M_PI * M_E)));
    for (int i = 0; i < d->nb; i++) {
        if (e_ref[i] < base && e_dis[i] < base)
            continue;  /* no visible information in either */
        /* the argument of each log2 in the reference's types: a single
         * variance plus 1 is a float sum, a blend of two is double */
        const float vr = v_ref[i], vd = v_dis[i];
        double ar, ad;
        switch (mode) {
        case 0: ar = 1 + vr; ad = 1 + vd; break;
        case 1: ar = 1 + vr; ad = 1 + vr; break;
        case 2: ar = 1 + vd; ad = 1 + vd; break;
        case 3: ar = ad = 1 + (vr + vd) / 2.0; break;
        case 4: ar = 1 + vr; ad = 1 + (vr + vd) / 2.0; break;
        case 5: ar = 1 + vr; ad = 1 + (0.75 * vr + 0.25 * vd); break;
        default: ar = 1 + vr; ad = 1 + (0.25 * vr + 0.75 * vd); break;
        }
        const float sr = (float)(e_ref[i] * log2(ar));
        const float sdis = (float)(e_dis[i] * log2(ad));
        score += fabsf(sr - sdis);
    }
    return score / (float)d->nb;
}

/* ---- the metric ---- */

typedef struct SpeedPlane {
    QmSpeedDims d;
    float *frame, *blur, *copy, *row;  /* stride x rows each; row: stride */
    float *work;
    float *e_ref, *v_ref, *e_dis, *v_dis;
} SpeedPlane;

typedef struct SpeedState {
    QmSpeedParams m;
    SpeedPlane p;
} SpeedState;

static void speed_close(void *priv)
{
    SpeedState *s = priv;
    free(s->p.frame);
    free(s->p.work);
    free(s->p.e_ref);
    s->p.frame = s->p.work = s->p.e_ref = NULL;
}

int qm_speed_setup(QmSpeedParams *m, const QmMetricConfig *cfg)
{
    const QmOptValues *o = cfg->opt;
    memset(m, 0, sizeof(*m));
    if (cfg->chroma == QM_CHROMA_400)
        return QM_ENOTSUP;  /* chroma planes needed (libvmaf: -EINVAL) */
    if (cfg->bpc != 8 && cfg->bpc != 10 && cfg->bpc != 12 && cfg->bpc != 16)
        return QM_ENOTSUP;  /* libvmaf picture_copy() knows these depths */
    const double wvm = o->v[QM_SPEED_OPT_WEIGHT_VAR_MODE];
    if (wvm != floor(wvm) || wvm < 0 || wvm > 6 ||
        !qm_speed_kernelscale_ok(o->v[QM_SPEED_OPT_KERNELSCALE]))
        return QM_EINVAL;
    m->bpc = cfg->bpc;
    m->mode = (int)wvm;
    m->prescale = o->v[QM_SPEED_OPT_PRESCALE];
    m->method = (QmSpeedScaler)(int)o->v[QM_SPEED_OPT_PRESCALE_METHOD];
    m->max_val = o->v[QM_SPEED_OPT_MAX_VAL];
    m->sigma_nn = (float)o->v[QM_SPEED_OPT_SIGMA_NN];
    m->nn_floor = (float)o->v[QM_SPEED_OPT_NN_FLOOR];
    m->n_aa = qm_speed_antialias_taps(m->aa, o->v[QM_SPEED_OPT_KERNELSCALE]);
    m->n_blur = qm_speed_blur_taps(m->blur, o->v[QM_SPEED_OPT_KERNELSCALE]);

    /* libvmaf init_chroma(): w / 2, h / 2 for 4:2:0, w / 2 for 4:2:2 */
    qm_plane_size(cfg->w, cfg->h, cfg->chroma, 1, &m->pw, &m->ph);
    return qm_speed_dims(&m->d, m->pw, m->ph, m->prescale);
}

static int speed_init(void *priv, const QmMetricConfig *cfg)
{
    SpeedState *s = priv;
    int err = qm_speed_setup(&s->m, cfg);
    if (err)
        return err;
    SpeedPlane *p = &s->p;
    p->d = s->m.d;
    const size_t fsz = p->d.stride * p->d.rows;
    p->frame = malloc(sizeof(float) * (3 * fsz + p->d.stride));
    p->work = malloc(sizeof(float) * qm_speed_estimate_work(&p->d));
    p->e_ref = malloc(sizeof(float) * 4 * (size_t)p->d.nb);
    if (!p->frame || !p->work || !p->e_ref) {
        speed_close(s);
        return QM_ENOMEM;
    }
    p->blur = p->frame + fsz;
    p->copy = p->blur + fsz;
    p->row = p->copy + fsz;
    p->v_ref = p->e_ref + p->d.nb;
    p->e_dis = p->v_ref + p->d.nb;
    p->v_dis = p->e_dis + p->d.nb;
    return 0;
}

/* libvmaf filter_and_downscale() then est_params() on one plane; the
 * plane is in p->frame on entry.  Returns 1 when K is singular, 0, or a
 * negative QM_E* code. */
static int speed_plane_estimate(SpeedState *s, float *entropy, float *variance)
{
    SpeedPlane *p = &s->p;
    const QmSpeedDims *d = &p->d;
    if (qm_speed_rescales(s->m.prescale)) {
        for (int y = 0; y < d->h; y++)
            memcpy(p->copy + (size_t)y * d->stride,
                   p->frame + (size_t)y * d->stride, sizeof(float) * (size_t)d->w);
        const int err = qm_speed_rescale_c(s->m.method, p->copy, d->w, d->h,
                                           p->frame, d->sw, d->sh, d->stride);
        if (err)
            return err;
    }
    qm_speed_filter_c(s->m.aa, s->m.n_aa, p->frame, p->blur, p->row, d->sw, d->sh,
                      d->stride);
    /* keep every 16th sample (libvmaf vif_dec16_s) */
    for (int y = 0; y < d->oh; y++)
        for (int x = 0; x < d->ow; x++)
            p->frame[(size_t)y * d->stride + x] =
                p->blur[(size_t)(16 * y) * d->stride + (size_t)(16 * x)];
    qm_speed_filter_c(s->m.blur, s->m.n_blur, p->frame, p->blur, p->row, d->ow,
                      d->oh, d->stride);
    for (int y = 0; y < d->oh; y++)
        for (int x = 0; x < d->ow; x++)
            p->frame[(size_t)y * d->stride + x] -=
                p->blur[(size_t)y * d->stride + x];
    return qm_speed_estimate_c(d, p->frame, s->m.sigma_nn, entropy, variance,
                               p->work);
}

float qm_speed_plane_score(const QmSpeedDims *d, int singular_ref,
                           int singular_dis, const float *e_ref,
                           const float *v_ref, const float *e_dis,
                           const float *v_dis, float sigma_nn, float nn_floor,
                           int mode)
{
    /* one side singular (rare): 0 rather than an inflated score */
    if (!singular_ref != !singular_dis)
        return 0.0f;
    return qm_speed_score(d, e_ref, v_ref, e_dis, v_dis, sigma_nn, nn_floor,
                          mode);
}

void qm_speed_set_features(QmRows *out, float u, int singular_u, float v,
                           int singular_v, double max_val)
{
    float uv;
    /* libvmaf: a plane with a singular covariance is imputed from the
     * other one; both or neither: the mean */
    if (singular_u && !singular_v)
        uv = v;
    else if (singular_v && !singular_u)
        uv = u;
    else
        uv = (float)((u + v) / 2.0);
    qm_rows_set(out, 0, QM_SPEED_FEAT_U, QM_MIN((double)u, max_val));
    qm_rows_set(out, 0, QM_SPEED_FEAT_V, QM_MIN((double)v, max_val));
    qm_rows_set(out, 0, QM_SPEED_FEAT_UV, QM_MIN((double)uv, max_val));
}

/* libvmaf speed_extract_score() on plane c; returns 1 when either side's
 * covariance was singular, 0, or a negative QM_E* code */
static int speed_plane(SpeedState *s, const QmFrame *f, int c, float *score)
{
    SpeedPlane *p = &s->p;
    qm_speed_to_float_c(p->frame, p->d.stride, f->ref->data[c],
                        f->ref->stride[c], s->m.pw, s->m.ph, s->m.bpc);
    const int err_ref = speed_plane_estimate(s, p->e_ref, p->v_ref);
    qm_speed_to_float_c(p->frame, p->d.stride, f->dist->data[c],
                        f->dist->stride[c], s->m.pw, s->m.ph, s->m.bpc);
    const int err_dis = speed_plane_estimate(s, p->e_dis, p->v_dis);
    if (err_ref < 0 || err_dis < 0)
        return err_ref < 0 ? err_ref : err_dis;
    *score = qm_speed_plane_score(&p->d, err_ref, err_dis, p->e_ref, p->v_ref,
                                  p->e_dis, p->v_dis, s->m.sigma_nn, s->m.nn_floor,
                                  s->m.mode);
    return err_ref || err_dis;
}

static int speed_compute(void *priv, const QmFrame *f, QmRows *out)
{
    SpeedState *s = priv;
    float u, v;
    const int err_u = speed_plane(s, f, 1, &u);
    if (err_u < 0)
        return err_u;
    const int err_v = speed_plane(s, f, 2, &v);
    if (err_v < 0)
        return err_v;
    qm_speed_set_features(out, u, err_u, v, err_v, s->m.max_val);
    return 0;
}

static const char *const speed_features[] = {
    "speed_chroma_u",
    "speed_chroma_v",
    "speed_chroma_uv",
    NULL,
};

/* libvmaf speed.c: the value of speed_prescale_method is one of these
 * (vif_get_scaling_method()); its default is "nearest" */
static const char *const speed_scalers[] = {
    [QM_SPEED_NEAREST] = "nearest",
    [QM_SPEED_BILINEAR] = "bilinear",
    [QM_SPEED_BICUBIC] = "bicubic",
    [QM_SPEED_LANCZOS4] = "lanczos4",
    NULL,
};

/* libvmaf speed.c options_chroma[]: names, aliases, defaults
 * (DEFAULT_SPEED_*) and ranges; every one is VMAF_OPT_FLAG_FEATURE_PARAM */
static const QmOptionDesc speed_options[] = {
    [QM_SPEED_OPT_KERNELSCALE] = { "speed_kernelscale", "ks",
        "scale of the Gaussian kernels (one of libvmaf's 21 values, e.g. "
        "0.5, 1, 1.5, 2)", 1.0, 0.1, 4.0, QM_OPT_IN_KEY },
    [QM_SPEED_OPT_MAX_VAL] = { "speed_max_val", "mxv",
        "largest value reported (clip)", 1000.0, 0.0, 1000.0, QM_OPT_IN_KEY },
    [QM_SPEED_OPT_NN_FLOOR] = { "speed_nn_floor", "nnf",
        "neural noise floor, as a fraction of sigma_nn", 0.0, 0.0, 1.0,
        QM_OPT_IN_KEY },
    [QM_SPEED_OPT_PRESCALE] = { "speed_prescale", "ps",
        "rescale factor of the chroma planes before the analysis", 1.0, 0.1,
        4.0, QM_OPT_IN_KEY },
    [QM_SPEED_OPT_PRESCALE_METHOD] = { "speed_prescale_method", "psm",
        "rescaling method: nearest, bilinear, bicubic or lanczos4", 0, 0, 3,
        QM_OPT_IN_KEY | QM_OPT_ENUM },
    [QM_SPEED_OPT_SIGMA_NN] = { "speed_sigma_nn", "snn",
        "standard deviation of the neural noise", 0.29, 0.1, 2.0,
        QM_OPT_IN_KEY },
    [QM_SPEED_OPT_WEIGHT_VAR_MODE] = { "speed_weight_var_mode", "wvm",
        "variance weighting of the entropies (integer 0 to 6)", 0, 0, 6,
        QM_OPT_IN_KEY | QM_OPT_INT },
    { NULL },
};

static const char *const *const speed_option_choices[] = {
    [QM_SPEED_OPT_PRESCALE_METHOD] = speed_scalers,
    [QM_SPEED_OPT_WEIGHT_VAR_MODE + 1] = NULL,
};

extern const struct QmCudaFuncs qm_cuda_speed_chroma;  /* cuda/speed_chroma.cu */

/* The twin computes every option vector but a prescale within 1e-3 of 1
 * other than 1 itself: the C code (as libvmaf) then skips the rescale yet
 * sizes the planes by the prescale, so that a plane one sample larger has
 * a column or row that was never written; such an instance stays on the
 * CPU. */
static bool speed_cuda_accepts(const QmOptValues *o)
{
    const double ps = o->v[QM_SPEED_OPT_PRESCALE];
    return ps == 1.0 || qm_speed_rescales(ps);
}

/* The option sets of the VMAF v1 models (vmaf_v1.0.16_3d0h, _5d0h,
 * _3d0h_2160), every rescaler down and up, and kernel scales libvmaf
 * accepts (the one-at-a-time pass only reaches refused ones); 360/97: 35
 * taps.  The first also through the engine, which polls the twin's host
 * part (host_done()) before collect(). */
static const QmOptionSet speed_option_sets[] = {
    { "speed_kernelscale=1,speed_nn_floor=0.1,speed_sigma_nn=0.19,"
      "speed_weight_var_mode=5,speed_max_val=45", QM_OPTSET_DIRECT | QM_OPTSET_ENGINE },
    { "speed_nn_floor=0.1,speed_sigma_nn=0.19,speed_weight_var_mode=5,"
      "speed_prescale=0.6,speed_prescale_method=bilinear,speed_max_val=45", QM_OPTSET_DIRECT },
    { "speed_nn_floor=0.1,speed_sigma_nn=0.19,speed_weight_var_mode=5,"
      "speed_prescale=0.5,speed_prescale_method=bilinear,speed_max_val=45", QM_OPTSET_DIRECT },
    { "speed_prescale=0.6", QM_OPTSET_DIRECT },
    { "speed_prescale=1.5,speed_prescale_method=bilinear", QM_OPTSET_DIRECT },
    { "speed_prescale=0.7,speed_prescale_method=bicubic", QM_OPTSET_DIRECT },
    { "speed_prescale=1.3,speed_prescale_method=bicubic", QM_OPTSET_DIRECT },
    { "speed_prescale=0.8,speed_prescale_method=lanczos4", QM_OPTSET_DIRECT },
    { "speed_prescale=1.7,speed_prescale_method=lanczos4", QM_OPTSET_DIRECT },
    { "speed_kernelscale=0.5", QM_OPTSET_DIRECT },
    { "speed_kernelscale=1.5,speed_weight_var_mode=3", QM_OPTSET_DIRECT },
    { "speed_kernelscale=3.7113402,speed_prescale=2", QM_OPTSET_DIRECT },
    { NULL },
};

const QmMetricDesc qm_metric_speed_chroma = {
    .name = "speed_chroma",
    .display = "SpEED",
    .description = "SpEED-QA on the Cb and Cr planes (VMAF v1 model input)",
    /* a difference of entropies (log2: bits), 0 for identical pictures */
    .scale = { "bits", -1, 0, NAN },
    .features = speed_features,
    .options = speed_options,
    .option_choices = speed_option_choices,
    .flags = QM_METRIC_OPT_IN,
    .cpu = {
        .priv_size = sizeof(SpeedState),
        .init = speed_init,
        .compute = speed_compute,
        .close = speed_close,
    },
    .cuda = QM_CUDA_TWIN(qm_cuda_speed_chroma),
    .cuda_accepts = speed_cuda_accepts,
    /* bit-exact: the twin's float and double stages follow the C order,
     * and the linear algebra and logarithms are the C functions (collect) */
    .cuda_tol = 0,
    .option_sets = speed_option_sets,
    .option_sets_content = QM_TEST_CONTENT_NATURAL,
};
