#!/usr/bin/env python3
"""qmetric-probe exports the pairs the element compared but did not score to
keep up (qmetric_skipped_frames_total): a live 40 frames/s source into a
CPU engine made slow by its test hook (QMETRIC_TEST_DELAY_US: 50 ms more
per metric and scored frame, at most 20 scored pairs/s), so that the
element sheds pairs (docs/element.md, "Overload").  The counter must grow
and stay below qmetric_frames_total, which counts every compared pair,
skipped ones included.  A probe that keeps up beside it (same process, same
hook, 5 frames/s) skips nothing.

Environment: QMETRIC_PROBE, GST_PLUGIN_PATH_1_0 (as for probe_test.py).
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_common import Probe, fail, get  # noqa: E402

PIPE = ('videotestsrc is-live=true pattern=ball ! '
        'video/x-raw,format=I420,width=64,height=48,framerate=%d/1 ! tee name=t '
        't. ! queue ! q.ref_sink t. ! queue ! q.dist_sink '
        'qmetric name=q backend=cpu metrics=psnr threads=1 window=1s ! fakesink sync=false')

CONFIG = """
[behind]
pipeline=%s

[keeps-up]
pipeline=%s
""" % (PIPE % 40, PIPE % 5)


def main():
    os.environ['QMETRIC_TEST_DELAY_US'] = '50000'
    with tempfile.TemporaryDirectory(prefix='qmetric-probe-skip-') as tmp:
        probe = Probe(tmp, CONFIG)
        try:
            _, s = probe.wait(lambda s: (get(s, 'qmetric_skipped_frames_total', probe='behind') or 0) >= 20
                              and (get(s, 'qmetric_windows_total', probe='keeps-up') or 0) >= 3,
                              "the slow probe skipping pairs", limit=30)
        finally:
            probe.stop()
    skipped = get(s, 'qmetric_skipped_frames_total', probe='behind')
    frames = get(s, 'qmetric_frames_total', probe='behind')
    if not frames or skipped >= frames:
        fail("behind: %s compared, %s skipped" % (frames, skipped))
    calm = get(s, 'qmetric_skipped_frames_total', probe='keeps-up')
    if calm != 0:
        fail("the probe that keeps up skipped %s pairs" % calm)
    print("PASS: %d of %d compared pairs skipped by the probe behind its source, 0 by the one "
          "that keeps up" % (skipped, frames))
    return 0


if __name__ == '__main__':
    sys.exit(main())
