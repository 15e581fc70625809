# SPDX-License-Identifier: LGPL-2.1-or-later
"""`sandlock check` and the protection flags (--allow-degraded, --disable)."""

import ctypes
import re

import pytest

from conftest import SYSTEM_READ, landlock_abi, require, run, sandlock

PROTECTIONS = ["FsRefer", "FsTruncate", "NetTcp", "FsIoctlDev", "SignalScope",
               "AbstractUnixSocketScope"]
CLI_NAMES = ["fs-refer", "fs-truncate", "net-tcp", "fs-ioctl-dev", "signal-scope",
             "abstract-unix-socket-scope"]


def test_check_lists_abi_and_protections():
    r = sandlock("check", timeout=30)
    out = r.stdout.decode()
    m = re.search(r"^Landlock ABI: (\d+)$", out, re.M)
    assert m, out
    abi = int(m.group(1))
    require(abi >= 6, "Landlock ABI 6")
    assert r.returncode == 0
    for name in PROTECTIONS:
        assert re.search(rf"^{name}\s+v\d+\s+available$", out, re.M), name
    assert "A default sandbox can run here." in out


def test_check_abi_agrees_with_kernel():
    # The ABI check reports is what the kernel answers landlock_create_ruleset(VERSION).
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    LANDLOCK_CREATE_RULESET_VERSION = 1
    kernel = libc.syscall(ctypes.c_long(444), None, ctypes.c_long(0),
                          ctypes.c_long(LANDLOCK_CREATE_RULESET_VERSION))
    require(kernel > 0, "Landlock")
    assert landlock_abi() == kernel


@pytest.mark.parametrize("flag", ["--allow-degraded", "--disable"])
def test_bad_protection_name_is_usage_error(flag):
    r = run(flag, "no-such-protection", *SYSTEM_READ, "--", "true", timeout=30)
    assert r.returncode == 2
    # allow_degraded also takes "all".
    also = "all, " if flag == "--allow-degraded" else ""
    assert r.stderr.decode().splitlines()[0] == (
        f"sandlock: {flag}: invalid value 'no-such-protection': expected {also}fs-refer, "
        "fs-truncate, net-tcp, fs-ioctl-dev, signal-scope or abstract-unix-socket-scope")


@pytest.mark.parametrize("flag", ["--allow-degraded", "--disable"])
@pytest.mark.parametrize("name", CLI_NAMES + PROTECTIONS)
def test_protection_names_accepted(flag, name):
    # Control for the bad-name test: every protection name, in both spellings, is accepted.
    r = run(flag, name, *SYSTEM_READ, "--", "true", timeout=30)
    assert r.returncode == 0, r.stderr
