/* qmetric-probe: basic authentication (see auth.h).
 *
 * Timing: the password is compared by bcrypt's own output, compared in
 * constant time; an unknown user is checked against a dummy hash of the
 * highest cost in the file, so that the answer takes as long as for a known
 * user.  The cache holds HMAC-SHA256(process key, user NUL password) of
 * successes only (a flood of wrong passwords cannot evict Prometheus's
 * entry), compared in constant time with every entry. */
#include "auth.h"

#include <crypt.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_SIZE 16
#define DIGEST_LEN 32

typedef struct
{
  guint8 digest[DIGEST_LEN];
  gboolean used;
} CacheEntry;

struct _Auth
{
  GHashTable *users;
  gchar *dummy_hash;
  guint8 key[32];
  CacheEntry cache[CACHE_SIZE];
  guint next;                   /* the entry the next success replaces */
  GThreadPool *pool;
};

typedef struct
{
  Auth *a;
  gchar *user, *password, *hash;
  gboolean known, ok;
  AuthDone done;
  gpointer data;
} Job;

gboolean
auth_equal (const guint8 * a, const guint8 * b, gsize len)
{
  guint8 d = 0;
  gsize i;

  for (i = 0; i < len; i++)
    d |= a[i] ^ b[i];
  return d == 0;
}

static void
wipe_free (gchar * s)
{
  if (s) {
    explicit_bzero (s, strlen (s));
    g_free (s);
  }
}

static void
digest_of (Auth * a, const gchar * user, const gchar * password,
    guint8 out[DIGEST_LEN])
{
  GHmac *h = g_hmac_new (G_CHECKSUM_SHA256, a->key, sizeof (a->key));
  gsize len = DIGEST_LEN;

  g_hmac_update (h, (const guchar *) user, strlen (user) + 1);
  g_hmac_update (h, (const guchar *) password, strlen (password));
  g_hmac_get_digest (h, out, &len);
  g_hmac_unref (h);
}

static gboolean
cache_has (Auth * a, const guint8 d[DIGEST_LEN])
{
  gboolean hit = FALSE;
  guint i;

  /* every entry, no early exit */
  for (i = 0; i < CACHE_SIZE; i++)
    hit |= a->cache[i].used & auth_equal (a->cache[i].digest, d, DIGEST_LEN);
  return hit;
}

/* bcrypt of password with the salt and cost of hash, equal to hash */
static gboolean
bcrypt_matches (const gchar * password, const gchar * hash)
{
  struct crypt_data *cd = g_new0 (struct crypt_data, 1);
  const gchar *out = crypt_rn (password, hash, cd, sizeof (*cd));
  gboolean ok = out && strlen (out) == strlen (hash) &&
      auth_equal ((const guint8 *) out, (const guint8 *) hash, strlen (hash));

  explicit_bzero (cd, sizeof (*cd));
  g_free (cd);
  return ok;
}

static gboolean
job_done (gpointer data)
{
  Job *j = data;

  if (j->ok) {
    digest_of (j->a, j->user, j->password, j->a->cache[j->a->next].digest);
    j->a->cache[j->a->next].used = TRUE;
    j->a->next = (j->a->next + 1) % CACHE_SIZE;
  }
  j->done (j->ok, j->data);
  wipe_free (j->password);
  g_free (j->user);
  g_free (j->hash);
  g_free (j);
  return G_SOURCE_REMOVE;
}

static void
job_run (gpointer data, gpointer user_data)
{
  Job *j = data;

  j->ok = bcrypt_matches (j->password, j->hash) && j->known;
  g_main_context_invoke (NULL, job_done, j);
}

Auth *
auth_new (GHashTable * users)
{
  Auth *a = g_new0 (Auth, 1);
  GHashTableIter it;
  gpointer hash;
  gchar cost[3] = "04", salt[CRYPT_GENSALT_OUTPUT_SIZE];
  struct crypt_data *cd;
  guint i;

  a->users = users;
  for (i = 0; i < sizeof (a->key); i += 4) {
    guint32 r = g_random_int ();
    memcpy (a->key + i, &r, 4);
  }
  /* the dummy hash costs as much as the dearest real one */
  g_hash_table_iter_init (&it, users);
  while (g_hash_table_iter_next (&it, NULL, &hash))
    if (strncmp ((const gchar *) hash + 4, cost, 2) > 0)
      memcpy (cost, (const gchar *) hash + 4, 2);
  cd = g_new0 (struct crypt_data, 1);
  if (crypt_gensalt_rn ("$2b$", atoi (cost), NULL, 0, salt, sizeof (salt))) {
    const gchar *h = crypt_rn ("qmetric-probe: no such user", salt, cd,
        sizeof (*cd));
    if (h && h[0] == '$')
      a->dummy_hash = g_strdup (h);
  }
  g_free (cd);
  /* one thread: a flood of wrong passwords costs one core, not all */
  a->pool = g_thread_pool_new (job_run, a, 1, FALSE, NULL);
  return a;
}

void
auth_free (Auth * a)
{
  if (!a)
    return;
  /* finish the queued checks: their callbacks are then dropped with the
   * main context's sources */
  g_thread_pool_free (a->pool, FALSE, TRUE);
  g_free (a->dummy_hash);
  explicit_bzero (a->key, sizeof (a->key));
  g_free (a);
}

gint
auth_check (Auth * a, const gchar * value, gsize len, AuthDone done,
    gpointer data)
{
  gchar *b64, *colon;
  guchar *dec;
  gsize dec_len;
  guint8 d[DIGEST_LEN];
  const gchar *hash;
  Job *j;

  if (len < 6 || g_ascii_strncasecmp (value, "basic ", 6))
    return 0;
  value += 6;
  len -= 6;
  while (len && *value == ' ') {
    value++;
    len--;
  }
  if (!len || len > 4096)
    return 0;
  b64 = g_strndup (value, len);
  for (colon = b64; *colon; colon++)
    if (!g_ascii_isalnum (*colon) && !strchr ("+/=", *colon))
      break;
  if (*colon) {
    wipe_free (b64);
    return 0;
  }
  dec = g_base64_decode (b64, &dec_len);
  wipe_free (b64);
  /* user:password, text without NUL */
  if (!dec_len || memchr (dec, 0, dec_len) ||
      !(colon = memchr (dec, ':', dec_len))) {
    explicit_bzero (dec, dec_len);
    g_free (dec);
    return 0;
  }
  j = g_new0 (Job, 1);
  j->user = g_strndup ((const gchar *) dec, colon - (gchar *) dec);
  j->password = g_strndup (colon + 1, dec_len - (colon + 1 - (gchar *) dec));
  explicit_bzero (dec, dec_len);
  g_free (dec);

  digest_of (a, j->user, j->password, d);
  hash = g_hash_table_lookup (a->users, j->user);
  if (hash && cache_has (a, d)) {
    wipe_free (j->password);
    g_free (j->user);
    g_free (j);
    return 1;
  }
  j->a = a;
  j->known = hash != NULL;
  j->hash = g_strdup (hash ? hash : a->dummy_hash);
  j->done = done;
  j->data = data;
  if (!j->hash) {
    /* no dummy hash (libxcrypt without bcrypt): refuse at once */
    wipe_free (j->password);
    g_free (j->user);
    g_free (j);
    return 0;
  }
  g_thread_pool_push (a->pool, j, NULL);
  return -1;
}
