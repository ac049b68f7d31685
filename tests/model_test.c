/* gst-qmetric: unit test of core/model.c (VMAF model loading and prediction).
 *
 * 1. For every golden result of the models vmaf_v0.6.1, vmaf_4k_v0.6.1 and
 *    vmaf_v0.6.1neg, feed each frame's reported input features into
 *    qm_model_predict() and compare with the reported "vmaf".
 * 2. Loading errors: a missing file, malformed JSON, a truncated or
 *    over-long support-vector list, a missing key, an unknown feature, an
 *    unsupported kernel and a VMAF v1 model must all fail with QM_EMODEL and
 *    a message naming the file.
 * 3. Validation (docs/robustness.md): non-finite or out-of-range numbers,
 *    inconsistent support vectors, empty arrays, unknown or out-of-range
 *    feature options, paths that are not regular files or are too large,
 *    file names that are not UTF-8, and empty entries of a model list each
 *    fail with their exact message (valid UTF-8).
 *
 * Exit status: 0 pass, 1 fail, 77 skip (golden data absent).
 * Environment: QMETRIC_GOLDEN_DIR (default QM_GOLDEN_DIR, set by meson).
 *
 * Tolerance of part 1: the golden JSON prints every value with 6 decimals,
 * so each input we feed is off by up to 5e-7 from what libvmaf predicted
 * from, and the reported score by up to 5e-7 as well.  Instead of a guessed
 * constant, the bound is derived per frame from the model itself:
 *
 *   bound = sum_i max_{+-} |f(x + -h e_i) - f(x)| + 5e-7 + 1e-9,  h = 5e-7
 *
 * i.e. how far the score can move when one input moves across its rounding
 * interval (the model is smooth at this scale, so effects add up to first
 * order), plus the output's rounding, plus slack for the linearisation.
 * The score is steep in its inputs (the SVR output is divided by the score
 * slope 0.012 and the inputs are scaled by slopes up to 2.8), so the bound
 * is typically 1e-4 .. 2e-4.  Measured on the golden data (44 results, 826
 * frames): largest |diff| 1.56e-4 (garden_576x324_yuv420p_x264crf30, neg
 * model, frame 25), largest diff / bound 0.91 (the test prints both).  An
 * absolute cap of 3e-4 (about twice the largest difference measured) is
 * asserted as well, so that wrong constants cannot hide behind a large
 * derivative; a wrong rho of 1e-5, for instance, moves the score by 8e-4.
 * (Separately, prediction was checked bit-identical to libvmaf 3.2.0's
 * vmaf_score_at_index() on 20000 random inputs per model and flag set.)
 */
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "sha256.h"
#include "model.h"
#include "unit.h"

#ifndef QM_GOLDEN_DIR
#define QM_GOLDEN_DIR "../shared/golden"
#endif

#define ABS_LIMIT 3e-4  /* see the header comment */

static const char *models_dir(void)
{
    return QM_SOURCE_ROOT "/data/models";
}

/* libvmaf's key suffix alias of the options the v0.6.1 models set
 * (integer_vif.c / integer_adm.c / integer_motion.c option tables). */
static const char *alias_of(const char *opt)
{
    if (!strcmp(opt, "vif_enhn_gain_limit") || !strcmp(opt, "adm_enhn_gain_limit"))
        return "egl";
    if (!strcmp(opt, "motion_max_val"))
        return "mmxv";
    return opt;
}

/* The result key of a model input: feature + "_<alias>_<%g value>" per
 * option in alphabetical order of the option name, as libvmaf names it. */
