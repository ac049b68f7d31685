/* qmetric-probe: the listening socket and the server's limits (see
 * http.h); one connection's work is in httpconn.c.
 *
 * Descriptors: accept() failing with EMFILE/ENFILE leaves the client in
 * the backlog and the socket readable, so the server first closes its
 * oldest idle or unfinished connection (its descriptor is then free for
 * the new one); with none, it spends a reserve descriptor to accept and
 * close the waiting client (who then sees a reset instead of a hang), and
 * retries every HTTP_ACCEPT_RETRY_MS: accepting resumes as soon as
 * descriptors are free. */
#define _GNU_SOURCE             /* accept4 */
#include "httpint.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/socket.h>
#include <unistd.h>

#define HTTP_ACCEPT_RETRY_MS 100
/* a wake-up accepts at most this many, so the probes' bus messages are
 * not held up by a connection flood */
#define HTTP_ACCEPT_BATCH 32
#define HTTP_TICK_MS 100
/* the body of /metrics is rendered at most this often (concurrent scrapes
 * share it: one copy in memory, however many slow readers) */
#define HTTP_BODY_REUSE_US (100 * 1000)
#define HTTP_LOG_EVERY_US (60 * G_USEC_PER_SEC)

static gboolean on_accept (GSocket * socket, GIOCondition cond,
    gpointer data);

static void
accept_watch (HttpServer * srv)
{
  srv->accept_source = g_socket_create_source (srv->listener, G_IO_IN, NULL);
  g_source_set_callback (srv->accept_source,
      (GSourceFunc) (GCallback) on_accept, srv, NULL);
  g_source_attach (srv->accept_source, NULL);
}

static gboolean
accept_resume (gpointer data)
{
  HttpServer *srv = data;

  srv->accept_retry = 0;
  if (srv->reserve_fd < 0)
    srv->reserve_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  accept_watch (srv);
  return G_SOURCE_REMOVE;
}

static void
accept_pause (HttpServer * srv)
{
  g_source_destroy (srv->accept_source);
  g_source_unref (srv->accept_source);
  srv->accept_source = NULL;
  srv->accept_retry = g_timeout_add (HTTP_ACCEPT_RETRY_MS, accept_resume,
      srv);
}

/* Close the connection whose phase started first, preferring those that
 * wait for a client (idle, an unfinished head or handshake, draining) to
 * those the server works for.  FALSE when there is none. */
static gboolean
evict_one (HttpServer * srv)
{
  GList *l;

  for (l = srv->conns.head; l; l = l->next) {
    HttpConn *c = l->data;
    if (c->state != CONN_WRITE && c->state != CONN_AUTH) {
      http_conn_close (c);
      return TRUE;
    }
  }
  if (srv->conns.head) {
    http_conn_close (srv->conns.head->data);
    return TRUE;
  }
  return FALSE;
}

static void
log_limited (HttpServer * srv, gint64 * last, const gchar * what)
{
  gint64 now = g_get_monotonic_time ();

  if (*last && now - *last < HTTP_LOG_EVERY_US)
    return;
  *last = now;
  g_printerr ("qmetric-probe: %s\n", what);
}

/* EMFILE with no connection of ours to close: take the waiting client
 * with the reserve descriptor and close it */
static void
shed_one (HttpServer * srv)
{
  gint fd;

  if (srv->reserve_fd < 0)
    return;
  close (srv->reserve_fd);
  fd = accept4 (g_socket_get_fd (srv->listener), NULL, NULL, SOCK_CLOEXEC);
  if (fd >= 0)
    close (fd);
  srv->reserve_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
}

static gboolean
on_accept (GSocket * socket, GIOCondition cond, gpointer data)
{
  HttpServer *srv = data;
  guint i;

  for (i = 0; i < HTTP_ACCEPT_BATCH; i++) {
    gint fd = accept4 (g_socket_get_fd (socket), NULL, NULL,
        SOCK_NONBLOCK | SOCK_CLOEXEC);

    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return G_SOURCE_CONTINUE;
      if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
        continue;
      if (errno == EMFILE || errno == ENFILE) {
        log_limited (srv, &srv->logged_exhausted, errno == EMFILE ?
            "out of file descriptors (RLIMIT_NOFILE): closing the oldest "
            "idle connection for each new one" :
            "the system is out of file descriptors: closing the oldest "
            "idle connection for each new one");
        if (evict_one (srv))
          continue;
        shed_one (srv);
      }
      /* ENOBUFS, ENOMEM, ...: the same retry */
      accept_pause (srv);
      return G_SOURCE_REMOVE;
    }
    if (srv->conns.length >= srv->limits.max_connections) {
      log_limited (srv, &srv->logged_cap, "connections at the "
          "--max-connections cap: closing the oldest idle one for each new "
          "one");
      evict_one (srv);
    }
    http_conn_new (srv, fd);
  }
  return G_SOURCE_CONTINUE;
}

