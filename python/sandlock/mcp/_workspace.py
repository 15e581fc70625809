# SPDX-License-Identifier: LGPL-2.1-or-later
"""Which directory may be a workspace: one this user owns and only this user can write, in
directories no other user can change, and that holds none of the code this process or a tool
imports.

Tools write the workspace. A directory another user made (or a symlink one planted in /tmp)
would let that user read what the agent writes and plant what it reads; a directory on this
process's import path would let a tool plant a module the server runs, outside every sandbox,
at its next start.
"""

from __future__ import annotations

import errno
import os
import site
import stat
import sys
from typing import Iterable


def beneath(path: str, top: str) -> bool:
    """Whether the resolved @path is @top or inside it (both already resolved)."""
    return path == top or path.startswith(top.rstrip("/") + "/")


def overlap(a: str, b: str) -> bool:
    """Whether one of two resolved paths is, contains or is inside the other."""
    return beneath(a, b) or beneath(b, a)


_MAX_LINKS = 40  # the kernel's own bound on the symlinks of one lookup
_DIR = os.O_PATH | os.O_CLOEXEC


def _refuse(path: str, why: str) -> ValueError:
    return ValueError(f"the workspace {path} {why}")


def _shared(mode: int) -> bool:
    """Whether a directory of @mode is sticky and every user's to write (/tmp)."""
    return bool(mode & stat.S_ISVTX and mode & stat.S_IWOTH)


def _open_dir(path: str) -> int:
    """An O_PATH descriptor of @path (absolute), looked up one component at a time, symlinks
    read and followed here: one met in a directory every user can write is refused (any user
    may have planted it). The checks that follow are made on this descriptor, so nothing
    swapped in after the lookup can pass them. ValueError for such a link, OSError for a
    lookup that fails."""
    fd = os.open("/", _DIR | os.O_DIRECTORY)
    left = [p for p in path.split("/") if p][::-1]  # the components still to look up, next last
    links = 0
    try:
        while left:
            name = left.pop()
            if name == ".":
                continue
            nfd = os.open(name, _DIR | os.O_NOFOLLOW, dir_fd=fd)
            if not stat.S_ISLNK(os.fstat(nfd).st_mode):
                os.close(fd)
                fd = nfd
                continue
            os.close(nfd)
            if _shared(os.fstat(fd).st_mode):
                where = os.path.join(os.readlink(f"/proc/self/fd/{fd}"), name)
                raise _refuse(path, f"goes through the symlink {where} in a directory every "
                                    "user can write (another user may have planted it): give "
                                    "the real path")
            links += 1
            if links > _MAX_LINKS:
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
            target = os.readlink(name, dir_fd=fd)
            if target.startswith("/"):
                nfd = os.open("/", _DIR | os.O_DIRECTORY)
                os.close(fd)
                fd = nfd
            left += [p for p in target.split("/") if p][::-1]
        return fd
    except BaseException:
        os.close(fd)
        raise


def free_of_links(path: str) -> bool:
    """Whether the absolute, resolved @path names a directory now, through no symlink: its
    lookup ends where its own name says."""
    try:
        fd = _open_dir(path)
    except (OSError, ValueError):
        return False
    try:
        return os.readlink(f"/proc/self/fd/{fd}") == path and stat.S_ISDIR(os.fstat(fd).st_mode)
    finally:
        os.close(fd)


def prepare(path: str) -> str:
    """@path made (mode 0700) when missing, checked when found; its resolved form.
    ValueError naming the path, what is wrong with it and what to do."""
    path = os.path.abspath(path)
    try:
        _make(path)
    except OSError as e:
        raise _refuse(path, f"cannot be made: {e.strerror}: choose another directory") from None
    try:
        fd = _open_dir(path)
    except OSError as e:
        raise _refuse(path, f"cannot be opened: {e.strerror}: choose another directory") \
            from None
    try:
        st = os.fstat(fd)
        real = os.readlink(f"/proc/self/fd/{fd}")
    finally:
        os.close(fd)
    if not stat.S_ISDIR(st.st_mode):
        raise _refuse(path, "is not a directory: choose a directory")
    if st.st_uid != os.geteuid():
        raise _refuse(path, f"is owned by uid {st.st_uid}, not by this user "
                            f"(uid {os.geteuid()}): choose a directory you own")
    if st.st_mode & 0o022:
        raise _refuse(path, f"is writable by other users (mode {stat.S_IMODE(st.st_mode):04o}):"
                            f" chmod go-w {real}, or choose a directory only you can write")
    _check_parents(path, real)
    return real


def _make(path: str) -> None:
    """@path and the directories missing above it made, each 0700 (not makedirs' umask
    modes, which _check_parents could then refuse as group-writable). mkdir follows no
    symlink: a planted one makes it fail, and the lookup that follows refuses it."""
    missing = []
    while not os.path.lexists(path) and path != "/":
        missing.append(path)
        path = os.path.dirname(path)
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass


def _check_parents(path: str, real: str) -> None:
    """ValueError when a directory above @real (the workspace, resolved) lets another user
    rename the workspace away and put one of theirs in its place: one owned by a user other
    than this one or root, or one group or others can write without the sticky bit. Checked
    from / down: each directory's owner and mode are in its parent, which is checked first, so
    no other user can change what a later step reads."""
    me = os.geteuid()
    parent = os.path.dirname(real)
    chain = [parent]
    while parent != "/":
        parent = os.path.dirname(parent)
        chain.append(parent)
    for d in reversed(chain):
        try:
            st = os.lstat(d)
        except OSError as e:
            raise _refuse(path, f"has a parent {d} that cannot be read: {e.strerror}: choose "
                                "another directory") from None
        mode = stat.S_IMODE(st.st_mode)
        if not stat.S_ISDIR(st.st_mode):  # the resolved path holds no symlink, unless it moved
            raise _refuse(path, f"has a parent {d} that is not a directory (it changed while "
                                "it was checked): try again")
        if st.st_uid not in (0, me):
            raise _refuse(path, f"lies inside {d}, owned by uid {st.st_uid}, who could rename "
                                "the workspace away and put another in its place: choose a "
                                "directory whose parents are yours or root's")
        if mode & 0o022 and not mode & stat.S_ISVTX:
            raise _refuse(path, f"lies inside {d}, which other users can write (mode "
                                f"{mode:04o}, not sticky): they could rename the workspace away "
                                f"and put another in its place; chmod go-w {d} (or +t), or "
                                "choose another directory")


def import_paths() -> list[str]:
    """The directories this process imports from: sys.path ('' and relative entries taken
    from the working directory) and the running script's directory, resolved."""
    entries: list[str] = [os.path.join(os.getcwd(), p) for p in sys.path if isinstance(p, str)]
    script = sys.argv[0] if sys.argv and sys.argv[0] not in ("", "-c", "-m") else ""
    if script and os.path.exists(script):
        entries.append(os.path.dirname(os.path.abspath(script)))
    # The user's site directory is on the path of the next start once it exists: a tool that
    # made it (and a .pth file in it) would run code in that start.
    if getattr(site, "ENABLE_USER_SITE", False):
        entries.append(site.getusersitepackages())
    return [os.path.realpath(p) for p in entries]


def on_import_path(workspace: str, extra: Iterable[str] = ()) -> str | None:
    """The entry of import_paths() (or of @extra) that @workspace (resolved) is, contains or
    is inside; None when there is none."""
    for p in [*import_paths(), *(os.path.realpath(e) for e in extra)]:
        if overlap(workspace, p):
            return p
    return None
