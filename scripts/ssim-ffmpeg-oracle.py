#!/usr/bin/python3
"""Regenerate tests/data/ssim_ffmpeg/*.json: FFmpeg's `ssim` filter's
per-frame values (its stats_file, as printed) on golden clips, the oracle of
the ssim_ffmpeg metric (tests/oracle/ssim_ffmpeg.py).  Not run by the tests.

Each case runs
  ffmpeg -filter_complex_threads 1 [-cpuflags 0] -f rawvideo ... -i DIS
         -f rawvideo ... -i REF -lavfi "[0:v][1:v]ssim=stats_file=S" -f null -
(one slice thread: the order of the metric's sums; -cpuflags 0 where the
case says so: FFmpeg's C code, for a plane width at which its x86 code
keeps a window from past the row's end, docs/accuracy.md).  A case with
`crop` runs on the top-left W x H of the clips (crop filter on both inputs),
one with `gray` on their luma alone (extractplanes=y: GRAY input, the
stats line has Y and All only; U and V are stored as null).

usage: scripts/ssim-ffmpeg-oracle.py [GOLDEN_DIR] [--ffmpeg /usr/bin/ffmpeg]
"""
import argparse, json, lzma, os, re, shutil, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "data", "ssim_ffmpeg")

# golden case, crop (w, h) or None, FFmpeg's C code (-cpuflags 0), why;
# GRAY cases apart
CASES = [
    ("ladybird_576x324_yuv420p_x264crf35", None, False, "8-bit 4:2:0"),
    ("mandelbrot_576x324_yuv420p_x264crf45", None, False,
     "8-bit 4:2:0, heavy distortion (low and negative windows)"),
    ("yellowflower_577x323_yuv420p_scale576x322_x264crf32", None, False,
     "8-bit 4:2:0, odd size (ceil-sized chroma, a remainder of columns and rows)"),
    ("garden_576x324_yuv422p_x264crf32", None, False, "8-bit 4:2:2"),
    ("aqua_576x324_yuv420p10le_x264crf30", None, False, "10-bit 4:2:0"),
    ("garden_576x324_yuv420p12le_x264crf30", None, False, "12-bit 4:2:0"),
    ("aqua_1280x720_yuv444p10le_x264crf32", None, False, "10-bit 4:4:4"),
    ("yellowflower_577x323_yuv420p_scale576x322_x264crf32", (360, 320), True,
     "8-bit, luma 360 wide: 89 windows a row, 1 mod 4, where FFmpeg's x86 "
     "code differs from its C code"),
]
GRAY = [("yellowflower_577x323_yuv420p_scale576x322_x264crf32",
         "8-bit GRAY (the luma of the odd-sized case): Y and All")]

LINE = re.compile(r"n:(\d+) Y:(\S+) (?:U:(\S+) V:(\S+) )?All:(\S+) \((\S+)\)")


def ffmpeg_version(ffmpeg):
    out = subprocess.run([ffmpeg, "-version"], capture_output=True, text=True).stdout
    return out.splitlines()[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("golden", nargs="?", default=os.path.join(HERE, "..", "..", "shared", "golden"))
    ap.add_argument("--ffmpeg", default="/usr/bin/ffmpeg")
    a = ap.parse_args()
    man = json.load(open(os.path.join(a.golden, "manifest.json")))
    cases = {c["name"]: c for c in man["cases"]}
    version = ffmpeg_version(a.ffmpeg)
    os.makedirs(OUT, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="ssimff")
    try:
        for name, crop, c_code, why, gray in ([c + (False,) for c in CASES] +
                                              [(n, None, False, y, True) for n, y in GRAY]):
            c = cases[name]
            files = {}
            for k in ("ref", "dis"):
                dst = os.path.join(tmp, os.path.basename(c[k])[:-3])
                if not os.path.exists(dst):
                    with lzma.open(os.path.join(a.golden, c[k])) as f, open(dst, "wb") as o:
                        shutil.copyfileobj(f, o, 1 << 20)
                files[k] = dst
            size = "%dx%d" % (c["width"], c["height"])
            stats = os.path.join(tmp, "stats.txt")
            graph = "[0:v][1:v]ssim=stats_file=stats.txt"
            if gray:
                graph = ("[0:v]extractplanes=y[a];[1:v]extractplanes=y[b];"
                         "[a][b]ssim=stats_file=stats.txt")
            if crop:
                graph = ("[0:v]crop=%d:%d:0:0[a];[1:v]crop=%d:%d:0:0[b];"
                         "[a][b]ssim=stats_file=stats.txt" % (crop * 2))
            args = ["-nostdin", "-hide_banner", "-loglevel", "error",
                    "-filter_complex_threads", "1"] + (["-cpuflags", "0"] if c_code else [])
            for k in ("dis", "ref"):
                args += ["-f", "rawvideo", "-pix_fmt", c["pix_fmt"], "-s", size,
                         "-i", os.path.basename(files[k])]
            args += ["-lavfi", graph, "-f", "null", "-"]
            subprocess.run([a.ffmpeg] + args, cwd=tmp, check=True)
            frames = []
            for line in open(stats):
                m = LINE.match(line)
                if not m:
                    sys.exit("unexpected stats line: %r" % line)
                if int(m.group(1)) != len(frames) + 1:
                    sys.exit("%s: frame numbers out of order" % name)
                frames.append(list(m.groups()[1:]))
            if len(frames) != c["frames"]:
                sys.exit("%s: %d frames, the manifest says %d" % (name, len(frames), c["frames"]))
            out = {
                "case": name,
                "what": why,
                "ref": c["ref"], "dis": c["dis"],
                "width": c["width"], "height": c["height"],
                "pix_fmt": c["pix_fmt"], "bitdepth": c["bitdepth"],
                "crop": list(crop) if crop else None,
                "gray": gray,
                "ffmpeg": version,
                "command": "ffmpeg " + " ".join(
                    "'%s'" % x if ";" in x or "[" in x else x for x in args),
                "columns": ["Y", "U", "V", "All", "dB"],
                "frames": frames,
            }
            stem = name + ("_crop%dx%d" % crop if crop else "") + ("_gray" if gray else "")
            with open(os.path.join(OUT, stem + ".json"), "w") as f:
                json.dump(out, f, indent=1)
                f.write("\n")
            print("%s: %d frames" % (stem, len(frames)))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
