#!/bin/bash
# One compressed title scored whole and in chunks, as qmetric-batch scores
# it with one worker and with several (docs/batch.md), run as plain
# processes since the GPU machine has no Dask:
#   whole   one qmetric-compare run of the title (the first GPU)
#   chunks  qmetric-compare --count-frames, then CHUNKS chunks
#           (--start/--frames/--partial) run at once, chunk k on GPU k
#           (CUDA_VISIBLE_DEVICES; on the CPU where there is no GPU), then
#           qmetric-merge
# The title is a 1920x1080 H.264 encode (x264enc, a key frame every 250
# frames, no B-frames: see join() below; tests/chunk.sh covers B-frames) of
# a moving zone plate, the distorted input an encode of the same frames at
# a low bitrate.  Encoding the whole title would cost
# minutes of the GPU machine, so SEGMENT unique frames (a whole number of
# GOPs) are encoded once, both ways from one source, and the title is that
# segment repeated (splitmuxsrc, remuxed: no decoding), a shorter tail encoded
# alike making up FRAMES; every copy starts with an IDR frame, so the
# title's frames decode as one stream.  Made once and reused.  The merged
# log must equal the whole run's but for its speed ("fps").  Prints the
# wall time and frames/s of each way and writes them, with the logs, to
# $OUT (a chunk's log holds GStreamer's warnings, GST_DEBUG=2; a failing
# chunk's last lines are printed).  Carry .gpu on the GPU machine
# (../shared/gpu/README.md); elsewhere the system's GStreamer is used.
#   OUT=/tmp/out scripts/gpu-batch.sh [BUILD_DIR]
# env: FRAMES (20000), SEGMENT (1000), SIZE (1920x1080), CHUNKS (4),
#      BACKEND (cuda when nvidia-smi lists a GPU, else cpu), METRICS (the
#      tool's default), GPU_ARCHS (90, when BUILD_DIR must be built),
#      COMMIT (the commit reported; else git's HEAD, which a copied work
#      tree may not match), MAKE_ONLY (1: make the title, nothing else).
# On a machine without a GPU, e.g.: FRAMES=600 OUT=/tmp/gb scripts/gpu-batch.sh build
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
B=${1:-build-gpu}
case $B in /*) ;; *) B=$PWD/$B ;; esac
if [ -f .gpu/env.sh ]; then
  . .gpu/env.sh >/dev/null 2>&1 || { echo "gpu-batch: cannot set up .gpu"; exit 1; }
fi
export GST_PLUGIN_PATH=$B/gst/qmetric QMETRIC_MODEL_PATH=$PWD/data/models
export QMETRIC_BACKTRACE=1  # a crash prints where (docs/cli.md)
res=$OUT/gpu-batch.txt
: >"$res"
say() { echo "$*" | tee -a "$res"; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
backend=${BACKEND:-$([ "$ngpu" -gt 0 ] && echo cuda || echo cpu)}
if [ ! -x "$B/tools/qmetric-compare" ]; then
  say "== building $B"
  { meson setup "$B" -Dcuda=enabled -Dgpu_archs="${GPU_ARCHS:-90}" -Dtests=disabled &&
    ninja -C "$B"; } >"$OUT/gpu-batch-build.log" 2>&1 ||
    { grep -E "error|FAILED" "$OUT/gpu-batch-build.log" | head -20; exit 1; }
fi
qc=$B/tools/qmetric-compare
merge=$B/tools/qmetric-merge
frames=${FRAMES:-20000}
gop=250
seg=${SEGMENT:-1000}
if [ $((seg % gop)) != 0 ] || [ "$seg" -le 0 ]; then
  echo "gpu-batch: SEGMENT must be a multiple of the GOP ($gop frames)"; exit 2
fi
[ "$frames" -lt "$seg" ] && seg=$frames
copies=$((frames / seg)) tail=$((frames % seg))
size=${SIZE:-1920x1080}
k=${CHUNKS:-4}
cores=$(nproc)
metrics=()
[ -n "${METRICS:-}" ] && metrics=(--metrics "$METRICS")
w=/tmp/qmetric-gpu-batch-$size-$frames-s$seg  # made once, reused by later runs
mkdir -p "$w"
tmp=$(mktemp -d)
# a signal (timeout's TERM) ends the background encoders and chunks too: left
# running, they would write into the title that the next run makes
trap 'exit 143' TERM INT
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
rate() { awk "BEGIN { printf \"%.1f\", $1 / ($3 - $2) }"; }
secs() { awk "BEGIN { printf \"%.2f\", $2 - $1 }"; }

{
  echo "title: $frames frames of $size H.264 (x264enc), a distorted encode of the same"
  echo "machine: $cores CPU cores, $ngpu GPU(s); backend $backend; $k chunks"
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>/dev/null
  echo "commit: ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
  # which H.264 decoder decodebin picks: the highest rank
  for d in nvh264dec nvh264sldec avdec_h264; do
    r=$(gst-inspect-1.0 "$d" 2>/dev/null | sed -n 's/^ *Rank *//p')
    [ -n "$r" ] && echo "decoder $d: rank $r"
  done
} | tee -a "$res"

