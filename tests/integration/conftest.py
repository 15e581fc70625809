# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared fixtures for the black-box tests: they drive the built `sandlock` binary and the C
example the way users call them. SANDLOCK_BUILD names the build directory (default: build/).
A test that needs a kernel feature calls require(); with SANDLOCK_MUST_WORK=1 (CI) a missing
feature fails the test instead of skipping it."""

import json
import os
import pathlib
import platform
import signal
import subprocess
import time
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("SANDLOCK_BUILD", ROOT / "build")).resolve()
SANDLOCK = str(BUILD / "sandlock")
EXAMPLE = str(BUILD / "examples" / "spawn")
MUST_WORK = os.environ.get("SANDLOCK_MUST_WORK") == "1"
SANITIZED = (BUILD / "SANITIZED").exists()

# Read grants that let ordinary dynamically linked programs start.
SYSTEM_DIRS = [d for d in ("/usr", "/lib", "/lib64", "/bin", "/sbin") if os.path.exists(d)]
SYSTEM_READ = [arg for d in SYSTEM_DIRS for arg in ("-r", d)]


def require(condition, feature):
    """Skip (or, under SANDLOCK_MUST_WORK=1, fail) when a kernel feature is missing."""
    if condition:
        return
    if MUST_WORK:
        pytest.fail(f"missing kernel feature: {feature} (SANDLOCK_MUST_WORK=1)")
    pytest.skip(f"missing kernel feature: {feature}")


def landlock_abi():
    out = subprocess.run([SANDLOCK, "check"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("Landlock ABI:"):
            value = line.split(":", 1)[1].strip()
            return int(value) if value.isdigit() else -1
    return -1


def sandlock(*args, timeout=60, env=None, **kw):
    """Run `sandlock ARGS...` and return the CompletedProcess (bytes output)."""
    return subprocess.run([SANDLOCK, *args], capture_output=True, timeout=timeout, env=env, **kw)


def run(*args, **kw):
    """`sandlock run ARGS...`"""
    return sandlock("run", *args, **kw)


def nested_env():
    """Environment for a sandlock that runs inside a sandbox. LeakSanitizer needs ptrace, which
    the sandbox refuses, so a sanitized inner sandlock runs with leak detection off."""
    env = dict(os.environ)
    if SANITIZED:
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    return env


def process_alive(pid):
    """True if @pid exists and is not a zombie (PID 1 here may never reap orphans)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def pids_with_cmdline(marker):
    """Live (non-zombie) processes whose command line contains @marker."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd and process_alive(int(entry)):
            found.append(int(entry))
    return found


@pytest.fixture
def sandbox_dir(tmp_path):
    """A directory the current user owns, for write grants."""
    d = tmp_path / "box"
    d.mkdir()
    return d


# ---- helpers shared by the behaviour tests ------------------------------------------------------

PY = "/usr/bin/python3"
X86_64 = platform.machine() == "x86_64"

# x86_64 syscall numbers the tests call through syscall(2), so that libc wrappers and their
# fallbacks cannot hide what the kernel (or the filter) answered.
NR = {
    "getpid": 39, "socket": 41, "clone": 56, "kill": 62, "shmget": 29, "shmctl": 31,
    "getcwd": 79, "ptrace": 101, "personality": 135, "prctl": 157, "mount": 165,
    "keyctl": 250, "unshare": 272, "io_uring_setup": 425, "clone3": 435, "ioctl": 16,
}

# Prepended to every Python snippet: sc(NR, args...) returns [result, errno] (errno 0 on
# success); out(v) prints v as one JSON line.
PRELUDE = """\
import ctypes, errno, json, os, signal, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return [r, ctypes.get_errno() if r == -1 else 0]
def out(v):
    sys.stdout.write(json.dumps(v) + "\\n")
    sys.stdout.flush()
"""


def py_inside(code, *flags, timeout=60, **kw):
    """Run a Python snippet (with PRELUDE) confined by SYSTEM_READ + @flags. CompletedProcess."""
    return run(*SYSTEM_READ, *flags, "--", PY, "-c", PRELUDE + code, timeout=timeout, **kw)


def py_outside(code, timeout=60, **kw):
    """The same snippet run directly, for the negative control."""
    return subprocess.run([PY, "-c", PRELUDE + code], capture_output=True, timeout=timeout,
                          **kw)


def result_json(proc):
    """The JSON line a snippet printed; fails the test with the snippet's stderr otherwise."""
    assert proc.returncode == 0, (proc.returncode, proc.stderr.decode(errors="replace"))
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


def pids_with_argv(argv):
    """Live (non-zombie) processes whose argv is exactly @argv."""
    want = "\0".join(argv) + "\0"
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().decode(errors="replace")
        except OSError:
            continue
        if cmd == want and process_alive(int(entry)):
            found.append(int(entry))
    return found


def forwards_signal(pid, sig):
    """Whether sandlock (@pid) holds @sig blocked for its signalfd, to pass it on. While it
    starts a thread it blocks every signal for a moment (SIGUSR1 too, which it never passes
    on): a signal then ends it by its default action once the moment is over."""
    with open(f"/proc/{pid}/status") as f:
        mask = next(int(line.split()[1], 16) for line in f if line.startswith("SigBlk:"))
    return bool(mask & (1 << (int(sig) - 1))) and not mask & (1 << (signal.SIGUSR1 - 1))


def wait_until(predicate, timeout=10.0, interval=0.02):
    """Poll @predicate until it returns a true value (returned) or @timeout seconds pass
    (returns the last false value)."""
    deadline = time.monotonic() + timeout
    while True:
        v = predicate()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(interval)


@pytest.fixture
def unique_sleep():
    """unique_sleep() returns a fresh ["sleep", "<unique seconds>"] argv; every process still
    running one of them is killed when the test ends, so a failing test leaks nothing."""
    made = []

    def make():
        secs = str(100000 + uuid.uuid4().int % 800000)
        argv = ["sleep", secs]
        made.append(argv)
        return argv

    yield make
    for argv in made:
        for pid in pids_with_argv(argv):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def default_signals():
    """preexec_fn: a background job of a non-interactive shell inherits SIGINT and SIGQUIT
    ignored, and so would sandlock's command. Give the child default dispositions, as a
    terminal would."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


# Two threads: one flips a shared path buffer between ALLOWED and DENIED (the same length),
# the other opens it 20 000 times (O_RDONLY, and O_RDWR when argv[4] is "rw") and counts the
# opens that read DENIED's content, told by the regular expression argv[3] matching what was
# read. Prints "opened leaked". argv: allowed denied pattern [rw]
RACE = r"""
import ctypes, os, re, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
allowed, denied = sys.argv[1].encode(), sys.argv[2].encode()
leak = re.compile(sys.argv[3].encode())
rw = len(sys.argv) > 4 and sys.argv[4] == "rw"
buf = ctypes.create_string_buffer(allowed, 4096)
stop = False
def flip():
    while not stop:
        ctypes.memmove(buf, denied, len(denied))
        ctypes.memmove(buf, allowed, len(allowed))
t = threading.Thread(target=flip)
t.start()
leaked = opened = 0
out = ctypes.create_string_buffer(64)
for i in range(20000):
    fd = libc.open(buf, os.O_RDWR if rw and i % 2 else os.O_RDONLY)
    if fd < 0:
        continue
    opened += 1
    n = libc.read(fd, out, 64)
    libc.close(fd)
    leaked += n > 0 and leak.match(out.raw[:n]) is not None
stop = True
t.join()
print(opened, leaked)
"""

