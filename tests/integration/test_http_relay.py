# SPDX-License-Identifier: LGPL-2.1-or-later
"""How the HTTP proxy moves bodies: spliced between plain sockets, copied through TLS. Large
bodies both ways over HTTP and HTTPS arrive byte for byte (SHA-256); a body until close is
relayed to its end; a body the origin cuts short reaches the client as what came and then the
end of the connection, never a byte more or less. Each has its control: the same transfer
outside the sandbox (or without the proxy) gives the same bytes."""

import hashlib
import os
import socket
import threading

from conftest import PY
from test_http import (_net_tcp, curl, inside, origin, outside, pki, rules,  # noqa: F401
                       status, tls_env, tls_origin)

BIG = 6 << 20

SHA_GET = r"""
import hashlib, ssl, sys, urllib.request
ctx = ssl.create_default_context()
b = urllib.request.urlopen(sys.argv[1], context=ctx, timeout=30).read()
print(len(b), hashlib.sha256(b).hexdigest())
"""


def test_https_large_body_arrives_intact(pki, tls_origin):
    env = tls_env(pki)
    flags = rules(tls_origin, "GET localhost/*") + ["--http-inject-ca", str(pki.bundle)]
    want = [str(BIG), hashlib.sha256(tls_origin.payload(BIG)).hexdigest()]
    r = inside(flags, [PY, "-c", SHA_GET, tls_origin.url(f"/size/{BIG}", "localhost")],
               tmp=pki.dir, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().split() == want
    # Control: the same transfer outside the sandbox.
    r = outside([PY, "-c", SHA_GET, tls_origin.url(f"/size/{BIG}", "localhost")], env=env)
    assert r.stdout.decode().split() == want


def test_large_uploads_arrive_intact(pki, origin, tls_origin):
    src = pki.dir / "up.bin"
    src.write_bytes(os.urandom(3 << 20))
    env = tls_env(pki)
    for o, extra in ((origin, []), (tls_origin, ["--http-inject-ca", str(pki.bundle)])):
        r = inside(rules(o, "POST localhost/upload") + extra,
                   curl("--data-binary", f"@{src}", "-o", "/dev/null",
                        o.url("/upload", "localhost")), tmp=pki.dir, env=env)
        assert status(r)[0] == 200, r.stderr
        assert o.requests[-1]["body"] == src.read_bytes()
        # Control: without an allow rule for POST the body never reaches the origin.
        n = len(o.requests)
        r = inside(rules(o, "GET localhost/*") + extra,
                   curl("--data-binary", f"@{src}", "-o", "/dev/null",
                        o.url("/upload", "localhost")), tmp=pki.dir, env=env)
        assert status(r)[0] == 403 and len(o.requests) == n


class RawOrigin:
    """GET /close/N: N bytes with no length, then the end of the connection. GET /cut/N/M: a
    Content-Length of N, M bytes of it, then the end. One connection at a time is enough."""

    def __init__(self):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(8)
        self.port = self.srv.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    @staticmethod
    def payload(n):
        return (hashlib.sha256(b"raw").digest() * (n // 32 + 1))[:n]

    def accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def serve(self, c):
        with c:
            head = b""
            while b"\r\n\r\n" not in head:
                d = c.recv(4096)
                if not d:
                    return
                head += d
            parts = head.split(b" ", 2)[1].decode().strip("/").split("/")
            if parts[0] == "close":
                c.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
                c.sendall(self.payload(int(parts[1])))
            else:
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % int(parts[1]))
                c.sendall(self.payload(int(parts[2])))
            c.shutdown(socket.SHUT_WR)

    def close(self):
        self.srv.close()


RAW_GET = r"""
import hashlib, socket, sys
port, path = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port), timeout=30)  # the origin's; not [::1]:port
s.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n".encode())
data = b""
while d := s.recv(1 << 20):
    data += d
head, _, body = data.partition(b"\r\n\r\n")
print(head.split(b"\r\n")[0].decode().replace(" ", "_"), len(body),
      hashlib.sha256(body).hexdigest())
"""


def raw_get(o, path, flags):
    argv = [PY, "-c", RAW_GET, str(o.port), path]
    r = inside(flags, argv) if flags else outside(argv)
    assert r.returncode == 0, r.stderr
    return r.stdout.decode().split()


def test_body_until_close_and_cut_short():
    o = RawOrigin()
    try:
        flags = rules(o, "GET localhost/*")
        n, m = 5 << 20, 3 << 20
        until = ["HTTP/1.1_200_OK", str(n), hashlib.sha256(o.payload(n)).hexdigest()]
        assert raw_get(o, f"/close/{n}", flags) == until
        assert raw_get(o, f"/close/{n}", None) == until  # control: no sandbox, no proxy
        # A body promised as n bytes and ended after m: the m bytes, then the end.
        cut = ["HTTP/1.1_200_OK", str(m), hashlib.sha256(o.payload(m)).hexdigest()]
        assert raw_get(o, f"/cut/{n}/{m}", flags) == cut
        assert raw_get(o, f"/cut/{n}/{m}", None) == cut
    finally:
        o.close()
