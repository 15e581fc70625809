# SPDX-License-Identifier: LGPL-2.1-or-later
"""The new mount API (open_tree, move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr,
open_tree_attr) is refused (EPERM, as mount(2) is) in every sandbox. As root, each test makes a
bind mount of its own inside a mount namespace of its own (unshare -m), so the host's mounts
are never touched; the same calls made there outside the sandbox are the control."""

import json
import os
import shutil
import subprocess

import pytest

from conftest import PRELUDE, PY, SANDLOCK, SYSTEM_READ, X86_64, require

pytestmark = pytest.mark.skipif(not X86_64, reason="x86_64 syscall numbers")

ROOT = os.geteuid() == 0

# sc() is PRELUDE's: [result, errno]. The target is argv[1]; a descriptor result is closed.
CALLS = """
import struct
AT_FDCWD, CLOEXEC = -100, 0o2000000
def addr(b):
    return ctypes.cast(ctypes.c_char_p(b), ctypes.c_void_p).value
path, fstype, empty = sys.argv[1].encode(), b"tmpfs", b""
p = addr(path)
rdonly = ctypes.create_string_buffer(struct.pack("QQQQ", 1, 0, 0, 0))  # MOUNT_ATTR_RDONLY
def call(nr, *a):
    r = sc(nr, *a)
    if r[0] >= 0 and nr != 442:
        os.close(r[0])
        r[0] = 0
    return r
res = {
    "open_tree": call(428, AT_FDCWD, p, CLOEXEC),
    "fsconfig": call(431, -1, 6, 0, 0, 0),  # FSCONFIG_CMD_CREATE on no descriptor
}
if os.geteuid() == 0:
    res["open_tree_clone"] = call(428, AT_FDCWD, p, 1 | CLOEXEC)  # OPEN_TREE_CLONE
    res["fsopen"] = call(430, addr(fstype), 1)  # FSOPEN_CLOEXEC
    res["fspick"] = call(433, AT_FDCWD, p, 1)  # FSPICK_CLOEXEC
    res["fsmount"] = call(432, -1, 0, 0)
    res["move_mount"] = call(429, -1, addr(empty), AT_FDCWD, p, 4)  # MOVE_MOUNT_F_EMPTY_PATH
    res["open_tree_attr"] = call(467, AT_FDCWD, p, 1 | CLOEXEC, ctypes.addressof(rdonly), 32)
    res["mount_setattr"] = call(442, AT_FDCWD, p, 0, ctypes.addressof(rdonly), 32)
    res["read_only_after"] = bool(os.statvfs(sys.argv[1]).f_flag & os.ST_RDONLY)
out(res)
"""


def in_own_mount_ns(tmp_path, *argv):
    """Run @argv as root in a mount namespace of its own, where @tmp_path/m is a bind mount of
    itself; returns the JSON line printed. Unprivileged: @argv as it is, on a plain dir."""
    target = tmp_path / "m"
    target.mkdir(exist_ok=True)
    if ROOT:
        require(shutil.which("unshare") and shutil.which("mount"), "unshare(1) and mount(1)")
        script = 'mount --bind "$0" "$0" && exec "$@"'
        argv = ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script,
                str(target), *argv]
    r = subprocess.run([*argv, str(target)], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return json.loads(r.stdout.decode().strip().splitlines()[-1])


@pytest.mark.parametrize("supervised", [True, False])
def test_new_mount_api_refused(tmp_path, supervised):
    code = PRELUDE + CALLS
    outside = in_own_mount_ns(tmp_path, PY, "-c", code)
    flags = [] if supervised else ["--no-supervisor"]
    inside = in_own_mount_ns(tmp_path, SANDLOCK, "run", *SYSTEM_READ, *flags, "--", PY, "-c",
                             code)
    # Control: outside the sandbox the calls reach the kernel: open_tree without a clone is
    # anyone's (an O_PATH open), fsconfig looks at its arguments before any right.
    assert outside["open_tree"] == [0, 0]
    assert outside["fsconfig"][0] == -1 and outside["fsconfig"][1] not in (0, 1)
    for name, got in inside.items():
        if name != "read_only_after":
            assert got == [-1, 1], (name, got)  # EPERM, as for mount(2)
    if ROOT:
        for name in ("open_tree_clone", "fsopen", "fspick"):
            assert outside[name] == [0, 0], (name, outside[name])
        for name in ("fsmount", "move_mount"):  # no descriptor given: not EPERM
            assert outside[name][0] == -1 and outside[name][1] != 1, (name, outside[name])
        assert outside["mount_setattr"] == [0, 0] and outside["read_only_after"] is True
        assert outside["open_tree_attr"] in ([0, 0], [-1, 38])  # ENOSYS before 6.15
        # The bind mount stays writable: the sandbox changed nothing.
        assert inside["read_only_after"] is False
