/* gst-qmetric: a fast 64-bit hash of a picture's samples, to tell whether
 * two chunks of a title read the same frames where they meet (partial.h).
 *
 * Not cryptographic: it detects another file, another frame order or a
 * decoder that produced other samples, not an adversary.  Four 64-bit lanes
 * each take an 8-byte word per 32-byte stripe (add, multiply by an odd
 * constant, rotate), so the lanes run in parallel: several GB/s on one
 * core.  The words are read little-endian whatever the host, so a hash is
 * the same on every machine.
 *
 * A frame's hash covers the visible samples of each plane, row by row, in
 * plane order, and nothing else: the same picture hashes the same in a
 * tightly packed raw file and in a decoded buffer with padded strides.
 */
#ifndef QM_FRAMEHASH_H
#define QM_FRAMEHASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct QmHash64 {
    uint64_t lane[4];
    uint64_t total;       /* bytes so far */
    uint8_t buf[32];      /* the start of a stripe not yet complete */
    unsigned fill;
} QmHash64;

void qm_hash64_init(QmHash64 *h);
/** Bytes appended to the hashed sequence: any split of a sequence into
 *  updates gives the same hash. */
void qm_hash64_update(QmHash64 *h, const void *data, size_t len);
uint64_t qm_hash64_final(const QmHash64 *h);

/**
 * The hash of a picture of n_planes planes: plane p has height[p] rows of
 * width_bytes[p] bytes (samples x bytes per sample: the visible part of a
 * row, no padding), row r starting at data[p] + r * stride[p] (stride in
 * bytes, may be larger than width_bytes[p]).  Equal to the hash of the
 * concatenated rows.
 */
uint64_t qm_frame_hash(int n_planes, const void *const data[],
                       const ptrdiff_t stride[], const size_t width_bytes[],
                       const int height[]);

#endif /* QM_FRAMEHASH_H */
