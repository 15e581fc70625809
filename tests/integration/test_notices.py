# SPDX-License-Identifier: LGPL-2.1-or-later
"""What sandlock tells the user about a run, on stderr as "sandlock: ..." lines once it ends: a
process killed for --max-memory (its pid, its name, the limit as a user writes it) and a fork
refused by --max-processes (once per run). Each with its control: the same command without the
limit says nothing."""

import re

from conftest import PY, SYSTEM_READ, run

HOG = "b = []\nwhile True:\n    b.append(bytearray(1 << 20))\n"


def notices(stderr):
    return [line for line in stderr.decode().splitlines() if line.startswith("sandlock: ")]


def test_memory_kill_is_told():
    r = run(*SYSTEM_READ, "-m", "50M", "--", PY, "-c", HOG, timeout=60)
    assert r.returncode == 137, r.stderr
    lines = notices(r.stderr)
    assert len(lines) == 1, r.stderr
    assert re.fullmatch(r"sandlock: killed [0-9]+ \(python3\): memory limit 50M reached",
                        lines[0]), r.stderr


def test_memory_limit_written_as_given():
    # 1536M is no whole number of G: the largest exact suffix, as the user would write it.
    r = run(*SYSTEM_READ, "-m", "1536M", "--", PY, "-c",
            "b = bytearray(1700 << 20)", timeout=60)
    assert r.returncode == 137, r.stderr
    assert re.fullmatch(r"sandlock: killed [0-9]+ \(python3\): memory limit 1536M reached",
                        notices(r.stderr)[0]), r.stderr


def test_memory_control_says_nothing():
    r = run(*SYSTEM_READ, "-m", "50M", "--", PY, "-c", "b = bytearray(1 << 20)", timeout=60)
    assert r.returncode == 0, r.stderr
    assert notices(r.stderr) == []
    r = run(*SYSTEM_READ, "--", PY, "-c", "b = bytearray(60 << 20)", timeout=60)
    assert r.returncode == 0, r.stderr
    assert notices(r.stderr) == []


FORK_LOOP = "i=0; while [ $i -lt 20 ]; do sleep 1 & i=$((i+1)); done; kill $(jobs -p); wait"


def test_fork_refused_is_told_once():
    r = run(*SYSTEM_READ, "--max-processes", "2", "--", "/bin/sh", "-c", FORK_LOOP, timeout=60)
    assert notices(r.stderr) == ["sandlock: fork refused: process limit 2 reached"], r.stderr


def test_fork_control_says_nothing():
    r = run(*SYSTEM_READ, "--", "/bin/sh", "-c", FORK_LOOP, timeout=60)
    assert r.returncode == 0, r.stderr
    assert notices(r.stderr) == []
    r = run(*SYSTEM_READ, "--max-processes", "30", "--", "/bin/sh", "-c", FORK_LOOP, timeout=60)
    assert r.returncode == 0, r.stderr
    assert notices(r.stderr) == []
