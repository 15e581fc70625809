# SPDX-License-Identifier: LGPL-2.1-or-later
"""The SDK's plain types: the exception hierarchy (importable from sandlock and
sandlock.exceptions), parse_ports, the enums, and the COW change-set types (Change, Entry,
renames) with the reference's semantics."""

import pytest

import sandlock
import sandlock.exceptions
from sandlock import BranchAction, Change, Entry, Protection, parse_ports, renames


# ---- exceptions -----------------------------------------------------------------------------

HIERARCHY = {  # class name -> its parent, as the SDK reference draws the tree
    "SandlockError": "Exception",
    "SandboxError": "SandlockError",  # and ValueError (EXTRA_BASES)
    "PolicyError": "SandboxError",
    "SandboxRuntimeError": "SandlockError",
    "ForkError": "SandboxRuntimeError",
    "ChildError": "SandboxRuntimeError",
    "BranchError": "SandboxRuntimeError",
    "BranchConflictError": "BranchError",
    "ConfinementError": "SandboxRuntimeError",
    "LandlockUnavailableError": "ConfinementError",
    "SeccompError": "ConfinementError",
    "NotifError": "SeccompError",
    "MemoryProtectError": "SandlockError",
}

EXTRA_BASES = {"SandboxError": (ValueError,)}  # reference code catches ValueError for these


def cls(name):
    return Exception if name == "Exception" else getattr(sandlock.exceptions, name)


def ancestors(name):
    out = set()
    while name != "Exception":
        name = HIERARCHY[name]
        out.add(name)
    return out


@pytest.mark.pure
@pytest.mark.parametrize("name", sorted(HIERARCHY))
def test_exception_hierarchy(name):
    c = getattr(sandlock, name)
    assert c is getattr(sandlock.exceptions, name)  # importable from both, the same class
    assert c.__bases__ == (cls(HIERARCHY[name]),) + EXTRA_BASES.get(name, ())
    for other in HIERARCHY:
        want = other == name or other in ancestors(name)
        assert issubclass(c, cls(other)) == want, (name, other)


@pytest.mark.pure
def test_exceptions_exported():
    assert set(HIERARCHY) <= set(sandlock.__all__)
    assert set(HIERARCHY) == set(sandlock.exceptions.__all__)
    e = sandlock.ChildError("execve x: No such file or directory", step="execve")
    assert (e.step, str(e)) == ("execve", "execve x: No such file or directory")


# ---- parse_ports ----------------------------------------------------------------------------


def test_parse_ports_reference_example():
    assert parse_ports([80, "443", "8000-8005"]) == [80, 443, 8000, 8001, 8002, 8003, 8004, 8005]


def test_parse_ports_sorted_without_duplicates():
    assert parse_ports(["443,80", 80, "80", "1-3", 2]) == [1, 2, 3, 80, 443]
    assert parse_ports([]) == []


@pytest.mark.parametrize("spec", ["70000", "9005-9000", "abc", "", "-1", "*", None, 1.5, True,
                                  65536])
def test_parse_ports_bad_spec(spec):
    with pytest.raises(ValueError):
        parse_ports([80, spec])


# ---- enums ----------------------------------------------------------------------------------


@pytest.mark.pure
def test_branch_action_values():
    assert {a.name: a.value for a in BranchAction} == {
        "COMMIT": "commit", "ABORT": "abort", "KEEP": "keep", "DEFER": "defer"}


@pytest.mark.pure
def test_protection_members():
    assert [p.name for p in Protection] == [
        "FS_REFER", "FS_TRUNCATE", "NET_TCP", "FS_IOCTL_DEV", "SIGNAL_SCOPE",
        "ABSTRACT_UNIX_SOCKET_SCOPE"]


# ---- Change / Entry / renames ---------------------------------------------------------------

D1, D2 = b"\x01" * 32, b"\x02" * 32


def file(digest, size=3, mode=0o644):
    return Entry(kind="file", mode=mode, size=size, digest=digest, target=None)


@pytest.mark.pure
def test_change_kind_and_flags():
    added = Change("a.txt", None, file(D1))
    deleted = Change("d.txt", file(D1), None)
    modified = Change("m.txt", file(D1), file(D2))
    touched = Change("t.txt", file(D1, mode=0o600), file(D1))
    retyped = Change("x", file(D1), Entry("symlink", 0o777, 0, None, "target"))
    assert [c.kind for c in (added, deleted, modified, touched, retyped)] == list("ADMMM")
    assert [c.content_unchanged for c in (added, deleted, modified, touched, retyped)] == [
        False, False, False, True, False]
    assert [c.type_changed for c in (added, deleted, modified, touched, retyped)] == [
        False, False, False, False, True]
    link_a = Entry("symlink", 0o777, 0, None, "a")
    assert Change("l", link_a, Entry("symlink", 0o777, 0, None, "b")).content_unchanged is False
    assert Change("l", link_a, link_a).content_unchanged is True
    assert str(added) == "A a.txt"


@pytest.mark.pure
def test_entry_and_change_are_frozen():
    e = file(D1)
    with pytest.raises(AttributeError):
        e.size = 4
    with pytest.raises(AttributeError):
        Change("p", None, e).path = "q"
    assert file(D1) == file(D1) and hash(file(D1)) == hash(file(D1))


@pytest.mark.pure
def test_renames():
    changes = [
        Change("old.txt", file(D1), None), Change("new.txt", None, file(D1)),
        Change("gone.txt", file(D2), None),  # no added file with its digest
        Change("dir", Entry("dir", 0o755, 0, None, None), None),
        Change("mod.txt", file(D1), file(D2)),  # a modification pairs with nothing
    ]
    assert renames(changes) == [("old.txt", "new.txt")]
    assert renames([]) == []


@pytest.mark.pure
def test_renames_ambiguous_digest_is_left_unpaired():
    D3 = b"\x03" * 32
    changes = [Change("a", file(D1), None), Change("b", None, file(D1)),
               Change("c", None, file(D1)),  # two added files share D1
               Change("z", file(D3), None), Change("y", None, file(D3))]
    assert renames(changes) == [("z", "y")]
