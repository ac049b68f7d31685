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

# --- --frames on Matroska H.264: the decoder's events after the stop must
# not end in "Internal data stream error" (20 of 24 runs failed before).
# (videotestsrc's default format makes x264enc write 4:4:4, which needs
# avdec_h264: the GPU machine's GStreamer has no gst-libav)
if gst-inspect-1.0 matroskamux >/dev/null 2>&1 && gst-inspect-1.0 avdec_h264 >/dev/null 2>&1; then
  for n in r d; do
    gst-launch-1.0 -q videotestsrc num-buffers=60 pattern=ball ! video/x-raw,width=320,height=240,framerate=25/1 ! \
      videobalance brightness=$([ $n = d ] && echo 0.05 || echo 0) ! x264enc speed-preset=ultrafast ! h264parse ! \
      matroskamux ! filesink location=m$n.mkv
  done
  for i in 1 2 3 4 5 6; do
    run 0 mr.mkv md.mkv --metrics psnr --frames $((15 + 5 * (i % 2))) -q || break
  done
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

# --- Y4M read in place (tools/compare/mapsrc.c): the scores of the same
#     frames as raw files, 10-bit Y4M (which 1.22's y4mdec does not read),
#     frame lines with parameters, a file cut inside a frame
y4m() {  # raw-file w h frame-bytes colour-tag out [params-on-odd-frames]
  local n i
  n=$(( $(stat -c %s "$1") / $4 ))
  { printf 'YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C%s\n' "$2" "$3" "$5"
    for ((i = 0; i < n; i++)); do
      if [ -n "${7:-}" ] && ((i % 2)); then printf 'FRAME XCOMMENT=%d\n' $i; else printf 'FRAME\n'; fi
      dd if="$1" bs="$4" skip=$i count=1 status=none
    done; } >"$6"
}
same_frames() {  # a.json b.json what
  python3 - "$1" "$2" <<'PY' || fail "$3: the logs differ"
import json, sys
a, b = (json.load(open(p))["frames"] for p in sys.argv[1:])
assert len(a) == len(b) > 0 and all(x["metrics"] == y["metrics"] for x, y in zip(a, b)), (len(a), len(b))
PY
}
y4m ref.yuv 96 64 9216 420jpeg ref96.y4m
y4m dis.yuv 96 64 9216 420jpeg dis96.y4m params
run 0 ref96.y4m dis96.y4m --metrics psnr,float_ssim -o y4m.json && expect out.txt '^frames     8 scored' "y4m in place" &&
  run 0 ref.yuv dis.yuv --size 96x64 --fps 25 --metrics psnr,float_ssim -o yuv.json && same_frames y4m.json yuv.json "y4m against raw"
gst-launch-1.0 -q $src num-buffers=6 ! video/x-raw,format=I420_10LE,width=96,height=64 ! filesink location=ref10.yuv
gst-launch-1.0 -q videotestsrc pattern=zone-plate kx2=20 ky2=20 kt=2 num-buffers=6 ! \
  video/x-raw,format=I420_10LE,width=96,height=64 ! filesink location=dis10.yuv
y4m ref10.yuv 96 64 18432 420p10 ref10.y4m
y4m dis10.yuv 96 64 18432 420p10 dis10.y4m
run 0 ref10.y4m dis10.y4m --metrics psnr -o y4m10.json && expect out.txt '^frames     6 scored' "10-bit y4m" &&
  run 0 ref10.yuv dis10.yuv --size 96x64 --format I420_10LE --fps 25 --metrics psnr -o yuv10.json &&
  same_frames y4m10.json yuv10.json "10-bit y4m against raw"
# pipes: Y4M read by frames (its header looked at with tee(2), not taken),
# anything else handed to the decoders untouched
run 0 ref10.y4m <(cat dis10.y4m) --metrics psnr -o pipe10.json && same_frames pipe10.json y4m10.json "10-bit y4m from a pipe"
run 0 ref96.y4m /dev/stdin --metrics psnr,float_ssim -o pipe.json < <(cat dis96.y4m) &&
  same_frames pipe.json y4m.json "y4m on /dev/stdin"
run 2 ref96.y4m <(head -c $((34 + 7 * (6 + 9216) + 100)) dis96.y4m) --metrics psnr &&
  expect err.txt 'the stream ends inside frame 7' "y4m pipe cut inside a frame"
