# SPDX-License-Identifier: LGPL-2.1-or-later
"""The launch: a policy whose trap set holds the calls the child makes after its filter (the
"ready" write under max_disk, sendmsg under UDP rules, the failure report's write) still
starts; the timeout counts from the launch, so a launch that stalls ends as a timeout with
everything killed; a signal to sandlock during the launch ends it. The stall is an execve
waiting on a file lease the test holds (the kernel makes an open wait up to
/proc/sys/fs/lease-break-time, 45 s by default, for the lease holder). Each behaviour has its
control."""

import errno
import fcntl
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import (SANDLOCK, SYSTEM_READ, default_signals, forwards_signal, pids_with_argv,
                      pids_with_cmdline, require, run, wait_until)

# The hard bound of every run here: a launch that hangs fails the test instead of the suite.
HARD = 20


def policy_of_the_hang(workdir):
    return [*SYSTEM_READ, "--workdir", str(workdir), "--max-disk", "10M",
            "--net-allow", "udp://127.0.0.1:7999", "-t", "2"]


# ---- trapped calls during the hand-off -------------------------------------------------------


def test_quota_and_udp_rules_launch(sandbox_dir):
    t0 = time.monotonic()
    proc = run(*policy_of_the_hang(sandbox_dir), "--", "/bin/true", timeout=HARD)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - t0 < 5


def test_quota_and_udp_rules_run_the_command(sandbox_dir):
    proc = run(*policy_of_the_hang(sandbox_dir), "--", "/bin/sh", "-c",
               f"echo made > {sandbox_dir}/f; cat {sandbox_dir}/f", timeout=HARD)
    assert (proc.returncode, proc.stdout) == (0, b"made\n"), proc.stderr
    assert (sandbox_dir / "f").read_text() == "made\n"  # committed on exit 0


def test_quota_and_udp_rules_report_a_failed_exec(sandbox_dir):
    proc = run(*policy_of_the_hang(sandbox_dir), "--", "/nonexistent/cmd", timeout=HARD)
    assert proc.returncode == 127
    assert b"No such file or directory" in proc.stderr


@pytest.mark.parametrize("rules", [["--max-disk", "10M"], ["--net-allow", "udp://127.0.0.1:7999"],
                                   []], ids=["quota", "udp", "workdir"])
def test_control_each_rule_alone_launches(sandbox_dir, rules):
    proc = run(*SYSTEM_READ, "--workdir", str(sandbox_dir), *rules, "-t", "2", "--",
               "/bin/echo", "ok", timeout=HARD)
    assert (proc.returncode, proc.stdout) == (0, b"ok\n"), proc.stderr


# ---- a launch that stalls ----------------------------------------------------------------------


@pytest.fixture
def leased(tmp_path):
    """A copy of /bin/true in its own directory, with a write lease held on it by this process:
    an execve of it waits until the lease is released (or lease-break-time passes). Yields
    (directory, program); the lease goes with the descriptor at the end."""
    d = tmp_path / "leased"
    d.mkdir()
    prog = d / "true"
    shutil.copy("/bin/true", prog)
    old = signal.signal(signal.SIGIO, signal.SIG_IGN)  # the lease break's notice
    fd = os.open(prog, os.O_RDONLY)
    try:
        try:
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
        except OSError as e:
            require(e.errno not in (errno.EINVAL, errno.EACCES, errno.EAGAIN),
                    f"file leases (F_SETLEASE: {os.strerror(e.errno)})")
            raise
        yield d, prog
    finally:
        os.close(fd)
        signal.signal(signal.SIGIO, old)


def lease_breaking(prog):
    """The kernel is breaking the lease on @prog: an open of it (the child's execve) waits."""
    ino = f":{os.stat(prog).st_ino} "
    with open("/proc/locks") as f:
        return any("LEASE" in line and "BREAKING" in line and ino in line for line in f)


def none_left(prog):
    """No process names @prog any more (the child shares sandlock's command line until its
    execve)."""
    return wait_until(lambda: not pids_with_cmdline(str(prog)), timeout=5)


def test_stalled_launch_ends_by_the_timeout(leased):
    d, prog = leased
    t0 = time.monotonic()
    proc = run(*SYSTEM_READ, "-r", str(d), "-t", "1", "--", str(prog), timeout=HARD)
    elapsed = time.monotonic() - t0
    assert proc.returncode == 124, proc.stderr
    assert b"timeout after 1s" in proc.stderr
    assert elapsed < 8  # not the lease-break-time
    assert none_left(prog)


def test_stalled_launch_under_a_supervised_policy_ends_by_the_timeout(leased, sandbox_dir):
    d, prog = leased
    proc = run(*SYSTEM_READ, "-r", str(d), "--workdir", str(sandbox_dir), "--max-disk", "1M",
               "-t", "1", "--", str(prog), timeout=HARD)
    assert proc.returncode == 124, proc.stderr


def test_control_the_same_program_without_the_lease_runs(tmp_path):
    prog = tmp_path / "true"
    shutil.copy("/bin/true", prog)
    proc = run(*SYSTEM_READ, "-r", str(tmp_path), "-t", "1", "--", str(prog), timeout=HARD)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP],
                         ids=lambda s: s.name)
def test_signal_during_the_launch_ends_it(leased, sig):
    d, prog = leased
    p = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, "-r", str(d), "--", str(prog)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         preexec_fn=default_signals)
    try:
        # Only once the child's execve waits on the lease: sandlock is inside the launch.
        assert wait_until(lambda: lease_breaking(prog), timeout=10)
        t0 = time.monotonic()
        p.send_signal(sig)
        rc = p.wait(timeout=5)
        assert rc == -sig  # ended by the signal itself, as without a sandbox
        assert time.monotonic() - t0 < 5
        assert none_left(prog)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_control_signal_after_the_launch_is_passed_on(unique_sleep):
    argv = unique_sleep()
    p = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, "--", *argv],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert wait_until(lambda: pids_with_argv(argv), timeout=10)
        # sandlock waits for the command: it holds SIGTERM for its signalfd again.
        assert wait_until(lambda: forwards_signal(p.pid, signal.SIGTERM), timeout=10)
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=10) == 128 + signal.SIGTERM  # the command's own death
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
