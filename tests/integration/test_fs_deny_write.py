# SPDX-License-Identifier: LGPL-2.1-or-later
"""fs_denied inside a writable grant: the denied path is carved out of the Landlock grant, and
what the sandbox creates, removes, renames, links, truncates and opens in the directories on
the way to it is done by the supervisor, decided on the file reached. Each refusal is checked
against the same calls without --fs-deny (the control), on a fresh copy of the tree."""

import json
import shutil
import subprocess

import pytest

from conftest import PY, RACE, SYSTEM_READ, run

PROBE = r"""
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]
res = []
for spec in sys.argv[1:]:
    kind, _, arg = spec.partition("=")
    kind = kind.split("#")[0]  # "create#2": the same call again
    a, _, b = arg.partition(":")
    try:
        if kind == "read":
            with open(a) as f:
                out = f.read()
        elif kind == "append":
            with open(a, "a") as f:
                f.write("x")
            out = "ok"
        elif kind == "trunc":
            os.close(os.open(a, os.O_WRONLY | os.O_TRUNC))
            out = "ok"
        elif kind == "truncate":
            os.truncate(a, 0)
            out = "ok"
        elif kind == "create":  # O_CREAT|O_EXCL, then written
            fd = os.open(a, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, b"new")
            os.close(fd)
            out = "ok"
        elif kind == "overwrite":  # O_CREAT|O_TRUNC on what may exist
            with open(a, "w") as f:
                f.write(b)
            out = "ok"
        elif kind == "mkdir":
            os.mkdir(a)
            out = "ok"
        elif kind == "mkfifo":
            os.mkfifo(a)
            out = "ok"
        elif kind == "rmdir":
            os.rmdir(a)
            out = "ok"
        elif kind == "unlink":
            os.unlink(a)
            out = "ok"
        elif kind == "rename":
            os.rename(a, b)
            out = "ok"
        elif kind == "exchange":  # renameat2(RENAME_EXCHANGE)
            if libc.renameat2(-100, a.encode(), -100, b.encode(), 2) < 0:
                raise OSError(ctypes.get_errno(), "renameat2")
            out = "ok"
        elif kind == "link":
            os.link(a, b, follow_symlinks=False)
            out = "ok"
        elif kind == "linkf":  # linkat(AT_SYMLINK_FOLLOW); os.link calls link(2)
            if libc.linkat(-100, a.encode(), -100, b.encode(), 0x400) < 0:
                raise OSError(ctypes.get_errno(), "linkat")
            out = "ok"
        elif kind == "copy":  # an executable copy
            with open(a, "rb") as f, open(b, "wb") as g:
                g.write(f.read())
            os.chmod(b, 0o755)
            out = "ok"
        elif kind == "symlink":
            os.symlink(a, b)
            out = "ok"
        elif kind == "openat2":
            how = OpenHow(os.O_RDONLY, 0, 0)
            fd = libc.syscall(437, -100, a.encode(), ctypes.byref(how), ctypes.sizeof(how))
            if fd < 0:
                raise OSError(ctypes.get_errno(), "openat2")
            out = os.read(fd, 64).decode()
            os.close(fd)
        elif kind == "exec":
            pid = os.fork()
            if pid == 0:
                try:
                    os.execv(a, [a])
                except OSError as e:
                    os._exit(100 + e.errno)
            out = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        elif kind == "mode":  # a file made under umask b (octal): its permission bits
            old = os.umask(int(b, 8))
            try:
                os.close(os.open(a, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            finally:
                os.umask(old)
            out = oct(os.stat(a).st_mode & 0o777)
        elif kind == "dirmode":
            old = os.umask(int(b, 8))
            try:
                os.mkdir(a, 0o777)
            finally:
                os.umask(old)
            out = oct(os.stat(a).st_mode & 0o777)
        elif kind == "pwd":  # cd, then the real working directory
            os.chdir(a)
            out = os.path.realpath(".")
        elif kind == "bind":  # a UNIX socket bound, listening, and reached by its name
            import socket
            srv = socket.socket(socket.AF_UNIX)
            srv.bind(a)
            srv.listen()
            cli = socket.socket(socket.AF_UNIX)
            cli.connect(a)
            # the mode, and the name the socket reports (its last component when the
            # supervisor made it: docs/decisions.md)
            out = [oct(os.stat(a).st_mode & 0o777), os.path.basename(srv.getsockname())]
            cli.close()
            srv.close()
        elif kind == "chdir":
            os.chdir(a)
            out = "ok"
        elif kind == "tmpfile":  # O_TMPFILE in a, written, then linked as b
            fd = os.open(a, os.O_TMPFILE | os.O_WRONLY, 0o600)
            os.write(fd, b"tmp")
            if libc.linkat(-100, f"/proc/self/fd/{fd}".encode(), -100, b.encode(), 0x400) < 0:
                raise OSError(ctypes.get_errno(), "linkat")
            os.close(fd)
            out = "ok"
        elif kind == "tmpmode":  # the mode of an O_TMPFILE made under umask b
            old = os.umask(int(b, 8))
            try:
                fd = os.open(a, os.O_TMPFILE | os.O_WRONLY, 0o666)
            finally:
                os.umask(old)
            out = oct(os.fstat(fd).st_mode & 0o777)
            os.close(fd)
        elif kind == "list":
            out = sorted(os.listdir(a))
    except OSError as e:
        out = e.errno
    res.append([spec, out])
print(json.dumps(res))
"""


