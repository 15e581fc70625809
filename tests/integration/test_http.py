# SPDX-License-Identifier: LGPL-2.1-or-later
"""The HTTP ACL proxy, end to end: curl and Python clients inside the sandbox, origins on
127.0.0.1 (and 127.0.0.2) started by the tests (http_origin.py), HTTPS origins with
certificates from a test CA made with openssl and trusted through a test bundle (the system
bundle plus that CA) named by SSL_CERT_FILE (which the proxy's upstream verification and
Python read) and CURL_CA_BUNDLE (curl). Every verdict is checked against what the origin received; negative controls
send the same request without the rule, or from outside the sandbox."""

import base64
import hashlib
import json
import os
import re
import subprocess
import time
import types
import urllib.parse
import uuid

import pytest

from conftest import PY, SANDLOCK, SANITIZED, SYSTEM_READ, landlock_abi, require, run
from http_origin import Origin, make_ca, make_leaf, system_bundle

TIMEOUT = 120 if SANITIZED else 60


@pytest.fixture(autouse=True)
def _net_tcp():
    require(landlock_abi() >= 4, "Landlock ABI 4 (NetTcp)")


# ---- fixtures: certificates, bundles, origins ------------------------------------------------

@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """The test CA and its origin certificate, a CA nobody trusts and its certificate, a CA
    for --http-ca, and the test bundle (the system bundle + the test CA)."""
    d = tmp_path_factory.mktemp("pki")
    os.chmod(d, 0o755)
    ca = make_ca(d, "ca")
    untrusted = make_ca(d, "untrusted-ca")
    proxy = make_ca(d, "proxy-ca")
    bundle = d / "bundle.pem"
    bundle.write_bytes((system_bundle() or b"") + b"\n" + ca[0].read_bytes())
    return types.SimpleNamespace(
        dir=d, ca=ca, origin=make_leaf(d, "origin", ca),
        untrusted=untrusted, bad_origin=make_leaf(d, "bad-origin", untrusted),
        proxy_ca=proxy, bundle=bundle)


@pytest.fixture
def origin():
    o = Origin()
    yield o
    o.close()


@pytest.fixture
def origin2():
    """An HTTP origin on 127.0.0.2."""
    o = Origin("127.0.0.2")
    yield o
    o.close()


@pytest.fixture
def tls_origin(pki):
    o = Origin(cert=str(pki.origin[0]), key=str(pki.origin[1]))
    yield o
    o.close()


@pytest.fixture
def bad_origin(pki):
    """An HTTPS origin whose certificate comes from a CA the host does not trust."""
    o = Origin(cert=str(pki.bad_origin[0]), key=str(pki.bad_origin[1]))
    yield o
    o.close()


def tls_env(pki, **more):
    """The environment sandlock and its clients run in: the test bundle is the trust store
    (OpenSSL's default file, which Python reads too; curl reads CURL_CA_BUNDLE)."""
    env = dict(os.environ, SSL_CERT_FILE=str(pki.bundle), CURL_CA_BUNDLE=str(pki.bundle), **more)
    env.pop("SSL_CERT_DIR", None)
    return env


# ---- clients ---------------------------------------------------------------------------------

def curl(*args):
    return ["curl", "-sS", "--max-time", "20", "-w", "\n%{http_code}", *args]


def status(proc):
    """(status, body) from a curl() run (status 0: no answer, curl's error in the body)."""
    out = proc.stdout.decode(errors="replace")
    body, _, code = out.rpartition("\n")
    code = int(code) if code.strip().isdigit() else 0
    return code, body if code else proc.stderr.decode(errors="replace")


def inside(flags, argv, tmp=None, env=None, **kw):
    grants = ["-r", str(tmp)] if tmp else []
    return run(*SYSTEM_READ, *grants, *flags, "--", *argv, env=env, timeout=TIMEOUT, **kw)


def outside(argv, env=None):
    return subprocess.run(argv, capture_output=True, env=env, timeout=TIMEOUT)


def rules(origin, *allow, deny=(), ports=()):
    """--http-port for @origin (and @ports) and the rules."""
    flags = ["--http-port", str(origin.port)]
    for p in ports:
        flags += ["--http-port", str(p)]
    for r in allow:
        flags += ["--http-allow", r]
    for r in deny:
        flags += ["--http-deny", r]
    return flags


URLOPEN = r"""
import json, ssl, sys, urllib.error, urllib.request
url, cafile, alpn = sys.argv[1], sys.argv[2], sys.argv[3]
ctx = ssl.create_default_context(cafile=cafile or None)
if alpn:
    ctx.set_alpn_protocols(alpn.split(","))
try:
    with urllib.request.urlopen(url, context=ctx, timeout=20) as r:
        out = {"status": r.status, "body": r.read().decode(errors="replace")}
except urllib.error.HTTPError as e:
    out = {"status": e.code, "body": e.read().decode(errors="replace")}
except OSError as e:
    out = {"status": 0, "body": str(e)}
print(json.dumps(out))
"""


def urlopen(url, cafile="", alpn=""):
    return [PY, "-c", URLOPEN, url, cafile, alpn]


def py_status(proc):
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    got = json.loads(proc.stdout.decode().splitlines()[-1])
    return got["status"], got["body"]


# ---- the ACL over plain HTTP -----------------------------------------------------------------

PEER = r"""
import socket, sys
s = socket.create_connection(("localhost", int(sys.argv[1])), timeout=10)
print(s.getpeername()[0], s.getpeername()[1])
"""