if gst-inspect-1.0 mpegtsmux >/dev/null 2>&1; then
  gst-launch-1.0 -q $src num-buffers=24 ! $raw ! x264enc bitrate=200 speed-preset=ultrafast ! mpegtsmux ! filesink location=dis.ts
  run 0 ref.y4m dis.ts --metrics psnr -o ts.json && run 0 ref.y4m <(cat dis.ts) --metrics psnr -o tspipe.json &&
    same_frames tspipe.json ts.json "MPEG-TS from a pipe (not Y4M: untouched for the decoders)"
fi
head -c $((34 + 7 * (6 + 9216) + 100)) dis96.y4m >cut.y4m
run 2 ref96.y4m cut.y4m --metrics psnr && expect err.txt 'ends inside frame 7' "y4m cut inside a frame" &&
  expect err.txt 'frame counts differ: reference has 8 frames, distorted 7' "y4m cut: counts"

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

# ===================== scripting: stdout, JSON summary, gates, files =====================
# jq-like checks: json FILE PYTHON-EXPRESSION (d is the parsed file)
json() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" ||
    { fail "JSON $1: $2"; sed 's/^/  | /' "$1" | head -40; }
}
RAW="--size 96x64 --metrics psnr"

# --summary json on stdout, the table on stderr; its pooled values are the log's
if run 0 ref.yuv dis.yuv $RAW --summary json -o sum-log.json; then
  expect err.txt '^frames     8 scored' "--summary json: table on stderr"
  json out.txt 'd["frames"] == 8 and d["pairs"] == 8 and d["exit_status"] == 0 and d["error"] is None'
  json out.txt 'd["reference"]["input"] == "ref.yuv" and d["distorted"]["frames_decoded"] == 8 and d["pair_by"] == "index"'
  python3 - <<'PY' || fail "--summary json pooled values differ from the log's"
import json
s = json.load(open("out.txt"))["pooled_metrics"]
l = json.load(open("sum-log.json"))["pooled_metrics"]
for f in ("psnr_y", "psnr_cb", "psnr_cr"):
    for k in ("min", "max", "mean", "harmonic_mean"):
        assert "%.6f" % s[f][k] == "%.6f" % l[f][k], (f, k, s[f][k], l[f][k])
PY
fi
# -q: nothing but the JSON
run 0 ref.yuv dis.yuv $RAW --summary json -q && { [ -s err.txt ] && fail "-q --summary json wrote to stderr: $(cat err.txt)"; json out.txt 'd["frames"] == 8'; }
# -o -: the log on stdout, the table on stderr
if run 0 ref.yuv dis.yuv $RAW -o -; then
  json out.txt 'len(d["frames"]) == 8 and "psnr_y" in d["pooled_metrics"]'
  expect err.txt 'per-frame log: standard output (json)' "-o -: table on stderr"
fi
run 0 ref.yuv dis.yuv $RAW --plot - -q &&
  python3 -c "import xml.etree.ElementTree as ET; assert ET.parse('out.txt').getroot().tag.endswith('svg')" || fail "--plot -: no SVG on stdout"
run 0 ref.yuv dis.yuv $RAW --csv -o - && [ "$(wc -l < out.txt)" = 9 ] || fail "-o - --csv: $(wc -l < out.txt) lines, expected 9"
run 2 ref.yuv dis.yuv $RAW -o - --summary json && expect err.txt 'only one of -o -, --plot - and --summary json' "two things on stdout"
run 2 ref.yuv dis.yuv $RAW --summary yaml && expect err.txt "'yaml' is not text or json" "--summary value"

# --fail-below on any pooled statistic; identical inputs: PSNR is 60 everywhere
run 0 ref.yuv ref.yuv $RAW --fail-below psnr_y.min=60 --fail-below psnr_y.p5=60 --fail-below psnr_cb.harmonic_mean=60 --fail-below psnr_y=60 &&
  expect err.txt '^qmetric-compare: psnr_y p5 60.000000 >= 60: ok' "gate on p5"
run 1 ref.yuv ref.yuv $RAW --fail-below psnr_y.p1=60.5 --fail-below psnr_y.max=1 &&
  expect err.txt '^qmetric-compare: psnr_y p1 60.000000 is below 60.5 (--fail-below)' "failing p1 gate"