def probe(flags, *specs):
    r = run(*SYSTEM_READ, *flags, "--", PY, "-c", PROBE, *specs, timeout=60)
    assert r.returncode == 0, r.stderr
    return dict(json.loads(r.stdout))


def make_tree(root):
    """root/a/{secret, open, sub/deep, link -> secret, chain -> link, bin}, root/b/tosecret"""
    if root.exists():
        shutil.rmtree(root)
    a, b = root / "a", root / "b"
    (a / "sub").mkdir(parents=True)
    b.mkdir()
    (a / "secret").write_text("secret")
    (a / "open").write_text("open")
    (a / "sub" / "deep").write_text("deep")
    (a / "link").symlink_to("secret")
    (a / "chain").symlink_to("link")
    (b / "tosecret").symlink_to("../a/secret")
    shutil.copy("/bin/true", a / "bin")
    return root


def both(tmp_path, deny, specs, extra=()):
    """The probe over a fresh tree without the deny (control), then over another with it.
    @deny and @specs name paths relative to the tree: "{t}" is replaced by its path."""
    out = []
    for denied in (False, True):
        t = make_tree(tmp_path / ("denied" if denied else "control"))
        flags = ["-w", str(t), *extra]
        if denied:
            flags += [a for d in deny for a in ("--fs-deny", d.format(t=t))]
        got = probe(flags, *[s.format(t=t, n=t.name) for s in specs])
        out.append({s: v.replace(str(t), "{t}") if isinstance(v, str) else v
                    for s, v in zip(specs, got.values())})
        out.append(t)
    return out


