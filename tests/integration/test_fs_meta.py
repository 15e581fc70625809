# SPDX-License-Identifier: LGPL-2.1-or-later
"""File metadata outside the writable grants: chmod, chown, the times, extended attributes,
inode flags and file_setattr, in every form (path, l*, f* on a descriptor, *at, AT_EMPTY_PATH,
fchmodat2), are refused with EACCES for a file outside every writable grant (read granted or
not) and for a denied file inside one, and the file is left as it was; inside a writable grant
each call does what it does without a sandbox (the control, run on a fresh copy). A symlink or
descriptor flipped between a file inside and one outside while the calls run never reaches the
outside one. Without a supervisor these calls are refused (EPERM)."""

import errno
import json
import os
import shutil
import subprocess

import pytest

from conftest import PY, SYSTEM_READ, X86_64, require, run

pytestmark = pytest.mark.skipif(not X86_64, reason="syscall numbers of x86_64")

# Each call of the family on file argv[1] (x86_64 numbers, through syscall(2) so that libc's
# fallbacks cannot hide what the sandbox answered); prints {call: errno}.
PROBE = r"""
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(nr, *args):
    conv = [a if not isinstance(a, int) else ctypes.c_long(a) for a in args]
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *conv)
    return 0 if r != -1 else ctypes.get_errno()
f = sys.argv[1].encode()
s = ctypes.c_char_p
uid, gid = os.getuid(), os.getgid()
AE, NF = 0x1000, 0x100
T = (ctypes.c_long * 4)(1000000000, 0, 1000000000, 0)  # timespec[2], timeval[2]
U = (ctypes.c_long * 2)(1000000000, 1000000000)  # utimbuf
rd = lambda: os.open(f, os.O_RDONLY)
pa = lambda: os.open(f, os.O_PATH)
XA = (ctypes.c_uint64 * 2)(ctypes.cast(s(b"v"), ctypes.c_void_p).value, 1)  # value, size, flags
flags = ctypes.c_int(0)
fsx = ctypes.create_string_buffer(28)
fa = ctypes.create_string_buffer(24)
def setflags():
    fd = rd()
    libc.ioctl(fd, ctypes.c_ulong(0x80086601), ctypes.byref(flags))
    return sc(16, fd, 0x40086602, ctypes.byref(flags))
def fssetxattr():
    fd = rd()
    libc.ioctl(fd, ctypes.c_ulong(0x801c581f), fsx)
    return sc(16, fd, 0x401c5820, fsx)
def file_setattr(empty):
    sc(468, -100, s(f), fa, 24, 0)
    return sc(469, pa(), s(b""), fa, 24, AE) if empty else sc(469, -100, s(f), fa, 24, 0)
calls = {
    "chmod": lambda: sc(90, s(f), 0o600),
    "fchmod": lambda: sc(91, rd(), 0o600),
    "fchmodat": lambda: sc(268, -100, s(f), 0o640),
    "fchmodat2": lambda: sc(452, -100, s(f), 0o600, NF),
    "fchmodat2_empty": lambda: sc(452, pa(), s(b""), 0o640, AE),
    "chown": lambda: sc(92, s(f), uid, gid),
    "lchown": lambda: sc(94, s(f), uid, gid),
    "fchown": lambda: sc(93, rd(), uid, gid),
    "fchownat": lambda: sc(260, -100, s(f), uid, gid, 0),
    "fchownat_empty": lambda: sc(260, pa(), s(b""), uid, gid, AE),
    "utime": lambda: sc(132, s(f), U),
    "utimes": lambda: sc(235, s(f), T),
    "futimesat": lambda: sc(261, -100, s(f), T),
    "utimensat": lambda: sc(280, -100, s(f), T, 0),
    "futimens": lambda: sc(280, rd(), None, T, 0),
    "utimensat_empty": lambda: sc(280, pa(), s(b""), T, AE),
    "setxattr": lambda: sc(188, s(f), s(b"user.a"), s(b"v"), 1, 0),
    "lsetxattr": lambda: sc(189, s(f), s(b"user.b"), s(b"v"), 1, 0),
    "fsetxattr": lambda: sc(190, rd(), s(b"user.c"), s(b"v"), 1, 0),
    "setxattrat": lambda: sc(463, -100, s(f), 0, s(b"user.d"), XA, 16),
    "setxattrat_empty": lambda: sc(463, rd(), s(b""), AE, s(b"user.e"), XA, 16),
    "removexattr": lambda: sc(197, s(f), s(b"user.old1")),
    "lremovexattr": lambda: sc(198, s(f), s(b"user.old2")),
    "fremovexattr": lambda: sc(199, rd(), s(b"user.old3")),
    "removexattrat": lambda: sc(466, -100, s(f), 0, s(b"user.old4")),
    "FS_IOC_SETFLAGS": setflags,
    "FS_IOC_FSSETXATTR": fssetxattr,
    "file_setattr": lambda: file_setattr(0),
    "file_setattr_empty": lambda: file_setattr(1),
}
only = sys.argv[2:]
print(json.dumps({k: v() for k, v in calls.items() if not only or k in only}))
"""


