# SPDX-License-Identifier: LGPL-2.1-or-later
"""McpSandbox and sandlock-mcp keep tools apart from the server and from each other: the
workspace is checked (owner, mode, import path), no tool's code is writable by a tool, each
call has a private HOME, the built-ins are bounded and keep the agent's text off argv."""

import asyncio
import gc
import importlib
import io
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading

import pytest

import mcp_isolation_tools
from conftest import PKG_PARENT, PY, run
from mcp_client import HttpServer, StdioClient
import mcp_tools
from sandlock.mcp import McpSandbox, ToolError, builtin
from sandlock.mcp import _sandbox


@pytest.fixture
def ws(tmp_path):
    d = tmp_path / "ws"
    d.mkdir(mode=0o700)
    return d


def server_env():
    env = {"PYTHONPATH": PKG_PARENT, "PATH": "/usr/bin:/bin",
           "SANDLOCK_LIB": os.path.abspath(os.environ["SANDLOCK_LIB"])}
    # A sanitizer build of the library loads only after its runtimes (the runner's preload).
    env.update({k: os.environ[k] for k in ("LD_PRELOAD", "ASAN_OPTIONS") if k in os.environ})
    return env


def start_server(workspace, cwd, *extra):
    """sandlock-mcp (python3 -m) on stdio with no request: it checks, then ends at EOF."""
    return subprocess.run([PY, "-m", "sandlock.mcp", "--workspace", workspace, *extra],
                          cwd=cwd, env=server_env(), input="", capture_output=True, text=True,
                          timeout=60)


# -- the workspace and the server's import path ------------------------------------------------

def test_server_refuses_its_working_directory_as_workspace(ws, tmp_path):
    p = start_server(".", str(ws))
    assert p.returncode == 2
    assert p.stderr == (f"sandlock-mcp: the workspace {ws} is on this process's import path "
                        f"({ws}): a tool could plant a module this process imports; use "
                        "another directory, and never start the server from inside its "
                        "workspace\n")
    # The negative control: started from another directory, the server serves and ends at EOF.
    other = tmp_path / "elsewhere"
    other.mkdir()
    p = start_server(str(ws), str(other))
    assert (p.returncode, p.stderr) == (0, "")


def test_workspace_on_or_around_the_import_path_refused(ws, monkeypatch):
    McpSandbox(workspace=str(ws))  # the negative control: not on the import path
    inner = ws / "lib"
    inner.mkdir()
    for entry in (str(ws), str(inner), os.path.relpath(ws)):
        monkeypatch.setattr(sys, "path", [entry] + sys.path)
        with pytest.raises(ValueError, match=r"^McpSandbox: the workspace .* is on this "
                                             r"process's import path"):
            McpSandbox(workspace=str(ws))
        monkeypatch.undo()
    monkeypatch.setattr(sys, "path", [str(ws.parent)] + sys.path)
    with pytest.raises(ValueError, match="import path"):
        McpSandbox(workspace=str(ws))  # inside an entry


def test_workspace_holding_the_running_script_refused(ws, monkeypatch):
    script = ws / "server.py"
    script.write_text("")
    monkeypatch.setattr(sys, "argv", [str(script)])
    with pytest.raises(ValueError, match=f"is on this process's import path \\({ws}\\)"):
        McpSandbox(workspace=str(ws))
    monkeypatch.setattr(sys, "argv", [str(ws.parent / "other.py")])
    McpSandbox(workspace=str(ws))


# -- who owns the workspace --------------------------------------------------------------------

def test_missing_workspace_made_0700(tmp_path):
    m = McpSandbox(workspace=str(tmp_path / "new" / "ws"))
    assert m.workspace == str(tmp_path / "new" / "ws")
    assert os.stat(m.workspace).st_mode & 0o777 == 0o700


