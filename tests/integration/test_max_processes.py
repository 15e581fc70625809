# SPDX-License-Identifier: LGPL-2.1-or-later
"""max_processes: the most processes a sandbox has at once (threads do not count); a fork
beyond fails with EAGAIN. Controls: the same programs without the limit."""

import json
import subprocess
import time
import uuid

from conftest import PY, SANDLOCK, SYSTEM_READ, pids_with_cmdline, run

FORKS = r"""
import json, os, sys, threading, time
n = int(sys.argv[1])
ok, errors, kids = 0, [], []
for _ in range(n):  # n children alive at once
    try:
        pid = os.fork()
    except OSError as e:
        errors.append(e.errno)
        continue
    if pid == 0:
        time.sleep(1)
        os._exit(0)
    ok += 1
    kids.append(pid)
for k in kids:
    os.waitpid(k, 0)
seq = 0
for _ in range(20):  # one at a time
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    seq += 1
threads = [threading.Thread(target=time.sleep, args=(0.3,)) for _ in range(10)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps({"concurrent": ok, "errors": sorted(set(errors)), "sequential": seq,
                  "threads": len(threads)}))
"""


def forks(*flags):
    r = run(*SYSTEM_READ, *flags, "--", PY, "-c", FORKS, "10", timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_fork_limit():
    assert forks() == {"concurrent": 10, "errors": [], "sequential": 20, "threads": 10}
    # The first process counts: two children at once under 3, the rest EAGAIN; one at a
    # time, every fork works; threads are not processes.
    assert forks("--max-processes", "3") == {"concurrent": 2, "errors": [11],
                                             "sequential": 20, "threads": 10}


def test_fork_bomb_is_contained():
    marker = f"bomb-{uuid.uuid4().hex}"
    code = ("import os\n"
            f"# {marker}\n"
            "while True:\n"
            "    try:\n"
            "        os.fork()\n"
            "    except OSError:\n"
            "        pass\n")
    proc = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, "--max-processes", "16", "-t", "5",
                             "--", PY, "-c", code], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    peak = 0
    while proc.poll() is None:
        # sandlock's own command line holds the marker too: not a process of the sandbox
        peak = max(peak, len(set(pids_with_cmdline(marker)) - {proc.pid}))
        time.sleep(0.05)
    assert proc.returncode == 124  # the timeout ended it
    assert 1 < peak <= 16
    time.sleep(0.2)
    assert pids_with_cmdline(marker) == []  # nothing of it left on the host, nor sandlock
