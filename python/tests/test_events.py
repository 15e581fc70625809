# SPDX-License-Identifier: LGPL-2.1-or-later
"""The event stream through the SDK: Sandbox(on_event=..., log_denials=...), Event, Denial,
Result.denials. The bindings' structs are checked against the C header (compiled by the test);
denials are of files in the test's own directory and of connects to a listener the test starts
on 127.0.0.1, each with the same run granted as its control."""

import ctypes
import errno
import gc
import json
import re
import socket
import threading

import pytest

import sandlock
from conftest import PY, ROOT, require
from sandlock import Denial, Event, Sandbox, SandlockError, _core, _ffi
from test_sdk_bindings import c_layout, py_layout

HEADER = ROOT / "include" / "sandlock.h"

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")


# ---- the bindings ------------------------------------------------------------------------------


@pytest.mark.pure
def test_event_struct_layout_matches_c(tmp_path):
    fields = [name for name, _ in _ffi.EventStruct._fields_]
    c = c_layout(tmp_path, "sandlock_event_t", fields)
    assert py_layout(_ffi.EventStruct) == c

    class Wide(ctypes.Structure):  # control: one field of the wrong width is seen
        _fields_ = [(n, ctypes.c_int64 if n == "pid" else t) for n, t in
                    _ffi.EventStruct._fields_]

    assert py_layout(Wide) != c


@pytest.mark.pure
def test_spawn_opts_carry_the_event_fields(tmp_path):
    names = [name for name, _ in _ffi.SpawnOpts._fields_]
    i = names.index("events")
    assert names[i:i + 4] == ["events", "reserved3", "on_event", "event_user_data"]
    assert py_layout(_ffi.SpawnOpts) == c_layout(tmp_path, "sandlock_spawn_opts_t", names)
    assert _ffi.SpawnOpts().size == ctypes.sizeof(_ffi.SpawnOpts)


@pytest.mark.pure
def test_constants_are_the_headers():
    text = HEADER.read_text()
    for name in ("VERDICT_ALLOW", "VERDICT_DENY", "VERDICT_AUDIT"):
        value = re.search(rf"#define SANDLOCK_{name} (\d+)u", text).group(1)
        assert getattr(_ffi, name) == int(value), name
    for name in ("EVENTS_DENIALS", "EVENTS_ALLOWED"):
        shift = re.search(rf"#define SANDLOCK_{name} \(1u << (\d+)\)", text).group(1)
        assert getattr(_ffi, name) == 1 << int(shift), name


def test_late_bindings_are_declared_and_resolve():
    declared = set(re.findall(r"\b(sandlock_[a-z0-9_]+)\(", HEADER.read_text()))
    assert set(_ffi._LATE_SIGNATURES) - declared == set()
    lib = ctypes.CDLL(_ffi.library_path())
    assert [n for n in _ffi._LATE_SIGNATURES if not hasattr(lib, n)] == []
    for name in ("sandlock_sandbox_denial", "sandlock_event_format_json"):  # control: bound
        assert callable(_ffi.late(name))


# ---- Event and Denial as values ------------------------------------------------------------


FILE = Event(seq=3, syscall="openat", category="file", pid=123, ppid=1, comm="git",
             verdict="deny", error=errno.EACCES, judged=True, first=True, path="/etc/gitconfig",
             access="O_RDONLY", reason="no read grant covers /etc", hint="add -r /etc")
CONNECT = Event(seq=4, syscall="connect", category="network", pid=9, ppid=1, comm="curl",
                verdict="deny", error=errno.ECONNREFUSED, first=True, host="127.0.0.1",
                port=8080, family=socket.AF_INET, protocol="tcp",
                reason="no net_allow rule covers 127.0.0.1:8080",
                hint="add --net-allow 127.0.0.1:8080")


def test_str_is_the_library_line():
    assert str(FILE) == ('denied openat("/etc/gitconfig", O_RDONLY) by pid 123 (git): '
                         'no read grant covers /etc; add -r /etc')
    assert str(CONNECT) == ("denied connect(127.0.0.1:8080) by pid 9 (curl): no net_allow rule "
                            "covers 127.0.0.1:8080; add --net-allow 127.0.0.1:8080")
    # Without a hint, the line stops at the reason.
    blocked = Event(seq=5, syscall="mount", category="process", pid=7, comm="x",
                    error=errno.EPERM, reason="blocked syscall")
    assert str(blocked) == "denied mount() by pid 7 (x): blocked syscall"


def test_str_of_an_allowed_event():
    allowed = Event(seq=1, syscall="openat", category="file", pid=5, comm="cat",
                    verdict="allow", path="/usr/lib/x", access="O_RDONLY")
    assert str(allowed) == 'allowed openat("/usr/lib/x", O_RDONLY) by pid 5 (cat)'


