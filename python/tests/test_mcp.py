# SPDX-License-Identifier: LGPL-2.1-or-later
"""McpSandbox: each tool call in a fresh deny-by-default sandbox, granted only its capabilities;
the built-in tools confined to the workspace by the kernel."""

import asyncio
import json
import os
import socket
import threading
import time

import pytest

import mcp_tools
from conftest import run
from mcp_client import StdioClient
from sandlock.mcp import McpSandbox, ToolError, capabilities_from_mcp_tool, policy_for_tool
from sandlock.mcp import builtin


@pytest.fixture
def ws(tmp_path):
    d = tmp_path / "ws"
    d.mkdir()
    (d / "ok.txt").write_text("fine\n")
    (tmp_path / "secret").write_text("top secret\n")
    os.symlink(tmp_path / "secret", d / "link")
    return d


def mcp_for(ws, **kw):
    return McpSandbox(workspace=str(ws), **kw)


def test_no_capability_cannot_write_the_workspace(ws):
    m = mcp_for(ws)
    m.add_tool("write", mcp_tools.write)
    m.add_tool("write_granted", mcp_tools.write, capabilities={"fs_writable": [str(ws)]})
    with pytest.raises(ToolError, match=r"PermissionError: \[Errno 13\]"):
        run(m.call_tool("write", {"path": "a.txt"}))
    assert not (ws / "a.txt").exists()
    assert run(m.call_tool("write_granted", {"path": "a.txt"})) == "wrote"
    assert (ws / "a.txt").read_text() == "written"


@pytest.fixture
def listener():
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    stop = threading.Event()

    def serve():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            c.sendall(b"hello")
            c.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield port
    stop.set()
    t.join()
    srv.close()


def test_no_capability_cannot_connect_to_loopback(ws, listener):
    m = mcp_for(ws)
    m.add_tool("connect", mcp_tools.connect)
    m.add_tool("connect_granted", mcp_tools.connect,
               capabilities={"net_allow": [f"127.0.0.1:{listener}"]})
    with pytest.raises(ToolError, match=r"PermissionError: \[Errno 13\]"):
        run(m.call_tool("connect", {"port": listener}))
    assert run(m.call_tool("connect_granted", {"port": listener})) == "hello"


def test_env_capability_and_nothing_of_the_callers(ws, monkeypatch):
    monkeypatch.setenv("MCP_TEST_CALLER_SECRET", "leaked")
    m = mcp_for(ws)
    m.add_tool("env", mcp_tools.environment, capabilities={"env": {"MCP_TOKEN": "t0k"}})
    m.add_tool("env_caller", mcp_tools.environment, capabilities={"clean_env": False})
    env = json.loads(run(m.call_tool("env")))
    assert env["MCP_TOKEN"] == "t0k"
    assert set(env) == {"PATH", "HOME", "TMPDIR", "LANG", "TERM", "USER", "MCP_TOKEN"}
    assert env["HOME"] == env["TMPDIR"] and env["USER"] == "sandlock"
    assert not env["HOME"].startswith(str(ws))
    # The negative control: with the caller's environment granted, the variable is there.
    assert json.loads(run(m.call_tool("env_caller")))["MCP_TEST_CALLER_SECRET"] == "leaked"


def test_workspace_injected_hidden_and_not_overridable(ws):
    m = mcp_for(ws)
    m.add_tool("where", mcp_tools.where)
    (d,) = m.tool_definitions_openai()
    assert d["function"]["parameters"] == {"type": "object", "properties": {},
                                           "additionalProperties": False}
    assert run(m.call_tool("where")) == str(ws)
    with pytest.raises(ToolError, match="workspace is set by the sandbox"):
        run(m.call_tool("where", {"workspace": "/etc"}))


@pytest.mark.pure
def test_lambdas_methods_nested_refused(ws):
    m = mcp_for(ws)

    def nested():
        return "no"

    for func, what in [(lambda: 1, "a lambda"), (mcp_tools.Holder().method, "a method"),
                       (mcp_tools.Holder.method, "a method"), (nested, "a nested function"),
                       (len, "builtin_function_or_method")]:
        with pytest.raises(ValueError, match=what):
            m.add_tool("t", func)
    assert m.tools == {}


