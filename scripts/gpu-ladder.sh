#!/bin/bash
# qmetric-compare --gpus on the GPU machine: a ladder (RENDITIONS
# H.264 encodes of FRAMES frames) scored three ways with --backend cuda:
# without --gpus, on the first GPU only (--gpus 1) and spread over every GPU
# (--gpus all).  Checks that the three runs' rows are equal (every pooled
# value of every rendition), and records the wall times, the plan, and each
# GPU's utilisation sampled every second.  Carry .gpu (../shared/gpu/README.md).
#   OUT=/tmp/out scripts/gpu-ladder.sh
# env: FRAMES (default 240), RENDITIONS (default 4), GPU_ARCHS (default 90),
#      METRICS (default: the tool's, vmaf,psnr,float_ssim), SIZE (default
#      1920x1080), MODEL (default the tool's).  A ladder bound by the metrics
#      rather than the decoders, where several GPUs can pay off:
#      SIZE=3840x2160 MODEL=vmaf_v1.0.16_3d0h_2160; with RAW=1 the encodes
#      are decoded once to Y4M files (raw frames behind a header) and those
#      are scored, so that no decoder sets the pace.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
. .gpu/env.sh >/dev/null 2>&1 || { echo "cannot set up .gpu"; exit 1; }
export GST_PLUGIN_PATH=$PWD/build-gpu/gst/qmetric QMETRIC_MODEL_PATH=$PWD/data/models
export QMETRIC_BACKTRACE=1  # a crash prints where (docs/cli.md)
log() { echo "== $*" | tee -a "$OUT/ladder-summary.txt"; }
nvidia-smi -L | tee -a "$OUT/ladder-summary.txt"
if [ ! -x build-gpu/tools/qmetric-compare ]; then
  log build
  { meson setup build-gpu -Dcuda=enabled -Dgpu_archs=${GPU_ARCHS:-90} -Dtests=disabled &&
    ninja -C build-gpu; } >"$OUT/ladder-build.log" 2>&1 ||
    { grep -E "error|FAILED" "$OUT/ladder-build.log" | head -20; exit 1; }
fi
qc=build-gpu/tools/qmetric-compare
frames=${FRAMES:-240}
n=${RENDITIONS:-4}
size=${SIZE:-1920x1080}
w=/tmp/gpu-ladder-$size-$frames-$n  # encoded once, reused by later runs
mkdir -p $w
src="videotestsrc pattern=zone-plate kx2=20 ky2=20 kt=1 num-buffers=$frames"
raw="video/x-raw,format=I420,width=${size%x*},height=${size#*x},framerate=30/1"
rends=()
for i in $(seq 1 "$n"); do rends+=("$w/r$i.mp4"); done
if [ ! -s $w/r$n.mp4 ]; then
log "encoding a reference and $n renditions of $frames frames at $size"
gst-launch-1.0 -q $src ! $raw ! x264enc pass=quant quantizer=8 speed-preset=ultrafast ! \
  mp4mux ! filesink location=$w/ref.mp4 &
for i in $(seq 1 "$n"); do
  gst-launch-1.0 -q $src ! $raw ! x264enc bitrate=$((1500 * i)) speed-preset=ultrafast ! \
    mp4mux ! filesink location=$w/r$i.mp4 &
done
wait
fi
ref=$w/ref.mp4
inputs=()
if [ -n "${RAW:-}" ]; then
  if [ ! -s $w/r$n.y4m ]; then
    log "decoding the reference and the renditions to Y4M"
    # (1.22's y4menc writes a decoder's padded buffers whole: the Y4M
    # framing is added here instead)
    for f in ref "${rends[@]##*/}"; do
      f=${f%.mp4}
      { gst-launch-1.0 -q filesrc location=$w/$f.mp4 ! decodebin ! videoconvert ! \
          video/x-raw,format=I420 ! filesink location=$w/$f.yuv &&
        python3 - $w/$f.yuv "$size" <<'PY' && rm $w/$f.yuv; } &
import sys
path, (w, h) = sys.argv[1], map(int, sys.argv[2].split("x"))
n = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
with open(path, "rb") as src, open(path[:-4] + ".y4m", "wb") as dst:
    dst.write(b"YUV4MPEG2 W%d H%d F30:1 Ip A1:1 C420jpeg\n" % (w, h))
    while len(frame := src.read(n)) == n:
        dst.write(b"FRAME\n" + frame)
PY
    done
    wait
  fi
  ref=$w/ref.y4m
  rends=("${rends[@]/%.mp4/.y4m}")
fi
metrics=()
[ -n "${METRICS:-}" ] && metrics=(--metrics "$METRICS")
[ -n "${MODEL:-}" ] && metrics+=(--model "$MODEL")
"$qc" "$ref" "${rends[@]}" "${inputs[@]}" --gpus all --dry-run >"$OUT/ladder-plan.txt" 2>&1
cat "$OUT/ladder-plan.txt" | tee -a "$OUT/ladder-summary.txt"
for mode in none 1 all; do
  gpus=()
  [ $mode != none ] && gpus=(--gpus $mode)
  nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv -l 1 \
    >"$OUT/ladder-smi-$mode.csv" 2>/dev/null &
  smi=$!
  start=$(date +%s%N)
  "$qc" "$ref" "${rends[@]}" "${inputs[@]}" --backend cuda "${gpus[@]}" "${metrics[@]}" \
    --ladder-json "$OUT/ladder-$mode.json" >"$OUT/ladder-$mode.txt" 2>&1
  rc=$?
  end=$(date +%s%N)
  kill $smi 2>/dev/null
  wait $smi 2>/dev/null
  log "--gpus $mode: rc=$rc $(( (end - start) / 1000000 )) ms for $n x $frames frames"
  grep -E "GPUs:|warning|error" "$OUT/ladder-$mode.txt" | head -5 | tee -a "$OUT/ladder-summary.txt"
  # the busiest sample of each GPU during the run
  awk -F', ' 'NR > 1 { u = $3 + 0; if (u > m[$2]) m[$2] = u } END { for (g in m) printf "  GPU %s: peak utilisation %d%%\n", g, m[g] }' \
    "$OUT/ladder-smi-$mode.csv" | sort | tee -a "$OUT/ladder-summary.txt"
done
python3 - "$OUT"/ladder-none.json "$OUT"/ladder-1.json "$OUT"/ladder-all.json <<'PY' | tee -a "$OUT/ladder-summary.txt"
import json, sys
runs = [json.load(open(p))["renditions"] for p in sys.argv[1:]]
worst, n = 0.0, 0
for rows in zip(*runs):
    for key, val in rows[0].items():
        # (where the buffers were read, in place or copied, depends on the
        # GPUs: the scores must not)
        if isinstance(val, dict) and key != "cuda_buffers":
            for stat, v in val.items():
                for other in rows[1:]:
                    w = other[key][stat]
                    # a statistic without a value (null) must be null in every run
                    d = 0.0 if v is None and w is None else float("inf") if v is None or w is None else abs(w - v)
                    worst, n = max(worst, d), n + 1
print("rows: %d pooled values compared across the three runs, largest difference %.3g" % (n, worst))
print("devices: " + ", ".join("%s on %s" % (r["name"], r.get("cuda_device")) for r in runs[2]))
for mode, rows in zip(("none", "1", "all"), runs):
    print("CUDA buffers in place / copied, --gpus %s: %s" % (mode, ", ".join(
        "%s %d/%d" % (r["name"], r["cuda_buffers"]["in_place"], r["cuda_buffers"]["copied"])
        for r in rows if "cuda_buffers" in r)))
PY
