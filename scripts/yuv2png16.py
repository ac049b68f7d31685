#!/usr/bin/python3
"""Frames of a raw 8-bit 4:2:0 file as 16-bit RGB PNGs, converted as the
golden set converts them for libjxl's ssimulacra2 tool
(../shared/golden/ssimulacra2/manifest.json, yuv_to_rgb: BT.709 limited
range, chroma replicated, float64, clipped, x 65535 rounded half up;
untagged PNG, which the tool reads as sRGB).

    yuv2png16.py FILE.yuv WIDTH HEIGHT FRAMES OUTDIR PREFIX
        -> OUTDIR/PREFIX-00000.png ...
"""
import struct
import sys
import zlib

import numpy as np


def rgb16(frame, w, h):
    cw, ch = (w + 1) // 2, (h + 1) // 2
    y = frame[:w * h].reshape(h, w).astype(np.float64)
    u = frame[w * h:w * h + cw * ch].reshape(ch, cw)
    v = frame[w * h + cw * ch:w * h + 2 * cw * ch].reshape(ch, cw)
    u = np.repeat(np.repeat(u, 2, 0), 2, 1)[:h, :w].astype(np.float64)
    v = np.repeat(np.repeat(v, 2, 0), 2, 1)[:h, :w].astype(np.float64)
    kr, kb = 0.2126, 0.0722
    kg = 1 - kr - kb
    r_cr, g_cb, g_cr, b_cb = 2 * (1 - kr), 2 * kb * (1 - kb) / kg, 2 * kr * (1 - kr) / kg, 2 * (1 - kb)
    yn, cb, cr = (y - 16) / 219, (u - 128) / 224, (v - 128) / 224
    out = np.stack([yn + r_cr * cr, yn - g_cb * cb - g_cr * cr, yn + b_cb * cb], axis=-1)
    return np.floor(np.clip(out, 0, 1) * 65535 + 0.5).astype('>u2')


def png(path, rgb):
    h, w, _ = rgb.shape
    raw = b''.join(b'\0' + rgb[i].tobytes() for i in range(h))

    def chunk(t, d):
        return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
    with open(path, 'wb') as f:
        f.write(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 16, 2, 0, 0, 0))
                + chunk(b'IDAT', zlib.compress(raw, 1)) + chunk(b'IEND', b''))


def main():
    src, w, h, n, out, prefix = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
        int(sys.argv[4]), sys.argv[5], sys.argv[6]
    fs = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
    data = np.fromfile(src, dtype=np.uint8)
    for i in range(n):
        png('%s/%s-%05d.png' % (out, prefix, i), rgb16(data[i * fs:(i + 1) * fs], w, h))


if __name__ == '__main__':
    main()
