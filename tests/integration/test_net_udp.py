# SPDX-License-Identifier: LGPL-2.1-or-later
"""UDP and ICMP: socket creation gated by the rules' protocols, destinations checked on the
child's behalf (sendto, sendmsg, sendmmsg, connect), bare rules counting for TCP and UDP, a deny
list alone. Every refusal is against a live loopback server that answers the same datagram from
outside the sandbox."""

import errno
import json
import os
import socket
import subprocess

import pytest

from conftest import PY, SYSTEM_READ, landlock_abi, require, run


@pytest.fixture(autouse=True)
def _net_tcp():
    require(landlock_abi() >= 4, "Landlock ABI 4 (NetTcp)")


@pytest.fixture
def udp_servers():
    """UDP sockets bound on 127.0.0.1 and 127.0.0.2, same port, plus a TCP listener on that port
    of 127.0.0.1: {"port": p, "socks": {"127.0.0.1": s, "127.0.0.2": s}}."""
    for _ in range(50):  # a port free for all three (another test may hold it for TCP)
        a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        a.bind(("127.0.0.1", 0))
        port = a.getsockname()[1]
        b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        t = socket.socket()
        try:
            b.bind(("127.0.0.2", port))
            t.bind(("127.0.0.1", port))
            break
        except OSError:
            for s in (a, b, t):
                s.close()
    t.listen(8)
    for s in (a, b):
        s.settimeout(5)
    yield {"port": port, "socks": {"127.0.0.1": a, "127.0.0.2": b}}
    for s in (a, b, t):
        s.close()


def received(sock):
    """What arrived on @sock, without waiting (every send above has returned)."""
    got = []
    sock.setblocking(False)
    try:
        while True:
            got.append(sock.recv(65536))
    except BlockingIOError:
        pass
    finally:
        sock.settimeout(5)
    return got


# The C structures of sendmsg/sendmmsg, for the client scripts below.
CTYPES = r"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
class msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.POINTER(iovec)), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]
class mmsghdr(ctypes.Structure):
    _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]
"""

# Client: one JSON line of results, errno per action.
CLIENT = CTYPES + r"""
import ctypes, errno, json, os, socket, struct, sys
res = {}
def act(name, fn):
    try:
        v = fn()
        res[name] = 0 if v is None else v
    except OSError as e:
        res[name] = e.errno
port = int(sys.argv[1])
what = sys.argv[2:]
U = lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if "create" in what:
    act("udp4", lambda: U().close())
    act("udp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).close())
    act("udplite", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM, 136).close())
    act("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close())
    act("ping", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP).close())
if "sendto" in what:
    s = U()
    act("to1", lambda: s.sendto(b"one", ("127.0.0.1", port)) and None)
    act("to2", lambda: s.sendto(b"two", ("127.0.0.2", port)) and None)
    act("to1_next", lambda: s.sendto(b"three", ("127.0.0.1", port + 1)) and None)
    act("mapped6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).sendto(
        b"six", ("::ffff:127.0.0.2", port)) and None)
if "sendmsg" in what:
    s = U()
    act("msg1", lambda: s.sendmsg([b"a", b"bc", b"def"], [], 0, ("127.0.0.1", port)))
    act("msg2", lambda: s.sendmsg([b"x"], [], 0, ("127.0.0.2", port)))
if "connect" in what:
    s = U()
    act("connect2", lambda: s.connect(("127.0.0.2", port)))
    s = U()
    act("connect1", lambda: s.connect(("127.0.0.1", port)))
    act("send1", lambda: s.send(b"connected") and None)
if "tcp" in what:
    act("tcp1", lambda: socket.create_connection(("127.0.0.1", port), timeout=5).close())
if "sendmmsg" in what:
    def sin(host):
        return ctypes.create_string_buffer(struct.pack("<H", socket.AF_INET) +
            struct.pack(">H", port) + socket.inet_aton(host) + b"\0" * 8, 16)
    s = U()
    addrs = [sin("127.0.0.1"), sin("127.0.0.2"), sin("127.0.0.1")]
    datas = [ctypes.create_string_buffer(b"first", 5), ctypes.create_string_buffer(b"second", 6),
             ctypes.create_string_buffer(b"third", 5)]
    iovs = [iovec(ctypes.addressof(d), len(d)) for d in datas]
    vec = (mmsghdr * 3)()
    for i in range(3):
        vec[i].hdr.name = ctypes.addressof(addrs[i])
        vec[i].hdr.namelen = 16
        vec[i].hdr.iov = ctypes.pointer(iovs[i])
        vec[i].hdr.iovlen = 1
    n = libc.sendmmsg(s.fileno(), vec, 3, 0)
    res["mmsg"] = n if n >= 0 else -ctypes.get_errno()
    res["mmsg_len"] = [vec[i].len for i in range(3)]
    vec2 = (mmsghdr * 1)()
    vec2[0] = vec[1]
    n = libc.sendmmsg(s.fileno(), vec2, 1, 0)
    res["mmsg_refused_first"] = n if n >= 0 else -ctypes.get_errno()
