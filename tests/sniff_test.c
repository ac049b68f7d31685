/* gst-qmetric: tools/sniff.c, the check that a "raw" file is raw.
 *
 * The first bytes of each container and elementary stream it knows (as
 * their writers start them: GStreamer's and FFmpeg's muxers, x264/x265
 * Annex B output) are recognised, with the rest of the head random; raw
 * pictures are not: flat planes of every value (0x47, the TS sync byte,
 * included), noise, ramps of 8- and 16-bit samples, checkerboards.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sniff.h"
#include "unit.h"

static uint8_t head[QM_SNIFF_BYTES];

static void noise(void)
{
    for (size_t i = 0; i < sizeof(head); i++)
        head[i] = (uint8_t)(rand() >> 11);
}

static void put(size_t at, const void *bytes, size_t n)
{
    memcpy(head + at, bytes, n);
}

static void expect(const char *label, const char *want)
{
    const char *got = qm_sniff_container(head, sizeof(head));
    if (want)
        CHECK(got && strstr(got, want), "%s: got '%s', want '%s'", label, got ? got : "(raw)",
              want);
    else
        CHECK(!got, "%s: raw frames taken for %s", label, got);
    printf("  %-28s -> %s\n", label, got ? got : "raw");
}

static void signatures(void)
{
    static const struct {
        const char *label;
        size_t len;
        const char *bytes;
        const char *want;
    } sig[] = {
        { "Y4M", 10, "YUV4MPEG2 ", "Y4M" },
        { "MP4 (ftyp)", 12, "\x00\x00\x00\x20" "ftypisom", "MP4" },
        { "MOV (wide atom first)", 8, "\x00\x00\x00\x08" "wide", "MP4" },
        { "MOV (moov first)", 8, "\x00\x00\x10\x00" "moov", "MP4" },
        { "fragmented MP4 (free)", 8, "\x00\x00\x00\x10" "free", "MP4" },
        { "mdat with a 64-bit size", 8, "\x00\x00\x00\x01" "mdat", "MP4" },
        { "Matroska/WebM", 4, "\x1a\x45\xdf\xa3", "Matroska" },
        { "IVF", 8, "DKIF\x00\x00\x20\x00", "IVF" },
        { "AVI", 12, "RIFF\x10\x00\x00\x00" "AVI ", "AVI" },
        { "Ogg", 5, "OggS\x00", "Ogg" },
        { "FLV", 4, "FLV\x01", "FLV" },
        { "MPEG-PS pack", 4, "\x00\x00\x01\xba", "program stream" },
        { "MPEG-2 video", 4, "\x00\x00\x01\xb3", "MPEG-1/2" },
        { "H.264 AUD", 6, "\x00\x00\x00\x01\x09\xf0", "H.264/HEVC" },
        { "H.264 SPS", 6, "\x00\x00\x00\x01\x67\x64", "H.264/HEVC" },
        { "H.264 SEI, 3-byte code", 5, "\x00\x00\x01\x06\x05", "H.264/HEVC" },
        { "HEVC VPS", 6, "\x00\x00\x00\x01\x40\x01", "H.264/HEVC" },
        { "HEVC AUD", 6, "\x00\x00\x00\x01\x46\x01", "H.264/HEVC" },
    };
    for (size_t i = 0; i < sizeof(sig) / sizeof(sig[0]); i++) {
        noise();
        put(0, sig[i].bytes, sig[i].len);
        if (strstr(sig[i].want, "H.264"))
            put(200, "\x00\x00\x00\x01\x68", 5);  /* the next NAL unit (PPS) */
        expect(sig[i].label, sig[i].want);
    }
    /* MPEG-TS: PAT packets, then PES packets; 188- and 192-byte packets */
    for (int m2ts = 0; m2ts < 2; m2ts++) {
        noise();
        const size_t size = m2ts ? 192 : 188, at = m2ts ? 4 : 0;
        for (size_t p = at; p + 4 <= sizeof(head); p += size)
            put(p, p == at ? "\x47\x40\x00\x10" : "\x47\x01\x00\x31", 4);
        expect(m2ts ? "MPEG-TS, 192-byte packets" : "MPEG-TS", "MPEG-TS");
    }
    /* an elementary stream needs a second start code */
    noise();
    for (size_t i = 0; i + 2 < sizeof(head); i++)
        if (!head[i] && !head[i + 1])
            head[i + 2] |= 2;
    put(0, "\x00\x00\x00\x01\x67\x64", 6);
    expect("a lone start code", NULL);
}

static void raw_pictures(void)
{
    char label[64];
    for (int v = 0; v < 256; v++) {
        memset(head, v, sizeof(head));
        snprintf(label, sizeof(label), "flat %d", v);
        if (qm_sniff_container(head, sizeof(head))) {
            expect(label, NULL);
            break;
        }
    }
    printf("  %-28s -> raw\n", "flat 0..255");
    for (int k = 0; k < 20; k++) {
        noise();
        CHECK(!qm_sniff_container(head, sizeof(head)), "noise %d taken for a container", k);
    }
    /* ramps: one sample a column, 8 bits (step 1 every 1, 2, 4 columns) and
     * 16-bit little-endian (10-bit content) */
    for (int step = 1; step <= 4; step *= 2) {
        for (size_t i = 0; i < sizeof(head); i++)
            head[i] = (uint8_t)((i % 640) / step);
        snprintf(label, sizeof(label), "8-bit ramp, 1 per %d", step);
        expect(label, NULL);
        for (size_t i = 0; i + 1 < sizeof(head); i += 2) {
            const unsigned s = (unsigned)((i / 2 % 640) / step) * 4;
            head[i] = (uint8_t)s;
            head[i + 1] = (uint8_t)(s >> 8);
        }
        snprintf(label, sizeof(label), "10-bit ramp, 1 per %d", step);
        expect(label, NULL);
    }
    for (size_t i = 0; i < sizeof(head); i++)
        head[i] = ((i / 8) ^ (i / 640 / 8)) & 1 ? 255 : 0;
    expect("checkerboard 0/255", NULL);
    for (size_t i = 0; i < sizeof(head); i++)
        head[i] = ((i / 8) ^ (i / 640 / 8)) & 1 ? 0x47 : 0x10;
    expect("checkerboard 0x47/16", NULL);
    /* short heads: nothing to say */
    CHECK(!qm_sniff_container((const uint8_t *)"\x00\x00\x01", 3), "3 bytes");
    CHECK(!qm_sniff_container(head, 0), "0 bytes");
}

int main(void)
{
    srand(7);
    printf("signatures:\n");
    signatures();
    printf("raw pictures:\n");
    raw_pictures();
    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
