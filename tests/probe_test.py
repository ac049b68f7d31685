#!/usr/bin/env python3
"""qmetric-probe end to end (loopback only, every wait bounded).

  probe_test.py expo        the exposition: exact values, promtool check metrics
  probe_test.py prometheus  a real Prometheus scrapes the probe every second;
                            its HTTP API returns the probe's values

Environment: QMETRIC_PROBE (the binary), GST_PLUGIN_PATH_1_0 and
QMETRIC_MODEL_PATH (as for the element tests).  Exit 77 (skip) when
promtool/prometheus is missing.
"""
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_common import (SKIP, Probe as ProbeProc, fail, get, names_of,  # noqa: E402
                          stop_process)

# "static": a still picture (SMPTE 100% bars, no noise) against a brighter copy, 10 frames/s
# paced by the sink's clock: every 1 s window holds 10 identical pairs, so
# every window's statistics are the same and min = max = mean.
# "broken": sizes differ, so the element stops with an error at once; the
# probe restarts it with backoff and counts the errors.
# "files": two 3 s files by URI (the probe builds the pipeline); at their end
# the probe restarts it, counting a restart but no error.
CONFIG = """
[files]
reference=file://@TMP@/ref.avi
distorted=file://@TMP@/dist.avi
metrics=psnr

[static]
pipeline=videotestsrc pattern=smpte100 ! video/x-raw,format=I420,width=160,height=120,framerate=10/1 ! tee name=t t. ! queue ! q.ref_sink t. ! queue ! videobalance brightness=0.08 ! q.dist_sink qmetric name=q metrics=psnr,vmaf threads=1 ! fakesink sync=true
features=*
stats=mean,harmonic-mean,min,max,p1,p5

[default]
pipeline=videotestsrc pattern=smpte100 ! video/x-raw,format=I420,width=160,height=120,framerate=10/1 ! tee name=t t. ! queue ! q.ref_sink t. ! queue ! videobalance brightness=0.08 ! q.dist_sink qmetric name=q metrics=vmaf threads=1 ! fakesink sync=true

[ssimulacra2]
pipeline=videotestsrc pattern=smpte100 ! video/x-raw,format=I420,width=160,height=120,framerate=10/1 ! tee name=t t. ! queue ! q.ref_sink t. ! queue ! videobalance brightness=0.08 ! q.dist_sink qmetric name=q metrics=ssimulacra2,psnr threads=1 ! fakesink sync=true

[broken]
pipeline=videotestsrc ! video/x-raw,width=160,height=120 ! q.ref_sink videotestsrc ! video/x-raw,width=320,height=240 ! q.dist_sink qmetric name=q metrics=psnr ! fakesink
"""

# The series of a VMAF probe with the default features= and stats=
# (docs/probe.md, "Series"), while it scores: 17, plus the histogram's 15.
DEFAULT_SERIES = sorted(
    [('qmetric_probe_up', ()), ('qmetric_probe_state', (('state', 'scoring'),))]
    + [(n, ()) for n in ('qmetric_frames_total', 'qmetric_unreadable_frames_total',
                         'qmetric_skipped_frames_total',
                         'qmetric_windows_total', 'qmetric_probe_errors_total',
                         'qmetric_probe_restarts_total', 'qmetric_window_pairs',
                         'qmetric_window_end_running_time_seconds',
                         'qmetric_window_timestamp_seconds',
                         'qmetric_frame_vmaf_sum', 'qmetric_frame_vmaf_count')]
    + [('qmetric_unmatched_frames_total', (('side', s),)) for s in ('distorted', 'reference')]
    + [('qmetric_window_score', (('feature', 'vmaf'), ('stat', st))) for st in ('mean', 'min', 'p5')]
    + [('qmetric_window_frames', (('feature', 'vmaf'),))]
    + [('qmetric_frame_vmaf_bucket', (('le', le),)) for le in
       ('10', '20', '30', '40', '50', '60', '70', '80', '85', '90', '95', '100', '+Inf')])


class Probe(ProbeProc):
    def __init__(self, tmp):
        for name, quality in (('ref', 90), ('dist', 10)):
            subprocess.run(
                ['gst-launch-1.0', '-q', 'videotestsrc', 'num-buffers=30', 'pattern=ball', '!',
                 'video/x-raw,width=160,height=120,framerate=10/1', '!', 'jpegenc',
                 'quality=%d' % quality, '!', 'avimux', '!', 'filesink',
                 'location=' + os.path.join(tmp, name + '.avi')], check=True, timeout=30)
        super().__init__(tmp, CONFIG.replace('@TMP@', tmp), duration=60)


def ready(s):
    return ((get(s, 'qmetric_windows_total', probe='static') or 0) >= 2 and
            (get(s, 'qmetric_windows_total', probe='default') or 0) >= 2 and
            (get(s, 'qmetric_windows_total', probe='ssimulacra2') or 0) >= 2 and
            (get(s, 'qmetric_probe_errors_total', probe='broken') or 0) >= 2 and
            (get(s, 'qmetric_probe_restarts_total', probe='files') or 0) >= 1)


