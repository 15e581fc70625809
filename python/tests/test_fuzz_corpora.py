# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Python parsers' fuzz corpora (tests/fuzz/corpus/<target>/) through their harnesses
(tests/fuzz/py/fuzz_<target>.py), plus a short mutation run of each with a fixed seed.

An entry in KNOWN_BUGS is an input that breaks its parser's contract today: its test is
expected to fail (strictly, so that a fix turns it into a failure to remove from the list),
and the mutation runs tolerate the same failure, named by a piece of its message."""

from __future__ import annotations

import importlib
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FUZZ = ROOT / "tests" / "fuzz" / "py"
sys.path.insert(0, str(FUZZ))
fuzzlib = importlib.import_module("fuzzlib")

TARGETS = ("mcp_message", "mcp_http", "guard_model", "guard_config", "guard_scan")
MUTATIONS = 300

# (target, corpus entry): (why it fails, a piece of the failure's "Type: message"). Empty
# while every entry passes.
KNOWN_BUGS: dict[tuple[str, str], tuple[str, str]] = {}
# Other messages of the same bugs, met by mutation.
SAME_BUGS: dict[str, tuple[str, ...]] = {}
HARNESS = {t: importlib.import_module(f"fuzz_{t}") for t in TARGETS}


def _entries():
    seen = set()
    for target in TARGETS:
        for name, data in fuzzlib.load_corpus(target):
            seen.add((target, name))
            bug = KNOWN_BUGS.get((target, name))
            marks = [pytest.mark.xfail(strict=True, reason=bug[0])] if bug else []
            yield pytest.param(target, data, id=f"{target}/{name}", marks=marks)
    missing = set(KNOWN_BUGS) - seen
    assert not missing, f"KNOWN_BUGS names entries the corpora lack: {sorted(missing)}"


@pytest.mark.parametrize("target,data", _entries())
def test_corpus_entry(target, data):
    HARNESS[target].fuzz(data)


def _known(target, failure):
    pieces = [sig for (t, _), (_, sig) in KNOWN_BUGS.items() if t == target]
    return any(p in failure for p in pieces + list(SAME_BUGS.get(target, ())))


@pytest.mark.parametrize("target", TARGETS)
def test_mutations(target):
    corpus = [data for _, data in fuzzlib.load_corpus(target)]
    assert corpus, f"tests/fuzz/corpus/{target} is empty"
    harness = HARNESS[target]
    unexpected = []
    for data in fuzzlib.mutants(corpus, MUTATIONS, 1, harness.TOKENS):
        try:
            harness.fuzz(data)
        except Exception as e:
            failure = f"{type(e).__name__}: {e}"
            if not _known(target, failure):
                unexpected.append(f"{failure[:300]}\n  input: {data[:300]!r}")
    assert not unexpected, "\n".join(unexpected)


def _replay(target, *entries):
    files = [str(fuzzlib.CORPUS / target / e) for e in entries]
    return subprocess.run([sys.executable, str(FUZZ / f"fuzz_{target}.py"), *files],
                          capture_output=True, text=True, timeout=120)


def test_fuzzer_replays_a_passing_entry():
    r = _replay("mcp_http", "session")
    assert (r.returncode, r.stdout.split()[0]) == (0, "ok"), r.stdout + r.stderr


def test_fuzzer_replays_a_failing_entry(tmp_path):
    # A harness that fails on one input only: its replay says FAIL and why, with exit 1.
    (tmp_path / "bad").write_bytes(b"boom")
    (tmp_path / "good").write_bytes(b"fine")
    r = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(FUZZ)!r}); "
                        "import fuzzlib; sys.argv[1:] = sys.argv[1:]; "
                        "sys.exit(fuzzlib.main('guard_scan', lambda d: 1 / (d != b'boom')))",
                        str(tmp_path / "good"), str(tmp_path / "bad")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[0] == "ok" and lines[1].split()[0] == "FAIL", r.stdout
    assert "ZeroDivisionError: division by zero" in r.stdout


def test_fuzzer_writes_what_it_finds(tmp_path):
    # A harness that fails on every input: the run saves one input per distinct failure.
    r = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(FUZZ)!r}); "
                        "import fuzzlib; sys.argv[1:] = ['--runs', '20', '--crash-dir', "
                        f"{str(tmp_path)!r}]; "
                        "sys.exit(fuzzlib.main('guard_scan', lambda d: 1 / 0))"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr
    crashes = sorted(p.name for p in tmp_path.iterdir())
    assert len(crashes) == 2 and crashes[0].startswith("crash-"), crashes
    assert crashes[1] == crashes[0] + ".txt"
    assert "ZeroDivisionError" in (tmp_path / crashes[1]).read_text()
