/* qmetric-compare: the files it writes (the log, the chart).
 *
 * Each is written to a temporary file while the comparison runs and reaches
 * its destination only at the end, when everything succeeded: a run that
 * fails (a usage error found at the first frame, a decoder error, Ctrl-C
 * twice) leaves no partial file behind, and a destination that cannot be
 * written is named before anything runs.  A regular file (or a new one) is
 * replaced by renaming a temporary file made in its own directory, so a
 * reader never sees half of it; standard output ("-"), devices, FIFOs and
 * symbolic links are written in place at the end, from a temporary file in
 * the temporary directory, with every write checked (/dev/full fails).
 * No output may be one of the inputs (qmc_output_protect()): that is
 * refused before anything is written.
 */
#include "compare.h"
#include "../samefile.h"

static GSList *pending; /* Output: not yet committed or discarded */
static GPtrArray *inputs; /* char *: the local files read, which no output may be */

void qmc_output_protect(const char *input)
{
    char *path = NULL;
    if (!input)
        return;
    if (g_str_has_prefix(input, "file:"))
        path = g_filename_from_uri(input, NULL, NULL);
    else if (!gst_uri_is_valid(input))
        path = g_strdup(input);
    if (!path)
        return; /* another URI: not a file here */
    if (!inputs)
        inputs = g_ptr_array_new();
    g_ptr_array_add(inputs, path);
}

static void cleanup(void)
{
    while (pending)
        qmc_output_discard(pending->data);
}

gboolean qmc_output_is_stdout(const Output *out)
{
    return out->dest && !strcmp(out->dest, "-");
}

void qmc_output_prepare(Output *out, const char *what, const char *dest)
{
    static gboolean registered;
    GStatBuf st;
    int fd;

    out->what = what;
    out->dest = g_strdup(dest);
    if (!*dest)
        qmc_usage_error("%s: empty file name", what);
    if (inputs && strcmp(dest, "-")) {
        const char *in = qm_output_is_input(dest, (const char *const *)inputs->pdata,
                                            inputs->len);
        if (in)
            qmc_input_error("%s %s is the input %s (the same file): it would be overwritten",
                            what, dest, in);
    }
    if (!strcmp(dest, "-") || (g_lstat(dest, &st) == 0 && !S_ISREG(st.st_mode))) {
        GError *err = NULL;
        if (strcmp(dest, "-")) {
            if (S_ISDIR(st.st_mode))
                qmc_input_error("%s %s: is a directory", what, dest);
            if (g_access(dest, W_OK) != 0)
                qmc_input_error("%s %s: cannot be written: %s", what, dest, g_strerror(errno));
        }
        fd = g_file_open_tmp("qmetric-compare-XXXXXX", &out->tmp, &err);
        if (fd < 0)
            qmc_input_error("%s: no temporary file: %s", what, err->message);
        out->copy = TRUE;
    } else {
        char *dir = g_path_get_dirname(dest), *base = g_path_get_basename(dest);
        if (g_file_test(dest, G_FILE_TEST_EXISTS) && g_access(dest, W_OK) != 0)
            qmc_input_error("%s %s: cannot be written: %s", what, dest, g_strerror(errno));
        out->tmp = g_strdup_printf("%s/.%s.XXXXXX", dir, base);
        /* 0666 less the umask, as for any file the user creates */
        fd = g_mkstemp_full(out->tmp, O_RDWR, 0666);
        if (fd < 0) {
            int e = errno;
            qmc_input_error("%s %s: cannot be written: %s", what, dest,
                            e == ENOENT ? "no such directory" : g_strerror(e));
        }
        g_free(dir);
        g_free(base);
    }
    close(fd);
    if (!registered) {
        atexit(cleanup);
        registered = TRUE;
    }
    pending = g_slist_prepend(pending, out);
}

/* tmp -> an open stream; FALSE with errno set on a read or write error. */
static gboolean copy_to(const char *tmp, FILE *to)
{
    char buf[65536];
    size_t n;
    gboolean ok = TRUE;
    FILE *from = g_fopen(tmp, "rb");

    if (!from)
        return FALSE;
    while (ok && (n = fread(buf, 1, sizeof(buf), from)) > 0)
        ok = fwrite(buf, 1, n, to) == n;
    if (ok && ferror(from))
        ok = FALSE;
    fclose(from);
    return ok;
}

gboolean qmc_output_commit(Output *out, char **err)
{
    gboolean ok;
    int e = 0;

    if (!out->tmp)
        return TRUE;
    if (!out->copy) {
        ok = g_rename(out->tmp, out->dest) == 0;
        e = errno;
    } else if (qmc_output_is_stdout(out)) {
        ok = copy_to(out->tmp, stdout);
        e = errno;
        if (fflush(stdout) != 0 && ok) {
            ok = FALSE;
            e = errno;
        }
    } else {
        FILE *to = g_fopen(out->dest, "wb");
        ok = to && copy_to(out->tmp, to);
        e = errno;
        if (to && fclose(to) != 0 && ok) {
            ok = FALSE;
            e = errno;
        }
    }
    if (!ok)
        *err = g_strdup_printf("%s %s: cannot be written: %s", out->what,
                               qmc_output_is_stdout(out) ? "(standard output)" : out->dest,
                               g_strerror(e));
    if (out->copy || !ok)
        g_unlink(out->tmp);
    g_clear_pointer(&out->tmp, g_free);
    pending = g_slist_remove(pending, out);
    return ok;
}

void qmc_output_discard(Output *out)
{
    if (out->tmp)
        g_unlink(out->tmp);
    g_clear_pointer(&out->tmp, g_free);
    pending = g_slist_remove(pending, out);
}
