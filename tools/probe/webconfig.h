/* qmetric-probe: Prometheus's web configuration file (the format of
 * prometheus/exporter-toolkit, read by --web.config.file): TLS, basic
 * authentication, response headers, a rate limit.  A key this program does
 * not know or cannot honour is refused with its name, never ignored. */
#ifndef QM_PROBE_WEBCONFIG_H
#define QM_PROBE_WEBCONFIG_H

#include <gio/gio.h>

/* client_auth_type, as Go's crypto/tls names its policies */
typedef enum
{
  WEB_CLIENT_NO_CERT,           /* NoClientCert */
  WEB_CLIENT_REQUEST,           /* RequestClientCert: asked, not verified */
  WEB_CLIENT_REQUIRE_ANY,       /* RequireAnyClientCert: needed, not verified */
  WEB_CLIENT_VERIFY_IF_GIVEN,   /* VerifyClientCertIfGiven */
  WEB_CLIENT_REQUIRE_VERIFY,    /* RequireAndVerifyClientCert */
} WebClientAuth;

typedef struct
{
  /* TLS: NULL serves plain HTTP */
  GTlsCertificate *cert;
  WebClientAuth client_auth;
  GTlsDatabase *client_ca;      /* client_ca_file; NULL when not given */
  GTlsProtocolVersion min_version, max_version;

  /* "Name: value\r\n" lines added to every response ("" for none) */
  gchar *headers;

  /* basic_auth_users: user -> bcrypt hash; empty: no authentication */
  GHashTable *users;

  /* rate_limit: a token bucket of rate_burst tokens, one more every
   * rate_interval_us; 0: no limit */
  gint64 rate_interval_us;
  guint rate_burst;
} WebConfig;

/**
 * Read a web configuration file; path NULL gives the empty configuration
 * (plain HTTP, no authentication).  Certificates and keys are loaded here,
 * so that a missing file stops the program at start.  Returns NULL with
 * *error set: "FILE: line N: tls_server_config: unknown key \"x\"".
 */
WebConfig *web_config_load (const gchar * path, GError ** error);

void web_config_free (WebConfig * wc);

#endif /* QM_PROBE_WEBCONFIG_H */
