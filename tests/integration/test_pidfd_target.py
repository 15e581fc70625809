# SPDX-License-Identifier: LGPL-2.1-or-later
"""process_madvise and process_mrelease name another process by a pidfd: a sandbox may act
only on its own processes. Advice to another process needs CAP_SYS_NICE, so the process outside
is reached only as root; process_mrelease checks no right at all (only that the target is
dying: EINVAL for a live one), so it shows the refusal for every user."""

import os
import subprocess

import pytest

from conftest import PRELUDE, PY, SYSTEM_READ, X86_64, result_json, run

pytestmark = pytest.mark.skipif(not X86_64, reason="x86_64 syscall numbers")

CODE = """
import mmap, time
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
def madvise(pid, addr):
    pfd = os.pidfd_open(pid)
    iov = iovec(addr, 4096)
    r = sc(440, pfd, ctypes.addressof(iov), 1, 20, 0)  # MADV_COLD
    os.close(pfd)
    return r
def mrelease(pid):
    pfd = os.pidfd_open(pid)
    r = sc(448, pfd, 0)
    os.close(pfd)
    return r
outside, outside_addr = int(sys.argv[1]), int(sys.argv[2], 16)
buf = mmap.mmap(-1, 4096)
buf[0] = 1
addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
pid = os.fork()
if pid == 0:
    time.sleep(30)
    os._exit(0)
res = {
    "outside": madvise(outside, outside_addr),
    "inside": madvise(pid, addr),  # the child: the same layout as this process
    "self": madvise(os.getpid(), addr),
    "mrelease_outside": mrelease(outside),
    "mrelease_inside": mrelease(pid),
}
os.kill(pid, 9)
os.waitpid(pid, 0)
out(res)
"""


@pytest.fixture
def outsider():
    """A process outside every sandbox, and the start of a mapping of its (its stack)."""
    p = subprocess.Popen(["sleep", "60"])
    try:
        for _ in range(100):
            with open(f"/proc/{p.pid}/maps") as f:
                stack = [line for line in f if "[stack]" in line]
            if stack:
                break
        yield p.pid, stack[0].split("-")[0]
    finally:
        p.kill()
        p.wait()


@pytest.mark.parametrize("supervised", [True, False])
def test_process_madvise_and_mrelease_reach_only_the_sandbox(outsider, supervised):
    pid, addr = outsider
    bare = result_json(subprocess.run([PY, "-c", PRELUDE + CODE, pid_s := str(pid), addr],
                                      capture_output=True, timeout=60))
    flags = [] if supervised else ["--no-supervisor"]
    got = result_json(run(*SYSTEM_READ, *flags, "--", PY, "-c", PRELUDE + CODE, pid_s, addr,
                          timeout=60))
    root = os.geteuid() == 0
    # Control, outside any sandbox: root advises the other process; anyone may advise its own
    # memory, and process_mrelease of a live process is EINVAL.
    assert bare["outside"] == ([4096, 0] if root else [-1, 1])
    assert bare["inside"] == ([4096, 0] if root else [-1, 1])
    assert bare["self"] == [4096, 0]
    assert bare["mrelease_outside"] == [-1, 22] and bare["mrelease_inside"] == [-1, 22]
    if not supervised:  # refused by the filter: nobody could check the target
        assert all(v == [-1, 1] for v in got.values()), got
        return
    # The process outside: refused, EPERM, as for the other calls that name another process.
    # Unprivileged, the call is the kernel's, whose ptrace check (Landlock's, for a process
    # outside the domain) answers first: EACCES.
    assert got["outside"] == ([-1, 1] if root else [-1, 13])
    assert got["mrelease_outside"] == [-1, 1]
    # The sandbox's own processes: as outside.
    assert got["inside"] == bare["inside"]
    assert got["self"] == [4096, 0]
    assert got["mrelease_inside"] == [-1, 22]
