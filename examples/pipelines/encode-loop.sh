#!/bin/bash
# Encoder QoS loop: a test source goes straight to the reference pad and,
# through x264 and back through a decoder, to the distorted pad.  Every
# frame's scores are printed as they come (-m); the summary comes at EOS and
# the full per-frame log lands in ${LOG:-qmetric-encode-loop.json}.
#
#   examples/pipelines/encode-loop.sh [FRAMES] [BITRATE_KBPS] [extra qmetric properties...]
#   e.g. encode-loop.sh 300 500 metrics=vmaf,psnr threads=2
set -euo pipefail
. "$(dirname "$0")/env.sh"
frames=${1:-120}
bitrate=${2:-800}
shift $(( $# > 2 ? 2 : $# ))
log=${LOG:-qmetric-encode-loop.json}
gst-launch-1.0 -m \
  qmetric name=q log-location="$log" "$@" ! fakesink \
  videotestsrc num-buffers="$frames" pattern=zone-plate kx2=20 ky2=20 kt=1 ! \
    video/x-raw,format=I420,width=640,height=360,framerate=30/1 ! tee name=t \
  t. ! queue max-size-buffers=0 max-size-time=0 max-size-bytes=0 ! q.ref_sink \
  t. ! queue ! x264enc bitrate="$bitrate" speed-preset=veryfast tune=zerolatency ! \
    avdec_h264 ! video/x-raw,format=I420 ! q.dist_sink \
  | grep --line-buffered -E 'element "q"|ERROR|WARNING'
echo "per-frame log: $log"
