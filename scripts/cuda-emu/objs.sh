# Sourced by run-parity.sh and run-yuv.sh: compile the core, the C metrics,
# the CUDA backend (cuda/gpu.c) and every twin (cuda/*.cu, launches
# rewritten by rewrite.py) against the emulator, in the current directory.
# Needs ROOT and E (this directory); sets CF (C flags), SAN and objs.
SAN=${EMU_SAN:--fsanitize=address,undefined -fno-omit-frame-pointer -g}
# the core and the metrics, as core/meson.build and cpu/meson.build list them
DEFS="-DQM_HAVE_CUDA -DQM_MODEL_DIR=\"$ROOT/data/models\" -DQM_VERSION=\"emu\""
SRCS="core/engine core/registry core/json core/model core/pool core/qmlog core/partial
      cpu/cpu cpu/psnr cpu/ssim_common cpu/ssim cpu/ms_ssim cpu/psnr_hvs cpu/ciede
      cpu/cambi cpu/vif cpu/adm cpu/motion cpu/speed cuda/gpu cuda/copypool"
CF="-O1 -std=gnu11 -ffp-contract=off -fno-trapping-math -fno-math-errno -pthread $SAN \
    -I$E -I$ROOT/core -I$ROOT/cpu -I$ROOT/cuda $DEFS"
# nvcc includes cuda_runtime.h first in every .cu
CXF="-std=c++17 -O1 -ffp-contract=off $SAN -include cuda_runtime.h -I$E -I$ROOT/core -I$ROOT/cpu -I$ROOT/cuda"
objs=""
for f in $SRCS; do
  o=$(echo "$f" | tr / _).o
  gcc $CF -c "$ROOT/$f.c" -o "$o"
  objs="$objs $o"
done
for cu in "$ROOT"/cuda/*.cu; do
  n=$(basename "$cu" .cu)
  python3 "$E/rewrite.py" "$cu" "${n}_emu.cpp"
  g++ $CXF -c "${n}_emu.cpp" -o "${n}_cu.o"
  objs="$objs ${n}_cu.o"
done
g++ -std=c++17 -O1 $SAN -c "$E/emu.cpp" -o emu.o
g++ -std=c++17 -O1 $SAN -c "$E/emu_api.cpp" -o emu_api.o
objs="$objs emu.o emu_api.o"
