# SPDX-License-Identifier: LGPL-2.1-or-later
"""Policies and spawned sandboxes over the library: the layer Sandbox and the pipelines share."""

from __future__ import annotations

import contextlib
import ctypes
import enum
import errno
import json
import math
import os
import signal as _signal
import threading
from ctypes import byref, c_size_t, c_void_p
from dataclasses import dataclass, field
from typing import Any, Iterator, NoReturn

from . import _events, _ffi, _fields
from ._events import Denial
from ._helpers import Change, Entry
from .exceptions import (
    BranchConflictError,
    BranchError,
    ChildError,
    ConfinementError,
    ForkError,
    LandlockUnavailableError,
    NotifError,
    PolicyError,
    SandboxError,
    SandboxRuntimeError,
    SandlockError,
    SeccompError,
)

# Errors that mean "this policy cannot be built" rather than "this host is out of something".
_CONFIG_ERRNOS = {errno.EINVAL, errno.ENOENT, errno.EACCES, errno.ENOTDIR, errno.ELOOP, errno.E2BIG,
                  errno.EHOSTUNREACH}  # the last: a net_allow hostname that does not resolve


def raise_config(rc: int, msg: str, step: str | None = None) -> NoReturn:
    raise PolicyError(_fields.python_message(msg))


def raise_spawn(rc: int, msg: str, step: str | None) -> NoReturn:
    """Map a failed sandlock_spawn / sandlock_sandbox_start onto the exception hierarchy."""
    e = -rc
    if step is None:
        if e in _CONFIG_ERRNOS or msg.startswith("not supported yet: "):
            raise PolicyError(msg)
        if e == errno.EOPNOTSUPP:
            if _ffi.lib().sandlock_landlock_abi_version() < 0:
                raise LandlockUnavailableError(msg)
            raise ConfinementError(msg)
        if e == errno.EEXIST:
            raise SandboxRuntimeError(msg)
        if e == errno.EALREADY:
            raise RuntimeError("no child has been created (or it was already started)")
        if e == errno.ECANCELED:
            raise SandboxRuntimeError(msg)
        raise ForkError(msg)
    text = f"{step}: {msg}" if not msg.startswith(step) else msg
    if step == "landlock_restrict_self":
        raise ConfinementError(text)
    if step == "seccomp":
        raise SeccompError(text)
    if step.startswith("sendmsg"):
        raise NotifError(text)
    raise ChildError(text, step)


def raise_branch(rc: int, msg: str, step: str | None = None) -> NoReturn:
    """A failed sandlock_sandbox_commit / _abort: the branch is still pending, on disk."""
    if rc == -errno.ESTALE:
        raise BranchConflictError(msg)
    raise BranchError(msg)


def load_policy(doc: dict[str, Any]) -> c_void_p:
    """A sandlock_policy_t * for @doc (the caller frees it), or SandboxError with the core's
    message."""
    L = _ffi.lib()
    text = json.dumps(doc).encode()
    ptr = c_void_p()
    _ffi.call(L.sandlock_policy_load_json, text, len(text), byref(ptr), raise_as=raise_config)
    return ptr


class Policy:
    """A loaded policy, freed on exit of a with block."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.ptr = load_policy(doc)
        self.policy_run: Any = None  # the policy_fn.Run installed in it, if any

    def __enter__(self) -> "Policy":
        return self

    def __exit__(self, *exc: object) -> None:
        _ffi.lib().sandlock_policy_free(self.ptr)
        self.ptr = c_void_p()

    def dump_json(self) -> dict[str, Any]:
        out = c_void_p()
        rc = _ffi.lib().sandlock_policy_dump_json(self.ptr, byref(out))
        if rc < 0:
            raise SandboxError(os.strerror(-rc))
        return json.loads(_ffi.take_string(out))

    def check(self) -> tuple[int, str]:
        """sandlock_policy_check: 0 and "" or (-errno, message)."""
        err = _ffi.Error()
        rc = _ffi.lib().sandlock_policy_check(self.ptr, err.ref())
        return (rc, err.take(rc)[0]) if rc < 0 else (0, "")


class ExitReason(enum.IntEnum):
    """How a command's run ended (Result.reason)."""

    EXITED = 0  # it exited by itself (exit_code is its status)
    SIGNALED = 1  # a signal not sent by sandlock ended it (Result.signal)
    KILLED = 2  # sandlock ended it: max_memory reached, or kill() (Result.error says which)
    TIMEOUT = 3  # the run's timeout expired