def test_schema_and_result_text(ws):
    m = mcp_for(ws)
    m.add_tool("add", mcp_tools.add, description="Add two integers")
    (d,) = m.tool_definitions_openai()
    assert d == {"type": "function", "function": {
        "name": "add", "description": "Add two integers",
        "parameters": {"type": "object", "required": ["a"], "additionalProperties": False,
                       "properties": {"a": {"type": "integer"},
                                      "b": {"type": "integer", "default": 2}}}}}
    assert run(m.call_tool("add", {"a": 40})) == "42"
    assert m.tools == {"add": mcp_tools.add}
    with pytest.raises(ValueError, match="a tool named 'add' is registered already"):
        m.add_tool("add", mcp_tools.fail)
    with pytest.raises(KeyError):
        run(m.call_tool("nope"))


def test_unknown_capability_named(ws):
    with pytest.raises(ValueError, match="unknown capability 'fs_writeable'"):
        policy_for_tool(workspace=str(ws), capabilities={"fs_writeable": ["/tmp"]})
    with pytest.raises(ValueError, match="unknown capability 'network'"):
        mcp_for(ws).add_tool("add", mcp_tools.add, capabilities={"network": True})


def test_policy_for_tool_deny_by_default(ws):
    p = policy_for_tool(workspace=str(ws))
    assert str(ws) in p.fs_readable and "/usr" in p.fs_readable
    assert list(p.fs_writable) == [] and list(p.net_allow) == []
    assert list(p.net_allow_bind) == [] and p.clean_env is True
    g = policy_for_tool(workspace=str(ws), capabilities={"fs_writable": [str(ws)],
                                                         "max_memory": "256M"})
    assert list(g.fs_writable) == [str(ws)] and g.max_memory == "256M"


def test_hanging_tool_killed_at_its_timeout(ws):
    m = mcp_for(ws, timeout=30)
    m.add_tool("hang", mcp_tools.hang)
    t0 = time.monotonic()
    with pytest.raises(ToolError, match=r"timed out after 1 s \(killed\)"):
        run(m.call_tool("hang", {}, timeout=1))
    assert time.monotonic() - t0 < 10
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="finite number of seconds > 0"):
            run(m.call_tool("hang", {}, timeout=bad))
    # The negative control: a short sleep within the limit answers.
    assert run(m.call_tool("hang", {"seconds": 0.1}, timeout=10)) == "woke"


def test_cancelled_call_kills_its_process(ws):
    m = mcp_for(ws)
    m.add_tool("hang", mcp_tools.hang)

    async def go():
        task = asyncio.create_task(m.call_tool("hang"))
        await asyncio.sleep(1.0)
        task.cancel()
        t0 = time.monotonic()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - t0

    assert run(go()) < 5


def test_builtin_file_tools_confined_by_the_kernel(ws):
    m = mcp_for(ws)
    builtin.register(m)
    assert run(m.call_tool("read_file", {"path": "ok.txt"})) == "fine\n"
    for path in ("../secret", "link", str(ws.parent / "secret"), "/usr/lib/os-release"):
        with pytest.raises(ToolError, match=r"PermissionError: \[Errno 13\]"):
            run(m.call_tool("read_file", {"path": path}))
    # The negative control: the same file outside the sandbox reads.
    assert (ws / "link").read_text() == "top secret\n"
    with pytest.raises(ToolError, match=r"PermissionError: \[Errno 13\]"):
        run(m.call_tool("write_file", {"path": "../out.txt", "content": "x"}))
    assert not (ws.parent / "out.txt").exists()
    assert run(m.call_tool("write_file", {"path": "new.txt", "content": "abc"})) == \
        "wrote 3 characters to new.txt"
    assert (ws / "new.txt").read_text() == "abc"
    assert run(m.call_tool("list_files")) == "link\nnew.txt\nok.txt"
    with pytest.raises(ToolError, match=r"PermissionError: \[Errno 13\]"):
        run(m.call_tool("list_files", {"subdir": ".."}))