static void input_key(const QmModelInput *in, char *buf, size_t len)
{
    unsigned order[QM_MAX_OPTIONS];
    for (unsigned i = 0; i < in->n_opts; i++)
        order[i] = i;
    for (unsigned i = 1; i < in->n_opts; i++)
        for (unsigned j = i; j > 0 &&
             strcmp(in->opt_name[order[j - 1]], in->opt_name[order[j]]) > 0; j--) {
            unsigned t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    size_t l = (size_t)snprintf(buf, len, "%s", in->feature);
    for (unsigned i = 0; i < in->n_opts && l < len; i++)
        l += (size_t)snprintf(buf + l, len - l, "_%s_%g",
                              alias_of(in->opt_name[order[i]]),
                              in->opt_value[order[i]]);
}

/* Error bound of one frame (see the header comment). */
static double frame_bound(const QmModel *m, const double *in)
{
    const double h = 5e-7;
    double x[QM_MAX_FEATURES], b = 5e-7 + 1e-9;
    const unsigned n = qm_model_n_inputs(m);
    const double f0 = qm_model_predict(m, in, false, false);
    memcpy(x, in, n * sizeof(double));
    for (unsigned i = 0; i < n; i++) {
        x[i] = in[i] + h;
        double up = fabs(qm_model_predict(m, x, false, false) - f0);
        x[i] = in[i] - h;
        double dn = fabs(qm_model_predict(m, x, false, false) - f0);
        x[i] = in[i];
        b += up > dn ? up : dn;
    }
    return b;
}

static int check_golden(const char *golden)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/results", golden);
    DIR *d = opendir(dir);
    if (!d)
        return 77;
    static const char *const names[] = { "vmaf_v0.6.1", "vmaf_4k_v0.6.1",
                                         "vmaf_v0.6.1neg" };
    QmModel *models[3] = { NULL };
    for (int k = 0; k < 3; k++) {
        char *err = NULL;
        int r = qm_model_load(&models[k], names[k], models_dir(), &err);
        CHECK(r == 0, "loading %s: %s", names[k], err ? err : "?");
        free(err);
        if (r) {
            closedir(d);
            return 1;
        }
        CHECK(!strcmp(qm_model_name(models[k]), names[k]), "name %s",
              qm_model_name(models[k]));
    }

    unsigned nfiles = 0, nframes = 0;
    double worst = 0, worst_ratio = 0;
    char worst_where[512] = "";
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *sep = strstr(de->d_name, "__");
        if (!sep)
            continue;
        int k;
        for (k = 0; k < 3; k++) {
            char want[64];
            snprintf(want, sizeof(want), "__%s.json", names[k]);
            if (!strcmp(sep, want))
                break;
        }
        if (k == 3)
            continue;
        const QmModel *m = models[k];
        char path[8192], jerr[256];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        QmJson *j = qm_json_load(path, jerr, sizeof(jerr));
        CHECK(j, "%s: %s", path, jerr);
        if (!j)
            continue;
        nfiles++;
        const QmJson *frames = qm_json_get(j, "frames");
        for (size_t f = 0; frames && f < frames->n; f++) {
            const QmJson *mt = qm_json_get(qm_json_at(frames, f), "metrics");
            double in[QM_MAX_FEATURES];
            bool ok = true;
            for (unsigned i = 0; i < qm_model_n_inputs(m); i++) {
                char key[256];
                input_key(qm_model_input(m, i), key, sizeof(key));
                const QmJson *v = qm_json_get(mt, key);
                CHECK(v && v->type == QM_JSON_NUMBER, "%s frame %zu: no %s",
                      de->d_name, f, key);
                ok &= v && v->type == QM_JSON_NUMBER;
                in[i] = v ? v->num : 0;
            }
            const QmJson *g = qm_json_get(mt, "vmaf");
            CHECK(g && g->type == QM_JSON_NUMBER, "%s frame %zu: no vmaf",
                  de->d_name, f);
            if (!ok || !g || g->type != QM_JSON_NUMBER)
                continue;
            nframes++;
            const double p = qm_model_predict(m, in, false, false);
            const double diff = fabs(p - g->num);
            const double bound = frame_bound(m, in);
            CHECK(diff <= bound && diff < ABS_LIMIT,
                  "%s frame %zu: vmaf %.6f, predicted %.9f (diff %.2e, "
                  "bound %.2e)", de->d_name, f, g->num, p, diff, bound);
            if (diff > worst) {
                worst = diff;
                snprintf(worst_where, sizeof(worst_where), "%s frame %zu",
                         de->d_name, f);
            }
            if (diff / bound > worst_ratio)
                worst_ratio = diff / bound;
        }
        qm_json_free(j);
    }
    closedir(d);
    for (int k = 0; k < 3; k++)
        qm_model_free(&models[k]);
    printf("golden: %u results, %u frames; largest |vmaf diff| %.2e (%s); "
           "largest diff / bound %.2f\n", nfiles, nframes, worst, worst_where,
           worst_ratio);
    if (!nfiles)
        return 77;
    return 0;
}

