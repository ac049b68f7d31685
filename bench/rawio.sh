#!/bin/bash
# qmetric-yuv from raw files at 1080p, CUDA backend: input files registered
# for direct transfers against the staging copy (--no-register), side by
# side, and libvmaf's CUDA backend on the same files when VMAF names its CLI.
#
#   bench/rawio.sh BUILD_DIR        (e.g. build-gpu; run on the GPU machine)
#
# Files: two 8-bit 4:2:0 files in $DIR (default /dev/shm) of N_LONG frames,
# 64 distinct synthetic frame pairs cycled (bench/qmetric-yuvgen.c).  Each
# configuration runs N_SHORT and N_LONG frames, REPEATS times alternately;
# frames/s in the steady state = (N_LONG - N_SHORT) / (T_LONG - T_SHORT),
# T the wall time of a whole run (start-up, CUDA context and model loading
# cancel out; registration, done a window at a time as frames are read,
# does not).  One line per configuration, then the transfer counts of its
# long run and whether its scores equal the staging run's.
# Environment: SIZE (1920x1080), N_SHORT (200), N_LONG (2000), REPEATS (2),
#   THREADS (qmetric-yuv --threads, 16), DIR (/dev/shm), KEEP=1 (keep the
#   files), VMAF (libvmaf's vmaf CLI built with CUDA: adds its line),
#   EXTRA (more qmetric-yuv options for every run), MODEL (vmaf_v0.6.1; a
#   model of data/models, e.g. vmaf_v1.0.16_3d0h, given to both tools),
#   LV_EXTRA (more libvmaf options, e.g. "--gpumask 4294967295 --threads 16"
#   for its CPU path: libvmaf's CUDA backend cannot run the v1 models),
#   CONFIGS (default "registered staging", plus libvmaf when VMAF is set).
set -uo pipefail
B=${1:?usage: bench/rawio.sh BUILD_DIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SIZE=${SIZE:-1920x1080} W=${SIZE%x*} H=${SIZE#*x}
NS=${N_SHORT:-200} NL=${N_LONG:-2000} REPEATS=${REPEATS:-2} THREADS=${THREADS:-16}
DIR=${DIR:-/dev/shm}
MODEL=${MODEL:-vmaf_v0.6.1}
export QMETRIC_MODEL_PATH=${QMETRIC_MODEL_PATH:-$ROOT/data/models}
REF=$DIR/qm-rawio-ref.yuv DIS=$DIR/qm-rawio-dis.yuv
WORK=$(mktemp -d)
bytes=$(( W * H * 3 / 2 * NL * 2 ))
free_b=$(df -B1 --output=avail "$DIR" | tail -1)
if [ "$free_b" -lt "$bytes" ]; then
  echo "rawio: $DIR has $((free_b >> 20)) MiB free, the files need $((bytes >> 20)) MiB (set DIR)"
  exit 1
fi
want=$(( W * H * 3 / 2 * NL ))
if [ "$(stat -c %s "$REF" 2>/dev/null)" != "$want" ] || [ "$(stat -c %s "$DIS" 2>/dev/null)" != "$want" ]; then
  t0=$(date +%s.%N)
  "$B/bench/qmetric-yuvgen" --width "$W" --height "$H" --frames "$NL" --distinct 64 "$REF" "$DIS" || exit 1
  echo "rawio: wrote 2 x $NL frames of ${W}x${H} in $(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }") s to $DIR"
fi
[ -n "${KEEP:-}" ] || trap 'rm -f "$REF" "$DIS"; rm -rf "$WORK"' EXIT
# what pinning costs here, against copying (bench/hostreg.c)
[ -x "$B/bench/qmetric-hostreg" ] && "$B/bench/qmetric-hostreg" 2048 "$DIR"

# seconds of one run: name, frames, command...
timed() {
  local name=$1 n=$2
  shift 2
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >"$WORK/$name-$n.out" 2>"$WORK/$name-$n.err" || { echo "rawio: $name ($n frames) failed:" >&2; tail -5 "$WORK/$name-$n.err" >&2; echo nan; return; }
  t1=$(date +%s.%N)
  awk "BEGIN { printf \"%.4f\", $t1 - $t0 }"
}
qm() {  # name, frames, extra options
  local name=$1 n=$2
  shift 2
  timed "$name" "$n" "$B/tools/qmetric-yuv" -r "$REF" -d "$DIS" --width "$W" --height "$H" \
    --metrics vmaf --model "$MODEL" --backend cuda --threads "$THREADS" --frames "$n" --verbose \
    -o "$WORK/$name-$n.json" ${EXTRA:-} "$@"
}
lv() {
  local n=$1
  timed libvmaf "$n" "$VMAF" -r "$REF" -d "$DIS" -w "$W" -h "$H" -p 420 -b 8 \
    --model path="$QMETRIC_MODEL_PATH/$MODEL.json":name=vmaf --frame_cnt "$n" -q --json \
    -o "$WORK/libvmaf-$n.json" ${LV_EXTRA:-}
}

configs=${CONFIGS:-registered staging}
[ -n "${VMAF:-}" ] && [[ " $configs " != *" libvmaf "* ]] && configs="$configs libvmaf"
declare -A fps
for r in $(seq "$REPEATS"); do
  for c in $configs; do
    case $c in
      registered) ts=$(qm $c "$NS"); tl=$(qm $c "$NL") ;;
      staging) ts=$(qm $c "$NS" --no-register); tl=$(qm $c "$NL" --no-register) ;;
      libvmaf) ts=$(lv "$NS"); tl=$(lv "$NL") ;;
    esac
    f=failed
    [[ $ts$tl != *nan* ]] && f=$(awk "BEGIN { d = $tl - $ts; if (d > 0) printf \"%.0f\", ($NL - $NS) / d; else print \"nan\" }")
    fps[$c]="${fps[$c]:-}${fps[$c]:+ / }$f"
  done
done
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | sed 's/^/rawio: device /'
echo "rawio: ${W}x${H} 8-bit 4:2:0 VMAF ($MODEL) from $DIR, frames/s in the steady state ($NS and $NL frames, $REPEATS repeats, --threads $THREADS)"
for c in $configs; do
  printf '%-11s %s frames/s\n' "$c" "${fps[$c]}"
  if [ "$c" != libvmaf ]; then
    grep -h -E "pictures to the device|registered .* ranges|cannot be registered" "$WORK/$c-$NL.err" | sed 's/^qmetric-yuv: /    /'
  fi
done
# the scores must not depend on the path (nor differ from libvmaf's)
python3 - "$WORK" "$NL" $configs <<'PY'
import json, sys
work, n, configs = sys.argv[1], sys.argv[2], sys.argv[3:]
def vmaf(c):
    try:
        return [f["metrics"]["vmaf"] for f in json.load(open("%s/%s-%s.json" % (work, c, n)))["frames"]]
    except (OSError, ValueError, KeyError) as e:
        return None
base = vmaf("staging") if "staging" in configs else vmaf(configs[0])
for c in configs:
    if c == ("staging" if "staging" in configs else configs[0]):
        continue
    v = vmaf(c)
    if v is None or base is None:
        print("%-11s scores: not readable" % c)
        continue
    d = max(abs(a - b) for a, b in zip(v, base)) if v else float("nan")
    print("%-11s vs qmetric: %d vs %d frames, max |VMAF diff| %.3g" % (c, len(v), len(base), d))
PY
