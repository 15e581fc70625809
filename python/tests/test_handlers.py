# SPDX-License-Identifier: LGPL-2.1-or-later
"""Extension handlers through the SDK (sandlock.handler, Sandbox.run_with_handlers): each action
as the child sees it, the exception policies, async and held calls, the child's memory through
HandlerCtx, and the rules that keep a handler from undoing the policy (the built-in chain runs
first; blocklisted, extra-denied and unknown syscalls are refused at registration). Each
behaviour has its negative control: the same child without the handler."""

import errno
import fcntl
import os
import re
import signal
import socket
import threading

import pytest

from conftest import PY
from sandlock import _ffi
from test_sdk_bindings import HEADER, c_layout, py_layout
from sandlock import (
    ExceptionPolicy,
    Handler,
    HandlerCtx,
    NotifAction,
    PolicyError,
    SandboxRuntimeError,
)

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")


def py(code, *args):
    return [PY, "-c", code, *map(str, args)]


GETPPID = "import os; print(os.getppid())"
# chdir to argv[1]: "ok" or the errno number.
CHDIR = """import os, sys
try:
    os.chdir(sys.argv[1])
    print("ok")
except OSError as e:
    print(e.errno)
"""
# open argv[1] and print what it holds, and its seals (F_GET_SEALS; -1 when it has none).
OPEN = """import fcntl, os, sys
try:
    fd = os.open(sys.argv[1], os.O_RDONLY)
except OSError as e:
    print("errno", e.errno)
    raise SystemExit
try:
    seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
except OSError:
    seals = -1
flags = fcntl.fcntl(fd, fcntl.F_GETFD)
print(os.read(fd, 100).decode().strip(), seals, flags & fcntl.FD_CLOEXEC)
"""
CONNECT = """import socket, sys
print(socket.socket().connect_ex(("127.0.0.1", int(sys.argv[1]))))
"""
VIRTUAL = "/nonexistent-sandlock/virtual.txt"


class Answer(Handler):
    """Answers every call with @action, counting the calls."""

    def __init__(self, action, **kw):
        super().__init__(**kw)
        self.action = action
        self.calls = 0

    def handle(self, ctx):
        self.calls += 1
        return self.action


class Raises(Handler):
    def handle(self, ctx):
        raise ValueError("handler failed on purpose")


class PathRecorder(Handler):
    """chdir: records the path (read_path) and its bytes (read_cstr raw), answers EXDEV."""

    def __init__(self):
        super().__init__()
        self.paths = []

    def handle(self, ctx):
        self.paths.append((ctx.read_path(ctx.args[0]), ctx.read_cstr(ctx.args[0], raw=True)))
        return NotifAction.errno(errno.EXDEV)


class Virtual(Handler):
    """openat of VIRTUAL answered by @action; every other openat continues (Landlock and the
    kernel still decide those)."""

    def __init__(self, action):
        super().__init__()
        self.action = action

    def handle(self, ctx):
        if ctx.read_path(ctx.args[1]) == VIRTUAL:
            return self.action
        return NotifAction.continue_()


# ---- actions seen by the child ---------------------------------------------------------------


def test_returns_is_the_value_the_child_gets(sandboxes):
    sb = sandboxes()
    r = sb.run(py(GETPPID))
    assert r.success and r.stdout.strip() != b"4242"  # control: the real parent
    h = Answer(NotifAction.returns(4242))
    r = sb.run_with_handlers(py(GETPPID), [("getppid", h)])
    assert (r.success, r.stdout, r.handler_error) == (True, b"4242\n", None)
    assert h.calls == 1


def test_errno_is_the_childs_error(sandboxes):
    sb = sandboxes()
    assert sb.run(py(CHDIR, "/usr")).stdout == b"ok\n"  # control
    r = sb.run_with_handlers(py(CHDIR, "/usr"), [("chdir", Answer(NotifAction.errno(errno.EXDEV)))])
    assert (r.success, r.stdout) == (True, f"{errno.EXDEV}\n".encode())


def test_handler_denial_is_in_the_denials(sandboxes):
    sb = sandboxes()
    assert sb.run(py(CHDIR, "/usr")).denials == []  # control
    r = sb.run_with_handlers(py(CHDIR, "/usr"), [("chdir", Answer(NotifAction.errno(errno.EXDEV)))])
    [d] = r.denials
    assert (d.syscall, d.verdict, d.error, d.reason, d.hint, d.count) == (
        "chdir", "deny", errno.EXDEV, "handler", None, 1)


