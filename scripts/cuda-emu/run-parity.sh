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
mkdir -p "$B"
cd "$B"
. "$E/objs.sh"
if [ -n "$EMU_SMALL" ]; then
  sed -e 's/577, 323/300, 220/g' "$ROOT/tests/parity/parity.c" > parity_small.c
  gcc $CF -I"$ROOT/tests/parity" -c parity_small.c -o parity.o
else
  gcc $CF -I"$ROOT/tests/parity" -c "$ROOT/tests/parity/parity.c" -o parity.o
fi
g++ $SAN -o parity parity.o $objs -lm -lpthread
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} ./parity --max-pixels $((577 * 323)) "$@"
