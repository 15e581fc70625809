# SPDX-License-Identifier: LGPL-2.1-or-later
"""The names code written for the Python SDK reference imports from sandlock, with their
meaning: __version__, ExitReason and Result.reason/.signal for every way a run ends,
PolicyError and SandboxError as ValueError, Protection as an IntEnum that still takes the CLI's
names, parse_memory_size, and no export at all of names whose features are not built."""

import importlib
import pathlib
import re
import signal

import pytest

import sandlock
from conftest import PY, ROOT
from sandlock import (
    ExitReason,
    PolicyError,
    Protection,
    Sandbox,
    SandboxError,
    SandlockError,
    StdioMode,
)
from sandlock.sandbox import parse_memory_size

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")

# ---- __version__ ------------------------------------------------------------------------------


@pytest.mark.pure
def test_version_is_the_library_version():
    make = (ROOT / "Makefile").read_text()
    assert sandlock.__version__ == re.search(r"^VERSION := (\S+)$", make, re.M).group(1)
    assert "__version__" in sandlock.__all__
    # One place holds it: pyproject.toml reads it from the package.
    toml = (ROOT / "python" / "pyproject.toml").read_text()
    assert 'version = { attr = "sandlock._version.__version__" }' in toml
    assert not re.search(r'^version\s*=\s*"', toml, re.M)


# ---- enums ------------------------------------------------------------------------------------


@pytest.mark.pure
def test_enum_values():
    assert {m.name: int(m) for m in ExitReason} == {
        "EXITED": 0, "SIGNALED": 1, "KILLED": 2, "TIMEOUT": 3}
    assert {m.name: int(m) for m in StdioMode} == {"INHERIT": 0, "PIPED": 1, "NULL": 2}
    assert {m.name: int(m) for m in Protection} == {
        "FS_REFER": 0, "FS_TRUNCATE": 1, "NET_TCP": 2, "FS_IOCTL_DEV": 3, "SIGNAL_SCOPE": 4,
        "ABSTRACT_UNIX_SOCKET_SCOPE": 5}


@pytest.mark.pure
def test_protection_takes_the_cli_names():
    assert Protection("fs-refer") is Protection.FS_REFER
    assert Protection("abstract-unix-socket-scope") is Protection.ABSTRACT_UNIX_SOCKET_SCOPE
    assert Protection(4) is Protection.SIGNAL_SCOPE
    assert Protection.NET_TCP.label == "net-tcp"
    with pytest.raises(ValueError):
        Protection("fs_refer")
    with pytest.raises(ValueError):
        Protection(6)


PROTECTIONS_DOC = ["fs-refer", "fs-truncate", "net-tcp", "fs-ioctl-dev", "signal-scope",
                   "abstract-unix-socket-scope"]


@pytest.mark.parametrize("given", [
    list(Protection),
    [0, 1, 2, 3, 4, 5],
    PROTECTIONS_DOC,
    [Protection.FS_REFER, 1, "net-tcp", Protection(3), "signal-scope", 5],
])
def test_protection_int_and_string_forms(given):
    assert Sandbox(allow_degraded=given).to_json() == {
        "protections": {"allow_degraded": PROTECTIONS_DOC}}
    assert Sandbox(disable=given).to_json() == {"protections": {"disable": PROTECTIONS_DOC}}


@pytest.mark.parametrize("field", ["allow_degraded", "disable"])
@pytest.mark.parametrize("bad,word", [(6, "protection 6: not one of 0..5"),
                                      (-1, "protection -1: not one of 0..5"),
                                      ("fs-everything", "expected ")])
def test_protection_bad_forms(field, bad, word):
    if word == "expected ":
        # allow_degraded also takes all; disable does not.
        word += "all, fs-refer" if field == "allow_degraded" else "fs-refer"
    with pytest.raises(PolicyError, match=f"^{field}: {word}"):
        Sandbox(**{field: [bad]})


