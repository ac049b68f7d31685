/* gst-qmetric: the hashes a chunk's identity is made of (core/partial.h).
 *
 * - SHA-256 (core/sha256.c): the FIPS 180-4 example vectors, a million
 *   'a', every split of a message into two updates, and files of many
 *   lengths against `sha256sum`.
 * - the frame hash (core/framehash.c): a picture with padded strides hashes
 *   like the packed one, any split into updates gives the same hash, every
 *   single-bit change and a swap of two rows change it, and its speed.
 * - the fingerprint of an input (qm_partial_fingerprint_fd): equal to
 *   sha256sum of its definition (size, first MiB, last MiB) for small and
 *   large files, independent of the name, changed by a byte at either end.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "framehash.h"
#include "partial.h"
#include "sha256.h"
#include "unit.h"

static void hex_of(const void *data, size_t len, char hex[QM_SHA256_HEX])
{
    uint8_t d[QM_SHA256_BYTES];
    qm_sha256(data, len, d);
    qm_sha256_hex(d, hex);
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, len, f) == len && !fclose(f), "cannot write %s", path);
}

/* sha256sum's digest of a file, or "" */
static void sha256sum(const char *path, char hex[QM_SHA256_HEX])
{
    char cmd[600];
    hex[0] = 0;
    snprintf(cmd, sizeof(cmd), "sha256sum '%s'", path);
    FILE *p = popen(cmd, "r");
    if (!p || fscanf(p, "%64s", hex) != 1)
        hex[0] = 0;
    if (p)
        pclose(p);
}

