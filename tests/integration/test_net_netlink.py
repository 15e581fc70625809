# SPDX-License-Identifier: LGPL-2.1-or-later
"""NETLINK_ROUTE in a supervised sandbox is virtual: link and address dumps show only lo with
127.0.0.1/8 and ::1/128 (`ip addr`, if_nameindex()), changes are refused, and nothing of the
host's interfaces is visible. The control is the kernel's own answer, outside the sandbox and in
a sandbox without a supervisor."""

import re
import socket
import subprocess

import pytest

from conftest import PY, SYSTEM_READ, require, run

IP = "/usr/sbin/ip" if subprocess.run(["test", "-x", "/usr/sbin/ip"]).returncode == 0 \
    else "/sbin/ip"


@pytest.fixture
def host_has_more_than_lo():
    require(subprocess.run(["test", "-x", IP]).returncode == 0, "the ip tool (iproute2)")
    names = [n for _, n in socket.if_nameindex()]
    require(names != ["lo"], "a network interface besides lo (the negative control)")
    return names


def interfaces(text):
    return re.findall(r"^\d+: ([^:@]+)[:@]", text, re.M)


def addresses(text):
    return re.findall(r"^\s+inet6? (\S+)", text, re.M)


def test_ip_addr_shows_only_lo(host_has_more_than_lo):
    plain = subprocess.run([IP, "addr"], capture_output=True, text=True, timeout=30).stdout
    assert interfaces(plain) == host_has_more_than_lo  # the kernel's answer: all of them
    r = run(*SYSTEM_READ, "--", IP, "addr", timeout=30)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert interfaces(out) == ["lo"]
    assert addresses(out) == ["127.0.0.1/8", "::1/128"]
    # Without a supervisor the kernel answers (documented): the host's interfaces.
    r = run(*SYSTEM_READ, "--no-supervisor", "--", IP, "addr", timeout=30)
    assert interfaces(r.stdout.decode()) == host_has_more_than_lo


def test_if_nameindex_and_single_link(host_has_more_than_lo):
    code = "import socket; print(socket.if_nameindex())"
    r = run(*SYSTEM_READ, "--", PY, "-c", code, timeout=30)
    assert r.stdout.decode().strip() == "[(1, 'lo')]"
    other = next(n for n in host_has_more_than_lo if n != "lo")
    assert subprocess.run([IP, "link", "show", other], capture_output=True,
                          timeout=30).returncode == 0
    r = run(*SYSTEM_READ, "--", IP, "link", "show", other, timeout=30)
    assert r.returncode != 0 and b"does not exist" in r.stderr
    r = run(*SYSTEM_READ, "--", IP, "link", "show", "lo", timeout=30)
    assert r.returncode == 0 and interfaces(r.stdout.decode()) == ["lo"]


def test_changes_refused(host_has_more_than_lo):
    r = run(*SYSTEM_READ, "--", IP, "link", "set", "lo", "mtu", "1500", timeout=30)
    assert r.returncode == 2
    assert r.stderr.decode().strip() == "RTNETLINK answers: Operation not permitted"
    r = run(*SYSTEM_READ, "--", IP, "route", timeout=30)  # a dump: nothing of the host's
    assert (r.returncode, r.stdout) == (0, b"")
    plain = subprocess.run([IP, "route"], capture_output=True, timeout=30).stdout
    require(plain != b"", "a route on the host (the negative control)")


SOCKNAME = r"""
import socket
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.bind((0, 0))
pid, groups = s.getsockname()
print(s.family == socket.AF_NETLINK, pid != 0, groups)
"""


def test_socket_looks_like_netlink():
    plain = subprocess.run([PY, "-c", SOCKNAME], capture_output=True, text=True, timeout=30)
    assert plain.stdout.split() == ["True", "True", "0"]
    r = run(*SYSTEM_READ, "--", PY, "-c", SOCKNAME, timeout=30)
    assert r.stdout.decode().split() == ["True", "True", "0"], r.stderr
