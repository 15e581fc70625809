# SPDX-License-Identifier: LGPL-2.1-or-later
"""sandlock-mcp over stdio, driven by a raw JSON-RPC client: version negotiation, protocol
errors, tool errors as isError results, cancellation of a running call."""

import json
import os
import queue
import subprocess
import time

import pytest

from conftest import PKG_PARENT, PY, pids_with_argv, wait_until
from mcp_client import StdioClient


@pytest.fixture
def ws(tmp_path):
    d = tmp_path / "ws"
    d.mkdir()
    (d / "ok.txt").write_text("fine\n")
    (tmp_path / "secret").write_text("top secret\n")
    return d


@pytest.fixture
def client(ws):
    c = StdioClient(ws)
    yield c
    c.close()


@pytest.mark.parametrize("asked,answered", [("2025-06-18", "2025-06-18"),
                                            ("2025-03-26", "2025-03-26"),
                                            ("2024-11-05", "2024-11-05"),
                                            ("2025-11-25", "2025-11-25"),
                                            ("1999-01-01", "2025-11-25")])
def test_version_negotiation(client, asked, answered):
    r = client.initialize(asked)
    assert r["id"] == 0
    assert r["result"]["protocolVersion"] == answered
    assert r["result"]["serverInfo"]["name"] == "sandlock-mcp"
    assert r["result"]["capabilities"] == {"tools": {"listChanged": False}}


def test_protocol_errors(client):
    assert client.request(1, "tools/list")["error"]["code"] == -32002  # before initialize
    assert client.request(2, "initialize", {})["error"]["code"] == -32602
    client.initialize()
    client.send_raw(b"{not json\n")
    assert client.recv()["error"]["code"] == -32700
    client.send_raw(b'[{"jsonrpc":"2.0","id":3,"method":"ping"}]\n')
    assert client.recv()["error"]["code"] == -32600
    client.send({"id": 4, "method": "ping"})
    assert client.recv() == {"jsonrpc": "2.0", "id": 4, "error": {
        "code": -32600, "message": "invalid request: not a JSON-RPC 2.0 message"}}
    assert client.request(5, "resources/list")["error"]["code"] == -32601
    r = client.request(6, "tools/call", {"name": "nope", "arguments": {}})
    assert r["error"] == {"code": -32602, "message": "unknown tool: 'nope'"}
    r = client.request(7, "tools/call", {"name": "read_file", "arguments": [1]})
    assert r["error"]["code"] == -32602
    assert client.request(8, "ping") == {"jsonrpc": "2.0", "id": 8, "result": {}}


def test_tools_list_and_call(client, ws):
    client.initialize()
    tools = client.request(1, "tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == ["shell", "python", "read_file", "write_file",
                                          "list_files"]
    for t in tools:
        assert "workspace" not in t["inputSchema"]["properties"]
    r = client.request(2, "tools/call", {"name": "read_file", "arguments": {"path": "ok.txt"}})
    assert r["result"] == {"content": [{"type": "text", "text": "fine\n"}], "isError": False}
    r = client.request(3, "tools/call", {"name": "read_file", "arguments": {"path": "../secret"}})
    assert r["result"]["isError"] is True
    assert "PermissionError: [Errno 13] Permission denied" in r["result"]["content"][0]["text"]
    r = client.request(4, "tools/call", {"name": "write_file",
                                         "arguments": {"path": "w.txt", "content": "hey"}})
    assert r["result"]["isError"] is False
    assert (ws / "w.txt").read_text() == "hey"


def test_cancellation_kills_the_call(client):
    client.initialize()
    argv = ["sleep", f"29.{time.monotonic_ns() % 10**6}"]
    client.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                 "params": {"name": "shell", "arguments": {"command": " ".join(argv)}}})
    assert wait_until(lambda: pids_with_argv(argv), timeout=10)
    # The calls run concurrently: another answers while the first runs.
    assert client.request(2, "ping")["id"] == 2
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": {"requestId": 1, "reason": "test"}})
    assert wait_until(lambda: not pids_with_argv(argv), timeout=10)
    assert client.request(3, "ping")["id"] == 3  # and nothing for the cancelled request
    with pytest.raises(queue.Empty):
        client.recv(timeout=0.5)


