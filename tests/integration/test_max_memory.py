# SPDX-License-Identifier: LGPL-2.1-or-later
"""max_memory: the anonymous memory of the sandbox's processes together (what the kernel counts
for each: VmData and the shared memory it touched). The process whose allocation would cross
the limit is killed with SIGKILL; its parent survives. /proc/meminfo shows the limit. Each
case has its control without the limit."""

import json

from conftest import PY, SYSTEM_READ, run

VIEWS = ["-r", "/proc"]

GRANDCHILD = r"""
import json, os
pid = os.fork()
if pid == 0:
    g = os.fork()
    if g == 0:
        b = bytearray(400 << 20)  # 400 MiB, touched
        os._exit(0)
    _, st = os.waitpid(g, 0)
    os._exit(100 + (os.WTERMSIG(st) if os.WIFSIGNALED(st) else 0))
_, st = os.waitpid(pid, 0)
print(json.dumps({"grandchild_signal": os.WEXITSTATUS(st) - 100, "parent": "alive"}))
"""


def py(flags, code, *args):
    return run(*SYSTEM_READ, *VIEWS, *flags, "--", PY, "-c", code, *args, timeout=120)


def test_grandchild_over_the_limit_is_killed_parent_lives():
    r = py(["--max-memory", "128M"], GRANDCHILD)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"grandchild_signal": 9, "parent": "alive"}
    r = py([], GRANDCHILD)  # control
    assert json.loads(r.stdout) == {"grandchild_signal": 0, "parent": "alive"}


CYCLES = r"""
import os
ok = 0
for _ in range(10):
    pid = os.fork()
    if pid == 0:
        b = bytearray(64 << 20)
        os._exit(0)
    _, st = os.waitpid(pid, 0)
    ok += os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0
print(ok)
"""


def test_allocate_and_free_cycles_pass():
    # Each 64 MiB child ends before the next starts: never more than the limit at once.
    r = py(["--max-memory", "256M"], CYCLES)
    assert r.stdout == b"10\n", r.stderr


LAUNDER = r"""
import mmap, sys, tempfile
# Anonymous memory in 16 MiB chunks, a file mapped and unmapped between them: a count that
# credited every munmap would be laundered; the kernel's count is not.
f = tempfile.TemporaryFile(dir=sys.argv[1])
f.truncate(16 << 20)
held = []
for i in range(20):
    m = mmap.mmap(f.fileno(), 16 << 20)
    m.close()
    a = mmap.mmap(-1, 16 << 20)  # shared anonymous memory
    a.write(b"x" * (16 << 20))
    held.append(a)
    p = bytearray(8 << 20)  # and private
    held.append(p)
print("held", 24 * len(held) // 2, "MiB")
"""


def test_laundering_is_caught(tmp_path):
    flags = ["-w", str(tmp_path)]
    r = py(flags, LAUNDER, str(tmp_path))  # control: 480 MiB held
    assert r.returncode == 0 and r.stdout == b"held 480 MiB\n", r.stderr
    r = py([*flags, "--max-memory", "128M"], LAUNDER, str(tmp_path))
    assert r.returncode == 128 + 9 and r.stdout == b""


def test_meminfo_shows_the_limit():
    code = ("d = dict(l.split(':') for l in open('/proc/meminfo').read().splitlines())\n"
            "print(int(d['MemTotal'].split()[0]), int(d['MemFree'].split()[0]),"
            " int(d['MemAvailable'].split()[0]))")
    total, free, avail = map(int, py(["--max-memory", "64M"], code).stdout.split())
    assert total == 65536 and 0 < free < total and avail == free
    host = int(py([], code).stdout.split()[0])  # control: the host's
    with open("/proc/meminfo") as f:
        assert host == int(f.readline().split()[1])


LEADERLESS = r"""
import ctypes, threading, time
held = []
def work():
    time.sleep(0.3)  # the main thread is gone by then
    for _ in range(12):
        held.append(bytearray(50 << 20))
    print("worker holds", 50 * len(held), "MiB", flush=True)
    ctypes.CDLL(None).syscall(231, 0)  # exit_group
threading.Thread(target=work).start()
ctypes.CDLL(None).syscall(60, 0)  # exit: the main thread only; the process lives on
"""


