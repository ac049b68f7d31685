/* gst-qmetric: VMAF models in libvmaf's JSON format and their prediction,
 * as libvmaf 3.2.0 reads (read_json_model.c, svm.cpp's model parser) and
 * evaluates them (predict.c vmaf_predict_score_at_index(), svm.cpp
 * svm_predict_values() and Kernel::k_function()).
 *
 * Supported: one model per file ("model_dict"), model_type LIBSVMNUSVR with
 * an embedded libsvm text model (svm_type nu_svr, kernel_type rbf),
 * norm_type linear_rescale or none, score_clip, and a score_transform made
 * of the polynomial p0 + p1 x + p2 x^2 and the out_lte_in / out_gte_in
 * rectification, and the VMAF v1 models' chroma_correction_parameter.
 * Rejected with a message: model collections (bootstrap models),
 * piecewise-linear "knots" transforms (no libvmaf model uses them), and
 * inputs this engine does not compute (float VMAF features).
 *
 * Prediction follows libvmaf's arithmetic step by step in double precision:
 *
 *   x_i   = slope_i * feature_i + intercept_i            (normalise)
 *   s     = sum over SVs j, in file order, of
 *           coef_j * exp(-gamma * |x - sv_j|^2)  - rho
 *   score = (s - intercept) / slope                      (de-normalise)
 *   score = transform(score) when the transform applies
 *   score = clip(score, score_clip)  unless disabled
 *
 * |x - sv_j|^2 is accumulated over the union of the sparse indices in
 * ascending order, exactly as libsvm's sparse RBF kernel does, so a support
 * vector that omits an index (a zero) sums to the same double.  Note: like
 * libvmaf, this relies on a*b+c not being contracted into an FMA; the
 * default x86-64 target has no FMA instruction.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"
#include "model.h"
#include "sha256.h"

/* Which engine metric and feature computes a libvmaf model input.  libvmaf
 * names a model's inputs by its feature extractors' internal names; our
 * features carry libvmaf's output keys (feature/alias.c). */
static const struct {
    const char *model_name, *metric, *feature;
} input_table[] = {
    { "VMAF_integer_feature_vif_scale0_score", "vif", "integer_vif_scale0" },
    { "VMAF_integer_feature_vif_scale1_score", "vif", "integer_vif_scale1" },
    { "VMAF_integer_feature_vif_scale2_score", "vif", "integer_vif_scale2" },
    { "VMAF_integer_feature_vif_scale3_score", "vif", "integer_vif_scale3" },
    { "VMAF_integer_feature_adm2_score", "adm", "integer_adm2" },
    { "VMAF_integer_feature_adm3_score", "adm", "integer_adm3" },
    { "VMAF_integer_feature_aim_score", "adm", "integer_aim" },
    { "VMAF_integer_feature_adm_scale0_score", "adm", "integer_adm_scale0" },
    { "VMAF_integer_feature_adm_scale1_score", "adm", "integer_adm_scale1" },
    { "VMAF_integer_feature_adm_scale2_score", "adm", "integer_adm_scale2" },
    { "VMAF_integer_feature_adm_scale3_score", "adm", "integer_adm_scale3" },
    { "VMAF_integer_feature_motion2_score", "motion", "integer_motion2" },
    { "VMAF_integer_feature_motion3_score", "motion", "integer_motion3" },
    /* the VMAF v1 models' other inputs */
    { "Cambi_feature_cambi_score", "cambi", "cambi" },
    { "Speed_chroma_feature_speed_chroma_u_score", "speed_chroma", "speed_chroma_u" },
    { "Speed_chroma_feature_speed_chroma_v_score", "speed_chroma", "speed_chroma_v" },
    { "Speed_chroma_feature_speed_chroma_uv_score", "speed_chroma", "speed_chroma_uv" },
};

typedef struct Coef {
    bool enabled;
    double value;
} Coef;

struct QmModel {
    char *name;
    uint8_t sha256[QM_SHA256_BYTES];  /* of the model file's bytes */
    unsigned n;                       /* inputs */
    QmModelInput in[QM_MAX_FEATURES];
    const char *in_name[QM_MAX_FEATURES]; /* libvmaf's input names */
    char *opt_names[QM_MAX_FEATURES][QM_MAX_OPTIONS]; /* owned copies */

    bool linear_rescale;              /* norm_type; false: "none" */
    double slope, intercept;          /* of the score */
    double f_slope[QM_MAX_FEATURES], f_intercept[QM_MAX_FEATURES];

    /* libsvm nu-SVR, RBF kernel, nr_class 2: one coefficient per SV */
    double gamma, rho;
    unsigned n_sv;
    double *coef;                     /* n_sv */
    size_t *sv_start;                 /* n_sv + 1 offsets into sv_idx/val */
    int *sv_idx;
    double *sv_val;

    bool clip;                        /* score_clip present */
    double clip_min, clip_max;

