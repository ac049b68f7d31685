#!/usr/bin/env python3
"""qmetric-probe end to end (loopback only, every wait bounded).

  probe_test.py expo        the exposition: exact values, promtool check metrics
  probe_test.py prometheus  a real Prometheus scrapes the probe every second;
                            its HTTP API returns the probe's values

Environment: QMETRIC_PROBE (the binary), GST_PLUGIN_PATH_1_0 and
QMETRIC_MODEL_PATH (as for the element tests).  Exit 77 (skip) when
promtool/prometheus is missing.
"""
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

SKIP = 77

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

[broken]
pipeline=videotestsrc ! video/x-raw,width=160,height=120 ! q.ref_sink videotestsrc ! video/x-raw,width=320,height=240 ! q.dist_sink qmetric name=q metrics=psnr ! fakesink
"""

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def parse_expo(text):
    """{(name, frozenset(labels)): value}"""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith('#'):
            continue
        m = SAMPLE.match(line)
        if not m:
            fail("unparsable line: %r" % line)
        labels = frozenset(LABEL.findall(m.group(3) or ''))
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def get(series, name, **labels):
    return series.get((name, frozenset(labels.items())))


class Probe:
    def __init__(self, tmp):
        for name, quality in (('ref', 90), ('dist', 10)):
            subprocess.run(
                ['gst-launch-1.0', '-q', 'videotestsrc', 'num-buffers=30', 'pattern=ball', '!',
                 'video/x-raw,width=160,height=120,framerate=10/1', '!', 'jpegenc',
                 'quality=%d' % quality, '!', 'avimux', '!', 'filesink',
                 'location=' + os.path.join(tmp, name + '.avi')], check=True, timeout=30)
        conf = os.path.join(tmp, 'probes.conf')
        with open(conf, 'w') as f:
            f.write(CONFIG.replace('@TMP@', tmp))
        exe = os.environ.get('QMETRIC_PROBE', 'build/tools/probe/qmetric-probe')
        self.proc = subprocess.Popen(
            [exe, '--config', conf, '--listen', '127.0.0.1:0', '--duration', '60'],
            stdout=subprocess.PIPE, stderr=open(os.path.join(tmp, 'probe.err'), 'w'),
            text=True)
        line = self.proc.stdout.readline()
        m = re.search(r'serving (http://127\.0\.0\.1:(\d+)/metrics)', line)
        if not m:
            self.stop()
            fail("qmetric-probe did not start: %r" % line)
        self.url, self.port = m.group(1), int(m.group(2))

    def scrape(self):
        with urllib.request.urlopen(self.url, timeout=5) as r:
            ctype = r.headers.get('Content-Type')
            if not ctype.startswith('text/plain; version=0.0.4'):
                fail("content type %s" % ctype)
            return r.read().decode()

    def wait(self, cond, what, limit=25):
        """Scrape until cond(series) holds (at most `limit` seconds)."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            text = self.scrape()
            s = parse_expo(text)
            if cond(s):
                return text, s
            time.sleep(0.5)
        fail("after %d s: %s\n%s" % (limit, what, text))

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def ready(s):
    return ((get(s, 'qmetric_windows_total', probe='static') or 0) >= 2 and
            (get(s, 'qmetric_probe_errors_total', probe='broken') or 0) >= 2 and
            (get(s, 'qmetric_probe_restarts_total', probe='files') or 0) >= 1)


def check_values(s):
    up = get(s, 'qmetric_probe_up', probe='static')
    if up != 1:
        fail("static probe up = %s" % up)
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
    frames = get(s, 'qmetric_frames_total', probe='files')
    windows = get(s, 'qmetric_windows_total', probe='files')
    if get(s, 'qmetric_probe_errors_total', probe='files') != 0 or \
            frames < 30 or frames != 10 * windows or \
            get(s, 'qmetric_window_pairs', probe='files') != 10:
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
        import json
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
        if up != {'static': 1.0, 'broken': 0.0}:
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
        server.terminate()
        probe.stop()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ('expo', 'prometheus'):
        print(__doc__)
        return 2
    with tempfile.TemporaryDirectory(prefix='qmetric-probe-test-') as tmp:
        return test_expo(tmp) if sys.argv[1] == 'expo' else test_prometheus(tmp)


if __name__ == '__main__':
    sys.exit(main())
