#!/bin/bash
# qmetric-compare with NVDEC's decoders and the CUDA backend: the decoded
# pictures stay in CUDA memory from the decoder to the element.  Asserts:
# a pair and a ladder read every buffer in place (the JSON summary's
# cuda_buffers: 2 per pair, none copied), but for a rendition scaled (its
# pictures scaled in system memory, its reference in place); their per-frame logs
# equal a run on the same pictures given as Y4M files (host memory, read by
# the same backend); --backend cpu asks for system memory (no CUDA buffer
# reaches the element).  SKIP (77) without nvh264dec (no NVIDIA GPU or no
# nvcodec plugin) or without CUDA memory support in the element.
set -uo pipefail
qc=${QMETRIC_COMPARE:?set QMETRIC_COMPARE to build/tools/qmetric-compare}
for e in x264enc mp4mux y4menc nvh264dec; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 ||
    { echo "SKIP: GStreamer element $e is not available (nvh264dec needs an NVIDIA GPU and the nvcodec plugin)"; exit 77; }
done
inspect=$(gst-inspect-1.0 qmetric 2>/dev/null || true)
[[ $inspect == *memory:CUDAMemory* ]] ||
  { echo "SKIP: this qmetric build has no CUDA memory support (meson -Dcuda=enabled)"; exit 77; }
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

frames=24
src="videotestsrc pattern=zone-plate kx2=20 ky2=20 kt=1 num-buffers=$frames"
raw="video/x-raw,format=I420,width=640,height=360,framerate=24/1"
for b in ref:8000 d1:300 d2:900; do
  gst-launch-1.0 -q $src ! $raw ! x264enc speed-preset=ultrafast bitrate=${b#*:} ! \
    video/x-h264,profile=high ! h264parse ! mp4mux ! filesink location=${b%%:*}.mp4 ||
    { echo "FAIL: cannot encode ${b%%:*}.mp4"; exit 1; }
done
gst-launch-1.0 -q $src ! $raw ! videoscale ! video/x-raw,width=320,height=180 ! \
  x264enc speed-preset=ultrafast bitrate=300 ! video/x-h264,profile=high ! h264parse ! \
  mp4mux ! filesink location=half.mp4 || { echo "FAIL: cannot encode half.mp4"; exit 1; }

# cuda_buffers of each element in a summary: "in_place copied" a line
buffers() {
  $py -c '
import json, sys
s = json.load(open(sys.argv[1]))
for e in s.get("renditions", [s]):
    b = e["cuda_buffers"]
    print(e["backend"], b["in_place"], b["copied"])' "$1" 2>/dev/null
}

# a pair
"$qc" ref.mp4 d1.mp4 --backend cuda --metrics vmaf,psnr -o pair.json --summary json -q \
  >pair-sum.json 2>err.txt || { fail "pair run exited $?"; cat err.txt; }
got=$(buffers pair-sum.json)
[ "$got" = "cuda $((2 * frames)) 0" ] ||
  fail "pair: backend, buffers read in place and copied are '$got', not 'cuda $((2 * frames)) 0'"

# a ladder: the reference shared by the elements through the tee; the
# half-size rendition is scaled in system memory, its reference read in
# place (a build without libswscale cannot scale: that rendition is left out)
half=half.mp4 want="cuda $((2 * frames)) 0 cuda $((2 * frames)) 0 cuda $frames 0 "
# (not `"$qc" ... | grep -q`: with pipefail the usage error's status wins)
scaler=$("$qc" --scaler bicubic 2>&1)
if [[ $scaler == *"without libswscale"* ]]; then
  echo "note: qmetric-compare was built without libswscale: no scaled rendition"
  half= want="cuda $((2 * frames)) 0 cuda $((2 * frames)) 0 "
fi
"$qc" ref.mp4 d1.mp4 d2.mp4 $half --backend cuda --metrics vmaf,psnr -o logs/ \
  --summary json -q >ladder-sum.json 2>err.txt || { fail "ladder run exited $?"; cat err.txt; }
got=$(buffers ladder-sum.json | tr '\n' ' ')
[ "$got" = "$want" ] || fail "ladder: backend, buffers read in place and copied are '$got', not '$want'"

# the same pictures from host memory: NVDEC's output downloaded to Y4M
# (through NV12 and back: y4menc writes a decoder's padded planes as they
# are, videoconvert's own buffers have none; both steps only repack)
for f in ref d1; do
  gst-launch-1.0 -q filesrc location=$f.mp4 ! qtdemux ! h264parse ! nvh264dec ! \
    videoconvert ! video/x-raw,format=NV12 ! videoconvert ! video/x-raw,format=I420 ! \
    y4menc ! filesink location=$f.y4m ||
    fail "cannot decode $f.mp4 to Y4M"
done
"$qc" ref.y4m d1.y4m --backend cuda --metrics vmaf,psnr -o host.json --summary json -q \
  >host-sum.json 2>err.txt || { fail "host run exited $?"; cat err.txt; }
got=$(buffers host-sum.json)
[ "$got" = "cuda 0 0" ] || fail "Y4M run: buffers are '$got', not 'cuda 0 0'"
# every frame's every score, in the pair's log and each ladder log of d1
for log in pair.json logs/d1.json; do
  $py -c '
import json, sys
a, b = (json.load(open(p))["frames"] for p in sys.argv[1:3])
if len(a) != len(b) or len(a) != int(sys.argv[3]):
    sys.exit("%s: %d frames, the Y4M run %d" % (sys.argv[1], len(a), len(b)))
for x, y in zip(a, b):
    if x["metrics"] != y["metrics"]:
        d = {k: (x["metrics"][k], y["metrics"].get(k)) for k in x["metrics"] if x["metrics"][k] != y["metrics"].get(k)}
        sys.exit("%s: frame %d differs from the Y4M run: %s" % (sys.argv[1], x["frameNum"], d))' \
    "$log" host.json "$frames" || fail "$log: scores from CUDA memory differ from host memory"
done

# --backend cpu: the decoders deliver system memory
"$qc" ref.mp4 d1.mp4 --backend cpu --metrics psnr --summary json -q >cpu-sum.json 2>err.txt ||
  { fail "cpu run exited $?"; cat err.txt; }
got=$(buffers cpu-sum.json)
[ "$got" = "cpu 0 0" ] || fail "--backend cpu: buffers are '$got', not 'cpu 0 0'"

[ $fails = 0 ] && echo "compare-cuda: pair and ladder read $((2 * frames)) buffers an element in place; scores equal host memory's"
exit $((fails > 0))
