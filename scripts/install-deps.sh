#!/bin/bash
# Install what gst-qmetric needs to build, test and run its examples on
# Debian 12 (bookworm).  Run as root (or through sudo).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
packages=(
  meson ninja-build gcc pkg-config python3 xz-utils
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  libgstreamer-plugins-bad1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly gstreamer1.0-libav
  python3-gi gir1.2-gstreamer-1.0
  # qmetric-batch (Dask) and its test (pgrep: no program left running);
  # qmetric-bd's test (an independent Bjøntegaard computation)
  python3-distributed procps python3-numpy python3-scipy
  # qmetric-probe: its web configuration (libyaml), bcrypt (libxcrypt), TLS
  # at run time (glib-networking); its tests: a real Prometheus and promtool,
  # openssl for a certificate, systemd-analyze for the example unit
  libyaml-dev libcrypt-dev glib-networking openssl prometheus systemd
  # qmetric-compare --scale (libswscale, as FFmpeg scales); its tests compare
  # with ffmpeg's output; tests/compare_chunks.sh makes its clips with ffmpeg
  # (libx264, libx265, libaom)
  libswscale-dev libavutil-dev ffmpeg
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "install-deps: all ${#packages[@]} packages present"
