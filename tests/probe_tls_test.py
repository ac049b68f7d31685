#!/usr/bin/env python3
"""qmetric-probe with TLS and basic authentication from a Prometheus web
configuration file (loopback only, every wait bounded).

  - a self-signed certificate made here with openssl, a bcrypt hash;
  - a real Prometheus scrapes over TLS: with the password the target is up
    and the probe's series arrive; without it, or with a wrong one, the
    target is down with 401;
  - by hand: 401 without or with wrong credentials, 200 with them, an HTTP
    request on the TLS port told so, a TLS version under min_version
    dropped, stalled handshakes do not hold up a scrape;
  - a web configuration with an unknown key or a missing certificate stops
    the program at start with exit 2, naming the problem.

Exit 77 (skip) without openssl or prometheus.  Environment: QMETRIC_PROBE,
GST_PLUGIN_PATH_1_0 (as for probe_test.py).
"""
import base64
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_common import (EXE, SKIP, Probe, fail, get, raw_request, status_of,  # noqa: E402
                          stop_process)

with warnings.catch_warnings():
    warnings.simplefilter('ignore', DeprecationWarning)
    import crypt

CONFIG = """
[live]
pipeline=videotestsrc is-live=true pattern=smpte100 ! video/x-raw,format=I420,width=64,height=48,framerate=10/1 ! tee name=t t. ! queue ! q.ref_sink t. ! queue ! videobalance brightness=0.05 ! q.dist_sink qmetric name=q metrics=psnr threads=1 ! fakesink sync=true
"""
USER, PASSWORD = 'prom', 's3cret word'


def make_cert(tmp):
    cert, key = os.path.join(tmp, 'cert.pem'), os.path.join(tmp, 'key.pem')
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt',
                    'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
                    '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1',
                    '-keyout', key, '-out', cert],
                   check=True, capture_output=True, timeout=30)
    return cert, key


def web_config(tmp, text, name='web.yml'):
    path = os.path.join(tmp, name)
    with open(path, 'w') as f:
        f.write(text)
    return path


def basic(user, password):
    return 'Basic ' + base64.b64encode(('%s:%s' % (user, password)).encode()).decode()


def get_status(probe, ctx, auth=None):
    req = b'GET /metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n'
    if auth:
        req += b'Authorization: ' + auth.encode() + b'\r\n'
    ans, _ = raw_request(probe.port, req + b'\r\n', timeout=5, ssl_context=ctx)
    return status_of(ans), ans


def client_hello():
    """The bytes of a TLS ClientHello, as Python's client sends it."""
    ctx = ssl.create_default_context()
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname='127.0.0.1')
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return out.read()


def by_hand(probe, cert, tmp):
    ctx = ssl.create_default_context(cafile=cert)
    st, ans = get_status(probe, ctx)
    if st != 401 or b'WWW-Authenticate: Basic' not in ans:
        fail("without credentials: %r" % ans[:200])
    st, _ = get_status(probe, ctx, basic(USER, 'nope'))
    if st != 401:
        fail("a wrong password: %s" % st)
    st, _ = get_status(probe, ctx, basic('nobody', PASSWORD))
    if st != 401:
        fail("an unknown user: %s" % st)
    t = time.monotonic()
    st, ans = get_status(probe, ctx, basic(USER, PASSWORD))
    first = time.monotonic() - t
    if st != 200 or b'qmetric_probe_up{probe="live"}' not in ans:
        fail("with the password: %r" % ans[:200])
    t = time.monotonic()
    for _ in range(10):
        st, _ = get_status(probe, ctx, basic(USER, PASSWORD))
        if st != 200:
            fail("a remembered password: %s" % st)
    again = (time.monotonic() - t) / 10
    # plain HTTP on the TLS port
    ans, closed = raw_request(probe.port, b'GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n')
    if status_of(ans) != 400 or b'HTTPS' not in ans or not closed:
        fail("plain HTTP on the TLS port: %r" % ans)
    # stalled handshakes (a whole ClientHello, then nothing) do not hold
    # up a scrape: at most 8 run at once, the oldest gives way
    hello = client_hello()
    stalled = []
    for _ in range(30):
        s = socket.create_connection(('127.0.0.1', probe.port), timeout=2)
        s.sendall(hello)
        stalled.append(s)
    t = time.monotonic()
    st, _ = get_status(probe, ctx, basic(USER, PASSWORD))
    during = time.monotonic() - t
    for s in stalled:
        s.close()
    if st != 200 or during > 3:
        fail("a scrape behind 30 stalled handshakes: %s in %.2f s" % (st, during))
    return first, again, during


