# SPDX-License-Identifier: LGPL-2.1-or-later
"""The C example (examples/spawn.c): the smallest complete use of libsandlock. It grants read
on /usr /lib /lib64 /bin /etc, write on --write DIR, captures both streams and reports the end."""

import os
import signal
import subprocess

import pytest

from conftest import EXAMPLE, SANITIZED


def spawn(*args, **kw):
    return subprocess.run([EXAMPLE, *args], capture_output=True, timeout=60, **kw)


def test_example_reads_granted_etc():
    with open("/etc/group", "rb") as f:
        content = f.read()
    r = spawn("cat", "/etc/group")
    assert r.returncode == 0
    assert r.stdout == (f"stdout: {len(content)} bytes: ".encode() + content +
                        b"stderr: 0 bytes: \nexit: code 0\n")


def test_example_cannot_read_ungranted(tmp_path):
    f = tmp_path / "secret.txt"
    f.write_text("secret\n")
    # Control: the file is readable outside.
    assert subprocess.run(["cat", str(f)], capture_output=True, timeout=30).stdout == b"secret\n"
    r = spawn("cat", str(f))
    assert r.returncode == 1
    msg = f"cat: {f}: Permission denied\n".encode()
    assert r.stdout == (b"stdout: 0 bytes: \n" + f"stderr: {len(msg)} bytes: ".encode() + msg +
                        b"exit: code 1\n")


def test_example_write_only_with_write_grant(tmp_path, sandbox_dir):
    outside = tmp_path / "f"
    r = spawn("sh", "-c", f"echo hi > {outside}")
    assert r.returncode != 0
    assert b"Permission denied" in r.stdout
    assert not outside.exists()

    inside = sandbox_dir / "f"
    r = spawn("--write", str(sandbox_dir), "sh", "-c", f"echo hi > {inside}")
    assert r.returncode == 0, r.stdout
    assert r.stdout == b"stdout: 0 bytes: \nstderr: 0 bytes: \nexit: code 0\n"
    assert inside.read_bytes() == b"hi\n"

    # The write grant is that directory only: its parent is still read-only.
    r = spawn("--write", str(sandbox_dir), "sh", "-c", f"echo hi > {outside}")
    assert r.returncode != 0
    assert not outside.exists()


def test_example_reports_signal():
    r = spawn("sh", "-c", "kill -TERM $$")
    assert r.returncode == 128 + int(signal.SIGTERM)
    assert r.stdout.endswith(f"exit: signal {int(signal.SIGTERM)}\n".encode())


def test_example_spawn_failure():
    # PATH of searchable directories only (see test_exit.test_unknown_command_is_127).
    r = spawn("sandlock-no-such-command-xyz", env=dict(os.environ, PATH="/usr/bin:/bin"))
    assert r.returncode == 127
    assert r.stderr.startswith(b"spawn failed (")
    assert b"No such file or directory" in r.stderr


def test_example_usage():
    # Under ASan this also checks that the usage path frees the policy (LeakSanitizer would
    # turn the exit code into 1).
    r = subprocess.run([EXAMPLE], capture_output=True, timeout=30)
    assert r.returncode == 2
    assert r.stderr == b"usage: spawn [--write DIR] CMD [ARGS...]\n"
