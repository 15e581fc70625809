# SPDX-License-Identifier: LGPL-2.1-or-later
"""policy_fn: a Python callback that decides the supervised events of a running sandbox.

``Sandbox(policy_fn=fn)`` hands the library one C trampoline (POLICY_FN below) for every
sandbox, with a key in its user data; the key names the run's Run in _LIVE, which holds the
callback until the library drops the user data (the last policy or sandbox holding it is
freed). The trampoline never lets an exception out: ctypes would print it and answer 0, which
allows. The library calls it on a thread of the sandbox's own, one event at a time; ctypes
takes the GIL once per call, and that thread keeps its Python thread state between calls
(Run.keep_thread_state).

    def fn(event: SyscallEvent, ctx: PolicyContext) -> verdict

Verdicts (verdict() converts them): None, False, 0 allow; True, -1 deny (EPERM); an int 1 to
4095 denies with that errno; "audit" or -2 allows and flags the event (Result.audited);
anything else, or an exception, denies (EPERM), and the first such exception is kept in
Result.policy_error. No verdict within policy_fn_timeout denies the held call (EPERM).
"""

from __future__ import annotations

import ctypes
import errno
import ipaddress
import itertools
import math
import os
import threading
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from . import _ffi
from .exceptions import PolicyError, SandboxRuntimeError

AUDIT_KEPT = 1024  # Result.audited keeps the first this many audited events
TIMEOUT_MAX = 600.0  # seconds: the library's ceiling (600000 ms)
NET_MAX = 256  # addresses in one network set (the library's POLICY_FN_NET_MAX)


@dataclass(frozen=True)
class SyscallEvent:
    """One supervised event, as policy_fn sees it.

    ``held`` events wait for the verdict (execve, execveat, open, openat, openat2, connect,
    bind, sendto, sendmsg, sendmmsg); the others (fs mutations, fork and clone, mmap and brk,
    getrandom) are only observed: their verdict is not used. ``denied`` is True for an observed
    event the static policy refused; a held event's is False, since the static policy decides
    after the callback allows, and its denials win.

    ``host`` and ``port`` are those of a connect, bind or send (the IP address as text; port 0
    where there is none). ``argv`` is the argument list of an execve or execveat, as the kernel
    will exec it: the other tasks of the sandbox cannot change it between this event and the
    exec (an exec by a process that has other threads, whose argv they could change, is
    refused with EPERM without an event). There is no path: a path lives in the child's memory and can change after the check,
    so a decision on it would decide on something else than what the kernel opens; file
    decisions go through PolicyContext.deny_path(), which holds by file identity."""

    syscall: str
    category: str  # "file", "network", "process" or "memory"
    pid: int
    parent_pid: int
    host: str | None = None
    port: int = 0
    argv: tuple[str, ...] | None = None
    denied: bool = False
    held: bool = False

    def argv_contains(self, s: str) -> bool:
        """True if an element of argv contains @s (False without argv)."""
        return self.argv is not None and any(s in a for a in self.argv)


def _text(b: bytes | None) -> str | None:
    return None if b is None else b.decode("utf-8", "surrogateescape")


# Where the fields a library may lack end (an older library's smaller event), read once.
_ARGC_END = _ffi.PolicyEvent.argc.offset + _ffi.PolicyEvent.argc.size
_DENIED_END = _ffi.PolicyEvent.denied.offset + _ffi.PolicyEvent.denied.size
_NAMES: dict[bytes, str] = {}  # syscall and category names, decoded once each


def _name(b: bytes | None) -> str:
    if b is None:
        return ""
    s = _NAMES.get(b)
    if s is None:
        s = _NAMES.setdefault(b, b.decode("utf-8", "replace")) if len(_NAMES) < 512 else \
            b.decode("utf-8", "replace")
    return s


