# SPDX-License-Identifier: LGPL-2.1-or-later
"""Exit status of `sandlock run` (CLI.md): the command's code, 128+S for a signal, 124 for a
timeout (and the whole tree is gone after it), 127 for an exec failure, 2 for bad usage, 1 for
an invalid policy or a flag whose feature has not landed."""

import os
import re
import signal
import subprocess

import pytest

from conftest import (SANDLOCK, SYSTEM_READ, default_signals, pids_with_argv, run, sandlock,
                      wait_until)

USAGE_HINT = b"Try 'sandlock run --help'."


def lines(b):
    return b.decode(errors="replace").splitlines()


@pytest.mark.parametrize("code", [0, 1, 42, 255])
def test_exit_code_passes_through(code):
    # The shell computes the code; the control is that different codes come back different.
    r = run(*SYSTEM_READ, "--", "sh", "-c", f"exit {code}", timeout=30)
    assert r.returncode == code, r.stderr
    assert r.stderr == b""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL, signal.SIGINT])
def test_signal_is_128_plus_signo(sig):
    r = run(*SYSTEM_READ, "--", "sh", "-c", f"kill -{int(sig)} $$", preexec_fn=default_signals,
            timeout=30)
    assert r.returncode == 128 + int(sig), r.stderr
    # The same command outside dies of the same signal (the control for the mapping).
    direct = subprocess.run(["sh", "-c", f"kill -{int(sig)} $$"], preexec_fn=default_signals,
                            timeout=30)
    assert direct.returncode == -int(sig)


def test_timeout_kills_whole_tree(unique_sleep):
    bg, detached, fg = unique_sleep(), unique_sleep(), unique_sleep()
    script = f"{' '.join(bg)} & setsid {' '.join(detached)} & {' '.join(fg)}"
    proc = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, "-r", "/dev/null", "-t", "3", "--",
                             "sh", "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        # Control: the three processes were running inside the sandbox before the timeout.
        assert wait_until(lambda: all(pids_with_argv(a) for a in (bg, detached, fg)),
                          timeout=10), "the sandbox's processes never started"
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 124
    assert "sandlock: timeout after 3s" in lines(err)
    # Nothing of the sandbox survives: background child, setsid child, foreground child.
    assert wait_until(lambda: not any(pids_with_argv(a) for a in (bg, detached, fg)),
                      timeout=1.0)


def test_no_timeout_when_command_is_quick():
    # Control for the timeout: a command that finishes in time keeps its own exit code.
    r = run(*SYSTEM_READ, "-t", "30", "--", "sh", "-c", "exit 7", timeout=60)
    assert r.returncode == 7
    assert b"timeout" not in r.stderr


def test_unknown_command_is_127():
    name = "sandlock-no-such-command-xyz"
    # A PATH of searchable directories only: glibc's execvp reports EACCES instead of ENOENT
    # when some PATH entry cannot be searched (e.g. /root/... for an unprivileged user).
    env = dict(os.environ, PATH="/usr/bin:/bin")
    r = run(*SYSTEM_READ, "--", name, env=env, timeout=30)
    assert r.returncode == 127
    assert f"sandlock: execve {name}: No such file or directory" in lines(r.stderr)
    # Control: an existing command in the same policy runs.
    assert run(*SYSTEM_READ, "--", "true", timeout=30).returncode == 0


def test_exec_of_ungranted_program_is_127(tmp_path):
    prog = tmp_path / "prog"
    prog.write_text("#!/bin/sh\necho ran\n")
    prog.chmod(0o755)
    granted = run(*SYSTEM_READ, "-r", str(tmp_path), "--", str(prog), timeout=30)
    assert granted.returncode == 0, granted.stderr
    assert granted.stdout == b"ran\n"
    denied = run(*SYSTEM_READ, "--", str(prog), timeout=30)
    assert denied.returncode == 127
    assert f"sandlock: execve {prog}: Permission denied" in lines(denied.stderr)


def test_unknown_flag_is_usage_error():
    r = sandlock("run", "--no-such-flag", "--", "true", timeout=30)
    assert r.returncode == 2
    assert lines(r.stderr) == ["sandlock: unknown flag: --no-such-flag", USAGE_HINT.decode()]


