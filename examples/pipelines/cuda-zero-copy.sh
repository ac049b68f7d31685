#!/bin/bash
# Compare two H.264 files decoded on the GPU, without copying a frame to
# system memory: nvh264dec hands CUDA memory straight to qmetric, which scores
# it in place with its CUDA backend (sharing the decoders' CUDA context).
#
#   examples/pipelines/cuda-zero-copy.sh [REF.mp4 DIST.mp4] [extra qmetric properties...]
#
# Without files it encodes a 1080p test clip twice (high and low bitrate).
#
# When this applies:
#  - both inputs are H.264 that NVDEC decodes (nvh265dec, nvav1dec, ... work
#    the same way: change the decoder), on one GPU;
#  - they have the same size and format: there is no CUDA videoconvert or
#    videoscale in front of qmetric here (cudaconvert/cudascale can be added);
#  - qmetric was built with its CUDA backend (meson -Dcuda=enabled) and the
#    chosen metrics have CUDA versions (metrics without one run on the CPU
#    from a downloaded copy; the element says so at info level).
# What it saves: for 1080p 8-bit 4:2:0, 3 MB per frame and pad of GPU->CPU
# download in the decoder plus the CPU->GPU upload of the CUDA backend.  On a
# machine without NVIDIA GPU or without nvh264dec it exits 77 (skip).
set -euo pipefail
. "$(dirname "$0")/env.sh"

if ! gst-inspect-1.0 nvh264dec >/dev/null 2>&1; then
  echo "cuda-zero-copy: nvh264dec is not available (it needs an NVIDIA GPU with its" \
       "driver and gst-plugins-bad's nvcodec plugin): nothing to show here" >&2
  exit 77
fi
# (not `gst-inspect | grep -q`: with pipefail, grep's early exit fails the pipe)
inspect=$(gst-inspect-1.0 qmetric 2>/dev/null || true)
if [[ $inspect != *memory:CUDAMemory* ]]; then
  echo "cuda-zero-copy: this qmetric build has no CUDA memory support (build with" \
       "meson -Dcuda=enabled and gst-plugins-bad's CUDA library)" >&2
  exit 77
fi

if [ $# -ge 2 ] && [ -f "$1" ] && [ -f "$2" ]; then
  ref=$1 dist=$2
  shift 2
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  ref=$tmp/ref.mp4 dist=$tmp/dist.mp4
  for pair in "$ref:40000" "$dist:1500"; do
    gst-launch-1.0 -q videotestsrc num-buffers="${FRAMES:-120}" pattern=zone-plate kx2=20 ky2=20 kt=1 ! \
      video/x-raw,format=I420,width=1920,height=1080,framerate=30/1 ! \
      x264enc bitrate="${pair##*:}" speed-preset=veryfast ! video/x-h264,profile=high ! h264parse ! mp4mux ! filesink location="${pair%%:*}"
  done
fi

# mp4 input (for mkv/ts use matroskademux/tsdemux); NVDEC decodes 4:2:0
# H.264 (profile high and below), not x264's 4:4:4 profiles
cuda="video/x-raw(memory:CUDAMemory)"
gst-launch-1.0 -m \
  qmetric name=q backend=cuda metrics=vmaf,psnr log-location="${LOG:-qmetric-cuda.json}" "$@" ! fakesink \
  filesrc location="$ref" ! qtdemux ! h264parse ! nvh264dec ! "$cuda" ! queue ! q.ref_sink \
  filesrc location="$dist" ! qtdemux ! h264parse ! nvh264dec ! "$cuda" ! queue ! q.dist_sink \
  | grep -E 'qmetric-summary|ERROR|WARNING' | sed 's/;/;\n/g'
echo "per-frame log: ${LOG:-qmetric-cuda.json}"