def test_registration_by_number(sandboxes):
    nr = {"x86_64": 110, "aarch64": 173}.get(os.uname().machine)  # getppid
    if nr is None:
        pytest.skip(f"no getppid number known for {os.uname().machine}")
    r = sandboxes().run_with_handlers(py(GETPPID), [(nr, Answer(NotifAction.returns(7)))])
    assert r.stdout == b"7\n"


def test_read_path_of_the_argument(sandboxes):
    h = PathRecorder()
    r = sandboxes().run_with_handlers(py(CHDIR, "/usr/share"), [("chdir", h)])
    assert r.stdout == f"{errno.EXDEV}\n".encode()
    assert h.paths == [("/usr/share", b"/usr/share")]


def test_write_into_the_callers_memory(sandboxes):
    class FakeCwd(Handler):  # getcwd(buf, size): the string and its length with the NUL
        def handle(self, ctx):
            assert ctx.write(ctx.args[0], b"/fake/cwd\0") == 10
            return NotifAction.returns(10)

    code = "import os; print(os.getcwd())"
    sb = sandboxes(cwd="/usr")
    assert sb.run(py(code)).stdout == b"/usr\n"  # control
    r = sb.run_with_handlers(py(code), [("getcwd", FakeCwd())])
    assert (r.stdout, r.handler_error) == (b"/fake/cwd\n", None)


def test_unreadable_address_is_efault(sandboxes):
    got = []

    class Probe(Handler):
        def handle(self, ctx):
            for f in (lambda: ctx.read(0, 8), lambda: ctx.read_cstr(8),
                      lambda: ctx.write(0, b"x"),
                      lambda: ctx.read_cstr(ctx.args[0], 2)):  # "/usr" is longer
                try:
                    f()
                except OSError as e:
                    got.append(e.errno)
            return NotifAction.errno(errno.EXDEV)

    r = sandboxes().run_with_handlers(py(CHDIR, "/usr"), [("chdir", Probe())])
    assert r.stdout == f"{errno.EXDEV}\n".encode()
    assert got == [errno.EFAULT, errno.EFAULT, errno.EFAULT, errno.ENAMETOOLONG]


def test_context_is_dead_after_the_call(sandboxes):
    kept = []

    class Keep(Handler):
        def handle(self, ctx):
            kept.append((ctx, ctx.read(ctx.args[0], 4)))
            return NotifAction.continue_()

    r = sandboxes().run_with_handlers(py(CHDIR, "/usr"), [("chdir", Keep())])
    assert r.stdout == b"ok\n"
    [(ctx, first)] = kept
    assert first == b"/usr"
    assert isinstance(ctx, HandlerCtx) and ctx.args[0] != 0
    with pytest.raises(RuntimeError, match="the call is over"):
        ctx.read(ctx.args[0], 4)
    with pytest.raises(RuntimeError, match="the call is over"):
        ctx.read_cstr(ctx.args[0])


def test_inject_bytes_is_what_the_child_reads(sandboxes):
    sb = sandboxes()
    assert sb.run(py(OPEN, VIRTUAL)).stdout == f"errno {errno.ENOENT}\n".encode()  # control
    r = sb.run_with_handlers(py(OPEN, VIRTUAL),
                             [("openat", Virtual(NotifAction.inject_bytes(b"from the handler")))])
    seals = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
    assert (r.success, r.stdout, r.handler_error) == (
        True, f"from the handler {seals} 1\n".encode(), None)
    # Writable and inherited, when asked.
    r = sb.run_with_handlers(py(OPEN, VIRTUAL), [("openat", Virtual(
        NotifAction.inject_bytes(b"open", seal=False, cloexec=False)))])
    assert r.stdout.split()[0::2] == [b"open", b"0"]
    assert int(r.stdout.split()[1]) & fcntl.F_SEAL_WRITE == 0


def test_inject_fd_send_hands_the_child_our_descriptor(sandboxes, tmp_path):
    f = tmp_path / "ours.txt"  # not granted to the sandbox
    f.write_text("our descriptor\n")
    sb = sandboxes()
    assert sb.run(py(OPEN, f)).stdout == f"errno {errno.EACCES}\n".encode()  # control
    with open(f) as ours:
        r = sb.run_with_handlers(py(OPEN, VIRTUAL), [("openat", Virtual(
            NotifAction.inject_fd_send(ours, os.O_CLOEXEC)))])
    assert (r.success, r.stdout) == (True, b"our descriptor -1 1\n")

    class Fresh(Virtual):  # a file object made in handle(), referenced by the action only
        def handle(self, ctx):
            if ctx.read_path(ctx.args[1]) == VIRTUAL:
                return NotifAction.inject_fd_send(open(f))
            return NotifAction.continue_()

    r = sb.run_with_handlers(py(OPEN, VIRTUAL), [("openat", Fresh(None))])
    assert (r.success, r.stdout, r.handler_error) == (True, b"our descriptor -1 0\n", None)