def test_to_json_is_the_library_object():
    obj = json.loads(FILE.to_json())
    assert list(obj) == ["seq", "syscall", "category", "pid", "ppid", "comm", "verdict",
                         "error", "judged", "first", "path", "access", "reason", "hint"]
    assert obj["verdict"] == "deny" and obj["error"] == "EACCES" and obj["judged"] is True
    assert "\n" not in FILE.to_json()
    net = json.loads(CONNECT.to_json())
    assert (net["host"], net["port"], net["family"], net["protocol"]) == (
        "127.0.0.1", 8080, "inet", "tcp")
    assert "judged" not in net and "path" not in net  # 0 and NULL are left out


def test_events_are_frozen_and_denials_are_events():
    with pytest.raises(AttributeError):
        FILE.pid = 1  # type: ignore[misc]
    d = Denial(seq=1, syscall="openat", category="file", pid=1, count=4)
    assert isinstance(d, Event) and d.count == 4
    assert sandlock.Event is Event and sandlock.Denial is Denial


def test_bad_on_event_and_log_denials_are_refused():
    with pytest.raises(TypeError, match=r"^on_event: 3 is not callable"):
        Sandbox(on_event=3)
    with pytest.raises(TypeError, match=r"^log_denials: 'yes' is not True or False"):
        Sandbox(log_denials="yes")
    Sandbox(on_event=print, log_denials=True)  # control


@pytest.mark.pure
def test_they_are_python_only_and_documented():
    doc = Sandbox.__doc__
    assert "on_event: Callable[[Event], Any] | None = None" in doc
    assert "log_denials: bool = False" in doc
    assert "Python only (this run's: never in the JSON document or a profile)" in doc


def test_they_stay_out_of_the_policy_document():
    assert Sandbox(on_event=print, log_denials=True).to_json() == Sandbox().to_json()


# ---- runs ----------------------------------------------------------------------------------


@pytest.fixture
def secret(tmp_path):
    """A readable file in a directory no grant covers."""
    d = tmp_path / "private"
    d.mkdir()
    f = d / "secret.txt"
    f.write_text("s3cret\n")
    return f


def of_path(events, path):
    return [e for e in events if e.path == str(path)]


def test_file_denial_in_result(sandboxes, secret):
    r = sandboxes(log_denials=True).run(["cat", str(secret)])
    assert r.exit_code == 1 and b"Permission denied" in r.stderr
    [d] = of_path(r.denials, secret)
    assert isinstance(d, Denial)
    assert (d.syscall, d.category, d.verdict, d.error) == ("openat", "file", "deny",
                                                           errno.EACCES)
    assert d.access == "O_RDONLY" and d.judged and d.first and d.count == 1
    assert d.comm == "cat" and d.pid > 0
    assert d.reason == f"no read grant covers {secret.parent}"
    assert d.hint == f"add -r {secret.parent}"
    assert str(d) == (f'denied openat("{secret}", O_RDONLY) by pid {d.pid} (cat): '
                      f"no read grant covers {secret.parent}; add -r {secret.parent}")
    # Control: granted, the same run reads it and nothing is denied.
    ok = sandboxes(log_denials=True, fs_readable=[str(secret.parent)]).run(["cat", str(secret)])
    assert ok.success and ok.stdout == b"s3cret\n"
    assert of_path(ok.denials, secret) == [] and ok.events_dropped == 0


def test_kernel_denials_need_log_denials(sandboxes, secret):
    # Landlock's refusal is the kernel's alone: judged for the log only when asked.
    r = sandboxes().run(["cat", str(secret)])
    assert r.exit_code == 1 and of_path(r.denials, secret) == []
    assert len(of_path(sandboxes(log_denials=True).run(["cat", str(secret)]).denials,
                       secret)) == 1


CLIENT = """import socket, sys
s = socket.socket()
print(s.connect_ex(("127.0.0.1", int(sys.argv[1]))))
"""


@pytest.fixture
def listener():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    yield s.getsockname()[1]
    s.close()


def test_connect_denial_in_result(sandboxes, listener):
    require(sandlock.landlock_abi_version() >= 4, "Landlock ABI 4 (NetTcp)")
    port = listener
    # The supervisor's own denial: in the table on every run, without log_denials.
    r = sandboxes().run([PY, "-c", CLIENT, str(port)])
    assert r.success, r.stderr
    answered = int(r.stdout)
    assert answered != 0
    [d] = [d for d in r.denials if d.syscall == "connect"]
    assert (d.category, d.host, d.port, d.family, d.protocol) == (
        "network", "127.0.0.1", port, socket.AF_INET, "tcp")
    assert d.error == answered
    assert d.reason == f"no net_allow rule covers 127.0.0.1:{port}"
    assert d.hint == f"add --net-allow 127.0.0.1:{port}"
    assert str(d) == (f"denied connect(127.0.0.1:{port}) by pid {d.pid} ({d.comm}): no "
                      f"net_allow rule covers 127.0.0.1:{port}; add --net-allow 127.0.0.1:{port}")
    # Control: the hint applied, the connect goes through and nothing is denied.
    ok = sandboxes(net_allow=[f"127.0.0.1:{port}"]).run(
        [PY, "-c", CLIENT, str(port)])
    assert ok.success and ok.stdout == b"0\n", ok.stderr
    assert [d for d in ok.denials if d.syscall == "connect"] == []


