#!/bin/sh
# Live soak of the qmetric element: a live videotestsrc pair, 1 s windows,
# for DURATION seconds (default 3600), RSS of the process sampled every
# 30 s.  Writes to OUTDIR (default ./live-soak): windows.log (the
# qmetric-window lines of gst-launch -m; fakesink's per-frame tag messages
# are left out),
# scores.jsonl (log-format=jsonl), rss.tsv (unix time, RSS in KiB).
# Usage: GST_PLUGIN_PATH_1_0=build/gst/qmetric tools/probe/live-soak.sh [DURATION] [OUTDIR]
set -eu
DURATION=${1:-3600}
OUT=${2:-live-soak}
mkdir -p "$OUT"
nice -n 10 timeout -s INT "$DURATION" gst-launch-1.0 -e -m \
    videotestsrc is-live=true pattern=ball \
    ! video/x-raw,format=I420,width=320,height=240,framerate=30/1 \
    ! tee name=t \
    t. ! queue ! q.ref_sink \
    t. ! queue ! videobalance brightness=0.05 ! q.dist_sink \
    qmetric name=q metrics=vmaf threads=1 window=1s post-messages=false \
        log-format=jsonl log-location="$OUT/scores.jsonl" \
    ! fakesink sync=true 2>&1 | grep --line-buffered -e qmetric-window \
        -e ERROR -e WARNING >"$OUT/windows.log" &
sleep 1
PID=$(pgrep -n -f "^timeout -s INT $DURATION gst-launch-1.0")
# the shell's child is timeout; gst-launch is its child
sleep 2
GPID=$(pgrep -P "$PID" gst-launch-1.0 || echo "$PID")
: >"$OUT/rss.tsv"
while kill -0 "$GPID" 2>/dev/null; do
    RSS=$(ps -o rss= -p "$GPID" 2>/dev/null || true)
    [ -n "$RSS" ] && printf '%s\t%s\n' "$(date +%s)" "$RSS" >>"$OUT/rss.tsv"
    sleep 30
done
wait || true
echo "windows: $(grep -c '"type":"window"' "$OUT/scores.jsonl")"
echo "qmetric-window messages: $(grep -c 'qmetric-window' "$OUT/windows.log")"