def test_kill_action_signals_the_caller(sandboxes):
    r = sandboxes().run_with_handlers(py(GETPPID),
                                      [("getppid", Answer(NotifAction.kill(signal.SIGTERM)))])
    assert (r.success, r.signal, r.exit_code, r.stdout) == (False, signal.SIGTERM, 143, b"")


def test_hold_answers_from_the_worker(sandboxes):
    seen = []

    class Slow(Handler):
        def handle(self, ctx):
            seen.append((ctx.held, threading.get_ident()))
            return NotifAction.returns(99) if ctx.held else NotifAction.hold()

    r = sandboxes().run_with_handlers(py(GETPPID), [("getppid", Slow())])
    assert r.stdout == b"99\n"
    assert [held for held, _ in seen] == [False, True]
    assert seen[0][1] != seen[1][1]  # the loop, then a worker


def test_async_handler_delivers(sandboxes):
    import asyncio

    threads = {}

    class Async(Handler):
        async def handle(self, ctx):
            await asyncio.sleep(0.01)
            threads["async"] = threading.get_ident()
            return NotifAction.returns(31337)

    class Sync(Handler):
        def handle(self, ctx):
            threads["sync"] = threading.get_ident()
            return NotifAction.continue_()

    r = sandboxes().run_with_handlers(py("import os; os.chdir('/usr'); print(os.getppid())"),
                                      [("getppid", Async()), ("chdir", Sync())])
    assert (r.success, r.stdout, r.handler_error) == (True, b"31337\n", None)
    assert threads["async"] != threads["sync"]  # a worker, not the supervisor's loop


# argv[1] threads chdir at once: "ok" and "EAGAIN" counts, and the total.
MANY = """import errno, os, sys, threading
n = int(sys.argv[1])
b = threading.Barrier(n)
out = []
def go():
    b.wait()
    try:
        os.chdir("/usr")
        out.append("ok")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
ts = [threading.Thread(target=go) for _ in range(n)]
[t.start() for t in ts]
[t.join() for t in ts]
print(out.count("ok"), out.count("EAGAIN"), len(out))
"""


def test_deferred_calls_are_bounded(sandboxes):
    release = threading.Event()

    class Blocks(Handler):
        deferred = True

        def handle(self, ctx):
            release.wait(10)
            return NotifAction.continue_()

    def run(threads):
        release.clear()
        timer = threading.Timer(2.0, release.set)
        timer.start()
        try:
            r = sandboxes().run_with_handlers(py(MANY, threads), [("chdir", Blocks())],
                                              timeout=30)
        finally:
            release.set()
            timer.cancel()
        return tuple(map(int, r.stdout.split()))

    ok, eagain, n = run(70)
    assert n == 70 and ok + eagain == 70
    assert ok <= 64 and eagain >= 6  # at most 64 in flight; the rest: EAGAIN
    assert run(60) == (60, 0, 60)  # control: under the bound, every call waits its turn


def test_async_handler_cannot_be_on_the_loop(sandboxes):
    class Async(Handler):
        async def handle(self, ctx):
            return NotifAction.continue_()

    with pytest.raises(ValueError, match="async handle"):
        sandboxes().run_with_handlers(["true"], [("getppid", Async(deferred=False))])


# ---- exceptions ------------------------------------------------------------------------------


def test_raising_handler_kills_by_default(sandboxes):
    sb = sandboxes()
    ok = sb.run_with_handlers(py(GETPPID), [("getppid", Answer(NotifAction.returns(1)))])
    assert ok.success  # control: the same child, a handler that answers
    r = sb.run_with_handlers(py(GETPPID), [("getppid", Raises())])
    assert (r.success, r.signal, r.exit_code, r.stdout) == (False, signal.SIGKILL, 137, b"")
    assert isinstance(r.handler_error, ValueError)
    assert str(r.handler_error) == "handler failed on purpose"
    assert r.handler_error.__traceback__ is not None


