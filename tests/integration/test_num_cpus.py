# SPDX-License-Identifier: LGPL-2.1-or-later
"""num_cpus: the sandbox sees N CPUs in /proc/cpuinfo (numbered 0..N-1), in the sysfs CPU lists
(os.cpu_count()), and in sched_getaffinity (nproc); with fewer than the host has, it also runs
on N only. Controls: the same commands without --num-cpus report the host's count."""

import json
import os

from conftest import PY, SYSTEM_READ, run

HOST = len(os.sched_getaffinity(0))
VIEWS = ["-r", "/proc", "-r", "/sys"]

REPORT = r"""
import json, os
def procs(text):
    return [int(l.split(":")[1]) for l in text.splitlines() if l.startswith("processor")]
out = {"cpu_count": os.cpu_count(), "affinity": sorted(os.sched_getaffinity(0))}
for name in ["/proc/cpuinfo", "/proc/./cpuinfo", "//proc/cpuinfo", "/proc/../proc/cpuinfo"]:
    out[name] = procs(open(name).read())
d = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
out["dirfd"] = procs(os.read(os.open("cpuinfo", os.O_RDONLY, dir_fd=d), 1 << 20).decode())
for f in ("online", "possible", "present"):
    out[f] = open(f"/sys/devices/system/cpu/{f}").read().strip()
print(json.dumps(out))
"""


def report(*flags):
    r = run(*SYSTEM_READ, *VIEWS, *flags, "--", PY, "-c", REPORT, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def nproc(*flags):
    r = run(*SYSTEM_READ, *VIEWS, *flags, "--", "nproc", timeout=60)
    assert r.returncode == 0, r.stderr
    return int(r.stdout)


def expect(n):
    listed = "0" if n == 1 else f"0-{n - 1}"
    out = {"cpu_count": n, "affinity": list(range(n)), "dirfd": list(range(n)),
           "online": listed, "possible": listed, "present": listed}
    for name in ["/proc/cpuinfo", "/proc/./cpuinfo", "//proc/cpuinfo", "/proc/../proc/cpuinfo"]:
        out[name] = list(range(n))
    return out


def test_host_count_without_num_cpus():
    got = report()
    assert got["cpu_count"] == os.cpu_count() and len(got["/proc/cpuinfo"]) == os.cpu_count()
    assert nproc() == HOST


def test_one_cpu():
    assert report("--num-cpus", "1") == expect(1)
    assert nproc("--num-cpus", "1") == 1


def test_more_cpus_than_the_host_has():
    n = HOST + 2
    assert report("--num-cpus", str(n)) == expect(n)
    assert nproc("--num-cpus", str(n)) == n


def test_runs_on_that_many_cpus():
    # Fewer than the host: the real affinity is N CPUs too (read from /proc/self/status,
    # which the view does not change).
    code = ("print([l.split()[1] for l in open('/proc/self/status') "
            "if l.startswith('Cpus_allowed_list')][0])")
    r = run(*SYSTEM_READ, *VIEWS, "--num-cpus", "1", "--", PY, "-c", code, timeout=60)
    assert r.stdout.decode().strip() == "0"
    r = run(*SYSTEM_READ, *VIEWS, "--", PY, "-c", code, timeout=60)
    assert r.stdout.decode().strip() != "0" or HOST == 1


def test_views_need_a_grant():
    # Without a grant on /proc the real file is refused, and so is the view (it holds the
    # host's data too). Control: with the grant, the view.
    code = "print(open('/proc/cpuinfo').read().count('processor'))"
    r = run(*SYSTEM_READ, "--num-cpus", "1", "--", PY, "-c", code, timeout=60)
    assert r.returncode == 1 and b"PermissionError: [Errno 13]" in r.stderr
    r = run(*SYSTEM_READ, "-r", "/proc", "--num-cpus", "1", "--", PY, "-c", code, timeout=60)
    assert r.stdout == b"1\n"