def test_the_denied_file_under_every_name_and_call(tmp_path):
    specs = ["read={t}/a/secret", "read={t}/a/link", "read={t}/a/chain", "read={t}/b/tosecret",
             "read={t}/a/../a/./secret", "openat2={t}/a/secret",
             "symlink=secret:{t}/a/during", "read={t}/a/during",  # a symlink made in the run
             "symlink=../a/secret:{t}/b/during", "read={t}/b/during",
             "append={t}/a/secret", "trunc={t}/a/secret", "overwrite={t}/a/secret:w",
             "truncate={t}/a/secret", "truncate={t}/a/link",
             "link={t}/a/secret:{t}/b/hard", "linkf={t}/a/link:{t}/b/hard2",
             "exchange={t}/a/open:{t}/a/secret", "rename={t}/a/secret:{t}/b/moved",
             "rename={t}/b/moved:{t}/a/secret", "rename={t}/a/open:{t}/a/secret",
             "unlink={t}/a/secret"]
    control, ct, got, dt = both(tmp_path, ["{t}/a/secret"], specs)
    reads = [s for s in specs if s.startswith(("read", "openat2"))]
    assert control == {s: "secret" if s in reads else "ok" for s in specs}
    assert not (ct / "a" / "secret").exists()  # the control's last call removed it
    # Denied: every call that reaches the file is refused; the symlinks are made, and
    # reading through them is refused too.
    expect = {s: 13 for s in specs}
    expect["symlink=secret:{t}/a/during"] = expect["symlink=../a/secret:{t}/b/during"] = "ok"
    assert got == expect
    assert (dt / "a" / "secret").read_text() == "secret"
    assert (dt / "a" / "open").read_text() == "open"
    assert not (dt / "b" / "hard").exists() and not (dt / "b" / "moved").exists()


def test_writes_elsewhere_in_the_tree_keep_working(tmp_path):
    specs = ["create={t}/a/new", "read={t}/a/new", "create#2={t}/a/new",  # EEXIST
             "overwrite={t}/a/new:again", "read#2={t}/a/new",
             "mkdir={t}/a/d", "create={t}/a/d/f", "read={t}/a/d/f", "pwd={t}/a/d",
             "rename={t}/a/d/f:{t}/b/f", "rename={t}/b/f:{t}/a/f2", "link={t}/a/f2:{t}/a/f3",
             "symlink=f3:{t}/a/s", "read={t}/a/s", "linkf={t}/a/s:{t}/a/sub/f4",
             "truncate={t}/a/f3", "read={t}/a/f2", "unlink={t}/a/s", "unlink={t}/a/f3",
             "exchange={t}/a/f2:{t}/a/open", "read={t}/a/open",
             "mode={t}/a/m:077", "dirmode={t}/a/md:027", "mkdir={t}/a/d/e", "rmdir={t}/a/d",
             "rmdir={t}/a/d/e", "rmdir#2={t}/a/d", "rename={t}/a/sub:{t}/a/sub2",
             "create={t}/a/sub2/x", "unlink={t}/a/sub2", "rmdir={t}/a/open", "list={t}/a"]
    control, ct, got, dt = both(tmp_path, ["{t}/a/secret"], specs)
    assert got == control
    assert got["read={t}/a/new"] == "new" and got["create#2={t}/a/new"] == 17  # EEXIST
    assert got["read#2={t}/a/new"] == "again"
    # f3 was f2's other name when truncated; the exchange swapped f2 and open.
    assert got["read={t}/a/open"] == "" and got["read={t}/a/f2"] == ""
    assert (dt / "a" / "f2").read_text() == "open"
    assert got["pwd={t}/a/d"] == "{t}/a/d"
    assert got["mode={t}/a/m:077"] == "0o600" and got["dirmode={t}/a/md:027"] == "0o750"
    assert got["rmdir={t}/a/d"] == 39 and got["rmdir#2={t}/a/d"] == "ok"  # ENOTEMPTY, then
    assert got["unlink={t}/a/sub2"] == 21 and got["rmdir={t}/a/open"] == 20  # EISDIR, ENOTDIR
    assert got["list={t}/a"] == sorted(["bin", "chain", "f2", "link", "m", "md", "new", "open",
                                        "secret", "sub2"])
    assert (dt / "a" / "sub2" / "x").read_text() == "new"
    assert (dt / "a" / "secret").read_text() == "secret"


