#!/bin/bash
# qmetric-yuv on raw files: mapped regular files and pipes (read into a
# ring) give the same scores; --frames stops early.  What is not raw frames
# is refused with exit status 2: a last frame cut short (unless
# --allow-cut-tail, which scores the whole frames), a size that is not
# whole frames of the options' geometry, container and stream signatures,
# empty inputs, no frame to score; no output may be an input.  Without
# --metrics the default set is scored.
set -uo pipefail
qy=${QMETRIC_YUV:?set QMETRIC_YUV to build/tools/qmetric-yuv}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
python3 - <<'PY'
import random
random.seed(3)
w, h, n = 64, 48, 12
fs = w * h * 3 // 2
ref = bytes(random.randrange(256) for _ in range(fs * n))
dis = bytes(min(255, b + random.randrange(3)) for b in ref)
open("ref.yuv", "wb").write(ref)
open("dis.yuv", "wb").write(dis)
open("trunc.yuv", "wb").write(dis[:fs * 7 + 100])
PY
args="--width 64 --height 48 --metrics psnr,float_ssim,vmaf --threads 2"
scores() { python3 -c 'import json,sys; print(json.dumps([f["metrics"] for f in json.load(open(sys.argv[1]))["frames"]]))' "$1"; }
"$qy" -r ref.yuv -d dis.yuv $args -o mapped.json 2>err1.txt || fail "mapped run: $(cat err1.txt)"
"$qy" -r <(cat ref.yuv) -d <(cat dis.yuv) $args -o piped.json 2>err2.txt || fail "piped run: $(cat err2.txt)"
[ "$(scores mapped.json)" = "$(scores piped.json)" ] || fail "mapped and piped inputs differ"
[ "$(python3 -c 'import json; print(len(json.load(open("mapped.json"))["frames"]))')" = 12 ] || fail "not 12 frames"
# a last frame cut short: refused, unless --allow-cut-tail (a file read
# in place, and a pipe, whose size is known at its end only)
cut_msg="trunc.yuv: 32356 bytes is not a whole number of frames of 4608 bytes (64x48, pixel format 420, 8-bit): 100 bytes left over"
"$qy" -r ref.yuv -d trunc.yuv $args -o trunc.json 2>err3.txt; rc=$?
[ $rc = 2 ] && grep -qF "qmetric-yuv: $cut_msg; check --width/--height/--pixel_format/--bitdepth (--allow-cut-tail scores the whole frames)" err3.txt ||
  fail "cut tail: exit $rc, $(cat err3.txt)"
"$qy" -r ref.yuv -d trunc.yuv $args --allow-cut-tail -o trunc.json 2>err3.txt || fail "--allow-cut-tail run: $(cat err3.txt)"
grep -qF "qmetric-yuv: warning: $cut_msg; the last frame, cut short, is left out" err3.txt || fail "no cut tail warning: $(cat err3.txt)"
[ "$(python3 -c 'import json; print(len(json.load(open("trunc.json"))["frames"]))')" = 7 ] || fail "cut tail: not 7 frames"
"$qy" -r <(cat ref.yuv) -d <(cat trunc.yuv) $args -o piped_cut.json 2>err4.txt; rc=$?
[ $rc = 2 ] && grep -qF "32356 bytes is not a whole number of frames of 4608 bytes" err4.txt || fail "piped cut tail: exit $rc, $(cat err4.txt)"
"$qy" -r <(cat ref.yuv) -d <(cat trunc.yuv) $args --allow-cut-tail -o mixed.json 2>err4.txt || fail "piped --allow-cut-tail: $(cat err4.txt)"
[ "$(scores mixed.json)" = "$(scores trunc.json)" ] || fail "piped cut tail: other scores than the file's"
# 960x540 4:2:0 files read as 960x544: not whole frames, refused
python3 -c 'open("w540.yuv", "wb").write(bytes(960 * 540 * 3 // 2 * 3))'
"$qy" -r w540.yuv -d w540.yuv --width 960 --height 544 --metrics psnr 2>err7.txt; rc=$?
[ $rc = 2 ] && grep -qF "w540.yuv: 2332800 bytes is not a whole number of frames of 783360 bytes (960x544, pixel format 420, 8-bit): 766080 bytes left over" err7.txt ||
  fail "960x544 on 540-line files: exit $rc, $(cat err7.txt)"
"$qy" -r w540.yuv -d w540.yuv --width 960 --height 540 --metrics psnr -o w540.json 2>/dev/null || fail "960x540 run"
# containers and elementary streams are refused, as files and as pipes
# (their sizes made whole frames, so that the signature is what is seen)
python3 - <<'PY'
import random
random.seed(9)
fs = 64 * 48 * 3 // 2
def write(name, head):
    body = bytearray(random.randrange(256) for _ in range(2 * fs))
    body[:len(head)] = head
    open(name, "wb").write(body)
