# SPDX-License-Identifier: LGPL-2.1-or-later
"""Configuration: which exception a bad field raises and when (construction for a bad value,
start for a field whose enforcement is not built yet), the Landlock ABI, confine() (in a forked
child: it is irreversible), the protections, and to_json()'s canonical document. Each check has
its control."""

import datetime as dt
import os
import sys
import traceback

import pytest

from conftest import SYSTEM_READ, landlock_abi_cli
import sandlock
from sandlock import BranchAction, ConfinementError, Protection, Sandbox, SandboxError, confine

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")


# ---- bad values: SandboxError when the Sandbox is made, naming the field ----------------------

BAD = [
    ({"max_cpu": 200}, "max_cpu"),
    ({"max_cpu": 0}, "max_cpu"),
    ({"max_memory": "12Q"}, "max_memory"),
    ({"max_disk": "1.5G"}, "max_disk"),
    ({"net_allow": ["ftp://a.example:21"]}, "net_allow"),
    ({"net_allow": ["127.0.0.1:0"]}, "net_allow"),
    ({"net_allow_bind": [70000]}, "net_allow_bind"),
    ({"uid": 0}, "uid, gid"),
    ({"gid": 0}, "uid, gid"),
    ({"http_ca": "/ca.pem"}, "http_ca, http_key"),
    ({"http_key": "/ca.key"}, "http_ca, http_key"),
    ({"time_start": dt.datetime(2026, 1, 1)}, "time_start"),
    ({"time_start": "2026-01-01T00:00:00"}, "time_start"),
    ({"fs_readable": ["usr"]}, "fs_readable"),
    ({"extra_deny_syscalls": ["sdk_no_such_syscall"]}, "extra_deny_syscalls"),
    ({"on_exit": "merge"}, "on_exit"),
    ({"name": "a/b"}, "name"),
    # The Python name, not the document's section.key:
    ({"fs_readable": "/usr"}, "fs_readable:"),
    ({"env": {"A=B": "c"}}, "env:"),
    ({"fs_mount": {"w": "/h"}}, "fs_mount:"),
    ({"max_processes": "many"}, "max_processes:"),
    ({"clean_env": 1}, "clean_env:"),
    ({"http_ports": [0]}, "http_ports:"),
    # A ':' would change the "VIRTUAL:HOST[:ro]" entry the document carries.
    ({"fs_mount": {"/w": "/tmp/a:ro"}}, "fs_mount:"),
    ({"fs_mount": {"/w:x": "/tmp/a"}}, "fs_mount:"),
    ({"fs_mount_ro": {"/w": "/tmp/a:rw"}}, "fs_mount_ro:"),
]
GOOD = [
    {"max_cpu": 50}, {"max_cpu": 100}, {"max_memory": "512M"}, {"max_disk": 1536},
    {"net_allow": ["tcp://127.0.0.1:80"]}, {"net_allow_bind": [8080, "9000-9005"]},
    {"uid": 0, "gid": 0}, {"http_ca": "/ca.pem", "http_key": "/ca.key"},
    {"time_start": dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)},
    {"time_start": "2026-01-01T00:00:00+02:00"}, {"fs_readable": ["/usr"]},
    {"extra_deny_syscalls": ["mkdirat"]}, {"on_exit": BranchAction.KEEP}, {"name": "ab"},
]


@pytest.mark.parametrize("kwargs,field", BAD, ids=[next(iter(k)) for k, _ in BAD])
def test_bad_value_is_sandbox_error_naming_the_field(kwargs, field):
    with pytest.raises(SandboxError) as e:
        Sandbox(**kwargs)
    assert field in str(e.value)


@pytest.mark.parametrize("kwargs", GOOD, ids=[next(iter(k)) for k in GOOD])
def test_good_value_constructs(kwargs):
    assert isinstance(Sandbox(**kwargs).to_json(), dict)


def test_unknown_kwarg_is_type_error():
    with pytest.raises(TypeError):
        Sandbox(fs_readble=["/usr"])
    with pytest.raises(TypeError):
        Sandbox(max_mem="1G")


