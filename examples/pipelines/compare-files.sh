#!/bin/bash
# Compare two video files: a reference and a distorted version of it.
#
#   examples/pipelines/compare-files.sh REF DIST [extra qmetric properties...]
#
# Encoded files (mp4, mkv, ts, y4m, ...) are decoded with decodebin.  Raw
# .yuv files need their geometry: set WIDTH, HEIGHT, FORMAT (GStreamer's
# name: I420, I420_10LE, Y444, ...) and FPS, e.g.
#   WIDTH=576 HEIGHT=324 FORMAT=I420 compare-files.sh ref.yuv dis.yuv
# Both must have the same size; the distorted stream is converted to the
# reference's pixel format if it differs (a lossless repacking for NV12 vs
# I420; scale it yourself if the sizes differ).  The scores are written to
# ${LOG:-qmetric.json}; the summary is printed at the end.
set -euo pipefail
. "$(dirname "$0")/env.sh"
if [ $# -lt 2 ]; then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
ref=$1 dist=$2
shift 2
for f in "$ref" "$dist"; do
  [ -r "$f" ] || { echo "cannot read $f" >&2; exit 2; }
done
log=${LOG:-qmetric.json}
src() {
  case "$1" in
    *.yuv)
      : "${WIDTH:?set WIDTH for raw .yuv input}" "${HEIGHT:?set HEIGHT}"
      echo "filesrc location=$1 ! rawvideoparse width=$WIDTH height=$HEIGHT format=$(echo "${FORMAT:-I420}" | tr 'A-Z_' 'a-z-') framerate=${FPS:-24}/1"
      ;;
    *)
      echo "filesrc location=$1 ! decodebin ! videoconvert"
      ;;
  esac
}
fmt=${FORMAT:-I420}
gst-launch-1.0 -m \
  qmetric name=q log-location="$log" post-messages=false "$@" ! fakesink \
  $(src "$ref") ! video/x-raw,format="$fmt" ! queue ! q.ref_sink \
  $(src "$dist") ! video/x-raw,format="$fmt" ! queue ! q.dist_sink \
  | grep -E 'qmetric-summary|ERROR|WARNING' | sed 's/;/;\n/g'
echo "per-frame log: $log"
