"""qmetric-bench-probes' measurement machinery on a small CPU run (any
machine): the JSON it writes must describe every pushed pair as scored, with
positive, ordered latencies, and the same scores in every probe as in the
single-probe run.  The CUDA backend runs too where a GPU is (then the
pictures must have been read in place); without one it must exit 77.

usage: probes_bench.py QMETRIC_BENCH_PROBES"""
import json
import os
import subprocess
import sys
import tempfile

bench = sys.argv[1]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(args, name):
    out = os.path.join(tmp, name + ".json")
    p = subprocess.run([bench] + args + ["--json", out], capture_output=True, text=True,
                       timeout=120)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    doc = None
    if p.returncode == 0:
        with open(out) as f:
            doc = json.load(f)
    return p.returncode, doc


def sane_run(r, what, cuda=False):
    check(r["ok"], what + ": the run completed (" + r.get("error", "") + ")")
    check(r["pushed"] > 0 and r["scored"] == r["pushed"],
          "%s: every pushed pair scored (%d of %d)" % (what, r["scored"], r["pushed"]))
    check(r["summaries"] == r["probes"], what + ": one summary per probe")
    check(r["summary_frames"] == r["scored"], what + ": summaries count the scored frames")
    check(r["unmatched"] == 0, what + ": no unmatched frame")
    check(r["early"] == 0, what + ": no score before its look-ahead arrived")
    for key in ("latency", "ready", "e2e"):
        l = r[key]
        check(l["n"] > 0 and 0 < l["p50_ms"] <= l["p99_ms"] <= l["max_ms"] < 10000,
              "%s: %s percentiles positive and ordered (%s)" % (what, key, l))
    check(r["e2e"]["p50_ms"] >= r["latency"]["p50_ms"],
          what + ": push-to-message no shorter than arrival-to-message")
    check(r["latency"]["p50_ms"] >= r["ready"]["p50_ms"],
          what + ": latency from frame k no shorter than from frame k + look-ahead")
    check(r["stream_s"] > 0 and r["wall_s"] >= r["stream_s"] * 0.5,
          what + ": wall time and stream time")
    check(r["cpu_cores"] > 0, what + ": CPU use measured")
    check(r["score_mean"] is not None and 0 < r["score_mean"] < 100,
          what + ": VMAF between 0 and 100 (%s)" % r["score_mean"])
    if cuda:
        # the element counts buffers, and both pads carry CUDA memory here
        check(r["cuda_in_place"] == 2 * r["scored"] and r["cuda_copied"] == 0,
              "%s: CUDA memory read in place (%d buffers in place, %d copied, %d pairs)"
              % (what, r["cuda_in_place"], r["cuda_copied"], r["scored"]))
    else:
        check(r["gpu"] is None, what + ": no GPU figures on the CPU backend")


def sane(doc, what, n, cuda=False):
    sane_run(doc["single"], what + " single")
    check(len(doc["runs"]) == 1 and doc["runs"][0]["probes"] == n, what + ": one run of %d" % n)
    if doc["runs"]:
        r = doc["runs"][0]
        sane_run(r, what, cuda)
        check(r["score_compared"] > 0 and r["score_maxdiff"] == 0,
              what + ": every probe scores as one probe alone (%s compared, max diff %s)"
              % (r["score_compared"], r["score_maxdiff"]))


# a generous pairing latency: this checks the measurement, not real time, and
# on a loaded machine a feeder thread late by more than a frame period would
# otherwise make its frames late (unmatched) in the element
small = ["--width", "320", "--height", "180", "--duration", "2", "--warmup", "0.5",
         "--pair-latency", "250"]
with tempfile.TemporaryDirectory() as tmp:
    rc, doc = run(["--backend", "cpu", "--probes", "2"] + small, "memory")
    check(rc == 0, "cpu, frames from memory: exit 0 (%d)" % rc)
    if doc:
        sane(doc, "cpu memory", 2)
    # the distorted side through H.264: x264enc once, a software decoder live
    rc, doc = run(["--backend", "cpu", "--probes", "1", "--dist-source", "decode"] + small,
                  "decode")
    if rc == 77:
        print("decode: skipped (no x264enc or avdec_h264)")
    else:
        check(rc == 0, "cpu, distorted through H.264: exit 0 (%d)" % rc)
        if doc:
            sane(doc, "cpu decode", 1)
            check(doc["runs"][0]["score_mean"] < 99.99, "decoded pictures differ from the reference")
    rc, doc = run(["--backend", "cuda", "--probes", "1", "--no-single-check"] + small, "cuda")
    check(rc in (0, 77), "cuda: exit 0 or 77 (%d)" % rc)
    if rc == 0 and doc:
        sane_run(doc["runs"][0], "cuda", cuda=True)

print("%d passed, %d failed" % (0 if failures else 1, 1 if failures else 0))
sys.exit(1 if failures else 0)
