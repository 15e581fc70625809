# SPDX-License-Identifier: LGPL-2.1-or-later
"""num_cpus through the SDK: nproc, /proc/cpuinfo and os.cpu_count() report N; controls report
the host's count."""

import os

import pytest

from conftest import PY

pytestmark = pytest.mark.usefixtures("no_sanitizer_preload")

CODE = ("import os; print(os.cpu_count(), "
        "sum(l.startswith('processor') for l in open('/proc/cpuinfo')))")


def test_num_cpus(sandboxes):
    host = os.cpu_count()
    views = ["/proc", "/sys"]
    r = sandboxes(fs_readable=views).run([PY, "-c", CODE])
    assert r.stdout.split() == [str(host).encode()] * 2
    r = sandboxes(fs_readable=views, num_cpus=1).run([PY, "-c", CODE])
    assert r.stdout.split() == [b"1", b"1"]
    assert sandboxes(fs_readable=views, num_cpus=3).run(["nproc"]).stdout == b"3\n"
