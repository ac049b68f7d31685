/* qmetric-probe: runs video quality probes (pipelines with a qmetric
 * element) from a config file and serves their windowed scores to
 * Prometheus over HTTP or HTTPS (http.c: our own small server, built to
 * keep answering under load and attack).
 *
 *   qmetric-probe --config probes.conf [--listen 127.0.0.1:9464]
 *       [--web.config.file web.yml]
 *
 * See docs/probe.md for the config format and the metrics. */
#include <glib-unix.h>
#include <gst/gst.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "expo.h"
#include "http.h"
#include "probe.h"
#include "webconfig.h"

#define DEFAULT_LISTEN "127.0.0.1:9464"

static GBytes *
render (gpointer data)
{
  gsize len;
  gchar *body = expo_render (data, &len);

  return g_bytes_new_take (body, len);
}

static gboolean
tick (gpointer data)
{
  GPtrArray *probes = data;
  guint i;

  for (i = 0; i < probes->len; i++)
    probe_tick (g_ptr_array_index (probes, i));
  return G_SOURCE_CONTINUE;
}

/* The soft descriptor limit raised to the hard one (as Go programs do at
 * start); the connection cap, unless given, kept to half of it so that the
 * pipelines have the rest. */
static guint
connection_cap (gint asked)
{
  struct rlimit rl;
  guint half;

  if (getrlimit (RLIMIT_NOFILE, &rl))
    return asked > 0 ? (guint) asked : HTTP_DEFAULT_MAX_CONNECTIONS;
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit (RLIMIT_NOFILE, &rl);
    getrlimit (RLIMIT_NOFILE, &rl);
  }
  half = rl.rlim_cur == RLIM_INFINITY ? G_MAXUINT : MAX (rl.rlim_cur / 2, 1);
  if (asked > 0) {
    if ((guint) asked > half)
      g_printerr ("qmetric-probe: --max-connections %d is above half the "
          "descriptor limit (RLIMIT_NOFILE %lu): the pipelines may run out "
          "of descriptors first\n", asked, (gulong) rl.rlim_cur);
    return asked;
  }
  return MIN (HTTP_DEFAULT_MAX_CONNECTIONS, half);
}

/* "ADDR:PORT", "[ADDR]:PORT" (IPv6) or ":PORT" (loopback) */
static GSocketAddress *
parse_listen (const gchar * s, GError ** error)
{
  const gchar *colon = strrchr (s, ':');
  gchar *host, *end;
  guint64 port;
  GInetAddress *ia;
  GSocketAddress *sa;

  if (!colon)
    goto bad;
  port = g_ascii_strtoull (colon + 1, &end, 10);
  if (end == colon + 1 || *end || port > 65535)
    goto bad;
  host = g_strndup (s, colon - s);
  if (host[0] == '[' && host[strlen (host) - 1] == ']') {
    memmove (host, host + 1, strlen (host));
    host[strlen (host) - 1] = 0;
  }
  ia = host[0] ? g_inet_address_new_from_string (host) :
      g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_free (host);
  if (!ia)
    goto bad;
  sa = g_inet_socket_address_new (ia, (guint16) port);
  g_object_unref (ia);
  return sa;
bad:
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
      "--listen \"%s\": expected ADDRESS:PORT, e.g. 127.0.0.1:9464 or "
      "[::1]:9464 (a numeric address)", s);
  return NULL;
}

