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


def c_layout(tmp_path, ctype, fields):
    """{"size": sizeof(@ctype), field: offsetof(@ctype, field)...} as the C compiler says."""
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler (build-essential) is needed"
    prints = "".join(f'printf("{f} %zu\\n", offsetof({ctype}, {f}));' for f in fields)
    src = tmp_path / "layout.c"
    src.write_text("#include <stddef.h>\n#include <stdio.h>\n#include \"sandlock.h\"\n"
                   f"int main(void) {{ printf(\"size %zu\\n\", sizeof({ctype}));"
                   f"{prints} return 0; }}\n")
    exe = tmp_path / "layout"
    subprocess.run([cc, "-I", str(ROOT / "include"), "-o", str(exe), str(src)], check=True)
    return dict(line.split() for line in subprocess.run([str(exe)], capture_output=True,
                                                         text=True, check=True).stdout.splitlines())


def py_layout(struct):
    out = {"size": str(ctypes.sizeof(struct))}
    out.update({f: str(getattr(struct, f).offset) for f, _ in struct._fields_})
    return out


def test_spawn_opts_layout_matches_c(tmp_path):
    assert py_layout(_ffi.SpawnOpts) == c_layout(tmp_path, "sandlock_spawn_opts_t", FIELDS)


def test_entry_layout_matches_c(tmp_path):
    fields = [name for name, _ in _ffi.Entry._fields_]
    c = c_layout(tmp_path, "sandlock_entry_t", fields)
    assert py_layout(_ffi.Entry) == c

    class Packed(ctypes.Structure):  # control: the same fields without the C padding differ
        _pack_ = 1
        _fields_ = _ffi.Entry._fields_

    assert py_layout(Packed) != c