if "addrlen" in what:
    s = U()
    big = ctypes.create_string_buffer(struct.pack("<H", socket.AF_INET) +
        struct.pack(">H", port) + socket.inet_aton("127.0.0.1"), 512)
    r = libc.sendto(s.fileno(), b"x", 1, 0, big, 129)
    res["sendto_129"] = r if r >= 0 else -ctypes.get_errno()
    r = libc.connect(s.fileno(), big, 129)
    res["connect_129"] = r if r >= 0 else -ctypes.get_errno()
    r = libc.sendto(s.fileno(), b"x", 1, 0, big, 16)
    res["sendto_16"] = r if r >= 0 else -ctypes.get_errno()
print(json.dumps(res))
"""


def client(rules, port, *what):
    r = run(*SYSTEM_READ, *rules, "--", PY, "-c", CLIENT, str(port), *what, timeout=30)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def outside(port, *what):
    r = subprocess.run([PY, "-c", CLIENT, str(port), *what], capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_udp_sockets_need_a_udp_rule(udp_servers):
    port = udp_servers["port"]
    got = client([], port, "create")
    assert got["udp4"] == got["udp6"] == errno.EPERM
    assert got["raw"] == errno.EPERM and got["ping"] == errno.EPERM
    # A TCP rule opens no UDP socket.
    got = client(["--net-allow", "tcp://*:*"], port, "create")
    assert got["udp4"] == got["udp6"] == errno.EPERM
    # Control: a UDP rule opens UDP sockets (IPv4 and IPv6), and only UDP: UDP-Lite, raw and
    # ping sockets stay closed.
    got = client(["--net-allow", f"udp://127.0.0.1:{port}"], port, "create")
    assert got["udp4"] == got["udp6"] == 0
    assert got["udplite"] == errno.EPERM and got["raw"] == errno.EPERM
    assert got["ping"] == errno.EPERM


def test_udp_per_host(udp_servers):
    port, socks = udp_servers["port"], udp_servers["socks"]
    # The negative control: outside the sandbox every datagram arrives.
    got = outside(port, "sendto")
    assert got == {"to1": 0, "to2": 0, "to1_next": 0, "mapped6": 0}
    assert received(socks["127.0.0.1"]) == [b"one"]
    assert received(socks["127.0.0.2"]) == [b"two", b"six"]
    got = client(["--net-allow", f"udp://127.0.0.1:{port}"], port, "sendto", "tcp")
    assert got == {"to1": 0, "to2": errno.ECONNREFUSED, "to1_next": errno.ECONNREFUSED,
                   "mapped6": errno.ECONNREFUSED, "tcp1": errno.ECONNREFUSED}
    assert received(socks["127.0.0.1"]) == [b"one"]
    assert received(socks["127.0.0.2"]) == []


def test_udp_connect_and_sendmsg(udp_servers):
    port, socks = udp_servers["port"], udp_servers["socks"]
    got = client(["--net-allow", f"udp://127.0.0.1:{port}"], port, "connect", "sendmsg")
    assert got == {"connect2": errno.ECONNREFUSED, "connect1": 0, "send1": 0, "msg1": 6,
                   "msg2": errno.ECONNREFUSED}
    assert received(socks["127.0.0.1"]) == [b"abcdef", b"connected"]
    assert received(socks["127.0.0.2"]) == []


def test_sendmmsg_partial(udp_servers):
    port, socks = udp_servers["port"], udp_servers["socks"]
    got = outside(port, "sendmmsg")
    assert got["mmsg"] == 3 and got["mmsg_len"] == [5, 6, 5]
    assert got["mmsg_refused_first"] == 1
    received(socks["127.0.0.1"]), received(socks["127.0.0.2"])
    # In the sandbox the first entry goes, the second is refused: one message sent, its
    # msg_len written back, the third never sent; a call whose first entry is refused fails.
    got = client(["--net-allow", f"udp://127.0.0.1:{port}"], port, "sendmmsg")
    assert got["mmsg"] == 1 and got["mmsg_len"] == [5, 0, 0]
    assert got["mmsg_refused_first"] == -errno.ECONNREFUSED
    assert received(socks["127.0.0.1"]) == [b"first"]
    assert received(socks["127.0.0.2"]) == []


def test_hostile_addrlen(udp_servers):
    port = udp_servers["port"]
    got = client(["--net-allow", f"udp://127.0.0.1:{port}"], port, "addrlen")
    assert got == {"sendto_129": -errno.EINVAL, "connect_129": -errno.EINVAL, "sendto_16": 1}


def test_bare_rule_is_tcp_and_udp(udp_servers):
    port, socks = udp_servers["port"], udp_servers["socks"]
    got = client(["--net-allow", f"127.0.0.1:{port}"], port, "sendto", "tcp")
    assert got == {"to1": 0, "to2": errno.ECONNREFUSED, "to1_next": errno.ECONNREFUSED,
                   "mapped6": errno.ECONNREFUSED, "tcp1": 0}
    assert received(socks["127.0.0.1"]) == [b"one"]
    # Control: a tcp:// rule to the same endpoint opens no UDP socket.
    got = client(["--net-allow", f"tcp://127.0.0.1:{port}"], port, "create", "tcp")
    assert got["udp4"] == errno.EPERM and got["tcp1"] == 0


def test_deny_alone_allows_the_rest(udp_servers):
    port, socks = udp_servers["port"], udp_servers["socks"]
    got = client(["--net-deny", "127.0.0.2"], port, "sendto", "tcp")
    assert got == {"to1": 0, "to2": errno.ECONNREFUSED, "to1_next": 0,
                   "mapped6": errno.ECONNREFUSED, "tcp1": 0}
    assert received(socks["127.0.0.2"]) == []
    assert received(socks["127.0.0.1"]) == [b"one"]
    # Deny wins over an allow rule that names the same host.
    got = client(["--net-allow", "udp://*:*", "--net-deny", "127.0.0.0/8"], port, "sendto")
    assert got["to1"] == errno.ECONNREFUSED and got["to2"] == errno.ECONNREFUSED


def test_open_udp_rule_is_not_trapped(udp_servers):
    port, socks = udp_servers["port"], udp_servers["socks"]
    got = client(["--net-allow", "udp://*:*"], port, "sendto", "tcp")
    assert got == {"to1": 0, "to2": 0, "to1_next": 0, "mapped6": 0,
                   "tcp1": errno.EACCES}  # TCP: no rule, Landlock refuses
    assert received(socks["127.0.0.2"]) == [b"two", b"six"]


SCM = r"""
import array, os, socket
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
r, w = os.pipe()
a.sendmsg([b"fd"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [w]))])
os.close(w)
msg, anc, _, _ = b.recvmsg(16, socket.CMSG_SPACE(4))
fd = array.array("i", anc[0][2])[0]
os.write(fd, b"through")
os.close(fd)
print(msg.decode(), os.read(r, 16).decode())
"""


def test_scm_rights_carried(udp_servers):
    # sendmsg is trapped under a checked UDP rule: the descriptors of SCM_RIGHTS are taken
    # from the sender and passed on.
    expect = "fd through"
    plain = subprocess.run([PY, "-c", SCM], capture_output=True, text=True, timeout=30)
    assert plain.stdout.strip() == expect
    r = run(*SYSTEM_READ, "--net-allow", f"udp://127.0.0.1:{udp_servers['port']}", "--", PY,
            "-c", SCM, timeout=30)
    assert (r.returncode, r.stdout.decode().strip()) == (0, expect), r.stderr


PING = r"""
import json, socket, struct, sys
res = {}
for host in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
        s.settimeout(5)
        s.sendto(struct.pack("!BBHHH", 8, 0, 0, 0, 1) + b"ping", (host, 0))
        res[host] = s.recv(64)[0]  # the echo reply's type: 0
    except OSError as e:
        res[host] = e.errno
