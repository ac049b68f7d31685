/* qmetric-probe: a probe's pipeline, its restarts with backoff, what it
 * reports, and its state (see probe.h).
 *
 * Liveness is measured, not assumed: the probe is "scoring" only while
 * scored frames leave the element (a buffer probe on its src pad sees their
 * GstQmetricMeta) within the stall timeout; a playing pipeline whose
 * sources went quiet is "stalled", one that never scored is "waiting", and
 * after the restart timeout without a pair it is restarted as after an
 * error.  The output is the measure, not the per-frame messages: the
 * engine scores ahead of a paced sink in bursts of several seconds, the
 * output follows the stream.  Buffer probes on the two sink pads say which
 * input went quiet. */
#include "probe.h"

#include <malloc.h>
#include <math.h>
#include <string.h>

#include "cudactx.h"
#include "duration.h"
#include "gstqmetricmeta.h"
#include "qm.h"

const double probe_vmaf_bounds[PROBE_VMAF_BUCKETS] = {
  10, 20, 30, 40, 50, 60, 70, 80, 85, 90, 95, 100,
};

const char *const probe_stat_names[PROBE_N_STATS] = {
  "mean", "harmonic-mean", "min", "max", "p1", "p5",
};

const char *const probe_state_names[PROBE_N_STATES] = {
  "starting", "waiting", "scoring", "stalled", "failed",
};

static void schedule_restart (Probe * p);
static void fail (Probe * p, const gchar * error);

/* ---- state ---- */

/* The state, and its reason (exported as a label: stable text, no
 * durations); a change of state is logged, with log (or the reason). */
static void
set_state (Probe * p, ProbeState state, const gchar * reason,
    const gchar * log)
{
  if (g_strcmp0 (p->reason, reason)) {
    g_free (p->reason);
    p->reason = g_strdup (reason);
  }
  if (p->state == state)
    return;
  if (!log)
    log = reason;
  g_printerr ("qmetric-probe: [%s] %s -> %s%s%s\n", p->name,
      probe_state_names[p->state], probe_state_names[state],
      log ? ": " : "", log ? log : "");
  p->state = state;
  p->state_since_us = g_get_monotonic_time ();
}

/* Which input is quiet, from the sink pads' buffer probes (no durations:
 * the text is a label of the state and of the last error).  An input whose
 * last buffer came with the last scored pair stopped when scoring did: the
 * element scores a frame a little after its buffer passes the pad probe, so
 * when the stall is declared (a stall timeout after the last score) that
 * buffer is a few milliseconds short of the timeout; it is quiet all the same,
 * not an input that flows while nothing is scored. */
#define PROBE_INPUT_SLACK_US (PROBE_TICK_MS * G_GINT64_CONSTANT (1000))

static gchar *
describe_inputs (Probe * p, gint64 now)
{
  gint64 scored = atomic_load (&p->scored.last_us);
  gboolean seen[2], quiet[2];
  guint i;

  for (i = 0; i < 2; i++) {
    gint64 last = atomic_load (&p->inputs[i].last_us);
    seen[i] = atomic_load (&p->inputs[i].buffers) > 0;
    quiet[i] = now - (seen[i] ? last : p->run_start_us) >= p->stall_us ||
        (seen[i] && scored && last - scored <= PROBE_INPUT_SLACK_US &&
        now - scored >= p->stall_us);
  }
  if (quiet[0] && quiet[1])
    return g_strdup (!seen[0] && !seen[1] ?
        "no buffer has reached the qmetric element (both sources silent)" :
        "no buffer on either input of the qmetric element");
  for (i = 0; i < 2; i++)
    if (quiet[i])
      return g_strdup_printf (seen[i] ? "no buffer on %s (the %s input) "
          "while the other input flows" : "no buffer has reached %s (the "
          "%s input) while the other input flows", p->inputs[i].pad,
          i ? "distorted" : "reference");
  return g_strdup ("buffers reach both inputs but no pair is scored (see "
      "qmetric_unmatched_frames_total)");
}

