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


@pytest.fixture
def node():
    path = shutil.which("node")
    need(path is not None, "node (Debian's nodejs)")
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


def test_stdio(node, ws, tmp_path):
    # The SDK starts the server with the environment it is given: a wrapper sets ours.
    wrapper = tmp_path / "sandlock-mcp"
    wrapper.write_text(f"#!/bin/sh\nexport PYTHONPATH='{PKG_PARENT}' "
                       f"SANDLOCK_LIB='{os.path.abspath(os.environ['SANDLOCK_LIB'])}'\n"
                       f"exec {PY} -m sandlock.mcp \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    check_session(client(node, "stdio", str(wrapper), "--workspace", str(ws)), ws)


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
