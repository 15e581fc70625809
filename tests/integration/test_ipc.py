# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the sandbox can reach outside itself: TCP (Landlock net, default deny), signals and
abstract UNIX sockets (Landlock scopes), and inherited descriptors (closed before exec)."""

import errno
import fcntl
import os
import socket
import subprocess
import uuid

import pytest

from conftest import (PRELUDE, PY, SYSTEM_READ, process_alive, py_inside, py_outside,
                      result_json, run)


@pytest.fixture
def tcp_listener():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    yield s.getsockname()[1]
    s.close()


CONNECT = """
import sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
out(s.connect_ex(("127.0.0.1", int(sys.argv[1]))))
"""


def test_tcp_connect_denied_by_default(tcp_listener):
    port = str(tcp_listener)
    outside = subprocess.run([PY, "-c", PRELUDE + CONNECT, port], capture_output=True,
                             timeout=30)
    assert result_json(outside) == 0
    inside = run(*SYSTEM_READ, "--", PY, "-c", PRELUDE + CONNECT, port, timeout=30)
    assert result_json(inside) == errno.EACCES


def test_tcp_connect_allowed_with_net_tcp_disabled(tcp_listener):
    # With the Landlock TCP protection disabled the same connect goes through: the EACCES
    # above is the sandbox's, not the listener's.
    port = str(tcp_listener)
    inside = run(*SYSTEM_READ, "--disable", "net-tcp", "--", PY, "-c", PRELUDE + CONNECT, port,
                 timeout=30)
    assert result_json(inside) == 0


BIND = """
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
try:
    s.bind(("127.0.0.1", 0))
    out(0)
except OSError as e:
    out(e.errno)
"""


def test_tcp_bind_denied_by_default():
    assert result_json(py_outside(BIND)) == 0
    assert result_json(py_inside(BIND)) == errno.EACCES


@pytest.fixture
def outside_sleep(unique_sleep):
    argv = unique_sleep()
    p = subprocess.Popen(argv)
    yield p
    p.kill()
    p.wait()


KILL = """
import sys
try:
    os.kill(int(sys.argv[1]), int(sys.argv[2]))
    out(0)
except OSError as e:
    out(e.errno)
"""


def kill_from_sandbox(pid, sig, *flags):
    return result_json(run(*SYSTEM_READ, *flags, "--", PY, "-c", PRELUDE + KILL, str(pid),
                           str(sig), timeout=30))


def test_cannot_signal_outside_process(outside_sleep):
    pid = outside_sleep.pid
    # Control: the same snippet outside may signal it.
    outside = subprocess.run([PY, "-c", PRELUDE + KILL, str(pid), "0"], capture_output=True,
                             timeout=30)
    assert result_json(outside) == 0
    assert kill_from_sandbox(pid, 0) == errno.EPERM
    assert kill_from_sandbox(pid, 15) == errno.EPERM
    assert process_alive(pid)


def test_signal_scope_disabled_can_signal_outside(outside_sleep):
    pid = outside_sleep.pid
    assert kill_from_sandbox(pid, 0, "--disable", "signal-scope") == 0
    assert kill_from_sandbox(pid, 15, "--disable", "signal-scope") == 0
    assert outside_sleep.wait(timeout=10) == -15


def test_can_signal_own_child():
    code = """
pid = os.fork()
if pid == 0:
    import time
    time.sleep(60)
    os._exit(0)
os.kill(pid, signal.SIGTERM)
_, status = os.waitpid(pid, 0)
out(os.waitstatus_to_exitcode(status))
"""
    assert result_json(py_outside(code)) == -15
    assert result_json(py_inside(code)) == -15


@pytest.fixture
def abstract_listener():
    name = "\0sandlock-test-" + uuid.uuid4().hex
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(name)
    s.listen(16)
    yield name[1:]
    s.close()


UNIX_CONNECT = """
import sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect("\\0" + sys.argv[1])
    out(0)
except OSError as e:
    out(e.errno)
"""


def test_abstract_unix_socket_scoped(abstract_listener):
    outside = subprocess.run([PY, "-c", PRELUDE + UNIX_CONNECT, abstract_listener],
                             capture_output=True, timeout=30)
    assert result_json(outside) == 0
    inside = run(*SYSTEM_READ, "--", PY, "-c", PRELUDE + UNIX_CONNECT, abstract_listener,
                 timeout=30)
    assert result_json(inside) == errno.EPERM
    unscoped = run(*SYSTEM_READ, "--disable", "abstract-unix-socket-scope", "--", PY, "-c",
                   PRELUDE + UNIX_CONNECT, abstract_listener, timeout=30)
    assert result_json(unscoped) == 0


def test_abstract_unix_socket_inside_sandbox_refused():
    # Between processes of the same sandbox too (docs/decisions.md: the supervisor cannot
    # connect inside Landlock's scope, and letting the kernel read the name again would let a
    # path past the write-grant check); a socketpair is the way.
    code = """
