# SPDX-License-Identifier: LGPL-2.1-or-later
"""The supervisor's own decisions in the denial log (`sandlock run --log-denials`): a TCP
connect, a UDP send and a UDP connect without a rule, a net_deny rule, a named UNIX socket without a write
grant, an abstract UNIX name, a bind outside --net-allow-bind (refused by Landlock, judged for
the log, and refused by the supervisor under --port-remap), the process and memory limits, another process's priority. Each
line is checked exactly (but for the pid), the hint, applied, makes the run pass, and the
program's own output and status are the same with and without --log-denials. With
--log-events, the connects, sends and binds let through are events too (what `sandlock learn`
reads)."""

import json
import os
import re
import socket

import pytest

from conftest import PY, SYSTEM_READ, landlock_abi, require, run

CONNECT = """
import socket, sys
host, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
print(s.connect_ex((host, port)))
"""

SENDTO = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    print(s.sendto(b"ping", ("127.0.0.1", int(sys.argv[1]))))
except OSError as e:
    print(e.errno)
"""

BIND = """
import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
    print("ok")
except OSError as e:
    print(e.errno)
"""

UNIX = """
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1].replace("@", "\\0", 1))
    print("ok")
except OSError as e:
    print(e.errno)
"""

FORKS = """
import os, time
kids, errors = [], []
for _ in range(4):
    try:
        pid = os.fork()
    except OSError as e:
        errors.append(e.errno)
        continue
    if pid == 0:
        time.sleep(0.5)
        os._exit(0)
    kids.append(pid)
for k in kids:
    os.waitpid(k, 0)
print(len(kids), sorted(set(errors)))
"""

PID = re.compile(r" by pid \d+ ")


@pytest.fixture(autouse=True)
def _net_tcp():
    require(landlock_abi() >= 4, "Landlock ABI 4 (NetTcp)")


@pytest.fixture
def tcp_server():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    yield s.getsockname()[1]
    s.close()


@pytest.fixture
def udp_server():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(5)
    yield s
    s.close()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def py(code, *args, flags=(), log=True):
    r = run(*SYSTEM_READ, *(["--log-denials"] if log else []), *flags, "--", PY, "-c", code,
            *map(str, args), timeout=60)
    return r


def denials(r):
    """The denial lines, their pid made "PID"."""
    return [PID.sub(" by pid PID ", line) for line in r.stderr.decode().splitlines()
            if line.startswith("sandlock: denied ")]


def same_without_log(r, code, *args, flags=()):
    """The program's output and status do not depend on --log-denials."""
    plain = py(code, *args, flags=flags, log=False)
    assert (plain.returncode, plain.stdout) == (r.returncode, r.stdout)
    assert denials(plain) == []


def test_tcp_connect_without_a_rule(tcp_server):
    port = tcp_server
    flags = ("--net-allow", f"127.0.0.1:{port + 1 if port < 65535 else port - 1}")
    r = py(CONNECT, "127.0.0.1", port, flags=flags)
    assert r.stdout == b"111\n"  # ECONNREFUSED, what the supervisor answers
    assert denials(r) == [
        f"sandlock: denied connect(127.0.0.1:{port}) by pid PID (python3): no net_allow rule "
        f"covers 127.0.0.1:{port}; add --net-allow 127.0.0.1:{port}"]
    same_without_log(r, CONNECT, "127.0.0.1", port, flags=flags)
    ok = py(CONNECT, "127.0.0.1", port, flags=(*flags, "--net-allow", f"127.0.0.1:{port}"))
    assert (ok.returncode, ok.stdout, denials(ok)) == (0, b"0\n", [])


def test_tcp_connect_landlock_port_rules(tcp_server):
    """tcp:// rules to any host are Landlock's; the supervisor applies them with its answer."""
    port = tcp_server
    r = py(CONNECT, "127.0.0.1", port, flags=("--net-allow", "tcp://*:1"))
    assert r.stdout == b"13\n"  # EACCES, Landlock's answer
    assert denials(r) == [
        f"sandlock: denied connect(127.0.0.1:{port}) by pid PID (python3): no net_allow rule "
        f"covers 127.0.0.1:{port}; add --net-allow 127.0.0.1:{port}"]
    same_without_log(r, CONNECT, "127.0.0.1", port, flags=("--net-allow", "tcp://*:1"))


