# SPDX-License-Identifier: LGPL-2.1-or-later
"""The sandlock-mcp server's built-in tools, each run by McpSandbox in a sandbox of its own.

The file tools (read_file, write_file, list_files) confine their worker a second time, in
place, before they touch a path: a Landlock domain granting the workspace only, so a path that
resolves outside it (../, an absolute path, a symlink out) is refused by the kernel, whatever
the string looks like. shell and python run programs, which need the system's directories:
they keep their call's policy (the workspace and the system readable, writes as granted).
"""

import os
import selectors
import stat
import subprocess
import sys
import tempfile

from ..sandbox import Sandbox, confine

_OUTPUT_LIMIT = 1 << 20

# What shell and python may use unless the server is told otherwise (sandlock-mcp
# --max-memory, --max-processes): enough for a compiler or a test run, not the host's all.
DEFAULT_MAX_MEMORY = "512M"
DEFAULT_MAX_PROCESSES = 64


def _confine(workspace: str, *, write: bool) -> None:
    grant = {"fs_writable": [workspace]} if write else {"fs_readable": [workspace]}
    confine(Sandbox(**grant))


def _script(text: str, suffix: str) -> str:
    """@text in a new 0600 file of the call's private directory (TMPDIR), so that it is on no
    command line (every user of the host can read those)."""
    fd, path = tempfile.mkstemp(suffix=suffix, dir=os.environ["TMPDIR"])
    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as f:
        f.write(text)
    return path


def _read_bounded(p: subprocess.Popen) -> tuple[bytes, bytes]:
    """@p's stdout and stderr, together at most _OUTPUT_LIMIT + 1 bytes: past that @p is
    killed and reading stops, so that a flood of output costs no memory."""
    got = {p.stdout: bytearray(), p.stderr: bytearray()}
    with selectors.DefaultSelector() as sel:
        for stream in got:
            sel.register(stream, selectors.EVENT_READ)
        total = 0
        while sel.get_map() and total <= _OUTPUT_LIMIT:
            for key, _ in sel.select():
                chunk = os.read(key.fd, min(65536, _OUTPUT_LIMIT + 1 - total))
                if not chunk:
                    sel.unregister(key.fileobj)
                got[key.fileobj] += chunk
                total += len(chunk)
                if total > _OUTPUT_LIMIT:
                    p.kill()
                    break
    return bytes(got[p.stdout]), bytes(got[p.stderr])


def _run(argv: list, workspace: str) -> str:
    with subprocess.Popen(argv, cwd=workspace, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as p:
        out, err = _read_bounded(p)
        code = p.wait()
    if len(out) + len(err) > _OUTPUT_LIMIT:
        raise RuntimeError(f"the output is over {_OUTPUT_LIMIT} bytes (stopped): write it to a "
                           "file of the workspace and read that in parts")
    text = (out + err).decode("utf-8", "replace")
    if code != 0:
        raise RuntimeError(f"exit status {code}\n{text}")
    return text


def shell(command: str, *, workspace: str) -> str:
    """Run a shell command (/bin/sh) in the workspace; its output (stdout, then stderr)."""
    return _run(["/bin/sh", _script(command, ".sh")], workspace)


def python(code: str, *, workspace: str) -> str:
    """Run Python code in the workspace; its output (stdout, then stderr)."""
    return _run([sys.executable, "-I", _script(code, ".py")], workspace)


def _open_regular(path: str, flags: int) -> int:
    """A descriptor of @path, which must be a regular file. Landlock decides on the files it
    covers, not on a pipe or socket reached through /proc/self/fd (the worker's own pipes), and
    a FIFO would hold the call until its timeout: the open does not wait (O_NONBLOCK), and
    anything but a regular file is refused before a byte moves."""
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path}: not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_file(path: str, *, workspace: str) -> str:
    """Read a text file of the workspace (path relative to it)."""
    _confine(workspace, write=False)
    fd = _open_regular(os.path.join(workspace, path), os.O_RDONLY)
    with open(fd, encoding="utf-8", errors="replace") as f:
        return f.read(_OUTPUT_LIMIT)


def write_file(path: str, content: str, *, workspace: str) -> str:
    """Write a text file of the workspace (path relative to it), replacing it."""
    _confine(workspace, write=True)
    fd = _open_regular(os.path.join(workspace, path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with open(fd, "w", encoding="utf-8") as f:
        n = f.write(content)
    return f"wrote {n} characters to {path}"


def list_files(subdir: str = "", *, workspace: str) -> str:
    """List a directory of the workspace, one name a line, directories ending in /."""
    _confine(workspace, write=False)
    top = os.path.join(workspace, subdir)
    names = []
    with os.scandir(top) as it:
        for e in it:
            names.append(e.name + ("/" if e.is_dir(follow_symlinks=False) else ""))
    return "\n".join(sorted(names))


def register(mcp, *, max_memory: str | int = DEFAULT_MAX_MEMORY,
             max_processes: int = DEFAULT_MAX_PROCESSES) -> None:
    """Add the built-in tools to @mcp: shell, python and write_file may write the workspace;
    read_file and list_files only read it. None has the network. shell and python run with
    @max_memory and @max_processes (Sandbox's fields)."""
    ws = {"fs_writable": [mcp.workspace]}
    run = dict(ws, max_memory=max_memory, max_processes=max_processes)
    mcp.add_tool("shell", shell, capabilities=run)
    mcp.add_tool("python", python, capabilities=run)
    mcp.add_tool("read_file", read_file)
    mcp.add_tool("write_file", write_file, capabilities=ws)
    mcp.add_tool("list_files", list_files)
