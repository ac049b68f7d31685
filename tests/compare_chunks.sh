#!/bin/bash
# qmetric-compare's chunks are exact on encoded inputs: a title cut into
# chunks (qmetric-compare --start N --frames M --partial FILE, each run on
# its own) and joined by qmetric-merge gives the log of one whole
# qmetric-compare run, byte for byte but for its speed ("fps").  The clips
# are made here by ffmpeg, with short GOPs so that boundaries fall inside
# GOPs and inside B-frame groups:
#   H.264 with B-frames (pyramid) and open GOPs, against another H.264
#     encode with other GOPs, in MP4 and Matroska
#   HEVC Main10 (10-bit decode), open GOPs (CRA)
#   AV1
#   variable frame rate (irregular timestamps) in Matroska and MP4
#   an MP4 edit list that starts inside a GOP (ffmpeg -ss ... -c copy)
#   Y4M (read in place) against H.264, with --frame_skip_ref
# Partitions include one-frame chunks, boundaries at key frames and inside
# B-frame groups, --subsample 3.  A chunk that seeks gives each decoder the
# key frame sought as its first packet (nothing is decoded before the seek
# or in flight across its flush), and seeking chunks run again and again
# with frame-threaded decoders (late output) stay exact and warning-free.
# And the refusals (a raw H.264 stream
# without timestamps, a codec whose packets are not read as frames,
# --pair-by time, a start past the end, counts that differ).
#   QMETRIC_COMPARE=... QMETRIC_MERGE=... tests/compare_chunks.sh
set -uo pipefail
C=${QMETRIC_COMPARE:?set QMETRIC_COMPARE}
M=${QMETRIC_MERGE:?set QMETRIC_MERGE}
command -v ffmpeg >/dev/null || { echo "SKIP: ffmpeg is missing (scripts/install-deps.sh)"; exit 77; }
for e in avdec_h264 avdec_h265 qtdemux matroskademux; do
  gst-inspect-1.0 --exists "$e" || { echo "SKIP: GStreamer element $e is missing"; exit 77; }
done
if gst-inspect-1.0 --exists av1dec; then av1=av1dec
elif gst-inspect-1.0 --exists dav1ddec; then av1=dav1ddec
else echo "SKIP: no AV1 decoder (av1dec or dav1ddec)"; exit 77; fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }
src() {  # frames [rate]: a moving test pattern
  echo -f lavfi -i "testsrc2=size=176x144:rate=${2:-25}" -frames:v "$1"
}
x264() {  # GOP, open-gop flag: B-frames in a pyramid, no scene cuts
  echo -c:v libx264 -pix_fmt yuv420p -x264-params \
    "keyint=$1:min-keyint=$1:scenecut=0:bframes=3:b-pyramid=normal:open-gop=$2"
}
# shellcheck disable=SC2046
{
  ff $(src 60) $(x264 12 1) -crf 18 "$T/h264.mp4"
  ff -i "$T/h264.mp4" $(x264 10 1) -crf 38 "$T/h264_d.mkv"
  ff $(src 50) -c:v libx265 -pix_fmt yuv420p10le -crf 20 \
    -x265-params "log-level=error:keyint=12:min-keyint=12:scenecut=0:bframes=3:open-gop=1" "$T/hevc.mkv"
  ff -i "$T/hevc.mkv" -c:v libx265 -pix_fmt yuv420p10le -crf 36 \
    -x265-params "log-level=error:keyint=9:min-keyint=9:scenecut=0:bframes=2:open-gop=1" "$T/hevc_d.mkv"
  ff $(src 40) -c:v libaom-av1 -cpu-used 8 -g 12 -crf 20 -b:v 0 "$T/av1.mkv"
  ff -i "$T/av1.mkv" -c:v libaom-av1 -cpu-used 8 -g 9 -crf 50 -b:v 0 "$T/av1_d.mp4"
  # variable frame rate: every frame's time off its 25 fps grid by 0..24 ms
  ff $(src 48) -vf "setpts='(N+0.15*mod(N*7\,5))/25/TB'" -fps_mode passthrough \
    $(x264 12 1) -crf 18 "$T/vfr.mkv"
  ff -i "$T/vfr.mkv" -fps_mode passthrough $(x264 8 0) -crf 38 "$T/vfr_d.mp4"
  # an edit list that starts inside a GOP: the frames before it are decoded, not shown
  ff -ss 0.5 -i "$T/h264.mp4" -c copy "$T/cut.mp4"
  ff -i "$T/h264.mp4" $(x264 10 1) -crf 38 "$T/h264_d.mp4"
  ff -ss 0.5 -i "$T/h264_d.mp4" -c copy "$T/cut_d.mp4"
  ff -i "$T/h264.mp4" -f yuv4mpegpipe -pix_fmt yuv420p "$T/ref.y4m"
  ff -i "$T/h264.mp4" -c copy -bsf:v h264_mp4toannexb -f h264 "$T/raw.h264"
  ff $(src 40) -c:v mpeg4 -q:v 4 "$T/mpeg4.mkv"
} || { echo "FAIL: the clips could not be made"; exit 1; }

