/* tools/qmplot.c: the SVG chart of per-frame scores.
 *
 * Synthetic series with known features (a dip at a known frame, a flat line,
 * gaps, a long series, a lower-is-better score) checked in the SVG text:
 * well-formed enough to parse, the long series thinned, the worst frame
 * marked where it is, no worst mark on a flat line, one panel per unit,
 * direction and range of the metrics' descriptors.
 * QM_PLOT_TEST_OUT=dir keeps the charts for a look.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "qmplot.h"

#define QM_CHECK_OUT stderr
#include "unit.h"

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void keep(const char *name, const char *svg)
{
    const char *dir = g_getenv("QM_PLOT_TEST_OUT");
    if (dir) {
        char *path = g_build_filename(dir, name, NULL);
        g_file_set_contents(path, svg, -1, NULL);
        g_free(path);
    }
}

/* the document is XML: balanced tags, escaped text */
static void check_xml(const char *svg)
{
    GMarkupParser parser = { 0 };
    GMarkupParseContext *ctx = g_markup_parse_context_new(&parser, 0, NULL, NULL);
    GError *err = NULL;
    const char *body = strstr(svg, "<svg");
    gboolean ok = g_markup_parse_context_parse(ctx, body, -1, &err) &&
                  g_markup_parse_context_end_parse(ctx, &err);
    CHECK(ok, "not well-formed: %s", err ? err->message : "?");
    g_clear_error(&err);
    g_markup_parse_context_free(ctx);
}

int main(void)
{
    enum { N = 20000, SHORT = 300 };
    double *x = g_new(double, N), *vmaf = g_new(double, N), *neg = g_new(double, N);
    double *psnr = g_new(double, SHORT), *flat = g_new(double, SHORT);
    double *cambi = g_new(double, SHORT), *xs = g_new(double, SHORT);
    char *svg;

    for (int i = 0; i < N; i++) {
        x[i] = i;
        vmaf[i] = 90 + 5 * sin(i / 300.0) - (i == 12345 ? 60 : 0);
        neg[i] = vmaf[i] - 3;
    }
    for (int i = 0; i < SHORT; i++) {
        xs[i] = i;
        psnr[i] = 40 + 3 * cos(i / 20.0) - (i >= 200 && i < 210 ? 12 : 0);
        flat[i] = 60;             /* PSNR at its cap: no worst frame */
        cambi[i] = i == 77 ? 9 : 1 + 0.5 * sin(i / 9.0);
    }
    psnr[50] = NAN;               /* a gap */

    /* a long series: thinned to the pixel columns, the one-frame dip kept */
    {
        QmPlotSeries s[] = {
            { "vmaf_v0.6.1", x, vmaf, N, NAN },
            { "vmaf_v0.6.1neg", x, neg, N, NAN },
        };
        QmPlotOptions o = { .title = "two models & <escapes>", .subtitle = "20000 frames" };
        svg = qm_plot_svg_string(s, 2, &o);
        keep("long.svg", svg);
        check_xml(svg);
        CHECK(strlen(svg) < 200000, "long series not thinned: %zu bytes", strlen(svg));
        CHECK(strstr(svg, "two models &amp; &lt;escapes&gt;") != NULL, "title not escaped");
        CHECK(strstr(svg, "at frame 12345") != NULL, "the dip at 12345 is not the worst frame");
        CHECK(strstr(svg, "VMAF [score]") != NULL, "axis label");
        CHECK(count(svg, "id=\"panel-") == 1, "two models share one panel");
        CHECK(strstr(svg, ">0<") && strstr(svg, ">20000<"), "x ticks 0..20000");
        g_free(svg);
    }
    /* units in panels, flat line, gap, lower-is-better */
    {
        QmPlotSeries s[] = {
            { "psnr_y", xs, psnr, SHORT, NAN },
            { "psnr_cb", xs, flat, SHORT, 60 },
            { "cambi", xs, cambi, SHORT, NAN },
        };
        QmPlotOptions o = { .title = "panels" };
        svg = qm_plot_svg_string(s, 3, &o);
        keep("panels.svg", svg);
        check_xml(svg);
        CHECK(count(svg, "id=\"panel-") == 2, "dB and CAMBI panels: %d", count(svg, "id=\"panel-"));
        CHECK(strstr(svg, "PSNR [dB]") != NULL, "dB axis");
        CHECK(strstr(svg, "(lower is better)") != NULL, "CAMBI direction");
        CHECK(strstr(svg, "cambi 9.000 at frame 77") != NULL || strstr(svg, "9.000 at frame 77"),
              "CAMBI's worst is its highest frame");
        CHECK(strstr(svg, "psnr_cb, frame") == NULL, "a flat line has no worst frame");
        CHECK(strstr(svg, "psnr_y, frame 20") != NULL, "the PSNR dip at 200..209 is marked");
        /* the gap at 50 starts a new subpath: two M commands in psnr_y's path */
        const char *p = strstr(svg, "<path");
        const char *e = p ? strchr(p, '>') : NULL;
        int moves = 0;
        for (const char *c = p; c && c < e; c++)
            moves += *c == 'M';
        CHECK(moves == 2, "gap: %d subpaths", moves);
        g_free(svg);
    }
    /* panels from the descriptors (qm_feature_info()): one per unit,
     * direction and range, titled with the metrics' names; option suffixes
     * do not change a feature's panel; a key no metric writes gets its own */
    {
        QmPlotSeries s[] = {
            { "float_ssim", xs, flat, SHORT, NAN },
            { "float_ms_ssim", xs, flat, SHORT, NAN },
            { "psnr_y", xs, psnr, SHORT, NAN },
            { "psnr_hvs", xs, psnr, SHORT, NAN },
            { "integer_vif_scale0_egl_1", xs, flat, SHORT, NAN },
            { "integer_adm2", xs, flat, SHORT, NAN },
            { "speed_chroma_u", xs, cambi, SHORT, NAN },
            { "speed_chroma_uv", xs, cambi, SHORT, NAN },
            { "no_such_metric", xs, flat, SHORT, NAN },
        };
        QmPlotOptions o = { .title = "descriptors" };
        svg = qm_plot_svg_string(s, G_N_ELEMENTS(s), &o);
        keep("descriptors.svg", svg);
        check_xml(svg);
        CHECK(count(svg, "id=\"panel-") == 5, "SSIM, dB, ratio, SpEED, unknown: %d panels",
              count(svg, "id=\"panel-"));
        CHECK(strstr(svg, ">SSIM / MS-SSIM [index]<") != NULL, "SSIM and MS-SSIM share a panel");
        CHECK(strstr(svg, ">PSNR / PSNR-HVS [dB]<") != NULL, "PSNR and PSNR-HVS share a panel");
        CHECK(strstr(svg, ">VIF / ADM [ratio]<") != NULL, "a key with option suffixes");
        CHECK(strstr(svg, ">SpEED [bits] (lower is better)<") != NULL,
              "SpEED's features in one panel, lower is better");
        CHECK(strstr(svg, ">no_such_metric<") != NULL, "an unknown key gets a panel of its own");
        g_free(svg);
    }
    /* nothing to plot still makes a document */
    svg = qm_plot_svg_string(NULL, 0, NULL);
    check_xml(svg);
    CHECK(strstr(svg, "no scores") != NULL, "empty chart says so");
    g_free(svg);

    g_free(x); g_free(vmaf); g_free(neg); g_free(psnr); g_free(flat); g_free(cambi); g_free(xs);
    if (failures)
        return 1;
    printf("plot: ok\n");
    return 0;
}
