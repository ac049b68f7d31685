#!/usr/bin/env python3
"""XPSNR (cpu/xpsnr.c, through qmetric-yuv and the element) against a second
implementation of FFmpeg n7.1's xpsnr filter written here with numpy, where
FFmpeg's own values (../shared/golden/xpsnr) do not reach: the second-order
temporal term (32 fps and up), the 2x2-group filters above 2048x1152 at that
order, 16-bit samples (read as int16_t by the filter), 4:0:0, 4:2:2 at odd
sizes, pictures too small for blocks.  The model is first checked against
FFmpeg's values (golden cases at 24 fps, the 4K one included), then every
frame of ours must equal it to the last bit (the weighted SSE is an integer,
the steps after it are the same double operations) and the pooled values of
the log's aggregate_metrics must be within 1e-6.  Also: the element takes the
order from the distorted input's caps (framerate 60/1 against 24/1), and a
picture above 2048x1152 with an odd side is refused with a message.

usage: xpsnr_test.py QMETRIC_YUV GOLDEN_DIR [GST_PLUGIN_DIR]
Exit: 0 pass, 1 fail (77: golden data missing, unless QMETRIC_GOLDEN_REQUIRED=1).
"""
import json, lzma, math, os, shutil, subprocess, sys, tempfile

try:
    import numpy as np
except ImportError:  # CI installs it (scripts/install-deps.sh); the GPU machine may not
    print("SKIP: numpy missing (apt-get install python3-numpy)")
    sys.exit(77)


# ---- the model: vf_xpsnr.c at n7.1, read for its arithmetic ----

def s16(a):
    """Samples as the filter's int16_t buffers hold them."""
    return ((a.astype(np.int64) + 32768) % 65536) - 32768


def block_sums(a, b, hb, wb):
    """Sums of a over the b x b blocks of a (hb x wb grid)."""
    h, w = a.shape
    p = np.zeros((hb * b, wb * b), dtype=np.int64)
    p[:h, :w] = a
    return p.reshape(hb, b, wb, b).sum(axis=(1, 3))


