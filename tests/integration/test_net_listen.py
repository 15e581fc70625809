# SPDX-License-Identifier: LGPL-2.1-or-later
"""listen(2) under bind rules: an unbound TCP socket's listen binds a port by itself (the
per-socket IP_LOCAL_PORT_RANGE chooses which), past Landlock's bind check, so the supervisor
decides on the socket it takes from the child and makes the listen on that same socket. A
thread swapping the descriptor number between the check and the call never gets a listener
on a port the rules refuse."""

import os
import random
import socket

from conftest import PY, SYSTEM_READ, run


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def listening_ports():
    """The local ports of every listening TCP socket on this host (state 0A)."""
    ports = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if fields[3] == "0A":
                        ports.add(int(fields[1].rsplit(":", 1)[1], 16))
        except FileNotFoundError:
            pass
    return ports


# Descriptor N flips between a TCP socket bound to the allowed port, an unbound UNIX socket and
# unbound TCP sockets whose automatic bind IP_LOCAL_PORT_RANGE points at refused ports, while
# another thread calls listen(N) (through ctypes, which drops the GIL: the two overlap).
RACE = r"""
import ctypes, os, socket, struct, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
allowed, lo, hi, n = (int(a) for a in sys.argv[1:5])
IP_LOCAL_PORT_RANGE = 51
bound = socket.socket()
bound.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
bound.bind(("127.0.0.1", allowed))
unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
def unbound():
    t = socket.socket()
    t.setsockopt(socket.IPPROTO_IP, IP_LOCAL_PORT_RANGE, struct.pack("=I", lo | (hi << 16)))
    return t
tcps = [unbound() for _ in range(4)]
num = os.dup(unix.fileno())
stop = False
def flip():
    while not stop:
        for s in (bound, unix, *tcps):
            os.dup2(s.fileno(), num)
t = threading.Thread(target=flip)
t.start()
ok = 0
for _ in range(n):
    if libc.listen(num, 8) == 0:
        ok += 1
stop = True
t.join()
leaked = [s.getsockname()[1] for s in tcps if s.getsockname()[1]]
print(ok, " ".join(map(str, leaked)) or "none", flush=True)
"""


def test_swapping_the_descriptor_never_listens_on_a_refused_port():
    allowed = free_port()
    lo = random.randrange(40000, 50000)
    hi = lo + 20
    before = listening_ports()
    r = run(*SYSTEM_READ, "--net-allow-bind", str(allowed), "--", PY, "-c", RACE,
            str(allowed), str(lo), str(hi), "10000", timeout=60)
    assert r.returncode == 0, r.stderr
    ok, leaked = r.stdout.decode().split(None, 1)
    assert leaked.strip() == "none", f"listeners on refused ports: {leaked}"
    assert int(ok) > 0  # the allowed socket listened (the negative control, in the race)
    # And nothing of the run listens in the refused range, as the host sees it.
    assert not {p for p in listening_ports() - before if lo <= p <= hi}


PLAIN = r"""
import errno, os, socket, struct, sys
allowed, lo = int(sys.argv[1]), int(sys.argv[2])
s = socket.socket()
s.bind(("127.0.0.1", allowed))
s.listen(1)
print("bound", "listens" if s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) else "no")
t = socket.socket()
t.setsockopt(socket.IPPROTO_IP, 51, struct.pack("=I", lo | ((lo + 5) << 16)))
try:
    t.listen(1)
    print("unbound", t.getsockname()[1])
except OSError as e:
    print("unbound", errno.errorcode[e.errno])
u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
u.bind("\0sandlock-test-listen-%d" % allowed)
u.listen(1)
print("unix", "listens" if u.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) else "no")
# A single-threaded server's listener keeps its own credentials (the kernel made the call).
n = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
n.bind(sys.argv[3])
n.listen(1)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect(sys.argv[3])
pid = struct.unpack("3i", c.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
print("peer", "self" if pid == os.getpid() else pid)
"""


def test_listen_on_the_allowed_port_and_unix_sockets(tmp_path):
    allowed = free_port()
    lo = random.randrange(40000, 50000)
    r = run(*SYSTEM_READ, "-w", str(tmp_path), "--net-allow-bind", str(allowed), "--", PY,
            "-c", PLAIN, str(allowed), str(lo), str(tmp_path / "sock"), timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().splitlines() == ["bound listens", "unbound EACCES", "unix listens",
                                              "peer self"]