def test_workspace_writable_by_others_refused(ws):
    os.chmod(ws, 0o777)
    with pytest.raises(ValueError) as e:
        McpSandbox(workspace=str(ws))
    assert str(e.value) == (f"McpSandbox: the workspace {ws} is writable by other users (mode "
                            f"0777): chmod go-w {ws}, or choose a directory only you can write")
    p = start_server(str(ws), "/")
    assert p.returncode == 2
    assert p.stderr == (f"sandlock-mcp: the workspace {ws} is writable by other users (mode "
                        f"0777): chmod go-w {ws}, or choose a directory only you can write\n")
    os.chmod(ws, 0o755)  # the negative control
    assert McpSandbox(workspace=str(ws)).workspace == str(ws)


def test_workspace_of_another_user_refused(ws):
    if os.geteuid() == 0:
        os.chown(ws, 65534, 65534)
        path, owner = str(ws), 65534
    else:
        path, owner = "/usr/share/doc", 0
    with pytest.raises(ValueError) as e:
        McpSandbox(workspace=path)
    assert str(e.value) == (f"McpSandbox: the workspace {path} is owned by uid {owner}, not by "
                            f"this user (uid {os.geteuid()}): choose a directory you own")
    if os.geteuid() == 0:
        os.chown(ws, 0, 0)  # the negative control
        McpSandbox(workspace=path)


def test_workspace_under_a_directory_others_can_write_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)  # anyone may rename the workspace away and put theirs there
    with pytest.raises(ValueError) as e:
        McpSandbox(workspace=str(shared / "ws"))
    assert str(e.value) == (f"McpSandbox: the workspace {shared / 'ws'} lies inside {shared}, "
                            "which other users can write (mode 0777, not sticky): they could "
                            "rename the workspace away and put another in its place; chmod "
                            f"go-w {shared} (or +t), or choose another directory")
    os.chmod(shared, 0o775)
    with pytest.raises(ValueError, match=r"which other users can write \(mode 0775, not"):
        McpSandbox(workspace=str(shared / "ws"))  # a group may hold other users too
    # The negative controls: sticky (as /tmp is), others rename only their own entries; and
    # the same directory once only its owner can write it.
    os.chmod(shared, 0o1777)
    assert McpSandbox(workspace=str(shared / "ws")).workspace == str(shared / "ws")
    os.chmod(shared, 0o755)
    assert McpSandbox(workspace=str(shared / "ws")).workspace == str(shared / "ws")
    if os.geteuid() == 0:
        # A directory of another user: that user may rename what it holds, sticky or not.
        os.chmod(shared, 0o1777)
        os.chown(shared, 65534, 65534)
        with pytest.raises(ValueError) as e:
            McpSandbox(workspace=str(shared / "ws"))
        assert str(e.value) == (f"McpSandbox: the workspace {shared / 'ws'} lies inside "
                                f"{shared}, owned by uid 65534, who could rename the workspace "
                                "away and put another in its place: choose a directory whose "
                                "parents are yours or root's")
        os.chown(shared, 0, 0)
        McpSandbox(workspace=str(shared / "ws"))


def test_missing_parents_made_0700_whatever_the_umask(tmp_path):
    # makedirs would make the parents 0775 under umask 002, which the check then refuses.
    old = os.umask(0o002)
    try:
        m = McpSandbox(workspace=str(tmp_path / "a" / "b" / "ws"))
    finally:
        os.umask(old)
    assert m.workspace == str(tmp_path / "a" / "b" / "ws")
    for d in ("a", "a/b", "a/b/ws"):
        assert stat.S_IMODE(os.stat(tmp_path / d).st_mode) == 0o700, d

def test_symlink_in_a_shared_sticky_directory_refused(tmp_path, ws):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    (shared / "ws").symlink_to(ws)
    with pytest.raises(ValueError) as e:
        McpSandbox(workspace=str(shared / "ws"))
    assert str(e.value) == (f"McpSandbox: the workspace {shared / 'ws'} goes through the "
                            f"symlink {shared / 'ws'} in a directory every user can write "
                            "(another user may have planted it): give the real path")
    mine = tmp_path / "mine"  # the negative control: a symlink in a directory of this user
    mine.mkdir()
    (mine / "ws").symlink_to(ws)
    assert McpSandbox(workspace=str(mine / "ws")).workspace == str(ws)