class Xpsnr:
    def __init__(self, w, h, bpc, chroma, fps):
        self.w, self.h, self.bpc = w, h, bpc
        sx, sy = {"420": (1, 1), "422": (1, 0), "444": (0, 0), "400": (0, 0)}[chroma]
        self.np = 1 if chroma == "400" else 3
        self.pw = [w] + [(w + sx) >> sx] * 2
        self.ph = [h] + [(h + sy) >> sy] * 2
        r = float((w * h) & 0xFFFFFFFF) / (3840.0 * 2160.0)
        b = 4 * int(32.0 * math.sqrt(r) + 0.5)
        self.b = b if b >= 4 else 0
        self.ds = 2 if w * h > 2048 * 1152 else 1
        self.second = fps >= 32
        self.smooth = w * h <= 640 * 480
        self.avg = math.sqrt(16.0 * float(1 << (2 * bpc - 9)) / math.sqrt(max(0.00001, r)))
        self.least = float(1 << (bpc - 6))
        peak = (1 << bpc) - 1
        self.num = [self.pw[p] * self.ph[p] * peak * peak for p in range(3)]
        self.m1 = np.zeros((h, w), dtype=np.int64)
        self.m2 = np.zeros((h, w), dtype=np.int64)

    def frame(self, ref, dis):
        """ref, dis: lists of planes (int64 arrays); returns the WSSE per plane."""
        if not self.b:
            return [int(((ref[p] - dis[p]) ** 2).sum()) for p in range(self.np)]
        w, h, b, ds = self.w, self.h, self.b, self.ds
        wb, hb = (w + b - 1) // b, (h + b - 1) // b
        c = s16(ref[0])
        sse = [block_sums((ref[0] - dis[0]) ** 2, b, hb, wb)]
        if ds == 1:
            hp = np.zeros((h, w), dtype=np.int64)
            if h > 2 and w > 2:
                m = c[1:-1, 1:-1]
                cross = c[1:-1, :-2] + c[1:-1, 2:] + c[:-2, 1:-1] + c[2:, 1:-1]
                diag = c[:-2, :-2] + c[:-2, 2:] + c[2:, :-2] + c[2:, 2:]
                hp[1:-1, 1:-1] = np.abs(12 * m - 2 * cross - diag)
            sa = block_sums(hp, b, hb, wb)
            t = c - 2 * self.m1 + self.m2 if self.second else c - self.m1
            ta = 2 * block_sums(np.abs(t), b, hb, wb)
        else:
            g = np.zeros((h // 2, w // 2), dtype=np.int64)  # at the groups' origins
            def at(dx, dy):  # c[y + dy, x + dx] for the groups with 2 <= x, y < size - 2
                return c[2 + dy:h - 2 + dy:2, 2 + dx:w - 2 + dx:2]
            centre = at(0, 0) + at(1, 0) + at(0, 1) + at(1, 1)
            vert = at(0, -1) + at(1, -1) + at(0, 2) + at(1, 2)
            horz = at(-1, 0) + at(2, 0) + at(-1, 1) + at(2, 1)
            corner = at(-1, -1) + at(2, -1) + at(-1, 2) + at(2, 2)
            outer = (at(-1, -2) + at(0, -2) + at(1, -2) + at(2, -2) + at(-1, 3) + at(0, 3) +
                     at(1, 3) + at(2, 3) + at(-2, -1) + at(-2, 0) + at(-2, 1) + at(-2, 2) +
                     at(3, -1) + at(3, 0) + at(3, 1) + at(3, 2))
            g[1:-1, 1:-1] = np.abs(12 * centre - 3 * vert - 3 * horz - 2 * corner - outer)
            sa = block_sums(g, b // 2, hb, wb)
            def s4(a):
                return a[0::2, 0::2] + a[0::2, 1::2] + a[1::2, 0::2] + a[1::2, 1::2]
            t = s4(c) - 2 * s4(self.m1) + s4(self.m2) if self.second else s4(c) - s4(self.m1)
            ta = 2 * block_sums(np.abs(t), b // 2, hb, wb)
        self.m2, self.m1 = self.m1, c
        wts = []
        for k in range(wb * hb):
            x0, y0 = (k % wb) * b, (k // wb) * b
            bw, bh = min(b, w - x0), min(b, h - y0)
            xa, ya = (0 if x0 > 0 else ds), (0 if y0 > 0 else ds)
            wa = bw if x0 + bw < w else bw - ds
            ha = bh if y0 + bh < h else bh - ds
            if wa <= xa or ha <= ya:
                wts.append(1.0)
                continue
            s = int(sa[k // wb, k % wb]) if (ds == 1 or wa > 12) else 0
            a = float(s) / (float(wa - xa) * float(ha - ya))
            a += float(int(ta[k // wb, k % wb])) / (float(bw) * float(bh))
            if a < self.least:
                a = self.least
            a *= a
            wts.append(1.0 / math.sqrt(a))
        if self.smooth:
            for i in range(wb * hb):
                x, y = (i % wb) * b, (i // wb) * b
                if x == 0:
                    p = wts[i - 2] if i > 1 else 0.0
                else:
                    p = (wts[i - 2] if wts[i - 2] > wts[i] else wts[i]) if x > b else wts[i]
                if i > wb:
                    p = p if p > wts[i - 1 - wb] else wts[i - 1 - wb]
                if i > 0 and wts[i - 1] > p:
                    wts[i - 1] = p
                if x + b >= w and y + b >= h and i > wb:
                    p = wts[i - 1] if wts[i - 1] > wts[i - wb] else wts[i - wb]
                    if wts[i] > p:
                        wts[i] = p
        for p in range(1, self.np):
            bx, by = b * self.pw[p] // w, b * self.ph[p] // h
            e = (ref[p] - dis[p]) ** 2
            sse.append(np.array([[int(e[y:y + by, x:x + bx].sum())
                                  for x in range(0, self.pw[p], bx)]
                                 for y in range(0, self.ph[p], by)]))
        out = []
        for p in range(self.np):
            acc = 0.0
            flat = sse[p].reshape(-1)
            for k in range(wb * hb):
                acc += float(int(flat[k])) * wts[k]
            out.append(0 if acc <= 0.0 else int(acc * self.avg + 0.5))
        return out

    def db(self, p, wsse):
        d = math.sqrt(float(wsse))
        return math.inf if not d >= 1.0 else 10.0 * math.log10(float(self.num[p]) / (d * d))

    def pooled(self, p, wsses):
        s = sum(math.sqrt(float(x)) for x in wsses)
        n = len(wsses)
        if s >= n:
            d = s / n
            return 10.0 * math.log10(float(self.num[p]) / (d * d))
        return sum(self.db(p, x) for x in wsses) / n


# ---- inputs ----

def planes_of(raw, w, h, bpc, chroma):
    dt = np.dtype(np.uint8) if bpc == 8 else np.dtype("<u2")
    sx, sy = {"420": (1, 1), "422": (1, 0), "444": (0, 0), "400": (0, 0)}[chroma]
    sizes = [(h, w)] + ([] if chroma == "400" else [((h + sy) >> sy, (w + sx) >> sx)] * 2)
    fb = sum(a * b for a, b in sizes) * (1 if bpc == 8 else 2)
    frames = []
    for f in range(len(raw) // fb):
        a = np.frombuffer(raw, dtype=dt, count=fb // dt.itemsize, offset=f * fb)
        out, o = [], 0
        for (ph, pw) in sizes:
            out.append(a[o:o + ph * pw].reshape(ph, pw).astype(np.int64))
            o += ph * pw
        frames.append(out)
    return frames


def synthetic(w, h, bpc, chroma, n, seed):
    """A moving textured picture and a noisy copy (realistic activity)."""
    rng = np.random.default_rng(seed)
    peak = (1 << bpc) - 1
    sx, sy = {"420": (1, 1), "422": (1, 0), "444": (0, 0), "400": (0, 0)}[chroma]
    sizes = [(h, w)] + ([] if chroma == "400" else [((h + sy) >> sy, (w + sx) >> sx)] * 2)
    ref, dis = bytearray(), bytearray()
    base = [rng.integers(0, peak + 1, size=s) for s in sizes]
    for f in range(n):
        for p, (ph, pw) in enumerate(sizes):
            yy, xx = np.mgrid[0:ph, 0:pw]
            wave = (np.sin((xx + 3 * f) / 7.0) + np.cos((yy - 2 * f) / 5.0)) * peak / 4
            r = np.clip(base[p] // 2 + wave + peak // 4, 0, peak).astype(np.int64)
            d = np.clip(r + rng.integers(-peak // 16, peak // 16 + 1, size=(ph, pw)), 0, peak)
            dt = np.uint8 if bpc == 8 else np.dtype("<u2")
            ref += r.astype(dt).tobytes()
            dis += d.astype(dt).tobytes()
    return bytes(ref), bytes(dis)


# ---- the checks ----

fails = 0


def fail(msg):
    global fails
    fails += 1
    print("FAIL: " + msg)


def run_yuv(tool, tmp, refp, disp, w, h, bpc, chroma, fps):
    part, log = os.path.join(tmp, "part.json"), os.path.join(tmp, "log.json")
    cmd = [tool, "-r", refp, "-d", disp, "--width", str(w), "--height", str(h),
           "--pixel_format", chroma, "--bitdepth", str(bpc), "--metrics", "xpsnr",
           "--fps", str(fps), "--partial", part, "-o", log]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        return None, p.stderr.strip()
    P, L = json.load(open(part)), json.load(open(log))
    rows = [[math.inf if v == "inf" else v for v in r] for r in P["rows"]]
    return (P["features"], rows, L.get("aggregate_metrics", {})), None


def compare(name, model, frames, got):
    feats, rows, agg = got
    wsses = [[] for _ in range(model.np)]
    bad = 0
    for i, (r, d) in enumerate(frames):
        ws = model.frame(r, d)
        for p in range(model.np):
            wsses[p].append(ws[p])
            ours = rows[i][feats.index("xpsnr_" + "yuv"[p])]
            want = model.db(p, ws[p])
            if ours != want:
                bad += 1
                if bad <= 3:
                    fail("%s frame %d plane %d: ours %.17g, model %.17g" % (name, i, p, ours, want))
    for p in range(model.np):
        want, ours = model.pooled(p, wsses[p]), agg.get("xpsnr_" + "yuv"[p])
        ok = (ours is None and math.isinf(want)) or (ours is not None and abs(ours - want) < 1e-6)
        if not ok:
            fail("%s pooled plane %d: ours %s, model %.9f" % (name, p, ours, want))
    print("%s: %d frames, %s" % (name, len(frames), "ok" if not bad else "%d differ" % bad))


def unxz(src, dst):
    if not os.path.exists(dst):
        with lzma.open(src) as f, open(dst + ".part", "wb") as o:
            shutil.copyfileobj(f, o, 1 << 20)
        os.replace(dst + ".part", dst)
    return dst


def golden_case(golden, tmp, name):
    man = json.load(open(os.path.join(golden, "xpsnr", "manifest.json")))
    c = next(c for c in man["cases"] if c["name"] == name)
    files = [unxz(os.path.join(golden, "xpsnr", c[k]),
                  os.path.join(tmp, os.path.basename(c[k])[:-3])) for k in ("ref", "dis")]
    chroma = c["pix_fmt"][3:6]
    return c, files, chroma


def element_rate(plugin_dir, tmp, c, files, chroma, tool):
    """The element's order follows the distorted caps' rate."""
    if not shutil.which("gst-launch-1.0"):
        print("note: no gst-launch-1.0: the element's frame rate not checked")
        return
    w, h = c["width"], c["height"]
    fmt = {"420": "i420", "422": "y42b", "444": "y444"}[chroma]
    env = dict(os.environ, GST_PLUGIN_PATH_1_0=plugin_dir)

    def launch(caps_rate, props, log):
        parse = ("rawvideoparse width=%d height=%d format=%s framerate=%d/1 frame-size=%d"
                 % (w, h, fmt, caps_rate, c["frame_bytes"]))
        cmd = ("qmetric name=q %s log-location=%s ! fakesink filesrc location=%s ! "
               "%s ! q.ref_sink filesrc location=%s ! %s ! q.dist_sink"
               % (props, log, files[0], parse, files[1], parse)).split()
        return subprocess.run(["gst-launch-1.0", "-q"] + cmd, env=env, capture_output=True,
                              text=True)

    # an instance's own rate; two instances told apart by it alone are refused
    log = os.path.join(tmp, "opt.json")
    p = launch(24, "metrics=psnr features=xpsnr=fps=60", log)
    got, err = run_yuv(tool, tmp, files[0], files[1], w, h, 8, chroma, 60)
    if p.returncode:
        fail("features=xpsnr=fps=60: %s" % p.stderr[-300:])
    else:
        el = json.load(open(log))["frames"]
        worst = max(abs(f["metrics"]["xpsnr_y"] - got[1][i][got[0].index("xpsnr_y")])
                    for i, f in enumerate(el))
        if worst > 6e-7:
            fail("features=xpsnr=fps=60 at 24/1 caps is not --fps 60 (%g)" % worst)
    p = launch(24, "metrics=xpsnr features=xpsnr=fps=60", log)
    if p.returncode == 0 or "write the key 'xpsnr_y'" not in p.stdout + p.stderr:
        fail("metrics=xpsnr features=xpsnr=fps=60 not refused: %s" % (p.stdout + p.stderr)[-300:])
    # the distorted input's rate decides, whichever pad's caps come first:
    # a 60 fps reference against 30 fps distorted pairs the even reference
    # frames with every distorted one, at 30 fps (first-order)
    ref_raw = open(files[0], "rb").read()
    fb = c["frame_bytes"]
    even = os.path.join(tmp, "even.yuv")
    open(even, "wb").write(b"".join(ref_raw[i * fb:(i + 1) * fb]
                                    for i in range(0, len(ref_raw) // fb, 2)))
    half = os.path.join(tmp, "half.yuv")
    open(half, "wb").write(open(files[1], "rb").read()[:fb * (len(ref_raw) // fb // 2)])
    got, err = run_yuv(tool, tmp, even, half, w, h, 8, chroma, 30)
    for attempt in range(3):  # the caps' order varies from run to run
        log = os.path.join(tmp, "rates.json")
        parse = ("rawvideoparse width=%d height=%d format=%s framerate=%%d/1 frame-size=%d"
                 % (w, h, fmt, fb))
        cmd = ("qmetric name=q metrics=xpsnr log-location=%s ! fakesink filesrc location=%s ! "
               "%s ! q.ref_sink filesrc location=%s ! %s ! q.dist_sink"
               % (log, files[0], parse % 60, half, parse % 30)).split()
        p = subprocess.run(["gst-launch-1.0", "-q"] + cmd, env=env, capture_output=True,
                           text=True)
        el = json.load(open(log))["frames"] if not p.returncode else []
        if len(el) != len(got[1]):
            fail("60/1 reference, 30/1 distorted: %d pairs, expected %d %s" %
                 (len(el), len(got[1]), p.stderr[-300:]))
            break
        worst = max(abs(f["metrics"][k] - got[1][i][got[0].index(k)])
                    for i, f in enumerate(el) for k in ("xpsnr_y", "xpsnr_u", "xpsnr_v"))
        if worst > 6e-7:
            fail("60/1 reference, 30/1 distorted: not the 30 fps order (%g)" % worst)
            break
    for rate in (24, 60):
        log = os.path.join(tmp, "el%d.json" % rate)
        p = launch(rate, "metrics=xpsnr", log)
        if p.returncode:
            fail("element at %d fps: %s" % (rate, p.stderr.strip()[-300:]))
            continue
        got, err = run_yuv(tool, tmp, files[0], files[1], w, h, 8, chroma, rate)
        el = json.load(open(log))["frames"]
        feats, rows, _ = got
        worst = max(abs(f["metrics"][k] - rows[i][feats.index(k)])
                    for i, f in enumerate(el) for k in ("xpsnr_y", "xpsnr_u", "xpsnr_v"))
        # the log prints 6 decimals
        if worst > 6e-7:
            fail("element at %d fps differs from qmetric-yuv --fps %d by %g" % (rate, rate, worst))
        else:
            print("element at %d/1 fps: the order of --fps %d (worst %.1e)" % (rate, rate, worst))


def main():
    tool, golden = sys.argv[1], sys.argv[2]
    plugin_dir = sys.argv[3] if len(sys.argv) > 3 else None
    if not os.path.exists(os.path.join(golden, "xpsnr", "manifest.json")):
        print("SKIP: no XPSNR golden data in %s" % golden)
        return 1 if os.environ.get("QMETRIC_GOLDEN_REQUIRED") == "1" else 77
    tmp = tempfile.mkdtemp(prefix="qm-xpsnr")
    try:
        # the model against FFmpeg's own values, then ours against the model
        for name, fps_list in (("ladybird_576x324_yuv420p_x264crf35", (24, 60)),
                               ("aqua_3840x2160_yuv420p_x264crf28", (24, 60)),
                               ("garden_576x324_yuv422p_x264crf32", (50,))):
            c, files, chroma = golden_case(golden, tmp, name)
            frames = planes_of(open(files[0], "rb").read(), c["width"], c["height"],
                               c["bitdepth"], chroma)
            dframes = planes_of(open(files[1], "rb").read(), c["width"], c["height"],
                                c["bitdepth"], chroma)
            pairs = list(zip(frames, dframes))
            gold = json.load(open(os.path.join(golden, "xpsnr", c["result"])))
            m = Xpsnr(c["width"], c["height"], c["bitdepth"], chroma, 24)
            for i, (r, d) in enumerate(pairs):
                ws = m.frame(r, d)
                fp = gold["frames"][i]["metrics_full_precision"]
                if ws != [fp["wsse_" + k] for k in "yuv"]:
                    fail("model: %s frame %d: WSSE %s, FFmpeg %s" %
                         (name, i, ws, [fp["wsse_" + k] for k in "yuv"]))
                    break
            for fps in fps_list:
                got, err = run_yuv(tool, tmp, files[0], files[1], c["width"], c["height"],
                                   c["bitdepth"], chroma, fps)
                if err:
                    fail("%s: %s" % (name, err))
                    continue
                compare("%s at %d fps" % (name, fps),
                        Xpsnr(c["width"], c["height"], c["bitdepth"], chroma, fps), pairs, got)
            if name.startswith("ladybird") and plugin_dir:
                element_rate(plugin_dir, tmp, c, files, chroma, tool)
        # synthetic: what the golden set has no case of
        for (w, h, bpc, chroma, fps, n) in ((700, 500, 16, "444", 50, 4),  # int16 view
                                            (333, 211, 10, "400", 30, 4),  # luma only, odd
                                            (641, 363, 10, "422", 60, 4),  # odd 4:2:2
                                            (40, 30, 8, "420", 24, 3),     # no blocks
                                            (64, 48, 12, "420", 32, 4),    # 4x4 blocks
                                            (2050, 1152, 12, "420", 60, 3)):  # 2x2 groups
            ref, dis = synthetic(w, h, bpc, chroma, n, w * h)
            rp, dp = os.path.join(tmp, "s_ref.yuv"), os.path.join(tmp, "s_dis.yuv")
            open(rp, "wb").write(ref)
            open(dp, "wb").write(dis)
            got, err = run_yuv(tool, tmp, rp, dp, w, h, bpc, chroma, fps)
            if err:
                fail("%dx%d: %s" % (w, h, err))
                continue
            pairs = list(zip(planes_of(ref, w, h, bpc, chroma), planes_of(dis, w, h, bpc, chroma)))
            compare("%dx%d %d-bit %s at %d fps" % (w, h, bpc, chroma, fps),
                    Xpsnr(w, h, bpc, chroma, fps), pairs, got)
        # above 2048x1152 an odd side would make FFmpeg read outside the picture
        ref, dis = synthetic(2049, 1154, 8, "420", 1, 1)
        open(rp, "wb").write(ref)
        open(dp, "wb").write(dis)
        got, err = run_yuv(tool, tmp, rp, dp, 2049, 1154, 8, "420", 24)
        if not err or "xpsnr" not in err:
            fail("2049x1154: expected a refusal naming xpsnr, got %s" % (err or "scores"))
        else:
            print("2049x1154 refused: %s" % err)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("xpsnr: %s" % ("%d failed" % fails if fails else "all passed"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
