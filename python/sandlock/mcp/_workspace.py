# SPDX-License-Identifier: LGPL-2.1-or-later
"""Which directory may be a workspace: one this user owns and only this user can write, and
that holds none of the code this process or a tool imports.

Tools write the workspace. A directory another user made (or a symlink one planted in /tmp)
would let that user read what the agent writes and plant what it reads; a directory on this
process's import path would let a tool plant a module the server runs, outside every sandbox,
at its next start.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import Iterable


def beneath(path: str, top: str) -> bool:
    """Whether the resolved @path is @top or inside it (both already resolved)."""
    return path == top or path.startswith(top.rstrip("/") + "/")


def overlap(a: str, b: str) -> bool:
    """Whether one of two resolved paths is, contains or is inside the other."""
    return beneath(a, b) or beneath(b, a)


def _symlink_in_shared_dir(path: str) -> str | None:
    """The first component of @path (absolute) that is a symlink in a sticky directory every
    user can write (/tmp), where any user may have planted it; None when there is none."""
    cur = "/"
    for name in [p for p in path.split("/") if p]:
        nxt = os.path.join(cur, name)
        try:
            st = os.lstat(nxt)
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(st.st_mode):
            parent = os.stat(cur).st_mode
            if parent & stat.S_ISVTX and parent & stat.S_IWOTH:
                return nxt
            nxt = os.path.realpath(nxt)
        cur = nxt
    return None


def _refuse(path: str, why: str) -> ValueError:
    return ValueError(f"the workspace {path} {why}")


def prepare(path: str) -> str:
    """@path made (mode 0700) when missing, checked when found; its resolved form.
    ValueError naming the path, what is wrong with it and what to do."""
    path = os.path.abspath(path)
    link = _symlink_in_shared_dir(path)
    if link is not None:
        raise _refuse(path, f"goes through the symlink {link} in a directory every user can "
                            "write (another user may have planted it): give the real path")
    try:
        os.makedirs(path, mode=0o700)
    except FileExistsError:
        pass
    real = os.path.realpath(path)
    st = os.stat(real)
    if not stat.S_ISDIR(st.st_mode):
        raise _refuse(path, "is not a directory: choose a directory")
    if st.st_uid != os.geteuid():
        raise _refuse(path, f"is owned by uid {st.st_uid}, not by this user "
                            f"(uid {os.geteuid()}): choose a directory you own")
    if st.st_mode & 0o022:
        raise _refuse(path, f"is writable by other users (mode {stat.S_IMODE(st.st_mode):04o}):"
                            f" chmod go-w {real}, or choose a directory only you can write")
    return real


def import_paths() -> list[str]:
    """The directories this process imports from: sys.path ('' and relative entries taken
    from the working directory) and the running script's directory, resolved."""
    entries: list[str] = [os.path.join(os.getcwd(), p) for p in sys.path if isinstance(p, str)]
    script = sys.argv[0] if sys.argv and sys.argv[0] not in ("", "-c", "-m") else ""
    if script and os.path.exists(script):
        entries.append(os.path.dirname(os.path.abspath(script)))
    return [os.path.realpath(p) for p in entries]


def on_import_path(workspace: str, extra: Iterable[str] = ()) -> str | None:
    """The entry of import_paths() (or of @extra) that @workspace (resolved) is, contains or
    is inside; None when there is none."""
    for p in [*import_paths(), *(os.path.realpath(e) for e in extra)]:
        if overlap(workspace, p):
            return p
    return None
