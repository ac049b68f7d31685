/* gst-qmetric: the same-file test of the tools (see samefile.h). */
#include <sys/stat.h>

#include "samefile.h"

bool qm_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || stat(a, &sa) || stat(b, &sb))
        return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && !S_ISCHR(sa.st_mode);
}

const char *qm_output_is_input(const char *output, const char *const *inputs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (inputs[i] && qm_same_file(output, inputs[i]))
            return inputs[i];
    return NULL;
}
