# SPDX-License-Identifier: LGPL-2.1-or-later
"""Process knobs of `sandlock run`: environment, working directory, rlimits, THP, ASLR, CPU
affinity; -e and --status-fd; signals sent to sandlock reaching the sandbox; nothing surviving
a SIGKILLed sandlock."""

import errno
import os
import resource
import signal
import subprocess
import time

import pytest

from conftest import (PRELUDE, PY, SANDLOCK, SYSTEM_READ, default_signals, forwards_signal,
                      pids_with_argv, py_inside, py_outside, result_json, run, wait_until)


def env_of(*flags, env):
    r = run(*SYSTEM_READ, *flags, "--", "/usr/bin/env", env=env, timeout=30)
    assert r.returncode == 0, r.stderr
    return dict(line.split("=", 1) for line in r.stdout.decode().splitlines())


def base_env():
    env = {k: v for k, v in os.environ.items() if k.startswith("ASAN_") or
           k.startswith("UBSAN_") or k.startswith("LSAN_")}
    env.update(PATH="/usr/bin:/bin", HOME="/nonexistent-home", USER="someone",
               TERM="dumb", LANG="C.UTF-8")
    return env


# ---- environment ------------------------------------------------------------------------------

def test_env_sets_variable():
    env = base_env()
    assert "SANDLOCK_T_A" not in env_of(env=env)
    child = env_of("--env", "SANDLOCK_T_A=b", env=env)
    assert child["SANDLOCK_T_A"] == "b"


def test_env_value_may_hold_equals_and_later_wins():
    child = env_of("--env", "SANDLOCK_T_A=x=y", "--env", "SANDLOCK_T_B=1", "--env",
                   "SANDLOCK_T_B=2", env=base_env())
    assert child["SANDLOCK_T_A"] == "x=y"
    assert child["SANDLOCK_T_B"] == "2"


def test_env_overrides_inherited():
    env = dict(base_env(), SANDLOCK_T_A="parent")
    assert env_of(env=env)["SANDLOCK_T_A"] == "parent"
    assert env_of("--env", "SANDLOCK_T_A=flag", env=env)["SANDLOCK_T_A"] == "flag"


def test_clean_env():
    env = dict(base_env(), SANDLOCK_T_FOO="bar", SANDLOCK_T_OTHER="1")
    # Control: without --clean-env everything is inherited.
    inherited = env_of(env=env)
    assert inherited["SANDLOCK_T_FOO"] == "bar"
    assert inherited["SANDLOCK_T_OTHER"] == "1"

    clean = env_of("--clean-env", "--env", "SANDLOCK_T_X=y", env=env)
    keep = {k: env[k] for k in ("PATH", "HOME", "USER", "TERM", "LANG")}
    assert clean == dict(keep, SANDLOCK_T_X="y")


def test_clean_env_keeps_only_those_set():
    env = base_env()
    del env["TERM"]
    del env["LANG"]
    env["SANDLOCK_T_FOO"] = "bar"
    clean = env_of("--clean-env", env=env)
    assert clean == {k: env[k] for k in ("PATH", "HOME", "USER")}


# ---- working directory ------------------------------------------------------------------------