run 1 ref.yuv ref.yuv $RAW --fail-below psnr_y=61 && expect err.txt 'psnr_y mean 60.000000 is below 61' "plain gate is the mean"
run 0 ref.yuv ref.yuv $RAW --fail-below psnr_y.p5=60 --summary json -q &&
  json out.txt 'd["gates"] == [{"feature": "psnr_y", "statistic": "p5", "threshold": 60.0, "value": 60.0, "passed": True}]'
# a gate on a metric that is not computed: exit 2, and nothing written
rm -f gate.json gate.svg
run 2 ref.yuv dis.yuv $RAW --fail-below vmaf.p5=80 -o gate.json --plot gate.svg --summary json &&
  expect err.txt "--fail-below: no feature 'vmaf' in the scores" "gate on a metric not computed"
[ -s out.txt ] && fail "gate on a missing metric wrote to stdout: $(head -3 out.txt)"
ls -A | grep -q 'gate\.' && fail "gate on a missing metric left files: $(ls -A | grep 'gate\.')"
run 2 ref.yuv dis.yuv $RAW --fail-below psnr_y.p5=abc && expect err.txt "'abc' is not a number" "gate value"

# outputs that cannot be written: named before the run, or exit 2 at the end
run 2 ref.yuv dis.yuv $RAW -o /nonexistent/dir/x.json &&
  expect err.txt '^qmetric-compare: --output /nonexistent/dir/x.json: cannot be written: no such directory$' "unwritable log"
[ -s out.txt ] && fail "unwritable log: the comparison ran"
run 2 ref.yuv dis.yuv $RAW --plot . && expect err.txt '^qmetric-compare: --plot .: is a directory$' "plot to a directory"
run 2 ref.yuv dis.yuv $RAW -o /dev/full && expect err.txt '^qmetric-compare: --output /dev/full: cannot be written: No space left on device$' "log to /dev/full"
run 2 ref.yuv dis.yuv $RAW --plot /dev/full && expect err.txt '^qmetric-compare: --plot /dev/full: cannot be written: No space left on device$' "chart to /dev/full"
"$qc" ref.yuv dis.yuv $RAW --summary json >/dev/full 2>err.txt; rc=$?
[ $rc = 2 ] || fail "--summary json >/dev/full exited $rc, expected 2"
expect err.txt 'standard output cannot be written' "stdout on /dev/full"
# a usage error found after the files were prepared leaves none behind
run 2 ref.yuv dis.yuv $RAW,nosuch -o left.json --plot left.svg && expect err.txt "unknown metric 'nosuch'" "late usage error"
ls -A | grep -q '^\.' && fail "temporary files left: $(ls -A | grep '^\.')"
# no output over an input (the same file by device and inode: names,
# symbolic and hard links, file: URIs; renditions and the manifest of a
# ladder), refused before anything is written; the input is left as it was
cp ref.y4m victim.y4m
run 2 -q -o victim.y4m victim.y4m victim.y4m &&
  expect err.txt '^qmetric-compare: --output victim.y4m is the input victim.y4m (the same file): it would be overwritten$' "-o over the input"
ln -s dis.yuv dis-link.json
run 2 ref.yuv dis.yuv $RAW -o dis-link.json && expect err.txt '^qmetric-compare: --output dis-link.json is the input dis.yuv (the same file)' "-o through a symbolic link"
ln victim.y4m victim-hard.svg
run 2 victim.y4m dis.mp4 --metrics psnr --plot victim-hard.svg &&
  expect err.txt '^qmetric-compare: --plot victim-hard.svg is the input victim.y4m (the same file)' "--plot through a hard link"
run 2 "file://$PWD/victim.y4m" dis.mp4 --metrics psnr -o victim.y4m &&
  expect err.txt "^qmetric-compare: --output victim.y4m is the input $PWD/victim.y4m (the same file)" "-o over a file: URI input"
run 2 ref.y4m dis.mp4 short.mp4 --metrics psnr --ladder-csv short.mp4 &&
  expect err.txt '^qmetric-compare: --ladder-csv short.mp4 is the input short.mp4 (the same file)' "--ladder-csv over a rendition"
printf 'dis.mp4\nvictim.y4m\n' >renditions.txt
run 2 ref.y4m --manifest renditions.txt --metrics psnr --ladder-json renditions.txt &&
  expect err.txt '^qmetric-compare: --ladder-json renditions.txt is the input renditions.txt (the same file)' "--ladder-json over the manifest"