    bool has_transform;               /* score_transform present */
    bool transform_enabled;           /* its "enabled": true */
    Coef p0, p1, p2;
    bool out_lte_in, out_gte_in;

    /* chroma_correction_parameter c (VMAF v1): a SpEED chroma input of
     * exactly 0 is replaced by c (1 - adm3), see predict() */
    bool chroma_correction;
    double chroma_c;
    int cc_guiding, cc_guided;        /* input indices: adm3, speed_chroma */
};

/* ---- errors ---- */

typedef struct Ctx {
    const char *file;
    char **err;
} Ctx;

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0], n, cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 1, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 2, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 3, cp = c & 0x07;
    else
        return 0;
    for (unsigned i = 1; i <= n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;  /* also stops at the NUL */
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp < 0xE000))) ||
        (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return n + 1;
}

/* A copy of s that is valid UTF-8 without control characters: file names
 * and strings from a model file may hold any bytes, but messages end up in
 * GError texts and logs.  Bytes that are not part of a valid sequence, and
 * control characters, become "\xNN"; a backslash stays as it is. */
static char *escape_text(const char *s)
{
    size_t l = strlen(s);
    char *out = malloc(4 * l + 1), *o = out;
    if (!out)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_len(p);
        if (n && !(n == 1 && (*p < 0x20 || *p == 0x7F))) {
            memcpy(o, p, n);
            o += n;
            p += n;
        } else {
            o += sprintf(o, "\\x%02X", *p++);
        }
    }
    *o = 0;
    return out;
}

static int fail(Ctx *c, const char *fmt, ...)
{
    char msg[4096 + 512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (c->err) {
        size_t l = strlen(c->file) + strlen(msg) + 16;
        char *raw = malloc(l);
        if (raw) {
            snprintf(raw, l, "model %s: %s", c->file, msg);
            *c->err = escape_text(raw);
            free(raw);
        }
    }
    return QM_EMODEL;
}

/* ---- the libsvm text model ---- */

static const char *skip_blank(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r')
        p++;
    return p;
}

/* Next whitespace-separated token of the header into tok; NULL at the end. */
static const char *next_token(const char *p, char *tok, size_t len)
{
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    if (!*p)
        return NULL;
    size_t l = 0;
    while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') {
        if (l + 1 < len)
            tok[l++] = *p;
        p++;
    }
    tok[l] = 0;
    return p;
}

/* A number on the current line (strtod/strtol would skip newlines). */
static const char *parse_double(const char *p, double *v)
{
    char *e;
    p = skip_blank(p);
    if (*p == '\n' || !*p)
        return NULL;
    errno = 0;
    *v = strtod(p, &e);
    /* strtod also reads "nan", "inf" and overflows to HUGE_VAL: a model
     * number must be finite, or every score would be NaN */
    if (e == p || !isfinite(*v))
        return NULL;
    return e;
}

static const char *parse_long(const char *p, long *v)
{
    char *e;
    p = skip_blank(p);
    if (*p == '\n' || !*p)
        return NULL;
    errno = 0;
    *v = strtol(p, &e, 10);
    if (e == p || errno == ERANGE)
        return NULL;
    return e;
}

/*
 * libsvm's text model, as libvmaf's svm.cpp parses it: header fields
 * "name value..." until the token "SV", then exactly total_sv lines
 * "coef idx:value idx:value ...".
 */