def test_get_allowed_post_refused(origin, tmp_path):
    flags = rules(origin, "GET localhost/ok*")
    r = inside(flags, curl(origin.url("/ok", "localhost")))
    assert status(r)[0] == 200, r.stderr
    assert origin.paths() == ["/ok"]
    r = inside(flags, urlopen(origin.url("/ok-py", "localhost")))
    assert py_status(r)[0] == 200
    assert origin.paths() == ["/ok", "/ok-py"]
    # The same path with POST: refused by the proxy, with a one-line reason.
    code, body = status(inside(flags, curl("-X", "POST", "-d", "x=1",
                                            origin.url("/ok", "localhost"))))
    assert code == 403
    assert body.count("\n") <= 1 and "no allow rule matched" in body
    assert origin.paths() == ["/ok", "/ok-py"]
    # Controls: the origin takes that POST from outside, and from a sandbox without HTTP rules.
    assert status(outside(curl("-X", "POST", "-d", "x=1", origin.url("/ok", "localhost"))))[0] \
        == 200
    r = inside(["--net-allow", f"tcp://localhost:{origin.port}"],
               curl("-X", "POST", "-d", "x=1", origin.url("/ok", "localhost")))
    assert status(r)[0] == 200
    assert [r["method"] for r in origin.requests] == ["GET", "GET", "POST", "POST"]


def test_getpeername_reports_the_original_destination(origin):
    r = inside(rules(origin, "GET localhost/*"), [PY, "-c", PEER, str(origin.port)])
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().split() == ["127.0.0.1", str(origin.port)]


def test_wildcard_host_rule(origin):
    # "*" for the host: any destination on the intercepted port, only the named paths.
    flags = rules(origin, "GET */public*")
    assert status(inside(flags, curl(origin.url("/public/a", "localhost"))))[0] == 200
    assert status(inside(flags, curl(origin.url("/private", "localhost"))))[0] == 403
    assert origin.paths() == ["/public/a"]


def test_deny_beats_allow(origin):
    flags = rules(origin, "* localhost/*", deny=["GET localhost/admin*"])
    code, body = status(inside(flags, curl(origin.url("/admin/users", "localhost"))))
    assert code == 403
    assert "admin*" in body and body.count("\n") <= 1
    assert status(inside(flags, curl(origin.url("/public", "localhost"))))[0] == 200
    # Another method on the denied path is allowed (the deny rule names GET).
    assert status(inside(flags, curl("-X", "POST", "-d", "",
                                     origin.url("/admin/users", "localhost"))))[0] == 200
    assert [(r["method"], r["path"]) for r in origin.requests] == [
        ("GET", "/public"), ("POST", "/admin/users")]
    # Control: without the deny rule the GET goes through.
    r = inside(rules(origin, "* localhost/*"), curl(origin.url("/admin/users", "localhost")))
    assert status(r)[0] == 200
    assert origin.requests[-1]["path"] == "/admin/users"


@pytest.mark.parametrize("trick", ["/a/../secret", "/%2e%2e/secret", "/a/%2E%2E/secret",
                                   "//secret", "/a/%2fsecret", "/a//secret", "/./secret",
                                   "/%73ecret", "/a/%2F..%2Fsecret"])
def test_path_tricks_are_judged_after_normalisation(origin, trick):
    flags = rules(origin, "GET localhost/*",
                  deny=["GET localhost/secret*", "GET localhost/a/secret*"])
    code, _ = status(inside(flags, curl("--path-as-is", origin.url(trick, "localhost"))))
    assert code == 403, trick
    assert origin.requests == []
    # Control: from outside the origin gets the raw spelling (and would serve it; Python's
    # http.server itself folds a leading "//").
    assert status(outside(curl("--path-as-is", origin.url(trick, "localhost"))))[0] == 200
    assert origin.paths() in ([trick], ["/" + trick.lstrip("/")])


def test_normalised_path_is_what_the_origin_receives(origin):
    flags = rules(origin, "GET localhost/a/*", deny=["GET localhost/secret*"])
    r = inside(flags, curl("--path-as-is", origin.url("/x/../a/%70ublic//b?q=%2e", "localhost")))
    assert status(r)[0] == 200
    assert origin.paths() == ["/a/public/b?q=%2e"]


def test_host_spoofing_is_refused(origin, origin2):
    # The rule names localhost (127.0.0.1); the connection goes to 127.0.0.2, where another
    # origin listens, with "Host: localhost".
    flags = rules(origin, "GET localhost/*", ports=[origin2.port])
    flags += ["--net-allow", f"tcp://127.0.0.2:{origin2.port}"]
    spoof = curl("-H", f"Host: localhost:{origin2.port}", origin2.url("/spoof"))
    code, body = status(inside(flags, spoof))
    assert code == 403, body
    assert origin2.requests == [] and origin.requests == []
    # Controls: the honest request passes, and the spoof reaches 127.0.0.2 from outside.
    assert status(inside(flags, curl(origin.url("/honest", "localhost"))))[0] == 200
    assert origin.paths() == ["/honest"]
    assert status(outside(spoof))[0] == 200
    assert origin2.paths() == ["/spoof"]


# ---- framing: smuggling shapes, keep-alive, chunked, pipelining ------------------------------

RAW = r"""
import json, socket, sys, time
port, path = int(sys.argv[1]), sys.argv[2]
data = open(path, "rb").read()
s = socket.create_connection(("127.0.0.1", port), timeout=5)
out = {"sent": True, "reset": False, "closed": False}
try:
    s.sendall(data)
except OSError:
    out["sent"] = False
resp = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            out["closed"] = True
            break
        resp += b
except ConnectionResetError:
    out["reset"] = True
except socket.timeout:
    pass
out["resp"] = resp.decode("latin1")
print(json.dumps(out))
"""


