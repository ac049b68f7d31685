#!/bin/bash
# Per-kernel accounting on the GPU machine (docs/benchmarks.md, "Per-kernel
# table"): the device-to-device copy ceiling, then for each metric alone at
# one size an `ncu` profile of a stretch of steady-state launches of
# qmetric-bench (pictures in GPU memory), summarised by
# scripts/kernel-table.py.  Registers and spills come from
# `scripts/kernel-table.py regs` (no GPU needed).
#   scripts/gpu-kernels.sh [build-dir]      (after scripts/gpu-run.sh build)
# env: KERNEL_METRICS (default: vif adm motion psnr float_ssim float_ms_ssim
#      psnr_hvs ciede cambi), KERNEL_SIZE (1920x1080), OUT (/tmp/out)
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-gpu}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
size=${KERNEL_SIZE:-1920x1080}
nvcc -O3 -o /tmp/copybw bench/copybw.cu || exit 1
/tmp/copybw 1024 | tee "$OUT/copybw.json"
gbps=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["read_plus_write_GBps"])' "$OUT/copybw.json")
python3 scripts/kernel-table.py regs --arch "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)" \
  > "$OUT/kernels-regs.md" || echo "regs failed"
metrics="vif,adm,motion,psnr,float_ssim,float_ms_ssim,psnr_hvs,ciede,cambi"
: > "$OUT/kernels.md"
for m in ${KERNEL_METRICS:-${metrics//,/ }}; do
  # skip the first launches (allocation, first-touch), profile 120
  ncu --clock-control none --csv --print-units base --launch-skip 300 --launch-count 120 \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed \
      "$B/bench/qmetric-bench" --device-input --sizes "$size" --bits 8 --metrics "$m" \
      --backends cuda --seconds 0.3 > "$OUT/ncu-$m.csv" 2> "$OUT/ncu-$m.err"
  echo "ncu $m rc=$?"
  python3 scripts/kernel-table.py ncu "$OUT/ncu-$m.csv" --copy-gbps "$gbps" \
    --title "$m, $size 8-bit, pictures in GPU memory" >> "$OUT/kernels.md" 2>>"$OUT/ncu-$m.err" \
    || tail -5 "$OUT/ncu-$m.err"
  echo >> "$OUT/kernels.md"
done
cat "$OUT/kernels.md"
