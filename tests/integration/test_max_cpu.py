# SPDX-License-Identifier: LGPL-2.1-or-later
"""max_cpu: the sandbox is stopped (SIGSTOP) for the rest of each 100 ms period once it ran its
share, then continued. Observed from outside, without timing thresholds: a CPU-bound command
under --cpu 50 is seen stopped ('T') part of the time and running the rest; without the limit
it is never seen stopped. (The slowdown itself is measured by bench/throttle.)"""

import subprocess
import time

from conftest import PY, SANDLOCK, SYSTEM_READ, run

SPIN = "import os, sys; print(os.getpid(), flush=True)\nwhile True: pass"


def states(*flags, samples=300):
    proc = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, *flags, "-t", "30", "--", PY,
                             "-c", SPIN], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(proc.stdout.readline())
        seen = []
        for _ in range(samples):
            with open(f"/proc/{pid}/stat") as f:
                seen.append(f.read().rsplit(")", 1)[1].split()[0])
            time.sleep(0.005)
        return seen
    finally:
        proc.kill()
        proc.wait()


def test_throttled_command_is_stopped_part_of_the_time():
    seen = states("--cpu", "50")
    assert "T" in seen and "R" in seen
    # Control: unthrottled, never stopped.
    assert "T" not in states()


def test_refused_with_a_terminal():
    # (Without a supervisor: test_needs_supervisor.py.)
    r = run(*SYSTEM_READ, "--cpu", "50", "-i", "--", "true", timeout=30)
    assert r.returncode == 1
    assert r.stderr.decode().splitlines() == [
        "sandlock: interactive: max_cpu cannot be combined with a terminal (a shell's job "
        "control would take the throttle's stops for its own)"]
    # Control: the same without --cpu starts (here it has no terminal, and says so).
    r = run(*SYSTEM_READ, "-i", "--", "true", timeout=30)
    assert "max_cpu" not in r.stderr.decode()