print(json.dumps(res))
"""


@pytest.fixture
def ping_sockets():
    lo, hi = map(int, open("/proc/sys/net/ipv4/ping_group_range").read().split())
    require(lo <= os.getgid() <= hi,
            "kernel ping sockets for this gid (net.ipv4.ping_group_range; setup.sh check "
            "opens them as systemd does)")


def test_icmp_per_host(ping_sockets):
    plain = subprocess.run([PY, "-c", PING, "127.0.0.1", "127.0.0.2"], capture_output=True,
                           timeout=30)
    assert json.loads(plain.stdout) == {"127.0.0.1": 0, "127.0.0.2": 0}
    r = run(*SYSTEM_READ, "--net-allow", "icmp://127.0.0.1", "--", PY, "-c", PING, "127.0.0.1",
            "127.0.0.2", timeout=30)
    assert json.loads(r.stdout) == {"127.0.0.1": 0, "127.0.0.2": errno.ECONNREFUSED}
    # A UDP rule to the same host opens no ping socket.
    r = run(*SYSTEM_READ, "--net-allow", "udp://127.0.0.1:*", "--", PY, "-c", PING, "127.0.0.1",
            timeout=30)
    assert json.loads(r.stdout) == {"127.0.0.1": errno.EPERM}


def test_raw_icmp_never(ping_sockets):
    r = run(*SYSTEM_READ, "--net-allow", "icmp://*", "--", PY, "-c", CLIENT, "1", "create",
            timeout=30)
    got = json.loads(r.stdout)
    assert got["raw"] == errno.EPERM and got["ping"] == 0


HOSTILE = CTYPES + r"""
import json, os, socket, struct, sys
port = int(sys.argv[1])
res = {}
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
addr = ctypes.create_string_buffer(struct.pack("<H", socket.AF_INET) + struct.pack(">H", port)
                                   + socket.inet_aton("127.0.0.1") + b"\0" * 8, 16)