run 2 ref.y4m --manifest renditions.txt --metrics psnr --plot-rd victim-hard.svg &&
  expect err.txt '^qmetric-compare: --plot-rd victim-hard.svg is the input .*victim.y4m (the same file)' "--plot-rd over a manifest's rendition"
cmp -s victim.y4m ref.y4m || fail "an input was written over"
# a .yuv name holding a container: refused with what it is (tools/sniff.c)
cp dis.mp4 encode.yuv
run 2 ref.yuv encode.yuv $RAW && expect err.txt '^qmetric-compare: encode.yuv: an MP4/MOV file (ISO media boxes), not raw frames' "a container named .yuv"

# ===================== libvmaf's options =====================
# --feature adds to the VMAF model (libvmaf); its sub-options are refused, never dropped
if [[ $(gst-inspect-1.0 qmetric 2>/dev/null) == *' adm ('* ]]; then
  run 0 ref.yuv dis.yuv --size 96x64 --feature psnr --summary json -q &&
    json out.txt '"vmaf" in d["pooled_metrics"] and "psnr_y" in d["pooled_metrics"] and "float_ssim" not in d["pooled_metrics"]'
fi
run 0 ref.yuv dis.yuv --size 96x64 --metrics psnr --feature float_ssim --summary json -q &&
  json out.txt 'sorted(k for k in d["pooled_metrics"]) == ["float_ssim", "psnr_cb", "psnr_cr", "psnr_y"]'
# with options: an instance with libvmaf's key suffixes beside the model's;
# an unknown option is an error naming it, never dropped
if [[ $(gst-inspect-1.0 qmetric 2>/dev/null) == *' adm ('* ]]; then
  run 0 ref.yuv dis.yuv --size 96x64 --feature adm=adm_enhn_gain_limit=1.0 --summary json -q &&
    json out.txt '"vmaf" in d["pooled_metrics"] and "integer_adm2_egl_1" in d["pooled_metrics"]'
  "$qc" ref.yuv dis.yuv $RAW --feature adm=adm_no_such_option=1 >out.txt 2>err.txt
  rc=$?
  [ $rc != 0 ] || fail "--feature adm=adm_no_such_option=1 exited 0"
  expect err.txt "adm_no_such_option" "unknown feature option named"
fi
run 2 ref.yuv dis.yuv $RAW --feature psnr:enable_chroma=false &&
  expect err.txt "options follow the name after '='" "feature option spelling"
# --frame_cnt, --subsample
run 0 ref.yuv dis.yuv $RAW --frame_cnt 4 --summary json -q && json out.txt 'd["frames"] == 4'
run 0 ref.yuv dis.yuv $RAW --subsample 2 -o sub.json -q && json sub.json '[f["frameNum"] for f in d["frames"]] == [0, 2, 4, 6]'
# frame offsets: three other frames in front of the reference's eight
gst-launch-1.0 -q videotestsrc pattern=snow num-buffers=3 ! video/x-raw,format=I420,width=96,height=64 ! filesink location=junk.yuv
cat junk.yuv ref.yuv > late.yuv
run 0 ref.yuv late.yuv $RAW --frame_skip_dist 3 --summary json -q &&
  json out.txt 'd["frames"] == 8 and d["pooled_metrics"]["psnr_y"]["min"] == 60 and d["distorted"]["frames_skipped"] == 3'
run 0 late.yuv ref.yuv $RAW --frame-skip-ref 3 && expect out.txt 'skipped first: reference 3, distorted 0' "--frame-skip-ref"
run 2 ref.yuv late.yuv $RAW --frame_skip_dist 2 && expect err.txt 'frame counts differ: reference has 8 frames, distorted 9 after the skipped ones' "offset count check"
run 2 ref.yuv dis.yuv $RAW --frame_skip_ref 8 && expect err.txt 'ref.yuv: --frame_skip_ref 8 leaves no frame: it has 8' "skip everything"
run 2 ref.y4m dis.mp4 --metrics psnr --pair-by time --frame_skip_ref 1 && expect err.txt 'apply to --pair-by index' "offsets with time pairing"

# ===================== pairing =====================
# index pairing warns once when the frame rates differ, and nothing says
# the frames pair by running time (the element's rule, which index pairing
# replaces); by time, the one warning is the element's
gst-launch-1.0 -q $src num-buffers=24 ! video/x-raw,format=I420,width=160,height=120,framerate=12/1 ! \
  x264enc bitrate=200 speed-preset=ultrafast ! mp4mux ! filesink location=half.mp4
