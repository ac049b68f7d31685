/* gst-qmetric: the 64-bit hash of a picture's samples (see framehash.h). */
#include <string.h>

#include "framehash.h"

/* Odd multipliers with well-spread bits: 2^64 / golden ratio, and the
 * fractional part of sqrt(3) (SHA-512's second initial word). */
#define M1 0x9e3779b97f4a7c15ull
#define M2 0xbb67ae8584caa73bull

static inline uint64_t rotl(uint64_t x, unsigned n)
{
    return (x << n) | (x >> (64 - n));
}

static inline uint64_t load_le(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint64_t lane_step(uint64_t lane, uint64_t word)
{
    return rotl(lane + word * M2, 29) * M1;
}

static inline void stripe(uint64_t lane[4], const uint8_t *p)
{
    lane[0] = lane_step(lane[0], load_le(p));
    lane[1] = lane_step(lane[1], load_le(p + 8));
    lane[2] = lane_step(lane[2], load_le(p + 16));
    lane[3] = lane_step(lane[3], load_le(p + 24));
}

void qm_hash64_init(QmHash64 *h)
{
    /* distinct starting lanes, so that equal words in different lanes
     * contribute differently */
    h->lane[0] = M1;
    h->lane[1] = M2;
    h->lane[2] = M1 ^ rotl(M2, 17);
    h->lane[3] = M2 ^ rotl(M1, 41);
    h->total = 0;
    h->fill = 0;
}

void qm_hash64_update(QmHash64 *h, const void *data, size_t len)
{
    const uint8_t *p = data;
    h->total += len;
    if (h->fill) {
        const size_t take = len < 32 - h->fill ? len : 32 - h->fill;
        memcpy(h->buf + h->fill, p, take);
        h->fill += (unsigned)take;
        p += take;
        len -= take;
        if (h->fill < 32)
            return;
        stripe(h->lane, h->buf);
        h->fill = 0;
    }
    for (; len >= 32; p += 32, len -= 32)
        stripe(h->lane, p);
    memcpy(h->buf, p, len);
    h->fill = (unsigned)len;
}

/* Every input bit reaches every output bit (xor-shift-multiply). */
static uint64_t avalanche(uint64_t x)
{
    x ^= x >> 31;
    x *= M2;
    x ^= x >> 27;
    x *= M1;
    x ^= x >> 33;
    return x;
}

uint64_t qm_hash64_final(const QmHash64 *h)
{
    uint64_t lane[4] = { h->lane[0], h->lane[1], h->lane[2], h->lane[3] };
    if (h->fill) {
        /* the last partial stripe, zero-padded; the length below tells it
         * from a stripe that really ends in zeros */
        uint8_t last[32] = { 0 };
        memcpy(last, h->buf, h->fill);
        stripe(lane, last);
    }
    uint64_t x = h->total * M1;
    for (int i = 0; i < 4; i++)
        x = rotl(x ^ avalanche(lane[i]), 23) * M2;
    return avalanche(x);
}

uint64_t qm_frame_hash(int n_planes, const void *const data[],
                       const ptrdiff_t stride[], const size_t width_bytes[],
                       const int height[])
{
    QmHash64 h;
    qm_hash64_init(&h);
    for (int p = 0; p < n_planes; p++) {
        const uint8_t *row = data[p];
        for (int r = 0; r < height[p]; r++, row += stride[p])
            qm_hash64_update(&h, row, width_bytes[p]);
    }
    return qm_hash64_final(&h);
}
