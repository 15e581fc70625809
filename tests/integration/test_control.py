# SPDX-License-Identifier: LGPL-2.1-or-later
"""The runtime directory and control socket of a running sandbox, and the verbs that use it:
sandlock ps, inspect, kill. Each test starts `sleep` sandboxes under unique names and ends them
itself."""

import json
import os
import socket
import stat
import subprocess
import time
import uuid

import pytest

from conftest import SANDLOCK, SYSTEM_READ, process_alive, sandlock

NOBODY = 65534


def runtime_root(uid=None):
    return f"/dev/shm/sandlock-{os.geteuid() if uid is None else uid}"


def as_uid(uid):
    def drop():
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    return drop


def unique(prefix="ctl"):
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def start(name, *flags, preexec_fn=None, env=None):
    """`sandlock run --name NAME FLAGS -- sleep 60` in the background, once its runtime
    directory is there. Returns the Popen."""
    args = [SANDLOCK, "run", *SYSTEM_READ, *flags]
    if name:
        args += ["--name", name]
    proc = subprocess.Popen([*args, "--", "sleep", "60"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=preexec_fn, env=env)
    return proc


def wait_for(pred, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.01)
    return False


def pid_file(name, uid=None):
    path = f"{runtime_root(uid)}/{name}/pid"
    try:
        with open(path) as f:
            spid, host = f.read().split()
        return int(spid), int(host)
    except (FileNotFoundError, ValueError):
        return None


def running(name, uid=None):
    pf = pid_file(name, uid)
    return pf is not None and pf[0] > 0


def session_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[3])
    except (FileNotFoundError, ProcessLookupError):
        return None


def stop(proc):
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=30)


@pytest.fixture
def sleeper():
    """Start named sleep sandboxes; kill whatever is left at the end."""
    procs = []

    def make(name, *flags, **kw):
        proc = start(name, *flags, **kw)
        procs.append(proc)
        uid = None
        if kw.get("preexec_fn") is not None:
            uid = NOBODY
        assert wait_for(lambda: running(name, uid) or proc.poll() is not None), \
            f"{name} never appeared"
        assert proc.poll() is None, proc.communicate()[1]
        return proc

    yield make
    for proc in procs:
        stop(proc)


def ps_rows():
    r = sandlock("ps")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    if lines == ["No running sandboxes."]:
        return {}
    assert lines[0].split() == ["NAME", "PID", "UPTIME", "STATUS", "PORTS", "CMD"]
    rows = {}
    for line in lines[1:]:
        name, pid, up, status, ports, cmd = line.split(None, 5)
        rows[name] = {"pid": int(pid) if pid != "?" else None, "uptime": up, "status": status,
                      "ports": ports, "cmd": cmd}
    return rows


# ---- the runtime directory ----------------------------------------------------------------------

def test_runtime_directory_layout(sleeper, sandbox_dir):
    name = unique()
    proc = sleeper(name)
    d = f"{runtime_root()}/{name}"
    st = os.lstat(d)
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700
    assert st.st_uid == os.geteuid()
    st = os.lstat(runtime_root())
    assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()
    st = os.lstat(f"{d}/control.sock")
    assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
    spid, host = pid_file(name)
    assert host == proc.pid
    with open(f"/proc/{spid}/cmdline", "rb") as f:
        assert f.read() == b"sleep\x0060\x00"
    assert sorted(os.listdir(d)) == ["control.sock", "pid"]
    # Removed when the sandbox ends.
    proc.kill()
    proc.communicate(timeout=30)
    # The host was SIGKILLed: it could not clean up; the next claim or listing does.
    assert name not in ps_rows()
    assert not os.path.exists(d)


