/* qmetric-merge: join the partial results of chunks of one title (written by
 * `qmetric-yuv` or `qmetric-compare --start N --frames M --partial FILE`,
 * on any machine) into
 * the log and pooled values a single whole-title run writes.
 *
 *   qmetric-merge [-o OUT] [--format json|csv|xml] PART...
 *
 * The parts may be given in any order; they must be chunks of one
 * comparison (the same tool and version, inputs, settings, features and
 * picture size: core/partial.h; where two parts read the same frames, the
 * same frames), cover frames 0 .. n-1 with no gap and no overlap, and the
 * last must end with the input (a title cut short is refused unless
 * --allow-incomplete).  Values are pooled once, over every frame in frame
 * order, from the parts' full-precision values: the result equals a whole
 * run's, frame by frame and pooled (tests/chunk.sh).  Any refusal is exit
 * status 2 with one line naming the parts and what differs.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partial.h"
#include "qmlog.h"
#include "samefile.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: qmetric-merge [-o OUT] [--format json|csv|xml] [--allow-incomplete] PART...\n"
        "Joins the chunks written by qmetric-yuv or qmetric-compare --partial into\n"
        "one log (stdout without -o), identical to a whole-title run.\n");
}

/* "PATH (frames A..B)" of a part, for messages. */
static const char *part_name(const QmPartial *p, char *buf, size_t len)
{
    if (p->frames)
        snprintf(buf, len, "%s (frames %" PRIu64 "..%" PRIu64 ")", p->path, p->start,
                 p->start + p->frames - 1);
    else
        snprintf(buf, len, "%s (no frames, at frame %" PRIu64 ")", p->path, p->start);
    return buf;
}

static void differs(const QmPartial *b, const QmPartial *a, const char *what)
{
    char x[600], y[600];
    fprintf(stderr, "qmetric-merge: %s differs from %s in %s\n", part_name(b, x, sizeof(x)),
            part_name(a, y, sizeof(y)), what);
}

/* The pooled values the metrics provide themselves (XPSNR's), over the
 * parts' rows as a whole run pools them: the pictures' depth and chroma
 * are in the parts' engine settings. */
static QmAggregates *part_aggregates(const QmPartial *p)
{
    static const char *const chroma[] = { "400", "420", "422", "444" };
    const char *bd = NULL, *pf = NULL;
    for (unsigned i = 0; i < p->n_settings; i++) {
        if (!strcmp(p->set_key[i], "bitdepth"))
            bd = p->set_value[i];
        else if (!strcmp(p->set_key[i], "pixel_format"))
            pf = p->set_value[i];
    }
    for (int c = 0; bd && pf && c < 4; c++)
        if (!strcmp(pf, chroma[c]))
            return qm_aggregates_for_keys(p->n_features, (const char *const *)p->features,
                                          p->w, p->h, atoi(bd), (QmChroma)c);
    return NULL;
}

