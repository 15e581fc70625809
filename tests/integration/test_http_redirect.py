# SPDX-License-Identifier: LGPL-2.1-or-later
"""The redirect to the HTTP proxy: a TCP connect to an intercepted port (http_ports, default 80,
and a rule's own port) is made by the supervisor to the sandbox's proxy, which connects to the
original destination; getpeername still reports that destination. The proxy's own listeners are
never reachable from the sandbox, TCP Fast Open cannot skip the redirect, a connect to an allowed
port that is not intercepted goes direct, and one no rule allows is refused. Every server is
started here, on 127.0.0.1 (127.0.0.2 where another address is the point)."""

import errno
import json
import os
import socket
import subprocess
import threading

import pytest

from conftest import PY, SANDLOCK, SYSTEM_READ, landlock_abi, require, run, wait_until


@pytest.fixture(autouse=True)
def _net_tcp():
    require(landlock_abi() >= 4, "Landlock ABI 4 (NetTcp)")


class Origin:
    """An HTTP server on @host that answers each request with the client port it saw, and
    remembers (client port, request line) for each connection."""

    def __init__(self, host="127.0.0.1", port=0):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, port))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.seen = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, peer = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                data = b""
                try:
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                except OSError:
                    pass
                self.seen.append((peer[1], data.split(b"\r\n", 1)[0].decode(errors="replace")))
                body = str(peer[1]).encode()
                try:
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close"
                                 b"\r\n\r\n%s" % (len(body), body))
                except OSError:
                    pass

    def close(self):
        self.sock.close()


@pytest.fixture
def origins():
    made = []

    def make(*args):
        o = Origin(*args)
        made.append(o)
        return o
    yield make
    for o in made:
        o.close()


# In the sandbox: connect to each HOST:PORT of argv (a "nb:" prefix: non-blocking, "tfo:"
# prefix: TCP_FASTOPEN_CONNECT set first), then print the connect's errno, getpeername,
# getsockname's port and, when connected, the body of the answer to "GET /x".
CLIENT = r"""
import json, select, socket, sys
for target in sys.argv[1:]:
    how = ""
    if target.startswith(("nb:", "tfo:")):
        how, target = target.split(":", 1)
    host, port = target.rsplit(":", 1)
    s = socket.socket()
    if how == "tfo":
        s.setsockopt(socket.IPPROTO_TCP, 30, 1)  # TCP_FASTOPEN_CONNECT
    if how == "nb":
        s.setblocking(False)
    e = s.connect_ex((host, int(port)))
    if how == "nb" and e == 115:  # EINPROGRESS
        select.select([], [s], [], 10)
        e = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        s.setblocking(True)
    out = {"errno": e}
    if e == 0:
        out["peer"] = list(s.getpeername())
        out["local"] = s.getsockname()[1]
        s.settimeout(10)
        s.sendall(b"GET /x HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n\r\n"
                  % (host.encode(), port.encode()))
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        out["status"] = data.split(b" ", 2)[1].decode() if data else ""
        out["body"] = data.split(b"\r\n\r\n", 1)[-1].decode()
    print(json.dumps(out), flush=True)
"""


def connects(flags, *targets):
    r = run(*SYSTEM_READ, *flags, "--", PY, "-c", CLIENT, *targets, timeout=30)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.decode().splitlines()]


def test_intercepted_connect_goes_through_the_proxy(origins):
    o = origins()
    flags = ["--http-port", str(o.port), "--http-allow", "GET 127.0.0.1/x"]
    got = connects(flags, f"127.0.0.1:{o.port}", f"nb:127.0.0.1:{o.port}")
    for c in got:
        assert c["errno"] == 0, c
        # getpeername: the destination the program asked for, not the proxy.
        assert c["peer"] == ["127.0.0.1", o.port]
        assert c["status"] == "200"
        # The origin was reached from another socket than the child's: the proxy's.
        assert int(c["body"]) != c["local"]
    assert [line for _, line in o.seen] == ["GET /x HTTP/1.1"] * 2
    # Control: the same destination allowed by a net rule alone goes direct.
    o.seen.clear()
    direct = connects(["--net-allow", f"tcp://127.0.0.1:{o.port}"], f"127.0.0.1:{o.port}")[0]
    assert direct["errno"] == 0 and direct["peer"] == ["127.0.0.1", o.port]
    assert int(direct["body"]) == direct["local"]