@pytest.mark.parametrize("policy,out", [
    (ExceptionPolicy.DENY_EPERM, f"{errno.EPERM}\n"),
    (ExceptionPolicy.DENY_EIO, f"{errno.EIO}\n"),
    (ExceptionPolicy.CONTINUE, "ok\n"),
])
def test_exception_policies(sandboxes, policy, out):
    h = Raises(on_exception=policy)
    r = sandboxes().run_with_handlers(py(CHDIR, "/usr"), [("chdir", h)])
    assert (r.success, r.stdout.decode()) == (True, out)
    assert isinstance(r.handler_error, ValueError)


def test_exception_policy_as_class_attribute(sandboxes):
    class Eio(Raises):
        on_exception = ExceptionPolicy.DENY_EIO

    r = sandboxes().run_with_handlers(py(CHDIR, "/usr"), [("chdir", Eio())])
    assert r.stdout == f"{errno.EIO}\n".encode()


def test_answer_that_is_not_an_action_is_an_exception(sandboxes):
    h = Answer(None, on_exception=ExceptionPolicy.DENY_EIO)
    r = sandboxes().run_with_handlers(py(CHDIR, "/usr"), [("chdir", h)])
    assert r.stdout == f"{errno.EIO}\n".encode()
    assert isinstance(r.handler_error, TypeError)
    assert "not a NotifAction" in str(r.handler_error)


def test_kill_of_a_foreign_group_is_an_exception(sandboxes):
    # Above the largest pid_max (2^22): a group that cannot exist, let alone be the sandbox's.
    h = Answer(NotifAction.kill(signal.SIGTERM, pgid=(1 << 22) + 12345),
               on_exception=ExceptionPolicy.DENY_EPERM)
    r = sandboxes().run_with_handlers(py(CHDIR, "/usr"), [("chdir", h)])
    assert r.stdout == f"{errno.EPERM}\n".encode()
    assert isinstance(r.handler_error, SandboxRuntimeError)


@pytest.mark.parametrize("call", ["wait", "close", "run"])
def test_handler_cannot_wait_for_its_own_sandbox(sandboxes, call):
    sb = sandboxes()

    class Waits(Handler):
        on_exception = ExceptionPolicy.DENY_EIO

        def handle(self, ctx):
            getattr(sb, call)(*([["true"]] if call == "run" else []))
            return NotifAction.continue_()

    r = sb.run_with_handlers(py(CHDIR, "/usr"), [("chdir", Waits())])
    assert r.stdout == f"{errno.EIO}\n".encode()
    assert isinstance(r.handler_error, RuntimeError)
    assert str(r.handler_error).startswith(f"{call}: called in one of this sandbox's extension")


def test_handler_may_run_another_sandbox(sandboxes):
    other = sandboxes()

    class Asks(Handler):
        deferred = True

        def handle(self, ctx):
            return NotifAction.returns(40 + other.run(["sh", "-c", "exit 2"]).exit_code)

    r = sandboxes().run_with_handlers(py(GETPPID), [("getppid", Asks())])
    assert (r.stdout, r.handler_error) == (b"42\n", None)


# ---- a handler never undoes the policy -------------------------------------------------------


@pytest.fixture
def listener():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    yield s.getsockname()[1]
    s.close()


def test_handler_cannot_undo_a_builtin_denial(sandboxes, listener):
    h = Answer(NotifAction.continue_())
    r = sandboxes().run_with_handlers(py(CONNECT, listener), [("connect", h)])
    assert r.stdout == f"{errno.EACCES}\n".encode()  # no rule: still refused
    # Control: with a rule the same handler's continue lets it through.
    r = sandboxes(net_allow=[f"127.0.0.1:{listener}"]).run_with_handlers(
        py(CONNECT, listener), [("connect", Answer(NotifAction.continue_()))])
    assert r.stdout == b"0\n"


BLOCKED = ("handlers[{}]: {} is blocked by the policy (the default blocklist or "
           "extra_deny_syscalls): a handler on it would never run")


def refused(sb, regs):
    """The message of the PolicyError run_with_handlers raises for @regs (nothing runs)."""
    with pytest.raises(PolicyError) as e:
        sb.run_with_handlers(["true"], regs)
    return str(e.value)


def cont():
    return Answer(NotifAction.continue_())


def test_handler_on_blocklisted_syscall_refused(sandboxes):
    assert refused(sandboxes(), [("mount", cont())]) == BLOCKED.format(0, "mount")
    assert refused(sandboxes(), [("getppid", cont()), ("ptrace", cont())]) == \
        BLOCKED.format(1, "ptrace")
    # Control: a group of the blocklist allowed again takes handlers.
    r = sandboxes(extra_allow_syscalls=["sysv_ipc"]).run_with_handlers(
        py("import os; print(os.getppid())"), [("shmget", cont()), ("getppid", cont())])
    assert r.success, r.stderr