def min_version(tmp, cert, key):
    """min_version TLS13: a TLS 1.2 client is dropped, a 1.3 one served."""
    wc = web_config(tmp, "tls_server_config:\n  cert_file: %s\n  key_file: %s\n"
                    "  min_version: TLS13\n" % (cert, key), 'web13.yml')
    probe = Probe(tmp, CONFIG, extra=('--web.config.file', wc), name='tls13')
    try:
        ctx12 = ssl.create_default_context(cafile=cert)
        ctx12.maximum_version = ssl.TLSVersion.TLSv1_2
        st, _ = get_status(probe, ctx12)
        if st is not None:
            fail("a TLS 1.2 client under min_version TLS13 was answered %s" % st)
        st, _ = get_status(probe, ssl.create_default_context(cafile=cert))
        if st != 200:
            fail("a TLS 1.3 client: %s" % st)
    finally:
        probe.stop()


def example_config(tmp, cert, key):
    """examples/probe/web.yml, its files replaced by ours, is accepted."""
    example = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'examples',
                           'probe', 'web.yml')
    with open(example) as f:
        text = f.read().replace('/etc/qmetric/probe.crt', cert).replace(
            '/etc/qmetric/probe.key', key)
    wc = web_config(tmp, text, 'example.yml')
    probe = Probe(tmp, CONFIG, extra=('--web.config.file', wc), name='example')
    try:
        if not probe.url.startswith('https://'):
            fail("the example web configuration: %s" % probe.url)
        ans, _ = raw_request(probe.port, b'GET / HTTP/1.1\r\nHost: a\r\n\r\n', timeout=3,
                             ssl_context=ssl.create_default_context(cafile=cert))
        if status_of(ans) != 401 or b'X-Frame-Options: deny' not in ans:
            fail("the example web configuration: %r" % ans[:300])
    finally:
        probe.stop()


