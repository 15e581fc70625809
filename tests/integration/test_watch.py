# SPDX-License-Identifier: LGPL-2.1-or-later
"""inotify_add_watch and fanotify_mark: a watch reports the names made in a directory, so it is
added only on a file the sandbox may read (EACCES otherwise, as Landlock answers), on the file
the supervisor resolved, never on the name again."""

import json
import os
import subprocess

import pytest

from conftest import PRELUDE, PY, SANDLOCK, SYSTEM_READ, X86_64, result_json, run

pytestmark = pytest.mark.skipif(not X86_64, reason="x86_64 syscall numbers")

IN_CREATE, IN_DONT_FOLLOW, IN_ONLYDIR = 0x100, 0x02000000, 0x01000000

# Watches each directory of argv[2:] with IN_CREATE (| argv[1] as extra mask bits), then waits
# for a line on stdin (the test creates "made" in every directory meanwhile), and reports
# [wd, errno] per directory and the names the events carried.
INOTIFY = """
import select, struct
fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
extra = int(sys.argv[1])
res = {}
for d in sys.argv[2:]:
    ctypes.set_errno(0)
    wd = libc.inotify_add_watch(fd, d.encode(), 0x100 | extra)
    res[d] = [wd, ctypes.get_errno() if wd < 0 else 0]
out({"watches": res})
sys.stdin.readline()
names = []
while select.select([fd], [], [], 0.5)[0]:
    data = os.read(fd, 65536)
    off = 0
    while off < len(data):
        wd, mask, cookie, ln = struct.unpack_from("iIII", data, off)
        names.append(data[off + 16:off + 16 + ln].rstrip(b"\\0").decode())
        off += 16 + ln
out({"names": sorted(names)})
"""


def watch(argv, dirs):
    """Run @argv (ending in the INOTIFY snippet's arguments), create "made" in each of @dirs
    once the watches are in place, and return (watches, names)."""
    for d in dirs:
        (d / "made").unlink(missing_ok=True)
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        first = p.stdout.readline()
        assert first, p.stderr.read().decode(errors="replace")
        for d in dirs:
            (d / "made").touch()
        rest, err = p.communicate(b"go\n", timeout=30)
    finally:
        p.kill()
    lines = [first.decode(), *rest.decode().splitlines()]
    assert p.returncode == 0, err.decode(errors="replace")
    return json.loads(lines[0])["watches"], json.loads(lines[-1])["names"]


@pytest.fixture
def dirs(tmp_path):
    granted, secret = tmp_path / "granted", tmp_path / "secret"
    granted.mkdir()
    secret.mkdir()
    os.chmod(tmp_path, 0o755)
    return granted, secret


def test_inotify_watch_outside_grants_refused(dirs):
    granted, secret = dirs
    args = [PY, "-c", PRELUDE + INOTIFY, "0", str(granted), str(secret)]
    watches, names = watch([SANDLOCK, "run", *SYSTEM_READ, "-r", str(granted), "--", *args],
                           dirs)
    # Outside the grants: EACCES, and no event names the file made there.
    assert watches[str(secret)] == [-1, 13]
    # Control: the granted directory is watched and reports the file's name.
    assert watches[str(granted)][0] >= 1 and names == ["made"]
    # Control: outside the sandbox both are watched.
    watches, names = watch(args, dirs)
    assert all(w[0] >= 1 for w in watches.values()) and names == ["made", "made"]


def test_inotify_spellings_and_flags(dirs, tmp_path):
    granted, secret = dirs
    (granted / "to-secret").symlink_to(secret)
    (granted / "to-granted").symlink_to(granted)
    names = [str(granted / "to-secret"), str(granted / ".." / "secret"),
             str(granted / "to-granted"), str(granted / "to-granted" / "..")]
    for extra in (0, IN_ONLYDIR):
        r = run(*SYSTEM_READ, "-r", str(granted), "--", PY, "-c", PRELUDE + """
fd = libc.inotify_init1(0)
res = []
for d in sys.argv[2:]:
    ctypes.set_errno(0)
    wd = libc.inotify_add_watch(fd, d.encode(), 0x100 | int(sys.argv[1]))
    res.append([1 if wd > 0 else wd, ctypes.get_errno() if wd < 0 else 0])
ctypes.set_errno(0)
wd = libc.inotify_add_watch(fd, sys.argv[4].encode(), 0x100 | 0x02000000)  # IN_DONT_FOLLOW
res.append([wd, ctypes.get_errno() if wd < 0 else 0])
out(res)
""", str(extra), *names, timeout=60)
        # Through a symlink or ".." to the ungranted directory: EACCES; to the granted one:
        # watched (IN_ONLYDIR holds: a directory); a watch on a symlink itself
        # (IN_DONT_FOLLOW): refused, as the file cannot be checked readable.
        assert result_json(r) == [[-1, 13], [-1, 13], [1, 0], [-1, 13], [-1, 13]]


