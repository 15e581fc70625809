# SPDX-License-Identifier: LGPL-2.1-or-later
"""Extension handlers: Python code in the supervisor's chain for the syscalls you name.

    from sandlock import Handler, NotifAction, Sandbox

    class FakeParent(Handler):
        def handle(self, ctx):
            return NotifAction.returns(4242)

    r = Sandbox(fs_readable=["/usr", "/lib", "/lib64", "/bin"]).run_with_handlers(
        ["python3", "-c", "import os; print(os.getppid())"], [("getppid", FakeParent())])

A handler is called after the built-in chain, and only when the built-in verdict lets the
call go on: it may deny a call, fabricate its result or hand the child a descriptor, never
undo what the policy refused. Several handlers on one syscall run in registration order; the
first whose answer is not continue decides.

Where handle() runs:
 - a plain ``def handle`` runs on the supervisor's loop: every trapped call of the sandbox waits
   while it runs, so keep it short (or set ``deferred = True``, or answer ``NotifAction.hold()``
   for the slow cases: handle() is then called again for that call on a worker thread, with
   ``ctx.held`` True);
 - an ``async def handle`` (and any handler with ``deferred = True``) runs on a worker thread of
   the library's, off the loop; a coroutine is run there to its end with asyncio.run(), a fresh
   event loop per call. A deferred handler may be called on several workers at once (what it
   shares needs a lock). At most 64 deferred calls are in flight per sandbox; a call beyond
   fails with EAGAIN. In a deferred call hold() is an exception.

An exception raised in handle() (or an answer that is not a NotifAction) is the handler's
exception: the call is answered as its ``on_exception`` says (ExceptionPolicy, KILL by default:
the calling process is killed with SIGKILL), and Result.handler_error keeps the first one, with
its traceback. In handle(), its own sandbox's wait(), close() and runs raise RuntimeError: the
sandbox's run ends only once its handlers have returned (another sandbox may run there).
"""

from __future__ import annotations

import asyncio
import ctypes
import enum
import inspect
import itertools
import os
import signal as _signal
import threading
from typing import Any, Sequence, Union

from . import _ffi
from .exceptions import SandboxRuntimeError

NOTIF_HELD = _ffi.NOTIF_HELD  # HandlerCtx.flags: the held call's second call, on a worker

_INT64 = (-(1 << 63), (1 << 63) - 1)
_INT32 = (-(1 << 31), (1 << 31) - 1)
_PATH_MAX = 4096


class ExceptionPolicy(enum.IntEnum):
    """How a call is answered when its handler fails (raises, answers no NotifAction, or
    answers one the library refuses)."""

    KILL = _ffi.EXCEPTION_KILL  # SIGKILL the calling process
    DENY_EPERM = _ffi.EXCEPTION_DENY_EPERM  # the call fails with EPERM
    CONTINUE = _ffi.EXCEPTION_CONTINUE  # the call goes on, as the built-in chain let it
    DENY_EIO = _ffi.EXCEPTION_DENY_EIO  # the call fails with EIO


def _int(what: str, v: Any, lo: int, hi: int) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError(f"{what}: {v!r} is not an integer")
    if not lo <= v <= hi:
        raise ValueError(f"{what}: {v} is out of range ({lo} to {hi})")
    return int(v)


