#!/bin/bash
# Build tests/parity/parity against the CUDA emulator (no GPU needed) and run
# it: ./scripts/cuda-emu/run-parity.sh [parity arguments, e.g. --metric cambi]
# Sizes above 577x323 are left out (parity --max-pixels; the emulator runs
# about 10^6 times slower than a GPU).  Environment: EMU_DIR (build directory, default build-emu),
# EMU_SAN (sanitizer flags, default address+undefined; "-g" for none),
# EMU_SMALL=1 (577x323 becomes 300x220, about 3 times faster).
set -e
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
E=$ROOT/scripts/cuda-emu
B=${EMU_DIR:-$ROOT/build-emu}
SAN=${EMU_SAN:--fsanitize=address,undefined -fno-omit-frame-pointer -g}
mkdir -p "$B"
cd "$B"
# the core and the metrics, as core/meson.build and cpu/meson.build list them
DEFS="-DQM_HAVE_CUDA -DQM_MODEL_DIR=\"$ROOT/data/models\" -DQM_VERSION=\"emu\""
SRCS="core/engine core/registry core/json core/model core/pool core/qmlog
      cpu/cpu cpu/psnr cpu/ssim_common cpu/ssim cpu/ms_ssim cpu/psnr_hvs cpu/ciede
      cpu/cambi cpu/vif cpu/adm cpu/motion cpu/speed"
CF="-O1 -std=gnu11 -ffp-contract=off -fno-trapping-math -fno-math-errno -pthread $SAN \
    -I$E -I$ROOT/core -I$ROOT/cpu -I$ROOT/cuda -DQM_INLINE_COPY_BYTES=0 $DEFS"
# nvcc includes cuda_runtime.h first in every .cu
CXF="-std=c++17 -O1 -ffp-contract=off $SAN -include cuda_runtime.h -I$E -I$ROOT/core -I$ROOT/cpu -I$ROOT/cuda"
objs=""
for f in $SRCS; do
  o=$(echo "$f" | tr / _).o
  gcc $CF -c "$ROOT/$f.c" -o "$o"
  objs="$objs $o"
done
gcc $CF -c "$ROOT/cuda/gpu.c" -o gpu.o
gcc $CF -c "$ROOT/cuda/jobqueue.c" -o jobqueue.o
if [ -n "$EMU_SMALL" ]; then
  sed -e 's/577, 323/300, 220/g' "$ROOT/tests/parity/parity.c" > parity_small.c
  gcc $CF -I"$ROOT/tests/parity" -c parity_small.c -o parity.o
else
  gcc $CF -I"$ROOT/tests/parity" -c "$ROOT/tests/parity/parity.c" -o parity.o
fi
for cu in "$ROOT"/cuda/*.cu; do
  n=$(basename "$cu" .cu)
  python3 "$E/rewrite.py" "$cu" "${n}_emu.cpp"
  g++ $CXF -c "${n}_emu.cpp" -o "${n}_cu.o"
  objs="$objs ${n}_cu.o"
done
g++ -std=c++17 -O1 $SAN -c "$E/emu.cpp" -o emu.o
g++ -std=c++17 -O1 $SAN -c "$E/emu_api.cpp" -o emu_api.o
g++ $SAN -o parity parity.o gpu.o jobqueue.o $objs emu.o emu_api.o -lm -lpthread
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} ./parity --max-pixels $((577 * 323)) "$@"