static int parse_svm(Ctx *c, QmModel *m, const char *text)
{
    char tok[64];
    const char *p = text;
    long nr_class = 0, total_sv = 0;
    bool have_type = false, have_kernel = false, have_gamma = false,
         have_rho = false, have_sv = false;

    while ((p = next_token(p, tok, sizeof(tok)))) {
        if (!strcmp(tok, "SV")) {
            have_sv = true;
            break;
        }
        if (!strcmp(tok, "svm_type") || !strcmp(tok, "kernel_type")) {
            char val[64];
            const bool is_type = tok[0] == 's';
            if (!(p = next_token(p, val, sizeof(val))))
                return fail(c, "libsvm model: %s has no value", tok);
            if (is_type && strcmp(val, "nu_svr"))
                return fail(c, "libsvm model: svm_type '%s' is not supported "
                               "(only nu_svr)", val);
            if (!is_type && strcmp(val, "rbf"))
                return fail(c, "libsvm model: kernel_type '%s' is not "
                               "supported (only rbf)", val);
            *(is_type ? &have_type : &have_kernel) = true;
        } else if (!strcmp(tok, "gamma") || !strcmp(tok, "coef0")) {
            double v;
            if (!(p = parse_double(p, &v)))
                return fail(c, "libsvm model: %s is not a finite number", tok);
            if (tok[0] == 'g') {
                m->gamma = v;
                have_gamma = true;
            }  /* coef0 plays no part in the RBF kernel */
        } else if (!strcmp(tok, "degree")) {
            long v;
            if (!(p = parse_long(p, &v)))
                return fail(c, "libsvm model: bad degree");
        } else if (!strcmp(tok, "nr_class")) {
            if (!(p = parse_long(p, &nr_class)))
                return fail(c, "libsvm model: bad nr_class");
            /* regression models carry nr_class 2: one coefficient per SV
             * and one rho */
            if (nr_class != 2)
                return fail(c, "libsvm model: nr_class %ld, expected 2 for "
                               "a regression model", nr_class);
        } else if (!strcmp(tok, "total_sv")) {
            if (!(p = parse_long(p, &total_sv)) || total_sv <= 0 ||
                total_sv > 1000000)
                return fail(c, "libsvm model: bad total_sv");
        } else if (!strcmp(tok, "rho")) {
            /* nr_class (nr_class - 1) / 2 values; libsvm needs nr_class
             * first to know how many */
            if (nr_class != 2)
                return fail(c, "libsvm model: rho before nr_class");
            if (!(p = parse_double(p, &m->rho)))
                return fail(c, "libsvm model: rho is not a finite number");
            have_rho = true;
        } else if (!strcmp(tok, "label") || !strcmp(tok, "nr_sv") ||
                   !strcmp(tok, "probA") || !strcmp(tok, "probB")) {
            /* classification/probability data, unused by regression */
            const int cnt = tok[0] == 'p' ? 1 : 2;
            if (nr_class != 2)
                return fail(c, "libsvm model: %s before nr_class", tok);
            for (int i = 0; i < cnt; i++) {
                double v;
                if (!(p = parse_double(p, &v)))
                    return fail(c, "libsvm model: %s is not a finite number",
                                tok);
            }
        } else {
            return fail(c, "libsvm model: unknown header field '%s'", tok);
        }
    }
    if (!have_type || !have_kernel || !have_gamma || !nr_class ||
        !total_sv || !have_rho || !have_sv)
        return fail(c, "libsvm model: incomplete header (need svm_type, "
                       "kernel_type, gamma, nr_class, total_sv, rho, SV)");
    /* exp(-gamma |x - sv|^2) is a similarity only for gamma > 0 */
    if (!(m->gamma > 0))
        return fail(c, "libsvm model: gamma %g is not > 0", m->gamma);

    /* the SV lines start after the line of "SV" */
    p = skip_blank(p);
    if (*p == '\n')
        p++;

    /* count the sparse nodes to size the arrays: at most one per ':' */
    size_t max_nodes = 0;
    for (const char *q = p; *q; q++)
        max_nodes += *q == ':';

    m->n_sv = (unsigned)total_sv;
    m->coef = malloc(m->n_sv * sizeof(double));
    m->sv_start = malloc((m->n_sv + 1) * sizeof(size_t));
    m->sv_idx = malloc((max_nodes + 1) * sizeof(int));
    m->sv_val = malloc((max_nodes + 1) * sizeof(double));
    if (!m->coef || !m->sv_start || !m->sv_idx || !m->sv_val)
        return QM_ENOMEM;

    size_t k = 0;
    for (unsigned i = 0; i < m->n_sv; i++) {
        if (!*p)
            return fail(c, "libsvm model: %u support vectors, total_sv says "
                           "%u", i, m->n_sv);
        m->sv_start[i] = k;
        if (!(p = parse_double(p, &m->coef[i])))
            return fail(c, "libsvm model: support vector %u: the "
                           "coefficient is missing or not a finite number",
                        i + 1);
        long prev = 0;
        for (;;) {
            p = skip_blank(p);
            if (*p == '\n' || !*p)
                break;
            long idx;
            double v;
            if (!(p = parse_long(p, &idx)) || *p != ':' ||
                !(p = parse_double(p + 1, &v)))
                return fail(c, "libsvm model: support vector %u: bad "
                               "index:value pair (a finite value expected)",
                            i + 1);
            /* libsvm's sparse kernel walks both vectors in ascending
             * index order */
            if (idx <= prev)
                return fail(c, "libsvm model: support vector %u: indices "
                               "not increasing", i + 1);
            /* index i is feature_names[i - 1]: one beyond them would be a
             * feature this model does not compute */
            if (idx > (long)m->n)
                return fail(c, "libsvm model: support vector %u: index %ld, "
                               "but feature_names has %u features", i + 1,
                            idx, m->n);
            prev = idx;
            m->sv_idx[k] = (int)idx;
            m->sv_val[k] = v;
            k++;
        }
        if (*p == '\n')
            p++;
    }
    m->sv_start[m->n_sv] = k;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    if (*p)
        return fail(c, "libsvm model: more support vectors than total_sv "
                       "(%u)", m->n_sv);
    return 0;
}

/* ---- the JSON model ---- */