def test_entries_replaced_in_the_run(tmp_path):
    # Beneath an entry granted at start the kernel decides; once the supervisor has removed
    # or replaced such an entry, what takes its name is not granted, and is the supervisor's.
    specs = ["unlink={t}/a/sub/deep", "rmdir={t}/a/sub", "mkdir={t}/a/sub",
             "create={t}/a/sub/x", "read={t}/a/sub/x", "create={t}/a/new",
             "rename={t}/a/new:{t}/a/open", "append={t}/a/open", "read={t}/a/open",
             "exchange={t}/a/bin:{t}/a/sub", "create={t}/a/bin/y", "read={t}/a/bin/y"]
    control, _, got, _ = both(tmp_path, ["{t}/a/secret"], specs)
    assert got == control
    assert control == {s: {"read={t}/a/sub/x": "new", "read={t}/a/open": "newx",
                           "read={t}/a/bin/y": "new"}.get(s, "ok") for s in specs}


def test_other_spellings_and_calls(tmp_path):
    # Relative names from above the grant, "//" and "/./", O_TMPFILE linked in through
    # /proc/self/fd, its mode under umask 0, a rename of "dir/", a UNIX socket bound there.
    specs = ["chdir={t}/..", "create={n}/a/rel", "read={n}/a/rel", "mkdir={n}/a/d",
             "create={t}/.//a/dot", "read={t}//a/./dot", "tmpfile={t}/a:{t}/a/linked",
             "read={t}/a/linked", "tmpmode={t}/a:0", "rename={t}/a/d/:{t}/a/d2/",
             "rename={t}/a/rel/:{t}/a/rel2", "bind={t}/a/sock", "bind={n}/a/secret",
             "list={t}/a"]
    control, _, got, _ = both(tmp_path, ["{t}/a/secret"], specs)
    assert got == {**control, "bind={n}/a/secret": 13}
    assert control == {**{s: "ok" for s in specs}, "read={n}/a/rel": "new",
                       "bind={t}/a/sock": ["0o755", "sock"],
                       "bind={n}/a/secret": 98,  # EADDRINUSE
                       "read={t}//a/./dot": "new", "read={t}/a/linked": "tmp",
                       "tmpmode={t}/a:0": "0o666", "rename={t}/a/rel/:{t}/a/rel2": 20,
                       "list={t}/a": ["bin", "chain", "d2", "dot", "link", "linked", "open",
                                      "rel", "secret", "sock", "sub"]}


def test_a_symlink_cannot_take_a_name_on_the_way(tmp_path):
    # The denied path does not exist yet: a directory may be made on the way to it, nothing
    # else (a symlink there would lead the denied name into the sandbox's own files).
    specs = ["symlink={t}/b:{t}/a/later", "create={t}/a/later", "mkfifo={t}/a/later",
             "link={t}/a/open:{t}/a/later", "mkdir={t}/a/later", "create={t}/a/later/x",
             "create={t}/a/later/secret"]
    control, _, got, _ = both(tmp_path, ["{t}/a/later/secret"], specs)
    assert control == {**{s: 17 for s in specs[1:4]}, specs[0]: "ok", specs[4]: 17,
                       specs[5]: "ok", specs[6]: "ok"}
    assert got == {**{s: 13 for s in specs[:4]}, specs[4]: "ok", specs[5]: "ok",
                   specs[6]: 13}


def test_a_denied_name_through_a_symlink_in_a_writable_grant_is_refused(tmp_path):
    t = make_tree(tmp_path / "t")
    (t / "l").symlink_to("a")
    r = run(*SYSTEM_READ, "-w", str(t), "--fs-deny", str(t / "l" / "secret"), "--", "true",
            timeout=30)
    assert r.returncode == 1
    assert r.stderr.decode().splitlines() == [
        f"sandlock: --fs-deny: {t / 'l' / 'secret'}: goes through a symlink in a writable "
        f"grant ({t / 'l'}), which the sandbox could point elsewhere (deny where it points "
        f"instead)"]
    # Controls: where it points, or with the symlink in a read grant only, it runs.
    assert run(*SYSTEM_READ, "-w", str(t), "--fs-deny", str(t / "a" / "secret"), "--",
               "true", timeout=30).returncode == 0
    assert run(*SYSTEM_READ, "-r", str(t), "--fs-deny", str(t / "l" / "secret"), "--",
               "true", timeout=30).returncode == 0


