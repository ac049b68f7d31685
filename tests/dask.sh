#!/bin/bash
# qmetric-batch on a real Dask cluster: a scheduler and two workers started
# here as separate processes on 127.0.0.1.
#  - exactness: two golden pairs (8-bit with the default metrics, 10-bit CSV
#    with another model) cut into chunks; each merged log must equal a
#    single local qmetric-yuv run (every line but the speed), the chunks
#    must have run on both workers; the same through the embedded local
#    cluster; a compressed pair (H.264 with B-frames in MP4 against
#    Matroska, no width or height: qmetric-compare chunks) equals a whole
#    qmetric-compare run;
#  - each pair on its own: a missing input, empty and too short inputs, a
#    broken MP4 (decoded: qmetric-compare says why), a chunk that fails while others run, a merge that
#    fails after writing half a log: that pair fails with its reason, the
#    others are scored, exit 1, the table on stderr, and nothing is left
#    behind (no output, no chunk folder, no temporary file, no program);
#  - refusals before anything runs (exit 2, one line, no traceback):
#    outputs that are one file however spelt, an output that is an input,
#    unsafe pair names, malformed manifests, CUDA pairs with no GPU worker;
#  - a progress line on a terminal only;
#  - Ctrl-C (SIGINT) of a local cluster's run: exit 130, its programs and
#    worker processes gone, no chunk folder and no output.
# SKIP (77) without Debian's python3-distributed.
#   tests/dask.sh BUILD_DIR [GOLDEN_DIR]
set -uo pipefail
B=$(cd "$1" && pwd)
G=${2:-${QMETRIC_GOLDEN_DIR:-$(dirname "$0")/../../shared/golden}}
SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
BATCH=$SRC/tools/qmetric-batch
PROGS=(--qmetric-yuv "$B/tools/qmetric-yuv" --qmetric-merge "$B/tools/qmetric-merge"
       --qmetric-compare "$B/tools/qmetric-compare")
if ! $PY -c 'import distributed' 2>/dev/null || ! command -v dask-scheduler >/dev/null; then
  echo "SKIP: Dask distributed is not installed (apt-get install python3-distributed)"
  exit 77
fi
if [ ! -f "$G/manifest.json" ]; then
  echo "SKIP: no golden data in $G"
  [ "${QMETRIC_GOLDEN_REQUIRED:-0}" = 1 ] && exit 1
  exit 77
fi
T=$(mktemp -d)
pids=()
# the workers run the test's sleeping programs; this tells them apart
MARK=$$
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  # programs of this test that a failed check left running
  for p in $(pgrep -f "sleep 30[01]\\.$MARK"); do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

LB=ladybird_576x324_yuv420p_ref.yuv LBD=ladybird_576x324_yuv420p_x264crf35_dis.yuv
for f in ladybird_576x324_yuv420p_ref ladybird_576x324_yuv420p_x264crf35_dis \
         aqua_576x324_yuv420p10le_ref aqua_576x324_yuv420p10le_x264crf30_dis; do
  xz -dc "$G/yuv/$f.yuv.xz" >"$T/$f.yuv"
done
# the default metrics are vmaf,psnr,float_ssim: ladybird gives none
cat >"$T/manifest.json" <<EOF
{"defaults": {"width": 576, "height": 324, "chunk_frames": 5},
 "pairs": [
  {"name": "ladybird", "reference": "$LB", "distorted": "$LBD", "output": "out/ladybird.json"},
  {"name": "aqua10", "bitdepth": 10, "model": "vmaf_v0.6.1neg", "format": "csv", "metrics": "vmaf,psnr",
   "reference": "aqua_576x324_yuv420p10le_ref.yuv",
   "distorted": "aqua_576x324_yuv420p10le_x264crf30_dis.yuv", "output": "out/aqua10.csv"}]}
EOF
"$B/tools/qmetric-yuv" -r "$T/$LB" -d "$T/$LBD" --width 576 --height 324 \
  --metrics vmaf,psnr,float_ssim -o "$T/ladybird.whole" 2>/dev/null
"$B/tools/qmetric-yuv" -r "$T/aqua_576x324_yuv420p10le_ref.yuv" -d "$T/aqua_576x324_yuv420p10le_x264crf30_dis.yuv" \
  --width 576 --height 324 --bitdepth 10 --model vmaf_v0.6.1neg --metrics vmaf,psnr --format csv \
  -o "$T/aqua10.whole" 2>/dev/null

