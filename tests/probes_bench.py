"""qmetric-bench-probes' measurement machinery on a small CPU run (any
machine): the JSON it writes must describe every pushed pair as scored, with
positive, ordered latencies, and the same scores in every probe as in the
single-probe run; the element's stage stamps must split every late score
(stall records); the decode-only baseline, both sides decoded, HEVC Main 10
(P010), the bisection and the time budget must say what they did.  The
CUDA backend runs too where a GPU is (then the pictures must have been read
in place); without one it must exit 77.

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
    kept_fields(r, what)
    check(r["score_mean"] is not None and 0 < r["score_mean"] < 100,
          what + ": VMAF between 0 and 100 (%s)" % r["score_mean"])
    if cuda:
        # the element counts buffers, and both pads carry CUDA memory here
        check(r["cuda_in_place"] == 2 * r["scored"] and r["cuda_copied"] == 0,
              "%s: CUDA memory read in place (%d buffers in place, %d copied, %d pairs)"
              % (what, r["cuda_in_place"], r["cuda_copied"], r["scored"]))
    else:
        check(r["gpu"] is None, what + ": no GPU figures on the CPU backend")


def kept_fields(r, what):
    """The density verdict's figures, whatever the verdict."""
    check(r["window_pairs"] > 0 and 0 <= r["window_kept"] <= r["window_pairs"],
          "%s: window pairs %s, kept %s" % (what, r["window_pairs"], r["window_kept"]))
    check(abs(r["kept_ratio"] - r["window_kept"] / r["window_pairs"]) < 1e-5,
          what + ": kept ratio")
    # the consumer's latency was queried: the latency property at least
    check(r["deadline_ms"] >= 16.6, what + ": deadline %s ms" % r["deadline_ms"])
    check(r["kept"] == (r["ok"] and r["kept_ratio"] >= 0.995 and
                        r["late_pushes"] <= r["pushed"] // 200),
          what + ": kept verdict from its figures")


def stall_segments(r, what):
    """--stall-ms 0: every ready latency is a stall record, split by the
    element's stamps into segments that add up to it."""
    st = r["stalls"]
    check(st["ready_over"] == r["ready"]["n"],
          "%s: a stall record per score (%s of %s)" % (what, st["ready_over"], r["ready"]["n"]))
    check(sum(st["by_cause"].values()) == st["ready_over"], what + ": causes add up")
    check(st["by_cause"]["unknown"] == 0, what + ": the element gave its stamps")
    check(0 < len(st["ready"]) <= 5, what + ": the worst records kept (%d)" % len(st["ready"]))
    totals = [x["total_ms"] for x in st["ready"]]
    check(totals == sorted(totals, reverse=True), what + ": worst first")
    segs = ("element_thread_ms", "map_ms", "submit_ms", "device_ms", "post_ms")
    for x in st["ready"]:
        known = all(x[k] is not None and x[k] >= 0 for k in segs)
        check(known, "%s: every segment known (%s)" % (what, x))
        if known:
            check(abs(sum(x[k] for k in segs) - x["total_ms"]) < 0.01,
                  "%s: segments add up to the total (%s)" % (what, x))
            check(x["waited_for"] + "_ms" == max(segs, key=lambda k: x[k]),
                  "%s: the longest segment named (%s)" % (what, x))
    check(sum(st["arrival_over"].values()) > 0 and st["arrival"],
          what + ": arrival records (push to the element's pad)")


def run_decoding(args, name, what):
    """A run through an encoder and a software decoder: None when they are
    missing here (exit 77), else its JSON once it exited 0."""
    rc, doc = run(args, name)
    if rc == 77:
        print("%s: skipped (no encoder or software decoder)" % what)
        return None
    check(rc == 0, "%s: exit 0 (%d)" % (what, rc))
    return doc


def sane(doc, what, n, cuda=False):
    sane_run(doc["single"], what + " single")
    check(len(doc["runs"]) == 1 and doc["runs"][0]["probes"] == n, what + ": one run of %d" % n)
    if doc["runs"]:
        r = doc["runs"][0]
        sane_run(r, what, cuda)
        check(r["score_compared"] > 0 and r["score_maxdiff"] == 0,
              what + ": every probe scores as one probe alone (%s compared, max diff %s)"
              % (r["score_compared"], r["score_maxdiff"]))


# a long latency: a loaded machine (tests run side by side) loses no pair
small = ["--width", "320", "--height", "180", "--duration", "2", "--warmup", "0.5",
         "--pair-latency", "1000"]
with tempfile.TemporaryDirectory() as tmp:
    rc, doc = run(["--backend", "cpu", "--probes", "2", "--stall-ms", "0", "--stall-records", "5"]
                  + small, "memory")
    check(rc == 0, "cpu, frames from memory: exit 0 (%d)" % rc)
    if doc:
        sane(doc, "cpu memory", 2)
        if doc["runs"]:
            stall_segments(doc["runs"][0], "cpu memory")
    # the distorted side through H.264: x264enc once, a software decoder live
    doc = run_decoding(["--backend", "cpu", "--probes", "1", "--dist-source", "decode"] + small,
                       "decode", "cpu, distorted through H.264")
    if doc:
        sane(doc, "cpu decode", 1)
        check(doc["runs"][0]["score_mean"] < 99.99, "decoded pictures differ from the reference")
        check(doc["runs"][0]["decode"]["n"] > 0, "decode: arrival - push of the decoded side")
    # both sides decoded (contribution against distribution), with the
    # decode-only baseline in the same invocation
    doc = run_decoding(["--backend", "cpu", "--probes", "1", "--dist-source", "decode",
                        "--ref-source", "decode", "--ref-bitrate", "1500", "--baseline"]
                       + small, "both",
                       "cpu, both sides through H.264")
    if doc:
        sane(doc, "cpu both decoded", 1)
        check(doc["ref_source"] == "decode" and doc["dist_source"] == "decode", "both: sources")
        b = doc.get("baseline", {})
        check(len(b.get("runs", [])) == 1, "both: one baseline run")
        for r in b.get("runs", []):
            check(r["sink"] == "fakesink" and r["ok"], "baseline: fakesink run completed")
            check(r["scored"] == 0 and r["summaries"] == 0, "baseline: nothing scored")
            check(r["decode"]["n"] == 2 * r["window_pairs"],
                  "baseline: both sides decoded (%s)" % r["decode"])
            kept_fields(r, "baseline")
            check(r["deadline_ms"] >= 1000, "baseline: the same latency property allowed")
        check(doc["max_kept_decode_only"] == b.get("max_kept"),
              "both: decode-only maximum reported")
        check(doc["ratio"] is None if not doc["max_kept_decode_only"] else
              abs(doc["ratio"] - doc["max_kept_probes"] / doc["max_kept_decode_only"]) < 1e-3,
              "both: the ratio (%s)" % doc["ratio"])
    # HEVC Main 10: P010 pictures, the distorted side through x265enc and
    # a software decoder
    doc = run_decoding(["--backend", "cpu", "--probes", "1", "--bits", "10", "--dist-source",
                        "decode", "--bitrate", "1500"] + small,
                       "hevc10", "cpu, HEVC Main 10")
    if doc:
        check(doc["format"] == "P010_10LE" and doc["codec"] == "h265",
              "hevc: P010 and H.265 (%s, %s)" % (doc["format"], doc["codec"]))
        sane(doc, "cpu hevc main 10", 1)
        check(doc["runs"][0]["score_mean"] < 99.99, "hevc: decoded pictures differ")
    # the bisection: every count run is in the range, the maximum kept is
    # what the runs say
    rc, doc = run(["--backend", "cpu", "--bisect", "1:3", "--no-single-check"] + small,
                  "bisect")
    check(rc == 0, "cpu, bisect: exit 0 (%d)" % rc)
    if doc:
        ns = [r["probes"] for r in doc["runs"]]
        check(doc["search"]["bisect"] == [1, 3] and 1 <= len(ns) <= 3 and
              all(1 <= n <= 3 for n in ns) and len(set(ns)) == len(ns), "bisect: runs %s" % ns)
        kept = [r["probes"] for r in doc["runs"] if r["kept"]]
        lost = [r["probes"] for r in doc["runs"] if not r["kept"]]
        check(doc["max_kept_probes"] == max(kept, default=0) and
              doc["min_not_kept"] == min(lost, default=None),
              "bisect: maximum %s / %s from runs kept %s, not %s"
              % (doc["max_kept_probes"], doc["min_not_kept"], kept, lost))
    # a time budget smaller than one run: nothing runs, and it says why
    rc, doc = run(["--backend", "cpu", "--sweep", "1,2", "--time-budget", "0.5",
                   "--no-single-check"] + small, "budget")
    check(rc == 0 and doc and doc["runs"] == [] and doc["search_ended"] == "budget",
          "time budget: no run, ended by the budget")
    # bad arguments: exit 2 with the tool's name
    for bad in (["--bisect", "5:2"], ["--baseline"], ["--bits", "12"],
                ["--dist-file", "x.h264"], ["--cuda-sched", "fast"],
                ["--cuda-context", "per-probe"]):
        p = subprocess.run([bench, "--backend", "cpu"] + bad, capture_output=True, text=True,
                           timeout=60)
        check(p.returncode == 2 and p.stderr.startswith("qmetric-bench-probes:"),
              "%s: exit 2 with a message (%d, %s)" % (bad, p.returncode, p.stderr.strip()))
    rc, doc = run(["--backend", "cuda", "--probes", "1", "--no-single-check"] + small, "cuda")
    check(rc in (0, 77), "cuda: exit 0 or 77 (%d)" % rc)
    if rc == 0 and doc:
        sane_run(doc["runs"][0], "cuda", cuda=True)

print("%d passed, %d failed" % (0 if failures else 1, 1 if failures else 0))
sys.exit(1 if failures else 0)