/* ---- error cases ---- */

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = 0;
    fclose(f);
    return s;
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    fwrite(text, 1, len, f);
    fclose(f);
}

/* text with the first occurrence of `from` replaced by `to` (malloc'd) */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *p = strstr(text, from);
    if (!p)
        return NULL;
    size_t a = (size_t)(p - text), lf = strlen(from), lt = strlen(to);
    char *s = malloc(strlen(text) - lf + lt + 1);
    if (!s)
        return NULL;
    memcpy(s, text, a);
    memcpy(s + a, to, lt);
    strcpy(s + a + lt, p + lf);
    return s;
}

/* Loading `path` must fail with QM_EMODEL, a message naming the file and
 * containing `what` (when given). */
static void expect_error(const char *label, const char *path, const char *what)
{
    QmModel *m = (QmModel *)1;
    char *err = NULL;
    int r = qm_model_load(&m, path, models_dir(), &err);
    CHECK(r == QM_EMODEL, "%s: returned %d, expected QM_EMODEL", label, r);
    CHECK(m == NULL, "%s: model not NULL", label);
    CHECK(err && strstr(err, path), "%s: message '%s' does not name %s",
          label, err ? err : "(none)", path);
    CHECK(!what || (err && strstr(err, what)),
          "%s: message '%s' does not mention '%s'", label, err ? err : "(none)",
          what);
    printf("  %-22s -> %s\n", label, err ? err : "(no message)");
    free(err);
    if (r == 0)
        qm_model_free(&m);
}

/* ---- validation: the exact message of every refused model ---- */

/* text with the last occurrence of `from` replaced by `to` (malloc'd): the
 * model_dict comes after the param_dict, which repeats some keys */
static char *replace_last(const char *text, const char *from, const char *to)
{
    const char *p = NULL;
    for (const char *q = text; (q = strstr(q, from)); q++)
        p = q;
    if (!p)
        return NULL;
    size_t a = (size_t)(p - text), lf = strlen(from), lt = strlen(to);
    char *s = malloc(strlen(text) - lf + lt + 1);
    memcpy(s, text, a);
    memcpy(s + a, to, lt);
    strcpy(s + a + lt, p + lf);
    return s;
}

/* Every byte sequence valid UTF-8 (RFC 3629) and no control character. */
static int valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p, n = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1
                           : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : 9;
        if (n == 9 || (n == 0 && c < 0x20))
            return 0;
        for (unsigned i = 1; i <= n; i++)
            if ((p[i] & 0xC0) != 0x80)
                return 0;
        p += n + 1;
    }
    return 1;
}

/* Loading `path` must fail with QM_EMODEL and exactly "model <shown>: <msg>"
 * (shown: the path as the message must show it; NULL: path itself). */
static void expect_exact(const char *label, const char *path, const char *shown,
                         const char *msg)
{
    QmModel *m = (QmModel *)1;
    char *err = NULL;
    int r = qm_model_load(&m, path, models_dir(), &err);
    char want[16384];
    snprintf(want, sizeof(want), "model %s: %s", shown ? shown : path, msg);
    CHECK(r == QM_EMODEL && m == NULL, "%s: returned %d, expected QM_EMODEL", label, r);
    CHECK(err && !strcmp(err, want), "%s: message\n    '%s'\n  expected\n    '%s'",
          label, err ? err : "(none)", want);
    CHECK(err && valid_utf8(err), "%s: message is not valid UTF-8", label);
    printf("  %-28s -> %s\n", label, err ? err : "(no message)");
    free(err);
    if (r == 0)
        qm_model_free(&m);
}

/* Line of the first occurrence of `what` in text (for JSON error texts). */
static int line_of(const char *text, const char *what)
{
    const char *p = strstr(text, what);
    int line = 1;
    for (const char *c = text; p && c < p; c++)
        line += *c == '\n';
    return line;
}