same_log() {  # merged, whole: equal but for the speed (JSON's "fps" line; CSV has none)
  [ -f "$1" ] && diff <(grep -v '"fps"' "$1") <(grep -v '"fps"' "$2") >/dev/null
}
compare_outputs() {  # label
  for n in ladybird.json:ladybird.whole aqua10.csv:aqua10.whole; do
    if same_log "$T/out/${n%%:*}" "$T/${n#*:}"; then ok
    else bad "$1: ${n%%:*} differs from a single run"; fi
  done
}
leftovers() {  # folder: anything a failed or interrupted run must not leave
  find "$1" \( -name '.qmetric-chunks-*' -o -name '*.qmetric-batch-*.tmp' \) 2>/dev/null
}

# a free port on loopback for the scheduler
port=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
SCHED=tcp://127.0.0.1:$port
dask-scheduler --host 127.0.0.1 --port "$port" --no-dashboard >"$T/scheduler.log" 2>&1 &
pids+=($!)
for i in 1 2; do
  dask-worker "$SCHED" --host 127.0.0.1 --nthreads 1 --no-dashboard \
    --name "w$i" >"$T/worker$i.log" 2>&1 &
  pids+=($!)
done
# wait (bounded) until both workers have joined
if ! timeout 60 $PY - "$SCHED" <<'PY'
import sys, time, distributed
c = distributed.Client(sys.argv[1], timeout=30)
while len(c.scheduler_info()["workers"]) < 2:
    time.sleep(0.2)