def raw_exchange(flags, port, data, tmp_path, where="inside"):
    req = tmp_path / "req.bin"
    req.write_bytes(data)
    os.chmod(tmp_path, 0o755)
    argv = [PY, "-c", RAW, str(port), str(req)]
    r = inside(flags, argv, tmp=tmp_path) if where == "inside" else outside(argv)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return json.loads(r.stdout.decode().splitlines()[-1])


def statuses(resp):
    return [int(m) for m in re.findall(r"^HTTP/1\.[01] (\d{3})", resp, re.M)]


def smuggle_shapes(port):
    host = f"Host: localhost:{port}\r\n".encode()
    return {
        "cl-te": b"POST /s HTTP/1.1\r\n" + host + b"Content-Length: 4\r\n"
                 b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\n" + host +
                 b"\r\n",
        "te-cl": b"POST /s HTTP/1.1\r\n" + host + b"Transfer-Encoding: chunked\r\n"
                 b"Content-Length: 3\r\n\r\n0\r\n\r\n",
        "two-cl": b"POST /s HTTP/1.1\r\n" + host + b"Content-Length: 4\r\nContent-Length: 5\r\n"
                  b"\r\nabcde",
        "two-equal-cl": b"POST /s HTTP/1.1\r\n" + host + b"Content-Length: 5\r\n"
                        b"Content-Length: 5\r\n\r\nabcde",
        "obs-fold": b"GET /s HTTP/1.1\r\n" + host + b"X-Folded: a\r\n b\r\n\r\n",
        "bare-lf": b"GET /s HTTP/1.1\n" + host.replace(b"\r\n", b"\n") + b"\n",
        "bare-cr": b"GET /s HTTP/1.1\r\n" + host + b"X-A: a\rb\r\n\r\n",
        "method": b"G(T /s HTTP/1.1\r\n" + host + b"\r\n",
        "long-line": b"GET /s?" + b"a" * 9000 + b" HTTP/1.1\r\n" + host + b"\r\n",
    }


@pytest.mark.parametrize("shape", ["cl-te", "te-cl", "two-cl", "two-equal-cl", "obs-fold",
                                   "bare-lf", "bare-cr", "method", "long-line"])
def test_smuggling_shapes_get_400_and_never_reach_the_origin(origin, tmp_path, shape):
    data = smuggle_shapes(origin.port)[shape]
    got = raw_exchange(rules(origin, "* */*"), origin.port, data, tmp_path)
    assert statuses(got["resp"])[:1] == [400], got
    assert got["closed"] or got["reset"], got  # and the connection is closed
    assert origin.requests == []
    # Control: sent directly, the origin (a lenient parser) takes it.
    raw_exchange([], origin.port, data, tmp_path, where="outside")
    assert origin.requests, shape


def test_oversized_header_block_gets_400(origin, tmp_path):
    data = (f"GET /s HTTP/1.1\r\nHost: localhost:{origin.port}\r\n".encode() +
            b"".join(b"X-Pad-%d: %s\r\n" % (i, b"p" * 1000) for i in range(70)) + b"\r\n")
    got = raw_exchange(rules(origin, "* */*"), origin.port, data, tmp_path)
    # The proxy may close before it read everything sent: a reset loses its answer.
    assert statuses(got["resp"])[:1] == [400] or got["reset"], got
    assert origin.requests == []
    raw_exchange([], origin.port, data, tmp_path, where="outside")
    assert origin.paths() == ["/s"]  # control: the origin takes 70 KB of headers


def test_absolute_form_must_agree_with_host(origin, tmp_path):
    p = origin.port
    flags = rules(origin, "* localhost/*")
    bad = f"GET http://localhost:{p}/abs HTTP/1.1\r\nHost: example.com\r\n\r\n".encode()
    got = raw_exchange(flags, p, bad, tmp_path)
    assert statuses(got["resp"])[:1] == [400], got
    userinfo = (f"GET http://user@localhost:{p}/abs HTTP/1.1\r\nHost: localhost:{p}\r\n"
                "\r\n").encode()
    assert statuses(raw_exchange(flags, p, userinfo, tmp_path)["resp"])[:1] == [400]
    assert origin.requests == []
    # Control: the agreeing absolute form is served.
    good = (f"GET http://localhost:{p}/abs HTTP/1.1\r\nHost: localhost:{p}\r\n"
            "Connection: close\r\n\r\n").encode()
    assert statuses(raw_exchange(flags, p, good, tmp_path)["resp"]) == [200]
    assert [r["path"] for r in origin.requests] in (["/abs"], [f"http://localhost:{p}/abs"])


def test_connect_method_is_refused(origin, tmp_path):
    p = origin.port
    data = f"CONNECT localhost:{p} HTTP/1.1\r\nHost: localhost:{p}\r\n\r\n".encode()
    got = raw_exchange(rules(origin, "* localhost/*"), p, data, tmp_path)
    assert statuses(got["resp"])[:1] == [405], got
    assert origin.requests == []


def test_pipelined_requests_are_answered_in_order(origin, tmp_path):
    p = origin.port
    data = b"".join(f"GET /p{i} HTTP/1.1\r\nHost: localhost:{p}\r\n\r\n".encode()
                    for i in range(3)) + f"GET /p3 HTTP/1.1\r\nHost: localhost:{p}\r\n" \
        "Connection: close\r\n\r\n".encode()
    got = raw_exchange(rules(origin, "GET localhost/*"), p, data, tmp_path)
    codes = statuses(got["resp"])
    answered = re.findall(r'"path": "(/p\d)"', got["resp"])
    # Answered in order, or refused (a 4xx, then the connection closed): never mixed up.
    assert answered == [f"/p{i}" for i in range(len(answered))], got
    assert codes[:len(answered)] == [200] * len(answered)
    assert len(answered) == 4 or (codes[len(answered):] and codes[len(answered)] >= 400)
    assert origin.paths() == answered


