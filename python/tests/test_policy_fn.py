# SPDX-License-Identifier: LGPL-2.1-or-later
"""Sandbox(policy_fn=...): a Python callback deciding the supervised events of a running
sandbox. Connects by host, network restricted mid-run and per process, a path denied by
identity, an exec denied by its argv, the verdicts (errno, audit, unrecognised, a raise, a
timeout), the limits lowered. Every case has its control (the same action without the rule
succeeds). Servers listen on 127.0.0.1 and 127.0.0.2 only."""

import ctypes
import errno
import gc
import socket
import threading
import time

import pytest

from conftest import PY, SYSTEM_READ
import sandlock
from sandlock import PolicyContext, PolicyError, Sandbox, SandboxRuntimeError, SyscallEvent
from sandlock import _ffi, policy_fn as pf

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")

NET = ["127.0.0.1", "127.0.0.2"]  # net_allow: every port of both loopback addresses

# argv[1:] are HOST:PORT; one line per connect: "HOST:PORT ERRNO" (0: connected).
CLIENT = """import socket, sys
for target in sys.argv[1:]:
    host, port = target.rsplit(":", 1)
    s = socket.socket()
    print(target, s.connect_ex((host, int(port))), flush=True)
    s.close()
"""

# Runs /bin/echo with each argv[1:] as its argument: "ARG OUTPUT" or "ARG errno N".
EXECS = """import subprocess, sys
for arg in sys.argv[1:]:
    try:
        out = subprocess.run(["/bin/echo", arg], capture_output=True).stdout.decode().strip()
        print(arg, out, flush=True)
    except OSError as e:
        print(arg, "errno", e.errno, flush=True)
"""


@pytest.fixture
def servers():
    """A listener on 127.0.0.1 and one on 127.0.0.2, on the same port: {host: "host:port"}."""
    a = socket.socket()
    a.bind(("127.0.0.1", 0))
    port = a.getsockname()[1]
    b = socket.socket()
    b.bind(("127.0.0.2", port))
    for s in (a, b):
        s.listen(16)
    yield {"127.0.0.1": f"127.0.0.1:{port}", "127.0.0.2": f"127.0.0.2:{port}"}
    a.close()
    b.close()


def lines(result):
    assert result.success, (result.stdout, result.stderr, result.policy_error)
    return [line.split(" ", 1) for line in result.stdout.decode().splitlines()]


def table(result):
    return [(k, v) for k, v in lines(result)]


def first(event, state):
    """True for the first event the callback sees (an open of the interpreter's start: the
    launch's own exec is not an event)."""
    if state.get("first") is None:
        state["first"] = event
        return True
    return False


# ---- the verdict, the event, the context, the field: no sandbox ------------------------------


@pytest.mark.pure
@pytest.mark.parametrize("value,expect", [
    (None, 0), (False, 0), (0, 0), (True, -1), (-1, -1), (1, 1), (errno.EACCES, 13),
    (4095, 4095), ("audit", -2), (-2, -2),
    ("deny", None), ("", None), (-3, None), (4096, None), (1.0, None), ([], None),
    (object(), None), ("AUDIT", None),
])
def test_verdict_conversion(value, expect):
    assert pf.verdict(value) == expect


@pytest.mark.pure
def test_event_is_frozen_with_argv_contains_and_no_path():
    e = SyscallEvent(syscall="execve", category="process", pid=5, parent_pid=1,
                     argv=("/bin/echo", "--secret-flag"), held=True)
    assert e.argv_contains("secret") and not e.argv_contains("other")
    assert not SyscallEvent("connect", "network", 5, 1, host="127.0.0.1").argv_contains("")
    with pytest.raises(AttributeError):
        e.pid = 6
    assert not hasattr(e, "path") and not hasattr(e, "path_contains")
    assert "can change after the check" in " ".join(SyscallEvent.__doc__.split())


@pytest.mark.pure
def test_context_outside_its_call_raises():
    ctx = PolicyContext(None)
    with pytest.raises(SandboxRuntimeError, match=r"^PolicyContext.deny_path: the policy_fn "
                                                  r"call this context was given to has returned"):
        ctx.deny_path("/etc/passwd")


