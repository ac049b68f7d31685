#!/bin/bash
# scripts/gpu-batch.sh on the CPU at a small size (about 10 s): the title is
# made (segment copies joined, a tail), counted, scored whole and in four
# chunks that seek, merged, and the merged log equals the whole run's.
#   tests/batch_script.sh SOURCE_ROOT BUILD_ROOT
set -u
src=$1 build=$2
out=$(mktemp -d)
trap 'rm -rf "$out" /tmp/qmetric-gpu-batch-160x120-620-s250' EXIT
rm -rf /tmp/qmetric-gpu-batch-160x120-620-s250
FRAMES=620 SEGMENT=250 SIZE=160x120 BACKEND=cpu OUT=$out bash "$src/scripts/gpu-batch.sh" "$build" \
  >"$out/stdout.txt" 2>&1
rc=$?
cat "$out/stdout.txt"
[ $rc = 0 ] || { echo "FAIL: gpu-batch.sh exited $rc"; exit 1; }
grep -q '^merged log = whole log' "$out/gpu-batch.txt" || { echo "FAIL: no equal merge"; exit 1; }
grep -q 'joined 2 x 250 + their first 120' "$out/gpu-batch.txt" || { echo "FAIL: the title's parts"; exit 1; }
grep -q 'note: --count-frames' "$out/gpu-batch.txt" && { echo "FAIL: frames counted differ"; exit 1; }
echo "ok: title made, 4 chunks merged equal to the whole run"