@dataclass
class Result:
    """The outcome of a run.

    ``exit_code`` is the command's exit status; killed by a signal it is 128 + the signal (as a
    shell reports it) and ``signal`` holds the signal number (0 when no signal ended it); on a
    timeout it is 124 and ``error`` says so. ``reason`` says which of these ended the run
    (ExitReason); when sandlock killed the command (max_memory reached, kill()) it is KILLED
    and ``error`` is sandlock's notice. ``notices`` lists every notice sandlock gave about the
    run ("fork refused: process limit 2 reached", ...).

    With a workdir, ``changes`` lists what the run changed in its branch (read before the
    branch was committed, aborted or deferred); it is empty without one. A branch that could not
    be settled as asked (a commit that failed leaves it on disk, ``Sandbox.upper_dir`` says
    where) puts the library's message in ``error`` (after the exit's own, joined by "; ");
    ``success`` still says only how the command exited.

    ``denials`` lists what the run was denied, one Denial per object and reason in the order
    first seen, each with the times it was seen (``count``): the supervisor's own denials on
    every run, and with log_denials or on_event the kernel's too, judged for the log; empty
    when nothing was denied. ``events_dropped`` counts the events lost (a callback too slow for
    its queue, or more distinct denials than the table's 256). ``event_error`` is the first
    exception the on_event callback raised (the run goes on and the callback keeps being
    called; the exception keeps its traceback), None when it raised none.

    ``handler_error`` is the first exception an extension handler raised in
    Sandbox.run_with_handlers() (the call was answered as the handler's on_exception says;
    the exception keeps its traceback), None when none raised or the run had no handlers."""

    success: bool
    exit_code: int = 0
    stdout: bytes = field(default=b"", repr=False)
    stderr: bytes = field(default=b"", repr=False)
    error: str | None = None
    changes: list[Change] = field(default_factory=list)
    # With a policy_fn: the first exception it raised, or a TypeError naming the first value
    # it returned that is not a verdict (each of those events was denied; the traceback is
    # kept), None when neither happened; and the events it answered "audit" (or -2) to, in
    # order, the first 1024 (policy_fn.AUDIT_KEPT).
    policy_error: BaseException | None = field(default=None, repr=False, compare=False,
                                               kw_only=True)
    audited: list[Any] = field(default_factory=list, repr=False, kw_only=True)
    signal: int = 0
    reason: ExitReason = field(default=ExitReason.EXITED, repr=False)
    denials: list[Denial] = field(default_factory=list, repr=False)
    events_dropped: int = field(default=0, repr=False)
    event_error: BaseException | None = field(default=None, repr=False, compare=False)
    handler_error: BaseException | None = field(default=None, repr=False, compare=False)
    _notices: list[str] = field(default_factory=list, repr=False, compare=False)
    _unknown: str | None = field(default=None, repr=False, compare=False)
    _no_denials: str | None = field(default=None, repr=False, compare=False)

    @property
    def notices(self) -> list[str]:
        """sandlock's notices about the run, one line each. SandlockError if the library
        cannot tell (an older one)."""
        if self._unknown is not None:
            raise SandlockError(self._unknown)
        return list(self._notices)


def _get_reason(self: Result) -> ExitReason:
    # Only a SIGKILL may be sandlock's (sandlock_sandbox_exit_cause); the exit kind tells the
    # rest.
    if (self._unknown is not None and self._reason == ExitReason.SIGNALED
            and self.signal == _signal.SIGKILL):
        raise SandlockError(self._unknown)
    return self._reason


def _set_reason(self: Result, value: ExitReason) -> None:
    self._reason = ExitReason(value)


# A field (Result(reason=...) builds one) read through a property: with a library that cannot
# tell the reason, reading it raises, naming what the library lacks, rather than guess.
Result.reason = property(  # type: ignore[assignment]
    _get_reason, _set_reason,
    doc="How the run ended. SandlockError if the library cannot tell (an older one).")


def _get_denials(self: Result) -> list[Denial]:
    if self._no_denials is not None:
        raise SandlockError(self._no_denials)
    return self._denials


def _set_denials(self: Result, value: list[Denial]) -> None:
    self._denials = value


# As reason: a library without the denial table makes reading it raise, naming what it lacks.
Result.denials = property(  # type: ignore[assignment]
    _get_denials, _set_denials,
    doc="The run's denials (Denial). SandlockError if the library cannot tell (an older one).")


