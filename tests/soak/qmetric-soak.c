/* gst-qmetric: memory soak of the qmetric element (docs/robustness.md,
 * "Memory").  A long synthetic stream at a small size through the element
 * as a live probe uses it: per-frame messages on, every pooled value
 * including the percentiles, no log.  Resident memory (VmRSS) of this
 * process is sampled every --every frames, and with --backend cuda the GPU
 * memory the process holds (nvidia-smi).
 *
 * Per-frame messages are counted and dropped by a bus sync handler, in the
 * element's thread: a GstBus queue is unbounded, and a main loop that falls
 * behind on a loaded machine would grow this process with queued messages,
 * which is not the element's memory.
 *
 *   GST_PLUGIN_PATH=build/gst/qmetric build/tests/soak/qmetric-soak \
 *       [--frames N] [--size WxH] [--metrics LIST] [--backend cpu|cuda]
 *       [--every N] [--warmup N] [--max-growth-kib K] [--max-growth-gpu-mib M]
 *
 * Prints "frames,seconds,vmrss_kib[,gpu_mib]" per sample, then the figures
 * after warm-up and at the end.  Exit status: 0 flat, 1 grew over the limit,
 * 2 pipeline error or a frame count other than the one sent.
 */
#include <gst/gst.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SAMPLES 4096

typedef struct Sample {
  guint64 frames;
  double seconds;
  long rss_kib, gpu_mib;
} Sample;

typedef struct Soak {
  guint64 frames, every;
  gboolean gpu;
  gint64 t0;
  Sample s[MAX_SAMPLES];
  guint n;
  gchar *summary;
} Soak;

static long
vmrss_kib (void)
{
  FILE *f = fopen ("/proc/self/status", "r");
  char line[256];
  long v = -1;
  while (f && fgets (line, sizeof (line), f))
    if (!strncmp (line, "VmRSS:", 6))
      v = strtol (line + 6, NULL, 10);
  if (f)
    fclose (f);
  return v;
}

/* GPU memory this process holds, MiB; -1 when nvidia-smi cannot say. */
static long
gpu_mib (void)
{
  FILE *p = popen ("nvidia-smi --query-compute-apps=pid,used_memory "
      "--format=csv,noheader,nounits 2>/dev/null", "r");
  char line[256];
  long v = -1;
  while (p && fgets (line, sizeof (line), p)) {
    long pid, mib;
    if (sscanf (line, "%ld , %ld", &pid, &mib) == 2 && pid == (long) getpid ())
      v = mib;
  }
  if (p)
    pclose (p);
  return v;
}

static void
take_sample (Soak * k)
{
  Sample *s = &k->s[k->n < MAX_SAMPLES ? k->n++ : MAX_SAMPLES - 1];
  s->frames = k->frames;
  s->seconds = (g_get_monotonic_time () - k->t0) / 1e6;
  s->rss_kib = vmrss_kib ();
  s->gpu_mib = k->gpu ? gpu_mib () : -1;
  if (k->gpu)
    printf ("%" G_GUINT64_FORMAT ",%.1f,%ld,%ld\n", s->frames, s->seconds,
        s->rss_kib, s->gpu_mib);
  else
    printf ("%" G_GUINT64_FORMAT ",%.1f,%ld\n", s->frames, s->seconds,
        s->rss_kib);
  fflush (stdout);
}

static GstBusSyncReply
on_sync (GstBus * bus, GstMessage * msg, gpointer data)
{
  Soak *k = data;
  if (GST_MESSAGE_TYPE (msg) != GST_MESSAGE_ELEMENT)
    return GST_BUS_PASS;
  const GstStructure *s = gst_message_get_structure (msg);
  if (gst_structure_has_name (s, "qmetric")) {
    k->frames++;
    if (k->frames % k->every == 0)
      take_sample (k);
    gst_message_unref (msg);    /* a sync handler owns what it drops */
    return GST_BUS_DROP;
  }
  if (gst_structure_has_name (s, "qmetric-summary")) {
    const GValue *v = gst_structure_get_value (s, "vmaf");
    if (!v)
      v = gst_structure_get_value (s, "psnr_y");
    g_free (k->summary);
    k->summary = v ? gst_value_serialize (v) : g_strdup ("(no vmaf, psnr_y)");
    gst_message_unref (msg);
    return GST_BUS_DROP;
  }
  return GST_BUS_PASS;
}

