# SPDX-License-Identifier: LGPL-2.1-or-later
"""Outbound TCP rules to IPs and CIDRs, and deny rules, enforced on the child's behalf: the
supervisor copies the address, takes the socket with pidfd_getfd, matches, and connects it
itself. Every refusal is against a live loopback listener that accepts the same connection
from outside the sandbox."""

import socket
import subprocess
import time

import pytest

from conftest import SYSTEM_READ, landlock_abi, require, run

CLIENT = """
import socket, sys
for t in sys.argv[1:]:
    host, port = t.rsplit(":", 1)
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    print(t, s.connect_ex((host, int(port))))
"""


@pytest.fixture(autouse=True)
def _net_tcp():
    require(landlock_abi() >= 4, "Landlock ABI 4 (NetTcp)")


@pytest.fixture
def servers():
    """Listeners on 127.0.0.1, 127.0.0.2 and ::1, all on the same port, plus a second port on
    127.0.0.1: {"v4": port, "other": port2}."""
    a = socket.socket()
    a.bind(("127.0.0.1", 0))
    port = a.getsockname()[1]
    socks = [a]
    for host, fam in (("127.0.0.2", socket.AF_INET), ("::1", socket.AF_INET6)):
        s = socket.socket(fam)
        try:
            s.bind((host, port))
        except OSError:
            require(False, f"a loopback listener on {host}")
        socks.append(s)
    b = socket.socket()
    b.bind(("127.0.0.1", 0))
    socks.append(b)
    for s in socks:
        s.listen(16)
    yield {"port": port, "other": b.getsockname()[1]}
    for s in socks:
        s.close()


def connects(rules, *targets):
    r = run(*SYSTEM_READ, *rules, "--", "/usr/bin/python3", "-c", CLIENT, *targets, timeout=30)
    assert r.returncode == 0, r.stderr
    return dict(line.rsplit(" ", 1) for line in r.stdout.decode().splitlines())


def test_exact_address_and_port(servers):
    p, q = servers["port"], servers["other"]
    targets = [f"127.0.0.1:{p}", f"127.0.0.2:{p}", f"127.0.0.1:{q}", f"::1:{p}"]
    # Control: from outside, every listener accepts.
    for t in targets:
        host, port = t.rsplit(":", 1)
        socket.create_connection((host, int(port)), timeout=5).close()
    got = connects(["--net-allow", f"tcp://127.0.0.1:{p}"], *targets)
    assert got == {targets[0]: "0", targets[1]: "111", targets[2]: "111", targets[3]: "111"}


def test_default_is_deny_all(servers):
    p = servers["port"]
    # With no rule the kernel refuses (Landlock, EACCES); with a rule for another address
    # the supervisor does (ECONNREFUSED).
    assert connects([], f"127.0.0.1:{p}") == {f"127.0.0.1:{p}": "13"}
    assert connects(["--net-allow", "tcp://10.0.0.1:1"], f"127.0.0.1:{p}") == {
        f"127.0.0.1:{p}": "111"}


def test_cidr_and_deny_wins(servers):
    p, q = servers["port"], servers["other"]
    targets = [f"127.0.0.1:{p}", f"127.0.0.2:{p}", f"127.0.0.1:{q}", f"::1:{p}"]
    got = connects(["--net-allow", "tcp://127.0.0.0/8", "--net-deny", "127.0.0.2"], *targets)
    assert got == {targets[0]: "0", targets[1]: "111", targets[2]: "0", targets[3]: "111"}
    # Control: without the deny rule 127.0.0.2 is reached.
    got = connects(["--net-allow", "tcp://127.0.0.0/8"], targets[1])
    assert got == {targets[1]: "0"}


def test_deny_wins_over_a_direct_rule(servers):
    p = servers["port"]
    got = connects(["--net-allow", f"tcp://*:{p}", "--net-deny", "127.0.0.1/32"],
                   f"127.0.0.1:{p}", f"127.0.0.2:{p}")
    assert got == {f"127.0.0.1:{p}": "111", f"127.0.0.2:{p}": "0"}


def test_ipv6_and_mapped_ipv4(servers):
    p = servers["port"]
    got = connects(["--net-allow", f"tcp://[::1]:{p}"], f"::1:{p}", f"127.0.0.1:{p}")
    assert got == {f"::1:{p}": "0", f"127.0.0.1:{p}": "111"}
    # An IPv4-mapped destination is matched as the IPv4 address.
    got = connects(["--net-allow", f"tcp://127.0.0.1:{p}"], f"::ffff:127.0.0.1:{p}",
                   f"::ffff:127.0.0.2:{p}")
    assert got == {f"::ffff:127.0.0.1:{p}": "0", f"::ffff:127.0.0.2:{p}": "111"}