if run 0 ref.y4m half.mp4 --metrics psnr; then
  expect err.txt 'warning: frame rates differ: reference 24 fps, distorted 12 fps' "frame-rate warning"
  [ "$(grep -ci 'frame rates differ' err.txt)" = 1 ] && ! grep -q 'running time' err.txt ||
    fail "frame-rate warning not once: $(cat err.txt)"
fi
gst-launch-1.0 -q $src num-buffers=24 ! video/x-raw,format=I420,width=160,height=120 ! filesink location=ref160.yuv
if run 0 ref160.yuv half.mp4 --size 160x120 --fps 24 --metrics psnr; then
  [ "$(grep -ci 'frame rates differ' err.txt)" = 1 ] && ! grep -q 'running time' err.txt ||
    fail "raw input: frame-rate warning not once: $(cat err.txt)"
fi
if run 0 ref.y4m half.mp4 --metrics psnr --pair-by time; then
  [ "$(grep -ci 'frame rates differ' err.txt)" = 1 ] && grep -q 'nearest frame of the other stream in running time' err.txt ||
    fail "time pairing: frame-rate warning not once: $(cat err.txt)"
fi
# ... and when timestamps jump (a dropped frame): frame 10's slot is empty
if /usr/bin/python3 -c 'import gi' 2>/dev/null; then
  /usr/bin/python3 - <<'PY' || fail "making gap.mp4"
import gi
gi.require_version("Gst", "1.0")
from gi.repository import Gst
Gst.init(None)
p = Gst.parse_launch("videotestsrc pattern=zone-plate kx2=20 ky2=20 kt=1 num-buffers=24 ! "
    "video/x-raw,format=I420,width=160,height=120,framerate=24/1 ! identity name=i ! "
    "x264enc bitrate=200 speed-preset=ultrafast ! mp4mux ! filesink location=gap.mp4")
def shift(pad, info):
    b = info.get_buffer()
    if b.pts >= Gst.SECOND * 10 // 24:
        b.pts += Gst.SECOND // 24
    return Gst.PadProbeReturn.OK
p.get_by_name("i").get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, shift)
p.set_state(Gst.State.PLAYING)
m = p.get_bus().timed_pop_filtered(Gst.CLOCK_TIME_NONE, Gst.MessageType.EOS | Gst.MessageType.ERROR)
p.set_state(Gst.State.NULL)
assert m.type == Gst.MessageType.EOS
PY
  if run 0 ref.y4m gap.mp4 --metrics psnr; then
    expect err.txt 'warning: gap.mp4: its timestamps jump by 83.3 ms (.* frame durations) after frame 9 ' "gap warning"
    [ "$(grep -c 'timestamps jump' err.txt)" = 1 ] || fail "gap warning not once: $(cat err.txt)"
  fi
  # by time, the frame without a partner on each side is left out and counted
  run 0 ref.y4m gap.mp4 --metrics psnr --pair-by time --summary json -q &&
    json out.txt 'd["frames"] == 23 and d["unmatched_reference"] == 1 and d["unmatched_distorted"] == 1 and d["pair_by"] == "time"'
else
  echo "note: no PyGObject for /usr/bin/python3: gap checks not run"
fi

# ===================== packed formats =====================
# v210 (six pixels in 16 bytes, rows in 128-byte blocks): raw files read as
# GStreamer and FFmpeg lay them out; the same frames from AVI score PSNR's cap
if gst-inspect-1.0 avimux >/dev/null 2>&1; then
  for w in 96 100; do
    gst-launch-1.0 -q $src num-buffers=5 ! video/x-raw,format=v210,width=$w,height=64,framerate=25/1 ! filesink location=v210.yuv
    gst-launch-1.0 -q $src num-buffers=5 ! video/x-raw,format=v210,width=$w,height=64,framerate=25/1 ! avimux ! filesink location=v210.avi
    run 0 v210.yuv v210.avi --size ${w}x64 --format v210 --metrics psnr --summary json -q &&
      json out.txt 'd["frames"] == 5 and d["pooled_metrics"]["psnr_y"]["min"] == 72 and d["pooled_metrics"]["psnr_cb"]["min"] == 72'
  done
