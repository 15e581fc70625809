# SPDX-License-Identifier: LGPL-2.1-or-later
"""sendmsg and sendmmsg with an address are checked like sendto in every supervised sandbox: a
named UNIX datagram socket needs a write grant covering its real path, abstract names are not
reached while Landlock's abstract-socket scope is in force, and the supervisor sends the copies
it checked, so a thread rewriting the address after the check reaches nothing new. Each
refusal is against a live socket that receives the same datagram from outside the sandbox."""

import errno
import json
import os
import socket
import subprocess
import uuid

import pytest

from conftest import PY, SYSTEM_READ, landlock_abi, require, run

# Sends b"datagram" to each socket path in argv with sendmsg or sendmmsg (ctypes: Python has no
# sendmmsg), from an unconnected socket and from one end of a socketpair (connected: the kernel
# still honours msg_name there); prints each result (bytes or messages sent, or -errno).
CLIENT = r"""
import ctypes, json, socket, sys
libc = ctypes.CDLL(None, use_errno=True)

class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

class msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.c_void_p), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]

class mmsghdr(ctypes.Structure):
    _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]

def addr_of(path):
    raw = path.encode() if not path.startswith("@") else b"\0" + path[1:].encode()
    buf = ctypes.create_string_buffer(2 + 108)
    ctypes.memmove(buf, (socket.AF_UNIX).to_bytes(2, sys.byteorder) + raw, 2 + len(raw))
    return buf, 2 + len(raw) + (0 if path.startswith("@") else 1)

payload = ctypes.create_string_buffer(b"datagram", 8)
iov = iovec(ctypes.cast(payload, ctypes.c_void_p), 8)

def send(fd, how, path):
    buf, n = addr_of(path)
    m = msghdr(ctypes.cast(buf, ctypes.c_void_p), n, ctypes.cast(ctypes.pointer(iov),
               ctypes.c_void_p), 1, None, 0, 0)
    if how == "sendmsg":
        r = libc.sendmsg(fd, ctypes.byref(m), 0)
    else:
        v = (mmsghdr * 2)(mmsghdr(m, 0), mmsghdr(m, 0))
        r = libc.sendmmsg(fd, v, 2, 0)
    return r if r >= 0 else -ctypes.get_errno()

res = {}
for spec in sys.argv[1:]:
    how, kind, path = spec.split(":", 2)
    if kind == "pair":
        s = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)[0]
    elif kind.startswith("connected="):  # connected to a peer, the address another socket's
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.connect(kind.split("=", 1)[1])
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    res[spec] = send(s.fileno(), how, path)
print(json.dumps(res))
"""


def client(args, *specs):
    r = run(*SYSTEM_READ, *args, "--", PY, "-c", CLIENT, *specs, timeout=30)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def outside(*specs):
    r = subprocess.run([PY, "-c", CLIENT, *specs], capture_output=True, timeout=30)
    return json.loads(r.stdout)


