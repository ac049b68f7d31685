#!/bin/bash
# Copy a few golden cases into .golden/ (ignored by git) so that they can be
# carried to the GPU machine, whose copy of the tree has no ../shared.
#   scripts/golden-subset.sh [case-substring...]
set -euo pipefail
cd "$(dirname "$0")/.."
src=${QMETRIC_GOLDEN_DIR:-../shared/golden}
cases=${*:-ladybird_576x324_yuv420p_x264crf35 aqua_576x324_yuv420p10le_x264crf30 yellowflower_577x323}
grep -qs '^/.golden/$' .git/info/exclude || echo '/.golden/' >> .git/info/exclude
rm -rf .golden && mkdir -p .golden/yuv .golden/results
python3 - "$src" $cases <<'PY'
import json, shutil, sys, os
src, want = sys.argv[1], sys.argv[2:]
m = json.load(open(os.path.join(src, "manifest.json")))
m["cases"] = [c for c in m["cases"] if any(w in c["name"] for w in want)]
for c in m["cases"]:
    for k in ("ref", "dis"):
        shutil.copy(os.path.join(src, c[k]), os.path.join(".golden", c[k]))
    for r in c["runs"]:
        shutil.copy(os.path.join(src, r["result"]), os.path.join(".golden", r["result"]))
json.dump(m, open(".golden/manifest.json", "w"), indent=1)
print("golden subset: %d cases" % len(m["cases"]))
# SSIMULACRA2's oracle for the same cases (tests/check/golden_ssimulacra2.c)
s2 = os.path.join(src, "ssimulacra2", "manifest.json")
if os.path.exists(s2):
    names = {c["name"] for c in m["cases"]}
    m2 = json.load(open(s2))
    m2["cases"] = [c for c in m2["cases"] if c["name"] in names]
    os.makedirs(".golden/ssimulacra2/results", exist_ok=True)
    for c in m2["cases"]:
        shutil.copy(os.path.join(src, "ssimulacra2", c["result"]),
                    os.path.join(".golden", "ssimulacra2", c["result"]))
    json.dump(m2, open(".golden/ssimulacra2/manifest.json", "w"), indent=1)
    print("ssimulacra2 subset: %d cases" % len(m2["cases"]))
PY
du -sh .golden