def test_builtin_shell_and_python(ws):
    m = mcp_for(ws)
    builtin.register(m)
    assert run(m.call_tool("shell", {"command": "cat ok.txt; echo more > s.txt"})) == "fine\n"
    assert (ws / "s.txt").read_text() == "more\n"
    with pytest.raises(ToolError, match="exit status 3"):
        run(m.call_tool("shell", {"command": "exit 3"}))
    with pytest.raises(ToolError, match="Permission denied"):
        run(m.call_tool("shell", {"command": f"cat {ws.parent / 'secret'}"}))
    assert run(m.call_tool("python", {"code": "print(6 * 7)"})) == "42\n"


@pytest.mark.pure
def test_capabilities_from_mcp_tool():
    class Tool:
        annotations = {"sandlock:fs_writable": ["/tmp/x"], "title": "T"}
        meta = {"sandlock:net_allow": ["a.example:443"]}

    assert capabilities_from_mcp_tool(Tool()) == {"fs_writable": ["/tmp/x"],
                                                  "net_allow": ["a.example:443"]}
    assert capabilities_from_mcp_tool({"name": "t", "_meta": {"sandlock:env": {"A": "1"}},
                                       "annotations": {"readOnlyHint": True}}) == \
        {"env": {"A": "1"}}
    assert capabilities_from_mcp_tool({"name": "t"}) == {}


class StdioSession:
    """A client session of a real remote server (sandlock-mcp over stdio), as the mcp
    package's ClientSession is used: async list_tools() and call_tool()."""

    def __init__(self, client):
        self.client, self.next_id = client, 10

    async def _request(self, method, params=None):
        self.next_id += 1
        reply = await asyncio.to_thread(self.client.request, self.next_id, method, params)
        return reply["result"]

    async def list_tools(self):
        return await self._request("tools/list")

    async def call_tool(self, name, arguments):
        return await self._request("tools/call", {"name": name, "arguments": arguments})


def test_remote_tools_forwarded_not_sandboxed_here(ws, tmp_path):
    remote_ws = tmp_path / "remote"
    remote_ws.mkdir()
    (remote_ws / "r.txt").write_text("remote\n")
    client = StdioClient(remote_ws)
    try:
        client.initialize()
        m = mcp_for(ws)
        m.add_tool("add", mcp_tools.add)
        run(m.add_mcp_session(StdioSession(client)))
        assert sorted(m.tools) == ["add", "list_files", "python", "read_file", "shell",
                                   "write_file"]
        assert run(m.call_tool("read_file", {"path": "r.txt"})) == "remote\n"
        with pytest.raises(ToolError, match=r"PermissionError: \[Errno 13\]"):
            run(m.call_tool("read_file", {"path": "../secret"}))
        with pytest.raises(ValueError, match="runs on its own server, which this process "
                                             "cannot sandbox"):
            m.get_policy("read_file")
        assert m.get_policy("add").clean_env is True  # a local tool has one
    finally:
        client.close()


def test_any_text_comes_back_intact(ws):
    m = mcp_for(ws)
    m.add_tool("fail", mcp_tools.fail)
    m.add_tool("add", mcp_tools.add)
    text = 'q"uote\\ \n\r\t\x00\x1f\x7f\x85 \u2028\u2029 é 😀 </script>'
    with pytest.raises(ToolError) as e:
        run(m.call_tool("fail", {"message": text}))
    assert str(e.value) == f"RuntimeError: {text}"
    # A name the function does not take is refused before its worker starts.
    with pytest.raises(ToolError) as e:
        run(m.call_tool("add", {"a": 1, "c": 2}))
    assert str(e.value) == 'tool \'add\': argument "c": not a known argument (known: a, b)'



def test_a_call_leaves_no_descriptor_open(ws):
    """A call closes its worker's pipes itself: none is left for the garbage collector."""
    import gc

    m = mcp_for(ws)
    m.add_tool("add", mcp_tools.add)
    run(m.call_tool("add", {"a": 1}))  # the pool's thread and the library loaded once
    gc.collect()
    gc.disable()
    try:
        before = sorted(os.listdir("/proc/self/fd"))
        for _ in range(3):
            assert run(m.call_tool("add", {"a": 1})) == "3"
        assert sorted(os.listdir("/proc/self/fd")) == before
    finally:
        gc.enable()
        m.close()
