#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Gather (the XOA pattern): a planner writes code, a searcher produces data, and an executor
that can read neither's inputs runs the code over the data. Each is its own sandbox; the
executor reads the producers' outputs through sandlock.inputs."""

import os
import sys

from sandlock import Sandbox

SYSTEM = [d for d in ("/usr", "/lib", "/lib64", "/bin", "/etc") if os.path.exists(d)]
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__import__("sandlock").__file__)))
PYTHON = "/usr/bin/python3"

planner = Sandbox(fs_readable=SYSTEM)
searcher = Sandbox(fs_readable=SYSTEM)
executor = Sandbox(fs_readable=SYSTEM + [PACKAGE], env={"PYTHONPATH": PACKAGE}, clean_env=True)

CONSUMER = """
from sandlock import inputs
code = inputs["code"]
data = inputs["data"]
exec(compile(code, "<planner>", "exec"), {"data": data})
"""

result = (
    searcher.cmd(["printf", "3\\n4\\n5\\n"]).as_("data")
    + planner.cmd(["echo", "print(sum(int(x) for x in data.split()))"]).as_("code")
    | executor.cmd([PYTHON, "-c", CONSUMER])
).run(timeout=20)

print("executor:", result.stdout.decode().strip(), result.stderr.decode().strip())
if result.stdout != b"12\n":
    sys.exit(1)
