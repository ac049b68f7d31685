#!/bin/bash
# qmetric-yuv on raw files: mapped regular files and pipes (read into a
# ring) give the same scores; a truncated last frame is reported and left
# out; --frames stops early.
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
"$qy" -r ref.yuv -d trunc.yuv $args -o trunc.json 2>err3.txt || fail "truncated run: $(cat err3.txt)"
grep -q "truncated frame 7 ignored" err3.txt || fail "no truncation warning: $(cat err3.txt)"
[ "$(python3 -c 'import json; print(len(json.load(open("trunc.json"))["frames"]))')" = 7 ] || fail "truncated: not 7 frames"
"$qy" -r <(cat ref.yuv) -d trunc.yuv $args -o mixed.json 2>err4.txt || fail "mixed run: $(cat err4.txt)"
grep -q "truncated frame 7 ignored" err4.txt || fail "mixed: no truncation warning"
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
