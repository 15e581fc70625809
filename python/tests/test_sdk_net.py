# SPDX-License-Identifier: LGPL-2.1-or-later
"""TCP by port through the SDK (Landlock NetTcp): net_allow with tcp://*:PORTS rules and
net_allow_bind. Denials are against live loopback listeners that accept from outside."""

import socket
import subprocess
import threading
import time

import pytest

from conftest import PY, require
from sandlock import SandboxError, landlock_abi_version

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")

CLIENT = """import socket, sys
for port in sys.argv[1:]:
    print(port, socket.socket().connect_ex(("127.0.0.1", int(port))))
"""
BINDER = """import socket, sys
for port in sys.argv[1:]:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", int(port)))
        print(port, "ok")
    except OSError as e:
        print(port, e.errno)
"""


@pytest.fixture(autouse=True)
def _net_tcp():
    require(landlock_abi_version() >= 4, "Landlock ABI 4 (NetTcp)")


@pytest.fixture
def ports():
    """Two live listeners on 127.0.0.1."""
    socks = []
    for _ in range(2):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        socks.append(s)
    yield [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()


def table(result):
    assert result.success, result.stderr
    return dict(line.split() for line in result.stdout.decode().splitlines())


def test_connect(sandboxes, ports):
    a, b = ports
    args = [PY, "-c", CLIENT, str(a), str(b)]
    assert table(sandboxes().run(args)) == {str(a): "13", str(b): "13"}  # default: none
    assert table(sandboxes(net_allow=[f"tcp://:{a}"]).run(args)) == {str(a): "0", str(b): "13"}
    assert table(sandboxes(net_allow=["tcp://*"]).run(args)) == {str(a): "0", str(b): "0"}


def test_bind(sandboxes):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    p = p if p < 65000 else 30000
    args = [PY, "-c", BINDER, str(p), str(p + 1), str(p + 2)]
    assert set(table(sandboxes().run(args)).values()) == {"13"}  # default: no bind
    got = table(sandboxes(net_allow_bind=[p, f"{p + 2}-{p + 2}"]).run(args))
    assert got == {str(p): "ok", str(p + 1): "13", str(p + 2): "ok"}
    assert set(table(sandboxes(net_allow_bind=["*"]).run(args)).values()) == {"ok"}
    # net_deny_bind: alone default-allow; with net_allow_bind, deny wins.
    got = table(sandboxes(net_deny_bind=[p + 1]).run(args))
    assert got == {str(p): "ok", str(p + 1): "13", str(p + 2): "ok"}
    got = table(sandboxes(net_allow_bind=[f"{p}-{p + 2}"], net_deny_bind=[p]).run(args))
    assert got == {str(p): "13", str(p + 1): "ok", str(p + 2): "ok"}


UDP = """import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for host in sys.argv[2:]:
    try:
        s.sendto(b"from " + host.encode(), (host, int(sys.argv[1])))
        print(host, 0)
    except OSError as e:
        print(host, e.errno)
"""


def test_udp_on_behalf(sandboxes):
    # A udp:// rule opens UDP sockets; where they send is checked by the supervisor. The
    # servers on 127.0.0.1 and 127.0.0.2 receive what is sent outside (the control).
    a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    a.bind(("127.0.0.1", 0))
    port = a.getsockname()[1]
    b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    b.bind(("127.0.0.2", port))
    a.settimeout(5)
    b.settimeout(5)
    args = [PY, "-c", UDP, str(port), "127.0.0.1", "127.0.0.2"]
    plain = subprocess.run(args, capture_output=True, text=True, timeout=30).stdout
    assert table_text(plain) == {"127.0.0.1": "0", "127.0.0.2": "0"}
    assert a.recv(64) == b"from 127.0.0.1" and b.recv(64) == b"from 127.0.0.2"
    got = table(sandboxes(net_allow=[f"udp://127.0.0.1:{port}"]).run(args))
    assert got == {"127.0.0.1": "0", "127.0.0.2": "111"}  # ECONNREFUSED
    assert a.recv(64) == b"from 127.0.0.1"
    r = sandboxes().run(args)  # no UDP rule: no UDP socket
    assert not r.success and b"PermissionError: [Errno 1]" in r.stderr
    a.close()
    b.close()


def table_text(text):
    return dict(line.split() for line in text.splitlines())


def test_connect_on_behalf(sandboxes, ports):
    # Rules to an address (and deny rules) are matched by the supervisor, which connects.
    a, b = ports
    args = [PY, "-c", CLIENT, str(a), str(b)]
    got = table(sandboxes(net_allow=[f"tcp://127.0.0.1:{a}"]).run(args))
    assert got == {str(a): "0", str(b): "111"}  # ECONNREFUSED
    got = table(sandboxes(net_allow=["tcp://127.0.0.0/8"], net_deny=["127.0.0.1"]).run(args))
    assert got == {str(a): "111", str(b): "111"}
    got = table(sandboxes(net_allow=["tcp://127.0.0.0/8"]).run(args))  # control: no deny
    assert got == {str(a): "0", str(b): "0"}


def test_hostname_rule(sandboxes, ports):
    # Resolved at start and pinned; "localhost" resolves inside through the synthetic hosts.
    a, b = ports
    code = ("import socket, sys\n"
            "for p in sys.argv[1:]:\n"
            "    s = socket.socket()\n"
            "    print(p, s.connect_ex((socket.gethostbyname('localhost'), int(p))))\n")
    got = table(sandboxes(net_allow=[f"tcp://localhost:{a}"]).run([PY, "-c", code, str(a),
                                                                    str(b)]))
    assert got == {str(a): "0", str(b): "111"}
    with pytest.raises(SandboxError, match="cannot resolve"):
        sandboxes(net_allow=["tcp://no-such-host.invalid:80"]).run(["true"])


UNIX_CLIENT = """import socket, sys
s = socket.socket(socket.AF_UNIX)
print(s.connect_ex(sys.argv[1]))
"""


def test_named_unix_socket_needs_write_grant(sandboxes, tmp_path):
    # Connecting to a named UNIX socket needs a write grant covering it (checked by the
    # supervisor); outside the sandbox the same connect succeeds (the control).
    d = tmp_path / "srv"
    d.mkdir()
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(d / "sock"))
    srv.listen(4)
    args = [PY, "-c", UNIX_CLIENT, str(d / "sock")]
    plain = subprocess.run(args, capture_output=True, text=True, timeout=30)
    assert plain.stdout.split() == ["0"]
    r = sandboxes(fs_readable=[str(d)]).run(args)
    assert r.stdout.split() == [b"13"]  # EACCES
    r = sandboxes(fs_writable=[str(d)]).run(args)
    assert r.stdout.split() == [b"0"]
    srv.close()