@pytest.mark.pure
def test_context_checks_its_arguments_before_the_library():
    ctx = PolicyContext(None)
    with pytest.raises(TypeError, match=r"restrict_network: ips is a list of IP addresses"):
        ctx.restrict_network("127.0.0.1")
    with pytest.raises(PolicyError, match=r"grant_network: 'example.com': not an IP address"):
        ctx.grant_network(["example.com"])
    many = [f"127.0.{i // 250}.{i % 250 + 1}" for i in range(257)]
    with pytest.raises(PolicyError, match=r"restrict_network: 257 addresses: at most 256"):
        ctx.restrict_network(many)
    with pytest.raises(PolicyError, match=r"restrict_max_memory: size '12Q'"):
        ctx.restrict_max_memory("12Q")
    with pytest.raises(TypeError, match=r"restrict_max_processes: n is an int, not '2'"):
        ctx.restrict_max_processes("2")


def test_field_refused_when_it_cannot_work():
    with pytest.raises(PolicyError, match=r"^policy_fn: 5 is not callable"):
        Sandbox(policy_fn=5)
    for bad in (0, -1, 601, "5", True, float("nan")):
        with pytest.raises(PolicyError, match=r"^policy_fn_timeout: .*a number of seconds"):
            Sandbox(policy_fn=lambda e, c: None, policy_fn_timeout=bad)
    Sandbox(policy_fn=lambda e, c: None, policy_fn_timeout=0.5)  # control
    assert "policy_fn: Callable" in Sandbox.__doc__
    assert "policy_fn_timeout: float = 5.0" in Sandbox.__doc__


# ---- network ---------------------------------------------------------------------------------


def test_deny_a_connect_by_host(sandboxes, servers):
    seen = []

    def policy(event, ctx):
        if event.category == "network":
            seen.append((event.syscall, event.host, event.port, event.held))
            if event.host == "127.0.0.2":
                return True
        return None

    one, two = servers["127.0.0.1"], servers["127.0.0.2"]
    port = int(one.rsplit(":", 1)[1])
    args = [PY, "-c", CLIENT, one, two, one]
    # Control: the same run without the callback reaches both.
    assert table(sandboxes(net_allow=NET).run(args)) == [(one, "0"), (two, "0"), (one, "0")]
    r = sandboxes(net_allow=NET, policy_fn=policy).run(args)
    assert table(r) == [(one, "0"), (two, str(errno.EPERM)), (one, "0")]
    assert ("connect", "127.0.0.2", port, True) in seen
    assert ("connect", "127.0.0.1", port, True) in seen
    assert r.policy_error is None


def test_errno_verdict_reaches_the_child(sandboxes, servers):
    two = servers["127.0.0.2"]
    policy = lambda e, c: errno.ECONNREFUSED if e.host == "127.0.0.2" else 0  # noqa: E731
    r = sandboxes(net_allow=NET, policy_fn=policy).run([PY, "-c", CLIENT, two])
    assert table(r) == [(two, str(errno.ECONNREFUSED))]


def test_restrict_network_mid_run(sandboxes, servers):
    # The first connect to 127.0.0.2 restricts the live set to it: that connect itself goes
    # through (it is in the set), and from then on 127.0.0.1 is unreachable. The callback
    # allows every call itself; the restriction is what refuses.
    state = {"restricted": False}

    def policy(event, ctx):
        if event.syscall == "connect" and event.host == "127.0.0.2" and not state["restricted"]:
            ctx.restrict_network(["127.0.0.2"])
            state["restricted"] = True
        return None

    one, two = servers["127.0.0.1"], servers["127.0.0.2"]
    args = [PY, "-c", CLIENT, one, two, one, two]
    ok = [(one, "0"), (two, "0"), (one, "0"), (two, "0")]
    assert table(sandboxes(net_allow=NET).run(args)) == ok  # control
    r = sandboxes(net_allow=NET, policy_fn=policy).run(args)
    assert table(r) == [(one, "0"), (two, "0"), (one, str(errno.ECONNREFUSED)), (two, "0")]
    assert r.policy_error is None


