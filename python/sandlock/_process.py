# SPDX-License-Identifier: LGPL-2.1-or-later
"""Sandbox.popen(): a live confined process whose piped streams the caller reads and writes
while it runs.

A piped stream is a kernel pipe made here: the library dups the child's end onto the command's
descriptor 0, 1 or 2 (SANDLOCK_STDIO_FD), and the caller keeps the other end as an unbuffered
binary file. Both ends are close-on-exec, and every sandbox closes the descriptors it inherits
above 2, so no other process holds a pipe end: the reader sees end-of-file when the command
(and whatever it started) has closed its side.
"""

from __future__ import annotations

import enum
import fcntl
import io
import os
import threading
import time
import warnings
from typing import TYPE_CHECKING, Any, Sequence

from ._core import ExitReason, Handle, Result

if TYPE_CHECKING:
    from .sandbox import Sandbox


class StdioMode(enum.IntEnum):
    """What one of the command's stdin, stdout or stderr is connected to."""

    INHERIT = 0  # this process's own descriptor
    PIPED = 1  # a pipe: Process.stdin / .stdout / .stderr
    NULL = 2  # /dev/null


def _mode(name: str, value: Any) -> StdioMode:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"popen: {name}={value!r}: a StdioMode (INHERIT, PIPED, NULL)")
    try:
        return StdioMode(value)
    except ValueError:
        raise ValueError(f"popen: {name}={value!r}: a StdioMode (INHERIT, PIPED, NULL)") from None


def _pipe() -> tuple[int, int]:
    """A close-on-exec pipe with both ends above 2 (with this process's stdio closed, os.pipe
    can return 0..2, which the command's own dup onto 0..2 would clobber)."""
    ends = []
    for fd in os.pipe():
        if fd <= 2:
            high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
            os.close(fd)
            fd = high
        ends.append(fd)
    return ends[0], ends[1]


class Process:
    """A command running in a sandbox, started by Sandbox.popen().

    ``stdin``, ``stdout`` and ``stderr`` are unbuffered binary files for the streams opened
    PIPED (None for the others). wait() returns the Result (its stdout and stderr are empty:
    the piped bytes are the caller's to read). As a context manager it closes the streams on
    exit and waits for the command; leaving on an exception kills it first."""

    def __init__(self, sandbox: "Sandbox", handle: Handle, pid: int,
                 streams: tuple[io.FileIO | None, io.FileIO | None, io.FileIO | None]) -> None:
        self._sandbox = sandbox
        self._handle = handle
        self.pid = pid
        self.stdin, self.stdout, self.stderr = streams
        self._result: Result | None = None
        self._lock = threading.Lock()  # one wait() at a time; the result is computed once

    def __repr__(self) -> str:
        state = "running" if self._result is None else f"exit_code={self._result.exit_code}"
        return f"<sandlock.Process pid={self.pid} {state}>"

    @property
    def returncode(self) -> int | None:
        """The exit code once wait() or poll() saw the end, else None."""
        return None if self._result is None else self._result.exit_code

    def poll(self) -> int | None:
        """None while the command runs; once it has ended, its exit code (and wait() returns at
        once)."""
        if self._result is None and not self._handle.ended():
            return None
        return self.wait().exit_code

    def wait(self, timeout: float | None = None) -> Result:
        """Wait for the command to end and return its Result (the same one on every call). A
        piped stdin still open is closed first (the command sees end-of-file). With @timeout
        (seconds), a command still running then is killed, and the Result says so."""
        if timeout is not None and (isinstance(timeout, bool)
                                    or not isinstance(timeout, (int, float)) or timeout < 0):
            raise ValueError(f"timeout must be a number of seconds >= 0, not {timeout!r}")
        self._handle._not_from_callback("wait")  # before the lock another wait may hold
        self._close(self.stdin)
        with self._lock:
            if self._result is None:
                if timeout is not None:
                    deadline = time.monotonic() + timeout
                    timed_out = False
                    while not self._handle.ended(min(250, max(0, int(
                            (deadline - time.monotonic()) * 1000)))):
                        if time.monotonic() >= deadline:
                            self.kill()
                            timed_out = True
                            break
                self._result = self._sandbox._wait_for(self._handle)
                if timeout is not None and timed_out and self._result.signal:
                    # The deadline ended it, not a kill() of the caller's: told as run()'s
                    # timeout is.
                    self._result.reason = ExitReason.TIMEOUT
                    self._result.exit_code = 124
                    self._result.error = f"timed out after {timeout:g} s"
            return self._result

    def kill(self) -> None:
        """SIGKILL every process of the sandbox; nothing once it has ended."""
        try:
            self._handle.signal("kill")
        except RuntimeError:
            pass  # already ended (or waited for)

    @staticmethod
    def _close(stream: io.FileIO | None) -> None:
        if stream is not None and not stream.closed:
            try:
                stream.close()
            except OSError:
                pass  # a write end whose reader is gone: nothing left to deliver

    def __enter__(self) -> "Process":
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        for s in (self.stdout, self.stderr, self.stdin):
            self._close(s)
        if exc_type is not None:
            self.kill()
        self.wait()

    def __del__(self) -> None:
        if getattr(self, "_result", True) is None:
            warnings.warn(f"{self!r} was never waited for: killed", ResourceWarning,
                          stacklevel=2)
            try:
                for s in (self.stdout, self.stderr, self.stdin):
                    self._close(s)
                self.kill()
                # Collected while this thread holds the sandbox's lock (inside one of its
                # calls), waiting would deadlock: then the killed process stays the sandbox's
                # until close().
                lock = self._sandbox._lock
                if lock.acquire(blocking=False):
                    lock.release()
                    self.wait()
            except Exception:
                pass


def popen(sandbox: "Sandbox", cmd: Sequence[str] | None, modes: tuple[Any, Any, Any]) -> Process:
    """Start @cmd in @sandbox with each stream as @modes says (Sandbox.popen)."""
    names = ("stdin", "stdout", "stderr")
    modes = tuple(_mode(n, m) for n, m in zip(names, modes))
    ours: list[int] = []  # the caller's ends, in stream order (None for unpiped)
    theirs: list[int] = []  # the command's ends, closed here once it has them
    specs: list[Any] = []
    try:
        for i, m in enumerate(modes):
            if m == StdioMode.PIPED:
                r, w = _pipe()
                child, mine = (r, w) if i == 0 else (w, r)
                theirs.append(child)
                ours.append(mine)
                specs.append(child)
            else:
                ours.append(-1)
                specs.append("inherit" if m == StdioMode.INHERIT else None)
        h = sandbox._spawn(cmd, stdio=(specs[0], specs[1], specs[2]), waited=True)
    except BaseException:
        for fd in theirs + [fd for fd in ours if fd >= 0]:
            os.close(fd)
        raise
    for fd in theirs:
        os.close(fd)
    streams = tuple(None if fd < 0 else open(fd, "wb" if i == 0 else "rb", buffering=0)
                    for i, fd in enumerate(ours))
    return Process(sandbox, h, h.pid, streams)  # type: ignore[arg-type]
