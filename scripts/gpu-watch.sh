#!/bin/bash
# Run a command under a time limit on the GPU machine; if it is still running
# at the limit, append every host thread's backtrace and the CUDA kernels in
# flight (cuda-gdb attached to it) to its log, then kill it.  Tells a hang
# (where it waits) from a slow run.
#   scripts/gpu-watch.sh SECONDS LOG command [args...]
set -u
secs=$1 log=$2
shift 2
start=$(date +%s)
"$@" >"$log" 2>&1 &
pid=$!
while kill -0 "$pid" 2>/dev/null && (( $(date +%s) - start < secs )); do
  sleep 1
done
if kill -0 "$pid" 2>/dev/null; then
  echo "== still running after ${secs} s: backtraces" >>"$log"
  timeout 90 cuda-gdb -q -p "$pid" -batch -ex "info cuda kernels" \
    -ex "thread apply all bt 25" >>"$log" 2>&1
  kill -9 "$pid" 2>/dev/null
fi
wait "$pid"
rc=$?
echo "== rc=$rc after $(( $(date +%s) - start )) s" >>"$log"
exit $rc