def test_grant_network_never_above_the_static_ceiling(sandboxes, servers):
    # net_allow holds 127.0.0.1 only: restricted to none, then granted both addresses back,
    # the sandbox reaches 127.0.0.1 again and still not 127.0.0.2.
    state = {}

    def policy(event, ctx):
        if first(event, state):
            ctx.restrict_network([])
        elif event.syscall == "connect" and not state.get("granted"):
            state["granted"] = True
            ctx.grant_network(["127.0.0.1", "127.0.0.2"])
        return None

    one, two = servers["127.0.0.1"], servers["127.0.0.2"]
    refused = str(errno.ECONNREFUSED)
    args = [PY, "-c", CLIENT, one, two]
    assert table(sandboxes(net_allow=["127.0.0.1"]).run(args)) == [(one, "0"), (two, refused)]
    r = sandboxes(net_allow=["127.0.0.1"], policy_fn=policy).run(args)
    assert table(r) == [(one, "0"), (two, refused)]
    assert r.policy_error is None and state["granted"]
    # Control: restricted to none and never granted, 127.0.0.1 is refused too.
    r = sandboxes(net_allow=["127.0.0.1"],
                  policy_fn=lambda e, c: c.restrict_network([])).run(args)
    assert table(r) == [(one, refused), (two, refused)]


# The parent forks a child that connects twice; then the parent connects once.
FORKED = """import os, socket, sys
one, two = sys.argv[1:]
def connect(who, target):
    host, port = target.rsplit(":", 1)
    s = socket.socket()
    print(who, target, s.connect_ex((host, int(port))), flush=True)
    s.close()
pid = os.fork()
if pid == 0:
    for t in (two, one):
        connect("child", t)
    os._exit(0)
os.waitpid(pid, 0)
connect("parent", one)
"""


def test_restrict_pid_network(sandboxes, servers):
    # The child's first connect (to 127.0.0.2) sets its own set to 127.0.0.2: its later
    # connect to 127.0.0.1 is refused; its parent's is not.
    state = {"root": None, "child": None}

    def policy(event, ctx):
        if state["root"] is None:
            state["root"] = event.pid  # the first event's: the interpreter's start
        elif event.syscall == "connect" and event.pid != state["root"] and not state["child"]:
            state["child"] = event.pid
            ctx.restrict_pid_network(event.pid, ["127.0.0.2"])
        return None

    one, two = servers["127.0.0.1"], servers["127.0.0.2"]
    args = [PY, "-c", FORKED, one, two]
    refused = str(errno.ECONNREFUSED)
    got = lines(sandboxes(net_allow=NET, policy_fn=policy).run(args))
    assert got == [["child", f"{two} 0"], ["child", f"{one} {refused}"], ["parent", f"{one} 0"]]
    assert state["child"] not in (None, state["root"])
    # Control: without the callback every connect goes through.
    got = lines(sandboxes(net_allow=NET).run(args))
    assert [v.split()[1] for _, v in got] == ["0", "0", "0"]


# ---- files and execs -------------------------------------------------------------------------

READS = """import sys
for p in sys.argv[1:]:
    try:
        open(p).read()
        print(p, 0)
    except OSError as e:
        print(p, e.errno)
"""


def test_deny_path_on_a_readable_file(sandboxes, tmp_path):
    # The policy_fn denies the file on first sight (an open of the interpreter's start, before
    # the script's own opens): the child then cannot read it (EACCES), a file beside it still
    # reads. A relative path is refused for what it is, allow_path of a path never denied too.
    secret, other = tmp_path / "secret.txt", tmp_path / "other.txt"
    secret.write_text("s3cret\n")
    other.write_text("other\n")
    errors, state = [], {}

    def policy(event, ctx):
        if first(event, state):
            ctx.deny_path(str(secret))
            for call, path in ((ctx.deny_path, "relative.txt"), (ctx.allow_path, str(other))):
                try:
                    call(path)
                except PolicyError as e:
                    errors.append(str(e))
        return None

    args = [PY, "-c", READS, str(secret), str(other)]
    # Control: without the callback both read.
    assert table(sandboxes(fs_readable=[str(tmp_path)]).run(args)) == [
        (str(secret), "0"), (str(other), "0")]
    r = sandboxes(fs_readable=[str(tmp_path)], policy_fn=policy).run(args)
    assert table(r) == [(str(secret), str(errno.EACCES)), (str(other), "0")]
    assert errors == ["deny_path('relative.txt'): not an absolute path",
                      f"allow_path('{other}'): not denied by deny_path (allow_path removes only "
                      "what deny_path added)"]


