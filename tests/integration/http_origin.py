# SPDX-License-Identifier: LGPL-2.1-or-later
"""A test origin for the HTTP proxy's tests: HTTP/1.1 (keep-alive, chunked bodies both ways)
and, with a certificate, HTTPS, on 127.0.0.1 (or 127.0.0.2) and an ephemeral port. It records
every request it receives (method, raw target, headers in order, body, the client's address)
and, for HTTPS, every handshake as the client sent it: the SNI name and ALPN list and cipher
suites read from the raw ClientHello before the handshake (only a client that talks to the
origin itself shows its own), and whether the handshake completed.

Routes (anything else answers 200 with a JSON echo of the request):
  /size/N          200 with N bytes
  /chunked/N/K     200 with N bytes sent as K chunks (Transfer-Encoding: chunked)
  /status/N        an empty answer with status N
  /slow            never answers (until the origin closes)
  /ws              a websocket echo: the RFC 6455 handshake, then one frame echoed back
"""

import base64
import hashlib
import http.server
import json
import socket
import ssl
import struct
import threading
import time

WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def parse_client_hello(data):
    """{"sni": str|None, "alpn": [str], "ciphers": [int]} from the first TLS record, or None
    when @data does not start with a ClientHello."""
    if len(data) < 9 or data[0] != 22 or data[5] != 1:
        return None
    try:
        body = data[9:5 + struct.unpack("!H", data[3:5])[0]]
        i = 2 + 32  # client_version, random
        i += 1 + body[i]  # session id
        n = struct.unpack("!H", body[i:i + 2])[0]
        ciphers = [struct.unpack("!H", body[i + 2 + k:i + 4 + k])[0] for k in range(0, n, 2)]
        i += 2 + n
        i += 1 + body[i]  # compression methods
        end = i + 2 + struct.unpack("!H", body[i:i + 2])[0]
        i += 2
        sni, alpn = None, []
        while i + 4 <= end:
            typ, ln = struct.unpack("!HH", body[i:i + 4])
            ext = body[i + 4:i + 4 + ln]
            if typ == 0 and len(ext) > 5:
                sni = ext[5:5 + struct.unpack("!H", ext[3:5])[0]].decode()
            elif typ == 16:
                j = 2
                while j < len(ext):
                    alpn.append(ext[j + 1:j + 1 + ext[j]].decode())
                    j += 1 + ext[j]
            i += 4 + ln
        return {"sni": sni, "alpn": alpn, "ciphers": ciphers}
    except (IndexError, struct.error, UnicodeDecodeError):
        return None


