/* gst-qmetric: the signatures of files that are not raw frames (sniff.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "sniff.h"

static int starts(const uint8_t *h, size_t len, size_t at, const char *s)
{
    const size_t n = strlen(s);
    return len >= at + n && !memcmp(h + at, s, n);
}

/* ISO BMFF (MP4, MOV, 3GP...): a first box of a known type whose size is 0
 * (to the end), 1 (64-bit size follows) or at least its 8-byte header. */
static int is_bmff(const uint8_t *h, size_t len)
{
    static const char *const types[] = { "ftyp", "moov", "mdat", "wide", "free" };
    if (len < 8)
        return 0;
    const uint32_t size = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
    if (size != 0 && size != 1 && size < 8)
        return 0;
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (!memcmp(h + 4, types[i], 4))
            return 1;
    return 0;
}

/* MPEG-TS (ISO/IEC 13818-1, 2.4.3.2): 0x47 at the start of each packet of
 * `size` bytes (188, or 192 with a 4-byte time code first), no transport
 * error, a scrambling control other than the reserved 01 and an adaptation
 * field control other than the reserved 00.  A flat picture of value 0x47
 * has the sync bytes but not these fields. */
static int is_ts(const uint8_t *h, size_t len, size_t size)
{
    const size_t at = size - 188;
    size_t packets = 0;
    for (size_t p = at; p + 4 <= len && packets < 8; p += size, packets++) {
        const uint8_t b1 = h[p + 1], b3 = h[p + 3];
        if (h[p] != 0x47 || (b1 & 0x80) || (b3 >> 6) == 1 || !((b3 >> 4) & 3))
            return 0;
    }
    return packets >= 2;
}

/* A start code (00 00 01, or 00 00 00 01) at 0: its length, else 0. */
static size_t start_code(const uint8_t *h, size_t len)
{
    if (len >= 4 && !h[0] && !h[1] && !h[2] && h[3] == 1)
        return 4;
    if (len >= 3 && !h[0] && !h[1] && h[2] == 1)
        return 3;
    return 0;
}

/* H.264 or HEVC Annex B: a start code at 0, then the header of a NAL unit
 * a stream begins with (H.264: SEI, SPS, access unit delimiter; HEVC: VPS,
 * SPS, PPS, delimiter, SEI, in layer 0 with a temporal id), and another
 * start code in the bytes after.  Slices are not accepted first: a picture
 * whose first row ramps 0, 0, 1, 1 would look like one. */
static int is_annexb(const uint8_t *h, size_t len)
{
    const size_t sc = start_code(h, len);
    if (!sc || len < sc + 2)
        return 0;
    const uint8_t b0 = h[sc], b1 = h[sc + 1];
    const unsigned avc = b0 & 0x1f, hevc = (b0 >> 1) & 0x3f;
    const int avc_ok = !(b0 & 0x80) &&
                       (avc == 6 || avc == 9 || (avc == 7 && (b0 & 0x60)));
    const int hevc_ok = !(b0 & 0x80) && !(b0 & 1) && (b1 >> 3) == 0 && (b1 & 7) &&
                        ((hevc >= 32 && hevc <= 35) || hevc == 39);
    if (!avc_ok && !hevc_ok)
        return 0;
    for (size_t i = sc + 2; i + 3 <= len; i++)
        if (!h[i] && !h[i + 1] && h[i + 2] == 1)
            return 1;
    return 0;
}

const char *qm_sniff_container(const uint8_t *h, size_t len)
{
    if (len > QM_SNIFF_BYTES)
        len = QM_SNIFF_BYTES;
    if (starts(h, len, 0, "YUV4MPEG2 "))
        return "a Y4M file";
    if (is_bmff(h, len))
        return "an MP4/MOV file (ISO media boxes)";
    if (len >= 4 && h[0] == 0x1a && h[1] == 0x45 && h[2] == 0xdf && h[3] == 0xa3)
        return "a Matroska/WebM file";
    if (starts(h, len, 0, "DKIF") && len >= 8 && h[6] == 32 && h[7] == 0)
        return "an IVF file (VP8/VP9/AV1)";
    if (starts(h, len, 0, "RIFF") && starts(h, len, 8, "AVI "))
        return "an AVI file";
    if (starts(h, len, 0, "OggS") && len >= 5 && h[4] == 0)
        return "an Ogg file";
    if (starts(h, len, 0, "FLV") && len >= 4 && h[3] == 1)
        return "an FLV file";
    if (is_ts(h, len, 188) || is_ts(h, len, 192))
        return "an MPEG-TS stream";
    if (start_code(h, len) == 3 && len >= 4 && (h[3] == 0xba || h[3] == 0xb3))
        return "an MPEG program stream or MPEG-1/2 video";
    if (is_annexb(h, len))
        return "an H.264/HEVC elementary stream (Annex B)";
    return NULL;
}

const char *qm_sniff_fd(int fd)
{
    uint8_t head[QM_SNIFF_BYTES];
    size_t got = 0;
    while (got < sizeof(head)) {
        const ssize_t r = pread(fd, head + got, sizeof(head) - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got ? qm_sniff_container(head, got) : NULL;
}