static void check_validation(const char *tmp, const char *orig, const char *neg)
{
    static const struct {
        const char *label;
        int in_neg, last;  /* edit the neg model; the last occurrence */
        const char *from, *to, *msg;
    } edits[] = {
        { "gamma NaN", 0, 0, "gamma 0.04\\n", "gamma nan\\n",
          "libsvm model: gamma is not a finite number" },
        { "gamma overflow", 0, 0, "gamma 0.04\\n", "gamma 1e999\\n",
          "libsvm model: gamma is not a finite number" },
        { "gamma negative", 0, 0, "gamma 0.04\\n", "gamma -0.04\\n",
          "libsvm model: gamma -0.04 is not > 0" },
        { "gamma zero", 0, 0, "gamma 0.04\\n", "gamma 0\\n",
          "libsvm model: gamma 0 is not > 0" },
        { "rho infinite", 0, 0, "rho -1.33133", "rho -inf",
          "libsvm model: rho is not a finite number" },
        { "SV coefficient NaN", 0, 0, "SV\\n-4 1:", "SV\\nNaN 1:",
          "libsvm model: support vector 1: the coefficient is missing or not "
          "a finite number" },
        { "SV value infinite", 0, 0, "2:0.34681232", "2:INF",
          "libsvm model: support vector 1: bad index:value pair (a finite "
          "value expected)" },
        { "SV index past features", 0, 0, "6:0.73495824 \\n", "6:0.73495824 7:1 \\n",
          "libsvm model: support vector 1: index 7, but feature_names has 6 "
          "features" },
        { "SV indices repeated", 0, 0, "5:0.69117362 6:", "5:0.69117362 5:",
          "libsvm model: support vector 1: indices not increasing" },
        { "total_sv zero", 0, 0, "total_sv 211", "total_sv 0",
          "libsvm model: bad total_sv" },
        { "score slope zero", 0, 0, "0.012020766332648465,", "0,",
          "slopes[0] (the score's slope) is 0" },
        { "slopes empty", 0, 0, "\"slopes\": [", "\"slopes\": [], \"x\": [",
          "slopes must be an array of 7 numbers" },
        { "intercepts not numbers", 0, 0, "\"intercepts\": [", "\"intercepts\": [\"a\", ",
          "intercepts must be an array of 7 numbers" },
        { "feature_names empty", 0, 0, "\"feature_names\": [",
          "\"feature_names\": [], \"x\": [", "0 features (supported: 1 to 16)" },
        { "score_clip reversed", 0, 1, "0.0,\n            100.0",
          "100.0,\n            0.0", "score_clip [100, 0]: the minimum is above the maximum" },
        { "score_clip empty", 0, 1, "\"score_clip\": [", "\"score_clip\": [], \"x\": [",
          "score_clip must be an array of 2 numbers" },
        { "invalid UTF-8 feature", 0, 0, "\"VMAF_integer_feature_adm2_score\"",
          "\"VMAF_\xff\xfe\"",
          "input feature 'VMAF_\\xFF\\xFE' is not computed by this engine "
          "(supported: libvmaf's integer VIF, ADM and motion features, CAMBI and SpEED chroma)" },
        { "option unknown", 1, 0, "\"adm_enhn_gain_limit\"", "\"adm_enhn_gain_limt\"",
          "feature_opts_dicts[0]: unknown option 'adm_enhn_gain_limt' for adm "
          "(known: adm_csf_mode, adm_dlm_weight, adm_enhn_gain_limit, adm_min_val, "
          "adm_noise_weight, adm_norm_view_dist, adm_ref_display_height, "
          "adm_skip_scale0)" },
        { "option below range", 1, 0, "\"adm_enhn_gain_limit\": 1.0",
          "\"adm_enhn_gain_limit\": 0.5",
          "feature_opts_dicts[0]: option 'adm_enhn_gain_limit' = 0.5 is out of "
          "range [1, 100]" },
        { "option float overflow", 1, 0, "\"adm_enhn_gain_limit\": 1.0",
          "\"adm_enhn_gain_limit\": 1e300",
          "feature_opts_dicts[0]: option 'adm_enhn_gain_limit' = 1e+300 is out "
          "of range [1, 100]" },
        { "switch not 0/1", 1, 0, "\"vif_enhn_gain_limit\": 1.0",
          "\"vif_skip_scale0\": 0.5",
          "feature_opts_dicts[2]: option 'vif_skip_scale0' = 0.5 is not a switch "
          "(true/false or 1/0)" },
        { "option a string", 1, 0, "\"adm_enhn_gain_limit\": 1.0",
          "\"adm_enhn_gain_limit\": \"1.0\"",
          "feature_opts_dicts[0]: option 'adm_enhn_gain_limit' takes a number, "
          "not a string" },
    };
    char path[4200], msg[9000];
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
        const char *base = edits[i].in_neg ? neg : orig;
        char *t = edits[i].last ? replace_last(base, edits[i].from, edits[i].to)
                                : replace(base, edits[i].from, edits[i].to);
        CHECK(t, "%s: '%s' not found", edits[i].label, edits[i].from);
        if (!t)
            continue;
        snprintf(path, sizeof(path), "%s/valid%zu.json", tmp, i);
        write_text(path, t, strlen(t));
        free(t);
        expect_exact(edits[i].label, path, NULL, edits[i].msg);
    }

    /* JSON numbers beyond a double are errors, not infinities */
    char *t = replace(orig, "0.012020766332648465", "1e999");
    snprintf(path, sizeof(path), "%s/json_inf.json", tmp);
    write_text(path, t, strlen(t));
    snprintf(msg, sizeof(msg), "number out of range at line %d",
             line_of(orig, "0.012020766332648465"));
    expect_exact("JSON number 1e999", path, NULL, msg);
    free(t);
    t = replace(orig, "0.012020766332648465", "-1e400");
    write_text(path, t, strlen(t));
    expect_exact("JSON number -1e400", path, NULL, msg);
    free(t);

    /* what is not a regular file is refused without reading (a fifo would
     * block an open() for reading, /dev/zero never ends) */
    alarm(20);
    snprintf(path, sizeof(path), "%s/dir.json", tmp);
    mkdir(path, 0700);
    expect_exact("a directory", path, NULL, "a directory, not a regular file");
    rmdir(path);
    expect_exact("/dev/zero", "/dev/zero", NULL,
                 "not a regular file (a device, fifo or socket)");
    snprintf(path, sizeof(path), "%s/fifo.json", tmp);
    if (mkfifo(path, 0600) == 0) {
        expect_exact("a fifo", path, NULL, "not a regular file (a device, fifo or socket)");
        unlink(path);
    }
    snprintf(path, sizeof(path), "%s/huge.json", tmp);
    FILE *f = fopen(path, "wb");
    if (f) {
        CHECK(ftruncate(fileno(f), (off_t)QM_JSON_MAX_FILE + 1) == 0, "ftruncate");
        fclose(f);
        expect_exact("larger than 64 MiB", path, NULL,
                     "larger than 64 MiB (QM_JSON_MAX_FILE)");
        unlink(path);
    }
    alarm(0);

    /* a file name that is not UTF-8: shown escaped */
    char shown[4300];
    snprintf(path, sizeof(path), "%s/caf\xe9\x01.json", tmp);
    snprintf(shown, sizeof(shown), "%s/caf\\xE9\\x01.json", tmp);
    snprintf(msg, sizeof(msg), "cannot open %s: No such file or directory", shown);
    expect_exact("non-UTF-8 file name", path, shown, msg);
}

