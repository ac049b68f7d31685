/* qmetric-probe: HTTP/1.x request heads (see httpparse.h).  The grammar is
 * RFC 9110/9112's, kept to what a metrics endpoint needs: any valid method
 * token (the server answers 405 to all but GET and HEAD), origin, absolute,
 * authority and asterisk targets, and the fields that decide framing,
 * authentication and persistence.  Whatever could frame a body is refused:
 * the server never reads one. */
#include "httpparse.h"

#include <string.h>

static gboolean
is_tchar (guchar c)
{
  return g_ascii_isalnum (c) || (c && strchr ("!#$%&'*+-.^_`|~", c));
}

/* a field value's characters: VCHAR, SP, HTAB, obs-text */
static gboolean
is_field_char (guchar c)
{
  return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static gboolean
name_is (const gchar * name, gsize len, const gchar * want)
{
  return len == strlen (want) && !g_ascii_strncasecmp (name, want, len);
}

/* Connection: a comma-separated list of tokens */
static void
connection_tokens (const gchar * v, gsize len, gboolean * close,
    gboolean * keep_alive)
{
  gsize i = 0;

  while (i < len) {
    gsize s, e;
    while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
      i++;
    s = i;
    while (i < len && v[i] != ',')
      i++;
    e = i;
    while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
      e--;
    if (name_is (v + s, e - s, "close"))
      *close = TRUE;
    else if (name_is (v + s, e - s, "keep-alive"))
      *keep_alive = TRUE;
  }
}

/* The target: sets req->path (NULL for authority and asterisk forms).
 * Returns FALSE when it is malformed. */
static gboolean
parse_target (const gchar * t, gsize len, HttpRequest * req)
{
  gsize i, skip = 0;

  for (i = 0; i < len; i++)
    if ((guchar) t[i] <= 0x20 || (guchar) t[i] >= 0x7f || t[i] == '#')
      return FALSE;
  if (len > 7 && !g_ascii_strncasecmp (t, "http://", 7))
    skip = 7;
  else if (len > 8 && !g_ascii_strncasecmp (t, "https://", 8))
    skip = 8;
  if (skip) {
    /* absolute form: the path follows the authority ("/" when none) */
    for (i = skip; i < len && t[i] != '/' && t[i] != '?'; i++);
    if (i == skip)
      return FALSE;
    if (i == len || t[i] == '?') {
      req->path = "/";
      req->path_len = 1;
      return TRUE;
    }
    t += i;
    len -= i;
  } else if (t[0] != '/') {
    /* asterisk (OPTIONS *) or authority (CONNECT host:port) form */
    req->path = NULL;
    return TRUE;
  }
  for (i = 0; i < len && t[i] != '?'; i++);
  req->path = t;
  req->path_len = i;
  return TRUE;
}

/* The request line [s, e) (line end excluded).  Returns 0 or a status. */
static guint
request_line (const gchar * s, const gchar * e, HttpRequest * req,
    gint * minor)
{
  const gchar *p = s, *t;

  while (p < e && is_tchar (*p))
    p++;
  if (p == s || p == e || *p != ' ')
    return 400;
  if (p - s == 3 && !memcmp (s, "GET", 3))
    req->method = HTTP_METHOD_GET;
  else if (p - s == 4 && !memcmp (s, "HEAD", 4))
    req->method = HTTP_METHOD_HEAD;
  else
    req->method = HTTP_METHOD_OTHER;
  t = ++p;
  while (p < e && *p != ' ')
    p++;
  if (p == t || p == e || !parse_target (t, p - t, req))
    return 400;
  p++;
  if (e - p != 8 || memcmp (p, "HTTP/", 5) || !g_ascii_isdigit (p[5]) ||
      p[6] != '.' || !g_ascii_isdigit (p[7]))
    return 400;
  if (p[5] != '1')
    return 505;
  *minor = p[7] - '0';
  if (!req->path && req->method != HTTP_METHOD_OTHER)
    return 400;
  return 0;
}

guint
http_parse_head (const gchar * buf, gsize len, HttpRequest * req)
{
  gsize start = 0, end = 0, i, n_fields = 0, n_host = 0;
  gboolean te = FALSE, close = FALSE, keep_alive = FALSE;
  gint cl = -1;                 /* -1 none, 0 zero, 1 positive */
  gint minor = 0;
  const gchar *line, *eol;
  guint status;

  memset (req, 0, sizeof (*req));
  while (start < len && (buf[start] == '\r' || buf[start] == '\n'))
    start++;
  /* the head ends at its first empty line */
  for (i = start; i < len && !end; i++) {
    if (!buf[i])
      return 400;
    if (buf[i] != '\n')
      continue;
    if (i + 1 < len && buf[i + 1] == '\n')
      end = i + 2;
    else if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
      end = i + 3;
  }
  if (!end)
    return len >= HTTP_MAX_HEAD ? 431 : 0;
  if (end > HTTP_MAX_HEAD)
    return 431;

  for (line = buf + start; line < buf + end; line = eol + 1) {
    const gchar *le, *colon, *v, *ve;

    eol = memchr (line, '\n', buf + end - line);
    le = eol > line && eol[-1] == '\r' ? eol - 1 : eol;
    if (memchr (line, '\r', le - line))
      return 400;               /* a CR inside a line */
    if (line == buf + start) {
      if ((status = request_line (line, le, req, &minor)))
        return status;
      continue;
    }
    if (le == line)
      break;                    /* the empty line */
    if (line[0] == ' ' || line[0] == '\t')
      return 400;               /* obsolete line folding */
    if (++n_fields > HTTP_MAX_FIELDS)
      return 431;
    for (colon = line; colon < le && is_tchar (*colon); colon++);
    if (colon == line || colon == le || *colon != ':')
      return 400;
    for (v = colon + 1; v < le && (*v == ' ' || *v == '\t'); v++);
    for (ve = le; ve > v && (ve[-1] == ' ' || ve[-1] == '\t'); ve--);
    for (i = 0; v + i < ve; i++)
      if (!is_field_char (v[i]))
        return 400;
    if (name_is (line, colon - line, "content-length")) {
      gint val = 0;
      if (v == ve)
        return 400;
      for (i = 0; v + i < ve; i++) {
        if (!g_ascii_isdigit (v[i]))
          return 400;
        if (v[i] != '0')
          val = 1;
      }
      /* repeated: the same value only (RFC 9112, 6.3) */
      if (cl >= 0 && cl != val)
        return 400;
      cl = val;
    } else if (name_is (line, colon - line, "transfer-encoding")) {
      te = TRUE;
    } else if (name_is (line, colon - line, "host")) {
      n_host++;
    } else if (name_is (line, colon - line, "authorization")) {
      if (req->authorization)
        return 400;
      req->authorization = v;
      req->authorization_len = ve - v;
    } else if (name_is (line, colon - line, "connection")) {
      connection_tokens (v, ve - v, &close, &keep_alive);
    }
  }
  if (te && cl >= 0)
    return 400;                 /* ambiguous framing (request smuggling) */
  if (minor >= 1 ? n_host != 1 : n_host > 1)
    return 400;
  if (te)
    return minor >= 1 ? 413 : 400;
  if (cl > 0)
    return 413;
  req->keep_alive = !close && (minor >= 1 || keep_alive);
  req->head_len = end;
  return 200;
}

const gchar *
http_reason (guint status)
{
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Content Too Large";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}