static const QmJson *get_typed(const QmJson *obj, const char *key,
                               QmJsonType t)
{
    const QmJson *v = qm_json_get(obj, key);
    return v && v->type == t ? v : NULL;
}

/* Numbers of a JSON array into out[0..n-1]; returns the count or -1. */
static int get_numbers(const QmJson *arr, double *out, size_t max)
{
    if (!arr || arr->type != QM_JSON_ARRAY || arr->n > max)
        return -1;
    for (size_t i = 0; i < arr->n; i++) {
        if (arr->items[i]->type != QM_JSON_NUMBER)
            return -1;
        out[i] = arr->items[i]->num;
    }
    return (int)arr->n;
}

/* libvmaf stores a model's numeric option through its dictionary with
 * VMAF_DICT_NORMALIZE_NUMERICAL_VALUES (dict.c): parsed as a float
 * (strtof), printed with "%g" (6 significant digits), and that text is what
 * the feature extractor's option parser reads back as a double.  0.06 stays
 * 0.06, but e.g. 0.123456789 becomes 0.123457. */
static double normalized_option_value(double v)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%g", (double)(float)v);
    return strtod(buf, NULL);
}

/* An option of input i's metric: a name its descriptor knows, a value in
 * the descriptor's range (as normalised: a float overflow is infinite). */
static int check_option(Ctx *c, unsigned i, const char *metric,
                        const char *name, double given, double v)
{
    const QmMetricDesc *d = qm_metric_find(metric);
    const QmOptionDesc *o = NULL;
    for (int j = 0; d && d->options && d->options[j].name; j++)
        if (!strcmp(d->options[j].name, name))
            o = &d->options[j];
    if (!o) {
        char known[256] = "";
        for (int j = 0; d && d->options && d->options[j].name; j++)
            snprintf(known + strlen(known), sizeof(known) - strlen(known),
                     "%s%s", j ? ", " : "", d->options[j].name);
        return fail(c, "feature_opts_dicts[%u]: unknown option '%s' for %s "
                       "(known: %s)", i, name, metric, known[0] ? known : "none");
    }
    if ((o->flags & QM_OPT_BOOL) && v != 0.0 && v != 1.0)
        return fail(c, "feature_opts_dicts[%u]: option '%s' = %g is not a "
                       "switch (true/false or 1/0)", i, name, given);
    if (!isfinite(v) || v < o->min || v > o->max)
        return fail(c, "feature_opts_dicts[%u]: option '%s' = %g is out of "
                       "range [%g, %g]", i, name, given, o->min, o->max);
    return 0;
}

static int parse_inputs(Ctx *c, QmModel *m, const QmJson *md)
{
    const QmJson *names = get_typed(md, "feature_names", QM_JSON_ARRAY);
    if (!names)
        return fail(c, "model_dict has no feature_names array");
    if (names->n == 0 || names->n > QM_MAX_FEATURES)
        return fail(c, "%zu features (supported: 1 to %d)", names->n,
                    QM_MAX_FEATURES);
    m->n = (unsigned)names->n;

    for (unsigned i = 0; i < m->n; i++) {
        const QmJson *nm = names->items[i];
        if (nm->type != QM_JSON_STRING)
            return fail(c, "feature_names[%u] is not a string", i);
        size_t t;
        for (t = 0; t < sizeof(input_table) / sizeof(input_table[0]); t++)
            if (!strcmp(nm->str, input_table[t].model_name))
                break;
        if (t == sizeof(input_table) / sizeof(input_table[0]))
            return fail(c, "input feature '%s' is not computed by this engine"
                           " (supported: libvmaf's integer VIF, ADM and motion "
                           "features, CAMBI and SpEED chroma)", nm->str);
        m->in_name[i] = input_table[t].model_name;
        m->in[i].metric = input_table[t].metric;
        m->in[i].feature = input_table[t].feature;
    }

    /* feature_opts_dicts: per input, options for its feature extractor */
    const QmJson *dicts = qm_json_get(md, "feature_opts_dicts");
    if (dicts) {
        if (dicts->type != QM_JSON_ARRAY || dicts->n > m->n)
            return fail(c, "feature_opts_dicts must be an array of at most "
                           "one object per feature");
        for (unsigned i = 0; i < dicts->n; i++) {
            const QmJson *d = dicts->items[i];
            if (d->type != QM_JSON_OBJECT)
                return fail(c, "feature_opts_dicts[%u] is not an object", i);
            if (d->n > QM_MAX_OPTIONS)
                return fail(c, "feature_opts_dicts[%u]: too many options", i);
            QmModelInput *in = &m->in[i];
            for (unsigned k = 0; k < d->n; k++) {
                const QmJson *o = d->items[k];
                double v;
                if (o->type == QM_JSON_NUMBER) {
                    v = normalized_option_value(o->num);
                } else if (o->type == QM_JSON_BOOL) {
                    v = o->num;  /* libvmaf's "true" / "false": 1 / 0 */
                } else if (o->type == QM_JSON_STRING) {
                    /* a string option (speed_prescale_method): the index
                     * of its value in the metric's list of choices */
                    char msg[300];
                    QmOptValues tmp;
                    const QmMetricDesc *desc = qm_metric_find(in->metric);
                    if (!desc || qm_option_parse(desc, o->key, o->str, &tmp,
                                                msg, sizeof(msg)))
                        return fail(c, "feature_opts_dicts[%u]: %s", i,
                                    desc ? msg : "unknown metric");
                    int j;
                    for (j = 0; strcmp(desc->options[j].name, o->key); j++)
                        ;
                    if (!(desc->options[j].flags & QM_OPT_ENUM))
                        return fail(c, "feature_opts_dicts[%u]: option '%s' "
                                       "takes a number, not a string", i,
                                    o->key);
                    v = tmp.v[j];
                } else {
                    return fail(c, "feature_opts_dicts[%u]: option '%s' has "
                                   "a value that is not supported (numbers, "
                                   "booleans and names only)", i, o->key);
                }
                int err = check_option(c, i, in->metric, o->key, o->num, v);
                if (err)
                    return err;
                for (unsigned j = 0; j < in->n_opts; j++)
                    if (!strcmp(in->opt_name[j], o->key))
                        return fail(c, "feature_opts_dicts[%u]: option '%s' "
                                       "given twice", i, o->key);
                char *name = strdup(o->key);
                if (!name)
                    return QM_ENOMEM;
                m->opt_names[i][in->n_opts] = name;
                in->opt_name[in->n_opts] = name;
                in->opt_value[in->n_opts] = v;
                in->n_opts++;
            }
        }
    }
    return 0;
}

