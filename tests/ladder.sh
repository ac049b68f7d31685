#!/bin/bash
# qmetric-compare with several renditions (a ladder): a 4-rendition H.264
# ladder made here with gst-launch-1.0 (three bitrates at the reference's
# size, one at half the size), scored in one run.  Asserts: one row per
# rendition; each rendition's per-frame log and pooled values equal a
# separate two-input run on that rendition; the reference decoded once
# (decoder instances counted in GStreamer's log); the bitrate column is
# size x 8 / duration; CSV and JSON read by qmetric-bd; the manifest forms;
# the chart; usage errors.
set -uo pipefail
qc=${QMETRIC_COMPARE:?set QMETRIC_COMPARE to build/tools/qmetric-compare}
bd=${QMETRIC_BD:?set QMETRIC_BD to build/tools/qmetric-bd}
for e in x264enc avdec_h264 matroskamux; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || { echo "SKIP: GStreamer element $e is not installed"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

src="videotestsrc pattern=ball num-buffers=30"
raw="video/x-raw,format=I420,width=320,height=240,framerate=25/1"
enc="x264enc speed-preset=ultrafast"
gst-launch-1.0 -q $src ! $raw ! $enc pass=quant quantizer=4 ! matroskamux ! filesink location=ref.mkv
for b in 60 150 400; do
  gst-launch-1.0 -q $src ! $raw ! $enc bitrate=$b ! matroskamux ! filesink location=r$b.mkv
done
gst-launch-1.0 -q $src ! $raw ! videoscale ! video/x-raw,width=160,height=120 ! \
  $enc bitrate=100 ! matroskamux ! filesink location=half.mkv
gst-launch-1.0 -q $src num-buffers=25 ! $raw ! $enc bitrate=150 ! matroskamux ! filesink location=short.mkv

# the ladder, with GStreamer's log of element creation
GST_DEBUG=GST_ELEMENT_FACTORY:4 GST_DEBUG_NO_COLOR=1 GST_DEBUG_FILE=gst.log \
  "$qc" ref.mkv r60.mkv r150.mkv r400.mkv small=half.mkv --ladder-csv l.csv \
  --ladder-json l.json --plot-rd rd.svg -o logs/ --summary json >sum.json 2>err.txt
rc=$?
[ $rc = 0 ] || { fail "ladder run exited $rc"; cat err.txt; }

# one decoder per input: the reference once (5), not once per pair (8)
n=$(grep -c 'creating element "avdec_h264"' gst.log)
[ "$n" = 5 ] || fail "expected 5 H.264 decoders (reference once + 4 renditions), saw $n"

# rows, single runs, bitrates, JSON on stdout
python3 - "$qc" <<'EOF' || fail "rows differ from single runs (above)"
import csv, json, os, subprocess, sys
qc = sys.argv[1]
rows = list(csv.DictReader(open("l.csv")))
lj = json.load(open("l.json"))
sj = json.load(open("sum.json"))
bad = []
names = ["r60", "r150", "r400", "small"]
if [r["name"] for r in rows] != names: bad.append("csv names %s" % [r["name"] for r in rows])
if [r["name"] for r in lj["renditions"]] != names: bad.append("json names")
if sj["renditions"] != lj["renditions"]: bad.append("--summary json differs from --ladder-json")
if lj["reference"]["frames_decoded"] != 30: bad.append("reference frames %s" % lj["reference"]["frames_decoded"])
files = {"r60": "r60.mkv", "r150": "r150.mkv", "r400": "r400.mkv", "small": "half.mkv"}
for row, jr in zip(rows, lj["renditions"]):
    name = row["name"]
    size = os.path.getsize(files[name])
    want_res = "160x120" if name == "small" else "320x240"
    if jr["resolution"] != want_res: bad.append("%s resolution %s" % (name, jr["resolution"]))
    if jr["scaled"] != (name == "small"): bad.append("%s scaled %s" % (name, jr["scaled"]))
    if int(row["size_bytes"]) != size or int(row["frames"]) != 30: bad.append("%s size/frames" % name)
    # 30 frames at 25 fps = 1.2 s; kbit/s = bytes * 8 / 1.2 / 1000, 6 decimals
    if row["bitrate"] != "%.6f" % (size * 8 / 1.2 / 1000) or row["bitrate_source"] != "size":
        bad.append("%s bitrate %s" % (name, row["bitrate"]))
    if not row["codec"].startswith("H.264"): bad.append("%s codec %s" % (name, row["codec"]))
    args = [qc, "-q", "ref.mkv", files[name], "-o", "single.json", "--summary", "json"]
    if name == "small": args.append("--scale")
    one = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    n = 0
    for feat, stats in one["pooled_metrics"].items():
        for st, v in stats.items():
            n += 1
            if row["%s.%s" % (feat, st)] != "%.6f" % v: bad.append("%s %s.%s: ladder %s, single %.6f" % (name, feat, st, row["%s.%s" % (feat, st)], v))
            if jr[feat][st] != v: bad.append("%s json %s.%s" % (name, feat, st))
    if n < 20: bad.append("%s: only %d pooled values compared" % (name, n))
    # the per-frame logs are the same but for the speed
    strip = lambda p: [l for l in open(p) if '"fps"' not in l]
    if strip("single.json") != strip("logs/%s.json" % name): bad.append("%s per-frame log differs" % name)
    print("%s: %d pooled values and the per-frame log equal a single run" % (name, n))
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
EOF

# qmetric-bd reads both files: the same ladder twice has zero deltas
"$bd" --metric vmaf,psnr_y --json a=l.csv b=l.json >bd.json 2>err.txt || fail "qmetric-bd failed: $(cat err.txt)"
python3 - <<'EOF' || fail "qmetric-bd on the ladder files"
import json
d = json.load(open("bd.json"))
s = json.dumps(d)
assert "vmaf" in s and "psnr_y" in s, s
def nums(x):
    if isinstance(x, dict):
        for k, v in x.items():
            if k.startswith("bd"): yield v
            else: yield from nums(v)
    elif isinstance(x, list):
        for v in x: yield from nums(v)
v = list(nums(d))
assert v and all(abs(x) < 1e-9 for x in v if isinstance(x, (int, float))), s
EOF

# the chart: both panels, the four points
grep -q '<svg' rd.svg && grep -q 'vmaf' rd.svg && grep -q 'psnr_y' rd.svg || fail "rd.svg lacks a panel"

# manifests: text (NAME=PATH, comments) and JSON give the same rows
mkdir m
printf '# the ladder\nr60.mkv\n\nr150=../r150.mkv\n' >m/list.txt
cp r60.mkv m/
"$qc" -q ref.mkv --manifest m/list.txt --ladder-csv mt.csv || fail "text manifest"
printf '[{"name": "r60", "path": "r60.mkv"}, "../r150.mkv"]' >m/list.json
"$qc" -q ref.mkv --manifest m/list.json --ladder-csv mj.csv || fail "JSON manifest"
[ "$(cut -d, -f1,6- mt.csv)" = "$(cut -d, -f1,6- mj.csv)" ] || fail "text and JSON manifests differ"
[ "$(sed -n 2,3p mt.csv | cut -d, -f1,4-)" = "$(sed -n 2,3p l.csv | cut -d, -f1,4-)" ] ||
  fail "manifest rows differ from the command-line ladder"

# a {name} pattern for the logs, XML by its extension
"$qc" -q ref.mkv r60.mkv r150.mkv -o 'x/{name}-log.xml' || fail "{name} pattern"
[ -s x/r60-log.xml ] && [ -s x/r150-log.xml ] && grep -q '<VMAF' x/r60-log.xml || fail "pattern logs missing"

# errors: exit 2, one line naming the problem, nothing written
"$qc" -q ref.mkv r60.mkv short.mkv --ladder-csv e.csv 2>err.txt; rc=$?
[ $rc = 2 ] && grep -q 'frame counts differ: reference has 30 frames, short.mkv 25' err.txt && [ ! -e e.csv ] ||
  fail "a shorter rendition: rc $rc, $(cat err.txt)"
"$qc" -q ref.mkv r60.mkv r150.mkv -o one.json 2>err.txt; rc=$?
[ $rc = 2 ] && grep -q 'give a directory' err.txt || fail "-o FILE with a ladder: rc $rc"
"$qc" -q ref.mkv r60.mkv missing.mkv 2>err.txt; rc=$?
[ $rc = 2 ] && grep -q 'missing.mkv' err.txt || fail "a missing rendition: rc $rc"
echo "not a video" >notes.txt
"$qc" -q ref.mkv r60.mkv notes.txt --ladder-csv e.csv 2>err.txt; rc=$?
[ $rc = 2 ] && grep -q 'notes.txt: not a video format' err.txt && [ ! -e e.csv ] ||
  fail "a rendition that is not video: rc $rc, $(cat err.txt)"
"$qc" -q ref.mkv a=r60.mkv a=r150.mkv 2>err.txt; rc=$?
[ $rc = 2 ] && grep -q "two renditions are named 'a'" err.txt || fail "duplicate names: rc $rc"

[ $fails = 0 ] && echo "ok: ladder" || echo "$fails failure(s)"
exit $((fails > 0))
