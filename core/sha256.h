/* gst-qmetric: SHA-256 (FIPS 180-4, section 6.2), for the content hashes a
 * chunk's partial file records (model files, input fingerprints).
 *
 * Streaming: init, any number of updates of any length, final.  The digest
 * equals `sha256sum`'s for the same bytes (tests/sha256_test.c checks the
 * FIPS example vectors and sha256sum on files).
 */
#ifndef QM_SHA256_H
#define QM_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define QM_SHA256_BYTES 32
#define QM_SHA256_HEX 65  /* 64 hex digits and the NUL */

typedef struct QmSha256 {
    uint32_t h[8];
    uint64_t bytes;       /* message length so far */
    uint8_t block[64];
    unsigned fill;        /* bytes in block */
} QmSha256;

void qm_sha256_init(QmSha256 *c);
void qm_sha256_update(QmSha256 *c, const void *data, size_t len);
/** The digest; c must be initialised again before reuse. */
void qm_sha256_final(QmSha256 *c, uint8_t out[QM_SHA256_BYTES]);

/** Digest of one buffer. */
void qm_sha256(const void *data, size_t len, uint8_t out[QM_SHA256_BYTES]);
/** Lower-case hex of a digest, NUL-terminated. */
void qm_sha256_hex(const uint8_t d[QM_SHA256_BYTES], char hex[QM_SHA256_HEX]);

#endif /* QM_SHA256_H */
