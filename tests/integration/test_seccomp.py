# SPDX-License-Identifier: LGPL-2.1-or-later
"""The seccomp layer seen from inside: the default blocklist, the argument filters, the x32 ABI,
--extra-deny-syscall / --extra-allow-syscall and their validation. Each syscall is made raw
(syscall(2) through ctypes) with arguments chosen so that the same call outside the sandbox gets
a different answer from the kernel (success, EINVAL, EFAULT...) for root and non-root alike;
inside, the filter answers EPERM before the kernel looks at the arguments."""

import errno
import json
import os
import shutil
import signal
import socket
import subprocess

import pytest

from conftest import (NR, PRELUDE, PY, SYSTEM_READ, X86_64, py_inside, py_outside, require,
                      result_json, run)

pytestmark = pytest.mark.skipif(not X86_64, reason="syscall numbers are x86_64's")

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_FS = 0x00000200
SIGCHLD = int(signal.SIGCHLD)


def both(code, *flags):
    """(outside, inside) JSON results of one snippet."""
    return result_json(py_outside(code)), result_json(py_inside(code, *flags))


# (name, snippet printing [result, errno]); outside checks compare against the kernel's own
# answer for those arguments.
BLOCKLIST = {
    # NULL target: the kernel fails the path lookup with EFAULT before any permission check.
    "mount": (f"out(sc({NR['mount']}, 0, 0, 0, 0, 0))", [-1, errno.EFAULT]),
    # A flag unshare does not know: EINVAL from the kernel.
    "unshare": (f"out(sc({NR['unshare']}, 1))", [-1, errno.EINVAL]),
    # PEEKDATA on a pid that cannot exist: ESRCH.
    "ptrace": (f"out(sc({NR['ptrace']}, 2, 0x3fffffff, 0, 0))", [-1, errno.ESRCH]),
    # An unknown keyctl command: EOPNOTSUPP.
    "keyctl": (f"out(sc({NR['keyctl']}, 0xffff, 0, 0, 0, 0))", [-1, errno.EOPNOTSUPP]),
    # 0xffffffff queries the current persona without changing it.
    "personality": (f"out(sc({NR['personality']}, 0xffffffff))", None),
}


@pytest.mark.parametrize("name", sorted(BLOCKLIST))
def test_default_blocklist_eperm(name):
    code, expect_outside = BLOCKLIST[name]
    outside, inside = both(code)
    if expect_outside is None:
        assert outside[0] >= 0 and outside[1] == 0, outside
    else:
        assert outside == expect_outside
    assert inside == [-1, errno.EPERM]


def test_io_uring_setup_blocked():
    code = f"out(sc({NR['io_uring_setup']}, 1, 0))"
    outside, inside = both(code)
    # Outside: EFAULT for the NULL params, unless io_uring is missing or disabled here, in
    # which case the control cannot tell the filter from the kernel.
    if outside[1] in (errno.ENOSYS, errno.EPERM):
        try:
            with open("/proc/sys/kernel/io_uring_disabled") as f:
                disabled = f.read().strip()
        except OSError:
            disabled = "?"
        pytest.skip(f"io_uring unavailable outside (errno {outside[1]}, disabled={disabled})")
    assert outside == [-1, errno.EFAULT]
    assert inside == [-1, errno.EPERM]


def test_ptrace_traceme_blocked():
    code = f"out(sc({NR['ptrace']}, 0, 0, 0, 0))"  # PTRACE_TRACEME
    outside, inside = both(code)
    assert outside == [0, 0]
    assert inside == [-1, errno.EPERM]


def test_unshare_newuser_blocked():
    code = f"out(sc({NR['unshare']}, {CLONE_NEWUSER}))"
    outside, inside = both(code)
    assert inside == [-1, errno.EPERM]
    # The distinguishing control is test_default_blocklist_eperm[unshare]; this one shows the
    # real request, which the kernel may also refuse outside where user namespaces are off.
    assert outside in ([0, 0], [-1, errno.EPERM], [-1, errno.ENOSPC], [-1, errno.EINVAL])