/* The "model" setting's list: blanks trimmed, empty entries refused. */
static void check_model_list(void)
{
    static const struct {
        const char *list, *want; /* want: names joined by '|', or the error */
        int err;
    } cases[] = {
        { "vmaf_v0.6.1", "vmaf_v0.6.1", 0 },
        { " a , b\t,c ", "a|b|c", 0 },
        { "a,,b", "model list 'a,,b': entry 2 of 3 is empty", QM_EINVAL },
        { ",a", "model list ',a': entry 1 of 2 is empty", QM_EINVAL },
        { "a,", "model list 'a,': entry 2 of 2 is empty", QM_EINVAL },
        { "a, ,b", "model list 'a, ,b': entry 2 of 3 is empty", QM_EINVAL },
        { "", "model list '': entry 1 of 1 is empty", QM_EINVAL },
        { "a,\xff,", "model list 'a,\\xFF,': entry 3 of 3 is empty", QM_EINVAL },
    };
    printf("model lists:\n");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char **names = (char **)1, *err = NULL, got[256] = "";
        int r = qm_model_list_parse(cases[i].list, &names, &err);
        if (!r)
            for (char **n = names; *n; n++)
                snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s",
                         n == names ? "" : "|", *n);
        else
            snprintf(got, sizeof(got), "%s", err ? err : "(no message)");
        CHECK(r == cases[i].err && !strcmp(got, cases[i].want) &&
              (r == 0 || names == NULL),
              "model list '%s': %d '%s', expected %d '%s'", cases[i].list, r, got,
              cases[i].err, cases[i].want);
        CHECK(valid_utf8(got), "model list %zu: not valid UTF-8", i);
        printf("  %-14s -> %s\n", cases[i].list, got);
        if (!r)
            qm_model_list_free(names);
        free(err);
    }
}