def test_grandchild_is_confined(servers):
    p = servers["port"]
    r = run(*SYSTEM_READ, "--net-allow", f"tcp://127.0.0.1:{p}", "--", "/bin/sh", "-c",
            f'/usr/bin/python3 -c "$0" 127.0.0.1:{p} 127.0.0.2:{p}', CLIENT, timeout=30)
    got = dict(line.rsplit(" ", 1) for line in r.stdout.decode().splitlines())
    assert got == {f"127.0.0.1:{p}": "0", f"127.0.0.2:{p}": "111"}


NONBLOCKING = """
import errno, select, socket, sys
s = socket.socket()
s.setblocking(False)
r = s.connect_ex(("127.0.0.1", int(sys.argv[1])))
select.select([], [s], [], 5)
print(errno.errorcode.get(r, r), s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR))
"""


def test_nonblocking_connect(servers):
    p = servers["port"]
    r = run(*SYSTEM_READ, "--net-allow", f"tcp://127.0.0.1:{p}", "--", "/usr/bin/python3",
            "-c", NONBLOCKING, str(p), timeout=30)
    assert r.stdout.decode().split() in (["EINPROGRESS", "0"], ["0", "0"])
    r = run(*SYSTEM_READ, "--net-allow", f"tcp://127.0.0.2:{p}", "--", "/usr/bin/python3",
            "-c", NONBLOCKING, str(p), timeout=30)
    assert r.stdout.decode().split() == ["ECONNREFUSED", "0"]


HOSTILE = """
import ctypes, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
s = socket.socket()
buf = ctypes.create_string_buffer(b"\\x02\\x00" + int(sys.argv[1]).to_bytes(2, "big")
                                  + bytes([127, 0, 0, 1]) + bytes(300))
for n in (16, 129, 1 << 20, 1):
    t = socket.socket()
    r = libc.connect(t.fileno(), buf, n)
    print(n, r, ctypes.get_errno() if r else 0)
"""


def test_hostile_addrlen(servers):
    p = servers["port"]
    r = run(*SYSTEM_READ, "--net-allow", f"tcp://127.0.0.1:{p}", "--", "/usr/bin/python3",
            "-c", HOSTILE, str(p), timeout=30)
    got = [line.split() for line in r.stdout.decode().splitlines()]
    # 16: a plain sockaddr_in (control, connects); beyond sockaddr_storage, or shorter than a
    # family, EINVAL (22), as the kernel says.
    assert got == [["16", "0", "0"], ["129", "-1", "22"], ["1048576", "-1", "22"],
                   ["1", "-1", "22"]]


SLOW = """
import os, socket, sys, time
pid = os.fork()
if pid == 0:  # a process of its own whose blocking connect hangs (the accept queue is full)
    s = socket.socket()
    s.connect(("127.0.0.1", int(sys.argv[1])))
    os._exit(0)
time.sleep(0.3)
t = time.monotonic()
os.uname()  # trapped: answered by the same supervisor loop
print("uname", round(time.monotonic() - t, 3))
print("pending", os.waitpid(pid, os.WNOHANG) == (0, 0))
"""


@pytest.fixture
def black_hole():
    """The port of a listener whose accept queue is full: further connects hang in SYN
    retries."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    port = srv.getsockname()[1]
    fillers = []
    for _ in range(4):
        c = socket.socket()
        c.setblocking(False)
        c.connect_ex(("127.0.0.1", port))
        fillers.append(c)
    time.sleep(0.2)
    yield port
    for c in fillers:
        c.close()
    srv.close()


def test_a_blocking_connect_does_not_stall_the_supervisor(black_hole):
    port = black_hole
    start = time.monotonic()
    r = run(*SYSTEM_READ, "--net-allow", f"tcp://127.0.0.1:{port}", "--", "/usr/bin/python3",
            "-c", SLOW, str(port), timeout=30)
    elapsed = time.monotonic() - start
    out = r.stdout.decode().split()
    # The connect was still pending, and uname was answered meanwhile.
    assert out[0] == "uname" and float(out[1]) < 0.5, (out, r.stderr)
    assert out[2:] == ["pending", "True"]
    # The stuck connect is cut short when the sandbox ends (not after TCP's retries).
    assert r.returncode == 0 and elapsed < 5


THREADED = """
import socket, sys, threading
res = []
t = threading.Thread(target=lambda: res.append(socket.socket().connect_ex(("127.0.0.1",
                                                                          int(sys.argv[1])))))
