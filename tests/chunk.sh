#!/bin/bash
# Chunked scoring is exact: for golden clips, the title is cut at every
# possible boundary b (chunks 0..b-1 and b..n-1, scored on their own by
# qmetric-yuv --start/--frames --partial) and qmetric-merge's log must equal
# the whole-title run's log frame by frame and pooled (every line but the
# speed), aggregate_metrics included.  Also: three uneven chunks with
# subsample, and the merge's refusals
# (gap, overlap, missing end, parts of other runs: tests/merge.sh checks
# each field of a chunk's identity).
#   tests/chunk.sh BUILD_DIR [GOLDEN_DIR]
set -uo pipefail
B=$1
G=${2:-${QMETRIC_GOLDEN_DIR:-$(dirname "$0")/../../shared/golden}}
YUV=$B/tools/qmetric-yuv
MERGE=$B/tools/qmetric-merge
if [ ! -f "$G/manifest.json" ]; then
  echo "SKIP: no golden data in $G"
  [ "${QMETRIC_GOLDEN_REQUIRED:-0}" = 1 ] && exit 1
  exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
check() {  # name, whole log, merged log
  if diff <(grep -v '"fps"' "$2") <(grep -v '"fps"' "$3") >"$T/diff"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); echo "FAIL: $1"; head -5 "$T/diff"
  fi
}
expect_refusal() {  # name, expected text, parts...
  local name=$1 want=$2; shift 2
  if "$MERGE" -o "$T/refused.json" "$@" 2>"$T/err"; then
    fail=$((fail + 1)); echo "FAIL: $name: merge accepted it"
  elif ! grep -qF "$want" "$T/err"; then
    fail=$((fail + 1)); echo "FAIL: $name: expected '$want', got: $(cat "$T/err")"
  else
    pass=$((pass + 1))
  fi
}

# case, pixel format, bit depth, metrics, models[, more qmetric-yuv options]
run_case() {
  local name=$1 pf=$2 bd=$3 metrics=$4 model=$5 more=(${6:-})
  local ref dis w h
  read -r ref dis w h < <(python3 - "$G" "$name" <<'PY'
import json, sys, os
m = json.load(open(os.path.join(sys.argv[1], "manifest.json")))
c = next((c for c in m["cases"] if c["name"] == sys.argv[2]), None)
print(*(c and (c["ref"], c["dis"], c["width"], c["height"]) or ("-",)))
PY
)
  if [ "$ref" = - ]; then
    # a partial copy of the golden data (the GPU machine's); CI has them all
    echo "note: $name is not in $G: not checked"
    [ "${QMETRIC_GOLDEN_REQUIRED:-0}" = 1 ] && fail=$((fail + 1))
    return
  fi
  for f in "$ref" "$dis"; do
    [ -f "$T/$(basename "$f" .xz)" ] || xz -dc "$G/$f" >"$T/$(basename "$f" .xz)"
  done
  local R=$T/$(basename "$ref" .xz) D=$T/$(basename "$dis" .xz)
  local args=(-r "$R" -d "$D" --width "$w" --height "$h" --pixel_format "$pf" --bitdepth "$bd"
              --metrics "$metrics" --model "$model" --threads 1 "${more[@]}")
  local n
  n=$("$YUV" "${args[@]}" --count-frames) || { fail=$((fail + 1)); return; }
  "$YUV" "${args[@]}" -o "$T/whole.json" 2>/dev/null || { fail=$((fail + 1)); echo "FAIL: $name whole run"; return; }
  # every prefix and every suffix once; boundary b joins prefix b and suffix b
  for ((b = 1; b < n; b++)); do
    "$YUV" "${args[@]}" --frames "$b" --partial "$T/pre$b.json" 2>/dev/null &&
    "$YUV" "${args[@]}" --start "$b" --partial "$T/suf$b.json" 2>/dev/null ||
      { fail=$((fail + 1)); echo "FAIL: $name chunk run at $b"; continue; }
  done
  for ((b = 1; b < n; b++)); do
    "$MERGE" -o "$T/merged.json" "$T/suf$b.json" "$T/pre$b.json" 2>/dev/null
    check "$name ($model) split at frame $b of $n" "$T/whole.json" "$T/merged.json"
  done
  echo "$name ($model, $metrics${6:+, $6}): $((n - 1)) boundaries checked"
  # three uneven chunks with subsample 3 (chunk starts not on the step)
  "$YUV" "${args[@]}" --subsample 3 -o "$T/whole3.json" 2>/dev/null
  local c1=$((n / 3 + 1)) c2=$((n / 3 + 2))
  "$YUV" "${args[@]}" --subsample 3 --frames $c1 --partial "$T/a.json" 2>/dev/null
  "$YUV" "${args[@]}" --subsample 3 --start $c1 --frames $c2 --partial "$T/b.json" 2>/dev/null
  "$YUV" "${args[@]}" --subsample 3 --start $((c1 + c2)) --frames 1000000 --partial "$T/c.json" 2>/dev/null
  "$MERGE" -o "$T/merged3.json" "$T/c.json" "$T/a.json" "$T/b.json" 2>/dev/null
  check "$name subsample 3 in three chunks" "$T/whole3.json" "$T/merged3.json"
  # refusals
  expect_refusal "$name gap" "are in no part" "$T/a.json" "$T/c.json"
  "$YUV" "${args[@]}" --subsample 3 --frames $c2 --partial "$T/a2.json" 2>/dev/null
  expect_refusal "$name overlap" "are in two parts" "$T/a.json" "$T/a2.json" "$T/b.json" "$T/c.json"
  # a part of the whole-frame run among subsample 3's
  expect_refusal "$name another subsample" "in settings.subsample: " "$T/a.json" "$T/suf$c1.json"
  expect_refusal "$name missing end" "before the end of the input" "$T/a.json" "$T/b.json"
}