@pytest.mark.parametrize("flag", ["-t", "--timeout", "-r", "--env", "--name"])
def test_missing_value_is_usage_error(flag):
    r = sandlock("run", flag, timeout=30)
    assert r.returncode == 2
    assert lines(r.stderr) == [f"sandlock: missing value: {flag}", USAGE_HINT.decode()]


def test_env_without_equals_is_usage_error():
    r = run("--env", "NOEQUALS", *SYSTEM_READ, "--", "true", timeout=30)
    assert r.returncode == 2
    assert lines(r.stderr)[0] == "sandlock: --env: invalid value 'NOEQUALS': expected NAME=VALUE"
    assert lines(r.stderr)[1] == USAGE_HINT.decode()
    # Control: with '=' it runs.
    assert run("--env", "NO=EQUALS", *SYSTEM_READ, "--", "true", timeout=30).returncode == 0


@pytest.mark.parametrize("value", ["0", "-1", "abc", "nan"])
def test_bad_timeout_value_is_usage_error(value):
    r = run("-t", value, *SYSTEM_READ, "--", "true", timeout=30)
    assert r.returncode == 2
    assert lines(r.stderr)[0] == \
        f"sandlock: --timeout: invalid value '{value}': expected a positive number of seconds"


@pytest.mark.parametrize("value", ["99999999999", "1e400", "1000000001"])
def test_timeout_too_large_says_the_maximum(value):
    r = run("-t", value, *SYSTEM_READ, "--", "true", timeout=30)
    assert r.returncode == 2
    assert lines(r.stderr) == [
        f"sandlock: --timeout: invalid value '{value}': too large (max 1000000000 seconds)",
        USAGE_HINT.decode()]
    # Control: the maximum itself is accepted.
    assert run("-t", "1000000000", *SYSTEM_READ, "--", "true", timeout=30).returncode == 0


def test_no_command_is_usage_error():
    r = run(*SYSTEM_READ, timeout=30)
    assert r.returncode == 2
    assert lines(r.stderr) == ["sandlock: no command given", USAGE_HINT.decode()]


@pytest.mark.parametrize("args,field", [
    (["--chroot", "/tmp"], "--chroot"),
    (["--fs-mount", "/work:/tmp"], "--fs-mount"),
])
def test_later_feature_flag_is_refused(args, field):
    # The flag parses into the policy; the sandbox is refused when it is built, naming the
    # flag. Control: the same command without the flag runs.
    assert run(*SYSTEM_READ, "--", "true", timeout=30).returncode == 0
    r = run(*args, *SYSTEM_READ, "--", "true", timeout=30)
    assert r.returncode == 1
    assert lines(r.stderr) == [f"sandlock: not supported yet: {field}"]


def _unsupported_from_help():
    out = sandlock("run", "--help", timeout=30).stdout.decode()
    found = []
    for line in out.splitlines():
        m = re.match(r"^\s+(?:-\w,)?--([a-z0-9-]+)(?: (\S+))?\s{2,}.*\(not supported yet\)$",
                     line)
        if m:
            found.append((m.group(1), m.group(2) is not None))
    return found


# A valid value for every flag of a later feature: it must parse, then be refused by name.
LATER = {
    "chroot": ("/tmp", "chroot"),
    "fs-mount": ("/work:/tmp", "fs_mount"),
    "image": ("alpine", "image"),
}


def test_every_unsupported_flag_in_help_is_refused():
    flags = dict(_unsupported_from_help())
    assert "chroot" in flags  # the help lists the later features
    assert set(flags) == set(LATER)
    for name in flags:
        value, _ = LATER[name]
        expect = f"sandlock: not supported yet: --{name}"
        args = [f"--{name}"] + ([value] if value else [])
        r = run(*args, *SYSTEM_READ, "--", "true", timeout=30)
        assert r.returncode == 1, (name, r.stderr)
        assert lines(r.stderr) == [expect], name


def test_help_exits_zero():
    r = sandlock("run", "--help", timeout=30)
    assert r.returncode == 0
    assert r.stdout.startswith(b"Usage: sandlock run")
