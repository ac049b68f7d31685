/* qmetric-probe: the web configuration file (see webconfig.h).  The file
 * is one YAML document (libyaml); every key is checked against the list
 * below, so a typo or a setting this server cannot honour stops the
 * program instead of leaving the endpoint less protected than written. */
#include "webconfig.h"

#include <string.h>
#include <yaml.h>

#include "duration.h"

typedef struct
{
  const gchar *path;
  yaml_document_t *doc;
  GError **error;
} Ctx;

/* the error for node n: "FILE: line L: what" */
static gboolean
bad (Ctx * c, yaml_node_t * n, const gchar * fmt, ...) G_GNUC_PRINTF (3, 4);

static gboolean
bad (Ctx * c, yaml_node_t * n, const gchar * fmt, ...)
{
  va_list ap;
  gchar *msg;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error (c->error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
      "%s: line %lu: %s", c->path, (gulong) n->start_mark.line + 1, msg);
  g_free (msg);
  return FALSE;
}

static const gchar *
scalar (yaml_node_t * n)
{
  return n && n->type == YAML_SCALAR_NODE ? (const gchar *) n->data.scalar.value
      : NULL;
}

/* A scalar value or an error naming the key.  YAML's null (~, empty) is
 * taken as absent by the callers: NULL without an error. */
static gboolean
get_string (Ctx * c, const gchar * key, yaml_node_t * v, const gchar ** out)
{
  const gchar *s = scalar (v);

  if (!s)
    return bad (c, v, "%s: expected a single value", key);
  *out = v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
      (!*s || !strcmp (s, "~") || !strcmp (s, "null")) ? NULL : s;
  return TRUE;
}

static gboolean
get_bool (Ctx * c, const gchar * key, yaml_node_t * v, gboolean * out)
{
  const gchar *s = scalar (v);

  if (s && (!g_ascii_strcasecmp (s, "true") || !g_ascii_strcasecmp (s,
              "yes") || !g_ascii_strcasecmp (s, "on")))
    *out = TRUE;
  else if (s && (!g_ascii_strcasecmp (s, "false") ||
          !g_ascii_strcasecmp (s, "no") || !g_ascii_strcasecmp (s, "off")))
    *out = FALSE;
  else
    return bad (c, v, "%s: expected true or false", key);
  return TRUE;
}

/* Call each (key, value) of a mapping node; section names it in errors. */
typedef gboolean (*PairFunc) (Ctx * c, WebConfig * wc, const gchar * key,
    yaml_node_t * k, yaml_node_t * v, gpointer data);

static gboolean
each_pair (Ctx * c, WebConfig * wc, yaml_node_t * map, const gchar * section,
    PairFunc f, gpointer data)
{
  yaml_node_pair_t *p;

  if (map->type == YAML_SCALAR_NODE && !*map->data.scalar.value)
    return TRUE;                /* "section:" with nothing under it */
  if (map->type != YAML_MAPPING_NODE)
    return bad (c, map, "%s: expected a mapping of keys", section);
  for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
      p++) {
    yaml_node_t *k = yaml_document_get_node (c->doc, p->key);
    yaml_node_t *v = yaml_document_get_node (c->doc, p->value);
    const gchar *key = scalar (k);

    if (!key)
      return bad (c, k, "%s: a key must be a plain string", section);
    if (!f (c, wc, key, k, v, data))
      return FALSE;
  }
  return TRUE;
}

/* ---- tls_server_config ---- */

typedef struct
{
  const gchar *cert_file, *key_file, *cert, *key, *client_ca_file;
  const gchar *client_auth;
  yaml_node_t *node;
} Tls;

static gboolean
tls_version (Ctx * c, const gchar * key, yaml_node_t * v,
    GTlsProtocolVersion * out)
{
  static const gchar *const names[] = { "TLS10", "TLS11", "TLS12", "TLS13" };
  const gchar *s = NULL;
  guint i;

  if (!get_string (c, key, v, &s))
    return FALSE;
  for (i = 0; s && i < G_N_ELEMENTS (names); i++)
    if (!strcmp (s, names[i])) {
      *out = G_TLS_PROTOCOL_VERSION_TLS_1_0 + i;
      return TRUE;
    }
  return bad (c, v, "tls_server_config: %s: \"%s\" is not one of TLS10, "
      "TLS11, TLS12, TLS13", key, s ? s : "");
}