def check_values(s):
    got = names_of(s, 'default')
    if got != DEFAULT_SERIES:
        fail("series of a default VMAF probe (%d, want %d):\n%s" % (
            len(got), len(DEFAULT_SERIES), "\n".join(map(str, got))))
    # a probe without a VMAF score has no histogram; with the default
    # features=, PSNR exports psnr_y only
    files = names_of(s, 'files')
    if any(n.startswith('qmetric_frame_vmaf') for n, _ in files) or \
            any(n == 'qmetric_window_score' and ('feature', 'psnr_y') not in lab
                for n, lab in files):
        fail("series of a PSNR probe: %s" % files)
    # SSIMULACRA2 with the default features=: its score beside psnr_y, the
    # same in every window of still pictures, below 100 (the pictures differ)
    s2 = sorted(dict(lab)['feature'] for n, lab in names_of(s, 'ssimulacra2')
                if n == 'qmetric_window_frames')
    v = get(s, 'qmetric_window_score', probe='ssimulacra2', feature='ssimulacra2', stat='mean')
    lo = get(s, 'qmetric_window_score', probe='ssimulacra2', feature='ssimulacra2', stat='min')
    if s2 != ['psnr_y', 'ssimulacra2'] or v is None or not -100 < v < 100 or \
            abs(v - lo) > 1e-12 * abs(lo):
        fail("SSIMULACRA2 probe: features %s, window mean %s, min %s" % (s2, v, lo))
    if get(s, 'qmetric_probe_state', probe='broken', state='scoring') is not None:
        fail("the broken probe is scoring")
    err = [dict(lab)['error'] for (n, lab) in s if n == 'qmetric_probe_last_error_info'
           and ('probe', 'broken') in lab]
    if len(err) != 1 or 'differ' not in err[0] or len(err[0].encode()) > 200:
        fail("last error of the broken probe: %s" % err)
    up = get(s, 'qmetric_probe_up', probe='static')
    if up != 1:
        fail("static probe up = %s, state %s" % (up, [k for k in names_of(s, "static")
                                                      if k[0] == "qmetric_probe_state"]))
    if get(s, 'qmetric_probe_up', probe='broken') != 0:
        fail("broken probe is up")
    if get(s, 'qmetric_window_pairs', probe='static') != 10:
        fail("pairs in the last window: %s" % get(s, 'qmetric_window_pairs', probe='static'))
    # a 1 s window of 10 frames/s: every feature has 10 frames; still
    # pictures: all six statistics of a feature are equal
    n = 0
    for (name, labels), v in s.items():
        lab = dict(labels)
        if name == 'qmetric_window_frames' and lab['probe'] == 'static':
            if v != 10:
                fail("%s frames in the window: %s" % (lab['feature'], v))
        if name != 'qmetric_window_score' or lab['probe'] != 'static':
            continue
        lo = get(s, name, probe='static', feature=lab['feature'], stat='min')
        # max and the percentiles are the min itself; the means divide a sum
        # of ten equal values by ten (one rounding apart)
        if lab['stat'] in ('mean', 'harmonic-mean'):
            ok = abs(v - lo) <= 1e-12 * max(1, abs(lo))
        else:
            ok = v == lo
        if not ok:
            fail("%s %s = %r, min %r" % (lab['feature'], lab['stat'], v, lo))
        n += 1
    if n < 6 * 10:
        fail("only %d window scores" % n)
    vmaf = get(s, 'qmetric_window_score', probe='static', feature='vmaf', stat='mean')
    if vmaf is None or not 0 < vmaf < 100:
        fail("window VMAF %s" % vmaf)
    # the brightness shift leaves the chroma alone: PSNR of Cb at the cap
    if get(s, 'qmetric_window_score', probe='static', feature='psnr_cb', stat='min') != 60:
        fail("psnr_cb")
    # histogram: cumulative, complete, holding every frame's VMAF
    bounds = sorted(((float(dict(l)['le']), v) for (nm, l), v in s.items()
                     if nm == 'qmetric_frame_vmaf_bucket' and dict(l)['probe'] == 'static'))
    if [b for b, _ in bounds][-1] != math.inf or any(
            bounds[i][1] > bounds[i + 1][1] for i in range(len(bounds) - 1)):
        fail("histogram buckets %s" % bounds)
    count = get(s, 'qmetric_frame_vmaf_count', probe='static')
    if bounds[-1][1] != count or count < get(s, 'qmetric_frames_total', probe='static'):
        fail("histogram count %s" % count)
    # every frame has the window's VMAF: they all sit in one bucket
    total = get(s, 'qmetric_frame_vmaf_sum', probe='static')
    if abs(total - count * vmaf) > 1e-6 * total:
        fail("histogram sum %s, count %s x %s" % (total, count, vmaf))
    if get(s, 'qmetric_probe_restarts_total', probe='broken') < 1:
        fail("broken probe not restarted")
    if get(s, 'qmetric_probe_errors_total', probe='static') != 0:
        fail("static probe had errors")
    if get(s, 'qmetric_unmatched_frames_total', probe='static', side='reference') != 0:
        fail("unmatched frames on a paced pipeline")
    # files: 30 frames at 10 frames/s are three windows of 10 pairs per run
    # (the last window is not exported while the probe restarts at EOS)
    frames = get(s, 'qmetric_frames_total', probe='files')
    windows = get(s, 'qmetric_windows_total', probe='files')
    if get(s, 'qmetric_probe_errors_total', probe='files') != 0 or \
            frames < 30 or frames != 10 * windows or \
            get(s, 'qmetric_window_pairs', probe='files') not in (None, 10):
        fail("files probe: %s frames in %s windows, %s errors" % (
            frames, windows, get(s, 'qmetric_probe_errors_total', probe='files')))


