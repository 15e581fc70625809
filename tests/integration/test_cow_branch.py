# SPDX-License-Identifier: LGPL-2.1-or-later
"""The workdir's branch as the supervisor's own: what max_disk charges beyond file bytes
(symlinks, directories, extended attributes, a non-dumpable task's writes), a commit that lands
only what the run made (entries put in the branch by anyone else refuse it), the per-user store
root that every sandbox's grants leave out, and the workdir's stand-ins of a run that was
killed, taken away by the next. Each with its control."""

import errno
import os
import pathlib
import signal
import subprocess
import time

import pytest

from conftest import PY, PRELUDE, SANDLOCK, SYSTEM_READ, result_json, run


@pytest.fixture
def wd(tmp_path):
    w = tmp_path / "work"
    (w / "sub").mkdir(parents=True)
    (w / "a.txt").write_text("hello\n")
    (tmp_path / "store").mkdir()
    return w


def cow_flags(wd, *more):
    return [*SYSTEM_READ, "--workdir", str(wd), "--fs-storage", str(wd.parent / "store"),
            *more]


def py(wd, code, *more, args=(), **kw):
    return run(*cow_flags(wd, *more), "--cwd", str(wd), "--", PY, "-c", PRELUDE + code,
               *args, **kw)


# ---- max_disk ---------------------------------------------------------------------------------

COUNT = """
def count(f, n):
    for i in range(n):
        try:
            f(i)
        except OSError as e:
            return [i, e.errno]
    return [n, 0]
"""

MAKERS = {
    # 3,000 symlinks of 4,000-byte targets: 12 MB the branch holds in their targets.
    "symlink": ("os.symlink('x' * 4000, f'l{i}')", 3000),
    # 3,000 directories: a block each.
    "mkdir": ("os.mkdir(f'd{i}')", 3000),
    # 1,000 files of one 3,000-byte attribute each.
    "xattr": ("(open(f'x{i}', 'w').close(), os.setxattr(f'x{i}', 'user.v', b'v' * 3000))",
              1000),
}


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_max_disk_charges_what_a_branch_holds_beyond_file_bytes(wd, kind):
    make, n = MAKERS[kind]
    code = COUNT + f"out(count(lambda i: {make}, {n}))"
    r = py(wd, code, "--max-disk", "1M", "--on-exit", "abort", timeout=120)
    done, err = result_json(r)
    # Under the quota it works; past it, ENOSPC (well before the 12, 12 or 3 MB asked).
    assert err == errno.ENOSPC and 10 < done < n // 2, (done, err, r.stderr)
    # Control: without the quota every one is made.
    r = py(wd, code, "--on-exit", "abort", timeout=120)
    assert result_json(r) == [n, 0], r.stderr


def test_max_disk_removed_entries_give_their_space_back(wd):
    """A directory or symlink made and removed again and again stays within the quota."""
    code = COUNT + """
def again(i):
    os.mkdir("d"); os.symlink("x" * 4000, "l"); os.rmdir("d"); os.unlink("l")
out(count(again, 2000))
"""
    r = py(wd, code, "--max-disk", "1M", "--on-exit", "abort", timeout=120)
    assert result_json(r) == [2000, 0], r.stderr


NODUMP_WRITE = """
fd = os.open("big", os.O_WRONLY | os.O_CREAT, 0o644)
if len(sys.argv) > 1:
    assert libc.prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE
try:
    for i in range(64):
        os.write(fd, b"x" * 32768)  # 2 MB
    os._exit(0)
except OSError as e:
    os._exit(e.errno)  # (its stdout is refused too, under the quota: said by the status)
"""


def test_max_disk_a_non_dumpable_task_writes_nothing_uncharged(wd):
    """A non-dumpable task's descriptors are hidden from a supervisor without CAP_SYS_PTRACE:
    its writes are refused (EPERM) rather than left uncharged; as root they are charged
    (ENOSPC past the quota)."""
    r = py(wd, NODUMP_WRITE, "--max-disk", "1M", "--on-exit", "abort", args=("nodump",))
    assert r.returncode == (errno.ENOSPC if os.geteuid() == 0 else errno.EPERM), r.stderr
    # Controls: the same task, dumpable, is charged (ENOSPC); without the quota it writes.
    r = py(wd, NODUMP_WRITE, "--max-disk", "1M", "--on-exit", "abort")
    assert r.returncode == errno.ENOSPC, r.stderr
    r = py(wd, NODUMP_WRITE, "--on-exit", "abort", args=("nodump",))
    assert r.returncode == 0, r.stderr


# ---- the store root ---------------------------------------------------------------------------

STORE_ROOT = pathlib.Path(f"/var/tmp/sandlock-{os.geteuid()}")

TRY_WRITE = """
import glob
res = {}
for p in sys.argv[1:]:
    try:
        with open(p, "w") as f:
            f.write("evil\\n")
        res[p] = 0
    except OSError as e:
        res[p] = e.errno
out(res)
"""