def test_a_rule_port_is_intercepted(origins):
    o = origins()
    c = connects(["--http-allow", f"GET 127.0.0.1:{o.port}/x"], f"127.0.0.1:{o.port}")[0]
    assert c["errno"] == 0 and c["peer"] == ["127.0.0.1", o.port] and c["status"] == "200"
    assert int(c["body"]) != c["local"]


def test_non_intercepted_allowed_port_goes_direct(origins):
    http, other = origins(), origins()
    flags = ["--http-port", str(http.port), "--http-allow", "GET 127.0.0.1/x", "--net-allow",
             f"tcp://127.0.0.1:{other.port}"]
    via, direct = connects(flags, f"127.0.0.1:{http.port}", f"127.0.0.1:{other.port}")
    assert via["errno"] == 0 and int(via["body"]) != via["local"]  # control: intercepted
    assert direct["errno"] == 0 and direct["peer"] == ["127.0.0.1", other.port]
    assert int(direct["body"]) == direct["local"]  # the origin saw the child's own socket


def test_destination_no_rule_allows_is_refused(origins):
    o = origins()
    other = origins()
    try:
        second = origins("127.0.0.2", o.port)
    except OSError as e:
        pytest.skip(f"127.0.0.2:{o.port}: {e}")
    # Control: each accepts a connection from outside the sandbox.
    for host, port in (("127.0.0.1", o.port), ("127.0.0.2", second.port),
                       ("127.0.0.1", other.port)):
        socket.create_connection((host, port), timeout=5).close()
    flags = ["--http-allow", f"GET 127.0.0.1:{o.port}/x"]
    got = connects(flags, f"127.0.0.1:{o.port}", f"127.0.0.2:{o.port}",
                   f"127.0.0.1:{other.port}")
    assert [c["errno"] for c in got] == [0, errno.ECONNREFUSED, errno.ECONNREFUSED]


def listening_ports(pid):
    """The TCP ports process @pid listens on: its socket inodes matched in /proc/net/tcp{,6}."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    found = []
    for name, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        try:
            with open(f"/proc/{pid}/net/{name}") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                addr, port = fields[1].split(":")
                found.append((family, int(port, 16)))
    return found


# Reads PORT lines from stdin; for each, connects to 127.0.0.1 and ::1 on it and prints the
# errnos; "go" ends.
PROBE = r"""
import socket, sys
print("ready", flush=True)
for line in sys.stdin:
    if line.strip() == "go":
        break
    family, port = line.split()
    host = "::1" if family == "6" else "127.0.0.1"
    s = socket.socket(socket.AF_INET6 if family == "6" else socket.AF_INET)
    print(family, port, s.connect_ex((host, int(port))), flush=True)
