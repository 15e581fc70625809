# SPDX-License-Identifier: LGPL-2.1-or-later
"""sandlock-mcp --transport http: the Streamable HTTP transport's sessions and errors, and the
bearer token, driven by a plain HTTP client (http.client)."""

import http.client
import json
import socket
import subprocess
import threading
import time
import urllib.parse

import pytest

from conftest import PKG_PARENT, PY, pids_with_argv, wait_until
from mcp_client import HttpServer

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}}


@pytest.fixture
def ws(tmp_path):
    d = tmp_path / "ws"
    d.mkdir()
    (d / "ok.txt").write_text("fine\n")
    return d


def start(ws, *extra):
    return HttpServer(ws, *extra)


def post(url, body, headers=None, method="POST"):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    h = {"Content-Type": "application/json", "Accept": "application/json"}
    h.update(headers or {})
    c.request(method, u.path + (f"?{u.query}" if u.query else ""),
              body=data if method == "POST" else None, headers=h)
    r = c.getresponse()
    raw = r.read()
    c.close()
    return r.status, dict(r.getheaders()), raw


@pytest.fixture
def server(ws):
    s = start(ws)
    yield s
    s.close()


def session(server):
    status, headers, raw = post(server.url, INIT)
    assert status == 200, raw
    assert json.loads(raw)["result"]["protocolVersion"] == "2025-06-18"
    sid = headers["Mcp-Session-Id"]
    st, _, _ = post(server.url, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"Mcp-Session-Id": sid})
    assert st == 202
    return sid


def test_json_and_sse_answers(server):
    sid = session(server)
    h = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"path": "ok.txt"}}}
    status, headers, raw = post(server.url, call, h)
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert json.loads(raw)["result"]["content"] == [{"type": "text", "text": "fine\n"}]
    status, headers, raw = post(server.url, call,
                                dict(h, Accept="application/json, text/event-stream"))
    assert status == 200 and headers["Content-Type"] == "text/event-stream"
    event, data = raw.decode().strip().split("\n")
    assert event == "event: message"
    assert json.loads(data.removeprefix("data: "))["result"]["isError"] is False


def test_sessions(server):
    ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    assert post(server.url, ping)[0] == 400  # no session id
    assert post(server.url, ping, {"Mcp-Session-Id": "nope"})[0] == 404
    sid = session(server)
    assert post(server.url, ping, {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "1.0"})[0] \
        == 400
    status, _, raw = post(server.url, ping, {"Mcp-Session-Id": sid})
    assert status == 200 and json.loads(raw) == {"jsonrpc": "2.0", "id": 3, "result": {}}
    assert post(server.url, b"", {"Mcp-Session-Id": sid}, method="GET")[0] == 405
    assert post(server.url, b"", {"Mcp-Session-Id": sid}, method="DELETE")[0] == 200
    assert post(server.url, ping, {"Mcp-Session-Id": sid})[0] == 404  # ended
    status, _, raw = post(server.url, b"{nope")
    assert status == 400 and json.loads(raw)["error"]["code"] == -32700


def test_foreign_origin_refused(server):
    port = urllib.parse.urlsplit(server.url).port
    assert post(server.url, INIT, {"Origin": "http://evil.example"})[0] == 403
    # DNS rebinding: the page's name in both the Origin and the Host header.
    assert post(server.url, INIT, {"Origin": "http://evil.example:8080",
                                   "Host": "evil.example:8080"})[0] == 403
    # A page on another port of this machine is someone else's page.
    status, _, raw = post(server.url, INIT, {"Origin": "http://127.0.0.1:3000"})
    assert status == 403 and json.loads(raw)["error"] == \
        f"origin http://127.0.0.1:3000 is not allowed: only a loopback name or 127.0.0.1, " \
        f"with port {port}"
    assert post(server.url, INIT, {"Origin": f"http://127.0.0.1:{port}"})[0] == 200


def test_bearer_token(ws):
    s = start(ws, "--token", "s3cret")
    try:
        status, headers, _ = post(s.url, INIT)
        assert status == 401 and headers["WWW-Authenticate"] == "Bearer"
        assert post(s.url, INIT, {"Authorization": "Bearer wrong"})[0] == 401
        assert post(s.url, INIT, {"Authorization": "Bearer s3cret"})[0] == 200
    finally:
        s.close()


