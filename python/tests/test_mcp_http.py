# SPDX-License-Identifier: LGPL-2.1-or-later
"""sandlock-mcp --transport http: the Streamable HTTP transport's sessions and errors, and the
bearer token, driven by a plain HTTP client (http.client)."""

import http.client
import json
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
    assert post(server.url, INIT, {"Origin": "http://evil.example"})[0] == 403
    # DNS rebinding: the page's name in both the Origin and the Host header.
    assert post(server.url, INIT, {"Origin": "http://evil.example:8080",
                                   "Host": "evil.example:8080"})[0] == 403
    assert post(server.url, INIT, {"Origin": "http://127.0.0.1:3000"})[0] == 200


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