static int parse_coef(Ctx *c, const QmJson *st, const char *key, Coef *out)
{
    const QmJson *v = qm_json_get(st, key);
    if (!v || v->type == QM_JSON_NULL)
        return 0;
    if (v->type != QM_JSON_NUMBER)
        return fail(c, "score_transform.%s is not a number", key);
    out->enabled = true;
    out->value = v->num;
    return 0;
}

/* libvmaf writes these switches as the strings "true" / "false". */
static int parse_switch(Ctx *c, const QmJson *st, const char *key, bool *out)
{
    const QmJson *v = qm_json_get(st, key);
    if (!v)
        return 0;
    if (v->type != QM_JSON_STRING)
        return fail(c, "score_transform.%s is not a string", key);
    *out = !strcmp(v->str, "true");
    return 0;
}

static int parse_model_dict(Ctx *c, QmModel *m, const QmJson *root)
{
    const QmJson *md = get_typed(root, "model_dict", QM_JSON_OBJECT);
    if (!md)
        return fail(c, "no model_dict object (model collections are not "
                       "supported)");

    const char *type = qm_json_str(md, "model_type");
    if (!type)
        return fail(c, "model_dict has no model_type");
    if (strcmp(type, "LIBSVMNUSVR"))
        return fail(c, "model_type '%s' is not supported (only LIBSVMNUSVR)",
                    type);

    int err = parse_inputs(c, m, md);
    if (err)
        return err;

    const char *norm = qm_json_str(md, "norm_type");
    if (!norm)
        return fail(c, "model_dict has no norm_type");
    if (!strcmp(norm, "linear_rescale"))
        m->linear_rescale = true;
    else if (strcmp(norm, "none"))
        return fail(c, "norm_type '%s' is not supported", norm);

    /* slopes / intercepts: the score's first, then one per feature */
    double buf[QM_MAX_FEATURES + 1];
    const QmJson *sl = qm_json_get(md, "slopes"), *ic = qm_json_get(md, "intercepts");
    if (m->linear_rescale || sl || ic) {
        if (get_numbers(sl, buf, QM_MAX_FEATURES + 1) != (int)m->n + 1)
            return fail(c, "slopes must be an array of %u numbers", m->n + 1);
        m->slope = buf[0];
        memcpy(m->f_slope, buf + 1, m->n * sizeof(double));
        /* the SVR output is divided by the score's slope */
        if (m->linear_rescale && m->slope == 0.0)
            return fail(c, "slopes[0] (the score's slope) is 0");
        if (get_numbers(ic, buf, QM_MAX_FEATURES + 1) != (int)m->n + 1)
            return fail(c, "intercepts must be an array of %u numbers",
                        m->n + 1);
        m->intercept = buf[0];
        memcpy(m->f_intercept, buf + 1, m->n * sizeof(double));
    }

    const QmJson *clip = qm_json_get(md, "score_clip");
    if (clip) {
        double cl[2];
        if (get_numbers(clip, cl, 2) != 2)
            return fail(c, "score_clip must be an array of 2 numbers");
        if (!(cl[0] <= cl[1]))
            return fail(c, "score_clip [%g, %g]: the minimum is above the "
                           "maximum", cl[0], cl[1]);
        m->clip = true;
        m->clip_min = cl[0];
        m->clip_max = cl[1];
    }

    const QmJson *st = qm_json_get(md, "score_transform");
    if (st) {
        if (st->type != QM_JSON_OBJECT)
            return fail(c, "score_transform is not an object");
        m->has_transform = true;
        const QmJson *en = qm_json_get(st, "enabled");
        if (en) {
            if (en->type != QM_JSON_BOOL)
                return fail(c, "score_transform.enabled is not a boolean");
            m->transform_enabled = en->num != 0;
        }
        if ((err = parse_coef(c, st, "p0", &m->p0)) ||
            (err = parse_coef(c, st, "p1", &m->p1)) ||
            (err = parse_coef(c, st, "p2", &m->p2)) ||
            (err = parse_switch(c, st, "out_lte_in", &m->out_lte_in)) ||
            (err = parse_switch(c, st, "out_gte_in", &m->out_gte_in)))
            return err;
        const QmJson *knots = qm_json_get(st, "knots");
        if (knots && knots->type != QM_JSON_NULL)
            return fail(c, "score_transform.knots (piecewise-linear mapping) "
                           "is not supported");
    }

    const QmJson *cc = qm_json_get(md, "chroma_correction_parameter");
    if (cc) {
        /* libvmaf predict.c: the guiding feature is the one input whose
         * name contains "adm3", the guided one the input containing
         * "speed_chroma"; a parameter of 0 makes libvmaf give no score */
        if (cc->type != QM_JSON_NUMBER || cc->num == 0)
            return fail(c, "chroma_correction_parameter must be a nonzero "
                           "number");
        m->chroma_correction = true;
        m->chroma_c = cc->num;
        m->cc_guiding = m->cc_guided = -1;
        for (unsigned i = 0; i < m->n; i++) {
            if (strstr(m->in_name[i], "adm3")) {
                if (m->cc_guiding >= 0)
                    return fail(c, "chroma_correction_parameter: more than "
                                   "one adm3 input");
                m->cc_guiding = (int)i;
            }
            if (strstr(m->in_name[i], "speed_chroma")) {
                if (m->cc_guided >= 0)
                    return fail(c, "chroma_correction_parameter: more than "
                                   "one speed_chroma input");
                m->cc_guided = (int)i;
            }
        }
        if (m->cc_guiding < 0 || m->cc_guided < 0)
            return fail(c, "chroma_correction_parameter needs an adm3 and a "
                           "speed_chroma input");
    }

    const char *svm = qm_json_str(md, "model");
    if (!svm)
        return fail(c, "model_dict has no libsvm model string ('model')");
    return parse_svm(c, m, svm);
}