static gboolean
on_tick (gpointer data)
{
  HttpServer *srv = data;
  gint64 now = g_get_monotonic_time ();
  GPtrArray *all = g_ptr_array_sized_new (srv->conns.length);
  GList *l;
  guint i;

  /* a tick may close other connections than its own (a TLS handshake
   * that starts cancels the oldest): walk a referenced copy */
  for (l = srv->conns.head; l; l = l->next)
    g_ptr_array_add (all, http_conn_ref (l->data));
  for (i = 0; i < all->len; i++) {
    HttpConn *c = g_ptr_array_index (all, i);
    if (c->srv)
      http_conn_tick (c, now);
    http_conn_unref (c);
  }
  g_ptr_array_free (all, TRUE);
  /* after a burst, give the freed heap back (glibc keeps it otherwise) */
  if (srv->peak >= 16 && srv->conns.length * 4 <= srv->peak) {
    g_clear_pointer (&srv->cached, g_bytes_unref);
    malloc_trim (0);
    srv->peak = srv->conns.length;
  }
  return G_SOURCE_CONTINUE;
}

GBytes *
http_server_get_body (HttpServer * srv)
{
  gint64 now = g_get_monotonic_time ();

  if (!srv->cached || now - srv->cached_at >= HTTP_BODY_REUSE_US) {
    if (srv->cached)
      g_bytes_unref (srv->cached);
    srv->cached = srv->body (srv->body_data);
    srv->cached_at = now;
  }
  return g_bytes_ref (srv->cached);
}

gboolean
http_server_take_token (HttpServer * srv)
{
  const WebConfig *web = srv->web;
  gint64 now = g_get_monotonic_time ();

  if (web->rate_interval_us <= 0)
    return TRUE;
  srv->tokens = MIN ((gdouble) web->rate_burst, srv->tokens +
      (gdouble) (now - srv->tokens_at) / web->rate_interval_us);
  srv->tokens_at = now;
  if (srv->tokens < 1)
    return FALSE;
  srv->tokens -= 1;
  return TRUE;
}

void
http_server_renew (HttpServer * srv, HttpConn * c)
{
  g_queue_unlink (&srv->conns, c->link);
  g_queue_push_tail_link (&srv->conns, c->link);
  c->since = g_get_monotonic_time ();
}

void
http_server_handshake_slot (HttpServer * srv, HttpConn * c)
{
  if (srv->handshakes >= HTTP_MAX_HANDSHAKES) {
    GList *l;
    for (l = srv->conns.head; l; l = l->next) {
      HttpConn *o = l->data;
      if (o != c && o->state == CONN_TLS_HANDSHAKE) {
        http_conn_close (o);
        break;
      }
    }
  }
  srv->handshakes++;
}

HttpServer *
http_server_new (GSocketAddress * addr, const HttpLimits * limits,
    const WebConfig * web, const gchar * content_type, HttpBodyFunc body,
    gpointer data, GError ** error)
{
  HttpServer *srv = g_new0 (HttpServer, 1);
  GSocketAddress *bound;
  GInetSocketAddress *inet;
  gchar *host;

  srv->limits = *limits;
  srv->web = web;
  srv->content_type = content_type;
  srv->body = body;
  srv->body_data = data;
  srv->reserve_fd = -1;
  g_queue_init (&srv->conns);
  if (g_hash_table_size (web->users))
    srv->auth = auth_new (web->users);
  srv->tokens = web->rate_burst;
  srv->tokens_at = g_get_monotonic_time ();

  srv->listener = g_socket_new (g_socket_address_get_family (addr),
      G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, error);
  if (!srv->listener)
    goto fail;
  g_socket_set_blocking (srv->listener, FALSE);
  g_socket_set_listen_backlog (srv->listener, 128);
  if (!g_socket_bind (srv->listener, addr, TRUE, error) ||
      !g_socket_listen (srv->listener, error) ||
      !(bound = g_socket_get_local_address (srv->listener, error)))
    goto fail;
  inet = G_INET_SOCKET_ADDRESS (bound);
  host = g_inet_address_to_string (g_inet_socket_address_get_address (inet));
  srv->url = g_strdup_printf (strchr (host, ':') ? "%s://[%s]:%u/metrics" :
      "%s://%s:%u/metrics", web->cert ? "https" : "http", host,
      g_inet_socket_address_get_port (inet));
  g_free (host);
  g_object_unref (bound);

  srv->reserve_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  accept_watch (srv);
  srv->sweep = g_timeout_add (HTTP_TICK_MS, on_tick, srv);
  return srv;

fail:
  http_server_free (srv);
  return NULL;
}

const gchar *
http_server_url (HttpServer * srv)
{
  return srv->url;
}

void
http_server_free (HttpServer * srv)
{
  while (srv->conns.head)
    http_conn_close (srv->conns.head->data);
  if (srv->accept_source) {
    g_source_destroy (srv->accept_source);
    g_source_unref (srv->accept_source);
  }
  if (srv->accept_retry)
    g_source_remove (srv->accept_retry);
  if (srv->sweep)
    g_source_remove (srv->sweep);
  if (srv->reserve_fd >= 0)
    close (srv->reserve_fd);
  if (srv->listener)
    g_socket_close (srv->listener, NULL);
  g_clear_object (&srv->listener);
  if (srv->cached)
    g_bytes_unref (srv->cached);
  auth_free (srv->auth);
  g_free (srv->url);
  g_free (srv);
}