class NotifAction:
    """The answer to one call, made by one of the class methods (immutable)."""

    __slots__ = ("kind", "args", "_source")

    def __init__(self, kind: str, *args: Any, source: Any = None) -> None:
        self.kind = kind
        self.args = args
        self._source = source  # inject_fd_send's file object: open until the answer is set

    @classmethod
    def continue_(cls) -> "NotifAction":
        """The call runs in the kernel as the built-in chain let it (the kernel's own checks
        and Landlock still apply). Never decide on memory read from the child and then
        continue: the child may change it before the kernel reads it."""
        return cls("continue")

    @classmethod
    def errno(cls, v: int) -> "NotifAction":
        """The call fails with errno @v (1 to 4095), e.g. errno.EACCES."""
        return cls("errno", _int("NotifAction.errno", v, 1, 4095))

    @classmethod
    def returns(cls, v: int) -> "NotifAction":
        """The call returns @v (a signed 64-bit integer) without running."""
        return cls("return", _int("NotifAction.returns", v, *_INT64))

    @classmethod
    def hold(cls) -> "NotifAction":
        """The call waits: handle() is called again for it on a worker thread, off the loop,
        with ctx.held True, and answers there. An exception in a deferred call."""
        return cls("hold")

    @classmethod
    def kill(cls, sig: int = _signal.SIGKILL, pgid: int = 0) -> "NotifAction":
        """Send @sig (1 to 64) to the calling process, or to process group @pgid when it is
        not 0 (it must be one of the sandbox's groups, else the handler's exception); the
        call fails with EINTR should the process survive."""
        return cls("kill", _int("NotifAction.kill: sig", sig, 1, 64),
                   _int("NotifAction.kill: pgid", pgid, 0, _INT32[1]))

    @classmethod
    def inject_fd_send(cls, srcfd: Any, newfd_flags: int = 0) -> "NotifAction":
        """A copy of descriptor @srcfd (an int or an object with fileno(); the library
        duplicates it when handle() returns, and the caller keeps and closes its own) is
        installed in the child, and its number is the call's result. @newfd_flags: 0 or
        os.O_CLOEXEC. A file object given is kept (open) by the action, so
        ``inject_fd_send(open(path))`` is safe."""
        fd = srcfd if isinstance(srcfd, int) and not isinstance(srcfd, bool) else None
        if fd is None and hasattr(srcfd, "fileno"):
            fd = srcfd.fileno()
        if fd is None:
            raise TypeError(f"NotifAction.inject_fd_send: {srcfd!r} is not a descriptor")
        _int("NotifAction.inject_fd_send: srcfd", fd, 0, _INT32[1])
        if newfd_flags not in (0, os.O_CLOEXEC):
            raise ValueError(f"NotifAction.inject_fd_send: newfd_flags {newfd_flags!r}: "
                             "0 or os.O_CLOEXEC")
        return cls("inject_fd", fd, newfd_flags, source=None if fd is srcfd else srcfd)

    @classmethod
    def inject_bytes(cls, data: bytes, *, seal: bool = True,
                     cloexec: bool = True) -> "NotifAction":
        """@data (copied) in a new memfd installed in the child, whose number is the call's
        result: sealed against writes and resizing unless seal=False, close-on-exec unless
        cloexec=False. An answer to an open, say: the child reads a file that exists nowhere
        on disk."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"NotifAction.inject_bytes: {type(data).__name__} is not bytes")
        flags = (0 if seal else _ffi.INJECT_WRITABLE) | (0 if cloexec else _ffi.INJECT_NO_CLOEXEC)
        return cls("inject_bytes", bytes(data), flags)

    def __repr__(self) -> str:
        name = {"continue": "continue_", "return": "returns", "inject_fd": "inject_fd_send"}
        return f"NotifAction.{name.get(self.kind, self.kind)}{self.args!r}".replace(",)", ")")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NotifAction):
            return NotImplemented
        return (self.kind, self.args) == (other.kind, other.args)

    def __hash__(self) -> int:
        return hash((self.kind, self.args))

    def _apply(self, action: int) -> int:
        """Set this answer on the sandlock_action_t @action: 0 or -errno."""
        f = _ffi.late
        if self.kind == "inject_bytes":
            data, flags = self.args
            buf = ctypes.create_string_buffer(data, len(data))
            return int(f("sandlock_action_inject_bytes")(action, buf, len(data), flags))
        fn = {"continue": "sandlock_action_continue", "errno": "sandlock_action_errno",
              "return": "sandlock_action_return", "inject_fd": "sandlock_action_inject_fd",
              "hold": "sandlock_action_hold", "kill": "sandlock_action_kill"}[self.kind]
        return int(f(fn)(action, *self.args))


class HandlerCtx:
    """One trapped call: the notification as the kernel gave it, and the calling process's
    memory. Valid only while handle() runs (for an async handle, until its coroutine ends):
    used later, every method raises RuntimeError.

    ``pid`` is the calling thread (this side's pid namespace), ``args`` the six raw syscall
    arguments (unsigned 64-bit integers), ``arch`` the AUDIT_ARCH_* value, ``flags`` the
    library's (``held``: the held call's second call)."""

    __slots__ = ("id", "pid", "flags", "syscall_nr", "arch", "instruction_pointer", "args",
                 "_mem", "_lock")

    def __init__(self, n: _ffi.Notif, mem: int | None) -> None:
        self.id = int(n.id)
        self.pid = int(n.pid)
        self.flags = int(n.flags)
        self.syscall_nr = int(n.syscall_nr)
        self.arch = int(n.arch)
        self.instruction_pointer = int(n.instruction_pointer)
        self.args = tuple(int(a) for a in n.args)
        self._mem = mem
        self._lock = threading.Lock()

    @property
    def held(self) -> bool:
        """True in the second call of a call held by NotifAction.hold()."""
        return bool(self.flags & NOTIF_HELD)

    def _close(self) -> None:
        with self._lock:
            self._mem = None

    def _io(self, what: str, fn: str, addr: int, buf: Any, size: int) -> int:
        _int(f"HandlerCtx.{what}: addr", addr, 0, (1 << 64) - 1)
        with self._lock:
            if self._mem is None:
                raise RuntimeError(f"HandlerCtx.{what}: the call is over (a HandlerCtx is "
                                   "valid only while handle() runs)")
            rc = int(_ffi.late(fn)(self._mem, addr, buf, size))
        if rc < 0:
            raise OSError(-rc, f"HandlerCtx.{what}({addr:#x}): {os.strerror(-rc)}")
        return rc

    def read_cstr(self, addr: int, max_len: int = 4096, *, raw: bool = False) -> str | bytes:
        """The NUL-terminated string at @addr, at most @max_len bytes (without the NUL): a str
        (os.fsdecode: undecodable bytes kept as surrogates), or the bytes with raw=True.
        OSError: EFAULT (unreadable), ENAMETOOLONG (longer), ESRCH (the caller is gone)."""
        _int("HandlerCtx.read_cstr: max_len", max_len, 0, 1 << 30)
        buf = ctypes.create_string_buffer(max_len + 1)
        n = self._io("read_cstr", "sandlock_mem_read_cstr", addr, buf, max_len + 1)
        return buf.raw[:n] if raw else os.fsdecode(buf.raw[:n])

    def read_path(self, addr: int) -> str:
        """The path at @addr (a str, as read_cstr), at most PATH_MAX bytes.

        An observation, not a security boundary: another thread of the child may change the
        memory once it is read, so what the kernel then uses may differ. Answer with an errno,
        a value or an injected descriptor on what you read, never continue on it; enforce
        what must hold with the policy's grants."""
        return self.read_cstr(addr, _PATH_MAX - 1)  # type: ignore[return-value]

    def read(self, addr: int, n: int) -> bytes:
        """@n bytes at @addr, checked to belong to this call's process. OSError: EFAULT (a
        part is unmapped), ESRCH."""
        _int("HandlerCtx.read: n", n, 0, 1 << 30)
        buf = ctypes.create_string_buffer(n)
        got = self._io("read", "sandlock_mem_read", addr, buf, n)
        return buf.raw[:got]

    def write(self, addr: int, data: bytes) -> int:
        """Write @data at @addr in the calling process; the bytes written. OSError: EFAULT
        (a part is unmapped or not writable), ESRCH."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"HandlerCtx.write: {type(data).__name__} is not bytes")
        data = bytes(data)
        buf = ctypes.create_string_buffer(data, len(data))
        return self._io("write", "sandlock_mem_write", addr, buf, len(data))

    def __repr__(self) -> str:
        return (f"HandlerCtx(id={self.id}, pid={self.pid}, syscall_nr={self.syscall_nr}, "
                f"args={tuple(hex(a) for a in self.args)})")


class Handler:
    """User code for a syscall: subclass it and override handle().

    ``on_exception`` (an ExceptionPolicy) says how a call is answered when handle() fails;
    ``deferred`` whether handle() runs on a worker thread, off the supervisor's loop (None:
    off the loop for an ``async def handle``, on it otherwise; False with an async handle is
    refused). Both are class attributes a subclass may set, and keyword arguments of the
    constructor that set them for one instance."""

    on_exception: ExceptionPolicy = ExceptionPolicy.KILL
    deferred: bool | None = None

    def __init__(self, *, on_exception: ExceptionPolicy | int | None = None,
                 deferred: bool | None = None) -> None:
        if on_exception is not None:
            self.on_exception = ExceptionPolicy(on_exception)
        if deferred is not None:
            self.deferred = deferred

    def handle(self, ctx: HandlerCtx) -> NotifAction:
        """The answer to the call @ctx (may be ``async def``)."""
        raise NotImplementedError(f"{type(self).__name__} does not override handle()")


Registration = tuple[Union[str, int], Handler]

# The handlers the library holds, by the key passed as their user_data: each is removed by the
# library's drop (the last reference gone: the end of the run and our own free), so a Python
# handler stays reachable exactly as long as C may call it. The two C entry points are made
# once and live as long as the module.
_bindings: dict[int, "_Binding"] = {}
_bindings_lock = threading.Lock()
_keys = itertools.count(1)
# The sandboxes whose handler the calling thread is inside (a handler may run another sandbox).
_inside = threading.local()


class _Binding:
    def __init__(self, handler: Handler, run: "Registrations") -> None:
        self.handler = handler
        self.run = run

    def call(self, n: _ffi.Notif, mem: int | None, action: int) -> int:
        ctx = HandlerCtx(n, mem)
        owners = _inside.__dict__.setdefault("owners", [])
        owners.append(self.run.owner)
        try:
            out = self.handler.handle(ctx)
            if inspect.iscoroutine(out):
                out = asyncio.run(out)
            if not isinstance(out, NotifAction):
                raise TypeError(f"{type(self.handler).__name__}.handle() answered {out!r}, "
                                "not a NotifAction")
            rc = out._apply(action)
            if rc < 0:
                raise SandboxRuntimeError(f"{out!r}: {os.strerror(-rc)}")
            return 0
        except BaseException as e:  # noqa: B036 - nothing may cross the C frame
            self.run.record(e)
            return 1
        finally:
            owners.pop()
            ctx._close()


def refuse_inside(owner: object, what: str) -> None:
    """RuntimeError when the calling thread is inside one of @owner's (a Sandbox's) handlers:
    its run ends, and another starts, only once they have returned, so waiting there for it
    would never return."""
    if any(o is owner for o in getattr(_inside, "owners", ())):
        raise RuntimeError(f"{what}: called in one of this sandbox's extension handlers (the "
                           "sandbox's run ends, and another starts, only once they return)")


def _call(notif: Any, mem: int | None, action: int | None, user_data: int | None) -> int:
    try:
        b = _bindings.get(user_data or 0)
        return 1 if b is None else b.call(notif.contents, mem, action or 0)
    except BaseException:  # noqa: B036 - an exception cannot cross the C frame
        return 1


def _drop(user_data: int | None) -> None:
    with _bindings_lock:
        _bindings.pop(user_data or 0, None)


_C_CALL = _ffi.HANDLER_FN(_call)
_C_DROP = _ffi.HANDLER_DROP_FN(_drop)


def _is_async(h: Handler) -> bool:
    return inspect.iscoroutinefunction(h.handle)


class Registrations:
    """One run's handlers as the library's registrations (sandlock_handler_reg_t[]), and the
    first exception any of them raised."""

    def __init__(self, entries: Sequence[Registration], owner: object = None) -> None:
        if isinstance(entries, (str, bytes)) or not isinstance(entries, Sequence):
            raise TypeError("handlers: a list of (syscall name or number, Handler) pairs")
        self.error: BaseException | None = None
        self.owner = owner  # the Sandbox that runs them (refuse_inside)
        self._lock = threading.Lock()
        self._ptrs: list[int] = []
        self._names: list[bytes] = []  # the names the array points into, until the spawn
        self.array = (_ffi.HandlerReg * max(1, len(entries)))()
        self.count = len(entries)
        try:
            for i, entry in enumerate(entries):
                self._add(i, entry)
        except BaseException:
            self.free()
            raise

    def _add(self, i: int, entry: Any) -> None:
        if not isinstance(entry, tuple) or len(entry) != 2:
            raise TypeError(f"handlers[{i}]: {entry!r} is not a (syscall, Handler) pair")
        what, h = entry
        if not isinstance(h, Handler):
            raise TypeError(f"handlers[{i}]: {h!r} is not a Handler")
        reg = self.array[i]
        if isinstance(what, str):
            if not what or "\0" in what:
                raise ValueError(f"handlers[{i}]: {what!r} is not a syscall name")
            name = what.encode()
            self._names.append(name)
            reg.syscall = name
        else:
            reg.nr = _int(f"handlers[{i}]: syscall number", what, *_INT32)
        try:
            policy = ExceptionPolicy(h.on_exception)
        except ValueError:
            raise ValueError(f"handlers[{i}]: on_exception {h.on_exception!r} is not an "
                             "ExceptionPolicy (KILL, DENY_EPERM, CONTINUE, DENY_EIO)") from None
        deferred = h.deferred
        if deferred is None:
            deferred = _is_async(h)
        elif not isinstance(deferred, bool):
            raise TypeError(f"handlers[{i}]: deferred {deferred!r} is not True, False or None")
        elif not deferred and _is_async(h):
            raise ValueError(f"handlers[{i}]: an async handle() runs off the loop "
                             "(deferred=False is not possible)")
        L = _ffi.late
        key = next(_keys)
        with _bindings_lock:
            _bindings[key] = _Binding(h, self)
        ptr = L("sandlock_handler_new")(_C_CALL, key, _C_DROP, int(policy))
        if not ptr:
            _drop(key)
            raise MemoryError("sandlock_handler_new: out of memory")
        self._ptrs.append(ptr)
        if deferred:
            rc = L("sandlock_handler_set_deferred")(ptr, 1)
            if rc < 0:
                raise SandboxRuntimeError(f"sandlock_handler_set_deferred: {os.strerror(-rc)}")
        reg.handler = ptr

    def attach(self, opts: _ffi.SpawnOpts) -> None:
        """Put the registrations in @opts (read during sandlock_spawn() only)."""
        if self.count:
            opts.handlers = ctypes.cast(self.array, ctypes.POINTER(_ffi.HandlerReg))
            opts.n_handlers = self.count

    def record(self, e: BaseException) -> None:
        with self._lock:
            if self.error is None:
                self.error = e

    def free(self) -> None:
        """Drop our references to the handlers (a sandbox that uses them holds its own)."""
        ptrs, self._ptrs = self._ptrs, []
        for p in ptrs:
            _ffi.late("sandlock_handler_free")(p)


__all__ = ["Handler", "HandlerCtx", "NotifAction", "ExceptionPolicy", "NOTIF_HELD"]