# encode N frames of the pattern, reference and distorted from one source:
# $w/ref-NAME.mp4, $w/dis-NAME.mp4.  The encoders hold different numbers of
# frames before their first output (rate-control look-ahead): a sink that
# prerolled on one branch would stop the tee before the other branch's
# encoder gave anything, so the sinks do not preroll (async=false).
encode() {  # NAME N
  local x264="x264enc speed-preset=veryfast bframes=0 key-int-max=$gop"
  local mux="video/x-h264,profile=high ! h264parse ! mp4mux"
  gst-launch-1.0 -q videotestsrc pattern=zone-plate kx2=20 ky2=20 kt=1 num-buffers="$2" ! \
    "video/x-raw,format=I420,width=${size%x*},height=${size#*x},framerate=25/1" ! tee name=t \
    t. ! queue ! $x264 pass=quant quantizer=16 ! $mux ! \
      filesink async=false location="$w/ref-$1.mp4" \
    t. ! queue ! $x264 bitrate=2500 ! $mux ! filesink async=false location="$w/dis-$1.mp4"
}
# the title: the segment's copies, then the tail, read as one stream by
# splitmuxsrc (it gives each part the running time after the one before;
# mp4mux writes it as timestamps) from links named in order.  concat with
# qtdemux inputs did not link on the GPU machine (qtdemux "not-linked" at
# preroll, even with two inputs) though it did here.  splitmuxsrc places a
# part after the one before by decoding time: with B-frames, whose first
# decoding time is earlier than the first presentation time, the next
# part's first pictures would share timestamps with the last ones of the
# part before (which qmetric-compare refuses to cut into chunks).
join() {  # ref|dis
  local d=$w/$1-parts i
  rm -rf "$d" && mkdir -p "$d" || return 1
  for i in $(seq 0 $((copies - 1))); do ln -s "$w/$1-seg.mp4" "$d/$(printf %05d "$i").mp4"; done
  [ "$tail" -gt 0 ] && ln -s "$w/$1-tail.mp4" "$d/$(printf %05d "$copies").mp4"
  gst-launch-1.0 -q splitmuxsrc location="$d/*.mp4" ! h264parse ! mp4mux ! \
    filesink location="$w/$1.mp4" 2>>"$OUT/gpu-batch-title.log"
}
if [ ! -s "$w/dis.mp4" ]; then
  more=""
  [ "$tail" -gt 0 ] && more=" + their first $tail"
  say "== making the title: $seg frames encoded, joined $copies x $seg$more"
  t0=$(now)
  pids=()
  : >"$OUT/gpu-batch-title.log"
  encode seg "$seg" 2>>"$OUT/gpu-batch-title.log" & pids+=($!)
  [ "$tail" -gt 0 ] && { encode tail "$tail" 2>>"$OUT/gpu-batch-title.log" & pids+=($!); }
  ok=1
  for p in "${pids[@]}"; do wait "$p" || ok=0; done
  te=$(now)
  if [ $ok = 1 ]; then
    join ref & p1=$!
    join dis & p2=$!
    wait $p1 || ok=0
    wait $p2 || ok=0
  fi
  [ $ok = 1 ] || { say "making the title failed; the last lines of $OUT/gpu-batch-title.log:"
    tail -n 20 "$OUT/gpu-batch-title.log" | tee -a "$res"; rm -f "$w"/*.mp4; exit 1; }
  say "title made in $(secs "$t0" "$(now)") s (encoding $(secs "$t0" "$te") s, joining $(secs "$te" "$(now)") s)"
else
  say "== the title made before: $w"
fi
ref=$w/ref.mp4 dis=$w/dis.mp4
# MAKE_ONLY=1: make the title and stop (while something else runs, so that
# the timed runs of a later call find it made)
[ -n "${MAKE_ONLY:-}" ] && exit 0

# (a) one whole run
say "== whole: one qmetric-compare run"
t0=$(now)
CUDA_VISIBLE_DEVICES=0 GST_DEBUG=2 GST_DEBUG_NO_COLOR=1 "$qc" "$ref" "$dis" -q "${metrics[@]}" \
  --backend "$backend" --threads "$cores" -o "$tmp/whole.json" 2>"$OUT/gpu-batch-whole.log" ||
  { say "the whole run failed; the last lines of $OUT/gpu-batch-whole.log:"
    tail -n 20 "$OUT/gpu-batch-whole.log" | tee -a "$res"; exit 1; }
t1=$(now)
whole_s=$(secs "$t0" "$t1")
say "whole    wall $whole_s s  $(rate "$frames" "$t0" "$t1") frames/s"

# (b) counted, then k chunks at once, one a GPU, then merged
say "== chunks: --count-frames, $k chunks at once, qmetric-merge"
t0=$(now)
n=$("$qc" "$ref" "$dis" --count-frames 2>"$OUT/gpu-batch-count.log") ||
  { tail -3 "$OUT/gpu-batch-count.log"; exit 1; }
tc=$(now)
pids=() parts=()
for i in $(seq 0 $((k - 1))); do
  start=$((n * i / k)) len=$((n * (i + 1) / k - n * i / k))
  if [ "$backend" = cuda ]; then dev=$((i % ngpu)); else dev=""; fi
  CUDA_VISIBLE_DEVICES=$dev GST_DEBUG=2 GST_DEBUG_NO_COLOR=1 "$qc" "$ref" "$dis" -q \
    "${metrics[@]}" --backend "$backend" --threads $((cores / k > 0 ? cores / k : 1)) \
    --start $start --frames $len --partial "$tmp/part$i.json" 2>"$OUT/gpu-batch-chunk$i.log" &
  pids+=($!) parts+=("$tmp/part$i.json")
done
fail=0
for i in "${!pids[@]}"; do
  wait "${pids[i]}" && continue
  fail=1
  say "chunk $i failed; the last lines of $OUT/gpu-batch-chunk$i.log:"
  tail -n 20 "$OUT/gpu-batch-chunk$i.log" | tee -a "$res"
done
[ $fail = 0 ] || exit 1
tm=$(now)
"$merge" -o "$tmp/merged.json" "${parts[@]}" 2>"$OUT/gpu-batch-merge.log" ||
  { cat "$OUT/gpu-batch-merge.log"; exit 1; }
t1=$(now)
chunks_s=$(secs "$t0" "$t1")
say "chunks   wall $chunks_s s  $(rate "$frames" "$t0" "$t1") frames/s  (count $(secs "$t0" "$tc") s, chunks $(secs "$tc" "$tm") s, merge $(secs "$tm" "$t1") s)"
for i in $(seq 0 $((k - 1))); do
  say "  chunk $i: $(grep -o '"start": [0-9]*' "$tmp/part$i.json" | head -1), $(grep -o '"frames": [0-9]*' "$tmp/part$i.json" | tail -1), $(grep -o '"seconds": [0-9.]*' "$tmp/part$i.json" | tail -1)"
done
[ "$n" = "$frames" ] || say "note: --count-frames gave $n frames for $frames encoded"
if diff <(grep -v '"fps"' "$tmp/whole.json") <(grep -v '"fps"' "$tmp/merged.json") \
    >"$OUT/gpu-batch-diff.txt"; then
  say "merged log = whole log (every line but \"fps\")"
  verdict=0
else
  say "MERGED LOG DIFFERS from the whole run's: $OUT/gpu-batch-diff.txt"
  verdict=1
fi
say "speed-up of $k chunks: $(awk "BEGIN { printf \"%.2f\", $whole_s / $chunks_s }")x"
cp "$tmp/whole.json" "$OUT/gpu-batch-whole.json"
exit $verdict