fi
run 2 ref.yuv dis.yuv --size 96x64 --format NV12_4L4 --metrics psnr && expect err.txt 'NV12_4L4 frames have no fixed layout' "tiled raw format"

# ===================== alignment: --detect-offset, --align =====================
# A moving ball, 48 frames: the reference is frames 0-39; "late" lacks its
# first 5 frames (frames 5-39, H.264 and lossless y4m), "early" has 3 extra
# frames in front (raw frames 0-39 against a raw reference of frames 3-42)
ball="videotestsrc pattern=ball num-buffers=48"
bfmt="format=I420,width=160,height=120,framerate=25/1"
gst-launch-1.0 -q $ball ! video/x-raw,$bfmt ! filesink location=ball.yuv
fs=$((160 * 120 * 3 / 2))
head -c $((40 * fs)) ball.yuv > ball-ref.yuv
tail -c +$((5 * fs + 1)) ball-ref.yuv > ball-late.yuv
tail -c +$((3 * fs + 1)) ball.yuv | head -c $((40 * fs)) > ball-ref3.yuv
head -c $((40 * fs)) ball.yuv > ball-early.yuv
parse="rawvideoparse width=160 height=120 format=i420 framerate=25/1"
gst-launch-1.0 -q filesrc location=ball-ref.yuv ! $parse ! y4menc ! filesink location=aref.y4m
gst-launch-1.0 -q filesrc location=ball-late.yuv ! $parse ! y4menc ! filesink location=alate.y4m
gst-launch-1.0 -q filesrc location=ball-late.yuv ! $parse ! x264enc bitrate=300 speed-preset=ultrafast ! \
  mp4mux ! filesink location=alate.mp4
gst-launch-1.0 -q filesrc location=ball-late.yuv ! $parse ! videoscale ! video/x-raw,width=80,height=60 ! \
  x264enc bitrate=150 speed-preset=ultrafast ! mp4mux ! filesink location=alate-small.mp4
gst-launch-1.0 -q videotestsrc pattern=colors num-buffers=40 ! video/x-raw,$bfmt ! y4menc ! filesink location=still.y4m
gst-launch-1.0 -q videotestsrc pattern=colors num-buffers=40 ! video/x-raw,$bfmt ! x264enc bitrate=100 speed-preset=ultrafast ! mp4mux ! filesink location=still.mp4
gst-launch-1.0 -q $ball num-buffers=6 ! video/x-raw,$bfmt ! y4menc ! filesink location=ball6.y4m

# the report: offset +5 (the distorted starts at reference frame 5), text and JSON
if run 0 aref.y4m alate.mp4 --detect-offset=10; then
  expect out.txt '^offset      +5: the distorted video starts at reference frame 5' "detected offset"
  expect out.txt '^apply       --frame_skip_ref 5 --frame_skip_dist 0' "offset to apply"
  expect out.txt '^searched    offsets -10..+10, 25 frame pairs each' "search range"
fi
run 0 aref.y4m alate.mp4 --detect-offset=10 -q && expect out.txt '^offset      +5' "-q keeps the report"
# the default range (30) narrowed to fit 35 frames: offsets up to 27, 8 pairs each
run 0 aref.y4m alate.mp4 --detect-offset --summary json &&
  json out.txt 'd["offset"] == 5 and d["confident"] and d["confidence"] >= 0.5 and not d["static"] and d["frame_skip_ref"] == 5 and d["frame_skip_dist"] == 0 and d["narrowed"] and d["max_offset"] == 27 and d["window"] == 8 and len(d["candidates"]) == 55'
run 0 ball-ref3.yuv ball-early.yuv --size 160x120 --detect-offset=8 --summary json &&
  json out.txt 'd["offset"] == -3 and d["confident"] and d["frame_skip_ref"] == 0 and d["frame_skip_dist"] == 3'
# another size: both on one small grid
run 0 aref.y4m alate-small.mp4 --detect-offset=10 --summary json &&
  json out.txt 'd["offset"] == 5 and d["confident"]'
# --align auto: the lossless copy scores PSNR's cap; the H.264 one the same
# as a run given --frame_skip_ref 5 by hand
if run 0 aref.y4m alate.y4m --metrics psnr --align auto --summary json; then
  json out.txt 'd["frames"] == 35 and d["pooled_metrics"]["psnr_y"]["min"] == 60 and d["alignment"]["offset"] == 5 and d["alignment"]["mode"] == "auto" and d["reference"]["frames_skipped"] == 5'
  expect err.txt "alignment: offset +5, confidence .*: the reference's first 5 frames are left out" "--align auto message"