def test_route_socket_shows_only_lo(sandboxes):
    names = [n for _, n in socket.if_nameindex()]
    require(names != ["lo"], "a network interface besides lo (the negative control)")
    r = sandboxes().run([PY, "-c", "import socket; print(socket.if_nameindex())"])
    assert r.stdout.strip() == b"[(1, 'lo')]", r.stderr


SERVE = """import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
print(s.getsockname()[1], flush=True)
while True:
    a, _ = s.accept()
    a.sendall(b"inside")
    a.close()
"""


def serve_and_read_port(sb, port):
    sb.spawn([PY, "-c", SERVE, str(port)])
    assert wait_for(lambda: sb.ports() or not sb.is_running, 10)


def wait_for(predicate, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_ports_shows_the_remapped_ports(sandboxes):
    # The host holds the port; the sandbox binds it all the same, elsewhere, and ports() says
    # where: the host reaches the sandbox's server on the real port.
    host = socket.socket()
    host.bind(("127.0.0.1", 0))
    host.listen(1)
    port = host.getsockname()[1]
    sb = sandboxes(net_allow_bind=[port], port_remap=True)
    assert sb.ports() == {}  # not running
    serve_and_read_port(sb, port)
    mapping = sb.ports()
    assert list(mapping) == [port] and mapping[port] != port
    with socket.create_connection(("127.0.0.1", mapping[port]), timeout=5) as c:
        assert c.recv(16) == b"inside"
    sb.kill()
    sb.wait()
    assert sb.ports() == {}  # ended: the ports are the host's again
    # Control: without port_remap the bind meets the host's listener.
    r = sandboxes(net_allow_bind=[port]).run([PY, "-c", SERVE, str(port)])
    assert not r.success and b"Errno 98" in r.stderr
    host.close()


def test_ports_lists_only_remapped_ports(sandboxes):
    # A free port is bound as asked: no pair. Control: the server runs and answers on it.
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    sb = sandboxes(net_allow_bind=[port], port_remap=True)
    sb.spawn([PY, "-c", SERVE, str(port)])
    def answers():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as c:
                return c.recv(16) == b"inside"
        except OSError:
            return False
    assert wait_for(answers, 10)
    assert sb.ports() == {}
    sb.kill()


DRIVEN = r"""import os, socket, sys, threading, time
port, box = int(sys.argv[1]), sys.argv[2]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(8)
def serve(s):
    while True:
        try:
            a, _ = s.accept()
        except OSError:
            return
        a.sendall(b"inside")
        a.close()
threading.Thread(target=serve, args=(s,), daemon=True).start()
held = []
for n in range(100):
    path = os.path.join(box, f"cmd-{n}")
    while not os.path.exists(path):
        time.sleep(0.01)
    cmd = open(path).read().split()
    if cmd[0] == "ask":  # connect to the port and read what answers
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
                out = c.recv(16).decode() or "eof"
        except OSError as e:
            out = str(e.errno)
    elif cmd[0] == "close":
        s.shutdown(socket.SHUT_RDWR)
        s.close()
        out = "closed"
    elif cmd[0] == "bind":  # bind and listen on another port, report getsockname
        b = socket.socket()
        try:
            b.bind(("127.0.0.1", int(cmd[1])))
            b.listen(1)
            held.append(b)
            out = f"ok {b.getsockname()[1]}"
        except OSError as e:
            out = str(e.errno)
    else:
        break
    with open(path + ".tmp", "w") as f:
        f.write(out)
    os.rename(path + ".tmp", os.path.join(box, f"out-{n}"))
"""


class Driver:
    """Commands to the DRIVEN program, through files in @box."""

    def __init__(self, box):
        self.box, self.n = box, 0

    def __call__(self, cmd):
        (self.box / f"cmd-{self.n}").write_text(cmd)
        out = self.box / f"out-{self.n}"
        assert wait_for(out.exists, 10), cmd
        self.n += 1
        return out.read_text()


def answering_listener(text, port=0):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(8)

    def serve():
        while True:
            try:
                a, _ = s.accept()
            except OSError:
                return
            a.sendall(text)
            a.close()
    threading.Thread(target=serve, daemon=True).start()
    return s


def test_remapped_pairs_follow_the_sandbox_sockets(sandboxes, tmp_path):
    host = answering_listener(b"host-P")
    port = host.getsockname()[1]
    box = tmp_path / "box"
    box.mkdir()
    sb = sandboxes(fs_writable=[str(box)], net_allow_bind=["*"], port_remap=True,
                   net_allow=[f"127.0.0.1:{port}"])
    sb.spawn([PY, "-c", DRIVEN, str(port), str(box)])
    do = Driver(box)
    assert do("ask") == "inside"  # its own server, on the port the host holds
    real = sb.ports()[port]
    # The real port is a port of the sandbox's space too, and free there: it binds (elsewhere)
    # and reads back as asked, while the first server keeps its pair.
    assert do(f"bind {real}") == f"ok {real}"
    assert sb.ports()[port] == real and sb.ports()[real] not in (port, real)
    assert do("ask") == "inside"
    # The server goes and the host takes its real port: the pair is not followed any more, so
    # a connect to the port reaches what the rules allowed (the host's listener on it), not
    # the host's listener on the old real port.
    assert do("close") == "closed"
    stranger = answering_listener(b"host-R", real)
    try:
        assert do("ask") == "host-P"
    finally:
        stranger.close()
        host.close()
    sb.kill()
