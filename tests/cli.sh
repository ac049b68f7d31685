#!/bin/bash
# qmetric-compare end to end: inputs made here with gst-launch-1.0 (y4m, mp4,
# raw yuv), the summary, the logs, the SVG chart and the exit statuses
# (0 ok, 1 --fail-below, 2 usage/input errors).
set -uo pipefail
qc=${QMETRIC_COMPARE:?set QMETRIC_COMPARE to build/tools/qmetric-compare}
for e in x264enc mp4mux y4menc videobalance rawvideoparse; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || { echo "SKIP: GStreamer element $e is not installed"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

src="videotestsrc pattern=zone-plate kx2=20 ky2=20 kt=1"
raw="video/x-raw,format=I420,width=160,height=120,framerate=24/1"
gst-launch-1.0 -q $src num-buffers=24 ! $raw ! y4menc ! filesink location=ref.y4m
gst-launch-1.0 -q $src num-buffers=24 ! $raw ! x264enc bitrate=200 speed-preset=ultrafast ! mp4mux ! filesink location=dis.mp4
gst-launch-1.0 -q $src num-buffers=20 ! $raw ! x264enc bitrate=200 speed-preset=ultrafast ! mp4mux ! filesink location=short.mp4
gst-launch-1.0 -q $src num-buffers=24 ! video/x-raw,format=I420,width=80,height=60,framerate=24/1 ! \
  x264enc bitrate=100 speed-preset=ultrafast ! mp4mux ! filesink location=small.mp4
gst-launch-1.0 -q $src num-buffers=8 ! video/x-raw,format=I420,width=96,height=64 ! filesink location=ref.yuv
gst-launch-1.0 -q $src num-buffers=8 ! video/x-raw,format=I420,width=96,height=64 ! videobalance brightness=0.05 ! filesink location=dis.yuv
echo "not a video" > notes.txt

# run EXPECTED_STATUS args...: stdout in out.txt, stderr in err.txt
run() {
  local want=$1; shift
  "$qc" "$@" >out.txt 2>err.txt
  local rc=$?
  if [ "$rc" != "$want" ]; then
    fail "qmetric-compare $* exited $rc, expected $want"
    sed 's/^/  | /' out.txt err.txt
    return 1
  fi
  return 0
}
expect() { # file pattern what
  grep -q -- "$2" "$1" || { fail "$3: '$2' not in $1"; sed 's/^/  | /' "$1"; }
}

# --- mp4 against y4m: summary, JSON log, SVG chart
if run 0 ref.y4m dis.mp4 --metrics psnr,float_ssim --output scores.json --plot chart.svg; then
  expect out.txt '^frames     24 scored of 24 pairs' "summary frame count"
  expect out.txt '^psnr_y ' "summary row"
  expect out.txt '^float_ssim ' "summary row"
  grep -q $'\r' err.txt && fail "progress line written although stderr is not a terminal"
  python3 - <<'PY' || fail "JSON log or SVG chart"
import json, xml.etree.ElementTree as ET
d = json.load(open("scores.json"))
assert len(d["frames"]) == 24, len(d["frames"])
assert "psnr_y" in d["pooled_metrics"] and "float_ssim" in d["frames"][0]["metrics"]
svg = ET.parse("chart.svg").getroot()          # well-formed XML
assert svg.tag == "{http://www.w3.org/2000/svg}svg", svg.tag
paths = svg.findall(".//{http://www.w3.org/2000/svg}path")
assert paths and paths[0].get("d").startswith("M"), "no score line"
text = " ".join(t.text or "" for t in svg.iter("{http://www.w3.org/2000/svg}text"))
for word in ("frame index", "psnr_y", "mean", "worst"):
    assert word in text, word
PY
fi

# --- the default metrics (VMAF when this build has it), 10 frames, CSV, XML
if run 0 ref.y4m dis.mp4 --frames 10 -o scores.csv; then
  expect out.txt '^frames     10 scored' "--frames"
  [ "$(wc -l < scores.csv)" = 11 ] || fail "CSV log: $(wc -l < scores.csv) lines, expected 11"
  if [[ $(gst-inspect-1.0 qmetric 2>/dev/null) == *' adm ('* ]]; then
    expect out.txt '^vmaf ' "default metrics include VMAF"
  fi
fi
run 0 ref.y4m dis.mp4 --metrics psnr --frames 4 --xml -o scores.xml &&
  python3 -c "import xml.etree.ElementTree as ET; assert len(ET.parse('scores.xml').getroot().find('frames')) == 4" ||
  fail "XML log"

# --- raw .yuv, our options and libvmaf's
run 0 ref.yuv dis.yuv --size 96x64 --format I420 --fps 25 --metrics psnr && expect out.txt '^frames     8 scored' "raw yuv"
run 0 -r ref.yuv -d dis.yuv --width 96 --height 64 --pixel_format 420 --bitdepth 8 --feature psnr --json -o raw.json &&
  python3 -c "import json; assert len(json.load(open('raw.json'))['frames']) == 8" || fail "libvmaf-style options"
run 2 ref.yuv dis.yuv --metrics psnr && expect err.txt 'needs its geometry' "raw without size"
run 2 ref.yuv dis.yuv --size 100x64 --metrics psnr && expect err.txt 'not a whole number of 100x64 I420 frames' "raw with a wrong size"

# --- --fail-below: 1 when a mean is below, 0 when not
run 1 ref.y4m dis.mp4 --metrics psnr --fail-below psnr_y=99 && expect err.txt 'psnr_y mean .* is below 99' "fail-below message"
run 0 ref.y4m dis.mp4 --metrics psnr --fail-below psnr_y=1 --fail-below psnr_cb=1
run 2 ref.y4m dis.mp4 --metrics psnr --fail-below vmaf_typo=1 && expect err.txt "no feature 'vmaf_typo'" "fail-below unknown feature"

# --- input errors: one line each, exit 2
run 2 missing.y4m dis.mp4 && expect err.txt 'missing.y4m: no such file' "missing file"
run 2 ref.y4m small.mp4 --metrics psnr && expect err.txt 'sizes differ: reference is 160x120, distorted is 80x60' "size mismatch"
run 0 ref.y4m small.mp4 --metrics psnr --scale && expect out.txt 'scaled' "--scale"
run 2 ref.y4m short.mp4 --metrics psnr && expect err.txt 'frame counts differ: reference has 24 frames, distorted 20' "frame counts"
run 0 ref.y4m short.mp4 --metrics psnr --shortest && expect out.txt '^frames     20 scored' "--shortest"
run 2 notes.txt dis.mp4 && expect err.txt 'notes.txt: not a video format' "not a video"
# no decoder: every H.264 decoder this machine has (software, nvcodec's
# nvh264dec and nvh264sldec, VA, V4L2, ...) ranked out
h264decs=$(gst-inspect-1.0 2>/dev/null | awk -F': ' '/264/ && /[Dd]ecod/ {gsub(/ /, "", $2); print $2":NONE"}' | paste -sd, -)
GST_PLUGIN_FEATURE_RANK=${h264decs:-avdec_h264:NONE} \
  run 2 ref.y4m dis.mp4 --metrics psnr && expect err.txt 'dis.mp4: no decoder for this format' "no decoder"
run 2 ref.y4m dis.mp4 --bogus && expect err.txt 'unknown option --bogus' "bad option"
run 2 ref.y4m && expect err.txt 'give two inputs' "one input"
run 2 ref.y4m dis.mp4 --metrics psnr,nosuch && expect err.txt "unknown metric 'nosuch'" "unknown metric"
run 2 ref.y4m dis.mp4 --metrics psnr --plot-metrics nosuch --plot x.svg && expect err.txt "no feature or metric 'nosuch'" "plot metric"
[ "$(wc -l < err.txt)" = 1 ] || fail "an error is one line: $(cat err.txt)"

[ $fails = 0 ] && echo "cli: ok" || { echo "cli: $fails failure(s)"; exit 1; }