@pytest.mark.pure
def test_token_required_off_loopback(ws):
    env = {"PYTHONPATH": PKG_PARENT, "PATH": "/usr/bin:/bin"}
    p = subprocess.run([PY, "-m", "sandlock.mcp", "--workspace", str(ws), "--transport", "http",
                        "--host", "0.0.0.0", "--port", "0"], env=env, capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 2
    assert "--host 0.0.0.0 is not a loopback address: a bearer token is required" in p.stderr


def test_cancelled_call_ends_its_stream_without_an_answer(server):
    sid = session(server)
    argv = ["sleep", f"28.{time.monotonic_ns() % 10**6}"]
    call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "shell", "arguments": {"command": " ".join(argv)}}}
    got = {}

    def streamed():
        got["reply"] = post(server.url, call, {"Mcp-Session-Id": sid,
                                               "Accept": "application/json, text/event-stream"})

    t = threading.Thread(target=streamed)
    t.start()
    assert wait_until(lambda: pids_with_argv(argv), timeout=10)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
    assert post(server.url, cancel, {"Mcp-Session-Id": sid})[0] == 202
    t.join(timeout=10)
    assert not t.is_alive()
    status, headers, raw = got["reply"]
    assert status == 200 and headers["Content-Type"] == "text/event-stream" and raw == b""
    assert wait_until(lambda: not pids_with_argv(argv), timeout=10)


@pytest.mark.pure
def test_sessions_are_bounded(monkeypatch, ws):
    from sandlock.mcp import McpSandbox, _http, _protocol

    monkeypatch.setattr(_http, "_MAX_SESSIONS", 3)
    srv = _http._Server(McpSandbox(workspace=str(ws)), "127.0.0.1", None)
    for i in range(5):
        srv.keep(f"s{i}", _protocol.Session(srv.mcp))
    assert list(srv.sessions) == ["s2", "s3", "s4"]  # the oldest ended first


def urlopen(url, body, headers):
    """POST @body with urllib: (status, content type, body bytes)."""
    import urllib.error
    import urllib.request

    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    h = {"Content-Type": "application/json", "Accept": "application/json"}
    h.update(headers)
    req = urllib.request.Request(url, data=data, headers=h, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type"), r.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.headers.get("Content-Type"), e.read()


def session_at(server, version):
    init = dict(INIT, params=dict(INIT["params"], protocolVersion=version))
    status, headers, raw = post(server.url, init)
    assert status == 200 and json.loads(raw)["result"]["protocolVersion"] == version
    return {"Mcp-Session-Id": headers["Mcp-Session-Id"], "MCP-Protocol-Version": version}


def rpc(msg_id, method, params=None):
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, **({"params": params}
                                                                    if params else {})}


READ_OK = {"name": "read_file", "arguments": {"path": "ok.txt"}}
OK_RESULT = {"content": [{"type": "text", "text": "fine\n"}], "isError": False}
NOTE = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def test_batch_as_one_json_array(server):
    h = session_at(server, "2025-03-26")
    status, ctype, raw = urlopen(server.url, [rpc(1, "ping"), NOTE, 7,
                                              rpc(2, "initialize", {"protocolVersion": "x"}),
                                              rpc(3, "tools/call", READ_OK)], h)
    assert (status, ctype) == (200, "application/json")
    assert json.loads(raw) == [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": None, "error": {
            "code": -32600, "message": "invalid request: not a JSON-RPC 2.0 message"}},
        {"jsonrpc": "2.0", "id": 2, "error": {
            "code": -32600, "message": "invalid request: initialize cannot be in a batch"}},
        {"jsonrpc": "2.0", "id": 3, "result": OK_RESULT}]
    # Only notifications (and responses): accepted, nothing to answer.
    assert urlopen(server.url, [NOTE, {"jsonrpc": "2.0", "id": 9, "result": {}}], h) == \
        (202, None, b"")
    status, _, raw = urlopen(server.url, [], h)
    assert status == 400 and json.loads(raw)["error"] == {
        "code": -32600, "message": "invalid request: an empty batch"}
    status, _, raw = urlopen(server.url, [rpc(i, "ping") for i in range(1025)], h)
    assert status == 400 and json.loads(raw)["error"]["message"] == \
        "invalid request: a batch of 1025 messages (at most 1024)"