/* ---- loading ---- */

/* The models shipped in data/models (libvmaf 3.2.0's built-in
 * versions, the model directory of its source tree, unmodified). */
static const char *const builtin_names[] = {
    "vmaf_v0.6.1", "vmaf_v0.6.1neg", "vmaf_4k_v0.6.1", "vmaf_4k_v0.6.1neg",
    "vmaf_v1.0.16_3d0h", "vmaf_v1.0.16_5d0h", "vmaf_v1.0.16_1d5h_2160",
    "vmaf_v1.0.16_3d0h_2160", "vmaf_v1.0.16_hfr_3d0h",
    "vmaf_v1.0.16_hfr_5d0h", "vmaf_v1.0.16_hfr_1d5h_2160",
    "vmaf_v1.0.16_hfr_3d0h_2160",
};

static bool is_path(const char *s)
{
    size_t l = strlen(s);
    return strchr(s, '/') || (l >= 5 && !strcmp(s + l - 5, ".json"));
}

static char *find_builtin(const char *name, const char *search_path)
{
    for (const char *p = search_path ? search_path : ""; *p;) {
        const char *q = strchr(p, ':');
        size_t dl = q ? (size_t)(q - p) : strlen(p);
        if (dl) {
            size_t l = dl + strlen(name) + 7;
            char *f = malloc(l);
            if (!f)
                return NULL;
            snprintf(f, l, "%.*s/%s.json", (int)dl, p, name);
            /* stat, not open: opening a fifo would block; what is there
             * and not a regular file is refused by qm_json_load() */
            struct stat st;
            if (stat(f, &st) == 0)
                return f;
            free(f);
        }
        p += dl + (q != NULL);
    }
    return NULL;
}

static char *model_name_of(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t l = strlen(b);
    if (l > 5 && !strcmp(b + l - 5, ".json"))
        l -= 5;
    return strndup(b, l);
}

