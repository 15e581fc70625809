# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every ctypes binding to libsandlock, with explicit argtypes and restype.

The library is loaded on first use, not at import, so ``from sandlock import inputs`` works in a
sandboxed consumer that cannot read it. It is looked for, in order: the path in $SANDLOCK_LIB,
``libsandlock.so`` next to this package (a ``pip install`` puts it there), then the system
library path (``libsandlock.so.0``).

Calls go through ctypes.CDLL, which releases the GIL for the duration of each call, so a
blocking wait in one thread never stops another.
"""

from __future__ import annotations

import ctypes
import os
import threading
from ctypes import (
    CFUNCTYPE,
    POINTER,
    byref,
    c_char_p,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint16,
    c_uint32,
    c_uint64,
    c_uint8,
    c_void_p,
)
from typing import Callable, NoReturn

from .exceptions import SandlockError

STDIO_INHERIT = 0
STDIO_NULL = 1
STDIO_PIPE = 2
STDIO_FD = 3

SPAWN_INTERACTIVE = 1 << 0
SPAWN_PARKED = 1 << 1
SPAWN_FDS_FROM_3 = 1 << 2

EXIT_CODE = 1
EXIT_SIGNAL = 2
EXIT_TIMEOUT = 3

CAUSE_NONE = 0  # the command ended by itself, or by the timeout
CAUSE_MEMORY = 1  # sandlock killed it: max_memory reached
CAUSE_KILL = 2  # sandlock_sandbox_kill() or `sandlock kill` ended it

PASS_FDS_MAX = 64

BRANCH_COMMIT = 0
BRANCH_ABORT = 1
BRANCH_KEEP = 2
BRANCH_DEFER = 3

ENTRY_ABSENT = 0
ENTRY_KINDS = {1: "file", 2: "dir", 3: "symlink", 4: "other"}  # SANDLOCK_ENTRY_*


VERDICT_ALLOW = 0
VERDICT_DENY = 1
VERDICT_AUDIT = 2  # allowed, and flagged

EVENTS_DENIALS = 1 << 0  # the kernel's denials too, judged against the grants for the log
EVENTS_ALLOWED = 1 << 1  # the allowed decisions too


class EventStruct(ctypes.Structure):
    """sandlock_event_t: one decision (its strings owned by the library: during the callback,
    or as long as the sandbox for a denial of the table)."""

    _fields_ = [
        ("size", c_uint64),
        ("seq", c_uint64),
        ("syscall", c_char_p),
        ("category", c_char_p),
        ("pid", c_int32),
        ("ppid", c_int32),
        ("comm", c_char_p),
        ("verdict", c_uint32),
        ("error", c_int32),
        ("judged", c_uint32),
        ("first", c_uint32),
        ("path", c_char_p),
        ("access", c_char_p),
        ("host", c_char_p),
        ("port", c_uint32),
        ("family", c_int32),
        ("protocol", c_char_p),
        ("amount", c_uint64),
        ("reason", c_char_p),
        ("hint", c_char_p),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.size = ctypes.sizeof(EventStruct)


# sandlock_event_fn: void (*)(const sandlock_event_t *event, void *user_data). ctypes takes the
# GIL for each call, on whichever thread of the library's makes it.
EVENT_FN = CFUNCTYPE(None, POINTER(EventStruct), c_void_p)


# ---- extension handlers (sandlock_handler_*: the handler module uses them) ----------------

EXCEPTION_KILL = 0
EXCEPTION_DENY_EPERM = 1
EXCEPTION_CONTINUE = 2
EXCEPTION_DENY_EIO = 3

NOTIF_HELD = 1 << 0  # the held call's second call, on a worker thread
INJECT_WRITABLE = 1 << 0
INJECT_NO_CLOEXEC = 1 << 1


class Notif(ctypes.Structure):
    """sandlock_notif_t: the notification a handler is called with."""

    _fields_ = [
        ("id", c_uint64),
        ("pid", c_int32),
        ("flags", c_uint32),
        ("syscall_nr", c_int32),
        ("arch", c_uint32),
        ("instruction_pointer", c_uint64),
        ("args", c_uint64 * 6),
    ]


class HandlerReg(ctypes.Structure):
    """sandlock_handler_reg_t: a syscall by name, or by number with syscall NULL."""

    _fields_ = [
        ("syscall", c_char_p),
        ("nr", c_int32),
        ("reserved", c_uint32),
        ("handler", c_void_p),
    ]


# sandlock_handler_fn(notif, mem, action, user_data) -> 0 or an exception, and the drop of its
# user_data. ctypes takes the GIL for each call, on whichever thread of the library's makes it.
HANDLER_FN = CFUNCTYPE(c_int, POINTER(Notif), c_void_p, c_void_p, c_void_p)
HANDLER_DROP_FN = CFUNCTYPE(None, c_void_p)

# Late (see _LATE_SIGNATURES): a library without handlers runs everything else.
_HANDLER_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    "sandlock_handler_new": (c_void_p, [HANDLER_FN, c_void_p, HANDLER_DROP_FN, c_uint32]),
    "sandlock_handler_set_deferred": (c_int, [c_void_p, c_int]),
    "sandlock_handler_free": (None, [c_void_p]),
    "sandlock_mem_read_cstr": (c_int64, [c_void_p, c_uint64, c_void_p, c_size_t]),
    "sandlock_mem_read": (c_int64, [c_void_p, c_uint64, c_void_p, c_size_t]),
    "sandlock_mem_write": (c_int64, [c_void_p, c_uint64, c_void_p, c_size_t]),
    "sandlock_action_continue": (c_int, [c_void_p]),
    "sandlock_action_errno": (c_int, [c_void_p, c_int32]),
    "sandlock_action_return": (c_int, [c_void_p, c_int64]),
    "sandlock_action_inject_fd": (c_int, [c_void_p, c_int32, c_uint32]),
    "sandlock_action_inject_bytes": (c_int, [c_void_p, c_void_p, c_size_t, c_uint32]),
    "sandlock_action_hold": (c_int, [c_void_p]),
    "sandlock_action_kill": (c_int, [c_void_p, c_int32, c_int32]),
}


class SpawnOpts(ctypes.Structure):
    """sandlock_spawn_opts_t (size-versioned; .size is set by the constructor)."""

    _fields_ = [
        ("size", c_uint64),
        ("flags", c_uint32),
        ("stdin_mode", c_uint32),
        ("stdout_mode", c_uint32),
        ("stderr_mode", c_uint32),
        ("stdin_fd", c_int32),
        ("stdout_fd", c_int32),
        ("stderr_fd", c_int32),
        ("reserved", c_uint32),
        ("timeout_ms", c_uint64),
        ("pass_fds", POINTER(c_int32)),
        ("n_pass_fds", c_uint32),
        ("reserved2", c_uint32),
        ("events", c_uint32),
        ("reserved3", c_uint32),
        ("on_event", EVENT_FN),
        ("event_user_data", c_void_p),
        ("handlers", POINTER(HandlerReg)),
        ("n_handlers", c_uint32),
        ("reserved4", c_uint32),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.size = ctypes.sizeof(SpawnOpts)
        self.stdin_fd = self.stdout_fd = self.stderr_fd = -1


class Entry(ctypes.Structure):
    """sandlock_entry_t: one side of a change (@target is owned by the sandbox)."""

    _fields_ = [
        ("kind", c_uint32),
        ("mode", c_uint32),
        ("size", c_uint64),
        ("has_digest", c_uint32),
        ("digest", c_uint8 * 32),
        ("target", c_char_p),
    ]


_P = c_void_p  # every handle is opaque
_PP = POINTER(c_void_p)

# name: (restype, argtypes)
_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    "sandlock_error_message": (c_char_p, [_P]),
    "sandlock_error_step": (c_char_p, [_P]),
    "sandlock_error_free": (None, [_P]),
    "sandlock_landlock_abi_version": (c_int, []),
    "sandlock_min_landlock_abi": (c_int, []),
    "sandlock_free": (None, [_P]),
    "sandlock_strv_free": (None, [_P]),
    "sandlock_policy_free": (None, [_P]),
    "sandlock_policy_load_json": (c_int, [c_char_p, c_size_t, _PP, _PP]),
    "sandlock_policy_dump_json": (c_int, [_P, _PP]),
    "sandlock_policy_check": (c_int, [_P, _PP]),
    "sandlock_confine": (c_int, [_P, _PP]),
    "sandlock_ports_parse": (c_int, [c_char_p, POINTER(c_uint16), c_size_t, _PP]),
    "sandlock_profile_list": (c_int, [_PP, _PP]),
    "sandlock_policy_load_profile": (c_int, [c_char_p, _PP, _PP]),
    "sandlock_spawn": (c_int, [_P, POINTER(c_char_p), POINTER(SpawnOpts), _PP, _PP]),
    "sandlock_sandbox_start": (c_int, [_P, _PP]),
    "sandlock_sandbox_wait": (c_int, [_P, c_int64]),
    "sandlock_sandbox_kill": (c_int, [_P]),
    "sandlock_sandbox_pause": (c_int, [_P]),
    "sandlock_sandbox_resume": (c_int, [_P]),
    "sandlock_sandbox_pid": (c_int32, [_P]),
    "sandlock_sandbox_name": (c_char_p, [_P]),
    "sandlock_sandbox_ports": (c_int, [_P, POINTER(c_uint16), POINTER(c_uint16), c_size_t]),
    "sandlock_sandbox_exit_kind": (c_uint32, [_P]),
    "sandlock_sandbox_exit_code": (c_int32, [_P]),
    "sandlock_sandbox_exit_signal": (c_int32, [_P]),
    "sandlock_sandbox_stdout": (c_void_p, [_P, POINTER(c_size_t)]),
    "sandlock_sandbox_stderr": (c_void_p, [_P, POINTER(c_size_t)]),
    "sandlock_sandbox_branch_action": (c_int, [_P]),
    "sandlock_sandbox_branch_error": (c_void_p, [_P]),
    "sandlock_sandbox_change_count": (c_size_t, [_P]),
    "sandlock_sandbox_change": (c_int, [_P, c_size_t, POINTER(c_char_p), POINTER(Entry),
                                        POINTER(Entry)]),
    "sandlock_sandbox_pending": (c_int, [_P]),
    "sandlock_sandbox_upper_dir": (c_char_p, [_P]),
    "sandlock_sandbox_commit": (c_int, [_P, _PP]),
    "sandlock_sandbox_abort": (c_int, [_P, _PP]),
    "sandlock_sandbox_free": (None, [_P]),
}

# Bound on first use rather than at load (late()): a library without them still runs sandboxes,
# and what needs them (Result.reason, Result.notices, Result.denials, str(Event)) raises naming
# the missing function.
_LATE_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    "sandlock_sandbox_exit_cause": (c_uint32, [_P]),
    "sandlock_sandbox_notices": (c_char_p, [_P]),
    "sandlock_sandbox_denial_count": (c_size_t, [_P]),
    "sandlock_sandbox_denial": (c_int, [_P, c_size_t, POINTER(EventStruct), POINTER(c_uint64)]),
    "sandlock_sandbox_events_dropped": (c_uint64, [_P]),
    "sandlock_event_format": (c_int, [POINTER(EventStruct), _PP]),
    "sandlock_event_format_json": (c_int, [POINTER(EventStruct), _PP]),
}

_LATE_SIGNATURES.update(_HANDLER_SIGNATURES)

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_late: dict[str, Callable[..., object]] = {}


_chosen: str | None = None


def use_library(path: str) -> None:
    """Load libsandlock from @path, before $SANDLOCK_LIB (a process that must not pass the
    path on to the programs it runs gives it here, not in its environment)."""
    global _chosen
    _chosen = path


def library_path() -> str:
    """Where libsandlock is loaded from (see the module docstring)."""
    if _chosen:
        return _chosen
    env = os.environ.get("SANDLOCK_LIB")
    if env:
        return env
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libsandlock.so")
    return here if os.path.exists(here) else "libsandlock.so.0"


def lib() -> ctypes.CDLL:
    """The loaded library, with every signature declared."""
    global _lib
    with _lock:
        if _lib is None:
            path = library_path()
            try:
                handle = ctypes.CDLL(path)
            except OSError as e:
                raise SandlockError(
                    f"cannot load libsandlock ({path}): {e}; build it (make) and set "
                    "SANDLOCK_LIB, or install the package with pip"
                ) from None
            for name, (restype, argtypes) in _SIGNATURES.items():
                try:
                    fn = getattr(handle, name)
                except AttributeError:
                    raise SandlockError(
                        f"{path} lacks {name}: a libsandlock older than this package"
                    ) from None
                fn.restype = restype
                fn.argtypes = argtypes
            _lib = handle
        return _lib


def late(name: str) -> Callable[..., object]:
    """The function @name of _LATE_SIGNATURES, declared; SandlockError if the library lacks it."""
    L = lib()
    with _lock:
        fn = _late.get(name)
        if fn is None:
            try:
                fn = getattr(L, name)
            except AttributeError:
                raise SandlockError(
                    f"{library_path()} lacks {name}: a libsandlock older than this package"
                ) from None
            fn.restype, fn.argtypes = _LATE_SIGNATURES[name]
            _late[name] = fn
        return fn


class Error:
    """A sandlock_error_t * out-parameter, read and freed once."""

    def __init__(self) -> None:
        self.ptr = c_void_p()

    def ref(self) -> object:
        return byref(self.ptr)

    def take(self, rc: int) -> tuple[str, str | None]:
        """The message (or strerror(-rc)) and the failed child step, freeing the error."""
        if not self.ptr:
            return os.strerror(-rc), None
        L = lib()
        msg = (L.sandlock_error_message(self.ptr) or b"").decode(errors="replace")
        step = L.sandlock_error_step(self.ptr)
        L.sandlock_error_free(self.ptr)
        self.ptr = c_void_p()
        return msg or os.strerror(-rc), step.decode() if step else None


def error_message(ptr: int | c_void_p) -> str:
    """The message of a sandlock_error_t * the library owns (not freed)."""
    return (lib().sandlock_error_message(ptr) or b"").decode(errors="replace")


def take_string(ptr: c_void_p) -> str:
    """A char * the library allocated, decoded and freed."""
    try:
        return os.fsdecode(ctypes.string_at(ptr))
    finally:
        lib().sandlock_free(ptr)


def take_strv(ptr: c_void_p) -> list[str]:
    """A NULL-terminated char ** the library allocated, decoded and freed."""
    try:
        arr = ctypes.cast(ptr, POINTER(c_char_p))
        out = []
        i = 0
        while arr[i] is not None:
            out.append(os.fsdecode(arr[i]))
            i += 1
        return out
    finally:
        lib().sandlock_strv_free(ptr)


def argv_array(args: list[str]) -> ctypes.Array:
    """A NULL-terminated char *[] for @args (the library copies it)."""
    arr = (c_char_p * (len(args) + 1))()
    for i, a in enumerate(args):
        arr[i] = os.fsencode(a)
    arr[len(args)] = None
    return arr


def call(fn: Callable[..., int], *args: object,
         raise_as: Callable[[int, str, str | None], NoReturn]) -> int:
    """Call @fn(*args, err) and hand a failure to @raise_as(rc, message, step)."""
    err = Error()
    rc = fn(*args, err.ref())
    if rc < 0:
        msg, step = err.take(rc)
        raise_as(rc, msg, step)
    return rc


# ---- policy_fn (sandlock_policy_set_policy_fn, its event and context: policy_fn.py) ------------

POLICY_ALLOW = 0  # SANDLOCK_POLICY_ALLOW
POLICY_DENY = -1  # SANDLOCK_POLICY_DENY: EPERM
POLICY_AUDIT = -2  # SANDLOCK_POLICY_AUDIT: allowed, and flagged


class PolicyEvent(ctypes.Structure):
    """sandlock_policy_event_t (size-versioned: .size is the filling library's; its strings are
    the library's, valid only during the callback)."""

    _fields_ = [
        ("size", c_uint64),
        ("seq", c_uint64),
        ("syscall", c_char_p),
        ("category", c_char_p),
        ("pid", c_int32),
        ("ppid", c_int32),
        ("host", c_char_p),
        ("port", c_uint32),
        ("held", c_uint32),
        ("argv", POINTER(c_char_p)),
        ("argc", c_uint32),
        ("denied", c_uint32),
    ]


# sandlock_policy_fn: int32_t (*)(const sandlock_policy_event_t *, sandlock_policy_ctx_t *,
# void *user_data), and the drop of its user data. ctypes takes the GIL once for each call, on
# whichever thread of the library's makes it.
POLICY_FN = CFUNCTYPE(c_int32, POINTER(PolicyEvent), c_void_p, c_void_p)
POLICY_DROP = CFUNCTYPE(None, c_void_p)

# Bound on first use (late()): a library without policy_fn still runs every other sandbox.
_LATE_SIGNATURES.update({
    "sandlock_policy_set_policy_fn": (c_int, [_P, POLICY_FN, c_void_p, POLICY_DROP]),
    "sandlock_policy_set_policy_fn_timeout": (c_int, [_P, c_uint32]),
    "sandlock_policy_ctx_restrict_network": (c_int, [_P, POINTER(c_char_p), c_size_t]),
    "sandlock_policy_ctx_grant_network": (c_int, [_P, POINTER(c_char_p), c_size_t]),
    "sandlock_policy_ctx_restrict_pid_network": (c_int, [_P, c_int32, POINTER(c_char_p),
                                                         c_size_t]),
    "sandlock_policy_ctx_restrict_max_memory": (c_int, [_P, c_uint64]),
    "sandlock_policy_ctx_restrict_max_processes": (c_int, [_P, c_uint32]),
    "sandlock_policy_ctx_deny_path": (c_int, [_P, c_char_p]),
    "sandlock_policy_ctx_allow_path": (c_int, [_P, c_char_p]),
})
