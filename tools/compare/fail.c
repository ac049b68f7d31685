/* qmetric-compare: its errors.  Before the run, a usage or input error
 * prints one line and exits 2 at once; while it runs, the first error is
 * kept (it is the cause, later ones are its consequences) and ends the main
 * loop; a streaming thread hands its errors and warnings to the main loop
 * as application messages ("qmc-error", "qmc-warning"), because only the
 * main thread prints and decides.
 *
 * Copyright (C) 2026 the gst-qmetric authors.  LGPL-2.1-or-later.
 */
#include "compare.h"

/* "qmetric-compare: MESSAGE" and tail on stderr, then exit(EXIT_USAGE). */
static G_GNUC_NORETURN void die_usage(const char *tail, const char *fmt, va_list ap)
{
    fputs("qmetric-compare: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(tail, stderr);
    exit(EXIT_USAGE);
}

/* A bad option: one line, and where to look. */
void qmc_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    die_usage(" (see qmetric-compare --help)\n", fmt, ap);
}

/* A problem with an input, found before anything runs: one line. */
void qmc_input_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    die_usage("\n", fmt, ap);
}

void qmc_fail(App *app, int code, const char *fmt, ...)
{
    va_list ap;
    if (app->error)
        return;
    va_start(ap, fmt);
    app->error = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    app->exit_code = code;
    if (app->loop)
        g_main_loop_quit(app->loop);
}

static void post(App *app, const char *kind, const char *fmt, va_list ap)
{
    char *msg = g_strdup_vprintf(fmt, ap);
    gst_element_post_message(app->pipeline,
        gst_message_new_application(GST_OBJECT(app->pipeline),
            gst_structure_new(kind, "message", G_TYPE_STRING, msg, NULL)));
    g_free(msg);
}

void qmc_post_error(App *app, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    post(app, "qmc-error", fmt, ap);
    va_end(ap);
}

void qmc_post_warning(App *app, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    post(app, "qmc-warning", fmt, ap);
    va_end(ap);
}

/* A report on stdout is what was asked for: one that cannot be written
 * (a full disk, a closed pipe) is a failure. */
void qmc_exit_after_report(gboolean say)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (say)
            fprintf(stderr, "qmetric-compare: standard output cannot be written\n");
        exit(EXIT_USAGE);
    }
    exit(0);
}
