# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared fixtures for the black-box tests: they drive the built `sandlock` binary and the C
example the way users call them. SANDLOCK_BUILD names the build directory (default: build/).
A test that needs a kernel feature calls require(); with SANDLOCK_MUST_WORK=1 (CI) a missing
feature fails the test instead of skipping it."""

import os
import pathlib
import subprocess

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
