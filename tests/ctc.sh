#!/bin/bash
# libvmaf's presets in the tools: --aom_ctc and --nflx_ctc in qmetric-yuv and
# qmetric-compare.  A bad version is refused (exit status 2) with libvmaf's
# words after the tool's name; a preset run writes libvmaf's keys (vmaf,
# vmaf_neg, no option suffixes) and the aggregate_metrics apsnr_y/cb/cr, the
# same in both tools; --partial refuses a run with aggregates; -m name=
# names a score.
set -uo pipefail
qy=${QMETRIC_YUV:?set QMETRIC_YUV to build/tools/qmetric-yuv}
qc=${QMETRIC_COMPARE:?set QMETRIC_COMPARE to build/tools/qmetric-compare}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
python3 - <<'PY'
import random
random.seed(5)
w, h, n = 224, 224, 3
fs = w * h * 3 // 2
ref = bytes(random.randrange(40, 200) for _ in range(fs * n))
dis = bytes(min(255, b + random.randrange(5)) for b in ref)
open("ref.yuv", "wb").write(ref)
open("dis.yuv", "wb").write(dis)
PY
geo="--width 224 --height 224"

# bad versions: libvmaf's reason line, after the tool's name
refused() {  # tool, expected line, args...
  local tool=$1 want=$2; shift 2
  "$@" >out.txt 2>err.txt; rc=$?
  [ $rc = 2 ] || fail "$tool $*: exit $rc, expected 2"
  grep -qxF "$want" err.txt || fail "$tool $*: '$(head -1 err.txt)', expected '$want'"
}
for t in yuv compare; do
  if [ $t = yuv ]; then run=("$qy" -r ref.yuv -d dis.yuv $geo); tail=""
  else run=("$qc" ref.yuv dis.yuv --size 224x224); tail=" (see qmetric-compare --help)"; fi
  name=qmetric-$t
  refused $name "$name: bad aom_ctc version \"v8.0\"$tail" "${run[@]}" --aom_ctc v8.0
  refused $name "$name: bad aom_ctc version \"7.0\"$tail" "${run[@]}" --aom_ctc 7.0
  refused $name "$name: \`--aom_ctc proposed\` is deprecated.$tail" "${run[@]}" --aom_ctc proposed
  refused $name "$name: bad nflx_ctc version \"v2.0\"$tail" "${run[@]}" --nflx_ctc v2.0
  refused $name "$name: --nflx_ctc: one preset at a time (--aom_ctc or --nflx_ctc)$tail" \
    "${run[@]}" --aom_ctc v7.0 --nflx_ctc v1.0
done

# a preset run: keys, aggregates, both tools alike
"$qy" -r ref.yuv -d dis.yuv $geo --aom_ctc v7.0 --threads 2 -o yuv.json 2>err.txt ||
  fail "qmetric-yuv --aom_ctc v7.0: $(cat err.txt)"
"$qc" ref.yuv dis.yuv --size 224x224 --aom_ctc v7.0 --threads 2 -q -o cmp.json 2>err.txt ||
  fail "qmetric-compare --aom_ctc v7.0: $(cat err.txt)"
python3 - yuv.json cmp.json <<'PY' || fail "preset logs"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
want = {"psnr_y", "psnr_cb", "psnr_cr", "vmaf", "vmaf_neg", "float_ssim", "float_ms_ssim",
        "psnr_hvs", "psnr_hvs_y", "ciede2000", "cambi", "integer_adm2_egl_1",
        "integer_vif_scale3_egl_1", "integer_motion2", "integer_motion3"}
keys = set(a["frames"][0]["metrics"])
assert want <= keys, want - keys
assert not [k for k in keys if k.endswith("_db") or "scale_1" in k], keys
assert set(a["aggregate_metrics"]) == {"apsnr_y", "apsnr_cb", "apsnr_cr"}, a["aggregate_metrics"]
assert a["frames"][0]["metrics"]["float_ssim"] > 1, "float_ssim is not in dB"
fa = [f["metrics"] for f in a["frames"]]
fb = [f["metrics"] for f in b["frames"]]
assert fa == fb, "qmetric-yuv and qmetric-compare rows differ"
assert a["aggregate_metrics"] == b["aggregate_metrics"], (a["aggregate_metrics"], b["aggregate_metrics"])
PY
"$qy" -r ref.yuv -d dis.yuv $geo --nflx_ctc v1.0 --format xml -o nflx.xml 2>err.txt ||
  fail "qmetric-yuv --nflx_ctc v1.0: $(cat err.txt)"
grep -q '<aggregate_metrics apsnr_y="[0-9.]*" apsnr_cb="[0-9.]*" apsnr_cr="[0-9.]*" />' nflx.xml ||
  fail "nflx XML aggregates: $(grep aggregate nflx.xml)"
# a chunk cannot carry the run's aggregates
"$qy" -r ref.yuv -d dis.yuv $geo --aom_ctc v7.0 --partial part.json 2>err.txt; rc=$?
[ $rc = 2 ] && grep -q "qmetric-yuv: --partial: the run writes whole-run values (aggregate_metrics: apsnr_y" err.txt &&
  [ ! -e part.json ] || fail "--partial with a preset: exit $rc, $(cat err.txt)"
# libvmaf's --model name=: the score's key, in both tools
"$qy" -r ref.yuv -d dis.yuv $geo --metrics vmaf --model version=vmaf_v0.6.1:name=mine -o named.json 2>err.txt ||
  fail "qmetric-yuv named model: $(cat err.txt)"
"$qc" ref.yuv dis.yuv --size 224x224 --metrics vmaf -m version=vmaf_v0.6.1:name=mine -q -o cnamed.json 2>err.txt ||
  fail "qmetric-compare named model: $(cat err.txt)"
for f in named.json cnamed.json; do
  python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["frames"][0]["metrics"]; assert "mine" in m and "vmaf" not in m, m' $f ||
    fail "$f: the score is not keyed 'mine'"
done
[ $fails = 0 ] && echo "ok"
exit $((fails > 0))
