#!/usr/bin/env python3
"""SSIMULACRA2 through the tools, on a golden case (issue 28): qmetric-yuv's
full-precision rows (--partial) against libjxl's printed values, every
frame within their 8 decimals, and its log's pooled values from those rows;
qmetric-compare on the same raw pair: the same pooled values (--summary
json), a --plot panel read as the descriptor says (SSIMULACRA2, unit
"score", higher is better: the worst frame is the lowest, no tick above
100) and --fail-below on it.  (Ladders, their chart and qmetric-bd:
tests/ladder.sh; chunks merged: tests/chunk.sh; the element: the golden
gate golden-ssimulacra2.)

usage: ssimulacra2_tools.py BUILD_DIR GOLDEN_DIR
Exit 77 (skip) without the golden data, unless QMETRIC_GOLDEN_REQUIRED=1.
"""
import json
import lzma
import os
import re
import shutil
import subprocess
import sys
import tempfile

CASE = "ladybird_576x324_yuv420p_x264crf35"
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def main():
    build, golden = sys.argv[1], sys.argv[2]
    man_path = os.path.join(golden, "ssimulacra2", "manifest.json")
    if not os.path.exists(man_path):
        print("SKIP: no SSIMULACRA2 golden data in " + golden)
        return 1 if os.environ.get("QMETRIC_GOLDEN_REQUIRED") == "1" else 77
    case = next(c for c in json.load(open(man_path))["cases"] if c["name"] == CASE)
    want = {f["frame"]: f["ssimulacra2"] for f in json.load(
        open(os.path.join(golden, "ssimulacra2", case["result"])))["frames"]}
    yuv = os.path.join(build, "tools", "qmetric-yuv")
    qc = os.path.join(build, "tools", "qmetric-compare")
    tmp = tempfile.mkdtemp()
    try:
        files = []
        for k in ("ref", "dis"):
            path = os.path.join(tmp, k + ".yuv")
            with lzma.open(os.path.join(golden, case[k])) as src, open(path, "wb") as dst:
                shutil.copyfileobj(src, dst)
            files.append(path)
        ref, dis = files
        geo = ["--width", str(case["width"]), "--height", str(case["height"])]

        # qmetric-yuv: every frame libjxl's value to its printed decimals
        log, part = os.path.join(tmp, "y.json"), os.path.join(tmp, "y.part")
        subprocess.run([yuv, "-r", ref, "-d", dis] + geo + ["--metrics", "ssimulacra2",
                       "--threads", "2", "-o", log, "--partial", part],
                       check=True, capture_output=True)
        rows = [r[0] for r in json.load(open(part))["rows"]]
        worst = max(abs(v - want[i]) for i, v in enumerate(rows))
        if len(rows) != len(want) or not worst < 1e-8:
            fail("qmetric-yuv: %d frames, worst |ours - libjxl| %g" % (len(rows), worst))
        pooled = json.load(open(log))["pooled_metrics"]["ssimulacra2"]
        mean = sum(rows) / len(rows)
        if abs(pooled["mean"] - mean) > 5e-7 or pooled["min"] != round(min(rows), 6):
            fail("qmetric-yuv pooled %s, rows' mean %.7f min %.7f" % (pooled, mean, min(rows)))

        # qmetric-compare on the raw pair: the same scores, the chart, a gate
        svg = os.path.join(tmp, "p.svg")
        cmd = [qc, ref, dis, "--size", "%dx%d" % (case["width"], case["height"]),
               "--metrics", "ssimulacra2", "-q"]
        p = subprocess.run(cmd + ["--summary", "json", "--plot", svg,
                                  "--plot-metrics", "ssimulacra2"],
                           capture_output=True, text=True)
        summary = json.loads(p.stdout) if p.returncode == 0 else {}
        cmean = summary.get("pooled_metrics", {}).get("ssimulacra2", {}).get("mean")
        if cmean is None or abs(cmean - mean) > 5e-7:
            fail("qmetric-compare: exit %d, mean %s, qmetric-yuv's %.9f: %s" % (
                p.returncode, cmean, mean, p.stderr[-300:]))
        text = open(svg).read() if os.path.exists(svg) else ""
        lowest = min(range(len(rows)), key=lambda i: rows[i])
        ticks = [float(t) for t in re.findall(r"text-anchor=.end.[^>]*>(-?[0-9.]+)</text>", text)]
        if "SSIMULACRA2 [score]" not in text or \
                "worst: %.2f at frame %d" % (rows[lowest], lowest) not in text or \
                not ticks or max(ticks) > 100:
            fail("qmetric-compare --plot: panel, worst frame %d or ticks %s" % (lowest, ticks))
        for gate, rc in (("ssimulacra2=%g" % (mean + 1), 1), ("ssimulacra2.min=%g" % (min(rows) - 1), 0)):
            p = subprocess.run(cmd + ["--fail-below", gate], capture_output=True, text=True)
            if p.returncode != rc:
                fail("--fail-below %s: exit %d, want %d: %s" % (gate, p.returncode, rc, p.stderr))
    finally:
        shutil.rmtree(tmp)
    if not failures:
        print("ssimulacra2 tools: %d frames within 1e-8 of libjxl (worst %.2g); "
              "compare, chart and gates ok" % (len(rows), worst))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
