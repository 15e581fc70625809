# SPDX-License-Identifier: LGPL-2.1-or-later
"""Sandbox.popen(): a live confined process whose piped streams are read and written while it
runs (a line arrives before the command ends, stdin is echoed back), killed mid-stream, reaped
by its context manager, and leaving no descriptor behind over many runs."""

import gc
import os
import select
import threading
import time

import pytest

from conftest import pids_with_argv, wait_until
from sandlock import ExitReason, Process, StdioMode

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")


def readable(f, timeout):
    return bool(select.select([f], [], [], timeout)[0])


def test_reads_a_line_before_the_command_ends(sandboxes, unique_sleep):
    nap = unique_sleep()
    sb = sandboxes()
    p = sb.popen(["sh", "-c", f"echo first; exec {' '.join(nap)}"], stdout=StdioMode.PIPED)
    assert isinstance(p, Process) and p.stdin is None and p.stderr is None
    assert readable(p.stdout, 10)
    assert p.stdout.read(64) == b"first\n"  # unbuffered: what is there, not a full 64
    assert p.poll() is None and sb.is_running and sb.pid == p.pid
    # "first" is written before sh execs the sleep: wait for the exec, then it is the one.
    assert wait_until(lambda: pids_with_argv(nap) == [p.pid], timeout=10)
    p.kill()
    r = p.wait()
    assert (r.success, r.exit_code, r.signal) == (False, 137, 9)
    assert p.stdout.read() == b""


def test_write_stdin_read_the_echo(sandboxes):
    p = sandboxes().popen(["cat"], stdin=StdioMode.PIPED, stdout=StdioMode.PIPED)
    for word in (b"ping\n", b"pong\n"):
        assert p.stdin.write(word) == len(word)
        assert readable(p.stdout, 10)
        assert p.stdout.read(64) == word  # echoed while cat still runs
    assert p.poll() is None
    p.stdin.close()  # end-of-file: cat exits
    assert p.stdout.read() == b""
    r = p.wait()
    assert (r.success, r.exit_code, r.signal, r.stdout) == (True, 0, 0, b"")
    assert p.returncode == 0 and p.poll() == 0 and p.wait() is r


def test_kill_mid_stream(sandboxes):
    p = sandboxes().popen(["sh", "-c", "while :; do echo tick; sleep 0.01; done"],
                          stdout=StdioMode.PIPED)
    assert readable(p.stdout, 10) and p.stdout.read(5) == b"tick\n"
    p.kill()
    r = p.wait(timeout=10)
    assert (r.success, r.exit_code, r.signal) == (False, 137, 9)
    p.stdout.read()  # drains what was written before the kill, then end-of-file
    p.kill()  # once ended, nothing
    assert p.wait() is r


def test_kill_mid_stream_reason(sandboxes):
    p = sandboxes().popen(["sh", "-c", "while :; do echo tick; sleep 0.01; done"],
                          stdout=StdioMode.PIPED)
    assert readable(p.stdout, 10)
    p.kill()
    assert p.wait().reason == ExitReason.KILLED


def test_stderr_piped_and_null(sandboxes):
    p = sandboxes().popen(["sh", "-c", "echo out; echo err >&2"],
                          stdout=StdioMode.NULL, stderr=StdioMode.PIPED)
    assert p.stdout is None
    assert p.stderr.read() == b"err\n"
    assert p.wait().success


def test_every_stream_piped(sandboxes):
    p = sandboxes().popen(["sh", "-c", "read x; echo out:$x; echo err:$x >&2"],
                          stdin=1, stdout=1, stderr=1)  # the numbers are the modes too
    p.stdin.write(b"v\n")
    assert (p.stdout.read(), p.stderr.read()) == (b"out:v\n", b"err:v\n")
    assert p.wait().success


def test_wait_closes_stdin(sandboxes):
    # wait() gives a piped stdin its end-of-file, or cat would never end.
    p = sandboxes().popen(["cat"], stdin=StdioMode.PIPED, stdout=StdioMode.PIPED)
    p.stdin.write(b"data\n")
    r = p.wait(timeout=10)
    assert (r.success, p.stdout.read()) == (True, b"data\n")
    assert p.stdin.closed