static void
count (ProbePadCount * c)
{
  atomic_fetch_add (&c->buffers, 1);
  atomic_store (&c->last_us, g_get_monotonic_time ());
}

static GstPadProbeReturn
on_input (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  count (data);
  return GST_PAD_PROBE_OK;
}

static gboolean
scored_in_list (GstBuffer ** buf, guint idx, gpointer data)
{
  if (gst_buffer_get_qmetric_meta (*buf))
    count (data);
  return TRUE;
}

static GstPadProbeReturn
on_output (GstPad * pad, GstPadProbeInfo * info, gpointer data)
{
  if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
    if (gst_buffer_get_qmetric_meta (GST_PAD_PROBE_INFO_BUFFER (info)))
      count (data);
  } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
    gst_buffer_list_foreach (GST_PAD_PROBE_INFO_BUFFER_LIST (info),
        scored_in_list, data);
  }
  return GST_PAD_PROBE_OK;
}

static void
watch_pad (Probe * p, ProbePadCount * c, GstPadProbeCallback cb)
{
  GstPad *pad = gst_element_get_static_pad (p->qmetric, c->pad);

  atomic_store (&c->buffers, 0);
  atomic_store (&c->last_us, 0);
  if (pad) {
    gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER |
        GST_PAD_PROBE_TYPE_BUFFER_LIST, cb, c, NULL);
    gst_object_unref (pad);
  }
}

/* the stall timeout of this run: given, or a few of the element's windows */
static gint64
stall_timeout (Probe * p)
{
  gchar *window = NULL;
  gint64 w;

  if (p->stall_timeout_us > 0)
    return p->stall_timeout_us;
  g_object_get (p->qmetric, "window", &window, NULL);
  w = window ? parse_duration_us (window) : -1;
  g_free (window);
  if (w <= 0)
    return PROBE_STALL_FALLBACK_US;
  return MAX (PROBE_STALL_WINDOWS * w, PROBE_STALL_MIN_US);
}

void
probe_tick (Probe * p)
{
  gint64 now = g_get_monotonic_time ();
  gint64 last = atomic_load (&p->scored.last_us);
  gint64 quiet;
  gchar *why;

  if (!p->pipeline || p->state == PROBE_FAILED)
    return;
  quiet = now - (last ? last : p->run_start_us);
  if (last && quiet < p->stall_us) {
    set_state (p, PROBE_SCORING, NULL, NULL);
    return;
  }
  if (p->state == PROBE_SCORING) {
    gchar *msg;
    why = describe_inputs (p, now);
    msg = g_strdup_printf ("no pair scored for %.1f s; %s", quiet / 1e6, why);
    set_state (p, PROBE_STALLED, why, msg);
    g_free (msg);
    g_free (why);
  } else if ((p->state == PROBE_WAITING || p->state == PROBE_STALLED) &&
      now - p->run_start_us >= p->stall_us) {
    /* what is quiet may change while the probe waits */
    why = describe_inputs (p, now);
    set_state (p, p->state, why, NULL);
    g_free (why);
  }
  if (p->restart_timeout_us > 0 && quiet >= MAX (p->restart_timeout_us,
          2 * p->stall_us)) {
    gchar *err, *t = g_strdup_printf ("%.0f s",
        MAX (p->restart_timeout_us, 2 * p->stall_us) / 1e6);
    why = describe_inputs (p, now);
    err = g_strdup_printf ("no pair scored within %s%s: %s", t,
        last ? " (stalled)" : " of the start", why);
    fail (p, err);
    g_free (err);
    g_free (why);
    g_free (t);
  }
}

/* ---- what the qmetric element reports ---- */

static void
on_frame (Probe * p, const GstStructure * s)
{
  gdouble v;
  guint i;

  if (!gst_structure_get_double (s, "vmaf", &v))
    return;
  for (i = 0; i < PROBE_VMAF_BUCKETS; i++)
    if (v <= probe_vmaf_bounds[i])
      break;
  p->vmaf_buckets[i]++;
  p->vmaf_count++;
  p->vmaf_sum += v;
}