fi
# a pipe is read once: the window and then the comparison cannot both read it
run 2 aref.y4m <(cat alate.y4m) --metrics psnr --align auto &&
  expect err.txt '--align reads the first frames of both inputs, .*is a pipe or a device' "--align on a pipe"
run 0 aref.y4m alate.mp4 --align auto --summary json -q && mv out.txt auto.json
run 0 aref.y4m alate.mp4 --frame_skip_ref 5 --summary json -q && mv out.txt byhand.json
python3 - <<'PY' || fail "--align auto and --frame_skip_ref 5 give different scores"
import json
a, b = json.load(open("auto.json")), json.load(open("byhand.json"))
assert a["frames"] == b["frames"] == 35, (a["frames"], b["frames"])
for f, v in b["pooled_metrics"].items():
    assert a["pooled_metrics"][f] == v, (f, a["pooled_metrics"][f], v)
assert "psnr_y" in a["pooled_metrics"] and a["alignment"]["offset"] == 5
PY
run 0 aref.y4m alate.mp4 --metrics psnr --align auto && expect out.txt '^aligned    offset +5 found by --align auto' "summary line"
# still content: no offset stands out; auto refuses, force applies 0 with a warning
run 0 still.y4m still.y4m --detect-offset --summary json &&
  json out.txt 'd["static"] and not d["confident"] and d["confidence"] == 0 and d["offset"] == 0'
run 0 still.y4m still.y4m --detect-offset && expect out.txt 'the content barely changes from frame to frame' "still content named"
# encoded, the still's frames differ a little (the first ones most): still no confident offset
run 0 still.y4m still.mp4 --detect-offset --summary json && json out.txt 'not d["confident"] and d["confidence"] < 0.5'
run 2 still.y4m still.y4m --metrics psnr --align auto &&
  expect err.txt '^qmetric-compare: --align auto: no reliable offset: the best, +0, has confidence 0.000 (the content barely changes' "auto refuses"
run 0 still.y4m still.y4m --metrics psnr --align force && expect err.txt 'warning: forced alignment: offset +0' "force"
# too short, usage errors
run 2 ball6.y4m ball6.y4m --detect-offset && expect err.txt 'too short to look for an offset: the reference has 6 frames' "short input"
run 2 aref.y4m alate.mp4 --align sideways && expect err.txt "'sideways' is not auto or force" "--align value"
run 2 aref.y4m alate.mp4 --align auto --detect-offset && expect err.txt 'give one' "--align with --detect-offset"
run 2 aref.y4m alate.mp4 --align auto --pair-by time && expect err.txt '--align applies to --pair-by index' "--align by time"
run 2 aref.y4m alate.mp4 alate.y4m --align auto && expect err.txt '--align is not available with several renditions' "--align in a ladder"
run 2 aref.y4m alate.mp4 --align-window 3 && expect err.txt "'3' is not a whole number in 8..10000" "--align-window"
# a ladder: each rendition's offset
gst-launch-1.0 -q filesrc location=ball-ref3.yuv ! $parse ! y4menc ! filesink location=aref3.y4m
run 0 aref.y4m late=alate.mp4 same=aref3.y4m --detect-offset=10 --summary json &&
  json out.txt '[r["offset"] for r in d["renditions"]] == [5, 3] and all(r["confident"] for r in d["renditions"])'

# ===================== --gpus =====================
run 2 ref.y4m dis.mp4 --gpus 0 && expect err.txt 'a lone number counts GPUs; device 0 alone is --gpus 0,' "--gpus 0"
run 2 ref.y4m dis.mp4 --gpus 0,1,0 && expect err.txt 'device 0 is listed twice' "--gpus duplicate"
run 2 ref.y4m dis.mp4 --gpus x && expect err.txt "'x' is not a whole number" "--gpus word"
run 2 ref.y4m dis.mp4 --gpus 1,,2 && expect err.txt "--gpus: a device id: '' is not" "--gpus empty id"
run 2 ref.y4m dis.mp4 --gpus 2 --cuda-device-id 1 && expect err.txt 'give --gpus or --cuda-device-id, not both' "--gpus with --cuda-device-id"
run 2 ref.y4m dis.mp4 --gpus all --backend cpu && expect err.txt 'nothing would run on a GPU' "--gpus with the CPU"
# the plan: rendition i on the list's device i mod n
if run 0 ref.y4m dis.mp4 --gpus all --dry-run; then
  if grep -q 'no CUDA device' err.txt; then
    # no GPU: "all" is none, and the run says so and goes on (here on the CPU)
    expect out.txt '^distorted   dis.mp4 -> backend auto' "--gpus all without a GPU"
    run 0 ref.y4m dis.mp4 --metrics psnr --frames 4 --gpus all && expect err.txt '--gpus all: no CUDA device' "--gpus all run"
  else
    expect out.txt '^distorted   dis.mp4 -> CUDA device 0' "--gpus all with GPUs"
  fi
