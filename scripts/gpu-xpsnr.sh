#!/bin/bash
# XPSNR's speed on the GPU machine, against FFmpeg's xpsnr filter on the
# same machine and files:
#   1. GPU-resident frames: qmetric-bench --metrics xpsnr --inputs device
#      (1080p 8-bit, 64 distinct frame pairs);
#   2. raw files from /dev/shm (scripts/rawgen.py, 8-bit 4:2:0):
#      qmetric-yuv --metrics xpsnr on the CUDA backend, on the CPU backend
#      (--threads CPU_THREADS; XPSNR itself is sequential: one thread
#      computes it, the others read), and FFmpeg's
#        ffmpeg -f rawvideo ... -r 24 -i REF -f rawvideo ... -r 24 -i DIS
#               -lavfi "[0:v][1:v]xpsnr=stats_file=S" -f null -
#      if FFMPEG names a binary that has the filter (n7.1 or later).
#      Frames/s in the steady state = (N_LONG - N_SHORT) / (T(N_LONG) -
#      T(N_SHORT)), T the wall time of a whole run (start-up cancels out);
#      the tools alternate within each round.
#   3. the values: every frame's xpsnr_y/u/v of each qmetric run against
#      FFmpeg's stats file (4 decimals: |diff| <= 5e-5) and the log's
#      aggregate_metrics against FFmpeg's closing line.
#   OUT=/tmp/out [FFMPEG=/path/to/ffmpeg] scripts/gpu-xpsnr.sh [build-dir]
# env: SIZE (1920x1080), N_SHORT (200), N_LONG (2000), DISTINCT (64),
#      REPEATS (2), FPS (24: the temporal term's rate), CPU_THREADS (16),
#      COMMIT (reported; else git's HEAD, which a copied work tree may not match).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-gpu}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
size=${SIZE:-1920x1080}
w=${size%x*} h=${size#*x}
ns=${N_SHORT:-200} nl=${N_LONG:-2000}
fps=${FPS:-24}
txt=$OUT/xpsnr.txt
dir=/dev/shm/qmetric-xpsnr
mkdir -p $dir
trap 'rm -rf $dir' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee "$txt"
echo "$(nproc) CPU cores; commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}" | tee -a "$txt"

echo "== GPU-resident frames (qmetric-bench)" | tee -a "$txt"
"$B/bench/qmetric-bench" --metrics xpsnr --sizes "$size" --bits 8 --backends cuda \
  --inputs device --distinct 64 --seconds 3 --json "$OUT/xpsnr-bench.json" 2>&1 | tee -a "$txt"

python3 scripts/rawgen.py "$dir" "$w" "$h" "$nl" "${DISTINCT:-64}" || exit 1
echo "== raw files: 2 x $nl frames of ${w}x${h} 8-bit 4:2:0, $fps fps" | tee -a "$txt"
tools=(cuda cpu)
if [ -n "${FFMPEG:-}" ] && "$FFMPEG" -hide_banner -filters 2>/dev/null | grep -qw xpsnr; then
  tools+=(ffmpeg)
  "$FFMPEG" -version | head -1 | tee -a "$txt"
else
  echo "no FFmpeg with the xpsnr filter (FFMPEG=${FFMPEG:-unset}): qmetric only" | tee -a "$txt"
fi
run() {  # tool frames prefix -> seconds of wall time
  local tool=$1 n=$2 p=$3 t0 t1
  t0=$(date +%s.%N)
  case $tool in
    cuda|cpu)
      local thr=()
      [ $tool = cpu ] && thr=(--threads "${CPU_THREADS:-16}")
      "$B/tools/qmetric-yuv" -r $dir/ref.yuv -d $dir/dis.yuv --width $w --height $h \
        --metrics xpsnr --fps "$fps" --backend $tool "${thr[@]}" --frames $n -o "$p.json" \
        >"$p.log" 2>&1 || { tail -3 "$p.log" >&2; return 1; } ;;
    ffmpeg)
      local in=(-f rawvideo -pix_fmt yuv420p -s "${w}x${h}" -r "$fps")
      "$FFMPEG" -hide_banner -nostdin "${in[@]}" -i $dir/ref.yuv "${in[@]}" -i $dir/dis.yuv \
        -frames:v $n -lavfi "[0:v][1:v]xpsnr=stats_file=$p.stats" -f null - \
        >"$p.log" 2>&1 || { tail -3 "$p.log" >&2; return 1; } ;;
  esac
  t1=$(date +%s.%N)
  awk "BEGIN { printf \"%.3f\", $t1 - $t0 }"
}
printf '%-8s %6s %10s %10s %10s\n' tool round "T($ns) s" "T($nl) s" frames/s | tee -a "$txt"
for r in $(seq 1 "${REPEATS:-2}"); do
  for tool in "${tools[@]}"; do
    ts=$(run $tool $ns /tmp/xpsnr-$tool-short) || continue
    tl=$(run $tool $nl /tmp/xpsnr-$tool) || continue
    # start-up varies by more than N_LONG - N_SHORT frames take: no figure
    f=$(awk "BEGIN { d = $tl - $ts; if (d <= 0.05 * $tl) print \"n/a (too few frames)\"; else printf \"%.0f\", ($nl - $ns) / d }")
    printf '%-8s %6s %10s %10s %10s\n' $tool $r $ts $tl $f | tee -a "$txt"
  done
done
python3 - "${tools[@]}" <<'PY' | tee -a "$txt"
import json, os, re, sys
tools = [t for t in sys.argv[1:]
         if os.path.exists("/tmp/xpsnr-%s.%s" % (t, "stats" if t == "ffmpeg" else "json"))]
runs = {t: json.load(open("/tmp/xpsnr-%s.json" % t)) for t in tools if t != "ffmpeg"}
keys = ("xpsnr_y", "xpsnr_u", "xpsnr_v")
if "cuda" in runs and "cpu" in runs:
    a, b = runs["cuda"], runs["cpu"]
    same = all(x["metrics"][k] == y["metrics"][k] for x, y in zip(a["frames"], b["frames"])
               for k in keys) and a["aggregate_metrics"] == b["aggregate_metrics"]
    print("cuda vs cpu: %d frames, %s" % (len(a["frames"]), "identical" if same else "DIFFERENT"))
if "ffmpeg" in tools:
    lines = open("/tmp/xpsnr-ffmpeg.stats").read().splitlines()
    frames = [l for l in lines if l.startswith("n:")]
    for t, log in runs.items():
        worst = 0.0
        for x, l in zip(log["frames"], frames):
            v = [float(s) for s in re.findall(r"XPSNR [yuv]: *([0-9.]+|inf)", l)]
            worst = max([worst] + [abs(x["metrics"][k] - v[i]) for i, k in enumerate(keys)])
        avg = next(l for l in lines if l.startswith("XPSNR average"))
        pooled = [float(s) for s in re.findall(r" [yuv]: *([0-9.]+)", avg)]
        pw = max(abs(log["aggregate_metrics"][k] - pooled[i]) for i, k in enumerate(keys))
        print("%s vs ffmpeg: %d / %d frames, largest difference %.2g per frame (4 decimals "
              "printed), %.2g pooled" % (t, len(log["frames"]), len(frames), worst, pw))
PY