t.start()
t.join()
print(res[0])
"""


def test_connect_from_a_thread(servers):
    # The socket is taken from the calling thread's descriptor table, not the leader's.
    p = servers["port"]
    r = run(*SYSTEM_READ, "--net-allow", f"tcp://127.0.0.1:{p}", "--", "/usr/bin/python3",
            "-c", THREADED, str(p), timeout=30)
    assert r.stdout.decode().split() == ["0"], r.stderr
    r = run(*SYSTEM_READ, "--net-allow", f"tcp://127.0.0.2:{p}", "--", "/usr/bin/python3",
            "-c", THREADED, str(p), timeout=30)
    assert r.stdout.decode().split() == ["111"]  # control: the rule still decides


UNSPEC = """
import socket, sys
p = int(sys.argv[1])
for host, fam in (("0.0.0.0", socket.AF_INET), ("::", socket.AF_INET6),
                  ("::ffff:0.0.0.0", socket.AF_INET6)):
    s = socket.socket(fam)
    r = s.connect_ex((host, p))
    print(host, r, s.getpeername()[0] if r == 0 else "-")
"""


def test_unspecified_address_is_the_host(servers):
    # The kernel sends 0.0.0.0 and :: to loopback: deny rules for loopback cover them.
    p = servers["port"]
    r = run(*SYSTEM_READ, "--net-allow", f"tcp://*:{p}", "--net-deny", "127.0.0.0/8",
            "--net-deny", "::1", "--", "/usr/bin/python3", "-c", UNSPEC, str(p), timeout=30)
    assert [line.split() for line in r.stdout.decode().splitlines()] == [
        ["0.0.0.0", "111", "-"], ["::", "111", "-"], ["::ffff:0.0.0.0", "111", "-"]]
    # Control: allowed, they reach loopback (the address the rules were matched against).
    r = run(*SYSTEM_READ, "--net-allow", f"tcp://127.0.0.1:{p}", "--net-allow",
            f"tcp://[::1]:{p}", "--", "/usr/bin/python3", "-c", UNSPEC, str(p), timeout=30)
    assert [line.split() for line in r.stdout.decode().splitlines()] == [
        ["0.0.0.0", "0", "127.0.0.1"], ["::", "0", "::1"],
        ["::ffff:0.0.0.0", "0", "::ffff:127.0.0.1"]]


def test_onbehalf_needs_the_net_tcp_protection():
    r = run(*SYSTEM_READ, "--disable", "net-tcp", "--net-allow", "tcp://127.0.0.1:80", "--",
            "true", timeout=30)
    assert r.returncode == 1
    assert b"need the net-tcp protection" in r.stderr and b"disabled" in r.stderr
    # Control: a direct rule has nothing to protect once TCP is left open.
    assert run(*SYSTEM_READ, "--disable", "net-tcp", "--net-allow", "tcp://*:80", "--",
               "true").returncode == 0


def test_no_supervisor_refuses_onbehalf_rules():
    r = run(*SYSTEM_READ, "--no-supervisor", "--net-allow", "tcp://127.0.0.1:80", "--", "true",
            timeout=30)
    assert r.returncode == 1 and b"--no-supervisor: cannot enforce" in r.stderr
    # Control: a direct rule needs no supervisor.
    assert run(*SYSTEM_READ, "--no-supervisor", "--net-allow", "tcp://*:80", "--",
               "true").returncode == 0


def test_host_control_outside_sandbox(servers):
    # Sanity for the whole file: subprocess outside the sandbox reaches 127.0.0.2 (so the
    # refusals above are the policy's).
    p = servers["port"]
    out = subprocess.run(["/usr/bin/python3", "-c", CLIENT, f"127.0.0.2:{p}"],
                         capture_output=True, text=True, timeout=30).stdout
    assert out.split() == [f"127.0.0.2:{p}", "0"]


def test_stdin_socket_survives_a_sandbox_without_supervisor():
    # Nothing of the worker machinery may touch the host's descriptors when there is no
    # supervisor: a socket on sandlock's stdin keeps working for its peer afterwards.
    from conftest import SANDLOCK

    a, b = socket.socketpair()
    for extra in (["--no-supervisor"], []):  # the second run is the control
        r = subprocess.run([SANDLOCK, "run", *SYSTEM_READ, *extra, "--", "true"], stdin=b,
                           capture_output=True, timeout=30)
        assert r.returncode == 0, r.stderr
        a.sendall(b"ping")
        assert b.recv(4) == b"ping"
        b.sendall(b"pong")
        assert a.recv(4) == b"pong"
    a.close()
    b.close()


HOSTS_CLIENT = """
import socket, sys
p = int(sys.argv[1])
print(sorted(set(l.split()[0] for l in open("/etc/hosts") if l.strip())))
for host in ("localhost", "127.0.0.1", "127.0.0.2"):
    try:
        c = socket.create_connection((host, p), timeout=5)
        print(host, "ok", c.getpeername()[0])
    except OSError as e:
        print(host, e.errno)