KEEPALIVE = r"""
import http.client, sys
port = int(sys.argv[1])
print("start", flush=True); sys.stdin.readline()
c = http.client.HTTPConnection("localhost", port, timeout=20)
def get(i):
    c.request("GET", f"/ka/{i}")
    r = c.getresponse()
    body = r.read()
    assert r.status == 200 and len(body) == 1024, (r.status, len(body))
get(0)
print("warm", flush=True); sys.stdin.readline()
for i in range(1, 1000):
    get(i)
print("done", flush=True); sys.stdin.readline()
c.close()
print("closed", flush=True); sys.stdin.readline()
"""


def fd_count(pid):
    """The supervisor's descriptors and, of them, its sockets: the least of a few samples, so
    that one held in passing (a worker's) is not counted as growth."""
    counts = []
    for _ in range(3):
        links = []
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                links.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except FileNotFoundError:
                pass
        counts.append((len(links), sum(link.startswith("socket:") for link in links)))
        time.sleep(0.05)
    return min(counts)


def test_keepalive_1000_requests_no_descriptor_growth(origin):
    # The origin answers /ka/N with its default echo; ask for 1 KiB bodies instead.
    flags = rules(origin, "GET localhost/size/*")
    code = KEEPALIVE.replace('f"/ka/{i}"', '"/size/1024"')
    p = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, *flags, "--", PY, "-c", code,
                          str(origin.port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    counts = {}
    try:
        for step in ("start", "warm", "done", "closed"):
            line = p.stdout.readline().decode().strip()
            assert line == step, (line, p.stderr.read1().decode(errors="replace")
                                  if line == "" else "")
            time.sleep(0.2)
            counts[step] = fd_count(p.pid)
            p.stdin.write(b"\n")
            p.stdin.flush()
        assert p.wait(timeout=TIMEOUT) == 0, p.stderr.read().decode(errors="replace")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert len(origin.requests) == 1000
    # One client connection, one upstream connection, kept alive.
    assert len({r["client"] for r in origin.requests}) == 1
    # Control: the connection shows in the count (the client's socket and the upstream one).
    assert counts["warm"][1] >= counts["start"][1] + 2, counts
    assert counts["done"] <= counts["warm"], counts
    # Closed, the proxy lets go of both sockets (the supervisor keeps what its first
    # trapped call made it open, whatever the proxy does).
    assert counts["closed"][1] <= counts["start"][1], counts


def test_chunked_bodies_both_ways(origin, tmp_path):
    src = tmp_path / "up.bin"
    src.write_bytes(os.urandom(200000))
    os.chmod(tmp_path, 0o755)
    flags = rules(origin, "* localhost/*")
    r = inside(flags, curl("-H", "Transfer-Encoding: chunked", "--data-binary", f"@{src}",
                           "-o", "/dev/null", origin.url("/upload", "localhost")), tmp=tmp_path)
    assert status(r)[0] == 200, r.stderr
    assert origin.requests[-1]["body"] == src.read_bytes()
    r = inside(flags, [PY, "-c", "import hashlib, sys, urllib.request\n"
                       "b = urllib.request.urlopen(sys.argv[1]).read()\n"
                       "print(len(b), hashlib.sha256(b).hexdigest())",
                       origin.url("/chunked/300000/7", "localhost")])
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().split() == ["300000",
                                         hashlib.sha256(origin.payload(300000)).hexdigest()]


def test_large_body_arrives_intact(origin):
    r = inside(rules(origin, "GET localhost/size/*"),
               [PY, "-c", "import hashlib, sys, urllib.request\n"
                "b = urllib.request.urlopen(sys.argv[1]).read()\n"
                "print(len(b), hashlib.sha256(b).hexdigest())",
                origin.url(f"/size/{10 << 20}", "localhost")])
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().split() == [str(10 << 20),
                                         hashlib.sha256(origin.payload(10 << 20)).hexdigest()]


SLOW = r"""
import socket, sys, time
port = int(sys.argv[1])
slow = socket.create_connection(("localhost", port), timeout=20)
slow.sendall(f"GET /slow HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n".encode())
time.sleep(0.3)
t = time.monotonic()
fast = socket.create_connection(("localhost", port), timeout=20)
fast.sendall(f"GET /fast HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n".encode())
resp = b""
while b := fast.recv(65536):
    resp += b
print(resp.split()[1].decode(), round(time.monotonic() - t, 3))
"""


def test_a_waiting_request_does_not_hold_up_others(origin):
    r = inside(rules(origin, "GET localhost/*"), [PY, "-c", SLOW, str(origin.port)])
    assert r.returncode == 0, r.stderr
    code, secs = r.stdout.decode().split()
    assert code == "200" and float(secs) < 5
    assert sorted(origin.paths()) == ["/fast", "/slow"]


WEBSOCKET = r"""
import base64, os, socket, sys
port, path = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("localhost", port), timeout=10)
key = base64.b64encode(os.urandom(16)).decode()
s.sendall((f"GET {path} HTTP/1.1\r\nHost: localhost:{port}\r\nUpgrade: websocket\r\n"
           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
           "Sec-WebSocket-Version: 13\r\n\r\n").encode())
head = b""
while b"\r\n\r\n" not in head:
    b = s.recv(1)
    if not b:
        break
    head += b
code = head.split()[1].decode() if head else "none"
echo = ""
if code == "101":
    mask, data = os.urandom(4), b"hello through the proxy"
    s.sendall(bytes([0x81, 0x80 | len(data)]) + mask +
              bytes(c ^ mask[i % 4] for i, c in enumerate(data)))
    frame = s.recv(2)
    echo = s.recv(frame[1] & 0x7f).decode()
print(code, echo.replace(" ", "_") or "-")
"""


def test_websocket_upgrade_after_the_acl(origin):
    flags = rules(origin, "GET localhost/ws")
    r = inside(flags, [PY, "-c", WEBSOCKET, str(origin.port), "/ws"])
    assert r.stdout.decode().split() == ["101", "hello_through_the_proxy"], r.stderr
    assert origin.ws_frames == [b"hello through the proxy"]
    r = inside(flags, [PY, "-c", WEBSOCKET, str(origin.port), "/ws-other"])
    assert r.stdout.decode().split() == ["403", "-"], r.stderr
    assert origin.paths() == ["/ws"]


# ---- HTTPS -------------------------------------------------------------------------------------

def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


READ_BUNDLE = "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())"


def test_https_with_injected_ca(pki, tls_origin):
    before = sha(pki.bundle)
    env = tls_env(pki)
    flags = rules(tls_origin, "GET localhost/*") + ["--http-inject-ca", str(pki.bundle)]
    r = inside(flags, curl(tls_origin.url("/curl", "localhost")), tmp=pki.dir, env=env)
    assert status(r)[0] == 200, (r.stdout, r.stderr)
    r = inside(flags, urlopen(tls_origin.url("/python", "localhost"), alpn="x-sandlock-probe"),
               tmp=pki.dir, env=env)
    assert py_status(r)[0] == 200
    assert tls_origin.paths() == ["/curl", "/python"]
    # The handshakes the origin saw were the proxy's, not the clients'.
    assert all("x-sandlock-probe" not in h.get("alpn", []) and "h2" not in h.get("alpn", [])
               for h in tls_origin.handshakes), tls_origin.handshakes
    assert {h["sni_callback"] for h in tls_origin.handshakes} == {"localhost"}
    # Inside, the bundle reads as itself followed by one certificate; the file is unchanged.
    r = inside(flags, [PY, "-c", READ_BUNDLE, str(pki.bundle)], tmp=pki.dir, env=env)
    orig = pki.bundle.read_bytes()
    assert r.stdout.startswith(orig) and len(r.stdout) > len(orig)
    extra = r.stdout[len(orig):].decode()
    assert extra.count("-----BEGIN CERTIFICATE-----") == 1 and "PRIVATE" not in extra
    assert sha(pki.bundle) == before
    # Control: without the injection the bundle reads as it is.
    r = inside(rules(tls_origin, "GET localhost/*"), [PY, "-c", READ_BUNDLE, str(pki.bundle)],
               tmp=pki.dir, env=env)
    assert r.stdout == orig


def test_https_untrusted_origin_is_502(pki, bad_origin):
    env = tls_env(pki)
    flags = rules(bad_origin, "GET localhost/*") + ["--http-inject-ca", str(pki.bundle)]
    code, body = status(inside(flags, curl(bad_origin.url("/bad", "localhost")), tmp=pki.dir,
                               env=env))
    assert code == 502, body
    assert re.search(r"certificate|verif", body, re.I), body
    assert bad_origin.requests == []
    assert not any(h["completed"] for h in bad_origin.handshakes), bad_origin.handshakes
    # Controls: the host's store refuses the origin too; with its own CA it answers.
    r = outside(curl(bad_origin.url("/bad", "localhost")), env=env)
    assert status(r)[0] == 0 and r.returncode == 60
    r = outside(curl("--cacert", str(pki.untrusted[0]), bad_origin.url("/bad", "localhost")))
    assert status(r)[0] == 200
    assert bad_origin.paths() == ["/bad"]


def test_tls_passes_through_uninspected_without_a_ca(pki, origin, tls_origin):
    # HTTP rules are active (on the plain origin's port); the TLS port is a net rule only.
    env = tls_env(pki)
    flags = rules(origin, "GET localhost/*") + ["--net-allow",
                                                f"tcp://localhost:{tls_origin.port}"]
    r = inside(flags, curl("--cacert", str(pki.ca[0]), tls_origin.url("/pt-curl", "localhost")),
               tmp=pki.dir, env=env)
    assert status(r)[0] == 200, r.stderr
    r = inside(flags, urlopen(tls_origin.url("/pt-python", "localhost"), str(pki.ca[0]),
                              "x-sandlock-probe,http/1.1"), tmp=pki.dir, env=env)
    assert py_status(r)[0] == 200
    assert tls_origin.paths() == ["/pt-curl", "/pt-python"]
    # The origin saw the clients' own handshakes: curl's h2 offer, Python's probe.
    alpns = [h["alpn"] for h in tls_origin.handshakes]
    assert alpns == [["h2", "http/1.1"], ["x-sandlock-probe", "http/1.1"]], alpns
    assert [h["sni"] for h in tls_origin.handshakes] == ["localhost", "localhost"]
    # Control: the proxy is on for the plain port.
    assert status(inside(flags, curl(origin.url("/x", "localhost")), env=env))[0] == 200
    assert status(inside(flags, curl("-X", "POST", origin.url("/x", "localhost")),
                         env=env))[0] == 403


def test_ca_out_writes_the_certificate_only(pki, tls_origin, tmp_path):
    out = tmp_path / "ca-out.pem"
    os.chmod(tmp_path, 0o755)
    env = tls_env(pki)
    flags = rules(tls_origin, "GET localhost/*") + [
        "--http-inject-ca", str(pki.bundle), "--http-ca-out", str(out)]
    # The child trusts only the exported certificate: it is the CA the proxy signs with.
    r = inside(flags + ["-r", str(tmp_path)],
               curl("--cacert", str(out), tls_origin.url("/via-ca-out", "localhost")),
               tmp=pki.dir, env=env)
    assert status(r)[0] == 200, r.stderr
    assert tls_origin.paths() == ["/via-ca-out"]
    pem = out.read_text()
    assert "PRIVATE KEY" not in pem and pem.count("-----BEGIN CERTIFICATE-----") == 1
    text = subprocess.run(["openssl", "x509", "-noout", "-text", "-in", str(out)],
                          capture_output=True, text=True)
    assert text.returncode == 0, text.stderr
    assert "CA:TRUE" in text.stdout
    # Control: the test CA alone does not trust the proxy's leaf.
    r = inside(flags + ["-r", str(tmp_path)],
               curl("--cacert", str(pki.ca[0]), tls_origin.url("/nope", "localhost")),
               tmp=pki.dir, env=env)
    assert r.returncode == 60 and tls_origin.paths() == ["/via-ca-out"]


PEERCERT = r"""
import json, socket, ssl, sys
port, cafile = int(sys.argv[1]), sys.argv[2]
ctx = ssl.create_default_context(cafile=cafile)
with socket.create_connection(("localhost", port), timeout=10) as raw:
    with ctx.wrap_socket(raw, server_hostname="localhost") as s:
        cert = s.getpeercert()
        s.sendall(f"GET /peer HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"
                  .encode())
        resp = b""
        while b := s.recv(65536):
            resp += b
issuer = dict(x[0] for x in cert["issuer"])
print(json.dumps({"issuer": issuer.get("commonName"), "san": cert.get("subjectAltName"),
                  "status": resp.split()[1].decode()}))
"""


def test_given_ca_signs_the_leaves(pki, tls_origin):
    env = tls_env(pki)
    ca_out = pki.dir / f"given-out-{uuid.uuid4().hex[:8]}.pem"
    flags = rules(tls_origin, "GET localhost/*") + [
        "--http-ca", str(pki.proxy_ca[0]), "--http-key", str(pki.proxy_ca[1]),
        "--http-ca-out", str(ca_out)]
    r = inside(flags, [PY, "-c", PEERCERT, str(tls_origin.port), str(pki.proxy_ca[0])],
               tmp=pki.dir, env=env)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["issuer"] == "sandlock test proxy-ca" and got["status"] == "200", got
    assert ["DNS", "localhost"] in got["san"], got
    r = inside(flags, curl("--cacert", str(pki.proxy_ca[0]), tls_origin.url("/curl", "localhost")),
               tmp=pki.dir, env=env)
    assert status(r)[0] == 200, r.stderr
    assert tls_origin.paths() == ["/peer", "/curl"]
    fp = ["openssl", "x509", "-noout", "-fingerprint", "-sha256", "-in"]
    assert outside([*fp, str(ca_out)]).stdout == outside([*fp, str(pki.proxy_ca[0])]).stdout
    # Control: without interception the origin's own certificate is not the proxy CA's.
    plain = ["--http-allow", "GET localhost/*", "--net-allow",
             f"tcp://localhost:{tls_origin.port}"]
    r = inside(plain, curl("--cacert", str(pki.proxy_ca[0]), tls_origin.url("/x", "localhost")),
               tmp=pki.dir, env=env)
    assert r.returncode == 60


# ---- credentials -------------------------------------------------------------------------------

SECRET_PROBE = r"""
import json, os, sys, urllib.request
url = sys.argv[1]
extra = dict(h.split(": ", 1) for h in sys.argv[2:])
sup = os.getppid()
print(json.dumps({"ppid": sup}), flush=True)
sys.stdin.readline()
req = urllib.request.Request(url, headers=extra)
with urllib.request.urlopen(req, timeout=20) as r:
    st = r.status
    r.read()
def grab(path, n=1 << 20):
    try:
        with open(path, "rb") as f:
            return f.read(n).hex()
    except OSError as e:
        return e.errno
mem = grab(f"/proc/{sup}/mem", 4096)
print(json.dumps({"status": st, "environ": dict(os.environ),
                  "self_environ": grab("/proc/self/environ"),
                  "sup_environ": grab(f"/proc/{sup}/environ"), "sup_mem": mem,
                  "sup_cmdline": grab(f"/proc/{sup}/cmdline")}), flush=True)
sys.stdin.readline()
"""


def run_secret_probe(flags, url, env, headers=()):
    """Run SECRET_PROBE under @flags; returns (its report, sandlock's stderr, the supervisor's
    environ as the test itself reads it while the sandbox runs)."""
    p = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, "-r", "/proc", *flags, "--", PY, "-c",
                          SECRET_PROBE, url, *headers], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        first = p.stdout.readline()
        assert first, p.stderr.read().decode(errors="replace")
        assert json.loads(first)["ppid"] == p.pid  # the child's parent is the supervisor
        p.stdin.write(b"\n")
        p.stdin.flush()
        report = p.stdout.readline()
        assert report, p.stderr.read().decode(errors="replace")
        with open(f"/proc/{p.pid}/environ", "rb") as f:
            sup_environ = f.read()
        p.stdin.write(b"\n")
        p.stdin.flush()
        out, err = p.communicate(timeout=TIMEOUT)
        assert p.returncode == 0, err.decode(errors="replace")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return json.loads(report), first + report + out, err, sup_environ