def test_removed_when_the_command_exits(sandbox_dir):
    name = unique()
    marker = sandbox_dir / "seen"
    r = subprocess.run([SANDLOCK, "run", *SYSTEM_READ, "-r", "/dev/shm", "-w",
                        str(sandbox_dir), "--name", name, "--", "sh", "-c",
                        f'ls {runtime_root()}/{name} > {marker}'], capture_output=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    # It existed while the command ran (the negative control of the removal) ...
    assert marker.read_text().split() == ["control.sock", "pid"]
    # ... and is gone once sandlock returned.
    assert not os.path.exists(f"{runtime_root()}/{name}")


def test_control_socket_false_creates_nothing(sandbox_dir):
    name = unique()
    marker = sandbox_dir / "seen"
    script = f'ls -d {runtime_root()}/{name} > {marker} 2>&1; echo $? >> {marker}'
    for flags, exists in (([], True), (["--no-control-socket"], False)):
        r = subprocess.run([SANDLOCK, "run", *SYSTEM_READ, "-r", "/dev/shm", "-w",
                            str(sandbox_dir), "--name", name, *flags, "--", "sh", "-c", script],
                           capture_output=True, timeout=30)
        assert r.returncode == 0, r.stderr
        status = marker.read_text().split()[-1]
        assert status == ("0" if exists else "2"), (flags, marker.read_text())


def test_name_already_running_is_an_error(sleeper):
    name = unique()
    sleeper(name)
    r = subprocess.run([SANDLOCK, "run", *SYSTEM_READ, "--name", name, "--", "true"],
                       capture_output=True, timeout=30)
    assert r.returncode == 1
    assert r.stderr.decode() == f"sandlock: --name: a sandbox named {name} is already running\n"
    # The negative control: another name runs.
    r = subprocess.run([SANDLOCK, "run", *SYSTEM_READ, "--name", unique(), "--", "true"],
                       capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr


def test_stale_directory_is_reclaimed(sleeper):
    name = unique()
    proc = sleeper(name)
    # SIGKILL the host and leave it a zombie (its pid still exists): its directory stays
    # behind, and what tells it is stale is the lock on its pid file, which died with it.
    os.kill(proc.pid, 9)
    assert wait_for(lambda: not process_alive(proc.pid))
    assert os.path.exists(f"/proc/{proc.pid}")
    assert os.path.exists(f"{runtime_root()}/{name}/pid")
    # The same name can be used again: the stale directory is replaced.
    r = subprocess.run([SANDLOCK, "run", *SYSTEM_READ, "--name", name, "--", "true"],
                       capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(f"{runtime_root()}/{name}")
    proc.communicate(timeout=30)


# ---- ps, inspect, kill ----------------------------------------------------------------------------

def test_ps_lists_a_running_sandbox(sleeper):
    name = unique()
    proc = sleeper(name)
    spid, _ = pid_file(name)
    rows = ps_rows()
    assert rows[name]["pid"] == spid
    assert rows[name]["status"] == "running"
    assert rows[name]["ports"] == "-"
    assert rows[name]["cmd"] == "sleep 60"
    assert rows[name]["uptime"].endswith("s")
    stop(proc)
    assert name not in ps_rows()


def test_ps_without_sandboxes():
    if os.geteuid() == 0:
        # A uid that has never run a sandbox: its listing is certainly empty.
        r = subprocess.run([SANDLOCK, "ps"], capture_output=True, timeout=30,
                           preexec_fn=as_uid(NOBODY - 1))
    else:
        r = sandlock("ps")
        if r.stdout != b"No running sandboxes.\n":
            pytest.fail(f"sandboxes left running by earlier tests: {r.stdout!r}")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"No running sandboxes.\n"


def test_inspect_shows_the_effective_policy(sleeper, sandbox_dir):
    name = unique()
    sleeper(name, "-w", str(sandbox_dir), "--env", "FOO=bar", "--no-coredump")
    r = sandlock("inspect", name)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["program"]["exec"] == "sleep"
    assert doc["program"]["args"] == ["60"]
    assert doc["program"]["env"] == {"FOO": "bar"}
    assert doc["filesystem"]["read"] == [d for d in SYSTEM_READ if d != "-r"]
    assert doc["filesystem"]["write"] == [str(sandbox_dir)]
    assert doc["program"]["no_coredump"] is True
    assert doc["runtime"]["name"] == name

    r = sandlock("inspect", name, "--toml")
    assert r.returncode == 0, r.stderr
    text = r.stdout.decode()
    assert f'write = ["{sandbox_dir}"]' in text
    assert 'exec = "sleep"' in text
    # The TOML is a profile: it loads again, to the same policy.
    prof = sandbox_dir / "again.toml"
    prof.write_text(text)
    r = subprocess.run([SANDLOCK, "run", "--profile-file", str(prof), "--", "true"],
                       capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr


def test_inspect_unknown_name():
    name = unique()
    r = sandlock("inspect", name)
    assert r.returncode == 1
    assert r.stderr.decode() == f"sandlock: no running sandbox named {name}\n"


def test_kill_ends_the_whole_sandbox(sleeper):
    name = unique()
    proc = sleeper(name)
    spid, host = pid_file(name)
    # The negative control: it runs, and keeps running without the kill.
    time.sleep(0.2)
    assert process_alive(spid) and proc.poll() is None
    r = sandlock("kill", name)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == (f"killed {name}: pid {spid}, process groups {spid}, "
                                 "and its supervisor\n")
    # Nothing of it is left: the command, its supervisor (the `sandlock run` host exits
    # 128 + SIGKILL), the directory, the listing.
    assert proc.wait(timeout=30) == 137
    assert not process_alive(spid)
    assert not os.path.exists(f"{runtime_root()}/{name}")
    assert name not in ps_rows()


def test_kill_reaches_every_process_group(sleeper, sandbox_dir):
    name = unique()
    # The command starts a second process group (setsid) and records its pid.
    pidf = sandbox_dir / "child"
    proc = subprocess.Popen(
        [SANDLOCK, "run", *SYSTEM_READ, "-r", "/dev/null", "-w", str(sandbox_dir), "--name",
         name, "--", "sh",
         "-c", f"setsid sleep 60 & echo $! > {pidf}; wait"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert wait_for(lambda: pidf.exists() and pidf.read_text().strip())
        child = int(pidf.read_text())
        # Until setsid(2) has run, the child is still in the first group.
        assert wait_for(lambda: process_alive(child) and running(name) and
                        session_of(child) == child)
        r = sandlock("kill", name)
        assert r.returncode == 0, r.stderr
        groups = r.stdout.decode().split("process groups ")[1].split(",")[0].split()
        assert str(child) in groups
        assert wait_for(lambda: not process_alive(child))
        assert proc.wait(timeout=30) == 137
    finally:
        stop(proc)


def test_kill_unknown_name():
    name = unique()
    r = sandlock("kill", name)
    assert r.returncode == 1
    assert r.stderr.decode() == f"sandlock: no running sandbox named {name}\n"


def test_usage_errors():
    for args in (["ps", "x"], ["inspect"], ["inspect", "a", "b"], ["inspect", "a", "--json"],
                 ["kill"], ["kill", "a", "b"]):
        r = sandlock(*args)
        assert r.returncode == 2, args
        assert r.stderr.decode().startswith("sandlock: usage: sandlock "), args


VERB_USAGE = {
    "ps": "sandlock ps",
    "inspect": "sandlock inspect [--toml] [--] NAME",
    "kill": "sandlock kill [--] NAME",
    "check": "sandlock check",
    "profile": "sandlock profile list | show NAME | delete NAME",
}


@pytest.mark.parametrize("verb", sorted(VERB_USAGE))
def test_verb_help_is_stdout_exit_0(verb):
    # As `run --help`: the usage and what the verb does on stdout, exit 0, nothing on stderr.
    for flag in ("--help", "-h"):
        r = sandlock(verb, flag)
        assert (r.returncode, r.stderr) == (0, b""), (verb, flag, r.stderr)
        out = r.stdout.decode().splitlines()
        assert out[0] == f"Usage: {VERB_USAGE[verb]}", (verb, flag)
        assert out[1] == "" and len(out) > 2, (verb, flag)
    # Control: bad usage still goes to stderr with exit 2 and the same synopsis.
    bad = {"ps": ["x"], "inspect": [], "kill": [], "check": ["x"], "profile": []}[verb]
    r = sandlock(verb, *bad)
    assert (r.returncode, r.stdout) == (2, b""), verb
    assert r.stderr.decode() == f"sandlock: usage: {VERB_USAGE[verb]}\n", verb


def test_help_after_dashdash_is_a_name():
    # After "--", --help is the sandbox's name, not a request for help.
    r = sandlock("kill", "--", "--help")
    assert (r.returncode, r.stdout) == (1, b"")
    assert r.stderr.decode() == "sandlock: no running sandbox named --help\n"
    r = sandlock("inspect", "--toml", "--", "--help")
    assert (r.returncode, r.stdout) == (1, b"")
    assert r.stderr.decode() == "sandlock: no running sandbox named --help\n"


def request(path, line):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    data = b""
    try:
        s.sendall(line)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, BrokenPipeError):
        # The server closed with our request unread: no answer, as with a plain close.
        assert data == b""
    s.close()
    return data


def test_control_protocol(sleeper):
    name = unique()
    sleeper(name)
    path = f"{runtime_root()}/{name}/control.sock"
    info = json.loads(request(path, b'{"cmd":"info"}\n'))
    assert info["name"] == name and info["status"] == "running" and info["cmd"] == ["sleep", "60"]
    assert json.loads(request(path, b'{"cmd":"nope"}\n')) == {"error": "unknown command"}
    assert json.loads(request(path, b'not json\n')) == {"error": "expected {\"cmd\": ...}"}
    # A request without its newline, then closed: no answer, and the sandbox still answers.
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(b'{"cmd":')
    s.shutdown(socket.SHUT_WR)
    s.settimeout(10)
    assert s.recv(100) == b""
    s.close()
    assert json.loads(request(path, b'{"cmd":"info"}\n'))["name"] == name
    # Too long a line is dropped, not buffered without end.
    assert request(path, b"x" * 4096 + b"\n") == b""


def test_control_socket_refuses_another_uid(sleeper):
    if os.geteuid() != 0:
        # One uid only: what keeps others out is the modes (0700 directory, 0600 socket),
        # checked in test_runtime_directory_layout; SO_PEERCRED needs a second uid.
        name = unique()
        sleeper(name)
        path = f"{runtime_root()}/{name}/control.sock"
        assert json.loads(request(path, b'{"cmd":"info"}\n'))["name"] == name
        return
    # A sandbox of uid NOBODY; root passes the directory modes (CAP_DAC_OVERRIDE), so only
    # the SO_PEERCRED check stands between it and the socket.
    name = unique()
    env = dict(os.environ, HOME="/")
    sleeper(name, preexec_fn=as_uid(NOBODY), env=env)
    path = f"{runtime_root(NOBODY)}/{name}/control.sock"
    assert request(path, b'{"cmd":"info"}\n') == b""
    assert request(path, b'{"cmd":"kill"}\n') == b""
    # The negative control: the same request as the sandbox's own uid is answered.
    code = ("import socket,sys\n"
            "s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
            "s.sendall(b'{\"cmd\":\"info\"}\\n'); sys.stdout.write(s.makefile('rb').read().decode())\n")
    r = subprocess.run(["/usr/bin/python3", "-c", code, path], capture_output=True, timeout=30,
                       preexec_fn=as_uid(NOBODY))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["name"] == name
    # And `sandlock ps` of root does not see it; that of its uid does.
    assert name not in ps_rows()
    r = subprocess.run([SANDLOCK, "ps"], capture_output=True, timeout=30,
                       preexec_fn=as_uid(NOBODY))
    assert name in r.stdout.decode()


CONNECT = """
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
try:
    s.connect(sys.argv[1])
    s.sendall(sys.argv[2].encode() + b"\\n")
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    print(json.dumps({"answer": data.decode()}))
except OSError as e:
    print(json.dumps({"errno": e.errno}))
"""


def test_a_sandbox_cannot_use_another_sandboxs_socket(sleeper):
    # Landlock does not cover connecting to a socket by path, so the socket itself must refuse
    # a peer that is confined, even of the same uid.
    victim = unique("victim")
    sleeper(victim)
    spid, _ = pid_file(victim)
    path = f"{runtime_root()}/{victim}/control.sock"
    # The negative control: the same program outside any sandbox is answered.
    out = subprocess.run(["/usr/bin/python3", "-c", CONNECT, path, '{"cmd":"info"}'],
                         capture_output=True, timeout=30)
    assert json.loads(json.loads(out.stdout)["answer"])["name"] == victim
    for flags in ([], ["--no-supervisor"]):
        r = subprocess.run([SANDLOCK, "run", *SYSTEM_READ, *flags, "--", "/usr/bin/python3",
                            "-c", CONNECT, path, '{"cmd":"kill"}'],
                           capture_output=True, timeout=30)
        assert r.returncode == 0, r.stderr
        got = json.loads(r.stdout)
        if flags:  # the kernel connects; the server refuses a confined peer
            assert got in ({"answer": ""}, {"errno": 104}, {"errno": 32}), (flags, got)
        else:  # no write grant there: the supervisor refuses the connect
            assert got == {"errno": 13}, got
        time.sleep(0.1)
        assert process_alive(spid), flags
    assert running(victim)


def test_a_sandbox_cannot_fake_the_socket(sleeper, sandbox_dir):
    # A workload with a write grant on the runtime directory replaces a sandbox's socket with
    # its own server: the client refuses it, since its server is confined.
    name = unique()
    sleeper(name)
    d = f"{runtime_root()}/{name}"
    fake = ("import os, socket, sys\n"
            "d = sys.argv[1]\n"
            "os.unlink(d + '/control.sock')\n"
            "s = socket.socket(socket.AF_UNIX); s.bind(d + '/control.sock'); s.listen(4)\n"
            "print('ready', flush=True)\n"
            "while True:\n"
            "    c, _ = s.accept(); c.recv(100)\n"
            "    c.sendall(b'{\"name\": \"fake\", \"pid\": 1, \"groups\": [], \"reached\": 1}\\n')\n"
            "    c.close()\n")
    proc = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, "-w", d, "--", "/usr/bin/python3",
                             "-c", fake, d], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"ready\n", proc.stderr.read()
        r = sandlock("kill", name)
        assert r.returncode == 1
        assert r.stderr.decode() == (f"sandlock: {name}: the control socket is not served by "
                                     "sandlock\n")
        r = sandlock("inspect", name)
        assert r.returncode == 1
    finally:
        stop(proc)


def test_idle_clients_do_not_lock_others_out(sleeper):
    name = unique()
    sleeper(name)
    path = f"{runtime_root()}/{name}/control.sock"
    idle = []
    for _ in range(8):
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        idle.append(s)
    try:
        assert ps_rows()[name]["status"] == "running"
        r = sandlock("inspect", name)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["runtime"]["name"] == name
    finally:
        for s in idle:
            s.close()


def test_ps_with_a_stopped_host(sleeper):
    name = unique()
    proc = sleeper(name)
    os.kill(proc.pid, 19)  # SIGSTOP: the host's event loop cannot answer
    try:
        start_t = time.monotonic()
        rows = ps_rows()
        assert time.monotonic() - start_t < 10
        assert rows[name]["status"] == "unresponsive"
        r = sandlock("inspect", name)
        assert r.returncode == 1
        assert r.stderr.decode() == "sandlock: the sandbox did not answer\n"
    finally:
        os.kill(proc.pid, 18)  # SIGCONT
    # The negative control: once it runs again it answers.
    assert ps_rows()[name]["status"] == "running"


def test_a_name_that_starts_with_a_dash(sleeper):
    name = "-" + unique()
    sleeper(name)
    assert name in ps_rows()
    r = sandlock("inspect", "--", name)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["runtime"]["name"] == name
    r = sandlock("kill", "--", name)
    assert r.returncode == 0, r.stderr
    assert name not in ps_rows()


def bad_root(uid):
    """Make /dev/shm/sandlock-UID a directory others may write (root: owned by root), with a
    symlink planted in it that leads to a directory holding files named like ours."""
    root = runtime_root(uid)
    victim = f"/tmp/sandlock-victim-{uuid.uuid4().hex[:8]}"
    os.mkdir(victim)
    for f in ("pid", "control.sock"):
        with open(f"{victim}/{f}", "w") as fh:
            fh.write("precious\n")
    if uid != os.geteuid():
        # Another user made it first.
        subprocess.run(["rm", "-rf", root], check=True)
        os.mkdir(root)
    elif not os.path.exists(root):
        os.mkdir(root)
    os.chmod(root, 0o777)
    os.symlink(victim, f"{root}/evil")
    return root, victim


def test_a_root_that_is_not_ours_is_neither_trusted_nor_fatal():
    uid = NOBODY - 2 if os.geteuid() == 0 else os.geteuid()
    pre = as_uid(uid) if os.geteuid() == 0 else None
    env = dict(os.environ, HOME="/")
    root, victim = bad_root(uid)
    try:
        r = subprocess.run([SANDLOCK, "ps"], capture_output=True, timeout=30, preexec_fn=pre,
                           env=env)
        assert r.returncode == 1
        assert r.stderr.decode() == f"sandlock: {root} is not a private directory of this user\n"
        # Nothing was removed through the planted link.
        assert sorted(os.listdir(victim)) == ["control.sock", "pid"]
        # Running still works, without a runtime directory.
        name = unique()
        r = subprocess.run([SANDLOCK, "run", *SYSTEM_READ, "--name", name, "--", "true"],
                           capture_output=True, timeout=30, preexec_fn=pre, env=env)
        assert r.returncode == 0, r.stderr
        # Without a directory of its own there (another sandbox of this user still ending
        # from an earlier test may have one: not this run's business).
        assert "evil" in os.listdir(root) and name not in os.listdir(root)
        r = subprocess.run([SANDLOCK, "inspect", name], capture_output=True, timeout=30,
                           preexec_fn=pre, env=env)
        assert r.returncode == 1
    finally:
        os.unlink(f"{root}/evil")
        subprocess.run(["rm", "-rf", victim], check=True)
        if uid == os.geteuid():
            os.chmod(root, 0o700)
        else:
            os.rmdir(root)
    # The negative control: with the root private again, ps works.
    r = subprocess.run([SANDLOCK, "ps"], capture_output=True, timeout=30, preexec_fn=pre,
                       env=env)
    assert r.returncode == 0, r.stderr


def test_a_control_socket_under_another_name(sleeper):
    # A hard link to a control socket from a directory the sandbox may write: the socket is
    # known by its inode, not its path, and refused (the connect would be the supervisor's,
    # which the server could not tell from sandlock's own).
    victim = unique("victim")
    sleeper(victim)
    import shutil
    import tempfile
    tmp_path = __import__("pathlib").Path(tempfile.mkdtemp(dir="/dev/shm"))  # same fs
    request_cleanup = lambda: shutil.rmtree(tmp_path, ignore_errors=True)  # noqa: E731
    link = tmp_path / "control.link"
    os.link(f"{runtime_root()}/{victim}/control.sock", link)
    out = subprocess.run(["/usr/bin/python3", "-c", CONNECT, str(link), '{"cmd":"info"}'],
                         capture_output=True, timeout=30)
    assert json.loads(json.loads(out.stdout)["answer"])["name"] == victim  # the control
    r = subprocess.run([SANDLOCK, "run", *SYSTEM_READ, "-w", str(tmp_path), "--",
                        "/usr/bin/python3", "-c", CONNECT, str(link), '{"cmd":"kill"}'],
                       capture_output=True, timeout=30)
    request_cleanup()
    assert json.loads(r.stdout) == {"errno": 13}, r.stderr
    assert running(victim)


def test_a_control_socket_moved_away_answers_nobody(sleeper):
    # Renamed out of its directory, the socket's own server refuses every client: whoever
    # reaches it there went around the path checks.
    victim = unique("victim")
    sleeper(victim)
    path = f"{runtime_root()}/{victim}/control.sock"
    out = subprocess.run(["/usr/bin/python3", "-c", CONNECT, path, '{"cmd":"info"}'],
                         capture_output=True, timeout=30)
    assert json.loads(json.loads(out.stdout)["answer"])["name"] == victim  # the control
    moved = f"{runtime_root()}/{victim}.moved.sock"
    os.rename(path, moved)
    try:
        out = subprocess.run(["/usr/bin/python3", "-c", CONNECT, moved, '{"cmd":"info"}'],
                             capture_output=True, timeout=30)
        assert json.loads(out.stdout) in ({"answer": ""}, {"errno": 104}, {"errno": 32}), \
            out.stdout
    finally:
        os.rename(moved, path)
    assert running(victim)
