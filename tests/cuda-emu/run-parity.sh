#!/bin/bash
# Run the parity harness against the CUDA emulator with AddressSanitizer and
# UBSan (no GPU needed): tests/cuda-emu/run-parity.sh [parity arguments,
# e.g. --metric cambi --seed 1].
# It builds meson's parity-emu target (tests/parity/meson.build: the
# sources of every build, no list of its own) in a build directory of its
# own configured with sanitizers, and runs it with --max-pixels (sizes
# above 577x323 left out: the emulator runs about 10^6 times slower than a
# GPU).  Environment: EMU_DIR (build directory, default build-emu),
# EMU_SAN (meson's b_sanitize, default address,undefined; none for none),
# EMU_SMALL=1 (parity --small: 577x323 becomes 300x220, about 3 times
# faster).
set -e
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${EMU_DIR:-$ROOT/build-emu}
SAN=${EMU_SAN:-address,undefined}
if [ ! -f "$B/build.ninja" ]; then
  meson setup "$B" "$ROOT" -Dcuda=disabled -Dexamples=disabled -Dtests=enabled \
    --buildtype=debugoptimized -Db_sanitize="$SAN" -Db_lundef=false
else
  meson configure "$B" -Db_sanitize="$SAN"
fi
ninja -C "$B" tests/parity/parity-emu
SMALL=
[ -n "$EMU_SMALL" ] && SMALL=--small
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} QMETRIC_MODEL_PATH="$ROOT/data/models" \
  "$B/tests/parity/parity-emu" --max-pixels $((577 * 323)) $SMALL "$@"
