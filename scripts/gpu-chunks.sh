#!/bin/bash
# One raw title scored in chunks over the machine's GPUs, on the GPU
# machine: the work qmetric-batch hands to Dask workers, one per GPU
# (docs/batch.md), run here as plain processes, since the GPU machine has no
# Dask.  For G = 2, 4, ... up to the number of GPUs, the title is cut into G
# chunks scored at once, each by `qmetric-yuv --start --frames --partial`:
#   spread  chunk i on GPU i (CUDA_VISIBLE_DEVICES)
#   gpu0    every chunk on GPU 0: the control (more processes, one GPU)
# against `whole`, one process scoring the whole title on GPU 0.  Each
# process gets nproc/G CPU threads (whole: all).  Wall times include the
# processes' start-up and qmetric-merge; the merged log must equal the whole
# run's but for its speed ("fps").
#   OUT=/tmp/out scripts/gpu-chunks.sh [build-dir]
# env: SIZE (3840x2160), FRAMES (1500), SETS (metric lists separated by
#      ":", default "vmaf:vmaf,psnr_hvs,float_ms_ssim,ciede"), REPEATS (2),
#      BACKEND (cuda; cpu to try the script on a machine without GPUs).
# Needs numpy (scripts/rawgen.py) and a build with -Dcuda=enabled.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-gpu}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export QMETRIC_MODEL_PATH=${QMETRIC_MODEL_PATH:-$PWD/data/models}
size=${SIZE:-3840x2160}
w=${size%x*} h=${size#*x}
n=${FRAMES:-1500}
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
cores=$(nproc)
[ "$ngpu" -ge 2 ] || { echo "gpu-chunks: needs 2 GPUs or more (found $ngpu)"; exit 1; }
dir=/dev/shm/qmetric-chunks
tmp=/tmp/qmetric-chunks
mkdir -p $dir $tmp
trap 'rm -rf $dir $tmp' EXIT
python3 scripts/rawgen.py "$dir" "$w" "$h" "$n" || exit 1
yuv=("$B/tools/qmetric-yuv" -r $dir/ref.yuv -d $dir/dis.yuv --width "$w" --height "$h" --backend "${BACKEND:-cuda}")
res="$OUT/chunks.txt"
{
  echo "files: 2 x $n frames of ${w}x${h} 8-bit 4:2:0 in $dir; $cores CPU cores"
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
  printf '%-36s %-7s %3s %6s %9s %10s  %s\n' metrics mode G round "wall s" frames/s "log"
} | tee "$res"

secs() { awk "BEGIN { printf \"%.3f\", ($2 - $1) / 1e9 }"; }
row() {  # metrics mode G round t0 t1 verdict
  local s
  s=$(secs "$5" "$6")
  printf '%-36s %-7s %3s %6s %9s %10.0f  %s\n' "$1" "$2" "$3" "$4" "$s" \
    "$(awk "BEGIN { print $n / $s }")" "$7" | tee -a "$res"
}

# chunks G mode metrics: score the title in G chunks at once, merge
chunks() {
  local g=$1 mode=$2 m=$3 pids=() i start len fail=0
  rm -f $tmp/part* $tmp/merged.json
  for i in $(seq 0 $((g - 1))); do
    start=$((n * i / g))
    len=$((n * (i + 1) / g - start))
    CUDA_VISIBLE_DEVICES=$([ "$mode" = spread ] && echo "$i" || echo 0) \
      "${yuv[@]}" --metrics "$m" --threads $((cores / g)) --start $start --frames $len \
      --partial $tmp/part$i -o $tmp/chunk$i.json 2>$tmp/chunk$i.log &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || fail=1; done
  [ $fail = 0 ] || { tail -3 $tmp/chunk*.log >&2; return 1; }
  local parts=()
  for i in $(seq 0 $((g - 1))); do parts+=($tmp/part$i); done
  "$B/tools/qmetric-merge" -o $tmp/merged.json "${parts[@]}" 2>$tmp/merge.log
}

IFS=: read -r -a sets <<<"${SETS:-vmaf:vmaf,psnr_hvs,float_ms_ssim,ciede}"
for m in "${sets[@]}"; do
  for r in $(seq 1 "${REPEATS:-2}"); do
    t0=$(date +%s%N)
    CUDA_VISIBLE_DEVICES=0 "${yuv[@]}" --metrics "$m" --threads "$cores" --frames "$n" \
      -o $tmp/whole.json 2>$tmp/whole.log || { tail -3 $tmp/whole.log; exit 1; }
    t1=$(date +%s%N)
    row "$m" whole 1 "$r" "$t0" "$t1" ""
    for ((g = 2; g <= ngpu; g *= 2)); do
      for mode in spread gpu0; do
        t0=$(date +%s%N)
        chunks $g $mode "$m" || { echo "chunks $g $mode failed"; exit 1; }
        t1=$(date +%s%N)
        # equal but for the "fps" line (the speed of the run)
        if diff -q <(grep -v '"fps"' $tmp/merged.json) <(grep -v '"fps"' $tmp/whole.json) >/dev/null; then v="merged = whole"; else v="MERGED DIFFERS"; fi
        row "$m" $mode $g "$r" "$t0" "$t1" "$v"
      done
    done
  done
done
