# SPDX-License-Identifier: LGPL-2.1-or-later
"""Named UNIX sockets need a write grant covering the socket's real path (connect and sendto
are trapped in every supervised sandbox); abstract names are not reached while Landlock's
abstract-socket scope is in force. Each refusal is against a live server that answers the same
client outside the sandbox."""

import errno
import json
import os
import socket
import subprocess
import uuid

import pytest

from conftest import PY, SYSTEM_READ, landlock_abi, require, run

CLIENT = r"""
import json, os, socket, sys
res = {}
for spec in sys.argv[1:]:
    kind, path = spec.split("=", 1)
    if path.startswith("@"):
        path = "\0" + path[1:]
    try:
        if kind == "stream":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect(path)
            s.sendall(b"hello")
            res[spec] = s.recv(16).decode()
        elif kind == "chdir":
            os.chdir(os.path.dirname(path))
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect(os.path.basename(path))
            s.sendall(b"hello")
            res[spec] = s.recv(16).decode()
        elif kind in ("procfd", "devfd"):  # through a descriptor of the socket's directory
            d = os.open(os.path.dirname(path), os.O_PATH | os.O_DIRECTORY)
            base = "/proc/self/fd" if kind == "procfd" else "/dev/fd"
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(5)
            s.connect(f"{base}/{d}/{os.path.basename(path)}")
            s.sendall(b"hello")
            res[spec] = s.recv(16).decode()
        else:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            s.sendto(b"datagram", path)
            res[spec] = "sent"
    except OSError as e:
        res[spec] = e.errno
print(json.dumps(res))
"""


@pytest.fixture
def echo_server():
    """A stream server at a path that answers "echo:<data>" to each connection, and a datagram
    socket; yields a function making both at a path."""
    made = []

    def make(path, abstract=False):
        addr = ("\0" + path) if abstract else str(path)
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(addr)
        srv.listen(8)
        srv.settimeout(10)
        made.append(srv)
        pid = os.fork()
        if pid == 0:
            try:
                while True:
                    c, _ = srv.accept()
                    d = c.recv(16)
                    c.sendall(b"echo:" + d)
                    c.close()
            finally:
                os._exit(0)
        made.append(pid)
        return addr

    yield make
    for m in made:
        if isinstance(m, int):
            os.kill(m, 9)
            os.waitpid(m, 0)
        else:
            m.close()


def client(args, *specs):
    r = run(*SYSTEM_READ, *args, "--", PY, "-c", CLIENT, *specs, timeout=30)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def outside(*specs):
    r = subprocess.run([PY, "-c", CLIENT, *specs], capture_output=True, timeout=30)
    return json.loads(r.stdout)


def test_named_stream_socket_needs_a_write_grant(tmp_path, echo_server):
    d = tmp_path / "srv"
    d.mkdir()
    echo_server(d / "sock")
    spec = f"stream={d / 'sock'}"
    assert outside(spec) == {spec: "echo:hello"}  # the negative control
    assert client([], spec) == {spec: errno.EACCES}
    assert client(["-r", str(d)], spec) == {spec: errno.EACCES}  # read is not enough
    assert client(["-w", str(d)], spec) == {spec: "echo:hello"}
    assert client(["-w", str(d / "sock")], spec) == {spec: "echo:hello"}


def test_relative_name_and_symlinks(tmp_path, echo_server):
    d, other = tmp_path / "granted", tmp_path / "other"
    d.mkdir()
    other.mkdir()
    echo_server(other / "sock")
    (d / "link").symlink_to(other / "sock")
    # A link in a granted directory to a socket outside it: the real path decides.
    spec = f"stream={d / 'link'}"
    assert outside(spec) == {spec: "echo:hello"}
    assert client(["-w", str(d), "-r", str(tmp_path)], spec) == {spec: errno.EACCES}
    assert client(["-w", str(other), "-r", str(tmp_path)], spec) == {spec: "echo:hello"}
    # A relative name, from the caller's working directory.
    spec = f"chdir={other / 'sock'}"
    assert client(["-r", str(tmp_path)], spec) == {spec: errno.EACCES}
    assert client(["-w", str(other)], spec) == {spec: "echo:hello"}
    # A name through one of the caller's descriptors (/proc/self/fd/N/..., /dev/fd/N/...) is
    # resolved from that descriptor, the caller's, and the real path decides the same way.
    for kind in ("procfd", "devfd"):
        spec = f"{kind}={other / 'sock'}"
        assert outside(spec) == {spec: "echo:hello"}
        assert client(["-r", str(tmp_path)], spec) == {spec: errno.EACCES}
        assert client(["-w", str(other)], spec) == {spec: "echo:hello"}


def test_named_datagram_socket_needs_a_write_grant(tmp_path):
    d = tmp_path / "dg"
    d.mkdir()
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    srv.bind(str(d / "sock"))
    srv.settimeout(5)
    spec = f"dgram={d / 'sock'}"
    assert outside(spec) == {spec: "sent"}
    assert srv.recv(64) == b"datagram"
    assert client([], spec) == {spec: errno.EACCES}
    assert client(["-w", str(d)], spec) == {spec: "sent"}
    assert srv.recv(64) == b"datagram"
    missing = f"dgram={d / 'nothing'}"
    assert client(["-w", str(d)], missing) == {missing: errno.ENOENT}
    srv.close()


def test_abstract_names_not_reached(echo_server):
    require(landlock_abi() >= 6, "Landlock ABI 6 (abstract UNIX socket scope)")
    name = "sandlock-test-" + uuid.uuid4().hex
    echo_server(name, abstract=True)
    spec = f"stream=@{name}"
    assert outside(spec) == {spec: "echo:hello"}
    assert client([], spec) == {spec: errno.EPERM}
    # With the scope disabled, the user asked for every abstract name.
    assert client(["--disable", "abstract-unix-socket-scope"], spec) == {spec: "echo:hello"}


LONG_ADDR = r"""
import ctypes, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
path = sys.argv[1].encode()
addr = ctypes.create_string_buffer(struct.pack("=H", socket.AF_UNIX) + path, 128)
for n in (2 + len(path) + 1, 120):
    r = libc.connect(s.fileno(), addr, n)
    print(n, 0 if r == 0 else ctypes.get_errno())
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
"""


def test_address_longer_than_sockaddr_un(tmp_path, echo_server):
    # The kernel refuses an AF_UNIX address longer than a sockaddr_un (110) with EINVAL, even
    # when the path in it is fine; the supervisor, which reads the address, too.
    d = tmp_path / "s"
    d.mkdir()
    echo_server(d / "sock")
    n = 2 + len(str(d / "sock")) + 1
    expect = [f"{n} 0", f"120 {errno.EINVAL}"]
    plain = subprocess.run([PY, "-c", LONG_ADDR, str(d / "sock")], capture_output=True,
                           text=True, timeout=30)
    assert plain.stdout.splitlines() == expect
    r = run(*SYSTEM_READ, "-w", str(d), "--", PY, "-c", LONG_ADDR, str(d / "sock"), timeout=30)
    assert r.stdout.decode().splitlines() == expect, r.stderr