def test_wait_timeout_kills(sandboxes, unique_sleep):
    nap = unique_sleep()
    p = sandboxes().popen(nap)
    t = time.monotonic()
    r = p.wait(timeout=0.3)
    assert 0.25 < time.monotonic() - t < 10
    assert (r.success, r.exit_code, r.signal) == (False, 124, 9)
    assert (r.reason, r.error) == (ExitReason.TIMEOUT, "timed out after 0.3 s")
    assert pids_with_argv(nap) == []
    # Control: a command that ends in time is not killed.
    r = sandboxes().popen(["true"]).wait(timeout=10)
    assert (r.success, r.signal) == (True, 0)


def test_kill_from_another_thread_ends_a_blocked_wait(sandboxes, unique_sleep):
    p = sandboxes().popen(unique_sleep())
    threading.Timer(0.3, p.kill).start()
    r = p.wait()
    assert (r.exit_code, r.signal) == (137, 9)


def test_context_manager_closes_streams_and_reaps(sandboxes, unique_sleep):
    sb = sandboxes()
    with sb.popen(["cat"], stdin=StdioMode.PIPED, stdout=StdioMode.PIPED) as p:
        p.stdin.write(b"x\n")
        assert p.stdout.read(2) == b"x\n"
    assert p.stdin.closed and p.stdout.closed and not sb.is_running
    assert p.returncode == 0
    # On an error inside the block, a command still running is killed, then reaped.
    nap = unique_sleep()
    with pytest.raises(KeyError):
        with sb.popen(nap, stdout=StdioMode.PIPED) as p:
            raise KeyError("boom")
    assert p.stdout.closed and not sb.is_running and pids_with_argv(nap) == []
    assert (p.returncode, p.wait().signal) == (137, 9)
    # The sandbox is free again.
    assert sb.run(["true"]).success


def test_one_process_at_a_time(sandboxes, unique_sleep):
    sb = sandboxes()
    p = sb.popen(unique_sleep())
    with pytest.raises(RuntimeError, match="already running"):
        sb.popen(["true"])
    with pytest.raises(RuntimeError):
        sb.run(["true"])
    p.kill()
    p.wait()
    assert sb.popen(["true"]).wait().success


def test_bad_modes(sandboxes):
    sb = sandboxes()
    for bad in (3, -1, "piped", None, True, 1.0):
        with pytest.raises(ValueError, match=r"^popen: stdout="):
            sb.popen(["true"], stdout=bad)
    assert not sb.is_running


def test_command_not_found(sandboxes):
    from sandlock import ChildError

    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(ChildError, match="execve"):
        sandboxes().popen(["/nonexistent/x"], stdout=StdioMode.PIPED)
    assert set(os.listdir("/proc/self/fd")) == before


def test_inherit_is_this_process_stdio(sandboxes, tmp_path):
    # INHERIT: the command writes to this process's descriptor 1 (here, for a moment, a file).
    out = tmp_path / "out"
    sb = sandboxes()
    fd = os.open(out, os.O_WRONLY | os.O_CREAT, 0o600)
    saved = os.dup(1)
    try:
        os.dup2(fd, 1)
        p = sb.popen(["echo", "inherited"])
        assert p.stdout is None
        r = p.wait()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(fd)
    assert r.success and out.read_bytes() == b"inherited\n"
    # Control: NULL sends the same output nowhere.
    assert sb.popen(["echo", "nowhere"], stdout=StdioMode.NULL).wait().success
    assert out.read_bytes() == b"inherited\n"


def test_no_descriptor_leak_over_200_popens(sandboxes):
    sb = sandboxes()

    def fds():
        return sorted(os.listdir("/proc/self/fd"))

    p = sb.popen(["cat"], stdin=1, stdout=1, stderr=1)  # warm up whatever is opened once
    p.stdin.write(b"w")
    p.stdin.close()
    assert p.stdout.read() == b"w"
    with p:
        pass
    gc.collect()  # what earlier tests left for the collector closes its descriptors now
    before = fds()
    for i in range(200):
        with sb.popen(["cat"], stdin=StdioMode.PIPED, stdout=StdioMode.PIPED,
                      stderr=StdioMode.PIPED) as p:
            p.stdin.write(b"%d" % i)
            p.stdin.close()
            assert p.stdout.read() == b"%d" % i
        assert p.returncode == 0
    assert fds() == before