def test_protection_forms_reach_the_kernel(sandboxes):
    # The number and the name disable the same protection: a signal to a process outside
    # goes through (the strict default refuses it, EPERM).
    import os

    code = ("import os, sys\ntry:\n    os.kill(int(sys.argv[1]), 0); print('ok')\n"
            "except OSError as e:\n    print(e.errno)\n")
    me = str(os.getpid())
    for form in (Protection.SIGNAL_SCOPE, 4, "signal-scope"):
        assert sandboxes(disable=[form]).run([PY, "-c", code, me]).stdout == b"ok\n"
    assert sandboxes().run([PY, "-c", code, me]).stdout == b"1\n"


# ---- exceptions -------------------------------------------------------------------------------


@pytest.mark.pure
def test_exception_hierarchy():
    assert issubclass(SandboxError, SandlockError) and issubclass(SandboxError, ValueError)
    assert issubclass(PolicyError, SandboxError)
    assert not issubclass(sandlock.SandboxRuntimeError, ValueError)
    assert "PolicyError" in sandlock.__all__
    assert sandlock.exceptions.PolicyError is PolicyError


@pytest.mark.parametrize("kwargs,field", [
    ({"max_memory": "lots"}, "max_memory"),
    ({"fs_readable": "/usr"}, "fs_readable"),
    ({"max_cpu": 400}, "max_cpu"),
    ({"fs_mount": {"/w": "/a:ro"}}, "fs_mount"),
])
def test_invalid_configuration_is_a_value_error(kwargs, field):
    for cls in (PolicyError, SandboxError, ValueError, SandlockError):
        with pytest.raises(cls, match=field):
            Sandbox(**kwargs)


def test_valid_configuration_control():
    assert Sandbox(max_memory="64M", max_cpu=50).to_json() == {
        "limits": {"memory": "64M", "cpu": 50}}


# ---- parse_memory_size ------------------------------------------------------------------------


@pytest.mark.pure
@pytest.mark.parametrize("text,n", [
    ("512M", 512 << 20), ("512m", 512 << 20), ("1G", 1 << 30), ("1g", 1 << 30),
    ("100K", 100 << 10), ("100k", 100 << 10), ("2T", 2 << 40), ("4096", 4096), ("0", 0),
    (4096, 4096), ("16777215T", 16777215 << 40), ("1.5G", 3 << 29), (" 1G", 1 << 30),
    ("1G ", 1 << 30), ("1 G", 1 << 30), ("0.5k", 512), ("1.0009765625K", 1025),
])
def test_parse_memory_size(text, n):
    assert parse_memory_size(text) == n


@pytest.mark.pure
@pytest.mark.parametrize("bad", [
    "", "M", "12MB", "1.", ".5G", "1,5G", "-1", "1P", "0x10", "ten", "1e3", "١٢",
    "16777216T", "18446744073709551616", None, 1.5, True, -4, b"1G", [1],
])
def test_parse_memory_size_refuses(bad):
    with pytest.raises(ValueError):
        parse_memory_size(bad)


@pytest.mark.pure
def test_parse_memory_size_message():
    with pytest.raises(ValueError, match=r"^size '12MB': a number of bytes, or one with K, M, G "
                                         r"or T \(\"512M\", \"1G\"\)$"):
        parse_memory_size("12MB")


# ---- names of features not built --------------------------------------------------------------

LATER = ["Checkpoint", "SkippedFd"]


@pytest.mark.pure
@pytest.mark.parametrize("name", LATER)
def test_later_names_are_not_exported(name):
    with pytest.raises(ImportError):
        exec(f"from sandlock import {name}", {})
    assert name not in sandlock.__all__ and not hasattr(sandlock, name)


@pytest.mark.pure
@pytest.mark.parametrize("name", ["__version__", "ExitReason", "PolicyError", "StdioMode",
                                  "Process", "Protection", "SandboxError", "Gather",
                                  "Handler", "NotifAction", "HandlerCtx", "ExceptionPolicy"])