import uuid
name = "\\0sandlock-inner-" + uuid.uuid4().hex
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(name)
srv.listen(1)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    c.connect(name)
except OSError as e:
    out(e.errno)
else:
    conn, _ = srv.accept()
    c.sendall(b"ping")
    out(conn.recv(4).decode())
"""
    assert result_json(py_outside(code)) == "ping"
    assert result_json(py_inside(code)) == errno.EPERM
    assert result_json(py_inside(code, "--disable", "abstract-unix-socket-scope")) == "ping"


FSTAT = """
import sys
res = []
for fd in map(int, sys.argv[1:]):
    try:
        os.fstat(fd)
        res.append(0)
    except OSError as e:
        res.append(e.errno)
out(res)
"""


def test_inherited_fds_are_closed(tmp_path):
    f = tmp_path / "leak.txt"
    f.write_text("not for the sandbox")
    fd = os.open(f, os.O_RDONLY)  # inheritable only through pass_fds
    rfd, wfd = os.pipe()
    try:
        fds = [str(fd), str(rfd), str(wfd)]
        plain = subprocess.run([PY, "-c", PRELUDE + FSTAT, *fds], capture_output=True,
                               pass_fds=(fd, rfd, wfd), timeout=30)
        assert result_json(plain) == [0, 0, 0]
        boxed = run(*SYSTEM_READ, "--", PY, "-c", PRELUDE + FSTAT, *fds,
                    pass_fds=(fd, rfd, wfd), timeout=30)
        assert result_json(boxed) == [errno.EBADF] * 3
    finally:
        os.close(fd)
        os.close(rfd)
        os.close(wfd)


def test_inherited_fds_not_in_proc_self_fd():
    low = os.open("/dev/null", os.O_RDONLY)
    fd = fcntl.fcntl(low, fcntl.F_DUPFD, 100)  # well above what ls opens itself
    os.close(low)
    try:
        r = run(*SYSTEM_READ, "-r", "/proc", "--", "ls", "/proc/self/fd", pass_fds=(fd,),
                timeout=30)
        assert r.returncode == 0, r.stderr
        listed = sorted(int(x) for x in r.stdout.split())
        # 0, 1, 2 and the directory ls itself has open; not @fd.
        assert fd not in listed
        assert listed[:3] == [0, 1, 2]
        assert len(listed) == 4
        plain = subprocess.run(["ls", "/proc/self/fd"], pass_fds=(fd,), capture_output=True,
                               timeout=30)
        assert fd in [int(x) for x in plain.stdout.split()]
    finally:
        os.close(fd)


# Changing another process's resource limits, nice value or CPU affinity needs only the same
# uid, and Landlock scopes none of them. A sandbox that may not even signal an outside process
# (SignalScope) must not be able to lower its RLIMIT_CPU (which the kernel enforces with
# SIGXCPU/SIGKILL: a kill by other means) or starve it.
INTERFERE = """
import resource, sys
pid, what = int(sys.argv[1]), sys.argv[2]
try:
    if what == "prlimit":
        resource.prlimit(pid, resource.RLIMIT_NOFILE, (7, 7))
    elif what == "setpriority":
        os.setpriority(os.PRIO_PROCESS, pid, 19)
    else:
        os.sched_setaffinity(pid, {min(os.sched_getaffinity(pid))})
    out(0)
except OSError as e:
    out(e.errno)
"""


def _state(pid):
    return (open(f"/proc/{pid}/limits").read(), os.getpriority(os.PRIO_PROCESS, pid),
            os.sched_getaffinity(pid))


@pytest.mark.parametrize("what", ["prlimit", "setpriority", "sched_setaffinity"])
def test_cannot_change_outside_process(what, unique_sleep):
    control = subprocess.Popen(unique_sleep())
    victim = subprocess.Popen(unique_sleep())
    try:
        before = _state(control.pid)
        outside = subprocess.run([PY, "-c", PRELUDE + INTERFERE, str(control.pid), what],
                                 capture_output=True, timeout=30)
        assert result_json(outside) == 0
        if what == "sched_setaffinity" and len(before[2]) == 1:
            pytest.skip("one CPU: an affinity change cannot be observed")
        assert _state(control.pid) != before  # the control changed something observable

        before = _state(victim.pid)
        inside = run(*SYSTEM_READ, "--", PY, "-c", PRELUDE + INTERFERE, str(victim.pid), what,
                     timeout=30)
        assert result_json(inside) == errno.EPERM
        assert _state(victim.pid) == before
    finally:
        for p in (control, victim):
            p.kill()
            p.wait()


# Inside the sandbox the same calls work: the target is one of the sandbox's own processes.
INSIDE_TARGET = """
import resource, time
pid = os.fork()
if pid == 0:
    time.sleep(5)
    os._exit(0)