def test_requests_from_a_file(ws, tmp_path):
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                 "params": {"protocolVersion": "2024-11-05"}}) + "\n" +
                     json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                 "params": {"name": "read_file",
                                            "arguments": {"path": "ok.txt"}}}) + "\n")
    with open(calls) as stdin:
        p = subprocess.run([PY, "-m", "sandlock.mcp", "--workspace", str(ws)], stdin=stdin,
                           capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, PYTHONPATH=PKG_PARENT))
    assert p.returncode == 0, p.stderr
    replies = [json.loads(line) for line in p.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[1]["result"]["content"][0]["text"] == "fine\n"


def rpc(msg_id, method, params=None):
    msg = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


READ_OK = {"name": "read_file", "arguments": {"path": "ok.txt"}}
OK_RESULT = {"content": [{"type": "text", "text": "fine\n"}], "isError": False}
BATCH_REFUSED = ("invalid request: batches are not supported at this protocol version (they "
                 "are at 2025-03-26 and 2024-11-05; this session's is 2025-06-18)")


def send_batch(client, batch):
    client.send_raw(json.dumps(batch).encode() + b"\n")
    return client.recv()


@pytest.mark.parametrize("version", ["2025-03-26", "2024-11-05"])
def test_batch_answered_as_one_array(client, version):
    client.initialize(version)
    reply = send_batch(client, [
        rpc(1, "ping"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        5,
        rpc(2, "initialize", {"protocolVersion": version}),
        rpc(3, "tools/call", READ_OK),
        rpc(4, "nope/nope")])
    assert reply == [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": None, "error": {
            "code": -32600, "message": "invalid request: not a JSON-RPC 2.0 message"}},
        {"jsonrpc": "2.0", "id": 2, "error": {
            "code": -32600, "message": "invalid request: initialize cannot be in a batch"}},
        {"jsonrpc": "2.0", "id": 3, "result": OK_RESULT},
        {"jsonrpc": "2.0", "id": 4, "error": {"code": -32601,
                                              "message": "method not found: nope/nope"}}]


def test_batch_refused_at_2025_06_18(client):
    client.initialize("2025-06-18")
    reply = send_batch(client, [rpc(1, "ping"), rpc(3, "tools/call", READ_OK)])
    assert reply == {"jsonrpc": "2.0", "id": None,
                     "error": {"code": -32600, "message": BATCH_REFUSED}}
    assert client.request(5, "ping") == {"jsonrpc": "2.0", "id": 5, "result": {}}


