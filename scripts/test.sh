#!/bin/bash
# Build and run the whole test suite (gst-check element tests, the golden
# gate against ../shared/golden, parity tests).  Without the golden data the
# golden tests report SKIP; with QMETRIC_GOLDEN_REQUIRED=1 (CI) they fail.
set -uo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] || meson setup build || exit 1
ninja -C build || exit 1
meson test -C build --print-errorlogs --num-processes "$(nproc)" "$@"
rc=$?
# a plain closing line that any CI reads
python3 - build/meson-logs/testlog.json <<'PY' || true
import json, sys
c = {"OK": 0, "FAIL": 0, "SKIP": 0, "TIMEOUT": 0, "EXPECTEDFAIL": 0, "UNEXPECTEDPASS": 0, "ERROR": 0}
for line in open(sys.argv[1]):
    r = json.loads(line).get("result")
    c[r] = c.get(r, 0) + 1
print("tests: %d passed, %d failed, %d skipped" % (c["OK"] + c["EXPECTEDFAIL"],
      c["FAIL"] + c["TIMEOUT"] + c["ERROR"] + c["UNEXPECTEDPASS"], c["SKIP"]))
PY
exit $rc
