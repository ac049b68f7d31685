#!/bin/bash
# Build and test on the GPU machine (see ../shared/gpu/README.md): carries
# .gpu (Debian's GStreamer) and .golden (a subset of the golden data, made by
# scripts/golden-subset.sh).  Everything it measures goes to $OUT.
#   scripts/gpu-run.sh [what...]   what: build test parity golden pipeline bench benchpipe
#                                (default: all but benchpipe)
# env: GPU_ARCHS (e.g. 90: build for this GPU only, faster), PARITY_ARGS,
#      PARITY_QUICK (metrics whose parity runs with --quick), STEP_TIMEOUT,
#      GOLDEN_FEATURES, GOLDEN_EXTRA, PIPE_METRICS, BENCH_ARGS, PIPE_BENCH_ARGS
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
what=${*:-build test parity golden pipeline bench}
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
. .gpu/env.sh >/dev/null 2>&1 || { echo "cannot set up .gpu"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$OUT/summary.txt"
export GST_PLUGIN_PATH=$PWD/build-gpu/gst/qmetric QMETRIC_MODEL_PATH=$PWD/data/models
if [[ $what == *build* ]]; then
  log build
  meson setup build-gpu -Dcuda=enabled ${GPU_ARCHS:+-Dgpu_archs=$GPU_ARCHS} -Dgolden_dir=$PWD/.golden >"$OUT/setup.log" 2>&1 || { tail -30 "$OUT/setup.log"; exit 1; }
  ninja -C build-gpu >"$OUT/build.log" 2>&1 || { grep -E "error|FAILED" "$OUT/build.log" | head -30; exit 1; }
  gst-inspect-1.0 qmetric >"$OUT/inspect.txt" 2>&1 || { tail "$OUT/inspect.txt"; exit 1; }
fi
if [[ $what == *test* ]]; then
  log "meson test"
  QMETRIC_GOLDEN_REQUIRED=0 meson test -C build-gpu --no-suite golden --no-suite parity --print-errorlogs >"$OUT/test.log" 2>&1
  grep -E "^ *[0-9]+/[0-9]+ " "$OUT/test.log" | tee -a "$OUT/summary.txt"
fi
# each part of the parity and golden steps ends with a line "NAME: rc N"
# in the summary; STEP_TIMEOUT bounds each part (seconds; 0: no limit)
if [[ $what == *parity* ]]; then
  log parity
  # one process a metric, side by side (CIEDE2000's C reference alone takes
  # about 2 minutes at 1080p); the metrics are the build's list, those in
  # PARITY_QUICK with --quick
  pids=()
  for m in $(sed -n "/qm_metric_names = \[/,/\]/p" meson.build | grep -o "'[a-z_0-9]*'" | tr -d "'"); do
    q=()
    [[ " ${PARITY_QUICK:-} " == *" $m "* ]] && q=(--quick)
    (timeout "${STEP_TIMEOUT:-0}" ./build-gpu/tests/parity/parity --seed 20261122 --metric "$m" "${q[@]}" \
       ${PARITY_ARGS:-} >"$OUT/parity-$m.log" 2>&1
     echo "parity $m ${q[*]}: rc $?" >>"$OUT/parity-$m.log") &
    pids+=($!)
  done
  wait "${pids[@]}"
  cat "$OUT"/parity-*.log >"$OUT/parity.log" && rm -f "$OUT"/parity-*.log
  grep -E "worst|FAIL|passed|SKIP|rc " "$OUT/parity.log" | tee -a "$OUT/summary.txt"
fi
if [[ $what == *golden* ]] && [ -f .golden/manifest.json ]; then
  log "golden, backend=cuda"
  # the main gate and those over the manifests beside it (presets, XPSNR,
  # SSIMULACRA2), side by side, each with a cache of its own
  pids=()
  for gate in vmaf ctc xpsnr ssimulacra2; do
    prog=golden_$gate
    if [ $gate = vmaf ]; then prog=golden; elif [ ! -f .golden/$gate/manifest.json ]; then continue; fi
    (QMETRIC_GOLDEN_DIR=$PWD/.golden QMETRIC_GOLDEN_CACHE=/tmp/gc-$gate \
       QMETRIC_GOLDEN_EXTRA="backend=cuda ${GOLDEN_EXTRA:-}" QMETRIC_GOLDEN_FEATURES=${GOLDEN_FEATURES:-} \
       timeout "${STEP_TIMEOUT:-0}" ./build-gpu/tests/check/$prog >"$OUT/golden-$gate-cuda.log" 2>&1
     echo "golden $gate, backend=cuda: rc $?" >"$OUT/golden-$gate.rc") &
    pids+=($!)
  done
  wait "${pids[@]}"
  for f in "$OUT"/golden-*.rc; do
    cat "$f"
    tail -40 "${f%.rc}-cuda.log"
  done | tee -a "$OUT/summary.txt"
  rm -f "$OUT"/golden-*.rc
fi
if [[ $what == *pipeline* ]]; then
  log "pipeline: nvh264dec on both pads (CUDA memory) vs system memory"
  gst-launch-1.0 -q videotestsrc num-buffers=120 pattern=zone-plate kx2=20 ky2=20 kt=1 ! video/x-raw,width=1920,height=1080,framerate=30/1 ! \
    x264enc bitrate=1500 speed-preset=veryfast ! video/x-h264,profile=high ! h264parse ! mp4mux ! filesink location=/tmp/d.mp4
  gst-launch-1.0 -q videotestsrc num-buffers=120 pattern=zone-plate kx2=20 ky2=20 kt=1 ! video/x-raw,width=1920,height=1080,framerate=30/1 ! \
    x264enc bitrate=40000 speed-preset=veryfast ! video/x-h264,profile=high ! h264parse ! mp4mux ! filesink location=/tmp/r.mp4
  for mem in cuda system; do
    if [ $mem = cuda ]; then conv="video/x-raw(memory:CUDAMemory)"; else conv="cudadownload ! video/x-raw"; fi
    /usr/bin/time -f "%e s" -o "$OUT/time-$mem.txt" gst-launch-1.0 -m \
      qmetric name=q metrics=${PIPE_METRICS:-psnr} backend=cuda log-location=$OUT/pipe-$mem.json ! fakesink \
      filesrc location=/tmp/r.mp4 ! qtdemux ! h264parse ! nvh264dec ! $conv ! q.ref_sink \
      filesrc location=/tmp/d.mp4 ! qtdemux ! h264parse ! nvh264dec ! $conv ! q.dist_sink >"$OUT/pipe-$mem.log" 2>&1
    echo "$mem memory: rc=$? $(cat $OUT/time-$mem.txt) $(grep -c 'qmetric, index' $OUT/pipe-$mem.log) scored frames" | tee -a "$OUT/summary.txt"
    grep -E "ERROR|WARN" "$OUT/pipe-$mem.log" | head -5
  done
  python3 - "$OUT/pipe-cuda.json" "$OUT/pipe-system.json" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
d, bad = 0.0, 0
for x, y in zip(a["frames"], b["frames"]):
    for k, u in x["metrics"].items():
        v = y["metrics"].get(k)
        if u is None or v is None:  # infinite (null): only against infinite
            bad += u is not v
        else:
            d = max(d, abs(u - v))
print("cuda-memory vs system-memory scores: %d vs %d frames, max abs diff %.3g, %d null mismatches"
      % (len(a["frames"]), len(b["frames"]), d, bad))
PY
fi
if [[ " $what " == *" bench "* ]] && [ -x build-gpu/bench/qmetric-bench ]; then
  log bench
  ./build-gpu/bench/qmetric-bench --json "$OUT/bench.json" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.txt" | tail -60
fi
if [[ " $what " == *" benchpipe "* ]] && [ -x build-gpu/bench/qmetric-bench-pipeline ]; then
  log "pipeline bench (element in real pipelines vs a baseline without it)"
  for x in r:40000 d:1500; do
    [ -f /tmp/${x%%:*}.mp4 ] || gst-launch-1.0 -q videotestsrc num-buffers=600 pattern=zone-plate kx2=20 ky2=20 kt=1 ! \
      video/x-raw,width=1920,height=1080,framerate=30/1 ! x264enc bitrate=${x#*:} speed-preset=veryfast ! \
      video/x-h264,profile=high ! h264parse ! mp4mux ! filesink location=/tmp/${x%%:*}.mp4
  done
  ./build-gpu/bench/qmetric-bench-pipeline --ref-file /tmp/r.mp4 --dist-file /tmp/d.mp4 --json "$OUT/pipeline.json" \
    ${PIPE_BENCH_ARGS:---variants system,cuda,decode-cuda,decode-system --sizes 1920x1080 --bits 8 --metrics psnr,default,combined --backends cuda} \
    2>&1 | tee "$OUT/pipeline.txt" | tail -30
fi
log done