def test_unshare_command_fails():
    unshare = shutil.which("unshare")
    if not unshare:
        pytest.skip("no unshare(1)")
    outside = subprocess.run([unshare, "-U", "true"], capture_output=True, timeout=30)
    inside = run(*SYSTEM_READ, "--", unshare, "-U", "true", timeout=30)
    assert inside.returncode != 0
    assert b"Operation not permitted" in inside.stderr
    if outside.returncode != 0:
        pytest.skip("user namespaces are unavailable outside too: " + outside.stderr.decode())


# ---- sysv_ipc group -------------------------------------------------------------------------

SHM = f"""
r = sc({NR['shmget']}, 0, 4096, 0o1000 | 0o600)  # IPC_PRIVATE, IPC_CREAT|0600
rm = sc({NR['shmctl']}, r[0], 0, 0) if r[0] >= 0 else None  # IPC_RMID
out([r, rm])
"""


def test_shmget_blocked_by_default_and_reallowed():
    outside = result_json(py_outside(SHM))
    assert outside[0][0] >= 0 and outside[1] == [0, 0]

    default = result_json(py_inside(SHM))
    assert default == [[-1, errno.EPERM], None]

    allowed = result_json(py_inside(SHM, "--extra-allow-syscall", "sysv_ipc"))
    assert allowed[0][0] >= 0 and allowed[0][1] == 0
    assert allowed[1] == [0, 0]  # removed again


def test_extra_deny_group_sysv_ipc_is_valid():
    r = py_inside(SHM, "--extra-deny-syscall", "sysv_ipc")
    assert result_json(r) == [[-1, errno.EPERM], None]


GETCWD = f"""
buf = ctypes.create_string_buffer(4096)
ctypes.set_errno(0)
r = libc.syscall(ctypes.c_long({NR['getcwd']}), buf, ctypes.c_long(4096))
out([r, ctypes.get_errno() if r == -1 else 0, buf.value.decode()])
"""


def test_extra_deny_syscall_getcwd(tmp_path):
    real = os.path.realpath(tmp_path)

    def getcwd(*flags):
        # -I: no '' on sys.path, so Python's own start-up does not need getcwd.
        return result_json(run(*SYSTEM_READ, "--cwd", real, *flags, "--", PY, "-I", "-c",
                               PRELUDE + GETCWD, timeout=30))

    assert getcwd() == [len(real) + 1, 0, real]
    assert getcwd("--extra-deny-syscall", "getcwd") == [-1, errno.EPERM, ""]


@pytest.mark.parametrize("args,message", [
    (["--extra-deny-syscall", "nosuchsyscall"],
     "sandlock: --extra-deny-syscall: invalid value 'nosuchsyscall': unknown syscall "
     "nosuchsyscall"),
    (["--extra-allow-syscall", "shmget"],
     "sandlock: --extra-allow-syscall: invalid value 'shmget': shmget is a syscall, only groups "
     "can be re-allowed (groups: sysv_ipc)"),
    (["--extra-allow-syscall", "nosuchgroup"],
     "sandlock: --extra-allow-syscall: invalid value 'nosuchgroup': unknown group nosuchgroup "
     "(groups: sysv_ipc)"),
    (["--extra-allow-syscall", "sysv_ipc", "--extra-deny-syscall", "sysv_ipc"],
     "sandlock: --extra-deny-syscall: invalid value 'sysv_ipc': syscall group sysv_ipc is both "
     "allowed and denied"),
    (["--extra-deny-syscall", "shmget", "--extra-allow-syscall", "sysv_ipc"],
     "sandlock: --extra-allow-syscall: invalid value 'sysv_ipc': shmget is a member of "
     "sysv_ipc, which extra_allow_syscalls re-allows"),
])
def test_invalid_syscall_names(args, message):
    # Checked as each name is added, like any other value: bad usage (exit 2).
    r = run(*args, *SYSTEM_READ, "--", "true", timeout=30)
    assert r.returncode == 2
    assert r.stderr.decode().splitlines() == [message, "Try 'sandlock run --help'."]


def test_valid_syscall_names_run():
    # Control for test_invalid_syscall_names: valid names in the same positions run.
    for args in (["--extra-deny-syscall", "getcwd"], ["--extra-allow-syscall", "sysv_ipc"],
                 ["--extra-deny-syscall", "sysv_ipc"]):
        r = run(*args, *SYSTEM_READ, "--", "true", timeout=30)
        assert r.returncode == 0, (args, r.stderr)