static guint64
get_u64 (const GstStructure * s, const gchar * field)
{
  guint64 v = 0;

  gst_structure_get_uint64 (s, field, &v);
  return v;
}

/* Without features=, the final scores: the feature that stands for each
 * metric (the descriptors' headline: vmaf or each model's score, psnr_y,
 * float_ssim, ssimulacra2, ...), not the VMAF models' inputs. */
static gboolean
feature_selected (Probe * p, const gchar * name)
{
  guint i;

  if (!p->features) {
    QmFeatureInfo fi;
    return qm_feature_info (name, &fi) && fi.headline && !fi.model_input;
  }
  for (i = 0; p->features[i]; i++)
    if (g_pattern_match_simple (p->features[i], name))
      return TRUE;
  return FALSE;
}

static void
clear_last (Probe * p)
{
  guint i;

  for (i = 0; i < p->last->len; i++)
    g_free (g_array_index (p->last, ProbeFeature, i).feature);
  g_array_set_size (p->last, 0);
  p->last_fresh = FALSE;
}

static void
on_window (Probe * p, const GstStructure * s)
{
  guint i, n = gst_structure_n_fields (s);

  p->windows++;
  p->last_pairs = get_u64 (s, "pairs");
  p->last_unmatched = get_u64 (s, "unmatched");
  p->frames += p->last_pairs;
  p->unmatched_ref += get_u64 (s, "unmatched-reference");
  p->unmatched_dist += get_u64 (s, "unmatched-distorted");
  p->unreadable += get_u64 (s, "unreadable");
  p->skipped += get_u64 (s, "skipped");
  p->last_start_rt = get_u64 (s, "start-running-time");
  p->last_end_rt = get_u64 (s, "end-running-time");
  p->last_unix_us = g_get_real_time ();

  clear_last (p);
  p->last_fresh = TRUE;
  for (i = 0; i < n; i++) {
    const gchar *name = gst_structure_nth_field_name (s, i);
    const GValue *val = gst_structure_get_value (s, name);
    const GstStructure *f;
    ProbeFeature pf = { 0 };
    guint k;

    if (!GST_VALUE_HOLDS_STRUCTURE (val) || !feature_selected (p, name))
      continue;
    f = gst_value_get_structure (val);
    pf.feature = g_strdup (name);
    pf.frames = get_u64 (f, "frames");
    for (k = 0; k < PROBE_N_STATS; k++)
      if (!gst_structure_get_double (f, probe_stat_names[k], &pf.v[k]))
        pf.v[k] = NAN;
    g_array_append_val (p->last, pf);
  }
  /* the pipeline produces: the next failure starts from a short delay */
  p->backoff_ms = PROBE_BACKOFF_FIRST_MS;
}

/* ---- lifetime ---- */

static void
teardown (Probe * p)
{
  if (p->bus_watch) {
    g_source_remove (p->bus_watch);
    p->bus_watch = 0;
  }
  if (p->pipeline) {
    gst_element_set_state (p->pipeline, GST_STATE_NULL);
    gst_clear_object (&p->qmetric);
    gst_clear_object (&p->pipeline);
    /* the pipeline's frames and threads are gone: give their heap back
     * (glibc keeps freed memory in its arenas; restarts of a stopped
     * source would grow the process by about 0.1 MB each) */
    malloc_trim (0);
  }
  p->last_fresh = FALSE;
}

/* The pipeline stopped: an error (counted) or the end of its input. */
static void
fail (Probe * p, const gchar * error)
{
  gchar *msg;

  if (error) {
    p->errors++;
    g_free (p->last_error);
    p->last_error = g_strdup (error);
    msg = g_strdup_printf ("%s; restarting in %u ms", error, p->backoff_ms);
    set_state (p, PROBE_FAILED, error, msg);
  } else {
    msg = g_strdup_printf ("end of stream; restarting in %u ms",
        p->backoff_ms);
    set_state (p, PROBE_STARTING, "end of stream", msg);
  }
  g_free (msg);
  teardown (p);
  schedule_restart (p);
}

