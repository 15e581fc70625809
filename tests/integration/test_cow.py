# SPDX-License-Identifier: LGPL-2.1-or-later
"""The copy-on-write workdir through the CLI: reads see the branch, writes never reach the
workdir until a commit, and each action (commit, abort, keep, dry run) leaves exactly what it
says. Every test against a real workdir under tmp_path, with a control."""

import errno
import hashlib
import json
import os
import pathlib
import shutil
import signal
import stat
import struct
import subprocess
import tempfile
import threading

import pytest

from conftest import PY, PRELUDE, SANDLOCK, SYSTEM_READ, require, result_json, run


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
            elif p.is_file():
                out[rel] = ("f", st.st_mode, p.read_bytes())
            else:
                out[rel] = ("o", st.st_mode, None)
    return out


@pytest.fixture
def wd(tmp_path):
    """A workdir with a file, a subdirectory holding one, and a branch storage beside it."""
    w = tmp_path / "work"
    (w / "sub").mkdir(parents=True)
    (w / "a.txt").write_text("hello\n")
    (w / "sub" / "b.txt").write_text("keep\n")
    (tmp_path / "store").mkdir()
    return w


def snapshot_meta(root):
    """Every entry under @root: path -> (mode, size, mtime), for trees too large to read."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            st = (pathlib.Path(dirpath) / name).lstat()
            out[name] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


def cow_flags(wd, *more):
    return [*SYSTEM_READ, "--workdir", str(wd), "--fs-storage", str(wd.parent / "store"),
            *more]


def sh(wd, script, *more, **kw):
    """`sh -c SCRIPT` in the workdir's sandbox, started in the workdir."""
    return run(*cow_flags(wd, *more), "--cwd", str(wd), "--", "/bin/sh", "-c", script, **kw)


def py(wd, code, *more, **kw):
    return run(*cow_flags(wd, *more), "--cwd", str(wd), "--", PY, "-c", PRELUDE + code, **kw)


def store(wd):
    return sorted(os.listdir(wd.parent / "store"))


def test_abort_leaves_workdir_identical_while_the_run_saw_its_writes(wd):
    before = snapshot(wd)
    r = sh(wd, "echo more >> a.txt; echo new > n.txt; rm sub/b.txt; mkdir d; "
               "cat a.txt n.txt; ls sub; test -e sub/b.txt || echo gone", "--on-exit", "abort")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"hello\nmore\nnew\ngone\n"  # the run read its own changes
    assert snapshot(wd) == before  # nothing reached the workdir
    assert store(wd) == []  # and the branch is gone
    # Control: the same script with the workdir writable for real changes it.
    r = run(*SYSTEM_READ, "-w", str(wd), "--cwd", str(wd), "--", "/bin/sh", "-c",
            "echo more >> a.txt")
    assert r.returncode == 0 and (wd / "a.txt").read_text() == "hello\nmore\n"


def test_commit_lands_appends_new_files_and_deletions(wd):
    r = sh(wd, "echo more >> a.txt && echo new > n.txt && mkdir -p d/e && echo x > d/e/f && "
               "rm sub/b.txt && ln -s a.txt link && chmod 600 n.txt")
    assert r.returncode == 0, r.stderr
    assert (wd / "a.txt").read_text() == "hello\nmore\n"
    assert (wd / "n.txt").read_text() == "new\n"
    assert (wd / "n.txt").stat().st_mode & 0o777 == 0o600
    assert (wd / "d" / "e" / "f").read_text() == "x\n"
    assert os.readlink(wd / "link") == "a.txt"
    assert not (wd / "sub" / "b.txt").exists() and (wd / "sub").is_dir()
    assert store(wd) == []


def test_exit_status_picks_on_exit_or_on_error(wd):
    # Exit 1: on_error (abort by default): nothing lands.
    r = sh(wd, "echo x > failed.txt; exit 1")
    assert r.returncode == 1
    assert not (wd / "failed.txt").exists() and store(wd) == []
    # on_error=commit: the same failure lands.
    r = sh(wd, "echo x > failed.txt; exit 1", "--on-error", "commit")
    assert r.returncode == 1 and (wd / "failed.txt").read_text() == "x\n"
    # Exit 0 with on_exit=abort: nothing lands.
    r = sh(wd, "echo y > ok.txt", "--on-exit", "abort")
    assert r.returncode == 0 and not (wd / "ok.txt").exists()
    # A timeout is a failure: aborted.
    r = sh(wd, "echo z > slow.txt; sleep 30", "--timeout", "1")
    assert r.returncode == 124 and not (wd / "slow.txt").exists() and store(wd) == []


def test_deleted_file_cannot_be_read_inside_and_nothing_leaks(wd):
    r = py(wd, """
os.unlink("a.txt")
res = {}
for name in ("a.txt", os.path.abspath("a.txt")):
    try:
        open(name).read(); res[name] = 0
    except OSError as e:
        res[name] = e.errno
res["listed"] = sorted(os.listdir("."))
res["stat"] = os.path.exists("a.txt")
out(res)
""", "--on-exit", "abort")
    res = result_json(r)
    assert res[str(wd / "a.txt")] == res["a.txt"] == 2  # ENOENT by both spellings
    assert res["listed"] == ["sub"] and res["stat"] is False
    assert (wd / "a.txt").read_text() == "hello\n"  # abort: still there


def test_rm_r_and_mv_of_a_tree_then_commit(wd):
    (wd / "tree" / "deep").mkdir(parents=True)
    (wd / "tree" / "deep" / "x").write_text("x\n")
    (wd / "tree" / "y").write_text("y\n")
    r = sh(wd, "mv tree tree2 && ls -R tree2 && rm -r sub && test ! -e tree && test ! -e sub")
    assert r.returncode == 0, r.stderr
    assert b"deep" in r.stdout and b"y" in r.stdout
    assert not (wd / "tree").exists() and not (wd / "sub").exists()
    assert (wd / "tree2" / "deep" / "x").read_text() == "x\n"
    assert (wd / "tree2" / "y").read_text() == "y\n"


def test_o_excl_over_both_layers(wd):
    r = py(wd, """
res = {}
def excl(name):
    try:
        os.close(os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY)); return 0
    except OSError as e:
        return e.errno
res["lower"] = excl("a.txt")
open("up.txt", "w").write("u")
res["upper"] = excl("up.txt")
res["new"] = excl("fresh.txt")
os.unlink("sub/b.txt")
res["recreated"] = excl("sub/b.txt")
out(res)
""", "--on-exit", "abort")
    assert result_json(r) == {"lower": 17, "upper": 17, "new": 0, "recreated": 0}


def test_rmdir_and_unlink_errnos_over_both_layers(wd):
    (wd / "empty").mkdir()
    r = py(wd, """
res = {}
def err(f, *a):
    try:
        f(*a); return 0
    except OSError as e:
        return e.errno
res["rmdir_nonempty_lower"] = err(os.rmdir, "sub")
os.mkdir("newdir"); open("newdir/f", "w").close()
res["rmdir_nonempty_upper"] = err(os.rmdir, "newdir")
res["unlink_dir"] = err(os.unlink, "sub")
res["rmdir_file"] = err(os.rmdir, "a.txt")
res["unlink_missing"] = err(os.unlink, "nope")
os.unlink("sub/b.txt")
res["rmdir_emptied"] = err(os.rmdir, "sub")
res["rmdir_empty_lower"] = err(os.rmdir, "empty")
res["mkdir_existing"] = err(os.mkdir, "a.txt")
out(res)
""", "--on-exit", "abort")
    assert result_json(r) == {
        "rmdir_nonempty_lower": 39, "rmdir_nonempty_upper": 39, "unlink_dir": 21,
        "rmdir_file": 20, "unlink_missing": 2, "rmdir_emptied": 0, "rmdir_empty_lower": 0,
        "mkdir_existing": 17}
    assert (wd / "sub" / "b.txt").exists() and (wd / "empty").is_dir()


def test_stat_readlink_access_and_listing_of_branch_entries(wd):
    r = py(wd, """
open("n.txt", "w").write("12345")
os.symlink("n.txt", "ln")
res = {"size": os.stat("n.txt").st_size, "lsize": os.lstat("ln").st_size,
       "target": os.readlink("ln"), "via": open("ln").read(),
       "w": os.access("a.txt", os.W_OK), "missing": os.access("nope", os.F_OK),
       "list": sorted(os.listdir("."))}
out(res)
""", "--on-exit", "abort")
    assert result_json(r) == {"size": 5, "lsize": 5, "target": "n.txt", "via": "12345",
                              "w": True, "missing": False,
                              "list": ["a.txt", "ln", "n.txt", "sub"]}
    # statx (coreutils stat) on a file made in the run.
    r = sh(wd, "printf abc > s.txt && stat -c %s s.txt", "--on-exit", "abort")
    assert r.returncode == 0 and r.stdout == b"3\n"


def test_exec_of_a_workdir_program_and_of_one_written_in_the_run(wd):
    (wd / "prog").write_bytes(pathlib.Path("/bin/true").read_bytes())
    (wd / "prog").chmod(0o755)
    before = snapshot(wd)
    r = sh(wd, "./prog && echo ran", "--on-exit", "abort")
    assert r.returncode == 0 and r.stdout == b"ran\n"  # the workdir's own program runs
    # Copied in the run, at a new name (also in a new directory): runs.
    r = sh(wd, "cp /bin/echo myecho && ./myecho one && mkdir bin && cp /bin/echo bin/e && "
               "bin/e two", "--on-exit", "abort")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"one\ntwo\n"
    assert snapshot(wd) == before and store(wd) == []  # its stand-in link is gone
    # Replacing a program of the workdir (prog is /bin/true there): the run's runs, under
    # any spelling of its name (a path search too), a script with its interpreter; the
    # stand-in it runs through is not listed, and the workdir is untouched after.
    r = sh(wd, "cp /bin/false prog; ./prog; echo $?; $PWD/prog; echo $?; PATH=$PWD prog; "
               "echo $?; printf '#!/bin/sh\\necho script\\n' > prog; ./prog; ls -a",
           "--on-exit", "abort")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"1\n1\n1\nscript\n.\n..\na.txt\nprog\nsub\n", r.stdout
    assert snapshot(wd) == before and store(wd) == []
    # Control: the workdir's own program, unreplaced, is /bin/true.
    r = sh(wd, "./prog; echo $?", "--on-exit", "abort")
    assert r.stdout == b"0\n"
    # A name ending in a symlink to the replaced program: not run (EACCES), never the old one.
    r = py(wd, """
import shutil
shutil.copy("/bin/false", "prog")
os.symlink("prog", "link")
try:
    os.execv("./link", ["link"])
except OSError as e:
    out(e.errno)
""", "--on-exit", "abort")
    assert result_json(r) == 13
    # Committed, the copy is the workdir's and runs next time.
    r = sh(wd, "cp /bin/echo myecho")
    assert r.returncode == 0 and os.access(wd / "myecho", os.X_OK)
    r = sh(wd, "./myecho three", "--on-exit", "abort")
    assert r.stdout == b"three\n"