def test_on_event_gets_every_decision_in_order(sandboxes, secret):
    got = []
    main = threading.get_ident()
    threads = set()

    def on_event(ev):
        threads.add(threading.get_ident())
        got.append(ev)

    r = sandboxes(on_event=on_event).run(["cat", str(secret)])
    assert r.exit_code == 1 and r.event_error is None
    assert got and all(isinstance(e, Event) and not isinstance(e, Denial) for e in got)
    seqs = [e.seq for e in got]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert threads and main not in threads  # the library's thread, not the caller's
    [denied] = [e for e in of_path(got, secret)]
    assert denied.verdict == "deny" and denied.reason == f"no read grant covers {secret.parent}"
    # on_event alone gets the allowed decisions too (cat's own libraries, say).
    assert any(e.verdict == "allow" for e in got)
    # Control: with log_denials, the callback gets the denials only.
    only = []
    sandboxes(on_event=only.append, log_denials=True).run(["cat", str(secret)])
    assert only and all(e.verdict == "deny" for e in only)
    assert [e.path for e in of_path(only, secret)] == [str(secret)]


def test_a_raising_callback_does_not_end_the_run(sandboxes, secret):
    calls = []

    def on_event(ev):
        calls.append(ev)
        raise ValueError(f"boom {len(calls)}")

    r = sandboxes(on_event=on_event, fs_readable=[str(secret.parent)]).run(
        ["cat", str(secret)])
    assert r.success and r.stdout == b"s3cret\n"
    assert len(calls) > 1  # it kept being called
    assert isinstance(r.event_error, ValueError) and str(r.event_error) == "boom 1"
    assert r.event_error.__traceback__ is not None
    # Control: a callback that raises nothing leaves event_error None.
    assert sandboxes(on_event=lambda ev: None).run(["true"]).event_error is None


def test_many_events_through_the_callback(sandboxes, secret):
    # 1,000 denied opens by the shell itself (no fork per open).
    got = []
    script = f"i=0; while [ $i -lt 1000 ]; do true < {secret}; i=$((i+1)); done"
    sb = sandboxes(on_event=got.append, log_denials=True)
    r = sb.run(["sh", "-c", script], timeout=60)
    assert r.success, r.stderr
    denied = of_path(got, secret)
    assert len(denied) + r.events_dropped >= 1000
    assert len(denied) == 1000 and r.events_dropped == 0  # a queue of 4096 holds them
    assert [e.first for e in denied].count(True) == 1 and denied[0].first
    [d] = of_path(r.denials, secret)
    assert d.count == 1000


def test_the_callback_lives_as_long_as_the_sandbox(sandboxes, secret):
    got = []
    sb = sandboxes(on_event=lambda ev: got.append(ev.seq), log_denials=True)
    sb.spawn(["sh", "-c", f"sleep 0.3; cat {secret}; cat {secret}"])
    gc.collect()  # nothing but the running handle holds the C callback now
    r = sb.wait()
    assert r.exit_code == 1 and len(got) >= 2


def test_popen_and_dry_run_results_carry_denials(sandboxes, secret, tmp_path):
    sb = sandboxes(log_denials=True)
    null = sandlock.StdioMode.NULL
    with sb.popen(["cat", str(secret)], stdin=null, stdout=null, stderr=null) as proc:
        pass
    assert len(of_path(proc.wait().denials, secret)) == 1
    wd = tmp_path / "wd"
    wd.mkdir()
    dry = sandboxes(log_denials=True, workdir=str(wd), fs_writable=[str(wd)]).dry_run(
        ["cat", str(secret)])
    assert len(of_path(dry.denials, secret)) == 1 and dry.events_dropped == 0