def test_bearer_credential_never_reaches_the_child(origin):
    secret = "s3cr3t-" + uuid.uuid4().hex
    env = dict(os.environ, SANDLOCK_TEST_SECRET=secret, SANDLOCK_TEST_KEEP="kept")
    flags = rules(origin, "GET localhost/*") + [
        "--credential", "tok=env:SANDLOCK_TEST_SECRET",
        "--http-auth", "GET localhost/* bearer tok"]
    report, stdout, stderr, sup_env = run_secret_probe(flags, origin.url("/size/3", "localhost"),
                                                       env)
    assert report["status"] == 200
    assert origin.header(origin.requests[-1], "Authorization") == [f"Bearer {secret}"]
    # The child: not in its environment (the variable is stripped, others kept), not in
    # /proc/self/environ; the supervisor's environ and memory are refused (EACCES).
    assert "SANDLOCK_TEST_SECRET" not in report["environ"]
    assert report["environ"].get("SANDLOCK_TEST_KEEP") == "kept"
    assert isinstance(report["self_environ"], str)
    assert b"SANDLOCK_TEST_KEEP" in bytes.fromhex(report["self_environ"])
    assert report["sup_environ"] == 13 and report["sup_mem"] == 13, report
    assert report["sup_cmdline"] == 13
    assert secret.encode() not in stdout and secret.encode().hex().encode() not in stdout
    assert secret.encode() not in stderr
    # Over plain HTTP: one warning line for the run.
    assert len(re.findall(r"plain HTTP|(plain|clear)[- ]?text", stderr.decode(), re.I)) == 1, \
        stderr
    # Control: the supervisor's environ does hold it (what the refusal protects), and without
    # the auth rule the origin gets no Authorization header.
    assert secret.encode() in sup_env
    r = inside(rules(origin, "GET localhost/*"), curl(origin.url("/size/3", "localhost")))
    assert status(r)[0] == 200
    assert origin.header(origin.requests[-1], "Authorization") == []


