/* tools/qmplot.c: the SVG chart of per-frame scores; tools/rdplot.c and
 * rdlabel.c: the rate-quality chart of ladders.
 *
 * Synthetic series with known features (a dip at a known frame, a flat line,
 * gaps, a long series, a lower-is-better score) checked in the SVG text:
 * well-formed enough to parse, the long series thinned, the worst frame
 * marked where it is, no worst mark on a flat line, one panel per unit,
 * direction and range of the metrics' descriptors.
 * Rate-quality: the convex hull of known point sets, labels that do not
 * overlap, every point labelled, rate ticks in the axis' unit, the legend
 * naming the series.
 * QM_PLOT_TEST_OUT=dir keeps the charts for a look.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "qmplot.h"
#include "rdlabel.h"
#include "rdplot.h"

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

/* the upper convex hull of known point sets */
static void test_hull(void)
{
    size_t idx[16], h;
    /* sorted: 100:50 150:55 200:70 300:60 400:80 800:85 1600:84; 150 and
     * 300 lie under chords, 1600 is past the best quality */
    const double r1[] = { 100, 200, 400, 800, 300, 150, 1600 };
    const double q1[] = { 50, 70, 80, 85, 60, 55, 84 };
    h = qm_rd_upper_hull(r1, q1, 7, idx);
    CHECK(h == 4 && idx[0] == 0 && idx[1] == 1 && idx[2] == 2 && idx[3] == 3,
          "hull of set 1: %zu vertices (%zu %zu %zu %zu)", h, idx[0], idx[1], idx[2], idx[3]);
    /* in linear rate, (200, 60) is above the chord from (100, 50) to
     * (1000, 90) (54.4 there): on the hull, though under the chord drawn on
     * the log axis; a NaN, a zero rate and a worse point at one rate are
     * left out */
    const double r2[] = { 1000, 200, 100, 500, 0, 200 };
    const double q2[] = { 90, 60, NAN, 95, 99, 58 };
    h = qm_rd_upper_hull(r2, q2, 6, idx);
    CHECK(h == 2 && idx[0] == 1 && idx[1] == 3,
          "hull of set 2: %zu vertices (%zu %zu): 200:60 then 500:95 (1000:90 is past "
          "the best)", h, idx[0], idx[1]);
    const double r3[] = { 100, 1000, 200 };
    const double q3[] = { 50, 90, 60 };
    h = qm_rd_upper_hull(r3, q3, 3, idx);
    CHECK(h == 3 && idx[0] == 0 && idx[1] == 2 && idx[2] == 1,
          "hull in linear rate keeps (200, 60): %zu vertices", h);
    CHECK(qm_rd_upper_hull(r1, q1, 0, idx) == 0, "no points, no hull");
}

/* labels of a dense curve: none over another, all inside the area, the
 * same places every time */
static void test_labels(void)
{
    enum { N = 14 };
    QmRdLabel l[N], again[N];
    double segs[4 * (N - 1)];
    const QmRdBox area = { 0, 0, 460, 340 };
    for (int i = 0; i < N; i++) {
        /* a saturating ladder: points crowd towards the top right */
        l[i] = (QmRdLabel){ .x = 20 + 30 * i, .y = 320 - 300 * (1 - exp(-i / 3.0)),
                            .w = qm_rd_text_width("1080p_6000", 10), .h = 12 };
        if (i)
            memcpy(segs + 4 * (i - 1), (double[]){ l[i - 1].x, l[i - 1].y, l[i].x, l[i].y },
                   sizeof(double) * 4);
    }
    memcpy(again, l, sizeof(l));
    qm_rd_place_labels(l, N, &area, segs, N - 1, 3.5);
    qm_rd_place_labels(again, N, &area, segs, N - 1, 3.5);
    for (int i = 0; i < N; i++) {
        CHECK(l[i].box.x0 >= area.x0 && l[i].box.x1 <= area.x1 && l[i].box.y0 >= area.y0 &&
              l[i].box.y1 <= area.y1, "label %d outside the area", i);
        CHECK(!memcmp(&l[i].box, &again[i].box, sizeof(QmRdBox)), "label %d moved", i);
        for (int j = 0; j < i; j++)
            CHECK(qm_rd_box_overlap(&l[i].box, &l[j].box) == 0, "labels %d and %d overlap", i, j);
    }
}

/* the chart: two series, labels, ticks, hull, legend */
static void test_rd_chart(void)
{
    const double ra[] = { 3000, 300, 600, 1200, 6000 };
    const double va[] = { 93, 45, 63, 78, 96 }, pa[] = { 40.5, 31, 34, 36.5, 42.3 };
    const double rb[] = { 200, 400, 800, 1600, 3200 };
    const double vb[] = { 44, 62, 78, 89, 95.5 }, pb[] = { 30.8, 33.8, 36.5, 39, 41.6 };
    const double *qa[] = { va, pa }, *qb[] = { vb, pb };
    const char *const la[] = { "1080p", "240p", "360p", "540p", "2160p" };
    const QmRdCurve c[] = {
        { "H.264", ra, qa, la, 5 },
        { "AV1 & <co>", rb, qb, NULL, 5 },
    };
    const char *const metrics[] = { "vmaf", "psnr_y" };
    const QmRdOptions o = { .title = "ladders", .subtitle = "two codecs", .hull = TRUE };
    char *svg = qm_rd_svg_string(c, 2, metrics, 2, &o);
    keep("rd.svg", svg);
    check_xml(svg);
    CHECK(strstr(svg, ">H.264</text>") && strstr(svg, ">AV1 &amp; &lt;co&gt;</text>"),
          "the legend names both series");
    CHECK(strstr(svg, ">upper convex hull</text>") && strstr(svg, "id='hull-0'") &&
          strstr(svg, "id='hull-1'"), "a hull per panel, in the legend");
    CHECK(count(svg, ">1080p</text>") == 2 && count(svg, ">240p</text>") == 2,
          "rendition labels on both panels");
    CHECK(count(svg, ">800 kbit/s</text>") == 2, "a point without a label shows its bitrate");
    CHECK(strstr(svg, "bitrate (kbit/s, log scale)") != NULL, "rate axis title with its unit");
    CHECK(strstr(svg, ">500</text>") && strstr(svg, ">1000</text>") &&
          strstr(svg, ">2000</text>"), "rate ticks in kbit/s");
    CHECK(!strstr(svg, " k</text>") && !strstr(svg, " M</text>"), "no k/M tick suffixes");
    CHECK(strstr(svg, ">psnr_y (dB)</text>") != NULL, "PSNR axis in dB");
    CHECK(!strstr(svg, ">110</text>"), "VMAF's axis stops at 100");
    g_free(svg);

    /* a rate range within one octave still has round ticks across it */
    const double rn[] = { 63, 79, 120, 122 }, vn[] = { 88, 98, 98.7, 98.8 };
    const double *qn[] = { vn };
    const QmRdCurve narrow = { "H.264", rn, qn, NULL, 4 };
    svg = qm_rd_svg_string(&narrow, 1, metrics, 1, NULL);
    keep("rd-narrow.svg", svg);
    CHECK(strstr(svg, ">70</text>") && strstr(svg, ">90</text>") && strstr(svg, ">120</text>"),
          "ticks of a narrow rate range");
    g_free(svg);
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
    test_hull();
    test_labels();
    test_rd_chart();
    if (failures)
        return 1;
    printf("plot: ok\n");
    return 0;
}