run_case ladybird_576x324_yuv420p_x264crf35 420 8 vmaf,psnr,float_ssim,cambi vmaf_v0.6.1
run_case aqua_576x324_yuv420p10le_x264crf30 420 10 vmaf,psnr vmaf_v0.6.1neg
# XPSNR remembers two reference frames (from zero at a run's start) and
# pools from its frames' weighted SSE (aggregate_metrics): first-order at
# 24 fps, second-order at 60
run_case garden_576x324_yuv420p_x264crf30 420 8 xpsnr,psnr vmaf_v0.6.1
run_case aqua_576x324_yuv420p10le_x264crf30 420 10 xpsnr vmaf_v0.6.1 "--fps 60"
# SSIMULACRA2: per frame, pooled from its chunks' full-precision rows
run_case mandelbrot_576x324_yuv420p_x264crf45 420 8 ssimulacra2 vmaf_v0.6.1
# the five-frame-window motion of the _hfr models reaches furthest back
if "$YUV" --list >/dev/null && [ -n "$(ls "$(dirname "$0")/../data/models/" | grep hfr_3d0h)" ]; then
  run_case mandelbrot_576x324_yuv420p_x264crf35 420 8 vmaf vmaf_v1.0.16_hfr_3d0h
else
  echo "note: no vmaf_v1.0.16_hfr_3d0h model in data/models: five-frame-window motion not checked"
fi
# a part of another run is refused: frames 3..5 of the same clips with the
# inputs swapped (same size and format, another reference) after frames
# 0..2 (made here, so that the check holds whichever cases a partial copy of
# the golden data has)
lref=$T/$(ls "$T" | grep 'ladybird.*ref' | head -1) ldis=$T/$(ls "$T" | grep 'ladybird.*dis' | head -1)
"$YUV" -r "$lref" -d "$ldis" --width 576 --height 324 --metrics psnr --frames 3 \
  --partial "$T/mine.json" 2>/dev/null
"$YUV" -r "$ldis" -d "$lref" --width 576 --height 324 --metrics psnr --start 3 --frames 3 \
  --partial "$T/other.json" 2>/dev/null
expect_refusal "foreign part" "in inputs.reference.fingerprint: " "$T/mine.json" "$T/other.json"

echo "chunk: $pass passed, $fail failed"
[ "$fail" = 0 ]