def receiver(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(str(path))
    s.setblocking(False)
    return s


def drain(s):
    got = []
    while True:
        try:
            got.append(s.recv(64))
        except BlockingIOError:
            return got


SPECS = [f"{how}:{kind}" for how in ("sendmsg", "sendmmsg") for kind in ("plain", "pair")]


def test_sendmsg_to_named_datagram_socket_needs_a_write_grant(tmp_path):
    d = tmp_path / "dg"
    d.mkdir()
    srv = receiver(d / "sock")
    specs = [f"{s}:{d / 'sock'}" for s in SPECS]
    sent = {s: (8 if s.startswith("sendmsg:") else 2) for s in specs}
    assert outside(*specs) == sent  # the negative control, outside any sandbox
    assert len(drain(srv)) == 6
    # Outside every write grant: sendto's answer, and nothing arrives.
    assert client([], *specs) == {s: -errno.EACCES for s in specs}
    assert client(["-r", str(d)], *specs) == {s: -errno.EACCES for s in specs}
    assert drain(srv) == []
    # Inside a write grant: delivered, every message of a sendmmsg.
    assert client(["-w", str(d)], *specs) == sent
    assert drain(srv) == [b"datagram"] * 6
    missing = [f"{s}:{d / 'nothing'}" for s in SPECS[:1]]
    assert client(["-w", str(d)], *missing) == {missing[0]: -errno.ENOENT}
    srv.close()


def test_a_connected_socket_is_no_excuse(tmp_path):
    d, g = tmp_path / "dg", tmp_path / "granted"
    d.mkdir()
    g.mkdir()
    srv, peer = receiver(d / "sock"), receiver(g / "peer")
    specs = [f"{how}:connected={g / 'peer'}:{d / 'sock'}" for how in ("sendmsg", "sendmmsg")]
    assert outside(*specs) == {specs[0]: 8, specs[1]: 2}  # the kernel honours msg_name
    assert len(drain(srv)) == 3 and drain(peer) == []
    assert client(["-w", str(g)], *specs) == {s: -errno.EACCES for s in specs}
    assert drain(srv) == [] and drain(peer) == []
    # Without an address, to the peer it is connected to (inside the grant): sent.
    r = run(*SYSTEM_READ, "-w", str(g), "--", PY, "-c",
            "import socket, sys; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); "
            "s.connect(sys.argv[1]); print(s.sendmsg([b'datagram']))", str(g / "peer"),
            timeout=30)
    assert r.stdout.decode().split() == ["8"], r.stderr
    assert drain(peer) == [b"datagram"]
    srv.close()
    peer.close()


def test_sendmsg_to_abstract_names(tmp_path):
    require(landlock_abi() >= 6, "Landlock ABI 6 (abstract UNIX socket scope)")
    name = "sandlock-test-" + uuid.uuid4().hex
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    srv.bind("\0" + name)
    srv.setblocking(False)
    specs = [f"{s}:@{name}" for s in ("sendmsg:plain", "sendmmsg:plain")]
    assert outside(*specs) == {specs[0]: 8, specs[1]: 2}
    assert len(drain(srv)) == 3
    assert client([], *specs) == {s: -errno.EPERM for s in specs}
    assert drain(srv) == []
    # With the scope disabled, the user asked for every abstract name.
    got = client(["--disable", "abstract-unix-socket-scope"], *specs)
    assert got == {specs[0]: 8, specs[1]: 2}
    assert len(drain(srv)) == 3
    srv.close()


# One thread sends with sendmsg (the ctypes call drops the GIL, so the other runs meanwhile),
# the other rewrites the path in the address between an allowed and a refused socket.
RACE = r"""
import ctypes, socket, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
good, bad, n = sys.argv[1].encode(), sys.argv[2].encode(), int(sys.argv[3])
assert len(good) == len(bad)

class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

class msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.c_void_p), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]

addr = ctypes.create_string_buffer(2 + 108)
ctypes.memmove(addr, (socket.AF_UNIX).to_bytes(2, sys.byteorder) + good, 2 + len(good))
payload = ctypes.create_string_buffer(b"x", 1)
iov = iovec(ctypes.cast(payload, ctypes.c_void_p), 1)
m = msghdr(ctypes.cast(addr, ctypes.c_void_p), 2 + len(good) + 1,
           ctypes.cast(ctypes.pointer(iov), ctypes.c_void_p), 1, None, 0, 0)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
stop = False
dest = ctypes.addressof(addr) + 2

def flip():
    while not stop:
        ctypes.memmove(dest, bad, len(bad))
        ctypes.memmove(dest, good, len(good))

t = threading.Thread(target=flip)
t.start()
ok = refused = 0
for _ in range(n):
    r = libc.sendmsg(s.fileno(), ctypes.byref(m), socket.MSG_DONTWAIT)
    if r == 1:
        ok += 1
    else:
        refused += 1
stop = True
t.join()
print(ok, refused)
"""


def test_rewriting_the_address_after_the_check_reaches_nothing(tmp_path):
    good_dir, bad_dir = tmp_path / "aaaa", tmp_path / "bbbb"
    good_dir.mkdir()
    bad_dir.mkdir()
    good, bad = receiver(good_dir / "sock"), receiver(bad_dir / "sock")
    for s in (good, bad):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    n = 10000
    # Drain while the sandbox sends, so that a full receiver never holds up the run.
    import threading
    counts, stop = {"good": 0, "bad": 0}, threading.Event()

    def pump():
        import select
        while not stop.is_set() or select.select([good, bad], [], [], 0)[0]:
            for s, k in ((good, "good"), (bad, "bad")):
                counts[k] += len(drain(s))
            select.select([good, bad], [], [], 0.01)

    t = threading.Thread(target=pump)
    t.start()
    try:
        r = run(*SYSTEM_READ, "-w", str(good_dir), "--", PY, "-c", RACE,
                str(good_dir / "sock"), str(bad_dir / "sock"), str(n), timeout=60)
    finally:
        stop.set()
        t.join()
    assert r.returncode == 0, r.stderr
    ok, refused = map(int, r.stdout.split())
    assert ok + refused == n
    assert counts["bad"] == 0  # what was refused never arrived
    assert ok > 0 and refused > 0 and counts["good"] == ok
    good.close()
    bad.close()


# The launch's own sendmsg goes untrapped with one flag (0x8000000, which the kernel ignores or
# clears); once launched, the command gets EINVAL for it, and the datagram goes nowhere.
LAUNCH_FLAG = r"""
import ctypes, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    s.sendmsg([b"datagram"], [], 0x8000000, sys.argv[1])
    print("sent")
except OSError as e:
    print(e.errno)
"""


def test_the_launch_flag_is_refused_to_the_command(tmp_path):
    d = tmp_path / "dg"
    d.mkdir()
    srv = receiver(d / "sock")
    plain = subprocess.run([PY, "-c", LAUNCH_FLAG, str(d / "sock")], capture_output=True,
                           text=True, timeout=30)
    assert plain.stdout.split() == ["sent"]  # the control: the kernel ignores the flag
    assert drain(srv) == [b"datagram"]
    for grant in ([], ["-w", str(d)]):
        r = run(*SYSTEM_READ, *grant, "--", PY, "-c", LAUNCH_FLAG, str(d / "sock"), timeout=30)
        assert r.stdout.decode().split() == [str(errno.EINVAL)], r.stderr
    assert drain(srv) == []
    srv.close()
