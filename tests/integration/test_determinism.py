# SPDX-License-Identifier: LGPL-2.1-or-later
"""The [determinism] section: deterministic_dirs (listings sorted by name by the supervisor).
Each behaviour against its control: the same listing without the flag."""

import json

from conftest import PY, SYSTEM_READ, run

# Created in this order: a directory lists them in an order of its own (tmpfs: newest first,
# ext4: by hash), not sorted.
NAMES = ["m", "b", "y", "Alpha", "a.b", "10", "9", "_x", "q"]

LISTINGS = r"""
import ctypes, glob, json, os, struct, sys
d = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
def raw(nr):  # every name getdents64 (217) or the legacy getdents (78) gives, in order
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    buf, names = ctypes.create_string_buffer(512), []
    while True:
        n = libc.syscall(nr, fd, buf, 512)
        if n <= 0:
            break
        off = 0
        while off < n:
            reclen = struct.unpack_from("H", buf.raw, off + 16)[0]
            start = off + (19 if nr == 217 else 18)
            names.append(buf.raw[start:buf.raw.index(b"\0", start)].decode())
            off += reclen
    os.close(fd)
    return names
print(json.dumps({"listdir": os.listdir(d), "scandir": [e.name for e in os.scandir(d)],
                  "glob": [os.path.basename(p) for p in glob.glob(d + "/*")],
                  "getdents64": raw(217), "getdents": raw(78)}))
"""


def listings(tmp_path, flags):
    r = run(*SYSTEM_READ, "-r", str(tmp_path), *flags, "--", PY, "-c", LISTINGS,
            str(tmp_path / "d"), timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_listings_are_sorted(tmp_path):
    (tmp_path / "d").mkdir()
    for n in NAMES:
        (tmp_path / "d" / n).write_text("")
    control = listings(tmp_path, [])
    assert sorted(control["listdir"]) == sorted(NAMES)
    assert control["listdir"] != sorted(NAMES)  # the kernel's own order
    got = listings(tmp_path, ["--deterministic-dirs"])
    want = sorted(NAMES)  # bytewise: "10" < "9" < "Alpha" < "_x" < "a.b" < "b"
    assert got == {"listdir": want, "scandir": want, "glob": [n for n in want if n[0] != "."],
                   "getdents64": [".", ".."] + want, "getdents": [".", ".."] + want}


SEEK = r"""
import ctypes, json, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.opendir.restype = ctypes.c_void_p
libc.readdir.restype = ctypes.c_void_p
libc.readdir.argtypes = libc.telldir.argtypes = libc.rewinddir.argtypes = [ctypes.c_void_p]
libc.telldir.restype = ctypes.c_long
libc.seekdir.argtypes = [ctypes.c_void_p, ctypes.c_long]
def name(ent):  # struct dirent: d_ino, d_off, d_reclen, d_type, d_name
    return ctypes.string_at(ent + 19).decode()
d = libc.opendir(sys.argv[1].encode())
every = []
while True:
    ent = libc.readdir(d)
    if not ent:
        break
    every.append(name(ent))
libc.rewinddir(d)
for _ in range(1000):
    libc.readdir(d)
pos = libc.telldir(d)
first = [name(libc.readdir(d)) for _ in range(5)]
libc.seekdir(d, pos)
again = [name(libc.readdir(d)) for _ in range(5)]
libc.rewinddir(d)
print(json.dumps({"every": every, "first": first, "again": again,
                  "rewound": name(libc.readdir(d))}))
"""


def test_a_large_directory_with_telldir_and_seekdir(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    names = [f"f{(i * 7919) % 3001:05d}" for i in range(3001)]  # many buffers' worth
    for n in names:
        (d / n).write_text("")
    for flags, ordered in (([], False), (["--deterministic-dirs"], True)):
        r = run(*SYSTEM_READ, "-r", str(tmp_path), *flags, "--", PY, "-c", SEEK, str(d),
                timeout=60)
        assert r.returncode == 0, r.stderr
        got = json.loads(r.stdout)
        assert sorted(got["every"]) == sorted([".", ".."] + names)  # each once
        assert (got["every"] == sorted(got["every"])) == ordered
        assert got["first"] == got["again"]  # seekdir back to telldir's position
        assert got["rewound"] == got["every"][0]
        if ordered:
            assert got["first"] == sorted(names)[998:1003]
