# SPDX-License-Identifier: LGPL-2.1-or-later
"""Filesystem grants (Landlock): read grants, single-file grants, write grants and what they
allow. Each test shows the action working with the grant (or outside) and failing without it."""

import errno
import os

import pytest

from conftest import PRELUDE, PY, SYSTEM_READ, py_inside, result_json, run


def test_read_grant_etc_group():
    with open("/etc/group", "rb") as f:
        content = f.read()
    denied = run(*SYSTEM_READ, "--", "cat", "/etc/group", timeout=30)
    assert denied.returncode == 1
    assert denied.stdout == b""
    assert b"cat: /etc/group: Permission denied" in denied.stderr

    allowed = run(*SYSTEM_READ, "-r", "/etc", "--", "cat", "/etc/group", timeout=30)
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout == content


def test_read_denied_errno_is_eacces(tmp_path):
    f = tmp_path / "secret"
    f.write_bytes(b"top secret\n")
    code = f"""
try:
    out(["ok", open({str(f)!r}, "rb").read().decode()])
except OSError as e:
    out(["err", e.errno])
"""
    assert result_json(py_inside(code, "-r", str(tmp_path))) == ["ok", "top secret\n"]
    assert result_json(py_inside(code)) == ["err", errno.EACCES]


def test_single_file_read_grant(tmp_path):
    granted = tmp_path / "granted.txt"
    sibling = tmp_path / "sibling.txt"
    granted.write_bytes(b"granted content\n")
    sibling.write_bytes(b"sibling content\n")

    # Control: a grant on the directory lets both be read.
    both = run(*SYSTEM_READ, "-r", str(tmp_path), "--", "cat", str(granted), str(sibling),
               timeout=30)
    assert both.returncode == 0, both.stderr
    assert both.stdout == b"granted content\nsibling content\n"

    one = run(*SYSTEM_READ, "-r", str(granted), "--", "cat", str(granted), timeout=30)
    assert one.returncode == 0, one.stderr
    assert one.stdout == b"granted content\n"

    other = run(*SYSTEM_READ, "-r", str(granted), "--", "cat", str(sibling), timeout=30)
    assert other.returncode == 1
    assert other.stdout == b""
    assert f"cat: {sibling}: Permission denied".encode() in other.stderr


def test_write_outside_grant_creates_nothing(tmp_path, sandbox_dir):
    outside = tmp_path / "outside.txt"
    inside = sandbox_dir / "inside.txt"
    code = """
import sys
res = []
for path in sys.argv[1:]:
    try:
        with open(path, "w") as f:
            f.write("written by the sandbox\\n")
        res.append("ok")
    except OSError as e:
        res.append(e.errno)
out(res)
"""
    # tmp_path itself is not granted; only sandbox_dir (its child) is writable.
    r = run(*SYSTEM_READ, "-w", str(sandbox_dir), "--", PY, "-c", PRELUDE + code,
            str(outside), str(inside), timeout=30)
    assert result_json(r) == [errno.EACCES, "ok"]
    assert not outside.exists()
    assert inside.read_text() == "written by the sandbox\n"


def test_shell_redirect_outside_grant(tmp_path, sandbox_dir):
    target = tmp_path / "f.txt"
    denied = run(*SYSTEM_READ, "--", "sh", "-c", f"echo hi > {target}", timeout=30)
    assert denied.returncode != 0
    assert b"Permission denied" in denied.stderr
    assert not target.exists()

    ok_target = sandbox_dir / "f.txt"
    allowed = run(*SYSTEM_READ, "-w", str(sandbox_dir), "--", "sh", "-c",
                  f"echo hi > {ok_target}", timeout=30)
    assert allowed.returncode == 0, allowed.stderr
    assert ok_target.read_bytes() == b"hi\n"


WRITE_OPS = """
d = sys.argv[1]
res = {}
def attempt(name, fn):
    try:
        v = fn()
        res[name] = "ok" if v is None else v
    except OSError as e:
        res[name] = e.errno
def create():
    with open(os.path.join(d, "new.txt"), "w") as f:
        f.write("hello world")
attempt("create", create)
attempt("rename", lambda: os.rename(os.path.join(d, "old.txt"), os.path.join(d, "renamed.txt")))
attempt("truncate", lambda: os.truncate(os.path.join(d, "trunc.txt"), 2))
p = lambda name: os.path.join(d, name)
attempt("o_trunc", lambda: os.close(os.open(p("otrunc.txt"), os.O_WRONLY | os.O_TRUNC)))
attempt("remove", lambda: os.unlink(os.path.join(d, "gone.txt")))
attempt("mkdir", lambda: os.mkdir(os.path.join(d, "sub")))
attempt("rmdir", lambda: os.rmdir(os.path.join(d, "emptydir")))
out(res)
"""


def _prepare(d):
    (d / "old.txt").write_text("old")
    (d / "trunc.txt").write_text("truncate me")
    (d / "otrunc.txt").write_text("truncate me too")
    (d / "gone.txt").write_text("remove me")
    (d / "emptydir").mkdir()


def _ops(flag, d):
    return run(*SYSTEM_READ, flag, str(d), "--", PY, "-c", PRELUDE + WRITE_OPS,
               str(d), timeout=30)


