# SPDX-License-Identifier: LGPL-2.1-or-later
"""TCP by port, enforced in the kernel (Landlock NetTcp, ABI 4): --net-allow tcp://*:PORTS (the
direct path) and --net-allow-bind. Every denial is against a live listener on loopback that
accepts the same connection from outside the sandbox."""

import socket

import pytest

from conftest import SYSTEM_READ, landlock_abi, require, run

CLIENT = """
import socket, sys
for target in sys.argv[1:]:
    host, port = target.rsplit(":", 1)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family)
    print(port, s.connect_ex((host, int(port))))
"""

BINDER = """
import socket, sys
for port in map(int, sys.argv[1:]):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        print(port, "ok" if port else "ok0")
    except OSError as e:
        print(port, e.errno)
"""


@pytest.fixture(autouse=True)
def _net_tcp():
    require(landlock_abi() >= 4, "Landlock ABI 4 (NetTcp)")


def listener(host="127.0.0.1", family=socket.AF_INET):
    s = socket.socket(family)
    s.bind((host, 0))
    s.listen(16)
    return s


@pytest.fixture
def listeners():
    """Three live listeners on 127.0.0.1 (ports a, b, c)."""
    socks = [listener() for _ in range(3)]
    yield [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def connects(*flags_and_targets):
    flags = [f for f in flags_and_targets if f.startswith("--") or f.startswith("tcp://")]
    targets = [t for t in flags_and_targets if t not in flags]
    r = run(*SYSTEM_READ, *flags, "--", "/usr/bin/python3", "-c", CLIENT, *targets, timeout=30)
    assert r.returncode == 0, r.stderr
    return dict(line.split() for line in r.stdout.decode().splitlines())


def binds(*args, ports):
    r = run(*SYSTEM_READ, *args, "--", "/usr/bin/python3", "-c", BINDER,
            *map(str, ports), timeout=30)
    assert r.returncode == 0, r.stderr
    return dict(line.split() for line in r.stdout.decode().splitlines())


def test_connect_denied_by_default(listeners):
    a = listeners[0]
    assert socket.create_connection(("127.0.0.1", a), timeout=5)  # control: it accepts
    assert connects(f"127.0.0.1:{a}") == {str(a): "13"}  # EACCES


def test_connect_exact_port(listeners):
    a, b, _ = listeners
    got = connects("--net-allow", f"tcp://:{a}", f"127.0.0.1:{a}", f"127.0.0.1:{b}")
    assert got == {str(a): "0", str(b): "13"}


def test_connect_port_list_and_any_host_spelling(listeners):
    a, b, c = listeners
    got = connects("--net-allow", f"tcp://*:{a},{c}", f"127.0.0.1:{a}", f"127.0.0.1:{b}",
                   f"127.0.0.1:{c}")
    assert got == {str(a): "0", str(b): "13", str(c): "0"}


def test_connect_other_loopback_addresses(listeners):
    # The rule is a port, whatever the address: 127.0.0.2 and ::1 too.
    s2 = listener("127.0.0.2")
    p2 = s2.getsockname()[1]
    targets = [f"127.0.0.2:{p2}"]
    try:
        s6 = listener("::1", socket.AF_INET6)
        p6 = s6.getsockname()[1]
        targets.append(f"::1:{p6}")
    except OSError:
        s6 = None
        require(False, "IPv6 loopback")
    denied = connects(*targets)
    assert set(denied.values()) == {"13"}
    allowed = connects("--net-allow", f"tcp://:{p2}", "--net-allow", f"tcp://:{p6}", *targets)
    assert set(allowed.values()) == {"0"}
    s2.close()
    s6.close()


def test_connect_any_port(listeners):
    a, b, _ = listeners
    assert connects("--net-allow", "tcp://*", f"127.0.0.1:{a}", f"127.0.0.1:{b}") == {
        str(a): "0", str(b): "0"}


def test_grandchild_is_confined(listeners):
    a, b, _ = listeners
    r = run(*SYSTEM_READ, "--net-allow", f"tcp://:{a}", "--", "/bin/sh", "-c",
            f'/usr/bin/python3 -c "$0" 127.0.0.1:{a} 127.0.0.1:{b}', CLIENT, timeout=30)
    got = dict(line.split() for line in r.stdout.decode().splitlines())
    assert got == {str(a): "0", str(b): "13"}


@pytest.mark.parametrize("rule", [":443", "udp://1.1.1.1:53", "127.0.0.1:80",
                                  "tcp://10.0.0.0/8:443"])
def test_rules_needing_the_supervisor_are_refused_without_one(rule):
    r = run(*SYSTEM_READ, "--no-supervisor", "--net-allow", rule, "--", "true", timeout=30)
    assert r.returncode == 1
    assert r.stderr.decode().startswith("sandlock: --no-supervisor: cannot enforce --net-allow")
    # Control: the same rule with a supervisor runs, and so does a direct rule without one.
    assert run(*SYSTEM_READ, "--net-allow", rule, "--", "true").returncode == 0
    assert run(*SYSTEM_READ, "--no-supervisor", "--net-allow", "tcp://:443", "--",
               "true").returncode == 0


@pytest.mark.parametrize("rule", ["icmp://*", "udp://*:*", "*"])
def test_open_rules_need_no_supervisor(rule):
    # Rules that open every destination of a protocol are the kernel's (socket gating and
    # Landlock's TCP ports): they run without a supervisor.
    assert run(*SYSTEM_READ, "--no-supervisor", "--net-allow", rule, "--",
               "true").returncode == 0


def test_bind_denied_by_default():
    p = free_port()
    assert binds(ports=[p]) == {str(p): "13"}
    s = socket.socket()
    s.bind(("127.0.0.1", p))  # control: the port is free outside
    s.close()


def _free_run(n):
    """A port p with p .. p + n - 1 all free now (an ephemeral port's neighbours may be
    another process's connection)."""
    while True:
        p = free_port()
        if p > 65000:
            continue
        socks = []
        try:
            for q in range(p, p + n):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", q))
            return p
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()


def test_bind_exact_and_range():
    p = _free_run(5)
    got = binds("--net-allow-bind", str(p), "--net-allow-bind", f"{p + 2}-{p + 3}",
                ports=[p, p + 1, p + 2, p + 3, p + 4])
    assert got == {str(p): "ok", str(p + 1): "13", str(p + 2): "ok", str(p + 3): "ok",
                   str(p + 4): "13"}


def test_bind_any_port():
    p, q = free_port(), free_port()
    assert binds("--net-allow-bind", "*", ports=[p, q, 0]) == {str(p): "ok", str(q): "ok",
                                                               "0": "ok0"}


def test_bind_zero_authorizes_only_bind_zero():
    p = free_port()
    assert binds("--net-allow-bind", "0", ports=[0, p]) == {"0": "ok0", str(p): "13"}
    assert binds(ports=[0]) == {"0": "13"}  # control: not listed, bind(0) is denied


def test_bind_and_connect_rules_together(listeners):
    a = listeners[0]
    p = free_port()
    r = run(*SYSTEM_READ, "--net-allow-bind", str(p), "--net-allow", f"tcp://:{a}", "--",
            "/bin/sh", "-c", f'/usr/bin/python3 -c "$0" {p} {a}; /usr/bin/python3 -c "$1" '
            f'127.0.0.1:{a} 127.0.0.1:{p}', BINDER, CLIENT, timeout=30)
    out = r.stdout.decode().split("\n")
    # bind p ok; bind a (a connect port, and taken) refused by Landlock before EADDRINUSE
    assert out[0] == f"{p} ok" and out[1] == f"{a} 13"
    assert out[2] == f"{a} 0" and out[3] == f"{p} 13"


TFO = """
import socket, sys
port = int(sys.argv[1])
for how in ("sendto", "sendmsg"):
    s = socket.socket()
    try:
        if how == "sendto":
            s.sendto(b"x", socket.MSG_FASTOPEN, ("127.0.0.1", port))
        else:
            s.sendmsg([b"x"], [], socket.MSG_FASTOPEN, ("127.0.0.1", port))
        print(how, "sent")
    except OSError as e:
        print(how, e.errno)
"""


def test_tcp_fast_open_cannot_bypass_connect_rules(listeners):
    # MSG_FASTOPEN connects without connect(), past Landlock's hook: refused (EOPNOTSUPP, as
    # with client TFO off), even to a port the sandbox may connect to.
    a = listeners[0]
    with open("/proc/sys/net/ipv4/tcp_fastopen") as f:
        require(int(f.read()) & 1, "client TCP Fast Open (net.ipv4.tcp_fastopen & 1)")
    import subprocess
    outside = subprocess.run(["/usr/bin/python3", "-c", TFO, str(a)], capture_output=True,
                             text=True, timeout=30)
    assert outside.stdout.split() == ["sendto", "sent", "sendmsg", "sent"]  # control
    for rules in ([], ["--net-allow", f"tcp://:{a}"]):
        r = run(*SYSTEM_READ, *rules, "--", "/usr/bin/python3", "-c", TFO, str(a), timeout=30)
        assert r.stdout.decode().split() == ["sendto", "95", "sendmsg", "95"], rules


def test_deny_bind_alone_is_default_allow():
    p, q = free_port(), free_port()
    # p is in the ephemeral range, so bind(0) could land on it: refused too.
    assert binds("--net-deny-bind", str(p), ports=[p, q, 0]) == {str(p): "13", str(q): "ok",
                                                                 "0": "13"}
    assert binds(ports=[q]) == {str(q): "13"}  # control: with no bind rule, no bind
    # A denied port outside the ephemeral range leaves bind(0) alone.
    assert binds("--net-deny-bind", "80", ports=[q, 0]) == {str(q): "ok", "0": "ok0"}


def test_deny_bind_wins_over_allow_bind():
    p = free_port()
    while p > 65000:
        p = free_port()
    got = binds("--net-allow-bind", f"{p}-{p + 2}", "--net-deny-bind", str(p + 1),
                ports=[p, p + 1, p + 2])
    assert got == {str(p): "ok", str(p + 1): "13", str(p + 2): "ok"}
    got = binds("--net-allow-bind", "*", "--net-deny-bind", f"{p}-{p + 1}", ports=[p, p + 1,
                                                                                   p + 2])
    assert got == {str(p): "13", str(p + 1): "13", str(p + 2): "ok"}


LISTEN = """
import socket, struct, sys
s = socket.socket()
s.setsockopt(socket.IPPROTO_IP, 51, struct.pack("I", int(sys.argv[1]) * 65537))  # PORT_RANGE
try:
    s.listen()
    print("listen", s.getsockname()[1])
except OSError as e:
    print("listen", e.errno)
"""


def listens(*args, port):
    r = run(*SYSTEM_READ, *args, "--", "/usr/bin/python3", "-c", LISTEN, str(port), timeout=30)
    return r.stdout.decode().split()


def ephemeral_port():
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        lo, hi = map(int, f.read().split())
    s = socket.socket()
    s.bind(("127.0.0.1", 0))  # a free port of the range
    p = s.getsockname()[1]
    s.close()
    assert lo <= p <= hi
    return p


def test_listen_cannot_pick_a_port_past_the_bind_rules():
    # listen() on an unbound socket binds an ephemeral port itself (and IP_LOCAL_PORT_RANGE
    # chooses which): allowed only where bind(0) is.
    p = ephemeral_port()
    import subprocess
    outside = subprocess.run(["/usr/bin/python3", "-c", LISTEN, str(p)], capture_output=True,
                             text=True, timeout=30).stdout.split()
    assert outside == ["listen", str(p)]  # control: outside it gets the very port
    assert listens(port=p) == ["listen", "13"]  # default: no bind
    assert listens("--net-allow-bind", str(p), port=p) == ["listen", "13"]
    assert listens("--net-allow-bind", "0", port=p) == ["listen", str(p)]
    assert listens("--net-allow-bind", "*", port=p) == ["listen", str(p)]
    # A denied port inside the ephemeral range: bind(0)/autobind could land on it.
    assert listens("--net-deny-bind", str(p), port=p) == ["listen", "13"]


BOUND_LISTEN = """
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
print("served", s.accept()[0].getsockname()[1])
"""


def test_listen_on_an_allowed_bound_port():
    p = free_port()
    r = run(*SYSTEM_READ, "--net-allow-bind", str(p), "--net-allow", f"tcp://:{p}", "--",
            "/usr/bin/python3", "-c", BOUND_LISTEN, str(p), timeout=30)
    assert r.stdout.decode().split() == ["served", str(p)], r.stderr


def test_listen_without_supervisor_is_refused():
    p = ephemeral_port()
    assert listens("--no-supervisor", port=p) == ["listen", "1"]  # EPERM: nobody to check
    assert listens("--no-supervisor", "--net-allow-bind", "*", port=p) == ["listen", str(p)]


FAMILIES = """
import socket
res = {}
for name, fam, typ, proto in (("packet", 17, socket.SOCK_RAW, 0), ("vsock", 40, socket.SOCK_STREAM, 0),
                              ("tipc", 30, socket.SOCK_RDM, 0), ("xdp", 44, socket.SOCK_RAW, 0),
                              ("udp", socket.AF_INET, socket.SOCK_DGRAM, 0),
                              ("icmp-raw", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
                              ("tcp", socket.AF_INET6, socket.SOCK_STREAM, 0)):
    try:
        socket.socket(fam, typ, proto).close()
        res[name] = 0
    except OSError as e:
        res[name] = e.errno
print(res)
"""


def test_socket_families_and_protocols():
    import errno
    import os
    import subprocess
    inside = eval(run(*SYSTEM_READ, "--", "/usr/bin/python3", "-c", FAMILIES,
                      timeout=30).stdout.decode())
    assert inside == {"packet": errno.EAFNOSUPPORT, "vsock": errno.EAFNOSUPPORT,
                      "tipc": errno.EAFNOSUPPORT, "xdp": errno.EAFNOSUPPORT,
                      "udp": errno.EPERM, "icmp-raw": errno.EPERM, "tcp": 0}
    outside = eval(subprocess.run(["/usr/bin/python3", "-c", FAMILIES], capture_output=True,
                                  text=True, timeout=30).stdout)
    # Controls: UDP and TCP sockets are the host's to make; as root, packet and raw too.
    assert outside["udp"] == 0 and outside["tcp"] == 0
    if os.geteuid() == 0:
        assert outside["packet"] == 0 and outside["icmp-raw"] == 0
