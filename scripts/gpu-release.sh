#!/bin/bash
# Everything a release checks on the GPU machine, in one device call (at
# most BUDGET_S seconds; the device tool returns at most 8 files, so each
# section's text result is copied into $OUT as it ends and the rest goes
# into one archive):
#   build    meson -Dcuda=enabled -Dgpu_archs=$GPU_ARCHS (and BASE_SRC's tree
#            beside it when given, for `regress`)
#   gates    side by side: the golden gates with backend=cuda (VMAF and its
#            features, the CTC presets, XPSNR, SSIMULACRA2) on the carried
#            .golden (scripts/golden-subset.sh), `parity --metric M` for every
#            metric of the build, and the meson tests that differ on a GPU
#            (TESTS); while they run, scripts/gpu-batch.sh makes its title
#   batch    scripts/gpu-batch.sh: a 20,000-frame 1080p H.264 title whole
#            and in chunks, one a GPU
#   xpsnr    scripts/gpu-xpsnr.sh (FFMPEG: an n7.1 build)
#   ctc      scripts/gpu-ctc.sh (VMAF: libvmaf 3.2's CLI)
#   s2       scripts/ssimulacra2-bench.sh (SSIMULACRA2: libjxl's tool)
#   regress  scripts/gpu-regress.sh against BASE_SRC (an older tree)
# Reference binaries are never committed: build them elsewhere and carry
# them in an ignored folder (gzipped binaries are unpacked: REFBIN_GZ).
#   COMMIT=<hash> OUT=$OUT scripts/gpu-release.sh
# env: SECTIONS (default all, in the order above), GPU_ARCHS (90), BASE_SRC,
#      FFMPEG, VMAF, SSIMULACRA2, REFBIN_GZ (a folder of NAME.gz: ffmpeg,
#      vmaf, ssimulacra2 unpacked and used where the variables are unset),
#      TESTS (meson tests to run), FRAMES (the batch title, 20000),
#      BUDGET_S (570: a timed section that would end later is cut to fit,
#      one with under 30 s left is skipped, and says so), REGRESS_SECTIONS
#      (gpu-regress.sh's SECTIONS: engine raw probes).
# COMMIT must be given: the GPU machine's git HEAD is not the tree sent.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/gpu-release.XXXXXX)
sections=" ${SECTIONS:-build gates batch xpsnr ctc s2 regress} "
sum=$OUT/summary.txt
T0=$(date +%s)
BUDGET_S=${BUDGET_S:-570}  # a device call's command may run 600 s
say() { echo "[t+$(($(date +%s) - T0))s] $*" | tee -a "$sum"; }
keep() { cp "$@" "$OUT"/ 2>/dev/null; }
want() { [[ $sections == *" $1 "* ]]; }
if [ -n "${REFBIN_GZ:-}" ]; then
  mkdir -p "$W/bin"
  for f in "$REFBIN_GZ"/*.gz; do
    [ -f "$f" ] || continue
    n=$(basename "$f" .gz)
    gunzip -c "$f" >"$W/bin/$n" && chmod +x "$W/bin/$n"
  done
  [ -x "$W/bin/ffmpeg" ] && : "${FFMPEG:=$W/bin/ffmpeg}"
  [ -x "$W/bin/vmaf" ] && : "${VMAF:=$W/bin/vmaf}"
  [ -x "$W/bin/ssimulacra2" ] && : "${SSIMULACRA2:=$W/bin/ssimulacra2}"
fi
[ -f .gpu/env.sh ] && { . .gpu/env.sh >/dev/null 2>&1 || { echo "gpu-release: cannot set up .gpu"; exit 1; }; }
export COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}
export GST_PLUGIN_PATH=$PWD/build-gpu/gst/qmetric QMETRIC_MODEL_PATH=$PWD/data/models
{ nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; echo "$(nproc) CPU cores; commit $COMMIT"; } |
  tee -a "$sum"

if want build; then
  if [ -n "${BASE_SRC:-}" ] && want regress; then
    (cd "$BASE_SRC" && meson setup build-gpu -Dcuda=enabled -Dgpu_archs="${GPU_ARCHS:-90}" -Dtests=disabled \
      -Dexamples=disabled && ninja -C build-gpu) >"$W/base-build.log" 2>&1 &
    base=$!
  fi
  GPU_ARCHS=${GPU_ARCHS:-90} OUT=$W/build timeout 300 scripts/gpu-run.sh build >/dev/null 2>&1
  say "build rc=$?"
  [ -n "${base:-}" ] && { wait "$base"; say "baseline build rc=$?"; }
  [ -x build-gpu/tools/qmetric-compare ] || { tail -30 "$W/build/build.log" | tee -a "$sum"; exit 1; }
fi

if want gates; then
  g=$W/gates
  mkdir -p "$g"
  [ -f .golden/manifest.json ] ||
    echo "no .golden (scripts/golden-subset.sh): golden gates not run" | tee -a "$sum"
  # speed_chroma's full parity set takes minutes: --quick
  pids=()
  for step in parity golden; do
    OUT=$g/$step PARITY_QUICK=speed_chroma STEP_TIMEOUT=200 scripts/gpu-run.sh $step >/dev/null 2>&1 &
    pids+=($!)
  done
  (QMETRIC_GOLDEN_REQUIRED=0 timeout 200 meson test -C build-gpu --print-errorlogs \
    ${TESTS:-chunk elements/overload elements/pairing ssimulacra2-tools elements/ssimulacra2-color examples/cuda-zero-copy} \
    >"$g/tests.log" 2>&1; echo "meson test: rc $?" >>"$g/tests.log") & pids+=($!)
  want batch && OUT=$W/batch MAKE_ONLY=1 FRAMES=${FRAMES:-20000} timeout 200 bash scripts/gpu-batch.sh build-gpu >"$W/title.log" 2>&1
  for p in "${pids[@]}"; do wait "$p"; done
  {
    cat "$g/golden/summary.txt" "$g/parity/summary.txt" 2>/dev/null | grep -v '^== '
    grep -E "^ *[0-9]+/[0-9]+ |^FAIL|rc " "$g/tests.log"
  } >"$g/gates.txt"
  keep "$g/gates.txt"
  say "gates: $(grep -c 'rc 0' "$g/gates.txt") of $(grep -c 'rc ' "$g/gates.txt") parts passed"
fi

# a timed section: NAME SECONDS RESULT [VAR=VALUE...] SCRIPT [ARG...] runs
# SCRIPT build-gpu ARG... with OUT=$W/NAME, then keeps its RESULT file
section() {
  local name=$1 secs=$2 res=$3 vars=() left
  shift 3
  # within the call's budget: a section gets what is left, or is skipped
  left=$((BUDGET_S - ($(date +%s) - T0) - 10))
  if [ "$left" -lt 30 ]; then
    say "$name skipped: ${left}s left of BUDGET_S=$BUDGET_S"
    return
  fi
  [ "$secs" -gt "$left" ] && secs=$left
  while [[ $1 == *=* ]]; do vars+=("$1"); shift; done
  local script=$1
  shift
  env OUT="$W/$name" "${vars[@]}" timeout "$secs" bash "$script" build-gpu "$@" >"$W/$name.log" 2>&1
  say "$name rc=$?"
  keep "$W/$name/$res"
}
want batch && section batch 200 gpu-batch.txt FRAMES="${FRAMES:-20000}" scripts/gpu-batch.sh
want xpsnr && section xpsnr 150 xpsnr.txt REPEATS=1 FFMPEG="${FFMPEG:-}" scripts/gpu-xpsnr.sh
want ctc && section ctc 100 ctc.txt CPU=0 VMAF="${VMAF:-}" scripts/gpu-ctc.sh
want s2 && section s2 120 ssimulacra2-bench.txt SSIMULACRA2="${SSIMULACRA2:-}" scripts/ssimulacra2-bench.sh
if want regress && [ -n "${BASE_SRC:-}" ]; then
  section regress 240 regress.txt BASE_NAME="${BASE_NAME:-$BASE_SRC}" \
    SECTIONS="${REGRESS_SECTIONS:-engine raw probes}" scripts/gpu-regress.sh "$BASE_SRC"
fi
tar -C "$W" -czf "$OUT/logs.tgz" --exclude='*.yuv' --exclude='*.mp4' --exclude='*.png' --exclude='gc-*' \
  --exclude=bin . 2>/dev/null
say "done"
rm -rf "$W"
