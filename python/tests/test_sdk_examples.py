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