static gboolean
on_bus (GstBus * bus, GstMessage * msg, gpointer data)
{
  Probe *p = data;

  switch (GST_MESSAGE_TYPE (msg)) {
    case GST_MESSAGE_ELEMENT:
      if (GST_MESSAGE_SRC (msg) == GST_OBJECT (p->qmetric)) {
        const GstStructure *s = gst_message_get_structure (msg);
        if (gst_structure_has_name (s, "qmetric"))
          on_frame (p, s);
        else if (gst_structure_has_name (s, "qmetric-window"))
          on_window (p, s);
      }
      break;
    case GST_MESSAGE_STATE_CHANGED:
      if (GST_MESSAGE_SRC (msg) == GST_OBJECT (p->pipeline)) {
        GstState new_state;
        gst_message_parse_state_changed (msg, NULL, &new_state, NULL);
        if (new_state >= GST_STATE_PAUSED && p->state == PROBE_STARTING)
          set_state (p, PROBE_WAITING, NULL, NULL);
      }
      break;
    case GST_MESSAGE_ERROR:{
      GError *err = NULL;
      gchar *msg_text;
      gst_message_parse_error (msg, &err, NULL);
      msg_text = g_strdup_printf ("%s: %s", GST_OBJECT_NAME
          (GST_MESSAGE_SRC (msg)), err->message);
      g_error_free (err);
      fail (p, msg_text);
      g_free (msg_text);
      /* teardown() removed this watch */
      return G_SOURCE_REMOVE;
    }
    case GST_MESSAGE_EOS:
      fail (p, NULL);
      return G_SOURCE_REMOVE;
    default:
      break;
  }
  return G_SOURCE_CONTINUE;
}

void
probe_start (Probe * p)
{
  GError *err = NULL;
  gchar *window = NULL;
  GstBus *bus;

  teardown (p);
  clear_last (p);
  p->run_start_us = g_get_monotonic_time ();
  set_state (p, PROBE_STARTING, NULL, NULL);
  if (!(p->pipeline = probe_parse (p, &p->qmetric, &err))) {
    fail (p, err->message);
    g_error_free (err);
    return;
  }
  g_object_get (p->qmetric, "window", &window, NULL);
  if (!window || !strcmp (window, "none"))
    g_object_set (p->qmetric, "window", p->window, NULL);
  g_free (window);
  /* the per-frame messages feed the VMAF histogram */
  g_object_set (p->qmetric, "post-messages", TRUE, NULL);
  p->stall_us = stall_timeout (p);
  watch_pad (p, &p->inputs[0], on_input);
  watch_pad (p, &p->inputs[1], on_input);
  watch_pad (p, &p->scored, on_output);

  bus = gst_element_get_bus (p->pipeline);
  /* one CUDA context a device for every probe (cudactx.c) */
  gst_bus_set_sync_handler (bus, probe_cuda_sync, NULL, NULL);
  p->bus_watch = gst_bus_add_watch (bus, on_bus, p);
  gst_object_unref (bus);
  if (gst_element_set_state (p->pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    /* the ERROR message, if any, is still on the bus: drop it with the
     * watch */
    fail (p, "the pipeline could not start");
  }
}

static gboolean
restart_cb (gpointer data)
{
  Probe *p = data;

  p->retry_source = 0;
  p->restarts++;
  probe_start (p);
  return G_SOURCE_REMOVE;
}

static void
schedule_restart (Probe * p)
{
  if (p->retry_source)
    return;
  p->retry_source = g_timeout_add (p->backoff_ms, restart_cb, p);
  p->backoff_ms = MIN (p->backoff_ms * 2, PROBE_BACKOFF_MAX_MS);
}

void
probe_stop (Probe * p)
{
  if (p->retry_source) {
    g_source_remove (p->retry_source);
    p->retry_source = 0;
  }
  teardown (p);
}

void
probe_free (Probe * p)
{
  probe_stop (p);
  if (p->last) {
    clear_last (p);
    g_array_unref (p->last);
  }
  g_strfreev (p->features);
  g_free (p->name);
  g_free (p->description);
  g_free (p->element);
  g_free (p->window);
  g_free (p->last_error);
  g_free (p->reason);
  g_free (p);
}
