#!/bin/bash
# The engine's GPU path under every thread count (the two-thread hang of
# the golden runs of 2026-11-22 depended on it): qmetric-yuv on synthetic raw
# files at 576x324 and 1080p, four metric sets, --threads 1 2 3 4 5 8 16,
# each run under scripts/gpu-watch.sh (a stall comes back as backtraces);
# the scores must be identical across thread counts and within 5e-5 of the
# CPU backend.  On the GPU machine (carry .gpu: the build step uses it):
#   scripts/gpu-stress.sh            (builds build-gpu first with GPU_ARCHS=90)
cd "$(dirname "$0")/.."
T0=$(date +%s); t(){ echo "== t=$(( $(date +%s)-T0 ))s $*"; }
export GPU_ARCHS=90
timeout 130 scripts/gpu-run.sh build >/dev/null; t build
export QMETRIC_MODEL_PATH=$PWD/data/models
Q=$PWD/build-gpu/tools/qmetric-yuv D=/dev/shm
python3 - <<'PY'
import numpy as np
for (w, h, n, tag) in ((576, 324, 400, 'sd'), (1920, 1080, 150, 'hd')):
    rng = np.random.default_rng(5)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    with open('/dev/shm/%s_ref.yuv' % tag, 'wb') as fr, open('/dev/shm/%s_dis.yuv' % tag, 'wb') as fd:
        for k in range(n):
            r = np.clip(128 + 60*np.sin(x*0.03 + k*0.2)*np.cos(y*0.05) + rng.normal(0, 6, (h, w)), 0, 255).astype(np.uint8)
            d = np.clip(r.astype(np.int16) + rng.integers(-6, 7, (h, w)), 0, 255).astype(np.uint8)
            for img, f in ((r, fr), (d, fd)):
                c = img[::2, ::2]
                f.write(img.tobytes() + c.tobytes() + (255 - c).tobytes())
PY
t gen
bad=0
for tag in sd:576:324 hd:1920:1080; do
  IFS=: read s w h <<<"$tag"
  for m in vmaf psnr vmaf,psnr,float_ssim,float_ms_ssim,psnr_hvs all; do
    for th in 1 2 3 4 5 8 16; do
      scripts/gpu-watch.sh 60 $D/log.txt $Q -r $D/${s}_ref.yuv -d $D/${s}_dis.yuv --width $w --height $h --metrics $m --backend cuda --threads $th -o $D/o_$th.json
      rc=$?; [ $rc = 0 ] || { echo "FAIL rc=$rc $s $m threads=$th"; grep -E "still|rc=|qmetric-yuv" $D/log.txt | head -3; bad=$((bad+1)); }
    done
    [ $s = sd ] && scripts/gpu-watch.sh 120 $D/logc.txt $Q -r $D/${s}_ref.yuv -d $D/${s}_dis.yuv --width $w --height $h --metrics $m --backend cpu --threads 16 -o $D/o_cpu.json
    python3 - $D $s "$m" <<'PY' || bad=$((bad+1))
import json, sys, os
d, s, m = sys.argv[1:]
runs = {}
for th in (1, 2, 3, 4, 5, 8, 16, 'cpu'):
    p = '%s/o_%s.json' % (d, th)
    if os.path.exists(p):
        runs[th] = [f['metrics'] for f in json.load(open(p))['frames']]
base = runs[1]
ok = True
for k, v in runs.items():
    if len(v) != len(base):
        print('FAIL', s, m, k, 'frames', len(v), len(base)); ok = False; continue
    dd = max((abs(a[x] - b[x]) for a, b in zip(v, base) for x in a if a[x] is not None and b[x] is not None), default=0)
    if (k != 'cpu' and dd != 0) or dd >= 5e-5:
        print('FAIL', s, m, k, 'max abs diff', dd); ok = False
print(s, m, 'frames', len(base), 'thread counts', len(runs), 'identical across threads, cpu max diff', max((abs(a[x] - b[x]) for a, b in zip(runs.get('cpu', base), base) for x in a if a[x] is not None and b[x] is not None), default=0))
sys.exit(0 if ok else 1)
PY
    rm -f $D/o_*.json
  done
done
t runs; echo "failures: $bad"
exit $(( bad > 0 ))
