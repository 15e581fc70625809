# SPDX-License-Identifier: LGPL-2.1-or-later
"""The ctypes bindings agree with the C header: every bound function is declared there, and
SpawnOpts has the C struct's size and offsets (compiled and printed by the C compiler)."""

import ctypes
import pathlib
import re
import shutil
import subprocess

import pytest

from sandlock import _ffi

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEADER = ROOT / "include" / "sandlock.h"
FIELDS = [name for name, _ in _ffi.SpawnOpts._fields_]

pytestmark = pytest.mark.pure


def test_every_binding_is_declared_in_the_header():
    declared = set(re.findall(r"\b(sandlock_[a-z0-9_]+)\(", HEADER.read_text()))
    assert set(_ffi._SIGNATURES) - declared == set()
    # Control: the scan does find the header's functions.
    assert {"sandlock_spawn", "sandlock_policy_load_json"} <= declared


def test_every_binding_resolves_in_the_library():
    lib = ctypes.CDLL(_ffi.library_path())
    missing = [n for n in _ffi._SIGNATURES if not hasattr(lib, n)]
    assert missing == []
    assert not hasattr(lib, "plan_build")  # control: an internal symbol is not exported


def test_spawn_opts_layout_matches_c(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler (build-essential) is needed"
    prints = "".join(
        f'printf("{f} %zu\\n", offsetof(sandlock_spawn_opts_t, {f}));' for f in FIELDS)
    src = tmp_path / "layout.c"
    src.write_text("#include <stddef.h>\n#include <stdio.h>\n#include \"sandlock.h\"\n"
                   "int main(void) { printf(\"size %zu\\n\", sizeof(sandlock_spawn_opts_t));"
                   f"{prints} return 0; }}\n")
    exe = tmp_path / "layout"
    subprocess.run([cc, "-I", str(ROOT / "include"), "-o", str(exe), str(src)], check=True)
    c = dict(line.split() for line in subprocess.run([str(exe)], capture_output=True,
                                                      text=True, check=True).stdout.splitlines())
    py = {"size": str(ctypes.sizeof(_ffi.SpawnOpts))}
    py.update({f: str(getattr(_ffi.SpawnOpts, f).offset) for f in FIELDS})
    assert py == c