def test_aware_datetime_is_accepted_as_utc(sandboxes):
    when = dt.datetime(2026, 3, 1, 12, 30, 0, 250000, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    sb = sandboxes(time_start=when)
    assert sb.to_json() == {"filesystem": {"read": SYSTEM_READ},
                            "determinism": {"time_start": "2026-03-01T10:30:00.250000000Z"}}
    r = sb.run(["/bin/date", "-u", "+%Y-%m-%dT%H:%M"])
    assert r.stdout == b"2026-03-01T10:30\n", r.stderr


# ---- fields not supported yet: refused when a process starts -------------------------------


@pytest.mark.parametrize("start", ["run", "spawn", "create", "stage"])
def test_unsupported_field_refused_at_start_not_construction(sandboxes, start):
    sb = sandboxes(fs_mount={"/w": "/tmp"})  # constructs
    assert sb.to_json()["filesystem"]["mount"] == ["/w:/tmp"]
    with pytest.raises(SandboxError, match="^not supported yet: fs_mount$"):
        if start == "stage":
            sb.cmd(["true"]).run()
        else:
            getattr(sb, start)(["true"])
    assert not sb.is_running and sb.pid is None
    # Control: the same sandbox without the field runs.
    assert sandboxes().run(["true"]).success


@pytest.mark.parametrize("field,value", [("max_disk", "1G"), ("fs_storage", "/tmp"),
                                         ("on_exit", BranchAction.DEFER),
                                         ("on_error", BranchAction.KEEP)])
def test_branch_field_without_workdir_refused_at_start(sandboxes, tmp_path, field, value):
    sb = sandboxes(**{field: value})  # constructs: a profile may hold it for a later workdir
    with pytest.raises(SandboxError, match=f"^{field}: needs workdir"):
        sb.run(["true"])
    assert not sb.is_running
    # Control: with a workdir the same field runs.
    sb.workdir = str(tmp_path)
    r = sb.run(["true"])
    assert (r.success, r.error) == (True, None)
    if sb.pending:
        sb.abort()


def test_python_only_field_refused_at_start(sandboxes):
    sb = sandboxes(init_fn=lambda: 0)
    with pytest.raises(SandboxError) as e:
        sb.run(["true"])
    assert "init_fn" in str(e.value) and str(e.value).startswith("not supported yet: ")


def test_unsupported_fields_named_together(sandboxes):
    sb = sandboxes(chroot="/tmp", init_fn=lambda: 0)
    with pytest.raises(SandboxError) as e:
        sb.run(["true"])
    msg = str(e.value)
    assert msg.startswith("not supported yet: ")
    assert "chroot" in msg and "init_fn" in msg


# ---- platform -------------------------------------------------------------------------------


def test_landlock_abi_version_matches_the_cli():
    v = sandlock.landlock_abi_version()
    assert v == landlock_abi_cli()
    assert v >= 1


def test_min_landlock_abi():
    assert sandlock.min_landlock_abi() == 6


# ---- confine (each in a forked child: confinement cannot be undone) -------------------------


def in_child(fn):
    """fn() in a forked child; its return value is the child's exit status (98 if it raised,
    with the traceback on stderr)."""
    pid = os.fork()
    if pid == 0:
        code = 98
        try:
            code = fn()
        except BaseException:
            traceback.print_exc()
            sys.stderr.flush()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def can_open(path, mode="r"):
    try:
        with open(path, mode):
            return True
    except PermissionError:
        return False


def test_confine_denies_reads_outside(secret):
    def child():
        confine(Sandbox(fs_readable=SYSTEM_READ))
        if not can_open(sys.executable, "rb"):
            return 1  # a granted file must stay readable
        return 0 if not can_open(secret) else 2

    assert in_child(child) == 0
    # Control: the same check without confine reads the file.
    assert in_child(lambda: 0 if can_open(secret) else 3) == 0


def test_confine_writes(box, tmp_path):
    (tmp_path / "ro").mkdir()

    def child():
        confine(Sandbox(fs_readable=SYSTEM_READ + [str(tmp_path / "ro")],
                        fs_writable=[str(box)]))
        if not can_open(box / "w", "w"):
            return 1
        return 0 if not can_open(tmp_path / "ro" / "w", "w") else 2

    assert in_child(child) == 0
    assert (box / "w").exists() and not (tmp_path / "ro" / "w").exists()


def test_confine_with_a_denied_path(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "secret").write_text("s")
    (d / "open").write_text("o")

    def child():
        confine(Sandbox(fs_readable=SYSTEM_READ + [str(d)], fs_denied=[str(d / "secret")]))
        if not can_open(d / "open"):
            return 1  # the rest of the grant stays readable
        return 0 if not can_open(d / "secret") else 2

    assert in_child(child) == 0
    # Control: the same grant without fs_denied reads it.
    def control():
        confine(Sandbox(fs_readable=SYSTEM_READ + [str(d)]))
        return 0 if can_open(d / "secret") else 3

    assert in_child(control) == 0


def test_sandbox_with_a_denied_path(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "secret").write_text("s")
    cat = ["/bin/cat", str(d / "secret")]
    assert Sandbox(fs_readable=SYSTEM_READ + [str(d)]).run(cat).stdout == b"s"
    r = Sandbox(fs_readable=SYSTEM_READ + [str(d)], fs_denied=[str(d / "secret")]).run(cat)
    assert not r.success and b"Permission denied" in r.stderr


def test_sandbox_with_a_denied_path_in_a_writable_grant(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "secret").write_text("s")
    sh = ["/bin/sh", "-c", f"cat {d}/secret; echo made > {d}/new && cat {d}/new"]
    # Control: without fs_denied the secret is read.
    r = Sandbox(fs_readable=SYSTEM_READ, fs_writable=[str(d)]).run(sh)
    assert r.stdout == b"smade\n"
    (d / "new").unlink()
    r = Sandbox(fs_readable=SYSTEM_READ, fs_writable=[str(d)],
                fs_denied=[str(d / "secret")]).run(sh)
    assert r.stdout == b"made\n" and b"Permission denied" in r.stderr
    assert (d / "new").read_text() == "made\n" and (d / "secret").read_text() == "s"


def test_confine_refuses_a_denied_path_in_a_writable_grant(tmp_path):
    d = tmp_path / "d"
    d.mkdir()

    def child():
        try:
            confine(Sandbox(fs_readable=SYSTEM_READ, fs_writable=[str(d)],
                            fs_denied=[str(d / "secret")]))
        except ConfinementError as e:
            want = (f"fs_denied inside a writable grant needs the supervisor "
                    f"({d / 'secret'} in {d})")
            return 0 if str(e) == want else 4
        return 5

    assert in_child(child) == 0
    # Control: outside the writable grant, confine applies it.
    def control():
        confine(Sandbox(fs_readable=SYSTEM_READ + [str(tmp_path)], fs_writable=[str(d)],
                        fs_denied=[str(tmp_path / "other")]))
        return 0

    assert in_child(control) == 0


def test_deterministic_dirs(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    for n in ["m", "b", "y", "a", "q"]:
        (d / n).write_text("")
    ls = ["/bin/ls", "-f", str(d)]
    control = Sandbox(fs_readable=SYSTEM_READ + [str(d)]).run(ls).stdout.split()
    assert sorted(control) == [b".", b"..", b"a", b"b", b"m", b"q", b"y"]
    assert control != sorted(control)  # the kernel's own order
    got = Sandbox(fs_readable=SYSTEM_READ + [str(d)], deterministic_dirs=True).run(ls)
    assert got.stdout.split() == sorted(control)


def test_uid_gid():
    ids = ["/bin/sh", "-c", "id -u; id -g"]
    r = Sandbox(fs_readable=SYSTEM_READ, uid=0, gid=0).run(ids)
    assert r.stdout == b"0\n0\n", r.stderr
    r = Sandbox(fs_readable=SYSTEM_READ, uid=1234, gid=99).run(ids)
    assert r.stdout == b"1234\n99\n", r.stderr
    # Control: without them, the caller's own.
    control = Sandbox(fs_readable=SYSTEM_READ).run(ids).stdout
    assert control == f"{os.geteuid()}\n{os.getegid()}\n".encode()


def test_time_start():
    date = ["/bin/date", "-u", "+%Y-%m-%d"]
    start = dt.datetime(2000, 6, 15, tzinfo=dt.timezone.utc)
    for value in (start, "2000-06-15T00:00:00Z"):
        r = Sandbox(fs_readable=SYSTEM_READ, time_start=value).run(date)
        assert r.stdout == b"2000-06-15\n", r.stderr
    # Control: without it, today.
    today = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d").encode()
    assert Sandbox(fs_readable=SYSTEM_READ).run(date).stdout.strip() == today


def test_random_seed():
    py = ["/usr/bin/python3", "-c", "import os; print(os.urandom(16).hex())"]

    def draw(**kw):
        r = Sandbox(fs_readable=SYSTEM_READ, **kw).run(py)
        assert r.success, r.stderr
        return r.stdout

    assert draw(random_seed=5) == draw(random_seed=5)
    assert draw(random_seed=5) != draw(random_seed=6)
    assert draw() != draw()  # control: no seed, other bytes each run


REFUSED = [
    ({"env": {"A": "b"}}, "env"),
    ({"clean_env": True}, "clean_env"),
    ({"cwd": "/"}, "cwd"),
    ({"extra_deny_syscalls": ["mkdirat"]}, "extra_deny_syscalls"),
    ({"max_open_files": 64}, "max_open_files"),
    ({"name": "confined"}, "name"),
    ({"policy_fn": lambda e, c: 0}, "policy_fn"),
    ({"init_fn": lambda: None}, "init_fn"),
]


@pytest.mark.parametrize("kwargs,field", REFUSED, ids=[f for _, f in REFUSED])
def test_confine_refuses_a_non_landlock_field(secret, kwargs, field):
    def child():
        try:
            confine(Sandbox(fs_readable=SYSTEM_READ, **kwargs))
        except ConfinementError as e:
            if field not in str(e):
                return 4
            return 0 if can_open(secret) else 5  # refused means not confined at all
        return 1

    assert in_child(child) == 0


REJECTED_BY_REFERENCE = [  # resource limits, network, COW: "rejected rather than silently ignored"
    {"max_memory": "1G"},
    {"max_processes": 10},
    {"max_cpu": 50},
    {"net_allow": ["127.0.0.1:80"]},
    {"net_allow_bind": [8080]},
    {"workdir": "/tmp"},
]


@pytest.mark.parametrize("kwargs", REJECTED_BY_REFERENCE, ids=[next(iter(k)) for k in
                                                               REJECTED_BY_REFERENCE])
def test_confine_refuses_limits_network_cow(kwargs):
    field = next(iter(kwargs))

    def child():
        try:
            confine(Sandbox(fs_readable=SYSTEM_READ, **kwargs))
        except ConfinementError as e:
            return 0 if field in str(e) else 4
        return 1  # confined with the field ignored

    assert in_child(child) == 0


# ---- protections ---------------------------------------------------------------------------


def test_protections_in_the_document():
    assert Sandbox(allow_degraded=list(Protection)).to_json() == {"protections": {
        "allow_degraded": ["fs-refer", "fs-truncate", "net-tcp", "fs-ioctl-dev",
                           "signal-scope", "abstract-unix-socket-scope"]}}
    with pytest.raises(SandboxError, match="allow_degraded"):
        Sandbox(allow_degraded=["fs-everything"])


KILL0 = "import os, sys\ntry:\n    os.kill(int(sys.argv[1]), 0); print('ok')\n" \
        "except OSError as e:\n    print(e.errno)\n"


def test_allow_degraded_signal_scope_runs(sandboxes):
    r = sandboxes(allow_degraded=[Protection.SIGNAL_SCOPE,
                                  Protection.ABSTRACT_UNIX_SOCKET_SCOPE]).run(["echo", "hi"])
    assert (r.success, r.stdout) == (True, b"hi\n")


def test_signal_scope_and_disable(sandboxes):
    me = str(os.getpid())
    # Strict (and degraded, on a kernel that has it): no signal to a process outside.
    for sb in (sandboxes(), sandboxes(allow_degraded=[Protection.SIGNAL_SCOPE])):
        r = sb.run(["/usr/bin/python3", "-c", KILL0, me])
        assert r.stdout == b"1\n"  # EPERM
    # Control: disabled, the same signal goes through.
    r = sandboxes(disable=[Protection.SIGNAL_SCOPE]).run(["/usr/bin/python3", "-c", KILL0, me])
    assert r.stdout == b"ok\n"


# ---- to_json --------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs,doc", [
    ({}, {}),
    ({"on_exit": "commit", "on_error": BranchAction.ABORT, "control_socket": True}, {}),
    ({"max_memory": 1073741824}, {"limits": {"memory": "1G"}}),
    ({"max_memory": "512m", "max_disk": 1025, "cpu_cores": [3, 1, 1]},
     {"limits": {"memory": "512M", "disk": "1025", "cpu_cores": [1, 3]}}),
    ({"on_exit": BranchAction.ABORT}, {"filesystem": {"on_exit": "abort"}}),
    ({"fs_mount": {"/w": "/h"}, "fs_mount_ro": {"/r": "/h2"}},
     {"filesystem": {"mount": ["/w:/h", "/r:/h2:ro"]}}),
    ({"fs_readable": ["/usr", "/usr"]}, {"filesystem": {"read": ["/usr"]}}),
    ({"net_allow": ["tcp://Mirror.Example.ORG.:80,443"]},
     {"network": {"allow": ["tcp://mirror.example.org:80,443"]}}),
    ({"http_allow": ["get API.Example.com/v1/*"]},
     {"http": {"allow": ["GET api.example.com/v1/*"]}}),
    ({"http_ports": []}, {}),  # () and [] are the default [80], as the reference says
    ({"http_ports": ()}, {}),
    ({"http_ports": [8080, 80]}, {"http": {"ports": [80, 8080]}}),
    ({"gpu_devices": []}, {"limits": {"gpu_devices": []}}),
    ({"time_start": dt.datetime(2026, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=-5)))},
     {"determinism": {"time_start": "2026-01-01T05:00:00Z"}}),
    ({"env": {"A": "1"}, "uid": 0, "gid": 0},
     {"program": {"env": {"A": "1"}, "uid": 0, "gid": 0}}),
    ({"name": "x", "control_socket": False},
     {"runtime": {"name": "x", "control_socket": False}}),
])
def test_to_json_canonical(kwargs, doc):
    assert Sandbox(**kwargs).to_json() == doc


def test_result_fields(sandboxes):
    r = sandboxes().run(["true"])
    assert (r.success, r.exit_code, r.stdout, r.stderr, r.error, r.changes, r.signal) == (
        True, 0, b"", b"", None, [], 0)
