# SPDX-License-Identifier: LGPL-2.1-or-later
"""The sandlock-mcp server's built-in tools, each run by McpSandbox in a sandbox of its own.

The file tools (read_file, write_file, list_files) confine their worker a second time, in
place, before they touch a path: a Landlock domain granting the workspace only, so a path that
resolves outside it (../, an absolute path, a symlink out) is refused by the kernel, whatever
the string looks like. shell and python run programs, which need the system's directories:
they keep their call's policy (the workspace and the system readable, writes as granted).
"""

import os
import subprocess
import sys

from ..sandbox import Sandbox, confine

_OUTPUT_LIMIT = 1 << 20


def _confine(workspace: str, *, write: bool) -> None:
    grant = {"fs_writable": [workspace]} if write else {"fs_readable": [workspace]}
    confine(Sandbox(**grant))


def _run(argv: list, workspace: str) -> str:
    p = subprocess.run(argv, cwd=workspace, stdin=subprocess.DEVNULL, capture_output=True)
    text = (p.stdout + p.stderr)[:_OUTPUT_LIMIT].decode("utf-8", "replace")
    if p.returncode != 0:
        raise RuntimeError(f"exit status {p.returncode}\n{text}")
    return text


def shell(command: str, *, workspace: str) -> str:
    """Run a shell command (/bin/sh -c) in the workspace; its output (stdout, then stderr)."""
    return _run(["/bin/sh", "-c", command], workspace)


def python(code: str, *, workspace: str) -> str:
    """Run Python code in the workspace; its output (stdout, then stderr)."""
    return _run([sys.executable, "-I", "-c", code], workspace)


def read_file(path: str, *, workspace: str) -> str:
    """Read a text file of the workspace (path relative to it)."""
    _confine(workspace, write=False)
    with open(os.path.join(workspace, path), encoding="utf-8", errors="replace") as f:
        return f.read(_OUTPUT_LIMIT)


def write_file(path: str, content: str, *, workspace: str) -> str:
    """Write a text file of the workspace (path relative to it), replacing it."""
    _confine(workspace, write=True)
    with open(os.path.join(workspace, path), "w", encoding="utf-8") as f:
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


def register(mcp) -> None:
    """Add the built-in tools to @mcp: shell, python and write_file may write the workspace;
    read_file and list_files only read it. None has the network."""
    ws = {"fs_writable": [mcp.workspace]}
    mcp.add_tool("shell", shell, capabilities=ws)
    mcp.add_tool("python", python, capabilities=ws)
    mcp.add_tool("read_file", read_file)
    mcp.add_tool("write_file", write_file, capabilities=ws)
    mcp.add_tool("list_files", list_files)
