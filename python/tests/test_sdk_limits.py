# SPDX-License-Identifier: LGPL-2.1-or-later
"""[limits] through the SDK: num_cpus (nproc, /proc/cpuinfo and os.cpu_count() report N),
max_cpu (the sandbox is stopped part of each period; a pause wins), max_processes (a fork
beyond fails with EAGAIN). Each with its control."""

import os
import time

import pytest

from conftest import PY

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")

CODE = ("import os; print(os.cpu_count(), "
        "sum(l.startswith('processor') for l in open('/proc/cpuinfo')))")


def test_num_cpus(sandboxes):
    host = os.cpu_count()
    views = ["/proc", "/sys"]
    r = sandboxes(fs_readable=views).run([PY, "-c", CODE])
    assert r.stdout.split() == [str(host).encode()] * 2
    r = sandboxes(fs_readable=views, num_cpus=1).run([PY, "-c", CODE])
    assert r.stdout.split() == [b"1", b"1"]
    assert sandboxes(fs_readable=views, num_cpus=3).run(["nproc"]).stdout == b"3\n"


SPIN = "import os; print(os.getpid(), flush=True)\nwhile True: pass"


def sample(pid, n=120):
    seen = []
    for _ in range(n):
        with open(f"/proc/{pid}/stat") as f:
            seen.append(f.read().rsplit(")", 1)[1].split()[0])
        time.sleep(0.005)
    return seen


def test_max_cpu_and_pause(sandboxes):
    sb = sandboxes(max_cpu=50)
    sb.spawn([PY, "-c", SPIN])
    seen = sample(sb.pid)
    assert "T" in seen and "R" in seen  # throttled: stopped part of each period
    # Paused by the host: stopped through several of the throttle's periods (it continues
    # only what it stopped itself).
    sb.pause()
    time.sleep(0.05)
    assert set(sample(sb.pid)) == {"T"}
    sb.resume()
    assert "R" in sample(sb.pid)
    sb.kill()
    # Control: unthrottled, never stopped.
    free = sandboxes()
    free.spawn([PY, "-c", SPIN])
    assert "T" not in sample(free.pid)
    free.kill()


FORKS = """import os, time
ok, err = 0, 0
for _ in range(6):
    try:
        if os.fork() == 0:
            time.sleep(0.5)
            os._exit(0)
        ok += 1
    except OSError as e:
        err = e.errno
print(ok, err)
"""


def test_max_processes(sandboxes):
    assert sandboxes().run([PY, "-c", FORKS]).stdout.split() == [b"6", b"0"]
    assert sandboxes(max_processes=4).run([PY, "-c", FORKS]).stdout.split() == [b"3", b"11"]


BIG = """import os
pid = os.fork()
if pid == 0:
    b = bytearray(300 << 20)
    os._exit(0)
_, st = os.waitpid(pid, 0)
print(os.WTERMSIG(st) if os.WIFSIGNALED(st) else 0)
"""


def test_max_memory(sandboxes):
    assert sandboxes().run([PY, "-c", BIG]).stdout == b"0\n"  # control
    assert sandboxes(max_memory="128M").run([PY, "-c", BIG]).stdout == b"9\n"


def test_gpu_devices_named(sandboxes):
    code = "import os; print(os.environ.get('CUDA_VISIBLE_DEVICES', '-'))"
    assert sandboxes().run([PY, "-c", code]).stdout == b"-\n"  # control
    assert sandboxes(gpu_devices=[1, 3]).run([PY, "-c", code]).stdout == b"1,3\n"