def auth_request(origin, env, auth, path="/size/3", headers=()):
    flags = rules(origin, "GET localhost/*") + [
        "--credential", "tok=env:SANDLOCK_TEST_SECRET", "--http-auth", auth]
    hdr = [a for h in headers for a in ("-H", h)]
    r = inside(flags, curl(*hdr, origin.url(path, "localhost")), env=env)
    assert status(r)[0] == 200, r.stderr
    return origin.requests[-1]


def test_add_only_keeps_the_childs_header_replace_overwrites(origin):
    secret = "s3cr3t-" + uuid.uuid4().hex
    env = dict(os.environ, SANDLOCK_TEST_SECRET=secret)
    own = "Authorization: Bearer child-own"
    req = auth_request(origin, env, "GET localhost/* bearer tok add-only", headers=[own])
    assert origin.header(req, "Authorization") == ["Bearer child-own"]
    req = auth_request(origin, env, "GET localhost/* bearer tok add-only")
    assert origin.header(req, "Authorization") == [f"Bearer {secret}"]
    req = auth_request(origin, env, "GET localhost/* bearer tok replace", headers=[own])
    assert origin.header(req, "Authorization") == [f"Bearer {secret}"]
    req = auth_request(origin, env, "GET localhost/* bearer tok", headers=[own])
    assert origin.header(req, "Authorization") == [f"Bearer {secret}"]  # replace: the default