LEASE = r"""
import fcntl, os, signal, sys, threading
d = sys.argv[1]
signal.signal(signal.SIGIO, signal.SIG_IGN)
path = os.path.join(d, "leased")
with open(path, "w") as f:
    f.write("x")
fd = os.open(path, os.O_RDONLY)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
done = []
def writer():  # waits for the lease to be given up
    os.close(os.open(path, os.O_WRONLY))
    done.append("opened")
t = threading.Thread(target=writer)
t.start()
t.join(0.3)
os.mkdir(os.path.join(d, "meanwhile"))  # another trapped call, answered meanwhile
print("mkdir while the open waits:", not done, flush=True)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
t.join()
print(done[0])
"""


def test_an_open_that_waits_does_not_hold_the_supervisor(tmp_path):
    # A read lease holds the open for write until it is given up: meanwhile the sandbox's
    # other calls are answered (the open waits on a worker, not on the supervisor's loop).
    for deny in (False, True):
        t = make_tree(tmp_path / ("denied" if deny else "control"))
        flags = ["-w", str(t)] + (["--fs-deny", str(t / "a" / "secret")] if deny else [])
        r = run(*SYSTEM_READ, *flags, "--", PY, "-c", LEASE, str(t / "a"), timeout=30)
        assert r.returncode == 0, r.stderr
        assert r.stdout.decode() == "mkdir while the open waits: True\nopened\n"


def test_the_directories_on_the_way_keep_their_names(tmp_path):
    specs = ["rename={t}/a:{t}/a2", "rename={t}/b:{t}/a", "rmdir={t}/a", "read={t}/a/open"]
    control, _, got, _ = both(tmp_path, ["{t}/a/secret"], specs)
    assert control == {specs[0]: "ok", specs[1]: "ok", specs[2]: 39, specs[3]: 2}
    assert got == {specs[0]: 13, specs[1]: 13, specs[2]: 13, specs[3]: "open"}


def test_a_denied_name_not_there_yet(tmp_path):
    specs = ["create={t}/a/later", "mkdir={t}/a/later", "symlink=open:{t}/a/later",
             "rename={t}/a/open:{t}/a/later", "link={t}/a/open:{t}/a/later",
             "mkfifo={t}/a/later", "create={t}/a/other"]
    control, _, got, _ = both(tmp_path, ["{t}/a/later"], specs)
    assert control == {specs[0]: "ok", specs[1]: 17, specs[2]: 17, specs[3]: "ok",
                       specs[4]: 2, specs[5]: 17, specs[6]: "ok"}  # a/open moved by then
    assert got == {**{s: 13 for s in specs[:6]}, specs[6]: "ok"}


def test_a_denied_directory_in_a_writable_grant(tmp_path):
    specs = ["read={t}/a/sub/deep", "create={t}/a/sub/new", "rename={t}/a/sub/deep:{t}/a/x",
             "rename={t}/a/open:{t}/a/sub/open", "mkdir={t}/a/sub/d", "list={t}/a/sub",
             "create={t}/a/new"]
    control, _, got, _ = both(tmp_path, ["{t}/a/sub"], specs)
    assert control == {specs[0]: "deep", specs[1]: "ok", specs[2]: "ok", specs[3]: "ok",
                       specs[4]: "ok", specs[5]: ["d", "new", "open"], specs[6]: "ok"}
    assert got == {**{s: 13 for s in specs[:6]}, specs[6]: "ok"}


def test_executables(tmp_path):
    # A denied binary is not run. One copied in the run into a directory on the way to the
    # denied path cannot be run in that run (Landlock's execute right cannot reach it without
    # reaching the denied path too: docs/decisions.md); beneath a granted directory it runs.
    specs = ["exec={t}/a/bin", "copy=/bin/true:{t}/a/copied", "exec={t}/a/copied",
             "copy#2=/bin/true:{t}/a/sub/copied", "exec#2={t}/a/sub/copied"]
    control, _, got, _ = both(tmp_path, ["{t}/a/bin"], specs)
    assert control == {s: 0 if s.startswith("exec") else "ok" for s in specs}
    assert got == {**control, specs[0]: 113, specs[2]: 113}  # 100 + EACCES


