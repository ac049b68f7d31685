#!/bin/bash
# qmetric-compare --scale against the FFmpeg workflow: a 191x107 rendition
# (190x106 at 10 bits) scored against its 320x180 source with --scale
# --scaler K gives exactly the per-frame and pooled values of the same
# comparison on the rendition scaled by Debian's ffmpeg (-vf
# scale=320:180:flags=K), for bicubic (the default), lanczos and bilinear,
# 8- and 10-bit, and an H.264 rendition decoded by libavcodec on both sides;
# a ladder scales the same way and names its scaler; --scale=METHOD
# spellings (videoscale's names refused with the list).  SKIP (77) without
# ffmpeg.
set -uo pipefail
qc=${QMETRIC_COMPARE:?set QMETRIC_COMPARE to build/tools/qmetric-compare}
command -v ffmpeg >/dev/null || { echo "SKIP: ffmpeg is not installed (scripts/install-deps.sh)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ff() { ffmpeg -v error -nostdin -y "$@" || fail "ffmpeg $*"; }

# a source with detail, and a noisy rendition of another (odd) size
ff -f lavfi -i "testsrc2=size=320x180:rate=25,noise=alls=20:allf=t" -frames 8 -pix_fmt yuv420p ref.y4m
ff -i ref.y4m -vf "scale=191:107:flags=area,noise=alls=12:allf=t" small.y4m
ff -i ref.y4m -vf format=yuv420p10le -strict -1 ref10.y4m
# (even: Debian's ffmpeg 5.1 writes 10-bit Y4M frames of odd sizes short)
ff -i ref.y4m -vf "scale=190:106:flags=area,noise=alls=12:allf=t,format=yuv420p10le" -strict -1 small10.y4m

# same OUT_A OUT_B what: every frame's metrics and every pooled value equal
same() {
  /usr/bin/python3 - "$1" "$2" <<'EOF' || fail "$3: scores differ (above)"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
fa, fb = a["frames"], b["frames"]
assert len(fa) == len(fb) == 8, (len(fa), len(fb))
for x, y in zip(fa, fb):
    assert x["metrics"] == y["metrics"], (x["frameNum"], x["metrics"], y["metrics"])
assert a["pooled_metrics"] == b["pooled_metrics"], (a["pooled_metrics"], b["pooled_metrics"])
assert "vmaf" in a["pooled_metrics"] and "psnr_y" in a["pooled_metrics"]
EOF
}

# run EXPECTED_STATUS args...: stdout in out.txt, stderr in err.txt
run() {
  local want=$1; shift
  "$qc" -q "$@" >out.txt 2>err.txt
  local rc=$?
  [ "$rc" = "$want" ] || { fail "qmetric-compare $* exited $rc, expected $want"; sed 's/^/  | /' out.txt err.txt; return 1; }
}

m="--metrics vmaf,psnr"
for k in bicubic lanczos bilinear; do
  ff -i small.y4m -vf scale=320:180:flags=$k ff-$k.y4m
  run 0 ref.y4m ff-$k.y4m $m -o want-$k.json
  run 0 ref.y4m small.y4m $m --scale --scaler $k -o got-$k.json --summary json &&
    same want-$k.json got-$k.json "8-bit $k" &&
    /usr/bin/python3 -c "import json,sys; d=json.load(open('out.txt')); sys.exit(d['distorted'].get('scaled') != '$k')" ||
    fail "8-bit $k: the summary does not name the scaler"
done
# --scale alone is bicubic; --scale=K is --scaler K
run 0 ref.y4m small.y4m $m --scale -o plain.json && same want-bicubic.json plain.json "--scale (bicubic)"
run 0 ref.y4m small.y4m $m --scale=lanczos -o eq.json && same want-lanczos.json eq.json "--scale=lanczos"
for k in bicubic lanczos; do
  ff -i small10.y4m -vf scale=320:180:flags=$k -strict -1 ff10-$k.y4m
  run 0 ref10.y4m ff10-$k.y4m $m -o want10-$k.json
  run 0 ref10.y4m small10.y4m $m --scaler $k -o got10-$k.json && same want10-$k.json got10-$k.json "10-bit $k"
done

# an encoded rendition: both decode it with libavcodec (avdec_h264, ffmpeg)
ffmpeg -hide_banner -encoders >encoders.txt 2>&1
if gst-inspect-1.0 avdec_h264 >/dev/null 2>&1 && grep -q libx264 encoders.txt; then
  ff -i ref.y4m -vf scale=190:106:flags=area -c:v libx264 -preset ultrafast -crf 30 small.mp4
  ff -i small.mp4 -vf scale=320:180 ff-mp4.y4m
  run 0 ref.y4m ff-mp4.y4m $m -o want-mp4.json
  run 0 ref.y4m small.mp4 $m --scale -o got-mp4.json && same want-mp4.json got-mp4.json "H.264 rendition"
fi

# a ladder scales its renditions the same way and says with what
for k in bicubic lanczos; do
  run 0 ref.y4m small=small.y4m ffmpeg=ff-$k.y4m $m --scaler $k --ladder-json l-$k.json &&
  /usr/bin/python3 - l-$k.json $k <<'EOF' || fail "ladder with --scaler $k (above)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["scale_method"] == sys.argv[2], d["scale_method"]
r = {x["name"]: x for x in d["renditions"]}
assert r["small"]["scaled"] and not r["ffmpeg"]["scaled"]
keys = [k for k in r["small"] if k.startswith(("vmaf", "psnr"))]
assert keys, r["small"]
for k in keys:
    assert r["small"][k] == r["ffmpeg"][k], (k, r["small"][k], r["ffmpeg"][k])
EOF
done

# spellings: videoscale's names that libswscale lacks are refused with the list
run 2 ref.y4m small.y4m --scale=catrom && grep -q "^qmetric-compare: --scale: 'catrom' is not a libswscale scaler (one of: .*bicubic.*lanczos" err.txt ||
  fail "--scale=catrom: $(cat err.txt)"
run 2 ref.y4m small.y4m --scaler bicubic+lanczos && grep -q "names more than one scaler" err.txt ||
  fail "--scaler bicubic+lanczos: $(cat err.txt)"
run 2 ref.y4m small.y4m --metrics psnr && grep -q "add --scale" err.txt || fail "sizes differ without --scale"

[ $fails = 0 ] && echo "scale: all checks passed"
exit $((fails > 0))
