#!/bin/bash
# Live quality probe of an RTP/H.264 link, on this machine only (127.0.0.1).
#
#   examples/pipelines/live-udp.sh [FRAMES] [BITRATE_KBPS] [extra qmetric properties...]
#   e.g. live-udp.sh 600 300 metrics=vmaf,psnr
#
# One gst-launch-1.0 holds both ends of the link:
#   sender:    videotestsrc ! tee ! x264enc ! rtph264pay ! udpsink host=127.0.0.1
#   receiver:  udpsrc ! rtpjitterbuffer ! rtph264depay ! avdec_h264 ! qmetric.dist_sink
#   reference: the same tee ! qmetric.ref_sink
# and every frame's scores are printed as they come.  It stops after FRAMES
# frames (and after a time limit, should the link lose the end of stream).
#
# Why it pairs: qmetric pairs frames by running time.  The payloader writes
# the capture time into the RTP timestamps and rtpjitterbuffer (default mode
# "slave") turns them back into the sender's running time, so a received frame
# lands within a millisecond of its reference.  qmetric's `latency` (ns) is
# how long a reference frame waits for its partner: it must cover encoding,
# the network and the jitterbuffer (here 50 ms) with some margin.  Frames that
# miss it are counted as unmatched in the summary, not compared.
#
# Across two machines, run the sender part on one and the receiver on the
# other; the reference must then come from the same source with timestamps
# the receiver can line up (RTCP sender reports, rtpbin ntp-sync=true), which
# is beyond this example.
set -euo pipefail
. "$(dirname "$0")/env.sh"
frames=${1:-300}
bitrate=${2:-500}
shift $(( $# > 2 ? 2 : $# ))
# a port of our own, so that two runs (or two test jobs) do not meet
port=${PORT:-$(( 20000 + ($$ % 20000) * 2 ))}
fps=30
limit=$(( frames / fps + 30 ))

for e in x264enc rtph264pay udpsink udpsrc rtpjitterbuffer rtph264depay avdec_h264; do
  gst-inspect-1.0 "$e" >/dev/null 2>&1 || { echo "live-udp: GStreamer element $e is not installed" >&2; exit 77; }
done

rtp_caps="application/x-rtp,media=video,clock-rate=90000,encoding-name=H264,payload=96"
timeout "$limit" gst-launch-1.0 -m \
  qmetric name=q latency=200000000 metrics=psnr,float_ssim "$@" ! fakesink sync=false \
  videotestsrc is-live=true num-buffers="$frames" pattern=zone-plate kx2=20 ky2=20 kt=1 ! \
    video/x-raw,format=I420,width=640,height=360,framerate=$fps/1 ! tee name=t \
  t. ! queue ! x264enc tune=zerolatency speed-preset=ultrafast bitrate="$bitrate" key-int-max=$fps ! \
    rtph264pay config-interval=1 pt=96 ! udpsink host=127.0.0.1 port="$port" sync=false async=false \
  t. ! queue max-size-buffers=0 max-size-bytes=0 max-size-time=3000000000 ! q.ref_sink \
  udpsrc address=127.0.0.1 port="$port" caps="$rtp_caps" ! rtpjitterbuffer latency=50 ! \
    rtph264depay ! avdec_h264 ! videoconvert ! video/x-raw,format=I420 ! q.dist_sink \
  | grep --line-buffered -E 'element "q"|ERROR' | sed -u 's/^Got message #[0-9]* from //'