def fresh(tmp_path, name):
    """A directory holding file "f" (mode 0644) with the attributes the removals take."""
    d = tmp_path / name
    d.mkdir()
    f = d / "f"
    f.write_text("data\n")
    os.chmod(f, 0o644)
    try:
        for i in range(1, 5):
            os.setxattr(f, f"user.old{i}", b"1")
    except OSError:
        require(False, f"user.* extended attributes on {d}")
    return d, f


def state(f):
    """What a metadata change would show: mode, owner, times, the inode change time, xattrs."""
    st = os.lstat(f)
    return (st.st_mode, st.st_uid, st.st_gid, st.st_mtime_ns, st.st_ctime_ns,
            sorted(os.listxattr(f, follow_symlinks=False)))


def probe(f, *flags, only=()):
    r = run(*SYSTEM_READ, *flags, "--", PY, "-c", PROBE, str(f), *only, timeout=60)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return json.loads(r.stdout.decode().strip().splitlines()[-1])


def test_outside_writable_grants_refused(tmp_path):
    d, f = fresh(tmp_path, "out")
    before = state(f)
    (tmp_path / "elsewhere").mkdir()
    # Read granted (the descriptor calls get a read-only descriptor of it), never writable.
    got = probe(f, "-r", str(d), "-w", str(tmp_path / "elsewhere"))
    assert got == {k: errno.EACCES for k in got}, got
    assert state(f) == before


def test_outside_every_grant_refused(tmp_path):
    d, f = fresh(tmp_path, "out")
    before = state(f)
    # No grant at all on it: the path forms.
    got = probe(f, only=("chmod", "fchmodat2", "chown", "utimensat", "setxattr",
                         "removexattr", "file_setattr"))
    assert got == {k: errno.EACCES for k in got}, got
    assert state(f) == before


def test_inside_writable_grant_as_without_sandbox(tmp_path):
    """The control: inside a -w grant each call answers as it does with no sandbox, and
    changes the file as much."""
    d, f = fresh(tmp_path, "in")
    bare_d, bare_f = fresh(tmp_path, "bare")
    bare = json.loads(subprocess.run([PY, "-c", PROBE, str(bare_f)], capture_output=True,
                                     check=True).stdout)
    got = probe(f, "-w", str(d))
    assert got == bare
    assert got["chmod"] == 0 and got["utimensat"] == 0 and got["setxattr"] == 0
    a, b = state(f), state(bare_f)
    assert a[0] == b[0] and a[3] == b[3] == 1000000000 * 10**9 and a[5] == b[5]


def test_denied_file_in_writable_grant_refused(tmp_path):
    d, f = fresh(tmp_path, "w")
    before = state(f)
    got = probe(f, "-w", str(d), "--fs-deny", str(f),
                only=("chmod", "fchmodat2_empty", "chown", "utimensat", "setxattr"))
    assert got == {k: errno.EACCES for k in got}, got
    assert state(f) == before


def test_no_supervisor_refused(tmp_path):
    """Nothing could check the file: refused in the kernel filter, writes still work."""
    d, f = fresh(tmp_path, "w")
    before = state(f)
    got = probe(f, "-w", str(d), "--no-supervisor", only=("chmod", "fchmod", "utimensat",
                                                           "setxattr", "FS_IOC_SETFLAGS"))
    assert got == {k: errno.EPERM for k in got}, got
    assert state(f) == before
    r = run(*SYSTEM_READ, "-w", str(d), "--no-supervisor", "--", "sh", "-c",
            f"echo more >> {f}", timeout=30)
    assert r.returncode == 0 and f.read_text() == "data\nmore\n"


