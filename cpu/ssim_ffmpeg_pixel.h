/* gst-qmetric: the arithmetic of FFmpeg's SSIM (cpu/ssim_ffmpeg.h) written
 * once for the C reference and the CUDA twin (QM_HD, cpu/qm_hd.h).
 *
 * Facts from libavfilter/vf_ssim.c and x86/vf_ssim.asm of FFmpeg 5.1 (the
 * code Debian 12's ffmpeg runs):
 *   - a window's sums are exact integers (32-bit at 8 bits, 64-bit above:
 *     the same values, nothing overflows); its value is formed in float:
 *     (float)(2 s1 s2 + c1) * (float)(2 covar + c2) divided by
 *     (float)(s1^2 + s2^2 + c1) * (float)(var + c2), with
 *     var = 64 ss - s1^2 - s2^2 and covar = 64 s12 - s1 s2;
 *   - c1 = (int64)(.01 * .01 * max * max * 64 + .5), c2 = (int64)(.03 * .03
 *     * max * max * 64 * 63 + .5), max = 2^bpc - 1, in double from left to
 *     right (416 and 235963 at 8 bits, the assembly's constants);
 *   - 8 bits: the SSE4 row function adds the floats in double in four
 *     lanes, window i in lane i mod 4, and returns (L0 + L2) + (L1 + L3);
 *   - above 8 bits (C only): a row's windows are added in one float from
 *     left to right.
 */
#ifndef QM_SSIM_FFMPEG_PIXEL_H
#define QM_SSIM_FFMPEG_PIXEL_H

#include <stdint.h>

#include "qm_hd.h"

/* The sums of a 4x4 block (exact integers: each backend forms them its own
 * way), or of a window's four blocks. */
typedef struct QmSsimFfSums {
    int64_t s1, s2, ss, s12;
} QmSsimFfSums;

QM_HD void qm_ssim_ffmpeg_add(QmSsimFfSums *s, const QmSsimFfSums *t)
{
    s->s1 += t->s1;
    s->s2 += t->s2;
    s->ss += t->ss;
    s->s12 += t->s12;
}

QM_HD void qm_ssim_ffmpeg_consts(int bpc, int64_t *c1, int64_t *c2)
{
    const int max = (1 << bpc) - 1;
    *c1 = (int64_t)(.01 * .01 * max * max * 64 + .5);
    *c2 = (int64_t)(.03 * .03 * max * max * 64 * 63 + .5);
}

/* The SSIM of one window from the sums of its 64 sample pairs. */
QM_HD float qm_ssim_ffmpeg_window(const QmSsimFfSums *s, int64_t c1, int64_t c2)
{
    const int64_t var = s->ss * 64 - s->s1 * s->s1 - s->s2 * s->s2;
    const int64_t covar = s->s12 * 64 - s->s1 * s->s2;
    const float num = (float)(2 * s->s1 * s->s2 + c1) * (float)(2 * covar + c2);
    const float den = (float)(s->s1 * s->s1 + s->s2 * s->s2 + c1) * (float)(var + c2);
    return num / den;
}

/* The sum of a row's n window values, in FFmpeg's order for the depth. */
QM_HD double qm_ssim_ffmpeg_row(const float *v, int n, int bpc)
{
    if (bpc == 8) {
        /* lane j: windows j, j + 4, ... (named lanes: an indexed array
         * would live in a GPU thread's local memory) */
        double l0 = 0.0, l1 = 0.0, l2 = 0.0, l3 = 0.0;
        int i = 0;
        for (; i + 4 <= n; i += 4) {
            l0 += (double)v[i];
            l1 += (double)v[i + 1];
            l2 += (double)v[i + 2];
            l3 += (double)v[i + 3];
        }
        if (i < n)
            l0 += (double)v[i];
        if (i + 1 < n)
            l1 += (double)v[i + 1];
        if (i + 2 < n)
            l2 += (double)v[i + 2];
        return (l0 + l2) + (l1 + l3);
    }
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += v[i];
    return (double)s;
}

#endif /* QM_SSIM_FFMPEG_PIXEL_H */
