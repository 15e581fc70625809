# SPDX-License-Identifier: LGPL-2.1-or-later
"""The devices every program expects, in every sandbox (as bwrap --dev and Docker give them):
/dev/null, /dev/zero, /dev/full read and write, /dev/random and /dev/urandom read only, with
no grant of /dev. An explicit --fs-deny of one still refuses it."""

import os

from conftest import BUILD, PY, SANDLOCK, SYSTEM_READ, nested_env, run

BASE = ["-r", "/usr", "-r", "/lib", "-r", "/bin"] + (["-r", "/lib64"] if os.path.exists("/lib64")
                                                    else [])
SHELL = "echo x >/dev/null; head -c4 /dev/zero | wc -c; head -c4 /dev/urandom | wc -c; " \
        "head -c4 /dev/random | wc -c"

# Each open and its outcome: "ok" or the errno's name.
PROBE = r"""
import errno, os, sys
def tryit(path, mode):
    try:
        with open(path, mode, buffering=0) as f:
            if "w" in mode:
                f.write(b"x")
            else:
                f.read(4)
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
print(" ".join(tryit(p, m) for p, m in
               [("/dev/null", "wb"), ("/dev/zero", "rb"), ("/dev/full", "wb"),
                ("/dev/urandom", "rb"), ("/dev/urandom", "wb"), ("/dev/random", "wb")]))
"""


def test_shell_redirections_work():
    r = run(*BASE, "--", "/bin/sh", "-c", SHELL)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [b"4", b"4", b"4"]
    assert r.stderr == b""


def test_rights_per_device():
    for flags in ([], ["--no-supervisor"]):
        r = run(*SYSTEM_READ, *flags, "--", PY, "-c", PROBE)
        assert r.returncode == 0, r.stderr
        # /dev/full: the write reaches the device (ENOSPC); the random devices read only.
        assert r.stdout == b"ok ok ENOSPC ok EACCES EACCES\n", (flags, r.stderr)


def test_fs_deny_still_wins():
    r = run(*BASE, "--fs-deny", "/dev/null", "--", "/bin/sh", "-c", "echo x >/dev/null")
    assert r.returncode == 2
    assert r.stderr == b"/bin/sh: 1: cannot create /dev/null: Permission denied\n"
    r = run(*SYSTEM_READ, "--fs-deny", "/dev", "--", PY, "-c", PROBE)
    assert r.stdout == b"EACCES EACCES EACCES EACCES EACCES EACCES\n", r.stderr
    # Control: the others stay.
    r = run(*SYSTEM_READ, "--fs-deny", "/dev/null", "--", PY, "-c", PROBE)
    assert r.stdout == b"EACCES ok ENOSPC ok EACCES EACCES\n", r.stderr


def test_random_seed_serves_the_random_devices():
    code = "import sys; print(open('/dev/urandom', 'rb').read(8).hex())"
    a = run(*SYSTEM_READ, "--random-seed", "7", "--", PY, "-c", code)
    b = run(*SYSTEM_READ, "--random-seed", "7", "--", PY, "-c", code)
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout and len(a.stdout) == 17
    c = run(*SYSTEM_READ, "--random-seed", "8", "--", PY, "-c", code)
    assert c.stdout != a.stdout


def test_nested_sandbox_has_them():
    outer = [*SYSTEM_READ, "-r", "/proc", "-r", str(BUILD)]
    r = run(*outer, "--no-supervisor", "--", SANDLOCK, "run", *BASE, "--", "/bin/sh", "-c",
            SHELL, env=nested_env(), timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [b"4", b"4", b"4"]
    r = run(*outer, "--", SANDLOCK, "run", "--no-supervisor", *BASE, "--", "/bin/sh", "-c",
            SHELL, env=nested_env(), timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [b"4", b"4", b"4"]