# -- a tool's code is never writable by a tool -------------------------------------------------

def _module(monkeypatch, top, name, body="def run() -> str:\n    return 'ran'\n"):
    top.mkdir(parents=True, exist_ok=True)
    (top / f"{name}.py").write_text(body)
    monkeypatch.syspath_prepend(str(top))
    monkeypatch.delitem(sys.modules, name, raising=False)
    mod = importlib.import_module(name)
    monkeypatch.setitem(sys.modules, name, mod)
    return mod


def test_tool_module_in_the_workspace_refused(ws, monkeypatch):
    m = McpSandbox(workspace=str(ws))
    mod = _module(monkeypatch, ws, "f1_in_workspace")
    with pytest.raises(ValueError) as e:
        m.add_tool("fetch", mod.run, capabilities={"net_allow": ["127.0.0.1:1"]})
    assert str(e.value) == (f"add_tool 'fetch': the module directory {ws} of 'fetch' overlaps "
                            f"{ws}, writable by tools (the workspace): a tool could rewrite that "
                            "code; move the module out of every writable directory")
    assert "fetch" not in m.tools


def test_tool_module_in_another_tools_writable_grant_refused(ws, tmp_path, monkeypatch):
    tools = tmp_path / "project" / "tools"
    mod = _module(monkeypatch, tools, "f1_granted")
    m = McpSandbox(workspace=str(ws))
    m.add_tool("run", mod.run)  # the negative control: outside every writable directory
    assert run(m.call_tool("run")) == "ran"
    with pytest.raises(ValueError, match=r"^add_tool 'writer': the module directory "
                                         f"{tools} of 'run' overlaps {tmp_path / 'project'}, "
                                         r"writable by tools \(granted to 'writer'\)"):
        m.add_tool("writer", mcp_tools.write,
                   capabilities={"fs_writable": [str(tmp_path / "project")]})
    m2 = McpSandbox(workspace=str(ws))
    m2.add_tool("writer", mcp_tools.write, capabilities={"fs_writable": [str(tools / "sub")]})
    with pytest.raises(ValueError, match=r"overlaps .*/tools/sub, writable by tools "
                                         r"\(granted to 'writer'\)"):
        m2.add_tool("run", mod.run)
    # Every worker's own script is in the package's directory.
    with pytest.raises(ValueError, match=f"^add_tool 'pkg': the module directory {PKG_PARENT} "
                                         "of the sandlock package overlaps"):
        McpSandbox(workspace=str(ws)).add_tool("pkg", mod.run,
                                               capabilities={"fs_writable": [PKG_PARENT]})



@pytest.mark.parametrize("field", ["workdir", "fs_storage"])
def test_tool_module_in_a_workdir_or_its_storage_refused(ws, tmp_path, monkeypatch, field):
    # A workdir's changes land in it after a clean exit, and its branches are written to
    # fs_storage: both are directories a tool changes, as an fs_writable grant is.
    tools = tmp_path / "proj" / "tools"
    mod = _module(monkeypatch, tools, f"f1_{field}")
    other = tmp_path / "elsewhere"
    other.mkdir()
    caps = {"workdir": str(other)}
    m = McpSandbox(workspace=str(ws))
    m.add_tool("run", mod.run)
    caps[field] = str(tmp_path / "proj")
    with pytest.raises(ValueError, match=r"^add_tool 'w': the module directory "
                                         f"{tools} of 'run' overlaps {tmp_path / 'proj'}, "
                                         r"writable by tools \(granted to 'w'\)"):
        m.add_tool("w", mcp_tools.write, capabilities=caps)
    caps[field] = str(other)  # the negative control: beside the module's directory
    m.add_tool("w", mcp_tools.write, capabilities=caps)
    assert "w" in m.tools
    with pytest.raises(ValueError, match=f"^add_tool 'v': the {field} .* overlaps "
                                         f"{m._homes.parent}, which holds"):
        m.add_tool("v", mcp_tools.write, capabilities={**caps, field: m._homes.parent})

