#!/bin/bash
# Run the examples on short inputs so that they cannot rot.
#
#   tests/examples.sh pipelines|live-udp|cuda-zero-copy|app|python
#
# One example per call, so that each reports its own result; an example whose
# elements (or GPU, or Python bindings) are missing reports SKIP (77).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-pipelines}
need() {
  for e in "$@"; do
    gst-inspect-1.0 "$e" >/dev/null 2>&1 || { echo "SKIP: GStreamer element $e is not installed"; exit 77; }
  done
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

case $what in
pipelines)
  need x264enc avdec_h264 mp4mux y4menc videobalance
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
  ;;

live-udp)
  # 45 live frames over RTP on 127.0.0.1: per-frame messages as they come,
  # then the summary.  The first frames may miss the latency while x264
  # starts on a busy machine; most must be compared.
  rc=0
  "$root/examples/pipelines/live-udp.sh" 45 500 >out.txt 2>&1 || rc=$?
  [ $rc = 77 ] && { cat out.txt; exit 77; }
  [ $rc = 0 ] || { cat out.txt; echo "live-udp: exit status $rc"; exit 1; }
  n=$(grep -c 'qmetric, index=' out.txt || true)
  scored=$(sed -n 's/.*qmetric-summary, frames=(guint64)\([0-9]*\).*/\1/p' out.txt)
  [ -n "$scored" ] || { cat out.txt; echo "live-udp: no summary"; exit 1; }
  [ "$n" = "$scored" ] && [ "$scored" -ge 30 ] || { cat out.txt; echo "live-udp: $n messages, $scored scored of 45"; exit 1; }
  echo "live-udp: $scored of 45 frames compared"
  ;;

cuda-zero-copy)
  # exits 77 by itself without nvh264dec (no NVIDIA GPU) or without CUDA in qmetric
  rc=0
  FRAMES=10 LOG=$tmp/cuda.json "$root/examples/pipelines/cuda-zero-copy.sh" >out.txt 2>&1 || rc=$?
  cat out.txt
  [ $rc = 0 ] || exit $rc
  grep -q 'qmetric-summary, frames=(guint64)10' out.txt || { echo "cuda-zero-copy: no summary of 10 frames"; exit 1; }
  # every buffer read in place: a silent fallback to copying through system
  # memory (another CUDA context, a CPU metric) must fail this test
  grep -q 'cuda-in-place=(guint64)20, cuda-copied=(guint64)0' out.txt ||
    { echo "cuda-zero-copy: not every frame was read in place"; grep -o 'cuda-[a-z-]*=(guint64)[0-9]*' out.txt; exit 1; }
  ;;

app)
  need x264enc avdec_h264
  [ -x "${QMETRIC_MONITOR:-}" ] || { echo "SKIP: the example application is not built"; exit 77; }
  # PSNR drops under 30 dB once the bitrate is cut: one alert, and every
  # scored frame seen both as a message and as a meta
  "$QMETRIC_MONITOR" --feature psnr_y --below 30 --frames 5 --num-buffers 90 --drop-at 30 >out.txt
  cat out.txt
  grep -q '^ALERT: psnr_y below 30 for 5 frames' out.txt || { echo "app: no alert"; exit 1; }
  grep -q '^frames: 90 messages, 90 metas;' out.txt || { echo "app: messages and metas differ"; exit 1; }
  ;;

python)
  need x264enc avdec_h264
  # the first Python that has GStreamer's bindings (pyenv shims often do not)
  py=
  for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null && "$p" -c 'import gi; gi.require_version("Gst", "1.0"); from gi.repository import Gst' 2>/dev/null; then
      py=$p; break
    fi
  done
  [ -n "$py" ] || { echo "SKIP: no python3 with PyGObject and Gst (apt-get install python3-gi gir1.2-gstreamer-1.0)"; exit 77; }
  "$py" "$root/examples/python/qmetric_monitor.py" --feature psnr_y --below 30 --frames 5 --num-buffers 90 --drop-at 30 >out.txt
  cat out.txt
  grep -q '^ALERT: psnr_y below 30 for 5 frames' out.txt || { echo "python: no alert"; exit 1; }
  grep -q '^frames: 90 messages, 90 tags;' out.txt || { echo "python: messages and tags differ"; exit 1; }
  ;;

*)
  echo "usage: $0 pipelines|live-udp|cuda-zero-copy|app|python" >&2
  exit 2
  ;;
esac
echo "examples/$what: ok"