def event_of(ev: _ffi.PolicyEvent) -> SyscallEvent:
    """The SyscallEvent of the library's @ev (fields its size does not reach are defaults).
    Made without the frozen __init__ (one dict update instead of nine guarded setattrs): this
    runs once per event, on the held call's path."""
    size = ev.size
    argv = None
    if size >= _ARGC_END and ev.argv:
        a = ev.argv
        argv = tuple((a[i] or b"").decode("utf-8", "surrogateescape") for i in range(ev.argc))
    e = object.__new__(SyscallEvent)
    e.__dict__.update(syscall=_name(ev.syscall), category=_name(ev.category), pid=ev.pid,
                      parent_pid=ev.ppid, host=_text(ev.host), port=ev.port, argv=argv,
                      denied=size >= _DENIED_END and bool(ev.denied), held=bool(ev.held))
    return e


def verdict(value: Any) -> int | None:
    """The library's verdict for what policy_fn returned; None when it is not a verdict."""
    if value is None or value is False:
        return _ffi.POLICY_ALLOW
    if value is True:
        return _ffi.POLICY_DENY
    if isinstance(value, str):
        return _ffi.POLICY_AUDIT if value == "audit" else None
    if isinstance(value, int):
        if value in (_ffi.POLICY_ALLOW, _ffi.POLICY_DENY, _ffi.POLICY_AUDIT) or 1 <= value <= 4095:
            return int(value)
    return None


# ---- the context -------------------------------------------------------------------------------

# (method, errno) -> what the library's refusal means, after the value the caller gave.
_REFUSED = {
    ("network", errno.ENOSPC): "too many processes with a set of their own (64 at most)",
    ("limit", errno.EPERM): "above the current limit (a limit is only lowered)",
    ("limit", errno.EINVAL): "a limit is at least 1",
    ("path", errno.EINVAL): "not an absolute path",
    ("path", errno.ENOENT): "no such file or directory",
    ("path", errno.EACCES): "cannot be resolved (permission denied)",
    ("path", errno.EOPNOTSUPP): "not supported yet: deny_path with a workdir, with fs_deny "
                                "beneath a writable grant, or once a process of the sandbox "
                                "made a Landlock domain of its own",
    ("path", errno.ENOSPC): "the deny set is full (64 files and directories at most)",
    ("allow_path", errno.ENOENT): "not denied by deny_path (allow_path removes only what "
                                  "deny_path added)",
}


