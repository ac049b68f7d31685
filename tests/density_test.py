"""scripts/gpu-density.sh's glue on the CPU backend (any machine): the
streams it makes, qmetric-compare against decoding the same files alone,
qmetric-probe scraped by this script (and by Prometheus where Debian's
package is installed), and the figures of record it writes.  The bench
sections are qmetric-bench-probes runs, checked by tests/probes_bench.py.

usage: density_test.py SOURCE_ROOT BUILD_DIR"""
import json
import os
import subprocess
import sys
import tarfile
import tempfile

root, build = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


for need in (os.path.join(build, "tools", "qmetric-compare"),
             os.path.join(build, "bench", "qmetric-bench-probes")):
    if not os.access(need, os.X_OK):
        print("SKIP: no %s" % need)
        sys.exit(77)
probe = os.path.join(build, "tools", "probe", "qmetric-probe")

with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, CPU="1", QUICK="1", BUILD=build, OUT=os.path.join(tmp, "out"),
               STREAMS_DIR=os.path.join(tmp, "streams"), PROBE_N="1",
               SECTIONS="streams compare probe", COMMIT="test")
    p = subprocess.run([os.path.join(root, "scripts", "gpu-density.sh")], env=env,
                       capture_output=True, text=True, timeout=240)
    sys.stdout.write(p.stdout[-4000:])
    sys.stderr.write(p.stderr[-4000:])
    check(p.returncode == 0, "exit 0 (%d)" % p.returncode)
    out = os.path.join(tmp, "out")
    for f in ("density.txt", "density.json", "density-logs.tar.gz", "progress.log"):
        check(os.path.exists(os.path.join(out, f)), f + " written")
    try:
        doc = json.load(open(os.path.join(out, "density.json")))
    except (OSError, ValueError) as e:
        doc = None
        check(False, "density.json: %s" % e)
    if doc:
        check(doc["meta"]["commit"] == "test" and doc["meta"]["cpu"] is True, "meta")
        rows = {c["label"]: c for c in doc["compare"]}
        check(set(rows) >= {"pair1080", "ladder1080"}, "compare rows: %s" % sorted(rows))
        for label, c in rows.items():
            check(c["compare_rc"] == 0 and c["decode_rc"] == 0,
                  "%s: both runs exit 0 (%s)" % (label, c))
            check(c["compare_ms"] > 0 and c["decode_ms"] > 0 and c["ratio"] > 0,
                  "%s: times and ratio (%s)" % (label, c))
            n = 5 if label.startswith("ladder") else 2
            check(c["inputs"] == n and c["decoders"].startswith("%dxavdec_h26" % n),
                  "%s: %d inputs, one decoder each (%s)" % (label, n, c["decoders"]))
        # sections not asked for say so; none of those asked for was skipped
        check(doc["memory"] == {"missing": "not run"}, "memory not run")
        check(not [s for s in doc["skipped"] if not s.startswith("compare-pair2160")
                   and not s.startswith("compare-ladder2160")],
              "nothing skipped but what has no x265enc: %s" % doc["skipped"])
        pr = doc["probe"]
        if not os.access(probe, os.X_OK):
            check("missing" in pr, "probe: no qmetric-probe, no figures")
        else:
            check(pr.get("rc") == 0 and pr.get("scrapes", 0) >= 2,
                  "probe: qmetric-probe ran and was scraped (%s)" % pr)
            pp = pr.get("per_probe", {}).get("p00", {})
            # paced by the sink: the share of real time scored is near 1 on
            # an idle machine and above 0 on any
            check(0 < pp.get("share", 0) < 1.2, "probe: share of real time (%s)" % pp)
            check(pp.get("errors") == 0 and pp.get("up") == 1, "probe: up, no error (%s)" % pp)
            if "/usr/bin/prometheus" in doc["meta"]["prometheus"]:
                check(pr.get("prometheus", {}).get("answered") == 1 and
                      0 < pp.get("prometheus_share", 0) < 1.2,
                      "probe: Prometheus scraped it too (%s)" % pr.get("prometheus"))
        txt = open(os.path.join(out, "density.txt")).read()
        check("qmetric-compare against decoding the same files alone" in txt and
              "qmetric-probe:" in txt, "density.txt: the tables")
        with tarfile.open(os.path.join(out, "density-logs.tar.gz")) as t:
            names = t.getnames()
        check(any(n.endswith("compare.tsv") for n in names) and
              any(n.endswith("meta.json") for n in names), "logs: %s" % names[:8])

print("%d passed, %d failed" % (0 if failures else 1, 1 if failures else 0))
sys.exit(1 if failures else 0)
