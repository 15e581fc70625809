# SPDX-License-Identifier: LGPL-2.1-or-later
"""Large output on stdout and stderr at the same time: the library's capture (through the C
example) and the CLI's pass-through must neither deadlock nor lose a byte."""

import subprocess

from conftest import EXAMPLE, PY, SYSTEM_READ, run

MIB = 1 << 20

# Interleaves 64 KiB chunks on both streams, so a reader that drains one stream before the
# other would block the writer on the full pipe of the second.
WRITER = f"""
import os
chunk = 64 * 1024
total = {MIB}
o = b"o" * (total - 1) + b"\\n"
e = b"e" * (total - 1) + b"\\n"
for i in range(0, total, chunk):
    for fd, data in ((1, o), (2, e)):
        view = memoryview(data)[i:i + chunk]
        while view:
            n = os.write(fd, view)
            view = view[n:]
"""
OUT = b"o" * (MIB - 1) + b"\n"
ERR = b"e" * (MIB - 1) + b"\n"


def test_cli_passes_1mib_on_both_streams():
    r = run(*SYSTEM_READ, "--", PY, "-c", WRITER, timeout=60)
    assert r.returncode == 0
    assert len(r.stdout) == MIB and r.stdout == OUT
    assert len(r.stderr) == MIB and r.stderr == ERR


def test_example_captures_1mib_on_both_streams():
    r = subprocess.run([EXAMPLE, PY, "-c", WRITER], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    expected = (f"stdout: {MIB} bytes: ".encode() + OUT +
                f"stderr: {MIB} bytes: ".encode() + ERR + b"exit: code 0\n")
    assert r.stdout == expected
    assert r.stderr == b""


def test_example_captures_small_and_empty_output():
    # Control for the byte counts: small output and no output are reported exactly.
    r = subprocess.run([EXAMPLE, "sh", "-c", "printf abc; printf xy >&2; exit 4"],
                       capture_output=True, timeout=60)
    assert r.returncode == 4
    assert r.stdout == b"stdout: 3 bytes: abc\nstderr: 2 bytes: xy\nexit: code 4\n"
    r = subprocess.run([EXAMPLE, "true"], capture_output=True, timeout=60)
    assert r.returncode == 0
    assert r.stdout == b"stdout: 0 bytes: \nstderr: 0 bytes: \nexit: code 0\n"