def test_cwd(tmp_path, sandbox_dir):
    parent_cwd = os.path.realpath(tmp_path)
    want = os.path.realpath(sandbox_dir)
    plain = run(*SYSTEM_READ, "--", "/bin/pwd", cwd=parent_cwd, timeout=30)
    assert plain.stdout.decode().strip() == parent_cwd
    r = run(*SYSTEM_READ, "--cwd", want, "--", "/bin/pwd", cwd=parent_cwd, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().strip() == want


def test_cwd_missing_is_127(tmp_path):
    missing = tmp_path / "does-not-exist"
    r = run(*SYSTEM_READ, "--cwd", str(missing), "--", "/bin/pwd", timeout=30)
    assert r.returncode == 127
    assert r.stdout == b""
    assert f"sandlock: chdir {missing}: No such file or directory" in \
        r.stderr.decode().splitlines()


# ---- rlimits ----------------------------------------------------------------------------------

NOFILE = "import resource; out(list(resource.getrlimit(resource.RLIMIT_NOFILE)))"


def with_nofile(limit):
    def pre():
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
    return pre


def test_max_open_files():
    default = result_json(py_inside(NOFILE))
    assert default == list(resource.getrlimit(resource.RLIMIT_NOFILE))
    assert default[0] > 64
    assert result_json(py_inside(NOFILE, "--max-open-files", "64")) == [64, 64]


def test_max_open_files_is_clamped():
    # sandlock inherits 100:100; asking for more gives what it holds, asking for less works.
    pre = with_nofile(100)
    assert result_json(py_inside(NOFILE, preexec_fn=pre)) == [100, 100]
    assert result_json(py_inside(NOFILE, "--max-open-files", "1000", preexec_fn=pre)) == \
        [100, 100]
    assert result_json(py_inside(NOFILE, "--max-open-files", "50", preexec_fn=pre)) == [50, 50]


def test_max_open_files_enforced():
    code = """
fds, err = [], 0
try:
    for _ in range(200):
        fds.append(os.open("/dev/null", os.O_RDONLY))
except OSError as e:
    err = e.errno
out([len(fds) + 3, err])
"""
    # 0, 1, 2 plus what the loop opened fill the 64 slots. Python itself may hold a few more,
    # so the count is at most 64; the control opens all 200.
    unlimited = result_json(py_inside(code, "-r", "/dev/null"))
    assert unlimited == [203, 0]
    n, err = result_json(py_inside(code, "-r", "/dev/null", "--max-open-files", "64"))
    assert err == errno.EMFILE
    assert 50 < n <= 64


@pytest.mark.parametrize("value,why", [
    ("0", "must be greater than 0"),
    ("-5", "expected a non-negative integer"),
    ("x", "expected a non-negative integer"),
    ("1.5", "expected a non-negative integer"),
])
def test_max_open_files_bad_value(value, why):
    r = run("--max-open-files", value, *SYSTEM_READ, "--", "true", timeout=30)
    assert r.returncode == 2
    assert r.stderr.decode().splitlines()[0] == \
        f"sandlock: --max-open-files: invalid value '{value}': {why}"


def test_no_coredump():
    code = "import resource; out(list(resource.getrlimit(resource.RLIMIT_CORE)))"
    hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
    soft = 1 << 20 if hard == resource.RLIM_INFINITY or hard >= 1 << 20 else hard
    if soft == 0:
        pytest.skip("the core-dump hard limit is 0 here; the control cannot differ from 0")

    def pre():
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))

    # AddressSanitizer sets its own process's core limit to 0 unless told not to.
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":disable_coredump=0"
    assert result_json(py_inside(code, preexec_fn=pre, env=env)) == [soft, hard]
    assert result_json(py_inside(code, "--no-coredump", preexec_fn=pre, env=env)) == [0, 0]


# ---- THP, ASLR, CPU ---------------------------------------------------------------------------

def test_no_huge_pages():
    PR_GET_THP_DISABLE = 42
    code = f"import ctypes; out(ctypes.CDLL(None).prctl({PR_GET_THP_DISABLE}, 0, 0, 0, 0))"
    assert result_json(py_inside(code)) == 0
    assert result_json(py_inside(code, "--no-huge-pages")) == 1


def personality(*flags):
    code = "out(int(open('/proc/self/personality').read(), 16))"
    return result_json(py_inside(code, "-r", "/proc", *flags))


def test_no_randomize_memory():
    ADDR_NO_RANDOMIZE = 0x0040000
    assert personality() & ADDR_NO_RANDOMIZE == 0
    assert personality("--no-randomize-memory") & ADDR_NO_RANDOMIZE == ADDR_NO_RANDOMIZE


def test_no_randomize_memory_stack_repeats():
    with open("/proc/sys/kernel/randomize_va_space") as f:
        if f.read().strip() == "0":
            pytest.skip("ASLR is off on this machine; the control would not differ")
    code = "out([l.split()[0] for l in open('/proc/self/maps') if '[stack]' in l][0])"

    def stack(*flags):
        return result_json(py_inside(code, "-r", "/proc", *flags))

    assert stack("--no-randomize-memory") == stack("--no-randomize-memory")
    # Control: with ASLR two runs differ (three tries make a coincidence negligible).
    assert len({stack(), stack(), stack()}) > 1


