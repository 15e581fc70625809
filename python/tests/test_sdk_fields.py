# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Sandbox fields and the core's schema name the same fields: every (section, key) the core
takes is a field of the dataclass and the other way round, each Python name is the core's name
of that same field, and every field is documented in help(Sandbox)."""

import ctypes
import dataclasses
import pydoc
import re
import textwrap
from ctypes import POINTER, byref, c_char_p, c_int, c_void_p

import pytest

from sandlock import PolicyError, Sandbox, _core, _fields, _ffi

pytestmark = pytest.mark.pure

# What the core takes that is not a Sandbox field: the command is the argument of run() / cmd().
COMMAND_KEYS = {("program", "exec"), ("program", "args")}
INIT_FIELDS = [f for f in dataclasses.fields(Sandbox) if f.init]


@pytest.fixture(scope="module")
def lib():
    lib = ctypes.CDLL(_ffi.library_path())
    lib.sandlock_policy_new.argtypes = [POINTER(c_void_p)]
    lib.sandlock_policy_free.argtypes = [c_void_p]
    lib.sandlock_policy_set_label.argtypes = [c_void_p, c_char_p, c_char_p]
    lib.sandlock_policy_set.argtypes = [c_void_p, c_char_p, c_char_p, POINTER(c_void_p)]
    lib.sandlock_error_message.argtypes = [c_void_p]
    lib.sandlock_error_message.restype = c_char_p
    lib.sandlock_error_free.argtypes = [c_void_p]
    lib.sandlock_field_supported.argtypes = [c_char_p]
    lib.sandlock_field_supported.restype = c_int
    return lib


def refusal(doc):
    with pytest.raises(PolicyError) as e:
        _core.Policy(doc)
    return str(e.value)


def core_schema():
    """{(section, key)} of the core, from its refusals of an unknown section and key, which
    list the allowed ones."""
    msg = refusal({"no such section": {}})
    sections = re.fullmatch(r"unknown section '[^']*'; sections: (.*)", msg).group(1).split(", ")
    keys = set()
    for section in sections:
        msg = refusal({section: {"no such key": 1}})
        allowed = re.fullmatch(rf"unknown key '[^']*' in {section}; allowed: (.*)", msg).group(1)
        keys |= {(section, k) for k in allowed.split(", ")}
    return keys


def python_schema():
    """{(section, key): Python name} of every Sandbox field the core takes."""
    out = {}
    for f in INIT_FIELDS:
        m = f.metadata
        if m["kind"] == "runtime":
            out[("runtime", f.name)] = f.name
        elif m["kind"] == "python" and f.name == "image":
            out[("runtime", "image")] = f.name  # the core knows it; the SDK refuses it itself
        elif m["kind"] in ("policy", "mount"):
            out.setdefault((m["section"], m["key"]), f.name)
    return out


def test_every_core_field_is_a_sandbox_field_and_back():
    core = core_schema()
    python = set(python_schema())
    assert core - COMMAND_KEYS - python == set()  # a core field the SDK lacks
    assert python - core == set()  # a Sandbox field the core does not take
    # Control: the scan reads the core's lists (a field with a key of its own, the command).
    assert {("filesystem", "read"), ("limits", "memory"), ("runtime", "name")} <= core
    assert COMMAND_KEYS <= core


def test_tables_are_the_dataclass_fields():
    # The tables the document is rendered from hold exactly the dataclass's fields, in its order,
    # with its defaults.
    declared = [f.name for f in INIT_FIELDS]
    tabled = ([n for n, *_ in _fields.POLICY_FIELDS] + [n for n, _ in _fields.MOUNT_FIELDS]
              + [n for n, *_ in _fields.RUNTIME_FIELDS] + [n for n, _ in _fields.PYTHON_FIELDS]
              + list(_fields.PYTHON_ONLY_UNSUPPORTED))
    assert sorted(tabled) == sorted(declared) and len(tabled) == len(set(tabled))
    order = [n for n in declared if n in {r[0] for r in _fields.POLICY_FIELDS}]
    assert [r[0] for r in _fields.POLICY_FIELDS] == order
    defaults = {f.name: f.default if f.default_factory is dataclasses.MISSING
                else f.default_factory() for f in INIT_FIELDS}
    for name, _, _, default, _ in _fields.POLICY_FIELDS:
        assert default == defaults[name], name
    for name, default, _ in _fields.RUNTIME_FIELDS:
        assert default == defaults[name], name
    assert _fields.PYTHON_FIELDS == [("on_event", None), ("log_denials", False),
                                     ("policy_fn", None), ("policy_fn_timeout", 5.0)]
    assert ("on_exit", "filesystem", "on_exit", _fields.BranchAction.COMMIT,
            _fields.action) in _fields.POLICY_FIELDS
    assert _fields.MOUNT_FIELDS == [("fs_mount", False), ("fs_mount_ro", True)]
    assert _fields.PYTHON_ONLY_UNSUPPORTED == ("image", "init_fn", "work_fn", "notif_policy")


def test_python_names_are_the_core_names_of_the_same_fields(lib):
    # A label given to the Python name shows in the error about section.key: the same field.
    # "" is refused by every field.
    for (section, key), name in python_schema().items():
        p = c_void_p()
        assert lib.sandlock_policy_new(byref(p)) == 0
        try:
            assert lib.sandlock_policy_set_label(p, name.encode(), b"LABEL") == 0, name
            err = c_void_p()
            assert lib.sandlock_policy_set(p, f"{section}.{key}".encode(), b"", byref(err)) < 0
            msg = lib.sandlock_error_message(err).decode()
            lib.sandlock_error_free(err)
        finally:
            lib.sandlock_policy_free(p)
        assert msg.startswith("LABEL: "), (name, section, key, msg)
    # Control: another field's label does not show.
    p = c_void_p()
    lib.sandlock_policy_new(byref(p))
    lib.sandlock_policy_set_label(p, b"fs_writable", b"LABEL")
    err = c_void_p()
    assert lib.sandlock_policy_set(p, b"filesystem.read", b"", byref(err)) < 0
    assert not lib.sandlock_error_message(err).decode().startswith("LABEL")
    lib.sandlock_error_free(err)
    lib.sandlock_policy_free(p)


def test_every_field_has_a_doc_of_at_most_three_lines():
    for f in INIT_FIELDS:
        doc = f.metadata["doc"]
        assert doc.strip() == doc and doc.endswith("."), f.name
        assert 1 <= len(textwrap.wrap(doc, _fields.DOC_WIDTH - 6)) <= 3, f.name
        assert not re.search(r"issue|#\d|the reference", doc, re.IGNORECASE), f.name


def test_not_supported_yet_is_said_where_the_core_says_it(lib):
    for f in INIT_FIELDS:
        said = "Not supported yet." in f.metadata["doc"]
        if f.metadata["kind"] == "python":
            assert said, f.name
        else:
            assert said == (lib.sandlock_field_supported(f.name.encode()) == 0), f.name


def test_help_shows_every_field_and_its_doc():
    text = pydoc.render_doc(Sandbox, renderer=pydoc.plaintext)
    flat = " ".join(re.sub(r"(?m)^ \| ", "", text).split())  # less the class body's margin
    for f in INIT_FIELDS:
        assert f"{f.name}: " in text, f.name
        assert " ".join(f.metadata["doc"].split()) in flat, f.name
    assert "fs_readable: Sequence[str] = ()  (profile key: read)" in text
    assert "on_exit: BranchAction = BranchAction.COMMIT\n" in Sandbox.__doc__
    assert "time_start: datetime | str | None = None\n" in Sandbox.__doc__
    assert "[limits]\n  max_memory: " in Sandbox.__doc__


def test_a_field_without_metadata_is_refused():
    @dataclasses.dataclass(kw_only=True)
    class Bad:
        ok: int | None = _fields.runtime(doc="Fine.")
        plain: int = 0

    saved = (list(_fields.POLICY_FIELDS), list(_fields.RUNTIME_FIELDS),
             _fields.PYTHON_ONLY_UNSUPPORTED)
    with pytest.raises(TypeError, match=r"Bad.plain: declared without"):
        _fields.schema(Bad)

    @dataclasses.dataclass(kw_only=True)
    class Other:
        ok: int | None = _fields.runtime(doc="Fine.")

    with pytest.raises(TypeError, match=r"Other: the field tables are already"):
        _fields.schema(Other)
    assert saved == (_fields.POLICY_FIELDS, _fields.RUNTIME_FIELDS,
                     _fields.PYTHON_ONLY_UNSUPPORTED)
