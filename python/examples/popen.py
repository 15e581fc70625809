#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""popen: talk to a confined process while it runs. A line goes in on its stdin, the answer
comes back on its stdout before it ends; leaving the with block closes the streams and waits
for it."""

import os
import sys

from sandlock import Sandbox, StdioMode

SYSTEM = [d for d in ("/usr", "/lib", "/lib64", "/bin") if os.path.exists(d)]
ADD = "import sys\nfor line in sys.stdin:\n    print(sum(map(int, line.split())), flush=True)\n"

sb = Sandbox(fs_readable=SYSTEM, clean_env=True)  # only what the command needs
with sb.popen(["/usr/bin/python3", "-c", ADD], stdin=StdioMode.PIPED,
              stdout=StdioMode.PIPED) as proc:
    proc.stdin.write(b"1 2 3\n")
    answer = proc.stdout.readline()  # arrives while the command still runs
    print("answer:", answer.decode().strip(), "running:", proc.poll() is None)
    proc.stdin.close()
print("exit:", proc.returncode, proc.wait().reason.name)
if answer != b"6\n" or proc.returncode != 0:
    sys.exit(1)