def test_net_deny(tcp_server):
    port = tcp_server
    allow = ("--net-allow", "127.0.0.0/8")
    r = py(CONNECT, "127.0.0.1", port, flags=(*allow, "--net-deny", "127.0.0.0/24"))
    assert r.stdout == b"111\n"
    assert denials(r) == [
        f"sandlock: denied connect(127.0.0.1:{port}) by pid PID (python3): net_deny covers "
        "127.0.0.1; remove --net-deny 127.0.0.0/24"]
    same_without_log(r, CONNECT, "127.0.0.1", port, flags=(*allow, "--net-deny", "127.0.0.0/24"))
    ok = py(CONNECT, "127.0.0.1", port, flags=allow)
    assert (ok.stdout, denials(ok)) == (b"0\n", [])


def test_udp_sendto_without_a_rule(udp_server):
    port = udp_server.getsockname()[1]
    flags = ("--net-allow", "udp://127.0.0.2:53")
    r = py(SENDTO, port, flags=flags)
    assert r.stdout == b"111\n"
    assert denials(r) == [
        f"sandlock: denied sendto(127.0.0.1:{port}/udp) by pid PID (python3): no net_allow "
        f"rule covers udp 127.0.0.1:{port}; add --net-allow udp://127.0.0.1:{port}"]
    same_without_log(r, SENDTO, port, flags=flags)
    ok = py(SENDTO, port, flags=(*flags, "--net-allow", f"udp://127.0.0.1:{port}"))
    assert (ok.stdout, denials(ok)) == (b"4\n", [])
    assert udp_server.recv(16) == b"ping"