static gboolean
tls_pair (Ctx * c, WebConfig * wc, const gchar * key, yaml_node_t * k,
    yaml_node_t * v, gpointer data)
{
  Tls *t = data;
  static const gchar *const unsupported[] = {
    "cipher_suites", "curve_preferences", "prefer_server_cipher_suites",
    "client_allowed_sans", "client_ca",
  };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (unsupported); i++)
    if (!strcmp (key, unsupported[i]))
      return bad (c, k, "tls_server_config: %s is not supported by "
          "qmetric-probe (GLib's TLS takes the system's cipher and curve "
          "policy; give client CAs with client_ca_file)", key);
  if (!strcmp (key, "cert_file"))
    return get_string (c, key, v, &t->cert_file);
  if (!strcmp (key, "key_file"))
    return get_string (c, key, v, &t->key_file);
  if (!strcmp (key, "cert"))
    return get_string (c, key, v, &t->cert);
  if (!strcmp (key, "key"))
    return get_string (c, key, v, &t->key);
  if (!strcmp (key, "client_ca_file"))
    return get_string (c, key, v, &t->client_ca_file);
  if (!strcmp (key, "client_auth_type")) {
    t->node = v;
    return get_string (c, key, v, &t->client_auth);
  }
  if (!strcmp (key, "min_version"))
    return tls_version (c, key, v, &wc->min_version);
  if (!strcmp (key, "max_version"))
    return tls_version (c, key, v, &wc->max_version);
  return bad (c, k, "tls_server_config: unknown key \"%s\"", key);
}

static gboolean
tls_load (Ctx * c, WebConfig * wc, Tls * t, yaml_node_t * section)
{
  static const gchar *const policies[] = {
    "NoClientCert", "RequestClientCert", "RequireAnyClientCert",
    "VerifyClientCertIfGiven", "RequireAndVerifyClientCert",
  };
  GError *err = NULL;
  guint i;

  if (t->client_auth) {
    for (i = 0; i < G_N_ELEMENTS (policies); i++)
      if (!strcmp (t->client_auth, policies[i]))
        break;
    if (i == G_N_ELEMENTS (policies))
      return bad (c, t->node, "tls_server_config: client_auth_type: \"%s\" "
          "is not one of NoClientCert, RequestClientCert, "
          "RequireAnyClientCert, VerifyClientCertIfGiven, "
          "RequireAndVerifyClientCert", t->client_auth);
    wc->client_auth = i;
  }
  /* nothing given: plain HTTP, as exporter-toolkit does */
  if (!t->cert_file && !t->key_file && !t->cert && !t->key &&
      !t->client_ca_file && !t->client_auth)
    return TRUE;
  if (t->cert_file && t->cert)
    return bad (c, section, "tls_server_config: cert and cert_file are "
        "both given");
  if (t->key_file && t->key)
    return bad (c, section, "tls_server_config: key and key_file are both "
        "given");
  if (!t->cert_file && !t->cert)
    return bad (c, section, "tls_server_config: cert_file is missing");
  if (!t->key_file && !t->key)
    return bad (c, section, "tls_server_config: key_file is missing");
  if (t->client_ca_file && wc->client_auth == WEB_CLIENT_NO_CERT)
    return bad (c, section, "tls_server_config: client_ca_file is given "
        "but client_auth_type is NoClientCert");
  if (!t->client_ca_file && wc->client_auth >= WEB_CLIENT_VERIFY_IF_GIVEN)
    return bad (c, section, "tls_server_config: client_auth_type %s needs "
        "client_ca_file", policies[wc->client_auth]);
  if (wc->min_version > wc->max_version)
    return bad (c, section, "tls_server_config: min_version is above "
        "max_version");

  if (t->cert_file && t->key_file) {
    wc->cert = g_tls_certificate_new_from_files (t->cert_file, t->key_file,
        &err);
  } else {
    gchar *pem = NULL;
    gchar *cert = t->cert ? g_strdup (t->cert) : NULL;
    gchar *key = t->key ? g_strdup (t->key) : NULL;
    if ((cert || g_file_get_contents (t->cert_file, &cert, NULL, &err)) &&
        (key || g_file_get_contents (t->key_file, &key, NULL, &err))) {
      pem = g_strconcat (cert, "\n", key, NULL);
      wc->cert = g_tls_certificate_new_from_pem (pem, -1, &err);
    }
    if (key)
      memset (key, 0, strlen (key));
    if (pem)
      memset (pem, 0, strlen (pem));
    g_free (cert);
    g_free (key);
    g_free (pem);
  }
  if (!wc->cert) {
    bad (c, section, "tls_server_config: the certificate or key cannot be "
        "read: %s", err->message);
    g_error_free (err);
    return FALSE;
  }
  if (t->client_ca_file && !(wc->client_ca =
          g_tls_file_database_new (t->client_ca_file, &err))) {
    bad (c, section, "tls_server_config: client_ca_file: %s", err->message);
    g_error_free (err);
    return FALSE;
  }
  return TRUE;
}

