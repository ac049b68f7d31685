#!/usr/bin/env python3
"""The golden gate must notice a small error: copy the golden data of one
case into a temporary directory, add 4e-5 to one per-frame value of one
reference result file (a VMAF v1 feature), run the gate (tests/check/golden)
on the copy and require that it fails, on that feature only.

usage: golden_perturb.py GOLDEN_EXE GOLDEN_DIR
Exit: 0 the gate caught it, 1 it did not (or failed on something else),
77 golden data missing (skip) unless QMETRIC_GOLDEN_REQUIRED=1.
"""
import json, os, re, shutil, subprocess, sys, tempfile

CASE = "yellowflower_577x323_yuv420p_scale576x322_x264crf32"  # 8 frames: fast
MODEL = "vmaf_v1.0.16_3d0h"
KEY = "speed_chroma_uv_mxv_45_nnf_0.1_snn_0.19_wvm_5"
FRAME = 3
DELTA = 4e-5


def main():
    exe, golden = sys.argv[1], sys.argv[2]
    man_path = os.path.join(golden, "manifest.json")
    if not os.path.exists(man_path):
        msg = "golden data not found at %s" % golden
        if os.environ.get("QMETRIC_GOLDEN_REQUIRED") == "1":
            print("FAIL: " + msg)
            return 1
        print("SKIP: " + msg)
        return 77
    man = json.load(open(man_path))
    case = next(c for c in man["cases"] if c["name"] == CASE)
    tmp = tempfile.mkdtemp(prefix="qm-perturb")
    try:
        os.makedirs(os.path.join(tmp, "results"))
        os.symlink(os.path.abspath(os.path.join(golden, "yuv")), os.path.join(tmp, "yuv"))
        perturbed = None
        for run in case["runs"]:
            src = os.path.join(golden, run["result"])
            dst = os.path.join(tmp, run["result"])
            if run["model"] != MODEL:
                shutil.copyfile(src, dst)
                continue
            text = open(src).read()
            # change the one number in place, keeping the rest of the file
            # byte for byte: frame FRAME's value of KEY
            frames = text.index('"frames"')
            start = text.index('"frameNum": %d,' % FRAME, frames)
            m = re.compile(r'"%s": (-?[0-9.]+)' % re.escape(KEY)).search(text, start)
            old = float(m.group(1))
            new = "%.6f" % (old + DELTA)
            text = text[:m.start(1)] + new + text[m.end(1):]
            open(dst, "w").write(text)
            perturbed = (old, new)
        man["cases"] = [case]
        json.dump(man, open(os.path.join(tmp, "manifest.json"), "w"))
        print("%s [%s] %s frame %d: %.6f -> %s" % (CASE, MODEL, KEY, FRAME,
                                                   perturbed[0], perturbed[1]))
        env = dict(os.environ, QMETRIC_GOLDEN_DIR=tmp, QMETRIC_GOLDEN_CASES=CASE,
                   QMETRIC_GOLDEN_SETS="libvmaf")
        p = subprocess.run([exe], env=env, capture_output=True, text=True)
        out = p.stdout
        print(out[-3000:])
        # the summary table: "key  worst  failures/checked"
        fails = {}
        for line in out.splitlines():
            t = line.split()
            if len(t) == 3 and re.fullmatch(r"\d+/\d+", t[2]):
                fails[t[0]] = int(t[2].split("/")[0])
        bad = {k: v for k, v in fails.items() if v}
        if p.returncode != 1:
            print("FAIL: the gate exited %d on a perturbed result" % p.returncode)
            return 1
        # the frame, and the pooled values it moves (mean, ...), of KEY only
        if set(bad) != {KEY}:
            print("FAIL: expected failures on %s only; got %s" % (KEY, bad))
            return 1
        print("PASS: the gate fails on the %g change, on %s only" % (DELTA, KEY))
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
