# SPDX-License-Identifier: LGPL-2.1-or-later
"""-i: the sandbox becomes the terminal's foreground process group and the terminal is given
back afterwards. A pseudo-terminal comes from script(1) (bsdutils, essential in Debian)."""

import shutil
import subprocess

import pytest

from conftest import SANDLOCK, SYSTEM_READ

# Inside: print our process group and the terminal's foreground group (fields 5 and 8 of stat).
PROBE = "cut -d' ' -f5,8 /proc/self/stat"


def in_pty(shell_cmd):
    if not shutil.which("script"):
        pytest.skip("script(1) is not installed")
    r = subprocess.run(["script", "-qec", shell_cmd, "/dev/null"], capture_output=True,
                       timeout=30)
    return r.returncode, r.stdout.decode(errors="replace").replace("\r", "")


def grants():
    return " ".join(SYSTEM_READ + ["-r", "/proc", "-r", "/dev"])


def test_interactive_takes_and_returns_the_terminal():
    # After sandlock, the shell prints its own group and the foreground group again.
    cmd = (f"{SANDLOCK} run -i {grants()} -- sh -c \"{PROBE}; exit 5\"; echo rc=$?; "
           f"{PROBE}")
    code, out = in_pty(cmd)
    lines = [line for line in out.splitlines() if line.strip()]
    inside = lines[0].split()
    assert inside[0] == inside[1], f"the sandbox is the foreground group: {lines}"
    assert lines[1] == "rc=5"
    after = lines[2].split()
    assert after[0] == after[1], f"the shell is the foreground group again: {lines}"
    assert after[0] != inside[0]


def test_without_interactive_the_sandbox_is_in_the_background():
    # Control: without -i the sandbox has its own group but the terminal stays with sandlock's.
    cmd = f"{SANDLOCK} run {grants()} -- sh -c \"{PROBE}\"; echo rc=$?"
    code, out = in_pty(cmd)
    lines = [line for line in out.splitlines() if line.strip()]
    inside = lines[0].split()
    assert inside[0] != inside[1], f"not the foreground group: {lines}"
    assert lines[1] == "rc=0"


def test_interactive_without_a_terminal_is_an_error():
    r = subprocess.run([SANDLOCK, "run", "-i", *SYSTEM_READ, "--", "true"], capture_output=True,
                       timeout=30, stdin=subprocess.DEVNULL, start_new_session=True)
    assert r.returncode == 1
    assert r.stderr.decode().startswith("sandlock: interactive: no controlling terminal")


def test_interactive_launch_failure_gives_the_terminal_back():
    # Under a job-control shell, sandlock is its own foreground group; when the command cannot
    # start, sandlock must give the terminal back without being stopped by SIGTTOU (the shell
    # would report "Stopped" and $? = 150).
    if not shutil.which("bash"):
        pytest.skip("bash is not installed")
    cmd = (f"bash --norc -ic '{SANDLOCK} run -i {grants()} -- /nonexistent-cmd; "
           f"echo rc=$?'")
    code, out = in_pty(cmd)
    assert "Stopped" not in out
    assert "rc=127" in out
