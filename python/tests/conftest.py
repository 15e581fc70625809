# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared fixtures for the Python SDK tests.

The package is imported from the source tree (<repo>/python) when it is not importable
otherwise, and the library from $SANDLOCK_LIB, else $SANDLOCK_BUILD/libsandlock.so, else
<repo>/build/libsandlock.so (set before the package loads it: it loads on first use). A test
that needs a kernel feature calls require(); with SANDLOCK_MUST_WORK=1 (CI) a missing feature
fails the test instead of skipping it. Every test starts and ends with no child process of
ours: a sandbox the test leaves running (or unreaped) fails it.
"""

import asyncio
import os
import pathlib
import signal
import subprocess
import sys
import time
import uuid

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("SANDLOCK_BUILD", ROOT / "build")).resolve()
SANDLOCK_CLI = str(BUILD / "sandlock")
MUST_WORK = os.environ.get("SANDLOCK_MUST_WORK") == "1"
SANITIZED = (BUILD / "SANITIZED").exists()

os.environ.setdefault("SANDLOCK_LIB", str(BUILD / "libsandlock.so"))

try:
    import sandlock  # noqa: E402
except ImportError:
    sys.path.insert(0, str(ROOT / "python"))
    import sandlock  # noqa: E402

# The directory holding the package under test: what a sandboxed `from sandlock import inputs`
# needs on PYTHONPATH and readable.
PKG_PARENT = str(pathlib.Path(sandlock.__file__).resolve().parents[1])

# Read grants that let ordinary dynamically linked programs start.
SYSTEM_READ = [d for d in ("/usr", "/lib", "/lib64", "/bin", "/sbin") if os.path.exists(d)]
PY = "/usr/bin/python3"


def unique_name(base):
    """A sandbox name no other test run holds at the same time (names are per user)."""
    return f"{base}-{os.getpid()}"


def require(condition, feature):
    """Skip (or, under SANDLOCK_MUST_WORK=1, fail) when a kernel feature is missing."""
    if condition:
        return
    if MUST_WORK:
        pytest.fail(f"missing kernel feature: {feature} (SANDLOCK_MUST_WORK=1)")
    pytest.skip(f"missing kernel feature: {feature}")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "pure: a pure-Python test that needs neither Landlock nor the library")


# ---- processes ------------------------------------------------------------------------------


def proc_stat(pid):
    """(state, ppid) of @pid from /proc/PID/stat, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return fields[0], int(fields[1])


def process_alive(pid):
    """True if @pid exists and is not a zombie (PID 1 here may never reap orphans)."""
    st = proc_stat(pid)
    return st is not None and st[0] not in ("Z", "X")


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None


def pids_with_argv(argv):
    """Live (non-zombie) processes whose argv is exactly @argv."""
    want = ("\0".join(argv) + "\0").encode()
    return [int(e) for e in os.listdir("/proc")
            if e.isdigit() and cmdline(e) == want and process_alive(int(e))]


def our_children():
    """Every process whose parent is this one, zombies included (the library reaps its own)."""
    me = os.getpid()
    out = []
    for e in os.listdir("/proc"):
        if e.isdigit():
            st = proc_stat(e)
            if st is not None and st[1] == me:
                out.append((int(e), st[0], cmdline(e)))
    return out


def run(coro):
    """@coro run to its end on a fresh event loop (the MCP tests' calls)."""
    return asyncio.run(coro)


def wait_until(predicate, timeout=5.0, interval=0.01):
    """Poll @predicate until it returns a true value (returned) or @timeout seconds pass
    (returns the last false value)."""
    deadline = time.monotonic() + timeout
    while True:
        v = predicate()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(interval)


def read_pids(path, count, timeout=5.0):
    """The first @count pids a sandboxed shell wrote to @path, one a line (waits for them)."""
    def got():
        try:
            lines = pathlib.Path(path).read_text().split()
        except FileNotFoundError:
            return None
        return [int(x) for x in lines] if len(lines) >= count else None

    pids = wait_until(got, timeout)
    assert pids, f"the sandboxed command did not write {count} pids to {path}"
    return pids[:count]


def landlock_abi_cli():
    """The ABI `sandlock check` reports, or -1."""
    out = subprocess.run([SANDLOCK_CLI, "check"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("Landlock ABI:"):
            value = line.split(":", 1)[1].strip()
            return int(value) if value.isdigit() else -1
    return -1


# ---- fixtures -------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _landlock_and_no_leftovers(request):
    """Landlock at the floor the SDK needs (except for pure tests), and no child process left
    behind by the test: the library waits for and reaps what it starts."""
    if request.node.get_closest_marker("pure") is None:
        require(sandlock.landlock_abi_version() >= sandlock.min_landlock_abi(),
                f"Landlock ABI >= {sandlock.min_landlock_abi()}")
    yield
    if wait_until(lambda: not our_children(), timeout=3.0):
        return
    left = our_children()
    if left:
        for pid, _, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)  # so that one leak does not fail every later test
            except (ProcessLookupError, ChildProcessError):
                pass
        pytest.fail(f"child processes left behind (pid, state, cmdline): {left}")


@pytest.fixture
def no_sanitizer_preload(monkeypatch):
    """Under an ASan build the runner preloads the sanitizer runtimes into this interpreter
    (LD_PRELOAD); a sandboxed command would inherit them and, confined, exit 1 at its end.
    The interpreter keeps them loaded; the commands we start do not get them. Test modules
    opt in with pytestmark = pytest.mark.usefixtures("no_sanitizer_preload") (an ordinary
    interpreter that imports the ASan library still needs the preload)."""
    if SANITIZED and "LD_PRELOAD" in os.environ:
        monkeypatch.delenv("LD_PRELOAD")


@pytest.fixture
def sandboxes():
    """make(**fields) -> Sandbox with SYSTEM_READ added to fs_readable; each one is closed
    (its process killed) when the test ends, so a failing test leaks nothing."""
    made = []

    def make(*, fs_readable=(), **kw):
        sb = sandlock.Sandbox(fs_readable=[*SYSTEM_READ, *fs_readable], **kw)
        made.append(sb)
        return sb

    yield make
    for sb in made:
        sb.close()


@pytest.fixture
def unique_sleep():
    """unique_sleep() returns a fresh ["sleep", "30.<unique>"] argv (at most 31 s if it ever
    leaked); every process still running one of them is killed when the test ends."""
    made = []

    def make():
        argv = ["sleep", f"30.{uuid.uuid4().int % 10**9:09d}"]
        made.append(argv)
        return argv

    yield make
    for argv in made:
        for pid in pids_with_argv(argv):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


@pytest.fixture
def secret(tmp_path):
    """A file in a directory no sandbox is granted unless the test says so."""
    d = tmp_path / "secret"
    d.mkdir()
    f = d / "secret.txt"
    f.write_bytes(b"top secret\n")
    return f


@pytest.fixture
def box(tmp_path):
    """A directory for write grants (owned by whoever runs the tests)."""
    d = tmp_path / "box"
    d.mkdir()
    return d