def test_another_sandbox_cannot_reach_a_running_sandboxs_branch(wd, tmp_path):
    """Sandbox A runs over a workdir with the default storage; sandbox B of the same user,
    granted /tmp and /var/tmp, tries to add a file to A's branch and to rewrite A's own: both
    refused (EACCES), and A's commit lands its own file only. Control: B's grants work beside
    the branches."""
    mark = f"m-{os.getpid()}-{time.monotonic_ns()}.txt"
    a = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, "--workdir", str(wd), "--cwd", str(wd),
                          "--", "/bin/sh", "-c",
                          f"echo mine > {mark}; i=0; while [ ! -e go ] && [ $i -lt 600 ]; "
                          "do sleep 0.05; i=$((i+1)); done"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        found = []
        for _ in range(200):
            found = (glob_paths(f"/tmp/sandlock-*/upper/{mark}") +
                     glob_paths(f"{STORE_ROOT}/*/upper/{mark}"))
            if found:
                break
            time.sleep(0.01)
        assert found, "A's branch never showed"
        upper = pathlib.Path(found[0]).parent
        evil = [str(upper / "evil.txt"), str(upper / mark)]
        beside = tmp_path / "beside.txt"
        r = run(*SYSTEM_READ, "-w", "/tmp", "-w", "/var/tmp", "--", PY, "-c",
                PRELUDE + TRY_WRITE, *evil, str(beside))
        res = result_json(r)
        assert res == {evil[0]: errno.EACCES, evil[1]: errno.EACCES, str(beside): 0}, res
        assert (upper / mark).read_text() == "mine\n"
        assert beside.read_text() == "evil\n"  # the control
    finally:
        (wd / "go").write_text("")  # (the host's: A sees it through the workdir and ends)
        out, err = a.communicate(timeout=30)
    assert a.returncode == 0, err
    assert (wd / mark).read_text() == "mine\n"
    assert not (wd / "evil.txt").exists()


def glob_paths(pattern):
    import glob
    return glob.glob(pattern)


def test_the_store_root_is_private_and_out_of_every_grant(wd):
    """The default storage is one directory of the user's, 0700; a sandbox granted what holds it
    lists no branch's files and makes nothing there, while what it makes beside it works."""
    r = run(*SYSTEM_READ, "--workdir", str(wd), "--cwd", str(wd), "--on-exit", "abort", "--",
            "/bin/true")
    assert r.returncode == 0, r.stderr
    st = STORE_ROOT.lstat()
    assert (st.st_uid, stat_mode(st)) == (os.geteuid(), 0o700)
    probe = STORE_ROOT / f"probe-{os.getpid()}"
    code = f"""
res = []
for f in (lambda: open({str(probe)!r}, "w"), lambda: os.mkdir({str(probe)!r}),
          lambda: open("/var/tmp/beside-{os.getpid()}", "w")):
    try:
        f(); res.append(0)
    except OSError as e:
        res.append(e.errno)
out(res)
"""
    r = run(*SYSTEM_READ, "-w", "/var/tmp", "--", PY, "-c", PRELUDE + code)
    try:
        assert result_json(r) == [errno.EACCES, errno.EACCES, 0], r.stderr
        assert not probe.exists()
    finally:
        for p in (probe, pathlib.Path(f"/var/tmp/beside-{os.getpid()}")):
            if p.is_file():
                p.unlink()


def stat_mode(st):
    return st.st_mode & 0o7777


# ---- stand-ins a killed run left ---------------------------------------------------------------

KILLED_RUN = ("mkdir -p build/out && cd build/out && printf '#!/bin/sh\\nexec sleep 60\\n' > prog && "
              "chmod +x prog && ./prog")


def killed_run(wd, flags=None):
    """A run that enters a directory it made and executes a program it wrote, killed with
    SIGKILL (sandlock itself: no clean-up) once the workdir holds their stand-ins."""
    flags = cow_flags(wd) if flags is None else flags
    p = subprocess.Popen([SANDLOCK, "run", *flags, "--cwd", str(wd), "--", "/bin/sh",
                          "-c", KILLED_RUN], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    for _ in range(500):
        if (wd / "build" / "out" / "prog").exists():
            break
        time.sleep(0.01)
    time.sleep(0.1)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=10)
    assert (wd / "build" / "out" / "prog").is_file(), "the exec link never showed"


def test_a_killed_runs_stand_ins_are_taken_away_by_the_next_run(wd):
    killed_run(wd)
    # They outlive the run (nothing could take them away then) ...
    assert (wd / "build").is_dir() and (wd / "build" / "out" / "prog").is_file()
    (wd / "mine.txt").write_text("the user's\n")
    r = run(*cow_flags(wd), "--cwd", str(wd), "--", "/bin/true")
    assert r.returncode == 0, r.stderr
    # ... and the next run of the workdir takes them away, nothing else.
    assert sorted(os.listdir(wd)) == ["a.txt", "mine.txt", "sub"]
    assert (wd / "mine.txt").read_text() == "the user's\n"


def test_a_stand_in_the_user_replaced_stays(wd):
    """Control: only what the record names, where it still is that very entry: a program the
    user put at the link's name is kept, and so is the directory holding it."""
    killed_run(wd)
    prog = wd / "build" / "out" / "prog"
    prog.unlink()
    prog.write_text("the user's\n")
    r = run(*cow_flags(wd), "--cwd", str(wd), "--", "/bin/true")
    assert r.returncode == 0, r.stderr
    assert prog.read_text() == "the user's\n"


def test_sandlock_ps_takes_away_what_killed_runs_left(wd):
    """A run with the default storage (the store root), killed: `sandlock ps` takes its
    stand-ins away as it does the stale runtime directories."""
    killed_run(wd, [*SYSTEM_READ, "--workdir", str(wd)])
    assert (wd / "build" / "out" / "prog").is_file()
    r = subprocess.run([SANDLOCK, "ps"], capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(wd)) == ["a.txt", "sub"]


def test_check_names_the_store_root_and_its_clean_up():
    r = subprocess.run([SANDLOCK, "check"], capture_output=True, timeout=30)
    assert f"Workdir branches: {STORE_ROOT}/ ".encode() in r.stdout, r.stdout
    assert b"taken away by the next run" in r.stdout
