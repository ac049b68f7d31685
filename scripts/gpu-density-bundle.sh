#!/bin/bash
# Adds to .gpu (made by ../shared/gpu/bundle.sh) what scripts/gpu-density.sh
# needs on the GPU machine beyond Debian's GStreamer: x265enc's library (the
# HEVC Main 10 streams), libyaml (qmetric-probe's web configuration; the
# machine's libxcrypt serves its basic authentication) and
# Prometheus (Debian's static binary, gzipped: about 14 MB of the 64 MB a
# device call carries).  Run here, from the project root, after bundle.sh:
#   bash ../shared/gpu/bundle.sh && bash scripts/gpu-density-bundle.sh
# The .debs go with the bundle's (.gpu/env.sh unpacks them all into /opt/gst
# on a fresh machine); gpu-density.sh links the libraries the machine lacks.
set -e
[ -d .gpu/debs ] || { echo "gpu-density-bundle.sh: no .gpu/debs: run bash ../shared/gpu/bundle.sh first" >&2; exit 1; }
(cd .gpu/debs && apt-get download -qq libx265-199 libnuma1 libyaml-0-2 libyaml-dev 2>&1 |
  grep -v -i unsandboxed || true)
mkdir -p .gpu/bin
if [ -x /usr/bin/prometheus ]; then
  gzip -9 -c /usr/bin/prometheus >.gpu/bin/prometheus.gz
else
  echo "gpu-density-bundle.sh: no /usr/bin/prometheus (apt-get install prometheus): the probe section runs without it" >&2
fi
echo "gpu-density-bundle.sh: .gpu is $(du -sh .gpu | cut -f1)"