res = []
# The group first: raising a nice value needs no privilege, lowering it does (non-root).
for what in ("pgrp", "prlimit", "setpriority", "sched_setaffinity"):
    try:
        if what == "prlimit":
            resource.prlimit(pid, resource.RLIMIT_NOFILE, (7, 7))
        elif what == "setpriority":
            os.setpriority(os.PRIO_PROCESS, pid, 19)
        elif what == "pgrp":
            os.setpriority(os.PRIO_PGRP, os.getpgrp(), 18)
        else:
            os.sched_setaffinity(pid, {min(os.sched_getaffinity(0))})
        res.append(0)
    except OSError as e:
        res.append(e.errno)
limits = open(f"/proc/{pid}/limits").read()
res.append("Max open files            7                    7" in limits)
res.append([os.getpriority(os.PRIO_PROCESS, pid), os.getpriority(os.PRIO_PROCESS, 0)])
os.kill(pid, 9)
os.waitpid(pid, 0)
try:
    os.setpriority(os.PRIO_USER, 0, 19)
    res.append(0)
except OSError as e:
    res.append(e.errno)
out(res)
"""


@pytest.mark.parametrize("flags", [[], ["--no-supervisor"]])
def test_change_own_processes(flags):
    r = run(*flags, *SYSTEM_READ, "-r", "/proc", "--", PY, "-c", PRELUDE + INSIDE_TARGET,
            timeout=30)
    got = result_json(r)
    if flags:
        # Without a supervisor nobody can tell a child from an outside process: refused.
        # That includes naming the caller's own group by number (PRIO_PGRP, who = pgid).
        assert got[:4] == [errno.EPERM] * 4
    else:
        assert got[:4] == [0, 0, 0, 0]
        assert got[4] is True and got[5] == [19, 18]
    # PRIO_USER reaches every process of the uid, inside or not: always refused.
    assert got[6] == errno.EPERM


# Landlock's TCP rules cover IPPROTO_TCP only: an MPTCP (or SCTP) stream socket would connect
# unchecked, so the filter allows IPv4/IPv6 stream sockets with protocol 0 or TCP only.
MPTCP_CONNECT = """
import sys
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262)  # IPPROTO_MPTCP
except OSError as e:
    out(["socket", e.errno])
else:
    out(["connect", s.connect_ex(("127.0.0.1", int(sys.argv[1])))])
"""


def test_mptcp_refused(tcp_listener):
    port = str(tcp_listener)
    outside = subprocess.run([PY, "-c", PRELUDE + MPTCP_CONNECT, port], capture_output=True,
                             timeout=30)
    if result_json(outside) != ["connect", 0]:
        pytest.skip(f"MPTCP is not available on this kernel ({result_json(outside)})")
    inside = run(*SYSTEM_READ, "--", PY, "-c", PRELUDE + MPTCP_CONNECT, port, timeout=30)
    assert result_json(inside) == ["socket", errno.EPERM]


PACKET = """
try:
    socket.socket(socket.AF_INET, 10, 0x0300)  # SOCK_PACKET: the kernel's AF_PACKET alias
    out(0)
except OSError as e:
    out(e.errno)
"""


def test_sock_packet_refused():
    # Outside: root may create it, others get EPERM from the kernel (CAP_NET_RAW); inside it
    # is EPERM for everyone, from the filter before any capability check.
    outside = result_json(py_outside(PACKET))
    assert outside in (0, errno.EPERM)
    assert result_json(py_inside(PACKET)) == errno.EPERM
    if os.geteuid() == 0:
        assert outside == 0  # the control that shows the filter is what refuses it


NETLINK = """
res = []
for proto in (0, 4, 15):  # ROUTE, SOCK_DIAG, KOBJECT_UEVENT
    try:
        socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, proto).close()
        res.append(0)
    except OSError as e:
        res.append(e.errno)
out(res)
"""


def test_netlink_route_only():
    # SOCK_DIAG would list the host's sockets, KOBJECT_UEVENT its devices: only ROUTE stays.
    assert result_json(py_outside(NETLINK)) == [0, 0, 0]  # control: the host has them all
    assert result_json(py_inside(NETLINK)) == [0, errno.EPROTONOSUPPORT,
                                              errno.EPROTONOSUPPORT]
