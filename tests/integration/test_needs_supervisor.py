"""Fields the supervisor enforces are refused under --no-supervisor, never run unenforced."""

import pytest

from conftest import SYSTEM_READ, run

CASES = [
    (["--port-remap"], "--port-remap (binds are made by the supervisor)"),
    (["--max-memory", "64M"], "--max-memory (allocations are checked by the supervisor)"),
    (["--max-processes", "3"], "--max-processes (the processes are counted by the supervisor)"),
    (["--cpu", "50"],
     "--cpu (a process that starts its own process group is found by the supervisor)"),
    (["--num-cpus", "1"], "--num-cpus (the CPU count is shown by the supervisor)"),
    (["--random-seed", "1"],
     "--random-seed (getrandom and /dev/urandom are answered by the supervisor)"),
    (["--time-start", "2000-01-01T00:00:00Z"],
     "--time-start (the wall clock is answered by the supervisor)"),
    (["--deterministic-dirs"],
     "--deterministic-dirs (directory listings are sorted by the supervisor)"),
]


@pytest.mark.parametrize("flags,why", CASES, ids=[c[0][0] for c in CASES])
def test_refused_without_the_supervisor(flags, why):
    r = run(*SYSTEM_READ, *flags, "--no-supervisor", "--", "true", timeout=30)
    assert r.returncode == 1
    assert r.stderr.decode().splitlines() == [f"sandlock: --no-supervisor: cannot enforce {why}"]
    # Controls: with the supervisor it runs, and so does --no-supervisor without the field.
    assert run(*SYSTEM_READ, *flags, "--", "true", timeout=30).returncode == 0
    assert run(*SYSTEM_READ, "--no-supervisor", "--", "true", timeout=30).returncode == 0