@dataclass
class DryRunResult:
    """The outcome of Sandbox.dry_run(): a run whose branch is discarded whatever its exit
    (on_exit and on_error ABORT), with the changes it made there."""

    success: bool
    exit_code: int = 0
    stdout: bytes = field(default=b"", repr=False)
    stderr: bytes = field(default=b"", repr=False)
    changes: list[Change] = field(default_factory=list)
    error: str | None = None
    denials: list[Denial] = field(default_factory=list, repr=False)
    events_dropped: int = field(default=0, repr=False)
    event_error: BaseException | None = field(default=None, repr=False, compare=False)


def _entry(e: _ffi.Entry) -> Entry | None:
    """A sandlock_entry_t as an Entry; None when absent."""
    if e.kind == _ffi.ENTRY_ABSENT:
        return None
    return Entry(kind=_ffi.ENTRY_KINDS.get(e.kind, "other"), mode=int(e.mode), size=int(e.size),
                 digest=bytes(e.digest) if e.has_digest else None,
                 target=os.fsdecode(e.target) if e.target is not None else None)


def _signal_name(sig: int) -> str:
    try:
        return _signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def timeout_ms(timeout: float | None) -> int:
    if timeout is None:
        return 0
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
    if math.isinf(timeout):
        return 0
    return max(1, math.ceil(timeout * 1000))