def test_a_racing_thread_never_reaches_the_denied_file(tmp_path):
    d = tmp_path / "w" / "a"
    d.mkdir(parents=True)
    (d / "secret").write_text("SECRET")
    (d / "public").write_text("public")
    # Control: outside a sandbox, the same loop reads the secret many times.
    race = [PY, "-c", RACE, str(d / "public"), str(d / "secret"), "SECRET", "rw"]
    r = subprocess.run(race, capture_output=True, timeout=120)
    assert int(r.stdout.split()[1]) > 0
    r = run(*SYSTEM_READ, "-w", str(tmp_path / "w"), "--fs-deny", str(d / "secret"), "--",
            *race, timeout=300)
    opened, leaked = map(int, r.stdout.split())
    assert opened > 0 and leaked == 0
    assert (d / "secret").read_text() == "SECRET"


def test_without_the_supervisor_it_is_refused(tmp_path):
    t = make_tree(tmp_path / "t")
    args = [*SYSTEM_READ, "-w", str(t), "--fs-deny", str(t / "a" / "secret"), "--", "true"]
    r = run("--no-supervisor", *args, timeout=30)
    assert r.returncode == 1
    assert r.stderr.decode().splitlines() == [
        f"sandlock: --fs-deny inside a writable grant needs the supervisor "
        f"({t / 'a' / 'secret'} in {t})"]
    assert run(*args, timeout=30).returncode == 0  # control: with it, it runs
    assert run("--no-supervisor", *SYSTEM_READ, "-w", str(t / "b"), "--fs-deny",
               str(t / "a" / "secret"), "--", "true", timeout=30).returncode == 0


@pytest.mark.parametrize("flags", [["-r", "/proc"], ["--num-cpus", "1"]])
def test_with_other_served_files(tmp_path, flags):
    # /proc served, or another view: each handler decides the opens it is asked.
    t = make_tree(tmp_path / "t")
    specs = [f"read={t}/a/secret", f"create={t}/a/new", "read=/proc/self/comm"]
    got = probe(["-w", str(t), "--fs-deny", str(t / "a" / "secret"), *flags], *specs)
    comm = "python3\n" if "/proc" in flags else 13  # without a grant of /proc: refused
    assert got == {specs[0]: 13, specs[1]: "ok", specs[2]: comm}
    # Control: without the deny, the same flags read the file.
    t = make_tree(tmp_path / "control")
    specs[:2] = [f"read={t}/a/secret", f"create={t}/a/new"]
    assert probe(["-w", str(t), *flags], *specs) == {specs[0]: "secret", specs[1]: "ok",
                                                      specs[2]: comm}


FIFO = r"""
import os, signal, sys, time
f = os.path.join(sys.argv[1], "fifo")
os.mkfifo(f)
pid = os.fork()
if pid == 0:
    os.open(f, os.O_RDONLY)  # waits for a writer that never comes
    os._exit(0)
time.sleep(0.5)
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
print("done", flush=True)
"""


def test_an_open_left_waiting_does_not_keep_sandlock(tmp_path):
    # The open of a FIFO made in the run waits on a worker; its caller is killed and the
    # sandbox ends: sandlock ends too (the worker's open is given its other end).
    for deny in (False, True):
        t = make_tree(tmp_path / ("denied" if deny else "control"))
        flags = ["-w", str(t)] + (["--fs-deny", str(t / "a" / "secret")] if deny else [])
        r = run(*SYSTEM_READ, *flags, "--", PY, "-c", FIFO, str(t / "a"), timeout=30)
        assert (r.returncode, r.stdout) == (0, b"done\n"), r.stderr
