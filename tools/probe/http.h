/* qmetric-probe: the HTTP/1.1 server of /metrics, on the main loop.
 *
 * Written for an endpoint that must keep answering: it accepts again as
 * soon as descriptors are free after EMFILE/ENFILE, holds at most
 * max_connections (a new one closes the oldest idle or unfinished one),
 * bounds the time to send a head and to take a response, never reads a
 * request body, and serves exactly GET/HEAD of /metrics and /.  TLS, basic
 * authentication, extra headers and a rate limit come from the web
 * configuration (webconfig.h). */
#ifndef QM_PROBE_HTTP_H
#define QM_PROBE_HTTP_H

#include <gio/gio.h>

#include "webconfig.h"

#define HTTP_DEFAULT_MAX_CONNECTIONS 64
#define HTTP_DEFAULT_HEADER_TIMEOUT_S 10
#define HTTP_DEFAULT_IDLE_TIMEOUT_S 60

typedef struct
{
  guint max_connections;
  /* a request head (after a TLS handshake, from the connection's start)
   * must arrive, and a response be taken, within header_timeout */
  gint64 header_timeout_us;
  /* a kept-alive connection waits this long for its next request */
  gint64 idle_timeout_us;
} HttpLimits;

/* the body of /metrics, rendered when a scrape asks for it */
typedef GBytes *(*HttpBodyFunc) (gpointer data);

typedef struct _HttpServer HttpServer;

/**
 * Listen on addr and serve on the thread-default main context.  web is
 * borrowed for the server's life.  content_type is that of body()'s bytes.
 */
HttpServer *http_server_new (GSocketAddress * addr, const HttpLimits * limits,
    const WebConfig * web, const gchar * content_type, HttpBodyFunc body,
    gpointer data, GError ** error);

/** "http://127.0.0.1:9464/metrics" (https with TLS), the bound port. */
const gchar *http_server_url (HttpServer * srv);

/** Close every connection and the listening socket. */
void http_server_free (HttpServer * srv);

#endif /* QM_PROBE_HTTP_H */