def host_steps(wd, code, *steps, on_exit="abort"):
    """Run @code (PRELUDE'd) in the workdir's sandbox; each time it prints "ready", the next of
    @steps runs on the host, then the run goes on. Returns the run's last output line."""
    p = subprocess.Popen([SANDLOCK, "run", *cow_flags(wd, "--on-exit", on_exit), "--cwd",
                          str(wd), "--", PY, "-c", PRELUDE + code],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for step in steps:
        assert p.stdout.readline() == b"ready\n"
        step()
        p.stdin.write(b"go\n")
        p.stdin.flush()
    outp, _ = p.communicate(timeout=30)
    assert p.returncode == 0
    return json.loads(outp.decode().splitlines()[-1])


def set_id_files(root):
    return [str(p) for p in pathlib.Path(root).rglob("*")
            if not p.is_symlink() and p.stat().st_mode & (stat.S_ISUID | stat.S_ISGID)]


def test_exec_links_are_owner_only_and_never_set_id(wd):
    """What an exec of a program made in the run puts in the workdir (a link to it, and the
    directories on the way) is reachable by its owner only and never runs with other rights:
    a directory made 0777 in the run stands there as 0700, a program given a set-user-ID bit
    is taken out first, and one made set-ID is not run (EACCES)."""
    before = snapshot(wd)
    seen = {}
    code = """
import shutil, stat, subprocess
os.mkdir("pub"); os.chmod("pub", 0o777)
for name in ("t", "u", "v", "x"):
    shutil.copy("/bin/true", "pub/" + name); os.chmod("pub/" + name, 0o755)
    subprocess.run(["pub/" + name], check=True)  # linked into the workdir to be run
print("ready", flush=True); sys.stdin.readline()
os.chmod("pub/t", 0o4755)  # by name
fd = os.open("pub/u", os.O_WRONLY); os.fchmod(fd, 0o2755); os.close(fd)  # by descriptor
fd = os.open("pub/v", os.O_RDONLY)  # by the branch's own path, as another spelling tells it
os.chmod(os.readlink(f"/proc/{os.getpid()}/fd/{fd}"), 0o4755); os.close(fd)
fd = os.open("pub/x", os.O_RDONLY)  # fchmodat2(fd, "", AT_EMPTY_PATH)
kept = ctypes.create_string_buffer(b"")
assert sc(452, fd, ctypes.addressof(kept), 0o4755, 0x1000) == [0, 0]; os.close(fd)
print("ready", flush=True); sys.stdin.readline()
res = {"pub": oct(os.stat("pub").st_mode & 0o7777), "t": oct(os.stat("pub/t").st_mode & 0o7777)}
shutil.copy("/bin/true", "pub/g"); os.chmod("pub/g", 0o2744)  # an ACL could give group x
for name in ("t", "u", "v", "x", "g"):
    try:
        subprocess.run(["pub/" + name]); res[name + "_ran"] = 0
    except OSError as e:
        res[name + "_ran"] = e.errno
out(res)
"""

    def linked():  # control: the links are there, the directory owner-only
        seen["pub"] = (wd / "pub").stat().st_mode & 0o7777
        seen["links"] = sorted(os.listdir(wd / "pub"))
        seen["set_id"] = set_id_files(wd)

    def taken_out():
        seen["after_chmod"] = sorted(os.listdir(wd / "pub"))
        seen["set_id_after"] = set_id_files(wd)

    got = host_steps(wd, code, linked, taken_out)
    assert seen["pub"] == 0o700 and seen["links"] == ["t", "u", "v", "x"]
    assert seen["set_id"] == []
    assert seen["after_chmod"] == [] and seen["set_id_after"] == []
    # Inside, the run's own modes; its set-ID programs are not run.
    assert got == {"pub": "0o777", "t": "0o4755", "t_ran": errno.EACCES, "u_ran": errno.EACCES,
                   "v_ran": errno.EACCES, "x_ran": errno.EACCES, "g_ran": errno.EACCES}, got
    assert snapshot(wd) == before and store(wd) == []


SWAP_RACE = """
import threading, time
# One thread flips descriptor 100 (or a name buffer) between a file outside the workdir and
# one of the workdir while the other sets a set-user-ID bit through it 20,000 times.
plain = ctypes.create_string_buffer(OTHER.encode())
near = ctypes.create_string_buffer(NEAR.encode())
first = {"plain": sc(90, ctypes.addressof(plain), 0o4711),  # chmod by name, no race: made
         "near": sc(90, ctypes.addressof(near), 0o4711)}
assert os.stat(OTHER).st_mode & 0o7777 == 0o4711
other = os.open(OTHER, os.O_RDONLY)
victim = os.open("victim", os.O_RDONLY)
names = [ctypes.create_string_buffer(OTHER.encode(), 256),
         ctypes.create_string_buffer(os.path.abspath("victim").encode(), 256)]
buf = ctypes.create_string_buffer(OTHER.encode(), 256)
os.dup2(other, 100)
stop = False
def flip():
    while not stop:
        os.dup2(victim, 100); os.dup2(other, 100)
        ctypes.memmove(buf, names[1], 256); ctypes.memmove(buf, names[0], 256)
t = threading.Thread(target=flip); t.start()
done = {"fchmod": 0, "chmod": 0}
for i in range(10000):
    if sc(91, 100, 0o4755)[0] == 0:  # fchmod
        done["fchmod"] += 1
    if sc(90, ctypes.addressof(buf), 0o4755)[0] == 0:  # chmod
        done["chmod"] += 1
stop = True; t.join()
out(dict(first, **{k: v > 0 for k, v in done.items()}))
"""


def test_a_set_id_chmod_raced_never_reaches_the_workdir(wd, tmp_path):
    """A set-ID chmod is made by the supervisor on the file it took, never on a workdir file
    the caller swapped in meanwhile (a descriptor, a name): the workdir's file keeps its mode;
    control: the files outside (on another filesystem, and on the workdir's), named the same
    way, took the bit."""
    (wd / "victim").write_bytes(b"v")
    (wd / "victim").chmod(0o755)
    near = tmp_path / "near"
    near.write_bytes(b"n")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as shm:
        other = pathlib.Path(shm) / "other"
        other.write_bytes(b"o")
        other.chmod(0o644)
        code = f"OTHER = {str(other)!r}\nNEAR = {str(near)!r}\n" + SWAP_RACE
        r = run(*cow_flags(wd, "--on-exit", "abort"), "-w", shm, "-w", str(near), "--cwd",
                str(wd), "--", PY, "-c", PRELUDE + code, timeout=120)
        got = result_json(r)
        assert got == {"plain": [0, 0], "near": [0, 0], "fchmod": True, "chmod": True}, \
            r.stderr
        assert other.stat().st_mode & 0o7777 == 0o4755  # the control: the bit was given
    assert (wd / "victim").stat().st_mode & 0o7777 == 0o755
    assert near.stat().st_mode & 0o7777 == 0o4711  # outside the workdir: the kernel's rule
    assert store(wd) == []


XATTR_ELSEWHERE = """
res = {}
os.chdir(OUT)
os.setxattr("t1", "user.a", b"1")
kept = []
def buf(b):
    kept.append(ctypes.create_string_buffer(b))
    return ctypes.addressof(kept[-1])
args = buf(struct.pack("QII", buf(b"2"), 1, 0))
# setxattrat(AT_FDCWD, NULL, AT_EMPTY_PATH, "user.b"): the working directory's
res["null_name"] = sc(463, -100, 0, 0x1000, buf(b"user.b"), args, 16)
fd = os.open("t1", os.O_PATH)
res["o_path_empty"] = sc(463, fd, buf(b""), 0x1000, buf(b"user.c"), args, 16)
res["t1"] = sorted(os.listxattr("t1"))
res["dir"] = sorted(os.listxattr("."))
out(res)
"""


def test_attribute_changes_elsewhere_answer_as_the_kernel(wd, tmp_path):
    """An extended attribute changed outside the workdir (made by the supervisor on the file
    named) lands where the kernel would put it: a NULL name with AT_EMPTY_PATH is the working
    directory, an O_PATH descriptor with AT_EMPTY_PATH is EBADF; control: the kernel's own
    answers in a plain run."""
    code = "import struct\n" + XATTR_ELSEWHERE
    answers = []
    for sandboxed in (False, True):
        out_dir = tmp_path / f"out{int(sandboxed)}"
        out_dir.mkdir()
        (out_dir / "t1").write_bytes(b"")
        c = f"OUT = {str(out_dir)!r}\n" + code
        if sandboxed:
            r = run(*cow_flags(wd, "--on-exit", "abort"), "-w", str(out_dir), "--", PY, "-c",
                    PRELUDE + c)
        else:
            r = subprocess.run([PY, "-c", PRELUDE + c], capture_output=True)
        answers.append(result_json(r))
    assert answers[0] == {"null_name": [0, 0], "o_path_empty": [-1, errno.EBADF],
                          "t1": ["user.a"], "dir": ["user.b"]}, answers[0]
    assert answers[1] == answers[0]


def test_a_set_id_chmod_of_a_workdir_fifo_needs_the_sandboxs_rights(wd):
    """A set-ID chmod of a workdir FIFO (a kernel object: its mode is the kernel's) is made by
    the supervisor on the FIFO resolved, so only for a task with the sandbox's ids: one that
    dropped them (root's setresuid) is refused (EPERM) where the kernel would refuse it too;
    control: with the sandbox's ids the mode is given."""
    os.mkfifo(wd / "fifo", 0o600)
    code = """
drop = len(sys.argv) > 1 and os.geteuid() == 0
if drop:
    os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)
try:
    os.chmod("fifo", 0o4666); out(0)
except OSError as e:
    out(e.errno)
"""
    if os.geteuid() == 0:
        r = run(*cow_flags(wd, "--on-exit", "abort"), "--cwd", str(wd), "--", PY, "-c",
                PRELUDE + code, "drop")
        assert result_json(r) == errno.EPERM, r.stderr
        assert (wd / "fifo").stat().st_mode & 0o7777 == 0o600
    r = py(wd, code, "--on-exit", "abort")
    assert result_json(r) == 0
    assert (wd / "fifo").stat().st_mode & 0o7777 == 0o4666  # a kernel object: not reverted


def test_no_file_capabilities_for_the_branch(wd, tmp_path):
    """security.* is never set on a file of the branch (by its descriptor or its own path),
    and a workdir program carrying file capabilities, copied into the branch, is not linked
    into the workdir to be run (EACCES); control: the kernel sets the attribute on a plain
    file (as root; another user is refused by the kernel too), and a program without them
    runs."""
    root = os.geteuid() == 0
    for name in ("capprog", "plainprog"):
        shutil.copy("/bin/true", wd / name)
    # cap_net_raw=ep: VFS_CAP_REVISION_2 | EFFECTIVE, permitted bit 13
    caps = struct.pack("<IIIII", 0x02000001, 1 << 13, 0, 0, 0)
    if root:
        os.setxattr(wd / "capprog", "security.capability", caps)
    code = f"CAPS = {caps!r}\n" + """
import subprocess
res = {}
with open("made", "w") as f:
    try:
        os.setxattr(f.fileno(), "security.capability", CAPS); res["fd"] = 0
    except OSError as e:
        res["fd"] = e.errno
for name in ("capprog", "plainprog"):
    os.chmod(name, 0o755)  # copied into the branch (with its attributes)
    try:
        res[name] = subprocess.run(["./" + name]).returncode
    except OSError as e:
        res[name] = e.errno
out(res)
"""
    before = snapshot(wd)
    r = py(wd, code, "--on-exit", "abort")
    assert result_json(r) == {"fd": errno.EPERM, "capprog": errno.EACCES if root else 0,
                              "plainprog": 0}, r.stderr
    assert snapshot(wd) == before and store(wd) == []
    plain = tmp_path / "plain"
    plain.write_bytes(b"")
    try:
        os.setxattr(plain, "security.capability", caps)
        kernel = 0
    except OSError as e:
        kernel = e.errno
    assert kernel == (0 if root else errno.EPERM)


def test_an_exec_link_is_never_made_through_a_workdir_symlink(wd, tmp_path):
    """A workdir symlink the run replaced by a directory: a program made in it is not run
    (EACCES), and nothing is linked where the symlink leads, not even for the run; the same in
    a real directory runs."""
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o700)
    (wd / "out").symlink_to(outside)
    (wd / "real").mkdir()
    before = snapshot(wd)
    seen = {}
    code = """
import shutil, subprocess
res = {}
for d in ("out", "real"):
    if os.path.islink(d):
        os.unlink(d); os.mkdir(d)
    for name in ("p", "prog"):  # a one-letter name and a longer one
        shutil.copy("/bin/true", f"{d}/{name}"); os.chmod(f"{d}/{name}", 0o755)
        try:
            res[f"{d}/{name}"] = subprocess.run([f"{d}/{name}"]).returncode
        except OSError as e:
            res[f"{d}/{name}"] = -e.errno
print("ready", flush=True); sys.stdin.readline()
out(res)
"""
    got = host_steps(wd, code, lambda: seen.update(outside=os.listdir(outside),
                                                    real=sorted(os.listdir(wd / "real"))))
    assert got == {"out/p": -errno.EACCES, "out/prog": -errno.EACCES, "real/p": 0,
                   "real/prog": 0}
    # During the run: nothing where the symlink leads; the real directory's links (control).
    assert seen == {"outside": [], "real": ["p", "prog"]}
    assert os.listdir(outside) == [] and snapshot(wd) == before and store(wd) == []


