#!/bin/bash
# libvmaf's --aom_ctc preset on raw 1080p files, wall clock, values compared:
# qmetric-yuv --aom_ctc v7.0 with --backend cuda (the whole preset on the GPU
# in one pass), the same on the CPU at THREADS threads, and libvmaf's `vmaf`
# CLI --aom_ctc v7.0 --threads THREADS (CPU) when VMAF names a binary (its
# side is skipped otherwise).  Every frame's value of every key, the pooled
# values and aggregate_metrics are compared with libvmaf's (|diff| < 1e-6,
# the oracle's printed precision); the CUDA run's per-metric device times
# (QMETRIC_CUDA_TIMES) show that every metric ran on the GPU.
#   OUT=/tmp/out VMAF=/path/to/vmaf scripts/gpu-ctc.sh [build-dir]
# env: FRAMES (240), DISTINCT (24 distinct random pairs, repeated), SIZE
#      (1920x1080), THREADS (16), PRESET (--aom_ctc v7.0), CPU (1: also time
#      our CPU path; 0: not).
# Needs numpy in python3 (scripts/rawgen.py writes the files; on the GPU
# machine the python3 on PATH has it, not /usr/bin/python3); the GPU machine.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-gpu}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
size=${SIZE:-1920x1080}
w=${size%x*} h=${size#*x}
n=${FRAMES:-240}
thr=${THREADS:-16}
preset=(${PRESET:---aom_ctc v7.0})
export QMETRIC_MODEL_PATH=${QMETRIC_MODEL_PATH:-$PWD/data/models}
dir=/dev/shm/qmetric-ctc
mkdir -p $dir
trap 'rm -rf $dir' EXIT
python3 scripts/rawgen.py "$dir" "$w" "$h" "$n" "${DISTINCT:-24}" || exit 1
log=$OUT/ctc.txt
{
  echo "files: 2 x $n frames of ${w}x${h} 8-bit 4:2:0 in $dir; preset ${preset[*]}"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
  echo "$(nproc) CPU cores; commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"
} | tee "$log"

secs() {  # command... -> wall seconds on stdout, the command's output in $OUT
  local t0 t1
  t0=$(date +%s.%N)
  "$@" || return 1
  t1=$(date +%s.%N)
  awk "BEGIN { printf \"%.3f\", $t1 - $t0 }"
}
yuv=("$B/tools/qmetric-yuv" -r $dir/ref.yuv -d $dir/dis.yuv --width $w --height $h "${preset[@]}")
t_cuda=$(QMETRIC_CUDA_TIMES=1 secs "${yuv[@]}" --backend cuda -o "$OUT/ctc-cuda.json" \
         2>"$OUT/ctc-cuda.log") || { tail -5 "$OUT/ctc-cuda.log"; exit 1; }
echo "qmetric-yuv --backend cuda: $t_cuda s ($(awk "BEGIN { printf \"%.1f\", $n / $t_cuda }") frames/s)" | tee -a "$log"
grep -i "us;" "$OUT/ctc-cuda.log" | tee -a "$log"
if [ "${CPU:-1}" = 1 ]; then
  t_cpu=$(secs "${yuv[@]}" --backend cpu --threads $thr -o "$OUT/ctc-cpu.json" \
          2>"$OUT/ctc-cpu.log") || { tail -5 "$OUT/ctc-cpu.log"; exit 1; }
  echo "qmetric-yuv --backend cpu --threads $thr: $t_cpu s" | tee -a "$log"
fi
if [ -n "${VMAF:-}" ] && [ -x "$VMAF" ]; then
  t_ref=$(secs "$VMAF" -r $dir/ref.yuv -d $dir/dis.yuv -w $w -h $h -p 420 -b 8 "${preset[@]}" \
          --threads $thr -q --json -o "$OUT/ctc-libvmaf.json" 2>"$OUT/ctc-libvmaf.log") ||
    { tail -5 "$OUT/ctc-libvmaf.log"; exit 1; }
  echo "libvmaf vmaf --threads $thr (CPU): $t_ref s" | tee -a "$log"
  echo "speed-up, CUDA against libvmaf's CPU: $(awk "BEGIN { printf \"%.1f\", $t_ref / $t_cuda }")x (target >= 10x)" | tee -a "$log"
  for ours in "$OUT/ctc-cuda.json" ${t_cpu:+"$OUT/ctc-cpu.json"}; do
    python3 - "$OUT/ctc-libvmaf.json" "$ours" <<'PY' | tee -a "$log"
import json, math, sys
ref, ours = (json.load(open(p)) for p in sys.argv[1:3])
worst, bad = {}, 0
def cmp(key, a, b):
    global bad
    if a is None or b is None:
        ok = a is None and b is None
        d = 0 if ok else math.inf
    else:
        d = abs(a - b)
        ok = d < 1e-6
    worst[key] = max(worst.get(key, 0), d)
    bad += not ok
for fr, fo in zip(ref["frames"], ours["frames"]):
    for k, v in fr["metrics"].items():
        cmp(k, v, fo["metrics"].get(k, math.nan))
for k, pm in ref["pooled_metrics"].items():
    for s, v in pm.items():
        cmp(k, v, ours["pooled_metrics"].get(k, {}).get(s, math.nan))
for k, v in ref["aggregate_metrics"].items():
    cmp(k, v, ours["aggregate_metrics"].get(k, math.nan))
if len(ref["frames"]) != len(ours["frames"]):
    bad += 1
print("%s against libvmaf: %s" % (sys.argv[2].split("/")[-1],
      "identical within 1e-6" if not bad else "%d values differ" % bad))
for k in sorted(worst):
    print("  %-40s worst %.3g" % (k, worst[k]))
PY
  done
else
  echo "libvmaf: skipped (VMAF does not name an executable)" | tee -a "$log"
fi
