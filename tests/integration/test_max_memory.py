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