DOT_NAMES = """
res = {}
def t(name, f):
    try:
        r = f()
        res[name] = r if isinstance(r, str) else 0
    except OSError as e:
        res[name] = e.errno
fd = os.open("a.txt", os.O_RDONLY)
t("readlink_fd", lambda: os.readlink(f"/proc/self/fd/{fd}").replace(os.getcwd(), "W"))
fd2 = os.open("new", os.O_WRONLY | os.O_CREAT, 0o644)
t("readlink_fd_new", lambda: os.readlink(f"/proc/self/fd/{fd2}").replace(os.getcwd(), "W"))
t("readlink_fd_short", lambda: str(libc.readlink(f"/proc/self/fd/{fd}".encode(),
                                                  ctypes.create_string_buffer(4), 4)))
fd3 = os.open("gone", os.O_WRONLY | os.O_CREAT, 0o644)
os.unlink("gone")
t("readlink_fd_deleted", lambda: os.readlink(f"/proc/self/fd/{fd3}").replace(os.getcwd(), "W"))
for call, f in (("rename", lambda n: os.rename(n, "moved")), ("rmdir", os.rmdir),
                ("unlink", os.unlink), ("mkdir", os.mkdir),
                ("symlink", lambda n: os.symlink("a.txt", n)), ("link", lambda n: os.link("a.txt", n))):
    for n in ("sub/.", "sub/..", "sub/./", "/"):
        t(f"{call} {n}", lambda: f(n))
t("rename to sub/.", lambda: os.rename("a.txt", "sub/."))
res["left"] = sorted(os.listdir("."))
out(res)
"""


def test_dot_names_and_descriptor_links_answer_as_the_kernel(wd, tmp_path):
    """Names ending in "." or ".." (or "/") are never the directory they reach for a call
    that changes the name (rmdir "sub/." used to remove sub, rename "sub/." to move it), and
    readlink of /proc/self/fd/N names the file: the same answers as the kernel's own on a plain
    copy of the workdir (the control)."""
    plain = tmp_path / "plain"
    shutil.copytree(wd, plain)
    k = subprocess.run([PY, "-c", PRELUDE + DOT_NAMES], cwd=plain, capture_output=True)
    assert k.returncode == 0, k.stderr
    kernel = json.loads(k.stdout.decode().splitlines()[-1])
    assert kernel["rmdir sub/."] == errno.EINVAL and kernel["readlink_fd"] == "W/a.txt"
    before = snapshot(wd)
    r = py(wd, DOT_NAMES, "--on-exit", "abort")
    assert result_json(r) == kernel
    assert snapshot(wd) == before and store(wd) == []


CWD_EMPTY = """
import struct
os.chdir("sub")
e = ctypes.create_string_buffer(b"")
ts = (ctypes.c_long * 4)(1000000000, 0, 1000000000, 0)
res = {"chmod": sc(452, -100, ctypes.addressof(e), 0o700, 0x1000),  # fchmodat2
       "utimes": sc(280, -100, ctypes.addressof(e), ctypes.addressof(ts), 0x1000),
       "chown": sc(260, -100, ctypes.addressof(e), os.getuid(), os.getgid(), 0x1000)}
st = os.stat(".")
res["seen"] = [oct(st.st_mode & 0o777), int(st.st_mtime)]
out(res)
"""


def test_calls_on_the_working_directory_by_an_empty_name(wd, tmp_path):
    """"" with AT_EMPTY_PATH and AT_FDCWD names the working directory: under the workdir its
    mode, times and owner change in the branch (the run sees them) and the workdir's own
    directory is untouched after an abort; control: the kernel's answers on a plain copy."""
    plain = tmp_path / "plain"
    shutil.copytree(wd, plain)
    k = subprocess.run([PY, "-c", PRELUDE + CWD_EMPTY], cwd=plain, capture_output=True)
    kernel = json.loads(k.stdout.decode().splitlines()[-1])
    assert kernel["seen"] == ["0o700", 1000000000]
    before = snapshot_meta(wd)
    r = py(wd, CWD_EMPTY, "--on-exit", "abort")
    assert result_json(r) == kernel, r.stderr
    assert snapshot_meta(wd) == before and store(wd) == []


def test_copies_under_a_quota_are_charged_what_they_bring(wd):
    """cp (copy_file_range asking for far more than the file holds) and shutil (sendfile) copy
    a small file under max_disk; control: the same without the quota."""
    code = """
import shutil, subprocess
r = subprocess.run(["cp", "a.txt", "b.txt"]).returncode
shutil.copyfile("a.txt", "c.txt")
out([r, open("b.txt").read(), open("c.txt").read()])
"""
    for more in (("--max-disk", "10M"), ()):
        r = py(wd, code, *more, "--on-exit", "abort")
        assert result_json(r) == [0, "hello\n", "hello\n"], (more, r.stderr)


def test_a_non_dumpable_task_changes_nothing_through_a_descriptor(wd):
    """A task that made itself non-dumpable hides its descriptors from a supervisor without
    CAP_SYS_PTRACE: a metadata change through one of a workdir file is then refused (EPERM)
    rather than left to the kernel (which changed the workdir's own file); with the capability
    (as root) it is staged as any. Control: the same without the prctl is staged."""
    before = snapshot(wd)
    code = """
fd = os.open("a.txt", os.O_RDONLY)
if len(sys.argv) > 1:
    assert libc.prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE
try:
    os.fchmod(fd, 0o600); r = 0
except OSError as e:
    r = e.errno
# (a name is no more readable by such a supervisor: the mode is looked at through fstat)
out([r, oct(os.fstat(fd).st_mode & 0o777)])
"""
    r = run(*cow_flags(wd, "--on-exit", "abort"), "--cwd", str(wd), "--", PY, "-c",
            PRELUDE + code, "nodump")
    assert result_json(r) == ([0, "0o644"] if os.geteuid() == 0 else [errno.EPERM, "0o644"]), \
        r.stderr
    assert snapshot(wd) == before and store(wd) == []
    r = py(wd, code, "--on-exit", "abort")
    assert result_json(r) == [0, "0o644"]  # staged: the descriptor's own file is the workdir's
    assert snapshot(wd) == before and store(wd) == []


def test_chdir_and_getcwd(wd):
    r = sh(wd, "cd sub && pwd -P && /bin/pwd && cat b.txt", "--on-exit", "abort")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{wd}/sub\n{wd}/sub\nkeep\n".encode()
    # A directory made in the run: entered, worked in, listed; the workdir stands it by an
    # empty directory for the run only.
    before = snapshot(wd)
    script = ("mkdir -p build/x && cd build && pwd -P && echo hi > f && cd x && touch y && "
              "ls .. && cat ../f && /bin/pwd")
    r = sh(wd, script, "--on-exit", "abort")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{wd}/build\nf\nx\nhi\n{wd}/build/x\n".encode()
    assert snapshot(wd) == before and store(wd) == []  # abort: nothing of it left
    r = sh(wd, script)
    assert r.returncode == 0, r.stderr
    assert (wd / "build" / "f").read_text() == "hi\n" and (wd / "build" / "x" / "y").exists()
    # A name the workdir holds as a file cannot be entered once the branch made it a
    # directory (the working directory is the kernel's): EACCES.
    r = py(wd, """
os.unlink("a.txt"); os.mkdir("a.txt")
try:
    os.chdir("a.txt"); out(0)
except OSError as e:
    out(e.errno)
""", "--on-exit", "abort")
    assert result_json(r) == 13


def test_max_disk_quota(wd):
    grow = "with open('a.txt', 'a') as f: f.write('x' * 4096)"
    code = f"""
try:
    {grow}
    out(0)
except OSError as e:
    out(e.errno)
with open("small.txt", "w") as f: f.write("ok")
out(open("a.txt").read())
"""
    r = py(wd, code, "--max-disk", "1K", "--on-exit", "abort")
    lines = r.stdout.decode().splitlines()
    assert r.returncode == 0, r.stderr
    assert lines[0] == "28"  # ENOSPC
    assert lines[1] == '"hello\\n"'  # reads are never limited
    # Control: without the quota the same append works.
    r = py(wd, code, "--on-exit", "abort")
    assert r.returncode == 0 and r.stdout.decode().splitlines()[0] == "0"


QUOTA_SPACE = """
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
def fallocate(fd, mode, off, n):
    if libc.fallocate(fd, mode, off, n) < 0:
        return ctypes.get_errno()
    return 0
def pw(fd, chunk, flags):
    try:
        os.pwritev(fd, [chunk], 0, flags)
        return 0
    except OSError as e:
        return e.errno
res = {}
if PART == "keep_size":
    # FALLOC_FL_KEEP_SIZE: space past the end, the size unchanged; 300 KiB each, four times.
    fd = os.open("space", os.O_RDWR | os.O_CREAT, 0o644)
    res["keep_size"] = [fallocate(fd, 1, i * (300 << 10), 300 << 10) for i in range(4)]
elif PART == "zero_range":
    # FALLOC_FL_ZERO_RANGE past the end grows the size to offset + len: refused before it runs.
    fd = os.open("space", os.O_RDWR | os.O_CREAT, 0o644)
    res["zero_range"] = fallocate(fd, 0x10, 100 << 20, 4096)
    res["size"] = os.fstat(fd).st_size
    res["einval"] = fallocate(fd, 0, 0, -1)  # the kernel's EINVAL, quota or not
elif PART == "keep_size_cycles":
    # Space reserved then removed with its file is given back: six cycles of 300 KiB fit.
    res["cycles"] = []
    for i in range(6):
        fd = os.open("cycle", os.O_RDWR | os.O_CREAT, 0o644)
        res["cycles"].append(fallocate(fd, 1, 0, 300 << 10))
        os.close(fd); os.unlink("cycle")
elif PART == "copy_far":
    # copy_file_range into a file at a far offset: charged there, refused before it runs.
    src = os.open("src", os.O_RDWR | os.O_CREAT, 0o644)
    os.write(src, b"s")
    dst = os.open("dst", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.copy_file_range(src, dst, 1, 0, 100 << 20); res["copy_far"] = 0
    except OSError as e:
        res["copy_far"] = e.errno
    res["size"] = os.fstat(dst).st_size
    # Over bytes the file has (300 KiB at offset 0 of a 600 KiB file): nothing added, fits.
    os.write(dst, b"d" * (600 << 10))
    os.pwrite(src, b"s" * (300 << 10), 0)
    res["copy_over"] = os.copy_file_range(src, dst, 300 << 10, 0, 0)
elif PART == "sendfile_self":
    # A file copied into itself grows by what it reads back: charged the whole count.
    fd = os.open("self", os.O_RDWR | os.O_CREAT, 0o644)
    os.write(fd, b"x" * (64 << 10))
    try:
        res["sendfile_self"] = os.sendfile(fd, fd, 0, 2 << 20)
    except OSError as e:
        res["sendfile_self"] = e.errno
elif PART == "o_append_pwrite":
    # pwrite on an O_APPEND descriptor writes at the end, whatever offset it names.
    fd = os.open("app", os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    os.write(fd, b"x" * (600 << 10))
    try:
        os.pwrite(fd, b"y" * (600 << 10), 0); res["pwrite"] = 0
    except OSError as e:
        res["pwrite"] = e.errno
else:
    fd = os.open("app", os.O_RDWR | os.O_CREAT, 0o644)
    os.write(fd, b"x" * (600 << 10))
    res["in_place"] = pw(fd, b"y" * (600 << 10), 0)  # over what is there: nothing added
    res["append"] = pw(fd, b"z" * (600 << 10), os.RWF_APPEND)  # at the end, whatever offset
out(res)
"""


