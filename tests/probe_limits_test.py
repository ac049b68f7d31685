#!/usr/bin/env python3
"""qmetric-probe's HTTP server under the attacks of issue 24 (loopback only;
every connection, request loop and wait bounded in count and time).

  probe_limits_test.py answers      what each kind of request is answered
  probe_limits_test.py descriptors  RLIMIT_NOFILE 64: 200 held connections,
                                    with the default cap and past it (EMFILE)
  probe_limits_test.py memory       request bodies and slow clients: memory
                                    back near idle, slow clients dropped

After every attack, scrapes must answer; during it too.  Environment:
QMETRIC_PROBE, GST_PLUGIN_PATH_1_0 (as for probe_test.py).
"""
import os
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_common import Probe, fail, fds, parse_expo, raw_request, rss_kib, status_of  # noqa: E402

# a small live probe: the exporter has something to serve, the pipeline's
# memory stays flat
CONFIG = """
[live]
pipeline=videotestsrc is-live=true pattern=smpte100 ! video/x-raw,format=I420,width=64,height=48,framerate=10/1 ! tee name=t t. ! queue ! q.ref_sink t. ! queue ! q.dist_sink qmetric name=q metrics=psnr threads=1 ! fakesink sync=true
"""


def must_scrape(probe, what, limit=3):
    took, text = probe.try_scrape(timeout=limit)
    if text is None or 'qmetric_probe_up{probe="live"}' not in text:
        fail("%s: /metrics did not answer within %d s\n%s" % (what, limit, probe.stderr()))
    return took


def test_answers(tmp):
    probe = Probe(tmp, CONFIG)
    try:
        port = probe.port
        cases = [
            # (request, status, closed by the server)
            (b'GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n', 200, False),
            (b'HEAD /metrics HTTP/1.1\r\nHost: a\r\n\r\n', 200, False),
            (b'GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n', 200, True),
            (b'GET http://a/metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n', 200, True),
            (b'GET /metricsfoo HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n', 404, True),
            (b'GET /metrics/x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n', 404, True),
            (b'GET /%6detrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n', 404, True),
            (b'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n', 405, True),
            (b'POST /metrics HTTP/1.1\r\nHost: a\r\n\r\n', 405, True),
            (b'OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n', 405, True),
            (b'GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n', 400, True),
            (b'GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello', 413, True),
            (b'GET /metrics HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
             413, True),
            (b'GET /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n'
             b'Transfer-Encoding: chunked\r\n\r\n', 400, True),
            (b'GET /metrics HTTP/1.1\r\n\r\n', 400, True),
            (b'GET /metrics HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n', 400, True),
            (b'GET /metrics HTTP/1.1\r\nHost : a\r\n\r\n', 400, True),
            (b'GET /metrics HTTP/2.0\r\n\r\n', 505, True),
            (b'\x16\x03\x01\x00\x05hello\r\n\r\n', 400, True),
            (b'GET /metrics HTTP/1.1\r\nHost: a\r\nX: ' + b'a' * 9000 + b'\r\n\r\n', 431, True),
        ]
        for req, want, want_closed in cases:
            ans, closed = raw_request(port, req, timeout=2)
            st = status_of(ans)
            if st != want or closed != want_closed:
                fail("%r: answered %s (closed %s), want %s (closed %s)\n%r" % (
                    req[:60], st, closed, want, want_closed, ans[:300]))
        # / is a page that links to /metrics
        ans, _ = raw_request(port, b'GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')
        if status_of(ans) != 200 or b'<a href="/metrics">' not in ans or \
                b'Content-Type: text/html' not in ans:
            fail("/: %r" % ans)
        # HEAD: the GET's length, no body; two pipelined requests, two answers
        ans, _ = raw_request(port, b'HEAD /metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')
        head, _, body = ans.partition(b'\r\n\r\n')
        if body or b'Content-Length: ' not in head:
            fail("HEAD: %r" % ans)
        ans, closed = raw_request(port, b'GET / HTTP/1.1\r\nHost: a\r\n\r\n'
                                  b'GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')
        if ans.count(b'HTTP/1.1 ') != 2 or b'HTTP/1.1 404' not in ans or not closed:
            fail("pipelined requests: %r" % ans)
        must_scrape(probe, "after the requests")
    finally:
        probe.stop()
    print("PASS: %d kinds of request answered as specified" % (len(cases) + 3))
    return 0


def open_held(port, n, send=b''):
    """n connections to port, connected without waiting (some may stay in
    the kernel's backlog), each sending `send`."""
    socks = []
    for i in range(n):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(('127.0.0.1', port))
        except BlockingIOError:
            pass
        socks.append(s)
        # in batches: past the listen backlog (128) a SYN is dropped and
        # retried seconds later, which would time the test, not the server
        if i % 50 == 49:
            time.sleep(0.05)
    if send:
        time.sleep(0.2)
        for s in socks:
            try:
                s.send(send)
            except OSError:
                pass
    return socks


def close_all(socks):
    for s in socks:
        s.close()