fi
"$qc" ref.y4m a=dis.mp4 b=dis.mp4 c=dis.mp4 --gpus 0,1 --dry-run >out.txt 2>err.txt; rc=$?
if grep -q 'cannot be checked' err.txt || [ "$(grep -c 'CUDA device' out.txt)" = 3 ]; then
  # no driver (ids unchecked) or two devices or more: the round robin
  [ $rc = 0 ] || fail "--gpus 0,1 --dry-run exited $rc"
  expect out.txt '^a  *dis.mp4 -> CUDA device 0$' "plan a"
  expect out.txt '^b  *dis.mp4 -> CUDA device 1$' "plan b"
  expect out.txt '^c  *dis.mp4 -> CUDA device 0$' "plan c"
  expect out.txt '^reference  *ref.y4m (decoded once)' "plan reference"
else
  # a machine with one GPU
  [ $rc = 2 ] && expect err.txt 'there is no CUDA device 1 (this machine has 1)' "--gpus beyond the machine"
fi

# ===================== unaligned frames read in place =====================
# A Y4M file's pictures sit after its header and "FRAME" lines, off any
# alignment; read in place and converted (4:4:4 against a 4:2:0 reference),
# videoconvert's ORC code faulted on them (exit 139).  The same frames
# through a pipe (copied into aligned buffers) give the scores to match.
gst-launch-1.0 -q $src num-buffers=6 ! video/x-raw,format=I420,width=64,height=48 ! y4menc ! filesink location=u420.y4m
gst-launch-1.0 -q $src num-buffers=6 ! video/x-raw,format=Y444,width=64,height=48 ! y4menc ! filesink location=u444.y4m
if run 0 u420.y4m u444.y4m -q --metrics psnr -o u-map.json &&
   run 0 u420.y4m <(cat u444.y4m) -q --metrics psnr -o u-pipe.json; then
  diff <(grep -v '"fps"' u-map.json) <(grep -v '"fps"' u-pipe.json) >/dev/null ||
    fail "a 4:4:4 Y4M read in place scores otherwise than through a pipe"
fi

# ===================== QMETRIC_BACKTRACE =====================
# A crash report on stderr (signal, thread, phase, one module+offset a
# frame), and the exit status of the signal as without it.  The tool is
# held reading a manifest from a FIFO, past the handler's installation,
# and sent a SIGSEGV there.
mkfifo m.fifo
QMETRIC_BACKTRACE=1 "$qc" ref.y4m --manifest m.fifo >out.txt 2>err.txt &
pid=$!
sleep 20 >m.fifo &   # the writer: the tool's open returns, its read waits
writer=$!
for _ in $(seq 100); do
  ls -l /proc/$pid/fd 2>/dev/null | grep -q m.fifo && break
  sleep 0.1
done
kill -SEGV $pid
wait $pid 2>/dev/null  # (not the shell's "Segmentation fault" line)
rc=$?
kill $writer 2>/dev/null
wait $writer 2>/dev/null
if [ $rc = 139 ]; then
  expect err.txt 'qmetric-compare: fatal signal 11 (SIGSEGV), sent by process' "QMETRIC_BACKTRACE report"
  expect err.txt 'phase: starting' "QMETRIC_BACKTRACE phase"
  expect err.txt 'qmetric-compare(+0x' "QMETRIC_BACKTRACE frames"
else
  fail "QMETRIC_BACKTRACE: a SIGSEGV made exit status $rc, expected 139"
  sed 's/^/  | /' err.txt
fi

[ $fails = 0 ] && echo "cli: ok" || { echo "cli: $fails failure(s)"; exit 1; }
