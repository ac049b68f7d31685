#!/bin/bash
# examples/probe/qmetric-probe.service through systemd-analyze verify, with
# ExecStart pointed at the built binary: an unknown or misspelt directive,
# a bad value or a missing binary fails it.  SKIP (77) without systemd.
#
#   tests/probe_unit.sh UNIT QMETRIC_PROBE
set -euo pipefail
unit=$1 exe=$2
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s|/usr/local/bin/qmetric-probe|$exe|" "$unit" >"$tmp/qmetric-probe.service"
grep -q "ExecStart=$exe " "$tmp/qmetric-probe.service" || { echo "FAIL: no ExecStart to point at $exe"; exit 1; }
if ! systemd-analyze verify "$tmp/qmetric-probe.service" >"$tmp/out" 2>&1 || [ -s "$tmp/out" ]; then
  cat "$tmp/out"
  echo "FAIL: systemd-analyze verify"
  exit 1
fi
echo "PASS: systemd-analyze verify has nothing to say"