def test_max_disk_counts_space_allocated_past_the_size_and_rwf_append(wd):
    """Under max_disk (1 MiB here), fallocate's KEEP_SIZE space is counted though the size does
    not show it (three 300 KiB reservations fit, a fourth does not), and pwritev2's RWF_APPEND
    is counted at the end whatever offset it names (600 KiB written over in place fit, 600 KiB
    more at the end do not)."""
    cases = (
        ("keep_size", {"keep_size": [0, 0, 0, errno.ENOSPC]}, {"keep_size": [0, 0, 0, 0]}),
        ("append", {"in_place": 0, "append": errno.ENOSPC}, {"in_place": 0, "append": 0}),
        ("zero_range", {"zero_range": errno.ENOSPC, "size": 0, "einval": errno.EINVAL},
         {"zero_range": 0, "size": (100 << 20) + 4096, "einval": errno.EINVAL}),
        ("keep_size_cycles", {"cycles": [0] * 6}, {"cycles": [0] * 6}),
        ("o_append_pwrite", {"pwrite": errno.ENOSPC}, {"pwrite": 0}),
        ("sendfile_self", {"sendfile_self": errno.ENOSPC}, {"sendfile_self": 2 << 20}),
        ("copy_far", {"copy_far": errno.ENOSPC, "size": 0, "copy_over": 300 << 10},
         {"copy_far": 0, "size": (100 << 20) + 1, "copy_over": 300 << 10}),
    )
    for part, want, control in cases:
        code = f"PART = {part!r}\n" + QUOTA_SPACE
        r = py(wd, code, "--max-disk", "1M", "--on-exit", "abort")
        assert result_json(r) == want, (part, r.stderr)
        # Control: without the quota, the same calls succeed (the kernel's own EINVAL too).
        r = py(wd, code, "--on-exit", "abort")
        assert result_json(r) == control, (part, r.stderr)


# One thread opens a large workdir file for appending (its copy-up runs on a worker); the other,
# once that open is under way, reads (answered meanwhile), then changes the tree and appends to
# the same file (both wait for the copy, then land).
COPY_UP_RACE = """
import threading, time
t, started = {}, threading.Event()
def a():
    started.set()
    t["a0"] = time.monotonic()
    fd = os.open(NAME, os.O_WRONLY | os.O_APPEND)
    t["opened"] = time.monotonic()
    os.write(fd, b"AAAA"); os.close(fd)
def b():
    started.wait(); time.sleep(0.01)
    for i in range(3):
        os.stat("a.txt"); open(NAME, "rb").close(); os.listdir(".")
    t["reads"] = time.monotonic()
    try:  # a change elsewhere (refused there by Landlock) does not wait either
        os.mkdir("/nonexistent-dir-of-the-host")
    except OSError:
        pass
    t["elsewhere"] = time.monotonic()
    os.unlink("a.txt")
    fd = os.open(NAME, os.O_WRONLY | os.O_APPEND); os.write(fd, b"BBBB"); os.close(fd)
    t["changed"] = time.monotonic()
ts = [threading.Thread(target=a), threading.Thread(target=b)]
[x.start() for x in ts]; [x.join() for x in ts]
out({k: v - t["a0"] for k, v in t.items()})
"""


def test_a_large_copy_up_runs_off_the_loop(wd):
    with open(wd / "big", "wb") as f:  # 256 MiB to copy (sparse here, not in the branch)
        f.write(b"head")
        f.truncate(256 << 20)
    r = py(wd, COPY_UP_RACE.replace("NAME", '"big"'))
    t = result_json(r)
    # The other thread's reads, and its change outside the workdir, were answered while the
    # copy went on ...
    assert t["reads"] < t["elsewhere"] < t["opened"], t
    # ... and its changes to the tree waited for it: its append to the same file, made while
    # the copy went on, would otherwise have copied the file a second time (and the copy's
    # landing, refusing to replace it, would have failed the first open).
    assert not (wd / "a.txt").exists()
    assert os.path.getsize(wd / "big") == (256 << 20) + 8
    with open(wd / "big", "rb") as f:
        assert f.read(4) == b"head"
        f.seek(-8, 2)
        assert f.read() in (b"AAAABBBB", b"BBBBAAAA")  # both appends landed
    assert store(wd) == []
    # Control: a small file is copied on the loop, and the reads then wait for the open.
    (wd / "a.txt").write_text("hello\n")
    r = py(wd, COPY_UP_RACE.replace("NAME", '"sub/b.txt"'))
    t = result_json(r)
    assert t["reads"] > t["opened"], t
    assert (wd / "sub" / "b.txt").read_text() in ("keep\nAAAABBBB", "keep\nBBBBAAAA")


RENAME_RACE = """
import threading, time
t, started = {}, threading.Event()
def a():
    started.set()
    t["a0"] = time.monotonic()
    os.rename("d", "d2")
    t["moved"] = time.monotonic()
def b():
    started.wait(); time.sleep(0.01)
    for i in range(3):
        os.stat("a.txt"); os.listdir(".")
    t["reads"] = time.monotonic()
    os.rename("a.txt", "a2.txt")
    t["changed"] = time.monotonic()
    t["after_move"] = os.path.isdir("d2")  # the supervisor made A's move first
ts = [threading.Thread(target=a), threading.Thread(target=b)]
[x.start() for x in ts]; [x.join() for x in ts]
out({k: v if isinstance(v, bool) else v - t["a0"] for k, v in t.items()})
"""


def test_renaming_a_tree_with_large_files_copies_them_off_the_loop(wd):
    (wd / "d" / "e").mkdir(parents=True)
    for name in ("d/one", "d/e/two"):
        with open(wd / name, "wb") as f:
            f.write(name.encode())
            f.truncate(128 << 20)
    (wd / "d" / "small").write_text("small\n")
    r = py(wd, RENAME_RACE)
    t = result_json(r)
    assert t["reads"] < t["moved"], t  # answered while the two copies went on
    assert t["after_move"] is True, t  # the other rename waited for them and the move
    assert not (wd / "d").exists() and not (wd / "a.txt").exists()
    assert (wd / "a2.txt").read_text() == "hello\n"
    assert (wd / "d2" / "small").read_text() == "small\n"
    for name in ("one", "e/two"):
        with open(wd / "d2" / name, "rb") as f:
            assert f.read(len("d/" + name)) == ("d/" + name).encode()
        assert os.path.getsize(wd / "d2" / name) == 128 << 20
    assert store(wd) == []
    # Control: the same moves of small files are made on the loop: the reads wait.
    for name in ("one", "e/two"):
        os.truncate(wd / "d2" / name, 10)
    os.rename(wd / "d2", wd / "d")
    os.rename(wd / "a2.txt", wd / "a.txt")
    t = result_json(py(wd, RENAME_RACE))
    assert t["reads"] > t["moved"], t
    assert sorted(os.listdir(wd / "d2")) == ["e", "one", "small"]


def test_a_rename_that_cannot_be_made_copies_nothing(wd):
    with open(wd / "big", "wb") as f:
        f.truncate(8 << 20)
    (wd / "d").mkdir()
    with open(wd / "d" / "big", "wb") as f:
        f.truncate(8 << 20)
    code = """
res = []
for a, b in (("big", "big"), ("d", "d/x"), ("big", "sub"), ("d", "a.txt")):
    try:
        os.rename(a, b); res.append(0)
    except OSError as e:
        res.append(e.errno)
out(res)
"""
    r = py(wd, code, "--max-disk", "4M", "--on-exit", "keep")
    assert result_json(r) == [0, errno.EINVAL, errno.EISDIR, errno.ENOTDIR]
    (branch,) = store(wd)
    assert os.listdir(wd.parent / "store" / branch / "upper") == []  # nothing copied
    # Control: a move that can be made copies the file (and the 4M quota refuses it).
    r = py(wd, "os.rename('big', 'big2')", "--max-disk", "4M", "--on-exit", "keep")
    assert r.returncode != 0 and b"No space left" in r.stderr
    r = py(wd, "os.rename('big', 'big2')", "--on-exit", "abort")
    assert r.returncode == 0, r.stderr


def test_a_large_copy_up_cut_short_leaves_nothing(wd):
    with open(wd / "big", "wb") as f:  # far more than the run has time to copy
        f.truncate(64 << 30)
    before = snapshot_meta(wd)
    r = py(wd, "os.open('big', os.O_WRONLY | os.O_APPEND)", "--timeout", "0.5",
           "--on-error", "keep")
    assert r.returncode == 124, r.stderr
    (branch,) = store(wd)
    root = wd.parent / "store" / branch
    assert sorted(os.listdir(root)) == ["upper", "whiteouts"]  # no copy left behind
    assert os.listdir(root / "upper") == []
    assert snapshot_meta(wd) == before
    # Control: the same open with time to finish lands the file in the branch.
    with open(wd / "big", "wb") as f:
        f.truncate(8 << 20)
    r = py(wd, "os.open('big', os.O_WRONLY | os.O_APPEND)", "--on-exit", "keep")
    assert r.returncode == 0, r.stderr
    (second,) = set(store(wd)) - {branch}
    assert os.path.getsize(wd.parent / "store" / second / "upper" / "big") == 8 << 20


# Files and directories made under umasks that change: by the same process, a forked child
# (its own mask from then on), and a thread (sharing the process's mask).
UMASK_SCRIPT = """
import threading
res = []
def made(name):
    fd = os.open(name, os.O_CREAT | os.O_WRONLY, 0o666)
    os.close(fd)
    res.append([name, oct(os.stat(name).st_mode & 0o777)])
os.umask(0o022)
made("u1"); made("u2")
os.umask(0o077)
made("u3")
pid = os.fork()
if pid == 0:
    made("c1"); os.umask(0o002); made("c2")
    out(res[-2:]); os._exit(0)
r, w = os.pipe()
os.waitpid(pid, 0)
res += json.loads(os.read(r, 0) or b"[]")
made("u4")
set_, go = threading.Event(), threading.Event()
def other():
    os.umask(0o027); set_.set(); go.wait(); made("t1")
t = threading.Thread(target=other); t.start()
set_.wait(); made("u5"); go.set(); t.join()
os.mkdir("d", 0o777)
res.append(["d", oct(os.stat("d").st_mode & 0o777)])
out(res)
"""


def test_modes_follow_the_umask_as_it_changes(wd, tmp_path):
    r = py(wd, UMASK_SCRIPT, "--on-exit", "abort")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.decode().splitlines()]
    child, got = lines[0], lines[1]
    # Control: the kernel's own answers, the same script run in a plain directory.
    plain = tmp_path / "plain"
    plain.mkdir()
    k = subprocess.run([PY, "-c", PRELUDE + UMASK_SCRIPT], cwd=plain, capture_output=True)
    assert k.returncode == 0, k.stderr
    want_child, want = [json.loads(x) for x in k.stdout.decode().splitlines()]
    assert child == want_child == [["c1", "0o600"], ["c2", "0o664"]]
    assert got == want, (got, want)
    assert dict(got) == {"u1": "0o644", "u2": "0o644", "u3": "0o600", "u4": "0o600",
                         "u5": "0o640", "t1": "0o640", "d": "0o750"}


