#!/bin/bash
# qmetric-compare with several renditions (a ladder): a 4-rendition H.264
# ladder made here with gst-launch-1.0 (three bitrates at the reference's
# size, one at half the size), scored in one run.  Asserts: one row per
# rendition; each rendition's per-frame log and pooled values equal a
# separate two-input run on that rendition; the reference decoded once
# (decoder instances counted in GStreamer's log); the bitrate column is
# size x 8 / duration; CSV and JSON read by qmetric-bd; the manifest forms;
# the chart (a curve per codec or manifest group named in the legend, every
# point labelled, kbit/s ticks, the hull); --fail-below on every rendition;
# one warning for a rendition of another frame rate; usage errors.
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

# the chart: a panel per metric (VMAF, PSNR, SSIM); one codec, one curve
# named after it (not after the reference); each point labelled with its
# rendition on every panel; rate ticks in the axis' unit (kbit/s), not "500 k"
grep -q '<svg' rd.svg && grep -q 'vmaf' rd.svg && grep -q 'psnr_y' rd.svg &&
  grep -q 'float_ssim' rd.svg && [ "$(grep -c "<g id='panel-" rd.svg)" = 3 ] ||
  fail "rd.svg has not the three panels"
grep -q "<text x='[0-9.]*' y='[0-9.]*'>H.264</text>" rd.svg || fail "the legend does not name the codec"
! grep -q '>ref.mkv</text>' rd.svg || fail "the legend names the reference"
for n in r60 r150 r400 small; do
  [ "$(grep -c ">$n</text>" rd.svg)" = 3 ] || fail "point $n is not labelled on every panel"
done
grep -q 'bitrate (kbit/s, log scale)' rd.svg && ! grep -q ' [kM]</text>' rd.svg || fail "rate ticks are not in kbit/s"

# SSIMULACRA2 on a ladder: its column in the table and the rows, one panel
# read as its descriptor says (unit "score", never above 100, higher is
# better: the upper hull), qmetric-bd on its column (the same ladder 1
# higher everywhere: BD-quality 1, BD-rate negative), --plot-metrics
# choosing the panels and a name it does not know refused (2, nothing written)
"$qc" ref.mkv r60.mkv r150.mkv r400.mkv small=half.mkv --metrics ssimulacra2 \
  --ladder-csv s2.csv --plot-rd s2.svg --hull >s2.txt 2>err.txt || fail "SSIMULACRA2 ladder: $(cat err.txt)"
python3 - <<'EOF' || fail "SSIMULACRA2 ladder (above)"
import csv, re, sys
rows = list(csv.DictReader(open("s2.csv")))
table = open("s2.txt").read().split("\n")
svg = open("s2.svg").read()
bad = []
if table[0].split()[-1] != "ssimulacra2": bad.append("table header %r" % table[0])
for r, line in zip(rows, table[1:]):
    if not -100 < float(r["ssimulacra2.mean"]) < 100 or line.split()[-1] != r["ssimulacra2.mean"]:
        bad.append("%s: table %r, csv %s" % (r["name"], line, r["ssimulacra2.mean"]))
if svg.count("<g id='panel-") != 1 or "ssimulacra2 (score)" not in svg: bad.append("panel")
ticks = [float(t) for t in re.findall(r"text-anchor='end'[^>]*>(-?[0-9.]+)</text>", svg)]
if not ticks or max(ticks) > 100: bad.append("quality ticks %s" % ticks)
if "id='hull-0'" not in svg: bad.append("no hull")
for r in rows:
    if svg.count(">%s</text>" % r["name"]) != 1: bad.append("label %s" % r["name"])
w = csv.DictWriter(open("s2up.csv", "w"), fieldnames=list(rows[0].keys()))
w.writeheader()
for r in rows:
    r["ssimulacra2.mean"] = "%.6f" % (float(r["ssimulacra2.mean"]) + 1)
    w.writerow(r)
for b in bad: print("  " + b)
sys.exit(1 if bad else 0)
EOF
"$bd" --metric ssimulacra2 --json a=s2.csv up=s2up.csv --plot bd.svg >bd2.json 2>err.txt ||
  fail "qmetric-bd on ssimulacra2: $(cat err.txt)"
python3 - <<'EOF' || fail "qmetric-bd on ssimulacra2 (above)"
import json, sys
d = json.load(open("bd2.json"))
m = d["tests"][0]["metrics"]["ssimulacra2"]
ok = abs(m["bd_quality"] - 1) < 1e-6 and m["bd_rate_percent"] < 0
if not ok: print("  %s" % d)
sys.exit(0 if ok else 1)
EOF
grep -q 'ssimulacra2 (score)' bd.svg || fail "qmetric-bd's chart has no SSIMULACRA2 panel"
"$qc" ref.mkv r60.mkv r150.mkv --metrics ssimulacra2,psnr --plot-metrics psnr_y,ssimulacra2 \
  --plot-rd pm.svg >pm.txt 2>err.txt || fail "--plot-metrics on a ladder: $(cat err.txt)"
[ "$(grep -c "<g id='panel-" pm.svg)" = 2 ] && grep -q 'psnr_y (dB)' pm.svg &&
  [ "$(head -1 pm.txt | awk '{print $(NF-1), $NF}')" = "psnr_y ssimulacra2" ] ||
  fail "--plot-metrics on a ladder: $(head -1 pm.txt)"
"$qc" -q ref.mkv r60.mkv r150.mkv --metrics ssimulacra2 --plot-metrics vmaf --plot-rd e.svg 2>err.txt; rc=$?
[ $rc = 2 ] && grep -q "plot-metrics: no feature or metric 'vmaf'" err.txt && [ ! -e e.svg ] ||
  fail "--plot-metrics naming a feature not scored: rc $rc, $(cat err.txt)"

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

# mixed codecs: a curve each in the legend, the group column says which;
# a manifest's [GROUP] lines and "group" (or "codec") keys name the curves
# instead; --hull draws the hull and names it
if gst-inspect-1.0 avenc_mpeg4 >/dev/null 2>&1 && gst-inspect-1.0 avdec_mpeg4 >/dev/null 2>&1; then
  for qz in 4 12; do
    gst-launch-1.0 -q $src ! $raw ! avenc_mpeg4 pass=quant quantizer=$qz ! matroskamux ! filesink location=m$qz.mkv
  done
  "$qc" -q ref.mkv r60.mkv r400.mkv m4.mkv m12.mkv --plot-rd mix.svg --hull --ladder-csv mix.csv 2>err.txt ||
    fail "mixed ladder: $(cat err.txt)"
  grep -q '>H.264</text>' mix.svg && grep -q '>MPEG-4 Video</text>' mix.svg &&
    grep -q '>upper convex hull</text>' mix.svg && grep -q "id='hull-0'" mix.svg ||
    fail "mixed ladder: the legend does not name both codecs and the hull"
  [ "$(python3 -c 'import csv; print(",".join(r["group"] for r in csv.DictReader(open("mix.csv"))))')" = \
    "H.264,H.264,MPEG-4 Video,MPEG-4 Video" ] || fail "mixed ladder: group column"
  printf '[x264 fast]\nr60.mkv\nr400.mkv\n[mpeg4]\nm4.mkv\n' >groups.txt
  printf '[{"path": "r60.mkv", "group": "x264 fast"}, {"path": "m4.mkv", "codec": "mpeg4"}]' >groups.json
  for m in groups.txt groups.json; do
    "$qc" -q ref.mkv --manifest $m --plot-rd g.svg --ladder-json g.json 2>err.txt || fail "$m: $(cat err.txt)"
    grep -q '>x264 fast</text>' g.svg && grep -q '>mpeg4</text>' g.svg && ! grep -q '>H.264</text>' g.svg ||
      fail "$m: the groups do not name the curves"
    python3 -c 'import json; g = [r["group"] for r in json.load(open("g.json"))["renditions"]]; assert g[0] == "x264 fast" and g[-1] == "mpeg4", g' ||
      fail "$m: group key"
  done
else
  echo "SKIP: avenc_mpeg4/avdec_mpeg4 missing: no mixed-codec ladder"
fi

# --fail-below applies to every rendition: exit 1, each failing one named
# with its value, the rows say which passed; all above: 0; a feature that
# is not scored: 2 and nothing written
mid=$(python3 -c 'import csv; v = sorted(float(r["vmaf.mean"]) for r in csv.DictReader(open("l.csv"))); print("%.3f" % ((v[1] + v[2]) / 2))')
"$qc" -q ref.mkv r60.mkv r150.mkv r400.mkv small=half.mkv --fail-below vmaf=$mid \
  --ladder-csv g.csv --ladder-json gj.json 2>err.txt; rc=$?
python3 - "$rc" "$mid" <<'EOF' || fail "--fail-below on a ladder (above)"
import csv, json, re, sys
rc, mid = int(sys.argv[1]), float(sys.argv[2])
err = open("err.txt").read()
rows = {r["name"]: r for r in csv.DictReader(open("g.csv"))}
want = [n for n, r in rows.items() if float(r["vmaf.mean"]) < mid]
bad = []
if rc != 1: bad.append("exit %d" % rc)
if len(want) != 2: bad.append("expected two renditions below %s: %s" % (mid, want))
for n in rows:
    line = re.search(r"^qmetric-compare: %s: vmaf mean ([0-9.]+) is below %g \(--fail-below\)$" % (n, mid), err, re.M)
    if (line is not None) != (n in want): bad.append("%s: line %s" % (n, line))
    if line and line.group(1) != rows[n]["vmaf.mean"]: bad.append("%s: value %s" % (n, line.group(1)))
    if rows[n]["passed"] != ("false" if n in want else "true"): bad.append("%s: passed %s" % (n, rows[n]["passed"]))
    if (n in want) != rows[n]["failed_gates"].startswith("vmaf.mean " + rows[n]["vmaf.mean"] + " < "):
        bad.append("%s: failed_gates %s" % (n, rows[n]["failed_gates"]))
if "--fail-below: 2 of 4 renditions fail: %s\n" % ", ".join(want) not in err: bad.append("no summary line")
j = json.load(open("gj.json"))
if j["failed"] != want or j["exit_status"] != 1: bad.append("json failed %s" % j["failed"])
for r in j["renditions"]:
    g = r["gates"][0]
    if r["passed"] != (r["name"] not in want) or g["passed"] != r["passed"] or g["threshold"] != mid or g["statistic"] != "mean":
        bad.append("json %s: %s" % (r["name"], r["gates"]))
for b in bad: print("  " + b)
if bad: print(err)
sys.exit(1 if bad else 0)
EOF
"$qc" -q ref.mkv r60.mkv r150.mkv --fail-below vmaf=1 --fail-below psnr_y.min=1 2>err.txt ||
  fail "--fail-below met by every rendition: rc $?, $(cat err.txt)"
"$qc" -q ref.mkv r60.mkv r150.mkv --fail-below nosuch=1 --ladder-csv e.csv 2>err.txt; rc=$?
[ $rc = 2 ] && grep -q "no feature 'nosuch' in the scores" err.txt && [ ! -e e.csv ] ||
  fail "--fail-below on a missing feature: rc $rc, $(cat err.txt)"

# a rendition of another frame rate pairs by index all the same: one
# warning says so, none says "running time" (the element's rule)
gst-launch-1.0 -q $src ! video/x-raw,format=I420,width=320,height=240,framerate=30/1 ! $enc bitrate=150 ! \
  matroskamux ! filesink location=r30.mkv
"$qc" -q ref.mkv r60.mkv fast=r30.mkv 2>err.txt || fail "a 30 fps rendition: $(cat err.txt)"
[ "$(grep -ci 'frame rates differ' err.txt)" = 1 ] &&
  grep -q 'frame rates differ: reference 25 fps, fast 30 fps; a ladder pairs frame N with frame N' err.txt &&
  ! grep -q 'running time' err.txt || fail "frame-rate warnings: $(cat err.txt)"

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
"$qc" -q ref.mkv r60.mkv r150.mkv --hull 2>err.txt; rc=$?
[ $rc = 2 ] && grep -q -- '--hull draws on the rate-quality chart' err.txt || fail "--hull without --plot-rd: rc $rc"
"$qc" -q ref.mkv a=r60.mkv a=r150.mkv 2>err.txt; rc=$?
[ $rc = 2 ] && grep -q "two renditions are named 'a'" err.txt || fail "duplicate names: rc $rc"

[ $fails = 0 ] && echo "ok: ladder" || echo "$fails failure(s)"
exit $((fails > 0))
