#!/bin/bash
# Raw files on the GPU, side by side: qmetric-yuv (this build, and another
# build's qmetric-yuv as a baseline if QY_BASE names one) and libvmaf's `vmaf`
# CLI (if VMAF names a binary built with its CUDA backend) score the same raw
# 8-bit 4:2:0 files from /dev/shm.  Frames/s in the steady state =
# (N_LONG - N_SHORT) / (T(N_LONG) - T(N_SHORT)), T the wall time of a whole
# run, so that start-up and the CUDA context cancel out; the tools alternate
# within each round.  Every frame's VMAF is then compared across the tools.
#   OUT=/tmp/out scripts/gpu-rawfiles.sh [build-dir]
# env: SIZE (1920x1080), N_SHORT (200), N_LONG (2000), DISTINCT (64 distinct
#      random pairs, repeated), REPEATS (2), MODEL (vmaf_v0.6.1), THREADS
#      (qmetric-yuv --threads; default: the tool's), QY_BASE, VMAF,
#      BACKEND (cuda), QMETRIC_CUDA_TIMES (passed on: the backend's per-frame
#      host times).
# Needs numpy (to write the files) and the GPU machine (docs/benchmarks.md).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-gpu}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
size=${SIZE:-1920x1080}
w=${size%x*} h=${size#*x}
ns=${N_SHORT:-200} nl=${N_LONG:-2000}
model=${MODEL:-vmaf_v0.6.1}
export QMETRIC_MODEL_PATH=${QMETRIC_MODEL_PATH:-$PWD/data/models}
dir=/dev/shm/qmetric-raw
mkdir -p $dir
trap 'rm -rf $dir' EXIT
python3 scripts/rawgen.py "$dir" "$w" "$h" "$nl" "${DISTINCT:-64}" || exit 1
echo "files: 2 x $nl frames of ${w}x${h} 8-bit 4:2:0 in $dir ($(du -sh $dir | cut -f1)); model $model"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
echo "$(nproc) CPU cores"

tools=(qmetric)
[ -n "${QY_BASE:-}" ] && tools+=(baseline)
[ -n "${VMAF:-}" ] && tools+=(libvmaf)
run() {  # tool frames json -> seconds of wall time
  local tool=$1 n=$2 js=$3 t0 t1 thr=()
  [ -n "${THREADS:-}" ] && thr=(--threads "$THREADS")
  t0=$(date +%s.%N)
  case $tool in
    qmetric|baseline)
      local y=$B/tools/qmetric-yuv
      [ $tool = baseline ] && y=$QY_BASE
      $y -r $dir/ref.yuv -d $dir/dis.yuv --width $w --height $h --metrics vmaf --model $model \
        --backend ${BACKEND:-cuda} "${thr[@]}" --frames $n -o "$js" >"$js.log" 2>&1 || { tail -3 "$js.log" >&2; return 1; } ;;
    libvmaf)
      local m=$QMETRIC_MODEL_PATH/$model.json
      [ -f "$m" ] || m=$PWD/data/models/$model.json
      $VMAF -r $dir/ref.yuv -d $dir/dis.yuv -w $w -h $h -p 420 -b 8 --model path=$m \
        --frame_cnt $n -q --json -o "$js" >"$js.log" 2>&1 || { tail -3 "$js.log" >&2; return 1; } ;;
  esac
  t1=$(date +%s.%N)
  awk "BEGIN { printf \"%.3f\", $t1 - $t0 }"
}
printf '%-9s %6s %10s %10s %10s\n' tool round "T($ns) s" "T($nl) s" frames/s | tee "$OUT/rawfiles.txt"
for r in $(seq 1 "${REPEATS:-2}"); do
  for tool in "${tools[@]}"; do
    ts=$(run $tool $ns /tmp/rawfiles-$tool-short.json) || continue
    tl=$(run $tool $nl /tmp/rawfiles-$tool.json) || continue
    fps=$(awk "BEGIN { printf \"%.0f\", ($nl - $ns) / ($tl - $ts) }")
    printf '%-9s %6s %10s %10s %10s\n' $tool $r $ts $tl $fps | tee -a "$OUT/rawfiles.txt"
    grep -hE "qmetric CUDA|qmetric-yuv times" /tmp/rawfiles-$tool.json.log 2>/dev/null | sed 's/^/  /' | tee -a "$OUT/rawfiles.txt"
  done
done
python3 - "${tools[@]}" <<'PY' | tee -a "$OUT/rawfiles.txt"
import json, sys
runs = {t: json.load(open("/tmp/rawfiles-%s.json" % t))["frames"] for t in sys.argv[1:]}
ref = runs["qmetric"]
for t, frames in runs.items():
    if t == "qmetric":
        continue
    d = max(abs(a["metrics"]["vmaf"] - b["metrics"]["vmaf"]) for a, b in zip(ref, frames))
    print("qmetric vs %s: %d / %d frames, largest VMAF difference %.3g" % (t, len(ref), len(frames), d))
mean = sum(f["metrics"]["vmaf"] for f in ref) / len(ref)
print("qmetric: mean VMAF %.4f over %d frames" % (mean, len(ref)))
PY