class PolicyContext:
    """What a policy_fn may change in the running sandbox, valid only during the call it was
    given to (a later use raises SandboxRuntimeError). A refusal raises PolicyError naming the
    value and why; the sandbox is then as it was."""

    __slots__ = ("_ptr",)

    def __init__(self, ptr: int | None) -> None:
        self._ptr = ptr

    def _call(self, method: str, shown: str, kind: str, fn: str, *args: Any) -> None:
        if not self._ptr:
            raise SandboxRuntimeError(
                f"PolicyContext.{method}: the policy_fn call this context was given to has "
                "returned; use it only during that call")
        rc = _ffi.late(fn)(self._ptr, *args)
        if rc < 0:
            why = (_REFUSED.get((method, -rc)) or _REFUSED.get((kind, -rc))
                   or os.strerror(-rc))
            raise PolicyError(f"{method}({shown}): {why}")

    @staticmethod
    def _ips(method: str, ips: Sequence[Any]) -> tuple[ctypes.Array, str]:
        if isinstance(ips, (str, bytes)):
            raise TypeError(f"{method}: ips is a list of IP addresses, not {ips!r} alone "
                            f"(write [{ips!r}])")
        out = []
        for ip in ips:
            text = ip.decode() if isinstance(ip, bytes) else str(ip)
            try:
                ipaddress.ip_address(text)
            except ValueError:
                raise PolicyError(f"{method}: {ip!r}: not an IP address (\"127.0.0.1\", "
                                  "\"::1\"; hostnames are not resolved here)") from None
            out.append(text)
        if len(out) > NET_MAX:
            raise PolicyError(f"{method}: {len(out)} addresses: at most {NET_MAX} in a set")
        arr = (ctypes.c_char_p * (len(out) + 1))(*(s.encode() for s in out))
        return arr, repr(out)

    def restrict_network(self, ips: Sequence[str]) -> None:
        """Let connections and datagrams reach only @ips (each also allowed by net_allow);
        [] reaches none. Replaces the live set."""
        arr, shown = self._ips("restrict_network", ips)
        self._call("restrict_network", shown, "network",
                   "sandlock_policy_ctx_restrict_network", arr, len(arr) - 1)

    def grant_network(self, ips: Sequence[str]) -> None:
        """Add @ips back to the live set (without one it changes nothing); an address net_allow
        does not allow stays refused."""
        arr, shown = self._ips("grant_network", ips)
        self._call("grant_network", shown, "network",
                   "sandlock_policy_ctx_grant_network", arr, len(arr) - 1)

    def restrict_pid_network(self, pid: int, ips: Sequence[str]) -> None:
        """Set process @pid's own set of reachable addresses (it wins over the live set)."""
        pid = _int("restrict_pid_network", "pid", pid, 1, 2**31 - 1)
        arr, shown = self._ips("restrict_pid_network", ips)
        self._call("restrict_pid_network", f"{pid}, {shown}", "network",
                   "sandlock_policy_ctx_restrict_pid_network", pid, arr, len(arr) - 1)

    def restrict_max_memory(self, limit: int | str) -> None:
        """Lower max_memory to @limit, bytes (an int) or "512M", "1G"; never raises it."""
        from .sandbox import parse_memory_size

        try:
            n = parse_memory_size(limit)
        except ValueError as e:
            raise PolicyError(f"restrict_max_memory: {e}") from None
        self._call("restrict_max_memory", repr(limit), "limit",
                   "sandlock_policy_ctx_restrict_max_memory", n)

    def restrict_max_processes(self, n: int) -> None:
        """Lower max_processes to @n; never raises it."""
        n = _int("restrict_max_processes", "n", n, 0, 2**32 - 1)
        self._call("restrict_max_processes", str(n), "limit",
                   "sandlock_policy_ctx_restrict_max_processes", n)

    def deny_path(self, path: str | os.PathLike[str]) -> None:
        """Refuse the opens and execs (EACCES) of the file or directory @path (absolute)
        resolves to now, and of everything beneath such a directory, by identity: hard links
        and renames keep the deny. Descriptors opened before stay usable. While any deny is in
        force the sandbox's opens are made on its behalf, and an exec is refused unless its
        absolute name runs through directories the sandbox cannot change."""
        p = os.fspath(path)
        self._call("deny_path", repr(p), "path", "sandlock_policy_ctx_deny_path",
                   os.fsencode(p))

    def allow_path(self, path: str | os.PathLike[str]) -> None:
        """Remove a deny that deny_path(@path) added (and nothing else): the entry of the file
        @path names now, else the one deny_path was given the same text for."""
        p = os.fspath(path)
        self._call("allow_path", repr(p), "path", "sandlock_policy_ctx_allow_path",
                   os.fsencode(p))


def _int(method: str, name: str, v: Any, lo: int, hi: int) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError(f"{method}: {name} is an int, not {v!r}")
    if not lo <= v <= hi:
        raise PolicyError(f"{method}: {name} {v}: not in {lo}..{hi}")
    return v


# ---- the run ---------------------------------------------------------------------------------


# The thread state of the library's policy thread, kept from its first call to the drop.
# ctypes wraps each call of a callback in PyGILState_Ensure/Release; on a thread Python did not
# make, that creates a thread state and destroys it again for every event (a third of the
# callback's cost). One Ensure never released keeps it: each later call finds it and only takes
# the GIL. The library joins the thread before it drops the user data, so the drop deletes the
# thread state of a thread that has ended (never the calling thread's own).
_api = ctypes.pythonapi
_api.PyGILState_Ensure.restype = ctypes.c_int
_api.PyThreadState_Get.restype = ctypes.c_void_p
_api.PyThreadState_Clear.argtypes = [ctypes.c_void_p]
_api.PyThreadState_Clear.restype = None
_api.PyThreadState_Delete.argtypes = [ctypes.c_void_p]
_api.PyThreadState_Delete.restype = None