/* ---- http_server_config ---- */

static gboolean
header_pair (Ctx * c, WebConfig * wc, const gchar * key, yaml_node_t * k,
    yaml_node_t * v, gpointer data)
{
  static const gchar *const allowed[] = {
    "Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options",
    "X-XSS-Protection", "Strict-Transport-Security",
  };
  GString *h = data;
  const gchar *s = NULL;
  guint i;

  for (i = 0; i < G_N_ELEMENTS (allowed); i++)
    if (!strcmp (key, allowed[i]))
      break;
  if (i == G_N_ELEMENTS (allowed))
    return bad (c, k, "http_server_config: headers: \"%s\" is not one of "
        "Content-Security-Policy, X-Frame-Options, X-Content-Type-Options, "
        "X-XSS-Protection, Strict-Transport-Security", key);
  if (!get_string (c, key, v, &s))
    return FALSE;
  if (!s || !*s)
    return TRUE;                /* blank: unset */
  if (strpbrk (s, "\r\n"))
    return bad (c, v, "http_server_config: headers: %s: a value cannot "
        "hold a line break", key);
  if (!strcmp (key, "X-Frame-Options") && g_ascii_strcasecmp (s, "deny") &&
      g_ascii_strcasecmp (s, "sameorigin"))
    return bad (c, v, "http_server_config: headers: X-Frame-Options: "
        "\"%s\" is not deny or sameorigin", s);
  if (!strcmp (key, "X-Content-Type-Options") && g_ascii_strcasecmp (s,
          "nosniff"))
    return bad (c, v, "http_server_config: headers: X-Content-Type-Options: "
        "\"%s\" is not nosniff", s);
  g_string_append_printf (h, "%s: %s\r\n", key, s);
  return TRUE;
}

static gboolean
http_pair (Ctx * c, WebConfig * wc, const gchar * key, yaml_node_t * k,
    yaml_node_t * v, gpointer data)
{
  if (!strcmp (key, "http2")) {
    gboolean on = FALSE;
    if (!get_bool (c, key, v, &on))
      return FALSE;
    if (on)
      return bad (c, v, "http_server_config: http2: true is not supported "
          "by qmetric-probe (HTTP/1.1 only): set false or remove the key");
    return TRUE;
  }
  if (!strcmp (key, "headers"))
    return each_pair (c, wc, v, "http_server_config: headers", header_pair,
        data);
  return bad (c, k, "http_server_config: unknown key \"%s\"", key);
}

/* ---- basic_auth_users, rate_limit ---- */

/* "$2a$", "$2b$" or "$2y$", a cost of 04 to 31, 53 characters of bcrypt's
 * base-64 alphabet (salt and hash) */
static gboolean
is_bcrypt (const gchar * h)
{
  guint i, cost;

  if (strlen (h) != 60 || h[0] != '$' || h[1] != '2' || !strchr ("aby",
          h[2]) || h[3] != '$' || !g_ascii_isdigit (h[4]) ||
      !g_ascii_isdigit (h[5]) || h[6] != '$')
    return FALSE;
  cost = (h[4] - '0') * 10 + (h[5] - '0');
  if (cost < 4 || cost > 31)
    return FALSE;
  for (i = 7; i < 60; i++)
    if (!g_ascii_isalnum (h[i]) && h[i] != '.' && h[i] != '/')
      return FALSE;
  return TRUE;
}

static gboolean
user_pair (Ctx * c, WebConfig * wc, const gchar * key, yaml_node_t * k,
    yaml_node_t * v, gpointer data)
{
  const gchar *hash = NULL;

  if (!get_string (c, key, v, &hash))
    return FALSE;
  if (!hash || !is_bcrypt (hash))
    return bad (c, v, "basic_auth_users: %s: the password must be a bcrypt "
        "hash ($2y$10$ followed by 53 characters; htpasswd -nBC 10 \"\")",
        key);
  if (strchr (key, ':'))
    return bad (c, k, "basic_auth_users: \"%s\": a user name cannot hold "
        "':' (basic authentication splits there)", key);
  if (g_hash_table_contains (wc->users, key))
    return bad (c, k, "basic_auth_users: \"%s\" is given twice", key);
  g_hash_table_insert (wc->users, g_strdup (key), g_strdup (hash));
  return TRUE;
}