AFFINITY = "out(sorted(os.sched_getaffinity(0)))"


def test_cpu_cores():
    mine = sorted(os.sched_getaffinity(0))
    assert result_json(py_inside(AFFINITY)) == mine
    if 0 in mine:
        assert result_json(py_inside(AFFINITY, "--cpu-cores", "0")) == [0]
    last = mine[-1]
    assert result_json(py_inside(AFFINITY, "--cpu-cores", str(last))) == [last]
    if len(mine) < 2:
        pytest.skip("one CPU available: pinning cannot be told from the default")
    assert result_json(py_inside(AFFINITY, "--cpu-cores", f"{mine[0]},{last}")) == \
        [mine[0], last]


@pytest.mark.parametrize("value, why", [
    ("a", "expected CPU numbers such as 0,1 or 0-3"),
    ("0,,x", "expected CPU numbers such as 0,1 or 0-3"),
    ("-1", "expected CPU numbers such as 0,1 or 0-3"),
    ("", "expected CPU numbers such as 0,1 or 0-3"),
    (",", "expected CPU numbers such as 0,1 or 0-3"),
    ("0,", "expected CPU numbers such as 0,1 or 0-3"),
    ("0-", "expected CPU numbers such as 0,1 or 0-3"),
    ("3-1", "expected CPU numbers such as 0,1 or 0-3"),
    ("4000", "expected CPU numbers such as 0,1 or 0-3"),
])
def test_cpu_cores_bad_value(value, why):
    r = run("--cpu-cores", value, *SYSTEM_READ, "--", "true", timeout=30)
    assert r.returncode == 2
    assert r.stderr.decode().splitlines()[0] == \
        f"sandlock: --cpu-cores: invalid value '{value}': {why}"


def test_cpu_cores_range():
    mine = sorted(os.sched_getaffinity(0))
    if len(mine) < 2 or mine[:2] != [0, 1]:
        pytest.skip("needs CPUs 0 and 1")
    # Control: without the flag the child sees every CPU; with the range, exactly 0 and 1.
    assert result_json(py_inside(AFFINITY, "--cpu-cores", "0-1")) == [0, 1]
    assert result_json(py_inside(AFFINITY, "--cpu-cores", "0")) == [0]


def test_cpu_cores_missing_cpu_fails_launch():
    # A CPU number in range but absent from this machine: the child's sched_setaffinity fails.
    absent = 1000  # below CPU_SETSIZE (1024), so the CLI accepts it
    if absent < (os.cpu_count() or 0):
        pytest.skip("this machine has CPU 1000")
    r = run("--cpu-cores", str(absent), *SYSTEM_READ, "--", "true", timeout=30)
    assert r.returncode == 127
    assert r.stderr.decode().splitlines() == ["sandlock: sched_setaffinity: Invalid argument"]


# ---- -e and --status-fd -----------------------------------------------------------------------

def test_exec_shell():
    r = run(*SYSTEM_READ, "-e", "echo hi; exit 3", timeout=30)
    assert r.returncode == 3
    assert r.stdout == b"hi\n"


def test_exec_shell_with_command_is_usage_error():
    r = run(*SYSTEM_READ, "-e", "echo hi", "--", "true", timeout=30)
    assert r.returncode == 2
    assert r.stdout == b""
    assert r.stderr.decode().splitlines()[0] == \
        "sandlock: give either -e CMD or a command, not both"


def status_line(*args):
    rfd, wfd = os.pipe()
    try:
        r = run(*SYSTEM_READ, "--status-fd", str(wfd), *args, pass_fds=(wfd,), timeout=30)
        os.close(wfd)
        wfd = -1
        with os.fdopen(rfd, "rb") as f:
            rfd = -1
            return r.returncode, f.read()
    finally:
        for fd in (rfd, wfd):
            if fd >= 0:
                os.close(fd)