# ---- argument filters -----------------------------------------------------------------------

CLONE = f"""
import sys
flags = int(sys.argv[1])
r = sc({NR['clone']}, flags, 0, 0, 0, 0)
if r[0] == 0:
    os._exit(0)          # the child of a successful raw clone
if r[0] > 0:
    _, status = os.waitpid(r[0], 0)
    r = ["child", os.waitstatus_to_exitcode(status)]
out(r)
"""


def clone_both(flags):
    outside = result_json(subprocess.run([PY, "-c", PRELUDE + CLONE, str(flags)],
                                         capture_output=True, timeout=30))
    inside = result_json(run(*SYSTEM_READ, "--", PY, "-c", PRELUDE + CLONE, str(flags),
                             timeout=30))
    return outside, inside


def test_clone_plain_fork_works():
    outside, inside = clone_both(SIGCHLD)
    assert outside == ["child", 0]
    assert inside == ["child", 0]


@pytest.mark.parametrize("ns", [CLONE_NEWNS, CLONE_NEWUSER], ids=["newns", "newuser"])
def test_clone_namespace_flags_blocked(ns):
    # With CLONE_FS the kernel itself answers EINVAL (for every user) before any permission
    # check; inside the filter answers EPERM first.
    outside, inside = clone_both(ns | CLONE_FS | SIGCHLD)
    assert outside == [-1, errno.EINVAL]
    assert inside == [-1, errno.EPERM]
    # And the plain namespace request is refused inside too.
    _, inside_plain = clone_both(ns | SIGCHLD)
    assert inside_plain == [-1, errno.EPERM]


def test_clone3_enosys():
    code = f"out(sc({NR['clone3']}, 0, 0))"
    outside, inside = both(code)
    assert outside == [-1, errno.EINVAL]  # size 0 is too small for struct clone_args
    assert inside == [-1, errno.ENOSYS]


def test_libc_fork_still_works_inside():
    # clone3 answering ENOSYS must leave fork/subprocess working (libc falls back to clone).
    code = "import subprocess; out(subprocess.run(['/bin/sh', '-c', 'exit 5']).returncode)"
    assert both(code) == (5, 5)


def test_ioctl_tiocsti_blocked():
    TIOCSTI = 0x5412
    code = f"out(sc({NR['ioctl']}, -1, {TIOCSTI}, 0))"
    outside, inside = both(code)
    assert outside == [-1, errno.EBADF]
    assert inside == [-1, errno.EPERM]


def test_ioctl_other_requests_allowed():
    # FIONREAD on a pipe: a harmless ioctl works inside.
    code = """
import array, fcntl, termios
rfd, wfd = os.pipe()
os.write(wfd, b"abc")
n = array.array("i", [0])
fcntl.ioctl(rfd, termios.FIONREAD, n)
out(n[0])
"""
    assert both(code) == (3, 3)


def test_prctl_set_securebits_blocked():
    code = f"""
cur = sc({NR['prctl']}, 27, 0, 0, 0, 0)               # PR_GET_SECUREBITS
out([cur, sc({NR['prctl']}, 28, cur[0], 0, 0, 0)])    # PR_SET_SECUREBITS to the same value
"""
    outside, inside = both(code)
    assert outside[0][1] == 0 and inside[0][1] == 0  # PR_GET_SECUREBITS works everywhere
    assert inside[1] == [-1, errno.EPERM]
    if os.geteuid() == 0:
        assert outside[1] == [0, 0]
    else:
        # Unprivileged, kernels differ on whether a no-op set needs CAP_SETPCAP.
        assert outside[1] in ([0, 0], [-1, errno.EPERM])


def test_prctl_set_ptracer_blocked():
    PR_SET_PTRACER = 0x59616D61
    code = f"out(sc({NR['prctl']}, {PR_SET_PTRACER}, 0, 0, 0, 0))"
    outside, inside = both(code)
    # Outside: 0 with Yama, EINVAL without it; never EPERM for clearing our own tracer.
    assert outside in ([0, 0], [-1, errno.EINVAL])
    assert inside == [-1, errno.EPERM]