def test_batch_in_an_sse_stream(server):
    h = session_at(server, "2025-03-26")
    status, ctype, raw = urlopen(server.url, [rpc(1, "ping"), 7, rpc(3, "tools/call", READ_OK)],
                                 dict(h, Accept="application/json, text/event-stream"))
    assert (status, ctype) == (200, "text/event-stream")
    events = [e.split("\n") for e in raw.decode().strip().split("\n\n")]
    assert all(e[0] == "event: message" for e in events)
    got = sorted((json.loads(e[1].removeprefix("data: ")) for e in events),
                 key=lambda r: r["id"] or 0)
    assert got == [{"jsonrpc": "2.0", "id": None, "error": {
                        "code": -32600, "message": "invalid request: not a JSON-RPC 2.0 message"}},
                   {"jsonrpc": "2.0", "id": 1, "result": {}},
                   {"jsonrpc": "2.0", "id": 3, "result": OK_RESULT}]


def test_batch_refused_at_2025_06_18(server):
    h = session_at(server, "2025-06-18")
    status, _, raw = urlopen(server.url, [rpc(1, "ping"), rpc(3, "tools/call", READ_OK)], h)
    assert status == 400 and json.loads(raw) == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": "invalid request: batches are not supported at this protocol "
                                   "version (they are at 2025-03-26 and 2024-11-05; this "
                                   "session's is 2025-06-18)"}}
    assert urlopen(server.url, rpc(1, "ping"), h)[0] == 200


def test_batch_on_the_older_sse_transport(server):
    """GET /sse, then a batch POSTed to its endpoint: the answers as one event of the stream."""
    u = urllib.parse.urlsplit(server.base)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("GET", "/sse", headers={"Accept": "text/event-stream"})
    stream = c.getresponse()

    def event():
        lines = []
        while (line := stream.readline().decode().rstrip("\n")) != "":
            lines.append(line)
        return lines

    try:
        kind, endpoint = event()
        assert kind == "event: endpoint"
        url = server.base + endpoint.removeprefix("data: ")
        init = dict(INIT, params=dict(INIT["params"], protocolVersion="2024-11-05"))
        assert post(url, init)[0] == 202
        assert json.loads(event()[1].removeprefix("data: "))["id"] == 1
        assert post(url, [rpc(2, "ping"), NOTE, rpc(3, "tools/call", READ_OK)])[0] == 202
        kind, data = event()
        assert kind == "event: message"
        assert json.loads(data.removeprefix("data: ")) == [
            {"jsonrpc": "2.0", "id": 2, "result": {}},
            {"jsonrpc": "2.0", "id": 3, "result": OK_RESULT}]
    finally:
        stream.close()
        c.close()

class InProcess:
    """A _Server on 127.0.0.1 in a thread of this process, so that a test can make its limits
    and timeouts small (monkeypatch) and read its counters."""

    def __init__(self, ws, token=None):
        import asyncio

        from sandlock.mcp import McpSandbox, _http

        self.loop = asyncio.new_event_loop()
        self.srv = _http._Server(McpSandbox(workspace=str(ws)), "127.0.0.1", token)
        started = threading.Event()

        async def main():
            self.server = await asyncio.start_server(self.srv.connection, "127.0.0.1", 0,
                                                     limit=1 << 16)
            self.port = self.server.sockets[0].getsockname()[1]
            started.set()
            async with self.server:
                await self.server.serve_forever()

        self.thread = threading.Thread(target=self._run, args=(main,), daemon=True)
        self.thread.start()
        assert started.wait(10)
        self.srv.port = self.port  # as serve() sets it
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def _run(self, main):
        import asyncio
        asyncio.set_event_loop(self.loop)
        self.task = self.loop.create_task(main())
        try:
            self.loop.run_until_complete(self.task)
        except asyncio.CancelledError:
            pass
        rest = asyncio.all_tasks(self.loop)  # the connections still open
        for t in rest:
            t.cancel()
        self.loop.run_until_complete(asyncio.gather(*rest, return_exceptions=True))
        self.loop.close()

    def connect(self, source="127.0.0.1"):
        """A connection to the server, from the loopback address @source."""
        s = socket.create_connection(("127.0.0.1", self.port), source_address=(source, 0))
        s.settimeout(20)  # a server that never answers fails the test, it does not hang it
        return s

    def close(self):
        self.loop.call_soon_threadsafe(self.task.cancel)
        self.thread.join(10)


