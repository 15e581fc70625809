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
