# SPDX-License-Identifier: LGPL-2.1-or-later
"""--tmp (private_tmp): a directory of the sandbox's own, 0700, its TMPDIR, read and write
without any other grant, removed when the sandbox ends; another sandbox cannot reach it. One a
SIGKILLed sandlock left is removed by the next run given one. Controls: without --tmp there is
no TMPDIR of sandlock's and /tmp is not writable."""

import os
import shutil
import signal
import stat
import subprocess
import time

import pytest

from conftest import PY, SANDLOCK, SYSTEM_READ, run, wait_until

STORE = f"/var/tmp/sandlock-{os.geteuid()}"


def test_tmpdir_is_private_and_removed():
    code = ("import os, stat, sys; d = os.environ['TMPDIR']; "
            "open(os.path.join(d, 'f'), 'w').write('x'); "
            "print(d, oct(stat.S_IMODE(os.stat(d).st_mode)), os.listdir(d))")
    r = run(*SYSTEM_READ, "--tmp", "--", PY, "-c", code)
    assert r.returncode == 0, r.stderr
    d, mode, listing = r.stdout.decode().split(" ", 2)
    assert d.startswith(STORE + "/tmp-")
    assert mode == "0o700"
    assert listing == "['f']\n"
    assert not os.path.exists(d)
    assert not os.path.exists(os.path.dirname(d))


def test_without_tmp_no_tmpdir():
    r = run(*SYSTEM_READ, "--env", "TMPDIR=", "--", PY, "-c",
            "import os; print(repr(os.environ.get('TMPDIR')))")
    assert r.stdout == b"''\n"
    r = run(*SYSTEM_READ, "--", "/bin/sh", "-c", "echo x > /tmp/sandlock-private-tmp-probe")
    assert r.returncode == 2
    assert b"Permission denied" in r.stderr


def test_policy_tmpdir_wins():
    r = run(*SYSTEM_READ, "--tmp", "--env", "TMPDIR=/elsewhere", "--", PY, "-c",
            "import os; print(os.environ['TMPDIR'])")
    assert r.stdout == b"/elsewhere\n", r.stderr


def test_works_without_supervisor():
    r = run(*SYSTEM_READ, "--tmp", "--no-supervisor", "--", "/bin/sh", "-c",
            'echo hi > "$TMPDIR/f" && cat "$TMPDIR/f" && echo "$TMPDIR"')
    assert r.returncode == 0, r.stderr
    hi, d = r.stdout.decode().split()
    assert hi == "hi" and not os.path.exists(d)


def test_a_second_sandbox_cannot_see_the_first():
    first = subprocess.Popen(
        [SANDLOCK, "run", *SYSTEM_READ, "--tmp", "--", "/bin/sh", "-c",
         'echo secret > "$TMPDIR/f"; echo "$TMPDIR"; sleep 30'],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        d = first.stdout.readline().decode().strip()
        assert os.path.exists(os.path.join(d, "f"))
        code = ("import errno, os, sys\n"
                "def tryit(f, *a):\n"
                "    try:\n        f(*a)\n        return 'ok'\n"
                "    except OSError as e:\n        return errno.errorcode[e.errno]\n"
                "print(tryit(os.listdir, sys.argv[1]),"
                " tryit(open, os.path.join(sys.argv[1], 'f'), 'rb'),"
                " tryit(open, os.path.join(sys.argv[1], 'g'), 'wb'))\n")
        r = run(*SYSTEM_READ, "--tmp", "--", PY, "-c", code, d)
        assert r.stdout == b"EACCES EACCES EACCES\n", r.stderr
        # With a grant of /var/tmp: the store root is carved out of it (its names stay
        # listable under a read grant, as a denied path's are), nothing in it is reached.
        for grants in (["-w", "/var/tmp"], ["-r", "/var/tmp"]):
            r = run(*SYSTEM_READ, *grants, "--tmp", "--", PY, "-c", code, d)
            assert r.stdout.split()[1:] == [b"EACCES", b"EACCES"], (grants, r.stderr)
    finally:
        first.kill()
        first.wait()


def test_left_by_a_killed_sandlock_is_removed_next_time():
    p = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, "--tmp", "--", "/bin/sh", "-c",
                          'mkdir "$TMPDIR/d"; chmod 0 "$TMPDIR/d"; echo "$TMPDIR"; sleep 30'],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    d = p.stdout.readline().decode().strip()
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert os.path.isdir(d)
    r = run(*SYSTEM_READ, "--tmp", "--", "/bin/true")
    assert r.returncode == 0, r.stderr
    assert not os.path.exists(os.path.dirname(d))



@pytest.mark.skipif(not shutil.which("cc"), reason="no C compiler")
def test_cc_under_workdir(tmp_path):
    (tmp_path / "a.c").write_text("int main(void) { return 7; }\n")
    flags = [*SYSTEM_READ, "--workdir", str(tmp_path), "--cwd", str(tmp_path)]
    r = run(*flags, "--", "cc", "-o", "a", "a.c", timeout=120)
    assert r.returncode != 0  # control: no writable /tmp
    assert b"Cannot create temporary file" in r.stderr
    r = run(*flags, "--tmp", "--", "/bin/sh", "-c", "cc -o a a.c && ./a; test $? = 7",
            timeout=120)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "a").exists()
