# SPDX-License-Identifier: LGPL-2.1-or-later
"""`./setup.sh demo` tells sandlock refusing to start (a kernel without a protection a default
sandbox needs: exit 1, sandlock's own error) from the command being denied (cat's exit 1 with
"Permission denied"): both exit 1, and only a denial may print "denied: ...". SANDLOCK_BIN runs
the demo with a given sandlock (no install, no build): the build's, or a stand-in that behaves
as sandlock does on such a kernel."""

import os
import subprocess

from conftest import ROOT, SANDLOCK, landlock_abi, require

STARTUP_ERROR = ("sandlock: protection SignalScope needs Landlock ABI 6, this kernel has 4 "
                 "(allow it to degrade with --allow-degraded signal-scope)")

# sandlock on a kernel with Landlock ABI 4: `run` refuses the default policy before anything
# runs (no status on --status-fd), `check` says a default sandbox cannot run here.
OLD_KERNEL = f"""#!/bin/sh
case "$1" in
check) echo "Landlock ABI: 4"; exit 1 ;;
run) echo "{STARTUP_ERROR}" >&2; exit 1 ;;
esac
exit 2
"""

# sandlock where the sandbox runs and Landlock denies cat the file unless -r /etc is given:
# cat's exit 1 with its error, written to --status-fd as sandlock does.
DENYING = """#!/bin/sh
[ "$1" = run ] || exit 2
shift
[ "$1" = --status-fd ] || exit 2
fd=$2
etc=0 name=
while [ "$1" != -- ]; do
	[ "$1" = /etc ] && etc=1
	[ "$1" = --name ] && name=$2
	shift
done
shift
if [ "$1" = uname ]; then
	echo "$name"; code=0
elif [ $etc = 1 ]; then
	echo sandbox-host; code=0
else
	echo "cat: $2: Permission denied" >&2; code=1
fi
eval "echo '{\\"exit_code\\":$code}' >&$fd"
exit $code
"""


def demo(sandlock_bin, tmp_path):
    env = dict(os.environ, SANDLOCK_BIN=str(sandlock_bin))
    return subprocess.run(["sh", str(ROOT / "setup.sh"), "demo"], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)


def fake(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_demo_start_up_failure_is_not_a_denial(tmp_path):
    r = demo(fake(tmp_path, "sandlock", OLD_KERNEL), tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "denied" not in r.stdout
    assert r.stderr.splitlines() == [STARTUP_ERROR]
    out = r.stdout.splitlines()
    assert out[-2] == "  -> sandlock could not start the sandbox (exit 1): not a denial"
    assert out[-1].startswith("  hint: your kernel (")
    assert out[-1].endswith("; run with --allow-degraded all")
    # It stops at the first step.
    assert sum(line.startswith("$ sandlock run ") for line in out) == 1


def test_demo_denial_is_a_denial(tmp_path):
    # The same exit status (1) as the start-up failure, but the command ran.
    r = demo(fake(tmp_path, "sandlock", DENYING), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout.splitlines()
    assert "  -> denied: /etc is not granted" in out
    assert "  -> allowed: /etc is granted" in out
    assert out[-2:] == ["demo", "  -> allowed: the sandbox's own hostname"]
    assert "could not start" not in r.stdout and "hint" not in r.stdout
    assert r.stderr == "cat: /etc/hostname: Permission denied\n"


def test_demo_with_the_build(tmp_path):
    require(landlock_abi() >= 6, "Landlock ABI 6")
    r = demo(SANDLOCK, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout.splitlines()
    assert "  -> denied: /etc is not granted" in out
    assert "  -> allowed: /etc is granted" in out
    assert out[-2:] == ["demo", "  -> allowed: the sandbox's own hostname"]
    assert r.stderr == "cat: /etc/hostname: Permission denied\n"
