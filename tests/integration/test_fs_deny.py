# SPDX-License-Identifier: LGPL-2.1-or-later
"""fs_denied inside read grants (inside writable ones: test_fs_deny_write.py): the denied paths
are carved out of the Landlock grant (the siblings are granted, never the denied inode), so the
kernel refuses them under any name and nothing is trapped. Each refusal has its control: the same access without --fs-deny works."""

import json
import os
import shutil
import subprocess
import time

import pytest

from conftest import PY, SANDLOCK, SYSTEM_READ, require, run

PROBE = r"""
import ctypes, json, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
class OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]
res = {}
for spec in sys.argv[1:]:
    kind, path = spec.split("=", 1)
    try:
        if kind == "read":
            with open(path) as f:
                res[spec] = f.read().strip()
        elif kind == "list":
            res[spec] = sorted(os.listdir(path))
        elif kind == "exec":
            pid = os.fork()
            if pid == 0:
                try:
                    os.execv(path, [path])
                except OSError as e:
                    os._exit(100 + e.errno)
            res[spec] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        elif kind == "openat2":
            how = OpenHow(os.O_RDONLY, 0, 0)
            fd = libc.syscall(437, -100, path.encode(), ctypes.byref(how), ctypes.sizeof(how))
            res[spec] = "opened" if fd >= 0 else ctypes.get_errno()
        elif kind == "wait-read":  # wait for the host to create it, then read it
            while not os.path.exists(path):
                time.sleep(0.01)
            with open(path) as f:
                res[spec] = f.read().strip()
    except OSError as e:
        res[spec] = e.errno
print(json.dumps(res))
"""


def probe(flags, *specs, **kw):
    r = run(*SYSTEM_READ, *flags, "--", PY, "-c", PROBE, *specs, timeout=60, **kw)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture
def tree(tmp_path):
    """tree/a/{secret, open, sub/deep, link -> secret, chain -> link, bin}, tree/b/tosib -> ../a/open"""
    a, b = tmp_path / "tree" / "a", tmp_path / "tree" / "b"
    (a / "sub").mkdir(parents=True)
    b.mkdir()
    (a / "secret").write_text("secret")
    (a / "open").write_text("open")
    (a / "sub" / "deep").write_text("deep")
    (a / "link").symlink_to("secret")
    (a / "chain").symlink_to("link")
    (b / "tosecret").symlink_to("../a/secret")
    shutil.copy("/bin/true", a / "bin")
    return tmp_path / "tree"


def test_denied_file_under_every_name(tree):
    a = tree / "a"
    specs = [f"read={a / 'secret'}", f"read={a / 'link'}", f"read={a / 'chain'}",
             f"read={tree / 'b' / 'tosecret'}", f"read={a / '..' / 'a' / '.' / 'secret'}",
             f"openat2={a / 'secret'}", f"read={a / 'open'}", f"read={a / 'sub' / 'deep'}",
             f"list={a}"]
    control = probe(["-r", str(tree)], *specs)
    assert [control[s] for s in specs[:8]] == ["secret"] * 5 + ["opened", "open", "deep"]
    got = probe(["-r", str(tree), "--fs-deny", str(a / "secret")], *specs)
    for spec in specs[:6]:
        assert got[spec] == 13, spec  # EACCES, whatever the name
    # The rest of the grant is untouched; the directory still lists (names only).
    assert got[specs[6]] == "open" and got[specs[7]] == "deep"
    assert got[specs[8]] == control[specs[8]]


def test_denied_binary_is_not_executed(tree):
    spec = f"exec={tree / 'a' / 'bin'}"
    assert probe(["-r", str(tree)], spec) == {spec: 0}
    assert probe(["-r", str(tree), "--fs-deny", str(tree / "a" / "bin")], spec) == {
        spec: 100 + 13}


def test_denied_directory(tree):
    a = tree / "a"
    specs = [f"read={a / 'sub' / 'deep'}", f"read={a / 'open'}"]
    assert probe(["-r", str(tree)], *specs) == {specs[0]: "deep", specs[1]: "open"}
    assert probe(["-r", str(tree), "--fs-deny", str(a / "sub")], *specs) == {
        specs[0]: 13, specs[1]: "open"}


def test_deny_covering_a_grant_wins(tree):
    spec = f"read={tree / 'a' / 'open'}"
    assert probe(["-r", str(tree / "a")], spec) == {spec: "open"}
    assert probe(["-r", str(tree / "a"), "--fs-deny", str(tree)], spec) == {spec: 13}