class Run:
    """One installed policy_fn: the callback, its first error and the audited events."""

    def __init__(self, fn: Callable[[SyscallEvent, PolicyContext], Any]) -> None:
        self.fn = fn
        self.error: BaseException | None = None
        self.audited: list[SyscallEvent] = []
        self._lock = threading.Lock()
        self._thread: int | None = None  # the first calling thread, whose state is kept
        self._tstate: int | None = None

    def keep_thread_state(self) -> None:
        if self._thread is None:
            self._thread = threading.get_ident()
            _api.PyGILState_Ensure()
            self._tstate = _api.PyThreadState_Get()

    def release_thread_state(self) -> None:
        """From the drop: the kept thread state, if its thread is not the caller."""
        ts, self._tstate = self._tstate, None
        if ts and ts != _api.PyThreadState_Get():
            _api.PyThreadState_Clear(ts)
            _api.PyThreadState_Delete(ts)

    def _keep(self, e: BaseException) -> None:
        with self._lock:
            if self.error is None:
                self.error = e

    def decide(self, ev: _ffi.PolicyEvent, ctx_ptr: int | None) -> int:
        event = event_of(ev)
        ctx = PolicyContext(ctx_ptr)
        try:
            value = self.fn(event, ctx)
        except BaseException as e:  # fail closed; SystemExit in a callback ends nothing
            self._keep(e)
            return _ffi.POLICY_DENY
        finally:
            ctx._ptr = None
        v = verdict(value)
        if v is None:
            self._keep(TypeError(
                f"policy_fn returned {value!r} for {event.syscall} by pid {event.pid}: not a "
                "verdict (None/False/0, True/-1, an errno 1..4095, \"audit\"/-2); denied"))
            return _ffi.POLICY_DENY
        if v == _ffi.POLICY_AUDIT:
            with self._lock:
                if len(self.audited) < AUDIT_KEPT:
                    self.audited.append(event)
        return v


_LIVE: dict[int, Run] = {}
_KEYS = itertools.count(1)


def _trampoline(ev: Any, ctx: int | None, key: int | None) -> int:
    try:
        run = _LIVE.get(key or 0)
        if run is None or not ev:
            return _ffi.POLICY_DENY
        run.keep_thread_state()
        return run.decide(ev.contents, ctx)
    except BaseException:
        return _ffi.POLICY_DENY


def _drop(key: int | None) -> None:
    try:
        run = _LIVE.pop(key or 0, None)
        if run is not None:
            run.release_thread_state()
    except BaseException:  # at interpreter exit the module may be half torn down
        pass


# Module-level, so they outlive every sandbox that holds a pointer to them.
_FN = _ffi.POLICY_FN(_trampoline)
_DROP = _ffi.POLICY_DROP(_drop)


def check(fn: Any, timeout: Any) -> None:
    """Refuse a policy_fn that cannot be called and a timeout out of range (PolicyError)."""
    if fn is not None and not callable(fn):
        raise PolicyError(f"policy_fn: {fn!r} is not callable (a function of (event, ctx))")
    timeout_ms(timeout)


def timeout_ms(timeout: Any) -> int:
    if (not isinstance(timeout, (int, float)) or isinstance(timeout, bool)
            or not 0 < timeout <= TIMEOUT_MAX):
        raise PolicyError(f"policy_fn_timeout: {timeout!r}: a number of seconds above 0, "
                          f"at most {TIMEOUT_MAX:g}")
    return max(1, math.ceil(timeout * 1000))


def install(policy: ctypes.c_void_p, fn: Callable[..., Any], timeout: float) -> Run:
    """Set @fn as @policy's policy_fn with @timeout (seconds); the Run reports its outcome."""
    check(fn, timeout)  # the fields are plain attributes: set again since construction
    rc = _ffi.late("sandlock_policy_set_policy_fn_timeout")(policy, timeout_ms(timeout))
    if rc < 0:
        raise PolicyError(f"policy_fn_timeout: {timeout!r}: {os.strerror(-rc)}")
    run = Run(fn)
    key = next(_KEYS)
    _LIVE[key] = run
    rc = _ffi.late("sandlock_policy_set_policy_fn")(policy, _FN, key, _DROP)
    if rc < 0:
        _LIVE.pop(key, None)  # the library does not call the drop on a failure
        raise PolicyError(f"policy_fn: {os.strerror(-rc)}")
    return run