def test_reference_names_are_exported(name):
    exec(f"from sandlock import {name}", {})
    assert name in sandlock.__all__


@pytest.mark.pure
def test_all_is_importable():
    mod = importlib.import_module("sandlock")
    assert [n for n in mod.__all__ if not hasattr(mod, n)] == []


# ---- ExitReason for each way a run ends ------------------------------------------------------


def test_reason_exited(sandboxes):
    r = sandboxes().run(["sh", "-c", "exit 3"])
    assert (r.success, r.exit_code, r.signal, r.reason, r.error) == (
        False, 3, 0, ExitReason.EXITED, None)
    r = sandboxes().run(["true"])
    assert (r.success, r.exit_code, r.signal, r.reason) == (True, 0, 0, ExitReason.EXITED)


def test_reason_signaled(sandboxes):
    # The command kills itself: a signal sandlock did not send.
    r = sandboxes().run(["sh", "-c", "kill -TERM $$"])
    assert (r.success, r.exit_code, r.signal, r.reason, r.error) == (
        False, 143, 15, ExitReason.SIGNALED, "killed by SIGTERM")


def test_reason_timeout(sandboxes):
    r = sandboxes().run(["sleep", "5"], timeout=0.3)
    assert (r.success, r.exit_code, r.signal, r.reason) == (False, 124, 9, ExitReason.TIMEOUT)
    assert r.error == "timed out after 0.3 s"


def test_reason_killed_by_memory_limit(sandboxes):
    # The command grows past max_memory; sandlock kills it and says so.
    grow = "b = []\nwhile True:\n    b.append(bytearray(8 << 20))\n"
    r = sandboxes(max_memory="64M").run([PY, "-c", grow], timeout=30)
    assert (r.success, r.signal, r.reason) == (False, int(signal.SIGKILL), ExitReason.KILLED)
    assert re.fullmatch(r"killed \d+ \(python3\): memory limit 64M reached", r.error), r.error
    assert r.notices == [r.error]
    # Control: the same program under a larger limit, stopped early, exits by itself.
    stop = "b = []\nfor _ in range(2):\n    b.append(bytearray(8 << 20))\n"
    r = sandboxes(max_memory="256M").run([PY, "-c", stop], timeout=30)
    assert (r.success, r.reason, r.notices) == (True, ExitReason.EXITED, [])


def test_reason_killed_by_kill(sandboxes, unique_sleep):
    sb = sandboxes()
    sb.spawn(unique_sleep())
    sb.kill()
    r = sb.wait()
    assert (r.success, r.exit_code, r.signal, r.reason) == (False, 137, 9, ExitReason.KILLED)
    assert (r.error, r.notices) == ("killed by SIGKILL (kill() or `sandlock kill`)", [])
    # Control: a SIGKILL the command sends itself is SIGNALED.
    r = sb.run(["sh", "-c", "kill -KILL $$"])
    assert (r.exit_code, r.signal, r.reason, r.error) == (
        137, 9, ExitReason.SIGNALED, "killed by SIGKILL")


@pytest.mark.pure
def test_result_built_directly():
    from sandlock import Result

    r = Result(success=False, exit_code=137, signal=9, reason=ExitReason.KILLED)
    assert (r.reason, r.signal) == (ExitReason.KILLED, 9)
    assert Result(success=True).reason is ExitReason.EXITED
    assert Result(success=False, reason=3).reason is ExitReason.TIMEOUT


def test_reference_module_layout():
    # Code written for the reference imports these from these modules.
    from sandlock.exceptions import PolicyError as P, SandboxError as S  # noqa: F401
    from sandlock.sandbox import parse_memory_size as f  # noqa: F401

    assert pathlib.Path(sandlock.sandbox.__file__).name == "sandbox.py"
