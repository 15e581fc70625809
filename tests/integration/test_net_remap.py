# SPDX-License-Identifier: LGPL-2.1-or-later
"""port_remap: each sandbox has a TCP port space of its own. The supervisor makes the sandbox's
TCP binds; a port the host (or another sandbox) holds is bound elsewhere and remembered,
getsockname/getpeername report the virtual port, a loopback connect to the virtual port reaches
the real one, and /proc/net/tcp{,6} list only the sandbox's sockets. Every test has its control:
the same program without --port-remap meets the host's port."""

import json
import os
import socket
import subprocess

import pytest

from conftest import PY, SANDLOCK, SYSTEM_READ, landlock_abi, require, run

# Binds @port on 127.0.0.1 (or ::1 with "6"), prints what getsockname says, then waits for a
# line on stdin (so the test can hold two sandboxes bound at once), then connects to its own
# port from a child process, which prints the greeting it gets and the peer port it sees, and
# prints which sockets /proc/net/tcp{,6} lists (by inode, as strings) under several spellings.
SERVER = r"""
import json, os, select, socket, sys
port, tag, fam = int(sys.argv[1]), sys.argv[2], sys.argv[3]
family, host, table = ((socket.AF_INET6, "::1", "tcp6") if fam == "6"
                       else (socket.AF_INET, "127.0.0.1", "tcp"))
s = socket.socket(family)
try:
    s.bind((host, port))
except OSError as e:
    print(json.dumps({"bind": e.errno}), flush=True)
    sys.exit(0)
s.listen(8)
print(json.dumps({"bind": 0, "sockname": s.getsockname()[1]}), flush=True)
sys.stdin.readline()
r, w = os.pipe()
if os.fork() == 0:
    c = socket.socket(family)
    c.connect((host, port))
    os.write(w, json.dumps({"got": c.recv(64).decode(), "peer": c.getpeername()[1]}).encode())
    os._exit(0)
while True:  # every connection gets the tag (the test's own from the host too)
    ready = select.select([s, r], [], [])[0]
    if s in ready:
        a, _ = s.accept()
        try:
            a.sendall(tag.encode())
        except OSError:
            pass
        a.close()
    if r in ready:
        break
child = json.loads(os.read(r, 4096))
os.wait()

def inodes(text):
    rows = [line.split() for line in text.splitlines()[1:]]
    return {int(f[9]): int(f[1].rsplit(":", 1)[1], 16) for f in rows}

views = {}
views["plain"] = inodes(open(f"/proc/net/{table}").read())
views["self"] = inodes(open(f"/proc/self/net/{table}").read())
views["pid"] = inodes(open(f"/proc/{os.getpid()}/task/{os.getpid()}/net/{table}").read())
views["dotdot"] = inodes(open(f"/proc/../proc/./net//{table}").read())
d = os.open("/proc/net", os.O_RDONLY | os.O_DIRECTORY)
fd = os.open(table, os.O_RDONLY, dir_fd=d)
views["dirfd"] = inodes(os.read(fd, 1 << 20).decode())
views["fdpath"] = inodes(open(f"/proc/self/fd/{d}/{table}").read())
views["reopen"] = inodes(open(f"/dev/fd/{fd}").read())
print(json.dumps({**child, "listener": os.fstat(s.fileno()).st_ino, "views": views}), flush=True)
"""


@pytest.fixture(autouse=True)
def _net_tcp():
    require(landlock_abi() >= 4, "Landlock ABI 4 (NetTcp)")


def hold(port, family=socket.AF_INET):
    """A host listener on @port of loopback (the port must be free)."""
    s = socket.socket(family)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("::1" if family == socket.AF_INET6 else "127.0.0.1", port))
    s.listen(16)
    return s


@pytest.fixture
def host_port():
    """8080 held by a host listener, as the issue has it; another port if 8080 is taken."""
    try:
        s = hold(8080)
    except OSError:
        s = hold(0)
    yield s.getsockname()[1], os.fstat(s.fileno()).st_ino
    s.close()


