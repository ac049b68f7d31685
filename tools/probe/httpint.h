/* qmetric-probe: what http.c (the listener and its limits) and httpconn.c
 * (one connection) share.  Everything runs on the server's main context;
 * only the TLS handshake (glib-networking's thread) and the bcrypt check
 * (auth.c's worker) run elsewhere, and both answer on that context. */
#ifndef QM_PROBE_HTTPINT_H
#define QM_PROBE_HTTPINT_H

#include "auth.h"
#include "http.h"
#include "httpparse.h"

/* TLS handshakes in flight at once (glib-networking runs each on a thread
 * of GLib's shared pool): past it, a new one cancels the oldest */
#define HTTP_MAX_HANDSHAKES 8
/* after an error answer, what the client still sends is read and dropped
 * for at most this long and this much, so that it sees the answer instead
 * of a reset */
#define HTTP_DRAIN_US (G_USEC_PER_SEC)
#define HTTP_DRAIN_BYTES (1 << 20)

typedef enum
{
  CONN_TLS_WAIT,                /* until the whole ClientHello is there */
  CONN_TLS_HANDSHAKE,
  CONN_READ,                    /* a request head, or idle between two */
  CONN_AUTH,                    /* the password is being checked */
  CONN_WRITE,
  CONN_DRAIN,
} ConnState;

typedef struct _HttpConn HttpConn;

struct _HttpServer
{
  HttpLimits limits;
  const WebConfig *web;
  Auth *auth;                   /* NULL without basic_auth_users */
  const gchar *content_type;
  HttpBodyFunc body;
  gpointer body_data;
  gchar *url;

  GSocket *listener;
  GSource *accept_source;       /* NULL while accepting is paused */
  guint accept_retry;
  gint reserve_fd;              /* closed to shed a connection at EMFILE */

  GQueue conns;                 /* HttpConn *, by the start of their phase */
  guint handshakes;             /* connections in CONN_TLS_HANDSHAKE */
  guint peak;                   /* most connections since memory was trimmed */
  guint sweep;

  GBytes *cached;               /* the last body, shared by concurrent scrapes */
  gint64 cached_at;
  gdouble tokens;               /* rate limit bucket */
  gint64 tokens_at;
  gint64 logged_exhausted, logged_cap;
};

struct _HttpConn
{
  gint ref;
  HttpServer *srv;              /* NULL once closed */
  GList *link;                  /* in srv->conns */
  GSocket *socket;
  GIOStream *stream;
  GPollableInputStream *in;
  GPollableOutputStream *out;
  GSource *io;
  GCancellable *cancel;
  ConnState state;
  gint64 since;                 /* start of the phase (eviction order) */
  gint64 deadline;
  gsize drained;

  HttpRequest req;              /* points into buf while answered */
  gsize len;
  gchar buf[HTTP_MAX_HEAD];

  gchar *head;                  /* the response being written */
  gsize head_len, off;
  GBytes *body;
  gboolean close_after, drain_after;
};

/* httpconn.c */
void http_conn_new (HttpServer * srv, gint fd);
void http_conn_close (HttpConn * c);
HttpConn *http_conn_ref (HttpConn * c);
void http_conn_unref (HttpConn * c);
/* deadline passed: closed; a waiting TLS connection peeked again */
void http_conn_tick (HttpConn * c, gint64 now);

/* http.c, for the connections */
GBytes *http_server_get_body (HttpServer * srv);
gboolean http_server_take_token (HttpServer * srv);
/* c starts a new phase (it moves to the queue's end) */
void http_server_renew (HttpServer * srv, HttpConn * c);
/* a handshake may start (a slot is free, or the oldest was cancelled) */
void http_server_handshake_slot (HttpServer * srv, HttpConn * c);

#endif /* QM_PROBE_HTTPINT_H */