static int by_start(const void *a, const void *b)
{
    const QmPartial *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

int main(int argc, char **argv)
{
    const char *out_path = NULL, *format = "json";
    bool allow_incomplete = false;
    enum { O_FMT = 256, O_INC };
    static const struct option opts[] = {
        { "output", required_argument, 0, 'o' },
        { "format", required_argument, 0, O_FMT },
        { "allow-incomplete", no_argument, 0, O_INC },
        { "help", no_argument, 0, 'h' },
        { 0, 0, 0, 0 },
    };
    int c;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out_path = optarg; break;
        case O_FMT: format = optarg; break;
        case O_INC: allow_incomplete = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    const int fmt = qm_log_format_from_string(format);
    if (fmt < 0) {
        fprintf(stderr, "qmetric-merge: bad --format %s\n", format);
        return 2;
    }
    const int np = argc - optind;
    if (np < 1) {
        usage(stderr);
        return 2;
    }
    /* before anything is opened for writing: -o must not be a part */
    const char *const *in = (const char *const *)argv + optind;
    const char *same = out_path ? qm_output_is_input(out_path, in, (size_t)np) : NULL;
    if (same) {
        fprintf(stderr, "qmetric-merge: -o %s is the part %s (the same file): it would be "
                "overwritten\n", out_path, same);
        return 2;
    }
    QmPartial *parts = calloc((size_t)np, sizeof(*parts));
    if (!parts)
        return 2;
    int rc = 2;
    char err[1024];
    for (int i = 0; i < np; i++) {
        if (qm_partial_load(&parts[i], argv[optind + i], err, sizeof(err)) < 0) {
            fprintf(stderr, "qmetric-merge: %s\n", err);
            goto out;
        }
    }
    qsort(parts, (size_t)np, sizeof(*parts), by_start);

    /* Every part must be a chunk of the same comparison: a part of another
     * one (another distorted file, model, subsample...) would give its
     * frames scores of something else. */
    const QmPartial *p0 = &parts[0];
    for (int i = 1; i < np; i++) {
        if (qm_partial_compare(&parts[i], p0, err, sizeof(err))) {
            differs(&parts[i], p0, err);
            goto out;
        }
    }
    /* The parts must tile the title: a gap or an overlap would silently
     * give frames the wrong scores or count some twice. */
    uint64_t next = 0, total = 0;
    for (int i = 0; i < np; i++) {
        const QmPartial *p = &parts[i];
        if (p->start != next) {
            fprintf(stderr, "qmetric-merge: frames %llu .. %llu are %s\n",
                    (unsigned long long)(p->start < next ? p->start : next),
                    (unsigned long long)((p->start < next ? next : p->start) - 1),
                    p->start < next ? "in two parts" : "in no part");
            goto out;
        }
        if (p->end_of_input && i != np - 1 && parts[i + 1].frames) {
            fprintf(stderr, "qmetric-merge: the input ended at frame %llu, but another part "
                    "starts at frame %llu\n", (unsigned long long)(p->start + p->frames),
                    (unsigned long long)parts[i + 1].start);
            goto out;
        }
        next = p->start + p->frames;
        total += p->frames;
    }
    /* Where parts read the same frames (a boundary's context and
     * look-ahead), they read the same pictures. */
    for (int i = 1; i < np; i++) {
        for (int k = i - 1; k >= 0; k--) {
            /* parts further back end more than a context before: none shares
             * a hashed frame */
            if (parts[k].start + parts[k].frames + 2 * QM_CHUNK_CONTEXT < parts[i].start)
                break;
            if (qm_partial_compare_frames(&parts[i], &parts[k], err, sizeof(err))) {
                differs(&parts[i], &parts[k], err);
                goto out;
            }
        }
    }
    if (!parts[np - 1].end_of_input) {
        fprintf(stderr, "qmetric-merge: %s: the parts end at frame %llu, before the end "
                "of the input\n", allow_incomplete ? "warning" : "error",
                (unsigned long long)next);
        if (!allow_incomplete)
            goto out;
    }

    const unsigned nf = p0->n_features;
    QmPool *pools = calloc(nf ? nf : 1, sizeof(*pools));
    char *msg = NULL;
    QmLog *log = qm_log_open(out_path ? out_path : "/dev/stdout", (QmLogFormat)fmt, nf,
                             (const char *const *)p0->features, p0->w, p0->h, &msg);
    QmAggregates *aggs = part_aggregates(p0);
    if (!pools || !log) {
        fprintf(stderr, "qmetric-merge: %s\n", msg ? msg : "out of memory");
        free(msg);
        free(pools);
        goto out;
    }
    rc = 0;
    double seconds = 0;
    for (int i = 0; i < np; i++) {
        const QmPartial *p = &parts[i];
        for (uint64_t r = 0; r < p->frames; r++) {
            const double *v = &p->values[r * nf];
            const uint8_t *set = &p->present[r * nf];
            if (qm_log_frame(log, p->start + r, v, set) < 0)
                rc = 1;
            for (unsigned f = 0; f < nf; f++)
                if (set[f])
                    qm_pool_add(&pools[f], v[f]);
            qm_aggregates_add(aggs, v, set);
        }
        seconds += p->seconds;
    }
    const char *key;
    double agg;
    for (unsigned i = 0; (key = qm_aggregates_get(aggs, i, &agg)); i++)
        if (qm_log_aggregate(log, key, agg))
            rc = 1;
    qm_aggregates_free(aggs);
    /* the log's "fps": frames over the chunks' summed compute time */
    if (qm_log_close(log, pools, QM_POOL_LIBVMAF, seconds > 0 ? total / seconds : 0) < 0)
        rc = 1;
    if (rc)
        fprintf(stderr, "qmetric-merge: writing %s failed\n", out_path ? out_path : "stdout");
    else
        fprintf(stderr, "qmetric-merge: %d parts, %llu frames\n", np, (unsigned long long)total);
    for (unsigned f = 0; f < nf; f++)
        qm_pool_clear(&pools[f]);
    free(pools);
out:
    for (int i = 0; i < np; i++)
        qm_partial_free(&parts[i]);
    free(parts);
    return rc;
}