RACE = r"""
import ctypes, json, os, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
inside, outside, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = os.path.dirname(inside)
link, tmp = os.path.join(d, "link"), os.path.join(d, "link.tmp")
os.symlink(inside, link)
pid = os.fork()
if pid == 0:  # the name flipped between the two files
    i = 0
    while True:
        os.symlink(outside if i & 1 else inside, tmp)
        os.rename(tmp, link)
        i += 1
ok = refused = 0
for i in range(n):
    if libc.chmod(link.encode(), 0o600 if i & 1 else 0o640) == 0:
        ok += 1
    else:
        refused += 1
os.kill(pid, 9)
os.waitpid(pid, 0)
# The descriptor swapped between the two files while fchmod runs on its number.
fin, fout = os.open(inside, os.O_RDONLY), os.open(outside, os.O_RDONLY)
num = os.dup(fin)
stop = False
def swap():
    while not stop:
        libc.dup2(fout, num)
        libc.dup2(fin, num)
t = threading.Thread(target=swap)
t.start()
fok = 0
for i in range(n):
    fok += libc.fchmod(num, 0o600 if i & 1 else 0o640) == 0
    libc.fchown(num, os.getuid(), os.getgid())
stop = True
t.join()
print(json.dumps([ok, refused, fok]))
"""


