/* gst-qmetric: a main() for the fuzzing harnesses where libFuzzer is not
 * available (gcc builds, CI): runs LLVMFuzzerTestOneInput over every file
 * of the directories (or files) given, as libFuzzer's own replay does, so
 * that the checked-in corpora stay a regression test everywhere. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* optional, as in libFuzzer (the element harness initialises GStreamer) */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + len, 1, cap - len, f)) > 0) {
        len += r;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (!buf)
        return -1;
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int n = 0;
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (argv[i][0] == '-' || stat(argv[i], &st) != 0)
            continue; /* libFuzzer flags: not ours */
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]))
                return 1;
            n++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        struct dirent *de;
        while (d && (de = readdir(d))) {
            if (de->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
            if (run_file(path))
                return 1;
            n++;
        }
        if (d)
            closedir(d);
    }
    printf("replayed %d inputs\n", n);
    return n ? 0 : 1;
}
