#!/bin/bash
# qmetric-batch on a real Dask cluster: a scheduler and two workers started
# here as separate processes on 127.0.0.1, a manifest of two golden pairs
# (8-bit and 10-bit) cut into chunks; each pair's merged log must equal a
# single local qmetric-yuv run (every line but the speed), and the chunks
# must have run on both workers.  Then the same through the embedded local
# cluster.  SKIP (77) without Debian's python3-distributed.
#   tests/dask.sh BUILD_DIR [GOLDEN_DIR]
set -uo pipefail
B=$(cd "$1" && pwd)
G=${2:-${QMETRIC_GOLDEN_DIR:-$(dirname "$0")/../../shared/golden}}
SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
if ! $PY -c 'import distributed' 2>/dev/null || ! command -v dask-scheduler >/dev/null; then
  echo "SKIP: Dask distributed is not installed (apt-get install python3-distributed)"
  exit 77
fi
if [ ! -f "$G/manifest.json" ]; then
  echo "SKIP: no golden data in $G"
  [ "${QMETRIC_GOLDEN_REQUIRED:-0}" = 1 ] && exit 1
  exit 77
fi
T=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

for f in ladybird_576x324_yuv420p_ref ladybird_576x324_yuv420p_x264crf35_dis \
         aqua_576x324_yuv420p10le_ref aqua_576x324_yuv420p10le_x264crf30_dis; do
  xz -dc "$G/yuv/$f.yuv.xz" >"$T/$f.yuv"
done
cat >"$T/manifest.json" <<EOF
{"defaults": {"width": 576, "height": 324, "metrics": "vmaf,psnr", "chunk_frames": 5},
 "pairs": [
  {"name": "ladybird", "reference": "ladybird_576x324_yuv420p_ref.yuv",
   "distorted": "ladybird_576x324_yuv420p_x264crf35_dis.yuv", "output": "out/ladybird.json"},
  {"name": "aqua10", "bitdepth": 10, "model": "vmaf_v0.6.1neg", "format": "csv",
   "reference": "aqua_576x324_yuv420p10le_ref.yuv",
   "distorted": "aqua_576x324_yuv420p10le_x264crf30_dis.yuv", "output": "out/aqua10.csv"}]}
EOF
"$B/tools/qmetric-yuv" -r "$T/ladybird_576x324_yuv420p_ref.yuv" -d "$T/ladybird_576x324_yuv420p_x264crf35_dis.yuv" \
  --width 576 --height 324 --metrics vmaf,psnr -o "$T/ladybird.whole" 2>/dev/null
"$B/tools/qmetric-yuv" -r "$T/aqua_576x324_yuv420p10le_ref.yuv" -d "$T/aqua_576x324_yuv420p10le_x264crf30_dis.yuv" \
  --width 576 --height 324 --bitdepth 10 --model vmaf_v0.6.1neg --metrics vmaf,psnr --format csv \
  -o "$T/aqua10.whole" 2>/dev/null

compare_outputs() {  # label
  for n in ladybird.json:ladybird.whole aqua10.csv:aqua10.whole; do
    # the speed is not a result: JSON's "fps" line; CSV has none
    if diff <(grep -v '"fps"' "$T/out/${n%%:*}") <(grep -v '"fps"' "$T/${n#*:}") >/dev/null; then ok
    else bad "$1: ${n%%:*} differs from a single run"; fi
  done
}

# a free port on loopback for the scheduler
port=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
dask-scheduler --host 127.0.0.1 --port "$port" --no-dashboard >"$T/scheduler.log" 2>&1 &
pids+=($!)
for i in 1 2; do
  dask-worker "tcp://127.0.0.1:$port" --host 127.0.0.1 --nthreads 1 --no-dashboard \
    --name "w$i" >"$T/worker$i.log" 2>&1 &
  pids+=($!)
done
# wait (bounded) until both workers have joined
if ! timeout 60 $PY - "$port" <<'PY'
import sys, time, distributed
c = distributed.Client("tcp://127.0.0.1:%s" % sys.argv[1], timeout=30)
while len(c.scheduler_info()["workers"]) < 2:
    time.sleep(0.2)
c.close()
PY
then
  bad "the scheduler and two workers did not start"; cat "$T"/*.log | tail -20
  echo "dask: $pass passed, $fail failed"; exit 1
fi

timeout 180 "$SRC/tools/qmetric-batch" "$T/manifest.json" --scheduler "tcp://127.0.0.1:$port" \
  --qmetric-yuv "$B/tools/qmetric-yuv" --qmetric-merge "$B/tools/qmetric-merge" >"$T/summary" 2>"$T/batch.err"
rc=$?
[ $rc = 0 ] && ok || { bad "qmetric-batch on the cluster exited $rc"; tail -5 "$T/batch.err"; }
cat "$T/summary"
compare_outputs "cluster"
$PY - "$T/summary" <<'PY' && ok || bad "the chunks did not run on both workers, or the counts are wrong"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["name"] for r in rows] == ["ladybird", "aqua10"], rows
assert [r["frames"] for r in rows] == [36, 12] and [r["chunks"] for r in rows] == [8, 3], rows
assert len(set(w for r in rows for w in r["workers"])) == 2, rows
PY
[ -z "$(ls -A "$T/out" | grep qmetric-chunks)" ] && ok || bad "chunk folders were left behind"

# the embedded local cluster gives the same
rm -rf "$T/out"
timeout 180 "$SRC/tools/qmetric-batch" "$T/manifest.json" --workers 2 \
  --qmetric-yuv "$B/tools/qmetric-yuv" --qmetric-merge "$B/tools/qmetric-merge" >"$T/summary2" 2>"$T/batch2.err"
rc=$?
[ $rc = 0 ] && ok || { bad "qmetric-batch with a local cluster exited $rc"; tail -5 "$T/batch2.err"; }
compare_outputs "local cluster"

# a pair that cannot be scored is reported, and the others still are
$PY - "$T/manifest.json" "$T/bad.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["pairs"][0]["metrics"] = "nosuchmetric"
json.dump(m, open(sys.argv[2], "w"))
PY
rm -rf "$T/out"
timeout 120 "$SRC/tools/qmetric-batch" "$T/bad.json" --workers 1 \
  --qmetric-yuv "$B/tools/qmetric-yuv" --qmetric-merge "$B/tools/qmetric-merge" >"$T/summary3" 2>/dev/null
rc=$?
if [ $rc = 1 ] && grep -q '"name": "ladybird".*"error": .*nosuchmetric' "$T/summary3" &&
   grep -q '"name": "aqua10".*"workers"' "$T/summary3" &&
   diff "$T/out/aqua10.csv" "$T/aqua10.whole" >/dev/null; then ok
else bad "a failing pair: exit $rc, summary: $(cat "$T/summary3")"; fi

echo "dask: $pass passed, $fail failed"
[ "$fail" = 0 ]
