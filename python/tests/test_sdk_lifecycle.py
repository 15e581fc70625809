# SPDX-License-Identifier: LGPL-2.1-or-later
"""The life of a sandboxed process through the SDK: a timeout kills the whole tree, create()
parks the child before exec and start() releases it, spawn/pid/is_running/pause/resume/kill/
wait, the RuntimeErrors of a call that does not fit the state, one process per Sandbox, the
context manager, run_interactive, and threads running sandboxes concurrently (the GIL is
released while a thread waits). Each behaviour has its control."""

import os
import threading
import time

import pytest

from conftest import (cmdline, pids_with_argv, proc_stat, process_alive, read_pids,
                      unique_name, wait_until)

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")


def state(pid):
    st = proc_stat(pid)
    return st[0] if st else None


def tree_command(pidfile, sleep_bg, sleep_fg):
    """sh writing its pid and its background job's pid to @pidfile, then sleeping: the
    "sleep & sleep" tree of the timeout tests."""
    return ["sh", "-c",
            f"echo $$ > {pidfile}; {' '.join(sleep_bg)} & echo $! >> {pidfile}; "
            f"{' '.join(sleep_fg)}"]


def gone(pid, argv=None):
    """@pid is dead: no such process, or a zombie (PID 1 here may never reap an orphan), or a
    recycled pid that no longer runs @argv."""
    if not process_alive(pid):
        return True
    return argv is not None and cmdline(pid) != ("\0".join(argv) + "\0").encode()


# ---- timeout --------------------------------------------------------------------------------


def test_timeout_kills_the_whole_tree(sandboxes, box, unique_sleep):
    # /dev/null: a background job of a non-interactive sh opens it as its stdin.
    sb = sandboxes(fs_readable=["/dev/null"], fs_writable=[str(box)])
    bg, fg = unique_sleep(), unique_sleep()
    t0 = time.monotonic()
    cmd = tree_command(box / "pids", bg, fg)
    r = sb.run(cmd, timeout=0.5)
    elapsed = time.monotonic() - t0
    assert (r.success, r.exit_code) == (False, 124)
    assert "timed out" in r.error
    assert elapsed < 10  # not the 30 s of the sleeps
    shell, job = read_pids(box / "pids", 2, timeout=0)
    assert gone(shell, cmd)
    assert gone(job, bg)
    assert pids_with_argv(bg) == [] and pids_with_argv(fg) == []
    assert not sb.is_running and sb.pid is None


def test_timeout_control_tree_keeps_running_without_timeout(sandboxes, box, unique_sleep):
    sb = sandboxes(fs_readable=["/dev/null"], fs_writable=[str(box)])
    bg, fg = unique_sleep(), unique_sleep()
    cmd = tree_command(box / "pids", bg, fg)
    sb.spawn(cmd)
    shell, job = read_pids(box / "pids", 2)
    assert wait_until(lambda: pids_with_argv(bg) == [job] and len(pids_with_argv(fg)) == 1)
    time.sleep(0.6)
    assert process_alive(job) and pids_with_argv(bg) == [job]
    assert len(pids_with_argv(fg)) == 1
    assert sb.is_running
    # kill() reaches every process of the sandbox, the background job included.
    sb.kill()
    r = sb.wait()
    assert (r.exit_code, r.signal) == (137, 9)
    assert gone(shell, cmd) and gone(job, bg)
    assert pids_with_argv(bg) == [] and pids_with_argv(fg) == []


def test_timeout_not_reached(sandboxes):
    r = sandboxes().run(["echo", "in time"], timeout=5)
    assert (r.success, r.exit_code, r.stdout, r.error) == (True, 0, b"in time\n", None)


@pytest.mark.parametrize("bad", [0, -1, "1"])
def test_bad_timeout(sandboxes, bad):
    with pytest.raises((ValueError, TypeError)):
        sandboxes().run(["true"], timeout=bad)


# ---- create / start -------------------------------------------------------------------------


def test_create_parks_before_exec_and_start_releases(sandboxes, unique_sleep):
    sb = sandboxes()
    argv = unique_sleep()
    want = ("\0".join(argv) + "\0").encode()
    sb.create(argv)
    pid = sb.pid
    assert pid is not None and sb.is_running
    time.sleep(0.2)
    assert state(pid) in ("S", "T")
    assert cmdline(pid) != want  # still the forked copy of us, not the command
    exe = os.readlink(f"/proc/{pid}/exe")
    assert os.path.basename(exe) != "sleep"
    assert pids_with_argv(argv) == []
    with pytest.raises(RuntimeError):
        sb.wait()  # a parked child is not waited for
    sb.start()
    assert wait_until(lambda: cmdline(pid) == want)
    assert os.path.basename(os.readlink(f"/proc/{pid}/exe")) == "sleep"
    assert sb.pid == pid
    sb.kill()
    assert sb.wait().exit_code == 137


