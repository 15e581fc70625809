# SPDX-License-Identifier: LGPL-2.1-or-later
"""The launch through the SDK: a policy that traps the child's calls after its filter (the
"ready" write under max_disk, sendmsg under UDP rules) starts and runs, and timeout= counts
from the spawn, so a launch that stalls (an execve waiting on a file lease this test holds)
ends as a timeout. Each run is in a child interpreter with a hard bound, so a launch that hangs
fails the test instead of hanging the suite. Each behaviour has its control."""

import errno
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import PKG_PARENT, SYSTEM_READ, require

HARD = 20

# Runs Sandbox(**FIELDS).run(ARGV, timeout=TIMEOUT) and prints the result as JSON. The
# sanitizer runtimes this interpreter may have preloaded stay out of the sandboxed command.
SCRIPT = """
import json, os, sys, time
os.environ.pop("LD_PRELOAD", None)
import sandlock
fields, argv, timeout = json.loads(sys.argv[1])
t0 = time.monotonic()
r = sandlock.Sandbox(**fields).run(argv, timeout=timeout)
print(json.dumps({"code": r.exit_code, "error": r.error, "out": r.stdout.decode(),
                  "elapsed": time.monotonic() - t0}))
"""


def sdk_run(fields, argv, timeout):
    path = os.pathsep.join(p for p in (PKG_PARENT, os.environ.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps([fields, argv, timeout])],
                          capture_output=True, timeout=HARD,
                          env={**os.environ, "PYTHONPATH": path})
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return json.loads(proc.stdout)


def test_quota_and_udp_rules_launch_and_run(tmp_path):
    wd = tmp_path / "wd"
    wd.mkdir()
    fields = {"fs_readable": SYSTEM_READ, "workdir": str(wd), "max_disk": "10M",
              "net_allow": ["udp://127.0.0.1:7999"]}
    r = sdk_run(fields, ["/bin/sh", "-c", f"echo made > {wd}/f; cat {wd}/f"], 2)
    assert (r["code"], r["out"], r["error"]) == (0, "made\n", None)
    assert r["elapsed"] < 5
    assert (wd / "f").read_text() == "made\n"


def test_control_without_the_rules(tmp_path):
    r = sdk_run({"fs_readable": SYSTEM_READ}, ["/bin/echo", "ok"], 2)
    assert (r["code"], r["out"]) == (0, "ok\n")


@pytest.fixture
def leased(tmp_path):
    """A copy of /bin/true with a write lease held on it by this process: an execve of it waits
    until the lease goes (or lease-break-time, 45 s by default, passes)."""
    d = tmp_path / "leased"
    d.mkdir()
    prog = d / "true"
    shutil.copy("/bin/true", prog)
    old = signal.signal(signal.SIGIO, signal.SIG_IGN)  # the lease break's notice
    fd = os.open(prog, os.O_RDONLY)
    try:
        try:
            fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
        except OSError as e:
            require(e.errno not in (errno.EINVAL, errno.EACCES, errno.EAGAIN),
                    f"file leases (F_SETLEASE: {os.strerror(e.errno)})")
            raise
        yield d, prog
    finally:
        os.close(fd)
        signal.signal(signal.SIGIO, old)


def test_timeout_covers_a_stalled_launch(leased):
    d, prog = leased
    t0 = time.monotonic()
    r = sdk_run({"fs_readable": [*SYSTEM_READ, str(d)]}, [str(prog)], 1)
    assert r["code"] == 124
    assert "timed out" in r["error"]
    assert time.monotonic() - t0 < 10  # not the lease-break-time


def test_control_the_same_program_without_the_lease(tmp_path):
    prog = tmp_path / "true"
    shutil.copy("/bin/true", prog)
    r = sdk_run({"fs_readable": [*SYSTEM_READ, str(tmp_path)]}, [str(prog)], 1)
    assert (r["code"], r["error"]) == (0, None)