static gboolean
rate_pair (Ctx * c, WebConfig * wc, const gchar * key, yaml_node_t * k,
    yaml_node_t * v, gpointer data)
{
  const gchar *s = NULL;

  if (!get_string (c, key, v, &s))
    return FALSE;
  if (!strcmp (key, "interval")) {
    if (!s || (wc->rate_interval_us = parse_duration_us (s)) < 0)
      return bad (c, v, "rate_limit: interval: \"%s\" is not a duration "
          "(1s, 500ms, 0)", s ? s : "");
    return TRUE;
  }
  if (!strcmp (key, "burst")) {
    guint64 b;
    if (!s || !g_ascii_string_to_unsigned (s, 10, 0, G_MAXUINT, &b, NULL))
      return bad (c, v, "rate_limit: burst: \"%s\" is not a count",
          s ? s : "");
    wc->rate_burst = b;
    return TRUE;
  }
  return bad (c, k, "rate_limit: unknown key \"%s\"", key);
}

static gboolean
top_pair (Ctx * c, WebConfig * wc, const gchar * key, yaml_node_t * k,
    yaml_node_t * v, gpointer data)
{
  Tls *t = data;

  if (!strcmp (key, "tls_server_config")) {
    t->node = NULL;
    if (!each_pair (c, wc, v, key, tls_pair, t))
      return FALSE;
    return tls_load (c, wc, t, v);
  }
  if (!strcmp (key, "http_server_config")) {
    GString *h = g_string_new (NULL);
    gboolean ok = each_pair (c, wc, v, key, http_pair, h);
    g_free (wc->headers);
    wc->headers = g_string_free (h, FALSE);
    return ok;
  }
  if (!strcmp (key, "basic_auth_users"))
    return each_pair (c, wc, v, key, user_pair, NULL);
  if (!strcmp (key, "rate_limit")) {
    if (!each_pair (c, wc, v, key, rate_pair, NULL))
      return FALSE;
    if (wc->rate_interval_us > 0 && !wc->rate_burst)
      return bad (c, v, "rate_limit: burst must be at least 1 when "
          "interval is set");
    return TRUE;
  }
  return bad (c, k, "unknown key \"%s\" (expected tls_server_config, "
      "http_server_config, basic_auth_users, rate_limit)", key);
}

static WebConfig *
web_config_new (void)
{
  WebConfig *wc = g_new0 (WebConfig, 1);

  wc->min_version = G_TLS_PROTOCOL_VERSION_TLS_1_2;
  wc->max_version = G_TLS_PROTOCOL_VERSION_TLS_1_3;
  wc->headers = g_strdup ("");
  wc->users = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
  return wc;
}

WebConfig *
web_config_load (const gchar * path, GError ** error)
{
  WebConfig *wc = web_config_new ();
  yaml_parser_t parser;
  yaml_document_t doc;
  yaml_node_t *root;
  gchar *text = NULL;
  gsize len;
  Tls tls = { 0 };
  Ctx c = { path, &doc, error };
  gboolean ok;

  if (!path)
    return wc;
  if (!g_file_get_contents (path, &text, &len, error)) {
    web_config_free (wc);
    return NULL;
  }
  yaml_parser_initialize (&parser);
  yaml_parser_set_input_string (&parser, (const guchar *) text, len);
  if (!yaml_parser_load (&parser, &doc)) {
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
        "%s: line %lu: %s", path, (gulong) parser.problem_mark.line + 1,
        parser.problem ? parser.problem : "not YAML");
    yaml_parser_delete (&parser);
    g_free (text);
    web_config_free (wc);
    return NULL;
  }
  root = yaml_document_get_root_node (&doc);
  /* an empty file is the empty configuration */
  ok = !root || each_pair (&c, wc, root, "the file", top_pair, &tls);
  yaml_document_delete (&doc);
  yaml_parser_delete (&parser);
  memset (text, 0, len);
  g_free (text);
  if (!ok) {
    web_config_free (wc);
    return NULL;
  }
  return wc;
}

void
web_config_free (WebConfig * wc)
{
  if (!wc)
    return;
  g_clear_object (&wc->cert);
  g_clear_object (&wc->client_ca);
  g_free (wc->headers);
  g_hash_table_unref (wc->users);
  g_free (wc);
}
