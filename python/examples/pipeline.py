#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Pipeline: only the first stage may read the secret; the second only transforms the bytes
it is given, and cannot read the file itself."""

import os
import tempfile

from sandlock import Sandbox

SYSTEM = [d for d in ("/usr", "/lib", "/lib64", "/bin") if os.path.exists(d)]

with tempfile.TemporaryDirectory() as vault:
    secret = os.path.join(vault, "secret.txt")
    with open(secret, "w") as f:
        f.write("the launch code is 1234\n")

    reader = Sandbox(fs_readable=SYSTEM + [vault])
    transformer = Sandbox(fs_readable=SYSTEM)

    result = (reader.cmd(["cat", secret]) | transformer.cmd(["tr", "a-z", "A-Z"])).run(timeout=10)
    print("pipeline:", result.stdout.decode().strip())
    assert result.stdout == b"THE LAUNCH CODE IS 1234\n"

    alone = transformer.run(["cat", secret], timeout=10)
    print("transformer alone:", alone.stderr.decode().strip())
    assert not alone.success
