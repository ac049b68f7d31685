/* qmetric-compare: the series of a ladder's rate-quality chart (series.h). */
#include <string.h>

#include "series.h"

/* "H.264 (High Profile)" -> "H.264": profiles of one codec are one curve */
static char *codec_family(const char *codec)
{
    const char *p;
    if (!codec || !*codec)
        return g_strdup("unknown codec");
    p = strstr(codec, " (");
    return p && p != codec ? g_strndup(codec, (gsize)(p - codec)) : g_strdup(codec);
}

static char *resolution(const QmcSeriesIn *r)
{
    return r->width > 0 ? g_strdup_printf("%dx%d", r->width, r->height) : g_strdup("unknown size");
}

/* Whether the renditions of family f have several resolutions and several
 * renditions at each: then each resolution is a curve of its own (a grid
 * of bitrates per resolution); a ladder of one rendition per resolution,
 * or nearly, stays one curve. */
static gboolean split_by_resolution(char **fam, char **res, guint n, const char *f)
{
    GHashTable *count = g_hash_table_new(g_str_hash, g_str_equal);
    GHashTableIter it;
    gpointer key, value;
    gboolean split;
    for (guint i = 0; i < n; i++) {
        if (strcmp(fam[i], f))
            continue;
        guint c = GPOINTER_TO_UINT(g_hash_table_lookup(count, res[i])) + 1;
        g_hash_table_insert(count, res[i], GUINT_TO_POINTER(c));
    }
    split = g_hash_table_size(count) >= 2;
    g_hash_table_iter_init(&it, count);
    while (split && g_hash_table_iter_next(&it, &key, &value))
        split = GPOINTER_TO_UINT(value) >= 2;
    g_hash_table_destroy(count);
    return split;
}

char **qmc_ladder_series(const QmcSeriesIn *in, guint n)
{
    char **fam = g_new0(char *, n + 1), **res = g_new0(char *, n + 1);
    char **out = g_new0(char *, n + 1);
    gboolean codecs_differ = FALSE;

    for (guint i = 0; i < n; i++) {
        fam[i] = codec_family(in[i].codec);
        res[i] = resolution(&in[i]);
        codecs_differ |= i && strcmp(fam[i], fam[0]);
    }
    for (guint i = 0; i < n; i++) {
        const gboolean split = split_by_resolution(fam, res, n, fam[i]);
        if (in[i].group && *in[i].group)
            out[i] = g_strdup(in[i].group);
        else if (codecs_differ && split)
            out[i] = g_strdup_printf("%s %s", fam[i], res[i]);
        else if (split)
            out[i] = g_strdup(res[i]);
        else
            out[i] = g_strdup(fam[i]);
    }
    g_strfreev(fam);
    g_strfreev(res);
    return out;
}
