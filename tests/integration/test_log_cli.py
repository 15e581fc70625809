# SPDX-License-Identifier: LGPL-2.1-or-later
"""`sandlock run --log-denials[=FILE]` and `--log-events=FILE` as flags: their help, man page
and completion, their usage errors (an empty or unopenable FILE costs no run), the files they
create (truncated, shared by both flags), the JSON lines' shape, the refusal without a
supervisor, the command's status passed through. Which denials a run reports, and their lines,
are test_denials.py's; the lines here are checked for their shape whatever the run reports."""

import json
import re

from conftest import BUILD, SYSTEM_READ, run

HINT = "Try 'sandlock run --help'."
FIRST_KEYS = ["seq", "syscall", "category", "pid", "ppid", "comm", "verdict"]
ORDER = ["seq", "syscall", "category", "pid", "ppid", "comm", "verdict", "error", "judged",
         "first", "path", "access", "host", "port", "family", "protocol", "amount", "reason",
         "hint"]
# Reads outside the grants (/etc is not granted), twice, then an exit status of its own.
SCRIPT = "cat /etc/hostname; cat /etc/hostname; echo ran; exit 7"


def err_lines(r):
    return r.stderr.decode().splitlines()


def log_lines(r):
    """The log's lines on stderr. The command writes its own message there at the same time
    (cat's "cat: " and "/etc/hostname: ..." may be two writes), so a log line may follow the
    start of one of its lines: each is taken from "sandlock: " on."""
    found = []
    for line in err_lines(r):
        at = line.find("sandlock: ")
        if at >= 0:
            found.append(line[at:])
    return found


def pidless(line):
    return re.sub(r" by pid [0-9]+ ", " by pid N ", line)


def check_json_lines(text):
    """Every line one JSON object, keys in the documented order, the first ones always."""
    events = [json.loads(line) for line in text.splitlines()]
    for e in events:
        keys = list(e)
        assert keys[:len(FIRST_KEYS)] == FIRST_KEYS, keys
        assert keys == sorted(keys, key=ORDER.index), keys
        assert e["verdict"] in ("allow", "deny", "audit")
        assert isinstance(e["seq"], int) and e["seq"] >= 1
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    return events


def check_denial_lines(lines):
    for line in lines:
        assert line.startswith("sandlock: denied ") or line.endswith(" not shown"), line


def test_flags_in_help_man_page_and_completion():
    r = run("--help")
    out = r.stdout.decode()
    assert r.returncode == 0
    assert "--log-denials[=FILE]" in out and "--log-events FILE" in out
    man = (BUILD / "sandlock.1").read_text()
    assert "log\\-denials" in man or "log-denials" in man
    completion = (BUILD / "sandlock.bash").read_text()
    assert "--log-denials" in completion and "--log-events" in completion


def test_usage_errors_cost_no_run(tmp_path):
    missing = tmp_path / "no" / "such"
    for flag in ("--log-denials", "--log-events"):
        r = run(*SYSTEM_READ, f"{flag}={missing}", "--", "/bin/sh", "-c", "echo ran")
        assert (r.returncode, r.stdout, err_lines(r)) == (
            2, b"", [f"sandlock: {flag}={missing}: No such file or directory"])
    r = run("--log-denials=", "--", "true")
    assert (r.returncode, err_lines(r)) == (
        2, ["sandlock: --log-denials=: expected a file name after '='", HINT])
    r = run("--log-events=", "--", "true")
    assert (r.returncode, err_lines(r)) == (2, ["sandlock: --log-events: expected a file name",
                                                HINT])
    r = run("--log-events")
    assert (r.returncode, err_lines(r)) == (2, ["sandlock: missing value: --log-events", HINT])
    # Control: the same run with a file that can be made runs.
    r = run(*SYSTEM_READ, f"--log-events={tmp_path / 'ok'}", "--", "/bin/sh", "-c", "echo ran")
    assert (r.returncode, r.stdout) == (0, b"ran\n")


def test_no_supervisor_is_refused():
    r = run(*SYSTEM_READ, "--no-supervisor", "--log-denials", "--", "/bin/sh", "-c", "echo ran")
    assert (r.returncode, r.stdout, err_lines(r)) == (1, b"", [
        "sandlock: --no-supervisor: the event stream (events, a denial log) needs the "
        "supervisor"])
    r = run(*SYSTEM_READ, "--no-supervisor", "--", "/bin/sh", "-c", "echo ran")
    assert (r.returncode, r.stdout) == (0, b"ran\n")


def test_log_events_file_is_json_lines(tmp_path):
    log = tmp_path / "events.jsonl"
    log.write_text("stale line\n")  # truncated
    r = run(*SYSTEM_READ, f"--log-events={log}", "--", "/bin/sh", "-c", SCRIPT)
    assert (r.returncode, r.stdout) == (7, b"ran\n")
    text = log.read_text()
    assert "stale" not in text
    events = check_json_lines(text)
    # The denials are in the file, not on stderr: only --log-denials prints them.
    assert not any("sandlock: denied" in line for line in err_lines(r))
    for e in events:
        if e["verdict"] == "deny":
            assert "reason" in e and "error" in e


def test_log_denials_to_stderr_or_a_file(tmp_path):
    r = run(*SYSTEM_READ, "--log-denials", "--", "/bin/sh", "-c", SCRIPT)
    assert (r.returncode, r.stdout) == (7, b"ran\n")
    on_stderr = log_lines(r)
    check_denial_lines(on_stderr)
    # One line per object and reason: the second read of the same file adds none.
    assert len(on_stderr) == len(set(on_stderr))

    log = tmp_path / "denials.log"
    r = run(*SYSTEM_READ, f"--log-denials={log}", "--", "/bin/sh", "-c", SCRIPT)
    assert (r.returncode, r.stdout) == (7, b"ran\n")
    assert log.exists()
    lines = log.read_text().splitlines()
    check_denial_lines(lines)
    assert [pidless(line) for line in lines] == [pidless(line) for line in on_stderr]
    assert not any("sandlock: denied" in line for line in err_lines(r))


def test_both_flags_into_one_file(tmp_path):
    log = tmp_path / "both.log"
    r = run(*SYSTEM_READ, f"--log-denials={log}", f"--log-events={log}", "--", "/bin/sh", "-c",
            SCRIPT)
    assert (r.returncode, r.stdout) == (7, b"ran\n")
    lines = log.read_text().splitlines()
    check_denial_lines([line for line in lines if not line.startswith("{")])
    check_json_lines("\n".join(line for line in lines if line.startswith("{")))