# Every way to change a file's mode, inode flags and extended attributes, on a workdir file:
# the mode and the extended attributes are the branch's (read back by name and descriptor),
# the inode's flags, version (and file_setattr) are refused (EOPNOTSUPP: not staged).
ATTR_SCRIPT = """
import fcntl, struct
def call(f):
    try:
        f(); return 0
    except OSError as e:
        return e.errno
def raw(nr, *args):
    r, e = sc(nr, *args)
    return e or r
kept = []
def buf(b):  # an address that stays valid (the buffer kept)
    kept.append(ctypes.create_string_buffer(b))
    return ctypes.addressof(kept[-1])
def xattrs(name):
    return sorted([k, os.getxattr(name, k).decode()] for k in os.listxattr(name))
fd = os.open("a.txt", os.O_RDONLY)
flag = struct.pack("i", 0x80)  # FS_NOATIME_FL, which a file's owner may set
res = {
    "setflags": call(lambda: fcntl.ioctl(fd, 0x40086602, flag)),
    "setflags_high_bits": raw(16, fd, 0x140086602, buf(flag)),
    "setversion": call(lambda: fcntl.ioctl(fd, 0x40087602, struct.pack("l", 1234))),
    "file_setattr": raw(469, -100, buf(b"a.txt"), buf(bytes(32)), 24, 0),
    "futimens_flag": raw(280, fd, 0, 0, 0x1000),  # utimensat(fd, NULL, AT_EMPTY_PATH): EINVAL
    "setxattr": call(lambda: os.setxattr("a.txt", "user.x", b"1")),
    "lsetxattr": call(lambda: os.setxattr("a.txt", "user.l", b"2", follow_symlinks=False)),
    "fsetxattr": call(lambda: os.setxattr(fd, "user.f", b"3")),
    "removexattr": call(lambda: os.removexattr("a.txt", "user.keep")),
    "setxattrat": raw(463, -100, buf(b"a.txt"), 0, buf(b"user.at"),
                      buf(struct.pack("QII", buf(b"4"), 1, 0)), 16),
    "getxattrat": raw(464, -100, buf(b"a.txt"), 0, buf(b"user.at"),
                      buf(struct.pack("QII", buf(b"??"), 2, 0)), 16),
    "create_existing": call(lambda: os.setxattr("a.txt", "user.x", b"9", os.XATTR_CREATE)),
    "get_missing": call(lambda: os.getxattr("a.txt", "user.none")),
    "seen": xattrs("a.txt"),
}
os.close(fd)
res["fchmod_badfd"] = raw(91, -1, 0o4755)  # no such descriptor: EBADF
res["fchmod_cwd"] = raw(91, -100, 0o700)  # AT_FDCWD is no descriptor for fchmod: EBADF
res["futimens_cwd"] = raw(280, -100, 0, 0, 0)  # utimensat(AT_FDCWD, NULL): EFAULT
res["fsetxattr_badfd"] = raw(190, 4242, buf(b"user.z"), buf(b"1"), 1, 0)
res["setxattrat_badflags"] = raw(463, -100, buf(b"a.txt"), 0x400, buf(b"user.q"),
                                 buf(struct.pack("QII", buf(b"5"), 1, 0)), 16)
res["fchmodat2"] = raw(452, -100, buf(b"a.txt"), 0o600, 0)
res["mode_seen"] = oct(os.stat("a.txt").st_mode & 0o777)
with open("made.txt", "w") as f:  # a descriptor of the branch's own file: refused too
    res["made_setflags"] = call(lambda: fcntl.ioctl(f.fileno(), 0x40086602, flag))
    res["made_file_setattr"] = raw(469, f.fileno(), buf(b""), buf(bytes(32)), 24, 0x1000)
os.setxattr("made.txt", "user.made", b"5")
res["made_seen"] = xattrs("made.txt")
out(res)
"""


def test_modes_and_attributes_are_the_branchs_and_inode_flags_refused(wd, tmp_path):
    a = wd / "a.txt"
    os.setxattr(a, "user.keep", b"1")
    state = lambda: (a.stat().st_mode, sorted(os.listxattr(a)), a.read_bytes())
    before = state()
    r = py(wd, ATTR_SCRIPT, "--on-exit", "abort")
    got = result_json(r)
    refused = ("setflags", "setflags_high_bits", "setversion", "file_setattr", "made_setflags",
               "made_file_setattr")
    assert {k: got[k] for k in refused} == {k: errno.EOPNOTSUPP for k in refused}, got
    assert state() == before  # nothing reached the workdir
    # Control: the kernel's own answers, the same script on a plain file: the same, but for
    # what the sandbox refuses.
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.txt").write_text("hello\n")
    os.setxattr(plain / "a.txt", "user.keep", b"1")
    k = subprocess.run([PY, "-c", PRELUDE + ATTR_SCRIPT], cwd=plain, capture_output=True)
    assert k.returncode == 0, k.stderr
    kernel = json.loads(k.stdout.decode().splitlines()[-1])
    assert kernel["setflags"] == kernel["setversion"] == kernel["made_setflags"] == 0
    assert kernel["made_file_setattr"] == 0
    assert {k: v for k, v in got.items() if k not in refused} == \
        {k: v for k, v in kernel.items() if k not in refused}, (got, kernel)
    assert got["seen"] == [["user.at", "4"], ["user.f", "3"], ["user.l", "2"], ["user.x", "1"]]
    assert got["made_seen"] == [["user.made", "5"]] and got["mode_seen"] == "0o600"
    # Committed: the workdir takes them.
    r = py(wd, ATTR_SCRIPT)
    assert result_json(r)["seen"] == got["seen"]
    assert sorted(os.listxattr(a)) == ["user.at", "user.f", "user.l", "user.x"]
    assert os.getxattr(wd / "made.txt", "user.made") == b"5"


# A thread without CLONE_FS (its own umask) sets umask 077 and execs: the exec moves it to the
# leader's tid, whose mask (0) the supervisor may have known; the new program's file is 0600.
THREAD_EXEC = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
extern char **environ;
static char stack[1 << 16];
static char *self;
static volatile int umasked, go;
static void made(const char *name)
{
	struct stat st;
	int fd = open(name, O_CREAT | O_WRONLY, 0666);
	fstat(fd, &st);
	close(fd);
	printf("%s %o\n", name, st.st_mode & 0777);
	fflush(stdout);
}
static int thread(void *arg)
{
	struct stat st;
	char *argv[] = { self, "after", NULL };
	syscall(SYS_umask, 077);
	syscall(SYS_newfstatat, AT_FDCWD, ".", &st, 0); /* a call after it: umask returned */
	umasked = 1;
	while (!go)
		;
	syscall(SYS_execve, self, argv, environ);
	return 0;
}
int main(int argc, char **argv)
{
	self = argv[0];
	if (argc > 1) {
		made("f3");
		return 0;
	}
	umask(0);
	made("f1");
	clone(thread, stack + sizeof(stack), CLONE_VM | CLONE_SIGHAND | CLONE_THREAD, NULL);
	while (!umasked)
		;
	made("f2");
	go = 1;
	for (;;)
		pause();
}
"""


# posix_spawn (vfork: the parent's memory) of a literal name of a program the run replaced,
# twice, with the program rebuilt in between: each spawn runs the program there then.
SPAWN_TWICE = r"""
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
extern char **environ;
static void spawn(void)
{
	pid_t pid;
	char *argv[] = { "prog", NULL };
	if (posix_spawn(&pid, "./prog", NULL, NULL, argv, environ) != 0)
		exit(1);
	waitpid(pid, NULL, 0);
}
int main(void)
{
	system("printf '#!/bin/sh\\necho v1\\n' > prog.new && chmod +x prog.new && mv prog.new prog");
	spawn();
	system("printf '#!/bin/sh\\necho v2\\n' > prog.new && chmod +x prog.new && mv prog.new prog");
	spawn();
	return 0;
}
"""


@pytest.mark.parametrize("name", ["prog", "p" * 250])
def test_a_rebuilt_program_spawned_by_one_name_twice_runs_each_build(wd, tmp_path, name):
    require(shutil.which("gcc"), "gcc (builds the spawning probe)")
    (wd / name).write_text("#!/bin/sh\necho v0\n")
    (wd / name).chmod(0o755)
    src, exe = tmp_path / "sp.c", tmp_path / "sp"
    src.write_text(SPAWN_TWICE.replace("prog", name))
    subprocess.run(["gcc", "-O2", "-o", str(exe), str(src)], check=True, capture_output=True)
    r = run(*cow_flags(wd, "--on-exit", "abort"), "-r", str(tmp_path), "--cwd", str(wd), "--",
            str(exe), timeout=30)
    assert r.stdout == b"v1\nv2\n", (r.stdout, r.stderr)
    assert (wd / name).read_text() == "#!/bin/sh\necho v0\n"
    assert sorted(os.listdir(wd)) == sorted(["a.txt", name, "sub"])  # no link left


def test_a_thread_exec_takes_its_own_umask_along(wd, tmp_path):
    require(shutil.which("gcc"), "gcc (builds the thread-exec probe)")
    src, exe = tmp_path / "te.c", tmp_path / "te"
    src.write_text(THREAD_EXEC)
    subprocess.run(["gcc", "-O2", "-o", str(exe), str(src)], check=True, capture_output=True)
    # Control: the kernel's own modes.
    plain = tmp_path / "plain"
    plain.mkdir()
    k = subprocess.run([str(exe)], cwd=plain, capture_output=True, timeout=30)
    assert k.stdout == b"f1 666\nf2 666\nf3 600\n", k
    r = run(*cow_flags(wd, "--on-exit", "abort"), "-r", str(tmp_path), "--cwd", str(wd), "--",
            str(exe), timeout=30)
    assert r.stdout == k.stdout, (r.stdout, r.stderr)


DESCRIPTOR_CALLS = """
import fcntl, struct
def changes(fd):
    res = []
    for call in (lambda: os.chmod(fd, 0o600), lambda: os.utime(fd, (0, 0)),
                 lambda: os.setxattr(fd, "user.evil", b"1"),
                 lambda: os.removexattr(fd, "user.keep"),
                 lambda: fcntl.ioctl(fd, 0x40086602, struct.pack("i", 0x80))):
        try:
            call(); res.append(0)
        except OSError as e:
            res.append(e.errno)
    return res
"""


def test_a_descriptor_of_a_deleted_or_moved_workdir_file_changes_nothing(wd):
    files = [wd / "a.txt", wd / "sub" / "b.txt"]
    for f in files:
        os.setxattr(f, "user.keep", b"1")
    state = lambda: [(f.stat().st_mode, f.stat().st_mtime_ns, os.listxattr(f), f.read_bytes())
                     for f in files]
    before = state()
    code = DESCRIPTOR_CALLS + """
fd = os.open("a.txt", os.O_RDONLY)
os.unlink("a.txt")
gone = changes(fd)
fd2 = os.open("sub/b.txt", os.O_RDONLY)
os.rename("sub/b.txt", "sub/c.txt")
moved = changes(fd2)
fd3 = os.open("sub/c.txt", os.O_RDONLY)  # the branch's copy now
os.rename("sub/c.txt", "sub/b.txt")
with open("sub/c.txt", "w") as f:  # another file at its name
    pass
