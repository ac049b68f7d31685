#!/bin/bash
# Copy a few golden cases into .golden/ (ignored by git) so that they can be
# carried to the GPU machine, whose copy of the tree has no ../shared.
#   scripts/golden-subset.sh [case-substring...]
set -euo pipefail
cd "$(dirname "$0")/.."
src=${QMETRIC_GOLDEN_DIR:-../shared/golden}
cases=${*:-ladybird_576x324_yuv420p_x264crf35 aqua_576x324_yuv420p10le_x264crf30 yellowflower_577x323}
# (a worktree's .git is a file, and its exclude list is shared: not there)
if [ -d .git ]; then
  grep -qs '^/.golden/$' .git/info/exclude || echo '/.golden/' >> .git/info/exclude
fi
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
# the manifests beside the main one, for the same cases (their clips are the
# main one's): the presets' runs (tests/check/golden_ctc.c), FFmpeg's XPSNR
# (golden_xpsnr.c), libjxl's SSIMULACRA2 (golden_ssimulacra2.c)
for sub in ("ctc", "xpsnr", "ssimulacra2"):
    path = os.path.join(src, sub, "manifest.json")
    if not os.path.exists(path):
        continue
    ms = json.load(open(path))
    ms["cases"] = [c for c in ms["cases"] if any(w in c["name"] for w in want)]
    os.makedirs(os.path.join(".golden", sub, "results"), exist_ok=True)
    for c in ms["cases"]:
        for r in c.get("runs", [c]):
            shutil.copy(os.path.join(src, sub, r["result"]), os.path.join(".golden", sub, r["result"]))
    json.dump(ms, open(os.path.join(".golden", sub, "manifest.json"), "w"), indent=1)
    print("golden subset: %d %s cases" % (len(ms["cases"]), sub))
PY
du -sh .golden
