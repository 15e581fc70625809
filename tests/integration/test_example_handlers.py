# SPDX-License-Identifier: LGPL-2.1-or-later
"""The extension handler example (examples/handlers.c): a handler on openat serves
/sandlock/hello, a file that exists nowhere, from a sealed memfd, and one on getppid answers 1.
The same commands under examples/spawn (no handler) are the negative control."""

import subprocess

from conftest import BUILD, EXAMPLE

HANDLERS = str(BUILD / "examples" / "handlers")


def run(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, timeout=60)


def test_handler_serves_a_file_that_exists_nowhere():
    r = run(HANDLERS, "cat", "/sandlock/hello")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"hello from a handler\n"
    plain = run(EXAMPLE, "cat", "/sandlock/hello")  # reports the command's streams and end
    assert b"cat: /sandlock/hello: No such file or directory" in plain.stdout
    assert b"exit: code 1" in plain.stdout


def test_handler_leaves_other_opens_to_the_kernel():
    r = run(HANDLERS, "cat", "/sandlock/other")
    assert r.returncode == 1
    assert b"/sandlock/other: No such file or directory" in r.stderr
    r = run(HANDLERS, "cat", "/etc/hostname")
    assert r.returncode == 0, r.stderr


def test_handler_answers_getppid():
    r = run(HANDLERS, "sh", "-c", 'echo "$PPID"')
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"1\n"
    plain = run(EXAMPLE, "sh", "-c", 'echo "$PPID"')
    assert b"stdout: 2 bytes: 1\n" not in plain.stdout
    assert b"exit: code 0" in plain.stdout
