#!/bin/bash
# Set up gst-qmetric on Debian 12: install the dependencies, then build.
# The plugin is then found with GST_PLUGIN_PATH=$PWD/build/gst/qmetric
# (the examples set it themselves), or installed with `ninja -C build install`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then scripts/install-deps.sh; else sudo scripts/install-deps.sh; fi
[ -f build/build.ninja ] || meson setup build
ninja -C build
echo "setup: built build/gst/qmetric/libgstqmetric.so"
