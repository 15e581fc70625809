# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the SDK tells the user, word for word: errors name the Python field the user passed
(fs_readable, not the core's internal fs_read), every refused field at once, and
allow_degraded=["all"] (and comma lists) for an older kernel."""

import os
import subprocess
import sys

import pytest

from conftest import PKG_PARENT, SYSTEM_READ, landlock_abi_cli, require
from sandlock import SandboxError

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")
PRELOAD = os.environ.get("LD_PRELOAD")  # read before the fixture takes it away


def message(sb, cmd=("true",)):
    with pytest.raises(SandboxError) as e:
        sb.run(list(cmd))
    return str(e.value)


@pytest.mark.parametrize("field", ["fs_readable", "fs_writable"])
def test_missing_grant_names_the_python_field(sandboxes, tmp_path, field):
    missing = tmp_path / "nonexist"
    sb = sandboxes(**{field: [str(missing)]})
    assert message(sb) == f"{field}: {missing}: No such file or directory"
    # Control: the directory made, the same sandbox runs.
    missing.mkdir()
    assert sb.run(["true"]).success


def test_branch_field_names_the_python_fields(sandboxes):
    assert message(sandboxes(fs_storage="/tmp")) == \
        "fs_storage: needs workdir (it is where the workdir's branch lives)"


def test_unsupported_fields_named_together(sandboxes):
    sb = sandboxes(chroot="/tmp", fs_mount={"/w": "/tmp"}, image="alpine")
    assert message(sb) == "not supported yet: chroot, fs_mount, image"


@pytest.mark.parametrize("value", [["all"], ["fs-refer,net-tcp", "fs-truncate"]])
def test_allow_degraded_all_and_lists(sandboxes, value):
    sb = sandboxes(allow_degraded=value)
    names = ["fs-refer", "fs-truncate", "net-tcp", "fs-ioctl-dev", "signal-scope",
             "abstract-unix-socket-scope"]
    want = names if value == ["all"] else names[:3]
    # The core's dump names each protection (so it loads back the same).
    assert sb.to_json()["protections"]["allow_degraded"] == want
    assert sb.run(["true"]).success


def test_allow_degraded_bad_word_is_refused(sandboxes):
    with pytest.raises(SandboxError) as e:
        sandboxes(allow_degraded=["fs-refer,nope"]).to_json()
    assert str(e.value) == ("allow_degraded: expected all, fs-refer, fs-truncate, net-tcp, "
                            "fs-ioctl-dev, signal-scope or abstract-unix-socket-scope")


# A fresh interpreter (the library probes the ABI once) that believes the kernel has ABI 4.
OLD_KERNEL_RUN = """
import os, sys
sys.path.insert(0, sys.argv[1])
from sandlock import Sandbox
os.environ.pop("LD_PRELOAD", None)  # loaded here (an ASan build); not for the command
try:
    r = Sandbox(fs_readable=sys.argv[2].split(","), **eval(sys.argv[3])).run(["true"])
    print("ran", r.success)
except Exception as e:
    print(type(e).__name__, e)
"""


def old_kernel(**kw):
    env = dict(os.environ, SANDLOCK_TEST_LANDLOCK_ABI="4")
    if PRELOAD:  # the interpreter of an ASan build needs the runtimes
        env["LD_PRELOAD"] = PRELOAD
    r = subprocess.run([sys.executable, "-c", OLD_KERNEL_RUN, PKG_PARENT, ",".join(SYSTEM_READ),
                        repr(kw)], capture_output=True, text=True, env=env, timeout=60)
    return r.stdout.strip()


def test_older_kernel_runs_with_allow_degraded_all():
    require(landlock_abi_cli() >= 6, "Landlock ABI 6")
    assert old_kernel(allow_degraded=["all"]) == "ran True"
    # Control: strict, every missing protection is named in one refusal.
    assert old_kernel() == (
        "ConfinementError protections FsIoctlDev, SignalScope, AbstractUnixSocketScope need "
        "Landlock ABI 5, 6, 6, this kernel has 4 (SANDLOCK_TEST_LANDLOCK_ABI) (allow them to degrade with allow_degraded = "
        '["fs-ioctl-dev", "signal-scope", "abstract-unix-socket-scope"] or ["all"])')