def test_allow_path_restores_access(sandboxes, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret\n")
    state = {}

    def policy(event, ctx):
        if first(event, state):
            ctx.deny_path(str(secret))
            ctx.allow_path(str(secret))
        return None

    args = [PY, "-c", READS, str(secret)]
    r = sandboxes(fs_readable=[str(tmp_path)], policy_fn=policy).run(args)
    assert table(r) == [(str(secret), "0")]


def test_deny_path_of_a_missing_file(sandboxes, tmp_path):
    errors, state = [], {}

    def policy(event, ctx):
        if first(event, state):
            try:
                ctx.deny_path(str(tmp_path / "missing"))
            except PolicyError as e:
                errors.append(str(e))
        return None

    sandboxes(fs_readable=[str(tmp_path)], policy_fn=policy).run([PY, "-c", "pass"])
    assert errors == [f"deny_path('{tmp_path / 'missing'}'): no such file or directory"]


# A Landlock domain of its own (one that handles making directories, granting none), then an
# exec of /bin/true when argv[1] is "1"; the exec alone with "0".
NESTS = """import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if sys.argv[1] == "1":
    attr = (ctypes.c_uint64 * 1)(1 << 7)  # LANDLOCK_ACCESS_FS_MAKE_DIR
    fd = libc.syscall(444, attr, 8, 0)  # landlock_create_ruleset
    assert fd >= 0 and libc.syscall(446, fd, 0) == 0  # landlock_restrict_self
os.execv("/bin/true", ["/bin/true"])
"""


def test_deny_path_refused_once_a_process_has_a_domain_of_its_own(sandboxes, tmp_path):
    # The opens made for the child while a deny is in force run under the sandbox's Landlock
    # rules, not under a domain a process stacked on them: no deny once one exists.
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret\n")

    def run(nest):
        errors = []

        def policy(event, ctx):
            if event.syscall == "execve" and not errors:
                try:
                    ctx.deny_path(str(secret))
                    errors.append("denied")
                except PolicyError as e:
                    errors.append(str(e))
            return None

        sandboxes(fs_readable=[str(tmp_path)], policy_fn=policy).run([PY, "-c", NESTS, nest])
        return errors

    assert run("0") == ["denied"]  # control: no domain of its own
    assert run("1") == [f"deny_path('{secret}'): not supported yet: deny_path with a workdir, "
                        "with fs_deny beneath a writable grant, or once a process of the "
                        "sandbox made a Landlock domain of its own"]


def test_deny_an_exec_by_argv(sandboxes):
    marked = "--forbid" + "den"  # not in the script's own text, which is argv of python's exec
    seen = []

    def policy(event, ctx):
        if event.syscall in ("execve", "execveat"):
            seen.append(event.argv)
            return event.argv_contains(marked)
        return None

    args = [PY, "-c", EXECS, "fine", marked, "again"]
    got = table(sandboxes(policy_fn=policy).run(args))
    assert got == [("fine", "fine"), (marked, f"errno {errno.EPERM}"), ("again", "again")]
    assert ("/bin/echo", marked) in seen and ("/bin/echo", "fine") in seen
    # Control: without the callback the marked one runs.
    assert table(sandboxes().run(args))[1] == (marked, marked)


# EXECS from a threaded program: a thread counts the whole time; "counting" after the execs
# says it ran on after them.
THREADED_EXECS = """import subprocess, sys, threading, time
count = [0]
def counter():
    while True:
        count[0] += 1
        time.sleep(0.001)
threading.Thread(target=counter, daemon=True).start()
time.sleep(0.01)
for arg in sys.argv[1:]:
    try:
        out = subprocess.run(["/bin/echo", arg], capture_output=True).stdout.decode().strip()
        print(arg, out, flush=True)
    except OSError as e:
        print(arg, "errno", e.errno, flush=True)
before = count[0]
time.sleep(0.05)
print("counter", "counting" if count[0] > before else "stuck", flush=True)
"""


def test_exec_from_a_threaded_program_runs(sandboxes):
    got = table(sandboxes(policy_fn=lambda e, c: None).run([PY, "-c", THREADED_EXECS, "hi"]))
    assert got == [("hi", "hi"), ("counter", "counting")]


def test_exec_from_a_threaded_program_denied_by_argv(sandboxes):
    marked = "--forbid" + "den"
    policy = lambda e, c: e.argv_contains(marked)  # noqa: E731
    args = [PY, "-c", THREADED_EXECS, "fine", marked, "again"]
    got = table(sandboxes(policy_fn=policy).run(args))
    assert got == [("fine", "fine"), (marked, f"errno {errno.EPERM}"), ("again", "again"),
                   ("counter", "counting")]


@pytest.mark.parametrize("answer", ["maybe", 7.5, -3, 5000])
def test_unrecognised_verdict_denies_and_is_reported(sandboxes, answer):
    policy = lambda e, c: answer if e.argv_contains("--mark") else None  # noqa: E731
    r = sandboxes(policy_fn=policy).run([PY, "-c", EXECS, "a", "--mark", "b"])
    assert table(r) == [("a", "a"), ("--mark", f"errno {errno.EPERM}"), ("b", "b")]
    assert isinstance(r.policy_error, TypeError)
    assert str(r.policy_error).startswith(f"policy_fn returned {answer!r} for execve by pid ")


def test_raising_callback_denies_and_the_first_exception_is_kept(sandboxes):
    raised = []

    def policy(event, ctx):
        if event.argv_contains("--mark"):
            raised.append(ValueError(f"boom {len(raised)}"))
            raise raised[-1]
        return None

    r = sandboxes(policy_fn=policy).run([PY, "-c", EXECS, "--mark", "ok", "--mark"])
    eperm = f"errno {errno.EPERM}"
    assert table(r) == [("--mark", eperm), ("ok", "ok"), ("--mark", eperm)]
    assert len(raised) == 2 and r.policy_error is raised[0]
    assert r.policy_error.__traceback__ is not None


def test_audit_allows_and_is_reported(sandboxes):
    policy = lambda e, c: "audit" if e.argv_contains("--audit") else (  # noqa: E731
        -2 if e.argv_contains("--minus-two") else None)
    r = sandboxes(policy_fn=policy).run([PY, "-c", EXECS, "--audit", "plain", "--minus-two"])
    assert table(r) == [("--audit", "--audit"), ("plain", "plain"),
                        ("--minus-two", "--minus-two")]
    assert [(e.syscall, e.argv) for e in r.audited] == [
        ("execve", ("/bin/echo", "--audit")), ("execve", ("/bin/echo", "--minus-two"))]
    assert all(isinstance(e, SyscallEvent) and e.held for e in r.audited)
    assert r.policy_error is None
    # Control: nothing audited without the verdict.
    assert sandboxes(policy_fn=lambda e, c: None).run([PY, "-c", EXECS, "x"]).audited == []


SLOW = """import subprocess, time
def echo(arg):
    try:
        out = subprocess.run(["/bin/echo", arg], capture_output=True).stdout.decode().strip()
        print(arg, out, flush=True)
    except OSError as e:
        print(arg, "errno", e.errno, flush=True)
echo("--slow")
time.sleep(2.5)  # the callback is busy with --slow until 2 s after it
echo("after")
"""


def test_slow_callback_times_out_to_deny(sandboxes):
    def policy(event, ctx):
        if event.argv_contains("--slow"):
            time.sleep(2)  # past the 1 s timeout; the late "allow" is not used
        return None

    # 1 s, not less: every held call of the run (the opens of each start) has this long.
    sb = sandboxes(policy_fn=policy, policy_fn_timeout=1)
    r = sb.run([PY, "-c", SLOW], timeout=30)
    assert table(r) == [("--slow", f"errno {errno.EPERM}"), ("after", "after")]
    # Control: a timeout longer than the callback lets it answer.
    r = sandboxes(policy_fn=policy, policy_fn_timeout=5).run([PY, "-c", SLOW], timeout=30)
    assert table(r) == [("--slow", "--slow"), ("after", "after")]


# ---- limits ----------------------------------------------------------------------------------

FORKS = """import os, time
ok, err = 0, 0
for _ in range(6):
    try:
        if os.fork() == 0:
            time.sleep(0.5)
            os._exit(0)
        ok += 1
    except OSError as e:
        err = e.errno
print(ok, err)
"""

BIG = """import os
pid = os.fork()
if pid == 0:
    b = bytearray(300 << 20)
    os._exit(0)
_, st = os.waitpid(pid, 0)
print(os.WTERMSIG(st) if os.WIFSIGNALED(st) else 0)
"""


def test_restrict_max_processes(sandboxes):
    errors, state = [], {}

    def policy(event, ctx):
        if first(event, state):
            try:
                ctx.restrict_max_processes(50)  # above the static 10: refused
            except PolicyError as e:
                errors.append(str(e))
            ctx.restrict_max_processes(4)
        return None

    assert sandboxes(max_processes=10).run([PY, "-c", FORKS]).stdout == b"6 0\n"  # control
    r = sandboxes(max_processes=10, policy_fn=policy).run([PY, "-c", FORKS])
    assert r.stdout == f"3 {errno.EAGAIN}\n".encode(), (r.stdout, r.stderr)
    assert errors == ["restrict_max_processes(50): above the current limit (a limit is only "
                      "lowered)"]


def test_restrict_max_processes_without_a_static_limit(sandboxes):
    state = {}

    def policy(event, ctx):
        if first(event, state):
            ctx.restrict_max_processes(4)
        return None

    r = sandboxes(policy_fn=policy).run([PY, "-c", FORKS])
    assert r.stdout == f"3 {errno.EAGAIN}\n".encode(), (r.stdout, r.stderr)


def test_restrict_max_memory(sandboxes):
    state = {}

    def policy(event, ctx):
        if first(event, state):
            ctx.restrict_max_memory("128M")
        return None

    assert sandboxes(policy_fn=lambda e, c: None).run([PY, "-c", BIG]).stdout == b"0\n"
    r = sandboxes(policy_fn=policy).run([PY, "-c", BIG])
    assert r.stdout == b"9\n", (r.stdout, r.stderr)  # the child crossing it: SIGKILL


# ---- lifetime --------------------------------------------------------------------------------


def test_callback_lives_as_long_as_the_sandbox_and_is_dropped_after(sandboxes, servers):
    # The only reference to the closure is the Sandbox's field; collections while it runs do
    # not free it, and once the sandbox is released the library drops it.
    before = len(pf._LIVE)
    calls = []

    def make():
        def policy(event, ctx):
            gc.collect()
            calls.append(event.syscall)
            return None
        return policy

    one = servers["127.0.0.1"]
    sb = Sandbox(fs_readable=SYSTEM_READ, net_allow=NET, policy_fn=make())
    sb.spawn([PY, "-c", "import time; time.sleep(0.2)\n" + CLIENT, one])
    assert len(pf._LIVE) == before + 1
    gc.collect()
    r = sb.wait()
    assert table(r) == [(one, "0")] and "connect" in calls
    sb.close()
    assert len(pf._LIVE) == before


def test_context_kept_past_its_call_raises(sandboxes):
    kept = []

    def policy(event, ctx):
        kept.append(ctx)
        return None

    assert sandboxes(policy_fn=policy).run(["true"]).success
    with pytest.raises(SandboxRuntimeError, match=r"has returned"):
        kept[0].restrict_max_processes(1)


def test_policy_fn_refused_with_no_supervisor(sandboxes):
    sb = sandboxes(no_supervisor=True, policy_fn=lambda e, c: None)
    with pytest.raises(PolicyError, match="policy_fn"):
        sb.run(["true"])
    assert sandboxes(no_supervisor=True).run(["true"]).success  # control


def test_concurrent_sandboxes_keep_their_own_callbacks(sandboxes):
    # Two sandboxes at once, each with its own callback: each sees only its own events.
    got = {"a": [], "b": []}
    done = []

    def make(tag):
        def policy(event, ctx):
            if event.syscall == "execve":
                got[tag].append(event.argv[-1])
            return None
        return policy

    def go(tag):
        r = sandboxes(policy_fn=make(tag)).run([PY, "-c", EXECS, f"--{tag}"])
        done.append((tag, table(r)))

    ts = [threading.Thread(target=go, args=(t,)) for t in ("a", "b")]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert sorted(done) == [("a", [("--a", "--a")]), ("b", [("--b", "--b")])]
    assert got["a"][-1] == "--a" and got["b"][-1] == "--b"
    assert "--b" not in got["a"] and "--a" not in got["b"]


def test_exported():
    assert sandlock.SyscallEvent is SyscallEvent and sandlock.PolicyContext is PolicyContext


# ---- the trampoline the library calls, called through its C pointer ----------------------------


def _c_event(**kw):
    argv = kw.pop("argv", None)
    ev = _ffi.PolicyEvent(size=kw.pop("size", ctypes.sizeof(_ffi.PolicyEvent)), **kw)
    keep = None
    if argv is not None:
        keep = (ctypes.c_char_p * (len(argv) + 1))(*argv)
        ev.argv, ev.argc = ctypes.cast(keep, ctypes.POINTER(ctypes.c_char_p)), len(argv)
    return ev, keep


@pytest.mark.pure
def test_trampoline_converts_and_fails_closed():
    seen = []
    answers = iter([None, "audit", ValueError("x"), 13, "nonsense"])

    def fn(event, ctx):
        seen.append(event)
        a = next(answers)
        if isinstance(a, BaseException):
            raise a
        return a

    run = pf.Run(fn)
    key = 10**9 + 7
    pf._LIVE[key] = run
    try:
        ev, keep = _c_event(seq=1, syscall=b"execve", category=b"process", pid=7, ppid=3,
                            held=1, argv=[b"/bin/echo", b"hi"])
        results = [pf._FN(ctypes.pointer(ev), None, key) for _ in range(5)]
        assert results == [0, -2, -1, 13, -1]
        assert seen[0] == SyscallEvent(syscall="execve", category="process", pid=7,
                                       parent_pid=3, argv=("/bin/echo", "hi"), held=True)
        assert isinstance(run.error, ValueError) and len(run.audited) == 1
        # An event from a library whose struct ends before argc: argv and denied are left out.
        short = _ffi.PolicyEvent.argv.offset
        ev2, keep2 = _c_event(size=short, syscall=b"connect", category=b"network",
                              host=b"127.0.0.1", port=80, argv=[b"x"], denied=1)
        pf._LIVE[key] = pf.Run(lambda e, c: seen.append(e))
        assert pf._FN(ctypes.pointer(ev2), None, key) == 0
        assert seen[-1].argv is None and seen[-1].denied is False and seen[-1].port == 80
    finally:
        pf._LIVE.pop(key, None)
    assert pf._FN(ctypes.pointer(ev), None, key) == -1  # no callback under that key: deny
    pf._DROP(key)  # dropping an unknown key is harmless


def test_the_policy_threads_state_is_kept_then_released(sandboxes):
    # The callback's thread keeps one Python thread state from its first event to the drop,
    # which deletes it (the library has joined the thread by then); run after run.
    runs = []

    def make():
        def policy(event, ctx):
            if not any(r.fn is policy for r, _ in runs):
                [run] = [r for r in pf._LIVE.values() if r.fn is policy]
                runs.append((run, threading.get_ident()))
            return None
        return policy

    for _ in range(8):
        assert sandboxes(policy_fn=make()).run(["true"]).success
        gc.collect()
    assert len(runs) == 8
    for run, ident in runs:
        assert run._thread == ident and run._tstate is None  # kept, then released


def test_a_stage_runs_under_its_sandboxs_policy_fn(sandboxes):
    policy = lambda e, c: "audit" if e.argv_contains("--audit") else (  # noqa: E731
        True if e.argv_contains("--deny") else None)
    sb = sandboxes(policy_fn=policy)
    r = sb.cmd([PY, "-c", EXECS, "--audit", "--deny"]).run()
    assert table(r) == [("--audit", "--audit"), ("--deny", f"errno {errno.EPERM}")]
    assert [e.argv for e in r.audited] == [("/bin/echo", "--audit")]
    # Control: the same stage without the callback runs both.
    r = sandboxes().cmd([PY, "-c", EXECS, "--audit", "--deny"]).run()
    assert table(r) == [("--audit", "--audit"), ("--deny", "--deny")] and r.audited == []
