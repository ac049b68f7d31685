#!/usr/bin/python3
"""qmetric-bd against an independent computation of the Bjøntegaard deltas.

For random ladders (4 to 8 renditions, monotone, overlapping or shifted),
BD-rate and BD-quality from `qmetric-bd --json` must equal:
  polynomial: numpy.polyfit (cubic least squares) integrated with polyint;
  pchip:      scipy.interpolate.PchipInterpolator(...).integrate();
to 1e-9 (relative, or absolute near 0).  Also the errors: no overlap, too
few points, a missing column, repeated qualities.
Usage: bd_test.py PATH/TO/qmetric-bd   (SKIP, 77, without numpy/scipy)
"""
import json
import os
import random
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from scipy.interpolate import PchipInterpolator
except ImportError:
    print("SKIP: numpy/scipy missing (apt-get install python3-numpy python3-scipy)")
    sys.exit(77)

BD = sys.argv[1]
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what)


def ref_delta(xa, ya, xt, yt, interp):
    """Mean of (test - anchor) of y(x) over the common x range."""
    lo, hi = max(min(xa), min(xt)), min(max(xa), max(xt))
    def integral(x, y):
        o = np.argsort(x)
        x, y = np.asarray(x)[o], np.asarray(y)[o]
        if interp == "polynomial":
            p = np.polyint(np.polyfit(x, y, 3))
            return np.polyval(p, hi) - np.polyval(p, lo)
        return PchipInterpolator(x, y).integrate(lo, hi)
    return (integral(xt, yt) - integral(xa, ya)) / (hi - lo)


def reference(ra, qa, rt, qt, interp):
    la, lt = np.log10(ra), np.log10(rt)
    rate = (10 ** ref_delta(qa, la, qt, lt, interp) - 1) * 100
    qual = ref_delta(la, qa, lt, qt, interp)
    return rate, qual


def write_csv(path, rates, quals, names=("vmaf",)):
    with open(path, "w") as f:
        f.write("name,bitrate," + ",".join(names) + "\n")
        for i, r in enumerate(rates):
            f.write("r%d,%.17g,%s\n" % (i, r, ",".join("%.17g" % q[i] for q in quals)))


