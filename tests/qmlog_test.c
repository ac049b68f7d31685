/* gst-qmetric: core/qmlog.c under hostile feature names and full disks.
 * Every name is written escaped for its format (exact bytes checked), and
 * a log that cannot be written is refused at open (/dev/full). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qmlog.h"
#include "unit.h"

/* quote, backslash, comma, markup, a control character, a byte that is not
 * UTF-8, and a name that starts with a digit */
static const char *const names[] = {
    "a\"b\\c", "x,y<z>&'", "tab\there", "bad\xff", "9lives",
};
#define N (sizeof(names) / sizeof(names[0]))

static char *write_log(QmLogFormat fmt)
{
    char path[] = "/tmp/qmlog_test.XXXXXX";
    int fd = mkstemp(path);
    double v[N] = { 1, 2, 3, 4, 5 };
    uint8_t present[N] = { 1, 1, 1, 1, 1 };
    char *err = NULL, *s;
    QmPool pools[N];
    QmLog *l;

    CHECK(fd >= 0, "mkstemp");
    close(fd);
    l = qm_log_open(path, fmt, N, names, 8, 8, &err);
    CHECK(l != NULL, "open: %s", err ? err : "?");
    if (!l)
        return strdup("");
    for (unsigned i = 0; i < N; i++) {
        qm_pool_init(&pools[i]);
        qm_pool_add(&pools[i], v[i]);
    }
    CHECK(qm_log_frame(l, 0, v, present) == 0, "frame");
    CHECK(qm_log_close(l, pools, QM_POOL_MEAN, 1.0) == 0, "close");
    for (unsigned i = 0; i < N; i++)
        qm_pool_clear(&pools[i]);
    s = unit_slurp(path);
    unlink(path);
    return s;
}

int main(void)
{
    char *s, *err = NULL;

    s = write_log(QM_LOG_FORMAT_JSON);
    CHECK(strstr(s, "\"a\\\"b\\\\c\": 1.000000"), "json quote/backslash:\n%s", s);
    CHECK(strstr(s, "\"x,y<z>&'\": 2.000000"), "json markup kept:\n%s", s);
    CHECK(strstr(s, "\"tab\\u0009here\": 3.000000"), "json control:\n%s", s);
    CHECK(strstr(s, "\"bad\\ufffd\": 4.000000"), "json non-UTF-8:\n%s", s);
    CHECK(strstr(s, "\"bad\\ufffd\": {"), "json pooled name:\n%s", s);
    free(s);

    s = write_log(QM_LOG_FORMAT_CSV);
    CHECK(!strcmp(s, "Frame,\"a\"\"b\\c\",\"x,y<z>&'\",tab\there,bad\xEF\xBF\xBD,"
                     "9lives\n0,1.000000,2.000000,3.000000,4.000000,5.000000\n"),
          "csv header:\n%s", s);
    free(s);

    s = write_log(QM_LOG_FORMAT_XML);
    CHECK(strstr(s, "<frame frameNum=\"0\" a_b_c=\"1.000000\" x_y_z___=\"2.000000\" "
                    "tab_here=\"3.000000\" bad_=\"4.000000\" _9lives=\"5.000000\" />"),
          "xml attribute names:\n%s", s);
    CHECK(strstr(s, "<metric name=\"a&quot;b\\c\" mean=\"1.000000\" />"),
          "xml value quote:\n%s", s);
    CHECK(strstr(s, "<metric name=\"x,y&lt;z&gt;&amp;&apos;\""), "xml markup:\n%s", s);
    CHECK(strstr(s, "<metric name=\"tab&#9;here\""), "xml tab:\n%s", s);
    CHECK(strstr(s, "<metric name=\"bad\xEF\xBF\xBD\""), "xml non-UTF-8:\n%s", s);
    free(s);

    /* a full disk: refused at open, with the reason */
    if (access("/dev/full", W_OK) == 0) {
        QmLog *l = qm_log_open("/dev/full", QM_LOG_FORMAT_JSON, N, names, 8, 8, &err);
        CHECK(l == NULL, "/dev/full accepted");
        CHECK(err && !strcmp(err, "cannot write log file \"/dev/full\": "
                                  "No space left on device"),
              "error: %s", err ? err : "(none)");
        free(err);
    }

    if (failures)
        printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