static void check_sha256(const char *tmp)
{
    static const struct {
        const char *msg, *want;
    } fips[] = {
        /* FIPS 180-4 examples (NIST's "SHA256.pdf"): one block, two blocks */
        { "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
        { "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
        { "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
        { "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
          "klmnopqrlmnopqrsmnopqrstnopqrstu",
          "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
    };
    char hex[QM_SHA256_HEX];
    for (size_t i = 0; i < sizeof(fips) / sizeof(fips[0]); i++) {
        hex_of(fips[i].msg, strlen(fips[i].msg), hex);
        CHECK(!strcmp(hex, fips[i].want), "sha256(\"%.20s...\") = %s, want %s", fips[i].msg,
              hex, fips[i].want);
    }
    /* a million 'a' (FIPS 180-2's long example), in uneven updates */
    {
        char a[1000];
        memset(a, 'a', sizeof(a));
        QmSha256 c;
        uint8_t d[QM_SHA256_BYTES];
        qm_sha256_init(&c);
        for (size_t done = 0, step = 1; done < 1000000; done += step, step = step % 997 + 1)
            qm_sha256_update(&c, a, done + step > 1000000 ? 1000000 - done : step);
        qm_sha256_final(&c, d);
        qm_sha256_hex(d, hex);
        CHECK(!strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
              "sha256 of a million 'a' = %s", hex);
    }
    /* every split into two updates of messages around the block size */
    uint8_t msg[300];
    for (size_t i = 0; i < sizeof(msg); i++)
        msg[i] = (uint8_t)(i * 131 + 7);
    for (size_t len = 0; len <= sizeof(msg); len += len < 130 ? 1 : 17) {
        char one[QM_SHA256_HEX];
        hex_of(msg, len, one);
        for (size_t cut = 0; cut <= len; cut++) {
            QmSha256 c;
            uint8_t d[QM_SHA256_BYTES];
            qm_sha256_init(&c);
            qm_sha256_update(&c, msg, cut);
            qm_sha256_update(&c, msg + cut, len - cut);
            qm_sha256_final(&c, d);
            qm_sha256_hex(d, hex);
            if (strcmp(hex, one)) {
                CHECK(0, "length %zu split at %zu: %s against %s", len, cut, hex, one);
                break;
            }
        }
    }
    /* files of the lengths where padding changes, against sha256sum */
    static const size_t lens[] = { 0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 65537 };
    uint8_t *big = malloc(65537);
    for (size_t i = 0; i < 65537; i++)
        big[i] = (uint8_t)(rand() >> 7);
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        char path[300], want[QM_SHA256_HEX];
        snprintf(path, sizeof(path), "%s/m%zu", tmp, lens[i]);
        write_file(path, big, lens[i]);
        sha256sum(path, want);
        hex_of(big, lens[i], hex);
        CHECK(want[0] && !strcmp(hex, want), "%zu bytes: %s, sha256sum says %s", lens[i], hex,
              want);
    }
    free(big);
}

static void check_frame_hash(void)
{
    /* a 4:2:0 8-bit 37x21 picture packed, and the same with padded rows */
    enum { W = 37, H = 21, CW = 19, CH = 11, PAD = 64 };
    const size_t wb[3] = { W, CW, CW };
    const int rows[3] = { H, CH, CH };
    uint8_t packed[W * H + 2 * CW * CH], padded[3][PAD * H];
    for (size_t i = 0; i < sizeof(packed); i++)
        packed[i] = (uint8_t)(rand() >> 9);
    memset(padded, 0xee, sizeof(padded));
    const uint8_t *plane[3] = { packed, packed + W * H, packed + W * H + CW * CH };
    for (int p = 0; p < 3; p++)
        for (int r = 0; r < rows[p]; r++)
            memcpy(padded[p] + r * PAD, plane[p] + r * wb[p], wb[p]);
    const void *pk[3] = { plane[0], plane[1], plane[2] };
    const void *pd[3] = { padded[0], padded[1], padded[2] };
    const ptrdiff_t spk[3] = { W, CW, CW }, spd[3] = { PAD, PAD, PAD };
    const uint64_t h = qm_frame_hash(3, pk, spk, wb, rows);
    CHECK(qm_frame_hash(3, pd, spd, wb, rows) == h, "padded strides hash differently");
    memset(padded[1] + CW, 0x11, PAD - CW);  /* padding is not hashed */
    CHECK(qm_frame_hash(3, pd, spd, wb, rows) == h, "the padding changed the hash");

    /* equal to the hash of the concatenation, in any split */
    QmHash64 c;
    qm_hash64_init(&c);
    qm_hash64_update(&c, packed, sizeof(packed));
    CHECK(qm_hash64_final(&c) == h, "frame hash != hash of the concatenated planes");
    for (size_t cut = 0; cut <= 200; cut += 3) {
        qm_hash64_init(&c);
        qm_hash64_update(&c, packed, cut);
        qm_hash64_update(&c, packed + cut, sizeof(packed) - cut);
        CHECK(qm_hash64_final(&c) == h, "split at %zu changes the hash", cut);
    }
    /* every single-bit change is seen; so are two rows swapped and
     * trailing zeros */
    int same = 0;
    for (size_t i = 0; i < sizeof(packed); i++) {
        for (int b = 0; b < 8; b++) {
            packed[i] ^= (uint8_t)(1 << b);
            same += qm_frame_hash(3, pk, spk, wb, rows) == h;
            packed[i] ^= (uint8_t)(1 << b);
        }
    }
    CHECK(!same, "%d single-bit changes not seen", same);
    uint8_t row[W];
    memcpy(row, packed, W);
    memcpy(packed, packed + W, W);
    memcpy(packed + W, row, W);
    CHECK(qm_frame_hash(3, pk, spk, wb, rows) != h, "two rows swapped: same hash");
    memcpy(packed + W, packed, W);
    memcpy(packed, row, W);
    uint8_t zeros[64] = { 0 };
    uint64_t prev = 0;
    for (size_t n = 0; n <= 64; n++) {
        qm_hash64_init(&c);
        qm_hash64_update(&c, zeros, n);
        const uint64_t z = qm_hash64_final(&c);
        CHECK(n == 0 || z != prev, "%zu and %zu zero bytes hash the same", n - 1, n);
        prev = z;
    }

    /* the speed the chunk writers count on (reported, not a pass/fail: a
     * shared CI machine's timings vary) */
    const size_t big = 64u << 20;
    uint8_t *buf = malloc(big);
    if (buf) {
        memset(buf, 0x5a, big);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        qm_hash64_init(&c);
        qm_hash64_update(&c, buf, big);
        volatile uint64_t sink = qm_hash64_final(&c);
        (void)sink;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        const double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
        printf("frame hash: %.1f GB/s on one core\n", big / s / 1e9);
        free(buf);
    }
}

/* sha256sum of the fingerprint's definition for a file of these bytes */
static void fingerprint_by_definition(const char *tmp, const uint8_t *data, size_t n,
                                      char want[QM_SHA256_HEX])
{
    const size_t span = n < (1u << 20) ? n : (1u << 20);
    uint8_t *def = malloc(8 + 2 * span);
    for (int i = 0; i < 8; i++)
        def[i] = (uint8_t)((uint64_t)n >> (8 * i));
    memcpy(def + 8, data, span);
    memcpy(def + 8 + span, data + n - span, span);
    char path[300];
    snprintf(path, sizeof(path), "%s/definition", tmp);
    write_file(path, def, 8 + 2 * span);
    free(def);
    sha256sum(path, want);
}

static int fingerprint(const char *path, uint64_t *bytes, char hex[QM_SHA256_HEX])
{
    int fd = open(path, O_RDONLY);
    int r = fd < 0 ? -1 : qm_partial_fingerprint_fd(fd, bytes, hex);
    if (fd >= 0)
        close(fd);
    return r;
}

static void check_fingerprint(const char *tmp)
{
    static const size_t sizes[] = { 0, 1, 4608, (1u << 20) - 1, 1u << 20, (1u << 20) + 1,
                                    (5u << 20) + 12345 };
    const size_t max = (5u << 20) + 12345;
    uint8_t *data = malloc(max);
    for (size_t i = 0; i < max; i++)
        data[i] = (uint8_t)(i * 2654435761u >> 13);
    char path[300], moved[300];
    snprintf(path, sizeof(path), "%s/input.yuv", tmp);
    snprintf(moved, sizeof(moved), "%s/other name.yuv", tmp);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        const size_t n = sizes[i];
        char hex[QM_SHA256_HEX], want[QM_SHA256_HEX], again[QM_SHA256_HEX];
        uint64_t bytes = 0;
        write_file(path, data, n);
        fingerprint_by_definition(tmp, data, n, want);
        CHECK(fingerprint(path, &bytes, hex) == 0 && bytes == n && !strcmp(hex, want),
              "%zu bytes: fingerprint %s, by its definition %s", n, hex, want);
        /* the name and place do not count */
        CHECK(!rename(path, moved) && fingerprint(moved, &bytes, again) == 0 &&
              !strcmp(again, hex), "%zu bytes: renamed, another fingerprint", n);
        if (n < 2)
            continue;
        /* a byte at either end does */
        for (int end = 0; end < 2; end++) {
            const size_t at = end ? n - 1 : 0;
            data[at] ^= 1;
            write_file(path, data, n);
            data[at] ^= 1;
            CHECK(fingerprint(path, &bytes, again) == 0 && strcmp(again, hex),
                  "%zu bytes: byte %zu changed, same fingerprint", n, at);
        }
    }
    /* not a regular file: refused */
    int fds[2];
    if (!pipe(fds)) {
        char hex[QM_SHA256_HEX];
        uint64_t bytes;
        CHECK(qm_partial_fingerprint_fd(fds[0], &bytes, hex) == QM_EIO, "a pipe has a fingerprint");
        close(fds[0]);
        close(fds[1]);
    }
    free(data);
}

int main(void)
{
    char tmpl[] = "/tmp/qm_hash_test_XXXXXX";
    const char *tmp = mkdtemp(tmpl);
    if (!tmp) {
        perror("mkdtemp");
        return 1;
    }
    srand(1);
    check_sha256(tmp);
    check_frame_hash();
    check_fingerprint(tmp);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    if (system(cmd))
        fprintf(stderr, "could not remove %s\n", tmp);
    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
