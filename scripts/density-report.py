#!/usr/bin/python3
"""The figures of record of a scripts/gpu-density.sh run, from what its
sections wrote (qmetric-bench-probes JSON, compare.tsv, probe.json): a JSON
summary and the text table printed on stdout, in the shape of the live-density
table of docs/benchmarks.md.  A section that did not run says why.

usage: density-report.py WORKDIR OUT.json"""
import glob
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"missing": "%s: %s" % (os.path.basename(path), e)}


def lat(r, key):
    x = r.get(key) or {}
    return [x.get("p50_ms"), x.get("p99_ms"), x.get("max_ms")]


def run_row(r):
    """What a run says, for the figures of record."""
    gpu = r.get("gpu") or {}
    st = r.get("stalls") or {}
    return {
        "probes": r["probes"], "sink": r.get("sink"), "ok": r.get("ok"), "kept": r.get("kept"),
        "kept_ratio": r.get("kept_ratio"), "scored_ratio": r.get("scored_ratio"),
        "pairs_scored": r.get("scored"), "pairs_pushed": r.get("pushed"),
        "skipped": r.get("skipped"), "unmatched": r.get("unmatched"),
        "ready_ms": lat(r, "ready"), "latency_ms": lat(r, "latency"),
        "decode_ms": lat(r, "decode"), "deadline_ms": r.get("deadline_ms"),
        "late_pushes": r.get("late_pushes"), "cpu_cores": r.get("cpu_cores"),
        "gpu_util": gpu.get("util_mean"), "nvdec_util": gpu.get("dec_mean"),
        "score_maxdiff": r.get("score_maxdiff"),
        "stalls_ready": st.get("ready_over"), "stalls_by_cause": st.get("by_cause"),
        "stalls_arrival": st.get("arrival_over"), "error": r.get("error"),
    }


def density(doc):
    if "missing" in doc:
        return doc
    out = {"probes_kept": doc.get("max_kept_probes"),
           "probes_not_kept": doc.get("min_not_kept"),
           "decode_only_kept": doc.get("max_kept_decode_only"),
           "ratio": doc.get("ratio"),
           "runs": [run_row(r) for r in doc.get("runs", [])],
           "config": {k: doc.get(k) for k in ("width", "height", "fps", "format", "codec",
                                              "decoder", "ref_source", "dist_source",
                                              "dist_kbps", "ref_kbps", "distinct",
                                              "pair_latency_ms", "duration_s", "warmup_s",
                                              "search", "cuda_sched", "cuda_context")}}
    b = doc.get("baseline")
    if b:
        out["decode_only_not_kept"] = b.get("min_not_kept")
        out["baseline_runs"] = [run_row(r) for r in b.get("runs", [])]
        out["baseline_ended"] = b.get("search_ended")
    out["search_ended"] = doc.get("search_ended")
    # the runs at the largest count kept and at the smallest not kept
    for key, n in (("at_kept", out["probes_kept"]), ("at_not_kept", out["probes_not_kept"])):
        at = [r for r in out["runs"] if n and r["probes"] == n]
        out[key] = at[0] if at else None
    every = [r for r in doc.get("runs", []) if r.get("ready", {}).get("n")]
    if every:
        out["ready_p99_ms_range"] = [min(r["ready"]["p99_ms"] for r in every),
                                     max(r["ready"]["p99_ms"] for r in every)]
        out["ready_max_ms"] = max(r["ready"]["max_ms"] for r in every)
    return out


def fmt(v, f="%.2f"):
    return "-" if v is None else f % v


