# SPDX-License-Identifier: LGPL-2.1-or-later
"""gpu_devices: None (the default) leaves every GPU device node out, even of a grant of /dev;
[] ("all") exposes every one; a list exposes those GPUs (and the shared nodes) and sets
CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES to it."""

import glob
import os

import pytest

from conftest import PY, SYSTEM_READ, run

ENV = "import os; print(os.environ.get('CUDA_VISIBLE_DEVICES', '-'), " \
      "os.environ.get('ROCR_VISIBLE_DEVICES', '-'))"


def env(*flags):
    r = run(*SYSTEM_READ, *flags, "--", PY, "-c", ENV, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.decode().split()


def test_listed_gpus_are_named_to_the_runtimes():
    assert env() == ["-", "-"]  # control: the host's (unset here)
    assert env("--gpu", "0,2") == ["0,2", "0,2"]
    assert env("--gpu", "all") == ["-", "-"]  # all: nothing narrowed


NODES = sorted(glob.glob("/dev/nvidia*") + glob.glob("/dev/dri/*") + glob.glob("/dev/kfd"))


@pytest.mark.skipif(not NODES, reason="no GPU device node on this machine (/dev/nvidia*, "
                    "/dev/dri/*, /dev/kfd): the denial needs one to be shown")
def test_gpu_nodes_denied_by_default_exposed_on_request():
    node = next(n for n in NODES if os.path.exists(n) and not os.path.isdir(n))
    code = ("import os, sys\n"
            "try:\n"
            "    os.close(os.open(sys.argv[1], os.O_RDWR)); print('ok')\n"
            "except OSError as e:\n"
            "    print(e.errno)\n")
    def probe(*flags):
        return run(*SYSTEM_READ, "-r", "/dev", *flags, "--", PY, "-c", code, node,
                   timeout=60).stdout.decode().strip()
    assert probe() == "13"  # None: out of the /dev grant
    assert probe("--gpu", "all") == "ok"
