# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every example in python/examples runs, and prints what it promises."""

import os
import pathlib
import subprocess
import sys

import pytest

from conftest import PKG_PARENT

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"

EXPECTED = {
    "basic.py": ["allowed: 0 hello", "denied:  1 cat: /etc/hostname: Permission denied"],
    "pipeline.py": ["pipeline: THE LAUNCH CODE IS 1234", "Permission denied"],
    "gather.py": ["executor: 12"],
    "popen.py": ["answer: 6 running: True", "exit: 0 EXITED"],
    "profiles.py": ["profiles: ['echo']", "default command: from a profile",
                    "explicit command: profile-demo", "bad.toml:2:1: unknown key 'reed'"],
}


def test_every_example_is_listed():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example(name):
    # The package the tests import (the source tree's, when it is not installed).
    path = os.pathsep.join(p for p in (PKG_PARENT, os.environ.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": path})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for line in EXPECTED[name]:
        assert line in proc.stdout, proc.stdout


def test_examples_are_executable():
    # `./basic.py` works from a checkout: mode 755 in git (and on disk), and a shebang.
    git = subprocess.run(["git", "-C", str(EXAMPLES), "ls-files", "-s", "--", "."],
                         capture_output=True, text=True, timeout=30)
    modes = {}
    if git.returncode == 0 and git.stdout:
        for line in git.stdout.splitlines():
            meta, path = line.split("\t", 1)
            modes[pathlib.Path(path).name] = meta.split()[0]
        assert modes == {name: "100755" for name in EXPECTED}
    for name in EXPECTED:
        path = EXAMPLES / name
        assert os.access(path, os.X_OK), name
        assert path.read_text().splitlines()[0] == "#!/usr/bin/env python3", name


def test_venv_is_ignored():
    # `python3 -m venv venv` in the checkout (the SDK's install steps) leaves git status clean.
    root = EXAMPLES.parents[1]
    assert "venv/" in (root / ".gitignore").read_text().splitlines()
    git = subprocess.run(["git", "-C", str(root), "check-ignore", "-q", "venv/", "python/venv/"],
                         capture_output=True, timeout=30)
    if git.returncode != 128:  # 128: not a git checkout (a release tarball)
        assert git.returncode == 0