def test_status_fd_exit_code():
    assert status_line("-e", "exit 3") == (3, b'{"exit_code":3}\n')
    assert status_line("-e", "exit 0") == (0, b'{"exit_code":0}\n')


def test_status_fd_signal():
    assert status_line("-e", "kill -TERM $$") == (143, b'{"exit_code":-1,"signal":15}\n')


def test_status_fd_not_leaked_into_sandbox():
    # The status pipe is sandlock's, not the command's.
    rfd, wfd = os.pipe()
    try:
        r = run(*SYSTEM_READ, "--status-fd", str(wfd), "--", PY, "-c",
                PRELUDE + f"""
try:
    os.fstat({wfd}); out(0)
except OSError as e:
    out(e.errno)
""", pass_fds=(wfd,), timeout=30)
        assert result_json(r) == errno.EBADF
    finally:
        os.close(rfd)
        os.close(wfd)


# ---- signals to sandlock; no orphans ----------------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_to_sandlock_reaches_sandbox(sig, unique_sleep):
    argv = unique_sleep()
    p = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, "--", *argv],
                         preexec_fn=default_signals, stderr=subprocess.PIPE)
    try:
        pids = wait_until(lambda: pids_with_argv(argv), timeout=10)
        assert pids, "the sandboxed sleep never started"
        # The command runs a moment before sandlock_spawn returns; until sandlock blocks the
        # signal again (to pass it on), a signal ends sandlock by its default action.
        assert wait_until(lambda: forwards_signal(p.pid, sig), timeout=10)
        p.send_signal(sig)
        assert p.wait(timeout=10) == 128 + int(sig)
        assert not pids_with_argv(argv)
    finally:
        p.kill()
        p.wait()


def test_sigkill_of_sandlock_leaves_no_orphans(unique_sleep):
    child, detached = unique_sleep(), unique_sleep()
    script = f"{' '.join(child)} & setsid {' '.join(detached)} & wait"
    p = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, "-r", "/dev/null", "--", "sh", "-c",
                          script], stderr=subprocess.PIPE)
    try:
        assert wait_until(lambda: pids_with_argv(child) and pids_with_argv(detached),
                          timeout=10), "the sandbox's processes never started"
        p.kill()
        p.wait(timeout=10)
        assert wait_until(lambda: not pids_with_argv(child) and not pids_with_argv(detached),
                          timeout=1.0), "processes of the sandbox outlived sandlock"
    finally:
        p.kill()
        p.wait()


def test_command_exit_ends_leftover_processes(unique_sleep):
    """When the command exits, what it left running in the sandbox (a background child, a
    setsid child) is ended with it."""
    child, detached = unique_sleep(), unique_sleep()
    script = f"{' '.join(child)} & setsid {' '.join(detached)} & read x; exit 6"
    p = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, "-r", "/dev/null", "--", "sh", "-c",
                          script], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # Control: both are running while the command runs.
        assert wait_until(lambda: pids_with_argv(child) and pids_with_argv(detached),
                          timeout=10), "the sandbox's processes never started"
        p.stdin.close()  # the command's `read` returns; it exits 6
        assert p.wait(timeout=10) == 6
        assert wait_until(lambda: not pids_with_argv(child) and not pids_with_argv(detached),
                          timeout=1.0), "processes of the sandbox outlived its command"
    finally:
        p.kill()
        p.wait()


def test_timeout_reaches_group_whose_leader_exited(unique_sleep):
    # A setsid'ed shell starts a sleep and exits: the group outlives its leader.
    orphan = unique_sleep()
    script = f"setsid sh -c '{' '.join(orphan)} & exit 0'; exec {' '.join(unique_sleep())}"
    p = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, "-r", "/dev/null", "-t", "2", "--",
                          "sh", "-c", script], stderr=subprocess.PIPE)
    try:
        assert wait_until(lambda: pids_with_argv(orphan), timeout=10)
        assert p.wait(timeout=30) == 124
        assert wait_until(lambda: not pids_with_argv(orphan), timeout=1.0)
    finally:
        p.kill()
        p.wait()


