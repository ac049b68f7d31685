/* qmetric-probe: one HTTP connection (see httpint.h): the TLS handshake,
 * request heads, authentication, the answer, and closing.  Reads stop
 * while an answer is written or a password checked, so a client that sends
 * without reading holds one head buffer, never more. */
#include "httpint.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const gchar root_page[] =
    "<!DOCTYPE html>\n<html><head><title>qmetric-probe</title></head>\n"
    "<body><h1>qmetric-probe</h1>\n"
    "<p>Video quality probes: <a href=\"/metrics\">/metrics</a></p>\n"
    "</body></html>\n";

static void conn_read (HttpConn * c);
static void conn_write (HttpConn * c);

HttpConn *
http_conn_ref (HttpConn * c)
{
  c->ref++;
  return c;
}

void
http_conn_unref (HttpConn * c)
{
  if (--c->ref)
    return;
  g_socket_close (c->socket, NULL);
  g_clear_object (&c->stream);
  g_object_unref (c->socket);
  g_free (c->head);
  if (c->body)
    g_bytes_unref (c->body);
  g_free (c);
}

void
http_conn_close (HttpConn * c)
{
  HttpServer *srv = c->srv;

  if (!srv)
    return;
  c->srv = NULL;
  g_queue_delete_link (&srv->conns, c->link);
  if (c->state == CONN_TLS_HANDSHAKE)
    srv->handshakes--;
  if (c->io) {
    g_source_destroy (c->io);
    g_source_unref (c->io);
    c->io = NULL;
  }
  if (c->cancel)
    g_cancellable_cancel (c->cancel);
  g_clear_object (&c->cancel);
  /* The socket, not the stream: closing a TLS stream would try to write.
   * A handshake's thread may still be reading the socket: it is closed
   * when the handshake's callback drops the last reference, so that its
   * descriptor cannot be reused under that thread. */
  if (c->state != CONN_TLS_HANDSHAKE)
    g_socket_close (c->socket, NULL);
  http_conn_unref (c);
}

static gboolean
on_ready (GObject * stream, gpointer data)
{
  HttpConn *c = data;

  g_source_unref (c->io);
  c->io = NULL;
  if (c->state == CONN_WRITE)
    conn_write (c);
  else
    conn_read (c);
  return G_SOURCE_REMOVE;
}

/* wait until the stream can be read (G_IO_IN) or written */
static void
conn_wait (HttpConn * c, GIOCondition cond)
{
  if (c->io) {
    g_source_destroy (c->io);
    g_source_unref (c->io);
  }
  c->io = cond == G_IO_IN ?
      g_pollable_input_stream_create_source (c->in, NULL) :
      g_pollable_output_stream_create_source (c->out, NULL);
  g_source_set_callback (c->io, (GSourceFunc) (GCallback) on_ready, c, NULL);
  g_source_attach (c->io, NULL);
}

static void
conn_set_stream (HttpConn * c, GIOStream * stream)
{
  c->stream = stream;
  c->in = G_POLLABLE_INPUT_STREAM (g_io_stream_get_input_stream (stream));
  c->out = G_POLLABLE_OUTPUT_STREAM (g_io_stream_get_output_stream (stream));
}

/* ---- answers ---- */

