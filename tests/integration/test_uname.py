# SPDX-License-Identifier: LGPL-2.1-or-later
"""The sandbox name and the virtual hostname (uname -n, answered by the supervisor), the name
rules, and many sandboxes at once from one multi-threaded parent."""

import concurrent.futures
import os
import threading

import pytest

from conftest import SYSTEM_READ, run


def test_default_hostname_is_sandbox_pid():
    r = run(*SYSTEM_READ, "-e", "echo $$; uname -n", timeout=30)
    assert r.returncode == 0, r.stderr
    pid, name = r.stdout.decode().splitlines()
    assert pid.isdigit()
    assert name == f"sandbox-{pid}"
    # Control: the host's name is something else.
    assert os.uname().nodename != name


def test_name_sets_hostname():
    r = run(*SYSTEM_READ, "--name", "box1", "--", "uname", "-n", timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"box1\n"


def test_gethostname_and_proc_agree_with_uname():
    # Python's socket.gethostname() is uname(2) too.
    r = run(*SYSTEM_READ, "--name", "box-py", "--", "/usr/bin/python3", "-c",
            "import socket, os; print(socket.gethostname(), os.uname().nodename)", timeout=30)
    assert r.stdout == b"box-py box-py\n"


def test_name_of_64_bytes_is_accepted():
    name = "n" * 64
    r = run(*SYSTEM_READ, "--name", name, "--", "uname", "-n", timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout == name.encode() + b"\n"


@pytest.mark.parametrize("name,why", [
    ("n" * 65, "65 bytes, at most 64 allowed"),
    ("a/b", "must not contain '/'"),
    (".", 'must not be "." or ".."'),
    ("..", 'must not be "." or ".."'),
])
def test_invalid_names(name, why):
    message = f"sandlock: --name: invalid value '{name}': {why}"
    r = run(*SYSTEM_READ, "--name", name, "--", "uname", "-n", timeout=30)
    assert r.returncode == 2
    assert r.stdout == b""
    assert r.stderr.decode().splitlines()[0] == message


def test_eight_concurrent_sandboxes():
    barrier = threading.Barrier(8)

    def one(i):
        barrier.wait(timeout=30)
        r = run(*SYSTEM_READ, "--name", f"conc-box-{i}", "--", "uname", "-n", timeout=60)
        return r.returncode, r.stdout, r.stderr

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(one, range(8)))
    for i, (code, out, err) in enumerate(results):
        assert code == 0, err
        assert out == f"conc-box-{i}\n".encode()
