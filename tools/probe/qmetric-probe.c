/* qmetric-probe: runs video quality probes (pipelines with a qmetric
 * element) from a config file and serves their windowed scores to
 * Prometheus over HTTP (libsoup 3).
 *
 *   qmetric-probe --config probes.conf [--listen 127.0.0.1:9464]
 *
 * See docs/probe.md for the config format and the metrics. */
#include <glib-unix.h>
#include <gst/gst.h>
#include <libsoup/soup.h>
#include <stdlib.h>
#include <string.h>

#include "expo.h"
#include "probe.h"

#define DEFAULT_LISTEN "127.0.0.1:9464"

static void
on_metrics (SoupServer * server, SoupServerMessage * msg, const char *path,
    GHashTable * query, gpointer data)
{
  GPtrArray *probes = data;
  gchar *body;
  gsize len;

  if (strcmp (soup_server_message_get_method (msg), "GET") &&
      strcmp (soup_server_message_get_method (msg), "HEAD")) {
    soup_server_message_set_status (msg, SOUP_STATUS_METHOD_NOT_ALLOWED,
        NULL);
    return;
  }
  body = expo_render (probes, &len);
  soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
  soup_server_message_set_response (msg, EXPO_CONTENT_TYPE, SOUP_MEMORY_TAKE,
      body, len);
}

static void
on_root (SoupServer * server, SoupServerMessage * msg, const char *path,
    GHashTable * query, gpointer data)
{
  static const char page[] = "qmetric-probe: the metrics are at /metrics\n";

  if (strcmp (path, "/")) {
    soup_server_message_set_status (msg, SOUP_STATUS_NOT_FOUND, NULL);
    return;
  }
  soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
  soup_server_message_set_response (msg, "text/plain; charset=utf-8",
      SOUP_MEMORY_STATIC, page, sizeof (page) - 1);
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
  gchar *config = NULL, *listen = NULL;
  gint duration = 0;
  GOptionEntry entries[] = {
    {"config", 'c', 0, G_OPTION_ARG_FILENAME, &config,
        "Probe configuration (key file, one [group] per probe)", "FILE"},
    {"listen", 'l', 0, G_OPTION_ARG_STRING, &listen,
        "Address to serve /metrics on (default " DEFAULT_LISTEN "; port 0: "
          "any free port, printed at start)", "ADDR:PORT"},
    {"duration", 0, 0, G_OPTION_ARG_INT, &duration,
        "Exit after this many seconds (0: run until SIGINT/SIGTERM)", "S"},
    {NULL}
  };
  GOptionContext *ctx = g_option_context_new ("- serve qmetric video "
      "quality probes to Prometheus");
  GError *err = NULL;
  GPtrArray *probes;
  GSocketAddress *addr;
  SoupServer *server;
  GMainLoop *loop;
  GSList *uris, *u;
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
  if (!(addr = parse_listen (listen ? listen : DEFAULT_LISTEN, &err))) {
    g_printerr ("qmetric-probe: %s\n", err->message);
    return 2;
  }
  if (!(probes = probe_load_config (config, &err))) {
    g_printerr ("qmetric-probe: %s\n", err->message);
    return 2;
  }

  server = soup_server_new ("server-header", "qmetric-probe", NULL);
  soup_server_add_handler (server, "/metrics", on_metrics, probes, NULL);
  soup_server_add_handler (server, "/", on_root, NULL, NULL);
  if (!soup_server_listen (server, addr, 0, &err)) {
    g_printerr ("qmetric-probe: cannot listen on %s: %s\n",
        listen ? listen : DEFAULT_LISTEN, err->message);
    return 1;
  }
  g_object_unref (addr);
  /* the address actually bound (port 0 picks one): tests read this line */
  uris = soup_server_get_uris (server);
  for (u = uris; u; u = u->next) {
    gchar *s = g_uri_to_string (u->data);
    g_print ("qmetric-probe: serving %smetrics (%u probe%s)\n", s,
        probes->len, probes->len == 1 ? "" : "s");
    g_free (s);
  }
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  loop = g_main_loop_new (NULL, FALSE);
  g_unix_signal_add (SIGINT, on_signal, loop);
  g_unix_signal_add (SIGTERM, on_signal, loop);
  if (duration > 0)
    g_timeout_add_seconds (duration, on_signal, loop);
  for (i = 0; i < probes->len; i++)
    probe_start (g_ptr_array_index (probes, i));
  g_main_loop_run (loop);

  for (i = 0; i < probes->len; i++)
    probe_stop (g_ptr_array_index (probes, i));
  soup_server_disconnect (server);
  g_object_unref (server);
  g_ptr_array_unref (probes);
  g_main_loop_unref (loop);
  g_free (config);
  g_free (listen);
  return 0;
}
