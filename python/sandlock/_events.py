# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the supervisor decided, as Python values: Event (one decision, handed to on_event) and
Denial (one entry of a run's denial table, Result.denials).

An event's strings belong to the library only while its callback runs, so each is copied into
an Event there; str(event) and event.to_json() hand the copy back to the library's own
formatters, so the SDK prints exactly the line the CLI prints.
"""

from __future__ import annotations

import os
import socket
import threading
from ctypes import byref, c_uint64, c_void_p
from dataclasses import dataclass
from typing import Any, Callable

from . import _ffi
from .exceptions import SandboxRuntimeError

VERDICTS = {_ffi.VERDICT_ALLOW: "allow", _ffi.VERDICT_DENY: "deny", _ffi.VERDICT_AUDIT: "audit"}
_VERDICT_OF = {v: k for k, v in VERDICTS.items()}
_STRINGS = ("syscall", "category", "comm", "path", "access", "host", "protocol", "reason",
            "hint")


def _text(b: bytes | None, fs: bool = False) -> str | None:
    if b is None:
        return None
    return os.fsdecode(b) if fs else b.decode(errors="replace")


def _family(n: int) -> int:
    """AF_INET as socket.AF_INET (an IntEnum that prints its name); 0 when none."""
    if n == 0:
        return 0
    try:
        return socket.AddressFamily(n)
    except ValueError:
        return n


@dataclass(frozen=True)
class Event:
    """One decision of the supervisor.

    ``verdict`` is "allow", "deny" or "audit" (allowed, and flagged); ``error`` the errno a
    denial answered (errno.EACCES, ...), else 0; ``judged`` says the kernel made the denial
    (Landlock, the seccomp blocklist) and the supervisor judged it for the log, which is a
    diagnosis that may race a rename, not a decision; ``first`` says it is the first denial of
    its object and reason in the run. The object is ``path`` and ``access`` (a file, a UNIX
    socket), ``host``, ``port``, ``family`` and ``protocol`` (a network peer or a bind), or
    ``amount`` (the bytes a memory denial asked for, a process denial's limit); None or 0 where
    the event has none. A denial's ``reason`` names the rule or the missing grant ("no read
    grant covers /etc") and ``hint`` what would allow it, as sandlock run's flags ("add -r
    /etc"; None when nothing would).

    ``str(event)`` is sandlock's line for it (``denied openat("/etc/x", O_RDONLY) by pid 12
    (cat): no read grant covers /etc; add -r /etc``; an allowed one starts "allowed", an
    audited one "audited", with no reason), ``to_json()`` its JSON object on one line."""

    seq: int
    syscall: str
    category: str
    pid: int
    ppid: int = 0
    comm: str = ""
    verdict: str = "deny"
    error: int = 0
    judged: bool = False
    first: bool = False
    path: str | None = None
    access: str | None = None
    host: str | None = None
    port: int = 0
    family: int = 0
    protocol: str | None = None
    amount: int = 0
    reason: str | None = None
    hint: str | None = None

    @classmethod
    def _values(cls, c: _ffi.EventStruct) -> dict[str, Any]:
        """The fields of @c, copied (its strings are the library's only for now)."""
        return dict(
            seq=int(c.seq), syscall=_text(c.syscall) or "", category=_text(c.category) or "",
            pid=int(c.pid), ppid=int(c.ppid), comm=_text(c.comm, fs=True) or "",
            verdict=VERDICTS.get(c.verdict, str(c.verdict)), error=int(c.error),
            judged=bool(c.judged), first=bool(c.first), path=_text(c.path, fs=True),
            access=_text(c.access), host=_text(c.host, fs=True), port=int(c.port),
            family=_family(int(c.family)), protocol=_text(c.protocol), amount=int(c.amount),
            reason=_text(c.reason), hint=_text(c.hint))

    @classmethod
    def from_c(cls, c: _ffi.EventStruct) -> "Event":
        return cls(**cls._values(c))

    def _struct(self, verdict: int | None = None) -> tuple[_ffi.EventStruct, list[bytes]]:
        """This event as a sandlock_event_t, and the bytes its pointers point into (to keep
        alive while the library reads it)."""
        c = _ffi.EventStruct()
        keep = []
        for name in _STRINGS:
            v = getattr(self, name)
            if v is not None:
                b = os.fsencode(v)
                keep.append(b)
                setattr(c, name, b)
        c.seq, c.pid, c.ppid = self.seq, self.pid, self.ppid
        c.verdict = _VERDICT_OF.get(self.verdict, _ffi.VERDICT_DENY) if verdict is None \
            else verdict
        c.error, c.judged, c.first = self.error, int(self.judged), int(self.first)
        c.port, c.family, c.amount = self.port, int(self.family), self.amount
        return c, keep

    @staticmethod
    def _format(name: str, c: _ffi.EventStruct) -> str:
        out = c_void_p()
        rc = _ffi.late(name)(byref(c), byref(out))
        if rc < 0:
            raise ValueError(f"{name}: {os.strerror(-rc)}")
        return _ffi.take_string(out)

    def __str__(self) -> str:
        if self.verdict == "deny":
            c, _keep = self._struct()
            return self._format("sandlock_event_format", c)
        # The library formats denials only: the same line with an empty reason, less its ": ".
        c, _keep = self._struct(_ffi.VERDICT_DENY)
        c.reason, c.hint = b"", None
        line = self._format("sandlock_event_format", c).removesuffix(": ")
        word = "allowed" if self.verdict == "allow" else "audited"
        return word + line.removeprefix("denied")

    def to_json(self) -> str:
        """The event as one JSON object on one line, as sandlock run --log-events writes it."""
        c, _keep = self._struct()
        return self._format("sandlock_event_format_json", c)


@dataclass(frozen=True)
class Denial(Event):
    """One entry of a run's denial table (Result.denials): an Event, the first of its object
    and reason, and ``count``, how many times the run was denied that."""

    count: int = 1


def read_denials(p: c_void_p) -> tuple[list[Denial], int]:
    """The denial table of the ended sandbox @p, and how many events it dropped.
    SandlockError if the library lacks the accessors."""
    count_of = _ffi.late("sandlock_sandbox_denial_count")
    denial = _ffi.late("sandlock_sandbox_denial")
    dropped = int(_ffi.late("sandlock_sandbox_events_dropped")(p))
    out = []
    c, n = _ffi.EventStruct(), c_uint64()
    for i in range(int(count_of(p))):
        rc = denial(p, i, byref(c), byref(n))
        if rc < 0:
            raise SandboxRuntimeError(f"reading denial {i}: {os.strerror(-rc)}")
        out.append(Denial(**Event._values(c), count=int(n.value)))
    return out, dropped


class Listener:
    """One run's on_event: the C callback handed to the library (kept alive with this object,
    which the run's Handle holds until the sandbox is released), and the first exception the
    Python callback raised (the run goes on; Result.event_error reports it)."""

    def __init__(self, fn: Callable[[Event], Any]) -> None:
        self.fn = fn
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._thread: int | None = None  # the thread inside the callback, while it is
        self.c_fn = _ffi.EVENT_FN(self._deliver)

    def _deliver(self, ev: Any, _user_data: Any) -> None:
        # On the library's events thread, one event at a time. Nothing may escape into C.
        self._thread = threading.get_ident()
        try:
            self.fn(Event.from_c(ev.contents))
        except BaseException as e:  # noqa: B036 - an exception cannot cross the C frame
            with self._lock:
                if self.error is None:
                    self.error = e
        finally:
            self._thread = None

    def check_not_inside(self, what: str) -> None:
        """RuntimeError when the calling thread is inside this callback: the sandbox's end
        waits for the callback to return, so waiting for that end there would never return."""
        if self._thread == threading.get_ident():
            raise RuntimeError(f"{what}: on_event cannot wait for its own sandbox "
                               "(the sandbox ends once the callback has returned)")


def flags(on_event: Callable[[Event], Any] | None, log_denials: bool) -> int:
    """The SANDLOCK_EVENTS_* flags of a run: log_denials asks for the kernel's denials (judged);
    on_event alone gets every decision, with log_denials only the denials."""
    if log_denials:
        return _ffi.EVENTS_DENIALS
    if on_event is not None:
        return _ffi.EVENTS_DENIALS | _ffi.EVENTS_ALLOWED
    return 0


def check(on_event: Any, log_denials: Any) -> None:
    """TypeError naming the field for a value Sandbox cannot use."""
    if on_event is not None and not callable(on_event):
        raise TypeError(f"on_event: {on_event!r} is not callable (a function given each Event)")
    if not isinstance(log_denials, bool):
        raise TypeError(f"log_denials: {log_denials!r} is not True or False")


def listen(opts: _ffi.SpawnOpts, on_event: Callable[[Event], Any] | None,
           log_denials: bool) -> Listener | None:
    """Set @opts' events and callback for a run; the Listener the Handle must keep."""
    check(on_event, log_denials)
    opts.events = flags(on_event, log_denials)
    if on_event is None:
        return None
    listener = Listener(on_event)
    opts.on_event = listener.c_fn
    return listener