SETPGID_BACK = """
target = os.getpgid(os.getppid())   # the launcher's process group
try:
    os.setpgid(0, target)
    out(["moved", os.getpgrp() == target])
except OSError as e:
    out(["err", e.errno])
"""


def test_cannot_join_launcher_process_group():
    # Control: a process started in a new group by its launcher may move back into the
    # launcher's group (same session).
    outside = subprocess.run([PY, "-c", PRELUDE + SETPGID_BACK], capture_output=True,
                             process_group=0, timeout=30)
    assert result_json(outside) == ["moved", True]
    # Inside, the launcher is sandlock; joining its group would put the sandbox where its
    # kill cannot reach and let the sandbox share a group with outside processes.
    assert result_json(py_inside(SETPGID_BACK)) == ["err", errno.EPERM]


def test_new_process_groups_inside_work():
    code = """
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)
    os._exit(0 if os.getpgrp() == os.getpid() else 1)
_, st = os.waitpid(pid, 0)
r = os.waitstatus_to_exitcode(st)
pid2 = os.fork()
if pid2 == 0:
    os.setsid()
    os._exit(0 if os.getsid(0) == os.getpid() == os.getpgrp() else 1)
_, st = os.waitpid(pid2, 0)
out([r, os.waitstatus_to_exitcode(st)])
"""
    assert result_json(py_outside(code)) == [0, 0]
    assert result_json(py_inside(code)) == [0, 0]


def test_command_reaped_by_someone_else():
    # A host that ignores SIGCHLD passes that on through execve: the kernel then reaps the
    # command itself. sandlock must still end, with the status (read from the pidfd).
    r = subprocess.run([SANDLOCK, "run", *SYSTEM_READ, "--", "sh", "-c", "exit 3"],
                       capture_output=True, timeout=30,
                       preexec_fn=lambda: signal.signal(signal.SIGCHLD, signal.SIG_IGN))
    assert r.returncode == 3


def test_stdio_closed_in_the_host(sandbox_dir):
    # With the host's 0, 1, 2 closed, sandlock's own descriptors land there; none of them may
    # reach the command (it must find 0..2 closed as the host had them).
    probe = sandbox_dir / "fds"
    code = ("import os\n"
            "bad = []\n"
            "for fd in (0, 1, 2):\n"
            "    try:\n"
            "        os.fstat(fd)\n"
            "        bad.append(fd)\n"
            "    except OSError:\n"
            "        pass\n"
            f"open({str(probe)!r}, 'w').write(repr(bad))\n")
    r = subprocess.run(["sh", "-c", 'exec 0<&- 1>&- 2>&-; exec "$@"', "sh", SANDLOCK, "run",
                        *SYSTEM_READ, "-w", str(sandbox_dir), "--", PY, "-c", code],
                       timeout=30)
    assert r.returncode == 0
    assert probe.read_text() == "[]"


GROUPS = """
import os, time
made = failed = 0
kids = []
for i in range(140):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setsid()
            os.write(w, b"1")
        except OSError:
            os.write(w, b"0")
        time.sleep(30)
        os._exit(0)
    os.close(w)
    ok = os.read(r, 1) == b"1"
    os.close(r)
    kids.append(pid)
    made += ok
    failed += not ok
for pid in kids:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
out([made, failed])
"""


def test_process_groups_are_bounded():
    # Each group the sandbox creates costs the host three descriptors: at most 128 live groups
    # (the command's own included), further setsid() calls fail with EPERM.
    made, failed = result_json(py_inside(GROUPS, timeout=60))
    assert made == 127 and failed == 13


def test_no_supervisor_timeout_reaches_a_command_that_left_its_group():
    # Without a supervisor nothing records a move into another group (here sandlock's own);
    # the timeout still reaches the command itself through its pidfd.
    code = ("import os, time\n"
            "os.setpgid(0, os.getpgid(os.getppid()))\n"
            "time.sleep(5)\n"
            "print('survived')\n")
    t0 = time.monotonic()
    r = run("--no-supervisor", "-t", "1", *SYSTEM_READ, "--", PY, "-c", code, timeout=30)
    assert r.returncode == 124
    assert b"survived" not in r.stdout
    assert time.monotonic() - t0 < 4