RACE = """
import threading
granted, secret = sys.argv[1], sys.argv[2]
link = os.path.join(granted, "flip")
stop = False
def flip():
    tmp = link + ".tmp"
    while not stop:
        for target in (secret, granted):
            try:
                os.symlink(target, tmp)
                os.rename(tmp, link)
            except FileExistsError:
                os.unlink(tmp)
os.symlink(granted, link)
t = threading.Thread(target=flip)
t.start()
fd = libc.inotify_init1(os.O_NONBLOCK)
ok = refused = 0
for i in range(10000):
    wd = libc.inotify_add_watch(fd, link.encode(), 0x100)
    if wd >= 0:
        ok += 1
    else:
        refused += 1
stop = True
t.join()
os.unlink(link)
out({"ok": ok, "refused": refused})
sys.stdin.readline()
import select, struct
names = []
while select.select([fd], [], [], 0.5)[0]:
    data = os.read(fd, 65536)
    off = 0
    while off < len(data):
        wd, mask, cookie, ln = struct.unpack_from("iIII", data, off)
        names.append(data[off + 16:off + 16 + ln].rstrip(b"\\0").decode())
        off += 16 + ln
out({"watches": {}, "names": sorted(set(names))})
"""


def test_inotify_symlink_swap_race(dirs):
    # A thread swaps a symlink between the granted directory and the ungranted one while
    # another watches it 10,000 times: no watch lands on the ungranted directory.
    granted, secret = dirs
    p = subprocess.Popen([SANDLOCK, "run", *SYSTEM_READ, "-w", str(granted), "--", PY, "-c",
                          PRELUDE + RACE, str(granted), str(secret)], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = p.stdout.readline()
        assert first, p.stderr.read().decode(errors="replace")
        (secret / "leak").touch()
        (granted / "seen").touch()
        rest, err = p.communicate(b"go\n", timeout=60)
    finally:
        p.kill()
    counts = json.loads(first)
    assert counts["ok"] + counts["refused"] == 10000
    assert counts["ok"] > 0 and counts["refused"] > 0, counts  # both sides were hit
    names = json.loads(rest.decode().splitlines()[-1])["names"]
    assert "leak" not in names and "seen" in names, names


FANOTIFY = """
res = {}
FAN_CLASS_NOTIF, FAN_REPORT_DFID_NAME = 0, 0x00000c00
fd = sc(300, FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME, os.O_RDONLY)  # fanotify_init
if fd[0] < 0:
    out({"init": fd})
    sys.exit(0)
FAN_MARK_ADD, FAN_MARK_FILESYSTEM, FAN_CREATE, FAN_ONDIR = 1, 0x100, 0x100, 0x40000000
for d in sys.argv[1:]:
    p = ctypes.c_char_p(d.encode())
    res[d] = sc(301, fd[0], FAN_MARK_ADD, FAN_CREATE | FAN_ONDIR, -100,
                ctypes.cast(p, ctypes.c_void_p).value)
p = ctypes.c_char_p(sys.argv[1].encode())
res["filesystem"] = sc(301, fd[0], FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_CREATE, -100,
                       ctypes.cast(p, ctypes.c_void_p).value)
out(res)
"""


def test_fanotify_mark_outside_grants_refused(dirs):
    granted, secret = dirs
    args = [PY, "-c", PRELUDE + FANOTIFY, str(granted), str(secret)]
    bare = result_json(subprocess.run(args, capture_output=True, timeout=60))
    if "init" in bare:  # fanotify_init refused outside too: nothing to compare
        pytest.skip(f"fanotify_init: errno {bare['init'][1]} (kernel before 5.13, or "
                    "CONFIG_FANOTIFY off)")
    got = result_json(run(*SYSTEM_READ, "-r", str(granted), "--", *args, timeout=60))
    # Control: outside the sandbox an inode mark is anyone's (5.13); a filesystem mark needs
    # CAP_SYS_ADMIN.
    assert bare[str(granted)] == [0, 0] and bare[str(secret)] == [0, 0]
    assert bare["filesystem"] == ([0, 0] if os.geteuid() == 0 else [-1, 1])
    assert got[str(secret)] == [-1, 13]
    assert got[str(granted)] == [0, 0]
    # A filesystem mark reports beyond the grants: refused.
    assert got["filesystem"] == [-1, 1]


def test_watches_refused_without_supervisor(dirs):
    granted, _ = dirs
    r = run(*SYSTEM_READ, "-r", str(granted), "--no-supervisor", "--", PY, "-c", PRELUDE + """
fd = libc.inotify_init1(0)
ctypes.set_errno(0)
wd = libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x100)
out([wd, ctypes.get_errno()])
""", str(granted), timeout=60)
    # Nobody could check the file: EPERM from the filter (inotify_init1 itself works).
    assert result_json(r) == [-1, 1]
