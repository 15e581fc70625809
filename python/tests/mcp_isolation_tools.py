# SPDX-License-Identifier: LGPL-2.1-or-later
"""Tools the MCP isolation tests register (HOME, answer size)."""

import json
import os
import stat
import sys


def home_state() -> str:
    """The call's HOME as the tool finds it, then a file written there and read back."""
    home = os.environ["HOME"]
    found = sorted(os.listdir(home))
    mode = stat.S_IMODE(os.stat(home).st_mode)
    with open(os.path.join(home, ".gitconfig"), "w") as f:
        f.write("mine")
    with open(os.path.join(home, ".gitconfig")) as f:
        back = f.read()
    return json.dumps({"home": home, "tmpdir": os.environ.get("TMPDIR"), "found": found,
                       "mode": mode, "back": back})


def big_answer(size: int) -> str:
    return "x" * size


def loud_failure(size: int) -> str:
    sys.stderr.write("n" * size + "THE-END")
    raise RuntimeError("failed after noise")


def gated(gate: str) -> str:
    """Wait for a line on the FIFO @gate, then say whether this call's HOME still exists."""
    with open(gate) as f:
        word = f.read()
    return f"{word} {os.path.isdir(os.environ['HOME'])}"
