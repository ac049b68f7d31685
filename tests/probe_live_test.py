#!/usr/bin/env python3
"""qmetric-probe's liveness (loopback only, every wait bounded): a probe fed
over UDP whose sender stops and comes back, and a probe whose source never
sends.

  - fed: scoring, up 1, window scores served; sender stopped: stalled, up 0,
    the window series gone (Prometheus marks them stale) within the stall
    timeout, then restarted as an error whose text names the silent inputs;
    sender back: scoring again.
  - dead: waiting, up 0, then errors and restarts counted, the reason in
    qmetric_probe_last_error_info and on stderr.

Environment: QMETRIC_PROBE, GST_PLUGIN_PATH_1_0 (as for probe_test.py).
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_common import (Probe, fail, free_udp_port, get, stop_process,  # noqa: E402
                          udp_probe_pipeline, udp_sender)

CONFIG = """
[fed]
pipeline=%s
stall-timeout=1s
restart-timeout=4s

[dead]
pipeline=%s
stall-timeout=1s
restart-timeout=3s
"""


def state(s, probe, label='state'):
    for (name, labels), v in s.items():
        lab = dict(labels)
        if name == 'qmetric_probe_state' and lab['probe'] == probe and v == 1:
            return lab.get(label)
    return None


def window_series(s, probe):
    return [name for (name, labels) in s if name.startswith('qmetric_window_')
            and name != 'qmetric_window_timestamp_seconds' and ('probe', probe) in labels]


def last_error(s, probe):
    for (name, labels) in s:
        lab = dict(labels)
        if name == 'qmetric_probe_last_error_info' and lab['probe'] == probe:
            return lab['error']
    return None


def main():
    fed_port, dead_port = free_udp_port(), free_udp_port()
    with tempfile.TemporaryDirectory(prefix='qmetric-probe-live-') as tmp:
        probe = Probe(tmp, CONFIG % (udp_probe_pipeline(fed_port, 'psnr'),
                                     udp_probe_pipeline(dead_port, 'psnr')))
        send = udp_sender(fed_port, fps=20)
        try:
            return run(probe, send, fed_port)
        finally:
            stop_process(send)
            probe.stop()


def run(probe, send, fed_port):
    _, s = probe.wait(lambda s: get(s, 'qmetric_probe_up', probe='fed') == 1 and
                      get(s, 'qmetric_window_score', probe='fed', feature='psnr_y',
                          stat='mean') is not None, "the fed probe scoring", limit=20)
    if state(s, 'fed') != 'scoring' or state(s, 'dead') not in ('starting', 'waiting'):
        fail("states: fed %s, dead %s" % (state(s, 'fed'), state(s, 'dead')))
    if get(s, 'qmetric_probe_up', probe='dead') != 0:
        fail("the dead probe is up")
    # past its stall timeout, the dead probe waits with a reason
    probe.wait(lambda s: state(s, 'dead') == 'waiting' and
               'both sources silent' in (state(s, 'dead', 'reason') or ''),
               "the dead probe waiting with its reason", limit=15)

    # the sender stops: within the stall timeout (1 s) and a tick, stalled
    stop_process(send)
    t0 = time.monotonic()
    _, s = probe.wait(lambda s: get(s, 'qmetric_probe_up', probe='fed') == 0,
                      "the fed probe down after its sender stopped", limit=5)
    took = time.monotonic() - t0
    # the reason is a label refreshed every tick: on a loaded machine the last
    # buffers may pass the pads more than a tick after the last score, so it
    # may take one more tick to read "either input"
    if 'either input' not in (state(s, 'fed', 'reason') or ''):
        _, s = probe.wait(lambda s: 'either input' in (state(s, 'fed', 'reason') or '') or
                          get(s, 'qmetric_probe_up', probe='fed') != 0,
                          "the stalled probe's reason naming both inputs", limit=2)
    if state(s, 'fed') != 'stalled' or window_series(s, 'fed') or \
            'either input' not in (state(s, 'fed', 'reason') or ''):
        fail("after the stop: state %s (%s), window series %s" % (
            state(s, 'fed'), state(s, 'fed', 'reason'), window_series(s, 'fed')))
    if get(s, 'qmetric_window_timestamp_seconds', probe='fed') is None:
        fail("the last window's time is gone")
    # then restarted as an error naming both inputs silent
    _, s = probe.wait(lambda s: (get(s, 'qmetric_probe_errors_total', probe='fed') or 0) >= 1 and
                      (get(s, 'qmetric_probe_restarts_total', probe='fed') or 0) >= 1,
                      "the stalled probe restarted", limit=10)
    err = last_error(s, 'fed') or ''
    if 'no pair scored within' not in err or 'either input' not in err:
        fail("last error of the stalled probe: %r" % err)
    if get(s, 'qmetric_probe_up', probe='fed') != 0 or window_series(s, 'fed'):
        fail("a restarted probe with no source is up or has window series")

    # the sender comes back: scoring again
    send2 = udp_sender(fed_port, fps=20)
    try:
        _, s = probe.wait(lambda s: get(s, 'qmetric_probe_up', probe='fed') == 1 and
                          window_series(s, 'fed'), "the fed probe scoring again", limit=25)
    finally:
        stop_process(send2)

    # the dead probe: counted errors and restarts, a reason, log lines
    dead_err = last_error(s, 'dead') or ''
    if (get(s, 'qmetric_probe_errors_total', probe='dead') or 0) < 1 or \
            (get(s, 'qmetric_probe_restarts_total', probe='dead') or 0) < 1 or \
            'both sources silent' not in dead_err or get(s, 'qmetric_probe_up', probe='dead'):
        fail("dead probe: errors %s, restarts %s, error %r" % (
            get(s, 'qmetric_probe_errors_total', probe='dead'),
            get(s, 'qmetric_probe_restarts_total', probe='dead'), dead_err))
    log = probe.stderr()
    for want in ('[fed] scoring -> stalled: no pair scored for', '[fed] stalled -> failed',
                 '[fed] waiting -> scoring', '[dead] waiting -> failed: no pair scored within',
                 'both sources silent'):
        if want not in log:
            fail("stderr lacks %r:\n%s" % (want, log))
    print("PASS: stalled %.1f s after the sender stopped, window series withdrawn, "
          "restarted, scoring again; the dead probe counted: %r" % (took, dead_err))
    return 0


if __name__ == '__main__':
    sys.exit(main())
