# SPDX-License-Identifier: LGPL-2.1-or-later
"""/etc/hostname is the sandbox's name whenever --name gives one, as uname -n is, without a
grant of /etc or /proc: served read-only by the supervisor (the real file is never opened by
the sandbox). Without --name the file is the kernel's to refuse or the host's to show."""

import os

import pytest

from conftest import SYSTEM_READ, run

HOST_FILE = os.path.exists("/etc/hostname")


def test_name_is_etc_hostname_without_a_grant():
    r = run(*SYSTEM_READ, "--name", "box1", "--", "cat", "/etc/hostname")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"box1\n"
    # Every spelling that reaches it, relative ones included; uname agrees.
    r = run(*SYSTEM_READ, "--name", "box1", "--", "/bin/sh", "-c",
            "cd /etc && cat hostname ./hostname //etc/../etc/hostname; uname -n")
    assert r.stdout == b"box1\n" * 4, r.stderr


def test_name_is_etc_hostname_with_grants():
    for grants in (["-r", "/etc"], ["-r", "/proc"], ["-r", "/etc", "-r", "/proc"]):
        r = run(*SYSTEM_READ, *grants, "--name", "box2", "--", "cat", "/etc/hostname")
        assert r.returncode == 0, (grants, r.stderr)
        assert r.stdout == b"box2\n", grants


def test_served_read_only():
    # An open for writing that writes nothing: the host's file is safe whatever the outcome.
    r = run(*SYSTEM_READ, "-w", "/etc", "--name", "box3", "--", "/bin/sh", "-c",
            ": >> /etc/hostname")
    assert r.returncode == 2
    assert r.stderr == b"/bin/sh: 1: cannot create /etc/hostname: Permission denied\n"


def test_no_name_no_grant_is_refused():
    r = run(*SYSTEM_READ, "--", "cat", "/etc/hostname")
    assert r.returncode == 1
    assert r.stderr == b"cat: /etc/hostname: Permission denied\n"


@pytest.mark.skipif(not HOST_FILE, reason="the host has no /etc/hostname")
def test_no_name_with_grant_is_the_hosts():
    with open("/etc/hostname", "rb") as f:
        host = f.read()
    r = run(*SYSTEM_READ, "-r", "/etc", "--", "cat", "/etc/hostname")
    assert r.returncode == 0, r.stderr
    assert r.stdout == host
