# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a sandboxed command sees, through Sandbox.run(): the filesystem grants, the environment,
the working directory, the virtual hostname, extra denied syscalls, and how the outcome (exit
code, signal, output, a command that cannot be executed) comes back in the Result. Each
behaviour has its negative control: the same action without the rule (or with the grant)."""

import errno
import os
import platform
import socket
import subprocess

import pytest

from conftest import PY, pids_with_argv, unique_name, wait_until

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")


def py(code, *args):
    """argv running a Python snippet (the snippet prints its outcome)."""
    return [PY, "-c", code, *map(str, args)]


# An errno-reporting open/mkdir: prints "ok" or the errno number.
OPEN_W = """import sys
try:
    open(sys.argv[1], "w").write("x")
    print("ok")
except OSError as e:
    print(e.errno)
"""
MKDIR = """import os, sys
try:
    os.mkdir(sys.argv[1])
    print("ok")
except OSError as e:
    print(e.errno)
"""


# ---- filesystem -----------------------------------------------------------------------------


def test_read_outside_fs_readable_is_denied(sandboxes, secret):
    r = sandboxes().run(["cat", str(secret)])
    assert not r.success
    assert r.exit_code != 0
    assert r.stdout == b""
    assert b"Permission denied" in r.stderr
    assert r.error is None  # cat ran and failed: not a sandbox error


def test_read_inside_fs_readable_is_allowed(sandboxes, secret):
    r = sandboxes(fs_readable=[str(secret.parent)]).run(["cat", str(secret)])
    assert (r.success, r.exit_code, r.stdout, r.stderr) == (True, 0, b"top secret\n", b"")


def test_write_in_fs_writable(sandboxes, box):
    target = box / "out.txt"
    r = sandboxes(fs_writable=[str(box)]).run(["sh", "-c", f"echo data > {target}; cat {target}"])
    assert (r.success, r.stdout, r.stderr) == (True, b"data\n", b"")
    assert target.read_bytes() == b"data\n"


def test_write_outside_fs_writable_is_eacces(sandboxes, box, tmp_path):
    # The directory is readable (granted) but not writable; the control is box, writable.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sb = sandboxes(fs_readable=[str(elsewhere)], fs_writable=[str(box)])
    r = sb.run(py(OPEN_W, elsewhere / "f"))
    assert (r.success, r.stdout) == (True, f"{errno.EACCES}\n".encode())
    assert not (elsewhere / "f").exists()
    r = sb.run(py(OPEN_W, box / "f"))
    assert (r.success, r.stdout) == (True, b"ok\n")
    assert (box / "f").read_text() == "x"


def test_shell_redirect_outside_fs_writable(sandboxes, tmp_path):
    r = sandboxes().run(["sh", "-c", f"echo x > {tmp_path}/f"])
    assert not r.success and r.exit_code == 2
    assert b"Permission denied" in r.stderr
    assert not (tmp_path / "f").exists()


# ---- environment, working directory, name ---------------------------------------------------


def env_of(result):
    assert result.success, result.stderr
    return dict(line.split("=", 1) for line in result.stdout.decode().splitlines())


def test_env_adds_to_inherited(sandboxes, monkeypatch):
    monkeypatch.setenv("SDK_TEST_PARENT", "from-parent")
    env = env_of(sandboxes(env={"SDK_TEST_SET": "v 1", "SDK_TEST_PARENT": "overridden"})
                 .run(["env"]))
    assert env["SDK_TEST_SET"] == "v 1"
    assert env["SDK_TEST_PARENT"] == "overridden"
    # Control: without env, the parent's value comes through and nothing is added.
    env = env_of(sandboxes().run(["env"]))
    assert env["SDK_TEST_PARENT"] == "from-parent"
    assert "SDK_TEST_SET" not in env


def test_clean_env(sandboxes, monkeypatch):
    monkeypatch.setenv("SDK_TEST_PARENT", "from-parent")
    env = env_of(sandboxes(clean_env=True, env={"SDK_TEST_SET": "v"}).run(["env"]))
    assert "SDK_TEST_PARENT" not in env
    assert env["SDK_TEST_SET"] == "v"  # env applies after clean_env
    assert set(env) <= {"PATH", "HOME", "USER", "TERM", "LANG", "SDK_TEST_SET"}
    assert "PATH" in env


def test_cwd(sandboxes, tmp_path):
    r = sandboxes(cwd=str(tmp_path)).run(["pwd"])
    assert (r.success, r.stdout) == (True, f"{tmp_path}\n".encode())
    # Control: without cwd the command starts where the caller is.
    assert sandboxes().run(["pwd"]).stdout == f"{os.getcwd()}\n".encode()


def test_cwd_missing_is_a_failed_result(sandboxes, tmp_path):
    r = sandboxes(cwd=str(tmp_path / "missing")).run(["pwd"])
    assert (r.success, r.exit_code, r.stdout) == (False, 127, b"")
    assert "chdir" in r.error and "No such file or directory" in r.error


def test_name_is_the_hostname(sandboxes):
    name = unique_name("sdk-box")
    assert socket.gethostname() != name  # control: not the host's name already
    sb = sandboxes(name=name)
    r = sb.run(["uname", "-n"])
    assert (r.success, r.stdout) == (True, f"{name}\n".encode())
    assert sb.sandbox_name == name
    assert sb.name == name


def test_auto_name_is_sandbox_pid(sandboxes, unique_sleep):
    sb = sandboxes()
    assert sb.name is None and sb.sandbox_name is None
    sleep = unique_sleep()
    sb.spawn(["sh", "-c", f"uname -n; exec {' '.join(sleep)}"])
    pid = sb.pid
    assert pid is not None and pid > 0
    assert sb.sandbox_name == f"sandbox-{pid}"
    assert wait_until(lambda: pids_with_argv(sleep) == [pid])  # uname has run
    sb.kill()
    r = sb.wait()
    assert r.stdout == f"sandbox-{pid}\n".encode()
    assert sb.sandbox_name == f"sandbox-{pid}"  # still the last run's name
    assert socket.gethostname() != f"sandbox-{pid}"


# ---- syscalls -------------------------------------------------------------------------------

MKDIR_SYSCALLS = ["mkdir", "mkdirat"] if platform.machine() == "x86_64" else ["mkdirat"]


def test_extra_deny_syscalls(sandboxes, box):
    denied = sandboxes(fs_writable=[str(box)], extra_deny_syscalls=MKDIR_SYSCALLS)
    r = denied.run(py(MKDIR, box / "d1"))
    assert (r.success, r.stdout, r.stderr) == (True, f"{errno.EPERM}\n".encode(), b"")
    assert not (box / "d1").exists()
    # Control: the same sandbox without the extra rule.
    r = sandboxes(fs_writable=[str(box)]).run(py(MKDIR, box / "d2"))
    assert (r.success, r.stdout) == (True, b"ok\n")
    assert (box / "d2").is_dir()


def test_extra_deny_syscalls_shell_message(sandboxes, box):
    r = sandboxes(fs_writable=[str(box)], extra_deny_syscalls=MKDIR_SYSCALLS).run(
        ["mkdir", str(box / "d")])
    assert (r.success, r.exit_code) == (False, 1)
    assert b"Operation not permitted" in r.stderr


# ---- the outcome ----------------------------------------------------------------------------


def test_exit_code(sandboxes):
    r = sandboxes().run(["sh", "-c", "exit 3"])
    assert (r.success, r.exit_code, r.signal, r.error) == (False, 3, 0, None)
    r = sandboxes().run(["sh", "-c", "exit 0"])  # control
    assert (r.success, r.exit_code, r.signal, r.error) == (True, 0, 0, None)


def test_killed_by_signal(sandboxes):
    r = sandboxes().run(["sh", "-c", "kill -TERM $$"])
    assert (r.success, r.exit_code, r.signal) == (False, 128 + 15, 15)
    assert "SIGTERM" in r.error


def test_stdout_stderr_exact_bytes(sandboxes):
    r = sandboxes().run(["sh", "-c", r"printf 'a\000b\377\n'; printf 'to err\n' >&2; printf x"])
    assert r.stdout == b"a\x00b\xff\nx"
    assert r.stderr == b"to err\n"
    assert r.success


def test_large_output_is_captured_whole(sandboxes):
    # More than any pipe buffer: the capture must drain while the command runs.
    r = sandboxes().run(["sh", "-c", "yes | head -c 2097152; echo done >&2"])
    assert r.success, r.stderr
    assert r.stdout == b"y\n" * (2097152 // 2)
    assert r.stderr == b"done\n"


def test_stdin_is_dev_null(sandboxes):
    r = sandboxes().run(["sh", "-c", "cat; echo rc=$?"])
    assert (r.success, r.stdout, r.stderr) == (True, b"rc=0\n", b"")
    r = sandboxes().run(["readlink", "/proc/self/fd/0"])
    assert r.stdout == b"/dev/null\n"


def test_stdin_control_cat_reads_a_pipe(sandboxes):
    # Control for the above: the same cat does echo what its stdin carries.
    a = sandboxes()
    r = (a.cmd(["echo", "piped"]) | a.cmd(["sh", "-c", "cat; echo rc=$?"])).run()
    assert r.stdout == b"piped\nrc=0\n"


@pytest.mark.parametrize("cmd", ["sdk-no-such-command", "/nonexistent/sdk-cmd"])
def test_command_not_found(sandboxes, monkeypatch, cmd):
    # A PATH of searchable directories: execvp reports EACCES rather than ENOENT when a PATH
    # entry cannot be searched (e.g. /root/... for a non-root user).
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    r = sandboxes().run([cmd])
    assert (r.success, r.exit_code, r.stdout, r.signal) == (False, 127, b"", 0)
    assert "No such file or directory" in r.error
    r = sandboxes().run(["true"])  # control: a command that exists
    assert (r.success, r.exit_code, r.error) == (True, 0, None)


def test_command_not_permitted(sandboxes, secret):
    # An existing file the sandbox cannot read: 127, and the reason.
    secret.chmod(0o755)
    r = sandboxes().run([str(secret)])
    assert (r.success, r.exit_code) == (False, 127)
    assert "Permission denied" in r.error


def test_int_arguments_are_stringified(sandboxes):
    assert sandboxes().run(["echo", 7, "x"]).stdout == b"7 x\n"


@pytest.mark.parametrize("bad", ["echo hi", [], ["echo", None], ["echo", 1.5]])
def test_bad_command_type(sandboxes, bad):
    with pytest.raises(TypeError):
        sandboxes().run(bad)


# ---- descriptors ----------------------------------------------------------------------------

OPEN_FDS = """import os
def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
print([fd for fd in range(3, 1024) if is_open(fd)])
"""


def test_no_descriptor_leaks_into_the_sandbox(sandboxes, secret):
    fd = os.open(secret, os.O_RDONLY)
    try:
        os.set_inheritable(fd, True)
        # Control: an ordinary child that keeps descriptors sees it.
        out = subprocess.run([PY, "-c", OPEN_FDS], close_fds=False, capture_output=True).stdout
        assert fd in eval(out)
        r = sandboxes().run([PY, "-c", OPEN_FDS])
        assert (r.success, r.stdout) == (True, b"[]\n")
    finally:
        os.close(fd)