int
main (int argc, char **argv)
{
  gint64 frames = 1000000, every = 50000, warmup = 100000;
  gint max_kib = 1024, max_gpu = 2;
  gchar *size = NULL, *metrics = NULL, *backend = NULL;
  GOptionEntry entries[] = {
    {"frames", 0, 0, G_OPTION_ARG_INT64, &frames, "frames to send", "N"},
    {"size", 0, 0, G_OPTION_ARG_STRING, &size, "picture size (64x64)", "WxH"},
    {"metrics", 0, 0, G_OPTION_ARG_STRING, &metrics, "metrics (psnr,vmaf)",
        "LIST"},
    {"backend", 0, 0, G_OPTION_ARG_STRING, &backend, "cpu or cuda", "B"},
    {"every", 0, 0, G_OPTION_ARG_INT64, &every, "frames between samples", "N"},
    {"warmup", 0, 0, G_OPTION_ARG_INT64, &warmup,
        "frames after which memory must stay flat", "N"},
    {"max-growth-kib", 0, 0, G_OPTION_ARG_INT, &max_kib,
        "largest VmRSS growth after warm-up (KiB)", "K"},
    {"max-growth-gpu-mib", 0, 0, G_OPTION_ARG_INT, &max_gpu,
        "largest GPU memory growth after warm-up (MiB)", "M"},
    {NULL}
  };
  GError *err = NULL;
  GOptionContext *ctx = g_option_context_new ("- memory soak of qmetric");
  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    fprintf (stderr, "%s\n", err->message);
    return 2;
  }
  g_option_context_free (ctx);
  int w = 64, h = 64;
  if (size && sscanf (size, "%dx%d", &w, &h) != 2) {
    fprintf (stderr, "--size: WxH expected\n");
    return 2;
  }
  if (frames <= 0 || every <= 0) {
    fprintf (stderr, "--frames and --every must be > 0\n");
    return 2;
  }

  Soak *k = g_new0 (Soak, 1);
  k->every = (guint64) every;
  k->gpu = backend && !strcmp (backend, "cuda");
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%" G_GINT64_FORMAT
      " pattern=ball ! video/x-raw,format=I420,width=%d,height=%d,"
      "framerate=1000/1 ! tee name=t t. ! queue ! q.ref_sink "
      "t. ! queue ! videobalance contrast=0.9 brightness=0.02 ! q.dist_sink "
      "qmetric name=q metrics=%s backend=%s "
      "pool=min+max+mean+harmonic-mean+p1+p5 ! fakesink sync=false",
      frames, w, h, metrics ? metrics : "psnr,vmaf", backend ? backend : "cpu");
  GstElement *pipe = gst_parse_launch (desc, &err);
  if (!pipe) {
    fprintf (stderr, "pipeline: %s\n", err->message);
    return 2;
  }
  GstBus *bus = gst_element_get_bus (pipe);
  gst_bus_set_sync_handler (bus, on_sync, k, NULL);

  printf ("frames,seconds,vmrss_kib%s\n", k->gpu ? ",gpu_mib" : "");
  k->t0 = g_get_monotonic_time ();
  gst_element_set_state (pipe, GST_STATE_PLAYING);
  GstMessage *msg = gst_bus_timed_pop_filtered (bus, GST_CLOCK_TIME_NONE,
      GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
  int rc = 0;
  if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
    gchar *dbg = NULL;
    gst_message_parse_error (msg, &err, &dbg);
    fprintf (stderr, "pipeline error: %s (%s)\n", err->message, dbg);
    rc = 2;
  }
  gst_message_unref (msg);
  take_sample (k);
  gst_element_set_state (pipe, GST_STATE_NULL);

  const Sample *first = NULL, *last = &k->s[k->n - 1];
  long peak = 0, gpu_peak = -1;
  for (guint i = 0; i < k->n; i++) {
    if (k->s[i].frames < (guint64) warmup)
      continue;
    if (!first)
      first = &k->s[i];
    peak = MAX (peak, k->s[i].rss_kib);
    gpu_peak = MAX (gpu_peak, k->s[i].gpu_mib);
  }
  printf ("summary: %s\n", k->summary ? k->summary : "(none)");
  if (!first) {
    fprintf (stderr, "no sample after warm-up: raise --frames\n");
    return 2;
  }
  printf ("frames %" G_GUINT64_FORMAT " in %.0f s (%.0f fps), %dx%d %s %s\n",
      k->frames, last->seconds, k->frames / last->seconds, w, h,
      metrics ? metrics : "psnr,vmaf", backend ? backend : "cpu");
  printf ("VmRSS after warm-up (%" G_GUINT64_FORMAT " frames) %ld KiB, at the "
      "end (%" G_GUINT64_FORMAT " frames) %ld KiB, peak after warm-up %ld KiB, "
      "growth %ld KiB\n", first->frames, first->rss_kib, last->frames,
      last->rss_kib, peak, last->rss_kib - first->rss_kib);
  if (k->frames != (guint64) frames) {
    printf ("FAIL: %" G_GUINT64_FORMAT " frames scored, %" G_GINT64_FORMAT
        " sent\n", k->frames, frames);
    rc = 2;
  }
  if (peak - first->rss_kib > max_kib) {
    printf ("FAIL: resident memory grew by %ld KiB (limit %d)\n",
        peak - first->rss_kib, max_kib);
    rc = rc ? rc : 1;
  }
  if (k->gpu) {
    printf ("GPU memory after warm-up %ld MiB, at the end %ld MiB, peak %ld "
        "MiB\n", first->gpu_mib, last->gpu_mib, gpu_peak);
    if (first->gpu_mib < 0) {
      printf ("FAIL: nvidia-smi did not report this process\n");
      rc = rc ? rc : 1;
    } else if (gpu_peak - first->gpu_mib > max_gpu) {
      printf ("FAIL: GPU memory grew by %ld MiB (limit %d)\n",
          gpu_peak - first->gpu_mib, max_gpu);
      rc = rc ? rc : 1;
    }
  }
  gst_object_unref (bus);
  gst_object_unref (pipe);
  g_free (desc);
  g_free (k->summary);
  g_free (k);
  return rc;
}
