# SPDX-License-Identifier: LGPL-2.1-or-later
"""Sandbox: every policy field of the profile schema, and the handle of one running process."""

from __future__ import annotations

import datetime as _dt
import errno
import os
import re
from fractions import Fraction
import sys
import threading
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from . import _core, _events, _fields, _ffi, _process
from . import handler as _handler
from ._core import DryRunResult, Result
from ._events import Event
from ._process import Process, StdioMode
from ._fields import BranchAction, Protection
from . import policy_fn as _policy_fn
from .policy_fn import PolicyContext, SyscallEvent
from .exceptions import (
    BranchError,
    ChildError,
    ConfinementError,
    LandlockUnavailableError,
    PolicyError,
    SandboxError,
)

if TYPE_CHECKING:
    from .pipeline import Stage


@_fields.schema
@dataclass(kw_only=True, eq=False)
class Sandbox:
    """A sandbox policy and the handle of the one process it runs at a time.

    Every field is optional; an unset field means no restriction beyond the default seccomp
    blocklist, except the filesystem and the network, which are denied unless granted. The
    policy is handed to the core as one JSON document, so a bad value raises SandboxError with
    the core's message when the Sandbox is made, and a field whose enforcement is not built
    yet raises SandboxError ("not supported yet: <field>") when a process starts.

    With a workdir the command reads and writes a copy-on-write view of it, settled when it
    ends: on_exit after exit status 0, else on_error. DEFER holds the branch (``pending``)
    until commit() or abort(); until then the sandbox starts nothing. Leaving a with block,
    close() or garbage collection leaves an undecided branch on disk, as KEEP does."""

    # Every field names its place in the schema, its default and its doc here, once: the
    # document's tables and help(Sandbox) are read from them (_fields.schema). [program] exec
    # and args are not fields: they are the command given to run() / cmd().
    http_ca: str | None = _fields.policy(
        "config", "http_ca",
        doc="PEM CA certificate (a path) for HTTPS interception; set together with http_key, "
        "and port 443 is intercepted too. None: HTTPS is not intercepted (unless "
        "http_inject_ca).")
    http_key: str | None = _fields.policy(
        "config", "http_key",
        doc="PEM private key (a path) of http_ca; set together with it.")
    http_inject_ca: Sequence[str] = _fields.policy(
        "config", "http_inject_ca", (), to_doc=_fields.as_list,
        doc="Trust bundles (paths) served with the interception CA's certificate appended when "
        "the sandbox opens them (the host's files never change); without http_ca, a CA is "
        "made, its key in memory only. Needs http_allow or http_deny.")
    http_ca_out: str | None = _fields.policy(
        "config", "http_ca_out",
        doc="Path the interception CA's certificate (PEM, never its key) is written to before "
        "the command starts; needs http_allow or http_deny.")
    fs_storage: str | None = _fields.policy(
        "config", "fs_storage",
        doc="Directory (a path) holding workdir's copy-on-write branches; needs workdir. "
        "None: the per-user store root /var/tmp/sandlock-<euid>.")
    workdir: str | None = _fields.policy(
        "config", "workdir",
        doc="Directory (a path) whose changes land in a copy-on-write branch, settled by "
        "on_exit or on_error when the run ends; not the working directory (that is cwd). "
        "None: no branch.")
    random_seed: int | None = _fields.policy(
        "determinism", "random_seed",
        doc="Seed (an integer >= 0): getrandom and reads of /dev/urandom and /dev/random give "
        "the same bytes in every run with the same seed. None: real randomness.")
    time_start: _dt.datetime | str | None = _fields.policy(
        "determinism", "time_start", to_doc=_fields.time,
        doc="Instant the wall clock starts at (an aware datetime, RFC 3339 text with an offset, "
        "or Unix seconds); it advances at real speed, monotonic clocks stay real. None: the "
        "real clock.")
    deterministic_dirs: bool = _fields.policy(
        "determinism", "deterministic_dirs", False,
        doc="Every directory listed in name order (bytewise). False: the filesystem's order.")
    no_randomize_memory: bool = _fields.policy(
        "determinism", "no_randomize_memory", False,
        doc="Address space layout randomization off.")
    env: Mapping[str, str] = _fields.policy(
        "program", "env", factory=dict, to_doc=_fields.env_map,
        doc="Variables (name -> value) set in the command's environment, after clean_env.")
    cwd: str | None = _fields.policy(
        "program", "cwd",
        doc="The command's working directory (a path). None: the directory sandlock runs in.")
    uid: int | None = _fields.policy(
        "program", "uid",
        doc="User id (0 to 4294967294) the command runs as, in a user namespace of its own "
        "mapped to the caller's ids (0: fake root, no host privilege); set together with gid. "
        "None: the caller's.")
    gid: int | None = _fields.policy(
        "program", "gid",
        doc="Group id (0 to 4294967294) that goes with uid; set together with it. "
        "None: the caller's.")
    clean_env: bool = _fields.policy(
        "program", "clean_env", False,
        doc="Start the environment from PATH, HOME, USER, TERM and LANG only, not the caller's "
        "whole environment.")
    no_coredump: bool = _fields.policy(
        "program", "no_coredump", False, doc="No core dumps.")
    no_huge_pages: bool = _fields.policy(
        "program", "no_huge_pages", False, doc="Transparent huge pages off.")
    no_supervisor: bool = _fields.policy(
        "program", "no_supervisor", False,
        doc="Landlock and the kernel-only seccomp filter, without the supervisor (what a "
        "sandlock inside a supervised sandlock must use); the fields that need it are refused.")
    fs_readable: Sequence[str] = _fields.policy(
        "filesystem", "read", (), to_doc=_fields.as_list,
        doc="Paths granted read and execute (directories recursively); a missing path is an "
        "error naming it, a relative one is relative to the current directory.")
    fs_writable: Sequence[str] = _fields.policy(
        "filesystem", "write", (), to_doc=_fields.as_list,
        doc="Paths granted read and write, and create, remove, truncate, rename and device "
        "ioctls beneath them.")
    fs_denied: Sequence[str] = _fields.policy(
        "filesystem", "deny", (), to_doc=_fields.as_list,
        doc="Paths neither read nor written, under any name and by any call, even inside a "
        "read or a write grant.")
    chroot: str | None = _fields.policy(
        "filesystem", "chroot",
        doc="Directory (a path) the command sees as /, by an emulated chroot. Not supported yet.")
    fs_mount: Mapping[str, str] = _fields.mount(
        ro=False,
        doc="Host directories mapped into the chroot, virtual path -> host path (neither holds "
        "':'). Not supported yet.")
    fs_mount_ro: Mapping[str, str] = _fields.mount(
        ro=True, doc="As fs_mount, read-only. Not supported yet.")
    on_exit: BranchAction = _fields.policy(
        "filesystem", "on_exit", BranchAction.COMMIT, to_doc=_fields.action,
        from_doc=BranchAction,
        doc="What happens to workdir's branch after exit status 0 (a BranchAction or its value): "
        "COMMIT merges it, ABORT removes it, KEEP leaves it on disk, DEFER holds it (pending).")
    on_error: BranchAction = _fields.policy(
        "filesystem", "on_error", BranchAction.ABORT, to_doc=_fields.action,
        from_doc=BranchAction,
        doc="The same as on_exit, after any other end, a timeout included.")
    private_tmp: bool = _fields.policy(
        "filesystem", "private_tmp", False,
        doc="A private writable directory (0700, in the per-user store root), set as TMPDIR "
        "unless env sets it, and removed when the sandbox ends.")
    net_allow: Sequence[str] = _fields.policy(
        "network", "allow", (), to_doc=_fields.as_list,
        doc="Outbound rules \"[scheme://]host[:ports]\" (tcp, udp, icmp; no scheme: TCP and "
        "UDP) to a hostname, an IP, a CIDR or *. Empty: no outbound connection or datagram, "
        "unless net_deny is set.")
    net_deny: Sequence[str] = _fields.policy(
        "network", "deny", (), to_doc=_fields.as_list,
        doc="Outbound destinations refused (IPs and CIDRs); deny wins over net_allow, and "
        "alone it allows every other TCP and UDP destination.")
    net_allow_bind: Sequence[int | str] = _fields.policy(
        "network", "allow_bind", (), to_doc=_fields.ports,
        doc="TCP ports the sandbox may bind: ports (int), ranges (\"9000-9005\") or [\"*\"]; "
        "a listed 0 allows only bind(0). Empty: no TCP bind, unless net_deny_bind is set.")
    net_deny_bind: Sequence[int | str] = _fields.policy(
        "network", "deny_bind", (), to_doc=_fields.ports,
        doc="TCP ports the sandbox may not bind, as in net_allow_bind; alone, every other port "
        "may be bound; with net_allow_bind, deny wins.")
    port_remap: bool = _fields.policy(
        "network", "port_remap", False,
        doc="A TCP port space of the sandbox's own: a port held elsewhere is bound to another, "
        "and the sandbox sees the one it asked for (ports() lists them).")
    http_ports: Sequence[int] = _fields.policy(
        "http", "ports", (), to_doc=_fields.as_list,
        doc="TCP ports (1 to 65535) whose connections go through the HTTP proxy. Empty: port "
        "80; 443 is added with http_ca or http_inject_ca.")
    http_allow: Sequence[str] = _fields.policy(
        "http", "allow", (), to_doc=_fields.as_list,
        doc="Requests the HTTP proxy lets through, \"METHOD host[:port]/path\" (\"*\" for "
        "any method or host, \"*.example.com\", a trailing \"*\" on the path); with any rule, "
        "a request must match one.")
    http_deny: Sequence[str] = _fields.policy(
        "http", "deny", (), to_doc=_fields.as_list,
        doc="Requests the HTTP proxy refuses (403), as in http_allow, checked before it.")
    extra_allow_syscalls: Sequence[str] = _fields.policy(
        "syscalls", "extra_allow", (), to_doc=_fields.as_list,
        doc="Groups of the default seccomp blocklist allowed again (\"sysv_ipc\").")
    extra_deny_syscalls: Sequence[str] = _fields.policy(
        "syscalls", "extra_deny", (), to_doc=_fields.as_list,
        doc="Syscalls or groups refused (EPERM) on top of the default blocklist.")
    max_memory: str | int | None = _fields.policy(
        "limits", "memory", to_doc=_fields.size,
        doc="Memory the sandbox's processes use together, in bytes (int) or \"512M\", \"1G\", "
        "\"100K\"; the process whose allocation would cross it is killed. None: no limit.")
    max_processes: int | None = _fields.policy(
        "limits", "processes",
        doc="Processes at once (1 to 4294967295; threads do not count); a fork beyond fails "
        "with EAGAIN. None: no limit.")
    max_open_files: int | None = _fields.policy(
        "limits", "open_files",
        doc="RLIMIT_NOFILE of the command, clamped to sandlock's own. None: sandlock's own.")
    max_cpu: int | None = _fields.policy(
        "limits", "cpu",
        doc="CPU percent (1 to 100): the sandbox runs this many ms of each 100 ms period and is "
        "stopped for the rest. None: no throttle.")
    max_disk: str | int | None = _fields.policy(
        "limits", "disk", to_doc=_fields.size,
        doc="Quota of workdir's branch, in bytes (int) or \"512M\", \"1G\"; a write beyond it "
        "fails with ENOSPC. None: no quota.")
    gpu_devices: Sequence[int] | None = _fields.policy(
        "limits", "gpu_devices", to_doc=_fields.as_list,
        doc="GPUs reachable (numbers 0 to 1023; [] every one), with CUDA_VISIBLE_DEVICES and "
        "ROCR_VISIBLE_DEVICES set to them. None: no GPU device node.")
    cpu_cores: Sequence[int] | None = _fields.policy(
        "limits", "cpu_cores", to_doc=_fields.as_list,
        doc="CPU numbers the sandbox is pinned to. None: not pinned.")
    num_cpus: int | None = _fields.policy(
        "limits", "num_cpus",
        doc="CPUs the sandbox sees (1 to 4096) in /proc/cpuinfo, nproc and os.cpu_count(). "
        "None: the host's.")
    allow_degraded: Sequence[Protection] = _fields.policy(
        "protections", "allow_degraded", (), to_doc=_fields.protections,
        from_doc=_fields.protection_list,
        doc="Protections (members, numbers or names such as \"fs-refer\"; \"all\") enforced "
        "only where the kernel has them. Empty: each is strict, its absence an error.")
    disable: Sequence[Protection] = _fields.policy(
        "protections", "disable", (), to_doc=_fields.protections,
        from_doc=_fields.protection_list,
        doc="Protections never enforced, even where the kernel has them (members, numbers or "
        "names).")
    name: str | None = _fields.runtime(
        doc="The sandbox's name in sandlock ps, inspect and kill, and its hostname inside. "
        "None: sandbox-<pid>.")
    control_socket: bool = _fields.runtime(
        True,
        doc="Whether the sandbox has a runtime directory and control socket; without one, "
        "sandlock ps, inspect and kill cannot see it.")
    credentials: Sequence[str] = _fields.runtime(
        (), to_doc=_fields.as_list,
        doc="Secrets held by the supervisor for http_auth: \"NAME=env:VAR\" (VAR is removed "
        "from the child's environment), \"NAME=file:PATH\" or \"NAME=fd:N\" (one trailing "
        "newline stripped). The child never sees them.")
    http_auth: Sequence[str] = _fields.runtime(
        (), to_doc=_fields.as_list,
        doc="A credential attached to matching requests in the HTTP proxy: \"METHOD HOST/PATH "
        "AUTH NAME [replace|add-only]\", AUTH one of bearer, basic:USER, header:NAME, "
        "apikey:NAME, query:PARAM; needs http_allow or http_deny.")
    on_event: Callable[[Event], Any] | None = _fields.python_field(
        doc="Called with an Event per decision, allowed ones too (path calls trapped as for "
        "log_denials; with log_denials, denials only), in order, on a thread of the library's; "
        "what it raises ends nothing: Result.event_error keeps the first. None: none.")
    log_denials: bool = _fields.python_field(
        False,
        doc="Also the denials the kernel makes alone (Landlock, the seccomp blocklist), judged "
        "against the grants: in Result.denials, and to on_event. Costs a round trip per "
        "path call. False: the supervisor's own denials only.")
    policy_fn: Callable[[SyscallEvent, PolicyContext], Any] | None = _fields.python_field(
        doc="fn(event, ctx) deciding each supervised event, on a thread of its own: None/False/0 "
        "allow, True/-1 deny (EPERM), an errno denies with it, \"audit\"/-2 allows and flags; "
        "anything else or an exception denies (Result.policy_error). None: none.")
    policy_fn_timeout: float = _fields.python_field(
        5.0,
        doc="Seconds (at most 600) a held call waits for policy_fn's verdict; past it the call "
        "is denied (EPERM).")
    image: Any = _fields.python_only(
        doc="A container image as the root filesystem. Not supported yet.")
    init_fn: Callable[[], Any] | None = _fields.python_only(
        doc="A callback run once in the template process before the copy-on-write forks. "
        "Not supported yet.")
    work_fn: Callable[[int], Any] | None = _fields.python_only(
        doc="A callback run in each copy-on-write fork, given its number. Not supported yet.")
    notif_policy: Any = _fields.python_only(
        doc="The seccomp user-notification policy of the /proc and /sys views, set by hand. "
        "Not supported yet.")

    _handle: _core.Handle | None = field(default=None, init=False, repr=False)
    _parked: bool = field(default=False, init=False, repr=False)
    _waited: _core.Handle | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _command: list[str] | None = field(default=None, init=False, repr=False)
    _last_name: str | None = field(default=None, init=False, repr=False)
    _pending: _core.Handle | None = field(default=None, init=False, repr=False)
    _upper: str | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        _events.check(self.on_event, self.log_denials)
        with _core.Policy(self._document()):
            pass  # the core validates every field now; SandboxError names the bad one
        _policy_fn.check(self.policy_fn, self.policy_fn_timeout)

    # ---- policy ---------------------------------------------------------------------------

    def _values(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}

    def _document(self, command: list[str] | None = None,
                  extra_env: Mapping[str, str] | None = None,
                  overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        values = {**self._values(), **(overrides or {})}
        if extra_env:
            values["env"] = {**dict(values["env"] or {}), **extra_env}
        return _fields.render(values, command)

    def _unsupported_python_fields(self) -> list[str]:
        return [n for n in _fields.PYTHON_ONLY_UNSUPPORTED if getattr(self, n) is not None]

    def _policy(self, command: list[str] | None = None,
                extra_env: Mapping[str, str] | None = None,
                overrides: Mapping[str, Any] | None = None) -> _core.Policy:
        """The loaded policy for a start (every start comes here: refused while a branch is
        pending). Python-only fields not built yet join the core's "not supported yet" list,
        so one message names them all."""
        if self._pending is not None:
            raise SandboxError("a branch is pending in this sandbox: commit() or abort() it "
                               "before starting another process")
        policy = _core.Policy(self._document(command, extra_env, overrides))
        extra = self._unsupported_python_fields()
        if extra:
            rc, msg = policy.check()
            policy.__exit__()
            prefix = "not supported yet: "
            if rc < 0 and not msg.startswith(prefix):
                raise PolicyError(msg)
            core = msg[len(prefix):].split(", ") if rc < 0 else []
            raise PolicyError(prefix + ", ".join(core + extra))
        if self.policy_fn is not None:
            try:
                policy.policy_run = _policy_fn.install(policy.ptr, self.policy_fn,
                                                       self.policy_fn_timeout)
            except BaseException:
                policy.__exit__()
                raise
        return policy

    def to_json(self) -> dict[str, Any]:
        """The policy as the core holds it (canonical values, defaults left out)."""
        with _core.Policy(self._document()) as p:
            return p.dump_json()

    # ---- starting -------------------------------------------------------------------------

    def _parked_now(self) -> bool:
        """Whether a created child still waits for start() (killed, it has ended instead)."""
        h = self._handle
        if self._parked and (h is None or h.ended()):
            self._parked = False
        return self._parked

    def _check_idle(self) -> None:
        h = self._handle
        if h is not None and (h is self._waited or self._parked_now() or not h.ended()):
            raise RuntimeError("a process is already running in this sandbox")
        if h is not None:  # ended but never waited for: its outcome is dropped
            self._handle = None
            h.free()

    def _command_of(self, cmd: Sequence[str] | None) -> list[str]:
        if cmd is None:
            if self._command is None:
                raise TypeError("no command given (and no [program] exec in the profile)")
            return list(self._command)
        if isinstance(cmd, (str, bytes)):
            raise TypeError("cmd is a list of strings (command and arguments), not a string")
        argv = []
        for a in cmd:
            if isinstance(a, (str, bytes, os.PathLike)):
                argv.append(os.fsdecode(a))
            elif isinstance(a, int) and not isinstance(a, bool):
                argv.append(str(a))  # run(["echo", i]) as code written for the Rust sandlock's SDK writes it
            else:
                raise TypeError(f"cmd: {a!r} is not a string")
        if not argv:
            raise TypeError("cmd is empty")
        return argv

    def _spawn(self, cmd: Sequence[str] | None, *, flags: int = 0, timeout: float | None = None,
               stdio: tuple[Any, Any, Any] = (None, "pipe", "pipe"),
               waited: bool = False, overrides: Mapping[str, Any] | None = None,
               handlers: _handler.Registrations | None = None) -> _core.Handle:
        """Start @cmd. @waited: the caller waits for it itself (run()): from the start no
        other thread may release it or wait for it. @handlers: extension handlers in the
        supervisor's chain."""
        argv = self._command_of(cmd)
        _handler.refuse_inside(self, "run")
        with self._lock:
            self._check_idle()
            opts, _keep = _core.stdio_opts(*stdio, timeout=timeout, flags=flags)
            listener = _events.listen(opts, self.on_event, self.log_denials)
            if handlers is not None:
                handlers.attach(opts)
            with self._policy(argv, overrides=overrides) as policy:
                h = _core.Handle.spawn(policy, argv, opts, timeout, listener)
            self._handle = h
            self._parked = bool(flags & _ffi.SPAWN_PARKED)
            h.policy_run = policy.policy_run
            self._last_name = h.name
            if waited:
                self._waited = h
            return h

    def run(self, cmd: Sequence[str] | None = None, timeout: float | None = None) -> Result:
        """Run @cmd, capturing stdout and stderr (stdin is /dev/null), and return its Result.

        A timeout kills the whole sandbox and returns a failed Result whose error says so. A
        command that cannot be executed (not found, not permitted) gives a failed Result with
        exit_code 127 and the reason in error, as a shell would."""
        try:
            h = self._spawn(cmd, timeout=timeout, waited=True)
        except ChildError as e:
            return Result(success=False, exit_code=127, error=str(e))
        return self._wait_for(h)

    def run_with_handlers(self, cmd: Sequence[str] | None,
                          handlers: Sequence[tuple[str | int, _handler.Handler]], *,
                          timeout: float | None = None) -> Result:
        """Run @cmd as run() does, with extension handlers in the supervisor's chain: each of
        @handlers is a (syscall, Handler) pair, the syscall a name of this architecture
        ("openat") or a number. A handler runs after the built-in chain and only when it lets
        the call go on, so it can add restrictions but never undo one (see sandlock.handler).

        PolicyError, with the library's message, for an unknown syscall or a handler on one
        the policy blocks (the default blocklist, extra_deny_syscalls) or with no_supervisor.
        An exception raised in a handler answers its call as the handler's on_exception says;
        the Result's handler_error keeps the first one."""
        regs = _handler.Registrations(handlers, owner=self)
        try:
            h = self._spawn(cmd, timeout=timeout, waited=True, handlers=regs)
        except ChildError as e:
            return Result(success=False, exit_code=127, error=str(e), handler_error=regs.error)
        finally:
            regs.free()  # the sandbox holds its own references
        r = self._wait_for(h)
        r.handler_error = regs.error
        return r

    def dry_run(self, cmd: Sequence[str] | None = None,
                timeout: float | None = None) -> DryRunResult:
        """Run @cmd as run() does with its branch discarded whatever the exit (on_exit and
        on_error ABORT for this run): the workdir is left as it was, and the result lists the
        changes the run made. SandboxError without a workdir."""
        if self.workdir is None:
            raise SandboxError("dry_run: needs workdir (the changes are those of its branch)")
        abort = {"on_exit": BranchAction.ABORT, "on_error": BranchAction.ABORT}
        try:
            h = self._spawn(cmd, timeout=timeout, waited=True, overrides=abort)
        except ChildError as e:
            return DryRunResult(success=False, exit_code=127, error=str(e))
        r = self._wait_for(h)
        return DryRunResult(success=r.success, exit_code=r.exit_code, stdout=r.stdout,
                            stderr=r.stderr, changes=r.changes, error=r.error,
                            denials=r.denials, events_dropped=r.events_dropped,
                            event_error=r.event_error)

    def create(self, cmd: Sequence[str]) -> None:
        """Start the confined child and park it between confinement and execve; start()
        releases it. pid is known from now on."""
        self._spawn(cmd, flags=_ffi.SPAWN_PARKED)

    def start(self) -> None:
        """Let the child of create() exec its command. ChildError when the exec fails."""
        with self._lock:
            h = self._handle
            if h is None or not self._parked_now():
                raise RuntimeError("no child is parked (call create() first)")
            self._parked = False
            h.start()

    def spawn(self, cmd: Sequence[str]) -> None:
        """Start @cmd without waiting (create() + start()); stdout and stderr are captured
        for wait()."""
        self._spawn(cmd)

    def wait(self) -> Result:
        """Wait for the process to end and return its Result. Interrupted (Ctrl-C), it kills
        the process, as subprocess.run does."""
        _handler.refuse_inside(self, "wait")
        h = self._handle
        if h is not None:
            h._not_from_callback("wait")  # before another thread's claim is looked at
        with self._lock:
            h = self._handle
            if h is not None:  # also for a callback that began while spawn() held the lock
                h._not_from_callback("wait")
            if h is None or h is self._waited:
                raise RuntimeError("no process to wait for in this sandbox")
            if self._parked_now():
                raise RuntimeError("the child is parked: call start() before wait()")
            self._waited = h  # ours: another thread's spawn() must not release it
        return self._wait_for(h)

    def _wait_for(self, h: _core.Handle) -> Result:
        """Wait for @h, which this thread has claimed (self._waited), and release it, unless
        its branch is pending: then it is kept (the branch lives in it) until commit/abort."""
        h._not_from_callback("wait")
        pending = False
        try:
            h.wait()
            result = h.result()
            pending = h.pending()
            return result
        finally:
            upper = h.upper_dir()
            with self._lock:
                self._waited = None
                if self._handle is h:
                    self._handle = None
                if pending:
                    self._pending = h
                self._upper = upper
            if not pending:
                h.free()  # kills the process if the wait was interrupted (Ctrl-C)

    def run_interactive(self, cmd: Sequence[str]) -> int:
        """Run @cmd with this process's stdin, stdout and stderr, as the terminal's foreground
        process group when there is a terminal. Returns the exit code (128 + a signal; 127, with
        the reason on stderr, when the command cannot be executed)."""
        flags = _ffi.SPAWN_INTERACTIVE if _has_terminal() else 0
        try:
            h = self._spawn(cmd, flags=flags, stdio=("inherit", "inherit", "inherit"),
                            waited=True)
        except ChildError as e:
            print(f"sandlock: {e}", file=sys.stderr)  # as a shell reports it, on its stderr
            return 127
        return self._wait_for(h).exit_code

    def popen(self, cmd: Sequence[str] | None = None, stdin: StdioMode = StdioMode.INHERIT,
              stdout: StdioMode = StdioMode.INHERIT,
              stderr: StdioMode = StdioMode.INHERIT) -> Process:
        """Start @cmd and return it running, as a Process: each stream is StdioMode.INHERIT
        (this process's), PIPED (Process.stdin / .stdout / .stderr, unbuffered binary files
        the caller reads and writes while it runs) or NULL (/dev/null). The process takes
        this sandbox's one slot until Process.wait(). ChildError when the command cannot be
        executed."""
        return _process.popen(self, cmd, (stdin, stdout, stderr))

    # ---- the running process --------------------------------------------------------------

    def _running(self) -> _core.Handle:
        h = self._handle
        if h is None or (not self._parked_now() and h.ended()):
            raise RuntimeError("the sandbox is not running")
        return h

    @property
    def pid(self) -> int | None:
        """The command's pid while it runs (or is parked), else None."""
        h = self._handle
        return h.pid if h is not None and (self._parked_now() or not h.ended()) else None

    @property
    def is_running(self) -> bool:
        return self.pid is not None

    def pause(self) -> None:
        """SIGSTOP every process of the sandbox. RuntimeError if nothing runs."""
        self._running().signal("pause")

    def resume(self) -> None:
        """SIGCONT every process of the sandbox. RuntimeError if nothing runs."""
        self._running().signal("resume")

    def kill(self) -> None:
        """SIGKILL every process of the sandbox. RuntimeError if nothing runs."""
        self._running().signal("kill")
        # A parked child killed is no longer waiting for start(): wait() waits for its end
        # (which the sandbox thread records a moment later).
        self._parked = False

    def ports(self) -> dict[int, int]:
        """The port mappings {virtual_port: real_port} while the sandbox runs: only the ports
        bound elsewhere on the host than the sandbox asked (port_remap=True); {} otherwise."""
        h = self._handle
        if h is None or not self.is_running:
            return {}
        return h.ports()

    # ---- the workdir's branch --------------------------------------------------------------

    @property
    def pending(self) -> bool:
        """True between a DEFER run's end and commit() / abort()."""
        h = self._pending
        return h is not None and h.pending()

    @property
    def upper_dir(self) -> str | None:
        """The upper directory of the last run's branch while it is on disk (the new bytes of
        every added or modified file, laid out like the workdir): pending, kept (KEEP), or left
        by a commit that failed; None once committed or aborted, and without a workdir."""
        h = self._pending
        return h.upper_dir() if h is not None else self._upper

    def commit(self) -> None:
        """Merge the pending branch into the workdir (waiting up to 5 s for another sandbox
        merging into it; last writer wins against changes made since the run). It lands what
        ``changes`` listed and nothing else: a branch holding an entry the run did not make,
        or one changed since it ended, is refused (BranchError naming them, the workdir
        untouched). BranchError (BranchConflictError on ESTALE) if the merge fails: the branch
        stays pending, on disk."""
        self._decide(True)

    def abort(self) -> None:
        """Discard the pending branch. BranchError if it cannot be removed (still pending)."""
        self._decide(False)

    def _decide(self, commit: bool) -> None:
        with self._lock:
            h = self._pending
            if h is None:
                what = "commit" if commit else "abort"
                raise BranchError(f"{what}: no branch is pending")
            h.settle(commit)  # raises with the branch still pending
            self._pending = None
            self._upper = None
        h.free()

    @property
    def sandbox_name(self) -> str | None:
        """The name the last process ran under (the given one, or sandbox-<pid>)."""
        return self._last_name

    # ---- composition ----------------------------------------------------------------------

    def cmd(self, args: Sequence[str]) -> "Stage":
        """A lazy Stage running @args under this sandbox's policy, for pipelines."""
        from .pipeline import Stage

        return Stage(self, self._command_of(args))

    # ---- lifetime -------------------------------------------------------------------------

    def close(self) -> None:
        """Kill and release a process still running, and release a pending branch, which
        stays on disk undecided (as KEEP leaves it; upper_dir says where). Idempotent."""
        _handler.refuse_inside(self, "close")
        for x in (self._handle, self._pending):
            if x is not None:
                x._not_from_callback("close")
        with self._lock:
            # Again: a callback may have begun while spawn() held the lock.
            for x in (self._handle, self._pending):
                if x is not None:
                    x._not_from_callback("close")
            h, self._handle = self._handle, None
            p, self._pending = self._pending, None
            self._parked = False
            if p is not None:
                self._upper = p.upper_dir()
        for x in (h, p):
            if x is not None:
                x.free()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def _has_terminal() -> bool:
    try:
        return os.isatty(sys.stdin.fileno())
    except (AttributeError, ValueError, OSError):
        return False


def confine(sandbox: Sandbox) -> None:
    """Apply @sandbox's Landlock rules (fs_readable, fs_writable, the protections) and the IPC
    scopes to the calling process in place, with no_new_privs: irreversible. Any other field
    set is refused (ConfinementError) rather than ignored."""
    extra = sandbox._unsupported_python_fields()
    if sandbox.policy_fn is not None:
        extra.append("policy_fn")  # nothing supervises a process confined in place
    if extra:
        raise ConfinementError(f"confine: cannot apply {', '.join(extra)} in place")

    def raise_confine(rc: int, msg: str, step: str | None) -> Any:
        if rc == -errno.EOPNOTSUPP and _ffi.lib().sandlock_landlock_abi_version() < 0:
            raise LandlockUnavailableError(msg)
        raise ConfinementError(msg)

    with _core.Policy(sandbox._document()) as p:
        _ffi.call(_ffi.lib().sandlock_confine, p.ptr, raise_as=raise_confine)



# The Rust SDK's grammar: a decimal number, then K, M, G or T, blanks around either allowed.
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)\s*", re.IGNORECASE | re.ASCII)
_SHIFT = {"": 0, "K": 10, "M": 20, "G": 30, "T": 40}


def parse_memory_size(s: str | int) -> int:
    """Bytes in a size: a number of bytes, or one followed by K, M, G or T (powers of 1024,
    either case, a fraction rounded down): "512M", "1g", "1.5G", "100K", "4096". ValueError
    for anything else."""
    if isinstance(s, int) and not isinstance(s, bool):
        if s < 0:
            raise ValueError(f"size {s}: not negative")
        return s
    m = _SIZE.fullmatch(s) if isinstance(s, str) else None
    if m is None:
        raise ValueError(f"size {s!r}: a number of bytes, or one with K, M, G or T "
                         "(\"512M\", \"1G\")")
    n = int(Fraction(m.group(1)) * (1 << _SHIFT[m.group(2).upper()]))
    if n >= 1 << 64:
        raise ValueError(f"size {s!r}: too large (max {(1 << 64) - 1} bytes)")
    return n


def landlock_abi_version() -> int:
    """The running kernel's Landlock ABI version, or -1 without Landlock."""
    v = int(_ffi.lib().sandlock_landlock_abi_version())
    return v if v > 0 else -1


def min_landlock_abi() -> int:
    """The Landlock ABI a sandbox with every protection strict needs."""
    return int(_ffi.lib().sandlock_min_landlock_abi())