data = ctypes.create_string_buffer(b"x", 1)
iov = iovec(ctypes.addressof(data), 1)
fds = [fd for _ in range(2) for fd in os.pipe()]
def send(control):
    buf = ctypes.create_string_buffer(control, len(control))
    m = msghdr(ctypes.addressof(addr), 16, ctypes.pointer(iov), 1, ctypes.addressof(buf),
               len(control), 0)
    r = libc.sendmsg(s.fileno(), ctypes.byref(m), 0)
    return r if r >= 0 else -ctypes.get_errno()
# cmsg_len far beyond the buffer, over descriptors that exist
res["long_cmsg"] = send(struct.pack("=Qii", 4096, socket.SOL_SOCKET, socket.SCM_RIGHTS)
                        + struct.pack("=4i", *fds[:4]))
res["creds"] = send(struct.pack("=Qii", 28, socket.SOL_SOCKET, socket.SCM_CREDENTIALS)
                    + struct.pack("=iII", os.getpid(), os.getuid(), os.getgid()) + b"\0" * 4)
res["retopts"] = send(struct.pack("=Qii", 24, socket.IPPROTO_IP, 7) + bytes([131, 7, 4])
                      + socket.inet_aton("127.0.0.2") + b"\0" * 1)
res["ttl"] = send(struct.pack("=Qii", 20, socket.IPPROTO_IP, socket.IP_TTL)
                  + struct.pack("=i", 5) + b"\0" * 4)
try:
    s.setsockopt(socket.IPPROTO_IP, socket.IP_OPTIONS, bytes([131, 7, 4, 127, 0, 0, 2, 0]))
    res["ip_options"] = 0
except OSError as e:
    res["ip_options"] = e.errno
print(json.dumps(res))
"""


def test_hostile_control_data_and_source_routing(udp_servers):
    port, socks = udp_servers["port"], udp_servers["socks"]
    plain = subprocess.run([PY, "-c", HOSTILE, str(port)], capture_output=True, timeout=30)
    got = json.loads(plain.stdout)
    # The kernel's own answers (the control); IPv4 source routing needs CAP_NET_RAW, so
    # unprivileged the kernel refuses it itself (a sandbox run as root would have it).
    root = os.geteuid() == 0
    assert got == {"long_cmsg": -errno.EINVAL, "creds": 1,
                   "retopts": 1 if root else -errno.EPERM, "ttl": 1,
                   "ip_options": 0 if root else errno.EPERM}
    received(socks["127.0.0.1"])
    r = run(*SYSTEM_READ, "--net-allow", f"udp://127.0.0.1:{port}", "--", PY, "-c", HOSTILE,
            str(port), timeout=30)
    assert json.loads(r.stdout) == {"long_cmsg": -errno.EINVAL, "creds": -errno.EPERM,
                                    "retopts": -errno.EPERM, "ttl": 1,
                                    "ip_options": errno.EPERM}, r.stderr
    assert received(socks["127.0.0.1"]) == [b"x"]  # the plain one went through