# name ref dist "b0 b1 ... end" [options]: chunks [b_i, b_i+1), the last to
# the end, merged, against a whole run
chunks() {
  local name=$1 ref=$2 dist=$3 at=$4 i n parts=() len
  local cuts=($at)
  shift 4
  if ! "$C" "$ref" "$dist" -q "$@" -o "$T/whole.json" 2>"$T/err"; then
    bad "$name: whole run: $(cat "$T/err")"; return
  fi
  n=$(grep -c frameNum "$T/whole.json")
  for ((i = 0; i < ${#cuts[@]}; i++)); do
    local args=(--start "${cuts[i]}")
    if ((i + 1 < ${#cuts[@]})); then
      len=$((cuts[i + 1] - cuts[i])); args+=(--frames "$len")
    fi
    if ! "$C" "$ref" "$dist" -q "$@" "${args[@]}" --partial "$T/part$i.json" 2>"$T/err"; then
      bad "$name: chunk ${args[*]}: $(cat "$T/err")"; return
    fi
    parts+=("$T/part$i.json")
  done
  if ! "$M" -o "$T/merged.json" "${parts[@]}" 2>"$T/err"; then
    bad "$name: merge: $(cat "$T/err")"; return
  fi
  if diff <(grep -v '"fps"' "$T/whole.json") <(grep -v '"fps"' "$T/merged.json") >"$T/diff"; then
    ok
  else
    bad "$name: merged chunks ($at) differ from the whole run:"; head -8 "$T/diff"
  fi
  echo "$name: chunks at $at, $n frames scored"
}

# boundaries inside B-frame groups, one-frame chunks, and at key frames (12, 24, 36, 48)
chunks "H.264 open GOP (MP4 vs Matroska)" "$T/h264.mp4" "$T/h264_d.mkv" "0 1 2 13 14 24 37 48 59"
chunks "H.264, --subsample 3" "$T/h264.mp4" "$T/h264_d.mkv" "0 17 29 30 50" --subsample 3
chunks "HEVC Main10" "$T/hevc.mkv" "$T/hevc_d.mkv" "0 5 12 13 26 27 40 49"
chunks "AV1 ($av1)" "$T/av1.mkv" "$T/av1_d.mp4" "0 11 12 23 30 39"
chunks "variable frame rate" "$T/vfr.mkv" "$T/vfr_d.mp4" "0 9 10 21 33 47"
chunks "MP4 edit list inside a GOP" "$T/cut.mp4" "$T/cut_d.mp4" "0 3 10 11 22 30"
chunks "H.264 vs AV1, --frame_skip_dist 5" "$T/h264_d.mkv" "$T/av1.mkv" "0 6 13 25 34" \
  --frame_skip_dist 5 --shortest
chunks "Y4M vs H.264, --frame_skip_ref 3" "$T/ref.y4m" "$T/h264_d.mkv" "0 1 14 15 40" \
  --frame_skip_ref 3 --shortest

# A chunk that seeks: the first packet each decoder is given (GstVideoDecoder
# logs every one) is the key frame sought, not the start of the file: the
# decoder has nothing in flight when the seek flushes it (a decoder that
# outputs held frames from its flush, as nvh264dec does, then has none).
# Each decoder's first PTS, ascending, is at or after the seek positions
# the chunk prints, ascending (an MP4 edit list puts PTS after its position).
secs_ns() {  # H:MM:SS.nnnnnnnnn on stdin, one a line -> nanoseconds, ascending
  awk -F'[:.]' '{ printf "%d\n", (($1 * 60 + $2) * 60 + $3) * 1000000000 + $4 }' | sort -n
}
first_packet() {  # name ref dist start
  local name=$1 got want
  GST_DEBUG=videodecoder:6 GST_DEBUG_NO_COLOR=1 "$C" "$2" "$3" --start "$4" --frames 3 \
    --partial "$T/fp.json" >/dev/null 2>"$T/log" || { bad "$name: $(grep qmetric "$T/log")"; return; }
  got=$(sed -nE 's/.*<([^>]*)> chain PTS ([0-9:.]+),.*/\1 \2/p' "$T/log" | awk '!seen[$1]++ { print $2 }' |
        secs_ns)
  want=$(grep -o 'key frame at [0-9:.]*' "$T/log" | sed 's/key frame at //' | secs_ns)
  if [ "$(wc -l <<<"$want")" = 2 ] && [ "$(wc -l <<<"$got")" = 2 ] &&
     paste <(echo "$got") <(echo "$want") | awk '$1 < $2 { exit 1 }'; then ok
  else bad "$name: the decoders' first packets (ns) $(echo $got) precede the key frames sought $(echo $want)"; fi
}
first_packet "H.264 seek: decoding starts at the key frame" "$T/h264.mp4" "$T/h264_d.mkv" 30
first_packet "HEVC seek: decoding starts at the key frame" "$T/hevc.mkv" "$T/hevc_d.mkv" 30
first_packet "AV1 seek: decoding starts at the key frame" "$T/av1.mkv" "$T/av1_d.mp4" 25

# Seeking chunks, over and over, with frame threading (gst-libav's default
# outside live pipelines: a frame of output delay per thread): each gives
# the whole run's rows, and no critical nor a warning of the decoder base
# class or of the pads (segments, flushes) comes.  (A decoder still at work
# when the seek's flush comes through it warns here: its output pad "could
# not send sticky events" while flushing.)
"$C" "$T/h264.mp4" "$T/h264_d.mkv" -q -o "$T/whole.csv" 2>"$T/err" || bad "whole run: $(cat "$T/err")"
fails=0 trouble="CRITICAL| videodecoder | GST_PADS | GST_EVENT "
for round in 1 2 3; do
  for s in 17 29 37 50; do
    if ! GST_DEBUG=2 GST_DEBUG_NO_COLOR=1 "$C" "$T/h264.mp4" "$T/h264_d.mkv" -q --start $s --frames 6 \
         -o "$T/chunk.csv" 2>"$T/err" ||
       grep -qE "$trouble" "$T/err" ||
       ! diff <(sed -n "1p;$((s + 2)),$((s + 7))p" "$T/whole.csv") "$T/chunk.csv" >/dev/null; then
      fails=$((fails + 1)); echo "round $round, --start $s: $(grep -E "qmetric-compare:|$trouble" "$T/err" | head -3)"
    fi
  done
done
[ $fails = 0 ] && ok || bad "$fails of 12 seeking chunks failed or differed from the whole run"

# a chunk's own log (-o) holds the whole run's rows of its frames
"$C" "$T/h264.mp4" "$T/h264_d.mkv" -q -o "$T/whole.csv" &&
  "$C" "$T/h264.mp4" "$T/h264_d.mkv" -q --start 20 --frames 10 -o "$T/chunk.csv" 2>"$T/err"
if diff <(sed -n '1p;22,31p' "$T/whole.csv") "$T/chunk.csv" >/dev/null; then ok
else bad "a chunk's CSV log is not the whole run's rows 20..29: $(cat "$T/err")"; fi

# --count-frames: the frame pairs a whole run scores
n=$("$C" "$T/h264.mp4" "$T/h264_d.mkv" --count-frames 2>"$T/err")
[ "$n" = 60 ] && ok || bad "--count-frames gave '$n' for 60 frames: $(cat "$T/err")"
n=$("$C" "$T/cut.mp4" "$T/cut_d.mp4" --count-frames 2>"$T/err")
w=$("$C" "$T/cut.mp4" "$T/cut_d.mp4" -q -o "$T/w.json" && grep -c frameNum "$T/w.json")
[ "$n" = "$w" ] && ok || bad "--count-frames of the edit list gave '$n', a whole run $w frames"
n=$("$C" "$T/raw.h264" "$T/h264.mp4" --count-frames 2>"$T/err")
[ "$n" = 60 ] && ok || bad "--count-frames (decoding a raw H.264 stream) gave '$n': $(cat "$T/err")"

# refusals: one line, exit 2
refused() {  # name, expected text, arguments
  local name=$1 want=$2 rc
  shift 2
  "$C" "$@" -q >/dev/null 2>"$T/err"; rc=$?
  if [ $rc = 2 ] && grep -qF "$want" "$T/err" && [ "$(wc -l <"$T/err")" = 1 ]; then ok
  else bad "$name: exit $rc, expected '$want': $(cat "$T/err")"; fi
}
refused "a codec not read as frames" "whose packets are not read as frames" "$T/mpeg4.mkv" "$T/av1.mkv" --start 30 --partial "$T/p.json"
n=$("$C" "$T/mpeg4.mkv" "$T/av1.mkv" --count-frames 2>"$T/err")
[ "$n" = 40 ] && ok || bad "--count-frames (decoding MPEG-4 part 2) gave '$n': $(cat "$T/err")"
refused "raw H.264 stream" "carry no timestamp" "$T/raw.h264" "$T/h264.mp4" --start 30 --partial "$T/p.json"
refused "pair by time" "with --pair-by time" "$T/h264.mp4" "$T/h264_d.mkv" --start 30 --pair-by time
refused "start past the end" "past its end" "$T/h264.mp4" "$T/h264_d.mkv" --start 70 --partial "$T/p.json"
refused "start past the end (last context)" "past the end" "$T/h264.mp4" "$T/h264_d.mkv" --start 60 --partial "$T/p.json"
refused "counts differ" "frame counts differ" "$T/h264.mp4" "$T/vfr.mkv" --start 40 --partial "$T/p.json"
[ ! -e "$T/p.json" ] && ok || bad "a refused chunk left its --partial file"
# a raw H.264 stream from its first frame needs no seek: numbered by counting
chunks "raw H.264 stream from frame 0" "$T/raw.h264" "$T/h264_d.mkv" "0"

echo "compare_chunks: $pass passed, $fail failed"
[ "$fail" = 0 ]