def start(port, tag, *flags, family="4", name=None):
    args = [SANDLOCK, "run", *SYSTEM_READ, "-r", "/proc", "--net-allow-bind", str(port),
            "--net-allow", f"{'[::1]' if family == '6' else '127.0.0.1'}:{port}", *flags]
    if name:
        args += ["--name", name]
    proc = subprocess.Popen([*args, "--", PY, "-c", SERVER, str(port), tag, family],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    first = json.loads(proc.stdout.readline() or "{}")
    return proc, first


def finish(proc):
    out, err = proc.communicate("\n", timeout=60)
    assert proc.returncode == 0, err
    return json.loads(out)


def test_without_remap_the_host_port_is_taken(host_port):
    port, host_inode = host_port
    proc, first = start(port, "A")
    proc.communicate(timeout=60)
    assert first == {"bind": 98}  # EADDRINUSE: the host holds it
    # And the table is the host's, its listener included.
    out = run(*SYSTEM_READ, "-r", "/proc", "--", PY, "-c",
              "print(open('/proc/net/tcp').read())", timeout=60).stdout.decode()
    assert f" {host_inode} " in out


def test_two_sandboxes_bind_the_port_the_host_holds(host_port):
    port, host_inode = host_port
    a, fa = start(port, "A", "--port-remap", name="remap-a")
    b, fb = start(port, "B", "--port-remap", name="remap-b")
    try:
        # Both bound at once, while the host holds the port: each sees the port it asked for.
        assert fa == {"bind": 0, "sockname": port}
        assert fb == {"bind": 0, "sockname": port}
        ps = subprocess.run([SANDLOCK, "ps"], capture_output=True, text=True, timeout=30).stdout
        rows = {line.split()[0]: line.split()[4] for line in ps.splitlines()[1:]}
        reals = {}
        for name in ("remap-a", "remap-b"):
            virt, real = rows[name].split("->")
            assert int(virt) == port and int(real) != port
            reals[name] = int(real)
        assert reals["remap-a"] != reals["remap-b"]
        # The real ports are live listeners on the host: the sandboxes' servers.
        for real in reals.values():
            socket.create_connection(("127.0.0.1", real), timeout=5).close()
    finally:
        ra, rb = finish(a), finish(b)
    # Each reached its own server on the port, not the host's nor the other sandbox's.
    assert (ra["got"], rb["got"]) == ("A", "B")
    assert ra["peer"] == rb["peer"] == port
    for r in (ra, rb):
        for spelling, view in r["views"].items():
            assert view.get(str(r["listener"])) == port, spelling
            assert str(host_inode) not in view, spelling
    assert str(ra["listener"]) not in rb["views"]["plain"]


def test_tcp6_view_and_remap():
    require(socket.has_ipv6 and os.path.exists("/proc/net/tcp6"), "IPv6")
    host = hold(0, socket.AF_INET6)
    port, host_inode = host.getsockname()[1], os.fstat(host.fileno()).st_ino
    try:
        proc, first = start(port, "six", "--port-remap", family="6")
        assert first == {"bind": 0, "sockname": port}
        r = finish(proc)
        assert r["got"] == "six" and r["peer"] == port
        assert set(r["views"]) >= {"plain", "self", "dirfd", "fdpath", "reopen"}
        for spelling, view in r["views"].items():
            assert view.get(str(r["listener"])) == port, spelling
            assert str(host_inode) not in view, spelling
        # Control: without port_remap the real table lists the host's listener.
        out = run(*SYSTEM_READ, "-r", "/proc", "--", PY, "-c",
                  "print(open('/proc/net/tcp6').read())", timeout=60).stdout.decode()
        assert f" {host_inode} " in out
    finally:
        host.close()


def test_connect_to_a_port_the_sandbox_did_not_bind_reaches_the_host(host_port):
    port, _ = host_port
    code = ("import socket,sys; c=socket.create_connection(('127.0.0.1', int(sys.argv[1])));"
            "print(c.getpeername()[1])")
    r = run(*SYSTEM_READ, "--port-remap", "--net-allow", f"127.0.0.1:{port}", "--", PY, "-c",
            code, str(port), timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().split() == [str(port)]


BINDS = r"""
import socket, sys
held = []
for port in map(int, sys.argv[1:]):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        s.listen(1)
        held.append(s)
        print(port, "ok", s.getsockname()[1])
    except OSError as e:
        print(port, e.errno)
"""


def binds(*flags, ports):
    r = run(*SYSTEM_READ, *flags, "--", PY, "-c", BINDS, *map(str, ports), timeout=60)
    assert r.returncode == 0, r.stderr
    return [line.split() for line in r.stdout.decode().splitlines()]


def test_bind_rules_apply_to_the_virtual_port(host_port):
    port, _ = host_port
    # Allowed: bound elsewhere, reported as asked. Not allowed: EACCES, as Landlock says.
    assert binds("--port-remap", "--net-allow-bind", str(port), ports=[port, port + 1]) == [
        [str(port), "ok", str(port)], [str(port + 1), "13"]]
    # No bind rule: no bind at all, remapped or not.
    assert binds("--port-remap", ports=[port]) == [[str(port), "13"]]
    # Deny wins over "*".
    assert binds("--port-remap", "--net-allow-bind", "*", "--net-deny-bind", str(port),
                 ports=[port]) == [[str(port), "13"]]


def test_the_sandbox_own_port_is_in_use_inside(host_port):
    port, _ = host_port
    # The second bind of a port the sandbox holds fails as it would on a host of its own
    # (the first, its control, is allowed and bound), and is not moved to another real port.
    assert binds("--port-remap", "--net-allow-bind", "*", ports=[port, port]) == [
        [str(port), "ok", str(port)], [str(port), "98"]]


def test_ephemeral_bind_under_remap():
    got = binds("--port-remap", "--net-allow-bind", "0", ports=[0])
    assert got[0][:2] == ["0", "ok"] and int(got[0][2]) > 0
    # Control: without the rule for port 0, the ephemeral bind is refused as Landlock says.
    assert binds("--port-remap", "--net-allow-bind", "1", ports=[0]) == [["0", "13"]]


UNSPEC = r"""
import ctypes, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
for port in map(int, sys.argv[1:]):
    s = socket.socket()
    # struct sockaddr_in with sin_family AF_UNSPEC (0) and INADDR_ANY: an IPv4 bind for the
    # kernel.
    addr = struct.pack("=HH4s8x", 0, socket.htons(port), bytes(4))
    r = libc.bind(s.fileno(), addr, len(addr))
    print(port, ctypes.get_errno() if r else "ok", s.getsockname()[1] if r == 0 else "-")
"""


def test_unspecified_family_bind_is_checked(host_port):
    port, _ = host_port
    other = port + 1
    # The AF_UNSPEC spelling of an IPv4 bind meets the same rules: the allowed (held) port is
    # bound elsewhere and reported as asked, the other refused. Control: without port_remap
    # Landlock refuses the other port the same way.
    for flags in (["--port-remap"], []):
        r = run(*SYSTEM_READ, *flags, "--net-allow-bind", str(port), "--", PY, "-c", UNSPEC,
                str(port), str(other), timeout=60)
        assert r.returncode == 0, r.stderr
        lines = [line.split() for line in r.stdout.decode().splitlines()]
        if flags:
            assert lines == [[str(port), "ok", str(port)], [str(other), "13", "-"]]
        else:
            assert lines == [[str(port), "98", "-"], [str(other), "13", "-"]]
