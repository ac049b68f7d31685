#!/usr/bin/env python3
"""Soak of qmetric-probe (docs/robustness.md, "The exporter"): N probes on
small live UDP sources for DURATION seconds while

  - a client scrapes /metrics every second and checks every answer: a probe
    whose sender has been stopped for the stall timeout (3 s) is down (up 0)
    with no window series; up 0 never comes with window scores; a probe fed
    again is up within 60 s (a stall of a fed probe, when the machine is too
    loaded to score within the stall timeout, is counted and reported);
  - a hostile client opens connections and trickles half heads, announces
    huge bodies, sends garbage, connects and drops (at most 64 of its
    connections open at once);
  - every 20 s one sender stops, for 5 to 15 s, and starts again;

and samples the exporter's RSS and descriptors every 10 s.  The reference
sample is taken after a warm-up without the hostile client, the final one
after the hostile client stopped and the server dropped its connections
(header timeout 5 s), every sender running: both see the same work.
Everything is on 127.0.0.1; every loop is bounded in count and time.

  probe_soak.py [--duration S] [--probes N] [--out DIR] [--seed N]

Exit 0 when every check held and RSS and descriptors are flat (final
against reference: RSS within --max-growth-kib, descriptors equal); writes
DIR/samples.tsv (seconds, RSS KiB, descriptors, scrapes, checks) and
DIR/summary.json.  Environment: QMETRIC_PROBE, GST_PLUGIN_PATH_1_0.
"""
import argparse
import json
import os
import random
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from probe_common import (Probe, fd_kinds, fds, free_udp_port, parse_expo, rss_kib,  # noqa: E402
                          stop_process, udp_probe_pipeline, udp_sender)

# the probes' stall and restart timeouts
STALL, RESTART = 3, 10
# sender stopped this long: the probe must be down (the stall timeout, a
# tick of 0.25 s, a scrape that may be one second old)
DOWN_AFTER = STALL + 1.5
# sender running this long: the probe has had the time to come back (a
# restart delay of up to 4 s after the quiet restarts of a stop, the
# pipeline's start); a later stall is counted as the machine's load
UP_AFTER = 20
# a probe fed for this long must have come back up
FED_DOWN_MAX = 60
HEADER_TIMEOUT = 5


class Sender:
    def __init__(self, port):
        self.port, self.proc, self.since = port, None, time.monotonic()

    def start(self):
        self.proc = udp_sender(self.port)
        self.since = time.monotonic()

    def stop(self):
        if self.proc:
            stop_process(self.proc)
            self.proc = None
        self.since = time.monotonic()

    def running(self):
        return self.proc is not None


def hostile(port, stop, stats, rng):
    """Connections that trickle, announce bodies, send garbage, drop."""
    held = []
    heads = [b'GET /metrics HTTP/1.1\r\nHo', b'POST /metrics HTTP/1.1\r\nHost: a\r\n'
             b'Content-Length: 1099511627776\r\n\r\n', b'\x00\xff garbage \r\n\r\n',
             b'GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n',
             b'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: a\r\n\r\n', b'']
    while not stop.is_set():
        try:
            if len(held) < 64:
                s = socket.socket()
                s.settimeout(0.5)
                s.connect(('127.0.0.1', port))
                s.setblocking(False)
                h = rng.choice(heads)
                if h:
                    s.send(h)
                held.append((s, time.monotonic() + rng.uniform(0.1, 15)))
                stats['opened'] += 1
            now = time.monotonic()
            keep = []
            for s, until in held:
                try:
                    if now >= until:
                        s.close()
                        continue
                    s.send(b'x' * rng.choice((1, 1, 1, 65536)))
                    try:
                        s.recv(65536)
                    except BlockingIOError:
                        pass
                    keep.append((s, until))
                except OSError:
                    s.close()
                    stats['dropped_by_server'] += 1
            held = keep
        except OSError:
            stats['refused'] += 1
        time.sleep(0.02)
    for s, _ in held:
        s.close()


