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

# (target, corpus entry): (why it fails, a piece of the failure's "Type: message").
KNOWN_BUGS = {
    ("mcp_message", "bug-deep-nesting"):
        ("parse() lets json's RecursionError out (it catches ValueError only): the stdio "
         "server's loop ends", "RecursionError: maximum recursion depth"),
    ("mcp_message", "bug-id-unhashable"):
        ("parse() accepts an id that is an array or object; Session.handle() keys its calls "
         "by it: TypeError", "unhashable type"),
    ("mcp_message", "bug-cancelled-requestid-unhashable"):
        ("notifications/cancelled with an object requestId: TypeError in the dict lookup",
         "unhashable type"),
    ("mcp_message", "bug-id-nan"):
        ("parse() accepts NaN and Infinity: the response echoes an id that is not JSON",
         "Out of range float values are not JSON compliant"),
    ("mcp_message", "bug-duplicate-id-in-flight"):
        ("a second request with the id of one in flight replaces it in Session.calls: the "
         "first is out of reach of cancellation and of cancel_all()",
         "calls cancel_all() does not reach"),
    ("mcp_http", "bug-target-bad-ipv6"):
        ("urlsplit() of a request target such as http://[::1/ raises ValueError out of "
         "_read_request() instead of _HttpError(400)", "Invalid IPv6 URL"),
    ("mcp_http", "bug-origin-bad-ipv6"):
        ("urlsplit() of an Origin such as http://[evil raises ValueError out of _check() "
         "instead of _HttpError(403)", "Invalid IPv6 URL"),
    ("mcp_http", "bug-line-over-limit"):
        ("a request or header line over the reader's 64 KiB limit: readline() raises "
         "ValueError, which connection() does not catch (no 400/431 answer)",
         "chunk is longer than limit"),
    ("mcp_http", "bug-content-length-sign"):
        ("int() reads Content-Length, so '+2' (and ' 2', '1_0') pass for a length; RFC 9112 "
         "allows digits only", "is not digits"),
    ("mcp_http", "bug-content-length-underscore"):
        ("Content-Length 1_0 is read as 10", "is not digits"),
}
# Other messages of the same bugs, met by mutation.
SAME_BUGS = {"mcp_http": ("chunk exceed the limit",)}
HARNESS = {t: importlib.import_module(f"fuzz_{t}") for t in TARGETS}


def _entries():
    for target in TARGETS:
        for name, data in fuzzlib.load_corpus(target):
            bug = KNOWN_BUGS.get((target, name))
            marks = [pytest.mark.xfail(strict=True, reason=bug[0])] if bug else []
            yield pytest.param(target, data, id=f"{target}/{name}", marks=marks)


@pytest.mark.parametrize("target,data", _entries())
def test_corpus_entry(target, data):
    HARNESS[target].fuzz(data)


def test_known_bugs_are_in_the_corpus():
    for target, name in KNOWN_BUGS:
        assert (fuzzlib.CORPUS / target / name).is_file(), (target, name)


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


def test_fuzzer_replays_a_failing_entry():
    r = _replay("mcp_http", "bug-target-bad-ipv6")
    assert (r.returncode, r.stdout.split()[0]) == (1, "FAIL"), r.stdout + r.stderr
    assert "ValueError: Invalid IPv6 URL" in r.stdout


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
