#!/bin/bash
# qmetric-yuv on the CUDA emulator (no GPU needed): the CUDA backend's two
# ways of taking host pictures, from the same raw files, give the same
# scores.  Runs, on synthetic 4:2:0 files, VMAF + PSNR:
#   cpu          the CPU backend (the reference, within the twins' tolerance)
#   registered   --backend cuda: files registered, the device copies them
#   staging      --backend cuda --no-register: the staging copy
#   refused      EMU_HOST_REGISTER=refuse: registration fails, one info line,
#                every picture staged
#   window       --register-limit 1: a sliding window of 256 KiB chunks,
#                frames across a chunk boundary staged, the others direct
# and checks the scores of every CUDA run identical (the same printed
# digits), the transfer counts of each, and the CUDA scores against the CPU.
#   scripts/cuda-emu/run-yuv.sh     Environment: EMU_DIR, EMU_SAN as run-parity.sh
set -e
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
E=$ROOT/scripts/cuda-emu
B=${EMU_DIR:-$ROOT/build-emu}
mkdir -p "$B"
cd "$B"
. "$E/objs.sh"
gcc $CF -c "$ROOT/tools/qmetric-yuv.c" -o qmetric-yuv.o
gcc $CF -c "$ROOT/tools/hostwin.c" -o hostwin.o
g++ $SAN -o qmetric-yuv qmetric-yuv.o hostwin.o $objs -lm -lpthread
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} QMETRIC_MODEL_PATH=$ROOT/data/models

# 176x144, 8 frames (the emulator takes about a minute a run): a frame is
# 38016 bytes, so the first 256 KiB chunk (registered before the first
# frame) holds frames 0-5 and ends inside frame 6 (the window case has both
# kinds)
W=176 H=144 N=8
/usr/bin/python3 - "$W" "$H" "$N" <<'PY'
import sys, numpy as np
w, h, n = map(int, sys.argv[1:4])
rng = np.random.default_rng(14)
y, x = np.mgrid[0:h, 0:w]
with open("emu_ref.yuv", "wb") as r, open("emu_dis.yuv", "wb") as d:
    for f in range(n):
        for pw, ph in ((w, h), (w // 2, h // 2), (w // 2, h // 2)):
            yy, xx = y[:ph, :pw], x[:ph, :pw]
            v = 128 + 60 * np.sin(xx * 0.11 + f * 0.7) * np.cos(yy * 0.07) + rng.normal(0, 12, (ph, pw))
            ref = np.clip(v, 0, 255).astype(np.uint8)
            dis = np.clip((ref // 16) * 16 + 8 + rng.integers(-1, 2, (ph, pw)), 0, 255).astype(np.uint8)
            r.write(ref.tobytes())
            d.write(dis.tobytes())
PY
run() {  # name, qmetric-yuv options...
  local name=$1
  shift
  ./qmetric-yuv -r emu_ref.yuv -d emu_dis.yuv --width $W --height $H --threads 2 \
    --metrics vmaf,psnr -o "emu_$name.json" --verbose "$@" 2>"emu_$name.log" ||
    { cat "emu_$name.log"; echo "run-yuv: $name failed"; exit 1; }
  grep -E "pictures to the device|registered|cannot be registered" "emu_$name.log" | sed "s/^/  $name: /"
}
run cpu --backend cpu
run registered --backend cuda
run staging --backend cuda --no-register
EMU_HOST_REGISTER=refuse run refused --backend cuda
run window --backend cuda --register-limit 1
/usr/bin/python3 - "$N" <<'PY'
import json, re, sys
n = int(sys.argv[1])
def frames(name):
    return [f["metrics"] for f in json.load(open("emu_%s.json" % name))["frames"]]
def counts(name):
    m = re.search(r"(\d+) direct from registered memory, (\d+) through staging",
                  open("emu_%s.log" % name).read())
    return tuple(map(int, m.groups()))
bad = 0
def check(cond, what):
    global bad
    if not cond:
        bad += 1
        print("FAIL:", what)
base = frames("registered")
check(len(base) == n, "registered: %d frames" % len(base))
for name in ("staging", "refused", "window"):
    check(frames(name) == base, "%s: scores differ from registered" % name)
check(counts("registered") == (2 * n, 0), "registered: counts %s" % (counts("registered"),))
check(counts("staging") == (0, 2 * n), "staging: counts %s" % (counts("staging"),))
check(counts("refused") == (0, 2 * n), "refused: counts %s" % (counts("refused"),))
check("cannot be registered for direct transfers" in open("emu_refused.log").read(),
      "refused: no info line")
d, s = counts("window")
check(d > 0 and s > 0 and d + s == 2 * n, "window: counts %d direct, %d staged" % (d, s))
cpu = frames("cpu")
worst = max(abs(a[k] - b[k]) for a, b in zip(cpu, base) for k in a if a[k] is not None)
check(worst < 5e-5, "CUDA vs CPU: worst |diff| %g" % worst)
print("run-yuv: %d frames; registered, staging, refused and window identical; "
      "CUDA vs CPU worst |diff| %.3g; %s" % (n, worst, "FAIL" if bad else "PASS"))
sys.exit(1 if bad else 0)
PY