class Handle:
    """One spawned sandbox (a sandlock_sandbox_t *): start, wait, signal, outcome, free.

    Any thread may use it; free() waits until no other thread is inside a library call on it,
    so a concurrent wait() or kill() never touches a released sandbox."""

    def __init__(self, ptr: c_void_p, timeout: float | None,
                 listener: _events.Listener | None = None) -> None:
        self._ptr = ptr
        self.timeout = timeout
        # The on_event callback the library holds a pointer to: alive as long as this handle,
        # released only after sandlock_sandbox_free() returned.
        self._listener = listener
        self._cv = threading.Condition()
        self._users = 0
        self._closing = False
        self.policy_run: Any = None  # the policy_fn.Run of the policy it was spawned from

    @contextlib.contextmanager
    def _use(self) -> Iterator[c_void_p]:
        with self._cv:
            if self._closing:
                raise RuntimeError("this process was already waited for")
            self._users += 1
        try:
            yield self._ptr
        finally:
            with self._cv:
                self._users -= 1
                self._cv.notify_all()

    @classmethod
    def spawn(
        cls,
        policy: Policy,
        argv: list[str],
        opts: _ffi.SpawnOpts,
        timeout: float | None = None,
        listener: _events.Listener | None = None,
    ) -> "Handle":
        args = _ffi.argv_array(argv)
        ptr = c_void_p()
        _ffi.call(
            _ffi.lib().sandlock_spawn, policy.ptr, args, byref(opts), byref(ptr),
            raise_as=raise_spawn,
        )
        return cls(ptr, timeout, listener)

    def start(self) -> None:
        with self._use() as p:
            _ffi.call(_ffi.lib().sandlock_sandbox_start, p, raise_as=raise_spawn)

    def _not_from_callback(self, what: str) -> None:
        if self._listener is not None:
            self._listener.check_not_inside(what)

    def ended(self, wait_ms: int = 0) -> bool:
        """Whether the sandbox has ended (waiting up to @wait_ms); True once released."""
        if wait_ms:
            self._not_from_callback("wait")
        try:
            with self._use() as p:
                return _ffi.lib().sandlock_sandbox_wait(p, wait_ms) == 0
        except RuntimeError:
            return True

    def wait(self) -> None:
        # In slices, so that Ctrl-C (handled between calls) still reaches the main thread.
        while not self.ended(250):
            pass

    @property
    def pid(self) -> int:
        with self._use() as p:
            return int(_ffi.lib().sandlock_sandbox_pid(p))

    @property
    def name(self) -> str:
        with self._use() as p:
            return (_ffi.lib().sandlock_sandbox_name(p) or b"").decode()

    def ports(self) -> dict[int, int]:
        """The remapped ports, {virtual: real} (sandlock_sandbox_ports)."""
        L = _ffi.lib()
        with self._use() as p:
            n = L.sandlock_sandbox_ports(p, None, None, 0)
            while n > 0:
                virt, real = (ctypes.c_uint16 * n)(), (ctypes.c_uint16 * n)()
                total = L.sandlock_sandbox_ports(p, virt, real, n)
                if total <= n:  # else more were bound meanwhile: again, with room
                    return {virt[i]: real[i] for i in range(total)}
                n = total
        if n < 0:
            raise OSError(-n, os.strerror(-n))
        return {}

    def signal(self, what: str) -> None:
        L = _ffi.lib()
        fn = {"kill": L.sandlock_sandbox_kill, "pause": L.sandlock_sandbox_pause,
              "resume": L.sandlock_sandbox_resume}[what]
        try:
            with self._use() as p:
                rc = fn(p)
        except RuntimeError:
            rc = -errno.ESRCH
        if rc == -errno.ESRCH:
            raise RuntimeError("the sandbox is not running")
        if rc < 0:
            raise SandboxRuntimeError(f"{what}: {os.strerror(-rc)}")

    def timed_out(self) -> bool:
        with self._use() as p:
            return _ffi.lib().sandlock_sandbox_exit_kind(p) == _ffi.EXIT_TIMEOUT

    @staticmethod
    def _bytes(fn: Any, p: c_void_p) -> bytes:
        n = c_size_t()
        data = fn(p, byref(n))
        return ctypes.string_at(data, n.value) if data and n.value else b""

    def result(self) -> Result:
        """The outcome, with the branch's change set and error; the sandbox must have ended."""
        L = _ffi.lib()
        with self._use() as p:
            cause, notices, unknown = self._cause(p)
            kind = L.sandlock_sandbox_exit_kind(p)
            out = self._bytes(L.sandlock_sandbox_stdout, p)
            err = self._bytes(L.sandlock_sandbox_stderr, p)
            code = int(L.sandlock_sandbox_exit_code(p))
            sig = int(L.sandlock_sandbox_exit_signal(p))
            changes = self._changes(p)
            branch_err = L.sandlock_sandbox_branch_error(p)
            branch_msg = _ffi.error_message(branch_err) if branch_err else None
            denials, dropped, no_denials = self._denials(p)
        r = self._exit_result(kind, code, sig, out, err)
        if unknown is not None:
            r._unknown = unknown
        elif cause == _ffi.CAUSE_MEMORY:
            r.reason = ExitReason.KILLED
            told = "; ".join(n for n in notices if n.startswith("killed "))
            r.error = told or "killed: max_memory reached"
        elif cause == _ffi.CAUSE_KILL:
            r.reason = ExitReason.KILLED
            r.error = "killed by SIGKILL (kill() or `sandlock kill`)"
        r._notices = notices
        r.changes = changes
        r.denials, r.events_dropped, r._no_denials = denials, dropped, no_denials
        r.event_error = self._listener.error if self._listener is not None else None
        if branch_msg:
            r.error = f"{r.error}; {branch_msg}" if r.error else branch_msg
        if self.policy_run is not None:
            r.policy_error = self.policy_run.error
            r.audited = list(self.policy_run.audited)
        return r

    @staticmethod
    def _cause(p: c_void_p) -> tuple[int, list[str], str | None]:
        """Why sandlock ended the sandbox @p (SANDLOCK_CAUSE_*), its notices (each line, the
        "sandlock: " prefix left out), and, if the library cannot tell, why not."""
        try:
            cause = int(_ffi.late("sandlock_sandbox_exit_cause")(p))
            text = _ffi.late("sandlock_sandbox_notices")(p) or b""
        except SandlockError as e:
            return _ffi.CAUSE_NONE, [], str(e)
        lines = os.fsdecode(text).splitlines()
        return cause, [n.removeprefix("sandlock: ") for n in lines if n], None

    def events(self) -> tuple[list[Denial], int, str | None, BaseException | None]:
        """The denials of the ended sandbox, the events dropped, why the library cannot tell
        (None when it can), and the first exception of its on_event callback."""
        with self._use() as p:
            denials, dropped, unknown = self._denials(p)
        return denials, dropped, unknown, self._listener.error if self._listener else None

    @staticmethod
    def _denials(p: c_void_p) -> tuple[list[Denial], int, str | None]:
        """The denial table of the ended sandbox @p, the events dropped, and, if the library
        cannot tell, why not."""
        try:
            denials, dropped = _events.read_denials(p)
        except SandlockError as e:
            return [], 0, str(e)
        return denials, dropped, None

    def _exit_result(self, kind: int, code: int, sig: int, out: bytes, err: bytes) -> Result:
        if kind == _ffi.EXIT_CODE:
            return Result(success=code == 0, exit_code=code, stdout=out, stderr=err)
        if kind == _ffi.EXIT_SIGNAL:
            return Result(success=False, exit_code=128 + sig, stdout=out, stderr=err,
                          error=f"killed by {_signal_name(sig)}", signal=sig,
                          reason=ExitReason.SIGNALED)
        if kind == _ffi.EXIT_TIMEOUT:
            return Result(success=False, exit_code=124, stdout=out, stderr=err,
                          error=f"timed out after {self.timeout:g} s", signal=int(_signal.SIGKILL),
                          reason=ExitReason.TIMEOUT)
        return Result(success=False, exit_code=-1, stdout=out, stderr=err,
                      error="the sandbox has not ended")

    @staticmethod
    def _changes(p: c_void_p) -> list[Change]:
        """The change set of the ended sandbox @p (sorted by path; empty without a workdir)."""
        L = _ffi.lib()
        out = []
        path = ctypes.c_char_p()
        before, after = _ffi.Entry(), _ffi.Entry()
        for i in range(L.sandlock_sandbox_change_count(p)):
            rc = L.sandlock_sandbox_change(p, i, byref(path), byref(before), byref(after))
            if rc < 0:
                raise SandboxRuntimeError(f"reading change {i}: {os.strerror(-rc)}")
            out.append(Change(path=os.fsdecode(path.value or b""), before=_entry(before),
                              after=_entry(after)))
        return out

    # ---- the workdir's branch (once ended) ----------------------------------------------

    def pending(self) -> bool:
        """Whether a deferred branch waits for commit() or abort()."""
        try:
            with self._use() as p:
                return _ffi.lib().sandlock_sandbox_pending(p) == 1
        except RuntimeError:
            return False

    def upper_dir(self) -> str | None:
        """The branch's upper directory while it is on disk (deferred, kept, failed commit)."""
        try:
            with self._use() as p:
                d = _ffi.lib().sandlock_sandbox_upper_dir(p)
        except RuntimeError:
            return None
        return os.fsdecode(d) if d else None

    def settle(self, commit: bool) -> None:
        """Commit or abort the pending branch; BranchError (it stays pending) on failure."""
        L = _ffi.lib()
        with self._use() as p:
            fn = L.sandlock_sandbox_commit if commit else L.sandlock_sandbox_abort
            _ffi.call(fn, p, raise_as=raise_branch)

    def free(self) -> None:
        """Kill the sandbox if it still runs, wait for it, release it. Idempotent."""
        self._not_from_callback("close")
        with self._cv:
            if self._closing:
                return
            self._closing = True
            while self._users:
                self._cv.wait()
            ptr, self._ptr = self._ptr, c_void_p()
        if ptr:
            _ffi.lib().sandlock_sandbox_free(ptr)

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:
            pass