SOCK = f"""
import sys
res = []
for fam, typ, proto in json.loads(sys.argv[1]):
    r = sc({NR['socket']}, fam, typ, proto)
    if r[0] >= 0:
        os.close(r[0])
        r = [0, 0]
    res.append(r)
out(res)
"""


def test_socket_filters():
    cases = [
        (socket.AF_INET, socket.SOCK_RAW, 1000),    # EINVAL from the kernel (bad protocol)
        (socket.AF_INET6, socket.SOCK_RAW, 1000),
        (socket.AF_INET, socket.SOCK_DGRAM, 0),     # UDP: works outside
        (socket.AF_INET6, socket.SOCK_DGRAM, 0),
        (socket.AF_INET, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC, 0),
        (socket.AF_UNIX, socket.SOCK_STREAM, 0),
        (socket.AF_UNIX, socket.SOCK_DGRAM, 0),
        (socket.AF_INET, socket.SOCK_STREAM, 0),
    ]
    arg = json.dumps(cases)
    outside = result_json(subprocess.run([PY, "-c", PRELUDE + SOCK, arg], capture_output=True,
                                         timeout=30))
    inside = result_json(run(*SYSTEM_READ, "--", PY, "-c", PRELUDE + SOCK, arg, timeout=30))
    ipv6 = outside[3] == [0, 0]
    expect_out = [[-1, errno.EINVAL], [-1, errno.EINVAL if ipv6 else errno.EAFNOSUPPORT],
                  [0, 0], outside[3], [0, 0], [0, 0], [0, 0], [0, 0]]
    assert outside == expect_out
    assert inside == [[-1, errno.EPERM]] * 5 + [[0, 0], [0, 0], [0, 0]]


def test_x32_syscall_kills_process():
    x32_getpid = NR["getpid"] | 0x40000000
    code = f"out(sc({x32_getpid}))"
    outside = result_json(py_outside(code))
    # Outside: ENOSYS where the kernel has no x32, otherwise the pid.
    assert outside == [-1, errno.ENOSYS] or outside[0] > 0
    inside = py_inside(code)
    assert inside.returncode == 128 + int(signal.SIGSYS), inside.stderr
    assert inside.stdout == b""


# i386 getpid through int 0x80: push rbx; mov eax, 20; int 0x80; pop rbx; ret.
I386 = """
import mmap
code = bytes([0x53, 0xb8, 20, 0, 0, 0, 0xcd, 0x80, 0x5b, 0xc3])
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
fn = ctypes.CFUNCTYPE(ctypes.c_long)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
out([fn(), os.getpid()])
"""


def test_i386_syscall_kills_process():
    outside = py_outside(I386)
    require(outside.returncode == 0, "IA-32 emulation (int 0x80)")
    pid, real = result_json(outside)
    assert pid == real
    inside = py_inside(I386)
    assert inside.returncode == 128 + int(signal.SIGSYS), inside.stderr
    assert inside.stdout == b""


HIGH = 1 << 32


@pytest.mark.parametrize("name,code,outside_ok", [
    # The kernel reads these arguments as 32-bit ints: garbage in the upper half must not
    # slip the request past the filter.
    ("ioctl TIOCSTI", f"out(sc({NR['ioctl']}, -1, {HIGH | 0x5412}, 0))", [[-1, errno.EBADF]]),
    ("prctl PR_SET_PTRACER", f"out(sc({NR['prctl']}, {HIGH | 0x59616D61}, 0, 0, 0, 0))",
     [[0, 0], [-1, errno.EINVAL]]),
    ("socket AF_INET SOCK_DGRAM",
     f"r = sc({NR['socket']}, {HIGH | socket.AF_INET}, {HIGH | socket.SOCK_DGRAM}, 0)\n"
     "out([0, 0] if r[0] >= 0 else r)", [[0, 0]]),
])
def test_filters_ignore_upper_register_half(name, code, outside_ok):
    outside, inside = both(code)
    assert outside in outside_ok, name
    assert inside == [-1, errno.EPERM], name
