#!/bin/bash
# Compare feature options the golden data does not cover (SpEED chroma
# rescalers, kernel scales and weighting modes; motion blend, window and
# moving-average switches) with a libvmaf 3.2.0 build, per frame and key by
# key: libvmaf's `vmaf --feature SPEC` against the qmetric element's
# `features="SPEC"` on golden clips.  Not part of the default suite (it needs
# libvmaf); see docs/accuracy.md.
#
# usage: tests/libvmaf_options.sh VMAF_TOOL [BUILD_DIR] [GOLDEN_DIR]
#   VMAF_TOOL  libvmaf's command-line tool (libvmaf/build/tools/vmaf)
# Exit: 0 every value identical to the printed decimals (|diff| < 1e-6) and
# the same keys, 1 otherwise.
set -eu
VMAF=$1
BUILD=${2:-build}
GOLDEN=${3:-../shared/golden}
CACHE=$(mktemp -d)
trap 'rm -rf "$CACHE"' EXIT
export GST_PLUGIN_PATH_1_0=$PWD/$BUILD/gst/qmetric
export GST_REGISTRY_1_0=$CACHE/registry.bin
fail=0

clip() { xz -dc "$GOLDEN/yuv/$1.yuv.xz" > "$CACHE/$1.yuv"; echo "$CACHE/$1.yuv"; }

# check REF DIS W H GST_FORMAT PIXFMT BPC SPEC
check() {
  "$VMAF" -r "$1" -d "$2" -w "$3" -h "$4" -p "$6" -b "$7" --no_prediction \
    --feature "$8" --json -o "$CACHE/ref.json" -q > /dev/null
  gst-launch-1.0 -q qmetric name=q metrics=psnr features="$8" \
    log-location="$CACHE/our.json" ! fakesink \
    filesrc location="$1" ! rawvideoparse width="$3" height="$4" format="$5" \
      framerate=24/1 ! q.ref_sink \
    filesrc location="$2" ! rawvideoparse width="$3" height="$4" format="$5" \
      framerate=24/1 ! q.dist_sink
  python3 - "$CACHE/ref.json" "$CACHE/our.json" "$8" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1])); o = json.load(open(sys.argv[2]))
rk = set(r["frames"][0]["metrics"])
ok = set(o["frames"][0]["metrics"]) - {"psnr_y", "psnr_cb", "psnr_cr"}
worst = 0.0
for a, b in zip(r["frames"], o["frames"]):
    for k in rk & ok:
        worst = max(worst, abs(a["metrics"][k] - b["metrics"][k]))
good = rk == ok and len(r["frames"]) == len(o["frames"]) and worst < 1e-6
print("%s %s: %d frames, keys %s, worst %.2e" % ("ok  " if good else "FAIL",
      sys.argv[3], len(o["frames"]), " ".join(sorted(ok)), worst))
sys.exit(0 if good else 1)
PY
}

L8R=$(clip ladybird_576x324_yuv420p_ref)
L8D=$(clip ladybird_576x324_yuv420p_x264crf35_dis)
A10R=$(clip aqua_576x324_yuv420p10le_ref)
A10D=$(clip aqua_576x324_yuv420p10le_x264crf30_dis)
G12R=$(clip garden_576x324_yuv420p12le_ref)
G12D=$(clip garden_576x324_yuv420p12le_x264crf30_dis)
G422R=$(clip garden_576x324_yuv422p_ref)
G422D=$(clip garden_576x324_yuv422p_x264crf32_dis)

for spec in \
  speed_chroma \
  speed_chroma=speed_prescale=1.5:speed_prescale_method=bicubic:speed_weight_var_mode=3 \
  speed_chroma=speed_prescale=1.3:speed_prescale_method=lanczos4:speed_kernelscale=0.5:speed_weight_var_mode=1 \
  speed_chroma=speed_prescale=1.7:speed_prescale_method=nearest:speed_kernelscale=2:speed_weight_var_mode=6 \
  speed_chroma=speed_weight_var_mode=2:speed_sigma_nn=0.5:speed_nn_floor=0.3:speed_max_val=3 \
  speed_chroma=speed_weight_var_mode=4:speed_kernelscale=1.5 \
  motion=motion_five_frame_window=true:motion_blend_factor=0.5:motion_blend_offset=3:motion_fps_weight=1.5 \
  motion=motion_moving_average=true:motion_max_val=2; do
  check "$L8R" "$L8D" 576 324 i420 420 8 "$spec"
done
check "$A10R" "$A10D" 576 324 i420-10le 420 10 \
  speed_chroma=speed_prescale=1.2:speed_prescale_method=bilinear:speed_weight_var_mode=5
check "$G12R" "$G12D" 576 324 i420-12le 420 12 \
  speed_chroma=speed_prescale=0.9:speed_prescale_method=lanczos4
check "$G422R" "$G422D" 576 324 y42b 422 8 \
  speed_chroma=speed_prescale=1.1:speed_prescale_method=bicubic:speed_kernelscale=0.6666667
exit $fail
