/* qmetric-probe's request parser, web configuration and basic
 * authentication, without a network (tools/probe/httpparse.c,
 * webconfig.c, auth.c, duration.c). */
#include <crypt.h>
#include <glib/gstdio.h>
#include <string.h>

#include "auth.h"
#include "duration.h"
#include "httpparse.h"
#include "unit.h"
#include "webconfig.h"

/* ---- the request parser ---- */

static guint
parse (const gchar * s, HttpRequest * r)
{
  return http_parse_head (s, strlen (s), r);
}

static void
test_parser (void)
{
  static const struct
  {
    const gchar *head;
    guint status;
  } cases[] = {
    {"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n", 200},
    {"GET /metrics HTTP/1.1\nHost: a\n\n", 200},        /* bare LF */
    {"\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", 200}, /* leading CRLFs */
    {"GET /metrics HTTP/1.0\r\n\r\n", 200},     /* 1.0: Host optional */
    {"HEAD /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", 200},
    {"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 00\r\n"
          "Content-Length: 0\r\n\r\n", 200},
    {"BREW /pot HTTP/1.1\r\nHost: a\r\n\r\n", 200},     /* a method: 405 later */
    {"CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", 200},
    {"GET /metrics HTTP/1.1\r\nHost: a\r\n", 0},        /* incomplete */
    {"GET /metr", 0},
    {"", 0},
    {"GET /metrics HTTP/1.1\r\n\r\n", 400},     /* no Host */
    {"GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
    {"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400},
    {"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n", 400},
    {"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", 400},
    {"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n"
          "Content-Length: 5\r\n\r\n", 400},
    {"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n"
          "Transfer-Encoding: chunked\r\n\r\n", 400},
    {"GET /metrics HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
    {"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\n", 413},
    {"GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: "
          "99999999999999999999999999\r\n\r\n", 413},
    {"POST /metrics HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
        413},
    {"GET /metrics HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400},
    {"GET /metrics HTTP/1.1\r\nHost : a\r\n\r\n", 400},
    {"GET /metrics HTTP/1.1\r\n: a\r\n\r\n", 400},
    {"GET /metrics HTTP/1.1\r\nHost: a\x01\r\n\r\n", 400},
    {"GET /metrics HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400},
    {"GET  /metrics HTTP/1.1\r\nHost: a\r\n\r\n", 400},
    {"GET /metrics  HTTP/1.1\r\nHost: a\r\n\r\n", 400},
    {"GET /metrics HTTP/1.1 \r\nHost: a\r\n\r\n", 400},
    {"GET /met rics HTTP/1.1\r\nHost: a\r\n\r\n", 400},
    {"GET /metrics#x HTTP/1.1\r\nHost: a\r\n\r\n", 400},
    {"GET metrics HTTP/1.1\r\nHost: a\r\n\r\n", 400},   /* GET, no path */
    {"GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400},
    {"GET http:// HTTP/1.1\r\nHost: a\r\n\r\n", 400},
    {"G(T /metrics HTTP/1.1\r\nHost: a\r\n\r\n", 400},
    {"GET /metrics HTTP/1\r\nHost: a\r\n\r\n", 400},
    {"GET /metrics http/1.1\r\nHost: a\r\n\r\n", 400},
    {"GET /metrics\r\n\r\n", 400},      /* HTTP/0.9 */
    {"GET /metrics HTTP/2.0\r\n\r\n", 505},
    {"GET /metrics HTTP/0.9\r\n\r\n", 505},
  };
  HttpRequest r;
  GString *big;
  guint i, st;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    st = parse (cases[i].head, &r);
    CHECK (st == cases[i].status, "case %u %s: %u, want %u", i,
        cases[i].head, st, cases[i].status);
  }

  /* what a parsed head says */
  st = parse ("GET /metrics?a=b HTTP/1.1\r\nhost: a\r\n"
      "authorization:  Basic dTpw  \r\n\r\nGET /", &r);
  CHECK (st == 200 && r.method == HTTP_METHOD_GET && r.path_len == 8 &&
      !memcmp (r.path, "/metrics", 8) && r.keep_alive &&
      r.authorization_len == 10 && !memcmp (r.authorization, "Basic dTpw",
          10) && r.head_len == strlen ("GET /metrics?a=b HTTP/1.1\r\nhost: "
          "a\r\nauthorization:  Basic dTpw  \r\n\r\n"), "parsed head");
  st = parse ("HEAD http://a:1/metrics HTTP/1.1\r\nHost: a\r\n"
      "Connection: foo, close\r\n\r\n", &r);
  CHECK (st == 200 && r.method == HTTP_METHOD_HEAD && r.path_len == 8 &&
      !memcmp (r.path, "/metrics", 8) && !r.keep_alive, "absolute form");
  st = parse ("GET https://a HTTP/1.1\r\nHost: a\r\n\r\n", &r);
  CHECK (st == 200 && r.path_len == 1 && r.path[0] == '/', "no path: /");
  st = parse ("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &r);
  CHECK (st == 200 && r.keep_alive, "1.0 keep-alive");
  st = parse ("GET / HTTP/1.0\r\n\r\n", &r);
  CHECK (st == 200 && !r.keep_alive, "1.0 closes");
  st = parse ("CONNECT a:22 HTTP/1.1\r\nHost: a\r\n\r\n", &r);
  CHECK (st == 200 && r.method == HTTP_METHOD_OTHER && !r.path, "CONNECT");
  st = parse ("GET / HTTP/1.1\r\nHost: a\r\nAuthorization: x\r\n"
      "Authorization: y\r\n\r\n", &r);
  CHECK (st == 400, "two Authorization fields: %u", st);

  /* limits: the head's size and its number of fields */
  big = g_string_new ("GET / HTTP/1.1\r\nHost: a\r\nX: ");
  while (big->len < HTTP_MAX_HEAD)
    g_string_append_c (big, 'a');
  CHECK (http_parse_head (big->str, big->len, &r) == 431,
      "a full buffer without the head's end");
  CHECK (http_parse_head (big->str, 100, &r) == 0, "a partial head waits");
  g_string_append (big, "\r\n\r\n");
  CHECK (http_parse_head (big->str, big->len, &r) == 431, "an oversized head");
  g_string_assign (big, "GET / HTTP/1.1\r\nHost: a\r\n");
  for (i = 0; i < HTTP_MAX_FIELDS; i++)
    g_string_append (big, "X: y\r\n");
  g_string_append (big, "\r\n");
  CHECK (http_parse_head (big->str, big->len, &r) == 431, "too many fields");
  g_string_assign (big, "GET / HTTP/1.1\r\nHost: a\r\n\0\r\n\r\n");
  CHECK (http_parse_head (big->str, 30, &r) == 400, "a NUL byte");
  g_string_free (big, TRUE);
}

/* ---- durations ---- */

static void
test_durations (void)
{
  static const struct
  {
    const gchar *s;
    gint64 us;
  } cases[] = {
    {"0", 0}, {"1s", 1000000}, {"500ms", 500000}, {"2.5s", 2500000},
    {"1m30s", 90000000}, {"1min", 60000000}, {"1h", 3600000000},
    {"250us", 250}, {"1500ns", 2}, {".5s", 500000},
    {"", -1}, {"1", -1}, {"s", -1}, {"1x", -1}, {"-1s", -1}, {"1s ", -1},
    {"25h", -1}, {"1mi", -1},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    CHECK (parse_duration_us (cases[i].s) == cases[i].us, "\"%s\": %"
        G_GINT64_FORMAT ", want %" G_GINT64_FORMAT, cases[i].s,
        parse_duration_us (cases[i].s), cases[i].us);
}

/* ---- the web configuration ---- */

static gchar *tmpdir;

static WebConfig *
load (const gchar * yaml, GError ** err)
{
  gchar *path = g_build_filename (tmpdir, "web.yml", NULL);
  WebConfig *wc;

  g_file_set_contents (path, yaml, -1, NULL);
  wc = web_config_load (path, err);
  g_free (path);
  return wc;
}

#define HASH "$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze"

static void
test_web_config (void)
{
  static const struct
  {
    const gchar *yaml;
    const gchar *error;         /* NULL: accepted */
  } cases[] = {
    {"", NULL},
    {"basic_auth_users:\n  alice: " HASH "\n", NULL},
    {"tls_server_config:\n", NULL},
    {"http_server_config:\n  http2: false\n  headers:\n"
          "    X-Frame-Options: deny\n    X-Content-Type-Options: nosniff\n",
        NULL},
    {"rate_limit:\n  interval: 1s\n  burst: 5\n", NULL},
    {"tls_server_config:\n  min_version: TLS13\n", NULL},
    {"basic_auth_user:\n  a: b\n", "unknown key \"basic_auth_user\""},
    {"tls_server_config:\n  certfile: x\n", "line 2: tls_server_config: "
          "unknown key \"certfile\""},
    {"tls_server_config:\n  cert_file: x.pem\n  key_file: x.key\n"
          "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
        "line 4: tls_server_config: cipher_suites is not supported"},
    {"tls_server_config:\n  curve_preferences: [X25519]\n",
        "curve_preferences is not supported"},
    {"tls_server_config:\n  prefer_server_cipher_suites: true\n",
        "prefer_server_cipher_suites is not supported"},
    {"tls_server_config:\n  client_allowed_sans: [a]\n",
        "client_allowed_sans is not supported"},
    {"tls_server_config:\n  client_ca: x\n", "client_ca is not supported"},
    {"tls_server_config:\n  cert_file: x.pem\n", "key_file is missing"},
    {"tls_server_config:\n  key_file: x.key\n", "cert_file is missing"},
    {"tls_server_config:\n  cert_file: /nonexistent.pem\n"
          "  key_file: /nonexistent.key\n", "cannot be read"},
    {"tls_server_config:\n  min_version: TLS14\n", "min_version: \"TLS14\""},
    {"tls_server_config:\n  min_version: TLS13\n  max_version: TLS12\n"
          "  cert_file: a\n  key_file: b\n", "min_version is above"},
    {"tls_server_config:\n  client_auth_type: Sometimes\n",
        "client_auth_type: \"Sometimes\""},
    {"tls_server_config:\n  cert_file: a\n  key_file: b\n"
          "  client_auth_type: RequireAndVerifyClientCert\n",
        "needs client_ca_file"},
    {"tls_server_config:\n  cert_file: a\n  key_file: b\n"
          "  client_ca_file: c\n", "client_auth_type is NoClientCert"},
    {"http_server_config:\n  http2: true\n", "http2: true is not supported"},
    {"http_server_config:\n  http2: maybe\n", "expected true or false"},
    {"http_server_config:\n  headers:\n    Server: x\n",
        "headers: \"Server\" is not one of"},
    {"http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
        "\"allow\" is not deny or sameorigin"},
    {"http_server_config:\n  timeout: 1s\n", "unknown key \"timeout\""},
    {"basic_auth_users:\n  alice: secret\n", "alice: the password must be "
          "a bcrypt hash"},
    {"basic_auth_users:\n  alice: $2y$03$" "mDwo.lAisC94iLAyP81MCesa29IzH37"
          "oigHC/42V2pdJlUprsJPze\n", "must be a bcrypt hash"},
    {"basic_auth_users:\n  \"a:b\": " HASH "\n", "cannot hold ':'"},
    {"basic_auth_users:\n  - alice\n", "expected a mapping"},
    {"rate_limit:\n  interval: soon\n  burst: 1\n", "not a duration"},
    {"rate_limit:\n  interval: 1s\n", "burst must be at least 1"},
    {"rate_limit:\n  interval: 1s\n  burst: -1\n", "not a count"},
    {"rate_limit:\n  every: 1s\n", "rate_limit: unknown key \"every\""},
    {"- a\n- b\n", "expected a mapping"},
    {"a: [\n", "line"},
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++) {
    GError *err = NULL;
    WebConfig *wc = load (cases[i].yaml, &err);

    if (!cases[i].error)
      CHECK (wc && !err, "case %u: refused: %s", i, err ? err->message : "");
    else
      CHECK (!wc && err && strstr (err->message, cases[i].error),
          "case %u: %s, want \"%s\"", i, err ? err->message : "accepted",
          cases[i].error);
    if (err && cases[i].error)
      CHECK (strstr (err->message, "web.yml: line ") != NULL,
          "case %u: no file and line: %s", i, err->message);
    g_clear_error (&err);
    web_config_free (wc);
  }
  {
    GError *err = NULL;
    WebConfig *wc = load ("http_server_config:\n  headers:\n"
        "    Strict-Transport-Security: max-age=31536000\n"
        "    X-XSS-Protection: \"\"\n"
        "basic_auth_users:\n  alice: " HASH "\n"
        "rate_limit:\n  interval: 500ms\n  burst: 3\n", &err);
    CHECK (wc && !strcmp (wc->headers,
            "Strict-Transport-Security: max-age=31536000\r\n") &&
        !wc->cert && g_hash_table_size (wc->users) == 1 &&
        wc->rate_interval_us == 500000 && wc->rate_burst == 3 &&
        wc->min_version == G_TLS_PROTOCOL_VERSION_TLS_1_2,
        "values: %s", err ? err->message : "");
    g_clear_error (&err);
    web_config_free (wc);
  }
}

/* ---- basic authentication ---- */

typedef struct
{
  gint answers;
  gboolean ok;
} Answer;

static void
on_done (gboolean ok, gpointer data)
{
  Answer *a = data;

  a->answers++;
  a->ok = ok;
}

/* the answer to one Authorization value: 1, 0, or the worker's (2 = ok,
 * 3 = refused) */
static gint
check (Auth * auth, const gchar * user, const gchar * password)
{
  gchar *pair = g_strdup_printf ("%s:%s", user, password);
  gchar *b64 = g_base64_encode ((const guchar *) pair, strlen (pair));
  gchar *value = g_strdup_printf ("Basic %s", b64);
  Answer a = { 0, FALSE };
  gint64 end = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  gint r = auth_check (auth, value, strlen (value), on_done, &a);

  if (r < 0) {
    while (!a.answers && g_get_monotonic_time () < end)
      g_main_context_iteration (NULL, TRUE);
    r = a.answers == 1 ? (a.ok ? 2 : 3) : -1;
  }
  g_free (pair);
  g_free (b64);
  g_free (value);
  return r;
}

static void
test_auth (void)
{
  GHashTable *users = g_hash_table_new (g_str_hash, g_str_equal);
  gchar salt[CRYPT_GENSALT_OUTPUT_SIZE];
  struct crypt_data cd;
  Auth *auth;
  gchar *hash;
  guint8 x[4] = { 1, 2, 3, 4 }, y[4] = { 1, 2, 3, 5 };

  memset (&cd, 0, sizeof (cd));
  crypt_gensalt_rn ("$2b$", 4, NULL, 0, salt, sizeof (salt));
  hash = g_strdup (crypt_rn ("s3cret", salt, &cd, sizeof (cd)));
  g_hash_table_insert (users, "alice", hash);
  auth = auth_new (users);

  CHECK (check (auth, "alice", "wrong") == 3, "a wrong password");
  CHECK (check (auth, "bob", "s3cret") == 3, "an unknown user");
  CHECK (check (auth, "alice", "s3cret") == 2, "the first check: bcrypt");
  CHECK (check (auth, "alice", "s3cret") == 1, "then remembered");
  CHECK (check (auth, "alice", "s3cre") == 3, "a prefix of the password");
  CHECK (check (auth, "alice", "s3cret") == 1, "still remembered");
  CHECK (auth_check (auth, "Bearer abc", 10, on_done, NULL) == 0, "Bearer");
  CHECK (auth_check (auth, "Basic !!!!", 10, on_done, NULL) == 0,
      "not base 64");
  CHECK (auth_check (auth, "Basic YWxpY2U=", 14, on_done, NULL) == 0,
      "no colon");
  CHECK (auth_check (auth, "Basic ", 6, on_done, NULL) == 0, "empty");
  CHECK (auth_equal (x, x, 4) && !auth_equal (x, y, 4), "auth_equal");
  auth_free (auth);
  g_hash_table_unref (users);
  g_free (hash);
}

int
main (void)
{
  tmpdir = g_dir_make_tmp ("qmetric-probe-http-XXXXXX", NULL);
  test_parser ();
  test_durations ();
  test_web_config ();
  test_auth ();
  {
    gchar *path = g_build_filename (tmpdir, "web.yml", NULL);
    g_remove (path);
    g_rmdir (tmpdir);
    g_free (path);
  }
  if (failures) {
    printf ("%d check(s) failed\n", failures);
    return 1;
  }
  printf ("PASS\n");
  return 0;
}
