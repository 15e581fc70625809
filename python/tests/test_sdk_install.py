# SPDX-License-Identifier: LGPL-2.1-or-later
"""`pip install --no-build-isolation ./python` works offline (no index) into a fresh virtual
environment, ships libsandlock inside the package, and the installed package runs a sandbox
from outside the source tree with no SANDLOCK_LIB."""

import json
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_pip_install_offline(tmp_path):
    if shutil.which("make") is None:
        pytest.fail("make is needed to build the library the package ships")
    env = {k: v for k, v in os.environ.items()
           if k not in ("SANDLOCK_LIB", "PYTHONPATH", "LD_PRELOAD", "PIP_INDEX_URL")}
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, env=env, timeout=120)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-index",
                          "--no-build-isolation", str(ROOT / "python")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert pip.returncode == 0, pip.stdout + pip.stderr

    script = (
        "import sandlock, os\n"
        "print(sandlock._ffi.library_path())\n"
        "r = sandlock.Sandbox(fs_readable=[d for d in ('/usr', '/lib', '/lib64', '/bin')"
        " if os.path.exists(d)]).run(['echo', 'installed'])\n"
        "print(r.stdout.decode().strip())\n"
    )
    run = subprocess.run([str(venv / "bin" / "python"), "-c", script], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=60)
    assert run.returncode == 0, run.stderr
    lib, out = run.stdout.splitlines()
    assert lib.startswith(str(venv)) and lib.endswith("/sandlock/libsandlock.so")
    assert out == "installed"

    # The sandlock-mcp console script, its tools running on the installed package.
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("mcp\n")
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18"}},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "read_file", "arguments": {"path": "a.txt"}}}]
    mcp = subprocess.run([str(venv / "bin" / "sandlock-mcp"), "--workspace", str(ws)],
                         input="".join(json.dumps(m) + "\n" for m in lines),
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert mcp.returncode == 0, mcp.stderr
    answer = json.loads(mcp.stdout.splitlines()[-1])
    assert answer["result"] == {"content": [{"type": "text", "text": "mcp\n"}],
                                "isError": False}

    # Control: without the bundled library and without SANDLOCK_LIB, loading fails clearly
    # (unless a system libsandlock.so.0 is installed).
    pathlib.Path(lib).unlink()
    run = subprocess.run([str(venv / "bin" / "python"), "-c", script], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=60)
    system_lib = any(pathlib.Path(d, "libsandlock.so.0").exists()
                     for d in ("/usr/lib", "/usr/local/lib", "/usr/lib/x86_64-linux-gnu"))
    if not system_lib:
        assert run.returncode != 0
        assert "cannot load libsandlock (libsandlock.so.0)" in run.stderr