def test_start_without_create(sandboxes):
    with pytest.raises(RuntimeError):
        sandboxes().start()


def test_start_twice(sandboxes):
    sb = sandboxes()
    sb.create(["true"])
    sb.start()
    with pytest.raises(RuntimeError):
        sb.start()
    assert sb.wait().success


def test_kill_a_parked_child_then_wait(sandboxes):
    sb = sandboxes()
    sb.create(["true"])
    pid = sb.pid
    sb.kill()
    assert wait_until(lambda: not process_alive(pid), 3)
    r = sb.wait()
    assert (r.success, r.exit_code, r.signal) == (False, 137, 9)
    assert not sb.is_running and sb.pid is None


def test_run_after_killing_a_parked_child(sandboxes):
    sb = sandboxes()
    sb.create(["true"])
    pid = sb.pid
    sb.kill()
    assert wait_until(lambda: not process_alive(pid), 3)
    assert sb.run(["echo", "next"]).stdout == b"next\n"


def test_run_after_a_started_child(sandboxes):
    # Control for the above: created, started and waited for, the instance runs again.
    sb = sandboxes()
    sb.create(["true"])
    sb.start()
    assert sb.wait().success
    assert sb.run(["echo", "next"]).stdout == b"next\n"


def test_create_then_close_kills_the_parked_child(sandboxes):
    sb = sandboxes()
    sb.create(["true"])
    pid = sb.pid
    assert process_alive(pid)
    sb.close()
    assert wait_until(lambda: not process_alive(pid), 3)
    assert sb.pid is None


# ---- spawn / pause / resume / kill / wait ---------------------------------------------------


def test_spawn_pause_resume_kill(sandboxes, unique_sleep):
    sb = sandboxes()
    argv = unique_sleep()
    assert not sb.is_running and sb.pid is None
    sb.spawn(argv)
    pid = sb.pid
    assert sb.is_running
    assert wait_until(lambda: pids_with_argv(argv) == [pid])
    sb.pause()
    assert wait_until(lambda: state(pid) == "T", 3)
    sb.resume()
    assert wait_until(lambda: state(pid) == "S", 3)
    sb.kill()
    r = sb.wait()
    assert (r.success, r.exit_code, r.signal) == (False, 137, 9)
    assert "SIGKILL" in r.error
    assert not sb.is_running and sb.pid is None
    assert pids_with_argv(argv) == []


def test_wait_returns_output_of_spawn(sandboxes):
    sb = sandboxes()
    sb.spawn(["sh", "-c", "echo out; echo err >&2; exit 4"])
    r = sb.wait()
    assert (r.success, r.exit_code, r.stdout, r.stderr) == (False, 4, b"out\n", b"err\n")


@pytest.mark.parametrize("method", ["kill", "pause", "resume", "wait"])
def test_nothing_running_is_runtime_error(sandboxes, method):
    sb = sandboxes()
    with pytest.raises(RuntimeError):
        getattr(sb, method)()


@pytest.mark.parametrize("method", ["kill", "pause", "resume"])
def test_after_the_process_ended_is_runtime_error(sandboxes, method):
    sb = sandboxes()
    sb.spawn(["true"])
    assert wait_until(lambda: not sb.is_running, 5)
    with pytest.raises(RuntimeError):
        getattr(sb, method)()
    assert sb.wait().success  # its outcome is still there


@pytest.mark.parametrize("second", ["spawn", "create", "run"])
def test_one_process_per_sandbox(sandboxes, unique_sleep, second):
    sb = sandboxes()
    argv = unique_sleep()
    sb.spawn(argv)
    with pytest.raises(RuntimeError):
        getattr(sb, second)(["true"])
    # (waited for: /proc/PID/cmdline is empty for a moment after the exec has begun)
    assert wait_until(lambda: pids_with_argv(argv) == [sb.pid])  # the first one is untouched
    sb.kill()
    assert sb.wait().exit_code == 137
    # Control: once waited for, the same instance runs again.
    r = sb.run(["echo", "again"])
    assert (r.success, r.stdout) == (True, b"again\n")