def test_tool_module_in_the_home_directory_refused(ws, tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    mod = _module(monkeypatch, home, "f1_in_home")
    m = McpSandbox(workspace=str(ws))
    with pytest.raises(ValueError) as e:
        m.add_tool("t", mod.run)
    assert str(e.value) == (f"add_tool 't': its module is imported from {home}, which each call "
                            "would then read whole: put the tools in a package directory of "
                            "their own")
    mod = _module(monkeypatch, home / "tools", "f1_home_pkg")  # the negative control
    m.add_tool("t", mod.run)
    assert run(m.call_tool("t")) == "ran"


# -- each call's HOME --------------------------------------------------------------------------

def test_each_call_has_a_fresh_private_home(ws):
    m = McpSandbox(workspace=str(ws))
    m.add_tool("state", mcp_isolation_tools.home_state, capabilities={"net_allow": []})
    (ws / ".gitconfig").write_text("[core]\n\tfsmonitor = agent\n")  # what an agent wrote
    first = json.loads(run(m.call_tool("state")))
    second = json.loads(run(m.call_tool("state")))
    parent = m._homes.parent
    assert stat.S_IMODE(os.stat(parent).st_mode) == 0o700
    for s in (first, second):
        assert os.path.dirname(s["home"]) == parent  # this McpSandbox's own directory
        assert not s["home"].startswith(str(ws) + "/") and s["home"] != str(ws)
        assert s["tmpdir"] == s["home"] and s["mode"] == 0o700
        # The negative control: what the tool wrote to its own HOME in this call it reads back.
        assert s["found"] == [] and s["back"] == "mine"
    assert first["home"] != second["home"]
    assert not os.path.exists(first["home"]) and not os.path.exists(second["home"])
    assert m.get_policy("state").env["HOME"] == "/nonexistent"


def test_write_grant_over_the_calls_homes_refused(ws, tmp_path):
    m = McpSandbox(workspace=str(ws))
    parent = m._homes.parent
    os.mkdir(os.path.join(parent, "inner"))
    top = os.path.realpath(tempfile.gettempdir())
    # A grant of the temporary directory holds every call's HOME: a tool could write into
    # the HOME of another call running beside it (a .gitconfig for a tool with the network).
    for grant in (tempfile.gettempdir(), parent, os.path.join(parent, "inner")):
        real = os.path.realpath(grant)
        with pytest.raises(ValueError) as e:
            m.add_tool("w", mcp_tools.write, capabilities={"fs_writable": [grant]})
        assert str(e.value) == (f"add_tool 'w': the fs_writable grant {real} overlaps {parent}, "
                                "which holds each call's private HOME: a tool could write into "
                                "the HOME of another call; narrow the grant, or set TMPDIR "
                                "elsewhere")
        assert "w" not in m.tools
    assert os.path.dirname(parent) == top
    # The negative control: a grant beside the calls' directory, in the same /tmp.
    (tmp_path / "out").mkdir()
    m.add_tool("w", mcp_tools.write, capabilities={"fs_writable": [str(tmp_path / "out")]})
    assert "w" in m.tools


def test_grant_swapped_for_a_symlink_refuses_the_call(ws):
    # A tool that can write a grant's parent (the workspace, here) could replace the grant
    # with a link to the calls' directory, which the sandbox would follow when it opens it.
    cache = ws / "cache"
    cache.mkdir()
    m = McpSandbox(workspace=str(ws))
    m.add_tool("w", mcp_tools.write, capabilities={"fs_writable": [str(cache)]})
    assert run(m.call_tool("w", {"path": "cache/first"})) == "wrote"  # the negative control
    (cache / "first").unlink()
    cache.rmdir()
    cache.symlink_to(m._homes.parent)
    with pytest.raises(ToolError) as e:
        run(m.call_tool("w", {"path": "cache/pwned"}))
    assert str(e.value) == (f"tool 'w': the fs_writable grant {cache} is not the directory "
                            "add_tool checked (a symlink is in its way, or it is gone; a tool "
                            "may have swapped it): the call is refused; put the directory back")
    assert os.listdir(m._homes.parent) == []
    cache.unlink()
    cache.mkdir()  # put back: the calls run again
    assert run(m.call_tool("w", {"path": "cache/again"})) == "wrote"
    m.close()


def test_grants_kept_resolved(ws, tmp_path):
    # The sandbox opens the directory add_tool checked, not what a link names at call time.
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    m = McpSandbox(workspace=str(ws))
    m.add_tool("w", mcp_tools.write, capabilities={"fs_writable": [tmp_path / "link"]})
    assert m.get_policy("w").fs_writable[0] == str(real)
    m.close()


def test_calls_directory_gone_is_a_tool_error(ws):
    m = McpSandbox(workspace=str(ws))
    m.add_tool("where", mcp_tools.where)
    assert run(m.call_tool("where")) == str(ws)  # the negative control
    os.rmdir(m._homes.parent)  # what a cleaner of /tmp may do to a long-lived server
    with pytest.raises(ToolError) as e:
        run(m.call_tool("where"))
    assert str(e.value) == (f"tool 'where': the calls' directory {m._homes.parent} is gone (a "
                            "cleaner of the temporary directory?): restart the server")

def test_calls_directory_removed_with_the_sandbox(ws, tmp_path):
    m = McpSandbox(workspace=str(ws))
    parent = m._homes.parent
    assert os.path.isdir(parent)  # the negative control: there while the sandbox is
    m.close()
    assert not os.path.exists(parent)
    m = McpSandbox(workspace=str(ws))
    parent = m._homes.parent
    del m
    gc.collect()
    assert not os.path.exists(parent)
    # Never closed, still referenced when the interpreter exits.
    code = ("import os, sys; from sandlock.mcp import McpSandbox; "
            f"m = McpSandbox(workspace={str(ws)!r}); "
            "print(m._homes.parent, os.path.isdir(m._homes.parent))")
    (tmp_path / "elsewhere").mkdir()  # -c puts the working directory on the import path
    p = subprocess.run([PY, "-c", code], env=server_env(), cwd=tmp_path / "elsewhere",
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    left, there = p.stdout.split()
    assert there == "True" and os.path.dirname(left) == os.path.realpath(tempfile.gettempdir())
    assert not os.path.exists(left)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_server_stopped_by_sigterm_leaves_no_directory(ws, tmp_path, monkeypatch, transport):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))  # this server's temporary directory alone
    server = StdioClient(ws) if transport == "stdio" else HttpServer(ws)
    try:
        if transport == "stdio":
            assert "result" in server.initialize()
        made = os.listdir(tmp)  # the negative control: there while the server runs
        assert len(made) == 1 and made[0].startswith("sandlock-mcp-")
        held = []
        if transport == "http":
            # Open connections do not hold the server's end: an idle one, and an SSE stream.
            host, port = server.base.split("//")[1].rsplit(":", 1)
            held = [socket.create_connection((host, int(port))) for _ in range(2)]
            held[1].sendall(f"GET /sse HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            assert held[1].recv(12) == b"HTTP/1.1 200"
        server.proc.send_signal(signal.SIGTERM)
        assert server.proc.wait(timeout=30) == 0
        for c in held:
            c.close()
    finally:
        server.close()
    assert os.listdir(tmp) == []


def test_close_waits_for_the_running_calls_to_remove_their_directory(ws):
    m = McpSandbox(workspace=str(ws))
    m.add_tool("gated", mcp_isolation_tools.gated)
    parent = m._homes.parent
    gate = ws / "gate"
    os.mkfifo(gate)

    async def main():
        call = asyncio.create_task(m.call_tool("gated", {"gate": str(gate)}))
        opened = asyncio.create_task(asyncio.to_thread(open, gate, "w"))
        await asyncio.wait({call, opened}, return_when=asyncio.FIRST_COMPLETED)
        if not opened.done():  # the call ended before it read the gate: free the writer
            os.close(os.open(gate, os.O_RDONLY | os.O_NONBLOCK))
            (await opened).close()
            return await call
        m.close()  # while the call waits at its gate
        during = os.path.isdir(parent)
        with await opened as w:
            w.write("go")
        return during, await call

    assert run(main()) == (True, "go True")  # its HOME kept until it ended
    assert not os.path.exists(parent)
    with pytest.raises(ToolError) as e:
        run(m.call_tool("gated", {"gate": str(gate)}))
    assert str(e.value) == "tool 'gated': the McpSandbox is closed: make another to call tools"


def test_capabilities_copied_at_registration(ws, tmp_path):
    (tmp_path / "a").mkdir()
    grants = [str(tmp_path / "a")]
    caps = {"fs_writable": grants, "env": {"X": "1"}}
    m = McpSandbox(workspace=str(ws))
    m.add_tool("w", mcp_tools.write, capabilities=caps)
    p = m.get_policy("w")  # the negative control: what was given is granted
    assert (list(p.fs_writable), p.env["X"]) == ([str(tmp_path / "a")], "1")
    # Changed after add_tool, which checked the grants, the caller's objects change nothing.
    grants.append(tempfile.gettempdir())
    caps["env"]["X"] = "2"
    caps["net_allow"] = ["127.0.0.1"]
    p = m.get_policy("w")
    assert (list(p.fs_writable), p.env["X"], list(p.net_allow)) == \
        ([str(tmp_path / "a")], "1", [])
    with pytest.raises(TypeError):
        m._tools["w"].capabilities["fs_writable"] += ("/",)  # frozen here too
    # An iterator is read once, at registration: every call keeps its grants.
    m.add_tool("it", mcp_tools.write, capabilities={"fs_writable": iter(grants[:1])})
    assert list(m.get_policy("it").fs_writable) == [str(tmp_path / "a")]
    assert list(m.get_policy("it").fs_writable) == [str(tmp_path / "a")]
    # Pairs, as dict() takes them.
    m.add_tool("pairs", mcp_tools.write, capabilities=[("fs_writable", grants[:1])])
    assert list(m.get_policy("pairs").fs_writable) == [str(tmp_path / "a")]


def test_temporary_directory_inside_the_workspace_refused(ws, monkeypatch):
    (ws / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(ws / "tmp"))
    with pytest.raises(ValueError) as e:
        McpSandbox(workspace=str(ws))
    assert str(e.value) == (f"McpSandbox: the workspace {ws} holds the temporary directory "
                            f"{ws / 'tmp'}: set TMPDIR outside the workspace")
    monkeypatch.undo()  # the negative control: the usual temporary directory
    McpSandbox(workspace=str(ws))


# -- the built-in tools ------------------------------------------------------------------------

@pytest.fixture
def server(ws):
    m = McpSandbox(workspace=str(ws), timeout=60)
    builtin.register(m)
    yield m
    m.close()


def test_builtin_memory_limit(server):
    assert run(server.call_tool("python", {"code": "print(len(bytearray(1 << 20)))"})) == \
        "1048576\n"
    with pytest.raises(ToolError) as e:  # the sandbox kills a process past its memory limit
        run(server.call_tool("python", {"code": "bytearray(1 << 30)"}))
    assert str(e.value) == "RuntimeError: exit status -9\n"
    p = server.get_policy("shell")
    assert (p.max_memory, p.max_processes) == ("512M", 64)


def test_server_limit_flags_reach_the_builtins(ws):
    m = McpSandbox(workspace=str(ws))
    builtin.register(m, max_memory="2G", max_processes=7)
    assert (m.get_policy("python").max_memory, m.get_policy("shell").max_processes) == ("2G", 7)
    assert run(m.call_tool("python", {"code": "print(len(bytearray(1 << 30)))"})) == \
        "1073741824\n"
    p = start_server(str(ws), "/", "--max-processes", "0")
    assert p.returncode == 2 and p.stderr.endswith("--max-processes: 0: a whole number >= 1\n")


def test_builtin_process_limit(ws):
    m = McpSandbox(workspace=str(ws))
    builtin.register(m, max_processes=4)  # the worker, sh and what sh starts
    two = "for i in 1 2; do sleep 1 & done; wait; echo ok"
    assert run(m.call_tool("shell", {"command": two})) == "ok\n"  # the negative control
    with pytest.raises(ToolError, match=r"^RuntimeError: exit status 2\n.*: Cannot fork\n$"):
        run(m.call_tool("shell", {"command": two.replace("1 2", "1 2 3 4 5 6")}))


def test_builtin_output_bounded(server):
    assert run(server.call_tool("shell", {"command": "printf hi"})) == "hi"
    # Endless output: stopped at the limit, not read until the timeout.
    with pytest.raises(ToolError) as e:
        run(server.call_tool("shell", {"command": "yes"}))
    assert str(e.value) == ("RuntimeError: the output is over 1048576 bytes (stopped): write "
                            "it to a file of the workspace and read that in parts")


def test_builtin_environment_has_no_library_path(server, ws):
    env = run(server.call_tool("shell", {"command": "env"}))
    assert "SANDLOCK_LIB" not in env and "HOME=" in env
    # The negative control: the file tools still find the library to confine themselves with.
    (ws / "ok.txt").write_text("ok")
    assert run(server.call_tool("read_file", {"path": "ok.txt"})) == "ok"


def _cmdlines():
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    out.append(f.read())
            except OSError:
                pass
    return out


@pytest.mark.parametrize("tool,text", [
    ("shell", ": F1-MARKER-7d1; echo > started; stat -c %a \"$0\"; "
              "while [ ! -e go ]; do sleep 0.05; done"),
    ("python", "import os, stat, sys, time\n# F1-MARKER-7d1\nopen('started', 'w').close()\n"
               "print(oct(stat.S_IMODE(os.stat(sys.argv[0]).st_mode)))\n"
               "while not os.path.exists('go'):\n    time.sleep(0.05)\n"),
])
def test_builtin_text_not_on_any_command_line(server, ws, tool, text):
    key = "command" if tool == "shell" else "code"
    result = {}
    t = threading.Thread(target=lambda: result.setdefault(
        "out", run(server.call_tool(tool, {key: text}))))
    t.start()
    try:
        while not (ws / "started").exists() and t.is_alive():
            t.join(0.05)
        assert (ws / "started").exists()
        seen = [c for c in _cmdlines() if b"F1-MARKER-7d1" in c]
        assert seen == []
    finally:
        (ws / "go").write_text("")
        t.join()
    assert result["out"] in ("600\n", "0o600\n")
    # The negative control: the marker is in the text the tool ran, and findable where it is.
    assert b"F1-MARKER-7d1" in text.encode()


# -- what the server keeps of a worker's output -----------------------------------------------

class _Flood(io.RawIOBase):
    def __init__(self, chunks):
        self.chunks = chunks

    def read(self, n=-1):
        if not self.chunks:
            return b""
        self.chunks -= 1
        return (b"e" * 65535 + b"\n") if self.chunks else b"the last line"


def test_stderr_keeps_only_its_tail():
    cap = _sandbox._Capture(64 << 10, None)
    cap.drain(_Flood(300 * 16))  # 300 MiB
    assert len(cap.data) == 64 << 10 and bytes(cap.data).endswith(b"\nthe last line")
    assert not cap.over


def test_worker_answer_over_the_limit_fails(ws):
    m = McpSandbox(workspace=str(ws))
    m.add_tool("big", mcp_isolation_tools.big_answer)
    m.add_tool("loud", mcp_isolation_tools.loud_failure)
    assert len(run(m.call_tool("big", {"size": 1 << 20}))) == 1 << 20  # the negative control
    with pytest.raises(ToolError) as e:
        run(m.call_tool("big", {"size": _sandbox.ANSWER_LIMIT + 1}))
    assert str(e.value) == f"tool 'big': its answer is over {_sandbox.ANSWER_LIMIT} bytes (killed)"
    with pytest.raises(ToolError, match="^RuntimeError: failed after noise$"):
        run(m.call_tool("loud", {"size": 4 << 20}))


@pytest.mark.parametrize("tool, args", [
    ("read_file", {"path": "/proc/self/fd/1"}),  # the worker's own stdout pipe
    ("read_file", {"path": "fifo"}),
    ("write_file", {"path": "/proc/self/fd/1", "content": "forged"}),
    ("write_file", {"path": "fifo", "content": "x"})])
def test_file_tools_refuse_what_is_not_a_regular_file(tmp_path, tool, args):
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / "fifo")
    (ws / "plain").write_text("plain\n")
    m = McpSandbox(workspace=str(ws), timeout=20)
    builtin.register(m)
    # Refused at once (not left waiting on the pipe until the timeout): a FIFO opened for
    # writing with no reader is ENXIO, anything else opened is not a regular file.
    with pytest.raises(ToolError, match=r"not a regular file|\[Errno 6\] No such device"):
        run(m.call_tool(tool, args))
    # Negative control: a regular file of the workspace reads and writes.
    assert run(m.call_tool("read_file", {"path": "plain"})) == "plain\n"
    assert run(m.call_tool("write_file", {"path": "plain", "content": "new"})) == \
        "wrote 3 characters to plain"
    m.close()