def test_write_grant_allows_create_remove_rename_truncate(sandbox_dir):
    _prepare(sandbox_dir)
    res = result_json(_ops("-w", sandbox_dir))
    assert res == {k: "ok" for k in
                   ("create", "rename", "truncate", "o_trunc", "remove", "mkdir", "rmdir")}
    assert (sandbox_dir / "new.txt").read_text() == "hello world"
    assert not (sandbox_dir / "old.txt").exists()
    assert (sandbox_dir / "renamed.txt").read_text() == "old"
    assert (sandbox_dir / "trunc.txt").read_text() == "tr"
    assert (sandbox_dir / "otrunc.txt").read_text() == ""
    assert not (sandbox_dir / "gone.txt").exists()
    assert (sandbox_dir / "sub").is_dir()
    assert not (sandbox_dir / "emptydir").exists()


def test_read_grant_refuses_create_remove_rename_truncate(sandbox_dir):
    _prepare(sandbox_dir)
    res = result_json(_ops("-r", sandbox_dir))
    assert res == {k: errno.EACCES for k in
                   ("create", "rename", "truncate", "o_trunc", "remove", "mkdir", "rmdir")}
    # Nothing changed.
    assert sorted(p.name for p in sandbox_dir.iterdir()) == \
        ["emptydir", "gone.txt", "old.txt", "otrunc.txt", "trunc.txt"]
    assert (sandbox_dir / "trunc.txt").read_text() == "truncate me"
    assert (sandbox_dir / "otrunc.txt").read_text() == "truncate me too"


RENAME_LINK = """
import sys
op, src, dst = sys.argv[1:4]
try:
    (os.rename if op == "rename" else os.link)(src, dst)
    out(0)
except OSError as e:
    out(e.errno)
"""


def fs_op(op, src, dst, *flags):
    return result_json(run(*SYSTEM_READ, *flags, "--", PY, "-c", PRELUDE + RENAME_LINK, op,
                           str(src), str(dst), timeout=30))


def test_rename_between_two_write_grants(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "f").write_text("moving")
    assert fs_op("rename", a / "f", b / "f", "-w", str(a), "-w", str(b)) == 0
    assert (b / "f").read_text() == "moving"
    assert not (a / "f").exists()


def test_rename_into_read_only_grant_refused(tmp_path):
    a, ro = tmp_path / "a", tmp_path / "ro"
    a.mkdir()
    ro.mkdir()
    (a / "f").write_text("stay")
    (ro / "r").write_text("read only")
    assert fs_op("rename", a / "f", ro / "f", "-w", str(a), "-r", str(ro)) == errno.EACCES
    assert fs_op("rename", ro / "r", a / "r", "-w", str(a), "-r", str(ro)) == errno.EACCES
    assert (a / "f").read_text() == "stay"
    assert (ro / "r").read_text() == "read only"
    assert not (ro / "f").exists() and not (a / "r").exists()


def test_hardlink_cannot_gain_write_access(tmp_path):
    """FsRefer: linking a read-only file into a writable directory would make it writable."""
    a, ro = tmp_path / "a", tmp_path / "ro"
    a.mkdir()
    ro.mkdir()
    (ro / "r").write_text("read only")
    # Control: outside the link works (same filesystem, same owner).
    os.link(ro / "r", tmp_path / "control")
    assert fs_op("link", ro / "r", a / "h", "-w", str(a), "-r", str(ro)) == errno.EXDEV
    assert not (a / "h").exists()


def test_fs_refer_disabled_refuses_every_reparenting(tmp_path):
    # Without the refer right handled, Landlock refuses any cross-directory rename (EXDEV),
    # even between two write grants: disabling the protection opens nothing up.
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "f").write_text("x")
    assert fs_op("rename", a / "f", b / "f", "-w", str(a), "-w", str(b), "--disable",
                 "fs-refer") == errno.EXDEV
    assert (a / "f").exists()
    # Within one directory a rename is not a reparenting and still works.
    assert fs_op("rename", a / "f", a / "g", "-w", str(a), "--disable", "fs-refer") == 0


def test_single_file_write_grant(tmp_path):
    granted = tmp_path / "granted.txt"
    sibling = tmp_path / "sibling.txt"
    granted.write_text("old")
    sibling.write_text("sibling")
    code = """
import sys
res = []
for path in sys.argv[1:]:
    try:
        with open(path, "w") as f:
            f.write("new")
        res.append(0)
    except OSError as e:
        res.append(e.errno)
out(res)
"""
    new = tmp_path / "new.txt"
    r = run(*SYSTEM_READ, "-w", str(granted), "--", PY, "-c", PRELUDE + code, str(granted),
            str(sibling), str(new), timeout=30)
    assert result_json(r) == [0, errno.EACCES, errno.EACCES]
    assert granted.read_text() == "new"
    assert sibling.read_text() == "sibling"
    assert not new.exists()


@pytest.mark.parametrize("flag,key", [("-r", "--fs-read"), ("-w", "--fs-write")])
def test_missing_grant_path_is_policy_error(tmp_path, flag, key):
    missing = tmp_path / "missing"
    r = run(*SYSTEM_READ, flag, str(missing), "--", "true", timeout=30)
    assert r.returncode == 1
    assert r.stderr.decode().splitlines() == \
        [f"sandlock: {key}: {missing}: No such file or directory"]
    missing.mkdir()
    assert run(*SYSTEM_READ, flag, str(missing), "--", "true", timeout=30).returncode == 0
