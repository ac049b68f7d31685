/* qmetric-probe: HTTP basic authentication against bcrypt hashes (the
 * basic_auth_users of the web configuration).  bcrypt is slow by design
 * (about 70 ms at cost 10), so the checks run on one worker thread, never on
 * the main loop, and a successful check is remembered (as a keyed digest,
 * not the password) so that every later scrape costs microseconds. */
#ifndef QM_PROBE_AUTH_H
#define QM_PROBE_AUTH_H

#include <glib.h>

typedef struct _Auth Auth;

/* the answer of a check that went to the worker, on the main context */
typedef void (*AuthDone) (gboolean ok, gpointer data);

/** users: user -> bcrypt hash, borrowed for the life of the Auth. */
Auth *auth_new (GHashTable * users);

void auth_free (Auth * a);

/**
 * Check an Authorization field value (len bytes, not NUL-terminated).
 * Returns 1 (allowed: a remembered success), 0 (refused: not "Basic" with
 * base-64 "user:password") or -1: the bcrypt check was queued, and done
 * (ok, data) will be called from the main context (data must stay valid
 * until then).
 */
gint auth_check (Auth * a, const gchar * value, gsize len, AuthDone done,
    gpointer data);

/** Equal strings of the same length, in time independent of the bytes. */
gboolean auth_equal (const guint8 * a, const guint8 * b, gsize len);

#endif /* QM_PROBE_AUTH_H */
