#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Basic run: a command confined to read the system directories and write one scratch dir."""

import os
import tempfile

from sandlock import Sandbox

SYSTEM = [d for d in ("/usr", "/lib", "/lib64", "/bin") if os.path.exists(d)]

with tempfile.TemporaryDirectory() as scratch:
    sandbox = Sandbox(fs_readable=SYSTEM, fs_writable=[scratch], clean_env=True)

    result = sandbox.run(["sh", "-c", f"echo hello > {scratch}/out && cat {scratch}/out"],
                         timeout=10)
    print("allowed:", result.exit_code, result.stdout.decode().strip())
    assert result.success and result.stdout == b"hello\n"

    # /etc is not granted: reading it fails inside the sandbox.
    result = sandbox.run(["cat", "/etc/hostname"], timeout=10)
    print("denied: ", result.exit_code, result.stderr.decode().strip())
    assert not result.success and b"Permission denied" in result.stderr
