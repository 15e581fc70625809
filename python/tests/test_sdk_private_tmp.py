# SPDX-License-Identifier: LGPL-2.1-or-later
"""Sandbox(private_tmp=True): a TMPDIR of the sandbox's own, written during the run and gone
after it. Control: without it, no TMPDIR is set by sandlock."""

import os

import pytest

from conftest import PY

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")

CODE = ("import os; d = os.environ.get('TMPDIR', ''); "
        "d and open(os.path.join(d, 'f'), 'w').write('x'); "
        "print(d, d and os.listdir(d))")


def test_private_tmp(sandboxes):
    r = sandboxes(private_tmp=True, env={"TMPDIR": ""}).run([PY, "-c", CODE])
    assert r.stdout == b" \n"  # the policy's own TMPDIR wins
    r = sandboxes(private_tmp=True).run([PY, "-c", CODE])
    d, listing = r.stdout.decode().split(" ", 1)
    assert d.startswith(f"/var/tmp/sandlock-{os.geteuid()}/tmp-"), r.stderr
    assert listing == "['f']\n"
    assert not os.path.exists(d)
