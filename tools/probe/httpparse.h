/* qmetric-probe: the head of an HTTP/1.x request (RFC 9112), parsed in
 * place.  No I/O and no allocation: the server hands it the bytes read so
 * far; tests/probe_http_test.c drives it directly. */
#ifndef QM_PROBE_HTTPPARSE_H
#define QM_PROBE_HTTPPARSE_H

#include <glib.h>

/* a request head (request line and header fields) longer than this is
 * refused with 431; Prometheus sends about 300 bytes */
#define HTTP_MAX_HEAD 8192
/* and so is one with more header fields than this */
#define HTTP_MAX_FIELDS 64

typedef enum
{
  HTTP_METHOD_GET,
  HTTP_METHOD_HEAD,
  HTTP_METHOD_OTHER,            /* a valid token: answered 405 */
} HttpMethod;

typedef struct
{
  HttpMethod method;
  /* the path of the target (origin or absolute form) without the query;
   * NULL for an authority or asterisk form.  Points into the buffer. */
  const gchar *path;
  gsize path_len;
  /* the Authorization field's value, NULL when absent */
  const gchar *authorization;
  gsize authorization_len;
  gboolean keep_alive;          /* the connection may serve another request */
  gsize head_len;               /* bytes of the buffer the head took */
} HttpRequest;

/**
 * Parse the request head at the start of buf (len bytes read so far).
 * Returns 0 when the head is still incomplete (read more), 200 when it
 * parsed into *req, or the status of the answer to an unacceptable head,
 * after which the connection is closed: 400 malformed (bad request line,
 * field syntax, obsolete line folding, Content-Length that is not one
 * number, both Content-Length and Transfer-Encoding, HTTP/1.1 without
 * exactly one Host), 413 a request body announced (none is accepted), 431
 * a head over HTTP_MAX_HEAD bytes or HTTP_MAX_FIELDS fields, 505 an HTTP
 * major version other than 1.  Bare LF line ends are accepted, and empty
 * lines before the request line skipped (RFC 9112, 2.2).
 */
guint http_parse_head (const gchar * buf, gsize len, HttpRequest * req);

/** The reason phrase of a status this server sends. */
const gchar *http_reason (guint status);

#endif /* QM_PROBE_HTTPPARSE_H */