def test_two_threads_on_one_sandbox_never_lose_a_result(sandboxes):
    # One thread's run() must not release the process another thread's run() is waiting for:
    # each call either gets its own Result or "already running".
    sb = sandboxes()
    outcomes = {"ok": 0, "busy": 0, "other": []}
    lock = threading.Lock()

    def loop():
        for _ in range(60):
            try:
                r = sb.run(["true"])
                key = "ok" if r.success else None
            except RuntimeError as e:
                key = "busy" if "already running" in str(e) else None
                if key is None:
                    outcomes["other"].append(str(e))
            with lock:
                if key:
                    outcomes[key] += 1

    threads = [threading.Thread(target=loop) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes["other"] == []
    assert outcomes["ok"] + outcomes["busy"] == 120 and outcomes["ok"] > 0


def test_interrupted_run_kills_its_process(sandboxes, unique_sleep):
    # As subprocess.run: Ctrl-C while waiting kills the process.
    import _thread

    sb = sandboxes()
    argv = unique_sleep()
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        sb.run(argv)
    timer.join()
    assert wait_until(lambda: not pids_with_argv(argv), 3)
    assert not sb.is_running
    # Control: not interrupted, the same command is still running after the same time.
    sb.spawn(argv)
    time.sleep(0.5)
    assert pids_with_argv(argv) == [sb.pid]
    sb.kill()
    sb.wait()


def test_spawn_after_an_unwaited_end(sandboxes):
    sb = sandboxes()
    sb.spawn(["true"])
    assert wait_until(lambda: not sb.is_running, 5)
    sb.spawn(["echo", "second"])  # the ended first one is dropped, not an error
    assert sb.wait().stdout == b"second\n"


def test_context_manager_kills_on_exit(sandboxes, unique_sleep):
    argv = unique_sleep()
    with sandboxes() as sb:
        sb.spawn(argv)
        pid = sb.pid
        time.sleep(0.2)
        assert process_alive(pid)  # control: running inside the block
    assert not process_alive(pid)
    assert pids_with_argv(argv) == []
    assert sb.pid is None and not sb.is_running


def test_close_is_idempotent(sandboxes):
    sb = sandboxes()
    sb.close()
    sb.close()
    assert sb.run(["true"]).success


# ---- run_interactive ------------------------------------------------------------------------


def test_run_interactive_returns_exit_code(sandboxes, capfd):
    # pytest runs us without a terminal on stdin: no foreground process group dance.
    rc = sandboxes().run_interactive(["sh", "-c", "echo to-out; echo to-err >&2; exit 5"])
    assert rc == 5
    out, err = capfd.readouterr()
    assert (out, err) == ("to-out\n", "to-err\n")  # inherited, not captured


def test_run_interactive_signal(sandboxes):
    assert sandboxes().run_interactive(["sh", "-c", "kill -KILL $$"]) == 137
    assert sandboxes().run_interactive(["true"]) == 0  # control


def test_run_interactive_missing_command(sandboxes, capfd):
    # As a shell: 127 and the reason on stderr (run() puts it in Result.error instead).
    rc = sandboxes(env={"PATH": "/usr/bin:/bin"}).run_interactive(["no-such-command-xyz"])
    assert rc == 127
    err = capfd.readouterr().err
    assert "no-such-command-xyz" in err and "No such file or directory" in err


# ---- threads --------------------------------------------------------------------------------


def run_threads(target, n):
    results = [None] * n
    errors = []

    def body(i):
        try:
            results[i] = target(i)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors
    return results


def test_threads_each_get_their_own_output(sandboxes):
    boxes = [sandboxes(name=unique_name(f"t{i}")) for i in range(8)]
    results = run_threads(lambda i: boxes[i].run(["echo", i]), 8)
    assert [r.stdout for r in results] == [f"{i}\n".encode() for i in range(8)]
    assert all(r.success for r in results)


def test_threads_run_concurrently(sandboxes):
    # Eight 0.5 s runs one after the other take at least 4 s; in parallel (the waiting
    # threads release the GIL) they take about 0.5 s plus the starts. Under 2 s means at least
    # twice the serial speed.
    boxes = [sandboxes(name=unique_name(f"c{i}")) for i in range(8)]
    t0 = time.monotonic()
    results = run_threads(
        lambda i: boxes[i].run(["sh", "-c", f"sleep 0.5; echo {i}; uname -n"]), 8)
    elapsed = time.monotonic() - t0
    want = [f"{i}\n{unique_name(f'c{i}')}\n".encode() for i in range(8)]
    assert [r.stdout for r in results] == want
    assert elapsed < 2.0, f"8 x 0.5 s took {elapsed:.2f} s"


def test_kill_from_another_thread_ends_wait(sandboxes, unique_sleep):
    sb = sandboxes()
    sb.spawn(unique_sleep())
    timer = threading.Timer(0.3, sb.kill)
    timer.start()
    t0 = time.monotonic()
    r = sb.wait()
    timer.join()
    assert r.exit_code == 137 and time.monotonic() - t0 < 10


def test_same_name_twice_at_once_is_refused(sandboxes, unique_sleep):
    from sandlock import SandboxRuntimeError

    name = unique_name("sdk-dup")
    first = sandboxes(name=name)
    first.spawn(unique_sleep())
    with pytest.raises(SandboxRuntimeError, match=name):
        sandboxes(name=name).run(["true"])
    first.kill()
    first.wait()
    # Control: once the first is gone the name is free.
    assert sandboxes(name=name).run(["true"]).success