def peek_client_hello(sock, timeout=5.0):
    """The first TLS record the client sent, peeked (left in the socket for the handshake)."""
    deadline = time.monotonic() + timeout
    want, data = 5, b""
    sock.settimeout(timeout)
    while time.monotonic() < deadline:
        data = sock.recv(want, socket.MSG_PEEK)
        if not data:
            break
        if len(data) >= 5:
            want = 5 + struct.unpack("!H", data[3:5])[0]
        if len(data) >= want:
            break
        time.sleep(0.005)
    return data


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 60
    disable_nagle_algorithm = True  # a kept-alive client is not held up by delayed ACKs

    def log_message(self, *args):
        pass

    def __getattr__(self, name):
        if name.startswith("do_"):
            return self._any
        raise AttributeError(name)

    def _body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length", "0") or 0)
        return self.rfile.read(n) if n else b""

    def _send(self, status, body=b"", ctype="application/octet-stream", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        # The head and the body in one write.
        self._headers_buffer.append(b"\r\n")
        if self.command != "HEAD":
            self._headers_buffer.append(body)
        self.flush_headers()

    def _any(self):
        origin = self.server.origin
        req = {"method": self.command, "path": self.path, "version": self.request_version,
               "headers": list(self.headers.items()), "client": self.client_address,
               "tls": origin.tls}
        req["body"] = self._body()
        origin.requests.append(req)
        parts = self.path.split("?")[0].split("/")
        if parts[1:2] == ["size"] and len(parts) > 2:
            return self._send(200, origin.payload(int(parts[2])))
        if parts[1:2] == ["chunked"] and len(parts) > 3:
            return self._chunked(origin.payload(int(parts[2])), int(parts[3]))
        if parts[1:2] == ["status"] and len(parts) > 2:
            return self._send(int(parts[2]))
        if parts[1:2] == ["slow"]:
            origin.closing.wait(120)
            self.close_connection = True
            return None
        if parts[1:2] == ["ws"]:
            return self._websocket()
        echo = {k: req[k] for k in ("method", "path", "headers")}
        echo["body"] = req["body"].decode(errors="replace")
        return self._send(200, json.dumps(echo).encode() + b"\n", "application/json")

    def _chunked(self, body, k):
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        step = max(1, -(-len(body) // max(k, 1)))
        for i in range(0, len(body), step):
            piece = body[i:i + step]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n\r\n")

    def _websocket(self):
        key = self.headers.get("Sec-WebSocket-Key", "")
        if self.headers.get("Upgrade", "").lower() != "websocket" or not key:
            return self._send(400, b"not a websocket upgrade\n")
        accept = base64.b64encode(hashlib.sha1(key.encode() + WS_GUID).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        head = self.rfile.read(2)
        if len(head) < 2:
            self.close_connection = True
            return None
        n = head[1] & 0x7f
        if n == 126:
            n = struct.unpack("!H", self.rfile.read(2))[0]
        elif n == 127:
            n = struct.unpack("!Q", self.rfile.read(8))[0]
        mask = self.rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
        data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(n)))
        self.server.origin.ws_frames.append(data)
        frame = bytes([0x80 | (head[0] & 0x0f)])
        frame += bytes([len(data)]) if len(data) < 126 else b"\x7e" + struct.pack("!H",
                                                                                   len(data))
        self.wfile.write(frame + data)
        self.wfile.flush()
        self.close_connection = True
        return None


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def finish_request(self, request, client_address):
        origin = self.origin
        with origin.lock:
            origin.connections += 1
        if origin.ctx is None:
            return super().finish_request(request, client_address)
        hello = {"raw": b"", "sni_callback": None, "completed": False, "error": None}
        origin.handshakes.append(hello)
        try:
            hello["raw"] = peek_client_hello(request)
            hello.update(parse_client_hello(hello["raw"]) or {})
            origin.tls_local.hello = hello
            tls = origin.ctx.wrap_socket(request, server_side=True)
            hello["completed"] = True
            hello["alpn_selected"] = tls.selected_alpn_protocol()
        except (OSError, ssl.SSLError) as e:
            hello["error"] = str(e)
            return None
        try:
            return super().finish_request(tls, client_address)
        finally:
            try:
                tls.close()
            except OSError:
                pass


class Origin:
    """A started origin. @cert/@key: PEM paths for HTTPS. close() stops it."""

    def __init__(self, host="127.0.0.1", cert=None, key=None, alpn=("http/1.1",)):
        self.host = host
        self.tls = cert is not None
        self.requests = []
        self.handshakes = []
        self.ws_frames = []
        self.connections = 0
        self.lock = threading.Lock()
        self.closing = threading.Event()
        self.tls_local = threading.local()
        self._payloads = {}
        self.ctx = None
        if cert:
            self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.ctx.load_cert_chain(cert, key)
            if alpn:
                self.ctx.set_alpn_protocols(list(alpn))
            self.ctx.sni_callback = self._sni
        self.server = _Server((host, 0), _Handler)
        self.server.origin = self
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def _sni(self, sslobj, name, ctx):
        hello = getattr(self.tls_local, "hello", None)
        if hello is not None:
            hello["sni_callback"] = name
        return None

    def payload(self, n):
        if n not in self._payloads:
            self._payloads[n] = (b"0123456789abcdef" * (n // 16 + 1))[:n]
        return self._payloads[n]

    def url(self, path="/", name=None):
        scheme = "https" if self.tls else "http"
        return f"{scheme}://{name or self.host}:{self.port}{path}"

    def paths(self):
        return [r["path"] for r in self.requests]

    def header(self, req, name):
        """Every value of header @name in request @req, in order."""
        return [v for k, v in req["headers"] if k.lower() == name.lower()]

    def close(self):
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()


# ---- certificates, made with the openssl CLI -----------------------------------------------

def _openssl(*args, cwd):
    import subprocess
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def make_ca(d, name):
    """A CA certificate and key (d/NAME.pem, d/NAME.key), valid two days. Returns the paths."""
    cert, key = d / f"{name}.pem", d / f"{name}.key"
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj",
             f"/CN=sandlock test {name}", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign",
             "-addext", "subjectKeyIdentifier=hash", cwd=d)
    return cert, key


def make_leaf(d, name, ca, names=("localhost",), ips=("127.0.0.1", "127.0.0.2")):
    """A server certificate for @names and @ips signed by @ca (make_ca's pair)."""
    cert, key, csr, ext = (d / f"{name}.pem", d / f"{name}.key", d / f"{name}.csr",
                           d / f"{name}.ext")
    san = ",".join([f"DNS:{n}" for n in names] + [f"IP:{i}" for i in ips])
    ext.write_text(f"subjectAltName={san}\nbasicConstraints=critical,CA:FALSE\n"
                   "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
                   "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", str(key), "-out", str(csr), "-subj", f"/CN={names[0]}", cwd=d)
    serial = "0x" + hashlib.sha256(str(cert).encode() + str(time.time()).encode()).hexdigest()[:16]
    _openssl("x509", "-req", "-in", str(csr), "-CA", str(ca[0]), "-CAkey", str(ca[1]),
             "-set_serial", serial, "-days", "2", "-extfile", str(ext), "-out", str(cert),
             cwd=d)
    return cert, key


def system_bundle():
    """The host's trust bundle, or None."""
    cafile = ssl.get_default_verify_paths().cafile
    for path in (cafile, "/etc/ssl/certs/ca-certificates.crt"):
        if path:
            try:
                with open(path, "rb") as f:
                    return f.read()
            except OSError:
                continue
    return None