replaced = changes(fd3)
out([gone, moved, replaced])
"""
    r = py(wd, code, "--on-exit", "abort")
    got = result_json(r)
    assert got[:2] == [[errno.EPERM] * 5] * 2, got
    assert got[2][:4] == [0, 0, 0, 0], got  # fd3 is a file of the branch: the kernel's
    assert state() == before
    # A descriptor of the workdir's file whose name now holds the branch's copy of it: the
    # change is the copy's; whose name holds another file: refused.
    r = py(wd, """
fd = os.open("a.txt", os.O_RDONLY)
with open("a.txt", "a") as f:  # copied up
    f.write("more")
os.chmod(fd, 0o600)
seen = oct(os.stat("a.txt").st_mode & 0o777)
os.rename("a.txt", "a.moved")  # the copy moved away, then gone, another file at its name
os.unlink("a.moved")
open("a.txt", "w").close()
try:
    os.chmod(fd, 0o700); stale = 0
except OSError as e:
    stale = e.errno
seen2 = oct(os.stat("a.txt").st_mode & 0o777)
fd2 = os.open("sub/b.txt", os.O_RDONLY)
os.rename("sub/b.txt", "sub/moved")
open("sub/b.txt", "w").close()
try:
    os.chmod(fd2, 0o600); other = 0
except OSError as e:
    other = e.errno
out([seen, other, oct(os.stat("sub/b.txt").st_mode & 0o777), stale, seen2])
""", "--on-exit", "abort")
    assert result_json(r) == ["0o600", errno.EPERM, "0o644", errno.EPERM, "0o644"]
    assert state() == before
    # Control: a descriptor of a file the run made (the branch's) takes every change.
    r = py(wd, DESCRIPTOR_CALLS + """
fd = os.open("made", os.O_CREAT | os.O_RDWR, 0o644)
os.setxattr(fd, "user.keep", b"1")
out(changes(fd))
""", "--on-exit", "abort")
    got = result_json(r)
    assert got[:4] == [0, 0, 0, 0], got  # the flag ioctl: whatever the branch's filesystem says


# Made with umask 022 in a directory with a default ACL (user rwx, group and other nothing), in
# a setgid directory, and with umask 077 beneath a default ACL giving the group rwx: the
# kernel's modes are 0600/0700, 0644/2755 and 0660/0770.
INHERITED_SCRIPT = """
res = {}
for d in ("acl", "g", "acl_rw"):
    os.umask(0o077 if d == "acl_rw" else 0o022)  # beneath a default ACL: not the umask
    fd = os.open(d + "/f", os.O_CREAT | os.O_WRONLY, 0o666)
    os.close(fd)
    os.mkdir(d + "/sub", 0o777)
    res[d] = [oct(os.stat(d + "/f").st_mode & 0o7777), oct(os.stat(d + "/sub").st_mode & 0o7777)]
out(res)
"""
def default_acl(group):  # user rwx, group @group, other nothing
    return struct.pack("<I" + "HHI" * 3, 2, 0x01, 7, 0xffffffff, 0x04, group, 0xffffffff,
                       0x20, 0, 0xffffffff)


def inherited_dirs(root):
    (root / "acl").mkdir()
    os.setxattr(root / "acl", "system.posix_acl_default", default_acl(0))
    (root / "acl_rw").mkdir()
    os.setxattr(root / "acl_rw", "system.posix_acl_default", default_acl(7))
    (root / "g").mkdir()
    os.chmod(root / "g", 0o2775)


def test_modes_follow_default_acls_and_setgid_directories(wd, tmp_path):
    inherited_dirs(wd)
    r = py(wd, INHERITED_SCRIPT)
    got = result_json(r)
    # Control: the kernel's own modes, the same script in a plain directory.
    plain = tmp_path / "plain"
    plain.mkdir()
    inherited_dirs(plain)
    k = subprocess.run([PY, "-c", PRELUDE + INHERITED_SCRIPT], cwd=plain, capture_output=True)
    assert k.returncode == 0, k.stderr
    want = json.loads(k.stdout.decode().splitlines()[-1])
    assert want == {"acl": ["0o600", "0o700"], "g": ["0o644", "0o2755"],
                    "acl_rw": ["0o660", "0o770"]}
    assert got == want
    # Committed as made.
    assert oct((wd / "acl" / "f").stat().st_mode & 0o7777) == "0o600"
    assert oct((wd / "g" / "sub").stat().st_mode & 0o7777) == "0o2755"


def test_a_failed_attribute_change_on_a_large_file_copies_nothing(wd):
    with open(wd / "big", "wb") as f:
        f.truncate(4 << 20)
    os.link(wd / "big", wd / "big2")
    r = py(wd, """
try:
    os.setxattr("big", "system.posix_acl_access", b"bad"); out(0)
except OSError as e:
    out(e.errno)
""")
    assert result_json(r) == errno.EINVAL
    assert (wd / "big").stat().st_ino == (wd / "big2").stat().st_ino  # still one file
    # Control: a change that succeeds copies the file up, and the commit lands a new inode.
    r = py(wd, 'os.setxattr("big", "user.x", b"1")')
    assert r.returncode == 0, r.stderr
    assert (wd / "big").stat().st_ino != (wd / "big2").stat().st_ino
    assert os.getxattr(wd / "big", "user.x") == b"1"


def test_a_commit_lands_directory_attributes(wd):
    os.setxattr(wd / "sub", "user.old", b"1")
    os.setxattr(wd, "user.rootold", b"1")
    r = py(wd, """
os.setxattr("sub", "user.dir", b"d")
os.removexattr("sub", "user.old")
os.mkdir("new")
os.setxattr("new", "user.made", b"m")
os.setxattr(".", "user.root", b"r")
os.removexattr(".", "user.rootold")
out(sorted(os.listxattr("sub")))
""")
    assert result_json(r) == ["user.dir"]
    assert os.listxattr(wd / "sub") == ["user.dir"] and os.getxattr(wd / "sub", "user.dir") == b"d"
    assert os.getxattr(wd / "new", "user.made") == b"m"
    assert sorted(os.listxattr(wd)) == ["user.root"]
    # Control: a directory the run did not touch keeps its attributes.
    (wd / "other").mkdir()
    os.setxattr(wd / "other", "user.keep", b"k")
    r = py(wd, "open('other/f', 'w').close()")
    assert r.returncode == 0 and os.listxattr(wd / "other") == ["user.keep"]


def test_a_commit_lands_directory_changes_made_through_a_descriptor(wd):
    r = py(wd, """
open("sub/n", "w").close()  # sub is the branch's now
fd = os.open("sub", os.O_RDONLY)
os.setxattr(fd, "user.viafd", b"1")
os.chmod(fd, 0o700)
""")
    assert r.returncode == 0, r.stderr
    assert os.listxattr(wd / "sub") == ["user.viafd"]
    assert (wd / "sub").stat().st_mode & 0o777 == 0o700
    # Control: the same changes under on_exit=abort leave the directory as it was.
    r = py(wd, """
fd = os.open("sub", os.O_RDONLY)
os.setxattr(fd, "user.aborted", b"1")
os.chmod(fd, 0o750)
out(sorted(os.listxattr("sub")))  # by name: the branch's
""", "--on-exit", "abort")
    assert result_json(r) == ["user.aborted", "user.viafd"]
    assert os.listxattr(wd / "sub") == ["user.viafd"]
    assert (wd / "sub").stat().st_mode & 0o777 == 0o700


def test_a_renamed_directory_keeps_its_attributes(wd):
    os.setxattr(wd / "sub", "user.k", b"v")
    r = sh(wd, "mv sub moved")
    assert r.returncode == 0, r.stderr
    assert not (wd / "sub").exists() and (wd / "moved" / "b.txt").read_text() == "keep\n"
    assert os.getxattr(wd / "moved", "user.k") == b"v"
    # Control: the same move under on_exit=abort leaves the directory where it was.
    r = sh(wd, "mv moved again && test -d again", "--on-exit", "abort")
    assert r.returncode == 0, r.stderr
    assert not (wd / "again").exists() and os.getxattr(wd / "moved", "user.k") == b"v"


def test_a_commit_keeps_what_the_host_changed_meanwhile(wd):
    os.setxattr(wd / "sub", "user.old", b"1")
    code = PRELUDE + """
with open("sub/n", "w") as f:
    f.write("n")
