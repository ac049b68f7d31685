#!/bin/bash
# Run the example pipelines on short inputs so that they cannot rot.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
for e in x264enc avdec_h264 mp4mux y4menc videobalance; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || { echo "SKIP: GStreamer element $e is not installed"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

# encoder loop: 8 frames, must end with a summary of 8 frames
LOG=$tmp/loop.json "$root/examples/pipelines/encode-loop.sh" 8 600 metrics=psnr >out.txt
grep -q 'qmetric-summary, frames=(guint64)8' out.txt || { cat out.txt; echo "encode-loop: no summary of 8 frames"; exit 1; }
python3 -c "import json,sys; d=json.load(open('$tmp/loop.json')); assert len(d['frames'])==8, d"

# compare two raw files made here
gst-launch-1.0 -q videotestsrc num-buffers=6 pattern=ball ! video/x-raw,format=I420,width=96,height=64 ! filesink location=ref.yuv
gst-launch-1.0 -q videotestsrc num-buffers=6 pattern=ball ! video/x-raw,format=I420,width=96,height=64 ! videobalance brightness=0.05 ! filesink location=dis.yuv
WIDTH=96 HEIGHT=64 FORMAT=I420 LOG=$tmp/cf.json "$root/examples/pipelines/compare-files.sh" ref.yuv dis.yuv metrics=psnr >out2.txt
grep -q 'frames=(guint64)6' out2.txt || { cat out2.txt; echo "compare-files: no summary of 6 frames"; exit 1; }

# encoded files through decodebin
gst-launch-1.0 -q videotestsrc num-buffers=6 pattern=ball ! video/x-raw,format=I420,width=96,height=64,framerate=24/1 ! x264enc ! mp4mux ! filesink location=dis.mp4
gst-launch-1.0 -q videotestsrc num-buffers=6 pattern=ball ! video/x-raw,format=I420,width=96,height=64,framerate=24/1 ! y4menc ! filesink location=ref.y4m
LOG=$tmp/cf2.json "$root/examples/pipelines/compare-files.sh" ref.y4m dis.mp4 metrics=psnr >out3.txt
grep -q 'frames=(guint64)6' out3.txt || { cat out3.txt; echo "compare-files (mp4 vs y4m): no summary of 6 frames"; exit 1; }
echo "examples: ok"
