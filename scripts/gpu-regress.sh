#!/bin/bash
# Before/after on the GPU machine: this build against a baseline build of an
# older commit, on the same card in one call, the two alternating in every
# round so that drift (clocks, other tenants) falls on both:
#   engine  qmetric-bench, VMAF (vmaf_v0.6.1 and its features) and PSNR,
#           1080p 8-bit, GPU-resident and host frames, 64 distinct pairs
#   raw     scripts/gpu-rawfiles.sh: qmetric-yuv --metrics vmaf on raw 1080p
#           files from /dev/shm, the baseline's qmetric-yuv as QY_BASE
#   probes  qmetric-bench-probes: 48 live 1080p60 probes fed from GPU
#           memory, metrics=vmaf, --pair-latency 100 (each build's bench
#           with its own plugin)
# Every run of every round is printed and kept in $OUT/regress.txt (a noisy
# figure is reported run by run, never as the best of them).
#   OUT=/tmp/out scripts/gpu-regress.sh NEW_BUILD BASE_SRC [BASE_BUILD]
# BASE_SRC is the older commit's source tree (git worktree add or git archive
# here, carried); BASE_BUILD (default BASE_SRC/build-gpu) is built when it
# has no qmetric-yuv.  env: ROUNDS (2), SECTIONS ("engine raw probes"),
# GPU_ARCHS (90), BASE_NAME (what the baseline is called in the table).
set -uo pipefail
cd "$(dirname "$0")/.."
NEW=${1:?usage: gpu-regress.sh NEW_BUILD BASE_SRC [BASE_BUILD]}
BASE_SRC=${2:?usage: gpu-regress.sh NEW_BUILD BASE_SRC [BASE_BUILD]}
BASE=${3:-$BASE_SRC/build-gpu}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
rounds=${ROUNDS:-2}
sections=${SECTIONS:-engine raw probes}
txt=$OUT/regress.txt
[ -f .gpu/env.sh ] && { . .gpu/env.sh >/dev/null 2>&1 || { echo "gpu-regress: cannot set up .gpu"; exit 1; }; }
say() { echo "$*" | tee -a "$txt"; }
: >"$txt"
if [ ! -x "$BASE/tools/qmetric-yuv" ]; then
  say "== building the baseline in $BASE"
  (cd "$BASE_SRC" && meson setup "$BASE" -Dcuda=enabled -Dgpu_archs="${GPU_ARCHS:-90}" \
    -Dtests=disabled -Dexamples=disabled && ninja -C "$BASE") >"$OUT/regress-build.log" 2>&1 ||
    { grep -E "error|FAILED" "$OUT/regress-build.log" | head -20; exit 1; }
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 | tee -a "$txt"
say "$(nproc) CPU cores; new: ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}; baseline: ${BASE_NAME:-$BASE_SRC}"

builds=(new:$NEW base:$BASE)
export QMETRIC_MODEL_PATH=$PWD/data/models

if [[ " $sections " == *" engine "* ]]; then
  say "== engine: qmetric-bench, 1080p 8-bit, cuda, frames/s (median of 3 repeats; each repeat in the JSON)"
  for r in $(seq 1 "$rounds"); do
    for b in "${builds[@]}"; do
      name=${b%%:*} dir=${b#*:}
      GST_PLUGIN_PATH=$PWD/$dir/gst/qmetric "$dir/bench/qmetric-bench" --sizes 1920x1080 --bits 8 \
        --metrics default,psnr --backends cuda --inputs device,host --distinct 64 --seconds 1 \
        --repeats 3 --json "$OUT/regress-engine-$name-$r.json" >"$OUT/regress-engine-$name-$r.log" 2>&1 ||
        { say "engine $name round $r failed:"; tail -5 "$OUT/regress-engine-$name-$r.log" | tee -a "$txt"; continue; }
      /usr/bin/python3 - "$OUT/regress-engine-$name-$r.json" "$name" "$r" <<'PY' | tee -a "$txt"
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["results"] if isinstance(d, dict) and "results" in d else d
for x in rows:
    runs = x.get("fps_runs", [])
    print("  %-5s round %s  %-8s %-6s %3s threads %8.0f frames/s  runs %s" % (
        sys.argv[2], sys.argv[3], x.get("metrics", x.get("set", "?")), x.get("input", "?"),
        x.get("threads", "?"), x.get("fps", 0), " ".join("%.0f" % v for v in runs)))
PY
    done
  done
fi

if [[ " $sections " == *" raw "* ]]; then
  say "== raw files: scripts/gpu-rawfiles.sh (qmetric = new, baseline = base)"
  REPEATS=$rounds QY_BASE=$BASE/tools/qmetric-yuv OUT=$OUT/regress-raw bash scripts/gpu-rawfiles.sh "$NEW" 2>&1 |
    tee -a "$txt"
fi

if [[ " $sections " == *" probes "* ]]; then
  say "== probes: 48 memory-fed 1080p60 probes, metrics=vmaf, --pair-latency 100"
  for r in $(seq 1 "$rounds"); do
    for b in "${builds[@]}"; do
      name=${b%%:*} dir=${b#*:}
      GST_PLUGIN_PATH=$PWD/$dir/gst/qmetric timeout 120 "$dir/bench/qmetric-bench-probes" --probes 48 \
        --metrics vmaf --pair-latency 100 --duration 8 --warmup 2 \
        --json "$OUT/regress-probes-$name-$r.json" >"$OUT/regress-probes-$name-$r.log" 2>&1
      echo "  $name round $r (rc $?):" | tee -a "$txt"
      grep -E "^probes|^ +[0-9]+ +[0-9.]+ |largest" "$OUT/regress-probes-$name-$r.log" | head -8 | sed 's/^/    /' | tee -a "$txt"
    done
  done
fi
tar -C "$OUT" -czf "$OUT/regress-logs.tar.gz" --remove-files $(cd "$OUT" && ls -d regress-*.json regress-*.log regress-raw 2>/dev/null) 2>/dev/null
say "== done"