/* The model of JSON text (or, text NULL, of the file) named `file`. */
static int build(Ctx *c, const char *file, const char *text, size_t len,
                 QmModel **out)
{
    /* Numbers in model files use '.', whatever the application's locale
     * (a GStreamer application may have called setlocale(LC_ALL, "")):
     * parse them in the C locale, on this thread only. */
    locale_t cloc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    locale_t prev = cloc ? uselocale(cloc) : (locale_t)0;

    int ret;
    QmModel *m = calloc(1, sizeof(*m));
    char jerr[4096 + 256] = "";
    /* the digest of the very bytes parsed: what a chunk's identity names */
    char *bytes = m && !text ? qm_json_read_file(file, &len, jerr, sizeof(jerr)) : NULL;
    if (bytes)
        text = bytes;
    if (m && text)
        qm_sha256(text, len, m->sha256);
    QmJson *root = m && text ? qm_json_parse(text, len, jerr, sizeof(jerr)) : NULL;
    free(bytes);
    if (!m) {
        ret = QM_ENOMEM;
    } else if (!root) {
        /* qm_json_load's message starts with the file name: say it once */
        const char *msg = jerr;
        size_t fl = strlen(file);
        if (!strncmp(msg, file, fl) && !strncmp(msg + fl, ": ", 2))
            msg += fl + 2;
        ret = fail(c, "%s", msg[0] ? msg : "cannot read the file");
    } else if (root->type != QM_JSON_OBJECT) {
        ret = fail(c, "the top level is not a JSON object");
    } else {
        ret = parse_model_dict(c, m, root);
    }
    qm_json_free(root);

    if (cloc) {
        uselocale(prev);
        freelocale(cloc);
    }

    if (!ret && m) {
        /* the name becomes a feature name: valid UTF-8 only */
        char *raw = model_name_of(file);
        m->name = raw ? escape_text(raw) : NULL;
        free(raw);
        if (!m->name)
            ret = QM_ENOMEM;
    }
    if (ret == QM_ENOMEM && c->err && !*c->err)
        *c->err = strdup("out of memory while loading a model");
    if (ret) {
        qm_model_free(&m);
        return ret;
    }
    *out = m;
    return 0;
}

int qm_model_load(QmModel **out, const char *name_or_path,
                  const char *search_path, char **err)
{
    *out = NULL;
    if (err)
        *err = NULL;
    Ctx c = { name_or_path ? name_or_path : "(null)", err };
    if (!name_or_path || !*name_or_path)
        return fail(&c, "no model name given");

    char *file;
    if (is_path(name_or_path)) {
        file = strdup(name_or_path);
    } else {
        file = find_builtin(name_or_path, search_path);
        if (!file) {
            bool known = false;
            for (size_t i = 0; i < sizeof(builtin_names) / sizeof(builtin_names[0]); i++)
                known |= !strcmp(builtin_names[i], name_or_path);
            if (known)
                return fail(&c, "built-in model, but %s.json is not in the "
                               "model search path '%s' (installation "
                               "incomplete? set QMETRIC_MODEL_PATH)",
                            name_or_path, search_path ? search_path : "");
            char list[600] = "";
            for (size_t i = 0; i < sizeof(builtin_names) / sizeof(builtin_names[0]); i++)
                snprintf(list + strlen(list), sizeof(list) - strlen(list),
                         "%s%s", i ? ", " : "", builtin_names[i]);
            return fail(&c, "unknown model name (built-in models: %s; or "
                           "give the path of a libvmaf JSON model)", list);
        }
    }
    if (!file)
        return QM_ENOMEM;
    c.file = file;

    int ret = build(&c, file, NULL, 0, out);
    free(file);
    return ret;
}

int qm_model_parse(QmModel **out, const char *name, const char *text,
                   size_t len, char **err)
{
    *out = NULL;
    if (err)
        *err = NULL;
    Ctx c = { name && *name ? name : "(unnamed)", err };
    return build(&c, c.file, text, len, out);
}

int qm_model_list_parse(const char *list, char ***names, char **err)
{
    *names = NULL;
    if (err)
        *err = NULL;
    size_t n = 1;
    for (const char *p = list; *p; p++)
        n += *p == ',';
    char **v = calloc(n + 1, sizeof(char *));
    if (!v)
        return QM_ENOMEM;
    const char *p = list;
    for (size_t i = 0; i < n; i++) {
        const char *q = strchr(p, ',');
        size_t l = q ? (size_t)(q - p) : strlen(p);
        /* blanks around a name are not part of it ("a, b") */
        while (l && (*p == ' ' || *p == '\t'))
            p++, l--;
        while (l && (p[l - 1] == ' ' || p[l - 1] == '\t'))
            l--;
        if (!l) {
            if (err) {
                char *esc = escape_text(list);
                size_t el = (esc ? strlen(esc) : 0) + 96;
                *err = malloc(el);
                if (*err)
                    snprintf(*err, el, "model list '%s': entry %zu of %zu is "
                             "empty", esc ? esc : "", i + 1, n);
                free(esc);
            }
            qm_model_list_free(v);
            return QM_EINVAL;
        }
        if (!(v[i] = strndup(p, l))) {
            qm_model_list_free(v);
            return QM_ENOMEM;
        }
        p = q ? q + 1 : p + l;
    }
    *names = v;
    return 0;
}