def test_batch_edges(client, monkeypatch):
    client.initialize("2025-03-26")
    assert send_batch(client, []) == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": "invalid request: an empty batch"}}
    assert send_batch(client, [rpc(i, "ping") for i in range(1025)]) == {
        "jsonrpc": "2.0", "id": None, "error": {
            "code": -32600, "message": "invalid request: a batch of 1025 messages (at most 1024)"}}
    assert len(send_batch(client, [rpc(i, "ping") for i in range(1024)])) == 1024
    # Notifications only: nothing is written for the batch; the ping after it answers first.
    client.send_raw(json.dumps([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
                    .encode() + b"\n")
    assert client.request(7, "ping") == {"jsonrpc": "2.0", "id": 7, "result": {}}
    with pytest.raises(queue.Empty):
        client.recv(timeout=0.5)


def test_batch_calls_run_concurrently_and_cancel_alone(client, ws):
    client.initialize("2025-03-26")
    argv = ["sleep", f"27.{time.monotonic_ns() % 10**6}"]
    hang = {"name": "shell", "arguments": {"command": " ".join(argv)}}
    mark = {"name": "shell", "arguments": {"command": "echo marked > mark.txt"}}
    client.send_raw(json.dumps([rpc(1, "tools/call", hang), rpc(2, "tools/call", mark)])
                    .encode() + b"\n")
    # The second call of the batch has run while the first still runs.
    assert wait_until(lambda: (ws / "mark.txt").exists(), timeout=10)
    assert wait_until(lambda: pids_with_argv(argv), timeout=10)
    # And so do separate requests.
    assert client.request(3, "ping")["id"] == 3
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": {"requestId": 1, "reason": "test"}})
    assert wait_until(lambda: not pids_with_argv(argv), timeout=10)
    # The batch answers with the call that ran, nothing for the cancelled one.
    assert client.recv() == [{"jsonrpc": "2.0", "id": 2, "result": {
        "content": [{"type": "text", "text": ""}], "isError": False}}]
    assert (ws / "mark.txt").read_text() == "marked\n"


def test_arguments_checked_before_the_call(client, ws):
    client.initialize()
    write = {"name": "write_file", "arguments": {"path": "w.txt", "content": 5}}
    r = client.request(1, "tools/call", write)
    assert r["result"] == {"content": [{"type": "text", "text": 'tool \'write_file\': argument '
                                        '"content": expected string, got integer'}],
                           "isError": True}
    assert not (ws / "w.txt").exists()
    r = client.request(2, "tools/call", {"name": "list_files", "arguments": {"dir": "."}})
    assert r["result"]["content"][0]["text"] == \
        'tool \'list_files\': argument "dir": not a known argument (known: subdir)'
    write["arguments"]["content"] = "5"
    assert client.request(3, "tools/call", write)["result"]["isError"] is False
    assert (ws / "w.txt").read_text() == "5"

def test_deep_json_is_a_parse_error(client):
    client.send_raw(b"[" * 100000 + b"]" * 100000 + b"\n")
    assert client.recv() == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32700, "message": "parse error: nested too deeply"}}
    client.send_raw(b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": ' + b"[" * 100000)
    client.send_raw(b"]" * 100000 + b"}\n")
    assert client.recv()["error"]["message"] == "parse error: nested too deeply"
    # The server goes on: the next request is answered.
    assert client.initialize()["result"]["serverInfo"]["name"] == "sandlock-mcp"


class _Broken:
    """A stand-in for McpSandbox whose tool call fails as no tool error does."""

    workspace = "/nonexistent"
    tools = {"t": None}

    def mcp_tool_definitions(self):
        return {}["no such key"]

    async def call_tool(self, name, arguments=None):
        raise AttributeError("'NoneType' object has no attribute 'content'")


@pytest.mark.pure
def test_unexpected_exception_is_an_internal_error():
    import asyncio

    from sandlock.mcp._protocol import Session

    async def run(session, msg_id, method, params=None):
        return await session.handle({"jsonrpc": "2.0", "id": msg_id, "method": method,
                                     "params": params or {}})

    async def main():
        s = Session(_Broken())
        init = await run(s, 0, "initialize", {"protocolVersion": "2025-06-18"})
        return (init, await run(s, 1, "tools/call", {"name": "t"}),
                await run(s, 2, "tools/list"), await run(s, 3, "ping"))

    init, call, listed, ping = asyncio.run(main())
    assert "result" in init
    assert call == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message":
                    "internal error: AttributeError: 'NoneType' object has no attribute "
                    "'content'"}}
    assert listed == {"jsonrpc": "2.0", "id": 2, "error": {
        "code": -32603, "message": "internal error: KeyError: 'no such key'"}}
    assert ping == {"jsonrpc": "2.0", "id": 3, "result": {}}  # and the session goes on


@pytest.mark.parametrize("line, message", [
    (b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}',
     "invalid request: an id is a string, a number or null"),
    (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}',
     "invalid request: an id is a string, a number or null"),
    (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}',
     "invalid request: an id is a string, a number or null"),
    (b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}', "parse error: NaN is not JSON"),
    (b'{"jsonrpc": "2.0", "id": -Infinity, "method": "ping"}',
     "parse error: -Infinity is not JSON")])
def test_an_id_that_cannot_be_answered_is_refused(client, line, message):
    client.send_raw(line + b"\n")
    reply = client.recv()
    assert reply["id"] is None and reply["error"]["message"] == message, reply
    # Negative control: the same request with a string id is answered.
    assert client.request("a", "ping") == {"jsonrpc": "2.0", "id": "a", "result": {}}


def test_an_id_in_flight_is_not_taken_twice(client, ws):
    client.initialize("2025-06-18")
    argv = ["sleep", f"28.{time.monotonic_ns() % 10**6}"]
    client.send(rpc(1, "tools/call", {"name": "shell",
                                      "arguments": {"command": " ".join(argv)}}))
    assert wait_until(lambda: pids_with_argv(argv), timeout=10)
    assert client.request(1, "ping") == {"jsonrpc": "2.0", "id": 1, "error": {
        "code": -32600, "message": "invalid request: id 1 is in use by a request in flight"}}
    # The first call kept its place: a cancellation by its id still reaches it.
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": {"requestId": 1}})
    assert wait_until(lambda: not pids_with_argv(argv), timeout=10)
    # Once it is over (its process is gone first, its answer slot a moment later), the id is
    # free again.
    assert wait_until(lambda: client.request(1, "ping") ==
                      {"jsonrpc": "2.0", "id": 1, "result": {}}, timeout=10)


def test_a_cancellation_naming_no_id_is_ignored(client):
    client.initialize("2025-06-18")
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": {"requestId": {"not": "an id"}}})
    assert client.request(2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": {}}