def test_race_rename_and_descriptor_swap(tmp_path):
    w = tmp_path / "w"
    w.mkdir()
    inside = w / "target"
    inside.write_text("in\n")
    out_d, outside = fresh(tmp_path, "out")
    before = state(outside)
    r = run(*SYSTEM_READ, "-w", str(w), "-r", str(out_d), "--", PY, "-c", RACE, str(inside),
            str(outside), "10000", timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    ok, refused, fok = json.loads(r.stdout.decode().strip().splitlines()[-1])
    assert ok + refused == 10000 and ok > 0 and fok > 0
    assert state(outside) == before


def test_non_dumpable_descriptor(tmp_path):
    """A task that made itself non-dumpable: its descriptor is taken only by a supervisor with
    CAP_SYS_PTRACE; otherwise the call is refused (EPERM), never left to the kernel."""
    w = tmp_path / "w"
    w.mkdir()
    f = w / "f"
    f.write_text("x")
    os.chmod(f, 0o644)
    code = ("import ctypes, os, sys\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "libc.prctl(4, 0, 0, 0, 0)\nfd = os.open(sys.argv[1], os.O_RDONLY)\n"
            "r = libc.fchmod(fd, 0o600)\nprint(0 if r == 0 else ctypes.get_errno())\n")
    r = run(*SYSTEM_READ, "-w", str(w), "--", PY, "-c", code, str(f), timeout=30)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    got = int(r.stdout.decode().split()[-1])
    if os.geteuid() == 0:
        assert got == 0 and (os.stat(f).st_mode & 0o777) == 0o600
    else:
        assert got == errno.EPERM and (os.stat(f).st_mode & 0o777) == 0o644


@pytest.mark.skipif(os.geteuid() != 0, reason="needs a root sandlock")
def test_root_supervisor_does_not_act_for_another_user(tmp_path):
    """A child that left root (after a change made for it as root): the supervisor's rights no
    longer stand for its own (EPERM), even where the kernel would let the new user change its
    own file."""
    w = tmp_path / "w"
    w.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(w, 0o777)
    f = w / "f"
    f.write_text("x")
    os.chown(f, 65534, 65534)
    os.chmod(f, 0o644)
    code = ("import ctypes, os, sys\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "assert libc.chmod(sys.argv[1].encode(), 0o644) == 0\n"  # as root: made
            "os.setgroups([]); os.setgid(65534); os.setuid(65534)\n"
            "r = libc.chmod(sys.argv[1].encode(), 0o666)\n"
            "print(0 if r == 0 else ctypes.get_errno())\n")
    r = run(*SYSTEM_READ, "-w", str(w), "--", PY, "-c", code, str(f), timeout=30)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert int(r.stdout.decode().split()[-1]) == errno.EPERM
    assert (os.stat(f).st_mode & 0o777) == 0o644
    # The control: as root it is made.
    r = run(*SYSTEM_READ, "-w", str(w), "--", "chmod", "666", str(f), timeout=30)
    assert r.returncode == 0 and (os.stat(f).st_mode & 0o777) == 0o666


def test_race_into_the_workdir(tmp_path):
    """With a workdir: a name in a writable grant flipped between a file there and a workdir
    file while chmod runs on it, 10,000 times: the workdir's own file never changes (the
    change lands in the branch or is refused), and the branch is aborted."""
    w, wd = tmp_path / "w", tmp_path / "wd"
    w.mkdir()
    wd.mkdir()
    (tmp_path / "store").mkdir()
    inside = w / "target"
    inside.write_text("in\n")
    wfile = wd / "file"
    wfile.write_text("work\n")
    os.chmod(wfile, 0o644)
    before = state(wfile)
    r = run(*SYSTEM_READ, "-w", str(w), "--workdir", str(wd), "--fs-storage",
            str(tmp_path / "store"), "--on-exit", "abort", "--", PY, "-c", RACE, str(inside),
            str(wfile), "10000", timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    ok, refused, fok = json.loads(r.stdout.decode().strip().splitlines()[-1])
    assert ok + refused == 10000 and ok > 0
    assert state(wfile) == before


def test_user_namespace(tmp_path):
    """--user: the sandbox's ids are its namespace's. An unprivileged sandlock maps chown's ids
    as the kernel does (0 is the user itself; an unmapped id is EINVAL) and makes the change; a
    root one cannot act with exactly such a task's rights and refuses (EPERM)."""
    w = tmp_path / "w"
    w.mkdir()
    f = w / "f"
    f.write_text("x")
    os.chmod(f, 0o644)
    code = ("import ctypes, json, os, sys\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "def e(r): return 0 if r == 0 else ctypes.get_errno()\n"
            "p = sys.argv[1].encode()\n"
            "print(json.dumps([e(libc.chmod(p, 0o600)), e(libc.chown(p, 0, 0)),"
            " e(libc.chown(p, 4242, 4242))]))\n")
    r = run(*SYSTEM_READ, "--user", "0:0", "-w", str(w), "--", PY, "-c", code, str(f),
            timeout=30)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    got = json.loads(r.stdout.decode().split("\n")[-2])
    st = os.stat(f)
    if os.geteuid() == 0:
        assert got == [errno.EPERM] * 3 and (st.st_mode & 0o777) == 0o644
    else:
        assert got == [0, 0, errno.EINVAL] and (st.st_mode & 0o777) == 0o600
        assert (st.st_uid, st.st_gid) == (os.getuid(), os.getgid())


FLIP = r"""
import ctypes, json, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
a, b, n = sys.argv[1].encode(), sys.argv[2].encode(), int(sys.argv[3])
size = max(len(a), len(b)) + 1
buf = ctypes.create_string_buffer(a, size)
stop = False
def flip():  # the name rewritten in memory while the call is checked
    while not stop:
        ctypes.memmove(buf, b.ljust(size, b"\0"), size)
        ctypes.memmove(buf, a.ljust(size, b"\0"), size)
t = threading.Thread(target=flip)
t.start()
ok = 0
for i in range(n):
    ok += libc.chmod(buf, 0o600 if i & 1 else 0o640) == 0
stop = True
t.join()
print(json.dumps(ok))
"""


def test_race_name_rewritten_after_a_workdir_fifo(tmp_path):
    """chmod of a workdir FIFO (changed on the object resolved) with the name rewritten in the
    caller's memory to a file outside every writable grant, 10,000 times: the outside file
    never changes."""
    wd, out_d = tmp_path / "wd", tmp_path / "out"
    wd.mkdir()
    out_d.mkdir()
    (tmp_path / "store").mkdir()
    os.mkfifo(wd / "fifo", 0o644)
    outside = out_d / "file"
    outside.write_text("x")
    os.chmod(outside, 0o644)
    before = state(outside)
    r = run(*SYSTEM_READ, "--workdir", str(wd), "--fs-storage", str(tmp_path / "store"),
            "--on-exit", "abort", "--", PY, "-c", FLIP, str(wd / "fifo"), str(outside),
            "10000", timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert json.loads(r.stdout.decode().split()[-1]) > 0
    assert state(outside) == before