/* the Date field (RFC 9110, 5.6.7), in English whatever the locale */
static void
append_date (GString * s)
{
  static const gchar *const days[] = {
    "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"
  };
  static const gchar *const months[] = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct",
    "Nov", "Dec"
  };
  time_t t = time (NULL);
  struct tm tm;

  gmtime_r (&t, &tm);
  g_string_append_printf (s, "Date: %s, %02d %s %d %02d:%02d:%02d GMT\r\n",
      days[tm.tm_wday], tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900,
      tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* Start writing an answer; body is taken.  After a close answer to a
 * request that may still be sending (a body, a malformed head), the rest
 * is drained. */
static void
respond (HttpConn * c, guint status, const gchar * ctype, GBytes * body,
    gboolean close)
{
  GString *h = g_string_new (NULL);
  gsize len = g_bytes_get_size (body);

  g_string_append_printf (h, "HTTP/1.1 %u %s\r\n", status,
      http_reason (status));
  append_date (h);
  g_string_append_printf (h, "Content-Type: %s\r\nContent-Length: %"
      G_GSIZE_FORMAT "\r\n", ctype, len);
  if (status == 401)
    g_string_append (h, "WWW-Authenticate: Basic realm=\"qmetric-probe\", "
        "charset=\"UTF-8\"\r\n");
  if (status == 405)
    g_string_append (h, "Allow: GET, HEAD\r\n");
  if (close)
    g_string_append (h, "Connection: close\r\n");
  g_string_append (h, c->srv->web->headers);
  g_string_append (h, "\r\n");
  c->head_len = h->len;
  c->head = g_string_free (h, FALSE);
  if (c->req.method == HTTP_METHOD_HEAD) {
    g_bytes_unref (body);
    body = g_bytes_new_static ("", 0);
  }
  c->body = body;
  c->off = 0;
  c->close_after = close;
  c->drain_after = close && status != 200;
  c->state = CONN_WRITE;
  c->deadline = g_get_monotonic_time () + c->srv->limits.header_timeout_us;
  conn_write (c);
}

static void
respond_error (HttpConn * c, guint status, gboolean close)
{
  gchar *text = g_strdup_printf ("%u %s\n", status, http_reason (status));

  respond (c, status, "text/plain; charset=utf-8",
      g_bytes_new_take (text, strlen (text)), close);
}

/* the request is allowed: its answer */
static void
route (HttpConn * c)
{
  HttpRequest *r = &c->req;

  if (r->method == HTTP_METHOD_OTHER)
    respond_error (c, 405, TRUE);      /* CONNECT and the like: no tunnel */
  else if (r->path_len == 8 && !memcmp (r->path, "/metrics", 8))
    respond (c, 200, c->srv->content_type, http_server_get_body (c->srv),
        !r->keep_alive);
  else if (r->path_len == 1 && r->path[0] == '/')
    respond (c, 200, "text/html; charset=utf-8",
        g_bytes_new_static (root_page, sizeof (root_page) - 1),
        !r->keep_alive);
  else
    respond_error (c, 404, !r->keep_alive);
}

static void
on_auth (gboolean ok, gpointer data)
{
  HttpConn *c = data;

  if (c->srv) {
    if (ok)
      route (c);
    else
      respond_error (c, 401, !c->req.keep_alive);
  }
  http_conn_unref (c);
}

/* a parsed head (status 200) or the status of a refused one */
static void
on_request (HttpConn * c, guint status)
{
  HttpServer *srv = c->srv;
  gint r;

  if (status != 200) {
    /* a refused head may have named HEAD: the error still has its body */
    c->req.method = HTTP_METHOD_GET;
    respond_error (c, status, TRUE);
    return;
  }
  if (!http_server_take_token (srv)) {
    respond_error (c, 429, !c->req.keep_alive);
    return;
  }
  if (!srv->auth) {
    route (c);
    return;
  }
  if (!c->req.authorization) {
    respond_error (c, 401, !c->req.keep_alive);
    return;
  }
  c->state = CONN_AUTH;
  r = auth_check (srv->auth, c->req.authorization, c->req.authorization_len,
      on_auth, http_conn_ref (c));
  if (r >= 0) {
    http_conn_unref (c);
    if (r)
      route (c);
    else
      respond_error (c, 401, !c->req.keep_alive);
  }
}

/* ---- reading and writing ---- */

static void
conn_read (HttpConn * c)
{
  HttpServer *srv = c->srv;

  for (;;) {
    GError *err = NULL;
    gssize n;
    guint status;

    if (c->state == CONN_READ && c->len &&
        (status = http_parse_head (c->buf, c->len, &c->req))) {
      on_request (c, status);
      return;
    }
    /* while draining, the buffer is only a sink */
    n = g_pollable_input_stream_read_nonblocking (c->in,
        c->buf + (c->state == CONN_DRAIN ? 0 : c->len),
        sizeof (c->buf) - (c->state == CONN_DRAIN ? 0 : c->len), NULL, &err);
    if (n < 0 && g_error_matches (err, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)) {
      g_error_free (err);
      conn_wait (c, G_IO_IN);
      return;
    }
    g_clear_error (&err);
    if (n <= 0) {
      http_conn_close (c);
      return;
    }
    if (c->state == CONN_DRAIN) {
      if ((c->drained += n) > HTTP_DRAIN_BYTES) {
        http_conn_close (c);
        return;
      }
      continue;
    }
    /* an idle connection starts a head: the head's time limit applies */
    if (!c->len)
      c->deadline = g_get_monotonic_time () + srv->limits.header_timeout_us;
    c->len += n;
  }
}

static void
conn_write (HttpConn * c)
{
  HttpServer *srv = c->srv;

  for (;;) {
    GOutputVector v[2];
    gsize body_len, written = 0, nv = 0;
    const guint8 *body = g_bytes_get_data (c->body, &body_len);
    GPollableReturn r;
    GError *err = NULL;

    if (c->off < c->head_len) {
      v[nv].buffer = c->head + c->off;
      v[nv++].size = c->head_len - c->off;
    }
    if (c->off < c->head_len + body_len) {
      gsize from = c->off > c->head_len ? c->off - c->head_len : 0;
      v[nv].buffer = body + from;
      v[nv++].size = body_len - from;
    }
    if (!nv)
      break;
    r = g_pollable_output_stream_writev_nonblocking (c->out, v, nv, &written,
        NULL, &err);
    if (r == G_POLLABLE_RETURN_WOULD_BLOCK) {
      conn_wait (c, G_IO_OUT);
      return;
    }
    if (r != G_POLLABLE_RETURN_OK) {
      g_clear_error (&err);
      http_conn_close (c);
      return;
    }
    c->off += written;
  }
  g_clear_pointer (&c->head, g_free);
  g_clear_pointer (&c->body, g_bytes_unref);
  if (c->close_after) {
    if (!c->drain_after) {
      http_conn_close (c);
      return;
    }
    /* the answer is out: no more from us, the rest of theirs dropped */
    g_socket_shutdown (c->socket, FALSE, TRUE, NULL);
    c->state = CONN_DRAIN;
    c->deadline = g_get_monotonic_time () + HTTP_DRAIN_US;
    http_server_renew (srv, c);
    conn_read (c);
    return;
  }
  /* keep-alive: the bytes after this head are the next request's */
  memmove (c->buf, c->buf + c->req.head_len, c->len - c->req.head_len);
  c->len -= c->req.head_len;
  memset (&c->req, 0, sizeof (c->req));
  c->state = CONN_READ;
  c->deadline = g_get_monotonic_time () + (c->len ?
      srv->limits.header_timeout_us : srv->limits.idle_timeout_us);
  http_server_renew (srv, c);
  conn_read (c);
}

/* ---- TLS ---- */

static gboolean
accept_any_certificate (GTlsConnection * conn, GTlsCertificate * cert,
    GTlsCertificateFlags errors, gpointer data)
{
  return TRUE;
}

static void
on_handshake (GObject * source, GAsyncResult * res, gpointer data)
{
  HttpConn *c = data;
  GTlsConnection *tls = G_TLS_CONNECTION (source);
  gboolean ok = g_tls_connection_handshake_finish (tls, res, NULL);

  if (c->srv) {
    GTlsProtocolVersion v = g_tls_connection_get_protocol_version (tls);
    c->srv->handshakes--;
    c->state = CONN_READ;
    /* min_version and max_version: GLib offers no way to set them, so a
     * handshake that chose another version is dropped */
    if (!ok || v < c->srv->web->min_version || v > c->srv->web->max_version)
      http_conn_close (c);
    else
      conn_read (c);
  }
  http_conn_unref (c);
}

static void
start_handshake (HttpConn * c)
{
  HttpServer *srv = c->srv;
  const WebConfig *web = srv->web;
  GSocketConnection *plain =
      g_socket_connection_factory_create_connection (c->socket);
  GIOStream *tls;
  GError *err = NULL;

  tls = g_tls_server_connection_new (G_IO_STREAM (plain), web->cert, &err);
  g_object_unref (plain);
  if (!tls) {
    g_printerr ("qmetric-probe: TLS: %s\n", err->message);
    g_error_free (err);
    http_conn_close (c);
    return;
  }
  conn_set_stream (c, tls);
  if (web->client_auth != WEB_CLIENT_NO_CERT)
    g_object_set (tls, "authentication-mode",
        web->client_auth == WEB_CLIENT_REQUIRE_ANY ||
        web->client_auth == WEB_CLIENT_REQUIRE_VERIFY ?
        G_TLS_AUTHENTICATION_REQUIRED : G_TLS_AUTHENTICATION_REQUESTED, NULL);
  if (web->client_ca)
    g_tls_connection_set_database (G_TLS_CONNECTION (tls), web->client_ca);
  /* a certificate that fails verification is refused unless the policy
   * does not verify */
  if (web->client_auth == WEB_CLIENT_REQUEST ||
      web->client_auth == WEB_CLIENT_REQUIRE_ANY)
    g_signal_connect (tls, "accept-certificate",
        G_CALLBACK (accept_any_certificate), NULL);
  http_server_handshake_slot (srv, c);
  c->state = CONN_TLS_HANDSHAKE;
  c->cancel = g_cancellable_new ();
  g_tls_connection_handshake_async (G_TLS_CONNECTION (tls),
      G_PRIORITY_DEFAULT, c->cancel, on_handshake, http_conn_ref (c));
}

/* Peek at the first TLS record: the handshake (on a thread of GLib's
 * pool) starts only once the whole ClientHello is here, so connections
 * that send nothing, or a few bytes, take no thread. */
static void
tls_peek (HttpConn * c)
{
  static const gchar plain_http[] = "HTTP/1.1 400 Bad Request\r\n"
      "Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
      "Content-Length: 48\r\n\r\n"
      "Client sent an HTTP request to an HTTPS server.\n";
  guint8 hdr[HTTP_MAX_HEAD];
  gssize n = recv (g_socket_get_fd (c->socket), hdr, sizeof (hdr),
      MSG_PEEK);
  gsize need;

  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
    return;
  if (n <= 0) {
    http_conn_close (c);
    return;
  }
  if (hdr[0] != 0x16) {
    /* not a handshake record; an HTTP request is told why */
    if (g_ascii_isupper (hdr[0]))
      (void) send (g_socket_get_fd (c->socket), plain_http,
          sizeof (plain_http) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    http_conn_close (c);
    return;
  }
  if (n < 5)
    return;
  need = MIN (5 + ((gsize) hdr[3] << 8 | hdr[4]), sizeof (hdr));
  if ((gsize) n >= need)
    start_handshake (c);
}

static gboolean
on_tls_readable (GSocket * socket, GIOCondition cond, gpointer data)
{
  HttpConn *c = data;

  /* level-triggered: a partial record would wake us at once again, so
   * the rest is peeked at by the server's tick */
  g_source_unref (c->io);
  c->io = NULL;
  tls_peek (c);
  return G_SOURCE_REMOVE;
}

void
http_conn_tick (HttpConn * c, gint64 now)
{
  if (now >= c->deadline)
    http_conn_close (c);
  else if (c->state == CONN_TLS_WAIT && !c->io)
    tls_peek (c);
}

void
http_conn_new (HttpServer * srv, gint fd)
{
  GSocket *socket = g_socket_new_from_fd (fd, NULL);
  HttpConn *c;

  if (!socket) {
    close (fd);
    return;
  }
  g_socket_set_blocking (socket, FALSE);
  c = g_new0 (HttpConn, 1);
  c->ref = 1;
  c->srv = srv;
  c->socket = socket;
  c->since = g_get_monotonic_time ();
  c->deadline = c->since + srv->limits.header_timeout_us;
  g_queue_push_tail (&srv->conns, c);
  c->link = srv->conns.tail;
  srv->peak = MAX (srv->peak, srv->conns.length);
  if (srv->web->cert) {
    c->state = CONN_TLS_WAIT;
    c->io = g_socket_create_source (socket, G_IO_IN, NULL);
    g_source_set_callback (c->io, (GSourceFunc) (GCallback) on_tls_readable,
        c, NULL);
    g_source_attach (c->io, NULL);
    return;
  }
  conn_set_stream (c, G_IO_STREAM
      (g_socket_connection_factory_create_connection (socket)));
  c->state = CONN_READ;
  conn_read (c);
}