c.close()
PY
then
  bad "the scheduler and two workers did not start"; cat "$T"/*.log | tail -20
  echo "dask: $pass passed, $fail failed"; exit 1
fi
batch() {  # MANIFEST [options]: on the test's cluster; stdout, stderr and rc in $T/r.*
  timeout 120 "$BATCH" "$@" --scheduler "$SCHED" >"$T/r.out" 2>"$T/r.err"
  echo $? >"$T/r.rc"
}
rc() { cat "$T/r.rc"; }
manifest() {  # FILE PAIRS-JSON [DEFAULTS-JSON]: a manifest of 576x324 pairs beside the inputs
  echo "{\"defaults\": {\"width\": 576, \"height\": 324, \"chunk_frames\": 12 ${3:+, $3}}, \"pairs\": $2}" >"$T/$1"
}
# one pair's JSON line (by name) has these values: NAME 'PYTHON-CONDITION on r'
row_has() {
  $PY - "$T/r.out" "$1" "$2" <<'PY'
import json, sys
rows = {r["name"]: r for r in map(json.loads, open(sys.argv[1]))}
r = rows.get(sys.argv[2])
sys.exit(0 if r is not None and eval(sys.argv[3]) else 1)
PY
}

# --- exactness on the cluster, default metrics ------------------------------
batch "$T/manifest.json" "${PROGS[@]}"
[ "$(rc)" = 0 ] && ok || { bad "qmetric-batch on the cluster exited $(rc)"; tail -5 "$T/r.err"; }
compare_outputs "cluster"
$PY - "$T/r.out" <<'PY' && ok || bad "the chunks did not run on both workers, or the counts are wrong: $(cat "$T/r.out")"
import json, sys
rows = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda r: r["name"])
assert [r["name"] for r in rows] == ["aqua10", "ladybird"], rows
assert [r["frames"] for r in rows] == [12, 36] and [r["chunks"] for r in rows] == [3, 8], rows
assert all(r["status"] == "ok" and r["seconds"] > 0 for r in rows), rows
assert len(set(w for r in rows for w in r["workers"])) == 2, rows
PY
[ -z "$(leftovers "$T")" ] && ok || bad "chunk folders were left behind: $(leftovers "$T")"

# --- a compressed pair: qmetric-compare chunks that seek -----------------------
# 40 frames, a key frame every 12, B-frames: chunks of 7 start inside GOPs
if gst-inspect-1.0 --exists x264enc && gst-inspect-1.0 --exists avdec_h264; then
  for f in ref.mp4:mp4mux:20 dis.mkv:matroskamux:36; do
    IFS=: read -r name mux q <<<"$f"
    gst-launch-1.0 -q videotestsrc pattern=ball num-buffers=40 ! \
      video/x-raw,width=176,height=144,framerate=25/1 ! \
      x264enc key-int-max=12 bframes=3 b-pyramid=true quantizer="$q" pass=qual ! \
      h264parse ! "$mux" ! filesink location="$T/$name"
  done
  "$B/tools/qmetric-compare" "$T/ref.mp4" "$T/dis.mkv" -q -o "$T/h264.whole" 2>/dev/null
  rm -rf "$T/out"
  echo '{"defaults": {"chunk_frames": 7}, "pairs": [{"name": "h264", "reference": "ref.mp4",
    "distorted": "dis.mkv", "output": "out/h264.json"}]}' >"$T/compressed.json"
  batch "$T/compressed.json" "${PROGS[@]}"
  if [ "$(rc)" = 0 ] && same_log "$T/out/h264.json" "$T/h264.whole" &&
     row_has h264 'r["kind"] == "decoded" and r["frames"] == 40 and r["chunks"] == 6 and len(r["workers"]) == 2' &&
     [ -z "$(leftovers "$T")" ]; then ok
  else bad "a compressed pair: exit $(rc), $(cat "$T/r.out" "$T/r.err")"; fi
else
  echo "note: no x264enc or avdec_h264: the compressed pair is not checked"
fi

# --- a progress line on a terminal (script(1) gives one), cleared at the end ---
rm -rf "$T/out"
script -qec "'$BATCH' '$T/manifest.json' --scheduler $SCHED ${PROGS[*]} >/dev/null" /dev/null \
  </dev/null >"$T/tty.out" 2>&1
if $PY - "$T/tty.out" <<'PY'
import re, sys
t = open(sys.argv[1], encoding="utf-8", errors="replace", newline="").read()
assert re.search(r"\rqmetric-batch: chunks \d+/\d+.*, pairs \d/2 done\x1b\[K", t), repr(t)
assert re.search(r"\r\x1b\[Kpair +frames", t), repr(t)  # cleared before the table
PY
then ok; else bad "no progress line on a terminal: $(head -c 400 "$T/tty.out" | cat -v)"; fi

# --- a missing input does not stop the other pairs; the table ---------------
rm -rf "$T/out"
manifest missing.json "[{\"name\": \"good\", \"reference\": \"$LB\", \"distorted\": \"$LBD\", \"output\": \"out/good.json\"},
  {\"name\": \"gone\", \"reference\": \"nosuch.yuv\", \"distorted\": \"$LBD\", \"output\": \"out2/gone.json\"}]"
batch "$T/missing.json" "${PROGS[@]}"
if [ "$(rc)" = 1 ] && same_log "$T/out/good.json" "$T/ladybird.whole" &&
   row_has good 'r["status"] == "ok" and r["frames"] == 36' &&
   row_has gone 'r["status"] == "failed" and "nosuch.yuv: No such file" in r["error"]' &&
   ! grep -q Traceback "$T/r.err" && [ ! -e "$T/out2" ]; then ok
else bad "a missing input: exit $(rc), $(cat "$T/r.out" "$T/r.err")"; fi
# the table: a header, then one row a pair in manifest order
if $PY - "$T/r.err" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
assert re.match(r"pair +frames +chunks +wall s +status$", lines[0]), lines
assert re.match(r"good +36 +3 +\d+\.\d +ok$", lines[1]), lines
assert re.match(r"gone +- +- +[-\d.]+ +failed: reference .*nosuch\.yuv: No such file", lines[2]), lines
assert len(lines) == 3, lines
PY
then ok; else bad "the table on stderr: $(cat "$T/r.err")"; fi
batch "$T/missing.json" "${PROGS[@]}" --quiet
[ "$(rc)" = 1 ] && [ ! -s "$T/r.err" ] && ok || bad "--quiet: exit $(rc), stderr: $(cat "$T/r.err")"

# --- no frames: empty, too short, an MP4 given as raw, a folder --------------
: >"$T/empty.yuv"
head -c 1000 "$T/$LB" >"$T/short.yuv"
# an MP4's first box, then what could pass for frames
{ printf '\0\0\0\030ftypisom\0\0\2\0isomiso2'; head -c 600000 "$T/$LBD"; } >"$T/clip.mp4"
mkdir -p "$T/afolder"
rm -rf "$T/out"
manifest noframes.json "[{\"name\": \"empty\", \"distorted\": \"empty.yuv\", \"output\": \"out/empty.json\"},
  {\"name\": \"short\", \"distorted\": \"short.yuv\", \"output\": \"out/short.json\"},
  {\"name\": \"mp4\", \"distorted\": \"clip.mp4\", \"output\": \"out/mp4.json\"},
  {\"name\": \"folder\", \"distorted\": \"afolder\", \"output\": \"out/folder.json\"},
  {\"name\": \"good\", \"distorted\": \"$LBD\", \"output\": \"out/good.json\"}]" "\"reference\": \"$LB\""
batch "$T/noframes.json" "${PROGS[@]}"
if [ "$(rc)" = 1 ] && same_log "$T/out/good.json" "$T/ladybird.whole" &&
   row_has empty 'r["status"] == "failed" and "empty.yuv is empty" in r["error"]' &&
   row_has short 'r["status"] == "failed" and "short.yuv: 1000 bytes is not a whole number of frames of 279936 bytes" in r["error"]' &&
   row_has mp4 'r["status"] == "failed" and "counting frames: qmetric-compare: " in r["error"] and "clip.mp4" in r["error"]' &&
   row_has folder 'r["status"] == "failed" and "is a folder" in r["error"]' &&
   [ "$(ls "$T/out")" = good.json ] && [ -z "$(leftovers "$T")" ]; then ok
else bad "pairs without frames: exit $(rc), $(cat "$T/r.out") $(ls -A "$T/out")"; fi

# --- inputs of different lengths: the pair fails naming both counts, unless
# "shortest": true scores the shorter (then it equals a whole run of it) ------
head -c $((279936 * 20)) "$T/$LBD" >"$T/first20.yuv"
"$B/tools/qmetric-yuv" -r "$T/$LB" -d "$T/first20.yuv" --width 576 --height 324 \
  --metrics vmaf,psnr,float_ssim -o "$T/first20.whole" 2>/dev/null
rm -rf "$T/out"
manifest lengths.json "[{\"name\": \"long\", \"distorted\": \"first20.yuv\", \"output\": \"out/long.json\"},
  {\"name\": \"short20\", \"distorted\": \"first20.yuv\", \"output\": \"out/short20.json\", \"shortest\": true}]" "\"reference\": \"$LB\""
batch "$T/lengths.json" "${PROGS[@]}"
if [ "$(rc)" = 1 ] && same_log "$T/out/short20.json" "$T/first20.whole" &&
   row_has long 'r["status"] == "failed" and "frame counts differ: reference has 36 frames, distorted 20" in r["error"]' &&
   [ ! -e "$T/out/long.json" ]; then ok
else bad "inputs of different lengths: exit $(rc), $(cat "$T/r.out")"; fi

# --- a chunk fails while others run; a merge fails half-way -------------------
# the chunk at frame 12 fails; later ones would sleep 300 s unless stopped
cat >"$T/failyuv.sh" <<EOF
#!/bin/bash
case " \$* " in
  *" --start 12 "*) sleep 0.5; echo "chunk refused on purpose" >&2; exit 1;;
  *" --start 0 "*|*--count-frames*) ;;
  *" --start "*) sleep 300.$MARK;;
esac
exec "$B/tools/qmetric-yuv" "\$@"
EOF
# for one title, writes half a log where it is told to, then fails
cat >"$T/failmerge.sh" <<EOF
#!/bin/bash
case "\$2" in
  *mergefail*) echo '{"frames": [' >"\$2"; echo "merge refused on purpose" >&2; exit 1;;
esac
exec "$B/tools/qmetric-merge" "\$@"
EOF
chmod +x "$T/failyuv.sh" "$T/failmerge.sh"
rm -rf "$T/out" "$T/o2"
manifest chunkfail.json "[{\"name\": \"chunkfail\", \"distorted\": \"$LBD\", \"output\": \"o2/deeper/chunkfail.json\"}]" \
  "\"reference\": \"$LB\""
start=$(date +%s)
batch "$T/chunkfail.json" --qmetric-yuv "$T/failyuv.sh" --qmetric-merge "$B/tools/qmetric-merge"
took=$(($(date +%s) - start))
if [ "$(rc)" = 1 ] && [ "$took" -lt 60 ] &&
   row_has chunkfail 'r["status"] == "failed" and r["error"] == "frames 12-23: chunk refused on purpose"' &&
   [ ! -e "$T/o2" ] && [ -z "$(leftovers "$T")" ] && ! pgrep -f "sleep 300.$MARK" >/dev/null; then ok
else bad "a failing chunk: exit $(rc) after ${took}s, $(cat "$T/r.out"), left: $(ls -A "$T/o2" 2>&1) $(pgrep -af "sleep 300.$MARK")"; fi
manifest mergefail.json "[{\"name\": \"mergefail\", \"distorted\": \"$LBD\", \"output\": \"out/mergefail.json\"},
  {\"name\": \"aqua\", \"reference\": \"aqua_576x324_yuv420p10le_ref.yuv\", \"bitdepth\": 10,
   \"distorted\": \"aqua_576x324_yuv420p10le_x264crf30_dis.yuv\", \"output\": \"out/aqua.json\"}]" \
  "\"reference\": \"$LB\""
mkdir -p "$T/out"
batch "$T/mergefail.json" --qmetric-yuv "$B/tools/qmetric-yuv" --qmetric-merge "$T/failmerge.sh"
if [ "$(rc)" = 1 ] && row_has mergefail 'r["status"] == "failed" and r["error"] == "merge: merge refused on purpose"' &&
   row_has aqua 'r["status"] == "ok"' && [ "$(ls -A "$T/out")" = aqua.json ] && [ -z "$(leftovers "$T")" ]; then ok
else bad "a failing merge: exit $(rc), $(cat "$T/r.out"), left: $(ls -A "$T/out")"; fi

# --- refusals: exit 2, one line naming the pairs, nothing made ---------------
refused() {  # label, manifest, text the line must contain...
  local label=$1 m=$2; shift 2
  rm -rf "$T/out"
  batch "$T/$m" "${PROGS[@]}"
  local why=""
  [ "$(rc)" = 2 ] || why="exit $(rc)"
  [ "$(wc -l <"$T/r.err")" = 1 ] && grep -q '^qmetric-batch: ' "$T/r.err" || why="$why; not one line"
  [ -s "$T/r.out" ] && why="$why; stdout not empty"
  [ -e "$T/out" ] && why="$why; made out/"
  for want in "$@"; do grep -qF -- "$want" "$T/r.err" || why="$why; no '$want'"; done
  [ -z "$why" ] && ok || bad "$label: $why: $(head -c 600 "$T/r.err")"
}
ln -sfn out "$T/outlink"
manifest dup.json "[{\"name\": \"a\", \"distorted\": \"$LBD\", \"output\": \"out/x.json\"},
  {\"name\": \"b\", \"distorted\": \"$LBD\", \"output\": \"out/../out/./x.json\"},
  {\"name\": \"c\", \"distorted\": \"$LBD\", \"output\": \"outlink/x.json\"},
  {\"name\": \"d\", \"distorted\": \"$LBD\", \"output\": \"out/y.json\"}]" "\"reference\": \"$LB\""
refused "duplicate outputs" dup.json 'pairs "a", "b" and "c" write the same output'
manifest outin.json "[{\"name\": \"a\", \"distorted\": \"$LBD\", \"output\": \"./$LB\"}]" "\"reference\": \"$LB\""
refused "output = input" outin.json 'pair "a": output' "is an input (the reference of \"a\")"
manifest names.json "[{\"name\": \"a/b\", \"distorted\": \"$LBD\", \"output\": \"out/1.json\"},
  {\"name\": \"..\", \"distorted\": \"$LBD\", \"output\": \"out/2.json\"},
  {\"name\": \"\", \"distorted\": \"$LBD\", \"output\": \"out/3.json\"},
  {\"name\": \".hidden\", \"distorted\": \"$LBD\", \"output\": \"out/4.json\"},
  {\"name\": \"tab\\there\", \"distorted\": \"$LBD\", \"output\": \"out/5.json\"},
  {\"name\": \"fine\", \"distorted\": \"$LBD\", \"output\": \"out/6.json\"}]" "\"reference\": \"$LB\""
refused "unsafe names" names.json '"a/b" contains a path separator' '".." starts with a dot' \
  '"" is empty' '".hidden" starts with a dot' '"tab\there" contains a control character'
grep -q fine "$T/r.err" && bad "a safe name was refused" || ok
# a "/" alone, as in the issue: no traceback, no chunk folder anywhere
manifest slash.json "[{\"name\": \"ok\", \"distorted\": \"$LBD\", \"output\": \"out/ok.json\"},
  {\"name\": \"x/y\", \"distorted\": \"$LBD\", \"output\": \"out/xy.json\"}]" "\"reference\": \"$LB\""
refused "a / in a name" slash.json '"x/y" contains a path separator'
[ -z "$(leftovers "$T")" ] && ! grep -q Traceback "$T/r.err" && ok || bad "a / in a name left: $(leftovers "$T")"
manifest keys.json "[{\"name\": \"a\", \"distorted\": \"$LBD\", \"output\": \"out/a.json\", \"widht\": 5, \"bitdepth\": \"10\"},
  {\"name\": \"b\", \"distorted\": \"$LBD\", \"output\": \"out/b.json\", \"chunk_frames\": 0, \"format\": \"txt\"},
  {\"name\": \"c\", \"distorted\": \"$LBD\"}, 7]" "\"reference\": \"$LB\", \"metric\": \"vmaf\""
refused "malformed pairs" keys.json 'defaults: unknown key "metric" (did you mean "metrics"?)' \
  'pair "a": unknown key "widht" (did you mean "width"?)' 'pair "a": "bitdepth" must be an integer from 8 to 16, not "10"' \
  'pair "b": "chunk_frames" must be an integer of at least 1, not 0' 'pair "b": "format" must be one of json, csv, xml' \
  'pair "c" has no "output"' 'pairs[3] must be an object'
echo '{"pairs": {"a": 1}, "extra": true}' >"$T/shape.json"
refused "malformed manifest" shape.json 'manifest: unknown key "extra"' '"pairs" must be a non-empty list'
echo '{"pairs": [' >"$T/broken.json"
refused "not JSON" broken.json 'broken.json: Expecting value'
manifest cuda.json "[{\"name\": \"g\", \"distorted\": \"$LBD\", \"output\": \"out/g.json\", \"backend\": \"cuda\"}]" \
  "\"reference\": \"$LB\""
refused "CUDA pairs, no GPU worker" cuda.json 'pairs "g" use backend cuda, and no worker of the scheduler has a GPU resource'
timeout 20 "$BATCH" "$T/cuda.json" "${PROGS[@]}" >/dev/null 2>"$T/r.err"
r=$?
[ $r = 2 ] && grep -q 'give --gpus N' "$T/r.err" && ok || bad "CUDA pairs on a local cluster without --gpus: exit $r"
timeout 20 "$BATCH" "$T/manifest.json" --qmetric-yuv "$T/nosuch-program" >/dev/null 2>"$T/r.err"
r=$?
[ $r = 2 ] && grep -q "qmetric-batch: --qmetric-yuv $T/nosuch-program is not a program" "$T/r.err" && ok ||
  bad "a program that is not there: exit $r, $(cat "$T/r.err")"

# --- the embedded local cluster gives the same --------------------------------
rm -rf "$T/out"
timeout 120 "$BATCH" "$T/manifest.json" --workers 2 "${PROGS[@]}" >"$T/summary2" 2>"$T/batch2.err"
r=$?
[ $r = 0 ] && ok || { bad "qmetric-batch with a local cluster exited $r"; tail -5 "$T/batch2.err"; }
compare_outputs "local cluster"

# --- Ctrl-C of a local cluster's run ------------------------------------------
cat >"$T/slowyuv.sh" <<EOF
#!/bin/bash
case " \$* " in *" --start "*) sleep 301.$MARK;; esac
exec "$B/tools/qmetric-yuv" "\$@"
EOF
chmod +x "$T/slowyuv.sh"
rm -rf "$T/out"
"$BATCH" "$T/manifest.json" --workers 2 --qmetric-yuv "$T/slowyuv.sh" \
  --qmetric-merge "$B/tools/qmetric-merge" >"$T/int.out" 2>"$T/int.err" &
bpid=$!
for _ in $(seq 300); do pgrep -f "sleep 301.$MARK" >/dev/null && break; sleep 0.1; done
kids=$(pgrep -P $bpid)
kill -INT $bpid
start=$(date +%s)
for _ in $(seq 300); do kill -0 $bpid 2>/dev/null || break; sleep 0.1; done
kill -0 $bpid 2>/dev/null && { bad "SIGINT: still running after 30 s"; kill -KILL $bpid; }
wait $bpid
r=$?
for _ in $(seq 100); do
  alive=$(for k in $kids; do kill -0 "$k" 2>/dev/null && echo "$k"; done)
  [ -z "$alive" ] && ! pgrep -f "sleep 301.$MARK" >/dev/null && break
  sleep 0.1
done
if [ $r = 130 ] && [ -n "$kids" ] && [ -z "$alive" ] && ! pgrep -f "sleep 301.$MARK" >/dev/null &&
   [ ! -e "$T/out" ] && [ -z "$(leftovers "$T")" ] && ! grep -q Traceback "$T/int.err" &&
   grep -q '"status": "interrupted"' "$T/int.out"; then ok
else bad "SIGINT: exit $r, processes left: '$alive' $(pgrep -af "sleep 301.$MARK"), $(ls -A "$T/out" 2>&1), $(head -c 800 "$T/int.err")"; fi

echo "dask: $pass passed, $fail failed"
[ "$fail" = 0 ]
