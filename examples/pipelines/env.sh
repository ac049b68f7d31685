# Sourced by the example scripts: use the plugin from the build tree unless
# it is installed.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ -f "$root/build/gst/qmetric/libgstqmetric.so" ]; then
  export GST_PLUGIN_PATH="$root/build/gst/qmetric${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
  export QMETRIC_MODEL_PATH="$root/data/models${QMETRIC_MODEL_PATH:+:$QMETRIC_MODEL_PATH}"
fi
if ! gst-inspect-1.0 qmetric >/dev/null 2>&1; then
  echo "qmetric plugin not found: run scripts/setup.sh first" >&2
  exit 1
fi
