#!/usr/bin/python3
"""Write a raw 8-bit 4:2:0 reference and distorted file for the GPU
benchmarks: DISTINCT random frame pairs, repeated up to FRAMES frames (the
distorted is the reference quantised to 16 levels with +-1 noise, so that
VMAF sits well below 100 and every kernel has work).

    rawgen.py DIR WIDTH HEIGHT FRAMES [DISTINCT]   -> DIR/ref.yuv DIR/dis.yuv
"""
import sys

import numpy as np


def main():
    d, w, h, n = sys.argv[1], *map(int, sys.argv[2:5])
    k = int(sys.argv[5]) if len(sys.argv) > 5 else 64
    fs = w * h * 3 // 2
    rng = np.random.default_rng(1)
    base = rng.integers(16, 236, size=(k, fs), dtype=np.uint8)
    noise = rng.integers(-1, 2, size=(k, fs))
    dis = np.clip(base.astype(np.int16) // 16 * 16 + 8 + noise, 0, 255).astype(np.uint8)
    for name, arr in (("ref", base), ("dis", dis)):
        with open("%s/%s.yuv" % (d, name), "wb") as f:
            for i in range(n):
                f.write(arr[i % k].tobytes())


if __name__ == "__main__":
    main()