static gboolean
on_signal (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

int
main (int argc, char **argv)
{
  gchar *config = NULL, *listen = NULL, *web_file = NULL;
  gint duration = 0, max_conns = 0;
  gint header_timeout = HTTP_DEFAULT_HEADER_TIMEOUT_S;
  gint idle_timeout = HTTP_DEFAULT_IDLE_TIMEOUT_S;
  GOptionEntry entries[] = {
    {"config", 'c', 0, G_OPTION_ARG_FILENAME, &config,
        "Probe configuration (key file, one [group] per probe)", "FILE"},
    {"listen", 'l', 0, G_OPTION_ARG_STRING, &listen,
        "Address to serve /metrics on (default " DEFAULT_LISTEN "; port 0: "
          "any free port, printed at start)", "ADDR:PORT"},
    {"web.config.file", 0, 0, G_OPTION_ARG_FILENAME, &web_file,
        "Prometheus web configuration: TLS, basic authentication "
          "(exporter-toolkit's format)", "FILE"},
    {"max-connections", 0, 0, G_OPTION_ARG_INT, &max_conns,
        "Connections held at once; a new one closes the oldest idle one "
          "(default 64, at most half RLIMIT_NOFILE)", "N"},
    {"header-timeout", 0, 0, G_OPTION_ARG_INT, &header_timeout,
        "Seconds a client has to send a request head, and to take the "
          "answer (default 10)", "S"},
    {"idle-timeout", 0, 0, G_OPTION_ARG_INT, &idle_timeout,
        "Seconds a kept-alive connection waits for its next request "
          "(default 60)", "S"},
    {"duration", 0, 0, G_OPTION_ARG_INT, &duration,
        "Exit after this many seconds (0: run until SIGINT/SIGTERM)", "S"},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("- serve qmetric video "
      "quality probes to Prometheus");
  GError *err = NULL;
  GPtrArray *probes;
  GSocketAddress *addr;
  WebConfig *web;
  HttpLimits limits;
  HttpServer *server;
  GMainLoop *loop;
  guint i;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_group (ctx, gst_init_get_option_group ());
  if (!g_option_context_parse (ctx, &argc, &argv, &err)) {
    g_printerr ("qmetric-probe: %s\n", err->message);
    return 2;
  }
  g_option_context_free (ctx);
  if (!config) {
    g_printerr ("qmetric-probe: --config FILE is required (see --help)\n");
    return 2;
  }
  if (max_conns < 0 || header_timeout <= 0 || idle_timeout <= 0) {
    g_printerr ("qmetric-probe: --max-connections, --header-timeout and "
        "--idle-timeout take a positive number\n");
    return 2;
  }
  if (!(addr = parse_listen (listen ? listen : DEFAULT_LISTEN, &err))) {
    g_printerr ("qmetric-probe: %s\n", err->message);
    return 2;
  }
  if (!(web = web_config_load (web_file, &err))) {
    g_printerr ("qmetric-probe: --web.config.file %s\n", err->message);
    return 2;
  }
  if (!(probes = probe_load_config (config, &err))) {
    g_printerr ("qmetric-probe: %s\n", err->message);
    return 2;
  }

  limits.max_connections = connection_cap (max_conns);
  limits.header_timeout_us = (gint64) header_timeout * G_USEC_PER_SEC;
  limits.idle_timeout_us = (gint64) idle_timeout * G_USEC_PER_SEC;
  server = http_server_new (addr, &limits, web, EXPO_CONTENT_TYPE, render,
      probes, &err);
  g_object_unref (addr);
  if (!server) {
    g_printerr ("qmetric-probe: cannot listen on %s: %s\n",
        listen ? listen : DEFAULT_LISTEN, err->message);
    return 1;
  }
  /* the address actually bound (port 0 picks one): tests read this line */
  g_print ("qmetric-probe: serving %s (%u probe%s%s)\n",
      http_server_url (server), probes->len, probes->len == 1 ? "" : "s",
      g_hash_table_size (web->users) ? ", basic authentication" : "");

  loop = g_main_loop_new (NULL, FALSE);
  g_unix_signal_add (SIGINT, on_signal, loop);
  g_unix_signal_add (SIGTERM, on_signal, loop);
  if (duration > 0)
    g_timeout_add_seconds (duration, on_signal, loop);
  for (i = 0; i < probes->len; i++)
    probe_start (g_ptr_array_index (probes, i));
  g_timeout_add (PROBE_TICK_MS, tick, probes);
  g_main_loop_run (loop);

  http_server_free (server);
  for (i = 0; i < probes->len; i++)
    probe_stop (g_ptr_array_index (probes, i));
  g_ptr_array_unref (probes);
  web_config_free (web);
  g_main_loop_unref (loop);
  g_free (config);
  g_free (listen);
  g_free (web_file);
  return 0;
}
