/* qmetric-compare: which curve of the rate-quality chart each rendition of
 * a ladder belongs to (no GStreamer; tests/series_test.c).
 *
 * A manifest's "group" (JSON key, or a [GROUP] line of a text manifest)
 * names a rendition's series.  Without one: one series per codec when the
 * renditions' codecs differ (H.264, H.265: the description without its
 * profile), split by resolution where a codec has several resolutions and
 * several renditions at each of them (per-resolution curves, as per-title
 * encoding draws them; "H.264 1280x720").  A ladder of one codec and one
 * rendition per resolution is one series, named after its codec.
 */
#ifndef QMC_SERIES_H
#define QMC_SERIES_H

#include <glib.h>

typedef struct {
    const char *group;         /* the manifest's, or NULL */
    const char *codec;         /* GStreamer's description, e.g. "H.264 (High Profile)"; NULL unknown */
    int width, height;         /* decoded size; 0 unknown */
} QmcSeriesIn;

/** The series name of each of the n renditions (a NULL-terminated vector
 * of n names; g_strfreev). */
char **qmc_ladder_series(const QmcSeriesIn *in, guint n);

#endif
