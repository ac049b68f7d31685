#!/usr/bin/env python3
"""ssim_ffmpeg (cpu/ssim_ffmpeg.c) against FFmpeg's own values: every frame's
Y, U, V and All of tests/data/ssim_ffmpeg/*.json (FFmpeg 5.1's ssim filter on
golden clips, as its stats_file prints them; scripts/ssim-ffmpeg-oracle.py)
must print the same six decimals from qmetric-yuv's full-precision rows, and
from the element's log on two of the cases (as planar files, and rewritten
in the semi-planar layout of a decoder's output: NV12, P010).  A case with
`crop` runs on the top-left W x H of the clips, one with `gray` on their
luma alone (GRAY input: Y and All), both cut here.  Also: a picture whose chroma planes
are smaller than 8x8 is refused with a message naming the metric.
With --backend cuda the same on the CUDA twin (qmetric-yuv --backend cuda,
the element's backend=cuda); SKIP (77) without a CUDA device.

usage: ssim_ffmpeg.py QMETRIC_YUV GOLDEN_DIR [GST_PLUGIN_DIR] [--backend cuda]
Exit: 0 pass, 1 fail (77: golden data missing, unless QMETRIC_GOLDEN_REQUIRED=1,
or no CUDA device for --backend cuda).
"""
import array, glob, json, os, shutil, subprocess, sys, tempfile

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, TESTS)
from golden_yuv import unxz  # noqa: E402 (tests/golden_yuv.py: the clips' decompression)

DATA = os.path.join(TESTS, "data", "ssim_ffmpeg")
FEATURES = ["ssim_ffmpeg_y", "ssim_ffmpeg_u", "ssim_ffmpeg_v", "ssim_ffmpeg_all"]
SUB = {"yuv420p": (1, 1), "yuv422p": (1, 0), "yuv444p": (0, 0)}
# the element on these (GStreamer's default layouts match the files'), as
# read and rewritten here in the semi-planar layout of a decoder's output
# (NV12; P010, samples MSB-aligned), which the CUDA backend reads as it is
# stored and the CPU backend from a planar copy.  (Not with videoconvert:
# its I420_10LE to P010 rounds some samples up by one.)
ELEMENT = {"ladybird_576x324_yuv420p_x264crf35": ("i420", "nv12", 0),
           "aqua_576x324_yuv420p10le_x264crf30": ("i420-10le", "p010-10le", 6)}
fails = 0
backend = "cpu"


def fail(msg):
    global fails
    fails += 1
    print("FAIL: " + msg)


def planes(c):
    """(width, height) of each plane of a case, chroma ceil-sized."""
    sx, sy = SUB[c["pix_fmt"][:7]]
    w, h = c["width"], c["height"]
    cw, ch = (w + sx) >> sx, (h + sy) >> sy
    return [(w, h), (cw, ch), (cw, ch)]