def test_a_pipeline_result_carries_every_stages_denials(sandboxes, secret):
    first = sandboxes(log_denials=True)
    second = sandboxes(log_denials=True)
    got = []
    third = sandboxes(on_event=got.append, log_denials=True)
    r = (first.cmd(["cat", str(secret)]) | second.cmd(["cat"])
         | third.cmd(["sh", "-c", f"cat; cat {secret}"])).run()
    assert r.exit_code == 1
    comms = [(d.path, d.comm) for d in r.denials if d.path == str(secret)]
    assert comms == [(str(secret), "cat"), (str(secret), "cat")]  # the first's, the last's
    assert [e.path for e in got if e.path == str(secret)] == [str(secret)]
    # Control: granted in both, nothing is denied.
    ok_sb = sandboxes(log_denials=True, fs_readable=[str(secret.parent)])
    ok = (ok_sb.cmd(["cat", str(secret)]) | ok_sb.cmd(["cat"])).run()
    assert ok.success and ok.stdout == b"s3cret\n" and of_path(ok.denials, secret) == []


def test_an_older_library_says_what_it_lacks(sandboxes, monkeypatch):
    real = _ffi.late

    def late(name):
        if name == "sandlock_sandbox_denial_count":
            raise SandlockError(f"libsandlock.so lacks {name}: a libsandlock older than this "
                                "package")
        return real(name)

    monkeypatch.setattr(_ffi, "late", late)
    r = sandboxes().run(["true"])
    assert r.success
    with pytest.raises(SandlockError, match="lacks sandlock_sandbox_denial_count"):
        r.denials
    monkeypatch.setattr(_ffi, "late", real)
    assert sandboxes().run(["true"]).denials == []  # control
    assert _core.Result(success=True).denials == []


def test_a_slow_callback_drops_events_and_never_stalls_the_run(sandboxes, secret):
    # The callback holds its first event until the command has printed "done": the command's
    # 6,000 denied opens go on meanwhile, and what the queue cannot hold is counted, not waited
    # for.
    release = threading.Event()
    got = []

    def on_event(ev):
        if not got:
            release.wait(20)
        got.append(ev)

    script = (f"i=0; while [ $i -lt 6000 ]; do true < {secret}; i=$((i+1)); done; "
              "echo done")
    sb = sandboxes(on_event=on_event, log_denials=True)
    pipe = sandlock.StdioMode.PIPED
    null = sandlock.StdioMode.NULL
    with sb.popen(["sh", "-c", script], stdin=null, stdout=pipe, stderr=null) as proc:
        assert proc.stdout.readline() == b"done\n"  # while the callback still holds one
        held = len(got)
        release.set()
    r = proc.wait()
    assert r.success and held == 0
    [d] = of_path(r.denials, secret)
    assert d.count == 6000  # the table counts every one
    assert r.events_dropped > 0
    assert len(got) + r.events_dropped == sum(x.count for x in r.denials)
    # Control: a callback that keeps up loses nothing (test_many_events_through_the_callback).


def test_the_callback_may_kill_the_sandbox(sandboxes, secret):
    def on_event(ev):
        if ev.path == str(secret):
            sb.kill()

    script = f"cat {secret}; sleep 2; echo after"
    sb = sandboxes(on_event=on_event, log_denials=True)
    r = sb.run(["sh", "-c", script], timeout=30)
    assert r.reason == sandlock.ExitReason.KILLED and r.stdout == b"" and r.event_error is None
    # Control: a callback that does not kill lets the command finish.
    calm = sandboxes(on_event=lambda ev: None, log_denials=True).run(
        ["sh", "-c", f"cat {secret}; echo after"], timeout=30)
    assert calm.stdout == b"after\n"


def test_the_callback_cannot_wait_for_its_own_sandbox(sandboxes, secret):
    # Its sandbox ends once the callback has returned: waiting there would never return.
    sb = sandboxes(log_denials=True, on_event=lambda ev: sb.wait())
    sb.spawn(["cat", str(secret)])
    r = sb.wait()  # control: the caller's own wait still works, and says what the callback met
    assert r.exit_code == 1
    assert isinstance(r.event_error, RuntimeError)
    assert str(r.event_error) == ("wait: on_event cannot wait for its own sandbox (the sandbox "
                                  "ends once the callback has returned)")
    closing = sandboxes(log_denials=True, on_event=lambda ev: closing.close())
    r = closing.run(["cat", str(secret)])
    assert r.exit_code == 1 and str(r.event_error).startswith("close: on_event cannot wait")


def test_the_callback_cannot_wait_for_its_own_process(sandboxes, secret):
    procs = []
    sb = sandboxes(log_denials=True,
                   on_event=lambda ev: ev.path == str(secret) and procs[0].wait())
    null = sandlock.StdioMode.NULL
    procs.append(sb.popen(["sh", "-c", f"sleep 0.2; cat {secret}"], stdin=null, stdout=null,
                          stderr=null))
    r = procs[0].wait()  # holds the process's lock while the callback runs
    assert r.exit_code == 1
    assert str(r.event_error).startswith("wait: on_event cannot wait for its own sandbox")