def refused_configs(tmp, cert, key):
    cases = [
        ("tls_server_config:\n  cert_file: %s\n  key_file: %s\n  cipher_suites: [x]\n"
         % (cert, key), "cipher_suites is not supported"),
        ("basic_auth_users:\n  prom: plain\n", "must be a bcrypt hash"),
        ("tls_server_config:\n  cert_file: %s/none.pem\n  key_file: %s\n" % (tmp, key),
         "cannot be read"),
        ("tls_server_configs:\n  cert_file: x\n", 'unknown key "tls_server_configs"'),
    ]
    conf = os.path.join(tmp, 'refused.conf')
    with open(conf, 'w') as f:
        f.write(CONFIG)
    for text, want in cases:
        wc = web_config(tmp, text, 'refused.yml')
        r = subprocess.run([EXE, '--config', conf, '--listen', '127.0.0.1:0',
                            '--web.config.file', wc, '--duration', '5'],
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 2 or want not in r.stderr or 'refused.yml: line' not in r.stderr:
            fail("web config %r: exit %d, %r" % (text, r.returncode, r.stderr))


def prometheus_scrapes(tmp, probe, cert):
    prom = shutil.which('prometheus')
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        pport = s.getsockname()[1]
    jobs = ''
    for job, auth in (('good', PASSWORD), ('wrong', 'nope'), ('none', None)):
        jobs += ("  - job_name: %s\n    scheme: https\n    tls_config:\n"
                 "      ca_file: %s\n" % (job, cert))
        if auth:
            jobs += "    basic_auth:\n      username: %s\n      password: '%s'\n" % (USER, auth)
        jobs += "    static_configs:\n      - targets: ['127.0.0.1:%d']\n" % probe.port
    conf = os.path.join(tmp, 'prometheus.yml')
    with open(conf, 'w') as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "scrape_configs:\n" + jobs)
    log = open(os.path.join(tmp, 'prometheus.log'), 'w')
    server = subprocess.Popen(
        [prom, '--config.file=' + conf, '--storage.tsdb.path=' + os.path.join(tmp, 'data'),
         '--web.listen-address=127.0.0.1:%d' % pport, '--log.level=warn'],
        stdout=log, stderr=log)

    def api(path, **q):
        url = 'http://127.0.0.1:%d/api/v1/%s?%s' % (pport, path, urllib.parse.urlencode(q))
        with urllib.request.urlopen(url, timeout=5) as r:
            return json.load(r)['data']
    try:
        end = time.monotonic() + 30
        targets, up = {}, {}
        while time.monotonic() < end:
            try:
                targets = {t['labels']['job']: t for t in api('targets')['activeTargets']}
                up = {r['metric']['job']: float(r['value'][1]) for r in api('query', query='up')['result']}
                value = api('query', query='qmetric_probe_up{job="good",probe="live"}')['result']
            except OSError:
                time.sleep(1)
                continue
            if len(up) == 3 and value and all(t.get('lastScrape', '').startswith('20')
                                              for t in targets.values()) and \
                    all(t['health'] != 'unknown' for t in targets.values()):
                break
            time.sleep(1)
        else:
            fail("Prometheus never scraped all three jobs: %s %s" % (up, targets))
        if up != {'good': 1.0, 'wrong': 0.0, 'none': 0.0}:
            fail("up in Prometheus: %s; errors %s" % (
                up, {j: t['lastError'] for j, t in targets.items()}))
        for job in ('wrong', 'none'):
            if '401' not in targets[job]['lastError']:
                fail("job %s: %r" % (job, targets[job]['lastError']))
        if float(value[0]['value'][1]) != 1:
            fail("qmetric_probe_up over TLS: %s" % value)
        return targets['none']['lastError']
    finally:
        stop_process(server)


def main():
    if not shutil.which('openssl') or not shutil.which('prometheus'):
        print("SKIP: openssl or prometheus not found (Debian packages openssl, prometheus)")
        return SKIP
    with tempfile.TemporaryDirectory(prefix='qmetric-probe-tls-') as tmp:
        cert, key = make_cert(tmp)
        hashed = crypt.crypt(PASSWORD, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10))
        wc = web_config(tmp, "tls_server_config:\n  cert_file: %s\n  key_file: %s\n"
                        "basic_auth_users:\n  %s: '%s'\n"
                        "http_server_config:\n  headers:\n    X-Content-Type-Options: nosniff\n"
                        % (cert, key, USER, hashed))
        probe = Probe(tmp, CONFIG, extra=('--web.config.file', wc))
        try:
            if not probe.url.startswith('https://'):
                fail("not served over TLS: %s" % probe.url)
            probe.ssl_context = ssl.create_default_context(cafile=cert)
            probe.auth = (USER, PASSWORD)
            probe.wait(lambda s: get(s, 'qmetric_probe_up', probe='live') == 1,
                       "the probe scoring (over TLS)")
            first, again, during = by_hand(probe, cert, tmp)
            err = prometheus_scrapes(tmp, probe, cert)
        finally:
            probe.stop()
        min_version(tmp, cert, key)
        example_config(tmp, cert, key)
        refused_configs(tmp, cert, key)
    print("PASS: Prometheus scrapes over TLS with the password, refused without (%r); "
          "first check %.3f s, remembered %.3f s, behind stalled handshakes %.2f s" % (
              err, first, again, during))
    return 0


if __name__ == '__main__':
    sys.exit(main())