"""


def test_proxy_listener_is_refused(origins):
    o = origins()
    p = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, "--http-allow", "GET 127.0.0.1/x",
                          "--net-allow", "tcp://127.0.0.1", "--net-allow", "tcp://[::1]", "--",
                          PY, "-c", PROBE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
        ports = wait_until(lambda: listening_ports(p.pid), timeout=10)
        assert ports, "the supervisor listens (the proxy)"
        lines = []
        for family, port in ports:
            host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
            # Control: it is a live listener, which accepts from outside the sandbox.
            socket.create_connection((host, port), timeout=5).close()
            lines.append(f"{6 if family == socket.AF_INET6 else 4} {port}")
        lines.append(f"4 {o.port}")  # control: the same rules reach another local port
        p.stdin.write("\n".join(lines) + "\ngo\n")
        p.stdin.flush()
        out, err = p.communicate(timeout=30)
    finally:
        p.kill()
        p.wait()
    got = [line.split() for line in out.splitlines()]
    assert len(got) == len(lines), err
    for fam, port, e in got[:-1]:
        assert int(e) == errno.ECONNREFUSED, (fam, port)
    assert got[-1] == ["4", str(o.port), "0"]


TFO = r"""
import socket, sys
port = int(sys.argv[1])
for how in ("sendto", "sendmsg"):
    s = socket.socket()
    try:
        if how == "sendto":
            s.sendto(b"GET /x HTTP/1.1\r\n\r\n", socket.MSG_FASTOPEN, ("127.0.0.1", port))
        else:
            s.sendmsg([b"GET /x HTTP/1.1\r\n\r\n"], [], socket.MSG_FASTOPEN, ("127.0.0.1", port))
        print(how, "sent")
    except OSError as e:
        print(how, e.errno)
"""


def test_fast_open_cannot_skip_the_redirect(origins):
    with open("/proc/sys/net/ipv4/tcp_fastopen") as f:
        require(int(f.read()) & 1, "client TCP Fast Open (net.ipv4.tcp_fastopen & 1)")
    o = origins()
    outside = subprocess.run([PY, "-c", TFO, str(o.port)], capture_output=True, text=True,
                             timeout=30)
    assert outside.stdout.split() == ["sendto", "sent", "sendmsg", "sent"]  # control
    flags = ["--http-port", str(o.port), "--http-allow", "GET 127.0.0.1/x"]
    r = run(*SYSTEM_READ, *flags, "--", PY, "-c", TFO, str(o.port), timeout=30)
    # MSG_FASTOPEN connects without connect(): refused (EOPNOTSUPP, as with client TFO off).
    assert r.stdout.decode().split() == ["sendto", "95", "sendmsg", "95"], r.stderr
    # TCP_FASTOPEN_CONNECT goes through connect(): redirected like any other.
    c = connects(flags, f"tfo:127.0.0.1:{o.port}")[0]
    assert c["errno"] == 0 and c["peer"] == ["127.0.0.1", o.port] and c["status"] == "200"
    assert int(c["body"]) != c["local"]


def test_getpeername_of_a_socket_not_connected():
    # With the proxy, getpeername is trapped: an unconnected socket still says ENOTCONN.
    code = ("import socket\ns = socket.socket()\ntry:\n    s.getpeername()\n"
            "except OSError as e:\n    print(e.errno)\n")
    r = run(*SYSTEM_READ, "--http-allow", "GET 127.0.0.1/x", "--", PY, "-c", code, timeout=30)
    assert r.stdout.decode().split() == [str(errno.ENOTCONN)], r.stderr


@pytest.mark.parametrize("flags,message", [
    (["--no-supervisor", "--http-deny", "GET 127.0.0.1/x"],
     "sandlock: --no-supervisor: cannot enforce --http-deny rules (the HTTP proxy runs in the "
     "supervisor)"),
    (["--disable", "net-tcp", "--http-allow", "GET 127.0.0.1/x"],
     "sandlock: --http-allow rules need the net-tcp protection (Landlock ABI 4), which is "
     "disabled here"),
    (["--http-allow", "GET 127.0.0.1/x", "--credential", "k=env:SANDLOCK_TEST_UNSET_VAR"],
     "sandlock: --credential: k: environment variable SANDLOCK_TEST_UNSET_VAR is not set"),
])
def test_what_the_redirect_needs(flags, message):
    # Control: the same rules with what they need run.
    assert run(*SYSTEM_READ, "--http-allow", "GET 127.0.0.1/x", "--", "true",
               timeout=30).returncode == 0
    env = {k: v for k, v in os.environ.items() if k != "SANDLOCK_TEST_UNSET_VAR"}
    r = run(*SYSTEM_READ, *flags, "--", "true", timeout=30, env=env)
    assert (r.returncode, r.stderr.decode().splitlines()) == (1, [message])