def stdio_opts(stdin: Any = None, stdout: Any = "pipe", stderr: Any = "pipe",
               timeout: float | None = None, pass_fds: list[int] | None = None,
               flags: int = 0) -> tuple[_ffi.SpawnOpts, Any]:
    """Spawn options: each stream is None (/dev/null), "pipe" (captured), "inherit", or a
    descriptor (an int or an object with fileno()). Returns the options and what must stay
    alive until the spawn returns."""
    o = _ffi.SpawnOpts()
    o.flags = flags
    o.timeout_ms = timeout_ms(timeout)
    for i, spec in enumerate((stdin, stdout, stderr)):
        name = ("stdin", "stdout", "stderr")[i]
        if spec is None:
            mode, fd = _ffi.STDIO_NULL, -1
        elif spec == "pipe":
            mode, fd = _ffi.STDIO_PIPE, -1
        elif spec == "inherit":
            mode, fd = _ffi.STDIO_INHERIT, -1
        else:
            fd = spec if isinstance(spec, int) else spec.fileno()
            mode = _ffi.STDIO_FD
        setattr(o, f"{name}_mode", mode)
        setattr(o, f"{name}_fd", fd)
    keep = None
    if pass_fds:
        keep = (ctypes.c_int32 * len(pass_fds))(*pass_fds)
        o.pass_fds = keep
        o.n_pass_fds = len(pass_fds)
    return o, keep