def test_basic_header_and_query_shapes(origin):
    secret = "s3cr3t-" + uuid.uuid4().hex
    env = dict(os.environ, SANDLOCK_TEST_SECRET=secret)
    req = auth_request(origin, env, "GET localhost/* basic:deploy tok")
    assert origin.header(req, "Authorization") == [
        "Basic " + base64.b64encode(f"deploy:{secret}".encode()).decode()]
    req = auth_request(origin, env, "GET localhost/* header:X-Api-Key tok")
    assert origin.header(req, "X-Api-Key") == [secret]
    req = auth_request(origin, env, "GET localhost/* apikey:X-Other-Key tok",
                       headers=["X-Other-Key: child"])
    assert origin.header(req, "X-Other-Key") == [secret]
    req = auth_request(origin, env, "GET localhost/* query:key tok", path="/size/3?x=1")
    path, _, query = req["path"].partition("?")
    assert path == "/size/3"
    assert urllib.parse.parse_qs(query) == {"x": ["1"], "key": [secret]}
    req = auth_request(origin, env, "GET localhost/* query:key tok", path="/size/3?key=child")
    assert urllib.parse.parse_qs(req["path"].partition("?")[2]) == {"key": [secret]}
    req = auth_request(origin, env, "GET localhost/* query:key tok add-only",
                       path="/size/3?key=child")
    assert urllib.parse.parse_qs(req["path"].partition("?")[2]) == {"key": ["child"]}
    # Control: a rule for another path leaves the request alone.
    req = auth_request(origin, env, "GET localhost/other/* bearer tok")
    assert origin.header(req, "Authorization") == []


def test_credentials_from_file_and_fd(origin, tmp_path):
    secret = "s3cr3t-" + uuid.uuid4().hex
    f = tmp_path / "secret"
    f.write_text(secret + "\n")  # one trailing newline is stripped
    flags = rules(origin, "GET localhost/*") + [
        "--credential", f"tok=file:{f}", "--http-auth", "GET localhost/* bearer tok"]
    assert status(inside(flags, curl(origin.url("/size/1", "localhost"))))[0] == 200
    assert origin.header(origin.requests[-1], "Authorization") == [f"Bearer {secret}"]
    rfd, wfd = os.pipe()
    os.write(wfd, secret.encode() + b"\n")
    os.close(wfd)
    flags = rules(origin, "GET localhost/*") + [
        "--credential", f"tok=fd:{rfd}", "--http-auth", "GET localhost/* bearer tok"]
    r = inside(flags, curl(origin.url("/size/1", "localhost")), pass_fds=(rfd,))
    os.close(rfd)
    assert status(r)[0] == 200, r.stderr
    assert origin.header(origin.requests[-1], "Authorization") == [f"Bearer {secret}"]


