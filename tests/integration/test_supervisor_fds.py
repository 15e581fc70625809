# SPDX-License-Identifier: LGPL-2.1-or-later
"""The supervisor's descriptors: sandlock started under the common soft RLIMIT_NOFILE of 1024
raises its own soft limit to the hard one and gives the sandbox the caller's; what a sandbox
makes the supervisor hold (a pidfd and a lifeline pipe per process group, up to 128 groups;
the socket and path pin of each connect made on its behalf, up to 128 at once) stays bounded
(EAGAIN beyond), so max_memory and max_processes hold with the soft limit left at 1024 and
even with the hard limit at 1024. Controls: the same programs without the limits."""

import json
import resource
import subprocess
import time

import pytest

from conftest import PY, SANDLOCK, SYSTEM_READ

HARD = resource.getrlimit(resource.RLIMIT_NOFILE)[1]

FLOOD = r"""
import json, os, socket, sys, threading, time
d, what = sys.argv[1], sys.argv[2]
# 127 more process groups (128 with the first one).
kids = [os.posix_spawn("/usr/bin/setsid", ["setsid", "/bin/sleep", "30"], os.environ)
        for _ in range(127)]
# Connects parked on the supervisor's workers: a listener that never accepts (backlog 0),
# one blocking connect per thread.
path = os.path.join(d, "l.sock")
srv = socket.socket(socket.AF_UNIX)
srv.bind(path)
srv.listen(0)
threading.stack_size(256 << 10)
errors = []
def connect():
    c = socket.socket(socket.AF_UNIX)
    try:
        c.connect(path)
    except OSError as e:
        errors.append(e.errno)
    time.sleep(30)
for _ in range(330):
    threading.Thread(target=connect, daemon=True).start()
time.sleep(1.5)
print(json.dumps({"parked": 330 - len(errors), "errors": sorted(set(errors))}), flush=True)
if what == "memory":
    held = [bytearray(32 << 20) for _ in range(16)]
    time.sleep(0.5)
    print("held", 32 * len(held), "MiB", flush=True)
else:
    made, errs = 0, set()
    for _ in range(40):
        try:
            pid = os.fork()
        except OSError as e:
            errs.add(e.errno)
            continue
        if pid == 0:
            time.sleep(5)
            os._exit(0)
        made += 1
    print(json.dumps({"forked": made, "errors": sorted(errs)}), flush=True)
os._exit(0)
"""


def sandlock_under(nofile, *args, **kw):
    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, nofile)
    return subprocess.Popen([SANDLOCK, "run", *args], preexec_fn=limit,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def flood(tmp_path, nofile, what, *limits):
    (tmp_path / "l.sock").unlink(missing_ok=True)
    p = sandlock_under(nofile, *SYSTEM_READ, "-w", str(tmp_path), *limits, "--", PY, "-c",
                       FLOOD, str(tmp_path), what)
    out, err = p.communicate(timeout=90)
    lines = out.decode().splitlines()
    return p.returncode, lines, err


def test_the_supervisor_raises_its_own_limit_not_the_sandboxs():
    code = "import resource; print(resource.getrlimit(resource.RLIMIT_NOFILE)[0], flush=True)"
    p = sandlock_under((1024, HARD), *SYSTEM_READ, "--max-processes", "10", "--", PY, "-c",
                       code + "; import time; time.sleep(1)")
    time.sleep(0.5)
    with open(f"/proc/{p.pid}/limits") as f:
        soft = next(l for l in f if l.startswith("Max open files")).split()[3]
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0 and out == b"1024\n", err
    assert int(soft) == HARD  # sandlock's own


@pytest.mark.parametrize("nofile", [(1024, HARD), (1024, 1024)], ids=["soft", "hard"])
def test_limits_hold_with_a_pinned_supervisor(tmp_path, nofile):
    rc, lines, err = flood(tmp_path, nofile, "memory", "-m", "64M")
    assert rc == 128 + 9 and len(lines) == 1, err
    parked = json.loads(lines[0])
    # The connects beyond the bound are refused with EAGAIN; the supervisor never ran out
    # (EMFILE).
    assert parked["errors"] == [11] and parked["parked"] <= 130, parked
    rc, lines, err = flood(tmp_path, nofile, "procs", "--max-processes", "140")
    assert rc == 0 and json.loads(lines[1]) == {"forked": 12, "errors": [11]}, err


def test_the_flood_without_limits(tmp_path):
    # Control: without max_memory the 512 MiB are held; without max_processes 40 forks work.
    rc, lines, err = flood(tmp_path, (1024, HARD), "memory")
    assert rc == 0 and lines[1] == "held 512 MiB", err
    rc, lines, err = flood(tmp_path, (1024, HARD), "procs")
    assert rc == 0 and json.loads(lines[1]) == {"forked": 40, "errors": []}, err


LOW = r"""
import json, os, sys, time
spawned, errors = 0, set()
for _ in range(60):  # process groups until the supervisor has no descriptor left
    try:
        os.posix_spawn("/usr/bin/setsid", ["setsid", "/bin/sleep", "20"], os.environ)
        spawned += 1
    except OSError as e:
        errors.add(e.errno)
time.sleep(0.3)
print(json.dumps({"spawned": spawned, "errors": sorted(errors)}), flush=True)
if sys.argv[1] == "memory":
    held = [bytearray(32 << 20) for _ in range(16)]
    time.sleep(0.5)
    print("held", 32 * len(held), "MiB", flush=True)
else:
    forked, errs = 0, set()
    for _ in range(40):
        try:
            pid = os.fork()
        except OSError as e:
            errs.add(e.errno)
            continue
        if pid == 0:
            time.sleep(3)
            os._exit(0)
        forked += 1
    print(json.dumps({"forked": forked, "errors": sorted(errs)}), flush=True)
os._exit(0)
"""


def low(limit, what, *flags):
    p = sandlock_under((limit, limit), *SYSTEM_READ, *flags, "--", PY, "-c", LOW, what)
    out, err = p.communicate(timeout=60)
    return p.returncode, [json.loads(l) if l.startswith("{") else l
                          for l in out.decode().splitlines()], err


def test_counts_fail_closed_when_the_supervisor_runs_out():
    # A hard limit too low for the groups' descriptors: the supervisor runs out, its /proc
    # reads fail, and every count refuses (EAGAIN) instead of counting nothing. The process
    # count never passes the limit, whatever the descriptors left at each step.
    for limit in (40, 50, 55, 60, 65, 70, 80, 90, 100):
        rc, out, err = low(limit, "procs", "--max-processes", "70")
        assert rc == 0 and len(out) == 2, (limit, err)
        assert out[0]["spawned"] + 1 + out[1]["forked"] <= 70, (limit, out)
        assert set(out[0]["errors"]) | set(out[1]["errors"]) <= {11}, (limit, out)
    for limit in (40, 60, 100):
        rc, out, err = low(limit, "memory", "-m", "64M")
        assert rc == 128 + 9 and "held 512 MiB" not in out, (limit, out, err)
    # Control: with room the same program forks as many as the limit leaves.
    rc, out, err = low(HARD, "procs", "--max-processes", "70")
    assert rc == 0 and out == [{"spawned": 60, "errors": []}, {"forked": 9, "errors": [11]}]