def test_a_process_whose_main_thread_exited_is_counted():
    r = py([], LEADERLESS)  # control: 600 MiB held
    assert r.stdout == b"worker holds 600 MiB\n", r.stderr
    r = py(["--max-memory", "128M"], LEADERLESS)
    assert r.returncode == 128 + 9 and r.stdout == b""


INNOCENT = r"""
import os, threading, time
big = bytearray(50 << 20)  # 50 MiB, shared with the children after fork (copy-on-write)
threads = [threading.Thread(target=time.sleep, args=(0.5,)) for _ in range(20)]
for t in threads:
    t.start()
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        time.sleep(0.5)
        os._exit(0)
    kids.append(pid)
codes = [os.waitstatus_to_exitcode(os.waitpid(k, 0)[1]) for k in kids]
for t in threads:
    t.join()
print(codes)
"""


def test_shared_and_reserved_memory_do_not_kill():
    # Thread stacks are reserved, not used; pages shared after fork count once: 20 threads
    # and two children of a 50 MiB process fit in 128M. (Control: the program runs bare.)
    assert py([], INNOCENT).stdout == b"[0, 0]\n"
    r = py(["--max-memory", "128M"], INNOCENT)
    assert r.returncode == 0 and r.stdout == b"[0, 0]\n", r.stderr


NONDUMPABLE = r"""
import ctypes, sys
if sys.argv[1] == "nondumpable":
    assert ctypes.CDLL(None).prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE 0
held = [bytearray(16 << 20) for _ in range(int(sys.argv[2]))]
print("held", 16 * len(held), "MiB", flush=True)
"""


def test_a_non_dumpable_process_is_counted():
    # Its smaps_rollup is refused to a supervisor without CAP_SYS_PTRACE; its status is not.
    r = py(["--max-memory", "64M"], NONDUMPABLE, "nondumpable", "32")
    assert r.returncode == 128 + 9 and r.stdout == b"", r.stderr
    # Controls: within the limit, dumpable or not, it lives; without the limit 512 MiB.
    for kind in ("dumpable", "nondumpable"):
        r = py(["--max-memory", "64M"], NONDUMPABLE, kind, "1")
        assert r.returncode == 0 and r.stdout == b"held 16 MiB\n", r.stderr
    r = py([], NONDUMPABLE, "nondumpable", "32")
    assert r.returncode == 0 and r.stdout == b"held 512 MiB\n", r.stderr


PAGE_TABLES = r"""
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
size = 512 << 30  # read-only, private, anonymous: not trapped, nothing resident
addr = libc.mmap(None, size, 1, 0x22 | 0x4000, -1, 0)  # PROT_READ, PRIVATE|ANON|NORESERVE
assert addr not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
s = 0
for off in range(0, size, 2 << 20):  # a read per 2 MiB: a page-table page each
    s += ctypes.c_char.from_address(addr + off).value[0]
print("touched", s, flush=True)
"""


def test_page_tables_are_counted():
    # 512 GiB read once per 2 MiB builds 1 GiB of page tables (VmPTE) with 0 resident.
    r = py([], PAGE_TABLES)  # control
    assert r.returncode == 0 and r.stdout == b"touched 0\n", r.stderr
    r = py(["--max-memory", "64M"], PAGE_TABLES)
    assert r.returncode == 128 + 9 and r.stdout == b"", r.stderr


MEMFD = r"""
import os, sys
try:
    fd = os.memfd_create("fill")
except OSError as e:
    print("memfd_create", e.errno)
    raise SystemExit
chunk = b"x" * (1 << 20)
for _ in range(int(sys.argv[1])):
    os.write(fd, chunk)  # never mapped: in no process's count
print("filled", os.fstat(fd).st_blocks * 512 >> 20, "MiB", flush=True)
"""


def test_memfd_is_refused_under_the_limit():
    # Control: without the limit a memfd takes 256 MiB written.
    r = py([], MEMFD, "256")
    assert r.returncode == 0 and r.stdout == b"filled 256 MiB\n", r.stderr
    r = py(["--max-memory", "64M"], MEMFD, "256")
    assert r.returncode == 0 and r.stdout == b"memfd_create 38\n", r.stderr  # ENOSYS
