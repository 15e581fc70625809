# SPDX-License-Identifier: LGPL-2.1-or-later
"""The copy-on-write workdir through the SDK: what each branch action leaves in the workdir and
in fs_storage, Result.changes against the bytes written, renames(), a deferred branch
(pending, upper_dir, commit(), abort(), a pending sandbox refusing to start), dry_run() and
max_disk. Every test runs against a real workdir under tmp_path, with a control."""

import gc
import glob
import hashlib
import os
import pathlib
import weakref

import pytest

from conftest import PY, SYSTEM_READ, wait_until
from sandlock import (
    BranchAction,
    BranchError,
    DryRunResult,
    Result,
    Sandbox,
    SandboxError,
    renames,
)

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")


def sha(data):
    return hashlib.sha256(data).digest()


def snapshot(root):
    """Every entry under @root: path -> (kind, mode, bytes or link target)."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = pathlib.Path(dirpath) / name
            st = p.lstat()
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = ("l", st.st_mode, os.readlink(p))
            elif p.is_dir():
                out[rel] = ("d", st.st_mode, None)
            else:
                out[rel] = ("f", st.st_mode, p.read_bytes())
    return out


@pytest.fixture
def wd(tmp_path):
    """A workdir with a file and a subdirectory holding one; its branch storage is beside it
    (tmp_path / "store")."""
    w = tmp_path / "work"
    (w / "sub").mkdir(parents=True)
    (w / "a.txt").write_bytes(b"hello\n")
    (w / "sub" / "b.txt").write_bytes(b"keep\n")
    (tmp_path / "store").mkdir()
    return w


def store(wd):
    return sorted(os.listdir(wd.parent / "store"))


@pytest.fixture
def cow(sandboxes, wd):
    """cow(**fields) -> a Sandbox over @wd (fs_storage beside it) running in @wd."""
    def make(**kw):
        return sandboxes(workdir=str(wd), fs_storage=str(wd.parent / "store"), cwd=str(wd), **kw)
    return make


def sh(sb, script, **kw):
    return sb.run(["/bin/sh", "-c", script], **kw)


# ---- the actions ---------------------------------------------------------------------------


def test_commit_lands_a_new_file_and_an_append(cow, sandboxes, wd):
    r = sh(cow(), "echo more >> a.txt && echo new > n.txt")
    assert (r.success, r.error, r.stderr) == (True, None, b"")
    assert (wd / "a.txt").read_bytes() == b"hello\nmore\n"
    assert (wd / "n.txt").read_bytes() == b"new\n"
    assert store(wd) == []  # the branch is gone once merged
    # Control: without a workdir (and no write grant) the same writes are refused.
    r = sandboxes(fs_readable=[str(wd)], cwd=str(wd)).run(
        ["/bin/sh", "-c", "echo again >> a.txt; echo x > m.txt"])
    assert b"Permission denied" in r.stderr and r.changes == []
    assert (wd / "a.txt").read_bytes() == b"hello\nmore\n" and not (wd / "m.txt").exists()


def test_abort_leaves_the_workdir_identical_while_the_run_saw_its_writes(cow, wd):
    before = snapshot(wd)
    r = sh(cow(on_exit=BranchAction.ABORT),
           "echo more >> a.txt; echo new > n.txt; rm sub/b.txt; mkdir d; cat a.txt n.txt; "
           "test -e sub/b.txt || echo gone")
    assert (r.success, r.stdout, r.error) == (True, b"hello\nmore\nnew\ngone\n", None)
    assert snapshot(wd) == before
    assert store(wd) == []
    assert [c.kind + " " + c.path for c in r.changes] == ["M a.txt", "A d", "A n.txt",
                                                          "D sub/b.txt"]


@pytest.mark.parametrize("status,on_error,landed", [
    (0, None, True),  # on_exit (COMMIT)
    (1, None, False),  # on_error (ABORT by default)
    (1, BranchAction.COMMIT, True),  # control: it is on_error that discards
])
def test_exit_status_picks_on_exit_or_on_error(cow, wd, status, on_error, landed):
    kw = {} if on_error is None else {"on_error": on_error}
    r = sh(cow(**kw), f"echo new > n.txt; exit {status}")
    assert (r.success, r.exit_code, r.error) == (status == 0, status, None)
    assert (wd / "n.txt").exists() is landed
    assert [c.path for c in r.changes] == ["n.txt"]  # listed either way
    assert store(wd) == []


def test_a_timeout_is_an_error_exit(cow, wd):
    r = sh(cow(), "echo new > n.txt; sleep 30", timeout=0.5)
    assert (r.success, r.exit_code, r.error) == (False, 124, "timed out after 0.5 s")
    assert not (wd / "n.txt").exists() and store(wd) == []


# ---- the change set ------------------------------------------------------------------------


def test_changes_kinds_paths_and_digests(cow, wd):
    r = sh(cow(), "printf 'hello\\nmore\\n' > a.txt; printf 'brand new' > n.txt; "
                  "rm sub/b.txt; ln -s a.txt link; mkdir d; chmod 600 n.txt")
    assert r.success, r.stderr
    got = {c.path: c for c in r.changes}
    assert sorted(got) == ["a.txt", "d", "link", "n.txt", "sub/b.txt"]
    assert {p: c.kind for p, c in got.items()} == {
        "a.txt": "M", "d": "A", "link": "A", "n.txt": "A", "sub/b.txt": "D"}
    a = got["a.txt"]
    assert a.before.digest == sha(b"hello\n") and a.before.size == 6
    assert a.after.digest == sha(b"hello\nmore\n") and a.after.size == 11
    assert (a.before.kind, a.content_unchanged, a.type_changed) == ("file", False, False)
    n = got["n.txt"]
    assert (n.before, n.after.kind, n.after.mode, n.after.size) == (None, "file", 0o600, 9)
    assert n.after.digest == sha(b"brand new") and n.after.target is None
    assert (got["link"].after.kind, got["link"].after.target) == ("symlink", "a.txt")
    assert got["link"].after.digest is None
    assert (got["d"].after.kind, got["d"].after.digest) == ("dir", None)
    b = got["sub/b.txt"]
    assert (b.after, b.before.digest) == (None, sha(b"keep\n"))
    assert r.changes == sorted(r.changes, key=lambda c: c.path)


def test_rewriting_the_same_bytes_is_not_a_change(cow, wd):
    r = sh(cow(), "echo hello > a.txt; echo x > n.txt; rm n.txt")
    assert r.success, r.stderr
    assert r.changes == []  # same entry before and after; n.txt came and went
    # Control: different bytes are a change.
    r = sh(cow(), "echo hullo > a.txt")
    assert [(c.kind, c.path) for c in r.changes] == [("M", "a.txt")]


def test_renames_pairs_a_moved_file(cow, wd):
    r = sh(cow(), "mv a.txt moved.txt")
    assert r.success, r.stderr
    assert sorted((c.kind, c.path) for c in r.changes) == [("A", "moved.txt"), ("D", "a.txt")]
    assert renames(r.changes) == [("a.txt", "moved.txt")]
    assert (wd / "moved.txt").read_bytes() == b"hello\n" and not (wd / "a.txt").exists()
    # Control: moved and changed on the way is a deletion and an addition, not a rename.
    r = sh(cow(), "mv moved.txt again.txt; echo more >> again.txt")
    assert sorted(c.kind for c in r.changes) == ["A", "D"]
    assert renames(r.changes) == []


def test_no_workdir_no_changes(sandboxes, box):
    r = sandboxes(fs_writable=[str(box)]).run(["/bin/sh", "-c", f"echo x > {box}/f"])
    assert (r.success, r.changes) == (True, [])
    assert (box / "f").read_bytes() == b"x\n"  # written for real: nothing to list


# ---- a deferred branch ---------------------------------------------------------------------


def test_defer_then_commit(cow, wd):
    before = snapshot(wd)
    sb = cow(on_exit=BranchAction.DEFER)
    assert (sb.pending, sb.upper_dir) == (False, None)
    r = sh(sb, "echo more >> a.txt; echo new > n.txt")
    assert r.success and [c.path for c in r.changes] == ["a.txt", "n.txt"]
    assert sb.pending is True
    upper = pathlib.Path(sb.upper_dir)
    assert upper.is_relative_to(wd.parent / "store")
    assert (upper / "a.txt").read_bytes() == b"hello\nmore\n"
    assert (upper / "n.txt").read_bytes() == b"new\n"
    assert snapshot(wd) == before  # nothing merged yet
    sb.commit()
    assert (sb.pending, sb.upper_dir) == (False, None)
    assert (wd / "a.txt").read_bytes() == b"hello\nmore\n"
    assert (wd / "n.txt").read_bytes() == b"new\n"
    assert store(wd) == [] and not upper.exists()
    with pytest.raises(BranchError, match="^commit: no branch is pending$"):
        sb.commit()  # decided once


def test_defer_then_abort(cow, wd):
    before = snapshot(wd)
    sb = cow(on_exit=BranchAction.DEFER)
    assert sh(sb, "echo more >> a.txt; rm sub/b.txt").success
    assert sb.pending and len(store(wd)) == 1
    sb.abort()
    assert (sb.pending, sb.upper_dir) == (False, None)
    assert snapshot(wd) == before and store(wd) == []
    with pytest.raises(BranchError, match="^abort: no branch is pending$"):
        sb.abort()


def test_defer_applies_to_on_exit_only(cow, wd):
    sb = cow(on_exit=BranchAction.DEFER)
    r = sh(sb, "echo new > n.txt; exit 3")
    assert r.exit_code == 3 and [c.path for c in r.changes] == ["n.txt"]
    assert sb.pending is False and store(wd) == []  # on_error (ABORT) applied
    assert not (wd / "n.txt").exists()


def test_a_pending_sandbox_refuses_to_start(cow, wd, box):
    sb = cow(on_exit=BranchAction.DEFER)
    assert sh(sb, "echo new > n.txt").success and sb.pending
    for start in (lambda: sb.run(["true"]), lambda: sb.spawn(["true"]),
                  lambda: sb.create(["true"]), lambda: sb.dry_run(["true"]),
                  lambda: sb.cmd(["true"]).run()):
        with pytest.raises(SandboxError, match="a branch is pending in this sandbox"):
            start()
    assert not sb.is_running and sb.pending
    # Control: decided, it runs again (and the next deferred run is pending in turn).
    sb.commit()
    r = sh(sb, "cat n.txt")
    assert (r.success, r.stdout, r.changes, sb.pending) == (True, b"new\n", [], True)
    sb.abort()


def test_leaving_the_with_block_keeps_an_undecided_branch(cow, wd):
    before = snapshot(wd)
    with cow(on_exit=BranchAction.DEFER) as sb:
        assert sh(sb, "echo new > n.txt").success and sb.pending
        upper = pathlib.Path(sb.upper_dir)
    assert sb.pending is False
    assert snapshot(wd) == before  # nothing merged without a decision
    assert len(store(wd)) == 1 and (upper / "n.txt").read_bytes() == b"new\n"
    assert sb.upper_dir == str(upper)  # where it was left
    with pytest.raises(BranchError):
        sb.commit()  # released: no longer this sandbox's to decide


def test_a_pending_sandbox_garbage_collected_keeps_its_branch(wd):
    def make():  # not through the fixtures, which hold on to what they make
        return Sandbox(fs_readable=SYSTEM_READ, workdir=str(wd),
                       fs_storage=str(wd.parent / "store"), cwd=str(wd),
                       on_exit=BranchAction.DEFER)

    before = snapshot(wd)
    sb = make()
    assert sh(sb, "echo new > n.txt").success and sb.pending
    upper = pathlib.Path(sb.upper_dir)
    ref = weakref.ref(sb)
    del sb
    gc.collect()
    assert ref() is None
    assert snapshot(wd) == before  # nothing merged without a decision
    assert (upper / "n.txt").read_bytes() == b"new\n" and store(wd) == [upper.parent.name]
    # Control: committed before it goes, it leaves no branch.
    sb = make()
    assert sh(sb, "echo new > m.txt").success
    sb.commit()
    del sb
    gc.collect()
    assert store(wd) == [upper.parent.name] and (wd / "m.txt").read_bytes() == b"new\n"


def test_commit_that_fails_leaves_the_branch_pending(cow, wd):
    sb = cow(on_exit=BranchAction.DEFER)
    assert sh(sb, "echo new > n.txt").success
    upper = sb.upper_dir
    moved = wd.parent / "moved"
    os.rename(wd, moved)
    with pytest.raises(BranchError, match=str(wd)):
        sb.commit()
    assert (sb.pending, sb.upper_dir) == (True, upper)
    assert (pathlib.Path(upper) / "n.txt").read_bytes() == b"new\n"
    # Control: with the workdir back, the same commit goes through.
    os.rename(moved, wd)
    sb.commit()
    assert (wd / "n.txt").read_bytes() == b"new\n" and store(wd) == []


def test_a_commit_that_fails_at_the_end_is_reported_in_the_result(cow, wd):
    sb = cow()
    sb.spawn(["/bin/sh", "-c", "echo new > n.txt; sleep 1"])
    # The write is in the branch once its upper holds n.txt: then the workdir goes away.
    found = wait_until(lambda: glob.glob(str(wd.parent / "store" / "*" / "upper" / "n.txt")))
    assert found, store(wd)
    moved = wd.parent / "moved"
    os.rename(wd, moved)
    r = sb.wait()
    assert (r.success, r.exit_code) == (True, 0)  # the command's own status
    assert r.error is not None and str(wd) in r.error
    assert [c.path for c in r.changes] == ["n.txt"]
    assert sb.pending is False and sb.upper_dir == os.path.dirname(found[0])
    assert not (moved / "n.txt").exists() and len(store(wd)) == 1  # kept on disk
    # Control: the same run with the workdir in place has no error.
    os.rename(moved, wd)
    r = sh(cow(), "echo new > n.txt")
    assert (r.success, r.error) == (True, None) and (wd / "n.txt").exists()


# ---- dry_run -------------------------------------------------------------------------------


def test_dry_run_lists_changes_and_leaves_the_tree(cow, wd):
    before = snapshot(wd)
    sb = cow()  # on_exit COMMIT: dry_run overrides it for its run only
    r = sb.dry_run(["/bin/sh", "-c", "echo new > n.txt; rm a.txt; cat n.txt"])
    assert isinstance(r, DryRunResult) and not isinstance(r, Result)
    assert (r.success, r.exit_code, r.stdout, r.error) == (True, 0, b"new\n", None)
    assert [(c.kind, c.path) for c in r.changes] == [("D", "a.txt"), ("A", "n.txt")]
    assert r.changes[1].after.digest == sha(b"new\n")
    assert snapshot(wd) == before and store(wd) == []
    # A failing command: the same.
    r = sb.dry_run(["/bin/sh", "-c", "echo new > n.txt; exit 2"])
    assert (r.success, r.exit_code, [c.path for c in r.changes]) == (False, 2, ["n.txt"])
    assert snapshot(wd) == before
    # Control: run() on the same sandbox commits.
    assert sh(sb, "echo new > n.txt").success and (wd / "n.txt").exists()


def test_dry_run_with_defer_leaves_nothing_pending(cow, wd):
    sb = cow(on_exit=BranchAction.DEFER, on_error=BranchAction.KEEP)
    r = sb.dry_run(["/bin/sh", "-c", "echo new > n.txt"])
    assert [c.path for c in r.changes] == ["n.txt"]
    assert (sb.pending, store(wd)) == (False, [])


def test_dry_run_needs_a_workdir(sandboxes):
    with pytest.raises(SandboxError, match="^dry_run: needs workdir"):
        sandboxes().dry_run(["true"])


def test_dry_run_of_a_missing_command(cow, wd):
    r = cow().dry_run(["/nonexistent/cmd"])
    assert (r.success, r.exit_code, r.changes) == (False, 127, [])
    assert "No such file" in r.error and store(wd) == []


# ---- max_disk ------------------------------------------------------------------------------


APPEND_4K = "with open('a.txt', 'ab') as f:\n    f.write(b'x' * 4096)\n"


def test_max_disk_refuses_growth_beyond_the_quota(cow, wd):
    sb = cow(max_disk="1K", on_exit=BranchAction.ABORT)
    r = sh(sb, "echo small > s.txt && cat s.txt")
    assert (r.success, r.stdout) == (True, b"small\n")
    r = sb.run([PY, "-c", APPEND_4K])
    assert not r.success and b"No space left on device" in r.stderr
    # Control: the same append without the quota.
    r = cow(on_exit=BranchAction.ABORT).run(
        [PY, "-c", APPEND_4K + "print(len(open('a.txt', 'rb').read()))"])
    assert (r.success, r.stdout.strip()) == (True, b"4102"), r.stderr


def test_keep_leaves_the_branch_and_says_where(cow, wd):
    before = snapshot(wd)
    sb = cow(on_exit=BranchAction.KEEP)
    r = sh(sb, "echo new > n.txt")
    assert (r.success, r.error, sb.pending) == (True, None, False)
    assert snapshot(wd) == before and len(store(wd)) == 1
    assert (pathlib.Path(sb.upper_dir) / "n.txt").read_bytes() == b"new\n"
    # Control: the next run of the same sandbox, aborted, leaves no upper_dir.
    sb.on_exit = BranchAction.ABORT
    assert sh(sb, "echo new > n.txt").success
    assert sb.upper_dir is None and len(store(wd)) == 1


# ---- only what the run made ------------------------------------------------------------------


def test_a_deferred_commit_refuses_entries_the_run_did_not_make(cow, wd):
    """An entry put in a deferred branch by someone else, or a file of its change set changed
    after the run, refuses the commit (BranchError naming it; the workdir untouched, the
    branch still pending). Control: the branch as the run left it commits what changes
    showed."""
    before = snapshot(wd)
    sb = cow(on_exit=BranchAction.DEFER)
    r = sh(sb, "echo new > n.txt && mkdir d && echo x > d/x")
    assert r.success and sb.pending
    assert [c.path for c in r.changes] == ["d", "d/x", "n.txt"]
    upper = pathlib.Path(sb.upper_dir)
    (upper / "evil.txt").write_bytes(b"not the run's\n")
    (upper / "d" / "evil").mkdir()
    with pytest.raises(BranchError, match=r"did not make.*d/evil, evil\.txt"):
        sb.commit()
    assert snapshot(wd) == before and sb.pending
    (upper / "evil.txt").unlink()
    (upper / "d" / "evil").rmdir()
    with open(upper / "n.txt", "ab") as f:  # a file the change set showed, changed since
        f.write(b"more\n")
    with pytest.raises(BranchError, match=r"n\.txt"):
        sb.commit()
    assert snapshot(wd) == before and sb.pending
    # Control: its bytes as the run left them are not enough (it is another version now);
    # aborted, and a run whose branch nobody touched commits what changes listed.
    sb.abort()
    assert snapshot(wd) == before and store(wd) == []
    sb = cow(on_exit=BranchAction.DEFER)
    r = sh(sb, "echo new > n.txt && mkdir d && echo x > d/x")
    sb.commit()
    assert (wd / "n.txt").read_bytes() == b"new\n" and (wd / "d" / "x").read_bytes() == b"x\n"
    assert set(snapshot(wd)) - set(before) == {c.path for c in r.changes}


def test_a_commit_at_the_end_refuses_an_entry_put_in_the_branch_during_the_run(cow, wd):
    """Control first: the run alone commits; then a file put in its upper layer while it runs
    (as a process outside the sandbox can) is never merged: the commit is refused, named in
    the result's error, the workdir untouched, the branch kept."""
    r = sh(cow(), "echo mine > m.txt")
    assert r.success and (wd / "m.txt").read_bytes() == b"mine\n" and store(wd) == []
    before = snapshot(wd)
    sb = cow()
    sb.spawn(["/bin/sh", "-c", "echo new > n.txt; sleep 1"])
    found = wait_until(lambda: glob.glob(str(wd.parent / "store" / "*" / "upper" / "n.txt")))
    assert found, store(wd)
    pathlib.Path(found[0]).with_name("evil.txt").write_bytes(b"x\n")
    r = sb.wait()
    assert r.exit_code == 0 and [c.path for c in r.changes] == ["n.txt"]
    assert "did not make" in str(r.error) and "evil.txt" in str(r.error), r.error
    assert snapshot(wd) == before and len(store(wd)) == 1
