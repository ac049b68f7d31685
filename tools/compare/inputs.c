/* qmetric-compare: each input checked before anything runs, so that a
 * typo is one clear line (the layout of raw files is mapsrc.c's). */
#include "compare.h"
#include "../sniff.h"

/* ------------------------------------------------------------------ inputs */

static gboolean is_raw_name(const char *s)
{
    char *l = g_ascii_strdown(s, -1);
    gboolean raw = g_str_has_suffix(l, ".yuv") || g_str_has_suffix(l, ".raw");
    g_free(l);
    return raw;
}

static gboolean is_y4m_name(const char *s)
{
    char *l = g_ascii_strdown(s, -1);
    gboolean y4m = g_str_has_suffix(l, ".y4m");
    g_free(l);
    return y4m;
}

/* A .yuv/.raw name that holds a container or a compressed stream would be
 * scored as garbage frames: say what it is (tools/sniff.c). */
static void check_not_container(const char *arg, const char *path)
{
    int fd = g_open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
    const char *what = fd >= 0 ? qm_sniff_fd(fd) : NULL;
    if (fd >= 0)
        close(fd);
    if (what)
        qmc_input_error("%s: %s, not raw frames: a .yuv or .raw name is read as raw video; "
                        "rename it so that it is decoded", arg, what);
}

/* Check an input before anything runs, so that a typo is one clear line. */
void qmc_check_input(App *app, Side *s, const char *arg)
{
    char *path = NULL;
    GStatBuf st;

    s->display = g_strdup(arg);
    if (gst_uri_is_valid(arg) && !g_str_has_prefix(arg, "file:")) {
        s->uri = g_strdup(arg); /* network and other URIs: GStreamer will tell */
        return;
    }
    if (g_str_has_prefix(arg, "file:")) {
        path = g_filename_from_uri(arg, NULL, NULL);
        if (!path)
            qmc_input_error("%s: not a valid file URI", arg);
    } else {
        path = g_strdup(arg);
    }
    if (!g_file_test(path, G_FILE_TEST_EXISTS))
        qmc_input_error("%s: no such file (the %s)", arg, qmc_side_name[s->id]);
    if (g_file_test(path, G_FILE_TEST_IS_DIR))
        qmc_input_error("%s: is a directory, not a video (the %s)", arg, qmc_side_name[s->id]);
    if (g_access(path, R_OK) != 0)
        qmc_input_error("%s: cannot be read: %s", arg, g_strerror(errno));
    if (g_stat(path, &st) != 0)
        qmc_input_error("%s: %s", arg, g_strerror(errno));
    s->once = !S_ISREG(st.st_mode);
    s->uri = gst_filename_to_uri(path, NULL);
    s->raw = is_raw_name(path);
    if (s->raw) {
        int strides[4], offsets[4], np;
        GstVideoFormat fmt = gst_video_format_from_string(app->o.raw_format);
        gsize fsize;
        if (app->o.width <= 0)
            qmc_input_error("%s: raw video needs its geometry: --size WxH (and --format, "
                            "default I420)", arg);
        fsize = qmc_raw_layout(fmt, app->o.width, app->o.height, strides, offsets, &np);
        if (!fsize)
            qmc_input_error("%s: %s frames have no fixed layout in a raw file; give a planar "
                            "or packed format (I420, Y42B, UYVY, v210, ...)", arg,
                            app->o.raw_format);
        if (st.st_size == 0)
            qmc_input_error("%s: empty file", arg);
        if (!s->once)
            check_not_container(arg, path);
        if ((gsize)st.st_size % fsize)
            qmc_input_error("%s: %lld bytes is not a whole number of %dx%d %s frames (%zu "
                            "bytes each): check --size and --format", arg,
                            (long long)st.st_size, app->o.width, app->o.height,
                            app->o.raw_format, fsize);
        s->raw_frames = (guint64)st.st_size / fsize;
        if (app->o.skip[s->id] >= s->raw_frames)
            qmc_input_error("%s: --frame_skip_%s %" G_GUINT64_FORMAT " leaves no frame: it has "
                            "%" G_GUINT64_FORMAT, arg, s->id == REF ? "ref" : "dist",
                            app->o.skip[s->id], s->raw_frames);
        qmc_raw_spec(&s->map, fmt, app->o.width, app->o.height, app->o.fps_n, app->o.fps_d,
                     fsize, strides, offsets, np, s->raw_frames);
        s->mapped = !s->once;
    } else if (s->once || is_y4m_name(path)) {
        char *why = NULL;
        /* else y4mdec decodes it, or says what is wrong; a pipe that is not
         * Y4M goes to the decoders untouched */
        s->mapped = s->once ? qmc_y4m_pipe_spec(path, &s->map, &why)
                            : qmc_y4m_spec(path, &s->map, &why);
        g_free(why);
    }
    g_free(path);
}


/* A ladder's input: an encoded file or a URI (raw video is refused: a
 * ladder compares encoded renditions), a Y4M file read in place when it
 * can be.  Returns its size in bytes, 0 when unknown. */
guint64 qmc_check_ladder_input(App *app, Side *s)
{
    GStatBuf st;
    char *path, *why = NULL;
    guint64 size = 0;

    if (gst_uri_is_valid(s->display)) {
        path = g_filename_from_uri(s->display, NULL, NULL);
        s->uri = g_strdup(s->display);
        if (path && g_stat(path, &st) == 0)
            size = st.st_size;
    } else {
        if (g_stat(s->display, &st) != 0)
            qmc_input_error("%s: %s", s->display, g_strerror(errno));
        if (!S_ISREG(st.st_mode))
            qmc_input_error("%s: not a regular file", s->display);
        if (g_str_has_suffix(s->display, ".yuv") || g_str_has_suffix(s->display, ".raw") ||
            app->o.width)
            qmc_input_error("%s: raw video is not supported in a ladder (give encoded files or "
                            "compare raw files one pair at a time)", s->display);
        size = st.st_size;
        path = g_strdup(s->display);
    }
    if (path && is_y4m_name(path))
        s->mapped = qmc_y4m_spec(path, &s->map, &why);  /* else y4mdec reads it */
    g_free(why);
    if (!s->uri && !(s->uri = gst_filename_to_uri(s->display, NULL)))
        qmc_input_error("%s: cannot make a URI of this path", s->display);
    g_free(path);
    return size;
}