def test_a_denied_path_created_during_the_run(tree):
    # Not there at start: its name is left out of the grant, so the file the host creates
    # later is refused. Control: without the deny, the sandbox reads it.
    for flags, expect in (([], "late"), (["--fs-deny", str(tree / "a" / "late")], 13)):
        target = tree / "a" / "late"
        spec = f"wait-read={target}"
        proc = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, "-r", str(tree), *flags, "--",
                                 PY, "-c", PROBE, spec], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        time.sleep(0.3)
        target.write_text("late")
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert json.loads(out) == {spec: expect}
        target.unlink()


def test_a_file_with_other_names_is_refused(tree):
    os.link(tree / "a" / "open", tree / "b" / "hardlink")
    r = run(*SYSTEM_READ, "-r", str(tree), "--fs-deny", str(tree / "a" / "open"), "--", "true",
            timeout=30)
    assert r.returncode == 1
    assert r.stderr.decode().splitlines() == [
        f"sandlock: not supported yet: --fs-deny of a file with other hard links "
        f"({tree / 'a' / 'open'} has 2 names)"]
    # Control: with one name, it runs.
    os.unlink(tree / "b" / "hardlink")
    assert run(*SYSTEM_READ, "-r", str(tree), "--fs-deny", str(tree / "a" / "open"), "--",
               "true", timeout=30).returncode == 0


def in_mount_namespace(script):
    """Run @script under sh in a new user and mount namespace (root there, so it may bind
    mount)."""
    return subprocess.run(["unshare", "-Urm", "sh", "-c", script], capture_output=True,
                          timeout=60)


def test_a_bind_mount_of_the_denied_file_beside_it(tree):
    a = tree / "a"
    (a / "other").write_text("decoy")
    probe_ok = subprocess.run(["unshare", "-Urm", "true"], capture_output=True).returncode == 0
    require(probe_ok, "user and mount namespaces (unshare -Urm)")
    sl = " ".join([SANDLOCK, "run", *SYSTEM_READ, "-r", str(tree)])
    script = (f"mount --bind {a / 'secret'} {a / 'other'} && "
              f"{sl} -- cat {a / 'secret'} {a / 'other'}; echo rc=$?; "
              f"{sl} --fs-deny {a / 'secret'} -- cat {a / 'secret'}; echo rc=$?; "
              f"{sl} --fs-deny {a / 'secret'} -- cat {a / 'other'}; echo rc=$?")
    r = in_mount_namespace(script)
    # Control: both names read; denied: the same inode under either name is refused.
    assert r.stdout.decode() == "secretsecretrc=0\nrc=1\nrc=1\n", r.stderr
    assert r.stderr.decode().count("Permission denied") == 2


def test_a_hard_link_beneath_a_denied_directory_is_refused(tree):
    os.link(tree / "a" / "sub" / "deep", tree / "b" / "deeplink")
    r = run(*SYSTEM_READ, "-r", str(tree), "--fs-deny", str(tree / "a" / "sub"), "--", "true",
            timeout=30)
    assert r.returncode == 1
    assert r.stderr.decode().splitlines() == [
        f"sandlock: not supported yet: --fs-deny of a file with other hard links "
        f"({tree / 'a' / 'sub' / 'deep'})"]
    os.unlink(tree / "b" / "deeplink")  # control: with one name it runs
    assert run(*SYSTEM_READ, "-r", str(tree), "--fs-deny", str(tree / "a" / "sub"), "--",
               "true", timeout=30).returncode == 0


def test_a_dangling_symlink_on_the_way_is_refused(tree):
    (tree / "a" / "dl").symlink_to("../b/future")
    r = run(*SYSTEM_READ, "-r", str(tree), "--fs-deny", str(tree / "a" / "dl" / "secret"),
            "--", "true", timeout=30)
    assert r.returncode == 1
    assert r.stderr.decode().splitlines() == [
        f"sandlock: --fs-deny: {tree / 'a' / 'dl' / 'secret'}: goes through a symlink that "
        f"points nowhere (deny where it points instead)"]
    (tree / "b" / "future").mkdir()  # control: once it points somewhere, it runs
    assert run(*SYSTEM_READ, "-r", str(tree), "--fs-deny", str(tree / "a" / "dl" / "secret"),
               "--", "true", timeout=30).returncode == 0
