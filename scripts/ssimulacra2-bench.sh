#!/bin/bash
# SSIMULACRA2's throughput (docs/benchmarks.md, "New metrics and presets"),
# on the GPU machine:
#   1. CUDA on GPU-resident frames: qmetric-bench at 1920x1080 and
#      3840x2160 (the targets: >= 1000 and >= 250 frames/s on one H100/H200);
#   2. the CPU path: qmetric-bench at THREADS threads, host frames, 1080p;
#   3. beside it, when SSIMULACRA2 names libjxl's tool (or `ssimulacra2` is
#      on PATH): the tool on FRAMES raw 1080p pairs (scripts/rawgen.py)
#      written as 16-bit PNGs by the golden set's conversion
#      (scripts/yuv2png16.py), THREADS processes at once (the tool is
#      single-threaded), against qmetric-yuv --threads THREADS on the same
#      raw files: wall-clock frames/s of both (the PNG writing is not timed),
#      and the largest |difference| of their scores.
#   OUT=/tmp/out scripts/ssimulacra2-bench.sh [build-dir]
# env: THREADS (16), FRAMES (64), SECONDS_ (2: qmetric-bench --seconds),
#      SSIMULACRA2 (the libjxl tool).  Needs numpy for steps 3.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-gpu}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
thr=${THREADS:-16} n=${FRAMES:-64}
export QMETRIC_MODEL_PATH=${QMETRIC_MODEL_PATH:-$PWD/data/models}
log=$OUT/ssimulacra2-bench.txt
: >"$log"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee -a "$log"
echo "$(nproc) CPU cores; commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}" | tee -a "$log"

echo "== CUDA, frames in GPU memory" | tee -a "$log"
$B/bench/qmetric-bench --metrics ssimulacra2 --backends cuda --inputs device \
  --sizes 1920x1080,3840x2160 --bits 8 --seconds "${SECONDS_:-2}" \
  --json "$OUT/ssimulacra2-cuda.json" 2>&1 | tee -a "$log"
echo "== CPU, $thr threads" | tee -a "$log"
$B/bench/qmetric-bench --metrics ssimulacra2 --backends cpu --threads "$thr" \
  --sizes 1920x1080 --bits 8 --seconds "${SECONDS_:-2}" \
  --json "$OUT/ssimulacra2-cpu.json" 2>&1 | tee -a "$log"

tool=${SSIMULACRA2:-$(command -v ssimulacra2 || true)}
if [ -z "$tool" ]; then
  echo "== libjxl's ssimulacra2: not found (set SSIMULACRA2)" | tee -a "$log"
  exit 0
fi
dir=$(mktemp -d /dev/shm/qmetric-s2.XXXXXX)
trap 'rm -rf "$dir"' EXIT
python3 scripts/rawgen.py "$dir" 1920 1080 "$n" "$n" || exit 1
python3 scripts/yuv2png16.py "$dir/ref.yuv" 1920 1080 "$n" "$dir" ref || exit 1
python3 scripts/yuv2png16.py "$dir/dis.yuv" 1920 1080 "$n" "$dir" dis || exit 1
t0=$(date +%s.%N)
seq -f '%05g' 0 $((n - 1)) | xargs -P "$thr" -I{} sh -c \
  "'$tool' '$dir/ref-{}.png' '$dir/dis-{}.png' > '$dir/s2-{}.txt'"
t1=$(date +%s.%N)
$B/tools/qmetric-yuv -r "$dir/ref.yuv" -d "$dir/dis.yuv" --width 1920 --height 1080 \
  --metrics ssimulacra2 --backend cpu --threads "$thr" -o "$dir/ours.json" \
  --partial "$dir/ours.part" >/dev/null 2>&1
t2=$(date +%s.%N)
python3 - "$dir" "$n" "$t0" "$t1" "$t2" "$thr" <<'PY' | tee -a "$log"
import json, sys
d, n, t0, t1, t2, thr = sys.argv[1], int(sys.argv[2]), *map(float, sys.argv[3:6]), sys.argv[6]
rows = json.load(open(d + '/ours.part'))['rows']
worst = max(abs(float(open('%s/s2-%05d.txt' % (d, i)).read()) - rows[i][0]) for i in range(n))
print('== 1080p, %d frames, %s at once: libjxl ssimulacra2 %.1f frames/s, '
      'qmetric-yuv --threads %s %.1f frames/s; largest |difference| %.3g'
      % (n, thr, n / (t1 - t0), thr, n / (t2 - t1), worst))
PY