void qm_model_list_free(char **names)
{
    for (size_t i = 0; names && names[i]; i++)
        free(names[i]);
    free(names);
}

const uint8_t *qm_model_sha256(const QmModel *m)
{
    return m->sha256;
}

const char *qm_model_name(const QmModel *m)
{
    return m->name;
}

unsigned qm_model_n_inputs(const QmModel *m)
{
    return m->n;
}

const QmModelInput *qm_model_input(const QmModel *m, unsigned i)
{
    return i < m->n ? &m->in[i] : NULL;
}

/* ---- prediction ---- */

/* libsvm Kernel::k_function(), RBF: exp(-gamma |x - y|^2) over the sparse
 * union of indices, in ascending index order; x is dense (indices 1..n). */
static double rbf(const QmModel *m, const double *x, unsigned j)
{
    const int *idx = m->sv_idx;
    const double *val = m->sv_val;
    size_t b = m->sv_start[j];
    const size_t end = m->sv_start[j + 1];
    unsigned a = 0;
    double sum = 0;
    while (a < m->n && b < end) {
        const int xi = (int)a + 1;
        if (xi == idx[b]) {
            const double d = x[a] - val[b];
            sum += d * d;
            a++;
            b++;
        } else if (xi > idx[b]) {
            sum += val[b] * val[b];
            b++;
        } else {
            sum += x[a] * x[a];
            a++;
        }
    }
    for (; a < m->n; a++)
        sum += x[a] * x[a];
    for (; b < end; b++)
        sum += val[b] * val[b];
    return exp(-m->gamma * sum);
}

/* libvmaf predict.c transform(): polynomial, then rectification against
 * the untransformed score. */
static double transform(const QmModel *m, double y)
{
    double out;
    if (m->p0.enabled || m->p1.enabled || m->p2.enabled) {
        out = 0.;
        if (m->p0.enabled)
            out += m->p0.value;
        if (m->p1.enabled)
            out += m->p1.value * y;
        if (m->p2.enabled)
            out += m->p2.value * y * y;
    } else {
        out = y;
    }
    if (m->out_lte_in)
        out = out > y ? y : out;
    if (m->out_gte_in)
        out = out < y ? y : out;
    return out;
}

double qm_model_predict(const QmModel *m, const double *in,
                        bool disable_clip, bool enable_transform)
{
    double x[QM_MAX_FEATURES];
    for (unsigned i = 0; i < m->n; i++)
        x[i] = m->linear_rescale ? m->f_slope[i] * in[i] + m->f_intercept[i]
                                 : in[i];

    /* libvmaf post_process_feature_from_another(): SpEED chroma scores 0
     * where its covariance is singular (flat or tiny chroma planes); the
     * model then takes c (1 - adm3) in its place.  Both values go through
     * the model's normalisation and back, as in the reference. */
    if (m->chroma_correction) {
        const int gi = m->cc_guiding, di = m->cc_guided;
        double guided = x[di], guiding = x[gi];
        if (m->linear_rescale) {
            guided = (guided - m->f_intercept[di]) / m->f_slope[di];
            guiding = (guiding - m->f_intercept[gi]) / m->f_slope[gi];
        }
        if (guided == 0.0) {
            double v = (-m->chroma_c * guiding) + m->chroma_c;
            if (m->linear_rescale)
                v = m->f_slope[di] * v + m->f_intercept[di];
            x[di] = v;
        }
    }

    /* libsvm svm_predict_values(), nu-SVR: sum in SV order, then - rho */
    double s = 0;
    for (unsigned j = 0; j < m->n_sv; j++)
        s += m->coef[j] * rbf(m, x, j);
    s -= m->rho;

    if (m->linear_rescale)
        s = (s - m->intercept) / m->slope;

    /* libvmaf applies a model's score_transform when the model enables it
     * or the user asks for it (VMAF_MODEL_FLAG_ENABLE_TRANSFORM) */
    if (m->has_transform && (m->transform_enabled || enable_transform))
        s = transform(m, s);

    if (m->clip && !disable_clip) {
        s = s < m->clip_min ? m->clip_min : s;
        s = s > m->clip_max ? m->clip_max : s;
    }
    return s;
}

void qm_model_free(QmModel **pm)
{
    QmModel *m = *pm;
    if (!m)
        return;
    for (unsigned i = 0; i < QM_MAX_FEATURES; i++)
        for (unsigned k = 0; k < QM_MAX_OPTIONS; k++)
            free(m->opt_names[i][k]);
    free(m->coef);
    free(m->sv_start);
    free(m->sv_idx);
    free(m->sv_val);
    free(m->name);
    free(m);
    *pm = NULL;
}