def exhaust(tmp, extra, name):
    """200 connections held against a process limited to 64 descriptors."""
    probe = Probe(tmp, CONFIG, extra=extra, nofile=64, name=name)
    socks = []
    try:
        must_scrape(probe, "before")
        socks = open_held(probe.port, 200, b'GET /metrics HTTP/1.1\r\n')
        time.sleep(1)
        took = must_scrape(probe, "200 connections held")
        n_fds = fds(probe.proc.pid)
        if n_fds > 64:
            fail("%d descriptors" % n_fds)
        close_all(socks)
        socks = []
        time.sleep(0.5)
        took2 = must_scrape(probe, "after the connections closed")
        # and again, many times: nothing is left behind
        for _ in range(20):
            must_scrape(probe, "repeated scrapes")
        s = parse_expo(probe.scrape())
        if s.get(('qmetric_probe_up', frozenset({('probe', 'live')}))) != 1:
            fail("the probe stopped scoring")
    finally:
        close_all(socks)
        probe.stop()
    return took, took2, probe.stderr()


def test_descriptors(tmp):
    # the default cap (half the limit): the process never runs out
    took, took2, _ = exhaust(tmp, (), 'cap')
    print("default cap: scrape in %.2f s during, %.2f s after" % (took, took2))
    # a cap above the limit: accept() meets EMFILE, and recovers
    took, took2, err = exhaust(tmp, ('--max-connections', '500'), 'emfile')
    if 'out of file descriptors' not in err:
        fail("EMFILE was not reached (or not logged):\n" + err)
    print("past the limit (EMFILE): scrape in %.2f s during, %.2f s after" % (took, took2))
    print("PASS: /metrics answers during and after 200 connections at RLIMIT_NOFILE 64")
    return 0


def send_body(port, declared, send_bytes):
    """A POST announcing `declared` bytes, sending up to send_bytes; returns
    (status, bytes sent before the server closed)."""
    s = socket.create_connection(('127.0.0.1', port), timeout=5)
    s.sendall(b'POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n' % declared)
    chunk = b'x' * (1 << 20)
    sent = 0
    try:
        while sent < send_bytes:
            sent += s.send(chunk)
    except OSError:
        pass
    ans = b''
    try:
        ans = s.recv(4096)
    except OSError:
        pass
    s.close()
    return status_of(ans), sent


def test_memory(tmp):
    probe = Probe(tmp, CONFIG, extra=('--header-timeout', '2'))
    pid = probe.proc.pid
    try:
        for _ in range(8):
            must_scrape(probe, "warm-up")
            time.sleep(0.25)
        idle, idle_fds = rss_kib(pid), fds(pid)
        # one 400 MB body, then three announcing 1 TiB (64 MB sent each)
        st, sent = send_body(probe.port, 400 << 20, 400 << 20)
        if st not in (413, None) or sent >= 400 << 20:
            fail("400 MB body: status %s, %d bytes taken" % (st, sent))
        for _ in range(3):
            send_body(probe.port, 1 << 40, 64 << 20)
        must_scrape(probe, "after the bodies")
        time.sleep(1)
        after_bodies = rss_kib(pid)
        # slow clients: 300 connections sending half a head, held
        socks = open_held(probe.port, 300, b'GET /metrics HTTP/1.1\r\nHo')
        t0 = time.monotonic()
        took = must_scrape(probe, "300 slow clients held")
        # all of them are dropped by the header timeout (2 s) or the cap
        end = time.monotonic() + 10
        alive = list(socks)
        while alive and time.monotonic() < end:
            still = []
            for s in alive:
                try:
                    if s.recv(1) != b'':
                        still.append(s)
                except BlockingIOError:
                    still.append(s)
                except OSError:
                    pass
            alive = still
            time.sleep(0.2)
        dropped_in = time.monotonic() - t0
        close_all(socks)
        if alive:
            fail("%d of 300 slow clients still held after %.1f s" % (len(alive), dropped_in))
        must_scrape(probe, "after the slow clients")
        time.sleep(1)
        after_slow, after_fds = rss_kib(pid), fds(pid)
    finally:
        probe.stop()
    print("RSS: idle %d KiB, after the bodies %d KiB, after the slow clients %d KiB; "
          "descriptors %d -> %d; scrape during %.2f s, slow clients dropped in %.1f s" % (
              idle, after_bodies, after_slow, idle_fds, after_fds, took, dropped_in))
    for what, v in (("the bodies", after_bodies), ("the slow clients", after_slow)):
        if v > idle + 5 * 1024:
            fail("RSS after %s: %d KiB, idle %d KiB" % (what, v, idle))
    if after_fds > idle_fds + 2:
        fail("descriptors: %d idle, %d after" % (idle_fds, after_fds))
    print("PASS: request bodies are refused unread, slow clients dropped, memory back to idle")
    return 0


def main():
    tests = {'answers': test_answers, 'descriptors': test_descriptors, 'memory': test_memory}
    if len(sys.argv) != 2 or sys.argv[1] not in tests:
        print(__doc__)
        return 2
    with tempfile.TemporaryDirectory(prefix='qmetric-probe-limits-') as tmp:
        return tests[sys.argv[1]](tmp)


if __name__ == '__main__':
    sys.exit(main())
