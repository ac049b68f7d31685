/* qmetric-compare: measure the quality of a video against its reference.
 *
 *   qmetric-compare REFERENCE DISTORTED [options]
 *
 * Any two files or URIs GStreamer can decode (or raw .yuv with --size and
 * --format) are decoded, brought to one pixel format (the reference's),
 * optionally scaled (--scale), paired frame by frame and scored by the
 * qmetric element.  Prints a progress line while it runs and a summary
 * table at the end; writes libvmaf-style logs (--output) and an SVG chart
 * (--plot); --fail-below turns a score into an exit status for CI.
 *
 * With several distorted inputs (a ladder) the reference is decoded once and
 * every rendition is scored in the same pipeline (ladder.c).
 *
 * Exit status: 0 success, 1 a --fail-below threshold was not met, 2 a usage
 * or input error (one line on stderr says which), 130 interrupted.
 *
 * The parts are listed in compare.h.
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "compare.h"

int main(int argc, char **argv)
{
    App app_s;
    App *app = &app_s;

    memset(app, 0, sizeof(*app));
    qmc_install_crash_handler();
    gst_init(NULL, NULL); /* our options are not GStreamer's */
    qmc_parse_options(&app->o, argc, argv);
    g_mutex_init(&app->lock);
    qmc_resolve_gpus(app);
    return app->o.ladder ? qmc_ladder_main(app) : qmc_pair_main(app);
}