def test_expo(tmp):
    promtool = shutil.which('promtool')
    probe = Probe(tmp)
    try:
        text, s = probe.wait(ready, "two windows of 'static', two errors of 'broken'")
    finally:
        probe.stop()
    check_values(s)
    if not promtool:
        print("SKIP: promtool not found (Debian package prometheus); values checked")
        return SKIP
    r = subprocess.run([promtool, 'check', 'metrics'], input=text, text=True,
                       capture_output=True)
    if r.returncode != 0:
        fail("promtool check metrics: %s%s" % (r.stdout, r.stderr))
    print("PASS: %d samples, promtool accepts them" % len(s))
    return 0


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def query(port, q):
    url = 'http://127.0.0.1:%d/api/v1/query?%s' % (port, urllib.parse.urlencode({'query': q}))
    with urllib.request.urlopen(url, timeout=5) as r:
        d = json.load(r)
    if d.get('status') != 'success':
        fail("query %s: %s" % (q, d))
    return d['data']['result']


def test_prometheus(tmp):
    prom = shutil.which('prometheus')
    if not prom:
        print("SKIP: prometheus not found (Debian package prometheus)")
        return SKIP
    probe = Probe(tmp)
    pport = free_port()
    conf = os.path.join(tmp, 'prometheus.yml')
    with open(conf, 'w') as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n  - job_name: qmetric\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d']\n" % probe.port)
    log = open(os.path.join(tmp, 'prometheus.log'), 'w')
    server = subprocess.Popen(
        [prom, '--config.file=' + conf, '--storage.tsdb.path=' + os.path.join(tmp, 'data'),
         '--web.listen-address=127.0.0.1:%d' % pport, '--log.level=warn'],
        stdout=log, stderr=log)
    try:
        # the probe settles first (its values are then those of every window)
        _, s = probe.wait(ready, "the probe's first windows")
        want = get(s, 'qmetric_window_score', probe='static', feature='vmaf', stat='mean')
        end = time.monotonic() + 25
        got = {}
        while time.monotonic() < end:
            try:
                got = {
                    'up': query(pport, 'qmetric_probe_up'),
                    'vmaf': query(pport, 'qmetric_window_score{probe="static",'
                                  'feature="vmaf",stat="mean"}'),
                    'pairs': query(pport, 'qmetric_window_pairs{probe="static"}'),
                    'errors': query(pport, 'qmetric_probe_errors_total{probe="broken"}'),
                    'target': query(pport, 'up{job="qmetric"}'),
                }
            except OSError:
                got = {}      # not listening yet
            if got and got['vmaf'] and got['errors'] and \
                    float(got['errors'][0]['value'][1]) >= 2:
                break
            time.sleep(1)
        else:
            fail("Prometheus never had the series: %s" % got)
        up = {r['metric']['probe']: float(r['value'][1]) for r in got['up']
              if r['metric']['probe'] != 'files'}
        if up != {'static': 1.0, 'default': 1.0, 'ssimulacra2': 1.0, 'broken': 0.0}:
            fail("qmetric_probe_up in Prometheus: %s" % up)
        vmaf = float(got['vmaf'][0]['value'][1])
        if vmaf != want:
            fail("VMAF in Prometheus %r, served %r" % (vmaf, want))
        if float(got['pairs'][0]['value'][1]) != 10:
            fail("pairs %s" % got['pairs'])
        if float(got['target'][0]['value'][1]) != 1:
            fail("scrape target down: %s" % got['target'])
        # the histogram arrived whole: its +Inf bucket is its count
        inf = query(pport, 'qmetric_frame_vmaf_bucket{probe="static",le="+Inf"} - '
                    'ignoring(le) qmetric_frame_vmaf_count{probe="static"}')
        if not inf or float(inf[0]['value'][1]) != 0:
            fail("histogram in Prometheus: %s" % inf)
        print("PASS: Prometheus has VMAF %r, up %s" % (vmaf, up))
        return 0
    finally:
        stop_process(server)
        probe.stop()


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ('expo', 'prometheus'):
        print(__doc__)
        return 2
    with tempfile.TemporaryDirectory(prefix='qmetric-probe-test-') as tmp:
        return test_expo(tmp) if sys.argv[1] == 'expo' else test_prometheus(tmp)


if __name__ == '__main__':
    sys.exit(main())
