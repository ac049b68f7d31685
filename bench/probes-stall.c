/* qmetric-bench-probes: stall records, the frames whose score (or decoded
 * picture) came later than a threshold, with what they waited for. */
#include <stdlib.h>
#include <string.h>

#include "probes.h"

static const char *const wait_names[PB_WAIT_N] = {
    "element_thread", "map", "submit", "device", "post", "unknown",
};

const char *pb_wait_name(PbWait w)
{
    return w < PB_WAIT_N ? wait_names[w] : "?";
}

void pb_stalls_init(PbStalls *st, double threshold_ms, int keep)
{
    memset(st, 0, sizeof(*st));
    st->threshold_ms = threshold_ms;
    st->keep = keep > 0 ? keep : 0;
    st->ready = g_new0(PbStall, MAX(st->keep, 1));
    st->arrival = g_new0(PbStall, MAX(st->keep, 1));
}

void pb_stalls_clear(PbStalls *st)
{
    g_free(st->ready);
    g_free(st->arrival);
    memset(st, 0, sizeof(*st));
}

PbWait pb_stall_cause(const double seg_ms[PB_N_SEGMENTS])
{
    PbWait w = PB_WAIT_UNKNOWN;
    for (int i = 0; i < PB_N_SEGMENTS; i++)
        if (seg_ms[i] >= 0 && (w == PB_WAIT_UNKNOWN || seg_ms[i] > seg_ms[w]))
            w = (PbWait)i;
    return w;
}

/* Keep s among the `keep` worst of v (n of them so far). */
static void keep_worst(PbStall *v, int *n, int keep, const PbStall *s)
{
    if (keep <= 0)
        return;
    if (*n < keep) {
        v[(*n)++] = *s;
        return;
    }
    int least = 0;
    for (int i = 1; i < *n; i++)
        if (v[i].total_ms < v[least].total_ms)
            least = i;
    if (s->total_ms > v[least].total_ms)
        v[least] = *s;
}

void pb_stall_ready(PbStalls *st, PbStall *s)
{
    s->cause = pb_stall_cause(s->seg_ms);
    st->ready_over++;
    st->by_cause[s->cause]++;
    keep_worst(st->ready, &st->n_ready, st->keep, s);
}

void pb_stall_arrival(PbStalls *st, const PbStall *s)
{
    st->arrival_over[s->side ? 1 : 0]++;
    keep_worst(st->arrival, &st->n_arrival, st->keep, s);
}

static int by_total_desc(const void *a, const void *b)
{
    const double x = ((const PbStall *)a)->total_ms, y = ((const PbStall *)b)->total_ms;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* ", \"key\": v" in ms; null for a segment the stamps do not give (< 0) */
static void ms(FILE *f, const char *key, double v, bool known)
{
    fprintf(f, ", \"%s\": ", key);
    if (known)
        fprintf(f, "%.3f", v);
    else
        fputs("null", f);
}

void pb_stalls_json(FILE *f, const PbStalls *st)
{
    qsort(st->ready, (size_t)st->n_ready, sizeof(PbStall), by_total_desc);
    qsort(st->arrival, (size_t)st->n_arrival, sizeof(PbStall), by_total_desc);
    fprintf(f, "{\"threshold_ms\": %.3f, \"ready_over\": %" G_GUINT64_FORMAT ", \"by_cause\": {",
            st->threshold_ms, st->ready_over);
    for (int i = 0; i < PB_WAIT_N; i++)
        fprintf(f, "%s\"%s\": %" G_GUINT64_FORMAT, i ? ", " : "", wait_names[i], st->by_cause[i]);
    fprintf(f, "}, \"arrival_over\": {\"reference\": %" G_GUINT64_FORMAT ", \"distorted\": %"
            G_GUINT64_FORMAT "}, \"ready\": [", st->arrival_over[0], st->arrival_over[1]);
    for (int i = 0; i < st->n_ready; i++) {
        const PbStall *s = &st->ready[i];
        fprintf(f, "%s\n    {\"probe\": %d, \"frame\": %d, \"waited_for\": \"%s\"",
                i ? "," : "", s->probe, s->frame, wait_names[s->cause]);
        ms(f, "total_ms", s->total_ms, true);
        for (int k = 0; k < PB_N_SEGMENTS; k++) {
            char key[32];
            snprintf(key, sizeof(key), "%s_ms", wait_names[k]);
            ms(f, key, s->seg_ms[k], s->seg_ms[k] >= 0);
        }
        ms(f, "reference_late_ms", s->late_ms[0], true);
        ms(f, "distorted_late_ms", s->late_ms[1], true);
        fputc('}', f);
    }
    fprintf(f, "], \"arrival\": [");
    for (int i = 0; i < st->n_arrival; i++) {
        const PbStall *s = &st->arrival[i];
        fprintf(f, "%s\n    {\"probe\": %d, \"frame\": %d, \"side\": \"%s\", "
                "\"decoded\": %s", i ? "," : "", s->probe, s->frame,
                s->side ? "distorted" : "reference", s->decoded ? "true" : "false");
        ms(f, "push_to_arrival_ms", s->total_ms, true);
        ms(f, "queued_ms", s->queued_ms, s->queued_ms >= 0);
        ms(f, "decode_ms", s->decode_ms, s->decode_ms >= 0);
        ms(f, "late_ms", s->late_ms[s->side ? 1 : 0], true);
        fputc('}', f);
    }
    fprintf(f, "]}");
}