def main():
    wd, out = sys.argv[1], sys.argv[2]
    meta = load(os.path.join(wd, "meta.json"))
    rep = {"meta": meta}
    for name in ("memory", "decoded", "both", "hevc"):
        p = os.path.join(wd, name + ".json")
        rep[name] = density(load(p)) if os.path.exists(p) else {"missing": "not run"}
    rep["ab"] = {}
    for p in sorted(glob.glob(os.path.join(wd, "ab-*.json"))):
        d = load(p)
        name = os.path.basename(p)[3:-5]
        rep["ab"][name] = run_row(d["runs"][0]) if d.get("runs") else d
    rep["compare"] = []
    tsv = os.path.join(wd, "compare.tsv")
    if os.path.exists(tsv):
        with open(tsv) as f:
            head = f.readline().split()
            for line in f:
                row = dict(zip(head, line.split()))
                for k in ("frames", "inputs", "compare_rc", "compare_ms", "decode_rc",
                          "decode_ms"):
                    row[k] = int(row[k])
                for k in ("in_place", "copied"):
                    row[k] = int(row[k]) if row.get(k, "?").isdigit() else None
                row["ratio"] = row["compare_ms"] / row["decode_ms"] if row["decode_ms"] else None
                rep["compare"].append(row)
    p = os.path.join(wd, "probe.json")
    rep["probe"] = load(p) if os.path.exists(p) else {"missing": "not run"}
    sk = os.path.join(wd, "skipped.txt")
    rep["skipped"] = open(sk).read().splitlines() if os.path.exists(sk) else []
    with open(out, "w") as f:
        json.dump(rep, f, indent=1)

    print("live density, %s; GStreamer %s; commit %s; %s; %s" % (
        meta.get("card") or "no GPU (CPU backend)", meta.get("gstreamer") or "?",
        meta.get("commit"), meta.get("date"), meta.get("command")))
    m = rep["memory"]
    print("\nframes from GPU memory (kept at real time: pairs / scored / ready p50, p99, max "
          "ms / GPU %):")
    for r in m.get("runs", []):
        print("  %3d probes: kept %s: %s, scored %s, ready %s / %s / %s, GPU %s, late pushes %s"
              % (r["probes"], "yes" if r["kept"] else "no",
            fmt(100 * r["kept_ratio"] if r["kept_ratio"] is not None else None, "%.2f%%"),
            fmt(100 * r["scored_ratio"] if r["scored_ratio"] is not None else None, "%.2f%%"),
                 fmt(r["ready_ms"][0]), fmt(r["ready_ms"][1]), fmt(r["ready_ms"][2]),
                 fmt(r["gpu_util"], "%.0f"), r["late_pushes"]))
    if "missing" in m:
        print("  " + m["missing"])
    print("\nkept at real time: probes / decode-only streams = ratio (not kept: probes / "
          "streams); at the probes kept and at the first count not kept: pairs scored of "
          "pushed, ready p50 / p99 / max ms")
    for name, what in (("decoded", "distorted decoded"), ("both", "both decoded"),
                       ("hevc", "HEVC Main 10 2160p60, distorted decoded")):
        d = rep[name]
        if "missing" in d:
            print("  %-40s %s" % (what, d["missing"]))
            continue
        at = []
        for r in (d.get("at_kept"), d.get("at_not_kept")):
            if r:
                at.append("%d probes: %s of %s, %s / %s / %s" % (
                    r["probes"], r["pairs_scored"], r["pairs_pushed"], fmt(r["ready_ms"][0]),
                    fmt(r["ready_ms"][1]), fmt(r["ready_ms"][2])))
        print("  %-40s %s / %s = %s  (not kept: %s / %s)\n  %-40s %s" % (
            what, d["probes_kept"], d.get("decode_only_kept"), fmt(d.get("ratio"), "%.3f"),
            d.get("probes_not_kept"), d.get("decode_only_not_kept"), "",
            "; ".join(at) or "no run"))
    if rep["ab"]:
        print("\none change a run (kept %, ready p99 ms, scores over the stall threshold by "
              "cause, late frames on the way in):")
        for name, r in rep["ab"].items():
            if "probes" not in r:
                print("  %-16s %s" % (name, r.get("missing") or r.get("error")))
                continue
            causes = ", ".join("%s %d" % (k, v) for k, v in (r["stalls_by_cause"] or {}).items()
                               if v)
            print("  %-16s %3d probes: kept %s, ready p99 %s, stalls %s (%s), arrival %s" % (
                name, r["probes"], fmt(100 * (r["kept_ratio"] or 0), "%.2f%%"),
                fmt(r["ready_ms"][1]), r["stalls_ready"], causes or "none",
                r["stalls_arrival"]))
    if rep["compare"]:
        print("\nqmetric-compare against decoding the same files alone (wall ms, start-up "
              "included):")
        for c in rep["compare"]:
            print("  %-11s %4d frames x %d inputs: compare %6d ms (rc %d), decode only %6d ms "
                  "(rc %d), ratio %s; decoders %s; CUDA buffers in place %s, copied %s" % (
                      c["label"], c["frames"], c["inputs"], c["compare_ms"], c["compare_rc"],
                      c["decode_ms"], c["decode_rc"], fmt(c["ratio"]), c["decoders"],
                      fmt(c["in_place"], "%d"), fmt(c["copied"], "%d")))
    pr = rep["probe"]
    print("\nqmetric-probe: " + (pr.get("missing") or pr.get("error") or
          "%d probes, scored share of real time mean %s, min %s, %d kept; Prometheus: %s" % (
              pr["probes"], fmt(pr.get("share_mean"), "%.3f"), fmt(pr.get("share_min"), "%.3f"),
              pr.get("kept_probes", 0), pr.get("prometheus", "not carried"))))
    if rep["skipped"]:
        print("\nskipped: " + "; ".join(rep["skipped"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