def test_symlink_planted_while_the_workspace_is_made_refused(tmp_path, ws, monkeypatch):
    # Another user plants the link between the server's mkdir and its checks: the checks are
    # made on what the lookup opened, so the link is seen.
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    real_mkdir = os.mkdir

    def plant(path, *a, **kw):
        if str(path) == str(shared / "late"):
            os.symlink(ws, path)
        return real_mkdir(path, *a, **kw)

    monkeypatch.setattr(os, "mkdir", plant)
    with pytest.raises(ValueError, match=r"goes through the symlink .*/shared/late in a "
                                         r"directory every user can write"):
        McpSandbox(workspace=str(shared / "late"))
    monkeypatch.undo()
    # A link of this user's that leads through a planted one is refused the same way, and
    # the negative control: the same chain with no shared directory in it is taken.
    (shared / "planted").symlink_to(ws)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "via").symlink_to(shared / "planted")
    with pytest.raises(ValueError, match=r"goes through the symlink .*/shared/planted"):
        McpSandbox(workspace=str(mine / "via"))
    (mine / "direct").symlink_to(ws)
    (mine / "chain").symlink_to(mine / "direct")
    assert McpSandbox(workspace=str(mine / "chain")).workspace == str(ws)


def test_workspace_holding_the_user_site_or_the_library_refused(tmp_path, monkeypatch):
    import site
    from sandlock.mcp import _sandbox as sandbox_module
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    McpSandbox(workspace=str(home))  # the negative control: nothing of this process in it
    # A user site directory that does not exist yet: a tool could make it, and a .pth file
    # in it would run in the server's next start.
    monkeypatch.setattr(site, "ENABLE_USER_SITE", True)
    monkeypatch.setattr(site, "getusersitepackages",
                        lambda: str(home / ".local/lib/python3/site-packages"))
    with pytest.raises(ValueError, match=r"is on this process's import path \(.*/home/\.local"):
        McpSandbox(workspace=str(home))
    monkeypatch.undo()
    lib = home / "lib" / "libsandlock.so"
    monkeypatch.setattr(sandbox_module, "_library_path", lambda: str(lib))
    with pytest.raises(ValueError, match=r"is on this process's import path \(.*/libsandlock"):
        McpSandbox(workspace=str(home))
