/* tools/compare/series.c: which curve of a ladder's rate-quality chart each
 * rendition is drawn in.  A classic ladder (one codec, one rendition per
 * resolution) is one curve named after its codec; mixed codecs one curve
 * each, the profile left out; a grid of bitrates per resolution one curve
 * per resolution; the manifest's groups win over all of it.
 */
#include <string.h>

#include <glib.h>

#include "series.h"
#include "unit.h"

static void expect(const char *what, const QmcSeriesIn *in, guint n, const char *const *want)
{
    char **got = qmc_ladder_series(in, n);
    for (guint i = 0; i < n; i++)
        CHECK(!strcmp(got[i], want[i]), "%s: rendition %u is in '%s', expected '%s'", what, i,
              got[i], want[i]);
    CHECK(got[n] == NULL, "%s: the vector ends after %u names", what, n);
    g_strfreev(got);
}

int main(void)
{
    const char *h264 = "H.264 (High Profile)", *h264m = "H.264 (Main Profile)";
    const char *hevc = "H.265 (Main Profile)";
    {
        const QmcSeriesIn in[] = {
            { NULL, h264, 1920, 1080 }, { NULL, h264m, 1280, 720 }, { NULL, h264, 960, 540 },
            { NULL, h264, 640, 360 },
        };
        expect("one codec, one rendition per size", in, 4,
               (const char *const[]){ "H.264", "H.264", "H.264", "H.264" });
    }
    {
        const QmcSeriesIn in[] = {
            { NULL, h264, 1920, 1080 }, { NULL, h264, 1280, 720 }, { NULL, hevc, 1920, 1080 },
            { NULL, hevc, 1280, 720 }, { NULL, h264, 1280, 720 },
        };
        expect("two codecs", in, 5,
               (const char *const[]){ "H.264", "H.264", "H.265", "H.265", "H.264" });
    }
    {
        const QmcSeriesIn in[] = {
            { NULL, h264, 1920, 1080 }, { NULL, h264, 1920, 1080 }, { NULL, h264, 1280, 720 },
            { NULL, h264, 1280, 720 }, { NULL, h264, 1280, 720 },
        };
        expect("a grid of one codec", in, 5,
               (const char *const[]){ "1920x1080", "1920x1080", "1280x720", "1280x720",
                                      "1280x720" });
    }
    {
        const QmcSeriesIn in[] = {
            { NULL, h264, 1920, 1080 }, { NULL, h264, 1920, 1080 }, { NULL, h264, 1280, 720 },
            { NULL, h264, 1280, 720 }, { NULL, hevc, 1920, 1080 }, { NULL, hevc, 1280, 720 },
        };
        expect("a grid of one codec beside a ladder of another", in, 6,
               (const char *const[]){ "H.264 1920x1080", "H.264 1920x1080", "H.264 1280x720",
                                      "H.264 1280x720", "H.265", "H.265" });
    }
    {
        const QmcSeriesIn in[] = {
            { "x264 slow", h264, 1920, 1080 }, { "x264 fast", h264, 1920, 1080 },
            { NULL, NULL, 0, 0 }, { "", h264, 640, 360 },
        };
        expect("the manifest's groups", in, 4,
               (const char *const[]){ "x264 slow", "x264 fast", "unknown codec", "H.264" });
    }
    expect("no renditions", NULL, 0, (const char *const[]){ NULL });
    if (failures)
        return 1;
    printf("series: ok\n");
    return 0;
}