static void check_errors(const char *golden)
{
    char tmpl[] = "/tmp/qm_model_test_XXXXXX";
    const char *tmp = mkdtemp(tmpl);
    CHECK(tmp, "mkdtemp");
    if (!tmp)
        return;
    char src[4096];
    snprintf(src, sizeof(src), "%s/vmaf_v0.6.1.json", models_dir());
    char *orig = read_text(src);
    CHECK(orig, "cannot read %s", src);
    if (!orig)
        return;
    printf("error cases:\n");

    char path[4200];
    snprintf(path, sizeof(path), "%s/does_not_exist.json", tmp);
    expect_error("missing file", path, NULL);

    {   /* a built-in name that is not in the search path */
        QmModel *m = NULL;
        char *err = NULL;
        int r = qm_model_load(&m, "vmaf_no_such_model", models_dir(), &err);
        CHECK(r == QM_EMODEL && !m && err && strstr(err, "vmaf_no_such_model"),
              "unknown built-in name: %d '%s'", r, err ? err : "");
        printf("  %-22s -> %s\n", "unknown built-in name", err ? err : "");
        free(err);
    }

    /* malformed JSON: the file cut in half */
    snprintf(path, sizeof(path), "%s/malformed.json", tmp);
    write_text(path, orig, strlen(orig) / 2);
    expect_error("malformed JSON", path, NULL);

    /* a truncated SV list: the model string cut after its 100th line, so
     * it holds 93 of the 211 support vectors total_sv announces */
    {
        char *start = strstr(orig, "\"model\": \"svm_type");
        CHECK(start, "no model string in %s", src);
        if (start) {
            char *p = start;
            for (int lines = 0; p && lines < 100; lines++)
                p = strstr(p + 2, "\\n");
            char *end = p ? strchr(p, '"') : NULL;
            CHECK(end, "model string too short");
            if (end) {
                size_t a = (size_t)(p + 2 - orig);
                char *s = malloc(strlen(orig) + 1);
                memcpy(s, orig, a);
                strcpy(s + a, end);
                snprintf(path, sizeof(path), "%s/truncated_sv.json", tmp);
                write_text(path, s, strlen(s));
                free(s);
                expect_error("truncated SV list", path, "total_sv");
            }
        }
    }

    static const struct {
        const char *label, *from, *to, *what;
    } edits[] = {
        { "more SVs than total_sv", "total_sv 211", "total_sv 210", "total_sv" },
        { "SV line cut short", " 6:0.73495824 \\n4 1:0.8727433",
          " 6:\\n4 1:0.8727433", "support vector 1: bad index:value" },
        { "missing model_type", "\"model_type\"", "\"model_typo\"", "model_type" },
        { "unknown model_type", "\"LIBSVMNUSVR\"", "\"BOOTSTRAP_LIBSVMNUSVR\"",
          "model_type" },
        { "unknown kernel", "kernel_type rbf", "kernel_type linear", "kernel" },
        { "unknown feature", "\"VMAF_integer_feature_adm2_score\"",
          "\"VMAF_feature_adm2_score\"", "VMAF_feature_adm2_score" },
        { "slopes too short", "\"slopes\": [", "\"slopes\": [1.0], \"x\": [",
          "slopes" },
        { "no model string", "\"model\": \"svm_type", "\"mode1\": \"svm_type",
          "libsvm" },
        /* which of two values a reader takes is not defined: refused */
        { "a member named twice", "\"model_type\"",
          "\"model_type\": \"LIBSVMNUSVR\", \"model_type\"", "\"model_type\" given twice" },
    };
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
        char *s = replace(orig, edits[i].from, edits[i].to);
        CHECK(s, "%s: '%s' not found in %s", edits[i].label, edits[i].from, src);
        if (!s)
            continue;
        snprintf(path, sizeof(path), "%s/edit%zu.json", tmp, i);
        write_text(path, s, strlen(s));
        free(s);
        expect_error(edits[i].label, path, edits[i].what);
    }

    /* the digest of the model is that of the bytes loaded (a chunk's
     * identity names its models by it) */
    {
        QmModel *a = NULL, *b = NULL;
        char *e = NULL;
        uint8_t want[QM_SHA256_BYTES];
        qm_sha256(orig, strlen(orig), want);
        CHECK(qm_model_load(&a, src, NULL, &e) == 0 && a &&
              !memcmp(qm_model_sha256(a), want, sizeof(want)),
              "%s: SHA-256 is not the file's", src);
        free(e);
        e = NULL;
        CHECK(qm_model_parse(&b, "text", orig, strlen(orig), &e) == 0 && b &&
              !memcmp(qm_model_sha256(b), want, sizeof(want)),
              "qm_model_parse: SHA-256 is not the text's");
        free(e);
        if (a && b) {
            /* the name is not part of the digest; one byte is */
            char *s = replace(orig, "\"LIBSVMNUSVR\"", "\"LIBSVMNUSVR\" ");
            QmModel *c = NULL;
            CHECK(s && qm_model_parse(&c, "text", s, strlen(s), &e) == 0 && c &&
                  memcmp(qm_model_sha256(c), want, sizeof(want)),
                  "one more blank: same SHA-256");
            free(e);
            e = NULL;
            free(s);
            qm_model_free(&c);
        }
        qm_model_free(&a);
        qm_model_free(&b);
    }

    /* an unknown built-in name says so, and lists the built-in names */
    {
        QmModel *u = NULL;
        char *e = NULL;
        CHECK(qm_model_load(&u, "vmaf_v1.0.16_3d0x", QM_SOURCE_ROOT
                            "/data/models", &e) == QM_EMODEL && !u && e &&
              strstr(e, "unknown model name") &&
              strstr(e, "vmaf_v1.0.16_hfr_3d0h_2160"),
              "unknown name: %s", e ? e : "(no message)");
        free(e);
    }

    /* the VMAF v1 models load by name and by path: CAMBI / SpEED / ADM3 /
     * motion3 inputs with their options (the string option as the index of
     * its value), and chroma_correction_parameter */
    static const char *const v1[] = {
        "vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_5d0h", "vmaf_v1.0.16_1d5h_2160",
        "vmaf_v1.0.16_3d0h_2160", "vmaf_v1.0.16_hfr_3d0h",
        "vmaf_v1.0.16_hfr_5d0h", "vmaf_v1.0.16_hfr_1d5h_2160",
        "vmaf_v1.0.16_hfr_3d0h_2160",
    };
    for (size_t i = 0; i < sizeof(v1) / sizeof(v1[0]); i++) {
        QmModel *a = NULL, *b = NULL;
        char *e = NULL;
        snprintf(path, sizeof(path), QM_SOURCE_ROOT "/data/models/%s.json", v1[i]);
        CHECK(qm_model_load(&a, v1[i], QM_SOURCE_ROOT "/data/models", &e) == 0,
              "%s: %s", v1[i], e ? e : "");
        free(e);
        e = NULL;
        CHECK(qm_model_load(&b, path, NULL, &e) == 0, "%s: %s", path, e ? e : "");
        free(e);
        if (!a || !b) {
            qm_model_free(&a);
            qm_model_free(&b);
            continue;
        }
        CHECK(qm_model_n_inputs(a) == 4 &&
              !strcmp(qm_model_input(a, 0)->metric, "cambi") &&
              !strcmp(qm_model_input(a, 1)->feature, "speed_chroma_uv") &&
              !strcmp(qm_model_input(a, 2)->feature, "integer_adm3") &&
              !strcmp(qm_model_input(a, 3)->feature, "integer_motion3"),
              "%s: inputs", v1[i]);
        const QmModelInput *sp = qm_model_input(a, 1);
        for (unsigned k = 0; k < sp->n_opts; k++)
            if (!strcmp(sp->opt_name[k], "speed_prescale_method"))
                CHECK(sp->opt_value[k] == 1.0, "%s: bilinear is choice 1",
                      v1[i]);
        /* same model by name and by path: same scores */
        const double in[4] = { 3.5, 1.25, 0.93, 4.0 };
        CHECK(qm_model_predict(a, in, false, false) ==
              qm_model_predict(b, in, false, false), "%s: name vs path", v1[i]);
        /* chroma correction: speed_chroma_uv 0 is replaced by
         * 120 (1 - adm3), adm3 taken back through its normalisation as in
         * libvmaf predict.c; the model's slopes/intercepts (file order:
         * score, cambi, speed, adm3, motion3) */
        const double sl_a = 0.03147688934068315, ic_a = -0.014977474082856242;
        const double g = ((sl_a * in[2] + ic_a) - ic_a) / sl_a;
        const double zero[4] = { in[0], 0.0, in[2], in[3] };
        const double repl[4] = { in[0], (-120.0 * g) + 120.0, in[2], in[3] };
        CHECK(qm_model_predict(a, zero, true, false) ==
              qm_model_predict(a, repl, true, false),
              "%s: chroma correction: %.17g vs %.17g", v1[i],
              qm_model_predict(a, zero, true, false),
              qm_model_predict(a, repl, true, false));
        qm_model_free(&a);
        qm_model_free(&b);
    }

    snprintf(src, sizeof(src), "%s/vmaf_v0.6.1neg.json", models_dir());
    char *neg = read_text(src);
    CHECK(neg, "cannot read %s", src);
    if (neg)
        check_validation(tmp, orig, neg);
    free(neg);

    /* sanity: the unmodified copy loads, and the neg model's options */
    snprintf(path, sizeof(path), "%s/copy.json", tmp);
    write_text(path, orig, strlen(orig));
    QmModel *m = NULL;
    char *err = NULL;
    CHECK(qm_model_load(&m, path, NULL, &err) == 0, "copy: %s", err ? err : "");
    CHECK(m && !strcmp(qm_model_name(m), "copy"), "copy: name");
    free(err);
    qm_model_free(&m);
    err = NULL;
    CHECK(qm_model_load(&m, "vmaf_v0.6.1neg", "/nonexistent:" QM_SOURCE_ROOT
                        "/data/models", &err) == 0, "neg: %s", err ? err : "");
    free(err);
    if (m) {
        const QmModelInput *a = qm_model_input(m, 0), *v = qm_model_input(m, 2),
                           *mo = qm_model_input(m, 1);
        CHECK(!strcmp(a->metric, "adm") && !strcmp(a->feature, "integer_adm2") &&
              a->n_opts == 1 && !strcmp(a->opt_name[0], "adm_enhn_gain_limit") &&
              a->opt_value[0] == 1.0, "neg: adm input");
        CHECK(!strcmp(v->metric, "vif") && !strcmp(v->feature, "integer_vif_scale0") &&
              v->n_opts == 1 && !strcmp(v->opt_name[0], "vif_enhn_gain_limit") &&
              v->opt_value[0] == 1.0, "neg: vif input");
        CHECK(!strcmp(mo->metric, "motion") && mo->n_opts == 0, "neg: motion input");
        qm_model_free(&m);
    }

    /* clean up */
    DIR *d = opendir(tmp);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", tmp, de->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(tmp);
    free(orig);
}

int main(void)
{
    const char *golden = getenv("QMETRIC_GOLDEN_DIR");
    if (!golden || !*golden)
        golden = QM_GOLDEN_DIR;

    check_model_list();
    check_errors(golden);
    int r = check_golden(golden);
    if (failures) {
        printf("%d check(s) failed\n", failures);
        return 1;
    }
    if (r == 77) {
        const char *req = getenv("QMETRIC_GOLDEN_REQUIRED");
        if (req && !strcmp(req, "1")) {
            printf("FAIL: golden data not found at %s (QMETRIC_GOLDEN_REQUIRED=1)\n",
                   golden);
            return 1;
        }
        printf("SKIP: golden data not found at %s (error cases passed)\n",
               golden);
        return 77;
    }
    printf("PASS\n");
    return r;
}
