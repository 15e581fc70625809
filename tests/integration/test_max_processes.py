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


ZOMBIES = r"""
import json, os, sys, time
n, orphans = int(sys.argv[1]), int(sys.argv[2])
for _ in range(orphans):  # grandchildren left to a parent outside the sandbox
    pid = os.fork()
    if pid == 0:
        if os.fork() == 0:
            os._exit(0)
        os._exit(0)
    os.waitpid(pid, 0)
time.sleep(0.2)
made, errors = 0, set()
for _ in range(n):  # children that exit and are never reaped: each holds its pid
    try:
        pid = os.fork()
    except OSError as e:
        errors.add(e.errno)
        continue
    if pid == 0:
        os._exit(0)
    made += 1
time.sleep(0.2)
print(json.dumps({"made": made, "errors": sorted(errors)}))
"""


def zombies(n, orphans, *flags):
    r = run(*SYSTEM_READ, *flags, "--", PY, "-c", ZOMBIES, str(n), str(orphans), timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_unreaped_children_count():
    # A zombie holds its pid until its parent reaps it: with 9 unreaped, the tenth fork is
    # refused. Control: without the limit all 30 are made.
    assert zombies(30, 0) == {"made": 30, "errors": []}
    assert zombies(30, 0, "--max-processes", "10") == {"made": 9, "errors": [11]}


def test_orphans_zombies_are_not_the_sandboxs():
    # An orphan's zombie waits for a parent outside the sandbox (init here may never reap
    # it): it does not count, and 20 of them leave room for 9 unreaped children.
    assert zombies(30, 20, "--max-processes", "10") == {"made": 9, "errors": [11]}