def run(*args):
    p = subprocess.run([BD] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


rng = random.Random(20261124)
with tempfile.TemporaryDirectory() as t:
    for trial in range(40):
        n_a, n_t = rng.randint(4, 8), rng.randint(4, 8)
        base = rng.uniform(150, 600)
        ra = sorted(base * (1.6 + rng.random()) ** k for k in range(n_a))
        rt = sorted(base * rng.uniform(0.6, 1.4) * (1.6 + rng.random()) ** k for k in range(n_t))
        # a saturating quality curve with noise, the way VMAF ladders look
        qa = sorted(100 - 60 * np.exp(-r / (3 * base)) + rng.uniform(-0.5, 0.5) for r in ra)
        gain = rng.uniform(-8, 8)
        qt = sorted(100 - 60 * np.exp(-r / (3 * base)) + gain + rng.uniform(-0.5, 0.5) for r in rt)
        pa, pt = os.path.join(t, "a.csv"), os.path.join(t, "t.csv")
        write_csv(pa, ra, [qa])
        write_csv(pt, rt, [qt])
        for interp in ("pchip", "polynomial"):
            rc, out, err = run("--json", "--interp", interp, pa, pt)
            try:
                ref_rate, ref_q = reference(ra, qa, rt, qt, interp)
            except Exception as e:  # noqa: BLE001 - the reference itself failed
                check(False, "reference computation: %s" % e)
                continue
            no_overlap = min(max(qa), max(qt)) <= max(min(qa), min(qt))
            if no_overlap:
                check(rc == 1 and "do not overlap" in err, "trial %d %s: no overlap must fail" % (trial, interp))
                continue
            if rc != 0:
                check(False, "trial %d %s: exit %d: %s" % (trial, interp, rc, err))
                continue
            got = json.loads(out)
            check(got["interpolation"] == interp, "interpolation named")
            m = got["tests"][0]["metrics"]["vmaf"]
            check(close(m["bd_rate_percent"], ref_rate),
                  "trial %d %s: BD-rate %r, reference %r" % (trial, interp, m["bd_rate_percent"], ref_rate))
            check(close(m["bd_quality"], ref_q),
                  "trial %d %s: BD-quality %r, reference %r" % (trial, interp, m["bd_quality"], ref_q))

    # identical ladders: 0 and 0
    write_csv(os.path.join(t, "a.csv"), [100, 200, 400, 800], [[60, 70, 80, 90]])
    rc, out, _ = run("--json", os.path.join(t, "a.csv"), "same=" + os.path.join(t, "a.csv"))
    m = json.loads(out)["tests"][0]["metrics"]["vmaf"] if rc == 0 else {}
    check(rc == 0 and abs(m["bd_rate_percent"]) < 1e-12 and abs(m["bd_quality"]) < 1e-12, "identical ladders")
    # half the bitrate everywhere: exactly -50% (log-rate shift) and a positive BD-quality
    write_csv(os.path.join(t, "h.csv"), [50, 100, 200, 400], [[60, 70, 80, 90]])
    for interp in ("pchip", "polynomial"):
        rc, out, _ = run("--json", "--interp", interp, os.path.join(t, "a.csv"), os.path.join(t, "h.csv"))
        m = json.loads(out)["tests"][0]["metrics"]["vmaf"]
        check(close(m["bd_rate_percent"], -50.0), "%s: halved rates give -50%% (%r)" % (interp, m["bd_rate_percent"]))
    # errors
    write_csv(os.path.join(t, "hi.csv"), [100, 200, 400, 800], [[91, 92, 93, 94]])
    rc, _, err = run(os.path.join(t, "a.csv"), os.path.join(t, "hi.csv"))
    check(rc == 1 and "do not overlap" in err, "no overlap: %d %s" % (rc, err))
    write_csv(os.path.join(t, "three.csv"), [100, 200, 400], [[60, 70, 80]])
    rc, _, err = run("--interp", "polynomial", os.path.join(t, "a.csv"), os.path.join(t, "three.csv"))
    check(rc == 1 and "at least 4 points" in err, "three points, polynomial: %d %s" % (rc, err))
    rc, _, err = run("--metric", "psnr_y", os.path.join(t, "a.csv"), os.path.join(t, "a.csv"))
    check(rc == 2 and "no column for the metric 'psnr_y'" in err, "missing column: %d %s" % (rc, err))
    write_csv(os.path.join(t, "rep.csv"), [100, 200, 400, 800], [[60, 70, 70, 90]])
    rc, _, err = run(os.path.join(t, "a.csv"), os.path.join(t, "rep.csv"))
    check(rc == 1 and "same quality at two rates" in err, "repeated quality: %d %s" % (rc, err))
    # JSON ladders (qmetric-compare's pooled objects) read like CSV
    with open(os.path.join(t, "a.json"), "w") as f:
        json.dump([{"bitrate": r, "vmaf": {"mean": q}} for r, q in zip([100, 200, 400, 800], [60, 70, 80, 90])], f)
    rc, out, _ = run("--json", os.path.join(t, "a.json"), os.path.join(t, "h.csv"))
    check(rc == 0 and close(json.loads(out)["tests"][0]["metrics"]["vmaf"]["bd_rate_percent"], -50.0), "JSON ladder")
    # the chart is written and names both ladders
    rc, _, _ = run("--plot", os.path.join(t, "rd.svg"), os.path.join(t, "a.csv"), os.path.join(t, "h.csv"))
    svg = open(os.path.join(t, "rd.svg")).read() if rc == 0 else ""
    check(rc == 0 and svg.startswith("<svg") and ">a</text>" in svg and ">h</text>" in svg, "chart")

    # the chart never replaces a ladder: the same name, a symbolic link, a
    # hard link, a NAME=FILE argument; the ladder is left as it was
    a_csv, h_csv = os.path.join(t, "a.csv"), os.path.join(t, "h.csv")
    before = open(a_csv).read()
    os.symlink(a_csv, os.path.join(t, "link.svg"))
    os.link(a_csv, os.path.join(t, "hard.svg"))
    for plot, test, named in ((a_csv, h_csv, a_csv), (os.path.join(t, "link.svg"), h_csv, a_csv),
                              (os.path.join(t, "hard.svg"), h_csv, a_csv),
                              (h_csv, "half=" + h_csv, h_csv)):
        rc, _, err = run("--plot", plot, a_csv, test)
        want = "--plot %s is the ladder %s (the same file)" % (plot, named)
        check(rc == 2 and want in err, "--plot over a ladder (%s): %d %s" % (plot, rc, err))
    check(open(a_csv).read() == before and open(h_csv).read().startswith("name,bitrate"),
          "a ladder was written over")

print("bd: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