UDP_CONNECT = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
print(s.connect_ex(("127.0.0.1", int(sys.argv[1]))))
"""


def test_udp_connect_without_a_rule(udp_server):
    port = udp_server.getsockname()[1]
    flags = ("--net-allow", "udp://127.0.0.2:53")
    r = py(UDP_CONNECT, port, flags=flags)
    assert r.stdout == b"111\n"
    assert denials(r) == [
        f"sandlock: denied connect(127.0.0.1:{port}/udp) by pid PID (python3): no net_allow "
        f"rule covers udp 127.0.0.1:{port}; add --net-allow udp://127.0.0.1:{port}"]
    same_without_log(r, UDP_CONNECT, port, flags=flags)
    ok = py(UDP_CONNECT, port, flags=(*flags, "--net-allow", f"udp://127.0.0.1:{port}"))
    assert (ok.stdout, denials(ok)) == (b"0\n", [])


def test_unix_socket_without_a_write_grant(tmp_path):
    d = tmp_path / "sock"
    d.mkdir()
    path = d / "s"
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(path))
    srv.listen(4)
    try:
        r = py(UNIX, path, flags=("-r", str(tmp_path)))
        assert r.stdout == b"13\n"
        real = str(d.resolve())
        assert denials(r) == [
            f'sandlock: denied connect("{real}/s") by pid PID (python3): no write grant '
            f"covers {real}; add -w {real}"]
        same_without_log(r, UNIX, path, flags=("-r", str(tmp_path)))
        ok = py(UNIX, path, flags=("-r", str(tmp_path), "-w", real))
        assert (ok.stdout, denials(ok)) == (b"ok\n", [])
    finally:
        srv.close()


def test_abstract_unix_name():
    r = py(UNIX, "@sandlock-emit-test")
    if r.stdout != b"1\n":
        require(False, "Landlock ABI 6 (abstract UNIX socket scope)")
    assert denials(r) == [
        'sandlock: denied connect("@sandlock-emit-test") by pid PID (python3): abstract UNIX '
        "sockets are scoped to the sandbox"]


@pytest.mark.parametrize("remap", [(), ("--port-remap",)], ids=["landlock", "port-remap"])
def test_bind_without_a_grant(remap):
    port, other = free_port(), free_port()
    flags = (*remap, "--net-allow-bind", str(other))
    r = py(BIND, port, flags=flags)
    assert r.stdout == b"13\n"
    assert denials(r) == [
        f"sandlock: denied bind(127.0.0.1:{port}) by pid PID (python3): no bind grant covers "
        f"port {port}; add --net-allow-bind {port}"]
    same_without_log(r, BIND, port, flags=flags)
    ok = py(BIND, port, flags=(*flags, "--net-allow-bind", str(port)))
    assert (ok.stdout, denials(ok)) == (b"ok\n", [])


def test_max_processes():
    r = py(FORKS, flags=("--max-processes", "3"))
    assert r.stdout == b"2 [11]\n"  # EAGAIN
    lines = denials(r)
    assert lines and set(lines) <= {
        f"sandlock: denied {call}() by pid PID (python3): process limit 3 reached; raise "
        "--max-processes" for call in ("clone", "fork", "vfork")}, lines
    same_without_log(r, FORKS, flags=("--max-processes", "3"))
    ok = py(FORKS, flags=("--max-processes", "8"))
    assert (ok.stdout, denials(ok)) == (b"4 []\n", [])


def test_max_memory():
    code = "x = bytearray(256 << 20); print('allocated')"
    r = py(code, flags=("--max-memory", "64M"))
    assert r.returncode == 137 and r.stdout == b""
    lines = denials(r)
    kill = "sandlock: denied max_memory() by pid PID (python3): memory limit 64M reached; " \
           "raise --max-memory"
    assert kill in lines, lines
    calls = [line for line in lines if line != kill]
    assert len(calls) == 1 and re.fullmatch(
        r"sandlock: denied (mmap|brk|mremap|mprotect)\(\d+ bytes\) by pid PID \(python3\): "
        r"memory limit 64M reached; raise --max-memory", calls[0]), lines
    plain = py(code, flags=("--max-memory", "64M"), log=False)
    assert (plain.returncode, plain.stdout, denials(plain)) == (137, b"", [])
    ok = py(code, flags=("--max-memory", "1G"))
    assert (ok.returncode, ok.stdout, denials(ok)) == (0, b"allocated\n", [])


def test_allowed_events_for_learn(tmp_path, tcp_server, udp_server):
    """--log-events: the connect, the send and the bind let through are events, verdict allow,
    with what `sandlock learn` writes rules from."""
    udp = udp_server.getsockname()[1]
    bind = free_port()
    code = (f"import socket\n"
            f"socket.socket().connect(('127.0.0.1', {tcp_server}))\n"
            f"socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', "
            f"('127.0.0.1', {udp}))\n"
            f"socket.socket().bind(('127.0.0.1', {bind}))\n")
    log = tmp_path / "events.json"
    r = run(*SYSTEM_READ, f"--log-events={log}", "--net-allow", f"127.0.0.1:{tcp_server}",
            "--net-allow", f"udp://127.0.0.1:{udp}", "--net-allow-bind", str(bind), "--",
            PY, "-c", code, timeout=60)
    assert r.returncode == 0, r.stderr
    events = [json.loads(line) for line in log.read_text().splitlines()]
    net = [{k: e.get(k) for k in ("syscall", "verdict", "host", "port", "protocol")}
           for e in events if e["category"] == "network"]
    assert net == [
        {"syscall": "connect", "verdict": "allow", "host": "127.0.0.1", "port": tcp_server,
         "protocol": "tcp"},
        {"syscall": "sendto", "verdict": "allow", "host": "127.0.0.1", "port": udp,
         "protocol": "udp"},
        {"syscall": "bind", "verdict": "allow", "host": "127.0.0.1", "port": bind,
         "protocol": "tcp"}]


OTHER = """
import os, sys
target = int(sys.argv[1]) if len(sys.argv) > 1 else os.fork()
if target == 0:
    os._exit(0)
try:
    os.setpriority(os.PRIO_PROCESS, target, os.getpriority(os.PRIO_PROCESS, target))
    print("ok")
except OSError as e:
    print(e.errno)
"""


def test_another_process_s_priority():
    outside = os.getpid()  # the test's own process: not the sandbox's
    r = py(OTHER, outside)
    assert r.stdout == b"1\n"  # EPERM
    assert denials(r) == [
        f"sandlock: denied setpriority() by pid PID (python3): process {outside} is not the "
        "sandbox's"]
    same_without_log(r, OTHER, outside)
    ok = py(OTHER)  # its own child
    assert (ok.stdout, denials(ok)) == (b"ok\n", [])