def test_handler_on_extra_denied_syscall_refused(sandboxes):
    sb = sandboxes()
    r = sb.run_with_handlers(py(CHDIR, "/usr"), [("chdir", cont())])
    assert r.stdout == b"ok\n"  # control
    assert refused(sandboxes(extra_deny_syscalls=["chdir"]), [("chdir", cont())]) == \
        BLOCKED.format(0, "chdir")


def test_unknown_syscall_refused(sandboxes):
    assert refused(sandboxes(), [("nosuchcall", cont())]) == \
        'handlers[0]: unknown syscall "nosuchcall" (a name of this architecture, as in syscalls(2))'
    assert refused(sandboxes(), [(99999, cont())]) == \
        "handlers[0]: unknown syscall number 99999 on this architecture"


def test_handler_with_no_supervisor_refused(sandboxes):
    assert refused(sandboxes(no_supervisor=True), [("getppid", cont())]) == \
        "handlers: extension handlers run in the supervisor, and the policy has no_supervisor set"


# ---- the SDK's own checks --------------------------------------------------------------------


@pytest.mark.pure
def test_action_arguments_are_checked():
    for bad in (lambda: NotifAction.errno(0), lambda: NotifAction.errno(4096),
                lambda: NotifAction.kill(0), lambda: NotifAction.kill(65),
                lambda: NotifAction.kill(9, -1), lambda: NotifAction.returns(1 << 63),
                lambda: NotifAction.inject_fd_send(-1),
                lambda: NotifAction.inject_fd_send(3, os.O_NONBLOCK)):
        with pytest.raises(ValueError):
            bad()
    with pytest.raises(TypeError):
        NotifAction.errno("EPERM")
    with pytest.raises(TypeError):
        NotifAction.inject_bytes("text")
    assert NotifAction.errno(1) == NotifAction.errno(errno.EPERM)
    assert repr(NotifAction.returns(5)) == "NotifAction.returns(5)"
    assert int(ExceptionPolicy.DENY_EIO) == 3 and ExceptionPolicy(0) is ExceptionPolicy.KILL


def test_registrations_are_checked(sandboxes):
    sb = sandboxes()
    with pytest.raises(TypeError, match="is not a Handler"):
        sb.run_with_handlers(["true"], [("getppid", object())])
    with pytest.raises(TypeError, match="pair"):
        sb.run_with_handlers(["true"], ["getppid"])
    with pytest.raises(ValueError):
        Raises(on_exception=7)

    class Bad(Raises):
        on_exception = 7

    with pytest.raises(ValueError, match=r"^handlers\[0\]: on_exception 7 is not an "):
        sb.run_with_handlers(["true"], [("getppid", Bad())])


@pytest.mark.pure
def test_handler_structs_match_c(tmp_path):
    for struct, ctype in ((_ffi.Notif, "sandlock_notif_t"),
                          (_ffi.HandlerReg, "sandlock_handler_reg_t")):
        fields = [name for name, _ in struct._fields_]
        assert py_layout(struct) == c_layout(tmp_path, ctype, fields)


@pytest.mark.pure
def test_handler_bindings_and_constants_are_the_headers():
    text = HEADER.read_text()
    declared = set(re.findall(r"\b(sandlock_[a-z0-9_]+)\(", text))
    assert set(_ffi._HANDLER_SIGNATURES) - declared == set()
    consts = {k: eval(re.sub(r"(\d)u\b", r"\1", v)) for k, v in re.findall(
        r"^#define SANDLOCK_((?:EXCEPTION|INJECT|NOTIF)_[A-Z_]+)\s+(.+?)\s*(?:/\*.*)?$", text,
        re.M)}
    assert consts == {
        "EXCEPTION_KILL": 0, "EXCEPTION_DENY_EPERM": 1, "EXCEPTION_CONTINUE": 2,
        "EXCEPTION_DENY_EIO": 3, "INJECT_WRITABLE": _ffi.INJECT_WRITABLE,
        "INJECT_NO_CLOEXEC": _ffi.INJECT_NO_CLOEXEC, "NOTIF_HELD": _ffi.NOTIF_HELD}
    assert [p.value for p in ExceptionPolicy] == [0, 1, 2, 3]
