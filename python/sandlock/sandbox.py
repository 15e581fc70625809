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

from . import _core, _fields, _ffi, _process
from ._core import DryRunResult, Result
from ._process import Process, StdioMode
from ._fields import BranchAction, Protection
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

_RUNTIME = {"runtime": True}


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

    # [config]
    http_ca: str | None = None
    http_key: str | None = None
    http_inject_ca: Sequence[str] = ()
    http_ca_out: str | None = None
    fs_storage: str | None = None
    workdir: str | None = None
    # [determinism]
    random_seed: int | None = None
    time_start: _dt.datetime | str | None = None
    deterministic_dirs: bool = False
    no_randomize_memory: bool = False
    # [program] (exec and args are the argument of run() / cmd())
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    uid: int | None = None
    gid: int | None = None
    clean_env: bool = False
    no_coredump: bool = False
    no_huge_pages: bool = False
    no_supervisor: bool = False
    # [filesystem]
    fs_readable: Sequence[str] = ()
    fs_writable: Sequence[str] = ()
    fs_denied: Sequence[str] = ()
    chroot: str | None = None
    fs_mount: Mapping[str, str] = field(default_factory=dict)
    fs_mount_ro: Mapping[str, str] = field(default_factory=dict)
    on_exit: BranchAction = BranchAction.COMMIT
    on_error: BranchAction = BranchAction.ABORT
    private_tmp: bool = False  # a TMPDIR of its own, removed when it ends
    # [network]
    net_allow: Sequence[str] = ()
    net_deny: Sequence[str] = ()
    net_allow_bind: Sequence[int | str] = ()
    net_deny_bind: Sequence[int | str] = ()
    port_remap: bool = False
    # [http] (http_ports () is [80], and 443 with http_ca)
    http_ports: Sequence[int] = ()
    http_allow: Sequence[str] = ()
    http_deny: Sequence[str] = ()
    # [syscalls]
    extra_allow_syscalls: Sequence[str] = ()
    extra_deny_syscalls: Sequence[str] = ()
    # [limits]
    max_memory: str | int | None = None
    max_processes: int | None = None
    max_open_files: int | None = None
    max_cpu: int | None = None
    max_disk: str | int | None = None
    gpu_devices: Sequence[int] | None = None
    cpu_cores: Sequence[int] | None = None
    num_cpus: int | None = None
    # protection opt-out
    allow_degraded: Sequence[Protection] = ()
    disable: Sequence[Protection] = ()
    # runtime kwargs (not policy)
    name: str | None = field(default=None, metadata=_RUNTIME)
    control_socket: bool = field(default=True, metadata=_RUNTIME)
    credentials: Sequence[str] = field(default=(), metadata=_RUNTIME)
    http_auth: Sequence[str] = field(default=(), metadata=_RUNTIME)
    image: Any = field(default=None, metadata=_RUNTIME)
    policy_fn: Callable[..., Any] | None = field(default=None, metadata=_RUNTIME)
    init_fn: Callable[[], Any] | None = field(default=None, metadata=_RUNTIME)
    work_fn: Callable[[int], Any] | None = field(default=None, metadata=_RUNTIME)
    notif_policy: Any = field(default=None, metadata=_RUNTIME)

    _handle: _core.Handle | None = field(default=None, init=False, repr=False)
    _parked: bool = field(default=False, init=False, repr=False)
    _waited: _core.Handle | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _command: list[str] | None = field(default=None, init=False, repr=False)
    _last_name: str | None = field(default=None, init=False, repr=False)
    _pending: _core.Handle | None = field(default=None, init=False, repr=False)
    _upper: str | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        with _core.Policy(self._document()):
            pass  # the core validates every field now; SandboxError names the bad one

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
               waited: bool = False, overrides: Mapping[str, Any] | None = None) -> _core.Handle:
        """Start @cmd. @waited: the caller waits for it itself (run()): from the start no
        other thread may release it or wait for it."""
        argv = self._command_of(cmd)
        with self._lock:
            self._check_idle()
            opts, _keep = _core.stdio_opts(*stdio, timeout=timeout, flags=flags)
            with self._policy(argv, overrides=overrides) as policy:
                h = _core.Handle.spawn(policy, argv, opts, timeout)
            self._handle = h
            self._parked = bool(flags & _ffi.SPAWN_PARKED)
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
                            stderr=r.stderr, changes=r.changes, error=r.error)

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
        with self._lock:
            h = self._handle
            if h is None or h is self._waited:
                raise RuntimeError("no process to wait for in this sandbox")
            if self._parked_now():
                raise RuntimeError("the child is parked: call start() before wait()")
            self._waited = h  # ours: another thread's spawn() must not release it
        return self._wait_for(h)

    def _wait_for(self, h: _core.Handle) -> Result:
        """Wait for @h, which this thread has claimed (self._waited), and release it, unless
        its branch is pending: then it is kept (the branch lives in it) until commit/abort."""
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
        with self._lock:
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
