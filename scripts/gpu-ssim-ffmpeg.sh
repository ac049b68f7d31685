#!/bin/bash
# ssim_ffmpeg's speed on the GPU machine, beside FFmpeg's ssim filter on the
# same machine and files:
#   1. GPU-resident frames: qmetric-bench --metrics ssim_ffmpeg --inputs
#      device --backends cuda (8- and 10-bit), and the CPU backend at
#      CPU_THREADS threads on host frames;
#   2. raw files from /dev/shm (scripts/rawgen.py, 8-bit 4:2:0):
#      qmetric-yuv --metrics ssim_ffmpeg on the CUDA backend and on the CPU
#      backend (--threads CPU_THREADS), and, where FFMPEG runs, FFmpeg's
#        ffmpeg -filter_complex_threads CPU_THREADS -f rawvideo ... -i DIS
#               -f rawvideo ... -i REF -lavfi "[0:v][1:v]ssim=stats_file=S" -f null -
#      frames/s in the steady state = (N_LONG - N_SHORT) / (T(N_LONG) -
#      T(N_SHORT)), T a whole run's wall time (start-up cancels out);
#   3. the values: every frame's Y, U, V, All of each qmetric run printed
#      with %f against FFmpeg's stats file (the digits must be equal).
#   OUT=/tmp/out [FFMPEG=/usr/bin/ffmpeg] scripts/gpu-ssim-ffmpeg.sh [build-dir]
# env: SIZE (1920x1080), N_SHORT (200), N_LONG (2000), DISTINCT (64),
#      CPU_THREADS (16), COMMIT (reported; else git's HEAD), PYTHON (python3, with numpy).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-gpu} OUT=${OUT:-/tmp/out} FFMPEG=${FFMPEG:-/usr/bin/ffmpeg}
size=${SIZE:-1920x1080} ns=${N_SHORT:-200} nl=${N_LONG:-2000} thr=${CPU_THREADS:-16}
w=${size%x*} h=${size#*x}
mkdir -p "$OUT" && rm -f "$OUT"/ssimff-*
txt=$OUT/ssim-ffmpeg.txt dir=/dev/shm/qmetric-ssimff
mkdir -p "$dir" && trap 'rm -rf "$dir"' EXIT
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
  echo "$(nproc) CPU cores; commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"
} | tee "$txt"

echo "== qmetric-bench: GPU-resident frames; CPU backend at $thr threads" | tee -a "$txt"
"$B/bench/qmetric-bench" --metrics ssim_ffmpeg --sizes "$size" --bits 8,10 --backends cuda \
  --inputs device --distinct 64 --seconds 3 --json "$OUT/ssim-ffmpeg-bench-cuda.json" 2>&1 | tee -a "$txt"
"$B/bench/qmetric-bench" --metrics ssim_ffmpeg --sizes "$size" --bits 8,10 --backends cpu \
  --threads "$thr" --seconds 3 --json "$OUT/ssim-ffmpeg-bench-cpu.json" 2>&1 | tee -a "$txt"

"${PYTHON:-python3}" scripts/rawgen.py "$dir" "$w" "$h" "$nl" "${DISTINCT:-64}" || exit 1
echo "== raw files: 2 x $nl frames of ${w}x${h} 8-bit 4:2:0" | tee -a "$txt"
tools=(cuda cpu)
if "$FFMPEG" -hide_banner -filters 2>/dev/null | grep -w ssim >/dev/null; then
  tools+=(ffmpeg)
  "$FFMPEG" -version | head -1 | tee -a "$txt"
else
  echo "no FFmpeg with the ssim filter at $FFMPEG: qmetric only" | tee -a "$txt"
fi
timed() {  # tool frames prefix -> seconds of wall time
  local tool=$1 n=$2 p=$3 t0
  t0=$(date +%s.%N)
  if [ "$tool" = ffmpeg ]; then
    local in=(-f rawvideo -pix_fmt yuv420p -s "${w}x${h}")
    "$FFMPEG" -hide_banner -nostdin -filter_complex_threads "$thr" "${in[@]}" -i $dir/dis.yuv \
      "${in[@]}" -i $dir/ref.yuv -frames:v "$n" \
      -lavfi "[0:v][1:v]ssim=stats_file=$p.stats" -f null - >"$p.log" 2>&1
  else
    "$B/tools/qmetric-yuv" -r $dir/ref.yuv -d $dir/dis.yuv --width "$w" --height "$h" \
      --metrics ssim_ffmpeg --backend "$tool" --threads "$thr" --frames "$n" \
      --partial "$p.part.json" -o "$p.json" >"$p.log" 2>&1
  fi || { tail -3 "$p.log" >&2; return 1; }
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }'
}
printf '%-8s %10s %10s %10s\n' tool "T($ns) s" "T($nl) s" frames/s | tee -a "$txt"
for tool in "${tools[@]}"; do
  ts=$(timed "$tool" "$ns" "$OUT/ssimff-$tool-short") || continue
  tl=$(timed "$tool" "$nl" "$OUT/ssimff-$tool") || continue
  f=$(awk -v s="$ts" -v l="$tl" -v ns="$ns" -v nl="$nl" \
    'BEGIN { d = l - s; if (d <= 0.05 * l) print "n/a"; else printf "%.0f", (nl - ns) / d }')
  printf '%-8s %10s %10s %10s\n' "$tool" "$ts" "$tl" "$f" | tee -a "$txt"
done
"${PYTHON:-python3}" - "$OUT" <<'PY' | tee -a "$txt"
import json, os, re, sys
out = sys.argv[1]
stats = os.path.join(out, "ssimff-ffmpeg.stats")
want = [re.findall(r"[YUVl]:(\S+)", l) for l in open(stats)] if os.path.exists(stats) else None
for tool in ("cuda", "cpu"):
    path = os.path.join(out, "ssimff-%s.part.json" % tool)
    if not os.path.exists(path):
        continue
    P = json.load(open(path))
    idx = [P["features"].index("ssim_ffmpeg_" + k) for k in ("y", "u", "v", "all")]
    got = [["%f" % r[k] for k in idx] for r in P["rows"]]
    if want is None:
        print("%s: %d frames (no FFmpeg to compare with)" % (tool, len(got)))
        continue
    bad = sum(g != w for g, w in zip(got, want))
    print("%s vs ffmpeg: %d / %d frames, %d with other printed digits"
          % (tool, len(got), len(want), bad))
PY