def check(series, names, senders, now, counts, failures, t, episodes):
    for name, snd in zip(names, senders):
        up = series.get(('qmetric_probe_up', frozenset({('probe', name)})))
        scores = any(n == 'qmetric_window_score' and ('probe', name) in lab for n, lab in series)
        quiet = now - snd.since
        counts['checks'] += 1
        if up == 1 and not scores:
            # a window of 1 s: the first one may not have ended yet
            counts['up_without_window'] += 1
        if up != 1 and scores:
            failures.append("%.0f s: %s down (%s) with window scores" % (t, name, up))
        if not snd.running() and quiet > DOWN_AFTER and up != 0:
            failures.append("%.0f s: %s up %s, its sender stopped %.1f s ago" % (t, name, up, quiet))
        # fed but not scoring: after a start, the restart delay; later, a
        # machine too loaded to score within the stall timeout (then up 0
        # is the truth).  An episode longer than FED_DOWN_MAX is a failure.
        ep = episodes.get(name)
        if snd.running() and up != 1:
            if ep is None:
                episodes[name] = ep = now
            if now - max(ep, snd.since) > FED_DOWN_MAX:
                failures.append("%.0f s: %s down for %.0f s while fed" % (
                    t, name, now - max(ep, snd.since)))
        elif ep is not None:
            if snd.running() and ep - snd.since > UP_AFTER:
                counts['down_while_fed'] += 1
                counts['longest_down_while_fed_s'] = max(counts['longest_down_while_fed_s'],
                                                         round(now - ep, 1))
            episodes[name] = None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--duration', type=float, default=3600)
    ap.add_argument('--probes', type=int, default=8)
    ap.add_argument('--out', default=None)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--warmup', type=float, default=None,
                    help='seconds before the reference sample (default: a tenth, 10 to 120 s)')
    ap.add_argument('--max-growth-kib', type=int, default=4096)
    args = ap.parse_args()
    warmup = args.warmup if args.warmup is not None else min(120, max(10, args.duration / 10))
    rng = random.Random(args.seed)
    out = args.out or tempfile.mkdtemp(prefix='qmetric-probe-soak-')
    os.makedirs(out, exist_ok=True)

    senders = [Sender(free_udp_port()) for _ in range(args.probes)]
    names = ['ch%d' % i for i in range(args.probes)]
    config = ''.join('[%s]\npipeline=%s\nstall-timeout=%ds\nrestart-timeout=%ds\n\n' % (
        n, udp_probe_pipeline(s.port, 'psnr,vmaf' if i < 2 else 'psnr'), STALL, RESTART)
        for i, (n, s) in enumerate(zip(names, senders)))
    probe = Probe(out, config, duration=int(args.duration + warmup + 120), name='soak',
                  extra=('--header-timeout', str(HEADER_TIMEOUT)))
    for s in senders:
        s.start()
    end = time.monotonic() + warmup
    while time.monotonic() < end:
        probe.try_scrape()
        time.sleep(1)
    ref = (0, rss_kib(probe.proc.pid), fds(probe.proc.pid))
    ref_kinds = fd_kinds(probe.proc.pid)
    stop = threading.Event()
    hstats = {'opened': 0, 'dropped_by_server': 0, 'refused': 0}
    hthread = threading.Thread(target=hostile, args=(probe.port, stop, hstats, rng))
    hthread.start()

    t0 = time.monotonic()
    counts = {'scrapes': 0, 'checks': 0, 'up_without_window': 0, 'scrape_failed': 0,
              'stops': 0, 'down_while_fed': 0, 'longest_down_while_fed_s': 0}
    episodes = {}
    failures, samples, slowest = [], [], 0.0
    next_sample = next_event = t0 + 10
    stopped = None          # (sender, when to restart)
    samples_f = open(os.path.join(out, 'samples.tsv'), 'w')
    samples_f.write('seconds\trss_kib\tdescriptors\tscrapes\tchecks\n')
    last, last_kinds = None, None
    try:
        while time.monotonic() - t0 < args.duration and len(failures) < 20:
            tick = time.monotonic()
            took, text = probe.try_scrape(timeout=5)
            slowest = max(slowest, took)
            counts['scrapes'] += 1
            if text is None:
                counts['scrape_failed'] += 1
                failures.append("%.0f s: a scrape failed" % (tick - t0))
            else:
                check(parse_expo(text), names, senders, time.monotonic(), counts, failures,
                      tick - t0, episodes)
            now = time.monotonic()
            if stopped and now >= stopped[1]:
                stopped[0].start()
                stopped = None
            if not stopped and now >= next_event:
                snd = senders[counts['stops'] % len(senders)]
                snd.stop()
                counts['stops'] += 1
                stopped = (snd, now + rng.uniform(5, 15))
                next_event = now + 20
            if now >= next_sample:
                smp = (round(now - t0), rss_kib(probe.proc.pid), fds(probe.proc.pid),
                       counts['scrapes'], counts['checks'])
                samples.append(smp)
                samples_f.write('\t'.join(map(str, smp)) + '\n')
                samples_f.flush()
                next_sample += 10
            time.sleep(max(0, 1 - (time.monotonic() - tick)))
        # the same work as at the reference: no hostile connection left,
        # every sender running and scored again
        stop.set()
        hthread.join(30)
        if stopped:
            stopped[0].start()
        end = time.monotonic() + FED_DOWN_MAX
        while time.monotonic() < end:
            took, text = probe.try_scrape()
            s = parse_expo(text or '')
            if time.monotonic() > end - FED_DOWN_MAX + HEADER_TIMEOUT + 2 and all(
                    s.get(('qmetric_probe_up', frozenset({('probe', n)}))) == 1 for n in names):
                break
            time.sleep(1)
        # the server closes the last scrape's connection after its answer
        time.sleep(1)
        last = (round(time.monotonic() - t0), rss_kib(probe.proc.pid), fds(probe.proc.pid))
        last_kinds = fd_kinds(probe.proc.pid)
        text = probe.scrape()
        with open(os.path.join(out, 'final.txt'), 'w') as f:
            f.write(text)
        s = parse_expo(text)
        down = [n for n in names if s.get(('qmetric_probe_up', frozenset({('probe', n)}))) != 1]
        if down:
            failures.append("at the end, with every sender running: %s down" % down)
    finally:
        stop.set()
        hthread.join(30)
        for snd in senders:
            snd.stop()
        probe.stop()
        samples_f.close()

    summary = {
        'duration_s': args.duration, 'probes': args.probes, 'warmup_s': warmup,
        'rss_kib': {'reference': ref[1], 'final': last and last[1],
                    'max': max((x[1] for x in samples), default=None)},
        'descriptors': {'reference': ref[2], 'final': last and last[2],
                        'max': max((x[2] for x in samples), default=None),
                        'reference_kinds': ref_kinds, 'final_kinds': last_kinds},
        'slowest_scrape_s': round(slowest, 3), 'hostile': hstats, **counts,
        'failures': failures,
    }
    with open(os.path.join(out, 'summary.json'), 'w') as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary, indent=1))
    if not last:
        print("FAIL: no final sample")
        return 1
    if last[1] - ref[1] > args.max_growth_kib:
        failures.append("RSS grew %d KiB after the warm-up" % (last[1] - ref[1]))
    if last[2] != ref[2]:
        failures.append("descriptors %d -> %d" % (ref[2], last[2]))
    if counts['stops'] == 0:
        failures.append("no source was stopped")
    if failures:
        print("FAIL:\n  " + "\n  ".join(failures))
        return 1
    print("PASS: %d scrapes, %d checks, %d source stops, %d hostile connections; RSS %d -> %d "
          "KiB, descriptors %d -> %d" % (counts['scrapes'], counts['checks'], counts['stops'],
                                         hstats['opened'], ref[1], last[1], ref[2], last[2]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