os.setxattr("sub", "user.run", b"r")
print("ready", flush=True)
sys.stdin.readline()
"""
    p = subprocess.Popen([SANDLOCK, "run", *cow_flags(wd), "--cwd", str(wd), "--", PY, "-c",
                          code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert p.stdout.readline() == b"ready\n"
    # Meanwhile the host changes the directories the run created in and changed.
    os.setxattr(wd / "sub", "user.host", b"h")
    os.setxattr(wd, "user.hostroot", b"h")
    os.chmod(wd, 0o750)
    p.communicate(b"go\n", timeout=30)
    assert p.returncode == 0
    assert (wd / "sub" / "n").read_text() == "n"
    assert sorted(os.listxattr(wd / "sub")) == ["user.host", "user.old", "user.run"]
    assert os.listxattr(wd) == ["user.hostroot"] and wd.stat().st_mode & 0o777 == 0o750


def steps(wd, code, *host_steps):
    """Run @code (PRELUDE'd) in the workdir's sandbox, committed; each time it prints a line,
    the next of @host_steps runs on the host, then the run goes on."""
    p = subprocess.Popen([SANDLOCK, "run", *cow_flags(wd), "--cwd", str(wd), "--", PY, "-c",
                          PRELUDE + code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for step in host_steps:
        assert p.stdout.readline() == b"ready\n"
        step()
        p.stdin.write(b"go\n")
        p.stdin.flush()
    p.communicate(timeout=30)
    assert p.returncode == 0


WAIT = "print('ready', flush=True); sys.stdin.readline()"


def test_a_commit_keeps_the_hosts_changes_to_a_directory_copied_twice(wd):
    (wd / "d").mkdir(mode=0o755)
    def first():
        os.chmod(wd / "d", 0o700)
        os.setxattr(wd / "d", "user.h", b"1")
    def second():
        os.chmod(wd / "d", 0o750)
        os.removexattr(wd / "d", "user.h")
    steps(wd, f"""
try:  # copies d up, then fails: the copy is taken back
    os.setxattr("d", "system.posix_acl_default", b"xx")
except OSError as e:
    assert e.errno == errno.EINVAL
{WAIT}
open("d/f", "w").close()  # copies d again, as the host left it
{WAIT}
""", first, second)
    assert (wd / "d" / "f").exists()
    assert (wd / "d").stat().st_mode & 0o777 == 0o750 and os.listxattr(wd / "d") == []


def test_a_commit_keeps_what_the_host_put_in_a_directory_the_run_removed(wd):
    steps(wd, f"""
os.unlink("sub/b.txt")
os.rmdir("sub")
{WAIT}
""", lambda: (wd / "sub" / "hostfile").write_text("host\n"))
    assert (wd / "sub" / "hostfile").read_text() == "host\n"
    assert not (wd / "sub" / "b.txt").exists()
    # Control: with nothing put there, the directory goes.
    (wd / "e").mkdir()
    steps(wd, f"""
os.rmdir("e")
{WAIT}
""", lambda: None)
    assert not (wd / "e").exists()


def test_attribute_permission_follows_the_mode_the_run_gave(wd, tmp_path):
    code = """
def attempt(name, mode):
    os.chmod(name, mode)
    try:
        os.setxattr(name, "user.x", b"1"); return 0
    except OSError as e:
        return e.errno
out([attempt("ro", 0o644), attempt("rw", 0o444)])
"""
    def files(root):
        (root / "ro").write_text("r")
        (root / "ro").chmod(0o444)
        (root / "rw").write_text("w")
        (root / "rw").chmod(0o644)
    files(wd)
    got = result_json(py(wd, code, "--on-exit", "abort"))
    # Control: the kernel's answers on plain files (as root, write permission always holds).
    plain = tmp_path / "plain"
    plain.mkdir()
    files(plain)
    k = subprocess.run([PY, "-c", PRELUDE + code], cwd=plain, capture_output=True)
    assert got == json.loads(k.stdout) == [0, 0 if os.geteuid() == 0 else errno.EACCES]


def test_a_read_only_tree_made_writable_and_removed_commits(wd):
    d = wd / "ro"
    (d / "sub").mkdir(parents=True)
    (d / "sub" / "f").write_text("f")
    for p in (d / "sub", d):
        p.chmod(0o555)  # a module cache's read-only tree
    r = sh(wd, "chmod -R u+w ro && rm -rf ro")
    assert r.returncode == 0, r.stderr
    assert not d.exists() and store(wd) == []


def test_a_deletion_the_run_could_not_make_fails_the_commit(wd):
    d = wd / "ro"
    d.mkdir()
    (d / "f").write_text("f")
    d.chmod(0o555)
    r = sh(wd, "rm ro/f")  # not refused in the branch (docs/decisions.md, "Permissions")
    root = os.geteuid() == 0
    # Control: the kernel's answer to the same rm (root may, the user may not).
    k = subprocess.run(["/bin/sh", "-c", f"rm {d}/f.probe 2>/dev/null; touch {d}/f.probe"],
                       capture_output=True)
    assert (k.returncode == 0) == root
    if root:
        assert r.returncode == 0 and not (d / "f").exists() and store(wd) == []
    else:  # the commit does not lend the directory a write bit the run never gave it
        assert r.returncode == 1 and b"Permission denied" in r.stderr, r
        assert (d / "f").read_text() == "f" and len(store(wd)) == 1
    d.chmod(0o755)


def test_read_only_directories_the_run_made_writable_or_read_only_commit(wd):
    (wd / "d").mkdir()
    (wd / "d" / "f").write_text("old")
    (wd / "d").chmod(0o555)
    wd.chmod(0o555)
    r = sh(wd, "chmod u+w . d && rm a.txt && echo x > x && mv x d/f && "
               "mkdir ro && echo f > ro/f && chmod 555 ro")
    assert r.returncode == 0, r.stderr
    assert not (wd / "a.txt").exists() and (wd / "d" / "f").read_text() == "x\n"
    assert (wd / "ro" / "f").read_text() == "f\n"
    assert [oct(p.stat().st_mode & 0o777) for p in (wd, wd / "d", wd / "ro")] == \
        ["0o755", "0o755", "0o555"]
    (wd / "ro").chmod(0o755)


def test_a_directory_the_host_locked_meanwhile_is_not_opened_by_the_commit(wd):
    (wd / "d").mkdir()
    (wd / "d" / "f").write_text("f")
    steps_code = f"""
os.unlink("d/f")
{WAIT}
"""
    root = os.geteuid() == 0
    p = subprocess.Popen([SANDLOCK, "run", *cow_flags(wd), "--cwd", str(wd), "--", PY, "-c",
                          PRELUDE + steps_code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    assert p.stdout.readline() == b"ready\n"
    (wd / "d").chmod(0o555)  # the host locks it
    _, err = p.communicate(b"go\n", timeout=30)
    # The run never made it writable: no write bit is lent (root needs none).
    assert (p.returncode == 0) == root, err
    assert (wd / "d" / "f").exists() != root
    assert (wd / "d").stat().st_mode & 0o777 == 0o555
    (wd / "d").chmod(0o755)


@pytest.mark.parametrize("script,mode", [
    ("rm d/f && chmod 500 d && rmdir d", None),
    ("rm -r d && chmod 555 .", None),
    ("rm d/f && echo g > d/g && chmod 555 d", "0o555"),
])
def test_deletions_the_run_made_before_narrowing_a_mode_commit(wd, script, mode):
    (wd / "d").mkdir()
    (wd / "d" / "f").write_text("f")
    r = sh(wd, script)
    assert r.returncode == 0, r.stderr
    assert not (wd / "d" / "f").exists() and store(wd) == []
    if mode:
        assert oct((wd / "d").stat().st_mode & 0o777) == mode
        assert (wd / "d" / "g").read_text() == "g\n"
    wd.chmod(0o755)
    if (wd / "d").exists():
        (wd / "d").chmod(0o755)


def test_a_deletion_in_a_directory_writable_only_for_a_while_commits(wd):
    (wd / "d").mkdir()
    (wd / "d" / "f").write_text("f")
    (wd / "d").chmod(0o555)
    r = sh(wd, "chmod u+w d && rm d/f && chmod u-w d")
    assert r.returncode == 0, r.stderr
    assert not (wd / "d" / "f").exists()
    assert (wd / "d").stat().st_mode & 0o777 == 0o555  # as the run left it
    (wd / "d").chmod(0o755)


def test_an_access_acl_of_a_directory_the_run_did_not_change_stays(wd):
    d = wd / "d"
    (d / "sub").mkdir(parents=True)
    (d / "sub" / "f").write_text("f")
    # user r-x, named user 0 r-x, group r-x, mask r-x, other r-x: mode 0555 with an ACL
    acl = struct.pack("<I" + "HHI" * 5, 2, 0x01, 5, 0xffffffff, 0x02, 5, 0, 0x04, 5,
                      0xffffffff, 0x10, 5, 0xffffffff, 0x20, 5, 0xffffffff)
    os.setxattr(d, "system.posix_acl_access", acl)
    before = (d.stat().st_mode & 0o7777, os.getxattr(d, "system.posix_acl_access"))
    r = sh(wd, "echo g >> d/sub/f")
    if os.geteuid() == 0:
        assert r.returncode == 0, r.stderr
        assert (d / "sub" / "f").read_text() == "fg\n"
    else:  # a documented limit: the branch's copy of d is read-only for the supervisor too
        assert r.returncode != 0 and b"Permission denied" in r.stderr, r
        assert (d / "sub" / "f").read_text() == "f"
    assert (d.stat().st_mode & 0o7777, os.getxattr(d, "system.posix_acl_access")) == before
    d.chmod(0o755)


def test_the_root_the_host_locks_meanwhile_is_not_opened_by_the_commit(wd):
    root = os.geteuid() == 0
    p = subprocess.Popen([SANDLOCK, "run", *cow_flags(wd), "--cwd", str(wd), "--", PY, "-c",
                          PRELUDE + f"""
{WAIT}
os.unlink("a.txt")
"""], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout.readline() == b"ready\n"
    wd.chmod(0o555)  # the host locks the workdir before the run deletes in it
    _, err = p.communicate(b"go\n", timeout=30)
    assert (p.returncode == 0) == root, err
    assert (wd / "a.txt").exists() != root
    wd.chmod(0o755)


@pytest.mark.parametrize("script", ["chmod -R u+w d && rm -rf d && mkdir d",
                                    "chmod u+w d && mv d e && mkdir d"])
def test_a_directory_made_again_keeps_its_new_mode(wd, script):
    (wd / "d").mkdir()
    (wd / "d" / "f").write_text("f")
    (wd / "d").chmod(0o555)
    r = sh(wd, script)
    assert r.returncode == 0 or b"Permission denied" in r.stderr, r
    if r.returncode == 0:
        assert (wd / "d").stat().st_mode & 0o777 == 0o755 and not (wd / "d" / "f").exists()
    for p in (wd / "d", wd / "e"):
        if p.exists():
            p.chmod(0o755)


def test_a_directory_made_again_keeps_its_mode_when_the_host_kept_the_old_one(wd):
    (wd / "d").mkdir()
    (wd / "d" / "f").write_text("f")
    (wd / "d").chmod(0o555)
    def host():
        (wd / "d").chmod(0o755)
        (wd / "d" / "g").write_text("host\n")  # the old directory is not empty any more
        (wd / "d").chmod(0o555)
    steps(wd, f"""
os.system("chmod -R u+w d && rm -rf d && mkdir d")
{WAIT}
""", host)
    assert (wd / "d" / "g").read_text() == "host\n" and not (wd / "d" / "f").exists()
    assert (wd / "d").stat().st_mode & 0o777 == 0o755  # the run's mkdir, umask 022
    (wd / "d").chmod(0o755)


def test_a_failed_attribute_change_copies_nothing(wd):
    a = wd / "a.txt"
    os.setxattr(a, "user.keep", b"1")
    os.link(a, wd / "a2.txt")
    os.symlink("a.txt", wd / "link")
    ino = a.stat().st_ino
    code = """
def call(f):
    try:
        f(); return 0
    except OSError as e:
        return e.errno
out([call(lambda: os.removexattr("a.txt", "user.absent")),
     call(lambda: os.setxattr("a.txt", "user.keep", b"2", os.XATTR_CREATE)),
     call(lambda: os.setxattr("a.txt", "user.new", b"2", os.XATTR_REPLACE)),
     call(lambda: os.setxattr("a.txt", "user.x", b"2", 4)),
     call(lambda: os.setxattr("a.txt", "nospace.x", b"2")),
     call(lambda: os.setxattr("link", "user.x", b"2", follow_symlinks=False)),
     call(lambda: os.setxattr("a.txt", "trusted.x", b"2")),
     call(lambda: os.setxattr("a.txt", "security.x", b"2")),
     call(lambda: os.setxattr("a.txt", "system.x", b"2")),
     call(lambda: os.setxattr("a.txt", "system.posix_acl_access", b"bad"))])
"""
    r = py(wd, code, "--on-exit", "keep")
    # trusted.* and security.* are never made for the run (the supervisor would stand in for
    # the caller's capabilities): EPERM whoever runs it.
    assert result_json(r) == [errno.ENODATA, errno.EEXIST, errno.ENODATA, errno.EINVAL,
                              errno.EOPNOTSUPP, errno.EPERM, errno.EPERM, errno.EPERM,
                              errno.EOPNOTSUPP, errno.EINVAL]
    (branch,) = store(wd)
    assert os.listdir(wd.parent / "store" / branch / "upper") == []  # nothing copied up
    # Control: the same calls on the plain files give the same answers (trusted.* and
    # security.* aside: the kernel's answer depends on the caller's capabilities).
    k = subprocess.run([PY, "-c", PRELUDE + code], cwd=wd, capture_output=True)
    kernel = json.loads(k.stdout)
    assert kernel[:6] + kernel[8:] == result_json(r)[:6] + result_json(r)[8:]
    assert a.stat().st_ino == ino == (wd / "a2.txt").stat().st_ino  # still one file


def test_a_commit_keeps_extended_attributes(wd):
    a = wd / "a.txt"
    os.setxattr(a, "user.keep", b"kept")
    r = py(wd, """
with open("a.txt", "a") as f:
    f.write("more\\n")
fd = os.open("made.txt", os.O_CREAT | os.O_WRONLY, 0o644)
os.setxattr(fd, "user.made", b"2")
out(os.getxattr("a.txt", "user.keep").decode())
""")
    assert result_json(r) == "kept"
    assert a.read_text() == "hello\nmore\n"
    assert os.getxattr(a, "user.keep") == b"kept"  # copied up with the file, merged back
    assert os.getxattr(wd / "made.txt", "user.made") == b"2"


def test_dry_run_lists_changes_and_leaves_the_tree(wd):
    before = snapshot(wd)
    r = sh(wd, "echo more >> a.txt; echo new > n.txt; rm sub/b.txt", "--dry-run")
    assert r.returncode == 0, r.stderr
    # The change list goes to stderr, apart from the command's output.
    assert (r.stdout, r.stderr) == (b"", b"M a.txt\nA n.txt\nD sub/b.txt\n")
    assert snapshot(wd) == before and store(wd) == []
    r = sh(wd, "cat a.txt", "--dry-run")
    assert (r.stdout, r.stderr) == (b"hello\n", b"no changes\n")
    r = run(*SYSTEM_READ, "--dry-run", "--", "/bin/true")
    assert r.returncode == 2 and b"--dry-run needs --workdir" in r.stderr


def test_keep_leaves_the_branch_on_disk(wd):
    r = sh(wd, "echo kept > k.txt; rm a.txt", "--on-exit", "keep")
    assert r.returncode == 0
    assert not (wd / "k.txt").exists() and (wd / "a.txt").exists()
    (branch,) = store(wd)
    root = wd.parent / "store" / branch
    assert (root / "upper" / "k.txt").read_text() == "kept\n"
    assert (root / "whiteouts").read_bytes() == b"a.txt\0"
    # Control: the same run committed leaves no branch and lands its changes.
    r = sh(wd, "echo kept > k.txt; rm a.txt")
    assert r.returncode == 0 and (wd / "k.txt").exists() and not (wd / "a.txt").exists()
    assert store(wd) == [branch]


def test_two_sandboxes_commit_to_one_workdir(wd):
    results = [None, None]

    def one(i):
        results[i] = sh(wd, f"for n in $(seq 50); do echo {i} > f{i}-$n; done")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
    names = sorted(p for p in os.listdir(wd) if p.startswith("f"))
    assert len(names) == 100  # nothing lost
    assert store(wd) == []


def test_a_commit_killed_midway_leaves_the_branch_marked(wd):
    env = dict(os.environ, SANDLOCK_TEST_COMMIT_CRASH="3")
    r = sh(wd, "for n in 1 2 3 4 5 6 7 8; do echo new$n > n$n; done", env=env)
    assert r.returncode == -signal.SIGKILL  # killed after 3 entries were merged
    (branch,) = store(wd)
    root = wd.parent / "store" / branch
    assert (root / "COMMITTING").exists()  # marked: not reported as done
    merged = sorted(p for p in os.listdir(wd) if p.startswith("n"))
    left = sorted(p for p in os.listdir(root / "upper") if p.startswith("n"))
    assert len(merged) == 3 and len(left) == 5
    assert sorted(merged + left) == [f"n{i}" for i in range(1, 9)]
    for name in merged:  # each merged file whole, never half-written
        assert (wd / name).read_text() == f"new{name[1:]}\n"
    assert (wd / "a.txt").read_text() == "hello\n"


def test_fifo_under_workdir_is_a_kernel_object(wd):
    os.mkfifo(wd / "pipe")
    r = py(wd, """
res = {}
fd = os.open("pipe", os.O_RDONLY | os.O_NONBLOCK)
res["open"] = os.fstat(fd).st_mode & 0o170000 == 0o010000
for name, f in (("rename", os.rename), ("link", os.link)):
    try:
        f("pipe", "pipe2"); res[name] = 0
    except OSError as e:
        res[name] = e.errno
out(res)
""", "--on-exit", "abort")
    assert result_json(r) == {"open": True, "rename": 18, "link": 18}  # EXDEV
    # Control: a regular file renames fine.
    r = sh(wd, "mv a.txt a2.txt && cat a2.txt", "--on-exit", "abort")
    assert r.returncode == 0 and r.stdout == b"hello\n"


def test_writable_grants_and_the_workdir(wd, tmp_path):
    # A writable grant of the workdir itself: still written through the branch only.
    r = sh(wd, "echo x > w.txt", "-w", str(wd), "--on-exit", "abort")
    assert r.returncode == 0 and not (wd / "w.txt").exists()
    # One holding it is refused with the reason.
    r = run(*SYSTEM_READ, "--workdir", str(wd), "-w", str(tmp_path), "--", "/bin/true")
    assert r.returncode == 1
    assert b"not supported yet: --fs-write" in r.stderr and b"holding the workdir" in r.stderr
    # A branch the sandbox could write is refused: the supervisor acts on it.
    other = tmp_path / "other"
    other.mkdir()
    r = run(*SYSTEM_READ, "--workdir", str(wd), "--fs-storage", str(other), "-w", str(other),
            "--", "/bin/true")
    assert r.returncode == 1
    assert b"--fs-storage: " in r.stderr and b"is inside the writable grant" in r.stderr
    assert os.listdir(other) == []  # and it is not left behind
    # The branch's settings without a workdir are mistakes, said as such.
    for flag, value, field in (("--max-disk", "1K", "max_disk"),
                               ("--fs-storage", "/tmp", "fs_storage"),
                               ("--on-exit", "keep", "on_exit"),
                               ("--on-error", "commit", "on_error")):
        r = run(*SYSTEM_READ, flag, value, "--", "/bin/true")
        # Named by the flags typed.
        assert r.returncode == 1 and f"sandlock: {flag}: needs --workdir".encode() in r.stderr
    # Control: the defaults said out loud are fine.
    assert run(*SYSTEM_READ, "--on-exit", "commit", "--", "/bin/true").returncode == 0


def test_outside_the_workdir_nothing_changes(wd, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "o.txt").write_text("o\n")
    r = sh(wd, f"cat {other}/o.txt && echo x > {other}/new", "-r", str(other), "--on-exit",
           "abort")
    assert r.stdout == b"o\n" and r.returncode != 0  # read granted, write refused by Landlock
    assert b"Permission denied" in r.stderr
    r = sh(wd, f"echo x > {other}/new", "-w", str(other), "--on-exit", "abort")
    assert r.returncode == 0 and (other / "new").read_text() == "x\n"  # written for real


def test_change_digest_matches_sha256sum(wd):
    data = os.urandom(10000)
    (wd / "blob").write_bytes(data)
    r = sh(wd, "cp blob blob2 && sha256sum blob2", "--on-exit", "abort")
    assert r.returncode == 0
    assert r.stdout.split()[0].decode() == hashlib.sha256(data).hexdigest()
    assert not (wd / "blob2").exists()
    # Control: without the workdir the copy is refused (the directory is read-only).
    r = run(*SYSTEM_READ, "-r", str(wd), "--cwd", str(wd), "--", "/bin/sh", "-c",
            "cp blob blob2")
    assert r.returncode != 0 and b"Permission denied" in r.stderr


def test_metadata_through_a_descriptor_and_o_path(wd):
    # glibc's fchmodat(AT_SYMLINK_NOFOLLOW) opens O_PATH and chmods /proc/self/fd/N: made in
    # the branch, the workdir's modes untouched.
    before = snapshot(wd)
    r = py(wd, """
os.chmod("a.txt", 0o600, follow_symlinks=False)
open("n", "w").close()
os.chmod("n", 0o640, follow_symlinks=False)
fd = os.open("sub", os.O_PATH)
os.chmod(f"/proc/self/fd/{fd}", 0o700)
fd2 = os.open("a.txt", os.O_RDONLY)
os.fchmod(fd2, 0o604)
out([oct(os.stat(p).st_mode & 0o777) for p in ("a.txt", "n", "sub")])
""", "--on-exit", "abort")
    assert result_json(r) == ["0o604", "0o640", "0o700"]
    assert snapshot(wd) == before
    # Control: outside the workdir the same calls reach the file itself.
    other = wd.parent / "other"
    other.mkdir()
    (other / "f").write_text("")
    r = run(*SYSTEM_READ, "-w", str(other), "--", PY, "-c",
            f"import os; os.chmod('{other}/f', 0o600, follow_symlinks=False)")
    assert r.returncode == 0 and (other / "f").stat().st_mode & 0o777 == 0o600


def test_tar_extracts_into_the_workdir(wd, tmp_path):
    src = tmp_path / "src"
    (src / "t" / "d").mkdir(parents=True)
    (src / "t" / "d" / "f").write_text("f\n")
    os.symlink("d/f", src / "t" / "l")
    subprocess.run(["tar", "-cf", str(tmp_path / "t.tar"), "-C", str(src), "t"], check=True)
    r = run(*cow_flags(wd, "-r", str(tmp_path / "t.tar")), "--", "tar", "-xf",
            str(tmp_path / "t.tar"), "-C", str(wd))
    assert r.returncode == 0, r.stderr
    assert (wd / "t" / "d" / "f").read_text() == "f\n" and os.readlink(wd / "t" / "l") == "d/f"


def test_metadata_by_descriptor_and_magic_links_never_reach_the_workdir(wd):
    before = snapshot(wd)
    r = py(wd, """
res = {}
AT_EMPTY_PATH = 0x1000
fd = os.open("a.txt", os.O_PATH)
libc.fchownat.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_int]
res["fchownat_empty"] = libc.fchownat(fd, b"", os.getuid(), os.getgid(), AT_EMPTY_PATH)
os.utime(fd if False else "a.txt", (1000000000, 1000000000))
procfd = os.open("/proc", os.O_PATH)
def err(f):
    try:
        f(); return 0
    except OSError as e:
        return e.errno