@pytest.fixture
def inproc(ws):
    servers = []

    def make(token=None):
        servers.append(InProcess(ws, token))
        return servers[-1]
    yield make
    for s in servers:
        s.close()


def exchange(s, data):
    """Send @data and read one answer: its head and its Content-Length bytes of body (b"" when
    the server closes without one)."""
    s.sendall(data)
    out = b""
    while b"\r\n\r\n" not in out and (chunk := s.recv(65536)):
        out += chunk
    head, _, body = out.partition(b"\r\n\r\n")
    n = [int(ln.split(b":")[1]) for ln in head.split(b"\r\n")
         if ln.lower().startswith(b"content-length:")]
    while n and len(body) < n[0] and (chunk := s.recv(65536)):
        body += chunk
    return out if not n else head + b"\r\n\r\n" + body


def closed(s):
    """Whether the server closed @s (or reset it) after what was read."""
    try:
        return s.recv(65536) == b""
    except ConnectionResetError:
        return True


def request(body=None, headers="", method="POST", path="/mcp"):
    body = json.dumps(INIT).encode() if body is None else body
    return (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Connection: close\r\n{headers}Content-Length: {len(body)}\r\n\r\n").encode() + body


def status_of(answer):
    return answer.split(b"\r\n", 1)[0].decode()


@pytest.mark.pure
def test_token_checked_before_the_body(inproc):
    s = inproc(token="s3cret")
    c = s.connect()
    # A body announced and never sent: the answer comes from the headers alone, then it closes.
    head = f"POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {16 << 20}"
    got = exchange(c, head.encode() + b"\r\n\r\n")
    assert status_of(got) == "HTTP/1.1 401 Unauthorized"
    assert b"Connection: close" in got and b"WWW-Authenticate: Bearer" in got and closed(c)
    # The same with the token is read to its body and answered.
    got = exchange(s.connect(), request(headers="Authorization: Bearer s3cret\r\n"))
    assert status_of(got) == "HTTP/1.1 200 OK"


@pytest.mark.pure
def test_slow_and_idle_connections_are_closed(inproc, monkeypatch):
    from sandlock.mcp import _http

    for name in ("_HEAD_TIMEOUT", "_BODY_TIMEOUT", "_IDLE_TIMEOUT"):
        monkeypatch.setattr(_http, name, 0.2)
    s = inproc()
    assert s.connect().recv(100) == b""  # nothing sent: closed, no answer
    c = s.connect()
    got = exchange(c, b"POST /mcp HTTP/1.1\r\nContent-Type: appl")
    assert status_of(got) == "HTTP/1.1 408 Request Timeout"
    assert b"the request line and headers took over 0.2 s" in got
    assert closed(c)
    c = s.connect()
    got = exchange(c, request()[:-10])
    assert status_of(got) == "HTTP/1.1 408 Request Timeout" and b"the body took" in got
    assert closed(c)
    # Kept alive after an answer, then idle: closed.
    c = s.connect()
    c.sendall(request().replace(b"Connection: close\r\n", b""))
    got = b""
    while chunk := c.recv(65536):
        got += chunk
    assert status_of(got) == "HTTP/1.1 200 OK" and got.count(b"HTTP/1.1") == 1
    # Negative control: a request sent at once is answered.
    assert status_of(exchange(s.connect(), request())) == "HTTP/1.1 200 OK"


def kept_alive(s, headers=""):
    """A connection to @s whose one request was answered and which is then kept open."""
    c = s.connect()
    got = exchange(c, request(headers=headers).replace(b"Connection: close\r\n", b""))
    assert status_of(got) == "HTTP/1.1 200 OK"
    return c


@pytest.mark.pure
def test_connections_are_capped(inproc, monkeypatch):
    from sandlock.mcp import _http

    monkeypatch.setattr(_http, "_MAX_CONNECTIONS", 2)
    s = inproc()
    held = [kept_alive(s), kept_alive(s)]
    assert wait_until(lambda: s.srv.open == 2, timeout=10)
    got = exchange(s.connect(), request())
    assert status_of(got) == "HTTP/1.1 503 Service Unavailable" and b"over 2 connections" in got
    held.pop().close()
    assert wait_until(lambda: s.srv.open == 1, timeout=10)
    assert status_of(exchange(s.connect(), request())) == "HTTP/1.1 200 OK"
    held.pop().close()


AUTH = "Authorization: Bearer s3cret\r\n"


def pending_closed(c, why):
    """Whether @c, a connection that sent nothing, was closed with the 503 that makes room for
    a newer connection, for @why."""
    got = exchange(c, b"")
    return status_of(got) == "HTTP/1.1 503 Service Unavailable" and \
        f"closed for a newer connection: {why} without an accepted request yet".encode() in got \
        and closed(c)


def bounds(monkeypatch, **values):
    """Set the server's connection bounds for a test: each NAME=value sets _http._NAME."""
    from sandlock.mcp import _http

    for name, value in values.items():
        monkeypatch.setattr(_http, f"_{name}", value)


@pytest.mark.pure
def test_pending_connections_never_keep_an_authenticated_one_out(inproc, monkeypatch):
    bounds(monkeypatch, MAX_CONNECTIONS=2, MAX_PENDING_PER_PEER=4, MIN_PENDING_AGE=0.0)
    s = inproc(token="s3cret")
    idle = [s.connect() for _ in range(4)]  # connected, never a byte sent: no token shown
    assert wait_until(lambda: len(s.srv.pending) == 4, timeout=10)
    assert s.srv.open == 0  # not counted against the connection cap
    # One more from the same address, with the token: its peer's oldest idle one makes room.
    got = exchange(s.connect(), request(headers=AUTH))
    assert status_of(got) == "HTTP/1.1 200 OK"
    assert pending_closed(idle[0], "over 4 connections from 127.0.0.1")
    # The others are still open, and still answered.
    assert wait_until(lambda: len(s.srv.pending) == 3, timeout=10)
    assert status_of(exchange(idle[1], request(headers=AUTH))) == "HTTP/1.1 200 OK"
    for c in idle:
        c.close()


@pytest.mark.pure
def test_a_peer_makes_room_from_its_own_pending_connections(inproc, monkeypatch):
    bounds(monkeypatch, MAX_PENDING_PER_PEER=2, MAX_PENDING=3, MIN_PENDING_AGE=0.0)
    s = inproc(token="s3cret")
    a = [s.connect("127.0.0.2"), s.connect("127.0.0.2")]
    b = s.connect()
    assert wait_until(lambda: len(s.srv.pending) == 3, timeout=10)
    a.append(s.connect("127.0.0.2"))  # a third from 127.0.0.2 ends its own oldest, not b
    assert pending_closed(a[0], "over 2 connections from 127.0.0.2")
    assert wait_until(lambda: len(s.srv.pending) == 3, timeout=10)
    assert status_of(exchange(b, request(headers=AUTH))) == "HTTP/1.1 200 OK"
    # Past the bound of all pending connections, the oldest of all ends (a[1]).
    rest = [s.connect(), s.connect()]
    assert pending_closed(a[1], "over 3 connections")
    assert wait_until(lambda: len(s.srv.pending) == 3, timeout=10)
    for c in [a[2], *rest]:
        assert status_of(exchange(c, request(headers=AUTH))) == "HTTP/1.1 200 OK"



@pytest.mark.pure
def test_a_burst_never_closes_a_connection_just_made(inproc, monkeypatch):
    # The loop takes in a burst of connections before it reads any: one made just before the
    # burst must keep its chance to send its request, so the newcomers are refused instead.
    bounds(monkeypatch, MAX_PENDING_PER_PEER=2, MIN_PENDING_AGE=600.0)
    s = inproc(token="s3cret")
    mine = s.connect()
    other = s.connect()
    assert wait_until(lambda: len(s.srv.pending) == 2, timeout=10)
    got = exchange(s.connect(), b"")
    assert status_of(got) == "HTTP/1.1 503 Service Unavailable"
    assert b"over 2 connections from 127.0.0.1 without an accepted request yet, each under " \
        b"600 s old: retry later" in got
    assert len(s.srv.pending) == 2
    assert status_of(exchange(mine, request(headers=AUTH))) == "HTTP/1.1 200 OK"
    # The negative control: once they are old enough, the oldest makes room (the test above).
    bounds(monkeypatch, MIN_PENDING_AGE=0.0)
    late = [s.connect()]
    assert wait_until(lambda: len(s.srv.pending) == 2, timeout=10)  # other, late[0]
    late.append(s.connect())
    assert pending_closed(other, "over 2 connections from 127.0.0.1")
    for c in late:
        assert status_of(exchange(c, request(headers=AUTH))) == "HTTP/1.1 200 OK"

@pytest.mark.pure
@pytest.mark.parametrize("peername,peer", [
    (("192.0.2.7", 5000), "192.0.2.7"),
    (("2001:db8:1:2:3:4:5:6", 5000, 0, 0), "2001:db8:1:2::/64"),  # a host's /64 counts as one
    (("2001:db8:1:3::9", 5000, 0, 0), "2001:db8:1:3::/64"),
    (("::ffff:192.0.2.7", 5000, 0, 0), "192.0.2.7"),  # IPv4 on a dual-stack socket
    (("fe80::1%eth0", 5000, 0, 2), "fe80::/64"),
])
def test_peers_counted_by_address(peername, peer):
    from sandlock.mcp import _http

    class Writer:
        def get_extra_info(self, name):
            return peername if name == "peername" else None
    assert _http._peer(Writer()) == peer


@pytest.mark.pure
def test_one_deadline_for_the_request_line_and_headers(inproc, monkeypatch):
    from sandlock.mcp import _http

    monkeypatch.setattr(_http, "_HEAD_TIMEOUT", 2.0)
    s = inproc()
    c = s.connect()
    assert wait_until(lambda: len(s.srv.pending) == 1, timeout=10)  # its deadline is set
    # The line, then the headers, each sent within the budget of 2 s, but not both.
    head, _, rest = request().partition(b"\r\n")
    time.sleep(1.2)
    c.sendall(head + b"\r\n")
    time.sleep(1.2)
    got = exchange(c, rest)
    assert status_of(got) == "HTTP/1.1 408 Request Timeout"
    assert b"the request line and headers took over 2 s" in got
    # Negative control: the same request sent at once.
    assert status_of(exchange(s.connect(), request())) == "HTTP/1.1 200 OK"


@pytest.mark.pure
@pytest.mark.parametrize("headers,message", [
    ("X: " + "A" * 70000 + "\r\n", b"header line over 64 KiB"),
    ("".join(f"X-{i}: {'a' * 1000}\r\n" for i in range(80)), b"headers over 64 KiB"),
])
def test_header_block_is_capped(inproc, headers, message):
    s = inproc()
    got = exchange(s.connect(), request(headers=headers))
    assert status_of(got) == "HTTP/1.1 431 Request Header Fields Too Large" and message in got
    # Negative control: 50 headers of 1000 bytes are within the cap.
    fine = "".join(f"X-{i}: {'a' * 1000}\r\n" for i in range(50))
    assert status_of(exchange(s.connect(), request(headers=fine))) == "HTTP/1.1 200 OK"


@pytest.mark.pure
@pytest.mark.parametrize("framing,message", [
    ("Content-Length: 5\r\nContent-Length: {n}\r\n", b"Content-Length given more than once"),
    ("Content-Length: {n}\r\nContent-Length: {n}\r\n", b"Content-Length given more than once"),
    ("Content-Length: {u}\r\n", b"bad Content-Length"),
    ("Content-Length: +{n}\r\n", b"bad Content-Length"),
    ("Content-Length: 0x10\r\n", b"bad Content-Length"),
    ("Content-Length : {n}\r\n", b"malformed header name"),
    ("Bad Name: 1\r\nContent-Length: {n}\r\n", b"malformed header name"),
    ("X-A: 1\r\n folded\r\nContent-Length: {n}\r\n", b"obs-fold"),
])
def test_ambiguous_framing_refused(inproc, framing, message):
    s = inproc()
    body = json.dumps(INIT).encode()
    n = str(len(body))
    head = ("POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\n"
            + framing.format(n=n, u=n[0] + "_" + n[1:]) + "\r\n")
    got = exchange(s.connect(), head.encode() + body)
    assert status_of(got) == "HTTP/1.1 400 Bad Request" and message in got
    # Negative control: one Content-Length of digits (OWS around the value is allowed).
    head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Connection: close\r\nContent-Length:  {n} \r\n\r\n")
    assert status_of(exchange(s.connect(), head.encode() + body)) == "HTTP/1.1 200 OK"


@pytest.mark.pure
def test_other_sites_refused(inproc):
    s = inproc()
    for site in ("cross-site", "same-site", "Cross-Site"):
        got = exchange(s.connect(), request(headers=f"Sec-Fetch-Site: {site}\r\n"))
        assert status_of(got) == "HTTP/1.1 403 Forbidden" and b"from another site" in got
    got = exchange(s.connect(), request(method="GET", path="/sse", body=b"",
                                        headers="Sec-Fetch-Site: cross-site\r\n"))
    assert status_of(got) == "HTTP/1.1 403 Forbidden"
    for site in ("same-origin", "none"):
        got = exchange(s.connect(), request(headers=f"Sec-Fetch-Site: {site}\r\n"))
        assert status_of(got) == "HTTP/1.1 200 OK"


@pytest.mark.pure
@pytest.mark.parametrize("origin,status", [
    ("http://evil.com\\@localhost", 403), ("http://localhost:80@evil.com", 403),
    ("http://localhost/path", 403), ("http://127.0.0.1.evil.com", 403), ("null", 403),
    ("ftp://localhost:{port}", 403), ("http://localhost:{port}", 200),
    ("http://LOCALHOST:{port}", 200), ("https://127.0.0.1:{port}", 200),
    ("http://[::1]:{port}", 200), ("http://[0:0::1]:{port}", 200),
    # Another port, or none (80), is another page's.
    ("http://localhost:3000", 403), ("http://LOCALHOST", 403), ("https://127.0.0.1:8443", 403),
    ("http://[::1]:8080", 403), ("http://localhost:{port}0", 403),
])
def test_origin_grammar(inproc, origin, status):
    s = inproc()
    origin = origin.format(port=s.port)
    got = exchange(s.connect(), request(headers=f"Origin: {origin}\r\n"))
    assert status_of(got).split(" ")[1] == str(status)


@pytest.mark.pure
def test_post_needs_json_content_type(inproc):
    s = inproc()
    for ctype in ("text/plain", "application/x-www-form-urlencoded", None):
        raw = request()
        raw = raw.replace(b"application/json", ctype.encode()) if ctype else \
            raw.replace(b"Content-Type: application/json\r\n", b"")
        got = exchange(s.connect(), raw)
        assert status_of(got) == "HTTP/1.1 415 Unsupported Media Type"
    raw = request().replace(b"application/json", b"application/json; charset=utf-8")
    assert status_of(exchange(s.connect(), raw)) == "HTTP/1.1 200 OK"


def sse_stream(s, host="127.0.0.1", headers=""):
    c = s.connect()
    host = "" if host is None else f"Host: {host}\r\n"
    c.sendall(f"GET /sse HTTP/1.1\r\n{host}{headers}\r\n".encode())
    got = b""
    while b"\n\n" not in got.partition(b"\r\n\r\n")[2]:  # the first event, or a close
        chunk = c.recv(65536)
        if not chunk:
            break
        got += chunk
    return c, got


@pytest.mark.pure
def test_sse_streams_never_evict_sessions(inproc, monkeypatch):
    from sandlock.mcp import _http

    monkeypatch.setattr(_http, "_MAX_SESSIONS", 3)
    monkeypatch.setattr(_http, "_MAX_STREAMS", 4)
    s = inproc()
    got = exchange(s.connect(), request())
    sid = [ln.split(b": ")[1] for ln in got.split(b"\r\n")
           if ln.startswith(b"Mcp-Session-Id")][0].decode()
    ping = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode()
    held = []
    for _ in range(4):
        c, got = sse_stream(s)
        assert status_of(got) == "HTTP/1.1 200 OK" and b"event: endpoint" in got
        held.append(c)
    c, got = sse_stream(s)  # one stream too many
    assert status_of(got) == "HTTP/1.1 503 Service Unavailable" and b"over 4 open /sse" in got
    got = exchange(s.connect(), request(ping, f"Mcp-Session-Id: {sid}\r\n"))
    assert status_of(got) == "HTTP/1.1 200 OK" and b'"result": {}' in got
    for c in held:
        c.close()


@pytest.mark.pure
def test_tokenless_server_serves_only_its_own_names(inproc):
    s = inproc()
    # DNS rebinding: a page of rebind.example whose name now points at 127.0.0.1 reads
    # /sse with a same-origin GET, which carries no Origin and no Sec-Fetch-Site.
    for host in ("rebind.example:8080", "rebind.example", "127.0.0.1.rebind.example",
                 "localhost.", "user@127.0.0.1", "127.0.0.1:80:80"):
        c, got = sse_stream(s, host)
        assert status_of(got) == "HTTP/1.1 403 Forbidden", host
        assert f"Host {host} is not this server's name: without a bearer token only " \
               f"localhost, 127.0.0.1, [::1] (any port) are served".encode() in got, got
        c.close()
    got = exchange(s.connect(), request().replace(b"Host: 127.0.0.1", b"Host: rebind.example"))
    assert status_of(got) == "HTTP/1.1 403 Forbidden"
    c, got = sse_stream(s, None)
    assert status_of(got) == "HTTP/1.1 400 Bad Request" and b"a request needs a Host" in got
    # Negative control: the server's own names, on its port or any other, are served.
    for host in (f"127.0.0.1:{s.port}", "localhost:8080", "LOCALHOST", "[::1]", "[0::1]:9"):
        c, got = sse_stream(s, host)
        assert status_of(got) == "HTTP/1.1 200 OK" and b"event: endpoint" in got, host
        c.close()


@pytest.mark.pure
def test_with_a_token_any_host_is_served(inproc):
    s = inproc(token="s3cret")
    c, got = sse_stream(s, "mcp.example:8080", AUTH)
    assert status_of(got) == "HTTP/1.1 200 OK" and b"event: endpoint" in got
    c.close()
    c, got = sse_stream(s, "mcp.example:8080")
    assert status_of(got) == "HTTP/1.1 401 Unauthorized"


@pytest.mark.pure
def test_the_bound_address_is_a_name_of_the_server(ws):
    from sandlock.mcp import McpSandbox, _http

    mcp = McpSandbox(workspace=str(ws))
    req = _http._Request("GET", "/sse", {"host": "127.0.0.2:9"}, b"")
    _http._Server(mcp, "127.0.0.2", None)._check(req)  # served
    with pytest.raises(_http._HttpError, match=r"^Host 127.0.0.2:9 is not this server's name: "
                                               r"without a bearer token only localhost, "
                                               r"127.0.0.1, \[::1\] \(any port\) are served"):
        _http._Server(mcp, "127.0.0.1", None)._check(req)


@pytest.mark.pure
def test_deep_json_is_a_parse_error(inproc):
    s = inproc()
    got = exchange(s.connect(), request(b"[" * 100000 + b"]" * 100000))
    assert status_of(got) == "HTTP/1.1 400 Bad Request"
    assert b'"code": -32700, "message": "parse error: nested too deeply"' in got
    assert status_of(exchange(s.connect(), request())) == "HTTP/1.1 200 OK"


def test_tokenless_start_says_so(ws):
    for extra, said in (((), True), (("--token", "s3cret"), False)):
        s = start(ws, *extra)
        try:
            assert post(s.url, INIT, {"Authorization": "Bearer s3cret"})[0] == 200
        finally:
            s.proc.terminate()
            rest = s.proc.stderr.read()
            s.close()
        assert ("sandlock-mcp: no bearer token: any local user can connect" in rest) == said


@pytest.mark.pure
@pytest.mark.parametrize("env_token,argv,message", [
    ("", [], "SANDLOCK_MCP_TOKEN is empty: unset it or give a token"),
    (None, ["--token", ""], '--token "" is empty: give a token or leave --token out'),
    ("s3cret", ["--token="], '--token "" is empty'),
])
def test_empty_token_refused(ws, env_token, argv, message):
    env = {"PYTHONPATH": PKG_PARENT, "PATH": "/usr/bin:/bin"}
    if env_token is not None:
        env["SANDLOCK_MCP_TOKEN"] = env_token
    p = subprocess.run([PY, "-m", "sandlock.mcp", "--workspace", str(ws), "--transport", "http",
                        "--port", "0", *argv], env=env, capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 2 and f"sandlock-mcp: {message}" in p.stderr


@pytest.mark.pure
def test_docs_say_loopback_is_shared():
    import pathlib

    root = pathlib.Path(PKG_PARENT).parent
    for doc in (root / "README.md", root / "python" / "README.md"):
        text = " ".join(doc.read_text().split())
        assert "any local user can connect" in text, doc
        assert "share its workspace" in text or "shares its one workspace" in text, doc