def cut(src, dst, c):
    """The top-left crop[0] x crop[1] of every frame (even sizes: chroma
    halves), or its luma plane alone (gray)."""
    bps = 1 if c["bitdepth"] == 8 else 2
    sx, sy = SUB[c["pix_fmt"][:7]]
    cw, ch = c["crop"] or (c["width"], c["height"])
    full = planes(c)
    part = [(cw, ch)] if c["gray"] else [(cw, ch), (cw >> sx, ch >> sy), (cw >> sx, ch >> sy)]
    fb = sum(w * h for w, h in full) * bps
    raw = open(src, "rb").read()
    out = bytearray()
    for f in range(len(raw) // fb):
        off = f * fb
        for (pw, ph), (qw, qh) in zip(full, part):
            for y in range(qh):
                row = off + y * pw * bps
                out += raw[row:row + qw * bps]
            off += pw * ph * bps
    open(dst, "wb").write(out)
    return dst


def printed(x):
    return "%f" % x


def compare(name, want, got, who):
    bad = 0
    if len(got) != len(want):
        fail("%s (%s): %d frames, FFmpeg %d" % (name, who, len(got), len(want)))
        return
    worst = 0.0
    for i, (w, g) in enumerate(zip(want, got)):
        for k in range(4):
            if w[k] is None or g[k] is None:  # GRAY: no U and V
                if w[k] != g[k]:
                    bad += 1
                    fail("%s (%s) frame %d %s: ours %s, FFmpeg %s"
                         % (name, who, i + 1, FEATURES[k], g[k], w[k]))
                continue
            worst = max(worst, abs(float(w[k]) - g[k]))
            if printed(g[k]) != w[k]:
                bad += 1
                if bad <= 3:
                    fail("%s (%s) frame %d %s: ours %.9f, FFmpeg %s"
                         % (name, who, i + 1, FEATURES[k], g[k], w[k]))
    print("%s (%s): %d frames, %s (worst |diff| to the printed value %.2g)"
          % (name, who, len(want), "ok" if not bad else "%d values differ" % bad, worst))


def run_yuv(tool, tmp, files, c):
    w, h = c["crop"] or (c["width"], c["height"])
    part, log = os.path.join(tmp, "part.json"), os.path.join(tmp, "log.json")
    cmd = [tool, "-r", files[0], "-d", files[1], "--width", str(w), "--height", str(h),
           "--pixel_format", "400" if c["gray"] else c["pix_fmt"][3:6],
           "--bitdepth", str(c["bitdepth"]),
           "--metrics", "ssim_ffmpeg", "--backend", backend, "--partial", part, "-o", log]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        fail("%s: qmetric-yuv exit %d: %s" % (c["case"], p.returncode, p.stderr.strip()))
        return None
    P = json.load(open(part))
    idx = [P["features"].index(f) for f in FEATURES]
    return [[r[k] for k in idx] for r in P["rows"]]


def semi_planar(src, dst, c, shift):
    """A 4:2:0 planar file rewritten with interleaved chroma (Cb first) and
    every sample shifted left by shift bits."""
    (w, h), (cw, ch), _ = planes(c)
    code = "B" if c["bitdepth"] == 8 else "H"
    frame = array.array(code).itemsize * (w * h + 2 * cw * ch)
    with open(src, "rb") as f, open(dst, "wb") as o:
        while True:
            b = f.read(frame)
            if len(b) < frame:
                break
            a = array.array(code, b)
            if shift:
                a = array.array(code, (v << shift for v in a))
            uv = array.array(code, [0]) * (2 * cw * ch)
            uv[0::2] = a[w * h:w * h + cw * ch]
            uv[1::2] = a[w * h + cw * ch:]
            o.write(a[:w * h].tobytes() + uv.tobytes())


def run_element(plugin_dir, tmp, files, c, fmt):
    env = dict(os.environ, GST_PLUGIN_PATH_1_0=plugin_dir)
    log = os.path.join(tmp, "element.json")
    parse = "rawvideoparse width=%d height=%d format=%s framerate=24/1" % (
        c["width"], c["height"], fmt)
    cmd = ("qmetric name=q metrics=ssim_ffmpeg backend=%s log-location=%s ! fakesink "
           "filesrc location=%s ! %s ! q.ref_sink filesrc location=%s ! %s ! q.dist_sink"
           % (backend, log, files[0], parse, files[1], parse)).split()
    p = subprocess.run(["gst-launch-1.0", "-q"] + cmd, env=env, capture_output=True,
                       text=True)
    if p.returncode:
        fail("%s: the element failed: %s" % (c["case"], (p.stdout + p.stderr)[-300:]))
        return None
    return [[f["metrics"][k] for k in FEATURES] for f in json.load(open(log))["frames"]]


def small_run(tool, tmp, size):
    """A two-frame size x size 4:2:0 run of the metric."""
    small = os.path.join(tmp, "small.yuv")
    open(small, "wb").write(bytes(i * 7 & 255 for i in range(size * size * 3)))
    return subprocess.run([tool, "-r", small, "-d", small, "--width", str(size),
                           "--height", str(size), "--pixel_format", "420",
                           "--metrics", "ssim_ffmpeg", "--backend", backend,
                           "-o", os.path.join(tmp, "small.json")],
                          capture_output=True, text=True)


def refused(tool, tmp):
    """14x14 4:2:0: 7x7 chroma planes, no 8x8 window."""
    p = small_run(tool, tmp, 14)
    if p.returncode != 2 or "ssim_ffmpeg cannot run" not in p.stderr:
        fail("14x14 4:2:0 not refused: exit %d, %s" % (p.returncode, p.stderr.strip()))


def main():
    global backend
    args = sys.argv[1:]
    if "--backend" in args:
        i = args.index("--backend")
        backend = args[i + 1]
        del args[i:i + 2]
    tool, golden = args[0], args[1]
    plugin_dir = args[2] if len(args) > 2 else None
    required = os.environ.get("QMETRIC_GOLDEN_REQUIRED") == "1"
    if not os.path.exists(os.path.join(golden, "manifest.json")):
        print("%s: golden data not found at %s" % ("FAIL" if required else "SKIP", golden))
        return 1 if required else 77
    element = plugin_dir and shutil.which("gst-launch-1.0")
    if not element:
        print("note: no gst-launch-1.0 or plugin directory: the element not checked")
    tmp = tempfile.mkdtemp(prefix="ssimff")
    try:
        if backend == "cuda":
            p = small_run(tool, tmp, 16)
            if p.returncode and "backend=cuda" in p.stderr:
                print("SKIP: no CUDA device (%s)" % p.stderr.strip())
                return 77
        refused(tool, tmp)
        cases = sorted(glob.glob(os.path.join(DATA, "*.json")))
        if not cases:
            fail("no oracle data in %s" % DATA)
        for path in cases:
            c = json.load(open(path))
            name = os.path.basename(path)[:-5]
            missing = [c[k] for k in ("ref", "dis") if not os.path.exists(os.path.join(golden, c[k]))]
            if missing:
                # a partial copy of the golden data (scripts/golden-subset.sh)
                (fail if required else print)("%s%s: not checked, %s missing in %s" % (
                    "" if required else "note: ", name, " and ".join(missing), golden))
                continue
            files = [os.path.join(tmp, os.path.basename(c[k])[:-3]) for k in ("ref", "dis")]
            for k, f in zip(("ref", "dis"), files):
                unxz(os.path.join(golden, c[k]), f)
            if c["crop"] or c["gray"]:
                files = [cut(f, os.path.join(tmp, "cut%d.yuv" % i), c)
                         for i, f in enumerate(files)]
            got = run_yuv(tool, tmp, files, c)
            if got is not None:
                compare(name, c["frames"], got, "qmetric-yuv")
            if element and name in ELEMENT:
                fmt, semi, shift = ELEMENT[name]
                got = run_element(plugin_dir, tmp, files, c, fmt)
                if got is not None:
                    compare(name, c["frames"], got, "element")
                sp = [os.path.join(tmp, "semi%d.yuv" % i) for i in range(2)]
                for f, d in zip(files, sp):
                    semi_planar(f, d, c, shift)
                got = run_element(plugin_dir, tmp, sp, c, semi)
                if got is not None:
                    compare(name, c["frames"], got, "element, %s" % semi)
    finally:
        shutil.rmtree(tmp)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