# ---- errors: one line each, and nothing runs ------------------------------------------------

USAGE_HINT = "Try 'sandlock run --help'."


def error_cases(pki, tmp):
    http = ["--http-allow", "GET localhost/*"]
    cred = ["--credential", "tok=env:SANDLOCK_TEST_SECRET"]
    return {
        "rule without a path": (["--http-allow", "GET"], [r'"GET"', r"METHOD host/path"]),
        "bad method": (["--http-allow", "G3T localhost/"], [r'"G3T"']),
        "bad deny rule": (["--http-deny", "GET localhost:99999/"], [r'99999']),
        "ca without key": (http + ["--http-ca", str(pki.proxy_ca[0])], [r"http[-_]key"]),
        "key without ca": (http + ["--http-key", str(pki.proxy_ca[1])], [r"http[-_]ca"]),
        "mismatched pair": (http + ["--http-ca", str(pki.proxy_ca[0]), "--http-key",
                                    str(pki.ca[1])], [r"not the private key|match"]),
        "not a ca": (http + ["--http-ca", str(pki.origin[0]), "--http-key",
                             str(pki.origin[1])], [r"CA"]),
        "unreadable ca": (http + ["--http-ca", str(tmp / "missing.pem"), "--http-key",
                                  str(pki.proxy_ca[1])], [r"missing\.pem"]),
        "https auth without ca": (["--http-allow", "GET localhost:443/*"] + cred + [
            "--http-auth", "GET localhost:443/* bearer tok"], [r"\bCA\b|http[-_]ca"]),
        "unset env source": (http + ["--credential", "tok=env:SANDLOCK_TEST_UNSET",
                                     "--http-auth", "GET localhost/* bearer tok"],
                             [r"SANDLOCK_TEST_UNSET"]),
        "empty secret": (http + ["--credential", "tok=env:SANDLOCK_TEST_EMPTY", "--http-auth",
                                 "GET localhost/* bearer tok"], [r"SANDLOCK_TEST_EMPTY|empty"]),
        "duplicate credential": (http + cred + ["--credential", "tok=env:SANDLOCK_TEST_OTHER",
                                                "--http-auth", "GET localhost/* bearer tok"],
                                 [r"tok: given twice|tok.*twice"]),
        "unreadable file source": (http + ["--credential", f"tok=file:{tmp}/nope",
                                           "--http-auth", "GET localhost/* bearer tok"],
                                   [r"nope"]),
        "basic user with a colon": (http + cred + ["--http-auth",
                                                   "GET localhost/* basic:a:b tok"],
                                    [r"a:b|':'|\":\""]),
        "unknown credential": (http + cred + ["--http-auth", "GET localhost/* bearer other"],
                               [r"other"]),
        "auth without http rule": (cred + ["--http-auth", "GET localhost/* bearer tok"],
                                   [r"http[-_]allow|HTTP rule|http_deny"]),
        "inject without http rule": (["--http-inject-ca", str(pki.bundle)],
                                     [r"http[-_]inject[-_]ca"]),
        "ca out without http rule": (["--http-ca-out", str(tmp / "out.pem")],
                                     [r"http[-_]ca[-_]out"]),
    }


ERROR_NAMES = ["rule without a path", "bad method", "bad deny rule", "ca without key",
               "key without ca", "mismatched pair", "not a ca", "unreadable ca",
               "https auth without ca", "unset env source", "empty secret",
               "duplicate credential", "unreadable file source", "basic user with a colon",
               "unknown credential", "auth without http rule", "inject without http rule",
               "ca out without http rule"]


@pytest.mark.parametrize("name", ERROR_NAMES)
def test_configuration_errors_are_one_line(pki, tmp_path, name):
    flags, words = error_cases(pki, tmp_path)[name]
    env = dict(os.environ, SANDLOCK_TEST_SECRET="x", SANDLOCK_TEST_OTHER="y",
               SANDLOCK_TEST_EMPTY="")
    env.pop("SANDLOCK_TEST_UNSET", None)
    r = run(*SYSTEM_READ, *flags, "--", "echo", "RAN", env=env, timeout=TIMEOUT)
    err = r.stderr.decode(errors="replace")
    assert r.returncode != 0 and r.stdout == b"", (r.returncode, r.stdout, err)
    # One line; a usage error adds the usual hint after it.
    lines = err.splitlines()
    assert lines[1:] in ([], [USAGE_HINT]), err
    assert lines[0].startswith("sandlock: ") and "not supported yet" not in err, err
    for w in words:
        assert re.search(w, lines[0]), (w, err)
    assert not (tmp_path / "out.pem").exists()


def test_configuration_controls_run(pki, tmp_path):
    # Control for the errors: the well-formed versions of those flags run the command.
    env = dict(os.environ, SANDLOCK_TEST_SECRET="x")
    out = tmp_path / "out.pem"
    flags = ["--http-allow", "GET localhost/*", "--http-ca", str(pki.proxy_ca[0]),
             "--http-key", str(pki.proxy_ca[1]), "--credential", "tok=env:SANDLOCK_TEST_SECRET",
             "--http-auth", "GET localhost:443/* basic:deploy tok",
             "--http-inject-ca", str(pki.bundle), "--http-ca-out", str(out)]
    r = run(*SYSTEM_READ, *flags, "--", "echo", "RAN", env=env, timeout=TIMEOUT)
    assert r.returncode == 0 and r.stdout == b"RAN\n", r.stderr
    assert out.exists()