write("mp4.yuv", b"\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41")
write("mkv.yuv", b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01")
ts = bytearray()
for k in range(40):
    ts += (b"\x47\x40\x00\x10" if k == 0 else b"\x47\x01\x00\x31") + bytes(184)
write("ts.yuv", ts)
write("y4m.yuv", b"YUV4MPEG2 W64 H48 F25:1 Ip A1:1 C420jpeg\nFRAME\n")
write("ivf.yuv", b"DKIF\x00\x00\x20\x00VP90\x40\x00\x30\x00")
write("h264.yuv", b"\x00\x00\x00\x01\x09\xf0\x00\x00\x00\x01\x67\x64\x00\x1f")
write("hevc.yuv", b"\x00\x00\x00\x01\x40\x01\x0c\x01\xff\xff\x00\x00\x01\x42\x01")
PY
for c in mp4:MP4/MOV mkv:Matroska/WebM ts:MPEG-TS y4m:Y4M ivf:IVF h264:H.264/HEVC hevc:H.264/HEVC; do
  f=${c%%:*}.yuv
  "$qy" -r ref.yuv -d "$f" $args 2>err8.txt >/dev/null; rc=$?
  [ $rc = 2 ] && grep -qF "qmetric-yuv: $f is " err8.txt && grep -qF "${c#*:}" err8.txt &&
    grep -qF "not raw planar frames: decode it with qmetric-compare" err8.txt || fail "$f: exit $rc, $(cat err8.txt)"
done
"$qy" -r <(cat mp4.yuv) -d dis.yuv $args 2>err8.txt >/dev/null; rc=$?
[ $rc = 2 ] && grep -qF "MP4/MOV" err8.txt || fail "MP4 through a pipe: exit $rc, $(cat err8.txt)"
# empty inputs and nothing to score: exit 2, no empty log
: >empty.yuv
"$qy" -r ref.yuv -d empty.yuv $args -o empty.json 2>err9.txt; rc=$?
[ $rc = 2 ] && grep -qF "empty.yuv is empty: no frames to score" err9.txt || fail "empty file: exit $rc, $(cat err9.txt)"
"$qy" -r ref.yuv -d <(:) $args -o empty.json 2>err9.txt; rc=$?
[ $rc = 2 ] && grep -qF "is empty: no frames to score" err9.txt || fail "empty pipe: exit $rc, $(cat err9.txt)"
"$qy" -r ref.yuv -d dis.yuv $args --start 12 -o none.json 2>err9.txt; rc=$?
[ $rc = 2 ] && grep -qF "no frames scored: --start 12 is at or past the end of the input (12 frames)" err9.txt ||
  fail "--start at the end: exit $rc, $(cat err9.txt)"
# the default metrics: VMAF, PSNR, SSIM (docs/metrics.md), as --metrics vmaf,psnr,float_ssim
"$qy" -r ref.yuv -d dis.yuv --width 64 --height 48 --frames 3 -o default.json 2>/dev/null || fail "default run"
"$qy" -r ref.yuv -d dis.yuv --width 64 --height 48 --frames 3 --metrics vmaf,psnr,float_ssim -o named.json 2>/dev/null || fail "named run"
[ "$(scores default.json)" = "$(scores named.json)" ] || fail "the default metrics are not vmaf,psnr,float_ssim"
python3 -c 'import json,sys; k=json.load(open("default.json"))["frames"][0]["metrics"]; sys.exit(not ({"vmaf","psnr_y","float_ssim"} <= set(k) and "cambi" not in k and "ciede2000" not in k))' ||
  fail "default metrics: $(python3 -c 'import json; print(list(json.load(open("default.json"))["frames"][0]["metrics"]))')"
# no output may be an input: the same name, a symbolic link, a hard link;
# the input is left as it was
cp ref.yuv ref_keep.yuv
ln -s dis.yuv dis_link.json
ln ref.yuv ref_hard.json
for o in "-o ref.yuv:ref.yuv" "-o dis_link.json:dis.yuv" "--partial ref_hard.json:ref.yuv" "--partial dis.yuv:dis.yuv"; do
  set -- ${o%%:*}
  "$qy" -r ref.yuv -d dis.yuv $args "$@" 2>err10.txt; rc=$?
  [ $rc = 2 ] && grep -qF "qmetric-yuv: $1 $2 is the input ${o#*:} (the same file): it would be overwritten" err10.txt ||
    fail "$1 $2 over an input: exit $rc, $(cat err10.txt)"
done
cmp -s ref.yuv ref_keep.yuv || fail "an input was written over"
"$qy" -r ref.yuv -d dis.yuv $args --frames 5 -o five.json 2>/dev/null || fail "--frames run"
[ "$(python3 -c 'import json; print(len(json.load(open("five.json"))["frames"]))')" = 5 ] || fail "--frames 5: not 5 frames"
[ "$(scores five.json)" = "$(python3 -c 'import json; print(json.dumps([f["metrics"] for f in json.load(open("mapped.json"))["frames"][:5]]))')" ] \
  || fail "--frames 5: scores differ from the first 5 of the whole run"
# a log that cannot be written is exit status 2 with a line naming it (a
# file that cannot take the log's header is refused before any frame)
"$qy" -r ref.yuv -d dis.yuv $args --frames 2 -o /dev/full 2>err5.txt; rc=$?
[ $rc = 2 ] && grep -q '^qmetric-yuv: cannot write log file "/dev/full": No space left on device$' err5.txt ||
  fail "log on /dev/full: exit $rc, $(cat err5.txt)"
"$qy" -r ref.yuv -d dis.yuv $args --frames 2 >/dev/full 2>err6.txt; rc=$?
[ $rc = 2 ] && grep -q '^qmetric-yuv: cannot write log file "/dev/stdout": No space left on device$' err6.txt ||
  fail "log on stdout=/dev/full: exit $rc, $(cat err6.txt)"
[ $fails = 0 ] && echo "qmetric-yuv: all checks passed"
exit $((fails > 0))
