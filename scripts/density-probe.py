#!/usr/bin/python3
"""Live density through the real program: qmetric-probe with N probes from a
generated config, each decoding both sides of a file pair (a contribution
feed against its distribution encode) into a qmetric element whose fakesink
follows the clock, scraped every second while it runs: by this script
(qmetric-probe's own /metrics) and, where a Prometheus binary is given, by
Prometheus, whose HTTP API is then asked the same question.

The pipelines are not live (a file source paced by its sink): a probe that
cannot keep up falls behind the clock instead of losing pairs, so the figure
is the share of real time each probe scores, from the per-frame histogram's
count (qmetric_frame_vmaf_count, one a scored pair):

    share = (count(t1) - count(t0)) / (fps * (t1 - t0))

over the scrapes between the warm-up and the end.  A probe kept at real time
has share >= 0.995.

usage: density-probe.py --probe BIN --ref FILE --dist FILE --probes N
           --duration S --warmup S --fps N --json OUT [--prometheus BIN]
           [--backend cuda|cpu] [--decoder DESC] [--workdir DIR]
Exit 0 when the run completed (kept or not), 1 when it could not run."""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

SERIES = ("qmetric_frame_vmaf_count", "qmetric_probe_up", "qmetric_unmatched_frames_total",
          "qmetric_probe_restarts_total", "qmetric_probe_errors_total", "qmetric_frames_total")
LINE = re.compile(r'^([a-z_]+)\{([^}]*)\} ([0-9.eE+-]+|NaN|\+Inf)$')


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config(args):
    if args.backend == "cuda":
        dec = (args.decoder or "nvh264dec") + " ! video/x-raw(memory:CUDAMemory)"
    else:
        dec = (args.decoder or "avdec_h264") + " ! videoconvert ! video/x-raw,format=I420"
    lines = []
    for i in range(args.probes):
        lines.append("[p%02d]" % i)
        lines.append(
            "pipeline=filesrc location=%s ! qtdemux ! h264parse ! %s ! q.ref_sink "
            "filesrc location=%s ! qtdemux ! h264parse ! %s ! q.dist_sink "
            "qmetric name=q backend=%s metrics=vmaf ! fakesink sync=true"
            % (args.ref, dec, args.dist, dec, args.backend))
    return "\n".join(lines) + "\n"


def scrape(url):
    """{(series, probe): value} of the series of interest."""
    with urllib.request.urlopen(url, timeout=2) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if not m or m.group(1) not in SERIES:
            continue
        labels = dict(kv.split("=", 1) for kv in m.group(2).split(",") if "=" in kv)
        probe = labels.get("probe", "").strip('"')
        if m.group(1) == "qmetric_unmatched_frames_total":
            probe += "/" + labels.get("side", "").strip('"')
        out[m.group(1) + "|" + probe] = float(m.group(3))
    return out


def prom_query(base, query, at):
    q = urllib.parse.urlencode({"query": query, "time": "%.3f" % at})
    with urllib.request.urlopen(base + "/api/v1/query?" + q, timeout=5) as r:
        doc = json.load(r)
    return {x["metric"].get("probe", ""): float(x["value"][1])
            for x in doc.get("data", {}).get("result", [])}


