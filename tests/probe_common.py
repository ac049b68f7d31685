"""What the qmetric-probe tests share: starting the exporter on a free
loopback port, scraping it, parsing the exposition, bounded waits.

Every network operation has a timeout and every loop a deadline: a test
that fails does so in seconds, never hangs.
"""
import os
import re
import resource
import socket
import ssl
import subprocess
import sys
import time
import urllib.request

SKIP = 77
EXE = os.environ.get('QMETRIC_PROBE', 'build/tools/probe/qmetric-probe')

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def fail(msg):
    print("FAIL:", msg)
    sys.stdout.flush()
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


def names_of(series, probe):
    """The series of one probe, as (name, {other labels}) sorted."""
    return sorted((n, tuple(sorted((k, v) for k, v in lab if k != 'probe')))
                  for (n, lab) in series if ('probe', probe) in lab)


def rss_kib(pid):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    return 0


def fds(pid):
    return len(os.listdir('/proc/%d/fd' % pid))


def fd_kinds(pid):
    """{'socket': n, 'pipe': n, 'anon_inode:[eventfd]': n, path: n}"""
    kinds = {}
    d = '/proc/%d/fd' % pid
    for f in os.listdir(d):
        try:
            k = os.readlink(os.path.join(d, f)).split(':[')[0]
        except OSError:
            continue
        kinds[k] = kinds.get(k, 0) + 1
    return kinds


class Probe:
    """qmetric-probe on 127.0.0.1:0 with this config text; extra: more
    arguments; nofile: RLIMIT_NOFILE (soft and hard) of the process."""

    def __init__(self, tmp, config, extra=(), nofile=None, duration=120, name='probe',
                 ssl_context=None, auth=None):
        conf = os.path.join(tmp, name + '.conf')
        with open(conf, 'w') as f:
            f.write(config)
        self.err_path = os.path.join(tmp, name + '.err')
        self.ssl_context = ssl_context
        self.auth = auth

        def limit():
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        self.proc = subprocess.Popen(
            [EXE, '--config', conf, '--listen', '127.0.0.1:0', '--duration', str(duration)]
            + list(extra),
            stdout=subprocess.PIPE, stderr=open(self.err_path, 'w'), text=True,
            preexec_fn=limit)
        line = self.proc.stdout.readline()
        m = re.search(r'serving (https?://127\.0\.0\.1:(\d+)/metrics)', line)
        if not m:
            self.stop()
            fail("qmetric-probe did not start: %r\n%s" % (line, self.stderr()))
        self.url, self.port = m.group(1), int(m.group(2))

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()

    def scrape(self, timeout=5):
        req = urllib.request.Request(self.url)
        if self.auth:
            import base64
            req.add_header('Authorization', 'Basic ' + base64.b64encode(
                ('%s:%s' % self.auth).encode()).decode())
        with urllib.request.urlopen(req, timeout=timeout, context=self.ssl_context) as r:
            ctype = r.headers.get('Content-Type')
            if not ctype.startswith('text/plain; version=0.0.4'):
                fail("content type %s" % ctype)
            return r.read().decode()

    def try_scrape(self, timeout=2):
        """(seconds, text) or (seconds, None) when it did not answer."""
        t = time.monotonic()
        try:
            text = self.scrape(timeout)
        except OSError:
            text = None
        return time.monotonic() - t, text

    def wait(self, cond, what, limit=25):
        """Scrape until cond(series) holds (at most `limit` seconds)."""
        end = time.monotonic() + limit
        text = ''
        while time.monotonic() < end:
            text = self.scrape()
            s = parse_expo(text)
            if cond(s):
                return text, s
            time.sleep(0.25)
        fail("after %d s: %s\n%s\nstderr:\n%s" % (limit, what, text, self.stderr()))

    def stop(self):
        stop_process(self.proc)


def stop_process(proc):
    """SIGTERM, then SIGKILL after 10 s."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


# a live RTP/JPEG stream on loopback: what the liveness test and the soak
# stop and restart
UDP_CAPS = 'application/x-rtp,media=video,encoding-name=JPEG,clock-rate=90000,payload=26'


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def udp_sender(port, fps=10):
    """gst-launch-1.0 sending 64x48 JPEG over RTP to 127.0.0.1:port."""
    return subprocess.Popen(
        ['gst-launch-1.0', '-q', 'videotestsrc', 'is-live=true', 'pattern=ball', '!',
         'video/x-raw,format=I420,width=64,height=48,framerate=%d/1' % fps, '!', 'jpegenc',
         '!', 'rtpjpegpay', '!', 'udpsink', 'host=127.0.0.1', 'port=%d' % port],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def udp_probe_pipeline(port, metrics):
    """A probe's description receiving udp_sender(port): the stream against
    a brightened copy of itself."""
    return ('udpsrc address=127.0.0.1 port=%d caps="%s" ! rtpjpegdepay ! jpegdec ! '
            'videoconvert ! video/x-raw,format=I420 ! tee name=t t. ! queue ! q.ref_sink '
            't. ! queue ! videobalance brightness=0.05 ! q.dist_sink '
            'qmetric name=q metrics=%s threads=1 ! fakesink sync=false' % (port, UDP_CAPS, metrics))


def raw_request(port, data, timeout=3, ssl_context=None):
    """Send data on a new connection; (answer bytes, closed by the server)."""
    s = socket.create_connection(('127.0.0.1', port), timeout=timeout)
    if ssl_context:
        s = ssl_context.wrap_socket(s, server_hostname='127.0.0.1')
    out, closed = b'', False
    try:
        s.sendall(data)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            d = s.recv(65536)
            if not d:
                closed = True
                break
            out += d
    except socket.timeout:
        pass
    except (ConnectionResetError, BrokenPipeError, ssl.SSLError):
        closed = True
    finally:
        s.close()
    return out, closed


def status_of(answer):
    m = re.match(rb'HTTP/1\.1 (\d{3}) ', answer)
    return int(m.group(1)) if m else None
