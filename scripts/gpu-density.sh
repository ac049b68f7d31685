#!/bin/bash
# Live density on one GPU, each figure against what the same decoders keep
# without qmetric (issue 25), in one device call:
#   build      meson -Dcuda=enabled -Dgpu_archs=$GPU_ARCHS, tests off
#   streams    H.264 1080p60 (a 50 Mbit/s contribution encode and four
#              renditions, 2-12 Mbit/s) and HEVC Main 10 2160p60 files, for
#              the compare and probe sections (x264enc, x265enc)
#   memory     48 probes from GPU memory, 5 runs (ready p50/p99/max each)
#   decoded    the distorted side through nvh264dec (1080p60, 8 Mbit/s):
#              probes kept at real time / decode-only streams kept, both
#              found by bisection in one qmetric-bench-probes invocation
#   both       both sides decoded (contribution against distribution)
#   hevc       HEVC Main 10 2160p60 through nvh265dec (P010)
#   ab         one probe count, one knob changed a run: the suspects of
#              docs/cuda.md ("Live probes beside decoders") told apart
#   compare    qmetric-compare on the files (a pair, a 4-rendition ladder,
#              1080p and 2160p) against decoding the same files alone
#   probe      qmetric-probe with PROBE_N probes from a generated config,
#              scraped by Prometheus where its binary is carried
# Every bench run writes its JSON (stall records included); at the end
# scripts/density-report.py makes the figures of record.
#
# On the GPU machine (carry .gpu: bash ../shared/gpu/bundle.sh, then
# bash scripts/gpu-density-bundle.sh, here), in one device call:
#   COMMIT=<hash> OUT=$OUT scripts/gpu-density.sh
# Expected duration: about 7.5 min (QUICK=1: about 5 min), build included;
# the sections run in the order above under one budget (BUDGET_S, default
# 470 s; QUICK=1 300 s), each within its own share, and a section is skipped,
# and said so, when too little is left for it.
# Here, without a GPU, the same logic on the CPU backend at small sizes
# (about 4 min on 2 cores; reuses ./build):
#   CPU=1 QUICK=1 OUT=/tmp/density scripts/gpu-density.sh
# Env: QUICK, CPU, BUDGET_S, GPU_ARCHS (90), COMMIT, PROBE_N (24; CPU 2),
#      AB_N (the probe count of the ab section; default from `decoded`),
#      STREAMS_DIR (where the files are made; files already there are reused),
#      BUILD (the build directory: build-gpu; CPU=1: build),
#      TRACERS=1 (one decoded run with GST_TRACERS=latency;stats into the
#      logs), SECTIONS (default all, in the order above), GST_ENV (a script
#      sourced after .gpu/env.sh: another GStreamer build to run against).
# Results in $OUT: density.txt (the table), density.json (the figures of
# record), density-logs.tar.gz (every JSON and log), progress.log.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-/tmp/density-out}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/density.XXXXXX)   # section outputs; tarred into $OUT at the end
T0=$(date +%s)
QUICK=${QUICK:-}
CPU=${CPU:-}
BUDGET_S=${BUDGET_S:-$([ -n "$QUICK" ] && echo 300 || echo 470)}
SECTIONS=${SECTIONS:-build streams memory decoded both hevc ab compare probe}
[ $# -gt 0 ] && SECTIONS="$*"

log() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/progress.log"; }
left() { echo $(( BUDGET_S - ($(date +%s) - T0) )); }
skip() { log "skipped $1: $2"; echo "$1: $2" >>"$W/skipped.txt"; }
want() { [[ " $SECTIONS " == *" $1 "* ]]; }
# a section's share: at most $1 s, and never the last 20 s of the budget
budget() { local l; l=$(( $(left) - 20 )); [ $l -gt $1 ] && l=$1; echo $l; }
finish() {
  log "report"
  /usr/bin/python3 "$ROOT/scripts/density-report.py" "$W" "$OUT/density.json" \
    >"$OUT/density.txt" 2>>"$OUT/progress.log" || log "density-report.py failed"
  cat "$OUT/density.txt"
  cp "$OUT/progress.log" "$W/" 2>/dev/null
  tar -czf "$OUT/density-logs.tar.gz" -C "$W" . && rm -rf "$W"
  log "done in $(( $(date +%s) - T0 )) s"
}
trap finish EXIT

# ---- the machine ----
if [ -n "$CPU" ]; then
  BK=cpu B=${BUILD:-build}
  W1080=320 H1080=180 W2160=640 H2160=360
  PROBE_N=${PROBE_N:-2}
else
  BK=cuda B=${BUILD:-build-gpu}
  W1080=1920 H1080=1080 W2160=3840 H2160=2160
  PROBE_N=${PROBE_N:-24}
  . .gpu/env.sh >/dev/null 2>&1 || { log "cannot set up .gpu (../shared/gpu/README.md)"; exit 1; }
  # another GStreamer beside the bundle (e.g. a 1.24 build: its tools,
  # libraries and plugins first), set up by a script of the caller's
  if [ -n "${GST_ENV:-}" ]; then
    . "$GST_ENV" || { log "cannot source GST_ENV=$GST_ENV"; exit 1; }
  fi
  # what scripts/gpu-density-bundle.sh carried: Prometheus, and the
  # libraries of x265enc and qmetric-probe that the bundle lacks
  if [ -f .gpu/bin/prometheus.gz ] && [ ! -x /tmp/prometheus ]; then
    gzip -dc .gpu/bin/prometheus.gz >/tmp/prometheus && chmod +x /tmp/prometheus
  fi
  # env.sh exposes only what GStreamer's plugins need; libyaml
  # (qmetric-probe) is exposed here when the machine lacks it
  have=$(ldconfig -p)
  for f in /opt/gst/usr/lib/x86_64-linux-gnu/lib*.so.*; do
    b=${f##*/}
    [[ $b =~ \.so\.[0-9]+$ ]] || continue     # sonames only
    [ -e /opt/gstlibs/$b ] || grep -q "^[[:space:]]*$b " <<<"$have" || ln -sf "$f" /opt/gstlibs/$b
  done
  # empty pkg-config stubs for what yaml-0.1.pc names but is not carried
  for round in 1 2 3 4; do
    miss=$(pkg-config --cflags --libs yaml-0.1 2>&1 | sed -n "s/^Package '\([^']*\)'.*not found.*/\1/p" | sort -u)
    [ -z "$miss" ] && break
    for m in $miss; do printf 'Name: %s\nDescription: stub\nVersion: 999\n' "$m" >/opt/gst/pcstubs/$m.pc; done
  done
fi
case $B in /*) ;; *) B=$ROOT/$B ;; esac
export GST_PLUGIN_PATH=$B/gst/qmetric QMETRIC_MODEL_PATH=$ROOT/data/models
export QMETRIC_BACKTRACE=1  # a crash prints where (docs/cli.md)
PROM=$(command -v prometheus 2>/dev/null || true)
[ -x /tmp/prometheus ] && PROM=/tmp/prometheus
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
{
  echo "{\"commit\": \"$COMMIT\", \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
  echo " \"quick\": $([ -n "$QUICK" ] && echo true || echo false), \"cpu\": $([ -n "$CPU" ] && echo true || echo false),"
  echo " \"budget_s\": $BUDGET_S, \"sections\": \"$SECTIONS\", \"ncpu\": $(nproc),"
  echo " \"command\": \"$([ -n "$QUICK" ] && echo 'QUICK=1 ')$([ -n "$CPU" ] && echo 'CPU=1 ')scripts/gpu-density.sh\","
  echo " \"card\": \"$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)\","
  echo " \"driver\": \"$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)\","
  echo " \"gstreamer\": \"$(gst-launch-1.0 --version 2>/dev/null | sed -n 's/^GStreamer //p' | head -1)\","
  echo " \"prometheus\": \"${PROM:-}\"}"
} >"$W/meta.json"
log "density: $BK backend, commit $COMMIT, budget ${BUDGET_S}s, sections: $SECTIONS"
[ -z "$CPU" ] && nvidia-smi -L | tee -a "$OUT/progress.log"

# ---- build ----
if want build; then
  if [ -n "$CPU" ] && [ -x $B/bench/qmetric-bench-probes ]; then
    log "build: reusing $B"
    ninja -C $B >"$W/build.log" 2>&1 || { log "build failed"; tail -20 "$W/build.log"; exit 1; }
  else
    log "build ($B)"
    opts="-Dtests=disabled -Dexamples=disabled"
    [ -n "$CPU" ] && opts="$opts -Dcuda=disabled" || opts="$opts -Dcuda=enabled -Dgpu_archs=${GPU_ARCHS:-90}"
    { [ -d $B ] || meson setup $B $opts; } >"$W/setup.log" 2>&1 || { log "meson setup failed"; tail -20 "$W/setup.log"; exit 1; }
    ninja -C $B >"$W/build.log" 2>&1 || { log "build failed"; grep -E "error|FAILED" "$W/build.log" | head -20; exit 1; }
  fi
  if [ -z "$CPU" ] && [ -x $B/tools/probe/qmetric-probe ]; then
    ldd $B/tools/probe/qmetric-probe | grep "not found" >>"$W/build.log" &&
      log "qmetric-probe lacks libraries (see build.log)"
  fi
fi
BENCH=$B/bench/qmetric-bench-probes
[ -x $BENCH ] || { log "no $BENCH: build first"; exit 1; }

# ---- streams (files for compare and probe) ----
F=${STREAMS_DIR:-/tmp/density-streams-$W1080}
if [ -n "$CPU" ]; then N1080=300 N2160=30
elif [ -n "$QUICK" ]; then N1080=480 N2160=60
else N1080=900 N2160=300; fi
REF1080=$F/ref1080.mp4 REF2160=$F/ref2160.mp4
R1080=() R2160=()
for i in 1 2 3 4; do R1080+=("$F/r1080-$i.mp4"); R2160+=("$F/r2160-$i.mp4"); done
HAVE_X265=$(gst-inspect-1.0 x265enc >/dev/null 2>&1 && echo 1)
if want streams; then
  mkdir -p $F
  if [ -n "$HAVE_X265" ]; then hevc="HEVC Main 10 ${W2160}x${H2160}p60 x $N2160 frames (ref + 4)"
  else hevc="no HEVC files: no x265enc (scripts/gpu-density-bundle.sh carries libx265)"; fi
  log "streams: H.264 ${W1080}x${H1080}p60 x $N1080 frames (ref + 4); $hevc"
  src="videotestsrc pattern=zone-plate kx2=20 ky2=20 kt=1"
  enc264() {  # out kbps
    [ -s "$1" ] || gst-launch-1.0 -q $src num-buffers=$N1080 ! \
      video/x-raw,format=I420,width=$W1080,height=$H1080,framerate=60/1 ! \
      x264enc speed-preset=superfast bitrate=$2 key-int-max=120 ! video/x-h264,profile=high ! \
      h264parse ! mp4mux ! filesink location="$1.part" >>"$W/streams.log" 2>&1 && mv "$1.part" "$1"
  }
  enc265() {
    [ -s "$1" ] || gst-launch-1.0 -q $src num-buffers=$N2160 ! \
      video/x-raw,format=I420_10LE,width=$W2160,height=$H2160,framerate=60/1 ! \
      x265enc speed-preset=ultrafast bitrate=$2 key-int-max=120 ! video/x-h265,profile=main-10 ! \
      h265parse ! mp4mux ! filesink location="$1.part" >>"$W/streams.log" 2>&1 && mv "$1.part" "$1"
  }
  enc264 $REF1080 50000 &
  k=1; for r in 2000 4000 8000 12000; do enc264 ${R1080[$((k - 1))]} $r & k=$((k + 1)); done
  if [ -n "$HAVE_X265" ]; then
    enc265 $REF2160 40000 &
    k=1; for r in 6000 10000 16000 24000; do enc265 ${R2160[$((k - 1))]} $r & k=$((k + 1)); done
  fi
  wait
  ls -l $F >>"$W/streams.log"
fi

# ---- the bench sections ----
# run_bench NAME BUDGET_S ARGS...: one qmetric-bench-probes invocation,
# under the budget (its own --time-budget, and a hard limit beyond it)
run_bench() {
  local name=$1 b=$2; shift 2
  log "$name: qmetric-bench-probes $* (time budget ${b}s)"
  timeout -k 10 $(( b + 90 )) $BENCH --backend $BK --timeout 15 --json "$W/$name.json" \
    --time-budget $b "$@" >"$W/$name.txt" 2>&1
  local rc=$?
  grep -E "^largest|^single|stopped|SKIP" "$W/$name.txt" | sed "s/^/  /" | tee -a "$OUT/progress.log"
  [ $rc -eq 0 ] || log "$name: exit $rc (see $name.txt)"
  return 0
}
if [ -n "$CPU" ]; then
  SIZE=(--width $W1080 --height $H1080) SIZE4K=(--width $W2160 --height $H2160)
  RUN=(--duration 1.5 --warmup 0.5) MEM_N=2 MEM_RUNS=2
  DEC_RANGE=1:3:1 BOTH_RANGE=1:2:1 HEVC_RANGE=1:2:1 REFKB=(--ref-bitrate 3000)
  DISTINCT=16 DISTINCT4K=8 KBPS4K=3000
elif [ -n "$QUICK" ]; then
  SIZE=() SIZE4K=(--width 3840 --height 2160)
  RUN=(--duration 3 --warmup 2) MEM_N=48 MEM_RUNS=3
  DEC_RANGE=8:64:8 BOTH_RANGE=4:40:8 HEVC_RANGE=2:24:4 REFKB=()
  DISTINCT=60 DISTINCT4K=16 KBPS4K=20000
else
  SIZE=() SIZE4K=(--width 3840 --height 2160)
  RUN=(--duration 3 --warmup 2) MEM_N=48 MEM_RUNS=5
  DEC_RANGE=8:64:4 BOTH_RANGE=4:40:6 HEVC_RANGE=2:26:3 REFKB=()
  DISTINCT=60 DISTINCT4K=16 KBPS4K=20000
fi

if want memory; then
  if [ "$(left)" -lt 60 ]; then skip memory "$(left) s left"; else
    list=$(printf "$MEM_N,%.0s" $(seq $MEM_RUNS)); list=${list%,}
    run_bench memory "$(budget 60)" "${SIZE[@]}" --sweep $list --keep-going \
      --pair-latency 100 --duration $([ -n "$CPU" ] && echo 1.5 || echo 3) --warmup 1
  fi
fi
if want decoded; then
  if [ "$(left)" -lt 80 ]; then skip decoded "$(left) s left"; else
    run_bench decoded "$(budget 110)" "${SIZE[@]}" "${RUN[@]}" --dist-source decode \
      --baseline --bisect $DEC_RANGE --distinct $DISTINCT --bitrate 8000
  fi
fi
if want both; then
  if [ "$(left)" -lt 70 ]; then skip both "$(left) s left"; else
    run_bench both "$(budget 80)" "${SIZE[@]}" "${RUN[@]}" --dist-source decode \
      --ref-source decode "${REFKB[@]}" --baseline --bisect $BOTH_RANGE --distinct $DISTINCT \
      --no-single-check
  fi
fi
if want hevc; then
  if [ "$(left)" -lt 70 ]; then skip hevc "$(left) s left"; else
    run_bench hevc "$(budget 80)" "${SIZE4K[@]}" "${RUN[@]}" --bits 10 --codec h265 \
      --dist-source decode --baseline --bisect $HEVC_RANGE --distinct $DISTINCT4K \
      --bitrate $KBPS4K --no-single-check
  fi
fi

# ---- ab: one knob a run, at one probe count ----
if want ab; then
  if [ "$(left)" -lt 60 ]; then skip ab "$(left) s left"; else
    n=${AB_N:-$(/usr/bin/python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    p, b = d.get("max_kept_probes") or 0, d.get("max_kept_decode_only") or 0
    # past the probes kept, within what the decoders alone keep
    print(max(1, min(b, p + 8)) if b else sys.argv[2])
except (OSError, ValueError):
    print(sys.argv[2])' "$W/decoded.json" "$([ -n "$CPU" ] && echo 2 || echo 24)")}
    log "ab: $n probes, distorted decoded, one change a run"
    common=("${SIZE[@]}" "${RUN[@]}" --dist-source decode --distinct $DISTINCT --bitrate 8000
            --probes $n --no-single-check)
    variants=("default" "threads2 --threads 2")
    if [ -z "$CPU" ]; then
      variants+=("connections32 env CUDA_DEVICE_MAX_CONNECTIONS=32"
                 "onestream env QMETRIC_CUDA_STREAMS=1"
                 "blocking --cuda-sched blocking")
    fi
    for v in "${variants[@]}"; do
      [ "$(left)" -lt 25 ] && { skip "ab-${v%% *}" "$(left) s left"; continue; }
      set -- $v; name=$1; shift; envs=(); args=()
      if [ "${1:-}" = env ]; then envs=("$2"); shift 2; fi
      args=("$@")
      log "ab-$name: ${envs[*]:-} ${args[*]:-}"
      env "${envs[@]}" timeout -k 10 120 $BENCH --backend $BK --timeout 15 "${common[@]}" \
        "${args[@]}" --json "$W/ab-$name.json" >"$W/ab-$name.txt" 2>&1 || log "ab-$name: exit $?"
    done
    if [ -z "$CPU" ] && [ "$(left)" -ge 40 ]; then
      # a CUDA context a probe (what separate pipelines get) against one shared
      m=$(( (n + 1) / 2 ))
      for ctx in shared per-probe; do
        log "ab-context-$ctx: $m probes, both sides decoded"
        timeout -k 10 120 $BENCH --backend $BK --timeout 15 "${SIZE[@]}" "${RUN[@]}" \
          --dist-source decode --ref-source decode --distinct $DISTINCT --probes $m \
          --no-single-check --cuda-context $ctx --json "$W/ab-context-$ctx.json" \
          >"$W/ab-context-$ctx.txt" 2>&1 || log "ab-context-$ctx: exit $?"
      done
    fi
    if [ -n "${TRACERS:-}" ] && [ "$(left)" -ge 30 ]; then
      log "tracers: 4 probes with GST_TRACERS=latency;stats"
      GST_TRACERS="latency(flags=pipeline+element);stats" GST_DEBUG="GST_TRACER:7" \
        GST_DEBUG_FILE="$W/tracers.log" timeout -k 10 60 $BENCH --backend $BK "${SIZE[@]}" \
        --duration 2 --warmup 1 --dist-source decode --probes 4 --no-single-check \
        --json "$W/tracers.json" >"$W/tracers.txt" 2>&1
      gzip -f "$W/tracers.log"
    fi
  fi
fi

# ---- compare: qmetric-compare against decoding the same files alone ----
QC=$B/tools/qmetric-compare
# decode_only LABEL FILE...: every file through uridecodebin into a fakesink,
# in one process (as qmetric-compare decodes them), timed
decode_only() {
  local label=$1; shift
  local args=() f
  for f in "$@"; do
    args+=(uridecodebin "uri=file://$f" "caps=video/x-raw(ANY)" expose-all-streams=false ! fakesink sync=false)
  done
  local t=$(date +%s%N)
  timeout -k 5 120 gst-launch-1.0 -v "${args[@]}" >"$W/decode-$label.log" 2>&1
  local rc=$?
  echo "$rc $(( ($(date +%s%N) - t) / 1000000 ))"
}
compare_row() {  # LABEL FRAMES REF DIST...
  local label=$1 frames=$2; shift 2
  [ -s "$1" ] || { skip "compare-$label" "no input files"; return; }
  [ "$(left)" -lt 20 ] && { skip "compare-$label" "$(left) s left"; return; }
  local d t rc ms
  d=$(decode_only $label "$@")
  t=$(date +%s%N)
  timeout -k 5 180 $QC "$@" --backend $BK --summary json >"$W/compare-$label.json" \
    2>"$W/compare-$label.log"
  rc=$?
  ms=$(( ($(date +%s%N) - t) / 1000000 ))
  # buffers the elements read in CUDA memory in place, and copied (all elements)
  local gpu
  gpu=$(/usr/bin/python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
b = [e["cuda_buffers"] for e in s.get("renditions", [s])]
print(sum(x["in_place"] for x in b), sum(x["copied"] for x in b))' "$W/compare-$label.json" 2>/dev/null)
  local decs
  # the decoder of each uridecodebin (names repeat across bins: keep the bin)
  # (1.22 names the NVDEC decoders' types nvh264dec, nvh265dec, ...)
  decs=$(grep -oE 'uridecodebin[0-9]+/[^ ]*/(GstNv[A-Za-z0-9]*Dec|nv[a-z0-9]+dec|avdec_[a-z0-9]*):' \
           "$W/decode-$label.log" | sed -E 's|^(uridecodebin[0-9]+)/.*/([^/:]+):$|\1 \2|' |
         sort -u | awk '{print $2}' | sort | uniq -c | awk '{printf "%s%sx%s", s, $1, $2; s=","}')
  [ -n "$gpu" ] || gpu="? ?"
  echo "$label $frames $# $rc $ms ${d% *} ${d#* } ${decs:-?} $gpu" >>"$W/compare.tsv"
  log "compare $label: qmetric-compare ${ms} ms (rc $rc), decode only ${d#* } ms (rc ${d% *}), decoders ${decs:-?}; buffers in CUDA memory read in place ${gpu% *}, copied ${gpu#* }"
}
if want compare; then
  [ -x $QC ] || skip compare "no $QC"
  if [ -x $QC ]; then
    echo "label frames inputs compare_rc compare_ms decode_rc decode_ms decoders in_place copied" >"$W/compare.tsv"
    compare_row pair1080 $N1080 $REF1080 ${R1080[2]}
    compare_row ladder1080 $N1080 $REF1080 "${R1080[@]}"
    compare_row pair2160 $N2160 $REF2160 ${R2160[2]}
    [ -z "$QUICK" ] && compare_row ladder2160 $N2160 $REF2160 "${R2160[@]}"
  fi
fi

# ---- probe: the real program, N probes from a config ----
if want probe; then
  QP=$B/tools/probe/qmetric-probe
  if [ ! -x $QP ]; then skip probe "no $QP (it needs libyaml and libxcrypt: scripts/gpu-density-bundle.sh)"
  elif [ ! -s $REF1080 ]; then skip probe "no input files"
  elif [ "$(left)" -lt 25 ]; then skip probe "$(left) s left"
  else
    dur=$(( N1080 / 60 - 1 )); l=$(( $(left) - 12 )); [ $dur -gt $l ] && dur=$l
    log "probe: qmetric-probe, $PROBE_N probes for ${dur}s${PROM:+, Prometheus scraping}"
    timeout -k 10 $(( dur + 60 )) /usr/bin/python3 scripts/density-probe.py --probe $QP \
      --ref $REF1080 --dist ${R1080[2]} --probes $PROBE_N --duration $dur \
      --warmup $(( dur / 3 )) --fps 60 --backend $BK ${PROM:+--prometheus $PROM} \
      --workdir "$W/probe" --json "$W/probe.json" 2>&1 | tee -a "$OUT/progress.log"
    rm -rf "$W/probe/tsdb"
  fi
fi