def main():
    ap = argparse.ArgumentParser()
    for k in ("--probe", "--ref", "--dist", "--json"):
        ap.add_argument(k, required=True)
    ap.add_argument("--probes", type=int, required=True)
    ap.add_argument("--duration", type=float, required=True)
    ap.add_argument("--warmup", type=float, required=True)
    ap.add_argument("--fps", type=int, required=True)
    ap.add_argument("--prometheus")
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--decoder")
    ap.add_argument("--workdir", default="/tmp/density-probe")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    conf = os.path.join(args.workdir, "probes.conf")
    with open(conf, "w") as f:
        f.write(config(args))
    port = free_port()
    url = "http://127.0.0.1:%d/metrics" % port
    doc = {"probes": args.probes, "fps": args.fps, "duration_s": args.duration,
           "warmup_s": args.warmup, "backend": args.backend, "ref": args.ref,
           "dist": args.dist, "paced_by": "fakesink sync=true (not live)"}

    prom = None
    prom_base = None
    if args.prometheus:
        pport = free_port()
        prom_base = "http://127.0.0.1:%d" % pport
        yml = os.path.join(args.workdir, "prometheus.yml")
        with open(yml, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: qmetric-probe\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % port)
        prom = subprocess.Popen(
            [args.prometheus, "--config.file=" + yml,
             "--storage.tsdb.path=" + os.path.join(args.workdir, "tsdb"),
             "--web.listen-address=127.0.0.1:%d" % pport, "--log.level=warn"],
            stdout=open(os.path.join(args.workdir, "prometheus.log"), "w"),
            stderr=subprocess.STDOUT)
        # scraping before the probes start, so that it sees the whole run
        # (its discovery hands targets to the scrapers some 5 s after start)
        for _ in range(80):
            try:
                with urllib.request.urlopen(prom_base + "/api/v1/targets", timeout=1) as r:
                    if json.load(r)["data"]["activeTargets"]:
                        break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.25)

    log = open(os.path.join(args.workdir, "qmetric-probe.log"), "w")
    t_start = time.time()
    proc = subprocess.Popen([args.probe, "--config", conf, "--listen", "127.0.0.1:%d" % port,
                             "--duration", "%g" % args.duration], stdout=log,
                            stderr=subprocess.STDOUT)
    samples = []
    while proc.poll() is None:
        t = time.time()
        try:
            samples.append((t, scrape(url)))
        except (OSError, ValueError):
            pass
        time.sleep(max(0.0, 1.0 - (time.time() - t)))
    rc = proc.wait()
    doc["rc"] = rc
    doc["wall_s"] = time.time() - t_start
    doc["scrapes"] = len(samples)

    # the window: the first scrape after the warm-up to the last one
    win = [s for s in samples if s[0] - t_start >= args.warmup]
    probes = {}
    if len(win) >= 2:
        (t0, a), (t1, b) = win[0], win[-1]
        doc["window_s"] = t1 - t0
        for i in range(args.probes):
            name = "p%02d" % i
            key = "qmetric_frame_vmaf_count|" + name
            n = b.get(key, 0) - a.get(key, 0)
            probes[name] = {
                "scored": n,
                "share": n / (args.fps * (t1 - t0)),
                "up": b.get("qmetric_probe_up|" + name),
                "restarts": b.get("qmetric_probe_restarts_total|" + name),
                "errors": b.get("qmetric_probe_errors_total|" + name),
                "unmatched": sum(v for k, v in b.items()
                                 if k.startswith("qmetric_unmatched_frames_total|" + name + "/")),
            }
        if prom_base:
            # the same question to Prometheus, over the same window
            w = max(2, int(round(t1 - t0)))
            try:
                seen = prom_query(prom_base, "qmetric_frame_vmaf_count", t1)
                inc = prom_query(prom_base, "increase(qmetric_frame_vmaf_count[%ds])" % w, t1)
                for name, v in inc.items():
                    if name in probes:
                        probes[name]["prometheus_share"] = v / (args.fps * w)
                doc["prometheus"] = {"window_s": w, "series": len(seen), "answered": len(inc)}
            except (OSError, ValueError) as e:
                doc["prometheus"] = {"error": str(e)}
    else:
        doc["error"] = "fewer than two scrapes after the warm-up (%d in all)" % len(samples)
    if prom:
        prom.send_signal(signal.SIGTERM)
        try:
            prom.wait(timeout=10)
        except subprocess.TimeoutExpired:
            prom.kill()
    shares = [p["share"] for p in probes.values()]
    doc["per_probe"] = probes
    doc["kept_probes"] = sum(1 for s in shares if s >= 0.995)
    doc["share_min"] = min(shares) if shares else None
    doc["share_mean"] = sum(shares) / len(shares) if shares else None
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=1)
    print("qmetric-probe, %d probes: rc %d, %d scrapes; scored share of real time mean %s, "
          "min %s; %d of %d kept (>= 99.5 %%)%s"
          % (args.probes, rc, len(samples),
             "%.3f" % doc["share_mean"] if shares else "n/a",
             "%.3f" % doc["share_min"] if shares else "n/a", doc["kept_probes"], args.probes,
             "; Prometheus answered for %s" % doc["prometheus"].get("answered", "none")
             if "prometheus" in doc else ""))
    return 0 if samples else 1


if __name__ == "__main__":
    sys.exit(main())