res["proc_rel"] = err(lambda: os.chmod("self/cwd/a.txt", 0o622, dir_fd=procfd))
res["proc_dot"] = err(lambda: os.chmod("/./proc/self/cwd/a.txt", 0o622))
res["mtime"] = os.stat("a.txt").st_mtime
out(res)
""", "-r", "/proc", "--on-exit", "abort")
    got = result_json(r)
    assert got["fchownat_empty"] == 0 and got["mtime"] == 1000000000  # the branch's copy
    assert got["proc_rel"] == 13 and got["proc_dot"] == 13  # magic links: refused
    assert snapshot(wd) == before
    assert os.stat(wd / "a.txt").st_mtime != 1000000000


def test_workdir_needs_fs_truncate(wd):
    r = sh(wd, "true", "--disable", "fs-truncate")
    assert r.returncode == 1
    assert b"sandlock: --workdir needs the fs-truncate protection (Landlock ABI 3), which is " \
        b"disabled here" in r.stderr
    # Control: with it in force (the default) the same run works.
    assert sh(wd, "true").returncode == 0


def test_a_denied_path_in_or_above_the_workdir_is_refused(wd, tmp_path):
    (wd / "sec").mkdir()
    (wd / "sec" / "s").write_text("secret\n")
    os.symlink(wd, tmp_path / "link")
    spellings = (wd / "sec", wd / "sec" / "s", wd / "not-yet", tmp_path,
                 tmp_path / "link" / "not-yet", f"{tmp_path}/./work/not-yet",
                 f"{tmp_path}//work/not-yet", tmp_path / "dangling" / "x")
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, wd / "lnk")  # the run could replace it with a directory
    os.symlink(wd, tmp_path / "wdlink")  # a symlink above the workdir, and "//"
    spellings += (wd / "lnk" / "secret", tmp_path / "wdlink" / "lnk" / "secret",
                  f"{tmp_path}//work/lnk/secret")
    for denied in spellings:
        r = run(*cow_flags(wd, "--fs-deny", str(denied)), "--", "/bin/cat",
                str(wd / "sec" / "s"))
        assert r.returncode == 1 and r.stdout == b"", (denied, r)
        assert b"not supported yet: --fs-deny inside or above the workdir" in r.stderr
    # Control: a denied path elsewhere goes with a workdir (and is denied).
    other = tmp_path / "other"
    other.mkdir()
    (other / "o").write_text("o\n")
    r = run(*cow_flags(wd, "-r", str(other), "--fs-deny", str(other / "o")), "--", "/bin/sh",
            "-c", f"cat {wd}/sec/s; cat {other}/o")
    assert r.stdout == b"secret\n" and b"Permission denied" in r.stderr, r


def test_workdir_with_another_user_is_refused(wd):
    r = run(*cow_flags(wd), "--user", "1000:1000", "--", "/bin/true")
    assert r.returncode == 1 and b"not supported yet: --workdir with --user" in r.stderr