"""


def test_hostname_rule_is_resolved_and_pinned(servers):
    # A rule naming a host: resolved once at start, pinned; the sandbox sees a synthetic
    # /etc/hosts with that name (and localhost) even without a grant on /etc.
    p = servers["port"]
    pinned = sorted({a[4][0] for a in socket.getaddrinfo("localhost", None,
                                                         type=socket.SOCK_STREAM)})
    require("127.0.0.1" in pinned, "localhost resolving to 127.0.0.1 on this host")
    r = run(*SYSTEM_READ, "--net-allow", f"tcp://localhost:{p}", "--", "/usr/bin/python3",
            "-c", HOSTS_CLIENT, str(p), timeout=30)
    lines = r.stdout.decode().splitlines()
    assert eval(lines[0]) == sorted({"127.0.0.1", "::1", *pinned}), r.stderr
    assert lines[1:] == ["localhost ok 127.0.0.1", "127.0.0.1 ok 127.0.0.1", "127.0.0.2 111"]
    # Control: without a host rule /etc/hosts is the real file, here not granted.
    r = run(*SYSTEM_READ, "--net-allow", f"tcp://127.0.0.1:{p}", "--", "cat", "/etc/hosts",
            timeout=30)
    assert r.returncode == 1 and b"Permission denied" in r.stderr


def test_unresolvable_host_fails_at_start():
    r = run(*SYSTEM_READ, "--net-allow", "tcp://no-such-host.invalid:80", "--", "true",
            timeout=60)
    assert r.returncode == 1
    assert r.stderr.decode().startswith(
        "sandlock: --net-allow: no-such-host.invalid: cannot resolve")


HOL = """
import os, socket, sys, time
hole, fast = int(sys.argv[1]), int(sys.argv[2])
stuck = []
for _ in range(3):  # processes of their own, each stuck in a blocking connect
    pid = os.fork()
    if pid == 0:
        socket.socket().connect(("127.0.0.1", hole))
        os._exit(0)
    stuck.append(pid)
time.sleep(0.3)
t = time.monotonic()
r = socket.socket().connect_ex(("127.0.0.1", fast))
print(r, round(time.monotonic() - t, 3), all(os.waitpid(p, os.WNOHANG) == (0, 0) for p in stuck))
"""


def test_a_slow_connect_does_not_hold_up_others(servers, black_hole):
    # Connects stuck on one destination must not queue a fast one behind them.
    hole, fast = black_hole, servers["port"]
    r = run(*SYSTEM_READ, "--net-allow", f"tcp://127.0.0.1:{hole}", "--net-allow",
            f"tcp://127.0.0.1:{fast}", "--", "/usr/bin/python3", "-c", HOL, str(hole),
            str(fast), timeout=30)
    code, took, pending = r.stdout.decode().split()
    assert code == "0" and float(took) < 0.5 and pending == "True", (r.stdout, r.stderr)


HOSTS_FLAGS = """
import fcntl, os
fd = os.open("/etc/hosts", os.O_RDONLY)
print(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY)
try:
    os.write(fd, b"x")
except OSError as e:
    print("write", e.errno)
try:
    os.open("/etc/hosts", os.O_RDONLY | os.O_DIRECTORY)
except OSError as e:
    print("directory", e.errno)
"""


def test_synthetic_hosts_is_a_plain_read_only_file(servers):
    # Only a plain read-only open is answered with the synthetic file, and that file is
    # read-only; anything else is the kernel's (O_DIRECTORY: ENOTDIR, as for the real one).
    p = servers["port"]
    r = run(*SYSTEM_READ, "--net-allow", f"tcp://localhost:{p}", "--", "/usr/bin/python3",
            "-c", HOSTS_FLAGS, timeout=30)
    assert r.stdout.decode().split() == ["True", "write", "9", "directory", "20"], r.stderr
